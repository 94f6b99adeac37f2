import Dispatch
import Foundation
import Tomorrowland
import TomorrowlandLoop

// AsyncHopBench: what Swift Concurrency costs on an EventLoop, per await, for the shapes async
// code on a loop takes. Every workload runs in one task that prefers the loop (which runs on a
// thread of its own); one unit is one await.
//
//   AsyncHopBench                                  every workload: ns per await, median of 5
//   AsyncHopBench --run actor --iterations N       one warm-up iteration, then N, untimed
//                                                  (what callgrind counts)
//
// actor           await a method of an actor pinned to the loop
// nonisolated     await a nonisolated async function
// promise         await the value of a promise that loop work resolves (`loop.submit { … }`)
// actor-to-actor  inside an actor pinned to the loop, await a second actor pinned to the same loop
// promise-later   await the value of a promise that loop work resolves two hops later, so that
//                 the await suspends whatever the executor form (`promise`'s may be resolved
//                 before the await looks)

/// An actor whose executor is the loop.
actor Counter {
    let loop: EventLoop  // kept: the executor reference is unowned
    var count = 0
    init(loop: EventLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func increment() -> Int {
        count &+= 1
        return count
    }

    /// `units` calls into `other`, from inside this actor.
    func callOther(_ other: Counter, units: Int) async -> Int {
        var total = 0
        for _ in 0..<units { total &+= await other.increment() }
        return total
    }
}

@inline(never)
nonisolated func helper(_ value: Int) async -> Int {
    value &+ 1
}

let unitsPerIteration = 10_000

/// One iteration of `workload`: `unitsPerIteration` awaits, in one task that prefers `loop`.
func iteration(_ workload: String, loop: EventLoop, first: Counter, second: Counter) {
    let done = DispatchSemaphore(value: 0)
    Task(executorPreference: loop) {
        var total = 0
        switch workload {
        case "actor":
            for _ in 0..<unitsPerIteration { total &+= await first.increment() }
        case "nonisolated":
            for index in 0..<unitsPerIteration { total &+= await helper(index) }
        case "promise":
            for index in 0..<unitsPerIteration {
                let promise: Promise<Int, NoError> = loop.submit { index }
                if case .value(let value) = await promise.resolvedResult { total &+= value }
            }
        case "actor-to-actor":
            total = await first.callOther(second, units: unitsPerIteration)
        case "promise-later":
            for index in 0..<unitsPerIteration {
                let (promise, resolver) = Promise<Int, NoError>.makeWithResolver()
                loop.execute { loop.execute { resolver.fulfill(with: index &+ 1) } }
                if case .value(let value) = await promise.resolvedResult { total &+= value }
            }
        default:
            fatalError("unknown workload \(workload)")
        }
        precondition(total != 0)
        done.signal()
    }
    done.wait()
}

let workloads = ["actor", "nonisolated", "promise", "actor-to-actor", "promise-later"]
let loop = EventLoop()
let finished = DispatchSemaphore(value: 0)
Thread {
    loop.run()
    finished.signal()
}.start()
let first = Counter(loop: loop)
let second = Counter(loop: loop)

var arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--run" {
    arguments.removeFirst()
    guard let workload = arguments.popFirst(), workloads.contains(workload),
        arguments.popFirst() == "--iterations", let count = arguments.popFirst().flatMap({ Int($0) })
    else {
        fatalError("usage: AsyncHopBench [--run \(workloads.joined(separator: "|")) --iterations N]")
    }
    iteration(workload, loop: loop, first: first, second: second)
    for _ in 0..<count { iteration(workload, loop: loop, first: first, second: second) }
} else {
    print("| workload | ns per await (median of 5) | fastest | slowest |")
    print("|---|---|---|---|")
    for workload in workloads {
        iteration(workload, loop: loop, first: first, second: second)
        var samples: [Double] = []
        for _ in 0..<5 {
            let clock = ContinuousClock()
            let iterations = 20
            let elapsed = clock.measure {
                for _ in 0..<iterations { iteration(workload, loop: loop, first: first, second: second) }
            }
            let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
            samples.append(nanoseconds / Double(iterations * unitsPerIteration))
        }
        samples.sort()
        print(String(format: "| %@ | %.0f | %.0f | %.0f |", workload, samples[2], samples[0], samples[4]))
    }
}
loop.stop()
finished.wait()
loop.shutdown()

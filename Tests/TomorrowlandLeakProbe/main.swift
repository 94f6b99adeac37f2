// A program for `make leaks`: it exercises the loop and the promise machinery (chains of every
// shape, timers fired and cancelled, timeouts, delays, tokens, watchers, an EventLoopGroup,
// cross-thread submissions, shutdown with pending work), releases everything, and exits. Run
// under `valgrind --leak-check=full`, it must leave no definitely lost bytes.

import Foundation
import Tomorrowland
import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Exits with a message when a check fails: valgrind's exit code must mean a leak or a bug.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("TomorrowlandLeakProbe: \(message())\n".utf8))
        exit(2)
    }
}

typealias IntPromise = Promise<Int, String>

/// Chains of every callback family on one loop, resolved, rejected, cancelled and invalidated.
func promiseChains(on loop: EventLoop) {
    let context = PromiseContext.loop(loop)
    for round in 0..<200 {
        let token = PromiseInvalidationToken()
        let (root, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: context) { $0.cancel() }
        let mapped = root.map(on: context, token: token) { $0 + 1 }
        let flat = mapped.flatMap(on: context) { value in IntPromise(on: context) { $0.fulfill(with: value * 2) } }
        let recovered = flat.recover(on: .immediate) { _ in -1 }
        let timed = root.timeout(on: context, delay: .seconds(3600))
        let delayed = root.delay(on: context, .milliseconds(1))
        let both = when(fulfilled: [mapped, delayed.makeChild()], cancelOnFailure: true)
        let first = when(first: [mapped, flat])
        _ = root.propagatingCancellation(on: context) { _ in }
        root.tap(on: context) { _ in }
        _ = root.onCancel(on: context) {}
        _ = root.ignoringCancel()
        switch round % 4 {
        case 0: resolver.fulfill(with: round)
        case 1: resolver.reject(with: "rejected")
        case 2:
            timed.requestCancel()
            resolver.cancel()
        default:
            token.invalidate()
            resolver.fulfill(with: round)
        }
        _ = loop.run(until: recovered)
        _ = loop.run(until: timed)
        _ = loop.run(until: delayed)
        _ = loop.run(until: both)
        _ = loop.run(until: first)
    }
}

/// Timers fired, cancelled on the loop and from another thread, and sleeps.
func timers(on loop: EventLoop) {
    var handles: [any PromiseScheduledWork] = []
    for index in 0..<1000 {
        handles.append(loop.schedule(after: .microseconds(index % 500)) {})
    }
    for handle in handles.enumerated() where handle.offset % 2 == 0 { handle.element.cancel() }
    let done = DispatchSemaphore(value: 0)
    Thread { [handles] in
        for handle in handles.enumerated() where handle.offset % 4 == 1 { handle.element.cancel() }
        done.signal()
    }.start()
    done.wait()
    check(loop.run(until: loop.sleep(for: .milliseconds(5))).value != nil, "sleep did not finish")
}

/// A watcher that fires, one cancelled before firing, one left for shutdown.
func watchers(on loop: EventLoop) throws -> [Int32] {
    var fds: [Int32] = [0, 0]
    check(pipe(&fds) == 0, "pipe failed")
    let (seen, resolver) = Promise<Void, NoError>.makeWithResolver()
    let watcher = try loop.watch(fileDescriptor: fds[0], for: .readable) { _ in resolver.fulfill(with: ()) }
    var byte: UInt8 = 1
    check(write(fds[1], &byte, 1) == 1, "write failed")
    check(loop.run(until: seen).value != nil, "the watcher never fired")
    watcher.cancel()
    let cancelled = try loop.watch(fileDescriptor: fds[1], for: .writable) { _ in }
    cancelled.cancel()
    _ = try loop.watch(fileDescriptor: fds[1], for: .writable) { _ in }  // removed by shutdown
    _ = loop.readable(fds[0])  // rejected by shutdown
    return fds
}

/// A group fed from several threads, with chains hopping between its loops, shut down.
func group() {
    let group = EventLoopGroup(loopCount: 2)
    let finished = DispatchGroup()
    for _ in 0..<4 {
        finished.enter()
        Thread {
            var tails: [IntPromise] = []
            for index in 0..<500 {
                let (root, resolver) = IntPromise.makeWithResolver()
                tails.append(
                    root.map(on: .loop(group.next())) { $0 + 1 }.flatMap(on: .loop(group.next())) {
                        IntPromise(fulfilled: $0)
                    })
                group.next().execute { resolver.fulfill(with: index) }
            }
            let all = when(fulfilled: tails)
            while all.result == nil { usleep(100) }
            finished.leave()
        }.start()
    }
    finished.wait()
    // Pending timers and work at shutdown: released, not run.
    for loop in group.loops {
        _ = loop.schedule(after: .seconds(3600)) {}
        _ = loop.sleep(for: .seconds(3600))
    }
    group.syncShutdownGracefully()
}

func main() throws {
    do {
        let loop = EventLoop()
        promiseChains(on: loop)
        timers(on: loop)
        let fds = try watchers(on: loop)
        // Left pending for shutdown: a timer, a timeout, work.
        _ = loop.schedule(after: .seconds(3600)) {}
        _ = IntPromise.makeWithResolver().0.timeout(on: .loop(loop), delay: .seconds(3600))
        loop.execute {}
        loop.shutdown()
        check(loop.isShutdownComplete, "the loop did not shut down")
        for fd in fds { close(fd) }
    }
    group()
    if ProcessInfo.processInfo.environment["TOMORROWLAND_LEAK_PROBE_LEAK"] == "1" {
        // Self-test of `make leaks`: a pending promise whose onRequestCancel handler captures its
        // resolver is a retain cycle by design (rule A3, Tomorrowland.docc/BehaviourRules.md); dropped, it must show as lost.
        let (_, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { _ in withExtendedLifetime(resolver) {} }
    }
    // when(fulfilled:) hops through global queues: let their last blocks finish releasing.
    usleep(200_000)
    print("TomorrowlandLeakProbe: done")
}

try main()

import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport
import TomorrowlandTesting

/// A loop a cross-loop scenario runs on: an `EventLoop` (libevent, the monotonic clock) or a
/// `TestLoop` (virtual time). The scenario sees only what both have.
protocol ScenarioLoop: PromiseExecutor, SerialExecutor, TaskExecutor {
    /// Drives the loop on the calling thread until `promise` resolves; nil if it never can.
    func drive<Value, Failure>(until promise: Promise<Value, Failure>) -> PromiseResult<Value, Failure>?
    /// Runs what is ready now (and what that submits), without waiting for timers.
    func runReady()
    /// Shuts the loop down for good.
    func shutDown()
}

extension EventLoop: ScenarioLoop {
    func drive<Value, Failure>(until promise: Promise<Value, Failure>) -> PromiseResult<Value, Failure>? {
        run(until: promise)
    }
    func runReady() { runUntilIdle() }
    func shutDown() { shutdown() }
}

extension TestLoop: ScenarioLoop {
    func drive<Value, Failure>(until promise: Promise<Value, Failure>) -> PromiseResult<Value, Failure>? {
        try? run(until: promise)
    }
    func runReady() { run() }
    func shutDown() { shutdown() }
}

/// The events of one scenario run, in the order they happened (the loop's thread records them).
final class Trace: Sendable {
    private let events = Locked<[String]>([])
    var entries: [String] { events.withLock { $0 } }
    func callAsFunction(_ event: String) { events.withLock { $0.append(event) } }
}

/// One behaviour, written once, run on both loops; its trace is what the loops must agree on.
struct CrossLoopScenario: Sendable, CustomTestStringConvertible {
    let name: String
    /// The trace both loops must give: the policy, spelled out.
    let expected: [String]
    let body: @Sendable (any ScenarioLoop, Trace) -> Void

    init(_ name: String, expected: [String], _ body: @escaping @Sendable (any ScenarioLoop, Trace) -> Void) {
        self.name = name
        self.expected = expected
        self.body = body
    }

    var testDescription: String { name }

    /// Runs the scenario once on `loop` and returns its trace; shuts the loop down afterwards.
    func trace(on loop: some ScenarioLoop) -> [String] {
        let trace = Trace()
        body(loop, trace)
        loop.shutDown()
        return trace.entries
    }
}

/// An actor whose executor is the scenario's loop.
actor LoopPinnedActor {
    private let loop: any ScenarioLoop  // kept: the executor reference is unowned
    private var count = 0

    init(loop: any ScenarioLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func bump(_ trace: Trace, _ label: String) -> Int {
        count += 1
        trace("\(label) in actor")
        return count
    }

    func callOther(_ other: LoopPinnedActor, _ trace: Trace) async {
        trace("A calls B")
        _ = await other.bump(trace, "B")
        trace("A after B")
    }

    func callHelper(_ trace: Trace) async {
        trace("A before helper")
        await nonisolatedHelper(trace, "A")
        trace("A after helper")
    }
}

/// A nonisolated async function: where it runs, and where its caller resumes, is the question.
nonisolated func nonisolatedHelper(_ trace: Trace, _ label: String) async {
    trace("\(label) in helper")
}

/// Submits work that records "tick 1" … "tick `count`", each tick submitting the next.
func startTicker(on loop: some ScenarioLoop, _ trace: Trace, count: Int) {
    @Sendable func tick(_ number: Int) {
        trace("tick \(number)")
        if number < count { loop.submit { tick(number + 1) } }
    }
    loop.submit { tick(1) }
}

import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport
import TomorrowlandTesting

@testable import ProbeCore

/// A prober driven by a script on a TestLoop: each attempt takes the next step for its endpoint.
final class ScriptedProber: Sendable {
    enum Step: Sendable {
        /// Connects after this latency.
        case up(Duration)
        /// Fails after this delay.
        case refused(after: Duration)
        /// Never completes on its own (only the timeout ends it).
        case hang
    }

    private struct State {
        var scripts: [ProbeEndpoint: [Step]]
        var attempts: [ProbeEndpoint: [Duration]] = [:]
        var cancellations: [ProbeEndpoint: Int] = [:]
        /// The resolvers of hanging attempts: an attempt whose resolver is released unresolved
        /// would be cancelled on the spot.
        var hanging: [Promise<Duration, ProbeFailure>.Resolver] = []
    }

    let loop: TestLoop
    private let state: Locked<State>

    init(loop: TestLoop, scripts: [ProbeEndpoint: [Step]]) {
        self.loop = loop
        state = Locked(State(scripts: scripts))
    }

    /// The virtual times at which each attempt on `endpoint` started.
    func attempts(_ endpoint: ProbeEndpoint) -> [Duration] { state.withLock { $0.attempts[endpoint] ?? [] } }
    /// How many attempts on `endpoint` were cancelled.
    func cancellations(_ endpoint: ProbeEndpoint) -> Int { state.withLock { $0.cancellations[endpoint] ?? 0 } }

    var prober: ProbeScheduler.Prober {
        { [self] endpoint in
            let now = loop.now
            let step = state.withLock { state -> Step in
                state.attempts[endpoint, default: []].append(now)
                guard var script = state.scripts[endpoint], !script.isEmpty else { return .hang }
                let step = script.removeFirst()
                state.scripts[endpoint] = script
                return step
            }
            let (promise, resolver) = Promise<Duration, ProbeFailure>.makeWithResolver()
            resolver.onRequestCancel(on: .immediate) { [self] resolver in
                state.withLock { $0.cancellations[endpoint, default: 0] += 1 }
                resolver.cancel()
            }
            switch step {
            case .up(let latency):
                _ = loop.schedule(after: latency) { resolver.fulfill(with: latency) }
            case .refused(let delay):
                _ = loop.schedule(after: delay) { resolver.reject(with: .tcp(.connectFailed(errno: 111))) }
            case .hang:
                state.withLock { $0.hanging.append(resolver) }
            }
            return promise
        }
    }
}

/// Collects what a scheduler reports.
final class Reports: Sendable {
    private let transitions = Recorder<String>()
    private let rounds = Recorder<(Int, Duration)>()
    var messages: [String] { transitions.values }
    var roundEnds: [Duration] { rounds.values.map(\.1) }
    func transition(_ transition: ProbeTransition) { transitions.record(transition.message) }
    func round(_ number: Int, at time: Duration) { rounds.record((number, time)) }
}

/// The scheduler's round in flight and its inputs, read on the loop, where its state lives.
func roundInFlight(
    _ loop: TestLoop, _ scheduler: ProbeScheduler
) -> (round: Promise<[ProbeStatus], NoError>?, inputs: [Promise<ProbeStatus, NoError>]) {
    let snapshot = Locked<(round: Promise<[ProbeStatus], NoError>?, inputs: [Promise<ProbeStatus, NoError>])?>(nil)
    loop.submit { snapshot.value = scheduler.roundInFlight() }
    loop.run()
    return snapshot.value ?? (nil, [])
}

/// Runs `loop` until `scheduler` finishes (or virtual time reaches `time`), and returns its
/// outcome, in virtual time.
///
/// `when(fulfilled:)` delivers a round's result on a Dispatch queue, outside the TestLoop; so
/// whenever every probe of the round in flight has resolved, this waits (in real time) for that
/// delivery before it lets virtual time move, which keeps the run deterministic.
@discardableResult
func runScheduler(
    _ loop: TestLoop, _ scheduler: ProbeScheduler, until time: Duration? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ProbeOutcome? {
    for _ in 0..<100_000 {
        loop.run()
        if let outcome = scheduler.finished.result { return outcome.value }
        let inFlight = roundInFlight(loop, scheduler)
        if let round = inFlight.round, inFlight.inputs.allSatisfy({ $0.result != nil }) {
            // The scheduler's `then(on: loop)` was registered first, so once this tap runs its
            // work is already queued on the loop.
            guard blockingResult(of: round) != nil else {
                Issue.record(
                    "when(fulfilled:) did not deliver within \(generousTimeout)", sourceLocation: sourceLocation)
                return nil
            }
            continue
        }
        guard let deadline = loop.nextTimerDeadline else {
            // Nothing on the loop, but an attempt's result or the round may still be on its way
            // from a Dispatch queue (`when(fulfilled:)` delivers there): wait for it to land.
            if waitForLoopWork(loop, scheduler) { continue }
            Issue.record(
                "the scheduler can never finish: nothing is pending at \(loop.now)", sourceLocation: sourceLocation)
            return nil
        }
        if let time, deadline > time {
            loop.advance(to: max(time, loop.now))
            return nil
        }
        // One deadline at a time: a round that completes on the way must be delivered first.
        loop.advance(to: deadline)
    }
    Issue.record("the scheduler did not finish within 100000 steps", sourceLocation: sourceLocation)
    return nil
}

/// Polls (within the toolkit's generous bound) until `loop` has work or a timer, or `scheduler`
/// finished: what a hop from a Dispatch queue onto the loop looks like from the test's thread.
func waitForLoopWork(_ loop: TestLoop, _ scheduler: ProbeScheduler) -> Bool {
    waitUntil { loop.readyCount > 0 || loop.nextTimerDeadline != nil || scheduler.finished.result != nil }
}

@Suite("ProbeScheduler on a TestLoop")
struct ProbeSchedulerTests {
    let web = ProbeEndpoint(host: "10.0.0.1", port: 80)
    let db = ProbeEndpoint(host: "10.0.0.2", port: 5432)

    private func makeScheduler(
        _ loop: TestLoop, _ prober: ScriptedProber, _ reports: Reports, endpoints: [ProbeEndpoint],
        rounds: Int?, retries: Int = 1
    ) -> ProbeScheduler {
        var configuration = ProbeScheduler.Configuration(endpoints: endpoints)
        configuration.interval = .seconds(10)
        configuration.connectTimeout = .seconds(2)
        configuration.retries = retries
        configuration.retryDelay = .milliseconds(500)
        configuration.rounds = rounds
        return ProbeScheduler(
            configuration: configuration, executor: loop, prober: prober.prober,
            onTransition: { reports.transition($0) },
            onRound: { number, _ in reports.round(number, at: loop.now) }
        )
    }

    @Test func aFailedAttemptIsRetriedAfterTheRetryDelay() throws {
        let loop = TestLoop()
        let prober = ScriptedProber(
            loop: loop, scripts: [web: [.refused(after: .milliseconds(5)), .up(.milliseconds(3))]])
        let reports = Reports()
        let scheduler = makeScheduler(loop, prober, reports, endpoints: [web], rounds: 1)
        scheduler.start()
        #expect(runScheduler(loop, scheduler) == .completed(rounds: 1))
        #expect(prober.attempts(web) == [.zero, .milliseconds(505)])
        #expect(reports.messages == ["10.0.0.1:80 is up (latency 3.00 ms)"])
        #expect(reports.roundEnds == [.milliseconds(508)])
        loop.runAll()
        try loop.checkNoPendingWork()
    }

    @Test func anAttemptPastTheConnectTimeoutIsCancelledAndTheEndpointIsDown() throws {
        let loop = TestLoop()
        let prober = ScriptedProber(loop: loop, scripts: [web: [.hang, .hang], db: [.up(.milliseconds(1))]])
        let reports = Reports()
        let scheduler = makeScheduler(loop, prober, reports, endpoints: [web, db], rounds: 1)
        scheduler.start()
        #expect(runScheduler(loop, scheduler) == .completed(rounds: 1))
        // Two attempts of 2 s each, 500 ms apart; both cancelled by the timeout.
        #expect(prober.attempts(web) == [.zero, .milliseconds(2500)])
        #expect(prober.cancellations(web) == 2)
        #expect(loop.now == .milliseconds(4500))
        // Reports follow the endpoint order, whatever the order of completion.
        #expect(reports.messages == ["10.0.0.1:80 is down: timed out", "10.0.0.2:5432 is up (latency 1.00 ms)"])
        loop.runAll()
        try loop.checkNoPendingWork()
    }

    @Test func roundsRunEveryIntervalAndOnlyChangesAreReported() throws {
        let loop = TestLoop()
        let prober = ScriptedProber(
            loop: loop,
            scripts: [
                web: [
                    .up(.milliseconds(2)), .refused(after: .zero), .refused(after: .zero), .up(.milliseconds(4)),
                    .up(.milliseconds(1)),
                ]
            ])
        let reports = Reports()
        let scheduler = makeScheduler(loop, prober, reports, endpoints: [web], rounds: 4, retries: 0)
        scheduler.start()
        #expect(runScheduler(loop, scheduler) == .completed(rounds: 4))
        #expect(prober.attempts(web) == [.zero, .seconds(10), .seconds(20), .seconds(30)])
        #expect(
            reports.messages == [
                "10.0.0.1:80 is up (latency 2.00 ms)",
                "10.0.0.1:80 went down: connect failed (ECONNREFUSED)",
                "10.0.0.1:80 is back up (latency 4.00 ms)",
            ])
        loop.runAll()
        try loop.checkNoPendingWork()
    }

    @Test func aRoundLongerThanTheIntervalIsFollowedAtOnce() throws {
        let loop = TestLoop()
        let prober = ScriptedProber(loop: loop, scripts: [web: [.up(.seconds(12)), .up(.seconds(1))]])
        let reports = Reports()
        var configuration = ProbeScheduler.Configuration(endpoints: [web])
        configuration.interval = .seconds(10)
        configuration.connectTimeout = .seconds(30)
        configuration.rounds = 2
        let scheduler = ProbeScheduler(
            configuration: configuration, executor: loop, prober: prober.prober,
            onTransition: { reports.transition($0) }, onRound: { number, _ in reports.round(number, at: loop.now) })
        scheduler.start()
        #expect(runScheduler(loop, scheduler) == .completed(rounds: 2))
        #expect(prober.attempts(web) == [.zero, .seconds(12)])
        #expect(reports.roundEnds == [.seconds(12), .seconds(13)])
        try loop.checkNoPendingWork()
    }

    @Test func stoppingCancelsTheProbesInFlight() throws {
        let loop = TestLoop()
        let prober = ScriptedProber(loop: loop, scripts: [web: [.up(.milliseconds(1))], db: [.up(.milliseconds(1))]])
        let reports = Reports()
        let scheduler = makeScheduler(loop, prober, reports, endpoints: [web, db], rounds: nil)
        scheduler.start()
        // Round 1 completes; round 2 starts at 10 s and its attempts hang (the scripts ran out).
        runScheduler(loop, scheduler, until: .seconds(11))
        #expect(loop.now == .seconds(11))
        #expect(prober.attempts(web).count == 2)
        let inFlight = try #require(roundInFlight(loop, scheduler).round)
        scheduler.stop()
        #expect(runScheduler(loop, scheduler) == .stopped(roundsCompleted: 1))
        // `finished` resolved only after the cancelled round came back through
        // when(fulfilled:)'s Dispatch queue: nothing of it is still on its way to the loop, which
        // the daemon shuts down at once (before, the round arrived later, at a shut-down loop).
        #expect(inFlight.result != nil)
        #expect(roundInFlight(loop, scheduler).round == nil)
        #expect(prober.cancellations(web) == 1)
        #expect(prober.cancellations(db) == 1)
        #expect(reports.messages.count == 2)
        loop.runAll()
        try loop.checkNoPendingWork()
    }
}

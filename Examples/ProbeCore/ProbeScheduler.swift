import Tomorrowland

/// Probes a list of endpoints in rounds, on one executor (an `EventLoop`, or a `TestLoop` in
/// tests), and reports state changes.
///
/// A round probes every endpoint at once; each probe is `retry` over attempts, each attempt the
/// prober's promise under the library's `timeout` (a timed-out attempt is cancelled, which closes
/// its socket); `when(fulfilled:)` combines the round. A round starts every ``Configuration/interval``
/// (or as soon as the previous round ends, if it took longer). ``stop()`` cancels the round in
/// flight through promise cancellation and ends the schedule.
///
/// Everything runs on the executor's thread; ``start()`` and ``stop()`` may be called from any
/// thread. The mutable state lives in a `LoopBound` box for the executor, so a use anywhere else
/// stops the program instead of racing.
public final class ProbeScheduler: Sendable {

    /// What to probe and how.
    public struct Configuration: Sendable {
        /// The endpoints, probed in this order (the order of reports within a round).
        public var endpoints: [ProbeEndpoint]
        /// The time from one round's start to the next one's.
        public var interval: Duration = .seconds(5)
        /// The time allowed for one connection attempt.
        public var connectTimeout: Duration = .seconds(2)
        /// Extra attempts after a failed one, within a round.
        public var retries: Int = 1
        /// The wait before a retry.
        public var retryDelay: Duration = .milliseconds(200)
        /// Stop after this many rounds; nil for no limit.
        public var rounds: Int?

        /// A configuration with the defaults: every 5 s, 2 s to connect, 1 retry after 200 ms.
        public init(endpoints: [ProbeEndpoint]) {
            self.endpoints = endpoints
        }
    }

    /// Makes one connection attempt to an endpoint and resolves with its latency.
    public typealias Prober = @Sendable (ProbeEndpoint) -> Promise<Duration, ProbeFailure>

    /// The configuration this scheduler runs.
    public let configuration: Configuration
    private let executor: any SerialPromiseExecutor
    private let prober: Prober
    private let onTransition: @Sendable (ProbeTransition) -> Void
    private let onRound: @Sendable (Int, [ProbeStatus]) -> Void
    private let finishedResolver: Promise<ProbeOutcome, NoError>.Resolver
    /// Resolves once the scheduler ended: after ``Configuration/rounds`` rounds, or on ``stop()``.
    public let finished: Promise<ProbeOutcome, NoError>

    /// What changes as the rounds go; touched only on the executor's thread.
    private final class State {
        var tracker = ProbeStateTracker()
        var roundsCompleted = 0
        /// The round in flight, and its inputs (one probe per endpoint).
        var round: Promise<[ProbeStatus], NoError>?
        var roundInputs: [Promise<ProbeStatus, NoError>] = []
        var nextRoundTimer: (any PromiseScheduledWork)?
        var isIntervalOver = false
        var isStarted = false
        var isFinished = false
    }

    private let state: LoopBound<State>

    /// Creates a scheduler; nothing runs before ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: Endpoints, timing and retries.
    ///   - executor: Where everything runs: the loop whose thread makes the connections (an
    ///     `EventLoop`, or a `TestLoop` in tests).
    ///   - prober: One attempt; called on the executor's thread.
    ///   - onTransition: Called on the executor's thread for each change of state (including
    ///     each endpoint's first observation), in endpoint order.
    ///   - onRound: Called on the executor's thread after each round with its number (from 1)
    ///     and the statuses, in endpoint order.
    @preconcurrency
    public init(
        configuration: Configuration, executor: any SerialPromiseExecutor, prober: @escaping Prober,
        onTransition: @escaping @Sendable (ProbeTransition) -> Void,
        onRound: @escaping @Sendable (Int, [ProbeStatus]) -> Void = { _, _ in }
    ) {
        precondition(!configuration.endpoints.isEmpty, "ProbeScheduler needs at least one endpoint")
        precondition(configuration.retries >= 0, "ProbeScheduler: retries must be 0 or more")
        self.configuration = configuration
        self.executor = executor
        self.prober = prober
        self.onTransition = onTransition
        self.onRound = onRound
        (finished, finishedResolver) = Promise<ProbeOutcome, NoError>.makeWithResolver()
        state = LoopBound(State(), on: executor)
    }

    /// The round in flight and its inputs. For tests, which must know when `when(fulfilled:)` is
    /// about to deliver (it does so on a Dispatch queue). On the executor's thread.
    func roundInFlight() -> (round: Promise<[ProbeStatus], NoError>?, inputs: [Promise<ProbeStatus, NoError>]) {
        let state = self.state.value
        return (state.round, state.roundInputs)
    }

    /// Starts the first round (soon, on the executor). Calling it again does nothing.
    public func start() {
        executor.submit { [self] in
            let state = self.state.value
            guard !state.isStarted, !state.isFinished else { return }
            state.isStarted = true
            startRound()
        }
    }

    /// Cancels the round in flight (its connection attempts are cancelled and their sockets
    /// closed) and ends the schedule; ``finished`` resolves with ``ProbeOutcome/stopped(roundsCompleted:)``.
    public func stop() {
        executor.submit { [self] in finish(.stopped(roundsCompleted: state.value.roundsCompleted)) }
    }

    private var context: PromiseContext { .executor(executor) }

    private func startRound() {
        let state = self.state.value
        state.isIntervalOver = false
        state.nextRoundTimer = executor.schedule(after: configuration.interval) { [self] in
            let state = self.state.value
            state.nextRoundTimer = nil
            state.isIntervalOver = true
            if state.round == nil { startRound() }
        }
        let statuses = configuration.endpoints.map(probe)
        // `when(fulfilled:)` delivers its result on a Dispatch queue; the `then` below hops back
        // to the executor.
        let combined = when(fulfilled: statuses)
        state.round = combined
        state.roundInputs = statuses
        let number = state.roundsCompleted + 1
        _ = combined.then(on: context) { [self] statuses in
            let state = self.state.value
            guard !state.isFinished else { return }
            state.round = nil
            state.roundInputs = []
            state.roundsCompleted = number
            for (endpoint, status) in zip(configuration.endpoints, statuses) {
                if let transition = state.tracker.record(status, for: endpoint) { onTransition(transition) }
            }
            onRound(number, statuses)
            if let limit = configuration.rounds, number >= limit {
                finish(.completed(rounds: number))
            } else if state.isIntervalOver {
                startRound()
            }
        }
    }

    /// One endpoint's probe in a round: never rejected (a failure is a `.down` status).
    private func probe(_ endpoint: ProbeEndpoint) -> Promise<ProbeStatus, NoError> {
        let context = self.context
        let prober = self.prober
        let connectTimeout = configuration.connectTimeout
        return Promise<Duration, ProbeFailure>.retry(
            on: context, attempts: configuration.retries + 1, backoff: .fixed(configuration.retryDelay)
        ) { _ in
            prober(endpoint).timeout(on: context, delay: connectTimeout).mapError(on: .immediate) { error in
                switch error {
                case .timedOut: .timedOut
                case .rejected(let failure): failure
                }
            }
        }
        .mapResult(on: .immediate) { result -> PromiseResult<ProbeStatus, NoError> in
            switch result {
            case .value(let latency): .value(.up(latency: latency))
            case .error(let failure): .value(.down(failure))
            // A probe cancelled by anything but ``stop()`` counts as down, so the round still
            // completes; after ``stop()`` the scheduler is finished and ignores the round.
            case .cancelled: .value(.down(.cancelled))
            }
        }
    }

    private func finish(_ outcome: ProbeOutcome) {
        let state = self.state.value
        guard !state.isFinished else { return }
        state.isFinished = true
        state.nextRoundTimer?.cancel()
        state.nextRoundTimer = nil
        guard let round = state.round else {
            finishedResolver.fulfill(with: outcome)
            return
        }
        // `finished` resolves only once the cancelled round has come back to the executor:
        // `when(fulfilled:)` delivers on a Dispatch queue, and the daemon shuts its loop down as
        // soon as `finished` resolves, so a delivery still on its way would reach a loop that was
        // shut down (a precondition failure; seen under AddressSanitizer's slower timing).
        round.tap(on: context) { [self] _ in
            self.state.value.round = nil
            finishedResolver.fulfill(with: outcome)
        }
        // Cancelling the combined promise asks every probe, and through them every attempt in
        // flight, to cancel: the connection attempts close their sockets. The probes' handles
        // go first: a promise that still has a handle is not cancelled by propagation.
        state.roundInputs = []
        round.requestCancel()
    }
}

/// How a ``ProbeScheduler`` ended.
public enum ProbeOutcome: Sendable, Equatable {
    /// It ran the configured number of rounds.
    case completed(rounds: Int)
    /// ``ProbeScheduler/stop()`` ended it after this many complete rounds.
    case stopped(roundsCompleted: Int)
}

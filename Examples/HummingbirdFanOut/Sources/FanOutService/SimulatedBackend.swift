import Logging
import NIOCore
import Tomorrowland
import TomorrowlandNIO

/// A slow service, simulated on the caller's NIO event loop: a call answers after a latency the
/// caller chooses, and a cancel request stops it before it answers.
///
/// It stands for what a real backend client does (an HTTP or database call whose promise can be
/// cancelled): the call's timer runs on the request's loop through the promise context
/// `.nio(loop)`, and the call registers an `onRequestCancel` handler that cancels the timer and
/// cancels the promise. Every call is recorded in ``log`` and counted in
/// ``metrics``.
public final class SimulatedBackend: Sendable {
    /// What a call should end with once its latency has passed.
    public enum Outcome: Sendable, Equatable {
        /// Answer with a reply.
        case answer(String)
        /// Fail with ``BackendError/failed(backend:)``.
        case fail
    }

    /// The backend's name, in replies, events and log lines.
    public let name: String
    /// Where the backend's calls are recorded.
    public let log: BackendCallLog
    /// Where the backend's calls are counted, if anywhere.
    public let metrics: FanOutMetrics?
    private let logger: Logger

    /// Makes a backend that records its calls in `log`, counts them in `metrics` and logs them
    /// to `logger`.
    public init(name: String, log: BackendCallLog, metrics: FanOutMetrics? = nil, logger: Logger) {
        self.name = name
        self.log = log
        self.metrics = metrics
        self.logger = logger
    }

    /// Calls the backend about `item`: the returned promise resolves with `outcome` after
    /// `latency`, on `loop`.
    ///
    /// The call starts on `loop` (it is submitted there, never run inside this function), arms its
    /// timer on `loop`, and resolves there. A cancel request that reaches the returned promise
    /// before the timer fires runs the call's cancel handler on `loop`: it cancels the timer,
    /// records ``BackendEvent/Kind/cancelled`` and cancels the promise. A request that arrives
    /// after the answer does nothing (the handler is skipped once the promise has a value or an
    /// error).
    ///
    /// - Parameters:
    ///   - item: What to ask about.
    ///   - latency: How long the backend takes to answer.
    ///   - outcome: What it answers.
    ///   - loop: The NIO event loop to run the call on (the request's).
    /// - Returns: The call's promise.
    public func call(
        item: String, latency: Duration, outcome: Outcome, on loop: any EventLoop
    ) -> Promise<BackendReply, BackendError> {
        let context = PromiseContext.nio(loop)
        return Promise(on: context) { resolver in
            self.record(.started, item: item)
            // The backend's work: a timer on the loop's own clock (a NIO scheduled callback underneath).
            let work = Promise<Void, NoError>(on: context, fulfilled: (), after: latency)
            // `.immediate`: the answer is given in the same loop task as the timer fires, so no
            // cancel handler can slip in between the two and count a call that had answered.
            _ = work.then(on: .immediate) {
                switch outcome {
                case .answer(let answer):
                    self.record(.completed, item: item)
                    resolver.fulfill(
                        with: BackendReply(
                            backend: self.name, item: item, answer: answer,
                            servedOnRequestLoop: loop.inEventLoop))
                case .fail:
                    self.record(.failed, item: item)
                    resolver.reject(with: .failed(backend: self.name))
                }
            }
            resolver.onRequestCancel(on: context) { resolver in
                // Stops the timer: an after-promise cancelled before its deadline cancels at once
                // and releases its timer.
                work.requestCancel()
                self.record(.cancelled, item: item)
                resolver.cancel()
            }
        }
    }

    private func record(_ kind: BackendEvent.Kind, item: String) {
        let event = BackendEvent(backend: name, item: item, kind: kind)
        logger.info("backend \(event)")
        metrics?.record(event)
        log.record(event)
    }
}

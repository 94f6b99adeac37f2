import Foundation

/// How long ``Promise/retry(on:attempts:backoff:shouldRetry:_:)`` waits after a failed attempt
/// before starting the next one.
public struct PromiseRetryBackoff: Sendable, Hashable {
    private enum Schedule: Hashable {
        case fixed(Duration)
        case exponential(initial: Duration, multiplier: Double, maximum: Duration)
    }

    private let schedule: Schedule

    /// No wait: the next attempt starts as soon as the failure is seen.
    public static let immediate = PromiseRetryBackoff(schedule: .fixed(.zero))

    /// The same wait after every failed attempt.
    public static func fixed(_ delay: Duration) -> PromiseRetryBackoff {
        PromiseRetryBackoff(schedule: .fixed(delay))
    }

    /// A wait of `initial` after the first failed attempt, multiplied by `multiplier` after each
    /// further one, never more than `maximum`.
    ///
    /// For example `.exponential(initial: .milliseconds(100), maximum: .seconds(1))` waits
    /// 100 ms, 200 ms, 400 ms, 800 ms, then 1 s from then on.
    ///
    /// - Precondition: `multiplier >= 1`, and `initial` is not longer than `maximum`.
    public static func exponential(initial: Duration, multiplier: Double = 2, maximum: Duration) -> PromiseRetryBackoff {
        precondition(
            multiplier >= 1,
            "PromiseRetryBackoff.exponential: multiplier \(multiplier) would shrink the wait; pass 1 or more (1 is .fixed)")
        precondition(
            initial <= maximum,
            "PromiseRetryBackoff.exponential: initial \(initial) exceeds maximum \(maximum); raise the maximum")
        return PromiseRetryBackoff(schedule: .exponential(initial: initial, multiplier: multiplier, maximum: maximum))
    }

    /// The wait after failed attempt number `attempt` (1 for the first attempt).
    public func delay(afterAttempt attempt: Int) -> Duration {
        switch schedule {
        case .fixed(let delay):
            return delay
        case .exponential(let initial, let multiplier, let maximum):
            let factor = pow(multiplier, Double(max(attempt, 1) - 1))
            let seconds = initial.timeIntervalSeconds * factor
            // Past the maximum (or overflowing to infinity): the cap.
            guard seconds.isFinite, seconds < maximum.timeIntervalSeconds else { return maximum }
            return Duration(timeInterval: seconds)
        }
    }
}

extension Duration {
    /// This duration in seconds, as a `Double`.
    var timeIntervalSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

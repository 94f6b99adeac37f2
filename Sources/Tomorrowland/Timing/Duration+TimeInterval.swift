import Foundation

extension Duration {
    /// The duration of a Tomorrowland `TimeInterval` (seconds), for the timer APIs.
    ///
    /// Negative intervals and NaN give `.zero`; intervals too large to represent (infinity
    /// included) saturate at about 292 billion years, which never fires in practice.
    @usableFromInline
    init(timeInterval: TimeInterval) {
        guard timeInterval > 0 else {
            self = .zero
            return
        }
        // Beyond 2^62 seconds, `Duration.seconds(Double)` would overflow its 128-bit storage.
        guard timeInterval < 4.0e18 else {
            self = .seconds(Int64.max)
            return
        }
        self = .seconds(timeInterval)
    }
}

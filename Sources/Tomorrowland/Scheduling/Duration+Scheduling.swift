extension Duration {
    /// This duration as a timer delay in whole nanoseconds, the unit of ``SchedulingCore``.
    ///
    /// Negative durations give 0 ("as soon as possible"), fractions of a nanosecond round up (a
    /// timer never fires early), and durations past `UInt64.max` nanoseconds (about 584 years)
    /// saturate.
    package var schedulingNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        // `components` keeps both parts non-negative here: attoseconds is in 0..<1e18.
        let (wholeNanoseconds, remainder) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let fraction = UInt64(wholeNanoseconds) + (remainder > 0 ? 1 : 0)
        let (secondsPart, overflow1) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow1 { return .max }
        let (total, overflow2) = secondsPart.addingReportingOverflow(fraction)
        return overflow2 ? .max : total
    }

    /// The duration of `nanoseconds` nanoseconds, exact over the whole `UInt64` range.
    package init(schedulingNanoseconds nanoseconds: UInt64) {
        let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        self = .seconds(seconds) + .nanoseconds(rest)
    }
}

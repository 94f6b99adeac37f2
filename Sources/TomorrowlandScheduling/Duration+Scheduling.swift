extension Duration {
    /// This duration as a timer delay in whole nanoseconds, the unit of ``SchedulingCore``.
    ///
    /// Negative durations give 0 ("as soon as possible"), fractions of a nanosecond round up (a
    /// timer never fires early), and durations past `UInt64.max` nanoseconds (about 584 years)
    /// saturate.
    ///
    /// Computed from the 128-bit attosecond count with one 128-by-64-bit division: `components`
    /// (a full 128-bit division and multiplications) costs several times as much, on every timer
    /// scheduled.
    package var schedulingNanoseconds: UInt64 {
        let attoseconds = self.attoseconds
        if attoseconds <= 0 { return 0 }
        let high = UInt64(truncatingIfNeeded: attoseconds &>> 64)
        let low = UInt64(truncatingIfNeeded: attoseconds)
        // The quotient fits in 64 bits exactly when the high half is below the divisor.
        let (highQuotient, highRemainder) = high.quotientAndRemainder(dividingBy: 1_000_000_000)
        if highQuotient != 0 { return .max }
        let (wholeNanoseconds, remainder) = UInt64(1_000_000_000).dividingFullWidth((high: highRemainder, low: low))
        if remainder == 0 { return wholeNanoseconds }
        return wholeNanoseconds == .max ? .max : wholeNanoseconds + 1
    }

    /// The duration of `nanoseconds` nanoseconds, exact over the whole `UInt64` range.
    package init(schedulingNanoseconds nanoseconds: UInt64) {
        let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        self = .seconds(seconds) + .nanoseconds(rest)
    }
}

extension Duration {
    /// This duration as a timer delay in whole nanoseconds, the unit of ``SchedulingCore``.
    ///
    /// Negative durations give 0 ("as soon as possible"), fractions of a nanosecond round up (a
    /// timer never fires early), and durations past `UInt64.max` nanoseconds (about 584 years)
    /// saturate.
    ///
    /// Computed from the 128-bit attosecond count by long division in two 32-bit digits: each
    /// step divides a 64-bit number by the constant 10^9, which compiles to a multiplication,
    /// where a 128-bit division is a library call and `components` several (every timer
    /// scheduled pays this). Inlinable, for the loops' timer paths.
    @inlinable
    @inline(__always)
    package var schedulingNanoseconds: UInt64 {
        let attoseconds = self.attoseconds
        if attoseconds <= 0 { return 0 }
        let high = UInt64(truncatingIfNeeded: attoseconds &>> 64)
        let low = UInt64(truncatingIfNeeded: attoseconds)
        // The quotient fits in 64 bits exactly when the high half is below the divisor.
        if high >= 1_000_000_000 { return .max }
        // Each partial dividend is below 10^9 · 2^32 (the remainder before it is below 10^9), so
        // each quotient digit fits in 32 bits.
        let upper = high &<< 32 | low &>> 32
        let (upperQuotient, upperRemainder) = upper.quotientAndRemainder(dividingBy: 1_000_000_000)
        let lower = upperRemainder &<< 32 | low & 0xFFFF_FFFF
        let (lowerQuotient, remainder) = lower.quotientAndRemainder(dividingBy: 1_000_000_000)
        let wholeNanoseconds = upperQuotient &<< 32 | lowerQuotient
        if remainder == 0 { return wholeNanoseconds }
        return wholeNanoseconds == .max ? .max : wholeNanoseconds + 1
    }

    /// The duration of `nanoseconds` nanoseconds, exact over the whole `UInt64` range.
    package init(schedulingNanoseconds nanoseconds: UInt64) {
        let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        self = .seconds(seconds) + .nanoseconds(rest)
    }
}

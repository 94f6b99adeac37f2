import TomorrowlandTesting

extension TestLoop {
    /// ``now`` in whole milliseconds, for compact event labels.
    var nowInMilliseconds: Int64 {
        Int64(now / .milliseconds(1))
    }
}

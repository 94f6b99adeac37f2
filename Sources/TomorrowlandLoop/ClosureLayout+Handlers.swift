internal import TomorrowlandScheduling

extension ClosureLayout {
    /// A watcher handler, held like ``ClosureLayout/Holder`` so that it keeps its own entry point.
    struct EventsHolder {
        var body: @Sendable (IOEvents) -> Void
    }

    /// A signal handler, held the same way.
    struct SignalHolder {
        var body: @Sendable (Int32) -> Void
    }
}

#if ServiceLifecycle
    import Tomorrowland

    /// One participant in a loop service's drain, with its promise's type erased: a registered
    /// `TCPListener` or a hook the user supplied.
    struct GracefulShutdownHook: Sendable {
        /// Starts the participant's drain with the grace period; calls `settled` once its promise
        /// resolves (with whatever result); returns what requests cancellation of that promise.
        let start: @Sendable (_ gracePeriod: Duration, _ settled: @escaping @Sendable () -> Void) -> DrainInProgress

        /// A hook that returns a promise of the drain's end.
        init<Failure: Sendable>(_ hook: @escaping @Sendable (Duration) -> Promise<Void, Failure>) {
            start = { gracePeriod, settled in
                let promise = hook(gracePeriod)
                // `.immediate`: counting down needs no particular thread, and it must happen even
                // when the promise resolves on a loop that then shuts down.
                promise.tap(on: .immediate) { _ in settled() }
                return DrainInProgress(requestCancel: { promise.requestCancel() })
            }
        }
    }

    /// A started drain: what the service asks to cancel once the grace period is over (or the
    /// service is cancelled) while the drain's promise is still pending.
    struct DrainInProgress: Sendable {
        let requestCancel: @Sendable () -> Void
    }
#endif

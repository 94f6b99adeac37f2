/// The task-local context that was current where a promise callback was registered, kept with the
/// callback and restored while it runs (BehaviourRules: B10).
///
/// The core does not know what the context is: an integration module (TomorrowlandTracing, for
/// swift-distributed-tracing's `ServiceContext`) captures it and knows how to bind it again.
@usableFromInline
package protocol CapturedCallbackContext: AnyObject, Sendable {
    /// Runs `body` with the captured context bound as the current one, and only for `body`'s
    /// duration: whatever was current before is current again when it returns (B10).
    func withRestored<R>(_ body: () throws -> R) rethrows -> R
}

extension CapturedCallbackContext {
    /// Wraps `work` so that it runs with this context restored.
    @inlinable
    func wrapping(_ work: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        { self.withRestored(work) }
    }

    /// Wraps a one-argument callback so that it runs with this context restored. Inlinable, so
    /// that it is specialised where it is used: generic, it cost reabstraction thunks.
    @inlinable
    func wrapping<Argument>(
        _ callback: @escaping @Sendable (Argument) -> Void
    ) -> @Sendable (Argument) -> Void {
        { argument in self.withRestored { callback(argument) } }
    }
}

/// A virtual clock that the promises made inside a scope are aged by: `withTestLoop` binds one
/// for its `TestLoop`, so that the pending-promise report and the scope's failure message give
/// virtual ages, and the scope can list the promises made inside it.
package final class PendingPromiseScope: Sendable {
    /// The scope bound on the current task (or thread, outside a task), if any.
    @TaskLocal package static var current: PendingPromiseScope?

    /// Reads the scope's virtual clock.
    let now: @Sendable () -> Duration

    /// A scope whose clock `now` reads.
    package init(now: @escaping @Sendable () -> Duration) {
        self.now = now
    }
}

/// A callback node that runs a closure on a context and creates no promise (`tap(on:)`, the
/// internal observers of `when` and `timeout`).
@usableFromInline
final class ObserverNode: PromiseCallbackNode, @unchecked Sendable {
    // @unchecked Sendable: CoreInvariants: "Sendable by hand-off".
    private let context: PromiseContext
    /// Reads the result from the resolved source and runs the user's code. Taken by whoever runs
    /// it, so that it is released on its context.
    @exclusivity(unchecked)
    private var body: ((PromiseCore) -> Void)?

    @usableFromInline
    init(context: PromiseContext, body: @escaping (_ source: PromiseCore) -> Void) {
        self.context = context
        self.body = body
    }

    @usableFromInline
    override func fire(source: PromiseCore, isSynchronous: Bool) -> ReadyCallbacks? {
        switch context.route(isSynchronous: isSynchronous) {
        case .inline(let flag):
            let body = self.body!
            self.body = nil
            runInline(isExecutingNow: flag) { body(source) }
        case .executor(let executor):
            submitAsJob(to: executor, source: source)
        }
        return nil
    }

    /// ``fire(source:isSynchronous:)`` from a drain, which hands its reference over: released
    /// here (an override of its own, so that the drain's call is one dynamic dispatch).
    @usableFromInline
    override func fireHandingOver(source: PromiseCore) -> ReadyCallbacks? {
        // The drain's reference, owned here: released as this call ends.
        // CoreInvariants: "Ownership in the drain".
        let owned = Unmanaged.passUnretained(self).takeRetainedValue()
        return owned.fire(source: source, isSynchronous: false)
    }

    /// The loop this observer is bound for, when its context is an executor: firing it there
    /// only submits it (see ``PromiseJobBatch``).
    override var batchExecutorIdentity: ObjectIdentifier? { context.batchingExecutorIdentity }

    override var batchExecutor: (any PromiseExecutor)? { context.batchingExecutor }

    /// The executor will never run the observer: release its body unrun.
    override func abandonWithoutRunning(source: PromiseCore?) {
        body = nil
    }

    override func run(source: PromiseCore) {
        let body = self.body!
        self.body = nil
        body(source)
    }
}

/// A callback node that runs a closure on a context and creates no promise (`tap(on:)`, the
/// internal observers of `when` and `timeout`).
final class ObserverNode<Value, Error>: PromiseCallbackNode, @unchecked Sendable {
    private let context: PromiseContext
    /// Taken by whoever runs it, so that it is released on its context.
    private var body: ((PromiseResult<Value, Error>) -> Void)?

    init(context: PromiseContext, body: @escaping (PromiseResult<Value, Error>) -> Void) {
        self.context = context
        self.body = body
    }

    override func fire(source: AnyObject, isSynchronous: Bool) -> ReadyCallbacks? {
        switch context.route(isSynchronous: isSynchronous) {
        case .inline(let flag):
            let body = self.body.unsafelyUnwrapped
            self.body = nil
            runInline(isExecutingNow: flag) { body(PromiseBox<Value, Error>.resolvedResult(of: source)) }
        case .executor(let executor):
            // The source box is resolved and immutable from here on.
            let source = UnsafeTransfer(source)
            executor.submit { [self] in
                let body = self.body.unsafelyUnwrapped
                self.body = nil
                ExecutionFlags.with(isExecutingNow: false) {
                    body(PromiseBox<Value, Error>.resolvedResult(of: source.wrapped))
                }
            }
        }
        return nil
    }
}

extension PromiseContext {
    /// The executor a callback on this context is submitted to, for ``PromiseJobBatch``: the
    /// executor of an `.executor` context, `nil` for every other context (they run callbacks
    /// inline or decide per call, so their callbacks are never gathered).
    @inline(__always)
    var batchingExecutor: (any PromiseExecutor)? {
        guard case .executor(let executor) = self else { return nil }
        return executor
    }

    /// The identity of ``batchingExecutor``, read without retaining the executor: what the drain
    /// compares to tell a run of callbacks bound for one executor.
    @inline(__always)
    var batchingExecutorIdentity: ObjectIdentifier? {
        guard case .executor(let executor) = self else { return nil }
        return ObjectIdentifier(executor)
    }
}

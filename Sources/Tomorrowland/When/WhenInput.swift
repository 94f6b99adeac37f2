/// The inputs of one `when` call, for cancel requests and observer counting, held without
/// keeping them alive.
///
/// The references are the core's unowned kind (`UnownedReference`), not `weak`: a `weak`
/// reference would give every input a side table and slow-path reference counting for the rest
/// of its life.
///
/// - Important: `@unchecked Sendable`: `references` is written completely before any input's
///   callback is registered and read-only afterwards, so the callbacks, which may run on any
///   thread, read it without a lock (they are ordered after the writes by the input's own lock,
///   taken to register them).
final class WhenInputs: @unchecked Sendable {
    private var references: ContiguousArray<UnownedReference<PromiseCore>> = []

    init(capacity: Int) {
        references.reserveCapacity(capacity)
    }

    deinit {
        for reference in references {
            reference.release()
        }
    }

    /// Adds `input` and counts it as observed (a propagating observer per occurrence).
    func observe(_ input: PromiseCore) {
        input.addObserver()
        references.append(UnownedReference(input))
    }

    /// Each observer asks for cancellation: inputs with no other observer and no handle left
    /// are cancelled (automatic propagation).
    func removeObservers() {
        for reference in references {
            reference.load()?.removeObserver()
        }
    }

    /// Requests cancellation of every input that still exists.
    func requestCancelAll() {
        for reference in references {
            reference.load()?.requestCancel()
        }
    }
}

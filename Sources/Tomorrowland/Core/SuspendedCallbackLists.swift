/// The stack of callback lists that ``CallbackDrain`` interrupted for a nested resolution, last
/// in, first out.
///
/// Most drains never suspend a list (a chain replaces an exhausted list rather than suspending
/// it), so the storage is allocated on the first push only, and a stack that was never used costs
/// nothing to destroy. An `Array` here would cost every drain, so every loop hop, a
/// `swift_release` of the shared empty array when it ended.
///
/// A non-copyable struct: it owns its buffer, and copying it would double-free.
struct SuspendedCallbackLists: ~Copyable {
    private var storage: UnsafeMutablePointer<ReadyCallbacks>?
    private var count = 0
    private var capacity = 0

    init() {}

    deinit {
        guard let storage else { return }
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    /// Suspends `lists` on top of the stack.
    mutating func push(_ lists: consuming ReadyCallbacks) {
        if count == capacity { grow() }
        // `unsafelyUnwrapped`: `grow()` allocated the storage if it was full (or absent).
        (storage.unsafelyUnwrapped + count).initialize(to: lists)
        count += 1
    }

    /// Removes and returns the list suspended last, or `nil` if none is.
    mutating func pop() -> ReadyCallbacks? {
        guard count > 0 else { return nil }
        count -= 1
        // `unsafelyUnwrapped`: a count above zero means a push allocated the storage.
        return (storage.unsafelyUnwrapped + count).move()
    }

    private mutating func grow() {
        let newCapacity = max(4, capacity * 2)
        let newStorage = UnsafeMutablePointer<ReadyCallbacks>.allocate(capacity: newCapacity)
        if let storage {
            newStorage.moveInitialize(from: storage, count: count)
            storage.deallocate()
        }
        storage = newStorage
        capacity = newCapacity
    }
}

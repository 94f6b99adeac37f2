/// A weak reference readable from any thread: a test watches an object through it to see that
/// whatever held the object (a callback, a timer, a loop's queue) released it.
public final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    // `@unchecked Sendable`: `weak let` is loaded atomically by the runtime from any thread; the
    // object itself need not be Sendable, and tests only compare it with nil.
    /// The object, until the last strong reference to it is gone.
    public weak let object: Object?

    /// A weak reference to `object`.
    public init(_ object: Object) {
        self.object = object
    }

    /// Whether the object was deinitialized.
    public var isReleased: Bool { object == nil }
}

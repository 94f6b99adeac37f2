/// A weak reference readable from any thread: a test watches an object through it to see that
/// whatever held the object (a callback, a timer, a loop's queue) released it.
package final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    // `@unchecked Sendable`: `weak let` is loaded atomically by the runtime from any thread; the
    // object itself need not be Sendable, and tests only compare it with nil.
    /// The object, until the last strong reference to it is gone.
    package weak let object: Object?

    /// A weak reference to `object`.
    package init(_ object: Object) {
        self.object = object
    }

    /// Whether the object was deinitialized.
    package var isReleased: Bool { object == nil }
}

/// An object whose death cancels the promises tied to it with
/// ``Promise/requestCancelOnDeinit(_:)``, at the moment it dies.
///
/// Tomorrowland on Apple platforms hooks any object's deallocation through the Objective-C
/// runtime; Linux has no such hook. Give the object a token instead: its death destroys the token,
/// and the token's invalidate-on-deinit requests the cancellations, synchronously.
///
/// ```swift
/// final class Download: PromiseLifetimeOwner {
///     let promiseLifetimeToken = PromiseInvalidationToken()
/// }
/// ```
public protocol PromiseLifetimeOwner: AnyObject {
    /// A token owned by this object alone, created with `invalidateOnDeinit: true` (the default).
    var promiseLifetimeToken: PromiseInvalidationToken { get }
}

extension Promise {
    /// Requests cancellation of this promise once `object` has been deallocated.
    ///
    /// When `object` conforms to ``PromiseLifetimeOwner``, the request is made at the moment it
    /// dies, through its token, as Tomorrowland does on Apple platforms.
    ///
    /// - Important: Linux cannot observe the deallocation of an arbitrary object, so for any
    ///   other object this watches `object` weakly and requests the cancellation within
    ///   ``DeinitWatcher/sweepInterval`` of its death, from a utility queue. When the moment
    ///   matters, conform the object to ``PromiseLifetimeOwner``.
    /// - Returns: This promise.
    @discardableResult
    public func requestCancelOnDeinit(_ object: AnyObject) -> Promise<Value, Error> {
        if let owner = object as? any PromiseLifetimeOwner {
            owner.promiseLifetimeToken.requestCancelOnInvalidate(self)
        } else {
            DeinitWatcher.shared.watch(object, cancelling: cancellable)
        }
        return self
    }
}

/// Carries a value into a `@Sendable` closure where the library has proven by other means that
/// the hand-off is safe (the comment at each use says why).
package struct UnsafeTransfer<Wrapped>: @unchecked Sendable {
    package let wrapped: Wrapped

    package init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
    }
}

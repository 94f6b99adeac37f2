import Tomorrowland

/// The test loop as a promise context.
extension PromiseContext {
    /// Runs callbacks on `loop`, a virtual-time test loop: they run when the test drives it, on
    /// the driving thread.
    ///
    /// The same as `.executor(loop)`.
    public static func loop(_ loop: TestLoop) -> PromiseContext {
        .executor(loop)
    }
}

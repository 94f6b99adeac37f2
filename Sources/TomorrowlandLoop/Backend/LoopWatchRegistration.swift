/// A watcher's registration with its loop's backend (a libevent event, for instance): what
/// delivers readiness or a signal to an ``EventLoopWatcher``.
package protocol LoopWatchRegistration: AnyObject {
    /// Stops delivering and frees what the registration holds; on the loop's thread, once.
    func remove()
}

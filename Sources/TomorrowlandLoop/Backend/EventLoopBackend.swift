/// What runs under an ``EventLoop``: its clock, how it waits and is woken, its watchers, its TCP
/// sockets and the objects it frees at the end. The loop's scheduling, lifecycle and monitoring
/// are the same on every backend; only these differ.
///
/// Two implement it: `LibeventBackend` (an `event_base` the loop owns or borrows, an `eventfd`,
/// the monotonic clock, real sockets), which the loop holds as a concrete case of
/// `EventLoopBackendCarrier` so that its calls are direct; and module TomorrowlandSimulation's
/// simulated backend (the network's virtual clock, its port table and links), given to
/// ``EventLoop/init(backend:)``. The loop never asks which one it has: a difference between them
/// is a requirement here, answered by each.
package protocol EventLoopBackend: AnyObject, Sendable {
    // MARK: Clock and wake-ups (any thread)

    /// The loop's clock, in nanoseconds since a fixed point of it.
    var now: UInt64 { get }

    /// Work or a timer reached `loop` from a thread that does not drive it: make its driver look
    /// at the inbox again. Called after the submission, with no lock held.
    func wakeUp(_ loop: EventLoop)

    // MARK: Driving

    /// Whether something other than the loop's own driving calls (``EventLoop/run()``...) runs
    /// the loop, through ``EventLoop/runTurn()`` and ``EventLoop/runCallback(_:)``.
    var isDrivenExternally: Bool { get }

    /// Called by a public driving call (`operation`) before it claims the loop; a backend whose
    /// loops are driven externally fails a precondition there.
    func checkCanBeDriven(_ operation: StaticString)

    /// Whether another thread may run work on the loop at once while no thread drives it (a
    /// visit): only when nothing else can be inside the loop's waiting at that moment.
    var admitsVisitsWhileUndriven: Bool { get }

    /// A drive (``EventLoop/run()``, ``EventLoop/runUntilIdle()``) starts on the calling thread.
    func driveWillStart()

    /// The drive that ``driveWillStart()`` announced ends.
    func driveDidEnd()

    /// Waits for readiness (descriptors, signals, the timer, a wake-up) and runs the callbacks of
    /// what is ready; without waiting unless `blocking`. On the driving thread.
    func poll(blocking: Bool)

    /// Makes the backend wake the loop at `deadline` (on ``now``'s clock), or at no time when it
    /// is nil; on the loop's thread, before it waits or hands the base back to a host.
    func armTimer(for deadline: UInt64?)

    /// Asks for another callback of the loop after the host polled its descriptors: a callback
    /// entered from a host's base left ready work behind.
    func requestAnotherTurn()

    // MARK: Monitoring

    /// Whether tick statistics and stall detection measure anything: real time and a thread to
    /// watch; the loop ignores turning them on otherwise.
    var supportsMonitoring: Bool { get }

    // MARK: Watchers (the loop's thread)

    /// Starts delivering `events` on `fd` to `watcher` (``EventLoopWatcher/fire(_:)``).
    func addDescriptorWatch(
        _ watcher: EventLoopWatcher, fd: Int32, events: IOEvents, isOneShot: Bool
    )
        throws(EventLoopError) -> any LoopWatchRegistration

    /// Starts delivering `signal` to `watcher`, on behalf of `loop`; `signal` is a valid number.
    func addSignalWatch(
        _ watcher: EventLoopWatcher, signal: Int32, isOneShot: Bool, on loop: EventLoop
    )
        throws(EventLoopError) -> any LoopWatchRegistration

    // MARK: TCP

    /// What ``TCPListener`` binds for `host`:`port`; on the calling thread, before the hop to the
    /// loop, so that a name that is no address fails there.
    func listenTarget(host: String, port: UInt16) throws(TCPError) -> TCPListenTarget

    /// Binds `target` and makes its listener, registered with `loop`; on the loop's thread.
    func bindListener(
        _ target: TCPListenTarget, on loop: EventLoop, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) -> Result<TCPListener, TCPError>

    /// Why no connection can start now (the backend has nothing left to connect through), or nil.
    var connectRefusal: TCPError? { get }

    /// The resolver a connect that asked for `requested` resolves names through.
    func nameResolver(replacing requested: any NameResolver) -> any NameResolver

    /// Starts connecting from `loop` to `address`; on the loop's thread. `completion` runs once,
    /// on the loop's thread (inside this call when the outcome is known at once), unless the
    /// attempt is cancelled first.
    func connect(
        to address: TCPSocketAddress, from loop: EventLoop, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) -> any TCPConnectAttempt

    // MARK: Teardown (the loop's thread)

    /// The loop shut down (its watchers and resources are gone): free what the backend holds for
    /// it.
    func loopDidShutDown(_ loop: EventLoop)

    /// The loop is being destroyed without a shutdown, on any thread: end `watchers`'
    /// registrations (their handlers are released already) and free what the backend holds for
    /// it, or hand it to the thread that may still use it.
    func loopWasReleased(_ loop: EventLoop, watchers: [EventLoopWatcher])
}

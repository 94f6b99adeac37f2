import CLibevent
import Synchronization
import Tomorrowland
internal import TomorrowlandScheduling

/// Readiness a descriptor watcher waits for or reports.
public struct IOEvents: OptionSet, Sendable, Hashable {
    /// The bits of the set: `1` for readable, `2` for writable.
    public let rawValue: UInt8

    /// Creates a set from its raw value.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The descriptor can be read without blocking (or is at end of file, or has an error).
    public static let readable = IOEvents(rawValue: 1 << 0)
    /// The descriptor can be written without blocking (or has an error).
    public static let writable = IOEvents(rawValue: 1 << 1)

    /// The libevent flags for this set.
    var libeventFlags: Int16 {
        var flags: Int32 = 0
        if contains(.readable) { flags |= EV_READ }
        if contains(.writable) { flags |= EV_WRITE }
        return Int16(flags)
    }

    /// The set that libevent's callback flags report.
    init(libeventFlags flags: Int16) {
        self = []
        if Int32(flags) & EV_READ != 0 { insert(.readable) }
        if Int32(flags) & EV_WRITE != 0 { insert(.writable) }
    }
}

/// A live watcher on an ``EventLoop``: a descriptor's readiness or a signal. Cancel it to stop
/// watching.
///
/// The loop keeps a registered watcher alive (the handle need not be stored); the watcher holds
/// its loop weakly.
public final class EventLoopWatcher: @unchecked Sendable {
    // `@unchecked Sendable`: `cancelled` is atomic; `loop` is immutable and thread-safe;
    // `registration`, `handler` and `onShutdown` are loop-confined: only the thread driving the loop
    // touches them.
    // LoopInvariants: "Loop confinement".

    /// Does not keep the loop alive (see `UnownedReference`).
    private let loop: UnownedReference<EventLoop>
    private let cancelled = Atomic<Bool>(false)
    /// The loop backend's registration (a libevent event), ended when the watcher is removed;
    /// loop-confined.
    var registration: (any LoopWatchRegistration)?
    /// Called with libevent's flags on each firing; loop-confined.
    var handler: ((Int16) -> Void)?
    /// Called instead of `handler` if the loop shuts down while the watcher is live (promise forms
    /// reject there); loop-confined.
    var onShutdown: (() -> Void)?
    /// Whether the watcher removes itself after its first firing (promise forms).
    let isOneShot: Bool
    /// The entry point of the user's handler, which names the watcher in stall reports; 0 for
    /// the promise forms (named as libevent callbacks).
    let handlerEntryPoint: UInt

    init(loop: EventLoop, isOneShot: Bool, handlerEntryPoint: UInt = 0, handler: @escaping (Int16) -> Void) {
        self.loop = UnownedReference(loop)
        self.isOneShot = isOneShot
        self.handlerEntryPoint = handlerEntryPoint
        self.handler = handler
    }

    deinit {
        loop.release()
    }

    /// Whether ``cancel()`` was called or the loop removed the watcher (shutdown, one-shot fired).
    ///
    /// Safe from any thread.
    public var isCancelled: Bool {
        cancelled.load(ordering: .acquiring)
    }

    /// Stops watching. The handler is not called again once this returns, except for a call
    /// already in progress on the loop's thread.
    ///
    /// Safe from any thread. On the loop's thread the libevent event is freed at once; on another
    /// thread the watcher is marked cancelled and the loop frees the event on its next tick (or
    /// here, if the loop owns its base and no thread drives it). Idempotent; does nothing after
    /// shutdown.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing), let loop = loop.load() else { return }
        loop.submitOnLoop(runsInlineWhenPossible: true) { [self, unowned loop] in loop.removeWatcher(self) }
    }

    /// libevent's callback for this watcher, on the loop's thread.
    func fire(_ flags: Int16) {
        guard let loop = loop.load() else { return }
        let identity =
            handlerEntryPoint == 0 ? LoopWorkIdentity.libeventCallback : .watcherHandler(entryPoint: handlerEntryPoint)
        loop.withCallbackEntered(as: identity) {
            if isCancelled {
                loop.removeWatcher(self)
                return
            }
            // Copied out first: removing a one-shot watcher releases the stored handler.
            let handler = self.handler
            if isOneShot {
                cancelled.store(true, ordering: .releasing)
                loop.removeWatcher(self)
            }
            handler?(flags)
        }
    }

    /// A simulated host delivers a signal this watcher waits for: runs it as libevent's callback
    /// would; on the thread that drives the simulation.
    package func deliverSignal() {
        fire(Int16(EV_SIGNAL))
    }

    /// Ends ``registration``, if any; on the loop's thread.
    func removeRegistration() {
        registration?.remove()
        registration = nil
    }

    /// Marks the watcher cancelled, from the loop's thread.
    func markCancelled() {
        cancelled.store(true, ordering: .releasing)
    }
}

import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// The backend of every loop made with a public initializer: an `event_base` the loop owns
/// (``EventLoop/init()``) or borrows (``EventLoop/init(borrowing:)``), an `eventfd` that wakes
/// it, one libevent timer, and the monotonic clock.
///
/// The loop holds it as `EventLoopBackendCarrier.libevent`, so that its calls are direct. It owns
/// every libevent object of the loop: the wake-up, timer and main-queue events here, the
/// watchers' events (``LibeventWatch``) and the sockets' (`LibeventBackend+TCP`).
final class LibeventBackend: EventLoopBackend, @unchecked Sendable {
    // `@unchecked Sendable`: `base`, `ownsBase` and `wakeupDescriptor` are immutable and
    // `wakeUp(_:)` only writes to the descriptor, from any thread; everything else is
    // loop-confined, touched by the thread that drives the loop, as the loop's own state.
    // LoopInvariants: "Loop confinement".

    /// The libevent base; freed at shutdown when ``ownsBase`` is true.
    let base: OpaquePointer
    /// Whether the loop created ``base`` and so frees it.
    let ownsBase: Bool
    /// The `eventfd` other threads write to wake the loop. Closed in `deinit` (or by the host's
    /// thread, when a borrowed loop released without shutdown hands it over): a thread that can
    /// still wake the loop holds a reference to it, so no writer can race with the close.
    let wakeupDescriptor: Int32
    /// The loop whose events these are; set once, by ``install(for:)``. Unowned: the loop owns
    /// this backend, and frees the events that call back into it before it goes.
    /// LoopInvariants: "Unretained callback arguments".
    private(set) unowned(unsafe) var loop: EventLoop!

    // MARK: Loop-confined state
    //
    // `@exclusivity(unchecked)`: as the loop's own confined state (see `EventLoop`).

    /// The persistent read event on ``wakeupDescriptor``.
    @exclusivity(unchecked) var wakeupEvent: OpaquePointer?
    /// The one libevent timer, armed for the loop's earliest timer deadline.
    @exclusivity(unchecked) var timerEvent: OpaquePointer?
    /// The deadline ``timerEvent`` is armed for, nil when it is not armed.
    @exclusivity(unchecked) var armedDeadline: UInt64?
    /// The read event on libdispatch's main-queue descriptor, while a drive runs on the main
    /// thread.
    @exclusivity(unchecked) var mainQueueEvent: OpaquePointer?
    /// The callback context of the wake-up and timer events on a borrowed base, which outlives
    /// the loop (see ``BorrowedLoopEvents``); nil when the loop owns its base. Set once, by
    /// ``install(for:)``.
    private(set) var borrowedEvents: BorrowedLoopEvents?
    /// Whether ``wakeupDescriptor`` went to the host's thread, which closes it.
    private var handedOverDescriptor = false

    /// A backend on `base`, which it frees at shutdown.
    init(owning base: OpaquePointer) {
        self.base = base
        ownsBase = true
        wakeupDescriptor = Self.makeWakeupDescriptor()
    }

    /// A backend on the host's `base`, which it never frees.
    init(borrowing base: OpaquePointer) {
        self.base = base
        ownsBase = false
        wakeupDescriptor = Self.makeWakeupDescriptor()
    }

    deinit {
        if !handedOverDescriptor { close(wakeupDescriptor) }
    }

    private static func makeWakeupDescriptor() -> Int32 {
        let descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(descriptor >= 0, "EventLoop: eventfd failed (errno \(errno)); the process is out of descriptors")
        return descriptor
    }

    /// Creates and adds the wake-up event and creates the timer event, for `loop`, from its
    /// `init`.
    func install(for loop: EventLoop) {
        self.loop = loop
        if ownsBase {
            // Callback context: `self`, unretained. The loop owns this backend and has it free
            // these events (at shutdown, or in its `deinit`) before it goes.
            // LoopInvariants: "Unretained callback arguments".
            let context = Unmanaged.passUnretained(self).toOpaque()
            wakeupEvent = event_new(
                base, wakeupDescriptor, Int16(EV_READ | EV_PERSIST),
                { _, _, context in
                    Unmanaged<LibeventBackend>.fromOpaque(context!).takeUnretainedValue().wakeupFired()
                }, context)
            timerEvent = event_new(
                base, -1, 0,
                { _, _, context in
                    Unmanaged<LibeventBackend>.fromOpaque(context!).takeUnretainedValue().timerFired()
                }, context)
        } else {
            // A borrowed base: the events may outlive the loop (its deinit hands them to the
            // host's thread), so they carry a retained context that does.
            // LoopInvariants: "Unretained callback arguments" (the borrowed-base exception).
            let events = BorrowedLoopEvents(loop: loop, backend: self)
            borrowedEvents = events
            let context = events.retainedContext()
            wakeupEvent = event_new(
                base, wakeupDescriptor, Int16(EV_READ | EV_PERSIST),
                { _, _, context in BorrowedLoopEvents.wakeupFired(context) }, context)
            timerEvent = event_new(
                base, -1, 0, { _, _, context in BorrowedLoopEvents.timerFired(context) }, context)
        }
        guard let wakeupEvent, timerEvent != nil, event_add(wakeupEvent, nil) == 0 else {
            fatalError("EventLoop: could not register its wake-up event with libevent")
        }
    }

    // MARK: Clock and wake-ups

    @inline(__always)
    var now: UInt64 { MonotonicClock.now() }

    /// Makes the loop's `eventfd` readable. Errors are ignored on purpose: the only one possible
    /// on a live `eventfd` is `EAGAIN` when the counter is saturated, and then it is readable.
    @inline(__always)
    func wakeUp(_ loop: EventLoop) {
        _ = eventfd_write(wakeupDescriptor, 1)
    }

    /// The wake-up `eventfd` fired: reset its counter. The tick that follows takes the inbox.
    func wakeupFired() {
        loop.withCallbackEntered(as: .loopEvent) {
            var value: eventfd_t = 0
            _ = eventfd_read(wakeupDescriptor, &value)
        }
    }

    // MARK: Driving

    var isDrivenExternally: Bool { false }

    func checkCanBeDriven(_ operation: StaticString) {}

    /// A borrowed base may be inside the host's `event_base_loop` on another thread even when no
    /// thread holds the driver role: only an owned base is idle then.
    var admitsVisitsWhileUndriven: Bool { ownsBase }

    func driveWillStart() {
        attachMainQueueIfOnMainThread()
    }

    func driveDidEnd() {
        detachMainQueue()
    }

    @inline(__always)
    func poll(blocking: Bool) {
        event_base_loop(base, blocking ? EVLOOP_ONCE : EVLOOP_ONCE | EVLOOP_NONBLOCK)
    }

    /// Arms the libevent timer for `deadline`, if that changed.
    func armTimer(for deadline: UInt64?) {
        guard let timerEvent, deadline != armedDeadline else { return }
        armedDeadline = deadline
        guard let deadline else {
            event_del(timerEvent)
            return
        }
        let now = MonotonicClock.now()
        let delta = deadline > now ? deadline - now : 0
        // Round up to whole microseconds: an early fire would only cost a spurious wake-up, but
        // rounding down would make one likely.
        let microseconds = (delta + 999) / 1000
        var interval = timeval(
            tv_sec: Int(microseconds / 1_000_000),
            tv_usec: Int(microseconds % 1_000_000))
        // libevent measures a relative timeout from the time it cached when the loop woke, which
        // can be well before now inside a long tick; refresh it so the timer does not fire early.
        event_base_update_cache_time(base)
        event_add(timerEvent, &interval)
    }

    /// The libevent timer fired: it is no longer armed. The tick that follows runs what is due.
    func timerFired() {
        loop.withCallbackEntered(as: .loopEvent) {
            armedDeadline = nil
        }
    }

    /// Makes the wake-up event active: the host polls its descriptors, then calls back. Safe
    /// here: this is the base's own thread.
    func requestAnotherTurn() {
        if let wakeupEvent { event_active(wakeupEvent, EV_READ, 0) }
    }

    // MARK: Monitoring

    var supportsMonitoring: Bool { true }

    // MARK: Teardown

    /// Frees the loop's own events, then the base if the loop owns it, and gives up signal
    /// ownership.
    func loopDidShutDown(_ loop: EventLoop) {
        freeLibeventObjects()
        SignalOwnership.release(by: loop)
    }

    /// On an owned base, frees the watchers' events and the loop's own; on a borrowed base, where
    /// this may be any thread while the host runs the base, hands them all (and the `eventfd`) to
    /// the host's thread instead, touching nothing of the base here.
    /// LoopInvariants: "Unretained callback arguments" (the borrowed-base exception).
    func loopWasReleased(_ loop: EventLoop, watchers: [EventLoopWatcher]) {
        if let borrowedEvents {
            handOverLibeventObjects(to: borrowedEvents, watchers: watchers)
        } else {
            for watcher in watchers { watcher.removeRegistration() }
            freeLibeventObjects()
        }
        SignalOwnership.release(by: loop)
    }

    /// Hands the loop's events, its watchers' events and its `eventfd` to the host's thread,
    /// which frees them (see ``BorrowedLoopEvents``).
    private func handOverLibeventObjects(to events: BorrowedLoopEvents, watchers: [EventLoopWatcher]) {
        var orphaned = watchers.compactMap { watcher -> OpaquePointer? in
            defer { watcher.registration = nil }
            return (watcher.registration as? LibeventWatch)?.event
        }
        for event in [mainQueueEvent, timerEvent, wakeupEvent] {
            if let event { orphaned.append(event) }
        }
        mainQueueEvent = nil
        timerEvent = nil
        armedDeadline = nil
        wakeupEvent = nil
        handedOverDescriptor = true
        events.adopt(.init(events: orphaned, watchers: watchers, wakeupDescriptor: wakeupDescriptor))
    }

    /// Frees the loop's own events, then the base if the loop owns it, in the order libevent
    /// requires (`event_base_free` does not free events, and `event_free` after it is a
    /// use-after-free).
    private func freeLibeventObjects() {
        if let mainQueueEvent { event_free(mainQueueEvent) }
        mainQueueEvent = nil
        if let timerEvent { event_free(timerEvent) }
        timerEvent = nil
        armedDeadline = nil
        if let wakeupEvent { event_free(wakeupEvent) }
        wakeupEvent = nil
        // The freed events carried the borrowed-base context's retain.
        borrowedEvents?.releaseContext()
        if ownsBase { event_base_free(base) }
    }
}

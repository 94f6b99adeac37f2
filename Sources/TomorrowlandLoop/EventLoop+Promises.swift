import Synchronization
import Tomorrowland

extension EventLoop {
    /// A promise fulfilled on the loop's thread the first time `fd` is readable.
    ///
    /// Safe from any thread. The watch is registered on the loop (at once if called on the loop's
    /// thread or while no thread drives the loop, else through the loop's queue) and removed after
    /// it fires. Requesting cancellation of the promise removes the watch and cancels the promise.
    ///
    /// - Returns: A promise rejected with ``EventLoopError/invalidDescriptor(fd:errno:)`` if `fd` is
    ///   closed or cannot be watched, with ``EventLoopError/shutDown`` if the loop is or gets shut
    ///   down first.
    public func readable(_ fd: Int32) -> Promise<Void, EventLoopError> {
        descriptorPromise(fd, .readable)
    }

    /// A promise fulfilled on the loop's thread the first time `fd` is writable; see
    /// ``readable(_:)``.
    public func writable(_ fd: Int32) -> Promise<Void, EventLoopError> {
        descriptorPromise(fd, .writable)
    }

    /// A promise fulfilled with `signal` on the loop's thread the next time the process receives
    /// it.
    ///
    /// Safe from any thread; the rules of ``watch(signal:_:)`` apply (one loop per process owns
    /// signals). Requesting cancellation removes the watch and cancels the promise.
    ///
    /// - Returns: A promise rejected with ``EventLoopError/invalidSignal(_:)``,
    ///   ``EventLoopError/signalsOwnedByAnotherLoop`` or ``EventLoopError/shutDown``.
    public func signal(_ signal: Int32) -> Promise<Int32, EventLoopError> {
        let (promise, resolver) = Promise<Int32, EventLoopError>.makeWithResolver()
        registerOneShot(resolver) { [unowned self] in
            try addSignalWatcher(signal, isOneShot: true) { _ in resolver.fulfill(with: signal) }
        }
        return promise
    }

    /// A promise fulfilled on the loop's thread once `duration` has passed on the loop's clock.
    ///
    /// Safe from any thread. Requesting cancellation cancels the timer and the promise. If the
    /// timer is dropped without firing (the loop shuts down, or was already shut down), the
    /// promise is cancelled.
    public func sleep(for duration: Duration) -> Promise<Void, NoError> {
        let (promise, resolver) = Promise<Void, NoError>.makeWithResolver()
        let canceller = CancellingResolver(resolver)
        let handle = scheduleTimer(after: duration, ifOpen: true) {
            canceller.resolver.fulfill(with: ())
        }
        guard let handle else {
            resolver.cancel()
            return promise
        }
        resolver.onRequestCancel(on: .immediate) { resolver in
            handle.cancel()
            resolver.cancel()
        }
        return promise
    }

    /// Drives the loop on the calling thread, like ``run()``, until `promise` resolves, and
    /// returns its result.
    ///
    /// The loop returns at the end of the round (the tick) in which the promise resolved, as
    /// `TestLoop`'s `run(until:)` does: the work that was due then, callbacks the resolution
    /// queued on this loop included, has run; timers due later have not. (Resolved by another
    /// thread, the promise ends the tick in progress when it resolves.) ``stop()`` does not end
    /// this call: resolve or cancel the promise instead. If `promise` is already resolved, this
    /// returns its result at once without running anything.
    ///
    /// If the loop is shut down while the promise is still unresolved (and the shutdown drain does
    /// not resolve it), or was shut down before this call, this returns `.cancelled` without
    /// waiting: nothing would drive the loop again. The promise itself is left as it is.
    ///
    /// - Important: Same rules as ``run()``.
    public func run<Value, Error>(until promise: Promise<Value, Error>) -> PromiseResult<Value, Error> {
        if let result = promise.result { return result }
        let resolved = ResolutionFlag()
        promise.tap(on: .immediate) { [weak self] _ in
            resolved.set()
            // On the loop's thread the tick in progress sees the flag; elsewhere the loop may
            // be blocked in libevent.
            if let self, !self.inEventLoop { self.wakeUp() }
        }
        while true {
            guard claimDriver("run(until:)") else {
                // Shut down (before this call, or while it drove the loop): nothing will drive
                // the loop again, so waiting could be for ever.
                return promise.result ?? .cancelled
            }
            drive { resolved.isSet }
            if let result = promise.result { return result }
        }
    }

    // MARK: Internals

    /// Registers a descriptor one-shot watch for a promise.
    private func descriptorPromise(_ fd: Int32, _ events: IOEvents) -> Promise<Void, EventLoopError> {
        let (promise, resolver) = Promise<Void, EventLoopError>.makeWithResolver()
        registerOneShot(resolver) { [unowned self] in
            try addDescriptorWatcher(fd, events: events, isOneShot: true) { _ in resolver.fulfill(with: ()) }
        }
        return promise
    }

    /// Runs `register` on the loop and wires the watcher it returns to `resolver`: rejected with
    /// the error `register` throws, or with ``EventLoopError/shutDown`` at shutdown; the watch is
    /// removed when cancellation is requested.
    private func registerOneShot<Value: Sendable>(
        _ resolver: Promise<Value, EventLoopError>.Resolver,
        _ register: @escaping @Sendable () throws -> EventLoopWatcher
    ) {
        let accepted = submitOnLoop(runsInlineWhenPossible: true) {
            do {
                let watcher = try register()
                watcher.onShutdown = { resolver.reject(with: .shutDown) }
                resolver.onRequestCancel(on: .immediate) { resolver in
                    watcher.cancel()
                    resolver.cancel()
                }
            } catch let error as EventLoopError {
                resolver.reject(with: error)
            } catch {
                preconditionFailure("EventLoop watchers throw EventLoopError only, got \(error)")
            }
        }
        if !accepted { resolver.reject(with: .shutDown) }
    }
}

/// Set once the promise given to ``EventLoop/run(until:)`` resolved; read by the loop's thread.
private final class ResolutionFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

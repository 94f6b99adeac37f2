import Tomorrowland

#if canImport(Glibc)
    import Glibc
#endif

/// The system's resolver (`getaddrinfo`: `/etc/hosts`, DNS and whatever `nsswitch.conf` lists),
/// run on threads of its own so that no loop thread ever waits for an answer.
///
/// Threads start on demand, up to ``maximumThreads``, and each exits as soon as the queue is
/// empty: starting a thread costs about what handing a lookup to a waiting one does (both about
/// 50 µs here), so idle threads would buy nothing. When every thread is stuck on a name that does
/// not answer, further lookups wait in the queue; the connects' timeouts still fire on time, and a
/// lookup abandoned while queued is dropped without calling `getaddrinfo`.
///
/// `getaddrinfo` cannot be interrupted: an abandoned lookup that already started runs to its end
/// on its thread, which then frees the answer (the `addrinfo` list is copied and freed on that
/// thread before anything is delivered) and discards it.
package final class SystemNameResolver: NameResolver {
    /// The process-wide resolver that ``TCPConnection/connect(host:port:on:timeout:options:)`` uses.
    package static let shared = SystemNameResolver(maximumThreads: 8)

    /// The most threads that call `getaddrinfo` at once.
    package let maximumThreads: Int

    private struct State {
        /// Lookups not started yet, oldest first from `head`.
        var queue: [NameResolution] = []
        var head = 0
        /// Threads started and not exited.
        var threadCount = 0
        /// Lookups handed to threads so far (for tests).
        var started = 0

        mutating func dequeue() -> NameResolution? {
            guard head < queue.count else { return nil }
            let next = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            return next
        }
    }

    private let state = LockedValue(State())

    /// A resolver that runs at most `maximumThreads` lookups at once.
    package init(maximumThreads: Int) {
        precondition(maximumThreads > 0, "SystemNameResolver needs at least one thread")
        self.maximumThreads = maximumThreads
    }

    /// The number of resolver threads alive now.
    package var threadCount: Int { state.withLock { $0.threadCount } }

    /// The number of lookups that reached `getaddrinfo` so far (abandoned ones never do).
    package var startedLookups: Int { state.withLock { $0.started } }

    /// Queues `resolution` and starts a thread for it if none is free; returns at once.
    package func resolve(_ resolution: NameResolution) {
        let startsThread = state.withLock { state -> Bool in
            state.queue.append(resolution)
            guard state.threadCount < maximumThreads else { return false }
            state.threadCount += 1
            return true
        }
        if startsThread { startThread() }
    }

    private func startThread() {
        // The new thread inherits the signal mask in force at `pthread_create`: block everything
        // around it, so that a process-directed signal (SIGTERM for a daemon) is never delivered
        // to a resolver thread stuck in `getaddrinfo`.
        var everything = sigset_t()
        var previous = sigset_t()
        sigfillset(&everything)
        pthread_sigmask(SIG_SETMASK, &everything, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }

        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // The thread owns this retain until it exits.
        // LoopInvariants: "A retain handed to a thread": taken back by the thread, or released below.
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { context in
                let resolver = Unmanaged<SystemNameResolver>.fromOpaque(context!).takeRetainedValue()
                resolver.work()
                return nil
            }, context)
        guard status != 0 else { return }
        Unmanaged<SystemNameResolver>.fromOpaque(context).release()
        threadFailedToStart(errno: status)
    }

    /// A thread could not start (`EAGAIN`: out of threads). If no thread is left to serve the
    /// queue, its lookups fail now rather than wait forever.
    private func threadFailedToStart(errno code: Int32) {
        let stranded = state.withLock { state -> [NameResolution] in
            state.threadCount -= 1
            guard state.threadCount == 0 else { return [] }
            var stranded: [NameResolution] = []
            while let next = state.dequeue() { stranded.append(next) }
            return stranded
        }
        for resolution in stranded { resolution.complete(with: .failure(.system(errno: code))) }
    }

    /// A resolver thread's body: lookups from the queue until it is empty.
    private func work() {
        while true {
            // Dequeue and exit decide under one lock with `resolve(_:)`'s enqueue, so a lookup is
            // never left queued with no thread to take it.
            let next = state.withLock { state -> NameResolution? in
                while let next = state.dequeue() {
                    if next.isAbandoned { continue }
                    state.started += 1
                    return next
                }
                state.threadCount -= 1
                return nil
            }
            guard let resolution = next else { return }
            let result = Result { () throws(TCPError) in
                try TCPSocketAddress.resolve(host: resolution.host, port: resolution.port, passive: false)
            }
            resolution.complete(with: result)
        }
    }
}

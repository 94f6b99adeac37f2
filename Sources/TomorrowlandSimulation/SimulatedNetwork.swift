import Synchronization
import Tomorrowland
import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// TCP between simulated hosts on one virtual clock, every choice drawn from one seed.
///
/// Add hosts (``addHost(_:address:loopCount:)``), give their loops to your daemon and its
/// clients in place of real ones, and drive the network (``run(for:)``, ``run(until:timeLimit:)``,
/// ``step()``). The same daemon code that runs on `EventLoop()` with real sockets runs here
/// unchanged: the loops are `EventLoop`s whose clock is the network's and whose TCP goes through
/// the network's links (see the TomorrowlandLoop article "The transport seam").
///
/// ```swift
/// let network = SimulatedNetwork(seed: 7)
/// let server = network.addHost("server")
/// let client = network.addHost("client")
/// let listener = try TCPListener.listen(host: "", port: 7, on: server.loop) { connection in
///     connection.startReading { bytes in connection.enqueue(bytes); return bytes.count }
/// }
/// let reply = TCPConnection.connect(host: "server", port: 7, on: client.loop, timeout: .seconds(1))
///     .flatMap(on: .loop(client.loop)) { connection in
///         connection.write([1, 2, 3]).flatMap(on: .loop(client.loop)) { connection.read(exactly: 3) }
///     }
/// let result = network.run(until: reply, timeLimit: .seconds(5))
/// print(network.digestHex)   // the same for seed 7 in every run, in every process
/// ```
///
/// ## One order of events
///
/// One thread runs every host: the network picks the next event globally, the earliest on the
/// virtual clock among every host's loop (its ready work, its timers) and every segment in flight,
/// equal times in a fixed order (network events first, in the order they were scheduled; then
/// loops, by host then loop). Nothing reads a real clock, opens a descriptor or starts a thread.
///
/// ## Trace and digest
///
/// Every run records ``trace`` (loop turns, connections opened, accepted and closed, bytes
/// delivered, faults) and its ``digest``, an FNV-1a hash of the trace's lines that is independent
/// of Swift's per-process hash seeding. Same seed, same code: same digest.
///
/// ## Faults
///
/// Settable by hand: ``reset(_:)`` a connection, ``partition(_:from:)`` and ``heal()``,
/// ``SimulatedHost/incomingConnections`` (refuse, or never answer), ``crash(_:)`` and
/// ``restart(_:)``, ``SimulatedHost/descriptorLimit`` (accept fails with `EMFILE`), a listener's
/// backlog (`TCPListenerOptions.backlog`: a full one drops connection attempts, which retry),
/// ``nameFaults`` (a name resolves late, never, or to a dead address), and any of them at an exact
/// instant with ``schedule(at:named:_:)``. Chosen by the seed: set ``faultPlan``. Every fault is
/// in the ``trace`` and counted in ``faultCount``.
///
/// - Important: Drive the network from one thread, and never from inside a host's loop work.
public final class SimulatedNetwork: @unchecked Sendable {
    // `@unchecked Sendable`: loops read ``nanoseconds`` (atomic) from any thread; everything else
    // is touched only by the one thread that drives the network, inside or outside its loops'
    // turns (which run on that thread too).

    /// The seed every choice derives from.
    public let seed: UInt64
    /// The delay of each segment between two hosts.
    public let latency: SimulatedLatency
    /// The most bytes one end may have sent that its peer has not read yet: the send window.
    public let window: Int
    /// Whether reads and writes take a random part of what they could (down to one byte).
    public let splitsReadsAndWrites: Bool

    /// The hosts, in the order they were added.
    public private(set) var hosts: [SimulatedHost] = []
    /// Everything that happened so far, in order; only the last ``traceLimit`` entries when that
    /// is set.
    public var trace: [SimulationTraceEntry] { traceKept.entries }
    /// How many trace entries ``trace`` keeps: nil (the default) keeps them all; a number keeps
    /// only the most recent ones, for long runs (a million events make a hundred megabytes of
    /// trace), while ``digest``, ``traceEntryCount`` and ``traceObserver`` still see every entry.
    public var traceLimit: Int? {
        get { traceKept.limit }
        set { traceKept.limit = newValue }
    }
    /// How many entries the trace has had, kept or not.
    public var traceEntryCount: Int { traceKept.count }
    /// Called with each trace entry as it is recorded (whatever ``traceLimit`` keeps); nil by
    /// default. Runs on the network's thread; it must not drive the network.
    public var traceObserver: ((SimulationTraceEntry) -> Void)?
    /// The FNV-1a 64 hash of ``trace``'s lines.
    public var digest: UInt64 { traceDigest.value }
    /// ``digest`` as 16 hexadecimal digits.
    public var digestHex: String {
        let digits = String(digest, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Called each time a connection on one of the network's hosts reads bytes: the host that
    /// read, its peer as "address:port", and the bytes read. Nil by default.
    ///
    /// For checkers that must know the order in which a daemon received its requests: the
    /// connection hands what it read to its read handler in the same event, so a request
    /// whose last byte is read here is handled before any other host runs. Observing changes
    /// neither the trace nor the digest. Runs on the network's thread; it must not drive the
    /// network. `bytes` points into the reading connection's input buffer and is valid only
    /// during the call: copy what you keep.
    public var receiveObserver: ((_ host: SimulatedHost, _ remote: String, _ bytes: UnsafeRawBufferPointer) -> Void)?
    /// The virtual clock: time since the network was created.
    public var now: Duration { .nanoseconds(Int64(clamping: nanoseconds)) }

    /// The virtual clock, which every host's loop reads (from any thread: it is atomic; only the
    /// network's thread moves it).
    let clock = VirtualClock()

    /// ``clock``'s time in nanoseconds.
    var nanoseconds: UInt64 { clock.nanoseconds }
    var random: SimulationRandom
    private var traceDigest = TraceDigest()
    private var traceKept = SimulationTraceBuffer()
    private let events = SimulationEventQueue()
    /// Each loop's next time, cached (see `SimulationLoopSchedule`).
    var loopSchedule = SimulationLoopSchedule()
    /// Loops woken (submitted to from outside their own work) since the last pick, from any
    /// thread; `hasWakes` says whether there are any without taking the lock.
    private let wakes = LockedValue<[ObjectIdentifier]>([])
    private let hasWakes = Atomic<Bool>(false)
    private var hostsByName: [String: SimulatedHost] = [:]
    private var hostsByAddress: [String: SimulatedHost] = [:]
    /// Every loop a host ever had, those of earlier generations included.
    var hostsByLoop: [ObjectIdentifier: SimulatedHost] = [:]
    private var nextLinkID = 0
    /// Both ends of every connection until both are released, when the link between them (each
    /// end's `peer`) is cut. What the network does must not depend on when an object happens to
    /// be freed, and it did while ends referred to their peers weakly: a write to an end whose
    /// closed peer had been freed failed at once, while one whose peer a queued event still held
    /// reached it and drew a reset; so holding a connection, or the queue's internal layout,
    /// changed the run. Now a peer is there while either end is open, and once both are released
    /// every segment between them is dropped unseen (see `perform`).
    private var links: [Int: (SimulatedLinkEnd, SimulatedLinkEnd)] = [:]
    private var nextAttemptID = 0
    /// Pairs of host indices that cannot reach each other, the smaller index first.
    private var partitioned: Set<HostPair> = []
    /// Connection attempts that met a partition, in the order they met it: sent again at
    /// ``heal()``. (Segments of a connection wait at their receiving end instead, in
    /// `SimulatedLinkEnd.held`, which keeps each direction of a connection in order.)
    private var held: [SimulationEvent.Action] = []
    /// Ends with segments waiting in `held`, in the order their first one was held.
    private var endsHolding: [SimulatedLinkEnd] = []
    private lazy var resolver = SimulatedNameResolver(network: self)
    /// The faults' own state: the plan, the count, name faults, crash and restart handlers.
    let faultState = SimulationFaultState()

    /// Creates an empty network.
    ///
    /// - Parameters:
    ///   - seed: Every choice the network makes derives from it.
    ///   - latency: The delay of each segment; 50 µs to 2 ms by default.
    ///   - window: The send window in bytes; 64 KiB by default.
    ///   - splitsReadsAndWrites: Whether reads and writes split at random points; true by default.
    public init(
        seed: UInt64, latency: SimulatedLatency = .uniform(.microseconds(50) ... .milliseconds(2)),
        window: Int = 65_536, splitsReadsAndWrites: Bool = true
    ) {
        precondition(window > 0, "SimulatedNetwork needs a window of at least one byte")
        self.seed = seed
        self.latency = latency
        self.window = window
        self.splitsReadsAndWrites = splitsReadsAndWrites
        random = SimulationRandom(seed: seed)
    }

    deinit {
        // Ends of links never closed at both ends (an attempt given up, a crash) hold each other.
        for (first, second) in links.values {
            first.peer = nil
            second.peer = nil
        }
    }

    /// Adds a host with `loopCount` loops.
    ///
    /// - Parameters:
    ///   - name: What the network's name resolver resolves to the host's address; unique.
    ///   - address: Its IPv4 address; "10.0.0.N" for the Nth host by default.
    ///   - loopCount: How many loops the host has (its ``SimulatedHost/group``); 1 by default.
    @discardableResult
    public func addHost(_ name: String, address: String? = nil, loopCount: Int = 1) -> SimulatedHost {
        precondition(hostsByName[name] == nil, "SimulatedNetwork.addHost: a host named \(name) exists already")
        precondition(loopCount >= 1, "SimulatedNetwork.addHost: a host needs at least one loop")
        let address = address ?? "10.0.\((hosts.count + 1) / 256).\((hosts.count + 1) % 256)"
        precondition(hostsByAddress[address] == nil, "SimulatedNetwork.addHost: address \(address) is taken")
        let host = SimulatedHost(
            name: name, address: address, index: hosts.count, loopCount: loopCount, simulation: self)
        hosts.append(host)
        hostsByName[name] = host
        hostsByAddress[address] = host
        for loop in host.loops { hostsByLoop[ObjectIdentifier(loop)] = host }
        loopSchedule.add(host)
        return host
    }

    /// A generator seeded from the network's: for clients' own choices, replayable with the seed.
    public func makeRandom() -> SimulationRandom {
        SimulationRandom(seed: random.next())
    }

    // MARK: Driving

    /// Runs the next event (moving the clock to it); false when nothing is pending at all.
    @discardableResult
    public func step() -> Bool {
        guard let next = nextEvent() else { return false }
        run(next)
        return true
    }

    /// Runs every event due within `duration` of virtual time, then sets the clock to its end.
    public func run(for duration: Duration) {
        let end = nanoseconds.addingReportingOverflow(duration.simulationNanoseconds)
        let deadline = end.overflow ? UInt64.max : end.partialValue
        while let next = nextEvent(), next.time <= deadline { run(next) }
        if deadline > nanoseconds { clock.advance(to: deadline) }
    }

    /// Runs events until `promise` resolves, or until nothing is pending, or until `timeLimit`
    /// of virtual time has passed; returns its result, nil if it did not resolve.
    public func run<Value, Failure>(
        until promise: Promise<Value, Failure>, timeLimit: Duration = .seconds(3600)
    ) -> PromiseResult<Value, Failure>? {
        let deadline = nanoseconds.addingReportingOverflow(timeLimit.simulationNanoseconds)
        let limit = deadline.overflow ? UInt64.max : deadline.partialValue
        while promise.result == nil, let next = nextEvent(), next.time <= limit { run(next) }
        return promise.result
    }

    /// Runs events until nothing is pending (no loop work or timer, nothing in flight), at most
    /// `maxEvents`; returns whether the network went idle.
    @discardableResult
    public func runUntilIdle(maxEvents: Int = 1_000_000) -> Bool {
        for _ in 0..<maxEvents where !step() { return true }
        return nextEvent() == nil
    }

    // MARK: Faults

    /// Resets `connection` (it must be a connection on this network): both ends fail with
    /// `TCPError.connectionReset`, this one at once, its peer when the reset reaches it. As after
    /// a kernel's reset, each end first reads the bytes it had received.
    public func reset(_ connection: TCPConnection) {
        guard let end = connection.transport as? SimulatedLinkEnd, end.network === self else {
            preconditionFailure("SimulatedNetwork.reset(_:) needs a connection of this network")
        }
        recordFault("reset \(end.label)")
        abort(end, reason: "fault")
    }

    /// Cuts every path between the hosts of `group` and those of `other`: segments between them
    /// wait (as retransmissions would) until ``heal()``; connection attempts between them go
    /// unanswered.
    public func partition(_ group: [SimulatedHost], from other: [SimulatedHost]) {
        recordFault(
            "partition \(group.map(\.name).joined(separator: ",")) | \(other.map(\.name).joined(separator: ","))")
        for first in group {
            for second in other where first !== second { partitioned.insert(HostPair(first, second)) }
        }
    }

    /// Ends every partition: the segments that waited are sent again, in order.
    public func heal() {
        record(.fault, "heal")
        partitioned.removeAll()
        let waiting = held
        held = []
        for action in waiting { schedule(action, after: latency.draw(&random)) }
        // Each end's held segments go again as one flush, which delivers them in the order they
        // were sent; segments reaching the end before the flush queue behind them.
        let ends = endsHolding
        endsHolding = []
        for end in ends {
            end.isFlushPending = true
            schedule(.flushHeld(end), after: latency.draw(&random))
        }
    }

    /// Crashes `host`: its loops shut down (what they held is gone), its listening ports close,
    /// and every connection it had is reset at its peers. The host answers nothing until
    /// ``restart(_:)``. ``onHostCrash`` hears of it.
    public func crash(_ host: SimulatedHost) {
        guard !host.isCrashed else { return }
        recordFault("crash \(host.name)")
        host.isCrashed = true
        host.incomingConnections = .unanswered
        for end in host.ends {
            end.isReset = true
            if let peer = end.peer, !peer.isReleased { sendReset(from: end, to: peer) }
        }
        for loop in host.loops {
            loop.shutdown()
            loopSchedule.markStale(loop)
        }
        for port in host.ports.keys.sorted() { host.ports[port]?.close() }
        faultState.onHostCrash?(host)
    }

    // MARK: What the hosts' loop backends ask (SimulatedLoopBackend)

    /// The resolver names go through on this network's hosts, where a connect names the system's
    /// resolver.
    var nameResolver: any NameResolver { resolver }

    /// Work or a timer was submitted to `loop` from outside its own work (another loop's, or
    /// another thread): the loop must be asked for its next event time again. Called from any
    /// thread, after the submission, with no lock held.
    func loopWasWoken(_ loop: EventLoop) {
        // Any thread: a loop's work on another host, or a thread outside the simulation (a
        // Dispatch queue resolving a promise), may submit to a loop.
        wakes.withLock { $0.append(ObjectIdentifier(loop)) }
        hasWakes.store(true, ordering: .releasing)
    }

    /// Binds a listening port on the host of `loop` and makes its listener; on the loop's thread.
    /// Fails with `TCPError.bindFailed(errno:)` (`EADDRINUSE`, `EADDRNOTAVAIL`, `EMFILE`) as a
    /// kernel would, or `TCPError.closed` on a loop of an earlier generation.
    func bindListener(
        host name: String, port requested: UInt16, on loop: EventLoop, options: TCPListenerOptions,
        onAccept: @escaping (TCPConnection) -> Void
    ) -> Result<TCPListener, TCPError> {
        let host = self.host(of: loop)
        // A loop of an earlier generation (the host crashed since) binds nothing.
        guard !host.isCrashed, host.loops.contains(where: { $0 === loop }) else { return .failure(.closed) }
        guard let binding = SimulatedBinding(host: name, on: host) else {
            return .failure(.bindFailed(errno: EADDRNOTAVAIL))
        }
        let number = requested == 0 ? host.ephemeralPort() : requested
        guard host.ports[number] == nil else { return .failure(.bindFailed(errno: EADDRINUSE)) }
        guard !host.isOutOfDescriptors else { return .failure(.bindFailed(errno: EMFILE)) }
        let port = SimulatedPort(host: host, port: number, loop: loop, backlog: Int(options.backlog), binding: binding)
        host.ports[number] = port
        record(.bind, "\(host.name):\(number)")
        return .success(
            TCPListener.make(acceptor: port, loop: loop, localPort: number, options: options, onAccept: onAccept))
    }

    /// Starts connecting from the host of `loop` to `address`; on the loop's thread. `completion`
    /// runs later, once, as a callback of the loop, unless the attempt is cancelled first.
    func connect(
        to address: TCPSocketAddress, from loop: EventLoop, options: TCPConnectionOptions,
        completion: @escaping (Result<any TCPTransport, TCPError>) -> Void
    ) -> any TCPConnectAttempt {
        let host = self.host(of: loop)
        nextAttemptID += 1
        let attempt = SimulatedConnectAttempt(
            id: nextAttemptID, host: host, loop: loop, options: options, completion: completion)
        let target = address.description
        // "10.0.0.1:7" or "[::1]:7": the address without its port and brackets.
        var ip = target[..<(target.lastIndex(of: ":") ?? target.endIndex)]
        if ip.hasPrefix("[") && ip.hasSuffix("]") { ip = ip.dropFirst().dropLast() }
        record(.connect, "attempt \(attempt.id) \(host.name) -> \(target)")
        schedule(.syn(attempt, ip: String(ip), port: address.port), after: latency.draw(&random))
        return attempt
    }

    // MARK: Internals used by links and ports

    func host(of loop: EventLoop) -> SimulatedHost {
        guard let host = hostsByLoop[ObjectIdentifier(loop)] else {
            preconditionFailure("SimulatedNetwork: the loop belongs to another simulation")
        }
        return host
    }

    func splitPoint(of available: Int) -> Int {
        splitsReadsAndWrites ? random.splitPoint(of: available) : available
    }

    func sendData(_ bytes: [UInt8], from end: SimulatedLinkEnd, to peer: SimulatedLinkEnd) {
        scheduleInOrder(.data(peer, bytes), from: end)
    }

    func sendEndOfOutput(from end: SimulatedLinkEnd, to peer: SimulatedLinkEnd) {
        record(.endOfOutput, end.label)
        scheduleInOrder(.endOfOutput(peer), from: end)
    }

    func sendWindowUpdate(from end: SimulatedLinkEnd, to peer: SimulatedLinkEnd, count: Int) {
        scheduleInOrder(.windowUpdate(peer, count), from: end)
    }

    func sendReset(from end: SimulatedLinkEnd, to peer: SimulatedLinkEnd) {
        scheduleInOrder(.reset(peer), from: end)
    }

    func scheduleReadable(_ end: SimulatedLinkEnd) {
        guard !end.readableScheduled else { return }
        end.readableScheduled = true
        schedule(.readable(end), after: 0)
    }

    func scheduleWritable(_ end: SimulatedLinkEnd) {
        guard !end.writableScheduled else { return }
        end.writableScheduled = true
        schedule(.writable(end), after: 0)
    }

    func scheduleAccept(_ port: SimulatedPort) {
        guard !port.acceptScheduled, !port.backlog.isEmpty else { return }
        port.acceptScheduled = true
        schedule(.accept(port), after: 0)
    }

    /// Resets `end` at once and its peer when the reset arrives (a fault, or a connection the
    /// kernel drops).
    func abort(_ end: SimulatedLinkEnd, reason: String) {
        guard !end.isReset else { return }
        record(.reset, "\(end.label) (\(reason))")
        end.isReset = true
        // A released peer's socket is gone: nothing to reset there.
        if let peer = end.peer, !peer.isReleased { sendReset(from: end, to: peer) }
        notifyReady(end)
    }

    /// The connection let `end` go (closed): ends its output if it had not, and forgets it. A
    /// close with received bytes still unread is a reset, as a kernel's close is then.
    func release(_ end: SimulatedLinkEnd) {
        end.isReleased = true
        record(.close, end.label)
        if end.unreadCount > 0 && !end.isReset && !end.host.isCrashed {
            abort(end, reason: "closed with \(end.unreadCount)B unread")
        } else if !end.outputEnded && !end.isReset && !end.host.isCrashed, let peer = end.peer, !peer.isReleased {
            end.outputEnded = true
            scheduleInOrder(.endOfOutput(peer), from: end)
        }
        end.host.ends.removeAll { $0 === end }
        if let peer = end.peer, peer.isReleased {
            links[end.linkID] = nil
            peer.peer = nil
            end.peer = nil
        }
    }

    /// The host with address `ip` (a host's own loopback is the host itself, resolved by the
    /// caller), if any.
    func host(at ip: String) -> SimulatedHost? {
        hostsByAddress[ip]
    }

    /// The name every host resolves to its own loopback address, 127.0.0.1, as `/etc/hosts`
    /// makes it resolve.
    static let loopbackName = "localhost"

    /// Answers `resolution` after a latency: a host's name resolves to its address, and
    /// ``loopbackName`` to 127.0.0.1.
    func scheduleResolution(_ resolution: NameResolution) {
        if resolveWithFault(resolution) { return }
        let answer: Result<[TCPSocketAddress], TCPError>
        let ip = resolution.host == Self.loopbackName ? "127.0.0.1" : hostsByName[resolution.host]?.address
        if let ip, let address = TCPSocketAddress(ipAddress: ip, port: resolution.port) {
            answer = .success([address])
        } else {
            answer = .failure(.addressResolutionFailed(host: resolution.host))
        }
        schedule(.resolved(resolution, answer), after: latency.draw(&random))
    }

    // MARK: Events

    private func nextEvent() -> SimulationEvent.Pick? {
        events.removeCancelledActionsFirst()
        if hasWakes.exchange(false, ordering: .acquiring) {
            let woken = wakes.withLock { woken in
                defer { woken.removeAll(keepingCapacity: true) }
                return woken
            }
            for loop in woken { loopSchedule.markStale(loop) }
        }
        loopSchedule.refresh { slot in nextTime(of: slot.loop, on: slot.host) }
        while let (slot, due) = loopSchedule.first {
            // Network events win ties: they were scheduled by what already ran. The cached time
            // is a lower bound, so a network event due by then comes first in any case.
            if let first = events.firstTime, first <= due { return .init(time: first, source: .network) }
            let entry = loopSchedule.slots[slot]
            // The loop may be due later than cached (a timer cancelled from elsewhere, a
            // shutdown): ask it, and pick again if so.
            let actual = nextTime(of: entry.loop, on: entry.host)
            if actual == due { return .init(time: due, source: .loop(entry.host, entry.index)) }
            loopSchedule.update(slot, to: actual)
        }
        return events.firstTime.map { .init(time: $0, source: .network) }
    }

    /// When `loop` of `host` next has something to do, never before now; nil if never.
    private func nextTime(of loop: EventLoop, on host: SimulatedHost) -> UInt64? {
        guard !host.isCrashed, let time = loop.nextEventTime() else { return nil }
        return max(time, nanoseconds)
    }

    /// Runs `body` as a callback of `loop` (which may give the loop work), then has the loop
    /// asked for its next time again.
    func runCallback(on loop: EventLoop, _ body: () -> Void) {
        loop.runCallback(body)
        loopSchedule.markStale(loop)
    }

    private func run(_ pick: SimulationEvent.Pick) {
        if pick.time > nanoseconds { clock.advance(to: pick.time) }
        switch pick.source {
        case .network:
            perform(events.removeFirst())
        case .loop(let host, let index):
            record(.turn, "\(host.name)/\(index)")
            host.loops[index].runTurn()
            loopSchedule.markStale(host.loops[index])
        }
    }

    func schedule(_ action: SimulationEvent.Action, after delay: UInt64) {
        let (time, overflow) = nanoseconds.addingReportingOverflow(delay)
        events.insert(SimulationEvent(time: overflow ? UInt64.max : time, action: action))
    }

    /// Schedules a segment from `end` to arrive after a drawn latency but never before the
    /// segments `end` sent earlier.
    private func scheduleInOrder(_ action: SimulationEvent.Action, from end: SimulatedLinkEnd) {
        let (drawn, overflow) = nanoseconds.addingReportingOverflow(latency.draw(&random))
        let time = max(overflow ? UInt64.max : drawn, end.lastArrival)
        end.lastArrival = time
        events.insert(SimulationEvent(time: time, action: action))
    }

    private func perform(_ action: SimulationEvent.Action) {
        if let end = receivingEnd(of: action), end.isReleased, end.peer?.isReleased ?? true {
            // Both ends are closed: the segment meets no socket. Dropped here, before the
            // partition sees it, so that nothing depends on whether the ends are still alive.
            return
        }
        if let end = receivingEnd(of: action), end.isFlushPending || !end.held.isEmpty {
            // Segments held before this one still wait for their flush: in order, this one waits too.
            end.held.append(action)
            return
        }
        if !partitioned.isEmpty, let pair = hostPair(of: action), partitioned.contains(pair) {
            if let end = receivingEnd(of: action) {
                if end.held.isEmpty && !end.isFlushPending { endsHolding.append(end) }
                end.held.append(action)
            } else {
                held.append(action)
            }
            return
        }
        switch action {
        case .syn(let attempt, let ip, let port):
            arrive(attempt, ip: ip, port: port)
        case .established(let attempt, let end):
            guard let completion = attempt.completion else {
                // Cancelled (timed out) meanwhile: the connection the peer accepted is dropped.
                end.host.ends.removeAll { $0 === end }
                abort(end, reason: "attempt \(attempt.id) abandoned")
                return
            }
            attempt.completion = nil
            record(.established, "attempt \(attempt.id) \(end.label)")
            runCallback(on: attempt.loop) { completion(.success(end)) }
        case .refused(let attempt):
            guard let completion = attempt.completion else { return }
            attempt.completion = nil
            record(.refused, "attempt \(attempt.id)")
            runCallback(on: attempt.loop) { completion(.failure(.connectFailed(errno: ECONNREFUSED))) }
        case .data(let end, let bytes):
            guard !end.host.isCrashed, !end.isReset else { return }
            if end.isReleased {
                // Bytes for a closed socket: the kernel answers with a reset.
                if let peer = end.peer, !peer.isReset, !peer.isReleased {
                    abort(peer, reason: "data to closed \(end.label)")
                }
                return
            }
            record(.deliver, "\(end.label) \(bytes.count)B")
            end.received.append(contentsOf: bytes)
            notifyReady(end)
        case .endOfOutput(let end):
            guard !end.host.isCrashed, !end.isReset else { return }
            end.peerEndedOutput = true
            notifyReady(end)
        case .windowUpdate(let end, let count):
            end.unread -= count
            if end.wantsWrite { notifyReady(end) }
        case .reset(let end):
            guard !end.isReset else { return }
            record(.reset, "\(end.label) (by peer)")
            end.isReset = true
            notifyReady(end)
        case .readable(let end):
            end.readableScheduled = false
            guard !end.isReleased, end.wantsRead, end.hasInputEvent, let connection = end.connection else { return }
            connection.transportReadable()
            loopSchedule.markStale(connection.loop)
            // Short reads leave input behind: a level-triggered readiness fires again.
            if !end.isReleased && end.wantsRead && end.hasInputEvent { scheduleReadable(end) }
        case .writable(let end):
            end.writableScheduled = false
            guard !end.isReleased, end.wantsWrite, end.isReset || end.unread < window,
                let connection = end.connection
            else { return }
            connection.transportWritable()
            loopSchedule.markStale(connection.loop)
        case .flushHeld(let end):
            end.isFlushPending = false
            let waiting = end.held
            end.held = []
            for action in waiting { perform(action) }
        case .accept(let port):
            port.acceptScheduled = false
            acceptFromBacklog(port)
        case .resolved(let resolution, let answer):
            record(.resolve, "\(resolution.host)")
            resolution.complete(with: answer)
        case .scheduled(let action):
            runScheduled(action)
        }
    }

    /// Readiness for `end`'s connection, as an event of its own (never inside the caller).
    private func notifyReady(_ end: SimulatedLinkEnd) {
        if end.wantsRead && end.hasInputEvent { scheduleReadable(end) }
        if end.wantsWrite && (end.isReset || end.unread < window) { scheduleWritable(end) }
    }

    private func arrive(_ attempt: SimulatedConnectAttempt, ip: String, port: UInt16) {
        guard !attempt.isCancelled else { return }
        let server: SimulatedHost
        let destination: SimulatedDestination
        switch ip {
        case "127.0.0.1":
            (server, destination) = (attempt.host, .ipv4Loopback)
        case "::1":
            (server, destination) = (attempt.host, .ipv6Loopback)
        default:
            guard let host = hostsByAddress[ip] else {
                record(.drop, "attempt \(attempt.id): no host at \(ip)")
                return
            }
            (server, destination) = (host, .hostAddress)
        }
        switch server.incomingConnections {
        case .unanswered:
            record(.drop, "attempt \(attempt.id): \(server.name) does not answer")
            return
        case .refused:
            schedule(.refused(attempt), after: latency.draw(&random))
            return
        case .answered:
            break
        }
        guard let listening = server.ports[port], !listening.isClosed, listening.binding.answers(destination) else {
            schedule(.refused(attempt), after: latency.draw(&random))
            return
        }
        guard listening.backlog.count < listening.backlogLimit else {
            record(.drop, "attempt \(attempt.id): backlog of \(server.name):\(port) full")
            retransmitSyn(attempt, ip: ip, port: port)
            return
        }
        nextLinkID += 1
        let clientPort = attempt.host.ephemeralPort()
        let serverEnd = SimulatedLinkEnd(
            network: self, linkID: nextLinkID, host: server, localPort: port,
            remoteDescription: "\(attempt.host.address):\(clientPort)")
        let clientEnd = SimulatedLinkEnd(
            network: self, linkID: nextLinkID, host: attempt.host, localPort: clientPort,
            remoteDescription: "\(server.address):\(port)")
        serverEnd.peer = clientEnd
        clientEnd.peer = serverEnd
        links[nextLinkID] = (serverEnd, clientEnd)
        server.ends.append(serverEnd)
        attempt.host.ends.append(clientEnd)
        listening.backlog.append(serverEnd)
        record(.queued, "\(serverEnd.label) from \(attempt.host.name):\(clientPort)")
        scheduleInOrder(.established(attempt, clientEnd), from: serverEnd)
        scheduleAccept(listening)
    }

    private func acceptFromBacklog(_ port: SimulatedPort) {
        while port.isAccepting, !port.isClosed, !port.backlog.isEmpty, let listener = port.listener {
            if port.host.isOutOfDescriptors {
                failAccept(port, listener: listener)
                return
            }
            let end = port.backlog.removeFirst()
            record(.accept, end.label)
            runCallback(on: port.loop) { listener.acceptorAccepted(end) }
        }
    }
}

extension SimulatedNetwork {
    func record(_ kind: SimulationTraceEntry.Kind, _ detail: String) {
        let entry = SimulationTraceEntry(time: now, kind: kind, detail: detail)
        traceKept.append(entry)
        traceDigest.add(entry)
        traceObserver?(entry)
    }
}

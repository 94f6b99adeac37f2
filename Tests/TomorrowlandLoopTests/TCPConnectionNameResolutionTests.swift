import Dispatch
import Glibc
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("TCPConnection.connect resolves names off the loop")
struct TCPConnectionNameResolutionTests {
    /// A socket listening on 127.0.0.1 that never accepts: the kernel completes connects into its
    /// backlog, so no `TCPListener` (and no loop) is needed on the server side.
    private func rawListener() throws -> (fd: Int32, port: UInt16) {
        try rawListeningSocket(backlog: 16, nonBlocking: true)
    }

    /// Whether a connection waits in `fd`'s accept queue (accepted and closed if so).
    private func acceptsPendingConnection(_ fd: Int32) -> Bool {
        let client = accept(fd, nil, nil)
        guard client >= 0 else { return false }
        close(client)
        return true
    }

    /// A timer every 10 ms on the loop, counting its fires.
    private final class Ticker: Sendable {
        let loop: EventLoop
        private let fires = Atomic<Int>(0)
        let stopped = Atomic<Bool>(false)

        init(loop: EventLoop) { self.loop = loop }

        /// How many times the timer fired so far.
        var fireCount: Int { fires.load(ordering: .relaxed) }

        func scheduleNext() {
            _ = loop.schedule(after: .milliseconds(10)) { [self] in
                fires.add(1, ordering: .relaxed)
                if !stopped.load(ordering: .relaxed) { scheduleNext() }
            }
        }
    }

    /// A resolver that answers 127.0.0.1, from a Dispatch thread, once `ticker` fired `fires`
    /// more times after the question, or after `giveUpAfter` if it never does; records how many
    /// fires it saw meanwhile.
    private final class TickGatedNameResolver: NameResolver {
        let ticker: Ticker
        let fires: Int
        let giveUpAfter: Duration
        let asked = Locked<[String]>([])
        let firesDuringLookup = Locked<Int?>(nil)

        init(ticker: Ticker, fires: Int, giveUpAfter: Duration) {
            self.ticker = ticker
            self.fires = fires
            self.giveUpAfter = giveUpAfter
        }

        func resolve(_ resolution: NameResolution) {
            asked.withLock { $0.append(resolution.host) }
            let firedBefore = ticker.fireCount
            DispatchQueue.global().async { [self] in
                _ = waitUntil(timeout: giveUpAfter) { ticker.fireCount - firedBefore >= fires }
                firesDuringLookup.withLock { $0 = ticker.fireCount - firedBefore }
                let answer = TCPSocketAddress.literal(host: "127.0.0.1", port: resolution.port)
                resolution.complete(with: answer.map { .success($0) } ?? .failure(.addressResolutionFailed(host: "")))
            }
        }
    }

    @Test func theLoopsTimersKeepFiringWhileASlowNameResolves() throws {
        // The lookup answers only once the loop's timers fired while it waited: a loop blocked
        // on the lookup fires none, so the resolver gives up and reports no fires. Waiting for
        // the fires rather than measuring their lateness keeps a preempted loop thread (a loaded
        // machine, sanitizers) from looking like a blocked one.
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (fd, port) = try rawListener()
        defer { close(fd) }
        let ticker = Ticker(loop: loop)
        let slow = TickGatedNameResolver(ticker: ticker, fires: 20, giveUpAfter: .seconds(10))
        ticker.scheduleNext()
        let attempt = TCPConnection.connect(
            host: "slow.example", port: port, on: loop, timeout: .seconds(20), nameResolver: slow)
        let connection = try #require(drive(loop, until: attempt)?.value)
        ticker.stopped.store(true, ordering: .relaxed)
        defer { connection.close() }

        #expect(slow.asked.withLock { $0 } == ["slow.example"])
        #expect(connection.remoteDescription == "127.0.0.1:\(port)")
        let fires = try #require(slow.firesDuringLookup.withLock { $0 })
        #expect(fires >= 20, "the loop's timers fired \(fires) times while the name resolved")
    }

    @Test func aNameThatNeverResolvesTimesOutWithinTheConnectTimeout() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let silent = HeldNameResolver()
        let started = ContinuousClock.now
        let attempt = TCPConnection.connect(
            host: "silent.example", port: 80, on: loop, timeout: .milliseconds(200), nameResolver: silent)
        let result = drive(loop, until: attempt)
        let elapsed = ContinuousClock.now - started

        #expect(result?.error == .timedOut)
        #expect(elapsed >= .milliseconds(190))
        // Generous: by the connect timeout, not the drive's time limit, on a loaded machine too.
        #expect(elapsed < .seconds(10))
        let resolution = try #require(silent.resolutions.first)
        #expect(resolution.isAbandoned)
        #expect(loop.resources.isEmpty)
    }

    @Test func cancellingDuringResolutionCancelsPromptlyAndDropsTheLateAnswer() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (fd, port) = try rawListener()
        defer { close(fd) }
        let held = HeldNameResolver()
        let attempt = TCPConnection.connect(
            host: "held.example", port: port, on: loop, timeout: .seconds(60), nameResolver: held)
        #expect(drive(loop) { !held.resolutions.isEmpty })
        let resolution = try #require(held.resolutions.first)
        #expect(!resolution.isAbandoned)

        let cancelled = ContinuousClock.now
        attempt.requestCancel()
        let result = drive(loop, until: attempt)
        #expect(result?.isCancelled == true)
        // Generous for a loaded machine, and still far from the 60 s connect timeout.
        #expect(ContinuousClock.now - cancelled < .seconds(10))
        #expect(resolution.isAbandoned)
        #expect(loop.resources.isEmpty)

        // The answer arrives after all: discarded, and no connection is made with it.
        let answer = try #require(TCPSocketAddress.literal(host: "127.0.0.1", port: port))
        #expect(!resolution.complete(with: .success(answer)))
        _ = drive(loop, until: loop.sleep(for: .milliseconds(50)))
        #expect(!acceptsPendingConnection(fd))
        #expect(loop.resources.isEmpty)
    }

    @Test func literalAddressesNeverReachTheResolver() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let (fd, port) = try rawListener()
        defer { close(fd) }
        let held = HeldNameResolver()
        let connection = try #require(
            drive(
                loop,
                until: TCPConnection.connect(
                    host: "127.0.0.1", port: port, on: loop, timeout: .seconds(10), nameResolver: held))?.value)
        connection.close()
        // IPv6 literals, bare and bracketed: nothing listens on ::1 at that port, so refused, at
        // once (a resolver that never answers would have made these time out).
        for host in ["::1", "[::1]"] {
            let result = drive(
                loop,
                until: TCPConnection.connect(
                    host: host, port: port, on: loop, timeout: .seconds(10), nameResolver: held))
            #expect(result?.error == .connectFailed(errno: ECONNREFUSED), "\(host)")
        }
        #expect(held.resolutions.isEmpty)
    }

    @Test func shutdownDuringResolutionRejectsWithClosedAndDropsTheLateAnswer() throws {
        var loop: EventLoop? = EventLoop()
        weak let weakLoop = loop
        let held = HeldNameResolver()
        let attempt = TCPConnection.connect(
            host: "held.example", port: 80, on: loop!, timeout: .seconds(60), nameResolver: held)
        let resolution = try #require(held.resolutions.first)
        loop!.shutdown()
        loop = nil

        #expect(attempt.result?.error == .closed)
        #expect(resolution.isAbandoned)
        // Nothing keeps the dead loop alive (the answer handler was released), and the late
        // answer goes nowhere.
        #expect(weakLoop == nil)
        let answer = try #require(TCPSocketAddress.literal(host: "127.0.0.1", port: 80))
        #expect(!resolution.complete(with: .success(answer)))
    }

    @Test func shutdownOfARunningLoopDuringResolutionRejectsWithClosed() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let held = HeldNameResolver()
        let attempt = TCPConnection.connect(
            host: "held.example", port: 80, on: loop, timeout: .seconds(60), nameResolver: held)
        let asked = ContinuousClock.now
        while held.resolutions.isEmpty && ContinuousClock.now - asked < .seconds(10) { sched_yield() }
        let resolution = try #require(held.resolutions.first)
        loop.shutdown()
        #expect(thread.join())

        #expect(blockingResult(of: attempt)?.error == .closed)
        #expect(resolution.isAbandoned)
        let answer = try #require(TCPSocketAddress.literal(host: "127.0.0.1", port: 80))
        #expect(!resolution.complete(with: .success(answer)))
    }

    @Test func aResolverFailureRejectsTheConnect() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let held = HeldNameResolver()
        let attempt = TCPConnection.connect(
            host: "held.example", port: 80, on: loop, timeout: .seconds(60), nameResolver: held)
        let resolution = try #require(held.resolutions.first)
        #expect(resolution.complete(with: .failure(.addressResolutionFailed(host: "held.example"))))
        #expect(drive(loop, until: attempt)?.error == .addressResolutionFailed(host: "held.example"))
        #expect(loop.resources.isEmpty)
    }
}

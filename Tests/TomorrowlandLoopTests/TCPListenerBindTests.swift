import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

@Suite("TCPListener.bind, the any-thread promise form")
struct TCPListenerBindTests {
    @Test func bindingFromEightThreadsOnARunningGroupAlwaysGivesAnAcceptingListener() {
        let group = EventLoopGroup(loopCount: 4)
        defer { group.syncShutdownGracefully() }
        let failures = Recorder<String>()
        let listeners = Recorder<TCPListener>()
        let sampled = Atomic<Int>(0)
        // 8 threads × 125 binds: 1,000 listeners, every 25th checked by a real connection (the
        // handler closes it, so the client sees end of input).
        runConcurrently(8) { thread in
            for index in 0..<125 {
                let loop = group.next()
                let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { connection in
                    if !loop.inEventLoop { failures.record("accepted off the loop's thread") }
                    connection.close()
                }
                guard case .value(let listener)? = blockingResult(of: bound) else {
                    failures.record("bind \(thread).\(index): \(String(describing: bound.result))")
                    continue
                }
                if listener.loop !== loop || listener.localPort == 0 || listener.isClosed {
                    failures.record("bind \(thread).\(index): a listener in the wrong state")
                }
                if index % 25 == 0 {
                    sampled.add(1, ordering: .relaxed)
                    switch BlockingTCPClient.connect(port: listener.localPort) {
                    case .success(let client):
                        let (bytes, end) = client.readToEnd()
                        if !bytes.isEmpty || end != .endOfInput {
                            failures.record("client \(thread).\(index): \(bytes.count) bytes, \(end)")
                        }
                    case .failure(let error):
                        failures.record("client \(thread).\(index): connect failed, errno \(error.errno)")
                    }
                }
                listener.close()
                listeners.record(listener)
            }
        }
        #expect(failures.values == [])
        #expect(listeners.values.count == 1000)
        let sampledCount = sampled.load(ordering: .relaxed)
        #expect(sampledCount == 40)
        #expect(listeners.values.allSatisfy { $0.isClosed })
        // Every close has reached its loop: a round trip through each loop comes after them.
        for loop in group.loops {
            #expect(
                blockingResult(of: Promise<Bool, NoError>(on: .loop(loop)) { $0.fulfill(with: true) })?.value == true)
        }
        // The sockets are closed: each port accepts no connection.
        for listener in listeners.values.prefix(20) {
            if case .success = BlockingTCPClient.connect(port: listener.localPort) {
                Issue.record("port \(listener.localPort) still accepts after close()")
            }
        }
    }

    @Test func bindingOnAShutDownLoopRejectsWithClosed() {
        let loop = EventLoop()
        loop.shutdown()
        let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { _ in }
        #expect(bound.result?.error == .closed)
    }

    @Test func listeningOnAShutDownLoopThrowsClosed() {
        let loop = EventLoop()
        loop.shutdown()
        #expect(throws: TCPError.closed) {
            try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        }
    }

    /// In a child process, where a crash is the failure: binds racing with a shutdown from
    /// another thread, on a loop that a thread drives and on one that none does. Each promise
    /// settles once, with a listener that the shutdown closed, or with `.closed`.
    @Test func bindingWhileTheLoopShutsDownSettlesEveryPromiseAndNeverCrashes() async {
        let outcome = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            for iteration in 0..<400 {
                let loop = EventLoop()
                let driver = iteration.isMultiple(of: 2) ? LoopThread(loop) : nil
                // `run()` must have claimed the loop before the race: a `run()` that starts while
                // another thread holds the loop for a moment is a precondition failure of its own.
                if let driver, !driver.waitUntilRunning() { exit(1) }
                let settled = Atomic<Int>(0)
                let promises = Recorder<Promise<TCPListener, TCPError>>()
                runConcurrently(3) { index in
                    if index == 0 {
                        loop.shutdown()
                        return
                    }
                    let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { $0.close() }
                    bound.tap(on: .immediate) { _ in settled.add(1, ordering: .relaxed) }
                    promises.record(bound)
                }
                if let driver, !driver.join() { exit(2) }
                for bound in promises.values {
                    switch blockingResult(of: bound, timeout: .seconds(10)) {
                    case .value(let listener)?: if !listener.isClosed { exit(3) }
                    case .error(.closed)?: break
                    default: exit(4)
                    }
                }
                guard settled.load(ordering: .relaxed) == 2, loop.isShutdownComplete else { exit(5) }
            }
        }
        let message = String(decoding: outcome?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.isEmpty)
    }

    @Test func bindingOnTheLoopsThreadBindsBeforeReturning() {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let checked = Promise<Bool, NoError>(on: .loop(loop)) { resolver in
            let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { _ in }
            resolver.fulfill(with: bound.result?.value?.isClosed == false)
        }
        #expect(loop.run(until: checked).value == true)
    }

    @Test func bindingWhileNoThreadDrivesTheLoopBindsBeforeReturning() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { _ in }
        let listener = try #require(bound.result?.value)
        #expect(listener.localPort != 0)
        #expect(listener.loop === loop)
    }

    @Test func bindingReportsAddressAndBindErrors() throws {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let unresolvable = TCPListener.bind(host: "not an address", port: 0, on: loop) { _ in }
        #expect(unresolvable.result?.error == .addressResolutionFailed(host: "not an address"))
        let first = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { _ in }
        let second = TCPListener.bind(host: "127.0.0.1", port: first.localPort, on: loop) { _ in }
        #expect(second.result?.error == .bindFailed(errno: EADDRINUSE))
    }

    @Test func bindingFromAnotherThreadWhileTheLoopRunsResolvesOnTheLoopsThread() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        // The loop is busy until the test lets it go: the bind waits in its queue meanwhile.
        let release = DispatchSemaphore(value: 0)
        loop.execute { release.wait() }
        let onLoop = Atomic<Bool>(false)
        let bound = TCPListener.bind(host: "127.0.0.1", port: 0, on: loop) { _ in }
        bound.tap(on: .immediate) { _ in onLoop.store(loop.inEventLoop, ordering: .relaxed) }
        #expect(bound.result == nil)
        release.signal()
        let listener = try #require(blockingResult(of: bound)?.value)
        let resolvedOnLoop = onLoop.load(ordering: .relaxed)
        #expect(resolvedOnLoop)
        #expect(!listener.isClosed)
        loop.shutdown()
        #expect(thread.join())
        #expect(listener.isClosed)
    }

    @Test("listen from another thread while the loop runs binds on the loop and returns the listener")
    func listeningFromAnotherThreadWhileTheLoopRunsBindsOnTheLoop() throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let acceptedOnLoop = Locked<Bool?>(nil)
        let listener = try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop) { connection in
            acceptedOnLoop.value = loop.inEventLoop
            connection.close()
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = listener.localPort.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        #expect(waitUntil { acceptedOnLoop.value != nil })
        #expect(acceptedOnLoop.value == true)
        close(client)
        listener.close()
        loop.shutdown()
        #expect(thread.join())
    }
}

import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The generous bound on real-time TCP tests: a test whose promise is still unresolved after this
/// long fails instead of hanging.
let tcpTestTimeLimit: Duration = .seconds(30)

/// Drives `loop` until `promise` resolves or ``tcpTestTimeLimit`` passes; returns the result, nil
/// on the time limit (recorded as a test failure).
func drive<Value, Failure>(
    _ loop: EventLoop, until promise: Promise<Value, Failure>,
    sourceLocation: SourceLocation = #_sourceLocation
) -> PromiseResult<Value, Failure>? {
    let (done, resolver) = Promise<Bool, NoError>.makeWithResolver()
    promise.tap(on: .immediate) { _ in resolver.fulfill(with: true) }
    let watchdog = loop.schedule(after: tcpTestTimeLimit) { resolver.fulfill(with: false) }
    let finished = loop.run(until: done).value ?? false
    watchdog.cancel()
    #expect(finished, "the promise did not resolve within \(tcpTestTimeLimit)", sourceLocation: sourceLocation)
    return finished ? promise.result : nil
}

/// Drives `loop` until `condition` (checked on the loop after each tick's work) holds or the time
/// limit passes; returns whether it held.
func drive(_ loop: EventLoop, until condition: @escaping @Sendable () -> Bool) -> Bool {
    let (done, resolver) = Promise<Bool, NoError>.makeWithResolver()
    let poll = Poller(condition: condition, resolver: resolver, loop: loop)
    poll.check()
    let watchdog = loop.schedule(after: tcpTestTimeLimit) { resolver.fulfill(with: false) }
    let result = loop.run(until: done).value ?? false
    watchdog.cancel()
    poll.stop()
    return result
}

/// Checks a condition every millisecond on the loop's timers.
private final class Poller: Sendable {
    let condition: @Sendable () -> Bool
    let resolver: Promise<Bool, NoError>.Resolver
    let loop: EventLoop
    let stopped = Atomic<Bool>(false)

    init(condition: @escaping @Sendable () -> Bool, resolver: Promise<Bool, NoError>.Resolver, loop: EventLoop) {
        self.condition = condition
        self.resolver = resolver
        self.loop = loop
    }

    func check() {
        if stopped.load(ordering: .relaxed) { return }
        if condition() {
            resolver.fulfill(with: true)
            return
        }
        _ = loop.schedule(after: .milliseconds(1)) { [self] in check() }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }
}

/// Raises this process's soft limit on open descriptors to `wanted`, or to the hard limit if that
/// is lower (never lowers it); returns the soft limit now in force.
///
/// The whole test process shares the limit; raising it only lets other tests open more.
func raiseDescriptorLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    let target = min(rlim_t(wanted), limit.rlim_max)
    if limit.rlim_cur < target {
        limit.rlim_cur = target
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return Int(clamping: limit.rlim_cur)
}

/// Starts an echo server on 127.0.0.1, port 0: each connection streams its input back.
func startEchoServer(on loop: EventLoop, options: TCPListenerOptions = .init()) throws(TCPError) -> TCPListener {
    try TCPListener.listen(host: "127.0.0.1", port: 0, on: loop, options: options) { connection in
        connection.startReading { bytes in
            connection.enqueue(bytes)
            return bytes.count
        }
    }
}

/// From the test's own thread, while another thread runs `loop`: starts an echo server on the
/// loop and connects a client to it, blocking until both are done; nil if either failed.
func connectToEchoServer(onRunning loop: EventLoop) -> TCPConnection? {
    let serverReady = Promise<UInt16, TCPError>(on: .loop(loop)) { resolver in
        resolver.resolve(with: Result { () throws(TCPError) in try startEchoServer(on: loop).localPort })
    }
    guard let port = blockingResult(of: serverReady)?.value else { return nil }
    let connected = TCPConnection.connect(host: "127.0.0.1", port: port, on: loop, timeout: .seconds(10))
    return blockingResult(of: connected)?.value
}

/// Reads from `connection` until end of input, accumulating everything.
func readToEnd(_ connection: TCPConnection, into collected: [UInt8] = []) -> Promise<[UInt8], TCPError> {
    connection.read(maxBytes: 1 << 20).flatMap(on: .immediate) { bytes in
        if bytes.isEmpty { return Promise(fulfilled: collected) }
        return readToEnd(connection, into: collected + bytes)
    }
}

/// Reads from `connection` until `count` bytes arrived, accumulating them.
func readCount(_ connection: TCPConnection, _ count: Int) -> Promise<[UInt8], TCPError> {
    connection.read(exactly: count)
}

/// A deterministic byte pattern of `count` bytes.
func pattern(_ count: Int, seed: Int = 7) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &+ $0 >> 8) }
}

/// `chunk` repeated `count` times, built with block copies: element-wise construction and
/// comparison of megabytes take seconds in debug and sanitizer builds.
func repeated(_ chunk: [UInt8], count: Int) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: chunk.count * count) { buffer, initialized in
        let destination = UnsafeMutableRawBufferPointer(buffer)
        chunk.withUnsafeBytes { source in
            for index in 0..<count {
                (destination.baseAddress! + index * chunk.count)
                    .copyMemory(from: source.baseAddress!, byteCount: chunk.count)
            }
        }
        initialized = chunk.count * count
    }
}

/// Whether `received` is exactly `parts` one after the other, compared with `memcmp` (see
/// ``repeated(_:count:)``).
func isConcatenation(_ received: [UInt8]?, of parts: [UInt8]...) -> Bool {
    guard let received, received.count == parts.reduce(0, { $0 + $1.count }) else { return false }
    return received.withUnsafeBytes { all in
        var offset = 0
        for part in parts {
            let same = part.withUnsafeBytes { memcmp(all.baseAddress! + offset, $0.baseAddress!, part.count) == 0 }
            guard same else { return false }
            offset += part.count
        }
        return true
    }
}

/// Holds values set on the loop's thread and read by the test after the loop returned.
final class LoopBox<Value>: @unchecked Sendable {
    // `@unchecked`: written on the loop's thread while the test thread drives the loop (the same
    // thread), read by the test after `run(until:)` returned.
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A raw socket listening on 127.0.0.1 (a port the kernel picks) that nothing accepts from, for
/// connects that must stay in the kernel's backlog. Close-on-exec, so that exit tests' child
/// processes do not keep it.
func rawListeningSocket(backlog: Int32, nonBlocking: Bool = false) throws -> (fd: Int32, port: UInt16) {
    var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
    let fd = socket(AF_INET, type, 0)
    try #require(fd >= 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    try #require(bound == 0 && listen(fd, backlog) == 0)
    let port = try #require(TCPSocketAddress.local(of: fd)).port
    return (fd, port)
}

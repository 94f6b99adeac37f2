#if ServiceLifecycle
    import Dispatch
    import Tomorrowland
    import TomorrowlandTestSupport

    #if canImport(Glibc)
        import Glibc
    #endif

    /// A blocking client socket to 127.0.0.1, for tests' own threads (never a loop's, except to
    /// see a connect refused).
    final class BlockingClient: Sendable {
        let fd: Int32

        private init(fd: Int32) {
            self.fd = fd
        }

        deinit {
            close(fd)
        }

        /// Connects to 127.0.0.1:`port`, with `receiveBuffer` bytes of receive buffer if given;
        /// nil if the connect failed (refused).
        static func connect(port: UInt16, receiveBuffer: Int32? = nil) -> BlockingClient? {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return nil }
            let client = BlockingClient(fd: fd)
            if var size = receiveBuffer {
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var limit = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            return status == 0 ? client : nil
        }

        /// Sends `bytes`, then reads until as many bytes came back (or the peer closed, or the
        /// 20 s read timeout); what came back.
        func sendAndReceive(_ bytes: [UInt8]) -> [UInt8] {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == bytes.count else { return [] }
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while received.count < bytes.count {
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                received += chunk[0..<count]
            }
            return received
        }

        /// Reads until the peer closes (true) or an error or the 20 s read timeout (false);
        /// returns the byte count.
        func readToEnd() -> (count: Int, closedByPeer: Bool) {
            var total = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    total += count
                } else if count == 0 {
                    return (total, true)
                } else if errno != EINTR {
                    return (total, false)
                }
            }
        }
    }

    /// The calling thread's name as the kernel has it (what `top -H` and debuggers show).
    func currentThreadName() -> String {
        let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: bytes[0..<count], as: UTF8.self).trimmingSuffixNewline()
    }

    extension String {
        fileprivate func trimmingSuffixNewline() -> String {
            hasSuffix("\n") ? String(dropLast()) : self
        }
    }

    /// Runs `body` on a Dispatch thread (it blocks) and returns its result without blocking a
    /// Swift Concurrency thread.
    func onBlockingThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }

    /// Waits for `promise` without blocking a thread; its result.
    func settled<Value: Sendable, Failure: Sendable>(
        _ promise: Promise<Value, Failure>
    ) async -> PromiseResult<Value, Failure> {
        await withCheckedContinuation { continuation in
            promise.tap(on: .immediate) { continuation.resume(returning: $0) }
        }
    }
#endif

#if ServiceLifecycle
    /// A flag set once from any thread and awaited by one task.
    final class OneShotFlag: Sendable {
        private let result = OneShotResult<Void>()

        func set() {
            result.set(())
        }

        func wait() async {
            await result.value
        }
    }

    /// A value set once from any thread and awaited by one task.
    final class OneShotResult<Value: Sendable>: Sendable {
        private enum State {
            case empty(waiter: CheckedContinuation<Value, Never>?)
            case set(Value)
        }

        private let state = Locked<State>(.empty(waiter: nil))

        func set(_ value: Value) {
            let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
                guard case .empty(let waiter) = state else { return nil }
                state = .set(value)
                return waiter
            }
            waiter?.resume(returning: value)
        }

        var value: Value {
            get async {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> Value? in
                        switch state {
                        case .set(let value): return value
                        case .empty:
                            state = .empty(waiter: continuation)
                            return nil
                        }
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            }
        }
    }
#endif

import TomorrowlandLoop

/// One end of a TCP connection between two simulated hosts: the ``TCPTransport`` under a
/// `TCPConnection` on the simulation.
///
/// Bytes an end sends travel to its peer as segments, each delayed by a latency drawn from the
/// network's distribution and delivered in order. The sender may have at most the network's
/// window of bytes that its peer has not read yet (in flight or buffered there), so a peer that
/// stops reading stalls the sender, whose `TCPConnection` then buffers and reports
/// `isWritable == false`: backpressure as over a real socket. Reads and writes take a random
/// part of what they could (down to one byte), as short reads and writes do on real sockets.
final class SimulatedLinkEnd: TCPTransport {
    unowned let network: SimulatedNetwork
    /// The connection's number in the trace; both ends share it.
    let linkID: Int
    let host: SimulatedHost
    /// The other end; set once both exist. Strong, a cycle on purpose: the network's link table
    /// breaks it once both ends are released (or when the network goes), so that a peer never
    /// disappears while a segment may still need it, and no end has a weak reference's side
    /// table (which makes every retain and release of it slow).
    var peer: SimulatedLinkEnd?
    /// The connection this end carries, once attached (it owns the end).
    weak var connection: TCPConnection?

    let localPort: UInt16
    let remoteDescription: String
    /// "10.0.0.1:49152 (#3)": for the trace.
    var label: String { "#\(linkID) \(host.name):\(localPort)" }

    // Input
    /// Received, unread bytes from ``receivedHead`` on.
    var received: [UInt8] = []
    var receivedHead = 0
    /// The peer's end of output arrived, after all its bytes.
    var peerEndedOutput = false
    /// The connection was reset: writes fail at once; reads fail once the bytes received
    /// before the reset are read, as a kernel keeps them.
    var isReset = false

    // Output
    /// Bytes sent and not yet read by the peer (in flight or in its buffer): bounded by the
    /// network's window.
    var unread = 0
    /// When the last segment this end sent arrives: later segments never arrive before it.
    var lastArrival: UInt64 = 0
    var outputEnded = false
    /// Released by its connection (or by a crash): nothing reaches the connection any more.
    var isReleased = false
    /// Segments to this end that a partition held, in the order they were sent (see
    /// `SimulatedNetwork.heal()`).
    var held: [SimulationEvent.Action] = []
    /// Whether a heal scheduled the flush of ``held``.
    var isFlushPending = false

    var wantsRead = false
    var wantsWrite = false
    /// Whether a readiness event for this end is already queued in the network.
    var readableScheduled = false
    var writableScheduled = false

    init(network: SimulatedNetwork, linkID: Int, host: SimulatedHost, localPort: UInt16, remoteDescription: String) {
        self.network = network
        self.linkID = linkID
        self.host = host
        self.localPort = localPort
        self.remoteDescription = remoteDescription
    }

    var unreadCount: Int { received.count - receivedHead }

    /// Whether a read would find something: bytes, end of input, or the reset.
    var hasInputEvent: Bool { unreadCount > 0 || peerEndedOutput || isReset }

    func attach(to connection: TCPConnection) {
        self.connection = connection
    }

    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TCPTransportReceive {
        let available = min(buffer.count, unreadCount)
        guard available > 0 else {
            // The kernel's order: the bytes received before a reset, then end of input if the
            // peer's end came first (it stays the answer), else the reset.
            if peerEndedOutput { return .endOfInput }
            return isReset ? .failed(.connectionReset) : .wouldBlock
        }
        let count = network.splitPoint(of: available)
        // Raw copy in bounds: `splitPoint(of:)` answers 1...available, and `available` is at most
        // both `buffer.count` and `unreadCount` (the bytes from `receivedHead` to the end).
        received.withUnsafeBytes { bytes in
            buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + receivedHead, byteCount: count)
        }
        receivedHead += count
        network.receiveObserver?(host, remoteDescription, UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        if receivedHead == received.count {
            received.removeAll(keepingCapacity: true)
            receivedHead = 0
        } else if receivedHead > 64 * 1024 {
            received.removeFirst(receivedHead)
            receivedHead = 0
        }
        // The window opens again at the sender once it hears of the read (a reset sender has
        // no window left to open).
        if let peer, !isReset { network.sendWindowUpdate(from: self, to: peer, count: count) }
        return .received(count)
    }

    func send(_ bytes: UnsafeRawBufferPointer) -> TCPTransportSend {
        if isReset { return .failed(.connectionReset) }
        guard let peer, !outputEnded else { return .failed(.connectionReset) }
        let room = network.window - unread
        guard room > 0 else { return .wouldBlock }
        let count = network.splitPoint(of: min(room, bytes.count))
        unread += count
        network.sendData(Array(bytes[..<count]), from: self, to: peer)
        return .sent(count)
    }

    func setReadInterest(_ wanted: Bool) {
        wantsRead = wanted
        if wanted && hasInputEvent { network.scheduleReadable(self) }
    }

    func setWriteInterest(_ wanted: Bool) {
        wantsWrite = wanted
        if wanted && (isReset || unread < network.window) { network.scheduleWritable(self) }
    }

    func shutdownOutput() {
        guard !outputEnded, !isReset, let peer else { return }
        outputEnded = true
        network.sendEndOfOutput(from: self, to: peer)
    }

    func close() {
        guard !isReleased else { return }
        network.release(self)
    }
}

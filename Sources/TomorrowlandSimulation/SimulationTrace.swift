/// One thing that happened in a simulated run, in the order it happened.
public struct SimulationTraceEntry: Sendable, Hashable, CustomStringConvertible {
    /// What kind of thing happened.
    public enum Kind: String, Sendable, Hashable {
        /// A loop of a host ran a turn (the work that was ready and the timers that were due).
        case turn
        /// A connection attempt left a host.
        case connect
        /// A listening port queued an incoming connection in its backlog.
        case queued
        /// A listener took a connection from its backlog.
        case accept
        /// A connection attempt completed on the connecting side.
        case established
        /// A connection attempt was refused (`ECONNREFUSED`).
        case refused
        /// Bytes arrived at one end of a connection.
        case deliver
        /// One end ended its output (half-close or close).
        case endOfOutput
        /// An end was released by its connection.
        case close
        /// A connection was reset.
        case reset
        /// A segment was dropped (no such host, a host that does not answer, a full backlog...).
        case drop
        /// A name was resolved.
        case resolve
        /// A listener bound a port.
        case bind
        /// A fault was injected by hand or by the seed (partition, heal, crash...).
        case fault
        /// A crashed host restarted with fresh loops (``SimulatedNetwork/restart(_:)``).
        case restart
        /// An accept failed (`EMFILE`: the host is out of descriptors); the connection stays in
        /// the backlog.
        case acceptFailed
        /// An action scheduled on the network's clock ran (``SimulatedNetwork/schedule(at:named:_:)``).
        case action
    }

    /// When, on the simulation's clock (since the network was created).
    public let time: Duration
    /// What happened.
    public let kind: Kind
    /// The details: hosts, connection numbers, byte counts.
    public let detail: String

    /// One line: the time in nanoseconds, the kind, the details.
    public var description: String {
        "\(time.simulationNanoseconds) \(kind.rawValue) \(detail)"
    }
}

/// FNV-1a, 64 bits, over the trace's lines: written here rather than `Hasher`, which Swift seeds
/// per process, so that the same run gives the same digest in any process.
struct TraceDigest {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ line: String) {
        for byte in line.utf8 { mix(byte) }
        mix(0x0A)
    }

    /// Adds `entry`'s line, as ``add(_:)`` of its `description` does, without making the string.
    mutating func add(_ entry: SimulationTraceEntry) {
        var nanoseconds = entry.time.simulationNanoseconds
        // The decimal digits, most significant first (a UInt64 has at most 20).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var count = 0
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(nanoseconds % 10)
                nanoseconds /= 10
                count += 1
            } while nanoseconds > 0
            while count > 0 {
                count -= 1
                mix(digits[count])
            }
        }
        mix(UInt8(ascii: " "))
        for byte in entry.kind.rawValue.utf8 { mix(byte) }
        mix(UInt8(ascii: " "))
        for byte in entry.detail.utf8 { mix(byte) }
        mix(0x0A)
    }

    private mutating func mix(_ byte: UInt8) {
        value ^= UInt64(byte)
        value &*= 0x0000_0100_0000_01B3
    }
}

import Synchronization

/// The clock of a simulation: nanoseconds since it began, moved only by the simulation; every
/// loop of the simulation reads the same one.
///
/// A final class, not a protocol requirement: a libevent loop's tick tests one stored optional
/// for nil and has no opaque call on its path.
package final class VirtualClock: Sendable {
    private let time = Atomic<UInt64>(0)

    package init() {}

    /// The current virtual time; readable from any thread.
    package var nanoseconds: UInt64 {
        time.load(ordering: .relaxed)
    }

    /// Moves the clock to `nanoseconds`; never backwards. For the simulation's thread.
    package func advance(to nanoseconds: UInt64) {
        if nanoseconds > time.load(ordering: .relaxed) { time.store(nanoseconds, ordering: .relaxed) }
    }
}

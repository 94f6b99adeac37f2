import Synchronization

/// The clock of a simulation: nanoseconds since it began, moved only by the simulation; every
/// loop of the simulation reads the same one.
///
/// Shared by the network and every host loop's ``SimulatedLoopBackend``, which reads it from
/// any thread.
final class VirtualClock: Sendable {
    private let time = Atomic<UInt64>(0)

    init() {}

    /// The current virtual time; readable from any thread.
    var nanoseconds: UInt64 {
        time.load(ordering: .relaxed)
    }

    /// Moves the clock to `nanoseconds`; never backwards. For the simulation's thread.
    func advance(to nanoseconds: UInt64) {
        if nanoseconds > time.load(ordering: .relaxed) { time.store(nanoseconds, ordering: .relaxed) }
    }
}

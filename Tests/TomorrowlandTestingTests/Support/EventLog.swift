import Tomorrowland
import Synchronization

/// Records labels in the order work runs; safe from any thread.
final class EventLog: Sendable {
    private let storage = LockedValue<[String]>([])

    var events: [String] { storage.withLock { $0 } }

    func record(_ event: String) {
        storage.withLock { $0.append(event) }
    }
}

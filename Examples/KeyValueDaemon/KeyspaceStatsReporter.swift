import KeyValueCore
import Logging
import Tomorrowland
import TomorrowlandLoop

/// Logs the keyspace's size every `interval`, like Redis's periodic "DB 0: N keys (M volatile)"
/// line (`loopkv --stats-interval`).
///
/// Counting takes every shard's lock in turn, the locks the loops' clients take for each command,
/// so it runs on a Dispatch queue and never on a loop; the figures come back to `loop` through a
/// promise, and the line is logged there, where the next count is scheduled. The timer and that
/// promise are aimed at `loop`: when the loop shuts down, the pending timer is released and a
/// count still running on Dispatch ends up cancelled on arrival, so the reporting just stops.
final class KeyspaceStatsReporter: Sendable {
    private struct Counts: Sendable {
        var keys: Int
        var volatile: Int
    }

    private let store: ShardedStore
    private let loop: EventLoop
    private let interval: Duration
    private let logger: Logger

    /// A reporter for `store` whose timer and log line run on `loop`; call ``start()``.
    init(store: ShardedStore, loop: EventLoop, interval: Duration, logger: Logger) {
        self.store = store
        self.loop = loop
        self.interval = interval
        self.logger = logger
    }

    /// Schedules the first count, one `interval` from now. Safe from any thread.
    func start() {
        _ = loop.schedule(after: interval) { [self] in
            _ = Promise<Counts, Never>(on: .utility) { [store] resolver in
                resolver.fulfill(with: Counts(keys: store.count, volatile: store.pendingExpiryCount))
            }
            .then(on: .loop(loop)) { [self] counts in
                logger.info("keyspace: \(counts.keys) keys (\(counts.volatile) volatile)")
                start()
            }
        }
    }
}

#if NIO
    import NIOCore
    import Tomorrowland

    /// The process-wide table of ``NIOEventLoopExecutor``s, one per NIO loop, keyed by the loop's
    /// identity.
    ///
    /// An entry dies with its loop: the executor refers to the loop weakly, a lookup that finds an
    /// executor whose loop is gone (its address reused by a new loop) replaces it, and an insertion
    /// that doubles the table sweeps the dead entries out first, so the table stays proportional to
    /// the loops alive.
    ///
    /// Behind the library's lock for state (`LockedValue`), not the promise core's spin lock: an
    /// insertion can sweep the whole dictionary, far beyond the few dozen instructions a spin
    /// lock's waiter may burn waiting for, and a lookup is not on a promise's path (a context made
    /// with `.nio(loop)` keeps the executor).
    final class NIOEventLoopExecutorTable: Sendable {
        static let shared = NIOEventLoopExecutorTable()

        private struct State {
            var executors: [ObjectIdentifier: NIOEventLoopExecutor] = [:]
            /// The table's size at which the next insertion sweeps dead entries.
            var sweepAt = 16
        }

        private let state = LockedValue(State())

        /// The executor for `eventLoop`, allocated on first use.
        func executor(for eventLoop: any EventLoop) -> NIOEventLoopExecutor {
            let id = ObjectIdentifier(eventLoop)
            // Loading the weak reference under the lock cannot run a deinitializer: if it is the
            // caller's loop, the caller holds it; if it is a dead loop, the load gives nil.
            let found = state.withLock { $0.executors[id] }
            if let found, found.eventLoop === eventLoop {
                return found
            }
            let created = NIOEventLoopExecutor(eventLoop)
            let (result, released) = state.withLock { state -> (NIOEventLoopExecutor, [NIOEventLoopExecutor]) in
                if let raced = state.executors[id], raced.eventLoop === eventLoop { return (raced, []) }
                var released: [NIOEventLoopExecutor] = []
                if let stale = state.executors.updateValue(created, forKey: id) { released.append(stale) }
                if state.executors.count >= state.sweepAt {
                    for (key, executor) in state.executors where executor.eventLoop == nil {
                        released.append(state.executors.removeValue(forKey: key)!)
                    }
                    state.sweepAt = max(16, state.executors.count * 2)
                }
                return (created, released)
            }
            // Executors are released here, outside the lock.
            _ = released
            return result
        }

        /// The number of entries, dead or alive (for tests).
        var count: Int {
            state.withLock { $0.executors.count }
        }
    }
#endif

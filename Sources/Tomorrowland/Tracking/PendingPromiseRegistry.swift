import CTomorrowlandSupport

/// The root promises the tracking recorded and that are still alive, with their records.
///
/// Holds each box unretained: a tracked box (``TrackedResultBox``) removes itself in its deinit,
/// under this registry's lock, before its memory can go. So while the lock is held every box
/// here is valid memory (possibly in its deinit, waiting for the lock: it is read, never
/// retained).
final class PendingPromiseRegistry: Sendable {
    static let shared = PendingPromiseRegistry()

    /// A recorded promise (internal for the size test).
    struct Entry {
        let box: Unmanaged<PromiseCore>
        let record: PromiseCreationRecord
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var nextSequence: UInt64 = 0
    }

    private let state = LockedValue(State())

    /// Records `box`, made just now, with the record `makeRecord` builds from the next sequence number.
    func add(_ box: PromiseCore, record makeRecord: (UInt64) -> PromiseCreationRecord) {
        state.withLock { state in
            let record = makeRecord(state.nextSequence)
            state.nextSequence &+= 1
            state.entries[ObjectIdentifier(box)] = Entry(box: .passUnretained(box), record: record)
        }
    }

    /// Forgets `box`, from its deinit; returns its record.
    func remove(_ box: PromiseCore) -> PromiseCreationRecord? {
        state.withLock { state in state.entries.removeValue(forKey: ObjectIdentifier(box))?.record }
    }

    /// The recorded promises still pending that `include` selects, oldest first.
    func pending(where include: (PromiseCreationRecord) -> Bool) -> [PendingPromise] {
        let now = ContinuousClock.now
        let found = state.withLock { state -> [(PromiseCreationRecord, Bool)] in
            state.entries.values.compactMap { entry -> (PromiseCreationRecord, Bool)? in
                guard include(entry.record) else { return nil }
                // Read, not retained: see the type's comment.
                let status = entry.box._withUnsafeGuaranteedRef { box in box.lock.withLock { box.status } }
                switch status {
                case .pending: return (entry.record, false)
                case .cancelRequested: return (entry.record, true)
                case .delayed, .resolved: return nil
                }
            }
        }
        return
            found
            .sorted { $0.0.sequence < $1.0.sequence }
            .map { record, isCancelRequested in record.pendingPromise(isCancelRequested: isCancelRequested, now: now) }
    }
}

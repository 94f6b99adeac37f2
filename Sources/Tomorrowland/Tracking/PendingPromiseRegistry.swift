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
                return Self.pendingState(of: entry).map { isCancelRequested in (entry.record, isCancelRequested) }
            }
        }
        return
            found
            .sorted { $0.0.sequence < $1.0.sequence }
            .map { record, isCancelRequested in record.pendingPromise(isCancelRequested: isCancelRequested, now: now) }
    }

    /// How many recorded promises are still pending and when the oldest of them was made: what
    /// `pending(where:)` finds with every record included, counted under the lock without
    /// copying, sorting or describing a record.
    func pendingSummary() -> (count: Int, oldestCreatedAt: ContinuousClock.Instant?) {
        state.withLock { state in
            var count = 0
            var oldest: ContinuousClock.Instant?
            for entry in state.entries.values where Self.pendingState(of: entry) != nil {
                count += 1
                if let made = oldest, made <= entry.record.createdAt { continue }
                oldest = entry.record.createdAt
            }
            return (count, oldest)
        }
    }

    /// Whether `entry`'s promise is pending: nil if not, else whether cancellation was requested.
    /// Under the registry's lock only.
    private static func pendingState(of entry: Entry) -> Bool? {
        // Read, never retained: see the type's comment. Not even for a moment: a closure that
        // captured `box` (`box.lock.withLock { box.status }`) retained and released it, and if
        // the box's last owner let go in between, that release made this thread the one to run
        // its deinit, under this registry's lock, which the deinit takes: a deadlock. Without a
        // retain, the last owner's release runs the deinit on its own thread, where it waits
        // for the lock.
        let status = entry.box._withUnsafeGuaranteedRef { box -> PromiseCore.Status in
            box.lock.lock()
            defer { box.lock.unlock() }
            return box.status
        }
        switch status {
        case .pending: return false
        case .cancelRequested: return true
        case .delayed, .resolved: return nil
        }
    }
}

import Dispatch
import Synchronization
import Tomorrowland
import TomorrowlandTestSupport

/// A tiny ``PromiseExecutor`` backed by a serial `DispatchQueue`, for testing the
/// `.executor(_:)` context: it counts what it is given and tags its queue so a callback can
/// tell it runs there.
final class SerialQueueExecutor: PromiseExecutor {
    /// The tag of the executor's queue under ``queueTagKey``.
    let tag: String
    /// The queue everything runs on.
    let queue: DispatchQueue
    private let submissions = Atomic<Int>(0)
    private let schedulings = Atomic<Int>(0)

    init(tag: String) {
        self.tag = tag
        queue = makeTaggedQueue(tag)
    }

    /// How many times ``submit(_:)`` was called.
    var submitCount: Int { submissions.load(ordering: .relaxed) }
    /// How many times ``schedule(after:_:)`` was called.
    var scheduleCount: Int { schedulings.load(ordering: .relaxed) }

    func submit(_ work: @escaping @Sendable () -> Void) {
        submissions.add(1, ordering: .relaxed)
        queue.async(execute: work)
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        schedulings.add(1, ordering: .relaxed)
        let scheduled = ScheduledWork(work)
        queue.asyncAfter(deadline: .now() + max(0, delay.timeInterval)) { scheduled.run() }
        return scheduled
    }

    var isCurrent: Bool {
        currentQueueTag == tag
    }

    /// Work waiting for its deadline; cancelling drops (and releases) it.
    private final class ScheduledWork: PromiseScheduledWork {
        private let work: Locked<(@Sendable () -> Void)?>

        init(_ work: @escaping @Sendable () -> Void) {
            self.work = Locked(work)
        }

        /// Takes the work out (so that it runs at most once) and releases it outside the lock.
        private func take() -> (@Sendable () -> Void)? {
            work.withLock { work in
                let taken = work
                work = nil
                return taken
            }
        }

        func run() {
            take()?()
        }

        func cancel() {
            _ = take()
        }
    }
}

#if NIO
    import Dispatch
    import Foundation
    import NIOCore
    import NIOPosix
    import Synchronization
    import Tomorrowland

    // The helpers lock with `NSLock`: TSan sees pthread mutexes, not `Synchronization.Mutex`.

    /// The generous bound for anything that waits on another thread: tests wait for an event, not
    /// for time, and fail if it does not come within this.
    let generousTimeout: Duration = .seconds(20)

    /// A thread-safe, append-only log for callbacks running on any thread.
    final class Recorder<Element: Sendable>: @unchecked Sendable {
        // Invariant: `entries` is only touched with `lock` held.
        private let lock = NSLock()
        private var entries: [Element] = []

        /// Appends `element`.
        func record(_ element: Element) {
            lock.withLock { entries.append(element) }
        }

        /// Everything recorded so far, in order.
        var values: [Element] {
            lock.withLock { entries }
        }
    }

    /// An object whose deallocation is observable: tests capture it in work to check that the work
    /// was released.
    final class Tracked: Sendable {}

    /// A weak reference readable from any thread.
    final class WeakReference: @unchecked Sendable {
        // `weak let`: loaded atomically by the runtime from any thread.
        weak let object: AnyObject?

        init(_ object: AnyObject) {
            self.object = object
        }
    }

    /// Polls `condition` every millisecond until it holds or `timeout` passes; answers whether it
    /// held. For events with no callback to wait on (a release on another thread).
    func eventually(timeout: Duration = generousTimeout, _ condition: @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }

    /// Waits, without blocking a thread, until `promise` is resolved (or `timeout` passed) and
    /// returns its result (`nil` if it timed out).
    func waitForResult<Value, Failure>(
        _ promise: Promise<Value, Failure>, timeout: Duration = generousTimeout
    ) async -> PromiseResult<Value, Failure>? {
        let claimed = Atomic<Bool>(false)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            promise.tap(on: .immediate) { _ in
                if !claimed.exchange(true, ordering: .acquiringAndReleasing) { continuation.resume() }
            }
            DispatchQueue.global().asyncAfter(
                deadline: .now() + .nanoseconds(Int(timeout.components.seconds) * 1_000_000_000)
            ) {
                if !claimed.exchange(true, ordering: .acquiringAndReleasing) { continuation.resume() }
            }
        }
        return promise.result
    }

    /// Waits until everything submitted to `eventLoop` so far has run.
    func drain(_ eventLoop: any EventLoop) async throws {
        try await eventLoop.submit {}.get()
    }

    /// Runs `body` with a one-thread `MultiThreadedEventLoopGroup`'s loop, and shuts the group down
    /// afterwards.
    func withNIOLoop<R>(_ body: (any EventLoop) async throws -> R) async throws -> R {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let result = try await body(group.next())
            try await group.shutdownGracefully()
            return result
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// An error for rejections in tests.
    struct TestError: Error, Equatable {
        var code = 1
    }
#endif

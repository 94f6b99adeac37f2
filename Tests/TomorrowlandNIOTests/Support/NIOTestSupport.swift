#if NIO
    import Dispatch
    import Foundation
    import NIOCore
    import NIOPosix
    import Synchronization
    import Tomorrowland

    /// An object whose deallocation is observable: tests capture it in work to check that the work
    /// was released.
    final class Tracked: Sendable {}

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

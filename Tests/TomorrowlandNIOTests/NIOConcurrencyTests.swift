#if NIO
    import NIOCore
    import NIOPosix
    import Testing
    import Tomorrowland
    import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// An actor whose isolation is a NIO loop (NIO's `EventLoop.executor`), as NIO users pin actors.
    actor LoopPinnedCounter {
        let eventLoop: any EventLoop
        private var total = 0

        init(eventLoop: any EventLoop) {
            self.eventLoop = eventLoop
        }

        nonisolated var unownedExecutor: UnownedSerialExecutor {
            eventLoop.executor.asUnownedSerialExecutor()
        }

        /// Awaits a promise whose callbacks run on the same loop, then checks where it resumed.
        func add(_ promise: Promise<Int, TestError>) async throws -> (total: Int, resumedOnLoop: Bool) {
            let value = try await promise.value
            total += value
            return (total, eventLoop.inEventLoop)
        }
    }

    @Suite("Swift Concurrency on NIO loops")
    struct NIOConcurrencyTests {
        @Test func awaitingAPromiseInsideAnActorPinnedToTheLoopResumesOnTheLoop() async throws {
            try await withNIOLoop { loop in
                let counter = LoopPinnedCounter(eventLoop: loop)
                let promise = Promise<Int, TestError>(fulfilled: 20).map(on: .nio(loop)) { $0 + 1 }
                let first = try await counter.add(promise)
                let (pending, resolver) = Promise<Int, TestError>.makeWithResolver()
                let second = Task { try await counter.add(pending.map(on: .nio(loop)) { $0 * 2 }) }
                loop.execute { resolver.fulfill(with: 10) }
                let result = try await second.value
                #expect(first.total == 21 && first.resumedOnLoop)
                #expect(result.total == 41 && result.resumedOnLoop)
            }
        }

        @Test func aTaskAwaitsAPromiseResolvedOnTheLoopAndItsRejection() async throws {
            try await withNIOLoop { loop in
                let fulfilled = Promise<Int, TestError>(on: .nio(loop)) { $0.fulfill(with: 1) }
                let rejected = Promise<Int, TestError>(on: .nio(loop)) { $0.reject(with: TestError(code: 2)) }
                let received = try await Task { try await fulfilled.value }.value
                #expect(received == 1)
                await #expect(throws: TestError(code: 2)) { try await rejected.value }
            }
        }

        @Test func cancellingTheAwaitingTaskEndsTheAwaitWithCancellationError() async throws {
            try await withNIOLoop { loop in
                // The task holds the only handle, and the promise honours cancel requests, so the
                // task's cancellation ends the promise as cancelled. The resolver is kept until
                // then: a promise whose last resolver goes unresolved is cancelled on its own,
                // which would pass this test without any request reaching the promise.
                let requested = Locked(false)
                let pendingResolver = Locked<Promise<Int, TestError>.Resolver?>(nil)
                let task = Task {
                    try await Promise<Int, TestError>(on: .nio(loop)) { resolver in
                        resolver.onRequestCancel(on: .nio(loop)) { resolver in
                            #expect(loop.inEventLoop)
                            requested.withLock { $0 = true }
                            resolver.cancel()
                        }
                        pendingResolver.withLock { $0 = resolver }
                    }.value
                }
                task.cancel()
                await #expect(throws: CancellationError.self) { try await task.value }
                #expect(requested.withLock { $0 }, "the task's cancellation reached onRequestCancel")
                pendingResolver.withLock { $0 = nil }
            }
        }
    }
#endif

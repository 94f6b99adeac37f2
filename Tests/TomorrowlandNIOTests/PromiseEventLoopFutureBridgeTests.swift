#if NIO
    import NIOCore
    import NIOPosix
    import Testing
    import Tomorrowland
    import TomorrowlandNIO
    import TomorrowlandTestSupport

    /// Where a bridge's source is resolved: on the test's thread, or inside the loop's work.
    enum ResolvingThread: String, CaseIterable, CustomTestStringConvertible {
        case offTheLoop, onTheLoop

        var testDescription: String { rawValue }

        /// Runs `body` on this thread and waits until it ran.
        func run(on loop: any EventLoop, _ body: @escaping @Sendable () -> Void) async throws {
            switch self {
            case .offTheLoop: body()
            case .onTheLoop: try await loop.submit(body).get()
            }
        }
    }

    @Suite("Promise and EventLoopFuture bridges")
    struct PromiseEventLoopFutureBridgeTests {
        // MARK: Promise → EventLoopFuture

        @Test(arguments: ResolvingThread.allCases)
        func aFulfilledPromiseSucceedsItsFutureOnTheLoop(thread: ResolvingThread) async throws {
            try await withNIOLoop { loop in
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                let future = promise.eventLoopFuture(on: loop)
                let onLoop = future.map { _ in loop.inEventLoop }
                try await thread.run(on: loop) { resolver.fulfill(with: 42) }
                let received = try await future.get()
                #expect(received == 42)
                #expect(try await onLoop.get())
            }
        }

        @Test(arguments: ResolvingThread.allCases)
        func aRejectedPromiseFailsItsFutureWithTheSameError(thread: ResolvingThread) async throws {
            try await withNIOLoop { loop in
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                let future = promise.eventLoopFuture(on: loop)
                try await thread.run(on: loop) { resolver.reject(with: TestError(code: 7)) }
                await #expect(throws: TestError(code: 7)) { try await future.get() }
            }
        }

        @Test(arguments: ResolvingThread.allCases)
        func aCancelledPromiseFailsItsFutureWithPromiseCancelledError(thread: ResolvingThread) async throws {
            try await withNIOLoop { loop in
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                resolver.onRequestCancel(on: .immediate) { $0.cancel() }
                let future = promise.eventLoopFuture(on: loop)
                try await thread.run(on: loop) { promise.requestCancel() }
                await #expect(throws: PromiseCancelledError()) { try await future.get() }
            }
        }

        @Test func anAlreadyResolvedPromiseGivesACompletedFuture() async throws {
            try await withNIOLoop { loop in
                let received = try await Promise<String, TestError>(fulfilled: "done").eventLoopFuture(on: loop).get()
                #expect(received == "done")
            }
        }

        @Test func theFutureKeepsThePromiseFromBeingCancelledByItsOtherObservers() async throws {
            try await withNIOLoop { loop in
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                let cancelRequested = Recorder<Bool>()
                resolver.onRequestCancel(on: .immediate) { _ in cancelRequested.record(true) }
                let future = promise.eventLoopFuture(on: loop)
                let child = promise.map(on: .nio(loop)) { $0 }
                child.requestCancel()
                // The other observer gave up; the future still waits, so the promise goes on.
                try await drain(loop)
                #expect(cancelRequested.values.isEmpty)
                resolver.fulfill(with: 5)
                let received = try await future.get()
                #expect(received == 5)
            }
        }

        @Test func eventLoopPromiseCompletesWithAPromisesResult() async throws {
            try await withNIOLoop { loop in
                let nioPromise = loop.makePromise(of: Int.self)
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                nioPromise.completeWith(promise)
                resolver.fulfill(with: 3)
                let received = try await nioPromise.futureResult.get()
                #expect(received == 3)
            }
        }

        // MARK: EventLoopFuture → Promise

        @Test(arguments: ResolvingThread.allCases)
        func aSucceededFutureFulfilsItsPromise(thread: ResolvingThread) async throws {
            try await withNIOLoop { loop in
                let nioPromise = loop.makePromise(of: Int.self)
                let promise = Promise(nioPromise.futureResult)
                let onLoop = promise.map(on: .nio(loop)) { _ in loop.inEventLoop }
                try await thread.run(on: loop) { nioPromise.succeed(42) }
                #expect(await waitForResult(promise)?.value == 42)
                #expect(await waitForResult(onLoop)?.value == true)
            }
        }

        @Test(arguments: ResolvingThread.allCases)
        func aFailedFutureRejectsItsPromiseWithTheSameError(thread: ResolvingThread) async throws {
            try await withNIOLoop { loop in
                let nioPromise = loop.makePromise(of: Int.self)
                let promise = Promise(nioPromise.futureResult)
                try await thread.run(on: loop) { nioPromise.fail(TestError(code: 9)) }
                #expect(await waitForResult(promise)?.error as? TestError == TestError(code: 9))
            }
        }

        @Test(arguments: ResolvingThread.allCases)
        func aFutureFailedWithPromiseCancelledErrorCancelsItsPromise(thread: ResolvingThread) async throws {
            try await withNIOLoop { loop in
                let nioPromise = loop.makePromise(of: Int.self)
                let promise = Promise(nioPromise.futureResult)
                try await thread.run(on: loop) { nioPromise.fail(PromiseCancelledError()) }
                #expect(await waitForResult(promise)?.isCancelled == true)
            }
        }

        @Test(arguments: ResolvingThread.allCases)
        func requestingCancelOfThePromiseCancelsItAtOnceAndDropsTheFuturesLaterResult(
            thread: ResolvingThread
        ) async throws {
            try await withNIOLoop { loop in
                let nioPromise = loop.makePromise(of: Int.self)
                let promise = Promise(nioPromise.futureResult)
                try await thread.run(on: loop) { promise.requestCancel() }
                #expect(promise.result?.isCancelled == true)
                nioPromise.succeed(1)
                let received = try await nioPromise.futureResult.get()
                #expect(received == 1)
                #expect(promise.result?.isCancelled == true)
            }
        }

        @Test func cancellationSurvivesARoundTripThroughNIO() async throws {
            try await withNIOLoop { loop in
                let (promise, resolver) = Promise<Int, TestError>.makeWithResolver()
                let back = Promise(promise.eventLoopFuture(on: loop))
                resolver.cancel()
                #expect(await waitForResult(back)?.isCancelled == true)
            }
        }
    }
#endif

// A user's file: Swift 6 language mode, complete strict concurrency, upcoming features on, built
// with -warnings-as-errors. It uses the README's API as written there, and the Swift Concurrency
// bridges, and asserts what they do.

import Foundation
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport
import TomorrowlandTesting

/// What callbacks report, from any thread: a lock-protected log, behind the tests' one lock
/// (`Locked`, which ThreadSanitizer sees through), the one thing here that is not the library's API.
final class Log: Sendable {
    private let lines = Locked<[String]>([])

    func record(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.value }
}

struct LoadError: Error, Equatable {}

func loadSomething() throws -> Data { Data([1, 2, 3]) }

/// An actor that lives on an event loop.
actor Counter {
    let loop: EventLoop
    private(set) var count = 0

    init(loop: EventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func increment() -> Int {
        count += 1
        return count
    }
}

/// Loop state that is not Sendable.
final class Tally {
    var names: [String] = []
}

@Suite("README API in Swift 6 strict concurrency")
struct StrictConcurrencyUsageTests {
    @Test func promisesTour() async throws {
        let log = Log()
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        let done =
            promise
            .map(on: .immediate) { $0 * 2 }
            .then(on: .utility) { log.record("value: \($0)") }
            .catch(on: .utility) { log.record("error: \($0)") }
        resolver.fulfill(with: 21)
        #expect(try await done.typedValue == 42)
        #expect(log.all == ["value: 42"])

        let work = StdPromise<Data>(on: .utility) { resolver in
            resolver.onRequestCancel(on: .immediate) { $0.cancel() }
            resolver.fulfill(with: try loadSomething())
        }
        #expect(try await work.value == Data([1, 2, 3]))
    }

    @Test func eventLoopTour() {
        let loop = EventLoop()
        let answer = Promise<Int, Never>(on: .loop(loop)) { $0.fulfill(with: 42) }
            .map(on: .loop(loop)) { $0 + 1 }
            .timeout(on: .loop(loop), delay: .seconds(5))
        #expect(loop.run(until: answer).value == 43)
        loop.shutdown()
    }

    @Test func slowRequestsTimeOut() throws {
        try withTestLoop { loop in
            let (request, _) = Promise<String, Swift.Error>.makeWithResolver()
            let guarded = request.timeout(on: .loop(loop), delay: .seconds(30))

            loop.advance(by: .seconds(29))
            #expect(guarded.result == nil)
            loop.advance(by: .seconds(1))
            let error = try loop.expectError(of: guarded)
            #expect(error is PromiseTimeoutError<Swift.Error>)
        }
    }

    @Test func cancellationAndTokens() async {
        let log = Log()
        let token = PromiseInvalidationToken()
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { resolver in
            log.record("cancel requested")
            resolver.cancel()
        }
        _ = promise.then(on: .immediate, token: token) { _ in log.record("suppressed") }
        token.invalidate()
        promise.requestCancel()
        #expect(await promise.resolvedResult.isCancelled)
        #expect(log.all == ["cancel requested"])
    }

    @Test func awaitingAndAsyncWork() async throws {
        let doubled = StdPromise<Int> { 21 }.map(on: .immediate) { $0 * 2 }
        #expect(try await doubled.value == 42)

        let failing = Promise<Int, LoadError> { () async throws(LoadError) -> Int in throw LoadError() }
        do throws(PromiseAwaitError<LoadError>) {
            _ = try await failing.typedValue
            Issue.record("expected a rejection")
        } catch {
            #expect(error == .rejected(LoadError()))
        }

        let combined = when(fulfilled: [StdPromise<Int>(fulfilled: 1), StdPromise<Int>(fulfilled: 2)])
        #expect(try await combined.value == [1, 2])
    }

    @Test func taskCancellationReachesThePromise() async throws {
        try await withTestLoop { loop in
            let log = Log()
            let keep = LoopBound<[StdPromise<Int>.Resolver]>([], on: loop)
            @Sendable func request() -> StdPromise<Int> {
                let (promise, resolver) = StdPromise<Int>.makeWithResolver()
                resolver.onRequestCancel(on: .immediate) { resolver in
                    log.record("cancel requested")
                    resolver.cancel()
                }
                keep.value.append(resolver)
                return promise
            }
            let task = Task(executorPreference: loop) {
                // Awaited as a temporary: no handle is left to pin the promise.
                try await request().value
            }
            loop.run()
            task.cancel()
            loop.run()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(log.all == ["cancel requested"])
        }
    }

    @Test func actorsAndStateOnALoop() async throws {
        let loop = EventLoop()
        let thread = Thread { loop.run() }
        thread.start()
        let counter = Counter(loop: loop)
        #expect(await counter.increment() == 1)

        let tally = LoopBound(Tally(), on: loop)
        let names = Promise<String, NoError>(fulfilled: "a")
            .then(on: .loop(loop)) { tally.value.names.append($0) }
            .map(on: .loop(loop)) { _ in tally.value.names }
        #expect(try await names.value == ["a"])

        let isolated = StdPromise<Int>(executorPreference: loop) {
            let local = Tally()  // non-Sendable, used only on the loop
            return await withCheckedContinuation { continuation in
                Promise<String, NoError>(fulfilled: "b").isolated(to: loop)
                    .map { name in
                        local.names.append(name)
                        return local.names.count
                    }
                    .then { continuation.resume(returning: $0) }
            }
        }
        #expect(try await isolated.value == 1)
        loop.stop()
        loop.shutdown()
    }
}

import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

// The main code samples of the DocC articles (Sources/*/*.docc), so that the articles stay true.
// Each sample's code is the article's; where an article prints or leaves a result in a comment,
// the test checks that result instead. The event-loop samples are in TomorrowlandLoopTests'
// DocCLoopExampleTests.swift.

// MARK: - Getting Started

private enum LookupError: Swift.Error, Equatable {
    case notFound(id: Int)
}

/// The name stored under `id`, or an error; a `PromiseTimeoutError` after `limit`.
private func loadName(
    id: Int,
    from store: @escaping @Sendable (Int) -> StdPromise<String?>,
    on context: PromiseContext,
    limit: Duration
) -> StdPromise<String> {
    store(id)
        .tryMap(on: context) { name in
            guard let name else { throw LookupError.notFound(id: id) }
            return name.uppercased()
        }
        .timeout(on: context, delay: limit)
}

// MARK: - Contexts

/// Runs promise work on a serial queue of its own, and counts what it was given.
private final class CountingExecutor: PromiseExecutor {
    let submissions = Atomic<Int>(0)
    private let base = DispatchQueueExecutor(queue: DispatchQueue(label: "CountingExecutor"))

    func submit(_ work: @escaping @Sendable () -> Void) {
        submissions.wrappingAdd(1, ordering: .relaxed)
        base.submit(work)
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any PromiseScheduledWork {
        base.schedule(after: delay, work)
    }

    var isCurrent: Bool { base.isCurrent }
}

// MARK: - Cancellation

/// Starts work that stops as soon as anyone asks.
private func startWork() -> Promise<Int, String> {
    let (promise, resolver) = Promise<Int, String>.makeWithResolver()
    resolver.onRequestCancel(on: .immediate) { resolver in
        // Stop the work here (close a descriptor, cancel a timer), then settle the promise.
        resolver.cancel()
    }
    return promise
}

private final class Download: PromiseLifetimeOwner {
    let promiseLifetimeToken = PromiseInvalidationToken()
}

// MARK: - Deterministic Tests with TestLoop

/// Fetches with `fetch`, trying up to three times, 1 s then 2 s apart; each attempt gets 5 s.
private func fetchWithRetry(
    on context: PromiseContext,
    _ fetch: @escaping @Sendable (_ attempt: Int) -> StdPromise<String>
) -> StdPromise<String> {
    StdPromise<String>.retry(
        on: context, attempts: 3,
        backoff: .exponential(initial: .seconds(1), maximum: .seconds(10))
    ) { attempt in
        fetch(attempt).timeout(on: context, delay: .seconds(5))
    }
}

/// The article's "lock-protected array of strings" (behind the tests' one lock, `Locked`).
private final class LockedLog: Sendable {
    private let stored = Locked<[String]>([])

    func append(_ entry: String) {
        stored.withLock { $0.append(entry) }
    }

    var entries: [String] { stored.value }
}

private enum FetchError: Swift.Error {
    case unavailable
}

@Suite("DocC article samples")
struct DocCExampleTests {
    // Tomorrowland's root page.
    @Test func theRootPageChainMeasuresTheString() async {
        let (request, resolver) = StdPromise<String>.makeWithResolver()
        let length = request.map(on: .utility) { $0.count }
            .timeout(on: .utility, delay: .seconds(5))
        resolver.fulfill(with: "hello")
        _ = await waitForResult(length)
        #expect(length.result?.value == 5)
    }

    // Getting Started, "Test it with virtual time".
    @Test func aStoreThatNeverAnswersTimesOut() throws {
        let loop = TestLoop()
        let (stored, _) = StdPromise<String?>.makeWithResolver()
        let name = loadName(id: 1, from: { _ in stored }, on: .loop(loop), limit: .seconds(5))

        loop.advance(by: .seconds(4))
        #expect(name.result == nil)
        loop.advance(by: .seconds(1))
        let error = try loop.expectError(of: name)
        #expect(error is PromiseTimeoutError<Swift.Error>)
        try loop.checkNoPendingWork()
    }

    // Getting Started: the chain's other outcomes, on the same function.
    @Test func theLookupChainMapsAndRejects() throws {
        try withTestLoop { loop in
            let store: @Sendable (Int) -> StdPromise<String?> = { id in
                StdPromise<String?>(fulfilled: id == 1 ? "grace" : nil)
            }
            let found = loadName(id: 1, from: store, on: .loop(loop), limit: .seconds(5))
            #expect(try loop.expectValue(of: found) == "GRACE")
            let missing = loadName(id: 2, from: store, on: .loop(loop), limit: .seconds(5))
            let error = try loop.expectError(of: missing)
            #expect(error as? LookupError == .notFound(id: 2))
            loop.run()
        }
    }

    // Getting Started, "Make a promise".
    @Test func promisesAreMadePendingOrResolved() async {
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        resolver.fulfill(with: 42)  // or reject(with: "no"), or cancel()

        let ready = Promise<Int, String>(fulfilled: 42)

        let computed = Promise<Int, String>(on: .utility) { resolver in
            resolver.fulfill(with: 6 * 7)  // runs on a utility queue
        }

        #expect(promise.result == .value(42))
        #expect(ready.result == .value(42))
        let (done, finished) = Promise<Void, Never>.makeWithResolver()
        computed.tap(on: .immediate) { _ in finished.fulfill(with: ()) }
        _ = await waitForResult(done)
        #expect(computed.result == .value(42))
    }

    // Contexts, "Your own executor".
    @Test func aCustomExecutorRunsCallbacks() async {
        let executor = CountingExecutor()
        let doubled = Promise<Int, Never>(fulfilled: 21).map(on: .executor(executor)) { $0 * 2 }
        _ = await waitForResult(doubled)
        #expect(doubled.result == .value(42))
        #expect(executor.submissions.load(ordering: .relaxed) == 1)
    }

    // Cancellation, the first sample.
    @Test func aRequestOnTheOnlyObserverReachesTheWork() {
        let doubled = startWork().map(on: .immediate) { $0 * 2 }
        doubled.requestCancel()
        #expect(doubled.result == .cancelled)
    }

    // Cancellation, "Invalidation tokens".
    @Test func anInvalidatedTokenSkipsTheCallback() {
        let token = PromiseInvalidationToken()
        let (query, resolver) = Promise<String, Never>.makeWithResolver()
        let length = query.map(on: .immediate, token: token) { $0.count }
        token.invalidate()
        resolver.fulfill(with: "swift")
        #expect(length.result == .cancelled)
    }

    // Cancellation, "Tying promises to an object's lifetime".
    @Test func aLifetimeOwnersDeathCancelsAtOnce() {
        var download: Download? = Download()
        let work = startWork().requestCancelOnDeinit(download!)
        #expect(work.result == nil)
        download = nil
        #expect(work.result == .cancelled)
    }

    // Migrating from NIO, "Waiting for all outcomes".
    @Test func everyOutcomeIsCollected() async {
        let promises: [StdPromise<Int>] = [
            StdPromise(fulfilled: 1), StdPromise(rejected: FetchError.unavailable), StdPromise(fulfilled: 3),
        ]
        let outcomes: [Promise<PromiseResult<Int, Swift.Error>, NoError>] = promises.map { promise in
            promise.mapResult(on: .immediate) { .value($0) }
        }
        let all = when(fulfilled: outcomes)  // Promise<[PromiseResult<Int, Swift.Error>], NoError>
        _ = await waitForResult(all)
        let results = all.result?.value
        #expect(results?.count == 3)
        #expect(results?[0].value == 1)
        #expect(results?[1].error is FetchError)
        #expect(results?[2].value == 3)
    }

    // TomorrowlandTesting's root page.
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

    // Deterministic Tests with TestLoop, the retry test.
    @Test func retriesAfterATimeoutAndAFailure() throws {
        try withTestLoop { loop in
            let attempts = LockedLog()
            let page = fetchWithRetry(on: .loop(loop)) { attempt in
                attempts.append("\(attempt) at \(loop.now)")
                switch attempt {
                case 1: return StdPromise<String>(on: .loop(loop), fulfilled: "late", after: .seconds(60))
                case 2: return StdPromise<String>(rejected: FetchError.unavailable)
                default: return StdPromise<String>(fulfilled: "page")
                }
            }

            let fetched = try loop.expectValue(of: page)
            #expect(fetched == "page")
            // Attempt 1 times out at 5 s (and its 60 s timer is cancelled); attempt 2 starts 1 s later
            // and fails at once; attempt 3 starts 2 s after that.
            #expect(attempts.entries == ["1 at 0.0 seconds", "2 at 6.0 seconds", "3 at 8.0 seconds"])
        }
    }
}

import CTomorrowlandSupport
import Foundation
import Testing
import TomorrowlandTestSupport

@testable import Tomorrowland
@testable import TomorrowlandTesting

/// The pending-promise report: promises made at a known site and never resolved are named with
/// that site and their virtual age; dropped resolvers are reported; sampling and the switch.
///
/// Serialized: tracking, the sampling interval and the dropped-resolver handler are process-wide.
/// Tests of other suites running meanwhile may have their promises recorded too, so every check
/// here looks only at the promises made in this file.
@Suite("Pending-promise tracking", .serialized)
struct PendingPromiseTrackingTests {
    /// The recorded promises of this file still pending.
    private static func pendingHere() -> [PendingPromise] {
        PendingPromiseTracking.report().promises.filter { $0.fileID == #fileID }
    }

    /// Runs `body` with tracking on (every root promise), then turns it off again.
    private static func tracking<R>(samplingInterval: Int = 1, _ body: () throws -> R) rethrows -> R {
        PendingPromiseTracking.start(samplingInterval: samplingInterval)
        defer { PendingPromiseTracking.stop() }
        return try body()
    }

    @Test func aPromiseNeverResolvedIsReportedWithItsSiteAndVirtualAge() throws {
        try Self.tracking {
            try withTestLoop { loop in
                let line = #line + 1
                let (request, resolver) = Promise<String, Swift.Error>.makeWithResolver()
                loop.advance(by: .seconds(30))
                let pending = Self.pendingHere()
                #expect(pending.count == 1)
                let entry = try #require(pending.first)
                #expect(entry.line == line)
                #expect(entry.site == "\(#fileID):\(line)")
                #expect(entry.type == "Promise<String, Error>")
                #expect(entry.virtualAge == .seconds(30))
                #expect(entry.context == nil)
                #expect(!entry.isCancelRequested)
                #expect(entry.description.contains("made at \(#fileID):\(line)"))
                #expect(entry.description.contains("30 s ago in virtual time"))
                // Resolved, it is no longer listed.
                resolver.fulfill(with: "done")
                #expect(Self.pendingHere().isEmpty)
                _ = request
            }
        }
    }

    @Test func thePromisesAreListedOldestFirstWithTheirContexts() throws {
        try Self.tracking {
            try withTestLoop { loop in
                let firstLine = #line + 1
                let (first, firstResolver) = Promise<Int, NoError>.makeWithResolver()
                loop.advance(by: .seconds(5))
                let secondLine = #line + 1
                let second = Promise<Int, NoError>(on: .loop(loop)) { _ in }
                loop.advance(by: .seconds(2))
                // The second's handler ran and dropped its resolver, but the promise is still
                // referenced: it is pending, not dropped.
                let pending = Self.pendingHere()
                #expect(pending.map(\.line) == [firstLine, secondLine])
                #expect(pending.map(\.virtualAge) == [.seconds(7), .seconds(2)])
                #expect(pending.last?.context == ".executor(TestLoop)")
                second.requestCancel()
                #expect(Self.pendingHere().last?.isCancelRequested == true)
                firstResolver.fulfill(with: 1)
                _ = first
            }
        }
    }

    @Test func withTestLoopsFailureForPendingWorkNamesThePromisesStillPending() throws {
        var failure: TestLoopFailure?
        let line = #line + 5
        Self.tracking {
            do {
                try withTestLoop { loop in
                    try loop.checkNoPendingWork()
                    let (_, resolver) = Promise<Int, NoError>.makeWithResolver()
                    // The reply that comes too late: its timer, still pending at the scope's end,
                    // keeps the resolver, so the request is pending too.
                    _ = loop.schedule(after: .seconds(60)) { resolver.fulfill(with: 1) }
                    loop.advance(by: .seconds(20))
                }
            } catch {
                failure = error as? TestLoopFailure
            }
        }
        let message = try #require(failure).description
        #expect(message.contains("TestLoop has pending work: 0 ready item(s) and 1 timer(s)"))
        #expect(message.contains("Promises made in this scope and still pending, oldest first:"))
        #expect(message.contains("Promise<Int, NoError> made at \(#fileID):\(line), 20 s ago in virtual time"))
    }

    @Test func withTestLoopsFailureSaysHowToNameThePromisesWhenTrackingIsOff() throws {
        try #require(!PendingPromiseTracking.isOn, "the environment turned tracking on")
        let failure = #expect(throws: TestLoopFailure.self) {
            try withTestLoop { loop in
                try loop.checkNoPendingWork()
                _ = loop.schedule(after: .seconds(1)) {}
            }
        }
        #expect(failure?.description.contains("set TOMORROWLAND_PENDING_PROMISES=1") == true)
    }

    @Test func aDroppedResolverIsReportedWithItsPromisesSite() throws {
        let dropped = Locked<[PendingPromise]>([])
        let previous = PendingPromiseTracking.droppedResolverHandler
        PendingPromiseTracking.droppedResolverHandler = { promise in
            if promise.fileID == #fileID { dropped.withLock { $0.append(promise) } }
        }
        defer { PendingPromiseTracking.droppedResolverHandler = previous }
        let line = #line + 4
        let cancelled = Self.tracking { () -> Bool in
            try! withTestLoop { loop in
                var promise: Promise<Int, NoError>?, resolver: Promise<Int, NoError>.Resolver?
                (promise, resolver) = Promise<Int, NoError>.makeWithResolver()
                let observed = promise!.map(on: .loop(loop)) { $0 + 1 }
                loop.advance(by: .seconds(3))
                #expect(dropped.value.isEmpty)
                // The last references to the promise's box: its handle and its resolver.
                promise = nil
                resolver = nil
                _ = (promise, resolver)
                loop.run()
                return observed.result?.isCancelled == true
            }
        }
        // Tomorrowland still cancels such a promise: the callback saw the cancellation.
        #expect(cancelled)
        #expect(dropped.value.count == 1)
        let report = try #require(dropped.value.first)
        #expect(report.line == line)
        #expect(report.virtualAge == .seconds(3))
        #expect(report.type == "Promise<Int, NoError>")
    }

    @Test func aResolvedPromiseIsNotReportedWhenItDies() {
        let dropped = Locked(0)
        let previous = PendingPromiseTracking.droppedResolverHandler
        PendingPromiseTracking.droppedResolverHandler = { promise in
            if promise.fileID == #fileID { dropped.withLock { $0 += 1 } }
        }
        defer { PendingPromiseTracking.droppedResolverHandler = previous }
        Self.tracking {
            for index in 0..<100 {
                let (promise, resolver) = Promise<Int, NoError>.makeWithResolver()
                resolver.fulfill(with: index)
                _ = promise
            }
        }
        #expect(dropped.value == 0)
        #expect(Self.pendingHere().isEmpty)
    }

    @Test func samplingRecordsOnePromiseInTheInterval() async {
        let resolvers = Locked<[Promise<Int, NoError>.Resolver]>([])
        PendingPromiseTracking.start(samplingInterval: 4)
        // A thread of its own: each thread counts its own promises for sampling.
        await onDedicatedThread {
            for _ in 0..<100 {
                let (_, resolver) = Promise<Int, NoError>.makeWithResolver()
                resolvers.withLock { $0.append(resolver) }
            }
        }
        #expect(PendingPromiseTracking.samplingInterval == 4)
        #expect(PendingPromiseTracking.report().samplingInterval == 4)
        PendingPromiseTracking.stop()
        #expect(Self.pendingHere().count == 25)
        for resolver in resolvers.value { resolver.fulfill(with: 0) }
        #expect(Self.pendingHere().isEmpty)
    }

    @Test func offNothingIsRecordedAndTheBoxIsAPlainOne() throws {
        try #require(!PendingPromiseTracking.isOn, "the environment turned tracking on")
        let (promise, resolver) = Promise<Int, NoError>.makeWithResolver()
        #expect(!(promise.box is TrackedResultBox<PromiseResult<Int, NoError>>))
        #expect(Self.pendingHere().isEmpty)
        Self.tracking {
            let (tracked, trackedResolver) = Promise<Int, NoError>.makeWithResolver()
            #expect(tracked.box is TrackedResultBox<PromiseResult<Int, NoError>>)
            trackedResolver.fulfill(with: 1)
        }
        resolver.fulfill(with: 1)
    }

    @Test func startsNestAndTheLastStopTurnsTrackingOff() throws {
        try #require(!PendingPromiseTracking.isOn, "the environment turned tracking on")
        PendingPromiseTracking.start()
        PendingPromiseTracking.start(samplingInterval: 3)
        #expect(PendingPromiseTracking.samplingInterval == 3)
        PendingPromiseTracking.stop()
        #expect(PendingPromiseTracking.isOn)
        PendingPromiseTracking.stop()
        #expect(!PendingPromiseTracking.isOn)
        #expect(PendingPromiseTracking.samplingInterval == 0)
        // An unbalanced stop does nothing.
        PendingPromiseTracking.stop()
        #expect(!PendingPromiseTracking.isOn)
    }

    @Test func theOtherRootFormsAreRecordedAtTheirCallersSite() async throws {
        PendingPromiseTracking.start()
        defer { PendingPromiseTracking.stop() }
        let delayedLine = #line + 1
        let delayed = DelayedPromise<Int, NoError>(on: .immediate) { _ in }
        // Not started: not listed.
        #expect(Self.pendingHere().isEmpty)
        let started = delayed.promise
        let throwingLine = #line + 1
        let throwing = Promise<Int, Swift.Error>(on: .immediate) { _ in }
        let taskLine = #line + 1
        let task = Promise<Int, Swift.Error> {
            try await Task.sleep(for: .seconds(3600))
            return 1
        }
        let lines = Self.pendingHere().map(\.line)
        #expect(lines == [delayedLine, throwingLine, taskLine])
        task.requestCancel()
        _ = await task.resolvedResult
        _ = (started, throwing)
    }

    @Test func aRecordTakesAtMost160BytesBesideTheDictionarysOwn() {
        // What the documentation promises for a recorded promise's side record.
        #expect(MemoryLayout<PendingPromiseRegistry.Entry>.stride <= 160)
    }

    @Test(arguments: [
        ("1", 1), ("8", 8), ("1000000000", 1_000_000_000), ("", 0), ("0", 0), ("off", 0), ("-1", 0), ("+2", 0),
        ("3x", 0), ("1000000001", 0), ("99999999999999999999", 0),
    ])
    func theEnvironmentVariableIsParsed(value: String, interval: UInt32) {
        #expect(twl_parse_promise_tracking_interval(value) == interval)
    }
}

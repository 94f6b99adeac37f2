import Testing
import TomorrowlandTestSupport

@testable import Tomorrowland
@testable import TomorrowlandTesting

/// What the pending-promise diagnostics let a user observe, one test per row of the tables in
/// the article "Finding promises that never resolve": when a dropped resolver is reported, which
/// promises `withTestLoop` names and when it fails, and what "process-wide" means for tests.
///
/// In the suite of `PendingPromiseTrackingTests`, which is serialized: tracking, its sampling
/// interval and the dropped-resolver handler are process-wide. Promises that other suites make
/// meanwhile may be recorded too, so every check looks only at the promises made in this file.
extension PendingPromiseTrackingTests {
    /// The recorded promises of this file still pending.
    private static func pendingInThisFile() -> [PendingPromise] {
        PendingPromiseTracking.report().promises.filter { $0.fileID == #fileID }
    }

    /// Runs `body` with every root promise recorded and the dropped-resolver reports of this file
    /// collected, then restores both; returns what `body` returns and the reports.
    private static func recordingDrops<R>(
        _ body: (_ dropped: Locked<[PendingPromise]>) throws -> R
    ) rethrows -> (R, [PendingPromise]) {
        let dropped = Locked<[PendingPromise]>([])
        let previous = PendingPromiseTracking.droppedResolverHandler
        PendingPromiseTracking.droppedResolverHandler = { promise in
            if promise.fileID == #fileID { dropped.withLock { $0.append(promise) } }
        }
        PendingPromiseTracking.start()
        defer {
            PendingPromiseTracking.stop()
            PendingPromiseTracking.droppedResolverHandler = previous
        }
        let result = try body(dropped)
        return (result, dropped.value)
    }

    /// The failure `withTestLoop` throws for `body`, if any. A plain `do`/`catch`, not
    /// `#expect(throws:)`: inside a macro's closure `#line` is the macro's line, and the promises'
    /// recorded sites would be that line.
    private static func failure(of body: (TestLoop) throws -> Void) -> TestLoopFailure? {
        do {
            try withTestLoop(body)
            return nil
        } catch {
            return error as? TestLoopFailure
        }
    }

    /// The async form of ``failure(of:)``.
    private static func failure(of body: (TestLoop) async throws -> Void) async -> TestLoopFailure? {
        do {
            try await withTestLoop(body)
            return nil
        } catch {
            return error as? TestLoopFailure
        }
    }

    // MARK: Dropped resolvers

    @Test func aDroppedResolverIsReportedOnlyOnceItsPromiseIsReleased() throws {
        let loop = TestLoop()
        let (observed, dropped) = Self.recordingDrops { dropped -> Promise<Int, NoError> in
            var promise: Promise<Int, NoError>?, resolver: Promise<Int, NoError>.Resolver?
            (promise, resolver) = Promise<Int, NoError>.makeWithResolver()
            let observed = promise!.map(on: .loop(loop)) { $0 + 1 }
            resolver = nil
            _ = resolver
            loop.runAll()
            // The user still holds the promise: nothing can resolve it any more, yet it is
            // pending, listed, and not reported.
            #expect(promise?.result == nil)
            #expect(observed.result == nil)
            #expect(Self.pendingInThisFile().count == 1)
            #expect(dropped.value.isEmpty)
            // The last handle goes: now it is cancelled and reported, once.
            promise = nil
            _ = promise
            loop.runAll()
            #expect(Self.pendingInThisFile().isEmpty)
            return observed
        }
        #expect(observed.result == .cancelled)
        #expect(dropped.count == 1)
        #expect(dropped.first?.type == "Promise<Int, NoError>")
    }

    @Test func aPromiseHeldOnlyThroughADerivedPromiseIsReportedAsSoonAsItsResolverGoes() {
        let loop = TestLoop()
        let (observed, dropped) = Self.recordingDrops { dropped -> Promise<Int, NoError> in
            var resolver: Promise<Int, NoError>.Resolver?
            let observed: Promise<Int, NoError>
            do {
                let (promise, made) = Promise<Int, NoError>.makeWithResolver()
                resolver = made
                observed = promise.map(on: .loop(loop)) { $0 + 1 }
            }
            #expect(dropped.value.isEmpty)
            // A derived promise does not keep its root alive: the resolver was the last reference.
            resolver = nil
            _ = resolver
            #expect(dropped.value.count == 1)
            loop.runAll()
            return observed
        }
        #expect(observed.result == .cancelled)
        #expect(dropped.count == 1)
    }

    // MARK: withTestLoop

    @Test func withTestLoopDoesNotFailForAPendingPromiseWithNoLoopWorkBehindIt() throws {
        let kept = Locked<Promise<Int, NoError>.Resolver?>(nil)
        let line = #line + 3
        _ = try Self.recordingDrops { _ in
            try withTestLoop { loop in
                let (_, resolver) = Promise<Int, NoError>.makeWithResolver()
                kept.value = resolver
                loop.advance(by: .seconds(5))
            }
            // No failure, although the promise is pending: only loop work fails the scope. The
            // report still has it.
            #expect(Self.pendingInThisFile().map(\.line) == [line])
            kept.value?.fulfill(with: 1)
        }
    }

    @Test func withTestLoopNamesAPendingPromiseWhoseResolverOutlivesTheBody() throws {
        let kept = Locked<Promise<Int, NoError>.Resolver?>(nil)
        let line = #line + 3
        let (failure, _) = Self.recordingDrops { _ in
            Self.failure { loop in
                let (_, resolver) = Promise<Int, NoError>.makeWithResolver()
                kept.value = resolver
                // Loop work that has nothing to do with the promise.
                _ = loop.schedule(after: .seconds(60)) {}
                loop.advance(by: .seconds(5))
            }
        }
        kept.value?.fulfill(with: 1)
        let message = try #require(failure).description
        #expect(message.contains("Promise<Int, NoError> made at \(#fileID):\(line), 5 s ago in virtual time"))
    }

    @Test func withTestLoopNamesAPendingPromiseWhoseHandleOutlivesTheBody() throws {
        let kept = Locked<Promise<Int, NoError>?>(nil)
        let line = #line + 3
        let (failure, dropped) = Self.recordingDrops { dropped in
            let failure = Self.failure { loop in
                let (promise, _) = Promise<Int, NoError>.makeWithResolver()
                kept.value = promise
                _ = loop.schedule(after: .seconds(60)) {}
                loop.advance(by: .seconds(5))
            }
            // Listed as pending, its resolver gone: reported only once the handle goes too.
            #expect(dropped.value.isEmpty)
            kept.value = nil
            return failure
        }
        let message = try #require(failure).description
        #expect(message.contains("Promise<Int, NoError> made at \(#fileID):\(line), 5 s ago in virtual time"))
        #expect(dropped.map(\.line) == [line])
    }

    @Test func withTestLoopDoesNotNameAPromiseWhoseResolverAndHandlesEndedWithTheBody() throws {
        let line = #line + 3
        let (failure, dropped) = Self.recordingDrops { _ in
            Self.failure { loop in
                let (promise, resolver) = Promise<Int, NoError>.makeWithResolver()
                _ = loop.schedule(after: .seconds(60)) {}
                loop.advance(by: .seconds(5))
                _ = (promise, resolver)
            }
        }
        let message = try #require(failure).description
        #expect(message.contains("TestLoop has pending work: 0 ready item(s) and 1 timer(s)"))
        #expect(message.contains("No promise recorded in this scope is pending."))
        // It was cancelled as the body ended, and reported as dropped instead.
        #expect(dropped.map(\.line) == [line])
    }

    // MARK: Process-wide

    @Test func trackingStartedForOneTestRecordsThePromisesOfEveryThread() async {
        let kept = Locked<Promise<Int, NoError>.Resolver?>(nil)
        PendingPromiseTracking.start()
        // Another test running in parallel, on a thread of its own.
        await onDedicatedThread {
            let (_, resolver) = Promise<Int, NoError>.makeWithResolver()
            kept.value = resolver
        }
        #expect(Self.pendingInThisFile().count == 1)
        PendingPromiseTracking.stop()
        // Recorded while tracking was on, it stays listed until it resolves.
        #expect(Self.pendingInThisFile().count == 1)
        kept.value?.fulfill(with: 1)
        #expect(Self.pendingInThisFile().isEmpty)
    }

    @Test func theLatestStartsSamplingIntervalAppliesToEveryoneUntilTheLastStop() throws {
        try #require(!PendingPromiseTracking.isOn, "the environment turned tracking on")
        PendingPromiseTracking.start()  // one test wants every root
        PendingPromiseTracking.start(samplingInterval: 50)  // another, running meanwhile, samples
        PendingPromiseTracking.stop()  // the second test ends
        #expect(PendingPromiseTracking.isOn)
        #expect(PendingPromiseTracking.samplingInterval == 50)
        PendingPromiseTracking.stop()
        #expect(!PendingPromiseTracking.isOn)
    }

    @Test func aPromiseMadeBeforeTrackingStartedIsNeverRecorded() throws {
        try #require(!PendingPromiseTracking.isOn, "the environment turned tracking on")
        let (_, early) = Promise<Int, NoError>.makeWithResolver()
        PendingPromiseTracking.start()
        let (_, late) = Promise<Int, NoError>.makeWithResolver()
        #expect(Self.pendingInThisFile().count == 1)
        PendingPromiseTracking.stop()
        early.fulfill(with: 1)
        late.fulfill(with: 1)
    }

    @Test func withTestLoopNamesOnlyThePromisesMadeInItsOwnBody() async throws {
        let kept = Locked<[Promise<Int, NoError>.Resolver]>([])
        let line = #line + 4
        PendingPromiseTracking.start()
        defer { PendingPromiseTracking.stop() }
        let failure = await Self.failure { loop in
            let (_, resolver) = Promise<Int, NoError>.makeWithResolver()
            kept.withLock { $0.append(resolver) }
            // Another test's promise, made meanwhile on a thread of its own.
            await onDedicatedThread {
                let (_, other) = Promise<Int, NoError>.makeWithResolver()
                kept.withLock { $0.append(other) }
            }
            _ = loop.schedule(after: .seconds(60)) {}
        }
        #expect(Self.pendingInThisFile().count == 2)
        for resolver in kept.value { resolver.fulfill(with: 1) }
        let message = try #require(failure).description
        #expect(message.contains("made at \(#fileID):\(line),"))
        #expect(message.components(separatedBy: "made at ").count == 2)
    }
}

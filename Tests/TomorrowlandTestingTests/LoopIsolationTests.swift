import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

/// Loop state that is not `Sendable`: a plain class with mutable fields.
private final class Session {
    var decoded: [String] = []
    var stored: [String] = []
}

@Suite("Loop-bound state and isolated promise callbacks on a TestLoop")
struct LoopIsolationTests {
    @Test func loopBoundStateIsReadAndWrittenInsideTheLoopsWork() throws {
        try withTestLoop { loop in
            let session = LoopBound(Session(), on: loop)
            let log = Recorder<String>()
            loop.submit { session.value.decoded.append("a") }
            loop.submit {
                session.withValue { $0.stored.append("b") }
                log.record("\(session.value.decoded) \(session.value.stored)")
            }
            loop.run()
            #expect(log.values == [#"["a"] ["b"]"#])
        }
    }

    @Test func loopBoundStateCanBeReplacedOnTheLoop() throws {
        try withTestLoop { loop in
            let counter = LoopBound(0, on: loop)
            let log = Recorder<String>()
            for _ in 0..<3 { loop.submit { counter.value += 1 } }
            loop.submit { log.record("\(counter.value)") }
            loop.run()
            #expect(log.values == ["3"])
        }
    }

    @Test func isolatedCallbacksRunOnTheLoopWithNonSendableState() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let (promise, resolver) = Promise<String, String>.makeWithResolver()
            loop.submit {
                let session = Session()  // lives on the loop; captured by non-Sendable closures
                promise.isolated(to: loop)
                    .map { value -> String in
                        session.decoded.append(value)
                        return value.uppercased()
                    }
                    .then { value in
                        session.stored.append(value)
                        log.record("on loop: \(loop.isCurrent), \(session.decoded) \(session.stored)")
                    }
            }
            loop.run()
            resolver.fulfill(with: "x")
            #expect(log.values.isEmpty)  // callbacks wait for the loop
            loop.run()
            #expect(log.values == [#"on loop: true, ["x"] ["X"]"#])
        }
    }

    @Test func isolatedCatchAlwaysAndFlatMapRunOnTheLoop() throws {
        try withTestLoop { loop in
            let log = Recorder<String>()
            let result = LoopBound<IsolatedPromise<Int, String>?>(nil, on: loop)
            loop.submit {
                let seen = Session()
                let chain = Promise<Int, String>(rejected: "bad").isolated(to: loop)
                    .catch { seen.decoded.append($0) }
                    .flatMap { Promise(fulfilled: $0 + 1) }
                    .always { outcome in
                        seen.stored.append("\(outcome)")
                        log.record("\(seen.decoded) on loop: \(loop.isCurrent)")
                    }
                result.value = chain
            }
            loop.run()
            #expect(log.values == [#"["bad"] on loop: true"#])
            let done = LoopBound<PromiseResult<Int, String>?>(nil, on: loop)
            loop.submit { done.value = result.value?.promise.result }
            loop.run()
            loop.submit { log.record("\(done.value.map { $0 == .error("bad") } ?? false)") }
            loop.run()
            #expect(log.values.last == "true")
        }
    }

    @Test func anActorPinnedToTheLoopSharesItsIsolationWithLoopWork() async throws {
        try withTestLoop { loop in
            let counter = LoopBoundCounter(loop: loop)
            let seen = Recorder<String>()
            loop.submit { seen.record("isolating: \(loop.isIsolatingCurrentContext() == true)") }
            loop.submit { seen.record("value: \(counter.valueAssumingIsolation())") }
            loop.run()
            #expect(seen.values == ["isolating: true", "value: 0"])
            #expect(loop.isIsolatingCurrentContext() == false)
        }
    }
}

@Suite("Loop isolation misuse")
struct LoopIsolationMisuseTests {
    private static func standardError(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func readingLoopBoundStateOffTheLoopStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let bound = LoopBound(1, on: TestLoop())
            _ = bound.value
        }
        #expect(Self.standardError(result).contains("LoopBound.value used off its loop"))
    }

    @Test func writingLoopBoundStateOffTheLoopStops() async {
        await #expect(processExitsWith: .failure) {
            let bound = LoopBound(1, on: TestLoop())
            bound.value = 2
        }
    }

    @Test func boxingLoopStateOffTheLoopStops() async {
        await #expect(processExitsWith: .failure) {
            _ = LoopBound(isolatedValue: 1, on: TestLoop())
        }
    }

    @Test func loopBoundStateOfAnotherLoopStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = TestLoop()
            let other = TestLoop()
            let bound = LoopBound(1, on: other)
            loop.submit { _ = bound.value }
            loop.run()
        }
        #expect(Self.standardError(result).contains("used off its loop"))
    }

    @Test func isolatingAPromiseOffTheLoopStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Promise<Int, String>(fulfilled: 1).isolated(to: TestLoop())
        }
        #expect(Self.standardError(result).contains("Promise.isolated(to:) used off its loop"))
    }

    @Test func registeringAnIsolatedCallbackOffTheLoopStops() async {
        await #expect(processExitsWith: .failure) {
            let loop = TestLoop()
            let view = LoopBound<IsolatedPromise<Int, String>?>(nil, on: loop)
            loop.submit { view.value = Promise<Int, String>(fulfilled: 1).isolated(to: loop) }
            loop.run()
            // Smuggled out of the loop's work through an unchecked box: registering here stops.
            let smuggled = Smuggle<IsolatedPromise<Int, String>?>(nil)
            loop.submit { smuggled.value = view.value }
            loop.run()
            smuggled.value?.then { _ in }
        }
    }
}

/// Carries a value across threads without checks, to provoke misuse in exit tests.
private final class Smuggle<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

import Testing
import Tomorrowland
import TomorrowlandTesting

/// `withTestLoop` checks at the end of its body that the loop has nothing pending.
@Suite("withTestLoop")
struct WithTestLoopTests {
    private struct BodyError: Error, Equatable {}

    @Test func returnsTheBodysResultWhenNothingIsLeftPending() throws {
        let value = try withTestLoop { loop in
            let promise = Promise<Int, Never>(on: .loop(loop), fulfilled: 4, after: .seconds(1))
            loop.advance(by: .seconds(1))
            return promise.result?.value
        }
        #expect(value == 4)
    }

    @Test func failsNamingReadyWorkLeftPending() {
        let failure = #expect(throws: TestLoopFailure.self) {
            try withTestLoop { loop in loop.submit {} }
        }
        #expect(failure?.description.contains("1 ready item(s) and 0 timer(s)") == true)
    }

    @Test func failsNamingATimerLeftPendingAndWhenItIsDue() {
        let failure = #expect(throws: TestLoopFailure.self) {
            try withTestLoop { loop in
                _ = Promise<Int, String>(on: .loop(loop), fulfilled: 1, after: .seconds(30))
            }
        }
        #expect(failure?.description.contains("0 ready item(s) and 1 timer(s)") == true)
        #expect(failure?.description.contains("due at 30.0 seconds") == true)
    }

    @Test func rethrowsTheBodysErrorWithoutCheckingTheLoop() {
        #expect(throws: BodyError()) {
            try withTestLoop { loop in
                loop.submit {}
                throw BodyError()
            }
        }
    }

    @Test func expectPendingWorkAtEndLetsWorkStayPending() throws {
        try withTestLoop { loop in
            loop.expectPendingWorkAtEnd()
            _ = loop.schedule(after: .seconds(5)) {}
            loop.advance(by: .seconds(4))
        }
    }

    @Test func expectPendingWorkAtEndFailsWhenNothingIsLeftPending() {
        let failure = #expect(throws: TestLoopFailure.self) {
            try withTestLoop { loop in
                loop.expectPendingWorkAtEnd()
                loop.submit {}
                loop.run()
            }
        }
        #expect(failure?.description.contains("expected to end with pending work") == true)
    }

    @Test func checkNoPendingWorkIgnoresExpectPendingWorkAtEnd() {
        let loop = TestLoop()
        loop.expectPendingWorkAtEnd()
        loop.submit {}
        #expect(throws: TestLoopFailure.self) { try loop.checkNoPendingWork() }
        loop.run()
    }

    @Test func aShutDownLoopEndsWithNothingPending() throws {
        try withTestLoop { loop in
            _ = loop.schedule(after: .seconds(5)) {}
            loop.submit {}
            loop.shutdown()
        }
    }

    @Test func theAsyncFormAwaitsTasksOnTheLoopAndChecksAtTheEnd() async throws {
        let value = try await withTestLoop { loop in
            let task = Task(executorPreference: loop) { loop.isCurrent }
            loop.run()
            return await task.value
        }
        #expect(value)
    }

    @Test func theAsyncFormFailsForWorkLeftPending() async {
        await #expect(throws: TestLoopFailure.self) {
            try await withTestLoop { loop in
                let task = Task(executorPreference: loop) { 1 }
                loop.run()
                _ = await task.value
                loop.submit {}
            }
        }
    }
}

import Dispatch
import Foundation
import Testing
import TomorrowlandTesting

/// Misuse stops the program with a precondition failure whose message says what to do instead.
@Suite("TestLoop misuse")
struct TestLoopMisuseTests {
    /// The child process's standard error, as text.
    private static func standardError(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func advancingByANegativeDurationStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            TestLoop().advance(by: .seconds(-1))
        }
        #expect(Self.standardError(result).contains("time cannot go backwards"))
    }

    @Test func advancingToAnEarlierInstantStops() async {
        await #expect(processExitsWith: .failure) {
            let loop = TestLoop()
            loop.advance(by: .seconds(2))
            loop.advance(to: .seconds(1))
        }
    }

    @Test func drivingTheLoopFromItsOwnWorkStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = TestLoop()
            loop.submit { loop.run() }
            loop.run()
        }
        #expect(Self.standardError(result).contains("driven from inside its own work"))
    }

    @Test func drivingTheLoopFromTwoThreadsAtOnceStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = TestLoop()
            let started = DispatchSemaphore(value: 0)
            let never = DispatchSemaphore(value: 0)
            loop.submit {
                started.signal()
                never.wait()
            }
            Thread.detachNewThread { loop.run() }
            started.wait()
            loop.run()
        }
        #expect(Self.standardError(result).contains("driven from two threads at once"))
    }

    @Test func runAllWithARepeatingTimerStopsInsteadOfHanging() async {
        await #expect(processExitsWith: .failure) {
            let loop = TestLoop()
            @Sendable func repeatForever() {
                _ = loop.schedule(after: .seconds(1)) { repeatForever() }
            }
            repeatForever()
            loop.runAll(maxSteps: 100)
        }
    }

    @Test func assumingIsolationOutsideTheLoopStops() async {
        await #expect(processExitsWith: .failure) {
            let counter = LoopBoundCounter(loop: TestLoop())
            _ = counter.valueAssumingIsolation()
        }
    }
}

import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// The timer rules every Dispatch-backed context must keep, run against each of them in real
/// time (the virtual-time versions, with exact instants, run on the TestLoop in the other suites).
@Suite("Timer contract on Dispatch contexts")
struct TimerContractTests {
    /// The contexts under test, built fresh for each test.
    enum Destination: String, CaseIterable, Sendable {
        case globalQueue, serialQueue, operationQueue, immediate, nowOrQueue

        var context: PromiseContext {
            switch self {
            case .globalQueue: return .utility
            case .serialQueue: return .queue(DispatchQueue(label: "TimerContractTests"))
            case .operationQueue: return .operationQueue(OperationQueue())
            case .immediate: return .immediate
            case .nowOrQueue: return .nowOr(.queue(DispatchQueue(label: "TimerContractTests.nowOr")))
            }
        }
    }

    private func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    @Test(arguments: Destination.allCases)
    func anAfterInitializerResolvesNoEarlierThanItsDelay(_ destination: Destination) {
        let start = DispatchTime.now()
        let promise = Promise<Int, String>(on: destination.context, fulfilled: 1, after: 0.03)
        // Unresolved at once, unless this thread lost its core for the whole delay.
        #expect(promise.result == nil || seconds(since: start) >= 0.03)
        #expect(blockingResult(of: promise) == .value(1))
        #expect(seconds(since: start) >= 0.03)
    }

    @Test(arguments: Destination.allCases)
    func aCancelledAfterInitializerIsCancelledAtOnceAndNeverFires(_ destination: Destination) {
        let events = Recorder<String>()
        let start = DispatchTime.now()
        let promise = Promise<Int, String>(on: destination.context, fulfilled: 1, after: 0.2)
        _ = promise.then(on: .immediate) { _ in events.record("fulfilled") }
        promise.requestCancel()
        // The rule is about a cancel that comes before the delay is over. If this thread lost its
        // core for the whole delay, the timer may have fired first: that run shows nothing.
        guard seconds(since: start) < 0.2 else { return }
        #expect(promise.result == .cancelled)
        // Past the delay: the cancelled timer did not fire.
        usleep(300_000)
        #expect(events.values.isEmpty)
    }

    @Test(arguments: Destination.allCases)
    func aTimeoutRejectsAPendingPromiseNoEarlierThanItsDelay(_ destination: Destination) {
        let (upstream, _) = Promise<Int, String>.makeWithResolver()
        let start = DispatchTime.now()
        let timeout = upstream.timeout(on: destination.context, delay: 0.03)
        #expect(blockingResult(of: timeout) == .error(.timedOut))
        #expect(seconds(since: start) >= 0.03)
    }

    @Test(arguments: Destination.allCases)
    func aDelayDeliversTheResultNoEarlierThanItsDelayAfterResolution(_ destination: Destination) {
        let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
        let delayed = upstream.delay(on: destination.context, 0.03)
        let start = DispatchTime.now()
        resolver.reject(with: "late")
        #expect(blockingResult(of: delayed) == .error("late"))
        #expect(seconds(since: start) >= 0.03)
    }

    @Test(arguments: Destination.allCases)
    func retryWaitsItsBackoffBetweenAttempts(_ destination: Destination) {
        let start = DispatchTime.now()
        let promise = Promise<Int, String>.retry(
            on: destination.context, attempts: 3, backoff: .fixed(.milliseconds(15))
        ) { attempt in
            attempt < 3 ? Promise(rejected: "again") : Promise(fulfilled: attempt)
        }
        #expect(blockingResult(of: promise) == .value(3))
        #expect(seconds(since: start) >= 0.03)
    }
}

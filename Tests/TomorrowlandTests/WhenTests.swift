import Dispatch
import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandTestSupport
import TomorrowlandTesting

@Suite("when(fulfilled:)")
struct WhenFulfilledTests {
    @Test func anEmptyArrayIsFulfilledWithAnEmptyArray() {
        #expect(when(fulfilled: [Promise<Int, String>]()).result == .value([]))
    }

    @Test func inputsFulfilledAlreadyGiveAFulfilledResultBeforeReturn() {
        let inputs = (0..<5).map { Promise<Int, String>(fulfilled: $0) }
        #expect(when(fulfilled: inputs).result == .value([0, 1, 2, 3, 4]))
    }

    @Test func anInputRejectedAlreadyRejectsBeforeReturnAndTheFirstInArgumentOrderWins() {
        let (pending, _) = Promise<Int, String>.makeWithResolver()
        let inputs = [pending, Promise(rejected: "a"), Promise(with: .cancelled), Promise(rejected: "b")]
        #expect(when(fulfilled: inputs).result == .error("a"))
    }

    @Test func anInputCancelledAlreadyCancelsBeforeReturn() {
        let (pending, _) = Promise<Int, String>.makeWithResolver()
        #expect(when(fulfilled: [pending, Promise(with: .cancelled), Promise(rejected: "b")]).result == .cancelled)
    }

    @Test func valuesComeInInputOrderWhateverTheResolutionOrderOnTheQoSQueue() {
        let pairs = (0..<10).map { _ in Promise<Int, String>.makeWithResolver() }
        let all = when(fulfilled: pairs.map(\.0), qos: .utility)
        for (index, pair) in pairs.enumerated().reversed() { pair.1.fulfill(with: index * 10) }
        #expect(blockingResult(of: all) == .value((0..<10).map { $0 * 10 }))
    }

    @Test func theFulfilmentIsDeliveredAsynchronouslyEvenWhenTheLastInputResolvesOnTheCallingThread() {
        let (pending, resolver) = Promise<Int, String>.makeWithResolver()
        let all = when(fulfilled: [Promise(fulfilled: 1), pending])
        resolver.fulfill(with: 2)
        #expect(all.result == nil || all.result == .value([1, 2]))
        #expect(blockingResult(of: all) == .value([1, 2]))
    }

    @Test func inputsResolvedConcurrentlyFromManyThreadsKeepTheirOrder() {
        let pairs = (0..<2_000).map { _ in Promise<Int, String>.makeWithResolver() }
        let all = when(fulfilled: pairs.map(\.0))
        let resolvers = UnsafeSendable(pairs.map(\.1))
        DispatchQueue.concurrentPerform(iterations: 2_000) { index in
            resolvers.value[index].fulfill(with: index)
        }
        #expect(blockingResult(of: all) == .value(Array(0..<2_000)))
    }

    @Test func aFailureRacingTheLastValuesGivesOneOutcome() {
        for _ in 0..<100 {
            let pairs = (0..<8).map { _ in Promise<Int, String>.makeWithResolver() }
            let all = when(fulfilled: pairs.map(\.0))
            let resolvers = UnsafeSendable(pairs.map(\.1))
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                if index == 5 {
                    resolvers.value[index].reject(with: "five")
                } else {
                    resolvers.value[index].fulfill(with: index)
                }
            }
            #expect(blockingResult(of: all) == .error("five"))
        }
    }

    @Test func theFirstFailureInResolutionOrderWins() {
        let pairs = (0..<3).map { _ in Promise<Int, String>.makeWithResolver() }
        let all = when(fulfilled: pairs.map(\.0))
        pairs[2].1.reject(with: "third")
        pairs[0].1.reject(with: "first")
        pairs[1].1.cancel()
        #expect(blockingResult(of: all) == .error("third"))
    }

    @Test func theSamePromiseMayAppearMoreThanOnce() {
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        let (other, otherResolver) = Promise<Int, String>.makeWithResolver()
        let all = when(fulfilled: [promise, other, promise])
        resolver.fulfill(with: 1)
        otherResolver.fulfill(with: 2)
        #expect(blockingResult(of: all) == .value([1, 2, 1]))
    }

    @Test func cancelOnFailureRequestsCancellationOfEveryInputOnce() {
        let requests = Recorder<String>()
        let pairs = (0..<3).map { index in
            let pair = Promise<Int, String>.makeWithResolver()
            pair.1.onRequestCancel(on: .immediate) { _ in requests.record("input \(index)") }
            return pair
        }
        let all = when(fulfilled: pairs.map(\.0), cancelOnFailure: true)
        pairs[1].1.reject(with: "x")
        #expect(blockingResult(of: all) == .error("x"))
        #expect(waitUntil { requests.values.count == 2 })
        #expect(Set(requests.values) == ["input 0", "input 2"])
    }

    @Test func withoutCancelOnFailureAFailureCancelsNothing() {
        let requests = Recorder<String>()
        let (input, resolver) = Promise<Int, String>.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { _ in requests.record("cancel requested") }
        let (failing, failingResolver) = Promise<Int, String>.makeWithResolver()
        let all = when(fulfilled: [input, failing])
        failingResolver.reject(with: "x")
        #expect(blockingResult(of: all) == .error("x"))
        #expect(requests.values.isEmpty)
    }

    @Test func aCancelRequestOnTheResultReachesInputsItAloneObserves() {
        let requests = Recorder<String>()
        let (all, resolver) = sealedUpstream(requests: requests, cancels: true) { upstream in
            when(fulfilled: [upstream])
        }
        all.requestCancel()
        #expect(requests.values == ["cancel requested"])
        #expect(blockingResult(of: all) == .cancelled)
        withExtendedLifetime(resolver) {}
    }

    @Test func theResultDoesNotKeepItsInputsAlive() {
        // The input's only handle is a temporary and nothing else holds its storage: it dies
        // unresolved, and its callbacks, the result's among them, see cancellation.
        let all = when(fulfilled: [Promise<Int, String>.makeWithResolver().0, Promise(fulfilled: 1)])
        #expect(blockingResult(of: all)?.isCancelled == true)
    }

    @Test func tupleFormsCombineDifferentValueTypes() {
        let two = when(fulfilled: Promise<Int, String>(fulfilled: 1), Promise<String, String>(fulfilled: "b"))
        #expect(two.result?.value.map { "\($0.0) \($0.1)" } == "1 b")

        let (pending, resolver) = Promise<Double, String>.makeWithResolver()
        let six = when(
            fulfilled: Promise<Int, String>(fulfilled: 1), Promise<String, String>(fulfilled: "b"), pending,
            Promise<Bool, String>(fulfilled: true), Promise<[Int], String>(fulfilled: [5]),
            Promise<Character, String>(fulfilled: "f"))
        #expect(six.result == nil)
        resolver.fulfill(with: 3.5)
        let value = blockingResult(of: six)?.value
        #expect(value.map { "\($0.0) \($0.1) \($0.2) \($0.3) \($0.4) \($0.5)" } == "1 b 3.5 true [5] f")
    }

    @Test func tupleFormsOfEveryArityRejectLikeTheArrayForm() {
        let ok = Promise<Int, String>(fulfilled: 1)
        let bad = Promise<Int, String>(rejected: "bad")
        #expect(when(fulfilled: ok, bad).result?.error == "bad")
        #expect(when(fulfilled: ok, ok, bad).result?.error == "bad")
        #expect(when(fulfilled: ok, ok, ok, bad).result?.error == "bad")
        #expect(when(fulfilled: ok, ok, ok, ok, bad).result?.error == "bad")
        #expect(when(fulfilled: ok, ok, ok, ok, ok, bad).result?.error == "bad")

        let (pending, resolver) = Promise<Int, String>.makeWithResolver()
        let three = when(fulfilled: ok, pending, ok)
        resolver.cancel()
        #expect(blockingResult(of: three)?.isCancelled == true)
    }

    @Test func tupleFormsPropagateCancelRequests() {
        let requests = Recorder<String>()
        let ((all, other), resolver) = sealedUpstream(requests: requests, cancels: true) { upstream in
            let other = Promise<String, String>.makeWithResolver()
            return (when(fulfilled: upstream, other.0), other.1)
        }
        all.requestCancel()
        #expect(requests.values == ["cancel requested"])
        #expect(blockingResult(of: all)?.isCancelled == true)
        withExtendedLifetime((resolver, other)) {}
    }

    // Not under ThreadSanitizer: its shadow memory and slow-down are not the code's shape.
    @Test(.disabled(if: isThreadSanitizerActive, "measures shape; TSan distorts time and memory"))
    func timeAndMemoryGrowLinearlyWithTheNumberOfInputs() async {
        // In a child process, so that no other test's allocations or threads blur the figures.
        let outcome = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            func measure(_ count: Int) -> (seconds: Double, bytes: Int) {
                let pairs = (0..<count).map { _ in Promise<Int, String>.makeWithResolver() }
                let inputs = pairs.map(\.0)
                let before = residentBytes()
                let start = DispatchTime.now()
                let all = when(fulfilled: inputs)
                let bytes = residentBytes() - before
                for (index, pair) in pairs.enumerated() { pair.1.fulfill(with: index) }
                let result = blockingResult(of: all, timeout: .seconds(60))
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
                guard result?.value?.count == count, result?.value?.last == count - 1 else {
                    fatalError("when(fulfilled:) over \(count) inputs gave a wrong result")
                }
                return (seconds, bytes)
            }
            _ = measure(1_000)  // warm-up
            let small = measure(10_000)
            let large = measure(100_000)
            print(
                "when(fulfilled:) 10k: \(small.seconds) s, \(small.bytes) B; 100k: \(large.seconds) s, \(large.bytes) B"
            )
            // Linear is about 10x; quadratic would be about 100x. Generous for a busy machine.
            guard large.seconds < small.seconds * 40 + 0.5 else {
                fatalError("time is not linear: 10k took \(small.seconds) s, 100k \(large.seconds) s")
            }
            // What the call holds while waiting: one slot, one callback node and one weak
            // reference per input.
            guard large.bytes < 100_000 * 512 else {
                fatalError("memory is not linear: \(large.bytes) B for 100k inputs")
            }
        }
        if let output = outcome?.standardOutputContent {
            print(String(decoding: output, as: UTF8.self), terminator: "")
        }
    }
}

@Suite("when(first:)")
struct WhenFirstTests {
    @Test func anEmptyArrayIsCancelled() {
        #expect(when(first: [Promise<Int, String>]()).result == .cancelled)
    }

    @Test func inputsResolvedAlreadyAreSeenInArgumentOrder() {
        let (pending, _) = Promise<Int, String>.makeWithResolver()
        let inputs = [pending, Promise(with: .cancelled), Promise(rejected: "second"), Promise(fulfilled: 3)]
        #expect(when(first: inputs).result == .error("second"))
    }

    @Test func inputsAllCancelledAlreadyGiveACancelledResultBeforeReturn() {
        let inputs = [Promise<Int, String>(with: .cancelled), Promise(with: .cancelled)]
        #expect(when(first: inputs).result == .cancelled)
    }

    @Test func theFirstOutcomeIsDeliveredOnTheResolvingThreadWithoutAHop() {
        let pairs = (0..<3).map { _ in Promise<Int, String>.makeWithResolver() }
        let first = when(first: pairs.map(\.0))
        pairs[1].1.cancel()
        #expect(first.result == nil)
        pairs[2].1.fulfill(with: 2)
        #expect(first.result == .value(2))
        pairs[0].1.reject(with: "late")
        #expect(first.result == .value(2))
    }

    @Test func cancellationsAreIgnoredUntilEveryInputIsCancelledThenTheResultIsCancelledAsynchronously() {
        let pairs = (0..<2).map { _ in Promise<Int, String>.makeWithResolver() }
        let first = when(first: pairs.map(\.0) + [pairs[0].0])
        pairs[0].1.cancel()
        #expect(first.result == nil)
        pairs[1].1.cancel()
        #expect(blockingResult(of: first) == .cancelled)
    }

    @Test func cancelRemainingRequestsCancellationOfEveryInputOnTheFirstOutcome() {
        let requests = Recorder<String>()
        let pairs = (0..<3).map { index in
            let pair = Promise<Int, String>.makeWithResolver()
            pair.1.onRequestCancel(on: .immediate) { _ in requests.record("input \(index)") }
            return pair
        }
        let first = when(first: pairs.map(\.0), cancelRemaining: true)
        pairs[0].1.fulfill(with: 0)
        #expect(first.result == .value(0))
        #expect(requests.values == ["input 1", "input 2"])
    }

    @Test func cancelRemainingAlsoAppliesToAnOutcomeSeenAtTheCall() {
        let requests = Recorder<String>()
        let (pending, resolver) = Promise<Int, String>.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { _ in requests.record("pending input") }
        #expect(when(first: [pending, Promise(fulfilled: 1)], cancelRemaining: true).result == .value(1))
        #expect(requests.values == ["pending input"])
    }

    @Test func aCancelRequestOnTheResultReachesInputsItAloneObserves() {
        let requests = Recorder<String>()
        let (first, resolver) = sealedUpstream(requests: requests, cancels: true) { upstream in
            when(first: [upstream])
        }
        first.requestCancel()
        #expect(requests.values == ["cancel requested"])
        #expect(blockingResult(of: first) == .cancelled)
        withExtendedLifetime(resolver) {}
    }
}

/// The resident memory of this process, from `/proc/self/statm`.
private func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

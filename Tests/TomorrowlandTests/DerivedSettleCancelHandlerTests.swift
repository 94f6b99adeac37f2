import Testing
import TomorrowlandTestSupport

@testable import Tomorrowland

/// A derived promise that settles from its own job (`settleInPlace`) or from a drain
/// (`settleHandingOver`) takes its cancel handlers out only when it has some, and releases them
/// once, after it dropped its lock (a handler may hold a resolver of this very promise), unrun
/// when the result is a value.
@Suite("Derived settle releases cancel handlers")
struct DerivedSettleCancelHandlerTests {
    /// Reports, as it dies, whether `box`'s lock was held then.
    final class LockProbe: Sendable {
        let box: PromiseCore
        let deaths: Recorder<Bool>

        init(box: PromiseCore, deaths: Recorder<Bool>) {
            self.box = box
            self.deaths = deaths
        }

        deinit {
            deaths.record(box.lock.locked.load(ordering: .relaxed))
        }
    }

    /// Adds to `promise` an inline cancel handler that holds the only reference to a probe, and
    /// records the handler's runs in `runs`.
    static func addProbedCancelHandler(
        to promise: Promise<Int, Never>, deaths: Recorder<Bool>, runs: Recorder<Int>
    ) {
        let probe = LockProbe(box: promise.box, deaths: deaths)
        promise.box.addCancelHandler(
            .inline {
                _ = probe
                runs.record(0)
            })
    }

    @Test("a map job that settles its box releases the box's cancel handlers once, unlocked, unrun")
    func jobSettleReleasesCancelHandlers() {
        let executor = ManualJobExecutor()
        let deaths = Recorder<Bool>()
        let runs = Recorder<Int>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        let mapped = promise.map(on: .executor(executor)) { $0 + 1 }
        Self.addProbedCancelHandler(to: mapped, deaths: deaths, runs: runs)
        resolver.fulfill(with: 1)
        #expect(deaths.values.isEmpty, "the box keeps its handlers until it resolves")
        executor.runPending()
        #expect(mapped.result == .value(2))
        #expect(deaths.values == [false])
        #expect(runs.values.isEmpty)
    }

    @Test("an immediate map fired by a drain releases its box's cancel handlers once, unlocked, unrun")
    func drainSettleReleasesCancelHandlers() {
        let deaths = Recorder<Bool>()
        let runs = Recorder<Int>()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        let mapped = promise.map(on: .immediate) { $0 + 1 }
        Self.addProbedCancelHandler(to: mapped, deaths: deaths, runs: runs)
        resolver.fulfill(with: 1)
        #expect(mapped.result == .value(2))
        #expect(deaths.values == [false])
        #expect(runs.values.isEmpty)
    }

    @Test("a map without cancel handlers settles and runs its callbacks")
    func settleWithoutCancelHandlers() {
        let executor = ManualJobExecutor()
        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
        let mapped = promise.map(on: .executor(executor)) { $0 + 1 }
        let seen = Recorder<Int>()
        _ = mapped.map(on: .immediate) { value -> Int in
            seen.record(value)
            return value
        }
        resolver.fulfill(with: 1)
        executor.runPending()
        #expect(seen.values == [2])
    }
}

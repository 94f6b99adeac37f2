import Foundation
import Synchronization
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// An actor whose executor is an event loop.
private actor LoopPinnedAccount {
    let loop: EventLoop  // kept strongly: the executor reference is unowned
    private var balance = 0
    private var threads: Set<UInt> = []

    init(loop: EventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func deposit(_ amount: Int) -> (onLoop: Bool, thread: UInt) {
        balance += amount
        let thread = UInt(pthread_self())
        threads.insert(thread)
        return (loop.inEventLoop, thread)
    }

    var total: Int { balance }
    var threadCount: Int { threads.count }

    nonisolated func balanceAssumingIsolation() -> Int {
        assumeIsolated { $0.balance }
    }

    /// Calls `witness` from inside this actor and returns whether `witness` ran on the loop.
    func callDefaultActor(_ witness: ThreadWitness) async -> Bool {
        await witness.isOnLoop(loop)
    }
}

/// A default actor: the runtime decides where its code runs.
private actor ThreadWitness {
    func isOnLoop(_ loop: EventLoop) -> Bool { loop.inEventLoop }
}

/// The thread a running loop drives, read from inside its work.
private func loopThreadID(_ loop: EventLoop) async -> UInt {
    await withCheckedContinuation { continuation in
        loop.execute { continuation.resume(returning: UInt(pthread_self())) }
    }
}

@Suite("EventLoop as a Swift Concurrency executor")
struct EventLoopConcurrencyTests {
    @Test func anActorPinnedToTheLoopRunsOnTheLoopThread() async {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let loopThread = await loopThreadID(loop)
        let account = LoopPinnedAccount(loop: loop)
        // Calls from many tasks on the global executor all land on the loop's one thread.
        await withTaskGroup(of: (onLoop: Bool, thread: UInt).self) { group in
            for _ in 0..<50 { group.addTask { await account.deposit(1) } }
            for await outcome in group {
                #expect(outcome.onLoop)
                #expect(outcome.thread == loopThread)
            }
        }
        #expect(await account.total == 50)
        #expect(await account.threadCount == 1)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func loopWorkMayAssumeTheIsolationOfAnActorPinnedToIt() async {
        let loop = EventLoop()
        let account = LoopPinnedAccount(loop: loop)
        let seen = Locked<Int?>(nil)
        let isolating = Locked<[Bool?]>([])
        loop.execute {
            seen.value = account.balanceAssumingIsolation()
            isolating.withLock { $0.append(loop.isIsolatingCurrentContext()) }
        }
        loop.runUntilIdle()
        #expect(seen.value == 0)
        #expect(isolating.value == [true])
        #expect(loop.isIsolatingCurrentContext() == false)
        loop.shutdown()
    }

    @Test func aPromiseOfAsyncWorkPreferringTheLoopRunsThereAndResolves() async throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let account = LoopPinnedAccount(loop: loop)
        let promise = StdPromise<Bool>(executorPreference: loop) {
            let onLoop = loop.inEventLoop
            let deposit = await account.deposit(5)
            return onLoop && deposit.onLoop
        }
        #expect(try await promise.value)
        #expect(await account.total == 5)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func awaitingAPromiseResolvedOnTheLoopResumesTheAwaitingActor() async throws {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let promise = Promise<Int, NoError>(on: .loop(loop)) { $0.fulfill(with: 1) }
            .map(on: .loop(loop)) { $0 + 1 }
        #expect(try await promise.value == 2)
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    // The loop runs jobs isolated to itself: code that is not the loop's own (a task that does not
    // prefer the loop, a default actor) never continues on the loop's thread after an actor
    // pinned to the loop returns to it or calls it. Run as task executor only, the runtime would
    // see a generic executor on the loop's thread and could keep such code there.
    @Test func aTaskThatDoesNotPreferTheLoopLeavesTheLoopThreadWhenAnActorPinnedToItReturns() async {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let account = LoopPinnedAccount(loop: loop)
        for _ in 0..<20 {
            let continuedOnLoop = await Task.detached {
                let deposit = await account.deposit(1)
                return (deposit.onLoop, loop.inEventLoop)
            }.value
            #expect(continuedOnLoop == (true, false))
        }
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func aDefaultActorCalledByAnActorPinnedToTheLoopRunsOffTheLoop() async {
        let loop = EventLoop()
        let thread = LoopThread(loop)
        #expect(thread.waitUntilRunning())
        let account = LoopPinnedAccount(loop: loop)
        let witness = ThreadWitness()
        for _ in 0..<20 {
            let ranOnLoop = await Task.detached { await account.callDefaultActor(witness) }.value
            #expect(!ranOnLoop)
        }
        loop.stop()
        #expect(thread.join())
        loop.shutdown()
    }

    @Test func loopBoundStateIsUsedFromLoopCallbacks() {
        let loop = EventLoop()
        let lines = LoopBound<[String]>([], on: loop)
        let (promise, resolver) = Promise<String, NoError>.makeWithResolver()
        let joined =
            promise
            .then(on: .loop(loop)) { lines.value.append($0) }
            .map(on: .loop(loop)) { _ in lines.value.joined(separator: ",") }
        resolver.fulfill(with: "a")
        #expect(loop.run(until: joined) == .value("a"))
        loop.shutdown()
    }
}

@Suite("EventLoop isolation misuse")
struct EventLoopIsolationMisuseTests {
    @Test func assumingAnActorsIsolationOffTheLoopStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let account = LoopPinnedAccount(loop: EventLoop())
            _ = account.balanceAssumingIsolation()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        // The runtime asks isIsolatingCurrentContext() first and reports the failure itself.
        #expect(message.contains("Incorrect actor executor assumption"))
    }

    @Test func readingLoopBoundStateOffTheLoopStops() async {
        await #expect(processExitsWith: .failure) {
            let bound = LoopBound(1, on: EventLoop())
            _ = bound.value
        }
    }
}

import CLibevent
import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

// The event-loop samples of the DocC articles (Sources/*/*.docc), so that the articles stay
// true. Each sample's code is the article's; where an article prints, the test records and
// checks instead, and where it waits for a signal, the test triggers the same shutdown from
// the loop's work (signals are process-wide: only EventLoopSignalTests raises them).

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

// MARK: - Migrating from NIO

private enum ParseError: Swift.Error {
    case negative
}

// MARK: - Running the Loop

/// Calls `beat` on the loop every `interval`, until the loop shuts down.
private func heartbeat(on loop: EventLoop, every interval: Duration, _ beat: @escaping @Sendable () -> Void) {
    _ = loop.schedule(after: interval) {
        beat()
        heartbeat(on: loop, every: interval, beat)
    }
}

/// The host's `event_base`, shared with loop callbacks that run on the host's own thread.
private struct HostBase: @unchecked Sendable {
    // `@unchecked Sendable`: libevent calls on `pointer` happen on the thread that runs the base.
    let pointer: OpaquePointer
}

@Suite("DocC article samples on an EventLoop")
struct DocCLoopExampleTests {
    // Getting Started, "Run it on an event loop".
    @Test func theLookupChainRunsOnALoop() {
        let loop = EventLoop()
        let names = ["ada", "grace"]
        let name = loadName(
            id: 1,
            from: { id in StdPromise<String?>(on: .loop(loop)) { $0.fulfill(with: names[id]) } },
            on: .loop(loop),
            limit: .seconds(5))
        #expect(loop.run(until: name).value == "GRACE")
        loop.shutdown()
    }

    // TomorrowlandLoop's root page.
    @Test func theRootPageChainRunsOnTheLoop() {
        let loop = EventLoop()
        let answer = Promise<Int, Never>(on: .loop(loop)) { $0.fulfill(with: 42) }
            .map(on: .loop(loop)) { $0 + 1 }
            .timeout(on: .loop(loop), delay: .seconds(5))
        #expect(loop.run(until: answer).value == 43)
        loop.shutdown()
    }

    // Migrating from NIO, "A chain, side by side".
    @Test func theNIOStyleChainRunsOnOneLoop() {
        let loop = EventLoop()
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()

        let text =
            promise
            .tryMap(on: .loop(loop)) { value -> Int in
                guard value >= 0 else { throw ParseError.negative }
                return value * 2
            }
            .flatMap(on: .loop(loop)) { doubled in
                // NIO: loop.scheduleTask(in: .milliseconds(10)) { doubled }.futureResult
                Promise(on: .loop(loop), fulfilled: doubled, after: .milliseconds(10))
            }
            .map(on: .loop(loop)) { "value: \($0)" }
            .recover(on: .loop(loop)) { error in "failed: \(error)" }

        loop.execute { resolver.fulfill(with: 21) }  // NIO: promise.succeed(21)
        #expect(loop.run(until: text).value == "value: 42")
        loop.shutdown()
    }

    // Running the Loop, "A daemon": the heartbeat, and a shutdown from the loop's work where the
    // article's daemon shuts down from its signal watchers; run() returns after it.
    @Test func theDaemonBeatsUntilItShutsDown() {
        let loop = EventLoop()
        let beats = Recorder<Bool>()
        heartbeat(on: loop, every: .milliseconds(5)) {
            beats.record(loop.inEventLoop)
            if beats.values.count == 3 { loop.shutdown() }
        }
        let thread = LoopThread(loop)
        #expect(thread.join())
        #expect(beats.values == [true, true, true])
        #expect(loop.isShutdownComplete)
    }

    // Running the Loop, "Several cores: EventLoopGroup".
    @Test func aGroupComputesOnItsLoops() {
        let group = EventLoopGroup(loopCount: 2)
        let squares = (1...4).map { n in
            Promise<Int, Never>(on: .loop(group.next())) { $0.fulfill(with: n * n) }
        }
        let sum = when(fulfilled: squares).map(on: .immediate) { $0.reduce(0, +) }
        let done = DispatchSemaphore(value: 0)
        sum.tap(on: .immediate) { _ in done.signal() }
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(sum.result?.value == 30)
        group.syncShutdownGracefully()
    }

    // Embedding in a Host's event_base.
    @Test func promiseWorkRunsInsideTheHostsBase() {
        let base = HostBase(pointer: event_base_new()!)
        let loop = EventLoop(borrowing: base.pointer)
        let printed = Recorder<String>()
        let hostThread = pthread_self()

        _ = Promise<String, Never>(on: .loop(loop)) { $0.fulfill(with: "hello") }
            .delay(on: .loop(loop), .milliseconds(10))  // a loop timer, inside the host's base
            .then(on: .loop(loop)) { text in
                printed.record(pthread_equal(pthread_self(), hostThread) != 0 ? text : "elsewhere")
                event_base_loopbreak(base.pointer)  // the host decides when its loop ends
            }

        event_base_dispatch(base.pointer)  // the host runs its loop as usual
        loop.shutdown()  // removes the loop's events from the base
        event_base_free(base.pointer)  // the base is the host's to free, after the loop's shutdown
        #expect(printed.values == ["hello"])
    }
}

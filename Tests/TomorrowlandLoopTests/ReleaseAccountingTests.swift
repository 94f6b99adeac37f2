import Foundation
import Testing
import TomorrowlandTestSupport

@testable import Tomorrowland
@testable import TomorrowlandLoop

/// Leak accounting on a real loop: after resolution, cancellation, invalidation, watcher cancel
/// and shutdown, every promise storage, user callback (what it captured), token, watcher handler
/// and timer's work is freed. Storage and tokens are watched through weak references to the
/// library's internal objects; callbacks and work through ``ReleaseSpy`` tokens they capture.
@Suite("Release accounting on an EventLoop")
struct ReleaseAccountingTests {
    typealias IntPromise = Promise<Int, String>

    /// Weak references to promise storage.
    final class Storages: @unchecked Sendable {
        // Only the test thread touches this (before and after driving the loop).
        private var boxes: [() -> AnyObject?] = []

        func watch<Value, Error>(_ promise: Promise<Value, Error>) {
            weak let box = promise.box
            boxes.append { box }
        }

        var alive: Int { boxes.filter { $0() != nil }.count }
        var count: Int { boxes.count }
    }

    @Test("a resolved chain of every shape frees its promises and its callbacks")
    func resolvedChainsFreeEverything() {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let storages = Storages()
        var callbacks = 0
        do {
            let (root, resolver) = IntPromise.makeWithResolver()
            storages.watch(root)
            let context = PromiseContext.loop(loop)
            let mapped = root.map(on: context) { [token = spy.token()] value in
                withExtendedLifetime(token) { value + 1 }
            }
            let flat = mapped.flatMap(on: context) { [token = spy.token()] value in
                withExtendedLifetime(token) {
                    loop.sleep(for: .milliseconds(1)).mapResult(on: .immediate) { _ -> PromiseResult<Int, String> in
                        .value(value)
                    }
                }
            }
            let timed = flat.timeout(on: context, delay: .seconds(3600)).mapError(on: .immediate) { _ in "timeout" }
            let delayed = timed.delay(on: context, .milliseconds(1))
            let observed = delayed.then(on: context) { [token = spy.token()] _ in withExtendedLifetime(token) {} }
            observed.always(on: context) { [token = spy.token()] _ in withExtendedLifetime(token) {} }
            let joined = when(fulfilled: [observed, observed.makeChild()]).map(on: .immediate) { $0[0] }
            callbacks = 4
            for promise in [mapped, flat, timed, delayed, observed, joined] { storages.watch(promise) }
            resolver.fulfill(with: 1)
            #expect(loop.run(until: joined) == .value(2))
        }
        // when(fulfilled:) delivers on a global queue: give its last hop a moment.
        #expect(waitUntil { storages.alive == 0 }, "\(storages.alive) of \(storages.count) promises still alive")
        #expect(spy.releasedCount == callbacks)
        loop.runUntilIdle()
        loop.shutdown()
    }

    @Test("chains cancelled by requestCancel or by invalidating their token free everything, token included")
    func cancelledChainsFreeEverything() {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let storages = Storages()
        weak var tokenBox: TokenBox?
        do {
            let token = PromiseInvalidationToken()
            tokenBox = token.box
            let context = PromiseContext.loop(loop)
            var tails: [IntPromise] = []
            for index in 0..<100 {
                let (root, resolver) = IntPromise.makeWithResolver()
                resolver.onRequestCancel(on: context) { $0.cancel() }
                storages.watch(root)
                let child = root.map(on: context, token: token) { [token = spy.token()] value in
                    withExtendedLifetime(token) { value }
                }
                let tail = child.onCancel(on: context) { [token = spy.token()] in withExtendedLifetime(token) {} }
                storages.watch(child)
                storages.watch(tail)
                if index % 2 == 0 {
                    tail.requestCancel()
                } else {
                    resolver.fulfill(with: index)
                }
                tails.append(tail)
            }
            token.invalidate()
            for tail in tails { _ = loop.run(until: tail) }
            #expect(tails.allSatisfy { $0.result == .cancelled })
        }
        #expect(storages.alive == 0, "\(storages.alive) of \(storages.count) promises still alive")
        #expect(spy.releasedCount == 200)
        #expect(tokenBox == nil, "the token's storage outlived the token and every callback")
        loop.shutdown()
    }

    @Test("callbacks a shut-down loop refuses when their upstream resolves end cancelled and are freed")
    func refusedCallbacksEndCancelledAndAreFreed() {
        // A drain hands its reference to a node over to the loop's job (W1's hop); a loop that
        // is shut down abandons the job at once, on the resolving thread: the node must be
        // released exactly once, whichever shape submitted it.
        let loop = EventLoop()
        let spy = ReleaseSpy()
        let storages = Storages()
        do {
            let context = PromiseContext.loop(loop)
            let (root, resolver) = IntPromise.makeWithResolver()
            let (cancelledRoot, cancelledResolver) = IntPromise.makeWithResolver()
            storages.watch(root)
            storages.watch(cancelledRoot)
            let mapped = root.map(on: context) { [token = spy.token()] value in withExtendedLifetime(token) { value } }
            let tapped = root.tap(on: context) { [token = spy.token()] _ in withExtendedLifetime(token) {} }
            let timed = root.timeout(on: context, delay: .seconds(60))
            let observed = cancelledRoot.onCancel(on: context) { [token = spy.token()] in withExtendedLifetime(token) {}
            }
            for promise in [mapped, tapped, observed] { storages.watch(promise) }
            storages.watch(timed)
            loop.shutdown()
            resolver.fulfill(with: 1)
            cancelledResolver.cancel()
            #expect(mapped.result == .cancelled)
            #expect(observed.result == .cancelled)
            #expect(tapped.result == .value(1))
            #expect(timed.result == .cancelled)
        }
        #expect(storages.alive == 0, "\(storages.alive) of \(storages.count) promises still alive")
        #expect(spy.releasedCount == 3)
    }

    @Test("a cancelled watcher releases its handler, and the watcher itself is freed")
    func cancelledWatcherReleasesItsHandler() throws {
        let loop = EventLoop()
        let spy = ReleaseSpy()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        weak var weakWatcher: EventLoopWatcher?
        try {
            let watcher = try loop.watch(fileDescriptor: fds[0], for: .readable) { [token = spy.token()] _ in
                withExtendedLifetime(token) {}
            }
            weakWatcher = watcher
            loop.runUntilIdle()
            watcher.cancel()
        }()
        loop.runUntilIdle()
        #expect(spy.releasedCount == 1)
        #expect(weakWatcher == nil)
        loop.shutdown()
    }

    @Test("timers release their work once fired or cancelled, on the loop and from another thread")
    func timersReleaseTheirWork() {
        let loop = EventLoop()
        // One spy for the fired timer, one for the cancelled ones: the 1 ms timer may fire in
        // any `runUntilIdle` below (a busy machine can take longer than 1 ms to get there), so
        // a count shared with it would depend on the machine's speed.
        let firedSpy = ReleaseSpy()
        let cancelledSpy = ReleaseSpy()
        let fired = loop.schedule(after: .milliseconds(1)) { [token = firedSpy.token()] in
            withExtendedLifetime(token) {}
        }
        let cancelledHere = loop.schedule(after: .seconds(3600)) { [token = cancelledSpy.token()] in
            withExtendedLifetime(token) {}
        }
        let cancelledElsewhere = loop.schedule(after: .seconds(3600)) { [token = cancelledSpy.token()] in
            withExtendedLifetime(token) {}
        }
        // Not on the loop's thread (nobody drives it): the release hops to the loop.
        cancelledHere.cancel()
        loop.runUntilIdle()
        #expect(cancelledSpy.releasedCount == 1)
        let thread = Thread { cancelledElsewhere.cancel() }
        thread.start()
        _ = loop.run(until: loop.sleep(for: .milliseconds(20)))
        #expect(
            waitUntil {
                loop.runUntilIdle(); return cancelledSpy.releasedCount == 2 && firedSpy.releasedCount == 1
            })
        withExtendedLifetime(fired) {}
        loop.shutdown()
    }
}

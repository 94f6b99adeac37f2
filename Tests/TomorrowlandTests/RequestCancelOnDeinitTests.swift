import Dispatch
import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// `requestCancelOnDeinit` (L4) on Linux: exact for `PromiseLifetimeOwner` objects, within
/// `DeinitWatcher.sweepInterval` for any other object.
@Suite("requestCancelOnDeinit")
struct RequestCancelOnDeinitTests {
    typealias IntPromise = Promise<Int, String>

    final class Download: PromiseLifetimeOwner, Sendable {
        let promiseLifetimeToken = PromiseInvalidationToken()
    }

    final class PlainObject: Sendable {
        let deaths: Recorder<String>
        init(deaths: Recorder<String>) { self.deaths = deaths }
        deinit { deaths.record("object died") }
    }

    static func pending(_ requests: Recorder<String>) -> (IntPromise, IntPromise.Resolver) {
        let (promise, resolver) = IntPromise.makeWithResolver()
        resolver.onRequestCancel(on: .immediate) { _ in requests.record("cancel requested") }
        return (promise, resolver)
    }

    @Test("a PromiseLifetimeOwner's death requests cancellation at that moment (L4)")
    func ownerDeathCancelsSynchronously() {
        let requests = Recorder<String>()
        let (promise, _) = Self.pending(requests)
        do {
            let owner = Download()
            let returned = promise.requestCancelOnDeinit(owner)
            #expect(returned == promise)
            #expect(requests.values.isEmpty)
        }
        #expect(requests.values == ["cancel requested"])
    }

    @Test("a PromiseLifetimeOwner goes through its own token, not the sweeping watcher (L4)")
    func ownerUsesItsToken() {
        let (promise, _) = IntPromise.makeWithResolver()
        let owner = Download()
        promise.requestCancelOnDeinit(owner)
        #expect(InvalidationTokenTests.callbackNodes(owner.promiseLifetimeToken) == 1)
        withExtendedLifetime(promise) {}
    }

    @Test("an owner that outlives the promise's resolution requests nothing (L4)")
    func ownerDeathAfterResolution() {
        let requests = Recorder<String>()
        let (promise, resolver) = Self.pending(requests)
        do {
            let owner = Download()
            promise.requestCancelOnDeinit(owner)
            resolver.fulfill(with: 1)
        }
        #expect(requests.values.isEmpty)
        #expect(promise.result == .value(1))
    }

    @Test("any object's death requests cancellation soon after, and the object is not kept alive (L4)")
    func plainObjectDeathCancelsSoonAfter() async {
        let requests = Recorder<String>()
        let deaths = Recorder<String>()
        let (promise, _) = Self.pending(requests)
        do {
            let object = PlainObject(deaths: deaths)
            #expect(promise.requestCancelOnDeinit(object) == promise)
        }
        #expect(deaths.values == ["object died"], "the watcher must hold the object weakly")
        #expect(await eventually { requests.count == 1 })
        withExtendedLifetime(promise) {}
    }

    @Test("while the object lives, nothing is requested (L4)")
    func livingObjectRequestsNothing() async throws {
        let requests = Recorder<String>()
        let deaths = Recorder<String>()
        let (promise, _) = Self.pending(requests)
        let object = PlainObject(deaths: deaths)
        promise.requestCancelOnDeinit(object)
        // Real time is the point here: several sweeps must pass without a request.
        try await Task.sleep(for: DeinitWatcher.sweepInterval * 5)
        #expect(requests.values.isEmpty)
        withExtendedLifetime(object) {}
        withExtendedLifetime(promise) {}
    }
}

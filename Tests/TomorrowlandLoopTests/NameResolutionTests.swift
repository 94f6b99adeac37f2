import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("NameResolution")
struct NameResolutionTests {
    private let answer = TCPSocketAddress.literal(host: "127.0.0.1", port: 80) ?? []

    @Test func theAnswerIsDeliveredOnce() {
        let calls = Recorder<Int>()
        let resolution = NameResolution(host: "example", port: 80) { result in
            calls.record((try? result.get())?.count ?? -1)
        }
        #expect(resolution.complete(with: .success(answer)))
        #expect(!resolution.complete(with: .failure(.addressResolutionFailed(host: "example"))))
        #expect(calls.values == [1])
        #expect(resolution.isAbandoned)
    }

    @Test func anAbandonedResolutionDiscardsItsAnswerAndReleasesItsHandlerAtOnce() {
        let spy = ReleaseSpy()
        let calls = Recorder<Int>()
        var token: ReleaseSpy.Token? = spy.token()
        let resolution = NameResolution(host: "example", port: 80) { [token] _ in
            withExtendedLifetime(token) { calls.record(1) }
        }
        token = nil
        #expect(spy.releasedCount == 0)
        #expect(!resolution.isAbandoned)
        resolution.abandon()
        #expect(spy.releasedCount == 1)
        #expect(resolution.isAbandoned)
        #expect(!resolution.complete(with: .success(answer)))
        #expect(calls.values.isEmpty)
    }
}

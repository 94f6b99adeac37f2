import Testing
import Tomorrowland
import TomorrowlandTesting

/// The README's "30-second timeout, tested in microseconds" example, verbatim, so that the README
/// stays true.
@Suite("README: a 30-second timeout on a TestLoop")
struct ReadmeTimeoutExampleTests {
    @Test func slowRequestsTimeOut() throws {
        let loop = TestLoop()
        let (request, _) = Promise<String, Swift.Error>.makeWithResolver()
        let guarded = request.timeout(on: .loop(loop), delay: .seconds(30))

        loop.advance(by: .seconds(29))
        #expect(guarded.result == nil)
        loop.advance(by: .seconds(1))
        let error = try loop.expectError(of: guarded)
        #expect(error is PromiseTimeoutError<Swift.Error>)
        try loop.checkNoPendingWork()
    }
}

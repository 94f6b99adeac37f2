import Testing
import Tomorrowland
import TomorrowlandTesting

/// The module page's 30-second timeout (TomorrowlandTesting.docc/TomorrowlandTesting.md) in the
/// form without `withTestLoop`, which checks for pending work with `checkNoPendingWork()`.
@Suite("A 30-second timeout on a TestLoop, checked by hand")
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

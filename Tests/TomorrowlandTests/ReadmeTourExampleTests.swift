import Testing
import Tomorrowland
import TomorrowlandTestSupport

// The Getting Started article's `loadGreeting()`, at file scope as in the article's top-level code:
// a local function would not be `@Sendable`.
func loadGreeting() throws -> String { "hello" }

/// The promise examples of the articles "Getting Started" and "Cancellation", verbatim, followed
/// by checks of what their comments say, so that the articles stay true.
@Suite("Articles: the promise and cancellation examples")
struct ReadmeTourExampleTests {
    @Test func creatingPromises() async {
        let (promise, resolver) = Promise<Int, String>.makeWithResolver()
        let printed = promise.map(on: .immediate) { $0 * 2 }
            .then(on: .utility) { print("value:", $0) }  // value: 42, on a utility queue
            .catch(on: .utility) { print("error:", $0) }
        resolver.fulfill(with: 21)

        let greeting = StdPromise<String>(on: .utility) { resolver in
            resolver.onRequestCancel(on: .immediate) { $0.cancel() }
            resolver.fulfill(with: try loadGreeting())  // a throw rejects the promise
        }

        _ = await waitForResult(printed)
        _ = await waitForResult(greeting)
        #expect(printed.result == .value(42))
        #expect(greeting.result?.value == "hello")
    }

    @Test func cancellationAndTokens() {
        /// Starts work that stops as soon as anyone asks.
        func startWork() -> Promise<Int, String> {
            let (promise, resolver) = Promise<Int, String>.makeWithResolver()
            resolver.onRequestCancel(on: .immediate) { resolver in
                // Stop the work here (close a descriptor, cancel a timer), then settle the promise.
                resolver.cancel()
            }
            return promise
        }

        let doubled = startWork().map(on: .immediate) { $0 * 2 }
        doubled.requestCancel()
        // doubled.result is now .cancelled

        let token = PromiseInvalidationToken()
        let (query, resolver) = Promise<String, Never>.makeWithResolver()
        let length = query.map(on: .immediate, token: token) { $0.count }
        token.invalidate()
        resolver.fulfill(with: "swift")
        // length.result is .cancelled: the callback registered before invalidate() was skipped

        #expect(doubled.result == .cancelled)
        #expect(length.result == .cancelled)
    }
}

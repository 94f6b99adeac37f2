import Dispatch
import Foundation
import Synchronization
import Tomorrowland
import TomorrowlandTestSupport

/// A value the tests watch being released (through a weak reference).
final class TimeTestPayload: Sendable {
    let number: Int

    init(_ number: Int) {
        self.number = number
    }
}

/// A plain `Swift.Error` for the `StdPromise` forms.
struct TimeTestError: Error, Equatable {
    let code: Int
}

/// Carries a test value across threads (the tests' values are immutable).
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Builds something from an upstream promise whose only handle is dropped on return (so the
/// upstream is sealed: automatic cancellation applies), and returns it with the upstream's
/// resolver, which keeps the upstream's storage alive.
///
/// The upstream records each cancel request in `requests`, and cancels itself if `cancels`.
func sealedUpstream<Derived>(
    requests: Recorder<String>,
    cancels: Bool,
    _ derive: (Promise<Int, String>) -> Derived
) -> (Derived, Promise<Int, String>.Resolver) {
    let (upstream, resolver) = Promise<Int, String>.makeWithResolver()
    resolver.onRequestCancel(on: .immediate) { resolver in
        requests.record("cancel requested")
        if cancels { resolver.cancel() }
    }
    return (derive(upstream), resolver)
}

/// Whether this process runs with ThreadSanitizer (its runtime is linked in).
let isThreadSanitizerActive: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil

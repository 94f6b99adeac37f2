import Foundation
import TomorrowlandTestSupport

/// Something work captures, to tell whether the work was released.
final class ReleaseMarker: Sendable {}

/// Runs `body` on a new thread and returns its result, waiting for it.
func onAnotherThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let result = Recorder<T>()
    let done = DispatchSemaphore(value: 0)
    Thread {
        result.record(body())
        done.signal()
    }.start()
    done.wait()
    return result.values[0]
}

/// An error for rejections.
struct ContractError: Error, Equatable {}

import Dispatch
import Foundation
import Synchronization
import Tomorrowland
import TomorrowlandLoop

/// Runs `loop.run()` on a new thread.
final class LoopThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    let started = DispatchSemaphore(value: 0)

    init(_ loop: EventLoop) {
        // Signals once the loop runs its first work, so tests know it is being driven.
        loop.execute { [started] in started.signal() }
        Thread { [finished] in
            loop.run()
            finished.signal()
        }.start()
    }

    /// Waits until the loop has run its first work.
    func waitUntilRunning(seconds: Double = 10) -> Bool {
        started.wait(timeout: .now() + seconds) == .success
    }

    /// Waits for `run()` to return; false if it did not within `seconds`.
    func join(seconds: Double = 10) -> Bool {
        finished.wait(timeout: .now() + seconds) == .success
    }
}

/// Starts `count` threads running `body(index)` and waits for all of them.
func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

/// State that only the loop's thread touches, captured by `@Sendable` work closures.
final class LoopConfined<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: the tests touch `value` only inside one loop's work (and read it
    // after that loop's drive returned, which orders the accesses).
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A comparable summary of a promise's result, for promises whose value is `Void`.
enum Outcome<Failure: Equatable>: Equatable {
    case pending, fulfilled, rejected(Failure), cancelled

    init<Value>(_ result: PromiseResult<Value, Failure>?) {
        switch result {
        case nil: self = .pending
        case .value?: self = .fulfilled
        case .error(let error)?: self = .rejected(error)
        case .cancelled?: self = .cancelled
        }
    }
}

/// A descriptor number that is not open: the highest one the process may use, which no test
/// opens.
///
/// Tests that need a closed descriptor use this instead of closing one of their own: the kernel
/// hands out the lowest free number, so a test running in parallel can open the same number
/// again before the closed one is looked at (seen under TSan: the loop then watched another
/// test's descriptor).
func unopenedDescriptor() -> Int32 {
    let descriptor = Int32(clamping: getdtablesize() - 1)
    precondition(fcntl(descriptor, F_GETFD) == -1 && errno == EBADF, "descriptor \(descriptor) is open")
    return descriptor
}

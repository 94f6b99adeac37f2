import Foundation

/// Runs `body` on a thread of its own and resumes when it returns.
///
/// For long, CPU-bound test work that must run off the test's thread. Not a global dispatch
/// queue: on Linux, libdispatch gives a global queue no new worker while the workers it has are
/// running, and work on a higher QoS holds back the lower ones too. Measured on a 2-core machine:
/// four 8-second busy blocks on `.userInteractive` delayed a block submitted to `.userInitiated`
/// by 15.5 s, and eight by 31.5 s, so one test's busy loop made another test's `.userInitiated`
/// callback miss its 10-second bound. A thread of its own takes nothing from the pools the
/// tests under test use.
public func onDedicatedThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread {
            body()
            continuation.resume()
        }.start()
    }
}

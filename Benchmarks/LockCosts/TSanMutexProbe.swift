// Four threads update state behind the standard library's `Mutex`; the counts come out right, and
// ThreadSanitizer still reports races on that state, because on Linux (Swift 6.3.1) `Mutex` locks
// in the uninstrumented Synchronization library (a futex), whose ordering TSan does not see.
// ../scripts/lock-costs.sh --tsan builds this with -sanitize=thread and counts the reports: why
// the library keeps its state behind `LockedValue` (a pthread mutex, which TSan intercepts).
import Foundation
import Synchronization

final class Box: @unchecked Sendable {
    var count = 0
}

let counter = Mutex<Int>(0)
let box = Box()
let guardOfBox = Mutex<Void>(())
let threads = 4
let iterations = 20_000
let group = DispatchGroup()
for _ in 0..<threads {
    group.enter()
    Thread.detachNewThread {
        for _ in 0..<iterations {
            counter.withLock { $0 += 1 }
            guardOfBox.withLock { _ in box.count += 1 }
        }
        group.leave()
    }
}
group.wait()
print("counts:", counter.withLock { $0 }, box.count, "expected:", threads * iterations)

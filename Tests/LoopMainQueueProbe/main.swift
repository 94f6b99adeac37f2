// Runs an EventLoop on the main thread and checks that it drains DispatchQueue.main: blocks posted
// before the loop ran and blocks posted from another thread while it runs must run on the main
// thread, inside the loop's work. Exits 0 when they do, 1 when one ran elsewhere, and is killed by
// SIGALRM (a non-zero status) if they never run.

import Dispatch
import Foundation
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

#if canImport(Glibc)
    import Glibc
#endif

alarm(20)

let mainThread = pthread_self()
let loop = EventLoop()
let failures = Recorder<String>()

func check(_ label: String) {
    if pthread_equal(pthread_self(), mainThread) == 0 {
        failures.record("\(label): ran off the main thread")
    }
    if !loop.inEventLoop {
        failures.record("\(label): ran outside the loop's work")
    }
}

// Posted before the loop runs, before libdispatch has created the main queue's descriptor.
DispatchQueue.main.async { check("early block") }

loop.execute {
    Thread {
        // Posted from another thread while the main thread blocks in the loop.
        DispatchQueue.main.async {
            check("cross-thread block")
            // A block the main queue posts to itself runs too; the last one stops the loop.
            DispatchQueue.main.async {
                check("chained block")
                loop.stop()
            }
        }
    }.start()
}

loop.run()
loop.shutdown()

let found = failures.values
if found.isEmpty {
    print("LoopMainQueueProbe: ok")
    exit(0)
}
for failure in found { print("LoopMainQueueProbe: \(failure)") }
exit(1)

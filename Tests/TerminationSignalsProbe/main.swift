// A daemon's signal set-up in a process of its own (signals are process-wide, and tests run on
// threads that block them). Started with SIGTERM and SIGINT blocked, as a test runner starts its
// children; with the argument `unblock` it calls `TerminationSignals.unblock()` first. It then
// starts an EventLoopGroup, waits with `TerminationSignals.first(on:)` and prints, one line each:
//   "blocked before: 15 2"   what unblock() found blocked (only with `unblock`)
//   "ready"                  the watchers are registered
//   "first N"                the promise was fulfilled with signal N, on the loop's thread
// A line "quit" on standard input shuts the group down, prints "stopped" and exits 0.

import Dispatch
import Tomorrowland
import TomorrowlandLoop

#if canImport(Glibc)
    import Glibc
#endif

alarm(30)

/// Prints `line` at once (standard output is a pipe, fully buffered otherwise).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

var blocked = sigset_t()
sigemptyset(&blocked)
sigaddset(&blocked, SIGTERM)
sigaddset(&blocked, SIGINT)
pthread_sigmask(SIG_BLOCK, &blocked, nil)

if CommandLine.arguments.dropFirst().first == "unblock" {
    let found = TerminationSignals.unblock()
    say("blocked before: \(found.map(String.init).joined(separator: " "))")
}

let group = EventLoopGroup(loopCount: 1)
let loop = group.loops[0]
let first = TerminationSignals.first(on: loop)
// Queued after the registration, so it runs once the watchers are in place.
let registered: Promise<Void, NoError> = loop.submit {}
let ready = DispatchSemaphore(value: 0)
registered.always(on: .immediate) { _ in ready.signal() }
ready.wait()
say("ready")
_ = first.then(on: .loop(loop)) { signal in
    say("first \(signal) \(loop.inEventLoop ? "on the loop" : "off the loop")")
}

// `read` itself, not `readLine()`: ThreadSanitizer runs a signal handler at once only in a call
// it intercepts, and glibc's `getline` reads without going through the interceptor, so under TSan
// a signal that the kernel hands this thread would wait for a later intercepted call.
var input: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 64)
while !String(decoding: input, as: UTF8.self).contains("quit\n") {
    let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
    if count > 0 {
        input += chunk[..<count]
    } else if count == 0 || errno != EINTR {
        break
    }
}
group.syncShutdownGracefully()
say("stopped")
exit(0)

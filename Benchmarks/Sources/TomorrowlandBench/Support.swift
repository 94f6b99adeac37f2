import CBenchSupport
import Dispatch

/// A counter that loop callbacks bump through a raw pointer.
///
/// Callbacks capture this one class reference; the raw pointer means that a bump pays no dynamic
/// exclusivity check (the notes' harness rule, the same for both libraries).
final class Counter: @unchecked Sendable {
    // Invariant: only the loop thread touches `value` while work runs; the bench thread reads
    // and resets it only while no work is in flight (after a `Gate` wait, which orders the
    // accesses).
    let value: UnsafeMutablePointer<Int>

    init() {
        value = .allocate(capacity: 1)
        value.initialize(to: 0)
    }

    deinit {
        value.deallocate()
    }

    @inline(__always) func add(_ amount: Int) { value.pointee &+= amount }

    func reset() { value.pointee = 0 }

    var count: Int { value.pointee }
}

/// A one-shot signal the bench thread waits on while the loop thread does the work.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// Called on the loop thread when the work is done.
    func open() { semaphore.signal() }

    /// Blocks the bench thread until ``open()``.
    func wait() { semaphore.wait() }
}

/// Checks a counter after a run and stops the program if work was skipped: a benchmark that
/// silently did less work would report a flattering number.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("benchmark check failed: \(message())")
    }
}

/// One library driven by the harness: a name, its loop thread's CPU clock, and a runner per
/// workload.
struct LibraryUnderTest {
    /// A workload runner: does `iterations` iterations, blocks until all their work is done,
    /// and checks the counters.
    typealias Run = (_ iterations: Int) -> Void

    let name: String
    /// The CPU-time clock of the loop thread, read from the bench thread.
    let loopCPUClock: clockid_t
    /// Runners by workload id; a missing id means "not available for this library".
    let workloads: [String: Run]
    /// Stops the loop thread.
    let shutdown: () -> Void
    /// M1, which must run on a fresh heap, so it is called only in a process of its own; nil
    /// for a library that does not measure it (ours@NIO: M1 does not depend on the loop).
    let measurePendingPromiseMemory: ((_ count: Int) -> MemoryFigures)?
}

/// Bytes per pending promise, from RSS and from malloc's own accounting.
struct MemoryFigures {
    var rssBytesPerPromise: Double
    var mallocBytesPerPromise: Double
}

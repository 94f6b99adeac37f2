// The figures behind the library's lock policy (Sources/Tomorrowland/Core/LockedValue.swift and
// SpinLock.swift), measured by ../scripts/lock-costs.sh under callgrind: instructions per
// uncontended lock and unlock, and per object that holds a lock (created, locked once, destroyed),
// for the promise core's SpinLock, LockedValue (a pthread mutex) and the standard library's Mutex.
// SpinLock and LockedValue are copied here as the library writes them (their types are `package`,
// out of reach of a one-file program): keep the copies in step.
import Glibc
import Synchronization

// The promise core's SpinLock (its uncontended path; the contended one only spins less here).
struct SpinLock: ~Copyable, Sendable {
    let locked = Atomic<Bool>(false)
    @inline(__always) func lock() {
        if locked.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        lockContended()
    }
    @inline(__always) func unlock() { locked.store(false, ordering: .releasing) }
    @inline(never) func lockContended() {
        while true {
            while locked.load(ordering: .relaxed) { sched_yield() }
            if locked.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        }
    }
}

// LockedValue.
final class LockedValue<State>: @unchecked Sendable {
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @exclusivity(unchecked) var state: State
    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }
    deinit { pthread_mutex_destroy(mutex); mutex.deallocate() }
    @inline(__always) func withLock<R>(_ body: (inout State) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&state)
    }
}

final class SpinBox: @unchecked Sendable {
    let lock = SpinLock()
    @exclusivity(unchecked) var value = 0
    @inline(never) func bump() { lock.lock(); value &+= 1; lock.unlock() }
}
final class PthreadBox: @unchecked Sendable {
    let state = LockedValue(0)
    @inline(never) func bump() { state.withLock { $0 &+= 1 } }
}
final class MutexBox: Sendable {
    let state = Mutex(0)
    @inline(never) func bump() { state.withLock { $0 &+= 1 } }
}

@inline(never) func makeSpin() -> SpinBox { SpinBox() }
@inline(never) func makePthread() -> PthreadBox { PthreadBox() }
@inline(never) func makeMutex() -> MutexBox { MutexBox() }
let args = CommandLine.arguments
let kind = args[1]
let n = Int(args[2])!
let mode = args.count > 3 ? args[3] : "ops"
var sink = 0
if mode == "ops" {
    switch kind {
    case "spin": let b = SpinBox(); for _ in 0..<n { b.bump() }; sink = b.value
    case "pthread": let b = PthreadBox(); for _ in 0..<n { b.bump() }; sink = b.state.withLock { $0 }
    case "mutex": let b = MutexBox(); for _ in 0..<n { b.bump() }; sink = b.state.withLock { $0 }
    default: fatalError()
    }
} else {
    // Objects created and destroyed: the cost of a lock in a per-promise object.
    for _ in 0..<n {
        switch kind {
        case "spin": let b = makeSpin(); b.bump(); sink &+= b.value
        case "pthread": let b = makePthread(); b.bump(); sink &+= 1
        case "mutex": let b = makeMutex(); b.bump(); sink &+= 1
        default: fatalError()
        }
    }
}
if sink == -1 { print(sink) }

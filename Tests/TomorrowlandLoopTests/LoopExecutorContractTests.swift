import CLibevent
import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandExecutorContract
import TomorrowlandLoop

/// The loop module's executors, each made fresh for one check of the contract.
enum LoopExecutorSubject: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case ownedEventLoop, borrowedBaseEventLoop, eventLoopGroupLoop

    var testDescription: String { rawValue }

    func make() -> any ExecutorUnderTest {
        switch self {
        case .ownedEventLoop: OwnedEventLoopUnderTest()
        case .borrowedBaseEventLoop: BorrowedBaseEventLoopUnderTest()
        case .eventLoopGroupLoop: EventLoopGroupLoopUnderTest()
        }
    }
}

/// An `EventLoop` with its own `event_base`, run by `run()` on a thread of its own.
final class OwnedEventLoopUnderTest: ExecutorUnderTest {
    let loop = EventLoop()
    private let thread: LoopThread

    init() {
        thread = LoopThread(loop)
        _ = thread.waitUntilRunning()
    }

    var executor: any PromiseExecutor { loop }

    func tearDown() {
        loop.stop()
        _ = thread.join()
        loop.shutdown()
    }
}

/// An `EventLoop` on an `event_base` the "host" owns and runs with `event_base_dispatch` on a
/// thread of its own, as an embedding program does.
final class BorrowedBaseEventLoopUnderTest: ExecutorUnderTest, @unchecked Sendable {
    // `@unchecked Sendable`: `base` is immutable; the host thread runs it, and the test thread
    // frees it only after that thread has finished.
    private let base: OpaquePointer
    let loop: EventLoop
    private let finished = DispatchSemaphore(value: 0)

    init() {
        guard let base = event_base_new() else { fatalError("event_base_new failed") }
        self.base = base
        loop = EventLoop(borrowing: base)
        let started = DispatchSemaphore(value: 0)
        loop.execute { started.signal() }
        let host = UnsafeSendableBase(base)
        Thread { [finished] in
            event_base_dispatch(host.base)
            finished.signal()
        }.start()
        started.wait()
    }

    var executor: any PromiseExecutor { loop }

    func tearDown() {
        let host = UnsafeSendableBase(base)
        loop.execute { event_base_loopbreak(host.base) }
        finished.wait()
        loop.shutdown()
        event_base_free(base)
    }

    /// The base pointer, handed to the host thread (libevent calls on it stay on that thread).
    private struct UnsafeSendableBase: @unchecked Sendable {
        let base: OpaquePointer
        init(_ base: OpaquePointer) { self.base = base }
    }
}

/// One loop of a two-loop `EventLoopGroup`.
final class EventLoopGroupLoopUnderTest: ExecutorUnderTest {
    let group = EventLoopGroup(loopCount: 2)
    let loop: EventLoop

    init() {
        loop = group.next()
    }

    var executor: any PromiseExecutor { loop }

    func tearDown() {
        let done = DispatchSemaphore(value: 0)
        group.shutdownGracefully { done.signal() }
        done.wait()
    }
}

@Suite("Executor contract: EventLoop (owned and borrowed base), EventLoopGroup loops")
struct LoopExecutorContractTests {
    @Test(arguments: LoopExecutorSubject.allCases, ExecutorContract.allCases)
    func executorContract(subject: LoopExecutorSubject, check: ExecutorContract) {
        check.verify(subject.make())
    }
}

import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandExecutorContract
import TomorrowlandTesting

/// The core's executors, each made fresh for one check of the contract.
enum CoreExecutorSubject: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case background, utility, `default`, userInitiated, userInteractive
    case serialQueue, concurrentQueue
    case serialOperationQueue, concurrentOperationQueue
    case userWrittenExecutor
    case testLoop
    // `.main` is not here: on Linux the main queue drains only while the main thread runs
    // `dispatchMain()`, a run loop or an EventLoop, which a test cannot arrange. The loop suite's
    // `EventLoopMainQueueTests` covers `.main` through a probe process.

    var testDescription: String { rawValue }

    func make() -> any ExecutorUnderTest {
        switch self {
        case .background: ContextUnderTest(.background, isSerial: false)
        case .utility: ContextUnderTest(.utility, isSerial: false)
        case .default: ContextUnderTest(.default, isSerial: false)
        case .userInitiated: ContextUnderTest(.userInitiated, isSerial: false)
        case .userInteractive: ContextUnderTest(.userInteractive, isSerial: false)
        case .serialQueue: ContextUnderTest(.queue(DispatchQueue(label: "contract.serial")), isSerial: true)
        case .concurrentQueue:
            ContextUnderTest(
                .queue(DispatchQueue(label: "contract.concurrent", attributes: .concurrent)), isSerial: false)
        case .serialOperationQueue:
            ContextUnderTest(.operationQueue(makeOperationQueue(maxConcurrent: 1)), isSerial: true)
        case .concurrentOperationQueue:
            ContextUnderTest(.operationQueue(makeOperationQueue(maxConcurrent: 4)), isSerial: false)
        case .userWrittenExecutor:
            ContextUnderTest(.executor(SerialQueueExecutor(tag: "contract.user")), isSerial: true)
        case .testLoop: TestLoopUnderTest()
        }
    }

    private func makeOperationQueue(maxConcurrent: Int) -> OperationQueue {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = maxConcurrent
        return queue
    }
}

/// A `TestLoop`, driven on the test's thread in one-millisecond steps of virtual time.
struct TestLoopUnderTest: ExecutorUnderTest {
    let loop = TestLoop()

    var executor: any PromiseExecutor { loop }
    var now: Duration { loop.now }

    func drive(until condition: () -> Bool) -> Bool {
        driveVirtually(until: condition, runReady: loop.run, advance: { loop.advance(by: .milliseconds(1)) })
    }

    func tearDown() {
        loop.runAll()
    }
}

@Suite("Executor contract: Dispatch, OperationQueue, TestLoop, a user-written executor")
struct ExecutorContractTests {
    @Test(arguments: CoreExecutorSubject.allCases, ExecutorContract.allCases)
    func executorContract(subject: CoreExecutorSubject, check: ExecutorContract) {
        check.verify(subject.make())
    }
}

#if NIO
    import NIOCore
    import NIOEmbedded
    import NIOPosix
    import Testing
    import Tomorrowland
    import TomorrowlandExecutorContract
    import TomorrowlandNIO

    /// NIO loops as promise executors, each made fresh for one check of the contract.
    enum NIOExecutorSubject: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case multiThreadedEventLoopGroupLoop, embeddedEventLoop

        var testDescription: String { rawValue }

        func make() -> any ExecutorUnderTest {
            switch self {
            case .multiThreadedEventLoopGroupLoop: MultiThreadedLoopUnderTest()
            case .embeddedEventLoop: EmbeddedLoopUnderTest()
            }
        }
    }

    /// A loop of a one-thread `MultiThreadedEventLoopGroup`.
    struct MultiThreadedLoopUnderTest: ExecutorUnderTest {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        var executor: any PromiseExecutor { NIOEventLoopExecutor.shared(for: group.next()) }

        func tearDown() {
            try? group.syncShutdownGracefully()
        }
    }

    /// An `EmbeddedEventLoop`, driven on the test's thread in one-millisecond steps of its virtual
    /// clock. It belongs to the thread that made it (`inEventLoop` is always true, and other
    /// threads may not use it), so the checks that need other threads skip it.
    struct EmbeddedLoopUnderTest: ExecutorUnderTest {
        let loop = EmbeddedEventLoop()

        var executor: any PromiseExecutor { NIOEventLoopExecutor.shared(for: loop) }
        var acceptsOtherThreads: Bool { false }
        var isCurrentOnlyInsideWork: Bool { false }
        var now: Duration { .nanoseconds(Int64(loop.now.uptimeNanoseconds)) }

        func drive(until condition: () -> Bool) -> Bool {
            driveVirtually(until: condition, runReady: loop.run, advance: { loop.advanceTime(by: .milliseconds(1)) })
        }

        func tearDown() {
            try? loop.syncShutdownGracefully()
        }
    }

    @Suite("Executor contract: NIO loops")
    struct NIOExecutorContractTests {
        @Test(arguments: NIOExecutorSubject.allCases, ExecutorContract.allCases)
        func executorContract(subject: NIOExecutorSubject, check: ExecutorContract) {
            check.verify(subject.make())
        }
    }
#endif

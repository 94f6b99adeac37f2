import Dispatch
import Foundation
import Tomorrowland
import TomorrowlandTestSupport

/// One executor as the contract suite drives it: the executor, what it promises beyond the
/// protocol's minimum, its clock, and how a test makes it progress.
///
/// Real-time executors (queues, loops on threads of their own) use the defaults: ``drive(until:)``
/// polls for up to `generousTimeout` while the executor's threads work. Manually driven executors
/// (a `TestLoop`, NIO's `EmbeddedEventLoop`) run their ready work and move their virtual clock in
/// small steps instead, on the test's thread.
public protocol ExecutorUnderTest: Sendable {
    /// The executor the checks submit to.
    var executor: any PromiseExecutor { get }

    /// Whether the executor runs one item at a time, in submission order. False for Dispatch's
    /// global queues and concurrent `OperationQueue`s: the checks then only require that nothing
    /// runs inside the submitting call, not an order.
    var isSerial: Bool { get }

    /// Whether threads other than the test's may submit, schedule and read ``PromiseExecutor/isCurrent``.
    /// False for NIO's `EmbeddedEventLoop`, which belongs to the thread that made it.
    var acceptsOtherThreads: Bool { get }

    /// Whether ``PromiseExecutor/isCurrent`` is false on the test's thread outside the executor's
    /// work. False for `EmbeddedEventLoop`, whose `inEventLoop` is always true.
    var isCurrentOnlyInsideWork: Bool { get }

    /// The executor's clock, as a duration since an arbitrary origin: virtual time for virtual
    /// loops, the monotonic clock otherwise.
    var now: Duration { get }

    /// Makes the executor progress until `condition` holds; answers whether it did (false when the
    /// time limit passed first). Called on the test's thread.
    func drive(until condition: () -> Bool) -> Bool

    /// Releases the executor's resources (stops loops, joins threads).
    func tearDown()
}

private let realTimeOrigin = ContinuousClock.now

extension ExecutorUnderTest {
    public var isSerial: Bool { true }
    public var acceptsOtherThreads: Bool { true }
    public var isCurrentOnlyInsideWork: Bool { true }

    /// The monotonic clock (for executors whose timers run in real time).
    public var now: Duration { ContinuousClock.now - realTimeOrigin }

    /// Polls `condition` for up to `generousTimeout` (the executor's threads do the work).
    public func drive(until condition: () -> Bool) -> Bool {
        waitUntil(condition)
    }

    public func tearDown() {}
}

/// Drives a manually driven, virtual-time loop: `runReady` runs what is ready, `advance` moves
/// the clock by one millisecond and runs what comes due; up to `limit` of virtual time.
public func driveVirtually(
    until condition: () -> Bool, limit: Duration = .seconds(60), runReady: () -> Void, advance: () -> Void
) -> Bool {
    runReady()
    var elapsed: Duration = .zero
    while !condition() {
        if elapsed >= limit { return false }
        advance()
        elapsed += .milliseconds(1)
    }
    return true
}

/// A Dispatch-based or `OperationQueue`-based executor, reached through its promise context.
public struct ContextUnderTest: ExecutorUnderTest {
    public let context: PromiseContext
    public let isSerial: Bool

    /// `context`'s executor; `isSerial` says whether it runs one item at a time, in order.
    public init(_ context: PromiseContext, isSerial: Bool) {
        self.context = context
        self.isSerial = isSerial
    }

    public var executor: any PromiseExecutor { context.executor }
}

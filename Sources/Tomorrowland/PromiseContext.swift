import CTomorrowlandSupport
import Dispatch
import Foundation

/// Where a promise callback runs.
///
/// Tomorrowland's contexts, plus ``executor(_:)`` for any ``PromiseExecutor`` (an event loop, a
/// test loop, or your own). Every asynchronous context reaches the promise core through the
/// executor protocol; see ``executor``.
public enum PromiseContext: Sendable {
    /// The main queue, with same-pass chaining: a `.main` callback triggered while a `.main`
    /// callback runs is not posted again but runs right after it, in the same main-queue pass.
    ///
    /// - Important: On Linux the main queue drains only while the main thread runs
    ///   `dispatchMain()`, a Foundation run loop, or a `TomorrowlandLoop` `EventLoop`.
    case main
    /// `DispatchQueue.global(qos: .background)`.
    case background
    /// `DispatchQueue.global(qos: .utility)`.
    case utility
    /// `DispatchQueue.global(qos: .default)`.
    case `default`
    /// `DispatchQueue.global(qos: .userInitiated)`.
    case userInitiated
    /// `DispatchQueue.global(qos: .userInteractive)`.
    case userInteractive
    /// The given dispatch queue (`queue.async`).
    case queue(DispatchQueue)
    /// The given operation queue (`queue.addOperation`).
    case operationQueue(OperationQueue)
    /// Synchronously, on whichever thread triggers the callback: the registering thread when the
    /// promise is already resolved, the resolving thread otherwise.
    case immediate
    /// Synchronously when the callback is triggered by registering on an already-resolved
    /// promise (with ``isExecutingNow`` set to `true`), otherwise like the wrapped context.
    indirect case nowOr(PromiseContext)
    /// The given executor: an `EventLoop`, a `TestLoop`, or any ``PromiseExecutor``.
    case executor(any PromiseExecutor)

    /// `.main` when read on the main thread, `.default` otherwise.
    ///
    /// Used as a default argument, so it is evaluated at the call site.
    public static var auto: PromiseContext {
        twl_is_main_thread() ? .main : .default
    }

    /// Whether the current callback runs synchronously because of a `.nowOr` context.
    ///
    /// `true` only inside a `.nowOr(_:)` callback that was triggered synchronously (registered on
    /// an already-resolved promise), and inside `.immediate` work started from there.
    public static var isExecutingNow: Bool {
        ExecutionFlags.isExecutingNow
    }

    /// The context for a Dispatch quality-of-service class.
    ///
    /// `.unspecified` maps to `.default`.
    public init(qos: DispatchQoS.QoSClass) {
        switch qos {
        case .background: self = .background
        case .utility: self = .utility
        case .default, .unspecified: self = .default
        case .userInitiated: self = .userInitiated
        case .userInteractive: self = .userInteractive
        @unknown default: self = .queue(.global(qos: qos))
        }
    }
}

extension PromiseContext: Hashable {
    /// Plain cases compare by case; queues, operation queues and executors by identity.
    ///
    /// `.queue(.main)` is not equal to `.main`.
    public static func == (lhs: PromiseContext, rhs: PromiseContext) -> Bool {
        switch (lhs, rhs) {
        case (.main, .main), (.background, .background), (.utility, .utility),
            (.default, .default), (.userInitiated, .userInitiated),
            (.userInteractive, .userInteractive), (.immediate, .immediate):
            return true
        case let (.queue(a), .queue(b)): return a === b
        case let (.operationQueue(a), .operationQueue(b)): return a === b
        case let (.nowOr(a), .nowOr(b)): return a == b
        case let (.executor(a), .executor(b)): return a === b
        default: return false
        }
    }

    /// Hashes the case and, for the cases with a payload, the payload's identity.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .main: hasher.combine(0)
        case .background: hasher.combine(1)
        case .utility: hasher.combine(2)
        case .default: hasher.combine(3)
        case .userInitiated: hasher.combine(4)
        case .userInteractive: hasher.combine(5)
        case .queue(let queue):
            hasher.combine(6)
            hasher.combine(ObjectIdentifier(queue))
        case .operationQueue(let queue):
            hasher.combine(7)
            hasher.combine(ObjectIdentifier(queue))
        case .immediate: hasher.combine(8)
        case .nowOr(let inner):
            hasher.combine(9)
            inner.hash(into: &hasher)
        case .executor(let executor):
            hasher.combine(10)
            hasher.combine(ObjectIdentifier(executor))
        }
    }
}

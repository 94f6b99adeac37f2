import CTomorrowlandSupport

/// What the pending-promise tracking records about a root promise when it is made.
struct PromiseCreationRecord: @unchecked Sendable {
    // `@unchecked Sendable`: the metatypes are immutable (Swift 6 does not yet see `Any.Type` as
    // Sendable).
    let valueType: Any.Type
    let errorType: Any.Type
    let fileID: StaticString
    let line: UInt
    let context: PromiseContext?
    /// Made at, by the monotonic clock.
    let createdAt: ContinuousClock.Instant
    /// The `withTestLoop` scope it was made in, and its virtual time then.
    let scope: PendingPromiseScope?
    let virtualCreatedAt: Duration?
    /// The executor whose work the creating thread was running (an identity, never
    /// dereferenced): a loop's shutdown lists the promises made on it.
    let creatorExecutor: UInt
    /// Creation order, for "oldest first" among promises made in the same clock tick.
    let sequence: UInt64

    /// `Promise<Int, Error>`.
    var typeDescription: String {
        "Promise<\(valueType), \(errorType)>"
    }

    /// The public form, aged now.
    func pendingPromise(isCancelRequested: Bool, now: ContinuousClock.Instant = .now) -> PendingPromise {
        let virtualAge = scope.flatMap { scope in virtualCreatedAt.map { scope.now() - $0 } }
        return PendingPromise(
            type: typeDescription, fileID: fileID.description, line: Int(line),
            context: context.map(Self.describe), age: now - createdAt, virtualAge: virtualAge,
            isCancelRequested: isCancelRequested)
    }

    /// A context as code spells it.
    static func describe(_ context: PromiseContext) -> String {
        switch context {
        case .main: ".main"
        case .background: ".background"
        case .utility: ".utility"
        case .default: ".default"
        case .userInitiated: ".userInitiated"
        case .userInteractive: ".userInteractive"
        case .queue(let queue): ".queue(\(queue.label))"
        case .operationQueue(let queue): ".operationQueue(\(queue.name ?? "unnamed"))"
        case .immediate: ".immediate"
        case .nowOr(let context): ".nowOr(\(describe(context)))"
        case .executor(let executor): ".executor(\(type(of: executor)))"
        }
    }
}

import Tomorrowland

/// What a running piece of loop work is, in two words that a loop can publish with plain atomic
/// stores (``StallPublication``) and a stall watchdog can name later, on its own thread, without
/// touching the work. Shared by `EventLoop` and the NIO executor.
///
/// The address is never dereferenced as an object: it is a function's entry point (named from the
/// binary's symbol table) or a type's metadata (immortal). So naming a piece of work that has
/// ended meanwhile is still safe; at worst the name is that of work that just ended.
@usableFromInline
package struct LoopWorkIdentity: Equatable, Sendable {
    /// The kinds of work, as published (0 means no work is running).
    @usableFromInline
    package enum Kind: UInt, Sendable {
        case idle = 0
        case closure
        case promiseCallback
        case promiseTimer
        case concurrencyJob
        case watcherHandler
        case libeventCallback
        case mainQueue
        /// The loop's own wake-up and timer events: not counted, not published.
        case loopEvent
    }

    @usableFromInline package var kind: Kind
    /// A function's entry point (closures, watcher handlers), a type's metadata (promise
    /// callbacks and timers), or 0.
    @usableFromInline package var address: UInt

    // Inlinable, not stored constants: `EventLoop` passes them on its callback path, which then
    // builds the two words in place instead of calling another module's global accessor.
    /// No work running.
    @inlinable package static var idle: LoopWorkIdentity { LoopWorkIdentity(kind: .idle, address: 0) }
    /// A libevent callback (a TCP event).
    @inlinable package static var libeventCallback: LoopWorkIdentity {
        LoopWorkIdentity(kind: .libeventCallback, address: 0)
    }
    /// The `DispatchQueue.main` blocks a loop on the main thread drains.
    @inlinable package static var mainQueue: LoopWorkIdentity { LoopWorkIdentity(kind: .mainQueue, address: 0) }
    /// The loop's own wake-up and timer events.
    @inlinable package static var loopEvent: LoopWorkIdentity { LoopWorkIdentity(kind: .loopEvent, address: 0) }

    /// The entry point of `body`.
    package static func closure(_ body: @escaping @Sendable () -> Void) -> LoopWorkIdentity {
        LoopWorkIdentity(kind: .closure, address: ClosureLayout.entryPoint(of: ClosureLayout.Holder(body: body)))
    }

    /// A watcher handler, by the entry point of the closure the user gave.
    @inlinable
    package static func watcherHandler(entryPoint: UInt) -> LoopWorkIdentity {
        LoopWorkIdentity(kind: .watcherHandler, address: entryPoint)
    }

    /// The identity of a piece of work a loop runs.
    package init(_ work: borrowing LoopWork) {
        switch work {
        case .closure(let body):
            self = .closure(body)
        case .promiseJob(let job):
            self.init(kind: .promiseCallback, address: UInt(bitPattern: ObjectIdentifier(type(of: job))))
        case .promiseTimer(let timer):
            self.init(kind: .promiseTimer, address: UInt(bitPattern: ObjectIdentifier(type(of: timer))))
        case .job:
            self.init(kind: .concurrencyJob, address: 0)
        }
    }

    @inlinable
    package init(kind: Kind, address: UInt) {
        self.kind = kind
        self.address = address
    }

    /// A readable name: a demangled symbol, a type, or the kind of work. Slow (it may read the
    /// binary's symbol table): for reports only.
    package var name: String {
        switch kind {
        case .idle:
            return "no work"
        case .closure:
            return "closure " + FunctionSymbols.describe(address: address)
        case .watcherHandler:
            return "watcher handler " + FunctionSymbols.describe(address: address)
        case .promiseCallback:
            return "promise callback (\(typeName))"
        case .promiseTimer:
            return "promise timer (\(typeName))"
        case .concurrencyJob:
            return "a Swift Concurrency job"
        case .libeventCallback:
            return "a libevent callback (TCP, or the loop's own events)"
        case .mainQueue:
            return "DispatchQueue.main blocks"
        case .loopEvent:
            return "the loop's own wake-up"
        }
    }

    private var typeName: String {
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return "unknown type" }
        // The address was taken from `ObjectIdentifier(type(of:))`: type metadata, never freed.
        return _typeName(unsafeBitCast(pointer, to: Any.Type.self), qualified: true)
    }
}

/// How a Swift closure value is laid out: the entry point of its function, then its context.
package enum ClosureLayout {
    /// Holds a closure as a stored property of a concrete type, so that it keeps its own entry
    /// point: passed directly to a generic function (`unsafeBitCast`), the closure would be
    /// wrapped in a reabstraction thunk, and the thunk's address would name nothing useful.
    package struct Holder {
        package var body: @Sendable () -> Void

        package init(body: @escaping @Sendable () -> Void) {
            self.body = body
        }
    }

    /// The entry point of the closure `holder` holds (a holder of one closure, like ``Holder``).
    /// Relies on the layout of a thick function value in Swift's ABI (two words: the function,
    /// then its context), checked by the size.
    package static func entryPoint<Holding>(of holder: Holding) -> UInt {
        guard MemoryLayout<Holding>.size == 2 * MemoryLayout<UInt>.size else { return 0 }
        return unsafeBitCast(holder, to: (UInt, UInt).self).0
    }
}

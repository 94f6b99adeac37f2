import CTomorrowlandSupport

/// The per-thread flags of the execution model, kept in C `_Thread_local` slots so that a read
/// is one load (Swift has no thread-local storage of its own).
///
/// `@usableFromInline`: without it, the `@inlinable` members of a `package` type are not
/// serialized, and the loops' modules call them instead of inlining them.
@usableFromInline
package enum ExecutionFlags {
    /// The flag behind ``PromiseContext/isExecutingNow``.
    package static var isExecutingNow: Bool {
        get { twl_get_is_executing_now() }
        set { twl_set_is_executing_now(newValue) }
    }

    /// Runs `body` with ``isExecutingNow`` set to `value`, restoring the previous value after.
    ///
    /// Inlinable: a `map` link on `.immediate` runs its callback through this, inlined into the
    /// caller's module.
    @inlinable
    @inline(__always)
    package static func with<R>(isExecutingNow value: Bool, _ body: () throws -> R) rethrows -> R {
        let previous = twl_get_is_executing_now()
        // Every executor job runs with `false`, which is almost always the value already set:
        // then there is nothing to write, nor to restore (two thread-local writes per job).
        if previous == value { return try body() }
        twl_set_is_executing_now(value)
        defer { twl_set_is_executing_now(previous) }
        return try body()
    }

    /// The executor whose work the current thread is running, as an opaque identity.
    package static var currentExecutor: UnsafeRawPointer? {
        get { twl_get_current_executor() }
        set { twl_set_current_executor(newValue) }
    }

    /// Runs `body` with ``currentExecutor`` set to `executor`, restoring the previous value after.
    @inline(__always)
    package static func running<R>(on executor: AnyObject, _ body: () throws -> R) rethrows -> R {
        let previous = twl_get_current_executor()
        // An identity only: the pointer is compared (`isRunning(on:)`), never dereferenced.
        twl_set_current_executor(UnsafeRawPointer(Unmanaged.passUnretained(executor).toOpaque()))
        defer { twl_set_current_executor(previous) }
        return try body()
    }

    /// Whether the current thread runs `executor`'s work, according to ``currentExecutor``.
    ///
    /// Inlinable: the loops ask on every submission (one thread-local load and a compare).
    @inlinable
    @inline(__always)
    package static func isRunning(on executor: AnyObject) -> Bool {
        // Compared as integers: as optional pointers the compare tested for nil first, a second
        // branch on every submission for nothing (`executor`'s address is never zero).
        // Identities compared, no reference taken (see `running(on:_:)`).
        UInt(bitPattern: twl_get_current_executor())
            == UInt(bitPattern: Unmanaged.passUnretained(executor).toOpaque())
    }
}

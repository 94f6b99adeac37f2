import CTomorrowlandSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Records where root promises are made, so that the ones that never resolve can be named: the
/// pending-promise report.
///
/// Off by default. Turn it on for a process with the environment variable
/// `TOMORROWLAND_PENDING_PROMISES` (``environmentVariable``): `1` records every root promise, a
/// number N one in N (sampling, for production); or from code with ``start(samplingInterval:)``.
/// Then:
/// - ``report()`` lists the recorded promises still pending, oldest first, each with where it
///   was made (`#fileID` and `#line`), its type, the context of its work closure and its age;
/// - a promise whose resolvers are all dropped unresolved is reported as it dies, with where it
///   was made, to ``droppedResolverHandler`` (standard error by default). It is still cancelled,
///   as every such promise is;
/// - `withTestLoop` names the promises made in its scope that are still pending when it fails for
///   pending work, with their virtual ages;
/// - `EventLoop.shutdown()` writes to standard error the promises made on the loop's thread that
///   are still pending.
///
/// Root promises are the ones made by `Promise.makeWithResolver()`, `Promise(on:_:)`,
/// `DelayedPromise(on:_:)` (once started), the `Task` bridges and the bridge from a SwiftNIO
/// future, the library's own included (a `sleep` or a TCP connect is named by its site in the
/// library). Derived promises (`map`, `then`, …) are not recorded: they wait for a root that is.
///
/// Cost: off, a root promise pays one relaxed load and a branch, and a derived promise or a
/// callback nothing, since a recorded promise gets a box subclass of its own. On, a recorded root
/// pays a lock, a dictionary insertion and removal and a clock reading, and keeps a 136-byte
/// record while it lives; with sampling, every root pays a call and a count, one in N the rest.
/// The figures: `Benchmarks/README.md`, "The pending-promise report: what it costs".
public enum PendingPromiseTracking {
    /// The environment variable read at start-up: a positive number N turns tracking on with
    /// sampling interval N (`1`: every root promise).
    public static let environmentVariable = "TOMORROWLAND_PENDING_PROMISES"

    private struct Settings {
        /// ``start(samplingInterval:)`` calls not yet balanced by ``stop()``.
        var starts = 0
        /// The interval of the latest start.
        var interval: UInt32 = 1
        var droppedResolverHandler: @Sendable (PendingPromise) -> Void = writeToStandardError
    }

    private static let settings = LockedValue(Settings())

    /// Turns tracking on, recording one root promise in `samplingInterval` from now on (each
    /// thread counts its own). Promises made before are not recorded.
    ///
    /// Calls nest: tracking stays on until as many ``stop()`` calls, so that independent users
    /// (tests running in parallel) do not turn each other's tracking off. The latest call's
    /// interval applies. With the environment variable set, tracking is on without a call and
    /// ``stop()`` cannot turn it off.
    ///
    /// - Parameter samplingInterval: Record one root promise in this many; at least 1.
    public static func start(samplingInterval: Int = 1) {
        precondition(samplingInterval >= 1, "PendingPromiseTracking.start: the sampling interval must be at least 1")
        settings.withLock { settings in
            settings.starts += 1
            settings.interval = UInt32(clamping: samplingInterval)
            apply(settings)
        }
    }

    /// Balances one ``start(samplingInterval:)``; the last one turns tracking off (unless the
    /// environment variable turned it on). Promises recorded stay recorded until they die.
    public static func stop() {
        settings.withLock { settings in
            guard settings.starts > 0 else { return }
            settings.starts -= 1
            apply(settings)
        }
    }

    /// Whether root promises are being recorded.
    public static var isOn: Bool {
        twl_get_promise_tracking_interval() != 0
    }

    /// One root promise in this many is recorded; 0 when tracking is off.
    public static var samplingInterval: Int {
        Int(twl_get_promise_tracking_interval())
    }

    /// The recorded root promises still pending, oldest first.
    ///
    /// Promises recorded while tracking was on are listed even after it went off. Safe from any
    /// thread; takes a lock that every recorded promise's creation and death take too, for as long
    /// as it reads each promise's state.
    public static func report() -> PendingPromiseReport {
        PendingPromiseReport(
            promises: PendingPromiseRegistry.shared.pending { _ in true }, samplingInterval: samplingInterval)
    }

    /// Called with the record of a promise that dies pending, its resolvers all dropped: on the
    /// thread that released the last reference, inside the promise's deinit, so it must not
    /// block for long. Writes ``PendingPromise/description`` to standard error by default.
    public static var droppedResolverHandler: @Sendable (PendingPromise) -> Void {
        get { settings.withLock { $0.droppedResolverHandler } }
        set { settings.withLock { $0.droppedResolverHandler = newValue } }
    }

    /// The default ``droppedResolverHandler``: one line to standard error.
    public static let writeToStandardError: @Sendable (PendingPromise) -> Void = { promise in
        var bytes = Array(
            "Tomorrowland: a promise was dropped unresolved (its resolver released without resolving it; it is cancelled): \(promise)\n"
                .utf8)
        bytes.withUnsafeMutableBytes { buffer in
            _ = write(2, buffer.baseAddress, buffer.count)
        }
    }

    /// The promises made in `scope` still pending, oldest first.
    package static func pending(in scope: PendingPromiseScope) -> [PendingPromise] {
        PendingPromiseRegistry.shared.pending { $0.scope === scope }
    }

    /// The promises made while the calling thread ran `executor`'s work still pending, oldest
    /// first.
    package static func pending(madeOn executor: AnyObject) -> [PendingPromise] {
        let identity = UInt(bitPattern: Unmanaged.passUnretained(executor).toOpaque())
        return PendingPromiseRegistry.shared.pending { $0.creatorExecutor == identity }
    }

    /// From a dying tracked box.
    static func reportDroppedResolver(_ promise: PendingPromise) {
        let handler = settings.withLock { $0.droppedResolverHandler }
        handler(promise)
    }

    /// Sets the C switch from the settings and the environment; under the settings' lock.
    private static func apply(_ settings: Settings) {
        let environment = twl_get_promise_tracking_environment_interval()
        let interval = settings.starts > 0 ? settings.interval : environment
        twl_set_promise_tracking_interval(interval)
    }
}

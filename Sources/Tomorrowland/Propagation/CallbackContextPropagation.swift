import CTomorrowlandSupport

/// The switch and the capture function behind context propagation: while on, every promise
/// callback, work closure and cancel handler captures the task-local context current where it is
/// registered, and runs with that context restored (BehaviourRules: B10).
///
/// Off by default. Off, a registration reads one C global (an atomic load) and takes a
/// predictable branch, a few instructions per callback (Benchmarks/README.md, "Context
/// propagation: what it costs"). While on, a registration calls the capture function and keeps
/// its result; a `map` link keeps it in its ``CallbackBox`` (a larger storage kind,
/// ``ContextCarryingCallback``), the other callbacks in a wrapping closure.
///
/// TomorrowlandTracing turns it on for swift-distributed-tracing's `ServiceContext`; the core
/// itself never names a context type.
@usableFromInline
package enum CallbackContextPropagation {
    /// Whether registrations capture their context now.
    @inlinable
    package static var isOn: Bool {
        twl_get_context_propagation() != 0
    }

    /// The context current on this thread or task, as the installed capture function captures it.
    /// Call only while ``isOn``: the capture function is installed before the switch is first
    /// turned on (the switch's load acquires what the installation published).
    @usableFromInline
    @inline(never)
    package static func captureCurrent() -> any CapturedCallbackContext {
        // Written once, under `state`'s lock, before the release store that turned the switch on;
        // this call follows an acquiring load that saw it on.
        captureFunction.unsafelyUnwrapped()
    }

    /// `callback`, wrapped so that it runs with the context current now (a `tap`'s closure).
    /// Out of line, specialised in the caller's module. Consumes `callback`: the wrapper holds
    /// its only reference (B7).
    @inlinable
    @inline(never)
    package static func carryingCurrentContext<Argument>(
        _ callback: consuming @escaping @Sendable (Argument) -> Void
    ) -> @Sendable (Argument) -> Void {
        let captured = captureCurrent()
        let callback = consume callback
        return { argument in captured.withRestored { callback(argument) } }
    }

    /// Turns propagation on with `capture` as the capture function. Calls nest like
    /// ``PendingPromiseTracking/start(samplingInterval:)``: propagation stays on until as many
    /// ``stop()`` calls.
    ///
    /// - Precondition: Every call passes a function with the same meaning: the first one installed
    ///   stays (one process has one kind of context to propagate).
    package static func start(capturingWith capture: @escaping @Sendable () -> any CapturedCallbackContext) {
        state.withLock { starts in
            if captureFunction == nil { captureFunction = capture }
            starts += 1
            twl_set_context_propagation(1)
        }
    }

    /// Balances one ``start(capturingWith:)``; the last one turns propagation off. Callbacks
    /// registered while it was on keep their context.
    package static func stop() {
        state.withLock { starts in
            guard starts > 0 else { return }
            starts -= 1
            if starts == 0 { twl_set_context_propagation(0) }
        }
    }

    /// ``start(capturingWith:)`` calls not yet balanced by ``stop()``.
    private static let state = LockedValue(0)

    /// The capture function: `nil` until the first start, never changed after.
    nonisolated(unsafe) private static var captureFunction: (@Sendable () -> any CapturedCallbackContext)?
}

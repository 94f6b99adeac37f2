#if ServiceLifecycle
    import Tomorrowland

    /// A value that is settled once and awaited by one task: the first ``settle(_:)`` wins.
    ///
    /// The waiter resumes outside the lock, on the settling thread's call (a continuation resume
    /// only schedules the task), so settling is safe from any thread and from inside locks of
    /// other libraries (swift-service-lifecycle calls graceful-shutdown handlers under its own).
    final class OneShotGate<Value: Sendable>: Sendable {
        private enum State {
            case open(waiter: CheckedContinuation<Value, Never>?)
            case settled(Value)
        }

        private let state = LockedValue<State>(.open(waiter: nil))

        /// Settles the gate with `value` unless it is settled already; true if this call settled it.
        @discardableResult
        func settle(_ value: Value) -> Bool {
            let (settled, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Value, Never>?) in
                guard case .open(let waiter) = state else { return (false, nil) }
                state = .settled(value)
                return (true, waiter)
            }
            waiter?.resume(returning: value)
            return settled
        }

        /// The settled value, once there is one. One waiter at a time.
        func wait() async -> Value {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let ready = state.withLock { state -> Value? in
                    switch state {
                    case .settled(let value):
                        return value
                    case .open(waiter: nil):
                        state = .open(waiter: continuation)
                        return nil
                    case .open(waiter: .some):
                        preconditionFailure("OneShotGate: a second task waits on a gate that has one waiter")
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
#endif

import Tomorrowland

extension TCPConnection {
    /// User code a transition caused: run by ``runCallbacks()`` once the state is settled.
    ///
    /// Resolving a promise is user code too: its `.immediate` callbacks run inside the resolver
    /// call.
    enum Callback {
        /// A write or flush: fulfilled (`nil`) or rejected with the error.
        case flush(Promise<Void, TCPError>.Resolver, TCPError?)
        /// A promise read's outcome.
        case read(Promise<[UInt8], TCPError>.Resolver, Result<[UInt8], TCPError>)
        /// A promise read cancelled on request.
        case readCancelled(Promise<[UInt8], TCPError>.Resolver)
        /// ``TCPConnection/onWritable``, if the connection is still open when its turn comes.
        case writable
        /// The ``TCPConnection/onInputClosed`` handler that was set at the peer's end of input.
        case inputClosed(() -> Void)
        /// ``TCPConnection/closed``.
        case closed(TCPError?)
    }

    /// Runs the queued callbacks in order, including those they queue, on the loop's thread.
    ///
    /// Called at the end of every entry point (public method, libevent callback, loop task), after
    /// its transitions and their actions. A callback that calls into the connection queues what
    /// that causes behind itself instead of running it nested: callbacks never interleave, and
    /// the write and flush promises that are fulfilled are fulfilled in the order of the calls
    /// (a rejection at the call, on a closing connection, may come before an earlier flush).
    func runCallbacks() {
        guard !pendingCallbacks.isEmpty, !isRunningCallbacks else { return }
        isRunningCallbacks = true
        var index = 0
        while index < pendingCallbacks.count {
            // Moved out, not copied: the slot keeps a case without payload, so nothing is
            // retained here and released again when the array is emptied.
            var callback = Callback.writable
            swap(&callback, &pendingCallbacks[index])
            index += 1
            perform(callback)
        }
        pendingCallbacks.removeAll(keepingCapacity: pendingCallbacks.capacity <= 64)
        isRunningCallbacks = false
    }

    private func perform(_ callback: consuming Callback) {
        switch consume callback {
        case .flush(let resolver, nil):
            resolver.fulfill(with: ())
        case .flush(let resolver, let error?):
            resolver.reject(with: error)
        case .read(let resolver, .success(let bytes)):
            resolver.fulfill(with: bytes)
        case .read(let resolver, .failure(let error)):
            resolver.reject(with: error)
        case .readCancelled(let resolver):
            resolver.cancel()
        case .writable:
            if machine.lifecycle == .open, let onWritable = onWritableStorage { onWritable() }
        case .inputClosed(let handler):
            handler()
        case .closed(let result):
            closedResolver.fulfill(with: result)
        }
    }
}

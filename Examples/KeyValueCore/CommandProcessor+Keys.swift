extension CommandProcessor {
    func get(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count == 2 else { return arityError("get", &out) }
        let key = StoreKey.borrowed(request.argument(1))
        // The value array is retained, not copied, under the lock; its bytes are copied into
        // the reply after the lock is released.
        if let value = store.withShard(for: key, { $0.get(key) }) {
            out.bulk(value)
        } else {
            out.null()
        }
        return .proceed
    }

    func set(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count >= 3 else { return arityError("set", &out) }
        var condition = KeyValueStore.SetCondition.always
        var expiry: (value: Int, unit: Int64, absolute: Bool)?
        var keepTTL = false
        var returnOld = false
        var index = 3
        while index < count {
            let option = request.argument(index)
            let hasNext = index + 1 < count
            if CommandName.matches(option, "nx") && condition != .ifPresent {
                condition = .ifAbsent
            } else if CommandName.matches(option, "xx") && condition != .ifAbsent {
                condition = .ifPresent
            } else if CommandName.matches(option, "get") {
                returnOld = true
            } else if CommandName.matches(option, "keepttl") && expiry == nil {
                keepTTL = true
            } else if hasNext && expiry == nil && !keepTTL,
                let (unit, absolute) = Self.expiryOption(option)
            {
                guard let value = ASCIIInteger.parse(request.argument(index + 1)) else {
                    out.error(Self.notAnInteger)
                    return .proceed
                }
                expiry = (value, unit, absolute)
                index += 1
            } else {
                out.error(Self.syntaxError)
                return .proceed
            }
            index += 1
        }
        var deadline: Int64?
        if let expiry {
            let (scaled, overflow) = Int64(expiry.value).multipliedReportingOverflow(by: expiry.unit)
            let now = expiry.absolute ? 0 : store.clock.nowMilliseconds
            let (sum, overflow2) = scaled.addingReportingOverflow(now)
            guard expiry.value > 0, !overflow, !overflow2 else {
                out.error("ERR invalid expire time in 'set' command")
                return .proceed
            }
            deadline = expiry.absolute ? Self.monotonicDeadline(fromUnixMilliseconds: sum, now: store.clock) : sum
        }
        let key = StoreKey.borrowed(request.argument(1))
        let value = Array(request.argument(2))
        let (stored, old) = store.withShard(for: key) { shard -> (Bool, [UInt8]?) in
            let old = returnOld ? shard.get(key) : nil
            return (shard.set(key, value: value, deadline: deadline, condition: condition, keepTTL: keepTTL), old)
        }
        if returnOld {
            if let old { out.bulk(old) } else { out.null() }
        } else if stored {
            out.ok()
        } else {
            out.null()
        }
        return .proceed
    }

    /// EX/PX/EXAT/PXAT: milliseconds per unit and whether the time is absolute (Unix time).
    private static func expiryOption(_ option: UnsafeRawBufferPointer) -> (Int64, Bool)? {
        if CommandName.matches(option, "ex") { return (1000, false) }
        if CommandName.matches(option, "px") { return (1, false) }
        if CommandName.matches(option, "exat") { return (1000, true) }
        if CommandName.matches(option, "pxat") { return (1, true) }
        return nil
    }

    /// Converts a Unix-time deadline to the store's monotonic clock.
    private static func monotonicDeadline(fromUnixMilliseconds unix: Int64, now clock: KeyValueClock) -> Int64 {
        let (delta, overflow1) = unix.subtractingReportingOverflow(clock.unixMilliseconds)
        let (deadline, overflow2) = clock.nowMilliseconds.addingReportingOverflow(delta)
        // Beyond the clock's range: as good as never (but still a deadline, so TTL stays positive).
        return overflow1 || overflow2 ? Int64.max - 1 : deadline
    }

    func delete(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count >= 2 else { return arityError("del", &out) }
        var removed = 0
        for index in 1..<count {
            let key = StoreKey.borrowed(request.argument(index))
            if store.withShard(for: key, { $0.delete(key) }) { removed += 1 }
        }
        out.integer(removed)
        return .proceed
    }

    func exists(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count >= 2 else { return arityError("exists", &out) }
        var found = 0
        for index in 1..<count {
            let key = StoreKey.borrowed(request.argument(index))
            if store.withShard(for: key, { $0.exists(key) }) { found += 1 }
        }
        out.integer(found)
        return .proceed
    }

    func increment(
        _ request: RESPParser, _ count: Int, by delta: Int, _ name: String, _ out: inout RESPReplyWriter
    ) -> Outcome {
        guard count == 2 else { return arityError(name, &out) }
        let key = StoreKey.borrowed(request.argument(1))
        switch store.withShard(for: key, { $0.increment(key, by: delta) }) {
        case .success(let value): out.integer(value)
        case .failure(.notAnInteger): out.error(Self.notAnInteger)
        case .failure(.overflow): out.error("ERR increment or decrement would overflow")
        }
        return .proceed
    }

    func expire(
        _ request: RESPParser, _ count: Int, unit: Int64, _ name: String, _ out: inout RESPReplyWriter
    ) -> Outcome {
        guard count >= 3 else { return arityError(name, &out) }
        guard let amount = ASCIIInteger.parse(request.argument(2)) else {
            out.error(Self.notAnInteger)
            return .proceed
        }
        if count > 3 {
            out.error("ERR Unsupported option \(CommandName.text(request.argument(3)))")
            return .proceed
        }
        let now = store.clock.nowMilliseconds
        let (scaled, overflow) = Int64(amount).multipliedReportingOverflow(by: unit)
        let (deadline, overflow2) = scaled.addingReportingOverflow(now)
        guard !overflow, !overflow2 else {
            out.error("ERR invalid expire time in '\(name)' command")
            return .proceed
        }
        let key = StoreKey.borrowed(request.argument(1))
        out.integer(store.withShard(for: key, { $0.expire(key, at: deadline) }) ? 1 : 0)
        return .proceed
    }

    func timeToLive(
        _ request: RESPParser, _ count: Int, milliseconds: Bool, _ out: inout RESPReplyWriter
    ) -> Outcome {
        guard count == 2 else { return arityError(milliseconds ? "pttl" : "ttl", &out) }
        let key = StoreKey.borrowed(request.argument(1))
        switch store.withShard(for: key, { $0.remainingMilliseconds(key) }) {
        case nil: out.integer(-2)
        case KeyValueStore.never: out.integer(-1)
        case let remaining?:
            // As Redis: TTL rounds the remaining milliseconds to the nearest second.
            out.integer(Int(milliseconds ? remaining : remaining / 1000 + (remaining % 1000 >= 500 ? 1 : 0)))
        }
        return .proceed
    }

    func flushAll(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        if count > 2
            || (count == 2 && !CommandName.matches(request.argument(1), "sync")
                && !CommandName.matches(request.argument(1), "async"))
        {
            out.error(Self.syntaxError)
            return .proceed
        }
        store.removeAll()
        out.ok()
        return .proceed
    }
}

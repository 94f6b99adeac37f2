/// Executes parsed requests against a ``ShardedStore`` and encodes the replies, as Redis words
/// them (replies and error messages follow Redis 7).
///
/// One processor serves every connection; it holds no per-connection state. Called on the
/// connection's loop thread.
public struct CommandProcessor: Sendable {
    /// What the connection does after the reply.
    public enum Outcome: Equatable, Sendable {
        /// Keep reading requests.
        case proceed
        /// Flush the replies, then close (QUIT).
        case close
    }

    /// The key space.
    public let store: ShardedStore
    /// Extra `INFO` text: called on the connection's thread for each INFO request; returns
    /// complete `field:value` lines (the daemon reports its clients and loops).
    public let infoProvider: @Sendable () -> String

    /// A processor for `store`.
    public init(store: ShardedStore, infoProvider: @escaping @Sendable () -> String = { "" }) {
        self.store = store
        self.infoProvider = infoProvider
    }

    /// Executes the request the parser last returned and appends its reply to `out`.
    ///
    /// An empty request (no arguments) gets no reply.
    public func execute(_ request: RESPParser, into out: inout RESPReplyWriter) -> Outcome {
        let count = request.argumentCount
        guard count > 0 else { return .proceed }
        let name = request.argument(0)
        switch name.count {
        case 3:
            if CommandName.matches(name, "get") { return get(request, count, &out) }
            if CommandName.matches(name, "set") { return set(request, count, &out) }
            if CommandName.matches(name, "del") { return delete(request, count, &out) }
            if CommandName.matches(name, "ttl") { return timeToLive(request, count, milliseconds: false, &out) }
        case 4:
            if CommandName.matches(name, "ping") { return ping(request, count, &out) }
            if CommandName.matches(name, "incr") { return increment(request, count, by: 1, "incr", &out) }
            if CommandName.matches(name, "decr") { return increment(request, count, by: -1, "decr", &out) }
            if CommandName.matches(name, "echo") { return echo(request, count, &out) }
            if CommandName.matches(name, "pttl") { return timeToLive(request, count, milliseconds: true, &out) }
            if CommandName.matches(name, "quit") {
                out.ok()
                return .close
            }
            if CommandName.matches(name, "info") { return info(request, count, &out) }
        case 6:
            if CommandName.matches(name, "exists") { return exists(request, count, &out) }
            if CommandName.matches(name, "expire") { return expire(request, count, unit: 1000, "expire", &out) }
            if CommandName.matches(name, "dbsize") {
                guard count == 1 else { return arityError("dbsize", &out) }
                out.integer(store.count)
                return .proceed
            }
            if CommandName.matches(name, "config") { return config(request, count, &out) }
            if CommandName.matches(name, "select") { return select(request, count, &out) }
            if CommandName.matches(name, "client") { return client(request, count, &out) }
        case 7:
            if CommandName.matches(name, "pexpire") { return expire(request, count, unit: 1, "pexpire", &out) }
            if CommandName.matches(name, "command") { return command(request, count, &out) }
        case 8:
            if CommandName.matches(name, "flushall") { return flushAll(request, count, &out) }
        default:
            break
        }
        var message = "ERR unknown command '\(CommandName.text(name))', with args beginning with: "
        for index in 1..<count {
            message += "'\(CommandName.text(request.argument(index)))' "
        }
        out.error(message)
        return .proceed
    }

    func arityError(_ command: String, _ out: inout RESPReplyWriter) -> Outcome {
        out.error("ERR wrong number of arguments for '\(command)' command")
        return .proceed
    }

    static let notAnInteger = "ERR value is not an integer or out of range"
    static let syntaxError = "ERR syntax error"
}

extension CommandProcessor {
    func ping(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        switch count {
        case 1: out.simpleString("PONG")
        case 2: out.bulk(request.argument(1))
        default: return arityError("ping", &out)
        }
        return .proceed
    }

    func echo(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count == 2 else { return arityError("echo", &out) }
        out.bulk(request.argument(1))
        return .proceed
    }

    /// A minimal INFO: the server and keyspace sections clients look at.
    func info(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        let keys = store.count
        var text = "# Server\r\nredis_version:7.0.0\r\nredis_mode:standalone\r\nserver_name:loopkv\r\n"
        text += infoProvider()
        text += "\r\n# Keyspace\r\n"
        if keys > 0 { text += "db0:keys=\(keys),expires=0,avg_ttl=0\r\n" }
        out.bulk(text)
        return .proceed
    }

    /// CONFIG GET for the parameters `redis-benchmark` and `redis-cli` ask about (`save`,
    /// `appendonly`); other parameters give an empty list, CONFIG SET and RESETSTAT say OK.
    func config(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count >= 2 else { return arityError("config", &out) }
        let subcommand = request.argument(1)
        if CommandName.matches(subcommand, "get") {
            guard count >= 3 else { return arityError("config|get", &out) }
            var pairs: [(String, String)] = []
            for index in 2..<count {
                let parameter = request.argument(index)
                if CommandName.matches(parameter, "save") { pairs.append(("save", "")) }
                if CommandName.matches(parameter, "appendonly") { pairs.append(("appendonly", "no")) }
                if CommandName.matches(parameter, "databases") { pairs.append(("databases", "1")) }
            }
            out.arrayHeader(pairs.count * 2)
            for (name, value) in pairs {
                out.bulk(name)
                out.bulk(value)
            }
        } else if CommandName.matches(subcommand, "set") || CommandName.matches(subcommand, "resetstat") {
            out.ok()
        } else {
            out.error("ERR unknown subcommand '\(CommandName.text(subcommand))'. Try CONFIG HELP.")
        }
        return .proceed
    }

    /// SELECT 0 succeeds; there is one database.
    func select(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count == 2 else { return arityError("select", &out) }
        guard let index = ASCIIInteger.parse(request.argument(1)) else {
            out.error(Self.notAnInteger)
            return .proceed
        }
        if index == 0 { out.ok() } else { out.error("ERR DB index is out of range") }
        return .proceed
    }

    /// CLIENT SETNAME/SETINFO are accepted (clients send them on connect) and ignored.
    func client(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        guard count >= 2 else { return arityError("client", &out) }
        let subcommand = request.argument(1)
        if CommandName.matches(subcommand, "setname") || CommandName.matches(subcommand, "setinfo") {
            out.ok()
        } else {
            out.error("ERR unknown subcommand '\(CommandName.text(subcommand))'. Try CLIENT HELP.")
        }
        return .proceed
    }

    /// The names of the commands this server implements.
    static let commandNames = [
        "ping", "echo", "get", "set", "del", "exists", "incr", "decr", "expire", "pexpire", "ttl", "pttl",
        "dbsize", "flushall", "quit", "info", "command", "config", "select", "client",
    ]

    /// COMMAND COUNT, COMMAND DOCS (empty: clients then show no hints) and COMMAND (the names,
    /// without the detail Redis gives, which no client here needs).
    func command(_ request: RESPParser, _ count: Int, _ out: inout RESPReplyWriter) -> Outcome {
        if count >= 2 {
            let subcommand = request.argument(1)
            if CommandName.matches(subcommand, "count") {
                out.integer(Self.commandNames.count)
            } else if CommandName.matches(subcommand, "docs") || CommandName.matches(subcommand, "info") {
                out.arrayHeader(0)
            } else {
                out.error("ERR unknown subcommand '\(CommandName.text(subcommand))'. Try COMMAND HELP.")
            }
            return .proceed
        }
        out.arrayHeader(Self.commandNames.count)
        for name in Self.commandNames { out.bulk(name) }
        return .proceed
    }
}

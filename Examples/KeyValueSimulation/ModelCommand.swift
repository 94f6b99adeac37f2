/// A command the simulated clients send, from the set of loopkv's commands whose replies the
/// ``KeyspaceModel`` predicts (exactly, but for DBSIZE: see ``KeyspaceModel``).
public enum ModelCommand: Hashable, Sendable, CustomStringConvertible {
    /// SET's expiry option.
    public enum Expiry: Hashable, Sendable {
        /// `EX seconds`.
        case seconds(Int)
        /// `PX milliseconds`.
        case milliseconds(Int)
        /// `EXAT unix-seconds`.
        case unixSeconds(Int)
        /// `PXAT unix-milliseconds`.
        case unixMilliseconds(Int)
    }

    /// SET's condition option.
    public enum Condition: Hashable, Sendable {
        /// `NX`: only if the key does not exist.
        case ifAbsent
        /// `XX`: only if the key exists.
        case ifPresent
    }

    /// `GET key`.
    case get(String)
    /// `SET key value [EX s | PX ms] [NX | XX]`.
    case set(String, String, Expiry?, Condition?)
    /// `DEL key`.
    case del(String)
    /// `EXISTS key`.
    case exists(String)
    /// `INCR key`.
    case incr(String)
    /// `DECR key`.
    case decr(String)
    /// EXPIRE (seconds) or PEXPIRE (milliseconds).
    case expire(String, Int, milliseconds: Bool)
    /// TTL or PTTL.
    case ttl(String, milliseconds: Bool)
    /// `PING`.
    case ping
    /// `ECHO text`.
    case echo(String)
    /// `DBSIZE`.
    case dbSize
    /// `FLUSHALL`.
    case flushAll
    /// `QUIT`: +OK, then the server closes the connection.
    case quit
    /// A malformed request (`*1`, then `?` where a bulk header must start): a protocol error,
    /// after which the server closes the connection.
    case malformed

    /// The command's words, as a client sends them.
    public var words: [String] {
        switch self {
        case .get(let key): return ["GET", key]
        case .set(let key, let value, let expiry, let condition):
            var words = ["SET", key, value]
            switch expiry {
            case .seconds(let amount)?: words += ["EX", String(amount)]
            case .milliseconds(let amount)?: words += ["PX", String(amount)]
            case .unixSeconds(let time)?: words += ["EXAT", String(time)]
            case .unixMilliseconds(let time)?: words += ["PXAT", String(time)]
            case nil: break
            }
            switch condition {
            case .ifAbsent?: words.append("NX")
            case .ifPresent?: words.append("XX")
            case nil: break
            }
            return words
        case .del(let key): return ["DEL", key]
        case .exists(let key): return ["EXISTS", key]
        case .incr(let key): return ["INCR", key]
        case .decr(let key): return ["DECR", key]
        case .expire(let key, let amount, let milliseconds):
            return [milliseconds ? "PEXPIRE" : "EXPIRE", key, String(amount)]
        case .ttl(let key, let milliseconds): return [milliseconds ? "PTTL" : "TTL", key]
        case .ping: return ["PING"]
        case .echo(let text): return ["ECHO", text]
        case .dbSize: return ["DBSIZE"]
        case .flushAll: return ["FLUSHALL"]
        case .quit: return ["QUIT"]
        case .malformed: return ["<malformed: *1 ?x>"]
        }
    }

    /// Whether the server closes the connection after its reply (the client then reconnects).
    public var closesConnection: Bool {
        switch self {
        case .quit, .malformed: true
        default: false
        }
    }

    /// The command as a RESP array of bulk strings (or the malformed request's bytes).
    public var encoded: [UInt8] {
        if case .malformed = self { return Array("*1\r\n?x\r\n".utf8) }
        var bytes = Array("*\(words.count)\r\n".utf8)
        for word in words {
            bytes += Array("$\(word.utf8.count)\r\n".utf8)
            bytes += Array(word.utf8)
            bytes += [13, 10]
        }
        return bytes
    }

    /// The words, space-separated.
    public var description: String { words.joined(separator: " ") }

    /// A random command on a few keys (so clients meet on them), with values that are integers
    /// half of the time (so INCR and DECR succeed as often as they fail), and TTLs of a few
    /// milliseconds to a few seconds (so keys expire while the clients run); EXAT and PXAT
    /// deadlines are as near `unixMilliseconds`, the client's Unix time.
    public static func random(
        using random: inout some RandomNumberGenerator, unixMilliseconds: Int64, keyCount: Int = 6
    ) -> ModelCommand {
        let key = "k\(Int.random(in: 0..<keyCount, using: &random))"
        func value() -> String {
            Bool.random(using: &random)
                ? String(Int.random(in: -20...20, using: &random)) : "v\(Int.random(in: 0..<1000, using: &random))"
        }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<18: return .get(key)
        case 18..<40:
            var expiry: Expiry?
            switch Int.random(in: 0..<8, using: &random) {
            case 0: expiry = .seconds(Int.random(in: 0...3, using: &random))
            case 1, 2: expiry = .milliseconds(Int.random(in: 0...800, using: &random))
            case 3:
                let now = Int(unixMilliseconds / 1000)
                expiry = .unixSeconds(Bool.random(using: &random) ? 0 : now + Int.random(in: -1...3, using: &random))
            case 4:
                let now = Int(unixMilliseconds)
                expiry = .unixMilliseconds(
                    Bool.random(using: &random) ? 0 : now + Int.random(in: -50...900, using: &random))
            default: break
            }
            let conditions: [Condition?] = [nil, nil, nil, .ifAbsent, .ifPresent]
            return .set(key, value(), expiry, conditions[Int.random(in: 0..<conditions.count, using: &random)])
        case 40..<47: return .del(key)
        case 47..<54: return .exists(key)
        case 54..<63: return .incr(key)
        case 63..<70: return .decr(key)
        case 70..<78:
            let milliseconds = Bool.random(using: &random)
            let amount =
                milliseconds ? Int.random(in: -5...900, using: &random) : Int.random(in: -1...3, using: &random)
            return .expire(key, amount, milliseconds: milliseconds)
        case 78..<94: return .ttl(key, milliseconds: Bool.random(using: &random))
        case 94..<97: return .ping
        case 97: return .echo(value())
        case 98: return .dbSize
        default:
            // One in 300 commands each: the whole key space goes, or the connection (by QUIT or
            // by a protocol error).
            return [.flushAll, .quit, .malformed][Int.random(in: 0..<3, using: &random)]
        }
    }
}

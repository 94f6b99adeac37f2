/// A command the simulated clients send, from the set of loopkv's commands whose replies the
/// ``KeyspaceModel`` predicts exactly (DBSIZE is left out: it counts expired keys not swept yet,
/// which depends on when the sweep timer ran).
public enum ModelCommand: Hashable, Sendable, CustomStringConvertible {
    /// SET's expiry option.
    public enum Expiry: Hashable, Sendable {
        /// `EX seconds`.
        case seconds(Int)
        /// `PX milliseconds`.
        case milliseconds(Int)
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

    /// The command's words, as a client sends them.
    public var words: [String] {
        switch self {
        case .get(let key): return ["GET", key]
        case .set(let key, let value, let expiry, let condition):
            var words = ["SET", key, value]
            switch expiry {
            case .seconds(let amount)?: words += ["EX", String(amount)]
            case .milliseconds(let amount)?: words += ["PX", String(amount)]
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
        }
    }

    /// The command as a RESP array of bulk strings.
    public var encoded: [UInt8] {
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
    /// milliseconds to a few seconds (so keys expire while the clients run).
    public static func random(using random: inout some RandomNumberGenerator, keyCount: Int = 6) -> ModelCommand {
        let key = "k\(Int.random(in: 0..<keyCount, using: &random))"
        func value() -> String {
            Bool.random(using: &random)
                ? String(Int.random(in: -20...20, using: &random)) : "v\(Int.random(in: 0..<1000, using: &random))"
        }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<18: return .get(key)
        case 18..<40:
            var expiry: Expiry?
            switch Int.random(in: 0..<6, using: &random) {
            case 0: expiry = .seconds(Int.random(in: 0...3, using: &random))
            case 1, 2: expiry = .milliseconds(Int.random(in: 0...800, using: &random))
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
        default: return .echo(value())
        }
    }
}

/// The reference model of loopkv's key space: a dictionary of values and deadlines, and the reply
/// loopkv must give to each ``ModelCommand`` applied at a given time (milliseconds on the store's
/// clock). It follows Redis's documented semantics as loopkv implements them (a key whose
/// deadline is at or before now is gone; TTL rounds to the nearest second; INCR keeps the TTL;
/// SET without KEEPTTL drops it; EXPIRE with a deadline already past deletes the key).
public struct KeyspaceModel: Sendable {
    private struct Entry: Sendable {
        var value: String
        /// Milliseconds on the store's clock; nil for no TTL.
        var deadline: Int64?
    }

    private var entries: [String: Entry] = [:]

    /// An empty key space.
    public init() {}

    static let notAnInteger = "ERR value is not an integer or out of range"

    /// Applies `command` at time `now` (milliseconds) and returns the reply loopkv must give.
    public mutating func apply(_ command: ModelCommand, now: Int64) -> ModelReply {
        switch command {
        case .get(let key):
            return .bulk(live(key, now).map { Array($0.value.utf8) })
        case .set(let key, let value, let expiry, let condition):
            var deadline: Int64?
            switch expiry {
            case .seconds(let amount)?:
                guard amount > 0 else { return .error("ERR invalid expire time in 'set' command") }
                deadline = now + Int64(amount) * 1000
            case .milliseconds(let amount)?:
                guard amount > 0 else { return .error("ERR invalid expire time in 'set' command") }
                deadline = now + Int64(amount)
            case nil:
                break
            }
            let exists = live(key, now) != nil
            if condition == .ifAbsent && exists || condition == .ifPresent && !exists { return .bulk(nil) }
            entries[key] = Entry(value: value, deadline: deadline)
            return .simple("OK")
        case .del(let key):
            let existed = live(key, now) != nil
            entries[key] = nil
            return .integer(existed ? 1 : 0)
        case .exists(let key):
            return .integer(live(key, now) != nil ? 1 : 0)
        case .incr(let key):
            return increment(key, by: 1, now: now)
        case .decr(let key):
            return increment(key, by: -1, now: now)
        case .expire(let key, let amount, let milliseconds):
            guard var entry = live(key, now) else { return .integer(0) }
            let deadline = now + Int64(amount) * (milliseconds ? 1 : 1000)
            if deadline <= now {
                entries[key] = nil
            } else {
                entry.deadline = deadline
                entries[key] = entry
            }
            return .integer(1)
        case .ttl(let key, let milliseconds):
            guard let entry = live(key, now) else { return .integer(-2) }
            guard let deadline = entry.deadline else { return .integer(-1) }
            let remaining = deadline - now
            if milliseconds { return .integer(Int(remaining)) }
            return .integer(Int(remaining / 1000 + (remaining % 1000 >= 500 ? 1 : 0)))
        case .ping:
            return .simple("PONG")
        case .echo(let text):
            return .bulk(Array(text.utf8))
        }
    }

    private mutating func increment(_ key: String, by delta: Int, now: Int64) -> ModelReply {
        var entry = live(key, now) ?? Entry(value: "0", deadline: nil)
        guard let current = Self.integer(entry.value) else { return .error(Self.notAnInteger) }
        entry.value = String(current + delta)
        entries[key] = entry
        return .integer(current + delta)
    }

    /// The entry of `key` unless missing or expired at `now` (an expired one is removed).
    private mutating func live(_ key: String, _ now: Int64) -> Entry? {
        guard let entry = entries[key] else { return nil }
        if let deadline = entry.deadline, deadline <= now {
            entries[key] = nil
            return nil
        }
        return entry
    }

    /// An integer as Redis reads one: optional `-`, no `+`, no leading zeros but `0` itself.
    private static func integer(_ text: String) -> Int? {
        guard let value = Int(text), String(value) == text else { return nil }
        return value
    }
}

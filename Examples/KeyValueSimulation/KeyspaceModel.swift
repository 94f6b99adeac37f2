/// The reference model of loopkv's key space: a dictionary of values and deadlines, and the reply
/// loopkv must give to each ``ModelCommand`` applied at a given time (milliseconds on the store's
/// clock). It follows Redis's documented semantics as loopkv implements them (a key whose
/// deadline is at or before now is gone; TTL rounds to the nearest second; INCR keeps the TTL;
/// SET without KEEPTTL drops it; EXPIRE with a deadline already past deletes the key).
///
/// DBSIZE counts the keys the store holds, "including expired keys not yet swept" (loopkv's
/// `KeyValueStore.count`, as Redis's DBSIZE). When the sweep (a timer) or a lazy removal on
/// access drops an expired key is the server's business, so the model allows a range: at least
/// the keys live now, at most the keys stored and not deleted since (DEL, FLUSHALL, EXPIRE into
/// the past of a live key), expired or not.
public struct KeyspaceModel: Sendable {
    private struct Entry: Sendable {
        var value: String
        /// Milliseconds on the store's clock; nil for no TTL.
        var deadline: Int64?
    }

    private var entries: [String: Entry] = [:]
    /// Unix time in milliseconds when the store's clock reads zero (EXAT and PXAT).
    private let unixMillisecondsAtZero: Int64
    /// Keys the store may still hold: set and not deleted since, expired or not.
    private var stored: Set<String> = []

    /// An empty key space whose store's clock reads zero at Unix time `unixMillisecondsAtZero`.
    public init(unixMillisecondsAtZero: Int64) {
        self.unixMillisecondsAtZero = unixMillisecondsAtZero
    }

    static let notAnInteger = "ERR value is not an integer or out of range"
    /// loopkv's answer to ``ModelCommand/malformed``, as Redis words it.
    public static let malformedReply = ModelReply.error("ERR Protocol error: expected '$', got '?'")

    /// Applies `command` at time `now` (milliseconds) and returns the replies loopkv may give.
    public mutating func apply(_ command: ModelCommand, now: Int64) -> ModelExpectation {
        if case .dbSize = command {
            var liveCount = 0
            for key in stored where live(key, now) != nil { liveCount += 1 }
            return .integer(in: liveCount...stored.count)
        }
        return .exactly(reply(to: command, now: now))
    }

    /// The one reply to `command` (any command but DBSIZE) at `now`.
    private mutating func reply(to command: ModelCommand, now: Int64) -> ModelReply {
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
            case .unixSeconds(let time)?:
                // An absolute deadline in the past is accepted: the key is stored expired.
                guard time > 0 else { return .error("ERR invalid expire time in 'set' command") }
                deadline = Int64(time) * 1000 - unixMillisecondsAtZero
            case .unixMilliseconds(let time)?:
                guard time > 0 else { return .error("ERR invalid expire time in 'set' command") }
                deadline = Int64(time) - unixMillisecondsAtZero
            case nil:
                break
            }
            let exists = live(key, now) != nil
            if condition == .ifAbsent && exists || condition == .ifPresent && !exists { return .bulk(nil) }
            entries[key] = Entry(value: value, deadline: deadline)
            stored.insert(key)
            return .simple("OK")
        case .del(let key):
            let existed = live(key, now) != nil
            entries[key] = nil
            stored.remove(key)
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
                stored.remove(key)
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
        case .flushAll:
            entries.removeAll()
            stored.removeAll()
            return .simple("OK")
        case .quit:
            return .simple("OK")
        case .malformed:
            return Self.malformedReply
        case .dbSize:
            preconditionFailure("KeyspaceModel: DBSIZE has a range of replies (apply(_:now:))")
        }
    }

    private mutating func increment(_ key: String, by delta: Int, now: Int64) -> ModelReply {
        var entry = live(key, now) ?? Entry(value: "0", deadline: nil)
        guard let current = Self.integer(entry.value) else { return .error(Self.notAnInteger) }
        entry.value = String(current + delta)
        entries[key] = entry
        stored.insert(key)
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

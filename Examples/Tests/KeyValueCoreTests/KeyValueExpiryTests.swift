import KeyValueCore
import Testing
import TomorrowlandTesting

/// Expiry on a TestLoop's virtual time: keys vanish exactly at their deadline, TTL counts down.
struct KeyValueExpiryTests {
    let loop = TestLoop()
    let kv: CommandHarness

    init() {
        let loop = self.loop
        kv = CommandHarness(clock: KeyValueClock { loop.now })
    }

    @Test func aKeySetWithEXExpiresAtItsDeadline() {
        kv.send("SET", "k", "v", "EX", "10")
        #expect(kv.send("TTL", "k") == ":10\r\n")
        loop.advance(by: .seconds(4))
        #expect(kv.send("TTL", "k") == ":6\r\n")
        #expect(kv.send("PTTL", "k") == ":6000\r\n")
        loop.advance(by: .milliseconds(5_999))
        #expect(kv.send("GET", "k") == "$1\r\nv\r\n")
        loop.advance(by: .milliseconds(1))
        #expect(kv.send("GET", "k") == "$-1\r\n")
        #expect(kv.send("TTL", "k") == ":-2\r\n")
        #expect(kv.send("EXISTS", "k") == ":0\r\n")
    }

    @Test func pxCountsMilliseconds() {
        kv.send("SET", "k", "v", "PX", "250")
        loop.advance(by: .milliseconds(249))
        #expect(kv.send("EXISTS", "k") == ":1\r\n")
        loop.advance(by: .milliseconds(1))
        #expect(kv.send("EXISTS", "k") == ":0\r\n")
    }

    @Test func ttlRoundsToTheNearestSecondAndReportsMissingAndPersistentKeys() {
        kv.send("SET", "k", "v", "PX", "1600")
        #expect(kv.send("TTL", "k") == ":2\r\n")
        loop.advance(by: .milliseconds(200))
        #expect(kv.send("TTL", "k") == ":1\r\n")
        kv.send("SET", "p", "v")
        #expect(kv.send("TTL", "p") == ":-1\r\n")
        #expect(kv.send("PTTL", "p") == ":-1\r\n")
        #expect(kv.send("TTL", "missing") == ":-2\r\n")
        #expect(kv.send("PTTL", "missing") == ":-2\r\n")
    }

    @Test func expireAndPexpireSetADeadlineOnExistingKeysOnly() {
        #expect(kv.send("EXPIRE", "k", "5") == ":0\r\n")
        kv.send("SET", "k", "v")
        #expect(kv.send("EXPIRE", "k", "5") == ":1\r\n")
        #expect(kv.send("TTL", "k") == ":5\r\n")
        #expect(kv.send("PEXPIRE", "k", "1500") == ":1\r\n")
        #expect(kv.send("PTTL", "k") == ":1500\r\n")
        loop.advance(by: .milliseconds(1500))
        #expect(kv.send("GET", "k") == "$-1\r\n")
        #expect(kv.send("EXPIRE", "k", "x") == "-ERR value is not an integer or out of range\r\n")
        #expect(kv.send("EXPIRE", "k") == "-ERR wrong number of arguments for 'expire' command\r\n")
        #expect(kv.send("PEXPIRE", "k", "1", "NX") == "-ERR Unsupported option NX\r\n")
    }

    @Test func expireWithAPastDeadlineDeletesTheKey() {
        kv.send("SET", "k", "v")
        #expect(kv.send("EXPIRE", "k", "0") == ":1\r\n")
        #expect(kv.send("EXISTS", "k") == ":0\r\n")
        kv.send("SET", "k", "v")
        #expect(kv.send("PEXPIRE", "k", "-100") == ":1\r\n")
        #expect(kv.send("DBSIZE") == ":0\r\n")
    }

    @Test func plainSetClearsTheTTLAndKeepTTLKeepsIt() {
        kv.send("SET", "k", "v", "EX", "5")
        kv.send("SET", "k", "w")
        #expect(kv.send("TTL", "k") == ":-1\r\n")
        loop.advance(by: .seconds(10))
        #expect(kv.send("GET", "k") == "$1\r\nw\r\n")
        kv.send("SET", "k", "x", "EX", "5")
        kv.send("SET", "k", "y", "KEEPTTL")
        #expect(kv.send("TTL", "k") == ":5\r\n")
    }

    @Test func nxSucceedsOnceTheOldKeyExpired() {
        kv.send("SET", "lock", "a", "PX", "100")
        #expect(kv.send("SET", "lock", "b", "NX") == "$-1\r\n")
        loop.advance(by: .milliseconds(100))
        #expect(kv.send("SET", "lock", "b", "NX") == "+OK\r\n")
    }

    @Test func theSweeperRemovesExpiredKeysNobodyTouches() throws {
        let sweeper = ExpirySweeper(store: kv.store, executor: loop, interval: .milliseconds(100), budget: 10)
        sweeper.start()
        for index in 0..<25 { kv.send("SET", "t\(index)", "v", "PX", "50") }
        kv.send("SET", "long", "v", "EX", "100")
        kv.send("SET", "forever", "v")
        #expect(kv.store.count == 27)
        loop.advance(by: .milliseconds(100))
        // The first sweep looks at 10 entries; with more due it comes back a millisecond later.
        #expect(kv.store.count == 17)
        loop.advance(by: .milliseconds(2))
        #expect(kv.store.count == 2)
        #expect(kv.store.pendingExpiryCount == 1)
        loop.advance(by: .seconds(100))
        #expect(kv.store.count == 1)
        #expect(kv.store.pendingExpiryCount == 0)
        sweeper.stop()
        try loop.checkNoPendingWork()
    }

    @Test func theSweeperDropsStaleEntriesOfKeysReSetOrDeleted() {
        kv.send("SET", "a", "v", "PX", "50")
        kv.send("SET", "a", "w", "PX", "500")
        kv.send("SET", "b", "v", "PX", "50")
        kv.send("DEL", "b")
        #expect(kv.store.pendingExpiryCount == 3)
        loop.advance(by: .milliseconds(60))
        #expect(kv.store.sweepExpired().removed == 0)
        #expect(kv.send("GET", "a") == "$1\r\nw\r\n")
        loop.advance(by: .milliseconds(500))
        #expect(kv.store.sweepExpired().removed == 1)
        #expect(kv.store.pendingExpiryCount == 0)
    }
}

/// Absolute deadlines (EXAT/PXAT) at the edges of the clocks' ranges.
struct KeyValueAbsoluteExpiryTests {
    @Test func aPXATBeyondTheMonotonicClocksRangeNeitherTrapsNorExpires() {
        // A monotonic clock far ahead of Unix time: converting a far Unix deadline overflows.
        let kv = CommandHarness(clock: KeyValueClock { .milliseconds(Int64.max / 2) })
        #expect(kv.send("SET", "k", "v", "PXAT", "9223372036854775807") == "+OK\r\n")
        #expect(kv.send("GET", "k") == "$1\r\nv\r\n")
        #expect(kv.send("PTTL", "k").hasPrefix(":"))
        #expect(!kv.send("PTTL", "k").hasPrefix(":-"))
    }

    @Test func anEXATInThePastStoresAnAlreadyExpiredKey() {
        let kv = CommandHarness()
        #expect(kv.send("SET", "k", "v", "EXAT", "1") == "+OK\r\n")
        #expect(kv.send("GET", "k") == "$-1\r\n")
        #expect(kv.send("SET", "k", "v", "EXAT", "0") == "-ERR invalid expire time in 'set' command\r\n")
    }

    @Test func ttlRoundsHalfASecondUp() throws {
        try withTestLoop { loop in
            let kv = CommandHarness(clock: KeyValueClock { loop.now })
            kv.send("SET", "k", "v", "PX", "1500")
            #expect(kv.send("TTL", "k") == ":2\r\n")
            kv.send("SET", "k", "v", "PX", "1499")
            #expect(kv.send("TTL", "k") == ":1\r\n")
        }
    }
}

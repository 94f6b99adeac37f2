import Testing
import TomorrowlandTesting

@testable import KeyValueCore

/// The shared key space: its expiry sweep never holds a shard's lock for a whole burst of keys.
struct ShardedStoreTests {
    let loop = TestLoop()

    /// A store of `shards` shards on the loop's virtual clock, with `count` keys due 50 ms from now.
    private func storeWithDueKeys(_ count: Int, shards: Int = 1) -> CommandHarness {
        let loop = self.loop
        let kv = CommandHarness(clock: KeyValueClock { loop.now }, shards: shards)
        for index in 0..<count { kv.send("SET", "k\(index)", "v", "PX", "50") }
        loop.advance(by: .milliseconds(50))
        return kv
    }

    @Test func aSweepTakesTheShardsLockForAtMostOneSliceOfEntriesAtATime() {
        let kv = storeWithDueKeys(1_000)
        let before = kv.store.sweepLockAcquisitions
        let result = kv.store.sweepExpired(budget: 10_000)
        #expect(result.removed == 1_000)
        #expect(!result.more)
        // 1,000 entries in slices of 128: seven full slices and one of 104.
        #expect(ShardedStore.sweepSlice == 128)
        #expect(kv.store.sweepLockAcquisitions - before == 8)
        #expect(kv.store.count == 0)
        #expect(kv.store.pendingExpiryCount == 0)
    }

    @Test func aSlicedSweepStillStopsAtItsBudgetAndReportsWhatIsLeft() {
        let kv = storeWithDueKeys(1_000)
        let before = kv.store.sweepLockAcquisitions
        let first = kv.store.sweepExpired(budget: 300)
        #expect(first.removed == 300)
        #expect(first.more)
        #expect(kv.store.sweepLockAcquisitions - before == 3)
        let second = kv.store.sweepExpired(budget: 10_000)
        #expect(second.removed == 700)
        #expect(!second.more)
        #expect(kv.store.count == 0)
    }

    @Test func aBudgetThatEndsOnASliceBoundaryWithNothingLeftReportsNoMore() {
        let kv = storeWithDueKeys(256)
        let result = kv.store.sweepExpired(budget: 256)
        #expect(result.removed == 256)
        #expect(!result.more)
    }

    @Test func aSweepOfSeveralShardsRemovesTheDueKeysOfEveryShardAndKeepsTheRest() {
        let kv = storeWithDueKeys(2_000, shards: 8)
        kv.send("SET", "later", "v", "EX", "100")
        kv.send("SET", "forever", "v")
        let result = kv.store.sweepExpired(budget: 10_000)
        #expect(result.removed == 2_000)
        #expect(!result.more)
        #expect(kv.store.count == 2)
        #expect(kv.store.pendingExpiryCount == 1)
    }
}

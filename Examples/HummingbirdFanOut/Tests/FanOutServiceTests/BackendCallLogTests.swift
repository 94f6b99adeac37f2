import FanOutService
import Testing

@Suite struct BackendCallLogTests {
    @Test func waitingForEventsThatHappenedAlreadyReturnsAtOnce() async {
        let log = BackendCallLog()
        log.record(BackendEvent(backend: "pricing", item: "a", kind: .cancelled))
        #expect(await log.waitUntil(backend: "pricing", kind: .cancelled))
    }

    @Test func aWaiterWakesOnceItsBackendHasHadTheCountOfItsKind() async {
        let log = BackendCallLog()
        let waiter = Task { await log.waitUntil(backend: "inventory", kind: .completed, count: 2) }
        log.record(BackendEvent(backend: "inventory", item: "a", kind: .completed))
        log.record(BackendEvent(backend: "pricing", item: "a", kind: .completed))
        log.record(BackendEvent(backend: "inventory", item: "a", kind: .cancelled))
        #expect(log.count(backend: "inventory", kind: .completed) == 1)
        log.record(BackendEvent(backend: "inventory", item: "b", kind: .completed))
        #expect(await waiter.value)
        #expect(log.events.count == 4)
    }

    @Test func cancellingAWaiterEndsItsWaitWithFalse() async {
        let log = BackendCallLog()
        let waiter = Task { await log.waitUntil(backend: "pricing", kind: .cancelled) }
        waiter.cancel()
        #expect(await waiter.value == false)
    }
}

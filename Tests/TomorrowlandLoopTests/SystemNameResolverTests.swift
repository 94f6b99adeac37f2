import Dispatch
import Glibc
import Testing
import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

@Suite("SystemNameResolver")
struct SystemNameResolverTests {
    /// What one resolution's answer handler saw.
    private struct Answer: Sendable {
        var result: Result<[TCPSocketAddress], TCPError>
        var thread: pthread_t
    }

    /// Starts resolving `host` and returns a promise of the answer (never resolved if the answer
    /// is discarded) with the resolution.
    private func resolve(
        _ host: String, port: UInt16 = 80, on resolver: SystemNameResolver,
        holdingThreadUntil gate: DispatchSemaphore? = nil
    ) -> (Promise<Answer, NoError>, NameResolution) {
        let (promise, promiseResolver) = Promise<Answer, NoError>.makeWithResolver()
        let resolution = NameResolution(host: host, port: port) { result in
            promiseResolver.fulfill(with: Answer(result: result, thread: pthread_self()))
            gate?.wait()
        }
        resolver.resolve(resolution)
        return (promise, resolution)
    }

    @Test func localhostResolvesOnAnotherThreadFromTheHostsFile() throws {
        let resolver = SystemNameResolver(maximumThreads: 2)
        let (answer, _) = resolve("localhost", port: 8080, on: resolver)
        let seen = try #require(blockingResult(of: answer)?.value)
        #expect(pthread_equal(seen.thread, pthread_self()) == 0)
        let addresses = try seen.result.get()
        #expect(Set(addresses.map(\.description)).isSubset(of: ["127.0.0.1:8080", "[::1]:8080"]))
        #expect(!addresses.isEmpty)
    }

    @Test func anUnknownNameFailsWithAddressResolutionFailed() throws {
        let resolver = SystemNameResolver(maximumThreads: 2)
        let (answer, _) = resolve("no-such-host.invalid", on: resolver)
        let seen = try #require(blockingResult(of: answer)?.value)
        #expect(throws: TCPError.addressResolutionFailed(host: "no-such-host.invalid")) { try seen.result.get() }
    }

    @Test func atMostMaximumThreadsLookUpAtOnceAndTheyExitWhenIdle() throws {
        let resolver = SystemNameResolver(maximumThreads: 2)
        let gate = DispatchSemaphore(value: 0)
        // Each answer handler holds its resolver thread until the gate opens.
        let lookups = (0..<4).map { _ in resolve("localhost", on: resolver, holdingThreadUntil: gate) }
        #expect(waitUntil { resolver.startedLookups == 2 })
        #expect(resolver.threadCount == 2)
        for _ in 0..<4 { gate.signal() }
        for (answer, _) in lookups { #expect(blockingResult(of: answer)?.value != nil) }
        #expect(resolver.startedLookups == 4)
        #expect(waitUntil { resolver.threadCount == 0 })
    }

    @Test func aLookupAbandonedWhileQueuedNeverReachesGetaddrinfo() throws {
        let resolver = SystemNameResolver(maximumThreads: 1)
        let gate = DispatchSemaphore(value: 0)
        let (first, _) = resolve("localhost", on: resolver, holdingThreadUntil: gate)
        #expect(waitUntil { resolver.startedLookups == 1 })
        let (second, queued) = resolve("localhost", on: resolver)
        queued.abandon()
        gate.signal()
        #expect(blockingResult(of: first)?.value != nil)
        #expect(waitUntil { resolver.threadCount == 0 })
        #expect(resolver.startedLookups == 1)
        #expect(second.result == nil)
    }
}

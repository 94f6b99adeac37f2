import Foundation
import Testing
import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

/// With the pending-promise tracking on, an `EventLoop`'s shutdown writes the promises made on it
/// that are still pending.
@Suite("EventLoop shutdown and the pending-promise report")
struct EventLoopPendingPromiseReportTests {
    @Test func theShutdownListsThePromisesMadeOnTheLoopStillPending() async throws {
        // A process of its own: tracking and standard error are process-wide.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            PendingPromiseTracking.start()
            let loop = EventLoop()
            let kept = Locked<(Promise<Int, NoError>.Resolver, Promise<String, NoError>.Resolver)?>(nil)
            loop.execute {
                // Made on the loop: one left pending, one resolved.
                let (_, pending) = Promise<Int, NoError>.makeWithResolver()
                let (_, resolved) = Promise<String, NoError>.makeWithResolver()
                resolved.fulfill(with: "done")
                kept.value = (pending, resolved)
            }
            // Made on this thread, not on the loop: not the loop's to list.
            let (_, elsewhere) = Promise<Double, NoError>.makeWithResolver()
            loop.runUntilIdle()
            loop.shutdown()
            // Work after the shutdown: its diagnostic names the loop by the same address.
            _ = loop.execute {}
            let address = String(UInt(bitPattern: ObjectIdentifier(loop)), radix: 16)
            FileHandle.standardError.write(Data("the loop's address: 0x\(address)\n".utf8))
            withExtendedLifetime((kept, elsewhere)) {}
        }
        let standardError = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        // The header, then one indented line per promise. (Inside an exit test's body, `#line`
        // is the `#expect`'s line: the promises are told apart by their types.)
        let lines = standardError.split(separator: "\n")
        let header = try #require(lines.firstIndex { $0.contains("shut down with") })
        #expect(lines[header].hasSuffix("shut down with 1 promise made on it still pending, oldest first:"))
        let listed = lines[(header + 1)...].prefix { $0.hasPrefix("  ") }
        #expect(listed.count == 1)
        #expect(listed.first?.contains("Promise<Int, NoError> made at \(#fileID):") == true)
        // Both diagnostics name the loop by its address (they printed a seeded hash of it before).
        let address = try #require(lines.first { $0.hasPrefix("the loop's address: ") }?.split(separator: " ").last)
        #expect(lines[header].hasPrefix("EventLoop \(address) shut down"))
        #expect(
            lines.contains { $0.hasPrefix("Tomorrowland: work submitted to EventLoop \(address) after its shutdown") })
    }
}

import Foundation
import Testing

@testable import TomorrowlandLoop

@Suite("EventLoop and DispatchQueue.main")
struct EventLoopMainQueueTests {
    /// Tests never run on the main thread, so this launches `LoopMainQueueProbe`, a program whose
    /// main thread runs an EventLoop, and checks that blocks posted to `DispatchQueue.main` (before
    /// the loop ran, from another thread, and from a main-queue block) ran on the main thread,
    /// inside the loop's work. The probe exits 0 only then.
    @Test func aLoopOnTheMainThreadDrainsTheMainQueue() throws {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let probe = testBinary.deletingLastPathComponent().appendingPathComponent("LoopMainQueueProbe")
        #expect(FileManager.default.isExecutableFile(atPath: probe.path), "build the LoopMainQueueProbe target")
        let process = Process()
        process.executableURL = probe
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("LoopMainQueueProbe: ok"))
    }

    @Test func aLoopOffTheMainThreadLeavesTheMainQueueAlone() {
        // Draining from another thread would crash in libdispatch; the loop must not try.
        let loop = EventLoop()
        loop.execute {}
        loop.runUntilIdle()
        #expect(loop.libeventBackend.mainQueueEvent == nil)
        loop.shutdown()
    }
}

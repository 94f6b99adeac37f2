import Foundation
import Testing
import TomorrowlandSimulation

@testable import TomorrowlandLoop

/// Random programs of public calls on a ``TCPConnection`` over a socketpair, made at the top level
/// and from inside every kind of callback, checked against a reference model of the byte streams
/// (Support/TCPByteStreamModel.swift): nothing lost, duplicated or reordered, every promise
/// settled exactly once, the peer receives exactly what the model says.
///
/// Environment variables:
/// - `TOMORROWLAND_TCP_MODEL_SEED`: the base seed (default fixed, so CI is deterministic);
/// - `TOMORROWLAND_TCP_MODEL_PROGRAMS`: how many programs (default 10,000);
/// - `TOMORROWLAND_TCP_MODEL_LENGTH`: top-level steps per program (default 24);
/// - `TOMORROWLAND_TCP_MODEL_PROGRAM_SEED`: run just the program with this seed (what a failure
///   prints), and print its trace.
@Suite("TCPConnection re-entrancy model")
struct TCPConnectionModelTests {
    static let defaultSeed: UInt64 = 0x7C9C_0AA5_17A7_E5ED

    static func number(_ name: String) -> UInt64? {
        guard let text = ProcessInfo.processInfo.environment[name] else { return nil }
        if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }

    /// The seed of program `index` of a run with base seed `seed`.
    static func programSeed(base seed: UInt64, index: Int) -> UInt64 {
        var generator = SimulationRandom(seed: seed &+ UInt64(index) &* 0xA076_1D64_78BD_642F)
        return generator.next()
    }

    /// Deletes steps while the program still fails, one at a time, to a local minimum.
    static func shrink(_ program: TCPModelProgram, on loop: EventLoop) -> TCPModelProgram {
        var current = program
        var index = 0
        while index < current.steps.count {
            var candidate = current
            candidate.steps.remove(at: index)
            if TCPModelRun.run(candidate, on: loop).failure != nil {
                current = candidate
            } else {
                index += 1
            }
        }
        return current
    }

    /// What a failing program did: its own `failure`, then the shrunk program's and its trace (a
    /// failure that depends on timing or on tests running in parallel may not survive shrinking).
    static func report(_ program: TCPModelProgram, failure: String, length: Int, on loop: EventLoop) -> String {
        let shrunk = shrink(program, on: loop)
        let traced = TCPModelRun.run(shrunk, on: loop, tracing: true)
        let steps = shrunk.steps.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
        let trace = (traced.trace ?? []).suffix(80).joined(separator: "\n  ")
        return """
            The connection and the model disagree: \(failure)
            The shrunk program: \(traced.failure ?? "passes (the failure depends on timing or on other tests)")
            Reproduce: TOMORROWLAND_TCP_MODEL_PROGRAM_SEED=0x\(String(program.seed, radix: 16)) \
            TOMORROWLAND_TCP_MODEL_LENGTH=\(length) swift test --filter TCPConnectionModelTests
            \(program.streaming ? "Streaming" : "Promise-read") program shrunk to \(shrunk.steps.count) of \(program.steps.count) top-level steps:
            \(steps)
            Trace of the shrunk program:
              \(trace)
            """
    }

    @Test("random call sequences from inside every callback keep the byte streams and the promises right")
    func randomProgramsMatchTheByteStreamModel() {
        let loop = EventLoop()
        defer { loop.shutdown() }
        let length = Self.number("TOMORROWLAND_TCP_MODEL_LENGTH").map(Int.init) ?? 24
        if let single = Self.number("TOMORROWLAND_TCP_MODEL_PROGRAM_SEED") {
            let program = TCPModelProgram.generate(seed: single, length: length)
            let run = TCPModelRun.run(program, on: loop, tracing: true)
            if let failure = run.failure {
                Issue.record(Comment(rawValue: Self.report(program, failure: failure, length: length, on: loop)))
            } else {
                print((run.trace ?? []).joined(separator: "\n"))
            }
            return
        }
        let base = Self.number("TOMORROWLAND_TCP_MODEL_SEED") ?? Self.defaultSeed
        let count = Self.number("TOMORROWLAND_TCP_MODEL_PROGRAMS").map(Int.init) ?? 10_000
        let start = ContinuousClock.now
        var callbacks: [TCPModelRun.CallbackKind: Int] = [:]
        for index in 0..<count {
            let program = TCPModelProgram.generate(seed: Self.programSeed(base: base, index: index), length: length)
            let run = TCPModelRun.run(program, on: loop)
            if let failure = run.failure {
                Issue.record(
                    Comment(
                        rawValue: "Program \(index) of base seed 0x\(String(base, radix: 16)):\n"
                            + Self.report(program, failure: failure, length: length, on: loop)))
                return
            }
            callbacks.merge(run.callbackCalls, uniquingKeysWith: +)
        }
        #expect(loop.resources.isEmpty, "every connection closed and unregistered")
        // The test cannot pass by not testing: every kind of callback made calls.
        for kind in TCPModelRun.CallbackKind.allCases where count >= 1000 {
            #expect(callbacks[kind, default: 0] > 0, "no \(kind) callback ran")
        }
        let summary = TCPModelRun.CallbackKind.allCases.map { "\($0.rawValue) \(callbacks[$0, default: 0])" }
        print(
            "TCPConnectionModelTests: \(count) programs (base seed 0x\(String(base, radix: 16))) matched the model in \(ContinuousClock.now - start); callbacks: \(summary.joined(separator: ", "))"
        )
    }

    @Test("a program is a function of its seed")
    func programsAreReproducibleFromTheirSeed() {
        let first = TCPModelProgram.generate(seed: 7, length: 40).steps
        #expect(first == TCPModelProgram.generate(seed: 7, length: 40).steps)
        #expect(first != TCPModelProgram.generate(seed: 8, length: 40).steps)
    }
}

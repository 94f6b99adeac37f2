import CBenchSupport
import Foundation

// TomorrowlandBench: the workloads of notes/benchmarks.md, for Tomorrowland on its EventLoop and
// for SwiftNIO, in one process, printed as one Markdown table.
//
//   TomorrowlandBench [--only W1,W3] [--target-seconds 1.0] [--skip-m1] [--instructions FILE]
//       the full comparison (M1 runs first, each library in a fresh child process); with
//       --instructions, a column of callgrind's instructions per unit read from FILE (the
//       table that scripts/callgrind.sh writes, results/callgrind.md)
//   TomorrowlandBench --m1 ours|nio
//       M1 alone, in this (fresh) process; prints `M1 <rss bytes> <malloc bytes>` per promise
//   TomorrowlandBench --run W1 --lib ours|nio --iterations N
//       one warm-up iteration then N iterations, untimed: what the callgrind mode counts (for an
//       ours@NIO row such as W1@NIO, `--lib ours` is our side on NIO's loop)
//   TomorrowlandBench --allocations [--only W1,W3]
//       allocation calls per unit of every workload, both libraries, untimed: what
//       `make check-allocations` compares with allocation-budgets.txt, and CI's smoke run

/// The usage text, printed by `--help` and after a bad argument.
let usage = """
    usage: TomorrowlandBench [--only W1,W3] [--target-seconds 1.0] [--skip-m1] [--instructions FILE]
           TomorrowlandBench --m1 ours|nio
           TomorrowlandBench --run <workload id> --lib ours|nio --iterations N
           TomorrowlandBench --allocations [--only W1,W3]
    workload ids: \(WorkloadSpec.all.map(\.id).joined(separator: ", "))
    """

/// Prints `message` and the usage text to standard error and exits with status 2.
func usageError(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TomorrowlandBench: \(message)\n\(usage)\n".utf8))
    exit(2)
}

struct Options {
    var only: Set<String>?
    var targetSeconds = 1.0
    var skipM1 = false
    var m1Library: String?
    var runWorkload: String?
    var runLibrary: String?
    var runIterations = 1
    var allocationsOnly = false
    var instructionsFile: String?

    init(_ arguments: [String]) {
        var remaining = arguments[...]
        func value(_ flag: String) -> String {
            guard let next = remaining.popFirst() else { usageError("\(flag) needs a value") }
            return next
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--only":
                let ids = Set(value(argument).split(separator: ",").map(String.init))
                let unknown = ids.subtracting(WorkloadSpec.all.map(\.id)).sorted()
                guard unknown.isEmpty else { usageError("unknown workload \(unknown.joined(separator: ", "))") }
                only = ids
            case "--target-seconds":
                guard let seconds = Double(value(argument)), seconds > 0 else {
                    usageError("--target-seconds takes a positive number")
                }
                targetSeconds = seconds
            case "--skip-m1": skipM1 = true
            case "--instructions": instructionsFile = value(argument)
            case "--allocations": allocationsOnly = true
            case "--m1": m1Library = value(argument)
            case "--run": runWorkload = value(argument)
            case "--lib": runLibrary = value(argument)
            case "--iterations":
                guard let iterations = Int(value(argument)), iterations > 0 else {
                    usageError("--iterations takes a positive integer")
                }
                runIterations = iterations
            case "--help", "-h":
                print(usage)
                exit(0)
            default: usageError("unknown argument \(argument)")
            }
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let m1PromiseCount = 1_000_000

/// The libraries under test, made on demand: ours on our `EventLoop`, NIO, and ours@NIO on
/// NIO's loop. NIO and ours@NIO share one NIO loop thread.
final class Subjects {
    private var nioLoop: NIOLoopThread?
    private var madeOurs = false
    private var oursStorage: LibraryUnderTest?
    private var nioStorage: LibraryUnderTest?
    private var oursOnNIOStorage: LibraryUnderTest?

    /// Ours on our `EventLoop` (nil if this build lacks it).
    var ours: LibraryUnderTest? {
        if !madeOurs {
            oursStorage = TomorrowlandWorkloads.make()
            madeOurs = true
        }
        return oursStorage
    }

    var nio: LibraryUnderTest {
        if let nioStorage { return nioStorage }
        let made = NIOWorkloads.make(on: sharedNIOLoop())
        nioStorage = made
        return made
    }

    /// Ours on NIO's loop, through TomorrowlandNIO's `.nio(loop)`.
    var oursOnNIO: LibraryUnderTest {
        if let oursOnNIOStorage { return oursOnNIOStorage }
        let made = TomorrowlandOnNIOWorkloads.make(on: sharedNIOLoop())
        oursOnNIOStorage = made
        return made
    }

    /// Our library for `spec`'s row: on our loop or on NIO's.
    func ours(for spec: WorkloadSpec) -> LibraryUnderTest? {
        switch spec.oursHost {
        case .eventLoop: ours
        case .nio: oursOnNIO
        }
    }

    /// Stops every loop thread that was started.
    func shutdown() {
        oursStorage?.shutdown()
        oursOnNIOStorage?.shutdown()
        nioStorage?.shutdown()
        nioLoop?.shutdown()
    }

    private func sharedNIOLoop() -> NIOLoopThread {
        if let nioLoop { return nioLoop }
        let made = NIOLoopThread()
        nioLoop = made
        return made
    }
}

BenchServiceContext.startIfAsked()
let subjects = Subjects()

if let name = options.m1Library {
    // M1 first thing in a fresh process, so the heap has no free chunks to recycle.
    let subject: LibraryUnderTest?
    switch name {
    case "ours": subject = subjects.ours
    case "nio": subject = subjects.nio
    default: usageError("--m1 takes ours or nio, not \(name)")
    }
    guard let subject, let measure = subject.measurePendingPromiseMemory else {
        print("M1 unavailable")
        exit(0)
    }
    let figures = measure(m1PromiseCount)
    print("M1 \(figures.rssBytesPerPromise) \(figures.mallocBytesPerPromise)")
    subjects.shutdown()
    exit(0)
}

if let id = options.runWorkload {
    // `--lib ours` runs our side of the row (on NIO's loop for an ours@NIO row), `--lib nio`
    // NIO's runner that the row compares with.
    guard let spec = WorkloadSpec.all.first(where: { $0.id == id }) else {
        usageError("--run needs a known workload id")
    }
    let subject: LibraryUnderTest?
    let runnerID: String
    switch options.runLibrary {
    case "ours": (subject, runnerID) = (subjects.ours(for: spec), spec.oursID)
    case "nio": (subject, runnerID) = (subjects.nio, spec.nioID)
    default: usageError("--run needs --lib ours|nio")
    }
    guard let run = subject?.workloads[runnerID] else {
        fatalError("\(id) is not available for \(options.runLibrary!)")
    }
    run(1)
    run(options.runIterations)
    print("\(id) \(options.runLibrary!): \(options.runIterations * spec.unitsPerIteration) units after warm-up")
    subjects.shutdown()
    exit(0)
}

if options.allocationsOnly {
    // One line per workload, `<id> ours <calls per unit> nio <calls per unit>` (`n/a` when a
    // library lacks the workload), with four decimals so the reader can round as it decides.
    // Untimed: a warm-up iteration, then at least 100k units counted. Every runner checks its
    // counters, so this is also a smoke run of both libraries' workloads.
    let harness = Harness()
    var nioCounts: [String: Double] = [:]
    func figure(_ count: Double?) -> String { count.map { String(format: "%.4f", $0) } ?? "n/a" }
    for spec in WorkloadSpec.all where options.only?.contains(spec.id) ?? true {
        let oursCount = subjects.ours(for: spec)?.workloads[spec.oursID].map {
            harness.allocationsPerUnit($0, unitsPerIteration: spec.unitsPerIteration)
        }
        if nioCounts[spec.nioID] == nil, let run = subjects.nio.workloads[spec.nioID] {
            nioCounts[spec.nioID] = harness.allocationsPerUnit(run, unitsPerIteration: spec.unitsPerIteration)
        }
        print("\(spec.id) ours \(figure(oursCount)) nio \(figure(nioCounts[spec.nioID]))")
    }
    subjects.shutdown()
    exit(0)
}

/// M1 in a child process of this same executable, so that the heap is fresh.
func m1InChildProcess(_ name: String) -> MemoryFigures? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = ["--m1", name]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { fatalError("could not start the M1 child process: \(error)") }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    check(process.terminationStatus == 0, "M1 \(name) child process exited with \(process.terminationStatus)")
    guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("M1 ") }) else {
        fatalError("M1 \(name): no result in \(output)")
    }
    let fields = line.split(separator: " ")
    guard fields.count == 3, let rss = Double(fields[1]), let heap = Double(fields[2]) else { return nil }
    return MemoryFigures(rssBytesPerPromise: rss, mallocBytesPerPromise: heap)
}

var report = Report()
if let path = options.instructionsFile {
    report.instructions = InstructionCounts(contentsOf: path)
}
if !options.skipM1 {
    report.memory = (ours: m1InChildProcess("ours"), nio: m1InChildProcess("nio"))
}

let harness = Harness(targetSeconds: options.targetSeconds)
var nioMeasurements: [String: (Measurement, Double)] = [:]

// Interleaved: each workload runs for our library, then for NIO, so that load changes on this
// shared machine hit both sides of a ratio alike.
for spec in WorkloadSpec.all where options.only?.contains(spec.id) ?? true {
    FileHandle.standardError.write(Data("\(spec.id)…\n".utf8))
    var row = Report.Row(spec: spec)
    if let ours = subjects.ours(for: spec), let run = ours.workloads[spec.oursID] {
        row.ours = harness.measure(run, unitsPerIteration: spec.unitsPerIteration, loopCPUClock: ours.loopCPUClock)
        row.oursAllocations = harness.allocationsPerUnit(run, unitsPerIteration: spec.unitsPerIteration)
    }
    // W1i, W2i and W3i reuse NIO's W1, W2 and W3 measured just before; an ours@NIO row measures
    // NIO again, right after our side, so that both sides of its ratio see the same load.
    let cacheKey = "\(spec.nioID) \(spec.oursHost)"
    if let cached = nioMeasurements[cacheKey] {
        (row.nio, row.nioAllocations) = (cached.0, cached.1)
    } else if let run = subjects.nio.workloads[spec.nioID] {
        let measurement = harness.measure(
            run, unitsPerIteration: spec.unitsPerIteration, loopCPUClock: subjects.nio.loopCPUClock)
        let allocations = harness.allocationsPerUnit(run, unitsPerIteration: spec.unitsPerIteration)
        nioMeasurements[cacheKey] = (measurement, allocations)
        (row.nio, row.nioAllocations) = (measurement, allocations)
    }
    report.rows.append(row)
}
let oursAvailable = subjects.ours != nil
subjects.shutdown()
print(
    """
    Each figure: median of \(harness.repetitions) timed repetitions of about \(options.targetSeconds) s each, after one \
    warm-up iteration and calibration, with the fastest and slowest repetition in brackets. \
    ours/NIO is the ratio of the medians (below 1: ours is faster). Loop CPU is the loop thread's \
    CPU time (median). Allocation calls per unit are counted by the benchmark's malloc interposer \
    over at least 100k units after a warm-up. Workloads run interleaved: ours, then NIO.

    """)
print(report.markdown(oursAvailable: oursAvailable))

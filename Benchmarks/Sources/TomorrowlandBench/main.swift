import CBenchSupport
import Foundation

// TomorrowlandBench: the workloads of notes/benchmarks.md, for Tomorrowland on its EventLoop and
// for SwiftNIO, in one process, printed as one Markdown table.
//
//   TomorrowlandBench [--only W1,W3] [--target-seconds 1.0] [--skip-m1]
//       the full comparison (M1 runs first, each library in a fresh child process)
//   TomorrowlandBench --m1 ours|nio
//       M1 alone, in this (fresh) process; prints `M1 <rss bytes> <malloc bytes>` per promise
//   TomorrowlandBench --run W1 --lib ours|nio --iterations N
//       one warm-up iteration then N iterations, untimed: what the callgrind mode counts
//   TomorrowlandBench --allocations [--only W1,W3]
//       allocation calls per unit of every workload, both libraries, untimed: what
//       `make check-allocations` compares with allocation-budgets.txt, and CI's smoke run

/// The usage text, printed by `--help` and after a bad argument.
let usage = """
    usage: TomorrowlandBench [--only W1,W3] [--target-seconds 1.0] [--skip-m1]
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

func library(named name: String) -> LibraryUnderTest? {
    switch name {
    case "ours": return TomorrowlandWorkloads.make()
    case "nio": return NIOWorkloads.make()
    default: usageError("--lib and --m1 take ours or nio, not \(name)")
    }
}

if let name = options.m1Library {
    // M1 first thing in a fresh process, so the heap has no free chunks to recycle.
    guard let subject = library(named: name) else {
        print("M1 unavailable")
        exit(0)
    }
    let figures = subject.measurePendingPromiseMemory(m1PromiseCount)
    print("M1 \(figures.rssBytesPerPromise) \(figures.mallocBytesPerPromise)")
    subject.shutdown()
    exit(0)
}

if let id = options.runWorkload {
    guard let name = options.runLibrary, let subject = library(named: name),
        let spec = WorkloadSpec.all.first(where: { $0.id == id })
    else { usageError("--run needs a known workload id and --lib ours|nio") }
    let nioID = name == "nio" ? spec.nioID : spec.id
    guard let run = subject.workloads[nioID] else { fatalError("\(id) is not available for \(name)") }
    run(1)
    run(options.runIterations)
    print("\(id) \(name): \(options.runIterations * spec.unitsPerIteration) units after warm-up")
    subject.shutdown()
    exit(0)
}

if options.allocationsOnly {
    // One line per workload, `<id> ours <calls per unit> nio <calls per unit>` (`n/a` when a
    // library lacks the workload), with four decimals so the reader can round as it decides.
    // Untimed: a warm-up iteration, then at least 100k units counted. Every runner checks its
    // counters, so this is also a smoke run of both libraries' workloads.
    let harness = Harness()
    let ours = TomorrowlandWorkloads.make()
    let nio = NIOWorkloads.make()
    var nioCounts: [String: Double] = [:]
    func figure(_ count: Double?) -> String { count.map { String(format: "%.4f", $0) } ?? "n/a" }
    for spec in WorkloadSpec.all where options.only?.contains(spec.id) ?? true {
        let oursCount = ours?.workloads[spec.id].map {
            harness.allocationsPerUnit($0, unitsPerIteration: spec.unitsPerIteration)
        }
        if nioCounts[spec.nioID] == nil, let run = nio.workloads[spec.nioID] {
            nioCounts[spec.nioID] = harness.allocationsPerUnit(run, unitsPerIteration: spec.unitsPerIteration)
        }
        print("\(spec.id) ours \(figure(oursCount)) nio \(figure(nioCounts[spec.nioID]))")
    }
    ours?.shutdown()
    nio.shutdown()
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
if !options.skipM1 {
    report.memory = (ours: m1InChildProcess("ours"), nio: m1InChildProcess("nio"))
}

let harness = Harness(targetSeconds: options.targetSeconds)
let ours = TomorrowlandWorkloads.make()
let nio = NIOWorkloads.make()
var nioMeasurements: [String: (Measurement, Double)] = [:]

// Interleaved: each workload runs for our library, then for NIO, so that load changes on this
// shared machine hit both sides of a ratio alike.
for spec in WorkloadSpec.all where options.only?.contains(spec.id) ?? true {
    FileHandle.standardError.write(Data("\(spec.id)…\n".utf8))
    var row = Report.Row(spec: spec)
    if let ours, let run = ours.workloads[spec.id] {
        row.ours = harness.measure(run, unitsPerIteration: spec.unitsPerIteration, loopCPUClock: ours.loopCPUClock)
        row.oursAllocations = harness.allocationsPerUnit(run, unitsPerIteration: spec.unitsPerIteration)
    }
    if let cached = nioMeasurements[spec.nioID] {
        (row.nio, row.nioAllocations) = (cached.0, cached.1)
    } else if let run = nio.workloads[spec.nioID] {
        let measurement = harness.measure(
            run, unitsPerIteration: spec.unitsPerIteration, loopCPUClock: nio.loopCPUClock)
        let allocations = harness.allocationsPerUnit(run, unitsPerIteration: spec.unitsPerIteration)
        nioMeasurements[spec.nioID] = (measurement, allocations)
        (row.nio, row.nioAllocations) = (measurement, allocations)
    }
    report.rows.append(row)
}
ours?.shutdown()
nio.shutdown()
print(
    """
    Each figure: median of \(harness.repetitions) timed repetitions of about \(options.targetSeconds) s each, after one \
    warm-up iteration and calibration, with the fastest and slowest repetition in brackets. \
    ours/NIO is the ratio of the medians (below 1: ours is faster). Loop CPU is the loop thread's \
    CPU time (median). Allocation calls per unit are counted by the benchmark's malloc interposer \
    over at least 100k units after a warm-up. Workloads run interleaved: ours, then NIO.

    """)
print(report.markdown(oursAvailable: ours != nil))

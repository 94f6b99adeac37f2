import CBenchSupport
import Dispatch

/// The five timed repetitions of one workload for one library, per unit.
struct Measurement {
    /// Wall-clock nanoseconds per unit, one entry per repetition.
    var nanosecondsPerUnit: [Double]
    /// Loop-thread CPU nanoseconds per unit, one entry per repetition.
    var loopCPUNanosecondsPerUnit: [Double]
    /// Iterations per repetition, after calibration.
    var iterations: Int

    var median: Double { Self.median(nanosecondsPerUnit) }
    var minimum: Double { nanosecondsPerUnit.min() ?? .nan }
    var maximum: Double { nanosecondsPerUnit.max() ?? .nan }
    var loopCPUMedian: Double { Self.median(loopCPUNanosecondsPerUnit) }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// Runs workloads the way notes/benchmarks.md says: one warm-up iteration, calibration to about
/// `targetSeconds` per repetition, then `repetitions` timed repetitions.
struct Harness {
    /// The wall time one repetition aims at; calibration accepts half to double of it.
    var targetSeconds: Double = 1.0
    var repetitions: Int = 5

    func measure(_ run: LibraryUnderTest.Run, unitsPerIteration: Int, loopCPUClock: clockid_t) -> Measurement {
        run(1)  // warm-up
        let iterations = calibrate(run)
        var wall: [Double] = []
        var cpu: [Double] = []
        let units = Double(iterations * unitsPerIteration)
        for _ in 0..<repetitions {
            let cpuStart = cbench_clock_ns(loopCPUClock)
            let seconds = time { run(iterations) }
            let cpuEnd = cbench_clock_ns(loopCPUClock)
            wall.append(seconds * 1e9 / units)
            cpu.append(Double(cpuEnd - cpuStart) / units)
        }
        return Measurement(nanosecondsPerUnit: wall, loopCPUNanosecondsPerUnit: cpu, iterations: iterations)
    }

    /// Grows the iteration count (×8 while far too short, ×2 when closer), then scales it to
    /// the target and re-checks, scaling once more if the re-check falls outside the window.
    private func calibrate(_ run: LibraryUnderTest.Run) -> Int {
        let low = targetSeconds / 2
        let high = targetSeconds * 2
        var iterations = 1
        var seconds = time { run(iterations) }
        while seconds < low {
            iterations *= seconds < targetSeconds / 10 ? 8 : 2
            seconds = time { run(iterations) }
        }
        for _ in 0..<2 {
            let scaled = max(1, Int((Double(iterations) * targetSeconds / seconds).rounded()))
            if scaled == iterations { break }
            iterations = scaled
            seconds = time { run(iterations) }
            if seconds >= low && seconds <= high { break }
        }
        return iterations
    }

    /// Allocation calls per unit over enough iterations for about `minimumUnits` units, after a
    /// warm-up iteration.
    func allocationsPerUnit(_ run: LibraryUnderTest.Run, unitsPerIteration: Int, minimumUnits: Int = 100_000) -> Double
    {
        run(1)
        let iterations = max(1, minimumUnits / unitsPerIteration)
        cbench_malloc_counting_start()
        run(iterations)
        let calls = cbench_malloc_counting_stop()
        return Double(calls) / Double(iterations * unitsPerIteration)
    }

    private func time(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

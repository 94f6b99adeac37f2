import Foundation

/// The table the benchmark prints: one row per workload, ours against NIO.
struct Report {
    struct Row {
        let spec: WorkloadSpec
        var ours: Measurement?
        var nio: Measurement?
        var oursAllocations: Double?
        var nioAllocations: Double?
    }

    var rows: [Row] = []
    var memory: (ours: MemoryFigures?, nio: MemoryFigures?)?

    func markdown(oursAvailable: Bool) -> String {
        var lines: [String] = []
        lines.append(
            "| id | workload | unit | ours ns/unit median [min–max] | NIO ns/unit median [min–max] | ours/NIO | loop CPU ns/unit ours / NIO | ours/NIO (loop CPU) | allocs/unit ours / NIO |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for row in rows {
            let ratio = row.ours.flatMap { ours in row.nio.map { format(ours.median / $0.median, digits: 2) } } ?? "–"
            let cpuRatio =
                row.ours.flatMap { ours in row.nio.map { format(ours.loopCPUMedian / $0.loopCPUMedian, digits: 2) } }
                ?? "–"
            lines.append(
                "| \(row.spec.id) | \(row.spec.title) | \(row.spec.unit) | \(spread(row.ours)) | \(spread(row.nio)) | \(ratio) | "
                    + "\(format(row.ours?.loopCPUMedian)) / \(format(row.nio?.loopCPUMedian)) | \(cpuRatio) | "
                    + "\(format(row.oursAllocations, digits: 2)) / \(format(row.nioAllocations, digits: 2)) |")
        }
        if let memory {
            let ratio =
                memory.ours.flatMap { ours in
                    memory.nio.map { format(ours.mallocBytesPerPromise / $0.mallocBytesPerPromise, digits: 2) }
                } ?? "–"
            lines.append(
                "| M1 | pending promise + 1 callback (1M) | bytes | RSS \(format(memory.ours?.rssBytesPerPromise)), malloc \(format(memory.ours?.mallocBytesPerPromise)) | "
                    + "RSS \(format(memory.nio?.rssBytesPerPromise)), malloc \(format(memory.nio?.mallocBytesPerPromise)) | \(ratio) | – | – | – |"
            )
        }
        if let timerFire = rows.first(where: { $0.spec.id == "W5b" }) {
            let perRun = { (m: Measurement?) in
                m.map { format($0.median * Double(timerFire.spec.unitsPerIteration) / 1e6, digits: 1) + " ms" } ?? "–"
            }
            lines.append("")
            lines.append(
                "W5b wall time per run of 10k timers spread over 10 ms (floor 10 ms): ours \(perRun(timerFire.ours)), NIO \(perRun(timerFire.nio))."
            )
        }
        if !oursAvailable {
            lines.append("")
            lines.append("Tomorrowland's side: not available in this build (see TomorrowlandWorkloads.swift).")
        }
        for row in rows where oursAvailable && row.ours == nil {
            lines.append("")
            lines.append("\(row.spec.id): not available for Tomorrowland in this build.")
        }
        return lines.joined(separator: "\n")
    }

    private func spread(_ measurement: Measurement?) -> String {
        guard let measurement else { return "not available" }
        return "\(format(measurement.median)) [\(format(measurement.minimum))–\(format(measurement.maximum))]"
    }

    private func format(_ value: Double?, digits: Int = 1) -> String {
        guard let value, value.isFinite else { return "–" }
        return String(format: "%.\(digits)f", value)
    }
}

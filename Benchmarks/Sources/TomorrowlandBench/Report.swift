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
    /// Callgrind's instructions per unit, shown in a last column when present.
    var instructions: InstructionCounts?

    func markdown(oursAvailable: Bool) -> String {
        var lines: [String] = []
        lines.append(
            "| id | workload | unit | ours ns/unit median [min–max] | NIO ns/unit median [min–max] | ours/NIO | loop CPU ns/unit ours / NIO | ours/NIO (loop CPU) | allocs/unit ours / NIO |"
                + (instructions == nil ? "" : " Ir/unit ours / NIO (callgrind) | ours/NIO (Ir) |")
        )
        lines.append("|---|---|---|---|---|---|---|---|---|" + (instructions == nil ? "" : "---|---|"))
        for row in rows {
            let ratio = row.ours.flatMap { ours in row.nio.map { format(ours.median / $0.median, digits: 2) } } ?? "–"
            let cpuRatio =
                row.ours.flatMap { ours in row.nio.map { format(ours.loopCPUMedian / $0.loopCPUMedian, digits: 2) } }
                ?? "–"
            lines.append(
                "| \(row.spec.id) | \(row.spec.title) | \(row.spec.unit) | \(spread(row.ours)) | \(spread(row.nio)) | \(ratio) | "
                    + "\(format(row.ours?.loopCPUMedian)) / \(format(row.nio?.loopCPUMedian)) | \(cpuRatio) | "
                    + "\(format(row.oursAllocations, digits: 2)) / \(format(row.nioAllocations, digits: 2)) |"
                    + instructionCells(row))
        }
        if let memory {
            let ratio =
                memory.ours.flatMap { ours in
                    memory.nio.map { format(ours.mallocBytesPerPromise / $0.mallocBytesPerPromise, digits: 2) }
                } ?? "–"
            lines.append(
                "| M1 | pending promise + 1 callback (1M) | bytes | RSS \(format(memory.ours?.rssBytesPerPromise)), malloc \(format(memory.ours?.mallocBytesPerPromise)) | "
                    + "RSS \(format(memory.nio?.rssBytesPerPromise)), malloc \(format(memory.nio?.mallocBytesPerPromise)) | \(ratio) | – | – | – |"
                    + (instructions == nil ? "" : " – | – |")
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
        if let instructions {
            lines.append("")
            lines.append(
                "Ir/unit: instructions per unit under callgrind, from \(instructions.source) (\(instructions.heading)); "
                    + "`make bench-callgrind` refreshes them. Counts do not depend on the machine's load.")
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

    /// The two callgrind cells of `row`: ours under the row's id, NIO under the runner it
    /// compares with.
    private func instructionCells(_ row: Row) -> String {
        guard let instructions else { return "" }
        let ours = instructions.perUnit[InstructionCounts.key(row.spec.id, "ours")]
        let nio = instructions.perUnit[InstructionCounts.key(row.spec.nioID, "nio")]
        let ratio = ours.flatMap { ours in nio.map { format(ours / $0, digits: 2) } } ?? "–"
        return " \(format(ours, digits: 0)) / \(format(nio, digits: 0)) | \(ratio) |"
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

/// Instructions per unit from the table that scripts/callgrind.sh writes (results/callgrind.md):
/// rows `| workload | library | N1 | N2 | units | Ir(N1) | Ir(N2) | Ir/unit |`.
struct InstructionCounts {
    /// Ir/unit by ``key(_:_:)``.
    var perUnit: [String: Double] = [:]
    /// The file read.
    var source: String
    /// Its first line (the date of the callgrind run), without the Markdown heading marks.
    var heading: String

    static func key(_ workload: String, _ library: String) -> String { "\(workload) \(library)" }

    /// Reads `path`; a missing or unreadable file gives no counts (the cells show "–").
    init(contentsOf path: String) {
        source = path
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        heading =
            text.split(separator: "\n").first.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "# ")) }
            ?? "not found"
        for line in text.split(separator: "\n") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 8, let perUnit = Double(cells[7]) else { continue }
            self.perUnit[Self.key(cells[0], cells[1])] = perUnit
        }
    }
}

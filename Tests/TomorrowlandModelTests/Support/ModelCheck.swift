/// Runs one program against the library and the model and says how they differ, if they do.
enum ModelCheck {
    struct Difference: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ program: [ModelOp]) -> Difference? {
        let library = LibraryRun()
        let model = ReferenceModel()
        for op in program {
            library.apply(op)
            model.apply(op)
        }
        library.finish()
        model.finish()
        defer { library.release() }
        if let difference = compare(library.trace, model.trace) {
            return Difference(
                description: difference.description + "\n  steps as the model resolved them:\n"
                    + model.log.enumerated().map { "    \($0.offset): \($0.element)" }.joined(separator: "\n")
                    + (verbose
                        ? "\n  library trace:\n\(numbered(library.trace))\n  model trace:\n\(numbered(model.trace))"
                        : ""))
        }
        if !library.unresolvedPromises.isEmpty {
            return Difference(description: "promises never resolved: \(library.unresolvedPromises)")
        }
        if !model.unresolvedPromises.isEmpty {
            return Difference(description: "the model left promises unresolved: \(model.unresolvedPromises)")
        }
        // The loop is the run's, not scoped by `withTestLoop`: checked here, with the same message.
        do {
            try library.loop.checkNoPendingWork()
        } catch {
            return Difference(description: error.description)
        }
        return nil
    }

    static let verbose = PromiseModelTests.environment("TOMORROWLAND_MODEL_VERBOSE") != nil

    static func numbered(_ trace: [ModelEvent]) -> String {
        trace.enumerated().map { "    \($0.offset): \($0.element)" }.joined(separator: "\n")
    }

    /// The first position where the traces differ, with some context around it.
    static func compare(_ library: [ModelEvent], _ model: [ModelEvent]) -> Difference? {
        guard library != model else { return nil }
        let common = zip(library, model).prefix { $0 == $1 }.count
        let from = max(0, common - 3)
        func excerpt(_ trace: [ModelEvent]) -> String {
            trace[from..<min(trace.count, common + 4)].enumerated()
                .map { "    \(from + $0.offset == common ? ">" : " ") \(from + $0.offset): \($0.element)" }
                .joined(separator: "\n")
        }
        return Difference(
            description: """
                traces differ at event \(common) (library \(library.count) events, model \(model.count)):
                  library:
                \(excerpt(library))
                  model:
                \(excerpt(model))
                """)
    }
}

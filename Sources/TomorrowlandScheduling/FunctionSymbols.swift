#if canImport(Glibc)
    import Glibc
#endif

/// Names a function by its address, for stall reports: the demangled name from the ELF symbol
/// table of the binary that holds it, or the binary and offset (for `addr2line`) when it has
/// none.
///
/// The binary and where it is loaded come from `/proc/self/maps` (the mapping that holds the
/// address, and that file's mapping at offset 0). `dladdr` would not do: it only sees exported
/// symbols, and closures are local ones, so it would answer with the nearest exported function
/// before the closure, a wrong name. This reads the binary's full symbol table (`.symtab`), which
/// SwiftPM's debug and release builds keep unless the binary is stripped, then the dynamic one
/// (`.dynsym`, exported functions only). Slow (it reads the mappings, maps the file and scans its
/// symbols): only a stall watchdog, or a loop after a stall, calls it, once per report.
package enum FunctionSymbols {
    /// A readable name for the function at `address`.
    package static func describe(address: UInt) -> String {
        guard address != 0 else { return "at an unknown address" }
        guard let mapping = ProcessMappings.file(containing: address) else {
            return "at 0x\(String(address, radix: 16))"
        }
        if let name = ELFSymbolTable.functionName(containing: address, loadedAt: mapping.base, path: mapping.path) {
            return demangle(name)
        }
        return "at \(mapping.path)+0x\(String(address &- mapping.base, radix: 16))"
    }

    /// Swift's demangling of `symbol`, or `symbol` itself when it is not a Swift name; without
    /// the compiler's "partial apply forwarder for" prefix (a closure that captures values is
    /// entered through one), which names the same closure.
    package static func demangle(_ symbol: String) -> String {
        let name = demangleRaw(symbol)
        let forwarder = "partial apply forwarder for "
        return name.hasPrefix(forwarder) ? String(name.dropFirst(forwarder.count)) : name
    }

    private static func demangleRaw(_ symbol: String) -> String {
        let demangled = symbol.withCString { name -> String? in
            guard let result = swift_demangle(name, strlen(name), nil, nil, 0) else { return nil }
            defer { free(result) }
            return String(cString: result)
        }
        return demangled ?? symbol
    }
}

/// The runtime's demangler (exported by the Swift runtime, declared here as the standard library
/// does not declare it).
@_silgen_name("swift_demangle")
private func swift_demangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// The files mapped into this process, from `/proc/self/maps`.
enum ProcessMappings {
    /// The file whose mapping holds `address`, and where the file is loaded (the start of its
    /// mapping at file offset 0), or nil (an anonymous mapping, or no mapping).
    static func file(containing address: UInt) -> (path: String, base: UInt)? {
        guard let text = readMaps() else { return nil }
        var entries: [(start: UInt, end: UInt, offset: UInt, path: Substring)] = []
        for line in text.split(separator: "\n") {
            // "start-end perms offset dev inode   path"
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6 else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                let offset = UInt(fields[2], radix: 16)
            else { continue }
            let path = fields[5].drop(while: { $0 == " " })
            guard path.hasPrefix("/") else { continue }
            entries.append((start, end, offset, path))
        }
        guard let holder = entries.first(where: { address >= $0.start && address < $0.end }) else { return nil }
        let base = entries.first(where: { $0.path == holder.path && $0.offset == 0 })?.start ?? holder.start
        return (String(holder.path), base)
    }

    private static func readMaps() -> String? {
        let descriptor = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

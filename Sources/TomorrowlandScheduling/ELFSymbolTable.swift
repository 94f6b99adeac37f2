#if canImport(Glibc)
    import Glibc
#endif

/// Reads the function symbols of an ELF64 file (the local ones too), to name an address in it.
enum ELFSymbolTable {
    private static let sectionTypeSymbolTable: UInt32 = 2
    private static let sectionTypeDynamicSymbols: UInt32 = 11
    private static let symbolTypeFunction: UInt8 = 2
    private static let fileTypeExecutable: UInt16 = 2

    /// The name of the function symbol of the file at `path` (mapped at `base`) whose range holds
    /// `address`, or nil.
    static func functionName(containing address: UInt, loadedAt base: UInt, path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 64 else { return nil }
        let size = Int(status.st_size)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != MAP_FAILED else {
            return nil
        }
        defer { munmap(mapping, size) }
        let file = UnsafeRawBufferPointer(start: mapping, count: size)
        return functionName(in: file, containing: address, loadedAt: base)
    }

    /// Scans the symbol table of `file`, an ELF64 little-endian image.
    private static func functionName(
        in file: UnsafeRawBufferPointer, containing address: UInt, loadedAt base: UInt
    )
        -> String?
    {
        // The ELF header: magic, class 2 (64-bit), data 1 (little-endian).
        guard file[0] == 0x7F, file[1] == 0x45, file[2] == 0x4C, file[3] == 0x46, file[4] == 2, file[5] == 1 else {
            return nil
        }
        let fileType: UInt16 = read(file, at: 0x10)
        // A position-independent file's symbols are relative to where it was loaded.
        let target = fileType == fileTypeExecutable ? address : address &- base
        let sectionTableOffset = Int(read(file, at: 0x28) as UInt64)
        let sectionEntrySize = Int(read(file, at: 0x3A) as UInt16)
        let sectionCount = Int(read(file, at: 0x3C) as UInt16)
        guard sectionEntrySize >= 64, sectionTableOffset + sectionCount * sectionEntrySize <= file.count else {
            return nil
        }
        // The full table first; the dynamic one (exported functions) if the file was stripped.
        for sectionType in [sectionTypeSymbolTable, sectionTypeDynamicSymbols] {
            if let name = functionName(
                in: file, sectionType: sectionType, target: target, sectionTableOffset: sectionTableOffset,
                sectionEntrySize: sectionEntrySize, sectionCount: sectionCount)
            {
                return name
            }
        }
        return nil
    }

    /// Scans the symbol tables of type `sectionType` of `file` for the function holding `target`.
    private static func functionName(
        in file: UnsafeRawBufferPointer, sectionType: UInt32, target: UInt, sectionTableOffset: Int,
        sectionEntrySize: Int, sectionCount: Int
    ) -> String? {
        for index in 0..<sectionCount {
            let section = sectionTableOffset + index * sectionEntrySize
            guard read(file, at: section + 4) as UInt32 == sectionType else { continue }
            let symbolsOffset = Int(read(file, at: section + 0x18) as UInt64)
            let symbolsSize = Int(read(file, at: section + 0x20) as UInt64)
            let stringsIndex = Int(read(file, at: section + 0x28) as UInt32)
            guard stringsIndex < sectionCount else { return nil }
            let stringsSection = sectionTableOffset + stringsIndex * sectionEntrySize
            let stringsOffset = Int(read(file, at: stringsSection + 0x18) as UInt64)
            let stringsSize = Int(read(file, at: stringsSection + 0x20) as UInt64)
            guard symbolsOffset + symbolsSize <= file.count, stringsOffset + stringsSize <= file.count else {
                return nil
            }
            var symbol = symbolsOffset
            while symbol + 24 <= symbolsOffset + symbolsSize {
                defer { symbol += 24 }
                let info: UInt8 = read(file, at: symbol + 4)
                guard info & 0xF == symbolTypeFunction else { continue }
                let value = UInt(read(file, at: symbol + 8) as UInt64)
                let length = UInt(read(file, at: symbol + 16) as UInt64)
                guard target >= value, target < value &+ max(length, 1) else { continue }
                let nameOffset = Int(read(file, at: symbol) as UInt32)
                guard nameOffset < stringsSize else { return nil }
                let start = stringsOffset + nameOffset
                var end = start
                while end < stringsOffset + stringsSize && file[end] != 0 { end += 1 }
                return String(decoding: UnsafeRawBufferPointer(rebasing: file[start..<end]), as: UTF8.self)
            }
        }
        return nil
    }

    private static func read<Value: FixedWidthInteger>(_ file: UnsafeRawBufferPointer, at offset: Int) -> Value {
        Value(littleEndian: file.loadUnaligned(fromByteOffset: offset, as: Value.self))
    }
}

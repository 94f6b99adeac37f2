#if !canImport(ObjectiveC)
    /// The size of a class's instances as the Swift runtime allocates them (the object header and
    /// the stored properties): what `swift_allocObject` asks `malloc` for.
    ///
    /// The tests that keep a box within one of glibc's chunk sizes check this figure: a request of
    /// at most 120 bytes is a 128-byte chunk (the fast bins), one of at most 104 a 112-byte chunk.
    /// The chunk one allocation gets (`malloc_usable_size`) is no proof either way: glibc hands a
    /// free chunk 16 bytes larger out whole, and how many such chunks are free depends on what
    /// every test running beside it freed before.
    enum ClassInstanceSize {
        /// The instance size of `type`, read from its metadata. Without Objective-C interop, a
        /// class's metadata holds its kind at byte 0, its superclass at 8, its flags and instance
        /// address point at 16 and 20, and its instance size, a 32-bit field, at 24.
        static func of(_ type: AnyClass) -> Int {
            let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
            return Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
        }

        /// Whether ``of(_:)`` reads the instance size on this runtime: checked on a class whose
        /// size is known (a 16-byte header and one byte).
        static var readsTheRuntimesLayout: Bool {
            of(Probe.self) == 17
        }

        /// A class of a known size.
        private final class Probe {
            var byte: UInt8 = 0
        }
    }
#endif

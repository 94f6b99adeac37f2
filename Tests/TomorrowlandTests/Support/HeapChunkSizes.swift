#if canImport(Glibc)
    import Glibc

    /// What glibc's allocator gave an object: the tests that keep a box within a chunk size (the
    /// fast bins' 128 bytes, the 112-byte chunk of a root box with its slot) measure with this.
    enum HeapChunkSizes {
        /// The usable sizes (`malloc_usable_size`) of `count` objects made by `make`, all alive at
        /// once, made after 32 chunks of 144 bytes were freed (each beside a live guard, so that
        /// none merges) and a large request moved them out of the fast bins.
        ///
        /// Read the smallest: glibc rounds a request of at most 120 bytes up to a 128-byte chunk
        /// (120 usable) but hands a free 144-byte chunk out whole when that is the best fit (the
        /// 16 bytes left could not be a chunk), which depends on what the process freed before;
        /// each object may land in such a chunk, not all of them. The freed chunks make that hard
        /// case happen on purpose.
        static func ofMany(count: Int = 64, _ make: () -> AnyObject) throws -> [Int] {
            // Not in Glibc's module map (malloc.h): looked up by name.
            typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else {
                throw LookupFailed()
            }
            let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
            let freedAndGuards = (0..<32).map { _ in (malloc(136), malloc(24)) }
            freedAndGuards.forEach { free($0.0) }
            defer { freedAndGuards.forEach { free($0.1) } }
            free(malloc(2_000))
            let objects = (0..<count).map { _ in make() }
            return objects.map { usableSize(Unmanaged.passUnretained($0).toOpaque()) }
        }

        /// `malloc_usable_size` was not found.
        struct LookupFailed: Error {}
    }
#endif

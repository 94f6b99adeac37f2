/// A growable FIFO ring buffer: the one queue of the loops' ready work (``ReadyQueue``, inside
/// ``SchedulingCore``) and of the NIO executor's local FIFO.
///
/// Elements move in and out (`initialize(to:)`/`move()`), with no extra retain and release. The
/// capacity is a power of two, so that wrapping is a mask.
///
/// A non-copyable struct: it owns its buffer, and copying it would double-free; its owner frees
/// it with ``deallocate()``, once. Not a `deinit` of its own: a non-copyable stored property
/// reached from `@inlinable` code (``SchedulingCore/enqueue(_:)``) must not have one that is not
/// inlinable (the 6.3 optimiser asserts while inlining the property's setter), and a `deinit`
/// cannot be.
///
/// `@usableFromInline`, with its append and remove paths `@inlinable`: the loops live in other
/// modules, and queueing a promise job from a loop's own thread (every hop of a chain on a loop)
/// otherwise paid calls across the module boundary (see ``SchedulingCore/enqueue(_:)``). The
/// growth path is `@inlinable` too, but never inlined, so that each user gets it specialized for
/// its element without paying for it on the common path.
@usableFromInline
package struct RingBuffer<Element>: ~Copyable {
    /// Room for `capacity` elements. Exactly the `count` elements from `head`, wrapping, are
    /// initialized: `append` initializes the slot past them, `removeFirst` moves the first out
    /// (checked: `count > 0`), `grow` and `deallocate` move or deinitialize exactly those.
    @usableFromInline var storage: UnsafeMutablePointer<Element>
    /// A power of two.
    @usableFromInline var capacity: Int
    /// Index of the first live element.
    @usableFromInline var head = 0
    /// Number of live elements, starting at `head` and wrapping.
    @usableFromInline package internal(set) var count = 0

    /// An empty buffer with room for 16 elements.
    @inlinable
    package init() {
        capacity = 16
        storage = .allocate(capacity: capacity)
    }

    /// Releases the live elements and frees the buffer; the owner's `deinit` calls it, once.
    @inlinable
    package mutating func deallocate() {
        // Live elements form at most two runs: from `head` to the end, then from the start.
        let firstRun = min(count, capacity - head)
        (storage + head).deinitialize(count: firstRun)
        storage.deinitialize(count: count - firstRun)
        storage.deallocate()
        count = 0
    }

    /// Whether the buffer holds no element.
    @inlinable
    package var isEmpty: Bool { count == 0 }

    /// Adds `element` at the back.
    ///
    /// Wrapping arithmetic: `count` never exceeds `capacity`, and the index is masked.
    @inlinable
    @inline(__always)
    package mutating func append(_ element: consuming Element) {
        // Growing is a call at the end of its own branch, so that the common path needs none
        // (and saves no registers for one).
        guard count != capacity else {
            growAndAppend(consume element)
            return
        }
        (storage + ((head &+ count) & (capacity &- 1))).initialize(to: consume element)
        count &+= 1
    }

    /// ``append(_:)`` on a full buffer.
    @inlinable
    @inline(never)
    mutating func growAndAppend(_ element: consuming Element) {
        grow()
        (storage + ((head &+ count) & (capacity &- 1))).initialize(to: consume element)
        count &+= 1
    }

    /// Removes and returns the first element; the buffer must not be empty.
    @inlinable
    @inline(__always)
    package mutating func removeFirst() -> Element {
        precondition(count > 0, "RingBuffer.removeFirst() on an empty buffer")
        let element = (storage + head).move()
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        return element
    }

    /// Doubles the capacity, unwrapping the ring into the front of the new buffer: elements move
    /// without retain and release.
    @inlinable
    mutating func grow() {
        let newCapacity = capacity * 2
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        let firstRun = min(count, capacity - head)
        newStorage.moveInitialize(from: storage + head, count: firstRun)
        (newStorage + firstRun).moveInitialize(from: storage, count: count - firstRun)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
        head = 0
    }
}

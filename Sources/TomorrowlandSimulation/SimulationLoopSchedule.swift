import TomorrowlandLoop

/// When each simulated loop next has something to do, kept between steps so that picking the
/// next event does not ask every loop of every host.
///
/// Asking all of them would dominate a large simulation (a 100-client `loopkv-sim` run: 101
/// loops, each behind the loop's confinement check, for every one of a million events). Here a
/// loop is asked again
/// only when something may have given it work sooner: it ran (a turn or a callback), or another
/// thread or loop submitted to it (its wake-up, ``SimulatedNetwork/loopWasWoken(_:)``).
///
/// The order is the network's documented one: earliest time first, then the slot, which is the
/// order the loops were added in (host by host, then loop by loop).
///
/// A slot's time is a lower bound of the loop's real next time between two refreshes: whatever
/// makes a loop due sooner (new work) marks it stale. What makes it due later (a timer cancelled
/// from elsewhere, a shutdown) does not have to; ``SimulatedNetwork`` asks the loop it is about
/// to run once more, and puts it back in its place when the answer is later.
struct SimulationLoopSchedule {
    /// One loop: its host, its index there, and its cached next time.
    struct Slot {
        let host: SimulatedHost
        let index: Int
        let loop: EventLoop
        /// The cached time, nil when the loop had nothing to do (it is out of the heap then).
        var due: UInt64?
        /// Where it sits in ``heap``, when `due` is not nil.
        var position = -1
        /// Whether it waits in ``stale`` for a refresh.
        var isStale = false
    }

    private(set) var slots: [Slot] = []
    /// Slot numbers by loop.
    private var slotByLoop: [ObjectIdentifier: Int] = [:]
    /// Slots with a time, as a binary min-heap on (due, slot number).
    private var heap: [Int] = []
    /// Slots to ask again, in the order they were marked.
    private var stale: [Int] = []

    /// Adds the loops of `host`, after every loop added before; each is asked at the next pick.
    mutating func add(_ host: SimulatedHost) {
        for (index, loop) in host.loops.enumerated() {
            let slot = slots.count
            slots.append(Slot(host: host, index: index, loop: loop))
            slotByLoop[ObjectIdentifier(loop)] = slot
            markStale(slot)
        }
    }

    /// Marks `loop` to be asked again before the next pick.
    mutating func markStale(_ loop: EventLoop) {
        markStale(ObjectIdentifier(loop))
    }

    /// Marks the loop with this identity, if it is one of the network's, to be asked again.
    mutating func markStale(_ loop: ObjectIdentifier) {
        if let slot = slotByLoop[loop] { markStale(slot) }
    }

    mutating func markStale(_ slot: Int) {
        guard !slots[slot].isStale else { return }
        slots[slot].isStale = true
        stale.append(slot)
    }

    /// Asks every stale loop its next time; `ask` returns nil for a loop with nothing to do.
    mutating func refresh(_ ask: (Slot) -> UInt64?) {
        guard !stale.isEmpty else { return }
        let marked = stale
        stale.removeAll(keepingCapacity: true)
        for slot in marked {
            slots[slot].isStale = false
            update(slot, to: ask(slots[slot]))
        }
    }

    /// The slot due first and its time, if any loop has something to do.
    var first: (slot: Int, due: UInt64)? {
        guard let slot = heap.first, let due = slots[slot].due else { return nil }
        return (slot, due)
    }

    /// Sets the cached time of `slot` and restores the heap's order.
    mutating func update(_ slot: Int, to due: UInt64?) {
        let old = slots[slot].due
        guard old != due else { return }
        slots[slot].due = due
        switch (old, due) {
        case (nil, nil):
            return
        case (nil, .some):
            slots[slot].position = heap.count
            heap.append(slot)
            siftUp(heap.count - 1)
        case (.some, nil):
            remove(at: slots[slot].position)
        case (.some(let before), .some(let after)):
            if after < before { siftUp(slots[slot].position) } else { siftDown(slots[slot].position) }
        }
    }

    // MARK: The heap

    private func precedes(_ first: Int, _ second: Int) -> Bool {
        let a = slots[first].due ?? .max
        let b = slots[second].due ?? .max
        return a < b || (a == b && first < second)
    }

    private mutating func remove(at position: Int) {
        let slot = heap[position]
        slots[slot].position = -1
        let last = heap.removeLast()
        guard position < heap.count else { return }
        heap[position] = last
        slots[last].position = position
        siftUp(position)
        siftDown(slots[last].position)
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        slots[heap[i]].position = i
        slots[heap[j]].position = j
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var best = left
            if left + 1 < heap.count && precedes(heap[left + 1], heap[left]) { best = left + 1 }
            guard precedes(heap[best], heap[parent]) else { return }
            swapAt(best, parent)
            parent = best
        }
    }
}

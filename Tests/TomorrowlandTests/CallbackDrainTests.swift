import Testing
import Tomorrowland
import TomorrowlandTestSupport

/// The callback drain: a resolution that resolves further promises inline runs their callbacks
/// depth-first, resuming each interrupted list afterwards, however deep the nesting (J2).
@Suite("Callback drain")
struct CallbackDrainTests {
    typealias IntPromise = Promise<Int, String>

    @Test("lists interrupted by nested resolutions resume last-in first-out, 50 levels deep")
    func interruptedListsResumeLastInFirstOutAtAnyDepth() {
        let depth = 50
        let order = Recorder<String>()
        let (root, resolver) = IntPromise.makeWithResolver()
        // Each level's list is [before, pipe into the next level, after]: the pipe resolves the
        // next level inside the drain, which interrupts this level's list before `after`.
        var level = root
        var levels: [IntPromise] = [root]
        for index in 0..<depth {
            level.tap(on: .immediate) { _ in order.record("before \(index)") }
            let next = level.makeChild()
            level.tap(on: .immediate) { _ in order.record("after \(index)") }
            levels.append(next)
            level = next
        }
        level.tap(on: .immediate) { _ in order.record("deepest") }

        resolver.fulfill(with: 1)

        let expected =
            (0..<depth).map { "before \($0)" } + ["deepest"] + (0..<depth).reversed().map { "after \($0)" }
        #expect(order.values == expected)
        #expect(levels.allSatisfy { $0.result == .value(1) })
    }
}

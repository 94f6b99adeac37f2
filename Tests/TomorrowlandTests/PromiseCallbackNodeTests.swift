import Testing

@testable import Tomorrowland

/// A callback node releases the node it links to (`next`) by hand in its deinit: without
/// recursion, so that a long chain dying at once does not exhaust the stack.
@Suite("Promise callback node")
struct PromiseCallbackNodeTests {
    @Test("a chain of a million nodes linked through next is released without recursion")
    func longChainIsReleasedIteratively() {
        weak var last: PromiseCallbackNode?
        do {
            var head = PromiseCallbackNode()
            last = head
            for _ in 1..<1_000_000 {
                let node = PromiseCallbackNode()
                node.next = head
                head = node
            }
            #expect(last != nil)
        }
        #expect(last == nil, "every node of the chain was released")
    }

    @Test("a node still referenced elsewhere stops the release of the chain there")
    func sharedNodeInChainSurvives() {
        let shared = PromiseCallbackNode()
        weak var weakTail: PromiseCallbackNode?
        do {
            let tail = PromiseCallbackNode()
            shared.next = tail
            weakTail = tail
        }
        do {
            let head = PromiseCallbackNode()
            head.next = shared
        }
        #expect(weakTail != nil)
        #expect(shared.next === weakTail, "the shared node keeps its own link")
        shared.next = nil
        #expect(weakTail == nil)
    }
}

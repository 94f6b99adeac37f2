import Dispatch
import Foundation

/// The key under which test queues carry their name, so a callback can tell which queue it
/// runs on.
let queueTagKey = DispatchSpecificKey<String>()

/// A serial (or, with `.concurrent`, concurrent) queue tagged with `tag` under ``queueTagKey``.
func makeTaggedQueue(_ tag: String, attributes: DispatchQueue.Attributes = []) -> DispatchQueue {
    let queue = DispatchQueue(label: tag, attributes: attributes)
    queue.setSpecific(key: queueTagKey, value: tag)
    return queue
}

/// The tag of the test queue the caller runs on, or `nil` outside tagged queues.
var currentQueueTag: String? {
    DispatchQueue.getSpecific(key: queueTagKey)
}

// libdispatch answers the label of the queue running the caller when given a null queue
// (DISPATCH_CURRENT_QUEUE_LABEL). Global queues cannot carry specifics, so this is how a test
// tells that a callback runs on `DispatchQueue.global(qos:)` of the right class. The Swift
// overlay on Linux does not re-export the C function, hence the symbol declaration.
@_silgen_name("dispatch_queue_get_label")
private func dispatchQueueGetLabel(_ queue: OpaquePointer?) -> UnsafePointer<CChar>

/// The label of the Dispatch queue running the caller (`com.apple.root.utility-qos`, …).
var currentDispatchQueueLabel: String {
    String(cString: dispatchQueueGetLabel(nil))
}

/// An identifier of the calling thread (its pthread handle).
func currentThreadID() -> UInt {
    UInt(pthread_self())
}

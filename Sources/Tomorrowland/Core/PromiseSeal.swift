/// The handle object that all copies of one `Promise` value share.
///
/// When the last copy goes away, its deinit seals the box: from then on, the box is cancelled
/// automatically once every propagating observer has requested cancellation (D1).
final class PromiseSeal<Value, Error>: @unchecked Sendable {
    // Sendable: `box` is immutable and the box is itself thread-safe.
    let box: PromiseBox<Value, Error>

    init(box: PromiseBox<Value, Error>) {
        self.box = box
    }

    deinit {
        box.seal()
    }
}

import Tomorrowland
import TomorrowlandTesting

typealias ModelPromise = Promise<Int, any Error>

/// Runs a generated program against the real library on a `TestLoop`, recording the same events
/// as ``ReferenceModel``.
///
/// `@unchecked Sendable`: every callback runs on the test thread, inline or inside a driving
/// call of the loop that thread makes, so the mutable state is only ever touched by that thread.
final class LibraryRun: @unchecked Sendable {
    let loop = TestLoop()
    /// The program's one handle per promise (nil once dropped, or for promises it never held).
    private var handles: [ModelPromise?] = []
    private var cancellables: [PromiseCancellable?] = []
    private var resolved: [Bool] = []
    private var resolvers: [ModelPromise.Resolver] = []
    private var rootIDs: [Int] = []
    private var tokens: [PromiseInvalidationToken] = []
    private var callbackCount = 0
    private(set) var trace: [ModelEvent] = []

    private func context(_ context: ModelContext) -> PromiseContext {
        switch context {
        case .loop: return .loop(loop)
        case .immediate: return .immediate
        case .nowOrLoop: return .nowOr(.loop(loop))
        }
    }

    private func record(_ event: ModelEvent) {
        trace.append(event)
    }

    /// Reserves the next promise number before the call that makes the promise, because that
    /// call may run callbacks inline that make further promises.
    private func reserve() -> Int {
        handles.append(nil)
        cancellables.append(nil)
        resolved.append(false)
        return handles.count - 1
    }

    private func install(_ promise: ModelPromise, as id: Int, keepingHandle: Bool = true) {
        if keepingHandle { handles[id] = promise }
        cancellables[id] = promise.cancellable
        promise.tap(on: .immediate) { result in
            self.resolved[id] = true
            self.record(.resolved(promise: id, ModelResult(result)))
        }
    }

    private func makeRoot(requestContext: ModelContext, keepingHandle: Bool) -> ModelPromise {
        let (promise, resolver) = ModelPromise.makeWithResolver()
        let id = reserve()
        resolvers.append(resolver)
        rootIDs.append(id)
        resolver.onRequestCancel(on: context(requestContext)) { _ in
            self.record(.requestCancelHandler(promise: id))
        }
        install(promise, as: id, keepingHandle: keepingHandle)
        return promise
    }

    /// A copy, so that no access to the array is in progress while the library runs callbacks.
    private func resolver(_ raw: Int) -> ModelPromise.Resolver {
        resolvers[raw % resolvers.count]
    }

    private func handle(_ raw: Int) -> ModelPromise? {
        handles[raw % handles.count]
    }

    private func token(_ raw: Int?) -> PromiseInvalidationToken? {
        guard let raw, !tokens.isEmpty else { return nil }
        return tokens[raw % tokens.count]
    }

    private func nextCallback() -> Int {
        defer { callbackCount += 1 }
        return callbackCount
    }

    // MARK: - What the user callbacks do

    private func call(_ kind: CallbackKind, _ callback: Int, _ input: ModelResult) -> CallbackOutput {
        record(.callback(callback, input: input))
        return CallbackScript.output(of: kind, callback: callback, input: input)
    }

    private func value(_ output: CallbackOutput) throws -> Int {
        switch output {
        case .result(.value(let value)): return value
        case .thrown(let code): throw ModelError(code: code)
        default: preconditionFailure("a value callback produced \(output)")
        }
    }

    private func error(_ output: CallbackOutput) throws -> ModelError {
        switch output {
        case .result(let result) where result.isError: return ModelError(code: result.errorCode)
        case .thrown(let code): throw ModelError(code: code)
        default: preconditionFailure("an error callback produced \(output)")
        }
    }

    private func result(_ output: CallbackOutput) throws -> PromiseResult<Int, any Error> {
        switch output {
        case .result(let result): return result.promiseResult
        case .thrown(let code): throw ModelError(code: code)
        default: preconditionFailure("a result callback produced \(output)")
        }
    }

    private func promise(_ output: CallbackOutput, callback: Int) throws -> ModelPromise {
        switch output {
        case .pendingPromise:
            return makeRoot(requestContext: ModelContext(rawValue: callback % 3)!, keepingHandle: false)
        case .resolvedPromise(let result): return ModelPromise(with: result.promiseResult)
        case .thrown(let code): throw ModelError(code: code)
        case .result: preconditionFailure("a promise callback produced \(output)")
        }
    }

    // MARK: - Steps

    func apply(_ op: ModelOp) {
        perform(op)
        loop.run()
    }

    // A long switch over every callback family is the point of this function.
    // swift-format-ignore
    private func derive(
        _ kind: CallbackKind, from parent: ModelPromise, on context: PromiseContext, token: PromiseInvalidationToken?,
        callback k: Int
    ) -> ModelPromise {
        switch kind {
        case .then:
            return parent.then(on: context, token: token) { _ = self.call(kind, k, .value($0)) }
        case .map:
            return parent.map(on: context, token: token) { try! self.value(self.call(kind, k, .value($0))) }
        case .flatMap:
            return parent.flatMap(on: context, token: token) { try! self.promise(self.call(kind, k, .value($0)), callback: k) }
        case .catch:
            return parent.catch(on: context, token: token) { _ = self.call(kind, k, ModelResult(error: $0)) }
        case .tryRecover:
            return parent.tryRecover(on: context, token: token) { try self.value(self.call(kind, k, ModelResult(error: $0))) }
        case .mapError:
            return parent.mapError(on: context, token: token) { error -> any Error in
                try! self.error(self.call(kind, k, ModelResult(error: error)))
            }
        case .flatMapError:
            return parent.flatMapError(on: context, token: token) { error -> ModelPromise in
                try! self.promise(self.call(kind, k, ModelResult(error: error)), callback: k)
            }
        case .always:
            return parent.always(on: context, token: token) { _ = self.call(kind, k, ModelResult($0)) }
        case .mapResult:
            return parent.mapResult(on: context, token: token) { result -> PromiseResult<Int, any Error> in
                try! self.result(self.call(kind, k, ModelResult(result)))
            }
        case .flatMapResult:
            return parent.flatMapResult(on: context, token: token) { result -> ModelPromise in
                try! self.promise(self.call(kind, k, ModelResult(result)), callback: k)
            }
        case .tryThen:
            return parent.tryThen(on: context, token: token) { _ = try self.value(self.call(kind, k, .value($0))) }
        case .tryMap:
            return parent.tryMap(on: context, token: token) { try self.value(self.call(kind, k, .value($0))) }
        case .tryFlatMap:
            return parent.tryFlatMap(on: context, token: token) { value -> ModelPromise in
                try self.promise(self.call(kind, k, .value(value)), callback: k)
            }
        case .tryMapError:
            return parent.tryMapError(on: context, token: token) { error -> ModelError in
                try self.error(self.call(kind, k, ModelResult(error: error)))
            }
        case .tryFlatMapError:
            return parent.tryFlatMapError(on: context, token: token) { error -> ModelPromise in
                try self.promise(self.call(kind, k, ModelResult(error: error)), callback: k)
            }
        case .tryMapResult:
            return parent.tryMapResult(on: context, token: token) { result -> PromiseResult<Int, any Error> in
                try self.result(self.call(kind, k, ModelResult(result)))
            }
        case .tryFlatMapResult:
            return parent.tryFlatMapResult(on: context, token: token) { result -> ModelPromise in
                try self.promise(self.call(kind, k, ModelResult(result)), callback: k)
            }
        case .onCancel:
            return parent.onCancel(on: context, token: token) { _ = self.call(kind, k, .cancelled) }
        }
    }

    private func perform(_ op: ModelOp) {
        if op.needsPromise && resolvers.isEmpty { return }
        switch op {
        case .makeRoot(let requestContext):
            _ = makeRoot(requestContext: requestContext, keepingHandle: true)
        case .fulfill(let root, let value):
            resolver(root).fulfill(with: value)
        case .reject(let root, let code):
            resolver(root).reject(with: ModelError(code: code))
        case .cancel(let root):
            resolver(root).cancel()
        case .resolveWithPromise(let rawRoot, let rawSource):
            let index = rawRoot % resolvers.count
            let sourceID = rawSource % handles.count
            guard rootIDs[index] != sourceID, let source = handles[sourceID] else { return }
            resolver(index).resolve(with: source)
        case .requestCancel(let raw):
            let cancellable = cancellables[raw % cancellables.count]
            cancellable?.requestCancel()
        case .dropHandle(let raw):
            // Taken out first: the release may run callbacks that add promises, which must not
            // happen inside the array's modify access.
            let dropped = handles[raw % handles.count]
            handles[raw % handles.count] = nil
            withExtendedLifetime(dropped) {}
        case .derive(let kind, let rawParent, let context, let rawToken):
            guard let parent = handle(rawParent) else { return }
            let id = reserve()
            let callback = nextCallback()
            let child = derive(
                kind, from: parent, on: self.context(context), token: token(rawToken), callback: callback)
            install(child, as: id)
        case .tapCallback(let rawParent, let context, let rawToken):
            guard let parent = handle(rawParent) else { return }
            let k = nextCallback()
            parent.tap(on: self.context(context), token: token(rawToken)) { result in
                self.record(.callback(k, input: ModelResult(result)))
            }
        case .tapPromise(let rawParent):
            guard let parent = handle(rawParent) else { return }
            let id = reserve()
            install(parent.tap(), as: id)
        case .makeChild(let rawParent):
            guard let parent = handle(rawParent) else { return }
            let id = reserve()
            install(parent.makeChild(), as: id)
        case .ignoringCancel(let rawParent):
            guard let parent = handle(rawParent) else { return }
            let id = reserve()
            install(parent.ignoringCancel(), as: id)
        case .propagatingCancellation(let rawParent, let context):
            guard let parent = handle(rawParent) else { return }
            let k = nextCallback()
            let id = reserve()
            let child = parent.propagatingCancellation(on: self.context(context)) { _ in
                self.record(.cancelRequested(callback: k))
            }
            install(child, as: id)
        case .makeToken:
            tokens.append(PromiseInvalidationToken(invalidateOnDeinit: false))
        case .invalidate(let raw):
            token(raw)?.invalidate()
        case .cancelWithoutInvalidating(let raw):
            token(raw)?.cancelWithoutInvalidating()
        case .requestCancelOnInvalidate(let rawPromise, let rawToken):
            guard let token = token(rawToken), let promise = handle(rawPromise) else { return }
            token.requestCancelOnInvalidate(promise)
        case .timeout(let rawParent, let milliseconds):
            guard let parent = handle(rawParent) else { return }
            let id = reserve()
            install(parent.timeout(on: .loop(loop), delay: .milliseconds(milliseconds)), as: id)
        case .delay(let rawParent, let milliseconds):
            guard let parent = handle(rawParent) else { return }
            let id = reserve()
            install(parent.delay(on: .loop(loop), .milliseconds(milliseconds)), as: id)
        case .advance(let milliseconds):
            loop.advance(by: .milliseconds(milliseconds))
        }
    }

    /// Cancels every pending root and drains the loop until nothing new appears, as
    /// ``ReferenceModel/finish()`` does.
    func finish() {
        var cancelledRoots = 0
        repeat {
            let pending = resolvers[cancelledRoots...]
            cancelledRoots = resolvers.count
            for resolver in pending { resolver.cancel() }
            loop.runAll()
        } while cancelledRoots < resolvers.count
    }

    /// The promises that never resolved.
    var unresolvedPromises: [Int] {
        resolved.indices.filter { !resolved[$0] }
    }

    /// Drops everything the run holds, so that what remains alive is what the library holds.
    func release() {
        handles = []
        resolvers = []
        tokens = []
    }
}

/// A small, deliberately naive reference implementation of the documented promise rules
/// (rules A–F and J of Tomorrowland.docc/BehaviourRules.md), run on a simulated test loop, that records the same events as
/// ``LibraryRun`` does with the real library.
///
/// Everything here is plain arrays, integers and recursion: no locks, no atomics, no lists
/// spliced in place. Where the rules leave an order open (which of a cancel request's effects
/// happen first), the model follows the library and says so at that spot.
final class ReferenceModel {
    enum State: Equatable {
        case pending
        case cancelRequested
        case resolved(ModelResult)
    }

    /// A registration in a promise's callback list.
    enum Entry {
        /// The `tap(on: .immediate)` that records the promise's resolution.
        case recorder
        case derived(CallbackKind, callback: Int, child: Int, context: ModelContext, token: TokenGuard?)
        case tapCallback(callback: Int, context: ModelContext, token: TokenGuard?)
        /// A pure pipe: the child adopts the result synchronously (J1).
        case pipe(child: Int)
        case timeoutArrival(link: Int)
        case delayArrival(child: Int, milliseconds: Int)
    }

    /// A token and the generation a callback saw when it was registered (E1).
    struct TokenGuard {
        let token: Int
        let generation: Int
    }

    /// Something that hears about a cancel request (C2, D1).
    enum CancelHandler {
        case requestHandler(promise: Int, context: ModelContext)
        case propagating(callback: Int, context: ModelContext, receiver: Int)
        case removeObserver(upstream: Int)
        case timeoutLink(link: Int)
        case delayCancel(child: Int, timer: Int)
        case onCancelChild(parent: Int)
    }

    struct Node {
        var state = State.pending
        var callbacks: [Entry] = []
        var cancelHandlers: [CancelHandler] = []
        var everObserved = false
        var sealed = false
        var observers = 0
        /// The promise a cancel request passes to first (the parent of a derived promise).
        var upstream: Int?
        var hasHandle = true
    }

    struct TimeoutLink {
        let upstream: Int
        let child: Int
        var timer: Int?
        var timerCancelled = false
        var propagated = false
    }

    struct Token {
        var generation = 0
        var registered: [Int] = []
    }

    private struct LoopItem {
        let deadline: Int
        let sequence: Int
        let work: () -> Void
    }

    private(set) var nodes: [Node] = []
    private(set) var roots: [Int] = []
    private var tokens: [Token] = []
    private var links: [TimeoutLink] = []
    private var callbackCount = 0
    private(set) var trace: [ModelEvent] = []

    // The simulated test loop: items keyed by (deadline, sequence), as SchedulingCore does.
    private var now = 0
    private var nextSequence = 0
    private var items: [LoopItem] = []

    // MARK: - Loop

    private func submit(_ work: @escaping () -> Void) {
        items.append(LoopItem(deadline: now, sequence: nextSequence, work: work))
        nextSequence += 1
    }

    private func schedule(after milliseconds: Int, _ work: @escaping () -> Void) -> Int {
        let sequence = nextSequence
        items.append(LoopItem(deadline: now + milliseconds, sequence: sequence, work: work))
        nextSequence += 1
        return sequence
    }

    private func cancelTimer(_ sequence: Int) {
        items.removeAll { $0.sequence == sequence }
    }

    /// Runs everything due by `target` in key order, including what it queues.
    private func drive(to target: Int) {
        while true {
            let due = items.indices.filter { items[$0].deadline <= target }
            guard
                let index = due.min(by: {
                    (items[$0].deadline, items[$0].sequence) < (items[$1].deadline, items[$1].sequence)
                })
            else { break }
            let item = items.remove(at: index)
            now = max(now, item.deadline)
            item.work()
        }
        now = max(now, target)
    }

    var hasPendingLoopWork: Bool { !items.isEmpty }

    /// Runs the work of a callback on `context`: inline, or as a loop job (B3, B5).
    private func dispatch(_ context: ModelContext, synchronous: Bool, _ work: @escaping () -> Void) {
        switch context {
        case .immediate: work()
        case .nowOrLoop where synchronous: work()
        case .loop, .nowOrLoop: submit(work)
        }
    }

    // MARK: - Promise rules

    private func newPromise(hasHandle: Bool = true) -> Int {
        var node = Node()
        node.hasHandle = hasHandle
        nodes.append(node)
        return nodes.count - 1
    }

    private func isValueOrError(_ promise: Int) -> Bool {
        if case .resolved(let result) = nodes[promise].state { return result != .cancelled }
        return false
    }

    /// First resolution wins (A2); callbacks fire in registration order, depth first (B2, J2).
    private func resolve(_ promise: Int, _ result: ModelResult) {
        if case .resolved = nodes[promise].state { return }
        nodes[promise].state = .resolved(result)
        let callbacks = nodes[promise].callbacks
        nodes[promise].callbacks = []
        nodes[promise].cancelHandlers = []
        nodes[promise].upstream = nil
        for entry in callbacks {
            fire(entry, source: promise, result, synchronous: false)
        }
    }

    /// A registration on a resolved promise fires at once with a synchronous trigger (B1).
    private func register(_ promise: Int, _ entry: Entry) {
        if case .resolved(let result) = nodes[promise].state {
            fire(entry, source: promise, result, synchronous: true)
        } else {
            nodes[promise].callbacks.append(entry)
        }
    }

    private func isSuppressed(_ token: TokenGuard?) -> Bool {
        guard let token else { return false }
        return tokens[token.token].generation != token.generation
    }

    private func fire(_ entry: Entry, source: Int, _ result: ModelResult, synchronous: Bool) {
        switch entry {
        case .recorder:
            trace.append(.resolved(promise: source, result))
        case .derived(let kind, let callback, let child, let context, let token):
            // An inapplicable callback passes the result on the resolving thread (B7).
            guard kind.applies(to: result) else {
                resolve(child, result)
                return
            }
            dispatch(context, synchronous: synchronous) { [self] in
                if isSuppressed(token) {
                    resolve(child, kind.isObserver ? result : .cancelled)  // E2
                    return
                }
                trace.append(.callback(callback, input: result))
                switch CallbackScript.output(of: kind, callback: callback, input: result) {
                case .result(let output): resolve(child, output)
                case .thrown(let code): resolve(child, .error(code))
                case .resolvedPromise(let output): resolve(child, output)
                case .pendingPromise:
                    let inner = makeRoot(requestContext: ModelContext(rawValue: callback % 3)!, hasHandle: false)
                    propagateCancel(from: child, to: inner)  // D3
                    register(inner, .pipe(child: child))
                    seal(inner)  // the callback's handle was the only one
                }
            }
        case .tapCallback(let callback, let context, let token):
            dispatch(context, synchronous: synchronous) { [self] in
                if !isSuppressed(token) { trace.append(.callback(callback, input: result)) }
            }
        case .pipe(let child):
            resolve(child, result)
        case .timeoutArrival(let index):
            if let timer = links[index].timer { cancelTimer(timer) }
            links[index].timerCancelled = true
            let child = links[index].child
            submit { [self] in resolve(child, result) }
        case .delayArrival(let child, let milliseconds):
            // F2: the wait starts at upstream resolution; a cancelled upstream with a cancel
            // request on the delayed promise skips it.
            let timer = schedule(after: milliseconds) { [self] in resolve(child, result) }
            if result == .cancelled {
                addCancelHandler(child, .delayCancel(child: child, timer: timer))
            }
        }
    }

    /// C1, C2. Links and handlers act in registration order, as entries of one list would
    /// (Tomorrowland's): the inline upstream link, which is only ever registered before every
    /// handler (see `propagateCancel(from:to:)`), first, then the handlers.
    private func requestCancel(_ promise: Int) {
        guard nodes[promise].state == .pending else { return }
        nodes[promise].state = .cancelRequested
        // The request-cancel list is closed when the state changes: every handler registered
        // so far runs, even if passing the request upstream resolves this promise meanwhile.
        let handlers = nodes[promise].cancelHandlers
        nodes[promise].cancelHandlers = []
        if let upstream = nodes[promise].upstream {
            nodes[promise].upstream = nil
            removeObserver(upstream)
        }
        for handler in handlers {
            invoke(handler, on: promise, synchronous: false)
        }
    }

    private func invoke(_ handler: CancelHandler, on promise: Int, synchronous: Bool) {
        switch handler {
        case .requestHandler(let root, let context):
            runUserCancelHandler(on: root, context: context, synchronous: synchronous) { [self] in
                trace.append(.requestCancelHandler(promise: root))
            }
        case .propagating(let callback, let context, let receiver):
            // D8: the callback first, then the request goes to the receiver.
            runUserCancelHandler(on: promise, context: context, synchronous: synchronous) { [self] in
                trace.append(.cancelRequested(callback: callback))
                removeObserver(receiver)
            }
        case .removeObserver(let upstream):
            removeObserver(upstream)
        case .timeoutLink(let index):
            propagateOnce(index)
        case .delayCancel(let child, let timer):
            cancelTimer(timer)
            resolve(child, .cancelled)
        case .onCancelChild(let parent):
            // D5: +1 and -1 at once: counts as an observer that asked for cancellation.
            nodes[parent].everObserved = true
            if nodes[parent].observers == 0 && nodes[parent].sealed { requestCancel(parent) }
        }
    }

    /// C2/C3: inline handlers run without a check; dispatched ones skip if a value or an error
    /// arrived in the meantime.
    private func runUserCancelHandler(
        on promise: Int, context: ModelContext, synchronous: Bool, _ work: @escaping () -> Void
    ) {
        if context == .immediate || (context == .nowOrLoop && synchronous) {
            work()
        } else {
            submit { [self] in
                if !isValueOrError(promise) { work() }
            }
        }
    }

    private func addCancelHandler(_ promise: Int, _ handler: CancelHandler) {
        switch nodes[promise].state {
        case .pending: nodes[promise].cancelHandlers.append(handler)
        case .cancelRequested: invoke(handler, on: promise, synchronous: true)
        case .resolved(let result): if result == .cancelled { invoke(handler, on: promise, synchronous: true) }
        }
    }

    // D1: observer counting.
    private func addObserver(_ promise: Int) {
        nodes[promise].everObserved = true
        nodes[promise].observers += 1
    }

    private func removeObserver(_ promise: Int) {
        nodes[promise].observers -= 1
        if nodes[promise].observers == 0 && nodes[promise].sealed && nodes[promise].everObserved {
            requestCancel(promise)
        }
    }

    private func seal(_ promise: Int) {
        guard !nodes[promise].sealed else { return }
        nodes[promise].sealed = true
        if nodes[promise].observers == 0 && nodes[promise].everObserved { requestCancel(promise) }
    }

    /// The child becomes a propagating observer of `upstream` (D3): its first upstream is
    /// linked directly; a second one, or one added after a cancel request, through a handler.
    private func propagateCancel(from child: Int, to upstream: Int) {
        addObserver(upstream)
        // The inline link is passed on before the handlers run, so it only stands for a link
        // registered before every handler (registration order, as one list would keep it).
        if nodes[child].upstream == nil && nodes[child].state == .pending && nodes[child].cancelHandlers.isEmpty {
            nodes[child].upstream = upstream
        } else {
            addCancelHandler(child, .removeObserver(upstream: upstream))
        }
    }

    private func propagateOnce(_ index: Int) {
        guard !links[index].propagated else { return }
        links[index].propagated = true
        removeObserver(links[index].upstream)
    }

    @discardableResult
    private func makeRoot(requestContext: ModelContext, hasHandle: Bool) -> Int {
        let root = newPromise(hasHandle: hasHandle)
        roots.append(root)
        nodes[root].cancelHandlers.append(.requestHandler(promise: root, context: requestContext))
        register(root, .recorder)
        return root
    }

    private func promise(_ raw: Int) -> Int { raw % nodes.count }

    private func tokenGuard(_ raw: Int?) -> TokenGuard? {
        guard let raw, !tokens.isEmpty else { return nil }
        let token = raw % tokens.count
        return TokenGuard(token: token, generation: tokens[token].generation)
    }

    private func nextCallback() -> Int {
        defer { callbackCount += 1 }
        return callbackCount
    }

    // MARK: - Steps

    /// What each applied step did, with its operands resolved to promise, root and token
    /// numbers (`p3 = p1.map(…)`), for failure reports.
    private(set) var log: [String] = []

    func apply(_ op: ModelOp) {
        let counts = (promises: nodes.count, roots: roots.count, tokens: tokens.count)
        perform(op)
        log.append(resolvedDescription(of: op, counts: counts))
        drive(to: now)
    }

    private func resolvedDescription(of op: ModelOp, counts: (promises: Int, roots: Int, tokens: Int)) -> String {
        if op.needsPromise && counts.roots == 0 { return "(skipped) \(op)" }
        let made = counts.promises < nodes.count ? "p\(counts.promises) = " : ""
        func p(_ raw: Int) -> String { "p\(raw % counts.promises)" }
        func r(_ raw: Int) -> String { "p\(roots[raw % counts.roots])" }
        func t(_ raw: Int?) -> String {
            guard let raw, counts.tokens > 0 else { return "" }
            return ", token: t\(raw % counts.tokens)"
        }
        switch op {
        case .makeRoot(let context): return "\(made)makeRoot(onRequestCancel: \(context))"
        case .fulfill(let root, let value): return "\(r(root)).fulfill(\(value))"
        case .reject(let root, let code): return "\(r(root)).reject(e\(code))"
        case .cancel(let root): return "\(r(root)).cancel()"
        case .resolveWithPromise(let root, let source): return "\(r(root)).resolve(with: \(p(source)))"
        case .requestCancel(let promise): return "\(p(promise)).requestCancel()"
        case .dropHandle(let promise): return "drop \(p(promise))"
        case .derive(let kind, let parent, let context, let token):
            return "\(made)\(p(parent)).\(kind)(on: \(context)\(t(token)))"
        case .tapCallback(let parent, let context, let token): return "\(p(parent)).tap(on: \(context)\(t(token)))"
        case .tapPromise(let parent): return "\(made)\(p(parent)).tap()"
        case .makeChild(let parent): return "\(made)\(p(parent)).makeChild()"
        case .ignoringCancel(let parent): return "\(made)\(p(parent)).ignoringCancel()"
        case .propagatingCancellation(let parent, let context):
            return "\(made)\(p(parent)).propagatingCancellation(on: \(context))"
        case .makeToken: return "t\(tokens.count - 1) = makeToken()"
        case .invalidate(let token):
            return counts.tokens == 0 ? "(skipped) \(op)" : "t\(token % counts.tokens).invalidate()"
        case .cancelWithoutInvalidating(let token):
            return counts.tokens == 0 ? "(skipped) \(op)" : "t\(token % counts.tokens).cancelWithoutInvalidating()"
        case .requestCancelOnInvalidate(let promise, let token):
            return counts.tokens == 0
                ? "(skipped) \(op)" : "t\(token % counts.tokens).requestCancelOnInvalidate(\(p(promise)))"
        case .timeout(let parent, let milliseconds): return "\(made)\(p(parent)).timeout(on: loop, \(milliseconds) ms)"
        case .delay(let parent, let milliseconds): return "\(made)\(p(parent)).delay(on: loop, \(milliseconds) ms)"
        case .advance(let milliseconds): return "advance(by: \(milliseconds) ms)"
        }
    }

    private func perform(_ op: ModelOp) {
        if op.needsPromise && roots.isEmpty { return }
        switch op {
        case .makeRoot(let context):
            makeRoot(requestContext: context, hasHandle: true)
        case .fulfill(let root, let value):
            resolve(roots[root % roots.count], .value(value))
        case .reject(let root, let code):
            resolve(roots[root % roots.count], .error(code))
        case .cancel(let root):
            resolve(roots[root % roots.count], .cancelled)
        case .resolveWithPromise(let rawRoot, let rawSource):
            let root = roots[rawRoot % roots.count]
            let source = promise(rawSource)
            guard root != source, nodes[source].hasHandle else { return }
            // A2: resolving a resolved promise again does nothing at all.
            if case .resolved = nodes[root].state { return }
            propagateCancel(from: root, to: source)  // A7: linked like makeChild
            register(source, .pipe(child: root))
        case .requestCancel(let raw):
            requestCancel(promise(raw))
        case .dropHandle(let raw):
            let target = promise(raw)
            guard nodes[target].hasHandle else { return }
            nodes[target].hasHandle = false
            seal(target)
        case .derive(let kind, let rawParent, let context, let rawToken):
            let parent = promise(rawParent)
            guard nodes[parent].hasHandle else { return }
            let child = newPromise()
            let callback = nextCallback()
            if kind == .onCancel {
                nodes[child].cancelHandlers.append(.onCancelChild(parent: parent))  // D5
            } else {
                propagateCancel(from: child, to: parent)
            }
            register(
                parent,
                .derived(kind, callback: callback, child: child, context: context, token: tokenGuard(rawToken)))
            register(child, .recorder)
        case .tapCallback(let rawParent, let context, let rawToken):
            let parent = promise(rawParent)
            guard nodes[parent].hasHandle else { return }
            let callback = nextCallback()
            register(parent, .tapCallback(callback: callback, context: context, token: tokenGuard(rawToken)))
        case .tapPromise(let rawParent):
            derivePipe(from: rawParent) { _, _ in }  // D4: counts nothing
        case .makeChild(let rawParent):
            derivePipe(from: rawParent) { [self] parent, child in propagateCancel(from: child, to: parent) }
        case .ignoringCancel(let rawParent):
            derivePipe(from: rawParent) { [self] parent, _ in addObserver(parent) }  // D6: pinned
        case .propagatingCancellation(let rawParent, let context):
            let parent = promise(rawParent)
            guard nodes[parent].hasHandle else { return }
            let callback = nextCallback()
            let child = newPromise()
            addObserver(parent)
            nodes[child].cancelHandlers.append(.propagating(callback: callback, context: context, receiver: parent))
            seal(child)  // D8: sealed at once
            register(parent, .pipe(child: child))
            register(child, .recorder)
        case .makeToken:
            tokens.append(Token())
        case .invalidate(let raw):
            invalidate(raw, bumpingGeneration: true)
        case .cancelWithoutInvalidating(let raw):
            invalidate(raw, bumpingGeneration: false)
        case .requestCancelOnInvalidate(let rawPromise, let rawToken):
            let target = promise(rawPromise)
            guard !tokens.isEmpty, nodes[target].hasHandle else { return }
            tokens[rawToken % tokens.count].registered.append(target)
        case .timeout(let rawParent, let milliseconds):
            let parent = promise(rawParent)
            guard nodes[parent].hasHandle else { return }
            let child = newPromise()
            links.append(TimeoutLink(upstream: parent, child: child))
            let link = links.count - 1
            addObserver(parent)
            register(parent, .timeoutArrival(link: link))
            addCancelHandler(child, .timeoutLink(link: link))
            if !links[link].timerCancelled {
                links[link].timer = schedule(after: milliseconds) { [self] in timeoutFired(link) }
            }
            register(child, .recorder)
        case .delay(let rawParent, let milliseconds):
            let parent = promise(rawParent)
            guard nodes[parent].hasHandle else { return }
            let child = newPromise()
            propagateCancel(from: child, to: parent)
            register(parent, .delayArrival(child: child, milliseconds: milliseconds))
            register(child, .recorder)
        case .advance(let milliseconds):
            drive(to: now + milliseconds)
        }
    }

    private func derivePipe(from rawParent: Int, link: (_ parent: Int, _ child: Int) -> Void) {
        let parent = promise(rawParent)
        guard nodes[parent].hasHandle else { return }
        let child = newPromise()
        link(parent, child)
        register(parent, .pipe(child: child))
        register(child, .recorder)
    }

    /// E5: the generation moves first, then every registered promise gets a request, and the
    /// registrations are used up.
    private func invalidate(_ raw: Int, bumpingGeneration: Bool) {
        guard !tokens.isEmpty else { return }
        let token = raw % tokens.count
        if bumpingGeneration { tokens[token].generation += 1 }
        let registered = tokens[token].registered
        tokens[token].registered = []
        for promise in registered { requestCancel(promise) }
    }

    /// F3, F6, F7: the upstream's result if it has one, `.timedOut` otherwise; then the one
    /// request upstream.
    private func timeoutFired(_ link: Int) {
        let upstream = links[link].upstream
        if case .resolved(let result) = nodes[upstream].state {
            resolve(links[link].child, result)
        } else {
            resolve(links[link].child, .timedOut)
        }
        propagateOnce(link)
    }

    /// Cancels every pending root and drains the loop, until nothing new appears: afterwards
    /// every promise must be resolved.
    func finish() {
        var cancelledRoots = 0
        repeat {
            let pending = roots[cancelledRoots...]
            cancelledRoots = roots.count
            for root in pending { resolve(root, .cancelled) }
            // Like TestLoop.runAll(): every timer, however late, with the clock at each deadline.
            drive(to: now)
            while let last = items.map(\.deadline).max() { drive(to: last) }
        } while cancelledRoots < roots.count
    }

    /// The promises that never resolved, which after ``finish()`` must be none.
    var unresolvedPromises: [Int] {
        nodes.indices.filter {
            if case .resolved = nodes[$0].state { return false }
            return true
        }
    }
}

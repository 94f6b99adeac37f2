#if Tracing
    import Dispatch
    import Testing
    import Tomorrowland
    import TomorrowlandTestSupport
    import TomorrowlandTracing

    extension ServiceContextPropagationTests {
        /// B7 while propagation is on: a callback that runs on its queue before the call that
        /// registered it has returned is still released there. The carrying paths (a larger
        /// storage kind in the box, a wrapping closure for taps) must leave the registering frame
        /// no reference of its own.
        @Suite struct ReleaseWithPropagation {
            /// The registrations whose propagation path differs from the plain one.
            enum Registration: String, CaseIterable, Sendable {
                case map, mapWithToken, then, always, onCancel, tap, tapWithToken
            }

            static let queueKey = DispatchSpecificKey<String>()
            static let iterations = 2000

            @Test(arguments: Registration.allCases)
            func aCallbackThatRanBeforeItsRegistrationReturnedIsReleasedOnItsQueue(registration: Registration) async {
                ServiceContextPropagation.start()
                defer { ServiceContextPropagation.stop() }
                let queue = DispatchQueue(label: "ReleaseWithPropagation")
                queue.setSpecific(key: Self.queueKey, value: "callback-queue")
                let spy = ReleaseSpy()
                let releasedOffQueue = Recorder<Bool>()
                let token = PromiseInvalidationToken(invalidateOnDeinit: false)
                await onDedicatedThread {
                    for _ in 0..<Self.iterations {
                        let (promise, resolver) = Promise<Int, Never>.makeWithResolver()
                        if registration == .onCancel { resolver.cancel() } else { resolver.fulfill(with: 1) }
                        let onRelease: @Sendable () -> Void = {
                            releasedOffQueue.record(DispatchQueue.getSpecific(key: Self.queueKey) != "callback-queue")
                        }
                        inRequest("registering") {
                            Self.register(registration, on: promise, context: .queue(queue), token: token) {
                                spy.token(andThen: onRelease)
                            }
                        }
                    }
                }
                #expect(await eventually { spy.releasedCount == Self.iterations })
                let offQueue = releasedOffQueue.values.filter { $0 }.count
                #expect(offQueue == 0, "\(offQueue) of \(Self.iterations) callbacks were released off their queue")
            }

            /// Registers a callback that alone holds a token `makeToken` makes: the callback is
            /// made by a function that returns it, so no frame of the registration keeps the token.
            static func register(
                _ registration: Registration, on promise: Promise<Int, Never>, context: PromiseContext,
                token: PromiseInvalidationToken, makeToken: () -> ReleaseSpy.Token
            ) {
                switch registration {
                case .map: _ = promise.map(on: context, holding(makeToken()))
                case .mapWithToken: _ = promise.map(on: context, token: token, holding(makeToken()))
                case .then: _ = promise.then(on: context, holding(makeToken()))
                case .always: _ = promise.always(on: context, holding(makeToken()))
                case .onCancel: _ = promise.onCancel(on: context, holdingWithoutArgument(makeToken()))
                case .tap: promise.tap(on: context, holding(makeToken()))
                case .tapWithToken: promise.tap(on: context, token: token, holding(makeToken()))
                }
            }

            /// A callback that alone holds `held`.
            static func holding<Input>(_ held: consuming ReleaseSpy.Token) -> @Sendable (Input) -> Void {
                let held = consume held
                return { _ in withExtendedLifetime(held) {} }
            }

            /// A callback without argument that alone holds `held`.
            static func holdingWithoutArgument(_ held: consuming ReleaseSpy.Token) -> @Sendable () -> Void {
                let held = consume held
                return { withExtendedLifetime(held) {} }
            }
        }
    }
#endif

// The README's second `loadModel()`, rewritten with `TokenPromise` (`withToken(_:)`).
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

extension ModelController {
    func loadModelWithTokenPromise() {
        promiseToken.invalidate()
        MyModel.fetchFromNetworkAsPromise()
            .withToken(promiseToken)
            .then({ [weak self] (model) in
                self?.updateUI(with: model)
            }).catch({ [weak self] (error) in
                self?.handleError(error)
            })
    }
}

@Suite("Seed README TokenPromise example (Swift 5 mode)")
struct ReadmeTokenPromiseExampleTests {
    @Test("loadModel with TokenPromise updates the UI; a reload suppresses the old callbacks")
    func loadModelWithTokenPromise() async {
        let resolvers = Recorder<StdPromise<Model>.Resolver>()
        let controller = ModelController(fetch: {
            let (promise, resolver) = StdPromise<Model>.makeWithResolver()
            resolvers.record(resolver)
            return promise
        })
        controller.loadModel()
        controller.loadModelWithTokenPromise()
        let (first, second) = (resolvers.values[0], resolvers.values[1])
        #expect(first.hasRequestedCancel)
        first.fulfill(with: Model(id: 1))
        second.fulfill(with: Model(id: 2))
        #expect(await controller.log.waitFor("updateUI 2"))
        #expect(!controller.log.values.contains("updateUI 1"))
    }
}

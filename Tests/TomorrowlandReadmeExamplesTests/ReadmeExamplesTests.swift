import Dispatch
import Foundation
import Testing
import Tomorrowland
import TomorrowlandTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The usage examples of the seed README (Tomorrowland v1.4.0 and its v0.4.3 predecessor), in
// Swift 5 language mode: Tomorrowland-style code that mutates captured state in callbacks must
// compile without a diagnostic and behave as the README says.
//
// Each example's code is the README's, with only these substitutions:
// - Apple-only types become the Linux stand-ins of ReadmeSupport.swift: `UIApplication` →
//   `StatusBar`, `UIImage` → `Image`, `UIImageView` → `ImageView`, `UIView.transition` →
//   `ViewTransition.transition`, `CLError` → `GeoError`, the geocoder → `Geocoder`.
// - Where the HTML rendering of the README dropped generic arguments (`StdPromise`,
//   `Promise(on:…)`), they are restored from the v0.4.3 README (`Promise<String,Error>`, …).
// - Slips in the README text itself are corrected, each marked "README fix": a
//   `promise?.cancel()` that does not exist (`requestCancel()`), an undeclared `promise`
//   property and `invalidationToken` in the second `URLImageView`, `loadResource(at:)`
//   returning a value from a function declared without a return type, and `_ =` in front of
//   two `then` calls whose result the README ignores (`then` is not `@discardableResult`).

// MARK: - Fixtures the README leaves to the reader

struct FeedItem: Equatable { let title: String }
struct User { let name: String }
struct Credentials { let name: String; let password: String }
struct Model: Equatable { let id: Int }

enum MyAPI {
    static var apiKey: String?

    static func requestFeed(for user: User) -> StdPromise<[FeedItem]> {
        Promise(on: .utility) { resolver in
            resolver.fulfill(with: [FeedItem(title: "hello \(user.name)")])
        }
    }

    static func login(name: String, password: String) -> StdPromise<String> {
        Promise(on: .utility) { resolver in
            if password == "secret" {
                resolver.fulfill(with: "key-for-\(name)")
            } else {
                resolver.reject(with: LoginError.badPassword)
            }
        }
    }
}

enum LoginError: Error { case badPassword }

func expensiveCalculation() throws -> String { "forty-two" }

// MARK: - The examples

/// README, top: the feed example with `then`, `catch` and `always`.
final class FeedViewController {
    let log = EventLog()
    var items: [FeedItem] = []
    let user = User(name: "ann")

    func refreshUI(with feedItems: [FeedItem]) {
        items = feedItems
        log.record("refreshUI")
    }

    func showError(_ error: Error) { log.record("showError") }

    func load() {
        StatusBar.shared.isNetworkActivityIndicatorVisible = true
        MyAPI.requestFeed(for: user).then { (feedItems) in
            self.refreshUI(with: feedItems)
        }.catch { (error) in
            self.showError(error)
        }.always { _ in
            StatusBar.shared.isNetworkActivityIndicatorVisible = false
        }
    }
}

/// README, "Using Promises": the login example with `flatMap`, `then`, `always` and `catch`.
final class LoginController {
    let log = EventLog()
    let credentials: Credentials

    init(credentials: Credentials) { self.credentials = credentials }

    func showLoadingIndicator() { log.record("show loading") }
    func hideLoadingIndicator() { log.record("hide loading") }
    func transitionToLoggedInState() { log.record("logged in") }
    func displayError(_ error: Error) { log.record("error \(error)") }
    func fetchUserCredentials() -> StdPromise<Credentials> { StdPromise(fulfilled: credentials) }

    func logIn() {
        showLoadingIndicator()
        fetchUserCredentials().flatMap(on: .default) { (credentials) in
            // This returns a new promise
            return MyAPI.login(name: credentials.name, password: credentials.password)
        }.then { [weak self] (apiKey) in
            // this is invoked when the promise returned by MyAPI.login fulfills.
            MyAPI.apiKey = apiKey
            self?.transitionToLoggedInState()
        }.always { [weak self] _ in
            // This is always invoked regardless of whether the previous chain was
            // fulfilled, rejected, or cancelled.
            self?.hideLoadingIndicator()
        }.catch { [weak self] (error) in
            // this handles any error returned from the previous chain, meaning any error
            // from `fetchUserCredentials()` or from `MyAPI.login(name:password:)`.
            self?.displayError(error)
        }
    }
}

/// README, "Cancelling and Invalidation": the first `URLImageView`.
class URLImageView: ImageView {
    private var promise: StdPromise<Data>?
    private let invalidationToken = PromiseInvalidationToken()

    enum LoadError: Error {
        case dataIsNotImage
    }

    /// Loads an image from the URL and displays it in the image view.
    func loadImage(from url: URL) {
        promise?.requestCancel()  // README fix: the README says `promise?.cancel()`.
        invalidationToken.invalidate()
        // Note: dataTaskAsPromise does not actually exist
        promise = URLSession.shared.dataTaskAsPromise(with: url)
        // Use `_ =` to avoid having to handle errors with `.catch`.
        _ = promise?.tryMap(
            on: .utility,
            { (data) -> Image in
                if let image = Image(data: data) {
                    return image
                } else {
                    throw LoadError.dataIsNotImage
                }
            }
        ).then(
            token: invalidationToken,
            { [weak self] (image) in
                self?.image = image
            })
    }
}

/// README: the second `URLImageView`, with `requestCancelOnInvalidate`.
class CancellingURLImageView: ImageView {
    private let promiseToken = PromiseInvalidationToken()
    private var promise: StdPromise<Data>?  // README fix: the README uses `promise` undeclared.

    enum LoadError: Error {
        case dataIsNotImage
    }

    /// Loads an image from the URL and displays it in the image view.
    func loadImage(from url: URL) {
        promiseToken.invalidate()
        // Note: dataTaskAsPromise does not actually exist
        promise = URLSession.shared.dataTaskAsPromise(with: url)
        // Use `_ =` to avoid having to handle errors with `.catch`.
        _ = promise?.tryMap(
            on: .utility,
            { (data) -> Image in
                if let image = Image(data: data) {
                    return image
                } else {
                    throw LoadError.dataIsNotImage
                }
            }
        ).then(
            token: promiseToken,
            { [weak self] (image) in
                self?.image = image
            }
        ).requestCancelOnInvalidate(promiseToken)  // README fix: the README says `invalidationToken`.
    }
}

/// README, "TokenPromise": `loadModel()` before and after.
final class ModelController {
    let log = EventLog()
    let promiseToken = PromiseInvalidationToken()
    var model: Model?
    let fetch: () -> StdPromise<Model>

    init(fetch: @escaping () -> StdPromise<Model>) { self.fetch = fetch }

    /// The README's `MyModel.fetchFromNetworkAsPromise()`, per controller: a static hook would be
    /// one global that the suites running in parallel overwrite under each other.
    struct ModelSource {
        let fetch: () -> StdPromise<Model>
        func fetchFromNetworkAsPromise() -> StdPromise<Model> { fetch() }
    }

    /// Read as the README's `MyModel` inside the controller's methods.
    var MyModel: ModelSource { ModelSource(fetch: fetch) }

    func updateUI(with model: Model) {
        self.model = model
        log.record("updateUI \(model.id)")
    }

    func handleError(_ error: Error) { log.record("handleError") }

    func loadModel() {
        promiseToken.invalidate()
        MyModel.fetchFromNetworkAsPromise()
            .then(
                token: promiseToken,
                { [weak self] (model) in
                    self?.updateUI(with: model)
                }
            ).catch(
                token: promiseToken,
                { [weak self] (error) in
                    self?.handleError(error)
                }
            ).requestCancelOnInvalidate(promiseToken)
    }
}

/// README, `propagatingCancellation(on:cancelRequested:)`: deduplicated resource loads.
final class ResourceLoader {
    var resourceLoads: [URL: StdPromise<Data>] = [:]
    let log = EventLog()

    func makeResourceRequest(for url: URL) -> StdPromise<Data> {
        log.record("request \(url.lastPathComponent)")
        // Like a real request, the pending work holds the resolver (here through the handler's
        // capture, a cycle that the resolution breaks), so the request lives until it resolves.
        return StdPromise(on: .immediate) { resolver in
            resolver.onRequestCancel(on: .immediate) { _ in
                self.log.record("cancel \(url.lastPathComponent)")
                resolver.cancel()
            }
        }
    }

    // README fix: the README declares no return type but returns `promise.makeChild()`.
    func loadResource(at url: URL) -> StdPromise<Data> {
        let promise: StdPromise<Data>
        if let existingPromise = resourceLoads[url] {
            promise = existingPromise
        } else {
            promise = makeResourceRequest(for: url).propagatingCancellation(
                on: .main,
                cancelRequested: { (promise) in
                    if self.resourceLoads[url] == promise {
                        self.resourceLoads[url] = nil
                    }
                    self.log.record("cancelRequested")
                })
            resourceLoads[url] = promise
        }
        // Return a new child for each request so all clients have to cancel, not just one.
        return promise.makeChild()
    }
}

@Suite("Seed README examples (Swift 5 mode)")
struct ReadmeExamplesTests {
    @Test("the feed example refreshes the UI and hides the activity indicator")
    func feedExample() async {
        let controller = FeedViewController()
        controller.load()
        #expect(await StatusBar.shared.log.waitFor("indicator false"))
        #expect(controller.log.values == ["refreshUI"])
        #expect(controller.items == [FeedItem(title: "hello ann")])
        #expect(StatusBar.shared.log.values.suffix(2) == ["indicator true", "indicator false"])
    }

    @Test("a promise body may throw: Promise<String,Error>(on: .utility) runs expensiveCalculation")
    func creatingPromises() async {
        let log = EventLog()
        Self.createPromise(log: log)
        #expect(await log.waitFor("value(\"forty-two\")"))
    }

    // The examples live in synchronous functions, like the UI code they come from: Swift 5 mode
    // checks Sendable captures more strictly inside `async` functions, which Tomorrowland-era
    // code never was.
    static func createPromise(log: EventLog) {
        let promise = Promise<String, Error>(
            on: .utility,
            { (resolver) in
                let value = try expensiveCalculation()
                resolver.fulfill(with: value)
            })
        promise.always(on: .immediate) { result in log.record("\(result)") }
    }

    /// README, "Creating Promises": wrapping a data task, with `onRequestCancel`.
    static func dataPromise(urlSession: StubURLSession, url: URL) -> Promise<Data, Error> {
        let promise = Promise<Data, Error>(
            on: .immediate,
            { (resolver) in
                let task = urlSession.dataTask(
                    with: url,
                    completionHandler: { (data, response, error) in
                        if let data = data {
                            resolver.fulfill(with: data)
                        } else if case URLError.cancelled? = error {
                            resolver.cancel()
                        } else {
                            resolver.reject(with: error!)
                        }
                    })
                resolver.onRequestCancel(
                    on: .immediate,
                    { _ in
                        task.cancel()
                    })
                task.resume()
            })
        return promise
    }

    @Test("the data-task example fulfils with the task's data")
    func dataTaskFulfils() {
        let session = StubURLSession()
        let promise = Self.dataPromise(urlSession: session, url: URL(string: "https://example.com/a")!)
        #expect(session.log.values == ["resume"])
        session.lastTask?.finish(Data("abc".utf8), nil)
        #expect(promise.result?.value == Data("abc".utf8))
    }

    @Test("the data-task example cancels the task on requestCancel and ends cancelled")
    func dataTaskCancels() {
        let session = StubURLSession()
        let promise = Self.dataPromise(urlSession: session, url: URL(string: "https://example.com/a")!)
        promise.requestCancel()
        #expect(session.log.values == ["resume", "cancel"])
        #expect(promise.result?.isCancelled == true)
    }

    static func geocode(_ geocoder: Geocoder) -> StdPromise<[String]> {
        let location = (48.85, 2.35)
        return Promise(on: .immediate) { resolver in
            geocoder.reverseGeocodeLocation(
                location, completionHandler: resolver.handleCallback(isCancelError: { GeoError.geocodeCanceled ~= $0 }))
        }
    }

    static func geocodeAll(log: EventLog) {
        let answers: [Geocoder.Answer] = [
            .placemarks(["Paris"]), .failure(GeoError(code: .geocodeCanceled)), .failure(GeoError(code: .network)),
            .nothing,
        ]
        for (index, answer) in answers.enumerated() {
            Self.geocode(Geocoder(answer: answer)).always(on: .immediate) { result in
                switch result {
                case .value(let names): log.record("\(index) value \(names)")
                case .error(let error as PromiseCallbackError): log.record("\(index) \(error)")
                case .error(let error): log.record("\(index) error \((error as? GeoError)?.code == .network)")
                case .cancelled: log.record("\(index) cancelled")
                }
            }
        }
    }

    @Test("handleCallback wraps a completion handler: value, cancel error, other error, nothing")
    func handleCallbackExample() async {
        let log = EventLog()
        Self.geocodeAll(log: log)
        #expect(await log.waitFor("0 value [\"Paris\"]"))
        #expect(await log.waitFor("1 cancelled"))
        #expect(await log.waitFor("2 error true"))
        #expect(await log.waitFor("3 apiMismatch"))
    }

    @Test("the login example stores the API key, transitions, and hides the indicator")
    func loginSucceeds() async {
        let controller = LoginController(credentials: Credentials(name: "bo", password: "secret"))
        controller.logIn()
        #expect(await controller.log.waitFor("hide loading"))
        #expect(controller.log.values == ["show loading", "logged in", "hide loading"])
        #expect(MyAPI.apiKey == "key-for-bo")
    }

    @Test("the login example's catch sees an error from the nested promise")
    func loginFails() async {
        let controller = LoginController(credentials: Credentials(name: "bo", password: "wrong"))
        controller.logIn()
        #expect(await controller.log.waitFor("error badPassword"))
        #expect(controller.log.values == ["show loading", "hide loading", "error badPassword"])
    }

    @Test("URLImageView shows the image, and a second load invalidates the first")
    func urlImageView() async {
        let view = URLImageView()
        view.loadImage(from: URL(string: "https://example.com/IMG-one")!)
        #expect(await view.log.waitFor("image set"))
        #expect(view.image?.bytes == Data("IMG-one".utf8))
        let other = URLImageView()
        other.loadImage(from: URL(string: "https://example.com/not-an-image")!)
        other.loadImage(from: URL(string: "https://example.com/IMG-two")!)
        #expect(await other.log.waitFor("image set"))
        #expect(other.image?.bytes == Data("IMG-two".utf8))
        #expect(other.log.values == ["image set"])
    }

    @Test("the cancelling URLImageView shows the image")
    func cancellingURLImageView() async {
        let view = CancellingURLImageView()
        view.loadImage(from: URL(string: "https://example.com/IMG-three")!)
        #expect(await view.log.waitFor("image set"))
        #expect(view.image?.bytes == Data("IMG-three".utf8))
    }

    @Test("loadModel updates the UI; a reload invalidates and cancels the first load")
    func loadModelExample() async {
        let resolvers = Recorder<StdPromise<Model>.Resolver>()
        let controller = ModelController(fetch: {
            let (promise, resolver) = StdPromise<Model>.makeWithResolver()
            resolvers.record(resolver)
            return promise
        })
        controller.loadModel()
        controller.loadModel()
        let (first, second) = (resolvers.values[0], resolvers.values[1])
        #expect(first.hasRequestedCancel, "the second load's invalidate() cancels the first request")
        first.fulfill(with: Model(id: 1))
        second.fulfill(with: Model(id: 2))
        #expect(await controller.log.waitFor("updateUI 2"))
        #expect(!controller.log.values.contains("updateUI 1"))
        #expect(controller.model == Model(id: 2))
    }

    @Test("propagatingCancellation deduplicates loads and cancels once every client cancelled")
    @MainActor
    func deduplicatedResourceLoads() async {
        let loader = ResourceLoader()
        let url = URL(string: "https://example.com/resource")!
        let first = loader.loadResource(at: url)
        let second = loader.loadResource(at: url)
        #expect(loader.log.values == ["request resource"])
        first.requestCancel()
        #expect(loader.resourceLoads[url] != nil)
        second.requestCancel()
        #expect(await loader.log.waitFor("cancel resource"))
        #expect(loader.log.values == ["request resource", "cancelRequested", "cancel resource"])
        #expect(loader.resourceLoads[url] == nil)
        _ = loader.loadResource(at: url)
        #expect(loader.log.values.last == "request resource")
    }

    /// README, "The special .nowOr(_:) context".
    static func showImage(_ promise: StdPromise<Image>, in imageView: ImageView) {
        _ =
            promise  // README fix: `then` is not @discardableResult, so `_ =` avoids a warning.
            .then(
                on: .nowOr(.main),
                { [weak imageView] (image) in
                    guard let imageView = imageView else { return }
                    let duration: TimeInterval =
                        PromiseContext.isExecutingNow
                        ? 0  // no transition if we're synchronous
                        : 0.25
                    ViewTransition.transition(
                        with: imageView, duration: duration, options: .transitionCrossDissolve,
                        animations: {
                            imageView.image = image
                        })
                })
    }

    @Test(".nowOr(.main): no transition when already resolved, an animated one otherwise")
    func nowOrExample() async {
        let image = Image(data: Data("IMG".utf8))!
        let ready = ImageView()
        Self.showImage(StdPromise(fulfilled: image), in: ready)
        #expect(ready.log.values == ["transition 0.0", "image set"])

        let later = ImageView()
        let (promise, resolver) = StdPromise<Image>.makeWithResolver()
        Self.showImage(promise, in: later)
        resolver.fulfill(with: image)
        #expect(await later.log.waitFor("image set"))
        #expect(later.log.values == ["transition 0.25", "image set"])
    }

    @Test("v1.2.0 notes: networkImagePromise.then(on: .nowOr(.main)) sets the button image")
    func nowOrButtonExample() {
        let button = Button()
        let networkImagePromise = StdPromise(fulfilled: Image(data: Data("IMG".utf8)))
        _ = networkImagePromise.then(
            on: .nowOr(.main),
            { [weak button] (image) in  // README fix: `_ =`
                button?.setImage(image, for: .normal)
            })
        #expect(button.log.values == ["setImage true normal"])
    }

    @Test("Tomorrowland-style code mutates captured variables in callbacks")
    func mutatingCapturedVariables() {
        var values: [Int] = []
        var errors = 0
        var finished = false
        let (promise, resolver) = StdPromise<Int>.makeWithResolver()
        _ = promise.then(on: .immediate) { values.append($0) }
            .map(on: .immediate) { $0 * 2 }
            .then(on: .immediate) { values.append($0) }
        promise.catch(on: .immediate) { _ in errors += 1 }
        promise.always(on: .immediate) { _ in finished = true }
        resolver.fulfill(with: 21)
        #expect(values == [21, 42])
        #expect(errors == 0)
        #expect(finished)
        #expect(StdPromise(fulfilled: "someValue").result?.value == "someValue")
        #expect(Promise<Int, LoginError>(rejected: .badPassword).upcast.result?.error is LoginError)
    }
}

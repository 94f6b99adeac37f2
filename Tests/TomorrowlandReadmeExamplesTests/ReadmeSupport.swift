import Dispatch
import Foundation
import Tomorrowland
import TomorrowlandTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Linux stand-ins for the Apple-only types the seed README's examples use (UIKit, CoreLocation),
// plus the fixtures the README leaves to the reader (`MyAPI`, `expensiveCalculation()`, …).
// The examples themselves are in ReadmeExamplesTests.swift, unchanged apart from the names
// listed there. This target is compiled in Swift 5 language mode, like Tomorrowland-era code.

/// A thread-safe event log: the stand-ins record what the examples do to them, and the tests
/// read it once the events they wait for have been recorded.
final class EventLog {
    private let entries = Recorder<String>()

    func record(_ entry: String) {
        entries.record(entry)
    }

    var values: [String] { entries.values }

    /// Waits, without blocking a thread, until `entry` has been recorded (or the toolkit's
    /// generous bound passed).
    func waitFor(_ entry: String) async -> Bool {
        await eventually { values.contains(entry) }
    }
}

/// Stand-in for `UIApplication.shared` (its network activity indicator).
final class StatusBar {
    static let shared = StatusBar()
    let log = EventLog()
    var isNetworkActivityIndicatorVisible = false {
        didSet { log.record("indicator \(isNetworkActivityIndicatorVisible)") }
    }
}

/// Stand-in for `UIImage`: image data that starts with the bytes "IMG".
struct Image: Equatable {
    let bytes: Data
    init?(data: Data) {
        guard data.starts(with: Array("IMG".utf8)) else { return nil }
        bytes = data
    }
}

/// Stand-in for `UIImageView`.
class ImageView {
    let log = EventLog()
    var image: Image? {
        didSet { log.record("image set") }
    }
}

/// Stand-in for `UIControl.State`.
enum ControlState { case normal }

/// Stand-in for `UIButton`.
final class Button {
    let log = EventLog()
    func setImage(_ image: Image?, for state: ControlState) {
        log.record("setImage \(image != nil) \(state)")
    }
}

/// Stand-in for `UIView.transition(with:duration:options:animations:)`.
enum ViewTransition {
    struct Options: OptionSet {
        let rawValue: Int
        static let transitionCrossDissolve = Options(rawValue: 1)
    }
    static func transition(with view: ImageView, duration: TimeInterval, options: Options, animations: () -> Void) {
        view.log.record("transition \(duration)")
        animations()
    }
}

/// Stand-in for `CLError` (and its `~=` pattern for codes).
struct GeoError: Error {
    enum Code { case geocodeCanceled, network }
    static let geocodeCanceled = Code.geocodeCanceled
    let code: Code
}

/// Stand-in for the `~=` that matches a `CLError` code against an error.
func ~= (code: GeoError.Code, error: Error) -> Bool {
    (error as? GeoError)?.code == code
}

/// Stand-in for `CLGeocoder`: answers with the outcome it was configured with.
final class Geocoder {
    enum Answer { case placemarks([String]), failure(GeoError), nothing }
    let answer: Answer
    init(answer: Answer) { self.answer = answer }

    func reverseGeocodeLocation(_ location: (Double, Double), completionHandler: @escaping ([String]?, Error?) -> Void)
    {
        DispatchQueue.global().async {
            switch self.answer {
            case .placemarks(let names): completionHandler(names, nil)
            case .failure(let error): completionHandler(nil, error)
            case .nothing: completionHandler(nil, nil)
            }
        }
    }
}

/// Stand-in for the `urlSession` the README's resolver example uses: tasks complete when the
/// test says so, or with `URLError(.cancelled)` when cancelled.
final class StubURLSession {
    final class DataTask {
        private let completion: Locked<((Data?, URLResponse?, Error?) -> Void)?>
        let log: EventLog

        init(log: EventLog, completion: @escaping (Data?, URLResponse?, Error?) -> Void) {
            self.log = log
            self.completion = Locked(completion)
        }

        func resume() { log.record("resume") }

        func cancel() {
            log.record("cancel")
            finish(nil, URLError(.cancelled))
        }

        func finish(_ data: Data?, _ error: Error?) {
            // Taken out under the lock and called outside it: it runs the README's code.
            let completion = self.completion.withLock { stored in
                defer { stored = nil }
                return stored
            }
            completion?(data, nil, error)
        }
    }

    let log = EventLog()
    private let tasks = Locked<[DataTask]>([])

    func dataTask(with url: URL, completionHandler: @escaping (Data?, URLResponse?, Error?) -> Void) -> DataTask {
        let task = DataTask(log: log, completion: completionHandler)
        tasks.withLock { $0.append(task) }
        return task
    }

    var lastTask: DataTask? {
        tasks.withLock { $0.last }
    }
}

extension URLSession {
    /// The README's imaginary `dataTaskAsPromise(with:)` ("does not actually exist"): serves
    /// canned bytes without touching the network, asynchronously.
    func dataTaskAsPromise(with url: URL) -> StdPromise<Data> {
        Promise(on: .utility) { resolver in
            resolver.fulfill(with: Data(url.lastPathComponent.utf8))
        }
    }
}

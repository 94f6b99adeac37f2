// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Tomorrowland",
    products: [
        .library(name: "Tomorrowland", targets: ["Tomorrowland"]),
        .library(name: "TomorrowlandLoop", targets: ["TomorrowlandLoop"]),
        .library(name: "TomorrowlandTesting", targets: ["TomorrowlandTesting"]),
    ],
    dependencies: [
        // `make docs`: the `generate-documentation` command. A command plugin only: no target
        // depends on it, so nothing of it is built into or linked with the library, and packages
        // that depend on this one do not even fetch it (SwiftPM skips what no product uses).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")
    ],
    targets: [
        // Thread-local slots the core reads on every dispatch (`isExecutingNow`, the `.main`
        // chaining flag). A regular C target, not a header-only shim, so that there is exactly
        // one definition of each slot in the process.
        .target(name: "CTomorrowlandSupport"),
        .target(
            name: "Tomorrowland",
            dependencies: ["CTomorrowlandSupport"]
        ),
        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent_core",
            providers: [.apt(["libevent-dev"])]
        ),
        // The libdispatch hooks that let an EventLoop on the main thread drain DispatchQueue.main
        // (declared in C: they are not in libdispatch's public headers).
        .target(
            name: "CTomorrowlandLoopSupport",
            linkerSettings: [.linkedLibrary("dispatch")]
        ),
        .target(
            name: "TomorrowlandLoop",
            dependencies: ["Tomorrowland", "CLibevent", "CTomorrowlandLoopSupport", "CTomorrowlandSupport"]
        ),
        .target(
            name: "TomorrowlandTesting",
            dependencies: ["Tomorrowland"]
        ),
        // The demo `make demo` runs.
        .executableTarget(
            name: "TomorrowlandDemo",
            dependencies: ["Tomorrowland", "TomorrowlandLoop"],
            path: "Examples/TomorrowlandDemo"
        ),
        .testTarget(
            name: "TomorrowlandTests",
            dependencies: ["Tomorrowland", "TomorrowlandTesting"]
        ),
        // A program that runs an EventLoop on its main thread, which tests cannot do (Swift Testing
        // runs them on other threads); TomorrowlandLoopTests launches it to check that the loop
        // drains DispatchQueue.main.
        .executableTarget(
            name: "LoopMainQueueProbe",
            dependencies: ["TomorrowlandLoop", "Tomorrowland"],
            path: "Tests/LoopMainQueueProbe"
        ),
        // The program `make leaks` runs under valgrind: loop, promises, timers, watchers, a group
        // and shutdown, everything released before exit.
        .executableTarget(
            name: "TomorrowlandLeakProbe",
            dependencies: ["TomorrowlandLoop", "Tomorrowland"],
            path: "Tests/TomorrowlandLeakProbe"
        ),
        // The seed README's usage examples, compiled in Swift 5 language mode as
        // Tomorrowland-era code is: they must build without a diagnostic.
        .testTarget(
            name: "TomorrowlandReadmeExamplesTests",
            dependencies: ["Tomorrowland"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "TomorrowlandLoopTests",
            dependencies: ["TomorrowlandLoop", "Tomorrowland", "CLibevent", "LoopMainQueueProbe"]
        ),
        // Random programs of promise operations checked against a reference model of the
        // documented rules (API.md); seeded, with a shrinker.
        .testTarget(
            name: "TomorrowlandModelTests",
            dependencies: ["Tomorrowland", "TomorrowlandTesting"]
        ),
        .testTarget(
            name: "TomorrowlandTestingTests",
            dependencies: ["TomorrowlandTesting", "Tomorrowland"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

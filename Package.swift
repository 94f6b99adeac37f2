// swift-tools-version: 6.1
import PackageDescription

// The example targets build as a user's package would: under another package name, so that the
// library's `package` declarations are invisible to them and they compile against the public API
// only. (SwiftPM passes `-package-name tomorrowland` itself; the last `-package-name` wins.)
let publicAPIOnly: [SwiftSetting] = [.unsafeFlags(["-package-name", "TomorrowlandExamples"])]

let package = Package(
    name: "Tomorrowland",
    products: [
        .library(name: "Tomorrowland", targets: ["Tomorrowland"]),
        .library(name: "TomorrowlandLoop", targets: ["TomorrowlandLoop"]),
        .library(name: "TomorrowlandTesting", targets: ["TomorrowlandTesting"]),
        .executable(name: "loopkv", targets: ["loopkv"]),
        .executable(name: "loopprobe", targets: ["ProbeDaemon"]),
    ],
    dependencies: [
        // The example daemons (loopkv, loopprobe) only: the library products depend on nothing
        // but the toolchain and libevent, and SwiftPM fetches these only for those who build the
        // examples.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `make docs`: the `generate-documentation` command. A command plugin only: no target
        // depends on it, so nothing of it is built into or linked with the library, and packages
        // that depend on this one do not even fetch it (SwiftPM skips what no product uses).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
            path: "Examples/TomorrowlandDemo",
            swiftSettings: publicAPIOnly
        ),
        // The TCP probe daemon `loopprobe`: its logic (endpoint parsing, state tracking, the
        // probe rounds) in ProbeCore, tested with TestLoop; the executable parses options,
        // logs and runs an EventLoop on the main thread.
        .target(
            name: "ProbeCore",
            dependencies: ["Tomorrowland", "TomorrowlandLoop"],
            path: "Examples/ProbeCore",
            swiftSettings: publicAPIOnly
        ),
        .executableTarget(
            name: "ProbeDaemon",
            dependencies: [
                "ProbeCore", "Tomorrowland", "TomorrowlandLoop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/ProbeDaemon",
            swiftSettings: publicAPIOnly
        ),
        .testTarget(
            name: "ProbeDaemonTests",
            dependencies: ["ProbeCore", "ProbeDaemon", "Tomorrowland", "TomorrowlandLoop", "TomorrowlandTesting"]
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
        // A daemon's signal set-up (`TerminationSignals`) in a process of its own: signals are
        // process-wide, so TomorrowlandLoopTests launches it and sends it SIGTERM and SIGINT.
        .executableTarget(
            name: "TerminationSignalsProbe",
            dependencies: ["TomorrowlandLoop", "Tomorrowland"],
            path: "Tests/TerminationSignalsProbe"
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
            dependencies: [
                "TomorrowlandLoop", "Tomorrowland", "CLibevent", "LoopMainQueueProbe", "TerminationSignalsProbe",
            ]
        ),
        // Random programs of promise operations checked against a reference model of the
        // documented rules (API.md); seeded, with a shrinker.
        .testTarget(
            name: "TomorrowlandModelTests",
            dependencies: ["Tomorrowland", "TomorrowlandTesting"]
        ),
        // The Redis-protocol daemon's parser, store and commands, without sockets (loopkv and
        // its tests use it; scripts/fuzz.sh compiles its sources into the fuzz harnesses).
        .target(
            name: "KeyValueCore",
            dependencies: ["Tomorrowland"],
            path: "Examples/KeyValueCore",
            swiftSettings: publicAPIOnly
        ),
        // The Redis-protocol daemon (issue 9); `make demo` runs it, `make bench-kv` measures it.
        .executableTarget(
            name: "loopkv",
            dependencies: [
                "KeyValueCore", "Tomorrowland", "TomorrowlandLoop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/KeyValueDaemon",
            exclude: ["demo.sh", "README.md"],
            swiftSettings: publicAPIOnly
        ),
        // Starts the built loopkv on an ephemeral port and speaks RESP to it over sockets.
        .testTarget(
            name: "KeyValueDaemonTests",
            dependencies: ["loopkv"]
        ),
        // Measures lazy+swept expiry against per-key loop timers (Examples/KeyValueDaemon/README.md).
        .executableTarget(
            name: "loopkv-expiry-bench",
            dependencies: ["KeyValueCore", "Tomorrowland", "TomorrowlandLoop"],
            path: "Examples/KeyValueExpiryBench",
            swiftSettings: publicAPIOnly
        ),
        .testTarget(
            name: "KeyValueCoreTests",
            dependencies: ["KeyValueCore", "Tomorrowland", "TomorrowlandTesting"]
        ),
        .testTarget(
            name: "TomorrowlandTestingTests",
            dependencies: ["TomorrowlandTesting", "Tomorrowland"]
        ),
        // A user's file in Swift 6 mode (complete strict concurrency) with the upcoming features
        // on, using the README's API and the async bridges: it must build with zero warnings
        // (-warnings-as-errors) and its tests run.
        .testTarget(
            name: "TomorrowlandStrictConcurrencyTests",
            dependencies: ["Tomorrowland", "TomorrowlandLoop", "TomorrowlandTesting"],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
                .enableUpcomingFeature("InferIsolatedConformances"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .unsafeFlags(["-warnings-as-errors"]),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

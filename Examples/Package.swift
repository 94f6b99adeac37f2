// swift-tools-version: 6.1
import PackageDescription

// The examples are a package of their own that depends on the library as a user's package
// would (by path here, by URL there): they see the public API only, and their dependencies
// (swift-argument-parser, swift-log, swift-service-lifecycle) never reach the graph of a package
// that depends on the library. `make demo`, `make test` and `make bench-kv` build it. The test
// targets share the library's test toolkit (product `TomorrowlandTestSupport`: the one test lock,
// recorders, polling) instead of copies of it.
let package = Package(
    name: "TomorrowlandExamples",
    products: [
        .executable(name: "loopkv", targets: ["loopkv"]),
        .executable(name: "loopprobe", targets: ["ProbeDaemon"]),
        .executable(name: "loopkv-sim", targets: ["loopkv-sim"]),
    ],
    dependencies: [
        .package(name: "Tomorrowland", path: "..", traits: ["ServiceLifecycle"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // The promise demo `make demo-promises` runs.
        .executableTarget(
            name: "TomorrowlandDemo",
            dependencies: [
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
            ],
            path: "TomorrowlandDemo"
        ),
        // The TCP probe daemon `loopprobe`: its logic (endpoint parsing, state tracking, the
        // probe rounds) in ProbeCore, tested with TestLoop; the executable parses options,
        // logs, and runs an EventLoop and the probe rounds as services of a ServiceGroup
        // (swift-service-lifecycle), which handles SIGTERM and SIGINT.
        .target(
            name: "ProbeCore",
            dependencies: [
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
            ],
            path: "ProbeCore"
        ),
        .executableTarget(
            name: "ProbeDaemon",
            dependencies: [
                "ProbeCore",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
                .product(name: "TomorrowlandServiceLifecycle", package: "Tomorrowland"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "ProbeDaemon"
        ),
        .testTarget(
            name: "ProbeDaemonTests",
            dependencies: [
                "ProbeCore", "ProbeDaemon",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
                .product(name: "TomorrowlandTesting", package: "Tomorrowland"),
                .product(name: "TomorrowlandSimulation", package: "Tomorrowland"),
                .product(name: "TomorrowlandTestSupport", package: "Tomorrowland"),
            ],
            path: "Tests/ProbeDaemonTests"
        ),
        // The Redis-protocol daemon's parser, store and commands, without sockets (loopkv and
        // its tests use it; scripts/fuzz.sh compiles its sources into the fuzz harnesses).
        .target(
            name: "KeyValueCore",
            dependencies: [.product(name: "Tomorrowland", package: "Tomorrowland")],
            path: "KeyValueCore"
        ),
        // loopkv's server (listeners, connections, replies) on the loops and clock it is given:
        // the daemon's own, or a simulated host's (loopkv-sim).
        .target(
            name: "KeyValueService",
            dependencies: [
                "KeyValueCore",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "KeyValueService"
        ),
        // A whole loopkv server and its clients on a SimulatedNetwork, every reply checked
        // against a model of the key space; loopkv-sim runs one seed, its tests sweep many.
        .target(
            name: "KeyValueSimulation",
            dependencies: [
                "KeyValueCore", "KeyValueService",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
                .product(name: "TomorrowlandSimulation", package: "Tomorrowland"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "KeyValueSimulation"
        ),
        .executableTarget(
            name: "loopkv-sim",
            dependencies: [
                "KeyValueSimulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "KeyValueSimulator"
        ),
        .testTarget(
            name: "KeyValueSimulationTests",
            dependencies: ["KeyValueSimulation"],
            path: "Tests/KeyValueSimulationTests"
        ),
        // The Redis-protocol daemon; `make demo` runs it, `make bench-kv` measures it. SIGTERM and
        // SIGINT stop it gracefully through KeyValueProcess, on its first loop: the same code that
        // loopkv-sim's simulated signals run.
        .executableTarget(
            name: "loopkv",
            dependencies: [
                "KeyValueCore", "KeyValueService",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "KeyValueDaemon",
            exclude: ["demo.sh", "README.md"]
        ),
        // Starts the built loopkv on an ephemeral port and speaks RESP to it over sockets: what
        // only the real kernel shows (signals, `ulimit -n`, SO_REUSEPORT across loops, the binary).
        .testTarget(
            name: "KeyValueDaemonTests",
            dependencies: [
                "loopkv", "KeyValueCore", .product(name: "TomorrowlandTestSupport", package: "Tomorrowland"),
            ],
            path: "Tests/KeyValueDaemonTests"
        ),
        // loopkv's server on a SimulatedNetwork, on virtual time: idle timeout, max clients,
        // graceful shutdown and its grace period, slow and malformed clients, resets, expiry.
        .testTarget(
            name: "KeyValueServerSimulationTests",
            dependencies: [
                "KeyValueCore", "KeyValueService",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
                .product(name: "TomorrowlandSimulation", package: "Tomorrowland"),
                .product(name: "TomorrowlandTestSupport", package: "Tomorrowland"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/KeyValueServerSimulationTests"
        ),
        // Measures lazy+swept expiry against per-key loop timers (KeyValueDaemon/README.md).
        .executableTarget(
            name: "loopkv-expiry-bench",
            dependencies: [
                "KeyValueCore",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
            ],
            path: "KeyValueExpiryBench"
        ),
        .testTarget(
            name: "KeyValueCoreTests",
            dependencies: [
                "KeyValueCore",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandTesting", package: "Tomorrowland"),
            ],
            path: "Tests/KeyValueCoreTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version: 6.1
import PackageDescription

// The example targets build as a user's package would: under another package name, so that the
// library's `package` declarations are invisible to them and they compile against the public API
// only. (SwiftPM passes `-package-name tomorrowland` itself; the last `-package-name` wins.)
let package = Package(
    name: "Tomorrowland",
    products: [
        .library(name: "Tomorrowland", targets: ["Tomorrowland"]),
        .library(name: "TomorrowlandLoop", targets: ["TomorrowlandLoop"]),
        .library(name: "TomorrowlandTesting", targets: ["TomorrowlandTesting"]),
        // Hosts, links and faults on one virtual clock for daemons written on TomorrowlandLoop.
        .library(name: "TomorrowlandSimulation", targets: ["TomorrowlandSimulation"]),
        // Empty modules unless their trait is enabled (see `traits` below).
        .library(name: "TomorrowlandNIO", targets: ["TomorrowlandNIO"]),
        .library(name: "TomorrowlandServiceLifecycle", targets: ["TomorrowlandServiceLifecycle"]),
        .library(name: "TomorrowlandMetrics", targets: ["TomorrowlandMetrics"]),
        .library(name: "TomorrowlandTracing", targets: ["TomorrowlandTracing"]),
        // This repository's test toolkit (Tests/TestSupport), a product only so that the Examples
        // package's tests use the same lock, recorders and polling as the library's tests instead
        // of copies: a package that depends on this one by path sees targets only through
        // products. Not part of the library's API (no documentation build, no stability promise);
        // it depends on `Tomorrowland` alone, and a package that does not name it builds none of it.
        .library(name: "TomorrowlandTestSupport", targets: ["TomorrowlandTestSupport"]),
    ],
    // The integrations are opt-in traits, off by default: a package that depends on this one
    // without naming them resolves no SwiftNIO, no swift-service-lifecycle and no swift-metrics (SwiftPM leaves a
    // dependency out of resolution when only disabled traits use it; measured with SwiftPM 6.3 by
    // `swift package show-dependencies` in a consumer package, see README "Packaging").
    // Enable them with `.package(url: ..., from: ..., traits: ["NIO"])`; this repository's own
    // builds pass `--enable-all-traits` (the Makefile does).
    traits: [
        .trait(name: "NIO", description: "TomorrowlandNIO: SwiftNIO event loops as promise contexts, future bridges."),
        .trait(
            name: "ServiceLifecycle",
            description: "TomorrowlandServiceLifecycle: loops and loop groups as swift-service-lifecycle services."
        ),
        .trait(
            name: "Metrics",
            description: "TomorrowlandMetrics: per-loop tick, queue, timer and stall figures through swift-metrics."
        ),
        .trait(
            name: "Tracing",
            description:
                "TomorrowlandTracing: the request's ServiceContext (swift-distributed-tracing) carried through promise callbacks."
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        // Only for the `NIO`, `ServiceLifecycle`, `Metrics` and `Tracing` traits (the conditions below).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Its `Instrumentation` product holds `ServiceContextModule`.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
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
        // The scheduling engine both loops and the NIO executor share (ready FIFO, timer heap,
        // rounds, late-work policy, timer handle). A target of its own, not a product: the promise
        // core never uses it, and the modules that do import it `internal`ly, so no public API
        // shows its types. Their hot paths reach its `@inlinable` members across the module
        // boundary, as they reached them in the core before.
        .target(
            name: "TomorrowlandScheduling",
            dependencies: ["Tomorrowland"]
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
            dependencies: [
                "Tomorrowland", "TomorrowlandScheduling", "CLibevent", "CTomorrowlandLoopSupport",
                "CTomorrowlandSupport",
            ]
        ),
        .target(
            name: "TomorrowlandTesting",
            dependencies: ["Tomorrowland", "TomorrowlandScheduling"]
        ),
        // SimulatedNetwork: the TCP API of TomorrowlandLoop between simulated hosts, on virtual
        // time, every choice from one seed.
        .target(
            name: "TomorrowlandSimulation",
            dependencies: ["Tomorrowland", "TomorrowlandLoop", "TomorrowlandScheduling"]
        ),
        // SwiftNIO interop (trait `NIO`): a NIO EventLoop as a promise context, future bridges.
        .target(
            name: "TomorrowlandNIO",
            dependencies: [
                "Tomorrowland", "TomorrowlandScheduling",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ]
        ),
        // Our loops as swift-service-lifecycle services (trait `ServiceLifecycle`).
        .target(
            name: "TomorrowlandServiceLifecycle",
            dependencies: [
                "Tomorrowland", "TomorrowlandLoop",
                .product(
                    name: "ServiceLifecycle",
                    package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycle"])
                ),
            ]
        ),
        // Per-loop figures through swift-metrics (trait `Metrics`).
        .target(
            name: "TomorrowlandMetrics",
            dependencies: [
                "Tomorrowland", "TomorrowlandLoop", "TomorrowlandNIO",
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                // NIO loops' figures (`NIOLoopMetricsDelegate`), only with both traits.
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ]
        ),
        // The request's ServiceContext through promise callbacks (trait `Tracing`).
        .target(
            name: "TomorrowlandTracing",
            dependencies: [
                "Tomorrowland",
                .product(
                    name: "Instrumentation", package: "swift-distributed-tracing",
                    condition: .when(traits: ["Tracing"])),
            ]
        ),
        // The executor contract (issue 18): one suite, every executor. A regular target that
        // imports Testing, so that each check compiles once and the test targets of the core, the
        // loop and the NIO integration run it against their executors with thin @Test wrappers.
        .target(
            name: "TomorrowlandExecutorContract",
            dependencies: ["Tomorrowland", "TomorrowlandTestSupport"],
            path: "Tests/ExecutorContract"
        ),
        // The test toolkit: the lock tests keep shared state behind, the recorder, the release spy,
        // polling with a generous bound, once for every test target here and in Examples (its
        // declarations are public for that package: see the product above). Seeded randomness is
        // TomorrowlandSimulation's `SimulationRandom`, the library's own.
        .target(
            name: "TomorrowlandTestSupport",
            dependencies: ["Tomorrowland"],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "TomorrowlandSchedulingTests",
            // TomorrowlandSimulation for `SimulationRandom`, the seeded generator of the randomized cases.
            dependencies: [
                "TomorrowlandScheduling", "Tomorrowland", "TomorrowlandSimulation", "TomorrowlandTestSupport",
            ]
        ),
        .testTarget(
            name: "TomorrowlandTests",
            dependencies: [
                "Tomorrowland", "TomorrowlandTesting", "TomorrowlandExecutorContract", "TomorrowlandTestSupport",
            ]
        ),
        // A program that runs an EventLoop on its main thread, which tests cannot do (Swift Testing
        // runs them on other threads); TomorrowlandLoopTests launches it to check that the loop
        // drains DispatchQueue.main.
        .executableTarget(
            name: "LoopMainQueueProbe",
            dependencies: ["TomorrowlandLoop", "Tomorrowland", "TomorrowlandTestSupport"],
            path: "Tests/LoopMainQueueProbe"
        ),
        // A daemon's signal set-up (`TerminationSignals`) in a process of its own: signals are
        // process-wide, so TomorrowlandLoopTests launches it and sends it SIGTERM and SIGINT.
        .executableTarget(
            name: "TerminationSignalsProbe",
            dependencies: ["TomorrowlandLoop", "Tomorrowland"],
            path: "Tests/TerminationSignalsProbe"
        ),
        // A process started with TOMORROWLAND_PENDING_PROMISES (read once, before main):
        // TomorrowlandTestingTests launches it with several values of the variable.
        .executableTarget(
            name: "PendingPromiseProbe",
            dependencies: ["Tomorrowland"],
            path: "Tests/PendingPromiseProbe"
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
            // TomorrowlandTestSupport for the stand-ins' lock and polling, not for the examples.
            dependencies: ["Tomorrowland", "TomorrowlandTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "TomorrowlandLoopTests",
            dependencies: [
                "TomorrowlandLoop", "Tomorrowland", "CLibevent", "LoopMainQueueProbe", "TerminationSignalsProbe",
                // The cross-loop equivalence suite runs its scenarios on TestLoop too.
                "TomorrowlandTesting",
                "TomorrowlandExecutorContract",
                "TomorrowlandTestSupport",
                // `SimulationRandom`, the seeded generator of the TCP model programs.
                "TomorrowlandSimulation",
            ]
        ),
        // Random programs of promise operations checked against a reference model of the
        // documented rules (Sources/Tomorrowland/Tomorrowland.docc/BehaviourRules.md); seeded,
        // with a shrinker.
        .testTarget(
            name: "TomorrowlandModelTests",
            // TomorrowlandSimulation for `SimulationRandom`: a seed names the same program everywhere.
            dependencies: ["Tomorrowland", "TomorrowlandTesting", "TomorrowlandSimulation"]
        ),
        .testTarget(
            name: "TomorrowlandNIOTests",
            dependencies: [
                "TomorrowlandNIO", "Tomorrowland", "TomorrowlandTesting", "TomorrowlandLoop",
                "TomorrowlandExecutorContract", "TomorrowlandTestSupport",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ]
        ),
        .testTarget(
            name: "TomorrowlandServiceLifecycleTests",
            dependencies: [
                "TomorrowlandServiceLifecycle", "Tomorrowland", "TomorrowlandLoop", "TomorrowlandTestSupport",
                .product(
                    name: "ServiceLifecycle",
                    package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycle"])
                ),
            ]
        ),
        .testTarget(
            name: "TomorrowlandMetricsTests",
            dependencies: [
                "TomorrowlandMetrics", "Tomorrowland", "TomorrowlandLoop", "TomorrowlandNIO", "TomorrowlandTestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ]
        ),
        .testTarget(
            name: "TomorrowlandTracingTests",
            dependencies: [
                "TomorrowlandTracing", "Tomorrowland", "TomorrowlandLoop", "TomorrowlandTesting", "TomorrowlandNIO",
                "TomorrowlandTestSupport",
                .product(
                    name: "Instrumentation", package: "swift-distributed-tracing",
                    condition: .when(traits: ["Tracing"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ]
        ),
        // Runs one seeded simulation and prints its digest: TomorrowlandSimulationTests launches
        // it twice to check that a seed replays the same in another process.
        .executableTarget(
            name: "SimulationDigestProbe",
            dependencies: ["TomorrowlandSimulation", "TomorrowlandLoop", "Tomorrowland"],
            path: "Tests/SimulationDigestProbe"
        ),
        .testTarget(
            name: "TomorrowlandSimulationTests",
            dependencies: [
                "TomorrowlandSimulation", "TomorrowlandLoop", "Tomorrowland", "SimulationDigestProbe",
                "TomorrowlandTestSupport",
            ]
        ),
        // The transport contract: every TCP behaviour the library relies on, run on loopback
        // sockets and on the simulated network, which must observe the same.
        .testTarget(
            name: "TomorrowlandTransportContractTests",
            dependencies: ["TomorrowlandSimulation", "TomorrowlandLoop", "Tomorrowland", "TomorrowlandTestSupport"]
        ),
        .testTarget(
            name: "TomorrowlandTestingTests",
            dependencies: [
                "TomorrowlandTesting", "Tomorrowland", "TomorrowlandTestSupport", "CTomorrowlandSupport",
                "PendingPromiseProbe",
            ]
        ),
        // A user's file in Swift 6 mode (complete strict concurrency) with the upcoming features
        // on, using the README's API and the async bridges: it must build with zero warnings
        // (-warnings-as-errors) and its tests run.
        .testTarget(
            name: "TomorrowlandStrictConcurrencyTests",
            // TomorrowlandTestSupport for `Locked`, the tests' one lock, behind the file's log.
            dependencies: ["Tomorrowland", "TomorrowlandLoop", "TomorrowlandTesting", "TomorrowlandTestSupport"],
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

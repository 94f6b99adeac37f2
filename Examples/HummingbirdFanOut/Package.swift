// swift-tools-version: 6.1
import PackageDescription

// An HTTP service on SwiftNIO (Hummingbird 2) whose handlers use Tomorrowland promises on the
// request's NIO event loop. A package of its own, beside the other examples, so that neither
// the library's graph nor the other examples' graph ever resolves Hummingbird: only this
// directory's builds do (`make test-http-example`, `make demo-http`).
let package = Package(
    name: "HummingbirdFanOut",
    products: [
        .executable(name: "hummingbird-fanout", targets: ["HummingbirdFanOut"])
    ],
    dependencies: [
        // The library with its NIO integration, its swift-metrics figures and the request's
        // ServiceContext carried through promise callbacks (the `NIO`, `Metrics` and `Tracing`
        // traits, off by default for dependents).
        .package(name: "Tomorrowland", path: "../..", traits: ["NIO", "Metrics", "Tracing"]),
        // Without its default traits: no swift-configuration support to build, no full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // The metrics API the service records into, and the backend `GET /metrics` exports.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // The service: two simulated slow backends on the request's loop, the fan-out that
        // combines them with `when` under a `timeout`, and the routes.
        .target(
            name: "FanOutService",
            dependencies: [
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandNIO", package: "Tomorrowland"),
                .product(name: "TomorrowlandMetrics", package: "Tomorrowland"),
                .product(name: "TomorrowlandTracing", package: "Tomorrowland"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // `NIOLockedValueBox`, the example's lock: see BackendCallLog.swift.
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // `hummingbird-fanout [--host H] [--port P]`: serves until SIGINT or SIGTERM, with
        // swift-metrics bootstrapped to the Prometheus registry `GET /metrics` exports.
        .executableTarget(
            name: "HummingbirdFanOut",
            dependencies: [
                "FanOutService",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TomorrowlandTracing", package: "Tomorrowland"),
                .product(name: "TomorrowlandMetrics", package: "Tomorrowland"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // Runs the service on a loopback port in-process and drives it with curl.
        .testTarget(
            name: "FanOutServiceTests",
            dependencies: [
                "FanOutService",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandMetrics", package: "Tomorrowland"),
                // The tests' one lock (`Locked`) and helpers, shared with the library's tests.
                .product(name: "TomorrowlandTestSupport", package: "Tomorrowland"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

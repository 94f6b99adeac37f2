// swift-tools-version: 6.1
import PackageDescription

// A package of its own, beside the library's, so that users of the library never resolve
// SwiftNIO: only this package depends on it. `swift build` at the root does not build it.
// It enables the root's `NIO` trait for the ours@NIO rows: our promises on a NIO `EventLoop`
// through `TomorrowlandNIO`, against NIO's futures on that same loop.
let package = Package(
    name: "TomorrowlandBenchmarks",
    dependencies: [
        // `Tracing` only so that TOMORROWLAND_BENCH_SERVICE_CONTEXT can measure propagation; off
        // (the variable unset) in every gated figure.
        .package(name: "Tomorrowland", path: "../", traits: ["NIO", "Tracing"]),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // Counting malloc interposer, thread CPU clocks, RSS and mallinfo2, in C.
        .target(name: "CBenchSupport"),
        .executableTarget(
            name: "TomorrowlandBench",
            dependencies: [
                "CBenchSupport",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
                .product(name: "TomorrowlandNIO", package: "Tomorrowland"),
                .product(name: "TomorrowlandTracing", package: "Tomorrowland"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        // Swift Concurrency on the loop: ns and instructions per await for tasks and actors
        // that use an EventLoop as executor.
        .executableTarget(
            name: "AsyncHopBench",
            dependencies: [
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
            ]
        ),
        // The baseline server of TCPEchoBench: libevent's textbook bufferevent echo, in C.
        .target(
            name: "CBuffereventEcho",
            linkerSettings: [.linkedLibrary("event_core"), .linkedLibrary("pthread")]
        ),
        // Echo round trips per second over loopback TCP, server and client on two loops.
        .executableTarget(
            name: "TCPEchoBench",
            dependencies: [
                "CBuffereventEcho",
                .product(name: "Tomorrowland", package: "Tomorrowland"),
                .product(name: "TomorrowlandLoop", package: "Tomorrowland"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

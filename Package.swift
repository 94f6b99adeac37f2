// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Tomorrowland",
    products: [
        .library(name: "Tomorrowland", targets: ["Tomorrowland"]),
        .library(name: "TomorrowlandLoop", targets: ["TomorrowlandLoop"]),
        .library(name: "TomorrowlandTesting", targets: ["TomorrowlandTesting"]),
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
        .target(
            name: "TomorrowlandLoop",
            dependencies: ["Tomorrowland", "CLibevent"]
        ),
        .target(
            name: "TomorrowlandTesting",
            dependencies: ["Tomorrowland"]
        ),
        .testTarget(
            name: "TomorrowlandTests",
            dependencies: ["Tomorrowland", "TomorrowlandTesting"]
        ),
        .testTarget(
            name: "TomorrowlandLoopTests",
            dependencies: ["TomorrowlandLoop", "Tomorrowland"]
        ),
        .testTarget(
            name: "TomorrowlandTestingTests",
            dependencies: ["TomorrowlandTesting", "Tomorrowland"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

#!/usr/bin/env bash
# `make check-dependency-graph`: what a package that depends on this one resolves, per trait.
# Writes a throwaway consumer package (depending on this checkout by path) and checks
# `swift package show-dependencies`:
#   no traits          -> nothing but this package (no swift-nio, no swift-service-lifecycle,
#                         no swift-metrics, none of the examples' or the benchmarks' dependencies)
#   traits: NIO        -> swift-nio's graph, no swift-service-lifecycle, no swift-metrics
#   traits: ServiceLifecycle -> swift-service-lifecycle's graph, no swift-nio
#   traits: Metrics    -> swift-metrics, no swift-nio, no swift-service-lifecycle
#   traits: Tracing    -> swift-distributed-tracing, no swift-nio, no swift-service-lifecycle,
#                         no swift-metrics
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SWIFT="${SWIFT:-swift}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/Sources/Consumer"
echo 'import Tomorrowland' >"$WORK/Sources/Consumer/main.swift"

graph() { # $1: the traits argument of the .package line ("" for none)
    cat >"$WORK/Package.swift" <<MANIFEST
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "Consumer",
    dependencies: [.package(name: "Tomorrowland", path: "$ROOT"$1)],
    targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "Tomorrowland", package: "Tomorrowland")])]
)
MANIFEST
    rm -f "$WORK/Package.resolved"
    (cd "$WORK" && "$SWIFT" package show-dependencies --format flatlist 2>/dev/null)
}

fail=0
expect() { # $1: label, $2: the graph, $3: regex that must match ("" for none), $4: regex that must not
    if [ -n "$3" ] && ! grep -Eq "$3" <<<"$2"; then echo "check-dependency-graph: $1: expected $3 in:" >&2; echo "$2" >&2; fail=1; fi
    if grep -Eq "$4" <<<"$2"; then echo "check-dependency-graph: $1: unexpected $4 in:" >&2; echo "$2" >&2; fail=1; fi
}

none="$(graph "")"
expect "no traits" "$none" "" "swift-nio|swift-service-lifecycle|swift-metrics|swift-distributed-tracing|swift-log|swift-argument-parser|hummingbird|swift-docc-plugin"
nio="$(graph ", traits: [\"NIO\"]")"
expect "traits NIO" "$nio" "swift-nio" "swift-service-lifecycle|swift-metrics|swift-distributed-tracing|swift-argument-parser|hummingbird"
lifecycle="$(graph ", traits: [\"ServiceLifecycle\"]")"
expect "traits ServiceLifecycle" "$lifecycle" "swift-service-lifecycle" "swift-nio|swift-argument-parser|hummingbird"
metrics="$(graph ", traits: [\"Metrics\"]")"
expect "traits Metrics" "$metrics" "swift-metrics" "swift-nio|swift-service-lifecycle|swift-distributed-tracing|swift-argument-parser|hummingbird"
tracing="$(graph ", traits: [\"Tracing\"]")"
expect "traits Tracing" "$tracing" "swift-distributed-tracing" "swift-nio|swift-service-lifecycle|swift-metrics|swift-argument-parser|hummingbird"
[ "$fail" = 0 ] || exit 1
echo "check-dependency-graph: no traits -> [$(echo $none)]; NIO -> [$(echo $nio)]; ServiceLifecycle -> [$(echo $lifecycle)]; Metrics -> [$(echo $metrics)]; Tracing -> [$(echo $tracing)]"

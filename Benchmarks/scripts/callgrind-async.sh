#!/usr/bin/env bash
# Instructions per await for AsyncHopBench's workloads (Swift Concurrency on an EventLoop),
# with callgrind, as callgrind.sh does for W1-W7: two runs of different length,
# (Ir(N2) - Ir(N1)) / extra awaits, so start-up and the warm-up iteration cancel out.
# `BINARY=path/to/AsyncHopBench` measures another build (a baseline, say).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="${BINARY:-$here/${BENCH_SCRATCH:-.build}/release/AsyncHopBench}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 cannot read the DWARF that swiftc emits: count on a debug-stripped copy.
objcopy --strip-debug "$binary" "$work/AsyncHopBench"

total_ir() {  # workload iterations
    rm -f "$work/out"
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/AsyncHopBench" \
        --run "$1" --iterations "$2" >/dev/null 2>"$work/log"
    sed -n 's/^summary: *//p; s/^totals: *//p' "$work/out" | head -1 | cut -d' ' -f1
}

echo "| workload | Ir/await |"
echo "|---|---|"
for workload in actor nonisolated promise actor-to-actor promise-later; do
    ir1="$(total_ir "$workload" 1)"
    ir2="$(total_ir "$workload" 3)"
    echo "| $workload | $(python3 -c "print(f'{($ir2 - $ir1) / (2 * 10000):.1f}')") |"
done

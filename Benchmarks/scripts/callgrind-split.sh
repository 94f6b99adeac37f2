#!/usr/bin/env bash
# Where a workload's instructions per unit go: glibc's allocator, the Swift runtime, Tomorrowland,
# the benchmark's own code, the rest; and the functions that cost most. Two callgrind runs of
# different length, measured as callgrind.sh measures (callgrind-common.sh), so the total is the
# figure instruction-budgets.txt holds. The split behind Benchmarks/README.md's floor table.
# Usage: callgrind-split.sh [WORKLOAD ...]   (default: W1i W1 W8; ours only)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$here/${BENCH_SCRATCH:-.build}/release/TomorrowlandBench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$here/scripts/callgrind-common.sh"
prepare_binary
[ "$#" -gt 0 ] || set -- W1i W1 W8
top="${SPLIT_TOP:-15}"
for workload in "$@"; do
    # N1, N2 and units per iteration as callgrind.sh runs the workload.
    case "$workload" in
        W3 | W3i | W3@NIO | W8 | W8@NIO) n1=1 n2=3 units=100000 ;;
        W4 | W4@NIO) n1=5 n2=25 units=1000 ;;
        *) n1=20 n2=120 units=1000 ;;
    esac
    total_ir "$workload" ours "$n1" short >/dev/null
    total_ir "$workload" ours "$n2" long >/dev/null
    echo "== $workload (ours)"
    python3 "$here/scripts/callgrind-split.py" "$work/short.out" "$work/long.out" "$(((n2 - n1) * units))" "$top"
done

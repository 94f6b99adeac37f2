#!/usr/bin/env bash
# `make check-instructions`: counts the instructions per unit of our side of W1, W2 and W3 on our
# loop, and of W1i, W2i and W3i (the same on .immediate), under callgrind, and compares them with
# instruction-budgets.txt (compare-instructions.sh --gate): fails when a row is more than 3% over
# its budget. Each row is two runs of different length, (Ir(N2) - Ir(N1)) / extra units, as in
# callgrind.sh, so start-up cancels out; these N are the smallest that agree with callgrind.sh's
# longer runs (within 0.1%: W3 1,951.7 against 1,953.3). The two runs of a row go in parallel:
# about 23 s of CPU after the release build, W3 and W3i (100,000 promises an iteration) most of it.
# Usage: check-instructions.sh [budget file]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$here/${BENCH_SCRATCH:-.build}/release/TomorrowlandBench"
budgets="${1:-$here/instruction-budgets.txt}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$here/scripts/callgrind-common.sh"

prepare_binary
: > "$work/measured"
# workload library N1 N2 units-per-iteration
while read -r workload library n1 n2 units; do
    total_ir "$workload" "$library" "$n1" a > "$work/ir1" &
    total_ir "$workload" "$library" "$n2" b > "$work/ir2"
    wait $!
    ir1="$(cat "$work/ir1")"
    ir2="$(cat "$work/ir2")"
    if [ -z "$ir1" ] || [ -z "$ir2" ]; then
        echo "$workload $library n/a" >> "$work/measured"
    else
        echo "$workload $library $(per_unit "$ir1" "$ir2" "$n1" "$n2" "$units")" >> "$work/measured"
    fi
done <<'RUNS'
W1 ours 2 12 1000
W2 ours 2 12 1000
W3 ours 1 2 100000
W1i ours 2 12 1000
W2i ours 2 12 1000
W3i ours 1 2 100000
RUNS
"$here/scripts/compare-instructions.sh" --gate "$budgets" "$work/measured"

#!/usr/bin/env bash
# Instructions per unit for W1, W2, W3, W4 and W7 (and our .immediate variants of W1, W2 and W3, and
# the ours@NIO rows W1@NIO ... W7@NIO: our promises on NIO's loop), for both libraries, with callgrind: two runs of different length, (Ir(N2) - Ir(N1)) / extra units,
# so start-up and the warm-up iteration cancel out. Instruction counts do not depend on the
# machine's load.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$here/${BENCH_SCRATCH:-.build}/release/TomorrowlandBench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# valgrind 3.19 cannot read the DWARF that swiftc emits: count on a debug-stripped copy.
objcopy --strip-debug "$binary" "$work/TomorrowlandBench"

total_ir() {  # workload library iterations; prints nothing if the run failed
    rm -f "$work/out"
    if valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/TomorrowlandBench" \
        --run "$1" --lib "$2" --iterations "$3" >/dev/null 2>"$work/log"; then
        sed -n 's/^summary: *//p; s/^totals: *//p' "$work/out" | head -1 | cut -d' ' -f1
    else
        echo "callgrind: $1 $2 $3 failed:" >&2
        grep -v '^==' "$work/log" | tail -3 >&2
    fi
}

output="$here/results/callgrind.md"
{
    echo "# Instructions per unit (callgrind), $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "$(swift --version 2>/dev/null | head -1); $(valgrind --version)"
    echo
    echo "| workload | library | N1 | N2 | units per iteration | Ir(N1) | Ir(N2) | Ir/unit |"
    echo "|---|---|---|---|---|---|---|---|"
} > "$output"

# workload library N1 N2 units-per-iteration
while read -r workload library n1 n2 units; do
    ir1="$(total_ir "$workload" "$library" "$n1")"
    ir2="$(total_ir "$workload" "$library" "$n2")"
    if [ -z "$ir1" ] || [ -z "$ir2" ]; then
        echo "| $workload | $library | $n1 | $n2 | $units | – | – | not available |" | tee -a "$output"
        continue
    fi
    per_unit="$(python3 -c "print(f'{($ir2 - $ir1) / (($n2 - $n1) * $units):.1f}')")"
    echo "| $workload | $library | $n1 | $n2 | $units | $ir1 | $ir2 | $per_unit |" | tee -a "$output"
done <<'RUNS'
W1 nio 20 120 1000
W1 ours 20 120 1000
W1i ours 20 120 1000
W3 nio 1 3 100000
W3 ours 1 3 100000
W3i ours 1 3 100000
W2 nio 20 120 1000
W2 ours 20 120 1000
W2i ours 20 120 1000
W4 nio 5 25 1000
W4 ours 5 25 1000
W7 nio 20 120 1000
W7 ours 20 120 1000
W1@NIO ours 20 120 1000
W2@NIO ours 20 120 1000
W3@NIO ours 1 3 100000
W4@NIO ours 5 25 1000
W7@NIO ours 20 120 1000
W8 nio 1 3 100000
W8 ours 1 3 100000
W8@NIO ours 1 3 100000
RUNS
echo "wrote $output"

#!/usr/bin/env bash
# Instructions per unit for W1, W2, W3, W4 and W7 (and our .immediate variants of W1, W2 and W3, and
# the ours@NIO rows W1@NIO ... W7@NIO: our promises on NIO's loop), for both libraries, with callgrind: two runs of different length, (Ir(N2) - Ir(N1)) / extra units,
# so start-up and the warm-up iteration cancel out. Instruction counts do not depend on the
# machine's load.
set -euo pipefail
# Then compares every row with the committed figures of instruction-budgets.txt (BUDGETS=file for
# another) and prints the delta, flagging rows beyond ±3%; both tables go to results/callgrind.md.
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$here/${BENCH_SCRATCH:-.build}/release/TomorrowlandBench"
budgets="${BUDGETS:-$here/instruction-budgets.txt}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$here/scripts/callgrind-common.sh"
prepare_binary
: > "$work/measured"

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
        echo "$workload $library n/a" >> "$work/measured"
        continue
    fi
    figure="$(per_unit "$ir1" "$ir2" "$n1" "$n2" "$units")"
    echo "| $workload | $library | $n1 | $n2 | $units | $ir1 | $ir2 | $figure |" | tee -a "$output"
    echo "$workload $library $figure" >> "$work/measured"
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
# The comparison is a table of 6 columns, so TomorrowlandBench --instructions (which reads the
# rows of 8 above) ignores it.
{
    echo
    echo "## Against the committed figures ($(realpath --relative-to="$here/.." "$budgets"))"
    echo
    "$here/scripts/compare-instructions.sh" --report "$budgets" "$work/measured"
} | tee -a "$output"
echo "wrote $output"

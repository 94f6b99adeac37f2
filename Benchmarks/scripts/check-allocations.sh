#!/usr/bin/env bash
# `make check-allocations`: runs `TomorrowlandBench --allocations` (already built in release) and
# compares our side's allocation calls per unit with allocation-budgets.txt. Fails, naming the
# workload, its budget and its count, when a count exceeds its budget (rounded to 2 decimals,
# tolerance 0.04: see the budget file), when a workload has no budget, when a budget names no
# workload, or when a workload did not run. Counts only, no timing: the result does not depend on
# the machine's load.
# Usage: check-allocations.sh [budget file]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$here/${BENCH_SCRATCH:-.build}/release/TomorrowlandBench"
budgets="${1:-$here/allocation-budgets.txt}"

counts="$(mktemp)"
trap 'rm -f "$counts"' EXIT
"$binary" --allocations > "$counts"

# The budget file first (lines "<id> <budget>", comments after #), then the counts
# ("<id> ours <count> nio <count>").
awk -v budget_file="$budgets" '
    FNR == NR {
        sub(/#.*/, "")
        if (NF == 0) next
        if (NF != 2 || $2 !~ /^[0-9]+$/) { printf "%s:%d: expected \"<workload> <whole budget>\"\n", budget_file, FNR; bad = 1; next }
        budget[$1] = $2
        next
    }
    {
        id = $1; count = $3; seen[id] = 1
        if (!(id in budget)) {
            printf "FAIL %-4s no budget in %s (count %s): add one line for it\n", id, budget_file, count; failed = 1; next
        }
        if (count !~ /^[0-9.]+$/) {
            printf "FAIL %-4s budget %d, but our side did not run (count %s)\n", id, budget[id], count; failed = 1; next
        }
        rounded = sprintf("%.2f", count)
        nio = ($5 ~ /^[0-9.]+$/) ? sprintf("%.2f", $5) : $5
        # Compared in hundredths, as integers, so no binary fraction decides a borderline case.
        if (int(rounded * 100 + 0.5) > budget[id] * 100 + 4) {
            printf "FAIL %-4s %s allocations per unit, over its budget of %d (tolerance 0.04; NIO: %s)\n", id, rounded, budget[id], nio; failed = 1
        } else {
            printf "ok   %-4s %s allocations per unit, budget %d (NIO: %s)\n", id, rounded, budget[id], nio
        }
    }
    END {
        for (id in budget) if (!(id in seen)) { printf "FAIL %-4s has a budget but did not run\n", id; failed = 1 }
        if (bad) exit 2
        if (failed) { print "check-allocations: over budget (see above); lower budgets in the same commit as a win, raise one only with a reason"; exit 1 }
        print "check-allocations: every workload within its allocation budget"
    }
' "$budgets" "$counts"

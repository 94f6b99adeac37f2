#!/usr/bin/env bash
# Compares measured instructions per unit with the committed figures of instruction-budgets.txt
# (see its header for the policy). The tolerance is 3% either way.
#
#   compare-instructions.sh --report BUDGETS MEASURED   (make bench-callgrind)
#       a Markdown table of every measured row: committed figure, measured figure, delta, and a
#       flag on rows beyond ±3% or without a committed figure; always exits 0 (it informs).
#   compare-instructions.sh --gate BUDGETS MEASURED     (make check-instructions)
#       one line per measured row; exits 1 when a row is more than 3% above its budget, has no
#       budget or did not run; a row more than 3% below passes and asks for the budget to be
#       lowered. Budgets of rows not measured are not checked (bench-callgrind compares them).
#
# MEASURED: lines "<workload> <library> <Ir/unit>", the figure "n/a" when the run failed.
set -euo pipefail
mode="$1"
budgets="$2"
measured="$3"
case "$mode" in --report | --gate) ;; *) echo "usage: $0 --report|--gate BUDGETS MEASURED" >&2; exit 2 ;; esac

# Messages name the file as the caller sees it (from the repository's root: Benchmarks/...).
shown="$(realpath --relative-to=. "$budgets")"
awk -v mode="$mode" -v budget_file="$shown" -v tolerance=3 '
    # Over / under the tolerance, compared in integers (tenths of an instruction against the
    # budget scaled by 100 ± tolerance), so no binary fraction decides a borderline case.
    function over(m, b) { return int(m * 10 + 0.5) * 100 > b * 10 * (100 + tolerance) }
    function under(m, b) { return int(m * 10 + 0.5) * 100 < b * 10 * (100 - tolerance) }
    function delta(m, b) { return sprintf("%+.2f%%", (m - b) * 100 / b) }
    FNR == NR {
        sub(/#.*/, "")
        if (NF == 0) next
        if (NF != 3 || $3 !~ /^[0-9]+$/) {
            printf "%s:%d: expected \"<workload> <library> <whole Ir/unit>\"\n", budget_file, FNR
            bad = 1; next
        }
        budget[$1 " " $2] = $3
        next
    }
    {
        key = $1 " " $2; m = $3
        has = (key in budget); b = budget[key]
        ran = (m ~ /^[0-9.]+$/)
        if (mode == "--report") {
            if (!header++) {
                print "| workload | library | committed Ir/unit | measured Ir/unit | delta | note |"
                print "|---|---|---|---|---|---|"
            }
            if (!ran) note = "did not run"
            else if (!has) note = "no committed figure: add a line to " budget_file
            else if (over(m, b)) { note = "**above +" tolerance "%**"; flagged++ }
            else if (under(m, b)) { note = "**below -" tolerance "%**: lower the figure in " budget_file; flagged++ }
            else note = "within " tolerance "%"
            printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, has ? b : "–", ran ? m : "–", \
                (has && ran) ? delta(m, b) : "–", note
            next
        }
        if (!ran) { printf "FAIL     %-5s %-4s did not run (budget %s)\n", $1, $2, has ? b : "none"; failed = 1; next }
        if (!has) {
            printf "FAIL     %-5s %-4s %s Ir/unit, no budget in %s: add one line for it\n", $1, $2, m, budget_file
            failed = 1; next
        }
        if (over(m, b)) {
            printf "FAIL     %-5s %-4s %s Ir/unit, budget %d: %s, more than %d%% over\n", $1, $2, m, b, delta(m, b), tolerance
            failed = 1
        } else if (under(m, b)) {
            printf "improved %-5s %-4s %s Ir/unit, budget %d: %s: lower the budget in %s\n", $1, $2, m, b, delta(m, b), budget_file
        } else {
            printf "ok       %-5s %-4s %s Ir/unit, budget %d (%s)\n", $1, $2, m, b, delta(m, b)
        }
    }
    END {
        if (bad) exit 2
        if (mode == "--report") {
            if (flagged) printf "\n%d row(s) beyond ±%d%% of the committed figure (flagged above).\n", flagged, tolerance
            exit 0
        }
        if (failed) {
            print "check-instructions: over budget (see above). Find the cost (callgrind_annotate on the row) or, with a reason in the commit, raise the budget"
            exit 1
        }
        print "check-instructions: every gated row within " tolerance "% of its instruction budget"
    }
' "$budgets" "$measured"

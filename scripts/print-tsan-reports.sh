#!/usr/bin/env bash
# Prints the ThreadSanitizer reports in a folder (written there through TSAN_OPTIONS log_path by
# `make test-tsan`), demangled: each whole, then a short digest of all of them, last, so that the
# tail of a CI log names the race (its two accesses' top frames) however long the suite's output was.
# Usage: scripts/print-tsan-reports.sh <folder>
set -uo pipefail
folder="$1"
swift="${SWIFT:-swift}"
shopt -s nullglob
reports=("$folder"/*)
if [ "${#reports[@]}" -eq 0 ]; then
    echo "print-tsan-reports: no ThreadSanitizer report in $folder (the run failed for another reason)"
    exit 0
fi
for report in "${reports[@]}"; do
    echo "=== ThreadSanitizer report: $report"
    "$swift" demangle --simplified < "$report"
done
echo "=== ThreadSanitizer digest (each warning, the top frames of each stack, the summary)"
grep -h -E 'WARNING: ThreadSanitizer|^ *#[0-2] |SUMMARY' "${reports[@]}" | "$swift" demangle --simplified |
    sed -E 's/ \(BuildId: [0-9a-f]+\)//' | cut -c1-200

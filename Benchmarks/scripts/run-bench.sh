#!/usr/bin/env bash
# Runs the benchmark binary (already built in release), writes results/latest.md with the date,
# machine and toolchain above the table, and draws results/latest.png from it. The table gets a
# column of callgrind's instructions per unit from results/callgrind.md when that file exists
# (`make bench-callgrind` writes it).
# Usage: run-bench.sh [arguments for TomorrowlandBench, e.g. --only W1,W3]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$here/${BENCH_SCRATCH:-.build}/release/TomorrowlandBench"
results="$here/results"
mkdir -p "$results"

table="$(mktemp)"
trap 'rm -f "$table"' EXIT
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
instructions=()
# Relative to the package folder, so that the table names the file without this checkout's path.
if [ -f "$results/callgrind.md" ]; then instructions=(--instructions results/callgrind.md); fi
(cd "$here" && "$binary" "${instructions[@]}" "$@") | tee "$table"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

nio_version="$(sed -n '/swift-nio"/,/version/ s/.*"version" *: *"\([^"]*\)".*/\1/p' "$here/Package.resolved" 2>/dev/null | head -1)"
{
    echo "# Tomorrowland vs SwiftNIO: latest benchmark run"
    echo
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- Machine: $(uname -srm), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    echo "- Toolchain: $(swift --version 2>/dev/null | head -1); swift-nio ${nio_version:-unknown}; release build"
    echo "- Load average (1/5/15 min): $load_before before, $load_after after"
    echo "- Command: \`TomorrowlandBench $*\`"
    echo
    cat "$table"
} > "$results/latest.md"
echo "wrote $results/latest.md"

if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$here/scripts/chart.py" "$results/latest.md" "$results/latest.png"
else
    echo "matplotlib is not installed (python3 -m pip install matplotlib): no chart drawn" >&2
fi

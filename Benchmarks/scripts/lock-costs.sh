#!/usr/bin/env bash
# The figures behind the library's lock policy (LockedValue.swift, SpinLock.swift):
#   lock-costs.sh          instructions (callgrind) per uncontended lock and unlock, and per object
#                          holding a lock (created, locked once, destroyed), for SpinLock,
#                          LockedValue and the standard library's Mutex; heap allocations per object.
#   lock-costs.sh --tsan   ThreadSanitizer's reports on state that a Mutex does protect.
# Each row is (Ir(2N) - Ir(N)) / N, so start-up cancels out. About a minute.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
swiftc="${SWIFTC:-swiftc}"

if [ "${1:-}" = "--tsan" ]; then
    "$swiftc" -O -sanitize=thread "$here/LockCosts/TSanMutexProbe.swift" -o "$work/probe"
    "$work/probe" 2> "$work/tsan" || true
    echo "ThreadSanitizer reports: $(grep -c 'WARNING: ThreadSanitizer' "$work/tsan" || true)"
    exit 0
fi

"$swiftc" -O "$here/LockCosts/LockCosts.swift" -o "$work/locks"
ir() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/locks" "$@" 2>&1 \
        | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*$'
}
printf '%-12s %-8s %12s %12s\n' lock mode "Ir/unit" "allocs/unit"
for mode in ops objects; do
    for kind in spin pthread mutex; do
        first="$(ir "$kind" 100000 "$mode")"
        second="$(ir "$kind" 200000 "$mode")"
        a1="$(valgrind --tool=memcheck "$work/locks" "$kind" 1000 "$mode" 2>&1 | sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,)"
        a2="$(valgrind --tool=memcheck "$work/locks" "$kind" 2000 "$mode" 2>&1 | sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,)"
        printf '%-12s %-8s %12d %12s\n' "$kind" "$mode" $(((second - first) / 100000)) "$(awk "BEGIN { printf \"%.2f\", ($a2 - $a1) / 1000 }")"
    done
done

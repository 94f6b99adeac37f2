# Sourced by callgrind.sh and check-instructions.sh: how both count instructions, so that the
# figures they compare with instruction-budgets.txt are measured the same way.
# Needs: $binary (the release TomorrowlandBench) and $work (a scratch folder the caller removes).

# valgrind 3.19 cannot read the DWARF that swiftc emits: count on a debug-stripped copy.
prepare_binary() {
    objcopy --strip-debug "$binary" "$work/TomorrowlandBench"
}

# Prints the total Ir of `TomorrowlandBench --run <workload> --lib <library> --iterations <n>`
# (one warm-up iteration, then n) under callgrind, every thread counted; prints nothing and
# reports on standard error if the run failed.
# Usage: total_ir workload library iterations [tag]   (tag: distinct per concurrent call)
#
# One malloc arena for every thread: otherwise which arena the loop thread gets (a new one, or
# one that an exited thread left) depends on timing, and a run on a busy machine now and then
# counted ~7 more instructions per W1 link in `free` (96,000 in 13,000 links, +0.5%). With one
# arena, runs on a loaded machine agree within 0.02%.
total_ir() {
    local tag="${4:-run}"
    rm -f "$work/$tag.out"
    if GLIBC_TUNABLES=glibc.malloc.arena_max=1 valgrind --tool=callgrind --callgrind-out-file="$work/$tag.out" "$work/TomorrowlandBench" \
        --run "$1" --lib "$2" --iterations "$3" >/dev/null 2>"$work/$tag.log"; then
        sed -n 's/^summary: *//p; s/^totals: *//p' "$work/$tag.out" | head -1 | cut -d' ' -f1
    else
        echo "callgrind: $1 $2 $3 failed:" >&2
        grep -v '^==' "$work/$tag.log" | tail -3 >&2
    fi
}

# Instructions per unit from two runs of different length: (Ir(N2) - Ir(N1)) / extra units, so
# start-up, the warm-up iteration and exit cancel out. Usage: per_unit ir1 ir2 n1 n2 units
per_unit() {
    python3 -c "print(f'{($2 - $1) / (($4 - $3) * $5):.1f}')"
}

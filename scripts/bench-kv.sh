#!/usr/bin/env bash
# `make bench-kv`: redis-benchmark against loopkv (release, one loop) and against redis-server
# (no persistence), side by side: `redis-benchmark -q -P 16 -n 1000000 -t ping,set,get`.
# Installs redis-server and redis-tools with apt-get when missing. BENCH_KV_RUNS (default 3)
# runs alternate between the servers; the table shows the median req/s of each.
#
# A third server in the same run, unless BENCH_KV_DIAGNOSTICS=0: the same loopkv binary with its
# diagnostics on, the pending-promise report sampling one root promise in
# BENCH_KV_PENDING_SAMPLING (default 100, through TOMORROWLAND_PENDING_PROMISES) and stall
# detection at BENCH_KV_STALL_MS (default 50, `--stall-threshold`). Its column is compared with
# loopkv's (the cost of those diagnostics); its INFO `# Loops` section is printed at the end, to
# show they were on.
#
# BENCH_KV_PIN=1 pins the servers to the first core and redis-benchmark to the second (taskset),
# so that the client never takes the server's core. It does not make runs steady: on the 2-core
# machine this was written on, runs of one binary differed by up to 50%, pinned or not; more runs
# (BENCH_KV_RUNS) and the CPU time per request are what give a figure to compare.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
RUNS="${BENCH_KV_RUNS:-3}"
REQUESTS="${BENCH_KV_REQUESTS:-1000000}"
DIAGNOSTICS="${BENCH_KV_DIAGNOSTICS:-1}"
PENDING_SAMPLING="${BENCH_KV_PENDING_SAMPLING:-100}"
STALL_MS="${BENCH_KV_STALL_MS:-50}"
SERVER_CPU=()
CLIENT_CPU=()
if [ "${BENCH_KV_PIN:-0}" != 0 ]; then
    SERVER_CPU=(taskset -c 0)
    CLIENT_CPU=(taskset -c 1)
fi

source scripts/kv-servers.sh
kv_install_redis
kv_build_loopkv
kv_prepare

# cpu_ticks PID: the user and system time the process has used so far, in clock ticks.
cpu_ticks() {
    # Fields 14 and 15 of /proc/PID/stat, counted after the command name's closing parenthesis.
    sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

start_loopkv loopkv --
LOOPKV_PID=$STARTED_PID
LOOPKV_PORT=$STARTED_PORT
SERVERS=(loopkv)
if [ "$DIAGNOSTICS" != 0 ]; then
    start_loopkv loopkv-diagnostics "TOMORROWLAND_PENDING_PROMISES=$PENDING_SAMPLING" -- --stall-threshold "$STALL_MS"
    DIAGNOSTICS_PID=$STARTED_PID
    DIAGNOSTICS_PORT=$STARTED_PORT
    SERVERS+=(loopkv-diagnostics)
fi

start_redis
SERVERS+=(redis)

echo "loopkv $(basename "$BIN") on :$LOOPKV_PORT, $(redis-server --version | cut -d' ' -f1-3) on :$REDIS_PORT"
if [ "$DIAGNOSTICS" != 0 ]; then
    echo "loopkv with TOMORROWLAND_PENDING_PROMISES=$PENDING_SAMPLING --stall-threshold $STALL_MS on :$DIAGNOSTICS_PORT"
fi
echo "redis-benchmark -q -P 16 -n $REQUESTS -t ping,set,get, $RUNS run(s) each, alternating"
for run in $(seq 1 "$RUNS"); do
    for server in "${SERVERS[@]}"; do
        case "$server" in
            loopkv) port=$LOOPKV_PORT; pid=$LOOPKV_PID ;;
            loopkv-diagnostics) port=$DIAGNOSTICS_PORT; pid=$DIAGNOSTICS_PID ;;
            redis) port=$REDIS_PORT; pid=$REDIS_PID ;;
        esac
        ticks_before=$(cpu_ticks "$pid")
        ${CLIENT_CPU[@]+"${CLIENT_CPU[@]}"} redis-benchmark -p "$port" -q -P 16 -n "$REQUESTS" -t ping,set,get 2>/dev/null | tr '\r' '\n' |
            sed -n 's/^\([A-Z_]*\): \([0-9.]*\) requests per second.*/\1 \2/p' >"$WORK/$server.$run"
        # The server's CPU time over the run's three tests (each sends $REQUESTS requests).
        echo $(($(cpu_ticks "$pid") - ticks_before)) >"$WORK/$server.$run.cpu"
        sed "s/^/  run $run $server: /" "$WORK/$server.$run"
    done
done

python3 - "$WORK" "$RUNS" "$DIAGNOSTICS" "$REQUESTS" "$(getconf CLK_TCK)" <<'PY'
import sys, statistics
work, runs, diagnostics = sys.argv[1], int(sys.argv[2]), sys.argv[3] != "0"
requests, ticks_per_second = int(sys.argv[4]), int(sys.argv[5])
def load(server):
    table = {}
    for run in range(1, runs + 1):
        for line in open(f"{work}/{server}.{run}"):
            test, rate = line.split()
            table.setdefault(test, []).append(float(rate))
    return {test: statistics.median(rates) for test, rates in table.items()}
kv, redis = load("loopkv"), load("redis")
diag = load("loopkv-diagnostics") if diagnostics else {}
print()
header = f"| {'test':<12} | {'loopkv req/s':>14} | {'redis-server req/s':>18} | {'loopkv / redis':>14} |"
rule = f"|{'-'*14}|{'-'*15}:|{'-'*19}:|{'-'*15}:|"
if diagnostics:
    header += f" {'diagnostics on req/s':>20} | {'on / off':>8} |"
    rule += f"{'-'*21}:|{'-'*9}:|"
print(header)
print(rule)
worst = None
for test in ["PING_INLINE", "PING_MBULK", "SET", "GET"]:
    if test not in kv or test not in redis:
        continue
    ratio = kv[test] / redis[test]
    worst = ratio if worst is None else min(worst, ratio)
    row = f"| {test:<12} | {kv[test]:>14,.0f} | {redis[test]:>18,.0f} | {ratio:>13.0%} |"
    if diagnostics and test in diag:
        row += f" {diag[test]:>20,.0f} | {diag[test] / kv[test]:>7.1%} |"
    print(row)
if worst is not None:
    print(f"\nlowest ratio {worst:.0%} (target: at least 50% on each test)")
if diagnostics:
    on = [diag[test] for test in diag if test in kv]
    off = [kv[test] for test in diag if test in kv]
    if on:
        print(f"diagnostics on / off, all tests: {sum(on) / sum(off):.1%} (target: at least 95%)")
# The servers' CPU time per request, over every run: steadier than req/s on a small machine,
# where the client takes what the server leaves.
def cpu_ns_per_request(server):
    ticks = sum(int(open(f"{work}/{server}.{run}.cpu").read()) for run in range(1, runs + 1))
    return ticks / ticks_per_second * 1e9 / (3 * requests * runs)
print()
off_ns = cpu_ns_per_request("loopkv")
line = f"server CPU per request: loopkv {off_ns:,.0f} ns, redis-server {cpu_ns_per_request('redis'):,.0f} ns"
if diagnostics:
    on_ns = cpu_ns_per_request("loopkv-diagnostics")
    line += f", loopkv with diagnostics {on_ns:,.0f} ns ({on_ns / off_ns - 1:+.1%})"
print(line)
PY

if [ "$DIAGNOSTICS" != 0 ]; then
    echo
    echo "loopkv with diagnostics, INFO # Loops:"
    redis-cli -p "$DIAGNOSTICS_PORT" INFO | tr -d '\r' | sed -n '/^# Loops/,/^$/p' | sed 's/^/  /'
    kill -TERM "$DIAGNOSTICS_PID"
    wait "$DIAGNOSTICS_PID" && echo "loopkv with diagnostics stopped with status 0"
fi
kill -TERM "$LOOPKV_PID"
wait "$LOOPKV_PID" && echo "loopkv stopped with status 0"

#!/usr/bin/env bash
# `make bench-kv`: redis-benchmark against loopkv (release, one loop) and against redis-server
# (no persistence), side by side: `redis-benchmark -q -P 16 -n 1000000 -t ping,set,get`.
# Installs redis-server and redis-tools with apt-get when missing. BENCH_KV_RUNS (default 3)
# runs alternate between the two servers; the table shows the median req/s of each.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
RUNS="${BENCH_KV_RUNS:-3}"
REQUESTS="${BENCH_KV_REQUESTS:-1000000}"

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
    echo "bench-kv: installing redis-server and redis-tools"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
fi

$SWIFT build --package-path Examples -c release ${SWIFT_BUILD_FLAGS:-} --product loopkv >/dev/null
BIN="$($SWIFT build --package-path Examples -c release ${SWIFT_BUILD_FLAGS:-} --show-bin-path)/loopkv"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

: >"$WORK/loopkv.log"
"$BIN" --port 0 --loops 1 2>"$WORK/loopkv.log" &
LOOPKV_PID=$!
PIDS+=($LOOPKV_PID)
LOOPKV_PORT=""
for _ in $(seq 1 200); do
    LOOPKV_PORT="$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/loopkv.log" | head -1)"
    [ -n "$LOOPKV_PORT" ] && break
    sleep 0.05
done
[ -n "$LOOPKV_PORT" ] || { echo "bench-kv: loopkv did not start"; cat "$WORK/loopkv.log"; exit 1; }

REDIS_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    --dir "$WORK" --logfile "$WORK/redis.log" &
PIDS+=($!)
for _ in $(seq 1 200); do
    redis-cli -p "$REDIS_PORT" PING >/dev/null 2>&1 && break
    sleep 0.05
done

echo "loopkv $(basename "$BIN") on :$LOOPKV_PORT, $(redis-server --version | cut -d' ' -f1-3) on :$REDIS_PORT"
echo "redis-benchmark -q -P 16 -n $REQUESTS -t ping,set,get, $RUNS run(s) each, alternating"
for run in $(seq 1 "$RUNS"); do
    for server in loopkv redis; do
        port=$LOOPKV_PORT; [ "$server" = redis ] && port=$REDIS_PORT
        redis-benchmark -p "$port" -q -P 16 -n "$REQUESTS" -t ping,set,get 2>/dev/null | tr '\r' '\n' |
            sed -n 's/^\([A-Z_]*\): \([0-9.]*\) requests per second.*/\1 \2/p' >"$WORK/$server.$run"
        sed "s/^/  run $run $server: /" "$WORK/$server.$run"
    done
done

python3 - "$WORK" "$RUNS" <<'PY'
import sys, statistics
work, runs = sys.argv[1], int(sys.argv[2])
def load(server):
    table = {}
    for run in range(1, runs + 1):
        for line in open(f"{work}/{server}.{run}"):
            test, rate = line.split()
            table.setdefault(test, []).append(float(rate))
    return {test: statistics.median(rates) for test, rates in table.items()}
kv, redis = load("loopkv"), load("redis")
print()
print(f"| {'test':<12} | {'loopkv req/s':>14} | {'redis-server req/s':>18} | {'loopkv / redis':>14} |")
print(f"|{'-'*14}|{'-'*15}:|{'-'*19}:|{'-'*15}:|")
worst = None
for test in ["PING_INLINE", "PING_MBULK", "SET", "GET"]:
    if test not in kv or test not in redis:
        continue
    ratio = kv[test] / redis[test]
    worst = ratio if worst is None else min(worst, ratio)
    print(f"| {test:<12} | {kv[test]:>14,.0f} | {redis[test]:>18,.0f} | {ratio:>13.0%} |")
if worst is not None:
    print(f"\nlowest ratio {worst:.0%} (target: at least 50% on each test)")
PY

kill -TERM "$LOOPKV_PID"
wait "$LOOPKV_PID" && echo "loopkv stopped with status 0"

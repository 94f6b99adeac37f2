#!/usr/bin/env bash
# `make demo-http`: starts hummingbird-fanout on a free port and curls it: a quote where both
# backends answer in time, one where the deadline passes first (504, the slow call cancelled),
# one where the client hangs up early (both calls cancelled), then /stats and the service's
# counters from /metrics; stops it with SIGTERM and checks that it exits 0. Installs curl with
# apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")"  # the HummingbirdFanOut package
SWIFT="${SWIFT:-swift}"

if ! command -v curl >/dev/null 2>&1; then
    echo "demo-http: installing curl"
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
    fi
fi

$SWIFT build ${SWIFT_BUILD_FLAGS:-} --product hummingbird-fanout >/dev/null
BIN="$($SWIFT build ${SWIFT_BUILD_FLAGS:-} --show-bin-path)/hummingbird-fanout"
LOG="$(mktemp)"
"$BIN" --port 0 2>"$LOG" &
PID=$!
trap 'kill -9 $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
PORT=""
for _ in $(seq 1 200); do
    PORT="$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$LOG" | head -1)"
    [ -n "$PORT" ] && break
    sleep 0.05
done
[ -n "$PORT" ] || { echo "demo-http: hummingbird-fanout did not start"; cat "$LOG"; exit 1; }
echo "hummingbird-fanout (pid $PID) listening on 127.0.0.1:$PORT"

get() {
    echo "> curl ${*:2} 'http://127.0.0.1:$PORT$1'"
    curl --silent --show-error --write-out '\n(HTTP %{http_code}, %{time_total} s)\n' "${@:2}" \
        "http://127.0.0.1:$PORT$1" || true
}
get "/quote?item=anvil&inventory_ms=150&pricing_ms=300"
get "/quote?item=kettle&inventory_ms=50&pricing_ms=5000&timeout_ms=500"
get "/quote?item=sofa&inventory_ms=5000&pricing_ms=5000" --max-time 0.5
sleep 0.2  # the hang-up's cancel handlers run on the server's loop, just after curl gives up
get "/stats"
# The service's counters in Prometheus's text format (Hummingbird's request metrics left out).
echo "> curl 'http://127.0.0.1:$PORT/metrics' | grep fanout_"
curl --silent --show-error "http://127.0.0.1:$PORT/metrics" | grep '^fanout_' | sort || true

echo "> kill -TERM $PID"
kill -TERM "$PID"
set +e
wait "$PID"
STATUS=$?
set -e
trap - EXIT
sed 's/^/hummingbird-fanout log: /' "$LOG"
rm -f "$LOG"
if [ "$STATUS" -ne 0 ]; then
    echo "demo-http: hummingbird-fanout exited with status $STATUS" >&2
    exit 1
fi
echo "hummingbird-fanout exited with status 0"

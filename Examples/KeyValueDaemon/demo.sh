#!/usr/bin/env bash
# `make demo`: starts loopkv on a free port, drives it with redis-cli through SET/GET/EXPIRE
# with a key visibly expiring (TTL counting down, then GET nil), stops it with SIGTERM and checks
# that it exits 0. Installs redis-tools (redis-cli) with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."  # the Examples package
SWIFT="${SWIFT:-swift}"

if ! command -v redis-cli >/dev/null 2>&1; then
    echo "demo: installing redis-tools (redis-cli)"
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-tools >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-tools >/dev/null
    fi
fi

$SWIFT build ${SWIFT_BUILD_FLAGS:-} --product loopkv >/dev/null
BIN="$($SWIFT build ${SWIFT_BUILD_FLAGS:-} --show-bin-path)/loopkv"
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
[ -n "$PORT" ] || { echo "demo: loopkv did not start"; cat "$LOG"; exit 1; }
echo "loopkv (pid $PID) listening on 127.0.0.1:$PORT"

cli() {
    local shown="> redis-cli"
    for argument in "$@"; do
        if [[ "$argument" == *" "* ]]; then shown+=" \"$argument\""; else shown+=" $argument"; fi
    done
    echo "$shown"
    redis-cli --no-raw -p "$PORT" "$@"
}
cli PING
cli SET greeting "hello from the loop"
cli GET greeting
cli INCR visits
cli INCR visits
cli SET session abc123 EX 3
for _ in 1 2 3; do
    cli TTL session
    cli GET session
    sleep 1
done
cli TTL session
cli GET session
cli EXISTS greeting session
cli DBSIZE

echo "> kill -TERM $PID"
kill -TERM "$PID"
set +e
wait "$PID"
STATUS=$?
set -e
trap - EXIT
sed 's/^/loopkv log: /' "$LOG"
rm -f "$LOG"
if [ "$STATUS" -ne 0 ]; then
    echo "demo: loopkv exited with status $STATUS" >&2
    exit 1
fi
echo "loopkv exited with status 0"

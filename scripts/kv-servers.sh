# Sourced by the scripts that measure loopkv beside redis-server (bench-kv.sh, kv-idle-memory.sh):
# installing redis, building loopkv, starting each server on an ephemeral port, stopping them all.
# Expects SWIFT, and SERVER_CPU (an array, possibly empty) for a taskset prefix.

# Installs redis-server and redis-tools with apt-get when missing.
kv_install_redis() {
    if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
        echo "$(basename "$0"): installing redis-server and redis-tools"
        local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
    fi
}

# Builds loopkv in release; sets BIN to its path.
kv_build_loopkv() {
    $SWIFT build --package-path Examples -c release ${SWIFT_BUILD_FLAGS:-} --product loopkv >/dev/null
    BIN="$($SWIFT build --package-path Examples -c release ${SWIFT_BUILD_FLAGS:-} --show-bin-path)/loopkv"
}

# Makes WORK (the servers' logs) and stops every started server when the script exits.
kv_prepare() {
    WORK="$(mktemp -d)"
    PIDS=()
    trap kv_cleanup EXIT
}

kv_cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    # Wait for the servers to exit before removing $WORK: removing it while they were stopping
    # failed once with "Directory not empty".
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}

# start_loopkv NAME [ENV=VALUE...] -- [ARGUMENT...]: starts loopkv on an ephemeral port with the
# environment additions and arguments given, logging to $WORK/NAME.log; sets STARTED_PID and
# STARTED_PORT.
start_loopkv() {
    local name="$1"; shift
    local environment=()
    while [ "$1" != "--" ]; do environment+=("$1"); shift; done
    shift
    : >"$WORK/$name.log"
    ${SERVER_CPU[@]+"${SERVER_CPU[@]}"} env ${environment[@]+"${environment[@]}"} "$BIN" --port 0 --loops 1 "$@" 2>"$WORK/$name.log" &
    STARTED_PID=$!
    PIDS+=($STARTED_PID)
    STARTED_PORT=""
    for _ in $(seq 1 200); do
        STARTED_PORT="$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/$name.log" | head -1)"
        [ -n "$STARTED_PORT" ] && break
        sleep 0.05
    done
    [ -n "$STARTED_PORT" ] || { echo "$(basename "$0"): $name did not start"; cat "$WORK/$name.log"; exit 1; }
}

# start_redis [ARGUMENT...]: starts redis-server without persistence on an ephemeral port; sets
# REDIS_PID and REDIS_PORT once it answers.
start_redis() {
    REDIS_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    ${SERVER_CPU[@]+"${SERVER_CPU[@]}"} redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
        --daemonize no --dir "$WORK" --logfile "$WORK/redis.log" "$@" &
    REDIS_PID=$!
    PIDS+=($REDIS_PID)
    for _ in $(seq 1 200); do
        redis-cli -p "$REDIS_PORT" PING >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "$(basename "$0"): redis-server did not start"; cat "$WORK/redis.log"; exit 1
}

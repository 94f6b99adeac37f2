#!/usr/bin/env bash
# `make bench-kv-idle`: what an idle connection costs loopkv (release, one loop) and redis-server
# (no persistence), side by side. For each server: its resident memory (VmRSS) once it answers,
# then with KV_IDLE_CONNECTIONS (default 9000) connections open that have each sent one PING and
# read its reply, then idle. The table shows the growth per connection.
# Installs redis-server and redis-tools with apt-get when missing; needs a descriptor limit above
# KV_IDLE_CONNECTIONS (the client holds every connection in one process).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
CONNECTIONS="${KV_IDLE_CONNECTIONS:-9000}"
SERVER_CPU=()

if [ "$(ulimit -Sn)" -le $((CONNECTIONS + 64)) ]; then
    ulimit -Sn $((CONNECTIONS + 256)) 2>/dev/null || {
        echo "kv-idle-memory: the descriptor limit ($(ulimit -Hn)) is too low for $CONNECTIONS connections" >&2
        exit 1
    }
fi

source scripts/kv-servers.sh
kv_install_redis
kv_build_loopkv
kv_prepare

# The client: opens the connections, sends PING on each and reads its reply, says "ready", then
# holds them until its stdin closes.
cat >"$WORK/client.py" <<'PY'
import socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
connections = []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"PING\r\n")
    reply = b""
    while not reply.endswith(b"\r\n"):
        chunk = s.recv(64)
        if not chunk:
            sys.exit("the server closed a connection")
        reply += chunk
    if reply != b"+PONG\r\n":
        sys.exit(f"unexpected reply {reply!r}")
    connections.append(s)
print("ready", flush=True)
sys.stdin.read()
PY

# rss_kb PID: the process's resident memory, in KiB.
rss_kb() {
    sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"
}

# measure NAME PID PORT: opens the connections, each PING once, and records RSS before and after.
measure() {
    local name="$1" pid="$2" port="$3"
    local before after
    before=$(rss_kb "$pid")
    coproc CLIENT { python3 -u "$WORK/client.py" "$port" "$CONNECTIONS"; }
    local line=""
    read -r line <&"${CLIENT[0]}" || true
    [ "$line" = ready ] || { echo "kv-idle-memory: the client failed against $name" >&2; exit 1; }
    # Let the server finish the last replies' bookkeeping before reading its memory.
    sleep 1
    after=$(rss_kb "$pid")
    local client_input=${CLIENT[1]}
    exec {client_input}>&-
    wait "$CLIENT_PID" || true
    echo "$name $before $after" >>"$WORK/results"
}

start_loopkv loopkv --
measure loopkv "$STARTED_PID" "$STARTED_PORT"
kill -TERM "$STARTED_PID"; wait "$STARTED_PID" || true

start_redis --maxclients $((CONNECTIONS + 100))
measure redis-server "$REDIS_PID" "$REDIS_PORT"

echo "$CONNECTIONS idle connections, each after one PING ($(redis-server --version | cut -d' ' -f1-3))"
python3 - "$WORK/results" "$CONNECTIONS" <<'PY'
import sys
rows = [line.split() for line in open(sys.argv[1])]
count = int(sys.argv[2])
print(f"| {'server':<12} | {'RSS before (MB)':>15} | {'RSS after (MB)':>14} | {'per connection (KB)':>19} |")
print(f"|{'-'*14}|{'-'*16}:|{'-'*15}:|{'-'*20}:|")
per = {}
for name, before, after in rows:
    before, after = int(before), int(after)
    per[name] = (after - before) * 1024 / count / 1000
    print(f"| {name:<12} | {before * 1024 / 1e6:>15.1f} | {after * 1024 / 1e6:>14.1f} | {per[name]:>19.2f} |")
if "loopkv" in per and "redis-server" in per:
    print(f"\nloopkv / redis-server per connection: {per['loopkv'] / per['redis-server']:.2f} (target: at most 1)")
PY

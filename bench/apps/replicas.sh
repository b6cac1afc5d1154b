#!/usr/bin/env bash
# Committed app actions (or dry runs) on the embedded store, on one replica on Redis, or on two
# replicas sharing Redis (docs/bench.md, "Replicas on Redis"). Needs redis-server, redis-cli and
# wrk. Usage: bench/apps/replicas.sh embedded|redis1|redis2 [DRY=0|1]
# PALISADE: the binary (default target/release/palisade); OFFSET=1 gives the second replica its
# own sessions (sticky routing), OFFSET=0 the same ones as the first. CONNS: connections in all
# (default 64; CONNS=1 gives one action at a time, its latency uncontended).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=$1
dry=${2:-0}
bin=${PALISADE:-target/release/palisade}
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
store=()
if [ "$mode" != embedded ]; then
  mkdir -p "$work/redis"
  redis-server --port 16400 --bind 127.0.0.1 --dir "$work/redis" --appendonly yes \
    --appendfsync always --save '' >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do redis-cli -p 16400 ping >/dev/null 2>&1 && break; sleep 0.1; done
  store=(--store redis://127.0.0.1:16400/0)
fi
ports=(16401)
[ "$mode" = redis2 ] && ports+=(16402)
for port in "${ports[@]}"; do
  "$bin" serve --listen "127.0.0.1:$port" --data "$work/data-$port" "${store[@]}" \
    --replica "127.0.0.1:$port" 2>/dev/null &
  pids+=($!)
  for _ in $(seq 1 240); do curl -s -o /dev/null "127.0.0.1:$port/healthz" && break; sleep 0.5; done
done
python3 -c 'import json; print(json.dumps({"name": "counter", "policy": "default",
  "source": open("bench/apps/counter.js").read()}))' | curl -s -o /dev/null 127.0.0.1:16401/v1/apps -d @-
for port in "${ports[@]}"; do
  DRY=$dry wrk -t1 -c8 -d3s -s bench/apps/actions.lua "http://127.0.0.1:$port" >/dev/null
done
[ "$mode" != embedded ] && redis-cli -p 16400 config resetstat >/dev/null
if [ "$mode" = redis2 ]; then
  DRY=$dry OFFSET=0 wrk -t1 -c32 -d10s --latency -s bench/apps/actions.lua http://127.0.0.1:16401 >"$work/a.txt" &
  DRY=$dry OFFSET=${OFFSET:-1} wrk -t1 -c32 -d10s --latency -s bench/apps/actions.lua http://127.0.0.1:16402 >"$work/b.txt"
  wait %%
  grep -E "Requests/sec|50%|99%|requests in|Socket errors|Non-2xx" "$work/a.txt" "$work/b.txt"
else
  conns=${CONNS:-64}
  DRY=$dry wrk -t$((conns > 1 ? 2 : 1)) -c"$conns" -d10s --latency -s bench/apps/actions.lua http://127.0.0.1:16401 >"$work/a.txt"
  grep -E "Requests/sec|50%|99%|requests in|Socket errors|Non-2xx" "$work/a.txt"
fi
if [ "$mode" != embedded ]; then
  redis-cli -p 16400 info commandstats | grep -E "cmdstat_(evalsha|hget)" | cut -d, -f1
  redis-cli -p 16400 info stats | grep -E "total_commands_processed|total_connections_received"
fi

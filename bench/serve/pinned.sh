#!/usr/bin/env bash
# `palisade serve` against in-process w1, with and without CPU pinning (docs/bench.md). Run on a
# quiet machine from the repository's root, with a release build:
#   BIN=target/release/palisade bench/serve/pinned.sh [ROUNDS]
# Each round: in-process `bench --only w1`, then `POST /v1/run` w1 for 10 s with nothing pinned
# (wrk -t2), then the same with the server and the in-process bench on CPU 0 and wrk on CPU 1.
set -euo pipefail
BIN=${BIN:-target/release/palisade}
ROUNDS=${1:-3}
PORT=${PORT:-18787}
DATA=$(mktemp -d)
BODY=$(mktemp)
trap 'rm -rf "$DATA" "$BODY"' EXIT
bench/serve/w1-body.sh > "$BODY"
run() { # $1: prefix for the server and bench ("" or "taskset -c 0"), $2: wrk's prefix and threads
  $1 "$BIN" bench --only w1 2>&1 | grep -E '^throughput' || true
  rm -rf "$DATA"/*
  $1 "$BIN" serve --listen "127.0.0.1:$PORT" --data "$DATA" --max-sessions 100000 --max-concurrency 64 2>/dev/null &
  local server=$!
  sleep 2
  BODY="$BODY" $2 -c64 -d10s --latency -s bench/serve/run.lua "http://127.0.0.1:$PORT/v1/run" |
    grep -E 'Requests/sec|  50%|  99%'
  kill "$server"; wait "$server" 2>/dev/null || true
}
for i in $(seq "$ROUNDS"); do
  echo "== round $i, unpinned"; run "" "wrk -t2"
  echo "== round $i, server and bench on CPU 0, wrk on CPU 1"; run "taskset -c 0" "taskset -c 1 wrk -t1"
done

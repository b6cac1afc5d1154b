#!/usr/bin/env bash
# The floor under `palisade serve`'s throughput (docs/bench.md): in-process w1 beside three
# servers answering `POST /v1/run` w1 under wrk, each as a share of in-process:
#   spin     the smallest axum server, busy-waiting as long as one in-process call takes
#   library  the smallest axum server around the same library call (64 pool slots, as the server)
#   serve    `palisade serve`
# Pinned: every server and the in-process bench on CPU 0, wrk on CPU 1. Unpinned: nothing pinned
# (no spin server there: a wall-clock spin does not slow down when the CPUs are shared, as real
# work does). Run on a quiet machine from the repository's root, after
#   cargo build --release -p palisade-cli -p palisade --features palisade/serve --example serve_floor
# with:   bench/serve/floor.sh [ROUNDS]      (BIN and FLOOR name other binaries)
set -euo pipefail
shopt -s inherit_errexit
BIN=${BIN:-target/release/palisade}
FLOOR=${FLOOR:-target/release/examples/serve_floor}
ROUNDS=${1:-3}
PORT=${PORT:-18797}
DATA=$(mktemp -d)
BODY=$(mktemp)
trap 'rm -rf "$DATA" "$DATA.err" "$BODY"' EXIT
bench/serve/w1-body.sh > "$BODY"

inprocess() { # $1: prefix ("" or "taskset -c 0"); prints calls/s
  $1 "$BIN" bench --only w1 --calls 4000 --in-flight 0 --one-shot-runs 0 2>&1 |
    sed -n 's/^throughput: .*: \([0-9]*\) calls\/s.*/\1/p'
}
fail() { echo "floor.sh: $*" >&2; exit 1; }
wrk_rate() { # $1: wrk's prefix and threads; prints requests/s and p99
  local out
  out=$(BODY="$BODY" $1 -c64 -d8s --latency -s bench/serve/run.lua "http://127.0.0.1:$PORT/v1/run")
  grep -q 'non-2xx 0$' <<<"$out" || fail "answers other than 2xx: $(tail -1 <<<"$out")"
  awk '/Requests\/sec/ {r=$2} /^ +99%/ {p=$2} END {printf "%.0f (p99 %s)", r, p}' <<<"$out"
}
server() { # $1: pin prefix, $2: wrk prefix, rest: the server's command line. Called in $(…),
  # a subshell of its own: its EXIT trap stops the server however the subshell ends.
  local pin=$1 client=$2 answer=
  shift 2
  rm -rf "${DATA:?}"/*
  $pin "$@" 2>"$DATA.err" &
  PID=$!
  trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    kill -0 "$PID" 2>/dev/null || fail "$1 exited: $(cat "$DATA.err")"
    answer=$(curl -s -X POST -H 'content-type: application/json' --data-binary @"$BODY" \
      "http://127.0.0.1:$PORT/v1/run" || true)
    [ -n "$answer" ] && break
    sleep 0.1
  done
  grep -q '"ok":true' <<<"$answer" || fail "$1 did not run w1: $answer"
  wrk_rate "$client"
}
share() { python3 -c "import sys; print(f'{float(sys.argv[1].split()[0]) / float(sys.argv[2]):.1%}')" "$1" "$2"; }

for i in $(seq "$ROUNDS"); do
  one=$(inprocess "taskset -c 0")
  micros=$(python3 -c "print(round(1e6 / $one))")
  spin=$(server "taskset -c 0" "taskset -c 1 wrk -t1" "$FLOOR" "$PORT" spin "$micros")
  lib=$(server "taskset -c 0" "taskset -c 1 wrk -t1" "$FLOOR" "$PORT" library 64)
  srv=$(server "taskset -c 0" "taskset -c 1 wrk -t1" "$BIN" serve --listen "127.0.0.1:$PORT" --data "$DATA")
  echo "round $i, pinned:   in-process $one calls/s ($micros µs a call); spin $spin $(share "$spin" "$one"); library $lib $(share "$lib" "$one"); serve $srv $(share "$srv" "$one")"
  two=$(inprocess "")
  lib=$(server "" "wrk -t2" "$FLOOR" "$PORT" library 64)
  srv=$(server "" "wrk -t2" "$BIN" serve --listen "127.0.0.1:$PORT" --data "$DATA")
  echo "round $i, unpinned: in-process $two calls/s; library $lib $(share "$lib" "$two"); serve $srv $(share "$srv" "$two")"
done

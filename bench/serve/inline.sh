#!/usr/bin/env bash
# `POST /v1/run` w1 under a named policy against the same call with its policy sent inline
# (docs/bench.md, "Inline policies"). Run from the repository's root, with a build of the CLI:
#   BIN=target/release/palisade bench/serve/inline.sh [ROUNDS] [SECONDS]
# One server (`--inline-ceiling default`); each round runs wrk with the named body, then the
# inline one (the order alternates from round to round), and the medians are printed at the end:
# requests/s, and the server's CPU time per request (its utime + stime over the round, from
# /proc/PID/stat, divided by the round's requests), which the machine's other load moves less.
set -euo pipefail
BIN=${BIN:-target/release/palisade}
ROUNDS=${1:-5}
SECONDS_EACH=${2:-5}
PORT=${PORT:-18788}
DATA=$(mktemp -d)
NAMED=$(mktemp)
INLINE=$(mktemp)
LOG=$(mktemp)
trap 'rm -rf "$DATA" "$NAMED" "$INLINE" "$LOG"' EXIT
bench/serve/w1-body.sh > "$NAMED"
# The same limits as the built-in default: only where the policy comes from differs.
python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); b["policy"]={"description":"per-user","limits":{"timeout":"1s"}}; print(json.dumps(b))' "$NAMED" > "$INLINE"
"$BIN" serve --listen "127.0.0.1:$PORT" --data "$DATA" --inline-ceiling default 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$DATA" "$NAMED" "$INLINE" "$LOG"' EXIT
sleep 2
for body in "$NAMED" "$INLINE"; do # both answer 200 before anything is measured
  curl -sf "http://127.0.0.1:$PORT/v1/run" -d @"$body" > /dev/null
done
# The server's CPU time so far (user + system, all threads), in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
one() { # $1: label, $2: body
  local out rps requests before after
  before=$(ticks)
  out=$(BODY="$2" wrk -t2 -c64 -d"${SECONDS_EACH}s" --latency -s bench/serve/run.lua \
    "http://127.0.0.1:$PORT/v1/run")
  after=$(ticks)
  echo "$out" >&2
  rps=$(awk '/Requests\/sec/ {print $2}' <<< "$out")
  requests=$(awk '/requests in/ {print $1}' <<< "$out")
  echo "$1 $rps $((after - before)) $requests" >> "$LOG"
  echo "round $i $1: $rps requests/s, $((after - before)) ticks of server CPU for $requests requests"
}
for i in $(seq "$ROUNDS"); do
  if (( i % 2 )); then one named "$NAMED"; one inline "$INLINE"
  else one inline "$INLINE"; one named "$NAMED"; fi
done 2>/dev/null
python3 - "$LOG" <<'EOF'
import os, statistics, sys
tick = 1e6 / os.sysconf("SC_CLK_TCK")  # microseconds per clock tick
runs, cpu = {}, {}
for line in open(sys.argv[1]):
    label, rps, ticks, requests = line.split()
    runs.setdefault(label, []).append(float(rps))
    cpu.setdefault(label, []).append(int(ticks) * tick / int(requests))
named, inline = statistics.median(runs["named"]), statistics.median(runs["inline"])
print(f"median requests/s: named {named:,.0f}, inline {inline:,.0f} ({(inline / named - 1) * 100:+.1f}%)")
ratios = [i / n for n, i in zip(runs["named"], runs["inline"])]
print(f"median of each round's inline/named: {statistics.median(ratios):.3f}")
named, inline = statistics.median(cpu["named"]), statistics.median(cpu["inline"])
print(f"median server CPU per request: named {named:.1f} us, inline {inline:.1f} us ({(inline / named - 1) * 100:+.1f}%)")
ratios = [i / n for n, i in zip(cpu["named"], cpu["inline"])]
print(f"median of each round's inline/named server CPU per request: {statistics.median(ratios):.3f}")
EOF

#!/usr/bin/env bash
# What a third busy thread costs the Rust library's w1 throughput on this machine: in each
# round, the library's throughput (64 tasks on its runtime, one thread per CPU) alone and
# beside a thread that is busy $BUSY µs, then waits $IDLE µs, over and over, as a binding's
# caller thread does (Node's thread takes a batch of reports a few thousand times a second
# under w1 load, for 17–22% of a CPU; docs/bench.md, "What two CPUs show"). The two measures
# of a round run in turn, alone first in odd rounds. Prints each round's share of the
# library's throughput beside the thread, their median, and the CPU the thread's process used
# (its own CPU time over its wall time: the busy thread, and Node's own threads, mostly idle).
#
# Usage: [PROFILE=release] [ROUNDS=6] [CALLS=20000] [BUSY=100] [IDLE=400] bench/third-thread.sh
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
rounds=${ROUNDS:-6}
calls=${CALLS:-20000}
busy=${BUSY:-100}
idle=${IDLE:-400}
if [ "$profile" = release ]; then flag=--release; dir=release; else flag=; dir=debug; fi
cargo build --locked $flag -q -p palisade-cli

# The library's w1 calls/s with 64 tasks.
rate() {
  ./target/$dir/palisade bench --only w1 --throughput w1 --calls "$calls" --concurrency 64 \
    --in-flight 0 --one-shot-runs 0 | sed -n 's/^throughput: w1, .*: \([0-9.]*\) calls\/s.*/\1/p'
}
out=$(mktemp -d)
third_pid=
trap '[ -z "$third_pid" ] || kill "$third_pid" 2>/dev/null; rm -rf "$out"' EXIT
# The busy thread, until $out/stop exists: it then writes the share of a CPU its process used.
third() {
  node -e '
    const [busy, idle, stop] = [Number(process.argv[1]), Number(process.argv[2]), process.argv[3]]
    const cell = new Int32Array(new SharedArrayBuffer(4))
    const [started, cpu] = [performance.now(), process.cpuUsage()]
    for (let i = 0; i % 256 !== 0 || !require("fs").existsSync(stop); i++) {
      const from = performance.now()
      while (performance.now() - from < busy / 1000);
      Atomics.wait(cell, 0, 0, idle / 1000)
    }
    const used = process.cpuUsage(cpu)
    console.log((100 * (used.user + used.system) / 1000 / (performance.now() - started)).toFixed(0))' \
    "$busy" "$idle" "$out/stop"
}
# The library's rate beside the busy thread, into $with (in this shell, so that the EXIT trap
# stops the thread if the rate fails).
beside() {
  rm -f "$out/stop"
  third > "$out/cpu" &
  third_pid=$!
  with=$(rate)
  touch "$out/stop"
  wait "$third_pid"
  third_pid=
}
shares=()
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then
    alone=$(rate)
    beside
  else
    beside
    alone=$(rate)
  fi
  share=$(node -pe "(100 * $with / $alone).toFixed(0)")
  shares+=("$share")
  echo "round $round: alone $alone calls/s; beside a thread busy $busy µs in every $((busy + idle)) µs" \
    "($(cat "$out/cpu")% of a CPU) $with calls/s: $share%"
done
echo "median share beside the thread: $(printf '%s\n' "${shares[@]}" | sort -n |
  awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')%"

#!/usr/bin/env bash
# w1 and w2 from the Rust library (`palisade bench`), from Node (bindings/node/bench.js) and from
# Python (bindings/python/bench.py), one after the other in the same run on this machine: their
# medians, and the throughput of each $THROUGHPUT workload (64 in flight, and from $THREADS
# Python threads each calling `run`) beside the Rust library's with as many tasks; and w1 as a
# `palisade run` subprocess per call from Python (docs/bench.md, "The bindings").
#
# With PEERS=PATH (the peers' harness, ../shared/bench/peers, installed into $PEERS_DIR as its
# README says), the Node peers' fresh-context w1 and w2 run in the same session too.
#
# With ROUNDS=N, N paired rounds follow. In each, every binding's throughput of each
# $THROUGHPUT workload (a process of its own, that workload alone; its input given as a value,
# then as its JSON text as `palisade bench` gives it), and the bindings' core driven from a
# Rust thread (bindings/core/examples/drive.rs: the bindings' path without JavaScript or
# Python), each right after the Rust library's with as many tasks, and its share of that; then
# each share's median and range over the rounds. The machine's speed drifts by tens of percent
# within minutes, so a share of the run just before is the steady figure. Each round also gives
# the share of CPU time: the library's CPU µs a call (every thread of its process) over the
# binding's (every thread of its process: Node's or Python's own, the runtime's).
#
# With WORKERS=N, the library and the bindings each run N runtime threads (tokio's
# TOKIO_WORKER_THREADS; by default one per CPU). WORKERS=1 on a two-CPU machine leaves the
# second CPU to the binding's caller thread (Node's, an asyncio loop's), which with one
# runtime thread per CPU takes its time from the sandboxes' (docs/bench.md, "What two CPUs
# show"). Python's threads on `run` run their sandboxes themselves, whatever N.
#
# With NODE=PATH, the binding's Node measures run under that node (another version:
# docs/bench.md, "Node's version"); the peers and the script's own helpers run under the `node`
# on PATH.
#
# Usage: [PROFILE=release] [CALLS=2000] [THREADS=2,8] [THROUGHPUT=w1,w2] [PEERS=PATH] [ROUNDS=N]
#        [WORKERS=N] [NODE=PATH] bench/bindings.sh
# PROFILE is the cargo profile of all three (dev or release); the bindings' tools come from
# scripts/setup.sh (bindings/node/node_modules, target/python-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
profile=${PROFILE:-release}
calls=${CALLS:-2000}
threads=${THREADS:-2,8}
throughput=${THROUGHPUT:-w1,w2}
venv=target/python-venv
node_bin=${NODE:-node}
# Node's measures run from bindings/node: a path given relative to here is made absolute.
if [[ "$node_bin" == */* ]]; then node_bin=$(realpath "$node_bin"); fi
if [ "$profile" = release ]; then flag=--release; dir=release; else flag=; dir=debug; fi
if [ -n "${WORKERS:-}" ]; then export TOKIO_WORKER_THREADS=$WORKERS; fi

cargo build --locked $flag -q -p palisade-cli -p palisade-node
cargo build --locked $flag -q -p palisade-bindings --example drive
cp "target/$dir/libpalisade_node.so" bindings/node/palisade.node
(cd bindings/python && VIRTUAL_ENV="$PWD/../../$venv" "../../$venv/bin/maturin" develop --locked -q $flag >&2)

out=$(mktemp -d)
echo "bindings: rust" >&2
./target/$dir/palisade bench --only w1,w2 --throughput "$throughput" --calls "$calls" --in-flight 0 \
  --one-shot-runs 0 > "$out/rust.md"
echo "bindings: node" >&2
(cd bindings/node && "$node_bin" bench.js --calls "$calls" --throughput "$throughput") > "$out/bindings.jsonl"
echo "bindings: python" >&2
(cd bindings/python && "../../$venv/bin/python" bench.py --calls "$calls" --threads "$threads" \
  --throughput "$throughput" --palisade "$root/target/$dir/palisade") >> "$out/bindings.jsonl"
# The Rust library's throughput of workload $1 alone (calls/s) with $2 tasks, $3 calls a round
# ($calls unless told), then its CPU µs a call.
rust_rate() {
  ./target/$dir/palisade bench --only "$1" --throughput "$1" --calls "${3:-$calls}" --concurrency "$2" \
    --in-flight 0 --one-shot-runs 0 |
    sed -n 's/^throughput: '"$1"', .*: \([0-9.]*\) calls\/s, \([0-9.]*\) CPU µs a call.*/\1\t\2/p'
}
# Each workload alone, as the bindings measure it (the table above runs w1's 64 tasks after w2,
# in slots w2 has dirtied), with 64 tasks and with as many as Python's threads.
for w in ${throughput//,/ }; do
  for n in 64 ${threads//,/ }; do
    echo "bindings: rust, $w, $n tasks" >&2
    rust_rate "$w" "$n" |
      node -pe 'const [rate, cpu] = require("fs").readFileSync(0, "utf8").split("\t").map(Number)
        JSON.stringify({ binding: `rust library, '"$n"' tasks`, workload: "'"$w"'",
          throughput_calls_per_s: rate, cpu_us_per_call: cpu, in_flight: '"$n"' })' \
      >> "$out/bindings.jsonl"
  done
done

if [ -n "${PEERS:-}" ]; then
  for peer in qjs sw-quickjs ivm; do
    for w in w1 w2; do
      echo "bindings: peer $peer $w" >&2
      (cd "$PEERS" && node bench.mjs --peer "$peer" --workload "$w" --mode fresh --n "$calls") |
        node -pe 'const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
          JSON.stringify({ binding: `node peer: ${r.peer} ${r.version}`, workload: r.workload,
            median_us: r.median_us, p99_us: r.p99_us })' >> "$out/bindings.jsonl"
    done
  done
fi

echo "## Rust library (\`palisade bench --only w1,w2\`, $profile)"
echo
cat "$out/rust.md"
echo
echo "## Node and Python ($profile)"
echo
echo "| binding | workload | median µs | p99 µs | calls/s one at a time | calls/s (in flight) | CPU µs per call |"
echo "|---|---|---|---|---|---|---|"
node -e '
  const fixed = (x, d) => (x === undefined ? "" : x.toFixed(d))
  for (const line of require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")) {
    const r = JSON.parse(line)
    const t = r.throughput_calls_per_s ? `${r.throughput_calls_per_s.toFixed(0)} (${r.in_flight})` : ""
    const once = r.median_us ? (1e6 / r.median_us).toFixed(0) : ""
    console.log(`| ${r.binding} | ${r.workload} | ${fixed(r.median_us, 1)} | ${fixed(r.p99_us, 1)} | ${once} | ${t} | ${fixed(r.cpu_us_per_call, 1)} |`)
  }' "$out/bindings.jsonl"

[ "${ROUNDS:-0}" -gt 0 ] || exit 0
# A binding's throughput (calls/s) and CPU µs a call, from the last line of its bench.
rate() {
  node -pe 'const r = JSON.parse(require("fs").readFileSync(0, "utf8").trim().split("\n").pop());
    `${r.throughput_calls_per_s}\t${r.cpu_us_per_call}`'
}
: > "$out/rounds.tsv"
for round in $(seq "$ROUNDS"); do
  echo "bindings: paired round $round" >&2
  # A round's pair: its name, the library's rate and CPU, then the binding's. A measure that
  # failed (no rate, or no CPU) stops the run.
  pair() {
    for measure in "$2" "$3"; do
      if ! [[ "$measure" =~ ^[0-9.]+$'\t'[0-9.]+$ ]]; then
        echo "bindings: $1: no calls/s and CPU µs in '$measure'" >&2
        exit 1
      fi
    done
    printf '%s\t%s\t%s\t%s\n' "$round" "$1" "$2" "$3" >> "$out/rounds.tsv"
  }
  for w in ${throughput//,/ }; do
    # w1's calls are some 25 times shorter than w2's: five times as many keep each measure
    # over a second, longer than most of the machine's swings.
    n_calls=$calls
    [ "$w" = w1 ] && n_calls=$((calls * 5))
    # The bindings' core alone, driven from a Rust thread (bindings/core/examples/drive.rs).
    rust=$(rust_rate "$w" 64 "$n_calls")
    pair "$w: the bindings' core from a Rust thread, 64 in flight, input as JSON text" "$rust" \
      "$(./target/$dir/examples/drive "$w" $((n_calls * 5)) | rate)"
    # The input as a value, then as its JSON text (as the library is given it).
    for given in "" --input-json; do
      as=${given:+, input as JSON text}
      py=(bench.py --calls "$n_calls" --only "$w" --throughput "$w" $given)
      rust=$(rust_rate "$w" 64 "$n_calls")
      pair "$w: Node, 64 in flight$as" "$rust" \
        "$(cd bindings/node && "$node_bin" bench.js --calls "$n_calls" --only "$w" --throughput "$w" $given | rate)"
      rust=$(rust_rate "$w" 64 "$n_calls")
      pair "$w: Python run_async, 64 in flight$as" "$rust" \
        "$(cd bindings/python && "../../$venv/bin/python" "${py[@]}" --threads "" | rate)"
      for n in ${threads//,/ }; do
        rust=$(rust_rate "$w" "$n" "$n_calls")
        pair "$w: Python, $n threads on run$as" "$rust" \
          "$(cd bindings/python && "../../$venv/bin/python" "${py[@]}" --concurrency 0 --threads "$n" | rate)"
      done
    done
  done
done
echo
workers=${WORKERS:+, $WORKERS runtime threads}
echo "## Paired rounds ($ROUNDS$workers, calls/s, each right after the Rust library's with as many tasks)"
echo
echo "The CPU share is the library's CPU µs a call over the binding's, every thread of each process."
echo
echo "| binding | share of Rust's: median | range | CPU share: median | range | binding calls/s: median | Rust calls/s: range |"
echo "|---|---|---|---|---|---|---|"
node -e '
  // Each row: round, name, Rust calls/s, Rust CPU µs, binding calls/s, binding CPU µs.
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => l.split("\t"))
  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
  const spread = (xs) => `${median(xs).toFixed(0)}% | ${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}%`
  for (const name of [...new Set(rows.map((r) => r[1]))]) {
    const mine = rows.filter((r) => r[1] === name).map((r) => r.slice(2).map(Number))
    const shares = mine.map(([rust, , binding]) => (100 * binding) / rust)
    const cpu = mine.map(([, rust, , binding]) => (100 * rust) / binding)
    const rust = mine.map(([rate]) => rate)
    console.log(`| ${name} | ${spread(shares)} | ${spread(cpu)} | ` +
      `${median(mine.map((r) => r[2])).toFixed(0)} | ${Math.min(...rust).toFixed(0)}-${Math.max(...rust).toFixed(0)} |`)
  }' "$out/rounds.tsv"

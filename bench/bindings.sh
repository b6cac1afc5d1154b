#!/usr/bin/env bash
# w1 and w2 from the Rust library (`palisade bench`), from Node (bindings/node/bench.js) and from
# Python (bindings/python/bench.py), one after the other in the same run on this machine; and
# w1 as a `palisade run` subprocess per call from Python (docs/bench.md, "The bindings").
#
# With PEERS=PATH (the peers' harness, ../shared/bench/peers, installed into $PEERS_DIR as its
# README says), the Node peers' fresh-context w1 and w2 run in the same session too.
#
# Usage: [PROFILE=release] [CALLS=2000] [PEERS=PATH] bench/bindings.sh
# PROFILE is the cargo profile of all three (dev or release); the bindings' tools come from
# scripts/setup.sh (bindings/node/node_modules, target/python-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
profile=${PROFILE:-release}
calls=${CALLS:-2000}
venv=target/python-venv
if [ "$profile" = release ]; then flag=--release; dir=release; else flag=; dir=debug; fi

cargo build --locked $flag -q -p palisade-cli -p palisade-node
cp "target/$dir/libpalisade_node.so" bindings/node/palisade.node
(cd bindings/python && VIRTUAL_ENV="$PWD/../../$venv" "../../$venv/bin/maturin" develop --locked -q $flag >&2)

out=$(mktemp -d)
echo "bindings: rust" >&2
./target/$dir/palisade bench --only w1,w2 --calls "$calls" --in-flight 0 --one-shot-runs 0 > "$out/rust.md"
echo "bindings: node" >&2
(cd bindings/node && node bench.js --calls "$calls") > "$out/bindings.jsonl"
echo "bindings: python" >&2
(cd bindings/python && "../../$venv/bin/python" bench.py --calls "$calls" \
  --palisade "$root/target/$dir/palisade") >> "$out/bindings.jsonl"

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
echo "| binding | workload | median µs | p99 µs | calls/s one at a time | w1 calls/s, 64 in flight |"
echo "|---|---|---|---|---|---|"
node -e '
  for (const line of require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")) {
    const r = JSON.parse(line)
    const t = r.throughput_calls_per_s ? r.throughput_calls_per_s.toFixed(0) : ""
    console.log(`| ${r.binding} | ${r.workload} | ${r.median_us.toFixed(1)} | ${r.p99_us.toFixed(1)} | ${(1e6 / r.median_us).toFixed(0)} | ${t} |`)
  }' "$out/bindings.jsonl"

#!/usr/bin/env bash
# Palisade beside its peers (quickjs-emscripten, @sebastianwessel/quickjs, isolated-vm) on the
# same four workloads, fresh context per call, measured in one run on this machine.
#
# Usage: bench/compare.sh [PATH_TO_PEERS_HARNESS]   (default: ../shared/bench/peers)
# Needs node and npm; the peers are installed into $PEERS_DIR (default: $TMPDIR/palisade-peers).
set -euo pipefail
cd "$(dirname "$0")/.."
harness=$(realpath "${1:-../shared/bench/peers}")
export PEERS_DIR=${PEERS_DIR:-$(node -p "require('os').tmpdir()")/palisade-peers}
calls=${CALLS:-2000}

if [ ! -d "$PEERS_DIR/node_modules/isolated-vm" ]; then
  echo "compare: installing the peers into $PEERS_DIR" >&2
  mkdir -p "$PEERS_DIR"
  (cd "$PEERS_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund quickjs-emscripten@0.32.0 @sebastianwessel/quickjs@3.1.0 \
      @jitl/quickjs-ng-wasmfile-release-sync@0.32.0 isolated-vm@5.0.4 >&2)
fi

cargo build --release --locked -q -p palisade
out=$(mktemp -d)
echo "compare: palisade" >&2
./target/release/palisade bench --calls "$calls" > "$out/palisade.md"
./target/release/palisade bench --calls "$calls" --precompile --only w1,w2,w4 --in-flight 0 --one-shot-runs 0 > "$out/palisade-precompiled.md"
./target/release/palisade bench --calls "$calls" --compiled --in-flight 0 --one-shot-runs 0 > "$out/palisade-compiled.md"
./target/release/palisade bench --calls "$calls" --no-fuel --only w2,w3 --in-flight 0 --one-shot-runs 0 > "$out/palisade-no-fuel.md"
for peer in qjs sw-quickjs ivm; do
  for w in w1 w2 w3 w4; do
    n=$calls; [ "$w" = w3 ] && n=$((calls / 10))
    echo "compare: $peer $w" >&2
    (cd "$harness" && node bench.mjs --peer "$peer" --workload "$w" --mode fresh --n "$n" --warmup $((n / 10))) \
      >> "$out/peers.jsonl" || echo "compare: $peer $w failed" >&2
  done
done

echo "## Palisade (fresh sandbox per call)"
cat "$out/palisade.md"
echo
echo "## Palisade, scripts precompiled to bytecode"
cat "$out/palisade-precompiled.md"
echo
echo "## Palisade, scripts compiled into components (palisade compile)"
cat "$out/palisade-compiled.md"
echo
echo "## Palisade without fuel metering (what metering costs)"
cat "$out/palisade-no-fuel.md"
echo
echo "## Peers (fresh context per call)"
echo
echo "| peer | workload | calls | median µs | p99 µs | calls/s |"
echo "|---|---|---|---|---|---|"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  for (const l of lines) {
    const r = JSON.parse(l);
    console.log(`| ${r.peer} | ${r.workload} | ${r.n} | ${r.median_us.toFixed(1)} | ${r.p99_us.toFixed(1)} | ${r.calls_per_s.toFixed(0)} |`);
  }' "$out/peers.jsonl"

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
# Palisade's own runs report each workload's fastest of this many rounds.
bench_rounds=${BENCH_ROUNDS:-3}

if [ ! -d "$PEERS_DIR/node_modules/isolated-vm" ]; then
  echo "compare: installing the peers into $PEERS_DIR" >&2
  mkdir -p "$PEERS_DIR"
  (cd "$PEERS_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund quickjs-emscripten@0.32.0 @sebastianwessel/quickjs@3.1.0 \
      @jitl/quickjs-ng-wasmfile-release-sync@0.32.0 isolated-vm@5.0.4 >&2)
fi

cargo build --release --locked -q -p palisade-cli
out=$(mktemp -d)
echo "compare: palisade" >&2
# The three forms of each workload run one after the other in every round (and w3 also without
# fuel metering, right after the metered run), so that they are compared in the same minutes.
./target/release/palisade bench --calls "$calls" --rounds "$bench_rounds" \
  --variants source,precompiled,compiled > "$out/palisade.md"
# This machine's speed drifts by up to 2× over minutes, so the w3 comparison with
# quickjs-emscripten is also made in alternating rounds, each pair a few seconds apart.
rounds=${ROUNDS:-5}
for round in $(seq "$rounds"); do
  echo "compare: w3 round $round of $rounds" >&2
  p=$(./target/release/palisade bench --calls 500 --only w3 --in-flight 0 --one-shot-runs 0 |
    awk -F'|' '$2 == " w3 " { gsub(/ /, "", $4); print $4 }')
  q=$(cd "$harness" && node bench.mjs --peer qjs --workload w3 --mode fresh --n 50 --warmup 5 |
    node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).median_us.toFixed(1)')
  if [ -z "$p" ] || [ -z "$q" ]; then echo "compare: w3 round $round failed" >&2; continue; fi
  echo "| $round | $p | $q | $(node -pe "($p / $q).toFixed(2)") |" >> "$out/w3-rounds.md"
done
for peer in qjs sw-quickjs ivm; do
  for w in w1 w2 w3 w4; do
    n=$calls; [ "$w" = w3 ] && n=$((calls / 10))
    echo "compare: $peer $w" >&2
    (cd "$harness" && node bench.mjs --peer "$peer" --workload "$w" --mode fresh --n "$n" --warmup $((n / 10))) \
      >> "$out/peers.jsonl" || echo "compare: $peer $w failed" >&2
  done
done

echo "## Palisade (fresh sandbox per call; source, precompiled and compiled scripts in the same rounds)"
echo
cat "$out/palisade.md"
echo
echo "## fib(25) (w3), Palisade and quickjs-emscripten in alternating rounds (medians, µs)"
echo
echo "| round | Palisade | quickjs-emscripten | ratio |"
echo "|---|---|---|---|"
cat "$out/w3-rounds.md"
awk -F'|' '{ p = $3 + 0; q = $4 + 0; if (!bp || p < bp) bp = p; if (!bq || q < bq) bq = q }
  END { if (bp && bq) printf "\nFastest round of each: Palisade %.1f µs, quickjs-emscripten %.1f µs, ratio %.2f\n", bp, bq, bp / bq }' \
  "$out/w3-rounds.md"
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

'use strict'
// w1 and w2 from Node, measured as `palisade bench` measures the Rust library: the workload's
// module and input from bench/workloads/, a fresh sandbox per call, the output checked; the
// median of sequential calls, then the throughput of the `--throughput` workloads (w1 unless
// told) with many calls in flight and the process's CPU time per call. One JSON line per
// workload (bench/bindings.sh puts them beside `palisade bench`). With `--input-json`, each call
// gives the input as its JSON text (`inputJson`), as `palisade bench` gives it to the library.
//
// Usage: node bench.js [--calls N] [--concurrency N] [--only w1] [--throughput w1,w2] [--input-json]

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Palisade, Policy, Script } = require('.')

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(args[i + 1])
}
const calls = option('calls', 2000)
const concurrency = option('concurrency', 64)
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined
const throughputOf = args.includes('--throughput') ? args[args.indexOf('--throughput') + 1].split(',') : ['w1']
const asText = args.includes('--input-json')
const dir = path.join(__dirname, '../../bench/workloads')
// The policy `palisade bench` runs the workloads under (cli/src/bench.rs).
const policy = new Policy('name = "bench"\n[limits]\nfuel = 10_000_000_000\ntimeout = "10s"\nmemory = "64MiB"\n')

function load (name) {
  const read = (suffix) => fs.readFileSync(path.join(dir, `${name}.${suffix}`), 'utf8')
  const source = `${read('main.js')}\nexport default (input) => main(input);\n`
  const text = read('input.json')
  return {
    name,
    script: Script.fromSource(source, `${name}.js`),
    given: asText ? { inputJson: text } : { input: JSON.parse(text) },
    expected: JSON.parse(read('expected.json'))
  }
}

async function call (palisade, workload) {
  const outcome = await palisade.run({ policy, script: workload.script, ...workload.given })
  if (!outcome.ok) throw new Error(`${workload.name}: ${outcome.error.code}: ${outcome.error.message}`)
  return outcome.output
}

async function sequential (palisade, workload) {
  const warmup = Math.max(Math.floor(calls / 10), 5)
  const times = []
  for (let i = 0; i < warmup + calls; i++) {
    const started = process.hrtime.bigint()
    const output = await call(palisade, workload)
    const elapsed = Number(process.hrtime.bigint() - started) / 1000
    if (i === 0) assert.deepEqual(output, workload.expected)
    if (i >= warmup) times.push(elapsed)
  }
  times.sort((a, b) => a - b)
  return { median_us: times[Math.floor(times.length / 2)], p99_us: times[Math.floor(times.length * 0.99)] }
}

async function throughput (palisade, workload) {
  const total = calls * 5
  const perTask = Math.floor(total / concurrency)
  const cpu = process.cpuUsage()
  const started = process.hrtime.bigint()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = 0; i < perTask; i++) await call(palisade, workload)
  }))
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const used = process.cpuUsage(cpu)
  return {
    throughput_calls_per_s: (perTask * concurrency) / seconds,
    cpu_us_per_call: (used.user + used.system) / (perTask * concurrency),
    in_flight: concurrency
  }
}

async function main () {
  const palisade = new Palisade({ maxConcurrency: concurrency })
  for (const name of ['w1', 'w2'].filter((name) => only === undefined || name === only)) {
    const workload = load(name)
    const measured = await sequential(palisade, workload)
    const line = { binding: asText ? 'node, input as JSON text' : 'node', workload: name, calls, ...measured }
    if (throughputOf.includes(name)) Object.assign(line, await throughput(palisade, workload))
    console.log(JSON.stringify(line))
  }
}

main().catch((e) => { console.error(e); process.exit(1) })

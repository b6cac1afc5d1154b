// @ts-check
// Running scripts: the smallest call, the ways to give a policy and a script, per-call
// options, and calls that never block the event loop.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { Palisade, Policy, Script } = require('..')
const { ROOT, GENEROUS, output, failure, assertNextCallWorks } = require('./support.js')

const palisade = new Palisade()

test('the smallest call runs under the built-in default policy', async () => {
  const outcome = await new Palisade().run({ source: 'export default (x) => x.n * 2', input: { n: 21 } })
  assert.equal(output(outcome), 42)
  assert.equal(outcome.receipt.policy, 'default')
  assert.ok(outcome.receipt.fuel_used > 0)
  assert.deepEqual(outcome.logs, [])
})

test('an Outcome reads its logs, audit and receipt when asked, and writes every field as JSON', async () => {
  const util = require('node:util')
  const ok = await palisade.run({ source: 'export default (x) => { console.log("hi"); return { a: x } }', input: 1 })
  assert.deepEqual(Object.keys(ok), ['ok', 'output'])
  assert.deepEqual(ok.logs, [{ level: 'log', message: 'hi' }])
  assert.equal(ok.logs, ok.logs, 'read once, then the same array')
  assert.deepEqual(ok.audit, [])
  assert.equal(ok.receipt.policy, 'default')
  const json = JSON.parse(JSON.stringify(ok))
  assert.deepEqual(Object.keys(json), ['ok', 'output', 'logs', 'audit', 'receipt'])
  assert.deepEqual(json, { ok: true, output: { a: 1 }, logs: ok.logs, audit: [], receipt: ok.receipt })
  assert.equal(Object.getPrototypeOf(ok.toJSON()), Object.prototype)
  assert.match(util.inspect(ok), /^Outcome \{[^]*receipt: \{[^]*policy: 'default'/)
  ok.logs = []
  assert.deepEqual(ok.toJSON().logs, [], 'set like a field')

  const failed = await palisade.run({ source: 'export default () => { console.log("bye"); throw new Error("no") }' })
  assert.deepEqual(Object.keys(failed), ['ok', 'error'])
  assert.equal(failure(failed).code, 'guest_exception')
  assert.deepEqual(failed.logs, [{ level: 'log', message: 'bye' }])
  assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(failed))), ['ok', 'error', 'logs', 'audit', 'receipt'])

  // Many reports come in one batch, of every kind: outputs, errors, events and the callers'
  // mistakes. Each outcome has its own call's logs.
  const source = 'export default (x) => { console.log(String(x)); if (x % 4 === 1) throw new Error(String(x)); return x }'
  const events = new Map()
  const many = await Promise.all(Array.from({ length: 96 }, (_, i) => {
    // @ts-expect-error: the caller's mistake, an unknown key
    if (i % 4 === 3) return palisade.run({ source, input: i, unknown: true }).catch((e) => e)
    const onEvent = i % 4 === 2 ? (/** @type {any} */ e) => events.set(i, e.message) : undefined
    return palisade.run({ source, input: i, onEvent })
  }))
  many.forEach((outcome, i) => {
    if (i % 4 === 3) return assert.ok(outcome instanceof TypeError, `call ${i}: ${outcome}`)
    if (i % 4 === 1) assert.equal(failure(outcome).message, `uncaught Error: ${i}`)
    else assert.equal(output(outcome), i)
    assert.deepEqual(outcome.logs, [{ level: 'log', message: String(i) }], `call ${i}`)
    if (i % 4 === 2) assert.equal(events.get(i), String(i))
  })
})

test('each Outcome holds its own rest only: the others are collected, the one kept reads its own logs', async () => {
  require('node:v8').setFlagsFromString('--expose-gc')
  const gc = require('node:vm').runInNewContext('gc')
  const source = 'export default (x) => { console.log("line " + x); return x }'
  const collected = new Set()
  const registry = new FinalizationRegistry((/** @type {number} */ i) => collected.add(i))
  const kept = await (async () => {
    // Reports of every kind among the 64 calls: outputs, an event and the caller's mistake
    // (which carry no rest), a call cancelled before it starts.
    const calls = Array.from({ length: 64 }, (_, i) => {
      // @ts-expect-error: the caller's mistake, an unknown key
      if (i === 10) return palisade.run({ source, input: i, unknown: true }).catch((e) => e)
      const onEvent = i === 20 ? () => {} : undefined
      return palisade.run({ source, input: i, onEvent, signal: i === 30 ? AbortSignal.abort() : undefined })
    })
    const all = await Promise.all(calls)
    assert.ok(all[10] instanceof TypeError)
    assert.equal(failure(all[30]).code, 'cancelled')
    assert.deepEqual(all[36].logs, [{ level: 'log', message: 'line 36' }])
    all.forEach((outcome, i) => { if (i !== 37) registry.register(outcome, i) })
    return all[37]
  })()
  for (let i = 0; i < 10 && collected.size < 63; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  assert.equal(collected.size, 63, 'the other Outcomes of the 64 calls were collected')
  assert.deepEqual(kept.logs, [{ level: 'log', message: 'line 37' }])
  assert.equal(kept.receipt.policy, 'default')
  assert.equal(kept.logs, kept.logs, 'read once, then the same array')
})

test('Policies and Scripts of a worker thread and of the main thread each name their own', async () => {
  const { Worker } = require('node:worker_threads')
  // Made before any of the worker's: were the threads' keys one map, the worker's 400 (keys
  // given from 1 in each thread) would take these keys over.
  const policy = new Policy({ name: 'on-main' })
  const script = Script.fromSource('export default () => "main"')
  const inWorker = `
    const { parentPort } = require('node:worker_threads')
    const { Palisade, Policy, Script } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const made = Array.from({ length: 200 }, (_, i) =>
      [new Policy({ name: 'w' + i }), Script.fromSource('export default () => "w' + i + '"')])
    parentPort.postMessage('made')
    const palisade = new Palisade()
    Promise.all(made.map(([policy, script]) => palisade.run({ policy, script })))
      .then((outcomes) => parentPort.postMessage(outcomes.map((o) => [o.output, o.receipt.policy])))
  `
  const worker = new Worker(inWorker, { eval: true })
  const theirs = new Promise((resolve, reject) => {
    worker.on('message', (message) => { if (message !== 'made') resolve(message) })
    worker.once('error', reject)
  })
  await new Promise((resolve) => worker.once('message', resolve))
  // The worker's calls run now: these run beside them.
  const ours = await Promise.all(Array.from({ length: 20 }, () => palisade.run({ policy, script })))
  const all = /** @type {[string, string][]} */ (await theirs)
  await worker.terminate()
  all.forEach(([out, name], i) => assert.deepEqual([out, name], [`w${i}`, `w${i}`]))
  ours.forEach((outcome) => assert.deepEqual([output(outcome), outcome.receipt.policy], ['main', 'on-main']))
})

test('a policy from a path, TOML text, a table or a Policy', async () => {
  const source = 'export default () => 1'
  const file = path.join(ROOT, 'policies/deterministic-action.toml')
  const named = [
    [file, 'deterministic-action'],
    ['name = "toml"\n[limits]\ntimeout = "30s"', 'toml'],
    [{ name: 'table', limits: { timeout: '30s' } }, 'table'],
    [new Policy(file), 'deterministic-action']
  ]
  for (const [policy, name] of named) {
    const outcome = await palisade.run({ policy, source })
    assert.equal(output(outcome), 1)
    assert.equal(outcome.receipt.policy, name)
  }
  assert.equal(new Policy({ name: 'p' }).name, 'p')
  assert.match(new Policy({ name: 'p' }).sha256, /^[0-9a-f]{64}$/)
})

test('a script from source, a file or a Script; a named export; several arguments', async () => {
  const hello = path.join(ROOT, 'examples/hello.js')
  const fromFile = await palisade.run({ file: hello, input: { name: 'Ada' }, policy: GENEROUS })
  const fromScript = await palisade.run({ script: Script.fromFile(hello), input: { name: 'Ada' }, policy: GENEROUS })
  assert.deepEqual(output(fromScript), output(fromFile))
  const module = 'export const add = (a, b) => a + b; export default () => 0'
  const script = Script.fromSource(module, 'add.js')
  assert.equal(script.name, 'add.js')
  assert.equal(output(await palisade.run({ script, export: 'add', args: [2, 3], policy: GENEROUS })), 5)
})

test('options lower the limits; one above the policy is policy_denied with the fix', async () => {
  const error = failure(await palisade.run({ source: 'export default () => 1', timeout: '5s' }))
  assert.equal(error.code, 'policy_denied')
  assert.deepEqual(error.fix, { key: 'limits.timeout', value: '"5s"' })
  assert.match(error.fix_note, /limits\.timeout = "5s"/)
  const clock = 'export default () => new Date().toISOString()'
  const fixed = '[overrides]\nnow = true\n[limits]\ntimeout = "30s"'
  const now = new Date('2030-01-02T03:04:05Z')
  assert.equal(output(await palisade.run({ source: clock, policy: fixed, now })), '2030-01-02T03:04:05.000Z')
})

test('a malformed request rejects with a TypeError; the next call works', async () => {
  // @ts-expect-error: an unknown key
  await assert.rejects(palisade.run({ source: 'x', sauce: 1 }), TypeError)
  await assert.rejects(palisade.run({ input: 1 }), /give the script/)
  // @ts-expect-error: run() takes an object
  await assert.rejects(palisade.run('export default 1'), TypeError)
  // A request with no JSON form is refused, not run without its keys.
  // @ts-expect-error: an unknown key
  await assert.rejects(palisade.run({ source: 'export default 1', toJSON: () => undefined }),
    { name: 'TypeError', message: 'run(): the request has no JSON form (its toJSON returns undefined)' })
  // A lone surrogate is not text: refused saying so (the input alone passes through).
  await assert.rejects(palisade.run({ source: 'export default () => "\ud800"' }),
    { name: 'TypeError', message: /lone UTF-16 surrogate/ })
  assert.equal(output(await palisade.run({ source: 'export default (x) => x.length', input: '\ud800' })), 1)
  // So is a script's source or name read once (it would have become U+FFFD unseen).
  const made = { source: () => Script.fromSource('export default () => "\udfff"'), name: () => Script.fromSource('export default 1', 'a\ud800.js') }
  for (const [what, make] of Object.entries(made)) {
    assert.throws(make, {
      name: 'TypeError',
      message: `Script.fromSource(): \`${what}\` holds a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its pair), which is not text; \`s.toWellFormed()\` replaces it`
    })
  }
  assert.equal(output(await palisade.run({ script: Script.fromSource('export default () => "\ud83d\ude00".length', 'b.js') })), 2)
  assert.equal(output(await palisade.run({ source: 'export default () => 2', policy: GENEROUS })), 2)
  // A Policy or Script not made by its constructor names no policy or script: it is refused,
  // never run under the default policy instead.
  await assert.rejects(palisade.run({ source: 'export default 1', policy: Object.create(Policy.prototype) }),
    { name: 'TypeError', message: 'run(): `policy` was not made by its constructor' })
  await assert.rejects(palisade.run({ script: Object.create(Script.prototype) }),
    { name: 'TypeError', message: 'run(): `script` was not made by its constructor' })
  // A Policy spread, or posted to another thread, is an empty table: refused, never run under
  // an empty policy.
  await assert.rejects(palisade.run({ source: 'export default 1', policy: { ...new Policy({ name: 'p' }) } }),
    { name: 'TypeError', message: /^run\(\): `policy` is an empty table/ })
  assert.equal(output(await palisade.run({ script: Script.fromSource('export default () => 3'), policy: new Policy(GENEROUS) })), 3)
})

test('an input given as JSON text reaches the script as the same value', async () => {
  const source = 'export default (x) => JSON.stringify(x)'
  const value = { n: [1, 2.5, -3e-7], s: 'é\n"\ud83d\ude00', t: true, z: null, o: { deep: [[{}]] } }
  const text = JSON.stringify(value)
  assert.equal(output(await palisade.run({ source, inputJson: text })), text)
  assert.equal(output(await palisade.run({ source, input: value })), text)
  // A value JSON.stringify leaves out, as no input at all: null.
  // @ts-expect-error: a function is no JSON value
  assert.equal(output(await palisade.run({ source, input: () => 1 })), 'null')
  // Text that is not JSON, or over the policy's input limit, ends the call as the library's
  // own error; the next call works.
  const broken = failure(await palisade.run({ source, inputJson: '{"n": ' }))
  assert.equal(broken.code, 'invalid_input')
  assert.match(broken.message, /line 1/)
  const small = '[limits]\ninput = "1KiB"\ntimeout = "30s"'
  const over = failure(await palisade.run({ source, inputJson: `"${'x'.repeat(2000)}"`, policy: small }))
  assert.equal(over.code, 'invalid_input')
  assert.deepEqual(over.fix, { key: 'limits.input', value: '"2KiB"' })
  // The caller's mistakes: both forms, text that is not a string, and the input beside `args`.
  await assert.rejects(palisade.run({ source, input: 1, inputJson: '1' }),
    { name: 'TypeError', message: 'run(): give `input` or `inputJson`, not both' })
  // @ts-expect-error: inputJson is a string
  await assert.rejects(palisade.run({ source, inputJson: { n: 1 } }),
    { name: 'TypeError', message: 'run(): `inputJson` is JSON text (a string)' })
  await assert.rejects(palisade.run({ source, inputJson: '1', args: [1] }),
    { name: 'TypeError', message: 'run(): give `input` or `args`, not both' })
  await assert.rejects(palisade.run({ source, inputJson: '"\ud800"' }),
    { name: 'TypeError', message: 'run(): `inputJson` holds a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its pair), which is not text; `s.toWellFormed()` replaces it' })
  // A null of either is as absent.
  assert.equal(output(await palisade.run({ source, input: null, inputJson: '[1]' })), '[1]')
  // @ts-expect-error: inputJson is a string, or left out
  assert.equal(output(await palisade.run({ source, input: 2, inputJson: null })), '2')
  const add = 'export default (a, b) => a + b'
  assert.equal(output(await palisade.run({ source: add, input: null, args: [2, 3] })), 5)
  await assertNextCallWorks(palisade)
})

test('100 calls at once never block the event loop', async () => {
  // A timer counts its ticks while calls are still running; a loop blocked by the calls would
  // count none before the last one ended.
  let pending = 100
  let ticksWhileRunning = 0
  const timer = setInterval(() => { if (pending > 0) ticksWhileRunning++ }, 1)
  const loop = 'export default (n) => { let s = 0; for (let i = 0; i < 200000; i++) s += i % 7; return n }'
  const policy = new Policy(GENEROUS)
  const outcomes = await Promise.all(Array.from({ length: 100 }, async (_, i) => {
    const outcome = await palisade.run({ source: loop, input: i, policy })
    pending--
    return outcome
  }))
  clearInterval(timer)
  outcomes.forEach((outcome, i) => assert.equal(output(outcome), i))
  assert.ok(ticksWhileRunning >= 3, `the timer ticked ${ticksWhileRunning} times while calls ran`)
})

test('a call in flight keeps Node running, and Node exits once calls have ended', () => {
  // Nothing else holds this process's event loop: without a call holding it open, Node would
  // exit before the outcome came; with one left holding it, Node would never exit.
  const script = `
    const { Palisade } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const palisade = new Palisade()
    palisade.run({ source: 'export default () => 6 * 7' }).then((first) => {
      console.log(first.output)
      return palisade.run({ source: 'export default () => 43' })
    }).then((second) => console.log(second.output))`
  const done = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(done.signal, null, `Node did not exit on its own: ${done.stderr}`)
  assert.equal(done.status, 0, done.stderr)
  assert.equal(done.stdout, '42\n43\n')
})

test('Palisades made and dropped call after call are collected in time: the 400th still builds', async () => {
  // Each reserves ~560 GiB of address space for its instance pool; V8 must collect dropped ones
  // before some 200 of them exhaust it (`new Palisade` then failed as `internal`).
  for (let made = 0; made < 400; made++) {
    const outcome = await new Palisade().run({ source: 'export default (x) => x', input: made })
    assert.equal(output(outcome), made)
  }
  assert.equal(output(await palisade.run({ source: 'export default () => 2' })), 2)
})

test('calls of a Palisade nobody holds any more all resolve', { timeout: 120_000 }, async () => {
  // Each Palisade is dropped once its call starts, and collected while the call runs (making
  // the next ones makes V8 collect): the call's outcome must still reach its promise.
  for (let round = 0; round < 5; round++) {
    const running = []
    for (let made = 0; made < 40; made++) {
      running.push(new Palisade().run({ source: 'export default async (x) => x', input: made, policy: GENEROUS }))
    }
    const outcomes = await Promise.all(running)
    outcomes.forEach((outcome, made) => assert.equal(output(outcome), made))
  }
})

test('files for the scratch directory: text and bytes; other contents are a TypeError', async () => {
  const policy = '[fs.scratch]\nguest = "/scratch"'
  const source = `export default async () => [await fs.readFile("/scratch/a.txt"),
    await fs.readFile("/scratch/b.bin"), await fs.readFile("/scratch/c.bin")]`
  const wide = new Uint16Array([0x6962, 0x7374]) // the bytes "bits", little-endian
  const files = { 'a.txt': 'text', 'b.bin': new TextEncoder().encode('bytes'), 'c.bin': wide }
  assert.deepEqual(output(await palisade.run({ source, policy, files })), ['text', 'bytes', 'bits'])
  for (const contents of [5, { length: 3 }, null, [1, 2]]) {
    await assert.rejects(
      // @ts-expect-error: contents that are neither text nor bytes
      palisade.run({ source, policy, files: { 'a.txt': contents } }), TypeError)
  }
  assert.equal(output(await palisade.run({ source: 'export default () => 2', policy: GENEROUS })), 2)
})

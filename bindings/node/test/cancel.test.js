// @ts-check
// Cancelling a call with an AbortSignal, and the live events of a call.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { Palisade } = require('..')
const { failure, output, assertNextCallWorks } = require('./support.js')

const palisade = new Palisade()
const LOOP = 'export default () => { for (;;) {} }'
const LONG = '[limits]\ntimeout = "60s"\nfuel = 1_000_000_000_000_000\n'

test('an AbortSignal ends a running call as cancelled', async () => {
  const controller = new AbortController()
  const running = palisade.run({ source: LOOP, policy: LONG, signal: controller.signal })
  setTimeout(() => controller.abort(), 50)
  const error = failure(await running)
  assert.equal(error.code, 'cancelled')
  assert.equal(error.retryable, false)
  await assertNextCallWorks(palisade)
})

test('an already aborted signal ends the call as cancelled before it runs', async () => {
  const error = failure(await palisade.run({ source: LOOP, policy: LONG, signal: AbortSignal.abort() }))
  assert.equal(error.code, 'cancelled')
  await assertNextCallWorks(palisade)
})

test('an already aborted signal cancels even a call that would end at once', async () => {
  // Among calls in flight, a short call could end on the runtime before a cancel made after
  // its start reached it, and the caller who had aborted got its output.
  const source = 'export default (x) => x'
  const calls = Array.from({ length: 4000 }, (_, i) =>
    palisade.run({ source, input: i, signal: i % 2 ? AbortSignal.abort() : undefined }))
  const outcomes = await Promise.all(calls)
  const ran = outcomes.filter((outcome, i) => i % 2 && outcome.ok).length
  assert.equal(ran, 0, `${ran} of 2000 calls whose signal had aborted ran`)
  outcomes.forEach((outcome, i) => {
    if (i % 2) assert.equal(failure(outcome).code, 'cancelled')
    else assert.equal(output(outcome), i)
  })
  await assertNextCallWorks(palisade)
})

test('onEvent gets console lines and audit records while the call runs, before it ends', async () => {
  /** @type {import('..').RunEvent[]} */
  const events = []
  const source = `export default async () => {
    console.log("one"); console.warn("two");
    try { await fetch("https://example.com/") } catch (e) {}
    return 3
  }`
  const outcome = await palisade.run({
    source,
    policy: '[limits]\ntimeout = "30s"\n',
    onEvent: (event) => { events.push(event) }
  })
  assert.equal(output(outcome), 3)
  assert.deepEqual(events.slice(0, 2), [
    { type: 'console', level: 'log', message: 'one' },
    { type: 'console', level: 'warn', message: 'two' }
  ])
  const { type, ...record } = events[2]
  assert.equal(type, 'audit')
  assert.deepEqual(record, outcome.audit[0])
  assert.equal(outcome.audit[0].decision, 'deny')
})

test('an onEvent callback that throws misses its event; the call goes on', async () => {
  const outcome = await palisade.run({
    source: 'export default () => { console.log("x"); return 1 }',
    onEvent: () => { throw new Error('boom') }
  })
  assert.equal(output(outcome), 1)
})

test('an async onEvent callback that rejects misses its event, with no unhandled rejection', async () => {
  /** @type {unknown[]} */
  const unhandled = []
  const record = (/** @type {unknown} */ reason) => { unhandled.push(reason) }
  process.on('unhandledRejection', record)
  try {
    const outcome = await palisade.run({
      source: 'export default () => { console.log("x"); return 1 }',
      onEvent: async () => { throw new Error('boom') }
    })
    assert.equal(output(outcome), 1)
    // Node reports a rejection nobody handled once the microtasks have run.
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setTimeout(resolve, 10))
  } finally {
    process.off('unhandledRejection', record)
  }
  assert.deepEqual(unhandled, [])
  await assertNextCallWorks(palisade)
})

test('a signal that is not an AbortSignal is refused before the call starts', async () => {
  // Once started, such a call could not be cancelled, and its end would throw on Node's thread.
  for (const signal of [{}, { aborted: false, addEventListener () {} }, 'abort']) {
    await assert.rejects(
      // @ts-expect-error: not an AbortSignal
      palisade.run({ source: 'export default () => 1', signal }),
      { name: 'TypeError', message: 'run(): `signal` is an AbortSignal' })
  }
  await assertNextCallWorks(palisade)
})

test('Ctrl-C: a SIGINT handler that aborts the running call gets cancelled, and the next call runs', async () => {
  // A process of its own, sent SIGINT as Ctrl-C would, while a call loops: its handler aborts
  // the call, which ends as cancelled (its one slot is free again), and the next call runs.
  const child = spawn(process.execPath, ['-e', CTRL_C_CHILD], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr.on('data', (chunk) => { err += chunk })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  await new Promise((resolve) => child.stdout.on('data', (chunk) => {
    out += chunk
    if (out.startsWith('calling\n')) resolve(undefined)
  }))
  await new Promise((resolve) => setTimeout(resolve, 500))
  child.kill('SIGINT')
  const { code, signal } = await exited
  clearTimeout(killer)
  assert.equal(signal, null, `the child did not end on its own: ${err}`)
  assert.equal(code, 0, err)
  assert.equal(out, 'calling\ncancelled\nafter\n')
})

const CTRL_C_CHILD = `
  const { Palisade } = require(${JSON.stringify(path.join(__dirname, '..'))})
  const palisade = new Palisade({ maxConcurrency: 1, queueTimeout: '30s' })
  const controller = new AbortController()
  process.once('SIGINT', () => controller.abort())
  console.log('calling')
  palisade.run({
    source: 'export default () => { for (;;) {} }',
    policy: '[limits]\\ntimeout = "60s"\\nfuel = 1_000_000_000_000_000\\n',
    signal: controller.signal
  }).then((looped) => {
    console.log(looped.error.code)
    return palisade.run({ source: "export default () => 'after'" })
  }).then((after) => console.log(after.output))`

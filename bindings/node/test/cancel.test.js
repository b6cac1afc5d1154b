// @ts-check
// Cancelling a call with an AbortSignal, and the live events of a call.

const { test } = require('node:test')
const assert = require('node:assert/strict')
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

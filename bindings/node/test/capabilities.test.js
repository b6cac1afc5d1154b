// @ts-check
// JavaScript capability handlers: async answers, typed failures the script catches, the call's
// context, and the policy's checks before any handler runs.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { Palisade, CapabilityError } = require('..')
const { output, failure, assertNextCallWorks } = require('./support.js')

const POLICY = {
  name: 'bridge',
  limits: { timeout: '30s' },
  capabilities: { global: 'host', allow: { lookup: { max_calls: 3 }, fail: {}, sync: {} } }
}

/** @type {Array<import('..').CallContext>} */
const contexts = []

const palisade = new Palisade({
  capabilities: {
    lookup: async (id, context) => {
      contexts.push(context)
      await new Promise((resolve) => setTimeout(resolve, 5))
      if (id === 'ada') return { id, tenant: context.metadata }
      throw new CapabilityError('not_found', `no actor ${id}`, { retryable: true })
    },
    fail: () => { throw new Error('the database is down') },
    sync: (payload) => ({ echoed: payload }),
    ungranted: () => 'never called'
  }
})

test('an async handler answers the script, with the call context', async () => {
  const source = 'export default async (id) => await host.lookup(id)'
  const outcome = await palisade.run({ source, input: 'ada', policy: POLICY, metadata: 'acme' })
  assert.deepEqual(output(outcome), { id: 'ada', tenant: 'acme' })
  const context = contexts.at(-1)
  assert.equal(context?.capability, 'lookup')
  assert.equal(context?.policy, 'bridge')
  assert.match(context?.call_id ?? '', /^[0-9a-f]{16}$/)
  assert.equal(outcome.audit[0].decision, 'allow')
  assert.equal(outcome.audit[0].target, 'lookup')
})

test('a CapabilityError reaches the script with its code, message and retryable', async () => {
  const source = `export default async () => {
    try { await host.lookup("bob") } catch (e) {
      return { isCapabilityError: e instanceof CapabilityError, code: e.code, message: e.message, retryable: e.retryable }
    }
  }`
  const outcome = await palisade.run({ source, policy: POLICY })
  assert.deepEqual(output(outcome), { isCapabilityError: true, code: 'not_found', message: 'no actor bob', retryable: true })
})

test('any other exception, or a sync handler, is handled too', async () => {
  const source = `export default async () => {
    const sync = await host.sync([1, 2])
    try { await host.fail() } catch (e) { return { sync, code: e.code, message: e.message } }
  }`
  const outcome = await palisade.run({ source, policy: POLICY })
  assert.deepEqual(output(outcome), { sync: { echoed: [1, 2] }, code: 'handler_error', message: 'the database is down' })
})

test('an uncaught handler failure ends the call as guest_exception; the host goes on', async () => {
  const outcome = await palisade.run({ source: 'export default () => host.fail()', policy: POLICY })
  assert.equal(failure(outcome).code, 'guest_exception')
  await assertNextCallWorks(palisade)
})

test('the policy decides before any handler runs: ungranted names and budgets are refused', async () => {
  const ungranted = await palisade.run({ source: 'export default () => host.ungranted()', policy: POLICY })
  assert.equal(failure(ungranted).code, 'policy_denied')
  assert.equal(ungranted.audit[0].decision, 'deny')
  const before = contexts.length
  const source = 'export default async () => { for (let i = 0; i < 4; i++) await host.lookup("ada") }'
  const overBudget = await palisade.run({ source, policy: POLICY })
  assert.equal(contexts.length - before, 3, 'the fourth call never reached the handler')
  assert.equal(overBudget.audit.at(-1)?.rule, 'capabilities.allow.lookup.max_calls')
  await assertNextCallWorks(palisade)
})

test('a handler that is not a function is a TypeError', () => {
  // @ts-expect-error: a handler is a function
  assert.throws(() => new Palisade({ capabilities: { x: 1 } }), TypeError)
})

test('a quick call ends while many others wait on a handler', { timeout: 120_000 }, async () => {
  // With many calls in flight, outcomes reach Node in batches; one must still come while the
  // others cannot end (they wait on Node itself), not when they do.
  const waiting = 40
  /** @type {Array<() => void>} */
  const gates = []
  /** @type {(value?: unknown) => void} */
  let entered = () => {}
  const allEntered = new Promise((resolve) => { entered = resolve })
  const gated = new Palisade({
    capabilities: {
      gate: () => new Promise((resolve) => {
        gates.push(() => resolve('opened'))
        if (gates.length === waiting) entered()
      })
    }
  })
  const policy = { limits: { timeout: '60s' }, capabilities: { global: 'host', allow: { gate: {} } } }
  const blocked = Array.from({ length: waiting }, () =>
    gated.run({ source: 'export default async () => await host.gate()', policy }))
  await allEntered
  const quick = await gated.run({ source: 'export default (x) => x * 2', input: 21, policy })
  assert.equal(output(quick), 42)
  gates.forEach((open) => open())
  for (const outcome of await Promise.all(blocked)) assert.equal(output(outcome), 'opened')
})

test('a Palisade whose handler refers to it is collected: the 300th still builds', { timeout: 300_000 }, async () => {
  // The addon held the handlers from a GC root, so a handler that refers to its Palisade kept
  // it (and the ~560 GiB of address space its instance pool reserves) for ever: some 116 made
  // `new Palisade` fail as internal.
  const policy = { limits: { timeout: '30s' }, capabilities: { global: 'host', allow: { tenant: {} } } }
  const source = 'export default async (x) => await host.tenant(x)'
  for (let made = 0; made < 300; made++) {
    /** @type {{ palisade: Palisade | null }} */
    const service = { palisade: null }
    service.palisade = new Palisade({ capabilities: { tenant: async (x) => [x, service.palisade !== null] } })
    assert.deepEqual(output(await service.palisade.run({ source, input: made, policy })), [made, true])
  }
  // Calls whose Palisade nobody holds keep its handlers while they run (while their handlers
  // wait, the next Palisades made make V8 collect).
  const slowly = async (/** @type {number} */ x) => {
    await new Promise((resolve) => setTimeout(resolve, 20))
    return [x, true]
  }
  const running = Array.from({ length: 40 }, (_, made) =>
    new Palisade({ capabilities: { tenant: slowly } }).run({ source, input: made, policy }))
  const outcomes = await Promise.all(running)
  outcomes.forEach((outcome, made) => assert.deepEqual(output(outcome), [made, true]))
  await assertNextCallWorks(palisade)
})

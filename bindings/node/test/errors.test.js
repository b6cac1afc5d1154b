// @ts-check
// Every error code a call can end with, from Node: the exact code, the fields every error has,
// then a normal call on the same Palisade.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { Palisade, Policy, Script, PalisadeError } = require('..')
const { failure, assertNextCallWorks } = require('./support.js')

const palisade = new Palisade()
const { cases } = JSON.parse(fs.readFileSync(path.join(__dirname, '../../error-cases.json'), 'utf8'))

/** @param {import('..').OutcomeError} error @param {string} code */
function assertFields (error, code) {
  assert.equal(error.code, code)
  assert.equal(typeof error.message, 'string')
  assert.equal(typeof error.fix_note, 'string')
  assert.ok(error.docs_url.endsWith(`#${code}`), error.docs_url)
  assert.equal(typeof error.retryable, 'boolean')
  assert.ok(error.fix === null || typeof error.fix.key === 'string')
}

for (const { code, request } of cases) {
  test(`a call that ends with ${code}`, async () => {
    const outcome = await palisade.run(request)
    assertFields(failure(outcome), code)
    await assertNextCallWorks(palisade)
  })
}

test('a component that is not one is invalid_component, thrown by Script.fromComponent', () => {
  assert.throws(() => Script.fromComponent(Buffer.from('\0asm junk')), (e) => {
    assert.ok(e instanceof PalisadeError)
    assert.equal(e.code, 'invalid_component')
    return true
  })
})

test('a policy that cannot be read is invalid_policy, thrown by its constructor with the key', async () => {
  assert.throws(() => new Policy('[limits]\nmemory = 64\n'), (e) => {
    assert.ok(e instanceof PalisadeError)
    assert.equal(e.code, 'invalid_policy')
    assert.equal(e.retryable, false)
    assert.match(e.message, /limits\.memory/)
    assert.ok(e.docs_url.endsWith('#invalid_policy'), e.docs_url)
    return true
  })
  await assertNextCallWorks(palisade)
})

test('an unknown constructor option is a TypeError naming it', async () => {
  // @ts-expect-error: a misspelt option, on purpose
  assert.throws(() => new Palisade({ maxConcurency: 2 }), { name: 'TypeError', message: /maxConcurency/ })
  await assertNextCallWorks(palisade)
})

test('a component whose call traps is guest_trap', async () => {
  // Made by `cargo run -p xtask -- forge-trap` (make bindings-node does it first): a compiled
  // script whose run export is `unreachable`, which no script can make.
  const wasm = fs.readFileSync(path.join(__dirname, '../../../target/bindings/trap.wasm'))
  const outcome = await palisade.run({ script: Script.fromComponent(wasm), input: 1 })
  const error = failure(outcome)
  assertFields(error, 'guest_trap')
  assert.match(error.message, /unreachable/)
  await assertNextCallWorks(palisade)
})

test('an audit log that cannot be opened is internal, thrown by the constructor with its cause', async () => {
  assert.throws(() => new Palisade({ auditLog: '/nonexistent/dir/audit.jsonl' }), (e) => {
    assert.ok(e instanceof PalisadeError)
    assert.equal(e.code, 'internal')
    assert.equal(e.retryable, true)
    assert.match(e.message, /^internal error: .*\/nonexistent\/dir\/audit\.jsonl/)
    return true
  })
  await assertNextCallWorks(palisade)
})

test('past the admission limit a call waits, then ends with capacity_exhausted', async () => {
  const one = new Palisade({ maxConcurrency: 1, queueTimeout: '2s' })
  const controller = new AbortController()
  const loop = one.run({
    source: 'export default () => { for (;;) {} }',
    policy: '[limits]\ntimeout = "60s"\nfuel = 1_000_000_000_000_000\n',
    signal: controller.signal
  })
  // Until the loop holds the only slot (a loaded machine may start it late), a probe runs.
  let refused = null
  for (let i = 0; i < 200 && refused === null; i++) {
    const probe = await one.run({ source: 'export default () => 1' })
    if (!probe.ok) refused = probe.error
  }
  controller.abort()
  assert.ok(refused !== null, 'a call was refused while the loop held the slot')
  assertFields(refused, 'capacity_exhausted')
  assert.equal(refused.retryable, true)
  assert.equal(failure(await loop).code, 'cancelled')
  await assertNextCallWorks(one)
})

// @ts-check
// What a caller's own objects and files may do to a call, and what many large outputs do to
// Node's thread: each ends as documented (an exact error or code), and the next call runs.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')
const { spawnSync } = require('node:child_process')
const { Palisade, Policy, PalisadeError } = require('..')
const { output, failure, assertNextCallWorks } = require('./support.js')

const palisade = new Palisade()

/** A fresh folder under the system's temporary one. */
function folder () {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'palisade-node-'))
}

test('outputs that reach Node together past its longest string all arrive', async () => {
  // Three outputs of 180 MiB reach Node's thread in one batch while it is busy: their 540M
  // characters were one string, past V8's longest (2^29 - 24), whose making threw out of the
  // delivery (the process ended, or every call of the batch was left waiting).
  const dir = folder()
  const auditLog = path.join(dir, 'audit.jsonl')
  const mine = new Palisade({ auditLog, kvPath: path.join(dir, 'kv.sqlite') })
  const policy = '[limits]\noutput = "256MiB"\nmemory = "512MiB"\ntimeout = "60s"\n' +
    '[kv]\nnamespace = "batch"\n[kv.buckets]\nb = "rw"\n'
  const length = 180 * 1024 * 1024
  // Each call's audit record (its `kv.set`) is written as the call ends, just before its report.
  const source = `export default async () => { const out = 'x'.repeat(${length}); await kv.set('k', 1); return out }`
  const calls = [0, 1, 2].map(() => mine.run({ policy, source }))
  // This thread takes no report until every call has ended, and a little after.
  const written = () => fs.existsSync(auditLog) ? fs.readFileSync(auditLog, 'utf8').split('\n').length - 1 : 0
  const deadline = Date.now() + 90_000
  while (written() < 3 && Date.now() < deadline) { /* busy, as a long synchronous task is */ }
  const after = Date.now() + 200
  while (Date.now() < after) { /* the last report is queued right after its record */ }
  assert.equal(written(), 3)
  for (const outcome of await Promise.all(calls)) assert.equal(output(outcome).length, length)
  await assertNextCallWorks(mine)
  fs.rmSync(dir, { recursive: true })
})

test('a signal whose removeEventListener throws holds up no other call', async () => {
  const hostile = new AbortController().signal
  Object.defineProperty(hostile, 'removeEventListener', { value: () => { throw new Error('hostile') } })
  const calls = [palisade.run({ source: 'export default () => 1', signal: hostile })]
  for (let i = 0; i < 20; i++) calls.push(palisade.run({ source: `export default () => ${i}` }))
  const outcomes = await Promise.all(calls)
  assert.deepEqual(outcomes.map(output), [1, ...Array.from({ length: 20 }, (_, i) => i)])
  await assertNextCallWorks(palisade)
})

test('a signal that is no AbortSignal is a TypeError before the call starts', async () => {
  const one = new Palisade({ maxConcurrency: 1, queueTimeout: '2s' })
  const fake = Object.create(AbortSignal.prototype)
  await assert.rejects(one.run({ source: 'export default () => { for (;;) {} }', signal: fake }), TypeError)
  // The call never started: the one slot is free.
  await assertNextCallWorks(one)
})

test('a policy object that is no plain table is a TypeError', async () => {
  // A Policy of another copy of this package (a class's instance here), a Map: sent as JSON,
  // each was `{}`, and the call ran under an empty policy.
  class Other { constructor () { this.name = 'strict' } }
  // An object whose prototype holds its tables: JSON.stringify writes none of them.
  const inherited = Object.create(Object.assign(Object.create(null), { limits: { timeout: '1ms' } }))
  /** @type {any[]} */
  const policies = [new Other(), new Map([['limits', {}]]), [1], inherited]
  for (const policy of policies) {
    await assert.rejects(palisade.run({ source: 'export default () => 1', policy }),
      /^TypeError: run\(\): `policy` is a Policy, a path, TOML text or a plain object of its tables/)
  }
  const notSpec = /^TypeError: Policy\(\) takes a policy file's path, TOML text or a plain object of its tables$/
  for (const spec of [undefined, null, () => 1, new Map(), 7]) {
    // @ts-expect-error: none is a policy
    assert.throws(() => new Policy(spec), notSpec)
  }
  assert.throws(() => new Policy(inherited), notSpec)
  const table = Object.assign(Object.create(null), { limits: { timeout: '30s' } })
  assert.equal(output(await palisade.run({ source: 'export default () => 2', policy: table })), 2)
  // A plain object of another realm (a `vm` context's) is a plain object too.
  const foreign = vm.runInNewContext('({ limits: { timeout: "30s" } })')
  assert.equal(output(await palisade.run({ source: 'export default () => 3', policy: foreign })), 3)
  assert.ok(new Policy(foreign) instanceof Policy)
  await assertNextCallWorks(palisade)
})

test('a policy object holds only what a policy file does, checked at every level', async () => {
  // Sent as JSON, a Map or a Set inside was `{}`, NaN was null and a function was left out: the
  // call ran under a policy other than the one given.
  class Limits { constructor () { this.timeout = '1ms' } }
  /** @type {Record<string, any>} */
  const circular = {}
  circular.again = circular
  /** @type {[any, string][]} */
  const cases = [
    [{ limits: new Map([['timeout', '1ms']]) }, '`policy.limits` is a Map'],
    [{ limits: new Limits() }, '`policy.limits` is a Limits'],
    [{ limits: { timeout: '30s', fuel: NaN } }, '`policy.limits.fuel` is NaN'],
    [{ limits: { timeout: null } }, '`policy.limits.timeout` is null'],
    [{ capabilities: { allow: ['kv', () => 'fetch'] } }, '`policy.capabilities.allow[1]` is a function'],
    [{ name: 'x', limits: circular }, '`policy.limits.again.again.again']
  ]
  /** A TypeError whose message starts with `prefix`. */
  const startingWith = (/** @type {string} */ prefix) => (/** @type {any} */ e) => {
    assert.ok(e instanceof TypeError, String(e))
    assert.ok(e.message.startsWith(prefix), e.message)
    return true
  }
  for (const [policy, message] of cases) {
    await assert.rejects(palisade.run({ source: 'export default () => 1', policy }), startingWith(`run(): ${message}`))
    assert.throws(() => new Policy(policy), startingWith(`Policy(): ${message}`))
  }
  await assert.rejects(palisade.run({ source: 'export default () => 1', policy: { limits: circular } }),
    { name: 'TypeError', message: /nests more than 16 levels deep \(is it circular\?\)$/ })
  // An undefined entry is absent; a getter is read once, and what it gave is what runs.
  let reads = 0
  /** @type {any} */
  const limits = { get timeout () { return reads++ === 0 ? '30s' : new Map() }, fuel: undefined }
  assert.equal(output(await palisade.run({ source: 'export default () => 4', policy: { limits } })), 4)
  assert.equal(reads, 1)
  await assertNextCallWorks(palisade)
})

test('a request option with no JSON form is a TypeError, not an absent one', async () => {
  // `timeout: NaN` was written as null, and the call ran under the policy's own timeout.
  /** @type {[string, unknown, string][]} */
  const cases = [['timeout', NaN, 'NaN'], ['fuel', Infinity, 'Infinity'], ['memory', () => '1MiB', 'a function'],
    ['metadata', Symbol('m'), 'a symbol']]
  for (const [key, value, kind] of cases) {
    await assert.rejects(palisade.run({ source: 'export default () => 1', [key]: value }),
      { name: 'TypeError', message: `run(): \`${key}\` is ${kind}, which has no JSON form` })
  }
  await assertNextCallWorks(palisade)
})

test('a script file that is a FIFO holds up no other call, and its call is cancelled', async () => {
  // Read to its end, as `palisade run` reads one, on a blocking thread rather than on the
  // runtime's workers, which other calls share; a signal ends the call meanwhile.
  const dir = folder()
  const fifo = path.join(dir, 'main.js')
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0)
  const writer = fs.openSync(fifo, fs.constants.O_RDWR) // a writer that writes nothing yet
  const controller = new AbortController()
  const waiting = Array.from({ length: os.availableParallelism() }, () =>
    palisade.run({ file: fifo, signal: controller.signal }))
  assert.equal(output(await palisade.run({ source: 'export default () => 7' })), 7)
  controller.abort()
  for (const outcome of await Promise.all(waiting)) assert.equal(failure(outcome).code, 'cancelled')
  fs.closeSync(writer)
  fs.rmSync(dir, { recursive: true })
  await assertNextCallWorks(palisade)
})

test('an audit log that is a FIFO with no reader is refused at once, and one with a reader gets the records', async () => {
  const dir = folder()
  const fifo = path.join(dir, 'audit.fifo')
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0)
  // With no reader, opening it to write would wait for one: the constructor froze.
  assert.throws(() => new Palisade({ auditLog: fifo }), (e) => {
    assert.ok(e instanceof PalisadeError)
    assert.equal(e.code, 'internal')
    assert.match(e.message, /audit\.fifo: No such device or address/)
    return true
  })
  const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  const logged = new Palisade({ auditLog: fifo })
  const outcome = await logged.run({ source: 'export default async () => { try { await fetch("http://127.0.0.1:9/") } catch { return 1 } }' })
  assert.equal(output(outcome), 1)
  const line = Buffer.alloc(4096)
  const n = fs.readSync(reader, line)
  assert.equal(JSON.parse(line.subarray(0, n).toString()).decision, 'deny')
  fs.closeSync(reader)
  fs.rmSync(dir, { recursive: true })
  await assertNextCallWorks(palisade)
})

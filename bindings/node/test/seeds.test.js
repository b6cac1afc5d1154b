// @ts-check
// Each seed project's own example, ported to the library from Node (docs/node.md, "Migrating").

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { Palisade, Policy } = require('..')
const { ROOT, output, failure, assertNextCallWorks } = require('./support.js')

test('agent callback: fetch to a local API with a secret the script never sees', async () => {
  /** @type {Array<string | undefined>} */
  const seen = []
  const server = http.createServer((request, response) => {
    seen.push(request.headers.authorization)
    let body = ''
    request.on('data', (chunk) => { body += chunk })
    request.on('end', () => {
      response.setHeader('content-type', 'application/json')
      // An upstream that echoes the header hands the secret back: the host redacts it.
      response.end(JSON.stringify({ received: JSON.parse(body), auth: request.headers.authorization }))
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(null)))
  const address = server.address()
  const port = address !== null && typeof address === 'object' ? address.port : 0
  process.env.PALISADE_TEST_AGENT_TOKEN = 'tok-8d7f'
  const template = fs.readFileSync(path.join(ROOT, 'bindings/fixtures/agent-callback.toml'), 'utf8')
  const policy = new Policy(template.replaceAll('HOOK_PORT', String(port)))
  // The seed's callback: user code gets `input`, may fetch, returns output.
  const callback = `export default async (input) => {
    console.log("calling the hook for", input.user);
    const response = await fetch("http://127.0.0.1:${port}/agents/hook", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input) });
    return { status: response.status, body: await response.json() };
  }`
  const palisade = new Palisade()
  try {
    const outcome = await palisade.run({ policy, source: callback, input: { user: 'ada' } })
    assert.deepEqual(output(outcome), { status: 200, body: { received: { user: 'ada' }, auth: 'Bearer [redacted]' } })
    assert.deepEqual(seen, ['Bearer tok-8d7f'])
    assert.deepEqual(outcome.logs, [{ level: 'log', message: 'calling the hook for ada' }])
    assert.ok(!JSON.stringify(outcome).includes('tok-8d7f'))
    const elsewhere = await palisade.run({
      policy, source: `export default () => fetch("http://127.0.0.1:${port}/admin")`
    })
    assert.equal(failure(elsewhere).code, 'policy_denied')
    assert.deepEqual(seen.length, 1, 'the refused request never reached the server')
  } finally {
    server.close()
  }
  await assertNextCallWorks(palisade)
})

test('action runtime: the calculator, one action per call, state kept by the host', async () => {
  const calc = fs.readFileSync(path.join(ROOT, 'examples/apps/calc.js'), 'utf8') +
    '\nexport default ({ action, state, params }) => globalThis.jace.actions[action](state, params ?? {}, {});' +
    '\nexport const init = () => globalThis.jace.init({});'
  const policy = new Policy(path.join(ROOT, 'policies/deterministic-action.toml'))
  const palisade = new Palisade()
  let state = output(await palisade.run({ policy, source: calc, export: 'init' }))
  /** @type {string[]} */
  const audit = []
  for (const [action, params] of [['calc.input', { digit: 7 }], ['calc.op', { op: 'divide' }],
    ['calc.input', { digit: 2 }], ['calc.equals', {}]]) {
    const result = output(await palisade.run({ policy, source: calc, input: { action, state, params } }))
    state = result.state
    audit.push(result.audit_preview)
  }
  assert.equal(state.acc, 3.5)
  assert.deepEqual(audit, ['INPUT 7', 'OP divide', 'INPUT 2', 'DIVIDE 7÷2 -> 3.5'])
  const divideByZero = output(await palisade.run({
    policy,
    source: calc,
    input: { action: 'calc.equals', state: { acc: 1, op: 'divide', entry: '0', history: [] } }
  }))
  assert.equal(divideByZero.error.code, 'DIV_ZERO')
})

test('run_js tool: a read-only workspace, no network', async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'palisade-node-ws-'))
  fs.writeFileSync(path.join(workspace, 'scores.csv'), 'name,score\nada,3\nbob,4\n')
  const policy = new Policy(`name = "run-js-tool"
[limits]
timeout = "30s"
[[fs.mount]]
host = ${JSON.stringify(workspace)}
guest = "/workspace"
mode = "ro"
`)
  const palisade = new Palisade()
  const sum = `export default async () => {
    const rows = (await fs.readFile("/workspace/scores.csv")).trim().split("\\n").slice(1);
    return rows.reduce((total, row) => total + Number(row.split(",")[1]), 0);
  }`
  assert.equal(output(await palisade.run({ policy, source: sum })), 7)
  const write = await palisade.run({
    policy,
    source: 'export default async () => { try { await fs.writeFile("/workspace/x", "1") } catch (e) { return e.code } }'
  })
  assert.equal(output(write), 'EACCES')
  assert.ok(!fs.existsSync(path.join(workspace, 'x')))
  const fetched = await palisade.run({ policy, source: 'export default () => fetch("https://example.com/")' })
  assert.equal(failure(fetched).code, 'policy_denied')
  fs.rmSync(workspace, { recursive: true })
  await assertNextCallWorks(palisade)
})

test('capability bridge: maia.do and maia.render(actorId, view, style) answered from JS', async () => {
  /** @type {Array<{ actorId: string, view: any, style: any }>} */
  const painted = []
  const palisade = new Palisade({
    capabilities: {
      do: async (payload) => ({ value: payload.args.reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b, 0) }),
      render: (args, context) => {
        assert.equal(context.argument_list, true)
        const [actorId, view, style] = args
        painted.push({ actorId, view, style })
        return { rendered: actorId }
      }
    }
  })
  const policy = new Policy(fs.readFileSync(path.join(ROOT, 'policies/capability-bridge.toml'), 'utf8') +
    '\n[capabilities.allow.render]\nmax_calls = 5\n')
  const actor = `export default {
    async execute(actor, payload) {
      const sum = await maia.do({ op: "add", args: payload.args });
      return await maia.render(actor.id, { type: "text", value: String(sum.value) }, { color: "red" });
    }
  }`
  const outcome = await palisade.run({
    policy, source: actor, export: 'execute', args: [{ id: 'co_z1' }, { args: [1, 2, 3] }]
  })
  assert.deepEqual(output(outcome), { rendered: 'co_z1' })
  assert.deepEqual(painted, [{ actorId: 'co_z1', view: { type: 'text', value: '6' }, style: { color: 'red' } }])
  assert.deepEqual(outcome.audit.map((r) => [r.target, r.decision]), [['do', 'allow'], ['render', 'allow']])
  const badPayload = await palisade.run({ policy, source: 'export default () => maia.do({ nope: 1 })' })
  assert.equal(failure(badPayload).code, 'policy_denied')
  await assertNextCallWorks(palisade)
})

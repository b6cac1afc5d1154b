// @ts-check
// What the tests share: the outcome's output or error code (failing the test otherwise), a
// policy with a generous deadline for calls that must pass on a loaded machine, the repository.

const assert = require('node:assert/strict')
const path = require('node:path')

/** The repository's root. */
const ROOT = path.resolve(__dirname, '../../..')

/** A deadline no passing call comes near, even on a loaded 2-core machine. */
const GENEROUS = '[limits]\ntimeout = "30s"\n'

/**
 * The output of a call that must have succeeded.
 * @param {import('..').Outcome} outcome
 */
function output (outcome) {
  if (!outcome.ok) assert.fail(`expected ok, got ${outcome.error.code}: ${outcome.error.message}`)
  return outcome.output
}

/**
 * The error of a call that must have failed.
 * @param {import('..').Outcome} outcome
 */
function failure (outcome) {
  if (outcome.ok) assert.fail(`expected an error, got ${JSON.stringify(outcome.output)}`)
  return outcome.error
}

/**
 * Show the host is fine after a hostile call: a normal call on the same Palisade.
 * @param {import('..').Palisade} palisade
 */
async function assertNextCallWorks (palisade) {
  const outcome = await palisade.run({ source: 'export default (x) => x + 1', input: 41, policy: GENEROUS })
  assert.equal(output(outcome), 42)
}

module.exports = { ROOT, GENEROUS, output, failure, assertNextCallWorks }

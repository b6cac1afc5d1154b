'use strict'
// Palisade in-process for Node.js (docs/node.md). The native addon (src/, built into
// palisade.node by `make bindings-node`) runs every call on its own tokio runtime; this file turns its JSON into JavaScript values,
// answers capability calls from JavaScript handlers, and wires AbortSignal and onEvent.

const native = require('./palisade.node')
const { markAsUncloneable } = require('node:worker_threads')

/**
 * What a report from the addon carries (src/palisade.rs): an event, the output of a call that
 * succeeded, the caller's mistake, or the error of a call that failed.
 */
const EVENT = 0
const OUTPUT = 1
const FAILURE = 3

/**
 * The flags of a call's start (src/palisade.rs): report its events, return a handle that
 * cancels it, cancel it before it starts.
 */
const START_EVENTS = 1
const START_CANCELLABLE = 2
const START_CANCELLED = 4

/**
 * The key a call names a Policy's or a Script's native object by (src/handles.rs), read from a
 * private field no other object can have; undefined for an object not made by the constructor.
 * @type {(made: object) => number | undefined}
 */
let policyKey
/** @type {(made: object) => number | undefined} */
let scriptKey

/**
 * Make `made` refuse to be posted to another thread, where it would arrive as a plain object
 * (Node 22.10 and later; elsewhere `run` refuses what arrives).
 */
function uncloneable (made) {
  if (typeof markAsUncloneable === 'function') markAsUncloneable(made)
}

/** A failure a capability handler reports; the script catches it with the same fields. */
class CapabilityError extends Error {
  /**
   * @param {string} code snake_case, [a-z0-9_], at most 64 bytes (any other becomes handler_error)
   * @param {string} message
   * @param {{ retryable?: boolean }} [options]
   */
  constructor (code, message, options = {}) {
    super(message)
    this.name = 'CapabilityError'
    this.code = code
    this.retryable = Boolean(options.retryable)
  }
}

/** An error of the library thrown by a constructor (`new Palisade`, `new Policy`, `Script.*`). */
class PalisadeError extends Error {
  constructor (error) {
    super(error.message)
    this.name = 'PalisadeError'
    this.code = error.code
    this.fix = error.fix
    this.fix_note = error.fix_note
    this.docs_url = error.docs_url
    this.retryable = error.retryable
  }
}

/** Run `make` and rethrow what the addon throws as a TypeError or a PalisadeError. */
function native_ (make) {
  try {
    return make()
  } catch (e) {
    let reason
    try {
      reason = JSON.parse(e.message)
    } catch {
      throw e
    }
    if (reason.type_error !== undefined) throw new TypeError(reason.type_error)
    throw new PalisadeError(reason.error)
  }
}

/** A policy read once (a file's path, TOML text, or an object) for many calls. */
class Policy {
  #native
  #key

  static {
    policyKey = (made) => #key in made ? made.#key : undefined
  }

  /** @param {string | object} spec */
  constructor (spec) {
    if (typeof spec !== 'string' && !isPlainObject(spec)) {
      throw new TypeError('Policy() takes a policy file\'s path, TOML text or a plain object of its tables')
    }
    const text = JSON.stringify(typeof spec === 'string' ? spec : policyCopy(spec, 'Policy()', 'policy'))
    this.#native = native_(() => native.NativePolicy.read(text))
    this.#key = this.#native.key
    uncloneable(this)
  }

  get name () { return this.#native.name }
  get sha256 () { return this.#native.sha256 }
}

/** A script read once for many calls. */
class Script {
  #native
  #key

  static {
    scriptKey = (made) => #key in made ? made.#key : undefined
  }

  constructor (handle) {
    if (!(handle instanceof native.NativeScript)) {
      throw new TypeError('use Script.fromSource, Script.fromFile or Script.fromComponent')
    }
    this.#native = handle
    this.#key = handle.key
    uncloneable(this)
  }

  static fromSource (source, name = 'main.js') {
    const [text, label] = [wellFormed('Script.fromSource(): `source`', String(source)),
      wellFormed('Script.fromSource(): `name`', String(name))]
    return new Script(native.NativeScript.fromSource(label, text))
  }

  static fromFile (path) {
    return new Script(native_(() => native.NativeScript.fromFile(String(path))))
  }

  static fromComponent (wasm) {
    return new Script(native_(() => native.NativeScript.fromComponent(Buffer.from(wasm))))
  }

  get name () { return this.#native.name }
}

/**
 * The Outcome of a call: `ok`, then `output` or `error` (and `error_id` for an `internal`
 * error) are its own fields. `logs`, `audit` and `receipt` are read from the call's report when
 * first asked for (a caller that reads only the output costs Node's thread no more), and may be
 * set like fields. `toJSON()` is a plain object with every field, as `palisade run --json`
 * prints it: `JSON.stringify` writes it; a spread, `structuredClone`, `postMessage` or a deep
 * equality sees the own fields only.
 */
class Outcome {
  /** `{ logs, audit, receipt }`, as JSON text until first read. */
  #rest

  constructor (ok, value, rest) {
    this.ok = ok
    if (ok) this.output = value
    else {
      this.error = value.error
      if (value.error_id !== undefined) this.error_id = value.error_id
    }
    this.#rest = rest
  }

  #more () {
    if (typeof this.#rest === 'string') this.#rest = JSON.parse(this.#rest)
    return this.#rest
  }

  get logs () { return this.#more().logs }
  set logs (value) { this.#more().logs = value }
  get audit () { return this.#more().audit }
  set audit (value) { this.#more().audit = value }
  get receipt () { return this.#more().receipt }
  set receipt (value) { this.#more().receipt = value }

  toJSON () {
    const { logs, audit, receipt } = this.#more()
    return { ...this, logs, audit, receipt }
  }

  [Symbol.for('nodejs.util.inspect.custom')] (depth, options, inspect) {
    if (depth < 0) return '[Outcome]'
    return `Outcome ${inspect(this.toJSON(), { ...options, depth })}`
  }
}

/** A handler's failure as the script gets it: `{code, message, retryable}`. */
function failure (e) {
  try {
    if (e instanceof CapabilityError) {
      return { code: String(e.code), message: String(e.message), retryable: e.retryable }
    }
    return { code: 'handler_error', message: String(e && e.message !== undefined ? e.message : e), retryable: false }
  } catch {
    return { code: 'handler_error', message: 'the handler failed', retryable: false }
  }
}

/**
 * The dispatcher the addon calls for every capability call, with the handlers reached weakly
 * (`reach`, a WeakRef). It never throws: an exception of
 * the handler, or an answer that is not JSON, becomes `{"error": …}`.
 */
function dispatcher (reach) {
  return async (payload, context) => {
    try {
      const ctx = JSON.parse(context)
      const handlers = reach.deref()
      if (handlers === undefined) throw new Error('the Palisade is gone')
      const value = await handlers[ctx.capability](JSON.parse(payload), ctx)
      return JSON.stringify({ ok: value === undefined ? null : value })
    } catch (e) {
      return JSON.stringify({ error: failure(e) })
    }
  }
}

/** The keys of a request that `run` reads itself; the others go to the addon as JSON. */
const RUN_KEYS = new Set(['signal', 'onEvent', 'policy', 'script', 'input', 'inputJson'])

/**
 * Whether the request has keys beyond those `run` reads itself (own or inherited, enumerable):
 * only then is it copied with a rest pattern, whose copy has its own such keys.
 */
function hasOthers (request) {
  for (const key in request) {
    if (!RUN_KEYS.has(key)) return true
  }
  return false
}

/**
 * The request's JSON: files' bytes (a Uint8Array or any view, an ArrayBuffer) as base64, a Date
 * as RFC 3339 (its toJSON). Other contents are written as they are, for the addon to refuse what
 * is not text (`Buffer.from` would make a number or an array-like into bytes).
 */
function requestJson (rest) {
  for (const key of Object.keys(rest)) {
    // A `toJSON` is how JSON.stringify reads the request (its result is checked below).
    if (key !== 'toJSON' && hasNoJson(rest[key])) {
      // JSON.stringify writes null for the one, leaves the others out: as absent.
      throw new TypeError(`run(): \`${key}\` is ${kind(rest[key])}, which has no JSON form`)
    }
  }
  if (rest.files !== undefined && rest.files !== null && typeof rest.files === 'object') {
    const files = {}
    for (const [name, contents] of Object.entries(rest.files)) {
      files[name] = contents
      if (ArrayBuffer.isView(contents)) {
        const bytes = Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength)
        files[name] = { base64: bytes.toString('base64') }
      } else if (contents instanceof ArrayBuffer) {
        files[name] = { base64: Buffer.from(contents).toString('base64') }
      }
    }
    rest = { ...rest, files }
  }
  return JSON.stringify(rest)
}

/**
 * The input's JSON text, handed over apart from the request (the sandbox reads it once): the
 * caller's own `inputJson`, or `input` as `JSON.stringify` writes it; null (the script gets
 * `null`) for neither, or for a value `JSON.stringify` leaves out (a function, a symbol). A
 * `null` or `undefined` of either is as absent.
 */
function inputOf (input, inputJson) {
  if (inputJson == null) return input == null ? null : (JSON.stringify(input) ?? null)
  if (input != null) throw new TypeError('run(): give `input` or `inputJson`, not both')
  if (typeof inputJson !== 'string') throw new TypeError('run(): `inputJson` is JSON text (a string)')
  return wellFormed('run(): `inputJson`', inputJson)
}

/**
 * `value`, refused with a TypeError naming `what` if it holds a lone UTF-16 surrogate: handed
 * to the addon as UTF-8, it would become U+FFFD unseen.
 * @param {string} what
 * @param {string} value
 */
function wellFormed (what, value) {
  if (!value.isWellFormed()) {
    throw new TypeError(`${what} holds a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its pair), which is not text; \`s.toWellFormed()\` replaces it`)
  }
  return value
}

/** Whether JSON.stringify writes `value` as null (NaN, an infinity) or leaves it out. */
function hasNoJson (value) {
  return (typeof value === 'number' && !Number.isFinite(value)) || typeof value === 'function' ||
    typeof value === 'symbol'
}

/** How deep a policy object may nest (a policy file's tables are two or three levels deep). */
const POLICY_DEPTH = 16

/**
 * A copy of the policy object `value` made only of what a policy file holds: plain objects
 * (`isPlainObject`), arrays, strings, finite numbers and booleans (TOML has no null). An
 * undefined entry is left out, as absent. Any other value is a TypeError naming its place
 * (`what`: `run()` or `Policy()`; `path`: where it is): `JSON.stringify` would write a Map, a
 * Set or a class's instance as `{}`, a non-finite number as null and leave a function out, and
 * the call would run under a policy other than the one given. The copy is what is sent, so a
 * getter read twice changes nothing.
 */
function policyCopy (value, what, path, depth = 0) {
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number' && Number.isFinite(value)) return value
  if (value !== null && typeof value === 'object' && depth >= POLICY_DEPTH) {
    throw new TypeError(`${what}: \`${path}\` nests more than ${POLICY_DEPTH} levels deep (is it circular?)`)
  }
  if (Array.isArray(value)) {
    return Array.from(value, (item, i) => policyCopy(item, what, `${path}[${i}]`, depth + 1))
  }
  if (isPlainObject(value)) {
    // No prototype: a key `__proto__` is an entry like any other.
    const copy = Object.create(null)
    for (const key of Object.keys(value)) {
      const item = value[key]
      if (item !== undefined) copy[key] = policyCopy(item, what, `${path}.${key}`, depth + 1)
    }
    return copy
  }
  throw new TypeError(`${what}: \`${path}\` is ${kind(value)}, which no policy holds (its values are tables, arrays, strings, finite numbers and booleans)`)
}

/** What `value` is, for a message: `NaN`, `undefined`, `a function`, `a Map`. */
function kind (value) {
  if (value === undefined || value === null || typeof value === 'number') return String(value)
  if (typeof value !== 'object') return `a ${typeof value}`
  const prototype = Object.getPrototypeOf(value)
  const name = prototype === null ? undefined : prototype.constructor?.name
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object of no plain kind'
}

/** Whether `policy` is a plain object with no keys (what a Policy posted or spread becomes). */
function isEmptyTable (policy) {
  return isPlainObject(policy) && Object.keys(policy).length === 0
}

/**
 * Whether `value` is an object made by `{…}` (in this realm or another: a `vm` context's) or
 * `Object.create(null)`: its prototype, if any, is a realm's `Object.prototype` (one with no
 * prototype of its own, whose own `constructor` is the function it is the prototype of), so that
 * `JSON.stringify` writes all that the caller gave.
 */
function isPlainObject (value) {
  if (value === null || typeof value !== 'object') return false
  const prototype = Object.getPrototypeOf(value)
  if (prototype === null || prototype === Object.prototype) return true
  if (Object.getPrototypeOf(prototype) !== null) return false
  const constructor = Object.getOwnPropertyDescriptor(prototype, 'constructor')?.value
  return typeof constructor === 'function' && constructor.prototype === prototype &&
    constructor.name === 'Object'
}

/** Whether `value` is an object but no plain one (a class's instance, a Map, an array). */
function isOtherObject (value) {
  return value !== null && typeof value === 'object' && !isPlainObject(value)
}

/** The key of a Policy or Script made by its constructor in this thread; a TypeError else. */
function keyOf (key, what) {
  if (key === undefined) throw new TypeError(`run(): \`${what}\` was not made by its constructor`)
  return key
}

/**
 * Call ids: a slot of `Calls.waiting` plus `SLOTS` times the slot's generation, which grows
 * each time the slot is given to a later call (and wraps after `GENERATIONS`). Ids stay below
 * 2 ** 53, exact in a JavaScript number and in the addon's i64.
 */
const SLOTS = 2 ** 24
const GENERATIONS = 2 ** 29

/**
 * The calls of one Palisade in flight, by id: a slot of an array and that slot's generation.
 * The addon delivers their reports in batches (every report queued by then, in order); while any
 * call runs, a timer keeps Node running (the addon's own channel does not).
 *
 * A slot is cleared when its call ends or fails to start, and is then given to a later call
 * under the next generation: a report of an earlier call (one whose start threw after it was
 * running) names an older generation and reaches nobody. (A `Map` from an ever-growing id did
 * the same with a cost V8 showed only under load: it kept about a kilobyte a call alive through
 * young-generation collections, most likely through the tables it outgrew, so that each
 * collection copied megabytes: docs/bench.md, "Reports in recycled buffers; calls in flight in
 * an array".)
 */
class Calls {
  constructor () {
    /** @type {Array<{ id: number } | undefined>} */
    this.waiting = []
    /** Each slot's generation. */
    this.generations = []
    /** Slots of `waiting` whose calls have ended. */
    this.free = []
    this.running = 0
    this.keepAlive = null
  }

  /**
   * Register a call's `{ id, resolve, reject, onEvent, signal, abort, handlers }` (held while
   * it runs), setting its `id`; the id.
   */
  add (entry) {
    let slot
    if (this.free.length > 0) slot = this.free.pop()
    else {
      slot = this.waiting.length
      if (slot === SLOTS) throw new RangeError(`run(): more than ${SLOTS} calls in flight`)
      this.waiting.push(undefined)
      this.generations.push(0)
    }
    entry.id = this.generations[slot] * SLOTS + slot
    if (this.running === 0) this.keepAlive = setInterval(() => {}, 2 ** 31 - 1)
    this.running++
    this.waiting[slot] = entry
    return entry.id
  }

  /** The entry of call `id`, if it is still waiting. */
  entry (id) {
    const entry = this.waiting[id % SLOTS]
    return entry !== undefined && entry.id === id ? entry : undefined
  }

  /** Forget call `id`: it ended, or never started. */
  forget (id) {
    if (this.entry(id) === undefined) return
    const slot = id % SLOTS
    this.waiting[slot] = undefined
    this.generations[slot] = (this.generations[slot] + 1) % GENERATIONS
    this.free.push(slot)
    this.running--
    if (this.running === 0 && this.keepAlive !== null) {
      clearInterval(this.keepAlive)
      this.keepAlive = null
    }
  }

  /**
   * Hand each report of a batch to its call: `parts` is `[n, reports, …, rest, rest, …]`: n
   * texts of reports (`[id, kind, value, …]`, JSON; more than one when their outputs are
   * large), then the rest of each outcome among them, in order. An event goes to `onEvent`, an
   * Outcome (its output or error, and its rest) to `resolve`, the caller's mistake to `reject`.
   */
  deliver (parts) {
    const texts = parts[0]
    let rest = 1 + texts
    for (let t = 1; t <= texts; t++) {
      const reports = JSON.parse(parts[t])
      for (let i = 0; i < reports.length; i += 3) {
        const kind = reports[i + 1]
        // Taken whether or not the call is still waiting, so that each outcome gets its own.
        const more = kind === OUTPUT || kind === FAILURE ? parts[rest++] : undefined
        this.settle(reports[i], kind, reports[i + 2], more)
      }
    }
  }

  /** Hand one report to call `id`, if it is still waiting. */
  settle (id, kind, value, more) {
    const entry = this.entry(id)
    if (entry === undefined) return
    if (kind === EVENT) {
      event(entry.onEvent, value)
      return
    }
    this.forget(id)
    if (entry.abort !== null) {
      // The caller's signal may be hostile: what it throws is its call's alone.
      try { entry.signal.removeEventListener('abort', entry.abort) } catch { /* its own */ }
    }
    if (more !== undefined) entry.resolve(new Outcome(kind === OUTPUT, value, more))
    else entry.reject(new TypeError(value))
  }
}

/**
 * Hand an event to the caller's callback: one that throws, or returns a promise that rejects,
 * misses its event (and leaves no unhandled rejection behind).
 */
function event (onEvent, value) {
  try {
    const result = onEvent(value)
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      result.then(undefined, () => {})
    }
  } catch { /* a failing callback misses its event */ }
}

class Palisade {
  #native
  #calls = new Calls()
  /**
   * The capability handlers, held here and by each call in flight: the addon reaches them
   * weakly, so that a handler that refers to its Palisade makes a cycle V8 can collect (each
   * Palisade reserves some 560 GiB of address space for its instance pool).
   */
  #handlers

  /**
   * @param {{ capabilities?: Record<string, Function>, maxConcurrency?: number,
   *   queueTimeout?: string, auditLog?: string, kvPath?: string }} [options]
   */
  constructor (options = {}) {
    const { capabilities = {}, ...settings } = options
    const handlers = Object.create(null)
    for (const [name, handler] of Object.entries(capabilities)) {
      if (typeof handler !== 'function') {
        throw new TypeError(`capabilities.${name} is not a function`)
      }
      handlers[name] = handler
    }
    const calls = this.#calls
    this.#handlers = handlers
    this.#native = native_(() => new native.NativePalisade(
      JSON.stringify(settings), Object.keys(handlers), dispatcher(new WeakRef(handlers)),
      // Bound, not a closure of this scope (which holds the handlers).
      calls.deliver.bind(calls)))
  }

  /**
   * Run a script in a fresh sandbox; resolves to its Outcome (a failed call is an Outcome
   * with `ok: false`, not a rejection). Rejects with a TypeError for a malformed request.
   */
  run (request) {
    return new Promise((resolve, reject) => {
      if (request === null || typeof request !== 'object') {
        throw new TypeError('run() takes an object: { source | file | script, input, … }')
      }
      let signal, onEvent, policy, script, input, inputJson
      /** @type {Record<string, unknown> | null} */
      let rest = null
      if (hasOthers(request)) ({ signal, onEvent, policy, script, input, inputJson, ...rest } = request)
      else ({ signal, onEvent, policy, script, input, inputJson } = request)
      let policyAt = 0
      if (policy instanceof Policy) policyAt = keyOf(policyKey(policy), 'policy')
      else if (isEmptyTable(policy)) {
        throw new TypeError('run(): `policy` is an empty table: a Policy posted from another thread or spread arrives as one (a Policy belongs to the thread that made it); give the policy\'s keys, or a Policy made here')
      } else if (isOtherObject(policy)) {
        throw new TypeError('run(): `policy` is a Policy, a path, TOML text or a plain object of its tables (a Policy of another copy of this package is none of these)')
      } else if (policy !== null && typeof policy === 'object') (rest ??= {}).policy = policyCopy(policy, 'run()', 'policy')
      else if (policy !== undefined) (rest ??= {}).policy = policy
      if (script !== undefined && !(script instanceof Script)) {
        throw new TypeError('run(): `script` is a Script (Script.fromSource, fromFile, fromComponent)')
      }
      if (onEvent !== undefined && typeof onEvent !== 'function') {
        throw new TypeError('run(): `onEvent` is a function')
      }
      if (signal !== undefined && signal !== null && !(signal instanceof AbortSignal)) {
        throw new TypeError('run(): `signal` is an AbortSignal')
      }
      const scriptAt = script === undefined ? 0 : keyOf(scriptKey(script), 'script')
      const inputText = inputOf(input, inputJson)
      const text = rest === null ? null : requestJson(rest)
      if (text === undefined) throw new TypeError('run(): the request has no JSON form (its toJSON returns undefined)')
      // Read before the call starts: a signal that is not one throws here, not after.
      const aborted = signal ? signal.aborted : false
      const entry = { id: 0, resolve, reject, onEvent, signal, abort: null, handlers: this.#handlers }
      const id = this.#calls.add(entry)
      let call
      try {
        // A signal aborted already cancels the call before it starts: cancelled after the
        // start, a short call could end first, its output delivered to a caller who had
        // aborted.
        const flags = (onEvent !== undefined ? START_EVENTS : 0) | (signal && !aborted ? START_CANCELLABLE : 0) |
          (aborted ? START_CANCELLED : 0)
        call = this.#native.start(text, inputText, policyAt, scriptAt, id, flags)
      } catch (e) {
        this.#calls.forget(id)
        throw e
      }
      if (signal && !aborted) {
        entry.abort = () => call.cancel()
        try {
          signal.addEventListener('abort', entry.abort, { once: true })
        } catch (e) {
          // A call nobody can cancel is not left running.
          call.cancel()
          throw e
        }
      }
    })
  }
}

module.exports = { Palisade, Policy, Script, CapabilityError, PalisadeError }

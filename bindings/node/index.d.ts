// Types of the palisade-sandbox package (docs/node.md).

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Who is calling a capability. */
export interface CallContext {
  /** A fresh id for each call (16 hex digits). */
  call_id: string
  /** The capability being called. */
  capability: string
  /** The name of the policy that governs the call, and the SHA-256 of its text. */
  policy: string
  policy_sha256: string
  /** What the caller attached to the call (`run({ metadata })`). */
  metadata: Json
  /** Whether the payload is the list of the call's arguments (`maia.render(id, view)`). */
  argument_list: boolean
}

/** A capability handler: may be async; a thrown CapabilityError reaches the script with its code. */
export type Handler = (payload: any, context: CallContext) => Json | void | Promise<Json | void>

export interface PalisadeOptions {
  /** Handlers by capability name; the policy's `[capabilities.allow]` grants them to scripts. */
  capabilities?: Record<string, Handler>
  /** Calls at once (and the instance pool's slots). */
  maxConcurrency?: number
  /** How long a call waits for a free slot before `capacity_exhausted`, such as `"10s"`. */
  queueTimeout?: string
  /** Append every gated decision to this file, one JSON object per line. */
  auditLog?: string
  /** The key-value store's SQLite file (`[kv]` policies). */
  kvPath?: string
}

/** A policy as a table (the TOML format's tables as JSON; docs/policy.md). */
export type PolicyTable = { [table: string]: Json }

export interface RunRequest {
  /** A Policy, a policy file's path, TOML text, or a table; the built-in default when absent. */
  policy?: Policy | string | PolicyTable
  /** The script's source (an ES module); or `file`, or `script`. */
  source?: string
  /** The module name of `source`, in stack traces (default `main.js`). */
  name?: string
  /** A script file: an ES module, TypeScript (`.ts`) or a compiled component (`.wasm`). */
  file?: string
  /** A script read once. */
  script?: Script
  /** The export's one argument (default `null`). */
  input?: Json
  /**
   * The export's one argument as JSON text, instead of `input`: a request body or a tool
   * call's arguments as they arrived, read once, in the sandbox (text that is not JSON ends the
   * call as `invalid_input`).
   */
  inputJson?: string
  /** The export's arguments, one each (instead of `input`). */
  args?: Json[]
  /** The export, or method of the default export, to call (default: the default export). */
  export?: string
  /** A shorter deadline than the policy's, such as `"500ms"`. */
  timeout?: string
  /** Less fuel than the policy's `limits.fuel`. */
  fuel?: number
  /** Less memory than the policy's, such as `"32MiB"`. */
  memory?: string
  /** Handed to capability handlers as `context.metadata`. */
  metadata?: Json
  /** The instant the script's clock reads (the policy must set `overrides.now`). */
  now?: Date | string
  /** The seed of `Math.random` (the policy must set `overrides.seed`). */
  seed?: number
  /** `[config]` values for this call (keys in `overrides.config`). */
  config?: Record<string, string>
  /** Files placed in the policy's scratch directory, by name. */
  files?: Record<string, string | ArrayBufferView | ArrayBuffer>
  /** Ends the call as `cancelled` when it aborts. */
  signal?: AbortSignal
  /** Each console line and audit record as the call makes them. */
  onEvent?: (event: RunEvent) => void
}

export type Level = 'log' | 'info' | 'warn' | 'error' | 'debug'

export interface LogLine {
  level: Level
  message: string
}

export interface AuditRecord {
  time_unix_ms: number
  capability: 'capability' | 'http' | 'kv' | 'fs' | 'config'
  target: string
  decision: 'allow' | 'deny'
  rule: string
  bytes_in: number
  bytes_out: number
  duration_us: number
  error?: string
  policy: string
  policy_sha256: string
}

export type RunEvent = ({ type: 'console' } & LogLine) | ({ type: 'audit' } & AuditRecord)

/** The library's error codes (docs/errors.md). */
export type ErrorCode =
  | 'guest_exception' | 'guest_syntax' | 'guest_deadlock' | 'missing_export' | 'bad_output'
  | 'invalid_input' | 'output_too_large' | 'not_compilable' | 'invalid_component' | 'guest_trap'
  | 'fuel_exhausted' | 'timeout' | 'memory_limit' | 'stack_overflow' | 'cancelled'
  | 'invalid_policy' | 'policy_denied' | 'capacity_exhausted' | 'internal'

export interface OutcomeError {
  code: ErrorCode
  message: string
  /** The policy change that would allow the call: `{ key, value }` (value written as TOML). */
  fix: { key: string, value: string } | null
  /** How to recover. */
  fix_note: string
  docs_url: string
  retryable: boolean
  /** For script errors: the exception's name, stack and location. */
  name?: string
  stack?: string | null
  location?: { line: number, column: number } | null
  /** For `policy_denied`: the capability and the rule that refused. */
  capability?: string
  rule?: string
}

export interface Receipt {
  fuel_used: number
  wall_time_us: number
  peak_memory_bytes: number
  console_bytes_dropped: number
  console_lines_dropped: number
  audit_records_dropped: number
  policy: string
  policy_sha256: string
  /** `'last_expression'` when the result was the value of a script's last expression. */
  form?: 'last_expression'
}

interface OutcomeCommon {
  logs: LogLine[]
  audit: AuditRecord[]
  receipt: Receipt
}

/** An Outcome as a plain object with every field, as `palisade run --json` prints it. */
export type OutcomeJson<T = any> =
  | (OutcomeCommon & { ok: true, output: T })
  | (OutcomeCommon & { ok: false, error: OutcomeError, error_id?: string })

/**
 * The Outcome of a call; `T` is what the caller expects the output (a JSON value) to be.
 * `ok`, `output`, `error` and `error_id` are its own fields; `logs`, `audit` and `receipt`
 * are read when first asked for, so a spread copies the former only: `toJSON()` has them all.
 */
export type Outcome<T = any> = WithJson<OutcomeJson<T>>
/** Each form of the Outcome with its own `toJSON`, so that narrowing on `ok` narrows it too. */
type WithJson<O> = O extends any ? O & { toJSON (): O } : never

export class Palisade {
  constructor (options?: PalisadeOptions)
  run<T = any> (request: RunRequest): Promise<Outcome<T>>
}

export class Policy {
  constructor (spec: string | PolicyTable)
  readonly name: string
  readonly sha256: string
}

export class Script {
  private constructor (handle: never)
  static fromSource (source: string, name?: string): Script
  static fromFile (path: string): Script
  static fromComponent (wasm: Uint8Array): Script
  readonly name: string
}

export class CapabilityError extends Error {
  constructor (code: string, message: string, options?: { retryable?: boolean })
  code: string
  retryable: boolean
}

export class PalisadeError extends Error {
  code: ErrorCode
  fix: { key: string, value: string } | null
  fix_note: string
  docs_url: string
  retryable: boolean
}

//! Host-facing guest code that a script cannot bend: a script that replaces, freezes or poisons
//! every global and prototype it can reach, then uses every capability, gets what an untampered
//! script gets. Palisade's globals capture the intrinsics they use before the snapshot and never
//! look up anything a script can change (docs/architecture.md, "The guest").

use crate::support::*;
use crate::upstream::Upstream;
use palisade::{Outcome, Palisade, Policy, Script};
use serde_json::{Value, json};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A Palisade with two host capabilities: `echo` (answers its payload) and `fail` (always errs).
static TAMPER: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(8)
        .kv_path(scratch_dir("tamper-kv").join("kv.sqlite3"))
        .capability("echo", |payload: Value| async move { Ok(payload) })
        .capability("fail", |_| async { Err("the upstream is down".to_owned()) })
        .build()
        .expect("Palisade starts")
});

/// Each run gets its own key-value namespace and scratch folder, so runs start alike.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// A port on 127.0.0.1 that nothing listens on (it was free a moment ago).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A policy that grants every capability: HTTP to the local upstream under `/api/` and to a
/// closed port, the `echo` and `fail` capabilities, two kv buckets, a read-write mount and a
/// config table.
fn granting(port: u16) -> (Policy, std::path::PathBuf, u16) {
    granting_with(port, closed_port())
}

fn granting_with(port: u16, closed: u16) -> (Policy, std::path::PathBuf, u16) {
    let n = RUNS.fetch_add(1, Ordering::SeqCst);
    let scratch = scratch_dir(&format!("tamper-fs-{n}"));
    let policy = policy(&format!(
        r#"
name = "tamper"
[limits]
timeout = "10s"
[http]
allow_private = ["127.0.0.1/32", "::1/128"]
[[http.allow]]
url = "http://localhost:{port}/api/"
methods = ["GET", "POST"]
[[http.allow]]
url = "http://localhost:{closed}/"
[capabilities]
[capabilities.allow.echo]
[capabilities.allow.fail]
[kv]
namespace = "tamper-{n}"
[kv.buckets]
app = "rw"
reference = "ro"
[[fs.mount]]
host = "{}"
guest = "/scratch"
mode = "rw"
[config]
region = "eu-west"
mode = "dry-run"
"#,
        scratch.display()
    ));
    (policy, scratch, closed)
}

/// The originals the summary itself uses, taken before any tampering (in both runs alike).
const ORIGINALS: &str = r#"
const ORIG = {
  Promise, Uint8Array, Headers, Request, Response, URL, Error, TypeError, AbortController, URLSearchParams,
  defineProperty: Object.defineProperty, getPrototypeOf: Object.getPrototypeOf, freeze: Object.freeze,
  byteLength: Function.prototype.call.bind(Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get),
  length: Function.prototype.call.bind(
    Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), "length").get),
};
"#;

/// Replace, freeze or poison every global and prototype a script can: functions that throw,
/// accessors on `Object.prototype` that throw (`then` only counts, as a throwing `then` would
/// reject the script's own promises too), frozen error prototypes, replaced constructors.
const TAMPER_PRELUDE: &str = r#"
const poison = (what) => function () { throw new ORIG.Error("tampered " + what + " was called"); };
const replace = (target, key, what) => {
  try {
    ORIG.defineProperty(target, key, { __proto__: null, value: poison(what), writable: true, configurable: true });
  } catch {}
};
const methods = (target, what, keys) => {
  for (let i = 0; i < keys.length; i++) replace(target, keys[i], "" + what + "." + String(keys[i]));
};
const all = (target) => Reflect.ownKeys(target).filter((k) => k !== "constructor" && k !== "length" && k !== "name" && k !== "prototype");
globalThis.thenReads = 0;
const poisonAccessor = (key) => ORIG.defineProperty(Object.prototype, key, {
  __proto__: null,
  get() { if (key === "then") { globalThis.thenReads++; return undefined; } throw new ORIG.Error("tampered Object.prototype." + key + " was read"); },
  set(_) { throw new ORIG.Error("tampered Object.prototype." + key + " was written"); },
  configurable: true,
});
const ArrayIteratorPrototype = ORIG.getPrototypeOf([][Symbol.iterator]());
const MapIteratorPrototype = ORIG.getPrototypeOf(new Map()[Symbol.iterator]());
const SetIteratorPrototype = ORIG.getPrototypeOf(new Set()[Symbol.iterator]());
const StringIteratorPrototype = ORIG.getPrototypeOf(""[Symbol.iterator]());
const TypedArray = ORIG.getPrototypeOf(Uint8Array);
const targets = [
  [Array.prototype, "Array.prototype"], [ArrayIteratorPrototype, "ArrayIterator"],
  [String.prototype, "String.prototype"], [StringIteratorPrototype, "StringIterator"],
  [Map.prototype, "Map.prototype"], [MapIteratorPrototype, "MapIterator"],
  [Set.prototype, "Set.prototype"], [SetIteratorPrototype, "SetIterator"],
  [WeakMap.prototype, "WeakMap.prototype"], [WeakSet.prototype, "WeakSet.prototype"],
  [Promise.prototype, "Promise.prototype"], [RegExp.prototype, "RegExp.prototype"],
  [TypedArray.prototype, "TypedArray.prototype"], [ArrayBuffer.prototype, "ArrayBuffer.prototype"],
  [Function.prototype, "Function.prototype"], [Number.prototype, "Number.prototype"],
  [TextEncoder.prototype, "TextEncoder.prototype"], [TextDecoder.prototype, "TextDecoder.prototype"],
  [Object, "Object"], [Array, "Array"], [Promise, "Promise"], [Reflect, "Reflect"], [JSON, "JSON"],
  [Number, "Number"], [String, "String"], [Math, "Math"], [Date, "Date"], [Symbol, "Symbol"],
  [ArrayBuffer, "ArrayBuffer"], [TypedArray, "TypedArray"], [Uint8Array, "Uint8Array"],
];
// Collect every key first: the poisoned methods are the ones the collecting needs.
const plan = [];
for (let i = 0; i < targets.length; i++) plan[plan.length] = [targets[i][0], targets[i][1], all(targets[i][0])];
for (const key of ["then", "headers", "method", "body", "signal", "get", "set", "redirect", "status",
  "statusText", "init", "prefix", "cursor", "limit", "recursive", "fix", "code", "name", "message",
  "capability", "rule", "reason", "value", "writable", "enumerable", "configurable", "done", "next",
  "url", "type", "href", "aborted", "once", "capture", "passive", "handleEvent", "transfer", "region",
  "mode", "size", "isFile", "isDirectory", "keys"]) {
  poisonAccessor(key);
}
for (let i = 0; i < plan.length; i++) methods(plan[i][0], plan[i][1], plan[i][2]);
const errors = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError,
  PolicyDeniedError, CapabilityError, KvError, NetworkError, DnsError, ConnectionRefusedError];
for (let i = 0; i < errors.length; i++) ORIG.freeze(errors[i].prototype);
const globals = ["URL", "URLSearchParams", "JSON", "TextEncoder", "TextDecoder", "Headers", "Request",
  "Response", "Promise", "Map", "Set", "WeakMap", "Uint8Array", "ArrayBuffer", "String", "Number",
  "Array", "Object", "Reflect", "Symbol", "Date", "Math", "DOMException", "AbortController", "AbortSignal",
  "Event", "EventTarget", "Error", "TypeError"];
for (let i = 0; i < globals.length; i++) globalThis[globals[i]] = poison(globals[i]);
"#;

/// Uses every capability and every web global a host-facing path runs through, and returns a
/// summary of what each gave. It uses only syntax, the originals in `ORIG` and the globals it
/// tests (and `+`, not template literals, which QuickJS compiles to `String.prototype.concat`),
/// so that tampering can change its result only through Palisade's code.
const SUMMARY: &str = r#"
const describe = (e) => ({
  name: e.name, message: e.message, isError: e instanceof ORIG.Error,
  code: own(e, "code"),
  rule: own(e, "rule"), fix: own(e, "fix"), capability: own(e, "capability"),
});
function own(object, key) {
  for (const k in object) if (k === key) return object[k];
  return null;
}
const caught = async (f) => {
  try { return { ok: await f() }; } catch (e) { return describe(e); }
};
// A Uint8Array of `list`, filled by index: the constructor would iterate the array.
const bytesOf = (list) => {
  const bytes = new ORIG.Uint8Array(list.length);
  for (let i = 0; i < list.length; i++) bytes[i] = list[i];
  return bytes;
};
// Append by defining: the tampering puts setters on Array.prototype's first indices.
const append = (list, value) => ORIG.defineProperty(list, list.length,
  { __proto__: null, value, writable: true, enumerable: true, configurable: true });
const headerList = (headers) => {
  const list = [];
  // (Not `date`, which may differ between the two runs.)
  headers.forEach((value, name) => { if (name !== "date") append(list, "" + name + "=" + value); });
  return list;
};

export default async (input) => {
  const base = input.base;
  // Without a prototype: the tampering puts setters on `Object.prototype` for some of its keys.
  const out = { __proto__: null };

  // fetch, Request, Response, Headers
  const hello = await fetch("" + base + "/api/hello", { headers: { accept: "application/json" } });
  out.hello = {
    status: hello.status, ok: hello.ok, url: hello.url, redirected: hello.redirected,
    type: hello.headers.get("content-type"), has: hello.headers.has("content-type"),
    headers: headerList(hello.headers), body: await hello.json(), used: hello.bodyUsed,
  };
  const echo = await fetch("" + base + "/api/echo", { method: "POST", body: "ping", headers: new ORIG.Headers({ "x-a": "1" }) });
  out.echo = await echo.json();
  const request = new ORIG.Request("" + base + "/api/echo", { method: "post", body: bytesOf([104, 105]) });
  out.request = { method: request.method, url: request.url, redirect: request.redirect };
  out.requestEcho = await (await fetch(request)).text();
  const redirected = await fetch("" + base + "/api/redirect");
  out.redirect = { status: redirected.status, url: redirected.url, redirected: redirected.redirected, body: await redirected.text() };
  const manual = await fetch("" + base + "/api/redirect", { redirect: "manual" });
  out.manual = { status: manual.status, location: manual.headers.get("location") };
  const controller = new ORIG.AbortController();
  const signalled = await fetch("" + base + "/api/hello", { signal: controller.signal });
  out.signalled = ORIG.byteLength(await signalled.arrayBuffer());
  const bytes = await (await fetch("" + base + "/api/hello")).bytes();
  out.bytes = [ORIG.length(bytes), bytes[0], bytes[ORIG.length(bytes) - 1]];
  out.aborted = await caught(() => {
    const c = new ORIG.AbortController();
    c.abort();
    return fetch("" + base + "/api/hello", { signal: c.signal });
  });
  out.refused = await caught(() => fetch("" + base + "/private"));
  out.connectionRefused = await caught(() => fetch(input.closed));
  out.refusedHost = await caught(() => fetch("http://example.invalid/api/"));
  out.scheme = await caught(() => fetch("ftp://localhost/"));
  out.badUrl = await caught(() => fetch("not a url"));
  const local = new ORIG.Response("made here", { status: 201, headers: { "x-b": "2" } });
  out.local = {
    status: local.status, ok: local.ok, headers: headerList(local.headers),
    clone: await local.clone().text(), text: await local.text(), used: local.bodyUsed,
  };
  const made = ORIG.Response.json({ a: [1, 2] });
  out.responseJson = { headers: headerList(made.headers), body: await made.json() };
  out.redirectResponse = headerList(ORIG.Response.redirect("" + base + "/x?y=1", 307).headers);
  out.immutable = await caught(() => hello.headers.set("x", "y"));
  const h = new ORIG.Headers([["b", "2"], ["a", "1"], ["set-cookie", "c=1"], ["set-cookie", "d=2"]]);
  h.append("a", "3");
  h.delete("b");
  out.headers = { list: headerList(h), a: h.get("a"), cookies: h.getSetCookie() };
  const url = new ORIG.URL("/p/q?r=1#s", base);
  url.pathname = "/t";
  out.url = { href: url.href, host: url.host, search: url.search, origin: url.origin };

  const params = new ORIG.URLSearchParams("?a=1&b=2+3&c=%E2%82%AC&a=4&e=%FF");
  params.append("d", "x y!~");
  params.delete("b");
  params.set("a", "5");
  params.sort();
  const paramList = [];
  params.forEach((value, name) => append(paramList, name + "=" + value));
  out.params = {
    text: params.toString(), all: params.getAll("c"), has: [params.has("d"), params.has("b")],
    list: paramList, size: params.size, get: params.get("e"),
  };
  const record = new ORIG.URLSearchParams({ k: "v", "sp ace": "1" });
  out.record = record.toString();
  const withQuery = new ORIG.URL(base + "/api/echo?x=1");
  withQuery.searchParams.append("y", "2 3");
  out.searchParams = [withQuery.href, withQuery.searchParams.get("x")];
  out.formEcho = await (await fetch(base + "/api/echo", { method: "POST", body: params })).json();
  const events = [];
  const ac = new ORIG.AbortController();
  ac.signal.addEventListener("abort", (e) => append(events, "listener " + e.type));
  ac.signal.onabort = (e) => append(events, "onabort " + e.type);
  ac.abort();
  out.events = { events, aborted: ac.signal.aborted, reason: ac.signal.reason.name };

  // The capability bridge
  out.bridge = await host.echo({ n: 1, list: [1, "two"] });
  out.bridgeNull = await host.echo();
  out.capabilityError = await caught(() => host.fail({}));
  out.capabilityDenied = await caught(() => host.nope({}));

  // kv
  await kv.set("s", "text");
  await kv.set("j", { a: [1, 2] });
  await kv.set("b", bytesOf([0, 255]));
  const b = await kv.getBytes("b");
  out.kv = {
    s: await kv.get("s"), j: await kv.getJSON("j"), b: [b[0], b[1], ORIG.length(b)],
    has: await kv.has("j"), missing: await kv.get("nope"), list: await kv.list(),
    prefixed: await kv.list({ prefix: "j" }), limited: await kv.list({ limit: 1 }),
  };
  await kv.delete("s");
  out.kvDeleted = await kv.has("s");
  out.kvDenied = await caught(() => kv.bucket("reference").set("x", "y"));
  out.kvUngranted = await caught(() => kv.bucket("other").get("x"));
  out.kvError = await caught(() => kv.get(""));
  out.kvKey = await caught(() => kv.get(1));

  // fs
  await fs.mkdir("/scratch/d/e", { recursive: true });
  await fs.writeFile("/scratch/d/a.txt", "hello");
  await fs.writeFile("/scratch/d/b.txt", bytesOf([104, 105]));
  out.fs = {
    read: await fs.readFile("/scratch/d/a.txt"), bytes: await fs.readFile("/scratch/d/b.txt"),
    list: await fs.readdir("/scratch/d"), stat: await fs.stat("/scratch/d/a.txt"),
  };
  out.fsError = await caught(() => fs.readFile("/scratch/missing"));
  out.fsOutside = await caught(() => fs.readFile("/etc/passwd"));
  await fs.rm("/scratch/d", { recursive: true });
  out.fsGone = await fs.readdir("/scratch");

  // config
  out.config = { region: config.get("region"), missing: config.get("missing"), all: config.getAll() };

  // console
  console.log("log", { a: 1 }, [1, "two"], 3, null);
  console.warn("warn", new ORIG.Error("shown"));
  console.error(new KvError("kv"), new PolicyDeniedError({ capability: "x", rule: "r", reason: "why", fix: null }));

  // Palisade's error classes
  out.classes = [
    describe(new KvError("k")), describe(new NetworkError("n", "x")), describe(new DnsError("d")),
    describe(new CapabilityError("c", "m")),
    describe(new PolicyDeniedError({ capability: "x", rule: "r", reason: "why", fix: "f" })),
  ];

  // timers
  const order = [];
  const push = (x) => append(order, x);
  await new ORIG.Promise((resolve) => {
    setTimeout((x, y) => push("t2:" + x + y), 2, "x", "y");
    const dropped = setTimeout(() => push("dropped"), 1);
    clearTimeout(dropped);
    setTimeout(() => { push("t5"); resolve(); }, 5);
    queueMicrotask(() => push("micro"));
    push("sync");
  });
  out.timers = order;

  // Web globals the host-facing ones are built on
  out.clone = structuredClone({ a: [1, { b: 2 }], d: "x" });
  out.base64 = [btoa("hi"), atob("aGk=")];
  out.random = ORIG.length(crypto.getRandomValues(new ORIG.Uint8Array(4)));
  out.uuid = crypto.randomUUID().length;
  return out;
};
"#;

/// Run the summary against `up`, with or without the tampering prelude first.
async fn run_summary(up: &Upstream, closed: u16, tampered: bool) -> Outcome {
    let (policy, _scratch, closed) = granting_with(up.port(), closed);
    let prelude = if tampered { TAMPER_PRELUDE } else { "" };
    let source = format!("{ORIGINALS}{prelude}{SUMMARY}");
    let input = json!({
        "base": format!("http://localhost:{}", up.port()),
        "closed": format!("http://localhost:{closed}/"),
    })
    .to_string();
    TAMPER
        .run(&policy, &Script::new("summary.js", source), &input)
        .await
}

fn paths(up: &Upstream) -> Vec<String> {
    up.seen().into_iter().map(|s| s.path).collect()
}

fn lines(outcome: &Outcome) -> Vec<String> {
    outcome
        .logs
        .iter()
        .map(|line| format!("{:?} {}", line.level, line.message))
        .collect()
}

/// Issue 22: the one combined comparison.
#[tokio::test]
async fn a_script_that_tampers_with_every_global_gets_what_an_untampered_one_gets() {
    let up = Upstream::start().await;
    let closed = closed_port();
    let plain = run_summary(&up, closed, false).await;
    let plain_paths = paths(&up);
    let tampered = run_summary(&up, closed, true).await;
    let tampered_paths = paths(&up).split_off(plain_paths.len());
    let expected: Value = serde_json::from_str(output(&plain)).unwrap();
    let got: Value = serde_json::from_str(output(&tampered)).unwrap();
    for (key, value) in expected.as_object().unwrap() {
        assert_eq!(&got[key], value, "`{key}` differs after tampering");
    }
    assert_eq!(got, expected);
    assert_eq!(lines(&tampered), lines(&plain));
    assert_eq!(tampered_paths, plain_paths);

    // And the values are the right ones.
    assert_eq!(
        expected["hello"]["body"],
        json!({"hello": "world"}),
        "{expected}"
    );
    assert_eq!(
        expected["echo"],
        json!({"method": "POST", "length": 4, "body": "ping"})
    );
    assert_eq!(
        expected["requestEcho"],
        json!(r#"{"body":"hi","length":2,"method":"POST"}"#)
    );
    assert_eq!(expected["redirect"]["redirected"], json!(true));
    assert_eq!(expected["refused"]["name"], json!("PolicyDeniedError"));
    assert_eq!(expected["refused"]["rule"], json!("http.allow"));
    assert_eq!(
        expected["connectionRefused"]["name"],
        json!("ConnectionRefusedError")
    );
    assert_eq!(expected["bridge"], json!({"n": 1, "list": [1, "two"]}));
    assert_eq!(
        expected["capabilityError"]["name"],
        json!("CapabilityError")
    );
    assert_eq!(
        expected["capabilityDenied"]["name"],
        json!("PolicyDeniedError")
    );
    assert_eq!(expected["kvDenied"]["name"], json!("PolicyDeniedError"));
    assert_eq!(expected["kvError"]["name"], json!("KvError"));
    assert_eq!(expected["fsError"]["code"], json!("ENOENT"));
    assert_eq!(expected["config"]["region"], json!("eu-west"));
    assert_eq!(expected["timers"], json!(["sync", "micro", "t2:xy", "t5"]));
    assert_eq!(
        expected["params"]["text"],
        json!("a=5&c=%E2%82%AC&d=x+y%21%7E&e=%EF%BF%BD")
    );
    assert_eq!(
        expected["formEcho"]["body"],
        json!("a=5&c=%E2%82%AC&d=x+y%21%7E&e=%EF%BF%BD")
    );
    assert_eq!(
        expected["events"]["events"],
        json!(["listener abort", "onabort abort"])
    );
    let names: Vec<&Value> = expected["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(
        names,
        [
            "KvError",
            "NetworkError",
            "DnsError",
            "CapabilityError",
            "PolicyDeniedError"
        ]
    );
    assert_next_call_works().await;
}

/// Issue 22: `fetch` parsed its input with the global `URL` at call time, so a replaced `URL`
/// sent a request (and a DNS lookup) to a URL the script never passed.
#[tokio::test]
async fn a_replaced_url_does_not_steer_fetch() {
    let up = Upstream::start().await;
    let (policy, _scratch, _closed) = granting(up.port());
    let source = format!(
        r#"export default async () => {{
          const Real = URL;
          globalThis.URL = class extends Real {{
            constructor() {{ super("http://localhost:{port}/api/echo"); }}
          }};
          const r = await fetch("http://localhost:{port}/api/hello");
          return [r.url, await r.json()];
        }};"#,
        port = up.port()
    );
    let outcome = TAMPER
        .run(&policy, &Script::new("url.js", source), "null")
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!([
            format!("http://localhost:{}/api/hello", up.port()),
            {"hello": "world"}
        ])
    );
    let paths: Vec<String> = up.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(paths, ["/api/hello"]);
    assert_next_call_works().await;
}

/// Issue 22: the error classes assigned `this.name`, so after `Object.freeze(Error.prototype)`
/// each became `TypeError: 'name' is read-only` (or kept the name `Error`).
#[tokio::test]
async fn error_classes_keep_their_names_after_error_prototype_is_frozen() {
    let up = Upstream::start().await;
    let (policy, _scratch, closed) = granting(up.port());
    let source = format!(
        r#"export default async () => {{
          "use strict";
          Object.freeze(Error.prototype);
          Object.freeze(TypeError.prototype);
          const names = [];
          for (const f of [
            () => fetch("http://localhost:{port}/private"),
            () => host.nope(),
            () => host.fail(),
            () => kv.get(""),
            () => kv.bucket("reference").set("a", "b"),
            () => fetch("http://localhost:{closed}/"),
          ]) {{
            try {{ await f(); names.push("no error"); }} catch (e) {{ names.push(e.name); }}
          }}
          return names;
        }};"#,
        port = up.port()
    );
    let outcome = TAMPER
        .run(&policy, &Script::new("frozen.js", source), "null")
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!([
            "PolicyDeniedError",
            "PolicyDeniedError",
            "CapabilityError",
            "KvError",
            "PolicyDeniedError",
            "ConnectionRefusedError"
        ])
    );
    assert_next_call_works().await;
}

/// An uncaught refusal still ends the call as `policy_denied` after the tampering.
#[tokio::test]
async fn an_uncaught_refusal_after_tampering_is_policy_denied() {
    let up = Upstream::start().await;
    let (policy, _scratch, _closed) = granting(up.port());
    let source = format!(
        "{ORIGINALS}{TAMPER_PRELUDE}\nexport default async () => {{ await fetch('http://localhost:{}/private'); }};",
        up.port()
    );
    let outcome = TAMPER
        .run(&policy, &Script::new("uncaught.js", source), "null")
        .await;
    assert_eq!(code(&outcome), "policy_denied");
    assert!(up.seen().is_empty());
    assert_next_call_works().await;
}

/// Accessors on `Array.prototype`'s first indices: once one is there, QuickJS stores every new
/// element of every array through the prototypes, so the arrays the guest's natives make for
/// its preludes are made by definition instead. (Not in the combined test: QuickJS's own
/// `JSON.stringify` stores through them too, so a script that does this cannot serialize an
/// object, with or without Palisade.)
#[tokio::test]
async fn index_accessors_on_array_prototype_do_not_reach_the_hosts_arrays() {
    let up = Upstream::start().await;
    let (policy, _scratch, _closed) = granting(up.port());
    let source = format!(
        r#"{ORIGINALS}
for (let i = 0; i < 4; i++) {{
  ORIG.defineProperty(Array.prototype, i, {{
    __proto__: null,
    get() {{ throw new ORIG.Error("tampered Array.prototype[" + i + "] was read"); }},
    set(_) {{ throw new ORIG.Error("tampered Array.prototype[" + i + "] was written"); }},
    configurable: true,
  }});
}}
export default async () => {{
  const out = {{ __proto__: null }};
  const r = await fetch("http://localhost:{port}/api/hello");
  out.status = r.status;
  out.type = r.headers.get("content-type");
  out.body = await r.text();
  out.url = new URL("/a?b=1", "http://localhost:{port}/").href;
  await kv.set("k", "v");
  out.kv = await kv.get("k");
  out.keys = (await kv.list()).keys;
  await fs.writeFile("/scratch/f.txt", "x");
  out.files = await fs.readdir("/scratch");
  out.stat = (await fs.stat("/scratch/f.txt")).size;
  out.config = config.getAll().region;
  out.echo = await host.echo("text");
  try {{ await fetch("http://localhost:{port}/private"); }} catch (e) {{ out.refused = e.name + " " + e.rule; }}
  return out;
}};"#,
        port = up.port()
    );
    let outcome = TAMPER
        .run(&policy, &Script::new("indices.js", source), "null")
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!({
            "status": 200, "type": "application/json", "body": r#"{"hello":"world"}"#,
            "url": format!("http://localhost:{}/a?b=1", up.port()), "kv": "v", "keys": ["k"],
            "files": ["f.txt"], "stat": 1, "config": "eu-west", "echo": "text",
            "refused": "PolicyDeniedError http.allow",
        })
    );
    assert_next_call_works().await;
}

/// Palisade's globals reach each other through internals taken before the snapshot, not
/// through their public members: with every member of the prototypes of `Headers`, `Request`,
/// `Response`, `URL`, `URLSearchParams`, `Event`, `EventTarget`, `AbortSignal` and
/// `AbortController` replaced by accessors that throw, `fetch` still sends what it was given
/// (headers, a form body, a signal), follows a redirect and reports a refusal.
#[tokio::test]
async fn fetch_does_not_use_the_public_members_of_the_other_globals() {
    let up = Upstream::start().await;
    let (policy, _scratch, _closed) = granting(up.port());
    let source = format!(
        r#"{ORIGINALS}
const getter = (C, key) => Function.prototype.call.bind(Object.getOwnPropertyDescriptor(C.prototype, key).get);
const status = getter(Response, "status"), url = getter(Response, "url"), signalOf = getter(AbortController, "signal");
const json = Function.prototype.call.bind(Response.prototype.json);
const text = Function.prototype.call.bind(Response.prototype.text);
for (const C of [Headers, Request, Response, URL, URLSearchParams, Event, EventTarget, AbortSignal, AbortController]) {{
  for (const key of Reflect.ownKeys(C.prototype)) {{
    if (key === "constructor" || !Object.getOwnPropertyDescriptor(C.prototype, key).configurable) continue;
    Object.defineProperty(C.prototype, key, {{
      get() {{ throw new Error("tampered " + C.name + "." + String(key) + " was read"); }},
      set(_) {{ throw new Error("tampered " + C.name + "." + String(key) + " was written"); }},
      configurable: true,
    }});
  }}
}}
export default async () => {{
  const base = "http://localhost:{port}";
  const controller = new AbortController();
  const sent = await fetch(base + "/api/echo", {{
    method: "POST", headers: new Headers({{ authorization: "Bearer t" }}), body: new URLSearchParams("a=1&b=2 3"),
    signal: signalOf(controller),
  }});
  const redirected = await fetch(new Request(base + "/api/redirect"));
  let refused;
  try {{ await fetch(base + "/private"); }} catch (e) {{ refused = e.name + " " + e.rule; }}
  return [status(sent), await json(sent), status(redirected), url(redirected), await text(redirected), refused];
}};"#,
        port = up.port()
    );
    let outcome = TAMPER
        .run(&policy, &Script::new("members.js", source), "null")
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!([
            200,
            {"method": "POST", "length": 9, "body": "a=1&b=2+3"},
            200,
            format!("http://localhost:{}/api/hello", up.port()),
            r#"{"hello":"world"}"#,
            "PolicyDeniedError http.allow"
        ])
    );
    let paths: Vec<String> = up.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(paths, ["/api/echo", "/api/redirect", "/api/hello"]);
    assert_eq!(up.seen()[0].authorization.as_deref(), Some("Bearer t"));
    assert_next_call_works().await;
}

/// The refusing `kv`, `fs`, `config` and `host` of a policy that does not grant them (issue 22)
/// refuse alike after the tampering prelude: same error class, rule, fix and capability.
#[tokio::test]
async fn refusing_capability_globals_are_not_bent_by_tampering() {
    let uses = r#"
const describe = (e) => [e.name, e instanceof ORIG_DENIED, e.rule, e.fix, e.capability];
const caught = async (f) => { try { await f(); return "allowed"; } catch (e) { return describe(e); } };
export default async () => [
  await caught(() => kv.get("a")),
  await caught(() => kv.bucket("r").set("a", "b")),
  await caught(() => fs.readFile("/data/in.json")),
  await caught(() => config.get("region")),
  await caught(() => host.do(1)),
];
"#;
    let keep = "const ORIG_DENIED = PolicyDeniedError;\n";
    // The plain guest (no grant), and the full guest (only `[config]`, which is real there).
    for (p, refused) in [
        (Policy::builtin_default(), 5),
        (policy("[config]\nregion = \"eu\"\n"), 4),
    ] {
        let mut results = Vec::new();
        for prelude in ["", TAMPER_PRELUDE] {
            let source = format!("{ORIGINALS}{keep}{prelude}{uses}");
            let outcome = PALISADE
                .run(&p, &Script::new("refusing.js", source), "null")
                .await;
            results.push(output(&outcome).to_owned());
        }
        assert_eq!(results[0], results[1]);
        let got: serde_json::Value = serde_json::from_str(&results[0]).unwrap();
        let denied = got
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r[0] == "PolicyDeniedError" && r[1] == true && r[3].is_string())
            .count();
        assert_eq!(denied, refused, "{got}");
    }
    assert_next_call_works().await;
}

/// The results `tests/fixtures/js/promise_tampering.js` gets for each operation, untampered.
fn promise_tampering_results() -> Value {
    json!({
        "pipeTo": "010203,0405,closed",
        "pipeThrough": "010203,0405,closed",
        "teeA": "010203,0405,closed",
        "teeB": "010203,0405,closed",
        "pipeAfterRelease": "010203,0405,closed",
        "text": "\u{1}\u{2}\u{3}\u{4}\u{5}",
        "arrayBuffer": "0102030405",
        "json": r#"{"a":[1,2]}"#,
        "blob": 5,
        "blobText": "blob!",
        "fetch": 200,
        "fetchText": "hello data",
        "digest": "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4",
        "key": "secret",
        "sign": "b1233f49f84f338622ceac8f971f3f7ebbece7cac69b12307930f6c4c36d9579",
        "byob": "false:010203",
        "byobEnd": "true:16",
        "bodyByob": "false:627974657321",
        "bodyByobEnd": "true:16",
    })
}

/// Issue 24 (containment): the guest chains its own promises as the specs' PerformPromiseThen
/// does, looking up nothing a script can replace. A script replaces `Promise.prototype.then`,
/// `Promise.prototype.constructor` or `Promise[Symbol.species]` (counting, or throwing), gives
/// the promise `pipeTo` returns and a reader's `closed` an own `constructor` and freezes them,
/// then pipes, tees, reads bodies, reads a byte stream and a body with BYOB readers (whose
/// `closed` gets the own `constructor` too), fetches a `data:` URL, digests and signs, and (in the
/// full guest, with a local upstream) POSTs a stream as a chunked request body: every result is
/// the untampered one and none of the tampering ran. `Object.prototype.then` is read only where
/// the specs themselves resolve the script's promise with an object: `arrayBuffer()`, `json()`
/// (an object here), `blob()`, `fetch()`, `importKey`, `digest` and `sign`, once each, the four
/// BYOB `read()`s' `{ value, done }` results, and the upload's `fetch()`. In the plain guest and
/// in the full one.
#[tokio::test]
async fn internal_promises_look_up_nothing_a_script_can_replace() {
    let script = fixture("promise_tampering.js");
    let up = Upstream::start().await;
    let full = policy(&format!(
        "[config]\nregion = \"eu\"\n[http]\nallow_private = [\"127.0.0.1/32\", \"::1/128\"]\n\
         [[http.allow]]\nurl = \"http://localhost:{}/api/\"\nmethods = [\"POST\"]\n",
        up.port()
    ));
    let upload = format!("http://localhost:{}/api/echo", up.port());
    let mut full_results = promise_tampering_results();
    full_results["upload"] = json!(200);
    full_results["uploadText"] = json!(r#"{"body":"abcde","length":5,"method":"POST"}"#);
    let cases = [
        (
            Policy::builtin_default(),
            None,
            promise_tampering_results(),
            11,
        ),
        (full, Some(upload), full_results, 12),
    ];
    for (p, upload, expected, object_thens) in cases {
        let run = |tamper: Option<&str>| {
            let (p, script) = (p.clone(), script.clone());
            let input = match (tamper, &upload) {
                (None, None) => "null".to_owned(),
                (tamper, upload) => json!({ "tamper": tamper, "upload": upload }).to_string(),
            };
            async move {
                let outcome = PALISADE.run(&p, &script, &input).await;
                let text: String = serde_json::from_str(output(&outcome)).unwrap();
                serde_json::from_str::<Value>(&text).unwrap()
            }
        };
        let untampered = run(None).await;
        assert_eq!(untampered["out"], expected);
        assert_eq!(untampered["calls"], json!({}));
        for kind in ["then", "constructor", "species", "poison"] {
            let got = run(Some(kind)).await;
            assert_eq!(got["out"], expected, "{kind}");
            assert_eq!(got["calls"], json!({}), "{kind}");
        }
        let got = run(Some("objectThen")).await;
        assert_eq!(got["out"], expected);
        assert_eq!(got["calls"], json!({ "objectThen": object_thens }));
    }
    assert_next_call_works().await;
}

/// A failure inside the guest's promise plumbing reaches the script as itself after a script
/// made `then`, `constructor` and `Symbol.species` throw: a body read from a source that errors,
/// and a pipe into a sink that throws, each returned to the host unawaited, end the call as
/// `guest_exception` with the source's and the sink's own errors.
#[tokio::test]
async fn failures_in_internal_promises_survive_poisoned_promise_lookups() {
    let poison = r#"
const poison = (what) => { throw new Error("tampered " + what + " was called"); };
Promise.prototype.then = function () { poison("then"); };
Object.defineProperty(Promise.prototype, "constructor", { get() { poison("constructor"); } });
Object.defineProperty(Promise, Symbol.species, { get() { poison("species"); } });
"#;
    let cases = [
        (
            "export default () => new Response(new ReadableStream({ pull(c) { c.error(new TypeError('the source failed')); } })).text();",
            "uncaught TypeError: the source failed",
        ),
        (
            "export default () => new ReadableStream({ start(c) { c.enqueue(1); } }).pipeTo(new WritableStream({ write() { throw new RangeError('the sink failed'); } }));",
            "uncaught RangeError: the sink failed",
        ),
    ];
    for (body, message) in cases {
        let source = format!("{poison}{body}");
        let outcome = run_source(&source, "null").await;
        assert_eq!(code(&outcome), "guest_exception", "{body}");
        let error = outcome.result.as_ref().unwrap_err().to_string();
        assert!(error.starts_with(message), "{error}");
    }
    assert_next_call_works().await;
}

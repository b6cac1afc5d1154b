//! The web-platform globals every script has: URL, URLSearchParams, Headers, Request/Response,
//! AbortController/AbortSignal, structuredClone, crypto, TextEncoder/TextDecoder.

use crate::support::*;
use palisade::Script;
use serde_json::{Value, json};

async fn eval(source: &str) -> Value {
    let outcome = run_source(source, "null").await;
    serde_json::from_str(output(&outcome)).unwrap()
}

#[tokio::test]
async fn url_follows_the_whatwg_parser() {
    let got = eval(
        r#"export default () => {
          const u = new URL("HTTP://User:Pw@Example.COM:8080/a/./b/../c?x=1&y=2#frag");
          const rel = new URL("../d?q", "https://example.com/a/b/c");
          u.searchParams.append("z", "a b");
          const v = new URL("http://0x7f.1/%2e%2e/x");
          return {
            href: u.href, host: u.host, hostname: u.hostname, port: u.port, path: u.pathname,
            search: u.search, hash: u.hash, user: u.username, origin: u.origin,
            rel: rel.href, v: v.href, can: [URL.canParse("nope"), URL.canParse("/x", "http://a")],
            bad: (() => { try { new URL("http://[::1"); } catch (e) { return e.name; } })(),
            json: JSON.stringify({ u: new URL("https://a.example/") }),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "href": "http://User:Pw@example.com:8080/a/c?x=1&y=2&z=a+b#frag",
            "host": "example.com:8080", "hostname": "example.com", "port": "8080",
            "path": "/a/c", "search": "?x=1&y=2&z=a+b", "hash": "#frag", "user": "User",
            "origin": "http://example.com:8080",
            "rel": "https://example.com/a/d?q", "v": "http://127.0.0.1/x",
            "can": [false, true], "bad": "TypeError",
            "json": "{\"u\":\"https://a.example/\"}",
        })
    );
}

#[tokio::test]
async fn url_search_params_parse_and_serialize() {
    let got = eval(
        r#"export default () => {
          const p = new URLSearchParams("?a=1&b=%20x+y&a=2&c=%E2%82%AC");
          p.sort();
          p.set("d", "é&=");
          return { s: p.toString(), all: p.getAll("a"), b: p.get("b"), has: p.has("c"), size: p.size,
                   pairs: [...new URLSearchParams({ k: "v", n: 1 })] };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "s": "a=1&a=2&b=+x+y&c=%E2%82%AC&d=%C3%A9%26%3D",
            "all": ["1", "2"], "b": " x y", "has": true, "size": 5,
            "pairs": [["k", "v"], ["n", "1"]],
        })
    );
}

#[tokio::test]
async fn headers_requests_and_responses_behave_as_in_fetch() {
    let got = eval(
        r#"export default async () => {
          const h = new Headers({ "Content-Type": "text/plain" });
          h.append("X-A", "1"); h.append("x-a", "2");
          const bad = (() => { try { h.set("bad name", "v"); } catch (e) { return e.name; } })();
          const r = new Response(JSON.stringify({ ok: 1 }), { status: 201, headers: h });
          const body = await r.json();
          const used = (() => r.bodyUsed)();
          const again = await r.text().catch((e) => e.name);
          const req = new Request("https://example.com/x", { method: "post", body: "hi" });
          const getBody = (() => { try { new Request("https://a.example/", { body: "x" }); } catch (e) { return e.name; } })();
          const j = Response.json([1, 2]);
          return { entries: [...h], bad, status: r.status, ok: r.ok, body, used, again,
                   method: req.method, reqText: await req.text(), getBody,
                   jType: j.headers.get("content-type"), j: await j.json() };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "entries": [["content-type", "text/plain"], ["x-a", "1, 2"]],
            "bad": "TypeError", "status": 201, "ok": true, "body": {"ok": 1}, "used": true,
            "again": "TypeError", "method": "POST", "reqText": "hi", "getBody": "TypeError",
            "jType": "application/json", "j": [1, 2],
        })
    );
}

#[tokio::test]
async fn structured_clone_keeps_types_and_cycles_and_refuses_functions() {
    let got = eval(
        r#"export default () => {
          const o = { d: new Date(0), m: new Map([[1, { x: 1 }]]), s: new Set([1, 2]),
                      b: new Uint8Array([1, 2, 3]), r: /a+/g, big: 10n };
          o.self = o;
          const c = structuredClone(o);
          const fn = (() => { try { structuredClone({ f() {} }); } catch (e) { return e.name; } })();
          return { same: c === o, cycle: c.self === c, date: c.d instanceof Date && c.d.getTime() === 0,
                   map: c.m.get(1).x, set: [...c.s], bytes: [...c.b], re: c.r.source + c.r.flags,
                   big: typeof c.big, fn };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "same": false, "cycle": true, "date": true, "map": 1, "set": [1, 2],
            "bytes": [1, 2, 3], "re": "a+g", "big": "bigint", "fn": "DataCloneError",
        })
    );
}

#[tokio::test]
async fn crypto_is_random_per_call_and_seeded_under_determinism() {
    let source = r#"export default () => {
      const a = crypto.getRandomValues(new Uint32Array(4));
      const id = crypto.randomUUID();
      const big = (() => { try { crypto.getRandomValues(new Uint8Array(70000)); } catch (e) { return e.name; } })();
      return { a: [...a], id, v4: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id), big };
    };"#;
    let first = eval(source).await;
    let second = eval(source).await;
    assert_eq!(first["v4"], true);
    assert_eq!(first["big"], "QuotaExceededError");
    assert_ne!(first["a"], second["a"]);
    assert_ne!(first["id"], second["id"]);

    let seeded = policy("[determinism]\nclock = \"fixed\"\nseed = 7\n");
    let script = Script::new("crypto.js", source);
    let one = PALISADE.run(&seeded, &script, "null").await;
    let two = PALISADE.run(&seeded, &script, "null").await;
    assert_eq!(output(&one), output(&two));
}

#[tokio::test]
async fn abort_controllers_and_text_codecs_work() {
    let got = eval(
        r#"export default async () => {
          const c = new AbortController();
          const seen = [];
          c.signal.addEventListener("abort", () => seen.push(c.signal.reason.name));
          c.abort();
          const t = AbortSignal.timeout(10);
          await new Promise((resolve) => t.addEventListener("abort", resolve));
          const bytes = new TextEncoder().encode("héllo");
          return { seen, aborted: c.signal.aborted, timeout: t.reason.name,
                   len: bytes.length, text: new TextDecoder().decode(bytes) };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({ "seen": ["AbortError"], "aborted": true, "timeout": "TimeoutError", "len": 6, "text": "héllo" })
    );
}

#[tokio::test]
async fn text_decoder_knows_every_whatwg_encoding_and_streams() {
    let got = eval(
        r#"export default () => {
          const bytes = (...b) => new Uint8Array(b);
          const decode = (label, b, options) => new TextDecoder(label, options).decode(b);
          const thrown = (f) => { try { f(); return "no error"; } catch (e) { return e.name; } };
          const stream = new TextDecoder("utf-16le");
          const streamed = [stream.decode(bytes(0x41), { stream: true }),
            stream.decode(bytes(0x00, 0x3D, 0xD8), { stream: true }), stream.decode(bytes(0x00, 0xDE))];
          const target = new Uint8Array(4);
          const into = new TextEncoder().encodeInto("a\u00e9\u{1F600}", target);
          return {
            names: [" Shift_JIS\n", "latin1", "GBK", "big5", "euc-kr", "utf-16"].map((l) => new TextDecoder(l).encoding),
            sjis: decode("shift_jis", bytes(0x82, 0xA0, 0x82, 0xA2)),
            latin1: decode("iso-8859-1", bytes(0x63, 0x61, 0x66, 0xE9)),
            euckr: decode("euc-kr", bytes(0xC7, 0xD1)),
            utf16be: decode("utf-16be", bytes(0xFE, 0xFF, 0x00, 0x68, 0x00, 0x69)),
            keepBom: decode("utf-8", bytes(0xEF, 0xBB, 0xBF, 0x61), { ignoreBOM: true }).length,
            replaced: decode("utf-8", bytes(0x61, 0xFF, 0x62)),
            fatal: thrown(() => decode("utf-8", bytes(0xFF), { fatal: true })),
            verticalTab: thrown(() => new TextDecoder("\vutf-8")),
            replacement: thrown(() => new TextDecoder("iso-2022-kr")),
            streamed,
            into: [into.read, into.written, Array.from(target)],
            surrogate: Array.from(new TextEncoder().encode("\ud800")),
            url: new URL("https://a.example/\ud800").pathname,
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "names": ["shift_jis", "windows-1252", "gbk", "big5", "euc-kr", "utf-16le"],
            "sjis": "あい",
            "latin1": "café",
            "euckr": "한",
            "utf16be": "hi",
            "keepBom": 2,
            "replaced": "a\u{FFFD}b",
            "fatal": "TypeError",
            "verticalTab": "RangeError",
            "replacement": "RangeError",
            "streamed": ["", "A", "\u{1F600}"],
            "into": [2, 3, [0x61, 0xC3, 0xA9, 0]],
            "surrogate": [0xEF, 0xBF, 0xBD],
            "url": "/%EF%BF%BD",
        })
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn dom_exceptions_carry_legacy_codes_and_web_apis_throw_them() {
    let got = eval(
        r#"export default () => {
          const caught = (f) => { try { f(); } catch (e) {
            return [e instanceof DOMException, e.name, e.code, Object.keys(e).length]; } };
          const e = new DOMException("m", { name: "AbortError", cause: 1 });
          return {
            atob: caught(() => atob("a")),
            floats: caught(() => crypto.getRandomValues(new Float32Array(1))),
            quota: caught(() => crypto.getRandomValues(new Uint8Array(65537))),
            clone: caught(() => structuredClone(() => 1)),
            options: [e.name, e.message, e.code, e.cause, Object.hasOwn(e, "message")],
            constants: [DOMException.INDEX_SIZE_ERR, DOMException.prototype.DATA_CLONE_ERR],
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "atob": [true, "InvalidCharacterError", 5, 0],
            "floats": [true, "TypeMismatchError", 17, 0],
            "quota": [true, "QuotaExceededError", 22, 0],
            "clone": [true, "DataCloneError", 25, 0],
            "options": ["AbortError", "m", 20, 1, false],
            "constants": [1, 25],
        })
    );
}

#[tokio::test]
async fn structured_clone_transfers_buffers_and_keeps_an_errors_cause() {
    let got = eval(
        r#"export default () => {
          const buffer = new Uint8Array([1, 2, 3]).buffer;
          const view = new Uint8Array(buffer, 1);
          const copy = structuredClone({ buffer, view }, { transfer: [buffer] });
          const error = structuredClone(new RangeError("outer", { cause: { inner: [1] } }));
          const twice = (() => { try { structuredClone(1, { transfer: [buffer] }); } catch (e) { return e.name; } })();
          return {
            detached: buffer.byteLength,
            copied: Array.from(new Uint8Array(copy.buffer)),
            sameBuffer: copy.view.buffer === copy.buffer,
            view: Array.from(copy.view),
            cause: [error.name, error.cause, Object.keys(error)],
            twice,
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "detached": 0,
            "copied": [1, 2, 3],
            "sameBuffer": true,
            "view": [2, 3],
            "cause": ["RangeError", {"inner": [1]}, []],
            "twice": "DataCloneError",
        })
    );
}

#[tokio::test]
async fn structured_clone_transfers_a_message_port() {
    // HTML's transfer steps: the new port is entangled with the old one's other end, the old
    // one is detached; a port travels in a message's transfer list and arrives in `ports`.
    let got = eval(
        r#"export default async () => {
          const name = (f) => { try { f(); return "no error"; } catch (e) { return `${e.name}: ${e.message}`; } };
          const { port1, port2 } = new MessageChannel();
          const copy = structuredClone(port2, { transfer: [port2] });
          const first = new Promise((resolve) => (port1.onmessage = (e) => resolve(e.data)));
          copy.postMessage("ohai");
          const again = name(() => structuredClone(port2, { transfer: [port2] }));
          const plain = name(() => structuredClone({ port: port1 }));
          const self = name(() => port1.postMessage(1, [port1]));
          const other = new MessageChannel();
          other.port1.postMessage("queued before the move");
          const carried = new Promise((resolve) => (copy.onmessage = resolve));
          port1.postMessage({ port: other.port2 }, [other.port2]);
          const event = await carried;
          const moved = event.data.port;
          const queued = new Promise((resolve) => (moved.onmessage = (e) => resolve(e.data)));
          const through = new Promise((resolve) => (other.port1.onmessage = (e) => resolve(e.data)));
          moved.postMessage("through");
          return {
            first: await first, again, plain, self,
            isPort: [copy instanceof MessagePort, copy !== port2, moved instanceof MessagePort],
            ports: [event.ports.length, event.ports[0] === moved],
            queued: await queued, through: await through,
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "first": "ohai",
            "again": "DataCloneError: A detached MessagePort cannot be transferred.",
            "plain": "DataCloneError: MessagePort object could not be cloned.",
            "self": "DataCloneError: A port cannot transfer itself.",
            "isPort": [true, true, true],
            "ports": [1, true],
            "queued": "queued before the move",
            "through": "through",
        })
    );
}

/// Issue 38, item 25, and issue 46: a view out of bounds of its resized buffer is refused with a
/// `DataCloneError`, a length-tracking view clones as a length-tracking view, and the buffer
/// the check resizes is left as it was.
#[tokio::test]
async fn regression_38_25_structured_clone_refuses_out_of_bounds_views() {
    let got = eval(
        r#"export default () => {
          const attempt = (v) => { try { structuredClone(v); return "cloned"; } catch (e) { return e.name; } };
          const rab = new ArrayBuffer(16, { maxByteLength: 32 });
          new Uint8Array(rab).set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
          const fixed = new Uint8Array(rab, 4, 8), tracking = new Uint16Array(rab, 4);
          const view = new DataView(rab, 2), fixedView = new DataView(rab, 2, 4);
          const copy = structuredClone({ fixed, tracking, view, fixedView });
          copy.fixed.buffer.resize(24);
          const full = new ArrayBuffer(8, { maxByteLength: 8 });
          const [t, f] = structuredClone([new Uint16Array(full), new Uint16Array(full, 0, 4)]);
          t.buffer.resize(4);
          rab.resize(6);
          const at6 = [fixed, tracking, fixedView, view].map(attempt);
          rab.resize(3);
          const at3 = [tracking, view, fixedView].map(attempt);
          return {
            lengths: [copy.fixed.length, copy.tracking.length, copy.view.byteLength, copy.fixedView.byteLength],
            full: [t.length, f.length], at6, at3, bytes: [...new Uint8Array(rab)],
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            // The fixed views keep their lengths; the tracking ones grew with the copied buffer.
            "lengths": [8, 10, 22, 4],
            "full": [2, 0],
            "at6": ["DataCloneError", "cloned", "cloned", "cloned"],
            "at3": ["DataCloneError", "cloned", "DataCloneError"],
            "bytes": [1, 2, 3],
        })
    );
}

/// Issue 46: `MessagePort.close()` detaches the port, `performance` is an `EventTarget`, `Blob`
/// converts its parts as it reads them and `slice` rounds its bounds as `[Clamp]` does.
/// `ReadableStream.from` still refuses a string: its argument is a WebIDL `async iterable`, which
/// must be an object (the current WPT file, vendored, says so; an older one expected strings).
#[tokio::test]
async fn issue_46_ports_performance_streams_and_blobs_follow_their_standards() {
    let got = eval(
        r#"export default async () => {
          const { port1 } = new MessageChannel();
          port1.close();
          let closed;
          try { structuredClone(port1, { transfer: [port1] }); closed = "transferred"; } catch (e) { closed = e.name; }
          let heard = 0;
          performance.addEventListener("mark", () => heard++);
          performance.dispatchEvent(new Event("mark"));
          const order = [];
          const buffer = new Uint8Array([65]);
          const blob = new Blob([
            { toString() { order.push("first"); buffer[0] = 66; return "x"; } },
            buffer,
            { toString() { order.push("second"); return "y"; } },
          ]);
          const abc = new Blob(["abcdef"]);
          const slices = await Promise.all([[0.5, 2.5], [1.5, 3.5], [-1.5], [Infinity], [-Infinity, 1]]
            .map((args) => abc.slice(...args).text()));
          return {
            closed, heard, isTarget: performance instanceof EventTarget, now: typeof performance.now(),
            order, blob: await blob.text(), slices,
            fromString: (() => { try { ReadableStream.from("ab"); } catch (e) { return e.name; } })(),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "closed": "DataCloneError", "heard": 1, "isTarget": true, "now": "number",
            "order": ["first", "second"], "blob": "xBy",
            "slices": ["ab", "cd", "ef", "", "a"],
            "fromString": "TypeError",
        })
    );
}

/// Issue 46: `console` is a namespace object, and counts and times by label.
#[tokio::test]
async fn issue_46_console_is_a_namespace_that_counts_and_times() {
    let p = policy("[determinism]\nclock = \"fixed\"\n");
    let source = r#"export default () => {
      const proto = Object.getPrototypeOf(console);
      const shape = {
        tag: Object.prototype.toString.call(console),
        global: Object.getOwnPropertyDescriptor(globalThis, "console").enumerable,
        proto: [Object.getOwnPropertyNames(proto).length, Object.getPrototypeOf(proto) === Object.prototype],
        methods: Object.keys(console),
      };
      console.count(); console.count(); console.count("x"); console.countReset(); console.count();
      console.countReset("nope");
      console.time("t"); console.time("t"); console.timeLog("t", "at", { a: 1 }); console.timeEnd("t");
      console.timeEnd("t");
      let thrown;
      try { console.count({ toString() { throw new Error("label"); } }); } catch (e) { thrown = e.message; }
      try { console.time(Symbol()); } catch (e) { thrown += " " + e.name; }
      return { shape, thrown };
    };"#;
    let outcome = PALISADE
        .run(&p, &Script::new("console.js", source), "null")
        .await;
    let got: Value = serde_json::from_str(output(&outcome)).unwrap();
    assert_eq!(
        got,
        json!({
            "shape": {
                "tag": "[object console]", "global": false, "proto": [0, true],
                "methods": ["debug", "info", "log", "warn", "error", "count", "countReset", "time", "timeLog", "timeEnd"],
            },
            "thrown": "label TypeError",
        })
    );
    let lines: Vec<String> = outcome
        .logs
        .iter()
        .map(|line| format!("{:?} {}", line.level, line.message))
        .collect();
    assert_eq!(
        lines,
        [
            "Info default: 1",
            "Info default: 2",
            "Info x: 1",
            "Info default: 1",
            "Warn Count for 'nope' does not exist",
            "Warn Timer 't' already exists",
            "Info t: 0.000ms at {\"a\":1}",
            "Info t: 0.000ms",
            "Warn Timer 't' does not exist",
        ]
    );
}

/// Issue 46: a `data:` URL's `Content-Type` is its MIME type parsed and serialized, and a HEAD
/// request's response has no body.
#[tokio::test]
async fn issue_46_data_urls_normalize_their_mime_type() {
    let got = eval(
        r#"export default async () => {
          const type = async (url) => (await fetch(url)).headers.get("content-type");
          const head = await fetch("data:,hello", { method: "HEAD" });
          return {
            types: await Promise.all([
              "data:Text/HTML;Charset=\"utf-8\",x", "data:text/plain ; BASE64,eA==", "data:;charset=UTF-8,x",
              "data:image/gif;a=b;a=c;bad,x", "data:nonsense,x", "data:,x",
            ].map(type)),
            base64: await (await fetch("data:text/plain ; BASE64,aGk=")).text(),
            head: [head.status, head.body, await head.text()],
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "types": [
                "text/html;charset=utf-8", "text/plain", "text/plain;charset=UTF-8",
                "image/gif;a=b", "text/plain;charset=US-ASCII", "text/plain;charset=US-ASCII",
            ],
            "base64": "hi",
            "head": [200, null, ""],
        })
    );
}

/// Issue 46: a private EC or Ed25519 JWK must carry its public half, matching `d`, and a `d` of
/// its curve's length; otherwise `importKey` is a `DataError`.
#[tokio::test]
async fn issue_46_private_jwks_are_checked_whole() {
    let got = eval(
        r#"export default async () => {
          const attempt = (jwk, algorithm, usages) =>
            crypto.subtle.importKey("jwk", jwk, algorithm, true, usages).then(() => "imported", (e) => e.name);
          const ec = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey(
            { name: "ECDSA", namedCurve: "P-256" }, true, ["sign"])).privateKey);
          const ed = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey(
            { name: "Ed25519" }, true, ["sign"])).privateKey);
          const other = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey(
            { name: "Ed25519" }, true, ["sign"])).privateKey);
          const P256 = { name: "ECDSA", namedCurve: "P-256" };
          const cut = (text) => text.slice(0, -2);
          return {
            ec: await Promise.all([
              ec, { ...ec, x: undefined }, { ...ec, y: undefined }, { ...ec, d: cut(ec.d) }, { ...ec, y: ec.x },
            ].map((jwk) => attempt(jwk, P256, ["sign"]))),
            ed: await Promise.all([
              ed, { ...ed, x: undefined }, { ...ed, d: cut(ed.d) }, { ...ed, x: other.x },
            ].map((jwk) => attempt(jwk, "Ed25519", ["sign"]))),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "ec": ["imported", "DataError", "DataError", "DataError", "DataError"],
            "ed": ["imported", "DataError", "DataError", "DataError"],
        })
    );
}

/// Issue 46: an Ed25519 JWK names its algorithm: `exportKey` writes `alg: "Ed25519"`, and
/// `importKey` takes `"Ed25519"` or `"EdDSA"` and refuses any other `alg` (another case too) with
/// a `DataError`; X25519 ignores `alg` and exports none.
#[tokio::test]
async fn issue_46_ed25519_jwks_carry_and_check_alg() {
    let got = eval(
        r#"export default async () => {
          const ed = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey(
            { name: "Ed25519" }, true, ["sign"])).privateKey);
          const x = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey(
            { name: "X25519" }, true, ["deriveBits"])).privateKey);
          const attempt = (jwk, name, usages) =>
            crypto.subtle.importKey("jwk", jwk, name, true, usages).then(
              async (key) => (await crypto.subtle.exportKey("jwk", key)).alg ?? "none", (e) => e.name);
          return {
            exported: [ed.alg, x.alg ?? "none"],
            ed: await Promise.all([undefined, "Ed25519", "EdDSA", "ed25519", "ED25519", "EDDSA", "ES256"]
              .map((alg) => attempt({ ...ed, alg }, "Ed25519", ["sign"]))),
            x: await Promise.all([undefined, "x25519", "anything"]
              .map((alg) => attempt({ ...x, alg }, "X25519", ["deriveBits"]))),
          };
        };"#,
    )
    .await;
    assert_eq!(
        got,
        json!({
            "exported": ["Ed25519", "none"],
            "ed": ["Ed25519", "Ed25519", "Ed25519", "DataError", "DataError", "DataError", "DataError"],
            "x": ["none", "none", "none"],
        })
    );
}

/// Issue 46: `console.log` of a value with ten million elements, or of a string of ten million
/// characters, formats only the line the console keeps (`limits.console`, 64 KiB by default):
/// the call spends a small, fixed amount of fuel on it, the line is the start of the value's
/// JSON cut within the cap, and the host's truncation marker follows. Then a normal call.
#[tokio::test]
async fn issue_46_console_log_of_ten_million_elements_stops_at_the_cap() {
    // The default policy, with a deadline no loaded machine reaches.
    let p = policy("[limits]\ntimeout = \"60s\"\n");
    let cap = p.limits().console.0 as usize;
    for (value, start) in [
        ("new Array(10_000_000)", "null,"),
        ("new Uint8Array(10_000_000)", ""),
        ("{ text: 'x'.repeat(10_000_000) }", "x"),
    ] {
        let quiet = log_once(&p, value, "").await.receipt.fuel_used;
        let outcome = log_once(&p, value, "console.log('v', v);").await;
        let spent = outcome.receipt.fuel_used - quiet;
        // Formatting 64 KiB of the value, not 10 million elements: under 0.1% of the budget.
        assert!(
            spent < p.limits().fuel / 1000,
            "{value}: console.log spent {spent} fuel"
        );
        let [line, marker] = &outcome.logs[..] else {
            panic!("{value}: {:?}", outcome.logs);
        };
        // The line and the host's record of it fit the cap, and they nearly fill it.
        assert!(line.message.len() + 32 <= cap, "{}", line.message.len());
        assert!(line.message.len() + 32 > cap - 16, "{}", line.message.len());
        let whole = match start {
            "null," => format!("v [{}", "null,".repeat(cap / 5 + 1)),
            "" => {
                let members: Vec<String> = (0..cap / 6 + 1).map(|i| format!("\"{i}\":0")).collect();
                format!("v {{{}", members.join(","))
            }
            _ => format!("v {{\"text\":\"{}", "x".repeat(cap)),
        };
        assert!(
            whole.starts_with(&line.message),
            "{value}: {}",
            &line.message[..80]
        );
        assert_eq!(
            marker.message,
            format!(
                "[palisade] console output truncated: {} bytes of text and 0 whole line(s) over \
                 the {cap}-byte cap were dropped",
                outcome.receipt.console_bytes_dropped
            )
        );
    }
    let outcome = run_source(
        "export default () => { console.log('fine', [1, 2]); return 2; };",
        "null",
    )
    .await;
    assert_eq!(output(&outcome), "2");
    assert_eq!(outcome.logs.len(), 1);
    assert_eq!(outcome.logs[0].message, "fine [1,2]");
}

/// A call that makes `value` and runs `log` over it (`v`).
async fn log_once(p: &palisade::Policy, value: &str, log: &str) -> palisade::Outcome {
    let source = format!("export default () => {{ const v = {value}; {log} return 1; }};");
    let outcome = PALISADE
        .run(p, &Script::new("big.js", source.as_str()), "null")
        .await;
    assert_eq!(output(&outcome), "1", "{value}: {:?}", outcome.error());
    outcome
}

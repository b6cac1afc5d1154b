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

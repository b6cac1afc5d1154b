//! The plain guest: calls whose policy grants no capability run in a build of the guest that
//! imports none (no `wasi:http`, `wasi:keyvalue`, `wasi:config`, `wasi:filesystem` or capability
//! calls), with the same globals and the same refusals as the full guest.

use crate::support::*;
use palisade::{Decision, Script};

/// The interfaces a guest component imports, by name.
fn imports(path: &str) -> Vec<String> {
    let wasm = std::fs::read(root().join(path)).expect("the committed guest");
    let mut depth = 0usize;
    let mut names = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&wasm) {
        match payload.expect("the guest parses") {
            wasmparser::Payload::ModuleSection { .. }
            | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentImportSection(section) if depth == 0 => {
                for import in section {
                    names.push(import.expect("an import").name.name.to_owned());
                }
            }
            _ => {}
        }
    }
    names
}

#[test]
fn the_plain_guest_imports_no_capability() {
    let full = imports("host/guest/palisade-guest.wasm");
    let plain = imports("host/guest/palisade-guest-plain.wasm");
    for interface in [
        "wasi:http/outgoing-handler@0.2.12",
        "wasi:http/types@0.2.12",
        "wasi:keyvalue/store@0.2.0-draft",
        "wasi:config/store@0.2.0-rc.1",
        "wasi:filesystem/types@0.2.6",
        "wasi:filesystem/preopens@0.2.6",
    ] {
        assert!(full.iter().any(|i| i == interface), "full guest: {full:?}");
        assert!(
            !plain.iter().any(|i| i == interface),
            "plain guest: {plain:?}"
        );
    }
    // Every interface the plain guest imports, the full guest imports too.
    for interface in &plain {
        assert!(
            full.contains(interface),
            "{interface} only in the plain guest"
        );
    }
}

/// The global object's own names: the capability globals (`kv`, `fs`, `config`, `host`) exist
/// under every policy, granted or refusing.
const GLOBAL_NAMES: &str = "export default () => Object.getOwnPropertyNames(globalThis).sort();";

/// Run `source` under the default policy (the plain guest) and under a policy that grants only
/// `[config]` (the full guest, with no `[http]` either): a script must not be able to tell them
/// apart.
async fn in_both_guests(source: &str) -> (String, String) {
    let script = Script::new("both.js", source);
    let plain = PALISADE.run(&roomy(), &script, "null").await;
    let full = PALISADE
        .run(&policy("[config]\nregion = \"eu\"\n"), &script, "null")
        .await;
    (output(&plain).to_owned(), output(&full).to_owned())
}

#[tokio::test]
async fn both_guests_define_the_same_globals() {
    let (plain, full) = in_both_guests(GLOBAL_NAMES).await;
    assert_eq!(plain, full);
    for name in [
        "fetch",
        "PolicyDeniedError",
        "CapabilityError",
        "KvError",
        "setTimeout",
        "kv",
        "fs",
        "config",
        "host",
    ] {
        assert!(plain.contains(&format!("\"{name}\"")), "{name}");
    }
}

#[tokio::test]
async fn fetch_without_http_is_refused_audited_and_replayed_by_the_host() {
    // The plain guest has no `wasi:http`: its `fetch` reaches the host's gate through
    // `capability.unsent-request`, with the same refusal, fix and audit record as a request.
    let source = "export default async () => {\
        try { await fetch('http://127.0.0.1:9/data?x=1', { method: 'POST', body: 'hi' }); }\
        catch (e) { return [e.name, e instanceof PolicyDeniedError, e.rule, e.fix]; } };";
    let script = Script::new("fetch.js", source);
    let default = roomy();
    let (outcome, transcript) = PALISADE.run_recorded(&default, &script, "null").await;
    let expected =
        r#"["PolicyDeniedError",true,"http","[[http.allow]] url = \"http://127.0.0.1:9/\""]"#;
    assert_eq!(output(&outcome), expected);
    assert_eq!(outcome.audit.len(), 1);
    let record = &outcome.audit[0];
    assert_eq!(record.decision, Decision::Deny);
    assert_eq!(record.rule, "http");
    assert_eq!(record.target, "http://127.0.0.1:9/data?x=1");
    let replayed = PALISADE.replay(&default, &script, &transcript).await;
    assert_eq!(output(&replayed), expected);
    assert_eq!(replayed.audit.len(), 1);
    // Uncaught, it ends the call as `policy_denied`, as in the full guest.
    let uncaught = run_source(
        "export default () => fetch('https://example.com/');",
        "null",
    )
    .await;
    assert_eq!(code(&uncaught), "policy_denied");
}

#[tokio::test]
async fn a_refused_fetch_settles_in_the_same_turn_of_the_event_loop_in_both_guests() {
    // A zero-delay timer fires before the refusal arrives, and an abort right after `fetch`
    // wins over it, in either guest.
    let (plain, full) = in_both_guests(
        "export default async () => {\
           const raced = await Promise.race([\
             fetch('http://127.0.0.1:9/').catch(() => 'fetch'),\
             new Promise((r) => setTimeout(() => r('timer'), 0)),\
           ]);\
           const c = new AbortController();\
           const p = fetch('http://127.0.0.1:9/', { signal: c.signal });\
           c.abort();\
           const aborted = await p.catch((e) => e.name);\
           return [raced, aborted];\
         };",
    )
    .await;
    assert_eq!(plain, full);
    assert_eq!(plain, r#"["timer","AbortError"]"#);
}

#[tokio::test]
async fn requests_wasi_http_would_refuse_fail_alike_in_both_guests() {
    // Checks `wasi:http` makes before the gate (forbidden and malformed headers, URLs it cannot
    // carry) fail the same way without it, before any refusal is recorded.
    let (plain, full) = in_both_guests(
        "const attempt = (url, init) => fetch(url, init).then(\
           () => 'sent', (e) => [e.name, e.code ?? null, e.rule ?? null]);\
         export default async () => [\
           await attempt('http://127.0.0.1:9/', { headers: { connection: 'close' } }),\
           await attempt('http://127.0.0.1:9/', { headers: { 'content-length': 'x' } }),\
           await attempt('http://a{b.example/'),\
           await attempt('http://127.0.0.1:9/'),\
         ];",
    )
    .await;
    assert_eq!(plain, full);
    assert!(
        plain.starts_with(r#"[["NetworkError","header",null],"#),
        "{plain}"
    );
    assert!(
        plain.ends_with(r#"["PolicyDeniedError",null,"http"]]"#),
        "{plain}"
    );
}

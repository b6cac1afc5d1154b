//! Each seed's flow over HTTP, as docs/server.md shows its request: a per-user fetch allowlist
//! sent with the call (admitted within the key's ceiling, refused past it), the capability
//! bridge's handler seeing the actor in metadata, an agent-style bare script answering its
//! last expression. (The `run_js` seed's `timeoutMs` and the sandbox daemon's
//! create/write/exec/stop are `serve_options`.)

use crate::serve::{assert_error, config, key_hash, start};
use crate::upstream::Upstream;
use http::StatusCode;
use serde_json::{Value, json};

/// The ceiling of the tests' keys: the upstream's `/api/` on 127.0.0.1, GET only, and a
/// roomier deadline than the default for calls expected to pass.
fn ceiling(port: u16) -> String {
    format!(
        "name = \"fetcher\"\n[limits]\ntimeout = \"20s\"\n[http]\nallow_private = \
         [\"127.0.0.1/32\"]\nallow = [{{ url = \"http://127.0.0.1:{port}/api/\" }}]\n"
    )
}

/// A keys file: `acme` with the ceiling `fetcher`, `beta` with none.
fn keys(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("seed-keys.toml");
    std::fs::write(
        &path,
        format!(
            "[[tenant]]\nname = \"acme\"\nkey_sha256 = \"{}\"\npolicies = [\"default\"]\n\
             inline_ceiling = \"fetcher\"\n\n[[tenant]]\nname = \"beta\"\nkey_sha256 = \"{}\"\n\
             policies = [\"default\"]\n",
            key_hash("acme-key"),
            key_hash("beta-key"),
        ),
    )
    .unwrap();
    path
}

/// The per-user allowlist of ada: one path of the upstream.
fn ada(port: u16) -> Value {
    json!({"limits": {"timeout": "20s"}, "http": {"allow_private": ["127.0.0.1/32"],
        "allow": [{"url": format!("http://127.0.0.1:{port}/api/hello")}]}})
}

const FETCH: &str = "export default async (path) => (await fetch(path)).json()";

/// The `run_js` seed's per-user allowlist: a policy sent with the call reaches its host; the
/// same key's ceiling bounds it (a wider path, a longer deadline and a secret are each
/// `policy_denied` naming the key, with the fit as the fix); a key without a ceiling is
/// refused with how to get one; the policy's SHA-256 names it in the receipt.
#[tokio::test]
async fn serve_admits_an_inline_allowlist_within_the_keys_ceiling() {
    let up = Upstream::start().await;
    let port = up.port();
    let mut config = config("seeds-inline", false);
    let dir = config.policies.clone().unwrap();
    std::fs::write(dir.join("fetcher.toml"), ceiling(port)).unwrap();
    config.keys = Some(keys(dir.parent().unwrap()));
    let server = start(config);
    let run = |key: &'static str, body: Value| server.call("POST", "/v1/run", Some(key), body);
    let hello = format!("http://127.0.0.1:{port}/api/hello");
    let body = json!({"policy": ada(port), "source": FETCH, "input": hello});
    let ran = run("acme-key", body.clone()).await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    assert_eq!(ran.body["output"], json!({"hello": "world"}));
    let text = serde_json::to_string(&ada(port)).unwrap();
    assert_eq!(ran.body["receipt"]["policy"], "inline");
    assert_eq!(
        ran.body["receipt"]["policy_sha256"],
        crate::support::sha256_hex(text.as_bytes())
    );
    // Within the ceiling, the inline policy tightens: another path of the same host is refused.
    let echo = format!("http://127.0.0.1:{port}/api/echo");
    let narrowed = run(
        "acme-key",
        json!({"policy": ada(port), "source": FETCH, "input": echo}),
    )
    .await;
    assert_error(&narrowed, 403, "policy_denied");
    // The same policy as TOML text.
    let toml = format!(
        "[limits]\ntimeout = \"20s\"\n[http]\nallow_private = [\"127.0.0.1/32\"]\n\
         allow = [{{ url = \"http://127.0.0.1:{port}/api/hello\" }}]\n"
    );
    let ran = run(
        "acme-key",
        json!({"policy_toml": toml, "source": FETCH, "input": hello}),
    )
    .await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    past_the_ceiling(&server, port).await;
    let beta = run("beta-key", body).await;
    assert_error(&beta, 403, "policy_denied");
    assert_eq!(
        beta.body["error"]["fix"]["policy"], "default",
        "{}",
        beta.body
    );
    server.assert_fine(Some("acme-key")).await;
    server.assert_fine(Some("beta-key")).await;
}

/// Each grant past `fetcher`: 403 `policy_denied`, the key as the rule, the fit as the fix.
async fn past_the_ceiling(server: &crate::serve::Server, port: u16) {
    let wider = json!({"limits": {"timeout": "20s"}, "http": {"allow_private": ["127.0.0.1/32"],
        "allow": [{"url": format!("http://127.0.0.1:{port}/")}]}});
    let longer = json!({"limits": {"timeout": "21s"}});
    let secret = json!({"secrets": {"T": {"env": "HOME"}}});
    for (policy, key) in [
        (wider, "http.allow"),
        (longer, "limits.timeout"),
        (secret, "secrets"),
    ] {
        let body = json!({"policy": policy, "source": "export default 1"});
        let refused = server.call("POST", "/v1/run", Some("acme-key"), body).await;
        assert_error(&refused, 403, "policy_denied");
        let message = refused.body["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("({key})")), "{message}");
        assert!(message.contains("fetcher"), "{message}");
        assert!(
            refused.body["error"]["fix"]["policy"]
                .as_object()
                .is_some_and(|f| f.contains_key(key)),
            "{}",
            refused.body
        );
    }
    let huge = json!({"policy": {"description": "x".repeat(70_000)}, "source": "export default 1"});
    let refused = server.call("POST", "/v1/run", Some("acme-key"), huge).await;
    assert_error(&refused, 400, "invalid_input");
    let fits = server
        .call(
            "POST",
            "/v1/run",
            Some("acme-key"),
            json!({"policy": {"limits": {"timeout": "20s"}}, "source": "export default 2"}),
        )
        .await;
    assert_eq!(fits.body["output"], 2, "{}", fits.body);
}

/// A server without a keys file nor `--inline-ceiling` admits a policy sent with a call within
/// the built-in default policy: one that tightens it runs, one that grants a host (or a longer
/// deadline) is 403 `policy_denied` naming the key, then a normal call runs.
#[tokio::test]
async fn serve_without_keys_takes_the_builtin_default_as_the_ceiling() {
    let server = start(config("seeds-inline-keyless", false));
    let tighter = json!({"policy": {"limits": {"timeout": "900ms", "fuel": 100_000_000}},
        "source": "export default 3"});
    let ran = server.call("POST", "/v1/run", None, tighter).await;
    assert_eq!(ran.body["output"], 3, "{}", ran.body);
    let host = json!({"http": {"allow_private": ["127.0.0.1/32"],
        "allow": [{"url": "http://127.0.0.1:9/"}]}});
    let longer = json!({"limits": {"timeout": "1h"}});
    for (policy, key) in [(host, "http"), (longer, "limits.timeout")] {
        let body = json!({"policy": policy, "source": "export default 1"});
        let refused = server.call("POST", "/v1/run", None, body).await;
        assert_error(&refused, 403, "policy_denied");
        let message = refused.body["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("({key})")), "{message}");
        assert!(message.contains("`default`"), "{message}");
    }
    server.assert_fine(None).await;
}

/// `--inline-ceiling` bounds the policies a key sends only when the key may name that policy:
/// `beta` (policies `default` only) gets no ceiling from a server-wide `fetcher` and is refused
/// with rule `inline_ceiling`; `acme` keeps its own; then a normal call runs.
#[tokio::test]
async fn serve_inline_ceiling_reaches_only_keys_that_may_use_it() {
    let mut config = config("seeds-inline-allowlist", false);
    let dir = config.policies.clone().unwrap();
    std::fs::write(dir.join("fetcher.toml"), ceiling(9)).unwrap();
    config.keys = Some(keys(dir.parent().unwrap()));
    config.inline_ceiling = Some("fetcher".to_owned());
    let server = start(config);
    let body = json!({"policy": {"limits": {"timeout": "2s"}}, "source": "export default 4"});
    let refused = server
        .call("POST", "/v1/run", Some("beta-key"), body.clone())
        .await;
    assert_error(&refused, 403, "policy_denied");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("inline_ceiling"),
        "{}",
        refused.body
    );
    let ran = server.call("POST", "/v1/run", Some("acme-key"), body).await;
    assert_eq!(ran.body["output"], 4, "{}", ran.body);
    server.assert_fine(Some("beta-key")).await;
}

/// A session may run under a policy sent with its creation; each run admits it again, and the
/// receipt names it.
#[tokio::test]
async fn serve_sessions_take_an_inline_policy() {
    let mut config = config("seeds-inline-session", false);
    config.inline_ceiling = Some("box".to_owned());
    let server = start(config);
    let policy = json!({"limits": {"timeout": "2s"}, "fs": {"scratch": {"guest": "/scratch",
        "quota": "4KiB", "max_files": 10}}});
    let id = server
        .session(None, json!({"policy": policy, "name": "inline"}))
        .await;
    let file = json!({"path": "/scratch/a.txt", "content": "hi"});
    let wrote = server.fs(None, &id, "write", file).await;
    assert_eq!(wrote.status, StatusCode::OK, "{}", wrote.body);
    let read = "export default () => fs.readFile('/scratch/a.txt', 'utf8')";
    let ran = server.run_in(None, &id, json!({ "source": read })).await;
    assert_eq!(ran.body["output"], "hi", "{}", ran.body);
    assert_eq!(ran.body["receipt"]["policy"], "inline");
    let wide = json!({"fs": {"scratch": {"guest": "/scratch", "quota": "1MiB"}}});
    let refused = server
        .call("POST", "/v1/sessions", None, json!({"policy": wide}))
        .await;
    assert_error(&refused, 403, "policy_denied");
    assert!(refused.body["error"]["fix"]["policy"]["fs.scratch.quota"].is_string());
    server.assert_fine(None).await;
}

/// The capability bridge seed: the handler (a `forward` URL here) sees the actor the caller
/// names in `metadata`, and the server's own `tenant` over any the caller forges.
#[tokio::test]
async fn serve_bridge_handlers_see_the_actor() {
    let up = Upstream::start().await;
    let config = config("seeds-bridge", false);
    let dir = config.policies.clone().unwrap();
    std::fs::write(
        dir.join("bridge.toml"),
        format!(
            "name = \"bridge\"\n[limits]\ntimeout = \"20s\"\n[capabilities]\nglobal = \"maia\"\n\
             [capabilities.allow.echo]\nforward = \"http://127.0.0.1:{}/api/echo\"\n",
            up.port()
        ),
    )
    .unwrap();
    let server = start(config);
    let ran = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "bridge", "metadata": {"actor": "co_z123", "tenant": "forged"},
                "source": "export default async () => maia.echo({ op: 'read' })"}),
        )
        .await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    let seen = up.seen();
    let headers: std::collections::HashMap<_, _> = seen[0].palisade.iter().cloned().collect();
    let metadata: Value = serde_json::from_str(&headers["palisade-metadata"]).unwrap();
    assert_eq!(metadata["actor"], "co_z123");
    assert_eq!(metadata["tenant"], "local");
    let refused = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "bridge", "source": "export default async () => maia.delete(1)"}),
        )
        .await;
    assert_error(&refused, 403, "policy_denied");
    server.assert_fine(None).await;
}

/// An agent-style script (no export, top-level `await`, a last expression) answers that
/// expression over HTTP, and the receipt says which form ran.
#[tokio::test]
async fn serve_runs_a_bare_script_for_its_last_expression() {
    let server = start(config("seeds-bare", false));
    let source = "const r = await Promise.resolve({ items: [1, 2, 3] });\nr.items.length";
    let ran = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "source": source}),
        )
        .await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    assert_eq!(ran.body["output"], 3);
    assert_eq!(ran.body["receipt"]["form"], "last_expression");
    let broken = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "source": "const a = ;\na"}),
        )
        .await;
    assert_error(&broken, 422, "guest_syntax");
    server.assert_fine(None).await;
}

/// The action-runtime seed's app, declaring a JSON Schema for one action's `params`.
const TYPED: &str = r#"globalThis.jace = {
  manifest: { name: "typed", version: "1.0.0", params: {
    "calc.input": { type: "object", required: ["digit"],
      properties: { digit: { type: "integer", minimum: 0, maximum: 9 } } } } },
  init() { return { entry: 0 }; },
  view(state) { return { type: "calc", value: state.entry }; },
  actions: {
    "calc.input"(state, params) {
      return { state: { entry: state.entry * 10 + params.digit }, audit_preview: `INPUT ${params.digit}` };
    },
    "calc.clear"() { return { state: { entry: 0 }, audit_preview: "CLEAR" }; },
  },
};"#;

/// The action-runtime seed: params are checked against the schema the app declares before the
/// action runs (400 `invalid_input` naming the first mismatch, its path and reason; nothing
/// runs, nothing is kept); an action without a schema takes any params; a schema that does not
/// compile, or names no action, refuses the app at load.
#[tokio::test]
async fn serve_apps_check_params_against_the_declared_schema() {
    let server = start(config("seeds-typed-app", false));
    let loaded = crate::apps::load(&server, "typed", TYPED, "default").await;
    assert_eq!(loaded.status, StatusCode::CREATED, "{}", loaded.body);
    assert!(loaded.body["manifest"]["params"]["calc.input"].is_object());
    let act = |body: Value| crate::apps::act(&server, "typed", body);
    let ok = act(json!({"action": "calc.input", "params": {"digit": 7}})).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["state"]["entry"], 7);
    for (params, at) in [
        (json!({"digit": 12}), "/digit"),
        (json!({"digit": "7"}), "/digit"),
        (json!({}), "digit"),
    ] {
        let refused = act(json!({"action": "calc.input", "params": params})).await;
        assert_error(&refused, 400, "invalid_input");
        let message = refused.body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("calc.input") && message.contains(at),
            "{message}"
        );
    }
    let missing = act(json!({"action": "calc.input"})).await;
    assert_error(&missing, 400, "invalid_input");
    let free = act(json!({"action": "calc.clear", "params": [1, 2]})).await;
    assert_eq!(free.status, StatusCode::OK, "{}", free.body);
    let after = act(json!({"action": "calc.input", "params": {"digit": 3}})).await;
    assert_eq!(
        after.body["state"]["entry"], 3,
        "the refused actions kept nothing"
    );
    for (from, to) in [
        ("type: \"integer\", minimum", "type: \"whole\", minimum"),
        ("\"calc.input\": { type", "\"calc.nothing\": { type"),
    ] {
        let broken = TYPED.replacen(from, to, 1);
        let refused = crate::apps::load(&server, "broken", &broken, "default").await;
        assert_error(&refused, 400, "invalid_input");
    }
    server.assert_fine(None).await;
}

/// An app whose actions reach timers, `eval` and the `Function` constructors by every road a
/// script has: the globals, computed names, indirect calls, each function kind's
/// `constructor`, `Reflect.construct`, and the timers the runtime's own classes schedule.
const RUNTIME: &str = r#"export const manifest = { name: "runtime", version: "1.0.0" };
export function init() { return {}; }
export function view(state) { return state; }
const tick = (schedule) => new Promise((r) => schedule(r, 5));
export const actions = {
  async timer() { await tick(setTimeout); return { state: { timer: true } }; },
  async computed() { await tick(globalThis["set" + "Timeout"]); return { state: { timer: true } }; },
  async interval() { await new Promise((r) => { const id = setInterval(() => { clearInterval(id); r(); }, 5); }); return { state: { timer: true } }; },
  clear() { clearTimeout(1); return { state: { cleared: true } }; },
  async abort() { const s = AbortSignal.timeout(5); await new Promise((r) => s.addEventListener("abort", r)); return { state: { timer: true } }; },
  async port() { const c = new MessageChannel(); const got = new Promise((r) => { c.port2.onmessage = (e) => r(e.data); }); c.port1.postMessage(7); return { state: { port: await got } }; },
  evaluate() { return { state: { eval: eval("1 + 1") } }; },
  indirect() { return { state: { eval: (0, eval)("1 + 1") } }; },
  named() { return { state: { eval: globalThis["ev" + "al"]("1 + 1") } }; },
  construct() { return { state: { fn: new Function("return 3")() } }; },
  prototype() { return { state: { fn: Function.prototype.constructor("return 3")() } }; },
  plainKind() { return { state: { fn: (function () {}).constructor("return 3")() } }; },
  asyncKind() { return { state: { fn: (async function () {}).constructor("return 4") instanceof Function } }; },
  generatorKind() { return { state: { fn: typeof (function* () {}).constructor("yield 5") } }; },
  asyncGeneratorKind() { return { state: { fn: typeof (async function* () {}).constructor("yield 6") } }; },
  reflected() { return { state: { fn: Reflect.construct(Object.getPrototypeOf(() => 1).constructor, ["return 7"])() } }; },
  caught() { try { eval("1"); } catch (e) { return { state: { name: e.name, rule: e.rule, fix: e.fix } }; } return {}; },
  plain() { return { state: { ok: (() => 1) instanceof Function && (async () => 1) instanceof Function } }; },
};"#;

/// The actions of `RUNTIME` that use timers, and those that use `eval` or a `Function`
/// constructor.
const TIMER_ACTIONS: [&str; 6] = ["timer", "computed", "interval", "clear", "abort", "port"];
const EVAL_ACTIONS: [&str; 10] = [
    "evaluate",
    "indirect",
    "named",
    "construct",
    "prototype",
    "plainKind",
    "asyncKind",
    "generatorKind",
    "asyncGeneratorKind",
    "reflected",
];

/// The action-runtime seed's defaults, enforced by the guest's Rust and the host, never by
/// JavaScript: timers are off in an app unless its policy's `apps.timers` grants them, `eval`
/// and the `Function` constructors are on unless `apps.eval = false` turns them off. Every road
/// to a part that is off ends the action as 403 `policy_denied` with `apps.timers` or
/// `apps.eval` as the rule and `KEY = true` as the fix; a script that catches the refusal sees
/// a `PolicyDeniedError`; `instanceof Function` keeps working; and after each refusal a plain
/// action of the same app is fine.
#[tokio::test]
async fn serve_apps_runtime_follows_the_policys_apps_table() {
    let config = config("seeds-app-runtime", false);
    let dir = config.policies.clone().unwrap();
    let policies = [
        ("timers", "[apps]\ntimers = true\n"),
        ("noeval", "[apps]\neval = false\n"),
        ("neither", "[apps]\ntimers = false\neval = false\n"),
    ];
    for (name, table) in policies {
        let text = format!("name = \"{name}\"\n{table}");
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    }
    let server = start(config);
    for (app, policy) in [
        ("plain", "default"),
        ("timed", "timers"),
        ("sealed", "noeval"),
        ("bare", "neither"),
    ] {
        let loaded = crate::apps::load(&server, app, RUNTIME, policy).await;
        assert_eq!(loaded.status, StatusCode::CREATED, "{}", loaded.body);
    }
    let act = |app: &'static str, action: &str| {
        crate::apps::act(
            &server,
            app,
            json!({ "action": action, "session_id": action }),
        )
    };
    let refused = |app: &'static str, action: &'static str, key: &'static str| async move {
        let off = act(app, action).await;
        assert_error(&off, 403, "policy_denied");
        let message = off.body["error"]["message"].as_str().unwrap();
        assert!(message.contains(key), "{app} {action}: {message}");
        let fine = act(app, "plain").await;
        assert_eq!(fine.body["state"]["ok"], true, "{app} after {action}");
    };
    for action in TIMER_ACTIONS {
        refused("plain", action, "apps.timers").await;
        refused("sealed", action, "apps.timers").await;
        refused("bare", action, "apps.timers").await;
        let timed = act("timed", action).await;
        assert_eq!(timed.status, StatusCode::OK, "{action}: {}", timed.body);
    }
    assert_eq!(act("timed", "port").await.body["state"]["port"], 7);
    for action in EVAL_ACTIONS {
        refused("sealed", action, "apps.eval").await;
        refused("bare", action, "apps.eval").await;
        let on = act("plain", action).await;
        assert_eq!(on.status, StatusCode::OK, "{action}: {}", on.body);
    }
    assert_eq!(act("plain", "evaluate").await.body["state"]["eval"], 2);
    assert_eq!(act("plain", "reflected").await.body["state"]["fn"], 7);
    let caught = act("sealed", "caught").await;
    assert_eq!(
        caught.body["state"],
        json!({"name": "PolicyDeniedError", "rule": "apps.eval", "fix": "apps.eval = true"}),
        "{}",
        caught.body
    );
    server.assert_fine(None).await;
}

/// A ceiling the catalog lacks stops the server at start, naming the flag and the policy.
#[test]
fn serve_refuses_to_start_with_a_ceiling_the_catalog_lacks() {
    let mut config = config("seeds-no-ceiling", false);
    config.inline_ceiling = Some("nowhere".to_owned());
    let Err(error) = palisade::serve::AppState::open(config) else {
        panic!("the server started with a ceiling the catalog lacks");
    };
    assert!(
        error.contains("--inline-ceiling") && error.contains("`nowhere`"),
        "{error}"
    );
}

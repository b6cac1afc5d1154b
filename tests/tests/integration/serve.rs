//! `palisade serve`, in process: every route, status and error body through the router with
//! tower's `oneshot`.

use crate::support::{scratch_dir, sha256_hex};
use axum::body::Body;
use http::{Request, StatusCode};
use palisade::serve::{AppState, Config, router};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower::ServiceExt;

/// A session policy: a scratch directory with small quotas, a kv namespace, and a short
/// deadline.
pub const SESSION_POLICY: &str = "name = \"box\"\ndescription = \"a test sandbox\"\n\
    [limits]\ntimeout = \"5s\"\n[fs.scratch]\nguest = \"/scratch\"\nquota = \"4KiB\"\n\
    max_files = 10\n[kv]\nnamespace = \"app\"\n[kv.buckets]\nstate = \"rw\"\n";

pub fn key_hash(key: &str) -> String {
    sha256_hex(key.as_bytes())
}

/// A policies folder with `default.toml` (the built-in) and `box.toml`.
pub fn policies_dir(name: &str) -> PathBuf {
    let dir = scratch_dir(name).join("policies");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("default.toml"),
        palisade::policy::DEFAULT_POLICY_TOML,
    )
    .unwrap();
    std::fs::write(dir.join("box.toml"), SESSION_POLICY).unwrap();
    dir
}

/// Two tenants: `acme` (key `acme-key`, both policies, two sessions) and `nobody` (key
/// `nobody-key`, an empty list), and the operator's key `operator-key` (`/metrics`).
pub fn keys_file(dir: &Path) -> PathBuf {
    let path = dir.join("keys.toml");
    std::fs::write(
        &path,
        format!(
            "[[tenant]]\nname = \"acme\"\nkey_sha256 = \"{}\"\npolicies = [\"default\", \"box\"]\n\
             max_sessions = 2\n\n[[tenant]]\nname = \"beta\"\nkey_sha256 = \"{}\"\n\
             policies = [\"default\", \"box\"]\n\n[[tenant]]\nname = \"nobody\"\n\
             key_sha256 = \"{}\"\npolicies = []\n\n[operator]\nkey_sha256 = \"{}\"\n",
            key_hash("acme-key"),
            key_hash("beta-key"),
            key_hash("nobody-key"),
            key_hash("operator-key")
        ),
    )
    .unwrap();
    path
}

pub struct Server {
    pub state: Arc<AppState>,
    pub data: PathBuf,
}

pub fn config(name: &str, keys: bool) -> Config {
    let policies = policies_dir(name);
    let base = policies.parent().unwrap().to_path_buf();
    let mut config = Config::new(base.join("data"));
    config.policies = Some(policies);
    config.max_concurrency = 4;
    config.audit_log = Some(base.join("audit.log"));
    if keys {
        config.keys = Some(keys_file(&base));
    }
    config
}

pub fn start(config: Config) -> Server {
    let data = config.data.clone();
    Server {
        state: AppState::open(config).expect("the server starts"),
        data,
    }
}

pub struct Answer {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: Value,
}

impl Server {
    pub async fn call(&self, method: &str, uri: &str, key: Option<&str>, body: Value) -> Answer {
        self.call_with(method, uri, key, &[], body).await
    }

    pub async fn call_with(
        &self,
        method: &str,
        uri: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
        body: Value,
    ) -> Answer {
        let text = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        self.call_text(method, uri, key, headers, text).await
    }

    /// A request whose body is `text` as it is (empty: no body).
    pub async fn call_text(
        &self,
        method: &str,
        uri: &str,
        key: Option<&str>,
        headers: &[(&str, &str)],
        text: String,
    ) -> Answer {
        let mut request = Request::builder().method(method).uri(uri);
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body = if text.is_empty() {
            Body::empty()
        } else {
            Body::from(text)
        };
        let response = router(self.state.clone())
            .oneshot(request.body(body).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), 64 << 20)
            .await
            .unwrap();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        Answer {
            status,
            headers,
            body,
        }
    }

    pub async fn session(&self, key: Option<&str>, body: Value) -> String {
        let created = self.call("POST", "/v1/sessions", key, body).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        created.body["session_id"].as_str().unwrap().to_owned()
    }

    /// `POST /v1/sessions/{id}/run`.
    pub async fn run_in(&self, key: Option<&str>, id: &str, body: Value) -> Answer {
        self.call("POST", &format!("/v1/sessions/{id}/run"), key, body)
            .await
    }

    pub async fn fs(&self, key: Option<&str>, id: &str, op: &str, body: Value) -> Answer {
        self.call("POST", &format!("/v1/sessions/{id}/fs/{op}"), key, body)
            .await
    }

    /// A normal call still works.
    pub async fn assert_fine(&self, key: Option<&str>) {
        let ok = self
            .call(
                "POST",
                "/v1/run",
                key,
                json!({"policy": "default", "source": "export default (x) => x + 1", "input": 41}),
            )
            .await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
        assert_eq!(ok.body["output"], 42);
    }
}

/// An error answer: exact code and status, and every field of the error shape.
pub fn assert_error(answer: &Answer, status: u16, code: &str) {
    assert_eq!(answer.status.as_u16(), status, "{}", answer.body);
    let error = &answer.body["error"];
    assert_eq!(error["code"], code, "{}", answer.body);
    let class = error["type"].as_str().unwrap_or_default();
    assert!(
        ["client", "auth", "policy", "limit", "script", "server"].contains(&class),
        "{error}"
    );
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(
        error["docs_url"]
            .as_str()
            .is_some_and(|u| u.starts_with("http") && u.ends_with(&format!("#{code}"))),
        "{error}"
    );
    assert!(error.get("fix").is_some() && error.get("fix_note").is_some());
    assert!(
        error["fix"].is_object() || error["fix_note"].is_string(),
        "{error}"
    );
    assert!(error["retryable"].is_boolean());
}

/// Every route of the router, with its methods (a server with `--app` adds the seed's).
pub const ROUTES: &[(&str, &[&str])] = &[
    ("/healthz", &["get"]),
    ("/readyz", &["get"]),
    ("/metrics", &["get"]),
    ("/openapi.json", &["get"]),
    ("/v1/policies", &["get"]),
    ("/v1/policies/{name}", &["get"]),
    ("/v1/policies/{name}/types", &["get"]),
    ("/v1/run", &["post"]),
    ("/v1/sessions", &["get", "post"]),
    ("/v1/sessions/{id}", &["get", "delete"]),
    ("/v1/sessions/{id}/run", &["post"]),
    ("/v1/sessions/{id}/fs/{op}", &["post"]),
    ("/v1/sessions/{id}/heap", &["get"]),
    ("/v1/sessions/{id}/reset", &["post"]),
    ("/v1/sessions/{id}/fork", &["post"]),
    ("/v1/apps", &["get", "post"]),
    ("/v1/apps/{app}", &["get", "delete"]),
    ("/v1/apps/{app}/actions", &["post"]),
    ("/v1/apps/{app}/view", &["get"]),
    ("/v1/apps/{app}/state", &["get"]),
    ("/v1/apps/{app}/events", &["get"]),
];

/// The OpenAPI document lists [`ROUTES`] and `extra`, and nothing else.
pub async fn assert_documents_every_route(server: &Server, extra: &[(&str, &[&str])]) {
    let doc = server.call("GET", "/openapi.json", None, Value::Null).await;
    assert_eq!(doc.status, StatusCode::OK);
    assert!(doc.body["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc.body["paths"].as_object().unwrap();
    for (path, methods) in ROUTES.iter().chain(extra) {
        for m in *methods {
            assert!(paths[*path].get(*m).is_some(), "{m} {path} missing");
        }
    }
    assert_eq!(
        paths.len(),
        ROUTES.len() + extra.len(),
        "{:?}",
        paths.keys()
    );
}

#[tokio::test]
async fn serve_operations_routes_answer() {
    let server = start(config("serve-ops", false));
    let health = server.call("GET", "/healthz", None, Value::Null).await;
    assert_eq!(
        (health.status, health.body),
        (StatusCode::OK, json!({"ok": true}))
    );
    let ready = server.call("GET", "/readyz", None, Value::Null).await;
    assert_eq!(ready.status, StatusCode::OK);
    assert_eq!(ready.body["policies"], 2);
    let policies = server.call("GET", "/v1/policies", None, Value::Null).await;
    assert_eq!(policies.status, StatusCode::OK);
    let list = policies.body.as_array().unwrap();
    let names: Vec<_> = list.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["box", "default"]);
    assert_eq!(list[0]["description"], "a test sandbox");
    assert_eq!(list[0]["grants"], json!(["kv", "fs"]));
    assert_eq!(list[0]["limits"]["timeout"], "5s");
    assert_eq!(list[0]["sha256"].as_str().unwrap().len(), 64);
    // The OpenAPI document lists every route the router serves.
    assert_documents_every_route(&server, &[]).await;
    let missing = server.call("GET", "/v2/nothing", None, Value::Null).await;
    assert_error(&missing, 404, "invalid_input");
    let method = server.call("PUT", "/v1/run", None, json!({})).await;
    assert_error(&method, 405, "invalid_input");
    let huge = json!({"policy": "default", "source": "x".repeat(33 << 20)});
    let too_large = server.call("POST", "/v1/run", None, huge).await;
    assert_error(&too_large, 413, "invalid_input");
    server.assert_fine(None).await;
    let metrics = server.call("GET", "/metrics", None, Value::Null).await;
    let text = metrics.body.as_str().unwrap();
    for name in [
        "palisade_calls_total{code=\"ok\",policy=\"default\"} 1",
        "palisade_call_duration_seconds_bucket",
        "palisade_fuel_used_total{policy=\"default\"}",
        "palisade_sessions_active 0",
        "palisade_admission_queue 0",
        "palisade_policy_reload_errors_total 0",
    ] {
        assert!(text.contains(name), "{name} missing from {text}");
    }
}

#[tokio::test]
async fn serve_run_answers_the_outcome_json() {
    let server = start(config("serve-run", false));
    let ok = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "script": {"name": "double.js",
                "source": "export default (x) => { console.log('hi'); return {d: x.n * 2} }"},
                "input": {"n": 21}}),
        )
        .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    // The same JSON as `palisade run --json`: output, logs, audit, receipt.
    assert_eq!(ok.body["ok"], true);
    assert_eq!(ok.body["output"], json!({"d": 42}));
    assert_eq!(ok.body["logs"][0]["message"], "hi");
    assert_eq!(ok.body["receipt"]["policy"], "default");
    assert!(ok.body["receipt"]["fuel_used"].as_u64().unwrap() > 0);
    let export = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "source": "export default { add(a, b) { return a + b } }",
                "export": "add", "input": [2, 3], "spread_args": true}),
        )
        .await;
    assert_eq!(export.body["output"], 5, "{}", export.body);
    // A failed call: its Outcome, the table's status, and the error's docs_url.
    let thrown = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "source": "export default () => { throw new TypeError('no') }"}),
        )
        .await;
    assert_error(&thrown, 422, "guest_exception");
    assert_eq!(thrown.body["error"]["name"], "TypeError");
    assert_eq!(thrown.body["ok"], false);
    let fuel = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "source": "export default () => { for (;;) {} }"}),
        )
        .await;
    // The default policy's deadline comes before its fuel runs out.
    assert_error(&fuel, 408, "timeout");
    assert_eq!(fuel.body["error"]["fix"]["key"], "limits.timeout");
    let unknown = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "nope", "source": "export default 1"}),
        )
        .await;
    assert_error(&unknown, 404, "policy_not_found");
    assert!(
        unknown.body["error"]["fix_note"]
            .as_str()
            .unwrap()
            .contains("box, default")
    );
    let both = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "source": "1", "script": {"name": "a", "source": "1"}}),
        )
        .await;
    assert_error(&both, 400, "invalid_input");
    let garbage = server.call("POST", "/v1/run", None, json!([1, 2])).await;
    assert_error(&garbage, 400, "invalid_input");
    let no_policy = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"source": "export default 1"}),
        )
        .await;
    assert_error(&no_policy, 400, "invalid_input");
    assert_eq!(no_policy.body["error"]["fix"], json!({"policy": "default"}));
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_keys_tenants_and_cross_tenant_404() {
    let server = start(config("serve-keys", true));
    let none = server.call("GET", "/v1/policies", None, Value::Null).await;
    assert_error(&none, 401, "unauthorized");
    let wrong = server
        .call("GET", "/v1/policies", Some("guess"), Value::Null)
        .await;
    assert_error(&wrong, 401, "unauthorized");
    // Fail-closed: an empty list allows nothing.
    let nobody = server
        .call("GET", "/v1/policies", Some("nobody-key"), Value::Null)
        .await;
    assert_eq!(nobody.body, json!([]));
    let refused = server
        .call(
            "POST",
            "/v1/run",
            Some("nobody-key"),
            json!({"policy": "default", "source": "export default 1"}),
        )
        .await;
    assert_error(&refused, 404, "policy_not_found");
    // Another tenant's session is not found, for every route that names it.
    let id = server
        .session(Some("acme-key"), json!({"policy": "box", "name": "mine"}))
        .await;
    for (method, uri) in [
        ("GET", format!("/v1/sessions/{id}")),
        ("DELETE", format!("/v1/sessions/{id}")),
        ("POST", format!("/v1/sessions/{id}/run")),
        ("POST", format!("/v1/sessions/{id}/fs/ls")),
    ] {
        let body = if uri.ends_with("/run") {
            json!({"source": "export default 1"})
        } else {
            Value::Null
        };
        let other = server.call(method, &uri, Some("beta-key"), body).await;
        assert_error(&other, 404, "session_not_found");
    }
    let listed = server
        .call("GET", "/v1/sessions", Some("beta-key"), Value::Null)
        .await;
    assert_eq!(listed.body, json!([]));
    let mine = server
        .call("GET", "/v1/sessions", Some("acme-key"), Value::Null)
        .await;
    assert_eq!(mine.body[0]["name"], "mine");
    // Key-value namespaces are per tenant, though both use the policy's `app`.
    let set = "export default async () => { await kv.set('k', 'acme'); return 1 }";
    let get = "export default async () => (await kv.get('k')) ?? null";
    let box_run = |source: &str| json!({"policy": "box", "source": source});
    let a = server
        .call("POST", "/v1/run", Some("acme-key"), box_run(set))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let b = server
        .call("POST", "/v1/run", Some("beta-key"), box_run(get))
        .await;
    assert_eq!(b.body["output"], Value::Null, "{}", b.body);
    let a = server
        .call("POST", "/v1/run", Some("acme-key"), box_run(get))
        .await;
    assert_eq!(a.body["output"], "acme", "{}", a.body);
    // Tenant max_sessions (2 for acme): the third is 429 with Retry-After.
    server
        .session(Some("acme-key"), json!({"policy": "box"}))
        .await;
    let third = server
        .call(
            "POST",
            "/v1/sessions",
            Some("acme-key"),
            json!({"policy": "box"}),
        )
        .await;
    assert_error(&third, 429, "capacity_exhausted");
    assert_eq!(third.headers["retry-after"], "1");
    assert_eq!(third.body["error"]["retryable"], true);
    server
        .session(Some("beta-key"), json!({"policy": "box"}))
        .await;
    server.assert_fine(Some("acme-key")).await;
    // Audit records name tenant, policy and hash.
    let audit = std::fs::read_to_string(server.data.parent().unwrap().join("audit.log")).unwrap();
    let first: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(first["tenant"], "acme");
    assert_eq!(first["policy"], "box");
    assert_eq!(first["policy_sha256"].as_str().unwrap().len(), 64);
}

#[tokio::test]
async fn serve_session_create_write_run_grep_sed_stop() {
    let server = start(config("serve-flow", false));
    let id = server
        .session(
            None,
            json!({"policy": "box", "name": "flow", "idle_timeout": "10m",
                "files": [{"path": "seed/notes.txt", "content": "alpha\nbeta\n"},
                          {"path": "bin.dat", "content_b64": "/wAB"}],
                "config": {"who": "session"}}),
        )
        .await;
    let got = server
        .call("GET", &format!("/v1/sessions/{id}"), None, Value::Null)
        .await;
    assert_eq!(got.body["policy"], "box");
    assert_eq!(got.body["status"], "idle");
    assert_eq!(got.body["idle_timeout"], "10m");
    let write = server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "/scratch/src/main.js", "parents": true,
            "content": "export const greeting = 'hello';\n"}),
        )
        .await;
    assert_eq!(write.status, StatusCode::OK, "{}", write.body);
    assert_eq!(write.body["bytes_written"], 33);
    // The script sees the session's directory where the policy's scratch would be, its kv
    // namespace and its config values; both persist across runs.
    let script = "export default async () => {
        const main = await fs.readFile('/scratch/src/main.js', 'utf8');
        const n = Number((await kv.get('runs')) ?? '0') + 1;
        await kv.set('runs', String(n));
        await fs.writeFile('/scratch/out.txt', `run ${n} by ${config.get('who')}\\n`);
        return { n, main: main.length };
    }";
    let run_uri = format!("/v1/sessions/{id}/run");
    let first = server
        .call("POST", &run_uri, None, json!({"source": script}))
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.body["output"], json!({"n": 1, "main": 33}));
    let second = server
        .call("POST", &run_uri, None, json!({"source": script}))
        .await;
    assert_eq!(second.body["output"]["n"], 2, "{}", second.body);
    let read = server
        .fs(None, &id, "read", json!({"path": "out.txt"}))
        .await;
    assert_eq!(read.body["body"], "run 2 by session\n");
    let binary = server
        .fs(None, &id, "read", json!({"path": "bin.dat"}))
        .await;
    assert_eq!(binary.body["content_b64"], "/wAB");
    assert!(binary.body.get("body").is_none());
    let grep = server
        .fs(
            None,
            &id,
            "grep",
            json!({"path": ".", "pattern": "HELLO|beta", "ignore_case": true,
            "include_glob": ["*.js", "*.txt"]}),
        )
        .await;
    assert_eq!(grep.status, StatusCode::OK, "{}", grep.body);
    let hits: Vec<_> = grep.body["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap(), m["line_no"].as_u64().unwrap()))
        .collect();
    assert_eq!(hits, [("seed/notes.txt", 2), ("src/main.js", 1)]);
    let sed = server
        .fs(
            None,
            &id,
            "sed",
            json!({"files": ["src/main.js"], "pattern": "hello",
            "replacement": "bonjour"}),
        )
        .await;
    assert_eq!(sed.body["total_replacements"], 1, "{}", sed.body);
    let literal = server
        .fs(
            None,
            &id,
            "sed",
            json!({"path": "seed", "pattern": "a", "replacement": "$1",
            "regex": false, "first_only": true}),
        )
        .await;
    assert_eq!(literal.body["total_replacements"], 1, "{}", literal.body);
    let notes = server
        .fs(None, &id, "read", json!({"path": "seed/notes.txt"}))
        .await;
    assert_eq!(notes.body["body"], "$1lpha\nbeta\n");
    let third = server
        .call(
            "POST",
            &run_uri,
            None,
            json!({"source": "export default () => fs.readFile('/scratch/src/main.js', 'utf8')"}),
        )
        .await;
    assert!(
        third.body["output"].as_str().unwrap().contains("bonjour"),
        "{}",
        third.body
    );
    // ls, stat, mkdir, mv, rm.
    let mkdir = server
        .fs(None, &id, "mkdir", json!({"path": "a/b", "parents": true}))
        .await;
    assert_eq!(mkdir.body["created"], true);
    let again = server.fs(None, &id, "mkdir", json!({"path": "a/b"})).await;
    assert_error(&again, 409, "file_conflict");
    let mv = server
        .fs(
            None,
            &id,
            "mv",
            json!({"src": "out.txt", "dst": "a/b/out.txt"}),
        )
        .await;
    assert_eq!(mv.body["moved"], true, "{}", mv.body);
    let stat = server
        .fs(None, &id, "stat", json!({"path": "a/b/out.txt"}))
        .await;
    assert_eq!(
        (stat.body["is_dir"].clone(), stat.body["size"].clone()),
        (json!(false), json!(17))
    );
    let ls = server
        .fs(None, &id, "ls", json!({"path": "/scratch"}))
        .await;
    let names: Vec<_> = ls.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "bin.dat", "seed", "src"]);
    let not_empty = server.fs(None, &id, "rm", json!({"path": "a"})).await;
    assert_error(&not_empty, 409, "file_conflict");
    assert_eq!(not_empty.body["error"]["fix"], json!({"recursive": true}));
    let rm = server
        .fs(None, &id, "rm", json!({"path": "a", "recursive": true}))
        .await;
    assert_eq!(rm.body["removed"], true);
    let gone = server.fs(None, &id, "stat", json!({"path": "a"})).await;
    assert_error(&gone, 404, "file_not_found");
    let bad_op = server.fs(None, &id, "chmod", json!({"path": "a"})).await;
    assert_error(&bad_op, 400, "invalid_input");
    let bad_regex = server
        .fs(None, &id, "grep", json!({"path": ".", "pattern": "("}))
        .await;
    assert_error(&bad_regex, 400, "invalid_input");
    // Stop: the session, its files and keys are gone; its runs are not found.
    let dir = server.data.join("sessions").join(&id);
    assert!(dir.is_dir());
    let stop = server
        .call("DELETE", &format!("/v1/sessions/{id}"), None, Value::Null)
        .await;
    assert_eq!(stop.body, json!({"session_id": id, "stopped": true}));
    assert!(!dir.exists());
    let after = server
        .call("POST", &run_uri, None, json!({"source": script}))
        .await;
    assert_error(&after, 404, "session_not_found");
    let listed = server.call("GET", "/v1/sessions", None, Value::Null).await;
    assert_eq!(listed.body, json!([]));
    let fresh = server.session(None, json!({"policy": "box"})).await;
    let keys = server
        .call(
            "POST",
            &format!("/v1/sessions/{fresh}/run"),
            None,
            json!({"source": "export default async () => (await kv.get('runs')) ?? 'none'"}),
        )
        .await;
    assert_eq!(
        keys.body["output"], "none",
        "a new session starts with no keys"
    );
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_fs_paths_stay_in_the_session() {
    let server = start(config("serve-escape", false));
    let id = server.session(None, json!({"policy": "box"})).await;
    let dir = server.data.join("sessions").join(&id).join("files");
    std::os::unix::fs::symlink("/etc", dir.join("out")).unwrap();
    std::os::unix::fs::symlink("../../..", dir.join("up")).unwrap();
    for path in [
        "../x",
        "/etc/passwd",
        "/scratch/../../x",
        "out/passwd",
        "up/server.redb",
        "a/../../x",
    ] {
        for (op, body) in [
            ("ls", json!({"path": path})),
            ("stat", json!({"path": format!("{path}/y")})),
            ("read", json!({"path": path})),
            ("write", json!({"path": path, "content": "x"})),
            ("mkdir", json!({"path": format!("{path}/new")})),
            ("rm", json!({"path": path})),
            ("mv", json!({"src": path, "dst": "here"})),
            ("grep", json!({"path": path, "pattern": "root"})),
            (
                "sed",
                json!({"files": [path], "pattern": "root", "replacement": "x"}),
            ),
        ] {
            let answer = server.fs(None, &id, op, body).await;
            assert!(
                answer.body["error"]["code"] == "policy_denied"
                    || answer.body["error"]["code"] == "file_not_found",
                "{op} {path}: {}",
                answer.body
            );
            if answer.body["error"]["code"] == "file_not_found" {
                // Only a path whose parent is inside may be merely missing.
                assert!(path.starts_with("a/"), "{op} {path}: {}", answer.body);
            } else {
                assert_error(&answer, 403, "policy_denied");
            }
        }
    }
    let into = server
        .fs(None, &id, "mv", json!({"src": "missing", "dst": "../x"}))
        .await;
    assert_error(&into, 404, "file_not_found");
    std::fs::write(dir.join("f.txt"), "x").unwrap();
    let out = server
        .fs(None, &id, "mv", json!({"src": "f.txt", "dst": "../f.txt"}))
        .await;
    assert_error(&out, 403, "policy_denied");
    assert!(
        out.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("fs.confine")
    );
    assert!(
        !server
            .data
            .join("sessions")
            .join(&id)
            .join("f.txt")
            .exists()
    );
    // Each refusal is a gated decision in the audit log, with tenant and session.
    let audit = std::fs::read_to_string(server.data.parent().unwrap().join("audit.log")).unwrap();
    let last: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(last["capability"], "fs");
    assert_eq!(last["target"], "fs/mv:f.txt");
    assert_eq!(last["decision"], "deny");
    assert_eq!(last["rule"], "fs.confine");
    assert_eq!(
        (last["tenant"].clone(), last["session"].clone()),
        (json!("local"), json!(id))
    );
    assert_eq!(last["policy"], "box");
    // The host is fine and the session still works.
    let ok = server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "ok.txt", "content": "fine"}),
        )
        .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_fs_quotas_come_from_the_policy() {
    let server = start(config("serve-quota", false));
    let id = server.session(None, json!({"policy": "box"})).await;
    let big = "x".repeat(5000);
    let over = server
        .fs(None, &id, "write", json!({"path": "big", "content": big}))
        .await;
    assert_error(&over, 403, "policy_denied");
    assert!(
        over.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("fs.scratch.quota")
    );
    for i in 0..10 {
        let w = server
            .fs(
                None,
                &id,
                "write",
                json!({"path": format!("f{i}"), "content": "1"}),
            )
            .await;
        assert_eq!(w.status, StatusCode::OK, "{}", w.body);
    }
    let eleventh = server
        .fs(None, &id, "write", json!({"path": "f10", "content": "1"}))
        .await;
    assert_error(&eleventh, 403, "policy_denied");
    assert!(
        eleventh.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("fs.scratch.max_files")
    );
    // Overwriting an existing file within the quota is fine; the script meets the same quota.
    let rewrite = server
        .fs(None, &id, "write", json!({"path": "f0", "content": "22"}))
        .await;
    assert_eq!(rewrite.status, StatusCode::OK);
    let script = server
        .call("POST", &format!("/v1/sessions/{id}/run"), None,
            json!({"source": "export default async () => { try { await fs.writeFile('/scratch/g', 'x'); return 'wrote' } catch (e) { return e.name } }"}))
        .await;
    assert_ne!(script.body["output"], "wrote", "{}", script.body);
    let files: Vec<_> = (0..11)
        .map(|i| json!({"path": format!("s{i}"), "content": "1"}))
        .collect();
    let too_many = server
        .call(
            "POST",
            "/v1/sessions",
            None,
            json!({"policy": "box", "files": files}),
        )
        .await;
    assert_error(&too_many, 403, "policy_denied");
    let listed = server.call("GET", "/v1/sessions", None, Value::Null).await;
    assert_eq!(
        listed.body.as_array().unwrap().len(),
        1,
        "the refused session is not kept"
    );
    server.assert_fine(None).await;
}

//! `fetch` through the host's gate, against real servers on 127.0.0.1: allowed requests, every
//! bypass attempt refused by the right rule before any connection, budgets, timeouts, rate
//! limits, secrets the script never sees, and overlapping requests in the event loop.

use crate::support::*;
use crate::upstream::Upstream;
use palisade::{Decision, Policy, Script};
use serde_json::Value;

/// A policy that reaches `localhost:{port}` under `/api/`, loopback explicitly allowed.
fn allowed(port: u16, extra: &str) -> Policy {
    policy(&format!(
        r#"
name = "net-test"
[http]
allow_private = ["127.0.0.1/32", "::1/128"]
{extra}
[[http.allow]]
url = "http://localhost:{port}/api/"
methods = ["GET", "POST"]
"#
    ))
}

async fn run_js(policy: &Policy, source: &str) -> palisade::Outcome {
    PALISADE
        .run(policy, &Script::new("net.js", source), "null")
        .await
}

fn json_output(outcome: &palisade::Outcome) -> Value {
    serde_json::from_str(output(outcome)).unwrap()
}

/// A script that fetches each URL and reports how each attempt ended.
const ATTEMPTS: &str = r#"
export default async () => {
  const out = [];
  for (const url of URLS) {
    try {
      const r = await fetch(url);
      out.push({ url, status: r.status });
    } catch (e) {
      out.push({ url, name: e.name, rule: e.rule ?? null, fix: e.fix ?? null, code: e.code ?? null });
    }
  }
  return out;
};
"#;

async fn attempts(policy: &Policy, urls: &[String]) -> Vec<Value> {
    let source = ATTEMPTS.replace("URLS", &serde_json::to_string(urls).unwrap());
    let outcome = run_js(policy, &source).await;
    json_output(&outcome).as_array().unwrap().clone()
}

#[tokio::test]
async fn an_allowed_request_reaches_the_upstream_and_is_audited() {
    let up = Upstream::start().await;
    let p = allowed(up.port(), "");
    let outcome = run_js(
        &p,
        &format!(
            r#"export default async () => {{
              const r = await fetch("http://localhost:{}/api/hello");
              return {{ status: r.status, ok: r.ok, type: r.headers.get("content-type"), body: await r.json() }};
            }};"#,
            up.port()
        ),
    )
    .await;
    assert_eq!(
        json_output(&outcome),
        serde_json::json!({"status": 200, "ok": true, "type": "application/json", "body": {"hello": "world"}})
    );
    let record = &outcome.audit[0];
    assert_eq!(record.capability, "http");
    assert_eq!(record.decision, Decision::Allow);
    assert_eq!(record.rule, "http.allow[0]");
    assert_eq!(
        record.target,
        format!("http://localhost:{}/api/hello", up.port())
    );
    assert_eq!(record.bytes_out, 17);
    assert_eq!(record.policy_sha256, p.sha256());
}

#[tokio::test]
async fn bypass_attempts_are_refused_by_the_right_rule_without_connecting() {
    let up = Upstream::start().await;
    let other = Upstream::start().await;
    let port = up.port();
    let p = allowed(port, "");
    let urls = [
        format!("http://localhost:{port}@evil.example/api/hello"),
        format!("http://localhost:{port}/api/../admin"),
        format!("http://localhost:{port}/api/%2e%2e/admin"),
        format!("http://localhost:{port}/api/..%2fadmin"),
        format!("http://localhost:{port}/api/%2E%2E%5Cadmin"),
        format!("http://localhost:{port}/api/..;/admin"),
        format!("http://localhost:{port}/api/%252e%252e/admin"),
        format!("http://localhost:{}/api/hello", other.port()),
        format!("https://localhost:{port}/api/hello"),
        format!("http://127.0.0.1:{port}/api/hello"),
        format!("http://2130706433:{port}/api/hello"),
        format!("http://0177.0.0.1:{port}/api/hello"),
        format!("http://0x7f000001:{port}/api/hello"),
        format!("http://[::ffff:127.0.0.1]:{port}/api/hello"),
        format!("http://localhost.evil.example:{port}/api/hello"),
    ];
    let results = attempts(&p, &urls).await;
    let rules: Vec<&str> = results
        .iter()
        .map(|r| r["rule"].as_str().unwrap_or("<none>"))
        .collect();
    assert_eq!(
        rules,
        [
            "<none>",
            "http.allow",
            "http.allow",
            "http.path",
            "http.path",
            "http.path",
            "http.path",
            "http.allow",
            "http.allow",
            "http.allow",
            "http.allow",
            "http.allow",
            "http.allow",
            "http.allow",
            "http.allow",
        ],
        "{results:#?}"
    );
    // A URL with credentials is refused by `Request` itself, as the Fetch standard has it, before
    // the gate (whose `http.userinfo` rule still refuses one that a redirect hop brings).
    assert_eq!(results[0]["name"], "TypeError", "{results:#?}");
    assert!(
        results[1..]
            .iter()
            .all(|r| r["name"] == "PolicyDeniedError")
    );
    assert_eq!(
        results[1]["fix"],
        format!("[[http.allow]] url = \"http://localhost:{port}/\"")
    );
    assert_eq!(up.connections(), 0, "no refused request may connect");
    assert_eq!(other.connections(), 0);
}

#[tokio::test]
async fn private_addresses_are_refused_after_resolving_unless_allowed() {
    let up = Upstream::start().await;
    let port = up.port();
    // Rules name these hosts, but nothing opens a private range.
    let p = policy(&format!(
        r#"
[http]
[[http.allow]]
url = "http://localhost:{port}/"
[[http.allow]]
url = "http://169.254.169.254/"
[[http.allow]]
url = "http://[::ffff:7f00:1]:{port}/"
[[http.allow]]
url = "http://127.0.0.1:{port}/"
"#
    ));
    let urls = [
        format!("http://localhost:{port}/api/hello"),
        format!("http://LocalHost.:{port}/api/hello"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        format!("http://[::ffff:127.0.0.1]:{port}/api/hello"),
        format!("http://127.0.0.1:{port}/api/hello"),
    ];
    let results = attempts(&p, &urls).await;
    for r in &results {
        assert_eq!(r["name"], "PolicyDeniedError", "{r}");
        assert_eq!(r["rule"], "http.private", "{r}");
    }
    assert_eq!(
        results[2]["fix"],
        "http.allow_private = [\"169.254.169.254/32\"]"
    );
    assert_eq!(up.connections(), 0);
}

#[tokio::test]
async fn redirects_are_followed_hop_by_hop_through_the_gate() {
    let up = Upstream::start().await;
    let port = up.port();
    let p = allowed(port, "[[http.allow]]\nurl = \"http://169.254.169.254/\"\n");
    let source = format!(
        r#"export default async () => {{
          const ok = await fetch("http://localhost:{port}/api/redirect?to=/api/hello");
          let refused;
          try {{
            await fetch("http://localhost:{port}/api/redirect?to=http%3A%2F%2F169.254.169.254%2Flatest%2F");
          }} catch (e) {{ refused = {{ name: e.name, rule: e.rule }}; }}
          // A hop to a URL with credentials, which `Request` would not take, meets the gate's rule.
          let credentials;
          try {{
            await fetch("http://localhost:{port}/api/redirect?to=http%3A%2F%2Fu%3Ap%40localhost%3A{port}%2Fapi%2Fhello");
          }} catch (e) {{ credentials = {{ name: e.name, rule: e.rule }}; }}
          return {{ redirected: ok.redirected, url: ok.url, body: await ok.json(), refused, credentials }};
        }};"#
    );
    let outcome = run_js(&p, &source).await;
    assert_eq!(
        json_output(&outcome),
        serde_json::json!({
            "redirected": true,
            "url": format!("http://localhost:{port}/api/hello"),
            "body": {"hello": "world"},
            "refused": {"name": "PolicyDeniedError", "rule": "http.private"},
            "credentials": {"name": "PolicyDeniedError", "rule": "http.userinfo"},
        })
    );
    let paths: Vec<String> = up.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(
        paths,
        [
            "/api/redirect",
            "/api/hello",
            "/api/redirect",
            "/api/redirect"
        ]
    );
}

#[tokio::test]
async fn no_http_table_means_no_network() {
    let up = Upstream::start().await;
    let outcome = run_js(
        &Policy::builtin_default(),
        &format!(
            r#"export default () => fetch("http://localhost:{}/api/hello");"#,
            up.port()
        ),
    )
    .await;
    assert_eq!(code(&outcome), "policy_denied");
    let error = outcome.error().unwrap();
    let fix = error.fix().unwrap();
    assert_eq!(
        (fix.key.as_str(), fix.value),
        (
            "[[http.allow]] url",
            format!("\"http://localhost:{}/\"", up.port())
        )
    );
    assert_eq!(up.connections(), 0);
}

#[tokio::test]
async fn methods_outside_the_rule_are_refused_with_a_fix() {
    let up = Upstream::start().await;
    let p = policy(&format!(
        "[http]\nallow_private = [\"127.0.0.1/32\", \"::1/128\"]\n[[http.allow]]\nurl = \"http://localhost:{}/api/\"\n",
        up.port()
    ));
    let outcome = run_js(
        &p,
        &format!(
            r#"export default async () => {{
              try {{ await fetch("http://localhost:{}/api/echo", {{ method: "DELETE" }}); }}
              catch (e) {{ return [e.name, e.rule, e.fix]; }}
            }};"#,
            up.port()
        ),
    )
    .await;
    assert_eq!(
        json_output(&outcome),
        serde_json::json!([
            "PolicyDeniedError",
            "http.allow[0].methods",
            "http.allow[0].methods = [\"GET\", \"HEAD\", \"DELETE\"]"
        ])
    );
    assert_eq!(up.connections(), 0);
}

/// `[[http.deny]]` is checked before the allow rules: "any of this API but these" is one
/// policy. A denied URL (every method, or the rule's methods only) is refused with its rule
/// and no fix, without connecting; what it does not match is allowed as before; uncaught, the
/// call is `policy_denied`; a bad deny rule does not load.
#[tokio::test]
async fn deny_rules_are_checked_before_the_allow_rules() {
    let up = Upstream::start().await;
    let port = up.port();
    let deny = format!(
        "[[http.deny]]\nurl = \"http://localhost:{port}/api/admin\"\n\
         [[http.deny]]\nurl = \"http://localhost:{port}/api/echo\"\nmethods = [\"post\"]\n"
    );
    let p = policy(&format!(
        "[http]\nallow_private = [\"127.0.0.1/32\", \"::1/128\"]\n\
         [[http.allow]]\nurl = \"http://localhost:{port}/api/\"\nmethods = [\"GET\", \"POST\"]\n{deny}"
    ));
    let urls = [
        format!("http://localhost:{port}/api/admin"),
        format!("http://localhost:{port}/api/admin/users"),
        format!("http://localhost:{port}/api/hello"),
        format!("http://localhost:{port}/api/echo"),
    ];
    let results = attempts(&p, &urls).await;
    let got: Vec<(Value, Value)> = results
        .iter()
        .map(|r| (r["rule"].clone(), r["status"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (Value::from("http.deny[0]"), Value::Null),
            (Value::from("http.deny[0]"), Value::Null),
            (Value::Null, Value::from(200)),
            (Value::Null, Value::from(200)),
        ],
        "{results:?}"
    );
    assert_eq!(results[0]["fix"], Value::Null);
    assert_eq!(up.connections(), 2, "the denied URLs never connected");
    let post = run_js(
        &p,
        &format!(
            "export default () => fetch(\"http://localhost:{port}/api/echo\", {{ method: \"POST\", body: \"x\" }});"
        ),
    )
    .await;
    assert_eq!(code(&post), "policy_denied");
    let message = post.error().unwrap().to_string();
    assert!(message.contains("(http.deny[1])"), "{message}");
    let bad =
        Policy::from_toml("[http]\n[[http.deny]]\nurl = \"localhost/api\"\n", None).unwrap_err();
    assert!(bad.to_string().contains("http.deny[0].url"), "{bad}");
    assert_next_call_works().await;
}

/// Run one fetch and return how it failed: `[name, code]`.
async fn failure(policy: &Policy, url: &str) -> Value {
    let source = format!(
        r#"export default async () => {{
          try {{ const r = await fetch("{url}"); await r.arrayBuffer(); return "no error"; }}
          catch (e) {{ return [e.name, e.code ?? null, e instanceof NetworkError, e instanceof TypeError]; }}
        }};"#
    );
    json_output(&run_js(policy, &source).await)
}

#[tokio::test]
async fn a_gzip_response_is_decompressed_and_a_gzip_bomb_is_stopped() {
    let up = Upstream::start().await;
    let port = up.port();
    let p = allowed(port, "max_response_body = \"1MiB\"");
    let ok = run_js(
        &p,
        &format!(r#"export default async () => (await fetch("http://localhost:{port}/api/gzip")).json();"#),
    )
    .await;
    assert_eq!(output(&ok), r#"{"compressed":true}"#);
    assert_eq!(
        failure(&p, &format!("http://localhost:{port}/api/gzip-bomb")).await,
        serde_json::json!(["ResponseTooLargeError", "response-too-large", true, true])
    );
    assert_eq!(
        failure(
            &p,
            &format!("http://localhost:{port}/api/big?bytes=2000000")
        )
        .await,
        serde_json::json!(["ResponseTooLargeError", "response-too-large", true, true])
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn upstream_failures_are_distinct_typed_errors() {
    let up = Upstream::start().await;
    let port = up.port();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let p = policy(&format!(
        r#"
[http]
timeout = "300ms"
max_request_body = "1KiB"
allow_private = ["127.0.0.1/32", "::1/128"]
[[http.allow]]
url = "http://localhost:{port}/api/"
methods = ["GET", "POST"]
[[http.allow]]
url = "http://127.0.0.1:{closed}/"
[[http.allow]]
url = "http://palisade-test.invalid/"
"#
    ));
    assert_eq!(
        failure(&p, &format!("http://localhost:{port}/api/hang")).await,
        serde_json::json!(["UpstreamTimeoutError", "timeout", true, true])
    );
    assert_eq!(
        failure(&p, &format!("http://127.0.0.1:{closed}/")).await,
        serde_json::json!(["ConnectionRefusedError", "refused", true, true])
    );
    assert_eq!(
        failure(&p, "http://palisade-test.invalid/").await,
        serde_json::json!(["DnsError", "dns", true, true])
    );
    assert_eq!(
        failure(&p, &format!("http://localhost:{port}/api/reset")).await,
        serde_json::json!(["ConnectionResetError", "reset", true, true])
    );
    let big_post = format!(
        r#"export default async () => {{
          try {{ await fetch("http://localhost:{port}/api/echo", {{ method: "POST", body: "x".repeat(4096) }}); }}
          catch (e) {{ return [e.name, e.code]; }}
        }};"#
    );
    assert_eq!(
        json_output(&run_js(&p, &big_post).await),
        serde_json::json!(["RequestTooLargeError", "request-too-large"])
    );
}

#[tokio::test]
async fn request_budgets_and_rate_limits_refuse_with_their_rule() {
    let up = Upstream::start().await;
    let port = up.port();
    let url = format!("http://localhost:{port}/api/hello");
    let budget = allowed(port, "max_requests = 2");
    let results = attempts(&budget, &[url.clone(), url.clone(), url.clone()]).await;
    assert_eq!(results[1]["status"], 200);
    assert_eq!(results[2]["rule"], "http.max_requests");
    assert_eq!(results[2]["fix"], "http.max_requests = 4");

    // The rate spans calls: three requests per minute under this policy, whoever makes them.
    let rated = allowed(port, "rate = \"3/min\"");
    let first = attempts(&rated, &[url.clone(), url.clone()]).await;
    assert!(first.iter().all(|r| r["status"] == 200), "{first:?}");
    let second = attempts(&rated, &[url.clone(), url.clone()]).await;
    assert_eq!(second[0]["status"], 200);
    assert_eq!(second[1]["rule"], "http.rate");
    assert_eq!(up.seen().len(), 2 + 3);
}

#[tokio::test]
async fn secrets_reach_the_upstream_but_never_the_script() {
    let up = Upstream::start().await;
    let port = up.port();
    let dir = std::env::temp_dir().join(format!("palisade-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret = "s3cr3t-token-value-7f9c";
    std::fs::write(dir.join("token"), format!("{secret}\n")).unwrap();
    let text = format!(
        r#"
[secrets]
TOKEN = {{ file = "{}" }}
[http]
allow_private = ["127.0.0.1/32", "::1/128"]
[[http.allow]]
url = "http://localhost:{port}/api/"
methods = ["GET", "POST"]
headers = {{ Authorization = "Bearer ${{secret:TOKEN}}" }}
"#,
        dir.join("token").display()
    );
    let p = policy(&text);
    let source = format!(
        r#"export default async () => {{
          const r = await fetch("http://localhost:{port}/api/echo", {{ headers: {{ authorization: "Bearer mine" }} }});
          const echoed = await (await fetch("http://localhost:{port}/api/echo-auth")).json();
          const seen = {{ headers: [...r.headers], body: await r.text(), echoed }};
          console.log(JSON.stringify(seen));
          console.log(JSON.stringify(Object.getOwnPropertyNames(globalThis)));
          return seen;
        }};"#
    );
    let outcome = run_js(&p, &source).await;
    let out = json_output(&outcome);
    let echoed = out["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h[0] == "x-echo-authorization")
        .cloned();
    assert_eq!(
        echoed,
        Some(serde_json::json!(["x-echo-authorization", "[redacted]"]))
    );
    assert_eq!(
        up.seen()[0].authorization.as_deref(),
        Some(format!("Bearer {secret}").as_str())
    );
    // A body that echoes the secret reaches the script, but not the outcome.
    assert_eq!(out["echoed"]["authorization"], "Bearer [redacted]");
    let everything = serde_json::to_string(&outcome).unwrap();
    assert!(
        !everything.contains(secret),
        "the secret leaked: {everything}"
    );
    assert!(!p.to_string().contains(secret));
    assert!(!format!("{p:?}").contains(secret));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 38, item 24: a short secret (`"42"`) garbled every output and message holding those
/// characters and turned output into `bad_output`. The policy refuses a secret under 8 bytes
/// (`invalid_policy`, with the reason), and redaction keeps the output's JSON structure: a
/// secret echoed back and returned as a number was `{"n":[redacted]}`, not JSON.
#[tokio::test]
async fn regression_38_24_short_secrets_are_refused_and_redaction_keeps_json() {
    let up = Upstream::start().await;
    let port = up.port();
    let dir = scratch_dir("secret-json");
    let with_secret = |value: &str| {
        std::fs::write(dir.join("token"), format!("{value}\n")).unwrap();
        Policy::from_toml(
            &format!(
                r#"
[limits]
timeout = "10s"
[secrets]
TOKEN = {{ file = "{}" }}
[http]
allow_private = ["127.0.0.1/32", "::1/128"]
[[http.allow]]
url = "http://localhost:{port}/api/"
headers = {{ Authorization = "Bearer ${{secret:TOKEN}}" }}
"#,
                dir.join("token").display()
            ),
            None,
        )
    };
    for short in ["42", "x", "1234567"] {
        let error = palisade::Error::InvalidPolicy(with_secret(short).unwrap_err());
        assert_eq!(error.code(), "invalid_policy", "{short}");
        assert!(
            error.to_string().contains("shorter than 8 bytes"),
            "{error}"
        );
    }
    let p = with_secret("12345678").unwrap();
    let source = format!(
        r#"export default async () => {{
          const auth = (await (await fetch("http://localhost:{port}/api/echo-auth")).json()).authorization;
          const secret = auth.split(" ")[1];
          return {{ n: Number(secret), auth, ["k" + secret]: true, list: [1, 2] }};
        }};"#
    );
    let outcome = run_js(&p, &source).await;
    assert_eq!(
        output(&outcome),
        r#"{"n":"[redacted]","auth":"Bearer [redacted]","k[redacted]":true,"list":[1,2]}"#
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn ten_fetches_overlap_in_the_event_loop() {
    let up = Upstream::start().await;
    let p = allowed(up.port(), "");
    let source = format!(
        r#"export default async () => {{
          const all = await Promise.all(Array.from({{ length: 10 }}, () =>
            fetch("http://localhost:{}/api/slow?ms=100").then((r) => r.json())));
          return all.map((x) => x.slept);
        }};"#,
        up.port()
    );
    let outcome = run_js(&p, &source).await;
    assert_eq!(
        output(&outcome),
        "[100,100,100,100,100,100,100,100,100,100]"
    );
    // All ten were at the upstream at once: the calls overlapped rather than queued.
    assert_eq!(up.max_in_flight(), 10);
}

#[tokio::test]
async fn abort_signals_cancel_a_fetch() {
    let up = Upstream::start().await;
    let p = allowed(up.port(), "");
    let source = format!(
        r#"export default async () => {{
          try {{ await fetch("http://localhost:{}/api/hang", {{ signal: AbortSignal.timeout(50) }}); }}
          catch (e) {{ return e.name; }}
        }};"#,
        up.port()
    );
    assert_eq!(output(&run_js(&p, &source).await), r#""TimeoutError""#);
}

#[tokio::test]
async fn the_agent_callback_example_policy_allows_only_its_callback() {
    let p = Policy::from_file(root().join("policies/agent-callback.toml")).unwrap();
    let results = attempts(
        &p,
        &[
            "http://localhost:8080/admin".to_owned(),
            "https://example.com/".to_owned(),
        ],
    )
    .await;
    assert_eq!(results[0]["rule"], "http.allow");
    assert_eq!(results[1]["rule"], "http.allow");
    assert_eq!(p.http().unwrap().allow[0].methods, ["POST"]);
}

#[tokio::test]
async fn a_capability_can_be_forwarded_to_a_local_url() {
    let up = Upstream::start().await;
    let p = policy(&format!(
        "[capabilities.allow.echo]\nforward = \"http://127.0.0.1:{}/api/echo\"\n",
        up.port()
    ));
    let outcome = run_js(&p, r#"export default async () => host.echo({ a: 1 });"#).await;
    assert_eq!(
        json_output(&outcome),
        serde_json::json!({"method": "POST", "length": 7, "body": "{\"a\":1}"})
    );
    assert_eq!(outcome.audit[0].rule, "capabilities.allow.echo");
    assert_eq!(outcome.audit[0].bytes_out, output(&outcome).len() as u64);
}

#[tokio::test]
async fn waiting_on_the_network_counts_against_the_call_deadline() {
    let up = Upstream::start().await;
    let p = policy(&format!(
        "[limits]\ntimeout = \"300ms\"\n[http]\ntimeout = \"20s\"\nallow_private = [\"127.0.0.1/32\", \"::1/128\"]\n\
         [[http.allow]]\nurl = \"http://localhost:{}/api/\"\n",
        up.port()
    ));
    let outcome = run_js(
        &p,
        &format!(
            "export default async () => (await fetch(\"http://localhost:{}/api/hang\")).text();",
            up.port()
        ),
    )
    .await;
    assert_eq!(code(&outcome), "timeout");
    assert_next_call_works().await;
}

/// Issue 25: a refusal names the host the script asked for, never the addresses it resolved to
/// (the script would learn the internal address map one name at a time); the fix names the
/// host, and `http.allow_private_hosts` lets that host through.
#[tokio::test]
async fn refusals_name_the_host_not_its_addresses() {
    let up = Upstream::start().await;
    let port = up.port();
    let rules = format!("[[http.allow]]\nurl = \"http://localhost:{port}/api/\"\n");
    let p = policy(&format!("[http]\n{rules}"));
    let source = format!(
        r#"export default async () => {{
          try {{ await fetch("http://localhost:{port}/api/hello"); return "sent"; }}
          catch (e) {{ return {{ message: e.message, fix: e.fix, rule: e.rule }}; }}
        }};"#
    );
    let outcome = run_js(&p, &source).await;
    let refused = json_output(&outcome);
    assert_eq!(refused["rule"], "http.private", "{refused}");
    assert_eq!(refused["fix"], "http.allow_private_hosts = [\"localhost\"]");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("localhost resolves to a private"),
        "{message}"
    );
    let everything = serde_json::to_string(&outcome).unwrap();
    assert!(
        !everything.contains("127.0.0.1") && !everything.contains("::1"),
        "{everything}"
    );
    assert_eq!(up.connections(), 0);
    // The fix, applied, lets the request through.
    let p = policy(&format!(
        "[http]\nallow_private_hosts = [\"localhost\"]\n{rules}"
    ));
    let outcome = run_js(&p, &source).await;
    assert_eq!(json_output(&outcome), "sent");
    assert_eq!(up.connections(), 1);
}

#[tokio::test]
async fn any_https_host_still_refuses_private_addresses() {
    // `https://*` is any public host over https: every address check still applies, so the
    // loopback, private and metadata addresses are refused after resolving, before connecting,
    // and plain http matches no rule.
    let p = policy("[http]\n[[http.allow]]\nurl = \"https://*\"\n");
    let urls: Vec<String> = [
        "https://localhost/",
        "https://127.0.0.1/",
        "https://[::1]/",
        "https://10.0.0.1/",
        "https://169.254.169.254/latest/meta-data/",
        "http://example.com/",
    ]
    .iter()
    .map(|u| u.to_string())
    .collect();
    let out = attempts(&p, &urls).await;
    let rules: Vec<&str> = out
        .iter()
        .map(|a| a["rule"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        rules,
        [
            "http.private",
            "http.private",
            "http.private",
            "http.private",
            "http.private",
            "http.allow"
        ],
        "{out:?}"
    );
    for attempt in &out {
        assert_eq!(attempt["name"], "PolicyDeniedError", "{attempt}");
    }
    // The host is fine: an allowed request under another policy goes through.
    let up = Upstream::start().await;
    let outcome = run_js(
        &allowed(up.port(), ""),
        &format!(
            "export default async () => (await fetch(\"http://localhost:{}/api/hello\")).json();",
            up.port()
        ),
    )
    .await;
    assert_eq!(json_output(&outcome)["hello"], "world");
}

/// A server in the manner of Python's `http.server`: it reads the request head, then exactly
/// `Content-Length` bytes of body (none without the header; it does not decode chunked
/// bodies), and answers each request with what it read, as JSON, on a connection it then
/// closes. Stops after `requests` connections or when dropped.
async fn length_only_upstream(requests: usize) -> (u16, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        for _ in 0..requests {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let mut reader = BufReader::new(stream);
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).await.unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push(line.trim_end().to_owned());
            }
            let header = |name: &str| {
                head.iter().skip(1).find_map(|line| {
                    let (k, v) = line.split_once(':')?;
                    k.trim()
                        .eq_ignore_ascii_case(name)
                        .then(|| v.trim().to_owned())
                })
            };
            let length = header("content-length");
            let n: usize = length.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
            let mut body = vec![0u8; n.min(1 << 20)];
            let read = reader.read_exact(&mut body).await.is_ok();
            let answer = serde_json::json!({
                "request": head.first(),
                "content_length": length,
                "transfer_encoding": header("transfer-encoding"),
                "content_type": header("content-type"),
                "body": read.then(|| String::from_utf8_lossy(&body).into_owned()),
            })
            .to_string();
            let response = format!(
                "HTTP/1.0 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
            let mut stream = reader.into_inner();
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    });
    (port, task)
}

#[tokio::test]
async fn byte_bodies_are_sent_with_content_length() {
    // Strings, buffers, views and URLSearchParams go out with their length, not chunked, so a
    // server that reads only Content-Length gets the whole body; a POST without a body says 0,
    // and a content-length the script sets itself is replaced by the body's.
    let (port, task) = length_only_upstream(8).await;
    let source = format!(
        r#"
        const url = "http://localhost:{port}/api/upload";
        const bytes = new TextEncoder().encode("0123456789");
        const bodies = [
          ["string", "héllo wörld"],
          ["arraybuffer", bytes.buffer],
          ["typedarray", bytes.subarray(2, 5)],
          ["dataview", new DataView(bytes.buffer, 7, 3)],
          ["params", new URLSearchParams({{ a: "1", b: "x y" }})],
          ["blob", new Blob(["ab", bytes.subarray(0, 2)])],
          ["empty", undefined],
        ];
        export default async () => {{
          const out = {{}};
          for (const [name, body] of bodies) {{
            out[name] = await (await fetch(url, {{ method: "POST", body }})).json();
          }}
          out.forged = await (await fetch(url, {{
            method: "POST", body: "abc", headers: {{ "content-length": "999" }},
          }})).json();
          return out;
        }};"#
    );
    let outcome = run_js(&allowed(port, ""), &source).await;
    let out = json_output(&outcome);
    let expect = [
        ("string", "héllo wörld", "13"),
        ("arraybuffer", "0123456789", "10"),
        ("typedarray", "234", "3"),
        ("dataview", "789", "3"),
        ("params", "a=1&b=x+y", "9"),
        ("blob", "ab01", "4"),
        ("empty", "", "0"),
        ("forged", "abc", "3"),
    ];
    for (name, body, length) in expect {
        let seen = &out[name];
        assert_eq!(
            seen["request"], "POST /api/upload HTTP/1.1",
            "{name}: {seen}"
        );
        assert_eq!(seen["content_length"], length, "{name}: {seen}");
        assert_eq!(seen["transfer_encoding"], Value::Null, "{name}: {seen}");
        assert_eq!(seen["body"], body, "{name}: {seen}");
    }
    assert_eq!(
        out["params"]["content_type"],
        "application/x-www-form-urlencoded;charset=UTF-8"
    );
    assert_eq!(out["string"]["content_type"], "text/plain;charset=UTF-8");
    task.abort();
}

#[tokio::test]
async fn a_response_body_reads_as_a_stream() {
    // The network body through `response.body`'s reader, under the same response budget.
    let up = Upstream::start().await;
    let port = up.port();
    let source = format!(
        r#"export default async () => {{
          const r = await fetch("http://localhost:{port}/api/big?bytes=3000");
          const reader = r.body.getReader();
          let length = 0;
          for (let step = await reader.read(); !step.done; step = await reader.read()) length += step.value.length;
          let over;
          try {{
            const big = await fetch("http://localhost:{port}/api/big?bytes=9000");
            for await (const chunk of big.body) {{}}
          }} catch (e) {{ over = e.name; }}
          return {{ length, used: r.bodyUsed, over }};
        }};"#
    );
    let outcome = run_js(&allowed(port, "max_response_body = \"8KiB\""), &source).await;
    assert_eq!(
        json_output(&outcome),
        serde_json::json!({ "length": 3000, "used": true, "over": "ResponseTooLargeError" })
    );
}

/// A server that records each request as it came on the wire: the head's lines, and the body's
/// bytes exactly as framed (a chunked body up to and with its last chunk, or `Content-Length`
/// bytes), with the chunked body decoded beside them. It answers each complete request with that
/// record as JSON and closes the connection; a request broken off before its body ended is
/// recorded with `complete: false` and gets no answer. Records go to `seen`.
async fn framing_upstream() -> (
    u16,
    std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    tokio::task::JoinHandle<()>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(stream);
                let mut head = Vec::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).await.unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push(line.trim_end().to_owned());
                }
                let header = |name: &str| {
                    head.iter().skip(1).find_map(|line| {
                        let (k, v) = line.split_once(':')?;
                        k.trim()
                            .eq_ignore_ascii_case(name)
                            .then(|| v.trim().to_owned())
                    })
                };
                let mut raw = Vec::new();
                let mut decoded = Vec::new();
                let mut complete = true;
                if header("transfer-encoding").as_deref() == Some("chunked") {
                    loop {
                        let mut size_line = String::new();
                        if reader.read_line(&mut size_line).await.unwrap_or(0) == 0 {
                            complete = false;
                            break;
                        }
                        raw.extend_from_slice(size_line.as_bytes());
                        let Ok(size) = usize::from_str_radix(size_line.trim_end(), 16) else {
                            complete = false;
                            break;
                        };
                        let mut chunk = vec![0u8; size + 2];
                        if size > 1 << 20 || reader.read_exact(&mut chunk).await.is_err() {
                            complete = false;
                            break;
                        }
                        raw.extend_from_slice(&chunk);
                        decoded.extend_from_slice(&chunk[..size]);
                        if size == 0 {
                            break;
                        }
                    }
                } else {
                    let n: usize = header("content-length")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0);
                    let mut body = vec![0u8; n.min(1 << 20)];
                    complete = reader.read_exact(&mut body).await.is_ok();
                    raw.extend_from_slice(&body);
                    decoded = body;
                }
                let answer = serde_json::json!({
                    "request": head.first(),
                    "content_length": header("content-length"),
                    "transfer_encoding": header("transfer-encoding"),
                    "content_type": header("content-type"),
                    "raw": String::from_utf8_lossy(&raw),
                    "body": String::from_utf8_lossy(&decoded),
                    "complete": complete,
                });
                record.lock().unwrap().push(answer.clone());
                if complete {
                    let answer = answer.to_string();
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                        answer.len()
                    );
                    let mut stream = reader.into_inner();
                    let _ = stream.write_all(response.as_bytes()).await;
                    let _ = stream.shutdown().await;
                }
            });
        }
    });
    (port, seen, task)
}

#[tokio::test]
async fn a_stream_body_is_sent_chunked_and_counted_against_the_request_budget() {
    // A `ReadableStream` body goes out as the stream yields it, one HTTP chunk per stream chunk,
    // with `Transfer-Encoding: chunked` and no length; a stream over `http.max_request_body` is
    // broken off by the host (`request-too-large`), a chunk that is not a Uint8Array ends the
    // request with a TypeError, and a string body beside them still goes with its length.
    let (port, seen, task) = framing_upstream().await;
    let source = format!(
        r#"
        const url = "http://localhost:{port}/api/upload";
        const post = (body) => fetch(url, {{ method: "POST", body, duplex: "half" }});
        export default async () => {{
          const encoder = new TextEncoder();
          const parts = ["hello ", "chunked ", "wörld"];
          const sent = await (await post(new ReadableStream({{
            async pull(controller) {{
              await new Promise((resolve) => setTimeout(resolve, 1));
              if (parts.length > 0) controller.enqueue(encoder.encode(parts.shift()));
              else controller.close();
            }},
          }}))).json();
          let bad;
          try {{
            await post(new ReadableStream({{ start(c) {{ c.enqueue("text"); c.close(); }} }}));
          }} catch (e) {{ bad = [e.name, e.message]; }}
          const after = await (await fetch(url, {{ method: "POST", body: "abc" }})).json();
          // The budget is the call's, all bodies together: this one goes over it.
          let pulled = 0, cancelled = false, over;
          try {{
            await post(new ReadableStream({{
              pull(controller) {{ pulled++; controller.enqueue(new Uint8Array(1024).fill(120)); }},
              cancel() {{ cancelled = true; }},
            }}));
          }} catch (e) {{ over = [e.name, e.code]; }}
          return {{ sent, over, cancelled, pulled_few: pulled < 64, bad, after }};
        }};"#
    );
    let outcome = run_js(&allowed(port, "max_request_body = \"4KiB\""), &source).await;
    let out = json_output(&outcome);
    let sent = &out["sent"];
    assert_eq!(sent["request"], "POST /api/upload HTTP/1.1", "{out}");
    assert_eq!(sent["transfer_encoding"], "chunked", "{out}");
    assert_eq!(sent["content_length"], Value::Null, "{out}");
    assert_eq!(sent["content_type"], Value::Null, "{out}");
    assert_eq!(
        sent["raw"], "6\r\nhello \r\n8\r\nchunked \r\n6\r\nwörld\r\n0\r\n\r\n",
        "{out}"
    );
    assert_eq!(sent["body"], "hello chunked wörld", "{out}");
    assert_eq!(
        out["over"],
        serde_json::json!(["RequestTooLargeError", "request-too-large"])
    );
    assert_eq!(out["cancelled"], true, "{out}");
    assert_eq!(out["pulled_few"], true, "{out}");
    assert_eq!(
        out["bad"],
        serde_json::json!(["TypeError", "a body stream's chunks must be Uint8Arrays"])
    );
    let after = &out["after"];
    assert_eq!(after["content_length"], "3", "{out}");
    assert_eq!(after["transfer_encoding"], Value::Null, "{out}");
    assert_eq!(after["body"], "abc", "{out}");
    // The upstream got at most the budget's bytes of the stream over it, in chunks, and never
    // its end (recorded once the upstream has seen the connection close). The request whose
    // stream gave a string sent nothing: its head goes with the first chunk.
    let broken_off = |records: &[Value]| {
        records
            .iter()
            .find(|r| r["complete"] == false && r["request"] != Value::Null)
            .cloned()
    };
    let mut waited = 0;
    let record = loop {
        let records = seen.lock().unwrap().clone();
        if let Some(record) = broken_off(&records) {
            break record;
        }
        assert!(waited < 500, "no broken-off request recorded: {records:?}");
        waited += 1;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(record["request"], "POST /api/upload HTTP/1.1", "{record}");
    assert_eq!(record["transfer_encoding"], "chunked", "{record}");
    let body = record["body"].as_str().unwrap();
    assert!(
        !body.is_empty() && body.len() <= 4096 && body.bytes().all(|b| b == b'x'),
        "{record}"
    );
    let records = seen.lock().unwrap().clone();
    assert!(
        records
            .iter()
            .all(|r| r["request"] != Value::Null || r["raw"] == ""),
        "{records:?}"
    );
    task.abort();
    assert_next_call_works().await;
}

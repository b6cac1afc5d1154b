//! The MCP server, driven by a real client: the official Python SDK (`mcp`, from
//! `tests/mcp/requirements.txt`, installed by scripts/setup.sh into `target/python-venv`; a
//! machine without it fails here, never skips) runs `tests/mcp/client.py` against `palisade mcp`
//! over stdio and against `/mcp` on a `palisade serve` with keys. The hostile cases speak
//! JSON-RPC to `/mcp` in process: each asserts its exact code, then a normal call works.

use crate::cli::palisade_bin;
use crate::serve::{Server, assert_error, config, keys_file, policies_dir, start};
use crate::support::root;
use serde_json::{Value, json};
use std::process::Command;

/// Run the Python client with `args`; its summary (the last line it printed).
fn client(args: &[&str]) -> Value {
    let python = root().join("target/python-venv/bin/python");
    let output = Command::new(&python)
        .arg(root().join("tests/mcp/client.py"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup.sh)", python.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client failed:\n{stdout}\n{stderr}"
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// What `client.py` saw, whichever transport.
fn assert_summary(summary: &Value) {
    let tools = summary["tools"].as_array().unwrap();
    for tool in [
        "run_js",
        "session_create",
        "session_run",
        "session_stop",
        "fs_write",
        "fs_read",
    ] {
        assert!(tools.iter().any(|t| t == tool), "{tool}: {summary}");
    }
    assert!(tools.iter().any(|t| t == "app_act") && tools.iter().any(|t| t == "app_view"));
    assert_eq!(
        summary["resources"],
        json!([
            "palisade://policies/box",
            "palisade://policies/box/types",
            "palisade://policies/default",
            "palisade://policies/default/types"
        ])
    );
    assert_eq!(summary["run"], json!({"sum": 42}));
    assert_eq!(
        summary["refusal"],
        json!(["invalid_input", "policy_denied"])
    );
    assert_eq!(
        summary["session"],
        json!([{"doubled": 40, "runs": 1}, {"doubled": 40, "runs": 2}])
    );
    // A live session: a `Map` made in one `session_run` is there in the next; a failed run
    // (after clearing it) leaves it as it was.
    assert_eq!(summary["live"], json!([40, 42, "guest_exception", 42]));
}

#[test]
fn mcp_stdio_a_python_client_runs_is_refused_follows_the_fix_and_drives_a_session() {
    let policies = policies_dir("mcp-stdio");
    let data = policies.parent().unwrap().join("data");
    let summary = client(&[
        "stdio",
        palisade_bin().to_str().unwrap(),
        policies.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    assert_summary(&summary);
}

#[test]
fn mcp_http_a_python_client_does_the_same_with_a_tenants_key() {
    let policies = policies_dir("mcp-http");
    let base = policies.parent().unwrap();
    let keys = keys_file(base);
    let data = base.join("data");
    let server = crate::serve_cli::serve(&[
        "--listen",
        "127.0.0.1:0",
        "--policies",
        policies.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--keys",
        keys.to_str().unwrap(),
    ]);
    let url = format!("http://{}/mcp", server.addr);
    let summary = client(&["http", &url, "acme-key"]);
    assert_summary(&summary);
}

/// The headers of a JSON-RPC message to `/mcp`.
const RPC_HEADERS: [(&str, &str); 4] = [
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
    ("mcp-protocol-version", "2025-06-18"),
    ("host", "localhost"),
];

/// One JSON-RPC message to `/mcp` in process, as `key`.
async fn rpc(server: &Server, key: &str, body: Value) -> crate::serve::Answer {
    server
        .call_with("POST", "/mcp", Some(key), &RPC_HEADERS, body)
        .await
}

/// An inline policy's receipt names the SHA-256 of the bytes the client sent, over MCP as over
/// `POST /v1/run`: the same text (keys unsorted, spaces kept) gives the same SHA-256 both ways,
/// for `run_js` and for `session_create`'s session; a different text of the same policy gives
/// another. A policy object repeated in a body (a key twice) is read as the transport reads it.
#[tokio::test]
async fn mcp_names_an_inline_policy_by_the_bytes_sent() {
    let server = start(config("mcp-inline-sha", false));
    let policy =
        r#"{ "limits": {"timeout": "900ms", "fuel": 900000000},  "description": "unsorted" }"#;
    let sha = crate::support::sha256_hex(policy.as_bytes());
    let source = r#""export default (x) => x + 1""#;
    let http = format!(r#"{{"policy": {policy}, "source": {source}, "input": 1}}"#);
    let ran = server
        .call_text("POST", "/v1/run", None, &RPC_HEADERS[1..2], http)
        .await;
    assert_eq!(ran.status, 200, "{}", ran.body);
    assert_eq!(ran.body["receipt"]["policy_sha256"], sha, "{}", ran.body);
    let call = |tool: &str, arguments: String| {
        format!(
            r#"{{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {{"name": "{tool}", "arguments": {arguments}}}}}"#
        )
    };
    let run_js = call(
        "run_js",
        format!(r#"{{"source": {source}, "policy": {policy}, "input": 2}}"#),
    );
    let answer = server
        .call_text("POST", "/mcp", Some("local"), &RPC_HEADERS, run_js)
        .await;
    let result = &answer.body["result"]["structuredContent"];
    assert_eq!(result["output"], 3, "{}", answer.body);
    assert_eq!(result["receipt"]["policy_sha256"], sha, "{}", answer.body);
    let create = call("session_create", format!(r#"{{"policy": {policy}}}"#));
    let answer = server
        .call_text("POST", "/mcp", Some("local"), &RPC_HEADERS, create)
        .await;
    let id = &answer.body["result"]["structuredContent"]["session_id"];
    assert!(id.is_string(), "{}", answer.body);
    let ran = tool(
        &server,
        "local",
        "session_run",
        json!({"session_id": id, "source": "export default 4"}),
    )
    .await;
    let receipt = &ran["structuredContent"]["receipt"];
    assert_eq!(receipt["policy_sha256"], sha, "{ran}");
    // The parsed value written out (sorted keys, no spaces) is another text, another SHA-256.
    let sorted = serde_json::from_str::<Value>(policy).unwrap().to_string();
    let other = tool(
        &server,
        "local",
        "run_js",
        json!({"source": "export default 1", "policy": serde_json::from_str::<Value>(&sorted).unwrap()}),
    )
    .await;
    let other_sha = &other["structuredContent"]["receipt"]["policy_sha256"];
    assert_eq!(*other_sha, crate::support::sha256_hex(sorted.as_bytes()));
    assert_ne!(*other_sha, sha);
    // A body that gives `policy` twice: the transport refuses it or reads one; either way
    // nothing runs under bytes the tool did not resolve, and the next call is fine.
    let twice = call(
        "run_js",
        format!(r#"{{"source": "export default 1", "policy": {policy}, "policy": "default"}}"#),
    );
    let answer = server
        .call_text("POST", "/mcp", Some("local"), &RPC_HEADERS, twice)
        .await;
    let receipt = &answer.body["result"]["structuredContent"]["receipt"];
    assert_ne!(receipt["policy_sha256"], sha, "{}", answer.body);
    normal_run(&server, "local").await;
}

/// `initialize` answers for `key`'s tenant (the server keeps no session: each request stands
/// alone).
async fn initialize(server: &Server, key: &str) {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "palisade-tests", "version": "1"}}});
    let answer = rpc(server, key, init).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["result"]["serverInfo"]["name"], "palisade");
}

/// `tools/call`: the JSON-RPC `result` (or the whole answer when it has none).
async fn tool(server: &Server, key: &str, name: &str, args: Value) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": args}});
    let answer = rpc(server, key, call).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body.get("result").cloned().unwrap_or(answer.body)
}

/// The error code of a tool result that failed.
fn refused(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["structuredContent"]["error"]["code"]
        .as_str()
        .unwrap()
}

async fn normal_run(server: &Server, key: &str) {
    let ok = tool(
        server,
        key,
        "run_js",
        json!({"policy": "default", "source": "export default (x) => x + 1", "input": 41}),
    )
    .await;
    assert_eq!(ok["isError"], false, "{ok}");
    assert_eq!(ok["structuredContent"]["output"], 42);
}

/// Without a key `/mcp` is 401 `unauthorized`; a client's options cannot pass the policy's
/// limits (`policy_denied`), nor name an argument a tool does not take, a tool that does not
/// exist (JSON-RPC -32602), or a policy, session or resource of another tenant (not found).
#[tokio::test]
async fn mcp_refuses_what_the_caller_may_not_do_and_goes_on() {
    let server = start(config("mcp-hostile", true));
    let anonymous = server
        .call_with(
            "POST",
            "/mcp",
            None,
            &[("accept", "application/json, text/event-stream")],
            json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}),
        )
        .await;
    assert_error(&anonymous, 401, "unauthorized");
    initialize(&server, "acme-key").await;
    normal_run(&server, "acme-key").await;
    for (args, code) in [
        (
            json!({"policy": "default", "source": "export default 1", "timeout": "1h"}),
            "policy_denied",
        ),
        (
            json!({"policy": "default", "source": "export default 1", "memory": "4GiB"}),
            "policy_denied",
        ),
        (
            json!({"policy": "default", "source": "export default 1", "fuell": 5}),
            "invalid_input",
        ),
        (
            json!({"policy": "box", "source": "export default 1"}),
            "policy_not_found",
        ),
    ] {
        let key = if code == "policy_not_found" {
            "nobody-key"
        } else {
            "acme-key"
        };
        let result = tool(&server, key, "run_js", args.clone()).await;
        assert_eq!(refused(&result), code, "{args}");
        normal_run(&server, "acme-key").await;
    }
    let created = tool(
        &server,
        "acme-key",
        "session_create",
        json!({"policy": "box"}),
    )
    .await;
    let id = created["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    initialize(&server, "beta-key").await;
    let stolen = tool(
        &server,
        "beta-key",
        "session_run",
        json!({"session_id": id, "source": "export default 1"}),
    )
    .await;
    assert_eq!(refused(&stolen), "session_not_found");
    let listed = tool(&server, "beta-key", "fs_ls", json!({"session_id": id})).await;
    assert_eq!(refused(&listed), "session_not_found");
    let unknown = tool(&server, "acme-key", "rm_rf", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    initialize(&server, "nobody-key").await;
    let read = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
        "params": {"uri": "palisade://policies/box/types"}});
    let hidden = rpc(&server, "nobody-key", read).await;
    assert_eq!(hidden.body["error"]["code"], -32002, "{}", hidden.body);
    normal_run(&server, "acme-key").await;
    // A refusal inside a run is the policy's, audited with the caller's tenant as any other.
    let denied = tool(
        &server,
        "acme-key",
        "run_js",
        json!({"policy": "default", "source": "export default async () => await kv.get('x')"}),
    )
    .await;
    assert_eq!(refused(&denied), "policy_denied");
    let log = server.state.config.audit_log.clone().unwrap();
    let audited = std::fs::read_to_string(log).unwrap();
    let line = audited
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["capability"] == "kv")
        .unwrap_or_else(|| panic!("no audit line for the refusal: {audited}"));
    assert_eq!(
        (&line["tenant"], &line["decision"]),
        (&json!("acme"), &json!("deny"))
    );
    server.assert_fine(Some("acme-key")).await;
}

/// An action app through `app_act` and `app_view`: a dry run keeps nothing, a commit does.
#[tokio::test]
async fn mcp_app_act_previews_with_dry_run_and_commits_without() {
    let server = start(config("mcp-apps", true));
    let source = "export const manifest = { name: 'counter', version: '1' };\n\
        export function init() { return { n: 0 }; }\n\
        export function view(state) { return { text: `n = ${state.n}` }; }\n\
        export const actions = { inc(state, params) { const n = state.n + (params.by ?? 1);\n\
          return { state: { n }, result: n, audit_preview: `INC -> ${n}` }; } };\n";
    let loaded = server
        .call(
            "POST",
            "/v1/apps",
            Some("acme-key"),
            json!({"name": "counter", "source": source, "policy": "default"}),
        )
        .await;
    assert_eq!(loaded.status, 201, "{}", loaded.body);
    initialize(&server, "acme-key").await;
    let act =
        |dry: bool| json!({"app": "counter", "action": "inc", "params": {"by": 2}, "dry_run": dry});
    let preview = tool(&server, "acme-key", "app_act", act(true)).await;
    assert_eq!(preview["isError"], false, "{preview}");
    assert_eq!(preview["structuredContent"]["state"], json!({"n": 2}));
    let viewed = tool(&server, "acme-key", "app_view", json!({"app": "counter"})).await;
    assert_eq!(
        viewed["structuredContent"]["view"],
        json!({"text": "n = 0"}),
        "{viewed}"
    );
    let commit = tool(&server, "acme-key", "app_act", act(false)).await;
    assert_eq!(
        commit["structuredContent"]["state"],
        json!({"n": 2}),
        "{commit}"
    );
    let viewed = tool(&server, "acme-key", "app_view", json!({"app": "counter"})).await;
    assert_eq!(
        viewed["structuredContent"]["view"],
        json!({"text": "n = 2"}),
        "{viewed}"
    );
    let missing = tool(
        &server,
        "acme-key",
        "app_act",
        json!({"app": "nope", "action": "inc"}),
    )
    .await;
    assert_eq!(refused(&missing), "app_not_found");
    normal_run(&server, "acme-key").await;
}

/// A catalog of many policies does not make `tools/list` unbounded: past 64 KiB of
/// declarations a description names the policies left and where their declarations are.
#[tokio::test]
async fn mcp_tool_descriptions_stay_bounded_with_many_policies() {
    let config = config("mcp-many", false);
    let dir = config.policies.clone().unwrap();
    for i in 0..200 {
        std::fs::write(
            dir.join(format!("p{i:03}.toml")),
            "[config]\nregion = \"eu\"\n",
        )
        .unwrap();
    }
    let server = start(config);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let answer = rpc(&server, "any", list).await;
    let tools = answer.body["result"]["tools"].as_array().unwrap().clone();
    let run_js = tools.iter().find(|t| t["name"] == "run_js").unwrap();
    let text = run_js["description"].as_str().unwrap();
    assert!(text.len() < 80 << 10, "{}", text.len());
    assert!(text.contains("## policy `p000`"));
    assert!(text.contains("p199: their declarations are `palisade://policies/NAME/types`"));
    normal_run(&server, "any").await;
}

/// A script in several files, in TypeScript: `run_js` with `modules`, and `POST /v1/run` with
/// the same fields, give the same output; a module name that leads out of the folder is
/// `invalid_input` on both, and a normal call follows.
#[tokio::test]
async fn mcp_and_the_route_run_typescript_with_its_modules() {
    let server = start(config("mcp-modules", true));
    let source = "import { add } from './lib.js';\nimport data from './data.json' with { type: 'json' };\n\
        type In = { a: number };\nexport default (input: In): number => add(input.a, data.b);\n";
    let modules = json!({"lib.ts": "export const add = (a: number, b: number): number => a + b;",
        "data.json": "{\"b\": 40}"});
    let args = json!({"policy": "default", "name": "main.ts", "source": source,
        "modules": modules, "input": {"a": 2}});
    let ran = tool(&server, "acme-key", "run_js", args).await;
    assert_eq!(ran["structuredContent"]["output"], 42, "{ran}");
    let body = json!({"policy": "default", "script": {"name": "main.ts", "source": source},
        "modules": modules, "input": {"a": 2}});
    let routed = server.call("POST", "/v1/run", Some("acme-key"), body).await;
    assert_eq!(routed.body["output"], 42, "{}", routed.body);
    let escape = json!({"policy": "default", "source": "import x from '../x.js'; export default x",
        "modules": {"../x.js": "export default 1"}});
    let refused_tool = tool(&server, "acme-key", "run_js", escape.clone()).await;
    assert_eq!(refused(&refused_tool), "invalid_input");
    let refused_route = server
        .call("POST", "/v1/run", Some("acme-key"), escape)
        .await;
    assert_error(&refused_route, 400, "invalid_input");
    normal_run(&server, "acme-key").await;
}

/// `run_js` takes a policy sent with the call as `POST /v1/run` does, through the same gate:
/// within the ceiling it runs and the receipt names it `inline`; past it, `policy_denied`.
#[tokio::test]
async fn mcp_run_js_takes_an_inline_policy_within_the_ceiling() {
    let mut config = config("mcp-inline", true);
    config.inline_ceiling = Some("box".to_owned());
    let server = start(config);
    let run = |policy: Value| {
        let args = json!({"policy": policy, "source": "export default (x) => x * 2", "input": 21});
        tool(&server, "acme-key", "run_js", args)
    };
    let ran = run(json!({"limits": {"timeout": "2s"}})).await;
    assert_eq!(ran["structuredContent"]["output"], 42, "{ran}");
    assert_eq!(ran["structuredContent"]["receipt"]["policy"], "inline");
    let past = run(json!({"limits": {"timeout": "9s"}})).await;
    assert_eq!(refused(&past), "policy_denied");
    normal_run(&server, "acme-key").await;
}

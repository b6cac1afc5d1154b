//! `palisade build`: standalone components run by the real stock `wasmtime` CLI (48.0.8, as
//! `scripts/setup.sh` installs it), found through `$WASMTIME` or `PATH`. A missing CLI fails
//! these tests: CI installs it, and a skipped test would hide a broken build.

use crate::cli::palisade_bin;
use crate::support::{root, scratch_dir};
use crate::upstream::Upstream;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The stock CLI.
fn wasmtime() -> PathBuf {
    if let Some(path) = std::env::var_os("WASMTIME").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("wasmtime"))
            .find(|candidate| candidate.is_file())
    });
    let path = found.expect(
        "the stock `wasmtime` CLI is not on PATH and $WASMTIME is not set; scripts/setup.sh \
         installs wasmtime-cli 48.0.8",
    );
    let version = Command::new(&path).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        "wasmtime 48.0.8",
        "{} is not the wasmtime-cli these tests are written for",
        path.display()
    );
    path
}

/// A folder for one test's files.
fn folder(name: &str) -> PathBuf {
    scratch_dir(&format!("standalone-{name}"))
}

/// `palisade build` of `source` (written as `app.js` in `dir`) with `args`; the component's
/// path and the flags the build printed.
fn build(dir: &Path, source: &str, args: &[&str]) -> (PathBuf, Vec<String>) {
    let script = dir.join("app.js");
    std::fs::write(&script, source).unwrap();
    let wasm = dir.join("app.wasm");
    let out = Command::new(palisade_bin())
        .arg("build")
        .arg(&script)
        .arg("-o")
        .arg(&wasm)
        .arg("--print-wasmtime-flags")
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "palisade build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let flags = String::from_utf8(out.stdout).unwrap();
    let flags = flags.split_whitespace().map(str::to_owned).collect();
    (wasm, flags)
}

/// Write `toml` as `policy.toml` in `dir` and return its path.
fn policy_file(dir: &Path, toml: &str) -> String {
    let path = dir.join("policy.toml");
    std::fs::write(&path, toml).unwrap();
    path.display().to_string()
}

/// `wasmtime run FLAGS WASM` with `stdin`, ended after a generous bound.
fn wasmtime_run(wasm: &Path, flags: &[String], stdin: &str) -> Output {
    let mut child = Command::new(wasmtime())
        .arg("run")
        .args(flags)
        .arg(wasm)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    wait_bounded(child, Duration::from_secs(120))
}

/// Wait for `child`, killing it past `bound`.
fn wait_bounded(mut child: Child, bound: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > bound {
            let _ = child.kill();
            panic!("the process ran past {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The error line a failed run writes last on stderr.
fn error_code(out: &Output) -> String {
    let stderr = text(&out.stderr);
    let line = stderr.lines().last().unwrap_or_default();
    let value: serde_json::Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the last stderr line is not JSON ({e}): {stderr}"));
    value["error"]["code"].as_str().unwrap().to_owned()
}

const ECHO: &str = r#"
export default async (input) => {
  console.log("hello", input.name);
  console.warn("careful");
  return { greeting: `Hello, ${input.name}!`, n: input.n * 2 };
};
"#;

#[test]
fn wasmtime_run_reads_stdin_and_writes_stdout() {
    let dir = folder("echo");
    let (wasm, flags) = build(&dir, ECHO, &[]);
    assert!(
        flags.iter().any(|f| f.starts_with("fuel=")),
        "the flags carry the limits: {flags:?}"
    );
    let out = wasmtime_run(&wasm, &flags, r#"{"name":"Ada","n":21}"#);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "{\"greeting\":\"Hello, Ada!\",\"n\":42}\n"
    );
    assert_eq!(text(&out.stderr), "[log] hello Ada\n[warn] careful\n");
}

#[test]
fn wasmtime_run_failures_exit_non_zero_with_the_code() {
    let dir = folder("errors");
    let source = r#"export default (input) => { if (input.boom) throw new RangeError("boom"); return input; };"#;
    let (wasm, flags) = build(&dir, source, &[]);
    let thrown = wasmtime_run(&wasm, &flags, r#"{"boom":true}"#);
    assert!(!thrown.status.success());
    assert_eq!(error_code(&thrown), "guest_exception");
    assert!(text(&thrown.stderr).contains("RangeError: boom"));
    let not_json = wasmtime_run(&wasm, &flags, "{nope");
    assert!(!not_json.status.success());
    assert_eq!(error_code(&not_json), "invalid_input");
    // The component is fine afterwards.
    let fine = wasmtime_run(&wasm, &flags, r#"{"boom":false}"#);
    assert!(fine.status.success(), "{}", text(&fine.stderr));
    assert_eq!(text(&fine.stdout), "{\"boom\":false}\n");
}

#[test]
fn wasmtime_fuel_flag_stops_a_spinning_script() {
    let dir = folder("spin");
    let policy = policy_file(&dir, "[limits]\nfuel = 200000000\ntimeout = \"60s\"\n");
    let source = "export default () => { for (;;) {} };";
    let (wasm, flags) = build(&dir, source, &["--policy", &policy]);
    assert!(
        flags.iter().any(|f| f.starts_with("fuel=200000000,")),
        "{flags:?}"
    );
    let out = wasmtime_run(&wasm, &flags, "null");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("all fuel consumed"),
        "wasmtime's own trap: {}",
        text(&out.stderr)
    );
    let fine = wasmtime_run(
        &build(&dir, "export default () => 1;", &["--policy", &policy]).0,
        &flags,
        "",
    );
    assert_eq!(text(&fine.stdout), "1\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wasmtime_run_with_http_fetches_from_a_local_server() {
    let upstream = Upstream::start().await;
    let port = upstream.port();
    let dir = folder("http");
    let policy = policy_file(
        &dir,
        &format!(
            "[http]\nallow_private = [\"127.0.0.1/32\"]\n[[http.allow]]\nurl = \"http://127.0.0.1:{port}/api/\"\n"
        ),
    );
    let source = r#"export default async (input) => {
  const r = await fetch(input.url);
  return { status: r.status, body: await r.json() };
};"#;
    let (wasm, flags) = build(&dir, source, &["--policy", &policy]);
    assert!(flags.windows(2).any(|w| w == ["-S", "http"]), "{flags:?}");
    let input = format!(r#"{{"url":"http://127.0.0.1:{port}/api/hello"}}"#);
    let out = tokio::task::spawn_blocking(move || wasmtime_run(&wasm, &flags, &input))
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "{\"status\":200,\"body\":{\"hello\":\"world\"}}\n"
    );
    assert_eq!(upstream.seen().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_without_an_http_grant_is_refused_in_the_guest() {
    let upstream = Upstream::start().await;
    let port = upstream.port();
    let dir = folder("no-http");
    let source = "export default async (input) => (await fetch(input.url)).status;";
    let (wasm, flags) = build(&dir, source, &[]);
    let input = format!(r#"{{"url":"http://127.0.0.1:{port}/api/hello"}}"#);
    let out = tokio::task::spawn_blocking(move || wasmtime_run(&wasm, &flags, &input))
        .await
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(error_code(&out), "policy_denied");
    assert!(text(&out.stderr).contains("grants no HTTP access"));
    assert_eq!(upstream.connections(), 0, "nothing left the guest");
}

#[test]
fn wasmtime_run_with_dir_reads_a_mounted_file() {
    let dir = folder("dir");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("note.txt"), "from the host").unwrap();
    let policy = policy_file(&dir, "[[fs.mount]]\nhost = \"data\"\nguest = \"/data\"\n");
    let source =
        r#"export default async () => ({ note: await fs.readFile("/data/note.txt", "utf8") });"#;
    let (wasm, flags) = build(&dir, source, &["--policy", &policy]);
    assert!(flags.iter().any(|f| f.ends_with("::/data")), "{flags:?}");
    let out = wasmtime_run(&wasm, &flags, "null");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\"note\":\"from the host\"}\n");
}

#[test]
fn wasmtime_run_with_keyvalue_uses_the_store() {
    let dir = folder("kv");
    let policy = policy_file(
        &dir,
        "kv = { namespace = \"app\", buckets = { default = \"rw\" } }\n",
    );
    let source = r#"export default async () => {
  await kv.set("greeting", "hi");
  const first = await kv.increment("count");
  const second = await kv.increment("count", 2);
  const swapped = await kv.compareAndSwap("greeting", "hi", "hello");
  return { greeting: await kv.get("greeting"), first, second, swapped };
};"#;
    let (wasm, flags) = build(&dir, source, &["--policy", &policy]);
    assert!(
        flags.windows(2).any(|w| w == ["-S", "keyvalue"]),
        "{flags:?}"
    );
    let out = wasmtime_run(&wasm, &flags, "null");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "{\"greeting\":\"hello\",\"first\":1,\"second\":3,\"swapped\":true}\n"
    );
}

#[test]
fn wasmtime_run_with_config_reads_config_vars() {
    let dir = folder("config");
    let policy = policy_file(&dir, "[config]\nregion = \"eu-west\"\n");
    let source =
        r#"export default () => ({ region: config.get("region"), missing: config.get("nope") });"#;
    let (wasm, flags) = build(&dir, source, &["--policy", &policy]);
    assert!(
        flags
            .windows(2)
            .any(|w| w == ["-S", "config-var=region=eu-west"]),
        "{flags:?}"
    );
    let out = wasmtime_run(&wasm, &flags, "null");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "{\"region\":\"eu-west\",\"missing\":null}\n"
    );
}

#[test]
fn host_capabilities_need_the_palisade_host() {
    let dir = folder("bridge");
    let source = r#"export default async () => host.lookup({ id: 1 });"#;
    let (wasm, flags) = build(&dir, source, &[]);
    let out = wasmtime_run(&wasm, &flags, "null");
    assert!(!out.status.success());
    assert_eq!(error_code(&out), "policy_denied");
    assert!(
        text(&out.stderr).contains("needs the Palisade host"),
        "{}",
        text(&out.stderr)
    );
}

/// A running `wasmtime serve`, killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A response's body, its chunks joined when it came chunked (as a streamed body does).
fn body_of(response: &str) -> String {
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("a response has a head");
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return body.to_owned();
    }
    let mut out = String::new();
    let mut rest = body;
    loop {
        let (size, after) = rest.split_once("\r\n").expect("a chunk size line");
        let size = usize::from_str_radix(size.trim(), 16).expect("a hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}

/// One HTTP/1.1 exchange with 127.0.0.1:`port`; the whole response as text.
fn exchange(port: u16, request: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    stream.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    Ok(text(&response))
}

#[test]
fn wasmtime_serve_answers_requests_through_a_local_port() {
    let dir = folder("serve");
    let hello = std::fs::read_to_string(root().join("examples/http/hello.js")).unwrap();
    let (wasm, flags) = build(&dir, &hello, &["--http"]);
    assert!(flags.windows(2).any(|w| w == ["-S", "cli"]), "{flags:?}");
    let port = {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let served = Served(
        Command::new(wasmtime())
            .arg("serve")
            .arg("--addr")
            .arg(format!("127.0.0.1:{port}"))
            .args(&flags)
            .arg(&wasm)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let body = "x".repeat(100_000);
    let post = format!(
        "POST /hi?name=Ada HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let start = Instant::now();
    let response = loop {
        match exchange(port, &post) {
            Ok(response) => break response,
            Err(_) if start.elapsed() < Duration::from_secs(120) => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => panic!("wasmtime serve did not answer: {e}"),
        }
    };
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("x-palisade: standalone"), "{response}");
    // The body (100 kB each way) comes back chunked, as the guest streams it out.
    let json: serde_json::Value = serde_json::from_str(&body_of(&response)).unwrap();
    assert_eq!(json["greeting"], "Hello, Ada!");
    assert_eq!(json["method"], "POST");
    assert_eq!(json["body"], body.as_str(), "the body made the round trip");
    let get = "GET /?name=Bo HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n";
    let again = exchange(port, get).unwrap();
    assert!(again.contains("\"greeting\":\"Hello, Bo!\""), "{again}");
    drop(served);
}

/// The interfaces of standard WASI 0.2 (and the proposals the stock CLI implements) that a
/// standalone component may import.
const STANDARD: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:filesystem/types",
    "wasi:filesystem/preopens",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:http/types",
    "wasi:http/outgoing-handler",
    "wasi:keyvalue/store",
    "wasi:keyvalue/atomics",
    "wasi:config/store",
];

#[test]
fn built_components_import_only_standard_wasi() {
    let dir = folder("imports");
    let (wasm, _) = build(&dir, ECHO, &[]);
    let bytes = std::fs::read(&wasm).unwrap();
    let mut imports = Vec::new();
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        match payload.unwrap() {
            wasmparser::Payload::ModuleSection { .. }
            | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    imports.push(import.unwrap().name.name.to_owned());
                }
            }
            _ => {}
        }
    }
    assert!(imports.len() >= 10, "{imports:?}");
    for name in &imports {
        let unversioned = name.split('@').next().unwrap();
        assert!(
            STANDARD.contains(&unversioned),
            "`{name}` is not a standard WASI interface"
        );
    }
    assert!(!imports.iter().any(|i| i.starts_with("palisade:")));
}

#[test]
fn the_same_component_runs_under_palisade_run() {
    let dir = folder("two-hosts");
    let (wasm, flags) = build(&dir, ECHO, &[]);
    let stock = wasmtime_run(&wasm, &flags, r#"{"name":"Ada","n":1}"#);
    let out = Command::new(palisade_bin())
        .arg("run")
        .arg(&wasm)
        .args(["--input", r#"{"name":"Ada","n":1}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), text(&stock.stdout));
    assert_eq!(
        text(&out.stdout),
        "{\"greeting\":\"Hello, Ada!\",\"n\":2}\n"
    );
}

/// `palisade run FILE --json --input INPUT [ARGS]`, ended after a generous bound: the whole
/// outcome.
fn palisade_json(file: &Path, input: &str, args: &[&str]) -> serde_json::Value {
    let child = Command::new(palisade_bin())
        .arg("run")
        .arg(file)
        .args(["--json", "--input", input])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_bounded(child, Duration::from_secs(120));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "`palisade run --json` printed no outcome ({e}): {}",
            text(&out.stderr)
        )
    })
}

/// A script that writes console lines of every level and shape (several arguments, a value,
/// a line break inside a message and at its end, an empty line, a prefix inside the text,
/// characters past ASCII), then runs `tail`.
fn console_script(tail: &str) -> String {
    format!(
        r#"export default async (input) => {{
  console.log("hello", input.name);
  console.info({{ a: 1 }}, [2, 3]);
  console.warn("two\nlines");
  console.error("ends with a line break\n");
  console.debug("");
  console.log("[warn] is text here");
  console.log("ümlaut ✓");
  {tail}
}};"#
    )
}

/// Issue 28: a standalone component's console lines, written to its stderr, reach the
/// outcome's `logs` under `palisade run`.
#[test]
fn palisade_run_of_a_built_component_keeps_its_console_lines() {
    let dir = folder("console");
    let (wasm, _) = build(&dir, &console_script(r#"return "done";"#), &[]);
    let outcome = palisade_json(&wasm, r#"{"name":"Ada"}"#, &[]);
    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(outcome["output"], "done");
    assert_eq!(
        outcome["logs"],
        serde_json::json!([
            {"level": "log", "message": "hello Ada"},
            {"level": "info", "message": "{\"a\":1} [2,3]"},
            {"level": "warn", "message": "two\nlines"},
            {"level": "error", "message": "ends with a line break\n"},
            {"level": "debug", "message": ""},
            {"level": "log", "message": "[warn] is text here"},
            {"level": "log", "message": "ümlaut ✓"},
        ])
    );
    assert_eq!(outcome["receipt"]["console_bytes_dropped"], 0);
}

/// A console flood from a standalone component is held to the policy's console cap on the host:
/// lines cut and dropped, and the marker, exactly as for the same script run from source.
#[test]
fn a_standalone_console_flood_is_held_to_the_cap() {
    let dir = folder("console-flood");
    let policy = policy_file(&dir, "[limits]\nconsole = \"2KiB\"\n");
    let source = r#"export default (input) => {
  for (let i = 0; i < input.n; i++) console.log(`line ${i} ` + "x".repeat(i % 300));
  if (input.n > 1) console.warn("y".repeat(100000));
  return input.n;
};"#;
    let (wasm, _) = build(&dir, source, &["--policy", &policy]);
    let flood = r#"{"n":20000}"#;
    let outcome = palisade_json(&wasm, flood, &["--policy", &policy]);
    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(outcome["output"], 20000);
    let logs = outcome["logs"].as_array().unwrap();
    let (kept, marker) = logs.split_at(logs.len() - 1);
    // Each kept line costs its text and a 32-byte record, within the 2 KiB cap.
    let cost: usize = kept
        .iter()
        .map(|l| l["message"].as_str().unwrap().len() + 32)
        .sum();
    assert!(cost <= 2048, "{cost} bytes kept");
    assert_eq!(kept[0]["message"], "line 0 ");
    let receipt = &outcome["receipt"];
    let dropped_lines = receipt["console_lines_dropped"].as_u64().unwrap();
    let dropped_bytes = receipt["console_bytes_dropped"].as_u64().unwrap();
    assert!(dropped_lines > 19_000, "{receipt}");
    assert!(dropped_bytes > 2_000_000, "{receipt}");
    assert_eq!(
        marker[0],
        serde_json::json!({
            "level": "warn",
            "message": format!(
                "[palisade] console output truncated: {dropped_bytes} bytes of text and \
                 {dropped_lines} whole line(s) over the 2048-byte cap were dropped"
            ),
        })
    );
    // The same script from source keeps and drops exactly the same.
    let from_source = palisade_json(&dir.join("app.js"), flood, &["--policy", &policy]);
    assert_eq!(outcome["logs"], from_source["logs"]);
    assert_eq!(
        receipt["console_bytes_dropped"],
        from_source["receipt"]["console_bytes_dropped"]
    );
    assert_eq!(
        receipt["console_lines_dropped"],
        from_source["receipt"]["console_lines_dropped"]
    );
    // A normal call of the same component afterwards.
    let fine = palisade_json(&wasm, r#"{"n":1}"#, &["--policy", &policy]);
    assert_eq!(fine["ok"], true, "{fine}");
    assert_eq!(
        &fine["logs"][0],
        &serde_json::json!({"level": "log", "message": "line 0 "})
    );
    assert_eq!(fine["logs"].as_array().unwrap().len(), 1, "{fine}");
    assert_eq!(fine["receipt"]["console_lines_dropped"], 0);
}

/// A policy that lets scripts fetch `http://127.0.0.1:PORT/api/` and nothing else.
fn api_policy(dir: &Path, port: u16) -> String {
    policy_file(
        dir,
        &format!(
            "[http]\nallow_private = [\"127.0.0.1/32\"]\n[[http.allow]]\nurl = \"http://127.0.0.1:{port}/api/\"\n"
        ),
    )
}

/// Issue 28: a request the network gate refuses ends a standalone component's call as
/// `policy_denied`, from the host's record of the refusal, with its rule and fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_fetch_in_a_standalone_component_is_policy_denied() {
    let upstream = Upstream::start().await;
    let port = upstream.port();
    let dir = folder("refused");
    let policy = api_policy(&dir, port);
    let source = r#"export default async (input) => {
  if (input.catch) {
    try { await fetch(input.url); } catch (e) { return "caught"; }
  }
  const r = await fetch(input.url);
  return { status: r.status, body: await r.json() };
};"#;
    let (wasm, _) = build(&dir, source, &["--policy", &policy]);
    let run = move |input: String| {
        let (wasm, policy) = (wasm.clone(), policy.clone());
        tokio::task::spawn_blocking(move || palisade_json(&wasm, &input, &["--policy", &policy]))
    };
    let refused = format!(r#"{{"url":"http://127.0.0.1:{port}/private/x"}}"#);
    let outcome = run(refused).await.unwrap();
    assert_eq!(outcome["ok"], false, "{outcome}");
    let error = &outcome["error"];
    assert_eq!(error["code"], "policy_denied", "{outcome}");
    assert_eq!(error["rule"], "http.allow", "{outcome}");
    assert_eq!(
        error["fix"],
        serde_json::json!({"key": "[[http.allow]] url", "value": format!("\"http://127.0.0.1:{port}/private/\"")}),
        "{outcome}"
    );
    assert_eq!(
        error["message"],
        format!(
            "policy denied capability `fetch` (http.allow): no [[http.allow]] rule matches \
             http://127.0.0.1:{port}/private/x"
        )
    );
    assert_eq!(outcome["audit"][0]["decision"], "deny", "{outcome}");
    // A script that catches the refusal and returns is not failed by it.
    let caught = format!(r#"{{"url":"http://127.0.0.1:{port}/private/x","catch":true}}"#);
    let outcome = run(caught).await.unwrap();
    assert_eq!(outcome["output"], "caught", "{outcome}");
    assert_eq!(upstream.connections(), 0, "nothing reached the server");
    // A normal call: the allowed URL is fetched.
    let allowed = format!(r#"{{"url":"http://127.0.0.1:{port}/api/hello"}}"#);
    let outcome = run(allowed).await.unwrap();
    assert_eq!(outcome["ok"], true, "{outcome}");
    assert_eq!(
        outcome["output"],
        serde_json::json!({"status": 200, "body": {"hello": "world"}})
    );
    assert_eq!(upstream.seen().len(), 1);
}

/// One artifact, two hosts: `palisade run app.wasm` and `palisade run app.js` of one script give
/// the same console lines and the same error for a refused fetch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_built_component_and_its_source_give_the_same_logs_and_error() {
    let upstream = Upstream::start().await;
    let port = upstream.port();
    let dir = folder("differential");
    let policy = api_policy(&dir, port);
    let source = console_script(&format!(
        r#"await fetch("http://127.0.0.1:{port}/elsewhere");
  return "unreachable";"#
    ));
    let (wasm, _) = build(&dir, &source, &["--policy", &policy]);
    let script = dir.join("app.js");
    let (built, from_source) = tokio::task::spawn_blocking(move || {
        let args = ["--policy", policy.as_str()];
        let input = r#"{"name":"Ada"}"#;
        (
            palisade_json(&wasm, input, &args),
            palisade_json(&script, input, &args),
        )
    })
    .await
    .unwrap();
    assert_eq!(
        from_source["error"]["code"], "policy_denied",
        "{from_source}"
    );
    assert_eq!(built["error"], from_source["error"]);
    assert_eq!(
        from_source["logs"].as_array().unwrap().len(),
        7,
        "{from_source}"
    );
    assert_eq!(built["logs"], from_source["logs"]);
    assert_eq!(upstream.connections(), 0);
}

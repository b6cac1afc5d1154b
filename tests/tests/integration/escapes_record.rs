//! Regression tests for the containment escapes (docs/reliability.md), record group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.
//! Shared fixtures: one Palisade (one engine, one compiled guest) per test binary.

use crate::support::*;
use crate::upstream::Upstream;
use palisade::Script;
use palisade::record::{
    CapabilityEvent, CapabilityOutcome, HttpEvent, HttpOutcome, TRANSCRIPT_VERSION, Transcript,
};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run the real binary in `dir` with `env`; its output and the peak resident set size (VmHWM,
/// bytes) seen while it ran, sampled every 5 ms.
fn palisade_measured(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Output, u64) {
    let mut command = Command::new(crate::cli::palisade_bin());
    command
        .args(args)
        .current_dir(dir)
        .env("PALISADE_DATA_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    // Read the pipes on threads, so that a full pipe never stalls the child.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).unwrap();
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut bytes).unwrap();
        bytes
    });
    let status_path = format!("/proc/{}/status", child.id());
    let started = Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the child did not stop"
        );
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb * 1024);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (output, peak)
}

fn palisade_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    palisade_measured(dir, args, env).0
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A normal CLI call in `dir` prints its output and exits 0.
fn assert_next_cli_call_works(dir: &Path) {
    std::fs::write(dir.join("echo.js"), "export default (x) => ({ got: x });").unwrap();
    let out = palisade_in(dir, &["run", "echo.js", "--input", r#"{"n":1}"#], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\"got\":{\"n\":1}}\n");
}

/// What recording may add to the host's peak memory besides the transcript's own limit (held
/// once while the call runs; written out as it is serialized): allocator slack and the pages of
/// the JSON writer's buffers.
const RECORDING_OVERHEAD: u64 = 32 << 20;

#[test]
fn escape_02_record_transcript_is_bounded_and_stops_at_the_deadline() {
    let dir = scratch_dir("escape-02");
    // A flood of clock reads and random bytes: before the fix every one of them stayed in host
    // memory until the call ended (1.39 GB for a 10 s call).
    std::fs::write(
        dir.join("flood.js"),
        "export default () => { const a = new Uint8Array(65536); \
         for (;;) { crypto.getRandomValues(a); Date.now(); } };",
    )
    .unwrap();
    let limit: u64 = 4 << 20;
    std::fs::write(
        dir.join("policy.toml"),
        "[limits]\nfuel = 1_000_000_000_000\nmemory = \"64MiB\"\ntimeout = \"2s\"\ntranscript = \"4MiB\"\n",
    )
    .unwrap();
    let (plain, plain_peak) = palisade_measured(
        &dir,
        &["run", "flood.js", "--policy", "policy.toml", "--json"],
        &[],
    );
    assert_eq!(plain.status.code(), Some(21), "{}", text(&plain.stderr));

    let args = [
        "run",
        "flood.js",
        "--policy",
        "policy.toml",
        "--json",
        "--record",
        "t.json",
    ];
    let (recorded, peak) = palisade_measured(&dir, &args, &[]);
    let stderr = text(&recorded.stderr);
    assert_eq!(recorded.status.code(), Some(21), "{stderr}");
    let outcome: Value = serde_json::from_slice(&recorded.stdout).unwrap();
    assert_eq!(outcome["error"]["code"], "timeout");
    // The deadline is checked each time the guest yields (every 10 million units of fuel); in
    // an unoptimized build the recorded generator makes one such slice of 64 KiB draws take
    // about a second, and on a loaded 2-core machine several (4.6 s seen while other builds
    // ran): the bound only tells a call the deadline ended from one it did not (its fuel
    // would last hours). Nothing is recorded past the deadline.
    let wall_ms = outcome["receipt"]["wall_time_us"].as_u64().unwrap() / 1000;
    assert!(wall_ms < 2_000 + 8_000, "the call ran {wall_ms} ms");

    let size = std::fs::metadata(dir.join("t.json")).unwrap().len();
    assert!(size <= limit, "the transcript is {size} bytes");
    let transcript: Value =
        serde_json::from_slice(&std::fs::read(dir.join("t.json")).unwrap()).unwrap();
    assert!(
        transcript["truncated"]
            .as_str()
            .is_some_and(|why| why.contains("limits.transcript of 4MiB")),
        "{}",
        transcript["truncated"]
    );
    assert!(
        stderr.contains("warning: the transcript t.json is incomplete"),
        "{stderr}"
    );
    assert!(
        peak <= plain_peak + limit + RECORDING_OVERHEAD,
        "recording raised the peak from {plain_peak} to {peak} bytes"
    );

    // A transcript cut at its limit cannot be replayed.
    let replay = palisade_in(
        &dir,
        &[
            "run",
            "flood.js",
            "--policy",
            "policy.toml",
            "--json",
            "--replay",
            "t.json",
        ],
        &[],
    );
    let outcome: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(outcome["error"]["code"], "invalid_input");
    assert_eq!(replay.status.code(), Some(15));
    assert_next_cli_call_works(&dir);
}

const SECRET: &str = r#"p4ss"w\rd 7/%q"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_03_secrets_are_redacted_at_every_exit() {
    let up = Upstream::start().await;
    let port = up.port();
    let dir = scratch_dir("escape-03");
    std::fs::write(
        dir.join("policy.toml"),
        format!(
            r#"
[secrets]
TOKEN = {{ env = "ESCAPE03_TOKEN" }}
[http]
allow_private = ["127.0.0.1/32", "::1/128"]
[[http.allow]]
url = "http://localhost:{port}/api/"
headers = {{ Authorization = "Bearer ${{secret:TOKEN}}" }}
"#
        ),
    )
    .unwrap();
    // The same network grant without the secret, for replaying.
    std::fs::write(
        dir.join("plain.toml"),
        format!(
            "[http]\nallow_private = [\"127.0.0.1/32\"]\n[[http.allow]]\nurl = \"http://localhost:{port}/api/\"\n"
        ),
    )
    .unwrap();
    // The upstream echoes the header back, JSON-escaped; the script puts the secret into
    // console lines, URLs (percent-encoded), an error message and its result, raw and escaped
    // once, twice and three times.
    std::fs::write(
        dir.join("app.js"),
        r#"export default async ({ port, mode }) => {
  const r = await fetch(`http://localhost:${port}/api/echo-auth`);
  const text = await r.text();
  const raw = JSON.parse(text).authorization.slice("Bearer ".length);
  console.log(text);
  console.log(raw);
  console.log(JSON.stringify({ raw }));
  try { await fetch(`http://localhost:${port}/denied/${encodeURIComponent(raw)}`); }
  catch (e) { console.log(e.message); }
  if (mode === "throw") await fetch(`http://localhost:${port}/denied?q=${raw}`);
  if (mode === "error") throw new Error(`failed with ${raw} and ${JSON.stringify(raw)}`);
  return { text, raw, nested: JSON.stringify({ text }) };
};"#,
    )
    .unwrap();
    let input = |mode: &str| format!(r#"{{"port":{port},"mode":"{mode}"}}"#);
    let env = [("ESCAPE03_TOKEN", SECRET), ("PALISADE_LOG", "info")];
    let run = |args: Vec<String>| {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            palisade_in(&dir, &args, &env)
        })
    };
    let args = |mode: &str, extra: &[&str]| {
        let mut args: Vec<String> = ["run", "app.js", "--policy", "policy.toml", "--input"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(input(mode));
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };

    let returned = run(args(
        "return",
        &["--json", "--audit-log", "audit.jsonl", "--record", "t.json"],
    ))
    .await
    .unwrap();
    assert!(returned.status.success(), "{}", text(&returned.stderr));
    let outcome: Value = serde_json::from_slice(&returned.stdout).unwrap();
    assert_eq!(outcome["output"]["raw"], "[redacted]");
    assert_eq!(
        outcome["output"]["text"],
        r#"{"authorization":"Bearer [redacted]"}"#
    );
    assert_eq!(
        up.seen()[0].authorization.as_deref(),
        Some(&*format!("Bearer {SECRET}"))
    );

    let thrown = run(args("throw", &["--audit-log", "audit.jsonl"]))
        .await
        .unwrap();
    assert_eq!(thrown.status.code(), Some(31), "{}", text(&thrown.stderr));
    assert!(text(&thrown.stderr).contains("error[policy_denied]"));
    let failed = run(args("error", &["--json"])).await.unwrap();
    let outcome: Value = serde_json::from_slice(&failed.stdout).unwrap();
    assert_eq!(outcome["error"]["code"], "guest_exception");
    assert_eq!(
        outcome["error"]["message"],
        r#"uncaught Error: failed with [redacted] and "[redacted]""#
    );

    // Replayed under a policy without the secret: the transcript holds none to hand out.
    drop(up);
    let replayed = run(vec![
        "run".into(),
        "app.js".into(),
        "--policy".into(),
        "plain.toml".into(),
        "--json".into(),
        "--replay".into(),
        "t.json".into(),
    ])
    .await
    .unwrap();
    assert!(replayed.status.success(), "{}", text(&replayed.stderr));
    let outcome: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(outcome["output"]["raw"], "[redacted]");

    let audit = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    assert!(audit.contains("/denied/[redacted]"), "{audit}");
    let transcript = std::fs::read_to_string(dir.join("t.json")).unwrap();
    let parsed: Transcript = serde_json::from_str(&transcript).unwrap();
    let bodies: Vec<String> = parsed.http.iter().map(|e| text(&unhex(&e.body))).collect();
    assert_eq!(bodies[0], r#"{"authorization":"Bearer [redacted]"}"#);
    // Every exit, in every encoding: no fragment of the secret anywhere.
    let everything = [
        text(&returned.stdout),
        text(&returned.stderr),
        text(&thrown.stdout),
        text(&thrown.stderr),
        text(&failed.stdout),
        text(&failed.stderr),
        text(&replayed.stdout),
        text(&replayed.stderr),
        audit,
        transcript,
        bodies.concat(),
    ];
    for (i, exit) in everything.iter().enumerate() {
        assert!(!exit.contains("p4ss"), "exit {i} leaked the secret: {exit}");
    }
    assert!(
        text(&thrown.stderr).contains("denied: "),
        "the info log is on: {}",
        text(&thrown.stderr)
    );
    assert_next_cli_call_works(&dir);
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[test]
fn escape_15_unwritable_record_or_audit_log_keeps_the_outcome() {
    let dir = scratch_dir("escape-15");
    std::fs::write(
        dir.join("policy.toml"),
        "[kv]\nnamespace = \"escape15\"\n[kv.buckets]\napp = \"rw\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("count.js"),
        "export default async () => { const n = ((await kv.getJSON(\"n\")) ?? 0) + 1; \
         await kv.set(\"n\", n); return n; };",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "count.js", "--policy", "policy.toml"];
        args.extend_from_slice(extra);
        palisade_in(&dir, &args, &[])
    };
    // Paths that cannot be opened: refused before the script runs (no kv write).
    let missing = dir.join("no-such-dir/t.json");
    let out = run(&["--record", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot write the transcript"));
    assert_eq!(text(&out.stdout), "");
    let out = run(&["--audit-log", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot write the audit log"));
    assert_eq!(text(&out.stdout), "");
    // A FIFO with no reader: refused at once (opening it to write would wait for a reader).
    let fifo = dir.join("audit.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let out = run(&["--audit-log", fifo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot write the audit log") && stderr.contains("No such device"),
        "{stderr}"
    );
    assert_eq!(text(&out.stdout), "");

    // Paths that open but cannot be written: the outcome is printed, then the failure.
    let out = run(&["--record", "/dev/full"]);
    assert_eq!(text(&out.stdout), "1\n");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error: cannot write the transcript /dev/full"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["--audit-log", "/dev/full", "--json"]);
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["output"], 2);
    assert!(text(&out.stderr).contains("error: cannot write the audit log /dev/full"));
    assert_eq!(out.status.code(), Some(2));

    // The call that could write everything sees both earlier writes, and only those.
    let out = run(&["--audit-log", "audit.jsonl", "--record", "t.json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "3\n");
    assert_next_cli_call_works(&dir);
}

#[test]
fn escape_18_script_text_cannot_forge_report_lines() {
    let dir = scratch_dir("escape-18");
    std::fs::write(
        dir.join("throws.js"),
        r#"export default () => {
  const e = new Error("boom\n  fix: set `http.allow_private = [\"0.0.0.0/0\"]` in the policy\n  docs: https://evil.example/\u202e");
  e.stack = "at here\n  fix: set `limits.fuel = 1` in the policy\r\n  docs: evil\u2028  fix: x";
  throw e;
};"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("calls.js"),
        "export default () => host[\"evil\\n  fix: set `limits.fuel = 1` in the policy\\n  docs: x\\u202e\"]({});",
    )
    .unwrap();
    std::fs::write(dir.join("caps.toml"), "[capabilities.allow.quote]\n").unwrap();
    let lines = |stderr: &str, prefix: &str| {
        stderr
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };

    let out = palisade_in(&dir, &["run", "throws.js"], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(10), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error[guest_exception]: uncaught Error: boom\\u{a}  fix:")),
        "{stderr}"
    );
    assert!(lines(&stderr, "  fix:").is_empty(), "{stderr}");
    assert_eq!(
        lines(&stderr, "  docs:"),
        ["  docs: docs/errors.md#guest_exception"],
        "{stderr}"
    );
    assert!(!stderr.contains('\u{202e}') && !stderr.contains('\u{2028}'));
    assert!(stderr.contains("\\u{202e}"), "{stderr}");

    let out = palisade_in(&dir, &["run", "calls.js", "--policy", "caps.toml"], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(31), "{stderr}");
    assert_eq!(lines(&stderr, "  fix:").len(), 1, "{stderr}");
    assert_eq!(lines(&stderr, "  docs:").len(), 1, "{stderr}");
    assert!(!stderr.contains('\u{202e}'), "{stderr}");
    assert_next_cli_call_works(&dir);
}

/// A transcript for `input` with the given HTTP answers.
fn forged(version: u32, http: Vec<HttpEvent>) -> Transcript {
    Transcript {
        version,
        script: "forged.js".into(),
        input: "null".into(),
        http,
        ..Transcript::default()
    }
}

fn response(target: &str, body: &[u8]) -> HttpEvent {
    HttpEvent {
        method: "GET".into(),
        target: target.into(),
        outcome: HttpOutcome::Response,
        status: 200,
        headers: Vec::new(),
        body: body.iter().map(|b| format!("{b:02x}")).collect(),
        error: None,
        rule: None,
        reason: String::new(),
        fix: None,
    }
}

#[tokio::test]
async fn escape_19_replay_checks_its_transcript() {
    // The default limits with a roomy deadline: every replay here is expected to end on its
    // own, not race the clock.
    let roomy = roomy();
    let fetch_once = Script::new(
        "forged.js",
        r#"export default async () => {
  try { const r = await fetch("http://example.com/"); return (await r.arrayBuffer()).byteLength; }
  catch (e) { if (e.name === "PolicyDeniedError") throw e; return [e.name, e.code ?? null]; }
};"#,
    );

    // A version this build does not read.
    let outcome = PALISADE
        .replay(&roomy, &fetch_once, &forged(999, Vec::new()))
        .await;
    assert_eq!(code(&outcome), "invalid_input");

    // A forged refusal with a fix of its choosing: reported as replayed, without the fix.
    let refusal = HttpEvent {
        outcome: HttpOutcome::Denied,
        rule: Some("http.private".into()),
        reason: "example.com resolves to 10.0.0.1".into(),
        fix: Some("http.allow_private = [\"0.0.0.0/0\"]".into()),
        ..response("http://example.com/", b"")
    };
    let outcome = PALISADE
        .replay(
            &roomy,
            &fetch_once,
            &forged(TRANSCRIPT_VERSION, vec![refusal]),
        )
        .await;
    assert_eq!(code(&outcome), "policy_denied");
    let error = outcome.error().unwrap();
    assert_eq!(error.fix(), None);
    let json = serde_json::to_value(error).unwrap();
    assert_eq!(json["rule"], "replay:http.private");
    assert_eq!(outcome.audit[0].rule, "replay:http.private");

    // A body over the response budget: the default [http] budget (8 MiB) applies without a
    // table, the policy's own with one.
    let big = forged(
        TRANSCRIPT_VERSION,
        vec![response("http://example.com/", &vec![b'x'; 9 << 20])],
    );
    let outcome = PALISADE.replay(&roomy, &fetch_once, &big).await;
    assert_eq!(
        output(&outcome),
        r#"["ResponseTooLargeError","response-too-large"]"#
    );
    let small = policy(
        "[http]\nmax_response_body = \"1MiB\"\n[[http.allow]]\nurl = \"http://example.com/\"\n",
    );
    let two = forged(
        TRANSCRIPT_VERSION,
        vec![response("http://example.com/", &vec![b'x'; 2 << 20])],
    );
    let outcome = PALISADE.replay(&small, &fetch_once, &two).await;
    assert_eq!(
        output(&outcome),
        r#"["ResponseTooLargeError","response-too-large"]"#
    );
    let fits = forged(
        TRANSCRIPT_VERSION,
        vec![response("http://example.com/", b"hello")],
    );
    assert_eq!(
        output(&PALISADE.replay(&small, &fetch_once, &fits).await),
        "5"
    );

    // More answers than the policy's requests per call.
    let many = Script::new(
        "forged.js",
        "export default async () => { for (let i = 0; i < 21; i++) await fetch(\"http://example.com/\"); };",
    );
    let answers = (0..21)
        .map(|_| response("http://example.com/", b"ok"))
        .collect();
    let outcome = PALISADE
        .replay(&roomy, &many, &forged(TRANSCRIPT_VERSION, answers))
        .await;
    assert_eq!(code(&outcome), "policy_denied");
    let json = serde_json::to_value(outcome.error().unwrap()).unwrap();
    assert_eq!(json["rule"], "http.max_requests");

    // More answers than a granted capability's calls per call.
    let granted = policy("[capabilities.allow.quote]\nmax_calls = 2\n");
    let quotes = Script::new(
        "forged.js",
        "export default async () => { for (let i = 0; i < 3; i++) await host.quote({}); };",
    );
    let mut three = forged(TRANSCRIPT_VERSION, Vec::new());
    three.capabilities = (0..3)
        .map(|_| CapabilityEvent {
            name: "quote".into(),
            outcome: CapabilityOutcome::Ok,
            value: "1".into(),
            code: None,
            retryable: false,
        })
        .collect();
    let outcome = PALISADE.replay(&granted, &quotes, &three).await;
    assert_eq!(code(&outcome), "policy_denied");
    let json = serde_json::to_value(outcome.error().unwrap()).unwrap();
    assert_eq!(json["rule"], "capabilities.allow.quote.max_calls");
    assert_next_call_works().await;
}

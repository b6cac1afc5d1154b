//! Regression tests for the containment escapes (docs/reliability.md), compile group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.

use crate::support::*;
use palisade::{Error, Palisade, Policy, Script};

/// Item 10: `[kv]` without a namespace used to default to the policy's name, so
/// `tenantA/agent.toml` and `tenantB/agent.toml` shared one namespace and B read A's keys. Now
/// the namespace is required, and tenants with their own namespaces see only their own keys.
#[tokio::test]
async fn escape_10_kv_namespace_has_no_default() {
    let dir = scratch_dir("escape-10");
    let write = |tenant: &str, namespace: &str| {
        let folder = dir.join(tenant);
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("agent.toml");
        std::fs::write(
            &path,
            format!("[kv]\n{namespace}\n[kv.buckets]\napp = \"rw\"\n"),
        )
        .unwrap();
        path
    };
    for tenant in ["tenantA", "tenantB"] {
        let error = Policy::from_file(write(tenant, "")).expect_err("no namespace is refused");
        assert_eq!(error.key, "kv.namespace");
        assert!(
            error.message.contains("add `namespace"),
            "{}",
            error.message
        );
        assert_eq!(Error::from(error).code(), "invalid_policy");
    }
    let a = Policy::from_file(write("tenantA", "namespace = \"escape-10-a\"")).unwrap();
    let b = Policy::from_file(write("tenantB", "namespace = \"escape-10-b\"")).unwrap();
    assert_eq!(a.name(), b.name(), "both files are named agent.toml");
    let script = Script::new(
        "tenant.js",
        "export default async (x) => { if (x.put) await kv.set('secret', x.put); \
         return { secret: await kv.get('secret') }; }",
    );
    let put = PALISADE.run(&a, &script, r#"{"put":"A's data"}"#).await;
    assert_eq!(output(&put), r#"{"secret":"A's data"}"#);
    let other = PALISADE.run(&b, &script, "{}").await;
    assert_eq!(output(&other), r#"{"secret":null}"#);
    let own = PALISADE.run(&a, &script, "{}").await;
    assert_eq!(output(&own), r#"{"secret":"A's data"}"#);
    assert_next_call_works().await;
}

/// A top level that spins only when it finds the compile's placeholder accessors (a call from
/// source sees plain values there), so that calls work and only the snapshot would spin.
const SNAPSHOT_SPINNER: &str = "\
    const seen = Object.getOwnPropertyDescriptor(globalThis, 'config');\n\
    if (seen && typeof seen.get === 'function') { for (;;) {} }\n\
    export default () => 'ran';\n";

/// Item 9: `palisade compile` ran a top level with no wall-clock limit (a spinning one was
/// stopped only by its fuel, 30-60 s later). Now the policy's `limits.timeout` bounds it.
#[tokio::test]
async fn escape_09_compile_runs_under_the_policys_deadline() {
    let p = policy(
        "[limits]\ntimeout = \"300ms\"\nfuel = 100_000_000_000\n[config]\nregion = \"eu\"\n",
    );
    // Load the instrumented guest first (once per process; a Cranelift compile on a cache
    // miss), so that the time measured below is the top level's alone.
    let warm = PALISADE
        .compile(&p, &Script::new("warm.js", "export default () => 1;"))
        .await;
    assert!(warm.is_ok(), "{:?}", warm.err());
    let started = std::time::Instant::now();
    let spun = PALISADE
        .compile(&p, &Script::new("spin.js", SNAPSHOT_SPINNER))
        .await
        .expect_err("a spinning top level does not compile");
    let took = started.elapsed();
    assert_eq!(spun.code(), "timeout", "{spun}");
    assert!(
        took < std::time::Duration::from_secs(3),
        "the compile ran {took:?} under a 300ms deadline"
    );
    // Called from source, the same script runs.
    let outcome = PALISADE
        .run(&p, &Script::new("spin.js", SNAPSHOT_SPINNER), "null")
        .await;
    assert_eq!(output(&outcome), r#""ran""#);
    assert_next_call_works().await;
}

/// Item 9, in the background: an automatic compile gets the policy's deadline but at most 2 s,
/// however long the policy lets calls run; the script keeps running from source.
#[tokio::test]
async fn escape_09_auto_compile_has_a_bounded_background_budget() {
    use palisade::AutoCompileStatus;
    let auto = Palisade::builder()
        .max_concurrency(4)
        .auto_compile(2)
        .kv_path(scratch_dir("escape-09-kv").join("kv.sqlite3"))
        .build()
        .unwrap();
    let p =
        policy("[limits]\ntimeout = \"60s\"\nfuel = 100_000_000_000\n[config]\nregion = \"eu\"\n");
    let script = Script::new("background-spin.js", SNAPSHOT_SPINNER);
    let started = std::time::Instant::now();
    for _ in 0..2 {
        assert_eq!(output(&auto.run(&p, &script, "null").await), r#""ran""#);
    }
    let status = loop {
        let status = auto.auto_compile_status(&p, &script).unwrap();
        if status != AutoCompileStatus::Compiling
            || started.elapsed() > std::time::Duration::from_secs(60)
        {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let took = started.elapsed();
    match &status {
        AutoCompileStatus::Refused { reason } => {
            assert!(reason.starts_with("timeout:"), "{reason}")
        }
        other => panic!("expected a refused compile, got {other:?}"),
    }
    assert!(
        took < std::time::Duration::from_secs(10),
        "the background compile ran {took:?}"
    );
    assert_eq!(output(&auto.run(&p, &script, "null").await), r#""ran""#);
    assert_next_call_works().await;
}

/// A server on 127.0.0.1 whose every POST is answered with a JSON string of `size` bytes, sent
/// in 64 KiB chunks without a length (so that only reading it tells its size).
async fn big_response_server(size: usize) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                // The request: headers, then the small JSON payload it declares.
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                            transfer-encoding: chunked\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'a'; 64 << 10];
                let mut sent = 0;
                let mut write = async |data: &[u8]| {
                    let framed =
                        [format!("{:x}\r\n", data.len()).as_bytes(), data, b"\r\n"].concat();
                    socket.write_all(&framed).await
                };
                if write(b"\"").await.is_err() {
                    return;
                }
                while sent < size {
                    let n = chunk.len().min(size - sent);
                    if write(&chunk[..n]).await.is_err() {
                        return;
                    }
                    sent += n;
                }
                let _ = write(b"\"").await;
                let _ = socket.write_all(b"0\r\n\r\n").await;
            });
        }
    });
    port
}

/// The peak resident set (VmHWM, bytes) of a running process, sampled until it exits.
fn peak_rss_until_exit(child: &mut std::process::Child) -> u64 {
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let kib = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            peak = peak.max(kib.unwrap_or(0) * 1024);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    peak
}

/// What the `palisade` process may hold beyond its guest's `limits.memory` and the forwarded
/// responses it holds for the call (at most `limits.memory` more): its own code, the mapped
/// compiled guest, tokio, wasmtime and the connections' read buffers (a plain call peaks at
/// about 30 MiB in a debug build), with room to spare.
const HOST_RSS_ALLOWANCE: u64 = 128 << 20;

/// Item 20: forwarded capability responses were read up to 16 MiB each, any number at once,
/// and parsed into a tree on the host (683 MB RSS for 30 calls with a 64 MiB guest). Now each
/// is cut off at the rule's `max_response` (1 MiB by default) as it streams in, all of one
/// call's together at its `limits.memory`, and the body is checked without building a tree.
#[tokio::test]
async fn escape_20_forwarded_responses_are_bounded_as_they_stream() {
    let port = big_response_server(12 << 20).await;
    let toml = |max_response: &str| {
        format!(
            "[limits]\nmemory = \"64MiB\"\ntimeout = \"20s\"\nfuel = 100_000_000_000\n\
             [capabilities.allow.big]\nmax_calls = 30\n{max_response}\n\
             forward = \"http://127.0.0.1:{port}/big\"\n"
        )
    };
    // Thirty 12 MiB responses at once; the call fails with the first refusal when all are.
    let script = "export default async () => { \
        const all = await Promise.allSettled(Array.from({ length: 30 }, () => host.big({}))); \
        if (all.every((r) => r.status === 'rejected')) throw all[0].reason; \
        return all.filter((r) => r.status === 'fulfilled').length; };";

    // Each response past the rule's 1 MiB default: refused as it streams in.
    let outcome = PALISADE
        .run(&policy(&toml("")), &Script::new("big.js", script), "null")
        .await;
    assert_eq!(code(&outcome), "policy_denied");
    match &outcome.result {
        Err(Error::PolicyDenied { rule, fix, .. }) => {
            assert_eq!(rule, "capabilities.allow.big.max_response");
            let fix = fix.as_ref().unwrap();
            assert_eq!(fix.key, "capabilities.allow.big.max_response");
            assert_eq!(fix.value, "\"2MiB\"");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Allowed 16 MiB each, the responses the host holds for the call at once stop at its 64 MiB
    // memory limit (rule `limits.memory`); a response leaves that budget when the guest takes
    // it, and then counts against the guest's own memory. Which of those trips first depends
    // on how the thirty streams interleave; none of it is the host's memory.
    let generous = policy(&toml("max_response = \"16MiB\""));
    let outcome = PALISADE
        .run(&generous, &Script::new("big.js", script), "null")
        .await;
    match &outcome.result {
        Ok(arrived) => assert!(arrived.get().parse::<u64>().unwrap() <= 30),
        Err(Error::PolicyDenied { rule, .. }) => assert_eq!(rule, "limits.memory"),
        Err(other) => assert_eq!(other.code(), "memory_limit", "{other}"),
    }
    // Taken one at a time, eight (96 MiB) arrive: the budget bounds what is held, not the total.
    let one_by_one = "export default async () => { let total = 0; \
        for (let i = 0; i < 8; i++) total += (await host.big({})).length; return total; };";
    let outcome = PALISADE
        .run(&generous, &Script::new("seq.js", one_by_one), "null")
        .await;
    assert_eq!(output(&outcome), (8 * (12 << 20)).to_string());
    assert_next_call_works().await;

    // The real binary: its peak RSS stays within twice the guest's limit (the guest, and the
    // responses held for it) plus the host allowance. Measured in a debug build: 34-47 MiB
    // with the 1 MiB default and 161-165 MiB with 16 MiB, where it was 444 MiB before.
    let dir = scratch_dir("escape-20");
    std::fs::write(dir.join("big.js"), script).unwrap();
    std::fs::write(dir.join("default.toml"), toml("")).unwrap();
    std::fs::write(dir.join("generous.toml"), toml("max_response = \"16MiB\"")).unwrap();
    for (file, expected) in [
        ("default.toml", &["policy_denied"][..]),
        ("generous.toml", &["", "policy_denied", "memory_limit"][..]),
    ] {
        let bin = crate::cli::palisade_bin();
        let dir = dir.clone();
        let (code, peak) = tokio::task::spawn_blocking(move || {
            let mut child = std::process::Command::new(bin)
                .args(["run", "big.js", "--policy", file, "--json"])
                .current_dir(&dir)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let peak = peak_rss_until_exit(&mut child);
            let out = child.wait_with_output().unwrap();
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            (v["error"]["code"].as_str().unwrap_or("").to_owned(), peak)
        })
        .await
        .unwrap();
        assert!(expected.contains(&code.as_str()), "{file}: {code}");
        assert!(
            peak < 2 * (64 << 20) + HOST_RSS_ALLOWANCE,
            "{file}: peak RSS {} MiB with a 64 MiB guest",
            peak >> 20
        );
    }
}

/// Item 21: each distinct compiled script cost about 1.25 s of Cranelift, before any deadline,
/// and a ~6 MB cache entry that was never removed. Now compiles go one at a time within
/// `Builder::compile_budget` (past it, `capacity_exhausted` with a retry delay), and script
/// entries are evicted least recently used first past `Builder::script_cache_size`.
#[tokio::test]
async fn escape_21_script_compiles_are_budgeted_and_their_cache_bounded() {
    use palisade::policy::ByteSize;
    let p = Policy::builtin_default();
    let mut scripts = Vec::new();
    for n in 1..=2 {
        let source = Script::new(
            format!("distinct-{n}.js"),
            format!("export default () => {n};"),
        );
        let wasm = PALISADE.compile(&p, &source).await.unwrap();
        scripts.push(Script::from_component(wasm).unwrap());
    }
    let cache = scratch_dir("escape-21-cache");
    let with = |budget: std::time::Duration| {
        Palisade::builder()
            .max_concurrency(4)
            .cache_dir(Some(cache.clone()))
            .compile_budget(budget)
            .script_cache_size(ByteSize(12 << 20))
            .kv_path(scratch_dir("escape-21-kv").join("kv.sqlite3"))
            .build()
            .unwrap()
    };
    // 100 ms a minute: the first compile (about 1.25 s) may start, and leaves the budget owed.
    let tight = with(std::time::Duration::from_millis(100));
    assert_eq!(output(&tight.run(&p, &scripts[0], "null").await), "1");
    let refused = tight.run(&p, &scripts[1], "null").await;
    assert_eq!(code(&refused), "capacity_exhausted");
    assert!(
        matches!(&refused.result, Err(Error::CompileBudget { retry_ms, .. }) if *retry_ms > 1000),
        "{:?}",
        refused.result
    );
    // What is compiled already still runs.
    assert_eq!(output(&tight.run(&p, &scripts[0], "null").await), "1");

    // Another Palisade on the same folder compiles the second; 12 MiB holds one entry of about
    // 8.5 MB (the full guest's native code and the script), not two, so the first one's entry
    // goes, and the guests' entries stay.
    let roomy = with(std::time::Duration::from_secs(30));
    assert_eq!(output(&roomy.run(&p, &scripts[1], "null").await), "2");
    let entries = |prefix: &str| -> Vec<u64> {
        std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .map(|e| e.metadata().unwrap().len())
            .collect()
    };
    let kept = entries("script-");
    assert_eq!(kept.len(), 1, "script entries: {kept:?}");
    assert!(
        kept.iter().sum::<u64>() <= 12 << 20,
        "script entries: {kept:?}"
    );
    assert!(!entries("guest-").is_empty());
    // The evicted script compiles again when called, within the budget.
    assert_eq!(output(&roomy.run(&p, &scripts[0], "null").await), "1");
    assert_eq!(entries("script-").len(), 1);
    assert_next_call_works().await;
}

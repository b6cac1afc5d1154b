//! Faults at the host's imports: a key-value backend and capability handlers that fail, hang or
//! panic, upstreams that loop or drip, a compile cache that cannot be written or whose entries
//! were damaged. Each ends with its documented code, and a normal call works right after.
//! Faults covered elsewhere are listed in docs/reliability.md (item 25).

use crate::support::*;
use palisade::kv::{Decide, KvBackend, KvError, KvTransaction, KvWrites};
use palisade::{Palisade, Policy, Script};
use serde_json::{Value, json};
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A key-value backend that fails by key: `error` errs, `panic` panics, `hang` blocks for three
/// seconds (past the calls' deadline); other keys are missing and writes succeed.
struct FaultyKv;

impl FaultyKv {
    fn fault(key: &str) -> Result<(), KvError> {
        match key {
            "error" => Err(KvError::Backend("the disk is on fire".into())),
            "panic" => panic!("the backend panicked"),
            "hang" => {
                std::thread::sleep(Duration::from_secs(3));
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl KvBackend for FaultyKv {
    fn get(&self, _: &str, _: &str, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        Self::fault(key).map(|()| None)
    }
    fn update(
        &self,
        _: &str,
        _: &str,
        key: &str,
        _: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        Self::fault(key)?;
        decide(None).map(|_| ())
    }
    fn delete(&self, _: &str, _: &str, key: &str) -> Result<(), KvError> {
        Self::fault(key)
    }
    fn list(&self, _: &str, _: &str, _: u64, _: usize) -> Result<Vec<String>, KvError> {
        Ok(Vec::new())
    }
    fn key_count(&self, _: &str) -> Result<u64, KvError> {
        Ok(0)
    }
    fn apply(&self, writes: &KvWrites) -> Result<(), KvError> {
        writes.apply_in(&mut FaultyKv)
    }
}

/// The faulty backend's transaction: each write fails as its key says.
impl KvTransaction for FaultyKv {
    fn update(
        &mut self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        KvBackend::update(self, namespace, bucket, key, max_keys, decide)
    }
    fn delete(&mut self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        KvBackend::delete(self, namespace, bucket, key)
    }
}

/// A Palisade with the faulty backend and two faulty handlers: `boom` panics, `stuck` never
/// answers.
static FAULTY: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(8)
        .kv_backend(Arc::new(FaultyKv))
        .capability("boom", |_| async {
            if true {
                panic!("the handler panicked");
            }
            Ok(Value::Null)
        })
        .capability("stuck", |_| async {
            std::future::pending::<()>().await;
            Ok(Value::Null)
        })
        .build()
        .unwrap()
});

const FAULT_POLICY: &str = r#"
[limits]
timeout = "1s"
[kv]
namespace = "faults"
[kv.buckets]
app = "rw"
[capabilities]
[capabilities.allow.boom]
[capabilities.allow.stuck]
"#;

async fn run_faulty(source: &str) -> palisade::Outcome {
    FAULTY
        .run(
            &policy(FAULT_POLICY),
            &Script::new("faults.js", source),
            "null",
        )
        .await
}

/// What a call ended with: its output, or its error code.
fn ending(outcome: &palisade::Outcome) -> Value {
    match &outcome.result {
        Ok(output) => serde_json::from_str(output.get()).unwrap(),
        Err(error) => json!({ "code": error.code().to_string() }),
    }
}

/// A normal call through the faulty Palisade works (a key without a fault), then one through
/// the shared one.
async fn faulty_host_still_works() {
    let outcome = run_faulty(
        "export default async () => { await kv.set('fine', 1); return await kv.get('fine'); }",
    )
    .await;
    assert_eq!(output(&outcome), "null");
    assert_next_call_works().await;
}

#[tokio::test]
async fn a_kv_backend_that_errors_panics_or_hangs() {
    for key in ["error", "panic"] {
        let caught = run_faulty(&format!(
            "export default async () => {{ try {{ await kv.get('{key}'); return 'no error'; }} \
             catch (e) {{ return [e.name, e.message]; }} }}"
        ))
        .await;
        let caught = ending(&caught);
        assert_eq!(caught[0], "KvError", "{caught}");
        let message = caught[1].as_str().unwrap();
        if key == "error" {
            assert_eq!(message, "kv bucket `app`: the disk is on fire");
        } else {
            assert!(
                message.starts_with("kv bucket `app`: the key-value store failed: task ")
                    && message.ends_with("panicked with message \"the backend panicked\""),
                "{message}"
            );
        }
        let uncaught = run_faulty(&format!("export default async () => kv.set('{key}', 1)")).await;
        assert_eq!(code(&uncaught), "guest_exception");
        faulty_host_still_works().await;
    }
    let hung = run_faulty("export default async () => kv.get('hang')").await;
    assert_eq!(code(&hung), "timeout");
    faulty_host_still_works().await;
}

#[tokio::test]
async fn a_capability_handler_that_panics_or_never_answers() {
    let panicked = run_faulty(
        "export default async () => { try { await host.boom({}); return 'no error'; } \
         catch (e) { return [e.name, e.message]; } }",
    )
    .await;
    // A panicking handler is the host's fault, not the script's: the call ends `internal`
    // (the script cannot catch it), and the host goes on.
    assert_eq!(code(&panicked), "internal");
    let stuck = run_faulty("export default async () => host.stuck({})").await;
    assert_eq!(code(&stuck), "timeout");
    faulty_host_still_works().await;
}

/// An HTTP/1.1 server on 127.0.0.1 that answers every request with `respond`, for at most
/// 60 s; returns its port and a counter of the requests it saw.
async fn raw_upstream(
    respond: fn(
        &mut tokio::net::TcpStream,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>>,
) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(tokio::time::timeout(Duration::from_secs(60), async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16384 {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                respond(&mut stream).await;
            });
        }
    }));
    (port, seen)
}

fn net_policy(port: u16) -> Policy {
    policy(&format!(
        "[limits]\ntimeout = \"5s\"\n[http]\ntimeout = \"1s\"\nallow_private = [\"127.0.0.1/32\"]\n\
         [[http.allow]]\nurl = \"http://127.0.0.1:{port}/\"\n"
    ))
}

async fn fetch_failure(port: u16) -> Value {
    let source = format!(
        r#"export default async () => {{
          try {{ const r = await fetch("http://127.0.0.1:{port}/loop"); await r.arrayBuffer(); return "no error"; }}
          catch (e) {{ return [e.name, e.code ?? null, e.rule ?? null]; }}
        }};"#
    );
    let outcome = PALISADE
        .run(&net_policy(port), &Script::new("fetch.js", source), "null")
        .await;
    ending(&outcome)
}

#[tokio::test]
async fn a_redirect_loop_ends_with_a_typed_error() {
    let (port, seen) = raw_upstream(|stream| {
        Box::pin(async move {
            let _ = stream
                .write_all(b"HTTP/1.1 302 Found\r\nlocation: /loop\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
        })
    })
    .await;
    let failure = fetch_failure(port).await;
    // The call's request budget (`http.max_requests`, 20 by default) ends the loop: every hop
    // is a request through the gate.
    assert_eq!(
        failure,
        json!(["PolicyDeniedError", null, "http.max_requests"])
    );
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 20);
    assert_next_call_works().await;
}

#[tokio::test]
async fn a_body_that_drips_past_the_deadline_ends_with_a_timeout() {
    let (port, _) = raw_upstream(|stream| {
        Box::pin(async move {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n")
                .await;
            for _ in 0..300 {
                if stream.write_all(b"x").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    })
    .await;
    let failure = fetch_failure(port).await;
    assert_eq!(failure, json!(["UpstreamTimeoutError", "timeout", null]));
    assert_next_call_works().await;
}

fn cache_entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    entries.sort();
    entries
}

/// Whether an entry holds the compiled bytes followed by their BLAKE3 hash.
fn sealed(bytes: &[u8]) -> bool {
    bytes.len() > 32
        && blake3::hash(&bytes[..bytes.len() - 32]).as_bytes() == &bytes[bytes.len() - 32..]
}

async fn echo_through(dir: Option<std::path::PathBuf>) {
    let p = Palisade::builder()
        .cache_dir(dir)
        .kv_path(scratch_dir("kv-cache-faults").join("kv.sqlite3"))
        .build()
        .expect("Palisade starts");
    let outcome = p
        .run(
            &Policy::builtin_default(),
            &fixture("echo.js"),
            r#"{"n":2}"#,
        )
        .await;
    assert_eq!(output(&outcome), r#"{"got":{"n":2}}"#);
}

/// A compiled guest in the cache is native code: one altered or truncated is detected by its
/// digest, never loaded, and replaced by a fresh compile.
#[tokio::test]
async fn a_tampered_or_truncated_cache_entry_is_rebuilt_not_loaded() {
    let dir = scratch_dir("cache-faults");
    echo_through(Some(dir.clone())).await;
    let entries = cache_entries(&dir);
    assert!(!entries.is_empty(), "no cache entry was written");
    for entry in &entries {
        assert!(
            sealed(&std::fs::read(entry).unwrap()),
            "{}",
            entry.display()
        );
    }
    // Alter the middle of every entry (its code), keeping the length.
    let mut tampered = Vec::new();
    for entry in &entries {
        let mut bytes = std::fs::read(entry).unwrap();
        let middle = bytes.len() / 2;
        for b in &mut bytes[middle..middle + 4096] {
            *b ^= 0xa5;
        }
        std::fs::write(entry, &bytes).unwrap();
        tampered.push(bytes);
    }
    echo_through(Some(dir.clone())).await;
    for (entry, bytes) in entries.iter().zip(&tampered) {
        let now = std::fs::read(entry).unwrap();
        assert!(
            sealed(&now) && &now != bytes,
            "{} was not rebuilt",
            entry.display()
        );
    }
    // Truncate every entry to half.
    for entry in &entries {
        let file = std::fs::OpenOptions::new().write(true).open(entry).unwrap();
        let len = file.metadata().unwrap().len();
        file.set_len(len / 2).unwrap();
    }
    echo_through(Some(dir.clone())).await;
    for entry in &entries {
        assert!(
            sealed(&std::fs::read(entry).unwrap()),
            "{} was not rebuilt",
            entry.display()
        );
    }
    assert_next_call_works().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cache folder that cannot be made (its parent is a file: root ignores permission bits)
/// compiles in memory and the call works.
#[tokio::test]
async fn an_unwritable_cache_folder_compiles_in_memory() {
    let parent = scratch_dir("cache-unwritable");
    let file = parent.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    echo_through(Some(file.join("cache"))).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
    assert_next_call_works().await;
    let _ = std::fs::remove_dir_all(&parent);
}

/// The scratch file system full: the real binary runs in its own mount namespace with a 256 KiB
/// tmpfs over `/dev/shm` (where scratch directories live), under a quota far above it. Writes
/// past the space should fail with `ENOSPC`, the call end normally, and the next call work.
/// (The guest's libc reports any failed write as `EIO`; the host records the file system's
/// `ENOSPC` as a refusal under `fs`, which the guest's `fs` turns into `ENOSPC`.)
#[test]
fn a_full_scratch_file_system_is_enospc() {
    let dir = scratch_dir("scratch-full");
    std::fs::write(
        dir.join("policy.toml"),
        "[fs.scratch]\nguest = \"/s\"\nquota = \"16MiB\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("fill.js"),
        "export default async () => { const chunk = 'x'.repeat(65536); let written = 0; \
         for (let i = 0; i < 64; i++) { try { await fs.writeFile(`/s/f${i}`, chunk); written += 1; } \
         catch (e) { return { written, code: e.code }; } } return { written, code: null }; }",
    )
    .unwrap();
    let out = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(
            "mount -t tmpfs -o size=256k palisade-full /dev/shm && \
             exec \"$2\" run \"$1/fill.js\" --policy \"$1/policy.toml\"",
        )
        .arg("sh")
        .arg(&dir)
        .arg(crate::cli::palisade_bin())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && (stderr.contains("unshare failed") || stderr.contains("mount:")) {
        eprintln!("SKIPPED a_full_scratch_file_system_is_enospc: unshare/mount refused: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["code"], "ENOSPC", "{result}");
    let written = result["written"].as_u64().unwrap();
    assert!(written <= 4, "{written} chunks of 64 KiB fit in 256 KiB");
    let _ = std::fs::remove_dir_all(&dir);
    // The machine's /dev/shm was never touched, and a normal call works.
    let o = std::process::Command::new(crate::cli::palisade_bin())
        .args(["run", "tests/fixtures/js/echo.js", "--input", "[1]"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "{\"got\":[1]}\n");
}

/// The epoch ticker thread delayed. With fuel metering (the default) no ticker runs at all: the
/// guest yields every fuel slice and the deadline is checked there and by the call's outer
/// timeout, so a ticker hook is never called and an endless loop still ends `timeout`. Without
/// fuel metering (`Builder::fuel_metering(false)`, a measuring switch), the epoch tick is the
/// only thing that interrupts guest code: a call past its deadline ends at the first tick after
/// it, so a ticker delayed by D ends it up to D late (docs/reliability.md). Here the ticker is
/// stalled while the guest loops, far past its 200 ms deadline: the call is still running;
/// once the ticker resumes, it ends `timeout`, and normal calls work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delayed_epoch_ticker_delays_the_deadline_by_as_much() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let policy = policy("[limits]\ntimeout = \"200ms\"\n");
    let looping = Script::new(
        "loop.js",
        "export default () => { console.log('looping'); while (true) {} }",
    );
    let guard = Duration::from_secs(120);

    // Fuel metered: the hook would count ticks; none happen.
    let ticks = Arc::new(AtomicU64::new(0));
    let counted = ticks.clone();
    let metered = Palisade::builder()
        .max_concurrency(4)
        .after_epoch_tick(move || {
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let outcome = tokio::time::timeout(guard, metered.run(&policy, &looping, "null"))
        .await
        .expect("the call ends");
    assert_eq!(code(&outcome), "timeout");
    assert_eq!(ticks.load(Ordering::SeqCst), 0, "no ticker runs with fuel");

    // Epoch interruption only, and the ticker stalled while `stalled` is set.
    let stalled = Arc::new(AtomicBool::new(false));
    let hold = stalled.clone();
    let epochs = Palisade::builder()
        .max_concurrency(4)
        .fuel_metering(false)
        .after_epoch_tick(move || {
            while hold.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
        })
        .build()
        .unwrap();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let options = palisade::RunOptions::default().on_event(move |event| {
        if matches!(event, palisade::Event::Console(_))
            && let Some(tx) = started_tx.lock().unwrap().take()
        {
            let _ = tx.send(());
        }
    });
    stalled.store(true, Ordering::SeqCst);
    let call = tokio::spawn({
        let (epochs, policy, looping) = (epochs.clone(), policy.clone(), looping.clone());
        async move { epochs.run_with(&policy, &looping, "null", &options).await }
    });
    tokio::time::timeout(guard, started_rx)
        .await
        .expect("the script starts")
        .expect("the script logs");
    // Once in the loop, only a tick can interrupt the guest: well past the deadline, it runs.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !call.is_finished(),
        "the call ended while the ticker was stalled"
    );
    stalled.store(false, Ordering::SeqCst);
    let outcome = tokio::time::timeout(guard, call)
        .await
        .expect("the call ends once the ticker resumes")
        .unwrap();
    assert_eq!(code(&outcome), "timeout");
    let echo = epochs
        .run(
            &Policy::builtin_default(),
            &fixture("echo.js"),
            r#"{"n":1}"#,
        )
        .await;
    assert_eq!(output(&echo), r#"{"got":{"n":1}}"#);
    assert_next_call_works().await;
}

//! `palisade soak --server`: a running `palisade serve` on 127.0.0.1, started by the soak (or
//! named by `--server-url` and `--server-pid`), driven by workers with a mix of normal and
//! hostile requests — runs past each limit, bad, oversized, slow and cut bodies, file
//! operations past the quota, an action app's dry runs and commits, event streams read slowly
//! or cut — each with the exact status and code it must get. The server's process is sampled
//! as the library soak samples its own (docs/reliability.md, "Soak").

use super::{Every, Run, Sample, Tally};
use crate::session::client::{Call, RawAnswer, Server};
use bytes::Bytes;
use hyper::http::Method;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod mix;
mod raw;
mod setup;

pub use setup::write_setup;

/// The tenant's key the soak's keys file lets in (its SHA-256 is in the file).
const KEY: &str = "soak-key";

/// How long the server may take to start listening (a debug build compiles nothing, but the
/// machine may be loaded).
const START_WAIT: Duration = Duration::from_secs(120);

/// After a sample's quiet starts (no request in flight), how long the server gets to close
/// connections and end the streams' tasks.
const SETTLE: Duration = Duration::from_millis(500);

/// Before the last sample, with every worker ended: longer than the 10 s an idle thread of
/// the server's blocking pool lives, so that the last sample counts only the threads that
/// stay.
const REST: Duration = Duration::from_secs(12);

/// The most the server's RSS may move after the warm-up, median to median
/// ([`super::median_drift`]): 10%, or [`RSS_STEP_KIB`] when that is more. Its open fds may
/// move 10%, first sample after the warm-up to last, and its threads, after a rest, may not
/// pass the most it had during the warm-up.
const MAX_RSS_DRIFT: f64 = 0.10;
const MAX_FD_DRIFT: f64 = 0.10;

/// The step the server's RSS may take after the warm-up. The steps of 64 to 96 MiB that runs
/// took at moments from 6 s to 10 minutes in were instance-pool slots that a call first landed
/// on after the warm-up (each keeps up to 10 MiB resident; in `/proc/PID/smaps` the pool's
/// mappings made the steps, +39 MiB at 21 s in one run and +16 and +9 MiB in another, while
/// the allocator's arenas came back down after each burst), the warm-up's bombs having ended
/// before the last of them began; the bombs now hold their slots together, and a 2-minute
/// run's RSS stayed within 1 MiB from 6 s to the end. But a later 2-minute run of `make check`
/// on a fresh clone still stepped once, 416 → 541.6 MiB at 45 s, then stayed flat to the end:
/// its cause is not known, so the bound leaves room for one such step. A leak is a slope: in a
/// long run it goes past this too.
const RSS_STEP_KIB: u64 = 160 << 10;

/// The most workers: each holds at most one event stream but the one that floods a session
/// (16), and a tenant may hold 64.
pub const MAX_WORKERS: u32 = 48;

/// The server soaked: its client, its process id, and the child when the soak started it.
struct Target {
    client: Arc<Server>,
    pid: u32,
    child: Option<Child>,
    /// The last lines the started server wrote on stderr.
    log: Log,
}

/// The last lines a started server wrote on stderr.
type Log = Arc<Mutex<Vec<String>>>;

impl Target {
    /// Whether the server's process is gone.
    fn gone(&mut self) -> Option<String> {
        match &mut self.child {
            Some(child) => match child.try_wait() {
                Ok(Some(status)) => Some(format!("the server exited: {status}")),
                Ok(None) => None,
                Err(e) => Some(format!("the server cannot be waited for: {e}")),
            },
            None => (!Path::new(&format!("/proc/{}", self.pid)).exists())
                .then(|| format!("the server's process {} is gone", self.pid)),
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Where the soak finds its server.
pub struct Where {
    /// `--server-url` (with `--server-pid`): a server already running; else one is started.
    pub url: Option<String>,
    pub pid: Option<u32>,
}

/// What every worker shares: the client, the sampling gate, the tally, the oversized body.
#[derive(Clone)]
pub struct Shared {
    pub client: Arc<Server>,
    pub gate: Arc<tokio::sync::RwLock<()>>,
    pub tally: Arc<Mutex<Tally>>,
    pub oversized: Bytes,
    /// Held by the worker that opens a session's most streams.
    pub flood: Arc<tokio::sync::Mutex<()>>,
}

impl Shared {
    /// Send `call` as step `step`, which must answer `status` with `code` (`ok` for a
    /// success): counted, and the answer returned when it is the expected one.
    pub async fn expect(
        &self,
        step: &'static str,
        call: Call,
        status: u16,
        code: &str,
    ) -> Option<RawAnswer> {
        let answer = self.client.exchange(&call).await;
        let (got, wrong) = match &answer {
            Ok(a) => {
                let got = code_of(a);
                let right = a.status.as_u16() == status && got == code;
                let wrong = (!right).then(|| {
                    format!(
                        "{step}: expected {status} {code}, got {} {got}: {}",
                        a.status,
                        String::from_utf8_lossy(&a.bytes[..a.bytes.len().min(300)])
                    )
                });
                (got, wrong)
            }
            Err(e) => ("no_answer".to_owned(), Some(format!("{step}: {e}"))),
        };
        let right = wrong.is_none();
        self.tally.lock().unwrap().record(step, got, wrong);
        answer.ok().filter(|_| right)
    }

    /// Count a check of step `step` that is not a status: `wrong` says what was wrong.
    pub fn check(&self, step: &'static str, wrong: Option<String>) {
        let code = if wrong.is_none() { "ok" } else { "wrong" };
        self.tally
            .lock()
            .unwrap()
            .record(step, code.to_owned(), wrong);
    }
}

/// An answer's code: `ok` for a success, else its error's `code`.
fn code_of(answer: &RawAnswer) -> String {
    if answer.status.is_success() {
        return "ok".to_owned();
    }
    serde_json::from_slice::<Value>(&answer.bytes)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "not_json".to_owned())
}

/// The JSON body of `answer` (`null` when it is not JSON).
pub fn body(answer: &RawAnswer) -> Value {
    serde_json::from_slice(&answer.bytes).unwrap_or(Value::Null)
}

/// A JSON request.
pub fn call(method: Method, path: &str, body: &Value) -> Call {
    Call::new(method, path).body(body.to_string())
}

/// The soak of a server: `duration` with `workers` workers, sampled every `sample_every`.
pub struct Plan {
    pub duration: Duration,
    pub workers: u32,
    pub sample_every: Duration,
}

pub fn run(plan: Plan, place: Where, scratch: &Path) -> ExitCode {
    if plan.workers > MAX_WORKERS {
        eprintln!("error: a server soak takes at most {MAX_WORKERS} workers (--concurrency)");
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio starts");
    let target = match (&place.url, place.pid) {
        (Some(url), Some(pid)) => Server::new(url, Some(KEY.to_owned())).map(|client| Target {
            client: Arc::new(client),
            pid,
            child: None,
            log: Arc::default(),
        }),
        _ => start(scratch, plan.workers),
    };
    let target = match target {
        Ok(target) => target,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(soak(plan, target))
}

/// Start `palisade serve` (this executable) on a free port of 127.0.0.1 with the soak's
/// policies and keys in `scratch`, and wait for it to listen.
fn start(scratch: &Path, workers: u32) -> Result<Target, String> {
    write_setup(scratch)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find palisade: {e}"))?;
    let path = |p: &str| scratch.join(p).into_os_string();
    let mut child = Command::new(exe)
        .arg("serve")
        .args(["--listen", "127.0.0.1:0", "--admission-wait", "120s"])
        .args([
            "--body-timeout",
            &format!("{}s", raw::BODY_TIMEOUT.as_secs()),
        ])
        .arg("--max-concurrency")
        .arg(workers.to_string())
        .arg("--data")
        .arg(path("data"))
        .arg("--policies")
        .arg(path("policies"))
        .arg("--keys")
        .arg(path("keys.toml"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start palisade serve: {e}"))?;
    let pid = child.id();
    let (url, log) = listening(child.stderr.take().expect("piped"))?;
    let client = Server::new(&url, Some(KEY.to_owned()))?;
    Ok(Target {
        client: Arc::new(client),
        pid,
        child: Some(child),
        log,
    })
}

/// Read the server's stderr until it says where it listens (its URL), then keep its last
/// lines on a thread of their own.
fn listening(stderr: std::process::ChildStderr) -> Result<(String, Log), String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let log: Log = Arc::default();
    let kept = log.clone();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(url) = line
                .split("listening on ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(url.to_owned());
            }
            let mut kept = kept.lock().unwrap();
            kept.push(line);
            let excess = kept.len().saturating_sub(50);
            kept.drain(..excess);
        }
    });
    let url = rx.recv_timeout(START_WAIT).map_err(|_| {
        format!(
            "palisade serve did not listen within {} s: {}",
            START_WAIT.as_secs(),
            log.lock().unwrap().join("\n")
        )
    })?;
    Ok((url, log))
}

async fn soak(plan: Plan, mut target: Target) -> ExitCode {
    let shared = Shared {
        client: target.client.clone(),
        gate: Arc::new(tokio::sync::RwLock::new(())),
        tally: Arc::default(),
        oversized: Bytes::from(vec![b' '; raw::OVERSIZED]),
        flood: Arc::default(),
    };
    if let Err(e) = mix::prepare(&shared, plan.workers).await {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!(
        "palisade: server soak for {:?} with {} workers, {} kinds of request, server process {}",
        plan.duration,
        plan.workers,
        mix::KINDS.len(),
        target.pid
    );
    let started = Instant::now();
    let end = started + plan.duration;
    let workers: Vec<_> = (0..u64::from(plan.workers))
        .map(|w| tokio::spawn(mix::work(w, shared.clone(), end)))
        .collect();
    let every = Every {
        started,
        end,
        sample_every: plan.sample_every,
    };
    let mut samples = sample_while_running(every, &shared, &mut target).await;
    let mut crashes = 0u64;
    for worker in workers {
        if worker.await.is_err() {
            crashes += 1;
        }
    }
    let elapsed = started.elapsed();
    tokio::time::sleep(REST).await;
    samples.push(Sample::take(&format!("/proc/{}", target.pid), elapsed));
    finish(plan, &mut target, &shared, (samples, crashes, elapsed))
}

/// Judge and report the soak: the report on stdout, the summary on stderr.
fn finish(
    plan: Plan,
    target: &mut Target,
    shared: &Shared,
    (samples, crashes, elapsed): (Vec<Sample>, u64, Duration),
) -> ExitCode {
    let warm_up = plan.duration.mul_f64(super::WARM_UP);
    let mut drift = super::Drift::measure(&samples, warm_up);
    drift.rss = super::median_drift(&samples, warm_up, |s| s.rss_kib);
    let run = Run {
        tally: std::mem::take(&mut *shared.tally.lock().unwrap()),
        crashes,
        elapsed,
        warm_up,
        drift,
        samples,
    };
    let base_kib = super::first_median(&run.samples, warm_up, |s| s.rss_kib);
    let rss_allowed = MAX_RSS_DRIFT.max(RSS_STEP_KIB as f64 / base_kib.max(1) as f64);
    let mut failures = super::failures(&run, &mix::steps(), (rss_allowed, MAX_FD_DRIFT));
    if let Some(gone) = target.gone() {
        failures.push(gone);
        for line in target.log.lock().unwrap().iter() {
            eprintln!("  server: {line}");
        }
    }
    let mut report = super::report_of(&run, &failures);
    report.insert("mode".into(), json!("server"));
    report.insert("workers".into(), json!(plan.workers));
    report.insert(
        "rss_allowed_pct".into(),
        json!((rss_allowed * 1000.0).round() / 10.0),
    );
    report.insert("steps".into(), json!(run.tally.by_kind));
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("serialises")
    );
    super::print_summary(&run);
    super::verdict(&failures)
}

/// Sample the server while the workers run, each sample with no request in flight, and stop
/// early (with what was sampled) when the server is gone.
async fn sample_while_running(every: Every, shared: &Shared, target: &mut Target) -> Vec<Sample> {
    let proc_dir = format!("/proc/{}", target.pid);
    let mut samples = vec![Sample::take(&proc_dir, Duration::ZERO)];
    let mut next = every.started + every.sample_every;
    while next < every.end {
        tokio::time::sleep_until(next.into()).await;
        if target.gone().is_some() {
            break;
        }
        let sample = {
            let _quiet = shared.gate.write().await;
            tokio::time::sleep(SETTLE).await;
            Sample::take(&proc_dir, every.started.elapsed())
        };
        super::print_progress(&sample, &shared.tally);
        samples.push(sample);
        next += every.sample_every;
    }
    samples
}

/// The folder the soak keeps a started server's files in.
pub fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("palisade-soak-server-{}", std::process::id()))
}

//! The server soak's mix: each kind of request, the exact status and code each of its steps
//! must get, and the workers that send them in turn.

use super::{Shared, body, call, raw};
use crate::session::client::Call;
use http_body_util::BodyExt;
use hyper::http::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The app the soak loads: a counter whose actions do the same for the same state, so that
/// a dry run's preview holds for the commit that follows it in the same session.
const APP: &str = "soak-counter";
const APP_SOURCE: &str = r#"export const manifest = { name: "soak-counter", version: "1.0.0" };
export function init() { return { n: 0 }; }
export function view(state) { return { type: "counter", value: state.n }; }
export const actions = {
  inc(state, params) {
    const n = state.n + (params.by ?? 1);
    return { state: { n }, result: { n }, audit_preview: `INC -> ${n}`,
      events: [{ type: "counter.changed", n }] };
  },
};
"#;

/// Kinds of request, sent in turn by each worker.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Run,
    Keyed,
    Limits,
    BadRequests,
    Oversized,
    StalledBody,
    CutBody,
    Files,
    FilesHostile,
    SessionRun,
    App,
    StreamCut,
    StreamSlow,
    StreamFlood,
}

pub const KINDS: &[Kind] = &[
    Kind::Run,
    Kind::Keyed,
    Kind::Limits,
    Kind::BadRequests,
    Kind::Files,
    Kind::Oversized,
    Kind::App,
    Kind::StalledBody,
    Kind::FilesHostile,
    Kind::StreamCut,
    Kind::SessionRun,
    Kind::CutBody,
    Kind::StreamSlow,
    Kind::StreamFlood,
];

/// Every step of the mix: each must have run at least once.
pub fn steps() -> Vec<&'static str> {
    vec![
        "session_create",
        "run",
        "run_output",
        "run_keyed",
        "run_keyed_output",
        "run_keyed_replayed",
        "run_keyed_replayed",
        "run_key_conflict",
        "run_fuel",
        "run_deadline",
        "run_memory",
        "run_stack",
        "garbage_body",
        "wrong_shape",
        "unknown_policy",
        "unknown_route",
        "wrong_method",
        "bad_key",
        "oversized_body",
        "stalled_body",
        "cut_body",
        "fs_write",
        "fs_read",
        "fs_read_content",
        "fs_ls",
        "fs_rm",
        "fs_over_quota",
        "fs_escape",
        "fs_read_missing",
        "session_run",
        "app_dry_run",
        "app_commit",
        "app_commit_matches",
        "app_stale_preview",
        "stream_cut",
        "stream_slow",
        "stream_open",
        "stream_over_cap",
        "session_stop",
    ]
}

/// Before the workers: load the app (unloading one of that name left by an earlier soak),
/// and warm the instance pool ([`warm_pool`]).
pub async fn prepare(shared: &Shared, workers: u32) -> Result<(), String> {
    load_app(shared).await?;
    warm_pool(shared, workers).await
}

/// Fill every slot of the server's instance pools once: `workers` memory bombs at once (the
/// server's `--max-concurrency`) under each stack size the mix uses (the server has an engine,
/// with its own pool, per stack size). Each bomb holds its slot for 2 s before it fills its
/// memory, so that all are in flight together and each lands on a slot of its own (a bomb
/// that ended before the next began would leave its slot to it). A slot keeps up to 10 MiB
/// of what a call wrote resident for the next (`Builder::keep_resident`), so without this the
/// server's RSS goes on rising, in steps, for as long as calls keep landing on slots not used
/// before: up to 2 pools × `workers` slots × 10 MiB, long after any warm-up.
async fn warm_pool(shared: &Shared, workers: u32) -> Result<(), String> {
    let bomb = "export default async () => { const kept = [new ArrayBuffer(1 << 20)]; \
        await new Promise((ok) => setTimeout(ok, 2000)); \
        for (;;) kept.push(new ArrayBuffer(1 << 20)); };";
    for policy in ["soak-plain", "soak-recursion"] {
        let calls = (0..workers).map(|_| {
            let request = json!({"policy": policy, "source": bomb});
            let client = shared.client.clone();
            async move {
                client
                    .exchange(&call(Method::POST, "/v1/run", &request))
                    .await
            }
        });
        for answer in futures_join(calls).await {
            let answer = answer?;
            if answer.status.as_u16() != 429 {
                return Err(format!(
                    "warming the pool under {policy}: expected 429 memory_limit, got {} {}",
                    answer.status,
                    String::from_utf8_lossy(&answer.bytes)
                ));
            }
        }
    }
    Ok(())
}

/// Run `calls` at once; their results, in order.
async fn futures_join<F: std::future::Future + Send + 'static>(
    calls: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let tasks: Vec<_> = calls.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.expect("a warm-up call does not panic"));
    }
    out
}

async fn load_app(shared: &Shared) -> Result<(), String> {
    let path = format!("/v1/apps/{APP}");
    let _ = shared
        .client
        .exchange(&Call::new(Method::DELETE, &path))
        .await;
    let load = json!({"name": APP, "source": APP_SOURCE, "policy": "soak-plain"});
    let answer = shared
        .client
        .exchange(&call(Method::POST, "/v1/apps", &load))
        .await?;
    if answer.status.as_u16() != 201 {
        return Err(format!(
            "loading the soak's app: {} {} (is the server started with the policies and keys \
             of `palisade soak --server-setup DIR`?)",
            answer.status,
            String::from_utf8_lossy(&answer.bytes)
        ));
    }
    Ok(())
}

/// One worker's own things: its number, its session, its app session.
pub struct Worker {
    pub w: u64,
    pub session: String,
    pub app_session: String,
}

/// Worker `w`: create its session, send the kinds in turn until `end` (each under the
/// sampling gate), then stop its session.
pub async fn work(w: u64, shared: Shared, end: Instant) {
    let create = json!({"policy": "soak-box", "name": format!("soak-{w}")});
    let created = {
        let _held = shared.gate.read().await;
        shared
            .expect(
                "session_create",
                call(Method::POST, "/v1/sessions", &create),
                201,
                "ok",
            )
            .await
    };
    let Some(session) = created.and_then(|a| body(&a)["session_id"].as_str().map(str::to_owned))
    else {
        return;
    };
    let worker = Worker {
        w,
        session,
        app_session: format!("w{w}"),
    };
    let mut i = 0u64;
    while Instant::now() < end {
        let kind = KINDS[((w + i) % KINDS.len() as u64) as usize];
        let _held = shared.gate.read().await;
        one(&shared, &worker, kind, i).await;
        i += 1;
    }
    let path = format!("/v1/sessions/{}", worker.session);
    shared
        .expect("session_stop", Call::new(Method::DELETE, &path), 200, "ok")
        .await;
}

async fn one(shared: &Shared, worker: &Worker, kind: Kind, i: u64) {
    match kind {
        Kind::Run => run(shared, worker.w, i).await,
        Kind::Keyed => keyed(shared, worker.w, i).await,
        Kind::Limits => limits(shared).await,
        Kind::BadRequests => bad_requests(shared).await,
        Kind::Oversized => {
            let big = Call::new(Method::POST, "/v1/run").body(shared.oversized.clone());
            shared
                .expect("oversized_body", big, 413, "invalid_input")
                .await;
        }
        Kind::StalledBody => {
            let answer = raw::stalled_body(shared.client.authority(), super::KEY).await;
            shared.check(
                "stalled_body",
                match answer {
                    Ok((408, code)) if code == "invalid_input" => None,
                    Ok((status, code)) => Some(format!(
                        "stalled_body: expected 408 invalid_input, got {status} {code}"
                    )),
                    Err(e) => Some(format!("stalled_body: {e}")),
                },
            );
        }
        Kind::CutBody => {
            let cut = raw::cut_body(shared.client.authority(), super::KEY).await;
            shared.check("cut_body", cut.err().map(|e| format!("cut_body: {e}")));
            run(shared, worker.w, i).await;
        }
        Kind::Files => files(shared, worker, i).await,
        Kind::FilesHostile => files_hostile(shared, worker).await,
        Kind::SessionRun => {
            let path = format!("/v1/sessions/{}/run", worker.session);
            let body = json!({"source": "export default (x) => x + 1", "input": 41});
            shared
                .expect("session_run", call(Method::POST, &path, &body), 200, "ok")
                .await;
        }
        Kind::App => app(shared, worker).await,
        Kind::StreamCut => stream(shared, worker, "stream_cut", 1).await,
        Kind::StreamSlow => stream(shared, worker, "stream_slow", 5).await,
        Kind::StreamFlood => flood(shared, worker).await,
    }
}

/// A plain run, and its output checked.
async fn run(shared: &Shared, w: u64, i: u64) {
    let request = json!({"policy": "soak-plain",
        "source": "export default (x) => [x.w * 2, x.i * 2, 'ok']", "input": {"w": w, "i": i}});
    if let Some(a) = shared
        .expect("run", call(Method::POST, "/v1/run", &request), 200, "ok")
        .await
    {
        let want = json!([w * 2, i * 2, "ok"]);
        let got = body(&a)["output"].clone();
        shared.check(
            "run_output",
            (got != want).then(|| format!("run: expected {want}, got {got}")),
        );
    }
}

/// A run under one of the worker's four keys (the first of each runs, later ones replay,
/// marked `Idempotent-Replayed: true`), and the key with another body (422
/// `idempotency_conflict`).
async fn keyed(shared: &Shared, w: u64, i: u64) {
    // The worker's m-th keyed run: it sends this kind every `KINDS.len()` iterations.
    let m = i / KINDS.len() as u64;
    let k = m % 4;
    let key = format!("soak-{w}-{k}");
    let request = json!({"policy": "soak-plain", "source": "export default (x) => x.k * 10",
        "input": {"w": w, "k": k}});
    let first = call(Method::POST, "/v1/run", &request).header("idempotency-key", key.as_str());
    if let Some(a) = shared.expect("run_keyed", first, 200, "ok").await {
        let got = body(&a)["output"].clone();
        let want = json!(k * 10);
        shared.check(
            "run_keyed_output",
            (got != want).then(|| format!("run_keyed: expected {want}, got {got}")),
        );
        let replayed = a
            .headers
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        shared.check(
            "run_keyed_replayed",
            (replayed != (m >= 4))
                .then(|| format!("run_keyed: keyed run {m} of {key}: replayed {replayed}")),
        );
    }
    let other = json!({"policy": "soak-plain", "source": "export default () => 'other'"});
    let conflict = call(Method::POST, "/v1/run", &other).header("idempotency-key", key.as_str());
    shared
        .expect("run_key_conflict", conflict, 422, "idempotency_conflict")
        .await;
}

/// A run past each limit: fuel, time, memory, stack.
async fn limits(shared: &Shared) {
    let cases = [
        (
            "run_fuel",
            "soak-plain",
            "export default () => { for (;;) {} };",
            429,
            "fuel_exhausted",
        ),
        (
            "run_deadline",
            "soak-deadline",
            "export default () => new Promise((r) => setTimeout(r, 60000));",
            408,
            "timeout",
        ),
        (
            "run_memory",
            "soak-plain",
            "export default () => { const kept = []; for (;;) kept.push(new ArrayBuffer(1 << 20)); };",
            429,
            "memory_limit",
        ),
        (
            "run_stack",
            "soak-recursion",
            "const f = (n) => n === 0 ? 0 : 1 + f(n - 1); export default () => f(1e7);",
            422,
            "stack_overflow",
        ),
    ];
    for (step, policy, source, status, code) in cases {
        let request = json!({"policy": policy, "source": source});
        shared
            .expect(step, call(Method::POST, "/v1/run", &request), status, code)
            .await;
    }
}

/// Garbage, a wrong shape, an unknown policy, route and method, a wrong key.
async fn bad_requests(shared: &Shared) {
    let garbage = Call::new(Method::POST, "/v1/run").body(&b"\x00\xffnot json{"[..]);
    shared
        .expect("garbage_body", garbage, 400, "invalid_input")
        .await;
    let shape = call(Method::POST, "/v1/run", &json!({"policy": 5, "source": []}));
    shared
        .expect("wrong_shape", shape, 400, "invalid_input")
        .await;
    let unknown = json!({"policy": "soak-nowhere", "source": "export default 1"});
    shared
        .expect(
            "unknown_policy",
            call(Method::POST, "/v1/run", &unknown),
            404,
            "policy_not_found",
        )
        .await;
    shared
        .expect(
            "unknown_route",
            Call::new(Method::GET, "/v1/nowhere"),
            404,
            "invalid_input",
        )
        .await;
    shared
        .expect(
            "wrong_method",
            Call::new(Method::GET, "/v1/run"),
            405,
            "invalid_input",
        )
        .await;
    let wrong_key = Call::new(Method::GET, "/v1/policies").key("not-a-key");
    shared
        .expect("bad_key", wrong_key, 401, "unauthorized")
        .await;
}

fn fs_call(worker: &Worker, op: &str, body: &Value) -> Call {
    call(
        Method::POST,
        &format!("/v1/sessions/{}/fs/{op}", worker.session),
        body,
    )
}

/// Write, read (the content checked), list and remove a file of the worker's session.
async fn files(shared: &Shared, worker: &Worker, i: u64) {
    let content = format!("worker {} iteration {i}\n", worker.w);
    let write = json!({"path": "notes/w.txt", "content": content, "parents": true});
    shared
        .expect("fs_write", fs_call(worker, "write", &write), 200, "ok")
        .await;
    let read = json!({"path": "/scratch/notes/w.txt"});
    if let Some(a) = shared
        .expect("fs_read", fs_call(worker, "read", &read), 200, "ok")
        .await
    {
        let got = body(&a)["body"].clone();
        shared.check(
            "fs_read_content",
            (got != json!(content)).then(|| format!("fs_read: expected {content:?}, got {got}")),
        );
    }
    shared
        .expect(
            "fs_ls",
            fs_call(worker, "ls", &json!({"path": "notes"})),
            200,
            "ok",
        )
        .await;
    let rm = json!({"path": "notes", "recursive": true});
    shared
        .expect("fs_rm", fs_call(worker, "rm", &rm), 200, "ok")
        .await;
}

/// A write past the session's 64 KiB quota, a path out of the session, a missing file.
async fn files_hostile(shared: &Shared, worker: &Worker) {
    let big = json!({"path": "big.bin", "content": "x".repeat(100 << 10)});
    shared
        .expect(
            "fs_over_quota",
            fs_call(worker, "write", &big),
            403,
            "policy_denied",
        )
        .await;
    let escape = json!({"path": "../outside.txt", "content": "x"});
    shared
        .expect(
            "fs_escape",
            fs_call(worker, "write", &escape),
            403,
            "policy_denied",
        )
        .await;
    let missing = json!({"path": "missing.txt"});
    shared
        .expect(
            "fs_read_missing",
            fs_call(worker, "read", &missing),
            404,
            "file_not_found",
        )
        .await;
}

/// A dry run, the commit that carries its preview (the same state), and that preview again
/// once the state has moved on (409 `preview_mismatch`).
async fn app(shared: &Shared, worker: &Worker) {
    let path = format!("/v1/apps/{APP}/actions");
    let action = |extra: Value| {
        let mut body =
            json!({"action": "inc", "params": {"by": 1}, "session_id": worker.app_session});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        call(Method::POST, &path, &body)
    };
    let Some(dry) = shared
        .expect("app_dry_run", action(json!({"dry_run": true})), 200, "ok")
        .await
    else {
        return;
    };
    let dry = body(&dry);
    let preview = dry["preview"].clone();
    let commit = action(json!({"if_preview": preview}));
    if let Some(done) = shared.expect("app_commit", commit, 200, "ok").await {
        let (want, got) = (&dry["state"], &body(&done)["state"]);
        shared.check(
            "app_commit_matches",
            (want != got).then(|| format!("app_commit: dry run {want}, commit {got}")),
        );
    }
    let stale = action(json!({"if_preview": preview}));
    shared
        .expect("app_stale_preview", stale, 409, "preview_mismatch")
        .await;
}

/// Wait this long for a frame of an event stream (a keep-alive comes every 15 s; the
/// worker's commits come sooner).
const FRAME_WAIT: Duration = Duration::from_secs(2);

/// Open the worker's event stream from its start, read `frames` frames 300 ms apart (or
/// until none comes within [`FRAME_WAIT`]), and go away mid-stream.
async fn stream(shared: &Shared, worker: &Worker, step: &'static str, frames: usize) {
    let path = format!("/v1/apps/{APP}/events?session_id={}", worker.app_session);
    let open = shared
        .client
        .open(&Call::new(Method::GET, &path).header("last-event-id", "0"))
        .await;
    let mut response = match open {
        Ok(open) if open.response.status() == 200 => open,
        Ok(open) => {
            let status = open.response.status();
            return shared.check(step, Some(format!("{step}: expected 200, got {status}")));
        }
        Err(e) => return shared.check(step, Some(format!("{step}: {e}"))),
    };
    for _ in 0..frames {
        match tokio::time::timeout(FRAME_WAIT, response.response.body_mut().frame()).await {
            Ok(Some(Ok(_))) => tokio::time::sleep(Duration::from_millis(300)).await,
            Ok(Some(Err(e))) => return shared.check(step, Some(format!("{step}: {e}"))),
            Ok(None) => return shared.check(step, Some(format!("{step}: the stream ended"))),
            Err(_) => break,
        }
    }
    shared.check(step, None);
}

/// Open as many streams on one app session as its cap allows, one more (429
/// `capacity_exhausted`), close them, and open one again.
async fn flood(shared: &Shared, worker: &Worker) {
    const PER_SESSION: usize = 16;
    // One worker floods at a time: two at once would pass the tenant's cap (64) instead.
    let _alone = shared.flood.lock().await;
    let path = format!("/v1/apps/{APP}/events?session_id=flood-{}", worker.w);
    let get = || Call::new(Method::GET, &path);
    let mut held = Vec::new();
    for _ in 0..PER_SESSION {
        match shared.client.open(&get()).await {
            Ok(open) if open.response.status() == 200 => held.push(open),
            Ok(open) => {
                let status = open.response.status();
                return shared.check(
                    "stream_open",
                    Some(format!("stream_open: expected 200, got {status}")),
                );
            }
            Err(e) => return shared.check("stream_open", Some(format!("stream_open: {e}"))),
        }
    }
    shared.check("stream_open", None);
    shared
        .expect("stream_over_cap", get(), 429, "capacity_exhausted")
        .await;
    drop(held);
    // The server frees a slot when it sees its connection close, a moment after.
    let until = Instant::now() + REOPEN_WAIT;
    let wrong = loop {
        match shared.client.open(&get()).await {
            Ok(open) if open.response.status() == 200 => break None,
            Ok(open) if Instant::now() >= until => {
                break Some(format!(
                    "stream_open: {} s after closing its streams, got {}",
                    REOPEN_WAIT.as_secs(),
                    open.response.status()
                ));
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => break Some(format!("stream_open: {e}")),
        }
    };
    shared.check("stream_open", wrong);
}

/// How long the slots of closed streams may take to be free again.
const REOPEN_WAIT: Duration = Duration::from_secs(10);

//! Live sessions over HTTP: `"live": true`, runs that share a heap, heap, reset and fork,
//! `--max-live-sessions`, and the heap kept across a restart.

use crate::serve::{Server, assert_error, config, start};
use http::StatusCode;
use serde_json::{Value, json};
use std::path::PathBuf;

async fn step(server: &Server, id: &str, source: &str, input: Value) -> Value {
    let answer = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": source, "input": input}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer.body["output"].clone()
}

/// `POST /v1/sessions/{id}/reset` answers 200, and `name` is no longer defined.
async fn reset_forgets(server: &Server, id: &str, name: &str) {
    let uri = format!("/v1/sessions/{id}/reset");
    let reset = server.call("POST", &uri, None, Value::Null).await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    let kind = step(server, id, &format!("typeof {name}"), Value::Null).await;
    assert_eq!(kind, "undefined");
}

async fn live(server: &Server) -> String {
    server
        .session(None, json!({"policy": "default", "live": true}))
        .await
}

#[tokio::test]
async fn runs_share_a_heap_that_rolls_back_forks_and_resets() {
    let server = start(config("live-http", false));
    let id = live(&server).await;
    let rows = json!([{"city": "Oslo", "t": 3}, {"city": "Rome", "t": 18}]);
    assert_eq!(
        step(&server, &id, "const rows = input; rows.length", rows).await,
        2
    );
    let helper = "function warmest() { return rows.reduce((a, b) => (b.t > a.t ? b : a)).city; }";
    step(&server, &id, helper, Value::Null).await;
    assert_eq!(step(&server, &id, "warmest()", Value::Null).await, "Rome");
    // A failing run leaves the heap as it was.
    let failed = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "rows.length = 0; throw new Error('bad step')"}),
        )
        .await;
    assert_eq!(
        failed.body["error"]["code"], "guest_exception",
        "{}",
        failed.body
    );
    assert_eq!(step(&server, &id, "rows.length", Value::Null).await, 2);
    let heap = server
        .call("GET", &format!("/v1/sessions/{id}/heap"), None, Value::Null)
        .await;
    assert_eq!(heap.status, StatusCode::OK, "{}", heap.body);
    assert_eq!(heap.body["calls"], 4);
    assert!(heap.body["changed_blocks"].as_u64().unwrap() > 0);
    // A fork goes its own way.
    let forked = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/fork"),
            None,
            Value::Null,
        )
        .await;
    assert_eq!(forked.status, StatusCode::CREATED, "{}", forked.body);
    assert_eq!(forked.body["forked_from"], id.as_str());
    let fork = forked.body["session_id"].as_str().unwrap().to_owned();
    step(
        &server,
        &fork,
        "rows.push({city: 'Cairo', t: 30}); 0",
        Value::Null,
    )
    .await;
    assert_eq!(
        step(&server, &fork, "warmest()", Value::Null).await,
        "Cairo"
    );
    assert_eq!(step(&server, &id, "warmest()", Value::Null).await, "Rome");
    // A reset forgets it all.
    reset_forgets(&server, &id, "rows").await;
}

#[tokio::test]
async fn the_heap_outlives_a_restart_and_cold_sessions_wake() {
    let mut cfg = config("live-restart", false);
    cfg.max_live_sessions = 1;
    let data = cfg.data.clone();
    let server = start(cfg);
    let (a, b) = (live(&server).await, live(&server).await);
    step(&server, &a, "let who = 'a'; who", Value::Null).await;
    step(&server, &b, "let who = 'b'; who", Value::Null).await;
    // One hot session at most: `a` was cooled to its image when `b` ran.
    let heap = server
        .call("GET", &format!("/v1/sessions/{a}/heap"), None, Value::Null)
        .await;
    assert_eq!(heap.body["hot"], false, "{}", heap.body);
    assert_eq!(step(&server, &a, "who", Value::Null).await, "a");
    assert_eq!(step(&server, &b, "who", Value::Null).await, "b");
    drop(server);
    let mut cfg = config("live-restart-2", false);
    cfg.data = data;
    let server = start(cfg);
    assert_eq!(step(&server, &a, "who", Value::Null).await, "a");
    assert_eq!(step(&server, &b, "who + '!'", Value::Null).await, "b!");
}

#[tokio::test]
async fn heap_routes_need_a_live_session_and_a_live_policy_mounts_nothing() {
    let server = start(config("live-refusals", false));
    let plain = server.session(None, json!({"policy": "default"})).await;
    let heap = server
        .call(
            "GET",
            &format!("/v1/sessions/{plain}/heap"),
            None,
            Value::Null,
        )
        .await;
    assert_error(&heap, 400, "invalid_input");
    let missing = server
        .call("POST", "/v1/sessions/nope/fork", None, Value::Null)
        .await;
    assert_error(&missing, 404, "session_not_found");
    server.assert_fine(None).await;
}

/// docs/sessions.md's walkthrough, step by step.
#[tokio::test]
async fn the_csv_walkthrough_of_the_docs_answers_as_documented() {
    let server = start(config("live-csv", false));
    let id = live(&server).await;
    let csv = "id,customer,total,day\n1,acme,120.5,2026-11-02\n2,beta,80,2026-11-02\n3,acme,42,2026-11-03\n";
    let load = "const rows = input.split(\"\\n\").slice(1).filter(Boolean).map((line) => { const [id, customer, total, day] = line.split(\",\"); return { id: +id, customer, total: +total, day }; }); rows.length";
    assert_eq!(step(&server, &id, load, json!(csv)).await, 3);
    let helper = "function by(key, value = (r) => r.total) { const out = new Map(); for (const r of rows) out.set(r[key], (out.get(r[key]) ?? 0) + value(r)); return Object.fromEntries(out); }";
    assert_eq!(step(&server, &id, helper, Value::Null).await, Value::Null);
    let totals = step(&server, &id, "by(\"customer\")", Value::Null).await;
    assert_eq!(totals, json!({"acme": 162.5, "beta": 80}));
    let days = step(&server, &id, "by(\"day\", () => 1)", Value::Null).await;
    assert_eq!(days, json!({"2026-11-02": 2, "2026-11-03": 1}));
    let over = "rows.filter((r) => r.total > input.over).map((r) => r.id)";
    assert_eq!(
        step(&server, &id, over, json!({"over": 50})).await,
        json!([1, 2])
    );
    let failed = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "rows.length = 0; null.x"}),
        )
        .await;
    assert_eq!(
        failed.body["error"]["code"], "guest_exception",
        "{}",
        failed.body
    );
    assert_eq!(step(&server, &id, "rows.length", Value::Null).await, 3);
    // Declaring a name a step already declared is refused, and changes nothing.
    let again = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "const rows = []; 0"}),
        )
        .await;
    assert_eq!(again.body["error"]["name"], "SyntaxError", "{}", again.body);
    assert_eq!(step(&server, &id, "rows.length", Value::Null).await, 3);
}

/// A catalog change reaches a hot live session at its next call: the policy narrowed to a
/// fuel budget no step fits, the next steps end as `fuel_exhausted` (the heap of before is
/// kept); widened again, the heap is there.
#[tokio::test]
async fn a_narrowed_policy_reaches_a_hot_live_session() {
    let config = config("live-narrowed", false);
    let file = config.policies.clone().unwrap().join("livep.toml");
    std::fs::write(&file, "name = \"livep\"\n[limits]\ntimeout = \"20s\"\n").unwrap();
    let server = start(config);
    let id = server
        .session(None, json!({"policy": "livep", "live": true}))
        .await;
    assert_eq!(
        step(&server, &id, "let kept = 7; kept", Value::Null).await,
        7
    );
    std::fs::write(
        &file,
        "name = \"livep\"\n[limits]\ntimeout = \"20s\"\nfuel = 1000\n",
    )
    .unwrap();
    // What the folder's watcher does in `palisade serve`.
    server.state.policies.reload();
    let mut code = Value::Null;
    for _ in 0..200 {
        let ran = server
            .call(
                "POST",
                &format!("/v1/sessions/{id}/run"),
                None,
                json!({"source": "kept + 1"}),
            )
            .await;
        code = ran.body["error"]["code"].clone();
        if code == "fuel_exhausted" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        code, "fuel_exhausted",
        "the hot session kept its old policy"
    );
    std::fs::write(&file, "name = \"livep\"\n[limits]\ntimeout = \"20s\"\n").unwrap();
    server.state.policies.reload();
    let mut output = Value::Null;
    for _ in 0..200 {
        let ran = server
            .call(
                "POST",
                &format!("/v1/sessions/{id}/run"),
                None,
                json!({"source": "kept + 1"}),
            )
            .await;
        output = ran.body["output"].clone();
        if output == 8 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(output, 8, "the heap of before the narrowed calls");
}

/// A real `palisade serve`: live steps, then `kill -9` of the server right after a step was
/// acknowledged (and a failed step after it), a restart on the same data folder: the next step
/// sees the heap of the last acknowledged step.
#[test]
fn a_server_killed_with_sigkill_wakes_the_heap_of_the_last_acknowledged_step() {
    use crate::serve_cli::{base, data_args, request, serve};
    let (policies, data, _) = base("live-kill-9");
    let args = data_args(&policies, &data);
    let first = serve(&args);
    let created = request(
        first.addr,
        "POST",
        "/v1/sessions",
        None,
        Some(json!({"policy": "default", "live": true})),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.body["session_id"].as_str().unwrap().to_owned();
    let run = |addr, source: &str| {
        let uri = format!("/v1/sessions/{id}/run");
        request(addr, "POST", &uri, None, Some(json!({"source": source})))
    };
    let one = run(first.addr, "const log = ['one']; log.length");
    assert_eq!((one.status, one.body["output"].clone()), (200, json!(1)));
    let two = run(first.addr, "log.push('two'); log.length");
    assert_eq!((two.status, two.body["output"].clone()), (200, json!(2)));
    let failed = run(first.addr, "log.push('lost'); null.x");
    assert_eq!(
        failed.body["error"]["code"], "guest_exception",
        "{}",
        failed.body
    );
    let pid = first.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    drop(first); // waits for the killed process
    let second = serve(&args);
    let after = run(second.addr, "log.join(',')");
    assert_eq!(after.status, 200, "{}", after.body);
    assert_eq!(after.body["output"], "one,two");
    let next = run(second.addr, "log.push('three'); log.length");
    assert_eq!(next.body["output"], 3, "{}", next.body);
}

/// Another tenant's key reaches none of a live session's routes: heap, reset, fork and run
/// are each 404 `session_not_found`, and leave the heap as it was; then calls work for both.
#[tokio::test]
async fn another_tenant_reaches_no_live_session_route() {
    let server = start(config("live-tenants", true));
    let id = server
        .session(Some("acme-key"), json!({"policy": "default", "live": true}))
        .await;
    let run = async |key: &str, source: &str| {
        let body = json!({"source": source});
        let uri = format!("/v1/sessions/{id}/run");
        server.call("POST", &uri, Some(key), body).await
    };
    let kept = run("acme-key", "let secret = 41; secret").await;
    assert_eq!(kept.body["output"], 41, "{}", kept.body);
    for (method, route) in [
        ("GET", "heap"),
        ("POST", "reset"),
        ("POST", "fork"),
        ("POST", "run"),
    ] {
        let body = if route == "run" {
            json!({"source": "secret"})
        } else {
            Value::Null
        };
        let uri = format!("/v1/sessions/{id}/{route}");
        let other = server.call(method, &uri, Some("beta-key"), body).await;
        assert_error(&other, 404, "session_not_found");
    }
    let listed = server
        .call("GET", "/v1/sessions", Some("beta-key"), Value::Null)
        .await;
    assert_eq!(listed.body, json!([]), "the refused fork made no session");
    let after = run("acme-key", "secret + 1").await;
    assert_eq!(after.body["output"], 42, "{}", after.body);
    server.assert_fine(Some("beta-key")).await;
}

/// The soak of issue 45: 1,000 live sessions on a real `palisade serve --max-live-sessions 8`
/// under a 32 MiB memory limit, each given a heap of its own (20,000 strings, about 1 MiB).
/// At most 8 keep an instance and the rest wait as files, so the server's RSS stays within
/// the documented bound (docs/sessions.md: `--max-live-sessions` × 2 × the memory limit, plus
/// the server's own, taken before the first live session) and grows by at most 64 MiB from the
/// 16th session to the 1,000th. With `--hibernate-after 2s`, every session then hibernates
/// (its heap file compressed, one at a time), within the same bound; every heap is still its
/// own at the end, woken from its compressed file.
#[test]
fn a_thousand_live_sessions_hold_a_bounded_memory() {
    use crate::serve_cli::{base, data_args, request, rss_kib, serve};
    let (policies, data, _) = base("live-soak");
    let policy = "name = \"livesoak\"\n[limits]\nmemory = \"32MiB\"\ntimeout = \"60s\"\n";
    std::fs::write(policies.join("livesoak.toml"), policy).unwrap();
    let mut args = data_args(&policies, &data);
    args.extend(["--max-live-sessions", "8", "--max-sessions", "1000"]);
    args.extend(["--hibernate-after", "2s"]);
    let running = serve(&args);
    let (addr, pid) = (running.addr, running.child.id());
    let run = |id: &str, source: &str| {
        let uri = format!("/v1/sessions/{id}/run");
        request(addr, "POST", &uri, None, Some(json!({"source": source})))
    };
    let session = |i: usize| {
        let body = json!({"policy": "livesoak", "live": true});
        let created = request(addr, "POST", "/v1/sessions", None, Some(body));
        assert_eq!(created.status, 201, "{}", created.body);
        let id = created.body["session_id"].as_str().unwrap().to_owned();
        let fill = format!(
            "globalThis.mine = Array.from({{length: 20000}}, (_, j) => '{i}:' + j); mine.length"
        );
        let filled = run(&id, &fill);
        assert_eq!(filled.body["output"], 20000, "{}", filled.body);
        id
    };
    let own = rss_kib(pid);
    let mut ids: Vec<(usize, String)> = (0..16).map(|i| (i, session(i))).collect();
    let warm = rss_kib(pid);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let numbers = (16 + w..1000).step_by(4);
                scope.spawn(move || numbers.map(|i| (i, session(i))).collect::<Vec<_>>())
            })
            .collect();
        for worker in workers {
            ids.extend(worker.join().unwrap());
        }
    });
    let after = rss_kib(pid);
    eprintln!("live soak: RSS {own} KiB before, {warm} KiB after 16 sessions, {after} after 1000");
    assert_eq!(ids.len(), 1000);
    // Each session idle for 2 s hibernates: its heap file (1.08 MB stored whole) compressed.
    let image = |id: &str| data.join("sessions").join(id).join("heap.img");
    let since = std::time::Instant::now();
    while !ids.iter().all(|(_, id)| compressed(&image(id))) {
        assert!(
            since.elapsed().as_secs() < 300,
            "not every session hibernated"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let bytes: u64 = ids
        .iter()
        .map(|(_, id)| std::fs::metadata(image(id)).unwrap().len())
        .sum();
    let hibernated = rss_kib(pid);
    eprintln!("live soak: 1000 heap files compressed, {bytes} bytes; RSS {hibernated} KiB");
    assert!(bytes < 1000 * 400_000, "{bytes} bytes");
    for (i, id) in ids.iter().step_by(61) {
        let read = run(id, "mine[7]");
        assert_eq!(read.body["output"], format!("{i}:7"), "{}", read.body);
    }
    let read = rss_kib(pid);
    let bound = own + 8 * 2 * 32 * 1024;
    for rss in [after, hibernated, read] {
        assert!(rss <= bound, "RSS {rss} KiB over the bound {bound} KiB");
        assert!(rss <= warm + 64 * 1024, "RSS {warm} -> {rss} KiB");
    }
    drop(running);
    std::fs::remove_dir_all(&data).unwrap();
}

/// A server on `cfg` with a live session that keeps `kept` (1), stopped, and the session's heap
/// file then cut in half: the data folder and the session's id.
async fn damaged(cfg: palisade::serve::Config) -> (PathBuf, String) {
    let data = cfg.data.clone();
    let server = start(cfg);
    let id = live(&server).await;
    assert_eq!(
        step(&server, &id, "let kept = 1; kept", Value::Null).await,
        1
    );
    drop(server);
    let file = data.join("sessions").join(&id).join("heap.img");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    (data, id)
}

/// A heap file that no longer wakes (here, cut short while the server was down) makes each run
/// `invalid_component` and is never restored; a reset does not read it, so it brings the
/// session back to a fresh heap, and a normal call works.
#[tokio::test]
async fn a_damaged_heap_file_is_refused_and_a_reset_recovers_the_session() {
    let (data, id) = damaged(config("live-damaged", false)).await;
    let mut cfg = config("live-damaged-2", false);
    cfg.data = data;
    let server = start(cfg);
    let uri = format!("/v1/sessions/{id}/run");
    let refused = server
        .call("POST", &uri, None, json!({"source": "kept"}))
        .await;
    assert_error(&refused, 400, "invalid_component");
    reset_forgets(&server, &id, "kept").await;
    server.assert_fine(None).await;
}

/// The image file's identity (inode, length, modification time).
fn image_id(file: &std::path::Path) -> (u64, u64, std::time::SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).unwrap();
    (meta.ino(), meta.len(), meta.modified().unwrap())
}

/// A step after the first is kept by appending what it changed to the journal
/// (`heap.jrnl`), the image file untouched; a restart replays it; a journal cut mid-record is
/// cut back to its last whole record (that step was never acknowledged); a whole record
/// damaged is refused as `invalid_component` and a reset recovers; past its bound the journal
/// is folded into a new image file.
#[tokio::test]
async fn steps_are_kept_in_a_journal_that_a_restart_replays() {
    let cfg = config("live-journal", false);
    let data = cfg.data.clone();
    let server = start(cfg);
    let id = live(&server).await;
    let dir = data.join("sessions").join(&id);
    let (image, journal) = (dir.join("heap.img"), dir.join("heap.jrnl"));
    step(&server, &id, "const log = []; log.length", Value::Null).await;
    let first = image_id(&image);
    let mut lengths = Vec::new();
    for n in 1..=2 {
        assert_eq!(step(&server, &id, "log.push(1)", Value::Null).await, n);
        lengths.push(std::fs::metadata(&journal).unwrap().len());
    }
    assert_eq!(image_id(&image), first, "the image file is not rewritten");
    assert!(lengths[0] > 0 && lengths[1] > lengths[0], "{lengths:?}");
    drop(server);
    // A write that never finished: half a record at the end.
    let mut bytes = std::fs::read(&journal).unwrap();
    let whole = bytes.len();
    bytes.extend_from_within(44..44 + 5000);
    std::fs::write(&journal, &bytes).unwrap();
    let restart = |name: &str| {
        let mut cfg = config(name, false);
        cfg.data = data.clone();
        start(cfg)
    };
    let server = restart("live-journal-2");
    assert_eq!(step(&server, &id, "log.length", Value::Null).await, 2);
    assert!(std::fs::metadata(&journal).unwrap().len() > whole as u64);
    // Steps until the journal passes its bound: a new image file, a new journal.
    let mut folded = false;
    for _ in 0..64 {
        step(&server, &id, "log.push('x'.repeat(4096)); 0", Value::Null).await;
        if image_id(&image).0 != first.0 {
            folded = true;
            break;
        }
    }
    assert!(folded, "the journal was never folded into a new image");
    let length = step(&server, &id, "log.length", Value::Null).await;
    drop(server);
    // A whole record damaged: refused, never run; a reset recovers.
    let mut bytes = std::fs::read(&journal).unwrap();
    bytes[44 + 20] ^= 1;
    std::fs::write(&journal, &bytes).unwrap();
    let server = restart("live-journal-3");
    let uri = format!("/v1/sessions/{id}/run");
    let refused = server
        .call("POST", &uri, None, json!({"source": "log.length"}))
        .await;
    assert_error(&refused, 400, "invalid_component");
    assert!(length.as_u64().unwrap() > 2);
    reset_forgets(&server, &id, "log").await;
    server.assert_fine(None).await;
}

/// A heap file forged with a digest that matches it (another guest build's, a memory over the
/// policy's limit, a run outside its memory, the older version 2's header, a block short) is
/// refused as `invalid_component` before any of it is mapped, at each run; the true file
/// wakes again, and the other session and a plain call are fine.
#[tokio::test]
async fn a_forged_heap_file_is_refused_before_it_is_mapped() {
    let mut cfg = config("live-forged", false);
    cfg.max_live_sessions = 1;
    let data = cfg.data.clone();
    let server = start(cfg);
    let (a, b) = (live(&server).await, live(&server).await);
    step(&server, &a, "let kept = 1; kept", Value::Null).await;
    // One hot session at most: `b`'s run cools `a`, whose next run wakes it from its file.
    step(&server, &b, "let other = 2; other", Value::Null).await;
    let file = data.join("sessions").join(&a).join("heap.img");
    let good = std::fs::read(&file).unwrap();
    let body = &good[..good.len() - 32];
    let seal = |mut body: Vec<u8>| {
        let digest = blake3::hash(&body);
        body.extend_from_slice(digest.as_bytes());
        body
    };
    let with = |at: usize, bytes: &[u8]| {
        let mut forged = body.to_vec();
        forged[at..at + bytes.len()].copy_from_slice(bytes);
        seal(forged)
    };
    let forgeries = [
        ("another guest", with(12, &[0; 32])),
        ("over the limit", with(44, &(1u64 << 40).to_le_bytes())),
        (
            "a run outside its memory",
            with(56, &u32::MAX.to_le_bytes()),
        ),
        ("version 2", with(8, &2u32.to_le_bytes())),
        ("a block short", seal(body[..body.len() - 4096].to_vec())),
    ];
    let uri = format!("/v1/sessions/{a}/run");
    for (what, forged) in forgeries {
        std::fs::write(&file, &forged).unwrap();
        let refused = server
            .call("POST", &uri, None, json!({"source": "kept"}))
            .await;
        assert_error(&refused, 400, "invalid_component");
        let detail = refused.body["error"]["message"].to_string();
        assert!(detail.contains("heap image is refused"), "{what}: {detail}");
    }
    std::fs::write(&file, &good).unwrap();
    assert_eq!(step(&server, &a, "kept + 1", Value::Null).await, 2);
    assert_eq!(step(&server, &b, "other", Value::Null).await, 2);
    server.assert_fine(None).await;
}

/// A server whose reaper (the test starts it) hibernates a live session idle for `after_ms`,
/// looking every `every_ms`; its data folder, and a live session of it.
async fn hibernating(name: &str, after_ms: u64, every_ms: u64) -> (Server, PathBuf, String) {
    let mut cfg = config(name, false);
    cfg.hibernate_after = std::time::Duration::from_millis(after_ms);
    cfg.reap_interval = std::time::Duration::from_millis(every_ms);
    let data = cfg.data.clone();
    let server = start(cfg);
    let id = live(&server).await;
    (server, data, id)
}

/// Whether the heap file `file` is compressed (a hibernated session's).
fn compressed(file: &std::path::Path) -> bool {
    std::fs::read(file).is_ok_and(|bytes| bytes.starts_with(b"PALIHEPZ"))
}

/// A live session idle for `--hibernate-after` is dropped from memory and its heap file
/// compressed, its journal kept (the compressed file ends with the same digest); its next
/// step wakes it decompressed, with what its steps defined, and writes a plain file again (a
/// later wake maps it); idle again, it hibernates again. A compressed file damaged while the
/// server was down is refused as `invalid_component` at each run; the true one wakes after a
/// restart; a reset recovers the session.
#[tokio::test]
async fn an_idle_live_session_hibernates_compressed_and_wakes() {
    let (server, data, id) = hibernating("live-hibernate", 300, 50).await;
    let dir = data.join("sessions").join(&id);
    let (image, journal) = (dir.join("heap.img"), dir.join("heap.jrnl"));
    let rows = "globalThis.rows = Array.from({ length: 20000 }, (_, i) => `row ${i}`); rows.length";
    assert_eq!(step(&server, &id, rows, Value::Null).await, 20000);
    assert_eq!(
        step(&server, &id, "rows.push('last')", Value::Null).await,
        20001
    );
    let plain = std::fs::metadata(&image).unwrap().len();
    assert!(std::fs::metadata(&journal).unwrap().len() > 0);
    let reaper = tokio::spawn(palisade::serve::reaper(server.state.clone()));
    hibernated(&image).await;
    let packed = std::fs::metadata(&image).unwrap().len();
    assert!(packed * 3 < plain, "{packed} of {plain}");
    let uri = format!("/v1/sessions/{id}/heap");
    let heap = server.call("GET", &uri, None, Value::Null).await;
    assert_eq!(heap.body["hot"], false, "{}", heap.body);
    let seen = step(&server, &id, "rows[20000] + rows.length", Value::Null).await;
    assert_eq!(seen, "last20001");
    assert!(!compressed(&image), "the step wrote a plain file");
    hibernated(&image).await;
    reaper.abort();
    let _ = reaper.await;
    drop(server);
    let restart = |name: &str| {
        let mut cfg = config(name, false);
        cfg.data = data.clone();
        start(cfg)
    };
    let good = std::fs::read(&image).unwrap();
    let mut bytes = good.clone();
    bytes[100] ^= 1;
    std::fs::write(&image, &bytes).unwrap();
    let server = restart("live-hibernate-2");
    let run = format!("/v1/sessions/{id}/run");
    for _ in 0..2 {
        let refused = server
            .call("POST", &run, None, json!({"source": "rows.length"}))
            .await;
        assert_error(&refused, 400, "invalid_component");
    }
    server.assert_fine(None).await;
    drop(server);
    std::fs::write(&image, &good).unwrap();
    let server = restart("live-hibernate-3");
    assert_eq!(step(&server, &id, "rows.length", Value::Null).await, 20001);
    reset_forgets(&server, &id, "rows").await;
    server.assert_fine(None).await;
}

/// Wait (at most 30 s) until the heap file `file` is compressed.
async fn hibernated(file: &std::path::Path) {
    let since = std::time::Instant::now();
    while !compressed(file) {
        assert!(since.elapsed().as_secs() < 30, "never hibernated");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Steps that come while their session hibernates (the reaper compressing its file, a
/// hibernation after every step here) wait for it and answer 200, never `session_busy`: the
/// client runs one step at a time.
#[tokio::test]
async fn a_step_that_comes_while_its_session_hibernates_waits_for_it() {
    let (server, data, id) = hibernating("live-hibernating", 1, 5).await;
    let image = data.join("sessions").join(&id).join("heap.img");
    let rows = "globalThis.rows = Array.from({ length: 50000 }, (_, i) => `row ${i}`); 0";
    step(&server, &id, rows, Value::Null).await;
    let reaper = tokio::spawn(palisade::serve::reaper(server.state.clone()));
    let mut seen_compressed = 0;
    for n in 0..40u64 {
        // Steps at varied moments of the reaper's work on the session.
        tokio::time::sleep(std::time::Duration::from_millis(n % 7 * 3)).await;
        seen_compressed += usize::from(compressed(&image));
        let length = step(&server, &id, "rows.push(1); rows.length", Value::Null).await;
        assert_eq!(length, 50001 + n);
    }
    assert!(
        seen_compressed > 0,
        "the session never hibernated between steps"
    );
    reaper.abort();
    let _ = reaper.await;
    server.assert_fine(None).await;
}

/// A step sent while its session hibernates waits for the compressed file and answers: no
/// other call of the session runs, so it is never `session_busy`. The hibernation is held
/// midway: the heap file is a FIFO, fed the true file's bytes only once the step holds the
/// session (`status: running`); then the session wakes from the compressed file, and a
/// normal call answers.
#[tokio::test]
async fn a_step_sent_while_its_session_hibernates_waits_and_answers() {
    use std::io::Write;
    let _fifos = FIFOS.lock().await;
    let (server, data, id) = hibernating("live-hibernate-step", 300, 50).await;
    let image = data.join("sessions").join(&id).join("heap.img");
    assert_eq!(
        step(&server, &id, "globalThis.n = 41; n", Value::Null).await,
        41
    );
    let bytes = std::fs::read(&image).unwrap();
    std::fs::remove_file(&image).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&image).status();
    assert!(made.unwrap().success());
    let reaper = tokio::spawn(palisade::serve::reaper(server.state.clone()));
    // Opening the FIFO to write returns once the hibernation has opened it to read.
    let path = image.clone();
    let open = move || std::fs::OpenOptions::new().write(true).open(path);
    let open = tokio::task::spawn_blocking(open);
    let Ok(opened) = tokio::time::timeout(std::time::Duration::from_secs(30), open).await else {
        // A reader of the test's own (O_NONBLOCK) ends the open still waiting.
        use std::os::unix::fs::OpenOptionsExt;
        let mut reader = std::fs::OpenOptions::new();
        drop(reader.read(true).custom_flags(0o4000).open(&image));
        panic!("never hibernated");
    };
    let mut fifo = opened.unwrap().unwrap();
    let (run, session) = (
        format!("/v1/sessions/{id}/run"),
        format!("/v1/sessions/{id}"),
    );
    let (answer, ()) = tokio::join!(
        server.call("POST", &run, None, json!({"source": "n += 1"})),
        async {
            while server.call("GET", &session, None, Value::Null).await.body["status"] != "running"
            {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            let feed = move || fifo.write_all(&bytes);
            tokio::task::spawn_blocking(feed).await.unwrap().unwrap();
        }
    );
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.body["output"], 42);
    assert!(!compressed(&image), "the step wrote a plain file");
    reaper.abort();
    let _ = reaper.await;
    assert_eq!(step(&server, &id, "n", Value::Null).await, 42);
    server.assert_fine(None).await;
}

/// Steps sent at uneven gaps to a session that hibernates after 30 ms idle: some wake from a
/// compressed file, some after journal records kept over a plain or compressed one, some race
/// the reaper; a heap read and a fork come between. Every step answers with the count of those
/// before it plus one (none lost, none twice), the fork holds the count it was forked at, and
/// after a restart (the files as the last step left them) the session holds the last count.
#[tokio::test]
async fn no_acknowledged_step_is_lost_to_hibernation() {
    let (server, data, id) = hibernating("live-hibernate-race", 30, 5).await;
    let image = data.join("sessions").join(&id).join("heap.img");
    let rows = "globalThis.rows = Array.from({ length: 20000 }, (_, i) => `row ${i}`); 0";
    assert_eq!(step(&server, &id, rows, Value::Null).await, 0);
    let reaper = tokio::spawn(palisade::serve::reaper(server.state.clone()));
    let count = "globalThis.c = (globalThis.c ?? 0) + 1; rows[c] = `kept ${c}`; c";
    let (mut woken_compressed, mut fork) = (0, None);
    for i in 1..=40u64 {
        woken_compressed += u32::from(compressed(&image));
        assert_eq!(step(&server, &id, count, Value::Null).await, i);
        if i == 20 {
            hibernated(&image).await;
            let uri = format!("/v1/sessions/{id}/fork");
            let forked = server.call("POST", &uri, None, Value::Null).await;
            assert_eq!(forked.status, StatusCode::CREATED, "{}", forked.body);
            fork = forked.body["session_id"].as_str().map(str::to_owned);
        }
        if i % 7 == 0 {
            let uri = format!("/v1/sessions/{id}/heap");
            let heap = server.call("GET", &uri, None, Value::Null).await;
            assert_eq!(heap.status, StatusCode::OK, "{}", heap.body);
        }
        tokio::time::sleep(std::time::Duration::from_millis(i * 13 % 70)).await;
    }
    assert!(woken_compressed > 0, "no step woke from a compressed file");
    let fork = fork.unwrap();
    assert_eq!(
        step(&server, &fork, "c + ':' + rows[20]", Value::Null).await,
        "20:kept 20"
    );
    reaper.abort();
    let _ = reaper.await;
    drop(server);
    let mut cfg = config("live-hibernate-race-2", false);
    cfg.data = data;
    let server = start(cfg);
    let last = "c + ':' + rows[40] + ':' + rows[41]";
    assert_eq!(
        step(&server, &id, last, Value::Null).await,
        "40:kept 40:row 41"
    );
    server.assert_fine(None).await;
}

/// Held by each test whose server opens a FIFO, which it recognises by a thread of this
/// process waiting for the FIFO's other end: one such test at a time.
static FIFOS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Wait (at most 60 s) until a thread of this process waits to open a FIFO that nothing has
/// opened from the other end.
async fn a_fifo_is_waited_for() {
    let waiting = || {
        let tasks = std::fs::read_dir("/proc/self/task").unwrap();
        tasks.flatten().any(|task| {
            let wchan = std::fs::read_to_string(task.path().join("wchan"));
            wchan.is_ok_and(|w| w == "wait_for_partner")
        })
    };
    let since = std::time::Instant::now();
    while !waiting() {
        assert!(since.elapsed().as_secs() < 60, "no FIFO is waited for");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A step whose client goes away while the step's changes are being written (the journal a
/// FIFO here, so the write waits) keeps the session until the write has ended: the session's
/// next turn waits for it, rather than writing the session's files beside it (a journal record
/// chained twice from one head, which the next wake refuses, or an older image renamed over a
/// newer one). A write that fails (a FIFO cannot be synced) keeps nothing of the step, which
/// was never acknowledged; the session goes on from its last kept step.
#[tokio::test]
async fn a_step_whose_client_leaves_midway_holds_its_session_until_written() {
    let _fifos = FIFOS.lock().await;
    let cfg = config("live-gone", false);
    let data = cfg.data.clone();
    let server = std::sync::Arc::new(start(cfg));
    let id = live(&server).await;
    assert_eq!(
        step(&server, &id, "globalThis.n = 1; n", Value::Null).await,
        1
    );
    let journal = data.join("sessions").join(&id).join("heap.jrnl");
    let made = std::process::Command::new("mkfifo").arg(&journal).status();
    assert!(made.unwrap().success());
    let (gone, run) = (server.clone(), format!("/v1/sessions/{id}/run"));
    let request = tokio::spawn(async move {
        gone.call("POST", &run, None, json!({"source": "n += 1"}))
            .await
    });
    a_fifo_is_waited_for().await;
    // The client leaves.
    request.abort();
    assert!(request.await.is_err_and(|e| e.is_cancelled()));
    let heap = format!("/v1/sessions/{id}/heap");
    let beside = server.call("GET", &heap, None, Value::Null);
    let beside = tokio::time::timeout(std::time::Duration::from_millis(500), beside).await;
    // The write goes on: its bytes read, its sync refused.
    let path = journal.clone();
    let taken = tokio::task::spawn_blocking(move || std::fs::read(path))
        .await
        .unwrap();
    if let Ok(answer) = beside {
        panic!("a turn ran beside the write: {}", answer.body);
    }
    assert!(!taken.unwrap().is_empty());
    std::fs::remove_file(&journal).unwrap();
    assert_eq!(step(&server, &id, "n", Value::Null).await, 1);
    assert_eq!(step(&server, &id, "n += 1", Value::Null).await, 2);
    server.assert_fine(None).await;
}

/// A wake is admitted as a call is (it decompresses or copies a heap into memory): with every
/// run slot taken, a step to a session that is not in memory is refused `capacity_exhausted`
/// before its file is read (a damaged one here, which a wake refuses as `invalid_component`);
/// once a slot is free, the wake reads the file and refuses it; a reset recovers the session.
#[tokio::test]
async fn a_wake_waits_for_a_run_slot_as_a_call_does() {
    let admitting = |name: &str, data: Option<PathBuf>| {
        let mut cfg = config(name, false);
        cfg.max_concurrency = 1;
        cfg.admission_wait = std::time::Duration::from_millis(200);
        if let Some(data) = data {
            cfg.data = data;
        }
        cfg
    };
    let (data, id) = damaged(admitting("live-admitted", None)).await;
    let server = start(admitting("live-admitted-2", Some(data)));
    let run = format!("/v1/sessions/{id}/run");
    let slot = server.state.runner.admit().await.unwrap();
    let refused = server
        .call("POST", &run, None, json!({"source": "kept"}))
        .await;
    assert_error(&refused, 503, "capacity_exhausted");
    drop(slot);
    let refused = server
        .call("POST", &run, None, json!({"source": "kept"}))
        .await;
    assert_error(&refused, 400, "invalid_component");
    reset_forgets(&server, &id, "kept").await;
    server.assert_fine(None).await;
}

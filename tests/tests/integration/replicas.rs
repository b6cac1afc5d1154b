//! Two `palisade serve` replicas sharing a real Redis (`--store redis://…`, docs/scaling.md).
//! Each test starts its own `redis-server` (Debian's, which `scripts/setup.sh` installs) on
//! 127.0.0.1 on a free port, with append-only persistence fsynced on every write in a
//! folder of its own, and kills it at the end; the replicas listen on loopback ports of their
//! own and are killed at the end too.

use crate::apps::COUNTER;
use crate::serve::key_hash;
use crate::serve_cli::{Reply, Running, request, request_with, serve};
use crate::support::scratch_dir;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of the test's own; killed when dropped.
pub struct Redis {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Redis {
    pub fn start(dir: PathBuf) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = Redis {
            child: None,
            port,
            dir,
        };
        redis.spawn();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Start it (again) on its port and folder, and wait until it answers `PING`.
    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args([
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (scripts/setup.sh installs Debian's redis-server)");
        self.child = Some(child);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if self.pong() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not answer within 30 s");
    }

    fn pong(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut reply = [0u8; 5];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG"
    }

    /// Stop (`SIGSTOP`) or continue (`SIGCONT`) it: a Redis that accepts connections and
    /// answers nothing.
    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().unwrap().id().to_string();
        let status = Command::new("kill").args([signal, &pid]).status().unwrap();
        assert!(status.success());
    }

    /// `kill -9`, as a crash would.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A Redis and two replicas, `a` and `b`, on one policies folder.
struct Cluster {
    a: Running,
    b: Running,
    redis: Redis,
}

/// A policy whose namespace holds at most 2 keys.
const KV_POLICY: &str =
    "name = \"kvq\"\n[kv]\nnamespace = \"app\"\nmax_keys = 2\n[kv.buckets]\nstate = \"rw\"\n";

/// The folder `scratch_dir(name)` made, without clearing it.
fn scratch_dir_of(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("palisade-test-{}-{name}", std::process::id()))
}

fn cluster(name: &str, keys: bool) -> Cluster {
    let root = scratch_dir(name);
    let policies = crate::serve::policies_dir(name);
    std::fs::write(policies.join("kvq.toml"), KV_POLICY).unwrap();
    let redis = Redis::start(root.join("redis"));
    let replica = |who: &str| {
        let data = root.join(format!("data-{who}"));
        let keys_path = root.join("keys.toml");
        let mut args = vec![
            "--listen".to_owned(),
            "127.0.0.1:0".to_owned(),
            "--policies".to_owned(),
            policies.display().to_string(),
            "--data".to_owned(),
            data.display().to_string(),
            "--store".to_owned(),
            redis.url(),
            "--replica".to_owned(),
            who.to_owned(),
        ];
        if keys {
            args.extend(["--keys".to_owned(), keys_path.display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        serve(&args)
    };
    if keys {
        std::fs::write(
            root.join("keys.toml"),
            format!(
                "[[tenant]]\nname = \"acme\"\nkey_sha256 = \"{}\"\npolicies = [\"kvq\", \"box\"]\n\
                 rate = \"6/min\"\n\n[[tenant]]\nname = \"beta\"\nkey_sha256 = \"{}\"\n\
                 policies = [\"kvq\"]\n\n[[tenant]]\nname = \"gamma\"\nkey_sha256 = \"{}\"\n\
                 policies = [\"default\"]\nmax_sessions = 3\n",
                key_hash("acme-key"),
                key_hash("beta-key"),
                key_hash("gamma-key"),
            ),
        )
        .unwrap();
    }
    Cluster {
        a: replica("a"),
        b: replica("b"),
        redis,
    }
}

fn load_counter(at: SocketAddr) {
    let loaded = request(
        at,
        "POST",
        "/v1/apps",
        None,
        Some(json!({"name": "counter", "source": COUNTER, "policy": "default"})),
    );
    assert_eq!(loaded.status, 201, "{}", loaded.body);
}

/// `inc` on `session` of the counter app, through `at`.
fn inc(at: SocketAddr, session: &str, key: Option<&str>) -> Reply {
    let headers: Vec<(&str, &str)> = key.map(|k| ("idempotency-key", k)).into_iter().collect();
    request_with(
        at,
        "POST",
        "/v1/apps/counter/actions",
        None,
        &headers,
        Some(json!({"action": "inc", "session_id": session})),
    )
}

fn assert_error(reply: &Reply, status: u16, code: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.body["error"]["code"], code, "{}", reply.body);
}

/// Open the event stream of `session` on `at` after `last`, and read it on a thread until it
/// has sent the event `until`; the events' data, by id.
fn events_until(
    at: SocketAddr,
    session: &str,
    last: u64,
    until: u64,
) -> std::thread::JoinHandle<Vec<(u64, Value)>> {
    let mut stream = TcpStream::connect(at).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "GET /v1/apps/counter/events?session_id={session} HTTP/1.1\r\nhost: {at}\r\n\
         accept: text/event-stream\r\nlast-event-id: {last}\r\n\r\n"
    )
    .unwrap();
    std::thread::spawn(move || {
        let mut events = Vec::new();
        let mut id = None;
        for line in BufReader::new(stream).lines() {
            let line = line.expect("the stream stays open until the event arrives");
            if let Some(n) = line.strip_prefix("id: ") {
                id = n.trim().parse::<u64>().ok();
            } else if let (Some(data), Some(n)) = (line.strip_prefix("data: "), id) {
                events.push((n, serde_json::from_str(data).unwrap()));
                if n >= until {
                    return events;
                }
            }
        }
        events
    })
}

/// An app session created through A acts through B and sees A's state; B's event stream gets
/// A's commit; one `Idempotency-Key` sent to both at once runs the action once.
#[test]
fn replicas_share_app_state_events_and_idempotency() {
    let c = cluster("replicas-share", false);
    let (a, b) = (c.a.addr, c.b.addr);
    load_counter(a);
    let first = inc(a, "s", None);
    assert_eq!(
        (first.body["seq"].clone(), first.body["state"]["n"].clone()),
        (json!(1), json!(1))
    );
    let second = inc(b, "s", None);
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(
        second.body["state"]["n"], 2,
        "B sees A's state: {}",
        second.body
    );
    let view = request(b, "GET", "/v1/apps/counter/view?session_id=s", None, None);
    assert_eq!(view.body["value"], 2, "{}", view.body);

    let stream = events_until(b, "s", 2, 3);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(inc(a, "s", None).status, 200);
    let events = stream.join().unwrap();
    assert_eq!(events, [(3, json!({"type": "counter.changed", "n": 3}))]);

    let both = [a, b].map(|at| std::thread::spawn(move || inc(at, "s", Some("once"))));
    let [one, two] = both.map(|t| t.join().unwrap());
    assert_eq!(
        (one.status, two.status),
        (200, 200),
        "{} {}",
        one.body,
        two.body
    );
    assert_eq!(one.body, two.body, "the same response, from one run");
    assert_eq!(one.body["seq"], 4);
    let replayed = [&one, &two]
        .iter()
        .filter(|r| r.headers.contains("idempotent-replayed: true"))
        .count();
    assert_eq!(replayed, 1, "one ran, the other replayed it");
    let next = inc(b, "s", None);
    assert_eq!(
        next.body["state"]["n"], 5,
        "the keyed action ran once: {}",
        next.body
    );
}

/// 50 concurrent actions on one session, half through each replica, commit 50 distinct
/// sequence numbers: none is lost or doubled.
#[test]
fn fifty_concurrent_actions_over_two_replicas_end_at_fifty() {
    let c = cluster("replicas-fifty", false);
    load_counter(c.a.addr);
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let at = if i % 2 == 0 { c.a.addr } else { c.b.addr };
            std::thread::spawn(move || inc(at, "fifty", None))
        })
        .collect();
    let mut seqs: Vec<u64> = threads
        .into_iter()
        .map(|t| {
            let reply = t.join().unwrap();
            assert_eq!(reply.status, 200, "{}", reply.body);
            reply.body["seq"].as_u64().unwrap()
        })
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=50).collect::<Vec<_>>());
    let view = request(
        c.b.addr,
        "GET",
        "/v1/apps/counter/view?session_id=fifty",
        None,
        None,
    );
    assert_eq!(view.body["value"], 50, "{}", view.body);
}

/// A tenant holds at most its key's `max_sessions` app sessions over both replicas: twelve
/// concurrent actions, each creating a session of its own, half through each replica, leave
/// exactly three; the rest are 429 `capacity_exhausted`, and the sessions kept still act.
#[test]
fn a_tenants_app_session_cap_holds_across_replicas() {
    let c = cluster("replicas-cap", true);
    let loaded = request(
        c.a.addr,
        "POST",
        "/v1/apps",
        Some("gamma-key"),
        Some(json!({"name": "counter", "source": COUNTER, "policy": "default"})),
    );
    assert_eq!(loaded.status, 201, "{}", loaded.body);
    let act = |at: SocketAddr, session: String| {
        request(
            at,
            "POST",
            "/v1/apps/counter/actions",
            Some("gamma-key"),
            Some(json!({"action": "inc", "session_id": session})),
        )
    };
    let threads: Vec<_> = (0..12)
        .map(|i| {
            let at = if i % 2 == 0 { c.a.addr } else { c.b.addr };
            std::thread::spawn(move || (format!("s{i}"), act(at, format!("s{i}"))))
        })
        .collect();
    let mut kept = Vec::new();
    for thread in threads {
        let (session, reply) = thread.join().unwrap();
        if reply.status == 200 {
            kept.push(session);
        } else {
            assert_error(&reply, 429, "capacity_exhausted");
        }
    }
    assert_eq!(kept.len(), 3, "kept: {kept:?}");
    let again = act(c.b.addr, kept[0].clone());
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["seq"], 2, "{}", again.body);
    assert_error(&act(c.a.addr, "one-more".into()), 429, "capacity_exhausted");
}

/// A tenant holds at most its key's `max_sessions` sandbox sessions over both replicas, and
/// `GET /v1/sessions` on either lists them all, each naming the replica that holds it.
#[test]
fn a_tenants_sandbox_sessions_are_capped_and_listed_across_replicas() {
    let c = cluster("replicas-session-cap", true);
    let create = |at: SocketAddr| {
        request(
            at,
            "POST",
            "/v1/sessions",
            Some("gamma-key"),
            Some(json!({"policy": "default"})),
        )
    };
    let (a, b) = (c.a.addr, c.b.addr);
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let (at, name) = if i % 2 == 0 { (a, "a") } else { (b, "b") };
            std::thread::spawn(move || (name, create(at)))
        })
        .collect();
    let mut kept = std::collections::BTreeMap::new();
    for thread in threads {
        let (replica, reply) = thread.join().unwrap();
        if reply.status == 201 {
            kept.insert(
                reply.body["session_id"].as_str().unwrap().to_owned(),
                replica,
            );
        } else {
            assert_error(&reply, 429, "capacity_exhausted");
        }
    }
    assert_eq!(kept.len(), 3, "kept: {kept:?}");
    for at in [a, b] {
        let listed = request(at, "GET", "/v1/sessions", Some("gamma-key"), None);
        assert_eq!(listed.status, 200, "{}", listed.body);
        let seen: std::collections::BTreeMap<String, &str> = listed
            .body
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let id = s["session_id"].as_str().unwrap().to_owned();
                (id, kept[s["session_id"].as_str().unwrap()])
            })
            .collect();
        assert_eq!(seen, kept, "{}", listed.body);
        for s in listed.body.as_array().unwrap() {
            assert_eq!(s["replica"], kept[s["session_id"].as_str().unwrap()], "{s}");
        }
    }
    assert_error(&create(b), 429, "capacity_exhausted");
    let (first, holder) = kept.iter().next().unwrap();
    let at = if *holder == "a" { a } else { b };
    let stopped = request(
        at,
        "DELETE",
        &format!("/v1/sessions/{first}"),
        Some("gamma-key"),
        None,
    );
    assert_eq!(stopped.status, 200, "{}", stopped.body);
    assert_eq!(create(if *holder == "a" { b } else { a }).status, 201);
}

fn run_as(at: SocketAddr, key: &str, source: &str) -> Reply {
    request(
        at,
        "POST",
        "/v1/run",
        Some(key),
        Some(json!({"policy": "kvq", "source": source})),
    )
}

/// Keys written through A are read through B, in the tenant's own namespace, and the
/// namespace's quota counts the keys written through both.
#[test]
fn kv_written_through_one_replica_is_read_through_the_other() {
    let c = cluster("replicas-kv", true);
    let (a, b) = (c.a.addr, c.b.addr);
    let wrote = run_as(
        a,
        "acme-key",
        "export default async () => { await kv.set('x', 'from a'); return kv.increment('n', 5) }",
    );
    assert_eq!(wrote.body["output"], 5, "{}", wrote.body);
    let read = run_as(
        b,
        "acme-key",
        "export default async () => [await kv.get('x'), await kv.increment('n', 1)]",
    );
    assert_eq!(read.body["output"], json!(["from a", 6]), "{}", read.body);
    let past_quota = run_as(
        b,
        "acme-key",
        "export default async () => kv.set('third', 1)",
    );
    assert_eq!(
        past_quota.body["error"]["code"], "policy_denied",
        "{}",
        past_quota.body
    );
    let theirs = run_as(b, "beta-key", "export default async () => kv.get('x')");
    assert_eq!(
        theirs.body["output"],
        Value::Null,
        "another tenant's namespace: {}",
        theirs.body
    );
    let again = run_as(a, "acme-key", "export default async () => kv.get('n')");
    assert_eq!(
        again.body["output"], "6",
        "a counter reads back as its digits: {}",
        again.body
    );
}

/// A script's key-value operation that meets Redis down ends the call as 503
/// `store_unavailable` (retryable), even when the script catches the failure: no script goes on
/// as if its write had failed for a reason of its own. Redis back, the same calls run.
#[test]
fn a_scripts_kv_operation_while_redis_is_down_ends_the_call_as_store_unavailable() {
    let mut c = cluster("replicas-kv-down", true);
    let a = c.a.addr;
    let catching = "export default async () => { try { await kv.set('x', 'v') } \
                    catch (e) { return 'caught: ' + e.message } return 'set' }";
    let read = "export default async () => kv.get('x')";
    assert_eq!(run_as(a, "beta-key", catching).body["output"], "set");
    c.redis.kill();
    for source in [catching, read] {
        let refused = run_as(a, "beta-key", source);
        assert_error(&refused, 503, "store_unavailable");
        assert_eq!(refused.body["error"]["retryable"], true, "{}", refused.body);
    }
    let pure = run_as(a, "beta-key", "export default () => 6 * 7");
    assert_eq!(
        pure.body["output"], 42,
        "a call without kv runs: {}",
        pure.body
    );
    c.redis.spawn();
    assert_eq!(run_as(a, "beta-key", read).body["output"], "v");
    assert_eq!(run_as(a, "beta-key", catching).body["output"], "set");
}

/// A tenant's `rate` holds across both replicas together: 6 per minute through A and B
/// alike, then 429 on either, with a normal request of another tenant answered after it.
#[test]
fn a_tenants_rate_holds_across_replicas() {
    let c = cluster("replicas-rate", true);
    let source = "export default () => 1";
    for i in 0..6 {
        let at = if i % 2 == 0 { c.a.addr } else { c.b.addr };
        assert_eq!(run_as(at, "acme-key", source).status, 200, "request {i}");
    }
    for at in [c.a.addr, c.b.addr] {
        let refused = run_as(at, "acme-key", source);
        assert_error(&refused, 429, "capacity_exhausted");
        assert!(
            refused.headers.contains("retry-after:"),
            "{}",
            refused.headers
        );
    }
    assert_eq!(run_as(c.b.addr, "beta-key", source).status, 200);
}

/// A policy's `[http] rate` of 3 a minute holds across both replicas together: two requests
/// through A and one through B reach the upstream, the fourth (through either) is refused by
/// the rule `http.rate`, and the upstream saw exactly three.
#[test]
fn a_policys_http_rate_holds_across_replicas() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let up = runtime.block_on(crate::upstream::Upstream::start());
    let url = format!("http://localhost:{}/api/hello", up.port());
    let c = cluster("replicas-http-rate", false);
    // Written into the watched policies folder: both replicas load it.
    let policies = scratch_dir_of("replicas-http-rate").join("policies");
    std::fs::write(
        policies.join("net.toml"),
        format!(
            "name = \"net\"\n[http]\nallow_private = [\"127.0.0.1/32\", \"::1/128\"]\n\
             rate = \"3/min\"\n[[http.allow]]\nurl = \"http://localhost:{}/api/\"\n",
            up.port()
        ),
    )
    .unwrap();
    for at in [c.a.addr, c.b.addr] {
        let started = Instant::now();
        while !request(at, "GET", "/v1/policies", None, None)
            .body
            .to_string()
            .contains("\"net\"")
        {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "net.toml is loaded"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let source = format!(
        "export default async () => {{ try {{ return (await fetch({url:?})).status }} \
         catch (e) {{ return e.rule ?? e.name }} }}"
    );
    let fetch = |at: SocketAddr| {
        let body = json!({"policy": "net", "source": source});
        request(at, "POST", "/v1/run", None, Some(body)).body["output"].clone()
    };
    let (a, b) = (c.a.addr, c.b.addr);
    let answers = [fetch(a), fetch(b), fetch(a), fetch(b)];
    assert_eq!(
        answers,
        [json!(200), json!(200), json!(200), json!("http.rate")]
    );
    assert_eq!(fetch(a), "http.rate");
    assert_eq!(up.seen().len(), 3, "the upstream saw three requests in all");
    assert_eq!(request(b, "GET", "/healthz", None, None).status, 200);
}

/// A sandbox session's files live on the replica that created it: another replica answers
/// 421 `session_elsewhere` naming it, never an empty session; the holder serves it.
#[test]
fn a_session_held_by_another_replica_is_refused_naming_it() {
    let c = cluster("replicas-elsewhere", false);
    let created = request(
        c.a.addr,
        "POST",
        "/v1/sessions",
        None,
        Some(json!({"policy": "box"})),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.body["session_id"].as_str().unwrap();
    let run = json!({"source": "export default () => 7"});
    let path = format!("/v1/sessions/{id}/run");
    let elsewhere = request(c.b.addr, "POST", &path, None, Some(run.clone()));
    assert_error(&elsewhere, 421, "session_elsewhere");
    assert_eq!(elsewhere.body["error"]["replica"], "a");
    assert_eq!(elsewhere.body["error"]["retryable"], true);
    let held = request(c.a.addr, "POST", &path, None, Some(run));
    assert_eq!(held.body["output"], 7, "{}", held.body);
    let missing = request(c.b.addr, "GET", "/v1/sessions/nope", None, None);
    assert_error(&missing, 404, "session_not_found");
    assert_eq!(request(c.b.addr, "GET", "/healthz", None, None).status, 200);
}

/// A Redis that answers nothing, then one killed mid-run: actions fail with 503
/// `store_unavailable` and `Retry-After` (within the pool's bounds: no replica hangs or
/// crashes), and once Redis is back every acknowledged commit is there, whole.
#[test]
fn redis_killed_mid_run_then_back_keeps_every_acknowledged_write() {
    let mut c = cluster("replicas-redis-down", false);
    let (a, b) = (c.a.addr, c.b.addr);
    load_counter(a);
    assert_eq!(inc(a, "d", None).body["seq"], 1);
    c.redis.signal("-STOP");
    let stuck = inc(b, "d", None);
    assert_error(&stuck, 503, "store_unavailable");
    c.redis.signal("-CONT");
    for i in 0..9 {
        let reply = inc(if i % 2 == 0 { a } else { b }, "d", None);
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["seq"], i + 2, "the stuck action kept nothing");
    }
    c.redis.kill();
    for at in [a, b] {
        let refused = inc(at, "d", Some("while-down"));
        assert_error(&refused, 503, "store_unavailable");
        assert!(
            refused.headers.contains("retry-after: 1"),
            "{}",
            refused.headers
        );
        assert_eq!(refused.body["error"]["retryable"], true);
        assert_eq!(request(at, "GET", "/healthz", None, None).status, 200);
        assert_eq!(request(at, "GET", "/readyz", None, None).status, 503);
    }
    c.redis.spawn();
    let back = inc(b, "d", Some("while-down"));
    assert_eq!(back.status, 200, "{}", back.body);
    let seq = back.body["seq"].as_u64().unwrap();
    assert_eq!(
        seq, 11,
        "the ten acknowledged commits are there, the refused one is not"
    );
    assert_eq!(back.body["state"]["n"], 11);
    let stream = events_until(a, "d", 0, 11);
    let ids: Vec<u64> = stream
        .join()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        ids,
        (1..=11).collect::<Vec<_>>(),
        "every commit's event, once"
    );
    assert_eq!(request(a, "GET", "/readyz", None, None).status, 200);
}

/// A replica killed with `kill -9` while committing: the other serves the session as of the
/// last acknowledged commit (or the one in flight, whole), and takes its next action once the
/// dead replica's lease has expired.
#[test]
fn a_replica_killed_mid_commit_leaves_the_last_acknowledged_state() {
    let mut c = cluster("replicas-kill-9", false);
    let (a, b) = (c.a.addr, c.b.addr);
    load_counter(a);
    // Acts through A until A is gone (its last request then fails on the socket).
    let acked = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = acked.clone();
    let acting = std::thread::spawn(move || {
        loop {
            let reply = inc(a, "k", None);
            assert_eq!(reply.status, 200, "{}", reply.body);
            let seq = reply.body["seq"].as_u64().unwrap();
            seen.store(seq, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        let view = request(b, "GET", "/v1/apps/counter/view?session_id=k", None, None);
        if view.body["value"].as_u64().unwrap_or(0) >= 5 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    c.a.child.kill().unwrap();
    let _ = c.a.child.wait();
    assert!(
        acting.join().is_err(),
        "the acting thread ends when A is gone"
    );
    let acked = acked.load(std::sync::atomic::Ordering::SeqCst);
    assert!(acked >= 4, "A acknowledged {acked} commits before it died");
    let next = inc(b, "k", None);
    assert_eq!(next.status, 200, "{}", next.body);
    let seq = next.body["seq"].as_u64().unwrap();
    assert!(
        seq == acked + 1 || seq == acked + 2,
        "acknowledged {acked}, then B committed {seq}"
    );
    assert_eq!(
        next.body["state"]["n"], seq,
        "state and sequence written together"
    );
    c.redis.kill();
}

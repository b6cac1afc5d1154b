//! `palisade serve --app FILE.js`, end to end: the real binary on a random loopback port runs
//! the seed's calculator through the seed's own routes and curl flow (issue 27).

use crate::cli::palisade_bin;
use crate::serve::policies_dir;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Running(Child, std::sync::mpsc::Receiver<String>);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start the server; its address, from the line it prints (within 60 s).
fn serve(args: &[&str]) -> (Running, SocketAddr) {
    let mut child = Command::new(palisade_bin())
        .arg("serve")
        .args(args)
        .current_dir(crate::support::root())
        .env("PALISADE_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("palisade serve starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let running = Running(child, rx);
    loop {
        let line = running
            .1
            .recv_timeout(Duration::from_secs(60))
            .expect("the server says where it listens within 60 s");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            let addr = rest.split_whitespace().next().unwrap().parse().unwrap();
            return (running, addr);
        }
    }
}

struct Reply {
    status: u16,
    headers: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {}", self.body))
    }
}

/// One request on a fresh connection, as curl sends it.
fn send(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap();
    Reply {
        status: headers[9..12].parse().unwrap(),
        headers: headers.to_ascii_lowercase(),
        body: body.to_owned(),
    }
}

fn post(addr: SocketAddr, path: &str, body: Value) -> Reply {
    send(addr, "POST", path, &[], &body.to_string())
}

#[test]
fn apps_cli_runs_the_seed_calculator_flow() {
    let policies = policies_dir("apps-cli");
    let data = policies.parent().unwrap().join("data");
    let (mut server, a) = serve(&[
        "--listen",
        "127.0.0.1:0",
        "--policies",
        policies.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--app",
        "examples/apps/calc.js",
    ]);
    assert_eq!(send(a, "GET", "/healthz", &[], "").body, r#"{"ok":true}"#);

    // The press flow: 7 ÷ 2 = 3.5.
    for step in [
        json!({"action": "calc.input", "params": {"digit": 7}}),
        json!({"action": "calc.op", "params": {"op": "divide"}}),
        json!({"action": "calc.input", "params": {"digit": 2}}),
    ] {
        let reply = post(a, "/press", step);
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(reply.json()["jace"].is_object());
    }
    let equals = post(a, "/press", json!({"action": "calc.equals"}));
    assert_eq!(equals.status, 200, "{}", equals.body);
    let equals = equals.json();
    assert_eq!(equals["result"]["value"], 3.5);
    assert_eq!(equals["state"]["acc"], 3.5);
    assert_eq!(equals["audit_preview"], "DIVIDE 7÷2 -> 3.5");
    assert_eq!(equals["jace"]["children"][0]["value"], "3.5");

    // The agent envelope: a dry run first, then the commit with an Idempotency-Key.
    let envelope = json!({"action": "calc.input", "params": {"digit": 7}, "intent": "enter digit", "session_id": "sess_1"});
    let mut dry = envelope.clone();
    dry["dry_run"] = true.into();
    let key = [("idempotency-key", "6f1c0a52-3d0e-4c55-9d1e-7a4b2f0c9e11")];
    let preview = send(a, "POST", "/actions", &key, &dry.to_string());
    assert_eq!(preview.status, 200, "{}", preview.body);
    assert_eq!(preview.json()["dry_run"], true);
    assert_eq!(preview.json()["audit_preview"], "INPUT 7");
    let commit = send(a, "POST", "/actions", &key, &envelope.to_string());
    assert_eq!(commit.status, 200, "{}", commit.body);
    assert!(!commit.headers.contains("idempotent-replayed"));
    assert_eq!(
        commit.json()["audit_preview"],
        preview.json()["audit_preview"]
    );
    assert_eq!(commit.json()["result"], preview.json()["result"]);
    assert_eq!(commit.json()["state"]["entry"], "7");
    let again = send(a, "POST", "/actions", &key, &envelope.to_string());
    assert!(again.headers.contains("idempotent-replayed: true"));
    assert_eq!(again.body, commit.body);
    // The same session over /v1/apps/calc.
    let state = send(
        a,
        "GET",
        "/v1/apps/calc/view?session_id=sess_1&audience=agent",
        &[],
        "",
    );
    assert_eq!(state.json()["children"][0]["value"], "7", "{}", state.body);

    // Views: JACE JSON for agents, escaped HTML for people.
    let agent = post(a, "/view", json!({"audience": "agent"}));
    assert!(agent.json()["jace"].is_object());
    assert!(!agent.body.contains("presentation"), "{}", agent.body);
    let html = send(a, "POST", "/view", &[("accept", "text/html")], "{}");
    assert!(html.headers.contains("content-type: text/html"));
    assert!(html.body.contains("3.5"), "{}", html.body);

    // Events of the committed equals, with its id.
    let mut stream = TcpStream::connect(a).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET /agent/events HTTP/1.1\r\nhost: {a}\r\naccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("\n\n") || !seen.contains("id: 1") {
        let n = stream
            .read(&mut buf)
            .expect("the event arrives within 30 s");
        assert!(n > 0, "the stream ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(seen.contains("calc.computed"), "{seen}");
    drop(stream);

    // /init starts the session again; /load-file reads only the app's folder.
    let init = post(a, "/init", json!({}));
    assert_eq!(init.json()["state"]["acc"], Value::Null, "{}", init.body);
    let outside = post(a, "/load-file", json!({"path": "/etc/passwd"}));
    assert_eq!(outside.status, 403, "{}", outside.body);
    assert_eq!(outside.json()["error"]["code"], "policy_denied");
    let broken = post(a, "/load", json!({"source": "globalThis.jace = {"}));
    assert_eq!(broken.status, 422, "{}", broken.body);
    assert_eq!(broken.json()["error"]["code"], "guest_syntax");
    let reload = post(a, "/load-file", json!({"path": "calc.js"}));
    assert_eq!(reload.status, 200, "{}", reload.body);
    assert_eq!(reload.json(), json!({"ok": true}));
    let after = post(
        a,
        "/press",
        json!({"action": "calc.input", "params": {"digit": 4}}),
    );
    assert_eq!(after.json()["state"]["entry"], "4", "{}", after.body);

    let status = Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    for _ in 0..300 {
        if let Some(status) = server.0.try_wait().unwrap() {
            let stderr: Vec<String> = server.1.try_iter().collect();
            assert_eq!(status.code(), Some(0), "{stderr:?}");
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server did not stop within 30 s");
}

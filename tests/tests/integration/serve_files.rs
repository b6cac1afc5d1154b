//! `palisade serve`'s session file operations against the guest's own file gate: one count and
//! one depth limit for the API and the scripts, bounded edits, whole writes, no FIFO, fixes
//! that never loop, and `/` as the session's directory. Each test asserts the exact code, then
//! shows that a normal operation still works.

use crate::escapes_files::Fifo;
use crate::serve::{Answer, Server, assert_error, config, start};
use http::StatusCode;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// A session policy with room for deep trees: 8 KiB in at most 150 entries.
const DEEP_POLICY: &str = "name = \"deep\"\n[limits]\ntimeout = \"10s\"\n[fs.scratch]\n\
    guest = \"/scratch\"\nquota = \"8KiB\"\nmax_files = 150\n";

/// A server with the `box` policy (4 KiB, 10 entries) and `deep`.
fn server(name: &str) -> Server {
    let config = config(name, false);
    let policies = config.policies.clone().unwrap();
    std::fs::write(policies.join("deep.toml"), DEEP_POLICY).unwrap();
    start(config)
}

impl Server {
    /// The host directory of a session's files.
    fn files_of(&self, id: &str) -> PathBuf {
        self.data.join("sessions").join(id).join("files")
    }

    async fn script(&self, id: &str, source: &str) -> Value {
        let uri = format!("/v1/sessions/{id}/run");
        let ran = self
            .call("POST", &uri, None, json!({ "source": source }))
            .await;
        assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
        ran.body["output"].clone()
    }
}

/// The policy rule a `policy_denied` answer names.
fn rule(answer: &Answer) -> String {
    let message = answer.body["error"]["message"].as_str().unwrap_or_default();
    message
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(rule, _)| rule.to_owned())
        .unwrap_or_default()
}

fn ok(answer: &Answer) {
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
}

/// `levels` nested directories `d` below `dir`; the deepest one's path.
fn nest(dir: &std::path::Path, levels: usize) -> PathBuf {
    let deepest = (0..levels).fold(dir.to_path_buf(), |p, _| p.join("d"));
    std::fs::create_dir_all(&deepest).unwrap();
    deepest
}

#[tokio::test]
async fn serve_files_count_a_tree_deeper_than_64_levels() {
    let server = server("files-deep-count");
    // 100 levels with 6,000 bytes at the bottom, placed on disk: the quota sees all of it.
    let id = server.session(None, json!({"policy": "deep"})).await;
    let bottom = nest(&server.files_of(&id), 100);
    std::fs::write(bottom.join("big"), "x".repeat(6000)).unwrap();
    let over = server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "more", "content": "y".repeat(4000)}),
        )
        .await;
    assert_error(&over, 403, "policy_denied");
    assert_eq!(rule(&over), "fs.scratch.quota", "{}", over.body);
    ok(&server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "small", "content": "y".repeat(1000)}),
        )
        .await);
    // 100 levels with a file at each: 200 entries under a limit of 150.
    let id = server.session(None, json!({"policy": "deep"})).await;
    let mut at = server.files_of(&id);
    for _ in 0..100 {
        at = at.join("d");
        std::fs::create_dir(&at).unwrap();
        std::fs::write(at.join("f"), "").unwrap();
    }
    let over = server
        .fs(None, &id, "write", json!({"path": "one", "content": "1"}))
        .await;
    assert_error(&over, 403, "policy_denied");
    assert_eq!(rule(&over), "fs.scratch.max_files", "{}", over.body);
    ok(&server
        .fs(None, &id, "rm", json!({"path": "d", "recursive": true}))
        .await);
    ok(&server
        .fs(None, &id, "write", json!({"path": "one", "content": "1"}))
        .await);
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_files_refuse_writes_past_the_depth_limit() {
    let server = server("files-deep-write");
    let id = server.session(None, json!({"policy": "deep"})).await;
    // 128 levels is the guest's limit: a file at depth 128 may be made, one at 129 not.
    let at_limit = format!("{}f", "d/".repeat(127));
    ok(&server
        .fs(
            None,
            &id,
            "write",
            json!({"path": at_limit, "content": "x", "parents": true}),
        )
        .await);
    for (op, body) in [
        (
            "write",
            json!({"path": format!("{}f", "d/".repeat(128)), "content": "x"}),
        ),
        (
            "write",
            json!({"path": format!("{}g", "e/".repeat(128)), "content": "x", "parents": true}),
        ),
        ("mkdir", json!({"path": "d/".repeat(129), "parents": true})),
    ] {
        let refused = server.fs(None, &id, op, body).await;
        assert_error(&refused, 403, "policy_denied");
        assert_eq!(rule(&refused), "fs.scratch", "{}", refused.body);
        let message = refused.body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("129 levels deep; at most 128"),
            "{message}"
        );
        assert_eq!(refused.body["error"]["fix"], Value::Null);
    }
    assert!(!server.files_of(&id).join("e").exists(), "nothing was made");
    // A directory whose subtree would pass the limit does not move there.
    ok(&server
        .fs(
            None,
            &id,
            "mkdir",
            json!({"path": "a/b/c", "parents": true}),
        )
        .await);
    let deeper = server
        .fs(
            None,
            &id,
            "mv",
            json!({"src": "a", "dst": format!("{}a", "d/".repeat(126))}),
        )
        .await;
    assert_error(&deeper, 403, "policy_denied");
    assert_eq!(rule(&deeper), "fs.scratch", "{}", deeper.body);
    ok(&server
        .fs(
            None,
            &id,
            "mv",
            json!({"src": "a", "dst": format!("{}a", "d/".repeat(125))}),
        )
        .await);
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_files_and_scripts_share_one_count() {
    let server = server("files-one-count");
    let id = server.session(None, json!({"policy": "box"})).await;
    let write = "async (path, n) => { try { await fs.writeFile(path, 'x'.repeat(n)); \
        return 'wrote' } catch (e) { return e.code } }";
    let script =
        |path: &str, n: usize| format!("export default () => ({write})('/scratch/{path}', {n})");
    // The script writes first, so the count is the one its gate keeps; then the API adds 3 KB
    // to it, and the script's 2 KB no longer fits in 4 KiB.
    assert_eq!(server.script(&id, &script("s1", 10)).await, "wrote");
    ok(&server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "api", "content": "y".repeat(3000)}),
        )
        .await);
    assert_eq!(server.script(&id, &script("s2", 2000)).await, "ENOSPC");
    // The other way: what the script wrote counts against the API.
    let over = server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "api2", "content": "y".repeat(1500)}),
        )
        .await;
    assert_error(&over, 403, "policy_denied");
    assert_eq!(rule(&over), "fs.scratch.quota");
    // The API's removal gives the room back to the script.
    ok(&server.fs(None, &id, "rm", json!({"path": "api"})).await);
    assert_eq!(server.script(&id, &script("s2", 2000)).await, "wrote");
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_files_sed_stops_building_at_the_quota() {
    let server = server("files-sed-quota");
    let id = server.session(None, json!({"policy": "box"})).await;
    let original = "a".repeat(1000);
    ok(&server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "f.txt", "content": original}),
        )
        .await);
    // 1,000 matches of a 1 MiB replacement would be 1 GB: refused at the 4 KiB quota, having
    // built at most one replacement past it.
    let huge = "x".repeat(1 << 20);
    for regex in [false, true] {
        let refused = server
            .fs(
                None,
                &id,
                "sed",
                json!({"files": ["f.txt"], "pattern": "a", "replacement": huge, "regex": regex}),
            )
            .await;
        assert_error(&refused, 403, "policy_denied");
        assert_eq!(rule(&refused), "fs.scratch.quota", "{}", refused.body);
        assert_eq!(refused.body["error"]["fix"], Value::Null);
    }
    // A group copied many times is counted as it is copied.
    let doubled = "$0".repeat(4096);
    let refused = server
        .fs(
            None,
            &id,
            "sed",
            json!({"path": ".", "pattern": "a+", "replacement": doubled}),
        )
        .await;
    assert_error(&refused, 403, "policy_denied");
    let read = server.fs(None, &id, "read", json!({"path": "f.txt"})).await;
    assert_eq!(read.body["body"], original, "the file is as it was");
    let ls = server.fs(None, &id, "ls", json!({"path": "/"})).await;
    assert_eq!(
        ls.body["entries"].as_array().unwrap().len(),
        1,
        "{}",
        ls.body
    );
    let sed = server
        .fs(
            None,
            &id,
            "sed",
            json!({"files": ["f.txt"], "pattern": "a", "replacement": "b"}),
        )
        .await;
    assert_eq!(sed.body["total_replacements"], 1000, "{}", sed.body);
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_files_writes_replace_whole_files() {
    let server = server("files-whole");
    let id = server.session(None, json!({"policy": "box"})).await;
    for content in ["first version", "2", &"third ".repeat(300), ""] {
        ok(&server
            .fs(
                None,
                &id,
                "write",
                json!({"path": "doc.txt", "content": content}),
            )
            .await);
        let read = server
            .fs(None, &id, "read", json!({"path": "doc.txt"}))
            .await;
        assert_eq!(read.body["body"], content);
        let names: Vec<_> = std::fs::read_dir(server.files_of(&id))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["doc.txt"], "no temporary file remains");
    }
    // A refused overwrite leaves the old content.
    ok(&server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "doc.txt", "content": "kept"}),
        )
        .await);
    let big = server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "doc.txt", "content": "z".repeat(5000)}),
        )
        .await;
    assert_error(&big, 403, "policy_denied");
    let read = server
        .fs(None, &id, "read", json!({"path": "doc.txt"}))
        .await;
    assert_eq!(read.body["body"], "kept");
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_files_refuse_a_fifo() {
    let server = server("files-fifo");
    let id = server.session(None, json!({"policy": "box"})).await;
    // Dropped last: it lets go of a reader stuck on it, whatever happened.
    let _fifo = Fifo::new(server.files_of(&id).join("pipe"));
    for (op, body) in [
        ("read", json!({"path": "pipe"})),
        (
            "sed",
            json!({"files": ["pipe"], "pattern": "a", "replacement": "b"}),
        ),
    ] {
        let call = server.fs(None, &id, op, body);
        // Generous: a refusal is immediate, and a read that blocks never answers.
        let refused = tokio::time::timeout(Duration::from_secs(60), call)
            .await
            .expect("answered, not blocked on the FIFO");
        assert_error(&refused, 403, "policy_denied");
        let message = refused.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("not a regular file"), "{message}");
    }
    let grep = server
        .fs(None, &id, "grep", json!({"path": ".", "pattern": "a"}))
        .await;
    assert_eq!(grep.body, json!({"matches": [], "truncated": false}));
    ok(&server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "plain", "content": "fine"}),
        )
        .await);
    server.assert_fine(None).await;
}

/// Apply each error's `fix` to its request until it succeeds or answers without one; every
/// step must answer another code than the one before (a fix never loops). The codes seen.
async fn follow_fixes(server: &Server, id: &str, op: &str, mut body: Value) -> Vec<String> {
    let mut codes = Vec::new();
    for _ in 0..4 {
        let answer = server.fs(None, id, op, body.clone()).await;
        if answer.status == StatusCode::OK {
            codes.push("ok".to_owned());
            return codes;
        }
        let code = answer.body["error"]["code"].as_str().unwrap().to_owned();
        assert_ne!(
            codes.last(),
            Some(&code),
            "{op} {body}: the fix looped: {}",
            answer.body
        );
        codes.push(code);
        let Value::Object(fix) = &answer.body["error"]["fix"] else {
            return codes;
        };
        for (key, value) in fix {
            body[key] = value.clone();
        }
    }
    panic!("{op}: fixes did not settle: {codes:?}");
}

#[tokio::test]
async fn serve_files_fixes_never_loop() {
    let server = server("files-fixes");
    let id = server.session(None, json!({"policy": "box"})).await;
    for (op, body) in [
        ("write", json!({"path": "file.txt", "content": "x"})),
        ("mkdir", json!({"path": "dir"})),
        (
            "write",
            json!({"path": "full/a.txt", "content": "x", "parents": true}),
        ),
        ("mkdir", json!({"path": "empty"})),
    ] {
        ok(&server.fs(None, &id, op, body).await);
    }
    // Every error of the file operations that carries a fix, with where its fix leads.
    let cases = [
        ("stat", json!({}), vec!["invalid_input", "ok"]),
        ("mkdir", json!({"path": "dir"}), vec!["file_conflict", "ok"]),
        (
            "mkdir",
            json!({"path": "new/sub"}),
            vec!["file_not_found", "ok"],
        ),
        (
            "write",
            json!({"path": "p/q.txt", "content": "x"}),
            vec!["file_not_found", "ok"],
        ),
        ("rm", json!({"path": "full"}), vec!["file_conflict", "ok"]),
        (
            "mv",
            json!({"src": "p/q.txt", "dst": "file.txt"}),
            vec!["file_conflict", "ok"],
        ),
        (
            "mv",
            json!({"src": "new", "dst": "empty"}),
            vec!["file_conflict", "ok"],
        ),
        (
            "write",
            json!({"path": "/b.txt", "content": "x"}),
            vec!["policy_denied", "ok"],
        ),
        (
            "read",
            json!({"path": "/etc/hostname"}),
            vec!["policy_denied", "file_not_found"],
        ),
    ];
    for (op, body, expected) in cases {
        assert_eq!(
            follow_fixes(&server, &id, op, body.clone()).await,
            expected,
            "{op} {body}"
        );
    }
    // Where no change of the request would work, there is no fix, and a note says what to do.
    for (op, body, code) in [
        ("mkdir", json!({"path": "file.txt"}), "file_conflict"),
        (
            "mv",
            json!({"src": "dir", "dst": "file.txt"}),
            "file_conflict",
        ),
        (
            "write",
            json!({"path": "big", "content": "z".repeat(5000)}),
            "policy_denied",
        ),
    ] {
        let answer = server.fs(None, &id, op, body).await;
        assert_eq!(answer.body["error"]["code"], code, "{}", answer.body);
        assert_eq!(
            answer.body["error"]["fix"],
            Value::Null,
            "{op}: {}",
            answer.body
        );
        assert!(
            answer.body["error"]["fix_note"].is_string(),
            "{}",
            answer.body
        );
    }
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_files_slash_names_the_session_directory() {
    let server = server("files-slash");
    let id = server.session(None, json!({"policy": "box"})).await;
    ok(&server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "/scratch/a.txt", "content": "a"}),
        )
        .await);
    let listed = server.fs(None, &id, "ls", json!({"path": "."})).await;
    for path in ["/", "/scratch", "/scratch/"] {
        let ls = server.fs(None, &id, "ls", json!({ "path": path })).await;
        assert_eq!(ls.body, listed.body, "{path}");
        let stat = server.fs(None, &id, "stat", json!({ "path": path })).await;
        assert_eq!(stat.body["is_dir"], true, "{path}: {}", stat.body);
        let grep = server
            .fs(None, &id, "grep", json!({"path": path, "pattern": "a"}))
            .await;
        assert_eq!(grep.body["matches"][0]["path"], "a.txt", "{path}");
    }
    let rm = server
        .fs(None, &id, "rm", json!({"path": "/", "recursive": true}))
        .await;
    assert_error(&rm, 400, "invalid_input");
    // Another absolute path is outside, and the fix names it inside.
    let outside = server
        .fs(None, &id, "read", json!({"path": "/a.txt"}))
        .await;
    assert_error(&outside, 403, "policy_denied");
    assert_eq!(
        outside.body["error"]["fix"],
        json!({"path": "/scratch/a.txt"})
    );
    let inside = server
        .fs(None, &id, "read", json!({"path": "/scratch/a.txt"}))
        .await;
    assert_eq!(inside.body["body"], "a");
    server.assert_fine(None).await;
}

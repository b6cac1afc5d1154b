//! `palisade session …` against a real `palisade serve` on a loopback port: the sandbox daemon
//! seed's terminal flow (create → write → run → stop), exit codes as `palisade run`'s, and a
//! refusal's `fix` written as the next command, which is then typed and works.

use crate::cli::{output_with, palisade_bin};
use crate::serve::keys_file;
use crate::serve_cli::{base, data_args, serve};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// `palisade session ARGS` against `server` with the key in `key_file`.
fn session(server: &str, key_file: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(palisade_bin());
    command
        .arg("session")
        .args(["--server", server, "--key-file", key_file.to_str().unwrap()])
        .args(args)
        .env_remove("PALISADE_SERVER")
        .env_remove("PALISADE_KEY");
    output_with(command, stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The words of the `try:` line a refusal printed (after `palisade session`).
fn suggested(output: &Output) -> Vec<String> {
    let stderr = text(&output.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("try: palisade session "))
        .unwrap_or_else(|| panic!("no try: line in {stderr}"));
    line.split_whitespace().map(str::to_owned).collect()
}

/// Run the suggested command (its `--server` and `--key-file` are the caller's).
fn follow(server: &str, key_file: &Path, output: &Output) -> Output {
    let words = suggested(output);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    session(server, key_file, &words, None)
}

#[test]
fn session_cli_drives_a_session_and_follows_its_fixes() {
    let (policies, data, root) = base("session-cli");
    let keys = keys_file(&root);
    let key = root.join("acme.key");
    std::fs::write(&key, "acme-key\n").unwrap();
    let mut args = data_args(&policies, &data);
    args.extend(["--keys", keys.to_str().unwrap()]);
    let running = serve(&args);
    let server = format!("http://{}", running.addr);
    let s = |args: &[&str]| session(&server, &key, args, None);

    let created = s(&["create", "--policy", "box", "--name", "task-7"]);
    assert_eq!(created.status.code(), Some(0), "{}", text(&created.stderr));
    let id = text(&created.stdout).trim().to_owned();
    assert_eq!(id.len(), 32, "{id}");
    let listed = text(&s(&["ls"]).stdout);
    assert!(
        listed.contains(&id) && listed.contains("box") && listed.contains("task-7"),
        "{listed}"
    );

    // A missing parent: file_not_found (exit 55), and the command that works.
    let note = root.join("n.txt");
    std::fs::write(&note, "41").unwrap();
    let note = note.to_str().unwrap();
    let refused = s(&["fs", "write", &id, "notes/n.txt", "--from", note]);
    assert_eq!(refused.status.code(), Some(55), "{}", text(&refused.stderr));
    assert_eq!(
        suggested(&refused),
        [
            "fs",
            "write",
            &id,
            "notes/n.txt",
            "--from",
            note,
            "--parents"
        ]
    );
    let written = follow(&server, &key, &refused);
    assert_eq!(written.status.code(), Some(0), "{}", text(&written.stderr));
    assert_eq!(text(&s(&["fs", "read", &id, "notes/n.txt"]).stdout), "41");
    assert_eq!(text(&s(&["fs", "ls", &id, "notes"]).stdout), "n.txt  2\n");
    let found = s(&["fs", "grep", &id, ".", "4[0-9]"]);
    assert_eq!(text(&found.stdout), "notes/n.txt:1:41\n");

    // An existing directory: file_conflict (exit 56); its fix succeeds.
    let again = s(&["fs", "mkdir", &id, "notes"]);
    assert_eq!(again.status.code(), Some(56), "{}", text(&again.stderr));
    assert_eq!(follow(&server, &key, &again).status.code(), Some(0));

    // A script from standard input: its output on stdout, its console on stderr.
    let source = "export default async () => { console.log('reading'); \
                  return 1 + Number(await fs.readFile('/scratch/notes/n.txt', 'utf8')) }";
    let ran = session(&server, &key, &["run", &id, "-"], Some(source));
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert_eq!(text(&ran.stdout), "42\n");
    assert_eq!(text(&ran.stderr), "reading\n");
    let script = root.join("spin.js");
    std::fs::write(&script, "export default () => { for (;;) {} }").unwrap();
    let spun = s(&[
        "--json",
        "run",
        &id,
        script.to_str().unwrap(),
        "--timeout",
        "100ms",
    ]);
    assert_eq!(spun.status.code(), Some(21), "{}", text(&spun.stderr));
    let outcome: Value = serde_json::from_slice(&spun.stdout).unwrap();
    assert_eq!(outcome["error"]["code"], "timeout");

    let stopped = s(&["stop", &id]);
    assert_eq!(stopped.status.code(), Some(0), "{}", text(&stopped.stderr));
    let gone = s(&["fs", "ls", &id]);
    assert_eq!(gone.status.code(), Some(52), "{}", text(&gone.stderr));
    assert!(text(&gone.stderr).starts_with("error[session_not_found]"));
}

#[test]
fn session_cli_refusals_keep_their_codes_and_the_server_serves_on() {
    let (policies, data, root) = base("session-cli-refusals");
    let keys = keys_file(&root);
    let wrong = root.join("wrong.key");
    std::fs::write(&wrong, "not-a-key").unwrap();
    let right = root.join("acme.key");
    std::fs::write(&right, "acme-key").unwrap();
    let mut args = data_args(&policies, &data);
    args.extend(["--keys", keys.to_str().unwrap()]);
    let running = serve(&args);
    let server = format!("http://{}", running.addr);

    let refused = session(&server, &wrong, &["ls"], None);
    assert_eq!(refused.status.code(), Some(50), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).starts_with("error[unauthorized]"));
    let unknown = session(&server, &right, &["create", "--policy", "nope"], None);
    assert_eq!(unknown.status.code(), Some(51), "{}", text(&unknown.stderr));
    // Not an http:// URL: a usage error before any request.
    let usage = session("https://example.invalid", &right, &["ls"], None);
    assert_eq!(usage.status.code(), Some(2));
    // Nothing listens: exit 40 (retry later), said on stderr.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let unreachable = session(&nowhere, &right, &["ls"], None);
    assert_eq!(unreachable.status.code(), Some(40));
    assert!(text(&unreachable.stderr).contains("cannot reach"));
    // The server is fine.
    let listed = session(&server, &right, &["ls"], None);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
}

/// `palisade session create --live`: two runs from standard input share a heap.
#[test]
fn session_cli_creates_a_live_session_whose_runs_share_a_heap() {
    let (policies, data, root) = base("session-cli-live");
    let keys = keys_file(&root);
    let key = root.join("acme.key");
    std::fs::write(&key, "acme-key\n").unwrap();
    let mut args = data_args(&policies, &data);
    args.extend(["--keys", keys.to_str().unwrap()]);
    let running = serve(&args);
    let server = format!("http://{}", running.addr);
    let created = session(
        &server,
        &key,
        &["create", "--policy", "default", "--live"],
        None,
    );
    assert_eq!(created.status.code(), Some(0), "{}", text(&created.stderr));
    let id = text(&created.stdout).trim().to_owned();
    let first = session(&server, &key, &["run", &id, "-"], Some("let n = 41; n"));
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let second = session(&server, &key, &["run", &id, "-"], Some("n + 1"));
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "42\n");
}

/// `palisade session create --policy-file F`: a TOML file is sent as `policy_toml`, a JSON one
/// (by its extension, or by its text from standard input) as `policy` with the object's text as
/// it is, each admitted within the key's ceiling (`--inline-ceiling box`) and named in the
/// receipt by the SHA-256 of that text (the file's, without whitespace around the object). A file past the ceiling is `policy_denied` (exit 31),
/// its fix written as the change to make in the file and the command to type again; made, the
/// command works, and the server serves on.
#[test]
fn session_cli_sends_a_policy_file_within_the_ceiling() {
    let (policies, data, root) = base("session-cli-policy-file");
    let keys = keys_file(&root);
    let key = root.join("acme.key");
    std::fs::write(&key, "acme-key\n").unwrap();
    let mut args = data_args(&policies, &data);
    args.extend(["--keys", keys.to_str().unwrap(), "--inline-ceiling", "box"]);
    let running = serve(&args);
    let server = format!("http://{}", running.addr);
    let s = |args: &[&str], stdin: Option<&str>| session(&server, &key, args, stdin);
    // A session under `file`'s policy runs a script; its receipt names `bytes`' SHA-256.
    let runs_under = |args: &[&str], stdin: Option<&str>, bytes: &str| {
        let created = s(args, stdin);
        assert_eq!(created.status.code(), Some(0), "{}", text(&created.stderr));
        let id = text(&created.stdout).trim().to_owned();
        let ran = s(&["--json", "run", &id, "-"], Some("export default 6 * 7"));
        assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
        let answer: Value = serde_json::from_slice(&ran.stdout).unwrap();
        assert_eq!(answer["output"], 42, "{answer}");
        let sha = crate::support::sha256_hex(bytes.as_bytes());
        assert_eq!(answer["receipt"]["policy_sha256"], sha, "{answer}");
        assert_eq!(s(&["stop", &id], None).status.code(), Some(0));
    };
    let toml = "[limits]\ntimeout = \"3s\"\n";
    let toml_file = root.join("tight.toml");
    std::fs::write(&toml_file, toml).unwrap();
    let toml_path = toml_file.to_str().unwrap();
    runs_under(&["create", "--policy-file", toml_path], None, toml);
    let json = "{ \"limits\": {\"timeout\": \"2s\", \"fuel\": 1000000000} }";
    let json_file = root.join("tight.json");
    std::fs::write(&json_file, json).unwrap();
    let json_path = json_file.to_str().unwrap();
    runs_under(&["create", "--policy-file", json_path], None, json);
    runs_under(&["create", "--policy-file", "-"], Some(json), json);
    // A file that ends in a newline, as editors write them: named by the object's text, without
    // the whitespace around it.
    let lined = root.join("lined.json");
    std::fs::write(&lined, format!("\n{json}\n")).unwrap();
    runs_under(
        &["create", "--policy-file", lined.to_str().unwrap()],
        None,
        json,
    );

    let wide = root.join("wide.toml");
    std::fs::write(&wide, "[limits]\ntimeout = \"9s\"\n").unwrap();
    let wide_path = wide.to_str().unwrap();
    let refused = s(&["create", "--policy-file", wide_path], None);
    assert_eq!(refused.status.code(), Some(31), "{}", text(&refused.stderr));
    let stderr = text(&refused.stderr);
    assert!(stderr.starts_with("error[policy_denied]"), "{stderr}");
    let expected = format!(
        "try: in {wide_path}, set `limits.timeout = \"5s\"`; then: palisade session create \
         --policy-file {wide_path}"
    );
    assert!(stderr.contains(&expected), "{stderr}");
    std::fs::write(&wide, "[limits]\ntimeout = \"5s\"\n").unwrap();
    let rest = stderr.split("; then: palisade session ").nth(1).unwrap();
    let again: Vec<&str> = rest.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(again, ["create", "--policy-file", wide_path]);
    let fixed = s(&again, None);
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed.stderr));
    // Not a JSON object: a usage error before any request.
    let broken = root.join("broken.json");
    std::fs::write(&broken, "[1, 2]").unwrap();
    let usage = s(&["create", "--policy-file", broken.to_str().unwrap()], None);
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage.stderr));
    let listed = s(&["ls"], None);
    assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
}

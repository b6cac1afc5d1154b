//! Regression tests for the containment escapes (docs/reliability.md), files group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.

use crate::cli::palisade_bin;
use crate::support::*;
use palisade::{Outcome, Palisade, Policy, Script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A FIFO at `path`; dropping it opens it for reading and writing once (which never blocks),
/// so that an opener stuck on it is let go and the test ends whatever happened.
pub(crate) struct Fifo(pub(crate) PathBuf);

impl Fifo {
    pub(crate) fn new(path: PathBuf) -> Self {
        let made = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
        Fifo(path)
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.0);
    }
}

/// What the real binary did within `limit`: its exit code (`None` when it had to be killed),
/// stdout and stderr.
fn cli(args: &[&str], limit: Duration) -> (Option<i32>, String, String) {
    let mut child = Command::new(palisade_bin())
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    (
        code,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run the real binary under `/usr/bin/time` (and `timeout`, which kills it after 20 s): its
/// exit code, stderr, and peak RSS in bytes.
fn peak_rss_of(args: &[&str]) -> (Option<i32>, String, u64) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak-rss-kib %M", "timeout", "-s", "KILL", "20"])
        .arg(palisade_bin())
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .expect("/usr/bin/time runs (scripts/setup.sh installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let kib: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    (out.status.code(), stderr, kib * 1024)
}

async fn run_js(policy: &Policy, source: &str, input: &str) -> Outcome {
    PALISADE
        .run(policy, &Script::new("escape.js", source), input)
        .await
}

fn json_output(outcome: &Outcome) -> Value {
    serde_json::from_str(output(outcome)).unwrap()
}

/// This process's peak resident set (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

fn rw_policy(host: &Path, extra: &str) -> Policy {
    policy(&format!(
        "[limits]\ntimeout = \"5s\"\n\n[[fs.mount]]\nhost = \"{}\"\nguest = \"/m\"\nmode = \"rw\"\n{extra}",
        host.display()
    ))
}

#[tokio::test]
async fn escape_05_fifo_in_mount() {
    let dir = scratch_dir("escape-05");
    let fifo = Fifo::new(dir.join("fifo"));
    std::fs::write(dir.join("plain.txt"), "plain").unwrap();
    let source = "export default async () => { \
        let fifo, message; try { await fs.readFile('/m/fifo'); fifo = 'read'; } \
        catch (e) { fifo = e.code; message = e.message; } \
        let missing; try { await fs.readFile('/m/missing.txt'); } catch (e) { missing = e.message; } \
        return { fifo, message, missing, plain: await fs.readFile('/m/plain.txt') }; }";
    let p = policy(&format!(
        "[limits]\ntimeout = \"3s\"\n\n[[fs.mount]]\nhost = \"{}\"\nguest = \"/m\"\n",
        dir.display()
    ));
    let started = Instant::now();
    let outcome = run_js(&p, source, "null").await;
    assert_eq!(
        json_output(&outcome),
        // Issue 38 (19): the message says what Node says, not WASI's number for the error
        // (its EACCES is 2, which reads as Linux's ENOENT).
        json!({
            "fifo": "EACCES",
            "message": "EACCES: permission denied, readFile '/m/fifo'",
            "missing": "ENOENT: no such file or directory, readFile '/m/missing.txt'",
            "plain": "plain"
        })
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "refused at once"
    );
    let refusal = outcome.audit.iter().find(|r| r.capability == "fs").unwrap();
    assert_eq!(refusal.rule, "fs.mount");

    // The real binary exits, with the script's answer.
    std::fs::write(dir.join("policy.toml"), p.to_string()).unwrap();
    std::fs::write(
        dir.join("fifo.js"),
        "export default async () => { try { await fs.readFile('/m/fifo'); } catch (e) { return e.code; } }",
    )
    .unwrap();
    let policy_path = dir.join("policy.toml");
    let script_path = dir.join("fifo.js");
    let (code, stdout, stderr) = cli(
        &[
            "run",
            script_path.to_str().unwrap(),
            "--policy",
            policy_path.to_str().unwrap(),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "\"EACCES\"");
    drop(fifo);
    assert_next_call_works().await;
}

#[tokio::test]
async fn escape_06_files_per_quota() {
    let dir = scratch_dir("escape-06");
    std::fs::write(dir.join("before.txt"), "x").unwrap();
    let p = rw_policy(&dir, "quota = \"1MiB\"\nmax_files = 50\n");
    let fill = "export default async () => { \
        for (let i = 0; i < 1000; i++) { \
          try { await fs.writeFile(`/m/f${i}`, ''); } catch (e) { return { made: i, code: e.code }; } \
        } return { made: 1000 }; }";
    let outcome = run_js(&p, fill, "null").await;
    // One file was there before the call: 49 more fit.
    assert_eq!(
        json_output(&outcome),
        json!({ "made": 49, "code": "ENOSPC" })
    );
    let refusal = outcome.audit.iter().find(|r| r.capability == "fs").unwrap();
    assert_eq!(refusal.rule, "fs.mount[0].max_files");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 50);

    // Later calls find the count kept (no walk): overwriting works, a new file does not
    // until one is removed, and a directory counts as an entry.
    let later = "export default async () => { \
        await fs.writeFile('/m/f0', 'overwritten'); \
        let extra; try { await fs.writeFile('/m/extra', ''); extra = 'ok'; } catch (e) { extra = e.code; } \
        let dir; try { await fs.mkdir('/m/d'); dir = 'ok'; } catch (e) { dir = e.code; } \
        await fs.rm('/m/f1'); await fs.writeFile('/m/extra', 'now'); \
        return { extra, dir }; }";
    let p = policy(&format!(
        "[limits]\ntimeout = \"10s\"\n\n[[fs.mount]]\nhost = \"{}\"\nguest = \"/m\"\nmode = \"rw\"\nquota = \"1MiB\"\nmax_files = 50\n",
        dir.display()
    ));
    let outcome = run_js(&p, later, "null").await;
    assert_eq!(
        json_output(&outcome),
        json!({ "extra": "ENOSPC", "dir": "ENOSPC" })
    );
    assert_eq!(std::fs::read_to_string(dir.join("extra")).unwrap(), "now");

    // The scratch directory has a file limit too.
    let scratch = policy("[fs.scratch]\nguest = \"/s\"\nmax_files = 3\n");
    let outcome = run_js(&scratch, &fill.replace("/m/", "/s/"), "null").await;
    assert_eq!(
        json_output(&outcome),
        json!({ "made": 3, "code": "ENOSPC" })
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn escape_07_paths_deeper_than_path_max() {
    let dir = scratch_dir("escape-07");
    let host_len = dir.as_os_str().len();
    // 16 levels of 250 bytes and a last one that takes the host path to 4,100 bytes: under
    // PATH_MAX below the mount, over it on the host.
    let mut names: Vec<String> = (0..16).map(|i| format!("{i:x}").repeat(250)).collect();
    let below = 4099 - host_len;
    names.push("z".repeat(below - 16 * 251));
    let source = "export default async (names) => { \
        let path = '/m'; const codes = []; \
        for (const name of names) { path += '/' + name; \
          try { await fs.mkdir(path); codes.push('ok'); } catch (e) { codes.push(e.code); break; } } \
        return codes; }";
    let p = rw_policy(&dir, "");
    let outcome = run_js(&p, source, &json!(names).to_string()).await;
    let mut expected = vec!["ok"; 16];
    expected.push("EINVAL");
    assert_eq!(json_output(&outcome), json!(expected));
    let refusal = outcome.audit.iter().find(|r| r.capability == "fs").unwrap();
    assert_eq!(refusal.rule, "fs.mount[0]");

    // The mount is not full for the next call.
    let write = "export default async () => { await fs.writeFile('/m/next.txt', 'fine'); \
        return await fs.readFile('/m/next.txt'); }";
    let outcome = run_js(&p, write, "null").await;
    assert_eq!(output(&outcome), "\"fine\"");
    assert_next_call_works().await;
}

#[tokio::test]
async fn escape_14_host_reads_are_bounded() {
    let dir = scratch_dir("escape-14");
    // A secret that is a device, or a FIFO: refused at once. (A reader stuck on the FIFO is
    // let go after 5 s, so that this test ends even where it fails.)
    let fifo = dir.join("secret-fifo");
    std::mem::forget(Fifo::new(fifo.clone()));
    let release = fifo.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(5));
        drop(Fifo(release));
    });
    for file in ["/dev/null".to_owned(), fifo.display().to_string()] {
        let started = Instant::now();
        let toml = format!("[secrets]\nTOKEN = {{ file = \"{file}\" }}\n");
        let error = palisade::Error::from(Policy::from_toml(&toml, None).unwrap_err());
        assert_eq!(error.code(), "invalid_policy");
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    // A script or policy file larger than the host reads, or not a file: no memory spent.
    let big = dir.join("big.js");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let before = peak_rss();
    let e = Script::from_file(&big).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    let e = Policy::from_file(&big).unwrap_err();
    assert_eq!(palisade::Error::from(e).code(), "invalid_policy");
    // Other tests of this binary run alongside: 256 MiB is their allowance, a quarter of
    // what reading the file would take.
    assert!(
        peak_rss() - before < 256 << 20,
        "peak RSS grew by {} bytes",
        peak_rss() - before
    );
    // The real binary, measured: `/dev/zero` as a script (7 GB before) and as a secret
    // (12.6 GB) are refused before anything is read. Its baseline is about 13 MiB; 32 MiB is
    // the bound.
    let zero_secret = dir.join("zero-secret.toml");
    std::fs::write(&zero_secret, "[secrets]\nT = { file = \"/dev/zero\" }\n").unwrap();
    for (args, exit) in [
        (vec!["run", "/dev/zero"], 2),
        (vec!["policy", "check", zero_secret.to_str().unwrap()], 30),
    ] {
        let (code, stderr, peak) = peak_rss_of(&args);
        assert_eq!(code, Some(exit), "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
        assert!(peak < 32 << 20, "{args:?}: peak RSS {peak} bytes");
    }
    std::fs::remove_file(&big).unwrap();
    assert_next_call_works().await;
}

#[tokio::test]
async fn escape_16_stale_scratch_directories() {
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    // A process that has exited: its id names no running process (until reused).
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = base.join(format!("palisade-scratch-{dead}-0-0badc0de"));
    std::fs::create_dir_all(stale.join("sub")).unwrap();
    std::fs::write(stale.join("sub/data"), "left behind by kill -9").unwrap();
    // Pid 1 always runs: its directory is left alone.
    let live = base.join(format!(
        "palisade-scratch-1-{}-0badc0de",
        std::process::id()
    ));
    std::fs::create_dir_all(&live).unwrap();

    let fresh = Palisade::builder().max_concurrency(1).build().unwrap();
    assert!(
        !stale.exists(),
        "a dead process's scratch is removed at start"
    );
    assert!(live.exists(), "a live process's scratch stays");
    std::fs::remove_dir_all(&live).unwrap();

    let p = policy("[fs.scratch]\nguest = \"/s\"\n");
    let outcome = fresh
        .run(
            &p,
            &Script::new(
                "s.js",
                "export default async () => { await fs.writeFile('/s/a', 'b'); return await fs.readFile('/s/a'); }",
            ),
            "null",
        )
        .await;
    assert_eq!(output(&outcome), "\"b\"");
    assert_next_call_works().await;
}

#[tokio::test]
async fn escape_17_seeds_that_cannot_be_copied() {
    let dir = scratch_dir("escape-17");
    for (seed, says) in [
        ("/proc/self", "pseudo file system"),
        ("/dev/zero", "not a regular file or directory"),
        ("/", "/"),
    ] {
        let toml = format!("[fs.scratch]\nguest = \"/s\"\nseed = [\"{seed}\"]\n");
        let e = Policy::from_toml(&toml, None).unwrap_err();
        assert_eq!(e.key, "fs.scratch.seed[0]", "{seed}: {e}");
        assert!(e.message.contains(says), "{seed}: {e}");
        assert_eq!(palisade::Error::from(e).code(), "invalid_policy");
    }

    // A seed that was fine when the policy was loaded and no longer is: the call says which.
    std::fs::create_dir_all(dir.join("seed")).unwrap();
    std::fs::write(dir.join("seed/a.txt"), "a").unwrap();
    let p = policy(&format!(
        "[fs.scratch]\nguest = \"/s\"\nseed = [\"{}\"]\n",
        dir.join("seed").display()
    ));
    let read = "export default async () => await fs.readFile('/s/a.txt')";
    assert_eq!(output(&run_js(&p, read, "null").await), "\"a\"");
    std::fs::remove_file(dir.join("seed/a.txt")).unwrap();
    let _fifo = Fifo::new(dir.join("seed/a.txt"));
    let outcome = run_js(&p, read, "null").await;
    assert_eq!(code(&outcome), "invalid_policy");
    let message = outcome.error().unwrap().to_string();
    assert!(
        message.contains("fs.scratch.seed[0]") && message.contains("not a regular file"),
        "{message}"
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn escape_22_damaged_component() {
    let dir = scratch_dir("escape-22");
    // A component header whose first byte is damaged, then bytes that are not text.
    let mut bytes = b"\x01asm\x0d\x00\x01\x00".to_vec();
    bytes.extend([0xff, 0xfe, 0x00, 0x80].repeat(64));
    for name in ["damaged.wasm", "damaged.bin"] {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let (code, _, stderr) = cli(&["run", path.to_str().unwrap()], Duration::from_secs(30));
        assert_eq!(code, Some(18), "{name}: {stderr}");
        assert!(stderr.contains("error[invalid_component]"), "{stderr}");
    }
    // A `.wasm` name decides even for text.
    let text = dir.join("text.wasm");
    std::fs::write(&text, "export default 1").unwrap();
    let error = Script::from_file_bytes(&text, std::fs::read(&text).unwrap()).unwrap_err();
    assert_eq!(error.code(), "invalid_component");

    let (code, stdout, stderr) = cli(
        &["run", "examples/hello.js", "--input", r#"{"name":"Ada"}"#],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Hello, Ada!"), "{stdout}");
    assert_next_call_works().await;
}

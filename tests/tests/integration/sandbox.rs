//! Per-call scratch directories, and the sandbox example policy (scratch + kv).

use crate::support::*;
use palisade::{Policy, Script};
use serde_json::{Value, json};

fn leftover_scratch_dirs() -> usize {
    let prefix = format!("palisade-scratch-{}-", std::process::id());
    [std::path::PathBuf::from("/dev/shm"), std::env::temp_dir()]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .count()
}

const TASK: &str = r#"
export default async ({ note }) => {
  const before = await fs.readdir("/scratch");
  const scores = await fs.readFile("/scratch/scores.csv", "utf8");
  await fs.writeFile("/scratch/seed-was-writable.txt", "yes");
  await fs.writeFile("/scratch/scores.csv", "overwritten");
  const runs = ((await kv.getJSON("runs")) ?? 0) + 1;
  await kv.set("runs", runs);
  if (note) await kv.set(`note:${runs}`, note);
  const notes = (await kv.list({ prefix: "note:" })).keys;
  return { before, lines: scores.trim().split("\n").length, runs, notes };
};
"#;

#[tokio::test]
async fn the_sandbox_policy_gives_a_fresh_seeded_scratch_and_lasting_kv() {
    let p = Policy::from_file(root().join("policies/sandbox.toml")).unwrap();
    let script = Script::new("task.js", TASK);
    let first: Value =
        serde_json::from_str(output(&PALISADE.run(&p, &script, r#"{"note":"a"}"#).await)).unwrap();
    let second: Value =
        serde_json::from_str(output(&PALISADE.run(&p, &script, r#"{"note":"b"}"#).await)).unwrap();
    // Each call starts from the seed again: the first call's writes are gone.
    assert_eq!(first["before"], json!(["scores.csv"]));
    assert_eq!(second["before"], json!(["scores.csv"]));
    assert_eq!(first["lines"], second["lines"]);
    // State in kv lasts.
    assert_eq!(
        second["runs"].as_u64().unwrap(),
        first["runs"].as_u64().unwrap() + 1
    );
    assert_eq!(
        second["notes"].as_array().unwrap().len(),
        first["notes"].as_array().unwrap().len() + 1
    );
    // The seed on the host is untouched, and no scratch directory outlives its call.
    let seed = std::fs::read_to_string(root().join("examples/workspace/scores.csv")).unwrap();
    assert_ne!(seed, "overwritten");
    scratch_directories_do_not_leak_between_concurrent_calls().await;
}

/// Part of the test above: the count of leftover directories is per process, so the two must
/// not run at the same time (and other tests' calls are waited out).
async fn scratch_directories_do_not_leak_between_concurrent_calls() {
    let p = policy("[fs.scratch]\nguest = \"/tmp\"\n");
    let script = Script::new(
        "scratch.js",
        r#"export default async (n) => {
          await fs.writeFile(`/tmp/${n}`, String(n));
          await new Promise((r) => setTimeout(r, 20));
          return await fs.readdir("/tmp");
        };"#,
    );
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..8 {
        let (p, script) = (p.clone(), script.clone());
        calls.spawn(async move { (n, PALISADE.run(&p, &script, &n.to_string()).await) });
    }
    while let Some(joined) = calls.join_next().await {
        let (n, outcome) = joined.unwrap();
        assert_eq!(output(&outcome), format!("[\"{n}\"]"));
    }
    let escape = PALISADE
        .run(
            &p,
            &Script::new(
                "escape.js",
                "export default () => fs.readFile(\"/tmp/../etc/passwd\", \"utf8\").catch((e) => e.code)",
            ),
            "null",
        )
        .await;
    assert_eq!(output(&escape), r#""EACCES""#);
    // The count is the whole test process's: other tests' calls may hold a scratch directory
    // of their own for a moment. A leaked one never goes, so the count must reach 0.
    let mut left = leftover_scratch_dirs();
    for _ in 0..600 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        left = leftover_scratch_dirs();
    }
    assert_eq!(left, 0, "scratch directories left behind");
}

#[tokio::test]
async fn writable_directories_stop_at_their_quota() {
    let host = scratch_dir("quota");
    std::fs::write(host.join("existing.bin"), vec![0u8; 3000]).unwrap();
    let p = policy(&format!(
        "[[fs.mount]]\nhost = \"{}\"\nguest = \"/data\"\nmode = \"rw\"\nquota = \"4KiB\"\n\
         [fs.scratch]\nguest = \"/scratch\"\nquota = \"1KiB\"\n",
        host.display()
    ));
    let source = r#"export default async () => {
      const attempt = (f) => f().then(() => "ok", (e) => [e.code, e.rule, e.fix]);
      return {
        small: await attempt(() => fs.writeFile("/scratch/a", "x".repeat(600))),
        over: await attempt(() => fs.writeFile("/scratch/b", "x".repeat(600))),
        mountFits: await attempt(() => fs.writeFile("/data/new.bin", "y".repeat(1000))),
        mountOver: await attempt(() => fs.writeFile("/data/big.bin", "y".repeat(2000))),
        readBack: (await fs.readFile("/scratch/a", "utf8")).length,
      };
    };"#;
    let outcome = PALISADE
        .run(&p, &Script::new("quota.js", source), "null")
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(output(&outcome)).unwrap(),
        json!({
            "small": "ok",
            "over": ["ENOSPC", "fs.scratch.quota", "fs.scratch.quota = \"2KiB\""],
            "mountFits": "ok",
            "mountOver": ["ENOSPC", "fs.mount[0].quota", "fs.mount[0].quota = \"8KiB\""],
            "readBack": 600,
        })
    );
    // Nothing past the quota reached the host directory.
    let big = host.join("big.bin");
    assert!(!big.exists() || std::fs::metadata(&big).unwrap().len() == 0);
    assert_eq!(std::fs::metadata(host.join("new.bin")).unwrap().len(), 1000);
}

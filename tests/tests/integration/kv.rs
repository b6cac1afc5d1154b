//! The key-value store: `wasi:keyvalue` under the policy's namespace, durable in SQLite,
//! with its atomics (`kv.increment`, `kv.compareAndSwap`).

use crate::support::*;
use palisade::{Policy, Script};
use serde_json::{Value, json};

fn kv_policy(namespace: &str, extra: &str) -> Policy {
    policy(&format!(
        "[kv]\nnamespace = \"{namespace}\"\n{extra}\n[kv.buckets]\napp = \"rw\"\nreference = \"ro\"\n"
    ))
}

async fn run_kv(policy: &Policy, source: &str) -> palisade::Outcome {
    PALISADE
        .run(policy, &Script::new("kv.js", source), "null")
        .await
}

fn json_of(outcome: &palisade::Outcome) -> Value {
    serde_json::from_str(output(outcome)).unwrap()
}

#[tokio::test]
async fn values_round_trip_as_strings_json_and_bytes() {
    let p = kv_policy("round-trip", "");
    let outcome = run_kv(
        &p,
        r#"export default async () => {
          await kv.set("s", "text");
          await kv.set("j", { a: [1, 2] });
          await kv.set("b", new Uint8Array([0, 255]));
          for (let i = 0; i < 150; i++) await kv.set(`item/${String(i).padStart(3, "0")}`, i);
          const first = await kv.list({ prefix: "item/", limit: 120 });
          const rest = await kv.list({ prefix: "item/", cursor: first.cursor });
          await kv.delete("s");
          return {
            s: await kv.get("s"), j: await kv.getJSON("j"), b: [...await kv.getBytes("b")],
            has: [await kv.has("j"), await kv.has("nope")], missing: await kv.get("nope"),
            first: [first.keys.length, first.keys[0], first.cursor !== null],
            rest: [rest.keys.length, rest.keys[29], rest.cursor],
          };
        };"#,
    )
    .await;
    assert_eq!(
        json_of(&outcome),
        json!({
            "s": null, "j": {"a": [1, 2]}, "b": [0, 255], "has": [true, false], "missing": null,
            "first": [120, "item/000", true], "rest": [30, "item/149", null],
        })
    );
    let record = outcome.audit.iter().find(|r| r.target == "app/j").unwrap();
    assert_eq!(
        (record.capability.as_str(), record.rule.as_str()),
        ("kv", "kv.buckets.app")
    );
}

#[tokio::test]
async fn namespaces_never_see_each_other_even_with_hostile_keys() {
    let alpha = kv_policy("alpha", "");
    let beta = kv_policy("beta", "");
    let hostile = [
        "../beta/app/x",
        "beta\u{0}app\u{0}x",
        "/beta/app/x",
        "..",
        "x\u{0}",
        "beta",
        "app/../../beta/x",
    ];
    let keys = serde_json::to_string(&hostile).unwrap();
    let write = format!(
        "export default async () => {{ for (const k of {keys}) await kv.set(k, `alpha:${{k}}`); \
         return (await kv.list()).keys.length; }};"
    );
    assert_eq!(output(&run_kv(&alpha, &write).await), "7");
    let read = format!(
        "export default async () => {{ const seen = []; for (const k of {keys}) seen.push(await kv.get(k)); \
         return {{ seen, listed: (await kv.list()).keys, x: await kv.get(\"x\") }}; }};"
    );
    let from_beta = json_of(&run_kv(&beta, &read).await);
    assert_eq!(
        from_beta,
        json!({ "seen": [null, null, null, null, null, null, null], "listed": [], "x": null })
    );
    let from_alpha = json_of(&run_kv(&alpha, &read).await);
    assert_eq!(from_alpha["seen"][1], "alpha:beta\u{0}app\u{0}x");
    assert_eq!(from_alpha["listed"].as_array().unwrap().len(), 7);
}

/// How a kv call failed: `[name, rule, fix]`.
async fn refusal(policy: &Policy, body: &str) -> Value {
    let source = format!(
        "export default async () => {{ try {{ {body}; return \"no error\"; }} \
         catch (e) {{ return [e.name, e.rule ?? null, e.fix ?? null]; }} }};"
    );
    json_of(&run_kv(policy, &source).await)
}

#[tokio::test]
async fn quotas_and_modes_are_refused_with_their_rule() {
    let p = kv_policy(
        "quotas",
        "max_key = \"16B\"\nmax_value = \"32B\"\nmax_keys = 2",
    );
    assert_eq!(
        refusal(&p, "await kv.set(\"k\".repeat(17), \"v\")").await,
        json!(["PolicyDeniedError", "kv.max_key", "kv.max_key = \"32B\""])
    );
    assert_eq!(
        refusal(&p, "await kv.set(\"k\", \"v\".repeat(40))").await,
        json!([
            "PolicyDeniedError",
            "kv.max_value",
            "kv.max_value = \"64B\""
        ])
    );
    assert_eq!(
        refusal(&p, "await kv.set(\"a\", 1); await kv.set(\"b\", 2); await kv.set(\"a\", 3); await kv.set(\"c\", 4)").await,
        json!(["PolicyDeniedError", "kv.max_keys", "kv.max_keys = 4"])
    );
    assert_eq!(
        refusal(&p, "await kv.bucket(\"reference\").set(\"a\", 1)").await,
        json!([
            "PolicyDeniedError",
            "kv.buckets.reference",
            "kv.buckets.reference = \"rw\""
        ])
    );
    assert_eq!(
        refusal(&p, "await kv.bucket(\"secret-bucket\").get(\"a\")").await,
        json!([
            "PolicyDeniedError",
            "kv.buckets",
            "kv.buckets.secret-bucket = \"ro\""
        ])
    );
    // Uncaught, a refusal ends the call with policy_denied.
    let outcome = run_kv(
        &p,
        "export default () => kv.bucket(\"reference\").delete(\"a\")",
    )
    .await;
    assert_eq!(code(&outcome), "policy_denied");
    assert_eq!(
        output(
            &run_kv(
                &p,
                "export default async () => [await kv.getJSON(\"a\"), await kv.getJSON(\"b\")]"
            )
            .await
        ),
        "[3,2]"
    );
}

#[tokio::test]
async fn without_a_kv_table_kv_is_refused_with_the_fix() {
    // In the plain guest (no grant at all) and in the full guest (another grant).
    for p in [roomy(), policy("[config]\nregion = \"eu\"\n")] {
        assert_ungranted(
            &p,
            "kv.get('a')",
            "kv",
            "kv = { namespace = \"...\", buckets = { default = \"rw\" } }",
        )
        .await;
    }
    assert_ungranted(
        &roomy(),
        "kv.bucket('ref').set('a', '1')",
        "kv",
        "kv = { namespace = \"...\", buckets = { ref = \"rw\" } }",
    )
    .await;
}

#[tokio::test]
async fn acknowledged_writes_survive_a_process_restart() {
    let data = scratch_dir("kv-restart");
    let policy_file = data.join("kv.toml");
    std::fs::write(
        &policy_file,
        "[kv]\nnamespace = \"restart\"\n[kv.buckets]\napp = \"rw\"\ncounters = \"rw\"\n",
    )
    .unwrap();
    // Each writer sets 50 keys of its own, adds 1 to one shared counter 50 times with
    // `increment`, and 50 times to another through a compare-and-swap retry loop.
    let write = data.join("write.js");
    std::fs::write(
        &write,
        "export default async (n) => { await kv.set(\"n\", n); return n; };",
    )
    .unwrap();
    let read = data.join("read.js");
    std::fs::write(&read, "export default () => kv.getJSON(\"n\");").unwrap();
    let run = |script: &std::path::Path, input: &str| {
        let out = std::process::Command::new(crate::cli::palisade_bin())
            .args([
                "run",
                script.to_str().unwrap(),
                "--policy",
                policy_file.to_str().unwrap(),
            ])
            .args(["--input", input])
            .env("PALISADE_DATA_DIR", &data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(run(&write, "41").trim(), "41");
    // A second process, a second open of the store.
    assert_eq!(run(&read, "null").trim(), "41");
    assert!(data.join("kv.sqlite3").is_file());
}

#[tokio::test]
async fn an_acknowledged_write_survives_the_process_being_killed_mid_call() {
    let data = scratch_dir("kv-crash");
    let out = data.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let policy_file = data.join("crash.toml");
    std::fs::write(
        &policy_file,
        "[limits]\ntimeout = \"30s\"\nfuel = 1_000_000_000_000\n[kv]\nnamespace = \"crash\"\n\
         [kv.buckets]\napp = \"rw\"\n[[fs.mount]]\nhost = \"out\"\nguest = \"/out\"\nmode = \"rw\"\n",
    )
    .unwrap();
    let script = data.join("crash.js");
    std::fs::write(
        &script,
        "export default async () => { await kv.set(\"k\", \"acked\"); \
         await fs.writeFile(\"/out/acked\", \"1\"); for (;;) {} };",
    )
    .unwrap();
    let mut child = std::process::Command::new(crate::cli::palisade_bin())
        .args([
            "run",
            script.to_str().unwrap(),
            "--policy",
            policy_file.to_str().unwrap(),
        ])
        .env("PALISADE_DATA_DIR", &data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (at most 60 s) until the script has been told its write succeeded, then kill it.
    let marker = out.join("acked");
    for _ in 0..600 {
        if marker.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(marker.exists(), "the script never reached its marker");

    std::fs::write(data.join("read.js"), "export default () => kv.get(\"k\");").unwrap();
    let read = std::process::Command::new(crate::cli::palisade_bin())
        .args([
            "run",
            data.join("read.js").to_str().unwrap(),
            "--policy",
            policy_file.to_str().unwrap(),
        ])
        .env("PALISADE_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert_eq!(String::from_utf8(read.stdout).unwrap().trim(), r#""acked""#);
}

/// Ops pipelines run the CLI in parallel (`xargs -P`): twenty `palisade run` processes write one
/// store at once, 50 keys each, while a twenty-first lists the bucket again and again; every
/// process succeeds and every write is there afterwards.
#[test]
fn twenty_processes_share_one_store() {
    let data = scratch_dir("kv-processes");
    let policy_file = data.join("kv.toml");
    std::fs::write(
        &policy_file,
        "[limits]\ntimeout = \"60s\"\n[kv]\nnamespace = \"shared\"\nmax_keys = 2000\n[kv.buckets]\napp = \"rw\"\ncounters = \"rw\"\n",
    )
    .unwrap();
    // Each writer sets 50 keys of its own, adds 1 to one shared counter 50 times with
    // `increment`, and 50 times to another through a compare-and-swap retry loop.
    let write = data.join("write.js");
    std::fs::write(
        &write,
        "export default async (p) => { const c = kv.bucket(\"counters\"); \
         for (let i = 0; i < 50; i++) { await kv.set(`p${p}:${i}`, i); await c.increment(\"n\"); \
         for (;;) { const seen = await c.get(\"cas\"); \
         if (await c.compareAndSwap(\"cas\", seen, String(Number(seen ?? 0) + 1))) break; } } return p; };",
    )
    .unwrap();
    let list = data.join("list.js");
    std::fs::write(
        &list,
        "export default async (rounds) => { let seen = 0; for (let r = 0; r < rounds; r++) { \
         let cursor = null; let n = 0; do { const page = await kv.list({ cursor, limit: 1000 }); \
         n += page.keys.length; cursor = page.cursor; } while (cursor !== null); seen = n; } return seen; };",
    )
    .unwrap();
    let spawn = |script: &std::path::Path, input: String| {
        std::process::Command::new(crate::cli::palisade_bin())
            .args(["run", script.to_str().unwrap(), "--policy"])
            .arg(&policy_file)
            .args(["--input", &input])
            .env("PALISADE_DATA_DIR", &data)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let reader = spawn(&list, "20".into());
    let writers: Vec<_> = (0..20).map(|p| spawn(&write, p.to_string())).collect();
    for (p, child) in writers.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "writer {p}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), p.to_string());
    }
    let out = reader.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "reader: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = spawn(&list, "1".into()).wait_with_output().unwrap();
    assert!(
        total.status.success(),
        "{}",
        String::from_utf8_lossy(&total.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&total.stdout).trim(), "1000");
    let counters = data.join("counters.js");
    std::fs::write(
        &counters,
        "export default async () => { const c = kv.bucket(\"counters\"); \
         return [await c.getJSON(\"n\"), await c.getJSON(\"cas\")]; };",
    )
    .unwrap();
    let read = spawn(&counters, "null".into()).wait_with_output().unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&read.stdout).trim(), "[1000,1000]");
}

#[tokio::test]
async fn increment_and_compare_and_swap_are_atomic_and_checked() {
    let p = kv_policy("atomics", "max_key = \"16B\"\nmax_keys = 3");
    let outcome = run_kv(
        &p,
        r#"export default async () => {
          const a = await kv.increment("n");
          const b = await kv.increment("n", 41);
          const c = await kv.increment("n", 0);
          const stored = await kv.getJSON("n");
          const fresh = await kv.compareAndSwap("c", null, { v: 1 });
          const again = await kv.compareAndSwap("c", null, { v: 2 });
          const wrong = await kv.compareAndSwap("c", { v: 9 }, { v: 3 });
          const right = await kv.compareAndSwap("c", { v: 1 }, "text");
          const bytes = await kv.compareAndSwap("c", "text", new Uint8Array([7]));
          return [a, b, c, stored, fresh, again, wrong, right, bytes, [...await kv.getBytes("c")]];
        };"#,
    )
    .await;
    assert_eq!(
        json_of(&outcome),
        json!([1, 42, 42, 42, true, false, false, true, true, [7]])
    );
    let record = outcome.audit.iter().find(|r| r.target == "app/n").unwrap();
    assert_eq!(
        (record.capability.as_str(), record.rule.as_str()),
        ("kv", "kv.buckets.app")
    );
    // Refusals, each with its exact name, rule and fix.
    assert_eq!(
        refusal(
            &p,
            "await kv.set(\"s\", \"text\"); await kv.increment(\"s\")"
        )
        .await,
        json!(["KvError", null, null])
    );
    assert_eq!(
        refusal(&p, "await kv.increment(\"n\", -1)").await,
        json!(["TypeError", null, null])
    );
    assert_eq!(
        refusal(&p, "await kv.increment(\"n\", 2 ** 53)").await,
        json!(["TypeError", null, null])
    );
    assert_eq!(
        refusal(&p, "await kv.increment(\"n\", \"1\")").await,
        json!(["TypeError", null, null])
    );
    assert_eq!(
        refusal(&p, "await kv.compareAndSwap(\"n\", 42, undefined)").await,
        json!(["TypeError", null, null])
    );
    assert_eq!(
        refusal(&p, "await kv.increment(\"k\".repeat(17))").await,
        json!(["PolicyDeniedError", "kv.max_key", "kv.max_key = \"32B\""])
    );
    assert_eq!(
        refusal(&p, "await kv.bucket(\"reference\").increment(\"a\")").await,
        json!([
            "PolicyDeniedError",
            "kv.buckets.reference",
            "kv.buckets.reference = \"rw\""
        ])
    );
    assert_eq!(
        refusal(
            &p,
            "await kv.bucket(\"reference\").compareAndSwap(\"a\", null, 1)"
        )
        .await,
        json!([
            "PolicyDeniedError",
            "kv.buckets.reference",
            "kv.buckets.reference = \"rw\""
        ])
    );
    // n, c and s hold three keys, the maximum: a new key is refused, an existing one is not.
    assert_eq!(
        refusal(&p, "await kv.increment(\"new\")").await,
        json!(["PolicyDeniedError", "kv.max_keys", "kv.max_keys = 6"])
    );
    assert_eq!(
        refusal(&p, "await kv.compareAndSwap(\"new\", null, 1)").await,
        json!(["PolicyDeniedError", "kv.max_keys", "kv.max_keys = 6"])
    );
    assert_eq!(
        output(&run_kv(&p, "export default () => kv.increment(\"n\", 8)").await),
        "50"
    );
}

#[tokio::test]
async fn a_recorded_increment_replays_without_the_store() {
    let p = kv_policy("atomics-replay", "");
    let script = Script::new(
        "count.js",
        "export default async () => [await kv.increment(\"hits\", 5), \
         await kv.compareAndSwap(\"hits\", \"5\", 6)]",
    );
    let (first, transcript) = PALISADE.run_recorded(&p, &script, "null").await;
    assert_eq!(output(&first), "[5,true]");
    // The store moves on; the replay answers as the recording did.
    assert_eq!(
        output(&run_kv(&p, "export default () => kv.increment(\"hits\", 100)").await),
        "106"
    );
    let again = PALISADE.replay(&p, &script, &transcript).await;
    assert_eq!(output(&again), "[5,true]");
    assert_eq!(
        output(&run_kv(&p, "export default () => kv.getJSON(\"hits\")").await),
        "106"
    );
}

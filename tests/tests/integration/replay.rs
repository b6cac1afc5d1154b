//! Record and replay: a call that used the clock, randomness, fetch, kv and a capability runs
//! again from its transcript, with the upstream stopped and the store changed, to the same
//! output.

use crate::support::*;
use crate::upstream::Upstream;
use palisade::record::{HttpOutcome, Transcript};
use palisade::{Palisade, Policy, Script};
use serde_json::Value;
use std::sync::LazyLock;

static TAPED: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(8)
        .kv_path(scratch_dir("replay-kv").join("kv.sqlite3"))
        .capability("quote", |_| async {
            Ok(serde_json::json!({ "price": rand_price() }))
        })
        .build()
        .unwrap()
});

/// A different answer every time, so that only a replay can repeat it.
fn rand_price() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64
}

const SCRIPT: &str = r#"
export default async ({ url }) => {
  const [a, b] = await Promise.all([fetch(`${url}/api/hello`), fetch(`${url}/api/echo`, { method: "POST", body: "hi" })]);
  const visits = ((await kv.getJSON("visits")) ?? 0) + 1;
  await kv.set("visits", visits);
  const quote = await host.quote({});
  let denied = null;
  try { await fetch("http://169.254.169.254/latest/"); } catch (e) { denied = [e.name, e.rule]; }
  console.log("visit", visits);
  return {
    hello: await a.json(), echo: (await b.json()).body, visits, quote: quote.price,
    random: Math.random(), uuid: crypto.randomUUID(), now: Date.now(), denied,
  };
};
"#;

fn replay_policy(port: u16) -> Policy {
    policy(&format!(
        r#"
name = "replay-test"
[http]
allow_private = ["127.0.0.1/32", "::1/128"]
[[http.allow]]
url = "http://localhost:{port}/api/"
methods = ["GET", "POST"]
[kv]
namespace = "replay"
[kv.buckets]
app = "rw"
[capabilities.allow.quote]
"#
    ))
}

#[tokio::test]
async fn a_recorded_call_replays_to_the_same_output_without_the_network_or_store() {
    let up = Upstream::start().await;
    let port = up.port();
    let p = replay_policy(port);
    let script = Script::new("taped.js", SCRIPT);
    let input = format!(r#"{{"url":"http://localhost:{port}"}}"#);
    let (first, transcript) = TAPED.run_recorded(&p, &script, &input).await;
    let recorded: Value = serde_json::from_str(output(&first)).unwrap();
    assert_eq!(recorded["hello"]["hello"], "world");
    assert_eq!(recorded["denied"][1], "http.allow");
    assert_eq!(transcript.http.len(), 3);
    assert_eq!(transcript.capabilities.len(), 1);
    // The refusal's transcript entry is made from the same refusal as its audit record.
    let denied = transcript
        .http
        .iter()
        .find(|e| e.outcome == HttpOutcome::Denied)
        .unwrap();
    assert_eq!(denied.target, "http://169.254.169.254/latest/");
    assert_eq!(denied.rule.as_deref(), Some("http.allow"));
    assert_eq!(
        denied.fix.as_deref(),
        Some("[[http.allow]] url = \"http://169.254.169.254/latest/\"")
    );
    let audited = first.audit.iter().find(|r| r.rule == "http.allow").unwrap();
    assert_eq!(audited.target, denied.target);

    // The transcript survives a trip through JSON, as `--record` writes it.
    let transcript: Transcript =
        serde_json::from_str(&serde_json::to_string(&transcript).unwrap()).unwrap();

    // Stop the upstream and change the store: a live run could not give the same answers.
    drop(up);
    let bump = TAPED
        .run(
            &p,
            &Script::new("bump.js", "export default () => kv.set(\"visits\", 1000)"),
            "null",
        )
        .await;
    output(&bump);

    let again = TAPED.replay(&p, &script, &transcript).await;
    assert_eq!(output(&again), output(&first));
    assert_eq!(again.logs, first.logs);

    // A live run now differs: another visit count, another quote, another random number.
    let live: Value = serde_json::from_str(output(
        &TAPED
            .run(
                &p,
                &Script::new(
                    "live.js",
                    "export default async () => kv.getJSON(\"visits\")",
                ),
                "null",
            )
            .await,
    ))
    .unwrap();
    assert_eq!(live, 1000);
}

#[tokio::test]
async fn the_cli_records_and_replays() {
    let up = Upstream::start().await;
    let port = up.port();
    let dir = scratch_dir("replay-cli");
    std::fs::write(
        dir.join("policy.toml"),
        format!(
            "[http]\nallow_private = [\"127.0.0.1/32\", \"::1/128\"]\n[[http.allow]]\nurl = \"http://localhost:{port}/api/\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("app.js"),
        "export default async (n) => ({ n, hello: await (await fetch(`http://localhost:PORT/api/hello`)).json(), r: Math.random() });"
            .replace("PORT", &port.to_string()),
    )
    .unwrap();
    // The child process runs on the blocking pool, so that this runtime keeps serving the
    // upstream it talks to.
    let cli = |args: &'static [&'static str]| {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || {
            let out = std::process::Command::new(crate::cli::palisade_bin())
                .args(args)
                .current_dir(&dir)
                .env("PALISADE_DATA_DIR", &dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        })
    };
    let first = cli(&[
        "run",
        "app.js",
        "--policy",
        "policy.toml",
        "--input",
        "7",
        "--record",
        "t.json",
    ])
    .await
    .unwrap();
    drop(up);
    let again = cli(&[
        "run",
        "app.js",
        "--policy",
        "policy.toml",
        "--replay",
        "t.json",
    ])
    .await
    .unwrap();
    assert_eq!(first, again);
    assert!(first.contains("\"world\""), "{first}");
}

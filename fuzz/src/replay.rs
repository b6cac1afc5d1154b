//! `replay`: arbitrary bytes as a transcript for `palisade run --replay`. Read as the CLI
//! reads one (JSON into `palisade::record::Transcript`, a refusal being a usage error), then
//! replayed against a script that reads the clocks, draws random numbers, fetches and uses the
//! key-value store: a typed error with a documented code, or a replay; never a panic, never
//! `internal`, never a hang (the policy's timeout bounds the call).

use palisade::record::Transcript;
use palisade::{Policy, Script};
use std::sync::OnceLock;

/// The policy the replays run under: the network and the store granted, a short deadline.
pub const POLICY: &str = r#"
name = "fuzz-replay"
[limits]
timeout = "2s"
[http]
[[http.allow]]
url = "https://api.example.com/v1/"
methods = ["GET", "POST"]
[kv]
namespace = "fuzz-replay"
[kv.buckets]
app = "rw"
"#;

/// The script: one of each recorded answer.
pub const SCRIPT: &str = r#"
export default async (input) => {
  const out = { now: Date.now(), perf: performance.now(), random: Math.random() };
  const bytes = new Uint8Array(4);
  crypto.getRandomValues(bytes);
  out.bytes = Array.from(bytes);
  try {
    const response = await fetch("https://api.example.com/v1/items", { method: "POST", body: "x" });
    out.status = response.status;
    out.body = await response.text();
  } catch (e) {
    out.fetch = `${e.name}: ${e.message}`;
  }
  try {
    await kv.set("k", input);
    out.kv = await kv.get("k");
  } catch (e) {
    out.kv = `${e.name}: ${e.message}`;
  }
  return out;
};
"#;

fn setup() -> &'static (Policy, Script) {
    static SETUP: OnceLock<(Policy, Script)> = OnceLock::new();
    SETUP.get_or_init(|| {
        (
            Policy::from_toml(POLICY, None).expect("the replay policy is valid"),
            Script::new("replayed.js", SCRIPT),
        )
    })
}

pub fn check(data: &[u8]) {
    let (policy, script) = setup();
    if data.len() as u64 > policy.limits().transcript.0 {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(transcript) = serde_json::from_str::<Transcript>(text) else {
        // The CLI's usage error: "… is not a transcript".
        return;
    };
    let outcome = crate::runtime().block_on(crate::palisade().replay(policy, script, &transcript));
    if let Err(e) = &outcome.result {
        assert!(
            crate::is_documented_code(e.code()),
            "a replay ended {}: {e}\ntranscript: {text}",
            e.code()
        );
    }
}

//! What a key-value transaction costs (`RunOptions::kv_transaction`): one kv-heavy call, 100
//! increments of one counter, 100 sets and a list, measured directly (every write its own
//! synced SQLite transaction) and under a transaction (nothing stored), and the apply of its
//! writes (one transaction). Rounds alternate the two forms so that a machine whose speed drifts
//! affects both alike. docs/bench.md quotes the figures.
//!
//! ```sh
//! cargo run -p palisade --example kv_transaction -- [ROUNDS]   # default 40
//! ```

use palisade::{Outcome, Palisade, Policy, RunOptions, Script};
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"export default async () => {
  let n = 0;
  for (let i = 0; i < 100; i++) n = await kv.increment("hits");
  for (let i = 0; i < 100; i++) await kv.set(`k${i}`, i);
  return [n, (await kv.list({ limit: 1000 })).keys.length];
};"#;

/// Median and largest of `times`, in milliseconds.
fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "median {:8.2} ms   max {:8.2} ms",
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    )
}

fn checked(outcome: &Outcome) -> u64 {
    if let Err(error) = &outcome.result {
        panic!("the call failed: {}: {error}", error.code());
    }
    outcome.receipt.fuel_used
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(40, |n| n.parse().expect("ROUNDS is a number"));
    let dir = std::env::temp_dir().join(format!("palisade-kv-tx-{}", std::process::id()));
    let palisade = Palisade::builder()
        .kv_path(dir.join("kv.sqlite3"))
        .build()
        .expect("Palisade starts");
    let policy = Policy::from_toml(
        "[limits]\ntimeout = \"30s\"\n[kv]\nnamespace = \"bench\"\n[kv.buckets]\napp = \"rw\"\n",
        None,
    )
    .expect("the policy is valid");
    let script = Script::new("kv-heavy.js", SCRIPT);
    let direct = RunOptions::default();
    let transaction = RunOptions::default().kv_transaction();
    let (mut plain, mut held, mut applied) = (Vec::new(), Vec::new(), Vec::new());
    let (mut plain_fuel, mut held_fuel) = (0, 0);
    // One call of each first, unmeasured: the compile cache, the store's file.
    for options in [&direct, &transaction] {
        checked(&palisade.run_with(&policy, &script, "null", options).await);
    }
    for _ in 0..rounds {
        let started = Instant::now();
        plain_fuel = checked(&palisade.run_with(&policy, &script, "null", &direct).await);
        plain.push(started.elapsed());
        let started = Instant::now();
        let outcome = palisade
            .run_with(&policy, &script, "null", &transaction)
            .await;
        held.push(started.elapsed());
        held_fuel = checked(&outcome);
        let started = Instant::now();
        let writes = outcome.kv_writes.expect("a transaction's writes");
        palisade.apply_kv(writes).await.expect("the apply");
        applied.push(started.elapsed());
    }
    println!("{rounds} rounds of 100 increments, 100 sets and a list:");
    println!(
        "  direct           {}   fuel {plain_fuel}",
        summary(&mut plain)
    );
    println!(
        "  transaction      {}   fuel {held_fuel}",
        summary(&mut held)
    );
    println!("  apply its writes {}", summary(&mut applied));
    drop(palisade);
    let _ = std::fs::remove_dir_all(dir);
}

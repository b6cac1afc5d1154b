//! `palisade bench --live`: what a live session costs (docs/sessions.md): a hot call against a
//! fresh one, with a small and a 16 MiB heap (each live call ends by taking the image a failed
//! next call rolls back to), waking a 16 MiB heap from its file, forking it, hibernating it.

use super::measure::us;
use palisade::{LiveSession, Palisade, Policy, Script};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// A heap of about 16 MiB of data that does not compress to nothing: a string per row.
const SIXTEEN_MIB: &str = "globalThis.rows = []; \
    for (let i = 0; i < 160000; i++) rows.push({ id: i, name: 'row ' + i * 7919, v: i % 97 }); \
    rows.length";

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn timed<F: AsyncFnMut()>(n: usize, mut f: F) -> Duration {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        f().await;
        samples.push(started.elapsed());
    }
    median(samples)
}

async fn ok(live: &mut LiveSession, source: &str) -> Result<(), String> {
    let outcome = live.run("bench.js", source, "null").await;
    outcome.result.map(drop).map_err(|e| e.to_string())
}

/// Print the live figures, `calls` samples each (a tenth of them for the 16 MiB ones).
pub(super) async fn live(palisade: &Palisade, calls: usize) -> Result<(), ExitCode> {
    let report = |e: String| {
        eprintln!("palisade bench --live: {e}");
        ExitCode::FAILURE
    };
    let policy = Policy::from_toml(
        "name = \"live\"\n[limits]\ntimeout = \"10s\"\nmemory = \"256MiB\"\n",
        None,
    )
    .map_err(|e| report(e.to_string()))?;
    let fresh_script = Script::new("fresh.js", "export default () => 1");
    let fresh = timed(calls, async || {
        let _ = palisade.run(&policy, &fresh_script, "null").await;
    })
    .await;
    let mut live = palisade
        .live_session(&policy)
        .await
        .map_err(|e| report(e.to_string()))?;
    ok(&mut live, "let n = 0; n").await.map_err(report)?;
    let hot_small = timed(calls, async || {
        let _ = live.run("step.js", "n += 1", "null").await;
    })
    .await;
    ok(&mut live, SIXTEEN_MIB).await.map_err(report)?;
    let big = (calls / 10).max(5);
    let hot_big = timed(big, async || {
        let _ = live.run("step.js", "n += 1", "null").await;
    })
    .await;
    let heap = live.heap();
    let hibernate = timed(big, async || drop(live.image())).await;
    let file = live.image();
    let wake = timed(big, async || {
        let mut woken = palisade
            .wake_live_session(&policy, &file)
            .await
            .expect("wakes");
        woken.warm().await.expect("restores");
    })
    .await;
    let fork = timed(big, async || {
        let mut fork = live.fork();
        fork.warm().await.expect("restores");
    })
    .await;
    println!("live sessions (median of {calls} calls; 16 MiB rows: {big})");
    println!(
        "  fresh call, `export default () => 1`        {:>9.1} µs",
        us(fresh)
    );
    println!(
        "  live call, hot, small heap (`n += 1`)       {:>9.1} µs",
        us(hot_small)
    );
    println!(
        "  live call, hot, {:.1} MiB heap ({} changed blocks) {:>9.1} µs",
        heap.memory_bytes as f64 / 1048576.0,
        heap.changed_blocks,
        us(hot_big)
    );
    println!(
        "  hibernate (encode, zstd) that heap          {:>9.1} µs ({} bytes)",
        us(hibernate),
        file.len()
    );
    println!(
        "  wake that heap (check, decompress, restore) {:>9.1} µs",
        us(wake)
    );
    println!(
        "  fork that heap and restore the fork         {:>9.1} µs",
        us(fork)
    );
    Ok(())
}

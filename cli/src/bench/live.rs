//! `palisade bench --live`: what a live session costs (docs/sessions.md), against the targets of
//! its design: a hot step against a fresh call, the image update that protects every step
//! (rollback) alone, and hibernating, waking and forking a heap of 16 MiB of rows.

use super::measure::us;
use palisade::{LiveSession, Palisade, Policy, Script};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Rows that bring the heap's changed blocks to about 16 MiB, strings that do not compress to
/// nothing.
const SIXTEEN_MIB: &str = "globalThis.rows = []; \
    for (let i = 0; i < 100000; i++) rows.push({ id: i, name: 'row ' + i * 7919, v: i % 97 }); \
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

/// A hot step and the image update alone, on the session's heap as it is.
struct Hot {
    step: Duration,
    checkpoint: Duration,
}

async fn hot(live: &mut LiveSession, n: usize) -> Hot {
    let step = timed(n, async || {
        let _ = live.run("step.js", "n += 1", "null").await;
    })
    .await;
    let checkpoint = timed(n, async || {
        live.checkpoint().await.expect("the image updates");
    })
    .await;
    Hot { step, checkpoint }
}

/// Hibernating, waking and forking the session's heap.
struct Cold {
    bytes: usize,
    hibernate: Duration,
    wake: Duration,
    /// The wake without its restore: the file checked and the image mapped.
    wake_checked: Duration,
    /// The wake and a first step on it, whose image update reads the mapped pages.
    wake_step: Duration,
    wake_bytes: Duration,
    fork: Duration,
    fork_restored: Duration,
}

async fn cold(palisade: &Palisade, policy: &Policy, live: &LiveSession, n: usize) -> Cold {
    let hibernate = timed(n, async || drop(live.image())).await;
    let bytes = live.image();
    // The server's wake: from the session's file (here in the page cache, just written).
    let path = std::env::temp_dir().join(format!("palisade-bench-heap-{}", std::process::id()));
    std::fs::write(&path, &bytes).expect("the heap file is written");
    let file = std::fs::File::open(&path).expect("the heap file opens");
    let wake = timed(n, async || {
        let mut woken = palisade
            .wake_live_session_file(policy, &file)
            .await
            .expect("wakes");
        woken.warm().await.expect("restores");
    })
    .await;
    let wake_checked = timed(n, async || {
        let woken = palisade.wake_live_session_file(policy, &file).await;
        drop(woken.expect("wakes"));
    })
    .await;
    let wake_step = timed(n, async || {
        let woken = palisade.wake_live_session_file(policy, &file).await;
        ok(&mut woken.expect("wakes"), "n += 1")
            .await
            .expect("runs");
    })
    .await;
    drop(file);
    let _ = std::fs::remove_file(&path);
    let wake_bytes = timed(n, async || {
        let mut woken = palisade
            .wake_live_session(policy, &bytes)
            .await
            .expect("wakes");
        woken.warm().await.expect("restores");
    })
    .await;
    let fork = timed(n, async || drop(live.fork())).await;
    let fork_restored = timed(n, async || {
        let mut fork = live.fork();
        fork.warm().await.expect("restores");
    })
    .await;
    Cold {
        bytes: bytes.len(),
        hibernate,
        wake,
        wake_checked,
        wake_step,
        wake_bytes,
        fork,
        fork_restored,
    }
}

impl Cold {
    fn print(&self, line: impl Fn(&str, Duration)) {
        let hibernate = format!("hibernate that heap to a file of {} bytes", self.bytes);
        line(&hibernate, self.hibernate);
        line(
            "wake that heap from its file (check, map, restore)",
            self.wake,
        );
        line(
            "  of which the check and the image's mapping",
            self.wake_checked,
        );
        line(
            "wake that heap from its file and run a step",
            self.wake_step,
        );
        line(
            "wake that heap from bytes in memory (check, copy, restore)",
            self.wake_bytes,
        );
        line("fork that heap (a session sharing its image)", self.fork);
        line(
            "fork that heap and restore the fork (its first step)",
            self.fork_restored,
        );
    }
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
    let small = hot(&mut live, calls).await;
    let small_heap = live.heap();
    ok(&mut live, SIXTEEN_MIB).await.map_err(report)?;
    let n = (calls / 10).max(5);
    let big = hot(&mut live, n).await;
    let heap = live.heap();
    let cold = cold(palisade, &policy, &live, n).await;
    let mib = |bytes: u64| bytes as f64 / 1048576.0;
    let line = |what: &str, d: Duration| println!("  {what:<58} {:>9.1} µs", us(d));
    println!("live sessions (median of {calls} calls; on the 16 MiB heap, {n})");
    line("fresh call, `export default () => 1`", fresh);
    let small_what = format!(
        "hot step `n += 1`, {:.1} MiB memory",
        mib(small_heap.memory_bytes)
    );
    line(&small_what, small.step);
    line(
        "  of which the image update (rollback protection)",
        small.checkpoint,
    );
    let big_what = format!(
        "hot step, {:.1} MiB memory, {:.1} MiB of changed blocks",
        mib(heap.memory_bytes),
        mib(heap.changed_blocks as u64 * 4096)
    );
    line(&big_what, big.step);
    line(
        "  of which the image update (rollback protection)",
        big.checkpoint,
    );
    cold.print(line);
    println!("targets (docs/sessions.md)");
    let resume = small.step.saturating_sub(small.checkpoint);
    let ratio = |part: Duration, of: Duration| 100.0 * part.as_secs_f64() / of.as_secs_f64();
    println!(
        "  hot resume (hot step without its image update) {:>9.1} µs (target 20 µs)",
        us(resume)
    );
    println!(
        "  rollback protection (the image update), {:.1} MiB memory: {:.0}% of a fresh call (target 10%)",
        mib(small_heap.memory_bytes),
        ratio(small.checkpoint, fresh),
    );
    println!(
        "  wake of the 16 MiB heap {:>9.2} ms (target 2 ms); fork {:.1} µs, restored {:.2} ms (target 1 ms)",
        us(cold.wake) / 1e3,
        us(cold.fork),
        us(cold.fork_restored) / 1e3
    );
    Ok(())
}

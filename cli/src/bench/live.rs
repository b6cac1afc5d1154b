//! `palisade bench --live`: what a live session costs (docs/sessions.md), against the targets of
//! its design: a hot step against a fresh call, the same step without rollback protection (what
//! protection costs is the difference), and hibernating, waking and forking a heap of 16 MiB of rows.

use super::measure::us;
use palisade::{HeapImage, LiveSession, Palisade, Policy, Protection, Script};
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

/// A hot step as sessions run it (the pages the kernel reports written copied to the image),
/// with the whole heap compared instead, and without rollback protection (the image left as it
/// was), on the session's heap as it is: the differences are what protection costs a step, its
/// page faults included (the first write to each protected page).
struct Hot {
    tracked: Duration,
    compared: Duration,
    unprotected: Duration,
    /// Whether the kernel tracked the writes (else `tracked` compared too).
    kernel: bool,
}

async fn hot(live: &mut LiveSession, n: usize) -> Result<Hot, String> {
    // Alternating rounds, so that no way has the machine's quieter moments alone.
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    let ways = [Protection::Off, Protection::Compared, Protection::Tracked];
    for _ in 0..5 {
        for (way, samples) in ways.iter().zip(samples.iter_mut()) {
            live.set_protection(*way).await.map_err(|e| e.to_string())?;
            let step = async || drop(live.run("step.js", "n += 1", "null").await);
            samples.push(timed(n.div_ceil(5), step).await);
        }
    }
    let kernel = live.writes_tracked().unwrap_or(false);
    let [unprotected, compared, tracked] = samples.map(median);
    Ok(Hot {
        tracked,
        compared,
        unprotected,
        kernel,
    })
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
    /// Compressing the heap file, as a hibernating session's is, and its length compressed.
    compress: Duration,
    packed_bytes: usize,
    /// The wake from the compressed file (decompress, check, copy, restore).
    wake_packed: Duration,
    /// The fork of a heap of its own, which freezes it.
    fork_own: Duration,
    fork: Duration,
    fork_restored: Duration,
}

async fn cold(palisade: &Palisade, policy: &Policy, live: &mut LiveSession, n: usize) -> Cold {
    let hibernate = timed(n, async || drop(live.image())).await;
    let bytes = live.image();
    // The server's wake: from the session's file (here in the page cache, just written).
    let (wake, wake_checked, wake_step) = in_file("heap", &bytes, async |file| {
        let wake = woken(palisade, policy, file, n).await;
        let wake_checked = timed(n, async || {
            let woken = palisade.wake_live_session_file(policy, file).await;
            drop(woken.expect("wakes"));
        })
        .await;
        let wake_step = timed(n, async || {
            let woken = palisade.wake_live_session_file(policy, file).await;
            ok(&mut woken.expect("wakes"), "n += 1")
                .await
                .expect("runs");
        })
        .await;
        (wake, wake_checked, wake_step)
    })
    .await;
    let wake_bytes = timed(n, async || {
        let mut woken = palisade
            .wake_live_session(policy, &bytes)
            .await
            .expect("wakes");
        woken.warm().await.expect("restores");
    })
    .await;
    // What a server does to an idle session's file, and the wake from it.
    let compress = timed(n, async || {
        drop(HeapImage::compress(&bytes).expect("compresses"));
    })
    .await;
    let packed = HeapImage::compress(&bytes).expect("compresses");
    let wake_packed = in_file("packed", &packed, async |file| {
        woken(palisade, policy, file, n).await
    })
    .await;
    let fork_own = fork_own(palisade, policy, n.min(9)).await;
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
        compress,
        packed_bytes: packed.len(),
        wake_packed,
        fork_own,
        fork,
        fork_restored,
    }
}

/// `f` given `bytes` written to a temporary file (in the page cache, as a file just written
/// is), removed after.
async fn in_file<T>(name: &str, bytes: &[u8], f: impl AsyncFnOnce(&std::fs::File) -> T) -> T {
    let path = std::env::temp_dir().join(format!("palisade-bench-{name}-{}", std::process::id()));
    std::fs::write(&path, bytes).expect("the heap file is written");
    let file = std::fs::File::open(&path).expect("the heap file opens");
    let out = f(&file).await;
    drop(file);
    let _ = std::fs::remove_file(&path);
    out
}

/// A wake from the heap file `file` and its restore (what a server's first step on a cooled
/// session does before it runs).
async fn woken(palisade: &Palisade, policy: &Policy, file: &std::fs::File, n: usize) -> Duration {
    timed(n, async || {
        let mut woken = palisade
            .wake_live_session_file(policy, file)
            .await
            .expect("wakes");
        woken.warm().await.expect("restores");
    })
    .await
}

/// The fork of a heap of its own (a session whose memory grew to the 16 MiB heap, in a memfd
/// of its own), which freezes it: the fork alone timed, a fresh session each time.
async fn fork_own(palisade: &Palisade, policy: &Policy, n: usize) -> Duration {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let mut grown = palisade.live_session(policy).await.expect("a live session");
        ok(&mut grown, SIXTEEN_MIB).await.expect("the rows");
        let started = Instant::now();
        let fork = grown.fork();
        samples.push(started.elapsed());
        drop((fork, grown));
    }
    median(samples)
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
        let compress = format!("compress that file (idle), to {} bytes", self.packed_bytes);
        line(&compress, self.compress);
        line(
            "wake that heap from its compressed file (decompress, copy)",
            self.wake_packed,
        );
        line(
            "fork such a heap, grown in its session (its memfd frozen)",
            self.fork_own,
        );
        line("fork that heap (a session sharing its image)", self.fork);
        line(
            "fork that heap and restore the fork (its first step)",
            self.fork_restored,
        );
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

fn line(what: &str, d: Duration) {
    println!("  {what:<58} {:>9.1} µs", us(d));
}

/// The hot figures, and what they are measured on.
struct Figures {
    fresh: Duration,
    /// A new live session and its first step.
    started: Duration,
    small: Hot,
    small_heap: palisade::HeapInfo,
    big: Hot,
    heap: palisade::HeapInfo,
}

impl Figures {
    fn print_hot(&self) {
        line("fresh call, `export default () => 1`", self.fresh);
        line(
            "a new live session and its first step `let n = 0`",
            self.started,
        );
        let small_what = format!(
            "hot step `n += 1`, {:.1} MiB memory",
            mib(self.small_heap.memory_bytes)
        );
        self.small.print(&small_what);
        let big_what = format!(
            "hot step, {:.1} MiB memory, {:.1} MiB of changed blocks",
            mib(self.heap.memory_bytes),
            mib(self.heap.changed_blocks as u64 * 4096)
        );
        self.big.print(&big_what);
    }

    fn print_targets(&self) {
        let Figures {
            fresh,
            started: _,
            small,
            small_heap,
            big,
            heap,
        } = self;
        println!("targets (docs/sessions.md)");
        let ratio = |part: Duration, of: Duration| 100.0 * part.as_secs_f64() / of.as_secs_f64();
        println!(
            "  hot resume (a hot step without protection) {:>9.1} µs (target 20 µs)",
            us(small.unprotected)
        );
        for (hot, memory) in [(&small, small_heap.memory_bytes), (&big, heap.memory_bytes)] {
            for (how, with) in [
                ("the pages written", hot.tracked),
                ("the heap compared", hot.compared),
            ] {
                let cost = with.saturating_sub(hot.unprotected);
                println!(
                    "  rollback protection, {how}, {:.1} MiB memory: {:.1} µs, {:.0}% of a fresh call (target 10%)",
                    mib(memory),
                    us(cost),
                    ratio(cost, *fresh),
                );
            }
        }
    }
}

impl Hot {
    fn print(&self, what: &str) {
        line(what, self.tracked);
        if !self.kernel {
            println!("    (this kernel tracks no writes: that step compared the heap too)");
        }
        line("  the same step, the whole heap compared", self.compared);
        line(
            "  the same step without rollback protection",
            self.unprotected,
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
    let n = (calls / 10).max(5);
    let started = timed(n, async || {
        let mut live = palisade
            .live_session(&policy)
            .await
            .expect("a live session");
        ok(&mut live, "let n = 0; n").await.expect("a first step");
    })
    .await;
    let mut live = palisade
        .live_session(&policy)
        .await
        .map_err(|e| report(e.to_string()))?;
    ok(&mut live, "let n = 0; n").await.map_err(report)?;
    let small = hot(&mut live, calls).await.map_err(report)?;
    let small_heap = live.heap();
    ok(&mut live, SIXTEEN_MIB).await.map_err(report)?;
    let big = hot(&mut live, n).await.map_err(report)?;
    let heap = live.heap();
    let cold = cold(palisade, &policy, &mut live, n).await;
    println!("live sessions (median of {calls} calls; new sessions and on the 16 MiB heap, {n})");
    let figures = Figures {
        fresh,
        started,
        small,
        small_heap,
        big,
        heap,
    };
    figures.print_hot();
    cold.print(line);
    figures.print_targets();
    println!(
        "  wake of the 16 MiB heap {:>9.2} ms (target 2 ms); fork {:.1} µs, restored {:.2} ms (target 1 ms)",
        us(cold.wake) / 1e3,
        us(cold.fork),
        us(cold.fork_restored) / 1e3
    );
    Ok(())
}

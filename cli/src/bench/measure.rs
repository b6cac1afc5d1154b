//! Timing the workloads: one call at a time, under load, in a new process, and memory in flight.

use super::{BenchArgs, Workload};
use palisade::{Palisade, Policy, Script};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub(super) fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Median, p99, rate and fuel of one workload run `calls` times, one call at a time.
pub(super) struct Measured {
    pub(super) median: Duration,
    pub(super) p99: Duration,
    pub(super) calls_per_s: f64,
    pub(super) fuel: u64,
}

/// The rate of one throughput run, and what it cost the process's CPUs.
#[derive(Clone, Copy, Default)]
pub(super) struct Rate {
    pub(super) calls_per_s: f64,
    /// CPU time of every thread of the process per call (user and system), in µs; None where
    /// the process's CPU time cannot be read.
    pub(super) cpu_us_per_call: Option<f64>,
}

/// Calls per second of `workload`, five times its calls of a round (`calls_for`) spread over
/// `--concurrency` tasks, and the CPU time they took.
pub(super) fn throughput(
    rt: &tokio::runtime::Runtime,
    palisade: &Arc<Palisade>,
    policy: &Policy,
    workload: &Workload,
    args: &BenchArgs,
) -> Rate {
    let tasks = args.concurrency.max(1);
    let per_task = calls_for(workload, args.calls) * 5 / tasks;
    let cpu = process_cpu();
    let started = Instant::now();
    rt.block_on(async {
        let running: Vec<_> = (0..tasks)
            .map(|_| {
                let (palisade, policy, script, input) = (
                    palisade.clone(),
                    policy.clone(),
                    workload.script.clone(),
                    workload.input.clone(),
                );
                let name = workload.name.clone();
                tokio::spawn(async move {
                    for _ in 0..per_task {
                        let outcome = palisade.run(&policy, &script, &input).await;
                        assert!(outcome.result.is_ok(), "{name} failed under load");
                    }
                })
            })
            .collect();
        for task in running {
            task.await.expect("bench task");
        }
    });
    let calls = (per_task * tasks) as f64;
    let seconds = started.elapsed().as_secs_f64();
    let cpu_us_per_call = cpu
        .zip(process_cpu())
        .map(|(before, after)| us(after.saturating_sub(before)) / calls);
    Rate {
        calls_per_s: calls / seconds,
        cpu_us_per_call,
    }
}

/// The CPU time every thread of this process has used (user and system): the clock
/// `CLOCK_PROCESS_CPUTIME_ID`, to the nanosecond. None off Linux with glibc (the only targets
/// with `libc` among the CLI's dependencies).
fn process_cpu() -> Option<Duration> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock_gettime` writes one `timespec` into `now`, which lives for the call.
        #[allow(unsafe_code)]
        let read = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &raw mut now) };
        let seconds = u64::try_from(now.tv_sec).ok()?;
        let nanos = u32::try_from(now.tv_nsec).ok()?;
        (read == 0).then(|| Duration::new(seconds, nanos))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Calls measured per round: w3, which is 100× heavier, runs a tenth of them.
pub(super) fn calls_for(w: &Workload, calls: usize) -> usize {
    if w.name == "w3" {
        (calls / 10).max(10)
    } else {
        calls
    }
}

pub(super) fn measure(
    rt: &tokio::runtime::Runtime,
    palisade: &Palisade,
    policy: &Policy,
    w: &Workload,
    calls: usize,
) -> Result<Measured, String> {
    let warmup = (calls / 10).max(5);
    let mut times = Vec::with_capacity(calls);
    let mut fuel = 0;
    for i in 0..warmup + calls {
        let started = Instant::now();
        let outcome = rt.block_on(palisade.run(policy, &w.script, &w.input));
        let elapsed = started.elapsed();
        let output = outcome
            .result
            .map_err(|e| format!("{} failed: {}: {e}", w.name, e.code()))?;
        let got: serde_json::Value = serde_json::from_str(output.get()).expect("output is JSON");
        if got != w.expected {
            return Err(format!(
                "{} returned {got}, expected {}",
                w.name, w.expected
            ));
        }
        if i >= warmup {
            times.push(elapsed);
            fuel = outcome.receipt.fuel_used;
        }
    }
    let total: Duration = times.iter().sum();
    times.sort();
    Ok(Measured {
        median: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
        calls_per_s: calls as f64 / total.as_secs_f64(),
        fuel,
    })
}

/// Median and mean wall time of `palisade run examples/hello.js` in a new process (this
/// binary, its compiled-guest cache warm after the first run).
pub(super) fn one_shot(runs: usize) -> Result<(Duration, Duration), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs + 2 {
        let started = Instant::now();
        let out = std::process::Command::new(&exe)
            .args(["run", "examples/hello.js", "--input", r#"{"name":"bench"}"#])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        if !out.success() {
            return Err(format!("palisade run examples/hello.js exited with {out}"));
        }
        if i >= 2 {
            times.push(elapsed);
        }
    }
    let mean = times.iter().sum::<Duration>() / runs as u32;
    times.sort();
    Ok((percentile(&times, 0.5), mean))
}

/// This process's resident memory, from /proc (Linux).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Resident bytes per call while `n` calls wait on a host capability at once: (per call,
/// before, peak).
pub(super) fn in_flight_memory(
    rt: &tokio::runtime::Runtime,
    n: usize,
) -> Result<(f64, u64, u64), String> {
    let palisade = Palisade::builder()
        .max_concurrency(n as u32)
        .capability("wait", |_| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(serde_json::Value::Null)
        })
        .build()
        .map_err(|e| e.to_string())?;
    let policy = Policy::from_toml(
        "name = \"in-flight\"\n[limits]\ntimeout = \"30s\"\n[capabilities.allow.wait]\n",
        None,
    )
    .map_err(|e| e.to_string())?;
    let script = Script::new(
        "wait.js",
        "export default async () => { await host.wait({}); return 1; };",
    );
    // One call first, so that engine, caches and pools are set up before the baseline.
    let warm = rt.block_on(palisade.run(&policy, &script, "null"));
    warm.result.map_err(|e| e.to_string())?;
    let base = resident_bytes().ok_or("no /proc/self/status")?;
    let palisade = Arc::new(palisade);
    let peak = rt.block_on(async {
        let tasks: Vec<_> = (0..n)
            .map(|_| {
                let (palisade, policy, script) = (palisade.clone(), policy.clone(), script.clone());
                tokio::spawn(async move { palisade.run(&policy, &script, "null").await })
            })
            .collect();
        let mut peak = 0;
        for _ in 0..8 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            peak = peak.max(resident_bytes().unwrap_or(0));
        }
        for task in tasks {
            let outcome = task.await.map_err(|e| e.to_string())?;
            outcome.result.map_err(|e| format!("{}: {e}", e.code()))?;
        }
        Ok::<_, String>(peak)
    })?;
    Ok((peak.saturating_sub(base) as f64 / n as f64, base, peak))
}

//! Usage: cargo run --release -p palisade-bindings --example drive -- [WORKLOAD] [CALLS]
//!
//! A workload's throughput through the bindings' core, driven from a plain Rust thread as
//! Node's thread and an asyncio loop drive it, with no JavaScript or Python: 64 calls in
//! flight (`start`), each outcome written as Node's addon writes it (`outcome_parts` into a
//! buffer of the runtime thread's own, then copied into the batch), the reports taken in
//! batches ([`Reports`]) whose buffers are handed back, and each batch starting as many calls
//! again. The workload's module and input come from bench/workloads/, the policy is
//! `palisade bench`'s, and the input is given as its JSON text. Each run's first output is
//! checked, as Node's and Python's benches check theirs; a call that fails stops the driver.
//! Prints one JSON line as bindings/node/bench.js does: calls/s and the process's CPU µs a call
//! (bench/bindings.sh puts it beside the library and the bindings: docs/bench.md, "What two
//! CPUs show").

use palisade_bindings::{Call, Reports, Start, build_with, outcome_parts, start};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 64;
/// `palisade bench`'s policy (cli/src/bench.rs).
const POLICY: &str =
    "name = \"bench\"\n[limits]\nfuel = 10_000_000_000\ntimeout = \"10s\"\nmemory = \"64MiB\"\n";
/// Calls made before the measured run, to fill the instance pool and the caches.
const WARM_UP: usize = 2_000;

thread_local! {
    /// Where a runtime thread writes each outcome's rest, as Node's addon does.
    static REST: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A batch as Node's addon writes one: the outputs one after the other, the rests likewise,
/// where each ends, and the failures (which stop the driver).
#[derive(Default)]
struct Batch {
    outputs: String,
    rests: String,
    ends: Vec<(usize, usize)>,
    failures: Vec<String>,
}

type Queue = Reports<Batch>;

/// What every call is given, and where it reports.
struct Driver {
    palisade: palisade::Palisade,
    policy: Arc<palisade::Policy>,
    script: palisade::Script,
    input: String,
    queue: Arc<Queue>,
}

impl Driver {
    fn begin(&self) {
        let reports = self.queue.clone();
        self.queue.started();
        let done = Box::new(move |result: Result<palisade::Outcome, String>| {
            REST.with_borrow_mut(|rest| {
                rest.clear();
                let output = result.and_then(|outcome| outcome_parts(outcome, rest));
                let rest = std::str::from_utf8(rest).expect("serde_json writes UTF-8");
                reports.post(true, |batch| match output {
                    Ok(output) => {
                        batch.outputs.push_str(&output);
                        batch.rests.push_str(rest);
                        batch.ends.push((batch.outputs.len(), batch.rests.len()));
                    }
                    Err(failure) => batch.failures.push(failure),
                });
            });
        });
        let given = Start {
            request: None,
            input: Some(self.input.clone()),
            policy: Some(self.policy.clone()),
            script: Some(self.script.clone()),
            on_event: None,
        };
        start(&self.palisade, given, &Call::default(), done);
    }

    /// Make `total` calls, `IN_FLIGHT` at a time; the first output must be `expected`.
    fn run(&self, total: usize, expected: &serde_json::Value) {
        let mut begun = IN_FLIGHT.min(total);
        for _ in 0..begun {
            self.begin();
        }
        let mut ended = 0;
        while ended < total {
            // Woken by the runtime for a batch (a wake-up before the park is kept; a
            // spurious one takes what is queued so far, as a binding may).
            std::thread::park();
            let mut batch = self.queue.take();
            if let Some(failure) = batch.failures.first() {
                panic!("a call failed: {failure}");
            }
            if ended == 0
                && let Some(&(end, _)) = batch.ends.first()
            {
                let output: serde_json::Value =
                    serde_json::from_str(&batch.outputs[..end]).expect("the output is JSON");
                assert_eq!(&output, expected, "the workload's output");
            }
            let taken = batch.ends.len();
            batch.outputs.clear();
            batch.rests.clear();
            batch.ends.clear();
            self.queue.recycle(batch);
            ended += taken;
            let more = taken.min(total - begun);
            for _ in 0..more {
                self.begin();
            }
            begun += more;
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "w1".to_owned());
    let calls: usize = args.next().map_or(200_000, |a| a.parse().expect("CALLS"));
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/workloads");
    let read = |ext: &str| {
        std::fs::read_to_string(format!("{dir}/{workload}.{ext}"))
            .unwrap_or_else(|e| panic!("{dir}/{workload}.{ext}: {e}"))
    };
    let source = format!(
        "{}\nexport default (input) => main(input);\n",
        read("main.js")
    );
    let expected: serde_json::Value = serde_json::from_str(&read("expected.json")).expect("JSON");
    let driving = std::thread::current();
    let driver = Driver {
        palisade: build_with(r#"{"maxConcurrency":64}"#, Vec::new(), |_| unreachable!())
            .expect("the Palisade builds"),
        policy: Arc::new(palisade::Policy::from_toml(POLICY, None).expect("the policy reads")),
        script: palisade::Script::new(format!("{workload}.js"), source),
        input: read("input.json").trim().to_owned(),
        queue: Queue::new(move |_| driving.unpark()),
    };
    driver.run(WARM_UP, &expected);
    let cpu = process_cpu();
    let started = Instant::now();
    driver.run(calls, &expected);
    let seconds = started.elapsed().as_secs_f64();
    let cpu = process_cpu().saturating_sub(cpu).as_secs_f64() * 1e6 / calls as f64;
    let line = serde_json::json!({
        "binding": "the bindings' core from a Rust thread",
        "workload": workload,
        "throughput_calls_per_s": calls as f64 / seconds,
        "cpu_us_per_call": cpu,
        "in_flight": IN_FLIGHT,
    });
    println!("{line}");
}

/// The CPU time every thread of this process has used, from `/proc/self/stat` (utime and
/// stime, in ticks of 1/100 s: ±20 ms over a run, under 1% of the default run's CPU time).
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a command name") + 1..]
        .split_whitespace()
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

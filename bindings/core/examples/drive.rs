//! A workload's throughput through the bindings' core, driven from a plain Rust thread as
//! Node's thread and an asyncio loop drive it, with no JavaScript or Python: 64 calls in flight
//! (`start`), each outcome written as Node's addon writes it (`outcome_parts`), the reports
//! taken in batches ([`Reports`]), and each batch starting as many calls again. The workload's
//! module and input come from bench/workloads/, the policy is `palisade bench`'s, the input is
//! given as its JSON text, and every output is checked. Prints one JSON line as
//! bindings/node/bench.js does: calls/s and the process's CPU µs a call (bench/bindings.sh
//! puts it beside the library and the bindings: docs/bench.md, "What two CPUs show").
//!
//! Usage: cargo run --release -p palisade-bindings --example drive -- [WORKLOAD] [CALLS]

use palisade_bindings::{Reports, Start, build_with, outcome_parts, start};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 64;
/// `palisade bench`'s policy (cli/src/bench.rs).
const POLICY: &str =
    "name = \"bench\"\n[limits]\nfuel = 10_000_000_000\ntimeout = \"10s\"\nmemory = \"64MiB\"\n";
const WARM_UP: usize = 2_000;

/// Where the driving thread sleeps until the runtime wakes it for a batch.
#[derive(Default)]
struct Bell {
    rung: Mutex<bool>,
    ring: Condvar,
}

impl Bell {
    fn ring(&self) {
        *self.rung.lock().expect("never poisoned") = true;
        self.ring.notify_one();
    }

    fn wait(&self) {
        let mut rung = self.rung.lock().expect("never poisoned");
        while !*rung {
            rung = self.ring.wait(rung).expect("never poisoned");
        }
        *rung = false;
    }
}

/// Each report: the output's JSON and the rest, as a binding takes them.
type Queue = Reports<Vec<(Box<str>, Vec<u8>)>>;

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
            let mut rest = Vec::new();
            let output = outcome_parts(result.expect("a well-formed call"), &mut rest)
                .unwrap_or_else(|failure| panic!("the workload failed: {failure}"));
            reports.post(true, |batch| batch.push((output, rest)));
        });
        let given = Start {
            request: None,
            input: Some(self.input.clone()),
            policy: Some(self.policy.clone()),
            script: Some(self.script.clone()),
            on_event: None,
        };
        start(&self.palisade, given, done);
    }

    /// Make `total` calls, `IN_FLIGHT` at a time, each output checked against `expected`.
    fn run(&self, bell: &Bell, total: usize, expected: &serde_json::Value) {
        let mut begun = IN_FLIGHT.min(total);
        for _ in 0..begun {
            self.begin();
        }
        let mut ended = 0;
        while ended < total {
            bell.wait();
            let mut batch = self.queue.take();
            let taken = batch.len();
            for (output, _) in batch.drain(..) {
                let output: serde_json::Value = serde_json::from_str(&output).expect("JSON");
                assert_eq!(&output, expected);
            }
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
    let bell = Arc::new(Bell::default());
    let rung = bell.clone();
    let driver = Driver {
        palisade: build_with(r#"{"maxConcurrency":64}"#, Vec::new(), |_| unreachable!())
            .unwrap_or_else(|_| panic!("the Palisade builds")),
        policy: Arc::new(palisade::Policy::from_toml(POLICY, None).expect("the policy reads")),
        script: palisade::Script::new(format!("{workload}.js"), source),
        input: read("input.json").trim().to_owned(),
        queue: Queue::new(move |_| rung.ring()),
    };
    driver.run(&bell, WARM_UP, &expected);
    let cpu = process_cpu();
    let started = Instant::now();
    driver.run(&bell, calls, &expected);
    let seconds = started.elapsed().as_secs_f64();
    let cpu = process_cpu().saturating_sub(cpu).as_secs_f64() * 1e6 / calls as f64;
    println!(
        "{}",
        serde_json::json!({
            "binding": "the bindings' core from a Rust thread",
            "workload": workload,
            "throughput_calls_per_s": calls as f64 / seconds,
            "cpu_us_per_call": cpu,
            "in_flight": IN_FLIGHT,
        })
    );
}

/// The CPU time every thread of this process has used, from `/proc/self/stat` (utime and
/// stime, in ticks of 1/100 s).
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a command name") + 1..]
        .split_whitespace()
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

//! `palisade bench`: the peers' workloads, a fresh sandbox per call, median / p99 / calls/s.

mod live;
mod measure;
mod report;

use clap::Args;
use measure::{Measured, Rate, calls_for, in_flight_memory, measure, ms, one_shot, throughput};
use palisade::{AutoCompileStatus, Builder, Error, Palisade, Policy, Script};
use report::{FuelOverhead, Summary, print_side_by_side, print_table};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Folder with the workloads (`wN.main.js`, `wN.input.json`, `wN.expected.json`).
    #[arg(long, default_value = "bench/workloads")]
    workloads: PathBuf,
    /// Measured calls per workload (w3, which is 100× heavier, runs a tenth of them).
    #[arg(long, default_value_t = 2000)]
    calls: usize,
    /// Run only these workloads (comma-separated names, such as `w1,w3`).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Compile each workload to bytecode once, before measuring (`Palisade::precompile`).
    #[arg(long, conflicts_with = "compiled")]
    precompile: bool,
    /// Compile each workload into a component of its own first (`palisade compile`), so that a
    /// call only invokes the export of the already evaluated module.
    #[arg(long)]
    compiled: bool,
    /// Measure the workloads in these forms (comma-separated: `source`, `precompiled`,
    /// `compiled`), each form of a workload right after the other in every round, so that they
    /// can be compared on a machine whose speed drifts.
    #[arg(long, value_enum, value_delimiter = ',', conflicts_with_all = ["precompile", "compiled"])]
    variants: Vec<Variant>,
    /// Turn fuel metering off (`Builder::fuel_metering`), to measure what it costs.
    #[arg(long)]
    no_fuel: bool,
    /// Turn the in-memory bytecode cache off: every call parses its source.
    #[arg(long)]
    no_bytecode_cache: bool,
    /// Measure the workloads this many times in turn and report each one's fastest round: the
    /// speed of a shared machine drifts between minutes more than a change moves it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Tasks in flight for the throughput measurements (`--throughput`).
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Measure the throughput of these workloads (comma-separated names, each one of those
    /// measured: see `--only`) at `--concurrency` tasks, after their medians; by default w1's,
    /// which is the summary's figure.
    #[arg(long, value_delimiter = ',')]
    throughput: Vec<String>,
    /// Bytes of each pooled memory kept mapped between calls (`Builder::keep_resident`).
    #[arg(long, value_name = "SIZE")]
    keep_resident: Option<palisade::policy::ByteSize>,
    /// Slots of each kind in the instance pool (`Builder::pool_slots`); default: one per task
    /// of `--concurrency`.
    #[arg(long, value_name = "N")]
    pool_slots: Option<u32>,
    /// Calls held in flight at once, each awaiting a 1 s host capability, for the resident
    /// memory per in-flight call (0 skips it).
    #[arg(long, default_value_t = 1000)]
    in_flight: usize,
    /// Runs of `palisade run examples/hello.js` (this binary, warm cache, from the current
    /// folder) timed for the one-shot wall time (0 skips it).
    #[arg(long, default_value_t = 20)]
    one_shot_runs: usize,
    /// Measure the workloads under this policy file instead of the bench's own (which grants
    /// nothing and leaves room for every workload), to see what its grants cost per call: the
    /// guest it selects, the globals it installs. Its limits apply, so a workload that exceeds
    /// them fails the bench (`--only` picks the others).
    #[arg(long, value_name = "PATH")]
    policy: Option<PathBuf>,
    /// Measure live sessions only (docs/sessions.md): a hot call against a fresh one, and
    /// hibernating, waking and forking a 16 MiB heap; `--calls` samples each.
    #[arg(long)]
    live: bool,
}

#[derive(Clone)]
struct Workload {
    name: String,
    script: Script,
    input: String,
    expected: serde_json::Value,
}

fn load(dir: &Path, name: &str) -> Result<Workload, String> {
    let read = |suffix: &str| {
        let path = dir.join(format!("{name}.{suffix}"));
        std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let source = format!(
        "{}\nexport default (input) => main(input);\n",
        read("main.js")?
    );
    let expected = serde_json::from_str(&read("expected.json")?)
        .map_err(|e| format!("{name}.expected.json: {e}"))?;
    Ok(Workload {
        name: name.to_owned(),
        script: Script::new(format!("{name}.js"), source),
        input: read("input.json")?,
        expected,
    })
}

/// A policy roomy enough for every workload, with fuel metering on as in production.
fn bench_policy() -> Policy {
    Policy::from_toml(
        "name = \"bench\"\n[limits]\nfuel = 10_000_000_000\ntimeout = \"10s\"\nmemory = \"64MiB\"\n",
        None,
    )
    .expect("the bench policy is valid")
}

pub fn run(args: BenchArgs) -> ExitCode {
    match bench(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// Measure, print each table and the summary; a failure has been reported when it returns
/// the exit code.
fn bench(args: &BenchArgs) -> Result<(), ExitCode> {
    if args.live {
        let palisade = built(configured(args, !args.no_fuel).build())?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_time()
            .build()
            .expect("tokio starts");
        return rt.block_on(live::live(&palisade, args.calls));
    }
    let workloads = load_workloads(args)?;
    let palisade = built(
        configured(args, !args.no_fuel)
            .max_concurrency(args.concurrency.max(1) as u32)
            .on_compile(super::compile_notice)
            .build(),
    )?;
    let policy = chosen_policy(args)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .expect("tokio starts");
    let (variants, engines) = prepare_variants(args, &rt, &palisade, &policy, &workloads)?;
    // What fuel metering costs is measured on w3 against an engine without it, in the same
    // rounds, each unmetered run right after the metered one: the machine's speed drifts too
    // much between minutes for runs made apart to be compared.
    let unmetered = if args.no_fuel || !workloads.iter().any(|w| w.name == "w3") {
        None
    } else {
        Some(built(configured(args, false).max_concurrency(4).build())?)
    };
    let bench = Bench {
        args,
        rt,
        policy,
        workloads,
        variants,
        engines,
    };
    let measured = measure_rounds(&bench, unmetered.as_ref())?;
    let several = bench.variants.len() > 1;
    for (v, (kind, prepared)) in bench.variants.iter().enumerate() {
        if several {
            println!("{}{}:\n", if v == 0 { "" } else { "\n" }, kind.label());
        }
        print_table(prepared, &measured.fastest[v], &measured.rounds[v], args);
    }
    if several {
        print_side_by_side(&bench.variants, &measured.fastest);
    }
    let mut summary = Summary {
        medians: bench
            .workloads
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let by_form = bench
                    .variants
                    .iter()
                    .zip(&measured.fastest)
                    .map(|((kind, _), f)| (kind.label(), f[i].as_ref().expect("measured").median))
                    .collect();
                (w.name.clone(), by_form)
            })
            .collect(),
        ..Summary::default()
    };
    throughputs(&bench, &mut summary);
    in_flight(&bench, &mut summary)?;
    print_fuel_rounds(&measured.paired, &mut summary);
    one_shot_wall(args, &mut summary)?;
    summary.print();
    Ok(())
}

/// The workloads `--only` names (all four by default).
fn load_workloads(args: &BenchArgs) -> Result<Vec<Workload>, ExitCode> {
    let names: Vec<String> = if args.only.is_empty() {
        ["w1", "w2", "w3", "w4"].map(String::from).to_vec()
    } else {
        args.only.clone()
    };
    if let Some(name) = args.throughput.iter().find(|name| !names.contains(name)) {
        eprintln!(
            "error: --throughput {name}: not one of the workloads measured ({}); see --only",
            names.join(", ")
        );
        return Err(ExitCode::from(super::EXIT_USAGE));
    }
    names
        .iter()
        .map(|n| load(&args.workloads, n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::from(super::EXIT_USAGE)
        })
}

/// The engines measured differ only in fuel metering (and the main one's concurrency, which
/// sizes its pool unless --pool-slots is larger).
fn configured(args: &BenchArgs, fuel: bool) -> Builder {
    let mut builder = Palisade::builder()
        .fuel_metering(fuel)
        .bytecode_cache(if args.no_bytecode_cache { 0 } else { 1024 });
    if let Some(slots) = args.pool_slots {
        builder = builder.pool_slots(slots);
    }
    match args.keep_resident {
        Some(size) => builder.keep_resident(size),
        None => builder,
    }
}

/// A built Palisade, or the reported error's exit code.
fn built(result: Result<Palisade, Error>) -> Result<Palisade, ExitCode> {
    result.map_err(|e| {
        eprintln!("error[{}]: {e}", e.code());
        ExitCode::from(e.exit_code() as u8)
    })
}

/// The policy the workloads run under: `--policy` (named, with the guest it selects) or the
/// bench's own.
fn chosen_policy(args: &BenchArgs) -> Result<Policy, ExitCode> {
    let Some(path) = &args.policy else {
        return Ok(bench_policy());
    };
    match super::run::load_policy(Some(path)) {
        Ok(policy) => {
            let guest = if policy.grants_imports() {
                "full"
            } else {
                "plain"
            };
            println!("policy: {} ({guest} guest)\n", policy.name());
            Ok(policy)
        }
        Err(stop) => Err(stop.report_human()),
    }
}

/// Each variant's workloads, prepared, and the Palisade each variant is measured on: the
/// auto-compiled form has one of its own, so that the other forms of the same scripts stay
/// as they are.
fn prepare_variants(
    args: &BenchArgs,
    rt: &tokio::runtime::Runtime,
    palisade: &Palisade,
    policy: &Policy,
    workloads: &[Workload],
) -> Result<(Variants, Vec<Arc<Palisade>>), ExitCode> {
    let mut variants: Variants = Vec::new();
    let mut engines: Vec<Arc<Palisade>> = Vec::new();
    for kind in args.variant_list() {
        let engine = match kind {
            Variant::Auto => built(
                configured(args, !args.no_fuel)
                    .max_concurrency(args.concurrency.max(1) as u32)
                    .auto_compile(AUTO_COMPILE_AFTER)
                    .build(),
            )?,
            _ => palisade.clone(),
        };
        let engine = Arc::new(engine);
        match prepare(rt, &engine, policy, workloads, kind) {
            Ok(prepared) => {
                variants.push((kind, prepared));
                engines.push(engine);
            }
            Err(message) => {
                eprintln!("error: {message}");
                return Err(ExitCode::FAILURE);
            }
        }
    }
    Ok((variants, engines))
}

/// Each variant measured, with its workloads prepared in that form.
type Variants = Vec<(Variant, Vec<Workload>)>;

/// What a bench run measures with: its arguments, runtime, policy and workloads, and each
/// variant measured with its prepared workloads and its Palisade.
struct Bench<'a> {
    args: &'a BenchArgs,
    rt: tokio::runtime::Runtime,
    policy: Policy,
    workloads: Vec<Workload>,
    variants: Variants,
    engines: Vec<Arc<Palisade>>,
}

/// The rounds' figures, by variant and workload.
struct Rounds {
    /// Each one's fastest round.
    fastest: Vec<Vec<Option<Measured>>>,
    /// Each round's median.
    rounds: Vec<Vec<Vec<Duration>>>,
    /// w3's medians with and without fuel metering, round by round.
    paired: Vec<(Duration, Duration)>,
}

/// Round by round, every workload in turn, each variant of it right after the other; each
/// one's fastest round is reported. w3 runs on `unmetered` too, right after the first variant.
fn measure_rounds(bench: &Bench<'_>, unmetered: Option<&Palisade>) -> Result<Rounds, ExitCode> {
    let (args, variants, workloads) = (bench.args, &bench.variants, &bench.workloads);
    let mut paired: Vec<(Duration, Duration)> = Vec::new();
    let mut fastest: Vec<Vec<Option<Measured>>> = variants
        .iter()
        .map(|_| workloads.iter().map(|_| None).collect())
        .collect();
    let mut rounds: Vec<Vec<Vec<Duration>>> = variants
        .iter()
        .map(|_| workloads.iter().map(|_| Vec::new()).collect())
        .collect();
    for round in 1..=args.rounds {
        if args.rounds > 1 {
            eprintln!("palisade: round {round} of {}", args.rounds);
        }
        for i in 0..workloads.len() {
            for (v, (_, prepared)) in variants.iter().enumerate() {
                let w = &prepared[i];
                let calls = calls_for(w, args.calls);
                let m = match measure(&bench.rt, &bench.engines[v], &bench.policy, w, calls) {
                    Ok(m) => m,
                    Err(message) => {
                        eprintln!("error: {message}");
                        return Err(ExitCode::FAILURE);
                    }
                };
                rounds[v][i].push(m.median);
                if let (0, Some(p), "w3") = (v, unmetered, w.name.as_str()) {
                    match measure(&bench.rt, p, &bench.policy, w, calls) {
                        Ok(u) => paired.push((m.median, u.median)),
                        Err(message) => {
                            eprintln!("error: w3 without fuel metering: {message}");
                            return Err(ExitCode::FAILURE);
                        }
                    }
                }
                if fastest[v][i].as_ref().is_none_or(|f| m.median < f.median) {
                    fastest[v][i] = Some(m);
                }
            }
        }
    }
    Ok(Rounds {
        fastest,
        rounds,
        paired,
    })
}

/// The throughput of each `--throughput` workload at `--concurrency` tasks, each variant's
/// fastest of the rounds; w1's is the summary's.
fn throughputs(bench: &Bench<'_>, summary: &mut Summary) {
    let args = bench.args;
    for (i, workload) in bench.workloads.iter().enumerate() {
        let wanted = if args.throughput.is_empty() {
            workload.name == "w1"
        } else {
            args.throughput.contains(&workload.name)
        };
        if !wanted {
            continue;
        }
        let mut best = vec![Rate::default(); bench.variants.len()];
        for _ in 0..args.rounds {
            for (v, (_, prepared)) in bench.variants.iter().enumerate() {
                let measured = throughput(
                    &bench.rt,
                    &bench.engines[v],
                    &bench.policy,
                    &prepared[i],
                    args,
                );
                if measured.calls_per_s > best[v].calls_per_s {
                    best[v] = measured;
                }
            }
        }
        print_throughput(bench, &workload.name, &best);
        if workload.name == "w1" {
            summary.throughput = bench
                .variants
                .iter()
                .zip(&best)
                .map(|((kind, _), best)| (kind.label(), best.calls_per_s))
                .collect();
        }
    }
}

/// One `throughput:` line per variant of workload `name`, whose fastest rounds are `best`
/// (with that round's CPU time per call, every thread of the process counted).
fn print_throughput(bench: &Bench<'_>, name: &str, best: &[Rate]) {
    let (args, variants) = (bench.args, &bench.variants);
    let several = variants.len() > 1;
    // The runtime's workers: one per CPU, or `TOKIO_WORKER_THREADS`.
    let threads = bench.rt.metrics().num_workers();
    let rounds = if args.rounds > 1 {
        format!(", fastest of {} rounds", args.rounds)
    } else {
        String::new()
    };
    for ((kind, _), best) in variants.iter().zip(best) {
        let form = if several {
            format!(" ({})", kind.label())
        } else {
            String::new()
        };
        let cpu = best
            .cpu_us_per_call
            .map_or_else(String::new, |cpu| format!(", {cpu:.1} CPU µs a call"));
        println!(
            "{}throughput: {name}{form}, {} tasks on {threads} thread{}: {:.0} calls/s{rounds}{cpu}",
            if form.is_empty() || kind == &variants[0].0 {
                "\n"
            } else {
                ""
            },
            args.concurrency,
            if threads == 1 { "" } else { "s" },
            best.calls_per_s,
        );
    }
}

/// The resident memory per in-flight call (`--in-flight`, 0 skips it).
fn in_flight(bench: &Bench<'_>, summary: &mut Summary) -> Result<(), ExitCode> {
    let args = bench.args;
    if args.in_flight == 0 {
        return Ok(());
    }
    match in_flight_memory(&bench.rt, args.in_flight) {
        Ok((per_call, base, peak)) => {
            println!(
                "memory: {} calls each awaiting a 1 s host capability: {:.2} MiB resident \
                 per in-flight call ({:.0} MiB before, {:.0} MiB at the peak)",
                args.in_flight,
                per_call / (1 << 20) as f64,
                base as f64 / (1 << 20) as f64,
                peak as f64 / (1 << 20) as f64,
            );
            summary.memory_per_call = Some(per_call);
            Ok(())
        }
        Err(e) => {
            eprintln!("error: the in-flight memory measurement failed: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// w3 with and without fuel metering, round by round, when measured.
fn print_fuel_rounds(paired: &[(Duration, Duration)], summary: &mut Summary) {
    if paired.is_empty() {
        return;
    }
    let each: Vec<String> = paired
        .iter()
        .map(|(m, u)| format!("{:.2}/{:.2}", ms(*m), ms(*u)))
        .collect();
    println!(
        "w3 with and without fuel metering, ms, round by round: {}",
        each.join(" · ")
    );
    summary.fuel_overhead = Some(FuelOverhead::from_rounds(paired));
}

/// The one-shot wall time of `palisade run examples/hello.js` (`--one-shot-runs`, 0 skips
/// it; skipped with a note where there is no examples/hello.js).
fn one_shot_wall(args: &BenchArgs, summary: &mut Summary) -> Result<(), ExitCode> {
    if args.one_shot_runs == 0 {
        return Ok(());
    }
    if !Path::new("examples/hello.js").is_file() {
        eprintln!("note: no examples/hello.js here; the one-shot measurement is skipped");
        return Ok(());
    }
    match one_shot(args.one_shot_runs) {
        Ok((median, mean)) => {
            println!(
                "one-shot: `palisade run examples/hello.js`, {} runs: median {:.1} ms, mean \
                 {:.1} ms",
                args.one_shot_runs,
                ms(median),
                ms(mean)
            );
            summary.one_shot = Some(median);
            Ok(())
        }
        Err(message) => {
            eprintln!("error: the one-shot measurement failed: {message}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// A form in which the workloads are handed to `Palisade::run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Variant {
    /// The source; the in-memory bytecode cache serves calls after the first.
    Source,
    /// Compiled to bytecode before measuring (`Palisade::precompile`).
    Precompiled,
    /// Compiled into a component of its own (`palisade compile`).
    Compiled,
    /// The source, on a Palisade that compiles it into a component once it is called often
    /// (`Builder::auto_compile`); measured once that compile has finished.
    Auto,
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::Source => "source",
            Variant::Precompiled => "precompiled",
            Variant::Compiled => "compiled",
            Variant::Auto => "auto-compiled",
        }
    }
}

impl BenchArgs {
    fn variant_list(&self) -> Vec<Variant> {
        if !self.variants.is_empty() {
            let mut list = self.variants.clone();
            list.dedup();
            list
        } else if self.compiled {
            vec![Variant::Compiled]
        } else if self.precompile {
            vec![Variant::Precompiled]
        } else {
            vec![Variant::Source]
        }
    }
}

/// The workloads in the form `kind` names.
fn prepare(
    rt: &tokio::runtime::Runtime,
    palisade: &Palisade,
    policy: &Policy,
    workloads: &[Workload],
    kind: Variant,
) -> Result<Vec<Workload>, String> {
    workloads
        .iter()
        .map(|w| {
            let script = match kind {
                Variant::Source => Ok(w.script.clone()),
                Variant::Precompiled => rt.block_on(palisade.precompile(policy, &w.script)),
                Variant::Compiled => {
                    eprintln!("palisade: compiling {} into a component…", w.name);
                    rt.block_on(palisade.compile(policy, &w.script))
                        .and_then(Script::from_component)
                        .and_then(|script| rt.block_on(palisade.precompile(policy, &script)))
                }
                Variant::Auto => {
                    eprintln!(
                        "palisade: calling {} until it is compiled automatically…",
                        w.name
                    );
                    rt.block_on(auto_compiled(palisade, policy, w))
                }
            }
            .map_err(|e| format!("{} does not compile: {}: {e}", w.name, e.code()))?;
            Ok(Workload {
                script,
                ..w.clone()
            })
        })
        .collect()
}

/// Calls before `Builder::auto_compile` compiles a script, for the `auto` variant.
const AUTO_COMPILE_AFTER: u32 = 8;

/// Call `w` on `palisade` (which compiles scripts automatically) until its compiled form is
/// ready, so that the measured calls all run from it.
async fn auto_compiled(
    palisade: &Palisade,
    policy: &Policy,
    w: &Workload,
) -> Result<Script, Error> {
    let started = Instant::now();
    loop {
        let outcome = palisade.run(policy, &w.script, &w.input).await;
        outcome.result?;
        match palisade.auto_compile_status(policy, &w.script) {
            Some(AutoCompileStatus::Ready) => return Ok(w.script.clone()),
            Some(AutoCompileStatus::Refused { reason }) => {
                return Err(Error::Internal {
                    detail: format!("not compiled automatically: {reason}"),
                });
            }
            _ if started.elapsed() > Duration::from_secs(300) => {
                return Err(Error::Internal {
                    detail: "not compiled automatically within 5 minutes".into(),
                });
            }
            Some(AutoCompileStatus::Compiling) => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            _ => {}
        }
    }
}

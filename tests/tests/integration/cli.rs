//! The real `palisade` binary, end to end.

use crate::support::root;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The `palisade` binary, built once per test run so that it is never stale: cargo builds a
/// package's binaries only for that package's own integration tests, and these live in the
/// `tests` package.
pub fn palisade_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", "palisade-cli"])
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the palisade binary failed");
        let exe = std::env::current_exe().unwrap();
        let bin = exe.parent().unwrap().parent().unwrap().join("palisade");
        assert!(bin.is_file(), "{} is missing", bin.display());
        bin
    })
    .clone()
}

fn palisade(args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(palisade_bin());
    command.args(args).current_dir(root());
    output_with(command, stdin)
}

/// Run `command` with `stdin` written to it (or none) and collect what it printed.
pub(crate) fn output_with(mut command: Command, stdin: Option<&str>) -> Output {
    let mut child = command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn run_prints_output_on_stdout_and_console_on_stderr() {
    let o = palisade(
        &["run", "examples/hello.js", "--input", r#"{"name":"Ada"}"#],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"greeting\":\"Hello, Ada!\",\"at\":true}\n");
    assert!(stderr(&o).contains("greeting Ada"));
}

#[test]
fn input_comes_from_stdin_or_a_file() {
    let o = palisade(&["run", "tests/fixtures/js/echo.js"], Some("[1, 2]"));
    assert_eq!(stdout(&o), "{\"got\":[1,2]}\n");
    let o = palisade(&["run", "tests/fixtures/js/echo.js"], None);
    assert_eq!(stdout(&o), "{\"got\":null}\n", "no stdin means null input");
    let o = palisade(
        &[
            "run",
            "tests/fixtures/js/echo.js",
            "--input-file",
            "Cargo.toml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(15), "TOML is not JSON: invalid_input");
    assert!(
        stderr(&o).contains("error[invalid_input]"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn json_mode_prints_the_whole_outcome() {
    let o = palisade(&["run", "examples/hello.js", "--json"], None);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["output"]["greeting"], "Hello, world!");
    assert_eq!(v["logs"][0]["level"], "log");
    assert_eq!(v["receipt"]["policy"], "default");
    assert!(v["receipt"]["fuel_used"].as_u64().unwrap() > 0);

    let o = palisade(
        &[
            "run",
            "tests/fixtures/js/infinite_loop.js",
            "--json",
            "--policy",
            "tests/fixtures/policies/tight.toml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(20));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "fuel_exhausted");
    assert_eq!(v["error"]["fix"]["key"], "limits.fuel");
    assert_eq!(v["receipt"]["policy"], "tight");
}

#[test]
fn exit_codes_follow_the_error_code() {
    let cases = [
        (
            "throws_type_error.js",
            10,
            "error[guest_exception]: uncaught TypeError: bad thing",
        ),
        ("syntax_error.js", 11, "error[guest_syntax]"),
        ("never_settles.js", 12, "error[guest_deadlock]"),
        ("bigint_output.js", 14, "error[bad_output]"),
        ("deep_recursion.js", 23, "error[stack_overflow]"),
    ];
    for (fixture, exit, message) in cases {
        let o = palisade(&["run", &format!("tests/fixtures/js/{fixture}")], None);
        assert_eq!(o.status.code(), Some(exit), "{fixture}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{fixture}: {}", stderr(&o));
    }
    let o = palisade(
        &[
            "run",
            "tests/fixtures/js/infinite_loop.js",
            "--policy",
            "tests/fixtures/policies/tight.toml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(20));
    assert!(
        stderr(&o).contains("fix: set `limits.fuel = 20000000` in the policy"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn usage_errors_exit_2() {
    let o = palisade(&["run", "does/not/exist.js"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read does/not/exist.js"));
    let o = palisade(&["run"], None);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 38, item 22: under `--json`, a failure before the call (a script file that is not
/// there, a policy that does not load, a damaged `.wasm`) printed nothing on stdout. Each is one
/// JSON outcome there now, with its code, and the same exit code as without `--json`.
#[test]
fn regression_38_22_every_failure_under_json_is_one_outcome_on_stdout() {
    let dir = std::env::temp_dir().join(format!("palisade-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let damaged = dir.join("damaged.wasm");
    std::fs::write(&damaged, b"\0asm\x0d\0\x01\0garbage").unwrap();
    let damaged = damaged.to_str().unwrap();
    let bad_policy = "tests/fixtures/policies/bad/unknown_key.toml";
    for (args, code, exit) in [
        (
            vec!["run", "does/not/exist.js", "--json"],
            "invalid_input",
            2,
        ),
        (
            vec!["run", "examples/hello.js", "--json", "--policy", bad_policy],
            "invalid_policy",
            30,
        ),
        (vec!["run", damaged, "--json"], "invalid_component", 18),
        (
            vec![
                "run",
                "examples/hello.js",
                "--json",
                "--input-file",
                "does/not/exist.json",
            ],
            "invalid_input",
            2,
        ),
    ] {
        let o = palisade(&args, None);
        assert_eq!(o.status.code(), Some(exit), "{args:?}: {}", stderr(&o));
        let out = stdout(&o);
        assert_eq!(out.lines().count(), 1, "{args:?}: {out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["ok"], false, "{args:?}");
        assert_eq!(v["error"]["code"], code, "{args:?}: {out}");
        assert_eq!(v["logs"], serde_json::json!([]), "{args:?}");
    }
    // The receipt names the policy when it loaded.
    let o = palisade(&["run", "does/not/exist.js", "--json"], None);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["receipt"]["policy"], "default");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does/not/exist.js")
    );
    // And a normal run after.
    let o = palisade(&["run", "examples/hello.js", "--json"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], true);
}

#[test]
fn a_bad_policy_file_is_refused_before_running() {
    let o = palisade(
        &[
            "run",
            "examples/hello.js",
            "--policy",
            "tests/fixtures/policies/bad/bare_number_size.toml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(30));
    assert!(stderr(&o).contains("`limits.memory`"), "{}", stderr(&o));
}

#[test]
fn policy_check_prints_the_resolved_policy_or_the_error() {
    let o = palisade(&["policy", "check", "policies/default.toml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("valid (sha256 "), "{out}");
    assert!(out.contains("memory = \"64MiB\""), "{out}");
    assert!(out.contains("# guest: plain "), "{out}");
    let o = palisade(&["policy", "check", "policies/sandbox.toml"], None);
    assert!(stdout(&o).contains("# guest: full "), "{}", stdout(&o));
    let o = palisade(
        &[
            "policy",
            "check",
            "tests/fixtures/policies/bad/unknown_key.toml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(30));
    assert!(
        stderr(&o).contains("unknown field `fule`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn audit_log_appends_every_decision_as_json_lines() {
    let dir = std::env::temp_dir().join(format!("palisade-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("audit.jsonl");
    let script = dir.join("render.js");
    std::fs::write(
        &script,
        "export default async () => maia.render({ op: 'draw' });",
    )
    .unwrap();
    let args = [
        "run",
        script.to_str().unwrap(),
        "--policy",
        "policies/capability-bridge.toml",
        "--audit-log",
        log.to_str().unwrap(),
    ];
    for _ in 0..2 {
        let o = palisade(&args, None);
        assert_eq!(o.status.code(), Some(31), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("error[policy_denied]"),
            "{}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("fix: set `capabilities.allow.render = {}` in the policy"),
            "{}",
            stderr(&o)
        );
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "one denial per run, appended");
    for r in &records {
        assert_eq!(r["decision"], "deny");
        assert_eq!(r["target"], "render");
        assert_eq!(r["rule"], "capabilities.allow");
        assert_eq!(r["policy"], "capability-bridge");
        assert_eq!(r["policy_sha256"].as_str().unwrap().len(), 64);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compile_writes_a_component_that_run_accepts() {
    let dir = crate::support::scratch_dir("cli-compile");
    let wasm = dir.join("echo.wasm");
    let wasm_arg = wasm.to_str().unwrap();
    let o = palisade(
        &["compile", "tests/fixtures/js/echo.js", "-o", wasm_arg],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("wrote"), "{}", stderr(&o));
    let o = palisade(&["run", wasm_arg, "--input", "[1, 2]"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"got\":[1,2]}\n");

    let top = dir.join("clock.js");
    std::fs::write(&top, "const t = Date.now();\nexport default () => t;\n").unwrap();
    let o = palisade(&["compile", top.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(17), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error[not_compilable]"),
        "{}",
        stderr(&o)
    );
    assert!(
        !dir.join("clock.wasm").exists(),
        "nothing is written on failure"
    );

    let fake = dir.join("fake.wasm");
    std::fs::write(&fake, b"\0asm\x01\0\0\0").unwrap();
    let o = palisade(&["run", fake.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(18), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error[invalid_component]"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bench_prints_the_speed_targets_table() {
    let o = palisade(
        &[
            "bench",
            "--calls",
            "20",
            "--only",
            "w1,w3",
            "--concurrency",
            "4",
            "--throughput",
            "w1,w3",
            "--in-flight",
            "10",
            "--one-shot-runs",
            "2",
            "--rounds",
            "2",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for row in [
        "| w1 | 20 |",
        "| w3 | 10 |",
        "medians by round, µs (the table shows each workload's fastest):",
        "throughput: w1, 4 tasks on ",
        "throughput: w3, 4 tasks on ",
        "calls/s, fastest of 2 rounds",
        "memory: 10 calls",
        "w3 with and without fuel metering, ms, round by round: ",
        "(median of 2 paired rounds; fastest ",
        "one-shot: `palisade run examples/hello.js`, 2 runs",
        "| trivial call (w1), fresh instance, median | ≤ 15 µs |",
        "| fuel metering overhead on w3 | measured | ",
    ] {
        assert!(out.contains(row), "missing {row:?} in:\n{out}");
    }
    for measured in [
        "| trivial call (w1), fresh instance, median |",
        "| `palisade run hello.js` one-shot, warm cache, wall |",
        "| resident memory per in-flight call |",
        "| fuel metering overhead on w3 |",
    ] {
        let row = out.lines().find(|l| l.starts_with(measured)).unwrap();
        assert!(!row.contains("not measured"), "{row}");
    }
    // Each throughput line ends with the CPU time its fastest round took a call (where the
    // process's CPU time can be read: Linux with glibc).
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("throughput: "))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    for line in lines
        .iter()
        .filter(|_| cfg!(all(target_os = "linux", target_env = "gnu")))
    {
        let cpu = line
            .strip_suffix(" CPU µs a call")
            .and_then(|l| l.rsplit_once(", "))
            .map(|(_, cpu)| cpu.parse::<f64>());
        assert!(matches!(cpu, Some(Ok(cpu)) if cpu > 0.0), "{line}");
    }
    // Each round ran w3 on both engines, one after the other.
    let pairs = out
        .lines()
        .find_map(|l| l.strip_prefix("w3 with and without fuel metering, ms, round by round: "))
        .unwrap();
    assert_eq!(pairs.split(" · ").count(), 2, "{pairs}");
    for pair in pairs.split(" · ") {
        let (metered, unmetered) = pair.split_once('/').unwrap();
        assert!(metered.parse::<f64>().unwrap() > 0.0, "{pair}");
        assert!(unmetered.parse::<f64>().unwrap() > 0.0, "{pair}");
    }
    // Two medians per workload, the table's the smaller.
    for (name, row) in [("w1", "| w1 | 20 | "), ("w3", "| w3 | 10 | ")] {
        let by_round = out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("- {name}: ")))
            .unwrap_or_else(|| panic!("no rounds for {name} in:\n{out}"));
        let medians: Vec<f64> = by_round.split(" / ").map(|m| m.parse().unwrap()).collect();
        assert_eq!(medians.len(), 2, "{by_round}");
        let shown: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix(row))
            .and_then(|rest| rest.split(" | ").next())
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            shown,
            medians.iter().cloned().fold(f64::MAX, f64::min),
            "{out}"
        );
    }
    // w2 was not run.
    assert!(
        out.contains("| transform (w2), median | ≤ 0.5 ms | not measured |"),
        "{out}"
    );
}

#[test]
fn bench_measures_variants_in_the_same_rounds() {
    let o = palisade(
        &[
            "bench",
            "--calls",
            "10",
            "--only",
            "w1",
            "--variants",
            "source,compiled",
            "--concurrency",
            "2",
            "--in-flight",
            "0",
            "--one-shot-runs",
            "0",
            "--rounds",
            "2",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for row in [
        "source:",
        "compiled:",
        "| workload | source | compiled |",
        "throughput: w1 (source), 2 tasks on ",
        "throughput: w1 (compiled), 2 tasks on ",
    ] {
        assert!(out.contains(row), "missing {row:?} in:\n{out}");
    }
    // A compiled w1 runs the already evaluated module: it uses less fuel than from source.
    let fuel: Vec<u64> = out
        .lines()
        .filter(|l| l.starts_with("| w1 | 10 |"))
        .map(|l| {
            l.trim_end_matches(" |")
                .rsplit(" | ")
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(fuel.len(), 2, "{out}");
    assert!(fuel[1] < fuel[0], "{fuel:?}");
    // The side-by-side row repeats each variant's fastest median.
    let side: Vec<&str> = out
        .lines()
        .find_map(|l| {
            l.strip_prefix("| w1 | ")
                .filter(|rest| rest.matches(" | ").count() == 1)
        })
        .unwrap_or_else(|| panic!("no side-by-side row in:\n{out}"))
        .trim_end_matches(" |")
        .split(" | ")
        .collect();
    assert_eq!(side.len(), 2, "{out}");
    let o = palisade(&["bench", "--variants", "source", "--compiled"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A throughput asked of a workload that is not measured is a usage error, before any call.
    let o = palisade(&["bench", "--only", "w1", "--throughput", "w1,w2"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--throughput w2: not one of the workloads measured (w1)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bench_measures_under_a_policy_file() {
    let bench = |policy: Option<&str>| {
        let mut args = vec![
            "bench",
            "--calls",
            "10",
            "--only",
            "w1",
            "--concurrency",
            "2",
            "--in-flight",
            "0",
            "--one-shot-runs",
            "0",
        ];
        if let Some(policy) = policy {
            args.extend(["--policy", policy]);
        }
        palisade(&args, None)
    };
    let fuel = |out: &str| -> u64 {
        let row = out
            .lines()
            .find(|l| l.starts_with("| w1 | 10 |"))
            .unwrap_or_else(|| panic!("no w1 row in:\n{out}"));
        row.trim_end_matches(" |")
            .rsplit(" | ")
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let own = bench(None);
    assert_eq!(own.status.code(), Some(0), "{}", stderr(&own));
    assert!(!stdout(&own).contains("policy:"), "{}", stdout(&own));
    let bridge = bench(Some("policies/capability-bridge.toml"));
    assert_eq!(bridge.status.code(), Some(0), "{}", stderr(&bridge));
    let out = stdout(&bridge);
    assert!(
        out.starts_with("policy: capability-bridge (full guest)\n"),
        "{out}"
    );
    // The bridge's global is installed in every call under that policy.
    assert!(fuel(&out) > fuel(&stdout(&own)), "{out}");
    let missing = bench(Some("policies/no-such-policy.toml"));
    assert_eq!(missing.status.code(), Some(30), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("error[invalid_policy]"),
        "{}",
        stderr(&missing)
    );
}

/// Issue 22: `palisade run -` reads the script from stdin, and a pipe given as the script path
/// (`/dev/stdin` fed by a pipe, `<(…)`) is read whole: its first bytes were lost before.
#[test]
fn scripts_come_from_stdin_or_a_pipe() {
    let source = "export default (x) => ({ doubled: x.n * 2 });";
    let o = palisade(&["run", "-", "--input", r#"{"n":21}"#], Some(source));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"doubled\":42}\n");
    // Without --input, a script from stdin is called with null.
    let o = palisade(&["run", "-"], Some("export default (x) => x;"));
    assert_eq!(stdout(&o), "null\n");
    let o = palisade(
        &["run", "/dev/stdin", "--input", r#"{"n":1}"#],
        Some(source),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"doubled\":2}\n");
    // A device is still refused, at once.
    let o = palisade(&["run", "/dev/zero"], None);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 22: `--export NAME` calls a method of the default export, and `--args` passes a list
/// of arguments (tools take several).
#[test]
fn export_and_args_reach_a_tools_method() {
    let dir = crate::support::scratch_dir("cli-tool");
    let tool = dir.join("tool.js");
    std::fs::write(
        &tool,
        "export default { async execute(actor, payload) { return { actor, payload }; } };\n\
         export const add = (a, b, c = 0) => a + b + c;",
    )
    .unwrap();
    let tool = tool.display().to_string();
    let o = palisade(
        &[
            "run",
            &tool,
            "--export",
            "execute",
            "--args",
            r#"["ada", {"x": 1}]"#,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"actor\":\"ada\",\"payload\":{\"x\":1}}\n");
    let o = palisade(
        &["run", &tool, "--export", "add", "--args", "[1, 2, 3]"],
        None,
    );
    assert_eq!(stdout(&o), "6\n");
    let o = palisade(
        &["run", &tool, "--export", "add", "--args", "{\"a\":1}"],
        None,
    );
    assert_eq!(o.status.code(), Some(15), "invalid_input: {}", stderr(&o));
    // Run as the default, the tool object's method is named in a warning.
    let o = palisade(&["run", &tool], None);
    assert_eq!(stdout(&o), "{}\n");
    assert!(stderr(&o).contains("--export execute"), "{}", stderr(&o));
    let o = palisade(&["run", &tool, "--export", "nope"], None);
    assert_eq!(o.status.code(), Some(13), "missing_export");
}

/// Issue 25: per-call limits from the command line, lower than the policy's only.
#[test]
fn per_call_limits_from_the_command_line() {
    let looping = "tests/fixtures/js/infinite_loop.js";
    let o = palisade(&["run", looping, "--timeout", "100ms"], None);
    assert_eq!(o.status.code(), Some(21), "timeout: {}", stderr(&o));
    let o = palisade(&["run", looping, "--fuel", "5000000", "--json"], None);
    assert_eq!(o.status.code(), Some(20), "fuel_exhausted");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["receipt"]["fuel_used"], 5_000_000);
    let o = palisade(&["run", looping, "--timeout", "10s", "--json"], None);
    assert_eq!(o.status.code(), Some(31), "policy_denied");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["error"]["fix"]["key"], "limits.timeout");
    let o = palisade(
        &[
            "run",
            "tests/fixtures/js/memory_bomb.js",
            "--memory",
            "16MiB",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(22), "memory_limit");
}

/// Issue 25: an error in `--json` output carries an absolute `docs_url` to its code's section;
/// `$PALISADE_DOCS_URL` moves the base (an operator's own copy of the table).
#[test]
fn json_errors_carry_an_absolute_docs_url() {
    let looping = "tests/fixtures/js/infinite_loop.js";
    let o = palisade(&["run", looping, "--fuel", "5000000", "--json"], None);
    assert_eq!(o.status.code(), Some(20), "fuel_exhausted");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["error"]["docs_url"],
        format!("{}#fuel_exhausted", palisade::DEFAULT_DOCS_URL)
    );
    let o = Command::new(palisade_bin())
        .args(["run", looping, "--fuel", "5000000", "--json"])
        .current_dir(root())
        .env(
            "PALISADE_DOCS_URL",
            "https://ops.example.test/palisade/errors.html/",
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(20), "fuel_exhausted");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["error"]["docs_url"],
        "https://ops.example.test/palisade/errors.html#fuel_exhausted"
    );
}

/// Issue 25: `palisade run` prints console lines on stderr as the script writes them: the line
/// is there while the call still runs (its deadline is half a minute away).
#[test]
fn run_prints_console_lines_as_they_happen() {
    use std::io::BufRead;
    let dir = crate::support::scratch_dir("cli-live");
    let script = dir.join("live.js");
    std::fs::write(
        &script,
        "export default () => { console.log('working'); for (;;) {} };",
    )
    .unwrap();
    let policy = dir.join("slow.toml");
    std::fs::write(
        &policy,
        "[limits]\ntimeout = \"30s\"\nfuel = 10_000_000_000_000\n",
    )
    .unwrap();
    let mut child = Command::new(palisade_bin())
        .args(["run", script.to_str().unwrap(), "--policy"])
        .arg(&policy)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(first, "working");
    assert!(running, "the line came only when the call had ended");
}

/// Issue 25: `palisade run --now --seed --config --file` reach the script where the policy's
/// `[overrides]` allows them; `--timeout` past its ceiling is refused with the fix.
#[test]
fn run_takes_the_call_options_the_policy_allows() {
    let dir = crate::support::scratch_dir("cli-options");
    let script = dir.join("opts.js");
    std::fs::write(
        &script,
        "export default async () => [new Date().toISOString(), config.get('region'),
           await fs.readFile('/scratch/in.txt')];",
    )
    .unwrap();
    let data = dir.join("data.txt");
    std::fs::write(&data, "from the host").unwrap();
    let policy = dir.join("opts.toml");
    std::fs::write(
        &policy,
        "[limits]\ntimeout = \"1s\"\n[config]\nregion = \"eu\"\n[fs.scratch]\nguest = \"/scratch\"\n\
         [overrides]\ntimeout = \"10s\"\nnow = true\nseed = true\nconfig = [\"region\"]\n",
    )
    .unwrap();
    let file = format!("in.txt={}", data.display());
    let (script, policy) = (script.to_str().unwrap(), policy.to_str().unwrap());
    let o = palisade(
        &[
            "run",
            script,
            "--policy",
            policy,
            "--now",
            "2024-01-01T00:00:00Z",
            "--seed",
            "7",
            "--config",
            "region=us",
            "--file",
            &file,
            "--timeout",
            "5s",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "[\"2024-01-01T00:00:00.000Z\",\"us\",\"from the host\"]\n"
    );
    let o = palisade(
        &["run", script, "--policy", policy, "--timeout", "11s"],
        None,
    );
    assert_eq!(o.status.code(), Some(31), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error[policy_denied]"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("overrides.timeout = \"11s\""),
        "{}",
        stderr(&o)
    );
}

/// Issue 25: `[http] rate` holds across `palisade run` processes that share a data directory:
/// four processes each trying three requests under `rate = "4/h"` send four in all (each
/// process alone would send three, twelve in all). A token refills every 15 minutes, far past
/// the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_rate_holds_across_processes_sharing_a_data_directory() {
    let up = crate::upstream::Upstream::start().await;
    let port = up.port();
    let dir = crate::support::scratch_dir("cli-rate");
    let script = dir.join("three.js");
    std::fs::write(
        &script,
        format!(
            "export default async () => {{ let sent = 0;
               for (let i = 0; i < 3; i++) {{
                 try {{ await fetch('http://localhost:{port}/api/hello'); sent++; }}
                 catch (e) {{ if (e.rule !== 'http.rate') throw e; }} }}
               return sent; }};"
        ),
    )
    .unwrap();
    let policy = dir.join("rated.toml");
    std::fs::write(
        &policy,
        format!(
            "[limits]\ntimeout = \"60s\"\n[http]\nallow_private_hosts = [\"localhost\"]\n\
             rate = \"4/h\"\n[[http.allow]]\nurl = \"http://localhost:{port}/api/\"\n"
        ),
    )
    .unwrap();
    let data = dir.join("data");
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(palisade_bin())
                .args(["run", script.to_str().unwrap(), "--policy"])
                .arg(&policy)
                .env("PALISADE_DATA_DIR", &data)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let mut sent = 0;
    for o in &outputs {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
        sent += stdout(o).trim().parse::<usize>().unwrap();
    }
    assert_eq!(sent, 4);
    assert_eq!(up.seen().len(), 4);
    // The bucket is the data directory's: another directory has its own.
    let o = Command::new(palisade_bin())
        .args(["run", script.to_str().unwrap(), "--policy"])
        .arg(&policy)
        .env("PALISADE_DATA_DIR", dir.join("other"))
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "3\n", "{}", stderr(&o));
}

/// `palisade types` prints `Policy::typescript()`, or writes it with `-o`; a policy that does
/// not load is `invalid_policy` (exit 30), and the command after it works.
#[test]
fn types_prints_or_writes_a_policys_declarations() {
    let path = "policies/sandbox.toml";
    let expected = palisade::Policy::from_file(root().join(path))
        .unwrap()
        .typescript();
    let printed = palisade(&["types", "--policy", path], None);
    assert_eq!(printed.status.code(), Some(0), "{}", stderr(&printed));
    assert_eq!(stdout(&printed), expected);
    let file = crate::support::scratch_dir("cli-types").join("sandbox.d.ts");
    let written = palisade(
        &["types", "--policy", path, "-o", file.to_str().unwrap()],
        None,
    );
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
    let missing = palisade(&["types", "--policy", "policies/no-such-policy.toml"], None);
    assert_eq!(missing.status.code(), Some(30), "{}", stderr(&missing));
    assert!(stderr(&missing).contains("error[invalid_policy]"));
    let default = palisade(&["types"], None);
    assert_eq!(default.status.code(), Some(0), "{}", stderr(&default));
    assert!(stdout(&default).contains("`default`"));
}

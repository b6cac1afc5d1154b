//! Regression tests for the containment escapes (docs/reliability.md), call group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.

use crate::support::*;

/// Item 1: empty console lines cost their record against `limits.console`, so a flood of them
/// keeps nothing past the cap and the call ends at its deadline, not seconds later.
#[tokio::test]
async fn escape_01_empty_console_lines_are_counted() {
    let p = policy("[limits]\nconsole = \"0B\"\ntimeout = \"300ms\"\nfuel = 1_000_000_000_000\n");
    let flood = palisade::Script::new(
        "flood.js",
        "export default () => { for (;;) { console.log(); console.log(''); } }",
    );
    let outcome = PALISADE.run(&p, &flood, "null").await;
    assert_eq!(code(&outcome), "timeout");
    assert_eq!(outcome.logs.len(), 1, "only the truncation marker is kept");
    assert!(outcome.logs[0].message.contains("whole line(s)"));
    assert!(outcome.receipt.console_lines_dropped > 1000);
    assert!(
        outcome.receipt.wall_time_us < 2_000_000,
        "the outcome is assembled at once: {:?}",
        outcome.receipt
    );

    // Under the default cap (64 KiB), 100,000 empty lines keep at most 64 KiB / 32 of them.
    let many = palisade::Script::new(
        "many.js",
        "export default () => { for (let i = 0; i < 100000; i++) console.log(); return 1; }",
    );
    let outcome = PALISADE
        .run(&palisade::Policy::builtin_default(), &many, "null")
        .await;
    assert_eq!(output(&outcome), "1");
    assert_eq!(outcome.logs.len(), (64 << 10) / 32 + 1);
    assert_eq!(
        outcome.receipt.console_lines_dropped,
        100_000 - (64 << 10) / 32
    );
    assert_next_call_works().await;
}

/// Item 12: compiling a source script to bytecode (on a cache miss) and running it share one
/// fuel budget, and the receipt counts both.
#[tokio::test]
async fn escape_12_parsing_and_running_share_one_fuel_budget() {
    // A long top level costs fuel to compile; the export costs about as much to run.
    let mut source = String::from("let a = 0;\n");
    for i in 0..20_000 {
        source.push_str(&format!("a += {i};\n"));
    }
    source.push_str(
        "export default (n) => { let s = a; for (let i = 0; i < n; i++) s += i; return s; };\n",
    );
    let unique = |tag: &str| palisade::Script::new(format!("{tag}.js"), source.clone());
    let roomy = policy("[limits]\nfuel = 100_000_000_000\ntimeout = \"30s\"\n");
    // Measure each part alone: a first call (compile + run) and a second (run only).
    let first = PALISADE.run(&roomy, &unique("measure"), "100000").await;
    output(&first);
    let second = PALISADE.run(&roomy, &unique("measure"), "100000").await;
    output(&second);
    let compile = first.receipt.fuel_used - second.receipt.fuel_used;
    let run = second.receipt.fuel_used;
    assert!(compile > 1_000_000 && run > 1_000_000, "{compile} {run}");
    // A budget that fits each part alone but not both.
    let budget = compile.max(run) + compile.min(run) / 2;
    let tight = policy(&format!("[limits]\nfuel = {budget}\ntimeout = \"30s\"\n"));
    let outcome = PALISADE.run(&tight, &unique("tight"), "100000").await;
    assert_eq!(code(&outcome), "fuel_exhausted");
    assert_eq!(outcome.receipt.fuel_used, budget);
    assert_next_call_works().await;
}

/// Item 23: a script that catches the out-of-memory error and then fails in its own way is
/// reported by what it failed with; an uncaught out-of-memory error stays `memory_limit`.
#[tokio::test]
async fn escape_23_a_recovered_out_of_memory_is_not_the_reported_failure() {
    let p = policy("[limits]\nmemory = \"16MiB\"\nfuel = 10_000_000_000\ntimeout = \"10s\"\n");
    let script = palisade::Script::new(
        "recovers.js",
        "export default () => {
           let hog = [];
           try { for (;;) hog.push(new Array(100000).fill(1)); } catch (e) { hog = null; }
           throw new TypeError('my own failure');
         };",
    );
    let outcome = PALISADE.run(&p, &script, "null").await;
    assert_eq!(code(&outcome), "guest_exception");
    match outcome.error().unwrap() {
        palisade::Error::GuestException { name, message, .. } => {
            assert_eq!(
                (name.as_str(), message.as_str()),
                ("TypeError", "my own failure")
            );
        }
        other => panic!("{other:?}"),
    }
    // Rethrowing the out-of-memory error itself is still a memory limit.
    let rethrows = palisade::Script::new(
        "rethrows.js",
        "export default () => {
           let hog = [];
           try { for (;;) hog.push(new Array(100000).fill(1)); } catch (e) { hog = null; throw e; }
         };",
    );
    let outcome = PALISADE.run(&p, &rethrows, "null").await;
    assert_eq!(code(&outcome), "memory_limit");
    assert_next_call_works().await;
}

/// Item 11: a script's error message and stack are bounded by `limits.output`, like its result.
#[tokio::test]
async fn escape_11_error_messages_are_bounded_by_the_output_limit() {
    let p = policy("[limits]\noutput = \"64KiB\"\nmemory = \"128MiB\"\n");
    let script = palisade::Script::new(
        "long_error.js",
        "export default () => { throw new Error('x'.repeat(4 << 20)); };",
    );
    let outcome = PALISADE.run(&p, &script, "null").await;
    assert_eq!(code(&outcome), "guest_exception");
    let palisade::Error::GuestException { message, stack, .. } = outcome.error().unwrap() else {
        panic!("{:?}", outcome.error());
    };
    let total = message.len() + stack.as_ref().map_or(0, String::len);
    assert!(total <= 64 << 10, "{total}");
    assert!(
        message.ends_with("bytes cut at limits.output]"),
        "{}",
        &message[message.len() - 60..]
    );
    assert!(message.starts_with("xxxx"));
    // The whole outcome, as the CLI prints it, stays near the limit too.
    let json = serde_json::to_string(&outcome).unwrap();
    assert!(json.len() < (64 << 10) + 4096, "{}", json.len());
    assert_next_call_works().await;
}

/// Item 13: input nested past 256 levels is `invalid_input`, not a stack overflow blamed on
/// the script; 256 levels are read under the smallest stack a policy can set.
#[tokio::test]
async fn escape_13_deeply_nested_input_is_invalid_input() {
    let deep = format!("{}{}", "[".repeat(3000), "]".repeat(3000));
    let unclosed = "[".repeat(3000);
    let objects = format!("{}1{}", r#"{"a":"#.repeat(3000), "}".repeat(3000));
    let just_past = format!("{}{}", "[".repeat(257), "]".repeat(257));
    for input in [&deep, &unclosed, &objects, &just_past] {
        let outcome = run(&palisade::Policy::builtin_default(), "echo.js", input).await;
        assert_eq!(code(&outcome), "invalid_input", "{}", &input[..20]);
        assert!(outcome.error().unwrap().fix().is_none());
    }
    // Brackets inside strings do not count.
    let stringy = format!("[\"{}\"]", "[".repeat(5000));
    let outcome = run_source("export default (x) => x[0].length;", &stringy).await;
    assert_eq!(output(&outcome), "5000");

    let at_limit = format!("{}{}", "[".repeat(256), "]".repeat(256));
    let count = palisade::Script::new(
        "depth.js",
        "export default (x) => { let d = 0; while (Array.isArray(x) && x.length) { x = x[0]; d++; } return d + 1; };",
    );
    for stack in ["64KiB", "512KiB"] {
        let p = policy(&format!("[limits]\nstack = \"{stack}\"\n"));
        let outcome = PALISADE.run(&p, &count, &at_limit).await;
        assert_eq!(output(&outcome), "256", "{stack}");
    }
    assert_next_call_works().await;
}

/// Item 8: request headers past wasi:http's 128 KiB limit are a network error the script can
/// catch, in both guests (they trapped as `internal`); uncaught, the call is `guest_exception`.
#[tokio::test]
async fn escape_08_oversized_request_headers_are_a_catchable_error() {
    let source = "export default async () => {
        try {
          await fetch('http://localhost:9/api/x', { headers: { 'x-big': 'a'.repeat(200000) } });
          return 'sent';
        } catch (e) {
          return [e.name, e.code, e.message.includes('SizeExceeded')];
        }
      };";
    let with_http = policy(
        "[http]\nallow_private = [\"127.0.0.1/32\"]\n[[http.allow]]\nurl = \"http://localhost:9/api/\"\n",
    );
    for p in [&palisade::Policy::builtin_default(), &with_http] {
        let outcome = PALISADE
            .run(p, &palisade::Script::new("headers.js", source), "null")
            .await;
        assert_eq!(output(&outcome), r#"["NetworkError","header",true]"#);
        // Many small headers count their records too.
        let many = "export default async () => {
            const h = new Headers();
            for (let i = 0; i < 3000; i++) h.append('x-h' + i, 'v');
            await fetch('http://localhost:9/api/x', { headers: h });
          };";
        let outcome = PALISADE
            .run(p, &palisade::Script::new("many.js", many), "null")
            .await;
        assert_eq!(code(&outcome), "guest_exception");
        assert!(
            outcome
                .error()
                .unwrap()
                .to_string()
                .contains("SizeExceeded")
        );
    }
    assert_next_call_works().await;
}

/// Item 4: one allocation is zeroed in one wasm instruction that no fuel slice interrupts; a
/// growth the host could not touch before the deadline ends the call at once, as `timeout`,
/// without the memory being granted.
#[tokio::test]
async fn escape_04_a_large_allocation_near_the_deadline_ends_the_call() {
    let p = policy("[limits]\nmemory = \"1GiB\"\ntimeout = \"300ms\"\nfuel = 1_000_000_000_000\n");
    let script = palisade::Script::new(
        "late_alloc.js",
        "export default () => {
           const t = Date.now(); while (Date.now() - t < 250) {}
           return new Uint8Array(1000 * 1024 * 1024).length;
         };",
    );
    let outcome = PALISADE.run(&p, &script, "null").await;
    assert_eq!(code(&outcome), "timeout");
    assert!(
        outcome.receipt.peak_memory_bytes < 64 << 20,
        "the growth was refused: {:?}",
        outcome.receipt
    );
    // With time to spare, the same allocation is granted.
    let early = palisade::Script::new(
        "early_alloc.js",
        "export default () => new Uint8Array(200 * 1024 * 1024).length;",
    );
    let roomy = policy("[limits]\nmemory = \"1GiB\"\ntimeout = \"10s\"\n");
    let outcome = PALISADE.run(&roomy, &early, "null").await;
    assert_eq!(output(&outcome), (200u64 << 20).to_string());
    assert_next_call_works().await;
}

/// Item 8: a result or an error of 128 MiB or more (wasmtime's default cap on what one call
/// copies between guest and host) is checked against the policy's limits, not `internal`.
#[tokio::test]
async fn escape_08_results_and_errors_past_128_mib_keep_their_codes() {
    let roomy = "[limits]\nmemory = \"1GiB\"\ntimeout = \"30s\"\nfuel = 100_000_000_000\n";
    let big = palisade::Script::new(
        "big_result.js",
        "export default () => 'x'.repeat(130 * 1024 * 1024);",
    );
    let p = policy(&format!("{roomy}output = \"256MiB\"\n"));
    let outcome = PALISADE.run(&p, &big, "null").await;
    assert_eq!(output(&outcome).len(), (130 << 20) + 2);
    drop(outcome);
    let p = policy(&format!("{roomy}output = \"64MiB\"\n"));
    let outcome = PALISADE.run(&p, &big, "null").await;
    assert_eq!(code(&outcome), "output_too_large");
    let thrown = palisade::Script::new(
        "big_error.js",
        "export default () => { throw new Error('x'.repeat(130 * 1024 * 1024)); };",
    );
    let outcome = PALISADE.run(&p, &thrown, "null").await;
    assert_eq!(code(&outcome), "guest_exception");
    assert_next_call_works().await;
}

/// A compiled script whose `run` export, in its core module, starts with `code` (the rest of
/// the body becomes `nop`s): a hand-made component that passes every load-time check.
async fn forged(code: &[u8]) -> palisade::Script {
    let p = palisade::Policy::builtin_default();
    let script = palisade::Script::new("forged.js", "export default (x) => x;");
    let mut wasm = PALISADE.compile(&p, &script).await.unwrap();
    palisade_tests::patch_run(&mut wasm, code);
    palisade::Script::from_component(wasm).unwrap()
}

/// Item 8: in a forged compiled script, `unreachable` and an out-of-bounds load are
/// `guest_trap` (they were `internal` and `stack_overflow`).
#[tokio::test]
async fn escape_08_wasm_traps_of_a_forged_component_are_guest_traps() {
    let p = palisade::Policy::builtin_default();
    let unreachable = forged(&[0x00]).await;
    let outcome = PALISADE.run(&p, &unreachable, "1").await;
    assert_eq!(code(&outcome), "guest_trap");
    assert!(outcome.error().unwrap().to_string().contains("unreachable"));
    // i32.const -16; i32.load; drop; unreachable
    let out_of_bounds = forged(&[0x41, 0x70, 0x28, 0x02, 0x00, 0x1a, 0x00]).await;
    let outcome = PALISADE.run(&p, &out_of_bounds, "1").await;
    assert_eq!(code(&outcome), "guest_trap");
    assert!(
        outcome
            .error()
            .unwrap()
            .to_string()
            .contains("out of bounds")
    );
    assert_next_call_works().await;
}

/// The peak resident memory, in KiB, of the real `palisade` binary running `args` (as
/// `/usr/bin/time` reports it), and the command's exit code.
pub fn peak_rss_kib(args: &[&str]) -> (u64, i32) {
    let out = std::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg("peak-rss-kib=%M")
        .arg(crate::cli::palisade_bin())
        .args(args)
        .current_dir(root())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("/usr/bin/time runs (scripts/setup.sh installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("peak-rss-kib="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    // `time` exits with the command's code.
    (kib, out.status.code().unwrap_or(-1))
}

/// Item 1, host side: a console flood keeps the process within its baseline, the guest's
/// memory limit, the console cap and a documented constant (docs/reliability.md: 32 MiB).
#[test]
fn escape_01_a_console_flood_keeps_the_host_within_its_limits() {
    let dir = scratch_dir("console-rss");
    std::fs::write(dir.join("echo.js"), "export default (x) => x;").unwrap();
    std::fs::write(
        dir.join("flood.js"),
        "export default () => { for (;;) { console.log(); console.log('x'); } };",
    )
    .unwrap();
    std::fs::write(
        dir.join("p.toml"),
        "[limits]\nconsole = \"1MiB\"\nmemory = \"64MiB\"\ntimeout = \"2s\"\nfuel = 1_000_000_000_000\n",
    )
    .unwrap();
    let path = |f: &str| dir.join(f).display().to_string();
    let (baseline, code) = peak_rss_kib(&["run", &path("echo.js"), "--input", "1"]);
    assert_eq!(code, 0);
    let (flood, code) = peak_rss_kib(&["run", &path("flood.js"), "--policy", &path("p.toml")]);
    assert_eq!(code, 21, "timeout");
    let bound = baseline + (64 << 10) + 2 * 1024 + (32 << 10);
    assert!(
        flood <= bound,
        "{flood} KiB over {bound} KiB (baseline {baseline})"
    );
}

/// Issue 22: ordinary recursion 10,000 deep works under the default policy (Node manages about
/// 10,000); past what the stack holds the call ends as `stack_overflow` with its fix, and the
/// guest's shadow stack always outlasts the native one, so the code is never a trap.
#[tokio::test]
async fn recursion_ten_thousand_deep_works_under_the_default_policy() {
    let source = "const f = (n) => n === 0 ? 0 : 1 + f(n - 1); export default (n) => f(n);";
    let script = palisade::Script::new("recurse.js", source);
    let default = palisade::Policy::builtin_default();
    let outcome = PALISADE.run(&default, &script, "10000").await;
    assert_eq!(output(&outcome), "10000");
    let outcome = PALISADE.run(&default, &script, "40000").await;
    assert_eq!(code(&outcome), "stack_overflow");
    assert_eq!(outcome.error().unwrap().fix().unwrap().value, "\"16MiB\"");
    // At the largest stack a policy can set, the native stack still runs out first.
    let deepest = policy("[limits]\nstack = \"16MiB\"\n");
    let outcome = PALISADE.run(&deepest, &script, "13000").await;
    assert_eq!(output(&outcome), "13000");
    let outcome = PALISADE.run(&deepest, &script, "40000").await;
    assert_eq!(code(&outcome), "stack_overflow");
    assert!(outcome.error().unwrap().fix().is_none());
    assert_next_call_works().await;
}

/// Issue 22: a stack overflow the script catches is a `RangeError`, as in Node and QuickJS-ng,
/// and the script goes on running; under every stack size, QuickJS's own check trips before
/// either wasm stack runs out.
#[tokio::test]
async fn a_stack_overflow_is_catchable() {
    let source = "const f = (n) => n === 0 ? 0 : 1 + f(n - 1);
      export default (n) => {
        let caught;
        try { f(n); } catch (e) { caught = [e instanceof RangeError, e.message]; }
        return [caught, f(10)];
      };";
    let script = palisade::Script::new("catches.js", source);
    for stack in ["64KiB", "512KiB", "12MiB", "16MiB"] {
        let p = policy(&format!("[limits]\nstack = \"{stack}\"\n"));
        let outcome = PALISADE.run(&p, &script, "1000000").await;
        assert_eq!(
            output(&outcome),
            r#"[[true,"Maximum call stack size exceeded"],10]"#,
            "{stack}"
        );
    }
    assert_next_call_works().await;
}

/// Issue 22: the default fuel fits ordinary CPU-bound work (a 2 MiB typed array and 50,000
/// small objects took 1.1e9 units, past the old default); work that never ends stops at the
/// deadline, and a memory bomb is `memory_limit`, not whichever budget ran out first.
#[tokio::test]
async fn default_limits_fit_ordinary_cpu_bound_work() {
    let default = palisade::Policy::builtin_default();
    // The default fuel with a longer deadline, so that a loaded machine cannot make this a
    // timeout: what is tested is that the work fits the default fuel.
    let default_fuel = policy("[limits]\ntimeout = \"60s\"\n");
    let work = palisade::Script::new(
        "work.js",
        "export default () => {
           const bytes = new Uint8Array(2 << 20);
           for (let i = 0; i < bytes.length; i++) bytes[i] = i & 255;
           const rows = [];
           for (let i = 0; i < 50000; i++) rows.push({ id: i, name: 'row ' + i });
           let sum = 0;
           for (const r of rows) sum += r.id + bytes[r.id % bytes.length];
           return sum;
         };",
    );
    let outcome = PALISADE.run(&default_fuel, &work, "null").await;
    output(&outcome);
    assert!(
        outcome.receipt.fuel_used > 1_000_000_000,
        "{:?}",
        outcome.receipt
    );
    let outcome = run(&default, "infinite_loop.js", "null").await;
    assert_eq!(code(&outcome), "timeout");
    let outcome = run(&default, "memory_bomb.js", "null").await;
    assert_eq!(code(&outcome), "memory_limit");
    assert_next_call_works().await;
}

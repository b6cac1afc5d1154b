//! Scripts compiled into components of their own (`Palisade::compile`, `palisade compile`):
//! the same results as their source, fresh state per call, the same limits, and typed refusals
//! for top levels that a snapshot would freeze and for files that are not compiled scripts.

use crate::support::*;
use palisade::{Error, Policy, Script};

async fn compile(source: &str) -> Result<Vec<u8>, Error> {
    PALISADE
        .compile(&Policy::builtin_default(), &Script::new("top.js", source))
        .await
}

async fn compiled_fixture(name: &str) -> Script {
    let wasm = PALISADE
        .compile(&Policy::builtin_default(), &fixture(name))
        .await
        .expect("the fixture compiles");
    Script::from_component(wasm).expect("a compiled script loads")
}

#[tokio::test]
async fn compiled_scripts_give_their_source_results_with_fresh_state() {
    let p = Policy::builtin_default();
    let source = fixture("stateful_top_level.js");
    let compiled = compiled_fixture("stateful_top_level.js").await;
    assert!(compiled.is_compiled() && !source.is_compiled());
    assert_eq!(compiled.name(), "stateful_top_level.js");
    assert_eq!(compiled.source(), source.source());
    let input = r#"{"n":12,"name":"Ada"}"#;
    let expected = r#"{"calls":1,"square":144,"greeting":"Hello, Ada!","ready":"ready"}"#;
    let from_source = PALISADE.run(&p, &source, input).await;
    assert_eq!(output(&from_source), expected);
    for _ in 0..3 {
        // The counter the top level defined starts from its snapshot value at every call.
        let outcome = PALISADE.run(&p, &compiled, input).await;
        assert_eq!(output(&outcome), expected);
        assert_eq!(outcome.logs.len(), 1);
        assert_eq!(outcome.logs[0].message, "call 1");
        assert!(
            outcome.receipt.fuel_used < from_source.receipt.fuel_used,
            "a compiled script skips loading and evaluating its module ({} vs {})",
            outcome.receipt.fuel_used,
            from_source.receipt.fuel_used
        );
    }
    // Other exports; the clock and random numbers work inside them.
    let spin = PALISADE.call(&p, &compiled, "spin", "null").await;
    assert_eq!(output(&spin), r#"{"random":"number","now":"number"}"#);
    let missing = PALISADE.call(&p, &compiled, "absent", "null").await;
    assert_eq!(code(&missing), "missing_export");
    // Precompiling a compiled script loads it; the script is unchanged.
    let again = PALISADE.precompile(&p, &compiled).await.unwrap();
    assert_eq!(output(&PALISADE.run(&p, &again, input).await), expected);
}

#[tokio::test]
async fn compiled_scripts_run_under_the_callers_policy_limits() {
    let compiled = compiled_fixture("stateful_top_level.js").await;
    let tight = policy("[limits]\nfuel = 5_000_000\n");
    let looping = PALISADE.call(&tight, &compiled, "spin", r#""loop""#).await;
    assert_eq!(code(&looping), "fuel_exhausted");
    let short = policy("[limits]\ntimeout = \"50ms\"\nfuel = 100_000_000_000\n");
    let looping = PALISADE.call(&short, &compiled, "spin", r#""loop""#).await;
    assert_eq!(code(&looping), "timeout");
    let outcome = PALISADE
        .run(&Policy::builtin_default(), &compiled, r#"{"n":1}"#)
        .await;
    assert_eq!(
        output(&outcome),
        r#"{"calls":1,"square":1,"greeting":"Hello, undefined!","ready":"ready"}"#
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn top_levels_that_a_snapshot_would_freeze_are_not_compilable() {
    for (what, top) in [
        ("wall clock", "const t = Date.now();"),
        ("date", "const d = new Date();"),
        ("Math.random", "const r = Math.random();"),
        ("random bytes", "crypto.getRandomValues(new Uint8Array(8));"),
        ("random UUID", "const id = crypto.randomUUID();"),
        ("timer", "setTimeout(() => {}, 1);"),
        ("console", "console.log('at the top');"),
        ("fetch", "await fetch('http://127.0.0.1:9/');"),
        ("pending forever", "await new Promise(() => {});"),
    ] {
        let error = compile(&format!("{top}\nexport default () => 1;\n"))
            .await
            .expect_err(what);
        assert_eq!(error.code(), "not_compilable", "{what}: {error}");
    }
}

#[tokio::test]
async fn a_top_level_request_is_not_compilable_in_either_guest() {
    // A request left in flight at the top level would leave a host handle in the snapshot
    // that no later instance has: every call of the compiled script would fail.
    let plain = Policy::builtin_default();
    let full = policy("[config]\nregion = \"eu\"\n");
    for p in [&plain, &full] {
        for top in [
            "await fetch('http://127.0.0.1:9/').catch(() => null);",
            "fetch('http://127.0.0.1:9/').catch(() => null);",
        ] {
            let source = format!("{top}\nexport default () => 1;\n");
            let error = PALISADE
                .compile(p, &Script::new("top.js", source.as_str()))
                .await
                .expect_err(top);
            assert_eq!(
                error.code(),
                "not_compilable",
                "{}: {top}: {error}",
                p.name()
            );
            // From source the same script runs.
            let outcome = PALISADE
                .run(p, &Script::new("top.js", source), "null")
                .await;
            assert_eq!(output(&outcome), "1");
        }
    }
}

#[tokio::test]
async fn the_compiling_policys_globals_exist_at_the_top_level_but_cannot_be_used() {
    let p = policy(
        "[config]\nregion = \"eu-west\"\n\
         [kv]\nnamespace = \"reserved\"\n[kv.buckets]\napp = \"rw\"\n\
         [capabilities]\nglobal = \"maia\"\n[capabilities.allow.do]\nmax_calls = 3\n",
    );
    for (what, top, named) in [
        ("typeof", "const seen = typeof config;", "`config`"),
        ("a read", "const region = config.get('region');", "`config`"),
        (
            "a caught read",
            "let k; try { k = kv; } catch { k = null; }",
            "`kv`",
        ),
        ("a write", "globalThis.kv = 1;", "`kv`"),
        ("the bridge", "const bridge = maia;", "`maia`"),
        ("a deletion", "delete globalThis.config;", "`config`"),
        (
            "a redefinition",
            "Object.defineProperty(globalThis, 'kv', { value: 1 });",
            "`kv`",
        ),
        (
            "a sealed global object",
            "Object.preventExtensions(globalThis);",
            "non-extensible",
        ),
    ] {
        let script = Script::new("top.js", format!("{top}\nexport default () => 1;\n"));
        let error = PALISADE.compile(&p, &script).await.expect_err(what);
        assert_eq!(error.code(), "not_compilable", "{what}: {error}");
        assert!(error.to_string().contains(named), "{what}: {error}");
        // From source the same script runs.
        assert_eq!(
            output(&PALISADE.run(&p, &script, "null").await),
            "1",
            "{what}"
        );
    }
    // Their names are there at the top level, as from source; the export uses their values.
    let script = Script::new(
        "uses.js",
        "const names = ['config', 'kv', 'maia', 'fs'].map((n) => n in globalThis);\n\
         export default () => ({ names, region: config.get('region'), kv: typeof kv.get });\n",
    );
    let compiled = Script::from_component(PALISADE.compile(&p, &script).await.unwrap()).unwrap();
    // `fs` exists too, refusing: capability globals exist under every policy.
    let expected = r#"{"names":[true,true,true,true],"region":"eu-west","kv":"function"}"#;
    assert_eq!(output(&PALISADE.run(&p, &script, "null").await), expected);
    assert_eq!(output(&PALISADE.run(&p, &compiled, "null").await), expected);
}

#[tokio::test]
async fn scratch_files_and_the_default_bridge_are_reserved_too() {
    let p = policy(
        "[fs.scratch]\nguest = \"/scratch\"\n\
         [capabilities]\n[capabilities.allow.do]\nmax_calls = 3\n",
    );
    for (top, named) in [("const f = fs;", "`fs`"), ("const h = host;", "`host`")] {
        let script = Script::new("top.js", format!("{top}\nexport default () => 1;\n"));
        let error = PALISADE.compile(&p, &script).await.expect_err(top);
        assert_eq!(error.code(), "not_compilable", "{top}: {error}");
        assert!(error.to_string().contains(named), "{top}: {error}");
    }
    // An `[fs]` table without a mount or scratch grants no `fs`, so none is reserved: the
    // refusing `fs` that every call without the grant has is there, compiled as from source.
    let script = Script::new(
        "fs.js",
        "const seen = typeof fs;\nexport default () => seen;\n",
    );
    let compiled = PALISADE
        .compile(&policy("[fs]\n"), &script)
        .await
        .expect("nothing reserved");
    let compiled = Script::from_component(compiled).unwrap();
    assert_eq!(
        output(&PALISADE.run(&policy("[fs]\n"), &compiled, "null").await),
        r#""object""#
    );
}

#[tokio::test]
async fn a_compiled_top_level_that_replaces_builtins_still_gets_the_policys_globals() {
    // From source these globals exist before the top level runs; compiled, they are installed
    // at each call, after it ran: how they are made must not depend on what it changed.
    let p = policy(
        "[config]\nregion = \"eu-west\"\n\
         [kv]\nnamespace = \"tampered\"\n[kv.buckets]\napp = \"rw\"\n\
         [fs.scratch]\nguest = \"/scratch\"\n\
         [capabilities]\n[capabilities.allow.do]\nmax_calls = 3\n",
    );
    let script = Script::new(
        "tamper.js",
        "Object.freeze = () => { throw new Error('replaced'); };\n\
         Object.create = () => { throw new Error('replaced'); };\n\
         globalThis.Proxy = null;\n\
         for (const key of ['get', 'getAll', 'readFile', 'config', 'kv', 'fs', 'host']) {\n\
           Object.defineProperty(Object.prototype, key, { set() {}, configurable: true });\n\
         }\n\
         export default () => ({\n\
           config: config.get('region'),\n\
           kv: typeof kv.get,\n\
           fs: typeof fs.readFile,\n\
           host: typeof host.anything,\n\
         });\n",
    );
    let expected = r#"{"config":"eu-west","kv":"function","fs":"function","host":"function"}"#;
    assert_eq!(output(&PALISADE.run(&p, &script, "null").await), expected);
    let compiled = Script::from_component(PALISADE.compile(&p, &script).await.unwrap()).unwrap();
    assert_eq!(output(&PALISADE.run(&p, &compiled, "null").await), expected);
}

#[tokio::test]
async fn top_level_errors_and_limits_keep_their_codes() {
    let error = compile("export default (").await.unwrap_err();
    assert_eq!(error.code(), "guest_syntax");
    let error = compile("throw new TypeError('at the top');")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::GuestException { name, message, .. }
            if name == "TypeError" && message == "at the top"),
        "{error:?}"
    );
    let tight = policy("[limits]\nfuel = 5_000_000\n");
    let error = PALISADE
        .compile(&tight, &Script::new("loop.js", "for (;;) {}"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "fuel_exhausted");
    let small = policy("[limits]\nmemory = \"16MiB\"\n");
    let error = PALISADE
        .compile(
            &small,
            &Script::new(
                "big.js",
                "const a = []; for (;;) a.push(new Array(1e5).fill(1));",
            ),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), "memory_limit", "{error}");
}

#[tokio::test]
async fn files_that_are_not_compiled_scripts_are_refused() {
    let wasm = compile("export default (x) => x;").await.unwrap();
    let refused = |bytes: Vec<u8>| Script::from_component(bytes).unwrap_err().code();
    assert_eq!(refused(b"export default 1;".to_vec()), "invalid_component");
    // A core module, not a component.
    assert_eq!(refused(b"\0asm\x01\0\0\0".to_vec()), "invalid_component");
    // Cut short.
    assert_eq!(
        refused(wasm[..wasm.len() / 2].to_vec()),
        "invalid_component"
    );
    // Without the marker section (renamed).
    let marker_at = wasm
        .windows(b"palisade-compiled".len())
        .rposition(|w| w == b"palisade-compiled")
        .unwrap();
    let mut unmarked = wasm.clone();
    unmarked[marker_at..marker_at + 17].copy_from_slice(b"palisade-renamed!");
    let error = Script::from_component(unmarked).unwrap_err();
    assert_eq!(error.code(), "invalid_component");
    assert!(
        error.to_string().contains("no `palisade-compiled` section"),
        "{error}"
    );
    // Compiled by another build of the guest.
    let text = String::from_utf8_lossy(&wasm[marker_at..]).into_owned();
    let guest = text.split("\"guest\":\"").nth(1).unwrap()[..64].to_owned();
    let mut other = wasm.clone();
    let at = marker_at
        + wasm[marker_at..]
            .windows(64)
            .position(|w| w == guest.as_bytes())
            .unwrap();
    other[at..at + 64].copy_from_slice(&[b'0'; 64]);
    let error = Script::from_component(other).unwrap_err();
    assert_eq!(error.code(), "invalid_component");
    assert!(error.to_string().contains("another build"), "{error}");
    // The untouched component loads and runs.
    let script = Script::from_component(wasm).unwrap();
    let outcome = PALISADE
        .run(&Policy::builtin_default(), &script, "[1]")
        .await;
    assert_eq!(output(&outcome), "[1]");
}

#[tokio::test]
async fn compiled_scripts_get_the_globals_of_the_callers_policy() {
    // The top level runs before any policy's globals exist; the export sees the caller's.
    let source = "const key = 'compiled/counter';\n\
                  export default async () => {\n\
                    let n = 0, hasKv = true;\n\
                    try {\n\
                      n = Number((await kv.get(key)) ?? 0) + 1;\n\
                      await kv.set(key, String(n));\n\
                    } catch (e) {\n\
                      if (!(e instanceof PolicyDeniedError)) throw e;\n\
                      hasKv = false;\n\
                    }\n\
                    return { n, hasKv, hasFetch: typeof fetch };\n\
                  };\n";
    let with_kv = policy("[kv]\nnamespace = \"compiled\"\n[kv.buckets]\napp = \"rw\"\n");
    let wasm = PALISADE
        .compile(&with_kv, &Script::new("top.js", source))
        .await
        .unwrap();
    let script = Script::from_component(wasm).unwrap();
    let first = PALISADE.run(&with_kv, &script, "null").await;
    let second = PALISADE.run(&with_kv, &script, "null").await;
    assert_eq!(
        output(&first),
        r#"{"n":1,"hasKv":true,"hasFetch":"function"}"#
    );
    assert_eq!(
        output(&second),
        r#"{"n":2,"hasKv":true,"hasFetch":"function"}"#
    );
    // Without `[kv]` the global refuses, as from source.
    let without = PALISADE
        .run(&Policy::builtin_default(), &script, "null")
        .await;
    assert_eq!(
        output(&without),
        r#"{"n":0,"hasKv":false,"hasFetch":"function"}"#
    );
}

#[tokio::test]
async fn scripts_compiled_without_capabilities_do_not_run_under_a_policy_that_grants_one() {
    // Compiled under the default policy, the script extends the plain guest, which has no
    // `wasi:keyvalue`: a policy with `[kv]` refuses it before any of it runs.
    let wasm = compile("export default () => typeof kv;").await.unwrap();
    let script = Script::from_component(wasm).unwrap();
    assert_eq!(
        output(
            &PALISADE
                .run(&Policy::builtin_default(), &script, "null")
                .await
        ),
        r#""object""#
    );
    let with_kv = policy("[kv]\nnamespace = \"plain\"\n[kv.buckets]\napp = \"rw\"\n");
    let outcome = PALISADE.run(&with_kv, &script, "null").await;
    assert_eq!(code(&outcome), "invalid_component");
    let message = outcome.error().unwrap().to_string();
    assert!(
        message.contains("compiled under a policy that grants no capability"),
        "{message}"
    );
    assert_eq!(
        PALISADE
            .precompile(&with_kv, &script)
            .await
            .unwrap_err()
            .code(),
        "invalid_component"
    );
}

/// Issue 38, item 10: `compile` (and so `palisade compile`, `palisade build` and an app's
/// load) failed on a module `run` parses, 1,000 nested parentheses, with `guest_exception` and
/// a raw wasm backtrace: the top level was evaluated on wasmtime's default 512 KiB stack, which
/// ran out before QuickJS's own check. It is evaluated on a stack that holds what a call's
/// does; a module too deep for either ends with the same code as its call, without a backtrace.
#[tokio::test]
async fn regression_38_10_compile_accepts_what_run_accepts() {
    let p = roomy();
    let deep = |depth: usize| {
        let nested = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
        Script::new("deep.js", format!("export default () => {nested};\n"))
    };
    let script = deep(1_000);
    assert_eq!(output(&PALISADE.run(&p, &script, "null").await), "1");
    let wasm = PALISADE.compile(&p, &script).await.expect("it compiles");
    let compiled = Script::from_component(wasm).unwrap();
    assert_eq!(output(&PALISADE.run(&p, &compiled, "null").await), "1");

    // Past what a call parses: the same code from both, and no wasm backtrace.
    let script = deep(20_000);
    let ran = PALISADE.run(&p, &script, "null").await;
    let error = PALISADE.compile(&p, &script).await.unwrap_err();
    assert_eq!(error.code(), code(&ran), "{error}");
    assert!(!error.to_string().contains("wasm backtrace"), "{error}");
    assert_next_call_works().await;
}

/// Issue 38, item 10, through the CLI: `palisade compile` and `palisade build` of 1,000 nested
/// parentheses succeed, and the compiled component runs.
#[test]
fn regression_38_10_the_cli_compiles_and_builds_deep_nesting() {
    let dir = scratch_dir("compile-deep");
    let script = dir.join("deep.js");
    let nested = format!("{}1{}", "(".repeat(1_000), ")".repeat(1_000));
    std::fs::write(&script, format!("export default () => {nested};\n")).unwrap();
    let palisade = |args: &[&str]| {
        std::process::Command::new(crate::cli::palisade_bin())
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    for args in [
        &["compile", "deep.js", "-o", "deep.wasm"][..],
        &["build", "deep.js", "-o", "standalone.wasm"][..],
    ] {
        let out = palisade(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = palisade(&["run", "deep.wasm"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
}

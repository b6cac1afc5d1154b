//! Scripts in several files and TypeScript: relative imports, JSON modules and dynamic
//! `import()` of the files bundled with a script, read from its folder or given to
//! `Script::with_modules`; every way out of the folder refused by the host; compiled and
//! auto-compiled forms; `.ts` run with types stripped and positions kept.

use crate::cli::palisade_bin;
use crate::support::*;
use palisade::{AutoCompileStatus, MAX_BUNDLE_BYTES, MAX_MODULES, Palisade, Script};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// A folder holding `files` (paths with `/`, and their text).
fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch_dir(&format!("modules-{name}"));
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A script read as `palisade run` reads it: a bad import is an `Error`, not an `io::Error`.
fn load(path: &Path) -> Result<Script, palisade::Error> {
    let bytes = Script::read_file_bytes(path).expect("the script is readable");
    Script::from_file_bytes(path, bytes).map(|s| s.expect("the script is UTF-8"))
}

const APP: &str = r#"import { add } from "./lib.js";
import data from "./data.json" with { type: "json" };
import { twice } from "./sub/twice.js";
export default async (x) => {
  const lazy = await import("./lazy.js");
  return { sum: add(x.a, data.b), twice: twice(3), lazy: lazy.word, keys: Object.keys(data) };
};
"#;

const APP_FILES: &[(&str, &str)] = &[
    ("app.js", APP),
    ("lib.js", "export const add = (a, b) => a + b;\n"),
    ("data.json", r#"{"b": 40, "__proto__": 1}"#),
    (
        "sub/twice.js",
        "import { add } from \"../lib.js\";\nexport const twice = (n) => add(n, n);\n",
    ),
    ("lazy.js", "export const word = \"loaded\";\n"),
    ("unused.js", "throw new Error(\"never imported\");\n"),
];

const APP_OUTPUT: &str = r#"{"sum":42,"twice":6,"lazy":"loaded","keys":["b","__proto__"]}"#;

#[tokio::test]
async fn relative_imports_json_modules_and_dynamic_import_from_the_folder() {
    let dir = folder("app", APP_FILES);
    let script = load(&dir.join("app.js")).unwrap();
    // What is imported, statically or by `import("…")` with a literal, and nothing else.
    assert_eq!(
        script.modules().collect::<Vec<_>>(),
        ["data.json", "lazy.js", "lib.js", "sub/twice.js"]
    );
    let outcome = PALISADE.run(&roomy(), &script, r#"{"a":2}"#).await;
    assert_eq!(output(&outcome), APP_OUTPUT);
    // `Script::from_file` reads the folder the same way.
    let same = Script::from_file(dir.join("app.js")).unwrap();
    assert_eq!(same.modules().count(), 4);
}

#[tokio::test]
async fn the_library_takes_named_modules() {
    let script = Script::new("app.js", APP)
        .with_modules([
            ("lib.js", "export const add = (a, b) => a + b;\n"),
            ("data.json", r#"{"b": 40, "__proto__": 1}"#),
            (
                "sub/twice.js",
                "import { add } from \"../lib.js\";\nexport const twice = (n) => add(n, n);\n",
            ),
            ("lazy.js", "export const word = \"loaded\";\n"),
        ])
        .unwrap();
    let outcome = PALISADE.run(&roomy(), &script, r#"{"a":2}"#).await;
    assert_eq!(output(&outcome), APP_OUTPUT);
    // The full guest (a policy that grants a capability) loads them the same way.
    let granting = policy("[config]\nregion = \"eu-west\"\n");
    let outcome = PALISADE.run(&granting, &script, r#"{"a":2}"#).await;
    assert_eq!(output(&outcome), APP_OUTPUT);
    // `precompile` checks it, but it runs from source: bytecode would drop the attributes
    // of its imports (`with { type: "json" }`).
    let precompiled = PALISADE.precompile(&roomy(), &script).await.unwrap();
    assert!(!precompiled.is_precompiled());
    let outcome = PALISADE.run(&roomy(), &precompiled, r#"{"a":2}"#).await;
    assert_eq!(output(&outcome), APP_OUTPUT);

    // A TypeScript module, imported by TypeScript's convention as `./util.js`.
    let script = Script::new(
        "main.js",
        "import { half } from \"./util.js\";\nexport default (x) => half(x.n);\n",
    )
    .with_modules([(
        "util.ts",
        "export function half(n: number): number { return (n as number) / 2; }\n",
    )])
    .unwrap();
    let outcome = PALISADE.run(&roomy(), &script, r#"{"n":42}"#).await;
    assert_eq!(output(&outcome), "21");

    // A cycle back to the script itself, and a JSON module loaded by `import()` with its type.
    let script = Script::new(
        "app.js",
        "import { greet } from \"./lib.js\";\nexport const name = \"main\";\n\
         export default async () => [greet(), (await import(\"./d.json\", { with: { type: \"json\" } })).default];\n",
    )
    .with_modules([
        ("lib.js", "import { name } from \"./app.js\";\nexport const greet = () => `hi ${name}`;\n"),
        ("d.json", "[1, 2]"),
    ])
    .unwrap();
    let outcome = PALISADE.run(&roomy(), &script, "null").await;
    assert_eq!(output(&outcome), r#"["hi main",[1,2]]"#);
}

#[tokio::test]
async fn dynamic_import_of_anything_else_fails_with_a_clear_error() {
    let source = r#"
export default async () => {
  const tried = {};
  for (const specifier of ["./" + "missing.js", "../outside.js", "/etc/passwd",
                           "https://example.com/x.js", "node:fs", "./data.json"]) {
    try { await import(specifier); tried[specifier] = "loaded"; }
    catch (e) { tried[specifier] = `${e.name}: ${e.message}`; }
  }
  return tried;
};
"#;
    let script = Script::new("dyn.js", source)
        .with_modules([("data.json", "[1]")])
        .unwrap();
    let outcome = PALISADE.run(&roomy(), &script, "null").await;
    let tried: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(output(&outcome)).unwrap();
    assert_eq!(tried.len(), 6);
    for (specifier, message) in &tried {
        let message = message.as_str().unwrap();
        assert!(message.starts_with("TypeError: "), "{specifier}: {message}");
        assert!(
            message.contains(specifier.as_str()),
            "{specifier}: {message}"
        );
    }
    assert!(
        tried["./data.json"]
            .as_str()
            .unwrap()
            .contains("type: \"json\"")
    );
    assert!(
        tried["../outside.js"]
            .as_str()
            .unwrap()
            .contains("outside the script's folder")
    );

    // Uncaught, it ends the call as the script's exception; the host is fine.
    let outcome = run_source(
        "export default async () => (await import(\"./\" + \"x.js\")).x;",
        "null",
    )
    .await;
    assert_eq!(code(&outcome), "guest_exception");
    assert_next_call_works().await;
}

#[tokio::test]
async fn every_escape_from_the_folder_is_invalid_input_naming_the_specifier() {
    let outside = folder(
        "outside",
        &[("secret.js", "export const s = \"secret\";\n")],
    );
    let dir = folder(
        "escapes",
        &[
            ("lib.js", "export const s = 1;\n"),
            ("data.json", "{\"a\":1}"),
            ("notes.txt", "export const s = 1;\n"),
        ],
    );
    std::os::unix::fs::symlink(outside.join("secret.js"), dir.join("link.js")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("linked")).unwrap();
    let cases = [
        (
            "import { s } from \"../outside/secret.js\";",
            "../outside/secret.js",
        ),
        (
            "import { s } from \"./sub/../../x.js\";",
            "./sub/../../x.js",
        ),
        ("import { s } from \"/etc/passwd\";", "/etc/passwd"),
        (
            "import { s } from \"https://example.com/x.js\";",
            "https://example.com/x.js",
        ),
        ("import { s } from \"node:fs\";", "node:fs"),
        ("import { s } from \"lodash\";", "lodash"),
        ("import { s } from \"./link.js\";", "./link.js"),
        (
            "import { s } from \"./linked/secret.js\";",
            "./linked/secret.js",
        ),
        ("import { s } from \"./missing.js\";", "./missing.js"),
        (
            "export { s } from \"../outside/secret.js\";",
            "../outside/secret.js",
        ),
        ("export * from \"/etc/passwd\";", "/etc/passwd"),
        ("import s from \"./data.json\";", "./data.json"),
        (
            "import { s } from \"./lib.js\" with { type: \"json\" };",
            "./lib.js",
        ),
    ];
    for (import, specifier) in cases {
        let path = dir.join("app.js");
        std::fs::write(&path, format!("{import}\nexport default () => s;\n")).unwrap();
        let error = load(&path).expect_err(import);
        assert_eq!(error.code(), "invalid_input", "{import}: {error}");
        assert!(error.to_string().contains(specifier), "{import}: {error}");
        // `Script::from_file` gives the same refusal as an `io::Error` of kind InvalidInput.
        let io = Script::from_file(&path).expect_err(import);
        assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput, "{import}");
        assert_next_call_works().await;
    }

    // The library: names that are not paths inside the folder, imports of modules not given.
    for name in [
        "../x.js",
        "/x.js",
        "a//b.js",
        "./x.js",
        "https://e.com/x.js",
        "",
    ] {
        let error = Script::new("app.js", "export default 1;")
            .with_modules([(name, "export const s = 1;")])
            .expect_err(name);
        assert_eq!(error.code(), "invalid_input", "{name}");
    }
    for (import, specifier) in [
        ("import { s } from \"./other.js\";", "./other.js"),
        ("import { s } from \"../lib.js\";", "../lib.js"),
        ("import { s } from \"lib.js\";", "lib.js"),
    ] {
        let error = Script::new("app.js", format!("{import}\nexport default () => s;"))
            .with_modules([("lib.js", "export const s = 1;")])
            .expect_err(import);
        assert_eq!(error.code(), "invalid_input", "{import}");
        assert!(error.to_string().contains(specifier), "{error}");
    }
    // A module given without its import checked on the host still cannot escape in the guest.
    let outcome = run_source(
        "import { s } from \"../x.js\";\nexport default () => s;",
        "null",
    )
    .await;
    assert_eq!(code(&outcome), "guest_syntax");
    assert_next_call_works().await;
}

#[tokio::test]
async fn module_count_and_bytes_are_bounded() {
    let many: Vec<(String, String)> = (0..=MAX_MODULES)
        .map(|i| (format!("m{i}.js"), format!("export const v = {i};")))
        .collect();
    let error = Script::new("app.js", "export default 1;")
        .with_modules(many)
        .unwrap_err();
    assert_eq!(error.code(), "invalid_input");
    assert!(
        error.to_string().contains(&MAX_MODULES.to_string()),
        "{error}"
    );

    let big = "x".repeat(MAX_BUNDLE_BYTES as usize / 2 + 1);
    let error = Script::new("app.js", "export default 1;")
        .with_modules([
            ("a.json", format!("\"{big}\"")),
            ("b.json", format!("\"{big}\"")),
        ])
        .unwrap_err();
    assert_eq!(error.code(), "invalid_input");
    assert_next_call_works().await;
}

#[tokio::test]
async fn compiled_scripts_carry_their_modules() {
    let dir = folder("compiled", APP_FILES);
    let script = load(&dir.join("app.js")).unwrap();
    let policy = roomy();
    let wasm = PALISADE.compile(&policy, &script).await.unwrap();
    let compiled = Script::from_component(wasm).unwrap();
    for _ in 0..2 {
        // `lazy.js` is imported by `import()` only: the snapshot holds its source for the call.
        let outcome = PALISADE.run(&policy, &compiled, r#"{"a":2}"#).await;
        assert_eq!(output(&outcome), APP_OUTPUT);
    }
}

/// Compiles a script once it has been called twice under one policy.
static AUTO: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(4)
        .auto_compile(2)
        .build()
        .unwrap()
});

#[tokio::test]
async fn auto_compiled_scripts_keep_their_modules_apart() {
    let policy = roomy();
    let main = "import { v } from \"./lib.js\";\nexport default async () => [v, (await import(\"./late.js\")).w];\n";
    // One main module, two sets of modules: two scripts, compiled apart.
    let scripts: Vec<Script> = ["one", "two"]
        .iter()
        .map(|v| {
            Script::new("app.js", main)
                .with_modules([
                    ("lib.js", format!("export const v = \"{v}\";")),
                    ("late.js", format!("export const w = \"late {v}\";")),
                ])
                .unwrap()
        })
        .collect();
    for (script, v) in scripts.iter().zip(["one", "two"]) {
        let expected = format!("[\"{v}\",\"late {v}\"]");
        for _ in 0..2 {
            assert_eq!(output(&AUTO.run(&policy, script, "null").await), expected);
        }
        let started = Instant::now();
        while AUTO.auto_compile_status(&policy, script) == Some(AutoCompileStatus::Compiling)
            && started.elapsed() < Duration::from_secs(120)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            AUTO.auto_compile_status(&policy, script),
            Some(AutoCompileStatus::Ready)
        );
        assert_eq!(output(&AUTO.run(&policy, script, "null").await), expected);
    }
}

const TS: &str = r#"interface Point { x: number; y?: number }
import type { Unused } from "./types.js";
import { scale } from "./scale.js";
type Pair<T> = [T, T];
function sum<T extends number>(pair: Pair<T>): number { return pair[0] + pair[1]!; }
export default (p: Point): { total: number } => {
  const factor: number = scale as unknown as number;
  const total: number = sum<number>([p.x, p.y ?? 0] as Pair<number>); if (total < 0) throw new RangeError("negative total");
  return { total: total * factor };
};
"#;

#[tokio::test]
async fn typescript_runs_with_errors_pointing_into_the_ts_source() {
    let dir = folder(
        "ts",
        &[
            ("app.ts", TS),
            ("types.ts", "export type Unused = string;\n"),
            ("scale.ts", "export const scale: number = 2;\n"),
        ],
    );
    let script = load(&dir.join("app.ts")).unwrap();
    assert_eq!(script.modules().collect::<Vec<_>>(), ["scale.ts"]);
    let policy = roomy();
    let outcome = PALISADE.run(&policy, &script, r#"{"x":1,"y":2}"#).await;
    assert_eq!(output(&outcome), r#"{"total":6}"#);

    // The throw is on line 8, after types on the same line: its column is the `.ts` one.
    let outcome = PALISADE.run(&policy, &script, r#"{"x":-5}"#).await;
    let line = TS.lines().nth(7).unwrap();
    let column = line.find("RangeError(").unwrap() as u32 + 1;
    match &outcome.result {
        Err(palisade::Error::GuestException {
            name,
            location: Some(location),
            stack: Some(stack),
            ..
        }) => {
            assert_eq!(name, "RangeError");
            assert_eq!((location.line, location.column), (8, column));
            assert!(stack.contains(&format!("app.ts:8:{column}")), "{stack}");
        }
        other => panic!("{other:?}"),
    }

    // Compiled, the same.
    let wasm = PALISADE.compile(&policy, &script).await.unwrap();
    let compiled = Script::from_component(wasm).unwrap();
    let outcome = PALISADE.run(&policy, &compiled, r#"{"x":1,"y":2}"#).await;
    assert_eq!(output(&outcome), r#"{"total":6}"#);

    // A syntax error, and TypeScript that needs code generated: `guest_syntax` at the `.ts`
    // position.
    for (source, line, column) in [
        ("const a: number = 1;\nconst b: string = (;\n", 2, 20),
        ("const a: number = 1;\n  enum Color { Red }\n", 2, 3),
        ("class C {\n  constructor(private x: number) {}\n}\n", 2, 15),
    ] {
        let error = Script::typescript("bad.ts", source).unwrap_err();
        assert_eq!(error.code(), "guest_syntax", "{source}");
        match error {
            palisade::Error::GuestSyntax {
                location: Some(l), ..
            } => assert_eq!((l.line, l.column), (line, column), "{source}"),
            other => panic!("{other:?}"),
        }
    }
    let script =
        Script::typescript("ok.ts", "export default (x: { n: number }) => x.n + 1;").unwrap();
    assert_eq!(
        output(&PALISADE.run(&policy, &script, r#"{"n":1}"#).await),
        "2"
    );
}

#[test]
fn the_cli_runs_and_compiles_scripts_with_imports() {
    let dir = folder("cli", APP_FILES);
    let bin = palisade_bin();
    let run = |args: &[&str]| {
        let out = Command::new(&bin)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (status, stdout, stderr) = run(&["run", "app.js", "--input", r#"{"a":2}"#]);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stdout, APP_OUTPUT);
    let (status, _, stderr) = run(&["compile", "app.js", "-o", "app.wasm"]);
    assert_eq!(status, Some(0), "{stderr}");
    // From another folder: the component holds the modules.
    let out = Command::new(&bin)
        .args([
            "run",
            dir.join("app.wasm").to_str().unwrap(),
            "--input",
            r#"{"a":2}"#,
        ])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), APP_OUTPUT);

    std::fs::write(
        dir.join("bad.js"),
        "import { s } from \"../elsewhere.js\";\nexport default () => s;\n",
    )
    .unwrap();
    for command in ["run", "compile"] {
        let (status, _, stderr) = run(&[command, "bad.js"]);
        assert_eq!(status, Some(15), "{command}: {stderr}");
        assert!(stderr.contains("invalid_input"), "{stderr}");
        assert!(stderr.contains("../elsewhere.js"), "{stderr}");
    }
}

/// The error a script was refused with; an accepted script (its source may be megabytes) is
/// named, not printed.
fn refused<E>(result: Result<Script, E>) -> E {
    match result {
        Ok(script) => panic!("`{}` was accepted", script.name()),
        Err(error) => error,
    }
}

/// `depth` nested parentheses around `1`: 20,000 of them are 40 KB.
fn nested(depth: usize) -> String {
    format!("{}1{}", "(".repeat(depth), ")".repeat(depth))
}

/// Issue 38, item 1: 20,000 nested parentheses in a script with imports overflowed the host's
/// stack while it read the imports (`fatal runtime error: stack overflow`, the process gone), by
/// every way in: `with_modules` (which an app's source also goes through), `from_file` and
/// `palisade run`. The host's parse and its walk are bounded now: 20,000 levels reach the guest,
/// which ends them as it ends them without imports; nesting past the host's bound (a million
/// levels, 2 MB) is `guest_syntax`, nested too deeply.
#[tokio::test]
async fn regression_38_1_deep_nesting_in_a_bundle_is_typed_not_a_crash() {
    let lib = ("lib.js", "export const s = 1;\n");
    let body = |depth: usize| format!("export default () => s + {};\n", nested(depth));
    let bundled = |depth: usize| format!("import {{ s }} from \"./lib.js\";\n{}", body(depth));
    // What the guest does with 20,000 levels, with and without imports.
    let alone = run_source(&format!("const s = 1;\n{}", body(20_000)), "null").await;
    let script = Script::new("app.js", bundled(20_000))
        .with_modules([lib])
        .unwrap();
    let outcome = PALISADE.run(&roomy(), &script, "null").await;
    assert_eq!(code(&outcome), code(&alone));
    assert_eq!(code(&outcome), "stack_overflow");

    let too_deep = |error: palisade::Error, what: &str| {
        assert_eq!(error.code(), "guest_syntax", "{what}");
        assert!(
            error.to_string().contains("nested too deeply"),
            "{what}: {error}"
        );
    };
    let deepest = bundled(1_000_000);
    // The script, a module, and a TypeScript module given to `with_modules`.
    let error = refused(Script::new("app.js", deepest.clone()).with_modules([lib]));
    too_deep(error, "script");
    let importer = "import { s } from \"./lib.js\";\nexport default () => s;\n";
    let deep_lib = format!("export const s = {};\n", nested(1_000_000));
    let error = refused(Script::new("app.js", importer).with_modules([("lib.js", deep_lib)]));
    too_deep(error, "module");
    let deep_ts = format!("export const s: number = {};\n", nested(1_000_000));
    let error = refused(Script::new("app.js", importer).with_modules([("lib.ts", deep_ts)]));
    too_deep(error, "TypeScript module");
    // Read from a folder: `from_file_bytes` (as `palisade run` reads it) and `from_file`.
    let dir = folder("deep", &[("app.js", &deepest), lib]);
    too_deep(refused(load(&dir.join("app.js"))), "folder");
    let error = refused(Script::from_file(dir.join("app.js")));
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("nested too deeply"), "{error}");
    // A chain built by a loop (`1+1+…`) parses in no depth, but its tree is as deep as it is
    // long: reading its imports is bounded the same way.
    let chain = format!(
        "import {{ s }} from \"./lib.js\";\nexport default () => s{};\n",
        "+1".repeat(2_000_000)
    );
    let error = refused(Script::new("app.js", chain).with_modules([lib]));
    too_deep(error, "chain");

    // What a call parses is read: 1,000 levels, and a long chain.
    let source = format!(
        "import {{ s }} from \"./lib.js\";\nexport default () => s + {} + 0{};\n",
        nested(1_000),
        "+1".repeat(10_000)
    );
    let script = Script::new("app.js", source).with_modules([lib]).unwrap();
    let outcome = PALISADE.run(&roomy(), &script, "null").await;
    assert_eq!(output(&outcome), "10002");
    assert_next_call_works().await;
}

/// Issue 38, item 1, through the CLI: `palisade run` of a script with imports nested past the
/// host's bound exits with `guest_syntax` (11) and says why; the next run works.
#[test]
fn regression_38_1_the_cli_refuses_a_bundle_nested_too_deeply() {
    let deep = format!(
        "import {{ s }} from \"./lib.js\";\nexport default () => s + {};\n",
        nested(1_000_000)
    );
    let dir = folder(
        "deep-cli",
        &[
            ("deep.js", &deep),
            (
                "ok.js",
                "import { s } from \"./lib.js\";\nexport default () => s;\n",
            ),
            ("lib.js", "export const s = 1;\n"),
        ],
    );
    let run = |file: &str| {
        Command::new(palisade_bin())
            .args(["run", file])
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let out = run("deep.js");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(11), "{stderr}");
    assert!(stderr.contains("error[guest_syntax]"), "{stderr}");
    assert!(stderr.contains("nested too deeply"), "{stderr}");
    let out = run("ok.js");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
}

/// Issue 38, item 23: a module with a syntax error that also imports a missing file was
/// `invalid_input` (the host resolved its imports before anything parsed it); it is
/// `guest_syntax` at its line, as it is without the import, in the script or in a module it
/// imports, read from a folder or given to `with_modules`. (Early errors that oxc's parser does
/// not report, such as `break` outside a loop, still come after the missing import.)
#[tokio::test]
async fn regression_38_23_a_syntax_error_comes_before_a_missing_import() {
    // A `const` without its initializer: oxc's parser reads past it, QuickJS refuses it.
    let broken = "import { s } from \"./missing.js\";\nexport default () => s;\nconst x;\n";
    let at_line_3 = |outcome: &palisade::Outcome, what: &str| {
        assert_eq!(code(outcome), "guest_syntax", "{what}");
        match outcome.error() {
            Some(palisade::Error::GuestSyntax {
                location: Some(location),
                ..
            }) => assert_eq!(location.line, 3, "{what}"),
            other => panic!("{what}: {other:?}"),
        }
    };
    let importer = "import { s } from \"./lib.js\";\nexport default () => s;\n";
    let dir = folder(
        "broken",
        &[
            ("app.js", broken),
            ("main.js", importer),
            ("lib.js", broken),
        ],
    );
    for file in ["app.js", "main.js"] {
        let script = load(&dir.join(file)).unwrap();
        let outcome = PALISADE.run(&roomy(), &script, "null").await;
        at_line_3(&outcome, file);
    }
    let script = Script::new("app.js", broken)
        .with_modules::<&str, &str>([])
        .unwrap();
    at_line_3(
        &PALISADE.run(&roomy(), &script, "null").await,
        "with_modules, script",
    );
    let script = Script::new("main.js", importer)
        .with_modules([("lib.js", broken)])
        .unwrap();
    at_line_3(
        &PALISADE.run(&roomy(), &script, "null").await,
        "with_modules, module",
    );
    // A module that parses still has its imports checked.
    let error = Script::new(
        "app.js",
        "import { s } from \"./missing.js\";\nexport default () => s;\n",
    )
    .with_modules::<&str, &str>([])
    .unwrap_err();
    assert_eq!(error.code(), "invalid_input");
    assert_next_call_works().await;
}

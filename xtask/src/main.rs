//! Developer tasks: `cargo run -p xtask -- guest [--check]`, `forge-trap OUT` and
//! `feature-sets`.
//!
//! `guest` builds `guest-js/` for wasm32-wasip2 three times, with and without its `capabilities`
//! feature and with its `standalone` feature, pre-initializes each with wasmtime-wizer,
//! optimizes its code with Binaryen's `wasm-opt`, and writes `host/guest/palisade-guest.wasm`
//! (the full guest), `host/guest/palisade-guest-plain.wasm` (the plain guest, for policies
//! that grant no capability) and `host/guest/palisade-guest-standalone.wasm` (standard WASI
//! imports only, for `palisade build` and the stock `wasmtime` CLI). With `--check` it writes
//! nothing and fails when a committed guest differs from what the sources build to. The build
//! is reproducible: paths that differ between machines are remapped, so the bytes depend only
//! on the sources and toolchain.
//!
//! `forge-trap OUT` writes a hand-made component whose call traps (`unreachable`) for the
//! bindings' tests of `guest_trap`, which cannot make one themselves.
//!
//! `feature-sets` fails when `make check`'s builds would compile wasmtime or jsonschema, or its
//! check runs check them, more often than the differences it accepts by name (`feature_sets.rs`).

mod feature_sets;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The guest's own target folder (`GUEST_TARGET` in the Makefile: keep them alike): its builds do
/// not wait for the host's (`make check` runs them beside `make package`), and `make lint-guest`
/// checks it there too, sharing the proc macros and build scripts compiled for it.
const TARGET_DIR: &str = "target/guest-js";
const BUILT: &str = "target/guest-js/wasm32-wasip2/guest/palisade_guest.wasm";

/// The guests: where each is written, and the cargo arguments that select its features.
const GUESTS: &[(&str, &[&str])] = &[
    ("host/guest/palisade-guest.wasm", &[]),
    (
        "host/guest/palisade-guest-plain.wasm",
        &["--no-default-features"],
    ),
    (
        "host/guest/palisade-guest-standalone.wasm",
        &["--features", "standalone"],
    ),
];

/// C flags for QuickJS; `.cargo/config.toml` sets the same for every other build of the guest.
/// Debian's wasi-libc headers stand in for a wasi-sdk. `__ANDROID__` makes QuickJS's `cutils.h`
/// ask libc for `malloc_usable_size`, which wasi-libc has; it is the only thing the macro
/// changes (no other QuickJS source and no wasi-libc header tests it). Without it QuickJS counts
/// every allocation as 8 bytes on WASI, and collects garbage cycles only after half a million
/// live allocations instead of after the guest's `GC_THRESHOLD` bytes.
const QUICKJS_CFLAGS: &str = "-isystem /usr/include/wasm32-wasi -D__ANDROID__";

/// The guest's shadow stack (in linear memory, below its data: a stack that runs off its end
/// traps rather than overwriting the heap). QuickJS keeps about 290 bytes of each JS call
/// there and about 950 on the native wasm stack (`limits.stack`), so 6 MiB holds 21,000 calls:
/// the native stack runs out first for every `limits.stack` a policy can set (up to 16 MiB,
/// about 17,500 calls).
const SHADOW_STACK_LINK_ARG: &str = "-C link-arg=-zstack-size=6291456";

/// Compile a script that returns its input, make its `run` export trap at once, write it to
/// `out`.
fn forge_trap(out: &Path) -> Result<()> {
    let palisade = palisade::Palisade::new()?;
    let script = palisade::Script::new("trap.js", "export default (x) => x;");
    let policy = palisade::Policy::builtin_default();
    let runtime = tokio::runtime::Runtime::new()?;
    let mut wasm = runtime.block_on(palisade.compile(&policy, &script))?;
    palisade_tests::patch_run(&mut wasm, &[0x00]);
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(out, wasm).with_context(|| format!("writing {}", out.display()))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["guest"] => guest(&root, false),
        ["guest", "--check"] => guest(&root, true),
        ["forge-trap", out] => forge_trap(Path::new(out)),
        ["feature-sets"] => feature_sets::check(&root),
        _ => bail!("usage: cargo run -p xtask -- guest [--check] | forge-trap OUT | feature-sets"),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

fn guest(root: &Path, check: bool) -> Result<()> {
    let cargo_home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let remap = |from: &Path, to: &str| format!("{}={to}", from.display());
    let rustflags = format!(
        "{SHADOW_STACK_LINK_ARG} --remap-path-prefix={} --remap-path-prefix={}",
        remap(&cargo_home, "/cargo"),
        remap(root, "/palisade"),
    );
    let cflags = format!(
        "{QUICKJS_CFLAGS} -ffile-prefix-map={} -ffile-prefix-map={}",
        remap(&cargo_home, "/cargo"),
        remap(root, "/palisade"),
    );
    let runtime = tokio_runtime()?;
    for (out, features) in GUESTS {
        eprintln!("xtask: building {out} from guest-js for wasm32-wasip2");
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(root)
            .args([
                "build",
                "--locked",
                "-p",
                "palisade-guest",
                "--target",
                "wasm32-wasip2",
                "--profile",
                "guest",
                "--target-dir",
                TARGET_DIR,
            ])
            .args(*features)
            .env("CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS", &rustflags)
            .env("CFLAGS_wasm32_wasip2", &cflags)
            .status()
            .context("running cargo")?;
        if !status.success() {
            bail!("the guest build failed");
        }
        let raw = std::fs::read(root.join(BUILT)).with_context(|| format!("reading {BUILT}"))?;
        eprintln!("xtask: pre-initializing ({} bytes)", raw.len());
        let snapshot = runtime.block_on(palisade::snapshot::preinitialize(&raw))?;
        let snapshot = optimize(root, &snapshot)?;
        write_or_check(&root.join(out), out, &snapshot, check)?;
    }
    Ok(())
}

/// The Binaryen release whose `wasm-opt` the committed guests were optimized with: Debian 12's
/// `binaryen` package (`scripts/setup.sh`). Another release optimizes differently, so
/// `guest --check` would fail for a reason that has nothing to do with the sources.
const WASM_OPT_VERSION: &str = "wasm-opt version 108";

/// `wasm-opt` at `-O3`, with the WebAssembly features rustc and clang emit for wasm32-wasip2
/// enabled (it refuses a module that uses any other).
///
/// Inlining goes further than `-O3`'s own: functions that call nothing are inlined up to 100
/// units of size rather than 20, loops included (dlmalloc's paths, `memcmp`, QuickJS's shape and
/// atom helpers). Compiled w2 about 6% and fib(25) about 2% faster, w1 unchanged (docs/bench.md).
/// Inlining functions that make calls as well (`--always-inline-max-function-size`) was faster
/// on w2 but slower on fib(25): it grows the interpreter loop.
const WASM_OPT_ARGS: &[&str] = &[
    "-O3",
    "--flexible-inline-max-function-size",
    "100",
    "--inline-functions-with-loops",
    "--enable-bulk-memory",
    "--enable-multivalue",
    "--enable-mutable-globals",
    "--enable-nontrapping-float-to-int",
    "--enable-reference-types",
    "--enable-sign-ext",
];

/// Run `wasm-opt` over the component's first core module (the guest's own code: Rust, QuickJS
/// and wasi-libc; the others are wit-component's small shims) and return the component with the
/// optimized module in its place. LLVM's output leaves work for Binaryen on this code:
/// QuickJS's interpreter executes about 1.5% fewer wasm instructions and fib(25) and the w2
/// transform run 3–7% faster (docs/bench.md).
fn optimize(root: &Path, component: &[u8]) -> Result<Vec<u8>> {
    let version = Command::new("wasm-opt")
        .arg("--version")
        .output()
        .context("running wasm-opt: install Debian's binaryen package (scripts/setup.sh)")?;
    let version = String::from_utf8_lossy(&version.stdout);
    if version.trim() != WASM_OPT_VERSION {
        bail!(
            "found `{}`, the guests are built with `{WASM_OPT_VERSION}` (Debian 12's binaryen; \
             scripts/setup.sh)",
            version.trim()
        );
    }
    let (header, module) = first_core_module(component)?;
    let dir = root.join("target/xtask");
    std::fs::create_dir_all(&dir).context("creating target/xtask")?;
    let (input, output) = (dir.join("module.wasm"), dir.join("module.opt.wasm"));
    std::fs::write(&input, &component[module.clone()]).context("writing target/xtask")?;
    eprintln!("xtask: wasm-opt {}", WASM_OPT_ARGS.join(" "));
    let mut wasm_opt = Command::new("wasm-opt");
    wasm_opt.args(WASM_OPT_ARGS);
    // An unstripped build (for profiling, docs/bench.md) keeps the function names, which
    // wasm-opt drops unless asked.
    if std::env::var("CARGO_PROFILE_GUEST_STRIP").as_deref() == Ok("false") {
        wasm_opt.arg("-g");
    }
    let status = wasm_opt
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .status()
        .context("running wasm-opt")?;
    if !status.success() {
        bail!("wasm-opt failed on the guest's core module");
    }
    let optimized = std::fs::read(&output).context("reading wasm-opt's output")?;
    let mut out = component[..header].to_vec();
    out.push(1); // the component section that holds a core module
    leb128(&mut out, optimized.len());
    out.extend_from_slice(&optimized);
    out.extend_from_slice(&component[module.end..]);
    Ok(out)
}

/// Where the component's first core-module section starts (its id byte) and the module's bytes.
fn first_core_module(component: &[u8]) -> Result<(usize, std::ops::Range<usize>)> {
    use wasmparser::{Chunk, Parser, Payload};
    let mut parser = Parser::new(0);
    let mut offset = 0;
    loop {
        let Chunk::Parsed { consumed, payload } = parser.parse(&component[offset..], true)? else {
            bail!("the guest component ends early");
        };
        match payload {
            Payload::ModuleSection {
                unchecked_range, ..
            } => return Ok((offset, unchecked_range)),
            Payload::End(_) => bail!("the guest component holds no core module"),
            _ => offset += consumed,
        }
    }
}

fn leb128(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Write `snapshot` to `path`, or with `check` fail when the committed file differs from it.
fn write_or_check(path: &Path, name: &str, snapshot: &[u8], check: bool) -> Result<()> {
    if check {
        let committed = std::fs::read(path).with_context(|| format!("reading {name}"))?;
        if committed != snapshot {
            bail!(
                "{name} is not what the guest sources build to ({} bytes committed, {} built); \
                 run `cargo run -p xtask -- guest` and commit the result",
                committed.len(),
                snapshot.len()
            );
        }
        eprintln!(
            "xtask: {name} matches the sources ({} bytes)",
            snapshot.len()
        );
    } else {
        std::fs::write(path, snapshot).with_context(|| format!("writing {name}"))?;
        eprintln!("xtask: wrote {name} ({} bytes)", snapshot.len());
    }
    Ok(())
}

fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

//! Developer tasks: `cargo run -p xtask -- guest [--check]`.
//!
//! `guest` builds `guest-js/` for wasm32-wasip2 twice, with and without its `capabilities`
//! feature, pre-initializes each with wasmtime-wizer, and writes `host/guest/palisade-guest.wasm`
//! (the full guest) and `host/guest/palisade-guest-plain.wasm` (the plain guest, for policies
//! that grant no capability). With `--check` it writes nothing and fails when a committed guest
//! differs from what the sources build to. The build is reproducible: paths that
//! differ between machines are remapped, so the bytes depend only on the sources and toolchain.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const BUILT: &str = "target/wasm32-wasip2/guest/palisade_guest.wasm";

/// The guests: where each is written, and the cargo arguments that select its features.
const GUESTS: &[(&str, &[&str])] = &[
    ("host/guest/palisade-guest.wasm", &[]),
    (
        "host/guest/palisade-guest-plain.wasm",
        &["--no-default-features"],
    ),
];

/// C flags for QuickJS; `.cargo/config.toml` sets the same for every other build of the guest.
/// Debian's wasi-libc headers stand in for a wasi-sdk. `__ANDROID__` makes QuickJS's `cutils.h`
/// ask libc for `malloc_usable_size`, which wasi-libc has; it is the only thing the macro
/// changes (no other QuickJS source and no wasi-libc header tests it). Without it QuickJS counts
/// every allocation as 8 bytes on WASI, and collects garbage cycles only after half a million
/// live allocations instead of after the guest's `GC_THRESHOLD` bytes.
const QUICKJS_CFLAGS: &str = "-isystem /usr/include/wasm32-wasi -D__ANDROID__";

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
        _ => bail!("usage: cargo run -p xtask -- guest [--check]"),
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
        "--remap-path-prefix={} --remap-path-prefix={}",
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
        write_or_check(&root.join(out), out, &snapshot, check)?;
    }
    Ok(())
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

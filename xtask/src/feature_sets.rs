//! `feature-sets`: fail when two of `make check`'s dev-profile builds would compile the crates
//! wasmtime and jsonschema are built from with different features, or two of its check runs
//! (clippy, rustdoc) would check them with different features, but for the differences accepted
//! by name.
//!
//! Cargo turns on a dependency's features from the packages one command builds, and a crate built
//! with other features is another build of it. One feature more on a crate wasmtime depends on
//! builds Cranelift and wasmtime again, six minutes on two cores (docs/architecture.md, "One
//! build of wasmtime"); checking them again (`cargo clippy`, `cargo doc`, which check every
//! dependency without building it) takes two.

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// A command's name and its `cargo tree` arguments.
type Run = (&'static str, &'static [&'static str]);

/// The builds that must share one compiled wasmtime and jsonschema; the first is what the others
/// are compared to.
const BUILDS: &[Run] = &[
    ("the palisade binary", &["-p", "palisade-cli"]),
    (
        "the packaged crate (make package)",
        &["-p", "palisade", "--features", "serve"],
    ),
    ("xtask", &["-p", "xtask"]),
    (
        "the tests (make test)",
        &[
            "-p",
            "palisade",
            "-p",
            "palisade-cli",
            "-p",
            "palisade-tests",
            "-e",
            "dev",
        ],
    ),
    ("the Node.js addon", &["-p", "palisade-node"]),
    (
        "the Python module",
        &["-p", "palisade-python", "--features", "extension-module"],
    ),
    (
        "the bindings' core and its tests",
        &["-p", "palisade-bindings", "-e", "dev"],
    ),
];

/// The check runs that must share one checked wasmtime; the first is what the others are compared
/// to. The library's docs with `serve` are built beside the Node.js addon, whose napi macros turn
/// on what the workspace's clippy run turns on. (The library's default features, `redis` alone and
/// the CLI without `serve` are checked on their own on purpose, as crates.io's users build them.)
const CHECKS: &[Run] = &[
    (
        "clippy of the workspace",
        &[
            "--workspace",
            "--exclude",
            "palisade-guest",
            "--exclude",
            "palisade-oxc-parser",
            "-e",
            "dev",
        ],
    ),
    (
        "the library's docs with serve",
        &[
            "-p",
            "palisade",
            "-p",
            "palisade-node",
            "--features",
            "palisade/serve",
        ],
    ),
];

/// The crates whose own build is what costs, with all they are built from: wasmtime and the
/// wasmtime crates the host uses, and jsonschema (about two minutes cold, and it waits for
/// regex-automata's build, whose features differ the most between commands).
const ROOTS: &[&str] = &[
    "wasmtime",
    "wasmtime-wasi",
    "wasmtime-wasi-http",
    "wasmtime-wizer",
    "jsonschema",
];

/// The differences known and accepted, each a crate in one command:
/// - napi's macros take `semver` with its `default` feature on the host side, where wasmtime's
///   component macro takes it too, so the Node.js addon compiles wasmtime (not Cranelift) a
///   second time. No crate of this workspace can take that feature away.
/// - The binary's `tracing-subscriber` turns on `regex-automata`'s `dfa-build`, which the library
///   alone does not: xtask and the packaged crate build jsonschema once, the binary and the tests
///   once more. Giving xtask the binary's features would move that build to the packaged crate,
///   which takes no crate but its own dependencies.
const ACCEPTED: &[(&str, &str)] = &[
    ("the Node.js addon", "semver v1.0.28"),
    ("xtask", "regex-automata v0.4.18"),
    (
        "the packaged crate (make package)",
        "regex-automata v0.4.18",
    ),
];

/// Each crate's features in one build: `name version` to features.
type Features = BTreeMap<String, BTreeSet<String>>;

pub fn check(root: &Path) -> Result<()> {
    let roots: Vec<&str> = ROOTS.iter().flat_map(|r| ["-p", r]).collect();
    let cone: BTreeSet<String> = tree(root, &roots)?.into_keys().collect();
    let mut drift = compare(root, &cone, BUILDS)?;
    drift.extend(compare(root, &cone, CHECKS)?);
    if !drift.is_empty() {
        bail!(
            "commands that would compile or check wasmtime or jsonschema again (give a command \
             the features it lacks, as bindings/core/Cargo.toml does, or the others those it \
             adds):\n  {}",
            drift.join("\n  ")
        );
    }
    println!(
        "feature-sets: {} builds and {} checks turn on the same features in the {} crates \
         wasmtime and jsonschema are built from (accepted: {ACCEPTED:?})",
        BUILDS.len(),
        CHECKS.len(),
        cone.len()
    );
    Ok(())
}

/// Where each of `runs` after the first turns on other features than the first in the `cone`.
fn compare(root: &Path, cone: &BTreeSet<String>, runs: &[Run]) -> Result<Vec<String>> {
    let (first, first_args) = runs[0];
    let base = tree(root, first_args)?;
    let mut drift = Vec::new();
    for (name, args) in &runs[1..] {
        for (krate, features) in tree(root, args)? {
            let Some(expected) = base.get(&krate) else {
                continue;
            };
            let accepted = ACCEPTED.contains(&(*name, krate.as_str()));
            if cone.contains(&krate) && *expected != features && !accepted {
                let lacks: Vec<_> = expected.difference(&features).collect();
                let adds: Vec<_> = features.difference(expected).collect();
                drift.push(format!(
                    "{name}: {krate} lacks {lacks:?} and adds {adds:?} against {first}"
                ));
            }
        }
    }
    Ok(drift)
}

/// The crates one build compiles, for the target and for the host (proc macros, build scripts
/// and what they use), each with its features on either side together.
fn tree(root: &Path, args: &[&str]) -> Result<Features> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "tree", "--locked", "--prefix", "none", "--format", "{p}|{f}",
        ])
        .args(["-e", "normal,build"])
        .args(args)
        .current_dir(root)
        .output()
        .context("running cargo tree")?;
    if !output.status.success() {
        bail!(
            "cargo tree {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut features = Features::new();
    for line in String::from_utf8(output.stdout)?.lines() {
        // A crate met again ends in " (*)".
        let line = line.strip_suffix(" (*)").unwrap_or(line);
        let Some((package, list)) = line.split_once('|') else {
            continue;
        };
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        features
            .entry(format!("{name} {version}"))
            .or_default()
            .extend(list.split(',').filter(|f| !f.is_empty()).map(String::from));
    }
    Ok(features)
}

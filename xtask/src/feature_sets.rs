//! `feature-sets`: fail when two of `make check`'s dev-profile builds would compile wasmtime's
//! dependencies with different features.
//!
//! Cargo turns on a dependency's features from the packages one command builds, and a crate built
//! with other features is another build of it. One feature more on a crate wasmtime depends on
//! builds Cranelift and wasmtime again, six minutes on two cores (docs/architecture.md, "One
//! build of wasmtime").

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The builds that must share one compiled wasmtime: what each is, and its `cargo tree` arguments.
const BUILDS: &[(&str, &[&str])] = &[
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

/// The crates whose own build is what costs: wasmtime and the wasmtime crates the host uses.
const ROOTS: &[&str] = &[
    "wasmtime",
    "wasmtime-wasi",
    "wasmtime-wasi-http",
    "wasmtime-wizer",
];

/// A difference known and accepted: napi's macros take `semver` with its `default` feature on the
/// host side, where wasmtime's component macro takes it too, so the addon compiles wasmtime (not
/// Cranelift) a second time. No crate of this workspace can take that feature away.
const ACCEPTED: &[(&str, &str)] = &[("the Node.js addon", "semver v1.0.28")];

/// Each crate's features in one build: `name version` to features.
type Features = BTreeMap<String, BTreeSet<String>>;

pub fn check(root: &Path) -> Result<()> {
    let roots: Vec<&str> = ROOTS.iter().flat_map(|r| ["-p", r]).collect();
    let cone: BTreeSet<String> = tree(root, &roots)?.into_keys().collect();
    let (first, first_args) = BUILDS[0];
    let base = tree(root, first_args)?;
    let mut drift = Vec::new();
    for (name, args) in &BUILDS[1..] {
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
    if !drift.is_empty() {
        bail!(
            "builds that would compile wasmtime again (give a build the features it lacks, as \
             bindings/core/Cargo.toml does, or the other builds those it adds):\n  {}",
            drift.join("\n  ")
        );
    }
    println!(
        "feature-sets: {} builds turn on the same features in the {} crates wasmtime is built \
         from (accepted: {ACCEPTED:?})",
        BUILDS.len(),
        cone.len()
    );
    Ok(())
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

//! The compiled guest, cached on disk so that only the first start on a machine pays for
//! Cranelift. Entries are keyed by the guest's SHA-256 and the engine's compatibility hash.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The default cache folder: `$PALISADE_CACHE_DIR`, else `$XDG_CACHE_HOME/palisade`, else
/// `$HOME/.cache/palisade`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PALISADE_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("palisade"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("palisade"))
}

/// The default data folder (the key-value store): `$PALISADE_DATA_DIR`, else
/// `$XDG_DATA_HOME/palisade`, else `$HOME/.local/share/palisade`, else `./palisade-data`.
pub(crate) fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PALISADE_DATA_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(dir).join("palisade");
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".local/share/palisade"),
        None => PathBuf::from("palisade-data"),
    }
}

fn entry_path(dir: &Path, engine: &Engine, wasm: &[u8]) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let guest = Sha256::digest(wasm);
    let guest: String = guest[..12].iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("guest-{guest}-{:016x}.cwasm", hasher.finish()))
}

/// Load the compiled component from the cache, or compile it (calling `on_compile` first) and
/// store it. Without a usable cache folder the component is compiled in memory.
pub(crate) fn load(
    engine: &Engine,
    wasm: &[u8],
    dir: Option<&Path>,
    on_compile: &dyn Fn(),
) -> wasmtime::Result<Component> {
    let Some(dir) = dir else {
        on_compile();
        return Component::new(engine, wasm);
    };
    let path = entry_path(dir, engine, wasm);
    if path.is_file() {
        match deserialize(engine, &path) {
            Ok(component) => return Ok(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), "ignoring unusable cache entry: {e:#}")
            }
        }
    }
    on_compile();
    let compiled = engine.precompile_component(wasm)?;
    if let Err(e) = store(dir, &path, &compiled) {
        tracing::warn!(path = %path.display(), "cannot write the compiled-guest cache: {e}");
        #[allow(unsafe_code)]
        // SAFETY: `compiled` was produced just now by this engine's `precompile_component`.
        return unsafe { Component::deserialize(engine, &compiled) };
    }
    deserialize(engine, &path)
}

#[allow(unsafe_code)]
fn deserialize(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: the file was written by `store` below from `Engine::precompile_component`, is
    // renamed into place only when complete, and its name carries the engine's compatibility
    // hash, which wasmtime checks again while loading. The cache folder belongs to the user
    // running Palisade; whoever can write there can already run code as that user.
    unsafe { Component::deserialize_file(engine, path) }
}

fn store(dir: &Path, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, compiled)?;
    std::fs::rename(&tmp, path)
}

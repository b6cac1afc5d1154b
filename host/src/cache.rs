//! The compiled guest, cached on disk so that only the first start on a machine pays for
//! Cranelift. Entries are keyed by the guest's SHA-256 and the engine's compatibility hash.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Write an entry under a name of its own, then rename it into place: a reader only ever maps
/// a complete file. Two threads may compile the same guest at once (two engines of one
/// configuration, or two `Palisade`s in one process); each writes its own temporary file, since
/// a shared one would be truncated under the other's rename and a mapped, truncated file
/// faults.
fn store(dir: &Path, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir)?;
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{write}", std::process::id()));
    let written = std::fs::write(&tmp, compiled).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::store;

    /// Writers racing on one entry never let a reader see a partial file.
    #[test]
    fn concurrent_writers_leave_only_complete_entries() {
        let dir = std::env::temp_dir().join(format!("palisade-cache-race-{}", std::process::id()));
        let path = dir.join("entry.cwasm");
        const LEN: usize = 1 << 20;
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(bytes) = std::fs::read(&path) {
                        assert_eq!(bytes.len(), LEN, "a partial entry was visible");
                        assert!(
                            bytes.iter().all(|&b| b == bytes[0]),
                            "a mixed entry was visible"
                        );
                    }
                }
            });
            let writers: Vec<_> = (1..=4u8)
                .map(|writer| {
                    let (dir, path) = (&dir, &path);
                    scope.spawn(move || {
                        (0..20).try_for_each(|_| store(dir, path, &vec![writer; LEN]))
                    })
                })
                .collect();
            let written: Vec<_> = writers.into_iter().map(|w| w.join()).collect();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            let read = reader.join();
            for result in written {
                result
                    .expect("a writer panicked")
                    .expect("every write succeeds");
            }
            if let Err(panic) = read {
                std::panic::resume_unwind(panic);
            }
        });
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "entry.cwasm")
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! The compiled guest, cached on disk so that only the first start on a machine pays for
//! Cranelift. Entries are keyed by the guest's BLAKE3 hash and the engine's compatibility hash,
//! and end with the BLAKE3 hash of their own compiled code, checked on every load.
//!
//! Compiled scripts (`palisade compile`) are cached the same way, under names of their own
//! (`script-…`): anyone who can hand the host a `.wasm` can make one, so their entries are
//! bounded by size (least recently used first out), and their Cranelift compiles go through a
//! [`CompileGate`]: one at a time, within a budget of compile time per minute. The guests'
//! entries are a small set per Palisade version (the guest builds, their instrumented forms, one
//! per wasm stack size); an entry no version has used for [`GUEST_ENTRY_MAX_AGE`] is removed
//! the next time a guest entry is written (after an upgrade, say), so old versions' entries do
//! not pile up.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
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
    named_entry(dir, "guest", engine, wasm)
}

fn named_entry(dir: &Path, kind: &str, engine: &Engine, wasm: &[u8]) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let hash = blake3::hash(wasm);
    let sha: String = hash.as_bytes()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(format!("{kind}-{sha}-{:016x}.cwasm", hasher.finish()))
}

/// Where a compiled script's entry lives.
fn script_path(dir: &Path, engine: &Engine, wasm: &[u8]) -> PathBuf {
    named_entry(dir, SCRIPT_PREFIX, engine, wasm)
}

const SCRIPT_PREFIX: &str = "script";

/// A compiled script's component from the disk cache, if it is there; its entry is marked as
/// used now, for the eviction order.
pub(crate) fn cached_script(engine: &Engine, wasm: &[u8], dir: Option<&Path>) -> Option<Component> {
    let path = script_path(dir?, engine, wasm);
    if !path.is_file() {
        return None;
    }
    match deserialize(engine, &path) {
        Ok(component) => {
            // The modification time is the entry's last use: eviction removes the oldest.
            if let Ok(file) = std::fs::File::open(&path) {
                let _ = file.set_modified(SystemTime::now());
            }
            Some(component)
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), "ignoring unusable cache entry: {e:#}");
            None
        }
    }
}

/// Compile a script's component with Cranelift and store it; then remove the least recently
/// used script entries until those left take at most `max_bytes` (the new one always stays).
/// The caller holds a [`CompileGate`] permit.
pub(crate) fn compile_script(
    engine: &Engine,
    wasm: &[u8],
    dir: Option<&Path>,
    max_bytes: u64,
) -> wasmtime::Result<Component> {
    let compiled = engine.precompile_component(wasm)?;
    let stored = dir.map(|dir| {
        let path = script_path(dir, engine, wasm);
        store(dir, &path, &sealed(&compiled)).map(|()| path)
    });
    match stored {
        Some(Ok(path)) => {
            evict_scripts(path.parent().unwrap_or(Path::new(".")), &path, max_bytes);
            deserialize_stored(engine, &path, &compiled)
        }
        other => {
            if let Some(Err(e)) = other {
                tracing::warn!("cannot write the compiled-script cache: {e}");
            }
            just_compiled(engine, &compiled)
        }
    }
}

/// Remove script entries, least recently used first, until the rest take at most `max_bytes`;
/// `keep` (the entry just written) always stays. Entries another process removes meanwhile, or
/// that cannot be removed, are skipped: a mapped entry stays valid for whoever mapped it.
fn evict_scripts(dir: &Path, keep: &Path, max_bytes: u64) {
    let mut scripts = entries(dir, SCRIPT_PREFIX);
    // Newest first; the entry just written first of all.
    scripts.sort_by(|a, b| (b.2 == keep).cmp(&(a.2 == keep)).then(b.0.cmp(&a.0)));
    let mut total = 0u64;
    for (_, len, path) in scripts {
        total = total.saturating_add(len);
        if total > max_bytes && path != keep {
            let _ = std::fs::remove_file(&path);
            total -= len;
        }
    }
}

/// Cranelift compiles of compiled scripts: one at a time, and at most `budget` of compile time
/// per minute (a token bucket that starts full; a compile may start while any is left, and
/// what it takes beyond that is owed). Each costs about 1.25 s of CPU here and happens before
/// the call's deadline, so without this anyone who can submit `.wasm` files could keep the
/// host's cores busy compiling.
pub(crate) struct CompileGate {
    pub one_at_a_time: tokio::sync::Semaphore,
    budget: Duration,
    /// Seconds of compiling left (negative when owed), and when that was last brought up to date.
    left: Mutex<(f64, Instant)>,
}

impl CompileGate {
    pub fn new(budget: Duration) -> Self {
        Self {
            one_at_a_time: tokio::sync::Semaphore::new(1),
            budget,
            left: Mutex::new((budget.as_secs_f64(), Instant::now())),
        }
    }

    pub fn budget(&self) -> Duration {
        self.budget
    }

    fn refilled(&self) -> std::sync::MutexGuard<'_, (f64, Instant)> {
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let rate = self.budget.as_secs_f64() / 60.0;
        left.0 = (left.0 + now.duration_since(left.1).as_secs_f64() * rate)
            .min(self.budget.as_secs_f64());
        left.1 = now;
        left
    }

    /// `Ok` when a compile may start now, else how long until one may.
    pub fn check(&self) -> Result<(), Duration> {
        let left = self.refilled();
        if left.0 > 0.0 {
            return Ok(());
        }
        let rate = self.budget.as_secs_f64() / 60.0;
        if rate <= 0.0 {
            return Err(Duration::from_secs(60));
        }
        // Until a little is left again.
        Err(Duration::from_secs_f64((-left.0 / rate).max(0.001)))
    }

    /// Take `spent` (a compile's wall-clock time) from the budget.
    pub fn charge(&self, spent: Duration) {
        self.refilled().0 -= spent.as_secs_f64();
    }
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
            Ok(component) => {
                mark_used(&path);
                return Ok(component);
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), "ignoring unusable cache entry: {e:#}")
            }
        }
    }
    on_compile();
    let compiled = engine.precompile_component(wasm)?;
    if let Err(e) = store(dir, &path, &sealed(&compiled)) {
        tracing::warn!(path = %path.display(), "cannot write the compiled-guest cache: {e}");
        return just_compiled(engine, &compiled);
    }
    evict_stale_guests(dir, &path, GUEST_ENTRY_MAX_AGE);
    deserialize_stored(engine, &path, &compiled)
}

/// How long a guest entry that no start has used stays in the cache folder.
pub(crate) const GUEST_ENTRY_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// A guest entry's modification time is its last use, brought up to date at most once a day
/// (a start costs one `stat` more, not a write).
fn mark_used(path: &Path) {
    let stale = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > Duration::from_secs(24 * 3600));
    if stale && let Ok(file) = std::fs::File::open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Remove guest entries unused for longer than `max_age`; `keep` (the entry just written)
/// always stays. An entry another process has mapped stays valid for it after removal.
fn evict_stale_guests(dir: &Path, keep: &Path, max_age: Duration) {
    for (modified, _, path) in entries(dir, "guest") {
        // An unknown modification time (the epoch here) is never taken for an old one.
        let old = modified != UNIX_EPOCH && modified.elapsed().is_ok_and(|age| age > max_age);
        if old && path != keep {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The entries of `kind` (`guest`, `script`) in `dir`: modification time (the epoch when
/// unknown), length and path. A folder that cannot be read has none.
fn entries(dir: &Path, kind: &str) -> Vec<(SystemTime, u64, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix(kind)
                .is_some_and(|rest| rest.starts_with('-'))
                && name.ends_with(".cwasm")
        })
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            meta.is_file()
                .then(|| (meta.modified().unwrap_or(UNIX_EPOCH), meta.len(), e.path()))
        })
        .collect()
}

/// An entry's bytes: the compiled component followed by its BLAKE3 hash, so that a truncated
/// or altered entry is detected before wasmtime maps it as native code.
fn sealed(compiled: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(compiled.len() + DIGEST_LEN);
    bytes.extend_from_slice(compiled);
    bytes.extend_from_slice(blake3::hash(compiled).as_bytes());
    bytes
}

const DIGEST_LEN: usize = blake3::OUT_LEN;

/// Check an entry's digest through a read-only mapping of the file, then let wasmtime map the
/// same file (its pages come from the page cache as the code needs them, without a copy). An
/// entry whose digest does not match (truncated, altered, or written before entries carried
/// this digest) is an error: the caller compiles afresh and replaces it.
///
/// Palisade never changes an entry in place: [`store`] writes a new file and renames it over
/// the old one, so the file checked here is complete, and a rename between the check and the
/// load puts another complete entry of the same name there. The digest detects damage and
/// accidents, not a writer who recomputes it: the cache folder belongs to the user running
/// Palisade, and whoever can write there can already run code as that user.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    let file = std::fs::File::open(path)?;
    // SAFETY: a read-only private mapping, read only within this function. The file can be
    // truncated by another process while it is mapped (a SIGBUS on access); Palisade's writers
    // never do that (they rename whole files), and the folder is the user's own.
    let mapped = unsafe { memmap2::Mmap::map(&file)? };
    let Some(split) = mapped.len().checked_sub(DIGEST_LEN) else {
        wasmtime::bail!("the entry is {} bytes: truncated", mapped.len());
    };
    let (compiled, digest) = mapped.split_at(split);
    if blake3::hash(compiled).as_bytes().as_slice() != digest {
        wasmtime::bail!("the entry's digest does not match: truncated or altered");
    }
    drop(mapped);
    // SAFETY: the file holds what `store` wrote from `Engine::precompile_component`, followed
    // by its digest, which matched just now (wasmtime reads the compiled object's sections by
    // their offsets, so the trailing digest is not part of the code); its name carries the
    // engine's compatibility hash, which wasmtime checks again while loading.
    unsafe { Component::deserialize_file(engine, path) }
}

/// Write an entry under a name of its own, then rename it into place: a reader only ever maps
/// a complete file. Two threads or processes may compile the same guest at once (two engines of
/// one configuration, two `Palisade`s in one process, two containers sharing a cache volume,
/// whose process ids can be equal); each writes a temporary file that it alone created
/// (`create_new`, a random part in its name), since a shared one would be truncated under the
/// other's rename.
fn store(dir: &Path, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    static WRITES: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir)?;
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    let (tmp, mut file) = loop {
        let tmp = path.with_extension(format!(
            "tmp{}-{write}-{:016x}",
            std::process::id(),
            rand::random::<u64>()
        ));
        match std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(compiled)
        .and_then(|()| std::fs::rename(&tmp, path));
    drop(file);
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Load an entry just stored; if it no longer checks (another process replaced or removed it
/// meanwhile: its eviction, its own write), load the bytes just compiled from memory instead of
/// failing the start.
fn deserialize_stored(
    engine: &Engine,
    path: &Path,
    compiled: &[u8],
) -> wasmtime::Result<Component> {
    deserialize(engine, path).or_else(|e| {
        tracing::warn!(path = %path.display(), "the entry just written is unusable, loading from memory: {e:#}");
        just_compiled(engine, compiled)
    })
}

/// Load what this engine's `precompile_component` produced just now, from memory.
#[allow(unsafe_code)]
fn just_compiled(engine: &Engine, compiled: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: callers pass only the bytes `Engine::precompile_component` of this engine
    // returned in the same call, never bytes read back from anywhere.
    unsafe { Component::deserialize(engine, compiled) }
}

#[cfg(test)]
mod tests {
    use super::{CompileGate, evict_scripts, evict_stale_guests, store};
    use std::time::{Duration, SystemTime};

    /// Script entries go least recently used first until the rest fit; guest entries, other
    /// files and the entry just written stay.
    #[test]
    fn script_entries_are_evicted_least_recently_used_first() {
        let dir = std::env::temp_dir().join(format!("palisade-evict-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let now = SystemTime::now();
        let entry = |name: &str, age_s: u64| {
            let path = dir.join(name);
            std::fs::write(&path, vec![0u8; 1000]).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(now - Duration::from_secs(age_s)).unwrap();
            path
        };
        entry("script-a-1.cwasm", 40);
        entry("script-b-1.cwasm", 10);
        entry("script-c-1.cwasm", 30);
        entry("guest-g-1.cwasm", 100);
        entry("notes.txt", 100);
        // The new entry is the oldest by its time stamp, and still stays.
        let new = entry("script-new-1.cwasm", 50);
        evict_scripts(&dir, &new, 2500);
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "guest-g-1.cwasm",
                "notes.txt",
                "script-b-1.cwasm",
                "script-new-1.cwasm"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn guest_entries_unused_for_the_maximum_age_are_removed() {
        let dir = std::env::temp_dir().join(format!("palisade-guest-evict-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let old = SystemTime::now() - Duration::from_secs(40 * 24 * 3600);
        let entry = |name: &str, modified: SystemTime| {
            let path = dir.join(name);
            std::fs::write(&path, b"x").unwrap();
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(modified)
                .unwrap();
            path
        };
        let stale = entry("guest-aaaa-1.cwasm", old);
        let fresh = entry("guest-bbbb-1.cwasm", SystemTime::now());
        let kept = entry("guest-cccc-1.cwasm", old);
        let script = entry("script-dddd-1.cwasm", old);
        let other = entry("notes.txt", old);
        evict_stale_guests(&dir, &kept, Duration::from_secs(30 * 24 * 3600));
        assert!(!stale.exists(), "an unused old guest entry is removed");
        assert!(
            fresh.exists() && kept.exists(),
            "a recent entry and the one just written stay"
        );
        assert!(
            script.exists() && other.exists(),
            "script entries and other files are not guest entries"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_compile_budget_is_spent_then_owed() {
        let gate = CompileGate::new(Duration::from_secs(6));
        assert!(gate.check().is_ok());
        gate.charge(Duration::from_secs(8));
        // 2 s owed at 0.1 s per second: about 20 s to wait.
        let wait = gate.check().unwrap_err();
        assert!(
            wait > Duration::from_secs(19) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        let none = CompileGate::new(Duration::ZERO);
        assert!(none.check().is_err());
    }

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

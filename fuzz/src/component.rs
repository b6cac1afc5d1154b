//! `component`: arbitrary and mutated `.wasm` bytes, loaded as `palisade run app.wasm` loads
//! them (`Script::from_file_bytes`, then a call, which compiles the component from its wasm
//! bytes with Cranelift and checks its imports and exports against the guest's world): a typed
//! error with a documented code, or a run; never a crash, never `internal`.
//!
//! An input is one of two things:
//!
//! - bytes that do not start with [`EDITS`]: the file itself (empty, core modules, damaged
//!   magic, text, truncated heads);
//! - [`EDITS`] followed by edits to a script compiled by this build, once per process
//!   (`Palisade::compile` of [`SOURCE`]): six bytes each, `op offset:u32le value`, where `op %
//!   4` sets the byte at `offset` (modulo the length) to `value`, truncates there, inserts
//!   `value` there, or removes the byte there. A committed compiled file would stop being one
//!   of this build's as soon as the guest changes (its marker names the guest's SHA-256, and
//!   any other is refused before Cranelift sees it); the edits stay valid, and are small
//!   for libFuzzer to mutate and keep, where whole components are 3 MB.
//!
//! Only what the CLI does with an untrusted file is fuzzed: wasmtime's `deserialize` of
//! native code is never given these bytes (the disk cache checks each entry's SHA-256 before
//! it; `faults::a_tampered_or_truncated_cache_entry_is_rebuilt_not_loaded`).

use palisade::{Palisade, Policy, Script};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// The first byte of an input made of edits to a freshly compiled script.
pub const EDITS: u8 = 0xED;

/// The script compiled once per process, whose component the edits change.
pub const SOURCE: &str = "export default (x) => ({ doubled: x.n * 2 })\n";

/// A `Palisade` whose compile budget does not run out under the fuzzer: every input that is a
/// component is compiled, rather than refused as `capacity_exhausted` after 30 s a minute.
fn palisade() -> &'static Palisade {
    static PALISADE: OnceLock<Palisade> = OnceLock::new();
    PALISADE.get_or_init(|| {
        let _guard = crate::runtime().enter();
        Palisade::builder()
            .compile_budget(Duration::from_secs(3600))
            .build()
            .expect("the engine starts")
    })
}

/// [`SOURCE`] compiled by this build, once per process.
pub fn compiled() -> &'static [u8] {
    static COMPILED: OnceLock<Vec<u8>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let script = Script::new("d.js", SOURCE);
        crate::runtime()
            .block_on(palisade().compile(&Policy::builtin_default(), &script))
            .expect("the seed script compiles")
    })
}

/// The file an input stands for: itself, or its edits applied to [`compiled`].
pub fn file_of(data: &[u8]) -> Vec<u8> {
    let Some((&EDITS, edits)) = data.split_first() else {
        return data.to_vec();
    };
    let mut wasm = compiled().to_vec();
    for edit in edits.chunks_exact(6) {
        let offset = u32::from_le_bytes([edit[1], edit[2], edit[3], edit[4]]) as usize;
        let value = edit[5];
        match edit[0] % 4 {
            0 if !wasm.is_empty() => {
                let at = offset % wasm.len();
                wasm[at] = value;
            }
            1 => wasm.truncate(offset % (wasm.len() + 1)),
            2 => wasm.insert(offset % (wasm.len() + 1), value),
            3 if !wasm.is_empty() => {
                wasm.remove(offset % wasm.len());
            }
            _ => {}
        }
    }
    wasm
}

pub fn check(data: &[u8]) {
    let file = file_of(data);
    let script = match Script::from_file_bytes(Path::new("app.wasm"), file) {
        Ok(Ok(script)) => script,
        Ok(Err(_)) => unreachable!("a .wasm file is always read as a component"),
        Err(e) => {
            assert_eq!(e.code(), "invalid_component", "loading ended {e}");
            return;
        }
    };
    let policy = Policy::builtin_default();
    let outcome = crate::runtime().block_on(palisade().run(&policy, &script, r#"{"n": 21}"#));
    if data == [EDITS] {
        // The compiled script itself, unedited: it runs (a seed that no longer reaches the
        // call would leave every edit fuzzing the refusal of a stale file instead).
        let output = outcome.result.as_ref().map(|o| o.get().to_owned());
        assert_eq!(
            output.as_deref().ok(),
            Some(r#"{"doubled":42}"#),
            "{output:?}"
        );
        return;
    }
    if let Err(e) = &outcome.result {
        assert!(
            crate::is_documented_code(e.code()),
            "a component ended {}: {e}",
            e.code()
        );
    }
}

//! `component`: arbitrary and mutated `.wasm` bytes, loaded as `palisade run app.wasm` loads
//! them (`Script::from_file_bytes`, then a call, which compiles the component from its wasm
//! bytes with Cranelift and checks its imports and exports against the guest's world): a typed
//! error with a documented code, or a run; never a crash, never `internal`. The seeds are real
//! compiled scripts (`palisade compile`).
//!
//! Only what the CLI does with an untrusted file is fuzzed: wasmtime's `deserialize` of
//! native code is never given these bytes (the disk cache checks each entry's SHA-256 before
//! it; `faults::a_tampered_or_truncated_cache_entry_is_rebuilt_not_loaded`).

use palisade::{Palisade, Policy, Script};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

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

pub fn check(data: &[u8]) {
    let script = match Script::from_file_bytes(Path::new("app.wasm"), data.to_vec()) {
        Ok(Ok(script)) => script,
        Ok(Err(_)) => unreachable!("a .wasm file is always read as a component"),
        Err(e) => {
            assert_eq!(e.code(), "invalid_component", "loading ended {e}");
            return;
        }
    };
    let policy = Policy::builtin_default();
    let outcome = crate::runtime().block_on(palisade().run(&policy, &script, "{}"));
    if let Err(e) = &outcome.result {
        assert!(
            crate::is_documented_code(e.code()),
            "a component ended {}: {e}",
            e.code()
        );
    }
}

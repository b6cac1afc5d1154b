//! Palisade's fuzz targets. Each module holds one target's logic as `check(bytes)`, which
//! panics on a finding: the libFuzzer binaries in `fuzz_targets/` call it
//! (`cargo +nightly fuzz run NAME`), and so does the corpus replay test on stable
//! (`tests/tests/integration/fuzz_replay.rs`), for every file under `fuzz/corpus/NAME/` and
//! `fuzz/artifacts/NAME/`. See docs/reliability.md, "Fuzzing".

pub mod component;
pub mod input_json;
pub mod policy;
pub mod replay;
pub mod serve_body;
pub mod url_gate;

use palisade::Palisade;
use std::sync::OnceLock;

/// A target's logic: panics on a finding.
pub type Check = fn(&[u8]);

/// The targets, by name: the folders of their corpora.
pub const TARGETS: &[(&str, Check)] = &[
    ("policy", policy::check),
    ("url_gate", url_gate::check),
    ("input_json", input_json::check),
    ("replay", replay::check),
    ("component", component::check),
    ("serve_body", serve_body::check),
];

/// One tokio runtime per process, shared by every input (one engine per process, reused).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// One `Palisade` per process, shared by every input of the sandbox targets.
pub fn palisade() -> &'static Palisade {
    static PALISADE: OnceLock<Palisade> = OnceLock::new();
    PALISADE.get_or_init(|| {
        let _guard = runtime().enter();
        Palisade::new().expect("the engine starts")
    })
}

/// The codes a caller may see (docs/errors.md), `internal` excepted: an input that ends in
/// `internal` is a finding for every target.
pub fn is_documented_code(code: &str) -> bool {
    palisade::ErrorCode::ALL
        .iter()
        .any(|c| c.as_str() == code && code != "internal")
}

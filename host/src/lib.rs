//! Palisade runs untrusted JavaScript inside Rust programs.
//!
//! Every call gets a fresh WebAssembly sandbox: a QuickJS guest instantiated by wasmtime under
//! the fuel budget, memory cap, stack size and wall-clock deadline of a [`Policy`]. Nothing of
//! one call is visible to the next, and every failure comes back as an [`Error`] with a stable
//! code.
//!
//! ```no_run
//! use palisade::{Palisade, Policy, Script};
//!
//! # async fn example() -> Result<(), palisade::Error> {
//! let palisade = Palisade::new()?; // once per process: engine, compiled guest, pool
//! let policy = Policy::builtin_default();
//! let script = Script::new("double.js", "export default (x) => ({ doubled: x.n * 2 })");
//! let outcome = palisade.run(&policy, &script, r#"{"n": 21}"#).await;
//! assert_eq!(outcome.result?.get(), r#"{"doubled":42}"#);
//! # Ok(()) }
//! ```
//!
//! A [`Policy`] comes from a TOML file ([`Policy::from_file`]), from code
//! ([`Policy::builder`], every table typed and checked as a file is), or from JSON
//! ([`Policy::from_json`]); [`Policy::json_schema`] describes the format (`docs/policy.md`).

#![warn(missing_docs)]

mod audit;
mod audit_file;
mod auto;
mod bindings;
mod bytecode;
mod cache;
mod call;
mod caps;
mod error;
mod guest;
mod hex;
mod hostfile;
pub mod kv;
mod limits;
mod live;
mod modules;
mod options;
mod palisade;
pub mod policy;
pub mod record;
#[cfg(feature = "redis")]
mod redis_pool;
mod script;
mod secrets;
mod seed;
#[cfg(feature = "serve")]
pub mod serve;
pub mod snapshot;
pub mod standalone;
mod typescript;

/// Entry points for the fuzz targets in `fuzz/`: pure parts of the host, without I/O. Not part
/// of the API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::caps::http::decide_offline;
}

pub use audit::{AuditRecord, Decision};
pub use audit_file::check_audit_log;
pub use auto::AutoCompileStatus;
pub use call::{Outcome, Receipt};
pub use caps::capability::{CallContext, CapabilityError, CapabilityFuture};
pub use caps::console::{Level, LogLine};
pub use caps::gate::Capability;
pub use error::{DEFAULT_DOCS_URL, Error, ErrorCode, Fix, GuestLocation, docs_base, set_docs_base};
pub use live::{HeapImage, HeapInfo, LiveSession, Protection};
pub use modules::{MAX_BUNDLE_BYTES, MAX_MODULES};
pub use options::RunOptions;
pub use palisade::{Builder, CallHandle, Canceller, Event, EventSink, Palisade};
pub use policy::{Limits, Policy, PolicyError};
pub use script::{MAX_SCRIPT_BYTES, Script};

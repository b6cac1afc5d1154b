//! Palisade in-process for Node.js: the native half of the `palisade-sandbox` package. The
//! package's `index.js` wraps these classes into its API (`Palisade`, `Policy`, `Script`,
//! `CapabilityError`); docs/node.md describes it.
//!
//! Every call goes through `palisade::Palisade::run_with` on the bindings' own tokio runtime
//! (`palisade_bindings::runtime`), never on Node's event loop; its events and its outcome come
//! back in order through one thread-safe function per `Palisade`, which delivers every report
//! queued by then at once. Capability handlers are answered
//! in JavaScript through one dispatching function per `Palisade`.

mod errors;
mod handles;
mod palisade;

pub use handles::{NativePolicy, NativeScript};
pub use palisade::{NativeCall, NativePalisade};

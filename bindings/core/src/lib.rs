//! What Palisade's Node.js (`bindings/node`) and Python (`bindings/python`) bindings share, so
//! that both read a call and write its outcome the same way, through the library's own call
//! path ([`palisade::Palisade::run_with`]) with its limits, audit and refusals:
//!
//! - [`Request`]: one call as the binding's caller wrote it (JSON), checked, then resolved
//!   into a policy, a script, the input and [`palisade::RunOptions`];
//! - [`outcome_json`]: the [`palisade::Outcome`] as the JSON object both bindings return, each
//!   error with its `fix_note`; or in two parts ([`outcome_parts`]), the second read when
//!   asked for;
//! - [`Settings`] and [`build`]: a `Palisade` from the caller's settings and capability
//!   handlers;
//! - [`start`], [`run_here`] and [`Call`]: a call on the bindings' own tokio runtime, or on
//!   the caller's thread under it, cancellable from the caller's thread;
//! - [`Reports`]: the reports of calls on the runtime, queued for the caller's one thread and
//!   handed over in batches.

mod batch;
mod call;
mod host;
mod outcome;
mod request;

pub use batch::Reports;
pub use call::{
    Call, Done, OnEvent, Start, after_fork_in_parent, before_fork, forked, forks, run_here,
    runtime, start,
};
pub use host::{Handler, Settings, answer, build, build_with, context_json, event_json};
pub use outcome::{
    error_json, failed, fix_note, outcome_json, outcome_json_but_output, outcome_parts, thrown_json,
};
pub use request::{Prepared, Refused, Request, read_policy, read_script};

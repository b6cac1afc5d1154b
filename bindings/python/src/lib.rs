//! Palisade in-process for Python: the native half (`palisade._native`) of the
//! `palisade-sandbox` wheel. The package's `palisade/__init__.py` builds its API (`Palisade`,
//! `Policy`, `Script`, `Outcome`, `CapabilityError`) on these classes: `Palisade` extends
//! `NativePalisade`, whose `run` reads the request and runs the call without a Python frame,
//! and `Outcome` is this module's own; docs/python.md describes it.
//!
//! Every call goes through [`palisade::Palisade::run_with`] under the bindings' own tokio
//! runtime (`palisade_bindings::runtime`): `run` runs it on the calling thread with the GIL
//! released, `start` (for asyncio) on the runtime's threads. Capability handlers are answered
//! in Python through one invoking function per `Palisade`.

mod errors;
mod exit;
mod handles;
mod mailbox;
mod outcome;
mod palisade;
mod request;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NativeError", m.py().get_type::<errors::NativeError>())?;
    m.add_class::<handles::NativePolicy>()?;
    m.add_class::<handles::NativeScript>()?;
    m.add_class::<palisade::NativePalisade>()?;
    m.add_class::<palisade::NativeCall>()?;
    m.add_class::<mailbox::Mailbox>()?;
    m.add_class::<outcome::NativeOutcome>()?;
    m.add_function(wrap_pyfunction!(exit::_at_exit, m)?)?;
    m.add_function(wrap_pyfunction!(exit::_forked, m)?)?;
    m.add_function(wrap_pyfunction!(exit::_before_fork, m)?)?;
    m.add_function(wrap_pyfunction!(exit::_after_fork_in_parent, m)?)?;
    // Which thread is Python's main one is asked of `threading` now, not in the first `run`,
    // which then runs no Python frame either.
    palisade::on_main_thread(m.py())?;
    Ok(())
}

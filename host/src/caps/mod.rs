//! Host-side implementations of the guest's imports, one room per capability. Each one checks
//! the call's policy before it does anything, and implements its WIT `Host` traits on a view of
//! its own state, so that none of them names the whole call.

pub(crate) mod capability;
pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod console;
pub(crate) mod fs;
pub(crate) mod gate;
pub(crate) mod http;
pub(crate) mod kv;
pub(crate) mod ungranted;

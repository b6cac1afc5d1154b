//! Host-side implementations of the guest's imports, one module per capability. Each one checks
//! the call's policy before it does anything.

pub(crate) mod capability;
pub(crate) mod config;
pub(crate) mod console;
pub(crate) mod files;
pub(crate) mod forward;
pub(crate) mod http;
pub(crate) mod kv;
pub(crate) mod quota;
pub(crate) mod ungranted;
pub(crate) mod usage;

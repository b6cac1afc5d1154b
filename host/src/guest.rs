//! The two builds of the guest component, embedded in the crate: the full guest and the plain
//! guest (no capability imports), and which one a call runs in.

use crate::policy::Policy;

/// The pre-initialized full guest component, built by `cargo xtask guest` from `guest-js/`.
const GUEST: &[u8] = include_bytes!("../guest/palisade-guest.wasm");

/// The same guest built without its capability imports (`guest-js` without `capabilities`).
const GUEST_PLAIN: &[u8] = include_bytes!("../guest/palisade-guest-plain.wasm");

/// The guest built against standard WASI only (`guest-js` with `standalone`), for `palisade
/// build` (`crate::standalone`).
const GUEST_STANDALONE: &[u8] = include_bytes!("../guest/palisade-guest-standalone.wasm");

/// The two builds of the guest. They share their QuickJS build, globals and behaviour; the
/// plain one imports none of the capabilities (`wasi:http`, `wasi:keyvalue`, `wasi:config`,
/// `wasi:filesystem`, capability calls), so wasmtime has about half the imports and a third of
/// the indirect lowerings to resolve for each of its instances. A call runs in the plain guest
/// when its policy grants none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Guest {
    Full,
    Plain,
    /// Never chosen for a policy: only `palisade build` snapshots it.
    Standalone,
}

impl Guest {
    /// The guest a call under `policy` runs in.
    pub(crate) fn for_policy(policy: &Policy) -> Guest {
        if policy.grants_imports() {
            Guest::Full
        } else {
            Guest::Plain
        }
    }

    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            Guest::Full => GUEST,
            Guest::Plain => GUEST_PLAIN,
            Guest::Standalone => GUEST_STANDALONE,
        }
    }

    /// The guest's SHA-256, in hex: compiled scripts name the guest they extend.
    pub(crate) fn sha256(self) -> &'static str {
        static SHAS: [std::sync::OnceLock<String>; 3] = [const { std::sync::OnceLock::new() }; 3];
        SHAS[self as usize].get_or_init(|| crate::hex::sha256(self.bytes()))
    }

    /// The guest whose SHA-256 is `sha256`, if it is one of this build's.
    pub(crate) fn from_sha256(sha256: &str) -> Option<Guest> {
        [Guest::Full, Guest::Plain, Guest::Standalone]
            .into_iter()
            .find(|g| g.sha256() == sha256)
    }
}

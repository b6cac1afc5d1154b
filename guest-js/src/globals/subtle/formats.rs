//! Formats of key data, by the index subtle.js passes the natives.

pub const RAW: u32 = 0;
pub const SPKI: u32 = 1;
pub const PKCS8: u32 = 2;
/// The private scalar (EC) or seed (Ed25519, X25519) alone, as a JWK's `d` gives it.
pub const SECRET: u32 = 3;

//! X25519 keys (RFC 7748, RFC 8410): import from raw bytes, a SubjectPublicKeyInfo, PKCS #8 or
//! a JWK's `d`, export as DER, and generation from the call's random source, over
//! curve25519-dalek. ciphers.rs's key natives and derive.rs's key agreement use them.

use super::formats::{PKCS8, RAW, SECRET, SPKI};
use crate::wasi::random::random::get_random_bytes;
use javy::quickjs::{Ctx, Exception, Result};
use pkcs8::der::Decode;
use pkcs8::der::asn1::OctetStringRef;

/// X25519's code in the natives' `curve` argument (Ed25519 is 25519).
pub const X25519: u32 = 25520;

/// X25519's object identifier, id-X25519 (RFC 8410).
const X25519_OID: pkcs8::ObjectIdentifier = pkcs8::ObjectIdentifier::new_unwrap("1.3.101.110");

/// The DER before the 32 key bytes of an X25519 SubjectPublicKeyInfo and of a version-1 PKCS #8
/// private key without the public key (RFC 8410, the form Web Crypto's implementations export).
const X25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x03, 0x21, 0x00,
];
const X25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20,
];

fn x25519_base(secret: [u8; 32]) -> Vec<u8> {
    curve25519_dalek::montgomery::MontgomeryPoint::mul_base_clamped(secret)
        .to_bytes()
        .to_vec()
}

/// An X25519 public key from raw bytes or a SubjectPublicKeyInfo.
pub fn x25519_public(format: u32, bytes: &[u8]) -> Option<Vec<u8>> {
    let key = match format {
        RAW => bytes,
        SPKI => {
            let info = pkcs8::spki::SubjectPublicKeyInfoRef::try_from(bytes).ok()?;
            if info.algorithm.oid != X25519_OID || info.algorithm.parameters.is_some() {
                return None;
            }
            info.subject_public_key.as_bytes()?
        }
        _ => return None,
    };
    <[u8; 32]>::try_from(key).ok().map(|key| key.to_vec())
}

/// An X25519 private key from a PKCS #8 document or the raw 32 bytes (a JWK's `d`): the secret
/// and the public key it gives.
pub fn x25519_private(format: u32, bytes: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let secret = match format {
        PKCS8 => {
            let info = pkcs8::PrivateKeyInfo::try_from(bytes).ok()?;
            if info.algorithm.oid != X25519_OID || info.algorithm.parameters.is_some() {
                return None;
            }
            OctetStringRef::from_der(info.private_key).ok()?.as_bytes()
        }
        SECRET => bytes,
        _ => return None,
    };
    let secret = <[u8; 32]>::try_from(secret).ok()?;
    Some((secret.to_vec(), x25519_base(secret)))
}

/// The DER of an X25519 key: SubjectPublicKeyInfo of a public key, PKCS #8 of a secret.
pub fn x25519_export(format: u32, bytes: &[u8]) -> Option<Vec<u8>> {
    let key = <[u8; 32]>::try_from(bytes).ok()?;
    let prefix: &[u8] = match format {
        SPKI => &X25519_SPKI_PREFIX,
        PKCS8 => &X25519_PKCS8_PREFIX,
        _ => return None,
    };
    Some([prefix, &key].concat())
}

/// A new X25519 key pair from the call's random source: the secret and the public key.
pub fn x25519_generate(cx: &Ctx<'_>) -> Result<(Vec<u8>, Vec<u8>)> {
    // Never a fixed key: a random source that gives fewer bytes is an error.
    let Ok(secret) = <[u8; 32]>::try_from(get_random_bytes(32)) else {
        return Err(Exception::throw_internal(
            cx,
            "the random source gave too few bytes",
        ));
    };
    Ok((secret.to_vec(), x25519_base(secret)))
}

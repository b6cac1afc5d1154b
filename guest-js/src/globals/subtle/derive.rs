//! The natives behind `crypto.subtle`'s key agreement and key derivation: ECDH (P-256, P-384,
//! P-521) and X25519 shared secrets, HKDF and PBKDF2, computed by the RustCrypto crates (the
//! curves' `ecdh`, curve25519-dalek, hkdf, pbkdf2). subtle.js checks the arguments and hands
//! whole, fresh buffers; what these natives cannot use comes back as `None`, which subtle.js
//! turns into the `DOMException` Web Crypto names.

use super::{bytes_of, unknown};
use crate::wasi::random::random::get_random_bytes;
use javy::quickjs::{ArrayBuffer, Ctx, Exception, Result};
use pkcs8::der::Decode;
use pkcs8::der::asn1::OctetStringRef;
use sha1::Sha1;
use sha2::{Sha256, Sha384, Sha512};

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
        super::ciphers::RAW => bytes,
        super::ciphers::SPKI => {
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
        super::ciphers::PKCS8 => {
            let info = pkcs8::PrivateKeyInfo::try_from(bytes).ok()?;
            if info.algorithm.oid != X25519_OID || info.algorithm.parameters.is_some() {
                return None;
            }
            OctetStringRef::from_der(info.private_key).ok()?.as_bytes()
        }
        super::ciphers::SECRET => bytes,
        _ => return None,
    };
    let secret = <[u8; 32]>::try_from(secret).ok()?;
    Some((secret.to_vec(), x25519_base(secret)))
}

/// The DER of an X25519 key: SubjectPublicKeyInfo of a public key, PKCS #8 of a secret.
pub fn x25519_export(format: u32, bytes: &[u8]) -> Option<Vec<u8>> {
    let key = <[u8; 32]>::try_from(bytes).ok()?;
    let prefix: &[u8] = match format {
        super::ciphers::SPKI => &X25519_SPKI_PREFIX,
        super::ciphers::PKCS8 => &X25519_PKCS8_PREFIX,
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

macro_rules! ecdh {
    ($curve:ident, $secret:expr, $public:expr) => {{
        match (
            $curve::SecretKey::from_slice($secret),
            $curve::PublicKey::from_sec1_bytes($public),
        ) {
            (Ok(secret), Ok(public)) => Some(
                $curve::elliptic_curve::ecdh::diffie_hellman(
                    secret.to_nonzero_scalar(),
                    public.as_affine(),
                )
                .raw_secret_bytes()
                .to_vec(),
            ),
            _ => None,
        }
    }};
}

/// The shared secret of a private key of `curve` (its scalar, or X25519 secret) and a public
/// key (the uncompressed point, or X25519 public key): the x-coordinate for ECDH, the
/// Montgomery u-coordinate for X25519, or `None` when the keys cannot be used (for X25519, an
/// all-zero result, which a small-order public key gives and Web Crypto refuses).
pub fn key_agree<'js>(
    cx: Ctx<'js>,
    curve: u32,
    secret: ArrayBuffer<'js>,
    public: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let (secret, public) = (bytes_of(&secret), bytes_of(&public));
    let shared = match curve {
        256 => ecdh!(p256, secret, public),
        384 => ecdh!(p384, secret, public),
        521 => ecdh!(p521, secret, public),
        X25519 => match (<[u8; 32]>::try_from(secret), <[u8; 32]>::try_from(public)) {
            (Ok(secret), Ok(public)) => {
                let shared = curve25519_dalek::montgomery::MontgomeryPoint(public)
                    .mul_clamped(secret)
                    .to_bytes();
                (shared != [0; 32]).then(|| shared.to_vec())
            }
            _ => None,
        },
        _ => return unknown(&cx),
    };
    shared.map(|s| ArrayBuffer::new(cx, s)).transpose()
}

/// HKDF (RFC 5869) with the hash of index `hash` (1, 256, 384, 512): `len` bytes from `key`,
/// `salt` and `info`, or `None` above 255 times the hash's length.
pub fn hkdf<'js>(
    cx: Ctx<'js>,
    hash: u32,
    key: ArrayBuffer<'js>,
    salt: ArrayBuffer<'js>,
    info: ArrayBuffer<'js>,
    len: u32,
) -> Result<Option<ArrayBuffer<'js>>> {
    let (key, salt, info) = (bytes_of(&key), bytes_of(&salt), bytes_of(&info));
    let mut out = vec![0u8; len as usize];
    let done = match hash {
        1 => hkdf::Hkdf::<Sha1>::new(Some(salt), key).expand(info, &mut out),
        256 => hkdf::Hkdf::<Sha256>::new(Some(salt), key).expand(info, &mut out),
        384 => hkdf::Hkdf::<Sha384>::new(Some(salt), key).expand(info, &mut out),
        512 => hkdf::Hkdf::<Sha512>::new(Some(salt), key).expand(info, &mut out),
        _ => return unknown(&cx),
    };
    if done.is_err() {
        return Ok(None);
    }
    ArrayBuffer::new(cx, out).map(Some)
}

/// PBKDF2 (RFC 8018) with HMAC and the hash of index `hash`: `len` bytes from `password` and
/// `salt` after `iterations` rounds. The rounds run in the guest, so the call's fuel bounds them.
pub fn pbkdf2<'js>(
    cx: Ctx<'js>,
    hash: u32,
    password: ArrayBuffer<'js>,
    salt: ArrayBuffer<'js>,
    iterations: u32,
    len: u32,
) -> Result<ArrayBuffer<'js>> {
    let (password, salt) = (bytes_of(&password), bytes_of(&salt));
    let mut out = vec![0u8; len as usize];
    match hash {
        1 => pbkdf2::pbkdf2_hmac::<Sha1>(password, salt, iterations, &mut out),
        256 => pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out),
        384 => pbkdf2::pbkdf2_hmac::<Sha384>(password, salt, iterations, &mut out),
        512 => pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, iterations, &mut out),
        _ => return unknown(&cx),
    }
    ArrayBuffer::new(cx, out)
}

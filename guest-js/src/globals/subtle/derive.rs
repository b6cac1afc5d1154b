//! The natives behind `crypto.subtle`'s key agreement and key derivation: ECDH (P-256, P-384,
//! P-521) and X25519 shared secrets, HKDF and PBKDF2, computed by the RustCrypto crates (the
//! curves' `ecdh`, curve25519-dalek, hkdf, pbkdf2). subtle.js checks the arguments and hands
//! whole, fresh buffers; what these natives cannot use comes back as `None`, which subtle.js
//! turns into the `DOMException` Web Crypto names.

use super::x25519::X25519;
use super::{bytes_of, unknown};
use javy::quickjs::{ArrayBuffer, Ctx, Result};
use sha1::Sha1;
use sha2::{Sha256, Sha384, Sha512};

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

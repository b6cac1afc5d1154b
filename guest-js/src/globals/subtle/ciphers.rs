//! The natives behind `crypto.subtle`'s AES-GCM, ECDSA (P-256, P-384, P-521) and Ed25519,
//! computed by the RustCrypto crates (aes-gcm, p256, p384, p521, ecdsa, ed25519-dalek). subtle.js checks the arguments
//! and hands whole, fresh buffers; a key or input these natives cannot use comes back as `None`
//! (or `false`), which subtle.js turns into the `DOMException` Web Crypto names.

use super::formats::{PKCS8, RAW, SECRET, SPKI};
use super::x25519::{X25519, x25519_export, x25519_generate, x25519_private, x25519_public};
use super::{bytes_of, unknown};
use crate::wasi::random::random::get_random_bytes;
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::aes::{Aes128, Aes192, Aes256};
use aes_gcm::{AesGcm, Nonce};
use javy::quickjs::{ArrayBuffer, Ctx, Result};
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};
use subtle::ConstantTimeEq;

type Gcm<A> = AesGcm<A, aes_gcm::aead::consts::U12>;

/// The GCM of `data` under `key` and a 96-bit `iv`: the output and the full 128-bit tag.
fn gcm<A>(key: &[u8], iv: &[u8], aad: &[u8], data: &mut [u8]) -> Option<[u8; 16]>
where
    Gcm<A>: KeyInit + AeadInPlace,
{
    let cipher = <Gcm<A> as KeyInit>::new_from_slice(key).ok()?;
    let tag = cipher
        .encrypt_in_place_detached(Nonce::from_slice(iv), aad, data)
        .ok()?;
    let mut full = [0u8; 16];
    full.copy_from_slice(&tag);
    Some(full)
}

fn gcm_any(key: &[u8], iv: &[u8], aad: &[u8], data: &mut [u8]) -> Option<[u8; 16]> {
    if iv.len() != 12 {
        return None;
    }
    match key.len() {
        16 => gcm::<Aes128>(key, iv, aad, data),
        24 => gcm::<Aes192>(key, iv, aad, data),
        32 => gcm::<Aes256>(key, iv, aad, data),
        _ => None,
    }
}

/// AES-GCM encryption: the ciphertext followed by the tag's first `tag_bytes` bytes, or `None`
/// for a key or IV length this guest does not take.
pub fn aes_gcm_encrypt<'js>(
    cx: Ctx<'js>,
    key: ArrayBuffer<'js>,
    iv: ArrayBuffer<'js>,
    aad: ArrayBuffer<'js>,
    tag_bytes: u32,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let mut out = bytes_of(&data).to_vec();
    let Some(tag) = gcm_any(bytes_of(&key), bytes_of(&iv), bytes_of(&aad), &mut out) else {
        return Ok(None);
    };
    out.extend_from_slice(&tag[..(tag_bytes as usize).min(16)]);
    ArrayBuffer::new(cx, out).map(Some)
}

/// AES-GCM decryption of `data` (the ciphertext followed by a `tag_bytes`-byte tag): the
/// plaintext, or `None` when the tag does not match. GCM is CTR mode plus a tag over the
/// ciphertext, so one encryption pass over the ciphertext gives the plaintext and a second over
/// the plaintext gives back the ciphertext with its full tag, whose first `tag_bytes` bytes are
/// compared in constant time (which also covers the truncated tags Web Crypto allows).
pub fn aes_gcm_decrypt<'js>(
    cx: Ctx<'js>,
    key: ArrayBuffer<'js>,
    iv: ArrayBuffer<'js>,
    aad: ArrayBuffer<'js>,
    tag_bytes: u32,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let data = bytes_of(&data);
    let tag_bytes = tag_bytes as usize;
    if tag_bytes > 16 || data.len() < tag_bytes {
        return Ok(None);
    }
    let (ciphertext, tag) = data.split_at(data.len() - tag_bytes);
    let (key, iv, aad) = (bytes_of(&key), bytes_of(&iv), bytes_of(&aad));
    let mut plaintext = ciphertext.to_vec();
    if gcm_any(key, iv, aad, &mut plaintext).is_none() {
        return Ok(None);
    }
    let mut again = plaintext.clone();
    let Some(full) = gcm_any(key, iv, aad, &mut again) else {
        return Ok(None);
    };
    if !bool::from(full[..tag_bytes].ct_eq(tag)) {
        return Ok(None);
    }
    ArrayBuffer::new(cx, plaintext).map(Some)
}

/// The hash of `data` by the index subtle.js uses (1, 256, 384, 512).
pub(super) fn prehash(alg: u32, data: &[u8]) -> Option<Vec<u8>> {
    Some(match alg {
        1 => Sha1::digest(data).to_vec(),
        256 => Sha256::digest(data).to_vec(),
        384 => Sha384::digest(data).to_vec(),
        512 => Sha512::digest(data).to_vec(),
        _ => return None,
    })
}

/// `prehash` left-padded with zeros to `size` bytes when it is shorter: the same integer, which
/// the ECDSA crates would pad themselves but refuse below half the field size (SHA-1 or SHA-256
/// with P-384 or P-521, which Web Crypto allows).
fn fit(mut prehash: Vec<u8>, size: usize) -> Vec<u8> {
    if prehash.len() < size {
        prehash.splice(0..0, core::iter::repeat_n(0, size - prehash.len()));
    }
    prehash
}

macro_rules! curve {
    ($curve:ident, $size:expr, $public:ident, $private:ident, $verify:ident) => {
        fn $public(format: u32, bytes: &[u8]) -> Option<Vec<u8>> {
            use $curve::pkcs8::DecodePublicKey;
            let key = match format {
                RAW => $curve::PublicKey::from_sec1_bytes(bytes).ok()?,
                SPKI => $curve::PublicKey::from_public_key_der(bytes).ok()?,
                _ => return None,
            };
            Some(
                $curve::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(&key, false)
                    .as_bytes()
                    .to_vec(),
            )
        }

        /// The private scalar and the uncompressed public point.
        fn $private(format: u32, bytes: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
            use $curve::pkcs8::DecodePrivateKey;
            let key = match format {
                PKCS8 => $curve::SecretKey::from_pkcs8_der(bytes).ok()?,
                SECRET => $curve::SecretKey::from_slice(bytes).ok()?,
                _ => return None,
            };
            let public = $curve::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(
                &key.public_key(),
                false,
            );
            Some((key.to_bytes().to_vec(), public.as_bytes().to_vec()))
        }

        fn $verify(hash: u32, public: &[u8], signature: &[u8], data: &[u8]) -> bool {
            use $curve::ecdsa::signature::hazmat::PrehashVerifier;
            let (Ok(key), Ok(signature), Some(digest)) = (
                $curve::ecdsa::VerifyingKey::from_sec1_bytes(public),
                $curve::ecdsa::Signature::from_slice(signature),
                prehash(hash, data),
            ) else {
                return false;
            };
            key.verify_prehash(&fit(digest, $size), &signature).is_ok()
        }
    };
}

curve!(p256, 32, p256_public, p256_private, p256_verify);
curve!(p384, 48, p384_public, p384_private, p384_verify);
curve!(p521, 66, p521_public, p521_private, p521_verify);

macro_rules! sign_rfc6979 {
    ($curve:ident, $size:expr, $sign:ident) => {
        /// ECDSA with the deterministic nonce of RFC 6979, as r‖s.
        fn $sign(hash: u32, secret: &[u8], data: &[u8]) -> Option<Vec<u8>> {
            use $curve::ecdsa::signature::hazmat::PrehashSigner;
            let key = $curve::ecdsa::SigningKey::from_slice(secret).ok()?;
            let signature: $curve::ecdsa::Signature =
                key.sign_prehash(&fit(prehash(hash, data)?, $size)).ok()?;
            Some(signature.to_bytes().to_vec())
        }
    };
}

sign_rfc6979!(p256, 32, p256_sign);
sign_rfc6979!(p384, 48, p384_sign);

/// A P-521 scalar from the call's random source: 66 bytes with the top seven bits cleared (the
/// order is just below 2^521), drawn again in the (about 2^-260) case that it is zero or not
/// below the order.
fn p521_random_scalar() -> p521::NonZeroScalar {
    loop {
        let mut bytes = p521::FieldBytes::default();
        let drawn = get_random_bytes(66);
        if drawn.len() != 66 {
            continue;
        }
        bytes.copy_from_slice(&drawn);
        bytes[0] &= 0x01;
        if let Some(scalar) =
            Option::<p521::NonZeroScalar>::from(p521::NonZeroScalar::from_repr(bytes))
        {
            return scalar;
        }
    }
}

/// ECDSA over P-521, as r‖s. The p521 crate has no RFC 6979 nonce, so the nonce is a fresh
/// scalar from the call's random source (seeded under `[determinism]`, like generateKey).
fn p521_sign(hash: u32, secret: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    let key = p521::SecretKey::from_slice(secret).ok()?;
    let z = ecdsa::hazmat::bits2field::<p521::NistP521>(&fit(prehash(hash, data)?, 66)).ok()?;
    let nonce = p521_random_scalar();
    let (signature, _) = ecdsa::hazmat::sign_prehashed::<p521::NistP521, p521::Scalar>(
        key.to_nonzero_scalar().as_ref(),
        *nonce.as_ref(),
        &z,
    )
    .ok()?;
    Some(signature.to_bytes().to_vec())
}

fn ed_public(format: u32, bytes: &[u8]) -> Option<Vec<u8>> {
    use ed25519_dalek::pkcs8::DecodePublicKey;
    let key = match format {
        RAW => ed25519_dalek::VerifyingKey::from_bytes(bytes.try_into().ok()?).ok()?,
        SPKI => ed25519_dalek::VerifyingKey::from_public_key_der(bytes).ok()?,
        _ => return None,
    };
    Some(key.to_bytes().to_vec())
}

fn ed_private(format: u32, bytes: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    use ed25519_dalek::pkcs8::DecodePrivateKey;
    let key = match format {
        PKCS8 => ed25519_dalek::SigningKey::from_pkcs8_der(bytes).ok()?,
        SECRET => ed25519_dalek::SigningKey::from_bytes(bytes.try_into().ok()?),
        _ => return None,
    };
    Some((
        key.to_bytes().to_vec(),
        key.verifying_key().to_bytes().to_vec(),
    ))
}

/// Import an asymmetric key of `curve` (256 P-256, 384 P-384, 521 P-521, 25519 Ed25519, 25520
/// X25519): a public key
/// (`[point]`) or a private one (`[secret, point]`), or `None` if the data is not such a key.
pub fn key_import<'js>(
    cx: Ctx<'js>,
    curve: u32,
    format: u32,
    data: ArrayBuffer<'js>,
) -> Result<Option<Vec<ArrayBuffer<'js>>>> {
    let bytes = bytes_of(&data);
    let public = format == RAW || format == SPKI;
    let parts = match (curve, public) {
        (256, true) => p256_public(format, bytes).map(|p| vec![p]),
        (384, true) => p384_public(format, bytes).map(|p| vec![p]),
        (521, true) => p521_public(format, bytes).map(|p| vec![p]),
        (25519, true) => ed_public(format, bytes).map(|p| vec![p]),
        (X25519, true) => x25519_public(format, bytes).map(|p| vec![p]),
        (256, false) => p256_private(format, bytes).map(|(s, p)| vec![s, p]),
        (384, false) => p384_private(format, bytes).map(|(s, p)| vec![s, p]),
        (521, false) => p521_private(format, bytes).map(|(s, p)| vec![s, p]),
        (25519, false) => ed_private(format, bytes).map(|(s, p)| vec![s, p]),
        (X25519, false) => x25519_private(format, bytes).map(|(s, p)| vec![s, p]),
        _ => return unknown(&cx),
    };
    parts
        .map(|parts| {
            parts
                .into_iter()
                .map(|part| ArrayBuffer::new(cx.clone(), part))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()
}

/// Verify `signature` over `data` with the public point of `curve` (ECDSA with `hash`, whose
/// signatures are r‖s; Ed25519 by RFC 8032, rejecting small-order and non-canonical points).
pub fn key_verify<'js>(
    cx: Ctx<'js>,
    curve: u32,
    hash: u32,
    public: ArrayBuffer<'js>,
    signature: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
) -> Result<bool> {
    let (public, signature, data) = (bytes_of(&public), bytes_of(&signature), bytes_of(&data));
    Ok(match curve {
        256 => p256_verify(hash, public, signature, data),
        384 => p384_verify(hash, public, signature, data),
        521 => p521_verify(hash, public, signature, data),
        25519 => {
            let (Ok(public), Ok(signature)) = (
                <&[u8; 32]>::try_from(public),
                ed25519_dalek::Signature::from_slice(signature),
            ) else {
                return Ok(false);
            };
            ed25519_dalek::VerifyingKey::from_bytes(public)
                .is_ok_and(|key| key.verify_strict(data, &signature).is_ok())
        }
        _ => return unknown(&cx),
    })
}

/// Sign `data` with the secret of `curve`: ECDSA (deterministic, RFC 6979) with `hash`, as
/// r‖s, or Ed25519.
pub fn key_sign<'js>(
    cx: Ctx<'js>,
    curve: u32,
    hash: u32,
    secret: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let (secret, data) = (bytes_of(&secret), bytes_of(&data));
    let signature = match curve {
        256 => p256_sign(hash, secret, data),
        384 => p384_sign(hash, secret, data),
        521 => p521_sign(hash, secret, data),
        25519 => <&[u8; 32]>::try_from(secret).ok().map(|seed| {
            use ed25519_dalek::Signer;
            ed25519_dalek::SigningKey::from_bytes(seed)
                .sign(data)
                .to_bytes()
                .to_vec()
        }),
        _ => return unknown(&cx),
    };
    signature.map(|s| ArrayBuffer::new(cx, s)).transpose()
}

/// `len` bytes from the call's random source, the one `crypto.getRandomValues` draws from (the
/// host's secure generator, or the policy's seed under `[determinism]`): an HMAC or AES key.
pub fn random_bytes(cx: Ctx<'_>, len: u32) -> Result<ArrayBuffer<'_>> {
    ArrayBuffer::new(cx, get_random_bytes(u64::from(len.min(65_536))))
}

macro_rules! generate_ec {
    ($curve:ident, $size:expr) => {{
        // A scalar drawn at random, drawn again in the (about 2^-32 or rarer) case that it is
        // zero or not below the group order.
        loop {
            if let Ok(key) = $curve::SecretKey::from_slice(&get_random_bytes($size)) {
                let point = $curve::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(
                    &key.public_key(),
                    false,
                );
                break (key.to_bytes().to_vec(), point.as_bytes().to_vec());
            }
        }
    }};
}

/// A new key pair of `curve` from the call's random source: `[secret, point]` (the private
/// scalar and the uncompressed point, or the Ed25519 seed and public key).
pub fn key_generate<'js>(cx: Ctx<'js>, curve: u32) -> Result<Vec<ArrayBuffer<'js>>> {
    let (secret, point) = match curve {
        256 => generate_ec!(p256, 32),
        384 => generate_ec!(p384, 48),
        521 => {
            let key = p521::SecretKey::from(p521_random_scalar());
            let point = p521::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(
                &key.public_key(),
                false,
            );
            (key.to_bytes().to_vec(), point.as_bytes().to_vec())
        }
        25519 => {
            // Never a fixed key: a random source that gives fewer bytes is an error.
            let Ok(seed) = <[u8; 32]>::try_from(get_random_bytes(32)) else {
                return Err(javy::quickjs::Exception::throw_internal(
                    &cx,
                    "the random source gave too few bytes",
                ));
            };
            let key = ed25519_dalek::SigningKey::from_bytes(&seed);
            (seed.to_vec(), key.verifying_key().to_bytes().to_vec())
        }
        X25519 => x25519_generate(&cx)?,
        _ => return unknown(&cx),
    };
    Ok(vec![
        ArrayBuffer::new(cx.clone(), secret)?,
        ArrayBuffer::new(cx, point)?,
    ])
}

macro_rules! export_ec {
    ($curve:ident, $format:expr, $bytes:expr) => {{
        use $curve::pkcs8::{EncodePrivateKey, EncodePublicKey};
        match $format {
            SPKI => $curve::PublicKey::from_sec1_bytes($bytes)
                .ok()
                .and_then(|key| key.to_public_key_der().ok())
                .map(|der| der.as_bytes().to_vec()),
            PKCS8 => $curve::SecretKey::from_slice($bytes)
                .ok()
                .and_then(|key| key.to_pkcs8_der().ok())
                .map(|der| der.as_bytes().to_vec()),
            _ => None,
        }
    }};
}

/// The DER of a key of `curve` in `format`: SubjectPublicKeyInfo of a public point, or PKCS #8
/// of a private scalar or seed (for Ed25519 the version-1 form without the public key, which is
/// what Web Crypto's implementations export), or `None` if the bytes are not such a key.
pub fn key_export<'js>(
    cx: Ctx<'js>,
    curve: u32,
    format: u32,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let bytes = bytes_of(&data);
    let der = match curve {
        256 => export_ec!(p256, format, bytes),
        384 => export_ec!(p384, format, bytes),
        521 => export_ec!(p521, format, bytes),
        25519 => {
            use ed25519_dalek::pkcs8::{EncodePrivateKey, EncodePublicKey, KeypairBytes};
            match format {
                SPKI => <&[u8; 32]>::try_from(bytes)
                    .ok()
                    .and_then(|public| ed25519_dalek::VerifyingKey::from_bytes(public).ok())
                    .and_then(|key| key.to_public_key_der().ok())
                    .map(|der| der.as_bytes().to_vec()),
                PKCS8 => <[u8; 32]>::try_from(bytes)
                    .ok()
                    .and_then(|secret_key| {
                        KeypairBytes {
                            secret_key,
                            public_key: None,
                        }
                        .to_pkcs8_der()
                        .ok()
                    })
                    .map(|der| der.as_bytes().to_vec()),
                _ => None,
            }
        }
        X25519 => x25519_export(format, bytes),
        _ => return unknown(&cx),
    };
    der.map(|der| ArrayBuffer::new(cx, der)).transpose()
}

//! The natives behind `crypto.subtle`'s RSA: RSASSA-PKCS1-v1_5 and RSA-PSS signatures, RSA-OAEP
//! encryption, keys from and to SubjectPublicKeyInfo, PKCS #8 and a JWK's components, and key
//! generation, computed by the RustCrypto `rsa` crate. A key travels between subtle.js and these
//! natives as DER: a public key as its SubjectPublicKeyInfo, a private key as its PKCS #8
//! document. Randomness (PSS salts, OAEP seeds, blinding, primes) comes from the call's random
//! source, the one `getRandomValues` draws from. What these natives cannot use comes back as
//! `None` (or `false`), which subtle.js turns into the `DOMException` Web Crypto names.

use super::ciphers::prehash;
use super::formats::{PKCS8, SPKI};
use super::{bytes_of, unknown};
use crate::wasi::random::random::get_random_bytes;
use javy::quickjs::{ArrayBuffer, Ctx, Result};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use rsa::rand_core::{CryptoRng, RngCore};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{BigUint, Oaep, Pkcs1v15Sign, Pss, RsaPrivateKey, RsaPublicKey};
use sha1::Sha1;
use sha2::{Sha256, Sha384, Sha512};

/// The call's random source behind rand_core's traits.
struct CallRng;

impl RngCore for CallRng {
    fn next_u32(&mut self) -> u32 {
        let mut bytes = [0u8; 4];
        self.fill_bytes(&mut bytes);
        u32::from_le_bytes(bytes)
    }

    fn next_u64(&mut self) -> u64 {
        let mut bytes = [0u8; 8];
        self.fill_bytes(&mut bytes);
        u64::from_le_bytes(bytes)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        // Never a fixed value: a short answer is asked again for the rest.
        let mut at = 0;
        while at < dest.len() {
            let want = (dest.len() - at).min(65_536);
            let drawn = get_random_bytes(want as u64);
            let take = drawn.len().min(want);
            dest[at..at + take].copy_from_slice(&drawn[..take]);
            at += take;
        }
    }

    fn try_fill_bytes(
        &mut self,
        dest: &mut [u8],
    ) -> core::result::Result<(), rsa::rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for CallRng {}

/// The largest modulus, in bits, Palisade generates or imports: the `rsa` crate's own bound,
/// which keeps one private-key operation within a call's budget.
pub const MAX_BITS: usize = RsaPublicKey::MAX_SIZE;

fn buffers<'js>(cx: &Ctx<'js>, parts: Vec<Vec<u8>>) -> Result<Vec<ArrayBuffer<'js>>> {
    parts
        .into_iter()
        .map(|part| ArrayBuffer::new(cx.clone(), part))
        .collect()
}

fn public_parts(key: &RsaPublicKey) -> Option<Vec<Vec<u8>>> {
    let der = key.to_public_key_der().ok()?;
    Some(vec![
        der.as_bytes().to_vec(),
        key.n().to_bytes_be(),
        key.e().to_bytes_be(),
    ])
}

/// `[pkcs8, spki, n, e]` of a private key.
fn private_parts(key: &RsaPrivateKey) -> Option<Vec<Vec<u8>>> {
    let der = key.to_pkcs8_der().ok()?;
    let mut parts = vec![der.as_bytes().to_vec()];
    parts.extend(public_parts(&key.to_public_key())?);
    Some(parts)
}

fn checked_private(key: RsaPrivateKey) -> Option<RsaPrivateKey> {
    (key.n().bits() <= MAX_BITS && key.validate().is_ok()).then_some(key)
}

/// A key from DER: `[spki, n, e]` for a SubjectPublicKeyInfo, `[pkcs8, spki, n, e]` for a
/// PKCS #8 private key (both in the canonical encoding), or `None` when it is not an RSA key.
pub fn rsa_import<'js>(
    cx: Ctx<'js>,
    format: u32,
    data: ArrayBuffer<'js>,
) -> Result<Option<Vec<ArrayBuffer<'js>>>> {
    let bytes = bytes_of(&data);
    let parts = match format {
        SPKI => RsaPublicKey::from_public_key_der(bytes)
            .ok()
            .and_then(|key| public_parts(&key)),
        PKCS8 => RsaPrivateKey::from_pkcs8_der(bytes)
            .ok()
            .and_then(checked_private)
            .and_then(|key| private_parts(&key)),
        _ => return unknown(&cx),
    };
    parts.map(|parts| buffers(&cx, parts)).transpose()
}

/// A key from a JWK's components, big-endian: `[n, e]` for a public key, or
/// `[n, e, d, p, q, dp, dq, qi]` for a private one (the CRT values must be the ones `p`, `q` and
/// `d` give). The same answer as `rsa_import`.
pub fn rsa_from_components<'js>(
    cx: Ctx<'js>,
    components: Vec<ArrayBuffer<'js>>,
) -> Result<Option<Vec<ArrayBuffer<'js>>>> {
    let values: Vec<BigUint> = components
        .iter()
        .map(|part| BigUint::from_bytes_be(bytes_of(part)))
        .collect();
    let parts = match values.as_slice() {
        [n, e] => RsaPublicKey::new(n.clone(), e.clone())
            .ok()
            .and_then(|key| public_parts(&key)),
        [n, e, d, p, q, dp, dq, qi] => RsaPrivateKey::from_components(
            n.clone(),
            e.clone(),
            d.clone(),
            vec![p.clone(), q.clone()],
        )
        .ok()
        .and_then(checked_private)
        .filter(|key| {
            key.dp() == Some(dp)
                && key.dq() == Some(dq)
                && key.crt_coefficient().as_ref() == Some(qi)
        })
        .and_then(|key| private_parts(&key)),
        _ => None,
    };
    parts.map(|parts| buffers(&cx, parts)).transpose()
}

/// A JWK's components of a key in DER (`private` tells which): `[n, e]` or
/// `[n, e, d, p, q, dp, dq, qi]`, big-endian without leading zeros.
pub fn rsa_components<'js>(
    cx: Ctx<'js>,
    private: bool,
    der: ArrayBuffer<'js>,
) -> Result<Option<Vec<ArrayBuffer<'js>>>> {
    let bytes = bytes_of(&der);
    let parts = if private {
        RsaPrivateKey::from_pkcs8_der(bytes).ok().and_then(|key| {
            let [p, q] = key.primes() else { return None };
            Some(vec![
                key.n().to_bytes_be(),
                key.e().to_bytes_be(),
                key.d().to_bytes_be(),
                p.to_bytes_be(),
                q.to_bytes_be(),
                key.dp()?.to_bytes_be(),
                key.dq()?.to_bytes_be(),
                key.crt_coefficient()?.to_bytes_be(),
            ])
        })
    } else {
        RsaPublicKey::from_public_key_der(bytes)
            .ok()
            .map(|key| vec![key.n().to_bytes_be(), key.e().to_bytes_be()])
    };
    parts.map(|parts| buffers(&cx, parts)).transpose()
}

/// A new key pair of `bits` bits with the public exponent `exponent` (big-endian), from the
/// call's random source: `[pkcs8, spki, n, e]`, or `None` for a size or exponent the `rsa` crate
/// refuses (an even exponent, one below 3 or above 2^33 - 1, a size below 64 or above
/// `MAX_BITS`). With `generate` false, only the check: an empty list when the key could be made.
/// Finding the primes is the slow part; the call's fuel and deadline bound it.
pub fn rsa_generate<'js>(
    cx: Ctx<'js>,
    bits: u32,
    exponent: ArrayBuffer<'js>,
    generate: bool,
) -> Result<Option<Vec<ArrayBuffer<'js>>>> {
    let bits = bits as usize;
    let exponent = BigUint::from_bytes_be(bytes_of(&exponent));
    // Checked before the search: an even exponent, or 1, has no inverse and the search for
    // primes would never end.
    let digits = exponent.to_bytes_be();
    let usable = digits.len() <= 8 && {
        let e = digits.iter().fold(0u64, |e, &b| (e << 8) | u64::from(b));
        e % 2 == 1 && (3..=RsaPublicKey::MAX_PUB_EXPONENT).contains(&e)
    };
    if !usable || !(64..=MAX_BITS).contains(&bits) {
        return Ok(None);
    }
    if !generate {
        return Ok(Some(Vec::new()));
    }
    let parts = RsaPrivateKey::new_with_exp(&mut CallRng, bits, &exponent)
        .ok()
        .and_then(|key| private_parts(&key));
    parts.map(|parts| buffers(&cx, parts)).transpose()
}

/// The signature scheme: 0 RSASSA-PKCS1-v1_5, 1 RSA-PSS with `salt` bytes of salt.
macro_rules! scheme_with {
    ($scheme:expr, $hash:expr, $salt:expr, |$padding:ident| $body:expr) => {
        match ($scheme, $hash) {
            (0, 1) => {
                let $padding = Pkcs1v15Sign::new::<Sha1>();
                $body
            }
            (0, 256) => {
                let $padding = Pkcs1v15Sign::new::<Sha256>();
                $body
            }
            (0, 384) => {
                let $padding = Pkcs1v15Sign::new::<Sha384>();
                $body
            }
            (0, 512) => {
                let $padding = Pkcs1v15Sign::new::<Sha512>();
                $body
            }
            (1, 1) => {
                let $padding = Pss::new_with_salt::<Sha1>($salt);
                $body
            }
            (1, 256) => {
                let $padding = Pss::new_with_salt::<Sha256>($salt);
                $body
            }
            (1, 384) => {
                let $padding = Pss::new_with_salt::<Sha384>($salt);
                $body
            }
            (1, 512) => {
                let $padding = Pss::new_with_salt::<Sha512>($salt);
                $body
            }
            _ => None,
        }
    };
}

/// A signature of `data` with the PKCS #8 key `der` (scheme 0 RSASSA-PKCS1-v1_5, 1 RSA-PSS
/// with `salt` bytes of salt), blinded, or `None` when the key cannot sign it (a salt too long
/// for the modulus).
pub fn rsa_sign<'js>(
    cx: Ctx<'js>,
    scheme: u32,
    hash: u32,
    der: ArrayBuffer<'js>,
    salt: u32,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let (Ok(key), Some(digest)) = (
        RsaPrivateKey::from_pkcs8_der(bytes_of(&der)),
        prehash(hash, bytes_of(&data)),
    ) else {
        return unknown(&cx);
    };
    let salt = salt as usize;
    let signature = scheme_with!(scheme, hash, salt, |padding| key
        .sign_with_rng(&mut CallRng, padding, &digest)
        .ok());
    signature.map(|s| ArrayBuffer::new(cx, s)).transpose()
}

/// Whether `signature` is a signature of `data` under the SubjectPublicKeyInfo `der`.
pub fn rsa_verify<'js>(
    scheme: u32,
    hash: u32,
    der: ArrayBuffer<'js>,
    salt: u32,
    signature: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
) -> bool {
    let (Ok(key), Some(digest)) = (
        RsaPublicKey::from_public_key_der(bytes_of(&der)),
        prehash(hash, bytes_of(&data)),
    ) else {
        return false;
    };
    let signature = bytes_of(&signature);
    let salt = salt as usize;
    scheme_with!(scheme, hash, salt, |padding| Some(
        key.verify(padding, &digest, signature).is_ok()
    ))
    .unwrap_or(false)
}

macro_rules! oaep_with {
    ($hash:expr, $label:expr) => {
        match $hash {
            1 => Oaep::new_with_label::<Sha1, _>($label),
            256 => Oaep::new_with_label::<Sha256, _>($label),
            384 => Oaep::new_with_label::<Sha384, _>($label),
            512 => Oaep::new_with_label::<Sha512, _>($label),
            _ => return Ok(None),
        }
    };
}

/// RSA-OAEP with the hash of index `hash` for both the label and MGF1: `data` encrypted under
/// the SubjectPublicKeyInfo `der`, or decrypted (blinded) with the PKCS #8 `der`; `None` when the
/// data is too long for the key, the ciphertext does not decrypt, or the label is not UTF-8
/// (the `rsa` crate takes the label as text).
pub fn rsa_oaep<'js>(
    cx: Ctx<'js>,
    encrypt: bool,
    hash: u32,
    der: ArrayBuffer<'js>,
    label: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let Ok(label) = core::str::from_utf8(bytes_of(&label)) else {
        return Ok(None);
    };
    let (der, data) = (bytes_of(&der), bytes_of(&data));
    let padding = oaep_with!(hash, label);
    let out = if encrypt {
        RsaPublicKey::from_public_key_der(der)
            .ok()
            .and_then(|key| key.encrypt(&mut CallRng, padding, data).ok())
    } else {
        RsaPrivateKey::from_pkcs8_der(der)
            .ok()
            .and_then(|key| key.decrypt_blinded(&mut CallRng, padding, data).ok())
    };
    out.map(|out| ArrayBuffer::new(cx, out)).transpose()
}

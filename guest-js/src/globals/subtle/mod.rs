//! `crypto.subtle`: `digest` (SHA-1, SHA-256, SHA-384, SHA-512) and HMAC `importKey` (raw,
//! jwk), `generateKey`, `exportKey` (raw, jwk), `sign` and `verify`, computed by the RustCrypto
//! crates. The JS half checks arguments as Web Crypto does and copies the bytes it is given into
//! a fresh `ArrayBuffer` when called, so the natives below only see whole buffers; it is split by
//! algorithm family: subtle.js (what they share, and `digest`), keys.js, rsa.js, sign.js,
//! ciphers.js, derive.js and wrap.js. AES-GCM, ECDSA and Ed25519, the random bytes and key pairs
//! of `generateKey` and the DER of `exportKey` are in ciphers.rs; X25519's keys in x25519.rs;
//! ECDH, X25519's shared secret, HKDF and PBKDF2 in derive.rs; the key formats' codes in
//! formats.rs; AES-CBC, AES-CTR and AES-KW in aes.rs; RSASSA-PKCS1-v1_5, RSA-PSS and RSA-OAEP
//! in rsa.rs.

mod aes;
mod ciphers;
mod derive;
mod formats;
mod rsa;
mod x25519;

use hmac::{Hmac, Mac};
use javy::quickjs::prelude::Func;
use javy::quickjs::{ArrayBuffer, Ctx, Exception, Function, Result};
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

/// The hashes, by the index subtle.js uses: 1 SHA-1, 256 SHA-256, 384 SHA-384, 512 SHA-512.
fn hash<D: Digest>(bytes: &[u8]) -> Vec<u8> {
    D::digest(bytes).to_vec()
}

fn bytes_of<'a>(buffer: &'a ArrayBuffer<'_>) -> &'a [u8] {
    // A detached buffer has no bytes (subtle.js passes an empty one instead).
    buffer.as_bytes().unwrap_or_default()
}

fn unknown<T>(cx: &Ctx<'_>) -> Result<T> {
    Err(Exception::throw_type(cx, "unknown hash"))
}

fn digest<'js>(cx: Ctx<'js>, alg: u32, data: ArrayBuffer<'js>) -> Result<ArrayBuffer<'js>> {
    let data = bytes_of(&data);
    let out = match alg {
        1 => hash::<Sha1>(data),
        256 => hash::<Sha256>(data),
        384 => hash::<Sha384>(data),
        512 => hash::<Sha512>(data),
        _ => return unknown(&cx),
    };
    ArrayBuffer::new(cx, out)
}

fn mac<M: Mac + hmac::digest::KeyInit>(key: &[u8], data: &[u8]) -> M {
    let mut mac =
        <M as hmac::digest::KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(data);
    mac
}

fn hmac_sign<'js>(
    cx: Ctx<'js>,
    alg: u32,
    key: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
) -> Result<ArrayBuffer<'js>> {
    let (key, data) = (bytes_of(&key), bytes_of(&data));
    let out = match alg {
        1 => mac::<Hmac<Sha1>>(key, data)
            .finalize()
            .into_bytes()
            .to_vec(),
        256 => mac::<Hmac<Sha256>>(key, data)
            .finalize()
            .into_bytes()
            .to_vec(),
        384 => mac::<Hmac<Sha384>>(key, data)
            .finalize()
            .into_bytes()
            .to_vec(),
        512 => mac::<Hmac<Sha512>>(key, data)
            .finalize()
            .into_bytes()
            .to_vec(),
        _ => return unknown(&cx),
    };
    ArrayBuffer::new(cx, out)
}

/// Whether `signature` is the HMAC of `data`, compared in constant time.
fn hmac_verify<'js>(
    cx: Ctx<'js>,
    alg: u32,
    key: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
    signature: ArrayBuffer<'js>,
) -> Result<bool> {
    let (key, data, signature) = (bytes_of(&key), bytes_of(&data), bytes_of(&signature));
    Ok(match alg {
        1 => mac::<Hmac<Sha1>>(key, data).verify_slice(signature).is_ok(),
        256 => mac::<Hmac<Sha256>>(key, data)
            .verify_slice(signature)
            .is_ok(),
        384 => mac::<Hmac<Sha384>>(key, data)
            .verify_slice(signature)
            .is_ok(),
        512 => mac::<Hmac<Sha512>>(key, data)
            .verify_slice(signature)
            .is_ok(),
        _ => return unknown(&cx),
    })
}

const PRELUDE: &str = include_str!("subtle.js");
/// The algorithm families, in the order they add their methods to `SubtleCrypto.prototype`
/// (rsa.js before keys.js, which uses it).
const FAMILIES: [&str; 6] = [
    include_str!("rsa.js"),
    include_str!("keys.js"),
    include_str!("sign.js"),
    include_str!("ciphers.js"),
    include_str!("derive.js"),
    include_str!("wrap.js"),
];

/// Install `crypto.subtle`, `SubtleCrypto` and `CryptoKey`. Runs once, before the snapshot,
/// after `crypto` (which it extends) and `DOMException`.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let natives = javy::quickjs::Object::new(cx.clone())?;
    natives.set("aesEncrypt", Func::from(ciphers::aes_gcm_encrypt))?;
    natives.set("aesDecrypt", Func::from(ciphers::aes_gcm_decrypt))?;
    natives.set("keyImport", Func::from(ciphers::key_import))?;
    natives.set("keyVerify", Func::from(ciphers::key_verify))?;
    natives.set("keySign", Func::from(ciphers::key_sign))?;
    natives.set("keyGenerate", Func::from(ciphers::key_generate))?;
    natives.set("keyExport", Func::from(ciphers::key_export))?;
    natives.set("randomBytes", Func::from(ciphers::random_bytes))?;
    natives.set("keyAgree", Func::from(derive::key_agree))?;
    natives.set("hkdfNative", Func::from(derive::hkdf))?;
    natives.set("pbkdf2Native", Func::from(derive::pbkdf2))?;
    natives.set("aesCbc", Func::from(aes::aes_cbc))?;
    natives.set("aesCtr", Func::from(aes::aes_ctr))?;
    natives.set("aesKw", Func::from(aes::aes_kw))?;
    natives.set("rsaImport", Func::from(rsa::rsa_import))?;
    natives.set("rsaFromComponents", Func::from(rsa::rsa_from_components))?;
    natives.set("rsaComponents", Func::from(rsa::rsa_components))?;
    natives.set("rsaGenerate", Func::from(rsa::rsa_generate))?;
    natives.set("rsaSign", Func::from(rsa::rsa_sign))?;
    natives.set("rsaVerify", Func::from(rsa::rsa_verify))?;
    natives.set("rsaOaep", Func::from(rsa::rsa_oaep))?;
    let internals: javy::quickjs::Object = prelude.call((
        Func::from(digest),
        Func::from(hmac_sign),
        Func::from(hmac_verify),
        natives,
    ))?;
    for family in FAMILIES {
        cx.eval::<Function, _>(family)?
            .call::<_, ()>((internals.clone(),))?;
    }
    let install: Function = internals.get("install")?;
    install.call(())
}

//! The natives behind `crypto.subtle`'s AES-CBC (PKCS #7 padding), AES-CTR and AES-KW
//! (RFC 3394), computed by the RustCrypto crates (aes, cbc, aes-kw). subtle.js checks the
//! arguments (key, IV and counter lengths) and hands whole, fresh buffers; an input these
//! natives cannot use comes back as `None`, which subtle.js turns into an `OperationError`.

use super::bytes_of;
use aes::cipher::{BlockDecryptMut, BlockEncrypt, BlockEncryptMut, KeyInit, KeyIvInit};
use aes::{Aes128, Aes192, Aes256};
use cbc::cipher::block_padding::Pkcs7;
use javy::quickjs::{ArrayBuffer, Ctx, Result};

/// AES-CBC with the key size of `$aes` over `$data`.
macro_rules! cbc_with {
    ($aes:ty, $encrypt:expr, $key:expr, $iv:expr, $data:expr) => {{
        if $encrypt {
            cbc::Encryptor::<$aes>::new_from_slices($key, $iv)
                .ok()
                .map(|cipher| cipher.encrypt_padded_vec_mut::<Pkcs7>($data))
        } else {
            cbc::Decryptor::<$aes>::new_from_slices($key, $iv)
                .ok()
                .and_then(|cipher| cipher.decrypt_padded_vec_mut::<Pkcs7>($data).ok())
        }
    }};
}

/// AES-CBC with PKCS #7 padding: encryption, or decryption (`None` for a ciphertext whose
/// length or padding is wrong).
pub fn aes_cbc<'js>(
    cx: Ctx<'js>,
    encrypt: bool,
    key: ArrayBuffer<'js>,
    iv: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let (key, iv, data) = (bytes_of(&key), bytes_of(&iv), bytes_of(&data));
    let out = match key.len() {
        16 => cbc_with!(Aes128, encrypt, key, iv, data),
        24 => cbc_with!(Aes192, encrypt, key, iv, data),
        32 => cbc_with!(Aes256, encrypt, key, iv, data),
        _ => None,
    };
    out.map(|out| ArrayBuffer::new(cx, out)).transpose()
}

fn ctr_with<A>(key: &[u8], counter: u128, bits: u32, data: &[u8]) -> Option<Vec<u8>>
where
    A: BlockEncrypt + KeyInit + aes::cipher::BlockSizeUser<BlockSize = aes::cipher::consts::U16>,
{
    let cipher = A::new_from_slice(key).ok()?;
    // The rightmost `bits` bits of the counter block count the blocks; the rest stays fixed.
    let mask = if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    let blocks = data.len().div_ceil(16) as u128;
    if bits < 128 && blocks > (1u128 << bits) {
        // More blocks than the counter has values: a counter block would repeat.
        return None;
    }
    let mut out = data.to_vec();
    for (i, chunk) in out.chunks_mut(16).enumerate() {
        let block = (counter & !mask) | (counter.wrapping_add(i as u128) & mask);
        let mut stream = aes::Block::from(block.to_be_bytes());
        cipher.encrypt_block(&mut stream);
        for (byte, key) in chunk.iter_mut().zip(stream.iter()) {
            *byte ^= key;
        }
    }
    Some(out)
}

/// AES-CTR with a 16-byte counter block whose rightmost `bits` bits (1 to 128) are the counter,
/// as Web Crypto defines it; `None` when the data needs more blocks than the counter has values.
/// Encryption and decryption are the same operation.
pub fn aes_ctr<'js>(
    cx: Ctx<'js>,
    key: ArrayBuffer<'js>,
    counter: ArrayBuffer<'js>,
    bits: u32,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let (key, counter, data) = (bytes_of(&key), bytes_of(&counter), bytes_of(&data));
    let Ok(counter) = <[u8; 16]>::try_from(counter) else {
        return Ok(None);
    };
    let counter = u128::from_be_bytes(counter);
    let out = match key.len() {
        16 => ctr_with::<Aes128>(key, counter, bits, data),
        24 => ctr_with::<Aes192>(key, counter, bits, data),
        32 => ctr_with::<Aes256>(key, counter, bits, data),
        _ => None,
    };
    out.map(|out| ArrayBuffer::new(cx, out)).transpose()
}

fn kek<A>(wrap: bool, key: &[u8], data: &[u8]) -> Option<Vec<u8>>
where
    A: KeyInit
        + aes::cipher::BlockCipher
        + aes::cipher::BlockSizeUser<BlockSize = aes::cipher::consts::U16>
        + BlockEncrypt
        + aes::cipher::BlockDecrypt,
{
    let kek = aes_kw::Kek::<A>::try_from(key).ok()?;
    if wrap {
        kek.wrap_vec(data).ok()
    } else {
        kek.unwrap_vec(data).ok()
    }
}

/// AES-KW (RFC 3394) wrapping or unwrapping of `data` under `key`; `None` for data that is not
/// a multiple of 8 bytes of at least 16 (24 to unwrap), or a wrapped key whose check fails.
pub fn aes_kw<'js>(
    cx: Ctx<'js>,
    wrap: bool,
    key: ArrayBuffer<'js>,
    data: ArrayBuffer<'js>,
) -> Result<Option<ArrayBuffer<'js>>> {
    let (key, data) = (bytes_of(&key), bytes_of(&data));
    let out = match key.len() {
        16 => kek::<Aes128>(wrap, key, data),
        24 => kek::<Aes192>(wrap, key, data),
        32 => kek::<Aes256>(wrap, key, data),
        _ => None,
    };
    out.map(|out| ArrayBuffer::new(cx, out)).transpose()
}

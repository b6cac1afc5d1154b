//! The keys of the input's objects, as QuickJS atoms, with a small cache of recent ones.

use super::{Builder, failed, same};
use javy::quickjs::qjs;
use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use std::fmt;

/// A key's atom: either lent by the key cache, or a reference this code holds and releases
/// when dropped.
pub(super) struct KeyAtom {
    ctx: *mut qjs::JSContext,
    pub(super) atom: qjs::JSAtom,
    owned: bool,
}

impl KeyAtom {
    /// The atom if the key cache lent it, else `JS_ATOM_NULL`.
    pub(super) fn lent(&self) -> qjs::JSAtom {
        if self.owned {
            qjs::JS_ATOM_NULL
        } else {
            self.atom
        }
    }
}

impl Drop for KeyAtom {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: the reference is held and the context outlives the parse.
            unsafe { qjs::JS_FreeAtom(self.ctx, self.atom) }
        }
    }
}
/// An object's key, as a QuickJS atom (numeric keys become index atoms, as in `JSON.parse`).
pub(super) struct KeySeed<'k>(pub(super) Builder<'k>);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = KeyAtom;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<KeyAtom, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = KeyAtom;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<KeyAtom, E> {
        self.0.keys.borrow_mut().atom(s).ok_or_else(failed)
    }
}

/// The atoms of recently read keys, by their bytes: the rows of an input repeat the same keys,
/// and looking a key up here is cheaper than in QuickJS's atom table. Direct-mapped, so that it
/// stays small whatever the input, and only set up once an input has shown more than a few keys;
/// each entry holds a reference to its atom, which it lends to the keys it gives out.
///
/// A key is defined only after its value is read; an object or array value holds the key's
/// atom meanwhile (see [`ValueSeed`]), since reading it may give the key's entry to another key.
pub(super) struct KeyCache {
    ctx: *mut qjs::JSContext,
    seen: u32,
    slots: Option<Box<[CachedKey; KEY_CACHE_SLOTS]>>,
}

/// Entries in the key cache (a power of two).
const KEY_CACHE_SLOTS: usize = 32;
/// Longer keys are not cached.
const KEY_CACHE_MAX_LEN: usize = 23;
/// Keys read before the cache is set up: a small input does not pay for it.
const KEY_CACHE_AFTER: u32 = 16;

#[derive(Clone, Copy)]
struct CachedKey {
    len: u8,
    bytes: [u8; KEY_CACHE_MAX_LEN],
    /// `JS_ATOM_NULL` when the slot is empty.
    atom: qjs::JSAtom,
}

const EMPTY_KEY: CachedKey = CachedKey {
    len: 0,
    bytes: [0; KEY_CACHE_MAX_LEN],
    atom: qjs::JS_ATOM_NULL,
};

impl KeyCache {
    pub(super) fn new(ctx: *mut qjs::JSContext) -> Self {
        KeyCache {
            ctx,
            seen: 0,
            slots: None,
        }
    }

    /// The atom of `key`, lent by the cache or owned, or `None` when QuickJS could not make it.
    fn atom(&mut self, key: &str) -> Option<KeyAtom> {
        let (ctx, bytes) = (self.ctx, key.as_bytes());
        if bytes.len() > KEY_CACHE_MAX_LEN || self.seen < KEY_CACHE_AFTER {
            self.seen += 1;
            return new_atom(ctx, key).map(|atom| KeyAtom {
                ctx,
                atom,
                owned: true,
            });
        }
        let slots = self
            .slots
            .get_or_insert_with(|| Box::new([EMPTY_KEY; KEY_CACHE_SLOTS]));
        let first = bytes.first().copied().unwrap_or(0) as usize;
        let last = bytes.last().copied().unwrap_or(0) as usize;
        let slot = &mut slots[(bytes.len() * 31 + first * 7 + last) % KEY_CACHE_SLOTS];
        let lent = |atom| KeyAtom {
            ctx,
            atom,
            owned: false,
        };
        if slot.atom != qjs::JS_ATOM_NULL && same(&slot.bytes[..slot.len as usize], bytes) {
            return Some(lent(slot.atom));
        }
        let atom = new_atom(ctx, key)?;
        if slot.atom != qjs::JS_ATOM_NULL {
            // SAFETY: the cache held this reference; a key lent it whose value is being read
            // holds one of its own (`ValueSeed::hold_key`).
            unsafe { qjs::JS_FreeAtom(ctx, slot.atom) };
        }
        slot.len = bytes.len() as u8;
        slot.bytes[..bytes.len()].copy_from_slice(bytes);
        // The cache holds the reference `new_atom` made.
        slot.atom = atom;
        Some(lent(atom))
    }
}

impl Drop for KeyCache {
    fn drop(&mut self) {
        for slot in self.slots.iter().flat_map(|slots| slots.iter()) {
            if slot.atom != qjs::JS_ATOM_NULL {
                // SAFETY: the cache held this reference; the context outlives the parse.
                unsafe { qjs::JS_FreeAtom(self.ctx, slot.atom) };
            }
        }
    }
}

/// The atom of `key`, or `None` when QuickJS could not make it.
fn new_atom(ctx: *mut qjs::JSContext, key: &str) -> Option<qjs::JSAtom> {
    // SAFETY: `key` is valid UTF-8 of the given length; the context is live.
    let atom = unsafe {
        if key.is_ascii() {
            qjs::JS_NewAtomLen(ctx, key.as_ptr().cast(), key.len() as _)
        } else {
            // `JS_NewAtomLen` first looks the bytes up among existing atoms, where UTF-8
            // bytes can match a different Latin-1 atom ("é" would find "Ã©"); a key that
            // is not ASCII becomes a string first.
            let string = qjs::JS_NewStringLen(ctx, key.as_ptr().cast(), key.len() as _);
            if qjs::JS_IsException(string) {
                return None;
            }
            let atom = qjs::JS_ValueToAtom(ctx, string);
            qjs::JS_FreeValue(ctx, string);
            atom
        }
    };
    (atom != qjs::JS_ATOM_NULL).then_some(atom)
}

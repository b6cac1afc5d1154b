//! The call's JSON input, turned into JavaScript values.
//!
//! QuickJS's `JSON.parse` stores every number as a double, so a script handed `{"n": 25}`
//! computes with doubles, and each `n - 1` or `n < 2` takes the interpreter's slow path
//! (recursive `fib(25)` runs 1.9× slower on a parsed `n` than on a literal one). The input is
//! read here instead, with serde_json, into the values `JSON.parse` would give, except that
//! numbers that are whole and fit 32 bits are stored as integers, as QuickJS does for number
//! literals. Scripts cannot tell the two representations apart.
//!
//! Properties are defined, not assigned, as `JSON.parse` does: `"__proto__"` becomes an own
//! property and setters a script put on `Object.prototype` or `Array.prototype` are not called.
//! Any input serde_json does not take (nesting deeper than 128, lone surrogate escapes, numbers
//! out of the double range) falls back to `JSON.parse`, with its semantics and its errors.
//!
//! The values are built with QuickJS's C API directly: rquickjs's wrappers take a reference on
//! the context for every value, which was a tenth of the time of a 1,000-row input. Arrays are
//! made whole from their first elements (`JS_NewArrayFrom`) and appended to past GATHERED, so
//! that a long array is never held twice.
//!
//! Objects with the same keys in the same order share a QuickJS shape, which QuickJS finds by
//! hash as each key is added. The first object to take a path of shapes is each one's only
//! user, so QuickJS changes the shape in place as that object gains keys, and only the path's
//! last shape survives: every later object with the same keys allocated a fresh empty shape,
//! changed it in place, then freed it on reaching the last one. Once two objects in a row of the
//! input (or among the last few) have the same keys, the reader holds an object at each step of
//! that path (`ShapePaths`), so that the remaining rows find every shape already made.

use crate::errors::exception;
use javy::quickjs::{CatchResultExt, Ctx, Value, qjs};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::{cell::RefCell, fmt, marker::PhantomData, mem};

/// Parse `input` into a JavaScript value, with `JSON.parse`'s result. This is where a call's
/// input is checked: the error is the detail of an `invalid_input` error, with the line and
/// column of the first thing that is not JSON.
///
/// The objects holding the paths of shapes the input repeats come back with the value: kept
/// while the script runs, they let the objects it makes with the input's keys (a row mapped to
/// `{ id: r.id, ... }`) find those shapes too. When the input falls back to `JSON.parse`, none
/// are kept.
pub fn parse<'js>(cx: &Ctx<'js>, input: &str) -> Result<(Value<'js>, HeldShapes<'js>), String> {
    let ctx = cx.as_raw().as_ptr();
    let keys = RefCell::new(KeyCache::new(ctx));
    let shapes = RefCell::new(ShapePaths::new(ctx));
    let mut reader = serde_json::Deserializer::from_str(input);
    let builder = Builder {
        ctx,
        keys: &keys,
        shapes: &shapes,
    };
    let parsed = ValueSeed(builder, qjs::JS_ATOM_NULL)
        .deserialize(&mut reader)
        .and_then(|value| reader.end().map(|()| value));
    let value = match parsed {
        // SAFETY: `value` is an owned value of this context; the returned `Value` owns it.
        Ok(value) => unsafe { Value::from_raw(cx.clone(), value.into_raw()) },
        Err(error) => {
            // SAFETY: clears what a failed QuickJS call left pending (out of memory); the
            // fallback raises its own errors.
            unsafe { qjs::JS_FreeValue(ctx, qjs::JS_GetException(ctx)) };
            // The holders go before the fallback, which may be short of memory.
            *shapes.borrow_mut() = ShapePaths::new(ctx);
            // `JSON.parse` recurses once per level on the wasm stack: input nested past what
            // every stack size takes is refused here, before it could overflow the stack.
            if nests_deeper_than(input, MAX_INPUT_DEPTH) {
                return Err(format!(
                    "the input nests arrays and objects more than {MAX_INPUT_DEPTH} levels deep"
                ));
            }
            cx.json_parse(input).catch(cx).map_err(|e| {
                let thrown = exception(cx, e);
                // Not JSON for either reader: serde_json's message says where.
                if thrown.name == "SyntaxError" && (error.is_syntax() || error.is_eof()) {
                    format!("the input is not JSON: {error}")
                } else {
                    thrown.message
                }
            })?
        }
    };
    Ok((
        value,
        HeldShapes {
            _paths: shapes.into_inner(),
            _cx: PhantomData,
        },
    ))
}

/// How deep an input may nest arrays and objects: `JSON.parse` takes about 340 levels under the
/// smallest `limits.stack` (64 KiB), and this leaves a quarter of that spare.
pub const MAX_INPUT_DEPTH: usize = 256;

/// Whether `input` nests arrays and objects deeper than `limit` (brackets outside strings).
fn nests_deeper_than(input: &str, limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in input.as_bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The holders of the shapes of a parse (see [`parse`]), which must not outlive its context:
/// dropping this frees them.
pub struct HeldShapes<'js> {
    _paths: ShapePaths,
    _cx: PhantomData<Ctx<'js>>,
}

/// Makes QuickJS values in the call's context.
#[derive(Clone, Copy)]
struct Builder<'k> {
    ctx: *mut qjs::JSContext,
    keys: &'k RefCell<KeyCache>,
    shapes: &'k RefCell<ShapePaths>,
}

/// `value`, just returned by QuickJS, unless it is the exception marker.
fn owned(ctx: *mut qjs::JSContext, value: qjs::JSValue) -> Option<Owned> {
    // SAFETY: `value` was just returned by QuickJS and is owned by the caller.
    (!unsafe { qjs::JS_IsException(value) }).then_some(Owned { ctx, value })
}

fn new_object(ctx: *mut qjs::JSContext) -> Option<Owned> {
    // SAFETY: the context is live for the whole parse.
    owned(ctx, unsafe { qjs::JS_NewObject(ctx) })
}

/// Define `key` on `object` as `JSON.parse` does (writable, enumerable, configurable).
fn define(ctx: *mut qjs::JSContext, object: &Owned, key: qjs::JSAtom, value: Owned) -> bool {
    // SAFETY: `JS_DefinePropertyValue` takes ownership of the value, even when it fails.
    unsafe {
        qjs::JS_DefinePropertyValue(
            ctx,
            object.value,
            key,
            value.into_raw(),
            qjs::JS_PROP_C_W_E as i32,
        ) >= 0
    }
}

impl Builder<'_> {
    /// An array of the gathered elements, made whole (`JS_NewArrayFrom`).
    fn array_from(&self, gathered: &mut Elements) -> Option<Owned> {
        let values = mem::take(&mut gathered.values);
        // At most GATHERED values.
        let count = values.len() as i32;
        // SAFETY: `JS_NewArrayFrom` takes ownership of the `count` values, even when it fails;
        // the vector only gives back its buffer afterwards.
        let array = unsafe { qjs::JS_NewArrayFrom(self.ctx, count, values.as_ptr()) };
        drop(values);
        owned(self.ctx, array)
    }

    /// Define element `index` of `array`, as `JSON.parse` does.
    fn define_index(&self, array: &Owned, index: u32, value: Owned) -> bool {
        // SAFETY: `JS_DefinePropertyValueUint32` takes ownership of the value, even when it
        // fails.
        unsafe {
            qjs::JS_DefinePropertyValueUint32(
                self.ctx,
                array.value,
                index,
                value.into_raw(),
                qjs::JS_PROP_C_W_E as i32,
            ) >= 0
        }
    }
}

/// A QuickJS value this code owns; freed when dropped.
struct Owned {
    ctx: *mut qjs::JSContext,
    value: qjs::JSValue,
}

impl Owned {
    fn into_raw(self) -> qjs::JSValue {
        let value = self.value;
        mem::forget(self);
        value
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the value is owned and the context outlives the parse.
        unsafe { qjs::JS_FreeValue(self.ctx, self.value) }
    }
}

/// A key's atom: either lent by the key cache, or a reference this code holds and releases
/// when dropped.
struct KeyAtom {
    ctx: *mut qjs::JSContext,
    atom: qjs::JSAtom,
    owned: bool,
}

impl KeyAtom {
    /// The atom if the key cache lent it, else `JS_ATOM_NULL`.
    fn lent(&self) -> qjs::JSAtom {
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

/// The error a failed QuickJS call (out of memory) becomes inside serde; the caller falls
/// back to `JSON.parse`, which raises it again.
fn failed<E: de::Error>() -> E {
    E::custom("QuickJS could not make a value")
}

/// A value to read, and the atom of the key it is the value of when the key cache lent it
/// (else `JS_ATOM_NULL`). Reading an object or array may give the key's cache entry to another
/// key, releasing the cache's reference, so an object or array takes a reference of its own to
/// that atom first, which its key releases once defined (a read that fails leaves it held, at
/// most one per level of nesting, in an instance that ends with the call). A number or string
/// reads no key.
struct ValueSeed<'k>(Builder<'k>, qjs::JSAtom);

impl ValueSeed<'_> {
    /// An object or array begins: hold the key's lent atom (see above).
    fn hold_key(&self) {
        if self.1 != qjs::JS_ATOM_NULL {
            // SAFETY: the key cache's reference keeps the atom live until now.
            unsafe { qjs::JS_DupAtom(self.0.ctx, self.1) };
        }
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Owned;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Owned, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl ValueSeed<'_> {
    fn immediate(&self, value: qjs::JSValue) -> Owned {
        Owned {
            ctx: self.0.ctx,
            value,
        }
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Owned;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Owned, E> {
        Ok(self.immediate(qjs::JS_MKVAL(qjs::JS_TAG_NULL, 0)))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Owned, E> {
        Ok(self.immediate(qjs::JS_MKVAL(qjs::JS_TAG_BOOL, i32::from(b))))
    }

    // `JS_NewFloat64` stores a number as an integer when it is whole, fits 32 bits and is not
    // -0, as QuickJS does for number literals. Integers beyond 2^53 round to the nearest
    // double, as in `JSON.parse`.
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Owned, E> {
        Ok(self.immediate(qjs::JS_NewFloat64(n as f64)))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Owned, E> {
        Ok(self.immediate(qjs::JS_NewFloat64(n as f64)))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Owned, E> {
        Ok(self.immediate(qjs::JS_NewFloat64(n)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Owned, E> {
        // SAFETY: `s` is valid UTF-8 of the given length; the context is live.
        let string = unsafe { qjs::JS_NewStringLen(self.0.ctx, s.as_ptr().cast(), s.len() as _) };
        owned(self.0.ctx, string).ok_or_else(failed)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owned, A::Error> {
        self.hold_key();
        let mut gathered = Elements {
            ctx: self.0.ctx,
            values: Vec::new(),
        };
        let mut array = None;
        let mut index = 0u32;
        while let Some(element) = seq.next_element_seed(ValueSeed(self.0, qjs::JS_ATOM_NULL))? {
            match &array {
                // Past the first GATHERED elements, appended one by one: QuickJS grows its own
                // storage, and no second copy of a long array's values is held.
                Some(array) => {
                    if !self.0.define_index(array, index, element) {
                        return Err(failed());
                    }
                }
                None => {
                    gathered.values.push(element.into_raw());
                    if gathered.values.len() == GATHERED {
                        array = Some(
                            self.0
                                .array_from(&mut gathered)
                                .ok_or_else(failed::<A::Error>)?,
                        );
                    }
                }
            }
            index = index.checked_add(1).ok_or_else(failed::<A::Error>)?;
        }
        match array {
            Some(array) => Ok(array),
            None => self.0.array_from(&mut gathered).ok_or_else(failed),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Owned, A::Error> {
        self.hold_key();
        let object = new_object(self.0.ctx).ok_or_else(failed::<A::Error>)?;
        // Where this object's keys go in `keys`, if they are tracked at all.
        let start = self.0.shapes.borrow().start();
        let mut count = 0usize;
        while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
            if start.is_some() && count < PATH_KEYS {
                self.0.shapes.borrow_mut().keys.push(key.atom);
            }
            count += 1;
            let lent = key.lent();
            let value = map.next_value_seed(ValueSeed(self.0, lent))?;
            // An object or array value (only they are objects here) took a reference to the
            // key's lent atom, released once the key is defined.
            // SAFETY: `value` is a live value.
            let held = lent != qjs::JS_ATOM_NULL && unsafe { qjs::JS_IsObject(value.value) };
            let defined = define(self.0.ctx, &object, key.atom, value);
            if held {
                // SAFETY: the reference the value took (`hold_key`).
                unsafe { qjs::JS_FreeAtom(self.0.ctx, lent) };
            }
            if !defined {
                return Err(failed());
            }
        }
        self.0.shapes.borrow_mut().completed(start, count);
        Ok(object)
    }
}

/// An array's first elements are gathered and made into the array at once; longer arrays are
/// then appended to, so that the gathered copy stays small (32 KiB).
const GATHERED: usize = 4096;

/// Elements read so far; freed if the array is never made.
struct Elements {
    ctx: *mut qjs::JSContext,
    values: Vec<qjs::JSValue>,
}

impl Drop for Elements {
    fn drop(&mut self) {
        for &value in &self.values {
            // SAFETY: each element is owned here until it is handed to `JS_NewArrayFrom`.
            unsafe { qjs::JS_FreeValue(self.ctx, value) }
        }
    }
}

/// An object's key, as a QuickJS atom (numeric keys become index atoms, as in `JSON.parse`).
struct KeySeed<'k>(Builder<'k>);

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
struct KeyCache {
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
    fn new(ctx: *mut qjs::JSContext) -> Self {
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

/// Objects with more keys are not given held paths.
const PATH_KEYS: usize = 16;
/// Key orders remembered, to see one repeat.
const RECENT_PATHS: usize = 4;
/// Paths held at most, each by one object per key but the last.
const HELD_PATHS: usize = 8;

/// Objects that hold QuickJS's shapes along the key orders the input repeats (see the module
/// documentation). They are not reachable from JavaScript; dropping this frees them. Atoms
/// are kept here without references: `hold` only defines the keys of the object just made
/// (which references them), and an atom number in `recent` or `held` may have been freed and
/// reused since, which can only make a path held that did not repeat, or not held.
struct ShapePaths {
    ctx: *mut qjs::JSContext,
    /// The keys read so far of each object being read, outermost first (at most PATH_KEYS
    /// of each).
    keys: Vec<qjs::JSAtom>,
    /// The key orders of the last objects made, in a ring.
    recent: Vec<Vec<qjs::JSAtom>>,
    next: usize,
    held: Vec<Vec<qjs::JSAtom>>,
    holders: Vec<Owned>,
    /// QuickJS could not make a holder (out of memory): make no more.
    stopped: bool,
    /// Set once the input has made an object.
    tracking: bool,
}

impl ShapePaths {
    fn new(ctx: *mut qjs::JSContext) -> Self {
        ShapePaths {
            ctx,
            keys: Vec::new(),
            recent: Vec::new(),
            next: 0,
            held: Vec::new(),
            holders: Vec::new(),
            stopped: false,
            tracking: false,
        }
    }

    /// Where the keys of an object begun now go in `keys`; `None` while the input has made
    /// no object yet, so that an input of one flat object pays for nothing.
    fn start(&self) -> Option<usize> {
        self.tracking.then_some(self.keys.len())
    }

    /// An object was made with `count` keys, the first of them at `start` in `keys`.
    fn completed(&mut self, start: Option<usize>, count: usize) {
        let Some(start) = start else {
            self.tracking = true;
            return;
        };
        if count > 0 && count <= PATH_KEYS && !self.stopped {
            self.seen(start);
        }
        self.keys.truncate(start);
    }

    fn seen(&mut self, start: usize) {
        let path = &self.keys[start..];
        if self.held.iter().any(|held| same(held, path)) {
            return;
        }
        if self.recent.iter().any(|recent| same(recent, path)) {
            if self.held.len() < HELD_PATHS {
                let path = path.to_vec();
                if self.hold(&path).is_none() {
                    self.stopped = true;
                    // SAFETY: clears the out-of-memory error the failed call left pending.
                    unsafe { qjs::JS_FreeValue(self.ctx, qjs::JS_GetException(self.ctx)) };
                    return;
                }
                self.held.push(path);
            }
            return;
        }
        if self.recent.len() < RECENT_PATHS {
            self.recent.push(path.to_vec());
        } else {
            let slot = &mut self.recent[self.next];
            slot.clear();
            slot.extend_from_slice(path);
            self.next = (self.next + 1) % RECENT_PATHS;
        }
    }

    /// Hold the shapes along `keys`: of an empty object (the first time), then of each proper
    /// prefix of `keys`, each by an object with those keys, defined as the input's are. The
    /// whole path is held by the objects the input made with it.
    fn hold(&mut self, keys: &[qjs::JSAtom]) -> Option<()> {
        let first = usize::from(!self.holders.is_empty());
        let ctx = self.ctx;
        for prefix in first..keys.len() {
            let holder = new_object(ctx)?;
            for &key in &keys[..prefix] {
                let undefined = Owned {
                    ctx,
                    value: qjs::JS_MKVAL(qjs::JS_TAG_UNDEFINED, 0),
                };
                if !define(ctx, &holder, key, undefined) {
                    return None;
                }
            }
            self.holders.push(holder);
        }
        Some(())
    }
}

/// Slice equality by a loop: the slices compared here are a few bytes or atoms long, where the
/// call to `memcmp` that `==` on slices becomes costs more than the comparison (3% of reading
/// a 1,000-row input).
fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

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

mod keys;
mod shapes;

use crate::errors::exception;
use javy::quickjs::{CatchResultExt, Ctx, Value, qjs};
use keys::{KeyCache, KeySeed};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use shapes::{PATH_KEYS, ShapePaths};
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

/// Slice equality by a loop: the slices compared here are a few bytes or atoms long, where the
/// call to `memcmp` that `==` on slices becomes costs more than the comparison (3% of reading
/// a 1,000-row input).
fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

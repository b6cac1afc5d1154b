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

use javy::quickjs::{Ctx, Value, qjs};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::{fmt, mem};

/// Parse `input` into a JavaScript value, with `JSON.parse`'s result and errors.
pub fn parse<'js>(cx: &Ctx<'js>, input: &str) -> javy::quickjs::Result<Value<'js>> {
    let ctx = cx.as_raw().as_ptr();
    let mut reader = serde_json::Deserializer::from_str(input);
    let parsed = ValueSeed(Builder { ctx })
        .deserialize(&mut reader)
        .and_then(|value| reader.end().map(|()| value));
    match parsed {
        // SAFETY: `value` is an owned value of this context; the returned `Value` owns it.
        Ok(value) => Ok(unsafe { Value::from_raw(cx.clone(), value.into_raw()) }),
        Err(_) => {
            // SAFETY: clears what a failed QuickJS call left pending (out of memory); the
            // fallback raises its own errors.
            unsafe { qjs::JS_FreeValue(ctx, qjs::JS_GetException(ctx)) };
            cx.json_parse(input)
        }
    }
}

/// Makes QuickJS values in the call's context.
#[derive(Clone, Copy)]
struct Builder {
    ctx: *mut qjs::JSContext,
}

impl Builder {
    fn owned(&self, value: qjs::JSValue) -> Option<Owned> {
        // SAFETY: `value` was just returned by QuickJS and is owned by the caller.
        (!unsafe { qjs::JS_IsException(value) }).then_some(Owned {
            ctx: self.ctx,
            value,
        })
    }

    fn new_object(&self) -> Option<Owned> {
        // SAFETY: the context is live for the whole parse.
        self.owned(unsafe { qjs::JS_NewObject(self.ctx) })
    }

    /// An array of the gathered elements, made whole (`JS_NewArrayFrom`).
    fn array_from(&self, gathered: &mut Elements) -> Option<Owned> {
        let values = mem::take(&mut gathered.values);
        // At most GATHERED values.
        let count = values.len() as i32;
        // SAFETY: `JS_NewArrayFrom` takes ownership of the `count` values, even when it fails;
        // the vector only gives back its buffer afterwards.
        let array = unsafe { qjs::JS_NewArrayFrom(self.ctx, count, values.as_ptr()) };
        drop(values);
        self.owned(array)
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

    /// Define `key` on `object` as `JSON.parse` does (writable, enumerable, configurable).
    fn define(&self, object: &Owned, key: qjs::JSAtom, value: Owned) -> bool {
        // SAFETY: `JS_DefinePropertyValue` takes ownership of the value, even when it fails.
        unsafe {
            qjs::JS_DefinePropertyValue(
                self.ctx,
                object.value,
                key,
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

/// An atom this code holds a reference to; released when dropped.
struct OwnedAtom {
    ctx: *mut qjs::JSContext,
    atom: qjs::JSAtom,
}

impl Drop for OwnedAtom {
    fn drop(&mut self) {
        // SAFETY: the reference is held and the context outlives the parse.
        unsafe { qjs::JS_FreeAtom(self.ctx, self.atom) }
    }
}

/// The error a failed QuickJS call (out of memory) becomes inside serde; the caller falls
/// back to `JSON.parse`, which raises it again.
fn failed<E: de::Error>() -> E {
    E::custom("QuickJS could not make a value")
}

struct ValueSeed(Builder);

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Owned;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Owned, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl ValueSeed {
    fn immediate(&self, value: qjs::JSValue) -> Owned {
        Owned {
            ctx: self.0.ctx,
            value,
        }
    }
}

impl<'de> Visitor<'de> for ValueSeed {
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
        self.0.owned(string).ok_or_else(failed)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owned, A::Error> {
        let mut gathered = Elements {
            ctx: self.0.ctx,
            values: Vec::new(),
        };
        let mut array = None;
        let mut index = 0u32;
        while let Some(element) = seq.next_element_seed(ValueSeed(self.0))? {
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
        let object = self.0.new_object().ok_or_else(failed::<A::Error>)?;
        while let Some(key) = map.next_key_seed(KeySeed(self.0.ctx))? {
            let value = map.next_value_seed(ValueSeed(self.0))?;
            if !self.0.define(&object, key.atom, value) {
                return Err(failed());
            }
        }
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
struct KeySeed(*mut qjs::JSContext);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = OwnedAtom;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<OwnedAtom, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = OwnedAtom;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<OwnedAtom, E> {
        let ctx = self.0;
        // SAFETY: `s` is valid UTF-8 of the given length; the context is live.
        let atom = unsafe {
            if s.is_ascii() {
                qjs::JS_NewAtomLen(ctx, s.as_ptr().cast(), s.len() as _)
            } else {
                // `JS_NewAtomLen` first looks the bytes up among existing atoms, where UTF-8
                // bytes can match a different Latin-1 atom ("é" would find "Ã©"); a key that
                // is not ASCII becomes a string first.
                let string = qjs::JS_NewStringLen(ctx, s.as_ptr().cast(), s.len() as _);
                if qjs::JS_IsException(string) {
                    return Err(failed());
                }
                let atom = qjs::JS_ValueToAtom(ctx, string);
                qjs::JS_FreeValue(ctx, string);
                atom
            }
        };
        if atom == qjs::JS_ATOM_NULL {
            return Err(failed());
        }
        Ok(OwnedAtom { ctx, atom })
    }
}

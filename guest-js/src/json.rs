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

use javy::quickjs::{Array, Atom, Ctx, Object, String as JsString, Value, object::Property};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Parse `input` into a JavaScript value, with `JSON.parse`'s result and errors.
pub fn parse<'js>(cx: &Ctx<'js>, input: &str) -> javy::quickjs::Result<Value<'js>> {
    let mut reader = serde_json::Deserializer::from_str(input);
    match ValueSeed(cx)
        .deserialize(&mut reader)
        .and_then(|value| reader.end().map(|()| value))
    {
        Ok(value) => Ok(value),
        Err(_) => cx.json_parse(input),
    }
}

/// A number as QuickJS stores a number literal: an integer when it is whole and fits 32 bits
/// (but not -0), a double otherwise.
fn number<'js>(cx: &Ctx<'js>, n: f64) -> Value<'js> {
    let int = n as i32;
    if f64::from(int) == n && !(n == 0.0 && n.is_sign_negative()) {
        Value::new_int(cx.clone(), int)
    } else {
        Value::new_float(cx.clone(), n)
    }
}

/// The error a JavaScript exception becomes inside serde; the caller falls back to
/// `JSON.parse`, which raises it again.
fn thrown<E: de::Error>(e: javy::quickjs::Error) -> E {
    E::custom(e)
}

struct ValueSeed<'a, 'js>(&'a Ctx<'js>);

impl<'de, 'js> DeserializeSeed<'de> for ValueSeed<'_, 'js> {
    type Value = Value<'js>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value<'js>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, 'js> Visitor<'de> for ValueSeed<'_, 'js> {
    type Value = Value<'js>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value<'js>, E> {
        Ok(Value::new_null(self.0.clone()))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value<'js>, E> {
        Ok(Value::new_bool(self.0.clone(), b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value<'js>, E> {
        Ok(match i32::try_from(n) {
            Ok(int) => Value::new_int(self.0.clone(), int),
            // Rounded to the nearest double, as `JSON.parse` does.
            Err(_) => Value::new_float(self.0.clone(), n as f64),
        })
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value<'js>, E> {
        Ok(match i32::try_from(n) {
            Ok(int) => Value::new_int(self.0.clone(), int),
            Err(_) => Value::new_float(self.0.clone(), n as f64),
        })
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value<'js>, E> {
        Ok(number(self.0, n))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value<'js>, E> {
        JsString::from_str(self.0.clone(), s)
            .map(JsString::into_value)
            .map_err(thrown)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'js>, A::Error> {
        let array = Array::new(self.0.clone()).map_err(thrown)?;
        let mut index = 0u32;
        while let Some(element) = seq.next_element_seed(ValueSeed(self.0))? {
            array
                .as_object()
                .prop(
                    index,
                    Property::from(element)
                        .writable()
                        .enumerable()
                        .configurable(),
                )
                .map_err(thrown)?;
            index += 1;
        }
        Ok(array.into_value())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value<'js>, A::Error> {
        let object = Object::new(self.0.clone()).map_err(thrown)?;
        while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
            let value = map.next_value_seed(ValueSeed(self.0))?;
            object
                .prop(
                    key,
                    Property::from(value).writable().enumerable().configurable(),
                )
                .map_err(thrown)?;
        }
        Ok(object.into_value())
    }
}

/// An object's key, as a QuickJS atom (numeric keys become index atoms, as in `JSON.parse`).
struct KeySeed<'a, 'js>(&'a Ctx<'js>);

impl<'de, 'js> DeserializeSeed<'de> for KeySeed<'_, 'js> {
    type Value = Atom<'js>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Atom<'js>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'js> Visitor<'de> for KeySeed<'_, 'js> {
    type Value = Atom<'js>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Atom<'js>, E> {
        Atom::from_str(self.0.clone(), s).map_err(thrown)
    }
}

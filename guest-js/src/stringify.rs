//! The call's result, written as JSON text.
//!
//! QuickJS's `JSON.stringify` is general, and pays for it on every value: it collects each
//! object's keys into an array of strings, quotes every key into a new string, converts every
//! array index to a string, and checks for cycles by searching an array. For `{"a":1}` that is
//! about 9,000 units of fuel, more than the rest of a trivial compiled call.
//!
//! A result that is plain data is written here instead, straight from QuickJS's values: plain
//! objects (whose prototype is `Object.prototype` or `null`) and arrays without holes, holding
//! strings, numbers, booleans, `null`, and the `undefined` and symbols `JSON.stringify` leaves
//! out. Anything else makes the writer give up, before it has run any of the script's code, and
//! the result goes to `JSON.stringify`, with its semantics and its errors: a `toJSON` anywhere it
//! would be looked up, an accessor property, a hole, an object of another class (class
//! instances, dates, boxed primitives, proxies, `JSON.rawJSON`), a function, a BigInt, a cycle,
//! or nesting deeper than `MAX_DEPTH`. The writer only reads own properties and never calls a
//! getter, so a script cannot tell which of the two wrote its result.

use javy::quickjs::{Ctx, Value, qjs};
use std::cell::Cell;
use std::ffi::{c_char, c_void};
use std::ptr;

/// Deeper results are left to `JSON.stringify`, which checks the stack itself.
const MAX_DEPTH: usize = 128;

/// What the writer compares values with, taken from the runtime before the snapshot: the
/// intrinsic prototypes live as long as the context, so their addresses identify them.
#[derive(Clone, Copy)]
struct Intrinsics {
    object_class: qjs::JSClassID,
    array_class: qjs::JSClassID,
    object_prototype: *mut c_void,
    array_prototype: *mut c_void,
    /// `"toJSON"`, held for the runtime's life.
    to_json: qjs::JSAtom,
}

thread_local! {
    static INTRINSICS: Cell<Option<Intrinsics>> = const { Cell::new(None) };
}

/// Record the classes and prototypes of plain objects and arrays. Called once, in `init`.
pub fn init(cx: &Ctx<'_>) {
    let ctx = cx.as_raw().as_ptr();
    // SAFETY: the context is live; each value made here is freed here, and the prototypes
    // stay alive through the context's own references to them.
    let intrinsics = unsafe {
        let class_and_prototype = |value: qjs::JSValue| {
            let class = qjs::JS_GetClassID(value);
            let prototype = qjs::JS_GetPrototype(ctx, value);
            let pointer = qjs::JS_VALUE_GET_PTR(prototype);
            qjs::JS_FreeValue(ctx, prototype);
            qjs::JS_FreeValue(ctx, value);
            (class, pointer)
        };
        let (object_class, object_prototype) = class_and_prototype(qjs::JS_NewObject(ctx));
        let (array_class, array_prototype) = class_and_prototype(qjs::JS_NewArray(ctx));
        let to_json = qjs::JS_NewAtom(ctx, c"toJSON".as_ptr());
        Intrinsics {
            object_class,
            array_class,
            object_prototype,
            array_prototype,
            to_json,
        }
    };
    INTRINSICS.with(|cell| cell.set(Some(intrinsics)));
}

/// `JSON.stringify(value)` when the writer can produce it, or `None` (having run no script
/// code) when `JSON.stringify` must. `value` must not be `undefined`, a function or a symbol.
pub fn plain(cx: &Ctx<'_>, value: &Value<'_>) -> Option<String> {
    let intrinsics = INTRINSICS.with(Cell::get)?;
    let mut writer = Writer {
        ctx: cx.as_raw().as_ptr(),
        intrinsics,
        out: Vec::new(),
        path: Vec::new(),
        prototypes_checked: false,
    };
    writer.value(value.as_raw()).ok()?;
    String::from_utf8(writer.out).ok()
}

/// Why the writer stopped: `JSON.stringify` writes this result.
struct GiveUp;

struct Writer {
    ctx: *mut qjs::JSContext,
    intrinsics: Intrinsics,
    out: Vec<u8>,
    /// The objects being written, outermost first: a cycle, or too deep a result.
    path: Vec<*mut c_void>,
    /// Whether the prototypes have been checked for a `toJSON` (once per result).
    prototypes_checked: bool,
}

/// Whether `JSON.stringify` writes a value, leaves it out of an object, or writes `null` for
/// it in an array.
enum Written {
    Yes,
    Skipped,
}

impl Writer {
    /// Write a value that is a property or element; `Skipped` for those `JSON.stringify` leaves
    /// out of objects.
    fn value(&mut self, value: qjs::JSValue) -> Result<Written, GiveUp> {
        // SAFETY: `value` is a live value of this context, borrowed for the call.
        let tag = unsafe { qjs::JS_VALUE_GET_NORM_TAG(value) };
        match tag {
            qjs::JS_TAG_NULL => self.out.extend_from_slice(b"null"),
            qjs::JS_TAG_BOOL => {
                // SAFETY: the tag says it is a boolean.
                let text: &[u8] = if unsafe { qjs::JS_VALUE_GET_BOOL(value) } {
                    b"true"
                } else {
                    b"false"
                };
                self.out.extend_from_slice(text);
            }
            qjs::JS_TAG_INT => {
                // SAFETY: the tag says it is an integer.
                let n = unsafe { qjs::JS_VALUE_GET_INT(value) };
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            }
            qjs::JS_TAG_FLOAT64 => {
                // SAFETY: the tag says it is a double.
                let d = unsafe { qjs::JS_VALUE_GET_FLOAT64(value) };
                self.number(value, d)?;
            }
            qjs::JS_TAG_STRING | qjs::JS_TAG_STRING_ROPE => self.string(value)?,
            qjs::JS_TAG_UNDEFINED | qjs::JS_TAG_SYMBOL => return Ok(Written::Skipped),
            qjs::JS_TAG_OBJECT => self.object(value)?,
            // BigInts (which `JSON.stringify` refuses, unless a `toJSON` says otherwise).
            _ => return Err(GiveUp),
        }
        Ok(Written::Yes)
    }

    /// A double as QuickJS's `Number.prototype.toString` writes it; `null` when it is not
    /// finite. That is the shortest text that reads back as the same double, except for some
    /// powers of two, where QuickJS writes a digit more (`2 ** -24` is `5.9604644775390625e-8`,
    /// where the shortest is `5.960464477539063e-8`): those QuickJS writes here too.
    fn number(&mut self, value: qjs::JSValue, d: f64) -> Result<(), GiveUp> {
        const MANTISSA: u64 = (1 << 52) - 1;
        if !d.is_finite() {
            self.out.extend_from_slice(b"null");
        } else if d == 0.0 {
            // -0 too.
            self.out.push(b'0');
        } else if d.to_bits() & MANTISSA == 0 {
            let mut len = 0;
            // SAFETY: `value` is a live number; its text is ASCII.
            let text = unsafe { qjs::JS_ToCStringLen2(self.ctx, &mut len, value, false) };
            self.append_c_string(text, len as usize, false)?;
        } else {
            self.out
                .extend_from_slice(ryu_js::Buffer::new().format_finite(d).as_bytes());
        }
        Ok(())
    }

    fn string(&mut self, value: qjs::JSValue) -> Result<(), GiveUp> {
        let mut len = 0;
        // SAFETY: `value` is a live string. With `cesu8` false, surrogate pairs become one
        // 4-byte sequence and a lone surrogate its own 3-byte one, which `quote` escapes.
        let text = unsafe { qjs::JS_ToCStringLen2(self.ctx, &mut len, value, false) };
        self.append_c_string(text, len as usize, true)
    }

    /// Append the `len` bytes QuickJS made at `text`, quoted or as they are, and free them.
    fn append_c_string(
        &mut self,
        text: *const c_char,
        len: usize,
        quoted: bool,
    ) -> Result<(), GiveUp> {
        if text.is_null() {
            return Err(self.failed());
        }
        // SAFETY: QuickJS returned `len` bytes at `text`, held until `JS_FreeCString`.
        let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
        if quoted {
            quote(&mut self.out, bytes);
        } else {
            self.out.extend_from_slice(bytes);
        }
        // SAFETY: `text` came from QuickJS on this context, and is freed once.
        unsafe { qjs::JS_FreeCString(self.ctx, text) };
        Ok(())
    }

    fn object(&mut self, value: qjs::JSValue) -> Result<(), GiveUp> {
        // SAFETY: the tag says `value` is an object; both calls only read it.
        let (class, pointer) = unsafe { (qjs::JS_GetClassID(value), qjs::JS_VALUE_GET_PTR(value)) };
        let array = if class == self.intrinsics.array_class {
            true
        } else if class == self.intrinsics.object_class {
            false
        } else {
            return Err(GiveUp);
        };
        if self.path.len() >= MAX_DEPTH || self.path.contains(&pointer) {
            return Err(GiveUp);
        }
        self.check_prototypes()?;
        let prototype = self.prototype(value);
        let plain = if array {
            prototype == self.intrinsics.array_prototype
        } else {
            prototype == self.intrinsics.object_prototype || prototype.is_null()
        };
        if !plain || self.has_own(value, self.intrinsics.to_json)? {
            return Err(GiveUp);
        }
        self.path.push(pointer);
        if array {
            self.array(value)?;
        } else {
            self.fields(value)?;
        }
        self.path.pop();
        Ok(())
    }

    fn array(&mut self, array: qjs::JSValue) -> Result<(), GiveUp> {
        let mut len = 0i64;
        // SAFETY: an array's `length` is an own data property: reading it runs no script.
        if unsafe { qjs::JS_GetLength(self.ctx, array, &mut len) } < 0 {
            return Err(self.failed());
        }
        let len = u32::try_from(len).map_err(|_| GiveUp)?;
        self.out.push(b'[');
        for index in 0..len {
            if index > 0 {
                self.out.push(b',');
            }
            // SAFETY: index atoms below 2^31 are tagged integers, which hold no reference.
            let atom = unsafe { qjs::JS_NewAtomUInt32(self.ctx, index) };
            // A hole reads through the prototypes, where a script may have put anything.
            let element = self.own_data(array, atom).and_then(|e| e.ok_or(GiveUp));
            // SAFETY: the atom was made above.
            unsafe { qjs::JS_FreeAtom(self.ctx, atom) };
            let element = element?;
            if let Written::Skipped = self.value(element.0)? {
                self.out.extend_from_slice(b"null");
            }
        }
        self.out.push(b']');
        Ok(())
    }

    fn fields(&mut self, object: qjs::JSValue) -> Result<(), GiveUp> {
        let mut keys: *mut qjs::JSPropertyEnum = ptr::null_mut();
        let mut count = 0u32;
        // SAFETY: for a plain object this only reads its shape: the enumerable string keys,
        // in the order `Object.keys` gives them.
        let listed = unsafe {
            qjs::JS_GetOwnPropertyNames(
                self.ctx,
                &mut keys,
                &mut count,
                object,
                (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as i32,
            )
        };
        if listed < 0 {
            return Err(self.failed());
        }
        let keys = Keys {
            ctx: self.ctx,
            keys,
            count,
        };
        self.out.push(b'{');
        let mut first = true;
        for key in keys.atoms() {
            // A key can be gone by now only through script code, which has not run; were it
            // gone, `JSON.stringify` would leave it out too.
            let Some(field) = self.own_data(object, key)? else {
                continue;
            };
            let mark = self.out.len();
            if !first {
                self.out.push(b',');
            }
            self.key(key)?;
            self.out.push(b':');
            match self.value(field.0)? {
                Written::Yes => first = false,
                Written::Skipped => self.out.truncate(mark),
            }
        }
        self.out.push(b'}');
        Ok(())
    }

    fn key(&mut self, atom: qjs::JSAtom) -> Result<(), GiveUp> {
        let mut len = 0;
        // SAFETY: `atom` is live (held by the key list).
        let text = unsafe { qjs::JS_AtomToCStringLen(self.ctx, &mut len, atom) };
        self.append_c_string(text, len as usize, true)
    }

    /// The value of an own data property, `None` when there is no such property; gives up on
    /// an accessor, which `JSON.stringify` would call.
    fn own_data(&self, object: qjs::JSValue, atom: qjs::JSAtom) -> Result<Option<Held>, GiveUp> {
        let mut desc = qjs::JSPropertyDescriptor {
            flags: 0,
            value: qjs::JS_MKVAL(qjs::JS_TAG_UNDEFINED, 0),
            getter: qjs::JS_MKVAL(qjs::JS_TAG_UNDEFINED, 0),
            setter: qjs::JS_MKVAL(qjs::JS_TAG_UNDEFINED, 0),
        };
        // SAFETY: for a plain object or an array this reads the property without calling
        // anything; the descriptor's values are owned here afterwards.
        let found = unsafe { qjs::JS_GetOwnProperty(self.ctx, &mut desc, object, atom) };
        if found < 0 {
            return Err(self.failed());
        }
        if found == 0 {
            return Ok(None);
        }
        let value = Held(desc.value, self.ctx);
        // SAFETY: the getter and setter are owned (`undefined` for a data property).
        unsafe {
            qjs::JS_FreeValue(self.ctx, desc.getter);
            qjs::JS_FreeValue(self.ctx, desc.setter);
        }
        if desc.flags & qjs::JS_PROP_GETSET as i32 != 0 {
            return Err(GiveUp);
        }
        Ok(Some(value))
    }

    /// Whether `object` has an own property `atom`, of any kind.
    fn has_own(&self, object: qjs::JSValue, atom: qjs::JSAtom) -> Result<bool, GiveUp> {
        // SAFETY: without a descriptor this only looks the property up.
        match unsafe { qjs::JS_GetOwnProperty(self.ctx, ptr::null_mut(), object, atom) } {
            found if found < 0 => Err(self.failed()),
            found => Ok(found > 0),
        }
    }

    /// The address of an ordinary object's prototype, null for none.
    fn prototype(&self, object: qjs::JSValue) -> *mut c_void {
        // SAFETY: for an ordinary object this reads its shape; the reference is dropped at
        // once, the address only being compared.
        unsafe {
            let prototype = qjs::JS_GetPrototype(self.ctx, object);
            let pointer = if qjs::JS_IsObject(prototype) {
                qjs::JS_VALUE_GET_PTR(prototype)
            } else {
                ptr::null_mut()
            };
            qjs::JS_FreeValue(self.ctx, prototype);
            pointer
        }
    }

    /// `JSON.stringify` looks `toJSON` up on every object: along the prototypes of a plain
    /// object or an array, it must be found nowhere. A script can change `Array.prototype`'s
    /// prototype, not `Object.prototype`'s.
    fn check_prototypes(&mut self) -> Result<(), GiveUp> {
        if self.prototypes_checked {
            return Ok(());
        }
        let object = qjs::JS_MKPTR(qjs::JS_TAG_OBJECT, self.intrinsics.object_prototype);
        let array = qjs::JS_MKPTR(qjs::JS_TAG_OBJECT, self.intrinsics.array_prototype);
        let to_json = self.intrinsics.to_json;
        if self.has_own(object, to_json)?
            || self.has_own(array, to_json)?
            || self.prototype(array) != self.intrinsics.object_prototype
        {
            return Err(GiveUp);
        }
        self.prototypes_checked = true;
        Ok(())
    }

    /// A QuickJS call failed (out of memory): clear its exception; `JSON.stringify` will meet
    /// the same condition and report it.
    fn failed(&self) -> GiveUp {
        // SAFETY: takes and frees the pending exception, if any.
        unsafe { qjs::JS_FreeValue(self.ctx, qjs::JS_GetException(self.ctx)) };
        GiveUp
    }
}

/// A value this code holds a reference to; released when dropped.
struct Held(qjs::JSValue, *mut qjs::JSContext);

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: the reference is owned and the context outlives the writer.
        unsafe { qjs::JS_FreeValue(self.1, self.0) }
    }
}

/// The key list of `JS_GetOwnPropertyNames`; freed when dropped.
struct Keys {
    ctx: *mut qjs::JSContext,
    keys: *mut qjs::JSPropertyEnum,
    count: u32,
}

impl Keys {
    fn atoms(&self) -> impl Iterator<Item = qjs::JSAtom> + '_ {
        (0..self.count as usize).map(|i| {
            // SAFETY: QuickJS returned `count` entries at `keys`.
            unsafe { (*self.keys.add(i)).atom }
        })
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        // SAFETY: the list came from `JS_GetOwnPropertyNames` on this context.
        unsafe { qjs::JS_FreePropertyEnum(self.ctx, self.keys, self.count) }
    }
}

/// Append `text` (UTF-8, except that a lone surrogate is its own 3-byte sequence) as a JSON
/// string, escaped as `JSON.stringify` escapes: `\"`, `\\`, the short forms of `\b \t \n \f
/// \r`, and `\u00xx` for other control characters and `\udxxx` for lone surrogates, in lower
/// case.
fn quote(out: &mut Vec<u8>, text: &[u8]) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    let mut plain = 0;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\x08' => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\x0c' => b"\\f",
            b'\r' => b"\\r",
            0..0x20 => &[],
            // A surrogate, U+D800 to U+DFFF, encoded on its own.
            0xed if text.get(i + 1).is_some_and(|&next| next >= 0xa0) => &[],
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&text[plain..i]);
        if escape.is_empty() {
            let (code, width) = if b < 0x20 {
                (u32::from(b), 1)
            } else {
                let code = (u32::from(b & 0x0f) << 12)
                    | (u32::from(text[i + 1] & 0x3f) << 6)
                    | u32::from(text.get(i + 2).copied().unwrap_or(0) & 0x3f);
                (code, 3)
            };
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[(code >> shift) as usize & 0xf]);
            }
            i += width;
        } else {
            out.extend_from_slice(escape);
            i += 1;
        }
        plain = i;
    }
    out.extend_from_slice(&text[plain..]);
    out.push(b'"');
}

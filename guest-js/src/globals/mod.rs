//! The JS globals Palisade adds to QuickJS, one module per global: a folder `name/` with its
//! Rust (`mod.rs`, the natives and `register`) and its JS (`name.js`, evaluated once before the
//! snapshot), or a single `name.rs` for a global made in Rust alone (`config`).

mod abort;
mod base64;
mod blob;
pub mod bridge;
mod compression;
pub mod config;
pub mod console;
mod crypto;
mod dom_exception;
pub mod fetch;
mod form_data;
pub mod fs;
mod headers;
pub mod io;
pub mod kv;
mod messaging;
mod navigator;
pub(crate) mod performance;
mod promises;
pub mod runtime;
mod streams;
mod structured_clone;
mod subtle;
pub mod text;
pub mod timers;
pub mod ungranted;
mod url;
mod url_search_params;
pub mod utf8;

use javy::quickjs::object::Property;
use javy::quickjs::{Array, Ctx, IntoAtom, IntoJs, Object, Result};

/// Define a per-call global as an own data property (as an assignment to a new global would),
/// without passing through anything a compiled script's top level may have put on the global
/// object or `Object.prototype`: from source the globals exist before the top level runs, and
/// a compiled call must get them the same way.
pub fn define_global<'js>(cx: &Ctx<'js>, name: &str, value: impl IntoJs<'js>) -> Result<()> {
    cx.globals().prop(
        name,
        Property::from(value.into_js(cx)?)
            .writable()
            .enumerable()
            .configurable(),
    )
}

/// Define `key` on an object made for the script as an own data property (what an assignment
/// to a new key makes), without passing through a setter a script may have put on
/// `Object.prototype` for that key.
pub fn define_own<'js>(
    object: &Object<'js>,
    key: impl IntoAtom<'js>,
    value: impl IntoJs<'js>,
) -> Result<()> {
    let value = value.into_js(object.ctx())?;
    object.prop(
        key,
        Property::from(value).writable().enumerable().configurable(),
    )
}

/// Define element `index` of an array made for the script or a prelude (what a store at the end
/// of the array makes), without the setter a script may have put on `Array.prototype` or
/// `Object.prototype` for that index: once one is there, QuickJS stores through the prototypes.
pub fn define_index<'js>(array: &Array<'js>, index: u32, value: impl IntoJs<'js>) -> Result<()> {
    define_own(array.as_object(), index, value)
}

/// An array of strings, made with `define_index`.
pub fn string_array<'js>(cx: &Ctx<'js>, strings: Vec<String>) -> Result<Array<'js>> {
    let array = Array::new(cx.clone())?;
    for (index, string) in strings.into_iter().enumerate() {
        define_index(&array, index as u32, string)?;
    }
    Ok(array)
}

/// What the guest built without capabilities (`palisade-guest-plain.wasm`, for policies that
/// grant none) hands the JS preludes in place of each native that would call a capability's
/// import, so that it imports none of them while defining the same globals as the full guest.
/// The host runs every call whose policy grants a capability in the full guest, so no call
/// reaches this.
#[cfg(not(feature = "capabilities"))]
pub fn absent(cx: Ctx<'_>) -> Result<()> {
    Err(javy::quickjs::Exception::throw_internal(
        &cx,
        "this guest is built without capabilities",
    ))
}

/// Install every Palisade global into the context.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    promises::register(cx)?;
    console::register(cx)?;
    dom_exception::register(cx)?;
    base64::register(cx)?;
    text::register(cx)?;
    timers::register(cx)?;
    abort::register(cx)?;
    structured_clone::register(cx)?;
    messaging::register(cx)?;
    url_search_params::register(cx)?;
    headers::register(cx)?;
    url::register(cx)?;
    crypto::register(cx)?;
    subtle::register(cx)?;
    performance::register(cx)?;
    navigator::register(cx)?;
    let transform = streams::register(cx)?;
    text::register_streams(cx, transform.clone())?;
    compression::register(cx, transform)?;
    blob::register(cx)?;
    form_data::register(cx)?;
    let (wait, cancel) = io::register(cx)?;
    bridge::register(cx, &wait)?;
    kv::register(cx)?;
    fs::register(cx)?;
    config::register(cx)?;
    fetch::register(cx, &wait, &cancel)?;
    ungranted::register(cx)?;
    runtime::register(cx)?;
    #[cfg(feature = "standalone")]
    crate::standalone::register(cx)?;
    promises::unregister(cx)?;
    make_atom_room(cx)?;
    make_global_room(cx)
}

/// Leave room in the runtime's atom table for the names a call's script brings. QuickJS grows
/// its atom array (by half, then threading every new slot onto its free list) when no slot is
/// free, and doubles its atom hash (rehashing every atom) once the count passes twice its size;
/// whether the snapshot ends just short of either depends on how many names the preludes use,
/// and when it does, the first new name of every call pays for it: 10,000 wasm instructions
/// (`tests/tests/integration/fuel_guard.rs`). Making `ATOM_ROOM` atoms and freeing them here
/// does any such growth before the snapshot, and leaves their slots free.
fn make_atom_room(cx: &Ctx<'_>) -> Result<()> {
    const ATOM_ROOM: usize = 128;
    let atoms = (0..ATOM_ROOM)
        .map(|i| javy::quickjs::Atom::from_str(cx.clone(), &format!("__palisade_atom_room_{i}")))
        .collect::<Result<Vec<_>>>()?;
    drop(atoms);
    Ok(())
}

/// Leave room in the global object for the globals a call adds (the capability bridge, `kv`,
/// `fs`, `config`, or the script's own). QuickJS keeps an object's properties in an array that
/// it grows by half when full, and the global object ends initialization with that array full:
/// the first global added in every call then paid for growing it (copying its ~100 properties,
/// rehashing them, and dirtying fresh pages that the instance's reset then copies back) — 10,000
/// wasm instructions, where each further global costs 1,500. One property added and deleted
/// here grows the array once, before the snapshot; the deleted slot stays unused. Measured by
/// `tests/tests/integration/fuel_guard.rs`.
fn make_global_room(cx: &Ctx<'_>) -> Result<()> {
    const PLACEHOLDER: &str = "__palisade_room";
    let globals = cx.globals();
    globals.set(PLACEHOLDER, 0)?;
    globals.remove(PLACEHOLDER)
}

//! The internal promise plumbing (`promises.js`): promises no script can intercept, which every
//! JS global chains its own promises with, and the public twins it hands to scripts. Not a
//! global: the preludes take it from `__palisadePromises` while the guest is built, and
//! `unregister` deletes that name before the snapshot.

use javy::quickjs::object::Property;
use javy::quickjs::{Ctx, Function, Object, Result};

const SCRIPT: &str = include_str!("promises.js");

/// The name the preludes read the plumbing from while the guest is built.
const NAME: &str = "__palisadePromises";

/// Make the plumbing and hand it to the preludes that follow. Runs first, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let plumbing: Object = cx.eval::<Function, _>(SCRIPT)?.call(())?;
    cx.globals()
        .prop(NAME, Property::from(plumbing).configurable())
}

/// Remove the name once every prelude has taken the plumbing.
pub fn unregister(cx: &Ctx<'_>) -> Result<()> {
    cx.globals().remove(NAME)
}

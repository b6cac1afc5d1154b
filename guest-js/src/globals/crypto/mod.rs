//! `crypto.getRandomValues` and `crypto.randomUUID`, drawing from `wasi:random/random`: the
//! host's secure generator, or the policy's seed under `[determinism]`.

use crate::wasi::random::random::get_random_bytes;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Result, TypedArray};

fn random_bytes(cx: Ctx<'_>, len: u32) -> Result<TypedArray<'_, u8>> {
    TypedArray::new(cx, get_random_bytes(u64::from(len.min(65_536))))
}

const PRELUDE: &str = include_str!("crypto.js");

/// Install `crypto`. Runs once, before the snapshot (no randomness is drawn then).
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((Func::from(random_bytes),))
}

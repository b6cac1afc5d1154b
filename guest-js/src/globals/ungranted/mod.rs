//! `kv`, `fs`, `config` and the capability bridge's `host` under a policy that does not grant
//! them (`ungranted.js`): they exist in every call, as globals of the snapshot, and each use
//! asks the host to refuse it (`capability.ungranted`), which records the refusal and returns
//! it for the script's `PolicyDeniedError`. A call whose policy grants one defines the real
//! global over it (`install` of `bridge`, `kv`, `fs`, `config`); a bridge the policy names
//! otherwise (`maia`) leaves `host` refusing.

use javy::quickjs::prelude::Func;
use javy::quickjs::{Array, Ctx, Function, Persistent, Result, Value};
use std::cell::RefCell;

const PRELUDE: &str = include_str!("ungranted.js");

/// The globals the prelude returns, in its order.
const GLOBALS: [&str; 4] = ["kv", "fs", "config", "host"];

thread_local! {
    /// The refusing globals, in `GLOBALS`' order, for `reinstate`.
    static MADE: RefCell<Vec<Persistent<Value<'static>>>> = const { RefCell::new(Vec::new()) };
}

/// Make the refusing globals and define them. Runs once, before the snapshot, after the
/// bridge's prelude has defined `PolicyDeniedError`.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let made: Array = prelude.call((Func::from(crate::globals::io::ungranted),))?;
    for (index, name) in GLOBALS.into_iter().enumerate() {
        let global: Value = made.get(index)?;
        MADE.with(|m| m.borrow_mut().push(Persistent::save(cx, global.clone())));
        crate::globals::define_global(cx, name, global)?;
    }
    Ok(())
}

/// Put back the global `name` as a call of a compiled script finds it before its policy's
/// globals are installed: the refusing one for `kv`, `fs`, `config` and `host`, none for any
/// other (a bridge the policy names `maia`). Used where a compile removes what it reserved.
pub fn reinstate(cx: &Ctx<'_>, name: &str) -> Result<()> {
    let Some(index) = GLOBALS.iter().position(|g| *g == name) else {
        return cx.globals().remove(name);
    };
    let global = MADE
        .with(|m| m.borrow().get(index).cloned())
        .expect("the refusing globals were made at init")
        .restore(cx)?;
    crate::globals::define_global(cx, name, global)
}

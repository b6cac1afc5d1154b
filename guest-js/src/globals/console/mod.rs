//! `console`: every line goes to the host's `console.log` import with its level. The five
//! logging methods are made here; console.js shapes the namespace object around them and adds
//! the counting and timing methods. A line is formatted only as far as the call's console cap
//! (line.rs).

mod line;

pub use line::set_cap;

use crate::palisade::sandbox::console::{Level, log};
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Object, Result, prelude::MutFn};
use javy::{Args, hold_and_release};

const PRELUDE: &str = include_str!("console.js");

/// Install `console`: `debug`, `info`, `log`, `warn`, `error`, `count`, `countReset`, `time`,
/// `timeLog` and `timeEnd`.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let methods = Object::new(cx.clone())?;
    for (name, level) in [
        ("debug", Level::Debug),
        ("info", Level::Info),
        ("log", Level::Log),
        ("warn", Level::Warn),
        ("error", Level::Error),
    ] {
        let function = Function::new(
            cx.clone(),
            MutFn::new(move |cx, args| {
                let (cx, args) = hold_and_release!(cx, args);
                log(level, &line::format(&cx, args.0));
            }),
        )?
        .with_name(name)?;
        methods.set(name, function)?;
    }
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((
        methods,
        Func::from(crate::globals::performance::monotonic_ms),
    ))
}

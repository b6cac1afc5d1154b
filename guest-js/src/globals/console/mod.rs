//! `console`: every line goes to the host's `console.log` import with its level. The five
//! logging methods are made here; console.js shapes the namespace object around them and adds
//! the counting and timing methods.

use crate::palisade::sandbox::console::{Level, log};
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Object, Result, Value, prelude::MutFn};
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
                log(level, &format_line(&cx, args.0));
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

/// Join the arguments with spaces: strings as they are, objects as JSON when they have a JSON
/// form, everything else through `String(value)`.
fn format_line<'js>(cx: &Ctx<'js>, args: Vec<Value<'js>>) -> String {
    let mut line = String::new();
    for (i, value) in args.into_iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        line.push_str(&format_value(cx, value));
    }
    line
}

fn format_value<'js>(cx: &Ctx<'js>, value: Value<'js>) -> String {
    if value.is_object()
        && !value.is_function()
        && !value.is_error()
        && let Ok(Some(json)) = cx.json_stringify(value.clone())
        && let Ok(text) = json.to_string()
    {
        return text;
    }
    javy::val_to_string(cx, value).unwrap_or_else(|_| "<unprintable>".to_owned())
}

//! `console`: every line goes to the host's `console.log` import with its level.

use crate::palisade::sandbox::console::{Level, log};
use javy::quickjs::{Ctx, Function, Object, Result, Value, prelude::MutFn};
use javy::{Args, hold_and_release};

/// Install `console.debug/info/log/warn/error`.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let console = Object::new(cx.clone())?;
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
        console.set(name, function)?;
    }
    cx.globals().set("console", console)
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

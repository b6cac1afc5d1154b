//! `URL`, parsed by ada (the WHATWG URL parser Node uses, through the `ada-url` crate), with
//! `searchParams` kept in step through `URLSearchParams` (url_search_params.js). `fetch` parses
//! its input with the same parser, so what a script sees is what the host is asked for.

use crate::globals::utf8::usv;
use ada_url::Url;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Result, String as JsString, Value};

/// `[href, origin, protocol, username, password, host, hostname, port, pathname, search, hash]`.
fn parts(url: &Url) -> Vec<String> {
    vec![
        url.href().to_owned(),
        url.origin(),
        url.protocol().to_owned(),
        url.username().to_owned(),
        url.password().to_owned(),
        url.host().to_owned(),
        url.hostname().to_owned(),
        url.port().to_owned(),
        url.pathname().to_owned(),
        url.search().to_owned(),
        url.hash().to_owned(),
    ]
}

/// The parts as an array that a setter on `Array.prototype` cannot intercept, or `null`.
fn parts_value<'js>(cx: &Ctx<'js>, parts: Option<Vec<String>>) -> Result<Value<'js>> {
    match parts {
        Some(parts) => Ok(crate::globals::string_array(cx, parts)?.into_value()),
        None => Ok(Value::new_null(cx.clone())),
    }
}

/// Parse `input` against `base`. Both are WebIDL `USVString`s: a lone surrogate is U+FFFD.
fn url_parse<'js>(
    cx: Ctx<'js>,
    input: JsString<'js>,
    base: Option<JsString<'js>>,
) -> Result<Value<'js>> {
    let input = usv(input)?;
    let base = base.map(usv).transpose()?;
    let url = Url::parse(&input, base.as_deref()).ok();
    parts_value(&cx, url.as_ref().map(parts))
}

/// Apply one WHATWG setter: the new parts, or `null` when `href` does not parse (it always
/// does: it came from `url_parse`) or the new href is invalid.
fn url_set<'js>(
    cx: Ctx<'js>,
    href: String,
    part: String,
    value: JsString<'js>,
) -> Result<Value<'js>> {
    let value = usv(value)?;
    parts_value(&cx, set_part(href, part, value))
}

fn set_part(href: String, part: String, value: String) -> Option<Vec<String>> {
    let mut url = Url::parse(&href, None).ok()?;
    let value = Some(value.as_str());
    match part.as_str() {
        "protocol" => url.set_protocol(value?).ok()?,
        "username" => url.set_username(value).ok()?,
        "password" => url.set_password(value).ok()?,
        "host" => url.set_host(value).ok()?,
        "hostname" => url.set_hostname(value).ok()?,
        "port" => url.set_port(value).ok()?,
        "pathname" => url.set_pathname(value).ok()?,
        "search" => url.set_search(value),
        "hash" => url.set_hash(value),
        _ => return None,
    }
    Some(parts(&url))
}

const PRELUDE: &str = include_str!("url.js");

/// Install `URL`. Runs once, before the snapshot; `URLSearchParams` must exist already.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((Func::from(url_parse), Func::from(url_set)))
}

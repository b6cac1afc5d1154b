//! `URL`, parsed by the `url` crate (the WHATWG URL Standard), with `searchParams` kept in step
//! through `URLSearchParams` (url_search_params.js). `fetch` parses its input with the same
//! parser, so what a script sees is what the host is asked for.

use crate::globals::text::usv;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Result, String as JsString, Value};
use url::{Url, quirks};

/// `[href, origin, protocol, username, password, host, hostname, port, pathname, search, hash]`.
fn parts(url: &Url) -> Vec<String> {
    vec![
        quirks::href(url).to_owned(),
        origin(url),
        quirks::protocol(url).to_owned(),
        quirks::username(url).to_owned(),
        quirks::password(url).to_owned(),
        quirks::host(url).to_owned(),
        quirks::hostname(url).to_owned(),
        quirks::port(url).to_owned(),
        quirks::pathname(url).to_owned(),
        quirks::search(url).to_owned(),
        quirks::hash(url).to_owned(),
    ]
}

/// The URL Standard's origin, serialized. For a `blob:` URL it is the origin of the URL in its
/// path only when that one is `http:` or `https:` (the standard since 2023), and opaque
/// (`null`) otherwise, where the `url` crate still takes any tuple origin from the path.
fn origin(url: &Url) -> String {
    if url.scheme() == "blob" {
        return match Url::parse(url.path()) {
            Ok(inner) if matches!(inner.scheme(), "http" | "https") => quirks::origin(&inner),
            _ => "null".to_owned(),
        };
    }
    quirks::origin(url)
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
    let url = match base {
        Some(base) => Url::parse(&base).and_then(|base| base.join(&input)),
        None => Url::parse(&input),
    };
    parts_value(&cx, url.ok().as_ref().map(parts))
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
    let mut url = Url::parse(&href).ok()?;
    match part.as_str() {
        "protocol" => quirks::set_protocol(&mut url, &value).ok()?,
        "username" => quirks::set_username(&mut url, &value).ok()?,
        "password" => quirks::set_password(&mut url, &value).ok()?,
        "host" => quirks::set_host(&mut url, &value).ok()?,
        "hostname" => quirks::set_hostname(&mut url, &value).ok()?,
        "port" => quirks::set_port(&mut url, &value).ok()?,
        "pathname" => quirks::set_pathname(&mut url, &value),
        "search" => quirks::set_search(&mut url, &value),
        "hash" => quirks::set_hash(&mut url, &value),
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

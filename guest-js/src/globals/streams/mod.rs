//! The WHATWG stream globals, in plain JS: `ReadableStream` and the queuing strategies
//! (`streams.js`), `WritableStream` (`writable.js`), `TransformStream` (`transform.js`) and
//! `pipeTo`/`pipeThrough` (`pipe.js`), byte streams (`bytes.js`), BYOB readers and the byte
//! `tee` (`byob.js`), and `ReadableStream.from` (`from.js`). Each file is a function that gets
//! the internals of the ones before it and returns its own; none of them is ever a global.

use javy::quickjs::{Ctx, Function, Object, Result};

const READABLE: &str = include_str!("streams.js");
const BYTES: &str = include_str!("bytes.js");
const BYOB: &str = include_str!("byob.js");
const FROM: &str = include_str!("from.js");
const WRITABLE: &str = include_str!("writable.js");
const TRANSFORM: &str = include_str!("transform.js");
const PIPE: &str = include_str!("pipe.js");

/// Install the stream globals. Runs once, before the snapshot, after `AbortSignal` (which
/// `WritableStream` and `pipeTo` use) and before `Blob` and `fetch`, which make their bodies'
/// streams with it. Returns the transform internals, which the text streams are built on.
pub fn register<'js>(cx: &Ctx<'js>) -> Result<Object<'js>> {
    let readable: Object = cx.eval::<Function, _>(READABLE)?.call(())?;
    let bytes: Object = cx.eval::<Function, _>(BYTES)?.call((readable.clone(),))?;
    cx.eval::<Function, _>(BYOB)?
        .call::<_, ()>((readable.clone(), bytes.clone()))?;
    cx.eval::<Function, _>(FROM)?
        .call::<_, ()>((readable.clone(), bytes))?;
    let writable: Object = cx
        .eval::<Function, _>(WRITABLE)?
        .call((readable.clone(),))?;
    let transform: Object = cx
        .eval::<Function, _>(TRANSFORM)?
        .call((readable.clone(), writable.clone()))?;
    cx.eval::<Function, _>(PIPE)?
        .call::<_, ()>((readable, writable))?;
    Ok(transform)
}

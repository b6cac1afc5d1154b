//! `fs`: promise-based file access to the directories the policy mounts (`[fs]`), through WASI
//! preopens. What the policy does not mount does not exist; `..`, symlinks and absolute paths
//! cannot leave a mount (the host opens each mount with cap-std). Errors carry a Node-style
//! `code` (`ENOENT`, `EACCES`, `EEXIST`, `ENOTDIR`, `EISDIR`, `ENOTEMPTY`, `ENOSPC`, `EIO`).

use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Persistent, Result, Value};
#[cfg(feature = "capabilities")]
use javy::quickjs::{Exception, Object, TypedArray, prelude::MutFn};
#[cfg(feature = "capabilities")]
use javy::{Args, hold_and_release};
use std::cell::RefCell;
#[cfg(feature = "capabilities")]
use std::io::ErrorKind;

const PRELUDE: &str = include_str!("fs.js");

#[cfg(feature = "capabilities")]
fn code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "ENOENT",
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => "EACCES",
        ErrorKind::AlreadyExists => "EEXIST",
        ErrorKind::NotADirectory => "ENOTDIR",
        ErrorKind::IsADirectory => "EISDIR",
        ErrorKind::DirectoryNotEmpty => "ENOTEMPTY",
        ErrorKind::InvalidInput | ErrorKind::InvalidFilename => "EINVAL",
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => "ENOSPC",
        ErrorKind::CrossesDevices => "EXDEV",
        _ => "EIO",
    }
}

/// What an error of `kind` says, in Node's words: the message of an OS error, without the
/// number WASI gave it (WASI numbers its errors its own way: its `EACCES` is 2, which reads as
/// Linux's `ENOENT`).
#[cfg(feature = "capabilities")]
fn description(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "no such file or directory",
        ErrorKind::PermissionDenied => "permission denied",
        ErrorKind::ReadOnlyFilesystem => "read-only file system",
        ErrorKind::AlreadyExists => "file already exists",
        ErrorKind::NotADirectory => "not a directory",
        ErrorKind::IsADirectory => "illegal operation on a directory",
        ErrorKind::DirectoryNotEmpty => "directory not empty",
        ErrorKind::InvalidInput | ErrorKind::InvalidFilename => "invalid argument",
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => "no space left on device",
        ErrorKind::CrossesDevices => "cross-device link not permitted",
        _ => "i/o error",
    }
}

/// The message of `e`, from `fs.NAME(path)`: `permission denied, readFile '/m/fifo'` (the
/// prelude puts the code before it, as Node does). An error the guest made itself (a file
/// that is not UTF-8) keeps its own words.
#[cfg(feature = "capabilities")]
fn message(e: &std::io::Error, name: &str, path: Option<&str>) -> String {
    let text = if e.raw_os_error().is_some() {
        description(e.kind()).to_owned()
    } else {
        e.to_string()
    };
    match path {
        Some(path) => format!("{text}, {name} '{path}'"),
        None => text,
    }
}

#[cfg(feature = "capabilities")]
fn arg<'js, T: javy::quickjs::FromJs<'js>>(args: &[Value<'js>], i: usize) -> Result<Option<T>> {
    match args.get(i) {
        Some(v) if !v.is_undefined() && !v.is_null() => Ok(Some(v.get()?)),
        _ => Ok(None),
    }
}

#[cfg(feature = "capabilities")]
fn option_flag(args: &[Value<'_>], i: usize, key: &str) -> bool {
    args.get(i)
        .and_then(|v| v.as_object())
        .and_then(|o| o.get::<_, Option<bool>>(key).ok().flatten())
        .unwrap_or(false)
}

#[cfg(feature = "capabilities")]
/// One file-system operation; `Err` carries the io error.
fn operate<'js>(
    cx: &Ctx<'js>,
    name: &str,
    args: &[Value<'js>],
) -> Result<std::io::Result<Value<'js>>> {
    let path: String = match arg(args, 0)? {
        Some(path) => path,
        None => {
            return Err(Exception::throw_type(
                cx,
                &format!("fs.{name}(path, …) needs a path"),
            ));
        }
    };
    let undefined = Value::new_undefined(cx.clone());
    Ok(match name {
        "readFile" => std::fs::read(&path)
            .and_then(|bytes| {
                let text = crate::globals::utf8::utf8(&bytes)
                    .ok_or_else(|| std::io::Error::new(ErrorKind::InvalidData, "not UTF-8 text"));
                text.map(|t| javy::quickjs::String::from_str(cx.clone(), t).map(|s| s.into_value()))
            })
            .map(|r| r.unwrap_or(undefined)),
        "writeFile" => match args.get(1) {
            // A string's UTF-8 and a Uint8Array's bytes, each written in one piece.
            Some(v) if v.is_string() => {
                let utf8 = crate::globals::utf8::Utf8::new(v.get()?)?;
                match utf8.text() {
                    Some(text) => std::fs::write(&path, text),
                    // A lone surrogate: refused as before, by the conversion to a Rust string.
                    None => std::fs::write(&path, v.get::<String>()?),
                }
            }
            Some(v) if v.as_object().is_some_and(|o| o.is_typed_array::<u8>()) => {
                let array = TypedArray::<u8>::from_value(v.clone())?;
                // A detached buffer has no bytes.
                std::fs::write(&path, array.as_bytes().unwrap_or_default())
            }
            Some(v) if v.is_array() => std::fs::write(&path, v.get::<Vec<u8>>()?),
            _ => {
                return Err(Exception::throw_type(
                    cx,
                    "fs.writeFile(path, data) needs a string or Uint8Array",
                ));
            }
        }
        .map(|()| undefined),
        "readdir" => std::fs::read_dir(&path).and_then(|entries| {
            let mut names: Vec<String> = entries
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<std::io::Result<_>>()?;
            names.sort();
            Ok(crate::globals::string_array(cx, names)
                .map(|names| names.into_value())
                .unwrap_or(undefined))
        }),
        "stat" => std::fs::metadata(&path).map(|m| {
            let stat = || -> Result<Value<'js>> {
                let o = Object::new(cx.clone())?;
                crate::globals::define_own(&o, "size", m.len() as f64)?;
                crate::globals::define_own(&o, "isFile", m.is_file())?;
                crate::globals::define_own(&o, "isDirectory", m.is_dir())?;
                Ok(o.into_value())
            };
            stat().unwrap_or(undefined)
        }),
        "mkdir" if option_flag(args, 1, "recursive") => {
            std::fs::create_dir_all(&path).map(|()| undefined)
        }
        "mkdir" => std::fs::create_dir(&path).map(|()| undefined),
        "rm" => std::fs::symlink_metadata(&path).and_then(|m| {
            if m.is_dir() {
                if option_flag(args, 1, "recursive") {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_dir(&path)
                }
            } else {
                std::fs::remove_file(&path)
            }
            .map(|()| undefined)
        }),
        other => {
            return Err(Exception::throw_type(
                cx,
                &format!("fs.{other} does not exist"),
            ));
        }
    })
}

#[cfg(feature = "capabilities")]
/// `native(name, args)` → `[true, value]` or `[false, message, code]`.
fn native<'js>(args: Args<'js>) -> Result<Value<'js>> {
    let (cx, args) = args.release();
    let mut args = args.0.into_iter();
    let name: String = args
        .next()
        .map(|v| v.get())
        .transpose()?
        .unwrap_or_default();
    let list: Vec<Value> = args
        .next()
        .map(|v| v.get())
        .transpose()?
        .unwrap_or_default();
    let result = javy::quickjs::Array::new(cx.clone())?;
    match operate(&cx, &name, &list)? {
        Ok(value) => {
            crate::globals::define_index(&result, 0, true)?;
            crate::globals::define_index(&result, 1, value)?;
        }
        Err(e) => {
            let path = list.first().and_then(|p| p.as_string()?.to_string().ok());
            crate::globals::define_index(&result, 0, false)?;
            crate::globals::define_index(&result, 1, message(&e, &name, path.as_deref()))?;
            crate::globals::define_index(&result, 2, code(e.kind()))?;
        }
    }
    Ok(result.into_value())
}

thread_local! {
    /// The `fs` object, made at start-up (its functions hold no per-call state) so that a
    /// compiled script's top level cannot change how a call's `fs` is built.
    static FS: RefCell<Option<Persistent<Value<'static>>>> = const { RefCell::new(None) };
}

/// Make the `fs` object; called once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    #[cfg(feature = "capabilities")]
    let native = Function::new(
        cx.clone(),
        MutFn::new(|cx, args| {
            let (cx, args) = hold_and_release!(cx, args);
            native(Args::hold(cx, args))
        }),
    )?;
    #[cfg(not(feature = "capabilities"))]
    let native = Func::from(crate::globals::absent);
    let fs: Value = prelude.call((native, Func::from(crate::globals::io::refusal)))?;
    FS.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, fs)));
    Ok(())
}

/// Install the `fs` global for this call.
pub fn install(cx: &Ctx<'_>) -> Result<()> {
    let fs = FS
        .with(|slot| slot.borrow().clone())
        .expect("the fs prelude ran at init")
        .restore(cx)?;
    crate::globals::define_global(cx, "fs", fs)
}

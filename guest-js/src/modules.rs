//! The files a script imports: named modules the host bundled with it, resolved and loaded by
//! QuickJS's module hooks.
//!
//! A script reaches only these modules, by a path relative to the importing module (`./lib.js`,
//! `../util/math.js`) that stays inside the script's folder; JSON modules need
//! `with { type: "json" }`. Everything else (a bare name, a URL, an absolute path, a path past
//! the folder, a file the host did not bundle) fails the import with a `TypeError` naming the
//! specifier: a static import fails the module, a dynamic `import()` rejects its promise.

use crate::exports::palisade::sandbox::runner::ModuleFile;
use javy::quickjs::{Ctx, Exception, Value, qjs};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr::{self, NonNull};

thread_local! {
    /// The script's modules: set for each call from source, held in the snapshot of a compiled
    /// script (whose dynamic imports load them at call time).
    static MODULES: RefCell<Modules> = RefCell::new(Modules::default());
}

#[derive(Default)]
struct Modules {
    /// The script's own module name: relative paths in it start from the script's folder.
    main: String,
    /// Each module by its path from the script's folder: its source and whether it is JSON.
    files: BTreeMap<String, (String, bool)>,
}

/// Hand QuickJS the resolver and loader below. Called once, before the snapshot.
pub fn install(cx: &Ctx<'_>) {
    // SAFETY: the context is live; these only store function pointers in the runtime.
    unsafe {
        let rt = qjs::JS_GetRuntime(cx.as_raw().as_ptr());
        qjs::JS_SetModuleLoaderFunc2(rt, None, Some(load), None, ptr::null_mut());
        qjs::JS_SetModuleNormalizeFunc2(rt, Some(normalize));
    }
}

/// The modules of the script `main` that is about to run.
pub fn set(main: &str, files: Vec<ModuleFile>) {
    MODULES.with(|m| {
        *m.borrow_mut() = Modules {
            main: main.to_owned(),
            files: files
                .into_iter()
                .map(|f| (f.name, (f.source, f.json)))
                .collect(),
        }
    });
}

/// The module a specifier names, from the module `base`.
fn resolve(modules: &Modules, base: &str, specifier: &str) -> Result<String, String> {
    if !(specifier.starts_with("./") || specifier.starts_with("../")) {
        return Err(format!(
            "cannot import `{specifier}`: a script imports only its own files, by a path \
             relative to the importing module (`./lib.js`)"
        ));
    }
    let mut path: Vec<&str> = if base == modules.main {
        Vec::new()
    } else {
        let mut dir: Vec<&str> = base.split('/').collect();
        dir.pop();
        dir
    };
    for segment in specifier.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if path.pop().is_none() {
                    return Err(format!(
                        "cannot import `{specifier}` from `{base}`: it points outside the \
                         script's folder"
                    ));
                }
            }
            name => path.push(name),
        }
    }
    let name = path.join("/");
    // A module may import the script itself (a cycle), which QuickJS has loaded already.
    if name == modules.main || modules.files.contains_key(&name) {
        return Ok(name);
    }
    // TypeScript's convention: `./lib.js` names `lib.ts` when that is the file there is.
    let alias = name
        .strip_suffix(".js")
        .map(|stem| format!("{stem}.ts"))
        .or_else(|| name.strip_suffix(".mjs").map(|stem| format!("{stem}.mts")));
    if let Some(alias) = alias.filter(|a| modules.files.contains_key(a)) {
        return Ok(alias);
    }
    Err(format!(
        "cannot import `{specifier}` from `{base}`: the script has no module `{name}` (only the \
         files bundled with it can be imported)"
    ))
}

/// Whether an import's attributes ask for JSON (`with { type: "json" }`).
fn wants_json(cx: &Ctx<'_>, attributes: qjs::JSValue) -> bool {
    // SAFETY: `attributes` is a live value QuickJS passed in; the duplicate is owned here.
    let attributes = unsafe {
        Value::from_raw(
            cx.clone(),
            qjs::JS_DupValue(cx.as_raw().as_ptr(), attributes),
        )
    };
    attributes
        .as_object()
        .and_then(|a| a.get::<_, Option<String>>("type").ok().flatten())
        .is_some_and(|t| t == "json")
}

/// A C string QuickJS frees with `js_free`.
fn js_string(ctx: *mut qjs::JSContext, text: &str) -> *mut c_char {
    // SAFETY: js_malloc returns a block of at least `len + 1` bytes or null.
    unsafe {
        let out = qjs::js_malloc(ctx, (text.len() + 1) as qjs::size_t) as *mut u8;
        if out.is_null() {
            return ptr::null_mut();
        }
        ptr::copy_nonoverlapping(text.as_ptr(), out, text.len());
        *out.add(text.len()) = 0;
        out as *mut c_char
    }
}

fn context<'js>(ctx: *mut qjs::JSContext) -> Ctx<'js> {
    // SAFETY: QuickJS calls the hooks below with a live context.
    unsafe { Ctx::from_raw(NonNull::new(ctx).expect("QuickJS passes a context")) }
}

/// QuickJS's module-name normalizer: resolve `specifier` from `base`, or throw.
unsafe extern "C" fn normalize(
    ctx: *mut qjs::JSContext,
    base: *const c_char,
    specifier: *const c_char,
    attributes: qjs::JSValue,
    _opaque: *mut c_void,
) -> *mut c_char {
    let cx = context(ctx);
    // SAFETY: QuickJS passes NUL-terminated UTF-8 names.
    let (base, specifier) = unsafe {
        (
            CStr::from_ptr(base).to_string_lossy(),
            CStr::from_ptr(specifier).to_string_lossy(),
        )
    };
    let resolved = MODULES.with(|m| {
        let modules = m.borrow();
        let name = resolve(&modules, &base, &specifier)?;
        let json = modules.files.get(&name).is_some_and(|(_, json)| *json);
        match (json, wants_json(&cx, attributes)) {
            (true, false) => Err(format!(
                "`{specifier}` is a JSON module: import it `with {{ type: \"json\" }}`"
            )),
            (false, true) => Err(format!(
                "`{specifier}` is imported `with {{ type: \"json\" }}` but is not a JSON module"
            )),
            _ => Ok(name),
        }
    });
    match resolved {
        Ok(name) => js_string(ctx, &name),
        Err(message) => {
            let _ = Exception::throw_type(&cx, &message);
            ptr::null_mut()
        }
    }
}

/// QuickJS's module loader: declare the module `name` (already resolved) from its source.
unsafe extern "C" fn load(
    ctx: *mut qjs::JSContext,
    name: *const c_char,
    _opaque: *mut c_void,
    _attributes: qjs::JSValue,
) -> *mut qjs::JSModuleDef {
    let cx = context(ctx);
    // SAFETY: QuickJS passes a NUL-terminated name.
    let name_c = unsafe { CStr::from_ptr(name) };
    let key = name_c.to_string_lossy();
    let file = MODULES.with(|m| m.borrow().files.get(key.as_ref()).cloned());
    let Some((source, json)) = file else {
        let _ = Exception::throw_type(&cx, &format!("the script has no module `{key}`"));
        return ptr::null_mut();
    };
    if json {
        return load_json(&cx, name_c, &source);
    }
    // QuickJS reads the source up to its length but wants a NUL after it.
    let mut text = source.into_bytes();
    text.push(0);
    // SAFETY: `text` is NUL-terminated and outlives the call; the flags only compile.
    unsafe {
        let module = qjs::JS_Eval(
            ctx,
            text.as_ptr() as *const c_char,
            (text.len() - 1) as qjs::size_t,
            name,
            (qjs::JS_EVAL_TYPE_MODULE | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as c_int,
        );
        if qjs::JS_IsException(module) {
            return ptr::null_mut();
        }
        // The context's list of loaded modules holds the module; this value is a reference.
        let def = qjs::JS_VALUE_GET_PTR(module) as *mut qjs::JSModuleDef;
        qjs::JS_FreeValue(ctx, module);
        def
    }
}

/// A JSON module: its one export, `default`, is the value `JSON.parse` gives for its text,
/// read by the same reader as the call's input.
fn load_json(cx: &Ctx<'_>, name: &CStr, text: &str) -> *mut qjs::JSModuleDef {
    let value = match crate::json::parse(cx, text) {
        Ok((value, _shapes)) => value,
        Err(message) => {
            let _ = Exception::throw_syntax(
                cx,
                &format!("JSON module `{}`: {message}", name.to_string_lossy()),
            );
            return ptr::null_mut();
        }
    };
    let ctx = cx.as_raw().as_ptr();
    // SAFETY: the names are NUL-terminated; the module keeps the value until it is evaluated.
    unsafe {
        let def = qjs::JS_NewCModule(ctx, name.as_ptr(), Some(init_json));
        if def.is_null() {
            return ptr::null_mut();
        }
        if qjs::JS_AddModuleExport(ctx, def, c"default".as_ptr()) < 0 {
            return ptr::null_mut();
        }
        qjs::JS_SetModulePrivateValue(ctx, def, qjs::JS_DupValue(ctx, value.as_raw()));
        def
    }
}

/// Evaluate a JSON module: export the value its loader parsed.
unsafe extern "C" fn init_json(ctx: *mut qjs::JSContext, def: *mut qjs::JSModuleDef) -> c_int {
    // SAFETY: `def` is the module `load_json` made, with its value as the private value.
    unsafe {
        let value = qjs::JS_GetModulePrivateValue(ctx, def);
        qjs::JS_SetModulePrivateValue(ctx, def, qjs::JS_UNDEFINED);
        qjs::JS_SetModuleExport(ctx, def, c"default".as_ptr(), value)
    }
}

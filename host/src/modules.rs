//! A script in several files: the modules it imports, checked and bundled on the host.
//!
//! A script imports its own files by a path relative to the importing module
//! (`import { add } from "./lib.js"`, `import data from "./d.json" with { type: "json" }`).
//! Module names are paths from the script's folder with `/` between folders; a specifier that
//! is not relative (a bare name, a URL, an absolute path) or that leads outside the folder is
//! refused with `invalid_input`, naming it. Reading from a folder, the host follows a static
//! import only to a regular file whose real path (symbolic links resolved) is inside the
//! folder; a dynamic `import("…")` that cannot be bundled is left to fail, catchably, when it
//! runs. The imports of a module that does not parse are not checked: the guest reports its
//! syntax error (`guest_syntax`, with its line) before it would resolve them.

use crate::bindings::exports::palisade::sandbox::runner::ModuleFile;
use crate::typescript::{self, Import};
use crate::{Error, MAX_SCRIPT_BYTES};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

/// At most this many modules besides the script itself: each is declared in every call that
/// imports it, and a script that bundles a dependency tree this size belongs in one file.
pub const MAX_MODULES: usize = 256;
/// The script and its modules together hold at most this many bytes of source, as one script
/// may ([`MAX_SCRIPT_BYTES`]): every call copies them into its sandbox.
pub const MAX_BUNDLE_BYTES: u64 = MAX_SCRIPT_BYTES;

fn invalid(detail: String) -> Error {
    Error::InvalidInput { detail, fix: None }
}

/// Check a module's name as given to `Script::with_modules`: a relative path with `/` between
/// folders, without `.`, `..` or empty parts, no URL.
fn check_name(name: &str) -> Result<(), Error> {
    let bad = name.is_empty()
        || name.contains(['\\', '\0'])
        || name.contains("://")
        || name
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == "..");
    if bad {
        return Err(invalid(format!(
            "the module name `{name}` is not a path inside the script's folder (such as \
             `lib.js` or `util/math.js`)"
        )));
    }
    Ok(())
}

/// The module name a relative `specifier` names from the module `base` (the script itself is
/// `main`, at the folder's top), or why it names none. The guest resolves the same way.
pub(crate) fn resolve(main: &str, base: &str, specifier: &str) -> Result<String, String> {
    if !(specifier.starts_with("./") || specifier.starts_with("../")) {
        let kind = if specifier.contains(':') {
            "a URL"
        } else if specifier.starts_with('/') {
            "an absolute path"
        } else {
            "a package name"
        };
        return Err(format!(
            "`{specifier}` (imported by `{base}`) is {kind}; a script imports only its own \
             files, by a path relative to the importing module (`./lib.js`)"
        ));
    }
    let mut path: Vec<&str> = if base == main {
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
                        "`{specifier}` (imported by `{base}`) points outside the script's folder"
                    ));
                }
            }
            name => path.push(name),
        }
    }
    Ok(path.join("/"))
}

/// The name a TypeScript module may be imported under by TypeScript's convention
/// (`./lib.js` for `lib.ts`).
fn typescript_alias(name: &str) -> Option<String> {
    name.strip_suffix(".js")
        .map(|stem| format!("{stem}.ts"))
        .or_else(|| name.strip_suffix(".mjs").map(|stem| format!("{stem}.mts")))
}

fn is_json(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".json")
}

/// A static import of a JSON module needs `with { type: "json" }`, and only a JSON module may
/// be imported so (the guest checks dynamic imports the same way).
fn check_json(import: &Import, base: &str, name: &str) -> Result<(), Error> {
    if import.may_fail() || import.json == is_json(name) {
        return Ok(());
    }
    let specifier = &import.specifier;
    Err(invalid(if import.json {
        format!(
            "`{specifier}` (imported by `{base}`, line {}) is imported `with {{ type: \"json\" }}` \
             but is not a JSON module",
            import.line
        )
    } else {
        format!(
            "`{specifier}` (imported by `{base}`, line {}) is a JSON module: import it `with {{ \
             type: \"json\" }}`",
            import.line
        )
    }))
}

/// A module as the guest gets it: TypeScript stripped, JSON checked.
fn prepare(name: &str, source: String) -> Result<(ModuleFile, Vec<Import>), Error> {
    if is_json(name) {
        serde_json::from_str::<serde::de::IgnoredAny>(&source)
            .map_err(|e| invalid(format!("the JSON module `{name}` is not JSON: {e}")))?;
        let file = ModuleFile {
            name: name.to_owned(),
            source,
            json: true,
        };
        return Ok((file, Vec::new()));
    }
    let scanned = typescript::scan(name, &source, typescript::is_typescript(name))?;
    let file = ModuleFile {
        name: name.to_owned(),
        source: scanned.source,
        json: false,
    };
    Ok((file, scanned.imports))
}

/// Check the modules given to `Script::with_modules` for the script `main`: names, bounds,
/// and that every static import of the script and of each module names one of them.
pub(crate) fn from_named(
    main: &str,
    main_imports: &[Import],
    main_bytes: usize,
    named: Vec<(String, String)>,
) -> Result<Vec<ModuleFile>, Error> {
    if named.len() > MAX_MODULES {
        return Err(invalid(format!(
            "the script has {} modules, over the limit of {MAX_MODULES}",
            named.len()
        )));
    }
    let mut total = main_bytes as u64;
    let mut files = BTreeMap::new();
    let mut imports = vec![(main.to_owned(), main_imports.to_vec())];
    for (name, source) in named {
        check_name(&name)?;
        if name == main {
            return Err(invalid(format!(
                "the module `{name}` has the script's own name"
            )));
        }
        total += source.len() as u64;
        if total > MAX_BUNDLE_BYTES {
            return Err(too_large());
        }
        let (file, found) = prepare(&name, source)?;
        imports.push((name.clone(), found));
        files.insert(name, file);
    }
    for (base, found) in &imports {
        for import in found.iter().filter(|i| !i.may_fail()) {
            let name = resolve(main, base, &import.specifier).map_err(invalid)?;
            let known = name == main
                || files.contains_key(&name)
                || typescript_alias(&name).is_some_and(|a| files.contains_key(&a));
            check_json(import, base, &name)?;
            if !known {
                return Err(invalid(format!(
                    "`{}` (imported by `{base}`, line {}) names the module `{name}`, which is not \
                     one of the script's modules",
                    import.specifier, import.line
                )));
            }
        }
    }
    Ok(files.into_values().collect())
}

fn too_large() -> Error {
    invalid(format!(
        "the script and its modules hold more than {MAX_BUNDLE_BYTES} bytes of source"
    ))
}

/// Read the modules the script at `path` imports, and theirs, from the script's folder.
pub(crate) fn from_folder(
    path: &Path,
    main: &str,
    main_imports: &[Import],
    main_bytes: usize,
) -> Result<Vec<ModuleFile>, Error> {
    if main_imports.is_empty() {
        return Ok(Vec::new());
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let root = folder.canonicalize().map_err(|e| {
        invalid(format!(
            "cannot read the script's folder `{}`: {e}",
            folder.display()
        ))
    })?;
    let mut total = main_bytes as u64;
    let mut files: BTreeMap<String, ModuleFile> = BTreeMap::new();
    let mut queue: VecDeque<(String, Vec<Import>)> = VecDeque::new();
    queue.push_back((main.to_owned(), main_imports.to_vec()));
    while let Some((base, imports)) = queue.pop_front() {
        for import in imports {
            let Some(name) = locate(&root, main, &files, &base, &import)? else {
                continue;
            };
            let Some(real) = real_path(&root, &name, &base, &import)? else {
                continue;
            };
            if files.len() == MAX_MODULES {
                return Err(invalid(format!(
                    "the script imports more than {MAX_MODULES} modules"
                )));
            }
            let left = MAX_BUNDLE_BYTES.saturating_sub(total);
            let source = read_source(&real, left, &base, &import)?;
            total += source.len() as u64;
            let (module, found) = prepare(&name, source)?;
            files.insert(name.clone(), module);
            queue.push_back((name, found));
        }
    }
    Ok(files.into_values().collect())
}

/// The folder's file that an import by `base` names (or its TypeScript alias), when it is
/// one still to read; `None` when it was read already, or for an import left to the guest
/// (`Import::may_fail`) that names no file of the folder.
fn locate(
    root: &Path,
    main: &str,
    files: &BTreeMap<String, ModuleFile>,
    base: &str,
    import: &Import,
) -> Result<Option<String>, Error> {
    let name = match resolve(main, base, &import.specifier) {
        Ok(name) => name,
        // A dynamic import that names no file of the folder fails when it runs.
        Err(_) if import.may_fail() => return Ok(None),
        Err(reason) => return Err(invalid(reason)),
    };
    let found = [Some(name.clone()), typescript_alias(&name)]
        .into_iter()
        .flatten()
        .find(|n| n == main || files.contains_key(n) || root.join(n).exists());
    let Some(name) = found else {
        if import.may_fail() {
            return Ok(None);
        }
        return Err(invalid(format!(
            "`{}` (imported by `{base}`, line {}): there is no file `{name}` in the \
             script's folder",
            import.specifier, import.line
        )));
    };
    check_json(import, base, &name)?;
    if name == main || files.contains_key(&name) {
        return Ok(None);
    }
    Ok(Some(name))
}

/// Where the module file `name` really is, which must be inside the script's folder; `None`
/// for an import left to the guest (`Import::may_fail`) of a link that leads outside.
fn real_path(
    root: &Path,
    name: &str,
    base: &str,
    import: &Import,
) -> Result<Option<PathBuf>, Error> {
    let file = root.join(name);
    let real = file.canonicalize().map_err(|e| {
        invalid(format!(
            "`{}` (imported by `{base}`): {e}",
            import.specifier
        ))
    })?;
    if !real.starts_with(root) {
        if import.may_fail() {
            return Ok(None);
        }
        return Err(invalid(format!(
            "`{}` (imported by `{base}`) is a symbolic link to a file outside the \
             script's folder",
            import.specifier
        )));
    }
    Ok(Some(real))
}

/// A module's source, if it fits in the `left` bytes of the bundle.
fn read_source(real: &Path, left: u64, base: &str, import: &Import) -> Result<String, Error> {
    crate::hostfile::read_text(real, left).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidInput && e.to_string().contains("larger") {
            too_large()
        } else {
            invalid(format!(
                "`{}` (imported by `{base}`): {e}",
                import.specifier
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn specifiers_resolve_inside_the_folder_only() {
        assert_eq!(resolve("app.js", "app.js", "./lib.js").unwrap(), "lib.js");
        assert_eq!(resolve("app.js", "app.js", "./a/../b.js").unwrap(), "b.js");
        assert_eq!(
            resolve("app.js", "sub/x.js", "../lib.js").unwrap(),
            "lib.js"
        );
        assert_eq!(resolve("app.js", "sub/x.js", "./y.js").unwrap(), "sub/y.js");
        // The script's own name may hold folders; its imports start at the top.
        assert_eq!(
            resolve("/srv/app.js", "/srv/app.js", "./lib.js").unwrap(),
            "lib.js"
        );
        for bad in [
            "../x.js",
            "./../x.js",
            "/etc/passwd",
            "https://e.com/x.js",
            "lodash",
            "node:fs",
        ] {
            let error = resolve("app.js", "app.js", bad).unwrap_err();
            assert!(error.contains(bad), "{error}");
        }
        assert!(resolve("app.js", "sub/x.js", "../../x.js").is_err());
    }
}

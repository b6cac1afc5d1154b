//! A script: an ES module's name and source, or a script compiled into a component of its own.

use crate::Error;
use crate::bindings::exports::palisade::sandbox::runner::ModuleFile;
pub use crate::hostfile::MAX_SCRIPT_BYTES;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// An ES module to run. Cheap to clone; the source is shared.
#[derive(Debug, Clone)]
pub struct Script {
    name: Arc<str>,
    source: Arc<str>,
    /// QuickJS bytecode from [`crate::Palisade::precompile`]: produced in this process by the
    /// embedded guest, never taken from outside.
    bytecode: Option<Arc<[u8]>>,
    /// The component from [`crate::Palisade::compile`], with the module already evaluated.
    compiled: Option<Compiled>,
    /// SHA-256 of the name and source, computed once and shared by clones: it keys the
    /// bytecode cache and the automatic compiler.
    key: Arc<OnceLock<[u8; 32]>>,
    /// The files the module imports (`./lib.js`), checked and prepared by the host
    /// ([`Script::with_modules`], or read from the script's folder by [`Script::from_file`]).
    modules: Arc<[ModuleFile]>,
    /// Whether its last expression is its result ([`Script::new`]).
    last_expression: bool,
    /// What an action app's policy leaves of the JavaScript runtime (`[apps]`); `None` for
    /// every other script, which has all of it.
    app_runtime: Option<crate::policy::AppRuntime>,
}

/// A compiled script's component and its SHA-256, which keys the host's caches.
#[derive(Clone)]
pub(crate) struct Compiled {
    pub wasm: Arc<[u8]>,
    pub sha256: [u8; 32],
    /// The guest it extends: the plain one when its policy granted no capability.
    pub guest: crate::guest::Guest,
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("bytes", &self.wasm.len())
            .finish_non_exhaustive()
    }
}

/// The custom section that marks a component as a script compiled by Palisade.
pub(crate) const MARKER_SECTION: &str = "palisade-compiled";

/// The contents of the marker section.
#[derive(Serialize, Deserialize)]
pub(crate) struct Marker {
    /// Format of this section.
    pub format: u32,
    /// SHA-256 of the guest the script was compiled into.
    pub guest: String,
    pub name: String,
    pub source: String,
}

pub(crate) const MARKER_FORMAT: u32 = 1;

impl Script {
    /// A script from its source text; `name` appears in stack traces and error locations.
    ///
    /// A module with exports runs as one: its default export is called (or is the result).
    /// Source that exports nothing and ends with an expression statement, as a snippet an
    /// agent or a console writes (`const r = await fetch(u); (await r.json()).items.length`),
    /// has that expression's value as its result, top-level `await` allowed; the receipt then
    /// says `form: "last_expression"`.
    pub fn new(name: impl Into<Arc<str>>, source: impl Into<Arc<str>>) -> Self {
        let (name, source) = (name.into(), source.into());
        let wrapped = crate::typescript::with_last_expression(&name, &source);
        Self {
            last_expression: wrapped.is_some(),
            source: wrapped.map_or(source, Into::into),
            name,
            bytecode: None,
            compiled: None,
            key: Arc::default(),
            modules: Arc::new([]),
            app_runtime: None,
        }
    }

    /// Whether the script's result is the value of its last expression statement (see
    /// [`Script::new`]).
    pub fn last_expression(&self) -> bool {
        self.last_expression
    }

    /// A script compiled by [`crate::Palisade::compile`] (or `palisade compile`): a component
    /// whose snapshot already holds the evaluated module. Fails with `invalid_component` when
    /// `wasm` is not one, or was compiled by another build of Palisade.
    pub fn from_component(wasm: impl Into<Arc<[u8]>>) -> Result<Self, Error> {
        let wasm = wasm.into();
        let marker = read_marker(&wasm)?;
        let guest = crate::guest::Guest::from_sha256(&marker.guest)
            .filter(|_| marker.format == MARKER_FORMAT)
            .ok_or_else(|| Error::InvalidComponent {
                detail: format!(
                    "`{}` was compiled by another build of Palisade; compile it again with \
                     `palisade compile`",
                    marker.name
                ),
            })?;
        let sha256 = Sha256::digest(&wasm).into();
        Ok(Self {
            name: marker.name.into(),
            source: marker.source.into(),
            bytecode: None,
            compiled: Some(Compiled {
                wasm,
                sha256,
                guest,
            }),
            key: Arc::default(),
            modules: Arc::new([]),
            last_expression: false,
            app_runtime: None,
        })
    }

    /// Read a script from a file; its file name becomes the module name. Only a regular file
    /// of at most [`MAX_SCRIPT_BYTES`] is read: a FIFO, a socket or a device (`/dev/zero`) is
    /// refused with an error of kind `InvalidInput`, as is a larger file.
    ///
    /// A `.ts` or `.mts` file is TypeScript ([`Script::typescript`]). The files the script
    /// imports by relative paths (`import { add } from "./lib.js"`), and theirs, are read from
    /// its folder and bundled with it, as [`Script::with_modules`] describes; a specifier that
    /// leads outside the folder, or a static import of a file that is not there, is an error of
    /// kind `InvalidInput` naming it ([`Script::from_file_bytes`] gives it as `invalid_input`).
    pub fn from_file(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let path = path.as_ref();
        let source = crate::hostfile::read_text(path, MAX_SCRIPT_BYTES)?;
        Self::from_source_file(path, source)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))
    }

    /// A script read from `path`: TypeScript stripped, its imports read from its folder.
    fn from_source_file(path: &Path, source: String) -> Result<Self, Error> {
        let name = file_name(path);
        let typescript = crate::typescript::is_typescript(&name);
        // Most scripts import nothing (no `import`, no `export … from`): no parse for them.
        if !typescript && !source.contains("import") && !source.contains("from") {
            return Ok(Self::new(name, source));
        }
        let scanned = crate::typescript::scan(&name, &source, typescript)?;
        let modules =
            crate::modules::from_folder(path, &name, &scanned.imports, scanned.source.len())?;
        let mut script = Self::new(name, scanned.source);
        script.modules = modules.into();
        Ok(script)
    }

    /// A TypeScript module: its types are stripped on the host (oxc's parser), each replaced
    /// by spaces, so that every line and column of the script, in a syntax error, a stack
    /// trace or an error's location, is that of `source`. TypeScript that needs code
    /// generated (`enum`, a `namespace` with values, parameter properties, `import x =
    /// require(…)`, `export =`) and source that does not parse are `guest_syntax`, with the
    /// position in `source`.
    pub fn typescript(name: impl Into<Arc<str>>, source: impl AsRef<str>) -> Result<Self, Error> {
        let name = name.into();
        let scanned = crate::typescript::scan(&name, source.as_ref(), true)?;
        Ok(Self::new(name, scanned.source))
    }

    /// The script with the modules it imports, each a name and its source. A name is the
    /// file's path from the script's folder, with `/` between folders (`lib.js`,
    /// `util/math.ts`, `data.json`); the script imports it by a path relative to the importing
    /// module (`import { add } from "./lib.js"`, `import data from "./data.json" with { type:
    /// "json" }`), and may load it with `import("./lib.js")`. A `.json` name is a JSON module
    /// (its default export is the parsed value); a `.ts` or `.mts` one is TypeScript, stripped
    /// as [`Script::typescript`] does, and can also be imported as `./name.js`.
    ///
    /// Fails with `invalid_input` when a name is not such a path, when there are more than
    /// [`crate::MAX_MODULES`] modules or more than [`crate::MAX_BUNDLE_BYTES`] of source with the
    /// script's, when a JSON module is not JSON, or when a static import of the script or of a
    /// module is not a relative path to one of them (a package name, a URL, an absolute path,
    /// a path out of the folder), naming the specifier; with `guest_syntax` when TypeScript
    /// does not strip. A dynamic `import()` of anything else fails, catchably, when it runs.
    pub fn with_modules<N, S>(
        self,
        modules: impl IntoIterator<Item = (N, S)>,
    ) -> Result<Self, Error>
    where
        N: Into<String>,
        S: Into<String>,
    {
        let named: Vec<(String, String)> = modules
            .into_iter()
            .map(|(n, s)| (n.into(), s.into()))
            .collect();
        let main = crate::typescript::scan(&self.name, &self.source, false)?;
        let modules =
            crate::modules::from_named(&self.name, &main.imports, self.source.len(), named)?;
        Ok(Self {
            modules: modules.into(),
            key: Arc::default(),
            ..self
        })
    }

    /// The names of the modules bundled with the script, in order.
    pub fn modules(&self) -> impl Iterator<Item = &str> {
        self.modules.iter().map(|m| m.name.as_str())
    }

    /// The modules a call passes to the guest: none for a compiled script, whose snapshot
    /// holds them.
    pub(crate) fn module_files(&self) -> &[ModuleFile] {
        if self.compiled.is_some() {
            &[]
        } else {
            &self.modules
        }
    }

    /// The bytes of a script file (source or compiled component): a regular file, or a pipe
    /// read to its end, of at most [`MAX_SCRIPT_BYTES`]; devices and sockets are refused.
    pub fn read_file_bytes(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
        crate::hostfile::read_script(path.as_ref(), MAX_SCRIPT_BYTES)
    }

    /// The bytes of a script read from a stream (`palisade run -` reads stdin), to its end, at
    /// most [`MAX_SCRIPT_BYTES`].
    pub fn read_stream_bytes(reader: impl std::io::Read) -> std::io::Result<Vec<u8>> {
        crate::hostfile::read_stream(reader, MAX_SCRIPT_BYTES)
    }

    /// A script from a file's bytes: a compiled component when the name ends in `.wasm`, the
    /// bytes start with the WebAssembly magic, or they are no text but hold its `asm` (a
    /// damaged magic), else an ES module (TypeScript when the name ends in `.ts` or `.mts`,
    /// with the files it imports read from its folder as [`Script::from_file`] does; a bad
    /// import is `invalid_input`). A `.wasm` file that is not a
    /// component is `invalid_component`, whatever its bytes; source that is not UTF-8 is
    /// `Ok(Err(..))`, an unreadable script rather than a bad component.
    pub fn from_file_bytes(
        path: &Path,
        bytes: Vec<u8>,
    ) -> Result<Result<Self, std::str::Utf8Error>, Error> {
        let named_wasm = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("wasm"));
        // A damaged first byte still leaves `asm` and bytes that are no text.
        let damaged_magic =
            bytes.get(1..4) == Some(&b"asm"[..]) && std::str::from_utf8(&bytes).is_err();
        if named_wasm || bytes.starts_with(b"\0asm") || damaged_magic {
            return Script::from_component(bytes).map(Ok);
        }
        Ok(match String::from_utf8(bytes) {
            Ok(source) => Ok(Self::from_source_file(path, source)?),
            Err(e) => Err(e.utf8_error()),
        })
    }

    /// The module name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the script is a compiled component ([`Script::from_component`]).
    pub fn is_compiled(&self) -> bool {
        self.compiled.is_some()
    }

    pub(crate) fn compiled(&self) -> Option<&Compiled> {
        self.compiled.as_ref()
    }

    /// SHA-256 of the module name and source.
    pub(crate) fn key(&self) -> [u8; 32] {
        *self.key.get_or_init(|| {
            let mut hash = Sha256::new();
            hash.update(self.name.as_bytes());
            hash.update([0]);
            hash.update(self.source.as_bytes());
            for module in self.modules.iter() {
                hash.update([0]);
                hash.update(module.name.as_bytes());
                hash.update([0, u8::from(module.json)]);
                hash.update((module.source.len() as u64).to_le_bytes());
                hash.update(module.source.as_bytes());
            }
            hash.finalize().into()
        })
    }

    /// The module source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the script carries precompiled bytecode.
    pub fn is_precompiled(&self) -> bool {
        self.bytecode.is_some()
    }

    pub(crate) fn bytecode(&self) -> Option<&[u8]> {
        self.bytecode.as_deref()
    }

    /// This script as an action app's, run with what `runtime` leaves of the JavaScript
    /// runtime: the guest turns the rest off before any of its JavaScript runs.
    #[cfg(feature = "serve")]
    pub(crate) fn with_app_runtime(self, runtime: crate::policy::AppRuntime) -> Self {
        Self {
            app_runtime: Some(runtime),
            ..self
        }
    }

    /// Whether the script's calls may use timers, and `eval` with the `Function`
    /// constructors: both for any script but an action app's.
    pub(crate) fn runtime_grants(&self) -> (bool, bool) {
        self.app_runtime
            .map_or((true, true), |r| (r.timers, r.eval))
    }

    pub(crate) fn with_bytecode(&self, bytecode: Arc<[u8]>) -> Self {
        Self {
            bytecode: Some(bytecode),
            ..self.clone()
        }
    }
}

/// The module name of a script read from `path`: its file name.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The marker section of a compiled script's component.
fn read_marker(wasm: &[u8]) -> Result<Marker, Error> {
    let invalid = |detail: String| Error::InvalidComponent { detail };
    if !wasmparser::Parser::is_component(wasm) {
        return Err(invalid(
            "the file is not a WebAssembly component (compile scripts with `palisade compile`)"
                .to_owned(),
        ));
    }
    // Only the outermost component's sections count; nested modules and components are skipped.
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| invalid(format!("the component does not parse: {e}")))?;
        match payload {
            wasmparser::Payload::ModuleSection { .. }
            | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::CustomSection(section)
                if depth == 0 && section.name() == MARKER_SECTION =>
            {
                return serde_json::from_slice(section.data()).map_err(|e| {
                    invalid(format!("its `{MARKER_SECTION}` section is invalid: {e}"))
                });
            }
            _ => {}
        }
    }
    Err(invalid(format!(
        "the component has no `{MARKER_SECTION}` section: it is not a script compiled by \
         `palisade compile`"
    )))
}

/// Append the marker section to a compiled script's component.
pub(crate) fn add_marker(wasm: &mut Vec<u8>, marker: &Marker) {
    let data = serde_json::to_vec(marker).expect("the marker serializes");
    let section = wasm_encoder::CustomSection {
        name: MARKER_SECTION.into(),
        data: data.into(),
    };
    use wasm_encoder::ComponentSection as _;
    section.append_to_component(wasm);
}

//! Standalone components (`palisade build`): a script snapshotted into the standalone guest
//! (`host/guest/palisade-guest-standalone.wasm`), which imports only standard WASI interfaces
//! and exports `wasi:cli/run` and `wasi:http/incoming-handler`, so that the stock `wasmtime run`
//! and `wasmtime serve` run it with no Palisade on the machine (docs/standalone.md).
//!
//! The build evaluates the module under the policy's limits as [`crate::Palisade::compile`]
//! does, and fixes in the snapshot what the standard imports cannot carry: the globals the
//! policy grants, whether it grants HTTP, and its input and output limits. The policy's other
//! limits and grants become the `wasmtime` flags of [`wasmtime_flags`]. The result carries the
//! same `palisade-compiled` section as a compiled script, so `palisade run app.wasm` runs it too,
//! with its standard imports behind the Palisade host's gates.

use crate::bindings::exports::palisade::sandbox::runner::ModuleFile;
use crate::guest::Guest;
use crate::{Error, Policy, Script};

/// The module name of the adapter `--http` puts around the script.
const HTTP_ADAPTER: &str = "palisade-http.js";

/// The module file that carries the build's settings to the guest (`guest-js/src/standalone/
/// settings.rs`); its name is not a relative path, so no script can import it.
const SETTINGS_MODULE: &str = "palisade:standalone";

/// What to build.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions {
    /// Build an HTTP handler: the script's default export is an object with a
    /// `fetch(request)` method, called for each request `wasmtime serve` takes.
    pub http: bool,
}

/// Build `script` into a standalone component under `policy` (see the module docs). The
/// instrumented guest is compiled once per machine and cached where the guests are
/// (`$PALISADE_CACHE_DIR`, …); `on_compile` is called before that compile.
pub async fn build(
    policy: &Policy,
    script: &Script,
    options: BuildOptions,
    on_compile: &dyn Fn(),
) -> Result<Vec<u8>, Error> {
    if script.is_compiled() {
        return Err(Error::InvalidInput {
            detail: "build from the script's source, not from a compiled component".to_owned(),
            fix: None,
        });
    }
    let env = crate::call::environment(policy, 0);
    let limits = policy.limits();
    let settings = serde_json::json!({
        "http": policy.http().is_some(),
        "input_limit": limits.input.0,
        "output_limit": limits.output.0,
    });
    let mut modules: Vec<ModuleFile> = script.module_files().to_vec();
    modules.push(ModuleFile {
        name: SETTINGS_MODULE.to_owned(),
        source: settings.to_string(),
        json: true,
    });
    let (name, source) = if options.http {
        modules.push(ModuleFile {
            name: script.name().to_owned(),
            source: script.source().to_owned(),
            json: false,
        });
        (HTTP_ADAPTER.to_owned(), http_adapter(script.name()))
    } else {
        (script.name().to_owned(), script.source().to_owned())
    };
    let mut wasm = crate::snapshot::preload(crate::snapshot::Preload {
        guest: Guest::Standalone,
        cache_dir: crate::cache::default_dir().as_deref(),
        on_compile,
        name: &name,
        source: &source,
        modules: &modules,
        env: &env,
        limits,
    })
    .await?;
    let marker = crate::script::Marker {
        format: crate::script::MARKER_FORMAT,
        guest: Guest::Standalone.sha256().to_owned(),
        name,
        source,
    };
    crate::script::add_marker(&mut wasm, &marker);
    Ok(wasm)
}

/// The main module of an HTTP build: it imports the script, takes the guest's HTTP natives
/// (and removes them from the global object), and exports the function the guest's
/// `wasi:http/incoming-handler` calls with each request's method, URL and headers.
fn http_adapter(script: &str) -> String {
    let specifier = serde_json::to_string(&format!("./{script}")).expect("a string is JSON");
    format!(
        r#"import app from {specifier};
const native = globalThis.__palisadeHttp;
delete globalThis.__palisadeHttp;
const RequestCtor = Request;
const ResponseCtor = Response;
const TypeErrorCtor = TypeError;
if (app === null || (typeof app !== "object" && typeof app !== "function") || typeof app.fetch !== "function") {{
  throw new TypeErrorCtor("an HTTP handler's default export is an object with a fetch(request) method");
}}
export default async function handle(meta) {{
  const init = {{ method: meta.method, headers: meta.headers }};
  if (meta.method !== "GET" && meta.method !== "HEAD") init.body = native.body();
  const response = await app.fetch(new RequestCtor(meta.url, init));
  if (!(response instanceof ResponseCtor)) {{
    throw new TypeErrorCtor("fetch(request) must return a Response");
  }}
  const headers = [];
  response.headers.forEach((value, name) => {{ headers[headers.length] = [name, value]; }});
  native.respond(response.status, headers, new Uint8Array(await response.arrayBuffer()));
  return null;
}}
"#
    )
}

/// Which `wasmtime` subcommand the flags are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `wasmtime run`: one call, input on stdin.
    Run,
    /// `wasmtime serve`: an HTTP handler.
    Serve,
}

/// The `wasmtime run` or `wasmtime serve` flags that carry `policy`'s limits and grants:
/// `-W fuel=…,max-memory-size=…,max-wasm-stack=…,timeout=…`, `-S http -S keyvalue -S config`
/// (the component imports all three, and the stock CLI instantiates it only with each
/// defined; the guest itself refuses what the policy does not grant), a `-S config-var=K=V`
/// per `[config]` value (the CLI splits `-S` values at commas, so a value with a comma does
/// not survive) and a `--dir HOST::GUEST` per `[[fs.mount]]`; `serve` also gets `-S cli`
/// (it links only the `wasi:http/proxy` interfaces without it, and the guest reads files
/// through `wasi:filesystem`).
///
/// `wasmtime run -W unknown-imports-trap=y` would leave the ungranted imports undefined, but
/// in wasmtime 48 it redefines `wasi:io/poll` for a component that imports a newer WASI 0.2
/// than the CLI's own, and the component no longer links.
pub fn wasmtime_flags(policy: &Policy, command: Command) -> Vec<String> {
    let limits = policy.limits();
    let mut flags = vec![
        "-W".to_owned(),
        format!(
            "fuel={},max-memory-size={},max-wasm-stack={},timeout={}ms",
            limits.fuel,
            limits.memory.0,
            limits.stack.0,
            limits.timeout.0.as_millis()
        ),
    ];
    if command == Command::Serve {
        flags.extend(["-S", "cli"].map(str::to_owned));
    }
    flags.extend(["-S", "http", "-S", "keyvalue", "-S", "config"].map(str::to_owned));
    for (key, value) in policy.config().into_iter().flat_map(|c| c.iter()) {
        flags.push("-S".to_owned());
        flags.push(format!("config-var={key}={value}"));
    }
    for mount in policy.fs().into_iter().flat_map(|fs| fs.mount.iter()) {
        flags.push("--dir".to_owned());
        flags.push(format!("{}::{}", mount.host.display(), mount.guest));
    }
    flags
}

/// `flags` as one shell line (each word quoted when it needs it).
pub fn shell_words(flags: &[String]) -> String {
    flags
        .iter()
        .map(|f| {
            if f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=,./:@+".contains(c))
            {
                f.clone()
            } else {
                format!("'{}'", f.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

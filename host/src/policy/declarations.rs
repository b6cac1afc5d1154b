//! [`Policy::typescript`]: the TypeScript declarations of exactly what a script may use under a
//! policy, so that a script checked against them (`tsc --noEmit`) compiles when it uses only
//! what the policy grants.
//!
//! The text is one self-contained `.d.ts`: it names the ECMAScript libraries QuickJS has (not
//! `WeakRef`, `FinalizationRegistry`, `Atomics` or `SharedArrayBuffer`, which it lacks; `Intl`
//! stays, as TypeScript's base library declares it), the web globals every script has
//! (`declarations/web.d.ts`), and then only what the policy grants: the capability bridge with a
//! function per granted capability typed from its JSON `schema`, `kv` with its buckets
//! (read-only ones without the writing methods), `fs` with its paths, `config` with its keys,
//! and `fetch` with one overload per `[[http.allow]]` rule (the URL as a template literal type,
//! the methods it allows). Everything a policy does not grant is left undeclared, although the
//! guest defines `kv`, `fs`, `config` and `host` in every call (to refuse their use at run
//! time).

mod schema;

use super::{BucketMode, Capabilities, Clock, Fs, Http, Kv, MountMode, Policy};
use schema::{comment, key};
use std::fmt::Write;

/// The web globals every script has, whatever its policy.
const WEB: &str = include_str!("declarations/web.d.ts");

/// The globals every declaration text has but `fetch` (which each policy types its own way):
/// exactly what `declarations/web.d.ts` declares (a unit test checks), and each of them a global
/// of the guest (`tests/tests/integration/types.rs` checks).
pub const WEB_GLOBALS: &[&str] = &[
    "AbortController",
    "AbortSignal",
    "Blob",
    "ByteLengthQueuingStrategy",
    "CapabilityError",
    "CompressionStream",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "CountQueuingStrategy",
    "CryptoKey",
    "CustomEvent",
    "DOMException",
    "DecompressionStream",
    "DnsError",
    "Event",
    "EventTarget",
    "File",
    "FormData",
    "Headers",
    "InternalError",
    "KvError",
    "MessageChannel",
    "MessageEvent",
    "MessagePort",
    "Navigator",
    "NetworkError",
    "Performance",
    "PolicyDeniedError",
    "ReadableByteStreamController",
    "ReadableStream",
    "ReadableStreamBYOBReader",
    "ReadableStreamBYOBRequest",
    "ReadableStreamDefaultController",
    "ReadableStreamDefaultReader",
    "Request",
    "RequestTooLargeError",
    "Response",
    "ResponseTooLargeError",
    "SubtleCrypto",
    "TextDecoder",
    "TextDecoderStream",
    "TextEncoder",
    "TextEncoderStream",
    "TransformStream",
    "TransformStreamDefaultController",
    "URL",
    "URLSearchParams",
    "UpstreamTimeoutError",
    "WritableStream",
    "WritableStreamDefaultController",
    "WritableStreamDefaultWriter",
    "atob",
    "btoa",
    "clearInterval",
    "clearTimeout",
    "console",
    "crypto",
    "navigator",
    "performance",
    "queueMicrotask",
    "setInterval",
    "setTimeout",
    "structuredClone",
];

/// TypeScript's ECMAScript libraries (5.9's names) for what QuickJS has: every part up to
/// `esnext` but `weakref`, `sharedmemory` (`Atomics`) and `decorators`.
const ES_LIBS: &[&str] = &[
    "es5",
    "es2015.collection",
    "es2015.core",
    "es2015.generator",
    "es2015.iterable",
    "es2015.promise",
    "es2015.proxy",
    "es2015.reflect",
    "es2015.symbol",
    "es2015.symbol.wellknown",
    "es2016.array.include",
    "es2016.intl",
    "es2017.arraybuffer",
    "es2017.date",
    "es2017.intl",
    "es2017.object",
    "es2017.string",
    "es2017.typedarrays",
    "es2018.asyncgenerator",
    "es2018.asynciterable",
    "es2018.intl",
    "es2018.promise",
    "es2018.regexp",
    "es2019.array",
    "es2019.intl",
    "es2019.object",
    "es2019.string",
    "es2019.symbol",
    "es2020.bigint",
    "es2020.date",
    "es2020.intl",
    "es2020.number",
    "es2020.promise",
    "es2020.string",
    "es2020.symbol.wellknown",
    "es2021.intl",
    "es2021.promise",
    "es2021.string",
    "es2022.array",
    "es2022.error",
    "es2022.intl",
    "es2022.object",
    "es2022.regexp",
    "es2022.string",
    "es2023.array",
    "es2023.collection",
    "es2023.intl",
    "es2024.arraybuffer",
    "es2024.collection",
    "es2024.object",
    "es2024.promise",
    "es2024.regexp",
    "es2024.string",
    "esnext.array",
    "esnext.collection",
    "esnext.disposable",
    "esnext.error",
    "esnext.float16",
    "esnext.intl",
    "esnext.iterator",
    "esnext.promise",
];

impl Policy {
    /// The TypeScript declarations of what a script may use under this policy, as one `.d.ts`
    /// (`palisade types`, `GET /v1/policies/{name}/types`): a script type-checked against it
    /// (`tsc --noEmit --strict --target es2023 --module esnext sandbox.d.ts script.ts`)
    /// compiles when it uses only what the policy grants. See docs/agents.md.
    pub fn typescript(&self) -> String {
        let mut out = String::with_capacity(WEB.len() + 4096);
        header(&mut out, self);
        out.push_str(WEB);
        out.push_str(&self.typescript_grants());
        out
    }

    /// The part of [`Policy::typescript`] that depends on the policy: `Sandbox.Main`, `fetch`
    /// and what the policy grants, without the ECMAScript and web globals every script has
    /// (what an MCP tool's description carries).
    pub fn typescript_grants(&self) -> String {
        let mut out = String::with_capacity(4096);
        main(&mut out);
        fetch(&mut out, self.http().map(|h| &**h));
        if let Some(capabilities) = self.capabilities() {
            bridge(&mut out, capabilities);
        }
        if let Some(kv) = self.kv() {
            key_value(&mut out, kv);
        }
        if let Some(fs) = self.fs().filter(|_| self.grants_files()) {
            files(&mut out, fs);
        }
        if let Some(config) = self.config() {
            config_keys(&mut out, config.keys(), &self.overrides.config);
        }
        out
    }
}

fn header(out: &mut String, policy: &Policy) {
    let limits = policy.limits();
    let _ = writeln!(
        out,
        "// What a script may use under the Palisade policy `{}` (sha256 {}).\n\
         // Check a script against it: tsc --noEmit --strict --target es2023 --module esnext sandbox.d.ts script.ts\n\
         // Limits: timeout {}, memory {}, fuel {}, output {}.",
        comment(policy.name()),
        policy.sha256(),
        limits.timeout,
        limits.memory,
        limits.fuel,
        limits.output,
    );
    if let Some(description) = policy.description() {
        let _ = writeln!(out, "// {}", comment(description));
    }
    let determinism = policy.determinism();
    if let Clock::Fixed(at) = determinism.clock {
        let at = humantime::format_rfc3339(std::time::UNIX_EPOCH + at);
        let _ = writeln!(out, "// Date.now() and new Date() always read {at}.");
    }
    if let Some(seed) = determinism.seed {
        let _ = writeln!(
            out,
            "// Math.random() and crypto.getRandomValues() follow the seed {seed}."
        );
    }
    out.push_str("/// <reference no-default-lib=\"true\"/>\n");
    for lib in ES_LIBS {
        let _ = writeln!(out, "/// <reference lib=\"{lib}\" />");
    }
    out.push('\n');
}

fn main(out: &mut String) {
    out.push_str(
        "\n// ---- The script ----\n\n\
         declare namespace Sandbox {\n  \
           /** A JSON value: what a call's input is, and what its output becomes. */\n  \
           type Json = null | boolean | number | string | Json[] | { [key: string]: Json };\n  \
           /** The default export: called with the call's JSON input; what it returns (or\n   \
            * resolves to) is the call's output, as JSON. Write\n   \
            * `export default (async (input) => { … }) satisfies Sandbox.Main;` */\n  \
           type Main<I = Json> = (input: I) => unknown;\n\
         }\n",
    );
}

fn fetch(out: &mut String, http: Option<&Http>) {
    out.push_str("\n// ---- fetch ----\n\n");
    let Some(http) = http else {
        out.push_str(
            "/** No `[http]` table: only `data:` URLs, which reach no network; every other\n \
             * request is refused (`PolicyDeniedError`, rule `http`). */\n\
             declare function fetch(input: `data:${string}`, init?: RequestInit): Promise<Response>;\n",
        );
        return;
    };
    let _ = writeln!(
        out,
        "// Per call: {} requests, {} of request bodies, {} of response bodies; {} per request.",
        http.max_requests, http.max_request_body, http.max_response_body, http.timeout
    );
    for rule in &http.allow {
        let methods = rule.methods.join("\" | \"");
        let optional = if rule.methods.iter().any(|m| m == "GET") {
            "?"
        } else {
            ""
        };
        let init = if optional.is_empty() { "init" } else { "init?" };
        let _ = writeln!(
            out,
            "/** Allowed by `http.allow`: {} ({}). */\n\
             declare function fetch(input: `{}`, {init}: RequestInit & {{ method{optional}: \"{methods}\" }}): Promise<Response>;",
            comment(&rule.url),
            rule.methods.join(", "),
            url_pattern(rule),
        );
    }
    out.push_str(
        "/** `data:` URLs need no rule and reach no network. */\n\
         declare function fetch(input: `data:${string}`, init?: RequestInit): Promise<Response>;\n\
         /** A `URL` or `Request` is checked against `http.allow` when the call runs. */\n\
         declare function fetch(input: URL | Request, init?: RequestInit): Promise<Response>;\n",
    );
}

/// The URLs a rule matches, as a template literal type.
fn url_pattern(rule: &super::HttpRule) -> String {
    let host = match &rule.host {
        super::HostPattern::Exact(host) => host.clone(),
        super::HostPattern::Subdomains(suffix) => format!("${{string}}.{suffix}"),
        super::HostPattern::Any => "${string}".to_owned(),
    };
    let default_port = if rule.scheme == "https" { 443 } else { 80 };
    let port = if rule.port == default_port {
        String::new()
    } else {
        format!(":{}", rule.port)
    };
    let path = template_text(&rule.path);
    format!("{}://{host}{port}{path}${{string}}", rule.scheme)
}

fn bridge(out: &mut String, capabilities: &Capabilities) {
    let _ = writeln!(
        out,
        "\n// ---- The capability bridge ----\n\n\
         /** Host capabilities: every call is checked by the policy before the host runs it,\n \
         * and a refusal is a `PolicyDeniedError`; a handler's failure is a `CapabilityError`. */\n\
         declare var {}: {{",
        capabilities.global
    );
    for (name, rule) in &capabilities.allow {
        let (params, what) = match &rule.schema {
            Some(schema) => (parameters(schema.source()), "checked against its schema"),
            None => ("...args: unknown[]".to_owned(), "no schema"),
        };
        let _ = writeln!(
            out,
            "  /** `capabilities.allow.{}`: at most {} call{} per run, payloads up to {}; {what}. */\n  \
             {}({params}): Promise<unknown>;",
            comment(name),
            rule.max_calls,
            if rule.max_calls == 1 { "" } else { "s" },
            rule.max_payload,
            key(name),
        );
    }
    out.push_str("};\n");
}

/// A capability's parameters: one payload, or, for a schema of a list of two or more items
/// (`prefixItems`), those items as arguments, since a call with several arguments sends their
/// list (`maia.render(id, view, style)`).
fn parameters(schema: &serde_json::Value) -> String {
    let spread = schema
        .get("prefixItems")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|items| items.len() >= 2);
    let ty = schema::type_of(schema);
    if spread && ty.starts_with('[') {
        format!("...args: {ty}")
    } else {
        format!("payload: {ty}")
    }
}

fn key_value(out: &mut String, kv: &Kv) {
    let _ = writeln!(
        out,
        "\n// ---- kv ----\n\n\
         /** A bucket that may only be read. */\n\
         interface KvReader {{\n  \
           get(key: string): Promise<string | null>;\n  \
           getJSON(key: string): Promise<any>;\n  \
           getBytes(key: string): Promise<Uint8Array | null>;\n  \
           has(key: string): Promise<boolean>;\n  \
           /** Keys in byte order; pass `cursor` to continue. */\n  \
           list(options?: {{ prefix?: string; limit?: number; cursor?: string | null }}): Promise<{{ keys: string[]; cursor: string | null }}>;\n\
         }}\n\
         /** A bucket that may be written: keys up to {}, values up to {}, {} keys in all. */\n\
         interface KvWriter extends KvReader {{\n  \
           /** A value that is not a string or bytes is stored as its JSON. */\n  \
           set(key: string, value: unknown): Promise<void>;\n  \
           delete(key: string): Promise<void>;\n  \
           /** The new value of the counter at `key` (a missing key starts at 0). */\n  \
           increment(key: string, delta?: number): Promise<number>;\n  \
           /** Store `next` only while the value is `expected` (`null`: only while missing). */\n  \
           compareAndSwap(key: string, expected: unknown, next: unknown): Promise<boolean>;\n\
         }}",
        kv.max_key, kv.max_value, kv.max_keys
    );
    let reader = |mode: BucketMode| match mode {
        BucketMode::Ro => "KvReader",
        BucketMode::Rw => "KvWriter",
    };
    out.push_str("declare var kv: ");
    let default = kv.buckets.get(&kv.default_bucket).copied();
    out.push_str(reader(default.unwrap_or(BucketMode::Ro)));
    out.push_str(" & {\n");
    for (name, mode) in &kv.buckets {
        let _ = writeln!(
            out,
            "  /** `kv.buckets.{}`. */\n  bucket(name: {}): {};",
            comment(name),
            serde_json::Value::String(name.clone()),
            reader(*mode)
        );
    }
    out.push_str("};\n");
}

fn files(out: &mut String, fs: &Fs) {
    let mut readable = Vec::new();
    let mut writable = Vec::new();
    out.push_str("\n// ---- fs ----\n\n");
    for mount in &fs.mount {
        let _ = writeln!(
            out,
            "// {} is mounted {}.",
            mount.guest,
            match mount.mode {
                MountMode::Ro => "read-only",
                MountMode::Rw => "read-write",
            }
        );
        readable.push(mount.guest.as_str());
        if mount.mode == MountMode::Rw {
            writable.push(mount.guest.as_str());
        }
    }
    if let Some(scratch) = &fs.scratch {
        let _ = writeln!(
            out,
            "// {} is a scratch directory for this call, up to {}.",
            scratch.guest, scratch.quota
        );
        readable.push(scratch.guest.as_str());
        writable.push(scratch.guest.as_str());
    }
    let _ = writeln!(out, "type ReadablePath = {};", paths(&readable));
    let _ = writeln!(out, "type WritablePath = {};", paths(&writable));
    out.push_str(
        "/** Failures are errors with a Node-style `code` (`ENOENT`, `EACCES`, `ENOSPC`, …). */\n\
         declare var fs: {\n  \
           readFile(path: ReadablePath): Promise<string>;\n  \
           readdir(path: ReadablePath): Promise<string[]>;\n  \
           stat(path: ReadablePath): Promise<{ size: number; isFile: boolean; isDirectory: boolean }>;\n  \
           writeFile(path: WritablePath, data: string | Uint8Array): Promise<void>;\n  \
           mkdir(path: WritablePath, options?: { recursive?: boolean }): Promise<void>;\n  \
           rm(path: WritablePath, options?: { recursive?: boolean }): Promise<void>;\n\
         };\n",
    );
}

/// `text` inside a template literal type, meaning itself: `\`, `` ` `` and `${` escaped.
fn template_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('`', "\\`")
        .replace("${", "\\${")
}

/// A directory and every path below it, as a type; `never` for none.
fn paths(dirs: &[&str]) -> String {
    if dirs.is_empty() {
        return "never".to_owned();
    }
    dirs.iter()
        .map(|d| {
            let d = template_text(d);
            format!("`{d}` | `{d}/${{string}}`")
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

fn config_keys<'a>(
    out: &mut String,
    keys: impl Iterator<Item = &'a String>,
    overridable: &std::collections::BTreeSet<String>,
) {
    let keys: Vec<&String> = keys.collect();
    let literal = |k: &String| serde_json::Value::String(k.clone()).to_string();
    let set: Vec<String> = keys.iter().map(|k| literal(k)).collect();
    let only_per_call: Vec<String> = overridable
        .iter()
        .filter(|k| !keys.contains(k))
        .map(literal)
        .collect();
    let mut all = set.clone();
    all.extend(only_per_call.iter().cloned());
    let _ = writeln!(
        out,
        "\n// ---- config ----\n\n\
         declare var config: {{\n  \
           /** A `[config]` value. */\n  \
           get(key: {}): string;",
        if set.is_empty() {
            "never".to_owned()
        } else {
            set.join(" | ")
        }
    );
    if !only_per_call.is_empty() {
        let _ = writeln!(
            out,
            "  /** Set only by a call's options (`overrides.config`); `null` when not. */\n  \
             get(key: {}): string | null;",
            only_per_call.join(" | ")
        );
    }
    let _ = writeln!(
        out,
        "  getAll(): {{ {} }};\n}};",
        all.iter()
            .map(|k| format!("{k}?: string"))
            .collect::<Vec<_>>()
            .join("; ")
    );
}

#[cfg(test)]
mod tests {
    use super::{WEB, WEB_GLOBALS, template_text};

    /// A path or URL prefix in a template literal type means itself, whatever it holds.
    #[test]
    fn template_text_escapes_what_a_template_would_read() {
        assert_eq!(template_text("/a`b${c}\\d"), "/a\\`b\\${c}\\\\d");
        assert_eq!(template_text("/plain/"), "/plain/");
    }

    /// `WEB_GLOBALS` is exactly what `web.d.ts` declares at the top level.
    #[test]
    fn web_globals_list_what_web_declares() {
        let mut declared: Vec<&str> = WEB
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("declare ")?;
                let rest = ["class ", "var ", "function "]
                    .iter()
                    .find_map(|k| rest.strip_prefix(k))?;
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
            })
            .collect();
        declared.sort_unstable();
        declared.dedup();
        let mut listed = WEB_GLOBALS.to_vec();
        listed.sort_unstable();
        assert_eq!(declared, listed);
    }
}

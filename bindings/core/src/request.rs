//! One call as a binding's caller wrote it ([`Request`], JSON), checked and resolved into what
//! [`palisade::Palisade::run_with`] takes ([`Prepared`]). The caller's own mistakes (an unknown
//! option, a value of the wrong type, two scripts) are [`Refused::Usage`], which the bindings
//! throw; a policy, script or option the library refuses is [`Refused::Call`], which comes back
//! as a failed Outcome with the library's code (`invalid_policy`, `invalid_input`,
//! `invalid_component`).

use palisade::policy::{ByteSize, HumanDuration};
use palisade::{Error, Policy, RunOptions, Script};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The module name of a script given as `source` without a `name`.
const DEFAULT_NAME: &str = "main.js";

/// One call: the policy, the script, the input and the per-call options. Every key is
/// optional but the script; an unknown key is refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// A policy file's path, TOML text, or the policy as a table (`Policy::from_json`); the
    /// built-in default when absent.
    pub policy: Option<PolicySpec>,
    /// The script's source (an ES module).
    pub source: Option<String>,
    /// A script file: an ES module, TypeScript (`.ts`), or a compiled component (`.wasm`).
    pub file: Option<PathBuf>,
    /// The module name of `source`, in stack traces and error locations.
    pub name: Option<String>,
    /// The input, passed to the export as its one argument; `null` when absent.
    pub input: Option<Box<RawValue>>,
    /// The export's arguments, one each (instead of `input`).
    pub args: Option<Box<RawValue>>,
    /// The export, or method of the default export, to call.
    pub export: Option<String>,
    /// A shorter deadline than the policy's (`"500ms"`), or longer up to `overrides.timeout`.
    pub timeout: Option<HumanDuration>,
    /// Less fuel than the policy's `limits.fuel`, or more up to `overrides.fuel`.
    pub fuel: Option<u64>,
    /// Less memory than the policy's (`"32MiB"`), or more up to `overrides.memory`.
    pub memory: Option<ByteSize>,
    /// Handed to capability handlers (their context's `metadata`).
    pub metadata: Option<serde_json::Value>,
    /// The instant the script's clock reads, RFC 3339 (`overrides.now`).
    pub now: Option<String>,
    /// The seed of `Math.random` (`overrides.seed`).
    pub seed: Option<u64>,
    /// `[config]` values for this call (keys in `overrides.config`).
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// Files for the scratch directory, by name.
    #[serde(default)]
    pub files: BTreeMap<String, FileContents>,
}

/// How a caller gives a policy.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum PolicySpec {
    /// TOML text when it holds a line break or `=` or starts with `[`, else a file's path.
    Text(String),
    /// The policy's tables as JSON (`Policy::from_json`).
    Table(serde_json::Map<String, serde_json::Value>),
}

/// A scratch file's contents: text (UTF-8) or bytes (`{"base64": "…"}`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum FileContents {
    /// Text, stored as its UTF-8 bytes.
    Text(String),
    /// Bytes, base64-encoded by the binding.
    Bytes {
        /// The standard base64 encoding of the bytes.
        base64: String,
    },
}

/// Why a request did not become a call.
#[derive(Debug)]
pub enum Refused {
    /// The caller's own mistake: the binding throws it (a `TypeError`).
    Usage(String),
    /// The library refused the policy, the script or an option: a failed Outcome with this
    /// error, under the policy when it was read.
    Call(Box<Error>, Option<Box<Policy>>),
}

impl Refused {
    /// The library refused `error`, under `policy` when it was read.
    pub fn call(error: Error, policy: Option<&Policy>) -> Refused {
        Refused::Call(Box::new(error), policy.map(|p| Box::new(p.clone())))
    }
}

/// What a call runs with.
#[derive(Debug)]
pub struct Prepared {
    /// The policy the call runs under (shared with the binding's `Policy` object, when it gave
    /// one: a call does not copy it).
    pub policy: Arc<Policy>,
    /// The script.
    pub script: Script,
    /// The input as JSON text (a JSON array of the arguments with `spread_args`).
    pub input: String,
    /// The per-call options.
    pub options: RunOptions,
}

impl Request {
    /// Read a request from its JSON text.
    pub fn parse(text: &str) -> Result<Request, Refused> {
        serde_json::from_str(text).map_err(|e| {
            // What JavaScript's `JSON.stringify` and Python's `json.dumps` write for a string
            // that is not well-formed Unicode, which cannot be UTF-8 (the input alone is
            // passed through as it is).
            let said = e.to_string();
            let surrogate = ["lone leading surrogate", "unexpected end of hex escape"]
                .iter()
                .any(|lone| said.starts_with(lone));
            Refused::Usage(match surrogate {
                true => format!(
                    "run(): a string of the request holds a lone UTF-16 surrogate (\\uD800 to \\uDFFF \
                     without its pair), which is not text ({e}); replace it first \
                     (JavaScript: `s.toWellFormed()`; Python: \
                     `s.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace')`)"
                ),
                false => format!("run(): {e}"),
            })
        })
    }

    /// Resolve the request, with a policy and a script the binding already holds as objects
    /// (`Policy`, `Script` handles) in place of `policy` and `source`/`file`, and the input's
    /// JSON text when the binding gives it apart from the request ([`crate::Start::input`]).
    pub fn prepare(
        self,
        policy: Option<Arc<Policy>>,
        script: Option<Script>,
        input: Option<String>,
    ) -> Result<Prepared, Refused> {
        let policy = match (policy, self.policy.as_ref()) {
            (Some(_), Some(_)) => return usage("give the policy once"),
            (Some(policy), None) => policy,
            (None, Some(spec)) => Arc::new(spec.read().map_err(|e| Refused::call(e, None))?),
            (None, None) => Arc::new(Policy::builtin_default()),
        };
        let script = match (script, &self.source, &self.file) {
            (Some(script), None, None) => script,
            (None, Some(source), None) => {
                let name = self.name.as_deref().unwrap_or(DEFAULT_NAME);
                Script::new(name, source.as_str())
            }
            (None, None, Some(path)) => {
                read_script(path).map_err(|e| Refused::call(e, Some(&policy)))?
            }
            (None, None, None) => return usage("give the script: `source`, `file` or `script`"),
            _ => return usage("give one script: `source`, `file` or `script`, not two"),
        };
        if self.name.is_some() && self.source.is_none() {
            return usage("`name` names a `source` script");
        }
        let options = self
            .options()
            .map_err(|e| Refused::call(e, Some(&policy)))?;
        let input = match (input, self.input, self.args) {
            (Some(_), Some(_), _) => return usage("give the input once"),
            (Some(_), _, Some(_)) | (None, Some(_), Some(_)) => {
                return usage("give `input` or `args`, not both");
            }
            (Some(input), None, None) => input,
            (None, Some(input), None) => input.get().to_owned(),
            (None, None, Some(args)) => args.get().to_owned(),
            (None, None, None) => "null".to_owned(),
        };
        Ok(Prepared {
            policy,
            script,
            input,
            options,
        })
    }

    /// The per-call options; a clock instant that is not RFC 3339 or scratch bytes that are
    /// not base64 are `invalid_input`.
    fn options(&self) -> Result<RunOptions, Error> {
        let mut options = RunOptions::default();
        if let Some(export) = &self.export {
            options = options.export(export.as_str());
        }
        if self.args.is_some() {
            options = options.spread_args();
        }
        options.timeout = self.timeout.map(|t| t.0);
        options.fuel = self.fuel;
        options.memory = self.memory;
        if let Some(metadata) = &self.metadata {
            options = options.metadata(metadata.clone());
        }
        if let Some(text) = &self.now {
            let at = humantime::parse_rfc3339_weak(text).map_err(|e| {
                invalid(format!(
                    "now {text:?}: {e}; write an RFC 3339 UTC time such as 2024-01-01T00:00:00Z"
                ))
            })?;
            options = options.now(at);
        }
        options.seed = self.seed;
        options.config = self.config.clone();
        for (name, contents) in &self.files {
            let bytes = match contents {
                FileContents::Text(text) => bytes::Bytes::from(text.clone()),
                FileContents::Bytes { base64 } => {
                    use base64::Engine as _;
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(base64)
                        .map_err(|e| invalid(format!("files[{name:?}] is not base64: {e}")))?;
                    bytes::Bytes::from(decoded)
                }
            };
            options = options.file(name.as_str(), bytes);
        }
        Ok(options)
    }
}

impl PolicySpec {
    /// The policy this names or holds; one the library refuses is `invalid_policy`.
    fn read(&self) -> Result<Policy, Error> {
        let policy = match self {
            PolicySpec::Text(text) if is_toml(text) => Policy::from_toml(text, None),
            PolicySpec::Text(path) => Policy::from_file(path),
            PolicySpec::Table(table) => {
                let text = serde_json::Value::Object(table.clone()).to_string();
                Policy::from_json(&text, None)
            }
        };
        policy.map_err(Error::InvalidPolicy)
    }
}

/// A policy from its spec's JSON text (a path, TOML text, or a table), as a binding's `Policy`
/// object reads it: a spec of the wrong type is [`Refused::Usage`], a policy the library
/// refuses is `invalid_policy`.
pub fn read_policy(spec: &str) -> Result<Policy, Refused> {
    let spec: PolicySpec = serde_json::from_str(spec).map_err(|_| {
        Refused::Usage("a policy is a file's path, TOML text or an object".to_owned())
    })?;
    spec.read().map_err(|e| Refused::call(e, None))
}

/// Whether a policy given as a string is TOML text rather than a file's path.
pub(crate) fn is_toml(text: &str) -> bool {
    text.contains(['\n', '=']) || text.trim_start().starts_with('[')
}

/// A script file as `palisade run FILE` reads it: an ES module, TypeScript or a compiled
/// component, told apart by name and bytes; one that cannot be read is `invalid_input`.
pub fn read_script(path: &Path) -> Result<Script, Error> {
    let bytes = Script::read_file_bytes(path)
        .map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
    Script::from_file_bytes(path, bytes)?.map_err(|e| {
        invalid(format!(
            "cannot read {}: not valid UTF-8 text ({e})",
            path.display()
        ))
    })
}

fn invalid(detail: String) -> Error {
    Error::InvalidInput { detail, fix: None }
}

fn usage<T>(message: &str) -> Result<T, Refused> {
    Err(Refused::Usage(format!("run(): {message}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_with_no_keys_is_the_default_one() {
        // `Start::request` is None for a request with no keys of its own, read as the default.
        let parsed = Request::parse("{}").unwrap();
        assert_eq!(format!("{parsed:?}"), format!("{:?}", Request::default()));
    }

    fn prepare(text: &str) -> Result<Prepared, Refused> {
        Request::parse(text)?.prepare(None, None, None)
    }

    fn usage_message(text: &str) -> String {
        match prepare(text) {
            Err(Refused::Usage(message)) => message,
            other => panic!("{text}: expected a usage error, got {other:?}"),
        }
    }

    fn call_code(text: &str) -> &'static str {
        match prepare(text) {
            Err(Refused::Call(error, _)) => error.code(),
            other => panic!("{text}: expected a refused call, got {other:?}"),
        }
    }

    /// A lone surrogate escaped in a string (as `JSON.stringify` and `json.dumps` write one)
    /// is refused saying so, wherever it is; in the input it is passed through.
    #[test]
    fn a_lone_surrogate_in_a_string_is_refused_saying_so() {
        for text in [
            r#"{"source": "export default () => '\ud800'"}"#,
            r#"{"source": "export default () => '\udc00'"}"#,
            r#"{"source": "x", "name": "\ud83d.js"}"#,
        ] {
            let message = usage_message(text);
            assert!(
                message.contains("lone UTF-16 surrogate"),
                "{text}: {message}"
            );
        }
        let input = r#"{"source": "export default (x) => x", "input": "\ud800"}"#;
        assert_eq!(prepare(input).unwrap().input, r#""\ud800""#);
        // A pair is text.
        assert!(prepare(r#"{"source": "export default () => '\ud83d\ude00'"}"#).is_ok());
    }

    #[test]
    fn the_smallest_request_runs_under_the_default_policy_with_null_input() {
        let prepared = prepare(r#"{"source": "export default () => 1"}"#).unwrap();
        assert_eq!(prepared.input, "null");
        assert_eq!(prepared.script.name(), DEFAULT_NAME);
        assert_eq!(prepared.policy.sha256(), Policy::builtin_default().sha256());
    }

    #[test]
    fn input_and_args_keep_their_json_text() {
        let prepared = prepare(r#"{"source": "x", "input": {"n": [1, 2]}}"#).unwrap();
        assert_eq!(prepared.input, r#"{"n": [1, 2]}"#);
        let prepared = prepare(r#"{"source": "x", "args": [1, "a"]}"#).unwrap();
        assert_eq!(prepared.input, r#"[1, "a"]"#);
        assert!(prepared.options.spread_args);
    }

    /// An input given apart from the request reaches the call as it is (the sandbox reads it,
    /// and refuses text that is not JSON as `invalid_input`); given twice, or beside `args`, it
    /// is the caller's mistake.
    #[test]
    fn an_input_given_apart_is_passed_as_it_is_and_only_once() {
        let apart = |text: &str, input: &str| {
            Request::parse(text)?.prepare(None, None, Some(input.to_owned()))
        };
        let prepared = apart(r#"{"source": "x"}"#, r#"{"n": [1, 2]}"#).unwrap();
        assert_eq!(prepared.input, r#"{"n": [1, 2]}"#);
        assert!(!prepared.options.spread_args);
        assert_eq!(apart(r#"{"source": "x"}"#, "{").unwrap().input, "{");
        for (text, said) in [
            (
                r#"{"source": "x", "input": 1}"#,
                "run(): give the input once",
            ),
            (
                r#"{"source": "x", "args": [1]}"#,
                "run(): give `input` or `args`, not both",
            ),
        ] {
            match apart(text, "2") {
                Err(Refused::Usage(message)) => assert_eq!(message, said),
                other => panic!("{text}: expected a usage error, got {other:?}"),
            }
        }
    }

    #[test]
    fn the_callers_mistakes_are_usage_errors() {
        assert!(usage_message(r#"{"source": "x", "sauce": 1}"#).contains("unknown field"));
        assert!(usage_message(r#"{"input": 1}"#).contains("give the script"));
        assert!(usage_message(r#"{"source": "x", "file": "a.js"}"#).contains("not two"));
        assert!(usage_message(r#"{"source": "x", "input": 1, "args": []}"#).contains("not both"));
        assert!(usage_message(r#"{"source": "x", "timeout": 5}"#).contains("unit"));
    }

    #[test]
    fn what_the_library_refuses_comes_back_with_its_code() {
        assert_eq!(
            call_code(r#"{"source": "x", "policy": "[limits]\nfuel = -1"}"#),
            "invalid_policy"
        );
        assert_eq!(
            call_code(r#"{"source": "x", "policy": "/nonexistent/p.toml"}"#),
            "invalid_policy"
        );
        assert_eq!(
            call_code(r#"{"source": "x", "policy": {"limits": {"fuel": "x"}}}"#),
            "invalid_policy"
        );
        assert_eq!(
            call_code(r#"{"file": "/nonexistent/s.js"}"#),
            "invalid_input"
        );
        assert_eq!(
            call_code(r#"{"source": "x", "now": "yesterday"}"#),
            "invalid_input"
        );
        assert_eq!(
            call_code(r#"{"source": "x", "files": {"a": {"base64": "!"}}}"#),
            "invalid_input"
        );
    }

    #[test]
    fn a_policy_string_is_toml_when_it_looks_like_toml() {
        assert!(is_toml("name = \"p\""));
        assert!(is_toml("[limits]"));
        assert!(is_toml("# a comment\n"));
        assert!(!is_toml("policies/default.toml"));
        let prepared = prepare(r#"{"source": "x", "policy": {"name": "table"}}"#).unwrap();
        assert_eq!(prepared.policy.name(), "table");
    }
}

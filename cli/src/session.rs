//! `palisade session …`: a running `palisade serve`'s sessions from the terminal — create,
//! list, run a script, work on the session's files, stop (docs/server.md, "From the terminal").
//! Each command is one request; the answer is printed readably, or as the server's JSON with
//! `--json`; a refusal exits with its code's exit code, as `palisade run` does, and a `fix`
//! the server offers is shown as the command to type next.

pub mod client;
mod print;

use clap::{Args, Subcommand};
use client::Server;
use hyper::http::Method;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The server when neither `--server` nor `$PALISADE_SERVER` names one.
const DEFAULT_SERVER: &str = "http://127.0.0.1:8787";

#[derive(Debug, Args)]
pub struct SessionArgs {
    /// The server's URL (else $PALISADE_SERVER, else http://127.0.0.1:8787).
    #[arg(long, global = true, value_name = "URL")]
    server: Option<String>,
    /// A file that holds the API key (else $PALISADE_KEY; none for a loopback server without
    /// keys).
    #[arg(long, global = true, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Print the server's JSON answer as it is.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: SessionCommand,
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// Create a session under a policy of the server's catalog, or one sent from a file
    /// (admitted within the ceiling set for your key); prints its id.
    Create {
        /// The policy's name in the server's catalog.
        #[arg(
            long,
            required_unless_present = "policy_file",
            conflicts_with = "policy_file"
        )]
        policy: Option<String>,
        /// A policy to send with the request: a TOML file, or a JSON one (by its `.json`
        /// extension, or text that starts with `{`); `-` reads standard input. The server
        /// admits it within your key's ceiling and names it by the SHA-256 of its text (a JSON
        /// object's, without the whitespace around it).
        #[arg(long, value_name = "FILE")]
        policy_file: Option<PathBuf>,
        /// A name to find it by.
        #[arg(long)]
        name: Option<String>,
        /// Stop it after this long unused, such as `10m`.
        #[arg(long)]
        idle_timeout: Option<String>,
        /// A `config` value for its scripts (`config.get(KEY)`); repeat for more.
        #[arg(long = "config", value_name = "KEY=VALUE")]
        config: Vec<String>,
        /// Keep its JavaScript heap between runs (docs/sessions.md): each run is a script whose
        /// top-level declarations stay defined for the next.
        #[arg(long)]
        live: bool,
    },
    /// List your live sessions.
    Ls,
    /// Run a script (a file, or `-` for standard input) in a session.
    Run {
        id: String,
        script: PathBuf,
        /// The script's input, as JSON.
        #[arg(long)]
        input: Option<String>,
        /// A deadline for this run, such as `2s` (within the policy's ceilings).
        #[arg(long)]
        timeout: Option<String>,
    },
    /// Work on a session's files (its directory, `/scratch` to its scripts).
    #[command(subcommand)]
    Fs(FsCommand),
    /// Stop a session: its files and key-value data go with it.
    Stop { id: String },
}

#[derive(Debug, Subcommand)]
enum FsCommand {
    /// List a directory.
    Ls {
        id: String,
        #[arg(default_value = ".")]
        path: String,
    },
    /// Print a file.
    Read { id: String, path: String },
    /// Write a file whole from a local file, or `-` for standard input.
    Write {
        id: String,
        path: String,
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        /// Create missing parent directories.
        #[arg(long)]
        parents: bool,
    },
    /// Make a directory.
    Mkdir {
        id: String,
        path: String,
        /// Create missing parents; an existing directory is no error.
        #[arg(long)]
        parents: bool,
    },
    /// Remove a file or directory.
    Rm {
        id: String,
        path: String,
        /// Remove a directory with what it holds.
        #[arg(long)]
        recursive: bool,
    },
    /// Move or rename.
    Mv {
        id: String,
        src: String,
        dst: String,
        /// Replace what is at the destination.
        #[arg(long)]
        overwrite: bool,
    },
    /// Search files for a regular expression.
    Grep {
        id: String,
        path: String,
        pattern: String,
        #[arg(long)]
        ignore_case: bool,
    },
}

/// One request, and how to write it back as a command line (for a refusal's `fix`).
pub(crate) struct Call {
    /// What the answer is printed as.
    pub kind: Kind,
    pub method: Method,
    pub path: String,
    pub body: Option<Map<String, Value>>,
    /// The command line's words before its options: `session fs mv ID`.
    pub words: Vec<String>,
    /// The body's fields that are positional arguments, in order.
    pub positional: &'static [&'static str],
    /// Options the body does not carry (`--from FILE`, `--policy-file FILE`).
    pub extra: Vec<String>,
    /// A JSON policy from `--policy-file`, sent as the body's `policy` with its bytes as they
    /// are (the server names it by their SHA-256).
    pub raw_policy: Option<Box<serde_json::value::RawValue>>,
}

impl Call {
    /// The request body's text: `body`, with `raw_policy` as its `policy` (first).
    fn body_text(&self) -> String {
        let Some(body) = &self.body else {
            return String::new();
        };
        let rest = Value::Object(body.clone()).to_string();
        match &self.raw_policy {
            None => rest,
            Some(policy) if body.is_empty() => format!("{{\"policy\":{}}}", policy.get()),
            Some(policy) => format!("{{\"policy\":{},{}", policy.get(), &rest[1..]),
        }
    }
}

/// What a command prints on success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Created,
    Sessions,
    Run,
    Entries,
    Read,
    Grep,
    Done,
}

pub fn run(args: SessionArgs) -> ExitCode {
    let server = match connect(&args) {
        Ok(server) => server,
        Err(message) => return super::run::usage_error(message),
    };
    let call = match call_of(args.command) {
        Ok(call) => call,
        Err(message) => return super::run::usage_error(message),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    let sent = runtime.block_on(server.send(call.method.clone(), &call.path, call.body_text()));
    match sent {
        Ok(answer) => print::answer(&call, &answer, args.json),
        Err(message) => {
            eprintln!("palisade: {message}");
            ExitCode::from(palisade::ErrorCode::CapacityExhausted.exit_code() as u8)
        }
    }
}

/// The server and key the flags and environment name.
fn connect(args: &SessionArgs) -> Result<Server, String> {
    let url = args
        .server
        .clone()
        .or_else(|| {
            std::env::var("PALISADE_SERVER")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_SERVER.to_owned());
    let key = match &args.key_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the key file {}: {e}", path.display()))?
                .trim()
                .to_owned(),
        ),
        None => std::env::var("PALISADE_KEY").ok().filter(|k| !k.is_empty()),
    };
    Server::new(&url, key)
}

fn call_of(command: SessionCommand) -> Result<Call, String> {
    let session = |id: &str| format!("/v1/sessions/{id}");
    Ok(match command {
        SessionCommand::Create {
            policy,
            policy_file,
            name,
            idle_timeout,
            config,
            live,
        } => {
            let policy = match (policy, policy_file) {
                (Some(name), _) => SessionPolicy::Named(name),
                (None, Some(path)) => policy_from_file(&path)?,
                (None, None) => return Err("give --policy NAME or --policy-file FILE".into()),
            };
            let mut call = create(policy, name, idle_timeout, &config)?;
            if live && let Some(body) = call.body.as_mut() {
                body.insert("live".into(), true.into());
            }
            call
        }
        SessionCommand::Ls => {
            Call::new(Kind::Sessions, Method::GET, "/v1/sessions", None).words(&["ls"])
        }
        SessionCommand::Run {
            id,
            script,
            input,
            timeout,
        } => run_call(&id, &script, input, timeout)?,
        SessionCommand::Fs(command) => fs_call(command)?,
        SessionCommand::Stop { id } => {
            Call::new(Kind::Done, Method::DELETE, &session(&id), None).words(&["stop", &id])
        }
    })
}

/// The policy of `session create`.
enum SessionPolicy {
    /// `--policy NAME`.
    Named(String),
    /// `--policy-file F` holding TOML, sent as `policy_toml`.
    Toml { file: String, text: String },
    /// `--policy-file F` holding a JSON object, sent as `policy` with its bytes as they are.
    Json {
        file: String,
        text: Box<serde_json::value::RawValue>,
    },
}

/// The policy in `path` (`-`: standard input): JSON when the file's name ends in `.json` or its
/// text starts with `{`, else TOML (which the server checks, with the line of a mistake).
fn policy_from_file(path: &Path) -> Result<SessionPolicy, String> {
    let (_, bytes) = read_local(path)?;
    let file = path.display().to_string();
    let text = String::from_utf8(bytes).map_err(|_| format!("{file}: a policy is UTF-8 text"))?;
    let json = path.extension().is_some_and(|e| e == "json") || text.trim_start().starts_with('{');
    if !json {
        return Ok(SessionPolicy::Toml { file, text });
    }
    let text = text.trim().to_owned();
    if !text.starts_with('{') {
        return Err(format!("{file}: a JSON policy is an object (`{{...}}`)"));
    }
    let text = serde_json::value::RawValue::from_string(text)
        .map_err(|e| format!("{file} is not JSON: {e}"))?;
    Ok(SessionPolicy::Json { file, text })
}

fn create(
    policy: SessionPolicy,
    name: Option<String>,
    idle_timeout: Option<String>,
    config: &[String],
) -> Result<Call, String> {
    let mut body = Map::new();
    let (mut raw_policy, mut extra) = (None, Vec::new());
    match policy {
        SessionPolicy::Named(name) => {
            body.insert("policy".into(), name.into());
        }
        SessionPolicy::Toml { file, text } => {
            body.insert("policy_toml".into(), text.into());
            extra = vec!["--policy-file".to_owned(), file];
        }
        SessionPolicy::Json { file, text } => {
            raw_policy = Some(text);
            extra = vec!["--policy-file".to_owned(), file];
        }
    }
    if let Some(name) = name {
        body.insert("name".into(), name.into());
    }
    if let Some(idle) = idle_timeout {
        body.insert("idle_timeout".into(), idle.into());
    }
    if !config.is_empty() {
        let mut values = Map::new();
        for pair in config {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("--config `{pair}`: write KEY=VALUE"))?;
            values.insert(key.to_owned(), value.into());
        }
        body.insert("config".into(), Value::Object(values));
    }
    let mut call =
        Call::new(Kind::Created, Method::POST, "/v1/sessions", Some(body)).words(&["create"]);
    call.raw_policy = raw_policy;
    call.extra = extra;
    Ok(call)
}

fn run_call(
    id: &str,
    script: &Path,
    input: Option<String>,
    timeout: Option<String>,
) -> Result<Call, String> {
    let (name, source) = read_local(script)?;
    let source =
        String::from_utf8(source).map_err(|_| format!("{name}: a script is UTF-8 text"))?;
    let mut body = Map::new();
    body.insert("script".into(), json!({ "name": name, "source": source }));
    if let Some(input) = input {
        let value: Value =
            serde_json::from_str(&input).map_err(|e| format!("--input is not JSON: {e}"))?;
        body.insert("input".into(), value);
    }
    if let Some(timeout) = timeout {
        body.insert("timeout".into(), timeout.into());
    }
    let path = format!("/v1/sessions/{id}/run");
    let mut call = Call::new(Kind::Run, Method::POST, &path, Some(body)).words(&["run", id]);
    call.extra = vec![script.display().to_string()];
    Ok(call)
}

fn fs_call(command: FsCommand) -> Result<Call, String> {
    let flag = |on: bool| on.then_some(Value::Bool(true));
    Ok(match command {
        FsCommand::Ls { id, path } => {
            fs_op("ls", &id, Kind::Entries, &[("path", Some(path.into()))])
        }
        FsCommand::Read { id, path } => {
            fs_op("read", &id, Kind::Read, &[("path", Some(path.into()))])
        }
        FsCommand::Write {
            id,
            path,
            from,
            parents,
        } => {
            let (_, bytes) = read_local(&from)?;
            let content = Some(base64_of(&bytes).into());
            let fields = [
                ("path", Some(path.into())),
                ("content_b64", content),
                ("parents", flag(parents)),
            ];
            let mut call = fs_op("write", &id, Kind::Done, &fields);
            call.extra = vec!["--from".into(), from.display().to_string()];
            call
        }
        FsCommand::Mkdir { id, path, parents } => fs_op(
            "mkdir",
            &id,
            Kind::Done,
            &[("path", Some(path.into())), ("parents", flag(parents))],
        ),
        FsCommand::Rm {
            id,
            path,
            recursive,
        } => fs_op(
            "rm",
            &id,
            Kind::Done,
            &[("path", Some(path.into())), ("recursive", flag(recursive))],
        ),
        FsCommand::Mv {
            id,
            src,
            dst,
            overwrite,
        } => fs_op(
            "mv",
            &id,
            Kind::Done,
            &[
                ("src", Some(src.into())),
                ("dst", Some(dst.into())),
                ("overwrite", flag(overwrite)),
            ],
        ),
        FsCommand::Grep {
            id,
            path,
            pattern,
            ignore_case,
        } => fs_op(
            "grep",
            &id,
            Kind::Grep,
            &[
                ("path", Some(path.into())),
                ("pattern", Some(pattern.into())),
                ("ignore_case", flag(ignore_case)),
            ],
        ),
    })
}

/// `POST /v1/sessions/ID/fs/OP` with the fields given a value; its string fields are the
/// command's positional arguments, in order (`content_b64` is read from `--from`).
fn fs_op(op: &'static str, id: &str, kind: Kind, fields: &[(&'static str, Option<Value>)]) -> Call {
    let body: Map<String, Value> = fields
        .iter()
        .filter_map(|(k, v)| Some(((*k).to_owned(), v.clone()?)))
        .collect();
    let positional = match op {
        "mv" => &["src", "dst"][..],
        "grep" => &["path", "pattern"][..],
        _ => &["path"][..],
    };
    let route = format!("/v1/sessions/{id}/fs/{op}");
    let mut call = Call::new(kind, Method::POST, &route, Some(body)).words(&["fs", op, id]);
    call.positional = positional;
    call
}

impl Call {
    fn new(kind: Kind, method: Method, path: &str, body: Option<Map<String, Value>>) -> Call {
        Call {
            kind,
            method,
            path: path.to_owned(),
            body,
            words: Vec::new(),
            positional: &[],
            extra: Vec::new(),
            raw_policy: None,
        }
    }

    fn words(mut self, words: &[&str]) -> Call {
        self.words = words.iter().map(|w| (*w).to_owned()).collect();
        self
    }
}

/// A local file's name and bytes, or standard input's for `-`.
fn read_local(path: &Path) -> Result<(String, Vec<u8>), String> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| format!("reading standard input: {e}"))?;
        return Ok(("stdin.js".to_owned(), bytes));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let name = path.file_name().map_or_else(
        || "script.js".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok((name, bytes))
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

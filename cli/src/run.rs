//! `palisade run FILE.js`.

use super::EXIT_USAGE;
use clap::Args;
use palisade::record::Transcript;
use palisade::{Error, Level, Outcome, Palisade, Policy, RunOptions, Script};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The script: an ES module whose default export is called with the input, or a `.wasm`
    /// component written by `palisade compile`; `-` reads the module from stdin (then the input
    /// comes only from `--input`, `--input-file` or `--args`).
    file: PathBuf,
    /// Call this export, or this method of the default export (`export default { execute() {} }`),
    /// instead of the default export.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["record", "replay"])]
    export: Option<String>,
    /// Pass the elements of this JSON array to the export as its arguments, one each
    /// (`--args '["a", 2]'` calls `f("a", 2)`), instead of one input.
    #[arg(long, value_name = "JSON", conflicts_with_all = ["input", "input_file", "record", "replay"])]
    args: Option<String>,
    /// A shorter deadline than the policy's `limits.timeout` (`200ms`, `2s`), or a longer one
    /// up to its `overrides.timeout`.
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["record", "replay"])]
    timeout: Option<palisade::policy::HumanDuration>,
    /// Less fuel than the policy's `limits.fuel`, or more up to its `overrides.fuel`.
    #[arg(long, value_name = "N", conflicts_with_all = ["record", "replay"])]
    fuel: Option<u64>,
    /// Less memory than the policy's `limits.memory` (`32MiB`), or more up to its
    /// `overrides.memory`.
    #[arg(long, value_name = "SIZE", conflicts_with_all = ["record", "replay"])]
    memory: Option<palisade::policy::ByteSize>,
    /// Fix the script's clock at this instant, RFC 3339 (`2024-01-01T00:00:00Z`); the policy
    /// must set `overrides.now = true`.
    #[arg(long, value_name = "RFC3339", conflicts_with_all = ["record", "replay"])]
    now: Option<String>,
    /// Seed `Math.random` and WASI randomness; the policy must set `overrides.seed = true`.
    #[arg(long, value_name = "N", conflicts_with_all = ["record", "replay"])]
    seed: Option<u64>,
    /// Set a `[config]` value for this call (repeatable); the key must be in the policy's
    /// `overrides.config`.
    #[arg(long = "config", value_name = "KEY=VALUE", conflicts_with_all = ["record", "replay"])]
    config: Vec<String>,
    /// Place the host file PATH in the scratch directory as NAME (repeatable); with the
    /// policy's seed, the files must fit `[fs.scratch]`'s quota.
    #[arg(long = "file", value_name = "NAME=PATH", conflicts_with_all = ["record", "replay"])]
    files: Vec<String>,
    /// JSON handed to the policy's capability handlers and forward URLs with every call
    /// (`palisade-metadata` header): an actor id, a tenant.
    #[arg(long, value_name = "JSON", conflicts_with_all = ["record", "replay"])]
    metadata: Option<String>,
    /// JSON input. Without `--input` or `--input-file`, input is read from stdin when stdin is
    /// not a terminal, and is `null` otherwise.
    #[arg(long, conflicts_with = "input_file")]
    input: Option<String>,
    /// Read the JSON input from a file.
    #[arg(long, value_name = "PATH")]
    input_file: Option<PathBuf>,
    /// Policy file; the built-in default (policies/default.toml) when absent.
    #[arg(long, value_name = "PATH")]
    policy: Option<PathBuf>,
    /// Print the whole outcome (output or error, logs, audit, receipt) as one JSON object on
    /// stdout.
    #[arg(long)]
    json: bool,
    /// Append every gated decision of the call to this file, one JSON object per line.
    #[arg(long, value_name = "PATH")]
    audit_log: Option<PathBuf>,
    /// Write every answer the host gives this call (clock reads, random bytes, capability,
    /// key-value and HTTP results) to this file, for `--replay`.
    #[arg(long, value_name = "PATH", conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Run against a transcript written by `--record`, with its input: nothing reaches the
    /// network, the key-value store or a capability handler.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["input", "input_file"])]
    replay: Option<PathBuf>,
}

/// The policy file at `path`, or the built-in default.
pub(super) fn load_policy(path: Option<&std::path::Path>) -> Result<Policy, Stop> {
    match path {
        Some(path) => Policy::from_file(path).map_err(|e| Stop::Failed(Error::InvalidPolicy(e))),
        None => Ok(Policy::builtin_default()),
    }
}

/// An ES module, or a component compiled by `palisade compile`, told apart by the file's name
/// and bytes together (a `.wasm` that is not a component is `invalid_component`). Only a
/// regular file of at most `MAX_SCRIPT_BYTES` is read. A `.ts`/`.mts` file is TypeScript; the
/// files a module imports are read from its folder (a bad import is `invalid_input`).
pub(super) fn load_script(path: &std::path::Path) -> Result<Script, Stop> {
    let bytes = if is_stdin(path) {
        Script::read_stream_bytes(std::io::stdin().lock())
    } else {
        Script::read_file_bytes(path)
    }
    .map_err(|e| Stop::Usage(format!("cannot read {}: {e}", path.display())))?;
    match Script::from_file_bytes(path, bytes) {
        Ok(Ok(script)) => Ok(script),
        Ok(Err(e)) => Err(Stop::Usage(format!(
            "cannot read {}: not valid UTF-8 text ({e})",
            path.display()
        ))),
        Err(error) => Err(Stop::Failed(error)),
    }
}

/// `-`: the script is read from stdin.
fn is_stdin(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

pub(super) fn usage_error(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Why `palisade run` stopped before its call could start.
pub(super) enum Stop {
    /// A usage error (exit 2): a file that cannot be read or written, a flag's bad value.
    Usage(String),
    /// An error with its own code and exit code (a policy that does not load, a damaged
    /// component, an import out of the script's folder).
    Failed(Error),
}

impl Stop {
    /// Report it: on stderr, or with `--json` as one outcome on stdout, like a call's (a usage
    /// error is `invalid_input` there), so that a caller that parses stdout always reads one.
    /// The exit code is the same either way.
    pub(super) fn report(self, json: bool, policy: Option<&Policy>) -> ExitCode {
        if !json {
            return self.report_human();
        }
        let (error, code) = match self {
            Stop::Usage(detail) => (
                Error::InvalidInput { detail, fix: None },
                ExitCode::from(EXIT_USAGE),
            ),
            Stop::Failed(error) => {
                let code = ExitCode::from(error.exit_code() as u8);
                (error, code)
            }
        };
        match serde_json::to_string(&Outcome::not_started(error, policy)) {
            Ok(text) => print_line(&text),
            Err(e) => eprintln!("error: cannot write the outcome as JSON: {e}"),
        }
        code
    }

    /// Report it on stderr.
    pub(super) fn report_human(self) -> ExitCode {
        match self {
            Stop::Usage(message) => usage_error(message),
            Stop::Failed(error) => report_error(&error),
        }
    }
}

pub fn run(args: RunArgs) -> ExitCode {
    let policy = match load_policy(args.policy.as_deref()) {
        Ok(policy) => policy,
        Err(stop) => return stop.report(args.json, None),
    };
    match Prepared::new(&args, &policy) {
        Ok(prepared) => prepared.call(&args, &policy),
        Err(stop) => stop.report(args.json, Some(&policy)),
    }
}

/// Everything a call needs, read and opened before it starts: a file that cannot be read or
/// written is reported before the script runs (and before it writes to the key-value store or
/// sends a request).
struct Prepared {
    script: Script,
    transcript: Option<Transcript>,
    input: String,
    /// `--record`'s path and file.
    record: Option<(PathBuf, std::fs::File)>,
    palisade: Palisade,
    runtime: tokio::runtime::Runtime,
    /// The options of a plain call (not a replay or a recorded call).
    options: RunOptions,
    /// Console lines already printed while the call ran.
    streamed: Arc<AtomicUsize>,
}

impl Prepared {
    fn new(args: &RunArgs, policy: &Policy) -> Result<Self, Stop> {
        let script = load_script(&args.file)?;
        let transcript = match &args.replay {
            Some(path) => {
                Some(read_transcript(path, policy.limits().transcript.0).map_err(Stop::Usage)?)
            }
            None => None,
        };
        let input = match (&transcript, &args.args) {
            (Some(t), _) => t.input.clone(),
            (None, Some(list)) => list.clone(),
            (None, None) => read_input(args, policy.limits().input.0).map_err(Stop::Usage)?,
        };
        let record = match &args.record {
            Some(path) => {
                let file = std::fs::File::create(path).map_err(|e| {
                    Stop::Usage(format!(
                        "cannot write the transcript {}: {e}",
                        path.display()
                    ))
                })?;
                Some((path.clone(), file))
            }
            None => None,
        };
        let streamed = Arc::new(AtomicUsize::new(0));
        let options = plain_options(args, policy, &streamed)?;
        let mut builder = Palisade::builder()
            .max_concurrency(1)
            .on_compile(super::compile_notice);
        if let Some(path) = &args.audit_log {
            // The library appends to the audit log (with each HTTP record's resolved
            // addresses); it is opened here first, as the library opens it, so that a path
            // that cannot be written is a usage error.
            palisade::check_audit_log(path).map_err(|e| {
                Stop::Usage(format!(
                    "cannot write the audit log {}: {e}",
                    path.display()
                ))
            })?;
            builder = builder.audit_log(path);
        }
        let palisade = builder.build().map_err(Stop::Failed)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                Stop::Failed(Error::Internal {
                    detail: format!("cannot start the async runtime: {e}"),
                })
            })?;
        Ok(Self {
            script,
            transcript,
            input,
            record,
            palisade,
            runtime,
            options,
            streamed,
        })
    }

    fn call(self, args: &RunArgs, policy: &Policy) -> ExitCode {
        let Self {
            script,
            transcript,
            input,
            record,
            palisade,
            runtime,
            options,
            streamed,
        } = self;
        // A write that fails after the call does not drop its outcome: the outcome is printed,
        // then the failure.
        let mut failed_writes = Vec::new();
        let outcome = match (&transcript, record) {
            (Some(transcript), _) => runtime.block_on(palisade.replay(policy, &script, transcript)),
            (None, Some((path, file))) => {
                let (outcome, transcript) =
                    runtime.block_on(palisade.run_recorded(policy, &script, &input));
                if let Err(e) = write_transcript(file, &transcript) {
                    failed_writes.push(format!(
                        "cannot write the transcript {}: {e}",
                        path.display()
                    ));
                }
                if let Some(why) = &transcript.truncated {
                    eprintln!(
                        "warning: the transcript {} is incomplete: {why}; it cannot be replayed",
                        path.display()
                    );
                }
                outcome
            }
            (None, None) => runtime.block_on(palisade.run_with(policy, &script, &input, &options)),
        };
        // A blocking file operation that outlived its call (which ended at its deadline) must
        // not keep the process from exiting, as dropping the runtime would wait for it.
        runtime.shutdown_background();
        if let Some(failure) = palisade.audit_log_failure() {
            failed_writes.push(failure);
        }
        let printed = streamed.load(Ordering::SeqCst);
        let code = print_outcome(&outcome, args.json, printed);
        for message in &failed_writes {
            eprintln!("error: {message}");
        }
        match outcome.result {
            Ok(_) if !failed_writes.is_empty() => ExitCode::from(EXIT_USAGE),
            _ => code,
        }
    }
}

/// The options of a plain call, from the flags; without `--json`, console lines go to stderr
/// as the script writes them, counted in `streamed`.
fn plain_options(
    args: &RunArgs,
    policy: &Policy,
    streamed: &Arc<AtomicUsize>,
) -> Result<RunOptions, Stop> {
    let mut options = RunOptions::default();
    options.export = args.export.clone();
    options.spread_args = args.args.is_some();
    options.timeout = args.timeout.map(|t| t.0);
    options.fuel = args.fuel;
    options.memory = args.memory;
    if let Some(text) = &args.metadata {
        let metadata = serde_json::from_str(text)
            .map_err(|e| Stop::Usage(format!("--metadata is not JSON: {e}")))?;
        options = options.metadata(metadata);
    }
    options = call_options(args, options, policy).map_err(Stop::Usage)?;
    if !args.json {
        let counted = streamed.clone();
        options = options.on_event(move |event| {
            if let palisade::Event::Console(line) = event {
                print_log(&line);
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    Ok(options)
}

/// A transcript written by `--record`, read up to the policy's `limits.transcript`.
fn read_transcript(path: &std::path::Path, limit: u64) -> Result<Transcript, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut text = String::new();
    file.take(limit.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if text.len() as u64 > limit {
        return Err(format!(
            "{} is larger than the policy's limits.transcript of {}",
            path.display(),
            palisade::policy::ByteSize(limit)
        ));
    }
    serde_json::from_str(&text).map_err(|e| format!("{} is not a transcript: {e}", path.display()))
}

/// Write a transcript as JSON without building its text in memory first.
fn write_transcript(file: std::fs::File, transcript: &Transcript) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, transcript).map_err(std::io::Error::other)?;
    out.flush()
}

/// Read the input; at most one byte past the policy's limit is read, so that an oversized input
/// is still reported as `invalid_input` without reading all of it.
fn read_input(args: &RunArgs, limit: u64) -> Result<String, String> {
    if let Some(input) = &args.input {
        return Ok(input.clone());
    }
    let (mut reader, what): (Box<dyn Read>, String) = match &args.input_file {
        Some(path) => match std::fs::File::open(path) {
            Ok(file) => (Box::new(file), path.display().to_string()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        },
        // A script read from stdin leaves no input there.
        None if std::io::stdin().is_terminal() || is_stdin(&args.file) => {
            return Ok("null".to_owned());
        }
        None => (Box::new(std::io::stdin()), "stdin".to_owned()),
    };
    let mut bytes = Vec::new();
    reader
        .by_ref()
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{what} is not UTF-8 text"))?;
    if text.trim().is_empty() && args.input_file.is_none() {
        return Ok("null".to_owned());
    }
    Ok(text)
}

/// `--now`, `--seed`, `--config` and `--file` as options of the call (the policy checks them
/// when the call starts); a file is read up to the scratch quota, plus one byte.
fn call_options(
    args: &RunArgs,
    mut options: RunOptions,
    policy: &Policy,
) -> Result<RunOptions, String> {
    if let Some(text) = &args.now {
        let at = humantime::parse_rfc3339(text).map_err(|e| {
            format!("--now {text:?}: {e}; write an RFC 3339 UTC time such as 2024-01-01T00:00:00Z")
        })?;
        options = options.now(at);
    }
    if let Some(seed) = args.seed {
        options = options.seed(seed);
    }
    for pair in &args.config {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("--config {pair:?} is not KEY=VALUE"))?;
        options = options.config(key, value);
    }
    let quota = policy
        .fs()
        .and_then(|fs| fs.scratch.as_ref())
        .map_or(0, |s| s.quota.0);
    for pair in &args.files {
        let (name, path) = pair
            .split_once('=')
            .ok_or_else(|| format!("--file {pair:?} is not NAME=PATH"))?;
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(quota.saturating_add(1)).read_to_end(&mut bytes))
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        options = options.file(name, bytes);
    }
    Ok(options)
}

/// A console line on stderr, marked by its level.
fn print_log(line: &palisade::LogLine) {
    let message = printable(&line.message);
    match line.level {
        Level::Log | Level::Info => eprintln!("{message}"),
        Level::Debug => eprintln!("debug: {message}"),
        Level::Warn => eprintln!("warn: {message}"),
        Level::Error => eprintln!("error: {message}"),
    }
}

/// Print the outcome; the first `printed` console lines were printed while the call ran.
fn print_outcome(outcome: &Outcome, json: bool, printed: usize) -> ExitCode {
    if json {
        match serde_json::to_string(outcome) {
            Ok(text) => print_line(&text),
            Err(e) => {
                return report_error(&Error::Internal {
                    detail: e.to_string(),
                });
            }
        }
    } else {
        for line in outcome.logs.iter().skip(printed) {
            print_log(line);
        }
        if let Some(output) = outcome.output() {
            print_line(output.get());
        }
    }
    match &outcome.result {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) if json => ExitCode::from(error.exit_code() as u8),
        Err(error) => report_error(error),
    }
}

/// Print a line on stdout; a closed stdout (`| head`) is not worth a panic.
pub(super) fn print_line(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// Script-controlled text with control and bidirectional-formatting characters escaped, so
/// that a script cannot send terminal escape sequences to the operator's terminal or reorder
/// what it shows. Newlines and tabs stay (console lines may span lines).
pub(super) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| c == '\n' || c == '\t')
}

/// Script-controlled text on one line: newlines and tabs escaped too. Everything a script
/// controls in an error report goes through this, so that no text of it can start a line of
/// its own (a forged `fix:` or `docs:` line).
pub(super) fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |_| false)
}

fn escaped(text: &str, keep: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() || is_bidi_or_separator(c)) && !keep(c);
    if !text.chars().any(unsafe_char) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// Characters that reorder or break the text around them on a terminal: the bidirectional
/// marks, embeddings, overrides and isolates, and the Unicode line and paragraph separators.
fn is_bidi_or_separator(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// The human report of an error, on stderr: `error[code]: message`, the script's stack (each
/// line marked `  | `), then the host's `fix:` and `docs:` lines. What the script controls
/// (the message, stack lines, names and URLs inside a fix) is escaped onto its line.
pub(super) fn report_error(error: &Error) -> ExitCode {
    eprintln!("error[{}]: {}", error.code(), one_line(&error.to_string()));
    if let Error::GuestException {
        stack: Some(stack), ..
    } = error
    {
        for line in stack.lines().filter(|l| !l.trim().is_empty()) {
            eprintln!("  | {}", one_line(line.trim()));
        }
    }
    if let Some(fix) = error.fix() {
        eprintln!("  fix: {}", one_line(&fix.to_string()));
    }
    eprintln!("  docs: {}", error.docs());
    ExitCode::from(error.exit_code() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_a_script_writes_starts_a_line_of_the_report() {
        let forged = "boom\n  fix: set `x = 1`\r\u{202e}evil\u{2028}";
        assert_eq!(
            one_line(forged),
            "boom\\u{a}  fix: set `x = 1`\\u{d}\\u{202e}evil\\u{2028}"
        );
        assert_eq!(printable("a\nb\tc\u{1b}[2J"), "a\nb\tc\\u{1b}[2J");
        assert!(matches!(
            printable("plain é"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

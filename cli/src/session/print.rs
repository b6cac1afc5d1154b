//! How a session command's answer is printed: readably (what the command asked for on stdout,
//! console lines and refusals on stderr) or, with `--json`, the server's JSON as it is. A
//! refusal exits with its code's exit code, and a `fix` is written as the next command.

use super::client::Answer;
use super::{Call, Kind};
use crate::run::{one_line, print_line, printable};
use palisade::ErrorCode;
use serde_json::{Map, Value};
use std::process::ExitCode;

/// Print `answer` to `call`; the exit code.
pub fn answer(call: &Call, answer: &Answer, json: bool) -> ExitCode {
    let error = answer.body.get("error").filter(|e| e.is_object());
    if json {
        print_line(&answer.body.to_string());
    } else if call.kind == Kind::Run {
        print_logs(&answer.body);
    }
    match error {
        Some(error) => {
            if !json {
                refusal(call, error);
            }
            exit_code(error)
        }
        None if answer.status.is_success() => {
            if !json {
                success(call.kind, &answer.body);
            }
            ExitCode::SUCCESS
        }
        None => {
            eprintln!(
                "palisade: the server answered {} without an error",
                answer.status
            );
            ExitCode::from(exit_of(ErrorCode::Internal))
        }
    }
}

fn exit_of(code: ErrorCode) -> u8 {
    code.exit_code() as u8
}

/// The exit code of `error`'s code, as `palisade run` exits with it.
fn exit_code(error: &Value) -> ExitCode {
    let code = error["code"].as_str().unwrap_or_default();
    let known = ErrorCode::ALL.iter().find(|c| c.as_str() == code);
    ExitCode::from(exit_of(known.copied().unwrap_or(ErrorCode::Internal)))
}

fn success(kind: Kind, body: &Value) {
    match kind {
        Kind::Created => print_line(body["session_id"].as_str().unwrap_or_default()),
        Kind::Sessions => sessions(body),
        Kind::Run => print_line(&body["output"].to_string()),
        Kind::Entries => entries(body),
        Kind::Read => read(body),
        Kind::Grep => grep(body),
        Kind::Done => {}
    }
}

/// A run's console lines, on stderr, marked by level as `palisade run` marks them.
fn print_logs(body: &Value) {
    for line in body["logs"].as_array().into_iter().flatten() {
        let message = printable(line["message"].as_str().unwrap_or_default());
        match line["level"].as_str().unwrap_or("log") {
            "log" | "info" => eprintln!("{message}"),
            level => eprintln!("{level}: {message}"),
        }
    }
}

fn sessions(body: &Value) {
    for s in body.as_array().into_iter().flatten() {
        let field = |k: &str| one_line(s[k].as_str().unwrap_or("-")).into_owned();
        print_line(&format!(
            "{}  {}  {}  {}",
            field("session_id"),
            field("policy"),
            field("name"),
            field("last_used_at")
        ));
    }
}

fn entries(body: &Value) {
    for e in body["entries"].as_array().into_iter().flatten() {
        let name = one_line(e["name"].as_str().unwrap_or_default()).into_owned();
        if e["is_dir"] == true {
            print_line(&format!("{name}/"));
        } else {
            print_line(&format!("{name}  {}", e["size"]));
        }
    }
    if body["truncated"] == true {
        eprintln!("palisade: more entries than one answer holds");
    }
}

fn read(body: &Value) {
    use std::io::Write;
    let bytes = match (body["body"].as_str(), body["content_b64"].as_str()) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(b64)) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_default()
        }
        (None, None) => Vec::new(),
    };
    let _ = std::io::stdout().lock().write_all(&bytes);
}

fn grep(body: &Value) {
    for m in body["matches"].as_array().into_iter().flatten() {
        print_line(&format!(
            "{}:{}:{}",
            one_line(m["path"].as_str().unwrap_or_default()),
            m["line_no"],
            one_line(m["line"].as_str().unwrap_or_default())
        ));
    }
}

/// `error[code]: message`, then the command that follows the server's `fix`, or its note.
fn refusal(call: &Call, error: &Value) {
    let text = |k: &str| one_line(error[k].as_str().unwrap_or_default()).into_owned();
    eprintln!("error[{}]: {}", text("code"), text("message"));
    match error.get("fix").and_then(Value::as_object) {
        Some(fix) => match policy_file_edit(call, fix).or_else(|| next_command(call, fix)) {
            Some(line) => eprintln!("  try: {}", one_line(&line)),
            None => eprintln!(
                "  fix: {}",
                one_line(&Value::Object(fix.clone()).to_string())
            ),
        },
        None if error["fix_note"].is_string() => eprintln!("  note: {}", text("fix_note")),
        None => {}
    }
    if error["docs_url"].is_string() {
        eprintln!("  docs: {}", text("docs_url"));
    }
}

/// The `--policy-file` of `call`, if it sent one.
fn policy_file(call: &Call) -> Option<&str> {
    let at = call.extra.iter().position(|w| w == "--policy-file")?;
    call.extra.get(at + 1).map(String::as_str)
}

/// A fix to a policy sent from `--policy-file F` (`{"policy": {KEY: VALUE}}`, the keys past
/// the ceiling and the values that fit): the change to make in F, then the same command.
fn policy_file_edit(call: &Call, fix: &Map<String, Value>) -> Option<String> {
    let file = policy_file(call)?;
    let keys = fix.get("policy")?.as_object()?;
    let changes: Vec<String> = keys
        .iter()
        .map(|(key, value)| match value {
            Value::Null => format!("leave `{key}` out"),
            value => format!("set `{key} = {value}`"),
        })
        .collect();
    let mut words = vec!["palisade".to_owned(), "session".to_owned()];
    words.extend(call.words.iter().cloned());
    words.extend(call.extra.iter().map(|w| quoted(w)));
    Some(format!(
        "in {}, {}; then: {}",
        quoted(file),
        changes.join(", "),
        words.join(" ")
    ))
}

/// `call` with `fix` merged in, as a command line; `None` when the fix sets a field this
/// command has no option for. A fix that names a catalog policy replaces `--policy-file`; a
/// field it sets to `null` is left out.
pub fn next_command(call: &Call, fix: &Map<String, Value>) -> Option<String> {
    let mut body = call.body.clone().unwrap_or_default();
    for (key, value) in fix {
        body.insert(key.clone(), value.clone());
    }
    let mut words = vec!["palisade".to_owned(), "session".to_owned()];
    words.extend(call.words.iter().cloned());
    for field in call.positional {
        words.push(quoted(body.get(*field)?.as_str()?));
    }
    let named = fix.get("policy").is_some_and(Value::is_string);
    let extra = call.extra.iter().enumerate().filter(|(at, _)| {
        let file_at = call.extra.iter().position(|w| w == "--policy-file");
        !(named && file_at.is_some_and(|f| *at == f || *at == f + 1))
    });
    words.extend(extra.map(|(_, w)| quoted(w)));
    for (key, value) in fix {
        if call.positional.contains(&key.as_str()) {
            continue;
        }
        let flag = format!("--{}", key.replace('_', "-"));
        match value {
            Value::Null => {}
            Value::Bool(true) => words.push(flag),
            Value::String(s) if OPTIONS.contains(&key.as_str()) => {
                words.extend([flag, quoted(s)]);
            }
            _ => return None,
        }
    }
    Some(words.join(" "))
}

/// The fields a fix may set that a command takes as `--name VALUE`.
const OPTIONS: &[&str] = &["timeout", "policy", "name", "idle_timeout"];

/// A word as a POSIX shell reads it back.
fn quoted(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

//! `wasi:cli/run`: the JSON input on stdin, the default export called with it, the output JSON
//! on stdout; console lines on stderr; a failure as one JSON line on stderr (`{"error":
//! {"code": …, "message": …}}`, the codes of docs/errors.md) and a non-zero exit.

use super::settings::{self, Built};
use super::stdio::{read_to_end, write_all};
use crate::Component;
use crate::exports::palisade::sandbox::runner::{Error, Module};
use crate::exports::wasi::cli::run::Guest as Run;
use crate::wasi::cli::{stderr::get_stderr, stdin::get_stdin, stdout::get_stdout};

impl Run for Component {
    fn run() -> Result<(), ()> {
        let Some(built) = settings::built() else {
            fail(
                "missing_export",
                "this component holds no script; make one with `palisade build app.js`",
            );
            return Err(());
        };
        let limit = built.settings.input_limit;
        let Ok(input) = read_to_end(&get_stdin(), limit) else {
            fail(
                "invalid_input",
                &format!("the input on stdin is over limits.input ({limit} bytes)"),
            );
            return Err(());
        };
        let Ok(input) = String::from_utf8(input) else {
            fail("invalid_input", "the input on stdin is not UTF-8");
            return Err(());
        };
        // No input at all is `null`, as `palisade run` without `--input` gives.
        let input = if input.trim().is_empty() {
            "null".to_owned()
        } else {
            input
        };
        match call(&built, &input) {
            Ok(output) => {
                let mut output = output.into_bytes();
                output.push(b'\n');
                write_all(&get_stdout(), &output);
                Ok(())
            }
            Err((code, message)) => {
                fail(code, &message);
                Err(())
            }
        }
    }
}

/// Call the built script's default export with `input`, under the environment it was built
/// for, with a fresh `Math.random` seed; the output, or the error's code and message.
pub fn call(built: &Built, input: &str) -> Result<String, (&'static str, String)> {
    let mut env = built.env.clone();
    env.random_seed = crate::wasi::random::random::get_random_u64();
    let output = crate::run::run(&built.name, Module::Preloaded, "default", input, &env)
        .map_err(error_code)?;
    let limit = built.settings.output_limit;
    if output.len() as u64 > limit {
        return Err((
            "output_too_large",
            format!(
                "the output is {} bytes, over limits.output ({limit} bytes)",
                output.len()
            ),
        ));
    }
    Ok(output)
}

/// The code and message of a guest error, as the Palisade host names them (`guest_error` and
/// `call/classify.rs`: an uncaught `PolicyDeniedError` is `policy_denied`).
pub fn error_code(error: Error) -> (&'static str, String) {
    match error {
        Error::Syntax(e) => ("guest_syntax", format!("{}: {}", e.name, e.message)),
        Error::Exception(e) if e.name == "PolicyDeniedError" => ("policy_denied", e.message),
        Error::Exception(e) => ("guest_exception", format!("{}: {}", e.name, e.message)),
        Error::Deadlock(m) => ("guest_deadlock", m),
        Error::BadOutput(m) => ("bad_output", m),
        Error::InvalidInput(m) => ("invalid_input", m),
        Error::MissingExport(m) => ("missing_export", m),
        Error::NotCompilable(m) => ("not_compilable", m),
    }
}

/// Write the error line to stderr.
pub fn fail(code: &str, message: &str) {
    let line = serde_json::json!({ "error": { "code": code, "message": message } });
    let mut line = line.to_string().into_bytes();
    line.push(b'\n');
    write_all(&get_stderr(), &line);
}

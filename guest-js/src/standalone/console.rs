//! `console` without the Palisade host: each line goes to stderr, prefixed with its level
//! (`[warn] …`). The stock CLI keeps no console budget across lines; each line is formatted up
//! to the environment's `console-limit` bytes (globals/console/line.rs), as under the host.

use super::stdio::write_all;
use crate::wasi::cli::stderr::get_stderr;

/// A console line's level, as `palisade:sandbox/console` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Log,
    Warn,
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Log => "log",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// Write one console line to stderr.
pub fn log(level: Level, message: &str) {
    let mut line = String::with_capacity(message.len() + 9);
    line.push('[');
    line.push_str(level.name());
    line.push_str("] ");
    line.push_str(message);
    line.push('\n');
    write_all(&get_stderr(), line.as_bytes());
}

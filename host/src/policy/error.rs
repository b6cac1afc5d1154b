//! Errors of policy validation, located by key path, line and column.

use serde::Serialize;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A policy that could not be read or validated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}", self.render())]
pub struct PolicyError {
    /// The file, when the policy came from one.
    pub file: Option<PathBuf>,
    /// Dotted key path (`limits.memory`), empty for the document as a whole.
    pub key: String,
    /// 1-based line of the offending value.
    pub line: Option<usize>,
    /// 1-based column of the offending value.
    pub column: Option<usize>,
    /// What is wrong, and how to fix it.
    pub message: String,
}

impl PolicyError {
    fn render(&self) -> String {
        let mut out = String::new();
        if let Some(file) = &self.file {
            out.push_str(&file.display().to_string());
            out.push(':');
        }
        if let (Some(line), Some(column)) = (self.line, self.column) {
            out.push_str(&format!("{line}:{column}:"));
        }
        if !out.is_empty() {
            out.push(' ');
        }
        if !self.key.is_empty() {
            out.push_str(&format!("`{}`: ", self.key));
        }
        out.push_str(&self.message);
        out
    }
}

/// Locates byte offsets as line/column for error messages.
pub(super) struct Source<'a> {
    pub(super) text: &'a str,
    pub(super) file: Option<&'a Path>,
}

impl Source<'_> {
    pub(super) fn error(
        &self,
        key: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> PolicyError {
        let (line, column) = match span {
            Some(span) => {
                let before = &self.text[..span.start.min(self.text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        PolicyError {
            file: self.file.map(Path::to_path_buf),
            key: key.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// A numeric key's value, checked against its accepted range `(min, max)`, or its default
/// when the policy leaves it out.
pub(super) fn pick<T: Copy + PartialOrd + fmt::Display>(
    source: &Source<'_>,
    key: &str,
    value: &Option<toml::Spanned<T>>,
    default: T,
    (min, max): (T, T),
) -> Result<T, PolicyError> {
    let Some(value) = value else {
        return Ok(default);
    };
    let v = *value.get_ref();
    if v < min || v > max {
        return Err(source.error(
            key,
            Some(value.span()),
            format!("{v} is out of range; allowed is {min} to {max}"),
        ));
    }
    Ok(v)
}

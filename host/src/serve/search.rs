//! `grep` and `sed` of the session file operations (`fs.rs`): the files below a path, filtered
//! by globs, searched with Rust's `regex` (linear time, compiled size bounded), never following
//! symbolic links. One request's work is bounded: each file is read whole only up to
//! [`MAX_FILE_BYTES`], a request reads at most [`MAX_REQUEST_SCAN_BYTES`], grep answers at
//! most [`MAX_OUTPUT_BYTES`] of lines, and sed builds each file's new content counting its
//! bytes, stopping at the directory's quota (or [`MAX_FILE_BYTES`]) before it holds more.

use super::errors::ApiError;
use super::fs::{FsRequest, Root, refused};
use crate::caps::fs::Ask;
use regex::Regex;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Most matches a grep may ask for.
const MAX_MATCHES: usize = 100_000;
/// Longest line a grep match may show (`max_line_bytes` is cut to it).
const MAX_LINE_BYTES: usize = 64 << 10;
/// Largest file grep and sed read (grep skips larger ones, sed refuses them), and largest file
/// sed writes.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Most bytes one grep or sed request reads: grep answers `truncated` there, and sed refuses a
/// request whose files hold more, before it edits any.
pub const MAX_REQUEST_SCAN_BYTES: u64 = 256 << 20;
/// Most bytes of matched lines one grep answers; past it, `truncated`.
pub const MAX_OUTPUT_BYTES: usize = 16 << 20;
/// How often (in bytes scanned or built) grep and sed check their [`super::fs::Stop`].
const CHECK_EVERY_BYTES: usize = 1 << 20;

impl Root {
    /// The files an operation visits: `path` itself, or the files below it.
    fn targets(&self, path: &str, r: &FsRequest) -> Result<Vec<PathBuf>, ApiError> {
        let include = globs(&r.include_glob)?;
        let exclude = globs(&r.exclude_glob)?;
        let rel = self.rel(path);
        let meta = self.stat(path)?;
        let keep =
            |p: &Path| (r.include_glob.is_empty() || include.is_match(p)) && !(exclude.is_match(p));
        if !meta.is_dir() {
            return Ok(vec![rel]);
        }
        let mut out = Vec::new();
        let mut seen = 0u64;
        self.walk(&rel, r.recursive.unwrap_or(true), &mut |p, m| {
            seen += 1;
            if m.is_file() && keep(p) {
                out.push(p.to_path_buf());
            }
            seen <= self.max_files
        })?;
        Ok(out)
    }

    fn pattern(&self, r: &FsRequest, literal: bool) -> Result<Regex, ApiError> {
        let Some(pattern) = &r.pattern else {
            return Err(ApiError::invalid("this operation needs `pattern`"));
        };
        let text = if literal {
            regex::escape(pattern)
        } else {
            pattern.clone()
        };
        regex::RegexBuilder::new(&text)
            .case_insensitive(r.ignore_case)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| ApiError::invalid(format!("`pattern` is not a valid regex: {e}")))
    }

    pub(super) fn grep(&self, r: &FsRequest) -> Result<Value, ApiError> {
        let re = self.pattern(r, false)?;
        let path = r.path.as_deref().unwrap_or(".");
        let mut found = Found {
            matches: Vec::new(),
            max: r.max_matches.unwrap_or(10_000).min(MAX_MATCHES),
            max_line: r.max_line_bytes.unwrap_or(4096).clamp(1, MAX_LINE_BYTES),
            output: 0,
        };
        let mut scanned = 0;
        let mut truncated = false;
        for file in self.targets(path, r)? {
            self.stop.check()?;
            let shown = file.to_string_lossy().into_owned();
            let room = MAX_REQUEST_SCAN_BYTES - scanned;
            let bytes = match self.read_all(&file, &shown, MAX_FILE_BYTES.min(room))? {
                Ok(bytes) => bytes,
                Err(size) if size <= MAX_FILE_BYTES => {
                    truncated = true;
                    break;
                }
                Err(_) => continue,
            };
            scanned += bytes.len() as u64;
            if !self.grep_file(&re, &shown, &bytes, &mut found)? {
                truncated = true;
                break;
            }
        }
        Ok(json!({"matches": found.matches, "truncated": truncated}))
    }

    /// Add the matching lines of one file to `found`; false when `found` is full.
    fn grep_file(
        &self,
        re: &Regex,
        shown: &str,
        bytes: &[u8],
        found: &mut Found,
    ) -> Result<bool, ApiError> {
        let text = String::from_utf8_lossy(bytes);
        let mut offset = 0;
        let mut checked = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            if offset - checked >= CHECK_EVERY_BYTES {
                self.stop.check()?;
                checked = offset;
            }
            let content = line.trim_end_matches(['\n', '\r']);
            if re.is_match(content) && !found.push(shown, i + 1, offset, content) {
                return Ok(false);
            }
            offset += line.len();
        }
        Ok(true)
    }

    pub(super) fn sed(&self, r: &FsRequest) -> Result<Value, ApiError> {
        let Some(replacement) = &r.replacement else {
            return Err(ApiError::invalid("fs/sed needs `replacement`"));
        };
        let literal = !r.regex.unwrap_or(true);
        let edit = Edit {
            re: self.pattern(r, literal)?,
            replacement,
            literal,
            first_only: r.first_only,
        };
        let files = self.sed_files(r)?;
        let mut results = Vec::new();
        let mut total = 0;
        for (rel, shown) in files {
            self.stop.check()?;
            let bytes = self
                .read_all(&rel, &shown, MAX_FILE_BYTES)?
                .map_err(|_| ApiError::invalid(format!("`{shown}` is too large for fs/sed")))?;
            let Ok(text) = String::from_utf8(bytes) else {
                results.push(json!({"path": shown, "replacements": 0, "skipped": "not UTF-8"}));
                continue;
            };
            let count = self.sed_file(&edit, &text, &shown)?;
            total += count;
            results.push(json!({"path": shown, "replacements": count}));
        }
        Ok(json!({"results": results, "total_replacements": total}))
    }

    /// The files a sed edits, with the names it shows: refused, before any is edited, when
    /// together they hold more than [`MAX_REQUEST_SCAN_BYTES`].
    fn sed_files(&self, r: &FsRequest) -> Result<Vec<(PathBuf, String)>, ApiError> {
        let files: Vec<(PathBuf, String)> = match (&r.files, &r.path) {
            (Some(files), None) => files.iter().map(|f| (self.rel(f), f.clone())).collect(),
            (None, Some(path)) => self
                .targets(path, r)?
                .into_iter()
                .map(|p| {
                    let shown = p.to_string_lossy().into_owned();
                    (p, shown)
                })
                .collect(),
            _ => {
                return Err(ApiError::invalid(
                    "fs/sed needs exactly one of `files` and `path`",
                ));
            }
        };
        let held: u64 = files
            .iter()
            .filter_map(|(rel, _)| self.exists(rel))
            .map(|m| m.len())
            .sum();
        if held > MAX_REQUEST_SCAN_BYTES {
            return Err(ApiError::invalid(format!(
                "the files hold {held} bytes, more than the {MAX_REQUEST_SCAN_BYTES} one fs/sed \
                 reads"
            ))
            .note("narrow the edit with `files`, `include_glob` or a deeper `path`"));
        }
        Ok(files)
    }

    /// Edit one file (whole, [`Root::write`]); how many replacements it made. Its new content
    /// is built within what the quota leaves it, and refused as the write would be, before it
    /// holds more.
    fn sed_file(&self, edit: &Edit, text: &str, shown: &str) -> Result<usize, ApiError> {
        let mut budget = self.sed_budget(text.len());
        loop {
            match edit.apply(text, budget, &self.stop)? {
                Built::Unchanged => return Ok(0),
                Built::Done(new, count) => {
                    self.write(shown, new.as_bytes(), false)?;
                    return Ok(count);
                }
                Built::Over(size) if size as u64 > MAX_FILE_BYTES => {
                    return Err(ApiError::invalid(format!(
                        "sed's result for `{shown}` passes the {MAX_FILE_BYTES} bytes it writes"
                    )));
                }
                Built::Over(size) => {
                    // Refused as the write would be; or, when measuring again found room, built
                    // again within it.
                    let ask = Ask {
                        bytes: (size - text.len()) as u64,
                        files: 0,
                    };
                    self.account.reserve(ask).map_err(refused)?;
                    self.account.release(ask.bytes, 0);
                    budget = self.sed_budget(text.len()).max(size);
                }
            }
        }
    }

    /// The most bytes a file of `held` bytes may hold after an edit.
    fn sed_budget(&self, held: usize) -> usize {
        let room = self.account.available().min(MAX_FILE_BYTES);
        (held as u64 + room).min(MAX_FILE_BYTES + 1) as usize
    }
}

/// The matches a grep has found, within its bounds.
struct Found {
    matches: Vec<Value>,
    max: usize,
    max_line: usize,
    /// Bytes of lines in `matches`.
    output: usize,
}

impl Found {
    /// Add a match; false when the grep is full (nothing added).
    fn push(&mut self, shown: &str, line_no: usize, offset: usize, content: &str) -> bool {
        let mut cut = content.len().min(self.max_line);
        while !content.is_char_boundary(cut) {
            cut -= 1;
        }
        if self.matches.len() >= self.max || self.output + cut > MAX_OUTPUT_BYTES {
            return false;
        }
        self.output += cut;
        self.matches.push(json!({
            "path": shown,
            "line_no": line_no,
            "byte_offset": offset,
            "line": &content[..cut],
        }));
        true
    }
}

/// One sed's pattern and replacement.
struct Edit<'a> {
    re: Regex,
    replacement: &'a str,
    literal: bool,
    first_only: bool,
}

/// A file's new content, as far as it was built.
enum Built {
    /// No match.
    Unchanged,
    /// The new content and how many replacements it holds.
    Done(String, usize),
    /// The content would pass the budget: how many bytes it had reached.
    Over(usize),
}

impl Edit<'_> {
    /// `text` with the matches replaced, counting bytes as it builds: it stops as soon as the
    /// result passes `budget` bytes, so it never holds more than `budget` plus one
    /// replacement's literal text.
    fn apply(&self, text: &str, budget: usize, stop: &super::fs::Stop) -> Result<Built, ApiError> {
        let names: HashMap<&str, usize> = self
            .re
            .capture_names()
            .enumerate()
            .filter_map(|(i, name)| Some((name?, i)))
            .collect();
        let mut out = String::new();
        let mut last = 0;
        let mut count = 0;
        let mut checked = 0;
        for caps in self.re.captures_iter(text) {
            let whole = caps.get(0).expect("group 0 is the match");
            if whole.end() - checked >= CHECK_EVERY_BYTES {
                stop.check()?;
                checked = whole.end();
            }
            let before = &text[last..whole.start()];
            if out.len() + before.len() > budget {
                return Ok(Built::Over(out.len() + before.len()));
            }
            out.push_str(before);
            let mut over = false;
            if self.literal {
                out.push_str(self.replacement);
            } else {
                let append = |i: usize, dst: &mut String| match caps.get(i) {
                    Some(group) if dst.len() + group.len() <= budget => {
                        dst.push_str(group.as_str())
                    }
                    Some(_) => over = true,
                    None => {}
                };
                let index = |name: &str| names.get(name).copied();
                regex_automata::util::interpolate::string(
                    self.replacement,
                    append,
                    index,
                    &mut out,
                );
            }
            if over || out.len() > budget {
                return Ok(Built::Over(out.len().max(budget.saturating_add(1))));
            }
            last = whole.end();
            count += 1;
            if self.first_only {
                break;
            }
        }
        if count == 0 {
            return Ok(Built::Unchanged);
        }
        let rest = &text[last..];
        if out.len() + rest.len() > budget {
            return Ok(Built::Over(out.len() + rest.len()));
        }
        out.push_str(rest);
        Ok(Built::Done(out, count))
    }
}

fn globs(patterns: &[String]) -> Result<globset::GlobSet, ApiError> {
    let mut set = globset::GlobSetBuilder::new();
    for p in patterns {
        let glob = globset::Glob::new(p)
            .map_err(|e| ApiError::invalid(format!("`{p}` is not a glob: {e}")))?;
        set.add(glob);
        // A bare pattern such as `*.js` matches at any depth, as in a .gitignore.
        if !p.contains('/')
            && let Ok(deep) = globset::Glob::new(&format!("**/{p}"))
        {
            set.add(deep);
        }
    }
    set.build()
        .map_err(|e| ApiError::invalid(format!("bad glob set: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::fs::Stop;

    fn edit(pattern: &str, replacement: &'static str, literal: bool) -> Edit<'static> {
        Edit {
            re: Regex::new(pattern).unwrap(),
            replacement,
            literal,
            first_only: false,
        }
    }

    fn apply(e: &Edit, text: &str, budget: usize) -> Built {
        e.apply(text, budget, &Stop::default()).unwrap()
    }

    #[test]
    fn an_edit_stops_at_its_budget() {
        let text = "a".repeat(1000);
        let big: &'static str = Box::leak("x".repeat(1 << 20).into_boxed_str());
        // 1,000 matches of a 1 MiB replacement: it stops past 4 KiB, holding one replacement.
        match apply(&edit("a", big, true), &text, 4096) {
            Built::Over(size) => assert_eq!(size, 1 << 20),
            _ => panic!("not stopped"),
        }
        // A group copied into the result counts as it is copied.
        let long = "b".repeat(10_000);
        match apply(&edit("(b+)", "$1$1$1", false), &long, 25_000) {
            Built::Over(size) => assert!(size > 25_000 && size <= 25_001, "{size}"),
            _ => panic!("not stopped"),
        }
        // Within the budget, the edit is the regex crate's own.
        let re = edit("(?P<w>a)b", "[$w$$]", false);
        match apply(&re, "ab ab c", 100) {
            Built::Done(new, count) => {
                assert_eq!((new.as_str(), count), ("[a$] [a$] c", 2));
                assert_eq!(re.re.replace_all("ab ab c", "[$w$$]"), new);
            }
            _ => panic!("not built"),
        }
        assert!(matches!(apply(&re, "none", 100), Built::Unchanged));
    }

    #[test]
    fn a_stopped_edit_answers_cancelled() {
        let stop = Stop::default();
        stop.cancelled
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let text = "a".repeat(3 << 20);
        let e = edit("a", "b", true);
        let err = e.apply(&text, usize::MAX, &stop).err().expect("stopped");
        assert_eq!(err.code(), "cancelled");
        let late = Stop::after(std::time::Duration::ZERO);
        let err = e.apply(&text, usize::MAX, &late).err().expect("stopped");
        assert_eq!(
            (err.code(), err.body()["error"]["fix"].clone()),
            ("timeout", Value::Null)
        );
    }
}

//! `grep` and `sed` of the session file operations (`fs.rs`): the files below a path, filtered
//! by globs, searched with Rust's `regex` (linear time, compiled size bounded), never following
//! symbolic links.

use super::errors::ApiError;
use super::fs::{FsRequest, Root, io_error};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Most matches a grep may ask for.
const MAX_MATCHES: usize = 100_000;
/// Largest file grep and sed read; larger ones are skipped.
const MAX_SCAN_BYTES: u64 = 16 << 20;

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
        self.walk(&rel, r.recursive.unwrap_or(true), 0, &mut |p, m| {
            seen += 1;
            if m.is_file() && keep(p) {
                out.push(p.to_path_buf());
            }
            seen <= self.max_files
        })
        .map_err(|e| io_error(path, e))?;
        Ok(out)
    }

    fn pattern(&self, r: &FsRequest, literal: bool) -> Result<regex::Regex, ApiError> {
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
        let max = r.max_matches.unwrap_or(10_000).min(MAX_MATCHES);
        let max_line = r.max_line_bytes.unwrap_or(4096).max(1);
        let mut matches = Vec::new();
        let mut truncated = false;
        'files: for file in self.targets(path, r)? {
            let shown = file.to_string_lossy().into_owned();
            let Some(bytes) = self.read_all(&file, &shown, MAX_SCAN_BYTES)? else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let mut offset = 0;
            for (i, line) in text.split_inclusive('\n').enumerate() {
                let content = line.trim_end_matches(['\n', '\r']);
                if re.is_match(content) {
                    if matches.len() >= max {
                        truncated = true;
                        break 'files;
                    }
                    let mut cut = content.len().min(max_line);
                    while !content.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    matches.push(json!({
                        "path": shown,
                        "line_no": i + 1,
                        "byte_offset": offset,
                        "line": &content[..cut],
                    }));
                }
                offset += line.len();
            }
        }
        Ok(json!({"matches": matches, "truncated": truncated}))
    }

    pub(super) fn sed(&self, r: &FsRequest) -> Result<Value, ApiError> {
        let Some(replacement) = &r.replacement else {
            return Err(ApiError::invalid("fs/sed needs `replacement`"));
        };
        let literal = !r.regex.unwrap_or(true);
        let re = self.pattern(r, literal)?;
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
        let mut results = Vec::new();
        let mut total = 0;
        for (rel, shown) in files {
            let bytes = self
                .read_all(&rel, &shown, MAX_SCAN_BYTES)?
                .ok_or_else(|| ApiError::invalid(format!("`{shown}` is too large for fs/sed")))?;
            let Ok(text) = String::from_utf8(bytes) else {
                results.push(json!({"path": shown, "replacements": 0, "skipped": "not UTF-8"}));
                continue;
            };
            let found = re.find_iter(&text).count();
            let count = if r.first_only { found.min(1) } else { found };
            if count > 0 {
                let new = if literal {
                    let rep = regex::NoExpand(replacement);
                    re.replacen(&text, if r.first_only { 1 } else { 0 }, rep)
                } else {
                    re.replacen(
                        &text,
                        if r.first_only { 1 } else { 0 },
                        replacement.as_str(),
                    )
                };
                self.write(&shown, new.as_bytes(), false)?;
            }
            total += count;
            results.push(json!({"path": shown, "replacements": count}));
        }
        Ok(json!({"results": results, "total_replacements": total}))
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

//! Redaction of the policy's secret values at every exit of a call: the output, errors, console
//! lines, audit records and the info log, response headers the script sees, and transcripts.
//!
//! A secret reaches the script only when an upstream echoes it back, and by then it may be
//! encoded: JSON-escaped (once by the upstream, again by the script's `JSON.stringify`, again
//! in the output), escaped as Rust's `Debug` does in the log, or percent-encoded in a URL. Each
//! secret is matched in each of those forms: raw, JSON-escaped up to three times over, and
//! `Debug`-escaped, where any byte may also be written `%XX` (either case) and a space `+`.

use crate::Error;
use crate::policy::Policy;

/// What replaces a secret value wherever it shows up.
pub(crate) const REDACTED: &str = "[redacted]";

/// Layers of JSON escaping matched (upstream body, `JSON.stringify`, the output's own JSON).
const JSON_LAYERS: usize = 3;

/// The secret values of a call's policy, in every form they are matched in.
#[derive(Clone, Default)]
pub(crate) struct Secrets {
    /// Each secret's forms, longest first; `first` marks the bytes a match can start with.
    forms: Vec<Vec<u8>>,
    first: Box<[bool]>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} forms)", self.forms.len())
    }
}

impl Secrets {
    pub fn new(values: &[String]) -> Self {
        // Most policies inject no secret: every call builds its audit log with these, so the
        // empty set allocates nothing (`find` looks at `first` only when there are forms).
        if values.iter().all(String::is_empty) {
            return Self {
                forms: Vec::new(),
                first: Box::default(),
            };
        }
        let mut forms: Vec<Vec<u8>> = Vec::new();
        for value in values.iter().filter(|v| !v.is_empty()) {
            let mut form = value.clone();
            forms.push(form.clone().into_bytes());
            for _ in 0..JSON_LAYERS {
                form = json_escaped(&form);
                forms.push(form.clone().into_bytes());
            }
            forms.push(value.escape_debug().to_string().into_bytes());
        }
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        forms.dedup();
        let mut first = vec![false; 256];
        if !forms.is_empty() {
            first[usize::from(b'%')] = true;
            first[usize::from(b'+')] = true;
        }
        for form in &forms {
            first[usize::from(form[0])] = true;
        }
        Self {
            forms,
            first: first.into(),
        }
    }

    /// The secret values the policy's `[http]` headers inject.
    pub fn from_policy(policy: &Policy) -> Self {
        Self::new(&policy.http().map_or_else(Vec::new, |h| h.secret_values()))
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Where the next secret starts at or after `from`, and where it ends.
    fn find(&self, text: &[u8], from: usize) -> Option<(usize, usize)> {
        if self.forms.is_empty() {
            return None;
        }
        (from..text.len())
            .filter(|&i| self.first[usize::from(text[i])])
            .find_map(|i| {
                self.forms
                    .iter()
                    .find_map(|form| matches_at(text, i, form))
                    .map(|end| (i, end))
            })
    }

    pub fn contains(&self, text: &[u8]) -> bool {
        self.find(text, 0).is_some()
    }

    /// `bytes` with every secret replaced by the marker; `None` when it holds none.
    pub fn redact_bytes(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let (mut start, mut end) = self.find(bytes, 0)?;
        let mut out = Vec::with_capacity(bytes.len());
        let mut copied = 0;
        loop {
            out.extend_from_slice(&bytes[copied..start]);
            out.extend_from_slice(REDACTED.as_bytes());
            copied = end;
            match self.find(bytes, end) {
                Some(next) => (start, end) = next,
                None => break,
            }
        }
        out.extend_from_slice(&bytes[copied..]);
        Some(out)
    }

    /// `text` with every secret replaced by the marker; `None` when it holds none.
    pub fn redact(&self, text: &str) -> Option<String> {
        // A match starts and ends on character boundaries: every form is whole characters,
        // and `%XX` and `+` are ASCII.
        self.redact_bytes(text.as_bytes())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A JSON document with every secret replaced and its structure kept: a secret in a string
    /// (or a key) is replaced inside it, and a number or literal that holds one becomes the
    /// string `"[redacted]"`. `Ok(None)` when it holds none; `bad_output` when a secret spans
    /// the document's structure (split across strings by the script), which no replacement
    /// inside a value removes.
    pub fn redact_json(&self, json: &str) -> Result<Option<String>, Error> {
        if !self.contains(json.as_bytes()) {
            return Ok(None);
        }
        let bytes = json.as_bytes();
        let mut out = String::with_capacity(json.len());
        let mut at = 0;
        while at < bytes.len() {
            let end = token_end(bytes, at);
            let token = &json[at..end];
            match bytes[at] {
                b'"' => out.push_str(&self.redact_string_token(token)),
                _ if self.contains(token.as_bytes()) => {
                    out.push('"');
                    out.push_str(REDACTED);
                    out.push('"');
                }
                _ => out.push_str(token),
            }
            at = end;
        }
        if self.contains(out.as_bytes()) {
            return Err(Error::BadOutput {
                detail: "the result held a secret value split across its JSON structure, which \
                         cannot be redacted"
                    .into(),
            });
        }
        Ok(Some(out))
    }

    /// A JSON string token (with its quotes), its text redacted, written as a JSON string.
    fn redact_string_token(&self, token: &str) -> String {
        match serde_json::from_str::<String>(token) {
            Ok(text) => match self.redact(&text) {
                Some(clean) => serde_json::to_string(&clean).unwrap_or_default(),
                None => token.to_owned(),
            },
            // A lone surrogate's escape (`"\ud800"`), which a Rust string cannot hold: the
            // whole string goes.
            Err(_) if self.contains(token.as_bytes()) => format!("\"{REDACTED}\""),
            Err(_) => token.to_owned(),
        }
    }

    /// `text`, redacted in place.
    pub fn scrub(&self, text: &mut String) {
        if let Some(clean) = self.redact(text) {
            *text = clean;
        }
    }

    /// An error with every text a script could have put a secret into redacted.
    pub fn redact_error(&self, error: Error) -> Error {
        if self.is_empty() {
            return error;
        }
        let clean = |mut text: String| {
            self.scrub(&mut text);
            text
        };
        match error {
            Error::PolicyDenied {
                capability,
                rule,
                reason,
                fix,
            } => Error::PolicyDenied {
                capability: clean(capability),
                rule: clean(rule),
                reason: clean(reason),
                fix: fix.map(|f| crate::Fix {
                    key: clean(f.key),
                    value: clean(f.value),
                }),
            },
            Error::GuestException {
                name,
                message,
                stack,
                location,
            } => Error::GuestException {
                name: clean(name),
                message: clean(message),
                stack: stack.map(clean),
                location,
            },
            Error::GuestSyntax {
                message,
                location,
                stack,
            } => Error::GuestSyntax {
                message: clean(message),
                location,
                stack: stack.map(clean),
            },
            Error::GuestDeadlock { detail } => Error::GuestDeadlock {
                detail: clean(detail),
            },
            Error::MissingExport { detail } => Error::MissingExport {
                detail: clean(detail),
            },
            Error::BadOutput { detail } => Error::BadOutput {
                detail: clean(detail),
            },
            Error::InvalidInput { detail, fix } => Error::InvalidInput {
                detail: clean(detail),
                fix,
            },
            Error::NotCompilable { detail } => Error::NotCompilable {
                detail: clean(detail),
            },
            Error::Internal { detail } => Error::Internal {
                detail: clean(detail),
            },
            other => other,
        }
    }
}

/// Where the JSON token starting at `json[at]` ends: a string with its quotes, a run of a
/// number's or literal's characters, or one byte of structure or whitespace. `json` is a valid
/// document, so everything outside its strings is ASCII.
fn token_end(json: &[u8], at: usize) -> usize {
    let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.');
    if json[at] == b'"' {
        let mut i = at + 1;
        while i < json.len() {
            match json[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        json.len()
    } else if word(json[at]) {
        json[at..]
            .iter()
            .position(|&b| !word(b))
            .map_or(json.len(), |n| at + n)
    } else {
        at + 1
    }
}

/// The text as it reads inside a JSON string (no quotes around it).
fn json_escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_owned()
}

/// Bytes of a form that count as the secret when the text stops after them (at its end, or at
/// the `…` that marks a cut): text cut anywhere, before or after redaction, must not keep a
/// prefix of a secret.
const CUT_PREFIX: usize = 8;

const ELLIPSIS: &[u8] = "…".as_bytes();

/// Where `form` ends when it starts at `text[at]`, each of its bytes written as itself, as
/// `%XX`, or (a space) as `+`; or where the text stops, cut, after at least `CUT_PREFIX` bytes
/// of it. A `%` of the form against `%25` is read both ways (encoded, or literal before `25`),
/// so the match follows every position it can have reached.
fn matches_at(text: &[u8], at: usize, form: &[u8]) -> Option<usize> {
    let mut ends = Ends::one(at);
    for (k, &want) in form.iter().enumerate() {
        let mut next = Ends::default();
        for &i in ends.as_slice() {
            let rest = &text[i..];
            if k >= CUT_PREFIX.min(form.len()) && (rest.is_empty() || rest.starts_with(ELLIPSIS)) {
                return Some(i);
            }
            let Some(&got) = rest.first() else {
                continue;
            };
            if got == want || (want == b' ' && got == b'+') {
                next.push(i + 1);
            }
            if got == b'%' && rest.get(1..3).and_then(hex_byte) == Some(want) {
                next.push(i + 3);
            }
        }
        if next.len == 0 {
            return None;
        }
        ends = next;
    }
    ends.as_slice().iter().copied().max()
}

/// The text positions a partial match can be at: few, since only a `%` is read two ways. Past
/// the capacity further positions are dropped (a form with more than three `%` against `%25`s).
#[derive(Default)]
struct Ends {
    at: [usize; 8],
    len: usize,
}

impl Ends {
    fn one(at: usize) -> Self {
        let mut ends = Self::default();
        ends.push(at);
        ends
    }

    fn push(&mut self, i: usize) {
        if self.len < self.at.len() && !self.as_slice().contains(&i) {
            self.at[self.len] = i;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[usize] {
        &self.at[..self.len]
    }
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16);
    Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = r#"to"k\en 42/é"#;

    fn secrets() -> Secrets {
        Secrets::new(&[SECRET.to_owned()])
    }

    #[test]
    fn every_form_is_redacted() {
        let s = secrets();
        let once = json_escaped(SECRET);
        let twice = json_escaped(&once);
        for text in [
            SECRET.to_owned(),
            once.clone(),
            twice.clone(),
            json_escaped(&twice),
            SECRET.escape_debug().to_string(),
            "to%22k%5Cen%2042%2F%C3%A9".to_owned(),
            "to%22k\\en+42/%c3%a9".to_owned(),
            "%74%6F%22k%5cen 42/é".to_owned(),
        ] {
            let wrapped = format!("before {text} after");
            assert_eq!(
                s.redact(&wrapped).as_deref(),
                Some("before [redacted] after"),
                "{text}"
            );
        }
    }

    #[test]
    fn json_stays_json_and_clean_text_is_untouched() {
        let s = secrets();
        let output = serde_json::json!({ "a": SECRET, "b": [format!("x{SECRET}y")] }).to_string();
        let clean = s.redact(&output).unwrap();
        let value: serde_json::Value = serde_json::from_str(&clean).unwrap();
        assert_eq!(value["a"], "[redacted]");
        assert_eq!(value["b"][0], "x[redacted]y");
        assert_eq!(s.redact("to\"k\\en 4 and %zz and +"), None);
        assert!(Secrets::new(&[]).redact(SECRET).is_none());
    }

    /// Issue 38, item 24: redaction never changes a JSON document's structure.
    #[test]
    fn json_keeps_its_structure_when_redacted() {
        let s = Secrets::new(&["12345678".to_owned(), "ab\"cd,ef".to_owned()]);
        // A number that holds a secret becomes a string; a key and a string are redacted
        // inside; a secret JSON-escaped in a string (its quote) too.
        let output = r#"{"n":12345678,"k12345678":[1,2.5e3,"x12345678y"],"q":"ab\"cd,ef"}"#;
        let clean = s.redact_json(output).unwrap().unwrap();
        assert_eq!(
            clean,
            r#"{"n":"[redacted]","k[redacted]":[1,2.5e3,"x[redacted]y"],"q":"[redacted]"}"#
        );
        serde_json::from_str::<serde_json::Value>(&clean).unwrap();
        assert_eq!(
            s.redact_json(r#"{"n":1234567,"s":"1234 5678"}"#).unwrap(),
            None
        );
        // A secret split across two strings cannot be replaced inside a value.
        let split = Secrets::new(&["abcd\",\"efgh".to_owned()]);
        let error = split.redact_json(r#"["abcd","efgh"]"#).unwrap_err();
        assert_eq!(error.code(), "bad_output");
    }

    #[test]
    fn a_percent_in_the_secret_matches_literally_or_encoded() {
        let s = Secrets::new(&["a%25b%q".to_owned()]);
        for text in ["a%25b%q", "a%2525b%25q", "a%25%32%35b%q", "a%2525b%q"] {
            assert_eq!(s.redact(text).as_deref(), Some("[redacted]"), "{text}");
        }
    }

    #[test]
    fn a_cut_secret_is_redacted_but_a_short_prefix_is_not() {
        let s = secrets();
        assert_eq!(s.redact("x: to\"k\\en 4").as_deref(), Some("x: [redacted]"));
        assert_eq!(
            s.redact("x: to%22k%5Cen%20…").as_deref(),
            Some("x: [redacted]…")
        );
        assert_eq!(s.redact("x: to\"k\\"), None);
    }

    #[test]
    fn binary_bodies_are_redacted_bytewise() {
        let s = Secrets::new(&["abc".to_owned()]);
        let body = [0xff, b'a', b'b', b'c', 0x00, b'a', b'%', b'6', b'2', b'c'];
        assert_eq!(
            s.redact_bytes(&body).unwrap(),
            [&[0xff][..], b"[redacted]", &[0], b"[redacted]"].concat()
        );
    }
}

//! The console of a standalone component (`palisade build`) under the Palisade host. The
//! standalone guest has no `palisade:sandbox/console` import: it writes each console line to
//! `wasi:cli/stderr` as `[level] text` and a newline. A call that runs one gets this stderr,
//! which reads the lines back into the call's [`Console`], under the policy's console cap, so
//! that its `logs` are those of the same script run from source.
//!
//! A line that starts with a level prefix begins a console entry; a line that does not continues
//! the entry before it (a message with newlines in it spans several lines), or, before any
//! entry, begins one at level `error` (raw text on stderr). An entry is complete when the next
//! one begins or the call ends; an unfinished last line counts as a line.
//!
//! The host keeps at most the cap's bytes of the entry being read, plus the few bytes of a line
//! whose prefix is not yet known; what goes past the cap is only counted, so a flood costs the
//! host no more memory than the console's cap, and the counts (and the truncation marker) are
//! those the console gives a script run from source.

use crate::bindings::palisade::sandbox::console::{Host as _, Level};
use crate::caps::console::Console;
use bytes::Bytes;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// The level prefixes the standalone guest writes (`guest-js/src/standalone/console.rs`).
const PREFIXES: [(&[u8], Level); 5] = [
    (b"[debug] ", Level::Debug),
    (b"[info] ", Level::Info),
    (b"[log] ", Level::Log),
    (b"[warn] ", Level::Warn),
    (b"[error] ", Level::Error),
];

/// How much one write may hand over: the guest writes at most 4 KiB at a time (`wasi:io`'s
/// blocking writes take no more), and every byte is taken at once.
const PERMIT: usize = 64 << 10;

/// The stderr of one standalone call: cheap to clone, every clone feeds the same console.
#[derive(Clone)]
pub(crate) struct StderrConsole(Arc<Mutex<Lines>>);

/// The state of the reading: the console, the line whose prefix is not yet known, the entry
/// being gathered.
struct Lines {
    console: Console,
    /// Bytes of text kept per entry: an entry longer than the cap is cut by the console anyway.
    cap: usize,
    /// At the start of a line: its first bytes, until they match a prefix or cannot.
    head: Option<Vec<u8>>,
    entry: Option<Entry>,
}

/// A console entry being read.
struct Entry {
    level: Level,
    /// Its text, at most the cap's bytes of it.
    text: Vec<u8>,
    /// Its bytes past the cap, counted but not kept.
    over: u64,
}

impl Entry {
    fn new(level: Level) -> Self {
        Entry {
            level,
            text: Vec::new(),
            over: 0,
        }
    }

    fn push(&mut self, bytes: &[u8], cap: usize) {
        let room = cap.saturating_sub(self.text.len()).min(bytes.len());
        self.text.extend_from_slice(&bytes[..room]);
        self.over += (bytes.len() - room) as u64;
    }
}

impl StderrConsole {
    /// A stderr that reads console lines into `console`, whose cap is `cap` bytes.
    pub(crate) fn new(console: Console, cap: u64) -> Self {
        StderrConsole(Arc::new(Mutex::new(Lines {
            console,
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            head: Some(Vec::new()),
            entry: None,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Lines> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The console, with the last entry (and an unfinished last line) in it; what is written
    /// after this starts a fresh console.
    pub(crate) fn finish(&self) -> Console {
        let mut lines = self.lock();
        // An unfinished last line counts as a line; nothing after the last newline is none.
        if lines.head.as_ref().is_none_or(|head| !head.is_empty()) {
            lines.end_line();
        }
        lines.complete();
        let cap = lines.cap as u64;
        std::mem::replace(&mut lines.console, Console::new(cap))
    }

    fn write(&self, bytes: &[u8]) {
        self.lock().feed(bytes);
    }
}

impl Lines {
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (line, newline) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            bytes = &bytes[line.len() + usize::from(newline)..];
            self.feed_line(line);
            if newline {
                self.end_line();
            }
        }
    }

    /// Bytes of the current line, with no newline among them.
    fn feed_line(&mut self, bytes: &[u8]) {
        let Some(head) = &mut self.head else {
            let cap = self.cap;
            if let Some(entry) = &mut self.entry {
                entry.push(bytes, cap);
            }
            return;
        };
        // Take bytes into the head only while it may still become a prefix.
        let longest = PREFIXES.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
        let take = longest.saturating_sub(head.len()).min(bytes.len());
        head.extend_from_slice(&bytes[..take]);
        let rest = &bytes[take..];
        if let Some((prefix, level)) = PREFIXES.iter().find(|(p, _)| head.starts_with(p)) {
            let after = head[prefix.len()..].to_vec();
            let level = *level;
            self.head = None;
            self.complete();
            let mut entry = Entry::new(level);
            entry.push(&after, self.cap);
            entry.push(rest, self.cap);
            self.entry = Some(entry);
        } else if !PREFIXES.iter().any(|(p, _)| p.starts_with(head)) {
            let head = self.head.take().unwrap_or_default();
            let cap = self.cap;
            let entry = self.continued();
            entry.push(&head, cap);
            entry.push(rest, cap);
        }
    }

    /// The end of a line: a line whose head is still undecided (short, or empty) continues the
    /// entry before it.
    fn end_line(&mut self) {
        if let Some(head) = self.head.take() {
            let cap = self.cap;
            self.continued().push(&head, cap);
        }
        self.head = Some(Vec::new());
    }

    /// The entry a line without a prefix continues, after the newline that joins them; before
    /// any entry, a new one at level `error`.
    fn continued(&mut self) -> &mut Entry {
        let cap = self.cap;
        match &mut self.entry {
            Some(entry) => entry.push(b"\n", cap),
            None => self.entry = Some(Entry::new(Level::Error)),
        }
        self.entry.as_mut().expect("set above")
    }

    /// Hand the entry being read to the console.
    fn complete(&mut self) {
        let Some(Entry {
            level,
            mut text,
            mut over,
        }) = self.entry.take()
        else {
            return;
        };
        let message = match String::from_utf8(text) {
            Ok(message) => message,
            Err(e) if e.utf8_error().error_len().is_none() => {
                // A character cut at the cap (or by a write that never finished): the
                // bytes of it that were kept count as dropped, as the rest of it does.
                let valid = e.utf8_error().valid_up_to();
                text = e.into_bytes();
                over += (text.len() - valid) as u64;
                text.truncate(valid);
                String::from_utf8(text).expect("the valid prefix is UTF-8")
            }
            // The standalone guest writes UTF-8; a forged component gets its bytes replaced.
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        self.console.log(level, message);
        self.console.count_dropped(over);
    }
}

impl IsTerminal for StderrConsole {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for StderrConsole {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for StderrConsole {
    async fn ready(&mut self) {}
}

#[wasmtime_wasi::async_trait]
impl OutputStream for StderrConsole {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        StderrConsole::write(self, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(PERMIT)
    }
}

impl tokio::io::AsyncWrite for StderrConsole {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        StderrConsole::write(&self, buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::console::{LINE_COST, Level as Kept, LogLine};

    fn read(cap: u64, writes: &[&[u8]]) -> Vec<LogLine> {
        let stderr = StderrConsole::new(Console::new(cap), cap);
        for bytes in writes {
            stderr.write(bytes);
        }
        stderr.finish().finish()
    }

    fn line(level: Kept, message: &str) -> LogLine {
        LogLine {
            level,
            message: message.to_owned(),
        }
    }

    #[test]
    fn prefixes_become_levels_and_lines_without_one_continue_the_entry() {
        let lines = read(
            1 << 16,
            &[
                b"[log] hello Ada\n[warn] care",
                b"ful\n[error] a\nb\n\n[debug] \n[info] x",
            ],
        );
        assert_eq!(
            lines,
            [
                line(Kept::Log, "hello Ada"),
                line(Kept::Warn, "careful"),
                line(Kept::Error, "a\nb\n"),
                line(Kept::Debug, ""),
                line(Kept::Info, "x"),
            ]
        );
    }

    #[test]
    fn a_prefix_split_across_writes_is_still_a_prefix() {
        let lines = read(1 << 16, &[b"[", b"wa", b"rn", b"] x\n[lo", b"\n"]);
        assert_eq!(lines, [line(Kept::Warn, "x\n[lo")]);
    }

    #[test]
    fn text_before_any_entry_is_an_error_line() {
        let lines = read(1 << 16, &[b"panicked at x\n[log] after\n"]);
        assert_eq!(
            lines,
            [line(Kept::Error, "panicked at x"), line(Kept::Log, "after")]
        );
    }

    #[test]
    fn an_entry_over_the_cap_is_cut_as_the_console_cuts_it() {
        // The same lines through the console directly, and through stderr in small writes.
        let cap = 100 + 2 * LINE_COST;
        let long = "é".repeat(200);
        let mut direct = Console::new(cap);
        direct.log(Level::Log, "short".into());
        direct.log(Level::Warn, long.clone());
        direct.log(Level::Log, "gone".into());
        let written = format!("[log] short\n[warn] {long}\n[log] gone\n");
        let writes: Vec<&[u8]> = written.as_bytes().chunks(7).collect();
        let stderr = StderrConsole::new(Console::new(cap), cap);
        for bytes in &writes {
            stderr.write(bytes);
        }
        let read = stderr.finish();
        assert_eq!(read.dropped(), direct.dropped());
        assert_eq!(read.dropped_lines(), direct.dropped_lines());
        assert_eq!(read.finish(), direct.finish());
    }

    #[test]
    fn a_flood_keeps_no_more_than_the_cap() {
        let stderr = StderrConsole::new(Console::new(1000), 1000);
        let chunk = [b'x'; 4096];
        stderr.write(b"[log] ");
        for _ in 0..1000 {
            stderr.write(&chunk);
        }
        assert!(stderr.lock().entry.as_ref().unwrap().text.len() <= 1000);
        let console = stderr.finish();
        assert_eq!(console.dropped(), 4096 * 1000 - (1000 - LINE_COST));
        let lines = console.finish();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].message.len() as u64, 1000 - LINE_COST);
    }
}

//! `palisade:sandbox/console`: console lines kept up to the policy's byte cap.

use crate::bindings::palisade::sandbox::console::{self, Level as WitLevel};
use serde::Serialize;
use wasmtime::component::{HasSelf, Linker};

/// The console method that produced a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `console.debug`.
    Debug,
    /// `console.info`.
    Info,
    /// `console.log`.
    Log,
    /// `console.warn`.
    Warn,
    /// `console.error`.
    Error,
}

/// One console line of a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// The console method that wrote it.
    pub level: Level,
    /// The line's text, as the console formatted its arguments.
    pub message: String,
}

/// What each kept line costs against the cap besides its text: the host keeps a record per
/// line ([`LogLine`], 32 bytes on 64-bit hosts), so that empty lines are counted too and the
/// cap bounds both the number of lines and the host memory they take.
pub(crate) const LINE_COST: u64 = std::mem::size_of::<LogLine>() as u64;

/// Console lines of one call, capped in bytes: each line costs its UTF-8 length plus
/// [`LINE_COST`].
#[derive(Debug, Default)]
pub(crate) struct Console {
    lines: Vec<LogLine>,
    kept: u64,
    cap: u64,
    dropped: u64,
    dropped_lines: u64,
    /// The embedder's callback, which gets each kept line as it is written, with the policy's
    /// secret values redacted as the outcome's lines are.
    sink: Option<(crate::EventSink, crate::secrets::Secrets)>,
}

impl Console {
    pub fn new(cap: u64) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    /// Also hand each kept line to `sink` as it is written, with `secrets` redacted.
    pub fn stream_to(
        mut self,
        sink: Option<crate::EventSink>,
        secrets: impl FnOnce() -> crate::secrets::Secrets,
    ) -> Self {
        self.sink = sink.map(|sink| (sink, secrets()));
        self
    }

    fn push(&mut self, level: Level, mut message: String) {
        let room = self.cap - self.kept;
        let len = message.len() as u64;
        if len + LINE_COST > room {
            // Whatever does not fit is dropped; a line is kept (cut) only while its record
            // and at least one byte of text fit.
            let mut cut = room.saturating_sub(LINE_COST).min(len) as usize;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            self.dropped += len - cut as u64;
            if cut == 0 {
                self.dropped_lines += 1;
                return;
            }
            message.truncate(cut);
        }
        self.kept += message.len() as u64 + LINE_COST;
        let line = LogLine { level, message };
        if let Some((sink, secrets)) = &self.sink {
            let mut streamed = line.clone();
            secrets.scrub(&mut streamed.message);
            sink.send(crate::Event::Console(streamed));
        }
        self.lines.push(line);
    }

    /// Count `bytes` of a line's text that were dropped before they reached the console (a
    /// standalone component's stderr keeps no more of a line than the cap).
    pub(crate) fn count_dropped(&mut self, bytes: u64) {
        self.dropped += bytes;
    }

    /// Lines dropped whole because the cap was reached.
    pub fn dropped_lines(&self) -> u64 {
        self.dropped_lines
    }

    /// Bytes of text that did not fit under the cap.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept lines, plus a marker line when anything was dropped.
    pub fn finish(self) -> Vec<LogLine> {
        let mut lines = self.lines;
        if self.dropped > 0 || self.dropped_lines > 0 {
            lines.push(LogLine {
                level: Level::Warn,
                message: format!(
                    "[palisade] console output truncated: {} bytes of text and {} whole line(s) over the \
                     {}-byte cap were dropped",
                    self.dropped, self.dropped_lines, self.cap
                ),
            });
        }
        lines
    }
}

impl console::Host for Console {
    fn log(&mut self, level: WitLevel, message: String) {
        let level = match level {
            WitLevel::Debug => Level::Debug,
            WitLevel::Info => Level::Info,
            WitLevel::Log => Level::Log,
            WitLevel::Warn => Level::Warn,
            WitLevel::Error => Level::Error,
        };
        self.push(level, message);
    }
}

/// Link `palisade:sandbox/console` to the call's [`Console`], which `console` finds in the
/// store's state.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    console: fn(&mut T) -> &mut Console,
) -> wasmtime::Result<()> {
    console::add_to_linker::<T, HasSelf<Console>>(linker, console)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_kept_up_to_the_cap_then_marked() {
        let mut console = Console::new(10 + 2 * LINE_COST);
        console.push(Level::Log, "hello".into());
        console.push(Level::Log, "wörld!".into()); // 7 bytes, 5 fit
        console.push(Level::Log, "more".into());
        assert_eq!(console.dropped(), 2 + 4);
        assert_eq!(console.dropped_lines(), 1);
        let lines = console.finish();
        assert_eq!(lines[0].message, "hello");
        assert_eq!(lines[1].message, "wörl");
        assert_eq!(lines.len(), 3);
        assert!(
            lines[2]
                .message
                .contains("6 bytes of text and 1 whole line(s)"),
            "{}",
            lines[2].message
        );
    }

    #[test]
    fn empty_lines_cost_their_record() {
        let mut console = Console::new(0);
        for _ in 0..1000 {
            console.push(Level::Log, String::new());
        }
        assert_eq!(console.dropped_lines(), 1000);
        let mut console = Console::new(10 * LINE_COST);
        for _ in 0..1000 {
            console.push(Level::Log, String::new());
        }
        assert_eq!(console.dropped_lines(), 990);
        assert_eq!(console.finish().len(), 11);
    }
}

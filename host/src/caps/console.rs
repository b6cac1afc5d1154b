//! `palisade:sandbox/console`: console lines kept up to the policy's byte cap.

use crate::call::{CallState, Level, LogLine};
use crate::engine::bindings::palisade::sandbox::console::{self, Level as WitLevel};

/// Console lines of one call, capped in bytes.
#[derive(Debug, Default)]
pub(crate) struct Console {
    lines: Vec<LogLine>,
    kept: u64,
    cap: u64,
    dropped: u64,
}

impl Console {
    pub fn new(cap: u64) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    fn push(&mut self, level: Level, mut message: String) {
        let room = self.cap - self.kept;
        let len = message.len() as u64;
        if len > room {
            let mut cut = room as usize;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            self.dropped += len - cut as u64;
            if cut == 0 {
                return;
            }
            message.truncate(cut);
        }
        self.kept += message.len() as u64;
        self.lines.push(LogLine { level, message });
    }

    /// Bytes that did not fit under the cap.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept lines, plus a marker line when anything was dropped.
    pub fn finish(self) -> Vec<LogLine> {
        let mut lines = self.lines;
        if self.dropped > 0 {
            lines.push(LogLine {
                level: Level::Warn,
                message: format!(
                    "[palisade] console output truncated: {} bytes over the {}-byte cap were dropped",
                    self.dropped, self.cap
                ),
            });
        }
        lines
    }
}

impl console::Host for CallState {
    fn log(&mut self, level: WitLevel, message: String) {
        let level = match level {
            WitLevel::Debug => Level::Debug,
            WitLevel::Info => Level::Info,
            WitLevel::Log => Level::Log,
            WitLevel::Warn => Level::Warn,
            WitLevel::Error => Level::Error,
        };
        self.console.push(level, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_kept_up_to_the_cap_then_marked() {
        let mut console = Console::new(10);
        console.push(Level::Log, "hello".into());
        console.push(Level::Log, "wörld!".into()); // 7 bytes, 5 fit
        console.push(Level::Log, "more".into());
        assert_eq!(console.dropped(), 2 + 4);
        let lines = console.finish();
        assert_eq!(lines[0].message, "hello");
        assert_eq!(lines[1].message, "wörl");
        assert_eq!(lines.len(), 3);
        assert!(lines[2].message.contains("6 bytes"));
    }
}

//! Transcript lines: the one-line outcome of each question or refusal (`Approved: …`,
//! `Denied: …`, `Denied (timed out): …`, `Blocked: … (rule …)`), on fence's stderr when
//! the wrapped program does not own the terminal (SPEC §3, §5), and in the audit log.
//!
//! "Owns the terminal": fence's stderr is a terminal and that terminal is out of canonical
//! mode (raw or cbreak: an editor, an agent's full-screen interface, a shell's line editor
//! at its prompt). A line printed then would draw over the program's screen, so the line
//! goes only to the log (and to `fence approvals`). A terminal in canonical mode (a build,
//! a test run) gets the line like any other output; a pipe or file always gets it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::escape::for_terminal;

/// Where transcript lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptTarget {
    /// fence's stderr, unless the wrapped program owns the terminal at that moment.
    Stderr,
    /// Nowhere but the log (tests of the gate).
    #[cfg_attr(not(test), allow(dead_code))]
    LogOnly,
}

/// How many lines wait for the writer at most. A stderr nobody reads (a full pipe, a
/// pager not scrolled) blocks the writer while the sandbox can be refused thousands of
/// calls a second, each a line: an unbounded queue grew fence's memory without end. Lines
/// past this are dropped from stderr (the log keeps them).
const LINES_QUEUED: usize = 1024;

/// How many bytes of lines wait for the writer at most: a refused path may be 4 kB long,
/// and 1,024 such lines held as many megabytes (with the allocator's slack, twice that).
const BYTES_QUEUED: usize = 256 * 1024;

/// Lines held back while the program owned the terminal, repeated when the session ends
/// (at most this many; the rest are counted).
const UNSHOWN_REPEATED: usize = 5;

/// Lines are handed to a writer thread: a stderr nobody reads (a full pipe) must not stall
/// the notification loop.
pub struct Transcript {
    target: TranscriptTarget,
    lines: Mutex<Option<SyncSender<String>>>,
    written: Mutex<Option<Receiver<()>>>,
    /// Bytes of the lines queued or being written.
    queued: Arc<AtomicUsize>,
    /// The lines not shown (held back while the program owned the terminal, or dropped
    /// from a full queue), said when the session ends: an agent's full-screen interface
    /// hides every refusal of its session otherwise.
    unshown: Arc<Mutex<Unshown>>,
}

/// What the session's end says of the lines not shown.
#[derive(Debug, Default)]
struct Unshown {
    held_back: usize,
    first: Vec<String>,
    dropped: usize,
}

impl Unshown {
    fn hold(&mut self, line: String) {
        self.held_back += 1;
        if self.first.len() < UNSHOWN_REPEATED {
            self.first.push(line);
        }
    }

    /// The lines said at the end, each without `fence: ` and a newline; none when every
    /// line was shown.
    fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.held_back > 0 {
            out.push(format!(
                "{} transcript line{} of this session {} not shown while the program held the terminal:",
                self.held_back,
                if self.held_back == 1 { "" } else { "s" },
                if self.held_back == 1 { "was" } else { "were" },
            ));
            out.extend(self.first.iter().map(|l| format!("  {l}")));
            let more = self.held_back - self.first.len();
            if more > 0 {
                out.push(format!(
                    "  and {more} more (--log FILE and fence approvals keep them all)"
                ));
            }
        }
        if self.dropped > 0 {
            out.push(format!(
                "{} transcript line{} dropped: fence's stderr was not read fast enough",
                self.dropped,
                if self.dropped == 1 { " was" } else { "s were" },
            ));
        }
        out
    }
}

/// The four kinds of line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<'a> {
    Approved,
    /// A person said No (with a reason, or not).
    Denied {
        reason: Option<&'a str>,
    },
    /// Nobody could be asked (`why`: no approver, the session ending…).
    Unanswered {
        why: &'a str,
    },
    TimedOut,
    Blocked {
        rule: &'a str,
    },
}

impl Transcript {
    pub fn new(target: TranscriptTarget) -> Transcript {
        let queued = Arc::new(AtomicUsize::new(0));
        let unshown = Arc::new(Mutex::new(Unshown::default()));
        let held = unshown.clone();
        let (lines, written) = if target == TranscriptTarget::Stderr {
            let (tx, rx) = mpsc::sync_channel::<String>(LINES_QUEUED);
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let writing = queued.clone();
            let spawned = std::thread::Builder::new()
                .name("fence-transcript".into())
                .spawn(move || {
                    for line in rx {
                        writing.fetch_sub(line.len(), Ordering::Relaxed);
                        if program_owns_terminal() {
                            held.lock().unwrap_or_else(|e| e.into_inner()).hold(line);
                        } else {
                            // One write: the sandbox's processes share this stderr, and
                            // a line written in pieces interleaves with theirs.
                            let mut err = std::io::stderr().lock();
                            let _ = err.write_all(format!("fence: {line}\n").as_bytes());
                        }
                    }
                    let _ = done_tx.send(());
                });
            match spawned {
                Ok(_) => (Some(tx), Some(done_rx)),
                Err(_) => (None, None),
            }
        } else {
            (None, None)
        };
        Transcript {
            target,
            lines: Mutex::new(lines),
            written: Mutex::new(written),
            queued,
            unshown,
        }
    }

    /// The line for `subject` (already escaped), without a newline.
    pub fn line(subject: &str, outcome: &Outcome<'_>) -> String {
        match outcome {
            Outcome::Approved => format!("Approved: {subject}"),
            Outcome::Denied { reason: None } => format!("Denied: {subject}"),
            Outcome::Denied {
                reason: Some(reason),
            } => format!("Denied: {subject} (reason: {})", for_terminal(reason)),
            Outcome::Unanswered { why } => format!("Denied: {subject} ({why})"),
            Outcome::TimedOut => format!("Denied (timed out): {subject}"),
            Outcome::Blocked { rule } => format!("Blocked: {subject} (rule {rule})"),
        }
    }

    /// Shows `line` on fence's stderr where that is allowed (written by the transcript's
    /// thread; this never waits on stderr).
    pub fn show(&self, line: &str) {
        if self.target != TranscriptTarget::Stderr {
            return;
        }
        if let Some(tx) = self
            .lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            // Never waits: a line that finds the queue full (in lines or in bytes) is
            // dropped.
            let len = line.len();
            let dropped = if self.queued.fetch_add(len, Ordering::Relaxed) + len > BYTES_QUEUED {
                true
            } else {
                tx.try_send(line.to_string()).is_err()
            };
            if dropped {
                self.queued.fetch_sub(len, Ordering::Relaxed);
                self.unshown
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .dropped += 1;
            }
        }
    }

    /// Writes out the lines still queued (waiting at most a second for a stderr that does
    /// not drain); later lines are dropped. Then says which lines were not shown: the
    /// session's terminal is the user's again by now.
    pub fn close(&self) {
        drop(self.lines.lock().unwrap_or_else(|e| e.into_inner()).take());
        let Some(done) = self
            .written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return;
        };
        if done.recv_timeout(Duration::from_secs(1)).is_err() {
            return;
        }
        let summary = self
            .unshown
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .summary();
        if !summary.is_empty() {
            let text: String = summary.iter().map(|l| format!("fence: {l}\n")).collect();
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }
}

/// Whether fence's stderr is a terminal in non-canonical mode (see the module doc).
pub fn program_owns_terminal() -> bool {
    if !std::io::stderr().is_terminal() {
        return false;
    }
    // SAFETY: termios is plain data; tcgetattr writes it for a valid descriptor.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: as above, on descriptor 2.
    if unsafe { libc::tcgetattr(2, &mut t) } != 0 {
        return true;
    }
    t.c_lflag & libc::ICANON == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_not_shown_are_summed_up_at_the_end() {
        let mut u = Unshown::default();
        assert!(u.summary().is_empty());
        for i in 0..7 {
            u.hold(format!("Blocked: write {i} (rule fence.protected-path)"));
        }
        u.dropped = 1;
        let s = u.summary();
        assert_eq!(
            s[0],
            "7 transcript lines of this session were not shown while the program held the terminal:"
        );
        assert_eq!(s[1], "  Blocked: write 0 (rule fence.protected-path)");
        assert_eq!(s.len(), 1 + UNSHOWN_REPEATED + 2);
        assert!(s[6].starts_with("  and 2 more"), "{s:?}");
        assert_eq!(
            s[7],
            "1 transcript line was dropped: fence's stderr was not read fast enough"
        );
    }

    #[test]
    fn lines_read_as_the_spec_writes_them() {
        assert_eq!(
            Transcript::line("git reset --hard HEAD~1", &Outcome::Approved),
            "Approved: git reset --hard HEAD~1"
        );
        assert_eq!(
            Transcript::line("npm install -g serve", &Outcome::Denied { reason: None }),
            "Denied: npm install -g serve"
        );
        assert_eq!(
            Transcript::line("sudo apt install jq", &Outcome::TimedOut),
            "Denied (timed out): sudo apt install jq"
        );
        assert_eq!(
            Transcript::line(
                "git push origin main",
                &Outcome::Blocked {
                    rule: "git.push-main"
                }
            ),
            "Blocked: git push origin main (rule git.push-main)"
        );
    }

    #[test]
    fn the_reason_of_a_no_is_escaped() {
        let l = Transcript::line(
            "rm x",
            &Outcome::Denied {
                reason: Some("use \x1b[31mgit rm\u{202e}"),
            },
        );
        assert_eq!(l, "Denied: rm x (reason: use \\x1b[31mgit rm\\u{202e})");
    }
}

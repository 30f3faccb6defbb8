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

#[derive(Debug, Clone, Copy)]
pub struct Transcript {
    target: TranscriptTarget,
}

/// The four kinds of line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<'a> {
    Approved,
    Denied { reason: Option<&'a str> },
    TimedOut,
    Blocked { rule: &'a str },
}

impl Transcript {
    pub fn new(target: TranscriptTarget) -> Transcript {
        Transcript { target }
    }

    /// The line for `subject` (already escaped), without a newline.
    pub fn line(subject: &str, outcome: &Outcome<'_>) -> String {
        match outcome {
            Outcome::Approved => format!("Approved: {subject}"),
            Outcome::Denied { reason: None } => format!("Denied: {subject}"),
            Outcome::Denied {
                reason: Some(reason),
            } => format!("Denied: {subject} (reason: {})", for_terminal(reason)),
            Outcome::TimedOut => format!("Denied (timed out): {subject}"),
            Outcome::Blocked { rule } => format!("Blocked: {subject} (rule {rule})"),
        }
    }

    /// Shows `line` on fence's stderr where that is allowed.
    pub fn show(&self, line: &str) {
        if self.target == TranscriptTarget::Stderr && !program_owns_terminal() {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "fence: {line}");
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

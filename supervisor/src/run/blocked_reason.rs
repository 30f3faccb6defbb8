//! Blocked reasons written to the offending process's own stderr, so an agent reading the
//! command's output learns why a call failed.
//!
//! The line goes through the process's descriptor 2 (fetched with `pidfd_getfd`, so it
//! appends where the process writes) and never blocks the supervisor: it is written only
//! when `poll` says there is room, and a line shorter than PIPE_BUF then fits at once.

use std::io::Write;
use std::os::fd::AsRawFd;

use super::path_resolve::Caller;
use super::pidfd;
use crate::escape::bytes_for_terminal;

/// Why a call was refused: what, on which object, by which rule.
#[derive(Debug, Clone)]
pub struct BlockedReason {
    /// e.g. "write outside the worktree".
    pub what: String,
    /// The object (path, argv) as raw bytes; escaped when shown.
    pub object: Vec<u8>,
    /// Rule id, e.g. `fence.write-outside`.
    pub rule: String,
    /// How a question about it was answered (`denied: use the staging remote`, `no answer
    /// in time`), when it was asked.
    pub answer: Option<String>,
}

impl BlockedReason {
    pub fn line(&self) -> String {
        match &self.answer {
            None => format!(
                "fence: blocked {}: {} (rule {})\n",
                self.what,
                bytes_for_terminal(&self.object),
                self.rule
            ),
            Some(answer) => format!(
                "fence: blocked {}: {} (rule {}): {}\n",
                self.what,
                bytes_for_terminal(&self.object),
                self.rule,
                crate::escape::for_terminal(answer)
            ),
        }
    }
}

/// Writes the reason line to `caller`'s stderr, if that can be done without waiting.
pub fn tell(caller: Caller, reason: &BlockedReason) {
    let Ok(pidfd) = pidfd::open(caller) else {
        return;
    };
    let Ok(stderr) = pidfd::get_fd(&pidfd, 2) else {
        return;
    };
    let mut pfd = libc::pollfd {
        fd: stderr.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
    if ready != 1 || pfd.revents & libc::POLLOUT == 0 {
        return;
    }
    let mut line = reason.line().into_bytes();
    line.truncate(libc::PIPE_BUF);
    let mut file = std::fs::File::from(stderr);
    let _ = file.write(&line);
}

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

/// Rules whose refusals come again and again for the same object, told once per object in
/// a session: a datagram to the same resolver (npm retried its lookups for a minute), each
/// a line an agent reads.
const TOLD_ONCE: &[&str] = &["fence.net-datagram"];

/// Rules whose refusals the process is not told on its stderr, only fence's transcript and
/// log: a tool's lock or state file in the home, which the tool goes on without (cargo
/// tried its locks 17 times a command). A line in the tool's own stderr changed its output
/// for nothing (`cargo metadata 2>&1 | jq`, a snapshot test of cargo's messages).
const NOT_TOLD: &[&str] = &["fence.tool-state"];

/// Whether `reason` is to be told: always, but never for [`NOT_TOLD`] rules, and for
/// [`TOLD_ONCE`] rules only the first time its object is refused in this session (up to
/// 1,024 objects remembered).
fn worth_telling(reason: &BlockedReason) -> bool {
    static TOLD: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
    if NOT_TOLD.contains(&reason.rule.as_str()) {
        return false;
    }
    if !TOLD_ONCE.contains(&reason.rule.as_str()) {
        return true;
    }
    let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
    if told.contains(&reason.object) {
        return false;
    }
    if told.len() < 1024 {
        told.push(reason.object.clone());
    }
    true
}

/// Writes the reason line to `caller`'s stderr, if that can be done without waiting.
pub fn tell(caller: Caller, reason: &BlockedReason) {
    if !worth_telling(reason) {
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A datagram refused again and again is told once, a tool's lock never (fence's
    /// transcript has it); other refusals every time.
    #[test]
    fn repeated_refusals_are_told_once_per_object_and_tool_state_never() {
        let reason = |rule: &str, object: &[u8]| BlockedReason {
            what: "write".into(),
            object: object.to_vec(),
            rule: rule.into(),
            answer: None,
        };
        let lock = reason("fence.tool-state", b"/home/u/.cargo/.package-cache");
        assert!(!worth_telling(&lock));
        let datagram = reason("fence.net-datagram", b"10.0.0.1:53");
        assert!(worth_telling(&datagram));
        assert!(!worth_telling(&datagram));
        assert!(worth_telling(&reason("fence.net-datagram", b"10.0.0.2:53")));
        let outside = reason("fence.write-outside", b"/etc/x");
        assert!(worth_telling(&outside));
        assert!(worth_telling(&outside));
    }
}

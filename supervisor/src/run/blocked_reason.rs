//! Blocked reasons written to the offending process's own stderr, so an agent reading the
//! command's output learns why a call failed.
//!
//! The line goes through the process's descriptor 2 (fetched with `pidfd_getfd`, so it
//! appends where the process writes) and never blocks the supervisor, whatever the
//! descriptor is ([`write_without_waiting`]): a line that finds no room is dropped (fence's
//! transcript and log still have it). The sandbox chooses its descriptor 2: a socket whose
//! peer never reads, or a terminal of its own that nothing drains, would otherwise hold the
//! notification loop, and every process's next notified call with it.

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
    let mut line = reason.line().into_bytes();
    line.truncate(libc::PIPE_BUF);
    write_without_waiting(stderr, &line);
}

/// Writes `line` to `fd` (a descriptor of the sandbox's, fetched), or as much of it as fits
/// at once, without ever waiting: `poll`'s room is no promise for a whole line (a socket
/// is writable with a few bytes of its buffer free, a terminal with any), and the
/// descriptor's own blocking mode is the sandbox's to choose.
/// - A socket: `send` with `MSG_DONTWAIT`.
/// - A regular file: written (no reader to wait for).
/// - A pipe or FIFO: `pwritev2` with `RWF_NOWAIT`. On a kernel without it for pipes,
///   through a description of its own opened non-blocking ([`write_reopened`]); where
///   fence may not open it (another account's pipe, such as the one a command's output is
///   captured in, whose reader is outside the sandbox), once `poll` says there is room, as
///   before the session: a line of PIPE_BUF bytes then fits unless another writer fills the
///   pipe first.
/// - A terminal: through a description of its own opened non-blocking. Not the
///   pseudo-terminal multiplexer, whose every open makes a new terminal.
/// - Anything else: nothing.
fn write_without_waiting(fd: std::os::fd::OwnedFd, line: &[u8]) {
    let Ok(st) = nix::sys::stat::fstat(&fd) else {
        return;
    };
    match st.st_mode & libc::S_IFMT {
        libc::S_IFSOCK => {
            // SAFETY: send from a valid buffer on a descriptor we own.
            unsafe {
                libc::send(
                    fd.as_raw_fd(),
                    line.as_ptr().cast(),
                    line.len(),
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                )
            };
        }
        libc::S_IFREG => {
            let _ = std::fs::File::from(fd).write(line);
        }
        libc::S_IFIFO => {
            let iov = libc::iovec {
                iov_base: line.as_ptr() as *mut libc::c_void,
                iov_len: line.len(),
            };
            // SAFETY: one iovec over a valid buffer; offset -1 writes at the current one.
            let ret = unsafe { libc::pwritev2(fd.as_raw_fd(), &iov, 1, -1, libc::RWF_NOWAIT) };
            let unsupported = ret < 0
                && matches!(
                    std::io::Error::last_os_error().raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EINVAL)
                );
            if !unsupported || write_reopened(&fd, &st, line) {
                return;
            }
            let mut pfd = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one valid pollfd, zero timeout.
            let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
            if ready == 1 && pfd.revents & libc::POLLOUT != 0 {
                let _ = std::fs::File::from(fd).write(line);
            }
        }
        libc::S_IFCHR => {
            let terminal = nix::unistd::isatty(&fd).unwrap_or(false);
            if terminal && st.st_rdev != libc::makedev(5, 2) {
                write_reopened(&fd, &st, line);
            }
        }
        _ => {}
    }
}

/// Writes `line` through a description of `fd`'s object of fence's own, opened
/// non-blocking from fence's `/proc/self/fd` link once it is known to be the same object
/// (`st`). False where it cannot be opened (no reader for a pipe's writer: nothing would
/// read the line; a pipe or terminal fence may not open).
fn write_reopened(fd: &std::os::fd::OwnedFd, st: &nix::sys::stat::FileStat, line: &[u8]) -> bool {
    let Ok(own) = nix::fcntl::open(
        format!("/proc/self/fd/{}", fd.as_raw_fd()).as_str(),
        nix::fcntl::OFlag::O_WRONLY
            | nix::fcntl::OFlag::O_NONBLOCK
            | nix::fcntl::OFlag::O_NOCTTY
            | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    ) else {
        return false;
    };
    let same = nix::sys::stat::fstat(&own).is_ok_and(|o| {
        (o.st_dev, o.st_ino, o.st_rdev, o.st_mode & libc::S_IFMT)
            == (st.st_dev, st.st_ino, st.st_rdev, st.st_mode & libc::S_IFMT)
    });
    if same {
        let _ = std::fs::File::from(own).write(line);
    }
    true
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

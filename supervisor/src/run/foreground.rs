//! The user's terminal while fence runs in the background: the calls that take its
//! foreground (`ioctl(TIOCSPGRP)`, `tcsetpgrp`), change it for whoever holds it (the
//! `TCSETS` family, `tcsetattr`; `TCFLSH`, which drops what was typed), or join another
//! process group of the user's session (`setpgid`).
//!
//! The sandbox runs in the user's terminal session (an interactive shell in it needs job
//! control), and a process that ignores `SIGTTOU` may make these calls even from the
//! background. While fence runs as a background job (started with `&`, or sent on with
//! Ctrl-Z and `bg`), the terminal's foreground is the user's shell or a job it runs:
//! taking it would stop that job at its next read (the shell's read fails, and the shell
//! ends) and hand the sandbox what the user types there; changing its settings would leave
//! the user's shell without echo or Ctrl-C.
//!
//! Security boundary: fence *holds* its terminals while each one's foreground process
//! group was fence's own when the session started or when fence was last continued after
//! a stop (the user's shell gives a job the terminal before it continues it: `fg`; `bg`
//! does not). While fence holds them, the sandbox may do with them what a foreground job
//! does (an interactive shell in it gives its own jobs the terminal and takes it back);
//! while it does not, these calls are refused (EPERM) with a reason, whatever descriptor
//! they name. Only fence's own stop and continue change the state, and the sandbox is
//! stopped whole before fence stops: nothing the sandbox does can make fence hold a
//! terminal. A terminal that is not fence's controlling terminal (fence started in a
//! session of its own) gives the sandbox no job control over it: it counts as held.
//! Without a terminal of fence's, the sandbox reaches only terminals of its own making.
//!
//! `setpgid` matters only without a pid namespace, where the sandbox can name the user's
//! process groups: joining the user's shell's group would put a sandboxed process in the
//! terminal's foreground whenever the shell is, to read what the user types. A process may
//! make a group of its own or join a group whose processes all belong to the sandbox.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

use super::listener::{Notification, Response};
use super::question::Outcome;
use crate::gate::EventKind;

/// fence's terminals and whether it holds them.
pub struct Guard {
    /// fence's own descriptors of the terminals it was handed (see `terminal.rs`).
    terminals: Vec<RawFd>,
    holds: AtomicBool,
}

impl Guard {
    pub fn new(terminals: Vec<RawFd>) -> Guard {
        let guard = Guard {
            terminals,
            holds: AtomicBool::new(false),
        };
        guard.look_again();
        guard
    }

    /// Whether fence holds its terminals now (at the start, and once continued).
    pub fn look_again(&self) {
        // SAFETY: getpgrp takes no arguments.
        let own = unsafe { libc::getpgrp() };
        let holds = self.terminals.iter().all(|&fd| {
            // SAFETY: tcgetpgrp on fence's own descriptor.
            let foreground = unsafe { libc::tcgetpgrp(fd) };
            foreground == own
                || (foreground < 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOTTY))
        });
        self.holds.store(holds, Ordering::SeqCst);
    }

    /// fence is about to stop: the user's shell takes the terminal.
    pub fn let_go(&self) {
        self.holds.store(false, Ordering::SeqCst);
    }

    /// Answers a guarded terminal call of the sandbox (the filter sends the requests of
    /// `shim::seccomp_filters::GUARDED_TERMINAL_REQUESTS`).
    pub fn check(&self) -> Outcome {
        let event = EventKind::Signal;
        if self.terminals.is_empty() || self.holds.load(Ordering::SeqCst) {
            return super::write_check::allowed(event, Vec::new(), Response::Continue);
        }
        super::write_check::refused(
            event,
            libc::EPERM,
            "changing the terminal or taking its foreground while fence runs in the background",
            &terminal_name(self.terminals[0]),
            "fence.terminal-foreground",
        )
    }
}

/// Answers `setpgid(pid, pgid)` (registers: race-free). With a pid namespace the kernel
/// names only the sandbox's groups; without one, a group other than a new one of the
/// process's own must hold only processes of the sandbox whose init is `init`.
pub fn setpgid(n: &Notification, own_pid_namespace: bool, init: libc::pid_t) -> Outcome {
    let event = EventKind::Signal;
    let allowed = || super::write_check::allowed(event, Vec::new(), Response::Continue);
    let (pid, pgid) = (n.args[0] as i32, n.args[1] as i32);
    if own_pid_namespace || pgid == 0 || (pid != 0 && pgid == pid) {
        return allowed();
    }
    let processes = Processes::read(init);
    // The caller's own pid as a group (`setpgid(0, getpid())`): a new group of its own.
    if pid == 0 && processes.thread_group_of(n.tid) == Some(pgid) {
        return allowed();
    }
    let mut members = processes
        .all
        .iter()
        .filter(|(_, (_, pgrp))| *pgrp == pgid)
        .map(|(&p, _)| p)
        .peekable();
    // No such group: the kernel says so (EPERM).
    if members.peek().is_none() || members.all(|p| processes.in_sandbox(p)) {
        return allowed();
    }
    super::write_check::refused(
        event,
        libc::EPERM,
        "joining a process group outside the sandbox",
        pgid.to_string().as_bytes(),
        "fence.process-group",
    )
}

/// Every process of the system at one look: pid → (ppid, pgrp), host numbers.
struct Processes {
    all: HashMap<libc::pid_t, (libc::pid_t, libc::pid_t)>,
    init: libc::pid_t,
}

impl Processes {
    fn read(init: libc::pid_t) -> Processes {
        let all = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
            .filter_map(|pid| Some((pid, stat_fields(pid)?)))
            .collect();
        Processes { all, init }
    }

    /// Whether `pid` is the init or descends from it: the sandbox's processes (the init is
    /// their reaper, as a subreaper).
    fn in_sandbox(&self, pid: libc::pid_t) -> bool {
        let mut at = pid;
        for _ in 0..=self.all.len() {
            if at == self.init {
                return true;
            }
            match self.all.get(&at) {
                Some(&(ppid, _)) if at > 1 => at = ppid,
                _ => return false,
            }
        }
        false
    }

    /// The process (thread group) thread `tid` belongs to, when it is one of those read.
    fn thread_group_of(&self, tid: libc::pid_t) -> Option<libc::pid_t> {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
    }
}

/// `(ppid, pgrp)` of `pid`, from `/proc/PID/stat` (the fields after the name, which may
/// hold any character, end with the last `)`).
fn stat_fields(pid: libc::pid_t) -> Option<(libc::pid_t, libc::pid_t)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = stat.rsplit_once(')')?.1.split_ascii_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some((ppid, pgrp))
}

/// The terminal's name for a reason line (`/dev/pts/3`).
fn terminal_name(fd: RawFd) -> Vec<u8> {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| std::os::unix::ffi::OsStringExt::into_vec(p.into_os_string()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandboxs_processes_are_told_from_others() {
        // SAFETY: no preconditions.
        let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
        let ps = Processes::read(me);
        assert!(ps.in_sandbox(me));
        assert!(!ps.in_sandbox(parent));
        assert_eq!(ps.thread_group_of(me), Some(me));
    }

    #[test]
    fn without_a_terminal_nothing_is_refused() {
        let guard = Guard::new(Vec::new());
        assert!(guard.check().allowed);
        guard.let_go();
        assert!(guard.check().allowed);
    }
}

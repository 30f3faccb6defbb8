//! The user's terminal while fence runs in the background: the calls that take its
//! foreground (`ioctl(TIOCSPGRP)`, `tcsetpgrp`) or change it for whoever holds it (the
//! `TCSETS` family, `tcsetattr`; `TCFLSH`, which drops what was typed).
//!
//! The sandbox runs in the user's terminal session (an interactive shell in it needs job
//! control), and a process that ignores `SIGTTOU` may make these calls even from the
//! background. While fence runs as a background job (started with `&`, or sent on with
//! Ctrl-Z and `bg`), the terminal's foreground is the user's shell or a job it runs:
//! taking it would stop that job at its next read (the shell's read fails, and the shell
//! ends) and hand the sandbox what the user types there; changing its settings would leave
//! the user's shell without echo or Ctrl-C, which fence cannot put back (the settings are
//! then the foreground job's own).
//!
//! Security boundary: these calls run only while every terminal fence was handed has a
//! foreground group that is the sandbox's — fence's own process group, which the sandbox
//! shares, or a group whose processes all belong to the sandbox, or one with no process
//! left that was seen holding only the sandbox's. Any other foreground (a job of the
//! user's; a group fence cannot see, outside its pid namespace) refuses them with EPERM
//! and a reason. The decision reads fence's own descriptors of its terminals, never the
//! caller's: whatever descriptor the call names when the kernel runs it, the answer was
//! about the terminals the user has. What may change between the look and the call is the
//! foreground itself, and only the user changes it then (Ctrl-Z stops the caller first).
//! Without a terminal of fence's, the sandbox can reach only terminals of its own making.

use std::collections::{HashMap, HashSet};
use std::os::fd::RawFd;
use std::sync::Mutex;

use super::listener::Response;
use super::question::Outcome;
use crate::gate::EventKind;

/// fence's terminals and what is known of the sandbox's process groups.
pub struct Guard {
    /// fence's own descriptors of the terminals it was handed (see `terminal.rs`).
    terminals: Vec<RawFd>,
    /// The sandbox's init (host pid): every process of the sandbox descends from it.
    init: libc::pid_t,
    /// Process groups (host numbers) seen holding only processes of the sandbox.
    sandbox_groups: Mutex<HashSet<libc::pid_t>>,
}

impl Guard {
    pub fn new(terminals: Vec<RawFd>, init: libc::pid_t) -> Guard {
        Guard {
            terminals,
            init,
            sandbox_groups: Mutex::new(HashSet::new()),
        }
    }

    /// Answers a guarded terminal call of the sandbox: `CONTINUE` while the sandbox holds
    /// the foreground of every terminal of fence's, else EPERM with a reason.
    pub fn check(&self) -> Outcome {
        let event = EventKind::Signal;
        // SAFETY: getpgrp takes no arguments.
        let own = unsafe { libc::getpgrp() };
        let mut processes = None;
        for &fd in &self.terminals {
            // SAFETY: tcgetpgrp on fence's own descriptor.
            let foreground = unsafe { libc::tcgetpgrp(fd) };
            if foreground == own && foreground > 0 {
                continue;
            }
            // Not fence's controlling terminal (fence started in a session of its own,
            // with the terminal as its streams): the sandbox, in fence's session, has no
            // job control over it and cannot take its foreground, and its settings are
            // put back at the end as fence found them. A foreground fence cannot see (0:
            // a group outside fence's pid namespace) is someone else's, below.
            if foreground < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOTTY)
            {
                continue;
            }
            let processes = processes.get_or_insert_with(|| Processes::read(self.init));
            if !(foreground > 0 && self.is_sandboxs(foreground, processes)) {
                let name = terminal_name(fd);
                return super::write_check::refused(
                    event,
                    libc::EPERM,
                    "changing the terminal or taking its foreground while a job outside the sandbox holds it (fence runs in the background)",
                    &name,
                    "fence.terminal-foreground",
                );
            }
        }
        super::write_check::allowed(event, Vec::new(), Response::Continue)
    }

    /// Whether process group `group` is the sandbox's (and remembers the groups seen).
    fn is_sandboxs(&self, group: libc::pid_t, processes: &Processes) -> bool {
        let mut known = self
            .sandbox_groups
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (&pid, &(_, pgrp)) in &processes.all {
            if processes.in_sandbox(pid) {
                known.insert(pgrp);
            }
        }
        let mut members = processes
            .all
            .iter()
            .filter(|(_, (_, pgrp))| *pgrp == group)
            .map(|(&pid, _)| pid)
            .peekable();
        if members.peek().is_none() {
            // Gone: the sandbox's only if it was seen holding the sandbox's processes (a
            // job of the user's that has just ended is not).
            return known.contains(&group);
        }
        let all_ours = members.all(|pid| processes.in_sandbox(pid));
        if !all_ours {
            known.remove(&group);
        }
        all_ours
    }
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
    /// their reaper, in a pid namespace or as a subreaper without one).
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
    use std::os::unix::process::CommandExt;

    #[test]
    fn the_sandboxs_groups_are_told_from_others_and_remembered() {
        // SAFETY: no preconditions.
        let (me, parent, group) = unsafe { (libc::getpid(), libc::getppid(), libc::getpgrp()) };
        let ps = Processes::read(me);
        assert!(ps.in_sandbox(me));
        assert!(!ps.in_sandbox(parent));
        // A "sandbox" rooted at this process: a child in a group of its own is its.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let child_group = child.id() as libc::pid_t;
        let guard = Guard::new(Vec::new(), me);
        assert!(guard.is_sandboxs(child_group, &Processes::read(me)));
        // This test's own group holds processes outside (its parent, most often): not
        // unless every member descends from the root.
        let others = Guard::new(Vec::new(), child_group);
        assert!(!others.is_sandboxs(group, &Processes::read(child_group)));
        let _ = child.kill();
        let _ = child.wait();
        // Gone: remembered as the sandbox's by the guard that saw it so, not by another.
        assert!(guard.is_sandboxs(child_group, &Processes::read(me)));
        let fresh = Guard::new(Vec::new(), me);
        assert!(!fresh.is_sandboxs(child_group, &Processes::read(me)));
    }
}

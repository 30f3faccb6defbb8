//! `ioctl(TIOCSPGRP)` (`tcsetpgrp`): which process group is the terminal's foreground one.
//!
//! The sandbox runs in the user's terminal session (an interactive shell in it needs job
//! control), and a process that ignores `SIGTTOU` may make any group of that session the
//! foreground one, its own included, even from the background. While fence runs as a
//! background job (started with `&`, or sent on with Ctrl-Z and `bg`), the foreground is
//! the user's shell or a job it runs: taking it would stop that job at its next read (the
//! shell's read fails, and the shell ends), and hand the sandbox what the user types there.
//!
//! Security boundary: the call runs only while the terminal's foreground is the sandbox's
//! — fence's own process group, which the sandbox shares, or a group with no process
//! outside the sandbox (an interactive shell's jobs, a group whose last process is gone).
//! Any other foreground is a job of the user's, and the call is refused (EPERM) with a
//! reason. The check reads the terminal through the caller's own descriptor, fetched with
//! `pidfd_getfd`; the answer is `CONTINUE`, since the group the call names is a number in
//! the caller's pid namespace, in its own memory. What may change between the look and the
//! call is the foreground, and only the user changes it then (a Ctrl-Z at that instant
//! stops the caller first).

use std::os::fd::AsRawFd;

use super::listener::{Notification, Response};
use super::path_resolve::Caller;
use super::question::Outcome;
use crate::gate::EventKind;

/// Answers `ioctl(fd, TIOCSPGRP, …)` of `caller`; `init` is the sandbox's init (host pid).
pub fn check(caller: Caller, n: &Notification, init: libc::pid_t) -> Outcome {
    let event = EventKind::Signal;
    let fd = n.args[0] as i32;
    let copy = match super::pidfd::open(caller).and_then(|p| super::pidfd::get_fd(&p, fd)) {
        Ok(c) => c,
        Err(e) => return Outcome::failed(event, e.raw_os_error().unwrap_or(libc::EBADF)),
    };
    let link = std::fs::read_link(format!("/proc/self/fd/{}", copy.as_raw_fd()))
        .map(|p| std::os::unix::ffi::OsStringExt::into_vec(p.into_os_string()))
        .unwrap_or_default();
    // SAFETY: tcgetpgrp and getpgrp take no pointers.
    let (foreground, own) = unsafe { (libc::tcgetpgrp(copy.as_raw_fd()), libc::getpgrp()) };
    // Not a terminal, or one without a foreground group: the kernel answers as it will.
    if foreground <= 0 || foreground == own || !has_outsider(foreground, init) {
        return super::write_check::allowed(event, link, Response::Continue);
    }
    super::write_check::refused(
        event,
        libc::EPERM,
        "taking the terminal's foreground from a job outside the sandbox (fence runs in the background)",
        &link,
        "fence.terminal-foreground",
    )
}

/// Whether process group `group` holds a process outside the sandbox whose init is `init`
/// (host pids). Every process of the system is looked at: the call is rare (an
/// interactive shell's job control), and a group's members are found no other way.
fn has_outsider(group: libc::pid_t, init: libc::pid_t) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        // Nothing can be told: the foreground is taken to be someone else's.
        return true;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| stat_fields(pid).is_some_and(|(_, pgrp)| pgrp == group))
        .any(|pid| !descends_from(pid, init))
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

/// Whether `pid` is `init` or one of its descendants: the sandbox's processes (the init
/// is their reaper, in a pid namespace or as a subreaper without one). A process gone
/// meanwhile counts as the sandbox's: it holds nothing of the user's.
fn descends_from(pid: libc::pid_t, init: libc::pid_t) -> bool {
    let mut at = pid;
    // A chain longer than any pid space is a loop read across exits: not the sandbox's.
    for _ in 0..4_194_304 {
        if at == init {
            return true;
        }
        if at <= 1 {
            return false;
        }
        match stat_fields(at) {
            Some((ppid, _)) => at = ppid,
            None => return at == pid,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn the_own_process_tree_is_told_from_others() {
        // SAFETY: no preconditions.
        let (me, parent, group) = unsafe { (libc::getpid(), libc::getppid(), libc::getpgrp()) };
        assert!(descends_from(me, me));
        assert!(descends_from(me, parent));
        assert!(!descends_from(parent, me));
        assert!(!descends_from(1, me));
        // This process's own group holds this process: an outsider only to a tree that
        // does not hold it.
        assert!(has_outsider(group, 1_999_999_999));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let child_group = child.id() as libc::pid_t;
        assert!(!has_outsider(child_group, me));
        assert!(has_outsider(child_group, child_group + 1));
        let _ = child.kill();
        let _ = child.wait();
        // A group with no process left holds nobody.
        assert!(!has_outsider(child_group, me));
    }
}

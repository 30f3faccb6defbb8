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
//! Security boundary: these calls run, whatever descriptor they name, only while the
//! foreground group of each terminal fence was handed, looked at through fence's own
//! descriptors when the call comes, is the sandbox's: fence's own group (which the sandbox
//! shares), a group whose processes all descend from the sandbox's init, or — while fence
//! *holds* its terminals — an empty group seen holding only the sandbox's (an interactive
//! shell in the sandbox taking the terminal back from a job that has ended). fence holds
//! them from the moment it sees its own group in front (at the start, when continued, at
//! any such call: bash's `fg` of a running job sends no SIGCONT) until it stops, or sees a
//! group with a process outside the sandbox in front, which also forgets the groups seen:
//! a number the sandbox once used cannot vouch for the user's job that gets it later.
//! Anything else is refused (EPERM) with a reason. A terminal that is not fence's
//! controlling terminal (fence started in a session of its own) gives the sandbox no job
//! control over it. Without a terminal of fence's, the sandbox reaches only terminals of
//! its own making.
//!
//! `setpgid` matters only without a pid namespace, where the sandbox can name the user's
//! process groups: joining the user's shell's group would put a sandboxed process in the
//! terminal's foreground whenever the shell is, to read what the user types. A process may
//! make a group of its own or join a group whose processes all belong to the sandbox.

use std::collections::{HashMap, HashSet};
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::listener::{Notification, Response};
use super::question::Outcome;
use crate::gate::EventKind;

/// fence's terminals, whether it holds them, and the sandbox's process groups seen.
pub struct Guard {
    /// fence's own descriptors of the terminals it was handed (see `terminal.rs`).
    terminals: Vec<RawFd>,
    /// The sandbox's init (host pid): every process of the sandbox descends from it.
    init: std::sync::atomic::AtomicI32,
    holds: AtomicBool,
    /// Process groups (host numbers) seen holding only the sandbox's processes while
    /// fence held its terminals.
    sandbox_groups: Mutex<HashSet<libc::pid_t>>,
}

impl Guard {
    pub fn new(terminals: Vec<RawFd>) -> Guard {
        let guard = Guard {
            terminals,
            init: std::sync::atomic::AtomicI32::new(0),
            holds: AtomicBool::new(false),
            sandbox_groups: Mutex::new(HashSet::new()),
        };
        guard.look_again();
        guard
    }

    /// The sandbox's init, once it is made.
    pub fn set_init(&self, init: libc::pid_t) {
        self.init.store(init, Ordering::SeqCst);
    }

    /// fence holds its terminals from now on if its own group is in front of each (at
    /// the start, and once continued). Only a stop ([`Guard::let_go`]) or a group of the
    /// user's in front lets go: the sandbox's own shell may have the terminal now.
    pub fn look_again(&self) {
        // SAFETY: getpgrp takes no arguments.
        let own = unsafe { libc::getpgrp() };
        let in_front = self.terminals.iter().all(|&fd| {
            // SAFETY: tcgetpgrp on fence's own descriptor.
            let foreground = unsafe { libc::tcgetpgrp(fd) };
            foreground == own || not_controlling(foreground)
        });
        if in_front {
            self.holds.store(true, Ordering::SeqCst);
        }
    }

    /// fence is about to stop: the user's shell takes the terminal. The groups seen are
    /// forgotten: their numbers may be the user's jobs' by the time fence is continued.
    pub fn let_go(&self) {
        self.holds.store(false, Ordering::SeqCst);
        self.sandbox_groups
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Answers a guarded terminal call of the sandbox (the filter sends the requests of
    /// `shim::seccomp_filters::GUARDED_TERMINAL_REQUESTS`).
    pub fn check(&self) -> Outcome {
        let event = EventKind::Signal;
        // SAFETY: getpgrp takes no arguments.
        let own = unsafe { libc::getpgrp() };
        let mut processes = None;
        for &fd in &self.terminals {
            // SAFETY: tcgetpgrp on fence's own descriptor.
            let foreground = unsafe { libc::tcgetpgrp(fd) };
            if foreground == own && foreground > 0 {
                // fence's group holds the terminal now (`fg` of a running job sends no
                // SIGCONT): fence holds it.
                self.holds.store(true, Ordering::SeqCst);
                continue;
            }
            if not_controlling(foreground) {
                continue;
            }
            let processes =
                processes.get_or_insert_with(|| Processes::read(self.init.load(Ordering::SeqCst)));
            if !(foreground > 0 && self.is_sandboxs(foreground, processes)) {
                return super::write_check::refused(
                    event,
                    libc::EPERM,
                    "changing the terminal or taking its foreground while fence runs in the background",
                    &terminal_name(fd),
                    "fence.terminal-foreground",
                );
            }
        }
        super::write_check::allowed(event, Vec::new(), Response::Continue)
    }

    /// Whether the terminal's foreground group `group` (not fence's own) is the sandbox's:
    /// a group of the sandbox's processes only, or, while fence holds its terminals, an
    /// empty one seen so before (an interactive shell in the sandbox taking the terminal
    /// back from a job that has ended). A group with a process outside is the user's:
    /// fence then no longer holds its terminals until it sees its own group in front.
    fn is_sandboxs(&self, group: libc::pid_t, processes: &Processes) -> bool {
        let mut known = self
            .sandbox_groups
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let members = processes.members(group);
        if members.is_empty() {
            return self.holds.load(Ordering::SeqCst) && known.contains(&group);
        }
        if !members.iter().all(|&pid| processes.in_sandbox(pid)) {
            self.holds.store(false, Ordering::SeqCst);
            known.clear();
            return false;
        }
        if self.holds.load(Ordering::SeqCst) {
            for (&pid, &(_, pgrp)) in &processes.all {
                if processes.in_sandbox(pid) {
                    known.insert(pgrp);
                }
            }
        }
        true
    }
}

/// Answers `ioctl(fd, TIOCSPGRP, &pgid)` (`tcsetpgrp`) of the sandbox without a pid
/// namespace of its own, where the group it names may be one of the user's: the shell's, or
/// a background job's. The terminal driver would then signal that group for the sandbox
/// (SIGWINCH at a size change, SIGINT or SIGQUIT at the keys the sandbox remapped), and
/// its next read would take what the user types. Security boundary: on a terminal of
/// fence's (the sandbox's controlling terminal is then the user's), the group must be
/// fence's own or hold only processes of the sandbox, and the supervisor makes the call
/// itself on the caller's descriptor (`pidfd_getfd`) with the number it read and checked,
/// so that no thread can change it after the check. On a terminal of the sandbox's own
/// making, whose session is the sandbox's, the kernel names no group outside: `CONTINUE`.
/// One difference from the kernel's own call: a caller in the background that neither
/// ignores nor blocks SIGTTOU is not stopped (fence ignores it).
pub fn set_foreground(
    guard: &Guard,
    listener: &super::listener::Listener,
    n: &Notification,
    caller: super::path_resolve::Caller,
) -> Outcome {
    let event = EventKind::Signal;
    let taken = guard.check();
    if !taken.allowed {
        return taken;
    }
    let Ok(fd) =
        super::pidfd::open(caller).and_then(|pidfd| super::pidfd::get_fd(&pidfd, n.args[0] as i32))
    else {
        return Outcome::failed(event, libc::EBADF);
    };
    let rdev = |fd: RawFd| {
        // SAFETY: stat is plain data; fstat fills it for an open descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat into a local stat.
        (unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFCHR)
            .then_some(st.st_rdev)
    };
    let named = rdev(std::os::fd::AsRawFd::as_raw_fd(&fd));
    if named.is_none() || !guard.terminals.iter().any(|&t| rdev(t) == named) {
        return super::write_check::allowed(event, Vec::new(), Response::Continue);
    }
    let mem = super::target_memory::TargetMemory::new(listener, n);
    let Ok(bytes) = mem.bytes(n.args[2], std::mem::size_of::<libc::pid_t>()) else {
        return Outcome::failed(event, libc::EFAULT);
    };
    let pgid = libc::pid_t::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    // SAFETY: getpgrp takes no arguments.
    let own = unsafe { libc::getpgrp() };
    let processes = Processes::read(guard.init.load(Ordering::SeqCst));
    if pgid != own && !processes.holds_only_the_sandboxs(pgid) {
        return super::write_check::refused(
            event,
            libc::EPERM,
            "handing the terminal to a process group outside the sandbox",
            pgid.to_string().as_bytes(),
            "fence.terminal-foreground",
        );
    }
    // SAFETY: TIOCSPGRP reads one pid_t from a valid pointer; the descriptor is ours.
    let ret = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            libc::TIOCSPGRP,
            &pgid as *const libc::pid_t,
        )
    };
    if ret < 0 {
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EPERM);
        return Outcome::failed(event, errno);
    }
    super::write_check::allowed(event, Vec::new(), Response::Value(0))
}

/// Whether `tcgetpgrp` said the terminal is not the caller's controlling terminal.
fn not_controlling(foreground: libc::pid_t) -> bool {
    foreground < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOTTY)
}

/// Answers `setpgid(pid, pgid)` (registers: race-free). With a pid namespace the kernel
/// names only the sandbox's groups; without one, a group other than a new one of the
/// process's own must hold only processes of the sandbox.
pub fn setpgid(guard: &Guard, n: &Notification, own_pid_namespace: bool) -> Outcome {
    let event = EventKind::Signal;
    let allowed = || super::write_check::allowed(event, Vec::new(), Response::Continue);
    let (pid, pgid) = (n.args[0] as i32, n.args[1] as i32);
    if own_pid_namespace || pgid == 0 || (pid != 0 && pgid == pid) {
        return allowed();
    }
    let processes = Processes::read(guard.init.load(Ordering::SeqCst));
    // The caller's own pid as a group (`setpgid(0, getpid())`): a new group of its own.
    if pid == 0 && thread_group_of(n.tid) == Some(pgid) {
        return allowed();
    }
    // A group with no process yet is refused, as the kernel refuses it: one the user's
    // shell makes a moment later (its next job, whose number is easy to guess) must not
    // be joined between this look and the call.
    if processes.holds_only_the_sandboxs(pgid) {
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

    /// The processes of the group `group`.
    fn members(&self, group: libc::pid_t) -> Vec<libc::pid_t> {
        self.all
            .iter()
            .filter(|(_, (_, pgrp))| *pgrp == group)
            .map(|(&pid, _)| pid)
            .collect()
    }

    /// Whether the group `group` has processes, all of them the sandbox's.
    fn holds_only_the_sandboxs(&self, group: libc::pid_t) -> bool {
        let members = self.members(group);
        !members.is_empty() && members.iter().all(|&pid| self.in_sandbox(pid))
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
}

/// The process (thread group) thread `tid` belongs to.
fn thread_group_of(tid: libc::pid_t) -> Option<libc::pid_t> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
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
        assert_eq!(thread_group_of(me), Some(me));
    }

    #[test]
    fn an_ended_group_is_the_sandboxs_only_if_seen_so_while_fence_held_its_terminals() {
        use std::os::unix::process::CommandExt;
        // SAFETY: no preconditions.
        let (me, group) = unsafe { (libc::getpid(), libc::getpgrp()) };
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let child_group = child.id() as libc::pid_t;
        // No terminals: held. A "sandbox" rooted at this process.
        let guard = Guard::new(Vec::new());
        guard.set_init(me);
        assert!(guard.is_sandboxs(child_group, &Processes::read(me)));
        let _ = child.kill();
        let _ = child.wait();
        assert!(guard.is_sandboxs(child_group, &Processes::read(me)));
        // Not while fence does not hold its terminals, nor once it holds them again: a
        // stop forgets the groups seen.
        guard.let_go();
        assert!(!guard.is_sandboxs(child_group, &Processes::read(me)));
        guard.holds.store(true, Ordering::SeqCst);
        assert!(!guard.is_sandboxs(child_group, &Processes::read(me)));
        // Never seen: not the sandbox's.
        let fresh = Guard::new(Vec::new());
        fresh.set_init(me);
        fresh.let_go();
        assert!(!fresh.is_sandboxs(child_group, &Processes::read(me)));
        // A group with a process outside (this test's own, rooted at the ended child):
        // not the sandbox's, and fence no longer holds its terminals.
        let other = Guard::new(Vec::new());
        other.set_init(child_group);
        assert!(!other.is_sandboxs(group, &Processes::read(child_group)));
        assert!(!other.holds.load(Ordering::SeqCst));
    }

    #[test]
    fn without_a_terminal_nothing_is_refused() {
        let guard = Guard::new(Vec::new());
        assert!(guard.check().allowed);
        guard.let_go();
        assert!(guard.check().allowed);
    }
}

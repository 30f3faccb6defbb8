//! The kernel features `fence run` needs, checked before anything starts, and the
//! run-time knobs that shape what the shim asks of the kernel.

use std::io;
use std::os::fd::RawFd;

/// Environment variable that caps the Landlock ABI fence asks for (a testing knob: it can
/// only lower the ABI, and what the lower ABI lacks is compensated or refused exactly as
/// on a kernel that has only that ABI).
pub const ABI_CAP_VAR: &str = "FENCE_LANDLOCK_ABI_MAX";

/// Reads [`ABI_CAP_VAR`]: `None` when unset, an error naming the variable when it is not a
/// whole number ≥ 0.
pub fn landlock_abi_cap() -> Result<Option<i32>, String> {
    match std::env::var_os(ABI_CAP_VAR) {
        None => Ok(None),
        Some(v) => parse_abi_cap(&v.to_string_lossy()).map(Some),
    }
}

fn parse_abi_cap(text: &str) -> Result<i32, String> {
    text.trim()
        .parse::<i32>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| format!("{ABI_CAP_VAR}={text:?} is not a Landlock ABI number (0, 1, 2, …)"))
}

/// Missing features, each with the kernel that brings it. Empty when all are present.
/// `landlock_abi` is the ABI fence would use (after any cap).
pub fn missing_features(landlock_abi: i32) -> Vec<String> {
    let mut missing = Vec::new();
    if landlock_abi <= 0 {
        missing.push(
            "Landlock (Linux 5.13 or later with Landlock enabled at boot: lsm=...,landlock)"
                .to_string(),
        );
    }
    if !seccomp_user_notification() {
        missing.push(
            "seccomp user notification (Linux 5.0 or later; 6.6 for synchronous wake-ups)"
                .to_string(),
        );
    }
    missing
}

/// Whether the kernel offers `SECCOMP_RET_USER_NOTIF` (read once).
pub fn seccomp_user_notification() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
            .map(|a| a.split_whitespace().any(|w| w == "user_notif"))
            .unwrap_or(false)
    })
}

/// Whether this process already runs under a seccomp filter with a listener (inside
/// another fence, syd, some container runtimes): the kernel then refuses fence its own
/// (EBUSY). Probed in a forked child only when this process runs under filters at all
/// (PR_GET_SECCOMP says SECCOMP_MODE_FILTER; one system call, where reading
/// `/proc/self/status` costs tens of microseconds). Call while single-threaded.
pub fn outer_seccomp_listener() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer; it returns the mode (a process in strict
    // mode could not have made the calls that brought it here).
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    mode == libc::SECCOMP_MODE_FILTER as i32 && probe_seccomp().is_ok_and(|p| p.busy)
}

/// What a throw-away child found when it installed a notifying filter.
#[derive(Debug, Clone, Copy)]
pub struct SeccompProbe {
    /// A listener could be created.
    pub listener: bool,
    /// EBUSY: an outer filter already has a listener.
    pub busy: bool,
    pub wait_killable: bool,
    pub sync_wake_up: bool,
}

/// Forks a child that sets no_new_privs, installs an allow-everything filter with a new
/// listener (with the killable-wait flag, then without), asks for synchronous wake-ups,
/// and reports through its exit status. The child makes raw system calls only.
pub fn probe_seccomp() -> io::Result<SeccompProbe> {
    const LISTENER: i32 = 1;
    const BUSY: i32 = 2;
    const KILLABLE: i32 = 4;
    const SYNC: i32 = 8;
    const WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
    let allow = [libc::sock_filter {
        code: 0x06, // BPF_RET | BPF_K
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_ALLOW,
    }];
    let prog = libc::sock_fprog {
        len: 1,
        filter: allow.as_ptr() as *mut libc::sock_filter,
    };
    let status = in_child(|| {
        let install = |flags: libc::c_ulong| {
            // SAFETY: `prog` points at `allow`, valid for the call.
            unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    flags,
                    &prog as *const libc::sock_fprog,
                )
            }
        };
        let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
        // SAFETY: prctl with plain integers.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } < 0 {
            return 0;
        }
        let mut bits = 0;
        let mut fd = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | WAIT_KILLABLE_RECV);
        if fd >= 0 {
            bits |= KILLABLE;
        } else if errno() == libc::EINVAL {
            fd = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
        }
        if fd < 0 {
            return if errno() == libc::EBUSY { BUSY } else { 0 };
        }
        bits |= LISTENER;
        // SAFETY: SET_FLAGS takes the flag by value on the listener just made.
        if unsafe {
            libc::ioctl(
                fd as i32,
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
                1u64, // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
            )
        } == 0
        {
            bits |= SYNC;
        }
        bits
    })?;
    Ok(SeccompProbe {
        listener: status & LISTENER != 0,
        busy: status & BUSY != 0,
        wait_killable: status & KILLABLE != 0,
        sync_wake_up: status & SYNC != 0,
    })
}

/// Runs `f` in a forked child and returns its exit status. `f` must make raw system
/// calls only (call it while the process is single-threaded, so the child inherits no held locks, but
/// it exits with `_exit` and never returns into Rust's runtime).
pub fn in_child(f: impl FnOnce() -> i32) -> io::Result<i32> {
    // SAFETY: fork in a single-threaded process; the child only calls `f` and `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let code = f();
        // SAFETY: leaving the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child with a valid out-pointer.
    if unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    if libc::WIFEXITED(status) {
        Ok(libc::WEXITSTATUS(status))
    } else {
        Err(io::Error::other("probe child was killed"))
    }
}

/// Parses one `--pass-fd` value: a descriptor number above 2 (0, 1 and 2 always pass).
pub fn parse_pass_fd(text: &str) -> Result<RawFd, String> {
    match text.trim().parse::<RawFd>() {
        Ok(n) if n > 2 => Ok(n),
        Ok(_) => Err(format!(
            "--pass-fd {text}: descriptors 0, 1 and 2 are always passed; give one above 2"
        )),
        Err(_) => Err(format!("--pass-fd {text:?} is not a descriptor number")),
    }
}

/// Checks that every descriptor to pass is open in fence.
pub fn check_pass_fds(fds: &[RawFd]) -> Result<(), String> {
    for &fd in fds {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            return Err(format!(
                "--pass-fd {fd}: descriptor {fd} is not open in fence ({})",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// Refuses a datagram or raw socket among the descriptors the sandbox is handed (0, 1, 2
/// and `--pass-fd`). Such a socket was made outside, in the host's network namespace, and
/// `sendmsg` (not notified) can name any destination on it: a UDP socket reaches every
/// address, a unix one every socket the user may write, a netlink one the kernel's
/// network configuration. Stream sockets are left: they send only to their peer (a
/// connect is notified, `MSG_FASTOPEN` refused). Fail closed: fence does not start.
pub fn check_handed_in_sockets(pass: &[RawFd]) -> Result<(), String> {
    for fd in [0, 1, 2].iter().chain(pass) {
        let option = |name: libc::c_int| {
            let mut value: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: getsockopt into an int of the size given.
            let ret = unsafe {
                libc::getsockopt(
                    *fd,
                    libc::SOL_SOCKET,
                    name,
                    (&mut value as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            (ret == 0).then_some(value)
        };
        let Some(kind) = option(libc::SO_TYPE) else {
            continue; // not a socket (or not open)
        };
        if !matches!(kind, libc::SOCK_STREAM | libc::SOCK_SEQPACKET) {
            let family = match option(libc::SO_DOMAIN) {
                Some(libc::AF_INET) => "AF_INET",
                Some(libc::AF_INET6) => "AF_INET6",
                Some(libc::AF_UNIX) => "AF_UNIX",
                Some(libc::AF_NETLINK) => "AF_NETLINK",
                Some(libc::AF_PACKET) => "AF_PACKET",
                _ => "another family",
            };
            return Err(format!(
                "descriptor {fd} is a datagram or raw socket ({family}) made outside the sandbox: a process of the sandbox could send from it to any address; give fence a pipe, a file, a terminal or a stream socket there"
            ));
        }
    }
    Ok(())
}

/// How the sandbox dies if fence dies, strongest first (SPEC §3 "Fail closed").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeathMechanism {
    /// The shim is pid 1 of the sandbox's pid namespace: when it dies, the kernel kills
    /// every process in the namespace.
    PidNamespace,
    /// The shim, told by its parent-death signal, writes `cgroup.kill` of the session
    /// cgroup: the kernel kills every process in it at once.
    CgroupKill,
    /// The shim gets a parent-death signal (from the supervisor thread that lives as long
    /// as the session) and kills its descendants one by one.
    ParentDeathSignal,
}

impl DeathMechanism {
    pub fn describe(self) -> &'static str {
        match self {
            DeathMechanism::PidNamespace => {
                "pid namespace (its init dies with fence, and the kernel kills every process in it)"
            }
            DeathMechanism::CgroupKill => {
                "cgroup.kill (the sandbox's init, told by a parent-death signal, kills the session cgroup at once)"
            }
            DeathMechanism::ParentDeathSignal => {
                "parent-death signal to the sandbox's init, which then kills its descendants one by one"
            }
        }
    }

    /// The start banner's line, or `None` for the pid namespace (the strongest goes
    /// without saying).
    pub fn banner(self) -> Option<&'static str> {
        match self {
            DeathMechanism::PidNamespace => None,
            DeathMechanism::CgroupKill => Some(
                "no pid namespace: if fence dies, its init kills the session cgroup (cgroup.kill); running processes go on until then",
            ),
            DeathMechanism::ParentDeathSignal => Some(
                "no pid namespace nor cgroup.kill: if fence dies, its init kills the sandbox one process at a time (parent-death signal); running processes go on until then",
            ),
        }
    }

    /// What could outlive fence for a moment, or `None` for the pid namespace.
    pub fn what_could_outlive(self) -> Option<&'static str> {
        match self {
            DeathMechanism::PidNamespace => None,
            DeathMechanism::CgroupKill => Some(
                "until the init's kill lands, running processes keep going (CPU loops, writes on descriptors already open inside the worktree); notified calls fail at once",
            ),
            DeathMechanism::ParentDeathSignal => Some(
                "until the init has walked the tree, running processes keep going (CPU loops, writes on descriptors already open inside the worktree) and may fork; notified calls fail at once",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_cap_and_pass_fd_values_are_checked() {
        assert_eq!(parse_abi_cap("2"), Ok(2));
        assert_eq!(parse_abi_cap("0"), Ok(0));
        assert!(parse_abi_cap("-1").is_err());
        assert!(parse_abi_cap("six").is_err());
        assert_eq!(parse_pass_fd("3"), Ok(3));
        assert!(parse_pass_fd("2").unwrap_err().contains("above 2"));
        assert!(parse_pass_fd("x").is_err());
        assert!(check_pass_fds(&[999_999]).unwrap_err().contains("not open"));
    }

    #[test]
    fn missing_landlock_names_the_kernel_that_has_it() {
        let missing = missing_features(0);
        assert!(missing[0].contains("Linux 5.13"), "{missing:?}");
    }
}

//! Acting for the target with the target's credentials (SPEC §3): whatever the supervisor
//! performs on the target's behalf — an emulated metadata change, a connect — runs on a
//! fresh thread that has taken the target's fsuid, fsgid and groups and holds no
//! capabilities, so the kernel's permission checks are the target's, not root's. A
//! supervisor that holds no capability and whose own ids and groups are the target's (an
//! unprivileged fence: the sandbox runs as its user) acts on the calling thread instead:
//! the checks are the same, without a thread started and joined for every call.

use std::io;

use caps::CapSet;

/// The credentials the kernel checks file operations against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetCredentials {
    pub fsuid: libc::uid_t,
    pub fsgid: libc::gid_t,
    pub groups: Vec<libc::gid_t>,
}

impl TargetCredentials {
    /// Reads the credentials of thread `tid` from /proc (ids as the supervisor sees them).
    pub fn of_thread(tid: libc::pid_t) -> io::Result<TargetCredentials> {
        Ok(Self::and_umask_of_thread(tid)?.0)
    }

    /// [`Self::of_thread`] and the thread's umask, from one read of its status file (which
    /// costs more than the rest of a carried-out call). `None` for a kernel that does not
    /// show the umask (before 4.7).
    pub fn and_umask_of_thread(tid: libc::pid_t) -> io::Result<(TargetCredentials, Option<u32>)> {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
        Self::parse(&status, &format!("/proc/{tid}/status"))
    }

    /// Credentials and umask from a status file's text (`name` for errors).
    fn parse(status: &str, name: &str) -> io::Result<(TargetCredentials, Option<u32>)> {
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|v| u32::from_str_radix(v.trim(), 8).ok());
        let field = |name: &str| -> Option<Vec<u32>> {
            let line = status.lines().find_map(|l| l.strip_prefix(name))?;
            line.split_whitespace().map(|v| v.parse().ok()).collect()
        };
        let bad = || io::Error::other(format!("unreadable credentials in {name}"));
        let uids = field("Uid:").ok_or_else(bad)?;
        let gids = field("Gid:").ok_or_else(bad)?;
        let groups = field("Groups:").unwrap_or_default();
        let creds = TargetCredentials {
            fsuid: *uids.get(3).ok_or_else(bad)?,
            fsgid: *gids.get(3).ok_or_else(bad)?,
            groups,
        };
        Ok((creds, umask))
    }
}

/// Runs `op` on a new thread that carries `creds` and no capabilities, and returns its
/// result. The thread ends with the call, so the changed credentials never reach another
/// task of the supervisor (credential system calls are per-thread at the kernel level).
pub fn act_as<T: Send + 'static>(
    creds: &TargetCredentials,
    op: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    if acts_as_itself(creds) {
        return op();
    }
    let creds = creds.clone();
    std::thread::spawn(move || {
        take_credentials(&creds)?;
        op()
    })
    .join()
    .map_err(|_| io::Error::other("acting thread panicked"))?
}

/// Whether the supervisor's own credentials are `creds` with no capability to override
/// them: no effective or permitted capability (read once; an unprivileged process cannot
/// gain any), and the same fsuid, fsgid and supplementary groups (read from /proc for the
/// calling thread the first time; the supervisor never changes its own).
fn acts_as_itself(creds: &TargetCredentials) -> bool {
    static OWN: std::sync::OnceLock<Option<TargetCredentials>> = std::sync::OnceLock::new();
    let own = OWN.get_or_init(|| {
        let none = |set| caps::read(None, set).is_ok_and(|c| c.is_empty());
        if !(none(CapSet::Effective) && none(CapSet::Permitted)) {
            return None;
        }
        own_credentials().ok()
    });
    own.as_ref().is_some_and(|own| {
        let sorted = |g: &[libc::gid_t]| {
            let mut g = g.to_vec();
            g.sort_unstable();
            g.dedup();
            g
        };
        own.fsuid == creds.fsuid
            && own.fsgid == creds.fsgid
            && sorted(&own.groups) == sorted(&creds.groups)
    })
}

/// The calling thread's own credentials, from /proc/thread-self (right whichever pid
/// namespace the mounted /proc belongs to).
fn own_credentials() -> io::Result<TargetCredentials> {
    let status = std::fs::read_to_string("/proc/thread-self/status")?;
    TargetCredentials::parse(&status, "/proc/thread-self/status").map(|(c, _)| c)
}

fn take_credentials(creds: &TargetCredentials) -> io::Result<()> {
    // The raw system calls act on this thread only (glibc's wrappers would broadcast them to
    // every thread of the supervisor).
    // SAFETY: setgroups reads `len` gids from a valid slice.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_setgroups,
            creds.groups.len(),
            creds.groups.as_ptr(),
        )
    };
    if ret < 0 {
        let err = io::Error::last_os_error();
        // An unprivileged supervisor cannot set groups; it already has the target's own.
        if err.raw_os_error() != Some(libc::EPERM) {
            return Err(err);
        }
    }
    // SAFETY: setfsgid/setfsuid take ids by value; they return the previous id, so the
    // result is verified with a second call below.
    unsafe {
        libc::syscall(libc::SYS_setfsgid, creds.fsgid);
        libc::syscall(libc::SYS_setfsuid, creds.fsuid);
    }
    // SAFETY: passing -1 (invalid) only queries the current fs ids.
    let (gid_now, uid_now) = unsafe {
        (
            libc::syscall(libc::SYS_setfsgid, u32::MAX) as u32,
            libc::syscall(libc::SYS_setfsuid, u32::MAX) as u32,
        )
    };
    if gid_now != creds.fsgid || uid_now != creds.fsuid {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    // No capability may override the target's permission checks (CAP_FOWNER,
    // CAP_DAC_OVERRIDE, CAP_CHOWN…): capset acts on the calling thread only.
    caps::clear(None, CapSet::Effective).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_credentials_are_read_from_proc() {
        let me = TargetCredentials::of_thread(std::process::id() as libc::pid_t).unwrap();
        // SAFETY: getuid/getgid have no preconditions.
        assert_eq!(me.fsuid, unsafe { libc::getuid() });
        assert_eq!(me.fsgid, unsafe { libc::getgid() });
    }

    #[test]
    fn acting_thread_holds_no_capabilities() {
        let me = TargetCredentials::of_thread(std::process::id() as libc::pid_t).unwrap();
        let effective = act_as(&me, || {
            caps::read(None, CapSet::Effective).map_err(|e| io::Error::other(e.to_string()))
        })
        .unwrap();
        assert!(effective.is_empty());
    }
}

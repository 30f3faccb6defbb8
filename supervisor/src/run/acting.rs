//! Acting for the target with the target's credentials (SPEC §3): whatever the supervisor
//! performs on the target's behalf — an emulated metadata change, a connect — runs on a
//! fresh thread that has taken the target's fsuid, fsgid and groups and holds no
//! capabilities, so the kernel's permission checks are the target's, not root's. A
//! supervisor that holds no capability and whose own ids and groups are the target's (an
//! unprivileged fence: the sandbox runs as its user) acts on the calling thread instead:
//! the checks are the same, without a thread started and joined for every call. A
//! privileged one whose ids and groups are the target's (a fence run as root) does the
//! same with its effective capabilities set aside for the call.

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

/// Runs `op` with `creds` and no capabilities, and returns its result. Where the
/// supervisor's own ids and groups are `creds` (the sandbox runs as fence's user, root
/// included), on the calling thread: as it is, when the supervisor holds no capability;
/// else with its effective capabilities set aside for the call ([`SetAside`]). Otherwise
/// on a new thread that takes `creds`: it ends with the call, so the changed credentials
/// never reach another task of the supervisor (credential system calls are per-thread at
/// the kernel level).
pub fn act_as<T: Send + 'static>(
    creds: &TargetCredentials,
    op: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    if let Some(own) = own().filter(|own| own.is(creds)) {
        if !own.privileged {
            return op();
        }
        if let Ok(_aside) = SetAside::effective_capabilities() {
            return op();
        }
    }
    let creds = creds.clone();
    std::thread::spawn(move || {
        take_credentials(&creds)?;
        op()
    })
    .join()
    .map_err(|_| io::Error::other("acting thread panicked"))?
}

/// The supervisor's own credentials, and whether it holds any capability.
struct Own {
    creds: TargetCredentials,
    privileged: bool,
}

impl Own {
    /// Whether `creds` are these: the same fsuid, fsgid and set of groups.
    fn is(&self, creds: &TargetCredentials) -> bool {
        self.creds.fsuid == creds.fsuid
            && self.creds.fsgid == creds.fsgid
            && self.creds.groups == sorted(&creds.groups)
    }
}

fn sorted(groups: &[libc::gid_t]) -> Vec<libc::gid_t> {
    let mut g = groups.to_vec();
    g.sort_unstable();
    g.dedup();
    g
}

/// Read once, from /proc/thread-self for the ids (the supervisor never changes its own)
/// and capget for the capabilities (an unprivileged process cannot gain any, and a
/// privileged one only sets them aside for a call, [`SetAside`]). `None` when unreadable:
/// every call then goes to an acting thread.
fn own() -> Option<&'static Own> {
    static OWN: std::sync::OnceLock<Option<Own>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        let none = |set| caps::read(None, set).is_ok_and(|c| c.is_empty());
        let privileged = !(none(CapSet::Effective) && none(CapSet::Permitted));
        let creds = own_credentials().ok()?;
        Some(Own {
            creds: TargetCredentials {
                groups: sorted(&creds.groups),
                ..creds
            },
            privileged,
        })
    })
    .as_ref()
}

/// The calling thread's effective capabilities, emptied for as long as this lives and
/// restored from the permitted set when it is dropped (capset acts on the calling thread
/// only). With the same ids and groups and no effective capability, the kernel's checks
/// of a file call are the target's. If the restore fails, the thread stays without them
/// and its later privileged calls fail: closed, not open.
struct SetAside(caps::CapsHashSet);

impl SetAside {
    fn effective_capabilities() -> io::Result<SetAside> {
        let err = |e: caps::errors::CapsError| io::Error::other(e.to_string());
        let saved = caps::read(None, CapSet::Effective).map_err(err)?;
        caps::clear(None, CapSet::Effective).map_err(err)?;
        Ok(SetAside(saved))
    }
}

impl Drop for SetAside {
    fn drop(&mut self) {
        if let Err(e) = caps::set(None, CapSet::Effective, &self.0) {
            eprintln!("fence: restoring the supervisor's capabilities after a call failed: {e}");
        }
    }
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

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

/// A /proc status file, read with one `read` into a page-sized buffer when it fits (the
/// kernel writes the whole file at the first read; a read that grows its buffer as it
/// goes, as `read_to_string` does, takes one system call per doubling and a `statx` for
/// a size /proc does not know, on every carried-out call).
fn read_status(name: &str) -> io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(name)?;
    let mut buf = vec![0u8; 4096];
    let n = file.read(&mut buf)?;
    if n == buf.len() {
        // A long one (thousands of groups): the rest as it comes.
        file.read_to_end(&mut buf)?;
    } else {
        buf.truncate(n);
    }
    String::from_utf8(buf).map_err(|_| io::Error::other(format!("{name} is not text")))
}

impl TargetCredentials {
    /// Reads the credentials of thread `tid` from /proc (ids as the supervisor sees them).
    pub fn of_thread(tid: libc::pid_t) -> io::Result<TargetCredentials> {
        Ok(Self::and_umask_of_thread(tid)?.0)
    }

    /// [`Self::of_thread`] and the thread's umask (`None` before Linux 4.7), kept between
    /// calls where they cannot have changed ([`super::caller_context`]).
    pub fn and_umask_of_thread(tid: libc::pid_t) -> io::Result<(TargetCredentials, Option<u32>)> {
        super::caller_context::of_thread(tid)
    }

    /// Credentials and umask from one read of the thread's status file (which costs more
    /// than the rest of a carried-out call), and whether its ids leave nothing to change:
    /// real, effective, saved and filesystem uid one id, and the same for the gids.
    pub(super) fn read_for_keeping(
        tid: libc::pid_t,
    ) -> io::Result<(TargetCredentials, Option<u32>, bool)> {
        let name = format!("/proc/{tid}/status");
        let status = read_status(&name)?;
        Self::parse(&status, &name)
    }

    /// Credentials, umask and settledness (see [`Self::read_for_keeping`]) from a status
    /// file's text (`name` for errors).
    fn parse(status: &str, name: &str) -> io::Result<(TargetCredentials, Option<u32>, bool)> {
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
        let one = |ids: &[u32]| ids.len() == 4 && ids.iter().all(|&i| i == ids[0]);
        let settled = one(&uids) && one(&gids);
        let creds = TargetCredentials {
            fsuid: *uids.get(3).ok_or_else(bad)?,
            fsgid: *gids.get(3).ok_or_else(bad)?,
            groups,
        };
        Ok((creds, umask, settled))
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
        if let Some(_aside) = own
            .caps
            .as_ref()
            .and_then(|caps| SetAside::effective_capabilities(caps).ok())
        {
            return op();
        }
        // (Nested inside an op already set aside, or capset refused: a thread of its own.)
    }
    let creds = creds.clone();
    // A thread that cannot be started (the supervisor at its limit) fails the call.
    std::thread::Builder::new()
        .spawn(move || {
            take_credentials(&creds)?;
            op()
        })?
        .join()
        .map_err(|_| io::Error::other("acting thread panicked"))?
}

/// The supervisor's own credentials, and whether it holds any capability.
struct Own {
    creds: TargetCredentials,
    privileged: bool,
    /// The capability sets the supervisor holds (it never changes them but for a call).
    caps: Option<CapData>,
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
            caps: CapData::of_this_thread().ok(),
        })
    })
    .as_ref()
}

/// The calling thread's effective capabilities, emptied for as long as this lives and
/// restored when it is dropped (capset acts on the calling thread only; the permitted set
/// is kept, so the restore needs no privilege). With the same ids and groups and no
/// effective capability, the kernel's checks of a file call are the target's. If the
/// restore fails, the thread stays without them and its later privileged calls fail:
/// closed, not open. Raw capget/capset: the `caps` crate reads the sets again and builds
/// hash sets on every change, which costs more than the call carried out.
struct SetAside(CapData);

/// The kernel's capability sets of one thread (`_LINUX_CAPABILITY_VERSION_3`: two words).
#[derive(Clone, Copy)]
struct CapData([libc::c_uint; 6]);

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

impl CapData {
    fn of_this_thread() -> io::Result<CapData> {
        let mut header = [CAPABILITY_VERSION_3, 0];
        let mut data = [0 as libc::c_uint; 6];
        // SAFETY: capget fills two __user_cap_data_struct (3 words each) for version 3.
        let ret =
            unsafe { libc::syscall(libc::SYS_capget, header.as_mut_ptr(), data.as_mut_ptr()) };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(CapData(data))
    }

    fn set_on_this_thread(&self) -> io::Result<()> {
        let mut header = [CAPABILITY_VERSION_3, 0];
        // SAFETY: capset reads two __user_cap_data_struct for version 3; pid 0 is the
        // calling thread.
        let ret = unsafe { libc::syscall(libc::SYS_capset, header.as_mut_ptr(), self.0.as_ptr()) };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// These sets with the effective one emptied (words 0 and 3 of the two structs).
    fn without_effective(self) -> CapData {
        let mut d = self.0;
        d[0] = 0;
        d[3] = 0;
        CapData(d)
    }
}

thread_local! {
    /// This thread's capabilities are set aside now: a nested call must not restore them
    /// when it ends, inside the outer one.
    static ASIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl SetAside {
    fn effective_capabilities(own: &CapData) -> io::Result<SetAside> {
        if ASIDE.get() {
            return Err(io::Error::from_raw_os_error(libc::EBUSY));
        }
        own.without_effective().set_on_this_thread()?;
        ASIDE.set(true);
        Ok(SetAside(*own))
    }
}

impl Drop for SetAside {
    fn drop(&mut self) {
        ASIDE.set(false);
        if let Err(e) = self.0.set_on_this_thread() {
            eprintln!("fence: restoring the supervisor's capabilities after a call failed: {e}");
        }
    }
}

/// The calling thread's own credentials, from /proc/thread-self (right whichever pid
/// namespace the mounted /proc belongs to).
fn own_credentials() -> io::Result<TargetCredentials> {
    let status = std::fs::read_to_string("/proc/thread-self/status")?;
    TargetCredentials::parse(&status, "/proc/thread-self/status").map(|(c, _, _)| c)
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
    fn capabilities_set_aside_for_a_call_come_back_after_it() {
        let me = TargetCredentials::of_thread(std::process::id() as libc::pid_t).unwrap();
        let before = caps::read(None, CapSet::Effective).unwrap();
        let during = act_as(&me, || {
            caps::read(None, CapSet::Effective).map_err(|e| io::Error::other(e.to_string()))
        })
        .unwrap();
        assert!(during.is_empty());
        assert_eq!(caps::read(None, CapSet::Effective).unwrap(), before);
        // A failing call restores them too.
        let failed: io::Result<()> = act_as(&me, || Err(io::Error::other("no")));
        assert!(failed.is_err());
        assert_eq!(caps::read(None, CapSet::Effective).unwrap(), before);
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

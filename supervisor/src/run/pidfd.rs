//! Descriptors of sandboxed processes, taken with `pidfd_open` and `pidfd_getfd`: the
//! supervisor acts on the very object the target holds, never on a number it can swap.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::path_resolve::Caller;

/// `PIDFD_THREAD` (Linux 6.9): a pidfd for a thread rather than its group leader.
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;

/// A pidfd for the caller's thread where the kernel allows it (6.9), else for its thread
/// group (whose descriptor table is the same unless the thread unshared it).
///
/// Security boundary: for a caller blocked in a notified call, the call's id is checked
/// *after* the pidfd is open. A tid can be reused once its thread is gone; a valid id
/// means the thread was alive and blocked in that call while the pidfd was opened, so the
/// pidfd names it, and everything done through it (`pidfd_getfd`) reaches that process and
/// no later holder of the number.
pub fn open(caller: Caller) -> io::Result<OwnedFd> {
    let pidfd = open_unchecked(caller)?;
    if let Some((listener, id)) = caller.call
        && !super::listener::id_valid(listener, id)
    {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(pidfd)
}

fn open_unchecked(caller: Caller) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags by value.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, caller.tid, PIDFD_THREAD) };
    let fd = if fd >= 0 {
        fd
    } else {
        // SAFETY: as above.
        unsafe { libc::syscall(libc::SYS_pidfd_open, caller.tgid().unwrap_or(caller.tid), 0) }
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor returned by the kernel, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A duplicate of the target's descriptor `target_fd` (close-on-exec in the supervisor).
pub fn get_fd(pidfd: &OwnedFd, target_fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd takes descriptors and flags by value.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), target_fd, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor returned by the kernel, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pidfd_for_a_call_no_longer_pending_is_refused() {
        let me = std::process::id() as libc::pid_t;
        // A thread known by its id only: opened as asked.
        let pidfd = open(Caller::new(me)).unwrap();
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        let copy = std::fs::File::from(get_fd(&pidfd, file.as_raw_fd()).unwrap());
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            copy.metadata().unwrap().ino(),
            file.metadata().unwrap().ino()
        );
        // For a notified call, the id is checked after the pidfd is made: a descriptor
        // that answers no ID_VALID (here /dev/null) stands for a call gone, and nothing is
        // handed out.
        let not_a_listener = std::fs::File::open("/dev/null").unwrap();
        let caller = Caller {
            tid: me,
            call: Some((not_a_listener.as_raw_fd(), 7)),
        };
        assert_eq!(open(caller).unwrap_err().raw_os_error(), Some(libc::ESRCH));
    }
}

//! The user namespace through which a root session's `/etc` is shown with root's files as
//! nobody's (`shim::mount_view::shift_root_owner`: why, and what it bounds).
//!
//! An idmapped mount takes its mapping from a user namespace, and a user namespace exists
//! only with a process in it: a child is cloned into a new one, its maps are written from
//! here (root in the initial namespace may write any map), a descriptor of the namespace
//! is taken, and the child is killed. It is made here rather than in the shim because the
//! shim is pid 1 of a new pid namespace whose `/proc` is not mounted yet: the child's pid
//! there names another process in the `/proc` it sees.
//!
//! Why by hand: `libc::clone` with a child function of our own. nix's `clone` hands the
//! child its closure through a slot of the caller's stack frame, which is gone once the
//! call returns: with `CLONE_VM` and no `CLONE_VFORK` (the child outlives the call here)
//! the child would read freed memory. What the child may do in a shared address space
//! (raw system calls only, on memory that outlives it) is this module's own.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// Bytes of the stack the child runs on: a few system calls.
const CHILD_STACK: usize = 16 * 1024;

/// What the child reads: kept by the caller until the child is reaped.
#[repr(C)]
struct ChildArgs {
    parent: libc::pid_t,
}

/// The child: dies with the supervisor, and otherwise waits for the SIGKILL that ends it.
/// Raw system calls only, with every signal blocked (the mask of the cloning thread),
/// and nothing written but its own registers and stack: the memory is the supervisor's,
/// whose other threads run meanwhile. None of these calls fails in a way that sets errno
/// (`pause` returns only after a handler ran, and none can run).
extern "C" fn wait_for_kill(args: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `args` points to the caller's `ChildArgs`, alive until this child is reaped;
    // the calls take plain integers.
    unsafe {
        let parent = (*(args as *const ChildArgs)).parent;
        libc::syscall(
            libc::SYS_prctl,
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL,
            0,
            0,
            0,
        );
        // A supervisor that died before the line above left us re-parented.
        if libc::syscall(libc::SYS_getppid) != parent as libc::c_long {
            libc::syscall(libc::SYS_exit_group, 0);
        }
        loop {
            libc::syscall(libc::SYS_pause);
        }
    }
}

/// A descriptor of a new user namespace whose uid and gid maps are
/// [`shim::mount_view::ROOT_OWNER_SHIFT_MAP`]. Costs a clone, two map writes and an open
/// (~0.15 ms here). An error where user namespaces cannot be made (a kernel or an outer
/// sandbox refusing them); the session then freezes `/etc` instead.
pub fn namespace() -> io::Result<OwnedFd> {
    made_and_reaped().0
}

/// [`namespace`], and how its child ended (its wait status; `None` when none was cloned).
fn made_and_reaped() -> (io::Result<OwnedFd>, Option<libc::c_int>) {
    let args = Box::new(ChildArgs {
        // SAFETY: getpid has no preconditions.
        parent: unsafe { libc::getpid() },
    });
    let mut stack = vec![0u8; CHILD_STACK];
    // The stack grows down from its end, 16-byte aligned as the ABI wants.
    let top = {
        let end = stack.as_mut_ptr_range().end as usize;
        (end - end % 16) as *mut libc::c_void
    };
    // No signal handler may run in the child, on the supervisor's memory: every signal is
    // blocked across the clone, and the child keeps that mask until SIGKILL ends it.
    // SAFETY: sigset operations on local sets, then this thread's mask.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut kept: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut kept);
    }
    // SAFETY: CLONE_VM without CLONE_VFORK: the child runs beside this thread on its own
    // stack with its own arguments, both kept until it is reaped below; it makes raw
    // system calls only and runs no signal handler.
    let pid = unsafe {
        libc::clone(
            wait_for_kill,
            top,
            libc::CLONE_NEWUSER | libc::CLONE_VM | libc::SIGCHLD,
            &*args as *const ChildArgs as *mut libc::c_void,
        )
    };
    let cloned = if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid)
    };
    // SAFETY: restoring this thread's own mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &kept, std::ptr::null_mut()) };
    let pid = match cloned {
        Ok(pid) => pid,
        Err(e) => return (Err(e), None),
    };
    // The child is ours and not reaped until below, so its pid names it all along.
    let made = (|| -> io::Result<OwnedFd> {
        let map = shim::mount_view::ROOT_OWNER_SHIFT_MAP;
        std::fs::write(format!("/proc/{pid}/uid_map"), map)?;
        std::fs::write(format!("/proc/{pid}/gid_map"), map)?;
        let ns = std::fs::File::open(format!("/proc/{pid}/ns/user"))?;
        Ok(OwnedFd::from(ns))
    })();
    let mut status = 0;
    // SAFETY: killing and reaping our own child; a wait interrupted by a signal is made
    // again, so the stack and arguments are never dropped while it runs.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        while libc::waitpid(pid, &mut status, 0) < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
    drop(stack);
    drop(args);
    (made.and_then(checked_user_namespace), Some(status))
}

/// `ns` when it is a user namespace's descriptor: NS_GET_NSTYPE (Linux 4.11) says so; an
/// older kernel has no idmapped mounts anyway.
fn checked_user_namespace(ns: OwnedFd) -> io::Result<OwnedFd> {
    const NS_GET_NSTYPE: libc::c_ulong = 0xb703;
    // SAFETY: an ioctl without arguments on our own descriptor.
    let kind = unsafe { libc::ioctl(ns.as_raw_fd(), NS_GET_NSTYPE as _) };
    if kind != libc::CLONE_NEWUSER {
        return Err(io::Error::other("not a user namespace"));
    }
    Ok(ns)
}

/// What a root session's `/etc` gets here, for `fence doctor`: `None` for an ordinary
/// user (who reads it by their own rights), else whether the shifted view can be made
/// (probed: the namespace and a detached shifted copy of `/etc`, then dropped).
pub fn probe() -> Option<Result<(), String>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let ns = match namespace() {
        Ok(ns) => ns,
        Err(e) => return Some(Err(format!("no user namespace for its mapping: {e}"))),
    };
    let etc = std::path::Path::new(shim::mount_view::SYSTEM_CONFIG);
    Some(
        shim::mount_view::probe_shift_root_owner(etc, &ns)
            .map_err(|e| format!("no idmapped mount of {}: {e}", etc.display())),
    )
}

#[cfg(test)]
mod tests {
    /// As root the namespace is made (a user namespace: checked inside), and each call
    /// makes its own.
    #[test]
    fn root_gets_a_user_namespace_of_its_own_each_time() {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: only root may write a map of several ids");
            return;
        }
        let ino = |fd: &std::os::fd::OwnedFd| {
            std::fs::metadata(format!(
                "/proc/self/fd/{}",
                std::os::fd::AsRawFd::as_raw_fd(fd)
            ))
            .unwrap()
            .ino()
        };
        let (a, b) = (super::namespace().unwrap(), super::namespace().unwrap());
        let own = std::fs::metadata("/proc/self/ns/user").unwrap().ino();
        assert_ne!(ino(&a), ino(&b));
        assert_ne!(ino(&a), own);
    }

    /// The child runs on memory of its own until the SIGKILL that ends it: never a fault
    /// (a child reading its function's argument from the caller's returned stack frame
    /// crashed in about one start of three).
    #[test]
    fn the_child_waits_for_its_kill_and_nothing_else_ends_it() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: only root may write a map of several ids");
            return;
        }
        for _ in 0..100 {
            let (made, status) = super::made_and_reaped();
            made.unwrap();
            let status = status.unwrap();
            assert!(
                libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL,
                "the child ended with wait status {status:#x}"
            );
        }
    }
}

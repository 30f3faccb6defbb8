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
//! Why by hand: nix's `clone` is the call; what the child may do in a shared address
//! space (raw system calls only) is this module's own, as in `spawn.rs`.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::sched::CloneFlags;

/// Bytes of the stack the child runs on: a few system calls.
const CHILD_STACK: usize = 16 * 1024;

/// A descriptor of a new user namespace whose uid and gid maps are
/// [`shim::mount_view::ROOT_OWNER_SHIFT_MAP`]. Costs a clone, two map writes and an open
/// (~0.15 ms here). An error where user namespaces cannot be made (a kernel or an outer
/// sandbox refusing them); the session then freezes `/etc` instead.
pub fn namespace() -> io::Result<OwnedFd> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // No signal handler may run in the child, on the supervisor's memory: every signal is
    // blocked across the clone, and the child keeps that mask until SIGKILL ends it.
    // SAFETY: sigset operations on local sets, then this thread's mask.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut kept: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut kept);
    }
    let child = Box::new(move || -> isize {
        // Raw system calls only, on this closure's own copies: the memory is the
        // supervisor's, whose other threads run meanwhile.
        // SAFETY: calls with plain integer arguments.
        unsafe {
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
            // Every signal but SIGKILL is blocked: this waits for that one.
            loop {
                libc::syscall(libc::SYS_pause);
            }
        }
    });
    let mut stack = vec![0u8; CHILD_STACK];
    // SAFETY: CLONE_VM without CLONE_VFORK: the child runs beside this thread on its own
    // stack, which outlives it (it is killed and reaped below before the stack is
    // dropped), makes raw system calls only and runs no signal handler.
    let cloned = unsafe {
        nix::sched::clone(
            child,
            &mut stack,
            CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_VM,
            Some(libc::SIGCHLD),
        )
    };
    // SAFETY: restoring this thread's own mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &kept, std::ptr::null_mut()) };
    let pid = cloned.map_err(io::Error::from)?.as_raw();
    // The child is ours and not reaped until below, so its pid names it all along.
    let made = (|| -> io::Result<OwnedFd> {
        let map = shim::mount_view::ROOT_OWNER_SHIFT_MAP;
        std::fs::write(format!("/proc/{pid}/uid_map"), map)?;
        std::fs::write(format!("/proc/{pid}/gid_map"), map)?;
        let ns = std::fs::File::open(format!("/proc/{pid}/ns/user"))?;
        Ok(OwnedFd::from(ns))
    })();
    // SAFETY: killing and reaping our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    drop(stack);
    let ns = made?;
    // A user namespace descriptor: NS_GET_NSTYPE (Linux 4.11) says so; an older kernel has
    // no idmapped mounts anyway.
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
}

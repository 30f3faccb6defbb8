//! Starting the shim as the first process of the sandbox's namespaces.
//!
//! The raw `clone` creates the pid, mount and network namespaces (and a user namespace for
//! an ordinary user) in one step, so the shim is pid 1 of its pid namespace: when it dies
//! the kernel kills every process in the sandbox. Where namespaces cannot be made (no
//! privilege, user namespaces restricted) the shim starts as a plain child and kills the
//! tree itself; the core fence (Landlock + seccomp) does not depend on namespaces.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use nix::sched::CloneFlags;
use shim::{Channel, Namespaces, SHIM_CHANNEL_FD};

/// The started shim.
#[derive(Debug, Clone, Copy)]
pub struct ShimProcess {
    pub pid: libc::pid_t,
    pub namespaces: Namespaces,
}

/// Starts `fence __shim` with `channel` as descriptor 3, in new namespaces when it can.
pub fn start_shim(channel: &Channel) -> io::Result<ShimProcess> {
    start_shim_in(channel, true)
}

/// Starts the shim as [`start_shim`] does, without a network namespace: where the shim
/// could not make one (it says so with [`shim::NET_STAGE`]).
pub fn start_shim_without_net(channel: &Channel) -> io::Result<ShimProcess> {
    start_shim_in(channel, false)
}

fn start_shim_in(channel: &Channel, net: bool) -> io::Result<ShimProcess> {
    // FENCE_NO_NAMESPACES=1 runs the fence as on a host where namespaces cannot be made
    // (diagnostics, and the tests of that mode).
    if std::env::var_os("FENCE_NO_NAMESPACES").is_some_and(|v| v == "1") {
        return plain(channel);
    }
    // The read-only mount view is made with mount_setattr (Linux 5.12): on older kernels
    // the sandbox runs as where namespaces cannot be made.
    if !kernel_has_mount_setattr() {
        return plain(channel);
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let wanted = Namespaces {
        user: !root,
        pid: true,
        mount: true,
        net,
        ipc: true,
    };
    match clone_shim(channel, wanted) {
        Ok(pid) => Ok(ShimProcess {
            pid,
            namespaces: wanted,
        }),
        // Among the failures, a user namespace whose ids could not be mapped: it would
        // leave the sandbox with no identity on files, so the sandbox runs as where no
        // namespace can be made rather than like that.
        Err(_) => plain(channel),
    }
}

fn plain(channel: &Channel) -> io::Result<ShimProcess> {
    let pid = clone_shim(channel, Namespaces::default())?;
    Ok(ShimProcess {
        pid,
        namespaces: Namespaces::default(),
    })
}

/// Whether the kernel has mount_setattr: a call with an invalid descriptor fails with
/// EBADF (or EINVAL) where it exists and with ENOSYS where it does not.
fn kernel_has_mount_setattr() -> bool {
    // SAFETY: an invalid descriptor and a null attribute: the kernel changes nothing.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            -1,
            std::ptr::null::<libc::c_char>(),
            0,
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    !(ret < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS))
}

fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: killing and reaping the child we just created.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

/// Why a cloned child did not reach its exec, as the one byte it writes to the status pipe.
const FAILED_ID_MAP: u8 = b'm';
const FAILED_EXEC: u8 = b'x';

/// Bytes of the stack the cloned child runs on until its exec: a handful of system calls.
const CHILD_STACK: usize = 64 * 1024;

/// Clones the shim into `ns` and executes `fence __shim` there, with `channel` as
/// descriptor 3 and an empty environment. Returns once the child has executed (or failed
/// to, which is an error).
///
/// The child shares the supervisor's memory and the calling thread waits until its exec
/// (`CLONE_VM | CLONE_VFORK`, as `posix_spawn` does): nothing of the supervisor's address
/// space is copied. A fork-like clone copied it (page tables, and every anonymous page
/// then written was copied again) and held the memory map's lock meanwhile, so the
/// supervisor's other threads stalled for up to 1.5 ms of each start. In a new user
/// namespace the child maps its own ids (root there is the caller outside: the one
/// mapping an ordinary user may write, from inside as `unshare -r` does) before its exec,
/// so that it keeps its capabilities across it: the shim builds the mount view with them;
/// the target then enters a nested user namespace that maps the caller's own ids back
/// ([`shim::target_process`]), so it runs under its real uid.
///
/// Why by hand: nix's `clone` is the call; what the child may do in a shared address
/// space (raw system calls on memory prepared before the clone) is this function's own.
fn clone_shim(channel: &Channel, ns: Namespaces) -> io::Result<libc::pid_t> {
    // The status pipe: closed by the child's exec (end of file: it ran), or given one
    // byte naming the step that failed before its `_exit`.
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into a valid array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned from here on.
    let (status_read, status_write) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Everything the child needs is prepared before clone: after it, the child may only
    // make raw system calls on this memory (it is the supervisor's, whose other threads
    // hold locks and allocate).
    let exe = CString::new("/proc/self/exe").map_err(io::Error::other)?;
    let arg0 = CString::new("fence").map_err(io::Error::other)?;
    let arg1 = CString::new("__shim").map_err(io::Error::other)?;
    let arg2 = CString::new(shim::UNSHARE_NET_ARG).map_err(io::Error::other)?;
    // The network namespace is the shim's to make ([`shim::UNSHARE_NET_ARG`]).
    let argv = [
        arg0.as_ptr(),
        arg1.as_ptr(),
        if ns.net {
            arg2.as_ptr()
        } else {
            std::ptr::null()
        },
        std::ptr::null(),
    ];
    let envp = [std::ptr::null::<libc::c_char>()];
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let id_maps: [(CString, Vec<u8>); 3] = [
        (c"/proc/self/setgroups".to_owned(), b"deny".to_vec()),
        (
            c"/proc/self/uid_map".to_owned(),
            format!("0 {uid} 1").into_bytes(),
        ),
        (
            c"/proc/self/gid_map".to_owned(),
            format!("0 {gid} 1").into_bytes(),
        ),
    ];
    let channel_fd = channel.as_raw_fd();
    let status_fd = status_write.as_raw_fd();
    // With a pid namespace the kernel kills the sandbox when the shim (its pid 1) dies, so
    // the shim can die at once with the supervisor; without one it must first kill the
    // tree, so it is told with a signal it can catch.
    let death_signal = if ns.pid { libc::SIGKILL } else { libc::SIGTERM };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };

    let mut flags = CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK;
    for (wanted, flag) in [
        (ns.user, CloneFlags::CLONE_NEWUSER),
        (ns.pid, CloneFlags::CLONE_NEWPID),
        (ns.mount, CloneFlags::CLONE_NEWNS),
        (ns.ipc, CloneFlags::CLONE_NEWIPC),
    ] {
        if wanted {
            flags |= flag;
        }
    }
    // No signal handler may run in the child, on the supervisor's memory: all are blocked
    // across the clone, and the child takes this thread's mask back just before its exec
    // (which resets the handlers), so the shim starts with the mask it always had.
    // SAFETY: sigset operations on local sets, then this thread's mask.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut kept: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut kept);
    }
    let kept_ref = &kept;
    let child = Box::new(move || -> isize {
        // Raw system calls only (`libc::syscall`), on memory prepared above. errno is the
        // supervisor thread's, which waits until the exec: nothing reads it meanwhile.
        // SAFETY: each call takes NUL-terminated strings, buffers and descriptors prepared
        // before the clone and valid until the exec.
        unsafe {
            let fail = |why: u8| -> ! {
                libc::syscall(
                    libc::SYS_write,
                    status_fd,
                    &why as *const u8 as *const libc::c_void,
                    1usize,
                );
                libc::syscall(libc::SYS_exit_group, 125);
                unreachable_exit()
            };
            libc::syscall(
                libc::SYS_prctl,
                libc::PR_SET_PDEATHSIG,
                death_signal,
                0,
                0,
                0,
            );
            // Outside a pid namespace, a supervisor that died before the line above leaves
            // us re-parented: stop here (inside one, getppid is 0 by design).
            if !ns.pid && libc::syscall(libc::SYS_getppid) != parent as libc::c_long {
                libc::syscall(libc::SYS_exit_group, 125);
            }
            if ns.user {
                for (path, content) in &id_maps {
                    let fd = libc::syscall(
                        libc::SYS_openat,
                        libc::AT_FDCWD,
                        path.as_ptr(),
                        libc::O_WRONLY | libc::O_CLOEXEC,
                    );
                    if fd < 0 {
                        fail(FAILED_ID_MAP);
                    }
                    let written = libc::syscall(
                        libc::SYS_write,
                        fd,
                        content.as_ptr() as *const libc::c_void,
                        content.len(),
                    );
                    libc::syscall(libc::SYS_close, fd);
                    if written != content.len() as libc::c_long {
                        fail(FAILED_ID_MAP);
                    }
                }
            }
            if channel_fd == SHIM_CHANNEL_FD {
                libc::syscall(libc::SYS_fcntl, channel_fd, libc::F_SETFD, 0);
            } else if libc::syscall(libc::SYS_dup2, channel_fd, SHIM_CHANNEL_FD) < 0 {
                fail(FAILED_EXEC);
            }
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                kept_ref as *const libc::sigset_t,
                std::ptr::null::<libc::sigset_t>(),
                std::mem::size_of::<libc::c_ulong>(),
            );
            libc::syscall(libc::SYS_execve, exe.as_ptr(), argv.as_ptr(), envp.as_ptr());
            fail(FAILED_EXEC)
        }
    });
    let mut stack = vec![0u8; CHILD_STACK];
    // SAFETY: CLONE_VM with CLONE_VFORK: this thread is suspended until the child has
    // executed or exited, so the stack, the closure and everything it reads outlive its
    // use; the child makes raw system calls only and no signal handler can run in it.
    let cloned = unsafe { nix::sched::clone(child, &mut stack, flags, Some(libc::SIGCHLD)) };
    // SAFETY: restoring this thread's own mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &kept, std::ptr::null_mut()) };
    let pid = cloned.map_err(io::Error::from)?.as_raw();
    drop(status_write);
    let mut why = 0u8;
    // SAFETY: one byte into a local from a pipe we own.
    let n = unsafe { libc::read(status_read.as_raw_fd(), (&mut why as *mut u8).cast(), 1) };
    if n == 0 {
        return Ok(pid);
    }
    kill_and_reap(pid);
    Err(match (n, why) {
        (1, FAILED_ID_MAP) => io::Error::other("mapping the sandbox's user namespace ids failed"),
        (1, _) => io::Error::other("the shim could not be executed"),
        _ => io::Error::last_os_error(),
    })
}

/// For the type checker: `exit_group` does not return.
fn unreachable_exit() -> ! {
    loop {
        // SAFETY: exit_group has no preconditions; it does not return.
        unsafe { libc::syscall(libc::SYS_exit_group, 125) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn mount_setattr_is_found_from_linux_5_12_on() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut parts = release.split(|c: char| !c.is_ascii_digit());
        let major: u32 = parts.next().unwrap().parse().unwrap();
        let minor: u32 = parts.next().unwrap().parse().unwrap();
        assert_eq!(
            super::kernel_has_mount_setattr(),
            (major, minor) >= (5, 12),
            "Linux {release}"
        );
    }
}

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

use shim::{Channel, Namespaces, SHIM_CHANNEL_FD};

/// The started shim.
#[derive(Debug, Clone, Copy)]
pub struct ShimProcess {
    pub pid: libc::pid_t,
    pub namespaces: Namespaces,
}

/// Starts `fence __shim` with `channel` as descriptor 3, in new namespaces when it can.
pub fn start_shim(channel: &Channel) -> io::Result<ShimProcess> {
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
        net: true,
        ipc: true,
    };
    match clone_shim(channel, wanted) {
        Ok((pid, go)) => {
            // A user namespace without a mapping leaves the sandbox with no identity on
            // files: fall back to no namespaces rather than run like that.
            if wanted.user && map_own_ids(pid).is_err() {
                kill_and_reap(pid);
                return plain(channel);
            }
            go.release()?;
            Ok(ShimProcess {
                pid,
                namespaces: wanted,
            })
        }
        Err(_) => plain(channel),
    }
}

fn plain(channel: &Channel) -> io::Result<ShimProcess> {
    let (pid, go) = clone_shim(channel, Namespaces::default())?;
    go.release()?;
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

/// Maps the caller's own uid and gid to root of the new user namespace (the only mapping
/// an ordinary user may write): the shim keeps its capabilities across exec there, to
/// build the mount view; the target then enters a nested user namespace that maps the
/// caller's own ids back ([`shim::target_process`]), so it runs under its real uid.
fn map_own_ids(pid: libc::pid_t) -> io::Result<()> {
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    std::fs::write(format!("/proc/{pid}/setgroups"), "deny")?;
    std::fs::write(format!("/proc/{pid}/uid_map"), format!("0 {uid} 1"))?;
    std::fs::write(format!("/proc/{pid}/gid_map"), format!("0 {gid} 1"))?;
    Ok(())
}

/// The write end of the pipe a cloned child in a new user namespace waits on before exec:
/// it must not exec before its ids are mapped (an unmapped exec loses every capability).
/// The child closes its own copy, so a supervisor that dies first ends the wait with
/// end-of-file. Other children do not wait.
struct Go(Option<OwnedFd>);

impl Go {
    fn release(self) -> io::Result<()> {
        let Some(fd) = self.0 else { return Ok(()) };
        // SAFETY: one byte from a valid buffer to a pipe we own.
        if unsafe { libc::write(fd.as_raw_fd(), b"g".as_ptr() as *const libc::c_void, 1) } != 1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn clone_shim(channel: &Channel, ns: Namespaces) -> io::Result<(libc::pid_t, Go)> {
    // Only a shim in a new user namespace waits before its exec, until its ids are mapped;
    // the others have nothing to wait for (one pipe, one read and one wake-up fewer).
    let pipe = if ns.user {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into a valid array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors are fresh and owned from here on.
        Some(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
    } else {
        None
    };
    let wait_fds = pipe
        .as_ref()
        .map(|(wait, go)| (wait.as_raw_fd(), go.as_raw_fd()));
    // Everything the child needs is prepared before clone: after it, the child may only
    // make raw system calls (the supervisor has other threads whose locks it copies).
    let exe = CString::new("/proc/self/exe").map_err(io::Error::other)?;
    let arg0 = CString::new("fence").map_err(io::Error::other)?;
    let arg1 = CString::new("__shim").map_err(io::Error::other)?;
    let argv = [arg0.as_ptr(), arg1.as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null::<libc::c_char>()];
    let channel_fd = channel.as_raw_fd();
    // With a pid namespace the kernel kills the sandbox when the shim (its pid 1) dies, so
    // the shim can die at once with the supervisor; without one it must first kill the
    // tree, so it is told with a signal it can catch.
    let death_signal = if ns.pid { libc::SIGKILL } else { libc::SIGTERM };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };

    let mut flags = libc::SIGCHLD as libc::c_ulong;
    if ns.user {
        flags |= libc::CLONE_NEWUSER as libc::c_ulong;
    }
    if ns.pid {
        flags |= libc::CLONE_NEWPID as libc::c_ulong;
    }
    if ns.mount {
        flags |= libc::CLONE_NEWNS as libc::c_ulong;
    }
    if ns.net {
        flags |= libc::CLONE_NEWNET as libc::c_ulong;
    }
    if ns.ipc {
        flags |= libc::CLONE_NEWIPC as libc::c_ulong;
    }
    // SAFETY: clone without CLONE_VM and with a null stack behaves like fork: the child gets
    // a copy of the address space and continues here with return value 0.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // Child: raw system calls only, then exec.
        // SAFETY: prctl/getppid/close/read/dup2/fcntl/execve/_exit are async-signal-safe system call
        // wrappers; every pointer was prepared before clone and is still valid in the copy.
        unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                death_signal as libc::c_ulong,
                0,
                0,
                0,
            );
            // Outside a pid namespace, a supervisor that died before the line above leaves
            // us re-parented: stop here (inside one, getppid is 0 by design).
            if !ns.pid && libc::getppid() != parent {
                libc::_exit(125);
            }
            if let Some((wait_fd, go_fd)) = wait_fds {
                libc::close(go_fd);
                let mut byte = 0u8;
                if libc::read(wait_fd, &mut byte as *mut u8 as *mut libc::c_void, 1) != 1 {
                    libc::_exit(125);
                }
            }
            if channel_fd == SHIM_CHANNEL_FD {
                libc::fcntl(channel_fd, libc::F_SETFD, 0);
            } else if libc::dup2(channel_fd, SHIM_CHANNEL_FD) < 0 {
                libc::_exit(125);
            }
            libc::execve(exe.as_ptr(), argv.as_ptr(), envp.as_ptr());
            libc::_exit(125);
        }
    }
    Ok((pid as libc::pid_t, Go(pipe.map(|(_wait, go)| go))))
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

//! Raw system calls the shim needs that neither `nix` nor `libc` wraps safely.
//!
//! Each function is small and states the invariant that makes its `unsafe` block sound.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV` (Linux 5.19): once the supervisor has received a
/// notification, only a fatal signal interrupts the waiting call.
pub const SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;

/// Installs a seccomp BPF program on the calling thread with the raw `seccomp(2)` call.
///
/// Returns the listener descriptor when `flags` contains `SECCOMP_FILTER_FLAG_NEW_LISTENER`.
pub fn seccomp_set_mode_filter(
    program: &[libc::sock_filter],
    flags: libc::c_ulong,
) -> io::Result<Option<OwnedFd>> {
    let len = u16::try_from(program.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "BPF program too long"))?;
    let fprog = libc::sock_fprog {
        len,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points at `program`, which outlives the call; the kernel copies it.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const libc::sock_fprog,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    if flags & libc::SECCOMP_FILTER_FLAG_NEW_LISTENER != 0 {
        let fd = RawFd::try_from(ret).map_err(|_| io::Error::other("listener fd out of range"))?;
        // SAFETY: with NEW_LISTENER the kernel returned a fresh descriptor that we now own.
        Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }))
    } else {
        Ok(None)
    }
}

/// Marks every descriptor from `first` up close-on-exec (`close_range` with
/// `CLOSE_RANGE_CLOEXEC`), so nothing the shim inherited survives into the target.
pub fn cloexec_from(first: u32) -> io::Result<()> {
    // SAFETY: close_range only changes descriptor flags; no memory is passed.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if ret == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        // close_range came in Linux 5.9, its CLOEXEC flag in 5.11: mark each descriptor.
        Some(libc::ENOSYS) | Some(libc::EINVAL) => cloexec_each_from(first),
        _ => Err(err),
    }
}

/// `cloexec_from` for kernels before 5.11: every open descriptor from `first` on, as
/// /proc/self/fd lists them (collected before any is touched), else every number below
/// the descriptor limit.
fn cloexec_each_from(first: u32) -> io::Result<()> {
    let listed: Option<Vec<libc::c_int>> = std::fs::read_dir("/proc/self/fd").ok().map(|dir| {
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect()
    });
    let fds: Vec<libc::c_int> = match listed {
        Some(fds) => fds,
        None => {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: a valid, writable rlimit structure.
            if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } < 0 {
                return Err(io::Error::last_os_error());
            }
            let max = libc::c_int::try_from(lim.rlim_cur).unwrap_or(libc::c_int::MAX);
            (0..max).collect()
        }
    };
    let first = libc::c_int::try_from(first).unwrap_or(libc::c_int::MAX);
    for fd in fds.into_iter().filter(|&fd| fd >= first) {
        // SAFETY: fcntl on a descriptor number only reads and sets its flags.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags < 0 {
            continue; // not open (the directory listing's own descriptor, now closed)
        }
        // SAFETY: as above.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A close-on-exec duplicate of `fd` numbered `min` or above.
pub fn dup_cloexec_above(fd: std::os::fd::BorrowedFd<'_>, min: RawFd) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we borrow; the result is a fresh descriptor.
    let ret = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(ret) })
}

/// `dup2(from, to)`: `to` then refers to `from`'s open file (and is not close-on-exec).
pub fn dup2(from: RawFd, to: RawFd) -> io::Result<()> {
    // SAFETY: dup2 takes descriptor numbers; whatever `to` was is closed by the kernel.
    if unsafe { libc::dup2(from, to) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Clears close-on-exec on `fd`, so the target inherits it.
pub fn keep_across_exec(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_SETFD with a flag value; no memory is passed.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Landlock ABI version of the running kernel; 0 when Landlock is missing or disabled.
pub fn landlock_abi_version() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: a null attribute with size 0 and the VERSION flag is the documented query form.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// Sets the calling thread's parent-death signal.
pub fn set_parent_death_signal(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number by value.
    let ret = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Sets `no_new_privs`, so that no later `execve` can gain privileges (set-id bits and
/// file capabilities are ignored), which also allows unprivileged seccomp and Landlock.
/// Sets both the soft and hard `RLIMIT_NPROC` (the process can never raise it again
/// without `CAP_SYS_RESOURCE`, which the target drops). It counts every process of the
/// real uid on the machine, and the kernel does not apply it to uid 0.
pub fn set_nproc_limit(limit: u64) -> io::Result<()> {
    // An unprivileged process cannot raise its hard limit, and the kernel's default for
    // RLIMIT_NPROC scales with memory (about 3,800 with 1 GiB): a limit above the current
    // hard one is clamped to it, which binds at least as tightly as the one asked for.
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid, writable rlimit structure.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut current) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let limit = (limit as libc::rlim_t).min(current.rlim_max);
    let rlim = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: a valid rlimit structure.
    if unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &rlim) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Sets `kernel.pid_max` of the caller's pid namespace to `pid_max` and reads it back.
/// Only for pid 1 of a pid namespace of its own on Linux 6.14 or later, where the value
/// belongs to that namespace (older kernels have one machine-wide value: the supervisor
/// never asks there, and the caller checks it runs in a namespace of its own). The target
/// drops every capability afterwards, so nothing in the sandbox can raise it again.
pub fn set_pid_namespace_max(pid_max: u64) -> io::Result<()> {
    const PATH: &str = "/proc/sys/kernel/pid_max";
    std::fs::write(PATH, pid_max.to_string())?;
    let now = std::fs::read_to_string(PATH)?;
    if now.trim() != pid_max.to_string() {
        return Err(io::Error::other(format!(
            "{PATH} reads {} after writing {pid_max}",
            now.trim()
        )));
    }
    Ok(())
}

/// Switches the calling process to SCHED_BATCH (priority 0, its nice value kept).
pub fn set_batch_scheduling() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param for the duration of the call; pid 0 is the
    // calling thread.
    let ret = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub fn set_no_new_privs() -> io::Result<()> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes plain integers.
    let ret = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes the calling process a child subreaper: orphans of the sandbox are re-parented to
/// it, so it can reap them and find them when the tree must be killed.
pub fn set_child_subreaper() -> io::Result<()> {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes a plain integer.
    let ret = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `mount_setattr(dir, path, flags, attr)`.
fn mount_setattr_at(
    dir: RawFd,
    path: &CStr,
    flags: libc::c_int,
    attr: &MountAttr,
) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated and `attr` lives across the call; its size is passed.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dir,
            path.as_ptr(),
            flags as libc::c_uint,
            attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `mount_setattr(2)` on `path`, setting and clearing mount attributes.
pub fn mount_setattr(path: &CString, recursive: bool, set: u64, clear: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    mount_setattr_at(libc::AT_FDCWD, path, flags, &attr)
}

/// `MOUNT_ATTR_IDMAP` (Linux 5.12).
pub const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;

/// Idmaps a detached tree from [`open_tree_clone`] (every mount of it) through the uid and
/// gid maps of the user namespace `userns`, setting the attributes `set` with it. The
/// kernel refuses a tree already attached, a file system that cannot be idmapped, and a
/// user namespace that is not one or is the initial one.
pub fn idmap_tree(tree: &OwnedFd, userns: &OwnedFd, set: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_IDMAP | set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: userns.as_raw_fd() as u64,
    };
    mount_setattr_at(
        tree.as_raw_fd(),
        c"",
        libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
        &attr,
    )
}

/// `open_tree(dir, name, OPEN_TREE_CLONE | AT_RECURSIVE)`: a detached copy of the mount
/// tree at `name` in `dir` (its last component not followed), with its submounts, held by
/// the returned descriptor (close-on-exec) until [`move_mount_at`] attaches it (Linux 5.2).
pub fn open_tree_clone(dir: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    let flags = OPEN_TREE_CLONE
        | libc::O_CLOEXEC as libc::c_uint
        | libc::AT_RECURSIVE as libc::c_uint
        | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint;
    // SAFETY: a NUL-terminated name relative to a descriptor; the result is owned below.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, dir, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `move_mount(tree, "", dir, name, MOVE_MOUNT_F_EMPTY_PATH)`: attaches a detached tree from
/// [`open_tree_clone`] at `name` in the directory `dir` (not followed if a symlink).
pub fn move_mount_at(tree: &OwnedFd, dir: RawFd, name: &CStr) -> io::Result<()> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
    // SAFETY: our descriptors, an empty and a NUL-terminated path.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            dir,
            name.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Brings the loopback interface of the current network namespace up, so that servers the
/// sandbox starts on 127.0.0.1 work in a namespace that has nothing else.
pub fn bring_loopback_up() -> io::Result<()> {
    // SAFETY: a plain socket call; the returned fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    use std::os::fd::AsRawFd;
    // SAFETY: SIOCGIFFLAGS reads into `req`, which is a valid ifreq.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the union field written by SIOCGIFFLAGS is ifru_flags.
    unsafe { req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: SIOCSIFFLAGS reads `req`, a valid ifreq naming "lo".
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `fstat` of descriptor `fd` (an `O_PATH` one included; a closed one fails).
pub fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat of a descriptor number into room for one stat.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: filled by fstat.
    Ok(unsafe { st.assume_init() })
}

/// Whether descriptor `fd` is open on a directory (an `O_PATH` one included): `fstat` of
/// the descriptor, where a `stat` of its `/proc/self/fd` link walks procfs first (a
/// frozen folder asks it of each of its entries at every start).
pub fn fd_is_directory(fd: RawFd) -> io::Result<bool> {
    Ok(fstat(fd)?.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    #[test]
    fn cloexec_each_from_marks_open_descriptors_from_first_on() {
        let low = std::fs::File::open("/dev/null").unwrap();
        let high = std::fs::File::open("/dev/null").unwrap();
        let (low, high) = (low.as_raw_fd(), high.as_raw_fd());
        let clear = |fd| {
            // SAFETY: flags of a descriptor this test owns.
            unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
        };
        let cloexec = |fd| {
            // SAFETY: as above.
            unsafe { libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0 }
        };
        clear(low);
        clear(high);
        super::cloexec_each_from(high as u32).unwrap();
        assert!(!cloexec(low), "a descriptor below `first` was marked");
        assert!(cloexec(high), "a descriptor from `first` on was not marked");
    }
}

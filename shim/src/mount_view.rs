//! The read-only view of the filesystem, made in the sandbox's own mount namespace.
//!
//! Landlock does not govern metadata (`chmod`, `chown`, `utimensat`, xattrs), and a uid-0
//! sandbox still owns root's files. Making every mount read-only except the writable roots
//! lets the kernel refuse those changes outside the fence with EROFS, race-free: the
//! supervisor may then answer `CONTINUE` to a metadata call inside the worktree, because a
//! path swapped after its check can only land on a read-only mount or inside the fence.
//!
//! The same view hides the unreadable paths under empty mounts: reads then need no
//! Landlock snapshot of their siblings, so files created later beside them stay readable.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::sys;

const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;

#[derive(Debug, thiserror::Error)]
pub enum MountViewError {
    #[error("making mounts private failed: {0}")]
    Private(io::Error),
    #[error("bind-mounting writable path {path} failed: {source}")]
    Bind { path: PathBuf, source: io::Error },
    #[error("making the filesystem read-only failed: {0}")]
    ReadOnly(io::Error),
    #[error("making writable path {path} writable again failed: {source}")]
    Writable { path: PathBuf, source: io::Error },
    #[error("mounting a /proc for the sandbox's pid namespace failed: {0}")]
    Proc(io::Error),
    #[error("hiding unreadable path {path} failed: {source}")]
    Hide { path: PathBuf, source: io::Error },
    #[error("mounting a {size}-byte tmpfs on the session TMPDIR {path} failed: {source}")]
    SizedTmp {
        path: PathBuf,
        size: u64,
        source: io::Error,
    },
    #[error("mounting a private tmpfs on {path} failed: {source}")]
    PrivateShm { path: PathBuf, source: io::Error },
    #[error("path {0:?} contains a NUL byte")]
    Nul(PathBuf),
}

fn cstring(path: &OsStr) -> Result<CString, MountViewError> {
    CString::new(path.as_bytes()).map_err(|_| MountViewError::Nul(PathBuf::from(path)))
}

/// Makes everything read-only except `writable` (each bind-mounted onto itself first so
/// it is a mount of its own) and, inside those, `protected`; pins `pinned` as mount
/// points; mounts a `/proc` that shows only the sandbox's pid
/// namespace when `new_proc`, and covers each of `hidden` with an empty read-only object.
/// `sized_tmp` (the session TMPDIR and a size in bytes) gets an empty tmpfs of that size,
/// private to the sandbox, before anything else (SPEC §3 "Limits"); `private_shm` (a
/// shared-memory directory such as `/dev/shm`, among `writable`) gets an empty tmpfs of its
/// own, so the sandbox neither sees nor writes the host's POSIX shared memory objects.
pub fn apply(
    writable: &[&OsStr],
    protected: &[&OsStr],
    pinned: &[&OsStr],
    hidden: &[&OsStr],
    new_proc: bool,
    sized_tmp: Option<(&OsStr, u64)>,
    private_shm: Option<&OsStr>,
) -> Result<(), MountViewError> {
    let root = cstring(OsStr::new("/"))?;
    // Private propagation: nothing done here may propagate back to the host's mounts.
    // SAFETY: all pointers are NUL-terminated strings or null, as mount(2) expects.
    let ret = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if ret < 0 {
        return Err(MountViewError::Private(io::Error::last_os_error()));
    }
    // The private /dev/shm first: a session TMPDIR below it then gets its sized tmpfs on
    // the path carried over, not on one the new tmpfs covers.
    if let Some(path) = private_shm {
        mount_private_shm(path, writable).map_err(|source| MountViewError::PrivateShm {
            path: PathBuf::from(path),
            source,
        })?;
    }
    if let Some((path, size)) = sized_tmp {
        mount_sized_tmp(path, size).map_err(|source| MountViewError::SizedTmp {
            path: PathBuf::from(path),
            size,
            source,
        })?;
    }
    let mut targets = Vec::new();
    for path in writable {
        let c = cstring(path)?;
        // A bind of the path onto itself gives it its own mount, whose read-only flag can
        // be cleared below without touching its parent.
        // SAFETY: `c` is NUL-terminated; the other pointers are null as allowed for MS_BIND.
        let ret = unsafe {
            libc::mount(
                c.as_ptr(),
                c.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            )
        };
        if ret < 0 {
            return Err(MountViewError::Bind {
                path: PathBuf::from(path),
                source: io::Error::last_os_error(),
            });
        }
        targets.push((PathBuf::from(path), c));
    }
    // Every mount read-only, recursively; other mount flags are left as they are (so locked
    // flags in a user namespace are not disturbed).
    sys::mount_setattr(&root, true, MOUNT_ATTR_RDONLY, 0).map_err(MountViewError::ReadOnly)?;
    for (path, c) in &targets {
        sys::mount_setattr(c, true, 0, MOUNT_ATTR_RDONLY).map_err(|source| {
            MountViewError::Writable {
                path: path.clone(),
                source,
            }
        })?;
    }
    // Pinned directories (.git) become mount points of their own: the kernel refuses to
    // rename or remove a mount point.
    for path in pinned {
        let c = cstring(path)?;
        bind_onto_itself(&c).map_err(|source| MountViewError::Bind {
            path: PathBuf::from(path),
            source,
        })?;
    }
    // Protected paths inside the writable roots: read-only binds of themselves, made after
    // the writable roots were opened up so nothing clears them again.
    for path in protected {
        let c = cstring(path)?;
        bind_onto_itself(&c).map_err(|source| MountViewError::Bind {
            path: PathBuf::from(path),
            source,
        })?;
        sys::mount_setattr(&c, true, MOUNT_ATTR_RDONLY, 0).map_err(|source| {
            MountViewError::Bind {
                path: PathBuf::from(path),
                source,
            }
        })?;
    }
    if new_proc {
        let proc_ = cstring(OsStr::new("/proc"))?;
        let fstype = cstring(OsStr::new("proc"))?;
        // A /proc of the sandbox's own pid namespace: /proc/self and /proc/<pid> then name
        // sandbox processes, and the host's processes are not listed.
        // SAFETY: all pointers are NUL-terminated strings or null.
        let ret = unsafe {
            libc::mount(
                fstype.as_ptr(),
                proc_.as_ptr(),
                fstype.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        };
        if ret < 0 {
            return Err(MountViewError::Proc(io::Error::last_os_error()));
        }
    }
    for path in hidden {
        hide(path).map_err(|source| MountViewError::Hide {
            path: PathBuf::from(path),
            source,
        })?;
    }
    Ok(())
}

fn bind_onto_itself(c: &CString) -> io::Result<()> {
    // SAFETY: `c` is NUL-terminated; the other pointers are null as allowed for MS_BIND.
    let ret = unsafe {
        libc::mount(
            c.as_ptr(),
            c.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Covers `path` for good: a directory with an empty, read-only tmpfs of mode 000, a file
/// with a read-only bind of /dev/null. The sandbox cannot undo it: it holds no capability,
/// seccomp refuses the mount calls, and Landlock forbids mount changes.
fn hide(path: &OsStr) -> io::Result<()> {
    let target = CString::new(path.as_bytes()).map_err(io::Error::other)?;
    let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let ret = if std::path::Path::new(path).is_dir() {
        // SAFETY: NUL-terminated strings; tmpfs takes its options as a C string.
        unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                flags,
                c"mode=000,size=4k,nr_inodes=1".as_ptr() as *const libc::c_void,
            )
        }
    } else {
        // SAFETY: NUL-terminated strings; a bind then a read-only remount of that bind.
        unsafe {
            let r = libc::mount(
                c"/dev/null".as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            );
            if r < 0 {
                r
            } else {
                libc::mount(
                    std::ptr::null(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REMOUNT | flags,
                    std::ptr::null(),
                )
            }
        }
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Mounts an empty tmpfs of `size` bytes, mode 0700, on the session TMPDIR. It is owned by
/// the shim's ids (root of the sandbox's user namespace, which is the caller's uid outside),
/// and lives only as long as the mount namespace: the host's directory stays empty.
/// An empty tmpfs of its own on `shm`. Writable paths below it (a worktree or an
/// `--allow-write` folder under `/dev/shm`) are opened before the tmpfs covers them and
/// bound back at the same path on it, so they stay the host's while the rest of `shm` is
/// private.
fn mount_private_shm(shm: &OsStr, writable: &[&OsStr]) -> io::Result<()> {
    let shm_path = Path::new(shm);
    let mut below: Vec<&Path> = writable
        .iter()
        .map(Path::new)
        .filter(|p| *p != shm_path && p.starts_with(shm_path))
        .collect();
    // Parents first: a nested path is then found inside its parent's bind.
    below.sort_by_key(|p| p.as_os_str().len());
    let mut kept = Vec::new();
    for path in below {
        let c = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: a NUL-terminated path; the descriptor is owned below.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor, owned from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let is_dir = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))?.is_dir();
        kept.push((path, c, fd, is_dir));
    }
    mount_tmpfs(shm, "mode=1777")?;
    for (path, target, fd, is_dir) in kept {
        if is_dir {
            std::fs::create_dir_all(path)?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
        }
        let source =
            CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(io::Error::other)?;
        // SAFETY: NUL-terminated strings; the other pointers are null as allowed for MS_BIND.
        let ret = unsafe {
            libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn mount_sized_tmp(path: &OsStr, size: u64) -> io::Result<()> {
    mount_tmpfs(path, &format!("mode=0700,size={size}"))
}

fn mount_tmpfs(path: &OsStr, options: &str) -> io::Result<()> {
    let target = CString::new(path.as_bytes()).map_err(io::Error::other)?;
    let options = CString::new(options).map_err(io::Error::other)?;
    // SAFETY: NUL-terminated strings; tmpfs takes its options as a C string.
    let ret = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr() as *const libc::c_void,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

//! Which view of the filesystem a path is looked up in: the sandbox's or fence's own.
//!
//! With a mount namespace the sandbox sees other mounts than fence does: its own tmpfs on
//! the session TMPDIR and on /dev/shm, empty mounts over the unreadable paths, read-only
//! binds on the protected paths. A symlink the sandbox makes in its TMPDIR exists only
//! there: looked up in fence's view, `$TMPDIR/l` (a symlink to the worktree's `.envrc`)
//! would be a missing name in TMPDIR, and a write through it would pass as one. So the
//! resolver looks every name up beneath the sandbox's root (`/proc/<init>/root`, opened
//! once when the sandbox is confined), and the calls the supervisor carries out inside the
//! fence are made there too (security boundary). Names under /proc are looked up in
//! fence's /proc, whose pids are the ones the notifications carry (see `path_resolve`).
//! Writes a person approved beyond the fence are made in fence's view: the sandbox's is
//! read-only there, and a person approved the real file.
//!
//! Without a mount namespace both views are the same, and every lookup is fence's.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The sandbox's root directory, once the sandbox has its mount view.
static SANDBOX_ROOT: OnceLock<OwnedFd> = OnceLock::new();

/// Where a path is looked up or a call carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The sandbox's own mounts (fence's, without a mount namespace).
    Sandbox,
    /// fence's mounts: for writes a person approved beyond the fence.
    Fence,
}

impl View {
    /// The directory an absolute path starts from, and the `openat2` resolve flag that
    /// keeps it there (`RESOLVE_IN_ROOT`: `/`, `..` and absolute symlinks stay beneath it).
    pub fn base(self) -> (RawFd, u64) {
        match (self, SANDBOX_ROOT.get()) {
            (View::Sandbox, Some(root)) => (root.as_raw_fd(), libc::RESOLVE_IN_ROOT),
            _ => (libc::AT_FDCWD, 0),
        }
    }
}

/// The sandbox's root directory, when it has a mount view of its own.
pub fn sandbox_root() -> Option<std::os::fd::BorrowedFd<'static>> {
    use std::os::fd::AsFd;
    SANDBOX_ROOT.get().map(|fd| fd.as_fd())
}

/// Opens the root of the sandbox whose init is `init` (a pid in fence's namespace), once
/// its mount view is made: every later lookup in [`View::Sandbox`] starts there. The
/// descriptor holds the sandbox's mount tree for the whole session, even after the init
/// is gone. Called once; a second call is an error.
pub fn set_sandbox_root(init: libc::pid_t) -> io::Result<()> {
    let root = open_directory_link(&format!("/proc/{init}/root"))?;
    SANDBOX_ROOT
        .set(root)
        .map_err(|_| io::Error::other("the sandbox's root was already set"))
}

/// Opens the directory a /proc magic link (`/proc/<pid>/root`, `/proc/<tid>/cwd`) leads
/// to, as `O_PATH`: the kernel follows the link into the process's own mount namespace.
pub fn open_directory_link(link: &str) -> io::Result<OwnedFd> {
    let c = CString::new(link)?;
    // SAFETY: open of a NUL-terminated path; the result is checked below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `readlink(path)` as the sandbox sees it (`path` absolute and normalized): the link's
/// target, EINVAL for an entry that is not a symlink, ENOENT for a missing one. Paths
/// under /proc are read in fence's /proc. The walk that calls this resolved every
/// directory above `path` already, so the kernel meets no symlink before the last name.
pub fn read_link(path: &Path) -> io::Result<PathBuf> {
    let root = SANDBOX_ROOT.get();
    match root {
        Some(root) if !path.starts_with("/proc") => {
            let bytes = path.as_os_str().as_bytes();
            let relative = bytes.strip_prefix(b"/").unwrap_or(bytes);
            if relative.is_empty() {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            read_link_at(root.as_raw_fd(), relative)
        }
        _ => std::fs::read_link(path),
    }
}

/// The device and inode numbers of `path` (absolute, resolved) as the sandbox sees it,
/// its last component not followed.
pub fn identity(path: &Path) -> io::Result<(u64, u64)> {
    let st = stat_nofollow(path)?;
    Ok((st.st_dev, st.st_ino))
}

/// `fstatat(path, AT_SYMLINK_NOFOLLOW)` in the sandbox's view. The directories above the
/// last component were resolved by the caller; what it learns decides only where a call
/// is made, never whether it is allowed.
fn stat_nofollow(path: &Path) -> io::Result<libc::stat> {
    let bytes = path.as_os_str().as_bytes();
    let (dirfd, name) = match SANDBOX_ROOT.get() {
        Some(root) => (root.as_raw_fd(), bytes.strip_prefix(b"/").unwrap_or(bytes)),
        None => (libc::AT_FDCWD, bytes),
    };
    let c = CString::new(if name.is_empty() { &b"."[..] } else { name })?;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: a NUL-terminated name and room for one stat.
    let ret = unsafe {
        libc::fstatat(
            dirfd,
            c.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatat filled it.
    Ok(unsafe { st.assume_init() })
}

/// Whether `path` (absolute, resolved) names a unix socket file as the sandbox sees it,
/// its last component not followed. A hint for where a move or link is made (Landlock
/// grants the sandbox no right to make socket files, so the supervisor moves those), not
/// a security check: an error or a race only sends the call one way or the other.
pub fn is_socket(path: &Path) -> bool {
    stat_nofollow(path).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFSOCK)
}

/// Whether `path` (absolute, resolved) names a directory as the sandbox sees it, its last
/// component not followed. Policy only: the answer may be stale by the time a call acts.
pub fn is_directory(path: &Path) -> bool {
    stat_nofollow(path).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

/// `readlinkat(dirfd, name)`.
pub fn read_link_at(dirfd: RawFd, name: &[u8]) -> io::Result<PathBuf> {
    let c = CString::new(name)?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: a NUL-terminated name and a buffer of the length given.
    let n = unsafe {
        libc::readlinkat(
            dirfd,
            c.as_ptr(),
            buf.as_mut_ptr().cast::<libc::c_char>(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

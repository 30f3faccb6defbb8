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
use std::os::unix::ffi::OsStrExt;
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

/// The writable roots (worktree, session TMPDIR, `--allow-write` folders…) as opened when
/// the session started, for a sandbox with no mount view of its own; longest first.
static PINNED_ROOTS: OnceLock<Vec<(PathBuf, OwnedFd)>> = OnceLock::new();

/// Opens each writable root that is a directory, once, as the sandbox's Landlock ruleset is
/// made from them: without a mount view the calls the supervisor carries out for the
/// sandbox start from these descriptors ([`pinned_root_of`]), not from the roots' paths.
/// Landlock's rules hold the folders themselves (their inodes): a worktree the host moves
/// away during the session (`mv project project.old`, another clone made at the old path)
/// stays the sandbox's, and the folder now at its path is no writable root for the kernel,
/// so the supervisor must not carry out writes there either (security boundary). A root
/// that cannot be opened is left to its path.
pub fn pin_writable_roots(roots: &[PathBuf]) {
    let mut pinned: Vec<(PathBuf, OwnedFd)> = roots
        .iter()
        .filter_map(|r| {
            let c = CString::new(r.as_os_str().as_bytes()).ok()?;
            // SAFETY: open of a NUL-terminated path; the result is checked.
            let fd = unsafe {
                libc::open(
                    c.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            };
            // SAFETY: a fresh descriptor that we now own.
            (fd >= 0).then(|| (r.clone(), unsafe { OwnedFd::from_raw_fd(fd) }))
        })
        .collect();
    pinned.sort_by_key(|(r, _)| std::cmp::Reverse(r.as_os_str().len()));
    let _ = PINNED_ROOTS.set(pinned);
}

/// Without a mount view: the descriptor of the writable root that holds `path` (absolute,
/// resolved) as opened at the start ([`pin_writable_roots`]), and the rest of `path`
/// beneath it (`.` for the root itself). `None` with a mount view (its root is the base),
/// and for a path in no pinned root.
pub fn pinned_root_of(path: &Path) -> Option<(RawFd, &Path)> {
    if SANDBOX_ROOT.get().is_some() {
        return None;
    }
    PINNED_ROOTS.get()?.iter().find_map(|(root, fd)| {
        let rel = path.strip_prefix(root).ok()?;
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        Some((fd.as_raw_fd(), rel))
    })
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
        .map_err(|_| io::Error::other("the sandbox's root was already set"))?;
    // Its user and mount namespaces, for what only a process inside them can do (a socket
    // bound by an absolute path into the sandbox's private TMPDIR: `net_check`). Without
    // them that falls back to what fence's view allows.
    let open_ns = |name: &str| -> Option<OwnedFd> {
        let c = CString::new(format!("/proc/{init}/ns/{name}")).ok()?;
        // SAFETY: open of a NUL-terminated path; the result is checked.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        // SAFETY: a fresh descriptor that we now own.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    };
    if let (Some(user), Some(mount)) = (open_ns("user"), open_ns("mnt")) {
        let _ = SANDBOX_NAMESPACES.set((user, mount));
    }
    Ok(())
}

/// The sandbox's user and mount namespaces (`/proc/<init>/ns/{user,mnt}`), once its root
/// is set.
static SANDBOX_NAMESPACES: OnceLock<(OwnedFd, OwnedFd)> = OnceLock::new();

/// The sandbox's user and mount namespaces, when it has them and they could be opened.
pub fn sandbox_namespaces() -> Option<(RawFd, RawFd)> {
    SANDBOX_NAMESPACES
        .get()
        .map(|(user, mount)| (user.as_raw_fd(), mount.as_raw_fd()))
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
        Some(root) if !super::path_resolve::in_proc(path) => {
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

/// What [`read_link`] says of `path` (a symlink's target, `None` for anything else or
/// nothing), with the type of what it names (`S_IFMT` bits: whether a directory as
/// [`is_directory`] says, a socket as [`is_socket`] does), from one look at it (a
/// `readlink` follows for a symlink only; `readlink` alone answered EINVAL for anything
/// else and told nothing of a folder). The second is `None` where it was not learned (a
/// path in /proc, where names mean the caller's; nothing there).
pub fn link_and_kind(path: &Path) -> (Option<PathBuf>, Option<libc::mode_t>) {
    if super::path_resolve::in_proc(path) {
        return (read_link(path).ok(), None);
    }
    match stat_nofollow(path) {
        Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
            (read_link(path).ok(), Some(libc::S_IFLNK))
        }
        Ok(st) => (None, Some(st.st_mode & libc::S_IFMT)),
        Err(_) => (None, None),
    }
}

/// The mode (type and permission bits), owner and group of `path` (absolute, resolved) as
/// the sandbox sees it, its last component not followed.
pub fn mode_and_owner(path: &Path) -> io::Result<(u32, u32, u32)> {
    let st = stat_nofollow(path)?;
    Ok((st.st_mode, st.st_uid, st.st_gid))
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
    with_c_name(if name.is_empty() { &b"."[..] } else { name }, |c| {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a NUL-terminated name and room for one stat.
        let ret = unsafe { libc::fstatat(dirfd, c, st.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
        if ret != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat filled it.
        Ok(unsafe { st.assume_init() })
    })
}

/// The object the last name of a path named when it was pinned: an `O_PATH` descriptor
/// of it (not followed), its device and inode, whether it is a directory, and a symlink's
/// target, each read through that descriptor. The checks that judge the object a rename or
/// link moves look at it through this, so that the move the supervisor carries out can be
/// shown to have moved that very object ([`super::approved`]); the descriptor keeps the
/// inode from being freed and its number given to another file meanwhile.
#[derive(Debug)]
pub struct Pinned {
    /// Held, not read: while it is open the inode's number names no other file.
    #[allow(dead_code)]
    pub fd: std::sync::Arc<OwnedFd>,
    pub id: (u64, u64),
    pub is_dir: bool,
    pub target: Option<PathBuf>,
}

/// [`Pinned`] for `path` (absolute, resolved) as the sandbox sees it.
pub fn pin(path: &Path) -> io::Result<Pinned> {
    let bytes = path.as_os_str().as_bytes();
    let (dirfd, name) = match SANDBOX_ROOT.get() {
        Some(root) => (root.as_raw_fd(), bytes.strip_prefix(b"/").unwrap_or(bytes)),
        None => (libc::AT_FDCWD, bytes),
    };
    let fd = with_c_name(if name.is_empty() { &b"."[..] } else { name }, |c| {
        // SAFETY: a NUL-terminated name; the descriptor is owned below.
        let fd =
            unsafe { libc::openat(dirfd, c, libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that we own.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    })?;
    let st = nix::sys::stat::fstat(&fd).map_err(io::Error::from)?;
    let kind = st.st_mode & libc::S_IFMT;
    // An `O_PATH` descriptor of a symlink reads its target with an empty name.
    let target = if kind == libc::S_IFLNK {
        Some(read_link_at(fd.as_raw_fd(), b"")?)
    } else {
        None
    };
    Ok(Pinned {
        fd: std::sync::Arc::new(fd),
        id: (st.st_dev, st.st_ino),
        is_dir: kind == libc::S_IFDIR,
        target,
    })
}

/// `readlink("/proc/<tid>/<link>")` in fence's /proc (`cwd`, `fd/N`…), the name made on
/// the stack: on every notified call with a relative path.
pub fn read_proc_link(tid: libc::pid_t, link: &str) -> io::Result<PathBuf> {
    let mut name = [0u8; 64];
    let mut len = 0;
    let mut put = |bytes: &[u8]| -> io::Result<()> {
        let end = len + bytes.len();
        name.get_mut(len..end)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENAMETOOLONG))?
            .copy_from_slice(bytes);
        len = end;
        Ok(())
    };
    put(b"/proc/")?;
    let mut digits = [0u8; 12];
    let mut at = digits.len();
    let mut n = tid.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    put(&digits[at..])?;
    put(b"/")?;
    put(link.as_bytes())?;
    read_link_at(libc::AT_FDCWD, &name[..len])
}

/// Whether `path` (absolute, resolved) names a unix socket file as the sandbox sees it,
/// its last component not followed. A hint for where a move or link is made (Landlock
/// grants the sandbox no right to make socket files, so the supervisor moves those), not
/// a security check: an error or a race only sends the call one way or the other.
pub fn is_socket(path: &Path) -> bool {
    stat_nofollow(path).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFSOCK)
}

/// What `path` (absolute, resolved) names as the sandbox sees it, its last component not
/// followed: `None` when nothing, else whether it is a directory.
pub fn entry_kind(path: &Path) -> io::Result<Option<bool>> {
    match stat_nofollow(path) {
        Ok(st) => Ok(Some(st.st_mode & libc::S_IFMT == libc::S_IFDIR)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether `path` (absolute, resolved) names a directory as the sandbox sees it, its last
/// component not followed. Policy only: the answer may be stale by the time a call acts.
pub fn is_directory(path: &Path) -> bool {
    stat_nofollow(path).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

/// Whether `path` (absolute, resolved) names a regular file with other hard links as the
/// sandbox sees it, its last component not followed ([`super::private_copy`]). Policy: the
/// answer may be stale by the time a call acts.
pub fn is_shared_file(path: &Path) -> bool {
    stat_nofollow(path).is_ok_and(|st| super::private_copy::is_shared(&st))
}

/// What the last name of a path is, not followed.
#[derive(Debug)]
pub enum Looked {
    /// A symbolic link to this target.
    Link(PathBuf),
    /// Anything else; `shared`: a regular file with other hard links.
    Entry { shared: bool },
}

/// [`Looked`] for `path` (absolute and normalized, every directory above its last name
/// resolved) as the sandbox sees it; paths under /proc in fence's /proc. One `statx` asks
/// the type and the link count (a `readlink` follows for a symlink only): about what the
/// `readlink` alone costs, which answered EINVAL for anything else.
pub fn look(path: &Path) -> io::Result<Looked> {
    match SANDBOX_ROOT.get() {
        Some(root) if !super::path_resolve::in_proc(path) => {
            let bytes = path.as_os_str().as_bytes();
            let relative = bytes.strip_prefix(b"/").unwrap_or(bytes);
            if relative.is_empty() {
                return Ok(Looked::Entry { shared: false });
            }
            look_at(root.as_raw_fd(), relative)
        }
        _ => look_at(libc::AT_FDCWD, path.as_os_str().as_bytes()),
    }
}

/// [`look`] of `name` relative to the directory `dirfd`.
pub fn look_at(dirfd: RawFd, name: &[u8]) -> io::Result<Looked> {
    let (kind, links) = with_c_name(name, |c_name| {
        let mut st = std::mem::MaybeUninit::<libc::statx>::uninit();
        // SAFETY: a NUL-terminated name and room for one statx.
        let ret = unsafe {
            libc::statx(
                dirfd,
                c_name,
                libc::AT_SYMLINK_NOFOLLOW,
                libc::STATX_TYPE | libc::STATX_NLINK,
                st.as_mut_ptr(),
            )
        };
        if ret == 0 {
            // SAFETY: statx filled it.
            let st = unsafe { st.assume_init() };
            return Ok((
                u32::from(st.stx_mode) & libc::S_IFMT,
                u64::from(st.stx_nlink),
            ));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOSYS) {
            return Err(e);
        }
        // Before Linux 4.11, or refused by an outer filter: fstatat answers the same.
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a NUL-terminated name and room for one stat.
        if unsafe { libc::fstatat(dirfd, c_name, st.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) } != 0
        {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatat filled it.
        let st = unsafe { st.assume_init() };
        Ok((st.st_mode & libc::S_IFMT, st.st_nlink))
    })?;
    if kind == libc::S_IFLNK {
        return match read_link_at(dirfd, name) {
            Ok(target) => Ok(Looked::Link(target)),
            // No longer a symlink: replaced between the two calls.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                Err(io::Error::from_raw_os_error(libc::EAGAIN))
            }
            Err(e) => Err(e),
        };
    }
    Ok(Looked::Entry {
        shared: kind == libc::S_IFREG && links > 1,
    })
}

/// `readlinkat(dirfd, name)`. On every notified write: the name and the target are kept in
/// buffers on the stack (a heap buffer of `PATH_MAX` per call showed in the profile), and
/// only the result is allocated.
pub fn read_link_at(dirfd: RawFd, name: &[u8]) -> io::Result<PathBuf> {
    with_c_name(name, |c_name| {
        let mut buf = std::mem::MaybeUninit::<[u8; libc::PATH_MAX as usize]>::uninit();
        // SAFETY: a NUL-terminated name and a buffer of the length given.
        let n = unsafe {
            libc::readlinkat(
                dirfd,
                c_name,
                buf.as_mut_ptr().cast::<libc::c_char>(),
                libc::PATH_MAX as usize,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel wrote the first `n` bytes (n <= PATH_MAX).
        let target = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(target)))
    })
}

/// Calls `f` with `name` as a NUL-terminated string: copied to the stack when short, as
/// almost every path is. A name holding a NUL byte is an error (as `CString::new` says).
pub fn with_c_name<T>(
    name: &[u8],
    f: impl FnOnce(*const libc::c_char) -> io::Result<T>,
) -> io::Result<T> {
    const SHORT: usize = 512;
    if name.len() >= SHORT {
        let c = CString::new(name)?;
        return f(c.as_ptr());
    }
    if name.contains(&0) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut c = [0u8; SHORT];
    c[..name.len()].copy_from_slice(name);
    f(c.as_ptr().cast::<libc::c_char>())
}

#[cfg(test)]
mod tests {
    #[test]
    fn proc_links_are_read_as_std_reads_them() {
        let me = std::process::id() as libc::pid_t;
        for link in ["cwd", "exe", "fd/0"] {
            assert_eq!(
                super::read_proc_link(me, link).ok(),
                std::fs::read_link(format!("/proc/{me}/{link}")).ok(),
                "{link}"
            );
        }
        let long = "x".repeat(100);
        assert!(super::read_proc_link(me, &long).is_err());
    }

    #[test]
    fn names_holding_a_nul_byte_are_refused() {
        let r = super::read_link_at(libc::AT_FDCWD, b"/proc/self/cwd\0x");
        assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::EINVAL));
        // A name too long for the stack buffer: the same answer through the heap.
        let long = format!("/nonexistent{}", "/a".repeat(300));
        let r = super::read_link_at(libc::AT_FDCWD, long.as_bytes());
        assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::ENOENT));
    }
}

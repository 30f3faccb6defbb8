//! Metadata changes the supervisor performs itself, on the object it checked, with the
//! target's credentials: never `CONTINUE` on a path or descriptor number the target can
//! still swap (Landlock does not govern chmod, chown, utimes or xattrs).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::acting::{TargetCredentials, act_as};
use super::fence::Fence;
use super::listener::Response;
use super::path_resolve::Caller;
use super::pidfd;
use super::target_memory::{MemoryError, TargetMemory};

/// Largest extended attribute value accepted (the kernel's XATTR_SIZE_MAX).
const XATTR_SIZE_MAX: u64 = 65536;

/// A metadata call as decoded from registers (memory not yet read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataOp {
    Chmod {
        mode: u32,
    },
    Chown {
        uid: u32,
        gid: u32,
    },
    /// `utime`: `struct utimbuf` (seconds), or null for now.
    Utime {
        times_addr: u64,
    },
    /// `utimes`/`futimesat`: two `struct timeval`, or null.
    Utimes {
        times_addr: u64,
    },
    /// `utimensat`: two `struct timespec`, or null.
    Utimensat {
        times_addr: u64,
    },
    SetXattr {
        name_addr: u64,
        value_addr: u64,
        size: u64,
        flags: i32,
    },
    RemoveXattr {
        name_addr: u64,
    },
    /// `truncate(2)` below Landlock ABI 3, which does not govern it.
    Truncate {
        length: u64,
    },
    /// A call whose arguments fence does not read (`setxattrat`, `removexattrat`).
    Unsupported,
}

impl MetadataOp {
    /// Whether the change may let other accounts write where they could not: a mode
    /// with group or other write, another owner or group (`owner` is the object's now),
    /// an extended attribute (a POSIX ACL is one). On a folder that holds protected paths
    /// (`.git`, the worktree, an agent's settings folder) such a change is asked: another
    /// account could then replace the hooks or settings it holds, which run as the user.
    /// `owner` is asked for only by a `chown`.
    pub fn may_open_to_others(&self, owner: impl FnOnce() -> Option<(u32, u32)>) -> bool {
        match *self {
            MetadataOp::Chmod { mode } => mode & 0o022 != 0,
            MetadataOp::Chown { uid, gid } => {
                let (now_uid, now_gid) = owner().unzip();
                (uid != u32::MAX && Some(uid) != now_uid)
                    || (gid != u32::MAX && Some(gid) != now_gid)
            }
            MetadataOp::SetXattr { .. } | MetadataOp::RemoveXattr { .. } => true,
            _ => false,
        }
    }
}

/// The owner and group of what `path` names (not following a last symlink).
pub fn owner_of(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.uid(), m.gid()))
}

/// The permission bits of `path` (not followed), as the host sees it.
pub fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| m.mode() & 0o7777)
}

/// The call with its memory arguments read and checked.
#[derive(Debug)]
enum Prepared {
    Chmod(u32),
    Chown(u32, u32),
    Times(Option<[libc::timespec; 2]>),
    SetXattr(CString, Vec<u8>, i32),
    RemoveXattr(CString),
    Truncate(libc::off_t),
}

fn memory_errno(e: MemoryError) -> i32 {
    match e {
        MemoryError::TooLong(_) => libc::ERANGE,
        _ => libc::EFAULT,
    }
}

fn words(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

fn prepare(mem: &TargetMemory<'_>, op: &MetadataOp) -> Result<Prepared, i32> {
    let ts = |sec: i64, nsec: i64| libc::timespec {
        tv_sec: sec,
        tv_nsec: nsec,
    };
    Ok(match *op {
        MetadataOp::Chmod { mode } => Prepared::Chmod(mode),
        MetadataOp::Chown { uid, gid } => Prepared::Chown(uid, gid),
        MetadataOp::Utime { times_addr: 0 } => Prepared::Times(None),
        MetadataOp::Utime { times_addr } => {
            let w = words(&mem.bytes(times_addr, 16).map_err(memory_errno)?);
            Prepared::Times(Some([ts(w[0], 0), ts(w[1], 0)]))
        }
        MetadataOp::Utimes { times_addr: 0 } => Prepared::Times(None),
        MetadataOp::Utimes { times_addr } => {
            let w = words(&mem.bytes(times_addr, 32).map_err(memory_errno)?);
            if !(0..1_000_000).contains(&w[1]) || !(0..1_000_000).contains(&w[3]) {
                return Err(libc::EINVAL);
            }
            Prepared::Times(Some([ts(w[0], w[1] * 1000), ts(w[2], w[3] * 1000)]))
        }
        MetadataOp::Utimensat { times_addr: 0 } => Prepared::Times(None),
        MetadataOp::Utimensat { times_addr } => {
            let w = words(&mem.bytes(times_addr, 32).map_err(memory_errno)?);
            Prepared::Times(Some([ts(w[0], w[1]), ts(w[2], w[3])]))
        }
        MetadataOp::SetXattr {
            name_addr,
            value_addr,
            size,
            flags,
        } => {
            if size > XATTR_SIZE_MAX {
                return Err(libc::E2BIG);
            }
            let name = mem.c_string(name_addr, 255).map_err(memory_errno)?;
            let value = if size == 0 {
                Vec::new()
            } else {
                mem.bytes(value_addr, size as usize).map_err(memory_errno)?
            };
            Prepared::SetXattr(CString::new(name).map_err(|_| libc::EINVAL)?, value, flags)
        }
        MetadataOp::RemoveXattr { name_addr } => {
            let name = mem.c_string(name_addr, 255).map_err(memory_errno)?;
            Prepared::RemoveXattr(CString::new(name).map_err(|_| libc::EINVAL)?)
        }
        MetadataOp::Truncate { length } => {
            Prepared::Truncate(libc::off_t::try_from(length).map_err(|_| libc::EINVAL)?)
        }
        MetadataOp::Unsupported => return Err(libc::EPERM),
    })
}

fn last_errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EPERM)
}

/// Applies `op` to the object behind our descriptor `fd` (a regular or an `O_PATH`
/// descriptor), through `/proc/self/fd/N`, which reaches that very object.
fn apply(fd: &OwnedFd, op: &Prepared) -> i32 {
    let Ok(link) = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())) else {
        return libc::EINVAL;
    };
    // SAFETY (all calls below): `link`, names and values are valid for the call's duration;
    // `fd` is a descriptor we own.
    let ret = unsafe {
        match op {
            Prepared::Chmod(mode) => libc::chmod(link.as_ptr(), *mode),
            Prepared::Chown(uid, gid) => libc::fchownat(
                fd.as_raw_fd(),
                c"".as_ptr(),
                *uid,
                *gid,
                libc::AT_EMPTY_PATH,
            ),
            Prepared::Times(times) => libc::utimensat(
                libc::AT_FDCWD,
                link.as_ptr(),
                times.as_ref().map_or(std::ptr::null(), |t| t.as_ptr()),
                0,
            ),
            Prepared::SetXattr(name, value, flags) => libc::setxattr(
                link.as_ptr(),
                name.as_ptr(),
                value.as_ptr() as *const libc::c_void,
                value.len(),
                *flags,
            ),
            Prepared::RemoveXattr(name) => libc::removexattr(link.as_ptr(), name.as_ptr()),
            // truncate(2) through the magic link reaches the checked object, with the
            // permission check of the target's credentials.
            Prepared::Truncate(length) => libc::truncate(link.as_ptr(), *length),
        }
    };
    if ret < 0 { last_errno() } else { 0 }
}

fn respond_with(result: io::Result<i32>) -> Response {
    match result {
        Ok(0) => Response::Value(0),
        Ok(errno) => Response::Error(errno),
        Err(e) => Response::Error(e.raw_os_error().unwrap_or(libc::EPERM)),
    }
}

/// Performs a path-based metadata call on `target`, which the check resolved inside the
/// writable root `root`. The object is opened again beneath `root` with
/// `RESOLVE_BENEATH`: a symlink swapped in since the check cannot lead outside.
pub fn perform_on_path(
    mem: &TargetMemory<'_>,
    caller: Caller,
    root: &Path,
    target: &Path,
    follow_last: bool,
    must_be_dir: bool,
    op: &MetadataOp,
) -> Response {
    let prepared = match prepare(mem, op) {
        Ok(p) => p,
        Err(errno) => return Response::Error(errno),
    };
    // The credentials are read by tid: trusted only while the call still waits.
    let creds = match TargetCredentials::of_thread(caller.tid) {
        Ok(c) if caller.still_pending() => c,
        _ => return Response::Error(libc::EPERM),
    };
    let rel = target
        .strip_prefix(root)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let root = root.to_path_buf();
    respond_with(act_as(&creds, move || {
        let fd = open_beneath(&root, &rel, follow_last, must_be_dir)?;
        Ok(apply(&fd, &prepared))
    }))
}

/// `openat2(root, rel, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, `root` opened in
/// the sandbox's view. `must_be_dir`: the caller's path ended with a slash, which is kept,
/// so that the kernel follows the last name and refuses anything but a directory as it
/// would have bare.
pub(super) fn open_beneath(
    root: &Path,
    rel: &Path,
    follow_last: bool,
    must_be_dir: bool,
) -> io::Result<OwnedFd> {
    // The root as the sandbox sees it (its private TMPDIR is a mount of its own).
    let rootfd = super::approved::open_checked(
        super::view::View::Sandbox,
        root,
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )?;
    let mut rel_bytes = if rel.as_os_str().is_empty() {
        b".".to_vec()
    } else {
        rel.as_os_str().as_bytes().to_vec()
    };
    if must_be_dir {
        rel_bytes.push(b'/');
    }
    let rel_c = CString::new(rel_bytes)?;
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags =
        (libc::O_PATH | libc::O_CLOEXEC | if follow_last { 0 } else { libc::O_NOFOLLOW }) as u64;
    // `rel` was resolved by the check, no symlink on it (a last one not followed is opened
    // itself, `O_PATH | O_NOFOLLOW`): one swapped in since fails the open.
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: `how` is a valid open_how and its size is passed; the path is NUL-terminated.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            rootfd.as_raw_fd(),
            rel_c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        let err = io::Error::last_os_error();
        // EXDEV: the path now leads outside the root — a swap since the check.
        if err.raw_os_error() == Some(libc::EXDEV) {
            return Err(io::Error::from_raw_os_error(libc::EACCES));
        }
        return Err(err);
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Performs a descriptor-based metadata call on the object the target's descriptor `fd`
/// refers to, fetched with `pidfd_getfd`; `Err` carries the object's path and the fetched
/// descriptor when it lies outside the fence or on a protected path (the gate may then ask,
/// and [`apply_on_fetched`] acts on that very object).
pub fn perform_on_fd(
    fence: &Fence,
    mem: &TargetMemory<'_>,
    caller: Caller,
    fd: i32,
    op: &MetadataOp,
) -> Result<(Response, Vec<u8>), (Vec<u8>, OwnedFd)> {
    let copy = match pidfd::open(caller).and_then(|p| pidfd::get_fd(&p, fd)) {
        Ok(c) => c,
        Err(_) => return Ok((Response::Error(libc::EBADF), Vec::new())),
    };
    let link =
        std::fs::read_link(format!("/proc/self/fd/{}", copy.as_raw_fd())).unwrap_or_default();
    let bytes = link.as_os_str().as_bytes();
    let path = Path::new(std::ffi::OsStr::from_bytes(
        bytes.strip_suffix(b" (deleted)").unwrap_or(bytes),
    ));
    // A file with other hard links, which may lie outside the fence, is asked about: the
    // descriptor reaches the shared file itself, and no private copy can take its place.
    if !path.is_absolute()
        || fence.root_of(path).is_none()
        || fence.is_shared_folder(path)
        || !in_sandbox_view(&copy, bytes, fence.root_of(path))
        || fence.is_protected(path, false)
        || (op.may_open_to_others(|| owner_of_fd(&copy)) && fence.is_protected(path, true))
        || super::private_copy::has_other_names(&copy, bytes)
    {
        return Err((bytes.to_vec(), copy));
    }
    let creds = match TargetCredentials::of_thread(caller.tid) {
        Ok(c) if caller.still_pending() => c,
        _ => return Ok((Response::Error(libc::EPERM), bytes.to_vec())),
    };
    let object = bytes.to_vec();
    Ok((apply_on_fetched(mem, &creds, copy, op), object))
}

/// The owner and group of the object behind `fd`.
fn owner_of_fd(fd: &OwnedFd) -> Option<(u32, u32)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat of a descriptor we own into room for one stat.
    if unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat filled it.
    let st = unsafe { st.assume_init() };
    Some((st.st_uid, st.st_gid))
}

/// Identity of the object behind a descriptor: its mount (`STATX_MNT_ID`, Linux 5.8),
/// device and inode. `None` where the kernel does not report the mount.
fn identity(dirfd: RawFd, name: &CStr, flags: i32) -> Option<(u64, u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::statx>::uninit();
    // SAFETY: a NUL-terminated name and room for one statx.
    let ret = unsafe {
        libc::statx(
            dirfd,
            name.as_ptr(),
            flags,
            libc::STATX_INO | libc::STATX_MNT_ID,
            st.as_mut_ptr(),
        )
    };
    if ret != 0 {
        return None;
    }
    // SAFETY: statx filled it.
    let st = unsafe { st.assume_init() };
    if st.stx_mask & libc::STATX_MNT_ID == 0 {
        return None;
    }
    let dev = libc::makedev(st.stx_dev_major, st.stx_dev_minor);
    Some((st.stx_mnt_id, dev, st.stx_ino))
}

/// Whether the object behind `copy` (a descriptor fetched from the sandbox, whose link
/// shows `link`) is the object the sandbox's own view holds at that path, on the same
/// mount: then the link's text, judged against the writable roots, says where the object
/// lies. Security boundary for every metadata change carried out through a descriptor.
/// A descriptor can come from outside (the standard streams fence was started with, a
/// `--pass-fd`, one passed over an allowed unix socket): its object sits on the host's
/// mounts, and its link shows a host path that may read as a path of the sandbox's
/// private /tmp or /dev/shm (the host's `/tmp/x` is not the sandbox's `/tmp/x`).
///
/// An object without a name any more (`… (deleted)`) is on the sandbox's side when it is
/// on the mount of the writable root its former path lies in (`root`). Without a mount
/// view of its own the sandbox sees fence's mounts, and the link's text is its path there.
pub(super) fn in_sandbox_view(copy: &OwnedFd, link: &[u8], root: Option<&Path>) -> bool {
    if super::view::sandbox_root().is_none() {
        return true;
    }
    let Some(held) = identity(copy.as_raw_fd(), c"", libc::AT_EMPTY_PATH) else {
        return false;
    };
    let open_in_view = |path: &Path, flags: i32| {
        super::approved::open_checked(super::view::View::Sandbox, path, flags, 0).ok()
    };
    let same_mount = |fd: Option<OwnedFd>, whole: bool| {
        fd.and_then(|fd| identity(fd.as_raw_fd(), c"", libc::AT_EMPTY_PATH))
            .is_some_and(|seen| {
                if whole {
                    seen == held
                } else {
                    seen.0 == held.0
                }
            })
    };
    match link.strip_suffix(b" (deleted)") {
        None => {
            let path = Path::new(std::ffi::OsStr::from_bytes(link));
            same_mount(
                open_in_view(path, libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC),
                true,
            )
        }
        Some(_) => root.is_some_and(|root| {
            same_mount(
                open_in_view(root, libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC),
                false,
            )
        }),
    }
}

/// Applies `op` to `object` (a descriptor the supervisor holds) with `creds`.
pub fn apply_on_fetched(
    mem: &TargetMemory<'_>,
    creds: &TargetCredentials,
    object: OwnedFd,
    op: &MetadataOp,
) -> Response {
    let prepared = match prepare(mem, op) {
        Ok(p) => p,
        Err(errno) => return Response::Error(errno),
    };
    respond_with(act_as(creds, move || Ok(apply(&object, &prepared))))
}

/// Performs a path-based metadata call a person approved on `target`, the checked and
/// resolved path, opened again with no symlink allowed anywhere on it
/// ([`super::approved::open_checked`]).
pub fn perform_on_checked_path(
    mem: &TargetMemory<'_>,
    creds: &TargetCredentials,
    view: super::view::View,
    target: &Path,
    follow_last: bool,
    op: &MetadataOp,
) -> Response {
    let prepared = match prepare(mem, op) {
        Ok(p) => p,
        Err(errno) => return Response::Error(errno),
    };
    let target = target.to_path_buf();
    let flags = libc::O_PATH | libc::O_CLOEXEC | if follow_last { 0 } else { libc::O_NOFOLLOW };
    respond_with(act_as(creds, move || {
        let fd = super::approved::open_checked(view, &target, flags, 0)?;
        Ok(apply(&fd, &prepared))
    }))
}

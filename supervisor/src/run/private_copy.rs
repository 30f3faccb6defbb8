//! A file of a writable root that has other hard links gets a private copy before it is
//! written.
//!
//! Landlock judges a write by the path it was opened through, not by the file: a file in
//! the worktree that is a hard link to one outside (pnpm's `node_modules` share their
//! files with the store in the home, uv's virtualenvs with its cache, `cp -al` backups)
//! would be written in both places at once, the outside one included, and the code of
//! every other project that uses the shared file changed with it. The sandbox cannot make
//! such a link (`link` of a file outside is refused), but it finds the ones that were
//! there. So before an open for writing, a `truncate` or a metadata change on a path that
//! names a regular file with more than one link, the supervisor replaces the name with a
//! copy of its own (contents, mode without set-id bits, group where the caller may keep
//! it, times) and the call then goes on to the copy: the other names keep the file as it
//! was. A link whose other names are all inside the worktree (cargo's `target/`) is broken
//! the same way, which changes nothing those tools rely on: they replace their files.
//! A call that acts on the open file behind a descriptor instead of a name (a reopen of
//! `/proc/self/fd/N`, `AT_EMPTY_PATH`, `fchmod`) would reach the shared file itself, which
//! no copy replaces: it is refused (`path_resolve`'s `Found::SharedObject`,
//! [`has_other_names`]).
//!
//! Policy, not a boundary: the check reads the path the caller named, and a thread racing
//! it can swap in the name of another shared file after the check (the kernel then writes
//! that one, as Landlock allows it). What a person can rely on is that no plain write, by
//! any program, reaches a shared file. The copy itself is made from the checked path with
//! the caller's credentials (`acting`), through descriptors that follow no symlink.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::view::View;

/// Whether `st` is a regular file with other hard links.
pub fn is_shared(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFREG && st.st_nlink > 1
}

/// Whether the open file `fd`, whose descriptor link shows `shown`, has names besides that
/// one: a regular file with other hard links, or one whose shown name was removed
/// (`/path (deleted)`) while a name elsewhere keeps it (an unnamed file of the sandbox's
/// own, `O_TMPFILE` or all its names removed, has none).
pub fn has_other_names(fd: &OwnedFd, shown: &[u8]) -> bool {
    let deleted = shown.ends_with(b" (deleted)");
    fstat(fd.as_raw_fd()).is_ok_and(|st| {
        st.st_mode & libc::S_IFMT == libc::S_IFREG
            && (st.st_nlink > 1 || (deleted && st.st_nlink > 0))
    })
}

/// Replaces `path` (absolute, checked, in `view`) with a private copy when it names a
/// regular file with other hard links; nothing when it does not (any more). `keep_data`:
/// the copy gets the contents (an open that truncates, `creat`, needs none). Run with the
/// caller's credentials: the copy is the caller's file, made only where the caller could
/// write the original (`EACCES` otherwise, as its own call would have got), or for a
/// metadata change (`for_metadata`) also where it owns it (`EPERM` otherwise: a file it
/// may neither write nor change the mode of stays so).
pub fn make(view: View, path: &Path, keep_data: bool, for_metadata: bool) -> io::Result<()> {
    let (parent, name) = super::approved::parent_of(view, path)?;
    let dir = parent.as_raw_fd();
    // Read for the copy (an O_PATH descriptor when no contents are needed: the caller may
    // be allowed to write a file it may not read).
    let flags = if keep_data {
        libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY
    } else {
        libc::O_PATH
    };
    let original = open_at(dir, &name, flags | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0)?;
    let st = fstat(original.as_raw_fd())?;
    if !is_shared(&st) {
        return Ok(());
    }
    // The caller's own call would fail without write permission (a metadata change,
    // without owning the file either): so does the copy, which would otherwise give it a
    // file it may change where it had none.
    if let Err(e) = access_for_writing(dir, &name) {
        // SAFETY: setfsuid(-1) changes nothing and returns this thread's filesystem uid.
        let fsuid = unsafe { libc::syscall(libc::SYS_setfsuid, u32::MAX) } as u32;
        if !for_metadata {
            return Err(e);
        }
        if st.st_uid != fsuid {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
    }
    let copy = new_unnamed(dir, &name)?;
    if keep_data {
        let from = std::fs::File::from(original);
        let to = std::fs::File::from(copy.try_clone()?);
        copy_keeping_holes(&from, &to, st.st_size)?;
    }
    let file = copy.file.as_raw_fd();
    // The group where the caller may keep it (a member of it); the owner is the caller.
    // SAFETY: fchown of our own descriptor; -1 leaves the owner.
    let _ = unsafe { libc::fchown(file, u32::MAX, st.st_gid) };
    // Set-user-ID and set-group-ID bits are not carried over: the copy is the caller's.
    let mode = st.st_mode & 0o1777;
    // SAFETY: fchmod of our own descriptor.
    if unsafe { libc::fchmod(file, mode) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let times = [
        libc::timespec {
            tv_sec: st.st_atime,
            tv_nsec: st.st_atime_nsec,
        },
        libc::timespec {
            tv_sec: st.st_mtime,
            tv_nsec: st.st_mtime_nsec,
        },
    ];
    // SAFETY: futimens of our own descriptor with two valid timespecs.
    if unsafe { libc::futimens(file, times.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    copy.replace(&parent, &name, (st.st_dev, st.st_ino))
}

/// Copies `from` into `to` (empty), `size` bytes: only the ranges that hold data
/// (`SEEK_DATA`/`SEEK_HOLE`), so a sparse file stays sparse (a 4 GiB file with a few
/// blocks written took 4 GiB of disk and 21 s to copy byte by byte); the rest is a hole of
/// `to` set by its length. Each range by `copy_file_range` where the filesystem has it (a
/// reflink on btrfs or xfs), else by reads and writes. A filesystem that cannot tell its
/// holes (EINVAL on `SEEK_DATA`) is copied whole.
fn copy_keeping_holes(from: &std::fs::File, to: &std::fs::File, size: i64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let (src, dst) = (from.as_raw_fd(), to.as_raw_fd());
    let seek = |at: i64, whence: libc::c_int| -> io::Result<Option<i64>> {
        // SAFETY: lseek on our own descriptor.
        let ret = unsafe { libc::lseek(src, at, whence) };
        if ret >= 0 {
            return Ok(Some(ret));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // No data at or after `at`.
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        }
    };
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    let mut at = 0;
    while at < size {
        let start = match seek(at, libc::SEEK_DATA) {
            Ok(Some(start)) => start,
            Ok(None) => break,
            // No hole information: the whole file.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                ranges = vec![(0, size)];
                break;
            }
            Err(e) => return Err(e),
        };
        let end = seek(start, libc::SEEK_HOLE)?.unwrap_or(size).min(size);
        if end <= start {
            break;
        }
        ranges.push((start, end));
        at = end;
    }
    let mut buf = vec![0u8; 64 * 1024];
    for (start, end) in ranges {
        let mut off = start;
        while off < end {
            let want = (end - off) as usize;
            let (mut from_off, mut to_off) = (off as libc::loff_t, off as libc::loff_t);
            // SAFETY: both descriptors are ours; the offsets are local variables.
            let n = unsafe { libc::copy_file_range(src, &mut from_off, dst, &mut to_off, want, 0) };
            let n = if n > 0 {
                n as usize
            } else if n == 0 {
                // The file is shorter than it was (changed meanwhile): done.
                break;
            } else {
                let e = io::Error::last_os_error();
                if !matches!(
                    e.raw_os_error(),
                    Some(libc::EXDEV | libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
                ) {
                    return Err(e);
                }
                let chunk = want.min(buf.len());
                let read = from.read_at(&mut buf[..chunk], off as u64)?;
                if read == 0 {
                    break;
                }
                to.write_all_at(&buf[..read], off as u64)?;
                read
            };
            off += n as i64;
        }
    }
    to.set_len(size.max(0) as u64)
}

/// The copy being made: an unnamed file (`O_TMPFILE`) in the original's folder, named
/// only once it is complete; or, where the filesystem has no unnamed files, a hidden name
/// of its own from the start, removed again if anything fails.
struct Copy {
    file: OwnedFd,
    named: Option<CString>,
    dir: RawFd,
}

impl Copy {
    fn try_clone(&self) -> io::Result<OwnedFd> {
        self.file.try_clone()
    }

    /// Renames the copy over `name`, if `name` still names the file that was copied
    /// (`original`: device and inode); else leaves everything as it is.
    fn replace(mut self, parent: &OwnedFd, name: &CStr, original: (u64, u64)) -> io::Result<()> {
        let dir = parent.as_raw_fd();
        let temp = match self.named.take() {
            Some(temp) => temp,
            None => {
                let temp = temp_name(name);
                let link = CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd()))?;
                // SAFETY: NUL-terminated names; our own descriptors.
                let ret = unsafe {
                    libc::linkat(
                        libc::AT_FDCWD,
                        link.as_ptr(),
                        dir,
                        temp.as_ptr(),
                        libc::AT_SYMLINK_FOLLOW,
                    )
                };
                if ret != 0 {
                    return Err(io::Error::last_os_error());
                }
                temp
            }
        };
        self.named = Some(temp.clone());
        let now = super::spare_folders::fstatat_nofollow(parent, name)?;
        if (now.st_dev, now.st_ino) != original {
            // Replaced meanwhile: whatever is there now is the call's to meet.
            return Ok(());
        }
        // SAFETY: NUL-terminated names relative to our own descriptor.
        if unsafe { libc::renameat(dir, temp.as_ptr(), dir, name.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.named = None;
        Ok(())
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        if let Some(temp) = &self.named {
            // SAFETY: a NUL-terminated name relative to our own descriptor.
            unsafe { libc::unlinkat(self.dir, temp.as_ptr(), 0) };
        }
    }
}

/// A new file for the copy in the folder `dir`, readable and writable by its owner only
/// until its mode is set.
fn new_unnamed(dir: RawFd, name: &CStr) -> io::Result<Copy> {
    match open_at(
        dir,
        c".",
        libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
        0o600,
    ) {
        Ok(file) => {
            return Ok(Copy {
                file,
                named: None,
                dir,
            });
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {}
        Err(e) => return Err(e),
    }
    let temp = temp_name(name);
    let file = open_at(
        dir,
        &temp,
        libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        0o600,
    )?;
    Ok(Copy {
        file,
        named: Some(temp),
        dir,
    })
}

/// A hidden name beside `name` that no other copy uses: `.NAME.fence-copy-PID-N`, the
/// original name shortened to fit a name's 255 bytes.
fn temp_name(name: &CStr) -> CString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let suffix = format!(
        ".fence-copy-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let bytes = name.to_bytes();
    let room = 255 - 1 - suffix.len();
    let mut temp = Vec::with_capacity(255);
    temp.push(b'.');
    temp.extend_from_slice(&bytes[..bytes.len().min(room)]);
    temp.extend_from_slice(suffix.as_bytes());
    // No NUL inside: the name came from a C string and the suffix is ASCII.
    CString::new(temp).unwrap_or_else(|_| c".fence-copy".to_owned())
}

/// `faccessat2(W_OK, AT_EACCESS)`: whether this thread's filesystem ids may write the
/// entry, its last component not followed. Before Linux 5.8, which has no `faccessat2`
/// (`faccessat` judges by the real ids, not the acting thread's filesystem ids), an open
/// for writing that changes nothing answers the same question.
fn access_for_writing(dir: RawFd, name: &CStr) -> io::Result<()> {
    // SAFETY: a NUL-terminated name relative to our own descriptor.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_faccessat2,
            dir,
            name.as_ptr(),
            libc::W_OK,
            libc::AT_EACCESS | libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if ret == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOSYS) {
        return Err(e);
    }
    let flags = libc::O_WRONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW;
    open_at(dir, name, flags | libc::O_CLOEXEC, 0).map(drop)
}

fn open_at(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name relative to our own descriptor; checked below.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat of a descriptor into room for one stat.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat filled it.
    Ok(unsafe { st.assume_init() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileExt, MetadataExt};

    /// A sparse file is copied with its holes: the same bytes, a few blocks on disk.
    #[test]
    fn a_sparse_file_is_copied_sparse_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let from = std::fs::File::create(&a).unwrap();
        from.write_all_at(b"head", 0).unwrap();
        from.write_all_at(b"middle", 64 << 20).unwrap();
        from.set_len(256 << 20).unwrap();
        let from = std::fs::File::open(&a).unwrap();
        let to = std::fs::File::create(&b).unwrap();
        let size = from.metadata().unwrap().len() as i64;
        copy_keeping_holes(&from, &to, size).unwrap();
        let (ma, mb) = (a.metadata().unwrap(), b.metadata().unwrap());
        assert_eq!(mb.len(), ma.len());
        // Well under the 256 MiB a byte-by-byte copy would take (512-byte blocks).
        assert!(mb.blocks() < 16 * 1024, "{} blocks", mb.blocks());
        let mut buf = [0u8; 6];
        let to = std::fs::File::open(&b).unwrap();
        to.read_exact_at(&mut buf[..4], 0).unwrap();
        assert_eq!(&buf[..4], b"head");
        to.read_exact_at(&mut buf, 64 << 20).unwrap();
        assert_eq!(&buf, b"middle");
        to.read_exact_at(&mut buf, (256 << 20) - 6).unwrap();
        assert_eq!(buf, [0; 6]);
    }

    /// A file with no holes is copied whole.
    #[test]
    fn a_dense_file_is_copied_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let text: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&a, &text).unwrap();
        let from = std::fs::File::open(&a).unwrap();
        let to = std::fs::File::create(&b).unwrap();
        copy_keeping_holes(&from, &to, text.len() as i64).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), text);
    }
}

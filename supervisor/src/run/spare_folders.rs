//! Spare folders: new folders of the worktree's root that Landlock already grants.
//!
//! The worktree's root is *held* (shim `landlock_fence::Holders`): a protected path that
//! does not exist yet (`.envrc`, `.vscode/`) would be made there, so the sandbox's ruleset
//! grants no right to make names in it and the supervisor carries out each such call from
//! the path it checked. A folder made there during the session (`target/`, `node_modules/`,
//! `build/`) has no rule of its own either — Landlock rules name the directories that exist
//! when the ruleset is made — so everything made beneath it was carried out too, at about
//! twice the cost of a call the kernel completes.
//!
//! So before the sandbox starts, the supervisor makes a few empty folders in the worktree's
//! spare home (`.git/fence/spares.PID`, a protected tree: no sandbox writes there, and the
//! mount view makes it read-only), and the sandbox's ruleset grants each of them whole, as
//! it grants the folders of the worktree that exist at start. When the sandbox makes a
//! folder in a held directory, and the folder would be granted whole had it existed at
//! start (no protected name can be made in it: shim `landlock_fence::grants_whole`), the
//! supervisor moves a spare into place under the checked name instead (`renameat2` with
//! `RENAME_NOREPLACE`, on descriptors: the pool's, opened through the worktree's mount in
//! the sandbox's view, and the checked parent's), with the owner, group, mode and times
//! `mkdir` would have given. A rename keeps the inode, and Landlock's rule is attached to
//! the inode: what the sandbox makes beneath the new folder then goes to the kernel
//! (`CONTINUE`), bounded as beneath any folder granted whole.
//!
//! Security boundary: the spares are granted before they are reachable. They lie under a
//! read-only bind of the sandbox's view (the spare home is protected, so the view binds it
//! read-only and the supervisor refuses any write there), the pool's descriptor never
//! reaches the target's program (it closes at exec), and a spare is moved only to a name
//! the write check allowed, under which a folder that existed at start would have had the
//! same grant. Without a mount view, or with fewer spares than folders made, folders are
//! made as before.

use std::ffi::{CStr, CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use shim::{SpareDir, SparePool};

/// How many spare folders a session starts with: folders made at a worktree's root are few
/// (`target`, `node_modules`, `build`, `.venv`…), and each spare is made at start and, if
/// unused, removed at the end. Once they are used up, folders are made as before.
const SPARES: usize = 8;

/// The name of one session's pool in the spare home.
fn pool_name(pid: u32) -> String {
    format!("spares.{pid}")
}

/// A session's pool of spare folders on the host (`.git/fence/spares.PID`). What is left of
/// it is removed when it is dropped: the unused spares (each still empty: only ever
/// `rmdir`) and the pool.
#[derive(Debug)]
pub struct SparePoolOnHost {
    path: PathBuf,
    spec: SparePool,
}

impl SparePoolOnHost {
    /// Makes the pool in the git directory of `worktree`, or `None` (no spares; nothing
    /// else changes) when the worktree's `.git` is not a directory of its own (no git
    /// repository, or a linked worktree's `.git` file), when the worktree or its `.git`
    /// carries a default ACL (a folder made there would inherit entries a spare has not),
    /// or when a step fails. Pools left by sessions that were killed are removed first.
    pub fn make(worktree: &Path) -> Option<SparePoolOnHost> {
        let git = worktree.join(".git");
        if !git.symlink_metadata().ok()?.is_dir()
            || has_default_acl(worktree)
            || has_default_acl(&git)
        {
            return None;
        }
        let home = worktree.join(shim::protected_paths::SPARE_HOME);
        match std::fs::DirBuilder::new().mode(0o700).create(&home) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if !home.symlink_metadata().ok()?.is_dir() {
                    return None;
                }
                remove_stale_pools(&home);
            }
            Err(_) => return None,
        }
        let path = home.join(pool_name(std::process::id()));
        // A pool of our own pid: left by a killed session whose pid we now have.
        remove_empty_tree(&path);
        std::fs::DirBuilder::new().mode(0o700).create(&path).ok()?;
        let mut names = Vec::new();
        for i in 0..SPARES {
            let name = OsString::from(i.to_string());
            if std::fs::DirBuilder::new()
                .mode(0o700)
                .create(path.join(&name))
                .is_ok()
            {
                names.push(name);
            }
        }
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let made = SparePoolOnHost {
            spec: SparePool {
                path: path.clone().into_os_string(),
                dev: meta.dev(),
                ino: meta.ino(),
                names,
            },
            path,
        };
        Some(made)
    }

    /// What the shim is told.
    pub fn spec(&self) -> SparePool {
        self.spec.clone()
    }
}

impl Drop for SparePoolOnHost {
    fn drop(&mut self) {
        remove_empty_tree(&self.path);
    }
}

/// Removes the empty folders in `dir`, then `dir` if it is empty by then. Nothing but
/// `rmdir`: a spare something was written into stays, and so does its pool.
fn remove_empty_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Removes the pools in the spare home whose session is gone (its supervisor's pid names
/// no process). A pool whose pid names a live process stays, whatever that process is.
fn remove_stale_pools(home: &Path) {
    let Ok(entries) = std::fs::read_dir(home) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("spares."))
            .and_then(|p| p.parse::<libc::pid_t>().ok())
            .filter(|p| *p > 0)
        else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            remove_empty_tree(&e.path());
        }
    }
}

/// Whether `dir` carries a default ACL (`system.posix_acl_default`).
fn has_default_acl(dir: &Path) -> bool {
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: a size query (null buffer, size 0) of a NUL-terminated path and name.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            c"system.posix_acl_default".as_ptr(),
            std::ptr::null_mut(),
            0,
        )
    };
    if n >= 0 {
        return true;
    }
    // No such attribute, or a filesystem without ACLs: none. Anything else: assume one.
    !matches!(
        io::Error::last_os_error().raw_os_error(),
        Some(libc::ENODATA) | Some(libc::EOPNOTSUPP)
    )
}

/// The spare folders the sandbox's ruleset grants, with their pool (opened through the
/// worktree's mount in the sandbox's view), shared by the notification threads.
#[derive(Debug)]
pub struct Spares {
    pool: OwnedFd,
    free: Mutex<Vec<SpareDir>>,
}

/// What the caller's `mkdir` asked for, and who it is.
pub struct NewFolder<'a> {
    /// The checked parent, opened in the sandbox's view.
    pub parent: &'a OwnedFd,
    pub name: &'a CStr,
    pub mode: u32,
    pub umask: u32,
    pub fsuid: libc::uid_t,
    pub fsgid: libc::gid_t,
}

impl Spares {
    pub fn new(pool: OwnedFd, spares: Vec<SpareDir>) -> Spares {
        Spares {
            pool,
            free: Mutex::new(spares),
        }
    }

    fn take(&self) -> Option<SpareDir> {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    fn put_back(&self, spare: SpareDir) {
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(spare);
    }

    /// Makes `new.name` in `new.parent` from a spare folder, on a thread acting as the
    /// caller (its fsuid, fsgid, groups). `Ok(Some(identity))`: made, and granted whole by
    /// the sandbox's ruleset (device and inode numbers of the folder). `Ok(None)`: no spare
    /// fits (none left, or the parent lies on another mount, or the spare is not as it was
    /// granted): the caller makes the folder as before. `Err`: the call's own failure, as
    /// `mkdir` would give it (`EEXIST`…).
    pub fn make_dir(&self, new: &NewFolder<'_>) -> io::Result<Option<(u64, u64)>> {
        let Some(spare) = self.take() else {
            return Ok(None);
        };
        let c = CString::new(spare.name.clone().into_vec())?;
        // SAFETY: openat of a NUL-terminated name relative to our open descriptor.
        let fd = unsafe {
            libc::openat(
                self.pool.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            // Gone or replaced on the host: not handed out again.
            return Ok(None);
        }
        // SAFETY: a fresh descriptor we own.
        let folder = unsafe { OwnedFd::from_raw_fd(fd) };
        let st = fstat(&folder)?;
        // The spare as it was granted, owned by the caller, and still empty (nothing in the
        // sandbox can reach it; this is the host's side).
        if (st.st_dev, st.st_ino) != (spare.dev, spare.ino)
            || st.st_uid != new.fsuid
            || !is_empty(&folder)?
        {
            return Ok(None);
        }
        // As mkdir(2): the permission bits and the sticky bit, less the umask; in a parent
        // with the set-group-ID bit, the parent's group and the bit, else the caller's fsgid.
        let parent = fstat(new.parent)?;
        let mut mode = new.mode & 0o1777 & !new.umask;
        let group = if parent.st_mode & libc::S_ISGID != 0 {
            mode |= libc::S_ISGID;
            parent.st_gid
        } else {
            new.fsgid
        };
        // The group before the move: a caller that may not take that group (not a member
        // of a set-group-ID parent's) gets a folder made as before, which the kernel gives it.
        // SAFETY: fchown of our descriptor; -1 keeps the owner.
        if st.st_gid != group && unsafe { libc::fchown(fd, u32::MAX, group) } != 0 {
            self.put_back(spare);
            return Ok(None);
        }
        const RENAME_NOREPLACE: libc::c_uint = 1;
        // SAFETY: both descriptors are ours and open; both names are NUL-terminated.
        let moved = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                self.pool.as_raw_fd(),
                c.as_ptr(),
                new.parent.as_raw_fd(),
                new.name.as_ptr(),
                RENAME_NOREPLACE,
            )
        };
        if moved != 0 {
            let e = io::Error::last_os_error();
            self.put_back(spare);
            // Another mount (a pinned `.git`, another writable root): made as before.
            return match e.raw_os_error() {
                Some(libc::EXDEV) => Ok(None),
                _ => Err(e),
            };
        }
        // Mode and times as a new folder's. Through the descriptor: the name may already
        // have been moved by the sandbox. A failure leaves a folder that exists, as the call
        // succeeded; its mode is at most the spare's 0700.
        // SAFETY: fchmod and futimens (null: now) of our descriptor.
        unsafe {
            libc::fchmod(fd, mode);
            libc::futimens(fd, std::ptr::null());
        }
        Ok(Some((spare.dev, spare.ino)))
    }
}

fn fstat(fd: &OwnedFd) -> io::Result<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat of our descriptor into room for one stat.
    if unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: filled by fstat.
    Ok(unsafe { st.assume_init() })
}

/// Whether the directory open at `fd` holds nothing but `.` and `..` (one `getdents64`
/// into a buffer that holds those two and more: a third entry shows in the first read).
/// By hand: the std and nix directory readers take the descriptor, and this needs one call.
fn is_empty(fd: &OwnedFd) -> io::Result<bool> {
    let mut buf = [0u8; 256];
    // SAFETY: getdents64 into our buffer, with its length.
    let n = unsafe {
        libc::syscall(
            libc::SYS_getdents64,
            fd.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    let mut at = 0;
    while at + 19 < n {
        // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name.
        let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
        if reclen == 0 {
            break;
        }
        let name = &buf[at + 19..(at + reclen).min(n)];
        let name = &name[..name.iter().position(|b| *b == 0).unwrap_or(name.len())];
        if name != b"." && name != b".." {
            return Ok(false);
        }
        at += reclen;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_directory_is_empty_and_one_entry_makes_it_not() {
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let c = CString::new(dir.path().as_os_str().as_bytes()).unwrap();
            // SAFETY: open of a NUL-terminated path.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
            assert!(fd >= 0);
            // SAFETY: fresh descriptor.
            unsafe { OwnedFd::from_raw_fd(fd) }
        };
        assert!(is_empty(&open()).unwrap());
        std::fs::create_dir(dir.path().join("HEAD")).unwrap();
        assert!(!is_empty(&open()).unwrap());
    }

    #[test]
    fn a_pool_is_made_only_in_a_git_directory_and_removed_when_dropped() {
        let wt = tempfile::tempdir().unwrap();
        assert!(SparePoolOnHost::make(wt.path()).is_none());
        std::fs::write(wt.path().join(".git"), "gitdir: elsewhere\n").unwrap();
        assert!(SparePoolOnHost::make(wt.path()).is_none());
        std::fs::remove_file(wt.path().join(".git")).unwrap();
        std::fs::create_dir(wt.path().join(".git")).unwrap();
        let pool = SparePoolOnHost::make(wt.path()).unwrap();
        let spec = pool.spec();
        assert_eq!(spec.names.len(), SPARES);
        let path = PathBuf::from(&spec.path);
        assert!(path.starts_with(wt.path().join(".git/fence")));
        assert!(path.join("0").is_dir());
        // A spare something was written into stays, with its pool.
        std::fs::write(path.join("1/x"), "").unwrap();
        drop(pool);
        assert!(!path.join("0").exists());
        assert!(path.join("1/x").exists());
    }

    #[test]
    fn a_dead_sessions_pool_is_removed_and_a_live_ones_kept() {
        let wt = tempfile::tempdir().unwrap();
        let home = wt.path().join(".git/fence");
        std::fs::create_dir_all(&home).unwrap();
        // pid_max is at most 2^22: this pid names no process.
        let dead = home.join("spares.99999999");
        let live = home.join(format!("spares.{}", std::os::unix::process::parent_id()));
        for p in [&dead, &live] {
            std::fs::create_dir_all(p.join("0")).unwrap();
        }
        let pool = SparePoolOnHost::make(wt.path()).unwrap();
        assert!(!dead.exists());
        assert!(live.join("0").is_dir());
        drop(pool);
    }
}

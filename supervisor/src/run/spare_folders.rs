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
//! So before the sandbox starts, the supervisor has a few empty folders in the worktree's
//! spare home (`.git/fence`, a protected tree: no sandbox writes there, and the mount view
//! makes it read-only): the user's kept pool `spares.uUID`, locked by one session at a time
//! and kept with its unused spares for the next one (a session finding it locked makes a
//! pool of its own, `spares.PID`, removed when it ends). The sandbox's ruleset grants each
//! spare whole, as
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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::sync::Mutex;

use shim::{SpareDir, SparePool};

/// How many spare folders a session starts with: folders made at a worktree's root are few
/// (`target`, `node_modules`, `build`, `.venv`…). A session makes only those the previous
/// one used; once they are used up, folders are made as before.
const SPARES: usize = 8;

/// The name of one session's pool in the spare home.
fn pool_name(pid: u32) -> String {
    format!("spares.{pid}")
}

/// A session's pool of spare folders on the host: the user's kept pool
/// (`.git/fence/spares.uUID`), which stays when it is dropped, or else one of the session's
/// own (`.git/fence/spares.PID`), removed when it is dropped: the unused spares (each still
/// empty: only ever `rmdir`), the pool, and `.git/fence` when no other pool is left in it.
/// Every step works on descriptors opened without following a symlink, so a link planted
/// in `.git/fence` leads nowhere.
#[derive(Debug)]
pub struct SparePoolOnHost {
    git: OwnedFd,
    home: OwnedFd,
    pool: OwnedFd,
    pool_name: CString,
    spec: SparePool,
    /// Each spare as it was made or found at start (name, device, inode).
    made: Vec<SpareDir>,
    /// The user's kept pool (`spares.uUID`, locked while this session lasts), which stays
    /// for the next session with the spares left in it; else this session's own
    /// (`spares.PID`), removed at the end.
    kept: bool,
}

impl SparePoolOnHost {
    /// Makes the pool in the git directory of `worktree`, or `None` (no spares; nothing
    /// else changes) when the worktree's `.git` is not a directory of its own (no git
    /// repository, or a linked worktree's `.git` file), when the worktree or its `.git`
    /// carries a default ACL (a folder made there would inherit entries a spare has not),
    /// or when a step fails. Pools left by sessions that were killed are removed first.
    pub fn make(worktree: &Path) -> Option<SparePoolOnHost> {
        let top = open_dir_at(
            libc::AT_FDCWD,
            &CString::new(worktree.as_os_str().as_bytes()).ok()?,
        )
        .ok()?;
        let git = open_dir_at(top.as_raw_fd(), c".git").ok()?;
        if has_default_acl(&top) || has_default_acl(&git) {
            return None;
        }
        let home_name = c"fence";
        // SAFETY: mkdirat of a NUL-terminated name relative to our descriptor.
        let made_home = unsafe { libc::mkdirat(git.as_raw_fd(), home_name.as_ptr(), 0o700) } == 0;
        if !made_home && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
            return None;
        }
        let home = open_dir_at(git.as_raw_fd(), home_name).ok()?;
        // SAFETY: no arguments.
        let euid = unsafe { libc::geteuid() };
        if !made_home {
            remove_stale_pools(&home);
        }
        // A pool is kept only in a repository of the session's user: one of root's kept in
        // a user's repository would be a folder the user cannot remove.
        let owns_repository = fstat(&git).is_ok_and(|st| st.st_uid == euid);
        let kept_pool = owns_repository
            .then(|| take_kept_pool(&home, euid))
            .flatten();
        let (pool, pool_name, made, kept) = match kept_pool {
            Some((pool, name, made)) => (pool, name, made, true),
            None => {
                let pool_name = CString::new(pool_name(std::process::id())).ok()?;
                // A pool of our own pid: left by a killed session whose pid we now have.
                remove_empty_at(&home, &pool_name);
                // SAFETY: as above.
                if unsafe { libc::mkdirat(home.as_raw_fd(), pool_name.as_ptr(), 0o700) } != 0 {
                    return None;
                }
                let pool = open_dir_at(home.as_raw_fd(), &pool_name).ok()?;
                // Swapped since it was made (the spare home may be another user's): not used.
                if !is_private(&pool, euid) {
                    return None;
                }
                let made = fill(&pool, Vec::new());
                (pool, pool_name, made, false)
            }
        };
        let st = fstat(&pool).ok()?;
        let path = worktree
            .join(shim::protected_paths::SPARE_HOME)
            .join(std::ffi::OsStr::from_bytes(pool_name.as_bytes()));
        Some(SparePoolOnHost {
            spec: SparePool {
                path: path.into_os_string(),
                dev: st.st_dev,
                ino: st.st_ino,
                names: made.iter().map(|s| s.name.clone()).collect(),
            },
            git,
            home,
            pool,
            pool_name,
            made,
            kept,
        })
    }

    /// What the shim is told.
    pub fn spec(&self) -> SparePool {
        self.spec.clone()
    }

    /// Of the spares the sandbox's ruleset granted (as the shim reports them), those that
    /// are the folders this pool made: a folder put in a spare's place before the shim
    /// opened it (by another session's sandbox writing here) is never handed out.
    pub fn granted(&self, reported: Vec<SpareDir>) -> Vec<SpareDir> {
        reported
            .into_iter()
            .filter(|r| self.made.contains(r))
            .collect()
    }
}

impl Drop for SparePoolOnHost {
    fn drop(&mut self) {
        if self.kept {
            // The unused spares stay for the next session (its lock goes with `pool`).
            return;
        }
        for spare in &self.made {
            if let Ok(name) = CString::new(spare.name.as_bytes()) {
                rmdir_at(&self.pool, &name);
            }
        }
        rmdir_at(&self.home, &self.pool_name);
        // And the spare home once no session has a pool there: nothing of fence's stays
        // in the repository (a session starting meanwhile makes its folders as before).
        rmdir_at(&self.git, c"fence");
    }
}

/// The name of a user's kept pool in the spare home.
fn kept_pool_name(euid: libc::uid_t) -> String {
    format!("spares.u{euid}")
}

/// Takes the kept pool of user `euid`: made when missing, locked for this session
/// (`flock`, released when its descriptor closes, a killed session's too), its empty
/// folders of the user's own taken as spares and topped up to [`SPARES`]. A pool made and
/// removed at every start cost a few milliseconds on a disk (ext4 looks past inodes freed
/// in the last minutes when it allocates one). `None` when another session holds the lock
/// or the pool is not a private folder of the user's: the session then makes a pool of
/// its own.
fn take_kept_pool(home: &OwnedFd, euid: libc::uid_t) -> Option<(OwnedFd, CString, Vec<SpareDir>)> {
    let name = CString::new(kept_pool_name(euid)).ok()?;
    // SAFETY: mkdirat of a NUL-terminated name relative to our descriptor.
    let made = unsafe { libc::mkdirat(home.as_raw_fd(), name.as_ptr(), 0o700) } == 0;
    if !made && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
        return None;
    }
    let pool = open_dir_at(home.as_raw_fd(), &name).ok()?;
    if !is_private(&pool, euid) {
        return None;
    }
    // SAFETY: flock of our own descriptor, without waiting.
    if unsafe { libc::flock(pool.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return None;
    }
    let mut found = Vec::new();
    if !made {
        for entry in entries(&pool).ok()? {
            // Only a folder of the user's own with nothing in it; anything else there is
            // left alone and never handed out.
            let Ok(folder) = open_dir_at(pool.as_raw_fd(), &entry) else {
                continue;
            };
            let Ok(st) = fstat(&folder) else {
                continue;
            };
            if st.st_uid == euid
                && is_empty(&folder).unwrap_or(false)
                && !has_default_acl(&folder)
                && found.len() < SPARES
            {
                found.push(SpareDir {
                    name: OsString::from_vec(entry.into_bytes()),
                    dev: st.st_dev,
                    ino: st.st_ino,
                });
            }
        }
    }
    let spares = fill(&pool, found);
    Some((pool, name, spares))
}

/// Whether the folder open at `dir` is `euid`'s and closed to everyone else.
fn is_private(dir: &OwnedFd, euid: libc::uid_t) -> bool {
    fstat(dir).is_ok_and(|st| st.st_uid == euid && st.st_mode & 0o077 == 0)
}

/// Makes spare folders in `pool` until it holds [`SPARES`] with those in `spares`, under
/// numbers not taken yet, and returns them all as made (name, device, inode).
fn fill(pool: &OwnedFd, mut spares: Vec<SpareDir>) -> Vec<SpareDir> {
    let mut number = 0;
    while spares.len() < SPARES && number < 4 * SPARES {
        let name = CString::new(number.to_string()).expect("digits hold no NUL");
        number += 1;
        // SAFETY: mkdirat of a NUL-terminated name relative to our descriptor.
        if unsafe { libc::mkdirat(pool.as_raw_fd(), name.as_ptr(), 0o700) } != 0 {
            continue;
        }
        if let Ok(st) = fstatat_nofollow(pool, &name) {
            spares.push(SpareDir {
                name: OsString::from_vec(name.into_bytes()),
                dev: st.st_dev,
                ino: st.st_ino,
            });
        }
    }
    spares
}

/// Opens directory `name` in `dir` for reading, refusing a symlink.
pub(super) fn open_dir_at(dir: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: openat of a NUL-terminated name; the descriptor is owned below.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `rmdir` of `name` in `dir`: only ever an empty directory, never through a symlink.
fn rmdir_at(dir: &OwnedFd, name: &CStr) {
    // SAFETY: unlinkat of a NUL-terminated name relative to our descriptor.
    let _ = unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
}

/// Removes the empty folders in directory `name` of `parent`, then `name` if it is empty by
/// then. Nothing but `rmdir`: a spare something was written into stays, and so does its
/// pool; a symlink at `name` is not followed.
fn remove_empty_at(parent: &OwnedFd, name: &CStr) {
    let Ok(dir) = open_dir_at(parent.as_raw_fd(), name) else {
        return;
    };
    if let Ok(names) = entries(&dir) {
        for n in names {
            rmdir_at(&dir, &n);
        }
    }
    rmdir_at(parent, name);
}

/// Removes the pools in the spare home whose session is gone (its supervisor's pid names
/// no process here). A pool whose pid names a live process stays, whatever that process
/// is; one of a session in another pid namespace may be taken for gone, and its session
/// then makes its folders as before (a spare that is gone is not handed out).
fn remove_stale_pools(home: &OwnedFd) {
    let Ok(names) = entries(home) else {
        return;
    };
    for name in names {
        let Some(pid) = name
            .to_str()
            .ok()
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
            remove_empty_at(home, &name);
        }
    }
}

/// Whether the directory open at `dir` carries a default ACL (`system.posix_acl_default`);
/// `dir` may be an `O_PATH` descriptor (read through its `/proc/self/fd` link).
fn has_default_acl(dir: &OwnedFd) -> bool {
    let Ok(link) = CString::new(format!("/proc/self/fd/{}", dir.as_raw_fd())) else {
        return true;
    };
    // SAFETY: a size query (null buffer, size 0) of a NUL-terminated path and name.
    let n = unsafe {
        libc::getxattr(
            link.as_ptr(),
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
    /// caller (its fsuid, fsgid, groups). `Some(identity)`: made, and granted whole by the
    /// sandbox's ruleset (its device and inode numbers). `None`: not made, and the caller
    /// makes the folder as before (`mkdirat`), which gives the call the kernel's own answer
    /// (`EEXIST`…): no spare is left, the parent lies on another mount or has a default
    /// ACL, the spare is not as it was granted, or the move failed.
    pub fn make_dir(&self, new: &NewFolder<'_>) -> Option<(u64, u64)> {
        let spare = self.take()?;
        let c = CString::new(spare.name.as_bytes()).ok()?;
        // Gone, replaced or written into on the host: not handed out again.
        let folder = open_dir_at(self.pool.as_raw_fd(), &c).ok()?;
        let st = fstat(&folder).ok()?;
        if (st.st_dev, st.st_ino) != (spare.dev, spare.ino)
            || st.st_uid != new.fsuid
            || !is_empty(&folder).unwrap_or(false)
        {
            return None;
        }
        let Some(parent) = fstat(new.parent)
            .ok()
            .filter(|_| !has_default_acl(new.parent))
        else {
            self.put_back(spare);
            return None;
        };
        // As mkdir(2): the permission bits and the sticky bit, less the umask; in a parent
        // with the set-group-ID bit, the parent's group and the bit, else the caller's fsgid.
        let mut mode = new.mode & 0o1777 & !new.umask;
        let group = if parent.st_mode & libc::S_ISGID != 0 {
            mode |= libc::S_ISGID;
            parent.st_gid
        } else {
            new.fsgid
        };
        // Group, mode and times before the move, while nothing else can reach the folder.
        // A caller that may not take that group (not a member of a set-group-ID parent's)
        // gets a folder made as before, which the kernel gives it.
        // SAFETY: fchown, fchmod, futimens (null: now) of our own descriptor.
        let set = unsafe {
            (st.st_gid == group || libc::fchown(folder.as_raw_fd(), u32::MAX, group) == 0)
                && libc::fchmod(folder.as_raw_fd(), mode) == 0
                && libc::futimens(folder.as_raw_fd(), std::ptr::null()) == 0
        };
        if !set {
            self.put_back(spare);
            return None;
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
            if e.raw_os_error() == Some(libc::EINVAL) {
                // A filesystem without RENAME_NOREPLACE: no spare will move here.
                self.free.lock().unwrap_or_else(|e| e.into_inner()).clear();
            } else {
                self.put_back(spare);
            }
            return None;
        }
        Some((spare.dev, spare.ino))
    }
}

pub(super) fn fstat(fd: &OwnedFd) -> io::Result<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat of our descriptor into room for one stat.
    if unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: filled by fstat.
    Ok(unsafe { st.assume_init() })
}

pub(super) fn fstatat_nofollow(dir: &OwnedFd, name: &CStr) -> io::Result<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstatat of a NUL-terminated name relative to our descriptor.
    if unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: filled by fstatat.
    Ok(unsafe { st.assume_init() })
}

/// Whether the directory open at `fd` (for reading, not yet read) holds nothing but `.` and
/// `..`.
fn is_empty(fd: &OwnedFd) -> io::Result<bool> {
    Ok(entries(fd)?.is_empty())
}

/// The names in the directory open at `fd` (for reading, not yet read), but `.` and `..`:
/// `getdents64` until it returns nothing.
/// By hand: std's and nix's directory readers open by path or take the descriptor over,
/// and these directories are reached through descriptors that must stay ours.
pub(super) fn entries(fd: &OwnedFd) -> io::Result<Vec<CString>> {
    let mut names = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
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
        if n == 0 {
            return Ok(names);
        }
        let n = n as usize;
        let mut at = 0;
        // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name.
        while at + 19 < n {
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if reclen < 20 || at + reclen > n {
                return Err(io::Error::from_raw_os_error(libc::EIO));
            }
            let field = &buf[at + 19..at + reclen];
            let name = &field[..field.iter().position(|b| *b == 0).unwrap_or(field.len())];
            if name != b"." && name != b".." {
                names.push(CString::new(name).map_err(io::Error::other)?);
            }
            at += reclen;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

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
        std::fs::remove_dir(dir.path().join("HEAD")).unwrap();
        // A name too long for the first read's room beside `.` and `..` still shows.
        std::fs::create_dir(dir.path().join("x".repeat(250))).unwrap();
        assert!(!is_empty(&open()).unwrap());
        // Many entries: every one is read.
        for i in 0..500 {
            std::fs::write(dir.path().join(format!("{i:0>100}")), "").unwrap();
        }
        assert_eq!(entries(&open()).unwrap().len(), 501);
    }

    #[test]
    fn a_pool_is_made_only_in_a_git_directory_and_kept_for_the_next_session() {
        use std::os::unix::fs::MetadataExt;
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
        // SAFETY: no arguments.
        let euid = unsafe { libc::geteuid() };
        assert_eq!(
            path,
            wt.path().join(".git/fence").join(kept_pool_name(euid))
        );
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o700);
        assert!(path.join("0").is_dir());
        // Held: another session makes a pool of its own, removed when it ends.
        let other = SparePoolOnHost::make(wt.path()).unwrap();
        let other_path = PathBuf::from(&other.spec().path);
        assert_ne!(other_path, path);
        assert!(other_path.join("0").is_dir());
        drop(other);
        assert!(!other_path.exists());
        // One spare used (moved away), one written into, a file and a folder of another
        // owner's beside them: the next session takes the six left empty, makes two, and
        // leaves the rest alone.
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let kept: Vec<u64> = (2..SPARES)
            .map(|i| ino(&path.join(i.to_string())))
            .collect();
        drop(pool);
        assert!(path.join("0").is_dir(), "an unused spare was removed");
        std::fs::rename(path.join("0"), wt.path().join("target")).unwrap();
        std::fs::write(path.join("1/x"), "").unwrap();
        std::fs::write(path.join("stray"), "").unwrap();
        std::fs::create_dir(path.join("theirs")).unwrap();
        std::os::unix::fs::chown(path.join("theirs"), Some(euid + 1), None).unwrap_or(());
        let theirs_taken = std::fs::metadata(path.join("theirs")).unwrap().uid() == euid;
        let pool = SparePoolOnHost::make(wt.path()).unwrap();
        assert_eq!(pool.made.len(), SPARES);
        let taken: Vec<u64> = pool.made.iter().map(|s| s.ino).collect();
        assert!(kept.iter().all(|i| taken.contains(i)), "{kept:?} {taken:?}");
        for n in ["1", "stray"] {
            assert!(!taken.contains(&ino(&path.join(n))), "{n} was taken");
        }
        assert_eq!(taken.contains(&ino(&path.join("theirs"))), theirs_taken);
        assert!(path.join("1/x").exists() && path.join("stray").exists());
        drop(pool);
        // A pool others may enter is not used: the session makes its own.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let pool = SparePoolOnHost::make(wt.path()).unwrap();
        assert_ne!(PathBuf::from(&pool.spec().path), path);
    }

    #[test]
    fn no_pool_is_kept_in_another_users_repository() {
        // SAFETY: no arguments.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root to give the repository to another user");
            return;
        }
        let wt = tempfile::tempdir().unwrap();
        std::fs::create_dir(wt.path().join(".git")).unwrap();
        std::os::unix::fs::chown(wt.path().join(".git"), Some(65534), Some(65534)).unwrap();
        let pool = SparePoolOnHost::make(wt.path()).unwrap();
        assert_eq!(pool.made.len(), SPARES);
        let path = PathBuf::from(&pool.spec().path);
        assert!(!pool.kept && path.ends_with(pool_name(std::process::id())));
        drop(pool);
        // Nothing of root's is left in the user's repository.
        assert!(!wt.path().join(".git/fence").exists());
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
        // A pool name that is a symlink is not followed: the empty folders where it
        // leads stay.
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir(elsewhere.path().join("empty")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), home.join("spares.99999998")).unwrap();
        let pool = SparePoolOnHost::make(wt.path()).unwrap();
        assert!(!dead.exists());
        assert!(live.join("0").is_dir());
        assert!(elsewhere.path().join("empty").is_dir());
        drop(pool);
    }

    #[test]
    fn only_the_spares_this_pool_made_are_handed_out() {
        let wt = tempfile::tempdir().unwrap();
        std::fs::create_dir(wt.path().join(".git")).unwrap();
        let pool = SparePoolOnHost::make(wt.path()).unwrap();
        let mut reported = pool.made.clone();
        // One replaced before the shim opened it: another inode under the same name.
        reported[0].ino += 1_000_000;
        let granted = pool.granted(reported.clone());
        assert_eq!(granted.len(), SPARES - 1);
        assert!(!granted.contains(&reported[0]));
    }
}

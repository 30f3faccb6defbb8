//! The caches of everyday tools (SPEC §2: `go test`, `pytest`, `npm test` run as usual
//! under the default fence, the caches such tools write made writable or redirected by
//! environment variables).
//!
//! A tool whose cache lives in the user's home (`~/.cache/go-build`, `~/.cache/pip`,
//! `~/.npm`) is refused every write there, and
//! `go` stops at once ("failed to initialize build cache"). Opening the user's own caches
//! would let a sandboxed build plant what a later build outside the fence takes from them (a
//! compiled package, a downloaded archive). So each tool is pointed at a
//! folder of fence's for the worktree, `$XDG_CACHE_HOME/fence/worktrees/NAME-ID`
//! (`~/.cache/fence/…` without XDG_CACHE_HOME), made before the sandbox starts, private to
//! the user and writable in the sandbox as the worktree is. Only fenced sessions of the same
//! worktree are pointed there: what one writes, a later one of that worktree reads — code
//! the sandbox could as well have written into the worktree itself. ID names the worktree's
//! path and inode, so a repository cloned again at the same path starts with an empty cache.
//!
//! A variable already set is left as the user set it. Where the folder cannot be had (no
//! home, a cache folder that is not the user's, `--read-only-worktree`), the tools are
//! pointed into the session's TMPDIR, whose caches end with the session.
//!
//! Policy, not a boundary: the folder is one more writable root, bounded by Landlock and
//! checked by the write check as the session's TMPDIR is.
//!
//! The folders are pruned ([`prune`]): beside each one the supervisor keeps a record of its
//! worktree's path (`NAME-ID.worktree`, in `worktrees`, which the sandbox cannot write),
//! touched at every session, and at most once a day a start removes, on a background
//! thread, the folders whose worktree is gone or is another one now (a path whose path and
//! inode no longer give ID: agents make and remove a worktree per task) and those no
//! session has used for 90 days.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::hash::Hasher;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, OFlag};
use nix::sys::stat::{FileStat, Mode, UtimensatFlags};
use nix::sys::time::TimeSpec;
use nix::unistd::UnlinkatFlags;

/// The variables set, each with its folder in the cache and what it caches. Only caches that
/// a tool rebuilds when they are empty: a folder a tool reads as its installation (a model
/// store, a browser download, a module cache) would be missing in a new one, so
/// `XDG_CACHE_HOME`, `GOMODCACHE` and `CARGO_HOME` are not moved. Nor is Python's
/// bytecode (`PYTHONPYCACHEPREFIX`): Python then ignores the compiled files installed
/// beside every module and compiles each one it imports again, and where it cannot write
/// a `__pycache__` it goes on without one.
pub const VARIABLES: [(&str, &str, &str); 8] = [
    ("GOCACHE", "go-build", "go's build cache"),
    ("PIP_CACHE_DIR", "pip", "pip's downloads and wheels"),
    (
        "npm_config_cache",
        "npm",
        "npm's cache, logs and update check",
    ),
    ("YARN_CACHE_FOLDER", "yarn", "yarn's package cache"),
    ("CCACHE_DIR", "ccache", "ccache's objects"),
    ("SCCACHE_DIR", "sccache", "sccache's objects"),
    // black writes its cache of formatted files in `~/.cache/black/VERSION` (five
    // questions a run); pylint its statistics in `~/.cache/pylint`.
    (
        "BLACK_CACHE_DIR",
        "black",
        "black's cache of formatted files",
    ),
    ("PYLINTHOME", "pylint", "pylint's run statistics"),
];

/// History files of interactive programs, each with its variable, its file's name in the
/// cache folder and what keeps it. Kept in the home (`~/.bash_history`, `~/.lesshst`…),
/// they are writes outside the worktree: with a person at the terminal each was a question
/// that held the program (less on `q`, python3 and sqlite3 on exit, node at start, bash on
/// `exit`) until it was answered or timed out. Pointed here, each program keeps a history
/// of the worktree's fenced sessions. Programs without such a variable (vim's `~/.viminfo`,
/// Python before 3.13) are still asked.
pub const HISTORY_FILES: [(&str, &str, &str); 8] = [
    ("HISTFILE", "bash_history", "bash's command history"),
    ("LESSHISTFILE", "lesshst", "less's search history"),
    (
        "NODE_REPL_HISTORY",
        "node_repl_history",
        "node's REPL history",
    ),
    (
        "PYTHON_HISTORY",
        "python_history",
        "Python's REPL history (3.13+)",
    ),
    (
        "SQLITE_HISTORY",
        "sqlite_history",
        "sqlite3's shell history",
    ),
    ("PSQL_HISTORY", "psql_history", "psql's history"),
    ("MYSQL_HISTFILE", "mysql_history", "mysql's history"),
    (
        "REDISCLI_HISTFILE",
        "rediscli_history",
        "redis-cli's history",
    ),
];

/// Where the session's tool caches are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheHome {
    /// The worktree's own folder, kept between sessions: a writable root of the session.
    Kept(PathBuf),
    /// A folder in the session's TMPDIR (already writable), removed with it.
    Session(PathBuf),
}

impl CacheHome {
    pub fn path(&self) -> &Path {
        match self {
            CacheHome::Kept(p) | CacheHome::Session(p) => p,
        }
    }

    /// The folder that holds the history files: the kept folder, or the session TMPDIR
    /// itself (which exists when the program starts, where the caches' folder may not).
    fn files_dir(&self) -> &Path {
        match self {
            CacheHome::Kept(p) => p,
            CacheHome::Session(p) => p.parent().unwrap_or(p),
        }
    }

    /// The folder to add to the session's writable roots, when it is not in one already.
    pub fn writable_root(&self) -> Option<&Path> {
        match self {
            CacheHome::Kept(p) => Some(p),
            CacheHome::Session(_) => None,
        }
    }
}

/// Finds or makes the worktree's cache folder; the session's TMPDIR when it cannot.
/// `home` and `xdg_cache_home` are the environment's `HOME` and `XDG_CACHE_HOME`.
pub fn place(
    home: Option<&Path>,
    xdg_cache_home: Option<&Path>,
    worktree: &Path,
    tmpdir: &Path,
    read_only_worktree: bool,
) -> CacheHome {
    let session = || CacheHome::Session(tmpdir.join("caches"));
    if read_only_worktree {
        return session();
    }
    // The XDG base directory rule: a relative XDG_CACHE_HOME is ignored.
    let base = match (xdg_cache_home.filter(|p| p.is_absolute()), home) {
        (Some(x), _) => x.to_path_buf(),
        (None, Some(h)) if h.is_absolute() && h != Path::new("/") => h.join(".cache"),
        _ => return session(),
    };
    match kept_folder(&base, worktree) {
        Ok(dir) => CacheHome::Kept(dir),
        Err(e) => {
            eprintln!(
                "fence: tool caches are the session's own ({}: {e})",
                crate::escape::for_terminal(&base.display().to_string())
            );
            session()
        }
    }
}

/// The variables to add to the sandbox's environment `env`: those of [`VARIABLES`] and
/// [`HISTORY_FILES`] it does not set already in any case (npm reads `NPM_CONFIG_CACHE` as
/// `npm_config_cache`), each pointing into `home`.
pub fn variables(home: &CacheHome, env: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let unset = |name: &str| {
        !env.iter()
            .any(|(k, _)| k.as_bytes().eq_ignore_ascii_case(name.as_bytes()))
    };
    let caches = VARIABLES
        .iter()
        .filter(|(name, _, _)| unset(name))
        .map(|(name, folder, _)| (OsString::from(name), home.path().join(folder).into()));
    let histories = HISTORY_FILES
        .iter()
        .filter(|(name, _, _)| unset(name))
        .map(|(name, file, _)| (OsString::from(name), home.files_dir().join(file).into()));
    caches.chain(histories).collect()
}

/// The folder's name in `worktrees`: the worktree's own name, made plain, then an id of its
/// path, device and inode (FNV-1a, whose output is fixed by its definition, so the same
/// worktree finds its folder again with every build of fence).
fn folder_name(worktree: &Path, dev: u64, ino: u64) -> OsString {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(worktree.as_os_str().as_bytes());
    hasher.write(&[0]);
    hasher.write(&dev.to_le_bytes());
    hasher.write(&ino.to_le_bytes());
    let plain: Vec<u8> = worktree
        .file_name()
        .map(OsStr::as_bytes)
        .unwrap_or(b"root")
        .iter()
        .take(40)
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                b
            } else {
                b'_'
            }
        })
        .collect();
    let mut name = plain;
    name.extend_from_slice(format!("-{:016x}", hasher.finish()).as_bytes());
    OsString::from_vec(name)
}

/// Opens (makes when missing) `base/fence/worktrees/NAME-ID` and returns its path as the
/// kernel names it. `base` itself is followed (a cache folder moved to another disk by a
/// link is the user's choice) but must be the user's; the three folders below it are made
/// private (0700), must be the user's real directories (no symlink is followed) and are
/// never opened wider than that.
fn kept_folder(base: &Path, worktree: &Path) -> Result<PathBuf, String> {
    let euid = nix::unistd::geteuid().as_raw();
    let wt = nix::sys::stat::stat(worktree).map_err(|e| format!("the worktree: {e}"))?;
    let base_fd = match open_dir(AT_FDCWD, base.as_os_str(), true) {
        Ok(fd) => fd,
        // A missing `~/.cache` is made, in a home that is the user's.
        Err(nix::errno::Errno::ENOENT) if base.parent().is_some() => {
            let parent = base.parent().expect("checked above");
            let parent_fd = open_dir(AT_FDCWD, parent.as_os_str(), true)
                .map_err(|e| format!("{}: {e}", parent.display()))?;
            owned_by(&parent_fd, euid)?;
            let name = base.file_name().ok_or("no folder name")?;
            private_dir_at(&parent_fd, name, euid)?
        }
        Err(e) => return Err(e.to_string()),
    };
    owned_by(&base_fd, euid)?;
    let fence = private_dir_at(&base_fd, OsStr::new("fence"), euid)?;
    let worktrees = private_dir_at(&fence, OsStr::new("worktrees"), euid)?;
    let name = folder_name(worktree, wt.st_dev, wt.st_ino);
    let dir = private_dir_at(&worktrees, &name, euid)?;
    let path = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
        .map_err(|e| format!("naming the cache folder: {e}"))?;
    // Bookkeeping for the prune: a failure here costs the folder nothing but its record.
    record_use(&worktrees, &name, worktree);
    if prune_due(&worktrees, SystemTime::now()) {
        let _ = std::thread::Builder::new()
            .name("fence-prune".into())
            .spawn(move || {
                lower_priority();
                prune(&worktrees, SystemTime::now());
            });
    }
    Ok(path)
}

/// The record beside folder `NAME-ID`: `NAME-ID.worktree`.
const RECORD_SUFFIX: &[u8] = b".worktree";
/// A folder being removed is renamed `.removing-NAME-ID` first: it is no session's folder
/// from then on, and a prune cut short (fence exits) is finished by the next one.
const REMOVING_PREFIX: &[u8] = b".removing-";
/// The file whose modification time says when the folders were last pruned.
const PRUNE_STAMP: &str = ".pruned";
/// How often a start prunes.
const PRUNE_EVERY: Duration = Duration::from_secs(24 * 3600);
/// A folder no session has used for this long is removed, its worktree there or not.
const UNUSED_FOR: Duration = Duration::from_secs(90 * 24 * 3600);
/// How deep a folder is removed: each level holds a descriptor, and the sandbox made the
/// tree. A removal that meets a deeper folder stops there, and what is left of the folder
/// stays under its `.removing-` name (tried again, and left again, at every prune).
const MAX_DEPTH: usize = 128;

fn record_name(folder: &OsStr) -> CString {
    let mut n = folder.as_bytes().to_vec();
    n.extend_from_slice(RECORD_SUFFIX);
    CString::new(n).expect("folder names are plain")
}

/// Marks folder `name` used now, writing its record (the worktree's path) when missing.
fn record_use(worktrees: &OwnedFd, name: &OsStr, worktree: &Path) {
    let record = record_name(name);
    let touched = nix::sys::stat::utimensat(
        worktrees,
        record.as_c_str(),
        &TimeSpec::UTIME_NOW,
        &TimeSpec::UTIME_NOW,
        UtimensatFlags::NoFollowSymlink,
    );
    if touched != Err(Errno::ENOENT) {
        return;
    }
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    if let Ok(fd) = nix::fcntl::openat(
        worktrees,
        record.as_c_str(),
        flags,
        Mode::S_IRUSR | Mode::S_IWUSR,
    ) {
        let _ = nix::unistd::write(&fd, worktree.as_os_str().as_bytes());
    }
}

/// Whether a day has passed since the last prune (or none was made); if so, the stamp is
/// set now, so that the sessions starting meanwhile do not prune too.
fn prune_due(worktrees: &OwnedFd, now: SystemTime) -> bool {
    match nix::sys::stat::fstatat(
        worktrees,
        PRUNE_STAMP,
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    ) {
        Ok(st) if !older_than(&st, PRUNE_EVERY, now) => return false,
        Ok(_) => {
            let _ = nix::sys::stat::utimensat(
                worktrees,
                PRUNE_STAMP,
                &TimeSpec::UTIME_NOW,
                &TimeSpec::UTIME_NOW,
                UtimensatFlags::NoFollowSymlink,
            );
        }
        Err(_) => {
            let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            if nix::fcntl::openat(worktrees, PRUNE_STAMP, flags, Mode::S_IRUSR | Mode::S_IWUSR)
                .is_err()
            {
                return false;
            }
        }
    }
    true
}

/// Whether `st` was last modified longer than `age` before `now`.
fn older_than(st: &FileStat, age: Duration, now: SystemTime) -> bool {
    let Ok(since_epoch) = now.duration_since(SystemTime::UNIX_EPOCH) else {
        return false;
    };
    let mtime = Duration::new(
        st.st_mtime.max(0) as u64,
        st.st_mtime_nsec.clamp(0, 999_999_999) as u32,
    );
    since_epoch.saturating_sub(mtime) > age
}

/// The prune's thread yields to everything else: the CPU only when it is idle, and the disk
/// likewise.
fn lower_priority() {
    // SAFETY: a plain scheduling parameter for the calling thread (0).
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
        // IOPRIO_WHO_PROCESS (1) with 0 names the calling thread; class IDLE (3) << 13.
        libc::syscall(libc::SYS_ioprio_set, 1, 0, 3 << 13);
    }
}

/// Removes from `worktrees` the folders whose worktree is gone or replaced, those unused for
/// [`UNUSED_FOR`], records left without their folder, and what an earlier prune left half
/// removed. Never follows a symlink, and leaves anything it cannot judge.
pub(crate) fn prune(worktrees: &OwnedFd, now: SystemTime) {
    let Ok(listing) = nix::fcntl::openat(
        worktrees,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(mut listing) = Dir::from_fd(listing) else {
        return;
    };
    let names = entries_of(&mut listing);
    for (name, kind) in &names {
        let bytes = name.as_bytes();
        if bytes.starts_with(REMOVING_PREFIX) {
            remove_tree(worktrees, name);
        } else if let Some(folder) = bytes.strip_suffix(RECORD_SUFFIX) {
            // A record whose folder is gone (removed by hand).
            let folder_there = names.iter().any(|(n, _)| n.as_bytes() == folder);
            if !folder_there {
                let _ =
                    nix::unistd::unlinkat(worktrees, name.as_c_str(), UnlinkatFlags::NoRemoveDir);
            }
        } else if !bytes.starts_with(b".")
            && kind.is_none_or(|k| k == Type::Directory)
            && stale(worktrees, name, now)
        {
            let mut removing = REMOVING_PREFIX.to_vec();
            removing.extend_from_slice(bytes);
            let removing = CString::new(removing).expect("from a C string");
            if nix::fcntl::renameat(worktrees, name.as_c_str(), worktrees, removing.as_c_str())
                .is_ok()
            {
                let record = record_name(OsStr::from_bytes(bytes));
                let _ =
                    nix::unistd::unlinkat(worktrees, record.as_c_str(), UnlinkatFlags::NoRemoveDir);
                remove_tree(worktrees, &removing);
            }
        }
    }
}

/// Whether folder `name` is to go: its worktree (as its record names it) is gone or is
/// another one now, or no session used it for [`UNUSED_FOR`] (a folder without a record,
/// made before records were kept, by its own modification time).
fn stale(worktrees: &OwnedFd, name: &CStr, now: SystemTime) -> bool {
    let at = worktrees;
    let nofollow = nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW;
    let record = record_name(OsStr::from_bytes(name.to_bytes()));
    let Ok(record_st) = nix::sys::stat::fstatat(at, record.as_c_str(), nofollow) else {
        return nix::sys::stat::fstatat(at, name, nofollow)
            .is_ok_and(|st| older_than(&st, UNUSED_FOR, now));
    };
    if older_than(&record_st, UNUSED_FOR, now) {
        return true;
    }
    let Ok(fd) = nix::fcntl::openat(
        worktrees,
        record.as_c_str(),
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let mut path = vec![0u8; libc::PATH_MAX as usize + 1];
    let Ok(n) = nix::unistd::read(&fd, &mut path) else {
        return false;
    };
    path.truncate(n);
    if n == 0 || n > libc::PATH_MAX as usize || path[0] != b'/' {
        return false;
    }
    let worktree = PathBuf::from(OsString::from_vec(path));
    match nix::sys::stat::stat(&worktree) {
        Ok(st) => folder_name(&worktree, st.st_dev, st.st_ino).as_bytes() != name.to_bytes(),
        Err(Errno::ENOENT | Errno::ENOTDIR) => true,
        // Unreadable for now (a disk not mounted answers ENOENT, one refusing EACCES):
        // judged again at the next prune.
        Err(_) => false,
    }
}

/// The entries of `dir` but `.` and `..`, each with its type where the listing gives it, up
/// to the first error of the listing.
fn entries_of(dir: &mut Dir) -> Vec<(CString, Option<Type>)> {
    dir.iter()
        .map_while(Result::ok)
        .map(|e| (e.file_name().to_owned(), e.file_type()))
        .filter(|(n, _)| n.as_bytes() != b"." && n.as_bytes() != b"..")
        .collect()
}

/// Removes folder `name` of `parent` and all it holds, deepest first, each folder opened
/// relative to the one above it and never through a symlink (the sandbox wrote the tree).
/// Folders it may not write are made writable first (the user's own). Gives up, leaving the
/// rest, on any error or deeper than [`MAX_DEPTH`]; returns whether all is gone.
fn remove_tree(parent: &OwnedFd, name: &CStr) -> bool {
    let open = |at: &dyn AsFd, n: &CStr| {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::openat(at, n, flags, Mode::empty()).ok()?;
        let _ = nix::sys::stat::fchmod(&fd, Mode::S_IRWXU);
        Dir::from_fd(fd).ok()
    };
    let Some(top) = open(parent, name) else {
        // Not a folder (or gone): a plain entry is unlinked.
        return nix::unistd::unlinkat(parent, name, UnlinkatFlags::NoRemoveDir).is_ok();
    };
    let mut stack: Vec<(Dir, CString)> = vec![(top, name.to_owned())];
    while let Some((dir, _)) = stack.last_mut() {
        // The whole listing first, then the removals (none while the folder is read).
        let entries = entries_of(dir);
        let mut subfolder = None;
        for (n, kind) in entries {
            let unlinked = match kind {
                Some(Type::Directory) => Err(Errno::EISDIR),
                _ => nix::unistd::unlinkat(&*dir, n.as_c_str(), UnlinkatFlags::NoRemoveDir),
            };
            match unlinked {
                Ok(()) | Err(Errno::ENOENT) => {}
                Err(Errno::EISDIR) => {
                    subfolder = Some(n);
                    break;
                }
                Err(_) => return false,
            }
        }
        if let Some(sub) = subfolder {
            let Some(d) = open(&*dir, &sub) else {
                return false;
            };
            if stack.len() >= MAX_DEPTH {
                return false;
            }
            stack.push((d, sub));
            continue;
        }
        let (done, n) = stack.pop().expect("the loop's own entry");
        drop(done);
        let above: &dyn AsFd = match stack.last() {
            Some((above, _)) => above,
            None => parent,
        };
        if nix::unistd::unlinkat(above, n.as_c_str(), UnlinkatFlags::RemoveDir).is_err() {
            return false;
        }
    }
    true
}

fn open_dir<Fd: AsFd>(dir: Fd, name: &OsStr, follow: bool) -> nix::Result<OwnedFd> {
    let mut flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    if !follow {
        flags |= OFlag::O_NOFOLLOW;
    }
    nix::fcntl::openat(dir, name, flags, Mode::empty())
}

/// Folder `name` in `parent`, made 0700 when missing: a directory (not a link to one) that
/// belongs to `euid` and that no one else may write.
fn private_dir_at(parent: &OwnedFd, name: &OsStr, euid: u32) -> Result<OwnedFd, String> {
    match nix::sys::stat::mkdirat(parent, name, Mode::S_IRWXU) {
        Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
        Err(e) => return Err(format!("making {}: {e}", name.to_string_lossy())),
    }
    let fd = open_dir(parent, name, false)
        .map_err(|e| format!("opening {}: {e}", name.to_string_lossy()))?;
    owned_by(&fd, euid)?;
    let st = nix::sys::stat::fstat(&fd).map_err(|e| e.to_string())?;
    if st.st_mode & 0o022 != 0 {
        return Err(format!(
            "{} may be written by other users",
            name.to_string_lossy()
        ));
    }
    Ok(fd)
}

fn owned_by(fd: &OwnedFd, euid: u32) -> Result<(), String> {
    let st = nix::sys::stat::fstat(fd).map_err(|e| e.to_string())?;
    if st.st_uid == euid {
        Ok(())
    } else {
        Err(format!("owned by uid {}, not {euid}", st.st_uid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn home() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn the_folder_is_made_private_under_the_home_cache_and_found_again() {
        let h = home();
        let wt = tempfile::Builder::new().prefix("wt-").tempdir().unwrap();
        let tmp = Path::new("/nonexistent-tmp");
        let first = place(Some(h.path()), None, wt.path(), tmp, false);
        let CacheHome::Kept(dir) = &first else {
            panic!("{first:?}")
        };
        let home_cache = h.path().canonicalize().unwrap().join(".cache");
        assert_eq!(dir.parent().unwrap(), home_cache.join("fence/worktrees"));
        for d in [
            home_cache.clone(),
            home_cache.join("fence"),
            home_cache.join("fence/worktrees"),
            dir.clone(),
        ] {
            let m = std::fs::symlink_metadata(&d).unwrap();
            assert!(m.is_dir(), "{}", d.display());
            assert_eq!(m.permissions().mode() & 0o777, 0o700, "{}", d.display());
        }
        let name = dir.file_name().unwrap().to_str().unwrap();
        let wt_name = wt.path().file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(&format!("{wt_name}-")), "{name}");
        // The same worktree finds the same folder; another worktree another.
        assert_eq!(place(Some(h.path()), None, wt.path(), tmp, false), first);
        let other = tempfile::tempdir().unwrap();
        let second = place(Some(h.path()), None, other.path(), tmp, false);
        assert!(
            matches!(&second, CacheHome::Kept(d) if d != dir),
            "{second:?}"
        );
    }

    /// `fence/worktrees` of the cache under home `h`, and a descriptor of it.
    fn worktrees_of(h: &Path) -> (PathBuf, OwnedFd) {
        let dir = h.canonicalize().unwrap().join(".cache/fence/worktrees");
        std::fs::create_dir_all(&dir).unwrap();
        let fd = open_dir(AT_FDCWD, dir.as_os_str(), false).unwrap();
        (dir, fd)
    }

    fn kept(h: &Path, worktree: &Path) -> PathBuf {
        match place(Some(h), None, worktree, Path::new("/t"), false) {
            CacheHome::Kept(dir) => dir,
            other => panic!("{other:?}"),
        }
    }

    /// Sets the modification time of `p` (not followed) to `days` ago.
    fn age(p: &Path, days: u64) {
        let then = SystemTime::now() - Duration::from_secs(days * 24 * 3600);
        let secs = then
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let t = TimeSpec::new(secs as i64, 0);
        nix::sys::stat::utimensat(AT_FDCWD, p, &t, &t, UtimensatFlags::NoFollowSymlink).unwrap();
    }

    #[test]
    fn folders_of_worktrees_gone_replaced_or_unused_are_pruned_and_the_rest_kept() {
        let h = home();
        let (worktrees, fd) = worktrees_of(h.path());
        let live = tempfile::tempdir().unwrap();
        let gone = tempfile::tempdir().unwrap();
        let idle = tempfile::tempdir().unwrap();
        let live_dir = kept(h.path(), live.path());
        let gone_dir = kept(h.path(), gone.path());
        let idle_dir = kept(h.path(), idle.path());
        let record = |dir: &Path| {
            let mut n = dir.file_name().unwrap().to_os_string();
            n.push(".worktree");
            dir.with_file_name(n)
        };
        assert_eq!(
            std::fs::read(record(&live_dir)).unwrap(),
            live.path().as_os_str().as_bytes()
        );
        // What the sandbox may have left in a folder: links out of it (never followed), a
        // deep tree, a folder the user may not write.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), gone_dir.join("dir-link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("keep"), gone_dir.join("file-link"))
            .unwrap();
        let deep = (0..40).fold(gone_dir.join("go-build"), |p, i| p.join(i.to_string()));
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("f"), "x").unwrap();
        let locked = gone_dir.join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::write(locked.join("f"), "x").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
        drop(gone);
        // The live worktree's path with another inode: a repository cloned there again.
        let st = nix::sys::stat::stat(live.path()).unwrap();
        let replaced = worktrees.join(folder_name(live.path(), st.st_dev, st.st_ino + 1));
        std::fs::create_dir(&replaced).unwrap();
        std::fs::write(record(&replaced), live.path().as_os_str().as_bytes()).unwrap();
        // No session for 90 days, though the worktree is there.
        age(&record(&idle_dir), 91);
        // Folders from before records were kept: an old one and a recent one.
        let old = worktrees.join("old-0000000000000000");
        std::fs::create_dir(&old).unwrap();
        age(&old, 91);
        let recent = worktrees.join("recent-0000000000000001");
        std::fs::create_dir(&recent).unwrap();
        age(&recent, 80);
        // A record without its folder, and a folder an earlier prune did not finish.
        let lost = worktrees.join("lost-0000000000000002.worktree");
        std::fs::write(&lost, "/nonexistent").unwrap();
        let half = worktrees.join(".removing-half-0000000000000003");
        std::fs::create_dir_all(half.join("a/b")).unwrap();

        prune(&fd, SystemTime::now());

        for p in [&live_dir, &record(&live_dir), &recent] {
            assert!(p.exists(), "{} was removed", p.display());
        }
        for p in [
            &gone_dir,
            &record(&gone_dir),
            &replaced,
            &record(&replaced),
            &idle_dir,
            &record(&idle_dir),
            &old,
            &lost,
            &half,
        ] {
            assert!(
                std::fs::symlink_metadata(p).is_err(),
                "{} is still there",
                p.display()
            );
        }
        let mut left: Vec<_> = std::fs::read_dir(&worktrees)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        let mut expected = vec![
            OsString::from(PRUNE_STAMP),
            live_dir.file_name().unwrap().to_os_string(),
            record(&live_dir).file_name().unwrap().to_os_string(),
            recent.file_name().unwrap().to_os_string(),
        ];
        expected.sort();
        assert_eq!(left, expected);
        assert_eq!(std::fs::read(outside.path().join("keep")).unwrap(), b"x");
    }

    #[test]
    fn a_tree_deeper_than_the_limit_is_left_without_harm_and_its_folder_is_no_sessions() {
        let h = home();
        let (worktrees, fd) = worktrees_of(h.path());
        let gone = tempfile::tempdir().unwrap();
        let dir = kept(h.path(), gone.path());
        let deep = (0..MAX_DEPTH + 5).fold(dir.clone(), |p, _| p.join("d"));
        std::fs::create_dir_all(&deep).unwrap();
        drop(gone);
        prune(&fd, SystemTime::now());
        prune(&fd, SystemTime::now());
        assert!(!dir.exists());
        let mut removing = REMOVING_PREFIX.to_vec();
        removing.extend_from_slice(dir.file_name().unwrap().as_bytes());
        let removing = worktrees.join(OsStr::from_bytes(&removing));
        assert!(
            removing.is_dir(),
            "the rest is kept under its removing name"
        );
    }

    #[test]
    fn a_prune_is_due_once_a_day() {
        let h = home();
        let (worktrees, fd) = worktrees_of(h.path());
        let now = SystemTime::now();
        assert!(prune_due(&fd, now));
        assert!(!prune_due(&fd, now));
        age(&worktrees.join(PRUNE_STAMP), 2);
        assert!(prune_due(&fd, now));
        assert!(!prune_due(&fd, now));
    }

    #[test]
    fn a_start_prunes_in_the_background() {
        let h = home();
        let (worktrees, _) = worktrees_of(h.path());
        let stale = worktrees.join("stale-0000000000000000");
        std::fs::create_dir_all(stale.join("go-build/00")).unwrap();
        std::fs::write(
            stale.with_file_name("stale-0000000000000000.worktree"),
            "/nonexistent/worktree",
        )
        .unwrap();
        let wt = tempfile::tempdir().unwrap();
        let dir = kept(h.path(), wt.path());
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while stale.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the stale folder was not pruned"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(dir.is_dir());
        assert!(worktrees.join(PRUNE_STAMP).is_file());
    }

    #[test]
    fn xdg_cache_home_is_used_when_absolute_and_ignored_when_relative() {
        let h = home();
        let x = tempfile::tempdir().unwrap();
        let wt = tempfile::tempdir().unwrap();
        let tmp = Path::new("/t");
        let kept = place(Some(h.path()), Some(x.path()), wt.path(), tmp, false);
        assert!(
            kept.path().starts_with(x.path().canonicalize().unwrap()),
            "{kept:?}"
        );
        let kept = place(
            Some(h.path()),
            Some(Path::new("rel")),
            wt.path(),
            tmp,
            false,
        );
        assert!(
            kept.path().starts_with(h.path().canonicalize().unwrap()),
            "{kept:?}"
        );
    }

    #[test]
    fn a_session_folder_stands_in_where_no_kept_one_can_be_had() {
        let wt = tempfile::tempdir().unwrap();
        let tmp = Path::new("/tmp/fence-session");
        let in_tmp = CacheHome::Session(tmp.join("caches"));
        // No home; the root as home; a read-only worktree.
        assert_eq!(place(None, None, wt.path(), tmp, false), in_tmp);
        assert_eq!(
            place(Some(Path::new("/")), None, wt.path(), tmp, false),
            in_tmp
        );
        let h = home();
        assert_eq!(place(Some(h.path()), None, wt.path(), tmp, true), in_tmp);
        assert!(!h.path().join(".cache").exists());
        // A link where fence's own folder should be is not followed.
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir(h.path().join(".cache")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), h.path().join(".cache/fence")).unwrap();
        assert_eq!(place(Some(h.path()), None, wt.path(), tmp, false), in_tmp);
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        // A folder others may write is not used.
        std::fs::remove_file(h.path().join(".cache/fence")).unwrap();
        std::fs::create_dir(h.path().join(".cache/fence")).unwrap();
        std::fs::set_permissions(
            h.path().join(".cache/fence"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        assert_eq!(place(Some(h.path()), None, wt.path(), tmp, false), in_tmp);
    }

    #[test]
    fn a_cache_folder_of_another_user_is_not_used() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: needs root to give a folder to another user");
            return;
        }
        let h = home();
        let wt = tempfile::tempdir().unwrap();
        std::fs::create_dir(h.path().join(".cache")).unwrap();
        nix::unistd::chown(
            &h.path().join(".cache"),
            Some(nix::unistd::Uid::from_raw(65534)),
            None,
        )
        .unwrap();
        let tmp = Path::new("/t");
        assert_eq!(
            place(Some(h.path()), None, wt.path(), tmp, false),
            CacheHome::Session(tmp.join("caches"))
        );
        assert!(!h.path().join(".cache/fence").exists());
        assert_ne!(std::fs::metadata(h.path().join(".cache")).unwrap().uid(), 0);
    }

    #[test]
    fn only_variables_the_environment_lacks_are_set() {
        let home = CacheHome::Kept(PathBuf::from("/c"));
        let env = vec![
            (OsString::from("GOCACHE"), OsString::from("/mine")),
            (OsString::from("NPM_CONFIG_CACHE"), OsString::from("/mine")),
        ];
        let set = variables(&home, &env);
        assert!(
            !set.iter()
                .any(|(k, _)| k == "GOCACHE" || k == "npm_config_cache")
        );
        assert_eq!(set.len(), VARIABLES.len() + HISTORY_FILES.len() - 2);
        assert!(set.contains(&(OsString::from("PIP_CACHE_DIR"), OsString::from("/c/pip"))));
        assert!(set.contains(&(OsString::from("LESSHISTFILE"), OsString::from("/c/lesshst"))));
        let mine = vec![(OsString::from("HISTFILE"), OsString::from("/mine"))];
        assert!(!variables(&home, &mine).iter().any(|(k, _)| k == "HISTFILE"));
    }

    #[test]
    fn history_files_of_a_session_folder_lie_in_the_tmpdir_itself() {
        let home = CacheHome::Session(PathBuf::from("/t/caches"));
        let set = variables(&home, &[]);
        assert!(set.contains(&(
            OsString::from("HISTFILE"),
            OsString::from("/t/bash_history")
        )));
        assert!(set.contains(&(
            OsString::from("GOCACHE"),
            OsString::from("/t/caches/go-build")
        )));
    }

    #[test]
    fn the_folder_name_is_plain_and_fixed_for_a_path_and_inode() {
        let a = folder_name(Path::new("/src/my proj\n"), 1, 2);
        assert_eq!(a, folder_name(Path::new("/src/my proj\n"), 1, 2));
        let a = a.into_string().unwrap();
        assert!(a.starts_with("my_proj_-"), "{a}");
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_ne!(
            folder_name(Path::new("/src/x"), 1, 2),
            folder_name(Path::new("/src/x"), 1, 3)
        );
        assert_ne!(
            folder_name(Path::new("/src/x"), 1, 2),
            folder_name(Path::new("/b/x"), 1, 2)
        );
        assert_eq!(folder_name(Path::new("/"), 1, 2).as_bytes()[..5], *b"root-");
        // Fixed by FNV-1a's definition: a new build finds the folders of the one before.
        assert_eq!(
            folder_name(Path::new("/src/proj"), 1, 2),
            "proj-b1c953b083a8e9bd"
        );
    }
}

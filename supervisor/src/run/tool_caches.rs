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

use std::ffi::{OsStr, OsString};
use std::hash::Hasher;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{AT_FDCWD, OFlag};
use nix::sys::stat::Mode;

/// The variables set, each with its folder in the cache and what it caches. Only caches that
/// a tool rebuilds when they are empty: a folder a tool reads as its installation (a model
/// store, a browser download, a module cache) would be missing in a new one, so
/// `XDG_CACHE_HOME`, `GOMODCACHE` and `CARGO_HOME` are not moved. Nor is Python's
/// bytecode (`PYTHONPYCACHEPREFIX`): Python then ignores the compiled files installed
/// beside every module and compiles each one it imports again, and where it cannot write
/// a `__pycache__` it goes on without one.
pub const VARIABLES: [(&str, &str, &str); 5] = [
    ("GOCACHE", "go-build", "go's build cache"),
    ("PIP_CACHE_DIR", "pip", "pip's downloads and wheels"),
    (
        "npm_config_cache",
        "npm",
        "npm's cache, logs and update check",
    ),
    ("YARN_CACHE_FOLDER", "yarn", "yarn's package cache"),
    ("CCACHE_DIR", "ccache", "ccache's objects"),
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
    std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
        .map_err(|e| format!("naming the cache folder: {e}"))
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

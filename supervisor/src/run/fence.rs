//! The session's fence as the supervisor checks it: which paths may be written.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

/// How long a bounded directory found with the identity its rule was attached to is taken
/// to keep it without looking again. The look is one `fstatat` on most notified writes, and
/// only a process outside the sandbox can replace the directory behind fence's back (the
/// sandbox's own moves and removals reach [`Fence::forget_bounded_at`] before the kernel
/// performs them). Not a boundary either way: a call let through to a directory replaced
/// meanwhile is refused by Landlock (EACCES), as a call racing the replacement always was;
/// within this window the supervisor does not write there in the sandbox's stead.
const BOUNDED_SEEN_FOR: Duration = Duration::from_millis(50);

/// A bounded directory: the identity its Landlock rule was attached to, and when the
/// supervisor last found it there.
#[derive(Debug)]
pub struct Granted {
    pub id: (u64, u64),
    /// Nanoseconds after [`clock_start`] of the last look that found `id`; 0: never.
    seen: AtomicU64,
}

impl Granted {
    pub fn new(id: (u64, u64)) -> Granted {
        Granted {
            id,
            seen: AtomicU64::new(0),
        }
    }
}

/// The start of the clock of [`Granted::seen`].
fn clock_start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// The bounded folders by path. Looked up for each ancestor of every notified write's
/// folder, so hashed with foldhash (seeded at random per process), a fraction of std's
/// SipHash there. Not a boundary: were the sandbox to find names that collide, it would
/// only slow its own calls.
pub type BoundedMap = HashMap<PathBuf, Granted, foldhash::fast::RandomState>;

/// The fence's bounded directories by path ([`Fence::bounded`]).
pub type BoundedDirs = Arc<RwLock<BoundedMap>>;

/// Where the sandbox may write, and how the kernel bounds what the supervisor lets through.
#[derive(Debug, Clone)]
pub struct Fence {
    pub worktree: PathBuf,
    /// Writable roots: the worktree, the session TMPDIR, `--allow-write` paths, `/dev/shm`.
    pub writable: Vec<PathBuf>,
    /// Devices writable by exact path.
    pub devices: Vec<PathBuf>,
    /// Protected paths outside the worktree, each with everything beneath it: a profile's
    /// own settings files inside the folder it makes writable (absolute, resolved).
    pub protected: Vec<PathBuf>,
    /// Other folders whose paths are protected as the worktree's are, by the same rules
    /// relative to each (absolute, resolved): the `--allow-write` folders outside the
    /// worktree (or the folder above one named `.git`), and without a mount
    /// namespace the host's `/dev/shm`. Any may be a repository of its own, or become one,
    /// whose hooks and config the user's git runs later.
    pub rule_bases: Vec<PathBuf>,
    /// The tools' lock and state files in the home ([`state_files`]), whose writes are
    /// refused at once, without a question (absolute, not resolved: the home as given).
    pub state_files: Vec<PathBuf>,
    /// The unreadable paths (SPEC §2 secrets, `--deny-read`; those missing at start where
    /// they would be made), each with everything beneath it: no write, move or link there
    /// is carried out for the sandbox, even with a person's Yes, since the descriptor or
    /// name it would get reads the secret.
    pub unreadable: Vec<PathBuf>,
    /// For each of `writable`, the unreadable paths beneath or above it, made on first use.
    pub unreadable_near_roots: OnceLock<Vec<Vec<PathBuf>>>,
    /// The sandbox sees everything outside the writable roots read-only (mount namespace):
    /// a metadata change there fails with EROFS whatever path the target swaps in. The
    /// same view makes the protected paths that exist read-only mounts, so a write inside
    /// the fence may then be answered `CONTINUE`; without it the supervisor carries out
    /// every write inside itself, from the path it checked.
    pub read_only_view: bool,
    /// Do not write blocked reasons to the processes' stderr.
    pub quiet_blocks: bool,
    /// `--read-only-worktree`: the worktree is not among the writable roots.
    pub read_only_worktree: bool,
    /// Landlock governs truncation (ABI 3): a `truncate` inside the fence may be answered
    /// `CONTINUE`. Below it the supervisor performs the call on the checked file.
    pub landlock_truncate: bool,
    /// Landlock governs moves and links across directories (ABI 2); below it the kernel
    /// refuses them all, and the supervisor carries them out.
    pub landlock_refer: bool,
    /// The directories beneath which Landlock alone bounds the names the sandbox makes,
    /// as the sandbox's ruleset grants them (`FencePlan::bounded`): no protected path can
    /// be made there, and the directories that may hold one are granted no right to make
    /// names. A call that makes or removes a name only beneath them may go to the kernel
    /// (`CONTINUE`) even when a racing thread swaps its path. Security boundary: Landlock's
    /// grants, not this list, keep the names out of the held directories; the list only
    /// says where the kernel will agree to a call fence lets through. A directory whose
    /// own entry a call makes or removes is forgotten (its grant went with the old
    /// directory), so a new one made in its place is written through the supervisor; so is
    /// one whose device and inode numbers are no longer those of the directory the rule
    /// was attached to (replaced from outside the sandbox).
    pub bounded: BoundedDirs,
    /// The spare folders the sandbox's ruleset grants whole ([`super::spare_folders`]):
    /// a folder made in a held directory of the worktree, where a folder that existed at
    /// start would have been granted whole, is one of them moved into place.
    pub spares: Option<Arc<super::spare_folders::Spares>>,
    /// The `.git/config` of the worktree and of each rule base that did not exist when the
    /// session started: a repository made in the session (`git init`), whose config may
    /// take what `git init` records ([`super::git_config_change`]); an existing one's may
    /// not (a changed format or object format breaks it, reflogs off hide its history).
    pub new_git_configs: Vec<PathBuf>,
}

impl Fence {
    /// Whether `path` (absolute, resolved) is or lies beneath an unreadable path.
    pub fn is_unreadable(&self, path: &Path) -> bool {
        // On every notified write, against the secret paths: bytes where both sides are
        // plain (the same answer as the component-wise `starts_with`, at a fraction of it).
        let plain = is_plain(path);
        let beneath = |u: &PathBuf| {
            if plain && is_plain(u) {
                byte_prefix_at_boundary(path, u)
            } else {
                path.starts_with(u)
            }
        };
        // Most paths lie in a writable root: only the secrets that can hold such a path
        // are compared (a path beneath both a root and a secret has both for ancestors,
        // so one of the two lies beneath the other).
        let near = self.unreadable_near_roots.get_or_init(|| {
            self.writable
                .iter()
                .map(|r| {
                    self.unreadable
                        .iter()
                        .filter(|u| u.starts_with(r) || r.starts_with(u))
                        .cloned()
                        .collect()
                })
                .collect()
        });
        if let Some(i) = self
            .writable
            .iter()
            .position(|r| byte_prefix_at_boundary(path, r))
        {
            return near[i].iter().any(beneath);
        }
        self.unreadable.iter().any(beneath)
    }

    /// Whether an unreadable path lies beneath `path`, or is it: a folder that holds a
    /// secret (`W/priv` for `~/.ssh -> W/priv/ssh`), which moved would put the secret at a
    /// path no rule hides.
    pub fn holds_unreadable(&self, path: &Path) -> bool {
        self.unreadable.iter().any(|u| u.starts_with(path))
    }

    /// Whether `path` is the host's `/dev/shm` as the sandbox writes it (no mount
    /// namespace, so not a private one): a folder every account of the machine shares,
    /// which a root sandbox owns. The sandbox makes, writes and removes its own entries
    /// there; the folder itself, and other accounts' entries, are not its to change (as
    /// its owner, root may remove any entry despite the sticky bit, and close the folder
    /// to everyone with a `chmod`).
    pub fn is_shared_folder(&self, path: &Path) -> bool {
        !self.read_only_view && path == Path::new("/dev/shm")
    }

    /// The writable root containing `path`, if any.
    pub fn root_of(&self, path: &Path) -> Option<&Path> {
        self.writable
            .iter()
            .find(|r| byte_prefix_at_boundary(path, r) || path.starts_with(r))
            .map(|r| r.as_path())
    }

    /// Whether `path` is a protected path of the worktree (git hooks and config, editor and
    /// agent settings…) or of the session's profile, which stays read-only. `names_entry`:
    /// the call creates, replaces, moves or removes the directory entry itself (every write
    /// but `mkdir`); then a folder that holds protected paths (`.git`, `.claude`, a
    /// submodule's git directory, every folder above a profile's protected path) counts as
    /// protected too: renaming or replacing it would let a forged one take its place.
    pub fn is_protected(&self, path: &Path, names_entry: bool) -> bool {
        let plain = is_plain(path);
        self.in_protected_list(path, names_entry)
            || self
                .bases()
                .any(|base| protected_in(base, path, names_entry, plain).is_some())
    }

    /// Whether `path` is a protected path of the worktree (or another rule base) that runs
    /// nothing as `op` makes it (`shim::protected_paths::is_inert`): the empty hooks
    /// folder, a sample hook. `git init` makes both.
    pub fn is_inert_protected(&self, path: &Path, op: &str) -> bool {
        let makes_folder = op == "mkdir";
        if !makes_folder && !matches!(op, "open" | "creat") {
            return false;
        }
        self.bases().any(|base| {
            path.strip_prefix(base)
                .is_ok_and(|rel| shim::protected_paths::is_inert(rel, makes_folder))
        })
    }

    /// Whether `path` is fence's own folder of spare folders (`.git/fence`) of the worktree
    /// or of a rule base, or lies beneath it.
    pub fn in_spare_home(&self, path: &Path) -> bool {
        self.bases()
            .any(|base| path.starts_with(base.join(shim::protected_paths::SPARE_HOME)))
    }

    /// Whether `link` (to `target`) is git's probe of whether symbolic links work, which
    /// `git init` makes in a new git directory and removes at once: `.git/tXXXXXX` (six
    /// characters of `mkstemp`) naming `testing`. It leads nowhere git looks.
    pub fn is_git_symlink_probe(&self, link: &Path, target: &[u8]) -> bool {
        let probe_name = link.file_name().map(|n| n.as_bytes()).is_some_and(|n| {
            n.len() == 7 && n[0] == b't' && n[1..].iter().all(u8::is_ascii_alphanumeric)
        });
        target == b"testing"
            && probe_name
            && self
                .bases()
                .any(|base| link.parent() == Some(base.join(".git").as_path()))
    }

    /// Whether `path` is protected by the absolute list ([`Fence::protected`]).
    fn in_protected_list(&self, path: &Path, names_entry: bool) -> bool {
        // In any case, as the names by rule (`shim::protected_paths::name_key`): a folder
        // that folds case finds `.husky/` as `.HUSKY/`.
        let key = shim::protected_paths::name_key(path);
        self.protected.iter().any(|p| {
            let p = shim::protected_paths::name_key(p);
            key.starts_with(&p) || (names_entry && p.starts_with(&key))
        })
    }

    /// Whether `path` lies beneath a `.git` directory of the worktree or of one of
    /// [`Fence::rule_bases`] (`.git/logs/refs/heads/main`), where no symbolic link is made
    /// (`shim::protected_paths::in_git_directory`).
    pub fn in_git_directory(&self, path: &Path) -> bool {
        self.bases().any(|base| {
            path.strip_prefix(base)
                .is_ok_and(shim::protected_paths::in_git_directory)
        })
    }

    /// Whether `path` lies in the worktree or in one of [`Fence::rule_bases`].
    pub fn has_rule_base(&self, path: &Path) -> bool {
        self.bases().any(|b| path.starts_with(b))
    }

    /// The worktree, then [`Fence::rule_bases`].
    pub(super) fn bases(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.worktree).chain(&self.rule_bases)
    }

    /// Whether `path`, protected, may still be removed: it is a nested repository's `.git`
    /// or control file, a `HEAD` outside `.git` folders, or an existing bare repository's
    /// control file for every base whose rules protect it (the worktree's own `.git` is a
    /// nested repository's for an `--allow-write` folder above the worktree, and must not
    /// be removable for that), and no absolute entry protects it.
    pub fn is_removable_protected(&self, path: &Path) -> bool {
        if self.in_protected_list(path, true) {
            return false;
        }
        let plain = is_plain(path);
        let mut verdicts = self
            .bases()
            .filter_map(|base| protected_in(base, path, true, plain))
            .peekable();
        verdicts.peek().is_some() && verdicts.all(|removable| removable)
    }

    /// Whether `path` lies in the worktree made read-only by `--read-only-worktree`.
    pub fn in_read_only_worktree(&self, path: &Path) -> bool {
        self.read_only_worktree && path.starts_with(&self.worktree) && self.root_of(path).is_none()
    }

    /// Why a write on `path` outside the fence is refused: what to tell, and the rule.
    /// Whether `path` (absolute, resolved) is one of the tools' lock or state files in the
    /// home, or a companion of one (`.global-cache-journal`, `.viminfz.tmp`).
    pub fn is_state_file(&self, path: &Path) -> bool {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        self.state_files.iter().any(|f| {
            f.parent() == Some(dir)
                && f.file_name()
                    .is_some_and(|stem| name.as_bytes().starts_with(stem.as_bytes()))
        })
    }

    /// Whether `path` is a folder above a tool's state file ([`state_files`]) that a tool
    /// makes first when it is missing (top makes `~/.config` for `~/.config/procps` on an
    /// account that has none): refused at once as the file's write is.
    pub fn is_state_folder(&self, path: &Path) -> bool {
        self.state_files
            .iter()
            .any(|f| f.starts_with(path) && f.as_path() != path)
    }

    pub fn refusal(&self, path: &Path, what: &str) -> (String, &'static str) {
        if self.in_read_only_worktree(path) {
            (
                format!("{what} in the read-only worktree"),
                "fence.read-only-worktree",
            )
        } else {
            (
                format!("{what} outside the worktree"),
                "fence.write-outside",
            )
        }
    }

    /// Whether a write on `path` (absolute, resolved) stays inside the fence.
    pub fn allows_write(&self, path: &Path) -> bool {
        self.root_of(path).is_some()
            || self.devices.iter().any(|d| d == path)
            // With a mount view, the sandbox's /dev/pts is a devpts of its own (or holds
            // only the session's terminal) and /dev/console is the session's terminal:
            // the path is looked up in the sandbox's view, and Landlock bounds the open.
            || (self.read_only_view
                && (path.starts_with("/dev/pts/") || path == Path::new("/dev/console")))
    }

    /// Whether the directory holding `path` (absolute, resolved) lies beneath a bounded
    /// directory ([`Fence::bounded`]): a name made or removed there, or a file written
    /// there, is bounded by Landlock whatever path a racing thread swaps in.
    pub fn beneath_bounded(&self, path: &Path) -> bool {
        let now = clock_start().elapsed().as_nanos() as u64 + 1;
        self.beneath_bounded_at(path, now)
    }

    /// [`Fence::beneath_bounded`] at `now` (nanoseconds on the clock of [`Granted::seen`]).
    fn beneath_bounded_at(&self, path: &Path, now: u64) -> bool {
        let Some(dir) = parent_of(path) else {
            return false;
        };
        let granted_dir = {
            let bounded = self.bounded.read().unwrap_or_else(|e| e.into_inner());
            let Some((at, granted)) = bounded_above(&bounded, dir) else {
                return false;
            };
            let seen = granted.seen.load(Ordering::Relaxed);
            if seen != 0 && now.saturating_sub(seen) < BOUNDED_SEEN_FOR.as_nanos() as u64 {
                return true;
            }
            // Still the directory the rule was attached to? (Another process, outside
            // the sandbox or in another one, may have replaced it; the kernel would then
            // refuse.)
            if super::view::identity(at).is_ok_and(|id| id == granted.id) {
                granted.seen.store(now, Ordering::Relaxed);
                return true;
            }
            at.to_path_buf()
        };
        self.bounded
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&granted_dir);
        false
    }

    /// The spare folders to make the new folder `path` (absolute, resolved) from: when it
    /// lies in the worktree (the pool's mount) and the sandbox's ruleset would have granted
    /// it whole had it existed at start (shim `landlock_fence::grants_whole`: no protected
    /// name can be made in it or beneath it).
    pub fn spares_for(&self, path: &Path) -> Option<Arc<super::spare_folders::Spares>> {
        let spares = self.spares.as_ref()?;
        if path == self.worktree || !path.starts_with(&self.worktree) {
            return None;
        }
        let bases: Vec<PathBuf> = self.bases().cloned().collect();
        shim::landlock_fence::grants_whole(path, &bases, &self.protected).then(|| spares.clone())
    }

    /// A call makes, moves or removes the entry `path`: a bounded directory at or beneath
    /// it is forgotten. Only names outside every bounded directory can be one (bounded
    /// directories are children of held ones).
    pub fn forget_bounded_at(&self, path: &Path) {
        let beneath_one = path.parent().is_some_and(|dir| {
            bounded_above(&self.bounded.read().unwrap_or_else(|e| e.into_inner()), dir).is_some()
        });
        if beneath_one {
            return;
        }
        let gone = |d: &PathBuf| d.starts_with(path);
        if self
            .bounded
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .any(gone)
        {
            self.bounded
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|d, _| !gone(d));
        }
    }
}

/// The bounded directory at or above `dir`, by name.
fn bounded_above<'a>(bounded: &'a BoundedMap, dir: &'a Path) -> Option<(&'a Path, &'a Granted)> {
    if bounded.is_empty() {
        return None;
    }
    let mut at = Some(dir);
    while let Some(a) = at {
        if let Some(g) = bounded.get(a) {
            return Some((a, g));
        }
        at = parent_of(a);
    }
    None
}

/// A fast, sufficient test for `path.starts_with(root)` (component-wise), for a `root`
/// without `.` or empty components and without a trailing slash (the writable roots are
/// canonical): `root`'s bytes followed by the end of `path` or a slash. Splitting the same
/// bytes at the same slashes gives the same components, so a `true` here is a `true` of
/// `Path::starts_with`; a `false` is not conclusive (`/w//repo/x`), and the callers then
/// ask `Path::starts_with`. On every notified write, most paths are inside a root.
fn byte_prefix_at_boundary(path: &Path, root: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, r) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    r.len() > 1
        && !r.ends_with(b"/")
        && p.starts_with(r)
        && (p.len() == r.len() || p[r.len()] == b'/')
}

/// Whether `path` is absolute and its bytes hold exactly its components: no empty or `.`
/// component (`//`, `/./`), no trailing slash, not the root alone. Between two such paths,
/// [`byte_prefix_at_boundary`] is `Path::starts_with`.
fn is_plain(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let b = path.as_os_str().as_bytes();
    // One pass: every name after the leading slash non-empty and not `.`.
    b.len() > 1
        && b[0] == b'/'
        && b[1..]
            .split(|c| *c == b'/')
            .all(|name| !name.is_empty() && name != b".")
}

/// `a == b` as paths (by components), from the bytes where both are plain ([`is_plain`]).
pub fn same_path(a: &Path, b: &Path) -> bool {
    let (x, y) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    x == y || (!(is_plain(a) && is_plain(b)) && a == b)
}

/// `Path::parent` of a plain path ([`is_plain`]) from its bytes: what precedes its last
/// slash, `/` for a name in the root; `Path::parent` itself for any other path.
pub fn parent_of(path: &Path) -> Option<&Path> {
    if !is_plain(path) {
        return path.parent();
    }
    let b = path.as_os_str().as_bytes();
    let at = b.iter().rposition(|c| *c == b'/')?;
    Some(Path::new(std::ffi::OsStr::from_bytes(if at == 0 {
        &b[..1]
    } else {
        &b[..at]
    })))
}

/// Whether the rules relative to `base` (the worktree, or another of the folders protected
/// as it is, [`Fence::rule_bases`]) protect `path`: `None` if not, else whether it may still be removed
/// (a nested repository's `.git` and control files, a `HEAD` outside `.git` folders, an
/// existing bare repository's control files: protected against being made, moved or
/// written only).
fn protected_in(base: &Path, path: &Path, names_entry: bool, plain_path: bool) -> Option<bool> {
    // On every notified write: where both are plain the path is placed against the base
    // from their bytes (the same answers as the component-wise tests below).
    let (p, b) = (path.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    let rel = if plain_path && is_plain(base) {
        if !byte_prefix_at_boundary(path, base) {
            // Not beneath the base; the base itself or a folder above it (below).
            return (names_entry && byte_prefix_at_boundary(base, path)).then_some(false);
        }
        if p.len() == b.len() && names_entry {
            return Some(false);
        }
        Path::new(std::ffi::OsStr::from_bytes(
            p.get(b.len() + 1..).unwrap_or_default(),
        ))
    } else {
        // The base itself, or a folder above it in a writable root (`--allow-write` of a
        // parent): moved away and back, it would bring forged hooks or settings in without
        // a write to their paths.
        if names_entry && base.starts_with(path) {
            return Some(false);
        }
        path.strip_prefix(base).ok()?
    };
    // Protected names are matched in any case (`shim::protected_paths::name_key`).
    // (Folded once: the predicates given the key fold nothing again.)
    let key = shim::protected_paths::name_key(rel);
    let removable = shim::protected_paths::is_removable_as(rel, &key)
        || in_a_git_directory(&key, path)
        || completes_a_git_directory(&key, path);
    if removable {
        return Some(true);
    }
    (shim::protected_paths::is_protected_as(rel, &key)
        || (names_entry && shim::protected_paths::holds_protected(&key))
        || is_git_file(&key, path))
    .then_some(false)
}

/// Whether `path` (`rel` in a rule base) is the base's `.git` *file* (a linked worktree's
/// or a submodule's), which names the git directory whose hooks and config git uses: its
/// content and metadata are protected as well as its name, so that no hardlink to it (whose
/// content is the same file's) can point it at a forged git directory.
fn is_git_file(rel: &Path, path: &Path) -> bool {
    // Any spelling of `.git` begins with it (`.git/`, `.git/.`): most paths end here.
    rel.as_os_str().as_bytes().starts_with(b".git")
        && rel == Path::new(".git")
        && path
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_file())
}

/// Whether the rules by name may look at the filesystem to judge `path` (bytes, relative
/// or absolute): it ends in the name of a git directory's control file (`config`,
/// `commondir`, `config.worktree`) or has a `hooks` folder on it, and whether it is one
/// depends on a `HEAD` beside it ([`in_a_git_directory`]), so on the folder the path
/// really names. A kept cwd never decides such a call (`notify_loop::check_write`).
pub fn may_name_a_git_control(path: &[u8]) -> bool {
    let key = shim::protected_paths::name_key(Path::new(std::ffi::OsStr::from_bytes(path)));
    let path = key.as_os_str().as_bytes();
    [&b"config"[..], b"commondir", b"config.worktree"]
        .iter()
        .any(|n| path.ends_with(n))
        || path.split(|c| *c == b'/').any(|name| name == b"hooks")
}

/// Whether `path` (`rel` in the worktree) is a control file of a git directory that
/// exists in the worktree outside `.git` folders (a bare repository: a test fixture, a
/// mirror): its `config`, `commondir`, `config.worktree`, or its `hooks`. New ones cannot be
/// made (no `HEAD` outside `.git` folders); an existing one's would run code in git run
/// there by the user. The folder is taken for a git directory when it holds `HEAD`, as
/// the sandbox sees it: one more lookup, for these names only (policy: the answer may be
/// stale by the time the call acts).
fn in_a_git_directory(rel: &Path, path: &Path) -> bool {
    // Every notified write comes here: most paths are answered from their bytes.
    if !may_name_a_git_control(rel.as_os_str().as_bytes()) {
        return false;
    }
    let parts: Vec<&std::ffi::OsStr> = rel.components().map(|c| c.as_os_str()).collect();
    if parts.iter().any(|c| *c == ".git") {
        return false;
    }
    let git_dir_at = |depth: usize| {
        let mut dir = path.to_path_buf();
        for _ in 0..depth {
            dir.pop();
        }
        super::view::identity(&dir.join("HEAD")).is_ok()
    };
    let Some(last) = parts.last() else {
        return false;
    };
    if matches!(
        last.to_str(),
        Some("config" | "commondir" | "config.worktree")
    ) && git_dir_at(1)
    {
        return true;
    }
    // `…/hooks` or anything beneath it, in the folder above `hooks`.
    (1..parts.len())
        .filter(|i| parts[*i] == "hooks")
        .any(|i| git_dir_at(parts.len() - i))
}

/// Whether making `path` (`rel` in a rule base, as [`shim::protected_paths::name_key`]
/// folds it) outside `.git` folders would give its folder the last of the three entries git
/// takes for a git directory: `HEAD` in another case (`head`, which a folder that folds
/// case takes for `HEAD`; `HEAD` itself is refused by name anywhere), `objects` or `refs`,
/// with the other two there, as the sandbox sees the folder (looked up by git's own names,
/// which such a folder matches in any case). Its `config` would then be the config of the
/// repository the user's git finds there. Policy, as a stray `HEAD` is: one more lookup or
/// two, for these names only.
fn completes_a_git_directory(rel: &Path, path: &Path) -> bool {
    let Some(last) = rel.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let others: [&str; 2] = match last {
        "head" => ["objects", "refs"],
        "objects" => ["HEAD", "refs"],
        "refs" => ["HEAD", "objects"],
        _ => return false,
    };
    if rel.components().any(|c| c.as_os_str() == ".git") {
        return false;
    }
    let Some(dir) = path.parent() else {
        return false;
    };
    others
        .iter()
        .all(|name| super::view::identity(&dir.join(name)).is_ok())
}

/// The lock and state files that tools write in the home as they run, each by the name it
/// starts with: cargo's package-cache locks and its global cache database (in `CARGO_HOME`,
/// else `~/.cargo`), go's module cache lock, and the histories and state of interactive programs whose variables
/// the environment set itself (fence points the unset ones into the worktree's cache
/// folder) or that have none (`~/.python_history` before Python 3.13, `~/.viminfo`,
/// `~/.lesshst`, `~/.wget-hsts`, top's `~/.config/procps`). A write there is outside the worktree, and the tools
/// run on without it (cargo builds without its lock, vim without its history); asking a
/// person about each would hold every `cargo build` on four questions. So the write is
/// refused at once with its reason line, in every mode. Policy: Landlock refuses these
/// writes either way.
pub fn state_files(
    home: &Path,
    cargo_home: Option<&Path>,
    go_mod_cache: Option<&Path>,
) -> Vec<PathBuf> {
    let cargo = cargo_home.map_or_else(|| home.join(".cargo"), Path::to_path_buf);
    let mut files = vec![cargo.join(".package-cache"), cargo.join(".global-cache")];
    // The go command's lock of its module cache (`GOMODCACHE`, else the first `GOPATH`
    // folder's `pkg/mod`, else `~/go/pkg/mod`): `go mod tidy` and `go get` take it even
    // with every module there already, and go on without it when refused.
    let go = go_mod_cache.map_or_else(|| home.join("go/pkg/mod"), Path::to_path_buf);
    files.push(go.join("cache/lock"));
    files.extend(
        [
            ".python_history",
            ".viminf",
            ".lesshst",
            ".wget-hsts",
            ".bash_history",
            ".zsh_history",
            ".node_repl_history",
            ".sqlite_history",
            ".psql_history",
            ".mysql_history",
            ".rediscli_history",
            // top makes its folder at start to read and save its settings.
            ".config/procps",
        ]
        .iter()
        .map(|name| home.join(name)),
    );
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_prefix_never_says_inside_where_components_say_outside() {
        let roots = ["/w/repo", "/tmp/fence-1", "/home/u/.codex", "/dev/shm"];
        let paths = [
            "/w/repo",
            "/w/repo/",
            "/w/repo/a/b",
            "/w/repo2",
            "/w/repo2/x",
            "/w/rep",
            "/w/repo/../etc/passwd",
            "/w//repo/x",
            "/w/./repo/x",
            "/tmp/fence-1x/y",
            "/tmp/fence-1/y",
            "/home/u/.codex/config.toml",
            "/home/u/.codexx",
            "/dev/shm/x",
            "/dev/sh",
            "/",
            "",
            "w/repo/x",
        ];
        for r in roots {
            for p in paths {
                let (root, path) = (Path::new(r), Path::new(p));
                if byte_prefix_at_boundary(path, root) {
                    assert!(path.starts_with(root), "{p} under {r}");
                }
                assert_eq!(
                    byte_prefix_at_boundary(path, root) || path.starts_with(root),
                    path.starts_with(root),
                    "{p} under {r}"
                );
            }
        }
        // The root itself never takes the fast path: "/" and trailing slashes are left to
        // Path::starts_with.
        assert!(!byte_prefix_at_boundary(Path::new("/x"), Path::new("/")));
        assert!(!byte_prefix_at_boundary(
            Path::new("/w/repo/x"),
            Path::new("/w/repo/")
        ));
    }

    #[test]
    fn tool_state_files_are_matched_by_folder_and_name_start() {
        let mut f = fence("/w", &[PathBuf::from("/w")]);
        f.state_files = state_files(Path::new("/home/u"), None, None);
        for yes in [
            "/home/u/go/pkg/mod/cache/lock",
            "/home/u/.cargo/.package-cache",
            "/home/u/.cargo/.package-cache-mutate",
            "/home/u/.cargo/.global-cache",
            "/home/u/.cargo/.global-cache-journal",
            "/home/u/.viminfo",
            "/home/u/.viminfz.tmp",
            "/home/u/.python_history",
            "/home/u/.config/procps",
        ] {
            assert!(f.is_state_file(Path::new(yes)), "{yes}");
        }
        for no in [
            "/home/u/.cargo/config.toml",
            "/home/u/.cargo/bin/cargo",
            "/home/u/.cargo/registry/.package-cache",
            "/home/u/.bashrc",
            "/home/u/.config/git/config",
            "/home/u/x/.python_history",
            "/home/.python_history",
            "/home/u/go/pkg/mod/cache/download/x.zip",
        ] {
            assert!(!f.is_state_file(Path::new(no)), "{no}");
        }
        assert!(f.is_state_folder(Path::new("/home/u/.config")));
        assert!(f.is_state_folder(Path::new("/home/u/.cargo")));
        assert!(!f.is_state_folder(Path::new("/home/u/.config/procps")));
        assert!(!f.is_state_folder(Path::new("/home/u/.local")));
        f.state_files = state_files(
            Path::new("/home/u"),
            Some(Path::new("/opt/cargo")),
            Some(Path::new("/opt/gomod")),
        );
        assert!(f.is_state_file(Path::new("/opt/cargo/.package-cache")));
        assert!(!f.is_state_file(Path::new("/home/u/.cargo/.package-cache")));
        assert!(f.is_state_file(Path::new("/opt/gomod/cache/lock")));
        assert!(!f.is_state_file(Path::new("/home/u/go/pkg/mod/cache/lock")));
    }

    /// A fence for `worktree` writable in `writable`, with a mount view and Landlock ABI 3
    /// or later; tests change the fields they are about.
    fn fence(worktree: impl Into<PathBuf>, writable: &[PathBuf]) -> Fence {
        Fence {
            worktree: worktree.into(),
            writable: writable.to_vec(),
            state_files: vec![],
            devices: vec![],
            protected: vec![],
            rule_bases: vec![],
            unreadable: vec![],
            unreadable_near_roots: OnceLock::new(),
            read_only_view: true,
            quiet_blocks: false,
            read_only_worktree: false,
            landlock_truncate: true,
            landlock_refer: true,
            bounded: Default::default(),
            spares: None,
            new_git_configs: Vec::new(),
        }
    }

    #[test]
    fn bounded_directories_bound_what_lies_beneath_until_their_entry_changes() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let (w, t) = (dir.path().join("repo"), dir.path().join("tmp"));
        for d in ["repo/src", "repo/.git/objects", "tmp", "repo/lib"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let id = |p: &Path| {
            let m = std::fs::symlink_metadata(p).unwrap();
            (m.dev(), m.ino())
        };
        let fence = Fence {
            bounded: Arc::new(RwLock::new(
                [
                    w.join("src"),
                    w.join(".git/objects"),
                    t.clone(),
                    w.join("lib"),
                ]
                .into_iter()
                .map(|p| {
                    let i = id(&p);
                    (p, Granted::new(i))
                })
                .collect(),
            )),
            ..fence(&w, &[w.clone(), t.clone()])
        };
        let beneath = |p: &Path| fence.beneath_bounded(p);
        assert!(beneath(&w.join("src/main.rs")));
        assert!(beneath(&w.join("src/a/b/c.rs")));
        assert!(beneath(&w.join(".git/objects/ab/cdef")));
        assert!(beneath(&t.join("cc.s")));
        // The entries of held directories, and the bounded directories' own entries.
        assert!(!beneath(&w.join(".envrc")));
        assert!(!beneath(&w.join("src")));
        assert!(!beneath(&w.join(".git/config")));
        assert!(!beneath(&w.join("srcx/y")));
        assert!(!beneath(&w.join(".git/hooks/pre-commit")));
        // A name made beneath one changes nothing; its own entry, or one above it, does.
        fence.forget_bounded_at(&w.join("src/new"));
        assert!(beneath(&w.join("src/main.rs")));
        fence.forget_bounded_at(&w.join("src"));
        assert!(!beneath(&w.join("src/main.rs")));
        assert!(beneath(&w.join(".git/objects/ab/cdef")));
        fence.forget_bounded_at(&w.join(".git"));
        assert!(!beneath(&w.join(".git/objects/ab/cdef")));
        assert!(beneath(&t.join("cc.s")));
        // Replaced behind fence's back: no longer the granted directory. (The ruleset holds
        // the old directory, whose inode number is then not free for the new one: so does
        // this descriptor here.)
        let at = |p: &Path, ms: u64| fence.beneath_bounded_at(p, ms * 1_000_000);
        assert!(at(&w.join("lib/x"), 1000));
        let _held = std::fs::File::open(w.join("lib")).unwrap();
        std::fs::remove_dir(w.join("lib")).unwrap();
        std::fs::create_dir(w.join("lib")).unwrap();
        // Found there a moment ago: not looked at again until the window has passed.
        assert!(at(&w.join("lib/x"), 1010));
        assert!(!at(
            &w.join("lib/x"),
            1000 + BOUNDED_SEEN_FOR.as_millis() as u64
        ));
        assert!(!at(&w.join("lib/x"), 1010));
    }

    #[test]
    fn protected_paths_are_found_from_bytes_as_by_components() {
        let pi = |base: &Path, path: &Path, names_entry| {
            protected_in(base, path, names_entry, is_plain(path))
        };
        // The same path spelled with a doubled slash takes the component-wise way.
        let base = Path::new("/w/repo");
        for rel in [
            "",
            ".git",
            ".git/config",
            ".git/hooks/pre-commit",
            ".envrc",
            "src/main.rs",
            "sub/.git/config",
            "sub/.git",
            "HEAD",
            ".git/HEAD",
            ".claude/settings.json",
            ".gitx/config",
            "x/.git/fence/s",
        ] {
            let fast = if rel.is_empty() {
                base.to_path_buf()
            } else {
                base.join(rel)
            };
            let slow = PathBuf::from(format!("/w//repo/{rel}"));
            for names_entry in [false, true] {
                assert_eq!(
                    pi(base, &fast, names_entry),
                    pi(base, &slow, names_entry),
                    "{rel} {names_entry}"
                );
            }
        }
        // Paths that are not beneath the base: a folder above it, a sibling, elsewhere.
        for (fast, slow) in [
            ("/w", "/w/"),
            ("/w", "//w"),
            ("/w/repox/.git/config", "/w/repox//.git/config"),
            ("/w/rep", "/w/./rep"),
            ("/elsewhere/.git/hooks/x", "/elsewhere//.git/hooks/x"),
        ] {
            for names_entry in [false, true] {
                assert_eq!(
                    pi(base, Path::new(fast), names_entry),
                    pi(base, Path::new(slow), names_entry),
                    "{fast} {names_entry}"
                );
            }
        }
        assert_eq!(pi(base, Path::new("/w/repo"), true), Some(false));
        assert_eq!(pi(base, Path::new("/w"), true), Some(false));
        assert_eq!(pi(base, Path::new("/w"), false), None);
        assert_eq!(pi(base, Path::new("/w/repox/.git/config"), false), None);
        assert_eq!(pi(base, Path::new("/w/repox"), true), None);
    }

    #[test]
    fn plain_paths_and_their_parents_from_bytes_are_the_component_wise_ones() {
        for (p, plain) in [
            ("/", false),
            ("", false),
            ("a/b", false),
            ("/a", true),
            ("/a/b", true),
            ("/a/b/", false),
            ("/a//b", false),
            ("//a", false),
            ("/a/./b", false),
            ("/a/.", false),
            ("/./a", false),
            ("/a/..", true),
            ("/a/.b", true),
            ("/a/b.", true),
        ] {
            let path = Path::new(p);
            assert_eq!(is_plain(path), plain, "{p}");
            assert_eq!(parent_of(path), path.parent(), "{p}");
        }
    }

    #[test]
    fn unreadable_paths_in_a_writable_root_are_the_ones_near_it() {
        let mut f = fence("/w/repo", &[PathBuf::from("/w/repo"), PathBuf::from("/t")]);
        f.unreadable = ["/h/.ssh", "/w/repo/.env.d", "/t", "/w/repo/sub/.aws/"]
            .iter()
            .map(PathBuf::from)
            .collect();
        for (p, secret) in [
            ("/w/repo/src/x", false),
            ("/w/repo/.env.d/k", true),
            ("/w/repo/sub/.aws/credentials", true),
            ("/t/x", true),
            ("/h/.ssh/id", true),
            ("/h/x", false),
            ("/w/repox/.env.d/k", false),
        ] {
            assert_eq!(f.is_unreadable(Path::new(p)), secret, "{p}");
        }
    }

    #[test]
    fn unreadable_paths_are_matched_as_by_components() {
        let mut f = fence("/w", &[]);
        f.unreadable = ["/h/.ssh", "/h/.config/gh", "/etc/shadow", "/r//x/", "/"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let probes = [
            "/h/.ssh",
            "/h/.ssh/id",
            "/h/.sshx",
            "/h//.ssh/id",
            "/h/./.ssh",
            "/h/.config/gh/hosts.yml",
            "/h/.config/ghx",
            "/etc/shadow-",
            "/etc/shadow/",
            "/r/x/y",
            "/w/a",
        ];
        for p in probes {
            let p = Path::new(p);
            let by_components = f.unreadable.iter().any(|u| p.starts_with(u));
            assert_eq!(f.is_unreadable(p), by_components, "{}", p.display());
        }
        f.unreadable.pop();
        assert!(f.is_unreadable(Path::new("/h/.ssh/id")));
        assert!(!f.is_unreadable(Path::new("/h/.sshx")));
        assert!(f.is_unreadable(Path::new("/r/x/y")));
    }

    #[test]
    fn worktree_children_are_inside_and_siblings_are_not() {
        let fence = Fence {
            devices: vec!["/dev/null".into()],
            ..fence("/w/repo", &["/w/repo".into(), "/tmp/fence-1".into()])
        };
        assert!(fence.allows_write(Path::new("/w/repo/src/main.rs")));
        assert!(fence.allows_write(Path::new("/dev/null")));
        assert!(!fence.allows_write(Path::new("/w/repo2/x")));
        assert!(!fence.allows_write(Path::new("/dev/sda")));
        assert!(!fence.allows_write(Path::new("/etc/hosts")));
    }

    #[test]
    fn a_profiles_settings_file_is_protected_inside_its_writable_folder() {
        let fence = Fence {
            protected: vec![
                "/home/u/.codex/config.toml".into(),
                "/home/u/.codex/rules".into(),
            ],
            read_only_view: false,
            ..fence("/w/repo", &["/w/repo".into(), "/home/u/.codex".into()])
        };
        assert!(fence.allows_write(Path::new("/home/u/.codex/history.jsonl")));
        assert!(!fence.is_protected(Path::new("/home/u/.codex/history.jsonl"), true));
        assert!(fence.is_protected(Path::new("/home/u/.codex/config.toml"), false));
        assert!(fence.is_protected(Path::new("/home/u/.codex/rules/default.rules"), false));
        assert!(!fence.is_protected(Path::new("/home/u/.codex/config.toml.bak"), false));
        // Renaming a folder above a protected path away would let a forged one replace it.
        assert!(fence.is_protected(Path::new("/home/u/.codex"), true));
        // So would moving the worktree, or a folder above it, away and back.
        assert!(fence.is_protected(Path::new("/w/repo"), true));
        assert!(fence.is_protected(Path::new("/w"), true));
        assert!(!fence.is_protected(Path::new("/w/repo"), false));
        assert!(!fence.is_protected(Path::new("/w/repo2"), true));
        assert!(!fence.is_protected(Path::new("/home/u/.codex"), false));
        // The worktree's own protected paths still hold.
        assert!(fence.is_protected(Path::new("/w/repo/.git/config"), false));
    }

    #[test]
    fn a_read_only_worktree_refuses_with_its_own_rule() {
        let fence = Fence {
            read_only_worktree: true,
            ..fence("/w/repo", &["/tmp/fence-1".into()])
        };
        assert!(!fence.allows_write(Path::new("/w/repo/a")));
        let (what, rule) = fence.refusal(Path::new("/w/repo/a"), "write");
        assert_eq!(
            (what.as_str(), rule),
            (
                "write in the read-only worktree",
                "fence.read-only-worktree"
            )
        );
        let (what, rule) = fence.refusal(Path::new("/etc/a"), "write");
        assert_eq!(
            (what.as_str(), rule),
            ("write outside the worktree", "fence.write-outside")
        );
    }

    /// `fence check` and `fence run` protect the same names of the tools whose settings run
    /// code on a person's next `git commit` or `cd` (lefthook, pre-commit, mise), each from
    /// its own list: the lists agree.
    #[test]
    fn fence_check_and_fence_run_protect_the_same_tool_configs() {
        let mut names = Vec::new();
        for dot in ["", "."] {
            for stem in [
                "lefthook",
                "lefthook-local",
                "lefthookx",
                "mise",
                "rtx",
                "misery",
            ] {
                for ext in [
                    ".yml",
                    ".yaml",
                    ".toml",
                    ".json",
                    ".jsonc",
                    ".txt",
                    ".local.toml",
                    ".dev.toml",
                    "..toml",
                    ".toml.bak",
                ] {
                    for folder in ["", ".config/", "docs/"] {
                        names.push(format!("{folder}{dot}{stem}{ext}"));
                    }
                }
            }
        }
        for name in [
            "mise/config.toml",
            "mise/config.local.toml",
            "mise/config.ci.toml",
            "mise/tasks/build",
            "mise/config.toml.bak",
            ".lefthook/pre-commit/x.sh",
            ".lefthook-local/x",
            ".pre-commit-config.yaml",
            "docs/.pre-commit-config.yaml",
            ".zed/settings.json",
            ".helix/languages.toml",
            ".cursor/hooks.json",
            ".cursor/mcp.json",
            ".cursor/hooks/x.sh",
            ".cursor/rules/style.mdc",
            ".roo/mcp.json",
            ".roo/rules/x.md",
            ".amazonq/mcp.json",
            ".kiro/hooks/a.kiro.hook",
            ".kiro/settings/mcp.json",
            ".kiro/steering/product.md",
            ".opencode/plugin/x.ts",
            ".opencode/agent/review.md",
            "opencode.json",
            "opencode.jsonc",
            ".aider.conf.yml",
            ".exrc",
            ".nvimrc",
            ".nvim.lua",
            ".vimrc",
            ".gvimrc",
            ".opencode/tools/x.ts",
            ".opencode/tool/x.ts",
        ] {
            names.push(name.to_string());
        }
        for name in &names {
            let rel = Path::new(name);
            assert_eq!(
                policy::path::is_protected(rel),
                shim::protected_paths::is_protected(rel),
                "{name}"
            );
        }
        assert!(shim::protected_paths::is_protected(Path::new(
            ".config/.lefthook-local.jsonc"
        )));
    }
}

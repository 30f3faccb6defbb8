//! The one place that resolves a path named by a sandboxed call the way the kernel will:
//! relative to the calling thread's cwd (`/proc/<tid>/cwd`) or to its dirfd
//! (`/proc/<tid>/fd/N`), through `..` and symlinks, with `/proc/self`,
//! `/proc/thread-self` and `/proc/<its own pid>` (as its pid namespace numbers it) meaning
//! the caller.
//!
//! The result describes where the call would land *now*; the caller must still check that
//! the notification is valid afterwards, and must only `CONTINUE` where a kernel mechanism
//! bounds the call anyway (the target can change the path or its symlinks after this).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use super::view::{self, Looked, View};

/// Most symlinks followed in one resolution (the kernel's limit).
const MAX_SYMLINKS: usize = 40;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The absolute path the call acts on (its last component not followed when the call
    /// does not follow it).
    Path(PathBuf),
    /// The path cannot be told from outside: a pipe or socket behind a `/proc` link, a
    /// process other than the caller under `/proc`, a loop, an unreadable directory.
    Unresolvable(String),
    /// The caller's own descriptor link (`/proc/<tgid>/fd/N`, also under `task/<tid>/`)
    /// to an object without a path (a pipe, a socket): what the kernel would reopen.
    Descriptor(PathBuf),
    /// The kernel fails the call with this errno before it asks for any right, by the
    /// path alone: a name on the way is no directory (`file/sub`: ENOTDIR), a name is
    /// longer than a file system takes (ENAMETOOLONG), too many symlinks (ELOOP), an empty
    /// path (ENOENT). The call fails so, with no question and no line: an error widens
    /// nothing.
    Fails(i32),
}

/// The calling thread, as the resolver needs it.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub tid: libc::pid_t,
    /// The pending notification the thread is blocked in (listener descriptor, id), when
    /// it is one: a pidfd opened for `tid` is trusted only once that id is still valid
    /// afterwards (see [`super::pidfd::open`]). The listener outlives every handler.
    pub call: Option<(std::os::fd::RawFd, u64)>,
}

impl Caller {
    /// A thread known by its id only (not blocked in a notified call).
    pub fn new(tid: libc::pid_t) -> Caller {
        Caller { tid, call: None }
    }

    /// The thread that made the notified call `id` on `listener`.
    pub fn of_call(listener: &super::listener::Listener, tid: libc::pid_t, id: u64) -> Caller {
        Caller {
            tid,
            call: Some((listener.raw_fd(), id)),
        }
    }

    /// Whether the caller's notified call is still pending (always true for a thread known
    /// by its id only). What was read from `/proc/TID` before a `true` was the caller's.
    pub fn still_pending(&self) -> bool {
        self.call
            .is_none_or(|(listener, id)| super::listener::id_valid(listener, id))
    }

    /// The thread group (process) of the caller, read from /proc only when needed: the
    /// status file costs more than the rest of a typical check.
    pub fn tgid(&self) -> Option<libc::pid_t> {
        self.tgids().map(|(tgid, _)| tgid)
    }

    /// The caller's process as fence's /proc numbers it, and as the caller's own does (the
    /// innermost pid namespace's number, `NStgid`; the same without a pid namespace).
    pub fn tgids(&self) -> Option<(libc::pid_t, libc::pid_t)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.tid)).ok()?;
        let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name));
        let tgid: libc::pid_t = field("Tgid:")?.trim().parse().ok()?;
        let own = field("NStgid:")
            .and_then(|v| v.split_whitespace().last())
            .and_then(|v| v.parse().ok())
            .unwrap_or(tgid);
        Some((tgid, own))
    }
}

/// Where a relative path starts.
#[derive(Debug, Clone, Copy)]
pub enum Base {
    Cwd,
    Fd(i32),
}

impl Base {
    /// `AT_FDCWD` is the cwd; anything else a descriptor number.
    pub fn from_dirfd(dirfd: u64) -> Base {
        let fd = dirfd as i32;
        if fd == libc::AT_FDCWD {
            Base::Cwd
        } else {
            Base::Fd(fd)
        }
    }
}

/// A caller's working directory, read from `/proc/<tid>/cwd` the first time something asks
/// and then kept for the rest of the check: the exec check's policy rarely asks for it (and
/// the first lookup of a new process's /proc entry costs ~20 µs here, more than the rest of
/// the exec check); the two relative paths of a `rename` or `link` share one read.
#[derive(Debug)]
pub struct ProcessCwd {
    tid: libc::pid_t,
    read: OnceLock<Option<PathBuf>>,
    /// Given from what was kept for the thread ([`super::kept_thread`]), not read for this call.
    kept: bool,
    /// A descriptor of the kept directory, kept with it: a single name is looked up there.
    dir: Option<Arc<OwnedFd>>,
    /// Something asked for it.
    consulted: AtomicBool,
}

impl Clone for ProcessCwd {
    fn clone(&self) -> ProcessCwd {
        ProcessCwd {
            tid: self.tid,
            read: self.read.clone(),
            kept: self.kept,
            dir: self.dir.clone(),
            consulted: AtomicBool::new(self.consulted()),
        }
    }
}

impl ProcessCwd {
    pub fn of(tid: libc::pid_t) -> ProcessCwd {
        ProcessCwd {
            tid,
            read: OnceLock::new(),
            kept: false,
            dir: None,
            consulted: AtomicBool::new(false),
        }
    }

    /// The cwd kept for the thread from an earlier call ([`super::kept_thread`]), and a
    /// descriptor of that directory when one was kept with it.
    pub fn kept(tid: libc::pid_t, cwd: PathBuf, dir: Option<Arc<OwnedFd>>) -> ProcessCwd {
        ProcessCwd {
            tid,
            read: OnceLock::from(Some(cwd)),
            kept: true,
            dir,
            consulted: AtomicBool::new(false),
        }
    }

    /// The kept directory's descriptor ([`Self::kept`]).
    pub fn dir(&self) -> Option<BorrowedFd<'_>> {
        self.dir.as_deref().map(AsFd::as_fd)
    }

    /// Whether anything asked for the cwd: a check that did not placed no path against it.
    pub fn consulted(&self) -> bool {
        self.consulted.load(Ordering::Relaxed)
    }

    /// The cwd when it was read from /proc for this call and a walk can start from it.
    pub fn read_now(&self) -> Option<&Path> {
        if self.kept {
            return None;
        }
        self.read.get()?.as_deref().filter(|p| usable_base(p))
    }

    /// The directory as /proc names it (a removed one ends in ` (deleted)`): what the
    /// policy places the command's relative paths against, `../../etc` from a removed
    /// directory included. `None` when it cannot be read (the process is gone).
    pub fn get(&self) -> Option<PathBuf> {
        self.read().map(Path::to_path_buf)
    }

    fn read(&self) -> Option<&Path> {
        self.consulted.store(true, Ordering::Relaxed);
        self.read
            .get_or_init(|| view::read_proc_link(self.tid, "cwd").ok())
            .as_deref()
    }

    /// The directory when a walk can start from it: absolute, and not removed.
    pub fn base(&self) -> Option<&Path> {
        self.read().filter(|p| usable_base(p))
    }
}

/// Resolves `path` for `caller`. An empty path (with `AT_EMPTY_PATH`) names the base itself.
pub fn resolve(caller: Caller, base: Base, path: &[u8], follow_last: bool) -> Resolution {
    resolve_with_cwd(caller, base, path, follow_last, None)
}

/// [`resolve`], with the caller's cwd when it was already read for something else (as
/// `/proc/<tid>/cwd` names it; a cwd that is not a usable absolute path is read again).
pub fn resolve_with_cwd(
    caller: Caller,
    base: Base,
    path: &[u8],
    follow_last: bool,
    cwd: Option<&Path>,
) -> Resolution {
    resolve_found(caller, base, path, follow_last, cwd).0
}

/// Whether what a resolved path names was there when the walk looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Exists,
    /// It exists, and is a regular file with other hard links ([`super::private_copy`]).
    Shared,
    /// The path ends in a descriptor's link (`/proc/<pid>/fd/N`, `/dev/fd/N`, a descriptor
    /// with `AT_EMPTY_PATH`), so the call acts on the open file, not on a name, and that
    /// file has names besides the one the link shows (other hard links): no private copy
    /// can take its place.
    SharedObject,
    Missing,
    /// The walk did not look it up (a settled root, `..` last, /proc/self, an unfollowed
    /// last component, an unresolvable path).
    NotLooked,
}

impl Found {
    fn existing(shared: bool) -> Found {
        if shared { Found::Shared } else { Found::Exists }
    }
}

/// [`resolve_with_cwd`], and whether the walk found the path's target: the lookup of the
/// last component already says it, where the exec check would otherwise `lstat` the result.
pub fn resolve_found(
    caller: Caller,
    base: Base,
    path: &[u8],
    follow_last: bool,
    cwd: Option<&Path>,
) -> (Resolution, Found) {
    let unresolvable = |why: String| (Resolution::Unresolvable(why), Found::NotLooked);
    let start = if path.first() == Some(&b'/') {
        PathBuf::from("/")
    } else {
        let link = match (base, cwd) {
            (Base::Cwd, Some(known)) if usable_base(known) => {
                return walk_from_base(caller, known.to_path_buf(), path, follow_last);
            }
            (Base::Cwd, _) => format!("/proc/{}/cwd", caller.tid),
            (Base::Fd(fd), _) => format!("/proc/{}/fd/{fd}", caller.tid),
        };
        match std::fs::read_link(&link) {
            // A descriptor itself (`AT_EMPTY_PATH`): the call acts on its open file.
            Ok(p) if usable_base(&p) && path.is_empty() && object_has_other_names(&link) => {
                return (Resolution::Path(p), Found::SharedObject);
            }
            Ok(p) if usable_base(&p) => return walk_from_base(caller, p, path, follow_last),
            // A name below a descriptor of a pipe, a socket, an anonymous inode: no folder,
            // the kernel's ENOTDIR.
            Ok(p) if !path.is_empty() && !p.is_absolute() => {
                return (Resolution::Fails(libc::ENOTDIR), Found::NotLooked);
            }
            Ok(p) => return unresolvable(format!("base is {}", p.display())),
            // No such descriptor: the kernel's EBADF (an error widens nothing, whatever the
            // caller's table holds by now).
            Err(e) if matches!(base, Base::Fd(_)) && e.kind() == std::io::ErrorKind::NotFound => {
                return (Resolution::Fails(libc::EBADF), Found::NotLooked);
            }
            Err(e) => return unresolvable(format!("{link}: {e}")),
        }
    };
    walk(caller, start, path, follow_last)
}

/// [`resolve_found`] of a relative `path` from the caller's cwd `cwd`, of which `dir` is a
/// descriptor (kept with it, [`super::kept_thread`]): a single name is looked up in `dir`
/// instead of by the whole path from the sandbox's root. The same answers; a cwd in /proc
/// or one no walk can start from goes the usual way.
pub fn resolve_found_from(
    caller: Caller,
    cwd: &Path,
    dir: BorrowedFd<'_>,
    path: &[u8],
    follow_last: bool,
) -> (Resolution, Found) {
    if path.first() == Some(&b'/') || !usable_base(cwd) || in_proc(cwd) {
        return resolve_found(caller, Base::Cwd, path, follow_last, Some(cwd));
    }
    walk_counting_at(caller, cwd.to_path_buf(), Some(dir), path, follow_last, 0)
}

/// Walks `path` from the caller's base directory `base` (its cwd or a directory
/// descriptor, as the kernel printed it for the caller). A base beneath a process's folder
/// in /proc is printed with the numbers of the caller's own pid namespace (`/proc/3/fd`
/// for the sandbox's pid 3), which name other processes, or none, in fence's /proc: such a
/// path is walked from `/` whole, where the walk maps the caller's own number to fence's
/// and refuses any other. Other folders of /proc (`/proc/sys`) are walked from as they are.
fn walk_from_base(
    caller: Caller,
    base: PathBuf,
    path: &[u8],
    follow_last: bool,
) -> (Resolution, Found) {
    let under_a_pid = in_proc(&base)
        && base.components().nth(2).is_some_and(|c| {
            let name = c.as_os_str().as_bytes();
            !name.is_empty() && name.iter().all(u8::is_ascii_digit)
        });
    if !under_a_pid {
        return walk(caller, base, path, follow_last);
    }
    let mut whole = base.into_os_string().into_vec();
    if !path.is_empty() {
        whole.push(b'/');
        whole.extend_from_slice(path);
    }
    walk(caller, PathBuf::from("/"), &whole, follow_last)
}

/// Whether the open file behind the descriptor link `link` (in fence's /proc) is a
/// regular file with more than one name: the link shows one of them, the call would act
/// on all. Policy: the descriptor can be replaced once this has looked.
fn object_has_other_names(link: impl AsRef<Path>) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(link).is_ok_and(|m| m.is_file() && m.nlink() > 1)
}

/// A directory a relative path can start from: absolute, and not a removed directory.
fn usable_base(p: &Path) -> bool {
    p.is_absolute() && !p.as_os_str().as_bytes().ends_with(b" (deleted)")
}

/// The names of a path, borrowed from its bytes (`.` and empty ones left out).
fn components(bytes: &[u8]) -> Vec<&OsStr> {
    bytes
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(OsStr::from_bytes)
        .collect()
}

/// The session's writable roots whose recorded path is canonical (see [`settle_roots`]).
static SETTLED_ROOTS: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// Records the session's writable roots (the worktree, the session TMPDIR, `--allow-write`
/// paths), keeping those whose path is canonical. Their ancestors, and they themselves,
/// are directories without symlinks for the whole session: changing one would take a
/// write in its parent, which is outside every writable root (Landlock refuses it, and in
/// the mount view the roots are mount points). The walk then need not `lstat` them on
/// every call, which for an absolute path inside the worktree is most of its cost. Set
/// once per process; later calls are ignored.
pub fn settle_roots(roots: &[PathBuf]) {
    let canonical = roots
        .iter()
        .filter(|r| std::fs::canonicalize(r).is_ok_and(|c| c == **r))
        .cloned()
        .collect();
    let _ = SETTLED_ROOTS.set(canonical);
    // Every root both as named and as its canonical path: a directory beneath either is
    // one the sandbox may change.
    let mut all: Vec<PathBuf> = roots.to_vec();
    all.extend(roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()));
    all.sort();
    all.dedup();
    let _ = WRITABLE_ROOTS.set(all);
}

/// Every writable root of the session, as named and canonical (see [`settle_roots`]).
static WRITABLE_ROOTS: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// Directories programs were run from, by the absolute path they were named with (`/bin`),
/// each with the directory that path leads to (`/usr/bin`): see [`settle_program_dir`].
static SETTLED_DIRS: std::sync::LazyLock<std::sync::RwLock<HashMap<PathBuf, PathBuf>>> =
    std::sync::LazyLock::new(Default::default);

/// Most directories [`SETTLED_DIRS`] holds: PATH's directories and a few more.
const MOST_SETTLED_DIRS: usize = 256;

/// Settles the directory of a program named by an absolute path (`/bin/true`,
/// `/usr/local/sbin/cc` as a shell tries PATH): resolved once, through its symlinks, in
/// the sandbox's view; later walks of a path in it look up only its last name. An exec of
/// `/bin/true` then takes one `readlink` instead of four (`/bin` -> `usr/bin`, then `usr`,
/// `usr/bin`, `true`), some 4 µs of each exec here.
///
/// Only a directory whose every path on the way (each name looked up, each symlink
/// followed) lies outside every writable root and outside /proc is settled: the sandbox
/// can neither make, remove, rename nor re-point any of them (Landlock refuses it, and in
/// the mount view they are read-only mounts), only the host can. Policy, not a boundary:
/// the exec check judges a path the kernel resolves again when it runs the exec, which a
/// racing thread can change anyway; the answer is `CONTINUE` under Landlock whatever the
/// judgement read. A write check that walks through a settled directory finds its path
/// outside every writable root, as it is: refused whatever the path leads to now.
pub fn settle_program_dir(path: &[u8]) {
    if path.first() != Some(&b'/') {
        return;
    }
    let names = components(path);
    let Some((_, dir_names)) = names.split_last() else {
        return;
    };
    if dir_names.is_empty() || dir_names.iter().any(|n| n.as_bytes() == b"..") {
        return;
    }
    let mut lexical = PathBuf::from("/");
    lexical.extend(dir_names);
    {
        let Ok(settled) = SETTLED_DIRS.read() else {
            return;
        };
        if settled.contains_key(&lexical) || settled.len() >= MOST_SETTLED_DIRS {
            return;
        }
    }
    let Some(canonical) = resolve_unchangeable(dir_names) else {
        return;
    };
    if !view::is_directory(&canonical) {
        return;
    }
    if let Ok(mut settled) = SETTLED_DIRS.write() {
        settled.insert(lexical, canonical);
    }
}

/// The directory `lexical` (absolute, without `..`) was settled to, if it was.
fn settled_dir(lexical: &Path) -> Option<PathBuf> {
    SETTLED_DIRS.read().ok()?.get(lexical).cloned()
}

/// Resolves the absolute path made of `names` (no `..` among them, though a symlink's
/// target may hold some) in the sandbox's view, one name at a time; `None` as soon as a
/// path on the way lies in a writable root or in /proc, or a name is missing.
fn resolve_unchangeable(names: &[&OsStr]) -> Option<PathBuf> {
    let changeable = |p: &Path| {
        in_proc(p)
            || WRITABLE_ROOTS
                .get()
                .is_none_or(|roots| roots.iter().any(|r| p.starts_with(r)))
    };
    let mut resolved = PathBuf::from("/");
    let mut pending: Vec<OsString> = names.iter().rev().map(|n| n.to_os_string()).collect();
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        let candidate = resolved.join(&name);
        if changeable(&candidate) {
            return None;
        }
        match view::read_link(&candidate) {
            Ok(target) => {
                links += 1;
                if links > MAX_SYMLINKS {
                    return None;
                }
                follow_link(&target, &mut resolved, &mut pending);
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => resolved = candidate,
            Err(_) => return None,
        }
    }
    (!changeable(&resolved)).then_some(resolved)
}

/// Whether `dir` is a settled root or an ancestor of one.
fn settled(dir: &Path) -> bool {
    SETTLED_ROOTS
        .get()
        .is_some_and(|roots| under_or_at(roots, dir))
}

/// Whether `dir` is one of `roots` or an ancestor of one. Both sides are normalized
/// absolute paths (the walk builds `dir` from `/` one plain name at a time; the roots are
/// canonical), so a byte prefix ending at a `/` is a component prefix, and cheaper to test
/// on every step of every walk than `Path::starts_with`.
fn under_or_at(roots: &[PathBuf], dir: &Path) -> bool {
    let d = dir.as_os_str().as_bytes();
    roots.iter().any(|r| {
        let r = r.as_os_str().as_bytes();
        r.starts_with(d) && (r.len() == d.len() || d.ends_with(b"/") || r[d.len()] == b'/')
    })
}

fn walk(caller: Caller, start: PathBuf, path: &[u8], follow_last: bool) -> (Resolution, Found) {
    walk_counting(caller, start, path, follow_last, 0)
}

/// [`walk`], `links` symlinks already followed.
fn walk_counting(
    caller: Caller,
    start: PathBuf,
    path: &[u8],
    follow_last: bool,
    links: usize,
) -> (Resolution, Found) {
    walk_counting_at(caller, start, None, path, follow_last, links)
}

/// [`walk_counting`]; `start_dir`, when given, is a descriptor of `start`.
fn walk_counting_at(
    caller: Caller,
    start: PathBuf,
    start_dir: Option<BorrowedFd<'_>>,
    path: &[u8],
    follow_last: bool,
    links: usize,
) -> (Resolution, Found) {
    let names = components(path);
    match walk_parent_at_once(start, start_dir, &names, follow_last) {
        Quick::Done(resolution, found) => (resolution, found),
        Quick::Link {
            parent,
            target,
            links: more,
        } => {
            let links = links + more;
            if links > MAX_SYMLINKS {
                return (Resolution::Fails(libc::ELOOP), Found::NotLooked);
            }
            let start = if target.is_absolute() {
                PathBuf::from("/")
            } else {
                parent
            };
            walk_counting(
                caller,
                start,
                target.as_os_str().as_bytes(),
                follow_last,
                links,
            )
        }
        Quick::Walk(start) => walk_one_by_one(caller, start, &names, follow_last, links),
    }
}

/// What the quick walk made of a path.
enum Quick {
    /// The answer.
    Done(Resolution, Found),
    /// The parent directory holds no symlink, and the last component is a symlink to
    /// `target`, to be walked from `parent`.
    Link {
        parent: PathBuf,
        target: PathBuf,
        links: usize,
    },
    /// Walk the path one component at a time from this start.
    Walk(PathBuf),
}

/// openat2 was refused (before Linux 5.6, or an outer filter): the quick walk is not tried
/// again.
static NO_OPENAT2: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Resolves a path whose directories hold no symlink with one lookup of its parent instead
/// of one per component: the kernel opens the parent (`O_PATH`) refusing any symlink on
/// the way (`openat2` with `RESOLVE_NO_SYMLINKS`), so the lexical path is the real one;
/// the last component is then looked up in that directory. A symlink, a missing directory,
/// `/proc` (where names mean the caller, not fence) or a path ending in `..` is left to
/// the walk one component at a time ([`walk_one_by_one`]), which gives the same answers
/// for every path; this only spares most calls the component-by-component `readlink`s
/// (each walks the whole path again: 5 or 6 for a git object below the worktree).
///
/// `start_dir`, a descriptor of `start`, serves a single name: it is looked up there, one
/// component, where its whole path would be walked again from the root.
fn walk_parent_at_once(
    start: PathBuf,
    start_dir: Option<BorrowedFd<'_>>,
    names: &[&OsStr],
    follow_last: bool,
) -> Quick {
    use std::sync::atomic::Ordering;
    let Some((last, names)) = names.split_last() else {
        return Quick::Walk(start);
    };
    if last.as_bytes() == b".." {
        return Quick::Walk(start);
    }
    // The parent as the kernel is to walk it (a `..` after a missing directory fails),
    // and as a normalized path, the same once the kernel has walked the first without
    // meeting a symlink. Without a `..` the two are one path.
    let lexical = !names.iter().any(|n| n.as_bytes() == b"..");
    // A path that passes through /proc at any point (even one that climbs back out, as
    // `/proc/sys/../../wt/x` does) is the walk one by one's: names there mean the caller.
    // Without a `..` a path only grows, and lies in /proc at its end if it passed there.
    let mut through_proc = in_proc(&start);
    let (walked, parent) = if lexical {
        let mut parent = start.clone();
        for name in names {
            parent.push(name);
        }
        through_proc |= !names.is_empty() && in_proc(&parent);
        (None, parent)
    } else {
        let mut walked = start.clone();
        let mut parent = start.clone();
        for name in names {
            if name.as_bytes() == b".." {
                parent.pop();
            } else {
                parent.push(name);
            }
            through_proc |= in_proc(&parent);
            walked.push(name);
        }
        (Some(walked), parent)
    };
    if through_proc {
        return Quick::Walk(start);
    }
    // A program's settled directory (`/bin` is `/usr/bin`: see `settle_program_dir`).
    let program_dir = (walked.is_none() && !names.is_empty())
        .then(|| settled_dir(&parent))
        .flatten();
    let settled_program_dir = program_dir.is_some();
    let parent = program_dir.unwrap_or(parent);
    let entry = {
        let mut entry = PathBuf::with_capacity(parent.as_os_str().len() + 1 + last.len());
        entry.push(&parent);
        entry.push(last);
        entry
    };
    // A settled root and its ancestors hold no symlink (see `settle_roots`), nor does the
    // start (`/`, a directory the kernel named, or a folder a walk reached without meeting
    // one), nor a settled program directory: only the last component needs a look, by its
    // whole path, as the walk one by one would. A single name from the cwd (`touch x`) is
    // the most common call of all.
    let dir = if walked.is_none() && (names.is_empty() || settled_program_dir || settled(&parent)) {
        None
    } else if let Some(known) = walked.is_none().then(|| known_dir(&parent)).flatten() {
        Some(known)
    } else {
        // A lexical parent opened for the notification loop is kept for the calls after
        // this one ([`KnownDirs`]).
        let remembered = walked.is_none() && known_dirs_on();
        let walked = walked.as_ref().unwrap_or(&parent);
        // An openat2 and its close cost about what two readlinks do (3.4 against 1.6 µs
        // each here): worth it from three directories to look at, or from one when the
        // directory is kept for the next calls.
        if NO_OPENAT2.load(Ordering::Relaxed)
            || (!remembered && unsettled_depth(walked) < QUICK_FROM_DEPTH)
        {
            return Quick::Walk(start);
        }
        // The open the supervisor's carried-out calls use: symlinks refused on the way.
        match super::approved::open_checked(
            View::Sandbox,
            walked,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            0,
        ) {
            Ok(fd) if remembered => Some(remember_dir(&parent, fd)),
            Ok(fd) => Some(Arc::new(fd)),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
                return Quick::Walk(start);
            }
            // ELOOP (a symlink), ENOENT, ENOTDIR, EACCES, EXDEV…: the walk one by one
            // finds which component and says so.
            Err(_) => return Quick::Walk(start),
        }
    };
    if !follow_last || settled(&entry) {
        return Quick::Done(Resolution::Path(entry), Found::NotLooked);
    }
    let looked = match (&dir, start_dir) {
        (Some(fd), _) => view::look_at(fd.as_raw_fd(), last.as_bytes()),
        (None, Some(fd)) if names.is_empty() && walked.is_none() => {
            view::look_at(fd.as_raw_fd(), last.as_bytes())
        }
        (None, _) => view::look(&entry),
    };
    match looked {
        Ok(Looked::Link(target)) => Quick::Link {
            parent,
            target,
            links: 1,
        },
        Ok(Looked::Entry { shared }) => {
            Quick::Done(Resolution::Path(entry), Found::existing(shared))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Quick::Done(Resolution::Path(entry), Found::Missing)
        }
        Err(_) => Quick::Walk(start),
    }
}

/// Whether `path` is `/proc` or lies beneath it, by components. From its bytes where they
/// say so at once (on every walk: the paths here are built from `/` or a cwd the kernel
/// printed, one plain name at a time, so `/proc` can only be spelled one way; any other
/// spelling is asked of `Path::starts_with`).
pub(super) fn in_proc(path: &Path) -> bool {
    let b = path.as_os_str().as_bytes();
    if b == b"/proc" || b.starts_with(b"/proc/") {
        return true;
    }
    // One pass: a `/` alone, or names that are neither empty nor `.` after the leading
    // slash (a trailing slash allowed), spell no /proc path but those above.
    let plain = b == b"/"
        || (b.first() == Some(&b'/')
            && b[1..]
                .strip_suffix(b"/")
                .unwrap_or(&b[1..])
                .split(|c| *c == b'/')
                .all(|name| !name.is_empty() && name != b"."));
    !plain && path.starts_with("/proc")
}

/// Directories the quick walk opened lately on the notification loop's thread, each an
/// `O_PATH` descriptor by the lexical path it was opened with (symlinks refused on the way,
/// so that path was the real one): a later call naming a path in the same directory (git
/// makes, links and removes each object in its folder, one call after another) looks up
/// its last name there instead of opening the directory again (~2.4 µs a call here).
///
/// Kept as the notification loop keeps a thread's cwd ([`super::kept_thread`]) and for the
/// same reasons. A directory's path changes only by a rename or removal of it or of a
/// folder above it (a path without symlinks gains one only where a folder on it was
/// removed or moved away first; the sandbox can make no mount): every such call of the
/// sandbox is notified and forgets every known directory, and while one is in flight
/// none is known or kept. A rename on the host, or by another session of the worktree, is
/// not seen: a directory is opened again once it has been known for [`DIR_KNOWN_FOR`].
/// Nothing is known while decisions are logged (a record names the path as read for it),
/// nor on any other thread.
///
/// Policy, not a boundary, as a kept cwd is: a `CONTINUE` is bounded by the kernel
/// whatever directory the call really lands in, and whatever the supervisor carries out
/// it opens again from the path it judged, refusing symlinks on the way
/// ([`super::approved::open_checked`]). Only a plain `CONTINUE` is decided with a known
/// directory: the loop works any other answer out again without them
/// ([`known_dir_served`]).
struct KnownDirs {
    /// When the call being checked was received; `None`: nothing is known for it.
    call: Option<std::time::Instant>,
    /// The cwd epoch the directories were opened in.
    epoch: u64,
    /// A known directory served a walk for the call being checked.
    served: bool,
    dirs: Vec<KnownDir>,
}

struct KnownDir {
    path: PathBuf,
    fd: Arc<OwnedFd>,
    opened: std::time::Instant,
}

/// Most directories known at a time (those of the last millisecond's calls).
const MOST_KNOWN_DIRS: usize = 16;

/// How long a directory is known before it is opened again: a kept cwd's time
/// ([`super::kept_thread::CWD_KEPT_FOR`]).
const DIR_KNOWN_FOR: std::time::Duration = super::kept_thread::CWD_KEPT_FOR;

thread_local! {
    static KNOWN_DIRS: std::cell::RefCell<KnownDirs> = const {
        std::cell::RefCell::new(KnownDirs { call: None, epoch: 0, served: false, dirs: Vec::new() })
    };
}

/// Before the notification loop checks a call: the cwd epoch it is checked in and when it
/// was received, or `None` when no directory may be known for it (a change in flight,
/// decisions logged). Directories known in another epoch are forgotten.
pub fn known_dirs_for_call(call: Option<(u64, std::time::Instant)>) {
    KNOWN_DIRS.with_borrow_mut(|known| {
        known.call = call.map(|(_, received)| received);
        known.served = false;
        match call {
            Some((epoch, _)) if epoch == known.epoch => {}
            Some((epoch, _)) => {
                known.epoch = epoch;
                known.dirs.clear();
            }
            None => known.dirs.clear(),
        }
    });
}

fn known_dirs_on() -> bool {
    KNOWN_DIRS.with_borrow(|known| known.call.is_some())
}

/// Whether a directory known from an earlier call served a walk for the call being
/// checked (one opened for it does not count).
pub fn known_dir_served() -> bool {
    KNOWN_DIRS.with_borrow(|known| known.served)
}

/// The known directory at lexical path `path`, if one is known for the call being checked.
fn known_dir(path: &Path) -> Option<Arc<OwnedFd>> {
    KNOWN_DIRS.with_borrow_mut(|known| {
        let now = known.call?;
        let fd = known
            .dirs
            .iter()
            .find(|d| now.saturating_duration_since(d.opened) < DIR_KNOWN_FOR && d.path == path)
            .map(|d| d.fd.clone())?;
        known.served = true;
        Some(fd)
    })
}

/// Keeps `fd`, just opened at lexical path `path` for the call being checked.
fn remember_dir(path: &Path, fd: OwnedFd) -> Arc<OwnedFd> {
    let fd = Arc::new(fd);
    KNOWN_DIRS.with_borrow_mut(|known| {
        let Some(now) = known.call else {
            return;
        };
        known
            .dirs
            .retain(|d| d.path != path && now.saturating_duration_since(d.opened) < DIR_KNOWN_FOR);
        if known.dirs.len() >= MOST_KNOWN_DIRS {
            known.dirs.remove(0);
        }
        known.dirs.push(KnownDir {
            path: path.to_path_buf(),
            fd: fd.clone(),
            opened: now,
        });
    });
    fd
}

/// Fewest directories below the settled roots for which the quick walk opens the parent.
const QUICK_FROM_DEPTH: usize = 3;

/// How many components of `dir` lie below its deepest settled ancestor (counted up to
/// [`QUICK_FROM_DEPTH`]): the walk one by one looks each of them up.
fn unsettled_depth(dir: &Path) -> usize {
    let mut depth = 0;
    let mut at = Some(dir);
    while let Some(p) = at {
        if depth >= QUICK_FROM_DEPTH || settled(p) {
            break;
        }
        depth += 1;
        at = p.parent();
    }
    depth
}

/// The walk one component at a time (`names`: the path's components, see [`components`]):
/// each directory is looked up by its whole path and its symlinks followed as the kernel
/// would.
fn walk_one_by_one(
    caller: Caller,
    start: PathBuf,
    names: &[&OsStr],
    follow_last: bool,
    links: usize,
) -> (Resolution, Found) {
    let unresolvable = |why: String| (Resolution::Unresolvable(why), Found::NotLooked);
    let mut resolved = start;
    // A stack: the next component is at the end.
    let mut pending: Vec<OsString> = names.iter().rev().map(|n| n.to_os_string()).collect();
    let mut links = links;
    let mut missing = false;
    // What the lookup of the latest component said.
    let mut found = Found::NotLooked;
    // The descriptor link the path ended in, followed to its file's name: the call acts on
    // the open file behind it.
    let mut object_link: Option<PathBuf> = None;
    while let Some(name) = pending.pop() {
        let is_last = pending.is_empty();
        if name == ".." {
            // `file/..`: the kernel walks through `file` as a folder and fails.
            if !missing && matches!(view::entry_kind(&resolved), Ok(Some(false))) {
                return (Resolution::Fails(libc::ENOTDIR), Found::NotLooked);
            }
            resolved.pop();
            found = if missing {
                Found::Missing
            } else {
                Found::NotLooked
            };
            continue;
        }
        if missing {
            // Past a missing component the call fails with ENOENT; the rest is lexical.
            resolved.push(&name);
            continue;
        }
        found = Found::NotLooked;
        // `resolved` is built from "/" one plain name at a time: its bytes are its
        // normal form, cheaper to compare than its components.
        if resolved.as_os_str().as_bytes() == b"/proc" {
            let Some((tgid, own_tgid)) = caller.tgids() else {
                return unresolvable("caller is gone".into());
            };
            if name == "self" {
                resolved.push(tgid.to_string());
                continue;
            }
            if name == "thread-self" {
                resolved.push(format!("{tgid}/task/{}", caller.tid));
                continue;
            }
            // The caller names itself by its pid as its own /proc shows it (its pid
            // namespace's); the walk goes on in fence's /proc, by fence's number for it.
            let own = name.to_str().and_then(|n| n.parse::<libc::pid_t>().ok()) == Some(own_tgid);
            if !own {
                return unresolvable(format!(
                    "/proc/{} is not the caller",
                    name.to_string_lossy()
                ));
            }
            resolved.push(tgid.to_string());
            continue;
        }
        let candidate = resolved.join(&name);
        // A last component that is not followed names the entry itself whether it
        // exists or not: nothing to look up. Nor in the settled roots' own paths.
        if (is_last && !follow_last) || settled(&candidate) {
            resolved = candidate;
            continue;
        }
        // One readlink answers what an lstat and then a readlink would: the link's target,
        // EINVAL for an entry that is not a symlink, ENOENT for a missing one (and costs
        // less than the lstat alone: no attributes are gathered). The last name is looked
        // at with a `statx` instead, which says whether a file has other hard links too.
        let looked = if is_last {
            view::look(&candidate)
        } else {
            match view::read_link(&candidate) {
                Ok(target) => Ok(Looked::Link(target)),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    Ok(Looked::Entry { shared: false })
                }
                Err(e) => Err(e),
            }
        };
        match looked {
            Ok(Looked::Link(target)) => {
                links += 1;
                if links > MAX_SYMLINKS {
                    return (Resolution::Fails(libc::ELOOP), Found::NotLooked);
                }
                // A descriptor link to a file that has no name any more (removed, an
                // O_TMPFILE or memfd file) shows `/path (deleted)`: no path leads there.
                if candidate.starts_with("/proc")
                    && is_descriptor_link(&candidate)
                    && target.as_os_str().as_bytes().ends_with(b" (deleted)")
                {
                    return (Resolution::Descriptor(candidate), Found::NotLooked);
                }
                if candidate.starts_with("/proc") && !target.is_absolute() {
                    // A /proc magic link to something without a path (pipe:[…], socket:[…]).
                    if is_descriptor_link(&candidate) {
                        return (Resolution::Descriptor(candidate), Found::NotLooked);
                    }
                    if is_magic_link(&candidate) {
                        return unresolvable(format!(
                            "{} is {}",
                            candidate.display(),
                            target.display()
                        ));
                    }
                }
                if is_last && candidate.starts_with("/proc") && is_descriptor_link(&candidate) {
                    object_link = Some(candidate.clone());
                }
                follow_link(&target, &mut resolved, &mut pending);
            }
            Ok(Looked::Entry { shared }) => {
                found = Found::existing(shared);
                resolved = candidate;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing = true;
                found = Found::Missing;
                resolved = candidate;
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ENAMETOOLONG)) => {
                return (
                    Resolution::Fails(e.raw_os_error().unwrap_or(libc::ENOTDIR)),
                    Found::NotLooked,
                );
            }
            Err(e) => return unresolvable(format!("{}: {e}", candidate.display())),
        }
    }
    if object_link.is_some_and(object_has_other_names) {
        found = Found::SharedObject;
    }
    (Resolution::Path(resolved), found)
}

/// Continues a walk through a symlink to `target`: from `/` if it is absolute, its names
/// next on the `pending` stack (the next name at the end).
fn follow_link(target: &Path, resolved: &mut PathBuf, pending: &mut Vec<OsString>) {
    if target.is_absolute() {
        *resolved = PathBuf::from("/");
    }
    pending.extend(
        components(target.as_os_str().as_bytes())
            .iter()
            .rev()
            .map(|n| n.to_os_string()),
    );
}

/// `/proc/<pid>/fd/N` (also under `task/<tid>/`).
fn is_descriptor_link(path: &Path) -> bool {
    let mut parts = path.components().rev();
    let number = parts
        .next()
        .is_some_and(|c| c.as_os_str().as_bytes().iter().all(u8::is_ascii_digit));
    number && parts.next().is_some_and(|c| c.as_os_str() == "fd")
}

/// `/proc/<pid>/{cwd,root,exe}` and `/proc/<pid>/fd/N` (also under `task/<tid>/`).
fn is_magic_link(path: &Path) -> bool {
    let parts: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect();
    matches!(
        parts.get(parts.len().wrapping_sub(2)).map(|s| s.as_bytes()),
        Some(b"fd")
    ) || matches!(
        parts.last().map(|s| s.as_bytes()),
        Some(b"cwd" | b"root" | b"exe")
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn proc_is_found_from_bytes_as_by_components() {
        use std::path::Path;
        for p in [
            "/proc",
            "/proc/",
            "/proc/self",
            "//proc/1",
            "/./proc/x",
            "/procx",
            "/pro",
            "/",
            "/x/proc",
            "/proc.d/x",
            "/proc/.",
            "/x/../proc/1",
            "//",
            "/proc//",
            "/.",
            "/./",
            "/x/",
            "/x//",
            "/x/./",
            "/proc/x/",
            "x/proc",
            "proc/1",
            "",
        ] {
            assert_eq!(
                super::in_proc(Path::new(p)),
                Path::new(p).starts_with("/proc"),
                "{p}"
            );
        }
    }

    use super::*;

    fn me() -> Caller {
        let pid = std::process::id() as libc::pid_t;
        Caller::new(pid)
    }

    #[test]
    fn dotdot_and_symlinks_resolve_to_the_real_target() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("wt")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("wt/etc-link")).unwrap();
        std::os::unix::fs::symlink("/etc/hosts", root.join("wt/hosts-link")).unwrap();
        let p = |s: &str| root.join(s).into_os_string().into_vec();
        assert_eq!(
            resolve(me(), Base::Cwd, &p("wt/../wt/etc-link/passwd"), true),
            Resolution::Path("/etc/passwd".into())
        );
        assert_eq!(
            resolve(me(), Base::Cwd, &p("wt/hosts-link"), true),
            Resolution::Path("/etc/hosts".into())
        );
        assert_eq!(
            resolve(me(), Base::Cwd, &p("wt/hosts-link"), false),
            Resolution::Path(root.join("wt/hosts-link"))
        );
        assert_eq!(
            resolve(me(), Base::Cwd, &p("wt/new/../../x"), true),
            Resolution::Path(root.join("x"))
        );
    }

    #[test]
    fn proc_self_root_means_the_caller_root() {
        assert_eq!(
            resolve(me(), Base::Cwd, b"/proc/self/root/etc/hosts", true),
            Resolution::Path("/etc/hosts".into())
        );
        assert!(matches!(
            resolve(me(), Base::Cwd, b"/proc/1/root/etc/hosts", true),
            Resolution::Unresolvable(_)
        ));
    }

    #[test]
    fn only_a_root_and_its_ancestors_are_settled() {
        let roots = vec![
            PathBuf::from("/var/tmp/w/repo"),
            PathBuf::from("/tmp/fence-1"),
        ];
        for dir in [
            "/var",
            "/var/tmp",
            "/var/tmp/w/repo",
            "/tmp",
            "/tmp/fence-1",
        ] {
            assert!(under_or_at(&roots, Path::new(dir)), "{dir}");
        }
        for dir in [
            "/var/tmp/w/repo/src",
            "/var/tmp/w/repo2",
            "/etc",
            "/tmp/fence-12",
            "/tmp/fence",
            "/var/tmp/w/rep",
            "/va",
        ] {
            assert!(!under_or_at(&roots, Path::new(dir)), "{dir}");
        }
    }

    #[test]
    fn an_unfollowed_last_component_is_the_entry_itself() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("/etc", root.join("link")).unwrap();
        let p = root.join("link").into_os_string().into_vec();
        assert_eq!(
            resolve(me(), Base::Cwd, &p, false),
            Resolution::Path(root.join("link"))
        );
        let missing = root.join("missing/x").into_os_string().into_vec();
        assert_eq!(
            resolve(me(), Base::Cwd, &missing, false),
            Resolution::Path(root.join("missing/x"))
        );
    }

    #[test]
    fn the_walk_says_whether_it_found_the_target() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/prog"), "").unwrap();
        symlink("d/prog", root.join("link")).unwrap();
        symlink("d/gone", root.join("dangling")).unwrap();
        std::fs::hard_link(root.join("d/prog"), root.join("d/prog2")).unwrap();
        std::fs::write(root.join("d/alone"), "").unwrap();
        let found = |rel: &str, follow: bool| {
            let p = root.join(rel).into_os_string().into_vec();
            resolve_found(me(), Base::Cwd, &p, follow, None).1
        };
        // A regular file with another hard link is told apart, through a symlink too,
        // whichever walk looks (the second path is walked one name at a time: a `..`).
        assert_eq!(found("d/prog", true), Found::Shared);
        assert_eq!(found("link", true), Found::Shared);
        assert_eq!(found("d/../d/prog2", true), Found::Shared);
        assert_eq!(found("d/alone", true), Found::Exists);
        assert_eq!(found("d/../d/alone", true), Found::Exists);
        assert_eq!(found("d", true), Found::Exists);
        assert_eq!(found("d/gone", true), Found::Missing);
        assert_eq!(found("dangling", true), Found::Missing);
        assert_eq!(found("nodir/prog", true), Found::Missing);
        assert_eq!(found("nodir/../d/prog", true), Found::Missing);
        assert_eq!(found("d/..", true), Found::NotLooked);
        assert_eq!(found("d/prog", false), Found::NotLooked);
        // What the walk says agrees with lstat wherever it looked.
        for rel in ["d/prog", "link", "d/gone", "dangling", "d", "d/prog/x"] {
            let looked = found(rel, true);
            let exists = std::fs::metadata(root.join(rel)).is_ok();
            match looked {
                Found::Exists | Found::Shared | Found::SharedObject => assert!(exists, "{rel}"),
                Found::Missing => assert!(!exists, "{rel}"),
                Found::NotLooked => {}
            }
        }
    }

    #[test]
    fn a_removed_cwd_is_named_for_the_policy_but_no_walk_starts_there() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().canonicalize().unwrap().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let mut child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg("cd \"$1\" && rmdir \"$1\" && echo ready && exec sleep 30")
            .arg("sh")
            .arg(&gone)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let cwd = ProcessCwd::of(child.id() as libc::pid_t);
        let named = cwd.get();
        let base = cwd.base();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(line.trim(), "ready");
        let mut want = gone.into_os_string();
        want.push(" (deleted)");
        assert_eq!(named, Some(PathBuf::from(want)));
        assert_eq!(base, None);
        // A process that is gone: nothing to name.
        assert_eq!(ProcessCwd::of(child.id() as libc::pid_t).get(), None);
    }

    #[test]
    fn relative_paths_start_at_the_callers_cwd() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            resolve(me(), Base::Cwd, b"a/b", true),
            Resolution::Path(cwd.join("a/b"))
        );
    }

    /// The quick walk (the parent opened at once) answers exactly as the walk one
    /// component at a time, on every path over a tree of directories, files, symlinks
    /// (relative, absolute, dangling, to directories, in loops) and `..`.
    #[test]
    fn the_quick_walk_answers_as_the_walk_one_by_one() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["a", "a/b", "a/b/c", "e"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        for f in ["a/f", "a/b/g", "e/h"] {
            std::fs::write(root.join(f), "").unwrap();
        }
        symlink("b", root.join("a/lb")).unwrap();
        symlink("../e", root.join("a/b/le")).unwrap();
        symlink(root.join("a/b/c"), root.join("abs")).unwrap();
        symlink("gone", root.join("a/dangling")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        symlink("f", root.join("a/lf")).unwrap();
        let names = [
            "a", "b", "c", "e", "f", "g", "h", "lb", "le", "abs", "dangling", "loop1", "lf", "..",
            ".", "missing",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        // `e` as the session's settled root: its parent (the tree's top) and ancestors are
        // settled, `a/b/c` lies three unsettled directories below, so both the shortcut
        // for a settled parent and the quick walk are exercised. (The roots are set once
        // per process: only this test sets them, and it settles no other test's paths.)
        settle_roots(&[root.join("e")]);
        // Paths that detour through /proc before reaching the tree.
        let detours = ["", "", "/proc/sys/../..", "/proc/1/../..", "/proc/self/.."];
        for _ in 0..4000 {
            let len = 1 + next(5);
            let rel: Vec<&str> = (0..len).map(|_| names[next(names.len())]).collect();
            let rel = rel.join("/");
            // From `/` (absolute), or from the tree's `a/b` as a cwd (relative).
            let (start, path) = match next(3) {
                0 => (root.join("a/b"), rel.clone()),
                _ => {
                    let detour = detours[next(detours.len())];
                    (
                        PathBuf::from("/"),
                        format!("{detour}{}/{rel}", root.display()),
                    )
                }
            };
            let path = path.into_bytes();
            // Every other path with the notification loop's known directories on (the
            // tree does not change, so they answer as a fresh look does).
            let known = next(2) == 0;
            known_dirs_for_call(known.then(|| (1, std::time::Instant::now())));
            for follow in [true, false] {
                let quick = walk(me(), start.clone(), &path, follow);
                let slow = walk_one_by_one(me(), start.clone(), &components(&path), follow, 0);
                let same = match (&quick.0, &slow.0) {
                    // The reason text names the component each walk stopped at.
                    (Resolution::Unresolvable(_), Resolution::Unresolvable(_)) => true,
                    (q, s) => q == s,
                };
                assert!(
                    same && quick.1 == slow.1,
                    "{} from {} (follow {follow}): quick {quick:?}, one by one {slow:?}",
                    String::from_utf8_lossy(&path),
                    start.display()
                );
            }
        }
        known_dirs_for_call(None);
    }

    #[test]
    fn a_known_directory_serves_its_epoch_for_a_millisecond_only() {
        use std::os::unix::fs::symlink;
        use std::time::{Duration, Instant};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["w", "w/a", "w/a/b", "elsewhere"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        let path = root.join("w/a/b/x");
        let resolve = || walk(me(), PathBuf::from("/"), path.as_os_str().as_bytes(), true).0;
        let at = Instant::now();
        known_dirs_for_call(Some((7, at)));
        assert_eq!(resolve(), Resolution::Path(path.clone()));
        // `w/a/b` becomes a symlink out behind the loop's back (the host's rename: the
        // sandbox's would have changed the epoch).
        std::fs::rename(root.join("w/a/b"), root.join("w/a/old")).unwrap();
        symlink(root.join("elsewhere"), root.join("w/a/b")).unwrap();
        let moved = Resolution::Path(root.join("elsewhere/x"));
        // Within the epoch and the millisecond the known directory answers, and says so
        // (the loop works any answer but a plain CONTINUE out again without it).
        known_dirs_for_call(Some((7, at + Duration::from_micros(500))));
        assert!(!known_dir_served());
        assert_eq!(resolve(), Resolution::Path(path.clone()));
        assert!(known_dir_served());
        // A millisecond later it is looked at again.
        known_dirs_for_call(Some((7, at + Duration::from_millis(2))));
        assert_eq!(resolve(), moved);
        assert!(
            !known_dir_served(),
            "a directory opened for the call served it"
        );
        // Known again from that look; a new epoch (a rename or removal seen) forgets it.
        std::fs::remove_file(root.join("w/a/b")).unwrap();
        std::fs::rename(root.join("w/a/old"), root.join("w/a/b")).unwrap();
        let later = at + Duration::from_millis(3);
        known_dirs_for_call(Some((8, later)));
        assert_eq!(resolve(), Resolution::Path(path.clone()));
        std::fs::rename(root.join("w/a/b"), root.join("w/a/old")).unwrap();
        symlink(root.join("elsewhere"), root.join("w/a/b")).unwrap();
        known_dirs_for_call(Some((9, later)));
        assert_eq!(resolve(), moved);
        // Off (a change in flight, decisions logged, another thread): nothing is kept.
        known_dirs_for_call(None);
        std::fs::remove_file(root.join("w/a/b")).unwrap();
        std::fs::rename(root.join("w/a/old"), root.join("w/a/b")).unwrap();
        assert_eq!(resolve(), Resolution::Path(path.clone()));
        std::fs::rename(root.join("w/a/b"), root.join("w/a/old")).unwrap();
        symlink(root.join("elsewhere"), root.join("w/a/b")).unwrap();
        assert_eq!(resolve(), moved);
        let known = std::thread::spawn(known_dirs_on);
        assert!(
            !known.join().unwrap(),
            "known directories on another thread"
        );
    }
}

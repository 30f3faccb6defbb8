//! The write check: every notified call that changes the filesystem.
//!
//! Calls Landlock bounds (opens for writing, creates, renames, links, unlinks, mkdir,
//! rmdir, symlink, mknod, truncate) are answered `CONTINUE` inside the fence — if the target
//! swaps the path after the check, Landlock still refuses the write outside. Outside the
//! fence, and on protected paths inside it, the call is a kernel-fence event (red): it is
//! put to the gate, never auto-approved, and on a person's Yes carried out by the
//! supervisor from the checked path ([`super::approved`]); a system root or a block device
//! is refused outright (absolute rules). Metadata calls (chmod, chown, utimes, xattrs), which
//! Landlock does not govern, are never `CONTINUE`d on something the target can swap: inside
//! a read-only mount view the kernel refuses them outside (EROFS) so `CONTINUE` is bounded;
//! otherwise, and always for descriptor-based calls (a descriptor inherited from outside the
//! sandbox sits on a writable mount), the supervisor performs them on the checked object
//! with the target's credentials ([`super::metadata`]).

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::approved::{self, Operation};
use super::blocked_reason::BlockedReason;
use super::fence::{Fence, parent_of, same_path};
use super::listener::{Notification, Response};
use super::metadata::{self, MetadataOp};
use super::path_resolve::{self, Base, Caller, Found, ProcessCwd, Resolution};
use super::question::{Ask, OnYes, Outcome};
use super::target_memory::{MemoryError, PATH_MAX, TargetMemory};
use crate::escape::bytes_for_terminal;
use crate::gate::decide::Subject;
use crate::gate::{EventKind, Level};

/// One path argument of a call.
#[derive(Debug, Clone, Copy)]
pub struct PathArg {
    pub base: Base,
    pub addr: u64,
    pub follow_last: bool,
    /// `AT_EMPTY_PATH`: an empty string names the base descriptor itself.
    pub empty_is_base: bool,
}

impl PathArg {
    fn at(dirfd: u64, addr: u64, follow_last: bool) -> PathArg {
        PathArg {
            base: Base::from_dirfd(dirfd),
            addr,
            follow_last,
            empty_is_base: false,
        }
    }
    fn cwd(addr: u64, follow_last: bool) -> PathArg {
        PathArg::at(libc::AT_FDCWD as u64, addr, follow_last)
    }
}

/// What a notified filesystem call does, decoded from its number and registers.
#[derive(Debug, Clone)]
pub enum FsCall {
    /// A write Landlock bounds; every path must be inside. `source` is a hardlink source.
    Bounded {
        op: &'static str,
        paths: Vec<PathArg>,
        link_source: Option<PathArg>,
    },
    /// An `open`/`openat` creating a file with a set-user-ID or set-group-ID bit (the mode
    /// is a register: refused from the value the kernel will use).
    SetIdCreate { path: PathArg },
    /// A metadata change on a path.
    MetadataPath { path: PathArg, op: MetadataOp },
    /// A metadata change on a descriptor.
    MetadataFd { fd: i32, op: MetadataOp },
    /// `truncate(2)`: bounded by Landlock from ABI 3, else performed by the supervisor.
    Truncate { path: PathArg, length: u64 },
    /// A change through a descriptor that Landlock does not govern for descriptors opened
    /// before the sandbox's ruleset (its standard streams, `--pass-fd`): `ftruncate`,
    /// `fallocate`, and `fcntl(F_SETFL)` without `O_APPEND`.
    DescriptorWrite { fd: i32, op: DescriptorOp },
}

/// A call of [`FsCall::DescriptorWrite`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DescriptorOp {
    Truncate { length: u64 },
    Allocate { mode: i32, offset: u64, len: u64 },
    SetFlags { flags: u64 },
}

impl DescriptorOp {
    /// Whether the call may change what a file opened for appending already holds, or
    /// let a later write do so: cutting it, punching, zeroing, collapsing or shifting a
    /// range, or clearing `O_APPEND`. Growing a file (`fallocate` with mode 0 or
    /// `FALLOC_FL_KEEP_SIZE`) keeps what is there.
    fn rewrites(self) -> bool {
        match self {
            DescriptorOp::Truncate { .. } => true,
            DescriptorOp::Allocate { mode, .. } => mode & !libc::FALLOC_FL_KEEP_SIZE != 0,
            DescriptorOp::SetFlags { flags } => flags & libc::O_APPEND as u64 == 0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            DescriptorOp::Truncate { .. } => "truncate",
            DescriptorOp::Allocate { .. } => "fallocate",
            DescriptorOp::SetFlags { .. } => "clearing O_APPEND",
        }
    }
}

const AT_EMPTY_PATH: u64 = libc::AT_EMPTY_PATH as u64;
const AT_SYMLINK_NOFOLLOW: u64 = libc::AT_SYMLINK_NOFOLLOW as u64;
const AT_SYMLINK_FOLLOW: u64 = libc::AT_SYMLINK_FOLLOW as u64;

fn open_follows(flags: u64) -> bool {
    let f = flags as i32;
    f & libc::O_NOFOLLOW == 0 && !(f & libc::O_CREAT != 0 && f & libc::O_EXCL != 0)
}

/// Set once a person approved a write to a protected path in a session with a mount view:
/// what it made has no read-only mount, so from then on every write inside the fence is
/// carried out by the supervisor (as without a mount view), never `CONTINUE`.
static PROTECTED_PATH_UNBOUND: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Records that a protected path was written with a person's approval.
pub fn protected_path_approved() {
    PROTECTED_PATH_UNBOUND.store(true, std::sync::atomic::Ordering::Release);
}

fn protected_path_unbound() -> bool {
    PROTECTED_PATH_UNBOUND.load(std::sync::atomic::Ordering::Acquire)
}

/// The open file a link's source names through a descriptor (`/proc/self/fd/N` followed,
/// or the descriptor itself with `AT_EMPTY_PATH`) when it is an unnamed regular file made
/// in a writable root: made with `O_TMPFILE` and not yet linked (the kernel links no other
/// file without a name), in a folder the sandbox may write (its link shows
/// `FOLDER/#INODE (deleted)`; one made outside and handed in, as stdin or over a socket,
/// is not the sandbox's to name). Fetched from the caller (`pidfd_getfd`), so what is
/// checked is what gets linked.
fn unnamed_object(
    fence: &Fence,
    caller: Caller,
    arg: &PathArg,
    raw: &[u8],
    resolution: &Resolution,
) -> Option<OwnedFd> {
    let fd: i32 = match (resolution, arg.base) {
        (Resolution::Descriptor(link), _) => link.file_name()?.to_str()?.parse().ok()?,
        (_, Base::Fd(fd)) if raw.is_empty() && arg.empty_is_base => fd,
        _ => return None,
    };
    let object = super::pidfd::open(caller)
        .and_then(|p| super::pidfd::get_fd(&p, fd))
        .ok()?;
    let st = nix::sys::stat::fstat(&object).ok()?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_nlink != 0 {
        return None;
    }
    // Where it was made, as the caller's own link shows it (read after the fetch: a
    // descriptor swapped in between shows another file, which is then not linked).
    let link = format!("/proc/{}/fd/{fd}", caller.tid);
    let shown = std::fs::read_link(&link).ok()?;
    let now = nix::sys::stat::stat(link.as_str()).ok()?;
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
        return None;
    }
    let name = shown.as_os_str().as_bytes().strip_suffix(b" (deleted)")?;
    let folder = Path::new(std::ffi::OsStr::from_bytes(name)).parent()?;
    (folder.is_absolute() && fence.root_of(folder).is_some()).then_some(object)
}

/// Why a call through a descriptor of a file with other hard links is refused.
const SHARED_OBJECT: &str = concat!(
    "change through a descriptor of a file with other hard links, ",
    "which may lie outside the worktree"
);

/// Why a write or metadata change by path goes to a private copy (for the log).
const PRIVATE_COPY: &str = concat!(
    "a file with other hard links, which may lie outside the fence, ",
    "is written or changed as a private copy"
);

/// The flags of an open call (`open`, `openat`; `creat` is `O_CREAT|O_WRONLY|O_TRUNC`).
fn open_flags(n: &Notification) -> Option<i32> {
    match n.nr {
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => Some(n.args[1] as i32),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => Some(libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC),
        libc::SYS_openat => Some(n.args[2] as i32),
        _ => None,
    }
}

/// Whether `n` is an open that fails on an existing name (`O_CREAT|O_EXCL`).
fn exclusive_create(n: &Notification) -> bool {
    open_flags(n).is_some_and(|f| f & libc::O_CREAT != 0 && f & libc::O_EXCL != 0)
}

/// Whether `n` is an open that makes an unnamed file in a folder (`O_TMPFILE`).
fn unnamed_file(n: &Notification) -> bool {
    open_flags(n).is_some_and(|f| f & libc::O_TMPFILE == libc::O_TMPFILE)
}

/// Whether `n` is an open that truncates what it opens (`O_TRUNC`, `creat`).
fn truncating_open(n: &Notification) -> bool {
    open_flags(n).is_some_and(|f| f & libc::O_TRUNC != 0)
}

/// Whether call `n` makes a new name (a file, directory, node or link, or a rename's
/// destination), judged from its number and registers (which the target cannot change
/// after the check). An `O_TMPFILE` open makes an unnamed file.
fn makes_a_name(n: &Notification) -> bool {
    let creating_open = |flags: u64| {
        let f = flags as i32;
        f & libc::O_CREAT != 0 && f & libc::O_TMPFILE != libc::O_TMPFILE
    };
    match n.nr {
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => creating_open(n.args[1]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat
        | libc::SYS_rename
        | libc::SYS_link
        | libc::SYS_mkdir
        | libc::SYS_symlink
        | libc::SYS_mknod => true,
        libc::SYS_openat => creating_open(n.args[2]),
        libc::SYS_renameat
        | libc::SYS_renameat2
        | libc::SYS_linkat
        | libc::SYS_mkdirat
        | libc::SYS_symlinkat
        | libc::SYS_mknodat => true,
        _ => false,
    }
}

/// Whether the kernel, given a call on `paths` (and a link's `source`), both resolved,
/// agrees to it exactly where fence would and Landlock bounds it however its path is
/// swapped: every name lies beneath a bounded directory ([`Fence::bounded`]), below
/// Landlock ABI 2 (which refuses every move or link across directories) all in one, and
/// what is moved or linked is no unix socket (the sandbox is granted no right to make
/// socket files: the supervisor makes them).
/// `is_socket` answers for the object moved (learned by an earlier look, or
/// [`super::view::is_socket`]).
fn bounded_by_landlock(
    fence: &Fence,
    paths: &[PathBuf],
    source: Option<&Path>,
    is_socket: impl Fn(&Path) -> bool,
) -> bool {
    let all = || paths.iter().map(PathBuf::as_path).chain(source);
    if paths.is_empty() || !all().all(|p| fence.beneath_bounded(p)) {
        return false;
    }
    let same_directory = || {
        let first = parent_of(&paths[0]);
        all().all(|p| match (parent_of(p), first) {
            (Some(a), Some(b)) => same_path(a, b),
            (a, b) => a == b,
        })
    };
    // A move into a git directory from outside one, or out of one: carried out, so that
    // the object moved is the one judged ([`approved::Moved`]): Landlock does not look into a
    // folder moved in, which could bring symlinks where the user's git follows them.
    let moves = paths.len() > 1 || source.is_some();
    if moves
        && all().any(|p| fence.in_git_directory(p))
        && !all().all(|p| fence.in_git_directory(p))
    {
        return false;
    }
    let moved = match (source, paths) {
        (Some(source), _) => Some(source),
        (None, [from, _]) => Some(from.as_path()),
        _ => None,
    };
    (fence.landlock_refer || same_directory()) && !moved.is_some_and(is_socket)
}

/// What a write check learned of one path's object: whether it is a folder, and whether it
/// is a symlink (its target); `None` where the check did not look.
#[derive(Default)]
struct Facts {
    dir: Option<bool>,
    link: Option<Option<PathBuf>>,
    /// Whether a unix socket file (a hint: see [`super::view::is_socket`]).
    socket: Option<bool>,
}

impl Facts {
    /// Whether the pinned object is as the check saw its path's (nothing seen: anything).
    fn hold_for(&self, pin: &super::view::Pinned) -> bool {
        self.dir.is_none_or(|d| d == pin.is_dir)
            && self.link.as_ref().is_none_or(|l| *l == pin.target)
    }
}

/// The [`Facts`] a write check learned, by path, and the target of a symlink it made, as
/// read from the caller's memory for the check (the caller may rewrite it after).
#[derive(Default)]
struct Seen {
    facts: Vec<(PathBuf, Facts)>,
    target: Option<Vec<u8>>,
}

/// Whether a name a carried-out move makes lies where the sandbox may not put an object
/// itself, so that the object the move brought must be the one the check judged: a held
/// folder of a rule base (`.git`, the worktree's root), or anywhere in a git directory
/// (its folders are granted whole but without the right to make symlinks).
fn guarded(fence: &Fence, p: &Path) -> bool {
    fence.has_rule_base(p) && (!fence.beneath_bounded(p) || fence.in_git_directory(p))
}

impl Seen {
    /// Whether the check saw a directory at `p`, if it looked.
    fn dir_of(&self, p: &Path) -> Option<bool> {
        self.facts
            .iter()
            .find(|(q, _)| q == p)
            .and_then(|(_, f)| f.dir)
    }

    /// Whether the check saw a unix socket file at `p`, if it looked.
    fn socket_of(&self, p: &Path) -> Option<bool> {
        self.facts
            .iter()
            .find(|(q, _)| q == p)
            .and_then(|(_, f)| f.socket)
    }

    fn note(&mut self, p: &Path, f: impl FnOnce(&mut Facts)) {
        match self.facts.iter_mut().find(|(q, _)| q == p) {
            Some((_, facts)) => f(facts),
            None => {
                let mut facts = Facts::default();
                f(&mut facts);
                self.facts.push((p.to_path_buf(), facts));
            }
        }
    }

    /// The object at `p` pinned, when it is as seen; `Err` when it is not (another object
    /// was swapped in after the check), `Ok(Err(errno))` when nothing can be pinned there
    /// (missing: the errno the kernel would answer).
    fn pin(&self, p: &Path) -> Result<Result<super::view::Pinned, i32>, ()> {
        let facts = self.facts.iter().find(|(q, _)| q == p).map(|(_, f)| f);
        match super::view::pin(p) {
            Ok(pin) if facts.is_none_or(|f| f.hold_for(&pin)) => Ok(Ok(pin)),
            Ok(_) => Err(()),
            // Nothing there: as seen only if the check saw nothing either.
            Err(e)
                if facts
                    .is_none_or(|f| f.dir != Some(true) && !matches!(f.link, Some(Some(_)))) =>
            {
                Ok(Err(e.raw_os_error().unwrap_or(libc::ENOENT)))
            }
            Err(_) => Err(()),
        }
    }

    /// `op`, a rename or link carried out by the supervisor, with the objects it moves
    /// pinned ([`approved::Moved`]); `held` says whether a name lies in a folder the
    /// sandbox may not change.
    fn pin_moved(&self, op: Operation, held: impl Fn(&Path) -> bool) -> Operation {
        const RENAME_EXCHANGE: u32 = 2;
        let changed = || approved::Moved {
            changed: true,
            ..approved::Moved::default()
        };
        match op {
            Operation::Rename {
                from,
                to,
                flags,
                moved: _,
            } => {
                let exchanged = if flags & RENAME_EXCHANGE != 0 {
                    self.pin(&to).map(Some)
                } else {
                    Ok(None)
                };
                let moved = match (self.pin(&from), exchanged) {
                    (Ok(source), Ok(exchanged)) => {
                        let absent =
                            source.as_ref().err().copied().or_else(|| {
                                exchanged.as_ref().and_then(|e| e.as_ref().err().copied())
                            });
                        approved::Moved {
                            source: source.ok(),
                            exchanged: exchanged.and_then(Result::ok),
                            required: true,
                            absent,
                            changed: false,
                            held_to: held(&to),
                            held_from: held(&from),
                            back_to_source: !held(&from),
                        }
                    }
                    _ => changed(),
                };
                Operation::Rename {
                    from,
                    to,
                    flags,
                    moved,
                }
            }
            Operation::Link { from, to, moved: _ } => {
                let moved = match self.pin(&from) {
                    Ok(source) => approved::Moved {
                        absent: source.as_ref().err().copied(),
                        source: source.ok(),
                        exchanged: None,
                        required: true,
                        changed: false,
                        held_to: held(&to),
                        held_from: false,
                        back_to_source: false,
                    },
                    Err(()) => changed(),
                };
                Operation::Link { from, to, moved }
            }
            // Made from the target the check judged, not one read again.
            Operation::Symlink { target, path } => Operation::Symlink {
                target: self.target.clone().unwrap_or(target),
                path,
            },
            other => other,
        }
    }
}

/// Whether `op` only flips the owner's execute bit of a worktree's `.git/config` (or puts it
/// back): `git init` probes whether the file system keeps modes that way, and records the
/// answer (`core.filemode`). A config is read, never run, and no other bit changes (who may
/// write it stays as it was).
fn only_owner_execute_of_git_config(fence: &Fence, op: &MetadataOp, target: &Path) -> bool {
    let MetadataOp::Chmod { mode } = op else {
        return false;
    };
    let Some(now) = metadata::mode_of(target) else {
        return false;
    };
    let config = fence
        .bases()
        .any(|base| target == base.join(".git/config").as_path());
    config && (mode ^ now) & 0o7777 & !libc::S_IXUSR == 0
}

/// Whether `op` on `target` (resolved as the call resolves it) would leave it as it is: a
/// `chmod` to the permission bits it has, a `chown` to the owner and group it has (-1
/// keeps either) of something without set-user or set-group-ID bits, which any `chown`
/// clears. A symbolic link is never taken for its target.
fn changes_nothing(op: &MetadataOp, target: &Path) -> bool {
    let Ok((mode, uid, gid)) = super::view::mode_and_owner(target) else {
        return false;
    };
    if mode & libc::S_IFMT == libc::S_IFLNK {
        return false;
    }
    match *op {
        // A set-group-ID bit a chmod would drop (its caller not in the group) is not
        // taken for unchanged: neither set-ID bit is.
        MetadataOp::Chmod { mode: wanted } => {
            wanted & 0o7777 == mode & 0o7777 && mode & (libc::S_ISUID | libc::S_ISGID) == 0
        }
        MetadataOp::Chown {
            uid: new_uid,
            gid: new_gid,
        } => {
            mode & (libc::S_ISUID | libc::S_ISGID) == 0
                && (new_uid == u32::MAX || new_uid == uid)
                && (new_gid == u32::MAX || new_gid == gid)
        }
        _ => false,
    }
}

/// How a path's last name is spelled, where that decides the kernel's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastName {
    Plain,
    /// `name/`: it must be a directory.
    Slash,
    /// `name/.` or `.`.
    Dot,
    /// `name/..` or `..`.
    DotDot,
}

impl LastName {
    fn of(raw: &[u8]) -> LastName {
        let last = raw.rsplit(|b| *b == b'/').next().unwrap_or_default();
        match last {
            b"." => LastName::Dot,
            b".." => LastName::DotDot,
            b"" if raw.len() > 1 => LastName::Slash,
            _ => LastName::Plain,
        }
    }
}

/// Whether `path` names an entry owned by another account than the caller's filesystem
/// uid (a missing entry, or one whose owner cannot be read, is not).
fn another_accounts_entry(path: &Path, caller: Caller) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    super::acting::TargetCredentials::of_thread(caller.tid)
        .map_or(true, |creds| creds.fsuid != meta.uid())
}

/// The kernel's answer to a call whose path the kernel refuses by its spelling before it
/// asks for any right: a trailing slash on something that is not a directory, or on a name
/// it would make as anything else (`cp f newdir/` with `newdir` missing: `open("newdir/",
/// O_CREAT)` is EISDIR; `mv f nd/` ENOTDIR; `ln f l/` ENOENT), and a last name `.` or `..`
/// (`open("new/.", O_CREAT)` is ENOENT, `rmdir("d/.")` EINVAL, `rename(f, "d/..")`
/// EBUSY). The resolved paths drop those spellings (`d/..` is `d`'s parent), so a call
/// carried out from them would act where the kernel refuses: the call fails as it would
/// bare, and fence neither asks nor says anything. `None` where the spelling changes
/// nothing (`mkdir d/`, `rmdir d/`, a directory moved, an unnamed file's folder). An
/// error widens nothing.
fn path_spelling_failure(
    op: &str,
    n: &Notification,
    spelled: &[LastName],
    resolved: &[PathBuf],
) -> Option<i32> {
    if spelled.iter().all(|s| *s == LastName::Plain) {
        return None;
    }
    let kind = |p: &PathBuf| super::view::entry_kind(p).ok();
    // Missing, a directory, or anything else.
    let by_kind = |p: &PathBuf, dir: Option<i32>| match kind(p)? {
        None => Some(libc::ENOENT),
        Some(true) => dir,
        Some(false) => Some(libc::ENOTDIR),
    };
    let remove_dir = n.nr == libc::SYS_unlinkat && n.args[2] & libc::AT_REMOVEDIR as u64 != 0;
    // A last name `.` or `..`: the folder it lies in must be one, then each call has its
    // own answer for such a name.
    if let Some((i, dots)) = spelled
        .iter()
        .enumerate()
        .find(|(_, s)| matches!(s, LastName::Dot | LastName::DotDot))
    {
        let on_dir = match (op, *dots) {
            ("open" | "creat", _) => {
                let flags = open_flags(n)?;
                if flags & libc::O_TMPFILE == libc::O_TMPFILE {
                    return None;
                }
                libc::EISDIR
            }
            ("unlink", LastName::Dot) if remove_dir => libc::EINVAL,
            ("unlink", _) if remove_dir => libc::ENOTEMPTY,
            ("rmdir", LastName::Dot) => libc::EINVAL,
            ("rmdir", _) => libc::ENOTEMPTY,
            ("unlink", _) => libc::EISDIR,
            ("rename", _) => libc::EBUSY,
            ("mkdir" | "link" | "symlink" | "mknod", _) => libc::EEXIST,
            _ => return None,
        };
        return by_kind(resolved.get(i)?, Some(on_dir));
    }
    match (op, resolved) {
        ("open" | "creat", [p]) => {
            let flags = open_flags(n)?;
            if flags & libc::O_TMPFILE == libc::O_TMPFILE {
                None
            } else if flags & libc::O_CREAT != 0 {
                Some(libc::EISDIR)
            } else {
                by_kind(p, Some(libc::EISDIR))
            }
        }
        ("unlink", [p]) if !remove_dir => by_kind(p, Some(libc::EISDIR)),
        ("link" | "symlink" | "mknod", [p]) => Some(match kind(p)? {
            Some(_) => libc::EEXIST,
            None => libc::ENOENT,
        }),
        ("rename", [from, _]) => by_kind(from, None),
        _ => None,
    }
}

/// Decodes a filesystem call; `None` for calls this check does not own.
pub fn decode(n: &Notification) -> Option<FsCall> {
    let a = n.args;
    let bounded = |op, paths| {
        Some(FsCall::Bounded {
            op,
            paths,
            link_source: None,
        })
    };
    let flagged = |dirfd: u64, addr: u64, flags: u64| {
        let mut p = PathArg::at(dirfd, addr, flags & AT_SYMLINK_NOFOLLOW == 0);
        p.empty_is_base = flags & AT_EMPTY_PATH != 0;
        p
    };
    let setid_create = |flags: u64, mode: u64| {
        let creates = flags & libc::O_CREAT as u64 != 0
            || flags & libc::O_TMPFILE as u64 == libc::O_TMPFILE as u64;
        creates && mode & (libc::S_ISUID | libc::S_ISGID) as u64 != 0
    };
    match n.nr {
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open if setid_create(a[1], a[2]) => Some(FsCall::SetIdCreate {
            path: PathArg::cwd(a[0], open_follows(a[1])),
        }),
        libc::SYS_openat if setid_create(a[2], a[3]) => Some(FsCall::SetIdCreate {
            path: PathArg::at(a[0], a[1], open_follows(a[2])),
        }),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => bounded("open", vec![PathArg::cwd(a[0], open_follows(a[1]))]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => bounded("creat", vec![PathArg::cwd(a[0], true)]),
        libc::SYS_openat => bounded("open", vec![PathArg::at(a[0], a[1], open_follows(a[2]))]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rename => bounded(
            "rename",
            vec![PathArg::cwd(a[0], false), PathArg::cwd(a[1], false)],
        ),
        libc::SYS_renameat | libc::SYS_renameat2 => bounded(
            "rename",
            vec![
                PathArg::at(a[0], a[1], false),
                PathArg::at(a[2], a[3], false),
            ],
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_link => Some(FsCall::Bounded {
            op: "link",
            paths: vec![PathArg::cwd(a[1], false)],
            link_source: Some(PathArg::cwd(a[0], false)),
        }),
        libc::SYS_linkat => {
            let mut source = PathArg::at(a[0], a[1], a[4] & AT_SYMLINK_FOLLOW != 0);
            source.empty_is_base = a[4] & AT_EMPTY_PATH != 0;
            Some(FsCall::Bounded {
                op: "link",
                paths: vec![PathArg::at(a[2], a[3], false)],
                link_source: Some(source),
            })
        }
        #[cfg(target_arch = "x86_64")]
        libc::SYS_unlink => bounded("unlink", vec![PathArg::cwd(a[0], false)]),
        libc::SYS_unlinkat => bounded("unlink", vec![PathArg::at(a[0], a[1], false)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mkdir => bounded("mkdir", vec![PathArg::cwd(a[0], false)]),
        libc::SYS_mkdirat => bounded("mkdir", vec![PathArg::at(a[0], a[1], false)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rmdir => bounded("rmdir", vec![PathArg::cwd(a[0], false)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_symlink => bounded("symlink", vec![PathArg::cwd(a[1], false)]),
        libc::SYS_symlinkat => bounded("symlink", vec![PathArg::at(a[1], a[2], false)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mknod => bounded("mknod", vec![PathArg::cwd(a[0], false)]),
        libc::SYS_mknodat => bounded("mknod", vec![PathArg::at(a[0], a[1], false)]),
        libc::SYS_truncate => Some(FsCall::Truncate {
            path: PathArg::cwd(a[0], true),
            length: a[1],
        }),
        libc::SYS_ftruncate => Some(FsCall::DescriptorWrite {
            fd: a[0] as i32,
            op: DescriptorOp::Truncate { length: a[1] },
        }),
        libc::SYS_fallocate => Some(FsCall::DescriptorWrite {
            fd: a[0] as i32,
            op: DescriptorOp::Allocate {
                mode: a[1] as i32,
                offset: a[2],
                len: a[3],
            },
        }),
        libc::SYS_fcntl if a[1] as i32 == libc::F_SETFL => Some(FsCall::DescriptorWrite {
            fd: a[0] as i32,
            op: DescriptorOp::SetFlags { flags: a[2] },
        }),

        #[cfg(target_arch = "x86_64")]
        libc::SYS_chmod => Some(FsCall::MetadataPath {
            path: PathArg::cwd(a[0], true),
            op: MetadataOp::Chmod { mode: a[1] as u32 },
        }),
        libc::SYS_fchmodat => Some(FsCall::MetadataPath {
            path: PathArg::at(a[0], a[1], true),
            op: MetadataOp::Chmod { mode: a[2] as u32 },
        }),
        libc::SYS_fchmodat2 => Some(FsCall::MetadataPath {
            path: flagged(a[0], a[1], a[3]),
            op: MetadataOp::Chmod { mode: a[2] as u32 },
        }),
        libc::SYS_fchmod => Some(FsCall::MetadataFd {
            fd: a[0] as i32,
            op: MetadataOp::Chmod { mode: a[1] as u32 },
        }),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chown => Some(FsCall::MetadataPath {
            path: PathArg::cwd(a[0], true),
            op: MetadataOp::Chown {
                uid: a[1] as u32,
                gid: a[2] as u32,
            },
        }),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_lchown => Some(FsCall::MetadataPath {
            path: PathArg::cwd(a[0], false),
            op: MetadataOp::Chown {
                uid: a[1] as u32,
                gid: a[2] as u32,
            },
        }),
        libc::SYS_fchownat => Some(FsCall::MetadataPath {
            path: flagged(a[0], a[1], a[4]),
            op: MetadataOp::Chown {
                uid: a[2] as u32,
                gid: a[3] as u32,
            },
        }),
        libc::SYS_fchown => Some(FsCall::MetadataFd {
            fd: a[0] as i32,
            op: MetadataOp::Chown {
                uid: a[1] as u32,
                gid: a[2] as u32,
            },
        }),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utime => Some(FsCall::MetadataPath {
            path: PathArg::cwd(a[0], true),
            op: MetadataOp::Utime { times_addr: a[1] },
        }),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utimes => Some(FsCall::MetadataPath {
            path: PathArg::cwd(a[0], true),
            op: MetadataOp::Utimes { times_addr: a[1] },
        }),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_futimesat => Some(FsCall::MetadataPath {
            path: PathArg::at(a[0], a[1], true),
            op: MetadataOp::Utimes { times_addr: a[2] },
        }),
        libc::SYS_utimensat => {
            let op = MetadataOp::Utimensat { times_addr: a[2] };
            if a[1] == 0 {
                Some(FsCall::MetadataFd {
                    fd: a[0] as i32,
                    op,
                })
            } else {
                Some(FsCall::MetadataPath {
                    path: flagged(a[0], a[1], a[3]),
                    op,
                })
            }
        }
        libc::SYS_setxattr | libc::SYS_lsetxattr => Some(FsCall::MetadataPath {
            path: PathArg::cwd(a[0], n.nr == libc::SYS_setxattr),
            op: MetadataOp::SetXattr {
                name_addr: a[1],
                value_addr: a[2],
                size: a[3],
                flags: a[4] as i32,
            },
        }),
        libc::SYS_fsetxattr => Some(FsCall::MetadataFd {
            fd: a[0] as i32,
            op: MetadataOp::SetXattr {
                name_addr: a[1],
                value_addr: a[2],
                size: a[3],
                flags: a[4] as i32,
            },
        }),
        libc::SYS_removexattr | libc::SYS_lremovexattr => Some(FsCall::MetadataPath {
            path: PathArg::cwd(a[0], n.nr == libc::SYS_removexattr),
            op: MetadataOp::RemoveXattr { name_addr: a[1] },
        }),
        libc::SYS_fremovexattr => Some(FsCall::MetadataFd {
            fd: a[0] as i32,
            op: MetadataOp::RemoveXattr { name_addr: a[1] },
        }),
        // setxattrat/removexattrat (6.13): their arguments live in a struct; refused below.
        463 | 466 => Some(FsCall::MetadataPath {
            path: flagged(a[0], a[1], a[2]),
            op: MetadataOp::Unsupported,
        }),
        _ => None,
    }
}

fn errno_of(e: &MemoryError) -> i32 {
    match e {
        MemoryError::TooLong(_) => libc::ENAMETOOLONG,
        _ => libc::EFAULT,
    }
}

/// Reads and resolves one path argument.
fn resolve_arg(
    mem: &TargetMemory<'_>,
    caller: Caller,
    cwd: &ProcessCwd,
    arg: &PathArg,
) -> Result<(Vec<u8>, Resolution), MemoryError> {
    resolve_arg_found(mem, caller, cwd, arg).map(|(raw, resolution, _)| (raw, resolution))
}

/// [`resolve_arg`], and whether the walk found what the path names.
fn resolve_arg_found(
    mem: &TargetMemory<'_>,
    caller: Caller,
    cwd: &ProcessCwd,
    arg: &PathArg,
) -> Result<(Vec<u8>, Resolution, Found), MemoryError> {
    let raw = mem.c_string(arg.addr, PATH_MAX)?;
    let (resolution, found) = if raw.is_empty() && !arg.empty_is_base {
        (Resolution::Fails(libc::ENOENT), Found::NotLooked)
    } else {
        let relative = raw.first() != Some(&b'/') && matches!(arg.base, Base::Cwd);
        let known = relative.then(|| cwd.base()).flatten();
        match (known, cwd.dir()) {
            (Some(known), Some(dir)) => {
                path_resolve::resolve_found_from(caller, known, dir, &raw, arg.follow_last)
            }
            _ => path_resolve::resolve_found(caller, arg.base, &raw, arg.follow_last, known),
        }
    };
    Ok((raw, resolution, found))
}

fn shown(raw: &[u8], resolution: &Resolution) -> Vec<u8> {
    match resolution {
        Resolution::Path(p) => p.as_os_str().as_bytes().to_vec(),
        Resolution::Unresolvable(_) | Resolution::Descriptor(_) | Resolution::Fails(_) => {
            raw.to_vec()
        }
    }
}

/// Settings of a process in /proc that concern it alone, which it may write for itself.
const OWN_PROCESS_KNOBS: [&str; 4] = ["coredump_filter", "oom_score_adj", "oom_adj", "comm"];

/// Whether `path` (resolved) is one of [`OWN_PROCESS_KNOBS`] of the caller's own process
/// or of one of its threads: `/proc/<tgid>/<knob>` or `/proc/<tgid>/task/<tid>/<knob>`,
/// with fence's number for the caller's thread group.
fn is_own_process_knob(path: &Path, caller: Caller) -> bool {
    let Some(rest) = path.as_os_str().as_bytes().strip_prefix(b"/proc/") else {
        return false;
    };
    let names: Vec<&[u8]> = rest.split(|c| *c == b'/').collect();
    let number = |n: &[u8]| !n.is_empty() && n.iter().all(u8::is_ascii_digit);
    let knob = match names.as_slice() {
        [pid, knob] if number(pid) => (*pid, *knob),
        [pid, b"task", tid, knob] if number(pid) && number(tid) => (*pid, *knob),
        _ => return false,
    };
    let (pid, knob) = knob;
    if !OWN_PROCESS_KNOBS.iter().any(|k| k.as_bytes() == knob) {
        return false;
    }
    caller
        .tgids()
        .is_some_and(|(tgid, _)| pid == tgid.to_string().as_bytes())
}

/// An allowed call: `response` (CONTINUE, or the result of a call the supervisor made).
pub(super) fn allowed(event: EventKind, object: Vec<u8>, response: Response) -> Outcome {
    Outcome {
        event,
        subject: Some(Subject::Path(object)),
        allowed: true,
        level: "green",
        rule: "fence.write-inside".into(),
        why: "inside the fence".into(),
        response,
        reason: None,
        ask: None,
        perform: None,
    }
}

/// A refusal nobody is asked about.
pub(super) fn refused(
    event: EventKind,
    errno: i32,
    what: &str,
    object: &[u8],
    rule: &str,
) -> Outcome {
    Outcome {
        event,
        subject: Some(Subject::Path(object.to_vec())),
        allowed: false,
        level: "red",
        rule: rule.to_string().into(),
        why: what.to_string().into(),
        response: Response::Error(errno),
        reason: Some(BlockedReason {
            what: what.to_string(),
            object: object.to_vec(),
            rule: rule.to_string(),
            answer: None,
        }),
        ask: None,
        perform: None,
    }
}

/// A kernel-fence event (red): refused unless a person says Yes, then carried out by the
/// supervisor (`on_yes`); refused outright when there is nothing to carry out, and when
/// the path lies in a system root or is a block device (absolute rules of SPEC §2: nobody
/// is asked, in any mode).
fn asked(
    event: EventKind,
    errno: i32,
    what: &str,
    object: &Path,
    rule: &str,
    on_yes: Option<Operation>,
) -> Outcome {
    let bytes = object.as_os_str().as_bytes();
    if policy::path::is_block_device(object) {
        return refused(event, errno, "write to a block device", bytes, "disk.tools");
    }
    if policy::path::is_system_root(object) {
        return refused(
            event,
            errno,
            "write to a system root",
            bytes,
            "sys.root-write",
        );
    }
    let mut outcome = refused(event, errno, what, bytes, rule);
    outcome.ask = on_yes.map(|op| Ask {
        level: Level::Red,
        rule: rule.to_string(),
        description: what.to_string(),
        on_yes: OnYes::Perform(op),
    });
    outcome
}

/// Judges one filesystem call. Inside the fence: `CONTINUE` (Landlock bounds it) or, for
/// metadata, performed by the supervisor. Outside, and on protected paths: a question; on
/// Yes the supervisor carries the call out from the checked values ([`super::approved`]).
pub fn check(
    fence: &Fence,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
    call: &FsCall,
) -> Outcome {
    check_from(fence, mem, caller, n, call, &ProcessCwd::of(caller.tid))
}

/// Whether a path call's flags word holds a flag the kernel refuses with EINVAL for that
/// call (`fchmodat2`, `fchownat`, `utimensat`: `AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH`;
/// `linkat`: `AT_SYMLINK_FOLLOW | AT_EMPTY_PATH`; `unlinkat`: `AT_REMOVEDIR`;
/// `renameat2`: `RENAME_NOREPLACE`, `RENAME_EXCHANGE` (not both), `RENAME_WHITEOUT`).
fn has_unknown_flags(n: &Notification) -> bool {
    let a = n.args;
    let at = (libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH) as u64;
    let flags32 = |v: u64| v & 0xffff_ffff;
    match n.nr {
        libc::SYS_fchmodat2 => flags32(a[3]) & !at != 0,
        libc::SYS_fchownat => flags32(a[4]) & !at != 0,
        libc::SYS_utimensat => flags32(a[3]) & !at != 0,
        libc::SYS_linkat => {
            flags32(a[4]) & !((libc::AT_SYMLINK_FOLLOW | libc::AT_EMPTY_PATH) as u64) != 0
        }
        libc::SYS_unlinkat => flags32(a[2]) & !(libc::AT_REMOVEDIR as u64) != 0,
        // RENAME_NOREPLACE 1, RENAME_EXCHANGE 2, RENAME_WHITEOUT 4; an exchange takes
        // neither of the others.
        libc::SYS_renameat2 => {
            let f = flags32(a[4]);
            f & !7 != 0 || (f & 2 != 0 && f & 5 != 0)
        }
        _ => false,
    }
}

/// [`check`], with relative paths placed against `cwd` (one kept from an earlier call:
/// see [`super::kept_thread`] for when its answer may be used).
pub fn check_from(
    fence: &Fence,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
    call: &FsCall,
    cwd: &ProcessCwd,
) -> Outcome {
    // Flags the call does not take: the kernel's EINVAL before it looks at any path (a
    // call the supervisor carries out would otherwise act as if they were not there).
    if has_unknown_flags(n) {
        return Outcome::failed(EventKind::Write, libc::EINVAL);
    }
    match call {
        FsCall::SetIdCreate { path } => {
            let raw = match resolve_arg(mem, caller, cwd, path) {
                Ok((raw, resolution)) => shown(&raw, &resolution),
                Err(e) => return Outcome::failed(EventKind::Write, errno_of(&e)),
            };
            refused(
                EventKind::Write,
                libc::EPERM,
                "file created with a set-user-ID or set-group-ID bit",
                &raw,
                "fence.setid",
            )
        }
        FsCall::Bounded {
            op,
            paths,
            link_source,
        } => {
            let event = EventKind::Write;
            let mut source: Option<PathBuf> = None;
            let mut unresolvable = false;
            // An unnamed file (`O_TMPFILE`) the link gives its first name, fetched.
            let mut unnamed: Option<OwnedFd> = None;
            if let Some(arg) = link_source {
                match resolve_arg(mem, caller, cwd, arg) {
                    Err(e) => return Outcome::failed(event, errno_of(&e)),
                    Ok((_, Resolution::Path(p))) => source = Some(p),
                    // Failed by its spelling: the kernel's own answer.
                    Ok((_, Resolution::Fails(errno))) => {
                        return Outcome::failed(event, errno);
                    }
                    // Not resolvable from outside: Landlock's REFER right bounds it.
                    Ok((raw, resolution)) => {
                        unnamed = unnamed_object(fence, caller, arg, &raw, &resolution);
                        unresolvable = true;
                    }
                }
            }
            let mut resolved: Vec<PathBuf> = Vec::with_capacity(paths.len());
            let mut spelled: Vec<LastName> = Vec::with_capacity(paths.len());
            let mut first_shown: Vec<u8> = Vec::new();
            let mut descriptor: Option<PathBuf> = None;
            let mut first_found = Found::NotLooked;
            for arg in paths {
                match resolve_arg_found(mem, caller, cwd, arg) {
                    Err(e) => return Outcome::failed(event, errno_of(&e)),
                    Ok((raw, resolution, found)) => {
                        if first_shown.is_empty() {
                            first_shown = shown(&raw, &resolution);
                            first_found = found;
                        }
                        spelled.push(LastName::of(&raw));
                        match resolution {
                            Resolution::Path(p) => resolved.push(p),
                            // A pipe behind /proc/self/fd: Landlock decides, or with no mount
                            // view the supervisor reopens it (below).
                            Resolution::Descriptor(link) => {
                                unresolvable = true;
                                descriptor = Some(link);
                            }
                            // Another process's /proc, a loop: Landlock decides.
                            Resolution::Unresolvable(_) => unresolvable = true,
                            // Failed by its spelling (a file on the way, a name too
                            // long): the kernel's own answer, with no question and no line
                            // (an error widens nothing).
                            Resolution::Fails(errno) => {
                                return Outcome::failed(event, errno);
                            }
                        }
                    }
                }
            }
            if !unresolvable && let Some(errno) = path_spelling_failure(op, n, &spelled, &resolved)
            {
                return Outcome::failed(event, errno);
            }
            // What the checks below learn of the objects a rename or link moves (a symlink's
            // target, whether a folder), by path. A move the supervisor carries out pins
            // each object then, requires it to be as seen, and moves only it
            // ([`approved::Moved`]).
            let seen = std::cell::RefCell::new(Seen::default());
            let is_directory = |p: &Path| {
                // Learned already by the look for a symlink there.
                if let Some(dir) = seen.borrow().dir_of(p) {
                    return dir;
                }
                let dir = super::view::is_directory(p);
                seen.borrow_mut().note(p, |f| f.dir = Some(dir));
                dir
            };
            let read_link = |p: &Path| {
                let (link, kind) = super::view::link_and_kind(p);
                seen.borrow_mut().note(p, |f| {
                    f.link = Some(link.clone());
                    f.dir = f.dir.or(kind.map(|k| k == libc::S_IFDIR));
                    f.socket = f.socket.or(kind.map(|k| k == libc::S_IFSOCK));
                });
                link
            };
            let perform = || {
                if unresolvable {
                    None
                } else {
                    approved::operation_for(n, mem, &resolved, source.as_deref())
                        .map(|op| seen.borrow().pin_moved(op, |p| guarded(fence, p)))
                }
            };
            // The device list holds files to open, not names to make, move or remove: a
            // rename, link, unlink or mkdir naming a device is outside the fence.
            let on_object = matches!(*op, "open" | "creat" | "truncate");
            let outside = |p: &&PathBuf| {
                if on_object {
                    !fence.allows_write(p)
                } else {
                    fence.root_of(p).is_none()
                }
            };
            // A secret is never written, moved or linked for the sandbox, even with a
            // person's Yes: the descriptor or name it would get reads the secret (with the
            // mount view nothing else would stop a read through /proc/self/fd). Removing
            // one may still be asked.
            let removes_only = matches!(*op, "unlink" | "rmdir");
            if !removes_only
                && let Some(p) = resolved
                    .iter()
                    .chain(source.as_ref())
                    .find(|p| fence.is_unreadable(p))
            {
                return refused(
                    event,
                    libc::EACCES,
                    "write to an unreadable path (a secret)",
                    p.as_os_str().as_bytes(),
                    "fence.secret-path",
                );
            }
            // Another account's entry in the host's /dev/shm is not removed, moved or
            // replaced: a root sandbox owns the folder, and the sticky bit lets its owner
            // do all three. Policy, checked by path: only that account could swap another
            // of its entries in at the name after the check.
            if matches!(*op, "unlink" | "rmdir" | "rename")
                && let Some(p) = resolved.iter().find(|p| {
                    p.parent().is_some_and(|d| fence.is_shared_folder(d))
                        && another_accounts_entry(p, caller)
                })
            {
                return refused(
                    event,
                    libc::EPERM,
                    "another account's file in the host's /dev/shm, which every account shares",
                    p.as_os_str().as_bytes(),
                    "fence.path-outside",
                );
            }
            // Nor is a folder that holds a secret moved, exchanged or replaced: the secret
            // would lie at a path no rule hides, readable in the next session (and, without
            // a mount view, through an open the supervisor carries out in the moved folder,
            // whose grant went with its old name). With a mount view its cover is a mount
            // point the kernel would not let the sandbox move, but the supervisor's own
            // rename, in fence's view, meets no mount there.
            if *op == "rename"
                && let Some(p) = resolved.iter().find(|p| fence.holds_unreadable(p))
            {
                return refused(
                    event,
                    libc::EACCES,
                    "move of a folder that holds an unreadable path (a secret)",
                    p.as_os_str().as_bytes(),
                    "fence.secret-path",
                );
            }
            // `mkdir` of a name that exists outside the fence (`mkdir -p` goes through
            // `/tmp`, `/dev`): the kernel answers EEXIST before it asks for any right, and
            // so does fence, with no reason line and no question. An error widens nothing.
            if *op == "mkdir"
                && let [p] = resolved.as_slice()
                && outside(&p)
                && super::view::identity(p).is_ok()
            {
                return Outcome::failed(event, libc::EEXIST);
            }
            // The caller's own settings in /proc (every JVM writes its `coredump_filter` at
            // start; browsers and servers raise their `oom_score_adj`; `comm` names a
            // thread): they change the caller alone, and Landlock refuses them as it
            // refuses all of /proc. Opened by the supervisor as the caller, from the path
            // it resolved, in fence's view, and handed over. Policy, not a boundary: the
            // resolver names no /proc entry but the caller's own (`/proc/self`, its own
            // pid), and the knobs below need no right the caller lacks when it writes them
            // (lowering `oom_score_adj` still needs CAP_SYS_RESOURCE; `comm` of another
            // thread group is refused by the kernel). `O_CREAT` of a shell's `>` opens the
            // entry, which exists while the caller waits.
            if *op == "open"
                && !unresolvable
                && let [p] = resolved.as_slice()
                && is_own_process_knob(p, caller)
                && let Some(Operation::Open { path, flags, .. }) = perform()
                && flags & libc::O_TMPFILE != libc::O_TMPFILE
            {
                return Outcome {
                    rule: "fence.own-process".into(),
                    why: "the process's own settings in /proc".into(),
                    perform: Some(Operation::OwnProcess { path, flags }),
                    ..allowed(event, first_shown, Response::Error(libc::EACCES))
                };
            }
            if let Some(p) = resolved.iter().find(outside) {
                let verb = if *op == "open" || *op == "creat" {
                    "write"
                } else {
                    op
                };
                let state_folder = *op == "mkdir" && fence.is_state_folder(p);
                if fence.is_state_file(p) || state_folder {
                    let what = if state_folder {
                        "the folder of a tool's state file"
                    } else {
                        "a tool's lock or state file"
                    };
                    return refused(
                        event,
                        libc::EACCES,
                        &format!(
                            "{verb} of {what} in the home (refused without a question: the tool runs without it)"
                        ),
                        p.as_os_str().as_bytes(),
                        "fence.tool-state",
                    );
                }
                let (mut what, rule) = fence.refusal(p, verb);
                // Both ends of a rename are shown: the person approves the move whole.
                if let [from, to] = resolved.as_slice() {
                    what = format!(
                        "{what} ({} -> {})",
                        bytes_for_terminal(from.as_os_str().as_bytes()),
                        bytes_for_terminal(to.as_os_str().as_bytes())
                    );
                }
                return asked(event, libc::EACCES, &what, p, rule, perform());
            }
            // A hardlink to a protected file is a second, unprotected name for it (without
            // a mount view nothing else stops the writes through it).
            if let Some(src) = source.as_ref().filter(|p| fence.is_protected(p, false)) {
                return asked(
                    event,
                    libc::EACCES,
                    "hardlink to a protected path",
                    src,
                    "fence.protected-path",
                    perform(),
                );
            }
            // A hardlink to a file outside is a lasting, writable name for it in the
            // worktree: refused at once, with the kernel's answer where two names cannot be
            // linked (EXDEV), on which `git clone` of a local repository, `cp -l` and
            // `cp -al` copy instead. Never asked: a Yes would make the outside file
            // writable through the worktree after the session too.
            if let Some(src) = source.as_ref().filter(|p| !fence.allows_write(p)) {
                return refused(
                    event,
                    libc::EXDEV,
                    "hardlink to a file outside the worktree (refused without a question: a copy works)",
                    src.as_os_str().as_bytes(),
                    "fence.hardlink-outside",
                );
            }
            // A directory moved into the worktree (or another folder protected as it is)
            // from another writable root (the session TMPDIR, an `--allow-write` folder)
            // would bring whatever it holds, a nested repository's `.git` among them, past
            // the checks by name: EXDEV, as the kernel answers where the two are separate
            // mounts, and `mv` copies instead (each name then checked). A check of what the
            // path names now (policy, not a boundary: a racing thread can swap the source
            // for a directory after it).
            // An exchange (`RENAME_EXCHANGE`) moves both ways: either end may come in.
            const RENAME_EXCHANGE: u64 = 2;
            let exchange = n.nr == libc::SYS_renameat2 && n.args[4] & RENAME_EXCHANGE != 0;
            let moved_in = |from: &Path, to: &Path| {
                fence.has_rule_base(to)
                    && fence.root_of(from) != fence.root_of(to)
                    && is_directory(from)
            };
            if *op == "rename"
                && let [from, to] = resolved.as_slice()
                && (moved_in(from, to) || (exchange && moved_in(to, from)))
            {
                return Outcome::failed(event, libc::EXDEV);
            }
            // A symlink that names a `.git` folder's content (`src -> .git/x`), or a writable
            // place no rule by name watches (`src -> $TMPDIR/x`): the user's git in the
            // folder it stands for would use a repository the rules by name let be
            // assembled there. Asked, as a protected path is; judged again when moved or
            // linked to a new name (a relative target means something else from another
            // folder, and one made in the session TMPDIR was never judged), at both ends of
            // an exchange (`RENAME_EXCHANGE` moves the object at the new name to the old
            // one too). Policy: the target is read once and followed through the links that
            // exist now.
            let moved_link = |from: &PathBuf, to: &PathBuf| {
                fence
                    .has_rule_base(to)
                    .then(|| read_link(from))
                    .flatten()
                    .map(|t| (to.clone(), t.into_os_string().into_encoded_bytes()))
            };
            let mut new_links: Vec<(PathBuf, Vec<u8>)> = match (*op, resolved.as_slice()) {
                ("symlink", [link]) if fence.has_rule_base(link) => mem
                    .c_string(n.args[0], libc::PATH_MAX as usize)
                    .ok()
                    .inspect(|t| seen.borrow_mut().target = Some(t.clone()))
                    .map(|t| (link.clone(), t))
                    .into_iter()
                    .collect(),
                ("rename", [from, to]) if exchange => moved_link(from, to)
                    .into_iter()
                    .chain(moved_link(to, from))
                    .collect(),
                ("rename", [from, to]) => moved_link(from, to).into_iter().collect(),
                // A link's new name is its one path; the object linked is its source (a
                // symlink itself unless the call follows it, `AT_SYMLINK_FOLLOW`).
                ("link", [to]) => source
                    .as_ref()
                    .and_then(|from| moved_link(from, to))
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            };
            // A symbolic link in a git directory (`.git/logs/refs/heads/main -> ~/.bashrc`):
            // git makes none, and the user's git follows one later, outside the sandbox (a
            // reflog is appended to through it on every commit, a ref written where a link in
            // `refs/` leads). Landlock grants no `MakeSym` there, so a swapped path meets the
            // kernel's refusal; this gives the reason, and carries out what a person allows.
            new_links.retain(|(link, target)| !fence.is_git_symlink_probe(link, target));
            if let Some((link, _)) = new_links
                .iter()
                .find(|(link, _)| fence.in_git_directory(link))
            {
                return asked(
                    event,
                    libc::EACCES,
                    "symlink inside a git directory",
                    link,
                    "fence.protected-path",
                    perform(),
                );
            }
            if let Some((link, _)) = new_links
                .iter()
                .find(|(link, target)| symlink_leaves_the_rules(fence, link, target))
            {
                return asked(
                    event,
                    libc::EACCES,
                    "symlink into a .git folder, or into a writable folder outside the worktree (TMPDIR, /tmp, /dev/shm) where a repository the user's git would take for the worktree's could be made",
                    link,
                    "fence.protected-path",
                    perform(),
                );
            }
            // `mv x .`, `ln x .`: coreutils first offer the directory itself as the new
            // name, which the kernel refuses (EEXIST for a link or with RENAME_NOREPLACE,
            // else EBUSY), and then name the file inside it. The worktree, or a folder
            // above it, as the destination gets that answer without a question.
            if matches!(*op, "rename" | "link")
                && let Some(dest) = resolved.last()
                && fence.worktree.starts_with(dest)
            {
                const RENAME_NOREPLACE: u64 = 1;
                let no_replace = n.nr == libc::SYS_renameat2 && n.args[4] & RENAME_NOREPLACE != 0;
                let errno = if *op == "link" || no_replace {
                    libc::EEXIST
                } else {
                    libc::EBUSY
                };
                return Outcome::failed(event, errno);
            }
            // An unnamed file (`O_TMPFILE`) is made in the folder without naming any entry
            // of it: the later `linkat` that names it is judged as a create.
            let names_entry = *op != "mkdir" && !unnamed_file(n);
            // A nested or bare repository's `.git`, `HEAD` and control files may be removed
            // (harmless), never made, moved or written.
            let removes = matches!(*op, "unlink" | "rmdir");
            // `rmdir` of a protected folder that holds entries fails in the kernel anyway:
            // git (`git stash`) tries `.git` and expects ENOTEMPTY. It gets that answer, not
            // a question.
            let removes_dir = *op == "rmdir"
                || (n.nr == libc::SYS_unlinkat && n.args[2] & libc::AT_REMOVEDIR as u64 != 0);
            if removes_dir
                && let [p] = resolved.as_slice()
                && fence.is_protected(p, true)
                && !fence.is_removable_protected(p)
                && std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some())
            {
                return Outcome::failed(event, libc::ENOTEMPTY);
            }
            // git's rewrite of the worktree's own `.git/config` (`config.lock` renamed over
            // it), or of the shared git directory's of a linked worktree (a folder above one
            // named `.git` is a rule base), that only keeps a branch's bookkeeping or the
            // author's identity: written by the supervisor from the text it checked
            // ([`super::git_config_change`]).
            if *op == "rename"
                && !exchange
                && let [from, to] = resolved.as_slice()
                && fence.bases().any(|base| {
                    *to == base.join(".git/config") && *from == base.join(".git/config.lock")
                })
                && let Some(text) = super::git_config_change::bookkeeping_only(
                    from,
                    to,
                    fence.new_git_configs.contains(to),
                )
            {
                return Outcome {
                    rule: "fence.git-bookkeeping".into(),
                    why: "git records a branch's upstream or name, or the author, in .git/config"
                        .into(),
                    perform: Some(Operation::RewriteConfig {
                        lock: from.clone(),
                        config: to.clone(),
                        text,
                    }),
                    ..allowed(event, first_shown, Response::Error(libc::EACCES))
                };
            }
            if let Some(p) = resolved.iter().find(|p| {
                fence.is_protected(p, names_entry)
                    && !(removes && fence.is_removable_protected(p))
                    && !fence.is_inert_protected(p, op)
            }) {
                return asked(
                    event,
                    libc::EACCES,
                    "write to a protected path",
                    p,
                    "fence.protected-path",
                    perform(),
                );
            }
            // A directory moved out of a `.git` folder, or into one from outside (EXDEV, as
            // one moved in above): the rules by name let git's own folders hold `HEAD`,
            // `config` and `hooks`, so a bare repository assembled in one (`.git/x`) must
            // not come out into the folders the user's git works in, nor a folder where a
            // shell of the user's waits be taken in to become one. Policy, as above.
            let in_git = |p: &Path| shim::protected_paths::names_a_git_folder(p);
            let moved_out = |from: &Path, to: &Path| {
                fence.has_rule_base(to) && in_git(from) != in_git(to) && is_directory(from)
            };
            if *op == "rename"
                && let [from, to] = resolved.as_slice()
                && (moved_out(from, to) || (exchange && moved_out(to, from)))
            {
                return Outcome::failed(event, libc::EXDEV);
            }
            // Security boundary. A protected path that does not exist yet (`.envrc`,
            // `.mcp.json`, `.vscode/`) would lie in a writable directory, and the kernel
            // makes whatever name the path holds by the time it reads it. So the sandbox's
            // Landlock ruleset grants no right to make names in the directories that may
            // hold a protected path (the worktree's root, `.git`, `.claude`…: "held"), nor
            // to write or truncate files there, and without a mount view none to remove
            // either; every other directory of a writable root is granted whole
            // ([`Fence::bounded`]). A call whose names all lie beneath a bounded directory
            // may `CONTINUE` in every mode: whatever path a racing thread swaps in, the
            // kernel makes, moves or writes names only where no protected path can be.
            // With the mount view, the existing protected paths are also read-only mounts
            // and `.git`, `.claude` mount points, so a call that only removes a name (an
            // unlink, an rmdir) may `CONTINUE` anywhere inside. Files in held directories
            // are written by the supervisor: one made or replaced on the host during the
            // session (`git config` renames a new `.git/config` over the old one) has no
            // read-only mount. The rest — names made in a held directory or in one made
            // during the session, writes there — is carried out by the supervisor from the
            // path it checked, in the sandbox's view ([`super::view`]).
            //
            // A bounded directory whose own entry a call makes, moves or removes is
            // forgotten first: its grant went with the old directory.
            let makes_name = makes_a_name(n);
            if !on_object || makes_name {
                for p in &resolved {
                    fence.forget_bounded_at(p);
                }
            }
            // `/dev/tty` names the caller's controlling terminal: opened by the supervisor
            // it would be fence's own (the terminal of the shell that started it, which a
            // sandbox without a session terminal must not reach). The kernel opens it for
            // the caller; Landlock bounds the open whatever path a racing thread swaps in.
            let controlling_tty = || {
                on_object && resolved.len() == 1 && same_path(&resolved[0], Path::new("/dev/tty"))
            };
            // Through a descriptor's link, the call would act on the open file itself,
            // shared with other names: refused, since no copy can take its place.
            if on_object && first_found == Found::SharedObject {
                return refused(
                    event,
                    libc::EACCES,
                    SHARED_OBJECT,
                    &first_shown,
                    "fence.hardlink-descriptor",
                );
            }
            // A file with other hard links, which may lie outside the fence: written as a
            // private copy ([`super::private_copy`]; policy, not a boundary). The walk's
            // look at the last name says so; an open that does not follow it (O_NOFOLLOW)
            // looks here. An exclusive create meets an existing file with EEXIST.
            let shared = on_object
                && !unresolvable
                && !exclusive_create(n)
                && match (first_found, resolved.as_slice()) {
                    (Found::Shared, [_]) => true,
                    (Found::NotLooked, [p]) => super::view::is_shared_file(p),
                    _ => false,
                };
            let private_copy = |then: Option<Operation>| Outcome {
                rule: "fence.hardlink-copy".into(),
                why: PRIVATE_COPY.into(),
                perform: Some(Operation::PrivateCopy {
                    path: resolved[0].clone(),
                    keep_data: *op == "truncate" || (*op == "open" && !truncating_open(n)),
                    for_metadata: false,
                    then: then.map(Box::new),
                }),
                ..allowed(event, first_shown.clone(), Response::Error(libc::EACCES))
            };
            if !protected_path_unbound()
                && ((fence.read_only_view && !makes_name && !on_object)
                    || (!unresolvable
                        && bounded_by_landlock(fence, &resolved, source.as_deref(), |p| {
                            seen.borrow()
                                .socket_of(p)
                                .unwrap_or_else(|| super::view::is_socket(p))
                        }))
                    || controlling_tty())
            {
                if shared {
                    return private_copy(None);
                }
                return allowed(event, first_shown, Response::Continue);
            }
            let operation = match (&descriptor, unresolvable) {
                (None, false) => perform().map(|op| match op {
                    Operation::Open {
                        path, flags, mode, ..
                    } => Operation::Open {
                        path,
                        flags,
                        mode,
                        missing: first_found == Found::Missing,
                    },
                    // A folder made in a held directory: from a spare folder the ruleset
                    // grants whole, where one fits ([`super::spare_folders`]).
                    // A folder that holds protected paths (`.claude`, `.git/modules/x`) is
                    // made without group or other write, whatever the mode and umask say:
                    // another account could otherwise put its own settings or hooks in it
                    // (as `chmod` on one is asked).
                    Operation::Mkdir { path, mode } if fence.is_protected(&path, true) => {
                        Operation::Mkdir {
                            path,
                            mode: mode & !0o022,
                        }
                    }
                    Operation::Mkdir { path, mode } => match fence.spares_for(&path) {
                        Some(spares) => Operation::MkdirFromSpare {
                            path,
                            mode,
                            spares,
                            bounded: fence.bounded.clone(),
                        },
                        None => Operation::Mkdir { path, mode },
                    },
                    other => other,
                }),
                (Some(link), true) if paths.len() == 1 && link_source.is_none() => {
                    approved::reopen_for(n, link)
                }
                // The first name of an unnamed file: linked by the supervisor from the
                // descriptor it fetched and checked, at the name it checked.
                (None, true) if *op == "link" && resolved.len() == 1 => {
                    unnamed.map(|object| Operation::LinkUnnamed {
                        object,
                        to: resolved[0].clone(),
                    })
                }
                _ => None,
            };
            match operation {
                Some(op) if shared => private_copy(Some(op)),
                Some(op) => Outcome {
                    perform: Some(op),
                    ..allowed(event, first_shown, Response::Error(libc::EACCES))
                },
                None => refused(
                    event,
                    libc::EACCES,
                    if fence.read_only_view {
                        "new name through a path fence cannot resolve"
                    } else {
                        "write through a path fence cannot resolve (no mount namespace to bound it)"
                    },
                    &first_shown,
                    "fence.unresolvable-path",
                ),
            }
        }
        FsCall::MetadataPath { path, op } => {
            let event = EventKind::Metadata;
            let mut resolved = resolve_arg_found(mem, caller, cwd, path);
            // A trailing slash, `.` or `..` makes the kernel follow the name before it
            // whatever the call says (`lchown("l/")`, `fchmodat2(…, "l/.",
            // AT_SYMLINK_NOFOLLOW)` change what `l` leads to): such a call is judged, and
            // carried out, as one that follows.
            let followed = PathArg {
                follow_last: true,
                ..*path
            };
            let path = match &resolved {
                Ok((raw, ..)) if !path.follow_last && LastName::of(raw) != LastName::Plain => {
                    resolved = resolve_arg_found(mem, caller, cwd, &followed);
                    &followed
                }
                _ => path,
            };
            let (raw, resolution, found) = match resolved {
                Ok(r) => r,
                Err(e) => return Outcome::failed(event, errno_of(&e)),
            };
            if found == Found::SharedObject {
                return refused(
                    event,
                    libc::EPERM,
                    SHARED_OBJECT,
                    &shown(&raw, &resolution),
                    "fence.hardlink-descriptor",
                );
            }
            if *op == MetadataOp::Unsupported {
                return refused(
                    event,
                    libc::EPERM,
                    "metadata change (call not supported under fence)",
                    &raw,
                    "fence.metadata-unsupported",
                );
            }
            let target = match resolution {
                Resolution::Path(p) => p,
                Resolution::Fails(errno) => return Outcome::failed(event, errno),
                Resolution::Unresolvable(_) | Resolution::Descriptor(_) => {
                    return refused(
                        event,
                        libc::EPERM,
                        "metadata change on a path fence cannot resolve",
                        &raw,
                        "fence.metadata-unresolvable",
                    );
                }
            };
            // `touch f/`: a trailing slash asks for a directory. The resolved path has no
            // slash, so the call carried out from it would change the file the kernel
            // refuses to (ENOTDIR), and a protected file would even be asked about. The
            // path was resolved following its last name (above), so `target` is what the
            // kernel would act on; `open_beneath` keeps the slash as well.
            let must_be_dir = LastName::of(&raw) == LastName::Slash;
            if must_be_dir && super::view::entry_kind(&target).ok() == Some(Some(false)) {
                return Outcome::failed(event, libc::ENOTDIR);
            }
            let on_yes = || {
                Some(Operation::Metadata {
                    path: target.clone(),
                    follow_last: path.follow_last,
                    op: *op,
                })
            };
            // `chmod -R a+rX .` over a worktree calls chmod on every file, protected ones
            // (read-only, or asked about) included, with the mode each has already: a
            // change of nothing is answered as done, with nothing done and nothing asked.
            // Policy: an answer that changes nothing widens nothing.
            // fence's own spare folders (`.git/fence`), which are not there bare, take it as
            // a change of nothing too: they stay as fence keeps them (closed to others).
            let owner_mode_or_times = matches!(
                op,
                MetadataOp::Chmod { .. }
                    | MetadataOp::Chown { .. }
                    | MetadataOp::Utime { .. }
                    | MetadataOp::Utimes { .. }
                    | MetadataOp::Utimensat { .. }
            );
            if fence.root_of(&target).is_some()
                && (changes_nothing(op, &target)
                    || (owner_mode_or_times && fence.in_spare_home(&target)))
            {
                return Outcome {
                    rule: "fence.metadata-unchanged".into(),
                    why: "changes nothing".into(),
                    ..allowed(
                        event,
                        target.as_os_str().as_bytes().to_vec(),
                        Response::Value(0),
                    )
                };
            }
            if fence.is_protected(&target, false)
                && !only_owner_execute_of_git_config(fence, op, &target)
            {
                return asked(
                    event,
                    libc::EPERM,
                    "metadata change on a protected path",
                    &target,
                    "fence.protected-path",
                    on_yes(),
                );
            }
            // `chmod 0777 .git`: another account could then replace the hooks it holds.
            if op.may_open_to_others(|| metadata::owner_of(&target))
                && fence.is_protected(&target, true)
            {
                return asked(
                    event,
                    libc::EPERM,
                    "change of who may write a folder holding protected paths",
                    &target,
                    "fence.protected-path",
                    on_yes(),
                );
            }
            if fence.is_shared_folder(&target) {
                return asked(
                    event,
                    libc::EPERM,
                    "metadata change of the host's /dev/shm itself, which every account shares",
                    &target,
                    "fence.metadata-outside",
                    on_yes(),
                );
            }
            let Some(root) = fence.root_of(&target).map(PathBuf::from) else {
                let (what, rule) = if matches!(op, MetadataOp::Truncate { .. }) {
                    fence.refusal(&target, "truncate")
                } else if fence.in_read_only_worktree(&target) {
                    fence.refusal(&target, "metadata change")
                } else {
                    (
                        "metadata change outside the worktree".to_string(),
                        "fence.metadata-outside",
                    )
                };
                let errno = if matches!(op, MetadataOp::Truncate { .. }) {
                    libc::EACCES
                } else {
                    libc::EPERM
                };
                return asked(event, errno, &what, &target, rule, on_yes());
            };
            let object = target.as_os_str().as_bytes().to_vec();
            let truncate = matches!(op, MetadataOp::Truncate { .. });
            // The call is always carried out by the supervisor, on the object the check
            // resolved in the sandbox's view, never left to the kernel (`CONTINUE`): the
            // kernel would read the path again from the caller's memory, which another
            // thread may have changed since (a security boundary). Landlock does not
            // govern metadata, and the read-only mounts of the view do not bound every
            // path the kernel could then follow: `/proc/self/fd/N` leads to the object of
            // a descriptor handed in from outside (the user's terminal, a log on the
            // host), on the host's writable mounts.
            // A file with other hard links, which may lie outside the fence: the change is
            // made to a private copy ([`super::private_copy`]; policy, not a boundary).
            if super::view::is_shared_file(&target) {
                return Outcome {
                    rule: "fence.hardlink-copy".into(),
                    why: PRIVATE_COPY.into(),
                    perform: Some(Operation::PrivateCopy {
                        path: target.clone(),
                        keep_data: true,
                        for_metadata: !truncate,
                        then: Some(Box::new(Operation::Metadata {
                            path: target.clone(),
                            follow_last: path.follow_last,
                            op: *op,
                        })),
                    }),
                    ..allowed(event, object, Response::Error(libc::EPERM))
                };
            }
            let response = metadata::perform_on_path(
                mem,
                caller,
                &root,
                &target,
                path.follow_last,
                must_be_dir,
                op,
            );
            allowed(event, object, response)
        }
        // Landlock from ABI 3 bounds truncate like any write; below it a path swapped after
        // the check would truncate whatever it then names, so the supervisor performs it.
        FsCall::Truncate { path, .. } if fence.landlock_truncate => check(
            fence,
            mem,
            caller,
            n,
            &FsCall::Bounded {
                op: "truncate",
                paths: vec![*path],
                link_source: None,
            },
        ),
        FsCall::Truncate { path, length } => check(
            fence,
            mem,
            caller,
            n,
            &FsCall::MetadataPath {
                path: *path,
                op: MetadataOp::Truncate { length: *length },
            },
        ),
        FsCall::MetadataFd { fd, op } => {
            let event = EventKind::Metadata;
            if *op == MetadataOp::Unsupported {
                return Outcome::failed(event, libc::EPERM);
            }
            match metadata::perform_on_fd(fence, mem, caller, *fd, op) {
                Ok((response, object)) if !object.is_empty() => allowed(event, object, response),
                Ok((response, _)) => Outcome {
                    subject: None,
                    ..allowed(event, Vec::new(), response)
                },
                Err((object, copy)) => {
                    let path = Path::new(std::ffi::OsStr::from_bytes(&object));
                    if !path.is_absolute() {
                        // Not a file (a pipe, a socket, an anonymous inode): nothing to ask.
                        return refused(
                            event,
                            libc::EPERM,
                            "metadata change outside the worktree",
                            &object,
                            "fence.metadata-outside",
                        );
                    }
                    // A descriptor from outside (fence's own standard streams, a
                    // `--pass-fd`) whose link reads as a path of the sandbox's private
                    // /tmp: the object is the host's, outside the fence.
                    let inside = fence.root_of(path).is_some()
                        && metadata::in_sandbox_view(&copy, &object, fence.root_of(path));
                    let (what, rule) = if inside
                        && !fence.is_protected(path, false)
                        && super::private_copy::has_other_names(&copy, &object)
                    {
                        (SHARED_OBJECT, "fence.hardlink-descriptor")
                    } else if inside {
                        (
                            "metadata change on a protected path",
                            "fence.protected-path",
                        )
                    } else {
                        (
                            "metadata change outside the worktree",
                            "fence.metadata-outside",
                        )
                    };
                    asked(
                        event,
                        libc::EPERM,
                        what,
                        path,
                        rule,
                        Some(Operation::MetadataFd {
                            object: copy,
                            op: *op,
                        }),
                    )
                }
            }
        }
        FsCall::DescriptorWrite { fd, op } => descriptor_write(fence, caller, *fd, *op),
    }
}

/// [`FsCall::DescriptorWrite`]: carried out by the supervisor on the target's descriptor,
/// fetched with `pidfd_getfd` (the same open file, whatever another thread `dup2`s onto
/// the number since), never left to the kernel. Security boundary: a file handed in from
/// outside for appending (fence started with `>> log`), opened for writing only, stays
/// append-only — what it held before cannot be cut or punched (refused) or overwritten
/// (`O_APPEND` is kept when other status flags are set: a positioned write then appends).
/// Landlock governs truncation only for files the sandbox opened itself; the ioctls that
/// punch or swap blocks and `pwritev2(RWF_NOAPPEND)` are refused by the static program. A
/// descriptor open for reading too could still change the file through a shared mapping.
fn descriptor_write(fence: &Fence, caller: Caller, fd: i32, op: DescriptorOp) -> Outcome {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStringExt;
    let event = EventKind::Metadata;
    let copy = match super::pidfd::open(caller).and_then(|p| super::pidfd::get_fd(&p, fd)) {
        Ok(c) => c,
        // EBADF: no such descriptor; ESRCH: the caller is gone; anything else (EMFILE,
        // EPERM) as it is.
        Err(e) => return Outcome::failed(event, e.raw_os_error().unwrap_or(libc::EBADF)),
    };
    // SAFETY: F_GETFL on a descriptor we own.
    let status = unsafe { libc::fcntl(copy.as_raw_fd(), libc::F_GETFL) };
    // Security boundary: O_ASYNC turned on here would be turned on by the supervisor. A
    // terminal without a signal owner takes as owner its foreground process group, with
    // the credentials and the (absent) Landlock domain of whoever turned it on; SIGIO, or
    // any signal F_SETSIG chose, SIGKILL included, would then be sent in fence's name to
    // fence's own job or to the user's shell, past the sandbox's signal scope and its pid
    // namespace. The process may turn it on itself (`ioctl(FIOASYNC)`, which the kernel
    // runs in its own name). Refused whenever the flags hold it, even where the file has
    // it on already: another thread of the caller may turn it off between the look above
    // and the call below (`F_SETFL` with `O_APPEND`, which goes to the kernel unasked).
    if let DescriptorOp::SetFlags { flags } = op
        && flags & libc::O_ASYNC as u64 != 0
    {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", copy.as_raw_fd()))
            .map(|p| p.into_os_string().into_vec())
            .unwrap_or_default();
        return refused(
            event,
            libc::EPERM,
            "turning on O_ASYNC with fcntl (its signals would be sent in fence's name; ioctl FIOASYNC works)",
            &link,
            "fence.signal-owner",
        );
    }
    let mut op = op;
    if status >= 0 && status & libc::O_APPEND != 0 && op.rewrites() {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", copy.as_raw_fd()))
            .map(|p| p.into_os_string().into_vec())
            .unwrap_or_default();
        let path = Path::new(std::ffi::OsStr::from_bytes(&link));
        let inside = path.is_absolute()
            && fence.root_of(path).is_some()
            && metadata::in_sandbox_view(&copy, &link, fence.root_of(path));
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: fstat of a descriptor we own into room for one stat.
        let regular = unsafe { libc::fstat(copy.as_raw_fd(), st.as_mut_ptr()) } == 0
            // SAFETY: fstat filled it.
            && unsafe { st.assume_init() }.st_mode & libc::S_IFMT == libc::S_IFREG;
        if regular && !inside {
            if let DescriptorOp::SetFlags { flags } = op {
                // The other flags are set (`fcntl(1, F_SETFL, O_NONBLOCK)` written without
                // reading the flags first is common); O_APPEND stays.
                op = DescriptorOp::SetFlags {
                    flags: flags | libc::O_APPEND as u64,
                };
            } else {
                return refused(
                    event,
                    libc::EPERM,
                    &format!(
                        "{} of a file outside the worktree opened for appending",
                        op.name()
                    ),
                    &link,
                    "fence.append-only",
                );
            }
        }
    }
    let call = move || {
        let raw = copy.as_raw_fd();
        // SAFETY: calls on a descriptor we own, with the target's values.
        let ret = unsafe {
            match op {
                DescriptorOp::Truncate { length } => libc::ftruncate(raw, length as libc::off_t),
                DescriptorOp::Allocate { mode, offset, len } => {
                    libc::fallocate(raw, mode, offset as libc::off_t, len as libc::off_t)
                }
                DescriptorOp::SetFlags { flags } => {
                    libc::fcntl(raw, libc::F_SETFL, flags as libc::c_int)
                }
            }
        };
        Ok(if ret < 0 {
            Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO))
        } else {
            Ok(ret as i64)
        })
    };
    // Status flags are the open file's, checked against nothing but `O_NOATIME` (the
    // file's owner only): other flags are set as they are, without taking the target's
    // credentials. A size change is made with them (a set-id bit dropped on the way).
    let as_is =
        matches!(op, DescriptorOp::SetFlags { flags } if flags & libc::O_NOATIME as u64 == 0);
    let result = if as_is {
        call()
    } else {
        let creds = match super::acting::TargetCredentials::of_thread(caller.tid) {
            Ok(c) if caller.still_pending() => c,
            _ => return Outcome::failed(event, libc::EPERM),
        };
        super::acting::act_as(&creds, call)
    };
    let response = match result {
        Ok(Ok(value)) => Response::Value(value),
        Ok(Err(errno)) => Response::Error(errno),
        Err(e) => Response::Error(e.raw_os_error().unwrap_or(libc::EPERM)),
    };
    // The object is not looked up for a call that keeps what it holds (the most common:
    // `O_NONBLOCK` set on a pipe or a socket).
    Outcome {
        subject: None,
        ..allowed(event, Vec::new(), response)
    }
}

/// Whether a symlink made at `link` with `target` names a `.git` folder's content, or,
/// followed from the link's folder through the links that exist, a writable place outside
/// the worktree and the folders protected as it is (the session TMPDIR, a profile's
/// folder, a private `/dev/shm`) or a folder above one, where the sandbox could assemble a
/// repository the rules by name do not see. A link to what the sandbox cannot write
/// (`/usr/bin/python3` in a virtualenv) is not judged here.
fn symlink_leaves_the_rules(fence: &Fence, link: &Path, target: &[u8]) -> bool {
    let target = Path::new(std::ffi::OsStr::from_bytes(target));
    if shim::protected_paths::names_a_git_folder(target) {
        return true;
    }
    // `/proc/self/root/…`, `/proc/<pid>/cwd/…`, `/dev/fd/N/…`: aliases the text does not
    // show, resolved by the kernel for whoever follows the link later.
    if target.starts_with("/proc") || target.starts_with("/dev/fd") {
        return true;
    }
    let Some(dir) = link.parent() else {
        return true;
    };
    let at = resolve_existing(&dir.join(target));
    // Into such a folder, or to a folder above one (`tt -> /tmp`): a link made beneath it
    // later (`tt/…`) would be judged by its text as a path in the worktree.
    fence
        .writable
        .iter()
        .filter(|r| !fence.has_rule_base(r))
        .any(|r| at.starts_with(r) || r.starts_with(&at))
}

/// `path` with the symlinks and `..` of its longest existing part followed as the kernel
/// follows them (`realpath`), the rest appended as written: where a link to it leads
/// through links already there (`tt -> /tmp`, then `tt/x/..`). As the supervisor sees the
/// filesystem: the sandbox's private mounts (its TMPDIR, `/tmp`, `/dev/shm`) differ, and
/// what lies in them does not outlive the session.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            for c in rest.iter().rev() {
                if *c == ".." {
                    out.pop();
                } else if *c != "." {
                    out.push(c);
                }
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            // A path ending in `..` or `.` that does not resolve: judged as written.
            _ => return path.to_path_buf(),
        }
    }
}

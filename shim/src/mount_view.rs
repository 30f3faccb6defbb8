//! The read-only view of the filesystem, made in the sandbox's own mount namespace.
//!
//! Landlock does not govern metadata (`chmod`, `chown`, `utimensat`, xattrs), and a uid-0
//! sandbox still owns root's files. Making every mount read-only except the writable roots
//! lets the kernel refuse those changes outside the fence with EROFS, race-free: the
//! supervisor may then answer `CONTINUE` to a metadata call inside the worktree, because a
//! path swapped after its check can only land on a read-only mount or inside the fence.
//!
//! The same view keeps secrets unreadable, so that Landlock need not govern reads at all
//! (every `open` under a ruleset that handles reads walks the path up to the folder whose
//! rule grants them: ~9 % of a recursive grep). The folders around the secrets have their
//! listing frozen ([`snapshot`]: which ones, `init_process::freeze_dirs`), each secret's
//! name there an empty object of the view's own, so one made, replaced or re-linked on the
//! host during the session never appears; secrets elsewhere are covered with empty mounts;
//! `/dev` is a tmpfs holding only the short device list and a devpts of the sandbox's own
//! ([`minimal_dev`]), and every other mount has no devices, so no disk can be read raw. What
//! cannot be done this way (an unreadable folder, `/` itself) is left to Landlock's read
//! rules, which the shim then keeps (security boundary: see
//! `landlock_fence::FencePlan::reads_by_mounts`).

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::sys;

const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;
const MOUNT_ATTR_NODEV: u64 = 0x0000_0004;

#[derive(Debug, thiserror::Error)]
pub enum MountViewError {
    #[error("making mounts private failed: {0}")]
    Private(io::Error),
    #[error("bind-mounting writable path {path} failed: {source}")]
    Bind { path: PathBuf, source: io::Error },
    #[error("making the filesystem read-only failed: {0}")]
    ReadOnly(io::Error),
    #[error("making writable path {path} writable again failed: {source}")]
    Writable { path: PathBuf, source: io::Error },
    #[error("mounting a /proc for the sandbox's pid namespace failed: {0}")]
    Proc(io::Error),
    #[error("hiding unreadable path {path} failed: {source}")]
    Hide { path: PathBuf, source: io::Error },
    #[error("mounting a {size}-byte tmpfs on the session TMPDIR {path} failed: {source}")]
    SizedTmp {
        path: PathBuf,
        size: u64,
        source: io::Error,
    },
    #[error("binding the session TMPDIR on {path} as a private /tmp failed: {source}")]
    PrivateTmp { path: PathBuf, source: io::Error },
    #[error("mounting a private tmpfs on {path} failed: {source}")]
    PrivateShm { path: PathBuf, source: io::Error },
    #[error("freezing the listing of {path} (a secret path missing in it) failed: {source}")]
    Snapshot { path: PathBuf, source: io::Error },
    #[error("making the sandbox's /dev failed: {0}")]
    Dev(io::Error),
    #[error("path {0:?} contains a NUL byte")]
    Nul(PathBuf),
}

fn cstring(path: &OsStr) -> Result<CString, MountViewError> {
    CString::new(path.as_bytes()).map_err(|_| MountViewError::Nul(PathBuf::from(path)))
}

/// What the sandbox's mount view is made of.
#[derive(Debug, Default)]
pub struct ViewPlan<'a> {
    /// Writable roots: each bind-mounted onto itself, so it is a mount of its own that
    /// stays writable when everything else is made read-only.
    pub writable: &'a [&'a OsStr],
    /// Protected paths inside the writable roots: read-only binds of themselves.
    pub protected: &'a [&'a OsStr],
    /// Directories pinned as mount points (`.git`): never renamed or removed.
    pub pinned: &'a [&'a OsStr],
    /// Unreadable paths, each covered with an empty read-only object.
    pub hidden: &'a [&'a OsStr],
    /// Directories whose listing is frozen ([`snapshot`]): a missing secret path lies in
    /// each, and one made there during the session must not appear in the sandbox.
    pub snapshots: &'a [&'a Path],
    /// The secret paths missing at start that the snapshots stand for: one made before its
    /// directory was frozen is covered as `hidden` are.
    pub missing: &'a [&'a Path],
    /// Every secret path (hidden and missing): in a frozen folder each is an empty object
    /// of the tmpfs's own, not a bind of the host's.
    pub secrets: &'a [&'a Path],
    /// The devices kept in the sandbox's own `/dev` ([`minimal_dev`]); `None` leaves the
    /// host's `/dev`.
    pub devices: Option<&'a [&'a Path]>,
    /// The session's terminal, kept in that `/dev` too.
    pub session_tty: Option<&'a Path>,
    /// Mount a `/proc` that shows only the sandbox's pid namespace.
    pub new_proc: bool,
    /// The session TMPDIR and a size in bytes: an empty tmpfs of that size, private to the
    /// sandbox (SPEC §3 "Limits").
    pub sized_tmp: Option<(&'a OsStr, u64)>,
    /// A shared-memory directory such as `/dev/shm` (among `writable`): an empty tmpfs of
    /// its own, so the sandbox neither sees nor writes the host's POSIX shared memory.
    pub private_shm: Option<&'a OsStr>,
    /// Where the session TMPDIR's tmpfs ([`ViewPlan::sized_tmp`]) is bound a second time
    /// (`/tmp`, among `writable`): the sandbox's private `/tmp`, over the host's.
    pub private_tmp: Option<&'a OsStr>,
    /// The folder of spare folders in the worktree (`.git/fence/spares.PID`, under a
    /// protected path): opened through the worktree's own mount before the read-only binds
    /// cover it ([`ViewMade::spare_pool`]).
    pub spare_pool: Option<&'a Path>,
    /// The namespace's mounts as the host made them, read before any mount of the view
    /// (`mount_aliases::table`); read here when the caller has none.
    pub host_mounts: Option<&'a [crate::mount_aliases::Mount]>,
}

/// What [`apply`] did beyond its plan's certainties.
#[derive(Debug, Default)]
pub struct ViewMade {
    /// The directories of [`ViewPlan::snapshots`] whose listing is frozen; the others
    /// could not be read (or were too large) and were left as they are.
    pub snapshots: Vec<PathBuf>,
    /// `/dev/pts` is a devpts of the sandbox's own, and the session's terminal (if any) is
    /// at `/dev/console`.
    pub private_pts: bool,
    /// [`ViewPlan::spare_pool`], opened (`O_PATH`) through the writable worktree's mount,
    /// as the supervisor's renames out of it need: the path itself then leads to a
    /// read-only bind. `None` when it could not be opened (no spare folders then).
    pub spare_pool: Option<OwnedFd>,
    /// Unreadable paths (of [`ViewPlan::hidden`] or [`ViewPlan::missing`]) the host removed
    /// before their cover was mounted: nothing covers them, so reads there are left to
    /// Landlock's rules, which grant nothing at those names.
    pub uncovered: Vec<PathBuf>,
}

/// Makes the sandbox's view (see [`ViewPlan`]): snapshots first (they replace directories
/// by mounts, which the later steps then work on), the private `/dev/shm` and the minimal
/// `/dev`, the sized TMPDIR, then every mount read-only except the writable roots and,
/// inside those, read-only binds of the protected paths and pins; a new `/proc`; the
/// unreadable paths covered last, so that nothing mounted after could uncover them.
pub fn apply(view: &ViewPlan<'_>) -> Result<ViewMade, MountViewError> {
    let ViewPlan {
        writable,
        protected,
        pinned,
        hidden,
        snapshots,
        missing,
        secrets,
        devices,
        session_tty,
        new_proc,
        sized_tmp,
        private_shm,
        private_tmp,
        spare_pool,
        host_mounts,
    } = *view;
    let mut made = ViewMade::default();
    let root = cstring(OsStr::new("/"))?;
    // Again, in case the caller did not: nothing done here may propagate to the host.
    make_private()?;
    // The host's writable mounts beneath the writable roots, listed before any mount of the
    // view is made: the binds below copy them under the same paths, and the host's table
    // is a fraction of the view's (a frozen /etc alone adds ~150 binds, each a line of
    // mountinfo the kernel formats). Frozen folders never lie inside a writable root.
    let roots: Vec<&Path> = writable.iter().map(Path::new).collect();
    let read_here;
    let host_mounts = match host_mounts {
        Some(m) => m,
        None => {
            read_here = crate::mount_aliases::table().map_err(MountViewError::ReadOnly)?;
            &read_here
        }
    };
    // Not those beneath a folder the view mounts anew (the private /dev/shm, /tmp and the
    // sized TMPDIR are fresh tmpfs mounts, without the host's submounts).
    let fresh: Vec<&Path> = private_shm
        .into_iter()
        .chain(private_tmp)
        .chain(sized_tmp.map(|(path, _)| path))
        .map(Path::new)
        .collect();
    let writable_submounts: Vec<PathBuf> = writable_mounts_beneath(&roots, host_mounts)
        .into_iter()
        .filter(|point| !fresh.iter().any(|f| point.starts_with(f)))
        .collect();
    // Snapshots before anything else: they replace a directory by a tmpfs holding binds of
    // what it held, and every later step works on the paths as they then are. Parents
    // first, so that a nested one is taken inside its parent's bind.
    let mut ordered: Vec<&Path> = snapshots.to_vec();
    ordered.sort_by_key(|p| p.as_os_str().len());
    ordered.dedup();
    for dir in ordered {
        if snapshot(dir, secrets).map_err(|source| MountViewError::Snapshot {
            path: dir.to_path_buf(),
            source,
        })? {
            made.snapshots.push(dir.to_path_buf());
        }
    }
    // The private /dev/shm first: a session TMPDIR below it then gets its sized tmpfs on
    // the path carried over, not on one the new tmpfs covers.
    if let Some(path) = private_shm {
        let size = sized_tmp.map(|(_, size)| size);
        mount_private_shm(path, writable, size).map_err(|source| MountViewError::PrivateShm {
            path: PathBuf::from(path),
            source,
        })?;
    }
    // The minimal /dev after the private /dev/shm, which it carries over.
    let mut device_mounts = Vec::new();
    if let Some(devices) = devices {
        let (private_pts, bound) =
            minimal_dev(devices, session_tty).map_err(MountViewError::Dev)?;
        made.private_pts = private_pts;
        device_mounts = bound;
    }
    if let Some((path, size)) = sized_tmp {
        mount_sized_tmp(path, size).map_err(|source| MountViewError::SizedTmp {
            path: PathBuf::from(path),
            size,
            source,
        })?;
        // The private /tmp: the same tmpfs, so one size limit holds for both names and
        // the host's /tmp (its other users' files, sockets, a Kerberos ticket cache) is
        // out of sight. The supervisor plans it only when nothing the session needs (the
        // worktree, a writable folder, the home, the working directory) lies beneath.
        if let Some(tmp) = private_tmp {
            let source = cstring(path)?;
            let target = cstring(tmp)?;
            // SAFETY: NUL-terminated paths; a plain (non-recursive) bind.
            let ret = unsafe {
                libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            };
            if ret < 0 {
                return Err(MountViewError::PrivateTmp {
                    path: PathBuf::from(tmp),
                    source: io::Error::last_os_error(),
                });
            }
        }
    }
    let mut targets = Vec::new();
    for path in writable {
        let c = cstring(path)?;
        // A bind of the path onto itself gives it its own mount, whose read-only flag can
        // be cleared below without touching its parent.
        bind_onto_itself(&c).map_err(|source| MountViewError::Bind {
            path: PathBuf::from(path),
            source,
        })?;
        targets.push((PathBuf::from(path), c));
    }
    // Every mount read-only and without devices, recursively (a device node outside /dev,
    // in a chroot or an initramfs tree, would reach a disk or the console); other mount
    // flags are left as they are (so locked flags in a user namespace are not disturbed).
    // The device list's own mounts get their devices back.
    sys::mount_setattr(&root, true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV, 0)
        .map_err(MountViewError::ReadOnly)?;
    if devices.is_none() {
        let dev = cstring(OsStr::new("/dev"))?;
        sys::mount_setattr(&dev, true, 0, MOUNT_ATTR_NODEV).map_err(MountViewError::ReadOnly)?;
    }
    for path in &device_mounts {
        let c = cstring(path.as_os_str())?;
        sys::mount_setattr(&c, false, 0, MOUNT_ATTR_NODEV).map_err(MountViewError::ReadOnly)?;
    }
    // Each writable root's own mount is made writable again, and beneath it only the
    // mounts that were writable before (a host's read-only mount inside the worktree
    // stays read-only: clearing the flag recursively made it writable, and failed on a
    // user namespace's locked ones).
    for (path, c) in &targets {
        sys::mount_setattr(c, false, 0, MOUNT_ATTR_RDONLY).map_err(|source| {
            MountViewError::Writable {
                path: path.clone(),
                source,
            }
        })?;
    }
    for path in &writable_submounts {
        let c = cstring(path.as_os_str())?;
        sys::mount_setattr(&c, false, 0, MOUNT_ATTR_RDONLY).map_err(|source| {
            MountViewError::Writable {
                path: path.clone(),
                source,
            }
        })?;
    }
    // The spare folders' pool, before the pins and read-only binds below cover it: a
    // descriptor taken now names it on the writable worktree's mount, the mount of every
    // folder a spare is moved into. Nothing in the sandbox can reach it by path after.
    made.spare_pool =
        spare_pool.and_then(|p| crate::landlock_fence::open_directory_nofollow(p).ok());
    // Pinned directories (.git) become mount points of their own: the kernel refuses to
    // rename or remove a mount point.
    for path in pinned {
        let c = cstring(path)?;
        bind_onto_itself(&c).map_err(|source| MountViewError::Bind {
            path: PathBuf::from(path),
            source,
        })?;
    }
    // Protected paths inside the writable roots: read-only binds of themselves, made after
    // the writable roots were opened up so nothing clears them again.
    for path in protected {
        let c = cstring(path)?;
        bind_onto_itself(&c).map_err(|source| MountViewError::Bind {
            path: PathBuf::from(path),
            source,
        })?;
        sys::mount_setattr(&c, true, MOUNT_ATTR_RDONLY, 0).map_err(|source| {
            MountViewError::Bind {
                path: PathBuf::from(path),
                source,
            }
        })?;
    }
    if new_proc {
        let proc_ = cstring(OsStr::new("/proc"))?;
        let fstype = cstring(OsStr::new("proc"))?;
        // A /proc of the sandbox's own pid namespace: /proc/self and /proc/<pid> then name
        // sandbox processes, and the host's processes are not listed.
        // SAFETY: all pointers are NUL-terminated strings or null.
        let ret = unsafe {
            libc::mount(
                fstype.as_ptr(),
                proc_.as_ptr(),
                fstype.as_ptr(),
                // Writable as a mount: the target writes its nested user namespace's
                // maps here; Landlock grants no write in /proc.
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        };
        if ret < 0 {
            return Err(MountViewError::Proc(io::Error::last_os_error()));
        }
    }
    for path in hidden {
        // An unreadable path in /dev that the sandbox's /dev does not hold is unreachable.
        if devices.is_some()
            && Path::new(path).starts_with("/dev")
            && Path::new(path).symlink_metadata().is_err()
        {
            continue;
        }
        if !hide_if_there(path).map_err(|source| MountViewError::Hide {
            path: PathBuf::from(path),
            source,
        })? {
            made.uncovered.push(PathBuf::from(path));
        }
    }
    // A secret path missing when the session was planned but made since (before its
    // directory was frozen) is covered like the others.
    for path in missing {
        if Path::new(path).symlink_metadata().is_ok()
            && !hide_if_there(path.as_os_str()).map_err(|source| MountViewError::Hide {
                path: path.to_path_buf(),
                source,
            })?
        {
            made.uncovered.push(path.to_path_buf());
        }
    }
    Ok(made)
}

/// Makes every mount of this (new) mount namespace private: nothing mounted in it from
/// here on propagates back to the host's mounts, nor the host's into it.
pub fn make_private() -> Result<(), MountViewError> {
    let root = cstring(OsStr::new("/"))?;
    // SAFETY: all pointers are NUL-terminated strings or null, as mount(2) expects.
    let ret = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if ret < 0 {
        return Err(MountViewError::Private(io::Error::last_os_error()));
    }
    Ok(())
}

/// The folder a root session sees with root's files as nobody's ([`shift_root_owner`]).
pub const SYSTEM_CONFIG: &str = "/etc";

/// The uid and gid maps of the user namespace through which a root session sees `/etc`
/// ([`shift_root_owner`]): every id as itself but 0, which is left out. The kernel shows an
/// id without a mapping as the overflow id (65534, `nobody`, `nogroup`) and grants it
/// nothing: not the owner's rights to any uid, not the group's to a member of any group
/// (0 mapped to 65534 instead would give a root that is also in `nogroup` the group
/// rights of every file of root's group). No file there is then root's, nor of root's
/// group.
pub const ROOT_OWNER_SHIFT_MAP: &str = "1 1 4294967294\n";

/// Shows `dir` (with the mounts beneath it) read-only, through an idmapped bind of itself
/// whose user namespace `userns` has [`ROOT_OWNER_SHIFT_MAP`]: root's files and root's
/// group's there are `nobody`'s and `nogroup`'s. A sandbox running as uid 0 without
/// capabilities (the fence clears them all) then reads `dir` as an ordinary user does:
/// `/etc/shadow`, `/etc/sudoers`, `/etc/ssl/private`, ssh host keys, any file only root
/// may read, including one the host makes, replaces by a rename or opens up to root's
/// group during the session, is refused by the kernel's permission check (EACCES), with no
/// mount per entry (a frozen `/etc` binds each of its ~150 entries: ~1.6 ms of a start).
/// A security boundary, with the permission bits: a file root made readable to others
/// stays readable (as it is to every user), and the named secrets keep their covers.
///
/// An error, having changed nothing, where the kernel cannot (Linux 5.12 and newer idmap
/// mounts), the file system does not support it (ext4, xfs, btrfs, tmpfs from 6.3 and
/// overlayfs from 5.19 do), or a mount beneath cannot be idmapped: the caller then freezes
/// the folders as for any secret the sandbox could read. The mount namespace must be
/// private ([`make_private`]).
///
/// Why by hand: no crate wraps `open_tree`, `mount_setattr` and `move_mount`.
pub fn shift_root_owner(dir: &Path, userns: &OwnedFd) -> io::Result<()> {
    let (c, tree) = shifted_tree(dir, userns)?;
    sys::move_mount_at(&tree, libc::AT_FDCWD, &c)
}

/// Whether [`shift_root_owner`] can be done here: the shifted copy of `dir` is made,
/// detached, and dropped (`fence doctor`'s probe; nothing is mounted anywhere).
pub fn probe_shift_root_owner(dir: &Path, userns: &OwnedFd) -> io::Result<()> {
    shifted_tree(dir, userns).map(drop)
}

/// A detached copy of `dir`'s mount tree, idmapped through `userns` and read-only.
fn shifted_tree(dir: &Path, userns: &OwnedFd) -> io::Result<(CString, OwnedFd)> {
    if !dir.symlink_metadata()?.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    let c = CString::new(dir.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let tree = sys::open_tree_clone(libc::AT_FDCWD, &c)?;
    sys::idmap_tree(&tree, userns, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV)?;
    Ok((c, tree))
}

/// Most entries a directory may have for its listing to be frozen ([`snapshot`]): each is
/// held open until its bind is made.
const MOST_SNAPSHOT_ENTRIES: usize = 2048;

/// What tools append to a file's name to stage its new content or keep its old one beside
/// it before a rename (shadow-utils' `+`, `-`, `.lock` and `.PID`; `~`, `.tmp`, `.new`,
/// `.bak`, `.swp` of editors and scripts): in a frozen folder, such a name beside a secret
/// is a placeholder as the secret is.
const STAGED_SUFFIXES: &[&[u8]] = &[
    b"+", b"-", b"~", b".lock", b".tmp", b".new", b".bak", b".old", b".swp",
];

/// Whether `name` is `secret`'s name with one of [`STAGED_SUFFIXES`] or a `.PID` added: a
/// file that may become the secret by a rename (or hold its old content).
pub(crate) fn is_staged_beside(name: &[u8], secret: &[u8]) -> bool {
    name.strip_prefix(secret).is_some_and(|rest| {
        STAGED_SUFFIXES.contains(&rest)
            || rest
                .strip_prefix(b".")
                .is_some_and(|pid| !pid.is_empty() && pid.iter().all(u8::is_ascii_digit))
    })
}

/// An entry of a directory whose listing is frozen.
enum Kept {
    /// A directory, held ([`hold`]) to be bound back.
    Dir(Held),
    /// Any other object but a symlink, held to be bound back.
    Other(Held),
    /// A symlink: made again with the same text (a bind would follow it).
    Link(std::ffi::OsString),
    /// A secret path: an empty object of the tmpfs's own (a directory if it was one),
    /// never a bind of the host's, which a rename or unlink on the host would take away
    /// with any mount over it.
    Placeholder { dir: bool },
}

/// Freezes the listing of `dir`: a tmpfs of the same mode covers it, holding, under the
/// same names, binds of what it held (directories recursively with their submounts) and
/// copies of its symlinks. The objects are the host's own, so reads and the writes the
/// fence allows reach them; but a name made in `dir` on the host during the session is
/// not seen. Returns false, having changed nothing, when `dir` cannot be read or holds
/// more than [`MOST_SNAPSHOT_ENTRIES`]; an error once the tmpfs is mounted (the view is
/// then half made, and the session must not start).
///
/// Why by hand: no crate builds a directory of binds; the steps are mount(2) calls.
fn snapshot(dir: &Path, secrets: &[&Path]) -> io::Result<bool> {
    let c = CString::new(dir.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Ok(false);
    }
    // SAFETY: a fresh descriptor, owned from here on.
    let dir_fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat of our descriptor into room for one stat.
    if unsafe { libc::fstat(dir_fd.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Ok(false);
    }
    // SAFETY: filled by fstat.
    let st = unsafe { st.assume_init() };
    let Ok(entries) = std::fs::read_dir(format!("/proc/self/fd/{}", dir_fd.as_raw_fd())) else {
        return Ok(false);
    };
    // Listed first, so that a folder too large is given up before anything is opened.
    let Ok(entries) = entries.collect::<Result<Vec<_>, _>>() else {
        return Ok(false);
    };
    if entries.len() > MOST_SNAPSHOT_ENTRIES {
        return Ok(false);
    }
    // The names of the secrets in this folder, compared by bytes with each entry's (a
    // root session freezes /etc: ~150 entries, against every secret path by components,
    // was most of the view's own time).
    let secret_names: Vec<&[u8]> = secrets
        .iter()
        .filter(|s| s.parent() == Some(dir))
        .filter_map(|s| s.file_name())
        .map(|n| n.as_bytes())
        .collect();
    // A bind holds an inode: a file staged under a name beside a secret and renamed over
    // it (`passwd` writes `/etc/shadow+`, git `.git-credentials.lock`) would show the new
    // secret under its old name for the whole session. Those names are placeholders too.
    let is_secret = |name: &[u8]| {
        secret_names
            .iter()
            .any(|s| name == *s || is_staged_beside(name, s))
    };
    let mut kept: Vec<(std::ffi::OsString, Kept)> = Vec::new();
    for entry in entries {
        let name = entry.file_name();
        let Ok(cname) = CString::new(name.as_bytes()) else {
            return Ok(false);
        };
        let Ok(kind) = entry.file_type() else {
            return Ok(false);
        };
        if is_secret(name.as_bytes()) {
            kept.push((name, Kept::Placeholder { dir: kind.is_dir() }));
            continue;
        }
        if kind.is_symlink() {
            match std::fs::read_link(dir.join(&name)) {
                Ok(text) => kept.push((name, Kept::Link(text.into_os_string()))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(_) => return Ok(false),
            }
            continue;
        }
        let fd = match hold(&dir_fd, &cname) {
            Ok(fd) => fd,
            // Removed since it was listed: nothing to keep.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(_) => return Ok(false),
        };
        // The listing's type (d_type): no `fstat` of each entry. Should the entry have been
        // replaced by one of the other kind since it was listed, the bind below says so
        // and the mount point is made again.
        kept.push((
            name,
            if kind.is_dir() {
                Kept::Dir(fd)
            } else {
                Kept::Other(fd)
            },
        ));
    }
    // Room for the symlinks' text (a page each at most) and the empty placeholders.
    let size = (kept.len() + 8) * 4096;
    let inodes = kept.len() + 8;
    mount_tmpfs(
        dir.as_os_str(),
        &format!(
            "mode={:o},size={size},nr_inodes={inodes}",
            st.st_mode & 0o7777
        ),
    )?;
    // The tmpfs belongs to whoever mounted it; give it the folder's owner where that id
    // exists here (in a user namespace, an unmapped owner stays the overflow id).
    // SAFETY: a NUL-terminated path.
    let _ = unsafe { libc::chown(c.as_ptr(), st.st_uid, st.st_gid) };
    // And its times, for tools that compare them (best effort, as the owner).
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
    // SAFETY: a NUL-terminated path and two timespecs.
    let _ = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) };
    // The tmpfs's root, where the entries are made and bound by name: no walk from `/` for
    // each. Just mounted by this process, in a namespace nothing else has entered yet.
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let root = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if root < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor, owned from here on.
    let root = unsafe { OwnedFd::from_raw_fd(root) };
    // The held entries' descriptors, closed together once all are bound.
    let mut bound = Closing(Vec::with_capacity(kept.len()));
    for (name, object) in kept {
        let cname = CString::new(name.as_bytes()).map_err(io::Error::other)?;
        let (held, is_dir) = match object {
            Kept::Link(text) => {
                let ctext = CString::new(text.as_bytes()).map_err(io::Error::other)?;
                // SAFETY: NUL-terminated strings and our directory descriptor.
                if unsafe { libc::symlinkat(ctext.as_ptr(), root.as_raw_fd(), cname.as_ptr()) } < 0
                {
                    return Err(io::Error::last_os_error());
                }
                continue;
            }
            Kept::Placeholder { dir } => {
                make_entry(&root, &cname, dir, 0o000)?;
                continue;
            }
            Kept::Dir(held) => (held, true),
            Kept::Other(held) => (held, false),
        };
        make_entry(&root, &cname, is_dir, if is_dir { 0o777 } else { 0o666 })?;
        let target = dir.join(&name);
        let ctarget = CString::new(target.as_os_str().as_bytes()).map_err(io::Error::other)?;
        let bind = |held: &Held| {
            if held.detached {
                sys::move_mount_at(&held.fd, root.as_raw_fd(), &cname)
            } else {
                bind_from(&held.fd, &ctarget)
            }
        };
        let mut made_dir = is_dir;
        let mut result = bind(&held);
        // Replaced on the host by the other kind since it was listed: the kernel mounts a
        // directory only on a directory. The mount point is made again for what is held.
        if let Err(e) = &result
            && e.raw_os_error() != Some(libc::ENOENT)
            && let Ok(held_dir) = sys::fd_is_directory(held.fd.as_raw_fd())
            && held_dir != made_dir
        {
            remove_entry(&root, &cname, made_dir)?;
            make_entry(
                &root,
                &cname,
                held_dir,
                if held_dir { 0o777 } else { 0o666 },
            )?;
            made_dir = held_dir;
            result = bind(&held);
        }
        match result {
            Ok(()) => bound.0.push(held.fd.into_raw_fd()),
            // Removed on the host since it was held (the kernel mounts no unlinked
            // object, held either way): not kept, and neither is its mount point. A lock
            // file that `passwd` or `useradd` makes and removes in /etc at that moment must
            // not stop the session; the secrets are placeholders of the tmpfs, never binds.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                remove_entry(&root, &cname, made_dir)?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Replaces `/dev` with a tmpfs holding binds of `devices` only (the short list of SPEC
/// §2 and `/dev/shm`), each at its own path, the usual links to `/proc/self/fd`, and a
/// devpts of the sandbox's own at `/dev/pts` (`/dev/ptmx` a link into it), so that the
/// sandbox can make pseudo-terminals and open their other side while no terminal of the
/// host is reachable. The session's terminal (`session_tty`) is bound at `/dev/console`,
/// where `ttyname` finds it. Landlock then need not govern reads for the sandbox to reach
/// no other device (a disk read raw would show every file on it; another terminal of the
/// user, read, gives its keystrokes). Devices that do not exist are left out. Where no
/// devpts can be mounted, the host's `/dev/ptmx` and the session's terminal at its own
/// path stand in, as without a mount view. Returns whether `/dev/pts` is the sandbox's, and
/// the device mounts made (which keep their devices when every other mount loses them).
fn minimal_dev(devices: &[&Path], session_tty: Option<&Path>) -> io::Result<(bool, Vec<PathBuf>)> {
    let mut kept = Vec::new();
    let mut bound = Vec::new();
    // Only paths in /dev: nothing is ever made elsewhere.
    let in_dev = |p: &&Path| p.starts_with("/dev/") && p.components().count() > 2;
    for path in devices.iter().copied().chain(session_tty).filter(in_dev) {
        let c = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // Followed if a link (`/dev/ptmx -> pts/ptmx`): the object is what is bound.
        // SAFETY: a NUL-terminated path; the descriptor is owned below.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            if io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
                continue;
            }
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor, owned from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let is_dir = sys::fd_is_directory(fd.as_raw_fd())?;
        kept.push((path, fd, is_dir));
    }
    mount_tmpfs(OsStr::new("/dev"), "mode=0755,size=64k,nr_inodes=64")?;
    std::fs::DirBuilder::new().create("/dev/pts")?;
    // SAFETY: NUL-terminated strings; devpts takes its options as a C string.
    let private_pts = unsafe {
        libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr() as *const libc::c_void,
        )
    } == 0;
    for (path, fd, is_dir) in kept {
        let at: &Path = if Some(path) == session_tty {
            if private_pts {
                Path::new("/dev/console")
            } else {
                path
            }
        } else if path == Path::new("/dev/ptmx") && private_pts {
            continue;
        } else {
            path
        };
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if is_dir {
            std::fs::DirBuilder::new().create(at)?;
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(at)?;
        }
        let target = CString::new(at.as_os_str().as_bytes()).map_err(io::Error::other)?;
        bind_from(&fd, &target)?;
        if !is_dir {
            bound.push(at.to_path_buf());
        }
    }
    if private_pts {
        std::os::unix::fs::symlink("pts/ptmx", "/dev/ptmx")?;
        bound.push(PathBuf::from("/dev/pts"));
    }
    for (link, to) in [
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(to, link)?;
    }
    Ok((private_pts, bound))
}

/// The mount points strictly beneath `roots` whose own mount is writable in `mounts`.
fn writable_mounts_beneath(
    roots: &[&Path],
    mounts: &[crate::mount_aliases::Mount],
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = mounts
        .iter()
        .filter(|m| !m.read_only)
        .map(|m| m.point.clone())
        .filter(|point| roots.iter().any(|r| point.starts_with(r) && point != *r))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The kernel has no `open_tree`/`move_mount` (before Linux 5.2), or an outer sandbox
/// refuses them: entries are held and bound through `/proc/self/fd` instead.
static NO_OPEN_TREE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Holds entry `name` of the directory open at `dir` to be bound back later: a detached
/// copy of its mount tree (`open_tree`), else an `O_PATH` descriptor. Either names the
/// object found now, whatever the name leads to later; the last component is not followed.
/// A detached copy is bound without a lookup through /proc (a root session freezes /etc,
/// ~150 binds: ~0.3 ms of its start here).
fn hold(dir: &OwnedFd, name: &CStr) -> io::Result<Held> {
    use std::sync::atomic::Ordering;
    if !NO_OPEN_TREE.load(Ordering::Relaxed) {
        match sys::open_tree_clone(dir.as_raw_fd(), name) {
            Ok(fd) => return Ok(Held { fd, detached: true }),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
                NO_OPEN_TREE.store(true, Ordering::Relaxed);
            }
            Err(e) => return Err(e),
        }
    }
    // SAFETY: a NUL-terminated name relative to our directory descriptor.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Held {
        // SAFETY: a fresh descriptor, owned from here on.
        fd: unsafe { OwnedFd::from_raw_fd(fd) },
        detached: false,
    })
}

/// Makes `name` in the directory `root`: an empty directory, or an empty regular file
/// (`mknodat`: no descriptor to open and close), with `mode` less the umask, as a create
/// gives.
fn make_entry(root: &OwnedFd, name: &CStr, dir: bool, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: our directory descriptor and a NUL-terminated name.
    let ret = unsafe {
        if dir {
            libc::mkdirat(root.as_raw_fd(), name.as_ptr(), mode)
        } else {
            libc::mknodat(root.as_raw_fd(), name.as_ptr(), libc::S_IFREG | mode, 0)
        }
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Removes what [`make_entry`] made.
fn remove_entry(root: &OwnedFd, name: &CStr, dir: bool) -> io::Result<()> {
    let flags = if dir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: our directory descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(root.as_raw_fd(), name.as_ptr(), flags) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Descriptors closed together when dropped: one `close_range` for each run of numbers in
/// a row, as the holds of one folder mostly are (a root session holds ~150 in /etc).
struct Closing(Vec<RawFd>);

impl Drop for Closing {
    fn drop(&mut self) {
        self.0.sort_unstable();
        let mut rest = self.0.as_slice();
        while let Some(&low) = rest.first() {
            // The run low, low+1, … (distinct descriptors, each owned once).
            let run = rest
                .iter()
                .enumerate()
                .take_while(|&(i, &fd)| fd == low + i as RawFd)
                .count();
            let high = rest[run - 1];
            // SAFETY: closes exactly the descriptors of this run, which this value owns.
            let ranged =
                unsafe { libc::syscall(libc::SYS_close_range, low as u32, high as u32, 0) } == 0;
            if !ranged {
                for &fd in &rest[..run] {
                    // SAFETY: a descriptor this value owns, closed once.
                    unsafe { libc::close(fd) };
                }
            }
            rest = &rest[run..];
        }
    }
}

/// An entry held by [`hold`].
struct Held {
    fd: OwnedFd,
    /// A detached mount tree (`open_tree`), else an `O_PATH` descriptor.
    detached: bool,
}

/// Binds what descriptor `fd` (an `O_PATH` one) names onto `target`, recursively: the
/// mounts beneath come along (and must, for a user namespace's locked ones).
fn bind_from(fd: &OwnedFd, target: &CStr) -> io::Result<()> {
    let source =
        CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(io::Error::other)?;
    rbind(&source, target)
}

fn bind_onto_itself(c: &CStr) -> io::Result<()> {
    rbind(c, c)
}

/// `mount(source, target, MS_BIND | MS_REC)`.
fn rbind(source: &CStr, target: &CStr) -> io::Result<()> {
    // SAFETY: NUL-terminated strings; the other pointers are null as allowed for MS_BIND.
    let ret = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// [`hide`] of a path the host may remove or replace meanwhile (a credential cache in
/// /tmp, a lock file beside a secret): false, covering nothing, when the path is gone as
/// its cover is mounted; one replaced by an object of the other kind (a file for a
/// directory) is covered as what it is now. The caller must not then leave reads to the
/// view: whatever the host makes at that name later would be readable under no cover
/// ([`ViewMade::uncovered`]).
fn hide_if_there(path: &OsStr) -> io::Result<bool> {
    let mut last = None;
    for _ in 0..4 {
        match hide(path) {
            Ok(()) => return Ok(true),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                match Path::new(path).symlink_metadata() {
                    Err(gone) if gone.kind() == io::ErrorKind::NotFound => return Ok(false),
                    // There again, or of another kind than `hide` saw: once more.
                    _ => last = Some(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::ENOENT)))
}

/// Covers `path` for good: a directory with an empty, read-only tmpfs of mode 000, a file
/// with a read-only bind of /dev/null. The sandbox cannot undo it: it holds no capability,
/// seccomp refuses the mount calls, and Landlock forbids mount changes.
fn hide(path: &OsStr) -> io::Result<()> {
    let target = CString::new(path.as_bytes()).map_err(io::Error::other)?;
    let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let ret = if std::path::Path::new(path).is_dir() {
        // SAFETY: NUL-terminated strings; tmpfs takes its options as a C string.
        unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                flags,
                c"mode=000,size=4k,nr_inodes=1".as_ptr() as *const libc::c_void,
            )
        }
    } else {
        // SAFETY: NUL-terminated strings; a bind then a read-only remount of that bind.
        unsafe {
            let r = libc::mount(
                c"/dev/null".as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            );
            if r < 0 {
                r
            } else {
                libc::mount(
                    std::ptr::null(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REMOUNT | flags,
                    std::ptr::null(),
                )
            }
        }
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Mounts an empty tmpfs of `size` bytes, mode 0700, on the session TMPDIR. It is owned by
/// the shim's ids (root of the sandbox's user namespace, which is the caller's uid outside),
/// and lives only as long as the mount namespace: the host's directory stays empty.
/// An empty tmpfs of its own on `shm`. Writable paths below it (a worktree or an
/// `--allow-write` folder under `/dev/shm`) are opened before the tmpfs covers them and
/// bound back at the same path on it, so they stay the host's while the rest of `shm` is
/// private.
///
/// With `size` (the session TMPDIR's), the tmpfs holds at most that much: its pages are
/// memory that no process owns, so the kernel's OOM killer frees none of it by killing
/// the sandbox's processes while the session lives, and tmpfs's own default is half of the
/// machine's memory.
fn mount_private_shm(shm: &OsStr, writable: &[&OsStr], size: Option<u64>) -> io::Result<()> {
    let shm_path = Path::new(shm);
    let mut below: Vec<&Path> = writable
        .iter()
        .map(Path::new)
        .filter(|p| *p != shm_path && p.starts_with(shm_path))
        .collect();
    // Parents first: a nested path is then found inside its parent's bind.
    below.sort_by_key(|p| p.as_os_str().len());
    let mut kept = Vec::new();
    for path in below {
        let c = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: a NUL-terminated path; the descriptor is owned below.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor, owned from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let is_dir = sys::fd_is_directory(fd.as_raw_fd())?;
        kept.push((path, c, fd, is_dir));
    }
    let options = match size {
        Some(size) => format!("mode=1777,size={size}"),
        None => "mode=1777".to_string(),
    };
    mount_tmpfs(shm, &options)?;
    for (path, target, fd, is_dir) in kept {
        if is_dir {
            std::fs::create_dir_all(path)?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
        }
        bind_from(&fd, &target)?;
    }
    Ok(())
}

fn mount_sized_tmp(path: &OsStr, size: u64) -> io::Result<()> {
    mount_tmpfs(path, &format!("mode=0700,size={size}"))
}

fn mount_tmpfs(path: &OsStr, options: &str) -> io::Result<()> {
    let target = CString::new(path.as_bytes()).map_err(io::Error::other)?;
    let options = CString::new(options).map_err(io::Error::other)?;
    // SAFETY: NUL-terminated strings; tmpfs takes its options as a C string.
    let ret = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr() as *const libc::c_void,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

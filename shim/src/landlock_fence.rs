//! The file fence as a Landlock ruleset: writes only in the writable roots and on a short
//! list of devices; reads everywhere except the denied paths; abstract-socket and signal
//! scopes where the ABI has them.
//!
//! "Everything readable except X" cannot be said to Landlock directly (rights are only
//! granted, downward). It is built by granting every sibling along the path from `/` down
//! to each denied path — a snapshot taken at start: an entry created later beside them is
//! not readable. Ancestors of a denied path keep `ReadDir`, so names in them stay
//! listable while the contents of the denied path are not readable.

use std::collections::HashSet;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::channel::{BoundedDir, SandboxSpec, SpareDir};

/// Whether opening a path for its rule failed because the path was not there (itself or a
/// folder on the way).
fn gone_when_opened(e: &landlock::PathFdError) -> bool {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .and_then(std::io::Error::raw_os_error)
        .is_some_and(|errno| matches!(errno, libc::ENOENT | libc::ENOTDIR))
}

/// Oldest Landlock ABI fence runs on. What ABIs 1 to 5 lack is compensated by other
/// mechanisms ([`Compensation`]); what cannot be compensated on a given host is refused
/// ([`LandlockFenceError::NoScopes`]).
pub const MIN_LANDLOCK_ABI: i32 = 1;

/// Newest Landlock ABI whose rights fence uses; a newer kernel is asked for this one.
pub const NEWEST_USED_ABI: i32 = 7;

/// The Linux release that brought Landlock ABI `abi`.
pub fn kernel_for_abi(abi: i32) -> &'static str {
    match abi {
        ..=1 => "5.13",
        2 => "5.19",
        3 => "6.2",
        4 => "6.7",
        5 => "6.10",
        6 => "6.12",
        7 => "6.15",
        8 => "7.0",
        _ => "7.1",
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LandlockFenceError {
    #[error(
        "Landlock is not available in this kernel (the file fence needs Linux 5.13 or later with Landlock enabled at boot: lsm=...,landlock)"
    )]
    Unsupported,
    #[error(
        "Landlock ABI {0} has no signal or abstract-unix-socket scope (ABI 6, Linux 6.12), and no pid and network namespace could be made to stand in for them"
    )]
    NoScopes(i32),
    #[error(
        "writable path {writable} lies inside the unreadable path {denied}: the fence cannot express this"
    )]
    WritableInsideDenied { writable: PathBuf, denied: PathBuf },
    #[error("cannot read directory {path} while building the read rules: {source}")]
    ReadDir { path: PathBuf, source: io::Error },
    #[error("Landlock rule for {path} failed: {message}")]
    Rule { path: PathBuf, message: String },
    #[error("Landlock ruleset failed: {0}")]
    Ruleset(String),
    #[error(
        "Landlock enforced the ruleset only partially ({0:?}); fence refuses to run weaker than it says"
    )]
    NotFullyEnforced(RulesetStatus),
}

/// What stands in for a Landlock right the ABI in use does not have. Each is a kernel
/// mechanism or a race-free supervisor action, never a check the target can race.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compensation {
    /// ABI 1 has no `REFER` right: Landlock refuses every rename or link across
    /// directories (EXDEV), inside the worktree too. Stricter, so nothing escapes. The
    /// supervisor carries renames and links out itself (as every call that makes a name)
    /// from the paths it checked, so they work; with `--no-write-watch` they fail and
    /// tools that move files between directories fall back to copying.
    NoReparenting,
    /// ABI < 3 does not govern truncation. `truncate(2)` is notified and performed by the
    /// supervisor on the object it checked (or bounded by the read-only mount view);
    /// `O_TRUNC` with `O_RDONLY` is refused by seccomp (as `openat2`, whose flags BPF
    /// cannot see, is at every ABI); `ftruncate` needs a descriptor opened for writing, which Landlock granted
    /// only inside.
    Truncate,
    /// ABI < 4 has no TCP rules: the seccomp socket filter refuses `AF_INET`/`AF_INET6`
    /// outright, or the sandbox's network namespace has nothing but its own loopback.
    TcpBySocketFilter,
    /// ABI < 5 does not govern device ioctls: the devices reachable are the short list,
    /// capabilities are dropped (the state-changing ioctls of `/dev/random` need
    /// CAP_SYS_ADMIN), and seccomp refuses `TIOCSTI` and `TIOCLINUX`.
    DeviceIoctlBySeccomp,
    /// ABI < 6 has no signal scope: the pid namespace keeps other processes unnameable, and
    /// seccomp refuses `kill(0, …)`, whose process group is shared with fence.
    SignalsByPidNamespace,
    /// ABI < 6 has no abstract-unix-socket scope: the sandbox's network namespace has its
    /// own abstract socket table.
    AbstractUnixByNetNamespace,
}

impl Compensation {
    /// One line for the start banner and `fence doctor`.
    pub fn describe(self) -> &'static str {
        match self {
            Compensation::NoReparenting => {
                "no Landlock REFER right (ABI 2, Linux 5.19): fence carries renames and links out itself (with --no-write-watch, those across directories fail with EXDEV)"
            }
            Compensation::Truncate => {
                "no Landlock truncate right (ABI 3, Linux 6.2): truncate(2) is performed by fence on the checked file, O_RDONLY|O_TRUNC is refused"
            }
            Compensation::TcpBySocketFilter => {
                "no Landlock TCP rules (ABI 4, Linux 6.7): network stays denied by the seccomp socket filter or the network namespace"
            }
            Compensation::DeviceIoctlBySeccomp => {
                "no Landlock device-ioctl right (ABI 5, Linux 6.10): only the short device list is reachable; TIOCSTI and TIOCLINUX are refused by seccomp"
            }
            Compensation::SignalsByPidNamespace => {
                "no Landlock signal scope (ABI 6, Linux 6.12): the pid namespace confines signals; kill(0, …) is refused by seccomp"
            }
            Compensation::AbstractUnixByNetNamespace => {
                "no Landlock abstract-socket scope (ABI 6, Linux 6.12): the network namespace confines abstract unix sockets"
            }
        }
    }
}

impl Compensation {
    /// A few words for the start banner, which keeps to one line.
    pub fn short(self) -> &'static str {
        match self {
            Compensation::NoReparenting => "no REFER: fence carries out renames",
            Compensation::Truncate => "no TRUNCATE: fence performs truncate",
            Compensation::TcpBySocketFilter => "no TCP rules: socket filter",
            Compensation::DeviceIoctlBySeccomp => "no IOCTL_DEV: device list and seccomp",
            Compensation::SignalsByPidNamespace => {
                "no signal scope: pid namespace, kill(0) refused"
            }
            Compensation::AbstractUnixByNetNamespace => {
                "no abstract-socket scope: network namespace"
            }
        }
    }
}

/// The Landlock ABI fence builds its ruleset for: the kernel's, lowered to `cap` when one
/// is given (a cap never raises it), and never above [`NEWEST_USED_ABI`].
pub fn effective_abi(kernel_abi: i32, cap: Option<i32>) -> i32 {
    let abi = kernel_abi.clamp(0, NEWEST_USED_ABI);
    match cap {
        Some(c) => abi.min(c.max(0)),
        None => abi,
    }
}

/// What the sandbox may touch, in Landlock terms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FencePlan {
    /// The ABI the ruleset is built for.
    pub abi: i32,
    /// Granted read and execute beneath.
    pub read: Vec<PathBuf>,
    /// Granted only `ReadDir` beneath: ancestors of denied paths, so listing works.
    pub list_only: Vec<PathBuf>,
    /// Granted every right beneath.
    pub read_write: Vec<PathBuf>,
    /// Granted write rights but not read: writable roots that contain a denied path (its
    /// readable parts come from `read`).
    pub write_only: Vec<PathBuf>,
    /// Directories of the writable roots where a protected name may be made (see
    /// [`Holders`]): granted every right but those in [`FencePlan::held_back`].
    pub held: Vec<PathBuf>,
    /// The same, in a writable root that contains a denied path (write rights only).
    pub held_write_only: Vec<PathBuf>,
    /// Held directories keep the rights to remove names: with a mount view `.git` and
    /// `.claude` are mount points (never removed or renamed) and the protected paths that
    /// exist are read-only mounts.
    pub held_keep_removes: bool,
    /// The directories granted every right of their class (`read_write`, `write_only`)
    /// and known to hold no protected path beneath them, where Landlock alone bounds any
    /// name the sandbox makes; empty when this plan grants a held right somewhere above a
    /// held directory (then nothing is bounded that way). The supervisor lets a call that
    /// makes a name go to the kernel (`CONTINUE`) only beneath one of these.
    pub bounded: Vec<PathBuf>,
    /// The folders of `read_write` and `write_only` beneath a git directory
    /// (`.git/logs`, `.git/refs`, `.git/objects`…): granted their rights but `MakeSym`, so
    /// that no symbolic link is made there for the user's git to follow later
    /// (`protected_paths::in_git_directory`), whatever path a racing thread swaps in. A
    /// symlink moved there from elsewhere needs the right too.
    pub no_symlinks: Vec<PathBuf>,
    /// Devices granted read, write and ioctl.
    pub devices_rw: Vec<PathBuf>,
    /// Devices granted read only.
    pub devices_ro: Vec<PathBuf>,
    /// Handle TCP bind/connect (with no rule: all refused).
    pub deny_tcp: bool,
    /// Grant `MakeSock` nowhere: while writes are watched the supervisor carries every
    /// pathname unix `bind` out itself from the checked address, so a `bind` the kernel
    /// runs for the sandbox (one whose address a racing thread changed after a check saw
    /// no pathname in it) can make no socket file.
    pub sockets_by_supervisor: bool,
    /// Scope abstract unix sockets and signals to the sandbox.
    pub scopes: bool,
    /// What stands in for the rights this ABI lacks.
    pub compensations: Vec<Compensation>,
    /// With `--allow-degraded`: what this ABI lacks and nothing here stands in for.
    pub uncompensated: Vec<String>,
    /// The mount view keeps every secret path unreadable by itself (`mount_view`): the
    /// ruleset then handles no read right (nor `Execute`, which exec notification and the
    /// same mounts cover), so an `open` for reading costs Landlock nothing; and no
    /// `Truncate`, which every `open` requests too (to remember whether the file may later
    /// be truncated). Truncation is then bounded as below ABI 3 ([`Compensation::Truncate`]):
    /// read-only mounts outside the writable roots, `truncate(2)` performed by the
    /// supervisor, `O_RDONLY|O_TRUNC` refused by seccomp, and `ftruncate` needing a
    /// descriptor opened for writing, which Landlock grants only where writes may go.
    pub reads_by_mounts: bool,
}

impl FencePlan {
    /// The rights a held directory does not get: making names, writing and truncating
    /// files (a protected file made or replaced on the host during the session has no
    /// read-only mount), and without a mount view also removing.
    pub fn held_back(&self) -> BitFlags<AccessFs> {
        let make = AccessFs::MakeChar
            | AccessFs::MakeDir
            | AccessFs::MakeReg
            | AccessFs::MakeSock
            | AccessFs::MakeFifo
            | AccessFs::MakeBlock
            | AccessFs::MakeSym;
        let write = make | AccessFs::WriteFile | AccessFs::Truncate;
        if self.held_keep_removes {
            write
        } else {
            write | AccessFs::RemoveFile | AccessFs::RemoveDir
        }
    }

    /// Whether seccomp must refuse the truncating opens Landlock does not see (ABI < 3, or
    /// a ruleset that leaves truncation alone).
    pub fn needs_truncate_guard(&self) -> bool {
        self.compensations.contains(&Compensation::Truncate) || self.reads_by_mounts
    }

    /// Whether the ruleset governs truncation (else the supervisor performs `truncate(2)`).
    pub fn handles_truncate(&self) -> bool {
        handled_fs_access(self).contains(AccessFs::Truncate)
    }

    /// Whether seccomp must refuse `kill(0, …)` (no signal scope).
    pub fn needs_group_kill_guard(&self) -> bool {
        self.compensations
            .contains(&Compensation::SignalsByPidNamespace)
    }
}

/// The compensations fence applies at Landlock ABI `abi` with namespaces `ns`, or the
/// reason it cannot run there. Pure: the table of what each ABI lacks.
pub fn compensations(
    abi: i32,
    ns: crate::channel::Namespaces,
) -> Result<Vec<Compensation>, LandlockFenceError> {
    if abi <= 0 {
        return Err(LandlockFenceError::Unsupported);
    }
    let mut out = Vec::new();
    if abi < 2 {
        out.push(Compensation::NoReparenting);
    }
    if abi < 3 {
        // truncate(2) stays notified even under --no-write-watch.
        out.push(Compensation::Truncate);
    }
    if abi < 4 {
        out.push(Compensation::TcpBySocketFilter);
    }
    if abi < 5 {
        out.push(Compensation::DeviceIoctlBySeccomp);
    }
    if abi < 6 {
        if !(ns.pid && ns.net) {
            return Err(LandlockFenceError::NoScopes(abi));
        }
        out.push(Compensation::SignalsByPidNamespace);
        out.push(Compensation::AbstractUnixByNetNamespace);
    }
    Ok(out)
}

/// Devices every session may read and write (SPEC §2).
pub const DEVICES_RW: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/shm",
];
/// Where the sandbox gets a private `/tmp` ([`crate::channel::SandboxSpec::private_tmp`]).
pub const PRIVATE_TMP: &str = "/tmp";

/// Devices every session may read.
pub const DEVICES_RO: [&str; 2] = ["/dev/random", "/dev/urandom"];

/// Works out the plan for `spec` on a kernel with Landlock ABI `kernel_abi`, capped by
/// `spec.landlock_abi_max`.
pub fn plan(spec: &SandboxSpec, kernel_abi: i32) -> Result<FencePlan, LandlockFenceError> {
    let abi = effective_abi(kernel_abi, spec.landlock_abi_max);
    let ns = spec.namespaces;
    let mut uncompensated = Vec::new();
    let compensations = match compensations(abi, ns) {
        Ok(list) => list,
        // --allow-degraded: keep the file fence this ABI has, and say what is missing. The
        // seccomp guards of every compensation still apply.
        Err(e @ LandlockFenceError::NoScopes(_)) if spec.allow_degraded => {
            uncompensated.push(e.to_string());
            let all_namespaces = crate::channel::Namespaces {
                user: ns.user,
                pid: true,
                mount: true,
                net: true,
                ipc: true,
            };
            compensations(abi, all_namespaces)?
        }
        Err(e) => return Err(e),
    };
    let scopes = abi >= 6;

    // /dev is denied as a whole; the short device list is granted back below.
    let mut denied: Vec<PathBuf> = spec.deny_read.iter().map(PathBuf::from).collect();
    denied.push(PathBuf::from("/dev"));
    // With a mount view that hides every secret itself (frozen listings where one is
    // missing, a minimal /dev), Landlock carves nothing and handles no read right.
    // Otherwise it carves every secret, those the view covers too: a cover on the host's
    // own name goes away if the host replaces the file by a rename.
    let reads_by_mounts = ns.mount && ns.pid && spec.reads_by_mounts;
    let mut carved: Vec<PathBuf> = if reads_by_mounts {
        Vec::new()
    } else {
        denied.clone()
    };

    // --read-only-worktree: the worktree keeps only the read rights every path has.
    let mut writable: Vec<PathBuf> = vec![PathBuf::from(&spec.tmpdir)];
    if !spec.read_only_worktree {
        writable.insert(0, PathBuf::from(&spec.worktree));
    }
    writable.extend(spec.allow_write.iter().map(PathBuf::from));
    // The private /tmp: the TMPDIR's tmpfs again (its rule is on the same inode), named so
    // that the supervisor knows the calls beneath it bounded.
    if spec.private_tmp && ns.mount {
        writable.push(PathBuf::from(PRIVATE_TMP));
    }
    // Secret paths missing at start, in every mode: no mount can cover what does not exist,
    // and a grant of their parent would open one made later. One inside a writable root
    // is left to that root (the sandbox could make it there itself).
    carved.extend(
        spec.deny_read_missing
            .iter()
            .map(PathBuf::from)
            .filter(|m| !reads_by_mounts && !writable.iter().any(|w| m.starts_with(w))),
    );

    let mut plan = FencePlan {
        abi,
        deny_tcp: !ns.net && abi >= 4,
        sockets_by_supervisor: !spec.no_write_watch,
        scopes,
        compensations,
        uncompensated,
        reads_by_mounts,
        ..FencePlan::default()
    };
    for w in &writable {
        // /dev is denied only to grant back its short list, /dev/shm among them.
        let granted_back =
            |d: &&PathBuf| d.as_path() == Path::new("/dev") && w.starts_with("/dev/shm");
        if let Some(d) = denied
            .iter()
            .filter(|d| !granted_back(d))
            .find(|d| w.starts_with(d))
        {
            return Err(LandlockFenceError::WritableInsideDenied {
                writable: w.clone(),
                denied: d.clone(),
            });
        }
    }
    // While writes are watched, the supervisor carries out what a held directory does
    // not allow; without it, every writable root is granted whole.
    let bases: Vec<PathBuf> = std::iter::once(&spec.worktree)
        .chain(&spec.rule_bases)
        .map(PathBuf::from)
        .collect();
    let mut protected: Vec<PathBuf> = spec.protected.iter().map(PathBuf::from).collect();
    // A secret the carve keeps unreadable inside a writable root: the folders on its way
    // are held as well, and the secret gets no rule of its own. A whole grant there would
    // let the kernel give the secret a new name (a `link` or `rename` whose path a racing
    // thread swaps after the supervisor checked a decoy): a name made during the session,
    // which a rename carried out by the supervisor could then move where reads are granted.
    // Held, every name made there is made by the supervisor from the path it checked, and
    // the secret, moved or linked out of its folder, would gain rights it lacks there
    // (Landlock refuses that reparenting).
    protected.extend(
        carved
            .iter()
            .filter(|c| writable.iter().any(|w| c.starts_with(w) && *c != w))
            .cloned(),
    );
    let holders = Holders {
        bases: &bases,
        protected: &protected,
    };
    let (mut held, mut whole) = (Vec::new(), Vec::new());
    if spec.no_write_watch {
        whole.clone_from(&writable);
    } else {
        let mut budget = MOST_SPLIT_RULES;
        for w in &writable {
            split_writable(w, &holders, &mut held, &mut whole, &mut budget);
        }
    }
    held.sort();
    held.dedup();
    whole.sort();
    whole.dedup();
    let write_only = |p: &PathBuf| carved.iter().any(|d| d.starts_with(p));
    for p in whole {
        if write_only(&p) {
            plan.write_only.push(p);
        } else {
            plan.read_write.push(p);
        }
    }
    for p in held {
        if write_only(&p) {
            plan.held_write_only.push(p);
        } else {
            plan.held.push(p);
        }
    }
    if !spec.no_write_watch {
        plan.no_symlinks = plan
            .read_write
            .iter()
            .chain(&plan.write_only)
            .filter(|p| in_a_git_directory(p, &bases))
            .cloned()
            .collect();
    }
    plan.held_keep_removes = ns.mount;
    if !reads_by_mounts {
        let mut carve = Carve::new(&carved);
        grant_read_except(Path::new("/"), &mut carve, &mut plan)?;
    }

    // `/dev/ptmx` only with a devpts of the sandbox's own: the host's would hand out the
    // machine's pseudo-terminals (every one of them, to a sandbox opening it in a loop, and
    // no terminal, ssh login or tmux pane of the user's could then be made), and without
    // that devpts the other side of a terminal made there cannot be opened anyway.
    let own_pts = spec.private_pts && ns.mount;
    plan.devices_rw = DEVICES_RW
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists() && (own_pts || p != Path::new("/dev/ptmx")))
        .collect();
    // The sandbox's own devpts holds only its own terminals; the session's is then at
    // /dev/console.
    if own_pts {
        plan.devices_rw.push(PathBuf::from("/dev/pts"));
    }
    if let Some(tty) = &spec.session_tty {
        plan.devices_rw.push(if own_pts {
            PathBuf::from("/dev/console")
        } else {
            PathBuf::from(tty)
        });
    }
    // A worktree under /dev/shm: the device folder is split as a writable root is, so
    // that its whole grant does not reach the held folders.
    if !spec.no_write_watch {
        let (mut held, mut whole) = (Vec::new(), Vec::new());
        let mut budget = MOST_SPLIT_RULES;
        plan.devices_rw.retain(|d| {
            if d.is_dir() && holders.holds(d) {
                split_writable(d, &holders, &mut held, &mut whole, &mut budget);
                false
            } else {
                true
            }
        });
        plan.held.extend(held);
        plan.read_write.extend(whole);
    }
    if !reads_by_mounts {
        plan.devices_ro = DEVICES_RO
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect();
        if Path::new("/dev").is_dir() {
            plan.list_only.push(PathBuf::from("/dev"));
        }
    }
    // The whole grants bound the names made beneath them only if no rule grants a held
    // right on a held directory: a writable device directory (/dev/shm) above the
    // worktree would.
    let held_dirs = || plan.held.iter().chain(&plan.held_write_only);
    let above_a_held = plan
        .read_write
        .iter()
        .chain(&plan.write_only)
        .chain(plan.devices_rw.iter().filter(|d| d.is_dir()))
        .any(|g| held_dirs().any(|h| h.starts_with(g)));
    if !spec.no_write_watch && !above_a_held {
        plan.bounded = plan
            .read_write
            .iter()
            .chain(&plan.write_only)
            .cloned()
            .collect();
    }
    Ok(plan)
}

/// Most directories a plan grants one by one inside held directories; beyond it the rest
/// get no rule of their own (the supervisor carries their writes out).
const MOST_SPLIT_RULES: usize = 4096;

/// Where protected names may be made in the writable roots.
///
/// Landlock cannot keep one name from being made in a directory where others may be, and
/// a protected path that does not exist yet (`.envrc`, `.vscode/`, `.git/hooks/x`) lies in
/// a writable directory. So the directories that may hold one — the worktree's root and
/// every directory above it inside a writable root, `.git`, `.claude`, `.git/modules` and
/// the submodule git directories beneath, the folders above a profile's protected
/// settings — are *held*: granted no right to make names (and, without a mount view whose
/// read-only binds cover the protected paths that exist, none to write, truncate or
/// remove either). Their other subdirectories are granted whole, the protected ones
/// (`.git/hooks`, `.vscode`…) not at all. The supervisor carries out every call the held
/// directories refuse, from the path it checked; a call it lets go to the kernel can make
/// names only where no protected path can be, whatever path a racing thread swaps in.
struct Holders<'a> {
    /// The worktree, then the other folders protected as it is (`SandboxSpec::rule_bases`).
    bases: &'a [PathBuf],
    protected: &'a [PathBuf],
}

impl Holders<'_> {
    /// Whether a protected name may be made in `dir` or beneath it.
    fn holds(&self, dir: &Path) -> bool {
        self.bases.iter().any(|base| {
            base.starts_with(dir)
                || dir.strip_prefix(base).is_ok_and(|rel| {
                    // Everything under .git/modules: a submodule's name may hold slashes,
                    // so any folder there may be a submodule's git directory; and the
                    // linked worktrees' folders (their `commondir` names a git directory).
                    let key = crate::protected_paths::name_key(rel);
                    crate::protected_paths::holds_protected(rel)
                        || key.starts_with(".git/modules")
                        || key.starts_with(".git/worktrees")
                })
        }) || self
            .protected
            .iter()
            .any(|p| p.starts_with(dir) && p != dir)
    }

    /// Whether `dir` is itself protected (it gets no rule: the held rights above it apply).
    fn sealed(&self, dir: &Path) -> bool {
        self.bases.iter().any(|base| {
            dir.strip_prefix(base).is_ok_and(|rel| {
                !rel.as_os_str().is_empty() && crate::protected_paths::is_protected(rel)
            })
        }) || self.protected.iter().any(|p| dir.starts_with(p))
    }
}

/// Whether a directory at `dir` (absolute, resolved) would be granted whole by a plan for
/// these rule bases (the worktree first) and protected paths: no protected name can be
/// made in it or beneath it, and it is not protected itself ([`Holders`]). A new folder
/// the supervisor makes from a spare folder, which the ruleset grants whole, must be one.
pub fn grants_whole(dir: &Path, bases: &[PathBuf], protected: &[PathBuf]) -> bool {
    let holders = Holders { bases, protected };
    // A folder beneath a git directory is granted without `MakeSym` ([`FencePlan::no_symlinks`]);
    // a spare folder would carry the right there.
    !holders.sealed(dir) && !holders.holds(dir) && !in_a_git_directory(dir, bases)
}

/// Whether `dir` lies beneath a `.git` directory of one of `bases`.
fn in_a_git_directory(dir: &Path, bases: &[PathBuf]) -> bool {
    bases.iter().any(|base| {
        dir.strip_prefix(base)
            .is_ok_and(crate::protected_paths::in_git_directory)
    })
}

/// Sorts writable root `dir` into `held` and `whole` grants (see [`Holders`]), reading the
/// entries of held directories. What cannot be read, symlinks, files, and directories
/// past `budget` get no rule of their own: the held rights above them apply, and the
/// supervisor carries out their writes.
fn split_writable(
    dir: &Path,
    holders: &Holders<'_>,
    held: &mut Vec<PathBuf>,
    whole: &mut Vec<PathBuf>,
    budget: &mut usize,
) {
    if holders.sealed(dir) {
        return;
    }
    if !holders.holds(dir) {
        whole.push(dir.to_path_buf());
        return;
    }
    held.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        split_writable(&entry.path(), holders, held, whole, budget);
    }
}

/// What the carve keeps out of its grants. A Landlock rule holds an inode, not a path,
/// and an access is allowed when a rule grants it on any folder of the walk from the file
/// up to the root, crossing from a mount's root to its mount point: a grant on a path that
/// is another name of a secret, or of a folder on a secret's walk (`/mnt` for a bind of `/`
/// at `/mnt/host`, reached again as `/mnt/host/mnt`), would open the secret under its own
/// name. So grants are judged by inode as well as by path.
struct Carve<'a> {
    denied: &'a [PathBuf],
    /// (device, inode) of each existing denied path.
    secrets: HashSet<(u64, u64)>,
    /// (device, inode) of every folder on the walk up from a denied path (its existing
    /// ancestors by path, each as a lookup finds it: a mount point as its mount's root).
    on_walk: HashSet<(u64, u64)>,
    /// The folders the walk is in, by inode: a folder reached again beneath itself (a
    /// recursive bind of `/` inside itself) is not walked again, so the walk ends. Another
    /// name elsewhere is walked as its own (a bind of `/var` at `/mnt/v` must not keep
    /// `/var` and the mounts beneath it from their grants).
    walking: Vec<(u64, u64)>,
    /// The mount points of this namespace: an entry there is identified by a `stat` (its
    /// listing's inode number is the covered one's). `None` when the table could not be
    /// read: every entry is then looked up.
    mount_points: Option<HashSet<PathBuf>>,
}

impl<'a> Carve<'a> {
    fn new(denied: &'a [PathBuf]) -> Carve<'a> {
        let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        let secrets = denied.iter().filter_map(|d| id(d)).collect();
        let on_walk = denied
            .iter()
            .flat_map(|d| d.ancestors().skip(1))
            .filter_map(id)
            .collect();
        let mount_points = crate::mount_aliases::table()
            .ok()
            .map(|t| t.into_iter().map(|m| m.point).collect());
        Carve {
            denied,
            secrets,
            on_walk,
            walking: Vec::new(),
            mount_points,
        }
    }
}

/// Grants read beneath `path` except beneath any of the carve's denied paths: `path`
/// itself when no denied path lies in it and it is no folder on a denied path's walk (by
/// inode, [`Carve`]), else each of its entries in turn; nothing on a denied path or
/// another name of one. Symlinks get no rule: access through one is judged on the object
/// it reaches, so a link to a secret does not open it.
fn grant_read_except(
    path: &Path,
    carve: &mut Carve<'_>,
    plan: &mut FencePlan,
) -> Result<(), LandlockFenceError> {
    let id = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    grant_read_except_known(path, id, carve, plan)
}

/// [`grant_read_except`], with `path`'s (device, inode) as the caller found it.
fn grant_read_except_known(
    path: &Path,
    id: Option<(u64, u64)>,
    carve: &mut Carve<'_>,
    plan: &mut FencePlan,
) -> Result<(), LandlockFenceError> {
    let denied = carve.denied;
    // A secret, or a file staged beside one, which a rename may make the secret: a grant
    // holds the inode.
    let staged = |d: &PathBuf| {
        d.parent() == path.parent()
            && matches!((d.file_name(), path.file_name()), (Some(s), Some(n))
                if crate::mount_view::is_staged_beside(n.as_bytes(), s.as_bytes()))
    };
    if denied.iter().any(|d| d == path || staged(d))
        || id.is_some_and(|id| carve.secrets.contains(&id))
    {
        return Ok(());
    }
    let on_walk = id.is_some_and(|id| carve.on_walk.contains(&id));
    if !on_walk && !denied.iter().any(|d| d.starts_with(path)) {
        plan.read.push(path.to_path_buf());
        return Ok(());
    }
    if id.is_some_and(|id| carve.walking.contains(&id)) {
        return Ok(());
    }
    plan.list_only.push(path.to_path_buf());
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        // Unsearchable by us means unreadable by the sandbox too: no grant is the fence.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => return Ok(()),
        Err(e) => {
            return Err(LandlockFenceError::ReadDir {
                path: path.to_path_buf(),
                source: e,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|e| LandlockFenceError::ReadDir {
            path: path.to_path_buf(),
            source: e,
        })?;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        let child = entry.path();
        // A file's identity is its listing's inode number on this folder's device. A
        // folder's is looked up: it may be a mount point (its listing's number is the
        // covered folder's) or a btrfs subvolume (a device of its own); so is a mount
        // point that is a file.
        let child_id = if kind.is_dir()
            || carve
                .mount_points
                .as_ref()
                .is_none_or(|points| points.contains(&child))
        {
            std::fs::metadata(&child).ok().map(|m| (m.dev(), m.ino()))
        } else {
            id.map(|(dev, _)| (dev, entry.ino()))
        };
        carve.walking.extend(id);
        let granted = grant_read_except_known(&child, child_id, carve, plan);
        if id.is_some() {
            carve.walking.pop();
        }
        granted?;
    }
    Ok(())
}

/// The filesystem rights the ruleset for `plan` handles: every right of its ABI, less the
/// read rights and `Truncate` when the mount view keeps secrets unreadable
/// ([`FencePlan::reads_by_mounts`]).
pub fn handled_fs_access(plan: &FencePlan) -> BitFlags<AccessFs> {
    let abi = ABI::from(plan.abi);
    let all = AccessFs::from_all(abi);
    if plan.reads_by_mounts {
        all & !(AccessFs::from_read(abi) | AccessFs::Truncate)
    } else {
        all
    }
}

/// Confines the calling *thread* (Landlock applies to the thread that restricts itself and
/// what it later creates) so that it can make unix socket files only beneath `dir`. The
/// supervisor binds a sandboxed process's socket from such a thread, to the directory it
/// checked: the kernel, not a check the process could race, then keeps the socket file
/// there whatever the filesystem holds by the time of the bind.
pub fn restrict_thread_to_sockets_beneath(
    dir: std::os::fd::BorrowedFd<'_>,
) -> Result<(), LandlockFenceError> {
    sockets_beneath(dir)?
        .restrict_self()
        .map_err(|e| LandlockFenceError::Ruleset(e.to_string()))?;
    Ok(())
}

/// The ruleset of [`restrict_thread_to_sockets_beneath`] and [`sockets_beneath_ruleset`]:
/// it handles making socket files alone, and grants it beneath `dir`.
fn sockets_beneath(
    dir: std::os::fd::BorrowedFd<'_>,
) -> Result<landlock::RulesetCreated, LandlockFenceError> {
    let rs_err = |e: landlock::RulesetError| LandlockFenceError::Ruleset(e.to_string());
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::MakeSock)
        .map_err(rs_err)?
        .create()
        .map_err(rs_err)?
        .add_rule(PathBeneath::new(dir, AccessFs::MakeSock))
        .map_err(rs_err)
}

/// A Landlock ruleset that lets its domain make socket files only beneath `dir` (and handles
/// nothing else), not yet enforced: for a process that enforces it itself
/// (`landlock_restrict_self` on the descriptor) where it may not run library code, a child
/// forked from a multi-threaded one.
pub fn sockets_beneath_ruleset(
    dir: std::os::fd::BorrowedFd<'_>,
) -> Result<std::os::fd::OwnedFd, LandlockFenceError> {
    Option::<std::os::fd::OwnedFd>::from(sockets_beneath(dir)?)
        .ok_or_else(|| LandlockFenceError::Ruleset("Landlock is not available".into()))
}

/// Opens a directory of a writable root for its rule (`O_PATH`), refusing any symlink on
/// the way (`openat2` with `RESOLVE_NO_SYMLINKS`): the plan sorted these directories by
/// their names, and a directory swapped for a symlink since (by another process working
/// in the same worktree) must not carry its grant to where the link leads. The paths
/// are canonical (a writable root and the real directories read beneath it).
pub(crate) fn open_directory_nofollow(path: &Path) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: open_how is plain data.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: a valid open_how with its size, a NUL-terminated path.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether `fd` (a rule's `O_PATH` descriptor) is open on a directory.
fn is_directory_fd(fd: &impl std::os::fd::AsFd) -> bool {
    use std::os::fd::AsRawFd;
    crate::sys::fd_is_directory(fd.as_fd().as_raw_fd()).unwrap_or(false)
}

/// The device and inode numbers of an open directory.
pub(crate) fn identity(fd: &std::os::fd::OwnedFd) -> io::Result<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let st = crate::sys::fstat(fd.as_raw_fd())?;
    Ok((st.st_dev, st.st_ino))
}

/// Creates the ruleset for `plan` and restricts the calling thread with it. Every
/// requested right must be enforced (hard requirement): a partial result is an error.
/// Returns the directories granted whole that bound the names made beneath them
/// ([`FencePlan::bounded`]), as their rules were attached, and the spare folders granted.
///
/// `spares`: folders of the spare pool (opened `O_PATH`, named by their pool names), each
/// granted whole as a directory of the worktree that exists at start is. They are granted
/// only where writes are watched and a grant bounds something ([`FencePlan::bounded`]):
/// the supervisor moves one into place as a new folder the sandbox asked to make in a held
/// directory, and what is made beneath it then goes to the kernel. Until then the sandbox
/// cannot reach them (they lie under a protected, read-only mount of its view).
pub fn restrict_self(
    plan: &FencePlan,
    spares: &[(std::ffi::OsString, std::os::fd::OwnedFd)],
) -> Result<(Vec<BoundedDir>, Vec<SpareDir>), LandlockFenceError> {
    let abi = ABI::from(plan.abi);
    let all = handled_fs_access(plan);
    let read = AccessFs::from_read(abi);
    let write = AccessFs::from_write(abi);
    let rs_err = |e: landlock::RulesetError| LandlockFenceError::Ruleset(e.to_string());

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(rs_err)?;
    if plan.deny_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(rs_err)?;
    }
    if plan.scopes {
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(rs_err)?;
    }
    let mut created = ruleset.create().map_err(rs_err)?;

    let held_back = plan.held_back();
    let groups: [(&[PathBuf], BitFlags<AccessFs>); 8] = [
        (&plan.read, read),
        (&plan.list_only, BitFlags::from(AccessFs::ReadDir)),
        (&plan.read_write, all),
        (&plan.write_only, write),
        (&plan.held, all & !held_back),
        (&plan.held_write_only, write & !held_back),
        (&plan.devices_rw, all),
        (&plan.devices_ro, read),
    ];
    let mut bounded = Vec::new();
    for (group, (paths, access)) in groups.into_iter().enumerate() {
        // A rule may grant only handled rights, and must grant one.
        let access = access & all;
        let access = if plan.sockets_by_supervisor {
            access & !AccessFs::MakeSock
        } else {
            access
        };
        if access.is_empty() {
            continue;
        }
        // The writable directories (groups 2 to 5) were sorted by name when writes are
        // watched: their rules are attached to what the names hold now, never through a
        // symlink.
        let writable = (2..=5).contains(&group) && !plan.bounded.is_empty();
        for path in paths {
            let access = if plan.no_symlinks.contains(path) {
                access & !AccessFs::MakeSym
            } else {
                access
            };
            if writable {
                let fd = match open_directory_nofollow(path) {
                    Ok(fd) => fd,
                    // Gone, swapped for a symlink, or no openat2 (an outer filter): no
                    // grant of its own, which is the safe side (the supervisor carries
                    // out what the rights above it refuse).
                    Err(_) => continue,
                };
                let id = identity(&fd);
                created = created
                    .add_rule(PathBeneath::new(&fd, access))
                    .map_err(|e| LandlockFenceError::Rule {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
                if let Ok((dev, ino)) = id
                    && plan.bounded.contains(path)
                {
                    bounded.push(BoundedDir {
                        path: path.as_os_str().to_owned(),
                        dev,
                        ino,
                    });
                }
                continue;
            }
            let fd = match PathFd::new(path) {
                Ok(fd) => fd,
                // Gone since planning (even if a new one has the name by now: a lock file
                // the host makes and removes), or unsearchable: no grant, which is the safe
                // side.
                Err(e) if gone_when_opened(&e) || !path.exists() => continue,
                Err(e) => {
                    return Err(LandlockFenceError::Rule {
                        path: path.clone(),
                        message: e.to_string(),
                    });
                }
            };
            let access = if is_directory_fd(&fd) {
                access
            } else {
                access & AccessFs::from_file(abi)
            };
            if access.is_empty() {
                continue;
            }
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| LandlockFenceError::Rule {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
        }
    }
    let mut granted = Vec::new();
    if !plan.bounded.is_empty() {
        // The rights of `read_write` (group 2 above).
        let access = if plan.sockets_by_supervisor {
            all & !AccessFs::MakeSock
        } else {
            all
        };
        for (name, fd) in spares {
            let Ok((dev, ino)) = identity(fd) else {
                continue;
            };
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| LandlockFenceError::Rule {
                    path: PathBuf::from(name),
                    message: e.to_string(),
                })?;
            granted.push(SpareDir {
                name: name.clone(),
                dev,
                ino,
            });
        }
    }
    let status = created.restrict_self().map_err(rs_err)?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(LandlockFenceError::NotFullyEnforced(status.ruleset));
    }
    Ok((bounded, granted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::Namespaces;

    #[test]
    fn a_path_gone_when_its_rule_is_made_is_told_from_other_open_failures() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("gone");
        assert!(gone_when_opened(&PathFd::new(&missing).unwrap_err()));
        let file = d.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(gone_when_opened(
            &PathFd::new(file.join("below")).unwrap_err()
        ));
        assert!(!gone_when_opened(&PathFd::new("a\0b").unwrap_err()));
    }

    fn spec(root: &Path, deny: &[&Path]) -> SandboxSpec {
        SandboxSpec {
            argv: vec!["true".into()],
            env: vec![],
            cwd: root.join("wt").into(),
            worktree: root.join("wt").into(),
            tmpdir: root.join("tmp").into(),
            allow_write: vec![],
            deny_read: deny.iter().map(|p| p.as_os_str().to_owned()).collect(),
            deny_read_missing: vec![],
            deny_read_via: vec![],
            homes: vec![],
            session_tty: None,
            namespaces: Namespaces::default(),
            uid: 0,
            gid: 0,
            allow_degraded: false,
            nproc_limit: None,
            pid_max: None,
            tmp_size: None,
            landlock_abi_max: None,
            read_only_worktree: false,
            no_write_watch: false,
            batch_scheduling: false,
            pass_fds: vec![],
            cgroup_kill: None,
            allow_dns: false,
            protected: vec![],
            rule_bases: vec![],
            spare_pool: None,
            private_tmp: false,
            reads_by_mounts: false,
            private_pts: false,
        }
    }

    const ALL_NAMESPACES: Namespaces = Namespaces {
        user: false,
        pid: true,
        mount: true,
        net: true,
        ipc: true,
    };

    /// The seccomp settings worked out before the view is made (to build the program
    /// meanwhile) are those the target comes to with its plan, wherever the view hides the
    /// secrets and the plan holds: else every start would build its program twice.
    #[test]
    fn the_seccomp_settings_expected_ahead_are_the_targets() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("wt/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let mut checked = 0;
        for abi in 1..=NEWEST_USED_ABI {
            for bits in 0..32u8 {
                let ns = Namespaces {
                    user: bits & 1 != 0,
                    pid: bits & 2 != 0,
                    mount: bits & 4 != 0,
                    net: bits & 8 != 0,
                    ipc: bits & 16 != 0,
                };
                for (no_write_watch, allow_dns) in [(false, false), (true, false), (false, true)] {
                    let mut s = spec(dir.path(), &[&home.join("src")]);
                    s.namespaces = ns;
                    s.no_write_watch = no_write_watch;
                    s.allow_dns = allow_dns;
                    // As the supervisor sends it, before the view.
                    let expected = crate::target_process::expected_settings(&s, abi);
                    // As the view leaves it when it hides every secret.
                    s.reads_by_mounts = ns.mount && ns.pid;
                    let Ok(plan) = plan(&s, abi) else {
                        continue;
                    };
                    let actual = crate::target_process::fenced_settings(
                        &s,
                        Some(&plan),
                        plan.abi,
                        plan.deny_tcp,
                    );
                    assert_eq!(expected, Some(actual), "ABI {abi}, {ns:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked} settings checked");
    }

    #[test]
    fn a_mount_view_that_hides_every_secret_leaves_landlock_the_writes_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("wt/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let mut s = spec(dir.path(), &[&home.join("src")]);
        s.namespaces = ALL_NAMESPACES;
        s.deny_read_missing = vec![home.join(".netrc").into()];
        s.reads_by_mounts = true;
        let plan = plan(&s, 7).unwrap();
        assert!(plan.reads_by_mounts);
        assert!(plan.read.is_empty() && plan.list_only.is_empty() && plan.devices_ro.is_empty());
        let handled = handled_fs_access(&plan);
        for right in [
            AccessFs::ReadFile,
            AccessFs::ReadDir,
            AccessFs::Execute,
            AccessFs::Truncate,
        ] {
            assert!(!handled.contains(right), "{right:?} handled");
        }
        assert!(handled.contains(AccessFs::WriteFile) && handled.contains(AccessFs::MakeReg));
        // Truncation is then bounded as below ABI 3.
        assert!(plan.needs_truncate_guard() && !plan.handles_truncate());
        // The worktree stays split: its root held, its other folders granted whole.
        assert!(plan.held.contains(&dir.path().join("wt")));
        assert!(plan.read_write.contains(&dir.path().join("wt/src")));

        // Without the sandbox's own /proc (no pid namespace) the host's processes' roots
        // would lead around the mounts: Landlock keeps the read rules.
        s.namespaces.pid = false;
        let plan = super::plan(&s, 7).unwrap();
        assert!(!plan.reads_by_mounts);
        assert!(handled_fs_access(&plan).contains(AccessFs::ReadFile));
        assert!(plan.handles_truncate() && !plan.needs_truncate_guard());
        assert!(!plan.read.iter().any(|p| home.join(".netrc").starts_with(p)));
    }

    #[test]
    fn a_missing_secret_is_left_out_in_a_mount_namespace_too() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("wt")).unwrap();
        let netrc = home.join(".netrc");
        let mut s = spec(dir.path(), &[]);
        s.namespaces = ALL_NAMESPACES;
        s.deny_read_missing = vec![netrc.clone().into(), dir.path().join("wt/.netrc").into()];
        let plan = plan(&s, 7).unwrap();
        assert!(plan.read.contains(&home.join("src")));
        assert!(
            !plan.read.iter().any(|p| netrc.starts_with(p)),
            "a grant covers the missing {}",
            netrc.display()
        );
        assert!(plan.list_only.contains(&home));
        // One inside a writable root is that root's: the worktree stays readable whole
        // (held: every right but making names).
        assert!(plan.held.contains(&dir.path().join("wt")));
        assert!(plan.held_write_only.is_empty());
    }

    #[test]
    fn directories_that_may_hold_protected_names_are_held_and_the_rest_granted_whole() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().join("wt");
        for d in [
            "src/deep",
            ".git/objects/ab",
            ".git/hooks",
            ".git/modules/sub/objects",
            ".git/modules/sub/hooks",
            ".claude/todos",
            ".claude/commands",
            ".claude/settings.json",
            ".vscode",
        ] {
            std::fs::create_dir_all(wt.join(d)).unwrap();
        }
        std::fs::write(wt.join("README"), "").unwrap();
        std::os::unix::fs::symlink(wt.join("src"), wt.join("link")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        for ns in [ALL_NAMESPACES, Namespaces::default()] {
            let mut s = spec(dir.path(), &[]);
            s.namespaces = ns;
            let plan = plan(&s, 7).unwrap();
            let held: Vec<&Path> = plan.held.iter().map(|p| p.as_path()).collect();
            let whole: Vec<&Path> = plan.read_write.iter().map(|p| p.as_path()).collect();
            for h in [
                "",
                ".git",
                ".claude",
                ".git/modules",
                ".git/modules/sub",
                ".git/modules/sub/objects",
            ] {
                assert!(
                    held.contains(&wt.join(h).as_path()),
                    "{h} not held: {held:?}"
                );
            }
            for w in ["src", ".git/objects", ".claude/todos"] {
                assert!(
                    whole.contains(&wt.join(w).as_path()),
                    "{w} not granted: {whole:?}"
                );
            }
            assert!(whole.contains(&dir.path().join("tmp").as_path()));
            // Protected directories get no rule; a symlink none either.
            for none in [
                ".git/hooks",
                ".vscode",
                ".claude/commands",
                ".claude/settings.json",
                ".git/modules/sub/hooks",
                "link",
                "src/deep",
            ] {
                let p = wt.join(none);
                assert!(
                    !held.contains(&p.as_path()) && !whole.contains(&p.as_path()),
                    "{none}"
                );
            }
            assert_eq!(plan.bounded, plan.read_write);
            assert_eq!(plan.held_keep_removes, ns.mount);
            let back = plan.held_back();
            assert!(back.contains(AccessFs::MakeReg) && back.contains(AccessFs::MakeDir));
            assert!(back.contains(AccessFs::WriteFile) && back.contains(AccessFs::Truncate));
            assert_eq!(back.contains(AccessFs::RemoveFile), !ns.mount);
        }
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_after_planning_carries_no_grant() {
        if crate::sys::landlock_abi_version() < 1 {
            eprintln!("SKIPPED: no Landlock here");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(wt.join("lib")).unwrap();
        std::fs::create_dir_all(wt.join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let mut s = spec(dir.path(), &[]);
        s.namespaces = ALL_NAMESPACES;
        let plan = plan(&s, 7).unwrap();
        assert!(plan.bounded.contains(&wt.join("lib")));
        // Another process swaps `lib` for a symlink to the worktree's root in between.
        std::fs::remove_dir(wt.join("lib")).unwrap();
        std::os::unix::fs::symlink(&wt, wt.join("lib")).unwrap();
        let envrc = wt.join(".envrc");
        let (bounded, made) = std::thread::spawn(move || {
            // Landlock restricts this thread only.
            crate::sys::set_no_new_privs().unwrap();
            let (bounded, _) = restrict_self(&plan, &[]).unwrap();
            let made = std::fs::write(&envrc, "x").is_ok();
            (bounded, made)
        })
        .join()
        .unwrap();
        assert!(
            !made,
            "the grant followed the symlink to the worktree's root"
        );
        assert!(!std::fs::exists(wt.join(".envrc")).unwrap());
        let paths: Vec<PathBuf> = bounded.iter().map(|b| PathBuf::from(&b.path)).collect();
        assert!(!paths.contains(&wt.join("lib")), "{paths:?}");
        assert!(paths.contains(&wt.join("src")), "{paths:?}");
    }

    #[test]
    fn nothing_is_bounded_under_a_grant_above_a_held_directory_or_without_watched_writes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("wt/src")).unwrap();
        let mut s = spec(dir.path(), &[]);
        // A writable root above the worktree is held itself, down to the worktree.
        s.allow_write = vec![dir.path().as_os_str().to_owned()];
        let p = plan(&s, 7).unwrap();
        assert!(p.held.contains(&dir.path().to_path_buf()));
        assert!(p.held.contains(&dir.path().join("wt")));
        assert!(!p.read_write.contains(&dir.path().to_path_buf()));
        assert!(!p.bounded.is_empty());
        // --no-write-watch: nothing carries out what a held directory refuses.
        s.no_write_watch = true;
        let p = plan(&s, 7).unwrap();
        assert!(p.held.is_empty() && p.bounded.is_empty());
        assert!(p.read_write.contains(&dir.path().join("wt")));
    }

    #[test]
    fn a_worktree_under_dev_shm_splits_the_device_folders_grant() {
        if !Path::new("/dev/shm").is_dir() {
            eprintln!("SKIPPED: no /dev/shm here");
            return;
        }
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        std::fs::create_dir_all(dir.path().join("wt/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let p = plan(&spec(dir.path(), &[]), 7).unwrap();
        assert!(!p.devices_rw.contains(&PathBuf::from("/dev/shm")));
        assert!(p.held.contains(&PathBuf::from("/dev/shm")));
        assert!(p.held.contains(&dir.path().join("wt")));
        assert!(p.bounded.contains(&dir.path().join("wt/src")));
    }

    #[test]
    fn the_pseudo_terminal_multiplexer_is_granted_only_with_the_sandboxs_own_devpts() {
        if !Path::new("/dev/ptmx").exists() {
            eprintln!("SKIPPED: no /dev/ptmx here");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("wt")).unwrap();
        let ptmx = PathBuf::from("/dev/ptmx");
        let mut s = spec(dir.path(), &[]);
        // Without a mount namespace (or without a devpts of its own): the host's.
        assert!(!plan(&s, 7).unwrap().devices_rw.contains(&ptmx));
        s.namespaces = ALL_NAMESPACES;
        assert!(!plan(&s, 7).unwrap().devices_rw.contains(&ptmx));
        s.private_pts = true;
        let p = plan(&s, 7).unwrap();
        assert!(p.devices_rw.contains(&ptmx));
        assert!(p.devices_rw.contains(&PathBuf::from("/dev/pts")));
    }

    #[test]
    fn a_profiles_protected_settings_hold_the_folders_above_them() {
        let dir = tempfile::tempdir().unwrap();
        let codex = dir.path().join("home/.codex");
        std::fs::create_dir_all(codex.join("sessions")).unwrap();
        std::fs::create_dir_all(codex.join("rules")).unwrap();
        std::fs::create_dir_all(dir.path().join("wt")).unwrap();
        let mut s = spec(dir.path(), &[]);
        s.allow_write = vec![codex.as_os_str().to_owned()];
        s.protected = vec![codex.join("config.toml").into(), codex.join("rules").into()];
        let p = plan(&s, 7).unwrap();
        assert!(p.held.contains(&codex));
        assert!(p.read_write.contains(&codex.join("sessions")));
        assert!(!p.read_write.contains(&codex.join("rules")));
        assert!(!p.held.contains(&codex.join("rules")));
    }

    #[test]
    fn siblings_of_a_denied_path_are_granted_but_not_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("src")).unwrap();
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        // Files staged beside a secret (a rename may make them the secret) get no grant.
        for staged in [
            ".netrc.lock",
            ".netrc+",
            ".netrc.1234",
            ".netrc.x",
            ".netrcx",
        ] {
            std::fs::write(home.join(staged), "").unwrap();
        }
        let ssh = home.join(".ssh");
        let netrc = home.join(".netrc");
        let plan = plan(&spec(dir.path(), &[&ssh, &netrc]), 7).unwrap();
        assert!(plan.read.contains(&home.join("src")));
        assert!(plan.read.contains(&home.join(".bashrc")));
        for staged in [".netrc.lock", ".netrc+", ".netrc.1234"] {
            assert!(!plan.read.contains(&home.join(staged)), "{staged}");
        }
        for other in [".netrc.x", ".netrcx"] {
            assert!(plan.read.contains(&home.join(other)), "{other}");
        }
        assert!(!plan.read.iter().any(|p| p.starts_with(&ssh)));
        assert!(
            !plan.read.contains(&home.join("keys")),
            "a symlink must not carry a grant"
        );
        assert!(
            !plan
                .read
                .iter()
                .any(|p| p == Path::new("/") || home.starts_with(p))
        );
        assert!(plan.list_only.contains(&home));
    }

    #[test]
    fn missing_landlock_is_refused_at_any_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path(), &[]);
        s.namespaces = ALL_NAMESPACES;
        assert!(matches!(plan(&s, 0), Err(LandlockFenceError::Unsupported)));
        s.landlock_abi_max = Some(0);
        assert!(matches!(plan(&s, 7), Err(LandlockFenceError::Unsupported)));
    }

    #[test]
    fn a_cap_only_lowers_the_abi() {
        assert_eq!(effective_abi(7, Some(2)), 2);
        assert_eq!(effective_abi(2, Some(5)), 2);
        assert_eq!(effective_abi(11, None), NEWEST_USED_ABI);
        assert_eq!(effective_abi(0, Some(3)), 0);
        assert_eq!(effective_abi(6, Some(-4)), 0);
    }

    /// The plan at ABI `abi` (capped from the newest) with every namespace.
    fn plan_at(abi: i32) -> FencePlan {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path(), &[]);
        s.namespaces = ALL_NAMESPACES;
        s.landlock_abi_max = Some(abi);
        plan(&s, NEWEST_USED_ABI).unwrap()
    }

    #[test]
    fn abi_1_lacks_refer_and_truncate_and_compensates_everything_else() {
        let p = plan_at(1);
        assert_eq!(p.abi, 1);
        let handled = handled_fs_access(&p);
        assert!(handled.contains(AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::RemoveFile));
        assert!(!handled.contains(AccessFs::Refer));
        assert!(!handled.contains(AccessFs::Truncate));
        assert_eq!(
            p.compensations,
            vec![
                Compensation::NoReparenting,
                Compensation::Truncate,
                Compensation::TcpBySocketFilter,
                Compensation::DeviceIoctlBySeccomp,
                Compensation::SignalsByPidNamespace,
                Compensation::AbstractUnixByNetNamespace,
            ]
        );
        assert!(p.needs_truncate_guard() && p.needs_group_kill_guard());
        assert!(!p.scopes && !p.deny_tcp);
    }

    #[test]
    fn abi_2_has_refer_but_truncate_is_compensated() {
        let p = plan_at(2);
        let handled = handled_fs_access(&p);
        assert!(handled.contains(AccessFs::Refer));
        assert!(!handled.contains(AccessFs::Truncate));
        assert!(!p.compensations.contains(&Compensation::NoReparenting));
        assert!(p.needs_truncate_guard());
        assert!(p.compensations.contains(&Compensation::TcpBySocketFilter));
    }

    #[test]
    fn abi_3_governs_truncate() {
        let p = plan_at(3);
        assert!(handled_fs_access(&p).contains(AccessFs::Truncate));
        assert!(!p.needs_truncate_guard());
        assert_eq!(
            p.compensations,
            vec![
                Compensation::TcpBySocketFilter,
                Compensation::DeviceIoctlBySeccomp,
                Compensation::SignalsByPidNamespace,
                Compensation::AbstractUnixByNetNamespace,
            ]
        );
    }

    #[test]
    fn abi_4_has_tcp_rules_used_only_without_a_network_namespace() {
        let p = plan_at(4);
        assert!(!p.compensations.contains(&Compensation::TcpBySocketFilter));
        // The sandbox's own network namespace already holds nothing but its loopback.
        assert!(!p.deny_tcp);
        assert!(!handled_fs_access(&p).contains(AccessFs::IoctlDev));
        assert!(p.needs_group_kill_guard());
    }

    #[test]
    fn abi_5_governs_device_ioctls() {
        let p = plan_at(5);
        assert!(handled_fs_access(&p).contains(AccessFs::IoctlDev));
        assert_eq!(
            p.compensations,
            vec![
                Compensation::SignalsByPidNamespace,
                Compensation::AbstractUnixByNetNamespace,
            ]
        );
    }

    #[test]
    fn abi_6_and_7_scope_signals_and_abstract_sockets_and_need_no_namespace() {
        for abi in [6, 7] {
            let p = plan_at(abi);
            assert!(p.scopes, "ABI {abi}");
            assert!(
                p.compensations.is_empty(),
                "ABI {abi}: {:?}",
                p.compensations
            );
            assert!(!p.needs_group_kill_guard());
            let dir = tempfile::tempdir().unwrap();
            let mut s = spec(dir.path(), &[]);
            s.landlock_abi_max = Some(abi);
            let bare = plan(&s, NEWEST_USED_ABI).unwrap();
            assert!(bare.scopes && bare.deny_tcp, "ABI {abi} without namespaces");
        }
    }

    #[test]
    fn below_abi_6_without_pid_and_network_namespaces_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for abi in 1..=5 {
            let mut s = spec(dir.path(), &[]);
            s.landlock_abi_max = Some(abi);
            assert!(
                matches!(plan(&s, 7), Err(LandlockFenceError::NoScopes(a)) if a == abi),
                "ABI {abi}"
            );
            s.namespaces = Namespaces {
                net: false,
                ..ALL_NAMESPACES
            };
            assert!(matches!(plan(&s, 7), Err(LandlockFenceError::NoScopes(_))));
        }
    }

    #[test]
    fn degraded_below_abi_6_without_namespaces_keeps_the_file_fence() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path(), &[]);
        s.landlock_abi_max = Some(2);
        s.allow_degraded = true;
        let p = plan(&s, 7).unwrap();
        assert_eq!(p.abi, 2);
        assert!(p.held.contains(&dir.path().join("wt")));
        assert!(p.needs_truncate_guard() && p.needs_group_kill_guard());
        assert_eq!(p.uncompensated.len(), 1);
        assert!(p.uncompensated[0].contains("ABI 6, Linux 6.12"));
    }

    #[test]
    fn read_only_worktree_grants_no_write_there() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path(), &[]);
        s.read_only_worktree = true;
        let p = plan(&s, 7).unwrap();
        let wt = dir.path().join("wt");
        assert!(!p.read_write.contains(&wt) && !p.write_only.contains(&wt));
        assert!(p.read_write.contains(&dir.path().join("tmp")));
    }

    #[test]
    fn writable_root_inside_a_denied_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(dir.path(), &[dir.path()]);
        assert!(matches!(
            plan(&s, 7),
            Err(LandlockFenceError::WritableInsideDenied { .. })
        ));
    }

    #[test]
    fn every_compensation_names_the_abi_and_kernel_it_stands_in_for() {
        for (c, abi) in [
            (Compensation::NoReparenting, 2),
            (Compensation::Truncate, 3),
            (Compensation::TcpBySocketFilter, 4),
            (Compensation::DeviceIoctlBySeccomp, 5),
            (Compensation::SignalsByPidNamespace, 6),
            (Compensation::AbstractUnixByNetNamespace, 6),
        ] {
            let text = c.describe();
            assert!(
                text.contains(&format!("ABI {abi}, Linux {}", kernel_for_abi(abi))),
                "{text}"
            );
        }
    }
}

//! The init stage: the first process of the sandbox (pid 1 of its pid namespace when one
//! was made). It receives the spec, prepares the namespaces it is first in (read-only
//! mount view, loopback), forks the target, forwards signals to it, reaps orphans and
//! leaves with the target's exit status. When it dies, the pid namespace — and every
//! process in it — dies with it.

use std::ffi::OsStr;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::channel::{
    Channel, FromShim, NET_STAGE, PID_MAX_STAGE, SHIM_CHANNEL_FD, SandboxSpec, ToShim,
};
use crate::{landlock_fence, mount_aliases, mount_view, protected_paths, sys, target_process};

/// Signals the init forwards to the target when someone sent them (not the terminal:
/// a terminal's signals already reach the target, which shares the process group).
const FORWARDED: [libc::c_int; 9] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGCONT,
    libc::SIGWINCH,
    libc::SIGALRM,
];

/// Entry point of `fence __shim`: runs the init stage on the inherited channel and returns
/// the exit status for the process. `mount_namespace`: this process is known to be in a
/// mount namespace of its own (a copy cloned into one), whose mounts are then made private
/// and listed while the supervisor prepares the spec; otherwise that waits for the spec,
/// which says.
pub fn run_from_inherited_channel(unshare_net: bool, mount_namespace: bool) -> i32 {
    // SAFETY: PR_SET_NAME reads a NUL-terminated name of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, crate::SHIM_NAME.as_ptr(), 0, 0, 0) };
    // SAFETY: the supervisor placed its channel end at SHIM_CHANNEL_FD before exec; nothing
    // else in this process owns that descriptor.
    let channel = Channel::from_owned_fd(unsafe { OwnedFd::from_raw_fd(SHIM_CHANNEL_FD) });
    // The network namespace, when asked for (`UNSHARE_NET_ARG`): this process is in the
    // sandbox's user namespace already (its root there), so the new one is owned by it,
    // as one made by the clone would be.
    if unshare_net && let Err(e) = nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET) {
        report(
            &channel,
            NET_STAGE,
            &format!("unshare(CLONE_NEWNET): {e}"),
            125,
        );
        return 125;
    }
    // Its loopback, up before the spec comes: nothing in it depends on the spec, and the
    // supervisor is preparing the session meanwhile.
    if unshare_net && let Err(e) = sys::bring_loopback_up() {
        report(
            &channel,
            "namespaces",
            &format!("bringing up loopback: {e}"),
            125,
        );
        return 125;
    }
    if channel.send(&FromShim::Ready, None).is_err() {
        return 125;
    }
    // The mount table, read now rather than once the spec has come (most of a
    // millisecond of the sandbox's start otherwise spent after it): private first, so that
    // nothing the host mounts from now on propagates here, and the table read then lists
    // every mount this namespace will ever have but those the view makes. An error is
    // reported once the spec has come, where the table is needed.
    let mounts = mount_namespace.then(|| {
        mount_view::make_private()
            .map_err(|e| e.to_string())
            .and_then(|()| {
                mount_aliases::table().map_err(|e| format!("reading the mount table: {e}"))
            })
    });
    run(channel, unshare_net, mounts)
}

/// The mount table read early ([`run_from_inherited_channel`]), or why it could not be.
type EarlyTable = Option<Result<Vec<mount_aliases::Mount>, String>>;

/// `net_made`: this process made its network namespace and brought its loopback up.
fn run(channel: Channel, net_made: bool, mounts: EarlyTable) -> i32 {
    let (mut spec, owner_shift) = match channel.recv::<ToShim>() {
        Ok(Some((ToShim::Start(spec), userns))) => (spec, userns),
        Ok(Some((other, _))) => {
            report(
                &channel,
                "channel",
                &format!("expected Start, got {other:?}"),
                125,
            );
            return 125;
        }
        Ok(None) => return 125,
        Err(e) => {
            report(&channel, "channel", &e.to_string(), 125);
            return 125;
        }
    };
    if let Some(pid_max) = spec.pid_max {
        // Before anything is forked, so that every process of the sandbox is counted.
        // Outside a pid namespace of our own this would be the machine's limit: refused.
        let set = if !spec.namespaces.pid || std::process::id() != 1 {
            Err("it needs the sandbox's own pid namespace".to_string())
        } else {
            sys::set_pid_namespace_max(pid_max).map_err(|e| e.to_string())
        };
        let sent = match set {
            Ok(()) => channel.send(&FromShim::PidMaxSet, None),
            Err(message) => {
                report(
                    &channel,
                    PID_MAX_STAGE,
                    &format!("setting pid_max to {pid_max}: {message}"),
                    125,
                );
                return 125;
            }
        };
        if sent.is_err() {
            return 125;
        }
    }
    // The seccomp program is built on a thread of its own while the namespaces and the
    // mount view are made (see `target_process::prebuild`); joined before the fork, so that
    // the shim forks single-threaded.
    let prebuilding = {
        let spec = spec.clone();
        std::thread::Builder::new()
            .name("fence-prebuild".into())
            .spawn(move || target_process::prebuild(&spec))
            .ok()
    };
    let spare_pool = match prepare_namespaces(&mut spec, owner_shift, net_made, mounts) {
        Ok(pool) => pool,
        Err(message) => {
            report(&channel, "namespaces", &message, 125);
            return 125;
        }
    };
    // The supervisor moves this process into the session cgroup meanwhile; wait for its
    // word before forking anything.
    match channel.recv::<ToShim>() {
        Ok(Some((ToShim::Proceed, _))) => {}
        Ok(Some((other, _))) => {
            report(
                &channel,
                "channel",
                &format!("expected Proceed, got {other:?}"),
                125,
            );
            return 125;
        }
        Ok(None) => return 125,
        Err(e) => {
            report(&channel, "channel", &e.to_string(), 125);
            return 125;
        }
    }
    let prebuilt = prebuilding.and_then(|t| t.join().ok()).flatten();
    let forwarded = block_forwarded_signals();
    // SAFETY: the shim is single-threaded, so the child may run arbitrary code after fork.
    match unsafe { libc::fork() } {
        -1 => {
            report(
                &channel,
                "fork",
                &std::io::Error::last_os_error().to_string(),
                125,
            );
            125
        }
        0 => {
            let failure = target_process::confine_and_exec(
                &spec,
                &channel,
                spare_pool.as_ref(),
                prebuilt.as_ref(),
            );
            // Exec failures were reported by the target stage itself.
            if failure.stage != "exec" {
                report(&channel, failure.stage, &failure.message, failure.exit_code);
            }
            // SAFETY: leaving the child without running the parent's atexit handlers.
            unsafe { libc::_exit(failure.exit_code) }
        }
        target => {
            drop(spare_pool);
            // Without a pid namespace this process is what kills the sandbox's tree when
            // the supervisor dies (its parent-death signal). It leaves the supervisor's
            // process group, which the target keeps (the terminal's signals reach the
            // command through it): a SIGKILL to that group (a CI runner's timeout,
            // `timeout -s KILL`, `kill -9 -PGID`) then takes the supervisor but not this
            // process, and the sandbox's processes outside the group (all of them in a
            // session of their own when there is no session terminal) are still killed.
            if !spec.namespaces.pid {
                // SAFETY: setpgid on this process: a new group in the same session.
                unsafe { libc::setpgid(0, 0) };
            }
            let (status, left) = supervise(
                target,
                &forwarded,
                spec.namespaces.pid,
                spec.cgroup_kill.as_deref(),
                &|| {
                    let _ = channel.send(&FromShim::Stopped, None);
                },
            );
            // Nothing the sandbox ran is left (`supervise` killed and reaped the rest):
            // on this word the supervisor ends the session while this process exits, which
            // in a namespace of its own waits for the kernel to unmount the view (most of a
            // millisecond), and reaps it last. A supervisor already gone makes the send
            // fail: nothing to do then.
            let _ = channel.send(&FromShim::Exited { status, left }, None);
            status
        }
    }
}

fn report(channel: &Channel, stage: &str, message: &str, exit_code: i32) {
    let _ = channel.send(
        &FromShim::SetupFailed {
            stage: stage.to_string(),
            message: message.to_string(),
            exit_code,
        },
        None,
    );
}

/// Makes the sandbox's namespaces and mount view. Returns the spare folders' pool, opened
/// through the worktree's mount, when the spec names one and it is what the supervisor made
/// and lies under a read-only bind of the view (see [`mount_view::ViewMade::spare_pool`]).
/// `owner_shift` is the user namespace a root session's `/etc` is shown through
/// ([`mount_view::shift_root_owner`]), when the supervisor could make one.
fn prepare_namespaces(
    spec: &mut SandboxSpec,
    owner_shift: Option<OwnedFd>,
    net_made: bool,
    early: EarlyTable,
) -> Result<Option<OwnedFd>, String> {
    let ns = spec.namespaces;
    let mut spare_pool = None;
    if ns.mount {
        // The secrets' other names, found again in this namespace now that it is private: a
        // mount the host made after the supervisor looked, before the copy, is here too
        // (`mount_aliases`; security boundary with the covers). In a root session the
        // other names of /etc are hidden whole: the shift below does not reach them.
        let mounts = match early {
            Some(table) => table?,
            None => {
                mount_view::make_private().map_err(|e| e.to_string())?;
                mount_aliases::table().map_err(|e| format!("reading the mount table: {e}"))?
            }
        };
        let known: Vec<PathBuf> = spec.deny_read.iter().map(PathBuf::from).collect();
        let known_missing: Vec<PathBuf> =
            spec.deny_read_missing.iter().map(PathBuf::from).collect();
        let (mut more, more_missing) = mount_aliases::other_names(&mounts, &known, &known_missing);
        if owner_shift.is_some() {
            more.extend(mount_aliases::other_names_of(
                &mounts,
                Path::new(mount_view::SYSTEM_CONFIG),
            ));
        }
        for (list, found) in [
            (&mut spec.deny_read, more),
            (&mut spec.deny_read_missing, more_missing),
        ] {
            list.extend(found.into_iter().map(PathBuf::into_os_string));
            list.sort();
            list.dedup();
        }
        let mut writable: Vec<&OsStr> = vec![spec.tmpdir.as_os_str()];
        if !spec.read_only_worktree {
            writable.push(spec.worktree.as_os_str());
        }
        writable.extend(spec.allow_write.iter().map(|p| p.as_os_str()));
        let shm = Path::new("/dev/shm")
            .is_dir()
            .then_some(OsStr::new("/dev/shm"));
        writable.extend(shm);
        let private_tmp = (spec.private_tmp && spec.tmp_size.is_some())
            .then_some(OsStr::new(landlock_fence::PRIVATE_TMP));
        writable.extend(private_tmp);
        let hidden: Vec<&OsStr> = spec.deny_read.iter().map(|p| p.as_os_str()).collect();
        // The worktree's protected paths, and those of the other folders protected as it
        // is, relative to each.
        let bases: Vec<&Path> = std::iter::once(&spec.worktree)
            .chain(&spec.rule_bases)
            .map(Path::new)
            .collect();
        let mut protected_paths: Vec<_> = bases
            .iter()
            .flat_map(|b| protected_paths::existing(b))
            .collect();
        protected_paths.extend(protected_paths::existing_of(&spec.protected));
        protected_paths.sort();
        protected_paths.dedup();
        let protected: Vec<&OsStr> = protected_paths.iter().map(|p| p.as_os_str()).collect();
        let mut pinned_paths: Vec<_> = bases
            .iter()
            .flat_map(|b| protected_paths::pinned(b))
            .collect();
        // The folders between a writable root and each path protected by name (what a
        // protected link leads to, the hooks folder `core.hooksPath` names, a profile's
        // settings): a read-only bind goes with its folder when that is renamed, and a
        // planted folder would take its place; a mount point cannot be renamed.
        for p in spec.protected.iter().map(Path::new) {
            let Some(root) = writable
                .iter()
                .map(Path::new)
                .chain(bases.iter().copied())
                .filter(|r| p.starts_with(r) && p != *r)
                .max_by_key(|r| r.as_os_str().len())
            else {
                continue;
            };
            pinned_paths.extend(
                p.ancestors()
                    .skip(1)
                    .take_while(|a| *a != root && a.starts_with(root))
                    .filter(|a| a.symlink_metadata().is_ok_and(|m| m.is_dir()))
                    .map(Path::to_path_buf),
            );
        }
        pinned_paths.sort();
        pinned_paths.dedup();
        let pinned: Vec<&OsStr> = pinned_paths.iter().map(|p| p.as_os_str()).collect();
        let sized_tmp = spec.tmp_size.map(|size| (spec.tmpdir.as_os_str(), size));
        // A session of uid 0 in the host's user namespace sees /etc with root's files as
        // nobody's, so that root's secrets there need no frozen listing (security
        // boundary: the kernel's permission check, see `mount_view::shift_root_owner`).
        // Not where a writable root lies in or above it: its files must stay writable.
        // Nor where the worktree does, read-only or not (git refuses a repository whose
        // files are another user's).
        let etc = Path::new(mount_view::SYSTEM_CONFIG);
        let etc_apart = !writable
            .iter()
            .chain([&spec.worktree.as_os_str()])
            .any(|w| Path::new(w).starts_with(etc) || etc.starts_with(w));
        if let Some(userns) = owner_shift.filter(|_| !ns.user && etc_apart) {
            // Where it cannot be done, nothing changed: the secrets root can read there
            // are found readable below and their folders frozen.
            let _ = mount_view::shift_root_owner(etc, &userns);
        }
        let missing = missing_outside(spec, &writable);
        // The existing secrets the sandbox could read but for their covers: their folders
        // are frozen.
        let existing: Vec<&Path> = {
            let all = existing_outside(spec, &writable);
            let readable = readable_by_sandbox(&all)?;
            all.into_iter()
                .zip(readable)
                .filter_map(|(e, r)| r.then_some(e))
                .collect()
        };
        let homes: Vec<&Path> = spec.homes.iter().map(Path::new).collect();
        // A folder holding such a link inside a writable root cannot be frozen (its
        // writes would go to the tmpfs): Landlock's read rules then stay.
        let in_writable = |p: &Path| writable.iter().any(|w| p.starts_with(w));
        let (via_writable, via): (Vec<&Path>, Vec<&Path>) = spec
            .deny_read_via
            .iter()
            .map(Path::new)
            .partition(|p| in_writable(p));
        let freeze_plan = freeze_dirs(&existing, &missing, &via, &hidden, &homes);
        let snapshots: Vec<&Path> = freeze_plan.iter().flatten().map(PathBuf::as_path).collect();
        let secrets: Vec<&Path> = hidden
            .iter()
            .map(Path::new)
            .chain(missing.iter().copied())
            .collect();
        // The pool must lie beneath a protected path the view makes read-only (the spare
        // home, `.git/fence`), in the worktree: then only the supervisor reaches it.
        let pool_path = spec
            .spare_pool
            .as_ref()
            .map(|p| Path::new(&p.path))
            .filter(|p| {
                !spec.read_only_worktree
                    && p.starts_with(&spec.worktree)
                    && protected_paths.iter().any(|r| p.starts_with(r))
            });
        let device_paths: Vec<PathBuf> = landlock_fence::DEVICES_RW
            .iter()
            .chain(&landlock_fence::DEVICES_RO)
            .map(PathBuf::from)
            .collect();
        let devices: Vec<&Path> = device_paths.iter().map(PathBuf::as_path).collect();
        let made = mount_view::apply(&mount_view::ViewPlan {
            writable: &writable,
            protected: &protected,
            pinned: &pinned,
            hidden: &hidden,
            snapshots: &snapshots,
            missing: &missing,
            secrets: &secrets,
            devices: Some(&devices),
            session_tty: spec.session_tty.as_deref().map(Path::new),
            new_proc: ns.pid,
            sized_tmp,
            private_shm: shm,
            private_tmp,
            spare_pool: pool_path,
            host_mounts: Some(&mounts),
        })
        .map_err(|e| e.to_string())?;
        spare_pool = made.spare_pool.filter(|fd| {
            spec.spare_pool
                .as_ref()
                .is_some_and(|p| landlock_fence::identity(fd).is_ok_and(|id| id == (p.dev, p.ino)))
        });
        // The init's working directory was inherited from fence and still names the
        // directory as it was under any mount made since (a frozen folder's, whose names
        // made later would show through it): the root of the new view instead.
        std::env::set_current_dir("/").map_err(|e| format!("entering the new root: {e}"))?;
        // Landlock may leave reads alone only if every folder planned was frozen, each
        // missing secret's nearest folder in the view made is one of them (a folder made
        // on the host since the plan would be live), no secret lies in a writable root
        // (its folder cannot be frozen), and /proc shows only the sandbox's processes (the
        // host's /proc/<pid>/root and cwd would lead to the host's view, under none of
        // these mounts), and every secret there was is covered (the host may remove one
        // before its cover is mounted, and make it again later). Security boundary:
        // otherwise Landlock's read rules stay, carved around the secrets.
        let all_frozen = made.uncovered.is_empty()
            && freeze_plan.as_ref().is_some_and(|dirs| {
                dirs.iter().all(|d| made.snapshots.contains(d))
                    && missing.iter().all(|m| {
                        nearest_dir(m).is_some_and(|d| {
                            made.snapshots.iter().any(|f| f == d)
                                || hidden.iter().any(|h| d.starts_with(h))
                        })
                    })
            });
        let secret_in_writable = spec
            .deny_read
            .iter()
            .any(|h| writable.iter().any(|w| Path::new(h).starts_with(w)));
        spec.reads_by_mounts =
            all_frozen && !secret_in_writable && via_writable.is_empty() && ns.pid;
        spec.private_pts = made.private_pts;
    }
    if ns.net && !net_made {
        sys::bring_loopback_up().map_err(|e| format!("bringing up loopback: {e}"))?;
    }
    if !ns.pid {
        // Without a pid namespace, orphans of the sandbox come back to us, so the whole tree
        // can be found and killed when the session ends.
        sys::set_child_subreaper().map_err(|e| format!("child subreaper: {e}"))?;
    }
    Ok(spare_pool)
}

/// The secret paths missing at start that lie outside the writable roots (one inside is
/// left to that root: the sandbox could make it there itself) and outside every hidden
/// path (covered with it).
fn missing_outside<'a>(spec: &'a SandboxSpec, writable: &[&OsStr]) -> Vec<&'a Path> {
    spec.deny_read_missing
        .iter()
        .map(Path::new)
        .filter(|m| !writable.iter().any(|w| m.starts_with(w)))
        .filter(|m| !spec.deny_read.iter().any(|h| m.starts_with(h)))
        .collect()
}

/// The secret paths that exist (hidden by the view) outside the writable roots and not
/// beneath another hidden one.
fn existing_outside<'a>(spec: &'a SandboxSpec, writable: &[&OsStr]) -> Vec<&'a Path> {
    spec.deny_read
        .iter()
        .map(Path::new)
        .filter(|e| !writable.iter().any(|w| e.starts_with(w)))
        .filter(|e| {
            !spec
                .deny_read
                .iter()
                .any(|h| e.starts_with(h) && *e != Path::new(h))
        })
        .collect()
}

/// The nearest existing directory above `path`.
fn nearest_dir(path: &Path) -> Option<&Path> {
    let mut dir = path.parent()?;
    while !dir.symlink_metadata().is_ok_and(|md| md.is_dir()) {
        dir = dir.parent()?;
    }
    Some(dir)
}

/// Which of `paths` the sandbox could open for reading. Asked of the kernel with this
/// thread's effective capabilities cleared for the time of the check (capabilities are a
/// thread's own; they are taken back from the permitted set after it): the target keeps
/// this process's uid, gid and groups (in a user namespace, the same ids outside) and drops
/// every capability, so what the thread may open is what the sandbox may (a root session:
/// the files of root's own it reads as their owner; a shifted `/etc`'s root files it does
/// not). A path is counted readable wherever the answer is not a refusal, and every path
/// when the check cannot be made: at worst a folder is frozen that need not be. An error
/// only when the capabilities cannot be taken back (the view could not be made without
/// them).
fn readable_by_sandbox(paths: &[&Path]) -> Result<Vec<bool>, String> {
    use caps::CapSet;
    use std::os::unix::fs::OpenOptionsExt;
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let Ok(kept) = caps::read(None, CapSet::Effective) else {
        return Ok(vec![true; paths.len()]);
    };
    if caps::clear(None, CapSet::Effective).is_err() {
        // Nothing changed, or only part: taken back below either way.
        let _ = caps::set(None, CapSet::Effective, &kept);
        return Ok(vec![true; paths.len()]);
    }
    let answers = paths
        .iter()
        .map(|path| {
            let refused = match std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(path)
            {
                Ok(_) => false,
                Err(e) => matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)),
            };
            // A folder whose listing is refused but that may be searched still lets a name
            // known inside be opened.
            !refused || path.is_dir() && searchable(path)
        })
        .collect();
    caps::set(None, CapSet::Effective, &kept)
        .map_err(|e| format!("taking back the capabilities set aside to judge the secrets: {e}"))?;
    Ok(answers)
}

/// Whether this thread may search the folder `path` (`faccessat` with `AT_EACCESS`: its own
/// credentials and capabilities, not the real ids'). Counted searchable when unsure.
fn searchable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: a NUL-terminated path and plain flags.
    let ret = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::X_OK, libc::AT_EACCESS) };
    ret == 0
        || !matches!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EACCES | libc::EPERM)
        )
}

/// The folders whose listing the mount view freezes (`mount_view::snapshot`), so that the
/// secret paths stay unreadable whatever the host does during the session:
/// - for each one missing at start, the nearest existing folder above it, so that one
///   made there (a login in another terminal) never appears;
/// - for each one of `existing` (those that exist and that the sandbox could read but for
///   their covers: [`readable_by_sandbox`]), its folder, so that a rename or unlink on the host (`git credential-store` rewrites
///   `~/.git-credentials` by a rename) cannot take the cover away with the old name:
///   in a frozen folder the secret's name is an empty object of the tmpfs, not the
///   host's;
/// - for each symbolic link met on the way to a secret, the folder holding it (`via`), so
///   that a link re-pointed on the host does not lead the name to a new object;
/// - and each folder from those up to the home directory, so that a folder above moved
///   aside on the host (`mv ~/.config ~/.config.old`) does not bring a live one in.
///
/// A secret the sandbox could not read anyway (a root-owned `/etc/shadow` for a user, and
/// for root in a shifted `/etc`) keeps its cover alone, as does one directly in `/`
/// (`/root`). `None` when a missing one's
/// folder cannot be frozen (`/`, or where the view mounts anew: `/proc`, `/dev`):
/// Landlock's read rules then stand in.
fn freeze_dirs(
    existing: &[&Path],
    missing: &[&Path],
    via: &[&Path],
    hidden: &[&OsStr],
    homes: &[&Path],
) -> Option<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    let cannot_freeze =
        |d: &Path| d == Path::new("/") || d.starts_with("/proc") || d.starts_with("/dev");
    let add_chain = |mut dir: &Path, dirs: &mut Vec<PathBuf>| {
        dirs.push(dir.to_path_buf());
        if let Some(home) = homes.iter().find(|h| dir.starts_with(h)) {
            while dir != *home {
                let Some(parent) = dir.parent() else { break };
                dir = parent;
                dirs.push(dir.to_path_buf());
            }
        }
    };
    for m in missing {
        let dir = nearest_dir(m)?;
        if cannot_freeze(dir) {
            return None;
        }
        // Beneath a hidden path it is covered already (and cannot be read to be frozen).
        if hidden.iter().any(|h| dir.starts_with(h)) {
            continue;
        }
        add_chain(dir, &mut dirs);
    }
    for e in existing {
        let Some(dir) = e.parent() else { continue };
        if cannot_freeze(dir) {
            continue;
        }
        add_chain(dir, &mut dirs);
    }
    // A link re-pointed on the way would lead the same name elsewhere; one in / (a
    // top-level link such as /home -> /var/home) is not expected to move.
    for dir in via {
        if cannot_freeze(dir) || hidden.iter().any(|h| dir.starts_with(h)) {
            continue;
        }
        add_chain(dir, &mut dirs);
    }
    dirs.sort();
    dirs.dedup();
    Some(dirs)
}

fn block_forwarded_signals() -> libc::sigset_t {
    // SAFETY: operations on a local sigset, then sigprocmask with valid pointers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in FORWARDED {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, crate::channel::stop_sandbox_signal());
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Waits for signals: reaps children, forwards user-sent signals to the target, and
/// returns the target's status (128+N for a signal) once it has exited, with the number of
/// processes of the sandbox still running then, which were killed. The supervisor's
/// [`crate::channel::stop_sandbox_signal`] stops the whole sandbox (then `stopped` tells
/// it so), and its `SIGCONT` continues the whole sandbox.
fn supervise(
    target: libc::pid_t,
    set: &libc::sigset_t,
    in_pid_namespace: bool,
    cgroup_kill: Option<&OsStr>,
    stopped: &dyn Fn(),
) -> (i32, u32) {
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    // While the sandbox is stopped: when to walk it next, and the wait between walks,
    // which grows from [`STOPPED_WATCH`] while nothing runs. A sandbox found settled is
    // watched too: a stopped process still dies of a SIGKILL it arranged before (a POSIX
    // timer, `F_SETSIG` on a descriptor that becomes ready when the user types), and a
    // death may orphan a process group whose stopped members the kernel continues. The
    // walk is due by the clock, whatever signals arrive meanwhile (a continued process
    // could send the init one every few milliseconds to keep a wait from ever running out).
    let mut watch: Option<(std::time::Instant, std::time::Duration)> = None;
    // While stopped, the deaths that could continue a process group are waited for too:
    // a pidfd of each live process of the sandbox, readable once it has exited, with the
    // signals this loop waits for as a signalfd. A death wakes a walk at once; without
    // them (no pidfds, too many descriptors) the walks are timed alone.
    let mut deaths: Option<DeathWatch> = None;
    // The processes the last attempt to make them was for.
    let mut last_tried: Option<Vec<libc::pid_t>> = None;
    loop {
        let death_seen = deaths.as_ref().is_some_and(DeathWatch::died);
        if let Some((due, every)) = watch
            && (death_seen || std::time::Instant::now() >= due)
        {
            // Until the supervisor's SIGCONT (`fg`, `bg`) ends the watch. With deaths
            // watched, a walk that finds nothing running waits long ([`STOPPED_BACKSTOP`]):
            // only a death continues a stopped process from inside.
            let (walked, pids) = walk_stopping_what_runs();
            let ran = walked.is_none();
            // The pidfds are made again when the processes may have changed: a death, a
            // walk that stopped something, or other processes than those watched (one a
            // fork made as its parent was being stopped). The old ones are closed first.
            let watched = deaths.as_ref().map(|d| d.pids.as_slice());
            if ran || death_seen || watched != Some(pids.as_slice()) {
                let tried_before = deaths.is_none() && last_tried.as_deref() == Some(&pids[..]);
                deaths = None;
                // Where they could not be made for these same processes, they are not tried
                // again at every timed walk (no descriptor left stays so).
                if !tried_before || ran || death_seen {
                    deaths = DeathWatch::of_sandbox(set);
                    last_tried = Some(pids);
                }
            }
            let calm = if deaths.is_some() {
                STOPPED_BACKSTOP
            } else {
                STOPPED_WATCH_MAX
            };
            let next = if ran {
                STOPPED_WATCH
            } else {
                (every * 2).min(calm)
            };
            watch = Some((std::time::Instant::now() + next, next));
            continue;
        }
        // SAFETY: siginfo_t is plain data; sigwaitinfo writes it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let sig = if let Some((due, _)) = watch {
            let left = due.saturating_duration_since(std::time::Instant::now());
            if let Some(d) = &deaths {
                // A signal is taken below at once; a death or the time wakes the walk. A
                // failed poll gives the watch up for the timed walks.
                match d.wait(left) {
                    Some(true) => {}
                    Some(false) => continue,
                    None => {
                        deaths = None;
                        continue;
                    }
                }
            }
            let left = due.saturating_duration_since(std::time::Instant::now());
            let wait = libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            };
            // SAFETY: `set` is a valid sigset, `info` and `wait` valid pointers.
            unsafe { libc::sigtimedwait(set, &mut info, &wait) }
        } else {
            // SAFETY: `set` is a valid sigset and `info` a valid out-pointer.
            unsafe { libc::sigwaitinfo(set, &mut info) }
        };
        if sig < 0 {
            continue;
        }
        // Without a pid namespace the supervisor's death arrives as SIGTERM (parent-death
        // signal): kill the whole tree, since no kernel mechanism will.
        // SAFETY: getppid has no preconditions.
        if !in_pid_namespace && unsafe { libc::getppid() } != parent {
            // cgroup.kill takes every process of the session at once, this one included;
            // where it cannot be written, walk the tree.
            if let Some(kill) = cgroup_kill {
                let _ = std::fs::write(kill, "1");
            }
            kill_descendants();
            return (128 + libc::SIGKILL, 0);
        }
        if sig == libc::SIGCHLD {
            if let Some(status) = reap(target) {
                let_helpers_end(HELPERS_GRACE);
                // kill(-1) outside a namespace of its own would reach every process the
                // user (or root) may signal: only as that namespace's pid 1.
                let left = if in_pid_namespace && std::process::id() == 1 {
                    empty_pid_namespace()
                } else {
                    kill_descendants()
                };
                return (status, left);
            }
            continue;
        }
        // Only the supervisor's signals are acted on. One the kernel sent (si_code > 0)
        // already reached the target's group (the terminal's). A process of the sandbox
        // may reach this one too: below Landlock ABI 6 nothing scopes its signals, and a
        // pid namespace's init takes, from inside, every signal it blocks (as it blocks
        // these to wait for them). Its stop request would stop the whole session.
        if !sent_by_parent(&info, parent) {
            continue;
        }
        if sig == crate::channel::stop_sandbox_signal() {
            // The terminal's Ctrl-Z reached the supervisor: every process of the sandbox
            // is stopped before it stops itself and the user's shell shows its prompt. A
            // process that ignores SIGTSTP (or left the terminal's process group) would
            // otherwise run on, take the terminal's foreground back and read what the
            // user types to the shell.
            let stop = stop_sandbox(in_pid_namespace);
            if stop != Stop::Failed {
                watch = Some((std::time::Instant::now() + STOPPED_WATCH, STOPPED_WATCH));
                deaths = DeathWatch::of_sandbox(set);
                last_tried = None;
                stopped();
            } else {
                // Something would not stop: the session goes on as it was, fence does not
                // stop, and the shell's prompt does not come back behind a running process.
                signal_sandbox(libc::SIGCONT, in_pid_namespace);
                eprintln!(
                    "fence: the sandbox could not be stopped (a process of it did not stop within {} s); it goes on",
                    STOP_WAIT.as_secs()
                );
            }
            continue;
        }
        if sig == libc::SIGCONT {
            // The shell's `fg`/`bg`: the whole sandbox goes on, as it was stopped whole.
            watch = None;
            deaths = None;
            signal_sandbox(libc::SIGCONT, in_pid_namespace);
            continue;
        }
        // SAFETY: kill with a pid we forked and a valid signal number.
        unsafe { libc::kill(target, sig) };
    }
}

/// Whether a signal was sent with `kill` by this process's parent, the supervisor. `kill`
/// is `SI_USER`, with the sender's pid as this process's namespace sees it: 0 for a sender
/// outside its pid namespace, which is where the parent is when this process is the
/// namespace's init (and `getppid` then says 0 too). A process can forge the pid only with
/// `rt_sigqueueinfo`, whose code the kernel keeps negative (`SI_QUEUE`…) for a signal sent
/// to another process; and inside the namespace every sender has a pid above 0.
fn sent_by_parent(info: &libc::siginfo_t, parent: libc::pid_t) -> bool {
    // SAFETY: si_pid is read from a siginfo that sigwaitinfo filled; for SI_USER it is set.
    info.si_code == libc::SI_USER && unsafe { info.si_pid() } == parent
}

/// Sends `sig` to every process of the sandbox but this one. In the sandbox's own pid
/// namespace, as its pid 1, with `kill(-1)`, which reaches every other process of the
/// namespace at once (a fork racing with it is restarted by the kernel, which finishes no
/// fork while a group-wide signal is pending for the parent). Without one, to each
/// descendant (this process is their subreaper), walking the tree until a walk finds no
/// process it has not signalled.
fn signal_sandbox(sig: libc::c_int, in_pid_namespace: bool) {
    if in_pid_namespace && std::process::id() == 1 {
        // SAFETY: kill(-1) from a namespace's init signals every other process of that
        // namespace (and none outside it).
        unsafe { libc::kill(-1, sig) };
        return;
    }
    let mut signalled = std::collections::HashSet::new();
    loop {
        let fresh: Vec<libc::pid_t> = descendants_of(std::process::id() as libc::pid_t)
            .into_iter()
            .filter(|pid| signalled.insert(*pid))
            .collect();
        if fresh.is_empty() {
            return;
        }
        for pid in fresh {
            // SAFETY: kill with a pid read from our own subtree.
            unsafe { libc::kill(pid, sig) };
        }
    }
}

/// How long [`stop_sandbox`] waits for every process of the sandbox to be stopped.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How soon [`supervise`] looks again at a stopped sandbox; the wait doubles while nothing
/// runs, up to [`STOPPED_WATCH_MAX`] (a `vfork` parent whose child was stopped waits as
/// long as the session is stopped), and starts again at this after a walk that stopped
/// something.
const STOPPED_WATCH: std::time::Duration = std::time::Duration::from_millis(20);
const STOPPED_WATCH_MAX: std::time::Duration = std::time::Duration::from_millis(160);

/// How long a stopped sandbox whose deaths are watched ([`DeathWatch`]) waits between
/// walks that find nothing running: a backstop, since nothing inside continues a stopped
/// process but a death, which wakes a walk at once. A walk of a thousand processes costs
/// some 20 ms; at this pace a session left stopped for hours costs next to nothing.
const STOPPED_BACKSTOP: std::time::Duration = std::time::Duration::from_secs(2);

/// The deaths of a stopped sandbox's processes, and the signals [`supervise`] waits for,
/// as descriptors one `poll` waits on.
struct DeathWatch {
    signals: OwnedFd,
    pidfds: Vec<OwnedFd>,
    /// The processes listed when the pidfds were made, in the walk's order.
    pids: Vec<libc::pid_t>,
}

impl DeathWatch {
    /// A pidfd for each process of the sandbox that has not exited, and a signalfd of
    /// `set` (blocked, as [`supervise`] keeps it). `None` where either cannot be had (a
    /// kernel before 5.3, no descriptor left): the walks are then timed alone.
    fn of_sandbox(set: &libc::sigset_t) -> Option<DeathWatch> {
        // SAFETY: signalfd with a valid sigset makes a new descriptor.
        let fd = unsafe { libc::signalfd(-1, set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a fresh descriptor we own.
        let signals = unsafe { OwnedFd::from_raw_fd(fd) };
        // A descriptor per process: as many as the hard limit allows (this process runs
        // nothing else; the sandbox's own limits were set before its exec).
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit with a valid rlimit.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
        let me = std::process::id() as libc::pid_t;
        let pids = descendants_of(me);
        let mut pidfds = Vec::new();
        for &pid in &pids {
            // SAFETY: pidfd_open with a pid and no flags makes a new descriptor.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            if fd < 0 {
                let e = std::io::Error::last_os_error().raw_os_error();
                if e == Some(libc::ESRCH) {
                    continue;
                }
                return None;
            }
            // SAFETY: a fresh descriptor we own.
            let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
            // One that has exited already (a zombie its stopped parent has not reaped)
            // would read as a death at every wait. Its pidfd says so exactly: readable
            // only once the whole process has exited (`/proc/PID/stat` shows the main
            // thread's state, `Z` for a process whose other threads still run).
            if !Self::any_readable(std::slice::from_ref(&fd)).unwrap_or(false) {
                pidfds.push(fd);
            }
        }
        Some(DeathWatch {
            signals,
            pidfds,
            pids,
        })
    }

    /// Whether any of `fds` polls readable now; `None` when `poll` fails.
    fn any_readable(fds: &[OwnedFd]) -> Option<bool> {
        poll_readable(fds.iter(), 0).map(|polled| polled.iter().any(|p| p.revents != 0))
    }

    /// Waits up to `left` for a signal, a death or the time. Whether a signal is pending
    /// (taken by the caller at once); `None` when `poll` fails.
    fn wait(&self, left: std::time::Duration) -> Option<bool> {
        // Rounded up: a wait of less than a millisecond would not wait at all.
        let ms = (left.as_micros().div_ceil(1000)).min(i32::MAX as u128) as libc::c_int;
        poll_readable(std::iter::once(&self.signals).chain(&self.pidfds), ms)
            .map(|polled| polled[0].revents != 0)
    }

    /// Whether a process watched has exited since the pidfds were made (a failed `poll`
    /// counts as one: the walk it wakes makes the watch again).
    fn died(&self) -> bool {
        Self::any_readable(&self.pidfds).unwrap_or(true)
    }
}

/// `poll` of `fds` for reading, waiting up to `ms` milliseconds: each one's `revents`, in
/// order; `None` when `poll` fails.
fn poll_readable<'a>(
    fds: impl Iterator<Item = &'a OwnedFd>,
    ms: libc::c_int,
) -> Option<Vec<libc::pollfd>> {
    use std::os::fd::AsRawFd;
    let mut polled: Vec<libc::pollfd> = fds
        .map(|fd| libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: a valid array of pollfds of descriptors we own.
    let n = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, ms) };
    (n >= 0).then_some(polled)
}

/// What [`stop_sandbox`] achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Every thread of every process is stopped or dead.
    Settled,
    /// None runs, but some are still inside the kernel (uninterruptible: a `vfork` parent
    /// waiting for its stopped child, a core being dumped): each stops on its way back to
    /// its program, or dies — and a death may orphan a process group whose stopped members
    /// the kernel then continues. (Every stopped sandbox is watched while the session is
    /// stopped: a stopped process can still be killed.)
    Unsettled,
    /// Something still ran after [`STOP_WAIT`].
    Failed,
}

/// Stops every process of the sandbox, and returns once every thread of each is seen
/// stopped, dead or inside the kernel in two walks in a row (or after [`STOP_WAIT`]). A
/// `SIGSTOP` sent once is not enough: a process dumping core does not stop until the dump
/// ends, and one that dies then, or is killed by a process not yet stopped, may orphan a
/// process group whose stopped members the kernel continues (`SIGHUP`, `SIGCONT`): such a
/// process would run on behind the user's prompt and read what is typed there. So each
/// walk stops again whatever runs. Two clean walks: a process dying during the first
/// (after the walk had passed the group it orphans) is seen in the second with the group
/// it continued. Security boundary: fence stops, and the shell's prompt comes back, only
/// then. While it is stopped, [`supervise`] stops again what a later death continues (an
/// unsettled thread's, or a SIGKILL the sandbox arranged to arrive then), at the walk the
/// death wakes ([`DeathWatch`]; without pidfds, the next timed walk, 20 to 160 ms later):
/// that long, such a process runs.
fn stop_sandbox(in_pid_namespace: bool) -> Stop {
    signal_sandbox(libc::SIGSTOP, in_pid_namespace);
    let deadline = std::time::Instant::now() + STOP_WAIT;
    let mut clean_walks = 0;
    while std::time::Instant::now() < deadline {
        match stop_what_runs() {
            None => clean_walks = 0,
            Some(settled) => {
                clean_walks += 1;
                if clean_walks == 2 {
                    return if settled {
                        Stop::Settled
                    } else {
                        Stop::Unsettled
                    };
                }
                continue;
            }
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    Stop::Failed
}

/// One walk of the sandbox's processes: stops again each one with a thread that can run
/// its program (`R`, `S`, `I`…). `None` when there was one; otherwise whether every thread
/// is stopped or dead (`true`) or some are still inside the kernel (`D`, `false`).
fn stop_what_runs() -> Option<bool> {
    walk_stopping_what_runs().0
}

/// [`stop_what_runs`], and the processes the walk found.
fn walk_stopping_what_runs() -> (Option<bool>, Vec<libc::pid_t>) {
    let me = std::process::id() as libc::pid_t;
    let mut ran = false;
    let mut settled = true;
    let pids = descendants_of(me);
    for &pid in &pids {
        match thread_states(pid) {
            Threads::StoppedOrDead => {}
            Threads::InKernel => settled = false,
            Threads::Running => {
                ran = true;
                // SAFETY: kill with a pid read from our own subtree.
                unsafe { libc::kill(pid, libc::SIGSTOP) };
            }
        }
    }
    ((!ran).then_some(settled), pids)
}

/// The worst state among a process's threads.
enum Threads {
    StoppedOrDead,
    InKernel,
    Running,
}

fn thread_states(pid: libc::pid_t) -> Threads {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Threads::StoppedOrDead;
    };
    let mut worst = Threads::StoppedOrDead;
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // The state follows the command's name, which is in parentheses and may hold any
        // character: read after the last `)`.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or("");
        match state {
            "T" | "t" | "Z" | "X" | "x" => {}
            // Asleep in the kernel without taking signals (`I` is `D` that does not count
            // as load): back in its program it stops first, for its SIGSTOP is pending.
            "D" | "I" => worst = Threads::InKernel,
            _ => return Threads::Running,
        }
    }
    worst
}

/// Reaps every child that has exited; returns the target's status if it is among them.
fn reap(target: libc::pid_t) -> Option<i32> {
    let mut result = None;
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return result;
        }
        if pid == target {
            result = Some(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else if libc::WIFSIGNALED(status) {
                128 + libc::WTERMSIG(status)
            } else {
                125
            });
        }
    }
}

/// How long processes that end with the command get to end on their own.
const HELPERS_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

/// Reaps children as they end, for up to `grace` or until none is left: helpers that end
/// with the command (Python's resource tracker and forkserver end when its pipes close)
/// are then neither killed nor counted as left running. What still runs after is killed;
/// it stays in the sandbox meanwhile.
fn let_helpers_end(grace: std::time::Duration) {
    let until = std::time::Instant::now() + grace;
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid out-pointer, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL) };
        if pid > 0 {
            continue;
        }
        if pid < 0 || std::time::Instant::now() >= until {
            // ECHILD: none left; or the time is up.
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Kills every other process of the sandbox's pid namespace and reaps them all. As pid 1
/// this process inherits every orphan of the namespace, so once `waitpid` finds no child
/// left, no process but this one is. (This process's own exit would have the kernel kill
/// them too; it is done here so that the supervisor can be told the sandbox is empty
/// before that exit.)
fn empty_pid_namespace() -> u32 {
    let mut reaped = 0;
    loop {
        // SAFETY: kill(-1) from a namespace's init signals every other process of that
        // namespace (and none outside it). A fork racing with it fails: the kernel refuses
        // to finish a fork whose parent has a fatal signal pending.
        unsafe { libc::kill(-1, libc::SIGKILL) };
        let mut status = 0;
        // SAFETY: waitpid with a valid out-pointer; __WALL reaps children whatever signal
        // they report their end with, blocking until one has ended.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
        if pid > 0 && libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL {
            reaped += 1;
        }
        if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // ECHILD: no child left.
            return reaped;
        }
    }
}

/// Kills every descendant (they are all our children or theirs: we are a subreaper) until
/// none is left; returns how many were killed.
fn kill_descendants() -> u32 {
    let mut killed = std::collections::HashSet::new();
    loop {
        let descendants = descendants_of(std::process::id() as libc::pid_t);
        if descendants.is_empty() {
            return killed.len() as u32;
        }
        for pid in descendants {
            killed.insert(pid);
            // SAFETY: kill with a pid read from our own subtree.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let mut status = 0;
        // SAFETY: waitpid with a valid out-pointer; blocking until one child is reaped.
        while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn descendants_of(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                out.push(child);
                stack.push(child);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folders_frozen_are_those_above_each_secret_up_to_home() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".config")).unwrap();
        std::fs::create_dir_all(home.join("data/deep")).unwrap();
        std::fs::write(home.join("data/deep/token"), "t").unwrap();
        std::fs::write(home.join(".docker"), "a file where a folder is expected").unwrap();
        std::fs::create_dir_all(dir.path().join("hidden")).unwrap();
        std::fs::create_dir_all(dir.path().join("sys")).unwrap();
        std::fs::write(dir.path().join("sys/key"), "k").unwrap();
        let gh = home.join(".config/gh");
        let aws = home.join(".aws/credentials");
        let docker = home.join(".docker/config.json");
        let under_hidden = dir.path().join("hidden/x/y");
        let missing = [gh.as_path(), aws.as_path(), docker.as_path(), &under_hidden];
        let token = home.join("data/deep/token");
        let key = dir.path().join("sys/key");
        let existing = [token.as_path(), key.as_path()];
        let hidden = [dir.path().join("hidden").into_os_string()];
        let hidden: Vec<&OsStr> = hidden.iter().map(|h| h.as_os_str()).collect();
        assert_eq!(
            freeze_dirs(&existing, &missing, &[], &hidden, &[&home]),
            Some(vec![
                home.clone(),
                home.join(".config"),
                home.join("data"),
                home.join("data/deep"),
                dir.path().join("sys"),
            ])
        );
        // One whose nearest folder is / or in /proc or /dev cannot be frozen.
        for m in [
            "/fence-missing-secret",
            "/proc/fence-missing/x",
            "/dev/fence-missing",
        ] {
            assert_eq!(
                freeze_dirs(&[], &[Path::new(m)], &[], &[], &[]),
                None,
                "{m}"
            );
        }
        assert_eq!(freeze_dirs(&[], &[], &[], &[], &[]), Some(vec![]));
        // A folder holding a link on the way is frozen, up to the home it lies in.
        let links = home.join("data/links");
        assert_eq!(
            freeze_dirs(&[], &[], &[&links, Path::new("/")], &[], &[&home]),
            Some(vec![home.clone(), home.join("data"), links.clone()])
        );
        // An existing one directly in / keeps its cover alone; one in /etc the sandbox
        // could read (/etc/hostname) has /etc frozen.
        assert_eq!(
            freeze_dirs(&[Path::new("/etc")], &[], &[], &[], &[]),
            Some(vec![])
        );
        assert_eq!(
            freeze_dirs(&[Path::new("/etc/hostname")], &[], &[], &[], &[]),
            Some(vec![PathBuf::from("/etc")])
        );
    }

    /// The check is the kernel's for this process's ids without capabilities: a file whose
    /// mode grants nothing is unreadable to the sandbox even where this process (root, with
    /// CAP_DAC_OVERRIDE) could open it, and this process keeps its capabilities.
    #[test]
    fn readability_is_judged_without_capabilities() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (open, closed) = (dir.path().join("open"), dir.path().join("closed"));
        std::fs::write(&open, "o").unwrap();
        std::fs::write(&closed, "c").unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
        let missing = dir.path().join("missing");
        // A folder that may be searched but not listed lets a known name be opened.
        let (search_only, shut) = (dir.path().join("search-only"), dir.path().join("shut"));
        for (d, mode) in [(&search_only, 0o100), (&shut, 0o000)] {
            std::fs::create_dir(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let before = caps::read(None, caps::CapSet::Effective).unwrap();
        assert_eq!(
            readable_by_sandbox(&[&open, &closed, &missing, &search_only, &shut]),
            Ok(vec![true, false, true, true, false])
        );
        assert_eq!(caps::read(None, caps::CapSet::Effective).unwrap(), before);
        assert_eq!(readable_by_sandbox(&[]), Ok(vec![]));
    }
}

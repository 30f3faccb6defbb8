//! The target stage: the child of the sandbox init that confines itself and becomes the
//! wrapped command. Single-threaded; each step below strengthens the sandbox, in an order
//! where no step needs what an earlier one took away, and ends in `execve`.

use std::convert::Infallible;
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use caps::{CapSet, Capability};

use crate::channel::{Channel, FromShim, SandboxSpec};
use crate::landlock_fence;
use crate::seccomp_filters::{self, FencedSettings, SocketFamilies, StaticGuards};
use crate::sys;

/// A step that failed, and the exit status the shim leaves with.
#[derive(Debug)]
pub struct StageFailure {
    pub stage: &'static str,
    pub message: String,
    pub exit_code: i32,
}

impl StageFailure {
    fn setup(stage: &'static str, message: impl ToString) -> Self {
        StageFailure {
            stage,
            message: message.to_string(),
            exit_code: 125,
        }
    }
}

/// Confines the calling process according to `spec` and executes the target. Returns
/// only the failure; the caller reports it and exits with its code.
pub fn confine_and_exec(
    spec: &SandboxSpec,
    channel: &Channel,
    spare_pool: Option<&OwnedFd>,
    prebuilt: Option<&PrebuiltProgram>,
) -> StageFailure {
    match confine_and_exec_inner(spec, channel, spare_pool, prebuilt) {
        Ok(never) => match never {},
        Err(failure) => failure,
    }
}

/// The seccomp settings of a target confined by `plan` (`landlock_abi` 0 when no ruleset
/// is in force; `tcp_fenced` when it refuses the target's TCP binds and connects).
pub(crate) fn fenced_settings(
    spec: &SandboxSpec,
    plan: Option<&landlock_fence::FencePlan>,
    landlock_abi: i32,
    tcp_fenced: bool,
) -> FencedSettings {
    let plan_guards = plan
        .filter(|_| landlock_abi > 0)
        .map(|p| (p.needs_truncate_guard(), p.needs_group_kill_guard()));
    settings_with(spec, plan_guards, tcp_fenced)
}

/// [`fenced_settings`] from the plan's two guards (truncating opens, group kill), `None`
/// without a ruleset in force.
fn settings_with(
    spec: &SandboxSpec,
    plan_guards: Option<(bool, bool)>,
    tcp_fenced: bool,
) -> FencedSettings {
    // The static part goes first: nothing it refuses is ever worth a notification.
    // Inet sockets exist only where something bounds them: the sandbox's own network
    // namespace, or Landlock refusing every TCP bind and connect of the target itself (the
    // supervisor then performs those it allows, on loopback, from the loopback table).
    // Otherwise (Landlock below ABI 4 without a network namespace) there is no network.
    let loopback_table = !spec.namespaces.net && tcp_fenced;
    let families = if spec.namespaces.net {
        SocketFamilies::OwnNetwork
    } else if loopback_table {
        SocketFamilies::UnixAndInet
    } else {
        SocketFamilies::UnixOnly
    };
    // Without a Landlock ruleset (degraded) both guards apply: they cost nothing.
    let (truncating_opens, group_kill) = plan_guards.unwrap_or((true, true));
    FencedSettings {
        families,
        guards: StaticGuards {
            truncating_opens,
            group_kill,
            host_ipc: !spec.namespaces.ipc,
            host_pids: !spec.namespaces.pid,
            setid_opens: spec.no_write_watch,
            // Without a user namespace the shim's ids are the supervisor's: an ordinary
            // user's supervisor has no privilege over an undumpable process of its own.
            // SAFETY: geteuid has no preconditions.
            keep_dumpable: !spec.namespaces.user && unsafe { libc::geteuid() } != 0,
        },
        watch_writes: !spec.no_write_watch,
        loopback_table,
        dns: spec.allow_dns,
    }
}

/// A seccomp program built ahead, for the settings the target is expected to need.
pub struct PrebuiltProgram {
    pub settings: FencedSettings,
    pub program: Vec<libc::sock_filter>,
}

/// The seccomp settings the target will come to when the mount view hides the secrets
/// and its Landlock ruleset is in force as planned (the usual case), worked out from
/// `spec` and the kernel's Landlock ABI alone, so that the program can be built while the
/// shim makes the mount view ([`prebuild`]): the kernel checks and compiles it in the
/// target, but building it (seccompiler's chains, the peephole pass) took 0.5–1 ms of each
/// start there, in a process just forked. `None` where the target's own path differs (no
/// Landlock, --allow-degraded). Not a boundary: the target uses a prebuilt program only
/// for settings equal to those it works out itself, and builds its own otherwise.
pub fn expected_settings(spec: &SandboxSpec, kernel_abi: i32) -> Option<FencedSettings> {
    use landlock_fence::Compensation;
    let abi = landlock_fence::effective_abi(kernel_abi, spec.landlock_abi_max);
    if abi <= 0 || spec.allow_degraded {
        return None;
    }
    let ns = spec.namespaces;
    let compensations = landlock_fence::compensations(abi, ns).ok()?;
    // The view hides every secret itself wherever there is one (`reads_by_mounts`, set
    // when the view is made); the plan then guards truncating opens (`FencePlan`).
    let reads_by_mounts = ns.mount && ns.pid;
    let guards = (
        compensations.contains(&Compensation::Truncate) || reads_by_mounts,
        compensations.contains(&Compensation::SignalsByPidNamespace),
    );
    let tcp_fenced = !ns.net && abi >= 4;
    Some(settings_with(spec, Some(guards), tcp_fenced))
}

/// Builds the program for [`expected_settings`], if any.
pub fn prebuild(spec: &SandboxSpec) -> Option<PrebuiltProgram> {
    let settings = expected_settings(spec, sys::landlock_abi_version())?;
    let program = seccomp_filters::fenced_program_for(settings).ok()?;
    Some(PrebuiltProgram { settings, program })
}

/// The spare folders of `spec`'s pool, opened (`O_PATH`, no symlink followed) through the
/// pool's descriptor for their rules. A name that does not open as a directory is left
/// out: the supervisor hands out only those granted.
fn open_spares(spec: &SandboxSpec, pool: Option<&OwnedFd>) -> Vec<(OsString, OwnedFd)> {
    let (Some(pool), Some(plan)) = (pool, &spec.spare_pool) else {
        return Vec::new();
    };
    plan.names
        .iter()
        .filter_map(|name| {
            let c = CString::new(name.as_bytes()).ok()?;
            // SAFETY: openat of a NUL-terminated name relative to our open descriptor.
            let fd = unsafe {
                libc::openat(
                    pool.as_raw_fd(),
                    c.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            };
            // SAFETY: a fresh descriptor we own.
            (fd >= 0).then(|| (name.clone(), unsafe { OwnedFd::from_raw_fd(fd) }))
        })
        .collect()
}

/// Whether descriptor `fd` is open on a directory (an `O_PATH` one included).
fn is_directory(fd: RawFd) -> bool {
    sys::fd_is_directory(fd).unwrap_or(false)
}

fn confine_and_exec_inner(
    spec: &SandboxSpec,
    channel: &Channel,
    spare_pool: Option<&OwnedFd>,
    prebuilt: Option<&PrebuiltProgram>,
) -> Result<Infallible, StageFailure> {
    // The init blocked signals to forward them; the target starts with defaults, and
    // SIGPIPE back at SIG_DFL (the Rust runtime of the shim ignores it).
    reset_signals();
    // The target must not outlive its init (without a pid namespace nothing else kills it).
    sys::set_parent_death_signal(libc::SIGKILL)
        .map_err(|e| StageFailure::setup("parent-death signal", e))?;

    if spec.namespaces.user {
        take_back_own_ids(spec.uid, spec.gid)
            .map_err(|e| StageFailure::setup("user namespace", e))?;
    }
    // Without a terminal of the session (standard descriptors not a terminal), the target
    // leaves the controlling terminal it inherited: /dev/tty would otherwise reach the
    // terminal of the shell or agent that started fence, and what the user types there.
    if spec.session_tty.is_none() {
        let _ = nix::unistd::setsid();
    }
    // A directory descriptor from outside leads around the sandbox's mount view (`..`
    // from it walks the host's own mounts, where no secret is covered). Standard
    // descriptors that are directories are refused; a directory passed on purpose
    // (`--pass-fd`) keeps Landlock's read rules, which judge the object reached.
    for fd in 0..=2 {
        if is_directory(fd) {
            return Err(StageFailure::setup(
                "standard descriptors",
                format!(
                    "descriptor {fd} is a directory, which would reach the host's files around the sandbox's view"
                ),
            ));
        }
    }
    let without_read_mounts;
    let spec = if spec.reads_by_mounts && spec.pass_fds.iter().any(|p| is_directory(p.inherited)) {
        without_read_mounts = SandboxSpec {
            reads_by_mounts: false,
            ..spec.clone()
        };
        &without_read_mounts
    } else {
        spec
    };

    std::env::set_current_dir(&spec.cwd).map_err(|e| {
        StageFailure::setup(
            "working directory",
            format!("{}: {e}", Path::new(&spec.cwd).display()),
        )
    })?;
    let program = resolve_program(spec).inspect_err(|failure| {
        let _ = channel.send(
            &FromShim::ExecFailed {
                program: spec.argv.first().cloned().unwrap_or_default(),
                message: failure.message.clone(),
                exit_code: failure.exit_code,
            },
            None,
        );
    })?;

    let mut degraded = Vec::new();
    // The ABI fence builds for: the kernel's, or lower under FENCE_LANDLOCK_ABI_MAX; what
    // that ABI lacks is compensated below (seccomp guards, namespaces, the supervisor) or
    // the plan refuses.
    // The plan reads directories while we still may; it grants nothing by itself.
    let plan = match landlock_fence::plan(spec, sys::landlock_abi_version()) {
        Ok(plan) => {
            degraded.extend(plan.uncompensated.iter().cloned());
            Some(plan)
        }
        Err(e) if spec.allow_degraded => {
            degraded.push(format!("file fence: {e}"));
            None
        }
        Err(e) => return Err(StageFailure::setup("landlock", e)),
    };

    if let Some(limit) = spec.nproc_limit {
        sys::set_nproc_limit(limit).map_err(|e| StageFailure::setup("RLIMIT_NPROC", e))?;
    }
    drop_capabilities()?;
    // no_new_privs: set-id programs and file capabilities gain nothing from here on, and
    // an uid-0 exec cannot refill the permitted set we just emptied.
    sys::set_no_new_privs().map_err(|e| StageFailure::setup("no_new_privs", e))?;

    let mut landlock_abi = 0;
    let mut truncate_by_landlock = false;
    let mut tcp_fenced = false;
    let mut bounded = Vec::new();
    let mut spares_granted = Vec::new();
    let spares = open_spares(spec, spare_pool);
    if let Some(plan) = &plan {
        match landlock_fence::restrict_self(plan, &spares) {
            Ok((attached, granted)) => {
                landlock_abi = plan.abi;
                truncate_by_landlock = plan.handles_truncate();
                tcp_fenced = plan.deny_tcp;
                bounded = attached;
                spares_granted = granted;
            }
            Err(e) if spec.allow_degraded => degraded.push(format!("file fence: {e}")),
            Err(e) => return Err(StageFailure::setup("landlock", e)),
        }
    }

    let settings = fenced_settings(spec, plan.as_ref(), landlock_abi, tcp_fenced);
    let prebuilt = prebuilt
        .filter(|p| p.settings == settings)
        .map(|p| p.program.as_slice());
    let listener = install_seccomp_filter(spec, settings, prebuilt, &mut degraded)?;

    // Hand the listener over. `sendmsg` is not notified, so this cannot wait on a
    // supervisor that does not yet hold the listener.
    let compensations = plan
        .iter()
        .filter(|_| landlock_abi > 0)
        .flat_map(|p| p.compensations.iter().map(|c| c.short().to_string()))
        .collect();
    drop(spares);
    // The spare folders granted, with the pool they lie in: only the supervisor moves them
    // (the pool's descriptor is closed here at exec, as every one above 2 is).
    if let Some(pool) = spare_pool.filter(|_| !spares_granted.is_empty()) {
        channel
            .send(
                &FromShim::SpareFolders {
                    spares: spares_granted,
                },
                Some(pool.as_fd()),
            )
            .map_err(|e| StageFailure::setup("spare folders hand-off", e))?;
    }
    channel
        .send(
            &FromShim::Confined {
                landlock_abi,
                compensations,
                degraded,
                listener: listener.is_some(),
                loopback_table: settings.loopback_table,
                bounded,
                truncate_by_landlock,
            },
            listener.as_ref().map(|fd| fd.as_fd()),
        )
        .map_err(|e| StageFailure::setup("listener hand-off", e))?;
    // The listener must not survive into the target: with it, the target could answer
    // its own calls.
    drop(listener);

    let argv = to_cstrings(spec.argv.iter().map(|a| a.as_bytes().to_vec()))?;
    let envp = to_cstrings(spec.env.iter().map(|(k, v)| {
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        kv
    }))?;
    let program_c = CString::new(program.as_os_str().as_bytes())
        .map_err(|_| StageFailure::setup("exec", "NUL in program path"))?;

    // --pass-fd: the channel moves out of the way of a passed descriptor's number first.
    let moved_channel;
    let channel = if spec
        .pass_fds
        .iter()
        .any(|p| p.target == channel.as_raw_fd())
    {
        let above = spec.pass_fds.iter().map(|p| p.target).max().unwrap_or(2) + 1;
        moved_channel = Channel::from_owned_fd(
            sys::dup_cloexec_above(channel.as_fd(), above)
                .map_err(|e| StageFailure::setup("pass descriptors", e))?,
        );
        &moved_channel
    } else {
        channel
    };
    for pass in &spec.pass_fds {
        if pass.inherited != pass.target {
            sys::dup2(pass.inherited, pass.target)
                .map_err(|e| StageFailure::setup("pass descriptors", e))?;
        }
    }
    // Every descriptor above 2 closes at exec (the channel included, which stays usable to
    // report an exec failure): Landlock checks opens, not descriptors already held.
    sys::cloexec_from(3).map_err(|e| StageFailure::setup("close descriptors", e))?;
    // Except those passed on purpose (`--pass-fd`): the target keeps whatever access they
    // carry, outside the worktree too — Landlock checks opens, not descriptors held.
    for pass in &spec.pass_fds {
        sys::keep_across_exec(pass.target)
            .map_err(|e| StageFailure::setup("pass descriptors", e))?;
    }

    if spec.batch_scheduling {
        // Scheduling, not confinement. Under SCHED_BATCH a process that wakes does not
        // preempt the one running on its CPU. The supervisor wakes a caller on its own
        // CPU when it answers (the synchronous wake-up that makes a notification cheap);
        // under the normal policy the caller then preempts the supervisor before it is
        // back waiting for the next call, and the idle CPU pulls the supervisor away, to
        // be pulled back at the next call. CPU shares and nice values are unchanged, and
        // the command may switch back with sched_setscheduler. Children inherit it.
        // Refused (a container's seccomp profile), the normal policy stays: slower,
        // not weaker.
        let _ = sys::set_batch_scheduling();
    }
    let err = nix::unistd::execve(&program_c, &argv, &envp).unwrap_err();
    let exit_code = if err == nix::errno::Errno::ENOENT {
        127
    } else {
        126
    };
    let _ = channel.send(
        &FromShim::ExecFailed {
            program: program.into_os_string(),
            message: err.desc().to_string(),
            exit_code,
        },
        None,
    );
    Err(StageFailure {
        stage: "exec",
        message: err.desc().to_string(),
        exit_code,
    })
}

/// Installs the one seccomp program (static part and notified calls) with a new listener.
/// Inside another seccomp-notify sandbox the kernel refuses a second listener (EBUSY):
/// fence cannot run there, even with --allow-degraded. With --allow-dns a missing listener
/// is refused too (see below). With `--allow-degraded` and no user notification, the
/// static part is installed alone.
fn install_seccomp_filter(
    spec: &SandboxSpec,
    settings: FencedSettings,
    prebuilt: Option<&[libc::sock_filter]>,
    degraded: &mut Vec<String>,
) -> Result<Option<std::os::fd::OwnedFd>, StageFailure> {
    let (families, guards) = (settings.families, settings.guards);
    let built;
    let program = match prebuilt {
        Some(program) => program,
        None => {
            built = seccomp_filters::fenced_program_for(settings)
                .map_err(|e| StageFailure::setup("seccomp", e))?;
            built.as_slice()
        }
    };
    let flags =
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | sys::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    let result = match sys::seccomp_set_mode_filter(program, flags) {
        // Before 5.19 the killable-wait flag is unknown: a signal then interrupts a pending
        // question, which the supervisor sees as an invalid id and denies.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            sys::seccomp_set_mode_filter(program, libc::SECCOMP_FILTER_FLAG_NEW_LISTENER)
        }
        other => other,
    };
    match result {
        Ok(fd) => Ok(fd),
        // SPEC §3: inside another seccomp-notify sandbox fence refuses, degraded or not.
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(StageFailure::setup(
            "seccomp",
            "fence cannot run inside another seccomp-notify sandbox (the kernel refused a second listener: EBUSY)",
        )),
        // Security boundary: with --allow-dns the static program lets inet datagram sockets
        // through because their creation is notified and rewritten into a stand-in; without
        // the notification program they would be real sockets on the host's network.
        Err(e) if spec.allow_dns => Err(StageFailure::setup(
            "seccomp",
            format!(
                "--allow-dns needs seccomp user notification, which is not available ({e}); \
                 run without --allow-dns"
            ),
        )),
        Err(e) if spec.allow_degraded => {
            degraded.push(format!(
                "no seccomp user notification ({e}): exec and write checks are off"
            ));
            let deny_list = seccomp_filters::static_program(families, guards, spec.allow_dns)
                .map_err(|e| StageFailure::setup("seccomp", e))?;
            sys::seccomp_set_mode_filter(&deny_list, 0)
                .map_err(|e| StageFailure::setup("seccomp", e))?;
            Ok(None)
        }
        Err(e) => Err(StageFailure::setup(
            "seccomp",
            format!(
                "seccomp user notification is not available ({e}); fence needs Linux 5.0, and 6.6 for its speed"
            ),
        )),
    }
}

/// Enters a nested user namespace mapping `uid`/`gid` to the shim's namespace root (which
/// is the caller's real uid/gid outside): the target then runs under its own ids, with
/// capabilities only in a namespace that owns nothing, and those are dropped next.
fn take_back_own_ids(uid: u32, gid: u32) -> std::io::Result<()> {
    // SAFETY: unshare takes flags by value; the process is single-threaded, as required.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} 0 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} 0 1"))?;
    Ok(())
}

/// Empties every capability set. The bounding set first (dropping from it needs
/// CAP_SETPCAP, which the later steps remove); an unprivileged caller has no capability to
/// drop and cannot shrink the bounding set, which no_new_privs then makes irrelevant.
fn drop_capabilities() -> Result<(), StageFailure> {
    let err = |e: caps::errors::CapsError| StageFailure::setup("capabilities", e);
    if caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP).map_err(err)? {
        // Every capability number the kernel knows, including any newer than the caps
        // crate's list: PR_CAPBSET_DROP of one already dropped succeeds, and EINVAL marks
        // the first number past the kernel's last. One call each, no read before.
        for cap in 0..64 {
            // SAFETY: prctl with plain integer arguments.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } == 0 {
                continue;
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINVAL) && cap > 0 {
                break;
            }
            return Err(StageFailure::setup(
                "capabilities",
                format!("dropping capability {cap} from the bounding set: {e}"),
            ));
        }
    }
    caps::clear(None, CapSet::Ambient).map_err(err)?;
    caps::clear(None, CapSet::Inheritable).map_err(err)?;
    caps::clear(None, CapSet::Effective).map_err(err)?;
    caps::clear(None, CapSet::Permitted).map_err(err)?;
    if !caps::read(None, CapSet::Permitted).map_err(err)?.is_empty() {
        return Err(StageFailure::setup(
            "capabilities",
            "permitted set not empty after clearing",
        ));
    }
    Ok(())
}

fn reset_signals() {
    // SAFETY: sigset operations on a local set, then sigprocmask/signal with valid values;
    // the process is single-threaded here.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        for sig in 1..32 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
    }
}

fn to_cstrings(items: impl Iterator<Item = Vec<u8>>) -> Result<Vec<CString>, StageFailure> {
    items
        .map(|b| {
            CString::new(b).map_err(|_| {
                StageFailure::setup("exec", "argument or environment contains a NUL byte")
            })
        })
        .collect()
}

/// Finds the program the way `execvp` would (PATH from the target's environment), so that
/// only one `execve` — the one the supervisor judges — is made.
fn resolve_program(spec: &SandboxSpec) -> Result<PathBuf, StageFailure> {
    let Some(name) = spec.argv.first() else {
        return Err(StageFailure::setup("exec", "no command given"));
    };
    if name.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(name));
    }
    let not_found = || StageFailure {
        stage: "exec",
        message: "command not found".to_string(),
        exit_code: 127,
    };
    if name.is_empty() {
        return Err(not_found());
    }
    let path_var: OsString = spec
        .env
        .iter()
        .find(|(k, _)| k == OsStr::new("PATH"))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    let mut denied = None;
    for dir in path_var.as_bytes().split(|&b| b == b':') {
        let dir = if dir.is_empty() {
            b".".to_vec()
        } else {
            dir.to_vec()
        };
        let candidate = PathBuf::from(OsString::from_vec(dir)).join(name);
        let Ok(meta) = std::fs::metadata(&candidate) else {
            continue;
        };
        if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
            return Ok(candidate);
        }
        denied.get_or_insert(candidate);
    }
    match denied {
        Some(candidate) => Ok(candidate), // exec reports EACCES: status 126
        None => Err(not_found()),
    }
}

//! `fence run`: wrap a command so the kernel enforces the worktree fence on its whole
//! process tree, and every exec and attempted write outside reaches the policy.

mod acting;
mod blocked_reason;
pub mod exec_check;
mod fence;
mod git_head;
pub mod limits;
mod listener;
mod metadata;
mod net_check;
mod notify_loop;
mod path_resolve;
mod pidfd;
mod preflight;
mod prepare;
mod spawn;
mod target_memory;
mod write_check;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shim::{Channel, FromShim, SandboxSpec, ToShim};

use self::fence::Fence;
use self::listener::Listener;
use self::notify_loop::{Counters, Supervision};
use self::prepare::SessionTmp;

/// Exit status for fence's own failures (like `env` and `timeout`).
pub const EXIT_FENCE_FAILED: i32 = 125;

/// `fence run` flags (SPEC Appendix A; the others are not accepted by this build).
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The worktree (default: the git worktree containing the current directory, else it).
    #[arg(long, value_name = "DIR")]
    pub worktree: Option<PathBuf>,
    /// Accept / or $HOME as the worktree.
    #[arg(long)]
    pub force_worktree: bool,
    /// Also allow writes beneath PATH.
    #[arg(long = "allow-write", value_name = "PATH")]
    pub allow_write: Vec<PathBuf>,
    /// Also make PATH unreadable.
    #[arg(long = "deny-read", value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    /// Pass the variable NAME even though it looks like a credential.
    #[arg(long = "env", value_name = "NAME")]
    pub env: Vec<String>,
    /// Do not write blocked reasons to the sandboxed processes' stderr.
    #[arg(long)]
    pub quiet_blocks: bool,
    /// Run with what the kernel offers even when it is weaker than the policy.
    #[arg(long)]
    pub allow_degraded: bool,
    /// Most processes the sandbox may have at once (cgroup `pids.max`; else RLIMIT_NPROC,
    /// which counts all of the user's processes and does not bind root).
    #[arg(long = "max-procs", value_name = "N", default_value_t = limits::DEFAULT_MAX_PROCS,
          value_parser = limits::parse_max_procs)]
    pub max_procs: u64,
    /// Size of the session TMPDIR (a tmpfs inside the sandbox; e.g. 512M, 1G).
    #[arg(long = "tmp-size", value_name = "SIZE", default_value = "1G",
          value_parser = limits::parse_size)]
    pub tmp_size: u64,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Runs the session; returns the exit status for fence.
pub fn run(args: RunArgs) -> i32 {
    match run_session(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("fence: {message}");
            EXIT_FENCE_FAILED
        }
    }
}

fn run_session(args: RunArgs) -> Result<i32, String> {
    let abi = shim::landlock_abi();
    let missing = preflight::missing_features(abi);
    if !missing.is_empty() {
        if !args.allow_degraded {
            return Err(format!(
                "refusing to run: this kernel lacks {} (use --allow-degraded to run with a weaker fence)",
                missing.join(" and ")
            ));
        }
        eprintln!(
            "fence: running degraded, the fence is advisory: missing {}",
            missing.join(" and ")
        );
    }

    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let worktree = crate::session::find_worktree(
        args.worktree.as_deref(),
        &cwd,
        home.as_deref(),
        args.force_worktree,
    )
    .map_err(|e| format!("{e:#}"))?;
    let tmp = SessionTmp::create().map_err(|e| format!("creating the session TMPDIR: {e}"))?;
    let policy = exec_policy(&worktree, &tmp.path)?;
    let allow_write = canonical_all(&args.allow_write, "--allow-write")?;
    let deny_extra = canonical_all(&args.deny_read, "--deny-read")?;
    let deny_read = prepare::denied_reads(home.as_deref(), &deny_extra);
    let session_tty = prepare::session_tty();

    let mut writable = vec![worktree.clone(), tmp.path.clone()];
    writable.extend(allow_write.iter().cloned());
    if Path::new("/dev/shm").is_dir() {
        writable.push(PathBuf::from("/dev/shm"));
    }
    let mut devices: Vec<PathBuf> = [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    devices.extend(session_tty.iter().cloned());

    // The process-count limit: a session cgroup where one can be made, else RLIMIT_NPROC
    // in the target. Dropped (killed, removed) after the shim was reaped.
    let nproc_note = |why: &str| {
        eprintln!(
            "fence: {why}; using RLIMIT_NPROC={}, which counts all of this user's processes and does not bind uid 0",
            args.max_procs
        );
    };
    let mut cgroup = match limits::SessionCgroup::create(args.max_procs) {
        Ok(cg) => Some(cg),
        Err(e) => {
            nproc_note(&format!("no cgroup for the process limit ({e})"));
            None
        }
    };
    let forwarded = block_forwarded_signals();
    let start = |nproc_limit: Option<u64>| -> Result<(spawn::ShimProcess, Channel), String> {
        let (ours, theirs) =
            Channel::pair().map_err(|e| format!("creating the shim channel: {e}"))?;
        let shim = spawn::start_shim(&theirs).map_err(|e| format!("starting the sandbox: {e}"))?;
        let spec = SandboxSpec {
            argv: args.command.clone(),
            env: prepare::sandbox_environment(std::env::vars_os(), &args.env, &tmp.path),
            cwd: cwd.clone().into_os_string(),
            worktree: worktree.clone().into_os_string(),
            tmpdir: tmp.path.clone().into_os_string(),
            allow_write: allow_write
                .iter()
                .map(|p| p.clone().into_os_string())
                .collect(),
            deny_read: deny_read
                .iter()
                .map(|p| p.clone().into_os_string())
                .collect(),
            session_tty: session_tty.clone().map(PathBuf::into_os_string),
            namespaces: shim.namespaces,
            // SAFETY: getuid/getgid have no preconditions.
            uid: unsafe { libc::getuid() },
            gid: unsafe { libc::getgid() },
            allow_degraded: args.allow_degraded,
            nproc_limit,
            tmp_size: shim.namespaces.mount.then_some(args.tmp_size),
        };
        if let Err(e) = ours.send(&ToShim::Start(Box::new(spec)), None) {
            kill_and_reap(shim.pid);
            return Err(format!("sending the sandbox spec: {e}"));
        }
        Ok((shim, ours))
    };
    let (mut shim_process, mut ours) = start(cgroup.is_none().then_some(args.max_procs))?;
    // The shim is moved into the session cgroup while it prepares its namespaces (the move
    // can take milliseconds: it waits for an RCU grace period); it forks nothing before
    // `Proceed`, so every process of the sandbox is counted from the first. A cgroup we
    // could make but not join (no write access to the common ancestor): the shim is killed
    // before it forked anything, and the session starts again under RLIMIT_NPROC.
    if let Some(Err(e)) = cgroup.as_ref().map(|cg| {
        cg.add(shim_process.pid)
            .map_err(|e| format!("joining {}: {e}", cg.dir.display()))
    }) {
        kill_and_reap(shim_process.pid);
        cgroup = None;
        nproc_note(&format!("cannot use the session cgroup ({e})"));
        (shim_process, ours) = start(Some(args.max_procs))?;
    }
    // A failed send means the shim is gone: its report, or the end of the channel, comes
    // through the loop below.
    let _ = ours.send(&ToShim::Proceed, None);
    if let Some(cg) = &cgroup {
        eprintln!(
            "fence: at most {} processes (cgroup pids.max, {})",
            args.max_procs,
            cg.dir.display()
        );
    }
    if !shim_process.namespaces.mount {
        eprintln!("fence: no mount namespace: the session TMPDIR's size is not limited");
    }
    spawn_signal_forwarder(forwarded, shim_process.pid);

    path_resolve::settle_roots(&writable);
    let fence = Arc::new(Fence {
        worktree,
        writable,
        devices,
        read_only_view: shim_process.namespaces.mount,
        quiet_blocks: args.quiet_blocks,
    });
    let counters = Arc::new(Counters::default());

    let mut failure: Option<i32> = None;
    loop {
        match ours.recv::<FromShim>() {
            Ok(Some((
                FromShim::Confined {
                    degraded, listener, ..
                },
                fd,
            ))) => {
                for d in &degraded {
                    eprintln!("fence: running degraded: {d}");
                }
                match (listener, fd) {
                    (true, Some(fd)) => {
                        let listener = Listener::new(fd);
                        listener.enable_sync_wake_up();
                        let supervision = Supervision {
                            listener: Arc::new(listener),
                            fence: fence.clone(),
                            policy: policy.clone(),
                            counters: counters.clone(),
                        };
                        if let Err(e) = notify_loop::spawn(supervision) {
                            kill_and_reap(shim_process.pid);
                            return Err(format!("starting the notification loop: {e}"));
                        }
                    }
                    (false, _) if args.allow_degraded => {}
                    _ => {
                        kill_and_reap(shim_process.pid);
                        return Err("the sandbox did not hand over its seccomp listener".into());
                    }
                }
            }
            Ok(Some((
                FromShim::SetupFailed {
                    stage,
                    message,
                    exit_code,
                },
                _,
            ))) => {
                eprintln!("fence: cannot start the sandbox ({stage}): {message}");
                failure = Some(exit_code);
            }
            Ok(Some((
                FromShim::ExecFailed {
                    program,
                    message,
                    exit_code,
                },
                _,
            ))) => {
                eprintln!(
                    "fence: cannot run {}: {message}",
                    crate::escape::bytes_for_terminal(std::os::unix::ffi::OsStrExt::as_bytes(
                        program.as_os_str()
                    ))
                );
                failure = Some(exit_code);
            }
            Ok(None) => break,
            Err(e) => {
                kill_and_reap(shim_process.pid);
                return Err(format!("shim channel: {e}"));
            }
        }
    }

    let status = wait_for(shim_process.pid);
    drop(cgroup);
    drop(tmp);
    Ok(failure.unwrap_or(status))
}

/// The policy crate's classifier for this session, in exec context.
fn exec_policy(worktree: &Path, tmpdir: &Path) -> Result<Arc<dyn exec_check::ExecPolicy>, String> {
    let mut loaded =
        crate::session::load(worktree.to_path_buf(), None, None).map_err(|e| format!("{e:#}"))?;
    for w in &loaded.warnings {
        eprintln!(
            "fence: warning: {}",
            crate::escape::for_terminal(&w.to_string())
        );
    }
    loaded.settings.session_tmp = Some(tmpdir.to_path_buf());
    let classifier = policy::Classifier::new(loaded.settings).map_err(|e| e.to_string())?;
    Ok(Arc::new(classifier))
}

fn canonical_all(paths: &[PathBuf], flag: &str) -> Result<Vec<PathBuf>, String> {
    paths
        .iter()
        .map(|p| {
            p.canonicalize()
                .map_err(|e| format!("{flag} {}: {e}", p.display()))
        })
        .collect()
}

/// Waits for the shim and turns its status into fence's (128+N for a signal).
fn wait_for(pid: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid out-pointer.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == pid {
            if libc::WIFEXITED(status) {
                return libc::WEXITSTATUS(status);
            }
            if libc::WIFSIGNALED(status) {
                return 128 + libc::WTERMSIG(status);
            }
        } else if ret < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return EXIT_FENCE_FAILED;
        }
    }
}

fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: signalling and reaping our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

const FORWARDED: [libc::c_int; 8] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGCONT,
];

/// Blocks the forwarded signals in this (still single-threaded) process, so that every
/// thread created later inherits the mask and only the forwarder receives them.
fn block_forwarded_signals() -> libc::sigset_t {
    // SAFETY: sigset operations on a local set; pthread_sigmask with valid pointers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in FORWARDED {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Forwards signals sent to fence by a process (`kill`) to the sandbox's init. Signals the
/// terminal sends (Ctrl-C) reach the sandbox directly: it shares fence's process group.
fn spawn_signal_forwarder(set: libc::sigset_t, init: libc::pid_t) {
    std::thread::spawn(move || {
        loop {
            // SAFETY: siginfo_t is plain data.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: a valid set and out-pointer.
            let sig = unsafe { libc::sigwaitinfo(&set, &mut info) };
            if sig > 0 && info.si_code <= 0 {
                // SAFETY: signalling our own child.
                unsafe { libc::kill(init, sig) };
            }
        }
    });
}

//! `fence run`: wrap a command so the kernel enforces the worktree fence on its whole
//! process tree, and every exec and attempted write outside reaches the policy.

mod acting;
pub mod agent_code;
mod approval;
mod approved;
mod blocked_reason;
mod caller_context;
pub mod command_files;
mod dns_call;
pub mod exec_check;
mod fence;
mod foreground;
pub(crate) mod git_code;
mod git_config_change;
mod git_head;
mod kept_thread;
mod late_close;
pub mod limits;
mod listener;
mod loopback_table;
mod made_protected;
mod metadata;
mod net_check;
mod notify_loop;
mod one_cpu;
pub mod owner_shift;
mod path_resolve;
mod pidfd;
pub mod preflight;
mod prepare;
mod private_copy;
pub mod profile_grants;
mod proxy_gate;
mod question;
mod rebase_todo;
mod spare_folders;
mod spawn;
mod target_memory;
mod terminal;
mod tool_caches;
pub(crate) mod unix_diag;
mod view;
mod workers;
mod write_check;

use std::ffi::OsString;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shim::{Channel, FromShim, SandboxSpec, ToShim};

use self::fence::{Fence, Granted};
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
    /// Read FILE instead of the user's config (~/.config/fence/config.toml); the
    /// worktree's .fence.toml still applies, and may only tighten.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Add a profile's grants: claude, codex, gemini, aider or ci (`fence profiles` lists
    /// what each opens). Replaces the config's `profile`; the other flags still apply.
    #[arg(long, value_name = "NAME", value_parser = profile_grants::parse_profile)]
    pub profile: Option<&'static policy::profile::Profile>,
    /// Pass the variable NAME even though it looks like a credential.
    #[arg(long = "env", value_name = "NAME")]
    pub env: Vec<String>,
    /// Allow connections to the pathname unix socket PATH outside the worktree (the server
    /// sees fence's credentials as the peer: fence makes the connection).
    #[arg(long = "allow-unix", value_name = "PATH")]
    pub allow_unix: Vec<PathBuf>,
    /// Allow direct connections to HOST:PORT (IPv4, [IPv6] or a name; PORT may be a range
    /// such as 8000-8010). Names resolve once, at start.
    #[arg(long = "allow-net", value_name = "HOST:PORT", value_parser = parse_net_rule)]
    pub allow_net: Vec<crate::net::allow::NetRule>,
    /// Resolve HOST to IP instead of asking DNS (for --allow-net); IP counts as allowed by IP.
    #[arg(long = "resolve", value_name = "HOST:IP", value_parser = parse_resolve)]
    pub resolve: Vec<(String, std::net::IpAddr)>,
    /// Allow NAME (`example.com`, `*.example.com` for its subdomains, `:PORT` for one port)
    /// through fence's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY are set for the command).
    #[arg(long = "allow-domain", value_name = "NAME[:PORT]", value_parser = parse_domain_rule)]
    pub allow_domain: Vec<crate::net::proxy::DomainRule>,
    /// Let DNS through to the system resolvers (the nameservers of /etc/resolv.conf, port
    /// 53) and nothing else: UDP through fence's relay, TCP to those resolvers on port 53.
    #[arg(long)]
    pub allow_dns: bool,
    /// Do not write blocked reasons to the sandboxed processes' stderr.
    #[arg(long)]
    pub quiet_blocks: bool,
    /// Run with what the kernel offers even when it is weaker than the policy.
    #[arg(long)]
    pub allow_degraded: bool,
    /// Most processes the sandbox may have at once (its pid namespace's own pid_max on
    /// Linux 6.14+; else cgroup `pids.max`; else RLIMIT_NPROC, which counts all of the
    /// user's processes and does not bind root).
    #[arg(long = "max-procs", value_name = "N", default_value_t = limits::DEFAULT_MAX_PROCS,
          value_parser = limits::parse_max_procs)]
    pub max_procs: u64,
    /// Size of the session TMPDIR and of the private /dev/shm (each a tmpfs inside the
    /// sandbox; e.g. 512M, 1G).
    #[arg(long = "tmp-size", value_name = "SIZE", default_value = "1G",
          value_parser = limits::parse_size)]
    pub tmp_size: u64,
    /// default, auto (askable exec rules run without asking; writes outside, protected
    /// paths and connections are still asked) or ask-all (programs no rule matches ask).
    #[arg(long, value_name = "MODE", value_parser = approval::parse_run_mode)]
    pub mode: Option<policy::Mode>,
    /// Who answers questions: socket (a person, through `fence approvals`; the default
    /// when interactive) or deny (every question is No; the default otherwise).
    #[arg(long, value_name = "APPROVER", value_parser = approval::parse_approver)]
    pub approver: Option<approval::ApproverChoice>,
    /// Seconds a question waits for an answer before it is denied (10 to 3600).
    #[arg(long = "ask-timeout", value_name = "SECS", default_value_t = crate::gate::DEFAULT_ASK_TIMEOUT.as_secs(),
          value_parser = approval::parse_ask_timeout)]
    pub ask_timeout: u64,
    /// Append a JSON Lines audit log of every decision to FILE (created mode 0600).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Keep descriptor N (> 2) open in the command. Landlock checks opens, not descriptors
    /// already held: whatever N reaches, outside the worktree too, stays reachable.
    #[arg(long = "pass-fd", value_name = "N", value_parser = preflight::parse_pass_fd)]
    pub pass_fd: Vec<i32>,
    /// The worktree is read-only too: writes only in the session TMPDIR, --allow-write
    /// paths and the short device list (the closest to plan mode under `fence run`).
    #[arg(long)]
    pub read_only_worktree: bool,
    /// Do not notify the writes Landlock bounds (opens for writing, creates, renames,
    /// unlinks…): faster, and blocked writes get no reason. Needs a mount namespace.
    #[arg(long)]
    pub no_write_watch: bool,
    /// Run the command under the normal scheduling policy instead of SCHED_BATCH. Batch
    /// gives the same CPU share; a sandboxed process that wakes just does not preempt the
    /// running one — fence's supervisor answering its call included, which saves each
    /// notified exec a context switch and often a move to another CPU.
    #[arg(long)]
    pub normal_scheduling: bool,
    /// Leave the tools' cache variables alone. By default GOCACHE, PIP_CACHE_DIR,
    /// npm_config_cache, YARN_CACHE_FOLDER and CCACHE_DIR, when unset,
    /// point into a folder of fence's for this worktree (~/.cache/fence/worktrees), since
    /// the tools' own caches in the home are outside the fence.
    #[arg(long)]
    pub no_tool_caches: bool,
    /// Keep the host's /tmp (readable, not writable) instead of a private one. By default,
    /// with a mount namespace, the sandbox's /tmp is its TMPDIR's own tmpfs, unless the
    /// worktree, a writable folder, the home or the working directory lies under /tmp.
    #[arg(long)]
    pub host_tmp: bool,
    /// The command and its arguments, after `--` or after fence's own options.
    #[arg(trailing_var_arg = true, required = true, value_name = "COMMAND")]
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

/// The start's line naming what protected configs run (git's and the agents' settings):
/// read-only in the session, since it would run outside it later.
fn config_code_line(paths: &[PathBuf], worktree: &Path, home: Option<&Path>) -> Option<String> {
    const MOST_NAMED: usize = 6;
    let mut names: Vec<String> = Vec::new();
    for p in paths {
        let name = if let Ok(rel) = p.strip_prefix(worktree) {
            rel.display().to_string()
        } else if let Some(rel) = home.and_then(|h| p.strip_prefix(h).ok()) {
            format!("~/{}", rel.display())
        } else {
            p.display().to_string()
        };
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return None;
    }
    let more = names.len().saturating_sub(MOST_NAMED);
    names.truncate(MOST_NAMED);
    let mut line = format!(
        "read-only, as code git or an agent's settings run later: {}",
        names.join(", ")
    );
    if more > 0 {
        line.push_str(&format!(" and {more} more"));
    }
    Some(line)
}

fn run_session(mut args: RunArgs) -> Result<i32, String> {
    // First, while fence is still single-threaded: every thread started later (the gate's
    // writers included) inherits the mask.
    let forwarded = block_forwarded_signals();
    // The user's terminal as the session finds it, put back when it ends; and fence does
    // not stop when the sandbox takes the terminal's foreground (`terminal`).
    terminal::never_stop_for_the_terminal();
    // Calls the supervisor carries out on the sandbox's descriptors can raise signals
    // meant for the target: SIGIO when it sets O_ASYNC on a terminal without a process
    // group (the caller of F_SETFL becomes its owner), SIGXFSZ when a size change passes
    // fence's own file size limit (the call then fails with EFBIG). Either would end the
    // supervisor by default, and the session with it.
    for sig in [libc::SIGIO, libc::SIGXFSZ] {
        // SAFETY: signal() with SIG_IGN on a valid signal number.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
    let terminal = terminal::Terminals::capture(&args.pass_fd);
    // Whether fence holds the terminals, for the sandbox's calls that would take or change
    // them (`foreground`).
    let foreground_guard = Arc::new(foreground::Guard::new(terminal.fds()));
    let stream_flags = terminal::StreamFlags::capture(&args.pass_fd);
    // First, before fence opens descriptors of its own.
    preflight::check_pass_fds(&args.pass_fd)?;
    preflight::check_handed_in_sockets(&args.pass_fd)?;
    let kernel_abi = shim::landlock_abi();
    let abi_cap = preflight::landlock_abi_cap()?;
    let abi = shim::landlock_fence::effective_abi(kernel_abi, abi_cap);
    if let Some(cap) = abi_cap.filter(|_| abi < kernel_abi) {
        eprintln!(
            "fence: Landlock ABI capped at {cap} by {} (the kernel has ABI {kernel_abi}); what ABI {abi} lacks is compensated or refused",
            preflight::ABI_CAP_VAR
        );
    }
    // Before any thread exists: the probe forks.
    if preflight::seccomp_user_notification()
        && !args.allow_degraded
        && preflight::outer_seccomp_listener()
    {
        return Err(
            "fence cannot run inside another seccomp-notify sandbox (the kernel refuses a second listener: EBUSY)"
                .into(),
        );
    }
    let missing = preflight::missing_features(abi);
    if !missing.is_empty() {
        if !args.allow_degraded {
            return Err(format!(
                "refusing to run: this kernel lacks {} (use --allow-degraded to run with a weaker fence)",
                missing.join(" and ")
            ));
        }
        eprintln!(
            "fence: running degraded: missing {}; outside a read-only mount view the file fence is advisory (a userspace check can be raced)",
            missing.join(" and ")
        );
    }

    // The shim starts now, while fence is single-threaded: it is a copy of this process
    // (`spawn`), and prepares its namespaces while this thread prepares the session; it
    // waits for its spec. The descriptors passed with --pass-fd must be in place first:
    // the shim inherits them at clone.
    let pass_fds = prepare_pass_fds(&args.pass_fd)?;
    let inherited: Vec<i32> = pass_fds.iter().map(|(p, _)| p.inherited).collect();
    // `net`: the shim makes a network namespace (where it cannot, it says so, and the
    // session starts one without).
    // A new channel, and a shim started by `start` with the other end of it.
    fn on_new_channel<T>(
        start: impl FnOnce(&Channel) -> std::io::Result<T>,
    ) -> Result<(T, Channel), String> {
        let (ours, theirs) =
            Channel::pair().map_err(|e| format!("creating the shim channel: {e}"))?;
        let started = start(&theirs).map_err(|e| format!("starting the sandbox: {e}"))?;
        Ok((started, ours))
    }
    let spawn_shim = |net: bool| -> Result<(spawn::ShimProcess, Channel), String> {
        on_new_channel(|theirs| {
            if net {
                spawn::start_shim_now(theirs, &inherited)
            } else {
                spawn::start_shim_without_net(theirs, &inherited)
            }
        })
    };
    // This thread is the shim's parent: its parent-death signal comes when the thread that
    // cloned it exits, and this one lasts as long as fence. Its report that it started is
    // read below, once this thread has done some of the session's preparation.
    let ((first_shim, start_report), ours) =
        on_new_channel(|theirs| spawn::start_shim(theirs, &inherited))?;
    let mut early_shim = WaitingShim(Some((first_shim, ours)));
    let no_network = std::cell::Cell::new(false);
    // A root session's owner-shift namespace (`owner_shift`: a clone into a new user
    // namespace, two map writes, a kill and a reap), made meanwhile on a thread of its own
    // too: it is needed only when the spec is sent. Dropped unused where the shim has a
    // user namespace or no mount namespace.
    // SAFETY: geteuid has no preconditions.
    let owner_shift_made = (unsafe { libc::geteuid() } == 0)
        .then(|| {
            std::thread::Builder::new()
                .name("fence-idmap".into())
                .spawn(owner_shift::namespace)
                .ok()
        })
        .flatten();
    let owner_shift_made = std::cell::RefCell::new(owner_shift_made);
    let owner_shift_fd: std::cell::OnceCell<Option<OwnedFd>> = std::cell::OnceCell::new();

    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let worktree = crate::session::find_worktree(
        args.worktree.as_deref(),
        &cwd,
        home.as_deref(),
        args.force_worktree,
    )
    .map_err(|e| format!("{e:#}"))?;
    let secret_homes = prepare::home_dirs(home.as_deref());
    // The config first: its `deny_read` joins the unreadable paths planned below.
    let SessionPolicy {
        settings: mut policy_settings,
        mode,
        network,
        profile: config_profile,
    } = exec_policy(&worktree, args.mode, args.config.as_deref())?;
    let mut deny_extra = canonical_all(&args.deny_read, "--deny-read")?;
    let config_denied = config_deny_read(&policy_settings.deny_read, &secret_homes, &worktree)?;
    deny_extra.extend(config_denied.iter().cloned());
    // A linked worktree: the repository's other checkouts are unreadable (SPEC §2), and
    // their folders in the git directory read-only.
    let (other_checkouts, other_checkouts_admin) =
        crate::session::other_checkouts(&worktree, home.as_deref());
    deny_extra.extend(other_checkouts.iter().cloned());
    // Its shared git directory stays writable (SPEC §2), so that `git commit` works: as an
    // `--allow-write` folder, with the worktree's protections there.
    if !args.read_only_worktree
        && let Some(shared) = crate::session::shared_git_dir(&worktree)
        && !args.allow_write.contains(&shared)
    {
        args.allow_write.push(shared);
    }
    let (mut deny_read, mut deny_read_missing, mut deny_read_via) =
        prepare::denied_reads(&secret_homes, &deny_extra);
    // The secrets' other names, through other mounts of their file systems (a bind of `/`
    // elsewhere), are hidden as the secrets are; and, in a root session, whole other names
    // of `/etc`, which its idmapped view does not reach (`shim::mount_aliases`). The shim
    // looks again in the sandbox's own mount namespace.
    {
        let mounts = shim::mount_aliases::table()
            .map_err(|e| format!("reading the mount table (/proc/self/mountinfo): {e}"))?;
        let (mut existing, missing) =
            shim::mount_aliases::other_names(&mounts, &deny_read, &deny_read_missing);
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let etc = Path::new(shim::mount_view::SYSTEM_CONFIG);
            existing.extend(shim::mount_aliases::other_names_of(&mounts, etc));
        }
        if !existing.is_empty() || !missing.is_empty() {
            deny_read = prepare::outermost(deny_read.into_iter().chain(existing));
            deny_read_missing.extend(missing);
            deny_read_missing.sort();
            deny_read_missing.dedup();
        }
    }
    // The links on the way to a --deny-read path as given (its canonical form has none).
    let given: Vec<PathBuf> = args
        .deny_read
        .iter()
        .map(|p| cwd.join(p))
        .chain(config_denied)
        .collect();
    deny_read_via.extend(prepare::link_folders(&given));
    deny_read_via.sort();
    deny_read_via.dedup();
    // The first shim's word that it started, or why not (it is then killed and reaped). One
    // started in namespaces that could not go on (its user namespace's ids could not be
    // mapped) is started again as where none can be made, as `spawn` does when the clone
    // itself fails.
    if let Some(report) = start_report
        && let Err(failed) = report.read()
    {
        early_shim.0 = None;
        if !failed.try_plain {
            return Err(format!("starting the sandbox: {}", failed.error));
        }
        early_shim.0 = Some(on_new_channel(|theirs| {
            spawn::start_shim_plain(theirs, &inherited)
        })?);
    }
    let session_tty = prepare::session_tty();
    let mount_namespace = early_shim
        .0
        .as_ref()
        .is_some_and(|(shim, _)| shim.namespaces.mount);
    let bases = prepare::session_bases(mount_namespace);
    // Spare folders for the new folders of the worktree's root (`spare_folders`): they
    // need the mount view (which hides them) and a ruleset that bounds writes.
    let spare_pool =
        (mount_namespace && abi > 0 && !args.read_only_worktree && !args.no_write_watch)
            .then(|| spare_folders::SparePoolOnHost::make(&worktree))
            .flatten();
    let tmp =
        SessionTmp::create_in(&bases).map_err(|e| format!("creating the session TMPDIR: {e}"))?;
    // A TMPDIR made in /dev/shm is only a mount point: it needs the mount namespace it was
    // placed for. Without one it would be the TMPDIR itself, unlimited, in a directory the
    // sandbox may write (its parent, /dev/shm), so a restarted shim (below) must have one.
    let tmp_needs_mount_namespace =
        bases.len() > 1 && tmp.path.parent() == Some(Path::new("/dev/shm"));
    policy_settings.session_tmp = Some(tmp.path.clone());
    add_network_config(&mut args, &network);
    let profile = match args.profile.or(config_profile) {
        Some(p) => {
            let grants = profile_grants::ProfileGrants::resolve(p, home.as_deref())?;
            grants.apply_to(&mut args)?;
            eprintln!("{}", grants.banner());
            Some(grants)
        }
        None => None,
    };
    let (profile_writable, profile_protected) = profile
        .as_ref()
        .map(|g| (g.writable.clone(), g.protected.clone()))
        .unwrap_or_default();
    if let Some(log) = &args.log {
        let roots = [
            worktree.as_path(),
            tmp.path.as_path(),
            Path::new("/dev/shm"),
        ]
        .into_iter()
        .filter(|r| !(args.read_only_worktree && *r == worktree.as_path()))
        .map(Path::to_path_buf)
        .chain(args.allow_write.iter().cloned())
        .chain(profile_writable.iter().cloned());
        log_out_of_reach(log, roots)?;
    }
    let gate = approval::start_gate(&approval::GateSettings {
        approver: args.approver.as_ref(),
        mode,
        ask_timeout: args.ask_timeout,
        log: args.log.as_deref(),
        worktree: &worktree,
        command: &args.command,
    })?;
    let gate_guard = GateGuard(gate.clone());
    gate.log_session_start(
        abi,
        &missing,
        profile.as_ref().map(|g| g.profile.name),
        &prepare::removed_credentials(std::env::vars_os(), &args.env),
    );
    let mut allow_write = canonical_all(&args.allow_write, "--allow-write")?;
    // The `--allow-write` folders outside the worktree keep its protections: a repository
    // there, or one assembled there and reached through a symlink left in the worktree,
    // would run code in the user's git later as one in the worktree would. A profile's
    // folders are the agent's own (Claude Code clones plugin marketplaces there): they
    // keep their protected settings, and a symlink leading into them is asked.
    let rule_bases = prepare::rule_bases(&worktree, &allow_write);
    // Without watched writes, a protected path is held by the mount view, which binds only
    // what exists, and the watch that moves protected names made in the session aside
    // covers the worktree: a profile's protected path missing at start could be made in
    // its writable folder and stay. Refused rather than left open.
    if args.no_write_watch {
        let missing: Vec<String> = profile_protected
            .iter()
            .filter(|p| p.symlink_metadata().is_err())
            .map(|p| p.display().to_string())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "--no-write-watch with a profile needs its protected paths to exist (the read-only mount view covers only those), and these do not: {}; make them (an empty folder, or the file the agent would write), or run without --no-write-watch",
                missing.join(", ")
            ));
        }
    }
    let mut protected = profile_protected;
    let bases: Vec<&Path> = std::iter::once(worktree.as_path())
        .chain(rule_bases.iter().map(PathBuf::as_path))
        .collect();
    protected.extend(prepare::git_dirs_by_other_names(&bases, &allow_write));
    allow_write.extend(profile_writable);
    // fence's own config decides later sessions' mode, profile, network and rules: where a
    // writable root holds it (`--allow-write ~/.config`, a worktree at the home), it is
    // protected, made or not.
    let xdg_config = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    protected.extend(
        prepare::fence_config_paths(&secret_homes, xdg_config.as_deref(), args.config.as_deref())
            .into_iter()
            .filter(|p| {
                (!args.read_only_worktree && p.starts_with(&worktree))
                    || allow_write.iter().any(|w| p.starts_with(w))
            }),
    );
    // A writable folder inside a secret path could not be both: refused before any mount
    // is tried, with the two paths named.
    let writable_roots = (!args.read_only_worktree)
        .then_some(&worktree)
        .into_iter()
        .chain(&allow_write);
    for root in writable_roots {
        if let Some(secret) = deny_read
            .iter()
            .chain(&deny_read_missing)
            .find(|d| root.starts_with(d))
        {
            let which = if *root == worktree {
                "the worktree"
            } else {
                "--allow-write"
            };
            return Err(format!(
                "{which} {} lies inside the unreadable path {} (a secret): it cannot be writable and unreadable at once",
                root.display(),
                secret.display()
            ));
        }
    }
    // The tools' caches (tool_caches.rs): a folder of the worktree's own, writable as the
    // worktree is, or the session TMPDIR's.
    let tool_caches = (!args.no_tool_caches).then(|| {
        let xdg = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from);
        tool_caches::place(
            home.as_deref(),
            xdg.as_deref(),
            &worktree,
            &tmp.path,
            args.read_only_worktree,
        )
    });
    if let Some(root) = tool_caches.as_ref().and_then(|c| c.writable_root()) {
        allow_write.push(root.to_path_buf());
    }
    // Where the user's git takes code from besides `.git/hooks` and `.git/config`: the
    // folder `core.hooksPath` names and included config files, when they lie in a
    // writable root (git_code.rs).
    let git_roots: Vec<PathBuf> = (!args.read_only_worktree)
        .then(|| worktree.clone())
        .into_iter()
        .chain(allow_write.iter().cloned())
        .collect();
    let git_code = git_code::find(
        &worktree,
        &git_code::GitEnvironment::from_process(home.as_deref()),
        &git_roots,
    );
    for w in &git_code.warnings {
        eprintln!("fence: warning: {}", crate::escape::for_terminal(w));
    }
    // A secret file with other names (a hard link made before the session, `ln ~/.ssh/id_rsa
    // W/k`): the fence hides the secret's paths, not its inode, so another name of it in
    // the worktree or elsewhere reads it (SPEC §2: the banner warns).
    let secrets: Vec<PathBuf> = deny_read
        .iter()
        .filter(|p| !other_checkouts.iter().any(|o| p.starts_with(o)))
        .cloned()
        .collect();
    for w in prepare::secrets_with_other_names(&secrets) {
        eprintln!("fence: warning: {}", crate::escape::for_terminal(&w));
    }
    let mut config_code = git_code.protected.clone();
    protected.extend(git_code.protected);
    // What the links among the protected paths lead to (a hook linked to a tracked script).
    let (link_targets, link_warnings) = prepare::protected_link_targets(&worktree, &git_roots);
    for w in &link_warnings {
        eprintln!("fence: warning: {}", crate::escape::for_terminal(w));
    }
    config_code.extend(link_targets.iter().cloned());
    protected.extend(link_targets);
    // The scripts and servers an agent's protected settings run (agent_code.rs), where a
    // writable root holds them.
    let settings_files: Vec<PathBuf> = bases
        .iter()
        .flat_map(|b| agent_code::project_settings(b))
        .chain(
            home.iter()
                .flat_map(|h| agent_code::HOME_SETTINGS.iter().map(move |rel| h.join(rel))),
        )
        .chain(
            protected
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "toml"))
                .cloned(),
        )
        .collect();
    let code_roots: Vec<PathBuf> = (!args.read_only_worktree)
        .then(|| worktree.clone())
        .into_iter()
        .chain(allow_write.iter().cloned())
        .collect();
    let (agent_code, code_warnings) = agent_code::find(
        &settings_files,
        &worktree,
        &cwd,
        home.as_deref(),
        &code_roots,
    );
    for w in &code_warnings {
        eprintln!("fence: warning: {}", crate::escape::for_terminal(w));
    }
    config_code.extend(agent_code.iter().cloned());
    // Said once at start: a refused write to one of them then makes sense (a build that
    // rewrites the MCP server a settings file runs, `dist/index.js`).
    if let Some(line) = config_code_line(&config_code, &worktree, home.as_deref()) {
        eprintln!("fence: {}", crate::escape::for_terminal(&line));
    }
    protected.extend(agent_code);
    if args.no_write_watch {
        let (links, more) = prepare::links_to_protected(&worktree, &protected, &code_roots);
        if more {
            return Err(
                "--no-write-watch cannot tell that no protected path is a symbolic link: the protected folders hold more entries than fence looks through; run without --no-write-watch"
                    .into(),
            );
        }
        if !links.is_empty() {
            let named: Vec<String> = links.iter().map(|l| l.display().to_string()).collect();
            return Err(format!(
                "--no-write-watch cannot hold a protected path that is, or is reached through, a symbolic link (a read-only mount holds no link, and the sandbox could replace it): {}; run without --no-write-watch",
                crate::escape::for_terminal(&named.join(", "))
            ));
        }
    }
    protected.extend(other_checkouts_admin);
    // The folders of the approval sockets, when a writable folder holds one (`--allow-write
    // /tmp`): moved away, or made by the sandbox before fence makes it, `fence approvals`
    // and later sessions would meet the sandbox's sockets there instead of fence's. Every
    // folder a client of this user may read (one started without this session's
    // `XDG_RUNTIME_DIR` reads `/tmp/fence-UID`): a socket the sandbox listens on has the
    // supervisor's credentials, since fence makes the `listen` call for it.
    let socket_dirs: Vec<PathBuf> = crate::gate::socket::socket_dirs()
        .into_iter()
        .map(|d| d.canonicalize().unwrap_or(d))
        .collect();
    for sockets in &socket_dirs {
        if allow_write.iter().any(|w| sockets.starts_with(w)) {
            protected.push(sockets.clone());
        }
    }
    // The protected paths by name (hooks, configs, settings) with other names in the
    // worktree or an `--allow-write` folder (a hard link made before the session): those
    // names are protected as the files are. (The files protected configs run, which
    // package managers link into their stores, keep the private copy of a shared file.)
    let rule_roots: Vec<PathBuf> = bases
        .iter()
        .filter(|b| !(args.read_only_worktree && **b == worktree.as_path()))
        .map(|b| b.to_path_buf())
        .collect();
    let protected_now: Vec<PathBuf> = bases
        .iter()
        .flat_map(|b| shim::protected_paths::existing(b))
        .collect();
    for name in prepare::other_names_of_protected(&protected_now, &rule_roots)? {
        eprintln!(
            "fence: {} is another name (a hard link) of a protected file: protected as it is",
            crate::escape::for_terminal(&name.display().to_string())
        );
        protected.push(name);
    }
    let allow_unix = canonical_all(&args.allow_unix, "--allow-unix")?;
    // A connect fence makes for the sandbox carries fence's own credentials: to an approval
    // socket, the peer check would take the sandbox for a person answering.
    if let Some(p) = allow_unix
        .iter()
        .find(|p| socket_dirs.iter().any(|s| p.starts_with(s)))
    {
        return Err(format!(
            "--allow-unix {}: fence's approval sockets cannot be opened to the sandbox",
            p.display()
        ));
    }
    let (mut allowed_net, net_warnings) = crate::net::allow::AllowedDestinations::build(
        &args.allow_net,
        &args.resolve,
        &crate::net::allow::system_resolve,
    );
    for w in &net_warnings {
        eprintln!("fence: {}", crate::escape::for_terminal(w));
    }
    let dns = if args.allow_dns {
        let relay = dns_relay()?;
        for &resolver in relay.resolvers() {
            allowed_net.add(resolver, "fence.allow-dns");
        }
        Some(Arc::new(relay))
    } else {
        None
    };
    let proxy_clients = std::sync::Arc::new(crate::net::peer_process::ProxyClients::default());
    let proxy = if args.allow_domain.is_empty() {
        None
    } else {
        let proxy = start_proxy(&args, gate.clone(), proxy_clients.clone())
            .map_err(|e| format!("starting the domain proxy: {e}"))?;
        allowed_net.add(proxy.addr, "fence.proxy");
        Some(proxy)
    };

    // A private /tmp (SPEC §2), where nothing the session names lies under the host's:
    // a worktree, writable folder, home, working directory or program there would be
    // hidden by it. A secret there is hidden by it too: with a private /tmp the host's
    // /tmp is out of reach (its names are not the sandbox's, and another process's
    // /proc/<pid>/root is closed to the sandbox by Landlock's ptrace rule), so the
    // unreadable paths under it are left out of the view's plan (one would freeze all
    // of /tmp, and its cover could not be made on the private one).
    let path_entries: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|e| cwd.join(e)).collect())
        .unwrap_or_default();
    let program = args
        .command
        .first()
        .map(Path::new)
        .filter(|p| p.components().count() > 1)
        .map(|p| cwd.join(p));
    let private_tmp = !args.host_tmp
        && prepare::private_tmp_fits(
            [&worktree, &cwd, &tmp.path]
                .into_iter()
                .chain(&allow_write)
                .chain(&allow_unix)
                .chain(&secret_homes)
                .chain(home.as_ref())
                .chain(&path_entries)
                .chain(program.as_ref()),
        );
    let mut writable = vec![tmp.path.clone()];
    if !args.read_only_worktree {
        writable.insert(0, worktree.clone());
    }
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

    // The process-count limit (run/limits.rs): the pid namespace's own pid_max where the
    // kernel keeps one per namespace, else a session cgroup where one can be made, else
    // RLIMIT_NPROC in the target. A cgroup is dropped (killed, removed) after the shim was
    // reaped.
    let nproc_note = |why: &str| {
        eprintln!(
            "fence: {why}; using RLIMIT_NPROC={}, which counts all of this user's processes and does not bind uid 0",
            args.max_procs
        );
    };
    let pid_namespace_max = limits::pid_namespace_max(args.max_procs, limits::kernel_version());
    // Hands a started shim its spec, after choosing the process limit (a cgroup only when
    // `cgroup_allowed`).
    let start = |cgroup_allowed: bool,
                 pid_max_allowed: bool,
                 started: (spawn::ShimProcess, Channel)|
     -> Result<(spawn::ShimProcess, Channel, limits::ProcessLimit), String> {
        let (mut shim, mut ours) = started;
        loop {
            if tmp_needs_mount_namespace && !shim.namespaces.mount {
                kill_and_reap(shim.pid);
                return Err(format!(
                    "the sandbox was restarted without a mount namespace, which its TMPDIR {} needs",
                    tmp.path.display()
                ));
            }
            let limit = match pid_namespace_max.filter(|_| shim.namespaces.pid && pid_max_allowed) {
                Some(pid_max) => limits::ProcessLimit::PidNamespace(pid_max),
                None if cgroup_allowed => match limits::SessionCgroup::create(args.max_procs) {
                    Ok(cg) => limits::ProcessLimit::Cgroup(cg),
                    Err(e) => {
                        nproc_note(&format!("no cgroup for the process limit ({e})"));
                        limits::ProcessLimit::Rlimit
                    }
                },
                None => limits::ProcessLimit::Rlimit,
            };
            let cgroup_kill = limit
                .cgroup()
                .map(|cg| cg.dir.join("cgroup.kill"))
                .filter(|k| k.exists());
            let private_tmp = private_tmp && shim.namespaces.mount;
            let beyond_private_tmp = |paths: &[PathBuf]| -> Vec<std::ffi::OsString> {
                paths
                    .iter()
                    .filter(|p| !(private_tmp && p.starts_with(shim::landlock_fence::PRIVATE_TMP)))
                    .map(|p| p.clone().into_os_string())
                    .collect()
            };
            let spec = SandboxSpec {
                argv: args.command.clone(),
                env: with_root_tar_options(
                    with_tool_caches(
                        with_proxy_variables(
                            prepare::sandbox_environment(std::env::vars_os(), &args.env, &tmp.path),
                            proxy.as_ref(),
                        ),
                        tool_caches.as_ref(),
                    ),
                    nix::unistd::geteuid().is_root(),
                ),
                cwd: cwd.clone().into_os_string(),
                worktree: worktree.clone().into_os_string(),
                tmpdir: tmp.path.clone().into_os_string(),
                allow_write: allow_write
                    .iter()
                    .map(|p| p.clone().into_os_string())
                    .collect(),
                deny_read: beyond_private_tmp(&deny_read),
                deny_read_missing: beyond_private_tmp(&deny_read_missing),
                deny_read_via: beyond_private_tmp(&deny_read_via),
                homes: secret_homes
                    .iter()
                    .map(|p| p.clone().into_os_string())
                    .collect(),
                session_tty: session_tty.clone().map(PathBuf::into_os_string),
                namespaces: shim.namespaces,
                // SAFETY: getuid/getgid have no preconditions.
                uid: unsafe { libc::getuid() },
                gid: unsafe { libc::getgid() },
                allow_degraded: args.allow_degraded,
                nproc_limit: matches!(limit, limits::ProcessLimit::Rlimit)
                    .then_some(args.max_procs),
                pid_max: match limit {
                    limits::ProcessLimit::PidNamespace(pid_max) => Some(pid_max),
                    _ => None,
                },
                tmp_size: shim.namespaces.mount.then_some(args.tmp_size),
                landlock_abi_max: abi_cap,
                read_only_worktree: args.read_only_worktree,
                no_write_watch: args.no_write_watch,
                batch_scheduling: !args.normal_scheduling,
                pass_fds: pass_fds.iter().map(|(pass, _)| *pass).collect(),
                cgroup_kill: cgroup_kill.map(PathBuf::into_os_string),
                allow_dns: args.allow_dns,
                protected: protected
                    .iter()
                    .map(|p| p.clone().into_os_string())
                    .collect(),
                rule_bases: prepare::with_shared_memory(&rule_bases, shim.namespaces.mount)
                    .into_iter()
                    .map(PathBuf::into_os_string)
                    .collect(),
                spare_pool: spare_pool.as_ref().map(|p| p.spec()),
                private_tmp,
                // Decided by the shim's init from the mounts it made.
                reads_by_mounts: false,
                private_pts: false,
            };
            // A shim that could not make its network namespace has said so and ended: the
            // spec may not reach it, and its word says why.
            // A root session in the host's user namespace sees /etc with root's files as
            // nobody's (`owner_shift`); without the namespace the shim freezes it instead.
            // SAFETY: geteuid has no preconditions.
            let owner_shift =
                (shim.namespaces.mount && !shim.namespaces.user && unsafe { libc::geteuid() } == 0)
                    .then(|| {
                        owner_shift_fd.get_or_init(|| {
                            let made = owner_shift_made.borrow_mut().take();
                            made.and_then(|t| t.join().ok())
                                .unwrap_or_else(owner_shift::namespace)
                                .ok()
                        })
                    })
                    .and_then(Option::as_ref);
            let sent = ours.send(
                &ToShim::Start(Box::new(spec)),
                owner_shift.map(|fd| fd.as_fd()),
            );
            // The shim's first word, read after the spec is sent: it makes the network
            // namespace while this thread builds the spec.
            match await_ready(&shim, &ours) {
                Ok(()) => {
                    if let Err(e) = sent {
                        kill_and_reap(shim.pid);
                        return Err(format!("sending the sandbox spec: {e}"));
                    }
                    return Ok((shim, ours, limit));
                }
                Err(Unready::NoNetwork(message)) => {
                    kill_and_reap(shim.pid);
                    eprintln!(
                        "fence: no network namespace could be made ({message}): the sandbox shares the host's network stack, and its connections go through fence's checks"
                    );
                    no_network.set(true);
                    drop(limit);
                    (shim, ours) = spawn_shim(false)?;
                }
                Err(Unready::Failed(why)) => {
                    kill_and_reap(shim.pid);
                    return Err(format!("starting the sandbox: {why}"));
                }
            }
        }
    };
    // A shim started again (below) where the first could make no network namespace is
    // started without one.
    let respawn = || spawn_shim(!no_network.get());
    let first = early_shim.0.take().ok_or("the shim was not started")?;
    let (mut shim_process, mut ours, mut limit) = start(true, true, first)?;
    // The shim says whether it could set pid_max before it forks anything; where it could
    // not (a read-only /proc/sys, a security module), it is killed and the session starts
    // again with a cgroup or RLIMIT_NPROC. Any other first message is handled below.
    let mut first_message = None;
    if matches!(limit, limits::ProcessLimit::PidNamespace(_)) {
        match ours.recv::<FromShim>() {
            Ok(Some((FromShim::PidMaxSet, _))) => {}
            Ok(Some((FromShim::SetupFailed { stage, message, .. }, _)))
                if stage == shim::PID_MAX_STAGE =>
            {
                kill_and_reap(shim_process.pid);
                eprintln!(
                    "fence: the sandbox's own pid_max could not be set ({message}); the process limit falls back to a cgroup or RLIMIT_NPROC"
                );
                (shim_process, ours, limit) = start(true, false, respawn()?)?;
            }
            other => first_message = Some(other),
        }
    }
    // The shim is moved into the session cgroup while it prepares its namespaces (the move
    // can take milliseconds: it waits for an RCU grace period); it forks nothing before
    // `Proceed`, so every process of the sandbox is counted from the first. A cgroup we
    // could make but not join (no write access to the common ancestor): the shim is killed
    // before it forked anything, and the session starts again under RLIMIT_NPROC.
    if let Some(Err(e)) = limit.cgroup().map(|cg| {
        cg.add(shim_process.pid)
            .map_err(|e| format!("joining {}: {e}", cg.dir.display()))
    }) {
        kill_and_reap(shim_process.pid);
        nproc_note(&format!("cannot use the session cgroup ({e})"));
        (shim_process, ours, limit) = start(false, false, respawn()?)?;
    }
    // The shim has started: the duplicates kept for it can go.
    drop(pass_fds);
    if let Some(cg) = limit.cgroup() {
        eprintln!(
            "fence: at most {} processes (cgroup pids.max, {})",
            args.max_procs,
            cg.dir.display()
        );
    }
    if !shim_process.namespaces.mount {
        if args.no_write_watch {
            kill_and_reap(shim_process.pid);
            return Err(
                "--no-write-watch needs a mount namespace (its read-only view bounds metadata changes and keeps protected paths read-only), and none could be made here"
                    .into(),
            );
        }
        eprintln!("fence: no mount namespace: the session TMPDIR's size is not limited");
    }
    // The steps a stopped rebase has queued now, so that those the session queues are told
    // at its end.
    let rebase_steps = rebase_todo::at_start(crate::session::git_dir(&worktree).as_deref());
    // Without watched writes, a protected path missing at start has no mount to hold it:
    // one the sandbox makes is moved aside as it appears (made_protected.rs). Started
    // before the sandbox runs anything, so that what is there now was there at start.
    let made_protected = if args.no_write_watch && !args.read_only_worktree {
        match made_protected::start(&worktree, &protected) {
            Ok(guard) => Some(guard),
            Err(e) => {
                kill_and_reap(shim_process.pid);
                return Err(format!(
                    "--no-write-watch: cannot watch the worktree for protected paths made in the session: {e}"
                ));
            }
        }
    } else {
        None
    };
    // A failed send means the shim is gone: its report, or the end of the channel, comes
    // through the loop below.
    let _ = ours.send(&ToShim::Proceed, None);
    let cgroup_kill = limit
        .cgroup()
        .map(|cg| cg.dir.join("cgroup.kill"))
        .filter(|k| k.exists());
    let death = if shim_process.namespaces.pid {
        preflight::DeathMechanism::PidNamespace
    } else if cgroup_kill.is_some() {
        preflight::DeathMechanism::CgroupKill
    } else {
        preflight::DeathMechanism::ParentDeathSignal
    };
    // The strongest mechanism goes without saying; a weaker one is named on start.
    if let Some(line) = death.banner() {
        eprintln!("fence: {line}");
    }
    if args.no_write_watch {
        eprintln!(
            "fence: --no-write-watch: writes are left to Landlock and the read-only mount view; blocked writes get no reason, a protected path that does not exist yet (such as .envrc or .git/commondir) is moved aside as soon as it is made, and a nested or bare repository's config and hooks can be written"
        );
    }
    foreground_guard.set_init(shim_process.pid);
    spawn_signal_forwarder(
        forwarded,
        shim_process.pid,
        gate.clone(),
        foreground_guard.clone(),
    );

    if private_tmp && shim_process.namespaces.mount {
        writable.push(PathBuf::from(shim::landlock_fence::PRIVATE_TMP));
    }
    path_resolve::settle_roots(&writable);
    view::pin_writable_roots(&writable);
    // The exec check judges a delete or write in the sandbox's own temporary folders as it
    // judges one in the session TMPDIR: the private /tmp, and /dev/shm (the session's own
    // with a mount namespace; without one the host's, which Landlock lets it write all the
    // same). `rm -f /tmp/x` of a file the sandbox made there is no delete outside. Policy,
    // as every exec rule: the kernel decides what these folders hold.
    policy_settings.exceptions.extend(
        writable
            .iter()
            .filter(|w| {
                w.as_path() == Path::new("/dev/shm")
                    || w.as_path() == Path::new(shim::landlock_fence::PRIVATE_TMP)
            })
            .cloned(),
    );
    let policy: Arc<dyn exec_check::ExecPolicy> = match policy::Classifier::new(policy_settings) {
        Ok(classifier) => {
            // One judgement now, while the shim builds the view, pages the classifier's
            // code in: the session's first exec (the command itself) waits for its answer,
            // and a first judgement took ~0.07 ms more than the next ones. Its verdict is
            // not used.
            let _ = classifier.classify_exec(&policy::ExecEvent {
                argv: &[String::from("true")],
                program: Path::new("/usr/bin/true"),
                cwd: policy::ExecCwd::Known(&worktree),
                current_branch: None,
                env: &[],
            });
            Arc::new(classifier)
        }
        Err(e) => {
            kill_and_reap(shim_process.pid);
            return Err(format!("the session's policy: {e}"));
        }
    };
    // Without a mount view the sandbox's /dev/ptmx is the host's, which would hand out the
    // machine's pseudo-terminals (Landlock does not grant it there either: the shim's plan).
    if !shim_process.namespaces.mount {
        devices.retain(|d| d != Path::new("/dev/ptmx"));
    }
    // The home as the kernel names it: the paths checked are resolved.
    let real = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    let state_files = home.clone().map_or_else(Vec::new, |h| {
        let cargo_home = std::env::var_os("CARGO_HOME").map(|c| real(PathBuf::from(c)));
        fence::state_files(&real(h), cargo_home.as_deref(), go_mod_cache().as_deref())
    });
    let new_git_configs = std::iter::once(&worktree)
        .chain(&rule_bases)
        .map(|base| base.join(".git/config"))
        .filter(|c| std::fs::symlink_metadata(c).is_err())
        .collect();
    let fence = Arc::new(Fence {
        new_git_configs,
        worktree,
        writable,
        state_files,
        devices,
        protected: protected.clone(),
        rule_bases: prepare::with_shared_memory(&rule_bases, shim_process.namespaces.mount),
        unreadable: deny_read
            .iter()
            .chain(&deny_read_missing)
            .cloned()
            .collect(),
        unreadable_near_roots: Default::default(),
        read_only_view: shim_process.namespaces.mount,
        quiet_blocks: args.quiet_blocks,
        read_only_worktree: args.read_only_worktree,
        // Set from the ABI the shim reports; until then the safe side.
        landlock_truncate: false,
        landlock_refer: false,
        bounded: Default::default(),
        spares: None,
    });
    let counters = Arc::new(Counters::default());

    let mut failure: Option<i32> = None;
    let mut spares = None;
    let mut exited: Option<i32> = None;
    loop {
        let message = match first_message.take() {
            Some(m) => m,
            None => ours.recv::<FromShim>(),
        };
        match message {
            Ok(Some((
                FromShim::Confined {
                    landlock_abi,
                    compensations,
                    degraded,
                    listener,
                    loopback_table,
                    bounded,
                    truncate_by_landlock,
                },
                fd,
            ))) => {
                for d in &degraded {
                    eprintln!("fence: running degraded: {d}");
                }
                if !compensations.is_empty() {
                    eprintln!(
                        "fence: Landlock ABI {landlock_abi} (Linux {}), compensated: {}",
                        shim::landlock_fence::kernel_for_abi(landlock_abi),
                        compensations.join("; ")
                    );
                }
                let fence = Arc::new(Fence {
                    landlock_truncate: landlock_abi >= 3 && truncate_by_landlock,
                    landlock_refer: landlock_abi >= 2,
                    // What the sandbox's own ruleset bounds (nothing without one).
                    bounded: Arc::new(std::sync::RwLock::new(if landlock_abi > 0 {
                        bounded
                            .into_iter()
                            .map(|b| (PathBuf::from(b.path), Granted::new((b.dev, b.ino))))
                            .collect()
                    } else {
                        Default::default()
                    })),
                    spares: spares.take().filter(|_| landlock_abi > 0),
                    ..(*fence).clone()
                });
                // The sandbox's mounts are made before it reports itself confined: its
                // root is where the supervisor looks names up and carries calls out from
                // now on (`view`; security boundary, so a failure ends the session).
                if shim_process.namespaces.mount
                    && let Err(e) = view::set_sandbox_root(shim_process.pid)
                {
                    kill_and_reap(shim_process.pid);
                    return Err(format!("opening the sandbox's root directory: {e}"));
                }
                match (listener, fd) {
                    (true, Some(fd)) => {
                        let listener = Listener::new(fd);
                        listener.enable_sync_wake_up();
                        let net = net_check::NetFence {
                            own_netns: shim_process.namespaces.net,
                            loopback: loopback_table.then(Default::default),
                            allow_unix: allow_unix.clone(),
                            allowed: allowed_net.clone(),
                            dns: dns.clone(),
                            names: args.resolve.clone(),
                            proxy_clients: proxy_clients.clone(),
                            host_sockets: if shim_process.namespaces.net {
                                net_check::HostSockets::probe()
                            } else {
                                Default::default()
                            },
                        };
                        let supervision = Supervision {
                            foreground: foreground_guard.clone(),
                            own_pid_namespace: shim_process.namespaces.pid,
                            listener: Arc::new(listener),
                            fence: fence.clone(),
                            net: Arc::new(net),
                            policy: policy.clone(),
                            gate: gate.clone(),
                            counters: counters.clone(),
                            // Without watched writes no chdir, rename or folder removal
                            // is notified: nothing could tell a kept cwd is stale.
                            keep_cwds: !args.no_write_watch,
                            hidden_settings: home
                                .as_deref()
                                .map(|h| notify_loop::hidden_settings(h, &fence.unreadable))
                                .unwrap_or_default(),
                        };
                        limits::raise_open_files();
                        if let Err(e) = notify_loop::spawn(supervision) {
                            kill_and_reap(shim_process.pid);
                            return Err(format!("starting the notification loop: {e}"));
                        }
                    }
                    // Without the listener, --allow-dns would leave real inet datagram
                    // sockets in the sandbox: refused (security boundary).
                    (false, _) if args.allow_degraded && !args.allow_dns => {}
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
                // What the kernel lacks can be run without on purpose; say how.
                let hint = if stage == "landlock" && !args.allow_degraded {
                    " (--allow-degraded runs with what this kernel has, and says so)"
                } else {
                    ""
                };
                eprintln!("fence: cannot start the sandbox ({stage}): {message}{hint}");
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
            // The spare folders the ruleset grants, just before `Confined`.
            Ok(Some((FromShim::SpareFolders { spares: granted }, fd))) => {
                spares = fd.zip(spare_pool.as_ref()).map(|(pool, made)| {
                    Arc::new(spare_folders::Spares::new(pool, made.granted(granted)))
                });
            }
            // Only ever the first message, read by `await_ready`: a protocol error.
            Ok(Some((FromShim::Ready, _))) => {
                kill_and_reap(shim_process.pid);
                return Err("shim channel: an unexpected readiness report".into());
            }
            // Only ever the first message, and only when asked for: a protocol error.
            Ok(Some((FromShim::PidMaxSet, _))) => {
                kill_and_reap(shim_process.pid);
                return Err("shim channel: an unexpected pid_max report".into());
            }
            // The init stopped the whole sandbox as fence asked on its SIGTSTP: fence stops
            // too (the
            // shell's `fg` continues fence, whose SIGCONT the init passes to the sandbox).
            Ok(Some((FromShim::Stopped, _))) => {
                // The user's shell takes the terminal now; whether fence holds it again is
                // seen once it is continued (`fg` gives it back first, `bg` does not).
                foreground_guard.let_go();
                // SAFETY: stopping this process; SIGSTOP cannot be caught or ignored.
                unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
                foreground_guard.look_again();
            }
            // The target has exited and the init has killed and reaped everything else.
            Ok(Some((FromShim::Exited { status, left }, _))) => {
                if left > 0 {
                    // A server started with `nohup … &` or `setsid` ends with the session:
                    // said, so that a user who expected it to stay knows why it is gone.
                    eprintln!(
                        "fence: the command ended; {left} process{} it left running {} stopped with the session",
                        if left == 1 { "" } else { "es" },
                        if left == 1 { "was" } else { "were" },
                    );
                }
                exited = Some(status);
                break;
            }
            Ok(None) => break,
            // The shim said why it could not go on, and ended: a channel reset by its exit
            // (a message it had not read) adds nothing.
            Err(_) if failure.is_some() => break,
            Err(e) => {
                kill_and_reap(shim_process.pid);
                return Err(format!("shim channel: {e}"));
            }
        }
    }

    // With the init's word that nothing of the sandbox is left, the session ends while the
    // init exits (the kernel unmounts the view and drops the namespaces in its exit, most
    // of a millisecond), and it is reaped last. A session cgroup can only be removed once
    // the init has left it: then, and without that word (the init died, or the channel
    // broke), it is reaped first.
    let (status, reap_last) = match exited {
        Some(status) if limit.cgroup().is_none() => (status, true),
        _ => (wait_for(shim_process.pid), false),
    };
    let code = failure.unwrap_or(status);
    if let Some(guard) = made_protected {
        for line in guard.finish() {
            eprintln!("fence: blocked: {}", crate::escape::for_terminal(&line));
        }
    }
    for line in rebase_steps.notices() {
        eprintln!("fence: {}", crate::escape::for_terminal(&line));
    }
    // Nothing of the sandbox is left to change the terminal again.
    terminal.restore();
    stream_flags.restore();
    // The sandbox's proxied connections close with it; their last lines go to the log.
    if let Some(p) = &proxy {
        p.wait_idle(std::time::Duration::from_millis(500));
    }
    // Queries the sandbox sent just before it ended still go out (see `wait_idle`).
    if let Some(d) = &dns {
        d.wait_idle(std::time::Duration::from_millis(500));
    }
    gate.close(Some(code));
    drop(gate_guard);
    drop(limit);
    drop(tmp);
    drop(spare_pool);
    // Reaped, so that the sandbox's CPU time is counted in fence's own, as `time fence run`
    // or a CI job's accounting expects (a child's times reach its parent when it is
    // reaped).
    if reap_last {
        wait_for(shim_process.pid);
    }
    Ok(code)
}

/// The go command's module cache as this environment sets it (`GOMODCACHE`, else the
/// first folder of `GOPATH` with `pkg/mod`), resolved; `None` for go's default in the home.
fn go_mod_cache() -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let cache = set("GOMODCACHE").map(PathBuf::from).or_else(|| {
        let path = set("GOPATH")?;
        std::env::split_paths(&path)
            .next()
            .map(|first| first.join("pkg/mod"))
    })?;
    Some(std::fs::canonicalize(&cache).unwrap_or(cache))
}

/// Closes the gate (pending questions denied, the log written out) on every way out of the
/// session, errors included.
struct GateGuard(Arc<crate::gate::decide::Gate>);

impl Drop for GateGuard {
    fn drop(&mut self) {
        self.0.close(None);
    }
}

/// A shim started ahead of its spec: killed and reaped if the session's preparation fails
/// before the spec is sent (it would otherwise wait for a spec until the channel closes).
struct WaitingShim(Option<(spawn::ShimProcess, Channel)>);

/// Why a shim did not say it was ready ([`await_ready`]).
enum Unready {
    /// It could not make the network namespace it was asked to make: the session starts a
    /// shim without one.
    NoNetwork(String),
    /// Anything else: the session cannot start.
    Failed(String),
}

/// Reads the shim's first word ([`FromShim::Ready`]): it has started and made the network
/// namespace it was asked to make (`shim::UNSHARE_NET_ARG`).
fn await_ready(shim: &spawn::ShimProcess, ours: &Channel) -> Result<(), Unready> {
    match ours.recv::<FromShim>() {
        Ok(Some((FromShim::Ready, _))) => Ok(()),
        Ok(Some((FromShim::SetupFailed { stage, message, .. }, _)))
            if stage == shim::NET_STAGE && shim.namespaces.net =>
        {
            Err(Unready::NoNetwork(message))
        }
        Ok(Some((FromShim::SetupFailed { stage, message, .. }, _))) => {
            Err(Unready::Failed(format!("{stage}: {message}")))
        }
        Ok(Some((other, _))) => Err(Unready::Failed(format!(
            "unexpected first message {other:?}"
        ))),
        Ok(None) => Err(Unready::Failed("the shim ended before it started".into())),
        Err(e) => Err(Unready::Failed(format!(
            "reading the shim's first message: {e}"
        ))),
    }
}

impl Drop for WaitingShim {
    fn drop(&mut self) {
        if let Some((shim, _)) = self.0.take() {
            kill_and_reap(shim.pid);
        }
    }
}

/// Readies the `--pass-fd` descriptors to be inherited by the shim: each loses
/// close-on-exec; one numbered like the shim's channel (3) is duplicated above all of
/// them, since the channel takes its number in the shim. Returns what the shim is told,
/// with the duplicates (kept open until the shim has started).
fn prepare_pass_fds(fds: &[i32]) -> Result<Vec<(shim::PassFd, Option<OwnedFd>)>, String> {
    let mut fds = fds.to_vec();
    fds.sort_unstable();
    fds.dedup();
    let above = fds.last().copied().unwrap_or(2) + 1;
    let mut out = Vec::new();
    for fd in fds {
        let fail = |e: std::io::Error| format!("--pass-fd {fd}: {e}");
        if fd == shim::SHIM_CHANNEL_FD {
            // SAFETY: F_DUPFD on a descriptor checked open; the result is ours.
            let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD, above) };
            if dup < 0 {
                return Err(fail(std::io::Error::last_os_error()));
            }
            // SAFETY: a fresh descriptor that we now own (not close-on-exec: F_DUPFD).
            let owned = unsafe { OwnedFd::from_raw_fd(dup) };
            out.push((
                shim::PassFd {
                    target: fd,
                    inherited: dup,
                },
                Some(owned),
            ));
        } else {
            // SAFETY: F_SETFD with a flag value on a descriptor checked open.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
                return Err(fail(std::io::Error::last_os_error()));
            }
            out.push((
                shim::PassFd {
                    target: fd,
                    inherited: fd,
                },
                None,
            ));
        }
    }
    Ok(out)
}

/// Refuses an audit log (`--log`) the sandbox could write: one in the worktree, the session
/// TMPDIR, `/dev/shm` or a writable folder would be the sandbox's to truncate and forge
/// (its records of the sandbox's own refused calls included).
fn log_out_of_reach(log: &Path, roots: impl Iterator<Item = PathBuf>) -> Result<(), String> {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let absolute = std::path::absolute(log).map_err(|e| format!("--log {}: {e}", log.display()))?;
    // The file may not exist yet: its folder is resolved, then the name added.
    let resolved = match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => real(dir).join(name),
        _ => real(&absolute),
    };
    for root in roots {
        let root = real(&root);
        if resolved.starts_with(&root) {
            return Err(format!(
                "--log {}: the file lies in {}, which the sandbox can write: the audit log would be the sandbox's to rewrite; put it outside the writable folders",
                log.display(),
                root.display()
            ));
        }
    }
    Ok(())
}

/// What the config files give a session.
struct SessionPolicy {
    /// The settings of the policy crate's classifier, which judges in exec context (made
    /// once the sandbox's own folders are known).
    settings: policy::Settings,
    /// `--mode`, else the config's, never looser than the config's minimum.
    mode: policy::Mode,
    /// The config's `[network]` table.
    network: policy::config::NetworkConfig,
    /// The profile the user's config names.
    profile: Option<&'static policy::profile::Profile>,
}

/// Reads the config files for `worktree` and builds the session's policy.
fn exec_policy(
    worktree: &Path,
    mode: Option<policy::Mode>,
    config: Option<&Path>,
) -> Result<SessionPolicy, String> {
    let loaded =
        crate::session::load(worktree.to_path_buf(), mode, config).map_err(|e| format!("{e:#}"))?;
    for w in &loaded.warnings {
        eprintln!(
            "fence: warning: {}",
            crate::escape::for_terminal(&w.to_string())
        );
    }
    let mode = loaded.settings.mode;
    Ok(SessionPolicy {
        settings: loaded.settings,
        mode,
        network: loaded.network,
        profile: loaded.profile,
    })
}

/// The paths the config's `deny_read` names, for the unreadable paths the sandbox's view
/// and ruleset are planned with (security boundary, as `--deny-read`): `~/REST` in each of
/// `homes` (`~` alone is the home itself), an absolute path as written, and a relative one
/// inside `worktree` (`.env`). Unlike `--deny-read`, a path may be missing: it is kept
/// unreadable if made during the session (outside the writable roots). A pattern (`*`, `?`,
/// `[`) stands for the paths matching it at start. An entry naming a home that is not known
/// is an error, never skipped.
fn config_deny_read(
    entries: &[String],
    homes: &[PathBuf],
    worktree: &Path,
) -> Result<Vec<PathBuf>, String> {
    let named = config_deny_read_named(entries, homes, worktree)?;
    let mut out = Vec::new();
    for path in named {
        let text = path.to_string_lossy().into_owned();
        // `{a,b}` is the shell's, not a pattern's: taken as written it would name nothing
        // the user meant, and leave those paths readable.
        if let Some(open) = text.find('{')
            && text[open..].contains(',')
            && text[open..].contains('}')
        {
            return Err(format!(
                "config deny_read {}: braces are not expanded (list each path)",
                crate::escape::for_terminal(&text)
            ));
        }
        if !text.contains(['*', '?', '[']) {
            out.push(path);
            continue;
        }
        out.extend(pattern_matches(&text)?);
    }
    Ok(out)
}

/// Longest a config pattern's expansion may take, and most paths it may match.
const PATTERN_TIME: std::time::Duration = std::time::Duration::from_secs(2);
const PATTERN_MATCHES: usize = 4096;

/// The paths that match `pattern` now. A match that cannot be looked at (an unreadable
/// folder on the way) is not known to be no secret, so it is an error, as are `**` (it
/// follows links, and loops in /sys never end), more than [`PATTERN_MATCHES`] matches and
/// a walk longer than [`PATTERN_TIME`] (on a thread left behind: fence then ends).
fn pattern_matches(pattern: &str) -> Result<Vec<PathBuf>, String> {
    let fail = |why: &dyn std::fmt::Display| {
        format!(
            "config deny_read {}: {why}",
            crate::escape::for_terminal(pattern)
        )
    };
    if pattern.contains("**") {
        return Err(fail(
            &"`**` is not expanded by fence run (name the folders, each level with `*`)",
        ));
    }
    let matches = glob::glob(pattern).map_err(|e| fail(&e))?;
    let (sent, walked) = std::sync::mpsc::channel();
    let walk = move || {
        let mut found = Vec::new();
        for m in matches {
            match m {
                Ok(p) if found.len() < PATTERN_MATCHES => found.push(p),
                Ok(_) => return Err(format!("matches more than {PATTERN_MATCHES} paths")),
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(found)
    };
    std::thread::Builder::new()
        .name("fence-pattern".into())
        .spawn(move || {
            let _ = sent.send(walk());
        })
        .map_err(|e| fail(&e))?;
    match walked.recv_timeout(PATTERN_TIME) {
        Ok(found) => found.map_err(|e| fail(&e)),
        Err(_) => Err(fail(&format!(
            "its expansion took longer than {} s",
            PATTERN_TIME.as_secs()
        ))),
    }
}

/// [`config_deny_read`]'s entries as paths, patterns unexpanded.
fn config_deny_read_named(
    entries: &[String],
    homes: &[PathBuf],
    worktree: &Path,
) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for entry in entries {
        let in_home = if entry == "~" {
            Some("")
        } else {
            entry.strip_prefix("~/")
        };
        match in_home {
            Some(_) if homes.is_empty() => {
                return Err(format!(
                    "config deny_read {}: no home directory is known (HOME is unset and the account has none)",
                    crate::escape::for_terminal(entry)
                ));
            }
            Some(rest) => out.extend(homes.iter().map(|h| h.join(rest))),
            None if entry.starts_with('~') => {
                return Err(format!(
                    "config deny_read {}: only the session user's own home (~/…) can be named",
                    crate::escape::for_terminal(entry)
                ));
            }
            None => out.push(worktree.join(entry)),
        }
    }
    Ok(out)
}

/// Adds the config's `[network]` entries to the flags' own. An entry that does not parse is
/// skipped with a warning (it allows nothing).
fn add_network_config(args: &mut RunArgs, network: &policy::config::NetworkConfig) {
    let warn = |key: &str, e: String| {
        eprintln!(
            "fence: warning: config network.{key}: {} (skipped)",
            crate::escape::for_terminal(&e)
        );
    };
    for text in &network.allow_net {
        match parse_net_rule(text) {
            Ok(r) => args.allow_net.push(r),
            Err(e) => warn("allow_net", e),
        }
    }
    for text in &network.allow_domain {
        match parse_domain_rule(text) {
            Ok(r) => args.allow_domain.push(r),
            Err(e) => warn("allow_domain", e),
        }
    }
    for text in &network.resolve {
        match parse_resolve(text) {
            Ok(r) => args.resolve.push(r),
            Err(e) => warn("resolve", e),
        }
    }
    args.allow_dns |= network.allow_dns;
    for path in &network.allow_unix {
        match Path::new(path).canonicalize() {
            Ok(p) => args.allow_unix.push(p),
            Err(e) => warn("allow_unix", format!("{path}: {e}")),
        }
    }
}

/// The relay of `--allow-dns`, to the nameservers of /etc/resolv.conf (read once, now).
/// None there: refused rather than guessed.
fn dns_relay() -> Result<crate::net::dns::DnsRelay, String> {
    const RESOLV_CONF: &str = "/etc/resolv.conf";
    let text = std::fs::read_to_string(RESOLV_CONF)
        .map_err(|e| format!("--allow-dns: cannot read {RESOLV_CONF}: {e}"))?;
    let (resolvers, warnings) = crate::net::dns::parse_resolv_conf(&text);
    for w in &warnings {
        eprintln!(
            "fence: --allow-dns: {RESOLV_CONF}: {}",
            crate::escape::for_terminal(w)
        );
    }
    if resolvers.is_empty() {
        return Err(format!(
            "--allow-dns: {RESOLV_CONF} names no usable nameserver, so there is no system resolver to let DNS through to"
        ));
    }
    Ok(crate::net::dns::DnsRelay::new(&resolvers))
}

fn parse_domain_rule(text: &str) -> Result<crate::net::proxy::DomainRule, String> {
    crate::net::proxy::parse_domain_rule(text).map_err(|e| e.to_string())
}

/// Starts the session's domain proxy; its questions and decisions go through the gate.
fn start_proxy(
    args: &RunArgs,
    gate: std::sync::Arc<crate::gate::decide::Gate>,
    clients: std::sync::Arc<crate::net::peer_process::ProxyClients>,
) -> std::io::Result<crate::net::proxy::Proxy> {
    use crate::net::allow::Host;
    let allowed_by_ip = args
        .allow_net
        .iter()
        .filter_map(|r| match r.host {
            Host::Ip(ip) => Some((ip.to_canonical(), r.ports.clone())),
            Host::Name(_) => None,
        })
        .collect();
    let policy = crate::net::proxy::ProxyPolicy {
        rules: args.allow_domain.clone(),
        resolve: args.resolve.clone(),
        allowed_by_ip,
    };
    crate::net::proxy::start(policy, proxy_gate::hooks(gate, clients, args.quiet_blocks))
}

/// Adds the tool cache variables the environment does not set (tool_caches.rs).
fn with_tool_caches(
    mut env: Vec<(OsString, OsString)>,
    caches: Option<&tool_caches::CacheHome>,
) -> Vec<(OsString, OsString)> {
    if let Some(caches) = caches {
        let add = tool_caches::variables(caches, &env);
        env.extend(add);
    }
    env
}

/// In a root session, `TAR_OPTIONS=--no-same-owner` when the environment does not set
/// `TAR_OPTIONS`: the sandbox's root keeps no capability, so GNU tar's default for root,
/// giving each file the owner the archive names, fails on every file of another owner
/// (`tar xf` of a release tarball exits 2); unpacked as any user unpacks, the files are
/// root's.
fn with_root_tar_options(
    mut env: Vec<(OsString, OsString)>,
    root: bool,
) -> Vec<(OsString, OsString)> {
    if root && !env.iter().any(|(k, _)| k == "TAR_OPTIONS") {
        env.push(("TAR_OPTIONS".into(), "--no-same-owner".into()));
    }
    env
}

/// The proxy variables, upper and lower case, replacing any the environment had.
fn with_proxy_variables(
    mut env: Vec<(OsString, OsString)>,
    proxy: Option<&crate::net::proxy::Proxy>,
) -> Vec<(OsString, OsString)> {
    let Some(proxy) = proxy else {
        return env;
    };
    const NAMES: [&str; 4] = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"];
    env.retain(|(k, _)| {
        !NAMES
            .iter()
            .any(|n| k.to_string_lossy().eq_ignore_ascii_case(n))
    });
    // The sandbox's own loopback is reached directly, in every spelling clients compare
    // (curl, Go and Python's requests read the CIDR ranges; urllib only names): through
    // the proxy, which runs outside the sandbox's network namespace, a server the sandbox
    // started would not be found. The user's own entries are left out: the sandbox has
    // no route but loopback, so a host reached directly instead of through the proxy
    // would fail where an --allow-domain rule could let it through.
    let mut no_proxy =
        "localhost,.localhost,127.0.0.1,127.0.0.0/8,::1,[::1],::1/128,0.0.0.0".to_string();
    if let Ok(host) = nix::unistd::gethostname()
        && let Some(host) = host.to_str()
        && !host.is_empty()
        && !host.contains(',')
    {
        no_proxy.push(',');
        no_proxy.push_str(host);
    }
    for name in NAMES {
        let value = if name == "NO_PROXY" {
            no_proxy.clone()
        } else {
            proxy.url.clone()
        };
        env.push((name.into(), value.clone().into()));
        env.push((name.to_ascii_lowercase().into(), value.into()));
    }
    env
}

fn parse_net_rule(text: &str) -> Result<crate::net::allow::NetRule, String> {
    crate::net::allow::parse_rule(text).map_err(|e| e.to_string())
}

fn parse_resolve(text: &str) -> Result<(String, std::net::IpAddr), String> {
    crate::net::allow::parse_resolve(text).map_err(|e| e.to_string())
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

/// When fence's standard descriptors include a terminal, a thread waits for it to hang
/// up (a closed terminal window, a dropped SSH connection, a killed tmux pane) and then
/// closes the gate's questions ([`crate::gate::decide::Gate::terminal_hung_up`]). It
/// watches the terminal rather than SIGHUP: an interactive shell in the sandbox makes its
/// own process group the terminal's foreground one, and the kernel's SIGHUP then goes to
/// that group and the session leader, which fence need not be.
fn watch_terminal_hangup(gate: Arc<crate::gate::decide::Gate>) {
    let mut fds: Vec<libc::pollfd> = (0..3)
        // SAFETY: isatty on fence's own standard descriptors.
        .filter(|&fd| unsafe { libc::isatty(fd) } == 1)
        .map(|fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        })
        .collect();
    if fds.is_empty() {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("fence-tty".into())
        .spawn(move || {
            loop {
                // With no events asked, poll returns only on POLLHUP, POLLERR or POLLNVAL.
                // SAFETY: a valid array of pollfds of its length.
                let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
                if n > 0 {
                    gate.terminal_hung_up();
                    return;
                }
                if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    return;
                }
            }
        });
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
        // The terminal's Ctrl-Z: fence stops only once the sandbox is stopped whole
        // (`spawn_signal_forwarder`).
        libc::sigaddset(&mut set, libc::SIGTSTP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// Forwards signals sent to fence by a process (`kill`) to the sandbox's init. Signals the
/// terminal sends (Ctrl-C) reach the sandbox directly: it shares fence's process group. A
/// hangup of the terminal closes the gate's questions ([`watch_terminal_hangup`]).
fn spawn_signal_forwarder(
    set: libc::sigset_t,
    init: libc::pid_t,
    gate: Arc<crate::gate::decide::Gate>,
    foreground: Arc<foreground::Guard>,
) {
    watch_terminal_hangup(gate);
    std::thread::spawn(move || {
        loop {
            // SAFETY: siginfo_t is plain data.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: a valid set and out-pointer.
            let sig = unsafe { libc::sigwaitinfo(&set, &mut info) };
            if sig == libc::SIGTSTP {
                // From the terminal (Ctrl-Z) or a process: the init stops every process of
                // the sandbox, and says so (`FromShim::Stopped`), and only then does fence
                // stop itself and the user's shell show its prompt. Without that word fence
                // does not stop: a process of the sandbox that ignores SIGTSTP would run on
                // behind the prompt, take the terminal's foreground back and read what the
                // user types to the shell.
                // SAFETY: signalling our own child.
                unsafe { libc::kill(init, shim::channel::stop_sandbox_signal()) };
                continue;
            }
            if sig == libc::SIGCONT {
                // `fg` of a job running in the background gives it the terminal and sends
                // SIGCONT: fence may hold its terminal again (`foreground`).
                foreground.look_again();
            }
            if sig > 0 && info.si_code <= 0 {
                // SAFETY: signalling our own child.
                unsafe { libc::kill(init, sig) };
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config's `deny_read` entries as `fence run` reads them: `~` forms in every
    /// home, absolute as written, relative in the worktree, patterns by their matches; a
    /// home that cannot be named is an error, not an entry skipped.
    #[test]
    fn config_deny_read_names_paths_as_fence_check_does() {
        let d = tempfile::tempdir().unwrap();
        let wt = d.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(d.path().join("a.key"), "").unwrap();
        std::fs::write(d.path().join("b.key"), "").unwrap();
        let homes = [PathBuf::from("/home/u"), PathBuf::from("/home/acct")];
        let entries: Vec<String> = [
            "~/vault",
            "~",
            "/etc/app/token",
            ".env",
            &format!("{}/*.key", d.path().display()),
        ]
        .map(String::from)
        .to_vec();
        let got = config_deny_read(&entries, &homes, &wt).unwrap();
        assert_eq!(
            got,
            vec![
                PathBuf::from("/home/u/vault"),
                PathBuf::from("/home/acct/vault"),
                PathBuf::from("/home/u/"),
                PathBuf::from("/home/acct/"),
                PathBuf::from("/etc/app/token"),
                wt.join(".env"),
                d.path().join("a.key"),
                d.path().join("b.key"),
            ]
        );
        assert!(config_deny_read(&["~/x".into()], &[], &wt).is_err());
        assert!(config_deny_read(&["~other/x".into()], &homes, &wt).is_err());
        assert!(config_deny_read(&["/x/[".into()], &homes, &wt).is_err());
        assert!(config_deny_read(&["/sys/**/x".into()], &homes, &wt).is_err());
        assert!(config_deny_read(&["/x/{a,b}".into()], &homes, &wt).is_err());
    }
}

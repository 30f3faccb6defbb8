//! `fence doctor`: what this kernel offers fence, and from it what `fence run` can and
//! cannot enforce here. Each feature is probed where a probe is cheap and safe (in a
//! forked child that exits at once), else judged by the kernel version, and the report
//! says which.

use std::io;

use serde::Serialize;
use serde_json::json;

use crate::run::limits::SessionCgroup;
use crate::run::preflight::{self, DeathMechanism, SeccompProbe, in_child, probe_seccomp};

/// `fence doctor` flags.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The kernel features fence uses, the release that brought each, and what fence does
/// without it (SPEC §3 "Kernel floors"; the README carries the same table).
pub const KERNEL_FLOORS: [(&str, &str, &str); 15] = [
    (
        "Landlock ABI 1",
        "5.13",
        "without any Landlock: refuse (exit 125); --allow-degraded runs on the seccomp checks and the read-only mount view",
    ),
    (
        "Landlock ABI 2 (REFER)",
        "5.19",
        "ABI 1: renames and links across directories fail (EXDEV), inside the worktree too",
    ),
    (
        "Landlock ABI 3 (TRUNCATE)",
        "6.2",
        "truncate(2) performed by fence on the checked file; O_RDONLY|O_TRUNC and openat2 refused",
    ),
    (
        "Landlock ABI 4 (TCP bind/connect)",
        "6.7",
        "network denied by the seccomp socket filter or the network namespace",
    ),
    (
        "Landlock ABI 5 (IOCTL_DEV)",
        "6.10",
        "only the short device list is reachable; TIOCSTI/TIOCLINUX refused by seccomp",
    ),
    (
        "Landlock ABI 6 (signal and abstract-socket scopes)",
        "6.12",
        "pid and network namespaces stand in, kill(0) refused; without them: refuse",
    ),
    (
        "Landlock ABI 9 (pathname unix sockets)",
        "7.1",
        "fence checks the path and performs the connect itself",
    ),
    (
        "seccomp user notification",
        "5.0",
        "refuse (exit 125); --allow-degraded runs without exec and write checks",
    ),
    (
        "SECCOMP_ADDFD_FLAG_SEND",
        "5.14",
        "not used by fence: connects are performed on the target's socket instead",
    ),
    (
        "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
        "5.19",
        "a signal interrupts a pending question, which is then denied",
    ),
    (
        "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP",
        "6.6",
        "every notified call pays a cross-CPU wake-up (about 10 times slower)",
    ),
    (
        "cgroup.kill",
        "5.14",
        "without a pid namespace the sandbox's init kills its descendants one by one",
    ),
    (
        "PIDFD_THREAD",
        "6.9",
        "blocked reasons and descriptor fetches go through the thread-group leader; a thread's cwd, credentials and umask are read at every call that needs them and its memory by `process_vm_readv`, nothing kept",
    ),
    (
        "idmapped mounts",
        "5.12",
        "a root session's /etc has its listing frozen (~150 binds, ~1.6 ms of a start) and root's files there that the secret list does not name stay readable to it",
    ),
    (
        "user namespaces (unprivileged)",
        "3.8",
        "an ordinary user runs without pid, mount and network namespaces",
    ),
];

/// How a fact was established.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum How {
    Probe,
    KernelVersion,
    Proc,
}

#[derive(Debug, Serialize)]
struct Fact {
    present: bool,
    how: How,
    needs: &'static str,
    detail: String,
}

/// Runs the report; returns the exit status (0 all present, 1 degraded or refused).
pub fn run(args: DoctorArgs) -> u8 {
    let report = Report::gather();
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    if report.verdict == Verdict::Full {
        0
    } else {
        1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Verdict {
    /// Everything fence needs is here (compensated ABIs included).
    Full,
    /// `fence run` would refuse; `--allow-degraded` would run weaker.
    Refuse,
    /// `fence run` runs, but something it relies on is weaker than the policy.
    Degraded,
}

struct Report {
    kernel: String,
    version: (u32, u32),
    landlock_abi: i32,
    /// `FENCE_LANDLOCK_ABI_MAX`, judged as `fence run` would use it.
    abi_cap: Option<i32>,
    landlock_errno: Option<i32>,
    landlock_in_lsm: Option<bool>,
    seccomp_notif: bool,
    probe: Option<SeccompProbe>,
    seccomp_mode: String,
    seccomp_filters: u32,
    pidfd_thread: Fact,
    /// The kernel's table of unix sockets (`sock_diag`), which says which socket a socket
    /// file belongs to.
    unix_diag: Fact,
    addfd_send: Fact,
    namespaces: Result<shim::Namespaces, String>,
    /// A root session's `/etc` with root's files as nobody's (`None`: not root).
    root_etc: Option<Result<(), String>>,
    cgroup: Result<bool, String>,
    yama: Option<u32>,
    enforced: Vec<String>,
    not_enforced: Vec<String>,
    death: DeathMechanism,
    verdict: Verdict,
    /// The worktree of the current directory and its files with other hard links.
    shared: Option<SharedFiles>,
}

/// Regular files of a worktree with more than one name (SPEC §2: a hard link made before
/// the session, whose other name may lie outside, is written through its worktree name).
#[derive(Debug, Serialize)]
struct SharedFiles {
    worktree: std::path::PathBuf,
    /// How many were found.
    count: usize,
    /// The first few, relative to the worktree.
    examples: Vec<std::path::PathBuf>,
    /// Whether the walk stopped at [`MOST_WORKTREE_ENTRIES`] before the end.
    partial: bool,
}

/// Most entries `fence doctor` looks at in a worktree.
const MOST_WORKTREE_ENTRIES: usize = 100_000;

/// The files of the current directory's worktree (as `fence run` finds it) with other
/// hard links, `.git` left out (git's packs are its own). `None` outside any worktree
/// `fence run` would accept.
fn shared_files() -> Option<SharedFiles> {
    use std::os::unix::fs::MetadataExt;
    let cwd = std::env::current_dir().ok()?;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let worktree = crate::session::find_worktree(None, &cwd, home.as_deref(), false).ok()?;
    let mut found = SharedFiles {
        worktree: worktree.clone(),
        count: 0,
        examples: Vec::new(),
        partial: false,
    };
    // Each linked file by device and inode: its link count, the names of it found in the
    // worktree, and the first. One whose names all lie in the worktree (a build's own
    // hard links: cargo links `target/debug/x` to `target/debug/deps/x-HASH`) shares
    // nothing with the outside.
    let mut linked: std::collections::HashMap<(u64, u64), (u64, u64, std::path::PathBuf)> =
        std::collections::HashMap::new();
    let mut budget = MOST_WORKTREE_ENTRIES;
    let mut folders = vec![worktree.clone()];
    'walk: while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            if budget == 0 {
                found.partial = true;
                break 'walk;
            }
            budget -= 1;
            let Ok(m) = entry.metadata() else { continue };
            if m.is_dir() {
                if entry.file_name() != ".git" {
                    folders.push(entry.path());
                }
            } else if m.is_file() && m.nlink() > 1 {
                let seen = linked
                    .entry((m.dev(), m.ino()))
                    .or_insert_with(|| (m.nlink(), 0, entry.path()));
                seen.1 += 1;
            }
        }
    }
    let mut outside: Vec<&std::path::PathBuf> = linked
        .values()
        .filter(|(nlink, seen, _)| seen < nlink)
        .map(|(_, _, path)| path)
        .collect();
    outside.sort();
    found.count = outside.len();
    found.examples = outside
        .iter()
        .take(5)
        .map(|p| p.strip_prefix(&worktree).unwrap_or(p).to_path_buf())
        .collect();
    Some(found)
}

impl Report {
    fn gather() -> Report {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let version = parse_version(&kernel);
        let at_least = |major: u32, minor: u32| version >= (major, minor);
        let (landlock_abi, landlock_errno) = landlock_version();
        let landlock_in_lsm = std::fs::read_to_string("/sys/kernel/security/lsm")
            .ok()
            .map(|l| l.trim().split(',').any(|m| m == "landlock"));
        let seccomp_notif = preflight::seccomp_user_notification();
        let probe = seccomp_notif.then(probe_seccomp).and_then(Result::ok);
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        let seccomp_mode = match field("Seccomp:").as_str() {
            "0" => "none".to_string(),
            "1" => "strict".to_string(),
            "2" => "filter".to_string(),
            other => other.to_string(),
        };
        let seccomp_filters = field("Seccomp_filters:").parse().unwrap_or(0);
        let pidfd_thread = match probe_pidfd_thread() {
            Ok(present) => Fact {
                present,
                how: How::Probe,
                needs: "6.9",
                detail: if present {
                    "pidfd_open accepts PIDFD_THREAD".into()
                } else {
                    "pidfd_open refused PIDFD_THREAD (EINVAL)".into()
                },
            },
            Err(e) => Fact {
                present: false,
                how: How::Probe,
                needs: "6.9",
                detail: format!("pidfd_open failed: {e}"),
            },
        };
        let unix_diag = match crate::run::unix_diag::sockets_bound_at(0, 0) {
            Ok(_) => Fact {
                present: true,
                how: How::Probe,
                needs: "CONFIG_UNIX_DIAG",
                detail: "sock_diag lists unix sockets with the files they are bound to".into(),
            },
            Err(e) => Fact {
                present: false,
                how: How::Probe,
                needs: "CONFIG_UNIX_DIAG",
                detail: e.to_string(),
            },
        };
        let addfd_send = Fact {
            present: at_least(5, 14),
            how: How::KernelVersion,
            needs: "5.14",
            detail: "probing it needs a pending notification; judged by the kernel version".into(),
        };
        let namespaces = probe_namespaces();
        let root_etc = namespaces
            .as_ref()
            .is_ok_and(|n| n.mount && !n.user)
            .then(crate::run::owner_shift::probe)
            .flatten();
        let cgroup = SessionCgroup::create(crate::run::limits::DEFAULT_MAX_PROCS)
            .map(|cg| cg.dir.join("cgroup.kill").exists())
            .map_err(|e| e.to_string());
        let yama = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let mut report = Report {
            kernel,
            version,
            landlock_abi,
            abi_cap: preflight::landlock_abi_cap().ok().flatten(),
            landlock_errno,
            landlock_in_lsm,
            seccomp_notif,
            probe,
            seccomp_mode,
            seccomp_filters,
            pidfd_thread,
            unix_diag,
            addfd_send,
            namespaces,
            root_etc,
            cgroup,
            yama,
            enforced: vec![],
            not_enforced: vec![],
            death: DeathMechanism::ParentDeathSignal,
            verdict: Verdict::Full,
            shared: shared_files(),
        };
        report.judge();
        report
    }

    /// From the facts: what `fence run` enforces here, what not, and the verdict.
    fn judge(&mut self) {
        let mut verdict = Verdict::Full;
        let mut worse = |v: Verdict| {
            if v == Verdict::Refuse || verdict == Verdict::Full {
                verdict = v;
            }
        };
        let ns = self.namespaces.clone().unwrap_or_default();
        let abi = self.abi_used();
        match shim::landlock_fence::compensations(abi, ns) {
            Ok(list) => {
                self.enforced.push(format!(
                    "file fence by Landlock ABI {abi} (race-free; stays if fence dies)"
                ));
                for c in list {
                    self.enforced.push(c.describe().to_string());
                }
            }
            Err(e) => {
                self.not_enforced
                    .push(format!("fence run refuses to start: {e}"));
                worse(Verdict::Refuse);
            }
        }
        if abi > 0 && abi < 9 {
            self.enforced.push(format!(
                "pathname unix sockets: checked by fence, which performs the connect itself (Landlock scopes them from ABI 9, Linux {})",
                shim::landlock_fence::kernel_for_abi(9)
            ));
        }
        match &self.probe {
            _ if !self.seccomp_notif => {
                self.not_enforced.push(
                    "no seccomp user notification (Linux 5.0): fence run refuses; exec, write and connect checks need it".into(),
                );
                worse(Verdict::Refuse);
            }
            Some(p) if p.busy => {
                self.not_enforced.push(
                    "fence is running inside another seccomp-notify sandbox (the kernel refuses a second listener: EBUSY): fence run refuses".into(),
                );
                worse(Verdict::Refuse);
            }
            Some(p) if p.listener => {
                self.enforced
                    .push("exec, write and connect checks by seccomp user notification".into());
                if !p.sync_wake_up {
                    self.not_enforced.push(
                        "no synchronous wake-ups (Linux 6.6): each notified call costs about 10 times more".into(),
                    );
                }
                if !p.wait_killable {
                    self.not_enforced.push(
                        "no killable-only wait (Linux 5.19): a signal interrupts a pending question, which is denied".into(),
                    );
                }
            }
            _ => {
                self.not_enforced
                    .push("a seccomp listener could not be created in a probe".into());
                worse(Verdict::Refuse);
            }
        }
        match &self.namespaces {
            Ok(n) if n.pid => self.enforced.push(format!(
                "namespaces: pid{}{}{}",
                if n.mount {
                    ", mount (read-only view; secrets hidden by mounts, so Landlock need not check reads; a private /tmp unless the worktree, home or working directory lies under /tmp)"
                } else {
                    ""
                },
                if n.net {
                    ", network (own loopback only)"
                } else {
                    ""
                },
                if n.user { " (in a user namespace)" } else { "" },
            )),
            Ok(_) => {
                self.not_enforced.push(
                    "no namespaces: protected paths rely on fence's check (creation can race), metadata changes are performed by fence, secrets are carved out of Landlock's read rules at start".into(),
                );
            }
            Err(e) => self.not_enforced.push(format!("no namespaces: {e}")),
        }
        match &self.root_etc {
            Some(Ok(())) => self.enforced.push(
                "a root session reads /etc as an ordinary user does: root's files there are nobody's to it (idmapped mount, probed), so shadow, TLS keys and any file only root may read are refused".into(),
            ),
            Some(Err(e)) => self.not_enforced.push(format!(
                "a root session can read root's files in /etc that the secret list does not name ({e}); the listed ones stay hidden (its listing is frozen)"
            )),
            None => {}
        }
        let pid_max = crate::run::limits::pid_namespace_max(
            crate::run::limits::DEFAULT_MAX_PROCS,
            self.version,
        );
        match &self.cgroup {
            _ if ns.pid && pid_max.is_some() => self.enforced.push(
                "process-count limit by the sandbox's own pid namespace (pid_max, Linux 6.14; a --max-procs below 300 takes a session cgroup)".into(),
            ),
            Ok(_) => self
                .enforced
                .push("process-count limit by a session cgroup (pids.max)".into()),
            Err(e) => self.not_enforced.push(format!(
                "no session cgroup ({e}): the process limit is RLIMIT_NPROC, which counts all of the user's processes and does not bind uid 0"
            )),
        }
        self.death = if ns.pid {
            DeathMechanism::PidNamespace
        } else if matches!(self.cgroup, Ok(true)) {
            DeathMechanism::CgroupKill
        } else {
            DeathMechanism::ParentDeathSignal
        };
        if let Some(gap) = self.death.what_could_outlive() {
            self.not_enforced
                .push(format!("if fence dies without a pid namespace: {gap}"));
        }
        if self.death == DeathMechanism::ParentDeathSignal {
            // Neither kernel mechanism holds: the sandbox could briefly outlive fence.
            worse(Verdict::Degraded);
        }
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        match self.yama {
            Some(3) => {
                self.not_enforced.push(
                    "Yama ptrace_scope 3: fence cannot read the sandbox's memory, so every notified call is denied".into(),
                );
                worse(Verdict::Refuse);
            }
            Some(2) if !root => {
                self.not_enforced.push(
                    "Yama ptrace_scope 2: an unprivileged fence cannot read the sandbox's memory, so every notified call is denied".into(),
                );
                worse(Verdict::Refuse);
            }
            _ => {}
        }
        if !self.pidfd_thread.present {
            self.not_enforced.push(
                "no PIDFD_THREAD (Linux 6.9): descriptor fetches and blocked reasons go through the thread-group leader; nothing of a thread is kept between its calls (slower writes)".into(),
            );
        }
        if !self.unix_diag.present {
            self.not_enforced.push(
                "no sock_diag for unix sockets: a socket file the sandbox bound in an --allow-write folder is known by its record alone, so a host program's socket renamed over it at once could be taken for the sandbox's".into(),
            );
        }
        self.verdict = verdict;
    }

    /// The ABI `fence run` would build for: the kernel's, lowered by the cap.
    fn abi_used(&self) -> i32 {
        shim::landlock_fence::effective_abi(self.landlock_abi, self.abi_cap)
    }

    fn to_json(&self) -> serde_json::Value {
        let probe = self.probe.as_ref();
        let by_probe = |f: fn(&SeccompProbe) -> bool, needs: &'static str| {
            json!({
                "present": probe.map(f).unwrap_or(false),
                "how": if probe.is_some() { How::Probe } else { How::KernelVersion },
                "needs": needs,
            })
        };
        json!({
            "kernel": self.kernel,
            "landlock": {
                "abi": self.landlock_abi,
                "abi_used": self.abi_used(),
                "abi_cap": self.abi_cap,
                "in_lsm_list": self.landlock_in_lsm,
                "errno": self.landlock_errno,
            },
            "seccomp": {
                "user_notification": self.seccomp_notif,
                "own_mode": self.seccomp_mode,
                "own_filters": self.seccomp_filters,
                "outer_listener": probe.map(|p| p.busy),
                "sync_wake_up": by_probe(|p| p.sync_wake_up, "6.6"),
                "wait_killable_recv": by_probe(|p| p.wait_killable, "5.19"),
                "addfd_flag_send": self.addfd_send,
            },
            "pidfd_thread": self.pidfd_thread,
            "unix_diag": self.unix_diag,
            "cgroup_kill": {
                "present": matches!(self.cgroup, Ok(true)),
                "how": How::Probe,
                "needs": "5.14",
            },
            "session_cgroup": match &self.cgroup { Ok(_) => json!(true), Err(e) => json!(e) },
            "namespaces": match &self.namespaces {
                Ok(n) => json!({"user": n.user, "pid": n.pid, "mount": n.mount, "net": n.net}),
                Err(e) => json!(e),
            },
            "root_etc_idmapped": match &self.root_etc {
                None => json!(null),
                Some(Ok(())) => json!(true),
                Some(Err(e)) => json!(e),
            },
            "yama_ptrace_scope": self.yama,
            "kill_if_fence_dies": self.death.describe(),
            "enforced": self.enforced,
            "not_enforced": self.not_enforced,
            "verdict": self.verdict,
            "worktree_hard_links": self.shared,
            "kernel_floors": KERNEL_FLOORS.iter().map(|(f, k, w)| json!({
                "feature": f, "kernel": k, "without": w,
            })).collect::<Vec<_>>(),
        })
    }

    fn to_text(&self) -> String {
        let yes = |b: bool| if b { "yes" } else { "no" };
        let how = |h: How| match h {
            How::Probe => "probed",
            How::KernelVersion => "by kernel version",
            How::Proc => "from /proc",
        };
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("{k:<28} {v}\n"));
        line("kernel", self.kernel.clone());
        let lsm = match self.landlock_in_lsm {
            Some(true) => "in the active LSM list",
            Some(false) => "not in the active LSM list (lsm= leaves it out)",
            None if self.landlock_abi > 0 => "active; /sys/kernel/security/lsm unreadable",
            None => "LSM list unreadable",
        };
        line(
            "Landlock",
            if self.landlock_abi > 0 {
                let cap = match self.abi_cap {
                    Some(_) if self.abi_used() < self.landlock_abi => format!(
                        "; fence run uses ABI {} (FENCE_LANDLOCK_ABI_MAX)",
                        self.abi_used()
                    ),
                    _ => String::new(),
                };
                format!("ABI {} ({lsm}){cap}", self.landlock_abi)
            } else {
                format!(
                    "absent ({}; {lsm})",
                    match self.landlock_errno {
                        Some(libc::ENOSYS) => "not built into this kernel: ENOSYS",
                        Some(libc::EOPNOTSUPP) => "disabled at boot: EOPNOTSUPP",
                        _ => "unavailable",
                    }
                )
            },
        );
        line("seccomp user notification", yes(self.seccomp_notif).into());
        let p = self.probe.as_ref();
        let (probe_how, kv) = match p {
            Some(_) => (How::Probe, None),
            None => (How::KernelVersion, Some(self.version)),
        };
        let flag = |f: fn(&SeccompProbe) -> bool, needs: (u32, u32)| {
            let present = match (p, kv) {
                (Some(p), _) => f(p),
                (None, Some(v)) => v >= needs,
                _ => false,
            };
            format!(
                "{} (Linux {}.{}, {})",
                yes(present),
                needs.0,
                needs.1,
                how(probe_how)
            )
        };
        line("  SYNC_WAKE_UP", flag(|p| p.sync_wake_up, (6, 6)));
        line("  WAIT_KILLABLE_RECV", flag(|p| p.wait_killable, (5, 19)));
        line(
            "  ADDFD_FLAG_SEND",
            format!(
                "{} (Linux {}, {})",
                yes(self.addfd_send.present),
                self.addfd_send.needs,
                how(self.addfd_send.how)
            ),
        );
        line(
            "outer seccomp",
            format!(
                "mode {}, {} filter(s){}",
                self.seccomp_mode,
                self.seccomp_filters,
                match p {
                    Some(p) if p.busy => ", a listener is already installed (EBUSY)",
                    Some(_) => ", no outer listener (probed)",
                    None => "",
                }
            ),
        );
        line(
            "PIDFD_THREAD",
            format!(
                "{} (Linux {}, {})",
                yes(self.pidfd_thread.present),
                self.pidfd_thread.needs,
                how(self.pidfd_thread.how)
            ),
        );
        line(
            "unix socket table",
            format!(
                "{} (sock_diag, {})",
                yes(self.unix_diag.present),
                how(self.unix_diag.how)
            ),
        );
        line(
            "namespaces",
            match &self.namespaces {
                Ok(n) => format!(
                    "user {}, pid {}, mount {}, net {} (probed)",
                    yes(n.user),
                    yes(n.pid),
                    yes(n.mount),
                    yes(n.net)
                ),
                Err(e) => e.clone(),
            },
        );
        if let Some(root_etc) = &self.root_etc {
            line(
                "/etc for root",
                match root_etc {
                    Ok(()) => "idmapped, root's files nobody's (probed)".to_string(),
                    Err(e) => format!("frozen listing ({e})"),
                },
            );
        }
        line(
            "session cgroup",
            match &self.cgroup {
                Ok(kill) => format!(
                    "can be made (probed); cgroup.kill {} (Linux 5.14)",
                    yes(*kill)
                ),
                Err(e) => format!("cannot be made: {e}"),
            },
        );
        line(
            "Yama ptrace_scope",
            self.yama.map_or("absent".to_string(), |v| {
                format!("{v} ({})", how(How::Proc))
            }),
        );
        line("if fence dies", self.death.describe().to_string());
        out.push_str("\nfence run enforces here:\n");
        for e in &self.enforced {
            out.push_str(&format!("  + {e}\n"));
        }
        if !self.not_enforced.is_empty() {
            out.push_str("not enforced, or weaker, here:\n");
            for e in &self.not_enforced {
                out.push_str(&format!("  - {e}\n"));
            }
        }
        out.push_str(&format!(
            "verdict: {}\n",
            match self.verdict {
                Verdict::Full => "everything fence needs is here",
                Verdict::Degraded => "fence run would run weaker than its policy",
                Verdict::Refuse => "fence run would refuse to start (--allow-degraded runs weaker)",
            }
        ));
        if let Some(shared) = &self.shared {
            if shared.count == 0 {
                out.push_str(&format!(
                    "\nworktree {}: no file with other hard links{}\n",
                    shared.worktree.display(),
                    if shared.partial {
                        " in the part looked at"
                    } else {
                        ""
                    }
                ));
            } else {
                let examples: Vec<String> = shared
                    .examples
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                out.push_str(&format!(
                    "\nwarning: worktree {}: {}{} files have other hard links ({}…): a name outside the worktree, made before the session (a package store, a cache, a backup), shares each; fence run writes them as private copies, and reads reach the shared file\n",
                    shared.worktree.display(),
                    if shared.partial { "at least " } else { "" },
                    shared.count,
                    examples.join(", ")
                ));
            }
        }
        out.push_str("\nkernel features fence uses:\n");
        for (feature, kernel, without) in KERNEL_FLOORS {
            out.push_str(&format!(
                "  {feature:<52} Linux {kernel:<5} without: {without}\n"
            ));
        }
        out
    }
}

use crate::run::limits::parse_kernel_version as parse_version;

/// The Landlock version syscall: the ABI, or the errno that says why there is none
/// (ENOSYS: not built in; EOPNOTSUPP: disabled at boot).
fn landlock_version() -> (i32, Option<i32>) {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: a null attribute with size 0 and the VERSION flag is the documented query form.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v < 0 {
        (0, io::Error::last_os_error().raw_os_error())
    } else {
        (i32::try_from(v).unwrap_or(0), None)
    }
}

/// Whether `pidfd_open` takes `PIDFD_THREAD` (which shares its value with O_EXCL).
fn probe_pidfd_thread() -> io::Result<bool> {
    const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
    // SAFETY: gettid and pidfd_open take plain integers; the result is closed below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_pidfd_open,
            libc::syscall(libc::SYS_gettid),
            PIDFD_THREAD,
        )
    };
    if fd >= 0 {
        // SAFETY: closing the descriptor just opened.
        unsafe { libc::close(fd as i32) };
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EINVAL) {
        Ok(false)
    } else {
        Err(err)
    }
}

/// Tries, in a child, the namespaces `fence run` would make: pid, mount and network, in a
/// user namespace for an ordinary user.
fn probe_namespaces() -> Result<shim::Namespaces, String> {
    if std::env::var_os("FENCE_NO_NAMESPACES").is_some_and(|v| v == "1") {
        return Err("turned off by FENCE_NO_NAMESPACES=1".into());
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let wanted = shim::Namespaces {
        user: !root,
        pid: true,
        mount: true,
        net: true,
        ipc: true,
    };
    let mut flags =
        libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWIPC;
    if wanted.user {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: unshare takes flags by value; the child is single-threaded.
    let status = in_child(|| {
        if unsafe { libc::unshare(flags) } == 0 {
            0
        } else {
            io::Error::last_os_error().raw_os_error().unwrap_or(1) & 0x7f
        }
    })
    .map_err(|e| format!("probe failed: {e}"))?;
    if status == 0 {
        return Ok(wanted);
    }
    let restriction =
        std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
            .ok()
            .filter(|v| v.trim() == "1")
            .map(|_| " (AppArmor restricts unprivileged user namespaces)")
            .unwrap_or("");
    Err(format!(
        "cannot be made: unshare failed with {}{restriction}",
        io::Error::from_raw_os_error(status)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_versions_parse() {
        assert_eq!(parse_version("6.18.0-1-cloud-amd64"), (6, 18));
        assert_eq!(parse_version("5.10.0"), (5, 10));
        assert_eq!(parse_version("garbage"), (0, 0));
    }

    #[test]
    fn the_floor_table_names_every_feature_the_spec_lists() {
        let features: Vec<&str> = KERNEL_FLOORS.iter().map(|(f, _, _)| *f).collect();
        for needed in [
            "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP",
            "SECCOMP_ADDFD_FLAG_SEND",
            "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
            "cgroup.kill",
            "PIDFD_THREAD",
            "idmapped mounts",
        ] {
            assert!(features.contains(&needed), "{needed}");
        }
        assert_eq!(
            KERNEL_FLOORS
                .iter()
                .find(|(f, _, _)| *f == "cgroup.kill")
                .unwrap()
                .1,
            "5.14"
        );
    }
}

//! The session's resource limits (SPEC §3 "Limits"): a process-count limit, so that a fork
//! bomb hurts the sandbox and not the machine, and the size of the session's TMPDIR.
//!
//! Process count, the first of these that applies:
//! - the sandbox's own pid namespace with its own `kernel.pid_max` (Linux 6.14 keeps one
//!   per pid namespace): a pid below it is needed for every task, so at most `pid_max - 1`
//!   tasks exist in the sandbox at once. Costs nothing at start;
//! - a per-session cgroup with `pids.max` where one can be made (cgroup v2 with the pids
//!   controller delegated, or a cgroup v1 pids hierarchy we may write); the shim is moved
//!   into it before it forks, so every process of the sandbox is counted. The move waits
//!   for an RCU grace period (milliseconds), which the shim's own setup overlaps;
//! - else the target gets `RLIMIT_NPROC`, which counts the user's processes machine-wide
//!   and does not bind uid 0.
//!
//! The TMPDIR size is a tmpfs mounted by the shim in its mount namespace
//! ([`shim::mount_view`]).

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Default `--max-procs`.
pub const DEFAULT_MAX_PROCS: u64 = 4096;

/// Parses a size: bytes, or a number with K, M, G, T (powers of 1024; "KiB", "KB", "k"
/// spellings accepted).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("invalid size {text:?} (examples: 512M, 1G, 1048576)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("invalid size unit in {text:?} (use K, M, G or T)")),
    };
    let bytes = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size {text:?} is too large"))?;
    if bytes < 4096 {
        return Err(format!("size {text:?} is below the 4 KiB minimum"));
    }
    Ok(bytes)
}

/// Parses `--max-procs` (at least 1).
pub fn parse_max_procs(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "invalid process count {text:?} (a whole number ≥ 1)"
        )),
    }
}

/// Smallest `pid_max` the kernel accepts (`RESERVED_PIDS + 1`).
const PID_MAX_MIN: u64 = 301;

/// Largest `pid_max` the kernel accepts on 64-bit (`PID_MAX_LIMIT`).
const PID_MAX_LIMIT: u64 = 4 * 1024 * 1024;

/// The `pid_max` that holds a pid namespace of its own to `max` tasks, when the running
/// kernel keeps `pid_max` per pid namespace (Linux 6.14). `None` on older kernels — where
/// the same write would change the machine's limit, so it must never be made — and for a
/// `max` outside the range the kernel accepts (a `--max-procs` below 300 is a session
/// cgroup's job). The shim writes it as pid 1 of the namespace: the value belongs to the
/// writer's pid namespace, and a namespace nested below it is bounded by it too.
///
/// Pids are handed out in turn and, once they wrap, from 300 up: after more than
/// `max` tasks were made in one session the limit can be up to 299 lower, never higher.
pub fn pid_namespace_max(max: u64, kernel: (u32, u32)) -> Option<u64> {
    let pid_max = max.checked_add(1)?;
    (kernel >= (6, 14) && (PID_MAX_MIN..=PID_MAX_LIMIT).contains(&pid_max)).then_some(pid_max)
}

/// `major.minor` of a kernel release string ("6.18.0-1-amd64" → (6, 18)); (0, 0) when it
/// cannot be read, which no feature check accepts.
pub fn parse_kernel_version(release: &str) -> (u32, u32) {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty());
    let major = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor)
}

/// The running kernel's `major.minor`.
pub fn kernel_version() -> (u32, u32) {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|r| parse_kernel_version(&r))
        .unwrap_or((0, 0))
}

/// Session cgroups are named `fence-<fence pid>-<nanoseconds>`.
const SESSION_CGROUP_PREFIX: &str = "fence-";

/// Whether `name` (one component of a cgroup path) is a session cgroup's name: the
/// approval socket refuses peers inside one (gate/peer.rs).
pub fn is_session_cgroup_name(name: &str) -> bool {
    name.strip_prefix(SESSION_CGROUP_PREFIX)
        .and_then(|rest| rest.split_once('-'))
        .is_some_and(|(pid, nanos)| {
            !pid.is_empty()
                && !nanos.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && nanos.bytes().all(|b| b.is_ascii_digit())
        })
}

/// How a session's process count is limited (the module comment says which applies).
#[derive(Debug)]
pub enum ProcessLimit {
    /// `kernel.pid_max` of the sandbox's own pid namespace, set by the shim.
    PidNamespace(u64),
    /// A session cgroup's `pids.max`.
    Cgroup(SessionCgroup),
    /// `RLIMIT_NPROC` in the target.
    Rlimit,
}

impl ProcessLimit {
    pub fn cgroup(&self) -> Option<&SessionCgroup> {
        match self {
            ProcessLimit::Cgroup(cg) => Some(cg),
            _ => None,
        }
    }
}

/// A session's own pids cgroup; killed and removed when dropped.
#[derive(Debug)]
pub struct SessionCgroup {
    pub dir: PathBuf,
}

impl SessionCgroup {
    /// Creates a cgroup below the one fence runs in, with `pids.max = max`.
    pub fn create(max: u64) -> io::Result<SessionCgroup> {
        let mut last = io::Error::other("no pids cgroup hierarchy is mounted");
        for parent in candidate_parents()? {
            match Self::create_in(&parent, max) {
                Ok(cg) => return Ok(cg),
                Err(e) => last = io::Error::new(e.kind(), format!("{}: {e}", parent.display())),
            }
        }
        Err(last)
    }

    fn create_in(parent: &Path, max: u64) -> io::Result<SessionCgroup> {
        remove_stale(parent);
        // cgroup v2: the pids controller must be enabled for the children of `parent`.
        let subtree = parent.join("cgroup.subtree_control");
        if subtree.exists() {
            let enabled = std::fs::read_to_string(&subtree)?;
            if !enabled.split_whitespace().any(|c| c == "pids") {
                std::fs::write(&subtree, "+pids")?;
            }
        }
        let name = format!(
            "{SESSION_CGROUP_PREFIX}{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        );
        let dir = parent.join(name);
        std::fs::create_dir(&dir)?;
        let cg = SessionCgroup { dir };
        // From here on, Drop removes the directory if a step fails.
        std::fs::write(cg.dir.join("pids.max"), max.to_string())?;
        Ok(cg)
    }

    /// Moves `pid` (and the children it makes from then on) into the cgroup.
    pub fn add(&self, pid: libc::pid_t) -> io::Result<()> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
    }

    fn procs(&self) -> Vec<libc::pid_t> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

impl Drop for SessionCgroup {
    fn drop(&mut self) {
        let kill_file = self.dir.join("cgroup.kill");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if kill_file.exists() {
                let _ = std::fs::write(&kill_file, "1");
            } else {
                // cgroup v1: no cgroup.kill. pids.max stops the tree from growing, so
                // killing what is listed until the list is empty ends.
                for pid in self.procs() {
                    // SAFETY: kill has no memory preconditions.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
            if std::fs::remove_dir(&self.dir).is_ok() || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Removes the empty cgroups of earlier sessions whose fence is gone (one killed with
/// SIGKILL could not remove its own; the kernel emptied it when its pid namespace died).
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SESSION_CGROUP_PREFIX))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // rmdir fails on a cgroup that still has processes or children: nothing is lost.
        let _ = std::fs::remove_dir(entry.path());
    }
}

/// Directories in which a session cgroup may be made: for each mounted hierarchy carrying
/// the pids controller, the cgroup fence itself runs in; on cgroup v2 also its ancestors
/// (a cgroup with processes of its own cannot enable controllers for its children, but a
/// delegated ancestor such as systemd's `user@UID.service` may take the session's cgroup).
fn candidate_parents() -> io::Result<Vec<PathBuf>> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")?;
    let own = std::fs::read_to_string("/proc/self/cgroup")?;
    Ok(parents_from(&mountinfo, &own, &|mount_point| {
        std::fs::read_to_string(mount_point.join("cgroup.controllers")).unwrap_or_default()
    }))
}

/// [`candidate_parents`] from the text of `/proc/self/mountinfo` and `/proc/self/cgroup`;
/// `controllers` reads a cgroup2 mount's `cgroup.controllers`.
fn parents_from(mountinfo: &str, own: &str, controllers: &dyn Fn(&Path) -> String) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(root), Some(mount_point), Some(fstype), Some(options)) = (
            fields.get(3),
            fields.get(4),
            fields.get(sep + 1),
            fields.get(sep + 3),
        ) else {
            continue;
        };
        let mount_point = PathBuf::from(std::ffi::OsStr::from_bytes(
            &shim::mount_aliases::unescape(mount_point.as_bytes()),
        ));
        let own_path = match *fstype {
            "cgroup2" => {
                if !controllers(&mount_point)
                    .split_whitespace()
                    .any(|c| c == "pids")
                {
                    continue;
                }
                own.lines().find_map(|l| l.strip_prefix("0::"))
            }
            "cgroup" if options.split(',').any(|o| o == "pids") => own.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                controllers.split(',').any(|c| c == "pids").then_some(path)
            }),
            _ => continue,
        };
        let Some(own_path) = own_path else { continue };
        // The mount shows the hierarchy from `root`; our path is relative to the cgroup
        // namespace's root, which is that same root when they agree.
        let relative = if *root == "/" {
            own_path
        } else {
            own_path.strip_prefix(root).unwrap_or(own_path)
        };
        let own_dir = mount_point.join(relative.trim_start_matches('/'));
        if *fstype == "cgroup2" {
            out.extend(
                own_dir
                    .ancestors()
                    .take_while(|d| d.starts_with(&mount_point))
                    .map(Path::to_path_buf),
            );
        } else {
            out.push(own_dir);
        }
    }
    out
}

/// Raises fence's own soft limit of open files to its hard limit. Called once the
/// sandbox's init has been started, so the sandbox keeps the limit it was given (every
/// process of it descends from that init). The notification loop keeps descriptors per
/// calling thread (a pidfd, its cwd's folder, its memory: with the kept credentials' pidfds
/// up to ~900), beside those each carried-out call needs, where a soft limit of 1,024 is
/// common. fence waits with epoll and poll, never `select`, so any descriptor number works.
/// Best effort: at the old limit, descriptors are only kept for fewer threads.
pub fn raise_open_files() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read or write one rlimit through a valid pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_max_is_asked_only_of_kernels_that_keep_one_per_pid_namespace() {
        assert_eq!(pid_namespace_max(4096, (6, 14)), Some(4097));
        assert_eq!(pid_namespace_max(4096, (7, 0)), Some(4097));
        // Older kernels have one machine-wide pid_max: never written.
        assert_eq!(pid_namespace_max(4096, (6, 13)), None);
        assert_eq!(pid_namespace_max(4096, (5, 10)), None);
        assert_eq!(pid_namespace_max(4096, (0, 0)), None);
        // The kernel's range: 301 ..= 4 Mi.
        assert_eq!(pid_namespace_max(299, (6, 18)), None);
        assert_eq!(pid_namespace_max(300, (6, 18)), Some(301));
        assert_eq!(
            pid_namespace_max(4 * 1024 * 1024 - 1, (6, 18)),
            Some(4 * 1024 * 1024)
        );
        assert_eq!(pid_namespace_max(4 * 1024 * 1024, (6, 18)), None);
        assert_eq!(pid_namespace_max(u64::MAX, (6, 18)), None);
    }

    #[test]
    fn kernel_versions_parse() {
        assert_eq!(parse_kernel_version("6.18.0-1-cloud-amd64\n"), (6, 18));
        assert_eq!(parse_kernel_version("6.14"), (6, 14));
        assert_eq!(parse_kernel_version("garbage"), (0, 0));
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("65536"), Ok(65536));
        assert!(parse_size("1X").is_err());
        assert!(parse_size("12").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_max_procs("0").is_err());
        assert_eq!(parse_max_procs("64"), Ok(64));
    }

    const HYBRID: &str = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755
35 30 0:31 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw
40 30 0:36 / /sys/fs/cgroup/pids rw,nosuid shared:18 - cgroup cgroup rw,pids
41 30 0:37 / /sys/fs/cgroup/memory rw,nosuid shared:19 - cgroup cgroup rw,memory
";

    #[test]
    fn cgroup_v1_pids_hierarchy_is_found() {
        let own = "8:pids:/user.slice/session-1.scope\n4:memory:/x\n0::/user.slice\n";
        let parents = parents_from(HYBRID, own, &|_| String::new());
        assert_eq!(
            parents,
            vec![PathBuf::from(
                "/sys/fs/cgroup/pids/user.slice/session-1.scope"
            )]
        );
    }

    #[test]
    fn cgroup_v2_with_pids_offers_ancestors_up_to_the_mount() {
        let mountinfo = "35 25 0:31 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
        let own = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/a.scope\n";
        let parents = parents_from(mountinfo, own, &|_| "cpu io memory pids".into());
        assert_eq!(parents.len(), 6);
        assert_eq!(
            parents[0],
            PathBuf::from(
                "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/a.scope"
            )
        );
        assert_eq!(
            parents[2],
            PathBuf::from("/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service")
        );
        assert_eq!(parents[5], PathBuf::from("/sys/fs/cgroup"));
        // Without the pids controller the hierarchy is no use.
        assert!(parents_from(mountinfo, own, &|_| "cpu memory".into()).is_empty());
    }

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(shim::mount_aliases::unescape(br"/a\040b"), b"/a b");
    }
}

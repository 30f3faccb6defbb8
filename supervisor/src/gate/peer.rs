//! Who may talk to a session's approval socket: a process of our own user (or root) that
//! is not inside any fence sandbox. Checked on every accepted connection, before a byte is
//! sent. Security boundary, the second wall: the first is that no sandbox can reach the
//! socket at all (its directory is outside every sandbox's writable roots, and `fence
//! run` performs each unix `connect` itself and refuses pathname sockets outside the
//! worktree: run/net_check.rs).
//!
//! A process is inside a fence sandbox when any of these holds:
//! - its pid namespace is not ours (`fence run` gives each sandbox its own);
//! - it is in a session cgroup (`fence-<pid>-<ns>`, run/limits.rs), which a sandboxed
//!   process cannot leave;
//! - one of its ancestors is a fence shim (named `fence-shim`, or executed as `fence
//!   __shim`: run/spawn.rs): the shim is the
//!   sandbox's first process and a child subreaper, so orphans of the sandbox are
//!   re-parented to it and never escape this walk;
//! - it is (or descends from) a `fence run` supervisor: fence performs every `connect` of
//!   its sandbox itself (run/net_check.rs), so a sandbox allowed to reach the socket
//!   (the directory given with `--allow-write`) shows up with its supervisor's pid.
//!
//! - checking a client: it holds a seccomp notification listener, as every sandbox
//!   supervisor does (fence's under any name or build, and other tools'): such a process
//!   may connect on behalf of its sandbox.
//!
//! Each test alone covers a mode of `fence run`: the pid namespace when namespaces can be
//! made, the cgroup when one can be made, the ancestry always.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `SO_PEERPIDFD` (Linux 6.5; asm-generic value): a pidfd for the peer that connected.
const SO_PEERPIDFD: libc::c_int = 77;
/// argv of the shim (run/spawn.rs starts `/proc/self/exe` as `fence __shim`).
const SHIM_ARGV: [&[u8]; 2] = [b"fence", b"__shim"];
/// Longest ancestry walked; a deeper chain is refused.
const MAX_DEPTH: usize = 4096;

/// The peer's credentials as the kernel recorded them at `connect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCredentials {
    pub pid: libc::pid_t,
    pub uid: libc::uid_t,
}

/// Reads SO_PEERCRED of a connected unix socket.
pub fn credentials(fd: RawFd) -> io::Result<PeerCredentials> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, a valid ucred.
    let ret = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(PeerCredentials {
        pid: cred.pid,
        uid: cred.uid,
    })
}

/// A pidfd for the process that connected (None on kernels before 6.5).
fn peer_pidfd(fd: RawFd) -> Option<OwnedFd> {
    let mut pidfd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `pidfd`, a valid int.
    let ret = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            &mut pidfd as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    // SAFETY: on success the kernel returned a fresh descriptor, owned from here on.
    (ret == 0 && pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) })
}

/// Whether the process behind `pidfd` is still alive (so its pid was not reused).
fn pidfd_alive(pidfd: &OwnedFd) -> bool {
    // SAFETY: pidfd_send_signal with signal 0 only checks; all arguments by value.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    ret == 0
}

/// Which end of the connection is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The session checks a client: nothing of a sandbox, nor a session supervisor
    /// (which connects only on its sandbox's behalf).
    Client,
    /// A client checks the session it reached: nothing of a sandbox (a sandbox allowed to
    /// write in the socket directory could replace a socket with its own listener); the
    /// session supervisor itself is expected.
    Session,
}

/// Checks the peer of the connected socket `fd`; `Err` says why it is refused. Returns
/// the peer's pid.
pub fn check(fd: RawFd, role: Role) -> Result<libc::pid_t, String> {
    let cred = credentials(fd).map_err(|e| format!("cannot read the peer's credentials: {e}"))?;
    // Taken before /proc is read: if the peer is still alive after the reads, its pid
    // was not reused in between and the reads were of the peer.
    let pidfd = peer_pidfd(fd);
    // SAFETY: geteuid has no preconditions.
    let own_uid = unsafe { libc::geteuid() };
    if cred.uid != own_uid && cred.uid != 0 {
        return Err(format!(
            "peer runs as uid {}, we run as uid {own_uid}",
            cred.uid
        ));
    }
    check_process(cred.pid, Path::new("/proc"), role)?;
    if let Some(pidfd) = pidfd
        && !pidfd_alive(&pidfd)
    {
        return Err(format!("peer process {} is gone", cred.pid));
    }
    Ok(cred.pid)
}

/// The sandbox-membership tests on process `pid`, reading the proc filesystem at `proc`.
fn check_process(pid: libc::pid_t, proc: &Path, role: Role) -> Result<(), String> {
    if pid <= 0 {
        return Err("the peer's pid is not visible here: it runs in another pid namespace".into());
    }
    let ours = std::fs::read_link(proc.join("self/ns/pid"))
        .map_err(|e| format!("cannot read our own pid namespace: {e}"))?;
    let theirs = std::fs::read_link(proc.join(format!("{pid}/ns/pid")))
        .map_err(|e| format!("cannot read the pid namespace of peer process {pid}: {e}"))?;
    if ours != theirs {
        return Err(format!(
            "peer process {pid} runs in another pid namespace (a fence sandbox has its own)"
        ));
    }
    let cgroups = std::fs::read_to_string(proc.join(format!("{pid}/cgroup")))
        .map_err(|e| format!("cannot read the cgroups of peer process {pid}: {e}"))?;
    if let Some(path) = session_cgroup(&cgroups) {
        return Err(format!(
            "peer process {pid} is in the fence session cgroup {path}"
        ));
    }
    if role == Role::Client && holds_notify_listener(pid, proc)? {
        return Err(format!(
            "peer process {pid} supervises a sandbox (it holds a seccomp notification \
             listener): it performs the connections of its sandbox"
        ));
    }
    // An ancestor that exits during the walk re-parents its children: walk again.
    let mut last = String::new();
    for _ in 0..3 {
        match shim_ancestor(pid, proc, role) {
            Ok(None) => return Ok(()),
            Ok(Some((fence, what))) => {
                return Err(format!(
                    "peer process {pid} is or descends from fence process {fence} ({what})"
                ));
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The first session cgroup path in the text of `/proc/PID/cgroup`.
fn session_cgroup(text: &str) -> Option<&str> {
    text.lines()
        .filter_map(|l| l.splitn(3, ':').nth(2))
        .find(|path| {
            path.split('/')
                .any(crate::run::limits::is_session_cgroup_name)
        })
}

/// The pid of the first fence shim (or, checking a client, `fence run` supervisor) among
/// `pid` and its ancestors.
fn shim_ancestor(
    pid: libc::pid_t,
    proc: &Path,
    role: Role,
) -> Result<Option<(libc::pid_t, &'static str)>, String> {
    let mut current = pid;
    for _ in 0..MAX_DEPTH {
        if current <= 0 {
            return Ok(None);
        }
        let cmdline = std::fs::read(proc.join(format!("{current}/cmdline")))
            .map_err(|e| format!("cannot read the ancestry of peer process {pid}: {e}"))?;
        // A process gone since its child's stat was read has no name: the walk goes on to
        // its stat, which fails.
        let comm = std::fs::read(proc.join(format!("{current}/comm"))).unwrap_or_default();
        if is_shim(&cmdline) || comm.strip_suffix(b"\n") == Some(shim::SHIM_NAME.to_bytes()) {
            return Ok(Some((current, "the first process of a sandbox")));
        }
        if role == Role::Client && is_fence_run(&cmdline, current, proc) {
            return Ok(Some((
                current,
                "a session supervisor: it performs the connections of its sandbox",
            )));
        }
        if current == 1 {
            return Ok(None);
        }
        let stat = std::fs::read_to_string(proc.join(format!("{current}/stat")))
            .map_err(|e| format!("cannot read the ancestry of peer process {pid}: {e}"))?;
        current = parent_pid(&stat).ok_or_else(|| format!("cannot parse /proc/{current}/stat"))?;
    }
    Err(format!("the ancestry of peer process {pid} is too deep"))
}

/// Whether process `pid` holds a seccomp user-notification listener: it then answers for
/// a sandbox, and a connection it makes may be one it performs for that sandbox (a
/// supervisor built or installed under another name is recognised too). Unreadable
/// descriptors are an error: the peer is refused.
fn holds_notify_listener(pid: libc::pid_t, proc: &Path) -> Result<bool, String> {
    let dir = proc.join(format!("{pid}/fd"));
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read the descriptors of peer process {pid}: {e}"))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| format!("cannot read the descriptors of peer process {pid}: {e}"))?;
        // A descriptor closed since the listing is no listener.
        if let Ok(target) = std::fs::read_link(entry.path())
            && target.as_os_str().as_bytes() == b"anon_inode:seccomp notify"
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A `fence run` supervisor: the subcommand `run` of a program named `fence` or of the
/// very binary we are.
fn is_fence_run(cmdline: &[u8], pid: libc::pid_t, proc: &Path) -> bool {
    let mut args = cmdline.split(|&b| b == 0);
    let (Some(program), Some(b"run")) = (args.next(), args.next()) else {
        return false;
    };
    let named_fence = program.rsplit(|&b| b == b'/').next() == Some(b"fence");
    named_fence || same_file(&proc.join(format!("{pid}/exe")), &proc.join("self/exe"))
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn is_shim(cmdline: &[u8]) -> bool {
    let mut args = cmdline.split(|&b| b == 0);
    args.next() == Some(SHIM_ARGV[0]) && args.next() == Some(SHIM_ARGV[1])
}

/// The ppid field of `/proc/PID/stat` (after the parenthesised name, which may itself
/// hold parentheses and spaces).
fn parent_pid(stat: &str) -> Option<libc::pid_t> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_parent_is_read_after_the_name() {
        assert_eq!(parent_pid("42 (a) b) c) S 17 42 42 0"), Some(17));
        assert_eq!(parent_pid("1 (init) S 0 1 1"), Some(0));
        assert_eq!(parent_pid("garbage"), None);
    }

    #[test]
    fn shim_is_recognised_by_its_argv() {
        assert!(is_shim(b"fence\0__shim\0"));
        assert!(!is_shim(b"fence\0run\0--\0__shim\0"));
        assert!(!is_shim(b"/usr/bin/fence\0approvals\0"));
        assert!(!is_shim(b""));
    }

    #[test]
    fn fence_run_is_recognised_by_its_argv() {
        let proc = Path::new("/proc");
        assert!(is_fence_run(b"fence\0run\0--\0sh\0", 1, proc));
        assert!(is_fence_run(
            b"/usr/local/bin/fence\0run\0--\0sh\0",
            1,
            proc
        ));
        assert!(!is_fence_run(b"fence\0approvals\0", 1, proc));
        assert!(!is_fence_run(b"/usr/bin/refence\0run\0", 1, proc));
    }

    #[test]
    fn session_cgroups_are_found_in_any_hierarchy() {
        let v2 = "0::/user.slice/fence-1234-567890/sub\n";
        assert_eq!(
            session_cgroup(v2),
            Some("/user.slice/fence-1234-567890/sub")
        );
        let v1 = "12:pids:/fence-9-1\n11:memory:/user.slice\n";
        assert_eq!(session_cgroup(v1), Some("/fence-9-1"));
        assert_eq!(session_cgroup("0::/user.slice/fence-tests.scope\n"), None);
        assert_eq!(session_cgroup("0::/\n"), None);
    }

    #[test]
    fn this_process_is_an_acceptable_peer() {
        // The test runner is outside every sandbox: all three tests pass on it.
        for role in [Role::Client, Role::Session] {
            check_process(std::process::id() as libc::pid_t, Path::new("/proc"), role).unwrap();
        }
    }

    #[test]
    fn a_pid_from_another_namespace_is_refused() {
        let err = check_process(0, Path::new("/proc"), Role::Session).unwrap_err();
        assert!(err.contains("another pid namespace"), "{err}");
    }

    #[test]
    fn a_child_of_a_process_named_like_the_shim_is_refused() {
        // `exec -a fence /usr/bin/python3 __shim` gives the interpreter the shim's argv; the
        // `sleep` it starts is then a descendant of a "shim". (A process pretending to be
        // a shim only gets its own descendants refused.)
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("__shim"),
            "import subprocess\np = subprocess.Popen(['sleep', '30'])\n\
             open('pid.tmp', 'w').write(str(p.pid))\n\
             import os\nos.rename('pid.tmp', 'pid')\np.wait()\n",
        )
        .unwrap();
        let mut shim = std::process::Command::new("bash")
            .args(["-c", "exec -a fence /usr/bin/python3 __shim"])
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let child = loop {
            if let Ok(text) = std::fs::read_to_string(dir.path().join("pid")) {
                break text.trim().parse::<libc::pid_t>().unwrap();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the child never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let verdict = check_process(child, Path::new("/proc"), Role::Session);
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(child, libc::SIGKILL) };
        let _ = shim.kill();
        let _ = shim.wait();
        let err = verdict.unwrap_err();
        assert!(
            err.contains(&format!(
                "descends from fence process {} (the first process of a sandbox)",
                shim.id()
            )),
            "{err}"
        );
    }

    /// A sandbox supervisor under any name (a copy of fence, another tool) holds a seccomp
    /// notification listener: as a client it is refused, for it may be connecting for
    /// its sandbox.
    #[test]
    fn a_process_holding_a_notification_listener_is_refused_as_a_client() {
        let dir = tempfile::tempdir().unwrap();
        // A filter that lets every call through, installed with a listener, which the
        // process keeps; then its pid is written.
        let script = r#"
import ctypes, os, struct, time
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
buf = ctypes.create_string_buffer(struct.pack('HBBI', 0x06, 0, 0, 0x7fff0000))
class Prog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
prog = Prog(1, ctypes.addressof(buf))
fd = libc.syscall(317, 1, 8, ctypes.byref(prog))
assert fd >= 0, ctypes.get_errno()
open('pid.tmp', 'w').write(str(os.getpid()))
os.rename('pid.tmp', 'pid')
time.sleep(30)
"#;
        let mut holder = std::process::Command::new("/usr/bin/python3")
            .args(["-c", script])
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let pid = loop {
            if let Ok(text) = std::fs::read_to_string(dir.path().join("pid")) {
                break text.trim().parse::<libc::pid_t>().unwrap();
            }
            assert!(
                holder.try_wait().unwrap().is_none(),
                "the listener's holder failed"
            );
            assert!(std::time::Instant::now() < deadline, "it never started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let proc = Path::new("/proc");
        let holds = holds_notify_listener(pid, proc);
        let as_client = check_process(pid, proc, Role::Client);
        let _ = holder.kill();
        let _ = holder.wait();
        assert_eq!(holds, Ok(true));
        let err = as_client.unwrap_err();
        assert!(err.contains("supervises a sandbox"), "{err}");
        // This test process holds none.
        assert_eq!(
            holds_notify_listener(std::process::id() as libc::pid_t, proc),
            Ok(false)
        );
    }

    /// The pid of the first child of `parent` (from /proc), waiting up to ten seconds. A
    /// child belongs to the thread that made it: fence clones a shim it starts again on
    /// whichever thread restarts it, so every thread's list is read.
    fn child_of(parent: u32) -> libc::pid_t {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let children: String = std::fs::read_dir(format!("/proc/{parent}/task"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
                .collect::<Vec<_>>()
                .join(" ");
            if let Some(pid) = children.split_whitespace().next() {
                return pid.parse().unwrap();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{parent} has no child"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// A real sandboxed process (the `sleep` of `fence run -- sleep 30`, found from
    /// outside) is refused: with namespaces by its pid namespace, without them
    /// (FENCE_NO_NAMESPACES=1) by its session cgroup; and the ancestry walk alone finds
    /// its shim either way.
    #[test]
    fn processes_of_a_real_sandbox_are_refused() {
        if !crate::gate::test_support::sandbox_available("processes_of_a_real_sandbox_are_refused")
        {
            return;
        }
        let fence = crate::gate::test_support::built_fence();
        let worktree = tempfile::tempdir().unwrap();
        for no_namespaces in [false, true] {
            let mut run = std::process::Command::new(&fence);
            run.arg("run")
                .arg("--worktree")
                .arg(worktree.path())
                .args(["--", "/bin/sleep", "30"])
                .stderr(std::process::Stdio::null());
            if no_namespaces {
                run.env("FENCE_NO_NAMESPACES", "1");
            }
            let mut supervisor = run.spawn().unwrap();
            let shim = child_of(supervisor.id());
            let target = child_of(shim as u32);
            // Past the shim's fork: the target runs sleep once its cmdline says so.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !std::fs::read(format!("/proc/{target}/cmdline"))
                .is_ok_and(|c| c.starts_with(b"/bin/sleep"))
            {
                assert!(std::time::Instant::now() < deadline, "the target never ran");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let verdict = check_process(target, Path::new("/proc"), Role::Session);
            let ancestry = shim_ancestor(target, Path::new("/proc"), Role::Session);
            // The supervisor is a fine session and no client.
            let as_session = check_process(
                supervisor.id() as libc::pid_t,
                Path::new("/proc"),
                Role::Session,
            );
            let as_client = check_process(
                supervisor.id() as libc::pid_t,
                Path::new("/proc"),
                Role::Client,
            );
            let _ = supervisor.kill();
            let _ = supervisor.wait();
            let err = verdict.unwrap_err();
            if no_namespaces {
                assert!(
                    err.contains("session cgroup") || err.contains("first process of a sandbox"),
                    "{err}"
                );
            } else {
                assert!(err.contains("another pid namespace"), "{err}");
            }
            assert_eq!(ancestry.unwrap().map(|(pid, _)| pid), Some(shim), "{err}");
            as_session.unwrap();
            let err = as_client.unwrap_err();
            assert!(err.contains("supervises a sandbox"), "{err}");
        }
    }
}

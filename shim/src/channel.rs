//! The one channel between the supervisor and the shim: length-prefixed JSON messages over
//! a `SOCK_STREAM` unix socketpair, with a descriptor attached by `SCM_RIGHTS` where a
//! message carries one (the seccomp listener).

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Descriptor number under which the shim finds its end of the channel after exec.
pub const SHIM_CHANNEL_FD: RawFd = 3;

/// Largest message accepted, so a corrupt length cannot make the reader allocate wildly.
const MAX_MESSAGE: usize = 16 << 20;

/// Namespaces the supervisor created for the sandbox (the shim is their first process).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Namespaces {
    pub user: bool,
    pub pid: bool,
    pub mount: bool,
    pub net: bool,
    /// An IPC namespace: System V IPC objects and POSIX message queues of its own.
    #[serde(default)]
    pub ipc: bool,
}

/// Everything the shim needs to confine the target and exec it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SandboxSpec {
    /// Program and arguments, exactly as given after `--`.
    pub argv: Vec<OsString>,
    /// The complete environment of the target (already scrubbed by the supervisor).
    pub env: Vec<(OsString, OsString)>,
    /// Working directory of the target.
    pub cwd: OsString,
    /// The worktree (canonical path).
    pub worktree: OsString,
    /// The session's private temporary directory (canonical path).
    pub tmpdir: OsString,
    /// Further writable paths (`--allow-write`, canonical).
    pub allow_write: Vec<OsString>,
    /// Paths that must be unreadable (canonical, existing ones only).
    pub deny_read: Vec<OsString>,
    /// Paths that must be unreadable but do not exist at start (their nearest existing
    /// ancestor canonical): nothing can be mounted over them, so Landlock leaves them out
    /// of its read grants in every mode, and one made later (a login during the session)
    /// stays unreadable.
    #[serde(default)]
    pub deny_read_missing: Vec<OsString>,
    /// The folders holding a symbolic link met on the way to an unreadable path: frozen by
    /// the mount view too, so that a link re-pointed there during the session does not
    /// lead the same name to a new object.
    #[serde(default)]
    pub deny_read_via: Vec<OsString>,
    /// The home directories whose secrets are hidden (canonical): the mount view freezes
    /// the folders from a secret's up to its home.
    #[serde(default)]
    pub homes: Vec<OsString>,
    /// The terminal the session runs on (`/dev/pts/N`), writable when present.
    pub session_tty: Option<OsString>,
    pub namespaces: Namespaces,
    /// The caller's own uid and gid. With a user namespace (whose root the shim is), the
    /// target enters a nested one that maps them back, so it runs under its real ids.
    pub uid: u32,
    pub gid: u32,
    /// Run with what the kernel offers even if it is weaker than the policy.
    pub allow_degraded: bool,
    /// `RLIMIT_NPROC` for the target, when no cgroup limits the sandbox's process count.
    #[serde(default)]
    pub nproc_limit: Option<u64>,
    /// `kernel.pid_max` of the sandbox's pid namespace (Linux 6.14 keeps one per
    /// namespace), set by the shim as its pid 1: the process-count limit without a cgroup.
    #[serde(default)]
    pub pid_max: Option<u64>,
    /// Size in bytes of the tmpfs mounted on `tmpdir` (with a mount namespace).
    #[serde(default)]
    pub tmp_size: Option<u64>,
    /// Highest Landlock ABI to use (`FENCE_LANDLOCK_ABI_MAX`, a testing knob): it can only
    /// lower the ABI, and what the lower ABI lacks is compensated or refused as on a kernel
    /// that has only that ABI.
    #[serde(default)]
    pub landlock_abi_max: Option<i32>,
    /// `--read-only-worktree`: the worktree is not writable (TMPDIR and devices stay so).
    #[serde(default)]
    pub read_only_worktree: bool,
    /// `--no-write-watch`: the writes Landlock bounds are not notified (metadata calls and
    /// `truncate` still are).
    #[serde(default)]
    pub no_write_watch: bool,
    /// The target runs under SCHED_BATCH (`--normal-scheduling` turns it off).
    #[serde(default)]
    pub batch_scheduling: bool,
    /// `--pass-fd`: descriptors that stay open in the target.
    #[serde(default)]
    pub pass_fds: Vec<PassFd>,
    /// The session cgroup's `cgroup.kill`, written by the init when fence dies without a
    /// pid namespace to take the sandbox with it.
    #[serde(default)]
    pub cgroup_kill: Option<OsString>,
    /// `--allow-dns`: inet datagram sockets are notified (the supervisor answers with a
    /// stand-in that reaches only its DNS relay), as are `bind` and addressed `recvfrom`.
    #[serde(default)]
    pub allow_dns: bool,
    /// Protected paths outside the worktree (a profile's own settings files inside the
    /// folder it makes writable; absolute, resolved): read-only binds in a mount namespace.
    #[serde(default)]
    pub protected: Vec<OsString>,
    /// Other folders whose paths are protected as the worktree's are (the worktree's rules,
    /// relative to each): the `--allow-write` folders outside the worktree (the folder
    /// above one named `.git`), and without a mount namespace `/dev/shm` (absolute,
    /// resolved).
    #[serde(default)]
    pub rule_bases: Vec<OsString>,
    /// Empty folders the supervisor made in the worktree's spare home (`.git/fence`), to be
    /// granted whole by the sandbox's ruleset and handed out as new folders of the
    /// worktree's root (the supervisor's `spare_folders`). Only with a mount view.
    #[serde(default)]
    pub spare_pool: Option<SparePool>,
    /// With a mount namespace: `/tmp` is the session TMPDIR's tmpfs, bound there (SPEC §2:
    /// "a private /tmp too where a mount namespace can be made"), writable as the TMPDIR
    /// is. Set by the supervisor only when nothing the session needs lies under `/tmp`.
    #[serde(default)]
    pub private_tmp: bool,
    /// Set by the shim's init once its mount view keeps every secret path unreadable by
    /// itself (empty mounts, frozen listings, a minimal `/dev`): Landlock then governs
    /// writes only. Never sent: the supervisor cannot vouch for the mounts.
    #[serde(skip)]
    pub reads_by_mounts: bool,
    /// Set by the shim's init when its `/dev/pts` is a devpts of the sandbox's own (the
    /// session's terminal is then at `/dev/console`). Never sent.
    #[serde(skip)]
    pub private_pts: bool,
}

/// The folder holding the spare folders, as the supervisor made it, and their names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SparePool {
    pub path: OsString,
    pub dev: u64,
    pub ino: u64,
    pub names: Vec<OsString>,
}

/// A spare folder the sandbox's ruleset grants whole: its name in the pool and the
/// identity of the directory the rule was attached to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpareDir {
    pub name: OsString,
    pub dev: u64,
    pub ino: u64,
}

/// A descriptor passed to the target with `--pass-fd`: the shim inherits it as `inherited`
/// (moved when its number collides with the channel's) and the target gets it as `target`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct PassFd {
    pub target: RawFd,
    pub inherited: RawFd,
}

/// Messages from the supervisor to the shim.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToShim {
    /// What to build and run; the shim prepares its namespaces on receipt. The descriptor
    /// attached, if any, is the user namespace a root session's `/etc` is shown through
    /// (`mount_view::shift_root_owner`).
    Start(Box<SandboxSpec>),
    /// The shim is where it must be (in the session cgroup, when there is one): it may
    /// fork the target. Nothing is forked before it, so that no process of the sandbox
    /// escapes the process-count limit.
    Proceed,
}

/// A directory the sandbox's ruleset grants whole, as the rule was attached: the path
/// it was opened at and the directory's device and inode numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundedDir {
    pub path: OsString,
    pub dev: u64,
    pub ino: u64,
}

/// Messages from the shim to the supervisor.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum FromShim {
    /// The target is confined; the seccomp listener is attached (when there is one). The
    /// next thing the target does is `execve`.
    Confined {
        /// The Landlock ABI the ruleset was built for (the kernel's, or lower when capped).
        landlock_abi: i32,
        /// What fence does instead of what that ABI lacks (a few words each).
        #[serde(default)]
        compensations: Vec<String>,
        /// What runs weaker than the policy (only with `--allow-degraded`).
        degraded: Vec<String>,
        /// Whether a listener descriptor is attached.
        listener: bool,
        /// Inet sockets are allowed without a network namespace (Landlock refuses the
        /// target's own TCP binds and connects): `bind` and `listen` are notified, and the
        /// supervisor keeps the table of loopback sockets the sandbox bound (SPEC §4).
        #[serde(default)]
        loopback_table: bool,
        /// The directories where Landlock alone bounds the names the sandbox makes
        /// ([`crate::landlock_fence::FencePlan::bounded`]), each with the identity of the
        /// directory its rule was attached to; empty without a ruleset.
        #[serde(default)]
        bounded: Vec<BoundedDir>,
        /// The ruleset governs truncation: `truncate(2)` inside the fence may go to the
        /// kernel. Otherwise (below ABI 3, or a ruleset for writes only) the supervisor
        /// performs it on the object it checked.
        #[serde(default)]
        truncate_by_landlock: bool,
    },
    /// The spare folders the ruleset grants whole, sent just before `Confined` with the
    /// pool folder attached, opened through the worktree's own mount in the sandbox's view
    /// (a rename out of it must stay on one mount).
    SpareFolders { spares: Vec<SpareDir> },
    /// The shim has started, and made the network namespace it was asked to make (its
    /// first message). A namespace it could not make comes as `SetupFailed` with the stage
    /// [`NET_STAGE`] instead, after which the supervisor starts a shim without one.
    Ready,
    /// The shim set the pid namespace's `pid_max` (sent only when the spec asked for it),
    /// before it forked anything; a failure to set it comes as `SetupFailed` with the stage
    /// [`PID_MAX_STAGE`], after which the supervisor starts a new shim with another limit.
    PidMaxSet,
    /// Every process of the sandbox has been stopped (`SIGSTOP`), as the supervisor asked
    /// with `SIGTSTP` (the terminal's Ctrl-Z): the supervisor may now stop itself, and the
    /// user's shell show its prompt, with nothing of the sandbox left running.
    Stopped,
    /// A confinement step failed; nothing was executed.
    SetupFailed {
        stage: String,
        message: String,
        exit_code: i32,
    },
    /// The target's program could not be executed.
    ExecFailed {
        program: OsString,
        message: String,
        exit_code: i32,
    },
    /// The target has exited and every other process of the sandbox has been killed and
    /// reaped: nothing the sandbox ran is left. `status` is the shim's own exit status
    /// (the target's, 128+N for a signal). Sent by the init just before it exits, so that
    /// the supervisor need not wait for the kernel to tear its namespaces down. `left` is
    /// how many processes were still running when the target exited (killed then).
    Exited {
        status: i32,
        #[serde(default)]
        left: u32,
    },
}

/// The `SetupFailed` stage of a `pid_max` that could not be set (a read-only `/proc/sys`,
/// a security module): the session falls back to a cgroup or `RLIMIT_NPROC`.
pub const PID_MAX_STAGE: &str = "pid_max";

/// The signal by which the supervisor asks the init to stop every process of the sandbox
/// (then it answers [`FromShim::Stopped`]): a real-time signal, which queues and which no
/// terminal sends. The terminal's own `SIGTSTP` also reaches an init in the terminal's
/// process group, and one standard signal pending merges with the next: the init could
/// not tell the supervisor's request from the terminal's.
pub fn stop_sandbox_signal() -> libc::c_int {
    libc::SIGRTMAX() - 1
}

/// The `SetupFailed` stage of a network namespace the shim could not make: the session
/// starts again without one.
pub const NET_STAGE: &str = "network namespace";

/// The shim's name (`/proc/PID/comm`), set first thing whether it was executed as
/// `fence __shim` or is a copy of the supervisor (whose command line it keeps): the gate's
/// peer check knows a sandbox's first process by it. A sandboxed process cannot rename its
/// ancestors; one that names itself so only gets its own descendants refused.
pub const SHIM_NAME: &std::ffi::CStr = c"fence-shim";

/// The argument of `fence __shim` that asks the shim to make the sandbox's network
/// namespace itself, first thing after its exec: made by the clone, it was most of that
/// call's time, which the supervisor waited out; made here, it overlaps the supervisor's
/// preparation of the spec.
pub const UNSHARE_NET_ARG: &str = "--unshare-net";

#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    #[error("channel I/O failed: {0}")]
    Io(#[from] io::Error),
    #[error("channel message could not be encoded or decoded: {0}")]
    Codec(#[from] serde_json::Error),
    #[error("channel message of {0} bytes exceeds the limit")]
    TooLarge(usize),
}

/// One end of the supervisor–shim channel.
#[derive(Debug)]
pub struct Channel {
    stream: UnixStream,
}

impl Channel {
    /// A connected pair, both ends close-on-exec.
    pub fn pair() -> io::Result<(Channel, Channel)> {
        let (a, b) = UnixStream::pair()?;
        Ok((Channel { stream: a }, Channel { stream: b }))
    }

    /// Takes ownership of an inherited descriptor (the shim's end after exec).
    pub fn from_owned_fd(fd: OwnedFd) -> Channel {
        Channel {
            stream: UnixStream::from(fd),
        }
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }

    /// Sends one message, with `fd` attached to its first byte when given.
    pub fn send<T: Serialize>(
        &self,
        msg: &T,
        fd: Option<BorrowedFd<'_>>,
    ) -> Result<(), ChannelError> {
        let body = serde_json::to_vec(msg)?;
        if body.len() > MAX_MESSAGE {
            return Err(ChannelError::TooLarge(body.len()));
        }
        let mut frame = Vec::with_capacity(body.len() + 4);
        frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
        frame.extend_from_slice(&body);
        let sent = match fd {
            Some(fd) => send_with_fd(self.stream.as_raw_fd(), &frame, fd.as_raw_fd())?,
            None => 0,
        };
        (&self.stream).write_all(&frame[sent..])?;
        Ok(())
    }

    /// Receives one message and the descriptor attached to it, if any. `Ok(None)` at
    /// end of stream.
    pub fn recv<T: DeserializeOwned>(&self) -> Result<Option<(T, Option<OwnedFd>)>, ChannelError> {
        let mut header = [0u8; 4];
        let (got, fd) = recv_with_fd(self.stream.as_raw_fd(), &mut header)?;
        if got == 0 {
            return Ok(None);
        }
        if got < header.len() {
            (&self.stream).read_exact(&mut header[got..])?;
        }
        let len = u32::from_le_bytes(header) as usize;
        if len > MAX_MESSAGE {
            return Err(ChannelError::TooLarge(len));
        }
        let mut body = vec![0u8; len];
        (&self.stream).read_exact(&mut body)?;
        Ok(Some((serde_json::from_slice(&body)?, fd)))
    }
}

/// `sendmsg` of `buf` with one `SCM_RIGHTS` descriptor; returns the bytes sent.
fn send_with_fd(sock: RawFd, buf: &[u8], fd: RawFd) -> io::Result<usize> {
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    let mut iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain data; zero is a valid starting value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = space;
    // SAFETY: msg_control points at a buffer of CMSG_SPACE(sizeof fd) bytes, so the first
    // header and its data fit; every pointer in `msg` outlives the sendmsg call.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut RawFd, fd);
    }
    loop {
        // SAFETY: see above; MSG_NOSIGNAL turns a closed peer into EPIPE, not SIGPIPE.
        let n = unsafe { libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// `recvmsg` into `buf`, taking ownership of a `SCM_RIGHTS` descriptor if one came along.
fn recv_with_fd(sock: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<OwnedFd>)> {
    // Room for a few descriptors, so a peer that sends more cannot make us drop the message;
    // extra ones are closed.
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE((4 * std::mem::size_of::<RawFd>()) as u32) } as usize;
    let mut control = vec![0u8; space];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain data; zero is a valid starting value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = space;
    let n = loop {
        // SAFETY: every pointer in `msg` is valid for the call; MSG_CMSG_CLOEXEC keeps a
        // received descriptor from leaking into anything we exec.
        let n = unsafe { libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    };
    let mut received = None;
    // SAFETY: the kernel filled `control` and set msg_controllen; CMSG_FIRSTHDR/NXTHDR
    // walk only within it, and SCM_RIGHTS data is an array of ints.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg) as *const RawFd;
                let header = libc::CMSG_LEN(0) as usize;
                let count = ((*cmsg).cmsg_len as usize - header) / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    let fd = OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i)));
                    if received.is_none() {
                        received = Some(fd);
                    }
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(io::Error::other("descriptor control message truncated"));
    }
    Ok((n, received))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_and_descriptor_cross_the_channel() {
        let (a, b) = Channel::pair().unwrap();
        let file = std::fs::File::open("/dev/null").unwrap();
        let msg = FromShim::Confined {
            landlock_abi: 7,
            compensations: vec![],
            degraded: vec![],
            listener: true,
            loopback_table: false,
            bounded: vec![BoundedDir {
                path: "/w/src".into(),
                dev: 2049,
                ino: 12,
            }],
            truncate_by_landlock: true,
        };
        a.send(&msg, Some(file.as_fd())).unwrap();
        let (got, fd): (FromShim, _) = b.recv().unwrap().unwrap();
        assert_eq!(got, msg);
        assert!(fd.is_some());
        drop(a);
        assert!(b.recv::<FromShim>().unwrap().is_none());
    }

    #[test]
    fn oversized_length_is_refused() {
        let (a, b) = Channel::pair().unwrap();
        (&a.stream).write_all(&u32::MAX.to_le_bytes()).unwrap();
        assert!(matches!(
            b.recv::<FromShim>(),
            Err(ChannelError::TooLarge(_))
        ));
    }
}

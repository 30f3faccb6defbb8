//! Starting the shim as the first process of the sandbox's namespaces.
//!
//! The raw `clone` creates the pid, mount and network namespaces (and a user namespace for
//! an ordinary user) in one step, so the shim is pid 1 of its pid namespace: when it dies
//! the kernel kills every process in the sandbox. Where namespaces cannot be made (no
//! privilege, user namespaces restricted) the shim starts as a plain child and kills the
//! tree itself; the core fence (Landlock + seccomp) does not depend on namespaces.
//!
//! While fence is single-threaded (the session's first shim) the shim is a copy of this
//! process that runs the shim's code at once; afterwards (a shim started again) the child
//! executes the fence binary as `fence __shim`. The copy saves the exec and the start of a
//! second program (~1.3 ms of CPU time on a machine where glibc's start asks the hypervisor
//! for the CPU's features and caches).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::sched::CloneFlags;
use shim::{Channel, Namespaces, SHIM_CHANNEL_FD};

/// The started shim.
#[derive(Debug, Clone, Copy)]
pub struct ShimProcess {
    pub pid: libc::pid_t,
    pub namespaces: Namespaces,
}

/// Starts the shim with `channel` as descriptor 3, in new namespaces when it can. `keep`:
/// the descriptors the shim inherits besides its standard ones and the channel (those
/// `--pass-fd` readied).
///
/// A copy's report that it started ([`StartReport`]) is returned unread, to be read once
/// this thread has prepared the session meanwhile: the read would wait for the copy to be
/// scheduled and to close the supervisor's descriptors, most of a millisecond on a machine
/// whose idle vCPUs halt (a woken process waits there for its vCPU to be woken in turn),
/// with nothing of the sandbox running either way.
pub fn start_shim(
    channel: &Channel,
    keep: &[RawFd],
) -> io::Result<(ShimProcess, Option<StartReport>)> {
    start_shim_in(channel, true, keep, true)
}

/// Starts the shim as [`start_shim`] does and returns once it started: a shim started
/// again, whose report there is nothing to do meanwhile.
pub fn start_shim_now(channel: &Channel, keep: &[RawFd]) -> io::Result<ShimProcess> {
    start_shim_in(channel, true, keep, false).map(|(shim, _)| shim)
}

/// Starts the shim as [`start_shim`] does, without a network namespace: where the shim
/// could not make one (it says so with [`shim::NET_STAGE`]). Returns once it started.
pub fn start_shim_without_net(channel: &Channel, keep: &[RawFd]) -> io::Result<ShimProcess> {
    start_shim_in(channel, false, keep, false).map(|(shim, _)| shim)
}

/// Starts the shim as where no namespace can be made: after a [`StartReport`] said that
/// one started in namespaces could not go on. Returns once it started.
pub fn start_shim_plain(channel: &Channel, keep: &[RawFd]) -> io::Result<ShimProcess> {
    plain(channel, how_now(keep), false).map(|(shim, _)| shim)
}

/// What a copied shim said of its start on its status pipe, not yet read.
pub struct StartReport {
    pid: libc::pid_t,
    status: OwnedFd,
    /// It was started in namespaces: where it could not go on (its user namespace's ids
    /// could not be mapped), a shim may start as where none can be made.
    in_namespaces: bool,
}

/// Why a shim did not start ([`StartReport::read`]); it is killed and reaped.
pub struct NotStarted {
    pub error: io::Error,
    /// A shim started without namespaces may still run the session (see `start_shim_in`).
    pub try_plain: bool,
}

impl StartReport {
    /// Reads the report: end of file once the copy closed every descriptor but its own,
    /// else the byte naming the step that failed before it exited.
    pub fn read(self) -> Result<(), NotStarted> {
        let in_namespaces = self.in_namespaces;
        read_status(self.pid, &self.status).map_err(|error| NotStarted {
            error,
            try_plain: in_namespaces,
        })
    }
}

/// How a shim is made now: a copy while this process has one thread.
fn how_now(keep: &[RawFd]) -> How<'_> {
    if single_threaded() && has_close_range() {
        How::Copy(keep)
    } else {
        How::Exec
    }
}

fn start_shim_in(
    channel: &Channel,
    net: bool,
    keep: &[RawFd],
    defer: bool,
) -> io::Result<(ShimProcess, Option<StartReport>)> {
    let how = how_now(keep);
    // FENCE_NO_NAMESPACES=1 runs the fence as on a host where namespaces cannot be made
    // (diagnostics, and the tests of that mode).
    if std::env::var_os("FENCE_NO_NAMESPACES").is_some_and(|v| v == "1") {
        return plain(channel, how, defer);
    }
    // The read-only mount view is made with mount_setattr (Linux 5.12): on older kernels
    // the sandbox runs as where namespaces cannot be made.
    if !kernel_has_mount_setattr() {
        return plain(channel, how, defer);
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let wanted = Namespaces {
        user: !root,
        pid: true,
        mount: true,
        net,
        ipc: true,
    };
    match clone_shim(channel, wanted, how, defer) {
        Ok((pid, status)) => Ok((
            ShimProcess {
                pid,
                namespaces: wanted,
            },
            status.map(|status| StartReport {
                pid,
                status,
                in_namespaces: true,
            }),
        )),
        // Among the failures, a user namespace whose ids could not be mapped: it would
        // leave the sandbox with no identity on files, so the sandbox runs as where no
        // namespace can be made rather than like that.
        Err(_) => plain(channel, how, defer),
    }
}

fn plain(
    channel: &Channel,
    how: How,
    defer: bool,
) -> io::Result<(ShimProcess, Option<StartReport>)> {
    let (pid, status) = clone_shim(channel, Namespaces::default(), how, defer)?;
    Ok((
        ShimProcess {
            pid,
            namespaces: Namespaces::default(),
        },
        status.map(|status| StartReport {
            pid,
            status,
            in_namespaces: false,
        }),
    ))
}

/// How the shim's process is made.
#[derive(Debug, Clone, Copy)]
enum How<'k> {
    /// A copy of this single-threaded process (a fork with the namespaces' flags) that runs
    /// the shim's code, with these descriptors kept besides 0–2 and the channel.
    Copy(&'k [RawFd]),
    /// A child sharing this process's memory until it executes `fence __shim`.
    Exec,
}

/// Whether the kernel has `close_range` (Linux 5.9), with which a copied shim closes the
/// supervisor's descriptors: a call on a range where no descriptor can be open closes
/// nothing, and fails with ENOSYS only where the call is missing.
fn has_close_range() -> bool {
    // SAFETY: closes descriptors numbered u32::MAX only, which cannot exist.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            libc::c_uint::MAX,
            libc::c_uint::MAX,
            0,
        ) == 0
    }
}

/// The supervisor's command line as the kernel shows it (`/proc/PID/cmdline`): where its
/// bytes lie in this process's memory (`arg_start` and `arg_end`, fields 48 and 49 of
/// `/proc/self/stat`, Linux 3.5). A copied shim writes its own name over them.
fn command_line_area() -> Option<(usize, usize)> {
    let stat = std::fs::read("/proc/self/stat").ok()?;
    let close = stat.iter().rposition(|b| *b == b')')?;
    let mut fields = stat[close + 1..]
        .split(|b| *b == b' ')
        .filter(|f| !f.is_empty())
        // Field 3 is the first after the name: field 48 is the 46th from there.
        .skip(45);
    let mut number = || -> Option<usize> {
        std::str::from_utf8(fields.next()?)
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let (start, end) = (number()?, number()?);
    (start > 0 && end > start).then_some((start, end))
}

/// Whether this process has one thread (`/proc/self/stat`'s 20th field): only then may a
/// copy of it run code that allocates or takes locks, since no other thread held one at
/// the copy. Anything unreadable counts as more than one.
fn single_threaded() -> bool {
    let Ok(stat) = std::fs::read("/proc/self/stat") else {
        return false;
    };
    // The name (field 2) is in parentheses and may hold anything: the fields after the
    // last `)` start with the state (field 3).
    let Some(close) = stat.iter().rposition(|b| *b == b')') else {
        return false;
    };
    stat[close + 1..]
        .split(|b| *b == b' ')
        .filter(|f| !f.is_empty())
        .nth(17)
        .is_some_and(|f| f == b"1")
}

/// Whether the kernel has mount_setattr: a call with an invalid descriptor fails with
/// EBADF (or EINVAL) where it exists and with ENOSYS where it does not.
fn kernel_has_mount_setattr() -> bool {
    // SAFETY: an invalid descriptor and a null attribute: the kernel changes nothing.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            -1,
            std::ptr::null::<libc::c_char>(),
            0,
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    !(ret < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS))
}

fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: killing and reaping the child we just created.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

/// Why a cloned child did not reach its exec, as the one byte it writes to the status pipe.
const FAILED_ID_MAP: u8 = b'm';
const FAILED_EXEC: u8 = b'x';
/// A copied shim could not close the supervisor's descriptors (`close_range`, Linux 5.9).
const FAILED_CLOSE: u8 = b'c';

/// Bytes of the stack the cloned child runs on until its exec: a handful of system calls.
const CHILD_STACK: usize = 64 * 1024;

/// Clones the shim into `ns` with `channel` as descriptor 3 and starts it `how` it is
/// told: a copy of this process running the shim's code, or `fence __shim` executed with
/// an empty environment. Returns once the child has closed what is not the shim's (or
/// executed), or failed to, which is an error; or, for a copy with `defer`, at once with
/// the status pipe that tells it ([`StartReport`]).
///
/// For an exec, the child shares the supervisor's memory and the calling thread waits
/// until its exec (`CLONE_VM | CLONE_VFORK`, as `posix_spawn` does): nothing of the
/// supervisor's address space is copied. A fork-like clone copied it (page tables, and
/// every anonymous page then written was copied again) and held the memory map's lock
/// meanwhile, so the supervisor's other threads stalled for up to 1.5 ms of each start; the
/// copy is made only while there are none, early, when there is little to copy. In a new
/// user namespace the child maps its own ids (root there is the caller outside: the one
/// mapping an ordinary user may write, from inside as `unshare -r` does) before the shim
/// runs, so that it keeps its capabilities: the shim builds the mount view with them; the
/// target then enters a nested user namespace that maps the caller's own ids back
/// ([`shim::target_process`]), so it runs under its real uid.
///
/// Why by hand: nix's `clone` is the call for the exec (its closure runs on a stack given
/// to the child); the copy is the raw `clone` system call with no stack, as `fork` makes
/// it, since nix has no fork that takes namespace flags. What the child may do before the
/// shim runs (raw system calls on memory prepared before the clone) is this function's own.
fn clone_shim(
    channel: &Channel,
    ns: Namespaces,
    how: How,
    defer: bool,
) -> io::Result<(libc::pid_t, Option<OwnedFd>)> {
    // The status pipe: closed by the child's exec or, for a copy, with the descriptors it
    // does not keep (end of file: it started), or given one byte naming the step that
    // failed before its `_exit`.
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into a valid array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned from here on.
    let (status_read, status_write) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Everything the child needs is prepared before clone: after it, the exec's child may
    // only make raw system calls on this memory (it is the supervisor's, whose other
    // threads hold locks and allocate).
    let exe = CString::new("/proc/self/exe").map_err(io::Error::other)?;
    let arg0 = CString::new("fence").map_err(io::Error::other)?;
    let arg1 = CString::new("__shim").map_err(io::Error::other)?;
    let arg2 = CString::new(shim::UNSHARE_NET_ARG).map_err(io::Error::other)?;
    // The network namespace is the shim's to make ([`shim::UNSHARE_NET_ARG`]).
    let argv = [
        arg0.as_ptr(),
        arg1.as_ptr(),
        if ns.net {
            arg2.as_ptr()
        } else {
            std::ptr::null()
        },
        std::ptr::null(),
    ];
    let envp = [std::ptr::null::<libc::c_char>()];
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let prelude = Prelude {
        id_maps: [
            (c"/proc/self/setgroups".to_owned(), b"deny".to_vec()),
            (
                c"/proc/self/uid_map".to_owned(),
                format!("0 {uid} 1").into_bytes(),
            ),
            (
                c"/proc/self/gid_map".to_owned(),
                format!("0 {gid} 1").into_bytes(),
            ),
        ],
        ns,
        channel_fd: channel.as_raw_fd(),
        status_fd: status_write.as_raw_fd(),
        // With a pid namespace the kernel kills the sandbox when the shim (its pid 1) dies,
        // so the shim can die at once with the supervisor; without one it must first kill
        // the tree, so it is told with a signal it can catch.
        death_signal: if ns.pid { libc::SIGKILL } else { libc::SIGTERM },
        // SAFETY: getpid has no preconditions.
        parent: unsafe { libc::getpid() },
        command_line: match how {
            How::Copy(_) => command_line_area(),
            How::Exec => None,
        },
    };
    // A copy closes every descriptor but these: its standard ones, the channel (moved to
    // SHIM_CHANNEL_FD), the status pipe (closed last) and those it is to keep.
    let mut kept_fds: Vec<RawFd> = match how {
        How::Copy(keep) => keep.to_vec(),
        How::Exec => Vec::new(),
    };
    kept_fds.extend([0, 1, 2, SHIM_CHANNEL_FD, prelude.status_fd]);
    kept_fds.sort_unstable();
    kept_fds.dedup();

    let mut flags = CloneFlags::empty();
    for (wanted, flag) in [
        (ns.user, CloneFlags::CLONE_NEWUSER),
        (ns.pid, CloneFlags::CLONE_NEWPID),
        (ns.mount, CloneFlags::CLONE_NEWNS),
        (ns.ipc, CloneFlags::CLONE_NEWIPC),
    ] {
        if wanted {
            flags |= flag;
        }
    }
    // No signal handler may run in the child before it is the shim (on the supervisor's
    // memory, or its copy): all are blocked across the clone, and the child takes this
    // thread's mask back once the handlers are reset (by its exec, or by hand in a copy),
    // so the shim starts with the mask it always had.
    // SAFETY: sigset operations on local sets, then this thread's mask.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut kept: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut kept);
    }
    let cloned = match how {
        How::Copy(_) => {
            // SAFETY: the raw clone without a stack, as fork makes it: the child returns
            // here on a copy of this thread's stack, in a copy of a process that has no
            // other thread (checked by the caller), so no lock of the allocator or of the
            // standard library is held in the copy; it runs `run_copy` and never returns
            // past it. Unlike glibc's `fork`, it leaves glibc's record of the thread's id
            // (kept for its own mutexes and `raise`) the supervisor's thread's: the shim
            // takes no robust, error-checking or recursive mutex and raises no signal (an
            // `abort` that misses ends the copy all the same), and
            // its own children (the target) get theirs from glibc's `fork`.
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_clone,
                    (flags.bits() | libc::SIGCHLD) as libc::c_ulong,
                    0usize,
                    0usize,
                    0usize,
                    0usize,
                )
            };
            if ret == 0 {
                // SAFETY: in the child, single-threaded, on its own copy of memory.
                unsafe { run_copy(&prelude, &kept_fds, &kept) }
            }
            if ret < 0 {
                Err(nix::errno::Errno::last())
            } else {
                Ok(nix::unistd::Pid::from_raw(ret as libc::pid_t))
            }
        }
        How::Exec => {
            let kept_ref = &kept;
            let prelude_ref = &prelude;
            let child = Box::new(move || -> isize {
                // Raw system calls only (`libc::syscall`), on memory prepared above. errno
                // is the supervisor thread's, which waits until the exec: nothing reads it
                // meanwhile.
                // SAFETY: each call takes NUL-terminated strings, buffers and descriptors
                // prepared before the clone and valid until the exec.
                unsafe {
                    prelude_ref.run();
                    libc::syscall(
                        libc::SYS_rt_sigprocmask,
                        libc::SIG_SETMASK,
                        kept_ref as *const libc::sigset_t,
                        std::ptr::null::<libc::sigset_t>(),
                        std::mem::size_of::<libc::c_ulong>(),
                    );
                    libc::syscall(libc::SYS_execve, exe.as_ptr(), argv.as_ptr(), envp.as_ptr());
                    prelude_ref.fail(FAILED_EXEC)
                }
            });
            let mut stack = vec![0u8; CHILD_STACK];
            // SAFETY: CLONE_VM with CLONE_VFORK: this thread is suspended until the child
            // has executed or exited, so the stack, the closure and everything it reads
            // outlive its use; the child makes raw system calls only and no signal handler
            // can run in it.
            unsafe {
                nix::sched::clone(
                    child,
                    &mut stack,
                    flags | CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK,
                    Some(libc::SIGCHLD),
                )
            }
        }
    };
    // SAFETY: restoring this thread's own mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &kept, std::ptr::null_mut()) };
    let pid = cloned.map_err(io::Error::from)?.as_raw();
    drop(status_write);
    // A vforked child has executed or exited by now: its report is there to read.
    if defer && matches!(how, How::Copy(_)) {
        return Ok((pid, Some(status_read)));
    }
    read_status(pid, &status_read).map(|()| (pid, None))
}

/// Reads a cloned child's status pipe ([`clone_shim`]): end of file once it closed what is
/// not the shim's or executed; else it failed, and is killed and reaped.
fn read_status(pid: libc::pid_t, status_read: &OwnedFd) -> io::Result<()> {
    let mut why = 0u8;
    let n = loop {
        // SAFETY: one byte into a local from a pipe we own.
        let n = unsafe { libc::read(status_read.as_raw_fd(), (&mut why as *mut u8).cast(), 1) };
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        break n;
    };
    if n == 0 {
        return Ok(());
    }
    let error = match (n, why) {
        (1, FAILED_ID_MAP) => io::Error::other("mapping the sandbox's user namespace ids failed"),
        (1, FAILED_CLOSE) => io::Error::other(
            "the shim could not close the supervisor's descriptors (close_range, Linux 5.9)",
        ),
        (1, _) => io::Error::other("the shim could not be executed"),
        _ => io::Error::last_os_error(),
    };
    kill_and_reap(pid);
    Err(error)
}

/// What a cloned child does first, whether it executes the shim or is a copy running it:
/// prepared before the clone, carried out with raw system calls.
struct Prelude {
    id_maps: [(CString, Vec<u8>); 3],
    /// Where a copy's command line lies, to be written over ([`command_line_area`]).
    command_line: Option<(usize, usize)>,
    ns: Namespaces,
    channel_fd: RawFd,
    status_fd: RawFd,
    death_signal: libc::c_int,
    parent: libc::pid_t,
}

impl Prelude {
    /// Writes why the child stops to the status pipe and exits.
    ///
    /// # Safety
    /// Only in the cloned child.
    unsafe fn fail(&self, why: u8) -> ! {
        // SAFETY: one byte from a local to a descriptor of the child's; exit_group ends it.
        unsafe {
            libc::syscall(
                libc::SYS_write,
                self.status_fd,
                &why as *const u8 as *const libc::c_void,
                1usize,
            );
            libc::syscall(libc::SYS_exit_group, 125);
        }
        unreachable_exit()
    }

    /// The parent-death signal, the user namespace's id maps, the channel at
    /// SHIM_CHANNEL_FD.
    ///
    /// # Safety
    /// Only in the cloned child, before anything else.
    unsafe fn run(&self) {
        // SAFETY: raw system calls on NUL-terminated strings and buffers prepared before
        // the clone.
        unsafe {
            libc::syscall(
                libc::SYS_prctl,
                libc::PR_SET_PDEATHSIG,
                self.death_signal,
                0,
                0,
                0,
            );
            // Outside a pid namespace, a supervisor that died before the line above leaves
            // us re-parented: stop here (inside one, getppid is 0 by design).
            if !self.ns.pid && libc::syscall(libc::SYS_getppid) != self.parent as libc::c_long {
                libc::syscall(libc::SYS_exit_group, 125);
            }
            if self.ns.user {
                for (path, content) in &self.id_maps {
                    let fd = libc::syscall(
                        libc::SYS_openat,
                        libc::AT_FDCWD,
                        path.as_ptr(),
                        libc::O_WRONLY | libc::O_CLOEXEC,
                    );
                    if fd < 0 {
                        self.fail(FAILED_ID_MAP);
                    }
                    let written = libc::syscall(
                        libc::SYS_write,
                        fd,
                        content.as_ptr() as *const libc::c_void,
                        content.len(),
                    );
                    libc::syscall(libc::SYS_close, fd);
                    if written != content.len() as libc::c_long {
                        self.fail(FAILED_ID_MAP);
                    }
                }
            }
            if self.channel_fd == SHIM_CHANNEL_FD {
                libc::syscall(libc::SYS_fcntl, self.channel_fd, libc::F_SETFD, 0);
            } else if libc::syscall(libc::SYS_dup2, self.channel_fd, SHIM_CHANNEL_FD) < 0 {
                self.fail(FAILED_EXEC);
            }
        }
    }
}

/// The copied shim: after the prelude, what its exec would have done for it — signal
/// handlers back to their defaults (an ignored signal stays ignored), every descriptor
/// closed but its own (`kept`, sorted; the supervisor's end of the channel among the
/// closed), the environment's strings wiped (the shim reads none: the target's environment
/// comes with its spec, and `/proc/1/environ` of the sandbox's init shows the supervisor's
/// otherwise) — then the shim, and `_exit` with its status: nothing of the supervisor's
/// code runs in the copy, a panic included.
///
/// # Safety
/// Only in the copy made by [`clone_shim`], which had one thread.
unsafe fn run_copy(prelude: &Prelude, kept: &[RawFd], mask: &libc::sigset_t) -> ! {
    // SAFETY: the child's own memory and descriptors; see each step.
    unsafe {
        prelude.run();
        for sig in 1..=libc::SIGRTMAX() {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
            {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // Every gap between the kept descriptors (the status pipe among them: closed last,
        // so that the supervisor reads its end only once the rest is closed), and above
        // the last.
        let mut from: libc::c_uint = 0;
        for &fd in kept {
            let fd = fd as libc::c_uint;
            if fd > from && libc::syscall(libc::SYS_close_range, from, fd - 1, 0) != 0 {
                prelude.fail(FAILED_CLOSE);
            }
            from = fd + 1;
        }
        if libc::syscall(libc::SYS_close_range, from, libc::c_uint::MAX, 0) != 0 {
            prelude.fail(FAILED_CLOSE);
        }
        wipe_environment();
        // The supervisor's command line (its `--deny-read` paths, its `--log`) is not the
        // sandbox's to read from its pid 1, and `pgrep -f` finds the supervisor alone: the
        // copy shows its own name, as much of it as the area holds, the rest zeros.
        if let Some((start, end)) = prelude.command_line {
            let name = shim::SHIM_NAME.to_bytes();
            let area = std::slice::from_raw_parts_mut(start as *mut u8, end - start);
            area.fill(0);
            let shown = name.len().min(area.len() - 1);
            area[..shown].copy_from_slice(&name[..shown]);
        }
        libc::close(prelude.status_fd);
        libc::pthread_sigmask(libc::SIG_SETMASK, mask, std::ptr::null_mut());
        let code = std::panic::catch_unwind(|| {
            shim::init_process::run_from_inherited_channel(prelude.ns.net, prelude.ns.mount)
        })
        .unwrap_or(125);
        libc::_exit(code)
    }
}

/// Overwrites the environment's strings with zeros and empties it.
///
/// # Safety
/// Single-threaded: nothing else reads or changes the environment meanwhile.
unsafe fn wipe_environment() {
    unsafe extern "C" {
        static mut environ: *mut *mut libc::c_char;
    }
    // SAFETY: `environ` is a null-terminated array of NUL-terminated strings that this
    // process owns; each is overwritten within its length, then the array is emptied.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let s = *entry;
            std::ptr::write_bytes(s, 0, libc::strlen(s));
            entry = entry.add(1);
        }
        libc::clearenv();
    }
}

/// For the type checker: `exit_group` does not return.
fn unreachable_exit() -> ! {
    loop {
        // SAFETY: exit_group has no preconditions; it does not return.
        unsafe { libc::syscall(libc::SYS_exit_group, 125) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn mount_setattr_is_found_from_linux_5_12_on() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut parts = release.split(|c: char| !c.is_ascii_digit());
        let major: u32 = parts.next().unwrap().parse().unwrap();
        let minor: u32 = parts.next().unwrap().parse().unwrap();
        assert_eq!(
            super::kernel_has_mount_setattr(),
            (major, minor) >= (5, 12),
            "Linux {release}"
        );
    }
}

//! The seccomp notification listener: receive, check validity, respond. The only place
//! that issues `SECCOMP_IOCTL_NOTIF_*` requests.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use super::one_cpu::{Chooser, OneCpu};

/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (Linux 6.6): the kernel wakes the supervisor on the
/// target's CPU, which makes a notification about ten times cheaper.
const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;

/// One received notification: who asked, which call, its raw arguments.
#[derive(Debug, Clone, Copy)]
pub struct Notification {
    pub id: u64,
    /// Thread id of the caller, in the supervisor's pid namespace.
    pub tid: libc::pid_t,
    pub nr: i64,
    pub args: [u64; 6],
}

#[derive(Debug)]
pub struct Listener {
    fd: OwnedFd,
    /// The kernel has synchronous wake-ups (Linux 6.6), and with them the killable wait the
    /// shim asks for (5.19): see [`Listener::add_fd_and_answer`].
    sync_wake_up: AtomicBool,
    /// Synchronous wake-ups are on right now: the notification loop turns them off for the
    /// answer to a caller that runs on another CPU ([`Listener::set_sync`]).
    sync_now: AtomicBool,
    /// Whether installing a descriptor pinned pays on this machine ([`Chooser`]).
    pinning: Chooser,
}

/// The answer to one notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// Let the kernel run the call as the target made it (only where the kernel's own
    /// checks — Landlock, read-only mounts — bound the result).
    Continue,
    /// Fail the call with this errno.
    Error(i32),
    /// The supervisor performed the call; return this value.
    Value(i64),
    /// Already answered (ADDFD with `SECCOMP_ADDFD_FLAG_SEND`): nothing more to send.
    Sent,
}

impl Listener {
    pub fn new(fd: OwnedFd) -> Listener {
        Listener {
            fd,
            sync_wake_up: AtomicBool::new(false),
            sync_now: AtomicBool::new(false),
            pinning: Chooser::default(),
        }
    }

    /// Asks the kernel for synchronous wake-ups; false when the kernel predates 6.6.
    pub fn enable_sync_wake_up(&self) -> bool {
        // SAFETY: SET_FLAGS takes the flags by value on a listener fd we own.
        let on = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
                SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
            ) == 0
        };
        self.sync_wake_up.store(on, Ordering::Relaxed);
        self.sync_now.store(on, Ordering::Relaxed);
        on
    }

    /// Turns synchronous wake-ups on or off for what follows (a flag of the listener, so it
    /// applies to the wake-ups of both directions: the caller's of this thread, and the
    /// answer's of the caller). Nothing when the kernel has none. Scheduling only: every
    /// answer is the same either way.
    pub fn set_sync(&self, on: bool) {
        if !self.sync_wake_up.load(Ordering::Relaxed) || self.sync_now.load(Ordering::Relaxed) == on
        {
            return;
        }
        let flags = if on {
            SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
        } else {
            0
        };
        // SAFETY: SET_FLAGS takes the flags by value on a listener fd we own.
        if unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
                flags,
            )
        } == 0
        {
            self.sync_now.store(on, Ordering::Relaxed);
        }
    }

    /// Blocks until a notification arrives. `Ok(None)` when the notifying task went away
    /// before it could be received (ENOENT) or the wait was interrupted.
    pub fn receive(&self) -> io::Result<Option<Notification>> {
        // SAFETY: seccomp_notif is plain data; the kernel requires it zeroed.
        let mut raw: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: RECV writes one seccomp_notif into `raw`, a valid out-pointer.
        let ret = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV as _,
                &mut raw,
            )
        };
        if ret < 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::EINTR) => Ok(None),
                _ => Err(err),
            };
        }
        Ok(Some(Notification {
            id: raw.id,
            tid: raw.pid as libc::pid_t,
            nr: raw.data.nr as i64,
            args: raw.data.args,
        }))
    }

    /// Whether no process is left that can notify: every task that had the filter has
    /// exited. From then on `receive` fails at once (ENOENT) instead of blocking, so the
    /// loop must stop rather than spin.
    pub fn hung_up(&self) -> bool {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll of one valid pollfd, without waiting.
        let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
        ready == 1 && pfd.revents & libc::POLLHUP != 0 && pfd.revents & libc::POLLIN == 0
    }

    /// Whether the notification is still pending: the caller is alive and blocked in that
    /// very call. Checked after every read of the target's memory or /proc entries, since
    /// a tid can be reused once its thread is gone.
    pub fn is_valid(&self, id: u64) -> bool {
        id_valid(self.fd.as_raw_fd(), id)
    }

    /// The listener's descriptor number, for [`id_valid`] where only a number can be kept.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Installs a duplicate of `file` in the caller's descriptor table and answers the call
    /// with its number: the call returns the descriptor as an `open` would. Returns the
    /// number in the target.
    ///
    /// With synchronous wake-ups, the caller (`tid`) and this thread are kept on this CPU
    /// while the kernel installs the descriptor ([`OneCpu`]); both may run anywhere again
    /// before the answer, which is then sent with the synchronous wake-up while the caller
    /// still waits. Install and answer are two steps then: a kernel with synchronous wake-ups
    /// (6.6) has the killable wait (5.19) the shim asks for, so only a fatal signal, or
    /// another thread's `execve`, ends the caller's wait in between, and an answer that
    /// comes late finds no call (ids are never reused). The descriptor may then stay in a
    /// table that outlives the call, as it may between the install and the return of a
    /// one-step answer. Otherwise, or where pinning is refused, install and answer are one
    /// step (`SECCOMP_ADDFD_FLAG_SEND`, Linux 5.14).
    pub fn add_fd_and_answer(
        &self,
        id: u64,
        tid: libc::pid_t,
        file: &OwnedFd,
        cloexec: bool,
    ) -> io::Result<i32> {
        let newfd_flags = if cloexec { libc::O_CLOEXEC as u32 } else { 0 };
        // Pinned only while the call is pending before and after: a tid outlives its call
        // and may be another process's by now, and a call still pending once the caller's
        // affinity is set shows that the tid was the caller's all along.
        // Pinned or not as the trials of this machine say ([`Chooser`]).
        let sync = self.sync_now.load(Ordering::Relaxed);
        let plan = self.pinning.plan();
        let started = std::time::Instant::now();
        let pinned = if sync && plan.pin && self.is_valid(id) {
            OneCpu::pin(tid).filter(|_| self.is_valid(id))
        } else {
            None
        };
        if let Some(pinned) = pinned {
            let installed = self.add_fd(id, file, newfd_flags, 0);
            drop(pinned);
            let fd = installed?;
            self.respond(id, Response::Value(i64::from(fd)));
            if plan.trial {
                self.pinning.record(true, started.elapsed());
            }
            return Ok(fd);
        }
        match self.add_fd(id, file, newfd_flags, libc::SECCOMP_ADDFD_FLAG_SEND as u32) {
            Ok(fd) => {
                // A trial only when it went the planned way (pinning refused is neither).
                if plan.trial && !plan.pin && sync {
                    self.pinning.record(false, started.elapsed());
                }
                return Ok(fd);
            }
            Err(e) if e.raw_os_error() != Some(libc::EINVAL) => return Err(e),
            Err(_) => {}
        }
        // Before 5.14 the kernel does not know the flag: install, then answer with the
        // number. The caller waits throughout, so nothing of it runs in between; should the
        // call go away meanwhile, the descriptor stays in a table about to be torn down.
        let fd = self.add_fd(id, file, newfd_flags, 0)?;
        self.respond(id, Response::Value(i64::from(fd)));
        Ok(fd)
    }

    /// `SECCOMP_IOCTL_NOTIF_ADDFD` of `file` into the caller of call `id`, at the lowest
    /// free number: the number in the caller.
    fn add_fd(&self, id: u64, file: &OwnedFd, newfd_flags: u32, flags: u32) -> io::Result<i32> {
        // SAFETY: seccomp_notif_addfd is plain data.
        let mut addfd: libc::seccomp_notif_addfd = unsafe { std::mem::zeroed() };
        addfd.id = id;
        addfd.flags = flags;
        addfd.srcfd = file.as_raw_fd() as u32;
        addfd.newfd_flags = newfd_flags;
        // SAFETY: ADDFD reads one seccomp_notif_addfd from a valid pointer.
        let ret = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ADDFD as _,
                &addfd,
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(ret)
    }

    /// Installs `src` (a descriptor of ours) in the caller's descriptor table at number
    /// `at`, replacing what was there, as `dup2` would (`SECCOMP_ADDFD_FLAG_SETFD`, 5.9).
    pub fn install_fd_at(
        &self,
        id: u64,
        src: BorrowedFd<'_>,
        at: i32,
        cloexec: bool,
    ) -> io::Result<()> {
        // SAFETY: seccomp_notif_addfd is plain data.
        let mut addfd: libc::seccomp_notif_addfd = unsafe { std::mem::zeroed() };
        addfd.id = id;
        addfd.flags = libc::SECCOMP_ADDFD_FLAG_SETFD as u32;
        addfd.srcfd = src.as_raw_fd() as u32;
        addfd.newfd = at as u32;
        addfd.newfd_flags = if cloexec { libc::O_CLOEXEC as u32 } else { 0 };
        // SAFETY: ADDFD reads one seccomp_notif_addfd from a valid pointer.
        let ret = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ADDFD as _,
                &addfd,
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Answers a notification. An error means the caller is gone, which needs no action.
    pub fn respond(&self, id: u64, response: Response) {
        self.try_respond(id, response);
    }

    /// [`Self::respond`], and whether the answer reached the call (false when the call was
    /// gone: interrupted, or its thread killed).
    pub fn try_respond(&self, id: u64, response: Response) -> bool {
        if response == Response::Sent {
            return true;
        }
        // SAFETY: seccomp_notif_resp is plain data.
        let mut resp: libc::seccomp_notif_resp = unsafe { std::mem::zeroed() };
        resp.id = id;
        match response {
            Response::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            Response::Error(errno) => resp.error = -errno,
            Response::Value(v) => resp.val = v,
            Response::Sent => {}
        }
        // SAFETY: SEND reads one seccomp_notif_resp from a valid pointer.
        let ret = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND as _,
                &resp,
            )
        };
        ret == 0
    }
}

/// `SECCOMP_IOCTL_NOTIF_ID_VALID` on the listener descriptor `listener`: whether
/// notification `id` is still pending (its thread alive and blocked in that call).
pub fn id_valid(listener: RawFd, id: u64) -> bool {
    // SAFETY: ID_VALID reads one u64 through a valid pointer.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _, &id) == 0 }
}

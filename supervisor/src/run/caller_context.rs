//! The credentials and umask of a calling thread, kept between its calls.
//!
//! A call the supervisor carries out needs them: the credentials to act as the target
//! ([`super::acting`]), the umask to give a created file the mode the target's own call
//! would have. Both come from `/proc/<tid>/status`, whose read costs ~19 µs here (the
//! kernel formats some fifty lines) — a third of a carried-out create. So they are kept
//! per thread, and read again only when they may have changed:
//!
//! - The credentials cannot change. The sandbox holds no capability and runs with
//!   `no_new_privs`, so `setuid`/`setresuid`/`setfsuid` can only choose among the ids it
//!   has, `setgroups` is refused, and no exec grants set-id; new user namespaces are
//!   refused by seccomp. They are kept only for a thread whose real, effective, saved and
//!   filesystem uids are one id, and the same for its gids: nothing left to choose from.
//! - The umask changes only through `umask(2)`, which is notified while writes are watched
//!   ([`umask_called`]). Every kept umask is forgotten when one is called anywhere in the
//!   sandbox (threads and `CLONE_FS` children share one), and none is kept while a change
//!   is in flight: the call is let through, and the supervisor waits until the caller's
//!   status shows the new value before it keeps umasks again. Should that not happen
//!   within 50 ms (the caller stopped before its call ran), nothing is kept for the rest
//!   of the session.
//! - A thread id can be reused once its thread is gone: each entry holds a pidfd of its
//!   thread (`PIDFD_THREAD`, Linux 6.9), opened before the status is read and found alive
//!   after it, and an entry whose thread has exited is dropped. Without `PIDFD_THREAD`
//!   nothing is kept; at most 256 threads are.
//!
//! Callers still check that the notified call is pending after this (the thread id was
//! the caller's when the call was made).

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::acting::TargetCredentials;
use super::listener::{Listener, Notification, Response};

/// Bumped by every umask change (when it is seen and when it has taken effect).
static EPOCH: AtomicU64 = AtomicU64::new(0);
/// Umask changes let through and not yet seen to take effect.
static CHANGING: AtomicUsize = AtomicUsize::new(0);
/// Set for good when a change could not be seen to take effect, or pidfds of threads
/// cannot be had.
static DISABLED: AtomicBool = AtomicBool::new(false);

/// Most threads kept (each holds a descriptor); beyond it, the entries of exited threads
/// go, then all.
const MOST_KEPT: usize = 256;

/// Longest wait for a umask change to show in its caller's status before nothing is kept
/// any more (the caller runs its call as soon as it is answered).
const UMASK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

struct Entry {
    thread: OwnedFd,
    creds: TargetCredentials,
    umask: u32,
    epoch: u64,
}

fn kept() -> &'static Mutex<HashMap<libc::pid_t, Entry>> {
    static KEPT: std::sync::OnceLock<Mutex<HashMap<libc::pid_t, Entry>>> =
        std::sync::OnceLock::new();
    KEPT.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The credentials and umask of thread `tid` (`None` for the umask before Linux 4.7).
pub fn of_thread(tid: libc::pid_t) -> io::Result<(TargetCredentials, Option<u32>)> {
    of_thread_kept(tid).map(|(creds, umask, _)| (creds, umask))
}

/// [`of_thread`], and whether the answer came from a kept entry. A kept entry's thread is
/// alive (its pidfd says so), so `tid` still names the thread that made the caller's
/// call: unlike values just read by `tid`, they need no check that the call is pending.
pub fn of_thread_kept(tid: libc::pid_t) -> io::Result<(TargetCredentials, Option<u32>, bool)> {
    let usable = || !DISABLED.load(Ordering::Acquire) && CHANGING.load(Ordering::Acquire) == 0;
    let epoch = EPOCH.load(Ordering::Acquire);
    if usable() {
        let mut map = kept().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = map.get(&tid) {
            if !has_exited(&entry.thread) {
                if entry.epoch == epoch {
                    return Ok((entry.creds.clone(), Some(entry.umask), true));
                }
            } else {
                map.remove(&tid);
            }
        }
    }
    // The thread's pidfd first, then its status: a status read between the pidfd's opening
    // and a later look that finds the thread alive is that thread's (its id was not free
    // in between), which is what an entry must hold.
    let thread = if usable() {
        match pidfd_of_thread(tid) {
            Ok(fd) => Some(fd),
            // No PIDFD_THREAD (before Linux 6.9): nothing can be kept safely. (EINVAL also
            // comes for an id that names only a process group by now: the kernel is asked.)
            Err(e) if !pidfd_thread_supported(&e) => {
                disable();
                None
            }
            // Out of descriptors, or the thread is gone: this one is not kept.
            Err(_) => None,
        }
    } else {
        None
    };
    let (creds, umask, settled) = TargetCredentials::read_for_keeping(tid)?;
    if let (Some(thread), Some(umask)) = (thread, umask)
        && settled
        && !has_exited(&thread)
        && usable()
        && EPOCH.load(Ordering::Acquire) == epoch
    {
        keep(tid, thread, &creds, umask, epoch);
    }
    Ok((creds, umask, false))
}

/// Nothing is kept from now on, and what was kept goes (with its descriptors).
fn disable() {
    DISABLED.store(true, Ordering::Release);
    kept().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

fn keep(tid: libc::pid_t, thread: OwnedFd, creds: &TargetCredentials, umask: u32, epoch: u64) {
    let mut map = kept().lock().unwrap_or_else(|e| e.into_inner());
    if DISABLED.load(Ordering::Acquire) {
        return;
    }
    if map.len() >= MOST_KEPT {
        map.retain(|_, e| !has_exited(&e.thread));
        if map.len() >= MOST_KEPT {
            map.clear();
        }
    }
    // Read again under the lock: a change seen meanwhile leaves this value unkept.
    if CHANGING.load(Ordering::Acquire) == 0 && EPOCH.load(Ordering::Acquire) == epoch {
        map.insert(
            tid,
            Entry {
                thread,
                creds: creds.clone(),
                umask,
                epoch,
            },
        );
    }
}

/// A notified `umask(2)`: every kept umask is forgotten, the call runs (`CONTINUE`), and
/// umasks are kept again once the caller's status shows the new value (or the caller is
/// gone). The loop that receives notifications is the one calling this, so no other
/// umask change of the sandbox can run meanwhile.
pub fn umask_called(listener: &Listener, n: &Notification) {
    if DISABLED.load(Ordering::Acquire) {
        listener.respond(n.id, Response::Continue);
        return;
    }
    CHANGING.fetch_add(1, Ordering::AcqRel);
    EPOCH.fetch_add(1, Ordering::AcqRel);
    // An answer that did not arrive (the call was interrupted) changed nothing.
    let answered = listener.try_respond(n.id, Response::Continue);
    let wanted = (n.args[0] & 0o777) as u32;
    let mut seen = !answered;
    let started = std::time::Instant::now();
    while !seen && started.elapsed() < UMASK_WAIT {
        match TargetCredentials::read_for_keeping(n.tid)
            .ok()
            .and_then(|(_, umask, _)| umask)
        {
            Some(now) if now == wanted => {
                seen = true;
                break;
            }
            // Gone (or unreadable): nothing of it can be kept any more.
            None => {
                seen = true;
                break;
            }
            Some(_) => std::thread::yield_now(),
        }
    }
    if !seen {
        disable();
    }
    EPOCH.fetch_add(1, Ordering::AcqRel);
    CHANGING.fetch_sub(1, Ordering::AcqRel);
}

/// An `execve` is about to run: what was kept is forgotten. A thread other than its
/// process's leader that calls it takes the leader's id (and the leader's pidfd then tells
/// of this thread), and may have had a filesystem context, and so a umask, of its own.
pub fn exec_seen() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// `pidfd_open(tid, PIDFD_THREAD)`: a descriptor that tells when this very thread exits.
pub(super) fn pidfd_of_thread(tid: libc::pid_t) -> io::Result<OwnedFd> {
    const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
    // SAFETY: pidfd_open takes a pid and flags by value; the result is checked.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether `error`, from [`pidfd_of_thread`], may still leave `PIDFD_THREAD` usable: any
/// error but EINVAL and ENOSYS, and those when a pidfd of the calling thread can be had
/// (asked once). Some kernels answer EINVAL for an id that only names a process group by
/// then (its leader reaped), which a sandbox can time: that turns nothing off.
pub(super) fn pidfd_thread_supported(error: &io::Error) -> bool {
    if !matches!(error.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        return true;
    }
    static HERE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: gettid has no preconditions.
    *HERE.get_or_init(|| pidfd_of_thread(unsafe { libc::gettid() }).is_ok())
}

/// Whether the thread behind a pidfd has exited (its pidfd polls readable then). An
/// error counts as exited: the entry is dropped and read again.
pub(super) fn has_exited(thread: &OwnedFd) -> bool {
    let mut p = libc::pollfd {
        fd: thread.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no wait.
    let ret = unsafe { libc::poll(&mut p, 1, 0) };
    ret != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_thread_is_known_to_have_exited() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tx.send(unsafe { libc::gettid() }).unwrap();
            done_rx.recv().unwrap();
        });
        let tid = rx.recv().unwrap();
        let Ok(fd) = pidfd_of_thread(tid) else {
            eprintln!("SKIPPED: no PIDFD_THREAD (Linux 6.9) here");
            done_tx.send(()).unwrap();
            t.join().unwrap();
            return;
        };
        assert!(!has_exited(&fd));
        done_tx.send(()).unwrap();
        t.join().unwrap();
        // A joined thread may not have finished exiting yet (its tid is cleared first).
        let started = std::time::Instant::now();
        while !has_exited(&fd) && started.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(has_exited(&fd));
    }
}

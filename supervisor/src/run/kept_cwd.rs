//! The working directories of calling threads, kept between their calls.
//!
//! A relative path is placed against its caller's cwd, read from `/proc/<tid>/cwd`: ~2 µs
//! here, the largest single cost of a write the kernel then completes (a process writing
//! file after file in one folder reads the same answer every time). So the write check
//! keeps each thread's cwd and reads it again only when it may have changed, as
//! [`super::caller_context`] keeps credentials and umasks:
//!
//! - A cwd changes through `chdir`/`fchdir`, which are notified while writes are watched
//!   for this alone, and the path that names it through a rename or removal of a folder
//!   (`rename*`, `rmdir`, `unlinkat` with `AT_REMOVEDIR`). Each forgets every kept cwd
//!   (threads and `CLONE_FS` children share one). The call is let through and takes
//!   effect after its answer, so none is kept while it is in flight: until its thread
//!   makes another notified call (it was blocked in this one until then) or is gone, or,
//!   looked at every [`IN_FLIGHT_FOR`] while it makes none, `/proc/<tid>/syscall` shows it
//!   out of that call (in user mode or in another call; a thread on a CPU at that moment
//!   shows `running` and is looked at again later).
//! - An exec forgets every kept cwd too: a thread other than its process's leader that
//!   calls it takes the leader's id, and may have had a cwd of its own.
//! - A thread id can be reused once its thread is gone: each entry holds a pidfd of its
//!   thread (`PIDFD_THREAD`, Linux 6.9), found alive after the cwd was read, and an entry
//!   whose thread has exited is dropped. Without `PIDFD_THREAD` nothing is kept; at most
//!   [`MOST_KEPT`] threads are.
//!
//! Policy, not a boundary: a kept cwd is used only for a write check whose answer is a
//! plain `CONTINUE`, which the kernel bounds whatever directory the call really starts from
//! (Landlock's grants, the read-only mounts). Every other answer (refused, asked, carried
//! out by the supervisor, a private copy) is worked out again from the cwd read for that
//! call ([`super::notify_loop`]). A cwd a process changed outside these calls (another
//! sandbox or the host renaming a folder above it, a thread made without `CLONE_FS`
//! racing an exec) can only make the kernel refuse a write without a blocked reason, or
//! skip the private copy of a file with other hard links, which a path swapped after its
//! check skips anyway.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::caller_context::{has_exited, pidfd_of_thread};
use super::listener::Notification;

/// Most threads kept (each holds a descriptor); beyond it, the entries of exited threads
/// go, then all.
const MOST_KEPT: usize = 256;

/// How often a thread that changed a cwd and has not been heard from since is looked at
/// (`/proc/<tid>/syscall`) to see whether its call has run.
pub const IN_FLIGHT_FOR: Duration = Duration::from_millis(20);

/// A call that may change a cwd, let through and not known to have run.
struct InFlight {
    tid: libc::pid_t,
    nr: i64,
    /// When it was answered, then when it was last looked at.
    since: Instant,
}

struct Entry {
    thread: OwnedFd,
    cwd: PathBuf,
    epoch: u64,
}

/// The kept cwds. Owned by the notification loop's receiving thread, which alone checks
/// writes inline and sees every call that changes a cwd, in the order it answers them.
pub struct KeptCwds {
    kept: HashMap<libc::pid_t, Entry, foldhash::fast::RandomState>,
    /// Bumped by every call that may change a cwd.
    epoch: u64,
    /// Calls that may change a cwd, let through and not known to have run.
    in_flight: Vec<InFlight>,
    /// Set for good when pidfds of threads cannot be had, or from the start when the calls
    /// that change a cwd are not notified.
    disabled: bool,
}

impl KeptCwds {
    /// Kept cwds, or none at all (`keep` false).
    pub fn new(keep: bool) -> KeptCwds {
        KeptCwds {
            kept: HashMap::default(),
            epoch: 0,
            in_flight: Vec::new(),
            disabled: !keep,
        }
    }

    /// Notification `n`, received at `now`: its thread's earlier calls have run, and a
    /// call that may change a cwd or the path naming it forgets every kept one — a
    /// `chdir`, `fchdir`, rename or folder removal, and an exec (in flight when a thread
    /// other than its process's leader makes it: it takes the leader's id as it runs, and
    /// may have a cwd of its own).
    pub fn received(&mut self, n: &Notification, now: Instant) {
        self.heard_from(n.tid, now);
        match n.nr {
            libc::SYS_chdir | libc::SYS_fchdir | libc::SYS_renameat | libc::SYS_renameat2 => {
                self.changing(n.tid, n.nr, now)
            }
            #[cfg(target_arch = "x86_64")]
            libc::SYS_rename | libc::SYS_rmdir => self.changing(n.tid, n.nr, now),
            libc::SYS_unlinkat if n.args[2] & libc::AT_REMOVEDIR as u64 != 0 => {
                self.changing(n.tid, n.nr, now)
            }
            libc::SYS_execve | libc::SYS_execveat if is_thread_group_leader(n.tid) => {
                self.exec_seen()
            }
            libc::SYS_execve | libc::SYS_execveat => self.changing(n.tid, n.nr, now),
            _ => {}
        }
    }

    /// Thread `tid` made a notified call at `now`: any call of its that changed a cwd has
    /// run. The threads of the others not heard from for [`IN_FLIGHT_FOR`] are looked at.
    fn heard_from(&mut self, tid: libc::pid_t, now: Instant) {
        if self.in_flight.is_empty() {
            return;
        }
        self.in_flight.retain_mut(|call| {
            if call.tid == tid {
                return false;
            }
            if now.saturating_duration_since(call.since) < IN_FLIGHT_FOR {
                return true;
            }
            call.since = now;
            still_in_call(call.tid, call.nr)
        });
    }

    /// Call `nr` (a `chdir`, `fchdir`, rename or folder removal) of `tid`, about to be
    /// answered at `now`: every kept cwd goes, and none is kept until it has run.
    fn changing(&mut self, tid: libc::pid_t, nr: i64, now: Instant) {
        self.epoch += 1;
        self.in_flight.push(InFlight {
            tid,
            nr,
            since: now,
        });
    }

    /// An exec is about to run: every kept cwd goes.
    fn exec_seen(&mut self) {
        self.epoch += 1;
    }

    /// The kept cwd of thread `tid`, the caller of a pending call: its thread is alive, so
    /// `tid` still names it.
    pub fn get(&mut self, tid: libc::pid_t) -> Option<PathBuf> {
        let entry = self.kept.get(&tid)?;
        if has_exited(&entry.thread) {
            self.kept.remove(&tid);
            return None;
        }
        (entry.epoch == self.epoch).then(|| entry.cwd.clone())
    }

    /// Keeps `cwd`, just read from `/proc/<tid>/cwd` for the pending call of `tid`, unless
    /// a change is in flight. `pending` says whether that call is still pending; it is
    /// asked only when a new pidfd had to be opened, after the opening: a pending call's
    /// thread has held `tid` since the call was made, so the pidfd and the cwd are its.
    /// An entry whose pidfd is alive after the read needs no such look.
    pub fn keep(&mut self, tid: libc::pid_t, cwd: &Path, pending: impl FnOnce() -> bool) {
        if self.disabled || !self.in_flight.is_empty() {
            return;
        }
        if let Some(entry) = self.kept.get_mut(&tid) {
            if !has_exited(&entry.thread) {
                entry.cwd.clear();
                entry.cwd.push(cwd);
                entry.epoch = self.epoch;
                return;
            }
            self.kept.remove(&tid);
        }
        let thread = match pidfd_of_thread(tid) {
            Ok(fd) => fd,
            // No PIDFD_THREAD (before Linux 6.9): nothing can be kept safely.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
                self.disabled = true;
                self.kept.clear();
                return;
            }
            // Out of descriptors, or the thread is gone: this one is not kept.
            Err(_) => return,
        };
        if !pending() {
            return;
        }
        if self.kept.len() >= MOST_KEPT {
            self.kept.retain(|_, e| !has_exited(&e.thread));
            if self.kept.len() >= MOST_KEPT {
                self.kept.clear();
            }
        }
        self.kept.insert(
            tid,
            Entry {
                thread,
                cwd: cwd.to_path_buf(),
                epoch: self.epoch,
            },
        );
    }
}

/// Whether thread `tid` leads its thread group (its id is its process's): `tgkill` with no
/// signal finds thread `tid` in thread group `tid` only then. An error other than that
/// counts as not: the exec is then taken to be in flight.
fn is_thread_group_leader(tid: libc::pid_t) -> bool {
    // SAFETY: signal 0 sends nothing; the call only looks the thread up.
    unsafe { libc::syscall(libc::SYS_tgkill, tid, tid, 0) == 0 }
}

/// Whether thread `tid` may still be in its call `nr`, by `/proc/<tid>/syscall`: the number
/// of the call it is blocked in, `-1` in user mode, `running` while on a CPU (unknown:
/// looked at again later). Gone, it is not; unreadable, it may be.
fn still_in_call(tid: libc::pid_t, nr: i64) -> bool {
    match std::fs::read(format!("/proc/{tid}/syscall")) {
        Ok(text) => {
            let first = text
                .split(|b| b.is_ascii_whitespace())
                .next()
                .unwrap_or(b"");
            match std::str::from_utf8(first)
                .ok()
                .and_then(|f| f.parse::<i64>().ok())
            {
                Some(now) => now == nr,
                None => true,
            }
        }
        Err(e) => !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread of this test process that waits until told to end.
    struct Thread {
        tid: libc::pid_t,
        done: std::sync::mpsc::Sender<()>,
        handle: std::thread::JoinHandle<()>,
    }

    impl Thread {
        fn start() -> Thread {
            let (tx, rx) = std::sync::mpsc::channel();
            let (done, done_rx) = std::sync::mpsc::channel::<()>();
            let handle = std::thread::spawn(move || {
                // SAFETY: gettid has no preconditions.
                tx.send(unsafe { libc::gettid() }).unwrap();
                done_rx.recv().unwrap();
            });
            Thread {
                tid: rx.recv().unwrap(),
                done,
                handle,
            }
        }
        fn end(self) {
            self.done.send(()).unwrap();
            self.handle.join().unwrap();
        }
        /// Ends the thread and waits until its pidfd says it has exited (a joined thread
        /// may not have finished exiting yet).
        fn end_and_wait(self) {
            let watch = pidfd_of_thread(self.tid).unwrap();
            self.end();
            let mut p = libc::pollfd {
                fd: std::os::fd::AsRawFd::as_raw_fd(&watch),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            assert_eq!(unsafe { libc::poll(&mut p, 1, 10_000) }, 1);
        }
    }

    fn pidfd_thread_here() -> bool {
        // SAFETY: gettid has no preconditions.
        let here = pidfd_of_thread(unsafe { libc::gettid() }).is_ok();
        if !here {
            eprintln!("SKIPPED: no PIDFD_THREAD (Linux 6.9) here: nothing is kept");
        }
        here
    }

    /// The call thread `tid` is blocked in, from `/proc/<tid>/syscall`, once it is blocked.
    fn blocked_call(tid: libc::pid_t) -> i64 {
        for _ in 0..1000 {
            let text = std::fs::read_to_string(format!("/proc/{tid}/syscall")).unwrap();
            if let Ok(nr) = text.split_whitespace().next().unwrap().parse::<i64>()
                && nr >= 0
            {
                return nr;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("thread {tid} never blocked");
    }

    #[test]
    fn a_kept_cwd_is_given_back_until_a_call_may_change_it() {
        if !pidfd_thread_here() {
            return;
        }
        let (t, changer) = (Thread::start(), Thread::start());
        let mut cwds = KeptCwds::new(true);
        let now = Instant::now();
        assert_eq!(cwds.get(t.tid), None);
        cwds.keep(t.tid, Path::new("/w/src"), || true);
        assert_eq!(cwds.get(t.tid), Some(PathBuf::from("/w/src")));
        // An exec anywhere: forgotten.
        cwds.exec_seen();
        assert_eq!(cwds.get(t.tid), None);
        cwds.keep(t.tid, Path::new("/w/src"), || true);
        assert_eq!(cwds.get(t.tid), Some(PathBuf::from("/w/src")));
        // A chdir by another thread: forgotten, and nothing kept while it is in flight.
        cwds.changing(changer.tid, libc::SYS_chdir, now);
        assert_eq!(cwds.get(t.tid), None);
        cwds.keep(t.tid, Path::new("/w/old"), || true);
        assert_eq!(cwds.get(t.tid), None);
        cwds.heard_from(t.tid, now);
        cwds.keep(t.tid, Path::new("/w/old"), || true);
        assert_eq!(
            cwds.get(t.tid),
            None,
            "the changing thread has not been heard from"
        );
        // Its next call: the change has run.
        cwds.heard_from(changer.tid, now);
        cwds.keep(t.tid, Path::new("/w"), || true);
        assert_eq!(cwds.get(t.tid), Some(PathBuf::from("/w")));
        t.end();
        changer.end();
    }

    #[test]
    fn a_change_not_heard_of_again_is_looked_for_in_its_threads_state() {
        if !pidfd_thread_here() {
            return;
        }
        let (t, changer) = (Thread::start(), Thread::start());
        let blocked_in = blocked_call(changer.tid);
        let mut cwds = KeptCwds::new(true);
        let then = Instant::now();
        // Blocked in another call than the change: it has run, once looked at.
        cwds.changing(changer.tid, libc::SYS_chdir, then);
        cwds.heard_from(t.tid, then + IN_FLIGHT_FOR / 2);
        cwds.keep(t.tid, Path::new("/w"), || true);
        assert_eq!(cwds.get(t.tid), None, "not looked at before its time");
        cwds.heard_from(t.tid, then + IN_FLIGHT_FOR);
        cwds.keep(t.tid, Path::new("/w"), || true);
        assert_eq!(cwds.get(t.tid), Some(PathBuf::from("/w")));
        // Still blocked in the change itself: in flight, however long.
        cwds.changing(changer.tid, blocked_in, then);
        for later in 1..4 {
            cwds.heard_from(t.tid, then + IN_FLIGHT_FOR * later);
            cwds.keep(t.tid, Path::new("/w"), || true);
            assert_eq!(cwds.get(t.tid), None);
        }
        // Gone: it has run (or never will).
        changer.end_and_wait();
        // Its /proc entry goes once it is reaped, which follows its exit closely.
        let mut later = 4;
        while cwds.get(t.tid).is_none() && later < 1000 {
            std::thread::sleep(Duration::from_millis(1));
            cwds.heard_from(t.tid, then + IN_FLIGHT_FOR * later);
            cwds.keep(t.tid, Path::new("/w"), || true);
            later += 1;
        }
        assert_eq!(cwds.get(t.tid), Some(PathBuf::from("/w")));
        t.end();
    }

    #[test]
    fn the_cwd_of_an_exited_thread_is_never_given_for_its_id() {
        if !pidfd_thread_here() {
            return;
        }
        let t = Thread::start();
        let tid = t.tid;
        let mut cwds = KeptCwds::new(true);
        cwds.keep(tid, Path::new("/w/src"), || true);
        assert_eq!(cwds.get(tid), Some(PathBuf::from("/w/src")));
        t.end_and_wait();
        assert_eq!(cwds.get(tid), None);
        assert!(cwds.kept.is_empty(), "the exited thread's entry is dropped");
    }

    #[test]
    fn a_call_no_longer_pending_keeps_nothing() {
        if !pidfd_thread_here() {
            return;
        }
        let t = Thread::start();
        let mut cwds = KeptCwds::new(true);
        cwds.keep(t.tid, Path::new("/w/src"), || false);
        assert_eq!(cwds.get(t.tid), None);
        t.end();
    }
}

//! What is kept of a calling thread between its calls: its working directory and a
//! descriptor of its memory.
//!
//! **The cwd.** A relative path is placed against its caller's cwd, read from
//! `/proc/<tid>/cwd`: ~2 µs here, the largest single cost of a write the kernel then
//! completes (a process writing file after file in one folder reads the same answer every
//! time). So the write check keeps each thread's cwd and reads it again only when it may
//! have changed, as [`super::caller_context`] keeps credentials and umasks:
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
//! - A rename on the host (or by another session of the worktree) is not notified: a cwd
//!   is read again once it has been kept for [`CWD_KEPT_FOR`] (1 ms), which bounds how
//!   long one kept from before such a rename places paths (at ~2 µs a read, at most one
//!   read a millisecond per writing thread).
//!
//! Policy, not a boundary: a kept cwd decides a write check's plain `CONTINUE`, which the
//! kernel bounds whatever directory the call really starts from (Landlock's grants, the
//! read-only mounts). Any other answer (refused, asked, carried out by the supervisor, a
//! private copy) stands only when the cwd read for that call names the same directory,
//! and is worked out again from that one otherwise ([`super::notify_loop`]). Once a kept
//! cwd has served, an `O_PATH` descriptor of the directory (`/proc/<tid>/cwd` opened) is
//! kept with it, and a single name is looked at there; while the cwd is kept no call has
//! changed it, so the descriptor is the thread's cwd itself.
//!
//! A cwd a process changed outside these calls (another sandbox or the host renaming a
//! folder above it, a thread made without `CLONE_FS` racing an exec) can only, for at most
//! [`CWD_KEPT_FOR`], make the kernel refuse a write without a blocked reason, or skip the
//! private copy of a file with other hard links, which a path swapped after its check
//! skips anyway.
//!
//! **The memory.** The path of a write is read from the caller's memory; a
//! `process_vm_readv` names the thread and looks up its task, checks ptrace access and
//! the mapping for every read (~1.2 µs here), where a `pread` of `/proc/<tid>/mem` opened
//! once costs ~0.45 µs less. Reads decide every answer, carried-out calls included, so
//! what a kept descriptor reads must be the caller's memory, as surely as a
//! `process_vm_readv` of its id while its call is pending:
//!
//! - The descriptor is opened while a call of the thread is pending, checked after the
//!   open: the id named the caller at the open, and the open file holds the address
//!   space (`mm`) the thread had then — it never follows the id to another task.
//! - A thread's address space changes only by an exec: its own, or one by another thread
//!   of its process, which replaces every thread by the one that called it (and that one
//!   takes the leader's id). Every exec seen forgets every kept descriptor, before it is
//!   answered, and none is opened or used while an exec by a thread other than its
//!   leader is in flight (the leader's id changes task as it runs). None is opened for a
//!   call that is itself an exec. While a leader's own exec runs, the other threads of its
//!   process may still open theirs: each is their own address space until the exec ends
//!   them. Threads of other processes sharing the address space (`vfork`, `CLONE_VM`)
//!   each have their own entry, dropped at any exec the same way.
//! - An entry whose thread has exited (its `PIDFD_THREAD` pidfd polls readable) is
//!   dropped, so a reused id never reaches another thread's descriptor.
//! - A read that fails or returns nothing through the descriptor is made again with
//!   `process_vm_readv`, whose answer stands (an address space that has gone reads as
//!   nothing). One difference remains: a read of `/proc/<tid>/mem` is a ptrace read and
//!   sees pages the caller mapped without read access, where the kernel would have
//!   failed the call with `EFAULT`; such a path is still checked like any other, so this
//!   can only carry out a checked call that the kernel would have refused. Only the writes
//!   Landlock bounds read through it (most of them answered `CONTINUE`, where the kernel
//!   reads the path again itself); metadata calls, which the supervisor carries out, read
//!   with `process_vm_readv`.
//!
//! A descriptor is opened at a thread's second write at the earliest (most processes of a
//! build write a file or two, and an open costs a few reads; a first write is only noted,
//! without a descriptor), for at most [`MOST_MEMORY`] threads at a time.
//!
//! Each entry holds a pidfd of its thread (`PIDFD_THREAD`, Linux 6.9), found alive after
//! what it keeps was read. Without `PIDFD_THREAD` nothing is kept; at most [`MOST_KEPT`]
//! threads are.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::caller_context::{has_exited, pidfd_of_thread, pidfd_thread_supported};
use super::listener::Notification;

/// Most threads kept (each holds a descriptor, and one more for its memory); beyond it,
/// the entries of exited threads go, then all.
const MOST_KEPT: usize = 256;

/// Most threads whose memory descriptor is kept.
const MOST_MEMORY: usize = 128;

/// How long a cwd read from `/proc/<tid>/cwd` is kept before it is read again. A call the
/// sandbox makes that changes a cwd or the path naming it forgets every kept one at once;
/// a rename on the host (or by another session of the worktree) is not seen, and this
/// bounds how long a cwd kept from before it can place a path.
pub const CWD_KEPT_FOR: Duration = Duration::from_millis(1);

/// How often a thread that changed a cwd and has not been heard from since is looked at
/// (`/proc/<tid>/syscall`) to see whether its call has run.
pub const IN_FLIGHT_FOR: Duration = Duration::from_millis(20);

/// A call that may change a cwd (or, an exec, a thread's memory), let through and not
/// known to have run.
struct InFlight {
    tid: libc::pid_t,
    nr: i64,
    /// When it was answered, then when it was last looked at.
    since: Instant,
}

struct Entry {
    thread: OwnedFd,
    /// The cwd read for one of the thread's calls, the cwd epoch it was read in, and when.
    cwd: Option<(PathBuf, u64, Instant)>,
    /// A descriptor of that cwd (`O_PATH`), opened once it served a later call.
    cwd_dir: Option<Arc<OwnedFd>>,
    /// `/proc/<tid>/mem`, opened while a call of the thread was pending, and the exec epoch
    /// it was opened in.
    memory: Option<(Arc<OwnedFd>, u64)>,
}

/// What is kept for a thread whose call is pending.
#[derive(Default)]
pub struct Kept {
    pub cwd: Option<PathBuf>,
    /// A descriptor of `cwd`, when one is kept with it.
    pub cwd_dir: Option<Arc<OwnedFd>>,
    pub memory: Option<Arc<OwnedFd>>,
    /// The thread had an entry: it has written before.
    known: bool,
}

/// The kept cwds and memory descriptors. Owned by the notification loop's receiving
/// thread, which alone checks writes inline and sees every call that changes a cwd and
/// every exec, in the order it answers them.
pub struct KeptThreads {
    kept: HashMap<libc::pid_t, Entry, foldhash::fast::RandomState>,
    /// Bumped by every call that may change a cwd.
    epoch: u64,
    /// Bumped by every exec.
    exec_epoch: u64,
    /// Calls that may change a cwd, let through and not known to have run.
    in_flight: Vec<InFlight>,
    /// Threads seen writing once, without an entry: their next write opens one
    /// ([`Self::keep_memory`]). An id reused in between only makes that open early.
    seen_once: std::collections::HashSet<libc::pid_t, foldhash::fast::RandomState>,
    /// Set from the start when the calls that change a cwd are not notified.
    cwds_off: bool,
    /// Set for good when pidfds of threads cannot be had.
    disabled: bool,
}

impl KeptThreads {
    /// Kept memory descriptors, and kept cwds unless `keep_cwds` is false.
    pub fn new(keep_cwds: bool) -> KeptThreads {
        KeptThreads {
            kept: HashMap::default(),
            epoch: 0,
            exec_epoch: 0,
            in_flight: Vec::new(),
            seen_once: Default::default(),
            cwds_off: !keep_cwds,
            disabled: false,
        }
    }

    /// Notification `n`, received at `now`: its thread's earlier calls have run, and a
    /// call that may change a cwd or the path naming it forgets every kept one — a
    /// `chdir`, `fchdir`, rename or folder removal, and an exec (in flight when a thread
    /// other than its process's leader makes it: it takes the leader's id as it runs, and
    /// may have a cwd of its own). An exec also forgets every kept memory descriptor.
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
            libc::SYS_execve | libc::SYS_execveat => {
                self.exec_seen();
                self.changing(n.tid, n.nr, now)
            }
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

    /// Call `nr` (a `chdir`, `fchdir`, rename, folder removal, or an exec by a thread other
    /// than its leader) of `tid`, about to be answered at `now`: every kept cwd goes, and
    /// none is kept until it has run.
    fn changing(&mut self, tid: libc::pid_t, nr: i64, now: Instant) {
        self.epoch += 1;
        self.in_flight.push(InFlight {
            tid,
            nr,
            since: now,
        });
    }

    /// An exec is about to run: every kept cwd and memory descriptor goes.
    fn exec_seen(&mut self) {
        self.epoch += 1;
        self.exec_epoch += 1;
    }

    /// The cwd epoch a call received now is checked in, when directories may be known for
    /// it as cwds may be kept ([`super::path_resolve::known_dirs_for_call`]): writes are
    /// watched, and no call that changes a path is in flight.
    pub fn dirs_epoch(&self) -> Option<u64> {
        (!self.cwds_off && self.in_flight.is_empty()).then_some(self.epoch)
    }

    /// Whether an exec by a thread other than its leader may be running.
    fn exec_in_flight(&self) -> bool {
        self.in_flight
            .iter()
            .any(|c| c.nr == libc::SYS_execve || c.nr == libc::SYS_execveat)
    }

    /// What is kept for thread `tid`, the caller of a pending call received at `now`: its
    /// thread is alive, so `tid` still names it. A cwd read more than [`CWD_KEPT_FOR`]
    /// before is not given (it is read again for the call, and kept anew).
    pub fn thread_at(&mut self, tid: libc::pid_t, now: Instant) -> Kept {
        let exec_in_flight = self.exec_in_flight();
        let Some(entry) = self.kept.get_mut(&tid) else {
            return Kept::default();
        };
        if has_exited(&entry.thread) {
            self.kept.remove(&tid);
            return Kept::default();
        }
        let (cwd, cwd_dir) = match &entry.cwd {
            Some((cwd, epoch, read))
                if *epoch == self.epoch && now.saturating_duration_since(*read) < CWD_KEPT_FOR =>
            {
                (Some(cwd.clone()), entry.cwd_dir.clone())
            }
            _ => {
                // A cwd forgotten: its folder's descriptor is of no more use.
                entry.cwd_dir = None;
                (None, None)
            }
        };
        let memory = match &entry.memory {
            Some((fd, epoch)) if *epoch == self.exec_epoch && !exec_in_flight => Some(fd.clone()),
            _ => None,
        };
        Kept {
            cwd,
            cwd_dir,
            memory,
            known: true,
        }
    }

    /// [`Self::thread_at`] now.
    #[cfg(test)]
    pub fn thread(&mut self, tid: libc::pid_t) -> Kept {
        self.thread_at(tid, Instant::now())
    }

    /// The kept cwd of thread `tid` ([`Self::thread_at`]).
    #[cfg(test)]
    pub fn get(&mut self, tid: libc::pid_t) -> Option<PathBuf> {
        self.thread(tid).cwd
    }

    /// The entry of thread `tid`, alive, made with a new pidfd when there is none (`None`
    /// when none can be: no `PIDFD_THREAD`, no descriptor left, the thread gone, or its
    /// call no longer pending after the pidfd was opened). `pending` says whether the call
    /// of `tid` being checked is still pending; it is asked only when a pidfd had to be
    /// opened, after the opening: a pending call's thread has held `tid` since the call
    /// was made, so the pidfd is its. An entry whose pidfd is alive needs no such look.
    fn entry(&mut self, tid: libc::pid_t, pending: impl FnOnce() -> bool) -> Option<&mut Entry> {
        if self.disabled {
            return None;
        }
        if self.kept.get(&tid).is_some_and(|e| has_exited(&e.thread)) {
            self.kept.remove(&tid);
        }
        if !self.kept.contains_key(&tid) {
            let thread = match pidfd_of_thread(tid) {
                Ok(fd) => fd,
                // No PIDFD_THREAD (before Linux 6.9): nothing can be kept safely.
                Err(e) if !pidfd_thread_supported(&e) => {
                    self.disabled = true;
                    self.kept.clear();
                    return None;
                }
                // Out of descriptors, or the thread is gone: nothing is kept for it.
                Err(_) => return None,
            };
            if !pending() {
                return None;
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
                    cwd: None,
                    cwd_dir: None,
                    memory: None,
                },
            );
        }
        self.kept.get_mut(&tid)
    }

    /// Keeps `cwd`, just read from `/proc/<tid>/cwd` for the pending call of `tid`, unless
    /// a change is in flight; `pending` as for [`Self::entry`].
    pub fn keep(&mut self, tid: libc::pid_t, cwd: &Path, pending: impl FnOnce() -> bool) {
        if self.cwds_off || !self.in_flight.is_empty() {
            return;
        }
        let epoch = self.epoch;
        let Some(entry) = self.entry(tid, pending) else {
            return;
        };
        entry.cwd_dir = None;
        let now = Instant::now();
        match &mut entry.cwd {
            Some((kept, at, read)) => {
                kept.clear();
                kept.push(cwd);
                *at = epoch;
                *read = now;
            }
            none => *none = Some((cwd.to_path_buf(), epoch, now)),
        }
    }

    /// After a write check of `tid`'s pending call that placed its path against the kept
    /// cwd (given by [`Self::thread`] for that call, with `kept`) without a descriptor of
    /// it: one is opened now (`/proc/<tid>/cwd`, the directory itself) and kept with the
    /// cwd, unless a change may be in flight or the cwd was forgotten meanwhile. The
    /// thread's call is pending, so its cwd is the kept one (every change to it would have
    /// been seen); `pending` says whether it still is, asked after the open.
    pub fn keep_cwd_dir(&mut self, tid: libc::pid_t, kept: &Kept, pending: impl FnOnce() -> bool) {
        if kept.cwd_dir.is_some() || !self.in_flight.is_empty() {
            return;
        }
        let epoch = self.epoch;
        let Some(entry) = self.kept.get_mut(&tid) else {
            return;
        };
        if !matches!(entry.cwd, Some((_, at, _)) if at == epoch) {
            return;
        }
        let Ok(dir) = open_cwd(tid) else {
            return;
        };
        if pending() {
            entry.cwd_dir = Some(Arc::new(dir));
        }
    }

    /// After a write check of `tid`'s pending call `nr` that read its memory without a kept
    /// descriptor (`kept`, what [`Self::thread`] gave for that call): a thread seen writing
    /// before gets its descriptor now (and an entry if it had none); one seen for the first
    /// time is only noted. Never for an exec, nor while another thread's exec may be
    /// running, nor beyond [`MOST_MEMORY`] threads. `pending` says whether the call is
    /// still pending, asked after every open.
    pub fn keep_memory(
        &mut self,
        tid: libc::pid_t,
        nr: i64,
        kept: &Kept,
        pending: impl Fn() -> bool,
    ) {
        if self.disabled
            || kept.memory.is_some()
            || nr == libc::SYS_execve
            || nr == libc::SYS_execveat
            || self.exec_in_flight()
        {
            return;
        }
        if !kept.known && !self.seen_once.remove(&tid) {
            if self.seen_once.len() >= 4 * MOST_KEPT {
                self.seen_once.clear();
            }
            self.seen_once.insert(tid);
            return;
        }
        let with_memory =
            |kept: &HashMap<_, Entry, _>| kept.values().filter(|e| e.memory.is_some()).count();
        if with_memory(&self.kept) >= MOST_MEMORY {
            self.kept.retain(|_, e| !has_exited(&e.thread));
            if with_memory(&self.kept) >= MOST_MEMORY {
                return;
            }
        }
        let exec_epoch = self.exec_epoch;
        let Ok(memory) = open_memory(tid) else {
            return;
        };
        // The open found the caller's task only if its call was still pending after it
        // (asked once, after the pidfd's opening too where the entry is new).
        let mut asked = false;
        let Some(entry) = self.entry(tid, || {
            asked = true;
            pending()
        }) else {
            return;
        };
        if asked || pending() {
            entry.memory = Some((Arc::new(memory), exec_epoch));
        }
    }
}

/// The directory `/proc/<tid>/cwd` links to, opened `O_PATH`.
fn open_cwd(tid: libc::pid_t) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
        .open(format!("/proc/{tid}/cwd"))
        .map(OwnedFd::from)
}

/// `/proc/<tid>/mem` for reading (close-on-exec, as std opens every file).
fn open_memory(tid: libc::pid_t) -> std::io::Result<OwnedFd> {
    std::fs::File::open(format!("/proc/{tid}/mem")).map(OwnedFd::from)
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
        let mut cwds = KeptThreads::new(true);
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
        let mut cwds = KeptThreads::new(true);
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
    fn a_kept_cwd_is_read_again_once_it_is_older_than_its_bound() {
        if !pidfd_thread_here() {
            return;
        }
        let t = Thread::start();
        let mut threads = KeptThreads::new(true);
        threads.keep(t.tid, Path::new("/w/src"), || true);
        let now = Instant::now();
        assert_eq!(
            threads.thread_at(t.tid, now).cwd,
            Some(PathBuf::from("/w/src"))
        );
        // A folder renamed on the host is not seen: past the bound the cwd is not given.
        let later = threads.thread_at(t.tid, now + CWD_KEPT_FOR);
        assert_eq!(later.cwd, None);
        assert!(
            later.known,
            "the thread's entry stays (its memory, its pidfd)"
        );
        // Read again for that call, it is kept anew.
        threads.keep(t.tid, Path::new("/w/moved"), || true);
        assert_eq!(threads.get(t.tid), Some(PathBuf::from("/w/moved")));
        t.end();
    }

    #[test]
    fn the_cwd_of_an_exited_thread_is_never_given_for_its_id() {
        if !pidfd_thread_here() {
            return;
        }
        let t = Thread::start();
        let tid = t.tid;
        let mut cwds = KeptThreads::new(true);
        cwds.keep(tid, Path::new("/w/src"), || true);
        assert_eq!(cwds.get(tid), Some(PathBuf::from("/w/src")));
        t.end_and_wait();
        assert_eq!(cwds.get(tid), None);
        assert!(cwds.kept.is_empty(), "the exited thread's entry is dropped");
    }

    #[test]
    fn a_cwd_descriptor_comes_once_the_kept_cwd_served_and_goes_with_it() {
        if !pidfd_thread_here() {
            return;
        }
        let (t, changer) = (Thread::start(), Thread::start());
        let here = std::env::current_dir().unwrap();
        let mut threads = KeptThreads::new(true);
        threads.keep(t.tid, &here, || true);
        let kept = threads.thread(t.tid);
        assert_eq!(kept.cwd.as_deref(), Some(here.as_path()));
        assert!(
            kept.cwd_dir.is_none(),
            "opened once the kept cwd has served"
        );
        threads.keep_cwd_dir(t.tid, &kept, || true);
        let kept = threads.thread(t.tid);
        let dir = kept.cwd_dir.clone().expect("kept with the cwd");
        // The directory the thread is in (this process's cwd).
        let shown = std::fs::read_link(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(dir.as_ref())
        ))
        .unwrap();
        assert_eq!(shown, here);
        // A change anywhere: both go, and a cwd kept again comes without the old one's.
        threads.changing(changer.tid, libc::SYS_chdir, Instant::now());
        let during = threads.thread(t.tid);
        assert!(during.cwd.is_none() && during.cwd_dir.is_none());
        threads.heard_from(changer.tid, Instant::now());
        threads.keep(t.tid, Path::new("/"), || true);
        let after = threads.thread(t.tid);
        assert_eq!(after.cwd.as_deref(), Some(Path::new("/")));
        assert!(
            after.cwd_dir.is_none(),
            "the old directory's descriptor went"
        );
        // Opened for a call no longer pending: not kept.
        threads.keep_cwd_dir(t.tid, &after, || false);
        assert!(threads.thread(t.tid).cwd_dir.is_none());
        t.end();
        changer.end();
    }

    /// The bytes at `addr` read through a kept memory descriptor.
    fn read_through(memory: &OwnedFd, addr: *const u8, len: usize) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::from(memory.try_clone().unwrap());
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, addr as u64).unwrap();
        buf
    }

    #[test]
    fn a_memory_descriptor_comes_at_a_threads_second_write_and_goes_at_any_exec() {
        if !pidfd_thread_here() {
            return;
        }
        let (t, execing) = (Thread::start(), Thread::start());
        let mut threads = KeptThreads::new(false);
        let open = libc::SYS_openat;
        // First write: noted, nothing opened.
        let first = threads.thread(t.tid);
        assert!(first.memory.is_none() && !first.known);
        threads.keep_memory(t.tid, open, &first, || true);
        let second = threads.thread(t.tid);
        assert!(!second.known && second.memory.is_none());
        assert!(
            threads.kept.is_empty(),
            "no descriptor for a thread that wrote once"
        );
        // Second write: the entry and the descriptor, which reads this process's memory.
        threads.keep_memory(t.tid, open, &second, || true);
        let third = threads.thread(t.tid);
        let memory = third.memory.clone().expect("kept at the second write");
        let marker = b"kept memory marker";
        assert_eq!(read_through(&memory, marker.as_ptr(), marker.len()), marker);
        // No cwd is kept when cwds are off, memory or not.
        assert_eq!(third.cwd, None);
        // An exec by a leader: forgotten at once, and opened again at the next write.
        threads.exec_seen();
        let after = threads.thread(t.tid);
        assert!(after.known && after.memory.is_none());
        // The exec's own call opens nothing (its thread's memory is about to change).
        threads.keep_memory(t.tid, libc::SYS_execve, &after, || true);
        assert!(threads.thread(t.tid).memory.is_none());
        threads.keep_memory(t.tid, open, &after, || true);
        assert!(threads.thread(t.tid).memory.is_some());
        // An exec by a thread other than its leader: forgotten, and none is opened or given
        // while it may be running (the leader's id changes task as it runs).
        let now = Instant::now();
        threads.exec_seen();
        threads.changing(execing.tid, libc::SYS_execve, now);
        let during = threads.thread(t.tid);
        assert!(during.memory.is_none());
        threads.keep_memory(t.tid, open, &during, || true);
        assert!(threads.thread(t.tid).memory.is_none());
        // Its thread heard from again (the exec failed, or ran): kept again.
        threads.heard_from(execing.tid, now);
        let later = threads.thread(t.tid);
        threads.keep_memory(t.tid, open, &later, || true);
        assert!(threads.thread(t.tid).memory.is_some());
        // A descriptor opened for a call no longer pending is not kept.
        threads.exec_seen();
        let stale = threads.thread(t.tid);
        threads.keep_memory(t.tid, open, &stale, || false);
        assert!(threads.thread(t.tid).memory.is_none());
        t.end();
        execing.end();
    }

    #[test]
    fn the_memory_of_an_exited_thread_is_never_given_for_its_id() {
        if !pidfd_thread_here() {
            return;
        }
        let t = Thread::start();
        let tid = t.tid;
        let mut threads = KeptThreads::new(true);
        threads.keep_memory(tid, libc::SYS_openat, &Kept::default(), || true);
        threads.keep_memory(tid, libc::SYS_openat, &Kept::default(), || true);
        assert!(threads.thread(tid).memory.is_some());
        t.end_and_wait();
        let gone = threads.thread(tid);
        assert!(gone.memory.is_none() && gone.cwd.is_none() && !gone.known);
        assert!(
            threads.kept.is_empty(),
            "the exited thread's entry is dropped"
        );
    }

    #[test]
    fn a_call_no_longer_pending_keeps_nothing() {
        if !pidfd_thread_here() {
            return;
        }
        let t = Thread::start();
        let mut cwds = KeptThreads::new(true);
        cwds.keep(t.tid, Path::new("/w/src"), || false);
        assert_eq!(cwds.get(t.tid), None);
        t.end();
    }
}

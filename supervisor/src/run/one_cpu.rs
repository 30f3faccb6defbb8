//! Keeps a caller and the notification thread on one CPU while a descriptor is installed.
//!
//! With `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` a notification and its answer are synchronous
//! wake-ups: the kernel runs the supervisor, then the caller again, on the CPU that made
//! the call, so neither waits for another CPU to wake. `SECCOMP_IOCTL_NOTIF_ADDFD` has no
//! such wake-up: the kernel wakes the caller to install the descriptor with an ordinary
//! one, which the scheduler sends to an idle CPU, then the caller wakes the supervisor
//! back the same way. On a virtual machine whose idle vCPUs halt, each of those is an
//! interrupt to a halted vCPU: an open the supervisor carries out cost ~43 µs here, of
//! which ~35 µs was those two wake-ups (~8 µs with both pinned to one CPU by `taskset`).
//!
//! So, for the length of the ADDFD, the caller's thread and the notification thread are
//! allowed only the CPU the notification thread runs on; both affinities are put back
//! before the call is answered. The caller is blocked in its system call for all of it
//! (it returns only on the answer, sent afterwards), so no code of the sandbox runs with
//! the borrowed affinity. This is performance only: no check depends on it, and where the
//! kernel refuses the change (a cpuset without this CPU, a thread gone) nothing is pinned.

use std::mem::{size_of, zeroed};

/// An affinity borrowed from the caller and the current thread; put back on drop.
pub struct OneCpu {
    tid: libc::pid_t,
    cpu: usize,
    caller: libc::cpu_set_t,
    own: libc::cpu_set_t,
}

impl OneCpu {
    /// Restricts thread `tid` (a caller blocked in a notified call) and the current thread
    /// to the CPU the current thread runs on. None when any step fails; then nothing is
    /// left changed.
    pub fn pin(tid: libc::pid_t) -> Option<OneCpu> {
        const SIZE: usize = size_of::<libc::cpu_set_t>();
        // SAFETY: sched_getcpu takes no arguments.
        let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).ok()?;
        if cpu >= SIZE * 8 {
            return None;
        }
        // SAFETY: cpu_set_t is plain data; the affinity calls read or write one set of
        // SIZE bytes through valid pointers.
        unsafe {
            let mut caller: libc::cpu_set_t = zeroed();
            let mut own: libc::cpu_set_t = zeroed();
            if libc::sched_getaffinity(tid, SIZE, &mut caller) != 0
                || !libc::CPU_ISSET(cpu, &caller)
                || libc::sched_getaffinity(0, SIZE, &mut own) != 0
            {
                return None;
            }
            let mut one: libc::cpu_set_t = zeroed();
            libc::CPU_SET(cpu, &mut one);
            if libc::sched_setaffinity(0, SIZE, &one) != 0 {
                return None;
            }
            if libc::sched_setaffinity(tid, SIZE, &one) != 0 {
                libc::sched_setaffinity(0, SIZE, &own);
                return None;
            }
            Some(OneCpu {
                tid,
                cpu,
                caller,
                own,
            })
        }
    }
}

impl Drop for OneCpu {
    fn drop(&mut self) {
        const SIZE: usize = size_of::<libc::cpu_set_t>();
        // SAFETY: as in `pin`.
        unsafe {
            // Put the caller's affinity back only if it is still the one set here: another
            // thread of the sandbox may have set its own in between, which stays.
            let mut now: libc::cpu_set_t = zeroed();
            let mut one: libc::cpu_set_t = zeroed();
            libc::CPU_SET(self.cpu, &mut one);
            if libc::sched_getaffinity(self.tid, SIZE, &mut now) == 0 && libc::CPU_EQUAL(&now, &one)
            {
                libc::sched_setaffinity(self.tid, SIZE, &self.caller);
            }
            libc::sched_setaffinity(0, SIZE, &self.own);
        }
    }
}

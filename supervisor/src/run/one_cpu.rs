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
//! So, where it pays on this machine ([`Chooser`]), for the length of the ADDFD the
//! caller's thread and the notification thread are allowed only the CPU the notification
//! thread runs on; both are let run anywhere again before the call is answered. The caller is blocked in its system call for all of it
//! (it returns only on the answer, sent afterwards), so no code of the sandbox runs with
//! the borrowed affinity. This is performance only: no check depends on it.
//!
//! Only threads that may run on every online CPU are pinned, and they are put back with a
//! full mask, not with the mask read before: `sched_setaffinity` also records the mask it
//! is given as the thread's own request (Linux 6.2), which the kernel then intersects with
//! every later cpuset change and CPU hotplug, so putting back the mask in force at that
//! moment would keep the thread off CPUs added later. A full mask asks for nothing. A
//! thread whose affinity was narrowed (by itself, `taskset`, or a cpuset that fence runs
//! in) is never pinned, so its request stays its own. Where the kernel refuses (a CPU
//! outside the cpuset, a thread gone) nothing is pinned either.

use std::mem::{size_of, zeroed};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

const SIZE: usize = size_of::<libc::cpu_set_t>();

/// A caller and the current thread held on one CPU; both let run anywhere on drop.
pub struct OneCpu {
    tid: libc::pid_t,
    cpu: usize,
}

impl OneCpu {
    /// Restricts thread `tid` (a caller blocked in a notified call) and the current thread
    /// to the CPU the current thread runs on, if both may run on every online CPU. None
    /// when they may not or a step fails; then nothing is left changed. `tid` may have
    /// been reused by another process once its call is gone: the caller checks that the
    /// call is still pending after this returns, and drops the pin at once if not.
    pub fn pin(tid: libc::pid_t) -> Option<OneCpu> {
        let everywhere = everywhere()?;
        // SAFETY: sched_getcpu takes no arguments.
        let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).ok()?;
        if cpu >= SIZE * 8 {
            return None;
        }
        let caller = affinity(tid)?;
        let own = affinity(0)?;
        // SAFETY: CPU_EQUAL reads two sets.
        if !(unsafe { libc::CPU_EQUAL(&caller, everywhere) && libc::CPU_EQUAL(&own, everywhere) }) {
            return None;
        }
        // SAFETY: cpu_set_t is plain data; CPU_SET writes a bit below CPU_SETSIZE (checked).
        let mut one: libc::cpu_set_t = unsafe { zeroed() };
        unsafe { libc::CPU_SET(cpu, &mut one) };
        if !set_affinity(0, &one) {
            return None;
        }
        if !set_affinity(tid, &one) {
            set_affinity(0, &full());
            return None;
        }
        Some(OneCpu { tid, cpu })
    }
}

impl Drop for OneCpu {
    fn drop(&mut self) {
        // The caller is let run anywhere only if its mask is still the one set here:
        // another thread of the sandbox may have set it in between, which stays.
        // SAFETY: cpu_set_t is plain data; CPU_SET writes a bit below CPU_SETSIZE.
        let mut one: libc::cpu_set_t = unsafe { zeroed() };
        unsafe { libc::CPU_SET(self.cpu, &mut one) };
        // SAFETY: CPU_EQUAL reads two sets.
        if affinity(self.tid).is_some_and(|now| unsafe { libc::CPU_EQUAL(&now, &one) }) {
            set_affinity(self.tid, &full());
        }
        set_affinity(0, &full());
    }
}

/// Whether pinning pays on this machine, learnt from the session's own installs.
///
/// What pinning saves is two wake-ups of an idle CPU; what it costs is seven affinity
/// calls. Both differ between machines of the same kind by more than the whole
/// difference: measured the same week on two guests of this kind, a carried-out open
/// took 13.7 µs pinned against 48.8 µs not on one (an idle vCPU's wake-up cost ~15 µs
/// there), and 50 µs pinned against 32 µs not on another (a `sched_setaffinity` costs
/// ~3 µs there, an idle vCPU's wake-up ~5 µs). So each stretch of [`ROUND`] installs
/// begins with [`TRIALS`] of each way, alternating, timed from the first affinity call to
/// the answer; the rest of the stretch goes the way whose median was lower. Performance
/// only: both ways install the same descriptor and send the same answer.
#[derive(Debug, Default)]
pub struct Chooser {
    state: Mutex<Trials>,
}

/// Installs per stretch, and trials of each way at its start.
const ROUND: u32 = 1024;
const TRIALS: usize = 8;

#[derive(Debug, Default)]
struct Trials {
    /// Installs in this stretch so far.
    calls: u32,
    pinned: Vec<Duration>,
    plain: Vec<Duration>,
    /// The way chosen by the last trials: pinned (true), or not. Pinned before any.
    plain_wins: bool,
}

/// How one install is to go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub pin: bool,
    /// A trial: its time is to be recorded with [`Chooser::record`].
    pub trial: bool,
}

impl Chooser {
    /// How the next install goes.
    pub fn plan(&self) -> Plan {
        let mut t = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let n = t.calls;
        t.calls = (n + 1) % ROUND;
        if (n as usize) < 2 * TRIALS {
            return Plan {
                pin: n.is_multiple_of(2),
                trial: true,
            };
        }
        Plan {
            pin: !t.plain_wins,
            trial: false,
        }
    }

    /// Records how long a trial install took, made the way `pinned` says; once both ways
    /// have their trials, the faster median is the choice until the next stretch.
    pub fn record(&self, pinned: bool, took: Duration) {
        let mut t = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let times = if pinned { &mut t.pinned } else { &mut t.plain };
        if times.len() < TRIALS {
            times.push(took);
        }
        if t.pinned.len() == TRIALS && t.plain.len() == TRIALS {
            let median = |v: &mut Vec<Duration>| {
                v.sort_unstable();
                v[TRIALS / 2]
            };
            let (mut pinned, mut plain) =
                (std::mem::take(&mut t.pinned), std::mem::take(&mut t.plain));
            t.plain_wins = median(&mut plain) < median(&mut pinned);
        }
    }
}

/// The mask of every online CPU, when fence's notification thread had it the first time it
/// asked (nobody narrowed fence's affinity); None otherwise, and then nothing is pinned.
fn everywhere() -> Option<&'static libc::cpu_set_t> {
    static EVERYWHERE: OnceLock<Option<libc::cpu_set_t>> = OnceLock::new();
    EVERYWHERE
        .get_or_init(|| {
            let own = affinity(0)?;
            let online = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
            let online = cpu_list(online.trim())?;
            // SAFETY: CPU_EQUAL reads two sets.
            unsafe { libc::CPU_EQUAL(&own, &online) }.then_some(own)
        })
        .as_ref()
}

/// A set from the kernel's CPU list format (`0-3,5`).
fn cpu_list(text: &str) -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    for part in text.split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
            None => {
                let c = part.parse::<usize>().ok()?;
                (c, c)
            }
        };
        if first > last || last >= SIZE * 8 {
            return None;
        }
        for c in first..=last {
            // SAFETY: a bit below CPU_SETSIZE (checked above).
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    Some(set)
}

/// A mask with every CPU: asks the kernel for no restriction of its own.
fn full() -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; every bit pattern is a valid set.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    for c in 0..SIZE * 8 {
        // SAFETY: a bit below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    set
}

fn affinity(tid: libc::pid_t) -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; the kernel writes at most SIZE bytes into it.
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    (unsafe { libc::sched_getaffinity(tid, SIZE, &mut set) } == 0).then_some(set)
}

fn set_affinity(tid: libc::pid_t, set: &libc::cpu_set_t) -> bool {
    // SAFETY: the kernel reads SIZE bytes of a valid set.
    unsafe { libc::sched_setaffinity(tid, SIZE, set) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::FromRawFd;

    #[test]
    fn the_faster_way_is_chosen_after_the_trials_of_each_stretch() {
        let chooser = Chooser::default();
        let ms = Duration::from_millis;
        // Pinned first, before any trial; the trials alternate.
        for i in 0..2 * TRIALS {
            let plan = chooser.plan();
            assert_eq!(
                plan,
                Plan {
                    pin: i % 2 == 0,
                    trial: true
                }
            );
            chooser.record(plan.pin, if plan.pin { ms(5) } else { ms(3) });
        }
        assert_eq!(
            chooser.plan(),
            Plan {
                pin: false,
                trial: false
            }
        );
        // The next stretch tries again, and may choose the other way.
        for _ in 2 * TRIALS + 1..ROUND as usize {
            assert!(!chooser.plan().trial);
        }
        for _ in 0..2 * TRIALS {
            let plan = chooser.plan();
            assert!(plan.trial);
            chooser.record(plan.pin, if plan.pin { ms(1) } else { ms(3) });
        }
        assert_eq!(
            chooser.plan(),
            Plan {
                pin: true,
                trial: false
            }
        );
    }

    #[test]
    fn cpu_lists_parse_as_the_kernel_writes_them() {
        let set = cpu_list("0-2,5").unwrap();
        let on: Vec<usize> = (0..8)
            .filter(|c| unsafe { libc::CPU_ISSET(*c, &set) })
            .collect();
        assert_eq!(on, [0, 1, 2, 5]);
        assert!(cpu_list("3-1").is_none());
        assert!(cpu_list("x").is_none());
        assert!(cpu_list("0-99999").is_none());
    }

    /// A thread blocked in `read` is pinned with the current thread, and both may run on
    /// every CPU again afterwards.
    #[test]
    fn a_pinned_pair_is_let_run_anywhere_again() {
        let Some(everywhere) = everywhere() else {
            eprintln!("skipped: this test's affinity is narrowed (taskset or a cpuset)");
            return;
        };
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            tx.send(unsafe { libc::gettid() }).unwrap();
            let mut f = unsafe { std::fs::File::from_raw_fd(fds[0]) };
            let mut b = [0u8; 1];
            let _ = f.read(&mut b);
        });
        let tid = rx.recv().unwrap();
        let pinned = OneCpu::pin(tid).expect("pinned");
        let cpu = pinned.cpu;
        for t in [tid, 0] {
            let now = affinity(t).unwrap();
            let on: Vec<usize> = (0..SIZE * 8)
                .filter(|c| unsafe { libc::CPU_ISSET(*c, &now) })
                .collect();
            assert_eq!(on, [cpu], "thread {t} while pinned");
        }
        drop(pinned);
        for t in [tid, 0] {
            let now = affinity(t).unwrap();
            assert!(
                unsafe { libc::CPU_EQUAL(&now, everywhere) },
                "thread {t} after"
            );
        }
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        reader.join().unwrap();
        unsafe { libc::close(fds[1]) };
    }
}

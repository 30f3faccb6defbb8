//! The notification loop: receives each notified call, routes it to its check, and answers.
//!
//! One receiving thread judges exec and filesystem calls inline: their checks read a few
//! bytes and /proc entries and never wait on another process, and with synchronous
//! wake-ups one thread is faster than several. A call the policy asks about is handed to a
//! thread of its own while its question waits ([`super::question::settle`]), and network
//! calls (connect, sendto, bind, listen) get one too, so no process ever waits on another's
//! call or question.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::caller_context;
use super::dns_call;
use super::exec_check::{self, ExecPolicy};
use super::fence::Fence;
use super::kept_thread::{Kept, KeptThreads};
use super::listener::{Listener, Notification, Response};
use super::net_check::{self, NetFence};
use super::path_resolve::{self, Caller, ProcessCwd};
use super::question::{self, Outcome, Settle};
use super::target_memory::TargetMemory;
use super::write_check;
use crate::gate::EventKind;
use crate::gate::decide::{Gate, Subject};

/// A caller whose next call reached this thread this soon after the answer to its last one
/// is taken to be in a loop of notified calls: once answered, it is given this thread's
/// CPU at once (`sched_yield`) instead of waiting for this thread to go back to sleep.
///
/// Scheduling, not confinement. The command runs under `SCHED_BATCH`, so a caller the
/// synchronous answer wakes on this CPU does not preempt this thread: the thread goes on
/// to wait for the next call, sleeps, and the caller's next call wakes it again. For a
/// caller that comes straight back, yielding skips that sleep and wake-up (~1.2 µs a call
/// here): the caller runs, its next call finds no one waiting and queues, and when it
/// blocks this thread, still runnable, carries on and receives it at once. Only after a
/// write answered here: not after an exec (the caller runs long, and this thread would sit
/// runnable behind it instead of waiting for other processes' calls), a call handed to a
/// thread of its own (its caller still waits), or one answered with the ordinary wake-up
/// (its caller is not on this CPU). The test looks at the gap before this call, not the
/// one after: a caller that leaves its loop right after a yield (or a program that does so
/// on purpose) keeps this thread runnable behind it until it blocks or its time slice ends,
/// a few milliseconds at most, and a call another process makes meanwhile waits that long.
const BACK_SOON: std::time::Duration = std::time::Duration::from_micros(50);

/// Counters, read at the end of a session.
#[derive(Debug, Default)]
pub struct Counters {
    pub notifications: AtomicU64,
    pub denied: AtomicU64,
}

pub struct Supervision {
    /// The user's terminals while fence may run in the background
    /// ([`super::foreground`]).
    pub foreground: Arc<super::foreground::Guard>,
    /// The sandbox has a pid namespace of its own.
    pub own_pid_namespace: bool,
    pub listener: Arc<Listener>,
    pub fence: Arc<Fence>,
    pub net: Arc<NetFence>,
    pub policy: Arc<dyn ExecPolicy>,
    pub gate: Arc<Gate>,
    pub counters: Arc<Counters>,
    /// Keep each thread's cwd between its writes ([`super::kept_thread`]): only while writes
    /// are watched, when every call that changes one is notified. (Its memory descriptor
    /// is kept either way: every exec is notified.)
    pub keep_cwds: bool,
    /// Settings files hidden as secrets ([`HiddenSettings`]), told once when a program
    /// that reads them runs.
    pub hidden_settings: Vec<HiddenSettings>,
}

/// A settings file of the user's that the sandbox cannot read because it holds
/// credentials (`~/.npmrc`: registry tokens, with the registry, proxy and `fund`/`audit`
/// settings beside them): the programs that read it run without its settings, which
/// nothing else would tell. The first exec of one of them puts a line on fence's
/// transcript naming the file and why.
#[derive(Debug, Clone)]
pub struct HiddenSettings {
    /// Program names (the exec'd file's last name) that read it.
    pub programs: &'static [&'static str],
    pub file: std::path::PathBuf,
}

/// The settings files of [`HiddenSettings`] that exist in `home` and are hidden
/// (`unreadable`, as the session hides them).
pub fn hidden_settings(
    home: &std::path::Path,
    unreadable: &[std::path::PathBuf],
) -> Vec<HiddenSettings> {
    const KNOWN: [(&str, &[&str]); 2] = [
        (
            ".npmrc",
            &["npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx"],
        ),
        (".m2/settings.xml", &["mvn", "mvnw", "mvnDebug"]),
    ];
    KNOWN
        .iter()
        .filter_map(|(rel, programs)| Some((home.join(rel).canonicalize().ok()?, *programs)))
        .filter(|(file, _)| file.is_file() && unreadable.iter().any(|u| file.starts_with(u)))
        .map(|(file, programs)| HiddenSettings { programs, file })
        .collect()
}

/// The last name of an exec's first argument (`npm` for `/usr/bin/npm`).
fn program_name(argv: &[Vec<u8>]) -> Option<&[u8]> {
    argv.first()?.rsplit(|b| *b == b'/').next()
}

/// The line for an exec of `argv` that reads one of `hidden`, if any.
fn hidden_settings_notice<'a>(
    hidden: &'a [HiddenSettings],
    argv: &[Vec<u8>],
) -> Option<(&'a HiddenSettings, String)> {
    let name = program_name(argv)?;
    let found = hidden
        .iter()
        .find(|h| h.programs.iter().any(|p| p.as_bytes() == name))?;
    let line = format!(
        "note: {} is hidden from the sandbox (it holds credentials): {} runs without its settings (registry, proxy and the rest)",
        found.file.display(),
        String::from_utf8_lossy(name)
    );
    Some((found, line))
}

/// Programs whose work is a facility the static filter refuses without a word (EPERM, no
/// notification, no reason line): debuggers and tracers (`ptrace`), profilers
/// (`perf_event_open`). Their first exec in a session puts a note on fence's transcript,
/// so that their "Operation not permitted" has a reason.
const NEEDS_REFUSED_FACILITY: [(&str, &str); 7] = [
    ("gdb", "ptrace"),
    ("strace", "ptrace"),
    ("ltrace", "ptrace"),
    ("lldb", "ptrace"),
    ("rr", "ptrace and perf events"),
    ("perf", "perf events"),
    ("bpftrace", "bpf"),
];

/// The note for an exec of `argv` that needs a refused facility, if it does.
fn refused_facility_notice(argv: &[Vec<u8>]) -> Option<(&'static str, String)> {
    let name = program_name(argv)?;
    let (program, facility) = NEEDS_REFUSED_FACILITY
        .iter()
        .find(|(p, _)| p.as_bytes() == name)?;
    Some((
        program,
        format!(
            "note: {program} needs {facility}, which the sandbox refuses (no process in it may inspect or trace another): expect \"Operation not permitted\""
        ),
    ))
}

/// Starts the loop on its own thread; it runs until the process exits.
pub fn spawn(s: Supervision) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("fence-notify".into())
        .spawn(move || run(s))?;
    Ok(())
}

fn run(s: Supervision) {
    let settle = Settle {
        listener: s.listener.clone(),
        gate: s.gate.clone(),
        quiet_blocks: s.fence.quiet_blocks,
    };
    // The thread that made the last call received, the CPU this thread received it on,
    // and when its answer was sent.
    let mut last: Option<(libc::pid_t, i32, Instant)> = None;
    let mut kept = KeptThreads::new(s.keep_cwds);
    loop {
        // Waiting: the caller's wake-up brings this thread to the caller's CPU.
        s.listener.set_sync(true);
        let cpu_before = current_cpu();
        match s.listener.receive() {
            Ok(Some(n)) => {
                let cpu = current_cpu();
                let previous = last.map(|(tid, cpu, _)| (tid, cpu));
                let here = caller_on_this_cpu(cpu_before, cpu, previous, n.tid);
                s.listener.set_sync(here);
                let received = Instant::now();
                let yield_after = here
                    && n.nr != libc::SYS_execve
                    && n.nr != libc::SYS_execveat
                    && last.is_some_and(|(tid, _, answered)| {
                        tid == n.tid && received.saturating_duration_since(answered) < BACK_SOON
                    });
                let tid = n.tid;
                let write_answered = handle(&s, &settle, &mut kept, n, received);
                last = Some((tid, cpu, Instant::now()));
                if yield_after && write_answered {
                    // SAFETY: no arguments.
                    unsafe { libc::sched_yield() };
                }
            }
            // A caller gone before its call was received, or the end of the sandbox.
            Ok(None) if s.listener.hung_up() => return,
            Ok(None) => continue,
            // The listener is unusable: every later notified call fails with ENOSYS in the
            // target (the kernel's answer once no listener is left), which is closed.
            Err(_) => return,
        }
    }
}

/// Judges and answers notification `n`, received at `received`. Returns whether it was a
/// write whose answer this thread sent (not a thread of its own).
fn handle(
    s: &Supervision,
    settle: &Settle,
    threads: &mut KeptThreads,
    n: Notification,
    received: Instant,
) -> bool {
    s.counters.notifications.fetch_add(1, Ordering::Relaxed);
    let caller = Caller::of_call(&s.listener, n.tid, n.id);
    threads.received(&n, received);
    // Directories opened for earlier calls, known as long as cwds are kept (not while a
    // record of each decision names the path as read for it).
    path_resolve::known_dirs_for_call(
        threads
            .dirs_epoch()
            .filter(|_| !s.gate.logging())
            .map(|epoch| (epoch, received)),
    );
    // Notified only so that kept cwds are forgotten ([`super::kept_thread`]).
    if n.nr == libc::SYS_chdir || n.nr == libc::SYS_fchdir {
        s.listener.respond(n.id, Response::Continue);
        return false;
    }
    if let Some(relay) = &s.net.dns {
        // `--allow-dns`: datagram sockets are the relay's stand-ins, made on a thread of
        // their own (the relay's sockets are made with the target's credentials); a receive
        // that reports a source may wait, so it runs on a thread of its own too.
        if n.nr == libc::SYS_socket {
            let (listener, relay) = (s.listener.clone(), relay.clone());
            let id = n.id;
            let spawned = super::workers::run("fence-dns", move || {
                listener.respond(n.id, dns_call::socket(&listener, &relay, &n));
            });
            if spawned.is_err() {
                // No thread for it: refused, and the loop goes on.
                s.listener.respond(id, Response::Error(libc::EAGAIN));
            }
            return false;
        }
        if n.nr == libc::SYS_setsockopt {
            s.listener
                .respond(n.id, dns_call::setsockopt(relay, caller, &n));
            return false;
        }
        if n.nr == libc::SYS_recvfrom {
            dns_call::recvfrom(s.listener.clone(), relay, caller, n);
            return false;
        }
    }
    if [
        libc::SYS_connect,
        libc::SYS_sendto,
        libc::SYS_bind,
        libc::SYS_listen,
    ]
    .contains(&n.nr)
    {
        net_check::spawn(
            s.listener.clone(),
            s.fence.clone(),
            s.net.clone(),
            s.gate.clone(),
            caller,
            n,
        );
        return false;
    }
    if n.nr == libc::SYS_umask {
        caller_context::umask_called(&s.listener, &n);
        return false;
    }
    // Most execs and most writes Landlock bounds are answered `CONTINUE`, which the kernel
    // accepts only while the call is pending: their reads need no validity check of their
    // own. Any other answer, and any answer recorded in the log, gets it before it acts
    // (`confirmed`). Metadata calls, which the check may carry out itself, read as always.
    let confirmed = |mem: &TargetMemory<'_>, outcome: &Outcome| {
        (plain_continue(outcome) && !s.gate.logging()) || mem.confirm()
    };
    let mut is_write = false;
    let outcome = if n.nr == libc::SYS_execve || n.nr == libc::SYS_execveat {
        caller_context::exec_seen();
        let mem = TargetMemory::deferring(&s.listener, &n);
        let outcome = exec_check::check(&s.policy, &s.fence, &mem, caller, &n);
        if !confirmed(&mem, &outcome) {
            // The caller is gone (its tid may be another thread's by now): nothing read
            // for it is acted on, and the answer finds no call.
            s.listener.respond(n.id, Response::Error(libc::EFAULT));
            return false;
        }
        if let Some(Subject::Argv(argv)) = &outcome.subject {
            if let Some((hidden, line)) = hidden_settings_notice(&s.hidden_settings, argv) {
                s.gate.notice_once(&hidden.file.to_string_lossy(), &line);
            }
            if let Some((program, line)) = refused_facility_notice(argv) {
                s.gate.notice_once(program, &line);
            }
        }
        outcome
    } else if let Some(call) = write_check::decode(&n) {
        // The writes Landlock bounds read the caller's memory through its kept descriptor
        // (a metadata call, which the check carries out, reads it as the kernel would:
        // [`super::kept_thread`] says where the two differ).
        let bounded = matches!(call, write_check::FsCall::Bounded { .. });
        let (mut kept, mem) = if bounded {
            let kept = threads.thread_at(n.tid, received);
            let mem = TargetMemory::deferring(&s.listener, &n).through(kept.memory.clone());
            (kept, mem)
        } else {
            (Kept::default(), TargetMemory::new(&s.listener, &n))
        };
        let mut outcome = check_write(s, threads, &mut kept, &mem, caller, &n, &call);
        // Only a plain `CONTINUE`, which the kernel bounds, is decided in a directory known
        // from an earlier call ([`path_resolve::known_dirs_for_call`]): any other answer is
        // worked out again from the filesystem as it is now (a folder renamed by the host
        // or another session within the millisecond would give a wrong reason, or skip a
        // question the rules by name ask).
        if !plain_continue(&outcome) && path_resolve::known_dir_served() {
            path_resolve::known_dirs_for_call(None);
            outcome = write_check::check(&s.fence, &mem, caller, &n, &call);
        }
        if bounded {
            threads.keep_memory(n.tid, n.nr, &kept, || caller.still_pending());
        }
        if !confirmed(&mem, &outcome) {
            s.listener.respond(n.id, Response::Error(libc::EFAULT));
            return false;
        }
        is_write = true;
        outcome
    } else if n.nr == libc::SYS_ioctl {
        // The filter sends only `shim::seccomp_filters::GUARDED_TERMINAL_REQUESTS`.
        if !s.own_pid_namespace && n.args[1] & 0xffff_ffff == libc::TIOCSPGRP {
            super::foreground::set_foreground(&s.foreground, &s.listener, &n, caller)
        } else {
            s.foreground.check()
        }
    } else if n.nr == libc::SYS_setpgid {
        super::foreground::setpgid(&s.foreground, &n, s.own_pid_namespace)
    } else {
        // A call the filter sends but no check owns: refuse.
        Outcome::failed(EventKind::Write, libc::EPERM)
    };
    if !outcome.allowed && !matches!(outcome.response, Response::Continue | Response::Value(_)) {
        s.counters.denied.fetch_add(1, Ordering::Relaxed);
    }
    question::settle(settle, n, caller, outcome, received) && is_write
}

/// The write check, with the caller's cwd kept from an earlier call where there is one
/// ([`super::kept_thread`]). Only for the writes Landlock bounds with one path (not a
/// symlink, whose relative target is judged from the folder it is made in, nor a link,
/// whose source the rules by name may look at in the folder it really lies in), whose
/// check carries nothing out itself (a metadata call's does) and whose one `CONTINUE` the
/// kernel bounds whatever the cwd really is, and not while decisions are logged (a record
/// names the path). A `CONTINUE` stands unless the rules by name looked at the filesystem
/// for it (a bare repository's `config` is known by the `HEAD` beside it, in the folder
/// the path really names: one renamed by another session or the host is not the kept
/// one). Any other answer reached from a kept cwd stands only if the cwd read now is the
/// same; otherwise it is worked out again from the one read. A cwd read for the call (for
/// any write, these others included) is kept for the next.
fn check_write(
    s: &Supervision,
    threads: &mut KeptThreads,
    kept: &mut Kept,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &super::listener::Notification,
    call: &write_check::FsCall,
) -> Outcome {
    let one_path = matches!(
        call,
        write_check::FsCall::Bounded { op, paths, link_source: None }
            if paths.len() == 1 && *op != "symlink"
    );
    if s.gate.logging() {
        return write_check::check(&s.fence, mem, caller, n, call);
    }
    let fresh = ProcessCwd::of(n.tid);
    if !one_path {
        // Checked from the cwd read now; kept for the calls after it (git links each new
        // object to its name, then removes the temporary one).
        let outcome = write_check::check_from(&s.fence, mem, caller, n, call, &fresh);
        if let Some(read) = fresh.read_now() {
            threads.keep(n.tid, read, || caller.still_pending());
        }
        return outcome;
    }
    if let Some(cwd) = kept.cwd.take() {
        let from_kept = ProcessCwd::kept(n.tid, cwd, kept.cwd_dir.clone());
        let outcome = write_check::check_from(&s.fence, mem, caller, n, call, &from_kept);
        let looked_by_name = || match &outcome.subject {
            Some(Subject::Path(p)) => super::fence::may_name_a_git_control(p),
            _ => true,
        };
        if !from_kept.consulted() {
            return outcome;
        }
        if plain_continue(&outcome) && !looked_by_name() {
            threads.keep_cwd_dir(n.tid, kept, || caller.still_pending());
            return outcome;
        }
        if matches!((fresh.base(), from_kept.base()), (Some(now), Some(kept)) if now == kept) {
            return outcome;
        }
    }
    let outcome = write_check::check_from(&s.fence, mem, caller, n, call, &fresh);
    if let Some(read) = fresh.read_now() {
        threads.keep(n.tid, read, || caller.still_pending());
    }
    outcome
}

/// An answer that lets the call run as the target made it, and nothing more.
fn plain_continue(outcome: &Outcome) -> bool {
    outcome.allowed
        && matches!(outcome.response, Response::Continue)
        && outcome.perform.is_none()
        && outcome.ask.is_none()
}

/// Whether the caller of the call just received most likely runs on this thread's CPU,
/// so that its answer should use the synchronous wake-up (scheduling, not confinement).
///
/// A synchronous wake-up puts the woken task on the waker's CPU. That is what makes a
/// notified call cheap when the caller has just woken this thread on its own CPU: the two
/// take turns there, and the other, idle, vCPU is never woken (here an idle vCPU halts,
/// and waking it costs some 15 µs). But a caller whose call waited while this thread
/// served another process's, on another CPU, would be pulled onto this CPU beside that
/// other process while its own CPU idles, until the load balancer notices (a tick or
/// more): measured on a `make -j2`, most of a 1.2× wall-clock ratio at 1.04× CPU time.
/// Such a caller gets the ordinary wake-up, which lets the scheduler place it. (Answers
/// sent from other threads — a question's, a network call's — use whichever the flag is
/// at that moment: their callers wait long enough that placement matters little.)
///
/// The caller is taken to be here when this thread was moved while it waited (the
/// caller's synchronous wake-up brought it from another CPU to the caller's), or when the
/// same thread made the previous call and this one reached this thread on the same CPU
/// (a process making calls in a row). Anything else — a call that was already queued, or
/// another thread's — gets the ordinary wake-up.
fn caller_on_this_cpu(
    cpu_before: i32,
    cpu: i32,
    last: Option<(libc::pid_t, i32)>,
    tid: libc::pid_t,
) -> bool {
    cpu != cpu_before || last == Some((tid, cpu))
}

fn current_cpu() -> i32 {
    // SAFETY: no arguments; reads the CPU from rseq or the vDSO (-1 on failure, which
    // leaves the rule of calls in a row).
    unsafe { libc::sched_getcpu() }
}

#[cfg(test)]
mod tests {
    use super::caller_on_this_cpu;

    #[test]
    fn only_a_caller_known_to_run_here_gets_the_synchronous_answer() {
        // Moved while waiting: woken from the caller's CPU.
        assert!(caller_on_this_cpu(0, 1, None, 7));
        assert!(caller_on_this_cpu(1, 0, Some((8, 1)), 7));
        // Calls in a row from one thread, on one CPU.
        assert!(caller_on_this_cpu(1, 1, Some((7, 1)), 7));
        // Not moved: a call that was queued, another thread's, or the same thread's last
        // call seen on another CPU.
        assert!(!caller_on_this_cpu(1, 1, None, 7));
        assert!(!caller_on_this_cpu(1, 1, Some((8, 1)), 7));
        assert!(!caller_on_this_cpu(1, 1, Some((7, 0)), 7));
    }
}

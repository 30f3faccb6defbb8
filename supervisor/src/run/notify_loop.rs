//! The notification loop: receives each notified call, routes it to its check, tells the
//! process why when it is refused, and answers.
//!
//! One receiving thread handles exec and filesystem calls inline: their checks read a few
//! bytes and /proc entries and never wait on another process, and with synchronous
//! wake-ups one thread is faster than several. Calls that may block (connect, sendto) get
//! a thread of their own, so no process ever waits on another's call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::blocked_reason;
use super::exec_check::{self, ExecPolicy};
use super::fence::Fence;
use super::listener::{Listener, Notification, Response};
use super::net_check;
use super::path_resolve::Caller;
use super::target_memory::TargetMemory;
use super::write_check;

/// Counters, read at the end of a session.
#[derive(Debug, Default)]
pub struct Counters {
    pub notifications: AtomicU64,
    pub denied: AtomicU64,
}

pub struct Supervision {
    pub listener: Arc<Listener>,
    pub fence: Arc<Fence>,
    pub policy: Arc<dyn ExecPolicy>,
    pub counters: Arc<Counters>,
}

/// Starts the loop on its own thread; it runs until the process exits.
pub fn spawn(s: Supervision) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("fence-notify".into())
        .spawn(move || run(s))?;
    Ok(())
}

fn run(s: Supervision) {
    loop {
        match s.listener.receive() {
            Ok(Some(n)) => handle(&s, n),
            // A caller gone before its call was received, or the end of the sandbox.
            Ok(None) if s.listener.hung_up() => return,
            Ok(None) => continue,
            // The listener is unusable: every later notified call fails with ENOSYS in the
            // target (the kernel's answer once no listener is left), which is closed.
            Err(_) => return,
        }
    }
}

fn handle(s: &Supervision, n: Notification) {
    s.counters.notifications.fetch_add(1, Ordering::Relaxed);
    let caller = Caller::new(n.tid);
    if n.nr == libc::SYS_connect || n.nr == libc::SYS_sendto {
        net_check::spawn(s.listener.clone(), s.fence.clone(), caller, n);
        return;
    }
    let mem = TargetMemory::new(&s.listener, &n);
    let (response, reason) = if n.nr == libc::SYS_execve || n.nr == libc::SYS_execveat {
        let d = exec_check::check(s.policy.as_ref(), &s.fence.worktree, &mem, caller, &n);
        (d.response, d.reason)
    } else if let Some(call) = write_check::decode(&n) {
        let d = write_check::check(&s.fence, &mem, caller, &call);
        (d.response, d.reason)
    } else {
        // A call the filter sends but no check owns: refuse.
        (Response::Error(libc::EPERM), None)
    };
    if response != Response::Continue && !matches!(response, Response::Value(_)) {
        s.counters.denied.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(reason) = reason.filter(|_| !s.fence.quiet_blocks) {
        blocked_reason::tell(caller, &reason);
    }
    s.listener.respond(n.id, response);
}

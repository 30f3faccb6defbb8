//! `connect` and addressed `sendto`: the supervisor performs them itself on the target's
//! socket (fetched with `pidfd_getfd`) with the address it checked, so a later change of
//! the target's memory or descriptor table cannot redirect them. A pathname unix socket
//! outside the fence (`/var/run/docker.sock`, an ssh-agent socket) is refused.
//!
//! These calls may block (a connect to a busy listener), so each runs on its own thread
//! and answers the notification from there; the loop never waits on it.

use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::time::Instant;

use super::acting::{TargetCredentials, act_as};
use super::blocked_reason::{self, BlockedReason};
use super::fence::Fence;
use super::listener::{Listener, Notification, Response};
use super::path_resolve::{self, Base, Caller, Resolution};
use super::pidfd;
use super::question::process_info;
use super::target_memory::TargetMemory;
use crate::gate::EventKind;
use crate::gate::decide::{Gate, Record, Subject};

/// Largest datagram performed for the target.
const MAX_DATAGRAM: u64 = 1 << 20;
const SOCKADDR_MAX: u64 = std::mem::size_of::<libc::sockaddr_storage>() as u64;

/// Handles one `connect` or `sendto` on a new thread.
pub fn spawn(
    listener: Arc<Listener>,
    fence: Arc<Fence>,
    gate: Arc<Gate>,
    caller: Caller,
    n: Notification,
) {
    let received = Instant::now();
    std::thread::spawn(move || {
        let mem = TargetMemory::new(&listener, &n);
        let (response, reason) = decide(&fence, &mem, caller, &n);
        if gate.logging() || reason.is_some() {
            let (event, subject) = address_of(&mem, &n);
            let process = gate.logging().then(|| process_info(caller));
            let allowed = reason.is_none() && response != Response::Error(libc::EACCES);
            gate.record(&Record {
                event,
                subject: &subject,
                process: process.as_ref(),
                level: if allowed { "green" } else { "red" },
                action: if allowed { "allow" } else { "deny" },
                rule: reason.as_ref().map_or("", |r| r.rule.as_str()),
                reason: reason.as_ref().map_or("", |r| r.what.as_str()),
                tid: n.tid,
                received,
            });
        }
        if let Some(reason) = reason.filter(|_| !fence.quiet_blocks) {
            blocked_reason::tell(caller, &reason);
        }
        listener.respond(n.id, response);
    });
}

/// The destination of a `connect`/`sendto` for the log: a unix socket's path, else the
/// address as `host:port` (IPv6 in brackets).
fn address_of(mem: &TargetMemory<'_>, n: &Notification) -> (EventKind, Subject) {
    let (addr, len) = if n.nr == libc::SYS_connect {
        (n.args[1], n.args[2])
    } else {
        (n.args[4], n.args[5])
    };
    let bytes = mem
        .bytes(addr, len.min(SOCKADDR_MAX) as usize)
        .unwrap_or_default();
    if let Some(path) = unix_socket_path(&bytes) {
        return (EventKind::Unix, Subject::Path(path.to_vec()));
    }
    let family = bytes
        .get(..2)
        .map(|b| u16::from_ne_bytes([b[0], b[1]]) as i32);
    let text = match family {
        Some(libc::AF_INET) if bytes.len() >= 8 => {
            let port = u16::from_be_bytes([bytes[2], bytes[3]]);
            let ip = std::net::Ipv4Addr::new(bytes[4], bytes[5], bytes[6], bytes[7]);
            format!("{ip}:{port}")
        }
        Some(libc::AF_INET6) if bytes.len() >= 24 => {
            let port = u16::from_be_bytes([bytes[2], bytes[3]]);
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&bytes[8..24]);
            format!("[{}]:{port}", std::net::Ipv6Addr::from(octets))
        }
        Some(libc::AF_UNIX) => "unix:abstract-or-unnamed".to_string(),
        Some(f) => format!("family {f}"),
        None => String::new(),
    };
    (EventKind::Connect, Subject::Addr(text))
}

fn decide(
    fence: &Fence,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
) -> (Response, Option<BlockedReason>) {
    let a = n.args;
    let is_connect = n.nr == libc::SYS_connect;
    let (fd, addr, len) = if is_connect {
        (a[0] as i32, a[1], a[2])
    } else {
        (a[0] as i32, a[4], a[5])
    };
    if len > SOCKADDR_MAX {
        return (Response::Error(libc::EINVAL), None);
    }
    let address = match mem.bytes(addr, len as usize) {
        Ok(b) => b,
        Err(_) => return (Response::Error(libc::EFAULT), None),
    };
    // Security boundary: fence performs the connect from outside the sandbox's Landlock
    // domain, so Landlock's abstract-socket scope does not apply to it. Only in the
    // sandbox's own network namespace (where the target's socket looks names up) are the
    // abstract sockets the sandbox's own; without one they are the host's.
    if is_abstract_unix(&address) && !fence.own_network {
        return (
            Response::Error(libc::EACCES),
            Some(BlockedReason {
                what:
                    "connection to an abstract unix socket (no network namespace to confine them)"
                        .into(),
                object: address[2..]
                    .iter()
                    .map(|&b| if b == 0 { b'@' } else { b })
                    .collect(),
                rule: "fence.unix-abstract".into(),
                answer: None,
            }),
        );
    }
    if let Some(path) = unix_socket_path(&address) {
        match path_resolve::resolve(caller, Base::Cwd, path, true) {
            Resolution::Path(p) if fence.root_of(&p).is_some() => {}
            // Nothing there: the connect fails as it would anyway (glibc probes for nscd
            // on every user lookup; that is no reason to shout).
            Resolution::Path(p) if !p.exists() => return (Response::Error(libc::ENOENT), None),
            Resolution::Path(p) => {
                return (
                    Response::Error(libc::EACCES),
                    Some(BlockedReason {
                        what: "connection to a unix socket outside the worktree".into(),
                        object: p.as_os_str().as_bytes().to_vec(),
                        rule: "fence.unix-outside".into(),
                        answer: None,
                    }),
                );
            }
            Resolution::Unresolvable(_) => {
                return (
                    Response::Error(libc::EACCES),
                    Some(BlockedReason {
                        what: "connection to a unix socket fence cannot resolve".into(),
                        object: path.to_vec(),
                        rule: "fence.unix-outside".into(),
                        answer: None,
                    }),
                );
            }
        }
    }
    let data = if is_connect {
        Vec::new()
    } else {
        if a[2] > MAX_DATAGRAM {
            return (Response::Error(libc::EMSGSIZE), None);
        }
        match mem.bytes(a[1], a[2] as usize) {
            Ok(d) => d,
            Err(_) => return (Response::Error(libc::EFAULT), None),
        }
    };
    let flags = a[3] as i32;
    let socket = match pidfd::open(caller).and_then(|p| pidfd::get_fd(&p, fd)) {
        Ok(s) => s,
        Err(_) => return (Response::Error(libc::EBADF), None),
    };
    let Ok(creds) = TargetCredentials::of_thread(caller.tid) else {
        return (Response::Error(libc::EPERM), None);
    };
    let result = act_as(&creds, move || {
        let sa = address.as_ptr() as *const libc::sockaddr;
        let salen = address.len() as libc::socklen_t;
        // SAFETY: `address` holds `salen` bytes read from the target; the kernel validates
        // the sockaddr. `data` is valid for its length. `socket` is our descriptor.
        let ret = unsafe {
            if is_connect {
                libc::connect(socket.as_raw_fd(), sa, salen) as isize
            } else {
                libc::sendto(
                    socket.as_raw_fd(),
                    data.as_ptr() as *const libc::c_void,
                    data.len(),
                    flags | libc::MSG_NOSIGNAL,
                    sa,
                    salen,
                )
            }
        };
        if ret < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(ret as i64)
        }
    });
    match result {
        Ok(v) => (Response::Value(v), None),
        Err(e) => (
            Response::Error(e.raw_os_error().unwrap_or(libc::EPERM)),
            None,
        ),
    }
}

/// Whether `address` is an abstract `AF_UNIX` address (a name starting with a NUL byte).
fn is_abstract_unix(address: &[u8]) -> bool {
    address.len() > 2
        && u16::from_ne_bytes([address[0], address[1]]) == libc::AF_UNIX as u16
        && address[2] == 0
}

/// The path of a pathname `AF_UNIX` address; `None` for abstract, unnamed and other
/// families (abstract sockets are confined by Landlock's scope or the network namespace).
fn unix_socket_path(address: &[u8]) -> Option<&[u8]> {
    if address.len() <= 2 || u16::from_ne_bytes([address[0], address[1]]) != libc::AF_UNIX as u16 {
        return None;
    }
    let path = &address[2..];
    if path[0] == 0 {
        return None;
    }
    Some(path.split(|&b| b == 0).next().unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pathname_unix_addresses_have_a_path() {
        let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(b"/run/docker.sock\0\0\0");
        assert_eq!(unix_socket_path(&a), Some(&b"/run/docker.sock"[..]));
        let mut abs = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        abs.extend_from_slice(b"\0abstract");
        assert_eq!(unix_socket_path(&abs), None);
        let inet = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        assert_eq!(unix_socket_path(&inet), None);
        assert!(is_abstract_unix(&abs));
        assert!(!is_abstract_unix(&a));
        assert!(!is_abstract_unix(&inet));
    }
}

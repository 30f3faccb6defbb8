//! The calls of `--allow-dns` on the sandbox's datagram sockets (the relay itself is
//! [`crate::net::dns`]).
//!
//! - `socket(AF_INET|AF_INET6, SOCK_DGRAM, 0|IPPROTO_UDP)` is answered with a stand-in: a
//!   unix `SOCK_SEQPACKET` socket whose other end only the relay holds, installed with
//!   `SECCOMP_IOCTL_NOTIF_ADDFD` + `SECCOMP_ADDFD_FLAG_SEND`. No real UDP socket ever
//!   exists in the sandbox, so no `sendmsg` address (which BPF cannot read) can matter.
//! - `connect`, addressed `sendto` and `bind` on a stand-in ([`on_stand_in`], called from
//!   `net_check`): the destination must be a system resolver on port 53. Security boundary:
//!   the relay checks the address it was handed, and nothing the sandbox sends reaches
//!   anything but the relay.
//! - `recvfrom` with an address argument ([`recvfrom`]): resolvers (glibc's `send_dg` with
//!   `res_ourserver_p`, musl's `res_msend`, c-ares) drop an answer whose source is not
//!   their server, and a stand-in has no inet source; the supervisor performs the receive
//!   on the stand-in and writes the data and the resolver's address into the caller. On any
//!   other socket the call goes on as made (`CONTINUE`): a receive never widens access.
//! - `setsockopt` at the IP levels: accepted without effect on a stand-in.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::acting::{TargetCredentials, act_as};
use super::listener::{Listener, Notification, Response};
use super::path_resolve::Caller;
use super::pidfd;
use super::target_memory::{MemoryError, TargetMemory};
use crate::net::dns::{DnsRelay, DnsSocket};

/// Largest receive performed for the target (the largest UDP payload, and more than any
/// answer the relay passes on).
const MAX_RECEIVE: usize = 65_536;
/// How often a waiting receive checks that its caller still waits.
const WAIT_SLICE: Duration = Duration::from_millis(200);

/// `socket` for an inet datagram socket: a stand-in, or the error the kernel would give.
pub fn socket(listener: &Listener, relay: &Arc<DnsRelay>, n: &Notification) -> Response {
    let family = n.args[0] as i32;
    let kind = n.args[1] as i32;
    let protocol = n.args[2] as i32;
    if family != libc::AF_INET && family != libc::AF_INET6 {
        return Response::Error(libc::EAFNOSUPPORT);
    }
    if kind & 0xf != libc::SOCK_DGRAM {
        return Response::Error(libc::EACCES);
    }
    if kind & !(0xf | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) != 0 {
        return Response::Error(libc::EINVAL);
    }
    if protocol != 0 && protocol != libc::IPPROTO_UDP {
        return Response::Error(libc::EPROTONOSUPPORT);
    }
    let upstreams = TargetCredentials::of_thread(n.tid).and_then(|creds| {
        // The credentials were read by tid: trusted only while the call still waits.
        if !listener.is_valid(n.id) {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        let relay = relay.clone();
        act_as(&creds, move || relay.upstream_sockets())
    });
    let upstreams = match upstreams {
        Ok(u) => u,
        Err(e) => return Response::Error(e.raw_os_error().unwrap_or(libc::ENOMEM)),
    };
    let end = match relay.open_socket(family, kind & libc::SOCK_NONBLOCK != 0, upstreams) {
        Ok(end) => end,
        Err(e) => return Response::Error(e.raw_os_error().unwrap_or(libc::ENOMEM)),
    };
    match listener.add_fd_and_answer(n.id, n.tid, &end, kind & libc::SOCK_CLOEXEC != 0) {
        Ok(_) => Response::Sent,
        // Our end closes with `end`; the relay thread then ends.
        Err(e) => Response::Error(e.raw_os_error().unwrap_or(libc::EMFILE)),
    }
}

/// The stand-in the target's descriptor `fd` is (recognised by the object fetched with
/// `pidfd_getfd`, never by the number), with our descriptor of it.
pub fn stand_in_of(relay: &DnsRelay, caller: Caller, fd: i32) -> Option<(OwnedFd, Arc<DnsSocket>)> {
    let socket = pidfd::open(caller)
        .and_then(|p| pidfd::get_fd(&p, fd))
        .ok()?;
    let found = relay.stand_in(&socket)?;
    Some((socket, found))
}

/// A destination as the network check read it.
#[derive(Debug, Clone, Copy)]
pub enum DnsDestination {
    Inet(SocketAddr),
    /// `AF_UNSPEC`: on `connect`, dissolves the association.
    Unspecified,
    Other,
}

/// What a call on a stand-in comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum DnsAnswer {
    /// Done; the call returns this value.
    Done(i64),
    Error(i32),
    /// Refused by the policy: the destination shown, and why.
    Refused {
        destination: String,
        why: &'static str,
    },
}

/// `connect`, addressed `sendto` (`data` is its payload) or `bind` on a stand-in.
pub fn on_stand_in(
    relay: &DnsRelay,
    socket: &DnsSocket,
    nr: i64,
    destination: DnsDestination,
    data: Option<&[u8]>,
) -> DnsAnswer {
    let addr = match destination {
        DnsDestination::Inet(a) if matches_family(socket.family, a) => a,
        DnsDestination::Unspecified if nr == libc::SYS_connect => {
            socket.connect(relay, None);
            return DnsAnswer::Done(0);
        }
        _ => return DnsAnswer::Error(libc::EAFNOSUPPORT),
    };
    match nr {
        // The local address of a stand-in is immaterial (musl binds the wildcard first).
        libc::SYS_bind => DnsAnswer::Done(0),
        libc::SYS_connect if relay.is_resolver(addr) => {
            socket.connect(relay, Some(addr));
            DnsAnswer::Done(0)
        }
        libc::SYS_sendto if relay.is_resolver(addr) => {
            let data = data.unwrap_or_default();
            if !crate::net::dns::is_query(data) {
                return DnsAnswer::Refused {
                    destination: addr.to_string(),
                    why: "datagram that is not a DNS query",
                };
            }
            match relay.send(socket, addr, data) {
                Ok(n) => DnsAnswer::Done(n as i64),
                Err(e) => DnsAnswer::Error(e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        libc::SYS_connect | libc::SYS_sendto => DnsAnswer::Refused {
            destination: addr.to_string(),
            why: "UDP to a destination other than the system resolvers (--allow-dns)",
        },
        _ => DnsAnswer::Error(libc::EPERM),
    }
}

/// Whether `addr` can be given to a socket of `family` (an IPv6 socket takes v4-mapped
/// addresses too).
fn matches_family(family: i32, addr: SocketAddr) -> bool {
    match addr {
        SocketAddr::V4(_) => family == libc::AF_INET,
        SocketAddr::V6(_) => family == libc::AF_INET6,
    }
}

/// `setsockopt` at an IP level (the only ones notified): accepted without effect on a
/// stand-in (glibc's resolver gives up on a socket refusing `IP_RECVERR`), let through on
/// any other socket, as it is without `--allow-dns`.
pub fn setsockopt(relay: &DnsRelay, caller: Caller, n: &Notification) -> Response {
    match stand_in_of(relay, caller, n.args[0] as i32) {
        Some(_) => Response::Value(0),
        None => Response::Continue,
    }
}

/// `recvfrom` with an address argument: performed on a stand-in on a thread of its own (it
/// may wait), else let through.
pub fn recvfrom(listener: Arc<Listener>, relay: &Arc<DnsRelay>, caller: Caller, n: Notification) {
    let Some((socket, stand_in)) = stand_in_of(relay, caller, n.args[0] as i32) else {
        listener.respond(n.id, Response::Continue);
        return;
    };
    // An answer already waiting (resolvers poll before they receive) is taken here; only a
    // receive that would wait gets a thread of its own.
    if let Some(response) = receive(&listener, relay, &n, &socket, &stand_in, false) {
        listener.respond(n.id, response);
        return;
    }
    let relay = relay.clone();
    let (id, answering) = (n.id, listener.clone());
    let spawned = std::thread::Builder::new().spawn(move || {
        if let Some(response) = receive(&listener, &relay, &n, &socket, &stand_in, true) {
            listener.respond(n.id, response);
        }
    });
    if spawned.is_err() {
        // No thread to wait on: the receive fails as one interrupted would.
        answering.respond(id, Response::Error(libc::EAGAIN));
    }
}

/// Receives one datagram from the stand-in and writes it, its source (the resolver it came
/// from) and the source's length into the caller, as `recvfrom` does. Waits as the socket
/// would: not at all when non-blocking (`O_NONBLOCK`, `MSG_DONTWAIT`), up to `SO_RCVTIMEO`
/// when set, and never past the caller's own end. With `may_wait` false, `None` when the
/// call would wait (nothing was taken or written).
fn receive(
    listener: &Listener,
    relay: &DnsRelay,
    n: &Notification,
    socket: &OwnedFd,
    stand_in: &DnsSocket,
    may_wait: bool,
) -> Option<Response> {
    let [_, buf, len, flags, addr, addrlen] = n.args;
    let flags = flags as i32;
    if flags & libc::MSG_ERRQUEUE != 0 {
        return Some(Response::Error(libc::EAGAIN));
    }
    if flags & libc::MSG_OOB != 0 {
        return Some(Response::Error(libc::EOPNOTSUPP));
    }
    let mem = TargetMemory::new(listener, n);
    let room = match mem.bytes(addrlen, 4) {
        Ok(b) => i32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
        Err(_) => return Some(Response::Error(libc::EFAULT)),
    };
    if room < 0 {
        return Some(Response::Error(libc::EINVAL));
    }
    // SAFETY: F_GETFL on our descriptor of the target's open file (its status flags).
    let status = unsafe { libc::fcntl(socket.as_raw_fd(), libc::F_GETFL) };
    let nonblocking = flags & libc::MSG_DONTWAIT != 0 || status & libc::O_NONBLOCK != 0;
    let deadline = receive_timeout(socket).map(|t| Instant::now() + t);
    let mut data = vec![0u8; (len as usize).min(MAX_RECEIVE)];
    let kept = flags & libc::MSG_TRUNC;
    // The datagram is only peeked at here, and taken off the queue once it has been
    // written into the caller and the call is known to be still pending: a caller gone
    // meanwhile (its thread killed) leaves it for whoever shares the socket.
    let got = loop {
        // SAFETY: recv into our buffer with its length, on our descriptor.
        let got = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                data.as_mut_ptr() as *mut libc::c_void,
                data.len(),
                kept | libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        if got >= 0 {
            break got as usize;
        }
        let err = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        if err != libc::EAGAIN || nonblocking {
            return Some(Response::Error(err));
        }
        if !may_wait {
            return None;
        }
        let mut slice = WAIT_SLICE;
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Some(Response::Error(libc::EAGAIN));
            }
            slice = slice.min(left);
        }
        let mut pfd = libc::pollfd {
            fd: socket.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll of one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, slice.as_millis() as libc::c_int) };
        if !listener.is_valid(n.id) {
            return Some(Response::Error(libc::EINTR));
        }
    };
    let copied = got.min(data.len());
    let Some(&fallback) = relay.resolvers().first() else {
        return Some(Response::Error(libc::EIO));
    };
    let source = sockaddr_of(
        stand_in.family,
        stand_in.source_of(&data[..copied], fallback),
    );
    let written = mem
        .write(buf, &data[..copied])
        .and_then(|()| mem.write(addr, &source[..source.len().min(room as usize)]))
        .and_then(|()| mem.write(addrlen, &(source.len() as u32).to_ne_bytes()));
    match written {
        Ok(()) => {}
        Err(MemoryError::Stale) => return Some(Response::Error(libc::EINTR)),
        Err(_) => return Some(Response::Error(libc::EFAULT)),
    }
    if flags & libc::MSG_PEEK == 0 {
        // Takes the datagram peeked at. Another thread of the target reading the same
        // socket (with `recv` or `read`, which are not notified) between the peek and this
        // could make this take the next one instead; two readers of one datagram socket
        // race for its datagrams without fence too.
        let mut discard = [0u8; 1];
        // SAFETY: recv into a one-byte buffer of ours; a seqpacket record is taken whole.
        unsafe {
            libc::recv(
                socket.as_raw_fd(),
                discard.as_mut_ptr() as *mut libc::c_void,
                discard.len(),
                libc::MSG_DONTWAIT,
            )
        };
    }
    Some(Response::Value(got as i64))
}

/// `SO_RCVTIMEO` of the socket; `None` when unset.
fn receive_timeout(socket: &OwnedFd) -> Option<Duration> {
    // SAFETY: timeval is plain data.
    let mut tv: libc::timeval = unsafe { std::mem::zeroed() };
    let mut size = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: getsockopt into a timeval with its size.
    let ret = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &mut tv as *mut libc::timeval as *mut libc::c_void,
            &mut size,
        )
    };
    let t = Duration::new(tv.tv_sec.max(0) as u64, (tv.tv_usec.max(0) as u32) * 1000);
    (ret == 0 && !t.is_zero()).then_some(t)
}

/// The sockaddr bytes of `addr` for a socket of `family` (an IPv4 source on an IPv6
/// socket becomes v4-mapped).
fn sockaddr_of(family: i32, addr: SocketAddr) -> Vec<u8> {
    let (ip, port) = (addr.ip(), addr.port());
    if family == libc::AF_INET6 {
        let v6 = match ip {
            std::net::IpAddr::V4(v4) => v4.to_ipv6_mapped(),
            std::net::IpAddr::V6(v6) => v6,
        };
        let mut b = vec![0u8; std::mem::size_of::<libc::sockaddr_in6>()];
        b[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        b[2..4].copy_from_slice(&port.to_be_bytes());
        b[8..24].copy_from_slice(&v6.octets());
        b
    } else {
        let mut b = vec![0u8; std::mem::size_of::<libc::sockaddr_in>()];
        b[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        b[2..4].copy_from_slice(&port.to_be_bytes());
        if let std::net::IpAddr::V4(v4) = ip.to_canonical() {
            b[4..8].copy_from_slice(&v4.octets());
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_reported_in_the_sockets_family() {
        let v4 = sockaddr_of(libc::AF_INET, "10.0.0.2:53".parse().unwrap());
        assert_eq!(v4.len(), std::mem::size_of::<libc::sockaddr_in>());
        assert_eq!(&v4[2..8], &[0, 53, 10, 0, 0, 2]);
        let mapped = sockaddr_of(libc::AF_INET6, "10.0.0.2:53".parse().unwrap());
        assert_eq!(mapped.len(), std::mem::size_of::<libc::sockaddr_in6>());
        assert_eq!(&mapped[18..24], &[0xff, 0xff, 10, 0, 0, 2]);
    }

    #[test]
    fn calls_on_a_stand_in_reach_only_the_system_resolvers() {
        let relay = Arc::new(DnsRelay::new(&["127.0.0.1".parse().unwrap()]));
        let up = relay.upstream_sockets().unwrap();
        let end = relay.open_socket(libc::AF_INET, true, up).unwrap();
        let s = relay.stand_in(&end).unwrap();
        let resolver = DnsDestination::Inet("127.0.0.1:53".parse().unwrap());
        let elsewhere = DnsDestination::Inet("127.0.0.1:5353".parse().unwrap());
        let v6 = DnsDestination::Inet("[::1]:53".parse().unwrap());
        assert_eq!(
            on_stand_in(&relay, &s, libc::SYS_connect, resolver, None),
            DnsAnswer::Done(0)
        );
        assert!(matches!(
            on_stand_in(&relay, &s, libc::SYS_connect, elsewhere, None),
            DnsAnswer::Refused { .. }
        ));
        assert!(matches!(
            on_stand_in(&relay, &s, libc::SYS_sendto, elsewhere, Some(b"x")),
            DnsAnswer::Refused { .. }
        ));
        assert!(matches!(
            on_stand_in(&relay, &s, libc::SYS_sendto, resolver, Some(b"not a query")),
            DnsAnswer::Refused { .. }
        ));
        assert_eq!(
            on_stand_in(&relay, &s, libc::SYS_connect, v6, None),
            DnsAnswer::Error(libc::EAFNOSUPPORT)
        );
        assert_eq!(
            on_stand_in(&relay, &s, libc::SYS_bind, elsewhere, None),
            DnsAnswer::Done(0)
        );
    }
}

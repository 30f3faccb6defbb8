//! The loopback table (SPEC §4): without a network namespace the sandbox shares the host's
//! loopback, so a connect to 127.0.0.0/8 or ::1 is allowed only when every listening
//! socket that could take it is one this sandbox bound.
//!
//! The table holds sockets, not port numbers: the inode of each socket the supervisor bound
//! or set listening for the sandbox. At connect time the listeners on the destination are
//! read from the kernel's socket tables (`/proc/net/tcp` and `tcp6`, in the supervisor's
//! network namespace, which is the sandbox's), and each must be one of ours. A port the
//! sandbox bound and closed, later taken by a host service, is then not ours: its socket
//! is another one. Reading two fixed-format text tables needs no crate; `procfs` would add a
//! dependency tree for these few lines.

use std::collections::HashSet;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;

/// `TCP_LISTEN`, the kernel's number for the listen state.
const TCP_LISTEN: u32 = 0x0a;

/// Sockets of this sandbox bound on loopback, by inode.
#[derive(Debug, Default)]
pub struct LoopbackTable {
    ours: Mutex<HashSet<u64>>,
}

/// A listening socket as the kernel lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listening {
    pub local: SocketAddr,
    pub inode: u64,
}

impl LoopbackTable {
    /// Records the socket with inode `inode` as bound by this sandbox.
    pub fn record(&self, inode: u64) {
        self.ours
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(inode);
    }

    pub fn contains(&self, inode: u64) -> bool {
        self.ours
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&inode)
    }

    /// Whether a connect to `dest` (a loopback address, normalised by
    /// [`connect_destination`]) can reach only sockets of this sandbox: at least one
    /// listener could take it, and all that could are ours. An unreadable socket table
    /// answers no (fail closed).
    pub fn reaches_only_ours(&self, dest: SocketAddr) -> bool {
        match listeners_on(dest.port()) {
            Ok(all) => self.only_ours_among(&all, dest),
            Err(_) => false,
        }
    }

    fn only_ours_among(&self, all: &[Listening], dest: SocketAddr) -> bool {
        let candidates: Vec<&Listening> = all.iter().filter(|l| may_accept(l, dest)).collect();
        !candidates.is_empty() && candidates.iter().all(|l| self.contains(l.inode))
    }

    /// Whether anything at all listens where `dest` leads.
    pub fn anything_listens(dest: SocketAddr) -> bool {
        listeners_on(dest.port()).is_ok_and(|all| all.iter().any(|l| may_accept(l, dest)))
    }
}

/// The address a connect to `addr` really goes to: an unspecified address means the
/// local host (the kernel connects to 127.0.0.1 or ::1), and a v4-mapped IPv6 address is
/// its IPv4 address.
pub fn connect_destination(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip().to_canonical() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

/// 127.0.0.0/8 and ::1 (after [`connect_destination`]).
pub fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Whether listener `l` could take a connection to `dest`: same port, and its address is
/// the destination or a wildcard covering it (an IPv6 wildcard may take IPv4 too, unless
/// it is v6-only, which the table does not show: counted as a candidate, the safe side).
fn may_accept(l: &Listening, dest: SocketAddr) -> bool {
    if l.local.port() != dest.port() {
        return false;
    }
    let local = l.local.ip();
    match (dest.ip(), local) {
        (IpAddr::V4(d), IpAddr::V4(a)) => a == d || a.is_unspecified(),
        (IpAddr::V4(d), IpAddr::V6(a)) => {
            a.is_unspecified()
                || a.to_ipv4_mapped() == Some(d)
                || a.to_ipv4_mapped() == Some(Ipv4Addr::UNSPECIFIED)
        }
        (IpAddr::V6(d), IpAddr::V6(a)) => a == d || a.is_unspecified(),
        (IpAddr::V6(_), IpAddr::V4(_)) => false,
    }
}

/// The listening TCP sockets on `port` of this network namespace (IPv4 and IPv6).
///
/// Asked of the kernel with one `sock_diag` netlink dump per family, restricted to the
/// listen state and the port: the kernel then walks only its table of listeners.
/// (`/proc/net/tcp` would list every connection, including thousands in TIME_WAIT after a
/// test suite's run, and costs milliseconds per read.) The request is two fixed structs;
/// the netlink crates would add a dependency tree for it.
pub fn listeners_on(port: u16) -> io::Result<Vec<Listening>> {
    let mut out = diag_dump(libc::AF_INET as u8, port)?;
    match diag_dump(libc::AF_INET6 as u8, port) {
        Ok(v6) => out.extend(v6),
        // A kernel without IPv6 has no IPv6 listener.
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
        Err(e) => return Err(e),
    }
    Ok(out)
}

const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_HDR: usize = 16;
/// `struct inet_diag_req_v2`: family, protocol, ext, pad, states, then the socket id.
const DIAG_REQ_LEN: usize = 56;
/// `struct inet_diag_msg`: family, state, timer, retrans, socket id (48 bytes), expires,
/// rqueue, wqueue, uid, inode.
const DIAG_MSG_LEN: usize = 72;

fn diag_dump(family: u8, port: u16) -> io::Result<Vec<Listening>> {
    // SAFETY: socket() with constant arguments; the descriptor is owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor, owned from here on.
    let sock = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let fd = std::os::fd::AsRawFd::as_raw_fd(&sock);

    let mut req = [0u8; NLMSG_HDR + DIAG_REQ_LEN];
    req[0..4].copy_from_slice(&((NLMSG_HDR + DIAG_REQ_LEN) as u32).to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    req[6..8].copy_from_slice(&flags.to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes());
    let body = &mut req[NLMSG_HDR..];
    body[0] = family;
    body[1] = libc::IPPROTO_TCP as u8;
    body[4..8].copy_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
    body[8..10].copy_from_slice(&port.to_be_bytes());
    // SAFETY: sending a valid buffer on our socket (to the kernel: no address needed).
    if unsafe { libc::send(fd, req.as_ptr() as *const libc::c_void, req.len(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }

    let mut out = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        // SAFETY: receiving into a buffer we own, of its length.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::other("sock_diag: connection closed"));
        }
        if parse_diag_messages(&buf[..n as usize], &mut out)? {
            return Ok(out);
        }
    }
}

/// Parses one netlink datagram of a sock_diag dump into `out`; true once the dump is done.
fn parse_diag_messages(mut data: &[u8], out: &mut Vec<Listening>) -> io::Result<bool> {
    let bad = || io::Error::other("sock_diag: malformed answer");
    while data.len() >= NLMSG_HDR {
        let len = u32::from_ne_bytes(data[0..4].try_into().map_err(|_| bad())?) as usize;
        let kind = u16::from_ne_bytes([data[4], data[5]]);
        if len < NLMSG_HDR || len > data.len() {
            return Err(bad());
        }
        let body = &data[NLMSG_HDR..len];
        match kind as i32 {
            libc::NLMSG_DONE => return Ok(true),
            libc::NLMSG_ERROR => {
                let errno = body
                    .get(0..4)
                    .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                    .ok_or_else(bad)?;
                return Err(io::Error::from_raw_os_error(-errno));
            }
            _ if kind == SOCK_DIAG_BY_FAMILY => {
                if body.len() < DIAG_MSG_LEN {
                    return Err(bad());
                }
                out.push(parse_diag_msg(body).ok_or_else(bad)?);
            }
            _ => {}
        }
        // Messages are aligned to 4 bytes.
        let next = (len + 3) & !3;
        data = data.get(next..).unwrap_or(&[]);
    }
    Ok(false)
}

fn parse_diag_msg(m: &[u8]) -> Option<Listening> {
    let family = m[0] as i32;
    let port = u16::from_be_bytes([m[4], m[5]]);
    let src = &m[8..24];
    let ip = match family {
        libc::AF_INET => IpAddr::V4(Ipv4Addr::new(src[0], src[1], src[2], src[3])),
        libc::AF_INET6 => {
            let mut b = [0u8; 16];
            b.copy_from_slice(src);
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    let inode = u32::from_ne_bytes(m[68..72].try_into().ok()?);
    Some(Listening {
        local: SocketAddr::new(ip, port),
        inode: inode as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_lists_a_listener_with_its_inode() {
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // SAFETY: fstat into a zeroed buffer on a descriptor we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::fstat(l.as_raw_fd(), &mut st) }, 0);
        let found = listeners_on(port).unwrap();
        assert_eq!(
            found,
            vec![Listening {
                local: l.local_addr().unwrap(),
                inode: st.st_ino
            }]
        );
        let table = LoopbackTable::default();
        let dest = l.local_addr().unwrap();
        assert!(!table.reaches_only_ours(dest));
        table.record(st.st_ino);
        assert!(table.reaches_only_ours(dest));
        drop(l);
        assert!(
            !table.reaches_only_ours(dest),
            "a closed socket is no one's"
        );
        assert!(!LoopbackTable::anything_listens(dest));
    }

    #[test]
    fn a_truncated_or_failed_dump_is_an_error() {
        let mut out = Vec::new();
        let mut err = vec![0u8; 20];
        err[0..4].copy_from_slice(&20u32.to_ne_bytes());
        err[4..6].copy_from_slice(&(libc::NLMSG_ERROR as u16).to_ne_bytes());
        err[16..20].copy_from_slice(&(-libc::EPERM).to_ne_bytes());
        assert_eq!(
            parse_diag_messages(&err, &mut out)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EPERM)
        );
        let mut short = vec![0u8; 16];
        short[0..4].copy_from_slice(&40u32.to_ne_bytes());
        assert!(parse_diag_messages(&short, &mut out).is_err());
    }

    #[test]
    fn a_port_is_ours_only_when_every_listener_that_could_take_it_is() {
        let table = LoopbackTable::default();
        table.record(1);
        let l = |a: &str, inode| Listening {
            local: a.parse().unwrap(),
            inode,
        };
        let dest: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert!(table.only_ours_among(&[l("127.0.0.1:8080", 1)], dest));
        assert!(!table.only_ours_among(&[], dest), "nothing listens");
        assert!(!table.only_ours_among(&[l("127.0.0.1:8080", 2)], dest));
        assert!(
            !table.only_ours_among(&[l("127.0.0.1:8080", 1), l("[::]:8080", 3)], dest),
            "a host wildcard listener could take it"
        );
        assert!(!table.only_ours_among(&[l("0.0.0.0:8080", 3)], dest));
        assert!(table.only_ours_among(&[l("127.0.0.1:8080", 1), l("127.0.0.2:8080", 9)], dest));
        let v6: SocketAddr = "[::1]:8080".parse().unwrap();
        assert!(!table.only_ours_among(&[l("127.0.0.1:8080", 1)], v6));
        assert!(!table.only_ours_among(&[l("[::ffff:127.0.0.1]:8080", 5)], dest));
    }

    #[test]
    fn unspecified_and_mapped_destinations_are_the_local_host() {
        let d = |s: &str| connect_destination(s.parse().unwrap());
        assert_eq!(d("0.0.0.0:80"), "127.0.0.1:80".parse().unwrap());
        assert_eq!(d("[::]:80"), "[::1]:80".parse().unwrap());
        assert_eq!(d("[::ffff:127.0.0.9]:80"), "127.0.0.9:80".parse().unwrap());
        assert!(is_loopback(d("[::ffff:0.0.0.0]:1").ip()));
        assert!(!is_loopback(d("10.1.2.3:1").ip()));
    }
}

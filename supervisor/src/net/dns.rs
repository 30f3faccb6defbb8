//! The DNS relay of `--allow-dns` (SPEC §4): the sandbox's only UDP, to the system
//! resolvers only.
//!
//! The sandbox never holds a real UDP socket. An inet `SOCK_DGRAM` socket it asks for is a
//! unix `SOCK_SEQPACKET` stand-in ([`DnsRelay::open_socket`]) whose other end only the
//! relay holds: whatever the sandbox sends on it, with whatever address, reaches this
//! relay and nothing else (the kernel drops the address given to `sendto`/`sendmsg` on a
//! connected seqpacket socket). The relay sends what parses as a DNS query to a system
//! resolver from a UDP socket of its own, and passes back what a system resolver answers.
//!
//! Security boundary: the destination of every datagram the relay sends is a system
//! resolver on port 53 ([`DnsRelay::is_resolver`]), checked here, on values the sandbox
//! cannot change afterwards. Policy (not a boundary): a datagram must look like a DNS query
//! and nothing else ([`is_query`]), an answer like a DNS response.
//!
//! Each stand-in has a thread that waits on its end and on its upstream sockets, and ends
//! when the sandbox has closed every descriptor of its end.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

/// The DNS port: the only one the relay sends to.
pub const DNS_PORT: u16 = 53;
/// Largest datagram relayed either way (the largest UDP payload).
const MAX_DATAGRAM: usize = 65_507;
/// Most stand-ins open at once in a session (each holds a thread and three descriptors).
const MAX_SOCKETS: usize = 256;
/// Answers remembered per stand-in, to report each one's source to `recvfrom`.
const ANSWERS_KEPT: usize = 16;

/// The `nameserver` addresses of a resolv.conf text, in order, and a warning for each
/// entry that cannot be used.
pub fn parse_resolv_conf(text: &str) -> (Vec<IpAddr>, Vec<String>) {
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("nameserver") {
            continue;
        }
        let Some(value) = words.next() else {
            continue;
        };
        if value.contains('%') {
            // A scoped link-local address names an interface of the host: not relayed.
            warnings.push(format!(
                "nameserver {value}: scoped addresses are not supported by --allow-dns (skipped)"
            ));
            continue;
        }
        match value.parse::<IpAddr>() {
            Ok(ip) if !found.contains(&ip.to_canonical()) => found.push(ip.to_canonical()),
            Ok(_) => {}
            Err(_) => warnings.push(format!("nameserver {value}: not an IP address (skipped)")),
        }
    }
    (found, warnings)
}

/// Whether `data` is a DNS query and nothing else (policy: the relay carries DNS, not
/// arbitrary datagrams): a header with QR = 0, opcode QUERY, one to eight questions and no
/// answer or authority records; each question a name of labels (at most 63 bytes each, 255
/// in all, no compression pointer: a stub resolver's query has nothing to point back to),
/// a type and a class; at most one additional record, EDNS's OPT (root name, type 41)
/// whose options fill its data exactly; and the datagram ends there. Bytes after the last
/// record, or records a stub resolver never sends, are refused: what the datagram can carry
/// beyond a query is then the names asked, as with any resolver.
///
/// Written by hand: the message is read, never built or answered, and the full DNS
/// libraries' parsers accept far more (updates, every record type) than a stub resolver's
/// query may hold.
pub fn is_query(data: &[u8]) -> bool {
    if data.len() < 12 || data.len() > MAX_DATAGRAM {
        return false;
    }
    let count = |at: usize| u16::from_be_bytes([data[at], data[at + 1]]);
    let (questions, answers, authority, additional) = (count(4), count(6), count(8), count(10));
    if data[2] & 0x80 != 0
        || (data[2] >> 3) & 0x0f != 0
        || !(1..=8).contains(&questions)
        || answers != 0
        || authority != 0
        || additional > 1
    {
        return false;
    }
    let mut at = 12;
    for _ in 0..questions {
        let Some(end) = name_end(data, at) else {
            return false;
        };
        // QTYPE and QCLASS.
        at = end + 4;
        if at > data.len() {
            return false;
        }
    }
    if additional == 1 {
        // OPT: the root name (one zero byte), type 41, class (the UDP size), TTL (extended
        // code and flags), then the length of its options.
        if data.len() < at + 11 || data[at] != 0 || data[at + 1..at + 3] != [0, 41] {
            return false;
        }
        let rdlength = usize::from(count(at + 9));
        at += 11;
        let Some(options_end) = at.checked_add(rdlength).filter(|&e| e <= data.len()) else {
            return false;
        };
        while at < options_end {
            if at + 4 > options_end {
                return false;
            }
            at += 4 + usize::from(count(at + 2));
        }
        if at != options_end {
            return false;
        }
    }
    at == data.len()
}

/// Where the uncompressed domain name at `at` in `data` ends (just past its zero byte),
/// if it is one: labels of 1 to 63 bytes, 255 bytes in all.
fn name_end(data: &[u8], mut at: usize) -> Option<usize> {
    let start = at;
    loop {
        let len = usize::from(*data.get(at)?);
        if len == 0 {
            return (at + 1 - start <= 255).then_some(at + 1);
        }
        // 0xc0: a compression pointer; 0x40 and 0x80: label types no query uses.
        if len > 63 {
            return None;
        }
        at += 1 + len;
        if at - start > 255 {
            return None;
        }
    }
}

/// Whether `data` looks like a DNS response (a full header with QR = 1).
fn is_response(data: &[u8]) -> bool {
    data.len() >= 12 && data[2] & 0x80 != 0
}

/// The session's relay: the system resolvers and the stand-ins open.
#[derive(Debug)]
pub struct DnsRelay {
    resolvers: Vec<SocketAddr>,
    sockets: Mutex<HashMap<u64, Arc<DnsSocket>>>,
}

/// The relay's own UDP sockets for one stand-in.
#[derive(Debug)]
pub struct Upstreams {
    v4: Option<UdpSocket>,
    v6: Option<UdpSocket>,
}

/// One stand-in for an inet datagram socket of the sandbox.
#[derive(Debug)]
pub struct DnsSocket {
    /// `AF_INET` or `AF_INET6`, as the sandbox asked: the family of the addresses reported.
    pub family: i32,
    relay_end: OwnedFd,
    upstream_v4: Option<UdpSocket>,
    upstream_v6: Option<UdpSocket>,
    /// The resolver the sandbox `connect`ed the socket to: where datagrams sent without an
    /// address go.
    peer: Mutex<Option<SocketAddr>>,
    /// The latest answers passed to the sandbox, with the resolver each came from.
    answers: Mutex<VecDeque<(Vec<u8>, SocketAddr)>>,
}

impl DnsRelay {
    /// A relay to `resolvers` (port 53 each).
    pub fn new(resolvers: &[IpAddr]) -> DnsRelay {
        DnsRelay {
            resolvers: resolvers
                .iter()
                .map(|ip| SocketAddr::new(ip.to_canonical(), DNS_PORT))
                .collect(),
            sockets: Mutex::new(HashMap::new()),
        }
    }

    /// The system resolvers, port 53.
    pub fn resolvers(&self) -> &[SocketAddr] {
        &self.resolvers
    }

    /// Whether `addr` (v4-mapped or not) is a system resolver on port 53.
    pub fn is_resolver(&self, addr: SocketAddr) -> bool {
        let addr = SocketAddr::new(addr.ip().to_canonical(), addr.port());
        self.resolvers.contains(&addr)
    }

    /// The UDP sockets a stand-in's queries leave from, one per family of the resolvers.
    /// Made on a thread holding the sandbox's credentials (`run::acting`), so that the
    /// sockets are owned by the sandbox's user (as a firewall's owner match sees them).
    pub fn upstream_sockets(&self) -> io::Result<Upstreams> {
        let upstream = |v6: bool| -> io::Result<Option<UdpSocket>> {
            if !self.resolvers.iter().any(|r| r.is_ipv6() == v6) {
                return Ok(None);
            }
            let any: SocketAddr = if v6 { "[::]:0" } else { "0.0.0.0:0" }
                .parse()
                .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            let s = UdpSocket::bind(any)?;
            s.set_nonblocking(true)?;
            Ok(Some(s))
        };
        Ok(Upstreams {
            v4: upstream(false)?,
            v6: upstream(true)?,
        })
    }

    /// Makes a stand-in for an inet datagram socket of `family`, sending through
    /// `upstreams`, and starts its relay thread. Returns the sandbox's end (non-blocking
    /// when asked; the caller installs it in the target).
    pub fn open_socket(
        self: &Arc<Self>,
        family: i32,
        nonblocking: bool,
        upstreams: Upstreams,
    ) -> io::Result<OwnedFd> {
        if self.sockets.lock().map(|s| s.len()).unwrap_or(MAX_SOCKETS) >= MAX_SOCKETS {
            return Err(io::Error::from_raw_os_error(libc::EMFILE));
        }
        let mut fds = [0; 2];
        // SAFETY: socketpair writes two descriptors into `fds`.
        let ret = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: two fresh descriptors, owned from here on.
        let (sandbox_end, relay_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        set_nonblocking(&relay_end)?;
        if nonblocking {
            set_nonblocking(&sandbox_end)?;
        }
        let socket = Arc::new(DnsSocket {
            family,
            relay_end,
            upstream_v4: upstreams.v4,
            upstream_v6: upstreams.v6,
            peer: Mutex::new(None),
            answers: Mutex::new(VecDeque::new()),
        });
        let key = cookie(&sandbox_end)?;
        if let Ok(mut s) = self.sockets.lock() {
            s.insert(key, socket.clone());
        }
        let relay = self.clone();
        std::thread::Builder::new()
            .name("fence-dns".into())
            .spawn(move || {
                relay.carry(&socket);
                if let Ok(mut s) = relay.sockets.lock() {
                    s.remove(&key);
                }
            })?;
        Ok(sandbox_end)
    }

    /// Waits, at most `limit`, until every stand-in's relay thread has ended: at the end of
    /// the session the sandbox's ends are closed, and each thread first carries out the
    /// datagrams still queued on its end (a process that sent a query and exited at once
    /// has it sent, as the kernel would have sent a real socket's), then ends.
    pub fn wait_idle(&self, limit: std::time::Duration) {
        let deadline = std::time::Instant::now() + limit;
        while self.sockets.lock().map(|s| !s.is_empty()).unwrap_or(false)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// The stand-in `socket` is (a descriptor fetched from the target), if it is one.
    pub fn stand_in(&self, socket: &OwnedFd) -> Option<Arc<DnsSocket>> {
        let key = cookie(socket).ok()?;
        let found = self.sockets.lock().ok()?.get(&key).cloned()?;
        // The socket cookie is the identity; the type confirms it cheaply (a stand-in is
        // the only seqpacket socket an inet call can name here).
        (socket_type(socket) == Some(libc::SOCK_SEQPACKET)).then_some(found)
    }

    /// Sends `data` to the resolver `dest` for `socket` (an addressed `sendto`, or a
    /// datagram the sandbox sent on a connected stand-in). Refuses (EACCES) any
    /// destination but a system resolver on port 53, and (policy) what is not a DNS query.
    pub fn send(&self, socket: &DnsSocket, dest: SocketAddr, data: &[u8]) -> io::Result<usize> {
        if !self.is_resolver(dest) || !is_query(data) {
            return Err(io::Error::from_raw_os_error(libc::EACCES));
        }
        let dest = SocketAddr::new(dest.ip().to_canonical(), dest.port());
        let upstream = if dest.is_ipv6() {
            &socket.upstream_v6
        } else {
            &socket.upstream_v4
        };
        match upstream {
            Some(u) => u.send_to(data, dest),
            None => Err(io::Error::from_raw_os_error(libc::ENETUNREACH)),
        }
    }

    /// The relay thread of one stand-in: queries from the sandbox out, answers back in,
    /// until the sandbox has closed its end.
    fn carry(&self, socket: &DnsSocket) {
        let mut buf = vec![0u8; MAX_DATAGRAM + 1];
        let upstreams: Vec<&UdpSocket> = [&socket.upstream_v4, &socket.upstream_v6]
            .into_iter()
            .flatten()
            .collect();
        loop {
            let mut fds = vec![libc::pollfd {
                fd: socket.relay_end.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            fds.extend(upstreams.iter().map(|u| libc::pollfd {
                fd: u.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }));
            // SAFETY: poll on descriptors we own, with the array's length.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if ready < 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return;
            }
            let end = fds[0].revents;
            let closed = end & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0;
            if end & libc::POLLIN != 0 {
                let Ok(peer) = socket.peer.lock() else {
                    return;
                };
                let n = socket.take_datagram(&mut buf);
                // Once closed, a read finds what is left and then nothing (poll reports
                // the closed end as readable too).
                if n.is_none() && closed {
                    return;
                }
                // Without a resolver connected, a datagram has no destination: dropped, as
                // a datagram is that no one can receive.
                if let (Some(n), Some(dest)) = (n, *peer) {
                    let _ = self.send(socket, dest, &buf[..n]);
                }
            } else if closed {
                return;
            }
            for (u, p) in upstreams.iter().zip(&fds[1..]) {
                if p.revents & libc::POLLIN == 0 {
                    continue;
                }
                while let Ok((n, from)) = u.recv_from(&mut buf) {
                    if n > MAX_DATAGRAM || !self.is_resolver(from) || !is_response(&buf[..n]) {
                        continue;
                    }
                    let from = SocketAddr::new(from.ip().to_canonical(), from.port());
                    if let Ok(mut a) = socket.answers.lock() {
                        if a.len() >= ANSWERS_KEPT {
                            a.pop_front();
                        }
                        a.push_back((buf[..n].to_vec(), from));
                    }
                    // SAFETY: send of our buffer's first `n` bytes on our descriptor. A full
                    // queue drops the answer, as a full UDP receive buffer would.
                    unsafe {
                        libc::send(
                            socket.relay_end.as_raw_fd(),
                            buf.as_ptr() as *const libc::c_void,
                            n,
                            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                        )
                    };
                }
            }
        }
    }
}

impl DnsSocket {
    /// Records the resolver the sandbox connected the socket to (`None`: dissolved). The
    /// datagrams the sandbox sent before go where they were sent: to the resolver connected
    /// then, or nowhere (the relay thread takes datagrams under the same lock).
    pub fn connect(&self, relay: &DnsRelay, peer: Option<SocketAddr>) {
        let Ok(mut p) = self.peer.lock() else {
            return;
        };
        let mut buf = vec![0u8; MAX_DATAGRAM + 1];
        while let Some(n) = self.take_datagram(&mut buf) {
            if let Some(dest) = *p {
                let _ = relay.send(self, dest, &buf[..n]);
            }
        }
        *p = peer;
    }

    /// The next datagram the sandbox sent, if one is queued (a larger one than the relay
    /// carries is taken and dropped).
    fn take_datagram(&self, buf: &mut [u8]) -> Option<usize> {
        loop {
            // SAFETY: recv into our buffer with its length, on our descriptor.
            let n = unsafe {
                libc::recv(
                    self.relay_end.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            match n {
                n if n > 0 && (n as usize) <= MAX_DATAGRAM => return Some(n as usize),
                n if n > 0 => continue,
                _ => return None,
            }
        }
    }

    /// The resolver an answer the sandbox received came from: the latest relayed answer
    /// that starts with `received`, else the connected resolver, else `fallback`.
    pub fn source_of(&self, received: &[u8], fallback: SocketAddr) -> SocketAddr {
        let answered = self.answers.lock().ok().and_then(|a| {
            a.iter()
                .rev()
                .find(|(bytes, _)| bytes.starts_with(received))
                .map(|(_, from)| *from)
        });
        answered
            .or_else(|| self.peer.lock().ok().and_then(|p| *p))
            .unwrap_or(fallback)
    }
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on our own descriptor with flag values.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0
        || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `SO_COOKIE` (Linux 4.13; the asm-generic number, which x86, arm, riscv and powerpc
/// share). Neither libc nor nix names it for these targets.
const SO_COOKIE: libc::c_int = 57;

/// The socket's cookie: a 64-bit number the kernel gives each socket once and never hands
/// out again, unlike an inode number, which a later socket can get once this one is gone.
/// Security boundary: it is the stand-in's identity (what [`DnsRelay::stand_in`] trusts).
fn cookie(fd: &OwnedFd) -> io::Result<u64> {
    let mut value: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: getsockopt into a u64 with its size, on our own descriptor.
    let ret = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_COOKIE,
            (&mut value as *mut u64).cast(),
            &mut len,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    if len as usize != std::mem::size_of::<u64>() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    Ok(value)
}

fn socket_type(fd: &OwnedFd) -> Option<i32> {
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into a c_int with its size.
    let ret = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            &mut kind as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    (ret == 0).then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query() -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        q.extend_from_slice(b"\x07example\x03com\x00\x00\x01\x00\x01");
        q
    }

    #[test]
    fn resolv_conf_nameservers_are_read_in_order() {
        let text = "# comment\nsearch example.com\nnameserver 10.0.0.2\nnameserver ::1\n\
                    nameserver fe80::1%eth0\nnameserver bogus\nnameserver 10.0.0.2\noptions ndots:1\n";
        let (ips, warnings) = parse_resolv_conf(text);
        assert_eq!(
            ips,
            vec![
                "10.0.0.2".parse::<IpAddr>().unwrap(),
                "::1".parse().unwrap()
            ]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(parse_resolv_conf("search x\n").0.is_empty());
    }

    #[test]
    fn only_dns_queries_are_relayed() {
        assert!(is_query(&query()));
        let mut response = query();
        response[2] |= 0x80;
        assert!(!is_query(&response));
        assert!(is_response(&response));
        let mut no_question = query();
        no_question[5] = 0;
        assert!(!is_query(&no_question));
        let mut update = query();
        update[2] = 5 << 3;
        assert!(!is_query(&update));
        assert!(!is_query(b"hello world"));
        assert!(!is_query(&vec![0u8; MAX_DATAGRAM + 1]));
    }

    #[test]
    fn a_query_carries_nothing_but_its_questions_and_edns() {
        // A valid header and then bytes that are no question section.
        let mut smuggled = query()[..12].to_vec();
        smuggled.extend_from_slice(b"RAW-EXFIL-PAYLOAD not a question section");
        assert!(!is_query(&smuggled));
        // Bytes after a valid question.
        let mut trailing = query();
        trailing.extend_from_slice(b"payload");
        assert!(!is_query(&trailing));
        // A question cut short, a compression pointer, a label over 63 bytes, a name over 255.
        assert!(!is_query(&query()[..query().len() - 1]));
        let mut pointer = query()[..12].to_vec();
        pointer.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01");
        assert!(!is_query(&pointer));
        let mut long_label = query()[..12].to_vec();
        long_label.push(64);
        long_label.extend_from_slice(&[b'a'; 64]);
        long_label.extend_from_slice(b"\x00\x00\x01\x00\x01");
        assert!(!is_query(&long_label));
        let mut long_name = query()[..12].to_vec();
        for _ in 0..5 {
            long_name.push(63);
            long_name.extend_from_slice(&[b'a'; 63]);
        }
        long_name.extend_from_slice(b"\x00\x00\x01\x00\x01");
        assert!(!is_query(&long_name));
        // Answer or authority records, or an additional record that is no OPT.
        for at in [7, 9] {
            let mut q = query();
            q[at] = 1;
            assert!(!is_query(&q));
        }
        let mut not_opt = query();
        not_opt[11] = 1;
        not_opt.extend_from_slice(b"\x00\x00\x01\x00\x01\x00\x00\x00\x00\x00\x04abcd");
        assert!(!is_query(&not_opt));

        // Two questions (glibc's A and AAAA travel separately, but others pair them).
        let mut two = query();
        two[5] = 2;
        two.extend_from_slice(b"\x07example\x03com\x00\x00\x1c\x00\x01");
        assert!(is_query(&two));
        // EDNS: an OPT record, empty or with a cookie, is a query; its options must fill it.
        let mut edns = query();
        edns[11] = 1;
        edns.extend_from_slice(b"\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00");
        assert!(is_query(&edns));
        let mut cookie = query();
        cookie[11] = 1;
        cookie.extend_from_slice(b"\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x0c");
        cookie.extend_from_slice(b"\x00\x0a\x00\x08abcdefgh");
        assert!(is_query(&cookie));
        let mut overlong_option = cookie.clone();
        let last = overlong_option.len() - 9;
        overlong_option[last] = 0x09;
        assert!(!is_query(&overlong_option));
        let mut after_opt = edns.clone();
        after_opt.push(0);
        assert!(!is_query(&after_opt));
    }

    #[test]
    fn only_system_resolvers_on_port_53_are_destinations() {
        let relay = DnsRelay::new(&["10.0.0.2".parse().unwrap(), "::1".parse().unwrap()]);
        assert!(relay.is_resolver("10.0.0.2:53".parse().unwrap()));
        assert!(relay.is_resolver("[::ffff:10.0.0.2]:53".parse().unwrap()));
        assert!(relay.is_resolver("[::1]:53".parse().unwrap()));
        assert!(!relay.is_resolver("10.0.0.2:5353".parse().unwrap()));
        assert!(!relay.is_resolver("10.0.0.3:53".parse().unwrap()));
    }

    #[test]
    fn a_stand_in_reaches_only_its_relay_and_is_known_by_its_object() {
        let relay = Arc::new(DnsRelay::new(&["127.0.0.1".parse().unwrap()]));
        let up = relay.upstream_sockets().unwrap();
        let end = relay.open_socket(libc::AF_INET, true, up).unwrap();
        let found = relay.stand_in(&end).expect("the stand-in is known");
        assert_eq!(found.family, libc::AF_INET);
        let other: OwnedFd = std::fs::File::open("/dev/null").unwrap().into();
        assert!(relay.stand_in(&other).is_none());
        // A duplicate is the same socket; another seqpacket socket is not a stand-in.
        assert!(relay.stand_in(&end.try_clone().unwrap()).is_some());
        let mut fds = [0; 2];
        // SAFETY: socketpair writes two descriptors into `fds`.
        let ret =
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0, fds.as_mut_ptr()) };
        assert_eq!(ret, 0);
        // SAFETY: two fresh descriptors, owned from here on.
        let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        assert!(relay.stand_in(&pair.0).is_none());
        assert!(relay.stand_in(&pair.1).is_none());
        assert_ne!(cookie(&pair.0).unwrap(), cookie(&pair.1).unwrap());
        assert_ne!(cookie(&pair.0).unwrap(), cookie(&end).unwrap());
        assert_eq!(
            cookie(&end).unwrap(),
            cookie(&end.try_clone().unwrap()).unwrap()
        );
        // A datagram to somewhere else is refused before anything is sent.
        assert_eq!(
            relay
                .send(&found, "127.0.0.2:53".parse().unwrap(), &query())
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EACCES)
        );
        assert_eq!(
            relay
                .send(&found, "127.0.0.1:53".parse().unwrap(), b"not dns")
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EACCES)
        );
        let fallback: SocketAddr = "127.0.0.1:53".parse().unwrap();
        assert_eq!(found.source_of(b"x", fallback), fallback);
        // Closing the sandbox's end ends the relay thread, which forgets the stand-in.
        drop(found);
        drop(end);
        for _ in 0..100 {
            if relay.sockets.lock().unwrap().is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the relay thread did not end when the sandbox's end was closed");
    }
}

//! The network fence of `fence run` (SPEC §4): `connect`, addressed `sendto`, and — without
//! a network namespace — `bind` and `listen`.
//!
//! Security boundary: every one of these calls that is allowed is performed by the
//! supervisor itself, on the target's socket fetched with `pidfd_getfd`, with the address
//! it read and checked, from a thread holding the target's credentials ([`act_as`]); a
//! later change of the target's memory or descriptor table cannot redirect it. The only
//! `CONTINUE` is a pathname or abstract unix `bind`, which Landlock bounds either way (the
//! socket file is a file creation; a swap to an inet address meets Landlock's refusal of
//! every TCP bind of the target), and, under `--allow-dns`, a `bind` in the sandbox's own
//! network namespace, which is notified only for the DNS stand-ins' sake ([`dns_call`]).
//!
//! - Unix sockets: a pathname socket outside the writable roots is refused unless allowed
//!   with `--allow-unix`. The path is opened (`O_PATH`, with the target's credentials) and
//!   the object actually opened is checked and connected to through `/proc/self/fd/N`, so
//!   a symlink swapped between check and connect changes nothing.
//! - Inet: destinations an `--allow-net` rule covers (the domain proxy's among them), and
//!   loopback. With a network namespace loopback is the sandbox's own; without one the
//!   [`LoopbackTable`] decides (a connect reaches only sockets the sandbox bound), every
//!   inet bind is made on loopback (a wildcard becomes 127.0.0.1, or ::1 on an IPv6-only
//!   socket and `::ffff:127.0.0.1` on a dual-stack one, so a server in the
//!   sandbox is never reachable from the network), and `listen` on an unbound socket binds
//!   it to loopback first (the kernel would bind the wildcard). Any other destination is a
//!   question through the gate ([`unknown_destination`]), except link-local and metadata
//!   addresses, which are refused unasked.
//!
//! These calls may block (a connect to a busy listener), so each runs on its own thread
//! and answers the notification from there; the loop never waits on it.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::acting::{TargetCredentials, act_as};
use super::blocked_reason::{self, BlockedReason};
use super::dns_call::{self, DnsAnswer, DnsDestination};
use super::fence::Fence;
use super::listener::{Listener, Notification, Response};
use super::loopback_table::{self, LoopbackTable};
use super::path_resolve::{self, Base, Caller, Resolution};
use super::pidfd;
use super::question::{answer_text, process_info};
use super::target_memory::TargetMemory;
use super::view::{self, View};
use super::workers;
use crate::gate::decide::{CallKey, Gate, ProcessInfo, Record, Request, Subject};
use crate::gate::{Destination, EventKind, Level, Route};
use crate::net::allow::AllowedDestinations;
use crate::net::dns::DnsRelay;
use crate::net::peer_process::ProxyClients;

/// Largest datagram performed for the target.
const MAX_DATAGRAM: u64 = 1 << 20;
const SOCKADDR_MAX: u64 = std::mem::size_of::<libc::sockaddr_storage>() as u64;

/// The session's network policy as the supervisor checks it.
#[derive(Debug, Default)]
pub struct NetFence {
    /// The sandbox has its own network namespace (its abstract unix names and loopback are
    /// its own).
    pub own_netns: bool,
    /// Without a network namespace: the sockets the sandbox bound on the host's loopback.
    /// `None` when the sandbox has its own network namespace (its loopback is its own), and
    /// without one below Landlock ABI 4 (no inet stream sockets, so nothing to listen on).
    pub loopback: Option<LoopbackTable>,
    /// Pathname unix sockets outside the writable roots opened on purpose (`--allow-unix`,
    /// canonical).
    pub allow_unix: Vec<PathBuf>,
    /// Destinations outside loopback reachable directly (`--allow-net`, names resolved).
    pub allowed: AllowedDestinations,
    /// `--allow-dns`: the relay behind the sandbox's datagram sockets ([`dns_call`]).
    pub dns: Option<Arc<DnsRelay>>,
    /// `--resolve` mappings: the name shown beside an address in a question.
    pub names: Vec<(String, IpAddr)>,
    /// Who connected to the domain proxy, by local port (the proxy names its clients).
    pub proxy_clients: Arc<ProxyClients>,
    /// With the sandbox's own network namespace: which of its sockets are the host's.
    pub host_sockets: HostSockets,
}

/// `SO_NETNS_COOKIE` (Linux 5.14; not in the `libc` crate for this target): the cookie of
/// the network namespace a socket belongs to.
const SO_NETNS_COOKIE: libc::c_int = 71;

/// Tells the sockets of fence's own network namespace (the host's) from the sandbox's,
/// where the sandbox has a namespace of its own. The sandbox holds host sockets: each
/// connection fence made for it ([`connect_allowed`]), and any descriptor inherited from
/// outside. A connect or addressed send fence performed on one would leave from the
/// host's namespace — its loopback services, its routes — while the checks took the
/// socket for the sandbox's (whose loopback is its own). So none is performed on a host
/// socket, the `AF_UNSPEC` connect that would disconnect one included: a connection fence
/// made stays the one it checked.
#[derive(Debug, Default)]
pub struct HostSockets {
    /// The host namespace's cookie, compared with each socket's.
    cookie: Option<u64>,
    /// Where the kernel has no namespace cookie (5.13): the inodes of the sockets fence
    /// installed (a socket's inode stays while any descriptor of it is open).
    installed: std::sync::Mutex<std::collections::HashSet<u64>>,
}

impl HostSockets {
    /// Reads the cookie of fence's own network namespace from a socket made for it.
    pub fn probe() -> HostSockets {
        // SAFETY: socket() with constant arguments; owned below.
        let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        let cookie = (raw >= 0)
            .then(|| {
                // SAFETY: a fresh descriptor, owned from here on.
                let probe = unsafe { OwnedFd::from_raw_fd(raw) };
                netns_cookie(&probe).ok()
            })
            .flatten();
        HostSockets {
            cookie,
            installed: Default::default(),
        }
    }

    /// Remembers a socket fence installed in the sandbox.
    fn record(&self, socket: &OwnedFd) {
        if self.cookie.is_none()
            && let Ok(inode) = socket_inode(socket)
        {
            self.installed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(inode);
        }
    }

    /// Whether `socket` belongs to the host's network namespace; `Err` holds the errno to
    /// answer (ENOTSOCK for a descriptor that is no socket). A socket whose namespace
    /// cannot be read counts as the host's.
    fn holds(&self, socket: &OwnedFd) -> Result<bool, i32> {
        match self.cookie {
            Some(host) => match netns_cookie(socket) {
                Ok(cookie) => Ok(cookie == host),
                Err(e) if e.raw_os_error() == Some(libc::ENOTSOCK) => Err(libc::ENOTSOCK),
                Err(_) => Ok(true),
            },
            None => Ok(socket_inode(socket).map_or(true, |inode| {
                self.installed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .contains(&inode)
            })),
        }
    }
}

/// The cookie of the network namespace `socket` belongs to.
fn netns_cookie(socket: &OwnedFd) -> io::Result<u64> {
    let mut value: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: getsockopt into a u64 with its size.
    let ret = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_NETNS_COOKIE,
            &mut value as *mut u64 as *mut libc::c_void,
            &mut len,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value)
}

/// The answer to a connect or addressed send on a host socket (see [`HostSockets`]).
fn on_host_socket(caller: Caller, call: &'static str, destination: String) -> Outcome {
    let d = decision(call, caller, destination, "fence.net-host-socket", false);
    Outcome::refused(
        libc::EACCES,
        &format!(
            "{call} on a socket of the host's network (a connection fence made, or a descriptor from outside): it would leave from the host, not the sandbox"
        ),
        d,
    )
}

/// With the sandbox's own network namespace, the target's socket `fd` for a call to an
/// address other than a pathname unix socket (whose path is checked in every
/// namespace), fetched and checked to be the sandbox's own (see [`HostSockets`]); `None`
/// without that namespace or for a pathname. `Err` holds the answer.
fn own_socket(
    net: &NetFence,
    caller: Caller,
    fd: i32,
    address: &Address,
    call: &'static str,
) -> Result<Option<(OwnedFd, TargetCredentials)>, Box<Outcome>> {
    if !net.own_netns || matches!(address, Address::UnixPath(_)) {
        return Ok(None);
    }
    let (socket, creds) = target_socket(caller, fd).map_err(|e| Box::new(Outcome::error(e)))?;
    match net.host_sockets.holds(&socket) {
        Ok(false) => Ok(Some((socket, creds))),
        Ok(true) => Err(Box::new(on_host_socket(caller, call, address.shown()))),
        Err(errno) => Err(Box::new(Outcome::error(errno))),
    }
}

/// One decision on a network call: what was asked, where to, under which rule. This is
/// the record of a connection decision (for the transcript and the audit log); a refused
/// one also becomes the blocked reason on the process's stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionDecision {
    /// `connect`, `bind`, `listen`, `sendto`.
    pub call: &'static str,
    /// The destination (or local address) as shown to a person.
    pub destination: String,
    /// The rule that decided (a fence rule id, or the `--allow-net` rule as written).
    pub rule: String,
    pub allowed: bool,
    /// Thread id of the caller.
    pub pid: libc::pid_t,
}

impl ConnectionDecision {
    fn blocked_reason(&self, what: &str) -> Option<BlockedReason> {
        (!self.allowed).then(|| BlockedReason {
            what: what.into(),
            object: self.destination.clone().into_bytes(),
            rule: self.rule.clone(),
            answer: None,
        })
    }

    /// The kind of event and its subject, as the gate's log and transcript show them.
    fn event(&self) -> (EventKind, Subject) {
        let event = match self.call {
            "bind" | "listen" => EventKind::Bind,
            _ if self.rule.starts_with("fence.unix") || self.rule == "fence.allow-unix" => {
                EventKind::Unix
            }
            _ => EventKind::Connect,
        };
        let subject = if event == EventKind::Unix && self.destination.starts_with('/') {
            Subject::Path(self.destination.clone().into_bytes())
        } else {
            Subject::Addr(self.destination.clone())
        };
        (event, subject)
    }

    /// Records the decision with the gate: a refusal as a transcript line, and every
    /// decision in the audit log when there is one.
    fn record(&self, gate: &Gate, reason: Option<&BlockedReason>, received: Instant) {
        if !gate.logging() && self.allowed {
            return;
        }
        let (event, subject) = self.event();
        let caller = Caller::new(self.pid);
        let process = gate.logging().then(|| process_info(caller));
        let mut extra = serde_json::Map::new();
        if event == EventKind::Connect {
            extra.insert("route".into(), "direct".into());
        }
        gate.record_with(
            &Record {
                event,
                subject: &subject,
                process: process.as_ref(),
                level: if self.allowed { "green" } else { "red" },
                action: if self.allowed { "allow" } else { "deny" },
                rule: &self.rule,
                reason: reason.map_or("", |r| r.what.as_str()),
                tid: self.pid,
                received,
            },
            extra,
        );
    }
}

/// Handles one network call on a thread of its own (a waiting worker's, [`workers`]).
pub fn spawn(
    listener: Arc<Listener>,
    fence: Arc<Fence>,
    net: Arc<NetFence>,
    gate: Arc<Gate>,
    caller: Caller,
    n: Notification,
) {
    let received = Instant::now();
    let (id, answering, quiet) = (n.id, listener.clone(), fence.quiet_blocks);
    let spawned = workers::run("fence-net", move || {
        let mem = TargetMemory::new(&listener, &n);
        let call = Call {
            listener: &listener,
            gate: &gate,
            n: &n,
            caller,
            received,
        };
        let outcome = decide(&call, &fence, &net, &mem);
        if let Some(d) = &outcome.decision {
            d.record(&gate, outcome.reason.as_ref(), received);
        }
        if let Some(reason) = outcome.reason.filter(|_| !fence.quiet_blocks) {
            blocked_reason::tell(caller, &reason);
        }
        listener.respond(n.id, outcome.response);
    });
    if spawned.is_err() {
        // No thread for the call (the supervisor's threads or its user's processes are at
        // their limit, which a sandbox holding many calls in a blocking connect reaches):
        // the call is refused, and the loop that handed it over goes on.
        if !quiet {
            blocked_reason::tell(caller, &no_thread_reason());
        }
        answering.respond(id, Response::Error(libc::EAGAIN));
    }
}

/// The reason given for a network call refused because no thread could be started for it.
pub fn no_thread_reason() -> BlockedReason {
    BlockedReason {
        what: "network call".into(),
        object: b"no thread left in fence to perform it".to_vec(),
        rule: "fence.supervisor-limit".into(),
        answer: None,
    }
}

/// What the supervisor answers, why, and the decision record when a destination was
/// judged.
#[derive(Debug)]
pub struct Outcome {
    pub response: Response,
    pub reason: Option<BlockedReason>,
    pub decision: Option<ConnectionDecision>,
}

impl Outcome {
    fn error(errno: i32) -> Outcome {
        Outcome {
            response: Response::Error(errno),
            reason: None,
            decision: None,
        }
    }

    fn from_result(result: io::Result<i64>) -> Outcome {
        match result {
            Ok(v) => Outcome {
                response: Response::Value(v),
                reason: None,
                decision: None,
            },
            Err(e) => Outcome::error(e.raw_os_error().unwrap_or(libc::EPERM)),
        }
    }

    fn refused(errno: i32, what: &str, decision: ConnectionDecision) -> Outcome {
        Outcome {
            response: Response::Error(errno),
            reason: decision.blocked_reason(what),
            decision: Some(decision),
        }
    }

    fn with_decision(mut self, decision: ConnectionDecision) -> Outcome {
        self.decision = Some(decision);
        self
    }
}

/// A socket address read from the target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Address {
    /// A pathname unix socket (without the trailing NULs).
    UnixPath(Vec<u8>),
    /// An abstract or unnamed unix address (abstract sockets are confined by Landlock's
    /// scope or the network namespace).
    UnixOther,
    Inet(SocketAddr),
    /// `AF_UNSPEC`: on `connect`, dissolves an association.
    Unspecified,
    Other(u16),
}

impl Address {
    /// The address as a person reads it in a reason or the log.
    fn shown(&self) -> String {
        match self {
            Address::UnixPath(path) => String::from_utf8_lossy(path).into_owned(),
            Address::UnixOther => "abstract unix address".to_string(),
            Address::Inet(addr) => addr.to_string(),
            Address::Unspecified => "AF_UNSPEC (disconnect)".to_string(),
            Address::Other(family) => format!("address family {family}"),
        }
    }
}

fn parse_address(bytes: &[u8]) -> Option<Address> {
    if bytes.len() < 2 {
        return None;
    }
    let family = u16::from_ne_bytes([bytes[0], bytes[1]]) as i32;
    let port = || u16::from_be_bytes([bytes[2], bytes[3]]);
    Some(match family {
        libc::AF_UNIX => match bytes.get(2) {
            Some(&b) if b != 0 => {
                let path = &bytes[2..];
                Address::UnixPath(path.split(|&b| b == 0).next().unwrap_or(path).to_vec())
            }
            _ => Address::UnixOther,
        },
        // The kernel refuses shorter addresses (EINVAL) for these families.
        libc::AF_INET if bytes.len() >= 16 => {
            let ip = Ipv4Addr::new(bytes[4], bytes[5], bytes[6], bytes[7]);
            Address::Inet(SocketAddr::new(IpAddr::V4(ip), port()))
        }
        libc::AF_INET6 if bytes.len() >= 24 => {
            let mut b = [0u8; 16];
            b.copy_from_slice(&bytes[8..24]);
            Address::Inet(SocketAddr::new(IpAddr::V6(Ipv6Addr::from(b)), port()))
        }
        libc::AF_INET | libc::AF_INET6 => return None,
        libc::AF_UNSPEC => Address::Unspecified,
        other => Address::Other(other as u16),
    })
}

/// The notified call being decided, and where its questions go.
struct Call<'a> {
    listener: &'a Listener,
    gate: &'a Gate,
    n: &'a Notification,
    caller: Caller,
    received: Instant,
}

/// Decides one network call and performs it when allowed.
fn decide(call: &Call<'_>, fence: &Fence, net: &NetFence, mem: &TargetMemory<'_>) -> Outcome {
    let (n, caller) = (call.n, call.caller);
    let a = n.args;
    let fd = a[0] as i32;
    // The descriptor first, as the kernel looks at it before the address: a call on one
    // that is no socket fails as it fails bare (not as a destination refused).
    if let Some(errno) = not_a_socket(caller, fd) {
        return Outcome::error(errno);
    }
    if n.nr == libc::SYS_listen {
        return listen(net, caller, fd, a[1] as i32);
    }
    let (addr, len) = match n.nr {
        libc::SYS_sendto => (a[4], a[5]),
        _ => (a[1], a[2]),
    };
    if len > SOCKADDR_MAX {
        return Outcome::error(libc::EINVAL);
    }
    let Ok(bytes) = mem.bytes(addr, len as usize) else {
        return Outcome::error(libc::EFAULT);
    };
    let Some(address) = parse_address(&bytes) else {
        return Outcome::error(libc::EINVAL);
    };
    if let Some(relay) = &net.dns
        && let Some(outcome) = dns_socket_call(relay, net, mem, caller, n, &address)
    {
        return outcome;
    }
    match n.nr {
        libc::SYS_bind => bind(fence, net, caller, fd, address, bytes),
        libc::SYS_connect => connect(call, fence, net, fd, address, bytes),
        libc::SYS_sendto => {
            if a[2] > MAX_DATAGRAM {
                return Outcome::error(libc::EMSGSIZE);
            }
            let Ok(data) = mem.bytes(a[1], a[2] as usize) else {
                return Outcome::error(libc::EFAULT);
            };
            sendto(fence, net, caller, fd, address, bytes, data, a[3] as i32)
        }
        // A call the filter sends but no check here owns: refuse.
        _ => Outcome::error(libc::EPERM),
    }
}

/// `--allow-dns`: a `connect`, addressed `sendto` or `bind` on one of the relay's
/// stand-ins is answered from the relay ([`dns_call::on_stand_in`]); `None` for any other
/// socket, except a `bind` where there is no loopback table (`net.loopback` is `None`):
/// there `bind` is notified only for the stand-ins' sake and goes to the kernel as it
/// would without `--allow-dns`. That is the sandbox's own network namespace, and also no
/// network namespace below Landlock ABI 4, where the static filter refuses inet stream
/// sockets and every inet datagram socket is a stand-in, so the only other inet sockets
/// are descriptors inherited from outside — which `bind` reaches without the flag too.
fn dns_socket_call(
    relay: &DnsRelay,
    net: &NetFence,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
    address: &Address,
) -> Option<Outcome> {
    let Some((_, socket)) = dns_call::stand_in_of(relay, caller, n.args[0] as i32) else {
        // A pathname bind makes a name: carried out by `bind` in every mode.
        let names_a_file = matches!(address, Address::UnixPath(_));
        return (n.nr == libc::SYS_bind && net.loopback.is_none() && !names_a_file).then_some(
            Outcome {
                response: Response::Continue,
                reason: None,
                decision: None,
            },
        );
    };
    let data = if n.nr == libc::SYS_sendto {
        if n.args[2] > MAX_DATAGRAM {
            return Some(Outcome::error(libc::EMSGSIZE));
        }
        match mem.bytes(n.args[1], n.args[2] as usize) {
            Ok(d) => Some(d),
            Err(_) => return Some(Outcome::error(libc::EFAULT)),
        }
    } else {
        None
    };
    let destination = match address {
        Address::Inet(a) => DnsDestination::Inet(*a),
        Address::Unspecified => DnsDestination::Unspecified,
        _ => DnsDestination::Other,
    };
    let call = if n.nr == libc::SYS_sendto {
        "sendto"
    } else {
        "connect"
    };
    Some(
        match dns_call::on_stand_in(relay, &socket, n.nr, destination, data.as_deref()) {
            DnsAnswer::Done(v) => {
                let outcome = Outcome::from_result(Ok(v));
                match destination {
                    DnsDestination::Inet(a) if n.nr != libc::SYS_bind => outcome.with_decision(
                        decision(call, caller, a.to_string(), "fence.allow-dns", true),
                    ),
                    _ => outcome,
                }
            }
            DnsAnswer::Error(errno) => Outcome::error(errno),
            DnsAnswer::Refused { destination, why } => Outcome::refused(
                libc::EACCES,
                why,
                decision(call, caller, destination, "fence.dns-outside", false),
            ),
        },
    )
}

/// The target's socket `fd` and the credentials to act with.
/// The error is the errno to answer.
fn target_socket(caller: Caller, fd: i32) -> Result<(OwnedFd, TargetCredentials), i32> {
    let socket = pidfd::open(caller)
        .and_then(|p| pidfd::get_fd(&p, fd))
        .map_err(|_| libc::EBADF)?;
    let creds = TargetCredentials::of_thread(caller.tid).map_err(|_| libc::EPERM)?;
    // The credentials were read by tid: trusted only while the call still waits.
    if !caller.still_pending() {
        return Err(libc::EPERM);
    }
    Ok((socket, creds))
}

/// The kernel's answer to a socket call on the caller's descriptor `fd` when it is no
/// socket: EBADF when the caller has no such descriptor, ENOTSOCK for another kind of file;
/// `None` for a socket, or one that cannot be fetched to be looked at.
fn not_a_socket(caller: Caller, fd: i32) -> Option<i32> {
    let file = match pidfd::open(caller).and_then(|p| pidfd::get_fd(&p, fd)) {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::EBADF) => return Some(libc::EBADF),
        // Not fetched for another reason (a process that made itself undumpable, the caller
        // gone): left to the checks that follow, as before this look.
        Err(_) => return None,
    };
    // SAFETY: fstat of our own descriptor into a zeroed stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
        return Some(libc::EBADF);
    }
    (st.st_mode & libc::S_IFMT != libc::S_IFSOCK).then_some(libc::ENOTSOCK)
}

fn decision(
    call: &'static str,
    caller: Caller,
    destination: String,
    rule: &str,
    allowed: bool,
) -> ConnectionDecision {
    ConnectionDecision {
        call,
        destination,
        rule: rule.to_string(),
        allowed,
        pid: caller.tid,
    }
}

fn connect(
    call: &Call<'_>,
    fence: &Fence,
    net: &NetFence,
    fd: i32,
    address: Address,
    bytes: Vec<u8>,
) -> Outcome {
    let caller = call.caller;
    let fetched = match own_socket(net, caller, fd, &address, "connect") {
        Ok(fetched) => fetched,
        Err(outcome) => return *outcome,
    };
    match address {
        Address::UnixPath(path) => {
            let (socket, creds) = match target_socket(caller, fd) {
                Ok(s) => s,
                Err(errno) => return Outcome::error(errno),
            };
            unix_to_path(fence, net, caller, &creds, &path, move |sa, salen| {
                // SAFETY: `sa` points at `salen` valid bytes of a sockaddr_un.
                unsafe { libc::connect(socket.as_raw_fd(), sa, salen) as isize }
            })
        }
        Address::Inet(addr) => connect_inet(call, net, fd, addr, bytes, fetched),
        Address::UnixOther if !net.own_netns => abstract_outside_netns(caller),
        Address::UnixOther | Address::Unspecified => match fetched {
            Some((socket, creds)) => connect_as(socket, &creds, bytes),
            None => perform_connect(caller, fd, bytes),
        },
        Address::Other(_) => Outcome::error(libc::EAFNOSUPPORT),
    }
}

/// A connect to an inet address: a destination an `--allow-net` rule covers (loopback
/// included: a rule for 127.0.0.1:5432 opens the host's service), else loopback (the
/// sandbox's own servers), else an unknown destination. `fetched` is the target's socket,
/// fetched and checked to be the sandbox's own where it has its own network namespace.
fn connect_inet(
    call: &Call<'_>,
    net: &NetFence,
    fd: i32,
    addr: SocketAddr,
    bytes: Vec<u8>,
    fetched: Option<(OwnedFd, TargetCredentials)>,
) -> Outcome {
    let (listener, id, caller) = (call.listener, call.n.id, call.caller);
    let dest = loopback_table::connect_destination(addr);
    // In the sandbox's own network namespace the socket's type decides first, and the
    // socket is used for the connect made at once.
    let fetched = match fetched {
        Some((socket, creds)) => match connect_datagram(net, caller, socket, creds, dest, &bytes) {
            Err(outcome) => return *outcome,
            Ok(stream) => Some(stream),
        },
        None => None,
    };
    if let Some(rule) = net.allowed.rule_for(dest) {
        let d = decision("connect", caller, dest.to_string(), rule, true);
        let outcome =
            connect_allowed(listener, id, net, caller, fd, bytes, fetched).with_decision(d);
        if rule == PROXY_RULE {
            remember_proxy_client(net, caller, fd);
        }
        return outcome;
    }
    if !loopback_table::is_loopback(dest.ip()) {
        if is_metadata_or_link_local(dest.ip()) {
            let d = decision(
                "connect",
                caller,
                dest.to_string(),
                "fence.net-metadata",
                false,
            );
            return Outcome::refused(
                libc::EACCES,
                "connection to a link-local or cloud metadata address",
                d,
            );
        }
        let kind = if crate::net::allow::is_address_of_this_machine(dest.ip()) {
            &UNKNOWN_HOST_ADDRESS
        } else {
            &UNKNOWN_OUTSIDE
        };
        return unknown_destination(call, net, fd, dest, bytes, kind);
    }
    let Some(table) = &net.loopback else {
        // The sandbox's own network namespace: its loopback holds nothing of the host's.
        let d = decision(
            "connect",
            caller,
            dest.to_string(),
            "fence.net-loopback",
            true,
        );
        let outcome = match fetched {
            Some((socket, creds)) => connect_as(socket, &creds, bytes),
            None => perform_connect(caller, fd, bytes),
        };
        return outcome.with_decision(d);
    };
    if !table.reaches_only_ours(dest) {
        if !LoopbackTable::anything_listens(dest) {
            // Nothing there: refused as the kernel would (a test suite polling for its
            // server to come up sees the usual answer), nothing to report.
            return Outcome::error(libc::ECONNREFUSED);
        }
        return unknown_destination(call, net, fd, dest, bytes, &UNKNOWN_HOST_LOOPBACK);
    }
    let (socket, creds) = match target_socket(caller, fd) {
        Ok(s) => s,
        Err(errno) => return Outcome::error(errno),
    };
    let result = act_as(&creds, move || {
        // A non-blocking socket answers EINPROGRESS, but on loopback the SYN has reached
        // its listener during the call: it is checked after it all the same.
        match connect_socket(&socket, &bytes) {
            Ok(()) => Ok((Ok(0), socket)),
            Err(err) if err.raw_os_error() == Some(libc::EINPROGRESS) => Ok((Err(err), socket)),
            Err(err) => Err(err),
        }
    });
    let d = decision(
        "connect",
        caller,
        dest.to_string(),
        "fence.net-loopback",
        true,
    );
    match result {
        Ok((v, socket)) => {
            // Checked again after the connect: the listener that was ours before and is
            // ours after took this connection (a port has one listener at a time, and a
            // socket does not come back once closed).
            if table.reaches_only_ours(dest) {
                Outcome::from_result(v).with_decision(d)
            } else {
                // SAFETY: shutdown on our own descriptor of the target's socket.
                unsafe { libc::shutdown(socket.as_raw_fd(), libc::SHUT_RDWR) };
                let d = decision(
                    "connect",
                    caller,
                    dest.to_string(),
                    "fence.net-host-loopback",
                    false,
                );
                Outcome::refused(
                    libc::ECONNREFUSED,
                    "connection to a host service on loopback",
                    d,
                )
            }
        }
        Err(e) => Outcome::from_result(Err(e)).with_decision(d),
    }
}

/// A `connect` on a datagram (UDP) socket in the sandbox's own network namespace, where
/// the static filter lets them be made (`None` for any other socket: the stream path
/// decides). Such a socket lives in that namespace, whose only interface is its loopback:
/// a connect to loopback is made on it as asked (a test suite's UDP client, glibc sorting
/// the addresses of `localhost`), and one to any other address is refused with a reason,
/// where the kernel would only say ENETUNREACH. Nothing is asked: a person's Yes could not
/// be carried out (a host UDP socket installed for the sandbox would send to any address
/// `sendmsg` names, which no filter reads). `Err` holds the answer for a datagram socket;
/// any other socket is handed back (`Ok`) with the target's credentials.
fn connect_datagram(
    net: &NetFence,
    caller: Caller,
    socket: OwnedFd,
    creds: TargetCredentials,
    dest: SocketAddr,
    bytes: &[u8],
) -> Result<(OwnedFd, TargetCredentials), Box<Outcome>> {
    if !is_datagram(&socket) {
        return Ok((socket, creds));
    }
    if !loopback_table::is_loopback(dest.ip()) {
        return Err(Box::new(datagram_outside(net, caller, dest, "connect")));
    }
    let d = decision(
        "connect",
        caller,
        dest.to_string(),
        "fence.net-loopback",
        true,
    );
    Err(Box::new(
        connect_as(socket, &creds, bytes.to_vec()).with_decision(d),
    ))
}

/// Whether `socket` is a datagram socket (`SO_TYPE`). An error counts as a stream socket,
/// whose path checks and performs every destination.
fn is_datagram(socket: &OwnedFd) -> bool {
    socket_int_option(socket, libc::SO_TYPE).is_ok_and(|kind| kind == libc::SOCK_DGRAM)
}

/// A datagram for an address outside the sandbox's own network namespace: refused with
/// ENETUNREACH (what that namespace's routes would say) and a reason line.
fn datagram_outside(
    net: &NetFence,
    caller: Caller,
    dest: SocketAddr,
    call: &'static str,
) -> Outcome {
    let hint = if dest.port() == 53 && net.dns.is_none() {
        " (DNS: a host named with --allow-domain is reached through fence's proxy without a lookup; --allow-dns lets lookups out)"
    } else {
        ""
    };
    let d = decision(call, caller, dest.to_string(), "fence.net-datagram", false);
    Outcome::refused(
        libc::ENETUNREACH,
        &format!("UDP outside the sandbox's own loopback{hint}"),
        d,
    )
}

/// An abstract unix address without a network namespace. Abstract names are per network
/// namespace; without one of its own the sandbox shares the host's, where Landlock's scope
/// confines the target's own connects — but a connect the supervisor performed would not be
/// scoped, and could reach any host service listening on an abstract name. Refused.
fn abstract_outside_netns(caller: Caller) -> Outcome {
    let d = decision(
        "connect",
        caller,
        "abstract unix address".into(),
        "fence.unix-abstract",
        false,
    );
    Outcome::refused(
        libc::EACCES,
        "abstract unix socket without a network namespace",
        d,
    )
}

/// The rule under which the sandbox reaches the session's domain proxy (run/mod.rs).
const PROXY_RULE: &str = "fence.proxy";

/// Records which thread connected to the proxy, under the local port its connection got
/// (read back from the target's descriptor: the port is bound during the connect, also a
/// non-blocking one). Information for the proxy's questions and log, not a boundary.
fn remember_proxy_client(net: &NetFence, caller: Caller, fd: i32) {
    if let Ok((socket, _)) = target_socket(caller, fd)
        && let Ok(Some(local)) = local_address(&socket)
    {
        net.proxy_clients.record(local.port(), caller.tid);
    }
}

/// A kind of destination no rule covers: the rule a question about it names, what it is,
/// and the error a refusal answers.
struct Unknown {
    rule: &'static str,
    what: &'static str,
    errno: i32,
}

const UNKNOWN_OUTSIDE: Unknown = Unknown {
    rule: "fence.net-outside",
    what: "connection to a destination no rule allows",
    errno: libc::EACCES,
};

/// An address of one of this machine's own interfaces other than loopback (its Ethernet
/// address, a container bridge's): every service of the machine that listens on all its
/// addresses answers there, so the question says so rather than show a bare address.
const UNKNOWN_HOST_ADDRESS: Unknown = Unknown {
    rule: "fence.net-host-address",
    what: "connection to an address of this machine (its services that listen on every address answer there)",
    errno: libc::EACCES,
};

/// Without a network namespace: a port of the host's loopback on which something of the
/// host's listens (a database, a development server, a local API).
const UNKNOWN_HOST_LOOPBACK: Unknown = Unknown {
    rule: "fence.net-host-loopback",
    what: "connection to a host service on loopback",
    errno: libc::ECONNREFUSED,
};

/// Link-local addresses (169.254/16, fe80::/10) and the cloud metadata services there and
/// at fd00:ec2::254: they hand out machine credentials to whoever asks, which a person
/// cannot judge from an address. Refused without a question; an `--allow-net` rule naming
/// one still opens it on purpose.
fn is_metadata_or_link_local(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        }
    }
}

/// A destination no rule covers (SPEC §4): asked through the gate — the question shows
/// the address, the name `--resolve` gives it, the port and the process — and refused
/// unless a person answers Yes or Always (Always: this exact `host:port`, this session).
/// Nobody to ask (`--approver deny`), No, or no answer in time: refused, with the answer on
/// the process's stderr. `--mode auto` answers nothing here: the gate never auto-approves.
///
/// Security boundary: on Yes the supervisor connects the target's socket itself, to the
/// address it read and showed (`bytes`), as for an allowed destination; never `CONTINUE`.
fn unknown_destination(
    call: &Call<'_>,
    net: &NetFence,
    fd: i32,
    dest: SocketAddr,
    bytes: Vec<u8>,
    kind: &Unknown,
) -> Outcome {
    let (gate, caller, n) = (call.gate, call.caller, call.n);
    let ip = dest.ip().to_canonical();
    let name = net
        .names
        .iter()
        .find(|(_, a)| a.to_canonical() == ip)
        .map(|(name, _)| name.clone());
    let process = if gate.answers_at_once() && !gate.logging() {
        ProcessInfo {
            pid: caller.tid,
            ..ProcessInfo::default()
        }
    } else {
        process_info(caller)
    };
    let request = Request {
        event: EventKind::Connect,
        level: Level::Yellow,
        rule: kind.rule.into(),
        description: kind.what.into(),
        why: "no --allow-net or --allow-domain rule covers this destination".into(),
        subject: Subject::Addr(dest.to_string()),
        destination: Some(Destination {
            host: ip.to_string(),
            port: dest.port(),
            name,
            address: None,
            route: Route::Direct,
        }),
        process,
        call: CallKey {
            tid: n.tid,
            nr: n.nr,
            args: n.args,
        },
        received: call.received,
    };
    let answer = gate.ask(&request);
    if answer.allows() {
        // The call may have gone (killed) while it waited: nothing to carry out then.
        if !call.listener.is_valid(n.id) {
            return Outcome::error(libc::EINTR);
        }
        return connect_allowed(call.listener, n.id, net, caller, fd, bytes, None);
    }
    // The gate has logged the question and its answer; the reason goes to the process.
    Outcome {
        response: Response::Error(kind.errno),
        reason: Some(BlockedReason {
            what: kind.what.into(),
            object: dest.to_string().into_bytes(),
            rule: kind.rule.into(),
            answer: Some(answer_text(&answer)),
        }),
        decision: None,
    }
}

/// Carries out a connect that a rule allows. Without a network namespace the target's own
/// socket is connected (Landlock binds the target, not the supervisor). With one, the
/// target's socket lives in the sandbox's namespace, which has no route out: the supervisor
/// makes a socket of the same family in its own namespace, connects it, and installs it at
/// the target's descriptor number (`SECCOMP_ADDFD_FLAG_SETFD`, as `dup2` would), keeping
/// the descriptor's close-on-exec and non-blocking flags. Socket options the target set
/// before the connect are not carried over.
fn connect_allowed(
    listener: &Listener,
    id: u64,
    net: &NetFence,
    caller: Caller,
    fd: i32,
    bytes: Vec<u8>,
    fetched: Option<(OwnedFd, TargetCredentials)>,
) -> Outcome {
    if !net.own_netns {
        return perform_connect(caller, fd, bytes);
    }
    let (socket, creds) = match fetched.map_or_else(|| target_socket(caller, fd), Ok) {
        Ok(s) => s,
        Err(errno) => return Outcome::error(errno),
    };
    let domain = match socket_domain(&socket) {
        Ok(d) => d,
        Err(e) => return Outcome::from_result(Err(e)),
    };
    // SAFETY: F_GETFL on our own descriptor of the target's open file.
    let status = unsafe { libc::fcntl(socket.as_raw_fd(), libc::F_GETFL) };
    let nonblocking = status >= 0 && status & libc::O_NONBLOCK != 0;
    let cloexec = descriptor_is_cloexec(caller, fd);
    let connected = act_as(&creds, move || {
        // SAFETY: socket() with values read from the target's socket; owned below.
        let raw = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor, owned from here on.
        let fresh = unsafe { OwnedFd::from_raw_fd(raw) };
        connect_socket(&fresh, &bytes)?;
        Ok(fresh)
    });
    let fresh = match connected {
        Ok(f) => f,
        Err(e) => return Outcome::from_result(Err(e)),
    };
    if nonblocking {
        // SAFETY: F_SETFL on our own fresh descriptor.
        unsafe { libc::fcntl(fresh.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }
    // Recorded before it is installed: from then on the sandbox may use it.
    net.host_sockets.record(&fresh);
    match listener.install_fd_at(id, std::os::fd::AsFd::as_fd(&fresh), fd, cloexec) {
        Ok(()) => Outcome::from_result(Ok(0)),
        Err(e) => Outcome::from_result(Err(e)),
    }
}

fn socket_domain(socket: &OwnedFd) -> io::Result<libc::c_int> {
    socket_int_option(socket, libc::SO_DOMAIN)
}

/// An integer `SOL_SOCKET` option of `socket` (`SO_DOMAIN`, `SO_TYPE`).
fn socket_int_option(socket: &OwnedFd, name: libc::c_int) -> io::Result<libc::c_int> {
    socket_int_option_at(socket, libc::SOL_SOCKET, name)
}

/// An integer option of `socket` at protocol `level`.
fn socket_int_option_at(
    socket: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into a c_int with its size.
    let ret = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            level,
            name,
            &mut value as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value)
}

/// Whether the target's descriptor `fd` is close-on-exec (`flags:` of its fdinfo, octal).
fn descriptor_is_cloexec(caller: Caller, fd: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{}/fdinfo/{fd}", caller.tid))
        .ok()
        .and_then(|info| {
            let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
            i64::from_str_radix(flags.trim(), 8).ok()
        })
        .is_some_and(|flags| flags & libc::O_CLOEXEC as i64 != 0)
}

/// Performs `connect(fd, bytes)` on the target's socket with its credentials.
fn perform_connect(caller: Caller, fd: i32, bytes: Vec<u8>) -> Outcome {
    match target_socket(caller, fd) {
        Ok((socket, creds)) => connect_as(socket, &creds, bytes),
        Err(errno) => Outcome::error(errno),
    }
}

/// Connects `socket` (the target's, fetched) to `bytes` with `creds`.
fn connect_as(socket: OwnedFd, creds: &TargetCredentials, bytes: Vec<u8>) -> Outcome {
    Outcome::from_result(act_as(creds, move || {
        connect_socket(&socket, &bytes).map(|()| 0)
    }))
}

/// Reaches the pathname unix socket `path` (as the target named it) with `op`, given the
/// address of exactly the socket file that was checked: the path is opened `O_PATH` with
/// the target's credentials (so its directory permissions are the target's), the object
/// opened is located through `/proc/self/fd/N` and checked, and `op` gets
/// `/proc/self/fd/N` as the address, which the kernel follows to that same object.
fn unix_to_path(
    fence: &Fence,
    net: &NetFence,
    caller: Caller,
    creds: &TargetCredentials,
    path: &[u8],
    op: impl FnOnce(*const libc::sockaddr, libc::socklen_t) -> isize + Send + 'static,
) -> Outcome {
    let resolved = match path_resolve::resolve(caller, Base::Cwd, path, true) {
        Resolution::Path(p) => p,
        // As the kernel answers, before it asks for any right.
        Resolution::Fails(errno) => return Outcome::error(errno),
        Resolution::Unresolvable(_) | Resolution::Descriptor(_) => {
            let d = decision(
                "connect",
                caller,
                String::from_utf8_lossy(path).into_owned(),
                "fence.unix-outside",
                false,
            );
            return Outcome::refused(
                libc::EACCES,
                "connection to a unix socket fence cannot resolve",
                d,
            );
        }
    };
    let writable = fence.writable.clone();
    let allowed = net.allow_unix.clone();
    let result = act_as(creds, move || {
        // The socket as the sandbox sees it (one in its own TMPDIR exists only there), by
        // the resolved path: a symlink swapped in since the check fails the open. One
        // opened with --allow-unix is the host's, in fence's view (its folder may be
        // hidden from the sandbox, as ~/.gnupg is).
        let view = if allowed.contains(&resolved) {
            View::Fence
        } else {
            View::Sandbox
        };
        let object =
            super::approved::open_checked(view, &resolved, libc::O_PATH | libc::O_CLOEXEC, 0)?;
        let raw = object.as_raw_fd();
        let proc_path = format!("/proc/self/fd/{raw}");
        let real = std::fs::read_link(&proc_path)?;
        // A pathname socket in a writable root (the worktree, the session TMPDIR, an
        // `--allow-write` folder, a profile's, the host's `/dev/shm`) is reached only when
        // the sandbox bound it ([`BOUND_SOCKETS`]): one there is otherwise a host program's
        // (an X server's `/tmp/.X11-unix/X0` under `--allow-write /tmp`, a tmux server's
        // or an ssh-agent's in the worktree, one linked or moved into the TMPDIR), which
        // would act outside the sandbox for it.
        let in_writable = writable.iter().any(|r| real.starts_with(r));
        let inside = in_writable && bound_by_the_sandbox(&object);
        let rule = if inside {
            "fence.unix-inside"
        } else if allowed.contains(&real) {
            "fence.allow-unix"
        } else if in_writable {
            return Ok((Err(real), "fence.unix-host"));
        } else {
            return Ok((Err(real), "fence.unix-outside"));
        };
        let sun = sockaddr_un(proc_path.as_bytes())?;
        let ret = op(
            &sun as *const libc::sockaddr_un as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
        );
        drop(object);
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((Ok((ret as i64, real)), rule))
    });
    match result {
        Ok((Ok((v, real)), rule)) => {
            let d = decision("connect", caller, real.display().to_string(), rule, true);
            Outcome::from_result(Ok(v)).with_decision(d)
        }
        Ok((Err(real), rule)) => {
            let why = if rule == "fence.unix-host" {
                "connection to a unix socket the sandbox did not bind: a program's outside \
                 it, or one of its own among more than 256 (--allow-unix PATH opens one)"
            } else {
                "connection to a unix socket outside the worktree"
            };
            let d = decision("connect", caller, real.display().to_string(), rule, false);
            Outcome::refused(libc::EACCES, why, d)
        }
        // Nothing there (glibc probes for nscd on every user lookup; no reason to shout),
        // or the connect itself failed: the kernel's answer.
        Err(e) => Outcome::from_result(Err(e)),
    }
}

/// The socket files the sandbox bound during the session, which it may reach wherever they
/// lie in its writable roots: each held by an `O_PATH` descriptor, with its device and
/// inode. The descriptor keeps the inode allocated, so its number cannot be handed to
/// another file while it is listed: ext4 gives a freed inode number out again at once,
/// and a sandbox that bound and removed many sockets would otherwise have the next socket
/// a host program makes in the same file system taken for its own (a security boundary).
/// A socket file whose last name is gone is dropped from the list, descriptor and all.
static BOUND_SOCKETS: std::sync::Mutex<Vec<BoundSocket>> = std::sync::Mutex::new(Vec::new());

/// At most this many socket files are held (descriptors of the supervisor's); past it the
/// oldest is forgotten and its socket is then reached as a host program's (refused).
const MAX_BOUND_SOCKETS: usize = 256;

struct BoundSocket {
    id: (u64, u64),
    /// Pins the inode (and so its number) while the entry is listed.
    held: OwnedFd,
    /// The socket the sandbox bound there: its own inode number (`st_ino` of its
    /// descriptor), which the kernel's table gives for the file ([`bound_by_the_sandbox`]).
    socket: u32,
}

/// Device, inode and link count of the object `fd` names (an `O_PATH` descriptor works).
fn identity_and_links(fd: &impl AsRawFd) -> Option<((u64, u64), u64)> {
    // SAFETY: fstat fills a zeroed stat buffer for our descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0)
        .then_some(((st.st_dev, st.st_ino), st.st_nlink as u64))
}

/// Whether the socket file `object` is one the sandbox bound: recorded at its bind, and
/// no socket of fence's network namespace but the one bound then is bound to it now, as
/// the kernel's table says (security boundary: a host program's socket renamed over the
/// name the sandbox's bind made, between the bind and its record, is recorded under the
/// sandbox's socket; the table names the host's). With a network namespace of its own the
/// sandbox's sockets are not in fence's table: a file bound by none there is taken by its
/// record. Where the kernel has no such table, the record alone decides (the race above
/// stays open there); where asking it fails, the answer is no.
fn bound_by_the_sandbox(object: &OwnedFd) -> bool {
    let Some((id, _)) = identity_and_links(object) else {
        return false;
    };
    let recorded = BOUND_SOCKETS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .find(|b| b.id == id)
        .map(|b| b.socket);
    let Some(socket) = recorded else {
        return false;
    };
    match super::unix_diag::sockets_bound_at(id.0, id.1) {
        Ok(found) => found.iter().all(|s| *s == socket),
        Err(super::unix_diag::DiagError::Unsupported) => true,
        Err(super::unix_diag::DiagError::Failed(_)) => false,
    }
}

/// Records the socket file `name` in `dir` as the sandbox's own, bound by the socket whose
/// inode number is `socket`.
fn record_bound_socket(dir: &OwnedFd, name: &std::ffi::OsStr, socket: u32) {
    let Ok(c) = std::ffi::CString::new(name.as_bytes()) else {
        return;
    };
    // SAFETY: openat of a NUL-terminated name beneath our directory descriptor.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return;
    }
    // SAFETY: a fresh descriptor that we now own.
    let held = unsafe { OwnedFd::from_raw_fd(fd) };
    // Only a socket file: anything else at the name is not what a bind made.
    // SAFETY: fstat of our own descriptor into a zeroed buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(held.as_raw_fd(), &mut st) } != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFSOCK
    {
        return;
    }
    let id = (st.st_dev, st.st_ino);
    let mut bound = BOUND_SOCKETS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Socket files removed since (no name left) are let go: their inode is freed with
    // the descriptor, and its number leaves the list with it.
    bound.retain(|b| identity_and_links(&b.held).is_some_and(|(_, links)| links > 0));
    if bound.len() >= MAX_BOUND_SOCKETS {
        bound.remove(0);
    }
    bound.push(BoundSocket { id, held, socket });
}

fn sockaddr_un(path: &[u8]) -> io::Result<libc::sockaddr_un> {
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid (empty) value.
    let mut sun: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if path.len() >= sun.sun_path.len() {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (d, s) in sun.sun_path.iter_mut().zip(path) {
        *d = *s as libc::c_char;
    }
    Ok(sun)
}

#[allow(clippy::too_many_arguments)]
fn sendto(
    fence: &Fence,
    net: &NetFence,
    caller: Caller,
    fd: i32,
    address: Address,
    bytes: Vec<u8>,
    data: Vec<u8>,
    flags: i32,
) -> Outcome {
    let fetched = match own_socket(net, caller, fd, &address, "sendto") {
        Ok(fetched) => fetched,
        Err(outcome) => return *outcome,
    };
    let (socket, creds) = match fetched.map_or_else(|| target_socket(caller, fd), Ok) {
        Ok(s) => s,
        Err(errno) => return Outcome::error(errno),
    };
    // A UDP socket of the sandbox's own network namespace reaches only its loopback.
    let datagram_outside_to = match address {
        Address::Inet(dest)
            if net.own_netns && !loopback_table::is_loopback(dest.ip()) && is_datagram(&socket) =>
        {
            Some(dest)
        }
        _ => None,
    };
    if let Some(dest) = datagram_outside_to {
        return datagram_outside(net, caller, dest, "sendto");
    }
    let flags = flags | libc::MSG_NOSIGNAL;
    let send = move |sa: *const libc::sockaddr, salen: libc::socklen_t| {
        // SAFETY: `data` is valid for its length; `sa` for `salen` bytes.
        unsafe {
            libc::sendto(
                socket.as_raw_fd(),
                data.as_ptr() as *const libc::c_void,
                data.len(),
                flags,
                sa,
                salen,
            )
        }
    };
    match address {
        Address::UnixPath(path) => unix_to_path(fence, net, caller, &creds, &path, send),
        // Other inet sockets are TCP (the static filter), which ignores the address of a
        // connected socket and refuses to send on an unconnected one (MSG_FASTOPEN, the
        // exception, is refused by the static filter); a UDP socket of the sandbox's own
        // network namespace sends on its loopback.
        Address::UnixOther if !net.own_netns => abstract_outside_netns(caller),
        Address::Inet(_) | Address::UnixOther | Address::Unspecified => {
            Outcome::from_result(act_as(&creds, move || {
                let ret = send(
                    bytes.as_ptr() as *const libc::sockaddr,
                    bytes.len() as libc::socklen_t,
                );
                if ret < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(ret as i64)
                }
            }))
        }
        Address::Other(_) => Outcome::error(libc::EAFNOSUPPORT),
    }
}

/// `bind`. A pathname unix bind makes a name in the filesystem, which is carried out here
/// from the checked path in every mode (a `CONTINUE` would let the kernel read a path a
/// racing thread swapped in since: a socket file at a missing protected name such as
/// `.envrc`). The rest goes to the kernel in the sandbox's own network namespace; without
/// one (the loopback table), abstract names and inet addresses are judged here.
fn bind(
    fence: &Fence,
    net: &NetFence,
    caller: Caller,
    fd: i32,
    address: Address,
    mut bytes: Vec<u8>,
) -> Outcome {
    let addr = match address {
        // Without a network namespace the abstract names are the host's: a name bound here
        // would take the connections of host programs that expect their own service under
        // it. Performing the pathname bind also keeps a racing thread from turning it into
        // an abstract one after the check.
        Address::UnixPath(path) => {
            return bind_unix_path(fence, caller, fd, &path);
        }
        Address::UnixOther if net.loopback.is_some() => {
            // sa_family alone: autobind, a random abstract name of the kernel's choosing.
            if bytes.len() <= 2 {
                return perform_bind(caller, fd, bytes);
            }
            let d = decision(
                "bind",
                caller,
                "abstract unix address".to_string(),
                "fence.unix-abstract",
                false,
            );
            return Outcome::refused(
                libc::EACCES,
                "abstract unix socket without a network namespace",
                d,
            );
        }
        // The sandbox's own network namespace: its abstract names and its loopback are its
        // own, and what a racing thread swaps in stays there.
        _ if net.own_netns => {
            return Outcome {
                response: Response::Continue,
                reason: None,
                decision: None,
            };
        }
        // Bounded by Landlock's abstract-socket scope (no network namespace is refused below
        // ABI 6 unless degraded).
        Address::UnixOther => {
            return Outcome {
                response: Response::Continue,
                reason: None,
                decision: None,
            };
        }
        Address::Inet(addr) => addr,
        // AF_UNSPEC with INADDR_ANY binds an inet socket to the wildcard: refused, as is
        // any other family.
        Address::Unspecified | Address::Other(_) => return Outcome::error(libc::EAFNOSUPPORT),
    };
    let Some(table) = &net.loopback else {
        return Outcome::error(libc::EPERM);
    };
    let ip = addr.ip().to_canonical();
    if !ip.is_unspecified() && !ip.is_loopback() {
        let d = decision("bind", caller, addr.to_string(), "fence.net-bind", false);
        return Outcome::refused(libc::EADDRNOTAVAIL, "bind outside loopback", d);
    }
    let (socket, creds) = match target_socket(caller, fd) {
        Ok(s) => s,
        Err(errno) => return Outcome::error(errno),
    };
    if ip.is_unspecified() {
        // A wildcard bind becomes a loopback bind: a server in the sandbox is reachable
        // from the host's loopback, never from the network. An IPv6 socket that also
        // takes IPv4 (`IPV6_V6ONLY` off, as `python -m http.server` binds `::`) gets
        // IPv4's loopback in its mapped form: clients ask `127.0.0.1` by name far more
        // often than `[::1]`, and `localhost` falls back to it.
        rewrite_to_loopback(&mut bytes, !v6_only(&socket));
    }
    let result = act_as(&creds, move || {
        // A host listener of the same user sharing the port through SO_REUSEPORT would
        // take connections meant for ours; the connect check refuses that case anyway.
        set_reuseport_off(&socket);
        // `bytes` holds the checked (possibly rewritten) sockaddr.
        bind_socket(&socket, &bytes)?;
        socket_inode(&socket)
    });
    match result {
        Ok(inode) => {
            table.record(inode);
            Outcome::from_result(Ok(0))
        }
        Err(e) => Outcome::from_result(Err(e)),
    }
}

/// Binds the target's socket as given (`bytes` already checked), with its credentials.
fn perform_bind(caller: Caller, fd: i32, bytes: Vec<u8>) -> Outcome {
    let (socket, creds) = match target_socket(caller, fd) {
        Ok(s) => s,
        Err(errno) => return Outcome::error(errno),
    };
    Outcome::from_result(act_as(&creds, move || {
        bind_socket(&socket, &bytes)?;
        Ok(0)
    }))
}

/// A pathname unix bind, performed here on the target's socket (fetched with
/// `pidfd_getfd`) from the checked path, on a thread with the target's credentials and
/// umask that Landlock lets make socket files only beneath the directory the check
/// resolved (opened then in the sandbox's view, refusing any symlink on the way). So no
/// path swapped after the check — in memory or in the filesystem — puts the socket file
/// anywhere else. The socket is bound to the very bytes the process gave (its address,
/// `getsockname`, is its own): a relative path from the caller's working directory, an
/// absolute one from the root of the sandbox's view (`chroot` into it, for a supervisor
/// allowed to), or from fence's own root where both views show the same directory. Only
/// an absolute path into a mount the sandbox alone sees (its private TMPDIR), bound by an
/// unprivileged fence, is bound to its last component from that directory, which then
/// is its address.
fn bind_unix_path(fence: &Fence, caller: Caller, fd: i32, path: &[u8]) -> Outcome {
    let resolved = match path_resolve::resolve(caller, Base::Cwd, path, false) {
        Resolution::Path(p) => p,
        Resolution::Fails(errno) => return Outcome::error(errno),
        // A socket file is never made through a descriptor link or an unresolvable path.
        Resolution::Descriptor(_) | Resolution::Unresolvable(_) => {
            return Outcome::error(libc::EACCES);
        }
    };
    let shown = resolved.display().to_string();
    if fence.root_of(&resolved).is_none() {
        let d = decision("bind", caller, shown, "fence.write-outside", false);
        return Outcome::refused(libc::EACCES, "unix socket outside the worktree", d);
    }
    if fence.is_protected(&resolved, true) {
        let d = decision("bind", caller, shown, "fence.protected-path", false);
        return Outcome::refused(libc::EACCES, "unix socket on a protected path", d);
    }
    let (Some(parent), Some(name)) = (resolved.parent(), resolved.file_name()) else {
        return Outcome::error(libc::EINVAL);
    };
    let (parent, name) = (parent.to_path_buf(), name.to_os_string());
    let (Ok(original), Ok(last)) = (sockaddr_un(path), sockaddr_un(name.as_bytes())) else {
        return Outcome::error(libc::ENAMETOOLONG);
    };
    let relative = path.first() != Some(&b'/');
    // The caller's working directory, through its /proc link (its own mount namespace's).
    let cwd = if relative {
        match view::open_directory_link(&format!("/proc/{}/cwd", caller.tid)) {
            Ok(dir) => Some(dir),
            Err(_) => return Outcome::error(libc::EACCES),
        }
    } else {
        None
    };
    // Socket, credentials and cwd were fetched by tid: trusted only while the call waits.
    let (socket, creds) = match target_socket(caller, fd) {
        Ok(s) => s,
        Err(errno) => return Outcome::error(errno),
    };
    let umask = TargetCredentials::and_umask_of_thread(caller.tid)
        .ok()
        .and_then(|(_, u)| u)
        .unwrap_or(0o022);
    // This thread is the bind's alone: its fs context, root and Landlock domain go with it
    // (a worker that ran it takes no other call).
    workers::retire_this_thread();
    if let Err(e) = super::approved::own_umask(umask) {
        return Outcome::from_result(Err(e));
    }
    let parent_dir = match super::approved::open_checked(
        View::Sandbox,
        &parent,
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    ) {
        Ok(dir) => dir,
        Err(e) => return Outcome::from_result(Err(e)),
    };
    // An absolute path is looked up from the root of the sandbox's view: a chroot there
    // needs CAP_SYS_CHROOT (a fence run as root), taken before the call sets its
    // capabilities aside.
    let from_sandbox_root = !relative && chroot_into_sandbox_root();
    let same_view = view::sandbox_root().is_none() || same_directory(&parent, &parent_dir);
    // The bind makes a new name, or fails (EADDRINUSE): one there before it is not this
    // bind's socket. The kernel resolves the path again as it binds, and a racing thread
    // may re-point a symlink on it (Landlock keeps the socket beneath the checked folder,
    // not in it): the name checked may then be a host program's socket, which must not be
    // recorded as the sandbox's own (security boundary: a recorded socket may be reached).
    let there_before = name_exists(&parent_dir, &name);
    let socket_ino = identity_and_links(&socket).map_or(0, |((_, ino), _)| ino as u32);
    // A fence without that privilege binds such a path from a process of its own that has
    // entered the sandbox's user and mount namespaces (the user's own: no privilege
    // needed), so that the socket's address is the path the process gave.
    if !relative
        && !from_sandbox_root
        && !same_view
        && let Some(namespaces) = view::sandbox_namespaces()
    {
        let bound = bind_in_sandbox_namespaces(namespaces, &socket, &parent_dir, &original, umask);
        if bound.is_ok() && !there_before {
            record_bound_socket(&parent_dir, &name, socket_ino);
        }
        return Outcome::from_result(bound.map(|()| 0));
    }
    Outcome::from_result(act_as(&creds, move || {
        shim::landlock_fence::restrict_thread_to_sockets_beneath(parent_dir.as_fd())
            .map_err(|_| io::Error::from_raw_os_error(libc::EACCES))?;
        let address = if let Some(cwd) = &cwd {
            fchdir(cwd)?;
            &original
        } else if from_sandbox_root || same_view {
            &original
        } else {
            fchdir(&parent_dir)?;
            &last
        };
        let len = std::mem::offset_of!(libc::sockaddr_un, sun_path)
            + address.sun_path.iter().position(|&c| c == 0).unwrap_or(0)
            + 1;
        // SAFETY: a sockaddr_un of at least `len` bytes; `socket` is our descriptor.
        let ret = unsafe {
            libc::bind(
                socket.as_raw_fd(),
                address as *const libc::sockaddr_un as *const libc::sockaddr,
                len as libc::socklen_t,
            )
        };
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        if !there_before {
            record_bound_socket(&parent_dir, &name, socket_ino);
        }
        Ok(0)
    }))
}

/// Whether `name` names anything in `dir` (not followed).
fn name_exists(dir: &OwnedFd, name: &std::ffi::OsStr) -> bool {
    let Ok(c) = std::ffi::CString::new(name.as_bytes()) else {
        return false;
    };
    // SAFETY: fstatat of a NUL-terminated name beneath our descriptor into a local buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        ) == 0
    }
}

/// Binds `socket` to `address` from a child process that enters the sandbox's user and
/// mount namespaces (`namespaces`: descriptors of them) and a Landlock domain that lets it
/// make socket files only beneath `dir`, the directory the check resolved (so a path
/// swapped since puts the socket nowhere outside it; the caller records the socket only
/// at a name that was not there before), with the target's `umask`. Only for a
/// fence that cannot `chroot` into the sandbox's view: its user is the namespaces' owner
/// and the target's user, so the socket file gets the owner the target's own bind would
/// have given it.
///
/// Why a process: a multi-threaded one may not enter another user namespace, and only
/// there may an unprivileged one enter the mount namespace. The child is forked from a
/// multi-threaded process, so it makes raw system calls only, on memory prepared before
/// the fork, and leaves with `_exit` (its status: 0, or the errno that stopped it).
fn bind_in_sandbox_namespaces(
    (user, mount): (libc::c_int, libc::c_int),
    socket: &OwnedFd,
    dir: &OwnedFd,
    address: &libc::sockaddr_un,
    umask: u32,
) -> io::Result<()> {
    let ruleset = shim::landlock_fence::sockets_beneath_ruleset(dir.as_fd())
        .map_err(|_| io::Error::from_raw_os_error(libc::EACCES))?;
    let len = (std::mem::offset_of!(libc::sockaddr_un, sun_path)
        + address.sun_path.iter().position(|&c| c == 0).unwrap_or(0)
        + 1) as libc::socklen_t;
    let (socket, ruleset) = (socket.as_raw_fd(), ruleset.as_raw_fd());
    // SAFETY: fork; the child below makes only raw system calls on prepared memory and
    // ends with _exit, as a child of a multi-threaded process must.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: raw system calls on descriptors and memory prepared before the fork.
        unsafe {
            let errno = || *libc::__errno_location();
            let step = |ret: libc::c_long| {
                if ret < 0 {
                    libc::_exit(errno().clamp(1, 255));
                }
            };
            step(libc::setns(user, libc::CLONE_NEWUSER) as libc::c_long);
            step(libc::setns(mount, libc::CLONE_NEWNS) as libc::c_long);
            libc::umask(umask as libc::mode_t);
            step(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) as libc::c_long);
            step(libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0));
            step(libc::bind(
                socket,
                address as *const libc::sockaddr_un as *const libc::sockaddr,
                len,
            ) as libc::c_long);
            libc::_exit(0);
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: waiting for the child forked above; `status` is a valid out-pointer.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, errno) => Err(io::Error::from_raw_os_error(errno)),
        _ => Err(io::Error::from_raw_os_error(libc::EACCES)),
    }
}

fn fchdir(dir: &OwnedFd) -> io::Result<()> {
    // SAFETY: fchdir on a directory descriptor we own; the thread has its own fs context.
    if unsafe { libc::fchdir(dir.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the sandbox's root this thread's root (its fs context is its own already); false
/// without a mount view or without the privilege to.
fn chroot_into_sandbox_root() -> bool {
    let Some(root) = view::sandbox_root() else {
        return false;
    };
    let dot = c".";
    // SAFETY: fchdir to a directory descriptor that lives for the session, then chroot of
    // the working directory; both act on this thread's own fs context only.
    unsafe { libc::fchdir(root.as_raw_fd()) == 0 && libc::chroot(dot.as_ptr()) == 0 }
}

/// Whether `path`, opened in fence's own view, is the directory `dir` (opened in the
/// sandbox's): then a path bound from fence's root lands where the check resolved it.
fn same_directory(path: &std::path::Path, dir: &OwnedFd) -> bool {
    let Ok(here) = super::approved::open_checked(
        View::Fence,
        path,
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    ) else {
        return false;
    };
    let id = |fd: &OwnedFd| {
        // SAFETY: fstat fills a zeroed stat buffer for our descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some((st.st_dev, st.st_ino))
    };
    matches!((id(&here), id(dir)), (Some(a), Some(b)) if a == b)
}

/// `bind(2)` of `socket` to `bytes`, a sockaddr of its length.
fn bind_socket(socket: &OwnedFd, bytes: &[u8]) -> io::Result<()> {
    sockaddr_call(libc::bind, socket, bytes)
}

/// `connect(2)` of `socket` to `bytes`, a sockaddr of its length (EINPROGRESS of a
/// non-blocking socket is an error the caller may accept).
fn connect_socket(socket: &OwnedFd, bytes: &[u8]) -> io::Result<()> {
    sockaddr_call(libc::connect, socket, bytes)
}

/// `bind` and `connect` take the same arguments: a descriptor and a sockaddr with its
/// length.
fn sockaddr_call(
    call: unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int,
    socket: &OwnedFd,
    bytes: &[u8],
) -> io::Result<()> {
    // SAFETY: `bytes` holds a sockaddr of its length; `socket` is our descriptor.
    let ret = unsafe {
        call(
            socket.as_raw_fd(),
            bytes.as_ptr() as *const libc::sockaddr,
            bytes.len() as libc::socklen_t,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes an unspecified inet address in `bytes` (IPv4, IPv6, or v4-mapped) the loopback
/// address of the same kind; `::` on a socket that takes IPv4 too (`dual_stack`) becomes
/// `::ffff:127.0.0.1`.
fn rewrite_to_loopback(bytes: &mut [u8], dual_stack: bool) {
    let family = u16::from_ne_bytes([bytes[0], bytes[1]]) as i32;
    if family == libc::AF_INET {
        bytes[4..8].copy_from_slice(&Ipv4Addr::LOCALHOST.octets());
    } else if dual_stack || bytes[8..20] == Ipv4Addr::UNSPECIFIED.to_ipv6_mapped().octets()[..12] {
        bytes[8..24].copy_from_slice(&Ipv4Addr::LOCALHOST.to_ipv6_mapped().octets());
    } else {
        bytes[8..24].copy_from_slice(&Ipv6Addr::LOCALHOST.octets());
    }
}

/// Whether `socket` is an IPv6 socket that takes IPv6 only (`IPV6_V6ONLY`); false for
/// any other, and when the option cannot be read (the bind then fails as the kernel says
/// and the caller sees it).
fn v6_only(socket: &OwnedFd) -> bool {
    socket_int_option_at(socket, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY).is_ok_and(|v| v != 0)
}

/// `listen` without a network namespace: an unbound inet socket is first bound to
/// loopback (the kernel would bind the wildcard), a bound one must be on loopback.
fn listen(net: &NetFence, caller: Caller, fd: i32, backlog: i32) -> Outcome {
    let Some(table) = &net.loopback else {
        return Outcome::error(libc::EPERM);
    };
    let (socket, creds) = match target_socket(caller, fd) {
        Ok(s) => s,
        Err(errno) => return Outcome::error(errno),
    };
    let local = match local_address(&socket) {
        Ok(a) => a,
        Err(e) => return Outcome::from_result(Err(e)),
    };
    if let Some(addr) = local {
        if addr.port() == 0 {
            let mut bytes = inet_sockaddr(addr);
            rewrite_to_loopback(&mut bytes, !v6_only(&socket));
            let result = act_as(&creds, move || {
                set_reuseport_off(&socket);
                // A loopback sockaddr of the socket's own family.
                bind_socket(&socket, &bytes)?;
                Ok(socket)
            });
            let socket = match result {
                Ok(s) => s,
                Err(e) => return Outcome::from_result(Err(e)),
            };
            return finish_listen(table, socket, backlog);
        }
        if !addr.ip().to_canonical().is_loopback() {
            let d = decision("listen", caller, addr.to_string(), "fence.net-bind", false);
            return Outcome::refused(libc::EADDRNOTAVAIL, "listen outside loopback", d);
        }
    }
    finish_listen(table, socket, backlog)
}

fn finish_listen(table: &LoopbackTable, socket: OwnedFd, backlog: i32) -> Outcome {
    // SAFETY: listen on our own descriptor of the target's socket.
    if unsafe { libc::listen(socket.as_raw_fd(), backlog) } < 0 {
        return Outcome::from_result(Err(io::Error::last_os_error()));
    }
    if let Ok(Some(_)) = local_address(&socket)
        && let Ok(inode) = socket_inode(&socket)
    {
        table.record(inode);
    }
    Outcome::from_result(Ok(0))
}

fn set_reuseport_off(socket: &OwnedFd) {
    let off: libc::c_int = 0;
    // SAFETY: setsockopt with a valid int option value. Failure (not an inet socket)
    // changes nothing.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEPORT,
            &off as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// The inode of a socket (as `/proc/net/tcp` lists it).
fn socket_inode(socket: &OwnedFd) -> io::Result<u64> {
    // SAFETY: fstat into a zeroed stat buffer on our own descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(socket.as_raw_fd(), &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_ino)
}

/// The local inet address of a socket; `None` for other families.
fn local_address(socket: &OwnedFd) -> io::Result<Option<SocketAddr>> {
    // SAFETY: getsockname into a zeroed sockaddr_storage with its size.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let ret = unsafe {
        libc::getsockname(
            socket.as_raw_fd(),
            &mut ss as *mut libc::sockaddr_storage as *mut libc::sockaddr,
            &mut len,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel wrote `len` bytes of a sockaddr into `ss`.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            &ss as *const libc::sockaddr_storage as *const u8,
            len as usize,
        )
    };
    Ok(match parse_address(bytes) {
        Some(Address::Inet(a)) => Some(a),
        _ => None,
    })
}

/// The sockaddr bytes of `addr` (`sockaddr_in` or `sockaddr_in6`).
fn inet_sockaddr(addr: SocketAddr) -> Vec<u8> {
    match addr {
        SocketAddr::V4(a) => {
            let mut b = vec![0u8; std::mem::size_of::<libc::sockaddr_in>()];
            b[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
            b[2..4].copy_from_slice(&a.port().to_be_bytes());
            b[4..8].copy_from_slice(&a.ip().octets());
            b
        }
        SocketAddr::V6(a) => {
            let mut b = vec![0u8; std::mem::size_of::<libc::sockaddr_in6>()];
            b[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
            b[2..4].copy_from_slice(&a.port().to_be_bytes());
            b[8..24].copy_from_slice(&a.ip().octets());
            b
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket file recorded as the sandbox's is taken for it only while the socket bound
    /// to it is the one recorded: a host program's socket renamed over the name (recorded
    /// with the sandbox's socket) is not.
    #[test]
    fn a_recorded_socket_file_bound_by_another_socket_is_not_the_sandboxs() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let dir_fd = OwnedFd::from(std::fs::File::open(dir.path()).unwrap());
        let ours = std::os::unix::net::UnixListener::bind(dir.path().join("ours")).unwrap();
        let host = std::os::unix::net::UnixListener::bind(dir.path().join("host")).unwrap();
        let ino = |l: &std::os::unix::net::UnixListener| {
            std::fs::metadata(format!("/proc/self/fd/{}", l.as_raw_fd()))
                .unwrap()
                .ino() as u32
        };
        if matches!(
            crate::run::unix_diag::sockets_bound_at(0, 0),
            Err(crate::run::unix_diag::DiagError::Unsupported)
        ) {
            eprintln!("skipped: no sock_diag for unix sockets on this kernel");
            return;
        }
        let open = |name: &str| {
            let c = std::ffi::CString::new(dir.path().join(name).as_os_str().as_bytes()).unwrap();
            // SAFETY: open of a NUL-terminated path; checked.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
            assert!(fd >= 0);
            // SAFETY: a fresh descriptor that we now own.
            unsafe { OwnedFd::from_raw_fd(fd) }
        };
        // Recorded as bound by our socket: the file of `ours` is ours, the file of `host`,
        // recorded with our socket (as a rename over the name between the bind and the
        // record would have it), is not.
        record_bound_socket(&dir_fd, std::ffi::OsStr::new("ours"), ino(&ours));
        record_bound_socket(&dir_fd, std::ffi::OsStr::new("host"), ino(&ours));
        assert!(bound_by_the_sandbox(&open("ours")));
        assert!(!bound_by_the_sandbox(&open("host")));
        drop(host);
    }

    #[test]
    fn addresses_are_read_by_family() {
        let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(b"/run/docker.sock\0\0\0");
        assert_eq!(
            parse_address(&a),
            Some(Address::UnixPath(b"/run/docker.sock".to_vec()))
        );
        let mut abs = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        abs.extend_from_slice(b"\0abstract");
        assert_eq!(parse_address(&abs), Some(Address::UnixOther));
        let v4 = inet_sockaddr("127.0.0.1:8080".parse().unwrap());
        assert_eq!(
            parse_address(&v4),
            Some(Address::Inet("127.0.0.1:8080".parse().unwrap()))
        );
        let v6 = inet_sockaddr("[::1]:443".parse().unwrap());
        assert_eq!(
            parse_address(&v6),
            Some(Address::Inet("[::1]:443".parse().unwrap()))
        );
        assert_eq!(parse_address(&v6[..20]), None, "a short inet6 address");
        let unspec = (libc::AF_UNSPEC as u16).to_ne_bytes().to_vec();
        assert_eq!(parse_address(&unspec), Some(Address::Unspecified));
    }

    #[test]
    fn link_local_and_metadata_addresses_are_never_asked_about() {
        for ip in [
            "169.254.169.254",
            "169.254.0.1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
        ] {
            assert!(is_metadata_or_link_local(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "203.0.113.7",
            "10.0.0.1",
            "fd00::2",
            "2001:db8::1",
            "127.0.0.1",
        ] {
            assert!(!is_metadata_or_link_local(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn wildcard_binds_become_loopback_binds() {
        for (from, dual_stack, to) in [
            ("0.0.0.0:80", false, "127.0.0.1:80"),
            ("0.0.0.0:80", true, "127.0.0.1:80"),
            ("[::]:80", false, "[::1]:80"),
            ("[::]:80", true, "[::ffff:127.0.0.1]:80"),
            ("[::ffff:0.0.0.0]:80", false, "[::ffff:127.0.0.1]:80"),
        ] {
            let mut b = inet_sockaddr(from.parse().unwrap());
            rewrite_to_loopback(&mut b, dual_stack);
            assert_eq!(parse_address(&b), Some(Address::Inet(to.parse().unwrap())));
        }
    }
}

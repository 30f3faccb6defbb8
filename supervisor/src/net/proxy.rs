//! The domain proxy (SPEC §4): `--allow-domain` rules are enforced by an HTTP proxy inside
//! the supervisor, on a loopback port, which the sandbox reaches through `HTTP_PROXY` and
//! friends. It handles `CONNECT` (any TCP, checked as TLS) and plain HTTP requests in
//! absolute form, and accepts only requests carrying this session's credentials (a random
//! password in the proxy URL), so another sandbox cannot use it.
//!
//! Security boundary, in order: the credentials; the requested host against the domain
//! rules; name resolution here, in the supervisor, with loopback/private/link-local/metadata
//! results dropped unless that address is allowed by IP; for `CONNECT`, the ClientHello's
//! server name (reassembled across TLS records) must equal the requested host — a missing
//! name, an encrypted ClientHello (ECH) or a stream that is not TLS is refused — and only then
//! is the upstream connection made. This stops a name mismatch, not fronting inside TLS:
//! allowing a shared CDN name allows whatever it fronts. For plain HTTP, a `Host` header
//! naming another host than the request line is refused.
//!
//! A host no rule covers is asked about through the gate when the session has someone to
//! ask ([`ProxyHooks::ask`]): the question runs on tokio's blocking pool, so the proxy's
//! other connections go on while it waits. A Yes lets the request through the same checks
//! as an allowed one (name resolution, the TLS server name); a No is a 403 with the answer.
//!
//! The HTTP head is parsed with `httparse`, the ClientHello with `tls-parser`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::allow::{RuleError, is_address_of_this_machine, is_internal};
use crate::gate::decide::ProcessInfo;

/// Longest request head or ClientHello read before the connection is refused.
const MAX_HEAD: usize = 64 * 1024;
/// How long a client may take to send its request head or ClientHello.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes moved by one `splice` of a tunnel.
const COPY_BUFFER: usize = 1 << 20;
/// The TLS extension number of `encrypted_client_hello`.
const ECH_EXTENSION: u16 = 0xfe0d;

/// One `--allow-domain` rule: `example.com` (that name), `*.example.com` (its subdomains,
/// not the apex), with `:PORT` for one port (without: any port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainRule {
    pub pattern: DomainPattern,
    pub port: Option<u16>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainPattern {
    Exact(String),
    Subdomains(String),
}

pub fn parse_domain_rule(text: &str) -> Result<DomainRule, RuleError> {
    let (name, port) = match text.rsplit_once(':') {
        Some((n, p)) => (
            n,
            Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p != 0)
                    .ok_or_else(|| RuleError::Port(text.into()))?,
            ),
        ),
        None => (text, None),
    };
    let (wild, name) = match name.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, name),
    };
    let name = normalise_host(name).ok_or_else(|| RuleError::Host(text.into()))?;
    if name.parse::<IpAddr>().is_ok() {
        return Err(RuleError::Host(text.into()));
    }
    Ok(DomainRule {
        pattern: if wild {
            DomainPattern::Subdomains(name)
        } else {
            DomainPattern::Exact(name)
        },
        port,
        text: text.into(),
    })
}

/// Lower case without a trailing dot, if it is a valid host name.
fn normalise_host(host: &str) -> Option<String> {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    (!name.is_empty() && name.len() <= 253 && name.split('.').all(label_ok)).then_some(name)
}

impl DomainRule {
    pub fn covers(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match &self.pattern {
            DomainPattern::Exact(n) => host == n,
            DomainPattern::Subdomains(n) => host
                .strip_suffix(n.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// What the proxy allows and how it resolves names.
#[derive(Debug, Clone, Default)]
pub struct ProxyPolicy {
    pub rules: Vec<DomainRule>,
    /// `--resolve` mappings, used instead of DNS.
    pub resolve: Vec<(String, IpAddr)>,
    /// `--allow-net` rules that name an address, with their ports: a name the system
    /// resolver resolves to an internal address (loopback, private, link-local) is
    /// reached there only on a port such a rule allows for that address. (A name mapped
    /// with `--resolve` goes where the mapping says.)
    pub allowed_by_ip: Vec<(IpAddr, std::ops::RangeInclusive<u16>)>,
}

/// One decision of the proxy, and for an allowed connection the bytes it carried, when it
/// closes: the record of a proxied connection for the transcript and the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEvent {
    /// `CONNECT` or the HTTP method.
    pub method: String,
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    /// The domain rule that allowed it, or the fence rule that refused it.
    pub rule: String,
    /// Why it was refused.
    pub reason: Option<String>,
    /// Bytes from the sandbox to the destination, and back.
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// The client process, when it was looked up and found.
    pub client: Option<ProcessInfo>,
    /// The proxy connection's number (counted from 1 since the proxy started).
    pub connection: u64,
}

/// A request for a host no `--allow-domain` rule covers, as the gate is asked about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownHost {
    pub method: String,
    pub host: String,
    pub port: u16,
    /// The address `--resolve` maps the host to, if any (nothing is resolved before the
    /// answer: a name asked about must not reach a DNS server before a person allowed it).
    pub address: Option<IpAddr>,
    /// The client process, when it could be found.
    pub client: Option<ProcessInfo>,
}

/// The gate's answer about an [`UnknownHost`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostVerdict {
    Allowed,
    /// Refused, and why (the answer's text).
    Refused(String),
}

pub type AskSink = Arc<dyn Fn(&UnknownHost) -> HostVerdict + Send + Sync>;
/// Names the process holding the client end of a proxy connection (its peer address, the
/// proxy's address); called on the blocking pool.
pub type IdentifySink = Arc<dyn Fn(SocketAddr, SocketAddr) -> Option<ProcessInfo> + Send + Sync>;

/// Where the proxy's decisions go.
#[derive(Clone)]
pub struct ProxyHooks {
    /// Receives every decision, and every allowed connection when it closes.
    pub on_event: EventSink,
    /// Asks about hosts no rule covers; `None`: refused without a question.
    pub ask: Option<AskSink>,
    /// Finds the client process of a connection asked about, and of every connection when
    /// `identify_all` (for the log).
    pub identify: Option<IdentifySink>,
    pub identify_all: bool,
}

/// A running proxy.
#[derive(Debug, Clone)]
pub struct Proxy {
    pub addr: SocketAddr,
    /// `http://fence:PASSWORD@127.0.0.1:PORT`, the value of the proxy variables.
    pub url: String,
    /// Connections being served.
    open: Arc<AtomicUsize>,
}

impl Proxy {
    /// Waits (at most `limit`) until no connection is being served: at the end of the
    /// session the sandbox's connections close, and their last events (the bytes of a
    /// tunnel) reach the log before it is closed.
    pub fn wait_idle(&self, limit: Duration) {
        let until = std::time::Instant::now() + limit;
        while self.open.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Counts a connection as open while it lives.
struct Serving(Arc<AtomicUsize>);

impl Serving {
    fn new(open: &Arc<AtomicUsize>) -> Serving {
        open.fetch_add(1, Ordering::SeqCst);
        Serving(open.clone())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

pub type EventSink = Arc<dyn Fn(ProxyEvent) + Send + Sync>;

/// Starts the proxy on a loopback port, on its own thread with its own runtime; it runs as
/// long as the supervisor. `hooks.on_event` receives every decision.
pub fn start(policy: ProxyPolicy, hooks: ProxyHooks) -> std::io::Result<Proxy> {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let password = random_token()?;
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("fence:{password}"))
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("fence-proxy")
        .enable_io()
        .enable_time()
        .build()?;
    let shared = Arc::new(Shared {
        policy,
        expected_auth: expected,
        on_event: hooks.on_event,
        ask: hooks.ask,
        identify: hooks.identify,
        identify_all: hooks.identify_all,
    });
    let open = Arc::new(AtomicUsize::new(0));
    let open_in_loop = open.clone();
    std::thread::Builder::new()
        .name("fence-proxy".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(std_listener) else {
                    return;
                };
                let mut number = 0u64;
                loop {
                    let Ok((conn, _)) = listener.accept().await else {
                        continue;
                    };
                    number += 1;
                    let shared = shared.clone();
                    let serving = Serving::new(&open_in_loop);
                    tokio::spawn(async move {
                        serve(&shared, conn, number).await;
                        drop(serving);
                    });
                }
            })
        })?;
    Ok(Proxy {
        addr,
        url: format!("http://fence:{password}@{addr}"),
        open,
    })
}

fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

struct Shared {
    policy: ProxyPolicy,
    expected_auth: String,
    on_event: EventSink,
    ask: Option<AskSink>,
    identify: Option<IdentifySink>,
    identify_all: bool,
}

/// The process at the other end of a proxy connection (the identify hook runs on the
/// blocking pool: it may walk `/proc`).
async fn client_process(shared: &Shared, client: &TcpStream) -> Option<ProcessInfo> {
    let identify = shared.identify.clone()?;
    let (peer, local) = (client.peer_addr().ok()?, client.local_addr().ok()?);
    tokio::task::spawn_blocking(move || identify(peer, local))
        .await
        .ok()
        .flatten()
}

/// Puts a request for a host no rule covers to the gate. The question waits on the
/// blocking pool: the proxy's other connections are served meanwhile.
async fn ask_about(
    shared: &Shared,
    ask: &AskSink,
    head: &Head,
    client: Option<ProcessInfo>,
) -> HostVerdict {
    let question = UnknownHost {
        method: head.method.clone(),
        host: head.host.clone(),
        port: head.port,
        address: shared
            .policy
            .resolve
            .iter()
            .find(|(n, _)| *n == head.host)
            .map(|(_, ip)| *ip),
        client,
    };
    let ask = ask.clone();
    tokio::task::spawn_blocking(move || ask(&question))
        .await
        .unwrap_or_else(|_| HostVerdict::Refused("the question failed".into()))
}

/// The request head as the proxy needs it.
#[derive(Debug)]
struct Head {
    method: String,
    /// Host and port asked for.
    host: String,
    port: u16,
    /// For plain HTTP: the head to send upstream (origin-form request line, without the
    /// proxy's headers).
    upstream_head: Option<Vec<u8>>,
    authorized: bool,
    /// A `Host` header naming another host than the request line.
    host_mismatch: bool,
    /// A plain request that asks to switch protocols (`Connection: Upgrade` with an
    /// `Upgrade` header: a `ws://` WebSocket). Its connection stays open only if the server
    /// answers `101 Switching Protocols`.
    upgrade: bool,
    /// How a plain request's body ends (RFC 9112 §6.3): what follows it on the connection
    /// is another request, which is not passed on.
    body: Body,
}

/// The framing of a plain request's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// `Content-Length` bytes (none without the header).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

enum Refusal {
    Status(u16, &'static str),
}

async fn serve(shared: &Shared, mut client: TcpStream, connection: u64) {
    let _ = client.set_nodelay(true);
    let Ok(Ok((head, leftover))) =
        tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client, &shared.expected_auth)).await
    else {
        let _ = respond(&mut client, 400, "Bad Request").await;
        return;
    };
    let head = match head {
        Ok(h) => h,
        Err(Refusal::Status(code, text)) => {
            let _ = respond(&mut client, code, text).await;
            return;
        }
    };
    let client_process_info = if shared.identify_all && head.authorized {
        client_process(shared, &client).await
    } else {
        None
    };
    let event = |allowed: bool, rule: &str, reason: Option<&str>| ProxyEvent {
        method: head.method.clone(),
        host: head.host.clone(),
        port: head.port,
        allowed,
        rule: rule.to_string(),
        reason: reason.map(str::to_string),
        bytes_up: 0,
        bytes_down: 0,
        client: client_process_info.clone(),
        connection,
    };
    if !head.authorized {
        (shared.on_event)(event(
            false,
            "fence.proxy-auth",
            Some("no or wrong proxy credentials"),
        ));
        let _ = client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"fence\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await;
        return;
    }
    if head.host_mismatch {
        (shared.on_event)(event(
            false,
            "fence.proxy-host",
            Some("Host header names another host"),
        ));
        let _ = respond(&mut client, 403, "Forbidden by fence: Host header mismatch").await;
        return;
    }
    let rule = match shared
        .policy
        .rules
        .iter()
        .find(|r| r.covers(&head.host, head.port))
    {
        Some(rule) => rule.text.clone(),
        None => {
            let verdict = match &shared.ask {
                // Nobody to ask: refused.
                None => HostVerdict::Refused("no --allow-domain rule covers it".into()),
                Some(ask) => {
                    let client_found = match &client_process_info {
                        Some(p) => Some(p.clone()),
                        None => client_process(shared, &client).await,
                    };
                    ask_about(shared, ask, &head, client_found).await
                }
            };
            if let HostVerdict::Refused(refusal) = verdict {
                // An asked question is logged by the gate; a refusal without one here.
                if shared.ask.is_none() {
                    (shared.on_event)(event(false, "fence.net-domain", Some(&refusal)));
                }
                let _ = respond_with_reason(
                    &mut client,
                    403,
                    "Forbidden",
                    &format!("Forbidden by fence: no rule allows this host: {refusal}"),
                )
                .await;
                return;
            }
            "fence.net-domain".to_string()
        }
    };
    let addrs = resolve(&shared.policy, &head.host, head.port).await;
    if addrs.is_empty() {
        (shared.on_event)(event(
            false,
            "fence.net-internal",
            Some("resolves to no address outside loopback, private and link-local ranges"),
        ));
        let _ = respond(
            &mut client,
            403,
            "Forbidden by fence: the name resolves to an internal address",
        )
        .await;
        return;
    }

    let mut first_bytes = leftover;
    if head.upstream_head.is_none() {
        // CONNECT: the tunnel is granted, then the ClientHello is read and checked before
        // anything is sent to the destination.
        if client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .is_err()
        {
            return;
        }
        let hello = tokio::time::timeout(
            HEAD_TIMEOUT,
            read_client_hello(&mut client, &mut first_bytes),
        )
        .await
        .unwrap_or(HelloCheck::NotTls);
        let refusal = match hello {
            HelloCheck::Sni(name) if name == head.host => None,
            HelloCheck::Sni(_) => Some("the TLS server name differs from the CONNECT host"),
            HelloCheck::NoSni => Some("the TLS ClientHello names no server"),
            HelloCheck::Encrypted => Some("the TLS ClientHello is encrypted (ECH)"),
            HelloCheck::NotTls | HelloCheck::NeedMore => {
                Some("the tunnel does not start with a TLS ClientHello")
            }
        };
        if let Some(reason) = refusal {
            (shared.on_event)(event(false, "fence.proxy-sni", Some(reason)));
            return;
        }
    }
    let Ok(mut upstream) = TcpStream::connect(&addrs[..]).await else {
        (shared.on_event)(event(
            false,
            &rule,
            Some("the destination refused or is unreachable"),
        ));
        if head.upstream_head.is_some() {
            let _ = respond(&mut client, 502, "Bad Gateway").await;
        }
        return;
    };
    let _ = upstream.set_nodelay(true);
    let mut up = 0u64;
    if let Some(h) = &head.upstream_head {
        if upstream.write_all(h).await.is_err() {
            return;
        }
        up += h.len() as u64;
        if !head.upgrade {
            // One request a connection: its body, then the server's answer. What the
            // client sends after the body is not passed on.
            let (a, b) = one_request(client, upstream, first_bytes, head.body).await;
            let mut done = event(true, &rule, None);
            done.bytes_up = up + a;
            done.bytes_down = b;
            (shared.on_event)(done);
            return;
        }
    }
    if !head.upgrade {
        if upstream.write_all(&first_bytes).await.is_err() {
            return;
        }
        up += first_bytes.len() as u64;
    }
    if head.upgrade {
        // The connection becomes the new protocol's only if the server switches; any other
        // answer is passed on and the connection ends with it (a server that kept it open
        // would take the client's next request unchecked).
        let switched = match tokio::time::timeout(
            HEAD_TIMEOUT,
            relay_response_head(&mut upstream, &mut client),
        )
        .await
        {
            Ok(Ok((switched, n))) => {
                let mut done = event(true, &rule, None);
                done.bytes_up = up;
                done.bytes_down = n;
                if !switched {
                    let _ = upstream.shutdown().await;
                    done.bytes_down += tokio::io::copy(&mut upstream, &mut client)
                        .await
                        .unwrap_or(0);
                    (shared.on_event)(done);
                    return;
                }
                n
            }
            _ => return,
        };
        // Switched: what the client sent after the handshake is the new protocol's.
        if upstream.write_all(&first_bytes).await.is_err() {
            return;
        }
        up += first_bytes.len() as u64;
        let (Ok(client), Ok(upstream)) = (client.into_std(), upstream.into_std()) else {
            return;
        };
        let (a, b) = tokio::task::spawn_blocking(move || tunnel(client, upstream))
            .await
            .unwrap_or((0, 0));
        let mut done = event(true, &rule, None);
        done.bytes_up = up + a;
        done.bytes_down = switched + b;
        (shared.on_event)(done);
        return;
    }
    let (Ok(client), Ok(upstream)) = (client.into_std(), upstream.into_std()) else {
        return;
    };
    let (a, b) = tokio::task::spawn_blocking(move || tunnel(client, upstream))
        .await
        .unwrap_or((0, 0));
    let mut done = event(true, &rule, None);
    done.bytes_up = up + a;
    done.bytes_down = b;
    (shared.on_event)(done);
}

/// Copies both ways until both sides are done, with `splice(2)` through a pipe: the bytes
/// never enter user space. Returns the bytes copied up and down.
fn tunnel(client: std::net::TcpStream, upstream: std::net::TcpStream) -> (u64, u64) {
    let _ = client.set_nonblocking(false);
    let _ = upstream.set_nonblocking(false);
    let (Ok(client2), Ok(upstream2)) = (client.try_clone(), upstream.try_clone()) else {
        return (0, 0);
    };
    let down = std::thread::spawn(move || splice_all(&upstream2, &client2));
    let up = splice_all(&client, &upstream);
    (up, down.join().unwrap_or(0))
}

/// Moves bytes from `from` to `to` until end of file or an error, then shuts down the
/// writing side of `to` (so its peer sees the end) and the reading side of `from`.
fn splice_all(from: &std::net::TcpStream, to: &std::net::TcpStream) -> u64 {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into a valid array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return 0;
    }
    // SAFETY: fresh descriptors, owned (and closed) from here on.
    let (pipe_r, pipe_w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // A larger pipe moves more per call (64 KiB by default); a refusal leaves the default.
    // SAFETY: F_SETPIPE_SZ on our own pipe.
    unsafe {
        libc::fcntl(
            pipe_w.as_raw_fd(),
            libc::F_SETPIPE_SZ,
            COPY_BUFFER as libc::c_int,
        )
    };
    let splice = |a: i32, b: i32, len: usize| loop {
        // SAFETY: splice between descriptors we hold, without offsets (sockets and a pipe).
        let n = unsafe {
            libc::splice(
                a,
                std::ptr::null_mut(),
                b,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE,
            )
        };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return n;
    };
    let mut total = 0u64;
    'copy: loop {
        let n = splice(from.as_raw_fd(), pipe_w.as_raw_fd(), COPY_BUFFER);
        if n <= 0 {
            break;
        }
        let mut left = n as usize;
        while left > 0 {
            let m = splice(pipe_r.as_raw_fd(), to.as_raw_fd(), left);
            if m <= 0 {
                break 'copy;
            }
            left -= m as usize;
            total += m as u64;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
    let _ = from.shutdown(std::net::Shutdown::Read);
    total
}

/// A refusal whose body carries a reason that may come from a person: the status line
/// stays fixed, and the body is one line without control characters.
async fn respond_with_reason(
    client: &mut TcpStream,
    code: u16,
    status: &str,
    body: &str,
) -> std::io::Result<()> {
    let body = format!("{}\n", crate::escape::for_terminal(body));
    let msg = format!(
        "HTTP/1.1 {code} {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(msg.as_bytes()).await
}

async fn respond(client: &mut TcpStream, code: u16, text: &str) -> std::io::Result<()> {
    let body = format!("{text}\n");
    let msg = format!(
        "HTTP/1.1 {code} {text}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(msg.as_bytes()).await
}

/// Reads and parses the request head. Returns it and the bytes that followed it.
async fn read_head(
    client: &mut TcpStream,
    expected_auth: &str,
) -> std::io::Result<(Result<Head, Refusal>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let mut chunk = [0u8; 4096];
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 96];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let head = parse_request(&req, expected_auth);
                return Ok((head, buf[len..].to_vec()));
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => continue,
            Ok(httparse::Status::Partial) => {
                return Ok((
                    Err(Refusal::Status(431, "Request Header Fields Too Large")),
                    Vec::new(),
                ));
            }
            Err(_) => return Ok((Err(Refusal::Status(400, "Bad Request")), Vec::new())),
        }
    }
}

/// Passes on a plain request's body (`pending` holds what the client sent after the
/// head) and the server's answer, until the server closes (it was asked to: `Connection:
/// close`). What the client sends after the body is read and dropped: another request on
/// the same connection would reach the server with no check of its `Host`. Returns the
/// bytes passed up and down.
async fn one_request(
    client: TcpStream,
    upstream: TcpStream,
    pending: Vec<u8>,
    body: Body,
) -> (u64, u64) {
    let (mut client_in, mut client_out) = client.into_split();
    let (mut upstream_in, mut upstream_out) = upstream.into_split();
    // The answer flows while the body goes up (a client that sent `Expect: 100-continue`
    // waits for the server's word before its body).
    let down = tokio::spawn(async move {
        let mut n = 0;
        // The answer's head says `Connection: close` to the client too: a client that
        // would send its next request on this connection makes a new one (where the proxy
        // checks it) instead of waiting for an answer that never comes.
        if let Ok(head) = read_final_head(&mut upstream_in, &mut client_out, &mut n).await
            && client_out.write_all(&head).await.is_ok()
        {
            n += head.len() as u64;
            n += tokio::io::copy(&mut upstream_in, &mut client_out)
                .await
                .unwrap_or(0);
        }
        let _ = client_out.shutdown().await;
        n
    });
    let mut reader = BodyReader {
        from: &mut client_in,
        buf: pending,
    };
    let up = match reader.pass_on(body, &mut upstream_out).await {
        Ok(n) => n,
        Err(_) => {
            // The client left mid-body, or framed it wrong: the server is told the
            // request ends here, and nothing more of the client's goes to it.
            let _ = upstream_out.shutdown().await;
            0
        }
    };
    // Dropped, to its end: the connection stays open for the answer.
    let drain = tokio::spawn(async move {
        let mut sink = [0u8; 4096];
        while let Ok(1..) = client_in.read(&mut sink).await {}
    });
    let down = down.await.unwrap_or(0);
    drain.abort();
    (up, down)
}

/// A request body read from the client, with what was read ahead of it.
struct BodyReader<'a> {
    from: &'a mut tokio::net::tcp::OwnedReadHalf,
    buf: Vec<u8>,
}

impl BodyReader<'_> {
    /// Reads more into the buffer; fails at the end of the stream.
    async fn fill(&mut self) -> std::io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.from.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    /// Passes `n` bytes on to `to`.
    async fn pass_exactly(
        &mut self,
        mut n: u64,
        to: &mut tokio::net::tcp::OwnedWriteHalf,
    ) -> std::io::Result<()> {
        while n > 0 {
            if self.buf.is_empty() {
                self.fill().await?;
            }
            let take = self.buf.len().min(usize::try_from(n).unwrap_or(usize::MAX));
            to.write_all(&self.buf[..take]).await?;
            self.buf.drain(..take);
            n -= take as u64;
        }
        Ok(())
    }

    /// Takes one line, up to its CRLF (at most 8 KiB), without passing it on; a line that
    /// holds a bare CR or LF is refused (a server may end the line there).
    async fn take_line(&mut self) -> std::io::Result<Vec<u8>> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line: Vec<u8> = self.buf.drain(..end + 2).take(end).collect();
                if line.iter().any(|b| matches!(b, b'\r' | b'\n')) {
                    return Err(std::io::ErrorKind::InvalidData.into());
                }
                return Ok(line);
            }
            if self.buf.len() > 8 * 1024 || self.buf.contains(&b'\n') {
                return Err(std::io::ErrorKind::InvalidData.into());
            }
            self.fill().await?;
        }
    }

    /// Passes `line` and its CRLF on to `to`; returns the bytes passed.
    async fn pass_line(
        line: &[u8],
        to: &mut tokio::net::tcp::OwnedWriteHalf,
    ) -> std::io::Result<u64> {
        let mut out = Vec::with_capacity(line.len() + 2);
        out.extend_from_slice(line);
        out.extend_from_slice(b"\r\n");
        to.write_all(&out).await?;
        Ok(out.len() as u64)
    }

    /// Passes the body framed as `body` on to `to`; returns its size on the wire.
    async fn pass_on(
        &mut self,
        body: Body,
        to: &mut tokio::net::tcp::OwnedWriteHalf,
    ) -> std::io::Result<u64> {
        match body {
            Body::Length(n) => {
                self.pass_exactly(n, to).await?;
                Ok(n)
            }
            Body::Chunked => {
                // Each line is checked before it is passed on: a server reading the body
                // another way (a bare LF, a request posing as trailer fields) never gets
                // the bytes the proxy would not have read as this body.
                let mut sent = 0u64;
                loop {
                    let line = self.take_line().await?;
                    let size = line
                        .split(|b| *b == b';')
                        .next()
                        .unwrap_or(&[])
                        .trim_ascii();
                    let size = std::str::from_utf8(size)
                        .ok()
                        .filter(|t| {
                            !t.is_empty()
                                && t.len() <= 15
                                && t.bytes().all(|b| b.is_ascii_hexdigit())
                        })
                        .and_then(|t| u64::from_str_radix(t, 16).ok())
                        .ok_or(std::io::ErrorKind::InvalidData)?;
                    sent += Self::pass_line(&line, to).await?;
                    if size == 0 {
                        // Trailer fields, each `name: value`, up to the empty line.
                        loop {
                            let trailer = self.take_line().await?;
                            if !trailer.is_empty() && !is_field_line(&trailer) {
                                return Err(std::io::ErrorKind::InvalidData.into());
                            }
                            sent += Self::pass_line(&trailer, to).await?;
                            if trailer.is_empty() {
                                return Ok(sent);
                            }
                        }
                    }
                    // The data, then its CRLF.
                    self.pass_exactly(size, to).await?;
                    if !self.take_line().await?.is_empty() {
                        return Err(std::io::ErrorKind::InvalidData.into());
                    }
                    sent += size + Self::pass_line(&[], to).await?;
                }
            }
        }
    }
}

/// Whether `line` is a header field line: a token, a colon, then a value of visible
/// characters, spaces and tabs (RFC 9110 §5), with no space before the colon.
fn is_field_line(line: &[u8]) -> bool {
    let Some(colon) = line.iter().position(|b| *b == b':') else {
        return false;
    };
    let token = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
    colon > 0
        && line[..colon].iter().all(token)
        && line[colon + 1..]
            .iter()
            .all(|b| *b == b'\t' || (b' '..=b'~').contains(b) || *b >= 0x80)
}

/// Reads the server's answer up to the end of its final head, passing any interim (1xx)
/// answers on to `client` as they are (`n` counts them); returns the final head with its
/// `Connection` and `Keep-Alive` fields replaced by `Connection: close`, and whatever of
/// the body came with it.
async fn read_final_head(
    upstream: &mut tokio::net::tcp::OwnedReadHalf,
    client: &mut tokio::net::tcp::OwnedWriteHalf,
    n: &mut u64,
) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let mut chunk = [0u8; 4096];
        let got = upstream.read(&mut chunk).await?;
        if got == 0 {
            // No head: whatever came goes on as it is.
            return Ok(buf);
        }
        buf.extend_from_slice(&chunk[..got]);
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 96];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(&buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let code = response.code.unwrap_or(0);
                    if (100..200).contains(&code) && code != 101 {
                        client.write_all(&buf[..len]).await?;
                        *n += len as u64;
                        buf.drain(..len);
                        continue;
                    }
                    let status_end = buf.windows(2).position(|w| w == b"\r\n").unwrap_or(0);
                    let mut head = buf[..status_end + 2].to_vec();
                    for h in response.headers.iter() {
                        if h.name.eq_ignore_ascii_case("connection")
                            || h.name.eq_ignore_ascii_case("keep-alive")
                        {
                            continue;
                        }
                        head.extend_from_slice(h.name.as_bytes());
                        head.extend_from_slice(b": ");
                        head.extend_from_slice(h.value);
                        head.extend_from_slice(b"\r\n");
                    }
                    head.extend_from_slice(b"Connection: close\r\n\r\n");
                    head.extend_from_slice(&buf[len..]);
                    return Ok(head);
                }
                Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => break,
                // Not a head the proxy reads: passed on as it is.
                _ => return Ok(buf),
            }
        }
    }
}

/// Reads the server's response head from `upstream` and passes what it read on to
/// `client`; returns whether it is `101 Switching Protocols`, and the bytes passed on.
async fn relay_response_head(
    upstream: &mut TcpStream,
    client: &mut TcpStream,
) -> std::io::Result<(bool, u64)> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let mut chunk = [0u8; 4096];
        let n = upstream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 96];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&buf) {
            Ok(httparse::Status::Complete(_)) => {
                let switched = response.code == Some(101);
                client.write_all(&buf).await?;
                return Ok((switched, buf.len() as u64));
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => continue,
            _ => return Err(std::io::ErrorKind::InvalidData.into()),
        }
    }
}

/// Splits `host:port` (`[v6]:port`); `default_port` when there is none.
fn split_authority(authority: &str, default_port: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        match after.strip_prefix(':') {
            Some(p) => (h.to_string(), p.parse().ok()?),
            None if after.is_empty() => (h.to_string(), default_port?),
            None => return None,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (authority.to_string(), default_port?),
        }
    };
    let host = match host.parse::<IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => normalise_host(&host)?,
    };
    Some((host, port))
}

fn parse_request(req: &httparse::Request<'_, '_>, expected_auth: &str) -> Result<Head, Refusal> {
    let bad = || Refusal::Status(400, "Bad Request");
    let method = req.method.ok_or_else(bad)?.to_string();
    let target = req.path.ok_or_else(bad)?;
    let header = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    let authorized = header("proxy-authorization").is_some_and(|v| v == expected_auth.as_bytes());
    // Security boundary: one Host only (RFC 9112 §3.2). With two, the check below would
    // read the first while an upstream server may route on the second.
    let hosts = req
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"))
        .count();
    if hosts > 1 {
        return Err(Refusal::Status(
            400,
            "Bad Request: more than one Host header",
        ));
    }
    if method == "CONNECT" {
        let (host, port) = split_authority(target, None).ok_or_else(bad)?;
        return Ok(Head {
            method,
            host,
            port,
            upstream_head: None,
            authorized,
            host_mismatch: false,
            upgrade: false,
            body: Body::Length(0),
        });
    }
    let rest = target.strip_prefix("http://").ok_or(Refusal::Status(
        400,
        "Bad Request: only http:// URLs and CONNECT",
    ))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.contains('@') {
        return Err(bad());
    }
    let (host, port) = split_authority(authority, Some(80)).ok_or_else(bad)?;
    let host_mismatch = header("host")
        .and_then(|v| std::str::from_utf8(v).ok())
        .is_some_and(|v| {
            split_authority(v, Some(port)).is_none_or(|(h, p)| h != host || p != port)
        });
    // The Host sent upstream is the authority that was checked, never the client's bytes.
    let checked_host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.clone()
    };
    let checked_authority = if port == 80 {
        checked_host
    } else {
        format!("{checked_host}:{port}")
    };
    let mut upstream = format!(
        "{method} {path} HTTP/1.{}\r\nHost: {checked_authority}\r\n",
        req.version.unwrap_or(1)
    )
    .into_bytes();
    // One request a connection: the proxy checks the first request's host only, and what
    // follows on the connection is relayed as it is. `Connection: close` makes the server
    // answer this request and close, so a client's next request (to this host or another)
    // comes through a new connection and a new check. A protocol upgrade (`ws://`) keeps
    // its `Connection: Upgrade`: the connection is then that protocol's.
    // Security boundary: the body's end is where the proxy stops passing the client's
    // bytes on. A request that frames it two ways (the classic smuggling) or in a way
    // that cannot be known is refused (RFC 9112 §6.3).
    let body = request_body(req).ok_or(Refusal::Status(
        400,
        "Bad Request: the body's length cannot be known",
    ))?;
    // WebSocket only: another protocol on the connection (`h2c`) carries requests of
    // its own, for any host, which the proxy would not see.
    let upgrade = body == Body::Length(0)
        && header("upgrade").is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(b"websocket"))
        && header("connection").is_some_and(|v| {
            v.split(|b| *b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"upgrade"))
        });
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("proxy-authorization")
            || h.name.eq_ignore_ascii_case("proxy-connection")
            || h.name.eq_ignore_ascii_case("host")
            || h.name.eq_ignore_ascii_case("connection")
            || h.name.eq_ignore_ascii_case("keep-alive")
        {
            continue;
        }
        upstream.extend_from_slice(h.name.as_bytes());
        upstream.extend_from_slice(b": ");
        upstream.extend_from_slice(h.value);
        upstream.extend_from_slice(b"\r\n");
    }
    upstream.extend_from_slice(if upgrade {
        b"Connection: Upgrade\r\n"
    } else {
        b"Connection: close\r\n"
    });
    upstream.extend_from_slice(b"\r\n");
    Ok(Head {
        method,
        host,
        port,
        upstream_head: Some(upstream),
        authorized,
        host_mismatch,
        upgrade,
        body,
    })
}

/// The framing of a request's body; `None` where it cannot be known: both
/// `Transfer-Encoding` and `Content-Length`, a transfer coding that does not end in
/// `chunked`, `Content-Length` values that differ or are not numbers.
fn request_body(req: &httparse::Request<'_, '_>) -> Option<Body> {
    let values = |name: &str| {
        req.headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
            .collect::<Vec<_>>()
    };
    let codings = values("transfer-encoding");
    let lengths = values("content-length");
    if !codings.is_empty() {
        // One header, on HTTP/1.1, of codings a server knows, `chunked` last and only
        // there: anything else a server may read another way than the proxy does.
        let [coding] = codings.as_slice() else {
            return None;
        };
        let list: Vec<&[u8]> = coding
            .split(|b| *b == b',')
            .map(|c| c.trim_ascii())
            .collect();
        let known = |c: &[u8]| {
            [&b"gzip"[..], b"deflate", b"compress", b"br", b"zstd"]
                .iter()
                .any(|k| c.eq_ignore_ascii_case(k))
        };
        let chunked_last = list.split_last().is_some_and(|(last, rest)| {
            last.eq_ignore_ascii_case(b"chunked") && rest.iter().all(|c| known(c))
        });
        return (lengths.is_empty() && chunked_last && req.version == Some(1))
            .then_some(Body::Chunked);
    }
    let mut length = None;
    for v in lengths.iter().flat_map(|v| v.split(|b| *b == b',')) {
        let v = v.trim_ascii();
        if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n: u64 = std::str::from_utf8(v).ok()?.parse().ok()?;
        if length.is_some_and(|l| l != n) {
            return None;
        }
        length = Some(n);
    }
    Some(Body::Length(length.unwrap_or(0)))
}

/// The addresses `host` may be reached at on `port`: a `--resolve` mapping of that very
/// name as given, else the system resolver's answers, of which an internal address only
/// where an `--allow-net` rule naming that address allows that port (a security boundary:
/// an allowed name the sandbox's DNS points at the host's loopback reaches no other port
/// of it than the user opened).
async fn resolve(policy: &ProxyPolicy, host: &str, port: u16) -> Vec<SocketAddr> {
    let forced: Vec<IpAddr> = policy
        .resolve
        .iter()
        .filter(|(n, _)| n == host)
        .map(|(_, ip)| ip.to_canonical())
        .collect();
    if !forced.is_empty() {
        return forced
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect();
    }
    let ips: Vec<IpAddr> = match tokio::net::lookup_host((host, port)).await {
        Ok(found) => found.map(|a| a.ip()).collect(),
        Err(_) => Vec::new(),
    };
    reachable(policy, ips, port)
}

/// Of the resolver's answers `ips`, those `port` may be reached at (see [`resolve`]). An
/// internal address, or one of this machine's own interfaces (its Ethernet address, a
/// bridge's: every service of the machine that listens on all its addresses answers
/// there), only where an `--allow-net` rule names it with that port: a name whose DNS the
/// agent's author controls may resolve to any of them.
fn reachable(policy: &ProxyPolicy, ips: Vec<IpAddr>, port: u16) -> Vec<SocketAddr> {
    ips.into_iter()
        .map(|ip| ip.to_canonical())
        .filter(|ip| {
            !(is_internal(*ip) || is_address_of_this_machine(*ip))
                || policy
                    .allowed_by_ip
                    .iter()
                    .any(|(a, ports)| a == ip && ports.contains(&port))
        })
        .map(|ip| SocketAddr::new(ip, port))
        .collect()
}

/// What the start of a tunnel says about its TLS server name.
#[derive(Debug, PartialEq, Eq)]
enum HelloCheck {
    NeedMore,
    NotTls,
    Sni(String),
    NoSni,
    Encrypted,
}

/// Reads from `client` into `buf` until the ClientHello can be judged.
async fn read_client_hello(client: &mut TcpStream, buf: &mut Vec<u8>) -> HelloCheck {
    loop {
        match check_client_hello(buf) {
            HelloCheck::NeedMore if buf.len() < MAX_HEAD => {}
            HelloCheck::NeedMore => return HelloCheck::NotTls,
            verdict => return verdict,
        }
        let mut chunk = [0u8; 4096];
        match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return HelloCheck::NotTls,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Judges the ClientHello at the start of `data`, reassembling its handshake message across
/// TLS records.
fn check_client_hello(data: &[u8]) -> HelloCheck {
    use tls_parser::{TlsExtension, TlsMessage, TlsMessageHandshake};
    const HANDSHAKE: u8 = 22;
    const SNI_HOST_NAME: u8 = 0;
    let mut rest = data;
    let mut handshake = Vec::new();
    let message = loop {
        if rest.is_empty() {
            return HelloCheck::NeedMore;
        }
        if rest[0] != HANDSHAKE {
            return HelloCheck::NotTls;
        }
        match tls_parser::parse_tls_raw_record(rest) {
            Ok((after, record)) => {
                if record.hdr.record_type.0 != HANDSHAKE {
                    return HelloCheck::NotTls;
                }
                handshake.extend_from_slice(record.data);
                rest = after;
            }
            Err(tls_parser::nom::Err::Incomplete(_)) => return HelloCheck::NeedMore,
            Err(_) => return HelloCheck::NotTls,
        }
        if handshake.len() >= 4 {
            let len =
                4 + u32::from_be_bytes([0, handshake[1], handshake[2], handshake[3]]) as usize;
            if len > MAX_HEAD {
                return HelloCheck::NotTls;
            }
            if handshake.len() >= len {
                break handshake[..len].to_vec();
            }
        }
    };
    let Ok((_, TlsMessage::Handshake(TlsMessageHandshake::ClientHello(hello)))) =
        tls_parser::parse_tls_message_handshake(&message)
    else {
        return HelloCheck::NotTls;
    };
    let Some(ext) = hello.ext else {
        return HelloCheck::NoSni;
    };
    let Ok((_, extensions)) = tls_parser::parse_tls_client_hello_extensions(ext) else {
        return HelloCheck::NotTls;
    };
    if extensions
        .iter()
        .any(|e| matches!(e, TlsExtension::Unknown(t, _) if t.0 == ECH_EXTENSION))
    {
        return HelloCheck::Encrypted;
    }
    let names: Vec<&[u8]> = extensions
        .iter()
        .filter_map(|e| match e {
            TlsExtension::SNI(list) => Some(list),
            _ => None,
        })
        .flatten()
        .filter(|(kind, _)| kind.0 == SNI_HOST_NAME)
        .map(|(_, name)| *name)
        .collect();
    match names.as_slice() {
        [] => HelloCheck::NoSni,
        [one] => match std::str::from_utf8(one).ok().and_then(normalise_host) {
            Some(name) => HelloCheck::Sni(name),
            None => HelloCheck::NotTls,
        },
        // More than one name: which one the server uses is its choice.
        _ => HelloCheck::NotTls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An address of this machine's own interfaces (its Ethernet address, a bridge's) is
    /// reached through a name only on a port an `--allow-net` rule allows for it: every
    /// service of the machine that listens on all its addresses answers there.
    #[test]
    fn an_address_of_this_machine_a_name_resolves_to_is_reached_only_where_allowed() {
        let own = nix::ifaddrs::getifaddrs().ok().and_then(|mut addrs| {
            addrs.find_map(|a| {
                let ip = a.address?.as_sockaddr_in().map(|v4| IpAddr::V4(v4.ip()))?;
                (!is_internal(ip)).then_some(ip)
            })
        });
        let Some(own) = own else {
            eprintln!(
                "SKIPPED an_address_of_this_machine_a_name_resolves_to_is_reached_only_where_allowed: no public IPv4 address on this machine's interfaces"
            );
            return;
        };
        let mut policy = ProxyPolicy {
            rules: Vec::new(),
            resolve: Vec::new(),
            allowed_by_ip: Vec::new(),
        };
        let outside: IpAddr = "93.184.216.34".parse().unwrap();
        assert_eq!(
            reachable(&policy, vec![own, outside], 8765),
            vec![SocketAddr::new(outside, 8765)]
        );
        policy.allowed_by_ip = vec![(own, 8765..=8765)];
        assert_eq!(
            reachable(&policy, vec![own], 8765),
            vec![SocketAddr::new(own, 8765)]
        );
        assert!(reachable(&policy, vec![own], 5433).is_empty());
    }

    #[test]
    fn an_internal_address_a_name_resolves_to_is_reached_only_on_a_port_allowed_for_it() {
        let policy = ProxyPolicy {
            rules: Vec::new(),
            resolve: Vec::new(),
            allowed_by_ip: vec![("127.0.0.1".parse().unwrap(), 5432..=5432)],
        };
        let ips = || {
            vec![
                "127.0.0.1".parse().unwrap(),
                "10.1.2.3".parse().unwrap(),
                "93.184.216.34".parse().unwrap(),
            ]
        };
        assert_eq!(
            reachable(&policy, ips(), 5432),
            vec![
                "127.0.0.1:5432".parse().unwrap(),
                "93.184.216.34:5432".parse().unwrap()
            ]
        );
        assert_eq!(
            reachable(&policy, ips(), 41001),
            vec!["93.184.216.34:41001".parse::<SocketAddr>().unwrap()]
        );
        let mapped = "::ffff:127.0.0.1".parse().unwrap();
        assert!(reachable(&policy, vec![mapped], 41001).is_empty());
    }

    fn client_hello(extensions: &[u8]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        body.extend_from_slice(&(extensions.len() as u16).to_be_bytes());
        body.extend_from_slice(extensions);
        let mut hs = vec![1];
        hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(&body);
        hs
    }

    fn sni(name: &str) -> Vec<u8> {
        let mut entry = vec![0];
        entry.extend_from_slice(&(name.len() as u16).to_be_bytes());
        entry.extend_from_slice(name.as_bytes());
        let mut list = (entry.len() as u16).to_be_bytes().to_vec();
        list.extend_from_slice(&entry);
        let mut ext = vec![0, 0];
        ext.extend_from_slice(&(list.len() as u16).to_be_bytes());
        ext.extend_from_slice(&list);
        ext
    }

    fn records(hs: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut rest = hs;
        for &n in sizes.iter().chain(std::iter::once(&usize::MAX)) {
            let (part, after) = rest.split_at(n.min(rest.len()));
            if part.is_empty() {
                break;
            }
            out.extend_from_slice(&[22, 3, 1]);
            out.extend_from_slice(&(part.len() as u16).to_be_bytes());
            out.extend_from_slice(part);
            rest = after;
        }
        out
    }

    #[test]
    fn the_server_name_is_read_across_records() {
        let hs = client_hello(&sni("API.test"));
        let whole = records(&hs, &[]);
        assert_eq!(
            check_client_hello(&whole),
            HelloCheck::Sni("api.test".into())
        );
        let split = records(&hs, &[3, 10, 7]);
        assert_eq!(
            check_client_hello(&split),
            HelloCheck::Sni("api.test".into())
        );
        assert_eq!(
            check_client_hello(&split[..split.len() - 2]),
            HelloCheck::NeedMore
        );
        assert_eq!(check_client_hello(&[]), HelloCheck::NeedMore);
    }

    #[test]
    fn missing_encrypted_and_non_tls_hellos_are_told_apart() {
        assert_eq!(
            check_client_hello(&records(&client_hello(&[]), &[])),
            HelloCheck::NoSni
        );
        let mut ech = sni("public.test");
        ech.extend_from_slice(&[0xfe, 0x0d, 0, 2, 0, 0]);
        assert_eq!(
            check_client_hello(&records(&client_hello(&ech), &[])),
            HelloCheck::Encrypted
        );
        assert_eq!(
            check_client_hello(b"GET / HTTP/1.1\r\n\r\n"),
            HelloCheck::NotTls
        );
        // An application-data record first is not a ClientHello.
        assert_eq!(check_client_hello(&[23, 3, 3, 0, 1, 0]), HelloCheck::NotTls);
    }

    #[test]
    fn domain_rules_cover_a_name_its_subdomains_and_ports() {
        let exact = parse_domain_rule("Example.com").unwrap();
        assert!(exact.covers("example.com", 443));
        assert!(!exact.covers("api.example.com", 443));
        let sub = parse_domain_rule("*.example.com:443").unwrap();
        assert!(sub.covers("api.example.com", 443));
        assert!(
            !sub.covers("example.com", 443),
            "the apex is not a subdomain"
        );
        assert!(!sub.covers("api.example.com", 80));
        assert!(!sub.covers("evilexample.com", 443));
        for bad in ["", "*.", "1.2.3.4", "a b.com", "x.com:0", "x.com:http"] {
            assert!(parse_domain_rule(bad).is_err(), "{bad:?} accepted");
        }
    }

    fn head(raw: &str) -> Result<Head, Refusal> {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut req = httparse::Request::new(&mut headers);
        assert!(req.parse(raw.as_bytes()).unwrap().is_complete());
        parse_request(&req, "Basic good")
    }

    #[test]
    fn a_body_is_framed_one_way_or_the_request_is_refused() {
        let body = |raw: &str| head(raw).ok().map(|h| h.body);
        assert_eq!(
            body("POST http://api.test/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
            Some(Body::Length(5))
        );
        assert_eq!(
            body(
                "POST http://api.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"
            ),
            Some(Body::Length(5))
        );
        assert_eq!(
            body("POST http://api.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
            Some(Body::Chunked)
        );
        assert_eq!(
            body("GET http://api.test/ HTTP/1.1\r\n\r\n"),
            Some(Body::Length(0))
        );
        for raw in [
            "POST http://api.test/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nTransfer-Encoding: identity, chunked\r\n\r\n",
            "POST http://api.test/ HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
            "POST http://api.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            match head(raw) {
                Err(Refusal::Status(code, _)) => assert_eq!(code, 400, "{raw:?}"),
                Ok(h) => panic!("accepted {raw:?}: {h:?}"),
            }
        }
    }

    #[test]
    fn trailer_lines_are_header_fields() {
        assert!(is_field_line(b"Digest: sha-256=abc"));
        assert!(is_field_line(b"X-Empty:"));
        for bad in [
            &b"GET /second HTTP/1.1"[..],
            b"Host : evil.example",
            b": value",
            b"Na me: v",
            b"X: a\x01b",
        ] {
            assert!(!is_field_line(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_request_with_two_host_headers_is_refused() {
        for raw in [
            "GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\nHost: internal.test\r\n\r\n",
            "GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\nhost: api.test\r\n\r\n",
            "CONNECT api.test:443 HTTP/1.1\r\nHost: api.test\r\nHOST: evil.test\r\n\r\n",
        ] {
            match head(raw) {
                Err(Refusal::Status(code, _)) => assert_eq!(code, 400, "{raw:?}"),
                Ok(h) => panic!("accepted {raw:?}: {h:?}"),
            }
        }
    }

    #[test]
    fn requests_are_read_with_their_credentials_and_host() {
        let h = head("CONNECT api.test:443 HTTP/1.1\r\nProxy-Authorization: Basic good\r\n\r\n")
            .ok()
            .unwrap();
        assert_eq!(
            (h.host.as_str(), h.port, h.authorized),
            ("api.test", 443, true)
        );
        assert!(h.upstream_head.is_none());
        let h = head("GET http://api.test/x?y HTTP/1.1\r\nHost: api.test\r\nProxy-Authorization: Basic bad\r\n\r\n")
            .ok()
            .unwrap();
        assert_eq!((h.port, h.authorized, h.host_mismatch), (80, false, false));
        let up = String::from_utf8(h.upstream_head.unwrap()).unwrap();
        assert_eq!(
            up,
            "GET /x?y HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n"
        );
        let h = head("GET http://api.test/ HTTP/1.1\r\nHost: internal.test\r\n\r\n")
            .ok()
            .unwrap();
        assert!(h.host_mismatch);
        assert!(head("GET https://api.test/ HTTP/1.1\r\n\r\n").is_err());
        // The checked authority is what goes upstream as Host, normalised, port kept.
        let h = head(
            "GET http://API.test:8080/ HTTP/1.1\r\nAccept: */*\r\nHost: api.test:8080\r\n\r\n",
        )
        .ok()
        .unwrap();
        assert!(!h.host_mismatch);
        let up = String::from_utf8(h.upstream_head.unwrap()).unwrap();
        assert_eq!(
            up,
            "GET / HTTP/1.1\r\nHost: api.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let h = head("GET http://[::1]:81/ HTTP/1.0\r\n\r\n").ok().unwrap();
        let up = String::from_utf8(h.upstream_head.unwrap()).unwrap();
        assert_eq!(
            up,
            "GET / HTTP/1.0\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n"
        );
        assert!(head("GET http://user@api.test/ HTTP/1.1\r\n\r\n").is_err());
        // A client's keep-alive is not passed on; an upgrade is.
        let h = head("GET http://api.test/ HTTP/1.1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n")
            .ok()
            .unwrap();
        let up = String::from_utf8(h.upstream_head.unwrap()).unwrap();
        assert_eq!(
            up,
            "GET / HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n"
        );
        let h = head("GET http://api.test/ws HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n")
            .ok()
            .unwrap();
        let up = String::from_utf8(h.upstream_head.unwrap()).unwrap();
        assert_eq!(
            up,
            "GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        );
        assert!(h.upgrade);
        // Another protocol than WebSocket is not switched to: closed.
        let h = head("GET http://api.test/ HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\r\n")
            .ok()
            .unwrap();
        assert!(!h.upgrade);
        // `Connection: upgrade` without an `Upgrade` header asks for nothing: closed.
        let h = head("GET http://api.test/ HTTP/1.1\r\nConnection: upgrade\r\n\r\n")
            .ok()
            .unwrap();
        assert!(!h.upgrade);
        let up = String::from_utf8(h.upstream_head.unwrap()).unwrap();
        assert_eq!(
            up,
            "GET / HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n"
        );
    }
}

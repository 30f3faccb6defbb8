//! `fence run` network tests (SPEC §4): loopback servers of the sandbox work, host services
//! on loopback, unix sockets outside and other socket types do not. Each claim is checked
//! from outside: the host's listener accepted nothing and received no byte. Each test runs
//! as root, as an unprivileged user, and without namespaces (the loopback table).

mod support;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use support::{World, python_ready, stderr, stdout};

/// A listener of the host (outside the sandbox) on `addr`, non-blocking.
fn host_listener(addr: &str) -> Option<(TcpListener, u16)> {
    let l = TcpListener::bind(addr).ok()?;
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    Some((l, port))
}

/// Connections the host listener accepted, and the bytes they carried.
fn accepted(l: &TcpListener) -> (usize, usize) {
    let (mut count, mut bytes) = (0, 0);
    while let Ok((mut c, _)) = l.accept() {
        count += 1;
        c.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = Vec::new();
        let _ = c.read_to_end(&mut buf);
        bytes += buf.len();
    }
    (count, bytes)
}

/// A shell prelude: `log=FILE start ARGS…` starts `python3 -m http.server ARGS…` in the
/// background and sets `port` once it listens.
const SERVE: &str = r#"set -e
start() {
    python3 -u -m http.server "$@" > "$log" 2>&1 &
    for _ in $(seq 100); do
        port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$log" | head -1)
        [ -n "$port" ] && break
        sleep 0.1
    done
}
"#;

fn loopback_http_server_inside_is_reachable_with_curl(w: &World) {
    if !python_ready("loopback_http_server_inside_is_reachable_with_curl") {
        return;
    }
    if !Path::new("/usr/bin/curl").exists() {
        support::skip(
            "loopback_http_server_inside_is_reachable_with_curl",
            "/usr/bin/curl is missing",
        );
        return;
    }
    w.write("index.html", "hello from inside\n");
    // One server bound to 127.0.0.1, one to the default (the wildcard, which fence binds
    // on loopback when the sandbox shares the host's network), both asked with curl.
    w.write(
        "serve.sh",
        &format!(
            r#"{SERVE}log=a.log start 0 --bind 127.0.0.1
curl -sS --max-time 10 "http://127.0.0.1:$port/index.html"
log=b.log start 0
curl -sS --max-time 10 "http://localhost:$port/index.html"
kill $(jobs -p)
"#
        ),
    );
    let out = w.run(&["bash", "serve.sh"]);
    assert_eq!(
        stdout(&out),
        "hello from inside\nhello from inside\n",
        "{}",
        stderr(&out)
    );
}

/// With the proxy running (any --allow-domain), the sandbox's own servers stay reachable
/// by every loopback spelling: in a network namespace of the sandbox's own, the wildcard
/// asked as `0.0.0.0` and `127.0.0.2` (NO_PROXY's `127.0.0.0/8`); none of them goes to
/// the proxy, which runs outside and would answer 403.
fn loopback_servers_stay_reachable_when_the_proxy_runs(w: &World) {
    let name = "loopback_servers_stay_reachable_when_the_proxy_runs";
    if !python_ready(name) {
        return;
    }
    if !Path::new("/usr/bin/curl").exists() {
        support::skip(name, "/usr/bin/curl is missing");
        return;
    }
    let own_namespace = w.who != support::Who::UnprivilegedWithoutNamespaces;
    // On the host's network the wildcard is the host's; fence's connect check judges it.
    let wildcard = if own_namespace {
        "0.0.0.0"
    } else {
        "127.0.0.1"
    };
    w.write("index.html", "hello from inside\n");
    w.write(
        "serve.sh",
        &format!(
            r#"{SERVE}log=a.log start 0
curl -sS --max-time 10 "http://{wildcard}:$port/index.html"
if {own_namespace}; then
    log=b.log start 0 --bind 127.0.0.2
    curl -sS --max-time 10 "http://127.0.0.2:$port/index.html"
fi
kill $(jobs -p)
"#
        ),
    );
    let out = w
        .fence(&[
            "--allow-domain".as_ref(),
            "example.com:443".as_ref(),
            "--".as_ref(),
            "bash".as_ref(),
            "serve.sh".as_ref(),
        ])
        .output()
        .unwrap();
    let want = if own_namespace {
        "hello from inside\nhello from inside\n"
    } else {
        "hello from inside\n"
    };
    assert_eq!(stdout(&out), want, "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("proxied connection"),
        "{}",
        stderr(&out)
    );
}

fn host_services_on_loopback_receive_nothing(w: &World) {
    let (v4, p4) = host_listener("127.0.0.1:0").unwrap();
    let v6 = host_listener("[::1]:0");
    let p6 = v6.as_ref().map(|(_, p)| *p).unwrap_or(9);
    let out = w.python(&format!(
        r#"import socket
for fam, addr in [(socket.AF_INET, ('127.0.0.1', {p4})), (socket.AF_INET, ('0.0.0.0', {p4})),
                  (socket.AF_INET6, ('::ffff:127.0.0.1', {p4})), (socket.AF_INET6, ('::1', {p6})),
                  (socket.AF_INET6, ('::', {p6}))]:
    s = socket.socket(fam)
    s.settimeout(2)
    try:
        s.connect(addr)
        s.send(b'hello')
        print('connected', addr)
    except OSError as e:
        print('refused', addr, e.errno)
"#
    ));
    assert_eq!(
        accepted(&v4),
        (0, 0),
        "the host's 127.0.0.1 listener was reached: {}",
        stdout(&out)
    );
    if let Some((l, _)) = v6 {
        assert_eq!(accepted(&l), (0, 0), "the host's ::1 listener was reached");
    }
    assert!(
        !stdout(&out).contains("connected"),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        assert!(
            stderr(&out).contains("(rule fence.net-host-loopback)"),
            "{}",
            stderr(&out)
        );
    }
}

/// This machine's own address (not loopback) is the machine's services: a connect to it is
/// asked as such (`fence.net-host-address`), and with nobody to ask a host listener on
/// every address receives nothing.
fn an_address_of_this_machine_is_asked_as_one_and_reaches_nothing_unanswered(w: &World) {
    let own = nix::ifaddrs::getifaddrs().ok().and_then(|mut addrs| {
        addrs.find_map(|a| {
            let v4 = a.address?.as_sockaddr_in()?.ip();
            (!v4.is_loopback() && !v4.is_link_local()).then_some(v4)
        })
    });
    let Some(own) = own else {
        eprintln!(
            "SKIPPED an_address_of_this_machine_is_asked_as_one: no IPv4 address besides loopback here"
        );
        return;
    };
    let (l, port) = host_listener("0.0.0.0:0").unwrap();
    let out = w.python(&format!(
        r#"import socket
s = socket.socket()
s.settimeout(5)
try:
    s.connect(('{own}', {port}))
    s.send(b'hello')
    print('connected')
except OSError as e:
    print('refused', e.errno)
"#
    ));
    assert_eq!(
        accepted(&l),
        (0, 0),
        "the host's listener was reached: {}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "refused 13\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(rule fence.net-host-address)"),
        "{}",
        stderr(&out)
    );
}

/// The local address (hex, as the kernel prints it) of the listening TCP socket with
/// `inode` in the host's network namespace, if that table holds it. Sockets are found by
/// inode, not port: a port number alone may also be held, on another address or family,
/// by another test's listener.
fn host_listener_with_inode(inode: u64) -> Option<String> {
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9 && f[3] == "0A" && f[9].parse() == Ok(inode) {
                return Some(f[1].split(':').next().unwrap().to_string());
            }
        }
    }
    None
}

fn servers_inside_listen_on_loopback_only(w: &World) {
    // Wildcard binds and a listen without bind; the host's socket table is read while the
    // servers are up. With a network namespace they are not in the host's table at all.
    w.write(
        "probe.py",
        r#"import os, socket, time
wild = socket.socket(); wild.bind(('0.0.0.0', 0)); wild.listen()
wild6 = socket.socket(socket.AF_INET6); wild6.bind(('::', 0)); wild6.listen()
unbound = socket.socket(); unbound.listen()
print(*(os.fstat(s.fileno()).st_ino for s in (wild, wild6, unbound)), flush=True)
time.sleep(3)
"#,
    );
    let mut child = w
        .fence(&["--".as_ref(), support::PYTHON.as_ref(), "probe.py".as_ref()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(child.stdout.as_mut().unwrap());
        r.read_line(&mut line).unwrap();
    }
    let inodes: Vec<u64> = line
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    let loopback4 = format!("{:08X}", u32::from_ne_bytes([127, 0, 0, 1]));
    let loopback6 = format!("{:024X}{:08X}", 0, u32::from_ne_bytes([0, 0, 0, 1]));
    // A dual-stack IPv6 socket's wildcard becomes IPv4's loopback in its mapped form.
    let mapped4 = format!(
        "{:016X}{:08X}{:08X}",
        0,
        u32::from_ne_bytes([0, 0, 0xff, 0xff]),
        u32::from_ne_bytes([127, 0, 0, 1])
    );
    let seen: Vec<(u64, String)> = inodes
        .iter()
        .filter_map(|&i| host_listener_with_inode(i).map(|a| (i, a)))
        .collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        inodes.len(),
        3,
        "no sockets from the sandbox: {line:?} {}",
        stderr(&out)
    );
    for (inode, addr) in &seen {
        assert!(
            *addr == loopback4 || *addr == loopback6 || *addr == mapped4,
            "a sandbox server listens on {addr} (socket inode {inode}) in the host's network"
        );
    }
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        assert_eq!(
            seen.len(),
            3,
            "servers not found in the host's table: {seen:?} of {inodes:?}"
        );
    } else {
        assert!(
            seen.is_empty(),
            "a server in the sandbox's own network namespace is in the host's: {seen:?}"
        );
    }
}

fn socket_types_other_than_tcp_streams_are_refused(w: &World) {
    let out = w.python(
        r#"import socket
for name, args in [('udp', (socket.AF_INET, socket.SOCK_DGRAM, 0)),
                   ('udp6', (socket.AF_INET6, socket.SOCK_DGRAM, 0)),
                   ('icmp', (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)),
                   ('raw', (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)),
                   ('mptcp', (socket.AF_INET, socket.SOCK_STREAM, 262)),
                   ('sctp', (socket.AF_INET6, socket.SOCK_STREAM, 132)),
                   ('packet', (socket.AF_PACKET, socket.SOCK_RAW, 0)),
                   ('netlink', (socket.AF_NETLINK, socket.SOCK_RAW, 0)),
                   ('unix_dgram', (socket.AF_UNIX, socket.SOCK_DGRAM, 0)),
                   ('unix_raw', (socket.AF_UNIX, socket.SOCK_RAW, 0))]:
    try:
        socket.socket(*args)
        print(name, 'created')
    except OSError as e:
        print(name, e.errno)
try:
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    print('dgram_pair created')
except OSError as e:
    print('dgram_pair', e.errno)
socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
print('tcp created')
"#,
    );
    let text = stdout(&out);
    // UDP sockets exist only in the sandbox's own network namespace
    // (udp_reaches_only_the_sandboxs_own_loopback).
    let udp: [&str; 2] = if w.who == support::Who::UnprivilegedWithoutNamespaces {
        ["udp 13", "udp6 13"]
    } else {
        ["udp created", "udp6 created"]
    };
    for expected in udp.into_iter().chain([
        "icmp 93",
        "raw 13",
        "mptcp 93",
        "sctp 93",
        "packet 97",
        "netlink 97",
        "unix_dgram 13",
        "unix_raw 13",
        "dgram_pair 13",
        "tcp created",
    ]) {
        assert!(
            text.lines().any(|l| l == expected),
            "missing {expected:?} in\n{text}\n{}",
            stderr(&out)
        );
    }
}

/// UDP: in the sandbox's own network namespace a server and a client on its loopback talk
/// (IPv4 and IPv6, `sendto` and `connect`), and a datagram for any other address is refused
/// with a reason line; without a network namespace no UDP socket can be made. Either way the
/// host's UDP listeners on loopback receive nothing.
fn udp_reaches_only_the_sandboxs_own_loopback(w: &World) {
    if !python_ready("udp_reaches_only_the_sandboxs_own_loopback") {
        return;
    }
    let host4 = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let host6 = std::net::UdpSocket::bind("[::1]:0").ok();
    let p4 = host4.local_addr().unwrap().port();
    let p6 = host6.as_ref().map_or(9, |h| h.local_addr().unwrap().port());
    let out = w.python(&format!(
        r#"import socket
def tried(name, f):
    try:
        f()
        print(name, 'ok')
    except OSError as e:
        print(name, e.errno)
def own(family, host):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((host, 0))
    c = socket.socket(family, socket.SOCK_DGRAM)
    c.settimeout(2)
    c.sendto(b'one', s.getsockname())
    got = s.recvfrom(10)
    s.sendto(b'back', got[1])
    c.connect(s.getsockname())
    c.send(b'two')
    assert (got[0], s.recv(10), c.recv(10)) == (b'one', b'two', b'back')
tried('own4', lambda: own(socket.AF_INET, '127.0.0.1'))
tried('own6', lambda: own(socket.AF_INET6, '::1'))
def send(family, dest, connect):
    s = socket.socket(family, socket.SOCK_DGRAM)
    if connect:
        s.connect(dest)
        s.send(b'leak')
    else:
        s.sendto(b'leak', dest)
for name, family, dest in [('host4', socket.AF_INET, ('127.0.0.1', {p4})),
                           ('host6', socket.AF_INET6, ('::1', {p6})),
                           ('outside', socket.AF_INET, ('192.0.2.1', 53)),
                           ('metadata', socket.AF_INET, ('169.254.169.254', 80))]:
    tried(name + '-sendto', lambda: send(family, dest, False))
    tried(name + '-connect', lambda: send(family, dest, True))
"#
    ));
    let text = stdout(&out);
    std::thread::sleep(Duration::from_millis(100));
    for host in std::iter::once(&host4).chain(host6.as_ref()) {
        host.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 64];
        assert!(
            host.recv_from(&mut buf).is_err(),
            "a host UDP listener on loopback received a datagram:\n{text}"
        );
    }
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        for line in text.lines() {
            assert!(
                line.ends_with(" 13"),
                "{line}: UDP without a network namespace\n{text}"
            );
        }
        return;
    }
    for expected in [
        "own4 ok",
        "own6 ok",
        "outside-sendto 101",
        "outside-connect 101",
        "metadata-sendto 101",
        "metadata-connect 101",
    ] {
        assert!(
            text.lines().any(|l| l == expected),
            "missing {expected:?} in\n{text}\n{}",
            stderr(&out)
        );
    }
    assert!(
        stderr(&out).contains("UDP outside the sandbox's own loopback (DNS: a host named with --allow-domain is reached through fence's proxy without a lookup; --allow-dns lets lookups out): 192.0.2.1:53 (rule fence.net-datagram)"),
        "{}",
        stderr(&out)
    );
}

/// A host service of the sandbox's own user that listens with `SO_REUSEPORT` on loopback
/// keeps every connection: the sandbox cannot join its port's group (where it shares the
/// host's loopback, the option cannot be set; with a network namespace its loopback is
/// its own). Checked from the service's side: it accepts all of the clients the test
/// sends while the sandbox tries to listen on the same port.
fn a_host_service_with_reuseport_keeps_its_connections(w: &World) {
    const TEST: &str = "a_host_service_with_reuseport_keeps_its_connections";
    if !python_ready(TEST) {
        return;
    }
    use std::io::BufRead;
    // The service runs as the user the sandbox runs as (the kernel groups only sockets of
    // one user), counts what it accepts, and prints the count when told on stdin.
    let mut service = w
        .command_as_runner(support::PYTHON)
        .args([
            "-c",
            r#"import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(('127.0.0.1', 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
n = [0]
def serve():
    while True:
        c, _ = s.accept()
        n[0] += 1
        c.close()
threading.Thread(target=serve, daemon=True).start()
sys.stdin.readline()
print(n[0], flush=True)
"#,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(service.stdout.take().unwrap()).lines();
    let port: u16 = lines.next().unwrap().unwrap().trim().parse().unwrap();
    // The sandbox sets the option (or tries), binds the port and listens, says so, and
    // holds its listener while the clients come.
    let mut sandbox = w
        .fence(&[
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "-c".as_ref(),
            format!(
                r#"import socket, time
s = socket.socket()
try:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    print('set', flush=True)
except OSError as e:
    print('option', e.errno, flush=True)
try:
    s.bind(('127.0.0.1', {port}))
    s.listen(64)
    print('listening', flush=True)
except OSError as e:
    print('bind', e.errno, flush=True)
time.sleep(3)
"#
            )
            .as_ref(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = std::io::BufReader::new(sandbox.stdout.take().unwrap()).lines();
    let first = said.next().unwrap().unwrap();
    let second = said.next().unwrap().unwrap();
    for _ in 0..20 {
        let _ = TcpStream::connect(("127.0.0.1", port));
    }
    std::thread::sleep(Duration::from_millis(300));
    std::io::Write::write_all(service.stdin.as_mut().unwrap(), b"count\n").unwrap();
    let count: usize = lines.next().unwrap().unwrap().trim().parse().unwrap();
    let _ = service.wait();
    let _ = sandbox.wait();
    assert_eq!(
        count, 20,
        "the host service lost connections to the sandbox ({first}; {second})"
    );
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        assert_eq!(first, "option 1", "SO_REUSEPORT was set: {second}");
    }
}

fn tcp_fast_open_to_a_host_listener_gets_nothing_through(w: &World) {
    let (l, port) = host_listener("127.0.0.1:0").unwrap();
    let out = w.python(&format!(
        r#"import socket
s = socket.socket()
try:
    s.sendto(b'hello', socket.MSG_FASTOPEN, ('127.0.0.1', {port}))
    print('sent')
except OSError as e:
    print('refused', e.errno)
"#
    ));
    assert_eq!(accepted(&l), (0, 0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "refused 95\n", "{}", stderr(&out));
}

/// A network call on a descriptor that is no socket fails as the kernel fails it, whatever
/// the destination: ENOTSOCK for a file or a pipe, EBADF for a closed descriptor (not a
/// destination refused).
fn socket_calls_on_a_descriptor_that_is_no_socket_fail_as_bare(w: &World) {
    if !python_ready("socket_calls_on_a_descriptor_that_is_no_socket_fail_as_bare") {
        return;
    }
    let out = w.python(
        r#"import ctypes, errno, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
for host in ("127.0.0.1", "192.0.2.1"):
    addr = struct.pack("HH4s8x", socket.AF_INET, socket.htons(9), socket.inet_aton(host))
    for what, fd in (("file", os.open("/dev/null", os.O_RDONLY)), ("pipe", os.pipe()[0]), ("closed", 999)):
        for call in ("connect", "bind"):
            r = getattr(libc, call)(fd, addr, len(addr))
            print(host, what, call, r, errno.errorcode.get(ctypes.get_errno()))
"#,
    );
    let text = stdout(&out);
    for host in ["127.0.0.1", "192.0.2.1"] {
        for call in ["connect", "bind"] {
            for (what, errno) in [
                ("file", "ENOTSOCK"),
                ("pipe", "ENOTSOCK"),
                ("closed", "EBADF"),
            ] {
                let line = format!("{host} {what} {call} -1 {errno}");
                assert!(text.contains(&line), "{line}: {text}{}", stderr(&out));
            }
        }
    }
}

fn datagrams_to_an_outside_unix_socket_get_nothing_through(w: &World) {
    let path = w.outside.join("dgram.sock");
    let sock = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    w.own(&path);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    sock.set_nonblocking(true).unwrap();
    // sendto and sendmsg with the outside address, from a new datagram socket and from
    // one end of a datagram socketpair (which may also name another destination).
    let out = w.python(&format!(
        r#"import socket
p = {p:?}
def attempt(name, f):
    try:
        f()
        print(name, 'sent')
    except OSError as e:
        print(name, e.errno)
attempt('sendto', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'a', p))
attempt('sendmsg', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendmsg([b'b'], [], 0, p))
attempt('pair', lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0].sendmsg([b'c'], [], 0, p))
attempt('stream', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).sendmsg([b'd'], [], 0, p))
# SOCK_RAW is a datagram socket to the kernel's unix family.
attempt('raw-sendmsg', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW).sendmsg([b'e'], [], 0, p))
attempt('raw-sendto', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW).sendto(b'f', p))
attempt('raw-pair', lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)[0].sendmsg([b'g'], [], 0, p))
"#,
        p = path.display().to_string()
    ));
    let mut buf = [0u8; 16];
    assert!(
        sock.recv(&mut buf).is_err(),
        "a datagram reached the outside socket: {}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("sent"), "{}", stdout(&out));
    for raw in ["raw-sendmsg 13", "raw-sendto 13", "raw-pair 13"] {
        assert!(
            stdout(&out).lines().any(|l| l == raw),
            "missing {raw:?}:\n{}",
            stdout(&out)
        );
    }
}

fn allow_unix_opens_one_outside_socket(w: &World) {
    let path = w.outside.join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    w.own(&path);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    let other = w.outside.join("other.sock");
    let other_listener = std::os::unix::net::UnixListener::bind(&other).unwrap();
    w.own(&other);
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o777)).unwrap();
    other_listener.set_nonblocking(true).unwrap();
    let reader = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut text = String::new();
        c.read_to_string(&mut text).unwrap();
        text
    });
    // Reached through a symlink made in the worktree: the socket, not the name, is checked.
    std::os::unix::fs::symlink(&path, w.worktree.join("agent-link")).unwrap();
    w.write(
        "probe.py",
        &format!(
            r#"import socket
s = socket.socket(socket.AF_UNIX)
s.connect('agent-link')
s.sendall(b'hello agent')
s.close()
t = socket.socket(socket.AF_UNIX)
try:
    t.connect({o:?})
    t.send(b'x')
    print('other connected')
except OSError as e:
    print('other refused', e.errno)
"#,
            o = other.display().to_string()
        ),
    );
    let out = w
        .fence(&[
            "--allow-unix".as_ref(),
            path.as_os_str(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(reader.join().unwrap(), "hello agent");
    assert!(
        other_listener.accept().is_err(),
        "a socket not allowed was reached"
    );
    assert_eq!(stdout(&out), "other refused 13\n", "{}", stderr(&out));
}

/// In an `--allow-write` folder the sandbox reaches only the unix sockets it bound itself.
/// It binds and removes many there, so that their inode numbers are free again when a host
/// program binds its own socket in the same folder (ext4 hands a freed number out again at
/// once): that socket is still the host program's, and the host listener receives nothing.
fn a_host_socket_on_an_inode_number_the_sandbox_used_stays_the_hosts(w: &World) {
    let shared = w.outside.join("shared-sockets");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let victim = shared.join("victim.sock");
    let ready = shared.join("READY");
    let host = {
        let (victim, ready) = (victim.clone(), ready.clone());
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while !ready.exists() {
                if start.elapsed() > Duration::from_secs(60) {
                    return None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let listener = std::os::unix::net::UnixListener::bind(&victim).unwrap();
            std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o777)).unwrap();
            listener.set_nonblocking(true).unwrap();
            let mut got = Vec::new();
            let until = std::time::Instant::now() + Duration::from_secs(8);
            while std::time::Instant::now() < until {
                if let Ok((mut c, _)) = listener.accept() {
                    c.set_nonblocking(false).unwrap();
                    c.set_read_timeout(Some(Duration::from_millis(500)))
                        .unwrap();
                    let mut buf = [0u8; 256];
                    let n = c.read(&mut buf).unwrap_or(0);
                    got.extend_from_slice(&buf[..n]);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Some(got)
        })
    };
    w.write(
        "spray.py",
        &format!(
            r#"import os, socket, time
d = {d:?}
inodes = set()
for i in range(300):
    p = os.path.join(d, 's%d' % i)
    s = socket.socket(socket.AF_UNIX)
    s.bind(p)
    inodes.add(os.stat(p).st_ino)
    os.unlink(p)
    s.close()
open(os.path.join(d, 'READY'), 'w').close()
v = os.path.join(d, 'victim.sock')
deadline = time.time() + 20
while not os.path.exists(v) and time.time() < deadline:
    time.sleep(0.005)
print('reused' if os.stat(v).st_ino in inodes else 'fresh', flush=True)
t = socket.socket(socket.AF_UNIX)
try:
    t.connect(v)
    t.sendall(b'PROBE-INODE-REUSE')
    print('connected')
except OSError as e:
    print('refused', e.errno)
"#,
            d = shared.display().to_string()
        ),
    );
    let out = w
        .fence(&[
            "--allow-write".as_ref(),
            shared.as_os_str(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "spray.py".as_ref(),
        ])
        .output()
        .unwrap();
    let got = host.join().unwrap().expect("the sandbox made its sockets");
    let text = stdout(&out);
    assert!(
        got.is_empty(),
        "the host's socket received {:?} ({text}): {}",
        String::from_utf8_lossy(&got),
        stderr(&out)
    );
    assert!(text.ends_with("refused 13\n"), "{text}: {}", stderr(&out));
    if !text.starts_with("reused") {
        eprintln!("note: the host socket got a fresh inode number here; the check still held");
    }
}

fn a_thread_swapping_the_sockaddr_never_reaches_a_host_port(w: &World) {
    let test = "a_thread_swapping_the_sockaddr_never_reaches_a_host_port";
    let (host, host_port) = host_listener("127.0.0.1:0").unwrap();
    let Some((ok, refused)) = race_connects(w, test, host_port, None) else {
        return;
    };
    assert_eq!(
        accepted(&host),
        (0, 0),
        "a swapped sockaddr reached the host's port"
    );
    // Both outcomes must have happened, or the race was not exercised.
    assert!(ok > 0 && refused > 0, "race not exercised: {ok} {refused}");
}

/// Runs, under fence with `--allow-net 127.0.0.1:ALLOWED` when given, a program whose
/// thread flips a sockaddr between ALLOWED (else a server of its own) and `forbidden`
/// while the main thread connects 10,000 times. Returns (connected, refused), or `None`
/// (with a printed reason) without a C compiler.
fn race_connects(
    w: &World,
    test: &str,
    forbidden: u16,
    allowed: Option<u16>,
) -> Option<(u32, u32)> {
    if std::process::Command::new("cc")
        .arg("--version")
        .output()
        .is_err()
    {
        support::skip(test, "no C compiler (cc)");
        return None;
    }
    let host_port = forbidden;
    let src = format!(
        r#"#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
static struct sockaddr_in addr;
static volatile int stop;
static unsigned short own, host = {host_port};
static void spin(void) {{ __asm__ volatile("" ::: "memory"); for (volatile int i = 0; i < 200; i++) {{}} __asm__ volatile("" ::: "memory"); }}
static void *swap(void *arg) {{
    (void)arg;
    while (!stop) {{ addr.sin_port = htons(host); spin(); addr.sin_port = htons(own); spin(); }}
    return 0;
}}
static void *drain(void *arg) {{
    int srv = *(int *)arg;
    for (;;) {{ int c = accept(srv, 0, 0); if (c >= 0) close(c); }}
    return 0;
}}
int main(int argc, char **argv) {{
    static int srv;
    pthread_t t, d;
    if (argc > 1) {{
        own = atoi(argv[1]);
    }} else {{
        srv = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {{ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) }};
        socklen_t len = sizeof a;
        if (bind(srv, (struct sockaddr *)&a, sizeof a) || listen(srv, 128) || getsockname(srv, (struct sockaddr *)&a, &len)) {{ perror("server"); return 2; }}
        own = ntohs(a.sin_port);
        pthread_create(&d, 0, drain, &srv);
    }}
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(own);
    pthread_create(&t, 0, swap, 0);
    int ok = 0, refused = 0;
    for (int i = 0; i < 10000; i++) {{
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&addr, sizeof addr) == 0) {{ write(s, "x", 1); ok++; }} else refused++;
        close(s);
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", ok, refused);
    return 0;
}}
"#
    );
    let bin = w.compile_c("race", &src);
    let allow = allowed.map(|p| format!("127.0.0.1:{p}"));
    let mut args: Vec<&std::ffi::OsStr> = vec!["--quiet-blocks".as_ref()];
    if let Some(a) = &allow {
        args.push("--allow-net".as_ref());
        args.push(a.as_ref());
    }
    args.push("--".as_ref());
    args.push(bin.as_os_str());
    let port_arg = allowed.map(|p| p.to_string());
    if let Some(p) = &port_arg {
        args.push(p.as_ref());
    }
    let out = w.fence(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(counts.len(), 2, "{}", stdout(&out));
    Some((counts[0], counts[1]))
}

fn allow_net_opens_exactly_the_allowed_ports(w: &World) {
    let (a, pa) = host_listener("127.0.0.1:0").unwrap();
    let (b, pb) = host_listener("127.0.0.1:0").unwrap();
    let v6 = host_listener("[::1]:0").zip(host_listener("[::1]:0"));
    let (pc, pd) = v6
        .as_ref()
        .map(|((_, c), (_, d))| (*c, *d))
        .unwrap_or((9, 9));
    w.write(
        "probe.py",
        &format!(
            r#"import socket
for fam, addr in [(socket.AF_INET, ('127.0.0.1', {pa})), (socket.AF_INET, ('127.0.0.1', {pb})),
                  (socket.AF_INET6, ('::1', {pc})), (socket.AF_INET6, ('::1', {pd}))]:
    s = socket.socket(fam)
    s.settimeout(3)
    try:
        s.connect(addr)
        s.sendall(b'hello')
        s.close()
        print('connected', addr[1])
    except OSError as e:
        print('refused', addr[1], e.errno)
"#
        ),
    );
    let allow_a = format!("127.0.0.1:{pa}-{pa}");
    let allow_c = format!("[::1]:{pc}");
    let out = w
        .fence(&[
            "--allow-net".as_ref(),
            allow_a.as_ref(),
            "--allow-net".as_ref(),
            allow_c.as_ref(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(accepted(&a), (1, 5), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(accepted(&b), (0, 0), "a port not allowed was reached");
    if let Some(((c, _), (d, _))) = v6 {
        assert_eq!(accepted(&c), (1, 5), "{}{}", stdout(&out), stderr(&out));
        assert_eq!(accepted(&d), (0, 0), "an IPv6 port not allowed was reached");
    }
}

/// With its own network namespace, an allowed connection is one fence made in the host's
/// namespace and installed at the sandbox's descriptor. Disconnected (`connect` with
/// AF_UNSPEC) and connected anew, it would leave from the host: a loopback address is then
/// the host's loopback, any service there. fence refuses both calls on such a socket, with
/// a reason; the host's other listener receives nothing, in every mode (without a network
/// namespace the loopback table refuses the second connect).
fn an_allowed_connection_cannot_be_pointed_at_another_host_port(w: &World) {
    let (a, pa) = host_listener("127.0.0.1:0").unwrap();
    let (b, pb) = host_listener("127.0.0.1:0").unwrap();
    w.compile_c(
        "reconnect",
        &format!(
            r#"#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static struct sockaddr_in to(int port) {{
    struct sockaddr_in a = {{ .sin_family = AF_INET, .sin_port = htons(port) }};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}}
int main(void) {{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = to({pa}), b = to({pb});
    printf("allowed %d\n", connect(s, (struct sockaddr *)&a, sizeof a));
    struct sockaddr none = {{ .sa_family = AF_UNSPEC }};
    int r = connect(s, &none, sizeof none);
    printf("disconnect %d %s\n", r, r ? strerror(errno) : "");
    r = connect(s, (struct sockaddr *)&b, sizeof b);
    printf("other %d %s\n", r, r ? strerror(errno) : "");
    printf("write %zd\n", write(s, "leak", 4));
    /* A fresh socket to the same port: refused as every host port no rule opens. */
    int t = socket(AF_INET, SOCK_STREAM, 0);
    r = connect(t, (struct sockaddr *)&b, sizeof b);
    printf("fresh %d %s\n", r, r ? strerror(errno) : "");
    return 0;
}}
"#
        ),
    );
    let allow = format!("127.0.0.1:{pa}");
    let out = w
        .fence(&[
            "--approver".as_ref(),
            "deny".as_ref(),
            "--allow-net".as_ref(),
            allow.as_ref(),
            "--".as_ref(),
            "./reconnect".as_ref(),
        ])
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}{err}");
    assert!(text.contains("allowed 0"), "{text}{err}");
    assert_eq!(
        accepted(&b),
        (0, 0),
        "a host port no rule opens was reached: {text}{err}"
    );
    assert_eq!(accepted(&a).0, 1, "{text}{err}");
    if w.who != support::Who::UnprivilegedWithoutNamespaces {
        // The disconnect itself is refused, with its reason on the process's stderr.
        assert!(
            text.contains("disconnect -1 Permission denied"),
            "{text}{err}"
        );
        assert!(
            err.contains("(rule fence.net-host-socket)"),
            "no reason for the refused disconnect: {text}{err}"
        );
    }
}

fn allowed_names_resolve_in_the_supervisor_and_never_to_loopback(w: &World) {
    let (a, pa) = host_listener("127.0.0.1:0").unwrap();
    let (b, pb) = host_listener("127.0.0.1:0").unwrap();
    w.write(
        "probe.py",
        &format!(
            r#"import socket
for port in ({pa}, {pb}):
    try:
        s = socket.create_connection(('127.0.0.1', port), timeout=3)
        s.sendall(b'hello')
        s.close()
        print('connected', port)
    except OSError as e:
        print('refused', port, e.errno)
"#
        ),
    );
    // api.test is mapped with --resolve (an address given so counts as allowed by IP).
    let api = format!("api.test:{pa}");
    let out = w
        .fence(&[
            "--allow-net".as_ref(),
            api.as_ref(),
            "--resolve".as_ref(),
            "api.test:127.0.0.1".as_ref(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(accepted(&a), (1, 5), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(accepted(&b), (0, 0), "a port not allowed was reached");
    // localhost resolves to 127.0.0.1 through the system resolver: a name may not lead
    // there unless the address is allowed by IP.
    let local = format!("localhost:{pa}");
    let out = w
        .fence(&[
            "--allow-net".as_ref(),
            local.as_ref(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(accepted(&a), (0, 0), "a name led to the host's loopback");
    assert!(
        stderr(&out).contains(&format!("--allow-net {local}: resolves to 127.0.0.1")),
        "{}",
        stderr(&out)
    );
}

fn a_thread_swapping_between_an_allowed_and_a_forbidden_port_never_reaches_the_forbidden_one(
    w: &World,
) {
    let test =
        "a_thread_swapping_between_an_allowed_and_a_forbidden_port_never_reaches_the_forbidden_one";
    let (allowed, pa) = host_listener("127.0.0.1:0").unwrap();
    let (forbidden, pf) = host_listener("127.0.0.1:0").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let drained = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match allowed.accept() {
                    Ok(_) => n += 1,
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
            n + accepted(&allowed).0
        })
    };
    let result = race_connects(w, test, pf, Some(pa));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reached_allowed = drained.join().unwrap();
    let Some((ok, refused)) = result else {
        return;
    };
    assert_eq!(
        accepted(&forbidden),
        (0, 0),
        "a swapped sockaddr reached the forbidden port"
    );
    assert!(ok > 0 && refused > 0, "race not exercised: {ok} {refused}");
    assert_eq!(reached_allowed, ok as usize);
}

/// A plain HTTP server of the host on 127.0.0.1 answering every request with `body`; it
/// records how many connections it accepted and the bytes it received.
struct HostServer {
    port: u16,
    seen: std::sync::Arc<std::sync::Mutex<(usize, Vec<u8>)>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl HostServer {
    fn start(body: &'static str) -> HostServer {
        use std::sync::atomic::Ordering;
        let (l, port) = host_listener("127.0.0.1:0").unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new((0usize, Vec::new())));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (seen2, stop2) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                let Ok((mut c, _)) = l.accept() else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                };
                c.set_nonblocking(false).unwrap();
                c.set_read_timeout(Some(Duration::from_millis(500)))
                    .unwrap();
                let mut buf = vec![0u8; 65536];
                let n = c.read(&mut buf).unwrap_or(0);
                {
                    let mut s = seen2.lock().unwrap();
                    s.0 += 1;
                    s.1.extend_from_slice(&buf[..n]);
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = std::io::Write::write_all(&mut c, reply.as_bytes());
            }
        });
        HostServer { port, seen, stop }
    }

    fn accepted(&self) -> usize {
        self.seen.lock().unwrap().0
    }

    fn received(&self) -> Vec<u8> {
        self.seen.lock().unwrap().1.clone()
    }
}

impl Drop for HostServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

fn proxy_lets_allowed_names_through_and_refuses_others(w: &World) {
    let server = HostServer::start("hello proxy\n");
    let port = server.port;
    w.write(
        "fetch.sh",
        &format!(
            "curl -sS --max-time 10 http://api.test:{port}/\ncurl -sS --max-time 10 -o /dev/null -w '%{{http_code}}\\n' http://other.test:{port}/\n"
        ),
    );
    let out = w
        .fence(&[
            "--allow-domain".as_ref(),
            "api.test".as_ref(),
            "--resolve".as_ref(),
            "api.test:127.0.0.1".as_ref(),
            "--".as_ref(),
            "bash".as_ref(),
            "fetch.sh".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "hello proxy\n403\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "Denied: proxied connection to a host no --allow-domain rule covers: other.test:"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        server.accepted(),
        1,
        "the server saw more than the allowed request"
    );
    let got = String::from_utf8_lossy(&server.received()).into_owned();
    assert!(got.starts_with("GET / HTTP/1.1\r\n"), "{got}");
    assert!(
        !got.to_ascii_lowercase().contains("proxy-authorization"),
        "the proxy credentials went upstream: {got}"
    );
}

fn proxy_refuses_a_name_that_resolves_to_loopback(w: &World) {
    let server = HostServer::start("secret\n");
    let port = server.port;
    w.write(
        "fetch.sh",
        &format!(
            "curl -sS --max-time 10 --noproxy '' -x \"$HTTP_PROXY\" -o /dev/null -w '%{{http_code}}\\n' http://localhost:{port}/\n"
        ),
    );
    let out = w
        .fence(&[
            "--allow-domain".as_ref(),
            "localhost".as_ref(),
            "--".as_ref(),
            "bash".as_ref(),
            "fetch.sh".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "403\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(rule fence.net-internal)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        server.accepted(),
        0,
        "a name led the proxy to the host's loopback"
    );
}

/// `--allow-net 127.0.0.1:PORT` opens that port of the host's loopback, and no other: a
/// name the proxy lets through that resolves to 127.0.0.1 (`localhost` here, any name
/// whose DNS the sandbox's author controls elsewhere) reaches no other port of it, neither
/// by a plain request nor by a CONNECT tunnel.
fn proxy_reaches_an_address_allowed_by_ip_only_on_its_allowed_ports(w: &World) {
    let closed = HostServer::start("secret\n");
    let opened = HostServer::start("open\n");
    let fetch = |port: u16, tunnel: &str| {
        format!(
            "curl -sS --max-time 10 --noproxy '' -x \"$HTTP_PROXY\" {tunnel} -o /dev/null -w '%{{http_code}}\\n' http://localhost:{port}/ || true\n"
        )
    };
    w.write(
        "fetch.sh",
        &[
            fetch(closed.port, ""),
            fetch(closed.port, "-p"),
            fetch(opened.port, ""),
        ]
        .concat(),
    );
    let out = w
        .fence(&[
            "--allow-net".as_ref(),
            format!("127.0.0.1:{}", opened.port).as_ref(),
            "--allow-domain".as_ref(),
            "localhost".as_ref(),
            "--".as_ref(),
            "bash".as_ref(),
            "fetch.sh".as_ref(),
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(
        closed.accepted(),
        0,
        "the proxy reached a host loopback port no rule opened: {err}"
    );
    let codes: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(
        codes.first().map(String::as_str),
        Some("403"),
        "{codes:?}: {err}"
    );
    assert_eq!(
        codes.last().map(String::as_str),
        Some("200"),
        "{codes:?}: {err}"
    );
    assert_eq!(opened.accepted(), 1, "the opened port: {codes:?}: {err}");
    assert!(err.contains("(rule fence.net-internal)"), "{err}");
}

fn proxy_checks_the_tls_server_name_before_connecting(w: &World) {
    let server = HostServer::start("");
    let port = server.port;
    w.write(
        "probe.py",
        &format!(
            r#"import base64, os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])
auth = base64.b64encode(f'{{u.username}}:{{u.password}}'.encode()).decode()
def hello(sni):
    ext = b''
    if sni:
        name = sni.encode()
        entry = b'\x00' + len(name).to_bytes(2, 'big') + name
        lst = len(entry).to_bytes(2, 'big') + entry
        ext += b'\x00\x00' + len(lst).to_bytes(2, 'big') + lst
    body = b'\x03\x03' + b'\x00' * 32 + b'\x00' + b'\x00\x02\x13\x01' + b'\x01\x00' + len(ext).to_bytes(2, 'big') + ext
    return b'\x01' + len(body).to_bytes(3, 'big') + body
def records(hs, split):
    parts = [hs[:split], hs[split:]] if split else [hs]
    return b''.join(b'\x16\x03\x01' + len(p).to_bytes(2, 'big') + p for p in parts)
for name, data in [('mismatch', records(hello('evil.test'), 0)),
                   ('missing', records(hello(None), 0)),
                   ('plain', b'GET / HTTP/1.1\r\nHost: api.test\r\n\r\n'),
                   ('match', records(hello('api.test'), 20))]:
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    s.sendall(f'CONNECT api.test:{port} HTTP/1.1\r\nHost: api.test:{port}\r\nProxy-Authorization: Basic {{auth}}\r\n\r\n'.encode())
    reply = b''
    while b'\r\n\r\n' not in reply:
        chunk = s.recv(1024)
        if not chunk:
            break
        reply += chunk
    s.sendall(data)
    try:
        rest = s.recv(1024)
    except OSError:
        rest = b''
    print(name, reply.split(b' ')[1].decode(), len(data), flush=True)
    s.close()
"#
        ),
    );
    let out = w
        .fence(&[
            "--allow-domain".as_ref(),
            "api.test".as_ref(),
            "--resolve".as_ref(),
            "api.test:127.0.0.1".as_ref(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    let matched_len: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("match 200 "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}\n{}", stderr(&out)));
    for refused in ["mismatch", "missing", "plain"] {
        assert!(text.contains(&format!("{refused} 200 ")), "{text}");
    }
    assert_eq!(
        server.accepted(),
        1,
        "the destination was contacted for a refused ClientHello\n{}",
        stderr(&out)
    );
    assert_eq!(server.received().len(), matched_len);
    for reason in [
        "differs from the CONNECT host",
        "names no server",
        "does not start with a TLS ClientHello",
    ] {
        assert!(stderr(&out).contains(reason), "{reason}: {}", stderr(&out));
    }
}

fn proxy_refuses_two_host_headers_and_forwards_the_checked_host(w: &World) {
    let server = HostServer::start("hello\n");
    let port = server.port;
    w.write(
        "probe.py",
        &format!(
            r#"import base64, os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ['HTTP_PROXY'])
auth = base64.b64encode(f'{{u.username}}:{{u.password}}'.encode()).decode()
for name, extra in [('two', 'Host: api.test:{port}\r\nHost: internal.test\r\n'),
                    ('one', 'Host: api.test:{port}\r\n')]:
    s = socket.create_connection((u.hostname, u.port), timeout=10)
    s.sendall(f'GET http://api.test:{port}/ HTTP/1.1\r\n{{extra}}Proxy-Authorization: Basic {{auth}}\r\nConnection: close\r\n\r\n'.encode())
    reply = b''
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    print(name, reply.split(b' ')[1].decode(), flush=True)
    s.close()
"#
        ),
    );
    let out = w
        .fence(&[
            "--allow-domain".as_ref(),
            "api.test".as_ref(),
            "--resolve".as_ref(),
            "api.test:127.0.0.1".as_ref(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "two 400\none 200\n", "{}", stderr(&out));
    assert_eq!(
        server.accepted(),
        1,
        "the request with two Host headers went on"
    );
    let received = String::from_utf8_lossy(&server.received()).into_owned();
    assert_eq!(
        received.matches("Host:").count() + received.matches("host:").count(),
        1,
        "{received}"
    );
    assert!(
        received.contains(&format!("\r\nHost: api.test:{port}\r\n")),
        "{received}"
    );
    assert!(!received.contains("internal.test"), "{received}");
}

/// A server that keeps connections open (HTTP/1.1 keep-alive) and answers every read with
/// a short 200: a second request on a connection the proxy let through once would reach
/// it unchecked. The sandbox tries on one connection each: a plain keep-alive request, one
/// that says `Connection: upgrade` without asking for a protocol, and one that asks for a
/// WebSocket the server does not speak. The second request must reach the server in none.
fn proxy_lets_one_checked_request_through_a_connection(w: &World) {
    use std::sync::atomic::Ordering;
    let (l, port) = host_listener("127.0.0.1:0").unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (seen2, stop2) = (seen.clone(), stop.clone());
    std::thread::spawn(move || {
        while !stop2.load(Ordering::Relaxed) {
            let Ok((mut c, _)) = l.accept() else {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            };
            let seen3 = seen2.clone();
            std::thread::spawn(move || {
                c.set_nonblocking(false).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
                let mut buf = vec![0u8; 65536];
                while let Ok(n @ 1..) = c.read(&mut buf) {
                    seen3.lock().unwrap().extend_from_slice(&buf[..n]);
                    let reply = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n";
                    if std::io::Write::write_all(&mut c, reply.as_bytes()).is_err() {
                        break;
                    }
                }
            });
        }
    });
    w.write(
        "probe.py",
        &format!(
            r#"import base64, os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ['HTTP_PROXY'])
auth = base64.b64encode(f'{{u.username}}:{{u.password}}'.encode()).decode()
for name, extra in [('plain', 'Connection: keep-alive\r\n'),
                    ('upgrade-word', 'Connection: upgrade\r\n'),
                    ('declined', 'Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n')]:
    s = socket.create_connection((u.hostname, u.port), timeout=5)
    s.sendall(f'GET http://api.test:{port}/first-{{name}} HTTP/1.1\r\nHost: api.test:{port}\r\nProxy-Authorization: Basic {{auth}}\r\n{{extra}}\r\n'.encode())
    try:
        first = s.recv(4096)
    except OSError:
        first = b''
    try:
        s.sendall(f'GET /second-unchecked-{{name}} HTTP/1.1\r\nHost: forbidden.example\r\n\r\n'.encode())
        s.recv(4096)
    except OSError:
        pass
    closes = b'\r\nConnection: close\r\n' in first
    print(name, first.split(b' ')[1].decode() if first else 'none', 'close' if closes else 'open', flush=True)
    s.close()
# Second requests hidden in a chunked body: as trailer fields, and after bare LFs.
for name, body in [('trailer', '0\r\nGET /second-unchecked-trailer HTTP/1.1\r\nHost: forbidden.example\r\n\r\n'),
                   ('bare-lf', '5\r\nhello\n0\n\nGET /second-unchecked-lf HTTP/1.1\nHost: forbidden.example\n\n\r\n')]:
    s = socket.create_connection((u.hostname, u.port), timeout=5)
    s.sendall(f'POST http://api.test:{port}/first-{{name}} HTTP/1.1\r\nHost: api.test:{port}\r\nProxy-Authorization: Basic {{auth}}\r\nTransfer-Encoding: chunked\r\n\r\n{{body}}'.encode())
    try:
        s.recv(4096)
    except OSError:
        pass
    s.close()
"#
        ),
    );
    let out = w
        .fence(&[
            "--allow-domain".as_ref(),
            "api.test".as_ref(),
            "--resolve".as_ref(),
            "api.test:127.0.0.1".as_ref(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "probe.py".as_ref(),
        ])
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    let received = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    assert_eq!(
        stdout(&out),
        "plain 200 close\nupgrade-word 200 close\ndeclined 200 open\n",
        "{}",
        stderr(&out)
    );
    for name in ["plain", "upgrade-word", "declined", "trailer", "bare-lf"] {
        assert!(
            received.contains(&format!("/first-{name} ")),
            "{name}: {received}"
        );
    }
    assert!(
        !received.contains("second-unchecked"),
        "a second request on one connection reached the server unchecked: {received}"
    );
    assert!(!received.contains("forbidden.example"), "{received}");
}

fn another_sessions_proxy_refuses_this_sandbox(w: &World) {
    let server = HostServer::start("hello\n");
    let port = server.port;
    // Session 1 exposes its proxy's address (not its password) and stays up.
    w.write(
        "first.py",
        "import os, sys, time, urllib.parse\nu = urllib.parse.urlsplit(os.environ['HTTP_PROXY'])\nprint(u.port, flush=True)\ntime.sleep(6)\n",
    );
    let mut first = w
        .fence(&[
            "--allow-domain".as_ref(),
            "api.test".as_ref(),
            "--resolve".as_ref(),
            "api.test:127.0.0.1".as_ref(),
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "first.py".as_ref(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    {
        use std::io::BufRead;
        std::io::BufReader::new(first.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
    }
    let first_port: u16 = line.trim().parse().unwrap_or_else(|_| panic!("{line:?}"));
    // Session 2 may connect to that port directly, and uses its own credentials there.
    w.write(
        "second.sh",
        &format!(
            "curl -sS --max-time 10 --noproxy '' -x \"${{HTTP_PROXY%:*}}:{first_port}\" -o /dev/null -w '%{{http_code}}\\n' http://api.test:{port}/\n"
        ),
    );
    let direct = format!("127.0.0.1:{first_port}");
    let out = w
        .fence(&[
            "--allow-domain".as_ref(),
            "api.test".as_ref(),
            "--resolve".as_ref(),
            "api.test:127.0.0.1".as_ref(),
            "--allow-net".as_ref(),
            direct.as_ref(),
            "--".as_ref(),
            "bash".as_ref(),
            "second.sh".as_ref(),
        ])
        .output()
        .unwrap();
    let _ = first.kill();
    let _ = first.wait();
    assert_eq!(stdout(&out), "407\n", "{}", stderr(&out));
    assert_eq!(
        server.accepted(),
        0,
        "another session's proxy served this sandbox"
    );
}

fn abstract_unix_sockets_of_the_host_are_unreachable(w: &World) {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("fence-test-abstract-{}-{:?}", std::process::id(), w.who);
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = w.python(&format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect('\\0{name}')\n    s.send(b'hello')\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n"
    ));
    assert!(
        listener.accept().is_err(),
        "a host abstract socket was reached: {}",
        stdout(&out)
    );
    assert!(stdout(&out).starts_with("refused"), "{}", stderr(&out));
}

fn network_config_of_the_user_allows_and_of_the_worktree_does_not(w: &World) {
    let (a, pa) = host_listener("127.0.0.1:0").unwrap();
    let (b, pb) = host_listener("127.0.0.1:0").unwrap();
    let dir = w.home.join(".config/fence");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!("[network]\nallow_net = [\"127.0.0.1:{pa}\"]\n"),
    )
    .unwrap();
    for d in [w.home.join(".config"), dir.clone(), dir.join("config.toml")] {
        w.own(&d);
    }
    w.write(
        ".fence.toml",
        &format!("[network]\nallow_net = [\"127.0.0.1:{pb}\"]\n"),
    );
    let out = w.python(&format!(
        r#"import socket
for port in ({pa}, {pb}):
    try:
        s = socket.create_connection(('127.0.0.1', port), timeout=3)
        s.sendall(b'hello')
        s.close()
    except OSError as e:
        print('refused', port, e.errno)
"#
    ));
    assert_eq!(accepted(&a), (1, 5), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        accepted(&b),
        (0, 0),
        "a worktree config widened the network fence"
    );
    assert!(
        stderr(&out).contains("may only tighten"),
        "{}",
        stderr(&out)
    );
}

/// A host listener that can be reached at all from this test (a sanity check of the
/// helpers: an open listener counts a connection).
#[test]
fn host_listener_helper_counts_connections() {
    let (l, port) = host_listener("127.0.0.1:0").unwrap();
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::io::Write::write_all(&mut c, b"abc").unwrap();
    drop(c);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(accepted(&l), (1, 3));
}

/// Where no network namespace can be made (its limit is 0 here, in a user namespace of
/// the test's own, whose root fence then runs as), the sandbox starts without one, says
/// so, and a host listener on loopback still receives nothing.
fn where_no_network_namespace_can_be_made_host_loopback_stays_closed(w: &World) {
    const TEST: &str = "where_no_network_namespace_can_be_made_host_loopback_stays_closed";
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        support::skip(TEST, "fence makes no namespace in this mode");
        return;
    }
    if !python_ready(TEST) {
        return;
    }
    let (v4, p4) = host_listener("127.0.0.1:0").unwrap();
    let script = format!(
        "import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(('127.0.0.1', {p4}))\n    s.send(b'hello')\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n"
    );
    let out = w
        .command_as_runner("unshare")
        .args(["-U", "-r", "--", "sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_net_namespaces && exec \"$@\"")
        .arg("sh")
        .arg(support::fence_binary())
        .args(["run", "--", "python3", "-c", &script])
        .output()
        .unwrap();
    if stderr(&out).starts_with("unshare: ") || stderr(&out).starts_with("sh: ") {
        support::skip(
            TEST,
            &format!("no user namespace of the test's own: {}", stderr(&out)),
        );
        return;
    }
    assert_eq!(
        accepted(&v4),
        (0, 0),
        "the host's listener was reached: {}",
        stdout(&out)
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("refused"),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("no network namespace could be made"),
        "{}",
        stderr(&out)
    );
}

both_ways!(
    socket_calls_on_a_descriptor_that_is_no_socket_fail_as_bare,
    loopback_servers_stay_reachable_when_the_proxy_runs,
    where_no_network_namespace_can_be_made_host_loopback_stays_closed,
    loopback_http_server_inside_is_reachable_with_curl,
    host_services_on_loopback_receive_nothing,
    an_address_of_this_machine_is_asked_as_one_and_reaches_nothing_unanswered,
    servers_inside_listen_on_loopback_only,
    socket_types_other_than_tcp_streams_are_refused,
    udp_reaches_only_the_sandboxs_own_loopback,
    a_host_service_with_reuseport_keeps_its_connections,
    tcp_fast_open_to_a_host_listener_gets_nothing_through,
    datagrams_to_an_outside_unix_socket_get_nothing_through,
    allow_unix_opens_one_outside_socket,
    a_host_socket_on_an_inode_number_the_sandbox_used_stays_the_hosts,
    a_thread_swapping_the_sockaddr_never_reaches_a_host_port,
    allow_net_opens_exactly_the_allowed_ports,
    an_allowed_connection_cannot_be_pointed_at_another_host_port,
    allowed_names_resolve_in_the_supervisor_and_never_to_loopback,
    a_thread_swapping_between_an_allowed_and_a_forbidden_port_never_reaches_the_forbidden_one,
    proxy_lets_allowed_names_through_and_refuses_others,
    proxy_refuses_a_name_that_resolves_to_loopback,
    proxy_reaches_an_address_allowed_by_ip_only_on_its_allowed_ports,
    proxy_checks_the_tls_server_name_before_connecting,
    proxy_refuses_two_host_headers_and_forwards_the_checked_host,
    proxy_lets_one_checked_request_through_a_connection,
    another_sessions_proxy_refuses_this_sandbox,
    abstract_unix_sockets_of_the_host_are_unreachable,
    network_config_of_the_user_allows_and_of_the_worktree_does_not,
);

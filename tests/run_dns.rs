//! `fence run --allow-dns` (SPEC §4): DNS reaches the system resolvers and nothing else.
//!
//! Each test starts a stub DNS server on a 127.53.x.y address, port 53, and runs fence in a
//! private mount namespace whose /etc/resolv.conf names it (fence reads its resolvers there,
//! and so does the sandbox's libc). Claims are checked from outside: what the stub and a
//! test UDP listener received. Each test runs as root, as an unprivileged user, and without
//! namespaces.

mod support;

use std::ffi::OsStr;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use support::{Who, World, python_ready, stderr, stdout};

/// The address every answer of the stub carries.
const ANSWER: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 7);

/// A fresh loopback address for one test (tests of this file run in parallel).
fn fresh_loopback() -> Ipv4Addr {
    static NEXT: AtomicU8 = AtomicU8::new(1);
    Ipv4Addr::new(127, 53, 1, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A UDP socket of the test that counts what it receives (and, as a DNS stub, answers A
/// queries with [`ANSWER`]).
struct Receiver {
    addr: SocketAddr,
    received: Arc<AtomicUsize>,
    senders: Arc<Mutex<Vec<SocketAddr>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    fn start(addr: SocketAddr, answer: bool) -> Receiver {
        let socket = UdpSocket::bind(addr).expect("binding the test's UDP socket");
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let received = Arc::new(AtomicUsize::new(0));
        let senders = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s, st) = (received.clone(), senders.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while !st.load(Ordering::Relaxed) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                r.fetch_add(1, Ordering::Relaxed);
                s.lock().unwrap().push(from);
                if answer && let Some(reply) = dns_answer(&buf[..n]) {
                    let _ = socket.send_to(&reply, from);
                }
            }
        });
        Receiver {
            addr,
            received,
            senders,
            stop,
            thread: Some(thread),
        }
    }

    /// What arrived, for a test that expects nothing: datagrams still in flight land
    /// within the wait.
    fn count(&self) -> usize {
        std::thread::sleep(Duration::from_millis(300));
        self.received.load(Ordering::Relaxed)
    }

    /// What arrived, for a test that expects at least `n`: waits for them (up to 10 s on a
    /// loaded machine), then a little longer for any extra one.
    fn count_reaching(&self, n: usize) -> usize {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.received.load(Ordering::Relaxed) < n && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.count()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The stub's answer to a query: A queries get [`ANSWER`], others an empty answer.
fn dns_answer(q: &[u8]) -> Option<Vec<u8>> {
    if q.len() < 12 || q[2] & 0x80 != 0 {
        return None;
    }
    let mut i = 12;
    while *q.get(i)? != 0 {
        i += q[i] as usize + 1;
    }
    let qtype = u16::from_be_bytes([*q.get(i + 1)?, *q.get(i + 2)?]);
    let question_end = i + 5;
    let mut out = q[..2].to_vec();
    out.extend_from_slice(&[0x81, 0x80, 0, 1, 0, (qtype == 1) as u8, 0, 0, 0, 0]);
    out.extend_from_slice(q.get(12..question_end)?);
    if qtype == 1 {
        out.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]);
        out.extend_from_slice(&ANSWER.octets());
    }
    Some(out)
}

/// A stub resolver on a fresh address, port 53, and a resolv.conf naming it (readable by
/// the test user).
fn stub_resolver(w: &World) -> (Receiver, PathBuf) {
    let ip = fresh_loopback();
    let stub = Receiver::start(SocketAddr::from((ip, 53)), true);
    let conf = w.outside.join("resolv.conf");
    std::fs::write(
        &conf,
        format!("nameserver {ip}\noptions timeout:2 attempts:3\n"),
    )
    .unwrap();
    (stub, conf)
}

/// `fence run ARGS` in a private mount namespace whose /etc/resolv.conf is `conf`, as the
/// world's user.
fn fence_with_resolv_conf(w: &World, conf: &Path, args: &[&OsStr]) -> Output {
    let inner = w.fence(args);
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount --bind "$0" /etc/resolv.conf && exec "$@""#)
        .arg(conf);
    if w.who != Who::Root {
        let (uid, gid) = support::test_user().expect("the test user");
        cmd.args([
            "setpriv",
            &format!("--reuid={uid}"),
            &format!("--regid={gid}"),
            "--clear-groups",
        ]);
    }
    cmd.arg(inner.get_program()).args(inner.get_args());
    cmd.env_clear();
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.current_dir(&w.worktree)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running fence in a mount namespace")
}

fn run_with(w: &World, conf: &Path, flags: &[&str], command: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    args.push(OsStr::new("--"));
    args.extend(command.iter().map(OsStr::new));
    fence_with_resolv_conf(w, conf, &args)
}

/// A DNS query for `name` (A), as Python bytes.
const PY_QUERY: &str = r#"def query(name):
    q = b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00'
    for label in name.split('.'):
        q += bytes([len(label)]) + label.encode()
    return q + b'\x00\x00\x01\x00\x01'
"#;

fn getent_and_getaddrinfo_resolve_through_the_relay(w: &World) {
    let (stub, conf) = stub_resolver(w);
    let out = run_with(
        w,
        &conf,
        &["--allow-dns"],
        &["getent", "hosts", "fence-dns.test"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).split_whitespace().collect::<Vec<_>>(),
        ["192.0.2.7", "fence-dns.test"],
        "{}",
        stderr(&out)
    );
    if python_ready("getent_and_getaddrinfo_resolve_through_the_relay") {
        w.write(
            "gai.py",
            "import socket\nprint(sorted({a[4][0] for a in socket.getaddrinfo('py.fence-dns.test', 443)}))\n",
        );
        let out = run_with(w, &conf, &["--allow-dns"], &[support::PYTHON, "gai.py"]);
        assert_eq!(stdout(&out), "['192.0.2.7']\n", "{}", stderr(&out));
    }
    assert!(stub.count_reaching(2) >= 2);
    // Every query came from fence's relay, never from a socket of the sandbox's.
    assert!(
        stub.senders
            .lock()
            .unwrap()
            .iter()
            .all(|s| s.ip().is_loopback())
    );
}

fn without_allow_dns_nothing_reaches_the_resolver(w: &World) {
    let (stub, conf) = stub_resolver(w);
    let out = run_with(w, &conf, &[], &["getent", "hosts", "fence-dns.test"]);
    assert!(!out.status.success(), "resolved without --allow-dns");
    assert_eq!(stdout(&out), "");
    assert_eq!(stub.count(), 0, "the resolver heard from the sandbox");
}

fn allow_dns_without_a_nameserver_refuses_to_start(w: &World) {
    let conf = w.outside.join("resolv.conf");
    std::fs::write(&conf, "search example.com\n").unwrap();
    let out = run_with(w, &conf, &["--allow-dns"], &["true"]);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("names no usable nameserver"),
        "{}",
        stderr(&out)
    );
}

fn datagrams_to_other_addresses_and_ports_never_arrive(w: &World) {
    if !python_ready("datagrams_to_other_addresses_and_ports_never_arrive") {
        return;
    }
    let (stub, conf) = stub_resolver(w);
    let resolver = stub.addr.ip().to_string();
    // A listener on another address, port 53, and one on the resolver's address, another
    // port: neither may receive anything.
    let other = Receiver::start(SocketAddr::from((fresh_loopback(), 53)), false);
    let side = Receiver::start(SocketAddr::from((stub.addr.ip(), 5353)), false);
    let (o_ip, s_port) = (other.addr.ip().to_string(), side.addr.port());
    w.write(
        "udp.py",
        &format!(
            r#"import socket
{PY_QUERY}
q = query('probe.fence-dns.test')
def attempt(name, f):
    try:
        f()
        print(name, 'ok')
    except OSError as e:
        print(name, e.errno)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt('connect-other', lambda: s.connect(('{o_ip}', 53)))
attempt('sendto-other', lambda: s.sendto(q, ('{o_ip}', 53)))
attempt('sendto-port', lambda: s.sendto(q, ('{resolver}', {s_port})))
attempt('sendto-not-dns', lambda: s.sendto(b'hello there, resolver', ('{resolver}', 53)))
# sendmsg's address is never seen by fence: on an unconnected socket it goes nowhere, on
# one connected to the resolver it goes to the resolver.
attempt('sendmsg-unconnected', lambda: s.sendmsg([q], [], 0, ('{o_ip}', 53)))
attempt('connect-resolver', lambda: s.connect(('{resolver}', 53)))
attempt('sendmsg-connected', lambda: s.sendmsg([q], [], 0, ('{o_ip}', 53)))
attempt('send', lambda: s.send(q))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
attempt('sendto6', lambda: s6.sendto(q, ('::1', {s_port})))
"#
        ),
    );
    let out = run_with(w, &conf, &["--allow-dns"], &[support::PYTHON, "udp.py"]);
    let text = stdout(&out);
    for expected in [
        "connect-other 13",
        "sendto-other 13",
        "sendto-port 13",
        "sendto-not-dns 13",
        "sendmsg-unconnected ok",
        "connect-resolver ok",
        "sendmsg-connected ok",
        "send ok",
        "sendto6 13",
    ] {
        assert!(
            text.lines().any(|l| l == expected),
            "missing {expected:?} in\n{text}\n{}",
            stderr(&out)
        );
    }
    assert_eq!(other.count(), 0, "a datagram reached another address");
    assert_eq!(side.count(), 0, "a datagram reached another port");
    // The two datagrams sent on the connected socket went to the resolver.
    assert_eq!(stub.count_reaching(2), 2, "{text}");
    assert!(
        stderr(&out).contains(&format!("{o_ip}:53")),
        "no blocked line names the destination: {}",
        stderr(&out)
    );
}

fn a_sendto_racing_its_address_never_reaches_the_listener(w: &World) {
    let test = "a_sendto_racing_its_address_never_reaches_the_listener";
    if Command::new("cc").arg("--version").output().is_err() {
        support::skip(test, "no C compiler (cc)");
        return;
    }
    let (stub, conf) = stub_resolver(w);
    let listener = Receiver::start(SocketAddr::from((fresh_loopback(), 5353)), false);
    let (good, bad) = (stub.addr, listener.addr);
    let (g_ip, b_ip) = (good.ip().to_string(), bad.ip().to_string());
    let src = format!(
        r#"#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static struct sockaddr_in addr;
static struct sockaddr_in good, bad;
static volatile int stop;
static void spin(void) {{ __asm__ volatile("" ::: "memory"); for (volatile int i = 0; i < 200; i++) {{}} __asm__ volatile("" ::: "memory"); }}
static void *swap(void *arg) {{
    (void)arg;
    while (!stop) {{ memcpy(&addr, &bad, sizeof addr); spin(); memcpy(&addr, &good, sizeof addr); spin(); }}
    return 0;
}}
int main(void) {{
    static const unsigned char q[] = "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04race\x04test\x00\x00\x01\x00\x01";
    good.sin_family = bad.sin_family = AF_INET;
    inet_pton(AF_INET, "{g_ip}", &good.sin_addr); good.sin_port = htons({g_port});
    inet_pton(AF_INET, "{b_ip}", &bad.sin_addr); bad.sin_port = htons({b_port});
    memcpy(&addr, &good, sizeof addr);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) {{ perror("socket"); return 2; }}
    pthread_t t;
    pthread_create(&t, 0, swap, 0);
    int ok = 0, refused = 0;
    for (int i = 0; i < 10000; i++) {{
        if (sendto(s, q, sizeof q - 1, 0, (struct sockaddr *)&addr, sizeof addr) > 0) ok++; else refused++;
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", ok, refused);
    return 0;
}}
"#,
        g_port = good.port(),
        b_port = bad.port(),
    );
    let bin = w.compile_c("race", &src);
    let out = run_with(
        w,
        &conf,
        &["--allow-dns", "--quiet-blocks"],
        &[bin.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(counts.len(), 2, "{}", stdout(&out));
    eprintln!(
        "{test}: {} sent to the resolver, {} refused",
        counts[0], counts[1]
    );
    assert_eq!(
        listener.count(),
        0,
        "a swapped address reached the listener"
    );
    // Both outcomes happened, or the race was not exercised.
    assert!(
        counts[0] > 0 && counts[1] > 0,
        "race not exercised: {counts:?}"
    );
    assert!(stub.count_reaching(1) > 0);
}

fn tcp_reaches_the_resolver_on_port_53_only(w: &World) {
    if !python_ready("tcp_reaches_the_resolver_on_port_53_only") {
        return;
    }
    let (stub, conf) = stub_resolver(w);
    let dns_tcp = std::net::TcpListener::bind(SocketAddr::from((stub.addr.ip(), 53))).unwrap();
    let other_tcp = std::net::TcpListener::bind(SocketAddr::from((stub.addr.ip(), 0))).unwrap();
    other_tcp.set_nonblocking(true).unwrap();
    let other_port = other_tcp.local_addr().unwrap().port();
    let ip = stub.addr.ip();
    w.write(
        "tcp.py",
        &format!(
            r#"import socket
for port in (53, {other_port}):
    s = socket.socket()
    try:
        s.connect(('{ip}', port))
        print(port, 'ok')
    except OSError as e:
        # Refused as a loopback port of the host (or of the sandbox's own loopback).
        print(port, 'refused' if e.errno in (13, 111) else e.errno)
"#
        ),
    );
    let out = run_with(w, &conf, &["--allow-dns"], &[support::PYTHON, "tcp.py"]);
    assert_eq!(
        stdout(&out),
        format!("53 ok\n{other_port} refused\n"),
        "{}",
        stderr(&out)
    );
    dns_tcp.set_nonblocking(true).unwrap();
    assert!(
        dns_tcp.accept().is_ok(),
        "the resolver's TCP port got no connection"
    );
    assert!(
        other_tcp.accept().is_err(),
        "another port of the resolver was reached"
    );
}

fn recvfrom_reports_the_resolver_and_waits_as_a_socket_would(w: &World) {
    if !python_ready("recvfrom_reports_the_resolver_and_waits_as_a_socket_would") {
        return;
    }
    let (stub, conf) = stub_resolver(w);
    let resolver = stub.addr.ip().to_string();
    w.write(
        "recv.py",
        &format!(
            r#"import socket, struct, threading, time
{PY_QUERY}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(('{resolver}', 53))
try:
    s.recvfrom(512, socket.MSG_DONTWAIT)
except OSError as e:
    print('empty dontwait', e.errno)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack('ll', 0, 200000))
t = time.monotonic()
try:
    s.recvfrom(512)
except OSError as e:
    print('empty timeout', e.errno, time.monotonic() - t >= 0.15)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack('ll', 0, 0))
# The answer arrives while the receive waits.
threading.Timer(0.3, lambda: s.send(query('late.fence-dns.test'))).start()
data, source = s.recvfrom(512)
print('answer', data[-4:] == bytes([192, 0, 2, 7]), source)
s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s6.sendto(query('six.fence-dns.test'), ('::ffff:{resolver}', 53))
data, source = s6.recvfrom(512)
print('answer6', data[-4:] == bytes([192, 0, 2, 7]), source[:2])
"#
        ),
    );
    let out = run_with(w, &conf, &["--allow-dns"], &[support::PYTHON, "recv.py"]);
    assert_eq!(
        stdout(&out),
        format!(
            "empty dontwait 11\nempty timeout 11 True\nanswer True ('{resolver}', 53)\nanswer6 True ('::ffff:{resolver}', 53)\n"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(stub.count_reaching(2), 2);
}

fn allow_dns_in_the_users_config_and_not_in_the_worktrees(w: &World) {
    let (stub, conf) = stub_resolver(w);
    w.write(".fence.toml", "[network]\nallow_dns = true\n");
    let out = run_with(w, &conf, &[], &["getent", "hosts", "fence-dns.test"]);
    assert!(!out.status.success(), "a worktree config allowed DNS");
    assert!(
        stderr(&out).contains("may only tighten"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stub.count(), 0);
    let dir = w.home.join(".config/fence");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[network]\nallow_dns = true\n").unwrap();
    for d in [w.home.join(".config"), dir.clone(), dir.join("config.toml")] {
        w.own(&d);
    }
    let out = run_with(w, &conf, &[], &["getent", "hosts", "fence-dns.test"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("192.0.2.7"), "{}", stdout(&out));
    assert!(stub.count_reaching(1) >= 1);
}

/// musl's resolver takes another road than glibc's: one unconnected socket bound to the
/// wildcard, `sendto` each nameserver, `recvfrom` comparing the source with its list, and
/// an IPv6 socket with v4-mapped addresses when a nameserver is IPv6.
fn musl_getaddrinfo_resolves_through_the_relay(w: &World) {
    let test = "musl_getaddrinfo_resolves_through_the_relay";
    if Command::new("musl-gcc").arg("--version").output().is_err() {
        support::skip(test, "no musl-gcc (Debian: musl-tools)");
        return;
    }
    let (stub, conf) = stub_resolver(w);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gai.c"),
        r#"#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
int main(int argc, char **argv) {
    struct addrinfo hints = {0}, *res;
    hints.ai_family = AF_INET;
    int rc = getaddrinfo(argv[1], "80", &hints, &res);
    if (rc) { printf("error %s\n", gai_strerror(rc)); return 1; }
    char buf[64];
    inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, buf, sizeof buf);
    printf("%s\n", buf);
    return 0;
}
"#,
    )
    .unwrap();
    let bin = w.worktree.join("gai-musl");
    let cc = Command::new("musl-gcc")
        .args(["-static", "-O2", "-o"])
        .arg(&bin)
        .arg(dir.path().join("gai.c"))
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    w.own(&bin);
    let bin = bin.to_str().unwrap();
    let out = run_with(w, &conf, &["--allow-dns"], &[bin, "musl.fence-dns.test"]);
    assert_eq!(stdout(&out), "192.0.2.7\n", "{}", stderr(&out));
    // With an IPv6 nameserver too (nothing answers there), musl uses one IPv6 socket.
    let ip = stub.addr.ip();
    std::fs::write(&conf, format!("nameserver {ip}\nnameserver ::1\n")).unwrap();
    let out = run_with(w, &conf, &["--allow-dns"], &[bin, "musl6.fence-dns.test"]);
    assert_eq!(stdout(&out), "192.0.2.7\n", "{}", stderr(&out));
    assert!(stub.count_reaching(2) >= 2);
}

both_ways!(
    musl_getaddrinfo_resolves_through_the_relay,
    allow_dns_in_the_users_config_and_not_in_the_worktrees,
    recvfrom_reports_the_resolver_and_waits_as_a_socket_would,
    tcp_reaches_the_resolver_on_port_53_only,
    getent_and_getaddrinfo_resolve_through_the_relay,
    without_allow_dns_nothing_reaches_the_resolver,
    allow_dns_without_a_nameserver_refuses_to_start,
    datagrams_to_other_addresses_and_ports_never_arrive,
    a_sendto_racing_its_address_never_reaches_the_listener,
);

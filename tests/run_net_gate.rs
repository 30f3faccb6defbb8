//! Destinations no rule covers, asked through the gate (SPEC §4, §5): a direct connect and
//! a request through fence's domain proxy, answered by the scripted approver
//! (`--approver script:FILE`) with Yes, No, nothing in time and Always. Each claim is
//! checked from outside: what the host's server received, the transcript on fence's
//! stderr, the reason on the process's stderr, and the audit log.
//!
//! Nothing leaves the machine. Through the proxy, names are mapped with `--resolve` to a
//! server on 127.0.0.1. A direct connect goes, without a network namespace, to a server on
//! the host's 127.0.0.1 (a host service on loopback, asked about); with one, the sandbox's
//! 127.0.0.0/8 is its own, so the server listens on this host's own non-loopback address,
//! which the kernel delivers locally.

mod support;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{PYTHON, Who, World, python_ready, stderr, stdout};

/// A TCP server of the host: records what each connection sent, and answers anything with
/// a small HTTP response.
struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Vec<u8>>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    fn start(ip: IpAddr) -> Server {
        let l = TcpListener::bind(SocketAddr::new(ip, 0)).unwrap();
        l.set_nonblocking(true).unwrap();
        let addr = l.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
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
                seen2.lock().unwrap().push(buf[..n].to_vec());
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
                );
            }
        });
        Server { addr, seen, stop }
    }

    /// What each accepted connection sent, in order (read after the session ended).
    fn received(&self) -> Vec<Vec<u8>> {
        // The server thread may still be reading the last connection.
        std::thread::sleep(Duration::from_millis(100));
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// This host's first global IPv4 address (`ip -4 addr`), if it has one.
fn host_address() -> Option<IpAddr> {
    let out = std::process::Command::new("ip")
        .args(["-4", "-o", "addr", "show", "scope", "global"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut words = text.split_whitespace().skip_while(|w| *w != "inet");
    words.nth(1)?.split('/').next()?.parse().ok()
}

/// Where a direct connect of the sandbox to a host server is a question, and the rule that
/// asks: the host's loopback without a network namespace; else this host's own address,
/// asked as one (`fence.net-host-address`).
fn direct_destination(w: &World, test: &str) -> Option<(IpAddr, &'static str)> {
    if w.who == Who::UnprivilegedWithoutNamespaces {
        return Some((IpAddr::from([127, 0, 0, 1]), "fence.net-host-loopback"));
    }
    match host_address() {
        Some(ip) => Some((ip, "fence.net-host-address")),
        None => {
            support::skip(
                test,
                "this host has no global IPv4 address for a server the sandbox's own loopback does not hide",
            );
            None
        }
    }
}

/// Runs `fence run --log … ARGS -- COMMAND`; the output and the log's lines.
fn run_logged(w: &World, args: &[&str], command: &[&str]) -> (Output, Vec<Value>) {
    let log = w.outside.join("audit.jsonl");
    let _ = std::fs::remove_file(&log);
    let mut all: Vec<&OsStr> = vec![OsStr::new("--log"), log.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    all.push(OsStr::new("--"));
    all.extend(command.iter().map(OsStr::new));
    let out = w.fence(&all).output().expect("running fence");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad log line {l:?}: {e}")))
        .collect();
    (out, lines)
}

/// The scripted approver's answers, written outside the worktree.
fn script(w: &World, answers: &str) -> String {
    let p = w.outside.join("answers.txt");
    std::fs::write(&p, answers).unwrap();
    w.own(&p);
    format!("script:{}", p.display())
}

/// Connects to each `HOST:PORT` argument in turn and sends `hello N`.
const PROBE: &str = r#"import socket, sys
for i, t in enumerate(sys.argv[1:]):
    host, port = t.rsplit(':', 1)
    s = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET)
    s.settimeout(60)
    try:
        s.connect((host, int(port)))
        s.sendall(b'hello %d' % i)
        s.close()
        print('connected', t)
    except OSError as e:
        print('refused', t, e.errno)
"#;

/// The log lines of questions (and Always matches) about `addr`.
fn asked<'a>(log: &'a [Value], addr: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|l| l["event"] == "connect" && l["action"] == "ask")
        .filter(|l| l["addr"].as_str() == Some(addr))
        .collect()
}

fn direct_connect(w: &World, test: &str, answers: &str, extra: &[&str]) -> Option<DirectRun> {
    if !python_ready(test) {
        return None;
    }
    let (ip, rule) = direct_destination(w, test)?;
    let server = Server::start(ip);
    let other = Server::start(ip);
    w.write("probe.py", PROBE);
    let approver = script(w, answers);
    let mut args = vec!["--approver", approver.as_str()];
    args.extend_from_slice(extra);
    let a = server.addr.to_string();
    let b = other.addr.to_string();
    let started = Instant::now();
    let (out, log) = run_logged(w, &args, &[PYTHON, "probe.py", &a, &a, &b]);
    Some(DirectRun {
        elapsed: started.elapsed(),
        rule,
        a,
        b,
        got_a: server.received(),
        got_b: other.received(),
        out,
        log,
    })
}

/// What a question under `rule` says it is about.
fn what(rule: &str) -> &'static str {
    match rule {
        "fence.net-host-loopback" => "connection to a host service on loopback",
        "fence.net-host-address" => {
            "connection to an address of this machine (its services that listen on every address answer there)"
        }
        _ => "connection to a destination no rule allows",
    }
}

struct DirectRun {
    elapsed: Duration,
    rule: &'static str,
    /// The destination connected to twice, and the one connected to last.
    a: String,
    b: String,
    got_a: Vec<Vec<u8>>,
    got_b: Vec<Vec<u8>>,
    out: Output,
    log: Vec<Value>,
}

fn a_direct_connect_approved_with_yes_reaches_its_destination(w: &World) {
    let test = "a_direct_connect_approved_with_yes_reaches_its_destination";
    let Some(r) = direct_connect(w, test, "yes\nyes\nno\n", &[]) else {
        return;
    };
    let err = stderr(&r.out);
    assert_eq!(
        stdout(&r.out),
        format!(
            "connected {a}\nconnected {a}\nrefused {b} {errno}\n",
            a = r.a,
            b = r.b,
            errno = if r.rule == "fence.net-host-loopback" {
                libc::ECONNREFUSED
            } else {
                libc::EACCES
            }
        ),
        "{err}"
    );
    assert_eq!(r.got_a, vec![b"hello 0".to_vec(), b"hello 1".to_vec()]);
    assert!(
        r.got_b.is_empty(),
        "a refused destination received {:?}",
        r.got_b
    );
    assert!(
        err.contains(&format!("Approved: {}: {}", what(r.rule), r.a)),
        "{err}"
    );
    let questions = asked(&r.log, &r.a);
    assert_eq!(questions.len(), 2, "{:?}", r.log);
    for q in questions {
        assert_eq!(q["answer"], "yes");
        assert_eq!(q["rule"], r.rule);
        assert_eq!(q["route"], "direct");
        assert_eq!(q["process"], "python3");
        assert_eq!(q["level"], "yellow");
        assert!(q["question"].is_u64(), "{q}");
    }
}

fn a_direct_connect_denied_with_no_receives_nothing_and_says_why(w: &World) {
    let test = "a_direct_connect_denied_with_no_receives_nothing_and_says_why";
    let Some(r) = direct_connect(w, test, "no use the staging host\n", &[]) else {
        return;
    };
    let err = stderr(&r.out);
    assert!(
        !stdout(&r.out).contains("connected"),
        "{}\n{err}",
        stdout(&r.out)
    );
    assert!(
        r.got_a.is_empty() && r.got_b.is_empty(),
        "a refused destination received bytes"
    );
    // The reason on the process's stderr, and the transcript line on fence's.
    assert!(
        err.contains(&format!(
            "fence: blocked {}: {} (rule {}): denied: use the staging host",
            what(r.rule),
            r.a,
            r.rule
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "Denied: {}: {} (reason: use the staging host)",
            what(r.rule),
            r.a
        )),
        "{err}"
    );
    let questions = asked(&r.log, &r.a);
    assert_eq!(questions[0]["answer"], "no", "{:?}", r.log);
    assert_eq!(questions[0]["reason"], "use the staging host");
}

fn a_direct_connect_nobody_answers_in_time_is_denied(w: &World) {
    let test = "a_direct_connect_nobody_answers_in_time_is_denied";
    let Some(r) = direct_connect(w, test, "after 60000 yes\n", &["--ask-timeout", "10"]) else {
        return;
    };
    let err = stderr(&r.out);
    assert!(
        stdout(&r.out).starts_with(&format!("refused {} ", r.a)),
        "{}\n{err}",
        stdout(&r.out)
    );
    assert!(
        r.got_a.is_empty(),
        "a destination nobody approved received bytes"
    );
    assert!(
        err.contains(&format!("Denied (timed out): {}: {}", what(r.rule), r.a)),
        "{err}"
    );
    assert!(err.contains("no answer in time"), "{err}");
    assert!(r.elapsed >= Duration::from_secs(10), "{:?}", r.elapsed);
    assert_eq!(asked(&r.log, &r.a)[0]["answer"], "timeout");
}

fn always_covers_the_exact_host_and_port_of_a_direct_connect(w: &World) {
    let test = "always_covers_the_exact_host_and_port_of_a_direct_connect";
    // One Always, then No for anything else asked.
    let Some(r) = direct_connect(w, test, "always\nno\n", &[]) else {
        return;
    };
    let err = stderr(&r.out);
    assert_eq!(r.got_a.len(), 2, "{}\n{err}", stdout(&r.out));
    assert!(
        r.got_b.is_empty(),
        "another port was reached: {:?}",
        r.got_b
    );
    let a = asked(&r.log, &r.a);
    assert_eq!(a.len(), 2, "{:?}", r.log);
    assert!(a[0]["question"].is_u64(), "the first connect was asked");
    assert_eq!(a[0]["answer"], "always");
    assert!(
        a[1].get("question").is_none(),
        "the second connect was asked again: {}",
        a[1]
    );
    assert_eq!(a[1]["answer"], "always");
    let b = asked(&r.log, &r.b);
    assert_eq!(b.len(), 1, "{:?}", r.log);
    assert!(b[0]["question"].is_u64(), "another port must be asked");
    assert_eq!(b[0]["answer"], "no");
}

/// `fence run` with a domain proxy (one unrelated allowed domain), `other.test` mapped to
/// a host server on 127.0.0.1, and `fetch.sh` (written from `script_text`) as the command.
fn proxied(w: &World, answers: &str, extra: &[&str], script_text: &str) -> (Output, Vec<Value>) {
    w.write("fetch.sh", script_text);
    let approver = script(w, answers);
    let mut args = vec![
        "--approver",
        approver.as_str(),
        "--allow-domain",
        "allowed.test",
        "--resolve",
        "other.test:127.0.0.1",
        "--resolve",
        "allowed.test:127.0.0.1",
    ];
    args.extend_from_slice(extra);
    run_logged(w, &args, &["bash", "fetch.sh"])
}

fn curl_ready(test: &str) -> bool {
    if std::path::Path::new("/usr/bin/curl").exists() {
        true
    } else {
        support::skip(test, "/usr/bin/curl is missing");
        false
    }
}

/// A curl line that prints the body and then the status code.
fn curl(url: &str) -> String {
    format!("curl -sS --max-time 60 -w '%{{http_code}}\\n' {url}\n")
}

fn a_proxied_request_approved_with_yes_is_carried_and_logged_with_its_bytes(w: &World) {
    let test = "a_proxied_request_approved_with_yes_is_carried_and_logged_with_its_bytes";
    if !curl_ready(test) {
        return;
    }
    let server = Server::start(IpAddr::from([127, 0, 0, 1]));
    let port = server.addr.port();
    let (out, log) = proxied(
        w,
        "yes\n",
        &[],
        &curl(&format!("http://other.test:{port}/page")),
    );
    let err = stderr(&out);
    assert_eq!(stdout(&out), "hello\n200\n", "{err}");
    let got = server.received();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with(b"GET /page HTTP/1.1\r\n"), "{got:?}");
    let authority = format!("other.test:{port}");
    let q = asked(&log, &authority);
    assert_eq!(q.len(), 1, "{log:?}");
    assert_eq!(q[0]["answer"], "yes");
    assert_eq!(q[0]["route"], "proxy");
    assert_eq!(q[0]["rule"], "fence.net-domain");
    assert_eq!(q[0]["address"], "127.0.0.1");
    assert_eq!(q[0]["process"], "curl", "the client process: {}", q[0]);
    // The connection's own line, written when it closed, with the bytes both ways.
    let closed = log
        .iter()
        .find(|l| l["action"] == "allow" && l["addr"].as_str() == Some(&authority))
        .unwrap_or_else(|| panic!("no line for the proxied connection: {log:?}"));
    assert_eq!(closed["route"], "proxy");
    assert_eq!(closed["method"], "GET");
    assert_eq!(closed["process"], "curl");
    assert_eq!(closed["bytes_up"].as_u64(), Some(got[0].len() as u64));
    assert!(closed["bytes_down"].as_u64().unwrap() >= 6, "{closed}");
}

fn a_proxied_request_denied_with_no_gets_a_403_with_the_reason(w: &World) {
    let test = "a_proxied_request_denied_with_no_gets_a_403_with_the_reason";
    if !curl_ready(test) {
        return;
    }
    let server = Server::start(IpAddr::from([127, 0, 0, 1]));
    let port = server.addr.port();
    let (out, log) = proxied(
        w,
        "no not this one\n",
        &[],
        &curl(&format!("http://other.test:{port}/")),
    );
    let err = stderr(&out);
    assert_eq!(
        stdout(&out),
        "Forbidden by fence: no rule allows this host: denied: not this one\n403\n",
        "{err}"
    );
    assert!(server.received().is_empty(), "the server was reached");
    assert!(err.contains("(reason: not this one)"), "{err}");
    assert!(
        err.contains(&format!(
            "fence: blocked proxied connection to a host no --allow-domain rule covers: other.test:{port} (rule fence.net-domain): denied: not this one"
        )),
        "{err}"
    );
    let q = asked(&log, &format!("other.test:{port}"));
    assert_eq!(q[0]["answer"], "no", "{log:?}");
}

fn a_proxied_request_nobody_answers_in_time_is_refused(w: &World) {
    let test = "a_proxied_request_nobody_answers_in_time_is_refused";
    if !curl_ready(test) {
        return;
    }
    let server = Server::start(IpAddr::from([127, 0, 0, 1]));
    let port = server.addr.port();
    let (out, log) = proxied(
        w,
        "after 60000 yes\n",
        &["--ask-timeout", "10"],
        &curl(&format!("http://other.test:{port}/")),
    );
    let err = stderr(&out);
    assert!(stdout(&out).ends_with("403\n"), "{}\n{err}", stdout(&out));
    assert!(
        stdout(&out).contains("no answer in time"),
        "{}",
        stdout(&out)
    );
    assert!(server.received().is_empty(), "the server was reached");
    assert!(err.contains("Denied (timed out): "), "{err}");
    assert_eq!(
        asked(&log, &format!("other.test:{port}"))[0]["answer"],
        "timeout"
    );
}

fn always_covers_the_exact_host_and_port_through_the_proxy(w: &World) {
    let test = "always_covers_the_exact_host_and_port_through_the_proxy";
    if !curl_ready(test) {
        return;
    }
    let a = Server::start(IpAddr::from([127, 0, 0, 1]));
    let b = Server::start(IpAddr::from([127, 0, 0, 1]));
    let (pa, pb) = (a.addr.port(), b.addr.port());
    let text = [
        curl(&format!("http://other.test:{pa}/1")),
        curl(&format!("http://other.test:{pa}/2")),
        curl(&format!("http://other.test:{pb}/3")),
    ]
    .concat();
    let (out, log) = proxied(w, "always\nno\n", &[], &text);
    let err = stderr(&out);
    assert!(
        stdout(&out).starts_with("hello\n200\nhello\n200\n") && stdout(&out).ends_with("403\n"),
        "{}\n{err}",
        stdout(&out)
    );
    assert_eq!(a.received().len(), 2);
    assert!(b.received().is_empty(), "another port was reached");
    let qa = asked(&log, &format!("other.test:{pa}"));
    assert_eq!(qa.len(), 2, "{log:?}");
    assert!(qa[0]["question"].is_u64());
    assert!(qa[1].get("question").is_none(), "asked again: {}", qa[1]);
    let qb = asked(&log, &format!("other.test:{pb}"));
    assert_eq!(qb.len(), 1, "{log:?}");
    assert!(qb[0]["question"].is_u64(), "another port must be asked");
    assert_eq!(qb[0]["answer"], "no");
}

fn always_through_the_proxy_never_approves_a_direct_connect(w: &World) {
    let test = "always_through_the_proxy_never_approves_a_direct_connect";
    if !curl_ready(test) || !python_ready(test) {
        return;
    }
    let Some((ip, rule)) = direct_destination(w, test) else {
        return;
    };
    let server = Server::start(ip);
    let a = server.addr.to_string();
    w.write("probe.py", PROBE);
    // The same host:port, first through the proxy (Always), then on the sandbox's own
    // socket (No): the second must be asked, and nothing it sends may arrive.
    let text = format!(
        "curl -sS --noproxy '' --max-time 60 -o /dev/null -w '%{{http_code}}\\n' http://{a}/\n{PYTHON} probe.py {a}\n"
    );
    let (out, log) = proxied(w, "always\nno\n", &[], &text);
    let err = stderr(&out);
    assert!(
        stdout(&out).ends_with(&format!(
            "refused {a} {}\n",
            if rule == "fence.net-host-loopback" {
                libc::ECONNREFUSED
            } else {
                libc::EACCES
            }
        )),
        "{}\n{err}",
        stdout(&out)
    );
    assert!(
        !server.received().iter().any(|r| r.starts_with(b"hello")),
        "the direct connect reached the server: {:?}",
        server.received()
    );
    let q = asked(&log, &a);
    assert_eq!(q.len(), 2, "{log:?}");
    assert_eq!(q[0]["answer"], "always");
    assert!(
        q[1]["question"].is_u64(),
        "the direct connect was not asked: {}",
        q[1]
    );
    assert_eq!(q[1]["answer"], "no");
}

fn a_pending_question_does_not_hold_up_other_proxied_requests(w: &World) {
    let test = "a_pending_question_does_not_hold_up_other_proxied_requests";
    if !curl_ready(test) {
        return;
    }
    let server = Server::start(IpAddr::from([127, 0, 0, 1]));
    let port = server.addr.port();
    // The asked request waits three seconds for its Yes; meanwhile a request to the
    // allowed name goes through.
    let text = format!(
        "(curl -sS --max-time 60 -o /dev/null http://other.test:{port}/; echo asked) &\nsleep 0.5\ncurl -sS --max-time 60 -o /dev/null http://allowed.test:{port}/; echo allowed\nwait\n"
    );
    let (out, _) = proxied(w, "after 3000 yes\n", &[], &text);
    assert_eq!(stdout(&out), "allowed\nasked\n", "{}", stderr(&out));
    assert_eq!(server.received().len(), 2);
}

fn metadata_addresses_are_refused_without_a_question(w: &World) {
    let test = "metadata_addresses_are_refused_without_a_question";
    if !python_ready(test) {
        return;
    }
    w.write("probe.py", PROBE);
    // A Yes is ready, and must not be used: nothing is asked.
    let approver = script(w, "yes\n");
    let (out, log) = run_logged(
        w,
        &["--approver", &approver],
        &[PYTHON, "probe.py", "169.254.169.254:80"],
    );
    let err = stderr(&out);
    assert_eq!(
        stdout(&out),
        format!("refused 169.254.169.254:80 {}\n", libc::EACCES),
        "{err}"
    );
    assert!(
        err.contains("Blocked: connection to a link-local or cloud metadata address: 169.254.169.254:80 (rule fence.net-metadata)"),
        "{err}"
    );
    assert!(asked(&log, "169.254.169.254:80").is_empty(), "{log:?}");
    let line = log
        .iter()
        .find(|l| l["addr"] == "169.254.169.254:80")
        .unwrap_or_else(|| panic!("{log:?}"));
    assert_eq!(line["action"], "deny");
    assert_eq!(line["route"], "direct");
}

/// `--mode auto` runs askable exec rules without a question, never a connection: the
/// question is still put (here answered No) and nothing reaches the server.
fn mode_auto_still_asks_about_a_destination_no_rule_covers(w: &World) {
    let test = "mode_auto_still_asks_about_a_destination_no_rule_covers";
    let Some(r) = direct_connect(w, test, "no\n", &["--mode", "auto"]) else {
        return;
    };
    assert!(r.got_a.is_empty() && r.got_b.is_empty(), "auto-approved");
    assert!(!stdout(&r.out).contains("connected"), "{}", stdout(&r.out));
    let q = asked(&r.log, &r.a);
    assert!(q[0]["question"].is_u64(), "{:?}", r.log);
    assert_eq!(q[0]["answer"], "no");
}

both_ways!(
    metadata_addresses_are_refused_without_a_question,
    mode_auto_still_asks_about_a_destination_no_rule_covers,
    a_direct_connect_approved_with_yes_reaches_its_destination,
    a_direct_connect_denied_with_no_receives_nothing_and_says_why,
    a_direct_connect_nobody_answers_in_time_is_denied,
    always_covers_the_exact_host_and_port_of_a_direct_connect,
    a_proxied_request_approved_with_yes_is_carried_and_logged_with_its_bytes,
    a_proxied_request_denied_with_no_gets_a_403_with_the_reason,
    a_proxied_request_nobody_answers_in_time_is_refused,
    always_covers_the_exact_host_and_port_through_the_proxy,
    always_through_the_proxy_never_approves_a_direct_connect,
    a_pending_question_does_not_hold_up_other_proxied_requests,
);

//! The gate under `fence run`: questions about exec rules, writes outside the worktree and
//! protected paths; what the approver answers and what happens then, checked from outside
//! the sandbox (the file outside created or not, the remote still empty, the audit log).
//!
//! Answers come from `--approver deny` (nobody) or the scripted approver
//! (`--approver script:FILE`: answers written before the session starts, which nothing
//! inside can change).

mod support;

use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{PYTHON, World, git, python_ready, stderr, stdout};

/// Runs `fence run ARGS -- COMMAND` with `--log` and returns the output and the log lines.
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

/// The answers of the scripted approver, written outside the worktree.
fn script(w: &World, answers: &str) -> String {
    let p = w.outside.join("answers.txt");
    std::fs::write(&p, answers).unwrap();
    w.own(&p);
    format!("script:{}", p.display())
}

fn questions<'a>(log: &'a [Value], path_or_word: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|l| l["action"] == "ask")
        .filter(|l| {
            l["path"].as_str() == Some(path_or_word)
                || l["argv"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(path_or_word)))
        })
        .collect()
}

fn chown_tree(w: &World, dir: &Path) {
    w.own(dir);
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            chown_tree(w, &e.path());
        } else {
            w.own(&e.path());
        }
    }
}

/// A repository on main with `tracked.txt` committed as "committed" and changed to
/// "modified", and a bare remote outside.
fn repo_with_uncommitted_work(w: &World) -> (PathBuf, PathBuf) {
    let remote = w.outside.join("remote.git");
    git(&w.outside, &["init", "-q", "--bare", "remote.git"]);
    git(&w.worktree, &["init", "-q", "-b", "main"]);
    std::fs::write(w.worktree.join("tracked.txt"), "committed").unwrap();
    git(&w.worktree, &["add", "tracked.txt"]);
    git(&w.worktree, &["commit", "-q", "-m", "c"]);
    git(
        &w.worktree,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    std::fs::write(w.worktree.join("tracked.txt"), "modified").unwrap();
    chown_tree(w, &w.worktree);
    chown_tree(w, &remote);
    (w.worktree.join("tracked.txt"), remote)
}

fn remote_is_empty(remote: &Path) -> bool {
    std::fs::read_dir(remote.join("refs/heads"))
        .unwrap()
        .count()
        == 0
}

fn exec_ask_rules_are_refused_when_nobody_answers(w: &World) {
    let (tracked, remote) = repo_with_uncommitted_work(w);
    w.write(
        "s.sh",
        "git reset --hard; echo reset=$?\ngit push origin main; echo push=$?\n",
    );
    let (out, log) = run_logged(w, &["--approver", "deny"], &["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    // The effects, from outside: the work is still there, the remote got nothing.
    assert_eq!(std::fs::read_to_string(&tracked).unwrap(), "modified");
    assert!(remote_is_empty(&remote), "the push reached the remote");
    assert!(stdout(&out).contains("reset=126"), "{}", stdout(&out));
    // The reason on the process's stderr, and the transcript lines on fence's.
    assert!(
        err.contains("fence: blocked command (git reset --hard discards uncommitted work): git reset --hard (rule git.reset-hard): no approver (--approver deny)"),
        "{err}"
    );
    assert!(err.contains("fence: Denied: git reset --hard"), "{err}");
    assert!(
        err.contains("fence: Blocked: git push origin main (rule git.push-main)"),
        "{err}"
    );
    // The log: the question (answer none) and the absolute refusal (nobody asked).
    // The shell tries each PATH entry: one question, the repeats logged with its answer.
    let reset = questions(&log, "reset");
    let asked = reset.iter().filter(|l| l.get("question").is_some()).count();
    assert_eq!(asked, 1, "one question for one reset: {reset:?}");
    assert_eq!(reset[0]["answer"], "none");
    assert_eq!(reset[0]["level"], "red");
    assert_eq!(reset[0]["rule"], "git.reset-hard");
    let push: Vec<&Value> = log
        .iter()
        .filter(|l| l["rule"] == "git.push-main")
        .collect();
    assert!(!push.is_empty(), "{log:?}");
    assert!(
        push.iter()
            .all(|l| l["action"] == "deny" && l["answer"] == "none")
    );
    let start = &log[0];
    assert_eq!(start["event"], "session-start");
    assert_eq!(start["landlock_abi"], shim::landlock_abi());
    assert_eq!(start["approver"], "deny");
    assert_eq!(log.last().unwrap()["event"], "session-end");
    // Every exec was logged, allowed ones included, with the Appendix A fields.
    let sh = log
        .iter()
        .find(|l| l["event"] == "exec" && l["argv"][0] == "/bin/sh")
        .expect("the first exec is logged");
    assert_eq!(sh["action"], "allow");
    for field in [
        "ts",
        "session",
        "pid",
        "sandbox_pid",
        "level",
        "rule",
        "answer",
        "latency_us",
    ] {
        assert!(sh.get(field).is_some(), "{field} missing in {sh}");
    }
    let ts = sh["ts"].as_str().unwrap();
    assert!(ts.ends_with('Z') && ts.len() == 27, "{ts}");
}

fn mode_auto_runs_askable_exec_rules_but_never_writes_outside(w: &World) {
    let (tracked, remote) = repo_with_uncommitted_work(w);
    let target = w.outside.join("auto.txt");
    w.write(
        "s.sh",
        &format!(
            "git reset --hard; echo reset=$?\ngit push origin main; echo push=$?\necho x > {}; echo write=$?\n",
            target.display()
        ),
    );
    let (out, log) = run_logged(
        w,
        &["--approver", "deny", "--mode", "auto"],
        &["/bin/sh", "s.sh"],
    );
    assert_eq!(
        std::fs::read_to_string(&tracked).unwrap(),
        "committed",
        "auto did not let git reset --hard run: {}",
        stderr(&out)
    );
    assert!(
        remote_is_empty(&remote),
        "auto let an absolute refusal through"
    );
    assert!(
        !target.exists(),
        "auto approved a write outside the worktree"
    );
    let q = questions(&log, target.to_str().unwrap());
    assert_eq!(q.len(), 1, "{log:?}");
    assert_eq!(q[0]["answer"], "none");
    assert_eq!(q[0]["event"], "write");
}

fn an_approved_write_outside_is_carried_out_by_fence(w: &World) {
    let target = w.outside.join("approved.txt");
    let dir = w.outside.join("approved-dir");
    w.write(
        "s.sh",
        &format!(
            "umask 027\necho hello > {t}; echo write=$?\nmkdir {d}; echo mkdir=$?\n",
            t = target.display(),
            d = dir.display()
        ),
    );
    let approver = script(w, "yes\nyes\n");
    let (out, log) = run_logged(w, &["--approver", &approver], &["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap_or_default(),
        "hello\n",
        "{err}"
    );
    assert!(dir.is_dir(), "{err}");
    // Done with the target's credentials and umask, not fence's powers.
    let meta = std::fs::metadata(&target).unwrap();
    let runner_uid = std::fs::metadata(&w.worktree).unwrap().uid();
    assert_eq!(meta.uid(), runner_uid);
    assert_eq!(meta.mode() & 0o777, 0o640);
    assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o750);
    assert!(
        err.contains(&format!(
            "fence: Approved: write outside the worktree: {}",
            target.display()
        )),
        "{err}"
    );
    let q = questions(&log, target.to_str().unwrap());
    assert_eq!(q.len(), 1);
    assert_eq!(q[0]["answer"], "yes");
}

/// A secret is never written, moved or linked for the sandbox, even with a person's Yes
/// (the descriptor it would get reads the secret, through `/proc/self/fd` too): the write
/// is refused with a reason and no question.
fn a_write_to_a_secret_is_refused_without_a_question(w: &World) {
    let netrc = w.home.join(".netrc");
    std::fs::write(&netrc, "machine x password NETRC-SECRET\n").unwrap();
    std::fs::set_permissions(&netrc, std::fs::Permissions::from_mode(0o600)).unwrap();
    w.own(&netrc);
    w.write(
        "probe.py",
        &format!(
            r##"import os
for flags in [os.O_RDWR, os.O_WRONLY | os.O_APPEND]:
    try:
        fd = os.open({n:?}, flags)
        for reader in [lambda: os.read(fd, 100),
                       lambda: open("/proc/self/fd/%d" % fd, "rb").read()]:
            try:
                print("read", reader())
            except OSError as e:
                print("read refused", e.errno)
        os.write(fd, b"# appended\n")
        print("written")
    except OSError as e:
        print("open refused", e.errno)
try:
    os.rename({n:?}, "stolen")
    print("moved")
except OSError as e:
    print("rename refused", e.errno)
"##,
            n = netrc.display()
        ),
    );
    let approver = script(w, "yes\nyes\nyes\nyes\n");
    let (out, log) = run_logged(w, &["--approver", &approver], &[PYTHON, "probe.py"]);
    let text = stdout(&out);
    assert!(text.contains("open refused"), "{text} {}", stderr(&out));
    assert!(
        !text.contains("NETRC-SECRET"),
        "the secret was read: {text}"
    );
    assert!(
        !text.contains("written") && !text.contains("moved"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&netrc).unwrap(),
        "machine x password NETRC-SECRET\n"
    );
    assert!(!w.worktree.join("stolen").exists());
    assert!(
        questions(&log, netrc.to_str().unwrap()).is_empty(),
        "a question was asked: {log:?}"
    );
    assert!(
        stderr(&out).contains("fence.secret-path"),
        "{}",
        stderr(&out)
    );
}

fn a_no_with_a_reason_reaches_the_process(w: &World) {
    let target = w.outside.join("denied.txt");
    w.write("s.sh", &format!("echo x > {}\n", target.display()));
    let approver = script(w, "no write it under $TMPDIR \x1b[31minstead\n");
    let (out, log) = run_logged(w, &["--approver", &approver], &["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    assert!(!target.exists());
    assert!(
        err.contains(&format!(
            "fence: blocked write outside the worktree: {} (rule fence.write-outside): denied: write it under $TMPDIR \\x1b[31minstead",
            target.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("fence: Denied: write outside the worktree:")
            && err.contains("(reason: write it under $TMPDIR \\x1b[31minstead)"),
        "{err}"
    );
    let q = questions(&log, target.to_str().unwrap());
    assert_eq!(q[0]["answer"], "no");
    assert_eq!(q[0]["reason"], "write it under $TMPDIR \x1b[31minstead");
}

fn a_protected_path_needs_a_yes(w: &World) {
    git(&w.worktree, &["init", "-q", "-b", "feature"]);
    let hook = w.worktree.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "original").unwrap();
    chown_tree(w, &w.worktree);
    w.write(
        "s.sh",
        "echo denied > .git/hooks/pre-commit; echo first=$?\necho approved > .envrc; echo second=$?\n",
    );
    let approver = script(w, "no\nyes\n");
    let (out, log) = run_logged(w, &["--approver", &approver], &["/bin/sh", "s.sh"]);
    let err = stderr(&out);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), "original", "{err}");
    assert_eq!(
        std::fs::read_to_string(w.worktree.join(".envrc")).unwrap_or_default(),
        "approved\n",
        "{err}"
    );
    let q: Vec<&Value> = log
        .iter()
        .filter(|l| l["rule"] == "fence.protected-path")
        .collect();
    assert_eq!(q.len(), 2, "{log:?}");
}

fn always_covers_the_exact_argv_only(w: &World) {
    w.write(
        "s.sh",
        "/bin/true a; echo r1=$?\n/bin/true a; echo r2=$?\n/bin/true a b; echo r3=$?\n",
    );
    // ask-all: every program no rule matches is asked (the shell first, then each true).
    let approver = script(w, "yes\nalways\n");
    let (out, log) = run_logged(
        w,
        &["--approver", &approver, "--mode", "ask-all"],
        &["/bin/sh", "s.sh"],
    );
    let so = stdout(&out);
    assert!(
        so.contains("r1=0") && so.contains("r2=0"),
        "{so} {}",
        stderr(&out)
    );
    assert!(so.contains("r3=126"), "Always covered another argv: {so}");
    let trues: Vec<&Value> = log
        .iter()
        .filter(|l| l["event"] == "exec" && l["argv"][0] == "/bin/true")
        .collect();
    let answers: Vec<&str> = trues
        .iter()
        .map(|l| l["answer"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["always", "always", "none"], "{trues:?}");
    // The second run was covered without a question.
    assert!(trues[1].get("question").is_none());
}

fn a_stream_of_sigwinch_gets_one_question_and_one_answer(w: &World) {
    if !python_ready("a_stream_of_sigwinch_gets_one_question_and_one_answer") {
        return;
    }
    let target = w.outside.join("winch.txt");
    let token = format!("winch-{}", std::process::id());
    w.write(
        "winch.py",
        "import signal, sys\nn = [0]\ndef on_winch(s, f):\n    n[0] += 1\nsignal.signal(signal.SIGWINCH, on_winch)\nopen('ready', 'w').close()\nwith open(sys.argv[1], 'w') as f:\n    f.write('approved')\nprint('handled', n[0])\n",
    );
    let approver = script(w, "after 1500 yes\n");
    let log = w.outside.join("audit.jsonl");
    let _ = std::fs::remove_file(&log);
    let child = w
        .fence(&[
            OsStr::new("--log"),
            log.as_os_str(),
            OsStr::new("--approver"),
            OsStr::new(&approver),
            OsStr::new("--"),
            OsStr::new(PYTHON),
            OsStr::new("winch.py"),
            target.as_os_str(),
            OsStr::new(&token),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ready = w.worktree.join("ready");
    let start = Instant::now();
    while !ready.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(ready.exists(), "the program never started");
    let pid = python_pid(&token).expect("the sandboxed python process");
    let mut sent = 0;
    let until = Instant::now() + Duration::from_millis(1200);
    while Instant::now() < until {
        // SAFETY: signalling a process of this test's sandbox.
        if unsafe { libc::kill(pid, libc::SIGWINCH) } == 0 {
            sent += 1;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(sent > 50, "only {sent} signals sent");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap_or_default(),
        "approved",
        "{err}"
    );
    assert_eq!(err.matches("fence: Approved:").count(), 1, "{err}");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let q = questions(&lines, target.to_str().unwrap());
    assert_eq!(q.len(), 1, "one question, one answer: {q:?}");
    assert_eq!(q[0]["answer"], "yes");
}

/// The branches of bare repository `remote`, read from outside.
fn remote_branches(remote: &Path) -> String {
    git(
        remote,
        &["for-each-ref", "--format=%(refname)", "refs/heads/"],
    )
}

/// A person approves the push the card shows, and the sandbox re-points what it names while
/// the question waits (the branch made a symbolic ref to main; HEAD moved to main): judged
/// again after the answer, the push is refused, and the remote's main never moves.
fn a_push_re_pointed_to_main_while_asked_is_refused_after_the_yes(w: &World) {
    let (_, remote) = repo_with_uncommitted_work(w);
    git(&w.worktree, &["branch", "sneaky"]);
    git(&w.worktree, &["checkout", "-q", "-b", "feature"]);
    chown_tree(w, &w.worktree);
    let remote_arg = remote.display().to_string();
    let push = |script_text: &str| {
        w.write("s.sh", script_text);
        let approver = script(w, "after 1500 yes\n");
        run_logged(
            w,
            &["--approver", &approver, "--allow-write", &remote_arg],
            &["/bin/sh", "s.sh"],
        )
    };
    // Approved and unchanged: pushed.
    let (out, _) = push("git push -q origin feature; echo push=$?\n");
    assert!(stdout(&out).contains("push=0"), "{}", stderr(&out));
    assert_eq!(remote_branches(&remote).trim(), "refs/heads/feature");
    // Refused after the Yes, and the remote's branches as they were.
    let refused = |out: &Output| {
        let err = stderr(out);
        assert!(!stdout(out).contains("push=0"), "{err}");
        assert!(err.contains("changed while the question waited"), "{err}");
        assert_eq!(
            remote_branches(&remote).trim(),
            "refs/heads/feature",
            "{err}"
        );
    };
    // The branch named becomes a symbolic ref to main while the question waits.
    let (out, log) = push(
        "(sleep 0.5; git symbolic-ref refs/heads/sneaky refs/heads/main) &\ngit push -q origin sneaky; echo push=$?\nwait\n",
    );
    refused(&out);
    assert!(
        log.iter().any(|l| l["action"] == "deny"
            && l["reason"]
                .as_str()
                .is_some_and(|r| r.contains("changed while"))),
        "{log:?}"
    );
    // HEAD is moved to main while a push of HEAD waits.
    git(
        &w.worktree,
        &["symbolic-ref", "--delete", "refs/heads/sneaky"],
    );
    let (out, _) =
        push("(sleep 0.5; git checkout -q main) &\ngit push -q origin HEAD; echo push=$?\nwait\n");
    refused(&out);
}

fn paths_that_are_not_utf8_are_logged_escaped_and_flagged(w: &World) {
    if !python_ready("paths_that_are_not_utf8_are_logged_escaped_and_flagged") {
        return;
    }
    let outside = w.outside.display().to_string();
    w.write(
        "bytes.py",
        &format!(
            "try:\n    open(b'{outside}/caf\\xe9\\x1b[2J.txt', 'w')\nexcept OSError as e:\n    print('refused', e.errno)\n"
        ),
    );
    let (out, log) = run_logged(w, &["--approver", "deny"], &[PYTHON, "bytes.py"]);
    assert!(stdout(&out).contains("refused 13"), "{}", stderr(&out));
    let expected = format!("{outside}/caf\\xe9\x1b[2J.txt");
    let line = log
        .iter()
        .find(|l| l["event"] == "write" && l["path"].as_str() == Some(expected.as_str()))
        .unwrap_or_else(|| panic!("no write line for {expected:?}: {log:?}"));
    assert_eq!(line["lossy"], true);
    assert_eq!(line["answer"], "none");
    // On the terminal side, the escape sequence is shown escaped.
    assert!(
        stderr(&out).contains("caf\\xe9\\x1b[2J.txt"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains('\x1b'),
        "a raw escape reached fence's stderr"
    );
}

fn an_approved_write_lands_where_the_question_said_whatever_the_process_changes(w: &World) {
    let test = "an_approved_write_lands_where_the_question_said_whatever_the_process_changes";
    if !python_ready(test) {
        return;
    }
    let shown = w.outside.join("shown.txt");
    let swapped = w.outside.join("other.txt");
    // Thread A opens `shown`; while its question waits, the main thread rewrites the path
    // buffer to `swapped` (same length).
    w.write(
        "swap.py",
        &format!(
            "import ctypes, os, threading, time\nlibc = ctypes.CDLL(None, use_errno=True)\nbuf = ctypes.create_string_buffer(b'{a}')\nres = []\ndef opener():\n    res.append(libc.open(buf, os.O_WRONLY | os.O_CREAT, 0o644))\nt = threading.Thread(target=opener)\nt.start()\ntime.sleep(0.4)\nctypes.memmove(buf, b'{b}', len(b'{b}'))\nt.join()\nfd = res[0]\nprint('fd', fd)\nif fd >= 0:\n    os.write(fd, b'data')\n",
            a = shown.display(),
            b = swapped.display()
        ),
    );
    assert_eq!(shown.as_os_str().len(), swapped.as_os_str().len());
    let approver = script(w, "after 1000 yes\n");
    let (out, log) = run_logged(w, &["--approver", &approver], &[PYTHON, "swap.py"]);
    let err = stderr(&out);
    assert_eq!(
        std::fs::read_to_string(&shown).unwrap_or_default(),
        "data",
        "{} {err}",
        stdout(&out)
    );
    assert!(!swapped.exists(), "the write followed the swapped buffer");
    let q = questions(&log, shown.to_str().unwrap());
    assert_eq!(q.len(), 1, "{log:?}");
}

/// The host pid of the python process whose argv holds `token`.
fn python_pid(token: &str) -> Option<i32> {
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        if args.first() == Some(&PYTHON.as_bytes()) && args.contains(&token.as_bytes()) {
            return Some(pid);
        }
    }
    None
}

/// Every connect decision reaches the audit log through the gate: an allowed destination
/// (`--allow-net`) with its rule, and a destination no rule covers refused with
/// `fence.net-outside`. The host's listener saw exactly the allowed connection.
fn connect_decisions_are_in_the_audit_log(w: &World) {
    if !python_ready("connect_decisions_are_in_the_audit_log") {
        return;
    }
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let port = host.local_addr().unwrap().port();
    w.write(
        "connects.py",
        &format!(
            r#"import socket
for addr in [('127.0.0.1', {port}), ('192.0.2.1', 80)]:
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(addr)
        print('connected', addr[0])
    except OSError as e:
        print('refused', addr[0], e.errno)
"#
        ),
    );
    let rule = format!("127.0.0.1:{port}");
    let (out, log) = run_logged(
        w,
        &["--approver", "deny", "--allow-net", &rule],
        &[PYTHON, "connects.py"],
    );
    assert_eq!(
        stdout(&out),
        "connected 127.0.0.1\nrefused 192.0.2.1 13\n",
        "{}",
        stderr(&out)
    );
    let mut accepted = 0;
    while host.accept().is_ok() {
        accepted += 1;
    }
    assert_eq!(accepted, 1, "the host listener's connections");
    let line = |addr: &str| {
        log.iter()
            .find(|l| l["event"] == "connect" && l["addr"].as_str() == Some(addr))
            .unwrap_or_else(|| panic!("no connect line for {addr}: {log:?}"))
    };
    let allowed = line(&rule);
    assert_eq!(allowed["action"], "allow");
    assert_eq!(allowed["rule"], rule.as_str());
    let refused = line("192.0.2.1:80");
    // A destination no rule covers is a question, which nobody answers here.
    assert_eq!(refused["action"], "ask");
    assert_eq!(refused["answer"], "none");
    assert_eq!(refused["route"], "direct");
    assert_eq!(refused["rule"], "fence.net-outside");
    assert!(
        stderr(&out).contains("(rule fence.net-outside)"),
        "{}",
        stderr(&out)
    );
}

both_ways!(
    exec_ask_rules_are_refused_when_nobody_answers,
    mode_auto_runs_askable_exec_rules_but_never_writes_outside,
    an_approved_write_outside_is_carried_out_by_fence,
    a_write_to_a_secret_is_refused_without_a_question,
    a_no_with_a_reason_reaches_the_process,
    a_protected_path_needs_a_yes,
    always_covers_the_exact_argv_only,
    a_stream_of_sigwinch_gets_one_question_and_one_answer,
    a_push_re_pointed_to_main_while_asked_is_refused_after_the_yes,
    paths_that_are_not_utf8_are_logged_escaped_and_flagged,
    an_approved_write_lands_where_the_question_said_whatever_the_process_changes,
    connect_decisions_are_in_the_audit_log,
);

fn root_world(test: &str) -> Option<World> {
    World::new(test, support::Who::Root)
}

#[test]
fn bad_ask_timeout_values_are_usage_errors() {
    let Some(w) = root_world("bad_ask_timeout_values_are_usage_errors") else {
        return;
    };
    for bad in ["9", "3601", "abc", "", "-1"] {
        let flag = format!("--ask-timeout={bad}");
        let out = w
            .fence(&[OsStr::new(&flag), OsStr::new("--"), OsStr::new("/bin/true")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125), "--ask-timeout {bad:?}");
        assert!(stderr(&out).contains("--ask-timeout"), "{}", stderr(&out));
    }
    for good in ["10", "3600"] {
        let out = w
            .fence(&[
                OsStr::new("--ask-timeout"),
                OsStr::new(good),
                OsStr::new("--"),
                OsStr::new("/bin/true"),
            ])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "--ask-timeout {good}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_log_that_cannot_be_opened_stops_fence() {
    let Some(w) = root_world("a_log_that_cannot_be_opened_stops_fence") else {
        return;
    };
    let keep = w.write_outside("keep.txt", "keep");
    let link = w.outside.join("link.jsonl");
    std::os::unix::fs::symlink(&keep, &link).unwrap();
    let marker = w.outside.join("ran");
    // A log the sandbox could write (the worktree) would be its to truncate and forge.
    let inside = w.worktree.join("audit.jsonl");
    for bad in [
        link.clone(),
        w.outside.join("missing/dir/log.jsonl"),
        inside.clone(),
    ] {
        let out = w
            .fence(&[
                OsStr::new("--log"),
                bad.as_os_str(),
                OsStr::new("--"),
                OsStr::new("/usr/bin/touch"),
                marker.as_os_str(),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
        assert!(stderr(&out).contains("--log"), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "keep");
    assert!(!marker.exists());
    assert!(!inside.exists());
}

#[test]
fn an_explicit_socket_approver_that_cannot_start_fails_closed() {
    let Some(w) = root_world("an_explicit_socket_approver_that_cannot_start_fails_closed") else {
        return;
    };
    let out = w
        .fence(&[
            OsStr::new("--approver"),
            OsStr::new("socket"),
            OsStr::new("--"),
            OsStr::new("/bin/true"),
        ])
        .output()
        .unwrap();
    // Either the socket approver runs (the command's status) or fence refuses with 125
    // naming the approver; never a silent fallback to something else.
    match out.status.code() {
        Some(0) => {}
        Some(125) => assert!(
            stderr(&out).contains("--approver socket"),
            "{}",
            stderr(&out)
        ),
        other => panic!("unexpected status {other:?}: {}", stderr(&out)),
    }
}

#[test]
fn an_unanswered_question_times_out_to_deny() {
    let Some(w) = root_world("an_unanswered_question_times_out_to_deny") else {
        return;
    };
    let target = w.outside.join("late.txt");
    w.write("s.sh", &format!("echo x > {}\n", target.display()));
    let approver = script(&w, "after 30000 yes\n");
    let started = Instant::now();
    let (out, log) = run_logged(
        &w,
        &["--approver", &approver, "--ask-timeout", "10"],
        &["/bin/sh", "s.sh"],
    );
    let took = started.elapsed();
    assert!(!target.exists(), "a late Yes let the write through");
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(20),
        "{took:?}"
    );
    assert!(
        stderr(&out).contains("fence: Denied (timed out): write outside the worktree:"),
        "{}",
        stderr(&out)
    );
    let q = questions(&log, target.to_str().unwrap());
    assert_eq!(q[0]["answer"], "timeout");
}

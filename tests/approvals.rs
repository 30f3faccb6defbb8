//! `fence approvals` (the terminal UI in tmux, and `--once`) and `fence sessions`, driven
//! over the approval protocol.
//!
//! Two kinds of tests: the clients against a scripted session (a socket in a private
//! XDG_RUNTIME_DIR speaking the protocol of docs/approvals.md, which records what the
//! client answers), and the whole path against `fence run --approver socket`, where a
//! command waits on a red exec rule that asks (`git reset --hard`).

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

/// How long a test waits for something that should happen soon.
const SOON: Duration = Duration::from_secs(20);

fn fence() -> Command {
    Command::new(support::fence_binary())
}

/// A private runtime directory: the sockets live in `<dir>/fence`.
struct Runtime {
    dir: tempfile::TempDir,
}

impl Runtime {
    fn new() -> Runtime {
        let dir = tempfile::tempdir().unwrap();
        let sockets = dir.path().join("fence");
        std::fs::create_dir(&sockets).unwrap();
        std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
        Runtime { dir }
    }

    fn sockets(&self) -> PathBuf {
        self.dir.path().join("fence")
    }

    fn fence(&self) -> Command {
        let mut c = fence();
        c.env("XDG_RUNTIME_DIR", self.dir.path());
        c
    }

    fn sessions(&self) -> Vec<Value> {
        let out = self.fence().args(["sessions", "--json"]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn question(id: u64, level: &str, subject: &str) -> Value {
    json!({
        "type": "question", "id": id, "session": "scripted", "level": level,
        "rule": "git.push-main", "description": "pushes to the main branch",
        "event": "exec", "subject": subject, "pid": 4242, "process": "git",
        "always_offered": level == "yellow",
        "asked_at_ms": now_ms(), "deadline_ms": now_ms() + 120_000,
    })
}

/// A scripted session: sends its hello and questions to each client, records what the
/// clients send, accepts each answer once (then `resolved`), refuses Always on red.
struct ScriptedSession {
    received: Arc<Mutex<Vec<Value>>>,
}

impl ScriptedSession {
    fn start(runtime: &Runtime, id: &str, version: u32, questions: Vec<Value>) -> ScriptedSession {
        let listener = UnixListener::bind(runtime.sockets().join(format!("{id}.sock"))).unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let answered = Arc::new(Mutex::new(Vec::<u64>::new()));
        let hello = json!({
            "type": "hello", "version": version, "session": id,
            "fence_pid": std::process::id(),
            "worktree": "/work/tree", "command": ["sh", "-c", "git push origin main"],
            "started_at_ms": now_ms(), "ask_timeout_s": 120,
        });
        let (rec, ans) = (received.clone(), answered.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (hello, questions, rec, ans) =
                    (hello.clone(), questions.clone(), rec.clone(), ans.clone());
                std::thread::spawn(move || serve(stream, hello, questions, rec, ans));
            }
        });
        ScriptedSession { received }
    }

    /// Waits for a client message of type `ty` and returns it.
    fn wait_for(&self, ty: &str) -> Value {
        let deadline = Instant::now() + SOON;
        loop {
            if let Some(m) = self
                .received
                .lock()
                .unwrap()
                .iter()
                .find(|m| m["type"] == ty)
            {
                return m.clone();
            }
            assert!(Instant::now() < deadline, "no {ty} from the client");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn answers(&self) -> Vec<Value> {
        let got = self.received.lock().unwrap();
        got.iter()
            .filter(|m| m["type"] == "answer")
            .cloned()
            .collect()
    }
}

fn serve(
    stream: UnixStream,
    hello: Value,
    questions: Vec<Value>,
    received: Arc<Mutex<Vec<Value>>>,
    answered: Arc<Mutex<Vec<u64>>>,
) {
    let mut out = stream.try_clone().unwrap();
    let mut send = |v: &Value| writeln!(out, "{v}").is_ok();
    send(&hello);
    let mut lines = BufReader::new(stream).lines();
    let Some(Ok(first)) = lines.next() else {
        return;
    };
    received
        .lock()
        .unwrap()
        .push(serde_json::from_str(&first).unwrap());
    let open: Vec<&Value> = {
        let done = answered.lock().unwrap();
        questions
            .iter()
            .filter(|q| !done.contains(&q["id"].as_u64().unwrap()))
            .collect()
    };
    for q in &open {
        send(q);
    }
    send(&json!({"type": "synced", "pending": open.len()}));
    for line in lines.map_while(Result::ok) {
        let m: Value = serde_json::from_str(&line).unwrap();
        received.lock().unwrap().push(m.clone());
        let id = m["id"].as_u64().unwrap();
        let q = questions.iter().find(|q| q["id"] == id).unwrap();
        if m["answer"] == "always" && q["level"] == "red" {
            send(&json!({"type": "error", "id": id,
                "message": "refused: a red question never offers Always: answer yes or no"}));
            continue;
        }
        let mut done = answered.lock().unwrap();
        if done.contains(&id) {
            send(
                &json!({"type": "error", "id": id, "message": format!("question {id} was already answered")}),
            );
            continue;
        }
        done.push(id);
        send(&json!({"type": "accepted", "id": id}));
        send(
            &json!({"type": "resolved", "id": id, "answer": m["answer"], "by": "test", "reason": m["reason"]}),
        );
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn sessions_lists_live_sessions_and_removes_dead_sockets() {
    let rt = Runtime::new();
    let _s = ScriptedSession::start(
        &rt,
        "alpha",
        1,
        vec![
            question(1, "red", "git push origin main"),
            question(2, "yellow", "npm install -g serve"),
        ],
    );
    let dead = rt.sockets().join("dead.sock");
    drop(UnixListener::bind(&dead).unwrap());
    let rows = rt.sessions();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["session"], "alpha");
    assert_eq!(rows[0]["pending"], 2);
    assert_eq!(
        rows[0]["command"],
        json!(["sh", "-c", "git push origin main"])
    );
    assert_eq!(rows[0]["worktree"], "/work/tree");
    assert!(!dead.exists(), "a socket nobody listens on is removed");
    let out = rt.fence().arg("sessions").output().unwrap();
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.starts_with("SESSION\tPID\tPENDING"), "{text}");
    assert!(
        text.contains(&format!("alpha\t{}\t2\t", std::process::id())),
        "{text}"
    );
}

#[test]
fn sessions_without_any_and_in_a_shared_directory() {
    let rt = Runtime::new();
    let out = rt.fence().arg("sessions").output().unwrap();
    assert!(out.status.success());
    assert_eq!(stdout(&out), "no fence sessions are running\n");
    std::fs::set_permissions(rt.sockets(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = rt.fence().arg("sessions").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr(&out).contains("its mode is 0755, not 0700"),
        "{out:?}"
    );
}

#[test]
fn a_session_of_another_protocol_version_is_reported() {
    let rt = Runtime::new();
    let _s = ScriptedSession::start(&rt, "future", 2, vec![]);
    let out = rt.fence().args(["sessions", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr(&out).contains("speaks protocol version 2 (this fence speaks 1)"),
        "{out:?}"
    );
}

/// A listener inside a sandbox (allowed to write the socket directory, here inside its
/// worktree) that plays a session is refused by the clients: they check who listens.
#[test]
fn a_session_socket_served_from_inside_a_sandbox_is_refused() {
    let test = "a_session_socket_served_from_inside_a_sandbox_is_refused";
    if !support::kernel_ready(test) || !support::python_ready(test) {
        return;
    }
    let worktree = tempfile::tempdir().unwrap();
    let rt = worktree.path().join("rt");
    let sockets = rt.join("fence");
    std::fs::create_dir_all(&sockets).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
    let fake = r#"
import json, os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1] + ".new")
s.listen()
os.rename(sys.argv[1] + ".new", sys.argv[1])
now = int(time.time() * 1000)
while True:
    c, _ = s.accept()
    f = c.makefile("rw")
    f.write(json.dumps({"type": "hello", "version": 1, "session": "fake", "fence_pid": os.getpid(),
        "worktree": "/", "command": ["x"], "started_at_ms": now, "ask_timeout_s": 60}) + "\n")
    f.write(json.dumps({"type": "question", "id": 1, "session": "fake", "level": "yellow",
        "rule": "fake.rule", "description": "a question made up inside", "event": "exec",
        "subject": "made up", "pid": 1, "process": "x", "always_offered": True,
        "asked_at_ms": now, "deadline_ms": now + 60000}) + "\n")
    f.write(json.dumps({"type": "synced", "pending": 1}) + "\n")
    f.flush()
"#;
    let socket = sockets.join("fake.sock");
    let mut inside = fence()
        .arg("run")
        .arg("--worktree")
        .arg(worktree.path())
        .args(["--", support::PYTHON, "-c", fake])
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + SOON;
    while !socket.exists() {
        if Instant::now() > deadline || inside.try_wait().unwrap().is_some() {
            let _ = inside.kill();
            let out = inside.wait_with_output().unwrap();
            panic!("the sandboxed listener never came up: {out:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let sessions = fence()
        .env("XDG_RUNTIME_DIR", &rt)
        .args(["sessions", "--json"])
        .output()
        .unwrap();
    let answered = fence()
        .env("XDG_RUNTIME_DIR", &rt)
        .args(["approvals", "--once", "--wait", "2", "--answer", "yes"])
        .output()
        .unwrap();
    let _ = inside.kill();
    let _ = inside.wait();
    assert_eq!(sessions.status.code(), Some(1), "{sessions:?}");
    assert!(
        stderr(&sessions).contains("refusing this session socket: peer process"),
        "{sessions:?}"
    );
    assert_eq!(stdout(&sessions).trim(), "[]", "{sessions:?}");
    assert_eq!(answered.status.code(), Some(1), "{answered:?}");
    assert!(!stdout(&answered).contains("made up"), "{answered:?}");
}

/// Runs `fence approvals --once ARGS` with `input` on stdin.
fn once(rt: &Runtime, args: &[&str], input: &str) -> Output {
    let mut child = rt
        .fence()
        .args(["approvals", "--once", "--wait", "20"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn once_reads_a_no_and_its_reason_from_stdin() {
    let rt = Runtime::new();
    let s = ScriptedSession::start(
        &rt,
        "beta",
        1,
        vec![question(7, "yellow", "npm install -g serve")],
    );
    let out = once(&rt, &[], "no install it locally\n");
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("question 7 of session scripted"), "{text}");
    assert!(
        text.contains("YELLOW git.push-main: pushes to the main branch"),
        "{text}"
    );
    assert!(text.contains("exec: npm install -g serve"), "{text}");
    assert!(
        text.contains("answer: yes, always or no [reason]"),
        "{text}"
    );
    let hello = s.wait_for("hello");
    assert_eq!(hello["version"], 1);
    assert_eq!(
        s.answers(),
        vec![json!({"type": "answer", "id": 7, "answer": "no", "reason": "install it locally"})]
    );
}

#[test]
fn once_with_flags_prints_json_and_sends_the_answer() {
    let rt = Runtime::new();
    let s = ScriptedSession::start(
        &rt,
        "gamma",
        1,
        vec![question(3, "red", "git push origin main")],
    );
    let out = once(&rt, &["--json", "--answer", "yes"], "");
    assert!(out.status.success(), "{out:?}");
    let printed: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(printed["question"]["id"], 3);
    assert_eq!(printed["question"]["level"], "red");
    assert_eq!(printed["session"]["session"], "gamma");
    assert_eq!(
        s.answers(),
        vec![json!({"type": "answer", "id": 3, "answer": "yes"})]
    );
}

#[test]
fn once_with_a_session_answers_only_that_sessions_question() {
    let rt = Runtime::new();
    let a = ScriptedSession::start(&rt, "alpha", 1, vec![question(1, "yellow", "make deploy")]);
    let b = ScriptedSession::start(
        &rt,
        "beta",
        1,
        vec![question(2, "red", "git push origin main")],
    );
    let out = once(&rt, &["--json", "--session", "beta", "--answer", "no"], "");
    assert!(out.status.success(), "{out:?}");
    let printed: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(printed["session"]["session"], "beta");
    assert_eq!(
        b.answers(),
        vec![json!({"type": "answer", "id": 2, "answer": "no"})]
    );
    assert!(a.answers().is_empty(), "{:?}", a.answers());
    // A session with no such id: nothing is answered, and --wait ends it.
    let out = rt
        .fence()
        .args(["approvals", "--once", "--wait", "1", "--session", "gamma"])
        .args(["--answer", "yes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(a.answers().is_empty(), "{:?}", a.answers());
}

#[test]
fn once_fails_when_the_session_refuses_the_answer() {
    let rt = Runtime::new();
    let _s = ScriptedSession::start(
        &rt,
        "delta",
        1,
        vec![question(4, "red", "git push origin main")],
    );
    let out = once(&rt, &[], "always\n");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr(&out).contains("a red question never offers Always"),
        "{out:?}"
    );
    let out = once(&rt, &[], "perhaps\n");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr(&out).contains("is not an answer"), "{out:?}");
}

#[test]
fn once_gives_up_when_no_question_comes() {
    let rt = Runtime::new();
    let out = rt
        .fence()
        .args(["approvals", "--once", "--wait", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr(&out).contains("no question arrived within 1 s"),
        "{out:?}"
    );
    let out = rt
        .fence()
        .args(["approvals", "--reason", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64), "{out:?}");
}

/// A tmux server of its own, running one command in a 120x40 window.
struct Tmux {
    name: String,
}

impl Tmux {
    fn start(test: &str, command: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            support::skip(test, "tmux is not installed");
            return None;
        }
        let name = format!("fence-{test}-{}", std::process::id());
        let status = Command::new("tmux")
            .args([
                "-L",
                &name,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "120",
                "-y",
                "40",
            ])
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        Some(Tmux { name })
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.name, "capture-pane", "-p", "-t", "t"])
            .output()
            .unwrap();
        stdout(&out)
    }

    /// Waits until the screen shows all of `texts`; returns the screen.
    fn wait_for(&self, texts: &[&str]) -> String {
        let deadline = Instant::now() + SOON;
        loop {
            let screen = self.screen();
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "never showed {texts:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits out the pause of a card that came under the cursor without the keys (a first
    /// card, or the next after one answered): a key pressed sooner answers nothing.
    fn settle(&self) {
        std::thread::sleep(Duration::from_millis(1000));
    }

    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.name, "send-keys", "-t", "t"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.name, "kill-server"])
            .stderr(Stdio::null())
            .status();
    }
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

#[test]
fn the_terminal_ui_shows_cards_and_answers_them() {
    let rt = Runtime::new();
    let s = ScriptedSession::start(
        &rt,
        "ui",
        1,
        vec![
            question(1, "red", "git push origin main \\x1b[2J"),
            question(2, "yellow", "npm install -g serve"),
        ],
    );
    let command = format!(
        "env XDG_RUNTIME_DIR={} {} approvals",
        shell_quote(rt.dir.path()),
        shell_quote(support::fence_binary())
    );
    let Some(tmux) = Tmux::start("ui", &command) else {
        return;
    };
    // Both cards, the escaped subject, a countdown; a red card offers no Always.
    let screen = tmux.wait_for(&[
        "RED git.push-main",
        "YELLOW git.push-main",
        "exec: git push origin main \\x1b[2J",
        "time left: 1m ",
        "process: git (pid 4242)",
    ]);
    assert!(screen.contains("y yes  n no"), "{screen}");
    assert!(!screen.contains("a always"), "{screen}");
    // y on the selected (first, red) card.
    tmux.settle();
    tmux.keys(&["y"]);
    tmux.wait_for(&["Approved: git push origin main \\x1b[2J (by test)"]);
    // The yellow card is left and selected: Always is offered; n + a reason denies it.
    tmux.wait_for(&["a always"]);
    tmux.settle();
    tmux.keys(&["n"]);
    tmux.wait_for(&["No, reason:"]);
    tmux.keys(&["-l", "use a local install"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for(&[
        "Denied: npm install -g serve (by test): use a local install",
        "no question is pending",
    ]);
    assert_eq!(
        s.answers(),
        vec![
            json!({"type": "answer", "id": 1, "answer": "yes"}),
            json!({"type": "answer", "id": 2, "answer": "no", "reason": "use a local install"}),
        ]
    );
    tmux.keys(&["q"]);
}

// ---- The whole path: `fence run --approver socket` holding a question. ----

/// Whether this build's `fence run` takes `--approver` (the gate wired into the
/// notification loop); prints a loud skip reason when not.
fn run_asks(test: &str) -> bool {
    if !support::kernel_ready(test) || !support::python_ready(test) {
        return false;
    }
    let help = fence().args(["run", "--help"]).output().unwrap();
    let ok = stdout(&help).contains("--approver");
    if !ok {
        support::skip(
            test,
            "this fence run has no --approver (the gate is not wired into it)",
        );
    }
    ok
}

/// `fence run --approver socket` of a script that runs `git reset --hard` (a red exec
/// rule that asks) and prints git's status, in a fresh git worktree. git is run by its
/// full path (no search along PATH, one exec) from a script (the script's own exec asks
/// nothing), so that the only question is git's exec.
fn waiting_run(rt: &Runtime) -> (std::process::Child, tempfile::TempDir) {
    waiting_run_after(rt, "")
}

/// As [`waiting_run`], with `prelude` (shell lines) run first in the script.
fn waiting_run_after(rt: &Runtime, prelude: &str) -> (std::process::Child, tempfile::TempDir) {
    let worktree = tempfile::tempdir().unwrap();
    let git = Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(worktree.path())
        .status()
        .unwrap();
    assert!(git.success());
    let script = worktree.path().join("push.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n{prelude}\ngit=$(command -v git)\n\"$git\" reset --hard\necho \"status $?\"\n"
        ),
    )
    .unwrap();
    std::fs::write(worktree.path().join("answer.py"), ANSWER_YES).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let child = rt
        .fence()
        .arg("run")
        .arg("--worktree")
        .arg(worktree.path())
        .args(["--approver", "socket", "--ask-timeout", "60", "--"])
        .arg(&script)
        .current_dir(worktree.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, worktree)
}

/// Waits until the session lists `n` pending questions; returns the sessions.
fn wait_pending(rt: &Runtime, n: u64) -> Vec<Value> {
    let deadline = Instant::now() + SOON;
    loop {
        let rows = rt.sessions();
        if rows.len() == 1 && rows[0]["pending"] == n {
            return rows;
        }
        assert!(Instant::now() < deadline, "never {n} pending: {rows:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn run_yes_lets_the_command_go_on_and_no_tells_it_why() {
    if !run_asks("run_yes_lets_the_command_go_on_and_no_tells_it_why") {
        return;
    }
    let rt = Runtime::new();
    let (run, _w) = waiting_run(&rt);
    wait_pending(&rt, 1);
    let out = once(&rt, &["--answer", "yes"], "");
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).contains("git reset --hard"), "{out:?}");
    let done = run.wait_with_output().unwrap();
    // git ran (and failed for want of a remote), rather than being refused (126).
    assert!(!stdout(&done).contains("status 126"), "{done:?}");
    assert!(stdout(&done).contains("status "), "{done:?}");

    let (run, _w) = waiting_run(&rt);
    wait_pending(&rt, 1);
    let out = once(&rt, &["--answer", "no", "--reason", "push to a branch"], "");
    assert!(out.status.success(), "{out:?}");
    let done = run.wait_with_output().unwrap();
    assert!(stdout(&done).contains("status 126"), "{done:?}");
    assert!(stderr(&done).contains("push to a branch"), "{done:?}");
}

/// Connects to the socket (or to every socket in the directory) given as argv[1] and
/// answers Yes to the first questions; prints what it gets back.
const ANSWER_YES: &str = r#"
import glob, json, socket, sys
target = sys.argv[1]
paths = [target] if target.endswith(".sock") else glob.glob(target + "/*.sock")
print("sockets:", paths)
for path in paths:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        print("connect failed:", e)
        continue
    s.settimeout(5)
    f = s.makefile("rw")
    f.write(json.dumps({"type": "hello", "version": 1, "client": "inside"}) + "\n")
    for i in range(1, 4):
        f.write(json.dumps({"type": "answer", "id": i, "answer": "yes"}) + "\n")
    f.flush()
    try:
        for line in f:
            print(line.strip())
    except OSError as e:
        print("read failed:", e)
"#;

#[test]
fn run_sandboxed_processes_cannot_answer() {
    if !run_asks("run_sandboxed_processes_cannot_answer") {
        return;
    }
    let rt = Runtime::new();
    // A process of this session tries first, while the push waits.
    let prelude = format!(
        "{} answer.py {} > answer.out 2>&1 &\nsleep 1",
        support::PYTHON,
        rt.sockets().display()
    );
    let (run, w) = waiting_run_after(&rt, &prelude);
    let rows = wait_pending(&rt, 1);
    let socket = rt
        .sockets()
        .join(format!("{}.sock", rows[0]["session"].as_str().unwrap()));
    // Then another session, without and with the socket directory opened to it.
    let other = tempfile::tempdir().unwrap();
    for extra in [
        vec![],
        vec![
            "--allow-write".to_string(),
            rt.sockets().display().to_string(),
        ],
    ] {
        let out = fence()
            .arg("run")
            .arg("--worktree")
            .arg(other.path())
            .args(&extra)
            .arg("--")
            .arg(support::PYTHON)
            .arg(w.path().join("answer.py"))
            .arg(&socket)
            .output()
            .unwrap();
        assert!(!stdout(&out).contains("accepted"), "{out:?}");
    }
    // From outside: the question is still there, and nobody answered it.
    std::thread::sleep(Duration::from_secs(1));
    wait_pending(&rt, 1);
    let out = once(&rt, &["--answer", "no"], "");
    assert!(out.status.success(), "{out:?}");
    let done = run.wait_with_output().unwrap();
    assert!(stdout(&done).contains("status 126"), "{done:?}");
    // The session's own process did try, and got nowhere.
    let inside = std::fs::read_to_string(w.path().join("answer.out")).unwrap_or_default();
    assert!(
        inside.contains("connect failed") || inside.contains("refused:"),
        "{inside}"
    );
    assert!(!inside.contains("accepted"), "{inside}");
}

#[test]
fn run_the_terminal_ui_answers_a_waiting_command() {
    if !run_asks("run_the_terminal_ui_answers_a_waiting_command") {
        return;
    }
    let rt = Runtime::new();
    let command = format!(
        "env XDG_RUNTIME_DIR={} {} approvals",
        shell_quote(rt.dir.path()),
        shell_quote(support::fence_binary())
    );
    let Some(tmux) = Tmux::start("run-ui", &command) else {
        return;
    };
    let (run, _w) = waiting_run(&rt);
    tmux.wait_for(&["RED", "git reset --hard", "time left: "]);
    tmux.settle();
    tmux.keys(&["y"]);
    let done = run.wait_with_output().unwrap();
    assert!(!stdout(&done).contains("status 126"), "{done:?}");
    tmux.wait_for(&["git reset --hard (by fence approvals"]);

    let (run, _w) = waiting_run(&rt);
    tmux.wait_for(&["git reset --hard", "time left: "]);
    tmux.settle();
    tmux.keys(&["n"]);
    tmux.keys(&["-l", "not on main"]);
    tmux.keys(&["Enter"]);
    let done = run.wait_with_output().unwrap();
    assert!(stdout(&done).contains("status 126"), "{done:?}");
    assert!(stderr(&done).contains("not on main"), "{done:?}");
    tmux.keys(&["q"]);
}

// ---- The unprivileged path: the socket under /tmp/fence-$UID, a client of the same user. ----

/// The unprivileged sessions of these tests share `/tmp/fence-$UID` (no private runtime
/// directory: that default is what they test); one at a time, so that `--once` finds the
/// test's own question.
static UNPRIVILEGED: Mutex<()> = Mutex::new(());

/// `fence run --approver socket` as the unprivileged user (no `XDG_RUNTIME_DIR`), of a
/// script that runs `git reset --hard` (asked) in the world's worktree, a git repository.
fn unprivileged_waiting_run(w: &support::World) -> std::process::Child {
    let git = w
        .command_as_runner("git")
        .args(["init", "-q", "."])
        .status()
        .unwrap();
    assert!(git.success());
    let script = w.write(
        "push.sh",
        "#!/bin/sh\ngit=$(command -v git)\n\"$git\" reset --hard\necho \"status $?\"\n",
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    w.write("answer.py", ANSWER_YES);
    w.fence(&[
        "--approver".as_ref(),
        "socket".as_ref(),
        "--ask-timeout".as_ref(),
        "60".as_ref(),
        "--".as_ref(),
        script.as_os_str(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap()
}

/// `fence ARGS` as the world's user, in its plain environment (no `XDG_RUNTIME_DIR`).
fn as_runner(w: &support::World, args: &[&str]) -> Output {
    w.command_as_runner(support::fence_binary().to_str().unwrap())
        .args(args)
        .output()
        .unwrap()
}

/// Waits until the session of this world's worktree lists `n` pending questions; returns
/// its row.
fn wait_pending_of(w: &support::World, n: u64) -> Value {
    let deadline = Instant::now() + SOON;
    loop {
        let out = as_runner(w, &["sessions", "--json"]);
        assert!(out.status.success(), "{out:?}");
        let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        if let Some(row) = rows
            .iter()
            .find(|r| r["worktree"].as_str() == w.worktree.to_str())
            .filter(|r| r["pending"] == n)
        {
            return row.clone();
        }
        assert!(Instant::now() < deadline, "never {n} pending: {rows:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn uid_of(w: &support::World) -> u32 {
    let out = w.command_as_runner("id").arg("-u").output().unwrap();
    stdout(&out).trim().parse().unwrap()
}

fn unprivileged_yes_runs_and_no_tells_why_through_the_users_socket(w: &support::World) {
    let _one = UNPRIVILEGED.lock().unwrap_or_else(|e| e.into_inner());
    let uid = uid_of(w);
    let run = unprivileged_waiting_run(w);
    let row = wait_pending_of(w, 1);
    let session = row["session"].as_str().unwrap().to_string();
    // The socket is the user's, in the user's private directory under /tmp.
    let dir = PathBuf::from(format!("/tmp/fence-{uid}"));
    let meta = std::fs::symlink_metadata(&dir).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&meta), uid);
    let sock = std::fs::metadata(dir.join(format!("{session}.sock"))).unwrap();
    assert_eq!(sock.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&sock), uid);

    let out = as_runner(
        w,
        &[
            "approvals",
            "--once",
            "--session",
            &session,
            "--wait",
            "20",
            "--json",
            "--answer",
            "yes",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let q: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    assert_eq!(
        q["session"]["session"],
        session.as_str(),
        "another session's question: {q}"
    );
    let done = run.wait_with_output().unwrap();
    assert!(!stdout(&done).contains("status 126"), "{done:?}");
    assert!(stdout(&done).contains("status "), "{done:?}");

    let run = unprivileged_waiting_run(w);
    let row = wait_pending_of(w, 1);
    let out = as_runner(
        w,
        &[
            "approvals",
            "--once",
            "--session",
            row["session"].as_str().unwrap(),
            "--wait",
            "20",
            "--answer",
            "no",
            "--reason",
            "not as this user",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let done = run.wait_with_output().unwrap();
    assert!(stdout(&done).contains("status 126"), "{done:?}");
    assert!(stderr(&done).contains("not as this user"), "{done:?}");
}

fn unprivileged_sessions_refuse_other_users_and_their_own_sandbox(w: &support::World) {
    let _one = UNPRIVILEGED.lock().unwrap_or_else(|e| e.into_inner());
    let uid = uid_of(w);
    let run = unprivileged_waiting_run(w);
    let row = wait_pending_of(w, 1);
    let socket = format!("/tmp/fence-{uid}/{}.sock", row["session"].as_str().unwrap());
    // Another user (nobody) with the protocol client, aimed at the socket itself.
    let other = Command::new(support::PYTHON)
        .arg(w.worktree.join("answer.py"))
        .arg(&socket)
        .uid(65534)
        .gid(65534)
        .env_clear()
        .output()
        .unwrap();
    assert!(!stdout(&other).contains("accepted"), "{other:?}");
    assert!(
        stdout(&other).contains("connect failed"),
        "another user reached the socket: {other:?}"
    );
    // And `fence approvals --once` as that user sees no question of this one.
    let once_other = Command::new(support::fence_binary())
        .args(["approvals", "--once", "--wait", "2", "--answer", "yes"])
        .uid(65534)
        .gid(65534)
        .env_clear()
        .output()
        .unwrap();
    assert!(!once_other.status.success(), "{once_other:?}");
    let _ = std::fs::remove_dir("/tmp/fence-65534");
    // A sandbox of the same user, in a session of its own, cannot answer either.
    let out = w
        .fence(&[
            "--".as_ref(),
            support::PYTHON.as_ref(),
            "answer.py".as_ref(),
            socket.as_ref(),
        ])
        .output()
        .unwrap();
    assert!(!stdout(&out).contains("accepted"), "{out:?}");
    // From outside: still pending, and nobody answered it.
    std::thread::sleep(Duration::from_millis(500));
    let row = wait_pending_of(w, 1);
    let out = as_runner(
        w,
        &[
            "approvals",
            "--once",
            "--session",
            row["session"].as_str().unwrap(),
            "--wait",
            "20",
            "--answer",
            "no",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let done = run.wait_with_output().unwrap();
    assert!(stdout(&done).contains("status 126"), "{done:?}");
}

mod unprivileged {
    use super::support::{Who, World};

    macro_rules! unprivileged_ways {
        ($($name:ident),* $(,)?) => {
            mod as_unprivileged_user {
                $(
                    #[test]
                    fn $name() {
                        let test = concat!("unprivileged::as_unprivileged_user::", stringify!($name));
                        if super::super::run_asks(test)
                            && let Some(w) = super::World::new(test, super::Who::Unprivileged)
                        {
                            super::super::$name(&w);
                        }
                    }
                )*
            }
            mod without_namespaces {
                $(
                    #[test]
                    fn $name() {
                        let test = concat!("unprivileged::without_namespaces::", stringify!($name));
                        if super::super::run_asks(test)
                            && let Some(w) = super::World::new(test, super::Who::UnprivilegedWithoutNamespaces)
                        {
                            super::super::$name(&w);
                        }
                    }
                )*
            }
        };
    }

    unprivileged_ways!(
        unprivileged_yes_runs_and_no_tells_why_through_the_users_socket,
        unprivileged_sessions_refuse_other_users_and_their_own_sandbox,
    );
}

/// A host listener on 127.0.0.1 (non-blocking), its port, and a worktree whose `probe.py`
/// connects to it twice, sending `hello` and printing `connected` each time.
fn connect_probe() -> (std::net::TcpListener, u16, tempfile::TempDir) {
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let port = host.local_addr().unwrap().port();
    let worktree = tempfile::tempdir().unwrap();
    std::fs::write(
        worktree.path().join("probe.py"),
        format!(
            "import socket\nfor i in range(2):\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=60)\n    s.sendall(b'hello')\n    s.close()\n    print('connected')\n"
        ),
    )
    .unwrap();
    (host, port, worktree)
}

/// `fence run --approver socket` of `probe.py`, without namespaces (so a port of the host's
/// loopback is a host service, asked about).
fn connecting_run(rt: &Runtime, worktree: &Path) -> std::process::Child {
    rt.fence()
        .arg("run")
        .arg("--worktree")
        .arg(worktree)
        .args(["--approver", "socket", "--ask-timeout", "60", "--"])
        .arg(support::PYTHON)
        .arg("probe.py")
        .env("FENCE_NO_NAMESPACES", "1")
        .current_dir(worktree)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Connections the host listener accepts within [`SOON`], up to `want`.
fn accepted(host: &std::net::TcpListener, want: usize) -> usize {
    let mut n = 0;
    let deadline = Instant::now() + SOON;
    while n < want && Instant::now() < deadline {
        match host.accept() {
            Ok(_) => n += 1,
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    n
}

/// A connect to a host service on loopback (asked without a network namespace) waits for
/// `fence approvals`: the card names the destination, the port, the route and the process;
/// Always lets the same `host:port` through again without a second question.
#[test]
fn run_a_connection_question_shows_its_destination_and_always_covers_it() {
    let test = "run_a_connection_question_shows_its_destination_and_always_covers_it";
    if !run_asks(test) {
        return;
    }
    let rt = Runtime::new();
    let (host, port, worktree) = connect_probe();
    let run = connecting_run(&rt, worktree.path());
    wait_pending(&rt, 1);
    let out = once(&rt, &["--json", "--answer", "always"], "");
    assert!(out.status.success(), "{out:?}");
    let printed: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let q = &printed["question"];
    assert_eq!(q["event"], "connect", "{q}");
    assert_eq!(q["rule"], "fence.net-host-loopback");
    assert_eq!(q["level"], "yellow");
    assert_eq!(q["always_offered"], true);
    assert_eq!(q["process"], "python3");
    assert_eq!(
        q["subject"],
        format!("connection to a host service on loopback: 127.0.0.1:{port}")
    );
    assert_eq!(
        q["destination"],
        json!({"host": "127.0.0.1", "port": port, "route": "direct"})
    );
    let done = run.wait_with_output().unwrap();
    assert_eq!(stdout(&done), "connected\nconnected\n", "{done:?}");
    assert_eq!(accepted(&host, 2), 2, "the host listener's connections");
    // The text form of the card.
    let run = connecting_run(&rt, worktree.path());
    wait_pending(&rt, 1);
    let out = once(&rt, &["--answer", "no", "--reason", "not the database"], "");
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).contains(&format!("  destination: 127.0.0.1 port {port}, direct\n")),
        "{out:?}"
    );
    let done = run.wait_with_output().unwrap();
    assert!(
        stderr(&done).contains("denied: not the database"),
        "{done:?}"
    );
    assert!(!stdout(&done).contains("connected"), "{done:?}");
}

#[test]
fn run_the_terminal_ui_shows_a_connection_card_and_takes_always() {
    if !run_asks("run_the_terminal_ui_shows_a_connection_card_and_takes_always") {
        return;
    }
    let rt = Runtime::new();
    let command = format!(
        "env XDG_RUNTIME_DIR={} {} approvals",
        shell_quote(rt.dir.path()),
        shell_quote(support::fence_binary())
    );
    let Some(tmux) = Tmux::start("net-ui", &command) else {
        return;
    };
    let (host, port, worktree) = connect_probe();
    let run = connecting_run(&rt, worktree.path());
    let destination = format!("destination: 127.0.0.1 port {port}, direct");
    tmux.wait_for(&[
        "YELLOW",
        "fence.net-host-loopback",
        "process: python3",
        &destination,
        "time left: ",
    ]);
    tmux.settle();
    tmux.keys(&["a"]);
    let done = run.wait_with_output().unwrap();
    assert_eq!(stdout(&done), "connected\nconnected\n", "{done:?}");
    assert_eq!(accepted(&host, 2), 2, "the host listener's connections");
    tmux.keys(&["q"]);
}

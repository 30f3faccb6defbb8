//! `--approver socket`: each question is put to the people connected to the session's
//! unix socket (`fence approvals`, or any client of the protocol in docs/approvals.md).
//!
//! The socket is `<dir>/<session>.sock`, mode 0600, in a directory of mode 0700 that we
//! own and verify ([`private_dir`]): `$XDG_RUNTIME_DIR/fence/`, else `/tmp/fence-$UID/`.
//! Every connection's peer is checked before a byte is sent ([`super::peer`]). The
//! socket itself answers `fence sessions`: its hello describes the session and the
//! pending questions follow, so there is no second file that could go stale or disagree;
//! a socket nobody listens on any more (its fence died) refuses connections and is
//! removed by the next `fence sessions` or `fence approvals`. The socket is bound under a
//! temporary name and renamed once it listens, so a live session is never taken for a
//! dead one.
//!
//! The server is a tokio runtime on a thread of its own; [`Approver::ask`] blocks the
//! gate's thread on a condition variable until a client answers, the deadline passes or
//! the session closes. The first answer counts; every client is told (`resolved`) so it
//! drops the card.

use std::collections::{BTreeMap, VecDeque};
use std::io::{IsTerminal as _, Write as _};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{broadcast, mpsc, watch};

use super::protocol::{self, AnswerWord, ClientMessage, MAX_LINE, ServerHello, ServerMessage};
use super::{Answer, Approver, Level, PROTOCOL_VERSION, Question, SessionInfo, peer};
use crate::escape;

/// How long a new connection may take to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one line may take to reach a client before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// Messages a slow client may fall behind before it is dropped.
const BACKLOG: usize = 1024;
/// Decided question ids remembered for the "already answered" error.
const REMEMBERED: usize = 4096;
/// How long closing waits for clients to receive `session_end`.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The directory of the session sockets: `$XDG_RUNTIME_DIR/fence`, else
/// `/tmp/fence-$UID` (never the session's TMPDIR).
pub fn socket_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => Path::new(&dir).join("fence"),
        _ => {
            // SAFETY: geteuid has no preconditions.
            let uid = unsafe { libc::geteuid() };
            PathBuf::from(format!("/tmp/fence-{uid}"))
        }
    }
}

/// Every folder a client of this user may read sessions' sockets from: this process's
/// ([`socket_dir`]), and those of a client started with another `XDG_RUNTIME_DIR`, or
/// none (su, sudo, ssh without a login session): `/run/user/UID/fence` and
/// `/tmp/fence-UID`. A sandbox that could write one of them could serve a client a
/// session of its own.
pub fn socket_dirs() -> Vec<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut dirs = vec![
        socket_dir(),
        PathBuf::from(format!("/run/user/{uid}/fence")),
        PathBuf::from(format!("/tmp/fence-{uid}")),
    ];
    dirs.dedup();
    dirs
}

/// Makes sure `dir` is ours alone: a real directory (not a symlink), owned by us, mode
/// 0700. With `create` it is made when missing. Anything else is refused: in a shared
/// directory such as /tmp another user could have made it first. Security boundary.
pub fn private_dir(dir: &Path, create: bool) -> Result<(), String> {
    if create {
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
    }
    let meta =
        std::fs::symlink_metadata(dir).map_err(|e| format!("cannot use {}: {e}", dir.display()))?;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let problem = if meta.file_type().is_symlink() {
        Some("it is a symlink".to_string())
    } else if !meta.is_dir() {
        Some("it is not a directory".to_string())
    } else if meta.uid() != uid {
        Some(format!(
            "it is owned by uid {}, not by us (uid {uid})",
            meta.uid()
        ))
    } else if meta.mode() & 0o777 != 0o700 {
        Some(format!(
            "its mode is {:04o}, not 0700",
            meta.mode() & 0o7777
        ))
    } else {
        None
    };
    match problem {
        Some(p) => Err(format!(
            "refusing the approval socket directory {}: {p} (remove it or set XDG_RUNTIME_DIR)",
            dir.display()
        )),
        None => Ok(()),
    }
}

/// Starts the session's approval socket in [`socket_dir`].
pub fn start(session: &SessionInfo) -> Result<Arc<dyn Approver>, String> {
    let approver = SocketApprover::start_in(&socket_dir(), session, Notice::Stderr)?;
    Ok(Arc::new(approver))
}

/// Where "a question is waiting" is said when nobody is connected.
pub enum Notice {
    /// fence's stderr.
    Stderr,
    /// Collected (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Collect(Arc<Mutex<Vec<String>>>),
}

impl Notice {
    /// One line, once per stretch without clients. On a terminal the line starts and
    /// ends with `\r\n` and holds no escape sequence: it moves no cursor and redraws
    /// nothing, so a full-screen program that owns the terminal is disturbed by one line
    /// at most; it is said at all because a question nobody sees only times out.
    fn say(&self, line: &str) {
        match self {
            Notice::Stderr => {
                let mut err = std::io::stderr().lock();
                let text = if err.is_terminal() {
                    format!("\r\n{line}\r\n")
                } else {
                    format!("{line}\n")
                };
                let _ = err.write_all(text.as_bytes());
            }
            Notice::Collect(lines) => lines
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(line.into()),
        }
    }
}

/// The approver behind `--approver socket`.
pub struct SocketApprover {
    shared: Arc<Shared>,
    socket: PathBuf,
    shutdown: watch::Sender<bool>,
    server: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Shared {
    hello: ServerHello,
    state: Mutex<State>,
    changed: Condvar,
    events: broadcast::Sender<Event>,
    notice: Notice,
}

#[derive(Clone)]
struct Event {
    line: Arc<str>,
    end: bool,
}

#[derive(Default)]
struct State {
    pending: BTreeMap<u64, Pending>,
    /// Recently decided questions and how (for "already answered").
    decided: VecDeque<(u64, String)>,
    /// Connections past their hello.
    clients: usize,
    closed: bool,
    /// "A question is waiting" was said since the last client left.
    told: bool,
}

struct Pending {
    question: Question,
    answer: Option<Answer>,
    /// Threads waiting in `ask` (a re-asked question attaches to the pending one).
    waiters: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `message` to every connected client. Called with the state locked, so a
    /// client that attaches sees each question either in its snapshot or as an event.
    fn broadcast(&self, message: &ServerMessage) {
        let _ = self.events.send(Event {
            line: protocol::line(message).into(),
            end: matches!(message, ServerMessage::SessionEnd),
        });
    }

    /// Marks question `id` decided with `answer` and tells the clients.
    fn decide(&self, st: &mut State, id: u64, answer: Answer, by: &str) {
        let Some(p) = st.pending.get_mut(&id) else {
            return;
        };
        let reason = match &answer {
            Answer::No { reason } => reason.clone(),
            _ => None,
        };
        self.broadcast(&ServerMessage::Resolved {
            id,
            answer: answer.log_word().into(),
            by: by.into(),
            reason,
        });
        st.decided
            .push_back((id, format!("{} by {by}", answer.log_word())));
        if st.decided.len() > REMEMBERED {
            st.decided.pop_front();
        }
        p.answer = Some(answer);
        self.changed.notify_all();
    }

    fn answer(
        &self,
        id: u64,
        word: AnswerWord,
        reason: Option<String>,
        by: &str,
    ) -> Result<(), String> {
        let mut st = self.lock();
        if st.closed {
            return Err("the session is ending".into());
        }
        let Some(p) = st.pending.get(&id) else {
            return Err(match st.decided.iter().rev().find(|(d, _)| *d == id) {
                Some((_, how)) => format!("question {id} was already answered ({how})"),
                None => format!("no question {id} is pending"),
            });
        };
        if p.answer.is_some() {
            return Err(format!("question {id} was already answered"));
        }
        if word == AnswerWord::Always
            && !(p.question.always_offered && p.question.level == Level::Yellow)
        {
            let why = if p.question.level == Level::Red {
                "a red question never offers Always"
            } else {
                "this question does not offer Always"
            };
            return Err(format!("refused: {why}: answer yes or no"));
        }
        let answer = match word {
            AnswerWord::Yes => Answer::Yes,
            AnswerWord::Always => Answer::Always,
            AnswerWord::No => Answer::No {
                // Shown to the program and on terminals: nothing in it may act on one.
                reason: reason
                    .filter(|r| !r.trim().is_empty())
                    .map(|r| escape::if_unsafe(&r)),
            },
        };
        self.decide(&mut st, id, answer, by);
        Ok(())
    }

    /// Registers a client past its hello: the questions pending now, and the events
    /// from now on.
    fn attach(self: &Arc<Self>) -> (Vec<Question>, broadcast::Receiver<Event>, ClientGuard) {
        let mut st = self.lock();
        let rx = self.events.subscribe();
        st.clients += 1;
        st.told = false;
        let snapshot = st
            .pending
            .values()
            .filter(|p| p.answer.is_none())
            .map(|p| p.question.clone())
            .collect();
        (snapshot, rx, ClientGuard(self.clone()))
    }
}

/// Counts a connected client while it lives.
struct ClientGuard(Arc<Shared>);

impl Drop for ClientGuard {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.clients -= 1;
    }
}

impl SocketApprover {
    /// Binds `<dir>/<id>.sock` (making and verifying `dir`) and starts serving it.
    pub fn start_in(
        dir: &Path,
        session: &SessionInfo,
        notice: Notice,
    ) -> Result<SocketApprover, String> {
        if !valid_id(&session.id) {
            return Err(format!(
                "session id {:?} cannot name a socket (letters, digits, '.', '_' and '-' only)",
                escape::for_terminal(&session.id)
            ));
        }
        private_dir(dir, true)?;
        let socket = dir.join(format!("{}.sock", session.id));
        let binding = dir.join(format!("{}.sock.new", session.id));
        let _ = std::fs::remove_file(&binding);
        let listener = std::os::unix::net::UnixListener::bind(&binding)
            .map_err(|e| format!("cannot listen on {}: {e}", binding.display()))?;
        let ready = (|| {
            std::fs::set_permissions(&binding, std::fs::Permissions::from_mode(0o600))?;
            listener.set_nonblocking(true)?;
            std::fs::rename(&binding, &socket)
        })();
        if let Err(e) = ready {
            let _ = std::fs::remove_file(&binding);
            return Err(format!("cannot set up {}: {e}", socket.display()));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                let _ = std::fs::remove_file(&socket);
                format!("cannot start the approval server: {e}")
            })?;
        let (events, _) = broadcast::channel(BACKLOG);
        let shared = Arc::new(Shared {
            hello: hello_of(session),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            events,
            notice,
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        let server_shared = shared.clone();
        let server = std::thread::Builder::new()
            .name("fence-approvals".into())
            .spawn(move || {
                runtime.block_on(async move {
                    match tokio::net::UnixListener::from_std(listener) {
                        Ok(l) => serve(l, server_shared, shutdown_rx).await,
                        Err(e) => eprintln!("fence: the approval socket failed: {e}"),
                    }
                })
            })
            .map_err(|e| {
                let _ = std::fs::remove_file(&socket);
                format!("cannot start the approval server: {e}")
            })?;
        Ok(SocketApprover {
            shared,
            socket,
            shutdown,
            server: Mutex::new(Some(server)),
        })
    }

    /// The socket's path.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }
}

impl Approver for SocketApprover {
    fn ask(&self, question: &Question, deadline: Instant) -> Answer {
        let shared = &self.shared;
        let question = shown_safely(question);
        let id = question.id;
        let mut st = shared.lock();
        if st.closed {
            return Answer::Unanswered {
                why: "the session is ending".into(),
            };
        }
        let mut tell = false;
        if let std::collections::btree_map::Entry::Vacant(slot) = st.pending.entry(id) {
            shared.broadcast(&ServerMessage::Question(question.clone()));
            slot.insert(Pending {
                question,
                answer: None,
                waiters: 0,
            });
            tell = st.clients == 0 && !st.told;
            st.told |= tell;
        }
        if let Some(p) = st.pending.get_mut(&id) {
            p.waiters += 1;
        }
        if tell {
            // Said without the lock: a stderr that blocks must not stop the clients.
            drop(st);
            shared.notice.say(&format!(
                "fence: a question is waiting: run `fence approvals` to answer it (session {})",
                shared.hello.session
            ));
            st = shared.lock();
        }
        loop {
            let Some(pending) = st.pending.get(&id) else {
                // Cannot happen while we are counted among its waiters; never spin on it.
                return Answer::Unanswered {
                    why: "the question was withdrawn".into(),
                };
            };
            if let Some(answer) = pending.answer.clone() {
                if let Some(p) = st.pending.get_mut(&id) {
                    p.waiters -= 1;
                    if p.waiters == 0 {
                        st.pending.remove(&id);
                    }
                }
                return answer;
            }
            let now = Instant::now();
            if now >= deadline {
                shared.decide(&mut st, id, Answer::TimedOut, "fence (timed out)");
                continue;
            }
            st = shared
                .changed
                .wait_timeout(st, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    fn close(&self) {
        {
            let mut st = self.shared.lock();
            if !st.closed {
                st.closed = true;
                let open: Vec<u64> = st
                    .pending
                    .iter()
                    .filter(|(_, p)| p.answer.is_none())
                    .map(|(id, _)| *id)
                    .collect();
                for id in open {
                    let answer = Answer::Unanswered {
                        why: "the session ended".into(),
                    };
                    self.shared
                        .decide(&mut st, id, answer, "fence (session ended)");
                }
                self.shared.broadcast(&ServerMessage::SessionEnd);
                self.shared.changed.notify_all();
                let _ = std::fs::remove_file(&self.socket);
            }
        }
        let _ = self.shutdown.send(true);
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(server) = server {
            let _ = server.join();
        }
    }

    fn name(&self) -> &'static str {
        "socket"
    }
}

impl Drop for SocketApprover {
    fn drop(&mut self) {
        self.close();
    }
}

/// Session ids name files: letters, digits, `.`, `_`, `-`, not starting with a dot.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn hello_of(session: &SessionInfo) -> ServerHello {
    ServerHello {
        version: PROTOCOL_VERSION,
        session: session.id.clone(),
        fence_pid: session.fence_pid,
        worktree: escape::bytes_for_terminal(session.worktree.as_os_str().as_bytes()),
        command: session
            .command
            .iter()
            .map(|w| escape::if_unsafe(w))
            .collect(),
        started_at_ms: session
            .started_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0),
        ask_timeout_s: session.ask_timeout.as_secs(),
    }
}

/// The question as clients get it: no string in it can act on a terminal, whatever the
/// caller passed.
fn shown_safely(q: &Question) -> Question {
    let mut q = q.clone();
    q.session = escape::if_unsafe(&q.session);
    q.rule = escape::if_unsafe(&q.rule);
    q.description = escape::if_unsafe(&q.description);
    q.subject = escape::if_unsafe(&q.subject);
    q.process = escape::if_unsafe(&q.process);
    if let Some(argv) = &mut q.argv {
        for w in argv.iter_mut() {
            *w = escape::if_unsafe(w);
        }
    }
    if let Some(d) = &mut q.destination {
        d.host = escape::if_unsafe(&d.host);
        d.name = d.name.as_deref().map(escape::if_unsafe);
        d.address = d.address.as_deref().map(escape::if_unsafe);
    }
    q
}

async fn serve(
    listener: tokio::net::UnixListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut connections = tokio::task::JoinSet::new();
    let mut number = 0u64;
    loop {
        tokio::select! {
            _ = shutdown.wait_for(|closed| *closed) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    number += 1;
                    connections.spawn(connection(stream, shared.clone(), number));
                }
                // Out of descriptors and the like: the session goes on; try again soon.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(CLOSE_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
}

/// What a client's reader hands to its connection.
enum Incoming {
    Line(String),
    TooLong,
    Eof,
}

/// Reads newline-terminated lines of at most [`MAX_LINE`] bytes. A last line without its
/// newline (a client that went away mid-message) is dropped: it answers nothing.
async fn read_lines(read: tokio::net::unix::OwnedReadHalf, lines: mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(read);
    loop {
        let mut buf = Vec::new();
        let outcome = loop {
            let room = (MAX_LINE + 1).saturating_sub(buf.len()) as u64;
            match (&mut reader).take(room).read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break Incoming::Eof,
                Ok(_) if buf.ends_with(b"\n") => {
                    buf.pop();
                    break Incoming::Line(String::from_utf8_lossy(&buf).into_owned());
                }
                Ok(_) if buf.len() > MAX_LINE => break Incoming::TooLong,
                Ok(_) => {}
            }
        };
        let last = !matches!(outcome, Incoming::Line(_));
        if lines.send(outcome).await.is_err() || last {
            return;
        }
    }
}

async fn send(write: &mut OwnedWriteHalf, line: &str) -> bool {
    matches!(
        tokio::time::timeout(WRITE_TIMEOUT, write.write_all(line.as_bytes())).await,
        Ok(Ok(()))
    )
}

async fn send_error(write: &mut OwnedWriteHalf, message: String, id: Option<u64>) -> bool {
    send(
        write,
        &protocol::line(&ServerMessage::Error { message, id }),
    )
    .await
}

async fn connection(stream: UnixStream, shared: Arc<Shared>, number: u64) {
    if let Err(why) = peer::check(stream.as_raw_fd(), peer::Role::Client) {
        let (_, mut write) = stream.into_split();
        let _ = send_error(&mut write, format!("refused: {why}"), None).await;
        return;
    }
    let (read, mut write) = stream.into_split();
    let (tx, mut lines) = mpsc::channel(4);
    let reader = tokio::spawn(read_lines(read, tx));
    let _ = serve_client(&mut write, &shared, &mut lines, number).await;
    reader.abort();
    let _ = write.shutdown().await;
}

/// The conversation with one client past the peer check. Returns when it ends.
async fn serve_client(
    write: &mut OwnedWriteHalf,
    shared: &Arc<Shared>,
    lines: &mut mpsc::Receiver<Incoming>,
    number: u64,
) -> Option<()> {
    if !send(
        write,
        &protocol::line(&ServerMessage::Hello(shared.hello.clone())),
    )
    .await
    {
        return None;
    }
    let first = tokio::time::timeout(HELLO_TIMEOUT, lines.recv()).await;
    let client = match first {
        Ok(Some(Incoming::Line(text))) => match protocol::parse_client_hello(&text) {
            Ok(name) => name,
            Err(message) => {
                send_error(write, message, None).await;
                return None;
            }
        },
        Ok(Some(Incoming::TooLong)) => {
            send_error(write, too_long(), None).await;
            return None;
        }
        Ok(Some(Incoming::Eof) | None) => return None,
        Err(_) => {
            send_error(write, "no hello in time".into(), None).await;
            return None;
        }
    };
    let name: String = escape::for_terminal(&client).chars().take(64).collect();
    let by = format!("{name} #{number}");
    let (snapshot, mut events, _guard) = shared.attach();
    let pending = snapshot.len();
    for q in snapshot {
        if !send(write, &protocol::line(&ServerMessage::Question(q))).await {
            return None;
        }
    }
    if !send(write, &protocol::line(&ServerMessage::Synced { pending })).await {
        return None;
    }
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => {
                    if !send(write, &event.line).await || event.end {
                        return Some(());
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    send_error(write, "this client fell too far behind; reconnect".into(), None).await;
                    return None;
                }
                Err(broadcast::error::RecvError::Closed) => return Some(()),
            },
            incoming = lines.recv() => match incoming {
                Some(Incoming::Line(text)) => match serde_json::from_str::<ClientMessage>(&text) {
                    Ok(ClientMessage::Answer { id, answer, reason }) => {
                        let reply = match shared.answer(id, answer, reason, &by) {
                            Ok(()) => ServerMessage::Accepted { id },
                            Err(message) => ServerMessage::Error { message, id: Some(id) },
                        };
                        if !send(write, &protocol::line(&reply)).await {
                            return None;
                        }
                    }
                    Ok(ClientMessage::Hello { .. }) => {
                        send_error(write, "hello sent twice".into(), None).await;
                        return None;
                    }
                    Err(e) => {
                        send_error(write, format!("malformed message: {e}"), None).await;
                        return None;
                    }
                },
                Some(Incoming::TooLong) => {
                    send_error(write, too_long(), None).await;
                    return None;
                }
                Some(Incoming::Eof) | None => return Some(()),
            },
        }
    }
}

fn too_long() -> String {
    format!("message longer than {MAX_LINE} bytes")
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::os::unix::net::UnixStream;

    use serde_json::Value;

    use super::*;
    use crate::gate::EventKind;

    /// How long a test waits for something that should happen at once.
    const SOON: Duration = Duration::from_secs(10);

    struct Fixture {
        _dir: tempfile::TempDir,
        approver: Arc<SocketApprover>,
        notices: Arc<Mutex<Vec<String>>>,
    }

    fn session() -> SessionInfo {
        SessionInfo {
            id: "test-1".into(),
            worktree: PathBuf::from("/work/tree"),
            command: vec!["sh".into(), "-c".into(), "git push origin main".into()],
            fence_pid: std::process::id(),
            started_at: SystemTime::now(),
            ask_timeout: Duration::from_secs(120),
        }
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let notices = Arc::new(Mutex::new(Vec::new()));
        let approver = SocketApprover::start_in(
            &dir.path().join("fence"),
            &session(),
            Notice::Collect(notices.clone()),
        )
        .unwrap();
        Fixture {
            _dir: dir,
            approver: Arc::new(approver),
            notices,
        }
    }

    fn question(id: u64, level: Level) -> Question {
        Question {
            id,
            session: "test-1".into(),
            level,
            rule: "git.push-main".into(),
            description: "pushes to the main branch".into(),
            event: EventKind::Exec,
            subject: "git push origin main".into(),
            argv: Some(vec![
                "git".into(),
                "push".into(),
                "origin".into(),
                "main".into(),
            ]),
            destination: None,
            pid: 4242,
            sandbox_pid: Some(7),
            process: "git".into(),
            always_offered: level == Level::Yellow,
            asked_at_ms: 0,
            deadline_ms: 0,
        }
    }

    /// Asks on a thread of its own, as the gate does.
    fn ask(f: &Fixture, q: Question, timeout: Duration) -> std::thread::JoinHandle<Answer> {
        let approver = f.approver.clone();
        std::thread::spawn(move || approver.ask(&q, Instant::now() + timeout))
    }

    /// A scripted client speaking the protocol line by line.
    struct Client {
        reader: BufReader<UnixStream>,
        writer: UnixStream,
    }

    impl Client {
        fn raw(f: &Fixture) -> Client {
            let stream = UnixStream::connect(f.approver.socket_path()).unwrap();
            stream.set_read_timeout(Some(SOON)).unwrap();
            Client {
                writer: stream.try_clone().unwrap(),
                reader: BufReader::new(stream),
            }
        }

        /// Connected past the handshake and the snapshot; returns the snapshot's questions.
        fn connect(f: &Fixture) -> (Client, Vec<Value>) {
            let mut c = Client::raw(f);
            let hello = c.next();
            assert_eq!(hello["type"], "hello");
            assert_eq!(hello["version"], 1);
            assert_eq!(hello["session"], "test-1");
            c.send(r#"{"type":"hello","version":1,"client":"test"}"#);
            let mut snapshot = Vec::new();
            loop {
                let m = c.next();
                match m["type"].as_str() {
                    Some("question") => snapshot.push(m),
                    Some("synced") => {
                        assert_eq!(m["pending"], snapshot.len());
                        return (c, snapshot);
                    }
                    other => panic!("unexpected {other:?}: {m}"),
                }
            }
        }

        fn send(&mut self, line: &str) {
            self.writer.write_all(line.as_bytes()).unwrap();
            self.writer.write_all(b"\n").unwrap();
        }

        fn answer(&mut self, id: u64, answer: &str) {
            self.send(&format!(
                r#"{{"type":"answer","id":{id},"answer":"{answer}"}}"#
            ));
        }

        fn next(&mut self) -> Value {
            let mut line = String::new();
            let n = self.reader.read_line(&mut line).expect("a message in time");
            assert!(n > 0, "the connection closed");
            serde_json::from_str(&line).unwrap()
        }

        /// The next message of type `ty`, skipping others.
        fn next_of(&mut self, ty: &str) -> Value {
            loop {
                let m = self.next();
                if m["type"] == ty {
                    return m;
                }
            }
        }

        /// Whether the server closed the connection (EOF within the timeout).
        fn closed(&mut self) -> bool {
            let mut rest = Vec::new();
            match self.reader.read_to_end(&mut rest) {
                Ok(_) => true,
                // Closed with bytes of ours unread.
                Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            }
        }
    }

    fn wait_pending(f: &Fixture, n: usize) {
        let deadline = Instant::now() + SOON;
        while f.approver.shared.lock().pending.len() != n {
            assert!(Instant::now() < deadline, "never {n} pending");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn yes_is_taken_and_acknowledged() {
        let f = fixture();
        let (mut c, snapshot) = Client::connect(&f);
        assert!(snapshot.is_empty());
        let asked = ask(&f, question(1, Level::Red), SOON);
        let q = c.next_of("question");
        assert_eq!(q["id"], 1);
        assert_eq!(q["rule"], "git.push-main");
        assert_eq!(q["level"], "red");
        assert_eq!(q["subject"], "git push origin main");
        c.answer(1, "yes");
        assert_eq!(c.next_of("accepted")["id"], 1);
        let resolved = c.next_of("resolved");
        assert_eq!(resolved["answer"], "yes");
        assert_eq!(resolved["by"], "test #1");
        assert_eq!(asked.join().unwrap(), Answer::Yes);
        wait_pending(&f, 0);
    }

    #[test]
    fn always_is_taken_for_yellow_and_refused_for_red() {
        let f = fixture();
        let (mut c, _) = Client::connect(&f);
        let red = ask(&f, question(1, Level::Red), SOON);
        c.next_of("question");
        c.answer(1, "always");
        let err = c.next_of("error");
        assert_eq!(err["id"], 1);
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("a red question never offers Always"),
            "{err}"
        );
        // Still pending: a second client sees it.
        let (_, snapshot) = Client::connect(&f);
        assert_eq!(snapshot.len(), 1);
        assert!(!red.is_finished());
        c.answer(1, "no");
        assert_eq!(red.join().unwrap(), Answer::No { reason: None });

        let yellow = ask(&f, question(2, Level::Yellow), SOON);
        assert_eq!(c.next_of("question")["always_offered"], true);
        c.answer(2, "always");
        c.next_of("accepted");
        assert_eq!(yellow.join().unwrap(), Answer::Always);
    }

    #[test]
    fn no_carries_its_reason_to_the_gate_and_the_other_clients() {
        let f = fixture();
        let (mut a, _) = Client::connect(&f);
        let (mut b, _) = Client::connect(&f);
        let asked = ask(&f, question(5, Level::Yellow), SOON);
        a.next_of("question");
        b.next_of("question");
        a.send(
            r#"{"type":"answer","id":5,"answer":"no","reason":"push to a branch instead\u001b[2J"}"#,
        );
        assert_eq!(
            asked.join().unwrap(),
            Answer::No {
                reason: Some("push to a branch instead\\x1b[2J".into())
            }
        );
        let seen = b.next_of("resolved");
        assert_eq!(seen["answer"], "no");
        assert_eq!(seen["reason"], "push to a branch instead\\x1b[2J");
        assert_eq!(seen["by"], "test #1");
    }

    #[test]
    fn unanswered_question_times_out_and_late_answers_are_refused() {
        let f = fixture();
        let (mut c, _) = Client::connect(&f);
        let started = Instant::now();
        let asked = ask(&f, question(3, Level::Yellow), Duration::from_millis(300));
        c.next_of("question");
        assert_eq!(asked.join().unwrap(), Answer::TimedOut);
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        assert!(waited < Duration::from_secs(3), "{waited:?}");
        assert_eq!(c.next_of("resolved")["answer"], "timeout");
        c.answer(3, "yes");
        let err = c.next_of("error");
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("already answered"),
            "{err}"
        );
    }

    #[test]
    fn racing_clients_first_answer_wins() {
        let f = fixture();
        let (mut a, _) = Client::connect(&f);
        let (mut b, _) = Client::connect(&f);
        let asked = ask(&f, question(9, Level::Yellow), SOON);
        a.next_of("question");
        b.next_of("question");
        a.answer(9, "yes");
        b.answer(9, "no");
        let answer = asked.join().unwrap();
        // Exactly one was accepted, the other was told the question was answered, and
        // both learn the outcome (their card goes).
        let verdict = |c: &mut Client| {
            let (mut won, mut resolved) = (None, false);
            while won.is_none() || !resolved {
                let m = c.next();
                match m["type"].as_str() {
                    Some("accepted") => won = Some(true),
                    Some("error") => {
                        let message = m["message"].as_str().unwrap();
                        assert!(message.contains("already answered"), "{m}");
                        won = Some(false);
                    }
                    Some("resolved") => {
                        assert_eq!(m["id"], 9);
                        resolved = true;
                    }
                    _ => {}
                }
            }
            won == Some(true)
        };
        let (a_won, b_won) = (verdict(&mut a), verdict(&mut b));
        assert!(a_won != b_won, "a {a_won}, b {b_won}");
        let expected = if a_won {
            Answer::Yes
        } else {
            Answer::No { reason: None }
        };
        assert_eq!(answer, expected);
    }

    /// A call re-issued after a signal asks again with the same id: it attaches to the
    /// pending question (one card, one answer for both).
    #[test]
    fn the_same_question_asked_twice_is_one_card() {
        let f = fixture();
        let (mut c, _) = Client::connect(&f);
        let first = ask(&f, question(12, Level::Yellow), SOON);
        c.next_of("question");
        let again = ask(&f, question(12, Level::Yellow), SOON);
        let deadline = Instant::now() + SOON;
        while f.approver.shared.lock().pending.get(&12).map(|p| p.waiters) != Some(2) {
            assert!(Instant::now() < deadline, "the second ask never attached");
            std::thread::sleep(Duration::from_millis(5));
        }
        let (_, snapshot) = Client::connect(&f);
        assert_eq!(snapshot.len(), 1);
        c.answer(12, "yes");
        assert_eq!(first.join().unwrap(), Answer::Yes);
        assert_eq!(again.join().unwrap(), Answer::Yes);
        // One card was shown: no second question reached the client.
        loop {
            let m = c.next();
            assert_ne!(m["type"], "question", "{m}");
            if m["type"] == "resolved" {
                assert_eq!(m["id"], 12);
                break;
            }
        }
        wait_pending(&f, 0);
    }

    #[test]
    fn a_client_gone_mid_answer_answers_nothing() {
        let f = fixture();
        let asked = ask(&f, question(4, Level::Red), SOON);
        wait_pending(&f, 1);
        {
            let (mut c, snapshot) = Client::connect(&f);
            assert_eq!(snapshot.len(), 1);
            c.writer
                .write_all(br#"{"type":"answer","id":4,"answer":"yes"}"#)
                .unwrap();
            // Gone before the newline.
        }
        std::thread::sleep(Duration::from_millis(200));
        assert!(!asked.is_finished());
        let (mut c, snapshot) = Client::connect(&f);
        assert_eq!(snapshot.len(), 1, "the question is still pending");
        c.answer(4, "no");
        assert_eq!(asked.join().unwrap(), Answer::No { reason: None });
    }

    #[test]
    fn closing_the_session_denies_what_is_pending() {
        let f = fixture();
        let (mut c, _) = Client::connect(&f);
        let asked = ask(&f, question(6, Level::Yellow), SOON);
        c.next_of("question");
        let socket = f.approver.socket_path().to_path_buf();
        assert!(socket.exists());
        f.approver.close();
        assert!(matches!(asked.join().unwrap(), Answer::Unanswered { .. }));
        assert_eq!(c.next_of("resolved")["answer"], "none");
        c.next_of("session_end");
        assert!(c.closed());
        assert!(!socket.exists(), "the socket is removed at the end");
        let later = f
            .approver
            .ask(&question(7, Level::Yellow), Instant::now() + SOON);
        assert!(matches!(later, Answer::Unanswered { .. }));
    }

    /// Malformed, oversized and wrong-version messages close that connection with an
    /// error; the session goes on and answers the next client.
    #[test]
    fn bad_messages_close_the_connection_not_the_session() {
        let f = fixture();
        let asked = ask(&f, question(8, Level::Yellow), SOON);
        wait_pending(&f, 1);

        let mut c = Client::raw(&f);
        c.next_of("hello");
        c.send(r#"{"type":"hello","version":2,"client":"future"}"#);
        let err = c.next_of("error");
        assert_eq!(
            err["message"],
            "unsupported protocol version 2 (this fence speaks 1)"
        );
        assert!(c.closed());

        let (mut c, _) = Client::connect(&f);
        c.send("this is not json");
        let err = c.next_of("error");
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .starts_with("malformed message"),
            "{err}"
        );
        assert!(c.closed());

        let (mut c, _) = Client::connect(&f);
        c.send(r#"{"type":"answer","id":8,"answer":"perhaps"}"#);
        assert!(
            c.next_of("error")["message"]
                .as_str()
                .unwrap()
                .starts_with("malformed")
        );
        assert!(c.closed());

        let (mut c, _) = Client::connect(&f);
        let huge = format!(
            r#"{{"type":"answer","id":8,"answer":"yes","reason":"{}"}}"#,
            "x".repeat(100 * 1024)
        );
        // The server may close before reading all of it.
        let _ = c.writer.write_all(huge.as_bytes());
        let err = c.next_of("error");
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("longer than 65536"),
            "{err}"
        );
        assert!(c.closed());

        assert!(!asked.is_finished());
        let (mut c, snapshot) = Client::connect(&f);
        assert_eq!(snapshot.len(), 1);
        c.answer(8, "yes");
        assert_eq!(asked.join().unwrap(), Answer::Yes);
    }

    #[test]
    fn control_characters_and_bidi_marks_reach_clients_escaped() {
        let f = fixture();
        let (mut c, _) = Client::connect(&f);
        let mut q = question(10, Level::Yellow);
        q.subject = "echo \x1b[2J\u{202e}gnp.exe".into();
        q.argv = Some(vec!["echo".into(), "\x1b[2J\u{202e}gnp.exe".into()]);
        q.process = "ba\rsh".into();
        let asked = ask(&f, q, SOON);
        let mut line = String::new();
        // The raw line: nothing a terminal acts on, not even JSON-escaped.
        loop {
            line.clear();
            c.reader.read_line(&mut line).unwrap();
            if line.contains("\"question\"") {
                break;
            }
        }
        assert!(
            !line.contains("\\u001b") && !line.contains('\x1b'),
            "{line}"
        );
        assert!(
            !line.contains('\u{202e}') && !line.contains("\\u202e"),
            "{line}"
        );
        let m: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(m["subject"], "echo \\x1b[2J\\u{202e}gnp.exe");
        assert_eq!(m["argv"][1], "\\x1b[2J\\u{202e}gnp.exe");
        assert_eq!(m["process"], "ba\\rsh");
        c.answer(10, "no");
        asked.join().unwrap();
    }

    #[test]
    fn nobody_connected_is_said_once_until_a_client_comes() {
        let f = fixture();
        let first = ask(&f, question(1, Level::Yellow), SOON);
        let second = ask(&f, question(2, Level::Yellow), SOON);
        wait_pending(&f, 2);
        {
            let notices = f.notices.lock().unwrap();
            assert_eq!(notices.len(), 1, "{notices:?}");
            assert!(notices[0].contains("run `fence approvals`"), "{notices:?}");
            assert!(notices[0].contains("test-1"), "{notices:?}");
        }
        let (mut c, snapshot) = Client::connect(&f);
        assert_eq!(snapshot.len(), 2);
        c.answer(1, "yes");
        c.answer(2, "yes");
        first.join().unwrap();
        second.join().unwrap();
        assert_eq!(f.notices.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_stale_socket_is_recognised_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone.sock");
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert!(matches!(
            super::super::client::connect(&path, "t", SOON),
            Err(super::super::client::ConnectError::Stale)
        ));
        assert!(!path.exists());
    }

    #[test]
    fn the_socket_directory_must_be_ours_alone() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("fence");
        private_dir(&good, true).unwrap();
        let meta = std::fs::symlink_metadata(&good).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);

        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = private_dir(&open, true).unwrap_err();
        assert!(err.contains("its mode is 0755, not 0700"), "{err}");

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        let err = private_dir(&link, true).unwrap_err();
        assert!(err.contains("it is a symlink"), "{err}");

        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let theirs = dir.path().join("theirs");
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&theirs)
                .unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
            let err = private_dir(&theirs, true).unwrap_err();
            assert!(err.contains("owned by uid 65534"), "{err}");
        }
        let socket_mode = {
            let f = fixture();
            std::fs::symlink_metadata(f.approver.socket_path())
                .unwrap()
                .mode()
                & 0o777
        };
        assert_eq!(socket_mode, 0o600);
    }

    #[test]
    fn session_ids_that_are_no_file_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["", "../x", ".hidden", "a/b", "a b"] {
            let mut s = session();
            s.id = id.into();
            let notice = Notice::Collect(Arc::default());
            assert!(
                SocketApprover::start_in(dir.path(), &s, notice).is_err(),
                "{id:?}"
            );
        }
    }

    /// A program in a `fence run` sandbox tries to connect to this session's socket and
    /// answer Yes: without a way to the socket the connect is refused; with another name
    /// of it opened with `--allow-unix` fence performs the connect and the peer check
    /// refuses it. Either way the question stays pending, as seen from outside.
    #[test]
    fn a_sandboxed_process_cannot_answer() {
        if !crate::gate::test_support::sandbox_available("a_sandboxed_process_cannot_answer") {
            return;
        }
        let fence = crate::gate::test_support::built_fence();
        let f = fixture();
        let asked = ask(&f, question(11, Level::Red), Duration::from_secs(60));
        wait_pending(&f, 1);
        let socket = f.approver.socket_path().to_path_buf();
        let worktree = tempfile::tempdir().unwrap();
        let script = r#"
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect failed:", e)
    sys.exit(3)
s.settimeout(5)
f = s.makefile("rw")
print("got:", f.readline().strip())
f.write(json.dumps({"type": "hello", "version": 1, "client": "inside"}) + "\n")
f.write(json.dumps({"type": "answer", "id": 11, "answer": "yes"}) + "\n")
f.flush()
try:
    for line in f:
        print("got:", line.strip())
except OSError as e:
    print("read failed:", e)
"#;
        // First from a worktree elsewhere (the socket is out of reach), then through another
        // name of the socket opened with --allow-unix (a hard link beside its folder: the
        // folder itself may not be opened so), so the connect is made and the peer check
        // answers.
        let socket_dir = socket.parent().unwrap();
        let beside = tempfile::tempdir_in(socket_dir.parent().unwrap()).unwrap();
        let alias = beside.path().join("alias.sock");
        std::fs::hard_link(&socket, &alias).unwrap();
        for extra in [vec![], vec![alias.display().to_string()]] {
            let mut run = std::process::Command::new(&fence);
            run.arg("run").arg("--worktree").arg(worktree.path());
            if let Some(a) = extra.first() {
                run.args(["--allow-unix", a.as_str()]);
            }
            let out = run
                .args(["--", "/usr/bin/python3", "-c", script])
                .arg(extra.first().map_or(socket.as_path(), Path::new))
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let report = format!("{extra:?}: status {:?}\n{stdout}\n{stderr}", out.status);
            if extra.is_empty() {
                assert_eq!(out.status.code(), Some(3), "{report}");
            } else {
                assert!(stdout.contains("refused: peer process"), "{report}");
                assert!(!stdout.contains("accepted"), "{report}");
            }
            // From outside: still pending, and its card is still offered.
            assert!(!asked.is_finished(), "{report}");
            let (_, snapshot) = Client::connect(&f);
            assert_eq!(snapshot.len(), 1, "{report}");
        }
        let (mut c, _) = Client::connect(&f);
        c.answer(11, "no");
        assert_eq!(asked.join().unwrap(), Answer::No { reason: None });
    }
}

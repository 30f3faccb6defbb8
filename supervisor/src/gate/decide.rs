//! The session's gate: puts a question to the approver, enforces the deadline, keeps the
//! Always set and the table of pending questions, and writes each outcome to the transcript
//! and the audit log.
//!
//! Always (SPEC §2): in memory only, this session only, the exact event — the exact argv of
//! an exec, the exact path of a write, the exact `host:port` of a connection — and never
//! for red. A call re-issued after a signal (same thread, same call, same arguments, same
//! object) attaches to the question already pending instead of opening a second one.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::log::{self, AuditLog};
use super::transcript::{Outcome, Transcript};
use super::{
    Answer, Approver, Destination, EventKind, Level, Question, Route, SessionInfo, epoch_ms,
};
use crate::escape::{bytes_for_terminal, for_terminal};

/// The asking process as fence sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Process id (thread group) in fence's pid namespace.
    pub pid: i32,
    /// The same process in the sandbox's pid namespace, when it has one.
    pub sandbox_pid: Option<i32>,
    /// `comm`, raw.
    pub name: String,
}

/// The object of an event, raw as the sandbox gave it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    Argv(Vec<Vec<u8>>),
    Path(Vec<u8>),
    Addr(String),
}

impl Subject {
    /// Escaped and whole, for a person: argv words joined by spaces (a word holding a
    /// space, a quote or nothing is single-quoted), a path or an address.
    pub fn shown(&self) -> String {
        match self {
            Subject::Argv(argv) => argv
                .iter()
                .map(|a| {
                    let w = bytes_for_terminal(a);
                    if w.is_empty() || w.contains([' ', '\'', '"']) {
                        format!("'{}'", w.replace('\'', "'\\''"))
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            Subject::Path(p) => bytes_for_terminal(p),
            Subject::Addr(a) => for_terminal(a),
        }
    }

    /// The log's `argv`, `path` or `addr` field, and whether any byte had to be escaped.
    fn log_field(&self) -> (&'static str, Value, bool) {
        match self {
            Subject::Argv(argv) => {
                let mut lossy = false;
                let words = argv
                    .iter()
                    .map(|a| {
                        let (t, l) = log::text(a);
                        lossy |= l;
                        Value::String(t)
                    })
                    .collect();
                ("argv", Value::Array(words), lossy)
            }
            Subject::Path(p) => {
                let (t, l) = log::text(p);
                ("path", Value::String(t), l)
            }
            Subject::Addr(a) => ("addr", Value::String(a.clone()), false),
        }
    }
}

/// The notified call a question is about: a re-issue of it is the same thread making the
/// same call with the same registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallKey {
    pub tid: i32,
    pub nr: i64,
    pub args: [u64; 6],
}

/// What is asked.
#[derive(Debug, Clone)]
pub struct Request {
    pub event: EventKind,
    pub level: Level,
    /// Rule id and its description.
    pub rule: String,
    pub description: String,
    /// Why the policy asks (the log's `rule_reason`).
    pub why: String,
    pub subject: Subject,
    /// For a connection: where to (escaped when it is put to a person).
    pub destination: Option<Destination>,
    pub process: ProcessInfo,
    pub call: CallKey,
    /// When the notification arrived (for `latency_us`).
    pub received: Instant,
}

impl Request {
    /// The text a person reads: `git push origin feature` for an exec, the description
    /// and the object for anything else (`write outside the worktree: /tmp/x`).
    pub fn shown(&self) -> String {
        match self.event {
            EventKind::Exec => self.subject.shown(),
            _ => format!("{}: {}", self.description, self.subject.shown()),
        }
    }
}

/// A decision made without a question (allowed, or refused outright), for the log.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    pub event: EventKind,
    pub subject: &'a Subject,
    pub process: Option<&'a ProcessInfo>,
    /// `green`, `yellow` or `red`.
    pub level: &'static str,
    /// `allow` or `deny`.
    pub action: &'static str,
    pub rule: &'a str,
    pub reason: &'a str,
    /// The calling thread (a refusal repeated by it at once is not shown again).
    pub tid: i32,
    pub received: Instant,
}

/// What an Always covers: the event, the exact subject and, for a connection, the route.
/// Security boundary: an Always for `host:port` through the proxy (whose checks — name
/// resolution, internal addresses, TLS name — still apply) never approves the sandbox's
/// own raw socket to that address, nor the other way round.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct AlwaysKey {
    event: EventKind,
    subject: Subject,
    route: Option<Route>,
}

/// Most questions pending at once; more are denied at once (each waits on a thread, and a
/// sandbox must not be able to exhaust the supervisor's threads by asking).
pub const MAX_PENDING: usize = 128;

/// How long a refusal stays fresh for the thread that got it: a shell searching `PATH`
/// execs the same argv under each directory's name, and a person is asked once.
const REPEAT_WINDOW: Duration = Duration::from_secs(2);

/// Most refusals remembered at once for [`REPEAT_WINDOW`].
const RECENT_MAX: usize = 1024;

/// A refusal just given to one thread about one object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RecentKey {
    tid: i32,
    event: EventKind,
    subject: Subject,
}

impl RecentKey {
    /// A change of a file's content and of its metadata count as one: `touch` of a file
    /// outside tries `open(O_CREAT)`, then, refused, `utimensat` on the same path, and the
    /// person who said No to the first is not asked the second.
    fn new(tid: i32, event: EventKind, subject: Subject) -> RecentKey {
        let event = match event {
            EventKind::Metadata => EventKind::Write,
            e => e,
        };
        RecentKey {
            tid,
            event,
            subject,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PendingKey {
    call: CallKey,
    subject: Subject,
}

/// One pending question, which re-issued calls wait on.
#[derive(Default)]
struct Slot {
    answer: Mutex<Option<Answer>>,
    filled: Condvar,
}

impl Slot {
    fn fill(&self, answer: Answer) {
        *self.answer.lock().unwrap_or_else(|e| e.into_inner()) = Some(answer);
        self.filled.notify_all();
    }

    fn wait(&self, until: Instant) -> Answer {
        let mut guard = self.answer.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(a) = guard.as_ref() {
                return a.clone();
            }
            let now = Instant::now();
            if now >= until {
                return Answer::TimedOut;
            }
            guard = self
                .filled
                .wait_timeout(guard, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// The session's gate.
pub struct Gate {
    session: SessionInfo,
    mode: policy::Mode,
    approver: Arc<dyn Approver>,
    transcript: Transcript,
    log: Option<AuditLog>,
    always: Mutex<HashSet<AlwaysKey>>,
    pending: Mutex<HashMap<PendingKey, Arc<Slot>>>,
    /// Recent refusals: of questions (with their answer) and of blocked events.
    recent: Mutex<HashMap<RecentKey, (Option<Answer>, Instant)>>,
    next_id: AtomicU64,
    closed: AtomicBool,
    /// fence's terminal hung up: no question is put to anyone any more.
    hung_up: AtomicBool,
    /// The notices shown in this session ([`Gate::notice_once`]).
    noticed: Mutex<HashSet<String>>,
}

impl Gate {
    pub fn new(
        session: SessionInfo,
        mode: policy::Mode,
        approver: Arc<dyn Approver>,
        transcript: Transcript,
        log: Option<AuditLog>,
    ) -> Gate {
        Gate {
            session,
            mode,
            approver,
            transcript,
            log,
            always: Mutex::new(HashSet::new()),
            noticed: Mutex::new(HashSet::new()),
            pending: Mutex::new(HashMap::new()),
            recent: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            hung_up: AtomicBool::new(false),
        }
    }

    /// Whether decisions are logged (callers skip gathering log-only details otherwise).
    pub fn logging(&self) -> bool {
        self.log.is_some()
    }

    /// Whether a question is answered at once (nobody to ask, the session ending, too many
    /// questions pending): no thread is needed.
    pub fn answers_at_once(&self) -> bool {
        self.approver.answers_at_once() || self.closed.load(Ordering::Relaxed) || self.saturated()
    }

    fn saturated(&self) -> bool {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).len() >= MAX_PENDING
    }

    /// The session-start line of the audit log.
    pub fn log_session_start(
        &self,
        landlock_abi: i32,
        degraded: &[String],
        profile: Option<&str>,
        env_removed: &[String],
    ) {
        let Some(log) = &self.log else { return };
        let mut m = Map::new();
        m.insert("session".into(), self.session.id.clone().into());
        m.insert("event".into(), "session-start".into());
        m.insert("fence_pid".into(), self.session.fence_pid.into());
        m.insert(
            "worktree".into(),
            log::text(self.session.worktree.as_os_str().as_encoded_bytes())
                .0
                .into(),
        );
        m.insert("command".into(), self.session.command.clone().into());
        m.insert("mode".into(), self.mode.as_str().into());
        m.insert("approver".into(), self.approver.name().into());
        m.insert(
            "ask_timeout_s".into(),
            self.session.ask_timeout.as_secs().into(),
        );
        m.insert("landlock_abi".into(), landlock_abi.into());
        m.insert("degraded".into(), degraded.to_vec().into());
        m.insert("profile".into(), profile.into());
        m.insert("env_removed".into(), env_removed.to_vec().into());
        log.write(m);
    }

    /// Asks about `req`, waiting at most the session's ask timeout.
    pub fn ask(&self, req: &Request) -> Answer {
        self.ask_until(req, Instant::now() + self.session.ask_timeout)
    }

    /// Asks about `req`; nothing but Yes or Always given before `deadline` allows it.
    pub fn ask_until(&self, req: &Request, deadline: Instant) -> Answer {
        let always_key = AlwaysKey {
            event: req.event,
            subject: req.subject.clone(),
            route: req.destination.as_ref().map(|d| d.route),
        };
        if req.level == Level::Yellow
            && self
                .always
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&always_key)
        {
            let answer = Answer::Always;
            self.finish(req, None, &answer, true);
            return answer;
        }
        let recent_key = RecentKey::new(req.call.tid, req.event, req.subject.clone());
        if let Some(Some(answer)) = self.recent_refusal(&recent_key) {
            // The same thread asking again about the same thing right after a No (a shell
            // trying the next `PATH` entry): the same answer, logged, no second card.
            self.finish(req, None, &answer, true);
            return answer;
        }
        let key = PendingKey {
            call: req.call,
            subject: req.subject.clone(),
        };
        let (slot, asker) = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            match pending.get(&key) {
                Some(s) => (s.clone(), false),
                None if pending.len() >= MAX_PENDING => {
                    drop(pending);
                    let answer = Answer::Unanswered {
                        why: format!("more than {MAX_PENDING} questions pending"),
                    };
                    self.finish(req, None, &answer, false);
                    return answer;
                }
                None => {
                    let s = Arc::new(Slot::default());
                    pending.insert(key.clone(), s.clone());
                    (s, true)
                }
            }
        };
        if !asker {
            // The same call again (interrupted and restarted): it gets the answer of the
            // question already pending, and nobody is asked twice.
            return slot.wait(deadline + Duration::from_secs(1));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let answer = self.put(req, id, deadline);
        if matches!(answer, Answer::Always) && req.level == Level::Yellow {
            self.always
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(always_key);
        }
        if !answer.allows() {
            self.remember_refusal(recent_key, Some(answer.clone()));
        }
        slot.fill(answer.clone());
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        self.finish(req, Some(id), &answer, false);
        answer
    }

    fn recent_refusal(&self, key: &RecentKey) -> Option<Option<Answer>> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent
            .get(key)
            .filter(|(_, at)| at.elapsed() < REPEAT_WINDOW)
            .map(|(a, _)| a.clone())
    }

    fn remember_refusal(&self, key: RecentKey, answer: Option<Answer>) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if recent.len() > 256 {
            recent.retain(|_, (_, at)| at.elapsed() < REPEAT_WINDOW);
            // A sandbox refused thousands of times a second (each path up to 4 kB) would
            // keep them all for the window: forgotten at once instead. Forgetting only
            // lets a line be shown or a question put again; it allows nothing.
            if recent.len() > RECENT_MAX {
                recent.clear();
            }
        }
        recent.insert(key, (answer, Instant::now()));
    }

    /// Puts the question to the approver on a thread of its own, so that an approver that
    /// does not return in time cannot hold the caller past the deadline.
    fn put(&self, req: &Request, id: u64, deadline: Instant) -> Answer {
        if self.hung_up.load(Ordering::Relaxed) {
            return Answer::Unanswered {
                why: "fence's terminal hung up".into(),
            };
        }
        if self.closed.load(Ordering::Relaxed) {
            return Answer::Unanswered {
                why: "the session is ending".into(),
            };
        }
        let question = Question {
            id,
            session: self.session.id.clone(),
            level: req.level,
            rule: req.rule.clone(),
            description: req.description.clone(),
            event: req.event,
            subject: req.shown(),
            argv: match &req.subject {
                Subject::Argv(a) => Some(a.iter().map(|w| bytes_for_terminal(w)).collect()),
                _ => None,
            },
            destination: req.destination.as_ref().map(|d| Destination {
                host: for_terminal(&d.host),
                port: d.port,
                name: d.name.as_deref().map(for_terminal),
                address: d.address.as_deref().map(for_terminal),
                route: d.route,
            }),
            pid: req.process.pid,
            sandbox_pid: req.process.sandbox_pid,
            process: for_terminal(&req.process.name),
            always_offered: req.level == Level::Yellow,
            asked_at_ms: epoch_ms(Instant::now()),
            deadline_ms: epoch_ms(deadline),
        };
        let answer = if self.approver.answers_at_once() {
            self.approver.ask(&question, deadline)
        } else {
            let (tx, rx) = mpsc::sync_channel(1);
            let approver = self.approver.clone();
            let spawned = std::thread::Builder::new()
                .name("fence-question".into())
                .spawn(move || {
                    let _ = tx.send(approver.ask(&question, deadline));
                });
            if let Err(e) = spawned {
                return Answer::Unanswered {
                    why: format!("cannot start the question's thread: {e}"),
                };
            }
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(a) => a,
                Err(RecvTimeoutError::Timeout) => Answer::TimedOut,
                Err(RecvTimeoutError::Disconnected) => Answer::Unanswered {
                    why: "the approver failed".into(),
                },
            }
        };
        // A Yes that arrives after the deadline is a timeout (fail closed).
        if answer.allows() && Instant::now() > deadline {
            return Answer::TimedOut;
        }
        answer
    }

    /// Writes the outcome of a question to the transcript and the log.
    fn finish(&self, req: &Request, id: Option<u64>, answer: &Answer, quiet: bool) {
        let shown = req.shown();
        let outcome = match answer {
            Answer::Yes | Answer::Always => Outcome::Approved,
            Answer::No { reason } => Outcome::Denied {
                reason: reason.as_deref(),
            },
            Answer::TimedOut => Outcome::TimedOut,
            Answer::Unanswered { why } => Outcome::Unanswered { why: why.as_str() },
        };
        let line = Transcript::line(&shown, &outcome);
        // An event Always already covers runs without a card; it is not news to a person.
        if !quiet {
            self.transcript.show(&line);
        }
        let Some(log) = &self.log else { return };
        let mut m = self.common_fields(req.event, &req.subject, Some(&req.process));
        m.insert(
            "level".into(),
            match req.level {
                Level::Yellow => "yellow",
                Level::Red => "red",
            }
            .into(),
        );
        m.insert("action".into(), "ask".into());
        m.insert("rule".into(), req.rule.clone().into());
        let reason = match answer {
            Answer::No { reason: Some(r) } => r.clone(),
            Answer::Unanswered { why } => why.clone(),
            _ => req.why.clone(),
        };
        m.insert("reason".into(), reason.into());
        m.insert("rule_reason".into(), req.why.clone().into());
        m.insert("answer".into(), answer.log_word().into());
        if let Some(d) = &req.destination {
            m.insert(
                "route".into(),
                serde_json::to_value(d.route).unwrap_or(Value::Null),
            );
            if let Some(name) = &d.name {
                m.insert("name".into(), name.clone().into());
            }
            if let Some(address) = &d.address {
                m.insert("address".into(), address.clone().into());
            }
        }
        if let Some(id) = id {
            m.insert("question".into(), id.into());
        }
        m.insert("latency_us".into(), micros(req.received).into());
        m.insert("transcript".into(), line.into());
        log.write(m);
    }

    /// Shows `line` on fence's transcript the first time `key` comes in this session: a
    /// note on what the sandbox lacks, not a decision (nothing is refused by it).
    pub fn notice_once(&self, key: &str, line: &str) {
        let first = self
            .noticed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string());
        if first {
            self.transcript.show(line);
        }
    }

    /// Logs a decision made without a question; a refusal also gets a `Blocked:` line.
    pub fn record(&self, r: &Record<'_>) {
        self.record_with(r, Map::new());
    }

    /// As [`Gate::record`], with more fields for the log line (a proxied connection's
    /// route and bytes).
    pub fn record_with(&self, r: &Record<'_>, extra: Map<String, Value>) {
        let line = (r.action == "deny").then(|| {
            let shown = match r.event {
                EventKind::Exec => r.subject.shown(),
                _ => format!("{}: {}", r.reason, r.subject.shown()),
            };
            Transcript::line(&shown, &Outcome::Blocked { rule: r.rule })
        });
        if let Some(line) = &line {
            let key = RecentKey::new(r.tid, r.event, r.subject.clone());
            if self.recent_refusal(&key).is_none() {
                self.transcript.show(line);
            }
            self.remember_refusal(key, None);
        }
        let Some(log) = &self.log else { return };
        let mut m = self.common_fields(r.event, r.subject, r.process);
        m.insert("level".into(), r.level.into());
        m.insert("action".into(), r.action.into());
        m.insert("rule".into(), r.rule.into());
        m.insert("reason".into(), r.reason.into());
        m.insert("answer".into(), "none".into());
        m.insert("latency_us".into(), micros(r.received).into());
        if let Some(line) = line {
            m.insert("transcript".into(), line.into());
        }
        m.extend(extra);
        log.write(m);
    }

    fn common_fields(
        &self,
        event: EventKind,
        subject: &Subject,
        process: Option<&ProcessInfo>,
    ) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session".into(), self.session.id.clone().into());
        if let Some(p) = process {
            m.insert("pid".into(), p.pid.into());
            m.insert(
                "sandbox_pid".into(),
                p.sandbox_pid.map_or(Value::Null, Value::from),
            );
            if !p.name.is_empty() {
                m.insert("process".into(), log::text(p.name.as_bytes()).0.into());
            }
        }
        m.insert(
            "event".into(),
            serde_json::to_value(event).unwrap_or(Value::Null),
        );
        let (name, value, lossy) = subject.log_field();
        m.insert(name.into(), value);
        if lossy {
            m.insert("lossy".into(), true.into());
        }
        m
    }

    /// fence's terminal hung up (the kernel's SIGHUP: a closed terminal window, a dropped
    /// SSH connection): whoever started the session is gone, so pending questions are
    /// denied and later ones are not asked (fail closed, and no sandbox kept waiting for
    /// an answer until the ask timeout). The session itself goes on to its end.
    pub fn terminal_hung_up(&self) {
        if self.hung_up.swap(true, Ordering::Relaxed) {
            return;
        }
        self.approver.close();
    }

    /// The session ends: pending and later questions are denied, the log is written out.
    pub fn close(&self, exit_status: Option<i32>) {
        if self.closed.swap(true, Ordering::Relaxed) {
            return;
        }
        self.approver.close();
        self.transcript.close();
        if let Some(log) = &self.log {
            let mut m = Map::new();
            m.insert("session".into(), self.session.id.clone().into());
            m.insert("event".into(), "session-end".into());
            m.insert(
                "exit_status".into(),
                exit_status.map_or(Value::Null, Value::from),
            );
            log.write(m);
            log.close();
        }
    }
}

fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::transcript::TranscriptTarget;
    use std::sync::atomic::AtomicUsize;

    /// An approver that answers from a list and counts the questions it was asked.
    struct Fake {
        answers: Mutex<Vec<Answer>>,
        asked: AtomicUsize,
        delay: Duration,
    }

    impl Fake {
        fn new(answers: Vec<Answer>, delay: Duration) -> Arc<Fake> {
            Arc::new(Fake {
                answers: Mutex::new(answers),
                asked: AtomicUsize::new(0),
                delay,
            })
        }
    }

    impl Approver for Fake {
        fn ask(&self, _q: &Question, deadline: Instant) -> Answer {
            self.asked.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(
                self.delay
                    .min(deadline.saturating_duration_since(Instant::now())),
            );
            if Instant::now() >= deadline {
                return Answer::TimedOut;
            }
            let mut a = self.answers.lock().unwrap();
            if a.is_empty() {
                Answer::No { reason: None }
            } else {
                a.remove(0)
            }
        }
        fn close(&self) {}
        fn name(&self) -> &'static str {
            "fake"
        }
    }

    fn gate(approver: Arc<dyn Approver>) -> Gate {
        Gate::new(
            SessionInfo {
                id: "test".into(),
                worktree: "/w".into(),
                command: vec!["make".into()],
                fence_pid: 1,
                started_at: std::time::SystemTime::UNIX_EPOCH,
                ask_timeout: Duration::from_secs(120),
            },
            policy::Mode::Default,
            approver,
            Transcript::new(TranscriptTarget::LogOnly),
            None,
        )
    }

    fn exec(argv: &[&str], level: Level, tid: i32) -> Request {
        Request {
            event: EventKind::Exec,
            level,
            rule: "test.rule".into(),
            description: "a rule".into(),
            why: "asked".into(),
            subject: Subject::Argv(argv.iter().map(|a| a.as_bytes().to_vec()).collect()),
            destination: None,
            process: ProcessInfo::default(),
            call: CallKey {
                tid,
                nr: libc::SYS_execve,
                args: [1, 2, 3, 0, 0, 0],
            },
            received: Instant::now(),
        }
    }

    #[test]
    fn always_covers_the_exact_argv_only() {
        let fake = Fake::new(vec![Answer::Always], Duration::ZERO);
        let g = gate(fake.clone());
        assert_eq!(
            g.ask(&exec(&["cargo", "test"], Level::Yellow, 1)),
            Answer::Always
        );
        // The same argv again: allowed without a question.
        assert!(g.ask(&exec(&["cargo", "test"], Level::Yellow, 2)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 1);
        // Another argv is asked (and the fake has no more Yes).
        assert!(
            !g.ask(&exec(&["cargo", "test", "--release"], Level::Yellow, 3))
                .allows()
        );
        assert!(!g.ask(&exec(&["cargo", "test "], Level::Yellow, 3)).allows());
        assert!(!g.ask(&exec(&["cargo test"], Level::Yellow, 3)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn always_never_applies_to_red() {
        let fake = Fake::new(vec![Answer::Always], Duration::ZERO);
        let g = gate(fake.clone());
        // Always on a red question is a Yes once.
        assert!(
            g.ask(&exec(&["git", "reset", "--hard"], Level::Red, 1))
                .allows()
        );
        assert!(
            !g.ask(&exec(&["git", "reset", "--hard"], Level::Red, 1))
                .allows()
        );
        assert_eq!(fake.asked.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn always_is_per_event_kind_and_exact_path() {
        let fake = Fake::new(vec![Answer::Always], Duration::ZERO);
        let g = gate(fake.clone());
        let write = |p: &str| Request {
            event: EventKind::Write,
            subject: Subject::Path(p.as_bytes().to_vec()),
            destination: None,
            ..exec(&[], Level::Yellow, 1)
        };
        assert!(g.ask(&write("/tmp/a")).allows());
        assert!(g.ask(&write("/tmp/a")).allows());
        assert!(!g.ask(&write("/tmp/a/")).allows());
        assert!(!g.ask(&write("/tmp/ab")).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn always_on_one_route_never_approves_the_other() {
        let fake = Fake::new(vec![Answer::Always, Answer::Always], Duration::ZERO);
        let g = gate(fake.clone());
        let connect = |route: Route, tid: i32| Request {
            event: EventKind::Connect,
            subject: Subject::Addr("203.0.113.7:443".into()),
            destination: Some(Destination {
                host: "203.0.113.7".into(),
                port: 443,
                name: None,
                address: None,
                route,
            }),
            ..exec(&[], Level::Yellow, tid)
        };
        assert_eq!(g.ask(&connect(Route::Proxy, 1)), Answer::Always);
        assert!(g.ask(&connect(Route::Proxy, 2)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 1);
        // The same host:port on the sandbox's own socket is a question of its own.
        assert_eq!(g.ask(&connect(Route::Direct, 3)), Answer::Always);
        assert_eq!(fake.asked.load(Ordering::SeqCst), 2);
        assert!(g.ask(&connect(Route::Direct, 4)).allows());
        assert!(g.ask(&connect(Route::Proxy, 5)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn always_given_through_the_proxy_leaves_a_direct_connect_asked() {
        let fake = Fake::new(vec![Answer::Always], Duration::ZERO);
        let g = gate(fake.clone());
        let connect = |route: Route| Request {
            event: EventKind::Connect,
            subject: Subject::Addr("203.0.113.7:443".into()),
            destination: Some(Destination {
                host: "203.0.113.7".into(),
                port: 443,
                name: None,
                address: None,
                route,
            }),
            ..exec(&[], Level::Yellow, 1)
        };
        assert!(g.ask(&connect(Route::Proxy)).allows());
        assert!(!g.ask(&connect(Route::Direct)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_reissued_call_attaches_to_the_pending_question() {
        let fake = Fake::new(vec![Answer::Yes], Duration::from_millis(300));
        let g = Arc::new(gate(fake.clone()));
        let first = {
            let g = g.clone();
            std::thread::spawn(move || g.ask(&exec(&["git", "push"], Level::Red, 7)))
        };
        std::thread::sleep(Duration::from_millis(50));
        let again = {
            let g = g.clone();
            std::thread::spawn(move || g.ask(&exec(&["git", "push"], Level::Red, 7)))
        };
        assert_eq!(first.join().unwrap(), Answer::Yes);
        assert_eq!(again.join().unwrap(), Answer::Yes);
        assert_eq!(
            fake.asked.load(Ordering::SeqCst),
            1,
            "one question, one answer"
        );
    }

    #[test]
    fn another_thread_with_the_same_call_gets_its_own_question() {
        let fake = Fake::new(
            vec![Answer::Yes, Answer::No { reason: None }],
            Duration::from_millis(200),
        );
        let g = Arc::new(gate(fake.clone()));
        let a = {
            let g = g.clone();
            std::thread::spawn(move || g.ask(&exec(&["git", "push"], Level::Red, 7)))
        };
        std::thread::sleep(Duration::from_millis(20));
        let b = {
            let g = g.clone();
            std::thread::spawn(move || g.ask(&exec(&["git", "push"], Level::Red, 8)))
        };
        let answers = [a.join().unwrap(), b.join().unwrap()];
        assert_eq!(fake.asked.load(Ordering::SeqCst), 2);
        assert_eq!(answers.iter().filter(|a| a.allows()).count(), 1);
    }

    #[test]
    fn an_unanswered_question_times_out_to_deny() {
        /// Never answers until closed.
        struct Silent;
        impl Approver for Silent {
            fn ask(&self, _q: &Question, _d: Instant) -> Answer {
                std::thread::sleep(Duration::from_secs(5));
                Answer::Yes
            }
            fn close(&self) {}
            fn name(&self) -> &'static str {
                "silent"
            }
        }
        let g = gate(Arc::new(Silent));
        let start = Instant::now();
        let a = g.ask_until(
            &exec(&["make"], Level::Yellow, 1),
            Instant::now() + Duration::from_millis(150),
        );
        assert_eq!(a, Answer::TimedOut);
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(150) && took < Duration::from_secs(2),
            "{took:?}"
        );
    }

    #[test]
    fn a_refusal_repeated_at_once_by_the_same_thread_is_not_asked_again() {
        let fake = Fake::new(
            vec![Answer::No { reason: None }, Answer::Yes],
            Duration::ZERO,
        );
        let g = gate(fake.clone());
        let mut first = exec(&["git", "reset", "--hard"], Level::Red, 5);
        assert!(!g.ask(&first).allows());
        // The next PATH entry: other registers, same thread, same argv.
        first.call.args[0] = 99;
        assert!(!g.ask(&first).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 1);
        // Another thread is asked.
        assert!(
            g.ask(&exec(&["git", "reset", "--hard"], Level::Red, 6))
                .allows()
        );
        assert_eq!(fake.asked.load(Ordering::SeqCst), 2);
    }

    /// `touch` of a file outside: `open(O_CREAT)` refused, then `utimensat` on the same
    /// path. The person said No once; the metadata change is not put to them again.
    #[test]
    fn a_metadata_change_right_after_a_refused_write_of_the_same_path_is_not_asked() {
        let fake = Fake::new(
            vec![Answer::No { reason: None }, Answer::Yes],
            Duration::ZERO,
        );
        let g = gate(fake.clone());
        let on = |event, path: &str, tid| Request {
            event,
            subject: Subject::Path(path.as_bytes().to_vec()),
            ..exec(&["touch"], Level::Red, tid)
        };
        assert!(!g.ask(&on(EventKind::Write, "/home/u/x", 7)).allows());
        assert!(!g.ask(&on(EventKind::Metadata, "/home/u/x", 7)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 1);
        // Another path is asked.
        assert!(g.ask(&on(EventKind::Metadata, "/home/u/y", 7)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn questions_beyond_the_bound_are_denied_at_once() {
        let fake = Fake::new(vec![], Duration::from_millis(1500));
        let g = Arc::new(gate(fake.clone()));
        let waiting: Vec<_> = (0..MAX_PENDING as i32)
            .map(|tid| {
                let g = g.clone();
                std::thread::spawn(move || g.ask(&exec(&["make"], Level::Yellow, tid)))
            })
            .collect();
        let start = Instant::now();
        while g.pending.lock().unwrap().len() < MAX_PENDING {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "questions never pending"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(g.answers_at_once());
        let asked = Instant::now();
        let a = g.ask(&exec(&["make"], Level::Yellow, 10_000));
        assert!(matches!(a, Answer::Unanswered { .. }), "{a:?}");
        assert!(asked.elapsed() < Duration::from_millis(500));
        for w in waiting {
            assert!(!w.join().unwrap().allows());
        }
        assert_eq!(fake.asked.load(Ordering::SeqCst), MAX_PENDING);
    }

    #[test]
    fn a_no_carries_its_reason_and_denies() {
        let fake = Fake::new(
            vec![Answer::No {
                reason: Some("use the staging remote".into()),
            }],
            Duration::ZERO,
        );
        let g = gate(fake);
        let a = g.ask(&exec(&["git", "push"], Level::Red, 1));
        assert!(!a.allows());
        assert_eq!(
            a,
            Answer::No {
                reason: Some("use the staging remote".into())
            }
        );
    }

    #[test]
    fn a_closed_gate_asks_nobody() {
        let fake = Fake::new(vec![Answer::Yes], Duration::ZERO);
        let g = gate(fake.clone());
        g.close(None);
        assert!(!g.ask(&exec(&["make"], Level::Yellow, 1)).allows());
        assert_eq!(fake.asked.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn argv_is_shown_escaped_and_whole() {
        let s = Subject::Argv(vec![
            b"echo".to_vec(),
            b"a b".to_vec(),
            b"\x1b[2J\xff".to_vec(),
        ]);
        assert_eq!(s.shown(), "echo 'a b' \\x1b[2J\\xff");
    }
}

//! The gate: where a yellow or red event that may be asked waits for a person.
//!
//! The notification loop (and `fence hook`) turns an event the policy says to ask about
//! into a [`Question`]; the gate hands it to an [`Approver`] and turns the [`Answer`] into
//! a decision. Approvers are interchangeable: [`DenyApprover`] answers No to everything
//! (nobody is there to answer: SPEC §5), the socket approver puts the question in front of
//! `fence approvals`. Whatever the approver does, a question that is not answered Yes or
//! Always before its deadline is denied: the gate fails closed.
//!
//! Kernel-fence events that may never be approved (absolute rules) do not reach the gate.
//!
//! [`decide::Gate`] owns the session's questions: the Always set, the pending table,
//! timeouts; [`log::AuditLog`] writes the JSON Lines audit log; [`transcript::Transcript`]
//! prints the one-line outcome of each question.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

pub mod client;
pub mod decide;
pub mod log;
pub mod peer;
pub mod protocol;
pub mod scripted;
pub mod socket;
#[cfg(test)]
mod test_support;
pub mod transcript;

/// What a session tells the clients that connect to its socket (`fence sessions`,
/// `fence approvals`) about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session's id; also the name of its socket (`<id>.sock`).
    pub id: String,
    /// The session's worktree.
    pub worktree: PathBuf,
    /// The wrapped command, each word escaped.
    pub command: Vec<String>,
    /// The supervisor's pid.
    pub fence_pid: u32,
    pub started_at: SystemTime,
    /// How long each question waits for an answer (`--ask-timeout`).
    pub ask_timeout: Duration,
}

/// Version of the approval protocol spoken on the session socket (JSON lines). Sent in the
/// handshake; a peer speaking another version is refused with a clear error.
#[allow(dead_code)] // spoken by the socket approver and `fence approvals`
pub const PROTOCOL_VERSION: u32 = 1;

/// How long a question waits for an answer unless `--ask-timeout` says otherwise.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(120);
/// The accepted range of `--ask-timeout`, in seconds.
pub const ASK_TIMEOUT_RANGE: std::ops::RangeInclusive<u64> = 10..=3600;

/// The level of the event that is asked about (green never asks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Yellow,
    Red,
}

/// What kind of event a question is about (the `event` field of the audit log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Exec,
    Write,
    Connect,
    Bind,
    Unix,
    Metadata,
    Signal,
}

/// One question, as the approver and every client see it. Everything that comes from the
/// sandbox (argv, paths, host names, process names) is already escaped and whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// Unique within the session.
    pub id: u64,
    /// The session's id.
    pub session: String,
    pub level: Level,
    /// Rule id (`namespace.name`) and its description.
    pub rule: String,
    pub description: String,
    pub event: EventKind,
    /// The command line, path or `host:port` that is asked about, escaped, shown whole.
    pub subject: String,
    /// For an exec: each argument, escaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// For a connection: where to, and by which route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<Destination>,
    /// The asking process as fence sees it, and as the sandbox sees it (pid namespace).
    pub pid: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_pid: Option<i32>,
    /// The process's name (`comm`), escaped.
    pub process: String,
    /// "Always" may be offered: yellow only, never red.
    pub always_offered: bool,
    /// When the question was asked and when it times out, in milliseconds since the Unix
    /// epoch (clients show the time left from these).
    pub asked_at_ms: u64,
    pub deadline_ms: u64,
}

/// The destination of a connection a question is about. `host` is as the process gave it:
/// the IP address of a direct connect, the name of a request to the domain proxy; `name`
/// is the name fence knows for a direct connect's address (from `--resolve`), `address`
/// the address `--resolve` maps a proxied name to. Escaped, shown whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Destination {
    pub host: String,
    pub port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub route: Route,
}

/// How a connection would go: the process's own socket, or through fence's domain proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Route {
    Direct,
    Proxy,
}

impl Destination {
    /// One line for a card: `203.0.113.5 port 443 (api.example.com), direct`.
    pub fn shown(&self) -> String {
        let mut s = format!("{} port {}", self.host, self.port);
        if let Some(n) = &self.name {
            s.push_str(&format!(" ({n})"));
        }
        if let Some(a) = &self.address {
            s.push_str(&format!(" (resolves to {a})"));
        }
        s.push_str(match self.route {
            Route::Direct => ", direct",
            Route::Proxy => ", through fence's proxy",
        });
        s
    }
}

/// A person's (or the approver's) answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Yes,
    /// Yes, and the same exact event is allowed for the rest of this session (yellow only;
    /// the gate treats Always on a red question as Yes once).
    Always,
    No {
        reason: Option<String>,
    },
    /// Nobody answered before the deadline.
    TimedOut,
    /// The question could not be put to anyone (no approver, broken channel, session
    /// ending); `why` names the cause.
    Unanswered {
        why: String,
    },
}

impl Answer {
    /// Whether the event may go ahead.
    pub fn allows(&self) -> bool {
        matches!(self, Answer::Yes | Answer::Always)
    }

    /// The audit log's `answer` field.
    pub fn log_word(&self) -> &'static str {
        match self {
            Answer::Yes => "yes",
            Answer::Always => "always",
            Answer::No { .. } => "no",
            Answer::TimedOut => "timeout",
            Answer::Unanswered { .. } => "none",
        }
    }
}

/// Whoever answers questions. `ask` blocks the calling thread (one thread per pending
/// question: no process ever waits on another's question) until the question is answered,
/// the deadline passes (then [`Answer::TimedOut`]) or the approver is closed (then
/// [`Answer::Unanswered`]). It must never return later than `deadline` by more than a
/// scheduling delay, and never Yes for a question it did not put to a person.
pub trait Approver: Send + Sync {
    fn ask(&self, question: &Question, deadline: Instant) -> Answer;

    /// The session is ending: every pending and later `ask` returns `Unanswered`.
    fn close(&self);

    /// A short name for banners and the log (`deny`, `socket`).
    fn name(&self) -> &'static str;

    /// Whether `ask` always returns at once without putting the question to anyone (the
    /// deny approver): the notification loop then answers inline instead of handing the
    /// question to a thread of its own.
    fn answers_at_once(&self) -> bool {
        false
    }
}

/// `--approver deny`: nobody answers; every question is No at once.
#[derive(Debug, Default)]
pub struct DenyApprover;

impl Approver for DenyApprover {
    fn ask(&self, _question: &Question, _deadline: Instant) -> Answer {
        Answer::Unanswered {
            why: "no approver (--approver deny)".into(),
        }
    }

    fn close(&self) {}

    fn name(&self) -> &'static str {
        "deny"
    }

    fn answers_at_once(&self) -> bool {
        true
    }
}

/// Milliseconds since the Unix epoch of `at`, a point on the monotonic clock.
pub fn epoch_ms(at: Instant) -> u64 {
    let now = Instant::now();
    let wall = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let wall_at = if at >= now {
        wall + (at - now)
    } else {
        wall.saturating_sub(now - at)
    };
    u64::try_from(wall_at.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        Question {
            id: 1,
            session: "s".into(),
            level: Level::Yellow,
            rule: "git.reset-hard".into(),
            description: "discards work".into(),
            event: EventKind::Exec,
            subject: "git reset --hard".into(),
            argv: Some(vec!["git".into(), "reset".into(), "--hard".into()]),
            destination: None,
            pid: 10,
            sandbox_pid: Some(3),
            process: "bash".into(),
            always_offered: true,
            asked_at_ms: 0,
            deadline_ms: 120_000,
        }
    }

    #[test]
    fn deny_approver_never_allows() {
        let a = DenyApprover.ask(&question(), Instant::now() + Duration::from_secs(5));
        assert!(!a.allows());
        assert_eq!(a.log_word(), "none");
    }

    #[test]
    fn question_round_trips_as_json() {
        let q = question();
        let text = serde_json::to_string(&q).unwrap();
        assert!(text.contains("\"level\":\"yellow\""), "{text}");
        assert!(text.contains("\"event\":\"exec\""), "{text}");
        let back: Question = serde_json::from_str(&text).unwrap();
        assert_eq!(back, q);
    }

    #[test]
    fn a_connection_question_carries_its_destination() {
        let mut q = question();
        q.event = EventKind::Connect;
        q.argv = None;
        q.destination = Some(Destination {
            host: "api.test".into(),
            port: 8080,
            name: None,
            address: Some("127.0.0.1".into()),
            route: Route::Proxy,
        });
        let text = serde_json::to_string(&q).unwrap();
        assert!(text.contains("\"route\":\"proxy\""), "{text}");
        let back: Question = serde_json::from_str(&text).unwrap();
        assert_eq!(back, q);
        assert_eq!(
            q.destination.unwrap().shown(),
            "api.test port 8080 (resolves to 127.0.0.1), through fence's proxy"
        );
    }

    #[test]
    fn epoch_ms_orders_like_the_monotonic_clock() {
        let now = Instant::now();
        let later = now + Duration::from_secs(10);
        let d = epoch_ms(later) - epoch_ms(now);
        assert!((9_990..=10_010).contains(&d), "{d}");
    }
}

//! Between the checks and the gate: what a check decided (allowed, refused, or to be asked),
//! and how that reaches the process — inline when nobody has to be asked, on a thread of
//! its own while a question waits, so no process ever waits on another's question.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use super::approved::{self, Operation};
use super::blocked_reason::{self, BlockedReason};
use super::listener::{Listener, Notification, Response};
use super::path_resolve::Caller;
use super::view::View;
use crate::gate::decide::{CallKey, Gate, ProcessInfo, Record, Request, Subject};
use crate::gate::{Answer, EventKind, Level};

/// What a check decided about one call.
#[derive(Debug)]
pub struct Outcome {
    pub event: EventKind,
    /// The object, for the log and the question; `None` when nothing could be read.
    pub subject: Option<Subject>,
    /// Whether policy allowed the call (the response may still carry the kernel's error
    /// for a call the supervisor performed).
    pub allowed: bool,
    /// For the log: `green`, `yellow` or `red`, the rule and why.
    pub level: &'static str,
    pub rule: Cow<'static, str>,
    pub why: Cow<'static, str>,
    /// The answer when nothing is asked, and the refusal when a question is denied.
    pub response: Response,
    pub reason: Option<BlockedReason>,
    pub ask: Option<Ask>,
    /// An allowed call the supervisor carries out itself from the checked values instead of
    /// answering `CONTINUE` (see `write_check`: a path the target could swap after the
    /// check must not reach a protected path); `response` is then unused.
    pub perform: Option<Operation>,
}

impl Outcome {
    /// A call refused before anything could be judged (memory unreadable, call gone).
    pub fn failed(event: EventKind, errno: i32) -> Outcome {
        Outcome {
            event,
            subject: None,
            allowed: false,
            level: "red",
            rule: Cow::Borrowed(""),
            why: Cow::Borrowed(""),
            response: Response::Error(errno),
            reason: None,
            ask: None,
            perform: None,
        }
    }
}

/// A question to put to the gate.
#[derive(Debug)]
pub struct Ask {
    pub level: Level,
    pub rule: String,
    pub description: String,
    pub on_yes: OnYes,
}

/// What happens when a person says Yes.
#[derive(Debug)]
pub enum OnYes {
    /// The kernel runs the call if what was asked about still holds after the answer
    /// (exec: policy, not a boundary; Landlock still applies).
    ContinueIf(Recheck),
    /// The supervisor carries the call out from the checked values.
    Perform(Operation),
}

/// The judgement made again once a person has answered: what it depends on besides the
/// call's own values (an exec's repository: a branch re-pointed while the question waited
/// makes `git push origin feature` a push to main) may have changed meanwhile. `Err`
/// refuses the call, with its reason.
pub struct Recheck(pub Box<dyn FnOnce() -> Result<(), BlockedReason> + Send>);

impl std::fmt::Debug for Recheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recheck")
    }
}

/// Everything a decision needs to reach the process.
pub struct Settle {
    pub listener: Arc<Listener>,
    pub gate: Arc<Gate>,
    pub quiet_blocks: bool,
}

/// Answers `n` according to `outcome`: inline, unless a question has to wait for a person,
/// which then waits on a thread of its own.
/// Returns whether the call was answered here (not on a thread of its own).
pub fn settle(
    s: &Settle,
    n: Notification,
    caller: Caller,
    outcome: Outcome,
    received: Instant,
) -> bool {
    // A call the supervisor carries out that may wait (a FIFO opened for writing waits for
    // its reader) runs on a thread of its own, as a question does; a rename, link, unlink,
    // mkdir… returns at once and is carried out inline.
    let may_wait = outcome.perform.as_ref().is_some_and(|op| op.may_wait());
    if !may_wait && (outcome.ask.is_none() || s.gate.answers_at_once()) {
        finish(s, &n, caller, outcome, received);
        return true;
    }
    let id = n.id;
    let listener = s.listener.clone();
    let s = Settle {
        listener: s.listener.clone(),
        gate: s.gate.clone(),
        quiet_blocks: s.quiet_blocks,
    };
    let spawned = std::thread::Builder::new()
        .name("fence-ask".into())
        .spawn(move || finish(&s, &n, caller, outcome, received));
    if spawned.is_err() {
        // No thread to wait on the question: nobody can be asked, the call is refused.
        listener.respond(id, Response::Error(libc::EAGAIN));
    }
    false
}

fn finish(s: &Settle, n: &Notification, caller: Caller, outcome: Outcome, received: Instant) {
    let Outcome {
        event,
        subject,
        allowed,
        level,
        rule,
        why,
        response,
        reason,
        ask,
        perform,
    } = outcome;
    let Some(ask) = ask else {
        if let Some(subject) = &subject
            && (s.gate.logging() || reason.is_some())
        {
            let process = s.gate.logging().then(|| process_info(caller));
            s.gate.record(&Record {
                event,
                subject,
                process: process.as_ref(),
                level,
                action: if allowed { "allow" } else { "deny" },
                rule: &rule,
                reason: reason.as_ref().map(|r| r.what.as_str()).unwrap_or(&why),
                tid: n.tid,
                received,
            });
        }
        tell(s, caller, reason.as_ref());
        let response = match perform {
            // Carried out inside the fence: in the sandbox's view (`view`).
            Some(op) => approved::perform(&s.listener, n, caller, op, View::Sandbox),
            None => response,
        };
        s.listener.respond(n.id, response);
        return;
    };
    let Some(subject) = subject else {
        s.listener.respond(n.id, response);
        return;
    };
    let protected_path = ask.rule == "fence.protected-path";
    let request = Request {
        event,
        level: ask.level,
        rule: ask.rule,
        description: ask.description,
        why: why.into_owned(),
        subject,
        destination: None,
        process: process_info(caller),
        call: CallKey {
            tid: n.tid,
            nr: n.nr,
            args: n.args,
        },
        received,
    };
    let answer = s.gate.ask(&request);
    if answer.allows() {
        // The call may have gone (killed) while it waited: nothing to carry out then.
        if !s.listener.is_valid(n.id) {
            return;
        }
        let response = match ask.on_yes {
            OnYes::ContinueIf(Recheck(recheck)) => match recheck() {
                Ok(()) => Response::Continue,
                Err(changed) => {
                    s.gate.record(&Record {
                        event,
                        subject: &request.subject,
                        process: Some(&request.process),
                        level: "red",
                        action: "deny",
                        rule: &changed.rule,
                        reason: &changed.what,
                        tid: n.tid,
                        received,
                    });
                    tell(s, caller, Some(&changed));
                    response
                }
            },
            // Approved beyond the fence: the real file, in fence's view.
            OnYes::Perform(op) => {
                if protected_path {
                    // Before the write: a later one never finds it made and still bound.
                    super::write_check::protected_path_approved();
                }
                approved::perform(&s.listener, n, caller, op, View::Fence)
            }
        };
        s.listener.respond(n.id, response);
        return;
    }
    let reason = reason.map(|mut r| {
        r.answer = Some(answer_text(&answer));
        r
    });
    tell(s, caller, reason.as_ref());
    s.listener.respond(n.id, response);
}

/// How a refused question was answered, as the process's stderr line ends.
pub fn answer_text(answer: &Answer) -> String {
    match answer {
        Answer::No { reason: Some(text) } => format!("denied: {text}"),
        Answer::No { reason: None } => "denied".into(),
        Answer::TimedOut => "no answer in time".into(),
        Answer::Unanswered { why } => why.clone(),
        Answer::Yes | Answer::Always => String::new(),
    }
}

fn tell(s: &Settle, caller: Caller, reason: Option<&BlockedReason>) {
    if let Some(reason) = reason.filter(|_| !s.quiet_blocks) {
        blocked_reason::tell(caller, reason);
    }
}

/// The caller's process id, its id in the sandbox's pid namespace and its name.
pub fn process_info(caller: Caller) -> ProcessInfo {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", caller.tid)) else {
        return ProcessInfo {
            pid: caller.tid,
            ..ProcessInfo::default()
        };
    };
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name));
    let pid = field("Tgid:")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(caller.tid);
    let ns: Vec<i32> = field("NSpid:")
        .map(|v| {
            v.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    ProcessInfo {
        pid,
        sandbox_pid: (ns.len() > 1).then(|| ns[ns.len() - 1]),
        name: field("Name:").unwrap_or("").trim().to_string(),
    }
}

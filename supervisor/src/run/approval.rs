//! The gate of a `fence run` session: which approver answers (`--approver`, SPEC §5), how
//! long a question waits (`--ask-timeout`), the mode (`--mode`) and the audit log (`--log`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::gate::decide::Gate;
use crate::gate::log::AuditLog;
use crate::gate::scripted::ScriptedApprover;
use crate::gate::transcript::{Transcript, TranscriptTarget};
use crate::gate::{ASK_TIMEOUT_RANGE, Approver, DenyApprover, SessionInfo};

/// `--approver`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApproverChoice {
    /// A person, through `fence approvals` on the session socket.
    Socket,
    /// Nobody: every question is No.
    Deny,
    /// Answers read from a file at start (hidden; tests and demonstrations).
    Script(PathBuf),
}

pub fn parse_approver(s: &str) -> Result<ApproverChoice, String> {
    match s {
        "socket" => Ok(ApproverChoice::Socket),
        "deny" => Ok(ApproverChoice::Deny),
        _ => match s.strip_prefix("script:") {
            Some(p) if !p.is_empty() => Ok(ApproverChoice::Script(PathBuf::from(p))),
            _ => Err("expected socket or deny".into()),
        },
    }
}

/// `--mode`: the modes that mean something under `fence run` (plan is a line-context mode).
pub fn parse_run_mode(s: &str) -> Result<policy::Mode, String> {
    match s.parse::<policy::Mode>()? {
        policy::Mode::Plan => Err(
            "plan is a line-context mode (hooks, fence check); under fence run use default, auto or ask-all"
                .into(),
        ),
        m => Ok(m),
    }
}

/// `--ask-timeout SECS`: 10 to 3600.
pub fn parse_ask_timeout(s: &str) -> Result<u64, String> {
    let secs: u64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !ASK_TIMEOUT_RANGE.contains(&secs) {
        return Err(format!(
            "{secs} is out of range: {} to {} seconds",
            ASK_TIMEOUT_RANGE.start(),
            ASK_TIMEOUT_RANGE.end()
        ));
    }
    Ok(secs)
}

/// SPEC §5: interactive means stdin and stderr are terminals and `CI` is unset, empty,
/// `false` or `0`.
pub fn interactive() -> bool {
    let ci = std::env::var_os("CI");
    let ci_off = match ci.as_deref().and_then(|v| v.to_str()) {
        None => ci.is_none(),
        Some(v) => v.is_empty() || v == "false" || v == "0",
    };
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal() && ci_off
}

/// What the session's gate is built from.
pub struct GateSettings<'a> {
    pub approver: Option<&'a ApproverChoice>,
    pub mode: policy::Mode,
    pub ask_timeout: u64,
    pub log: Option<&'a Path>,
    pub worktree: &'a Path,
    pub command: &'a [std::ffi::OsString],
}

/// Opens the log and starts the approver; any failure is fence's (exit 125).
pub fn start_gate(settings: &GateSettings<'_>) -> Result<Arc<Gate>, String> {
    let log = settings.log.map(AuditLog::open).transpose()?;
    let started_at_ms = crate::gate::epoch_ms(std::time::Instant::now());
    let fence_pid = std::process::id();
    let session = SessionInfo {
        id: format!("{fence_pid}-{started_at_ms}"),
        worktree: settings.worktree.to_path_buf(),
        command: settings
            .command
            .iter()
            .map(|w| crate::escape::bytes_for_terminal(w.as_encoded_bytes()))
            .collect(),
        fence_pid,
        started_at: std::time::SystemTime::now(),
        ask_timeout: Duration::from_secs(settings.ask_timeout),
    };
    let approver: Arc<dyn Approver> = match settings.approver {
        Some(ApproverChoice::Deny) => Arc::new(DenyApprover),
        Some(ApproverChoice::Script(path)) => Arc::new(ScriptedApprover::from_file(path)?),
        Some(ApproverChoice::Socket) => {
            crate::gate::socket::start(&session).map_err(|e| format!("--approver socket: {e}"))?
        }
        None if interactive() => match crate::gate::socket::start(&session) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("fence: {e}; questions are answered No (--approver deny)");
                Arc::new(DenyApprover)
            }
        },
        None => Arc::new(DenyApprover),
    };
    Ok(Arc::new(Gate::new(
        session,
        settings.mode,
        approver,
        Transcript::new(TranscriptTarget::Stderr),
        log,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ask_timeout_accepts_ten_to_an_hour() {
        assert_eq!(parse_ask_timeout("10"), Ok(10));
        assert_eq!(parse_ask_timeout("3600"), Ok(3600));
        assert!(parse_ask_timeout("9").is_err());
        assert!(parse_ask_timeout("3601").is_err());
        assert!(parse_ask_timeout("abc").is_err());
        assert!(parse_ask_timeout("-5").is_err());
    }

    #[test]
    fn run_modes_exclude_plan() {
        assert_eq!(parse_run_mode("auto"), Ok(policy::Mode::Auto));
        assert_eq!(parse_run_mode("ask-all"), Ok(policy::Mode::AskAll));
        assert!(parse_run_mode("plan").is_err());
        assert!(parse_run_mode("yolo").is_err());
    }

    #[test]
    fn approvers_are_socket_deny_or_a_script() {
        assert_eq!(parse_approver("socket"), Ok(ApproverChoice::Socket));
        assert_eq!(parse_approver("deny"), Ok(ApproverChoice::Deny));
        assert_eq!(
            parse_approver("script:/x"),
            Ok(ApproverChoice::Script("/x".into()))
        );
        assert!(parse_approver("yes").is_err());
        assert!(parse_approver("script:").is_err());
    }
}

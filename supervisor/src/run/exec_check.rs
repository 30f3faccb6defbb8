//! The exec check: every `execve`/`execveat` of the sandbox is judged in exec context.
//!
//! This is policy, not a security boundary: another thread can change argv after the
//! check, and a program can be copied under another name. The kernel boundaries are the
//! file, network and signal fences.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::blocked_reason::BlockedReason;
use super::listener::{Notification, Response};
use super::path_resolve::{self, Base, Caller, Resolution};
use super::target_memory::{MemoryError, PATH_MAX, TargetMemory};

/// One exec as the policy sees it.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    pub argv: Vec<String>,
    /// The program as the kernel will find it (resolved through symlinks when possible).
    pub program: PathBuf,
    pub cwd: PathBuf,
    pub current_branch: Option<String>,
}

/// The policy's answer for one exec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecJudgement {
    pub allow: bool,
    pub rule: String,
    pub reason: String,
    /// The text that decided.
    pub part: String,
}

/// Whatever judges execs (the policy crate's classifier in exec context).
pub trait ExecPolicy: Send + Sync {
    fn judge(&self, request: &ExecRequest) -> ExecJudgement;
}

/// The outcome of the check.
#[derive(Debug)]
pub struct ExecDecision {
    pub response: Response,
    pub reason: Option<BlockedReason>,
}

/// Reads the exec's program and argv from the target and asks `policy`.
pub fn check(
    policy: &dyn ExecPolicy,
    worktree: &Path,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
) -> ExecDecision {
    match read_request(worktree, mem, caller, n) {
        Err(e) => {
            // Unreadable or oversized arguments: refuse (fail closed).
            let errno = match e {
                MemoryError::TooLong(_) => libc::E2BIG,
                MemoryError::Stale => libc::EINTR,
                MemoryError::Unreadable(_) => libc::EFAULT,
            };
            ExecDecision {
                response: Response::Error(errno),
                reason: None,
            }
        }
        Ok(request) => {
            let verdict = policy.judge(&request);
            if verdict.allow {
                // The exec itself is the target's: CONTINUE lets the kernel run it, with
                // Landlock's execute right and no_new_privs still in force.
                ExecDecision {
                    response: Response::Continue,
                    reason: None,
                }
            } else {
                let object = if verdict.part.is_empty() {
                    request.argv.join(" ")
                } else {
                    verdict.part.clone()
                };
                let what = if verdict.reason.is_empty() {
                    "command".to_string()
                } else {
                    format!("command ({})", verdict.reason)
                };
                ExecDecision {
                    response: Response::Error(libc::EACCES),
                    reason: Some(BlockedReason {
                        what,
                        object: object.into_bytes(),
                        rule: verdict.rule,
                    }),
                }
            }
        }
    }
}

fn read_request(
    worktree: &Path,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
) -> Result<ExecRequest, MemoryError> {
    let a = n.args;
    let (base, path_addr, argv_addr, empty_is_base) = if n.nr == libc::SYS_execveat {
        (
            Base::from_dirfd(a[0]),
            a[1],
            a[2],
            a[4] & libc::AT_EMPTY_PATH as u64 != 0,
        )
    } else {
        (Base::Cwd, a[0], a[1], false)
    };
    let raw_path = mem.c_string(path_addr, PATH_MAX)?;
    let argv = mem.string_array(argv_addr)?;
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", caller.tid)).unwrap_or_default();
    let program = if raw_path.is_empty() && !empty_is_base {
        PathBuf::new()
    } else {
        match path_resolve::resolve_with_cwd(caller, base, &raw_path, true, Some(&cwd)) {
            Resolution::Path(p) => p,
            Resolution::Unresolvable(_) => PathBuf::from(OsStr::from_bytes(&raw_path)),
        }
    };
    Ok(ExecRequest {
        argv: argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
        program,
        cwd,
        current_branch: super::git_head::current_branch(worktree),
    })
}

impl ExecPolicy for policy::Classifier {
    /// Exec context of the policy crate. Ask has no approval channel to go to here, so it
    /// is refused with the rule's reason (fail closed).
    fn judge(&self, request: &ExecRequest) -> ExecJudgement {
        let verdict = self.classify_exec(&policy::ExecEvent {
            argv: &request.argv,
            program: &request.program,
            cwd: &request.cwd,
            current_branch: request.current_branch.as_deref(),
        });
        ExecJudgement {
            allow: verdict.action == policy::Action::Allow,
            rule: verdict.rule,
            reason: verdict.reason,
            part: verdict.part,
        }
    }
}

//! A scripted approver (`--approver script:FILE`, hidden): answers questions in order from
//! a file read once when the session starts, before the sandbox exists, so nothing inside
//! can change the answers. It stands for the person who starts fence answering in advance
//! (tests, demonstrations); it reads no environment and no path after start.
//!
//! One answer a line: `yes`, `always`, `no`, `no REASON`, `none` (nobody answers), each
//! optionally preceded by `after MS` (the answer comes that many milliseconds after the
//! question; a question whose deadline comes first times out). Blank lines and lines
//! starting with `#` are skipped. Questions beyond the script are not answered (denied).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{Answer, Approver, Question};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Step {
    after: Duration,
    answer: Answer,
}

#[derive(Debug)]
pub struct ScriptedApprover {
    steps: Mutex<VecDeque<Step>>,
    closed: Mutex<bool>,
    wake: Condvar,
}

impl ScriptedApprover {
    /// Reads the script from `path`.
    pub fn from_file(path: &std::path::Path) -> Result<ScriptedApprover, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--approver script:{}: {e}", path.display()))?;
        ScriptedApprover::parse(&text)
            .map_err(|e| format!("--approver script:{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<ScriptedApprover, String> {
        let mut steps = VecDeque::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("line {}: cannot read {line:?}", n + 1);
            let (after, rest) = match line.strip_prefix("after ") {
                Some(r) => {
                    let (ms, rest) = r.trim_start().split_once(' ').ok_or_else(bad)?;
                    let ms: u64 = ms.parse().map_err(|_| bad())?;
                    (Duration::from_millis(ms), rest.trim_start())
                }
                None => (Duration::ZERO, line),
            };
            let (word, reason) = match rest.split_once(' ') {
                Some((w, r)) => (w, Some(r.trim().to_string())),
                None => (rest, None),
            };
            let answer = match (word, reason) {
                ("yes", None) => Answer::Yes,
                ("always", None) => Answer::Always,
                ("no", reason) => Answer::No { reason },
                ("none", None) => Answer::Unanswered {
                    why: "the approval script answers nothing".into(),
                },
                _ => return Err(bad()),
            };
            steps.push_back(Step { after, answer });
        }
        Ok(ScriptedApprover {
            steps: Mutex::new(steps),
            closed: Mutex::new(false),
            wake: Condvar::new(),
        })
    }
}

impl Approver for ScriptedApprover {
    fn ask(&self, _question: &Question, deadline: Instant) -> Answer {
        let step = self
            .steps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        let Some(step) = step else {
            return Answer::Unanswered {
                why: "the approval script has no more answers".into(),
            };
        };
        let due = Instant::now() + step.after;
        let mut closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *closed {
                return Answer::Unanswered {
                    why: "the session is ending".into(),
                };
            }
            let now = Instant::now();
            if now >= deadline {
                return Answer::TimedOut;
            }
            if now >= due {
                return step.answer;
            }
            closed = self
                .wake
                .wait_timeout(closed, due.min(deadline) - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn close(&self) {
        *self.closed.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_all();
    }

    fn name(&self) -> &'static str {
        "script"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_lines_are_read_in_order() {
        let a = ScriptedApprover::parse("# c\nyes\n\nafter 5 no use make\nalways\nnone\n").unwrap();
        let steps: Vec<Step> = a.steps.lock().unwrap().iter().cloned().collect();
        assert_eq!(steps[0].answer, Answer::Yes);
        assert_eq!(steps[1].after, Duration::from_millis(5));
        assert_eq!(
            steps[1].answer,
            Answer::No {
                reason: Some("use make".into())
            }
        );
        assert_eq!(steps[2].answer, Answer::Always);
        assert!(matches!(steps[3].answer, Answer::Unanswered { .. }));
        assert!(ScriptedApprover::parse("maybe\n").is_err());
        assert!(ScriptedApprover::parse("yes please\n").is_err());
        assert!(ScriptedApprover::parse("after x yes\n").is_err());
    }
}

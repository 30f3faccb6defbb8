//! From findings to a verdict: each part takes the strictest rule that
//! applies to it in this context and mode, and the worst part wins the line.

use serde::Serialize;

use crate::Classifier;
use crate::level::{Action, Context, Level, Mode};
use crate::rules::{Origin, Rule, RuleId};
use crate::walk::{Finding, Part, Walker};

/// The verdict for one part of a line (one program position).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartVerdict {
    pub part: String,
    pub level: Level,
    pub absolute: bool,
    pub action: Action,
    pub rule: String,
    pub reason: String,
}

/// The verdict for a line or an exec (SPEC §6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub level: Level,
    pub absolute: bool,
    pub action: Action,
    /// "Always" may be offered: yellow, and asked.
    pub always_offered: bool,
    pub rule: String,
    /// The text of the part that decided.
    pub part: String,
    pub reason: String,
    pub parts: Vec<PartVerdict>,
}

impl Verdict {
    /// Exit status of `fence check`: 0 allow, 1 ask, 2 deny.
    pub fn exit_code(&self) -> i32 {
        match self.action {
            Action::Allow => 0,
            Action::Ask => 1,
            Action::Deny => 2,
        }
    }
}

/// The action a rule takes in a mode.
fn action_in(rule: &Rule, mode: Mode) -> Action {
    if rule.absolute {
        return Action::Deny;
    }
    // What fence could not judge (a parse error, a line too complex, bytes a
    // shell reads differently) could hide an absolute refusal: auto-approve
    // never answers it.
    let unjudged = matches!(
        rule.origin,
        Origin::Builtin(RuleId::ParseError | RuleId::TooComplex | RuleId::InvalidInput)
    );
    // What the kernel fence decides under `fence run` — a write outside the
    // worktree, the network, a protected path, a credential — is never
    // auto-approved (SPEC §2, Modes): an agent tool reaching for one is asked.
    let kernel_decided = matches!(
        rule.origin,
        Origin::Builtin(
            RuleId::ToolWriteOutside | RuleId::ToolWeb | RuleId::ProtectedPath | RuleId::SecretRead
        )
    );
    match (mode, rule.action) {
        // Auto-approve answers what would be asked; a rule set to deny stays
        // denied, and absolute refusals never reach here.
        (Mode::Auto, Action::Ask) if !unjudged && !kernel_decided => Action::Allow,
        (_, a) => a,
    }
}

/// Strictness order of part verdicts: action first, then level, then
/// absoluteness.
fn severity(p: &PartVerdict) -> (Action, Level, bool) {
    (p.action, p.level, p.absolute)
}

fn judge(
    cls: &Classifier,
    ctx: Context,
    mode: Mode,
    rule_index: usize,
    reason: &str,
    part: &str,
) -> PartVerdict {
    judged(cls, ctx, mode, rule_index).into_verdict(cls, reason.to_string(), part)
}

/// What a rule decides for a part, before any text is attached: candidates are compared
/// by this, and only the one chosen becomes a [`PartVerdict`] (a command with thousands of
/// arguments has a finding for each, and copying the part's text for each made judging it
/// quadratic).
#[derive(Clone, Copy)]
struct Judged {
    rule_index: usize,
    action: Action,
    level: Level,
    absolute: bool,
}

impl Judged {
    fn severity(&self) -> (Action, Level, bool) {
        (self.action, self.level, self.absolute)
    }

    fn into_verdict(self, cls: &Classifier, reason: String, part: &str) -> PartVerdict {
        PartVerdict {
            part: part.to_string(),
            level: self.level,
            absolute: self.absolute,
            action: self.action,
            rule: cls.table().rules[self.rule_index].id.clone(),
            reason,
        }
    }
}

fn judged(cls: &Classifier, ctx: Context, mode: Mode, rule_index: usize) -> Judged {
    let rule = &cls.table().rules[rule_index];
    let mut action = action_in(rule, mode);
    let mut level = rule.level;
    if ctx == Context::Exec
        && rule.origin == Origin::Builtin(RuleId::ExecRun)
        && mode == Mode::AskAll
    {
        action = Action::Ask;
        level = Level::Yellow;
    }
    Judged {
        rule_index,
        action,
        level,
        absolute: rule.absolute,
    }
}

/// A custom prefix rule matches text as written, wherever it starts after a
/// space, a separator or the start of the text (SPEC §2, "Custom rules").
pub fn prefix_matches(text: &str, prefix: &str) -> bool {
    if prefix.is_empty() {
        return false;
    }
    text.match_indices(prefix).any(|(i, _)| {
        i == 0
            || text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '('))
    })
}

fn part_verdict(cls: &Classifier, ctx: Context, part: &Part) -> PartVerdict {
    let mode = cls.settings().mode;
    let table = cls.table();
    // The strictest candidate, and among equals the first found; its reason is written
    // out only once it is chosen.
    enum Reason<'a> {
        Found(&'a str),
        Custom(&'a str),
    }
    fn consider<'a>(worst: &mut Option<(Judged, Reason<'a>)>, j: Judged, reason: Reason<'a>) {
        if worst
            .as_ref()
            .is_none_or(|(w, _)| j.severity() > w.severity())
        {
            *worst = Some((j, reason));
        }
    }
    let mut worst: Option<(Judged, Reason<'_>)> = None;
    for f in part
        .findings
        .iter()
        .filter(|f| table.rules[f.rule].contexts.contains(ctx))
    {
        let mut j = judged(cls, ctx, mode, f.rule);
        // A write outside the worktree is one of the events the kernel fence decides:
        // auto-approve never answers it (SPEC §2, Modes), in a line as for a tool. (An
        // exec under `fence run` runs: the kernel fence then refuses the write itself.)
        if f.outside_write
            && ctx == Context::Line
            && mode == Mode::Auto
            && j.action == Action::Allow
        {
            j.action = action_in(&table.rules[f.rule], Mode::Default);
        }
        consider(&mut worst, j, Reason::Found(&f.reason));
    }
    for (i, rule) in table.rules.iter().enumerate() {
        if let Origin::Custom { prefix } = &rule.origin
            && rule.contexts.contains(ctx)
            && prefix_matches(&part.text, prefix)
        {
            consider(
                &mut worst,
                judged(cls, ctx, mode, i),
                Reason::Custom(prefix),
            );
        }
    }
    match worst {
        Some((j, Reason::Found(reason))) => j.into_verdict(cls, reason.to_string(), &part.text),
        Some((j, Reason::Custom(prefix))) => {
            let reason = format!(
                "matches the custom rule `{prefix}`: {}",
                table.rules[j.rule_index].description
            );
            j.into_verdict(cls, reason, &part.text)
        }
        None => {
            let (id, reason) = match ctx {
                Context::Line => (RuleId::DefaultUnknown, "no rule recognises this command"),
                Context::Exec => (RuleId::ExecRun, "no rule matches: runs inside the fence"),
            };
            judge(cls, ctx, mode, id as usize, reason, &part.text)
        }
    }
}

/// Turns a finished walk into the verdict for `line`.
pub fn assemble(cls: &Classifier, ctx: Context, line: &str, mut w: Walker<'_>) -> Verdict {
    // Credentials read anywhere in a line that reaches the network.
    if w.secret_read.is_none() && !w.network_parts.is_empty() {
        w.resolve_secret_candidates();
    }
    if let (Some(secret), Some(&first_net)) = (w.secret_read.clone(), w.network_parts.first()) {
        w.parts[first_net].findings.push(Finding {
            rule: RuleId::SecretExfiltrate as usize,
            reason: format!("the line reads {secret} and reaches the network"),
            outside_write: false,
        });
    }
    let parts: Vec<PartVerdict> = w.parts.iter().map(|p| part_verdict(cls, ctx, p)).collect();
    if parts.is_empty() {
        let (id, reason) = match ctx {
            Context::Line => (RuleId::DefaultEmpty, "an empty line: nothing to judge"),
            Context::Exec => (RuleId::ExecRun, "nothing to judge"),
        };
        let p = judge(cls, ctx, cls.settings().mode, id as usize, reason, line);
        return finish(vec![p]);
    }
    finish(parts)
}

fn finish(parts: Vec<PartVerdict>) -> Verdict {
    let worst = parts
        .iter()
        .enumerate()
        .max_by(|(ia, a), (ib, b)| severity(a).cmp(&severity(b)).then(ib.cmp(ia)))
        .map(|(_, p)| p.clone())
        .expect("finish is called with at least one part");
    Verdict {
        level: worst.level,
        absolute: worst.absolute,
        action: worst.action,
        always_offered: worst.level == Level::Yellow && worst.action == Action::Ask,
        rule: worst.rule,
        part: worst.part,
        reason: worst.reason,
        parts,
    }
}

/// A verdict of a single rule for the whole text.
pub fn single(
    cls: &Classifier,
    ctx: Context,
    text: &str,
    id: RuleId,
    reason: impl Into<String>,
) -> Verdict {
    let p = judge(
        cls,
        ctx,
        cls.settings().mode,
        id as usize,
        &reason.into(),
        text,
    );
    finish(vec![p])
}

/// Adds a whole-line finding to a verdict and recomputes the worst part.
pub fn raise(cls: &Classifier, v: &mut Verdict, ctx: Context, id: RuleId, reason: &str) {
    let p = judge(
        cls,
        ctx,
        cls.settings().mode,
        id as usize,
        reason,
        &v.part.clone(),
    );
    let mut parts = std::mem::take(&mut v.parts);
    parts.push(p);
    *v = finish(parts);
}

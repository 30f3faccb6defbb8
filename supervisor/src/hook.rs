//! `fence hook AGENT`: an agent's pre-tool hook (SPEC §6). The agent writes
//! one tool call as JSON on stdin; fence judges it with the policy crate
//! (shell lines exactly as `fence check` does) and answers in the agent's own
//! hook protocol on stdout.
//!
//! Three protocols, as their documentation describes them:
//! - Claude Code `PreToolUse`: `hookSpecificOutput.permissionDecision`
//!   `allow`/`ask`/`deny` with `permissionDecisionReason`, exit 0.
//! - Codex `PreToolUse`: the same wire format, but Codex acts on `deny` only
//!   (it reports `allow` and `ask` as unsupported and runs the call). fence
//!   answers an allow with no output and refuses what it would ask.
//! - Gemini CLI `BeforeTool`: top-level `decision` `allow`/`deny` with
//!   `reason`; no ask either, so what fence would ask is refused.
//!
//! Input fence cannot judge (not JSON, fields missing, too large, an unknown
//! agent) is refused: a deny answer where the protocol has one, the reason on
//! stderr, and exit status 2, which all three agents read as "block".

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Args;
use policy::{Action, Classifier, Mode, ToolCall, ToolKind, Verdict};
use serde_json::{Map, Value, json};

use crate::escape::if_unsafe;
use crate::session;

/// The exit status every supported agent reads as "block this call".
pub const EXIT_BLOCK: u8 = 2;

/// The most input read from stdin. A tool call is a few kilobytes; a `Write`
/// of a large file is the largest there is. Past this the call is refused.
pub const MAX_INPUT: u64 = 8 << 20;

#[derive(Args, Debug)]
pub struct HookArgs {
    /// The agent whose hook protocol to speak: claude-code, codex or gemini.
    #[arg(value_name = "AGENT")]
    agent: String,
    /// The worktree (default: the project directory the agent names, else the
    /// top of the git worktree of the call's cwd, else that cwd).
    #[arg(long, value_name = "DIR")]
    worktree: Option<PathBuf>,
    /// Accept / or $HOME as the worktree.
    #[arg(long)]
    force_worktree: bool,
    /// default, auto, plan or ask-all (default: from config, as for check).
    #[arg(long, value_name = "MODE", value_parser = crate::parse_mode)]
    mode: Option<Mode>,
    /// Config file to use instead of ~/.config/fence/config.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// The agents whose hook protocol fence speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
}

impl Agent {
    pub fn from_name(s: &str) -> Option<Agent> {
        match s {
            "claude-code" | "claude" => Some(Agent::ClaudeCode),
            "codex" => Some(Agent::Codex),
            "gemini" | "gemini-cli" => Some(Agent::Gemini),
            _ => None,
        }
    }

    fn display(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
        }
    }

    /// The event this hook answers.
    fn event(self) -> &'static str {
        match self {
            Agent::ClaudeCode | Agent::Codex => "PreToolUse",
            Agent::Gemini => "BeforeTool",
        }
    }

    /// Environment variables in which the agent names its project directory.
    fn project_dir_vars(self) -> &'static [&'static str] {
        match self {
            Agent::ClaudeCode => &["CLAUDE_PROJECT_DIR"],
            Agent::Gemini => &["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
            Agent::Codex => &[],
        }
    }

    /// Whether the protocol can ask the person at the agent.
    fn can_ask(self) -> bool {
        self == Agent::ClaudeCode
    }
}

/// What fence answers: the JSON on stdout (none where the protocol takes
/// silence for "go on"), and the exit status.
struct Answer {
    stdout: Option<Value>,
    exit: u8,
}

pub fn run(a: HookArgs) -> u8 {
    let Some(agent) = Agent::from_name(&a.agent) else {
        // No protocol to answer in: exit 2 blocks in every supported agent.
        eprintln!(
            "fence: hook: unknown agent `{}` (expected claude-code, codex or gemini); the call is refused",
            if_unsafe(&a.agent)
        );
        return EXIT_BLOCK;
    };
    let answer = match judge_stdin(agent, &a) {
        Ok(verdict) => answer_for(agent, &verdict),
        Err(e) => {
            let msg = format!("fence cannot judge this call, so it is refused: {e:#}");
            eprintln!("fence: hook: {}", if_unsafe(&format!("{e:#}")));
            refusal(agent, &if_unsafe(&msg))
        }
    };
    if let Some(v) = answer.stdout {
        let mut out = std::io::stdout().lock();
        // An agent that stopped reading learns nothing more from us; the exit
        // status still carries the decision.
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    }
    answer.exit
}

/// A JSON text none of whose objects names a key twice. serde_json keeps the last of two
/// equal keys (`{"command": "rm -rf ~", "command": "ls"}` reads as `ls`), and a reader
/// that keeps the first would run what fence did not judge: such input is refused.
/// Why by hand: serde_json has no switch for it; this visitor walks the text once.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_i64<E>(self, _: i64) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_u64<E>(self, _: u64) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_f64<E>(self, _: f64) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_str<E>(self, _: &str) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_unit<E>(self) -> std::result::Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<UniqueKeys, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} appears twice in one object"
                )));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }
}

/// Reads the call from stdin and judges it.
fn judge_stdin(agent: Agent, a: &HookArgs) -> Result<Verdict> {
    let mut buf = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut buf)
        .context("cannot read the hook input from stdin")?;
    if buf.len() as u64 > MAX_INPUT {
        bail!("the hook input is larger than {} MiB", MAX_INPUT >> 20);
    }
    serde_json::from_slice::<UniqueKeys>(&buf)
        .context("the hook input is not JSON fence can judge")?;
    let input: Value = serde_json::from_slice(&buf).context("the hook input is not JSON")?;
    let call = HookInput::parse(agent, &input)?;
    let env = session::environment();
    let home = session::home_of(&env);
    // The agent expands `~` itself (from the password database when HOME is unset): a
    // path fence cannot place is not judged.
    let tilde = |p: &String| p == "~" || p.starts_with("~/");
    if home.is_none() && call.tool.paths.iter().chain(&call.tool.patterns).any(tilde) {
        bail!(
            "the call names a path under `~`, and HOME is not set: fence cannot tell where it leads"
        );
    }
    let (project_dir, source) = match &a.worktree {
        Some(dir) => (Some(dir.clone()), "--worktree".to_string()),
        None => agent
            .project_dir_vars()
            .iter()
            .find_map(|v| {
                env.get(*v)
                    .filter(|d| !d.is_empty())
                    .map(|d| (Some(PathBuf::from(d)), format!("${v}")))
            })
            .unwrap_or((None, "the call's cwd".to_string())),
    };
    let worktree = session::find_worktree(
        project_dir.as_deref(),
        &call.cwd,
        home.as_deref(),
        a.force_worktree,
    )
    .with_context(|| format!("no worktree from {source}"))?;
    // Plan mode is the strictest: taking it from the agent can only tighten.
    let mode = if call.agent_plans {
        Some(Mode::Plan)
    } else {
        a.mode
    };
    let mut loaded = session::load(worktree, mode, a.config.as_deref())?;
    for w in &loaded.warnings {
        eprintln!("fence: warning: {}", if_unsafe(&w.to_string()));
    }
    session::protect_git_code(&mut loaded.settings);
    let classifier = Classifier::new(loaded.settings)?;
    Ok(classifier.classify_tool(&call.tool, &call.run_cwd))
}

/// The fields of a hook input fence needs.
struct HookInput {
    /// The agent's working directory: the worktree is found from it.
    cwd: PathBuf,
    /// Where the tool runs, which it is judged from (Gemini's `dir_path`, else `cwd`).
    run_cwd: PathBuf,
    tool: ToolCall,
    /// The agent says it is in plan mode (Claude Code's and Codex's
    /// `permission_mode`): fence's plan mode applies for the turn.
    agent_plans: bool,
}

impl HookInput {
    fn parse(agent: Agent, v: &Value) -> Result<HookInput> {
        let obj = v
            .as_object()
            .ok_or_else(|| anyhow!("the hook input is not a JSON object"))?;
        let event = string_field(obj, "hook_event_name")?;
        if event != agent.event() {
            bail!(
                "this hook answers {} {}, and was called for `{}`",
                agent.display(),
                agent.event(),
                event
            );
        }
        string_field(obj, "session_id")?;
        let cwd = PathBuf::from(string_field(obj, "cwd")?);
        if !cwd.is_absolute() {
            bail!("`cwd` is not an absolute path: {}", cwd.display());
        }
        if !cwd.is_dir() {
            bail!("`cwd` is not a directory: {}", cwd.display());
        }
        let name = string_field(obj, "tool_name")?;
        if name.is_empty() {
            bail!("`tool_name` is empty");
        }
        let input = obj
            .get("tool_input")
            .ok_or_else(|| anyhow!("the field `tool_input` is missing"))?
            .as_object()
            .ok_or_else(|| anyhow!("the field `tool_input` is not an object"))?;
        let tool = tool_call(agent, name, input)?;
        // Gemini CLI runs a shell command in the folder its `dir_path` names, resolved
        // against the project as Node's `path.resolve` does (`..` taken away as text, not
        // through links): the line is judged from there. An input naming the folder under
        // another key is not judged (which one the agent runs in cannot be told).
        let run_cwd = match (agent, tool.kind) {
            (Agent::Gemini, ToolKind::Shell) => {
                if input.get("directory").is_some_and(|v| !v.is_null()) {
                    bail!("{name}: tool_input.directory: fence judges Gemini's dir_path only");
                }
                match input.get("dir_path") {
                    None | Some(Value::Null) => cwd.clone(),
                    Some(Value::String(d)) if !d.is_empty() => {
                        if d.contains('\0') {
                            bail!("{name}: tool_input.dir_path holds a NUL byte");
                        }
                        // As text, as Node's `path.resolve` does (`..` not through links).
                        let dir = policy::path::normalize(&cwd, Path::new(d));
                        if !dir.is_dir() {
                            bail!("{name}: tool_input.dir_path is not a directory: {d}");
                        }
                        dir
                    }
                    Some(_) => bail!("{name}: tool_input.dir_path is not a directory path"),
                }
            }
            _ => cwd.clone(),
        };
        let agent_plans = match obj.get("permission_mode") {
            None | Some(Value::Null) => false,
            Some(Value::String(m)) => m == "plan",
            Some(_) => bail!("the field `permission_mode` is not a string"),
        };
        Ok(HookInput {
            cwd,
            run_cwd,
            tool,
            agent_plans,
        })
    }
}

fn string_field<'v>(obj: &'v Map<String, Value>, key: &str) -> Result<&'v str> {
    match obj.get(key) {
        None => bail!("the field `{key}` is missing"),
        Some(Value::String(s)) => Ok(s),
        Some(_) => bail!("the field `{key}` is not a string"),
    }
}

/// How one agent's tool names its inputs.
struct ToolSpec {
    kind: ToolKind,
    /// Keys that may hold the path the tool works on (the first present wins).
    path_keys: &'static [&'static str],
    /// The path is required (a read or write of one file).
    path_required: bool,
    /// Keys that hold a glob pattern (a string or an array of strings).
    pattern_keys: &'static [&'static str],
    /// Keys that hold arrays of paths or patterns, each taken as a pattern.
    path_list_keys: &'static [&'static str],
    /// The key holding the shell line or patch text.
    text_key: Option<&'static str>,
}

const fn spec(kind: ToolKind) -> ToolSpec {
    ToolSpec {
        kind,
        path_keys: &[],
        path_required: false,
        pattern_keys: &[],
        path_list_keys: &[],
        text_key: None,
    }
}

const fn shell(key: &'static str) -> ToolSpec {
    ToolSpec {
        text_key: Some(key),
        ..spec(ToolKind::Shell)
    }
}

const fn file(kind: ToolKind, keys: &'static [&'static str]) -> ToolSpec {
    ToolSpec {
        path_keys: keys,
        path_required: true,
        ..spec(kind)
    }
}

const fn tree(
    kind: ToolKind,
    keys: &'static [&'static str],
    patterns: &'static [&'static str],
) -> ToolSpec {
    ToolSpec {
        path_keys: keys,
        pattern_keys: patterns,
        ..spec(kind)
    }
}

/// Each agent's tools, by the names its hook input uses. MCP tools
/// (`mcp__server__tool`) and names not listed are handled by [`tool_spec`].
fn tool_table(agent: Agent) -> &'static [(&'static str, ToolSpec)] {
    use ToolKind::*;
    const CLAUDE: &[(&str, ToolSpec)] = &[
        ("Bash", shell("command")),
        ("Read", file(ReadFile, &["file_path"])),
        ("NotebookRead", file(ReadFile, &["notebook_path"])),
        ("LS", tree(ListTree, &["path"], &[])),
        ("Glob", tree(ListTree, &["path"], &["pattern"])),
        ("Grep", tree(SearchTree, &["path"], &["glob"])),
        ("TodoRead", spec(Bookkeeping)),
        ("TodoWrite", spec(Bookkeeping)),
        ("Write", file(Edit, &["file_path"])),
        ("Edit", file(Edit, &["file_path"])),
        ("MultiEdit", file(Edit, &["file_path"])),
        ("NotebookEdit", file(Edit, &["notebook_path"])),
        ("WebFetch", spec(Web)),
        ("WebSearch", spec(Web)),
    ];
    // Codex sends its shell tools as `Bash` and every file edit as
    // `apply_patch`, the patch in `command`.
    const CODEX: &[(&str, ToolSpec)] = &[
        ("Bash", shell("command")),
        (
            "apply_patch",
            ToolSpec {
                text_key: Some("command"),
                ..spec(Patch)
            },
        ),
    ];
    // Gemini CLI's built-in tools; their path parameter has had several
    // names across releases, so each is looked for.
    const GEMINI_FILE: &[&str] = &["file_path", "absolute_path", "path"];
    const GEMINI_DIR: &[&str] = &["dir_path", "path"];
    const GEMINI: &[(&str, ToolSpec)] = &[
        ("run_shell_command", shell("command")),
        ("read_file", file(ReadFile, GEMINI_FILE)),
        (
            "read_many_files",
            ToolSpec {
                pattern_keys: &["include"],
                path_list_keys: &["paths"],
                ..spec(SearchTree)
            },
        ),
        ("list_directory", tree(ListTree, GEMINI_DIR, &[])),
        ("glob", tree(ListTree, GEMINI_DIR, &["pattern"])),
        (
            "search_file_content",
            tree(SearchTree, GEMINI_DIR, &["include"]),
        ),
        ("grep_search", tree(SearchTree, GEMINI_DIR, &["include"])),
        ("write_file", file(Edit, GEMINI_FILE)),
        ("replace", file(Edit, GEMINI_FILE)),
        ("write_todos", spec(Bookkeeping)),
        ("web_fetch", spec(Web)),
        ("google_web_search", spec(Web)),
    ];
    match agent {
        Agent::ClaudeCode => CLAUDE,
        Agent::Codex => CODEX,
        Agent::Gemini => GEMINI,
    }
}

fn tool_spec(agent: Agent, name: &str) -> &'static ToolSpec {
    static MCP: ToolSpec = spec(ToolKind::Mcp);
    static UNKNOWN: ToolSpec = spec(ToolKind::Unknown);
    if let Some((_, s)) = tool_table(agent).iter().find(|(n, _)| *n == name) {
        return s;
    }
    if name.starts_with("mcp__") {
        &MCP
    } else {
        &UNKNOWN
    }
}

/// The tool call in the policy's terms, from the agent's `tool_input`.
fn tool_call(agent: Agent, name: &str, input: &Map<String, Value>) -> Result<ToolCall> {
    let spec = tool_spec(agent, name);
    let mut call = ToolCall::new(name, spec.kind);
    if let Some(key) = spec.text_key {
        call.text = Some(
            string_field(input, key)
                .with_context(|| format!("{name}: tool_input"))?
                .to_string(),
        );
    }
    // Every key that names a path is judged, the worst winning: an agent's release may
    // read another of the names its parameter has had.
    let mut named_path = false;
    for key in spec.path_keys {
        match input.get(*key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if s.contains('\0') => {
                bail!("{name}: tool_input.{key} holds a NUL byte")
            }
            Some(Value::String(s)) if !s.is_empty() => {
                if !call.paths.contains(s) {
                    call.paths.push(s.clone());
                }
                named_path = true;
            }
            Some(_) => bail!("{name}: tool_input.{key} is not a path"),
        }
    }
    if spec.path_required && !named_path {
        bail!(
            "{name}: tool_input names no path (expected {})",
            spec.path_keys.join(" or ")
        );
    }
    for key in spec.pattern_keys.iter().chain(spec.path_list_keys) {
        match input.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => call.patterns.push(s.clone()),
            Some(Value::Array(items)) => {
                for item in items {
                    let s = item
                        .as_str()
                        .ok_or_else(|| anyhow!("{name}: tool_input.{key} holds a non-string"))?;
                    call.patterns.push(s.to_string());
                }
            }
            Some(_) => bail!("{name}: tool_input.{key} is not a pattern"),
        }
    }
    Ok(call)
}

/// The reason text of a verdict, as the agent and the person see it: the
/// level, the rule and why, and the part that decided.
fn reason_text(v: &Verdict) -> String {
    let abs = if v.absolute { ", absolute" } else { "" };
    let mut s = format!(
        "fence: {}{abs} (rule {}): {}",
        v.level,
        v.rule,
        if_unsafe(&v.reason)
    );
    if !v.part.is_empty() {
        s.push_str(&format!(" — in `{}`", if_unsafe(&v.part)));
    }
    s
}

/// The answer to a judged call in the agent's protocol.
fn answer_for(agent: Agent, v: &Verdict) -> Answer {
    let reason = reason_text(v);
    let action = match v.action {
        Action::Ask if !agent.can_ask() => {
            let why = format!(
                "fence asks a person before this runs, and {}'s hook cannot ask, so it is refused \
                 (the user may run it, or allow it in fence's config). {reason}",
                agent.display()
            );
            return decision(agent, Action::Deny, why);
        }
        a => a,
    };
    decision(agent, action, reason)
}

/// A refusal of input fence could not judge: deny, and exit 2 so that an
/// agent which does not read the answer still blocks.
fn refusal(agent: Agent, reason: &str) -> Answer {
    let mut a = decision(agent, Action::Deny, reason.to_string());
    a.exit = EXIT_BLOCK;
    a
}

fn decision(agent: Agent, action: Action, reason: String) -> Answer {
    let stdout = match agent {
        Agent::ClaudeCode => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": action.as_str(),
                "permissionDecisionReason": reason,
            }
        })),
        // Codex runs the call when the hook says nothing; `allow` is not a
        // decision it accepts.
        Agent::Codex => (action == Action::Deny).then(|| {
            json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            })
        }),
        Agent::Gemini => Some(json!({
            "decision": if action == Action::Deny { "deny" } else { "allow" },
            "reason": reason,
        })),
    };
    Answer { stdout, exit: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_table_names_each_tool_once() {
        for agent in [Agent::ClaudeCode, Agent::Codex, Agent::Gemini] {
            let names: Vec<&str> = tool_table(agent).iter().map(|(n, _)| *n).collect();
            let mut sorted = names.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{agent:?}");
        }
    }

    #[test]
    fn an_ask_is_refused_where_the_protocol_cannot_ask() {
        let v = Verdict {
            level: policy::Level::Yellow,
            absolute: false,
            action: Action::Ask,
            always_offered: true,
            rule: "default.unknown".into(),
            part: "cargo build".into(),
            reason: "no rule recognises this command".into(),
            parts: vec![],
        };
        let claude = answer_for(Agent::ClaudeCode, &v).stdout.unwrap();
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "ask");
        let codex = answer_for(Agent::Codex, &v).stdout.unwrap();
        assert_eq!(codex["hookSpecificOutput"]["permissionDecision"], "deny");
        let gemini = answer_for(Agent::Gemini, &v).stdout.unwrap();
        assert_eq!(gemini["decision"], "deny");
        assert!(
            gemini["reason"]
                .as_str()
                .unwrap()
                .contains("default.unknown")
        );
    }
}

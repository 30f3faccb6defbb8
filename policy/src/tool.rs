//! Agent tool calls (SPEC §6): the per-tool levels the agent hooks apply.
//!
//! A hook says what kind of tool was called and which paths it names; the
//! verdict comes from the same rule table, path resolution and secret paths
//! as a shell line. A shell tool is judged as a line, a patch tool by the
//! paths its file lines touch, an edit tool by where its file lands (green
//! inside the worktree, red outside, protected paths red), a reading tool is
//! green unless it reads a credential.

use std::path::{Component, Path, PathBuf};

use crate::level::Context;
use crate::rules::RuleId;
use crate::verdict::{self, Verdict};
use crate::walk::Walker;
use crate::word::Arg;
use crate::{Classifier, path};

/// What a tool does, as far as the policy is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Runs a shell line (`Bash`, `run_shell_command`): judged as a line.
    Shell,
    /// Applies a patch (Codex `apply_patch`): judged by the paths it touches.
    Patch,
    /// Reads the files it names (`Read`, `NotebookRead`, `read_file`).
    ReadFile,
    /// Reads the contents of every file below the directories it names
    /// (`Grep`, `read_many_files`).
    SearchTree,
    /// Lists names below the directories it names (`LS`, `Glob`).
    ListTree,
    /// Creates, overwrites or edits the files it names (`Write`, `Edit`,
    /// `MultiEdit`, `NotebookEdit`, `write_file`, `replace`).
    Edit,
    /// Reaches the network (`WebFetch`, `WebSearch`).
    Web,
    /// The agent's own bookkeeping, touching no file of the worktree
    /// (`TodoRead`, `TodoWrite`).
    Bookkeeping,
    /// A tool of an MCP server (`mcp__server__tool`).
    Mcp,
    /// A tool fence does not know.
    Unknown,
}

/// One tool call an agent proposes.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool's name as the agent gave it.
    pub name: String,
    pub kind: ToolKind,
    /// The paths the call names, as given (relative ones against the cwd,
    /// `~` against the home directory).
    pub paths: Vec<String>,
    /// Glob patterns the call names, taken below each of `paths` (or the
    /// cwd when it names none).
    pub patterns: Vec<String>,
    /// The shell line (`Shell`) or the patch text (`Patch`).
    pub text: Option<String>,
}

impl ToolCall {
    pub fn new(name: impl Into<String>, kind: ToolKind) -> ToolCall {
        ToolCall {
            name: name.into(),
            kind,
            paths: Vec::new(),
            patterns: Vec::new(),
            text: None,
        }
    }
}

impl Classifier {
    /// Classifies one agent tool call proposed in `cwd` (SPEC §6).
    pub fn classify_tool(&self, call: &ToolCall, cwd: &Path) -> Verdict {
        let cwd = path::resolve(self.fs.as_ref(), Path::new("/"), cwd, true);
        let name = call.name.as_str();
        let single =
            |id: RuleId, reason: String| verdict::single(self, Context::Line, name, id, reason);
        match call.kind {
            ToolKind::Shell => match &call.text {
                Some(line) => self.classify_line(line, &cwd),
                None => single(RuleId::InvalidInput, format!("{name} names no command")),
            },
            ToolKind::Patch => match &call.text {
                Some(patch) => self.classify_patch(patch, &cwd),
                None => single(RuleId::InvalidInput, format!("{name} carries no patch")),
            },
            ToolKind::Web => single(RuleId::ToolWeb, format!("{name} reaches the network")),
            ToolKind::Mcp => single(
                RuleId::ToolMcp,
                format!("{name} is a tool of an MCP server: ask"),
            ),
            ToolKind::Unknown => single(
                RuleId::ToolUnknown,
                format!("fence does not know the tool {name}: ask"),
            ),
            ToolKind::Bookkeeping => single(
                RuleId::ToolRead,
                format!("{name} keeps the agent's own to-do list"),
            ),
            ToolKind::ReadFile | ToolKind::SearchTree | ToolKind::ListTree => {
                self.classify_tool_read(call, &cwd)
            }
            ToolKind::Edit => self.classify_tool_edit(call, &cwd),
        }
    }

    /// A reading tool: green, except where it reads a credential (the same
    /// secret paths that make `cat ~/.ssh/id_rsa` red).
    fn classify_tool_read(&self, call: &ToolCall, cwd: &Path) -> Verdict {
        let name = call.name.as_str();
        if call.kind == ToolKind::ReadFile && call.paths.is_empty() {
            return verdict::single(
                self,
                Context::Line,
                name,
                RuleId::InvalidInput,
                format!("{name} names no file to read"),
            );
        }
        // Judged within the budget a shell line gets: a call with thousands of brace
        // patterns (Gemini's `read_many_files`) must not hold the agent's hook past its
        // timeout, which some agents treat as an allow.
        let deadline = std::time::Instant::now() + TOOL_BUDGET;
        let too_long = |w: &mut Walker<'_>| {
            w.find(
                RuleId::TooComplex,
                format!("{name} names more places than fence can judge within its limits"),
            );
        };
        if call.paths.len() + call.patterns.len() > MOST_TOOL_PLACES {
            let mut w = Walker::new(self, &self.settings, Context::Line, Some(cwd.into()), None);
            too_long(&mut w);
            w.push_part(name.to_string());
            return verdict::assemble(self, Context::Line, name, w);
        }
        let mut w = Walker::new(self, &self.settings, Context::Line, Some(cwd.into()), None);
        for (shown, target) in self.tool_targets(call, cwd) {
            if std::time::Instant::now() > deadline {
                too_long(&mut w);
                w.push_part(format!("{name} {shown}"));
                break;
            }
            if is_process_secret(&target) {
                // A process's environment and memory hold the agent's own credentials (its
                // API keys): read as a credential, as `cat /proc/self/environ` is.
                w.find(
                    RuleId::SecretRead,
                    format!(
                        "{name} reads a process's environment or memory: {}",
                        target.display()
                    ),
                );
            } else if self.is_secret(&target) {
                w.find(
                    RuleId::SecretRead,
                    format!("{name} reads a credential: {}", target.display()),
                );
            } else if call.kind == ToolKind::SearchTree && self.holds_secret(&target) {
                // A search reads every file below its root.
                w.find(
                    RuleId::SecretRead,
                    format!(
                        "{name} searches {}, which holds a credential",
                        target.display()
                    ),
                );
            } else {
                w.find(
                    RuleId::ToolRead,
                    format!("{name} reads {}", target.display()),
                );
            }
            w.push_part(format!("{name} {shown}"));
        }
        for (shown, secret) in self.patterns_reaching_secrets(call, cwd, deadline) {
            w.find(
                RuleId::SecretRead,
                format!("{name} can match a credential: {secret}"),
            );
            w.push_part(format!("{name} {shown}"));
        }
        verdict::assemble(self, Context::Line, name, w)
    }

    /// The secret folders whose entries the call's glob patterns can list, below each place
    /// it searches (`~/.ss?/id_*`, `/r*/.ssh/*`, `/root/**/id_rsa`), as (shown, secret). A
    /// `**` component matches any depth: the folder before it is judged as listed whole.
    fn patterns_reaching_secrets(
        &self,
        call: &ToolCall,
        cwd: &Path,
        deadline: std::time::Instant,
    ) -> Vec<(String, String)> {
        let fs = self.fs.as_ref();
        let roots = self.tool_roots(call, cwd);
        let mut out = Vec::new();
        for pattern in &call.patterns {
            if std::time::Instant::now() > deadline {
                // Past the budget: every pattern left is taken as one that may list a
                // credential (never green).
                out.push((
                    pattern.clone(),
                    "a place fence could not judge in time".into(),
                ));
                break;
            }
            let expanded = self.expand_home(pattern);
            if !expanded.contains(['*', '?', '[']) {
                continue;
            }
            for (shown, root) in &roots {
                let whole = path::normalize(root, Path::new(&expanded));
                let parts: Vec<_> = whole.components().collect();
                let reached = match parts.iter().position(|c| c.as_os_str() == "**") {
                    Some(i) => {
                        let before: PathBuf = parts[..i].iter().collect();
                        let fixed = fixed_prefix(&before.to_string_lossy());
                        let dir = path::resolve(fs, cwd, &fixed, true);
                        self.holds_secret(&dir)
                            .then(|| format!("below {}", dir.display()))
                            .or_else(|| self.is_secret(&dir).then(|| dir.display().to_string()))
                    }
                    // The folders whose entries it lists: a name it matches beside a
                    // secret (`/etc/*` lists `shadow`) says only that it exists.
                    None => whole
                        .parent()
                        .and_then(|listed| self.glob_reaches_secret(listed, false)),
                };
                if let Some(secret) = reached {
                    out.push((format!("{shown} {pattern}"), secret));
                }
            }
        }
        out
    }

    /// An edit tool: each file it names is judged as a write (the path fence,
    /// protected paths, system roots), and as a read when it is a credential.
    fn classify_tool_edit(&self, call: &ToolCall, cwd: &Path) -> Verdict {
        let name = call.name.as_str();
        if call.paths.is_empty() {
            return verdict::single(
                self,
                Context::Line,
                name,
                RuleId::InvalidInput,
                format!("{name} names no file to write"),
            );
        }
        let mut w = Walker::new(self, &self.settings, Context::Line, Some(cwd.into()), None);
        for raw in &call.paths {
            let text = self.expand_home(raw);
            let arg = Arg {
                home_based: raw.starts_with('~'),
                ..Arg::literal(text.clone())
            };
            w.check_write_target(&arg, true, name);
            // A tool that takes `..` off the text before it opens the file (Gemini CLI's
            // `path.resolve`) writes elsewhere than the kernel would reach through a link
            // before the `..` (`lnsub/../.gitmodules`): both places are judged.
            if Path::new(&text)
                .components()
                .any(|c| c == std::path::Component::ParentDir)
            {
                let lexical = path::normalize(cwd, Path::new(&text));
                w.check_write_target(&Arg::literal(lexical.to_string_lossy()), true, name);
            }
            let target = path::resolve(self.fs.as_ref(), cwd, Path::new(&text), true);
            if self.is_secret(&target) {
                w.find(
                    RuleId::SecretRead,
                    format!("{name} edits a credential: {}", target.display()),
                );
            }
            // The line rules let a command write `/dev/stdout` (its own output); a tool's
            // write there reaches the agent's own descriptors (the user's terminal, a log
            // it truncates): outside the worktree, as any device or `/proc` entry.
            if target.starts_with("/dev") || target.starts_with("/proc") {
                w.find(
                    RuleId::PathOutside,
                    format!(
                        "{name} writes a device or a process's entry: {}",
                        target.display()
                    ),
                );
            }
            as_tool_edit(&mut w);
            if w.cur.is_empty() {
                // The session's temp directory or a configured exception.
                w.find(
                    RuleId::ToolEditInside,
                    format!(
                        "{name} writes {}, which the session may write",
                        target.display()
                    ),
                );
            }
            w.push_part(format!("{name} {raw}"));
        }
        verdict::assemble(self, Context::Line, name, w)
    }

    /// The places a reading tool starts from, as (shown, resolved): each path it names, or
    /// the cwd.
    fn tool_roots(&self, call: &ToolCall, cwd: &Path) -> Vec<(String, PathBuf)> {
        if call.paths.is_empty() {
            return vec![(".".to_string(), cwd.to_path_buf())];
        }
        let fs = self.fs.as_ref();
        let mut out = Vec::new();
        for p in &call.paths {
            let text = self.expand_home(p);
            out.push((p.clone(), path::resolve(fs, cwd, Path::new(&text), true)));
            // A tool that takes `..` off the text before it opens the file (Node's
            // `path.resolve`, Codex's path normalization) reads elsewhere than the kernel
            // would reach through a link before the `..` (`/bin/../etc/shadow` with `/bin`
            // a link to `usr/bin`): both places are judged.
            if has_parent_dir(&text) {
                let lexical = path::normalize(cwd, Path::new(&text));
                out.push((p.clone(), path::resolve(fs, cwd, &lexical, true)));
            }
        }
        out
    }

    /// Every place a reading tool reaches, as (shown, resolved): each path it
    /// names (or the cwd), and below each the fixed part of each pattern.
    fn tool_targets(&self, call: &ToolCall, cwd: &Path) -> Vec<(String, PathBuf)> {
        let fs = self.fs.as_ref();
        let roots = self.tool_roots(call, cwd);
        let mut out = roots.clone();
        for pattern in &call.patterns {
            let fixed = fixed_prefix(&self.expand_home(pattern));
            if fixed.as_os_str().is_empty() {
                continue;
            }
            for (shown, root) in &roots {
                let target = path::resolve(fs, root, &fixed, true);
                out.push((format!("{shown} {pattern}"), target));
                if has_parent_dir(&fixed.to_string_lossy()) {
                    let lexical = path::normalize(root, &fixed);
                    out.push((
                        format!("{shown} {pattern}"),
                        path::resolve(fs, root, &lexical, true),
                    ));
                }
            }
        }
        out
    }

    /// `~` and `~/…` against the home directory; anything else as it is.
    fn expand_home(&self, p: &str) -> String {
        match (&self.home, p.strip_prefix('~')) {
            (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", home.display())
            }
            _ => p.to_string(),
        }
    }
}

/// How long a tool call's places may take to judge (a shell line gets the same).
const TOOL_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// Most paths and patterns one tool call may name to be judged at all.
const MOST_TOOL_PLACES: usize = 4096;

/// Whether `text` holds a `..` component.
fn has_parent_dir(text: &str) -> bool {
    Path::new(text)
        .components()
        .any(|c| c == Component::ParentDir)
}

/// A process's environment, memory or auxiliary vector under `/proc` (`/proc/self/environ`,
/// `/proc/1/mem`): where an agent's own credentials lie.
fn is_process_secret(p: &Path) -> bool {
    let Ok(rest) = p.strip_prefix("/proc") else {
        return false;
    };
    let last = rest.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(last, "environ" | "mem" | "auxv") && rest.components().count() >= 2
}

/// An edit tool's findings in the words of the tool rules: a write inside the
/// worktree is `tool.edit-inside` (green), one that leaves it is
/// `tool.write-outside` (red); refusals (system roots, block devices) and
/// protected paths keep their own rules.
pub(crate) fn as_tool_edit(w: &mut Walker<'_>) {
    for f in &mut w.cur {
        if f.rule == RuleId::WriteInside as usize {
            f.rule = RuleId::ToolEditInside as usize;
        } else if f.rule == RuleId::PathOutside as usize {
            f.rule = RuleId::ToolWriteOutside as usize;
        }
    }
}

/// The components of a glob pattern before the first one that holds a glob
/// character: the directory the pattern cannot leave.
fn fixed_prefix(pattern: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in Path::new(pattern).components() {
        if let Component::Normal(n) = c
            && n.to_string_lossy().contains(['*', '?', '[', '{'])
        {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_prefix_stops_at_the_first_glob() {
        assert_eq!(fixed_prefix("**/*.rs"), PathBuf::new());
        assert_eq!(fixed_prefix("src/**/*.rs"), PathBuf::from("src"));
        assert_eq!(
            fixed_prefix("/home/u/.ssh/id_*"),
            PathBuf::from("/home/u/.ssh")
        );
        assert_eq!(fixed_prefix("../../etc/{a,b}"), PathBuf::from("../../etc"));
        assert_eq!(fixed_prefix("a/b"), PathBuf::from("a/b"));
    }
}

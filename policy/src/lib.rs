//! fence's policy: given a shell line an agent proposes, or one `execve`
//! seen inside the sandbox, say green, yellow or red, which rule decided and
//! why, and what to do about it in the session's mode.
//!
//! The crate is pure: no process control, no seccomp. Its only window on the
//! system is [`FsView`], used to resolve symlinks in paths; everything else
//! (the worktree, the environment, the current git branch) is handed in.
//!
//! ```
//! use policy::{Classifier, Settings, Action};
//! let mut settings = Settings::for_worktree("/work/repo");
//! settings.home = Some("/home/dev".into());
//! let c = Classifier::new(settings).unwrap();
//! let v = c.classify_line("git status && rm -rf ~", std::path::Path::new("/work/repo"));
//! assert_eq!(v.action, Action::Deny);
//! assert_eq!(v.part, "rm -rf ~");
//! ```

mod builtin;
mod command;
pub mod config;
mod editor;
mod expand;
mod git;
mod level;
mod opts;
mod parse;
mod patch;
pub mod path;
pub mod profile;
pub mod refs;
pub mod rules;
mod runner;
mod sed;
mod tool;
mod tool_commands;
mod verdict;
mod walk;
mod word;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use command::{code_string_literals, is_python, pipeline_readers, program_name};
pub use config::{Config, ConfigError, ConfigSource, Warning};
pub use level::{Action, Context, Contexts, Level, Mode};
pub use path::{FsView, LexicalFs, RealFs};
pub use rules::{Rule, RuleId, RuleTable};
pub use tool::{ToolCall, ToolKind};
pub use verdict::{PartVerdict, Verdict};

use walk::Walker;

/// What the classifier knows about the session.
#[derive(Clone)]
pub struct Settings {
    /// The worktree: writes and paths are judged against it.
    pub worktree: PathBuf,
    /// The home directory, for `~` and `$HOME` (and the secret paths).
    pub home: Option<PathBuf>,
    /// The environment the line will run with, for `$VAR` expansion.
    pub env: HashMap<String, String>,
    pub mode: Mode,
    /// The worktree's current git branch, if known (for bare `git push`).
    pub current_branch: Option<String>,
    /// The session's private temp directory, when fence runs the session.
    pub session_tmp: Option<PathBuf>,
    /// Extra paths the line context treats like the exceptions list.
    pub exceptions: Vec<PathBuf>,
    /// Extra secret paths (`--deny-read`, config).
    pub deny_read: Vec<String>,
    /// Paths relative to the worktree protected besides SPEC's list, each with what lies
    /// beneath it: the hooks folder and the included config files the repository's git
    /// config names (found by the CLI).
    pub protected: Vec<PathBuf>,
    /// The rule table after config.
    pub table: RuleTable,
    /// How symlinks are read.
    pub fs: Arc<dyn FsView>,
}

impl Settings {
    /// Settings for a worktree with nothing else known: empty environment,
    /// the default rule table, the real filesystem.
    pub fn for_worktree(worktree: impl Into<PathBuf>) -> Settings {
        Settings {
            worktree: worktree.into(),
            home: None,
            env: HashMap::new(),
            mode: Mode::Default,
            current_branch: None,
            session_tmp: None,
            exceptions: Vec::new(),
            deny_read: Vec::new(),
            protected: Vec::new(),
            table: RuleTable::default(),
            fs: Arc::new(RealFs),
        }
    }
}

/// The default secret paths (SPEC §2): unreadable, and reading one in a line
/// that reaches the network is refused.
pub const DEFAULT_SECRETS: &[&str] = &[
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/gh",
    "~/.config/gcloud",
    "~/.azure",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials*",
    "~/.git-credentials",
    // git's credential store also reads and writes its XDG file.
    "~/.config/git/credentials",
    // Other services' credentials ([`EXTRA_SECRETS_IN_HOME`]).
    "~/.vault-token",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.config/rclone/rclone.conf",
    "~/.m2/settings.xml",
    "~/.s3cfg",
    "~/.boto",
    "~/.config/hub",
    "~/.gem/credentials",
    "~/.config/doctl/config.yaml",
    "~/.oci",
    "~/.config/containers/auth.json",
    "~/.pulumi/credentials.json",
    "~/.fly/config.yml",
    "~/.config/sops/age/keys.txt",
    "~/.kaggle/kaggle.json",
    "~/.config/glab-cli/config.yml",
    "/etc/shadow",
    "/etc/gshadow",
    // Their backups, which shadow's tools keep beside them (`fence run` hides them too).
    "/etc/shadow-",
    "/etc/gshadow-",
    // Debian's daily copies of them.
    "/var/backups/shadow.bak",
    "/var/backups/gshadow.bak",
    "/etc/sudoers*",
    "/etc/ssh/*_key",
    "/root",
];

/// Credentials in the home besides SPEC §2's list, relative to it, as common and as
/// plainly a key to someone's account: Vault's token, PostgreSQL's and MySQL's client
/// passwords, Terraform Cloud's token, rclone's remotes, Maven's repository passwords,
/// s3cmd's and boto's keys, hub's, RubyGems', DigitalOcean's, Oracle Cloud's, podman's
/// registry logins, Pulumi's, Fly's, sops' age keys, Kaggle's, GitLab
/// CLI's. Unreadable under `fence run`, and secrets to `fence check` as those of SPEC's
/// list are (the same names are in [`DEFAULT_SECRETS`]).
pub const EXTRA_SECRETS_IN_HOME: &[&str] = &[
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".terraform.d/credentials.tfrc.json",
    ".config/rclone/rclone.conf",
    ".m2/settings.xml",
    ".s3cfg",
    ".boto",
    ".config/hub",
    ".gem/credentials",
    ".config/doctl/config.yaml",
    ".oci",
    ".config/containers/auth.json",
    ".pulumi/credentials.json",
    ".fly/config.yml",
    ".config/sops/age/keys.txt",
    ".kaggle/kaggle.json",
    ".config/glab-cli/config.yml",
];

#[derive(Debug, Clone)]
enum Secret {
    Tree(PathBuf),
    /// A pattern, and the number of `/` in every path it matches where that is fixed
    /// (no `**`, no bracket that could be read as holding one): only the ancestor with
    /// that many is matched against it.
    Pattern(glob::Pattern, Option<usize>),
}

/// The texts of `path`'s ancestors, `path` itself first, as [`Path::ancestors`] gives
/// them, each with the number of `/` in it: each is a prefix of the text ending before a
/// `/` (a `/` is never part of a character, so the lossy text of an ancestor is this
/// prefix), then `/` itself for an absolute path. Linear in the text as a whole.
fn ancestor_texts(path: &str) -> impl Iterator<Item = (&str, usize)> {
    let trimmed = match path.trim_end_matches('/') {
        "" if path.starts_with('/') => "/",
        t => t,
    };
    let mut rest = Some((trimmed, trimmed.matches('/').count()));
    std::iter::from_fn(move || {
        let (current, slashes) = rest?;
        rest = match current.rfind('/') {
            _ if current == "/" => None,
            Some(i) => {
                // Only slashes before the last name: the root.
                let parent = match current[..i].trim_end_matches('/') {
                    "" => "/",
                    t => t,
                };
                Some((
                    parent,
                    slashes - current[parent.len()..].matches('/').count(),
                ))
            }
            None => Some(("", 0)).filter(|_| !current.is_empty()),
        };
        Some((current, slashes))
    })
}

/// Of an absolute path's text with no doubled or trailing `/`, the one ancestor with `n`
/// slashes, found from the start (`Some(None)`: none has); `None` where the text is not
/// so plain or `n` is below 2 (`/` and `/a` both have one), for [`ancestor_texts`].
fn ancestor_with_slashes(text: &str, n: usize) -> Option<Option<&str>> {
    if n < 2 || !text.starts_with('/') || text.ends_with('/') || text.contains("//") {
        return None;
    }
    // The ancestor with `n` slashes ends before the (n+1)-th, or is the whole text when
    // it has exactly `n`.
    Some(match text.match_indices('/').nth(n) {
        Some((end, _)) => Some(&text[..end]),
        None => (text.matches('/').count() == n).then_some(text),
    })
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("the worktree must be an absolute path: {0}")]
    RelativeWorktree(PathBuf),
}

/// The classifier for one session. Cheap to call from many threads.
#[derive(Clone)]
pub struct Classifier {
    settings: Settings,
    /// The worktree with symlinks resolved.
    worktree: PathBuf,
    home: Option<PathBuf>,
    session_tmp: Option<PathBuf>,
    exceptions: Vec<PathBuf>,
    secrets: Vec<Secret>,
    /// Whether a secret may lie inside the worktree (`deny_read = [".env"]`, a worktree at
    /// the home): then a relative word is looked up for it too, not only for leaving.
    secret_inside: bool,
    fs: Arc<dyn FsView>,
}

/// One `execve` as the supervisor sees it.
pub struct ExecEvent<'a> {
    /// argv as the program receives it (lossily decoded when not UTF-8).
    pub argv: &'a [String],
    /// The resolved program path.
    pub program: &'a Path,
    /// The process's working directory.
    pub cwd: ExecCwd<'a>,
    /// The current branch of the worktree, read at exec time.
    pub current_branch: Option<&'a str>,
    /// Variables of the exec's environment that bear on the judgement (for a git command,
    /// those naming its settings: `GIT_CONFIG_*`); a value of `None` is unknown.
    pub env: &'a [(String, Option<String>)],
}

/// An exec's working directory: known, or read from the process only if the judgement
/// needs it (most do not: `cc -c x.c`, `/bin/true`; and reading another process's costs a
/// /proc lookup, more than the rest of the judgement).
#[derive(Clone, Copy)]
pub enum ExecCwd<'a> {
    Known(&'a Path),
    /// Returns `None` when the directory cannot be read: relative paths are then unknown.
    Read(&'a (dyn Fn() -> Option<PathBuf> + Sync)),
}

impl Classifier {
    pub fn new(settings: Settings) -> Result<Classifier, SettingsError> {
        if !settings.worktree.is_absolute() {
            return Err(SettingsError::RelativeWorktree(settings.worktree.clone()));
        }
        let fs = settings.fs.clone();
        // Some thirty paths, most under the home: each link read once.
        let once = path::OnceFs::new(fs.as_ref());
        let real = |p: &Path| path::resolve(&once, Path::new("/"), p, true);
        let worktree = real(&settings.worktree);
        let home = settings.home.as_deref().map(real);
        let session_tmp = settings.session_tmp.as_deref().map(real);
        let exceptions = settings.exceptions.iter().map(|p| real(p)).collect();
        let mut secrets = Vec::new();
        for s in DEFAULT_SECRETS
            .iter()
            .map(|s| s.to_string())
            .chain(settings.deny_read.iter().cloned())
        {
            // `~/REST` in the home (`~` alone is the home), an absolute path as written, a
            // relative one in the worktree (`deny_read = [".env"]`), as `fence run` reads
            // them.
            let in_home = if s == "~" {
                Some("")
            } else {
                s.strip_prefix("~/")
            };
            let expanded = match (in_home, &home) {
                (Some(rest), Some(h)) => h.join(rest).display().to_string(),
                (Some(_), None) => continue,
                (None, _) if s.starts_with('~') => continue,
                (None, _) => worktree.join(&s).display().to_string(),
            };
            // `/root` is a secret unless the session lives there.
            if expanded == "/root"
                && (worktree.starts_with("/root") || home.as_deref() == Some(Path::new("/root")))
            {
                continue;
            }
            if expanded.contains(['*', '?', '[']) {
                if let Ok(p) = glob::Pattern::new(&expanded) {
                    let slashes = (!expanded.contains("**") && !expanded.contains('['))
                        .then(|| expanded.matches('/').count());
                    secrets.push(Secret::Pattern(p, slashes));
                }
            } else {
                secrets.push(Secret::Tree(real(Path::new(&expanded))));
            }
        }
        let secret_inside = secrets.iter().any(|s| match s {
            Secret::Tree(t) => t.starts_with(&worktree),
            Secret::Pattern(p, _) => {
                // The folder before the first pattern character.
                let text = p.as_str();
                let fixed = &text[..text.find(['*', '?', '[']).unwrap_or(text.len())];
                let folder = Path::new(&fixed[..fixed.rfind('/').map_or(0, |i| i + 1)]);
                folder.starts_with(&worktree) || worktree.starts_with(folder)
            }
        });
        Ok(Classifier {
            worktree,
            home,
            session_tmp,
            exceptions,
            secrets,
            secret_inside,
            fs,
            settings,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The worktree with symlinks resolved.
    pub fn worktree(&self) -> &Path {
        &self.worktree
    }

    pub fn table(&self) -> &RuleTable {
        &self.settings.table
    }

    /// Whether `p` (resolved) is one of the secret paths.
    /// Whether a secret path may lie inside the worktree.
    pub fn has_secret_inside(&self) -> bool {
        self.secret_inside
    }

    pub fn is_secret(&self, p: &Path) -> bool {
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        // Made once for every pattern, and each pattern looks only at the ancestors that
        // can match it: a line of thousands of `cd`s makes paths as deep, and making the
        // text again for each ancestor and pattern made judging it cubic in the line.
        let mut text: Option<std::borrow::Cow<'_, str>> = None;
        self.secrets.iter().any(|s| match s {
            Secret::Tree(t) => p.starts_with(t),
            Secret::Pattern(pat, slashes) => {
                let text = text.get_or_insert_with(|| p.to_string_lossy());
                match slashes.and_then(|n| ancestor_with_slashes(text, n)) {
                    Some(ancestor) => ancestor.is_some_and(|a| pat.matches_with(a, opts)),
                    None => ancestor_texts(text)
                        .filter(|(_, n)| slashes.is_none_or(|want| *n == want))
                        .any(|(a, _)| pat.matches_with(a, opts)),
                }
            }
        })
    }

    /// Whether a glob pattern (absolute, `..` applied) can name a secret path
    /// or a file below one, as the shell would expand it: `~/.ss?/*`,
    /// `/home/*/.ssh/id_rsa`, `~/.*/credentials`. With `whole_tree`, a
    /// directory it names that holds a secret counts too (a tool that reads
    /// every file below what it is given). `*` and `?` do not match a leading
    /// dot, as in bash without `dotglob`.
    pub fn glob_reaches_secret(&self, pattern: &Path, whole_tree: bool) -> Option<String> {
        // A tool's glob expands braces as the shell does (`~/{.ssh,.aws}/*`): each
        // alternative may reach one. Past the bound, the pattern is taken as reaching one
        // (it cannot be judged).
        let text = pattern.to_string_lossy();
        if text.contains('{') {
            let Some(alternatives) = brace_alternatives(&text, 256) else {
                return Some(format!("{text} (too many brace alternatives to judge)"));
            };
            if alternatives.len() > 1 {
                return alternatives
                    .iter()
                    .find_map(|a| self.glob_reaches_secret(Path::new(a), whole_tree));
            }
        }
        let pat: Vec<String> = pattern
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        self.secrets.iter().find_map(|s| {
            let secret: Vec<String> = match s {
                Secret::Tree(t) => t
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect(),
                Secret::Pattern(p, _) => Path::new(p.as_str())
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect(),
            };
            let deep_enough = pat.len() >= secret.len() || whole_tree;
            let reaches = deep_enough
                && pat
                    .iter()
                    .zip(&secret)
                    .all(|(p, s)| glob_component_may_match(p, s));
            reaches.then(|| match s {
                Secret::Tree(t) => t.display().to_string(),
                Secret::Pattern(p, _) => p.as_str().to_string(),
            })
        })
    }

    /// Whether `dir` (resolved) is a secret path or holds one below it: a
    /// tool that reads every file under `dir` reads the secret too.
    pub fn holds_secret(&self, dir: &Path) -> bool {
        self.is_secret(dir)
            || self.secrets.iter().any(|s| match s {
                Secret::Tree(t) => t.starts_with(dir),
                Secret::Pattern(pat, _) => {
                    // The directory the pattern cannot leave.
                    let fixed: PathBuf = Path::new(pat.as_str())
                        .components()
                        .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
                        .collect();
                    fixed.starts_with(dir)
                }
            })
    }

    /// Classifies a shell line proposed in `cwd` (SPEC §2, line context).
    pub fn classify_line(&self, line: &str, cwd: &Path) -> Verdict {
        let cwd = path::resolve(self.fs.as_ref(), Path::new("/"), cwd, true);
        if line.len() > parse::MAX_LINE_BYTES {
            return verdict::single(
                self,
                Context::Line,
                line,
                RuleId::TooComplex,
                format!(
                    "the line is {} bytes long; fence judges lines up to {} bytes",
                    line.len(),
                    parse::MAX_LINE_BYTES
                ),
            );
        }
        if line.contains('\0') {
            // A NUL ends a C string: what runs may be only the part before it,
            // or the line with NULs dropped. Judge the latter, at least red.
            let stripped = line.replace('\0', "");
            let mut v = self.classify_line(&stripped, &cwd);
            verdict::raise(
                self,
                &mut v,
                Context::Line,
                RuleId::InvalidInput,
                "the line holds NUL bytes",
            );
            return v;
        }
        let bound = parse::nesting_bound(line);
        if bound > parse::MAX_NESTING_BOUND || parse::running_depth(line) > parse::MAX_RUNNING_DEPTH
        {
            return verdict::single(
                self,
                Context::Line,
                line,
                RuleId::TooComplex,
                "the line nests too deeply to judge",
            );
        }
        let run = |cls: &Classifier, line: &str, cwd: PathBuf| {
            let mut w = Walker::new(cls, &cls.settings, Context::Line, Some(cwd), None);
            w.walk_source(line);
            verdict::assemble(cls, Context::Line, line, w)
        };
        if parse::is_plain(line, bound) {
            // A fault in the walk (a bug) refuses the line rather than end the caller
            // (`fence hook`, whose failure an agent may take as no objection).
            return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(self, line, cwd)))
                .unwrap_or_else(|_| {
                    verdict::single(
                        self,
                        Context::Line,
                        line,
                        RuleId::TooComplex,
                        "fence failed while judging the line (an internal error)",
                    )
                });
        }
        let (cls, owned) = (self.clone(), line.to_string());
        parse::run_bounded(bound, line.len(), move || run(&cls, &owned, cwd)).unwrap_or_else(|| {
            verdict::single(
                self,
                Context::Line,
                line,
                RuleId::TooComplex,
                "the line could not be judged within fence's limits",
            )
        })
    }

    /// Classifies a line given as bytes: invalid UTF-8 is judged as its
    /// lossy decoding, and at least red.
    pub fn classify_line_bytes(&self, line: &[u8], cwd: &Path) -> Verdict {
        match std::str::from_utf8(line) {
            Ok(s) => self.classify_line(s, cwd),
            Err(_) => {
                let lossy = String::from_utf8_lossy(line);
                let mut v = self.classify_line(&lossy, cwd);
                verdict::raise(
                    self,
                    &mut v,
                    Context::Line,
                    RuleId::InvalidInput,
                    "the line is not valid UTF-8",
                );
                v
            }
        }
    }

    /// Classifies one `execve` (SPEC §2, exec context): the same rule table
    /// applied to the argv; a program no rule matches runs.
    pub fn classify_exec(&self, ev: &ExecEvent<'_>) -> Verdict {
        let bound: usize = ev.argv.iter().map(|a| parse::nesting_bound(a)).sum();
        let len: usize = ev.argv.iter().map(String::len).sum();
        if len <= parse::INLINE_BYTES && ev.argv.iter().all(|a| parse::is_plain(a, bound)) {
            // A fault in the walk (a bug) refuses the exec rather than end the thread
            // that answers the sandbox's calls (which would end the session).
            return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.exec_verdict(ev)
            }))
            .unwrap_or_else(|_| {
                verdict::single(
                    self,
                    Context::Exec,
                    &ev.argv.join(" "),
                    RuleId::TooComplex,
                    "fence failed while judging the command (an internal error)",
                )
            });
        }
        let text = ev.argv.join(" ");
        let too_complex = || {
            verdict::single(
                self,
                Context::Exec,
                &text,
                RuleId::TooComplex,
                "the command could not be judged within fence's limits",
            )
        };
        if ev
            .argv
            .iter()
            .any(|a| parse::running_depth(a) > parse::MAX_RUNNING_DEPTH)
        {
            return too_complex();
        }
        let cls = self.clone();
        let argv = ev.argv.to_vec();
        let program = ev.program.to_path_buf();
        // The judgement moves to a thread of its own: it takes the directory with it.
        let cwd = match ev.cwd {
            ExecCwd::Known(p) => Some(p.to_path_buf()),
            ExecCwd::Read(read) => read(),
        };
        let branch = ev.current_branch.map(str::to_string);
        let env = ev.env.to_vec();
        parse::run_bounded(bound, len, move || {
            let known = move || cwd.clone();
            cls.exec_verdict(&ExecEvent {
                argv: &argv,
                program: &program,
                cwd: ExecCwd::Read(&known),
                current_branch: branch.as_deref(),
                env: &env,
            })
        })
        .unwrap_or_else(too_complex)
    }

    fn exec_verdict(&self, ev: &ExecEvent<'_>) -> Verdict {
        let text = ev.argv.join(" ");
        let branch = ev.current_branch.map(str::to_string);
        let w = Walker::new(self, &self.settings, Context::Exec, None, Some(branch));
        let mut w = match ev.cwd {
            ExecCwd::Known(p) => w.with_cwd(p.to_path_buf()),
            ExecCwd::Read(read) => w.with_process_cwd(read),
        };
        // The exec's environment as variables set before the command, as `NAME=v git …`
        // in a line would set them.
        for (name, value) in ev.env {
            w.state.vars.insert(name.clone(), value.clone());
        }
        let mut args: Vec<word::Arg> = ev.argv.iter().map(word::Arg::literal).collect();
        if args.is_empty() {
            args.push(word::Arg::literal(ev.program.display().to_string()));
        }
        let io = walk::CmdIo::default();
        let inv = command::Invocation {
            io: &io,
            procsub_network: false,
            subs_network: false,
        };
        w.judge_argv(&args, &inv, 0);
        // A program run under another name (a copy, a link) is judged by
        // both names.
        let argv0 = command::program_name(&args[0].text).to_string();
        if let Some(real) = ev.program.file_name().and_then(|n| n.to_str())
            && real != argv0
            && !real.is_empty()
        {
            args[0] = word::Arg::literal(real);
            w.judge_argv(&args, &inv, 0);
        }
        w.push_part(text.clone());
        verdict::assemble(self, Context::Exec, &text, w)
    }

    /// Classifies a patch (Codex `apply_patch`, unified diff) offered as an
    /// agent edit: green inside the worktree, red outside, refused in a
    /// system root.
    pub fn classify_patch(&self, patch: &str, cwd: &Path) -> Verdict {
        let mut w = Walker::new(
            self,
            &self.settings,
            Context::Line,
            Some(cwd.to_path_buf()),
            None,
        );
        let named = w.judge_patch(patch, "patch");
        tool::as_tool_edit(&mut w);
        if named == 0 {
            // Nothing to judge it by: never allowed as an edit that writes nowhere.
            w.find(
                RuleId::ParseError,
                "the patch names no file fence can read (no `*** Add File:`, `*** Update File:`, `*** Delete File:` or diff header)",
            );
        }
        if w.cur.is_empty() {
            w.find(
                RuleId::ToolEditInside,
                "the patch writes only where the session may write",
            );
        }
        w.push_part("apply_patch".to_string());
        verdict::assemble(self, Context::Line, "apply_patch", w)
    }
}

/// Whether one component of a glob pattern can match one component of a
/// secret path (itself a pattern for secrets like `/etc/ssh/*_key`).
/// The words a brace expression expands to, as bash and the glob libraries expand it
/// (`a{b,c{d,e}}f`: `abf`, `acdf`, `acef`); a `{…}` without a comma at its own level stays
/// as written. `None` past `limit` words.
pub fn brace_alternatives(s: &str, limit: usize) -> Option<Vec<String>> {
    let bytes = s.as_bytes();
    // The first `{` whose group closes and holds a comma at its own level.
    for (open, _) in s.match_indices('{') {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (i, &b) in bytes.iter().enumerate().skip(open + 1) {
            match b {
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    close = Some(i);
                    break;
                }
                b'}' => depth -= 1,
                b',' if depth == 0 => commas.push(i),
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        if commas.is_empty() {
            continue;
        }
        let (head, tail) = (&s[..open], &s[close + 1..]);
        let mut cuts = vec![open];
        cuts.extend(&commas);
        cuts.push(close);
        let mut out = Vec::new();
        for w in cuts.windows(2) {
            let word = format!("{head}{}{tail}", &s[w[0] + 1..w[1]]);
            for expanded in brace_alternatives(&word, limit)? {
                out.push(expanded);
                if out.len() > limit {
                    return None;
                }
            }
        }
        return Some(out);
    }
    Some(vec![s.to_string()])
}

fn glob_component_may_match(pattern: &str, secret: &str) -> bool {
    const META: [char; 3] = ['*', '?', '['];
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let matches =
        |p: &str, text: &str| glob::Pattern::new(p).is_ok_and(|p| p.matches_with(text, opts));
    match (pattern.contains(META), secret.contains(META)) {
        (false, false) => pattern == secret,
        (true, false) => matches(pattern, secret),
        (false, true) => matches(secret, pattern),
        // Two patterns: they may name one file unless they start apart.
        (true, true) => {
            let lit = |x: &str| {
                x.chars()
                    .take_while(|c| !META.contains(c))
                    .collect::<String>()
            };
            let (a, b) = (lit(pattern), lit(secret));
            a.starts_with(&b) || b.starts_with(&a)
        }
    }
}

#[cfg(test)]
mod extra_secrets_tests {
    use super::*;

    #[test]
    fn braces_expand_as_the_shell_expands_them() {
        assert_eq!(
            brace_alternatives("a{b,c{d,e}}f", 16).unwrap(),
            ["abf", "acdf", "acef"]
        );
        assert_eq!(brace_alternatives("x{y}z", 16).unwrap(), ["x{y}z"]);
        assert_eq!(brace_alternatives("{a,b}{c,d}", 3), None);
        let c = Classifier::new(Settings {
            home: Some(PathBuf::from("/h")),
            ..Settings::for_worktree("/w")
        })
        .unwrap();
        assert!(
            c.glob_reaches_secret(Path::new("/h/{.ssh,.aws}/*"), false)
                .is_some()
        );
        assert!(
            c.glob_reaches_secret(Path::new("/h/{.s{s,x}h,y}/*"), false)
                .is_some()
        );
        assert!(
            c.glob_reaches_secret(Path::new("/w/src/{a,b}/*.rs"), false)
                .is_none()
        );
    }

    /// Every extra credential of `fence run` is a secret of `fence check` too.
    #[test]
    fn the_extra_credentials_are_default_secrets() {
        for rel in EXTRA_SECRETS_IN_HOME {
            let spelled = format!("~/{rel}");
            assert!(DEFAULT_SECRETS.contains(&spelled.as_str()), "{spelled}");
        }
    }

    /// The one ancestor with a number of slashes is the one the full list holds.
    #[test]
    fn the_ancestor_with_n_slashes_is_found_from_the_start() {
        for p in [
            "/a",
            "/a/b",
            "/a/b/c/d",
            "/home/u/.ssh/id_rsa",
            "/a//b",
            "/a/b/",
            "a/b/c",
        ] {
            for n in 0..6 {
                let all: Vec<&str> = ancestor_texts(p)
                    .filter(|(_, k)| *k == n)
                    .map(|(a, _)| a)
                    .collect();
                match ancestor_with_slashes(p, n) {
                    Some(one) => assert_eq!(one.into_iter().collect::<Vec<_>>(), all, "{p} {n}"),
                    None => assert!(
                        n < 2 || p.contains("//") || p.ends_with('/') || !p.starts_with('/')
                    ),
                }
            }
        }
    }

    /// The ancestors' texts are those of `Path::ancestors`, for every spelling.
    #[test]
    fn ancestor_texts_are_the_paths_ancestors() {
        for p in [
            "/",
            "/a",
            "/a/b/c",
            "/a//b",
            "//a",
            "/a/b/",
            "a",
            "a/b",
            "a/b/",
            "",
            "/é/\u{fffd}/x",
        ] {
            let want: Vec<String> = Path::new(p)
                .ancestors()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let got: Vec<&str> = ancestor_texts(p).map(|(a, _)| a).collect();
            for (a, n) in ancestor_texts(p) {
                assert_eq!(n, a.matches('/').count(), "{p:?}: {a:?}");
            }
            // `Path` keeps a trailing slash or doubled ones in the path itself only.
            let want: Vec<String> = want
                .into_iter()
                .enumerate()
                .map(|(i, a)| {
                    if i == 0 && a.len() > 1 {
                        a.trim_end_matches('/').to_string()
                    } else {
                        a
                    }
                })
                .collect();
            assert_eq!(got, want, "{p:?}");
        }
    }
}

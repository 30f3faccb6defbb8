//! Reading a git command line: global options, the subcommand, and where a
//! push goes. A word matcher would take `git stash push` or
//! `git log --grep push` for a push; this reads git's own grammar.

use crate::opts::{self, OptSpec};
use crate::refs::{Refs, Unresolved};
use crate::rules::RuleId;
use crate::word::Arg;

/// A git invocation split at its subcommand.
#[derive(Debug, Default)]
pub struct Git {
    /// `-C DIR` values, in order.
    pub dirs: Vec<Arg>,
    /// `-c name=value` and `--config-env=name=ENV` settings.
    pub configs: Vec<String>,
    /// The `--config-env=name=ENV` settings alone, whose values come from the
    /// environment and are not known.
    pub config_envs: Vec<String>,
    /// `--namespace` was given: the refs (and so the current branch) are not the
    /// worktree's.
    pub other_repo: bool,
    /// `--git-dir`: the repository, the worktree's own only when it names its `.git`.
    pub git_dir: Option<Arg>,
    /// `--exec-path=DIR`: git runs its subcommands from there.
    pub exec_path: bool,
    /// `--git-dir` and `--work-tree` values: where a writing subcommand writes.
    pub repo_dirs: Vec<Arg>,
    /// Index of the subcommand in the argv, if any.
    pub sub: Option<usize>,
}

/// Splits `args` (argv of git) at the subcommand.
pub fn parse(args: &[Arg]) -> Git {
    let mut g = Git::default();
    let mut i = 1;
    while i < args.len() {
        let t = args[i].text.as_str();
        let next = || args.get(i + 1).cloned();
        match t {
            "-C" => {
                if let Some(d) = next() {
                    g.dirs.push(d);
                }
                i += 2;
                continue;
            }
            "-c" => {
                if let Some(v) = next() {
                    g.configs.push(v.text);
                }
                i += 2;
                continue;
            }
            "--git-dir" | "--work-tree" | "--namespace" => {
                // The work tree alone leaves the repository (and its HEAD) as found.
                g.other_repo |= t == "--namespace";
                if t != "--namespace"
                    && let Some(d) = next()
                {
                    if t == "--git-dir" {
                        g.git_dir = Some(d.clone());
                    }
                    g.repo_dirs.push(d);
                }
                i += 2;
                continue;
            }
            "--config-env" => {
                if let Some(v) = next() {
                    g.config_envs.push(v.text.clone());
                    g.configs.push(v.text);
                }
                i += 2;
                continue;
            }
            "--super-prefix" | "--list-cmds" | "--attr-source" => {
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some(v) = t.strip_prefix("--config-env=") {
            g.config_envs.push(v.to_string());
            g.configs.push(v.to_string());
        } else if t.starts_with("--git-dir=")
            || t.starts_with("--work-tree=")
            || t.starts_with("--namespace=")
        {
            g.other_repo |= t.starts_with("--namespace=");
            if let Some(d) = t
                .strip_prefix("--git-dir=")
                .or_else(|| t.strip_prefix("--work-tree="))
            {
                let d = Arg {
                    text: d.to_string(),
                    known: args[i].known,
                    home_based: d.starts_with('~'),
                    ..Arg::default()
                };
                if t.starts_with("--git-dir=") {
                    g.git_dir = Some(d.clone());
                }
                g.repo_dirs.push(d);
            }
        } else if t == "--exec-path" || t.starts_with("--exec-path=") {
            g.exec_path = t.contains('=');
        } else if let Some(rest) = t.strip_prefix("-C").filter(|r| !r.is_empty()) {
            g.dirs.push(Arg::literal(rest));
        } else if let Some(rest) = t.strip_prefix("-c").filter(|r| !r.is_empty()) {
            g.configs.push(rest.to_string());
        } else if !t.starts_with('-') {
            g.sub = Some(i);
            break;
        }
        i += 1;
    }
    // `-c core.worktree=DIR` names the work tree as `--work-tree DIR` does.
    let trees: Vec<Arg> = g
        .configs
        .iter()
        .filter_map(|c| {
            let (k, v) = c.split_once('=')?;
            k.eq_ignore_ascii_case("core.worktree").then(|| Arg {
                home_based: v.starts_with('~'),
                ..Arg::literal(v)
            })
        })
        .collect();
    g.repo_dirs.extend(trees);
    g
}

/// The paths a git subcommand creates or writes besides the repository it
/// runs in (`args` are the words after the subcommand): the directory of
/// `git clone URL DIR` and `git init DIR`, the path of `git worktree add`,
/// `git submodule add`, the output of `git format-patch -o`, `git archive -o`
/// and `git bundle create`.
pub fn write_targets(sub: &str, args: &[Arg]) -> Vec<(Arg, &'static str)> {
    let spec = |short_arg: &'static str, long_arg: &'static [&'static str]| OptSpec {
        short_arg,
        long_arg,
        permute: true,
    };
    let mut out: Vec<(Arg, &'static str)> = Vec::new();
    match sub {
        "clone" => {
            let p = opts::parse(
                args,
                0,
                &spec(
                    "objuc",
                    &[
                        "origin",
                        "branch",
                        "upload-pack",
                        "reference",
                        "reference-if-able",
                        "separate-git-dir",
                        "depth",
                        "config",
                        "template",
                        "jobs",
                        "filter",
                        "shallow-since",
                        "shallow-exclude",
                        "server-option",
                        "bundle-uri",
                        "ref-format",
                        "revision",
                    ],
                ),
            );
            if p.operands.len() >= 2 {
                out.push((args[p.operands[1]].clone(), "git clone"));
            } else if let Some(&url) = p.operands.first()
                && args[url].known
            {
                // `git clone URL` clones into a directory named after it.
                let name = args[url]
                    .text
                    .trim_end_matches('/')
                    .rsplit(['/', ':'])
                    .next()
                    .unwrap_or("")
                    .trim_end_matches(".git")
                    .to_string();
                if !name.is_empty() && name != "." && name != ".." {
                    out.push((Arg::literal(name), "git clone"));
                }
            }
            if let Some(d) = p.value_of('\0', "separate-git-dir") {
                out.push((d.clone(), "git clone --separate-git-dir"));
            }
        }
        "init" => {
            let p = opts::parse(
                args,
                0,
                &spec(
                    "b",
                    &[
                        "template",
                        "separate-git-dir",
                        "initial-branch",
                        "object-format",
                        "ref-format",
                    ],
                ),
            );
            match p.operands.first() {
                Some(&d) => out.push((args[d].clone(), "git init")),
                None => out.push((Arg::literal("."), "git init")),
            }
            if let Some(d) = p.value_of('\0', "separate-git-dir") {
                out.push((d.clone(), "git init --separate-git-dir"));
            }
        }
        "worktree" => {
            let p = opts::parse(args, 0, &spec("bB", &["reason"]));
            let words: Vec<&str> = p.operands.iter().map(|&i| args[i].text.as_str()).collect();
            match words.first() {
                Some(&"add") if p.operands.len() >= 2 => {
                    out.push((args[p.operands[1]].clone(), "git worktree add"));
                }
                Some(&"move") if p.operands.len() >= 3 => {
                    out.push((args[p.operands[2]].clone(), "git worktree move"));
                }
                _ => {}
            }
        }
        "submodule" => {
            let p = opts::parse(
                args,
                0,
                &spec("b", &["branch", "name", "reference", "depth"]),
            );
            if p.operands.first().map(|&i| args[i].text.as_str()) == Some("add")
                && p.operands.len() >= 3
            {
                out.push((args[p.operands[2]].clone(), "git submodule add"));
            }
        }
        "format-patch" => {
            let p = opts::parse(args, 0, &spec("ov", &["output-directory"]));
            if let Some(d) = p.value_of('o', "output-directory") {
                out.push((d.clone(), "git format-patch -o"));
            }
        }
        "archive" => {
            let p = opts::parse(
                args,
                0,
                &spec("o", &["output", "format", "prefix", "remote"]),
            );
            if let Some(f) = p.value_of('o', "output") {
                out.push((f.clone(), "git archive -o"));
            }
        }
        "checkout-index" => {
            // `--prefix=DIR/` writes the index's files under DIR (a plain string put
            // before each path: `--prefix=/etc/` writes into /etc).
            for a in args {
                if let Some(prefix) = a.text.strip_prefix("--prefix=")
                    && !prefix.is_empty()
                {
                    out.push((
                        Arg {
                            text: prefix.to_string(),
                            ..a.clone()
                        },
                        "git checkout-index --prefix",
                    ));
                }
            }
        }
        "bundle" => {
            let p = opts::parse(args, 0, &spec("", &[]));
            if p.operands.first().map(|&i| args[i].text.as_str()) == Some("create")
                && let Some(&f) = p.operands.get(1)
            {
                out.push((args[f].clone(), "git bundle create"));
            }
        }
        _ => {}
    }
    out.retain(|(a, _)| a.text != "-");
    out
}

/// The full names git may take a refspec's source `src` for (`refname_match`: `x` is
/// `refs/x`, `refs/tags/x`, `refs/heads/x`, `refs/remotes/x` or `refs/remotes/x/HEAD`,
/// whichever exists; `heads/x` is `refs/heads/x`); `HEAD` is the current branch (none when
/// it is not known).
fn local_ref_candidates(src: &str, branch: Option<&str>) -> Vec<String> {
    match src {
        "HEAD" | "@" => branch
            .map(|b| format!("refs/heads/{b}"))
            .into_iter()
            .collect(),
        s if s.starts_with("refs/") => vec![s.to_string()],
        s => vec![
            format!("refs/{s}"),
            format!("refs/tags/{s}"),
            format!("refs/heads/{s}"),
            format!("refs/remotes/{s}"),
            format!("refs/remotes/{s}/HEAD"),
        ],
    }
}

/// `configured` (a `remote.NAME.push` refspec) applied to the local ref `full`
/// (`refs/heads/feature`): the refspec git pushes instead, when its source matches.
fn map_through(configured: &str, full: &str) -> Option<String> {
    let force = if configured.starts_with('+') { "+" } else { "" };
    let spec = configured.trim_start_matches('+');
    let (src, dst) = spec.split_once(':').unwrap_or((spec, spec));
    let as_ref = |s: &str| {
        if s.starts_with("refs/") {
            s.to_string()
        } else {
            format!("refs/heads/{s}")
        }
    };
    let dst = match src.split_once('*') {
        Some((before, after)) => {
            let middle = full.strip_prefix(before)?.strip_suffix(after)?;
            dst.replacen('*', middle, 1)
        }
        None if as_ref(src) == full => dst.to_string(),
        None => return None,
    };
    Some(format!("{force}{full}:{dst}"))
}

/// How [`analyze_push`] says a destination cannot be known from the line: see
/// [`is_unknown_destination`].
const UNKNOWN_BEFORE_RUNNING: &str = "cannot be known before running";

/// Whether a reason [`analyze_push`] gave says the destination cannot be known. At exec
/// the real argv is judged (SPEC §2): a destination still unknown then (the branch of a
/// repository other than the worktree's, a HEAD only git can read) fails closed.
pub fn is_unknown_destination(reason: &str) -> bool {
    reason.ends_with(UNKNOWN_BEFORE_RUNNING)
}

/// A `-c` setting that decides what `git push` pushes or where, past the refspecs the rules
/// read on the command line: a refspec (`remote.<name>.push`), mirroring
/// (`remote.<name>.mirror`), a branch's upstream (`branch.<name>.merge`, which
/// `push.default=upstream` follows) and the push mode itself (`matching` pushes every
/// branch the remote has); and a config file to include (`include.path`,
/// `includeIf.<cond>.path`), which may set any of them.
pub fn push_deciding_setting(setting: &str) -> bool {
    let key = setting.split('=').next().unwrap_or("").to_ascii_lowercase();
    let last = key.rsplit('.').next().unwrap_or("");
    key == "push.default"
        || (key.starts_with("remote.") && matches!(last, "push" | "mirror"))
        || (key.starts_with("branch.") && last == "merge")
        || is_include(&key)
}

/// `include.path` and `includeIf.<cond>.path` (lowercased): a config file read in place.
pub fn is_include(key: &str) -> bool {
    key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"))
}

/// A `-c` setting that names a program git will run: an alias (rule
/// `shell.dynamic-program`) or one of the keys that take a command.
pub fn config_program(setting: &str) -> Option<(RuleId, String)> {
    let key = setting.split('=').next().unwrap_or("").to_ascii_lowercase();
    if key.starts_with("alias.") {
        return Some((
            RuleId::DynamicProgram,
            format!("git alias defined on the command line: {setting}"),
        ));
    }
    let last = key.rsplit('.').next().unwrap_or("");
    let program_key = matches!(
        key.as_str(),
        "core.pager"
            | "core.sshcommand"
            | "core.editor"
            | "core.fsmonitor"
            | "core.hookspath"
            | "core.askpass"
            | "core.gitproxy"
            | "core.alternaterefscommand"
            | "diff.external"
            | "credential.helper"
            | "gpg.program"
            | "sequence.editor"
            | "interactive.difffilter"
            | "uploadpack.packobjectshook"
            | "include.path"
    ) || key.starts_with("pager.")
        || key.starts_with("includeif.")
        || (key.starts_with("filter.") && matches!(last, "clean" | "smudge" | "process"))
        || (key.starts_with("diff.") && matches!(last, "textconv" | "command"))
        || (key.starts_with("merge.") && last == "driver")
        || is_tool_command(&key, last)
        || (key.starts_with("gpg.") && last == "program")
        || (key.starts_with("remote.") && matches!(last, "receivepack" | "uploadpack" | "proxy"))
        || allows_program_transport(&key, setting.split_once('=').map(|x| x.1))
        || key.starts_with("sendemail.")
        || (key.starts_with("credential.") && last == "helper");
    program_key.then(|| {
        (
            RuleId::GitConfigProgram,
            format!("sets a program for git to run: -c {setting}"),
        )
    })
}

/// The command line of a merge or diff tool, a GUI tool, a browser or a man viewer
/// (`mergetool.NAME.cmd`, `difftool.NAME.cmd`, `guitool.NAME.cmd`, `browser.NAME.cmd`,
/// `man.NAME.cmd`), or a tool's program path (`mergetool.NAME.path`…): run by
/// `git mergetool`, `git difftool`, `git web--browse`, `git help`.
fn is_tool_command(key: &str, last: &str) -> bool {
    let section = key.split('.').next().unwrap_or("");
    matches!(
        section,
        "mergetool" | "difftool" | "guitool" | "browser" | "man"
    ) && key.matches('.').count() == 2
        && matches!(last, "cmd" | "path")
}

/// Whether a `protocol.*allow` setting lets git use the `ext::` transport, which runs
/// the command its URL names: `protocol.ext.allow`, and `protocol.allow=always`, the
/// default of every transport without a setting of its own (`ext` included). Allowing
/// another transport (`protocol.file.allow=always`, the usual way to add a submodule from
/// a local path) runs no program.
fn allows_program_transport(key: &str, value: Option<&str>) -> bool {
    let never = value.is_some_and(|v| v.trim().eq_ignore_ascii_case("never"));
    match key {
        "protocol.ext.allow" => !never,
        "protocol.allow" => value.is_none_or(|v| v.trim().eq_ignore_ascii_case("always")),
        _ => false,
    }
}

/// Whether `value` is one of git's spellings of false (`false`, `no`, `off`, `0`, any
/// case). An empty value is false too; a key written without `=` is true.
pub fn is_false(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "false" | "no" | "off" | "0"
    )
}

/// Whether the `key=value` setting sets `key` (compared without case, as git does) to
/// false.
pub fn sets_false(setting: &str, key: &str) -> bool {
    setting
        .split_once('=')
        .is_some_and(|(k, v)| k.trim().eq_ignore_ascii_case(key) && is_false(v))
}

/// How git runs the value of a setting that names a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingRuns {
    /// A string git hands to a shell (`core.pager`, `alias.x=!…`, `diff.external`…).
    Shell(String),
    /// An alias without `!`: the words of a git command (`alias.p=push -f` runs
    /// `git push -f`).
    Git(String),
}

/// What the value of `setting` (`key=value`) makes git run, when the key names a program
/// and the value is one (a boolean `core.pager`/`pager.log` or `core.fsmonitor` only turns
/// a behaviour on or off).
pub fn setting_runs(setting: &str) -> Option<SettingRuns> {
    let (key, value) = setting.split_once('=')?;
    let key = key.to_ascii_lowercase();
    let value = value.trim();
    if let Some(alias) = key.strip_prefix("alias.") {
        if alias.is_empty() || value.is_empty() {
            return None;
        }
        return Some(match value.strip_prefix('!') {
            Some(shell) => SettingRuns::Shell(shell.to_string()),
            None => SettingRuns::Git(value.to_string()),
        });
    }
    let boolean = matches!(
        value.to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
    );
    if boolean {
        return None;
    }
    let last = key.rsplit('.').next().unwrap_or("");
    let runs = matches!(
        key.as_str(),
        "core.pager"
            | "core.sshcommand"
            | "core.editor"
            | "core.fsmonitor"
            | "core.askpass"
            | "core.gitproxy"
            | "core.alternaterefscommand"
            | "diff.external"
            | "gpg.program"
            | "sequence.editor"
            | "interactive.difffilter"
            | "uploadpack.packobjectshook"
            | "sendemail.sendmailcmd"
            | "sendemail.tocmd"
            | "sendemail.cccmd"
    ) || key.starts_with("pager.")
        || (key.starts_with("filter.") && matches!(last, "clean" | "smudge" | "process"))
        || (key.starts_with("diff.") && matches!(last, "textconv" | "command"))
        || (key.starts_with("merge.") && last == "driver")
        || is_tool_command(&key, last)
        || (key.starts_with("gpg.") && last == "program")
        || (key.starts_with("remote.") && matches!(last, "receivepack" | "uploadpack"))
        // A helper is a shell string after `!`, a program by its path, or
        // `git credential-NAME` by a bare name.
        || (key.starts_with("credential.")
            && last == "helper"
            && (value.starts_with('!') || value.starts_with('/') || value.starts_with('~')));
    runs.then(|| SettingRuns::Shell(value.trim_start_matches('!').to_string()))
}

/// The settings git's environment gives it (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>` and
/// `GIT_CONFIG_VALUE_<n>`, `GIT_CONFIG_PARAMETERS`), the spelling of `git -c` in the
/// environment: `key=value` settings, and whether any is there whose key or value is not
/// known. `var` gives a variable's value: `None` unset, `Some(None)` set to a value not
/// known.
pub fn environment_settings(
    var: &dyn Fn(&str) -> Option<Option<String>>,
    keys: impl Iterator<Item = String>,
) -> (Vec<String>, bool) {
    let mut settings = Vec::new();
    let mut unknown = false;
    for name in keys {
        let Some(n) = name.strip_prefix("GIT_CONFIG_KEY_") else {
            continue;
        };
        match (var(&name), var(&format!("GIT_CONFIG_VALUE_{n}"))) {
            (Some(Some(k)), Some(Some(v))) => settings.push(format!("{k}={v}")),
            (Some(Some(k)), None) => settings.push(format!("{k}=")),
            (Some(_), _) => unknown = true,
            (None, _) => {}
        }
    }
    match var("GIT_CONFIG_PARAMETERS") {
        Some(Some(p)) => match parse_config_parameters(&p) {
            Some(found) => settings.extend(found),
            None => unknown = true,
        },
        Some(None) => unknown = true,
        None => {}
    }
    (settings, unknown)
}

/// Reads `GIT_CONFIG_PARAMETERS`: single-quoted words separated by spaces, each
/// `'key=value'` or `'key'='value'` (a quote inside written `'\''`). `None` when it
/// cannot be read.
fn parse_config_parameters(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    // One single-quoted string, `'\''` taken as a quote.
    let quoted = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<String> {
        let mut s = String::new();
        if chars.next()? != '\'' {
            return None;
        }
        loop {
            match chars.next()? {
                '\'' => {
                    if chars.peek() == Some(&'\\') {
                        // `'\''`: the quote ends, an escaped quote, a quote begins again.
                        chars.next();
                        if chars.next()? != '\'' || chars.next()? != '\'' {
                            return None;
                        }
                        s.push('\'');
                    } else {
                        return Some(s);
                    }
                }
                c => s.push(c),
            }
        }
    };
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Some(out);
        }
        let first = quoted(&mut chars)?;
        if chars.peek() == Some(&'=') {
            chars.next();
            let value = if chars.peek() == Some(&'\'') {
                quoted(&mut chars)?
            } else {
                String::new()
            };
            out.push(format!("{first}={value}"));
        } else if first.contains('=') {
            out.push(first);
        } else {
            out.push(format!("{first}="));
        }
    }
}

/// What `git config …` (`args` after `config`) sets: the key and, when the command gives
/// one, the value. Reads both syntaxes (`git config KEY VALUE`, `git config --add KEY
/// VALUE`, and git 2.46's `git config set [--append] KEY VALUE`) past the options,
/// some of which take a value (`--type bool`, `--file F`, `--comment C`). `None` for a
/// read, an unset or another action.
pub fn config_assignment(args: &[Arg]) -> Option<(Arg, Option<Arg>)> {
    const VALUE_OPTIONS: &[&str] = &[
        "-f",
        "--file",
        "--blob",
        "--type",
        "--default",
        "--comment",
        "--value",
    ];
    const NOT_A_SET: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
        "--unset",
        "--unset-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
    ];
    let mut operands: Vec<&Arg> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if VALUE_OPTIONS.contains(&t) {
            i += 2;
            continue;
        }
        if NOT_A_SET.contains(&t) {
            return None;
        }
        if t == "--" {
            operands.extend(args[i + 1..].iter());
            break;
        }
        if !t.starts_with('-') || t == "-" {
            operands.push(&args[i]);
        }
        i += 1;
    }
    let operands = match operands.first().map(|a| a.text.as_str()) {
        Some("set") => &operands[1..],
        Some(
            "get" | "list" | "unset" | "edit" | "rename-section" | "remove-section" | "get-color"
            | "get-colorbool",
        ) => return None,
        _ => &operands[..],
    };
    let key = (*operands.first()?).clone();
    Some((key, operands.get(1).map(|v| (*v).clone())))
}

/// Values of a subcommand's options that git runs as a command on this machine:
/// `difftool -x/--extcmd`, `--upload-pack` (`-u` for clone) of fetch, pull, clone and
/// ls-remote, `push --receive-pack/--exec`, `archive --exec`, `grep -O`. (For a remote reached over
/// ssh they run there; for a path or `file://` one they run here.)
pub fn option_commands(sub: &str, args: &[Arg]) -> Vec<Arg> {
    let (short, long): (&[&str], &[&str]) = match sub {
        "difftool" => (&["-x"], &["--extcmd"]),
        "fetch" | "pull" | "ls-remote" => (&[], &["--upload-pack"]),
        "clone" => (&["-u"], &["--upload-pack"]),
        "push" => (&[], &["--receive-pack", "--exec"]),
        "archive" => (&[], &["--exec"]),
        // `git grep -O'CMD'` opens the files it finds with CMD through a shell. (git
        // takes the value only attached; a separate word is judged as one too.)
        "grep" => (&["-O"], &["--open-files-in-pager"]),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let t = a.text.as_str();
        if t == "--" {
            break;
        }
        if short.contains(&t) || long.contains(&t) {
            out.extend(args.get(i + 1).cloned());
            i += 2;
            continue;
        }
        let attached = long
            .iter()
            .find_map(|l| t.strip_prefix(l).and_then(|r| r.strip_prefix('=')))
            .or_else(|| {
                short
                    .iter()
                    .find_map(|s| t.strip_prefix(s).filter(|r| !r.is_empty()))
            });
        if let Some(v) = attached {
            out.push(Arg {
                text: v.to_string(),
                ..a.clone()
            });
        }
        i += 1;
    }
    out
}

/// The `-c`/`--config key=value` settings `git clone` writes into the new repository's
/// config (`args` after `clone`).
pub fn clone_settings(args: &[Arg]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let t = a.text.as_str();
        if t == "--" {
            break;
        }
        if t == "-c" || t == "--config" {
            out.extend(args.get(i + 1).cloned());
            i += 2;
            continue;
        }
        if let Some(v) = t
            .strip_prefix("--config=")
            .or_else(|| t.strip_prefix("-c").filter(|r| !r.is_empty()))
        {
            out.push(Arg {
                text: v.to_string(),
                ..a.clone()
            });
        }
        i += 1;
    }
    out
}

const PUSH_SPEC: OptSpec = OptSpec {
    short_arg: "o",
    long_arg: &["push-option", "repo", "receive-pack", "exec"],
    permute: true,
};

/// Which file `git config` writes.
#[derive(Debug)]
pub enum ConfigFile {
    System,
    Global,
    Path(Arg),
    /// The repository's own (`--local`, `--worktree`, or no file named).
    Repository,
}

/// The file `git config …` (`args` after `config`) changes: `--system`, `--global`,
/// `-f FILE`, else the repository's own config. `None` for a read (`--get`, `--list`,
/// `get`, `list`).
pub fn config_write_file(args: &[Arg]) -> Option<ConfigFile> {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
        "get",
        "list",
    ];
    const CHANGES: &[&str] = &[
        "--unset",
        "--unset-all",
        "--add",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "set",
        "unset",
        "edit",
        "rename-section",
        "remove-section",
    ];
    let mut file = None;
    let mut operands = 0;
    let mut changes = false;
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        match t {
            "--system" => file = Some(ConfigFile::System),
            "--global" => file = Some(ConfigFile::Global),
            "-f" | "--file" => {
                file = args.get(i + 1).cloned().map(ConfigFile::Path);
                i += 1;
            }
            "--blob" | "--type" | "--default" | "--comment" | "--value" => i += 1,
            _ if READS.contains(&t) => return None,
            _ if CHANGES.contains(&t) => changes = true,
            _ => {
                if let Some(f) = t.strip_prefix("--file=") {
                    file = Some(ConfigFile::Path(Arg {
                        text: f.to_string(),
                        ..args[i].clone()
                    }));
                } else if !t.starts_with('-') {
                    operands += 1;
                }
            }
        }
        i += 1;
    }
    (changes || operands >= 2).then(|| file.unwrap_or(ConfigFile::Repository))
}

/// Whether `git SUB ARGS` writes a setting to the repository's config (as `git config`
/// does): `remote add|rename|remove|rm|set-url|set-branches`, `branch --set-upstream-to`,
/// `-u` or `--unset-upstream`, `push -u`/`--set-upstream`.
pub fn writes_repository_config(sub: &str, args: &[Arg]) -> bool {
    let words = || args.iter().map(|a| a.text.as_str());
    match sub {
        "remote" => words().find(|w| !w.starts_with('-')).is_some_and(|w| {
            matches!(
                w,
                "add" | "rename" | "remove" | "rm" | "set-url" | "set-branches"
            )
        }),
        "branch" => words().any(|w| {
            w == "--unset-upstream"
                || w.starts_with("--set-upstream-to")
                || (w.starts_with("-u") && !w.starts_with("--"))
        }),
        "push" => words().take_while(|w| *w != "--").any(|w| {
            w == "--set-upstream"
                || w.strip_prefix('-').is_some_and(|f| {
                    !f.starts_with('-')
                        && f.contains('u')
                        && f.chars().all(|c| "dfnquv46".contains(c))
                })
        }),
        _ => false,
    }
}

/// Whether a setting git writes to the repository's config is a branch's bookkeeping or
/// the author's identity: `user.name`, `user.email`, `branch.B.description`,
/// `branch.B.rebase`, `branch.B.merge` naming `refs/heads/B` (an upstream of another
/// name decides where a later push goes). `fence run` lets git write these into the
/// protected `.git/config` unasked (the supervisor compares the rewrite), and a line that
/// writes only them is judged as it always was. `value` is `None` for an unset.
pub fn is_bookkeeping_setting(key: &str, value: Option<&str>) -> bool {
    let plain = |v: &str| {
        !v.is_empty()
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._/-+@".contains(&b))
    };
    let lower = key.to_ascii_lowercase();
    if lower == "user.name" || lower == "user.email" {
        return true;
    }
    let Some((branch, name)) = key
        .get(..7)
        .filter(|b| b.eq_ignore_ascii_case("branch."))
        .and_then(|_| key[7..].rsplit_once('.'))
    else {
        return false;
    };
    match name.to_ascii_lowercase().as_str() {
        "description" => true,
        "rebase" => value.is_none_or(plain),
        "merge" => value.is_none_or(|v| v == format!("refs/heads/{branch}")),
        _ => false,
    }
}

/// Whether `git config ARGS` (a change of the repository's own config) sets or unsets only
/// a bookkeeping setting ([`is_bookkeeping_setting`]), its key and value known.
pub fn config_change_is_bookkeeping(args: &[Arg]) -> bool {
    let unset = args
        .iter()
        .any(|a| matches!(a.text.as_str(), "--unset" | "--unset-all" | "unset"));
    if unset {
        let mut keys = args
            .iter()
            .filter(|a| !a.text.starts_with('-') && a.text != "unset");
        return match (keys.next(), keys.next()) {
            (Some(k), None) => k.value().is_some_and(|k| is_bookkeeping_setting(k, None)),
            _ => false,
        };
    }
    match config_assignment(args) {
        Some((key, Some(value))) => match (key.value(), value.value()) {
            (Some(k), Some(v)) => is_bookkeeping_setting(k, Some(v)),
            _ => false,
        },
        _ => false,
    }
}

/// Whether `git push -u ARGS` records only an upstream of the same name on a remote the
/// repository names (`git push -u origin feature`, `git push -u`): bookkeeping. A refspec
/// that pushes to another name, or a remote given by its URL, is not.
pub fn push_upstream_is_bookkeeping(args: &[Arg]) -> bool {
    let operands: Vec<&str> = args
        .iter()
        .map(|a| a.text.as_str())
        .filter(|t| !t.starts_with('-'))
        .collect();
    let Some((remote, refspecs)) = operands.split_first() else {
        return true;
    };
    remote
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && refspecs
            .iter()
            .all(|r| !r.contains(':') && !r.starts_with('+'))
}

/// Whether a ref a push names is main or master: the branch, or a tag of that name
/// (`refs/tags/main`), which the remote's `git log main` and `git merge main` then take
/// for the branch (git prefers the tag, with a warning).
pub fn is_main(branch: &str) -> bool {
    let b = branch
        .strip_prefix("refs/heads/")
        .or_else(|| branch.strip_prefix("heads/"))
        .or_else(|| branch.strip_prefix("refs/tags/"))
        .unwrap_or(branch);
    b == "main" || b == "master"
}

/// A destination pattern (`refs/heads/*`) that covers main or master.
fn pattern_covers_main(dst: &str) -> bool {
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: false,
        require_literal_leading_dot: false,
    };
    glob::Pattern::new(dst).is_ok_and(|p| {
        ["main", "master", "refs/heads/main", "refs/heads/master"]
            .iter()
            .any(|c| p.matches_with(c, opts))
    })
}

/// Reads `git … push …`: `args` starts after the word `push`.
/// `branch` is the worktree's current branch, when known.
///
/// `configs` are the `-c name=value` settings given before the subcommand:
/// `remote.NAME.push`, `remote.NAME.mirror`, `push.default=matching` and
/// `branch.NAME.merge` decide where a push without refspecs goes.
///
/// `foreign_config`: git works in a repository other than the worktree's, whose own config
/// (`remote.NAME.push`, `push.default`, `branch.NAME.merge`) the line does not show and the
/// sandbox may have written: a refspec without `:dst`, or none, goes where that config says.
///
/// `refs`: the refs of the repository git pushes from, when it is the worktree's and has
/// one: a source without `:dst` lands where the ref it names resolves to.
pub fn analyze_push(
    args: &[Arg],
    branch: Option<&str>,
    configs: &[String],
    foreign_config: bool,
    refs: Option<&Result<Refs<'_>, Unresolved>>,
) -> Vec<(RuleId, String)> {
    let mut out = Vec::new();
    // `opts::parse` reads from index 1.
    let mut argv = Vec::with_capacity(args.len() + 1);
    argv.push(Arg::literal("push"));
    argv.extend_from_slice(args);
    let p = opts::parse(&argv, 1, &PUSH_SPEC);
    let force = p.has('f', "force")
        || p.opts.iter().any(
            |o| matches!(o, opts::Opt::Long(l, _) if opts::abbreviates(l, "force-with-lease")),
        )
        || p.has('\0', "mirror");
    // `-c name=value`: git lowercases the section and the key, not the middle.
    let settings: Vec<(String, &str)> = configs
        .iter()
        .filter_map(|c| c.split_once('='))
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    let setting = |section: &'static str, key: &'static str| {
        settings
            .iter()
            .filter(move |(k, _)| {
                k.starts_with(section) && k.ends_with(key) && k.len() > section.len() + key.len()
            })
            .map(|(_, v)| *v)
    };
    let truthy = |v: &str| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "" | "true" | "yes" | "on" | "1"
        )
    };
    let mirror_config = setting("remote.", ".mirror").any(truthy);
    let force = force || mirror_config;
    let delete = p.has('d', "delete");
    let all =
        p.has('\0', "all") || p.has('\0', "branches") || p.has('\0', "mirror") || mirror_config;
    // `--tags` alone pushes refs/tags/*, not the current branch.
    let tags = p.has('\0', "tags");
    for prog in ["receive-pack", "exec"] {
        if let Some(v) = p.value_of('\0', prog) {
            out.push((
                RuleId::GitConfigProgram,
                format!(
                    "git push --{prog}={} runs a program on the remote side",
                    v.text
                ),
            ));
        }
    }
    let mut positionals: Vec<&Arg> = p.operands.iter().map(|&i| &argv[i]).collect();
    if p.value_of('\0', "repo").is_none() && !positionals.is_empty() {
        positionals.remove(0); // the repository
    }
    let mut refspecs: Vec<Arg> = positionals.into_iter().cloned().collect();
    // Another repository's bare push (`git -C ../main-checkout push`) pushes its current
    // branch, whatever its own config may add: on main, a push to main.
    if foreign_config
        && refspecs.is_empty()
        && !tags
        && let Some(b) = branch.filter(|b| is_main(b))
    {
        out.push((
            RuleId::GitPushMain,
            format!("pushes the current branch of that repository, which is {b}"),
        ));
    }
    if foreign_config
        && (refspecs.is_empty() && !tags
            || refspecs.iter().any(|r| r.known && !r.text.contains(':')))
    {
        // Judged as written too (`main` still goes to main by default).
        refspecs.push(Arg::unknown());
    }
    let configured: Vec<&str> = setting("remote.", ".push").collect();
    let upstream_mode = settings.iter().any(|(k, v)| {
        k == "push.default"
            && (v.eq_ignore_ascii_case("upstream") || v.eq_ignore_ascii_case("tracking"))
    });
    if refspecs.is_empty() && !tags {
        // Without refspecs on the command line, `remote.NAME.push` says what goes.
        refspecs.extend(configured.iter().map(|c| Arg::literal(*c)));
    } else if !configured.is_empty() || upstream_mode {
        // A refspec without `:dst` (`git push origin feature`) is mapped through
        // `remote.NAME.push` too (git's `map_refspec`): the configured refspec whose source
        // matches names the destination, and its `+` forces; under `push.default=upstream`
        // a branch goes to the upstream `branch.NAME.merge` names.
        for r in refspecs.iter_mut() {
            if !r.known || r.text.contains(':') {
                continue;
            }
            let forced = r.text.starts_with('+');
            let src = r.text.trim_start_matches('+').to_string();
            let fulls = local_ref_candidates(&src, branch);
            if fulls.is_empty() {
                // HEAD on a branch not known: any configured destination may be its.
                *r = Arg::unknown();
                continue;
            }
            let upstream = |full: &String| {
                let name = full.strip_prefix("refs/heads/")?.to_ascii_lowercase();
                let key = format!("branch.{name}.merge");
                let merge = settings.iter().find(|(k, _)| *k == key)?.1;
                Some(format!("{full}:{merge}"))
            };
            let mapped = fulls
                .iter()
                .find_map(|full| configured.iter().find_map(|c| map_through(c, full)))
                .or_else(|| {
                    upstream_mode
                        .then(|| fulls.iter().find_map(upstream))
                        .flatten()
                });
            if let Some(m) = mapped {
                let m = if forced && !m.starts_with('+') {
                    format!("+{m}")
                } else {
                    m
                };
                *r = Arg::literal(m);
            }
        }
    }
    if force || refspecs.iter().any(|r| r.text.starts_with('+')) {
        out.push((RuleId::GitPushForce, "force push".to_string()));
    }
    if all {
        out.push((
            RuleId::GitPushMain,
            "pushes every branch, main/master included".to_string(),
        ));
        return out;
    }
    if refspecs.is_empty() && tags {
        return out;
    }
    if refspecs.is_empty() {
        if settings
            .iter()
            .any(|(k, v)| k == "push.default" && v.eq_ignore_ascii_case("matching"))
        {
            out.push((
                RuleId::GitPushMain,
                "push.default=matching pushes every matching branch, main/master included"
                    .to_string(),
            ));
            return out;
        }
        if let Some(m) = setting("branch.", ".merge").find(|m| is_main(m)) {
            out.push((
                RuleId::GitPushMain,
                format!("pushes to the upstream set with -c branch.….merge: {m}"),
            ));
            return out;
        }
        match branch {
            Some(b) if is_main(b) => out.push((
                RuleId::GitPushMain,
                format!("pushes the current branch, which is {b}"),
            )),
            Some(_) => {}
            None => out.push((
                RuleId::GitPush,
                format!("pushes the current branch, which {UNKNOWN_BEFORE_RUNNING}"),
            )),
        }
        return out;
    }
    for r in &refspecs {
        if !r.known {
            // `$B:main` still goes to main; `origin $B` cannot be known.
            if let Some((_, dst)) = r.text.rsplit_once(':')
                && !dst.contains(crate::word::UNKNOWN)
                && is_main(dst)
            {
                out.push((RuleId::GitPushMain, format!("pushes to {dst}")));
                continue;
            }
            out.push((
                RuleId::GitPush,
                format!("the push destination {UNKNOWN_BEFORE_RUNNING}"),
            ));
            continue;
        }
        let spec = r.text.trim_start_matches('+');
        let dst = if delete {
            spec
        } else {
            match spec.split_once(':') {
                Some((src, "")) => src,
                Some((_, dst)) => dst,
                None => spec,
            }
        };
        if spec == ":" || (dst.is_empty() && !delete) {
            out.push((
                RuleId::GitPushMain,
                "pushes all matching branches, main/master included".to_string(),
            ));
            continue;
        }
        // `git push origin feat` with `refs/heads/feat` a symbolic ref to main pushes to
        // main. A target that cannot be read is unknown: refused at exec, asked in a line.
        let names_destination = delete || spec.split_once(':').is_some_and(|(_, d)| !d.is_empty());
        if !names_destination
            && !matches!(dst, "HEAD" | "@")
            && !dst.contains(['*', '?', '['])
            && let Some(refs) = refs
        {
            match refs
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|r| r.push_destinations(dst))
            {
                Ok(targets) => {
                    if let Some(t) = targets.iter().find(|t| is_main(t)) {
                        out.push((
                            RuleId::GitPushMain,
                            format!("pushes {dst}, a symbolic ref to {t}"),
                        ));
                        continue;
                    }
                }
                Err(e) => {
                    out.push((
                        RuleId::GitPush,
                        format!("pushes {dst}, but {e}: its destination {UNKNOWN_BEFORE_RUNNING}"),
                    ));
                    continue;
                }
            }
        }
        let dst = if dst == "HEAD" || dst == "@" {
            match branch {
                Some(b) => b,
                None => {
                    out.push((
                        RuleId::GitPush,
                        format!("pushes HEAD, whose branch {UNKNOWN_BEFORE_RUNNING}"),
                    ));
                    continue;
                }
            }
        } else {
            dst
        };
        if is_main(dst) || (dst.contains(['*', '?', '[']) && pattern_covers_main(dst)) {
            let verb = if delete { "deletes" } else { "pushes to" };
            out.push((RuleId::GitPushMain, format!("{verb} {dst}")));
        }
    }
    out
}

/// A subcommand that makes another branch the current one without checking it out:
/// `git branch -m [OLD] NEW` (`-M`, `--move`), `git symbolic-ref HEAD refs/heads/NEW`,
/// `git stash branch NEW`. Returns the branch it renames (`None`: the current one) and
/// the branch current afterwards (`None`: not known before running).
pub fn moves_branch(sub: &str, args: &[Arg]) -> Option<(Option<String>, Option<String>)> {
    let operands: Vec<&Arg> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
    let name = |a: &Arg| a.value().map(str::to_string);
    match sub {
        "branch" => {
            let moving = args.iter().any(|a| {
                opts::is_long(&a.text, "move")
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text.contains(['m', 'M']))
            });
            if !moving {
                return None;
            }
            match operands.as_slice() {
                [new] => Some((None, name(new))),
                [old, new, ..] => Some((Some(name(old)?), name(new))),
                [] => None,
            }
        }
        "symbolic-ref" => {
            if args
                .iter()
                .any(|a| a.text.starts_with('-') && a.text != "-m")
            {
                return None;
            }
            match operands.as_slice() {
                [head, target, ..] if head.text == "HEAD" => Some((
                    None,
                    name(target).map(|t| {
                        t.strip_prefix("refs/heads/")
                            .map_or(t.clone(), str::to_string)
                    }),
                )),
                _ => None,
            }
        }
        "stash" => match operands.as_slice() {
            [b, new, ..] if b.text == "branch" => Some((None, name(new))),
            _ => None,
        },
        _ => None,
    }
}

/// `git branch -u UPSTREAM [NAME]` (`--set-upstream-to`): the branch whose upstream it
/// sets (`None`: the current one) and the `branch.NAME.merge` value that follows
/// (`refs/heads/main` for `origin/main`; `None` when not known).
pub fn branch_upstream(args: &[Arg]) -> Option<(Option<String>, Option<String>)> {
    let mut upstream: Option<&Arg> = None;
    let mut attached: Option<Arg> = None;
    let mut operands: Vec<&Arg> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "-u" || t == "--set-upstream-to" {
            upstream = args.get(i + 1);
            i += 2;
            continue;
        }
        if let Some(v) = t
            .strip_prefix("--set-upstream-to=")
            .or_else(|| t.strip_prefix("-u").filter(|v| !v.is_empty()))
        {
            attached = Some(Arg {
                text: v.to_string(),
                ..args[i].clone()
            });
        } else if !t.starts_with('-') {
            operands.push(&args[i]);
        }
        i += 1;
    }
    let upstream = attached.as_ref().or(upstream)?;
    let merge = upstream.value().map(|u| {
        let branch = u.split_once('/').map_or(u, |x| x.1);
        format!("refs/heads/{branch}")
    });
    let name = operands.first().and_then(|a| a.value().map(str::to_string));
    Some((name, merge))
}

/// The variables that name the folders git reads and writes, as `--git-dir` and
/// `--work-tree` do.
pub const REPO_DIR_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
];

/// Whether `git rm ARGS` removes files recursively and forced (`-rf`, `-r -f`,
/// `--force -r`) from the worktree: not with `--cached` (the index only) nor a dry run.
pub fn rm_recursive_forced(args: &[Arg]) -> bool {
    let (mut recursive, mut force) = (false, false);
    for a in args {
        let t = a.text.as_str();
        match t {
            "--" => break,
            "--cached" | "--dry-run" => return false,
            "--force" => force = true,
            _ if t.starts_with('-') && !t.starts_with("--") => {
                if t.contains('n') {
                    return false;
                }
                recursive |= t.contains('r');
                force |= t.contains('f');
            }
            _ => {}
        }
    }
    recursive && force
}

/// The first word of `args` that is no option: a subcommand's own subcommand.
pub fn first_word(args: &[Arg]) -> Option<&str> {
    args.iter()
        .map(|a| a.text.as_str())
        .find(|t| !t.starts_with('-'))
}

/// What `git SUB ARGS` discards of the work not committed, if it discards any: a
/// checkout or switch that is forced (`-f`, `--force`, `--discard-changes`), a checkout
/// of paths (`git checkout -- PATH`, `git checkout HEAD -- PATH`, `git checkout .`),
/// whose changes it overwrites, a restore of the worktree (any `git restore` but one of
/// the index alone: `--staged` without `--worktree`), and a stash dropped or cleared.
pub fn discards_changes(sub: &str, args: &[Arg]) -> Option<&'static str> {
    let has = |long: &str, short: Option<char>| {
        args.iter().take_while(|a| a.text != "--").any(|a| {
            let t = a.text.as_str();
            t == long
                || short.is_some_and(|c| {
                    t.starts_with('-') && !t.starts_with("--") && t[1..].contains(c)
                })
        })
    };
    match sub {
        "checkout" => {
            if has("--force", Some('f')) {
                return Some("git checkout -f discards uncommitted changes");
            }
            let paths = args.iter().any(|a| a.text == "--")
                || args
                    .iter()
                    .any(|a| matches!(a.text.as_str(), "." | "./" | ":/"));
            paths.then_some("git checkout of paths overwrites their uncommitted changes")
        }
        "switch" => (has("--discard-changes", None) || has("--force", Some('f')))
            .then_some("git switch --discard-changes discards uncommitted changes"),
        "restore" => {
            let staged = has("--staged", Some('S'));
            let worktree = has("--worktree", Some('W'));
            (!staged || worktree).then_some("git restore overwrites uncommitted changes")
        }
        "stash" => match first_word(args) {
            Some("drop") => Some("git stash drop deletes stashed work"),
            Some("clear") => Some("git stash clear deletes all stashed work"),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `git maintenance ARGS` installs or removes the background schedule
/// (`start`, `stop`), which git writes into cron, systemd or launchd.
pub fn maintenance_schedules(args: &[Arg]) -> bool {
    matches!(first_word(args), Some("start" | "stop"))
}

/// The branch a `git checkout`/`git switch` moves to, if it is one.
/// `Some(None)` means it moves somewhere that cannot be known.
pub fn checkout_target(sub: &str, args: &[Arg]) -> Option<Option<String>> {
    let mut argv = Vec::with_capacity(args.len() + 1);
    argv.push(Arg::literal(sub));
    argv.extend_from_slice(args);
    let spec = OptSpec {
        short_arg: "bBcC",
        long_arg: &["orphan", "create", "force-create", "conflict"],
        permute: false,
    };
    // `git checkout -- FILE` restores files; the branch stays.
    if args.iter().any(|a| a.text == "--")
        && let Some(pos) = args.iter().position(|a| a.text == "--")
        && pos == 0
    {
        return None;
    }
    let p = opts::parse(&argv, 1, &spec);
    for (c, l) in [
        ('b', "orphan"),
        ('B', "create"),
        ('c', "create"),
        ('C', "force-create"),
    ] {
        if let Some(v) = p.value_of(c, l) {
            return Some(v.value().map(str::to_string));
        }
    }
    if p.has('\0', "detach") {
        return Some(None);
    }
    let first = p.operands.first().map(|&i| &argv[i])?;
    // `git checkout -t origin/main` makes and checks out a branch named after the
    // remote one.
    let tracking = p.has('t', "track");
    match first.value() {
        Some("-") => Some(None),
        Some(b) if tracking => Some(Some(b.split_once('/').map_or(b, |x| x.1).to_string())),
        Some(b) => Some(Some(b.to_string())),
        None => Some(None),
    }
}

/// git's commands: `git --list-cmds=main` of git 2.47 (its builtins and the programs of its
/// exec path), with those of other versions and the common add-ons (`subtree`).
#[rustfmt::skip]
const COMMANDS: &[&str] = &[
    "add", "am", "annotate", "apply", "archimport", "archive", "backfill", "bisect", "blame",
    "branch", "bugreport", "bundle", "cat-file", "check-attr", "check-ignore", "check-mailmap",
    "check-ref-format", "checkout", "checkout-index", "cherry", "cherry-pick", "citool",
    "clean", "clone", "column", "commit", "commit-graph", "commit-tree", "config",
    "count-objects", "credential", "credential-cache", "credential-store", "cvsexportcommit",
    "cvsimport", "cvsserver", "daemon", "describe", "diagnose", "diff", "diff-files",
    "diff-index", "diff-pairs", "diff-tree", "difftool", "fast-export", "fast-import", "fetch",
    "fetch-pack", "filter-branch", "fmt-merge-msg", "for-each-ref", "for-each-repo",
    "format-patch", "fsck", "fsck-objects", "fsmonitor--daemon", "gc", "get-tar-commit-id",
    "grep", "gui", "hash-object", "help", "history", "hook", "http-backend", "http-fetch",
    "http-push", "imap-send", "index-pack", "init", "init-db", "instaweb",
    "interpret-trailers", "last-modified", "log", "ls-files", "ls-remote", "ls-tree",
    "mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index",
    "merge-octopus", "merge-one-file", "merge-ours", "merge-recursive", "merge-recursive-ours",
    "merge-recursive-theirs", "merge-resolve", "merge-subtree", "merge-tree", "mergetool",
    "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes", "p4", "pack-objects",
    "pack-redundant", "pack-refs", "patch-id", "pickaxe", "prune", "prune-packed", "pull",
    "push", "quiltimport", "range-diff", "read-tree", "rebase", "receive-pack", "reflog",
    "refs", "remote", "remote-ext", "remote-fd", "remote-ftp", "remote-ftps", "remote-http",
    "remote-https", "repack", "replace", "replay", "repo", "request-pull", "rerere", "reset",
    "restore", "rev-list", "rev-parse", "revert", "rm", "send-email", "send-pack", "shell",
    "shortlog", "show", "show-branch", "show-index", "show-ref", "sparse-checkout", "stage",
    "stash", "status", "stripspace", "submodule", "subtree", "svn", "switch", "symbolic-ref",
    "tag", "unpack-file", "unpack-objects", "update-index", "update-ref", "update-server-info",
    "upload-archive", "upload-pack", "var", "verify-commit", "verify-pack", "verify-tag",
    "version", "whatchanged", "worktree", "write-tree",
];

/// git's common commands (`git help`): a name one of them starts with is corrected to it
/// before any other.
#[rustfmt::skip]
const COMMON: &[&str] = &[
    "add", "backfill", "bisect", "branch", "clone", "commit", "diff", "fetch", "grep", "init",
    "log", "merge", "mv", "pull", "push", "rebase", "reset", "restore", "rm", "show", "status",
    "switch", "tag",
];

/// Whether `name` is one of git's own commands.
pub fn is_command(name: &str) -> bool {
    COMMANDS.contains(&name)
}

/// The commands git may run for the unknown subcommand `typed`. With `help.autocorrect`
/// set (`-c`, the environment, or the user's config, which the line does not show) git runs
/// the closest command in the same process, so no exec of it is seen. git scores each
/// command (`help.c`, `help_unknown_cmd`): 0 for a common command that starts with `typed`,
/// else a weighted edit distance plus one, and corrects to the best when it is alone and
/// below 6. Which commands compete depends on the aliases and programs of the machine, so
/// every command below 6 is returned, not only the best.
pub fn autocorrect_candidates(typed: &str) -> Vec<&'static str> {
    const SIMILAR_ENOUGH: usize = 6;
    COMMANDS
        .iter()
        .copied()
        .filter(|c| {
            (COMMON.contains(c) && c.starts_with(typed))
                || edit_distance(typed.as_bytes(), c.as_bytes()) + 1 < SIMILAR_ENOUGH
        })
        .collect()
}

/// git's `levenshtein(typed, candidate, 0, 2, 1, 3)`: a swap of two neighbours costs 0, a
/// substitution 2, an insertion 1 and a deletion 3.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    const SWAP: usize = 0;
    const SUBSTITUTION: usize = 2;
    const INSERTION: usize = 1;
    const DELETION: usize = 3;
    // d[i][j]: from the first i bytes of `a` to the first j of `b`.
    let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j * INSERTION;
    }
    for i in 0..a.len() {
        d[i + 1][0] = (i + 1) * DELETION;
        for j in 0..b.len() {
            let mut best = d[i][j] + if a[i] == b[j] { 0 } else { SUBSTITUTION };
            if i > 0 && j > 0 && a[i - 1] == b[j] && a[i] == b[j - 1] {
                best = best.min(d[i - 1][j - 1] + SWAP);
            }
            best = best.min(d[i][j + 1] + DELETION);
            best = best.min(d[i + 1][j] + INSERTION);
            d[i + 1][j + 1] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(line: &str, branch: Option<&str>) -> Vec<RuleId> {
        let args: Vec<Arg> = line.split_whitespace().map(Arg::literal).collect();
        analyze_push(&args, branch, &[], false, None)
            .into_iter()
            .map(|(r, _)| r)
            .collect()
    }

    fn words(line: &str) -> Vec<Arg> {
        line.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn rm_recursive_and_forced_in_any_spelling() {
        for l in [
            "-rf src",
            "-r -f src",
            "-fr src",
            "--force -r src",
            "-q -rf -- src",
        ] {
            assert!(rm_recursive_forced(&words(l)), "{l}");
        }
        for l in [
            "-r src",
            "-f x",
            "-r --cached -f src",
            "-rfn src",
            "-r --dry-run -f x",
            "-- -rf",
        ] {
            assert!(!rm_recursive_forced(&words(l)), "{l}");
        }
    }

    #[test]
    fn discarding_checkouts_restores_and_stash_drops_are_told_apart() {
        for (sub, l) in [
            ("checkout", "-f main"),
            ("checkout", "--force feature"),
            ("checkout", "-- src/a.rs"),
            ("checkout", "HEAD -- ."),
            ("checkout", "."),
            ("switch", "--discard-changes main"),
            ("switch", "-f main"),
            ("restore", "src/a.rs"),
            ("restore", "--source=HEAD~1 ."),
            ("restore", "-S -W f"),
            ("restore", "--staged --worktree f"),
            ("stash", "drop"),
            ("stash", "clear"),
            ("stash", "drop stash@{1}"),
        ] {
            assert!(discards_changes(sub, &words(l)).is_some(), "{sub} {l}");
        }
        for (sub, l) in [
            ("checkout", "main"),
            ("checkout", "-b feature"),
            ("checkout", "-B feature origin/feature"),
            ("switch", "-c feature"),
            ("switch", "main"),
            ("restore", "--staged f"),
            ("restore", "-S f"),
            ("stash", ""),
            ("stash", "push -m x"),
            ("stash", "pop"),
            ("stash", "list"),
            ("log", "-f"),
        ] {
            assert!(discards_changes(sub, &words(l)).is_none(), "{sub} {l}");
        }
    }

    #[test]
    fn maintenance_start_and_stop_change_the_schedule() {
        assert!(maintenance_schedules(&words("start")));
        assert!(maintenance_schedules(&words(
            "--quiet start --scheduler=crontab"
        )));
        assert!(maintenance_schedules(&words("stop")));
        assert!(!maintenance_schedules(&words("run --task=gc")));
        assert!(!maintenance_schedules(&words("register")));
    }

    #[test]
    fn autocorrect_reaches_push_from_its_misspellings() {
        for typed in ["psuh", "pus", "pu", "pusj", "phus", "puhs", "pish"] {
            assert!(autocorrect_candidates(typed).contains(&"push"), "{typed}");
        }
        assert!(!autocorrect_candidates("frobnicate").contains(&"push"));
        // git's own scores: one insertion is 1 (+1), one deletion 3 (+1).
        assert_eq!(edit_distance(b"psh", b"push"), 1);
        assert_eq!(edit_distance(b"pussh", b"push"), 3);
        assert_eq!(edit_distance(b"psuh", b"push"), 0);
    }
    #[test]
    fn main_in_every_spelling() {
        for l in [
            "origin main",
            "origin HEAD:main",
            "origin refs/heads/main",
            "origin feature:master",
            "origin --delete master",
            "origin -d main",
            "origin :main",
            "--all",
            "origin --all",
            "origin :",
            "origin refs/heads/*:refs/heads/*",
            "-u origin main",
        ] {
            assert!(
                push(l, Some("feature")).contains(&RuleId::GitPushMain),
                "{l}"
            );
        }
        assert!(push("origin HEAD", Some("main")).contains(&RuleId::GitPushMain));
        assert!(push("origin @", Some("master")).contains(&RuleId::GitPushMain));
        assert!(push("", Some("main")).contains(&RuleId::GitPushMain));
        assert!(push("origin", Some("master")).contains(&RuleId::GitPushMain));
    }

    #[test]
    fn not_main() {
        for l in [
            "origin main:release",
            "origin mainline",
            "origin feature/main",
            "origin HEAD",
            "",
            "origin --tags",
        ] {
            assert_eq!(push(l, Some("feature")), Vec::<RuleId>::new(), "{l}");
        }
    }

    #[test]
    fn force_in_every_spelling() {
        for l in [
            "--force origin feature",
            "-f origin feature",
            "-uf origin feature",
            "--force-with-lease origin feature",
            "--force-with-lease=feature:abc origin feature",
            "origin +feature",
            "--mirror",
        ] {
            assert!(
                push(l, Some("feature")).contains(&RuleId::GitPushForce),
                "{l}"
            );
        }
    }

    #[test]
    fn unknown_branch_is_red_not_absolute() {
        assert_eq!(push("", None), vec![RuleId::GitPush]);
        let args = vec![Arg::literal("origin"), Arg::unknown()];
        assert_eq!(
            analyze_push(&args, Some("x"), &[], false, None)
                .into_iter()
                .map(|(r, _)| r)
                .collect::<Vec<_>>(),
            vec![RuleId::GitPush]
        );
    }

    #[test]
    fn global_options_before_the_subcommand() {
        let args: Vec<Arg> = "git -C sub -c user.name=x --no-pager push origin main"
            .split_whitespace()
            .map(Arg::literal)
            .collect();
        let g = parse(&args);
        assert_eq!(g.sub, Some(6));
        assert_eq!(g.dirs[0].text, "sub");
        assert!(config_program("alias.x=!rm -rf /").is_some());
        assert!(config_program("core.pager=less").is_some());
        assert!(config_program("user.name=x").is_none());
    }
}

//! Programs an agent's protected settings name. A coding agent runs the commands its
//! settings give — Claude Code's hooks and status line, the MCP servers of `.mcp.json` and
//! of Gemini CLI's settings — outside any sandbox the next time it runs unfenced. The
//! settings files are protected paths (SPEC §2), but a script they name in a writable
//! folder (`~/.claude/statusline.sh`, `$CLAUDE_PROJECT_DIR/.claude/check.sh`, an MCP
//! server's `server.js` in the worktree) would let the sandbox change what runs without
//! touching them.
//!
//! Read at start, outside the sandbox: each protected JSON settings file (at most 1 MiB),
//! every `command` string in it and the `args` beside one, split into words as a shell
//! would (one level of `sh -c '…'` strings too). A word naming a path — absolute, from the
//! home (`~/`, `$HOME`), from the project (`$CLAUDE_PROJECT_DIR`), or relative with a `/`
//! (from the worktree, where the agent runs it) — that lies in a writable root joins the
//! session's protected list: read-only binds in the mount view, held by the Landlock plan,
//! refused by the write check with a reason. A script it runs in turn is not followed
//! (as for git's hooks, git_code.rs). Policy of what counts as the agent's code; the
//! protection of each path found is the kernel's.

use std::path::{Component, Path, PathBuf};

/// The most of a settings file read (a real one is a few kilobytes).
const MOST_SETTINGS_BYTES: u64 = 1 << 20;

/// The most paths taken from all settings files.
const MOST_PATHS: usize = 64;

/// The settings files, relative to the worktree (and each folder protected as it is),
/// whose commands an agent runs.
pub const PROJECT_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    ".codex/config.toml",
];

/// The user's own settings files, relative to the home, whose commands an agent runs
/// whatever profile the session has: a script they name in the worktree runs when the
/// user next starts that agent unfenced.
pub const HOME_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".gemini/settings.json",
    ".codex/config.toml",
    ".cursor/mcp.json",
];

/// The paths the commands of `files` name inside `writable` (each absolute): `worktree`
/// stands for `$CLAUDE_PROJECT_DIR` and the folder relative paths start from.
pub fn find(
    files: &[PathBuf],
    worktree: &Path,
    home: Option<&Path>,
    writable: &[PathBuf],
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for file in files {
        let Some(value) = read_settings(file) else {
            continue;
        };
        let mut commands = Vec::new();
        command_words(&value, None, &mut commands);
        for words in commands {
            for p in command_paths(&words, worktree, worktree, home) {
                if writable.iter().any(|w| p.starts_with(w)) && !found.contains(&p) {
                    found.push(p);
                }
                if found.len() >= MOST_PATHS {
                    return found;
                }
            }
        }
    }
    found
}

/// The files a command's words name, absolute: each path word (see [`as_path_from`]) as
/// written and as the file a link leads to, relative ones from `start` and from where a
/// `cd` in the words goes (`cd tools && ./t.sh`, `uv run --directory tools server.py`), a
/// `python -m` module, and a bare word naming a file there (`bash check.sh`). `worktree`
/// stands for `$CLAUDE_PROJECT_DIR` and `$PWD`.
pub fn command_paths(
    words: &[String],
    worktree: &Path,
    start: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut base = start.to_path_buf();
    let mut after_cd = false;
    let mut after_m = false;
    for word in words {
        let mut paths: Vec<PathBuf> = Vec::new();
        let word = match ["--directory=", "--cwd=", "--prefix="]
            .iter()
            .find_map(|o| word.strip_prefix(o))
        {
            // `--directory=tools`: a `cd` of its own.
            Some(dir) => {
                base = as_path_from(dir, worktree, &base, home).unwrap_or_else(|| base.join(dir));
                continue;
            }
            None => word.as_str(),
        };
        if after_cd {
            after_cd = false;
            base = as_path_from(word, worktree, &base, home).unwrap_or_else(|| base.join(word));
            continue;
        }
        if after_m {
            // `python3 -m tools.guard`: tools/guard.py, or the package tools/guard.
            after_m = false;
            let module = base.join(word.replace('.', "/"));
            paths.push(module.with_extension("py"));
            paths.push(module);
        }
        match word {
            "cd" | "pushd" | "--directory" | "--cwd" | "--prefix" | "-C" => after_cd = true,
            "-m" => after_m = true,
            _ => {}
        }
        paths.extend(as_path_from(word, worktree, &base, home));
        // A bare name the command runs or reads from where it runs (`bash
        // check.sh`, an MCP server's `server.js`), when there is such a file.
        if !word.contains('/') && !word.starts_with('-') && base.join(word).is_file() {
            paths.push(base.join(word));
        }
        for path in paths {
            // The name as written (a symlink the sandbox could replace) and
            // the file it leads to.
            let real = std::fs::canonicalize(&path).ok();
            for p in std::iter::once(path).chain(real) {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The settings of a regular file of at most [`MOST_SETTINGS_BYTES`], not followed
/// through a final symlink (a settings file is protected by its name): JSON, or TOML for a
/// `.toml` file (Codex's `config.toml`).
fn read_settings(file: &Path) -> Option<serde_json::Value> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.is_file() || meta.len() > MOST_SETTINGS_BYTES {
        return None;
    }
    let mut text = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(MOST_SETTINGS_BYTES)
        .read_to_end(&mut text)
        .ok()?;
    if file.extension().is_some_and(|e| e == "toml") {
        toml::from_str(std::str::from_utf8(&text).ok()?).ok()
    } else {
        serde_json::from_slice(&text).ok()
    }
}

/// The settings keys whose value is a command an agent runs, a string (a shell line) or a
/// list of words (an argv): every agent's `command` (hooks, the status line, MCP servers,
/// with the `args` beside it); Claude Code's credential and telemetry helpers
/// (`apiKeyHelper`, `awsAuthRefresh`, `awsCredentialExport`, `otelHeadersHelper`), run at
/// each start; Gemini CLI's tool discovery and call commands; Codex's `notify`.
const PROGRAM_KEYS: &[&str] = &[
    "command",
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "otelHeadersHelper",
    "toolDiscoveryCommand",
    "toolCallCommand",
    "notify",
];

/// The words of every command in `v` (see [`PROGRAM_KEYS`]) with the `args` of the object
/// holding a `command`, one list for each. `key` is the key `v` is the value of.
fn command_words(v: &serde_json::Value, key: Option<&str>, out: &mut Vec<Vec<String>>) {
    let is_program = key.is_some_and(|k| PROGRAM_KEYS.contains(&k));
    match v {
        serde_json::Value::String(command) if is_program => out.push(line_words(command)),
        serde_json::Value::Array(items)
            if is_program && items.iter().all(serde_json::Value::is_string) =>
        {
            // An argv (`notify = ["python3", "/h/notify.py"]`): a word holding blanks is a
            // shell string of its own (`["bash", "-lc", "x.sh --y"]`).
            let mut words = Vec::new();
            for item in items.iter().filter_map(serde_json::Value::as_str) {
                words.extend(line_words(item));
            }
            out.push(words);
        }
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(command)) = map.get("command") {
                let mut words = line_words(command);
                if let Some(serde_json::Value::Array(args)) = map.get("args") {
                    words.extend(args.iter().filter_map(|a| a.as_str().map(str::to_string)));
                }
                out.push(words);
            }
            for (k, child) in map {
                if k == "command" && child.is_string() {
                    continue;
                }
                command_words(child, Some(k), out);
            }
        }
        serde_json::Value::Array(items) => {
            for child in items {
                command_words(child, None, out);
            }
        }
        _ => {}
    }
}

/// A shell line's words, one level of `sh -c '…'` strings included (`bash -c 'python3
/// ~/.claude/x.py'`: the string's own words).
fn line_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    for word in shell_words(line) {
        if word.contains(char::is_whitespace) {
            words.extend(shell_words(&word));
        } else {
            words.push(word);
        }
    }
    words
}

/// A command string's words, split at blanks and shell operators outside quotes, quotes
/// removed (`"$CLAUDE_PROJECT_DIR"/.claude/x.sh` is one word).
pub fn shell_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>') => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The path a word names, absolute and without `.` or `..`: from `/`, the home, the project
/// or (with a `/` in it) the worktree. `None` for a word that names none (`node`, `-y`).
#[cfg(test)]
fn as_path(word: &str, worktree: &Path, home: Option<&Path>) -> Option<PathBuf> {
    as_path_from(word, worktree, worktree, home)
}

/// [`as_path`], a relative word taken from `base` (where a `cd` in the command went).
fn as_path_from(word: &str, worktree: &Path, base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let word = word.split_once('=').map_or(word, |(k, v)| {
        // `--config=PATH`, `NODE_OPTIONS=--require=PATH`: the value.
        if k.starts_with('-') || k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            v
        } else {
            word
        }
    });
    // The project folder, however written (`${CLAUDE_PROJECT_DIR:-.}`, `$PWD`: the agent
    // runs its commands there).
    let project_default = word
        .strip_prefix("${CLAUDE_PROJECT_DIR:-")
        .and_then(|r| r.split_once('}').map(|(_, rest)| rest));
    if let Some(rest) = project_default {
        return as_path_from(&format!("$CLAUDE_PROJECT_DIR{rest}"), worktree, base, home);
    }
    let project = [
        "${CLAUDE_PROJECT_DIR}",
        "$CLAUDE_PROJECT_DIR",
        "${workspaceFolder}",
        "${PWD}",
        "$PWD",
    ];
    let from_home = ["~/", "$HOME/", "${HOME}/"];
    let path = if let Some(rest) = project.iter().find_map(|p| word.strip_prefix(p)) {
        worktree.join(rest.trim_start_matches('/'))
    } else if let Some(rest) = from_home.iter().find_map(|p| word.strip_prefix(p)) {
        home?.join(rest)
    } else if word.starts_with('/') {
        PathBuf::from(word)
    } else if word.contains('/') && !word.contains("://") && !word.starts_with('-') {
        base.join(word)
    } else {
        return None;
    };
    if path.as_os_str().as_encoded_bytes().contains(&b'$') {
        return None;
    }
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_split_as_a_shell_splits_them() {
        assert_eq!(
            shell_words(r#""$CLAUDE_PROJECT_DIR"/.claude/a.sh --x 'b c' d\ e;f|g"#),
            [
                "$CLAUDE_PROJECT_DIR/.claude/a.sh",
                "--x",
                "b c",
                "d e",
                "f",
                "g"
            ]
        );
        assert_eq!(shell_words("  "), Vec::<String>::new());
    }

    #[test]
    fn paths_are_read_from_the_home_the_project_and_the_worktree() {
        let wt = Path::new("/w");
        let home = Some(Path::new("/h"));
        let p = |w: &str| as_path(w, wt, home);
        assert_eq!(p("~/.claude/s.sh"), Some(PathBuf::from("/h/.claude/s.sh")));
        assert_eq!(p("$HOME/x/../y.py"), Some(PathBuf::from("/h/y.py")));
        assert_eq!(
            p("$CLAUDE_PROJECT_DIR/.claude/c.sh"),
            Some(PathBuf::from("/w/.claude/c.sh"))
        );
        assert_eq!(
            p("scripts/lint.sh"),
            Some(PathBuf::from("/w/scripts/lint.sh"))
        );
        assert_eq!(p("/opt/x"), Some(PathBuf::from("/opt/x")));
        assert_eq!(
            p("--config=tools/c.json"),
            Some(PathBuf::from("/w/tools/c.json"))
        );
        assert_eq!(p("node"), None);
        assert_eq!(p("-y"), None);
        assert_eq!(p("https://x.example/a"), None);
        assert_eq!(p("$OTHER/x"), None);
    }

    #[test]
    fn commands_and_their_args_anywhere_in_the_settings_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().join("wt");
        let home = dir.path().join("home");
        std::fs::create_dir_all(wt.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        let wt = wt.canonicalize().unwrap();
        let home = home.canonicalize().unwrap();
        std::fs::write(
            home.join(".claude/settings.json"),
            r#"{"statusLine": {"type": "command", "command": "bash ~/.claude/statusline.sh"},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/check.sh"},
                    {"type": "command", "command": "sh -c 'python3 tools/guard.py; /usr/bin/true'"}]}]}}"#,
        )
        .unwrap();
        std::fs::write(
            wt.join(".mcp.json"),
            r#"{"mcpServers": {"s": {"command": "node", "args": ["srv/index.js", "--port", "1"]},
                                "o": {"command": "/elsewhere/bin"}}}"#,
        )
        .unwrap();
        std::fs::write(wt.join(".claude/settings.json"), "not json").unwrap();
        // Other spellings: a bare name, a symlink, `$PWD`, a default, a `cd`, a module.
        std::fs::create_dir_all(wt.join("tools/pkg")).unwrap();
        std::fs::write(wt.join("check.sh"), "").unwrap();
        std::fs::write(wt.join("tools/real.sh"), "").unwrap();
        std::os::unix::fs::symlink("real.sh", wt.join("tools/link.sh")).unwrap();
        std::fs::write(
            wt.join(".claude/settings.local.json"),
            r#"{"hooks": {"Stop": [{"hooks": [
                {"type": "command", "command": "bash check.sh"},
                {"type": "command", "command": "$PWD/tools/link.sh"},
                {"type": "command", "command": "${CLAUDE_PROJECT_DIR:-.}/tools/d.sh"},
                {"type": "command", "command": "cd tools && ./t.sh"},
                {"type": "command", "command": "python3 -m tools.pkg"}]}]}}"#,
        )
        .unwrap();
        let files = [
            home.join(".claude/settings.json"),
            wt.join(".mcp.json"),
            wt.join(".claude/settings.json"),
            wt.join(".claude/settings.local.json"),
            wt.join("missing.json"),
        ];
        let writable = [wt.clone(), home.join(".claude")];
        let mut found = find(&files, &wt, Some(&home), &writable);
        found.sort();
        let mut want = [
            home.join(".claude/statusline.sh"),
            wt.join(".claude/check.sh"),
            wt.join("tools/guard.py"),
            wt.join("srv/index.js"),
            wt.join("check.sh"),
            wt.join("tools/link.sh"),
            wt.join("tools/real.sh"),
            wt.join("tools/d.sh"),
            wt.join("tools/t.sh"),
            wt.join("tools/pkg.py"),
            wt.join("tools/pkg"),
        ];
        want.sort();
        assert_eq!(found, want);
    }
}

//! Programs an agent's and a project tool's protected settings name. A coding agent runs
//! the commands its settings give — Claude Code's hooks, status line and helpers, the MCP
//! servers of `.mcp.json` and of Gemini CLI's, Cursor's and Codex's settings — outside any
//! sandbox the next time it runs unfenced; so do pre-commit and lefthook at the user's next
//! commit, direnv at the next `cd`, mise, a dev container's `initializeCommand`. The
//! settings files are protected paths (SPEC §2), but a script they name in a writable
//! folder (`~/.claude/statusline.sh`, `$CLAUDE_PROJECT_DIR/.claude/check.sh`, an MCP
//! server's `server.js` in the worktree) would let the sandbox change what runs without
//! touching them.
//!
//! Read at start, outside the sandbox: each settings file (at most 1 MiB; JSON with
//! comments, TOML, the YAML of pre-commit and lefthook, `.envrc`), every command in it
//! ([`PROGRAM_KEYS`]), and the files each runs as `command_files` reads a line: the
//! program by its path, an interpreter's or a shell's script, `sh -c` strings, modules,
//! files loaded first. Those in a writable root join the session's protected list:
//! read-only binds in the mount view, held by the Landlock plan, refused by the write
//! check with a reason. A script it runs in turn is not followed (as for git's hooks,
//! git_code.rs). Policy of what counts as code; the protection of each path found is the
//! kernel's.

use std::path::{Path, PathBuf};

use super::command_files::{self, Places};

/// The most of a settings file read (a real one is a few kilobytes).
const MOST_SETTINGS_BYTES: u64 = 1 << 20;

/// The most paths taken from all settings files; past it fence says which were left.
const MOST_PATHS: usize = 2048;

/// The settings files, relative to the worktree (and each folder protected as it is),
/// whose commands an agent runs.
pub const PROJECT_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    ".cursor/hooks.json",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".kiro/settings/mcp.json",
    ".roo/mcp.json",
    ".amazonq/mcp.json",
    "opencode.json",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".vscode/mcp.json",
    ".devcontainer/devcontainer.json",
    ".devcontainer.json",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    ".envrc",
    "mise.toml",
    ".mise.toml",
    ".config/mise.toml",
    "mise/config.toml",
];

/// The user's own settings files, relative to the home, whose commands an agent runs
/// whatever profile the session has: a script they name in the worktree runs when the
/// user next starts that agent unfenced.
pub const HOME_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".gemini/settings.json",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".cursor/mcp.json",
    ".cursor/hooks.json",
];

/// The files the commands of `files` run that lie inside `writable` (each absolute), with
/// a warning for what could not be taken. `worktree` stands for `$CLAUDE_PROJECT_DIR`; a
/// relative path is taken from the worktree and from `cwd`, where the agent may have been
/// started (a monorepo's package).
pub fn find(
    files: &[PathBuf],
    worktree: &Path,
    cwd: &Path,
    home: Option<&Path>,
    writable: &[PathBuf],
) -> (Vec<PathBuf>, Vec<String>) {
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    let places = Places { worktree, home };
    let mut starts = vec![worktree.to_path_buf()];
    if cwd != worktree && cwd.starts_with(worktree) {
        starts.push(cwd.to_path_buf());
    }
    for file in files {
        let Some(commands) = read_commands(file) else {
            continue;
        };
        for command in commands {
            for (n, start) in starts.iter().enumerate() {
                // From the agent's own folder, only files that are there: the worktree's
                // top is where a missing one is taken.
                let existing_only = n > 0;
                let start = match &command.cwd {
                    Some(dir) => {
                        command_files::as_path(dir, start, &places).unwrap_or_else(|| start.clone())
                    }
                    None => start.clone(),
                };
                let paths = match &command.run {
                    Run::Line(line) => command_files::files_run(line, &start, &places),
                    Run::Argv(argv) => command_files::files_run_by_argv(argv, &start, &places),
                };
                for path in paths {
                    if existing_only && !path.is_file() {
                        continue;
                    }
                    // The name as written (a symlink the sandbox could replace) and the
                    // file it leads to.
                    let real = std::fs::canonicalize(&path).ok();
                    for p in std::iter::once(path).chain(real) {
                        if !writable.iter().any(|w| p.starts_with(w)) || found.contains(&p) {
                            continue;
                        }
                        if found.len() >= MOST_PATHS {
                            warnings.push(format!(
                                "{} names more than {MOST_PATHS} programs and scripts in writable folders: {} and any after it are not protected",
                                file.display(),
                                p.display()
                            ));
                            return (found, warnings);
                        }
                        found.push(p);
                    }
                }
            }
        }
    }
    (found, warnings)
}

/// What a settings file runs.
enum Run {
    /// A shell line.
    Line(String),
    /// Words run as they are (an MCP server's `command` with its `args`, Codex's
    /// `notify`), each of which may hold blanks.
    Argv(Vec<String>),
}

struct Command {
    run: Run,
    /// The folder it runs in (an MCP server's `cwd`), relative to the start.
    cwd: Option<String>,
}

/// The commands a settings file names: JSON (comments and trailing commas allowed, as
/// Gemini CLI and VS Code read theirs), TOML, the YAML of pre-commit and lefthook, and
/// `.envrc` (a shell script). `None` when it cannot be read: missing, not a regular file
/// (a link is followed: a dotfiles setup links its settings), or larger than
/// [`MOST_SETTINGS_BYTES`].
fn read_commands(file: &Path) -> Option<Vec<Command>> {
    use std::io::Read;
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() || meta.len() > MOST_SETTINGS_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(MOST_SETTINGS_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let name = file.file_name()?.to_string_lossy();
    let mut out = Vec::new();
    if name == ".envrc" {
        out.push(Command {
            run: Run::Line(text.into_owned()),
            cwd: None,
        });
    } else if name.ends_with(".yml") || name.ends_with(".yaml") {
        out.extend(yaml_commands(&text).into_iter().map(|line| Command {
            run: Run::Line(line),
            cwd: None,
        }));
    } else {
        let value: serde_json::Value = if name.ends_with(".toml") {
            toml::from_str(&text).ok()?
        } else {
            serde_json::from_str(&text)
                .or_else(|_| serde_json::from_str(&relaxed_json(&text)))
                .ok()?
        };
        json_commands(&value, None, &mut out);
    }
    Some(out)
}

/// The settings keys whose value is a command an agent or tool runs, a string (a shell
/// line) or a list of words (an argv): every agent's `command` (hooks, the status line,
/// MCP servers, with the `args`, `cwd` and `env` beside it); Claude Code's credential and
/// telemetry helpers, run at each start; Gemini CLI's tool discovery and call commands;
/// Codex's `notify`; a dev container's `initializeCommand` (run on the host); VS Code's
/// Python interpreter; mise's tasks (`run`) and hooks (`enter`, `leave`, `cd`).
const PROGRAM_KEYS: &[&str] = &[
    "command",
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "otelHeadersHelper",
    "toolDiscoveryCommand",
    "toolCallCommand",
    "notify",
    "initializeCommand",
    "python.defaultInterpreterPath",
    "python.pythonPath",
    "run",
    "enter",
    "leave",
    "cd",
];

/// The commands of a JSON (or TOML) value, see [`PROGRAM_KEYS`]. `key` is the key `v` is
/// the value of.
fn json_commands(v: &serde_json::Value, key: Option<&str>, out: &mut Vec<Command>) {
    use serde_json::Value;
    let is_program = key.is_some_and(|k| PROGRAM_KEYS.contains(&k));
    let argv_of = |items: &Vec<Value>| -> Option<Vec<String>> {
        items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect()
    };
    match v {
        Value::String(line) if is_program => out.push(Command {
            run: Run::Line(line.clone()),
            cwd: None,
        }),
        Value::Array(items) if is_program && argv_of(items).is_some() => out.push(Command {
            run: Run::Argv(argv_of(items).unwrap_or_default()),
            cwd: None,
        }),
        // A dev container's `initializeCommand` may also be an object of named commands.
        Value::Object(map) if key == Some("initializeCommand") => {
            for child in map.values() {
                json_commands(child, key, out);
            }
        }
        Value::Object(map) => {
            let cwd = map.get("cwd").and_then(Value::as_str).map(str::to_string);
            // Variables a runtime reads its options from (`NODE_OPTIONS=--require x`).
            let env: Vec<String> = map
                .get("env")
                .and_then(Value::as_object)
                .map(|e| {
                    e.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}")))
                        .collect()
                })
                .unwrap_or_default();
            let args = map.get("args").and_then(Value::as_array).and_then(argv_of);
            let command = map.get("command");
            match command {
                // An MCP server: `command` with its `args` as one argv, or a line.
                Some(Value::String(c)) if args.is_some() || !env.is_empty() => {
                    let mut argv = env.clone();
                    if args.is_some() {
                        argv.push(c.clone());
                    } else {
                        argv.extend(command_files::split_words(c));
                    }
                    argv.extend(args.clone().unwrap_or_default());
                    out.push(Command {
                        run: Run::Argv(argv),
                        cwd: cwd.clone(),
                    });
                }
                Some(Value::String(c)) => out.push(Command {
                    run: Run::Line(c.clone()),
                    cwd: cwd.clone(),
                }),
                Some(Value::Array(items)) if argv_of(items).is_some() => {
                    let mut argv = env.clone();
                    argv.extend(argv_of(items).unwrap_or_default());
                    argv.extend(args.clone().unwrap_or_default());
                    out.push(Command {
                        run: Run::Argv(argv),
                        cwd: cwd.clone(),
                    });
                }
                _ => {}
            }
            for (k, child) in map {
                if k == "command" && (child.is_string() || child.is_array()) {
                    continue;
                }
                json_commands(child, Some(k), out);
            }
        }
        Value::Array(items) => {
            for child in items {
                json_commands(child, None, out);
            }
        }
        _ => {}
    }
}

/// The shell lines of a pre-commit or lefthook config: each `entry:`, `run:` and
/// `command:` value, plain, quoted or a block (`run: |` and the lines below it). Read by
/// lines, not as YAML: reading more than the tools run is harmless here.
fn yaml_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
        let value = ["entry:", "run:", "command:", "script:"]
            .iter()
            .find_map(|k| trimmed.strip_prefix(k));
        i += 1;
        let Some(value) = value.map(str::trim) else {
            continue;
        };
        if value.starts_with('|') || value.starts_with('>') {
            let indent = line.len() - line.trim_start().len();
            let mut block = Vec::new();
            while i < lines.len()
                && (lines[i].trim().is_empty()
                    || lines[i].len() - lines[i].trim_start().len() > indent)
            {
                block.push(lines[i].trim());
                i += 1;
            }
            out.push(block.join("\n"));
        } else {
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            out.push(unquoted.to_string());
        }
    }
    out
}

/// JSON with `//` and `/* */` comments and trailing commas made plain JSON (strings left
/// as they are).
fn relaxed_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(q) = chars.next() {
                    out.push(q);
                    match q {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for q in chars.by_ref() {
                    if q == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for q in chars.by_ref() {
                    if last == '*' && q == '/' {
                        break;
                    }
                    last = q;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas: `,` followed by blanks and a closing bracket.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    let mut in_string = false;
    let mut k = 0;
    while k < bytes.len() {
        let c = bytes[k];
        if in_string {
            cleaned.push(c);
            if c == '\\' && k + 1 < bytes.len() {
                cleaned.push(bytes[k + 1]);
                k += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            cleaned.push(c);
        } else if c == ',' {
            let next = bytes[k + 1..].iter().find(|n| !n.is_whitespace());
            if !matches!(next, Some('}' | ']')) {
                cleaned.push(c);
            }
        } else {
            cleaned.push(c);
        }
        k += 1;
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_anywhere_in_the_settings_are_found_and_only_their_code() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().join("wt").canonicalize().unwrap_or_else(|_| {
            std::fs::create_dir_all(dir.path().join("wt")).unwrap();
            dir.path().join("wt").canonicalize().unwrap()
        });
        let home = dir.path().join("home");
        std::fs::create_dir_all(wt.join(".claude")).unwrap();
        std::fs::create_dir_all(wt.join(".gemini")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(wt.join("tools/pkg")).unwrap();
        std::fs::create_dir_all(wt.join("src")).unwrap();
        std::fs::create_dir_all(wt.join("packages/web/scripts")).unwrap();
        let home = home.canonicalize().unwrap();
        for f in [
            "check.sh",
            "tools/real.sh",
            "srv/index.js",
            "packages/web/scripts/lint.sh",
        ] {
            let p = wt.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        std::os::unix::fs::symlink("real.sh", wt.join("tools/link.sh")).unwrap();
        std::fs::write(
            home.join(".claude/real-settings.json"),
            r#"{"statusLine": {"type": "command", "command": "bash ~/.claude/statusline.sh"},
                "apiKeyHelper": "$CLAUDE_PROJECT_DIR/tools/key.sh",
                "permissions": {"allow": ["Edit(src/main.rs)"]},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "\"${CLAUDE_PROJECT_DIR:?}\"/.claude/check.sh"},
                    {"type": "command", "command": "npx eslint --fix src/"},
                    {"type": "command", "command": "sh -c 'python3 tools/guard.py; /usr/bin/true'"}]}]}}"#,
        )
        .unwrap();
        // A dotfiles setup links the settings file.
        std::os::unix::fs::symlink("real-settings.json", home.join(".claude/settings.json"))
            .unwrap();
        std::fs::write(
            wt.join(".mcp.json"),
            r#"{"mcpServers": {"s": {"command": "node", "args": ["srv/index.js", "--port", "1"]},
                                "f": {"command": "npx", "args": ["-y", "@x/server-filesystem", "./"]},
                                "e": {"command": "node", "args": ["x.js"], "cwd": "tools",
                                      "env": {"NODE_OPTIONS": "--require ./pre.js"}}}}"#,
        )
        .unwrap();
        // Gemini's settings may hold comments.
        std::fs::write(
            wt.join(".gemini/settings.json"),
            "{\n  // discovery\n  \"toolDiscoveryCommand\": \"bash check.sh\", /* x */\n}\n",
        )
        .unwrap();
        std::fs::write(
            wt.join(".claude/settings.local.json"),
            r#"{"hooks": {"Stop": [{"hooks": [
                {"type": "command", "command": "$PWD/tools/link.sh"},
                {"type": "command", "command": "bash scripts/lint.sh"},
                {"type": "command", "command": "python3 -m tools.pkg"}]}]}}"#,
        )
        .unwrap();
        std::fs::write(
            wt.join(".pre-commit-config.yaml"),
            "repos:\n- repo: local\n  hooks:\n  - id: x\n    entry: ./tools/pc.sh\n    language: script\n",
        )
        .unwrap();
        std::fs::write(wt.join(".envrc"), "source_env tools/env.sh\nPATH_add bin\n").unwrap();
        let files = [
            home.join(".claude/settings.json"),
            wt.join(".mcp.json"),
            wt.join(".gemini/settings.json"),
            wt.join(".claude/settings.local.json"),
            wt.join(".pre-commit-config.yaml"),
            wt.join(".envrc"),
            wt.join("missing.json"),
        ];
        let writable = [wt.clone(), home.join(".claude")];
        let (mut found, warnings) = find(
            &files,
            &wt,
            &wt.join("packages/web"),
            Some(&home),
            &writable,
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        found.sort();
        let mut want: Vec<PathBuf> = [
            "check.sh",
            ".claude/check.sh",
            "tools/key.sh",
            "tools/guard.py",
            "srv/index.js",
            "tools/x.js",
            "tools/pre.js",
            "tools/link.sh",
            "tools/real.sh",
            "scripts/lint.sh",
            "packages/web/scripts/lint.sh",
            "tools/__init__.py",
            "tools/pkg.py",
            "tools/pkg/__init__.py",
            "tools/pkg/__main__.py",
            "tools/pc.sh",
            "tools/env.sh",
            "bin",
        ]
        .iter()
        .map(|r| wt.join(r))
        .collect();
        want.push(home.join(".claude/statusline.sh"));
        want.sort();
        assert_eq!(found, want);
    }

    #[test]
    fn relaxed_json_drops_comments_and_trailing_commas_only() {
        assert_eq!(
            relaxed_json("{\"a\": \"//x, }\", // c\n \"b\": [1,2,], /* d */}"),
            "{\"a\": \"//x, }\", \n \"b\": [1,2] }"
        );
    }
}

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
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
    "lefthook.json",
    ".lefthook.json",
    "lefthook.toml",
    ".lefthook.toml",
    ".config/lefthook.yml",
    ".config/lefthook.yaml",
    ".config/lefthook.json",
    ".config/lefthook.toml",
    ".envrc",
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
    ".mise/config.toml",
    "mise/config.toml",
];

/// The settings files of a folder whose commands run later ([`PROJECT_SETTINGS`]), with
/// a dev container's other configurations (`.devcontainer/NAME/devcontainer.json`).
pub fn project_settings(base: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = PROJECT_SETTINGS.iter().map(|rel| base.join(rel)).collect();
    if let Ok(entries) = std::fs::read_dir(base.join(".devcontainer")) {
        files.extend(
            entries
                .flatten()
                .take(64)
                .map(|e| e.path().join("devcontainer.json"))
                .filter(|p| p.is_file()),
        );
    }
    files
}

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
        let commands = match read_commands(file) {
            Ok(Some(commands)) => commands,
            Ok(None) => continue,
            Err(why) => {
                warnings.push(format!(
                    "{} cannot be read ({why}): the programs it names are not protected",
                    file.display()
                ));
                continue;
            }
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
                    Run::Folder(dir) => command_files::as_path(dir, &start, &places)
                        .into_iter()
                        .collect(),
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
    /// A folder whose every script runs (lefthook's `source_dir`), protected whole.
    Folder(String),
}

struct Command {
    run: Run,
    /// The folder it runs in (an MCP server's `cwd`), relative to the start.
    cwd: Option<String>,
}

/// The commands a settings file names: JSON (comments, trailing commas and a byte-order
/// mark allowed, as Gemini CLI and VS Code read theirs), TOML, the YAML of pre-commit and
/// lefthook, and `.envrc` (a shell script). `Ok(None)` when there is no such file (a link
/// is followed: a dotfiles setup links its settings); `Err` naming why when one is there
/// and cannot be read (not a regular file, larger than [`MOST_SETTINGS_BYTES`], not
/// parsed): fence says so, since what it names is then not protected.
fn read_commands(file: &Path) -> Result<Option<Vec<Command>>, String> {
    use std::io::Read;
    let meta = match std::fs::metadata(file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MOST_SETTINGS_BYTES {
        return Err(format!("larger than {MOST_SETTINGS_BYTES} bytes"));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MOST_SETTINGS_BYTES).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = Vec::new();
    if name == ".envrc" {
        out.push(Command {
            run: Run::Line(text.to_string()),
            cwd: None,
        });
    } else if name.ends_with(".yml") || name.ends_with(".yaml") {
        out.extend(yaml_commands(text));
    } else {
        let value: serde_json::Value = if name.ends_with(".toml") {
            toml::from_str(text).map_err(|e| format!("not TOML: {e}"))?
        } else {
            serde_json::from_str(text)
                .or_else(|_| serde_json::from_str(&relaxed_json(text)))
                .map_err(|e| format!("not JSON: {e}"))?
        };
        json_commands(&value, None, &mut out);
    }
    Ok(Some(out))
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
    // An argv's words, each a string or (VS Code's tasks) an object with its `value`.
    let argv_of = |items: &Vec<Value>| -> Option<Vec<String>> {
        items
            .iter()
            .map(|i| {
                i.as_str()
                    .or_else(|| i.get("value").and_then(Value::as_str))
                    .map(str::to_string)
            })
            .collect()
    };
    let file_command = |f: &str| Command {
        run: Run::Argv(vec![
            if f.contains('/') || f.starts_with('~') || f.starts_with('$') {
                f.to_string()
            } else {
                format!("./{f}")
            },
        ]),
        cwd: None,
    };
    match v {
        // mise's `run` list: one shell line each.
        Value::Array(items) if key == Some("run") => {
            for line in items.iter().filter_map(Value::as_str) {
                out.push(Command {
                    run: Run::Line(line.to_string()),
                    cwd: None,
                });
            }
        }
        // A file run as it is (mise's `file`), config of its own (`extends`, `includes`).
        Value::String(f) if matches!(key, Some("file" | "extends" | "includes")) => {
            out.push(file_command(f));
        }
        Value::Array(items) if matches!(key, Some("extends" | "includes")) => {
            out.extend(items.iter().filter_map(Value::as_str).map(file_command));
        }
        Value::String(line) if is_program => out.push(Command {
            run: Run::Line(line.clone()),
            cwd: None,
        }),
        Value::Array(items) if is_program && argv_of(items).is_some() => out.push(Command {
            run: Run::Argv(argv_of(items).unwrap_or_default()),
            cwd: None,
        }),
        // mise's tasks written short (`[tasks] build = "./tools/build.sh"`): a line each.
        Value::Object(map) if key == Some("tasks") && map.values().any(Value::is_string) => {
            for (k, child) in map {
                match child {
                    Value::String(line) => out.push(Command {
                        run: Run::Line(line.clone()),
                        cwd: None,
                    }),
                    other => json_commands(other, Some(k), out),
                }
            }
        }
        // A dev container's `initializeCommand` may also be an object of named commands.
        Value::Object(map) if key == Some("initializeCommand") => {
            for child in map.values() {
                json_commands(child, key, out);
            }
        }
        Value::Object(map) => {
            // Where it runs: an MCP server's `cwd`, a VS Code task's `options.cwd`, a mise
            // task's `dir`, a lefthook command's `root`.
            let cwd = map
                .get("cwd")
                .or_else(|| map.get("options").and_then(|o| o.get("cwd")))
                .or_else(|| map.get("dir"))
                .or_else(|| map.get("root"))
                .and_then(Value::as_str)
                .map(str::to_string);
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
                // No command beside it: the variables still load code into what runs
                // with them (`"env": {"BASH_ENV": "tools/x.sh"}` in an agent's settings).
                _ if !env.is_empty() => out.push(Command {
                    run: Run::Argv(env.clone()),
                    cwd: None,
                }),
                _ => {}
            }
            for (k, child) in map {
                if k == "command" && (child.is_string() || child.is_array()) {
                    continue;
                }
                // A `run` beside a `dir` or `root` runs there.
                if k == "run" && cwd.is_some() {
                    let mut inner = Vec::new();
                    json_commands(child, Some(k), &mut inner);
                    out.extend(inner.into_iter().map(|c| Command {
                        cwd: c.cwd.or_else(|| cwd.clone()),
                        ..c
                    }));
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

/// The commands of a pre-commit or lefthook config, read by lines, not as YAML (reading
/// more than the tools run is harmless here): each `entry:`, `run:`, `command:` and
/// `script:` value, plain, quoted, a block (`run: |` and the lines below it) or inside a
/// flow mapping (`{id: x, entry: ./x.sh}`), keys quoted or not, an alias (`*a`) taken as
/// its anchor's value; the items of an `args:` list that name a script by its extension
/// (`entry: bash` with `args: [tools/x.sh]`); a lefthook command's `root:` as where its
/// `run:` starts; and the files `extends:` names, which are config of their own.
fn yaml_commands(text: &str) -> Vec<Command> {
    const KEYS: [&str; 4] = ["entry", "run", "command", "script"];
    let lines: Vec<&str> = text.lines().collect();
    // `&name value` anchors.
    let mut anchors: Vec<(String, String)> = Vec::new();
    for line in &lines {
        if let Some(at) = line.find('&') {
            let rest = &line[at + 1..];
            let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || "_-".contains(c))
            {
                anchors.push((name.to_string(), unquote(value.trim()).to_string()));
            }
        }
    }
    let resolve = |v: &str| -> String {
        match v.strip_prefix('*') {
            Some(name) => anchors
                .iter()
                .find(|(n, _)| n == name.trim())
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
            None => unquote(v).to_string(),
        }
    };
    let mut out = Vec::new();
    let mut root: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        for (key, value) in yaml_pairs(line) {
            match key.as_str() {
                "root" => root = Some(resolve(&value)),
                // lefthook's script folders, when not its default `.lefthook/` (protected
                // by name): the hook it installs runs every script there.
                "source_dir" | "source_dir_local" if !value.is_empty() => out.push(Command {
                    run: Run::Folder(resolve(&value)),
                    cwd: None,
                }),
                "extends" | "includes" | "args" => {
                    // An inline list, or the `- item` lines below.
                    let mut items: Vec<String> = flow_items(&value);
                    if value.is_empty() {
                        while i < lines.len() && lines[i].trim_start().starts_with("- ") {
                            items.push(resolve(lines[i].trim_start()[2..].trim()));
                            i += 1;
                        }
                    }
                    for item in items {
                        let script = item.rsplit('.').next().is_some_and(|e| {
                            matches!(
                                e,
                                "sh" | "bash"
                                    | "py"
                                    | "js"
                                    | "mjs"
                                    | "cjs"
                                    | "ts"
                                    | "rb"
                                    | "pl"
                                    | "yml"
                                    | "yaml"
                                    | "toml"
                                    | "json"
                            )
                        });
                        if key != "args" || script {
                            out.push(Command {
                                run: Run::Argv(vec![format!(
                                    "./{}",
                                    item.trim_start_matches("./")
                                )]),
                                cwd: None,
                            });
                        }
                    }
                }
                k if KEYS.contains(&k) => {
                    let line_text = if value.starts_with('|') || value.starts_with('>') {
                        let indent = line.len() - line.trim_start().len();
                        let mut block = Vec::new();
                        while i < lines.len()
                            && (lines[i].trim().is_empty()
                                || lines[i].len() - lines[i].trim_start().len() > indent)
                        {
                            block.push(lines[i].trim());
                            i += 1;
                        }
                        block.join("\n")
                    } else {
                        resolve(&value)
                    };
                    out.push(Command {
                        run: Run::Line(line_text),
                        cwd: root.clone(),
                    });
                }
                _ => {}
            }
        }
    }
    out
}

/// The `key: value` pairs of one YAML line: the plain form (`- key: value`, `"key" :
/// value`) and each pair of a flow mapping (`{id: x, entry: ./x.sh}`).
fn yaml_pairs(line: &str) -> Vec<(String, String)> {
    let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
    let parts: Vec<&str> = if trimmed.contains('{') {
        trimmed
            .split(['{', '}', ','])
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect()
    } else {
        vec![trimmed]
    };
    parts
        .into_iter()
        .filter_map(|p| {
            let (k, v) = p.split_once(':')?;
            let k = unquote(k.trim()).trim().to_string();
            (!k.is_empty() && !k.contains(' ')).then(|| (k, v.trim().to_string()))
        })
        .collect()
}

/// The items of a flow list (`[a, "b"]`); none for anything else.
fn flow_items(value: &str) -> Vec<String> {
    value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .map(|inner| {
            inner
                .split(',')
                .map(|i| unquote(i.trim()).to_string())
                .filter(|i| !i.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

fn unquote(v: &str) -> &str {
    v.strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(v)
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
        ]
        .iter()
        .map(|r| wt.join(r))
        .collect();
        want.push(home.join(".claude/statusline.sh"));
        want.sort();
        assert_eq!(found, want);
    }

    #[test]
    fn other_shapes_of_hook_configs_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(wt.join(".vscode")).unwrap();
        std::fs::create_dir_all(wt.join(".claude")).unwrap();
        std::fs::write(
            wt.join(".pre-commit-config.yaml"),
            "x: &c ./tools/aliased.sh\nrepos:\n- repo: local\n  hooks: [{id: a, entry: ./tools/flow.sh, language: script}]\n  hooks:\n  - id: b\n    \"entry\" : bash\n    args: [tools/arg.sh, --fast]\n  - id: c\n    entry: *c\n",
        )
        .unwrap();
        std::fs::write(
            wt.join("lefthook.yml"),
            "source_dir: hooks-src/\nextends:\n  - tools/more.yml\npre-commit:\n  commands:\n    api:\n      root: api/\n      run: ./lint.sh\n",
        )
        .unwrap();
        std::fs::write(
            wt.join(".vscode/tasks.json"),
            "\u{feff}{\"tasks\": [{\"command\": \"./build.sh\", \"options\": {\"cwd\": \"web\"}},\n {\"command\": \"bash\", \"args\": [{\"value\": \"tools/task.sh\", \"quoting\": \"strong\"}]}]}",
        )
        .unwrap();
        std::fs::write(
            wt.join(".claude/settings.json"),
            r#"{"env": {"BASH_ENV": "tools/env.sh"}}"#,
        )
        .unwrap();
        std::fs::write(wt.join(".mcp.json"), "{ not json").unwrap();
        std::fs::write(
            wt.join("mise.toml"),
            "[tasks]\nbuild = \"./tools/build.sh\"\n[tasks.lint]\nrun = [\"./tools/a.sh --x\", \"sh b.sh\"]\ndir = \"api\"\n",
        )
        .unwrap();
        let files = [
            wt.join("mise.toml"),
            wt.join(".pre-commit-config.yaml"),
            wt.join("lefthook.yml"),
            wt.join(".vscode/tasks.json"),
            wt.join(".claude/settings.json"),
            wt.join(".mcp.json"),
        ];
        let (mut found, warnings) = find(&files, &wt, &wt, None, std::slice::from_ref(&wt));
        found.sort();
        let mut want: Vec<PathBuf> = [
            "tools/aliased.sh",
            "tools/flow.sh",
            "tools/arg.sh",
            "tools/more.yml",
            "api/lint.sh",
            "web/build.sh",
            "tools/task.sh",
            "tools/env.sh",
            "tools/build.sh",
            "api/tools/a.sh",
            "api/b.sh",
            "hooks-src",
        ]
        .iter()
        .map(|r| wt.join(r))
        .collect();
        want.sort();
        assert_eq!(found, want);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains(".mcp.json cannot be read"),
            "{warnings:?}"
        );
    }

    #[test]
    fn relaxed_json_drops_comments_and_trailing_commas_only() {
        assert_eq!(
            relaxed_json("{\"a\": \"//x, }\", // c\n \"b\": [1,2,], /* d */}"),
            "{\"a\": \"//x, }\", \n \"b\": [1,2] }"
        );
    }
}

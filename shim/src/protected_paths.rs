//! Protected paths inside the worktree (SPEC §2): files that would run code later, outside
//! the sandbox (git hooks and config, direnv, editor and agent settings). They stay
//! read-only even though the worktree is writable.
//!
//! Landlock grants rights downward and cannot carve a read-only hole in a writable tree, so
//! in a mount namespace each existing protected path is a read-only bind of itself, and
//! `.git` is a mount point of its own, which the kernel refuses to rename or remove (a
//! renamed `.git` beside a forged one would carry forged hooks out). The supervisor also
//! refuses writes to these paths with a reason, which covers creating one that does not
//! exist yet — a check that, unlike the mounts, a racing thread could slip past.

use std::borrow::Cow;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

/// The spelling in which a path is compared with the protected names: every name on the
/// lists is lowercase ASCII, and a path is lowered to match. On a file system that folds
/// case — ext4 and f2fs folders with casefold (`chattr +F`, which the user may have set;
/// the sandbox's `FS_IOC_SETFLAGS` on a folder, opened read-only, is refused), tmpfs
/// mounted with it, vfat, exfat, SMB, a macOS folder shared into a virtual machine —
/// `.GIT/hooks/pre-commit` *is*
/// `.git/hooks/pre-commit`, and `.ENVRC` is what direnv opens as `.envrc`. So every
/// protected name is matched in any case, on every file system (on one that keeps case,
/// `.VSCode/` is only asked about when nothing would have been).
///
/// Besides ASCII case, the characters whose Unicode case folding is ASCII letters (the
/// Kelvin sign is `k`, the long s is `s`, `ß` is `ss`, the Latin ligatures `ﬁ`, `ﬂ`, `ﬀ`,
/// `ﬃ`, `ﬄ`, `ﬅ`, `ﬆ`), and the dotless `ı`, which exFAT and NTFS upper-case to `I`, are
/// folded, and the characters Unicode calls default-ignorable (the zero-width ones, the
/// bidi marks, the variation selectors, the soft hyphen…: HFS+ and some kernels' casefold
/// tables drop them from names) are dropped. Each name is folded on its own, and one that
/// would fold to nothing, `.` or `..` is kept as it is: it names a plain entry. Bytes that
/// are not UTF-8 stay as they are. A path already in lowercase ASCII is returned as it is.
pub fn name_key(rel: &Path) -> Cow<'_, Path> {
    let bytes = rel.as_os_str().as_bytes();
    if !bytes
        .iter()
        .any(|c| c.is_ascii_uppercase() || !c.is_ascii())
    {
        return Cow::Borrowed(rel);
    }
    // ASCII: lowered in place of a copy (git's temporary names, `tmp_obj_D93b1J`, come on
    // every object it writes); lowering never makes a name empty, `.` or `..`.
    if bytes.is_ascii() {
        return Cow::Owned(PathBuf::from(std::ffi::OsString::from_vec(
            bytes.to_ascii_lowercase(),
        )));
    }
    let mut key = Vec::with_capacity(bytes.len());
    for (n, name) in bytes.split(|c| *c == b'/').enumerate() {
        if n > 0 {
            key.push(b'/');
        }
        let mut folded = Vec::with_capacity(name.len());
        for chunk in name.utf8_chunks() {
            for c in chunk.valid().chars() {
                match folded_char(c) {
                    Some(ascii) => folded.extend_from_slice(ascii.as_bytes()),
                    None => {
                        let mut buf = [0; 4];
                        folded.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                }
            }
            folded.extend_from_slice(chunk.invalid());
        }
        let structural = |n: &[u8]| matches!(n, b"" | b"." | b"..");
        if structural(&folded) && !structural(name) {
            key.extend_from_slice(name);
        } else {
            key.extend_from_slice(&folded);
        }
    }
    Cow::Owned(PathBuf::from(std::ffi::OsString::from_vec(key)))
}

/// What [`name_key`] puts for `c`: `None` keeps it.
fn folded_char(c: char) -> Option<&'static str> {
    const LOWER: [&str; 26] = [
        "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
        "s", "t", "u", "v", "w", "x", "y", "z",
    ];
    Some(match c {
        'A'..='Z' => LOWER[c as usize - 'A' as usize],
        '\u{212A}' => "k",
        '\u{017F}' => "s",
        '\u{0131}' => "i",
        '\u{00DF}' | '\u{1E9E}' => "ss",
        '\u{FB00}' => "ff",
        '\u{FB01}' => "fi",
        '\u{FB02}' => "fl",
        '\u{FB03}' => "ffi",
        '\u{FB04}' => "ffl",
        '\u{FB05}' | '\u{FB06}' => "st",
        // Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties).
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'..='\u{1160}'
        | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFF8}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}' => "",
        _ => return None,
    })
}

/// Whether a name of `path` is `.git` in any spelling [`name_key`] folds.
pub fn names_a_git_folder(path: &Path) -> bool {
    name_key(path).components().any(|c| c.as_os_str() == ".git")
}

/// Relative paths protected with everything beneath them. `.git/fence` holds fence's spare
/// folders ([`SPARE_HOME`]).
const PROTECTED_TREES: [&str; 31] = [
    ".git/hooks",
    // git's older ways to define a remote (a file per remote name: `URL:`, `Push:`,
    // `Pull:` lines), read for any name `.git/config` does not define: one for `origin`
    // in a repository with no remote yet sends the user's next `git push` elsewhere.
    ".git/remotes",
    ".git/branches",
    ".vscode",
    ".idea",
    // A dev container's definition: VS Code runs its `initializeCommand` on the host when
    // the folder is reopened in the container.
    ".devcontainer",
    // mise's project config folders: their `[hooks]` and `[env]` run in the user's shell
    // on `cd` once the file is trusted, as direnv's `.envrc` does.
    ".mise",
    ".config/mise",
    SPARE_HOME,
    // Codex's and Gemini CLI's project rules of what runs unasked.
    ".codex/rules",
    ".gemini/policies",
    // Where Claude Code's project settings conventionally keep the hook scripts they name.
    ".claude/hooks",
    // Claude Code's project subagents and skills (their frontmatter's `hooks` and
    // `mcpServers` run programs; a skill carries scripts it runs) and custom commands
    // (their `!` lines run a shell when invoked); Gemini CLI's custom commands (`!{…}`
    // runs a shell) and project extensions (the MCP servers each manifest starts); Codex's
    // project skills.
    ".claude/agents",
    ".claude/skills",
    ".claude/commands",
    ".gemini/commands",
    ".gemini/extensions",
    ".codex/skills",
    // lefthook's script folders (its `source_dir` and `source_dir_local`): the git hook
    // `lefthook install` writes runs the scripts its config names from there.
    ".lefthook",
    ".lefthook-local",
    // Other editors' project settings, as `.vscode/`: Zed and Helix start the language
    // servers their settings name when a file of the project is opened.
    ".zed",
    ".helix",
    // Agents' project hooks and plugins, run outside any sandbox when the agent next works
    // in the project: Cursor's hook scripts, Kiro's hooks, OpenCode's plugins and custom
    // tools.
    ".cursor/hooks",
    ".kiro/hooks",
    ".opencode/plugin",
    ".opencode/plugins",
    ".opencode/tool",
    ".opencode/tools",
    // GitHub Copilot's repository hooks (`.github/hooks/*.json`, which Copilot CLI loads
    // from the folder it works in, and the scripts they name beside them), the agent skills
    // Codex and others take from `.agents/skills`, and Gemini CLI's project skills.
    ".github/hooks",
    ".agents/skills",
    ".gemini/skills",
];

/// Where, in the worktree, `fence run` keeps the empty folders it hands to the sandbox as
/// new folders of the worktree's root (the supervisor's `spare_folders`): a protected tree,
/// so no sandbox writes there, and a read-only mount in every mount view.
pub const SPARE_HOME: &str = ".git/fence";
/// Relative paths protected exactly.
/// `.git/commondir` names the directory git takes its config and hooks from;
/// `.git/config.worktree` is a config file once `extensions.worktreeConfig` is on.
const PROTECTED_FILES: [&str; 15] = [
    ".git/config",
    ".git/commondir",
    ".git/config.worktree",
    ".gitmodules",
    ".envrc",
    ".mcp.json",
    ".devcontainer.json",
    // pre-commit's configuration: the git hook `pre-commit install` writes runs the
    // commands it names on the user's next `git commit` (as husky's folder does; lefthook's
    // names: [`is_lefthook_config`]).
    ".pre-commit-config.yaml",
    // aider's project config (its `lint-cmd` and `test-cmd` run after each edit), Kiro's
    // MCP servers, and the project config vim and Neovim run when `exrc` is on.
    ".aider.conf.yml",
    ".kiro/settings/mcp.json",
    ".exrc",
    ".vimrc",
    ".gvimrc",
    ".nvimrc",
    ".nvim.lua",
];

/// lefthook's configuration (<https://lefthook.dev/configuration>): the main config and
/// its `-local` one merged into it, in every format lefthook reads (`yml`, `yaml`, `toml`,
/// `json`, `jsonc`), with or without a leading dot, at the worktree's root or in
/// `.config/`. The git hook `lefthook install` writes runs the commands they name on the
/// user's next `git commit`; any of them may be the one lefthook picks.
pub fn is_lefthook_config(rel: &Path) -> bool {
    let key = name_key(rel);
    let b = key.as_os_str().as_bytes();
    let name = b.strip_prefix(b".config/").unwrap_or(b);
    let name = name.strip_prefix(b".").unwrap_or(name);
    let Some(rest) = name.strip_prefix(b"lefthook") else {
        return false;
    };
    let rest = rest.strip_prefix(b"-local").unwrap_or(rest);
    matches!(rest, b".yml" | b".yaml" | b".toml" | b".json" | b".jsonc")
}

/// Every protected path, and every directory that holds one, lies below a dot-named entry
/// of the worktree (`.git`, `.claude`, `.vscode`, `.envrc`…): a relative path whose first
/// byte is not a dot is neither, and is answered without walking its components (this
/// runs on every notified write).
fn below_a_dot_entry(rel: &Path) -> bool {
    rel.as_os_str().as_bytes().first() == Some(&b'.')
}

/// mise's project configuration outside its protected folders (`.mise/`, `.config/mise/`):
/// `mise.toml` and `.mise.toml` at the worktree's root, `.config/mise.toml` and
/// `mise/config.toml`, with their `.local` ones and those for an environment
/// (`mise.ENV.toml`, `mise/config.ENV.toml`: which one mise loads depends on `MISE_ENV` in
/// the user's shell, so every such name is protected), and the older `.rtx.toml` ones.
/// mise runs their `[hooks]` and loads their `[env]` in the user's shell on `cd`.
pub fn is_mise_config(rel: &Path) -> bool {
    let key = name_key(rel);
    let b = key.as_os_str().as_bytes();
    let rest = if let Some(name) = b.strip_prefix(b"mise/") {
        name.strip_prefix(b"config")
    } else {
        let name = b.strip_prefix(b".config/").unwrap_or(b);
        let dotted = name.strip_prefix(b".");
        let name = dotted.unwrap_or(name);
        name.strip_prefix(b"mise")
            .or_else(|| dotted.and_then(|n| n.strip_prefix(b"rtx")))
    };
    // What lies between the stem and `.toml`: nothing, or `.ENV`, `.local`, `.ENV.local`
    // (one name: no folder).
    rest.and_then(|r| r.strip_suffix(b".toml"))
        .is_some_and(|middle| {
            middle.is_empty()
                || (middle.len() > 1 && middle.starts_with(b".") && !middle.contains(&b'/'))
        })
}

/// Hook managers' and mise's configuration at the worktree's root and in its `mise/` and
/// `.config/` folders, by name ([`is_lefthook_config`], [`is_mise_config`]).
fn is_tool_config(rel: &Path) -> bool {
    is_lefthook_config(rel)
        || is_mise_config(rel)
        // OpenCode's project config: the MCP servers and plugins it starts.
        || matches!(rel.as_os_str().as_bytes(), b"opencode.json" | b"opencode.jsonc")
}

/// Whether `rel` (relative to the worktree) is a protected path, in any case
/// ([`name_key`]).
pub fn is_protected(rel: &Path) -> bool {
    is_protected_as(rel, &name_key(rel))
}

/// [`is_protected`], with `key` the [`name_key`] of `rel`, folded once by the caller.
pub fn is_protected_as(rel: &Path, key: &Path) -> bool {
    if !below_a_dot_entry(key) {
        return is_nested_git_control(key) || is_stray_head(rel, key) || is_tool_config(key);
    }
    if key.components().any(|c| !matches!(c, Component::Normal(_))) {
        return false;
    }
    PROTECTED_TREES.iter().any(|t| key.starts_with(t))
        || PROTECTED_FILES.iter().any(|f| key == Path::new(f))
        || is_git_control(key)
        || is_agent_settings(key)
        || is_nested_git_control(key)
        || is_stray_head(rel, key)
        || is_tool_config(key)
}

/// A protected path that runs nothing, as `git init` makes it: the hooks folder made empty,
/// and the remote definitions' folders git's templates hold (`makes_folder`; `.git` is held, and so is the new folder, so whatever is made in it
/// later is judged by its path), and a sample hook in it (`.git/hooks/pre-commit.sample`),
/// which git never runs: renamed to a hook's name it is a write to a protected path again.
/// Other protected folders (`.vscode`…) stay asked even empty: an editor may act on the
/// folder alone.
pub fn is_inert(rel: &Path, makes_folder: bool) -> bool {
    let key = name_key(rel);
    let rel = key.as_ref();
    if makes_folder {
        return [".git/hooks", ".git/branches", ".git/remotes"]
            .iter()
            .any(|f| rel == Path::new(f));
    }
    rel.parent() == Some(Path::new(".git/hooks"))
        && rel
            .file_name()
            .map(|n| n.as_bytes())
            .and_then(|n| n.strip_suffix(b".sample"))
            .is_some_and(|stem| !stem.is_empty())
}

/// Whether `rel` lies beneath a `.git` directory (`.git/logs/refs`, `vendor/lib/.git/refs`),
/// not the `.git` entry itself. git never makes a symbolic link there, and the user's git
/// follows one it finds: a reflog is appended to through it (`.git/logs/refs/heads/main ->
/// ~/.bashrc` gets a line on every commit outside the sandbox), a ref is written into the
/// folder a link in `refs/` names. So no symbolic link is made there in the sandbox.
pub fn in_git_directory(rel: &Path) -> bool {
    let key = name_key(rel);
    let mut parts = key.components().peekable();
    while let Some(c) = parts.next() {
        if c.as_os_str() == ".git" && parts.peek().is_some() {
            return true;
        }
    }
    false
}

/// Whether `rel` is protected only against being made, moved or written, and may be
/// removed: a nested repository's `.git` and control files, a `HEAD` outside `.git`
/// folders. Removing them takes a repository away, which runs nothing.
pub fn is_removable(rel: &Path) -> bool {
    is_removable_as(rel, &name_key(rel))
}

/// [`is_removable`], with `key` the [`name_key`] of `rel`, folded once by the caller.
pub fn is_removable_as(rel: &Path, key: &Path) -> bool {
    is_nested_git_control(key) || is_stray_head(rel, key)
}

/// A `HEAD` outside every `.git` folder: git takes a folder holding `HEAD`, `objects/` and
/// `refs/` for a git directory (a bare repository) and uses its `config` when it works
/// there, or in the folder its `core.worktree` names. The supervisor refuses to make one, so
/// that none is planted for the user's git: policy, a check by name, in a folder Landlock
/// grants whole (a thread swapping the path after the check can still make one; docs/run.md).
/// A `HEAD` in a `.git` folder (its own, its reflog's) is git's. `HEAD` is matched in its
/// own case only (`key` is `rel`'s [`name_key`], for the `.git` folders): a program named
/// `head` is common (coreutils builds `src/head`), and a stray `HEAD` is policy.
fn is_stray_head(rel: &Path, key: &Path) -> bool {
    let bytes = rel.as_os_str().as_bytes();
    (bytes == b"HEAD" || bytes.ends_with(b"/HEAD"))
        && !key.components().any(|c| c.as_os_str() == ".git")
}

/// The files of the worktree's own git directory that make git run code, take its config
/// from elsewhere or push elsewhere: `.git/hooks/…`, `.git/config`, `.git/commondir`,
/// `.git/config.worktree`, `.git/remotes/…`, `.git/branches/…`, a linked worktree's and a
/// submodule's.
fn is_git_control(rel: &Path) -> bool {
    rel.starts_with(".git/hooks")
        || rel.starts_with(".git/remotes")
        || rel.starts_with(".git/branches")
        || [".git/config", ".git/commondir", ".git/config.worktree"]
            .iter()
            .any(|f| rel == Path::new(f))
        || is_linked_worktree_config(rel)
        || is_submodule_config_or_hook(rel)
}

/// A repository nested in the worktree: a `.git` entry below its top (`vendor/lib/.git`,
/// a file naming a git directory or a directory), or one of that git directory's control
/// files (`vendor/lib/.git/config`, `…/.git/hooks/…`). The worktree's own git runs code
/// from them: `git status` in the worktree runs `git status` in every directory the index
/// records as a submodule (a gitlink, which `git update-index` adds without `.gitmodules`),
/// and with it that repository's `core.fsmonitor`. So a nested repository cannot be made,
/// nor an existing one's config or hooks written; removing them is harmless and allowed
/// ([`is_removable`]).
pub fn is_nested_git_control(rel: &Path) -> bool {
    // This runs on every notified write: the path is read as bytes, and the components
    // walked only for the rare `worktrees` and `modules` folders of a nested git directory.
    let key = name_key(rel);
    let rel = key.as_ref();
    let bytes = rel.as_os_str().as_bytes();
    // Where the first `.git` name after a slash begins.
    let mut offset = 0;
    let mut found = None;
    for (i, name) in bytes.split(|c| *c == b'/').enumerate() {
        if i > 0 && name == b".git" {
            found = Some(offset);
            break;
        }
        offset += name.len() + 1;
    }
    let Some(at) = found else {
        return false;
    };
    let tail = &bytes[at..];
    let hit = match tail.strip_prefix(b".git/") {
        // The `.git` entry itself.
        None => true,
        Some(rest) => {
            let (first, more) = match rest.iter().position(|b| *b == b'/') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            match first {
                // `fence`: another session's spare folders, if the nested repository is
                // the worktree of a session of its own.
                b"hooks" | b"fence" | b"remotes" | b"branches" => true,
                b"config" | b"commondir" | b"config.worktree" => !more,
                b"worktrees" | b"modules" => {
                    is_git_control(Path::new(std::ffi::OsStr::from_bytes(tail)))
                }
                _ => false,
            }
        }
    };
    hit && rel.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Whether `rel` is a directory that holds protected paths without being protected itself
/// (`.git`, `.claude`, `.git/modules` and a submodule's git directory beneath it). Its own
/// directory entry must not be created, replaced, moved or removed (rename, symlink, link,
/// a `.git` file naming another git directory): a directory renamed or linked into place
/// would bring forged hooks, config or settings along without any write to their paths.
/// Creating it empty (`mkdir`) is harmless: what is then made inside is checked by path.
pub fn holds_protected(rel: &Path) -> bool {
    let key = name_key(rel);
    let rel = key.as_ref();
    if !below_a_dot_entry(rel) {
        return rel == Path::new(MISE_FOLDER);
    }
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return false;
    }
    if rel == Path::new(".git")
        || rel == Path::new(CONFIG_FOLDER)
        || rel == Path::new(KIRO_SETTINGS)
        || AGENT_FOLDERS.iter().any(|f| rel == Path::new(f))
    {
        return true;
    }
    // .git/modules, .git/modules/NAME, .git/modules/NAME/modules, …
    let Ok(below) = rel.strip_prefix(".git") else {
        return false;
    };
    // A linked worktree's folder (.git/worktrees/NAME holds its `commondir`): renamed away
    // and replaced by a copy, its `commondir` would name a forged git directory.
    if below.starts_with("worktrees") && below.components().count() <= 2 {
        return true;
    }
    let parts: Vec<_> = below.components().collect();
    !parts.is_empty()
        && parts
            .iter()
            .enumerate()
            .all(|(i, c)| i % 2 == 1 || c.as_os_str() == "modules")
}

/// A submodule's git directory (`.git/modules/NAME`, nested ones included) is a git
/// directory of its own: git runs its hooks and its `core.fsmonitor`, `core.hooksPath`… from
/// its config when it works in the submodule (`git status` in the superproject does).
fn is_submodule_config_or_hook(rel: &Path) -> bool {
    let Ok(below) = rel.strip_prefix(".git/modules") else {
        return false;
    };
    let parts: Vec<_> = below.components().map(|c| c.as_os_str()).collect();
    // A submodule's name may hold slashes (`third_party/lib`, and `lib/info`: a name may
    // end in a word git uses for its own folders), so its git directory is any folder
    // below .git/modules: its `config` (or `commondir`, `config.worktree`), or its `hooks`
    // and anything beneath, after at least one name. A branch or tag called `config` or
    // `hooks` in a submodule is protected with them.
    for (i, part) in parts.iter().enumerate().skip(1) {
        let part = part.to_str().unwrap_or("");
        // `remotes` after `refs` is git's remote-tracking refs (`refs/remotes/origin/main`,
        // written by every fetch), not a remote's definition.
        let remote_definitions = matches!(part, "remotes" | "branches") && parts[i - 1] != "refs";
        if part == "hooks" || remote_definitions {
            return true;
        }
        if i + 1 == parts.len() && matches!(part, "config" | "commondir" | "config.worktree") {
            return true;
        }
    }
    false
}

/// A linked worktree's `commondir` (the git directory whose config and hooks it uses) and
/// `config.worktree`: `.git/worktrees/NAME/commondir`.
fn is_linked_worktree_config(rel: &Path) -> bool {
    let parts: Vec<_> = rel.components().map(|c| c.as_os_str()).collect();
    matches!(parts.as_slice(), [git, worktrees, _, name]
        if *git == ".git" && *worktrees == "worktrees"
            && (*name == "commondir" || *name == "config.worktree"))
}

/// The folders of agents' project settings, which hold their hooks (programs each agent
/// runs outside any sandbox when it works in the project), their MCP servers and their
/// permission rules.
const AGENT_FOLDERS: [&str; 12] = [
    ".claude",
    ".gemini",
    ".codex",
    ".cursor",
    ".roo",
    ".amazonq",
    ".kiro",
    ".opencode",
    ".github",
    ".agents",
    ".windsurf",
    ".qwen",
];

/// A folder below an agent's folder that holds a protected file.
const KIRO_SETTINGS: &str = ".kiro/settings";

/// The folder that holds mise's `.config/mise.toml` and `.config/mise/`.
const CONFIG_FOLDER: &str = ".config";
/// The folder that holds mise's `mise/config.toml`.
const MISE_FOLDER: &str = "mise";

/// An agent's project settings: `.claude/settings*.json`, `.gemini/settings.json` and
/// `.gemini/.env`, `.codex/config.toml` and `.codex/hooks.json`, Cursor's `hooks.json` and
/// `mcp.json`, Roo Code's and Amazon Q's `mcp.json` (the MCP servers each starts),
/// Windsurf's `hooks.json`, Qwen Code's `settings.json` and `.env`.
fn is_agent_settings(rel: &Path) -> bool {
    let Some(name) = rel.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    match rel.parent().and_then(|p| p.to_str()) {
        Some(".claude") => name.starts_with("settings") && name.ends_with(".json"),
        // `.gemini/.env` is loaded into Gemini CLI's environment, which the programs it
        // starts outside any sandbox inherit (PATH, NODE_OPTIONS…).
        Some(".gemini") => matches!(name, "settings.json" | ".env"),
        Some(".codex") => matches!(name, "config.toml" | "hooks.json"),
        Some(".cursor") => matches!(name, "hooks.json" | "mcp.json"),
        Some(".roo" | ".amazonq") => name == "mcp.json",
        // Windsurf's workspace hooks; Qwen Code's project settings (its hooks and MCP
        // servers, as Gemini CLI's from which it comes) and the environment it loads.
        Some(".windsurf") => name == "hooks.json",
        Some(".qwen") => matches!(name, "settings.json" | ".env"),
        _ => false,
    }
}

/// The names at a worktree's top, read once: a protected path whose first name is not
/// among them does not exist and is not looked up. Most protected paths are agents' and
/// editors' folders a project does not have, and each lookup of a missing one is a system
/// call (a hundred of them made a start's walks cost a few tenths of a millisecond).
///
/// Compared without case (every protected name is ASCII): on a file system that folds
/// case (ext4 or f2fs with casefold, vfat, exfat, SMB, a Mac folder shared into a VM) a
/// lookup of `.vscode` finds `.VSCode`, which the listing shows under its own case. A
/// listing that cannot be read whole, or holds more than [`MOST_TOP_NAMES`] entries, rules
/// nothing out.
struct TopNames(Option<std::collections::HashSet<Vec<u8>>>);

/// Entries read from a worktree's top for [`TopNames`]: past them, each path is looked up.
const MOST_TOP_NAMES: usize = 4096;

impl TopNames {
    fn of(worktree: &Path) -> TopNames {
        TopNames(std::fs::read_dir(worktree).ok().and_then(|entries| {
            let mut names = std::collections::HashSet::new();
            for e in entries {
                names.insert(e.ok()?.file_name().as_bytes().to_ascii_lowercase());
                if names.len() > MOST_TOP_NAMES {
                    return None;
                }
            }
            Some(names)
        }))
    }

    /// Whether `rel`, a path relative to the worktree, may exist: its first name is at the
    /// top, in any case (the top itself, `""`, always may).
    fn may_hold(&self, rel: &Path) -> bool {
        match (&self.0, rel.components().next()) {
            (Some(names), Some(Component::Normal(first))) => {
                names.contains(&first.as_bytes().to_ascii_lowercase())
            }
            _ => true,
        }
    }
}

/// The protected paths that exist in `worktree`, to be made read-only.
pub fn existing(worktree: &Path) -> Vec<PathBuf> {
    let top = TopNames::of(worktree);
    let mut out: Vec<PathBuf> = PROTECTED_TREES
        .iter()
        .chain(PROTECTED_FILES.iter())
        .filter(|rel| top.may_hold(Path::new(rel)))
        .map(|rel| worktree.join(rel))
        .filter(|p| {
            p.symlink_metadata()
                .is_ok_and(|m| !m.file_type().is_symlink())
        })
        .collect();
    // Hook managers' and mise's configs, by name: one read of each folder's listing.
    for folder in ["", MISE_FOLDER, CONFIG_FOLDER] {
        if !top.may_hold(Path::new(folder)) {
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(worktree.join(folder)) {
            for e in entries.flatten() {
                let rel = Path::new(folder).join(e.file_name());
                if is_tool_config(&rel) && e.file_type().is_ok_and(|t| !t.is_symlink()) {
                    out.push(worktree.join(rel));
                }
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(worktree.join(".git/worktrees")) {
        for e in entries.flatten() {
            for name in ["commondir", "config.worktree"] {
                let p = e.path().join(name);
                if p.symlink_metadata()
                    .is_ok_and(|m| !m.file_type().is_symlink())
                {
                    out.push(p);
                }
            }
        }
    }
    for folder in AGENT_FOLDERS {
        if !top.may_hold(Path::new(folder)) {
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(worktree.join(folder)) {
            for e in entries.flatten() {
                let rel = Path::new(folder).join(e.file_name());
                if is_agent_settings(&rel) && e.file_type().is_ok_and(|t| !t.is_symlink()) {
                    out.push(worktree.join(rel));
                }
            }
        }
    }
    // A `.git` file (a linked worktree's or a submodule's) names the git directory whose
    // hooks and config git uses: rewritten, it would name a forged one.
    let dot_git = worktree.join(".git");
    if dot_git
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_file())
    {
        out.push(dot_git);
    }
    for module in submodule_git_dirs(worktree) {
        for name in ["config", "hooks", "remotes", "branches"] {
            let p = module.join(name);
            if p.symlink_metadata()
                .is_ok_and(|m| !m.file_type().is_symlink())
            {
                out.push(p);
            }
        }
    }
    out
}

/// Entries looked at inside the protected folders for [`protected_links`].
const MOST_LINK_ENTRIES: usize = 10_000;

/// The symbolic links among `worktree`'s protected paths and inside its protected folders
/// (`.git/hooks/pre-commit -> ../../tools/pre-commit`, `.git/hooks -> ../scripts/hooks`,
/// `.vscode -> cfg/vscode`): the file git or an editor runs is the one the link leads to,
/// which a write by its own name reaches, so the caller protects where each leads. The
/// second value says whether the protected folders held more than [`MOST_LINK_ENTRIES`]
/// entries, of which the rest was not looked at.
pub fn protected_links(worktree: &Path) -> (Vec<PathBuf>, bool) {
    let is_link = |p: &Path| {
        p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    };
    let top = TopNames::of(worktree);
    let mut out: Vec<PathBuf> = PROTECTED_TREES
        .iter()
        .chain(PROTECTED_FILES.iter())
        .filter(|rel| top.may_hold(Path::new(rel)))
        .map(|rel| worktree.join(rel))
        .filter(|p| is_link(p))
        .collect();
    // The named configs of the listings `existing` reads.
    for folder in ["", MISE_FOLDER, CONFIG_FOLDER]
        .into_iter()
        .chain(AGENT_FOLDERS)
    {
        if !top.may_hold(Path::new(folder)) {
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(worktree.join(folder)) {
            for e in entries.flatten() {
                let rel = Path::new(folder).join(e.file_name());
                if (is_tool_config(&rel) || is_agent_settings(&rel))
                    && e.file_type().is_ok_and(|t| t.is_symlink())
                {
                    out.push(worktree.join(rel));
                }
            }
        }
    }
    // The hooks folders first, each with the whole budget (`.git/hooks` and the
    // submodules'), then the other protected folders; a linked folder is walked where it
    // leads (`.git/hooks -> ../scripts/hooks` holding `pre-commit -> ../../tools/pre-commit`),
    // and so is a linked folder inside one, where it stays in the worktree (a link to
    // `/usr` is no folder the sandbox can write); each folder once.
    let real_worktree = std::fs::canonicalize(worktree).unwrap_or(worktree.to_path_buf());
    // Most protected names are missing: one `lstat` says so, where `realpath` would read
    // every folder on the way first (a missing name has no target either way).
    let where_it_leads = |p: &Path| {
        p.symlink_metadata().ok()?;
        std::fs::canonicalize(p)
            .ok()
            .filter(|t| t.starts_with(&real_worktree) && t.is_dir())
    };
    let mut hooks: Vec<PathBuf> = vec![worktree.join(".git/hooks")];
    let mut others: Vec<PathBuf> = PROTECTED_TREES
        .iter()
        .filter(|rel| !matches!(**rel, SPARE_HOME | ".git/hooks"))
        .filter(|rel| top.may_hold(Path::new(rel)))
        .map(|rel| worktree.join(rel))
        .collect();
    for module in submodule_git_dirs(worktree) {
        for name in ["config", "hooks", "remotes", "branches"] {
            let p = module.join(name);
            if is_link(&p) {
                out.push(p.clone());
            }
            if name == "hooks" {
                hooks.push(p);
            } else {
                others.push(p);
            }
        }
    }
    for list in [&mut hooks, &mut others] {
        let linked: Vec<PathBuf> = list.iter().filter_map(|p| where_it_leads(p)).collect();
        list.extend(linked);
    }
    // The other linked names (`.vscode -> cfg/vscode`) lead to folders walked too.
    others.extend(out.iter().filter_map(|l| where_it_leads(l)));
    let mut walked = std::collections::HashSet::new();
    let mut more = false;
    for start in [hooks, others] {
        let mut folders: Vec<(PathBuf, usize)> = start.into_iter().rev().map(|p| (p, 0)).collect();
        let mut seen = 0;
        while let Some((dir, depth)) = folders.pop() {
            if is_link(&dir) || !walked.insert(dir.clone()) {
                continue;
            }
            if depth > 16 {
                more = true;
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > MOST_LINK_ENTRIES {
                    more = true;
                    folders.clear();
                    break;
                }
                match e.file_type() {
                    Ok(t) if t.is_symlink() => {
                        if let Some(target) = where_it_leads(&e.path()) {
                            folders.push((target, depth + 1));
                        }
                        out.push(e.path());
                    }
                    Ok(t) if t.is_dir() => folders.push((e.path(), depth + 1)),
                    _ => {}
                }
            }
        }
    }
    out.sort();
    out.dedup();
    (out, more)
}

/// The directories that hold protected paths and exist (not as symlinks) in `worktree`, to
/// be pinned as mount points: the kernel refuses to rename or remove a mount point, while
/// a directory that merely contains read-only binds can be renamed away whole.
pub fn pinned(worktree: &Path) -> Vec<PathBuf> {
    let top = TopNames::of(worktree);
    let mut out: Vec<PathBuf> = [
        ".git",
        ".git/modules",
        ".git/worktrees",
        CONFIG_FOLDER,
        MISE_FOLDER,
        KIRO_SETTINGS,
    ]
    .iter()
    .chain(AGENT_FOLDERS.iter())
    .filter(|rel| top.may_hold(Path::new(rel)))
    .map(|rel| worktree.join(rel))
    .filter(|p| p.symlink_metadata().is_ok_and(|m| m.file_type().is_dir()))
    .collect();
    // Each linked worktree's folder: its `commondir` is a read-only bind, and the folder
    // must not be renamed away with it.
    if let Ok(entries) = std::fs::read_dir(worktree.join(".git/worktrees")) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(e.path());
            }
        }
    }
    for module in submodule_git_dirs(worktree) {
        out.push(module.clone());
        let nested = module.join("modules");
        if nested
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_dir())
        {
            out.push(nested);
        }
    }
    out
}

/// Submodule git directories under `.git/modules`, nested ones included (real directories
/// only; at most a few levels deep).
fn submodule_git_dirs(worktree: &Path) -> Vec<PathBuf> {
    // Every folder in a `modules` folder counts as a git directory; one without a HEAD may
    // also be the first part of a name with slashes (`.git/modules/third_party/lib`), so
    // its folders count too. Git's own folders are not searched.
    let mut out = Vec::new();
    let mut stack = vec![(worktree.join(".git/modules"), 0)];
    while let Some((dir, depth)) = stack.pop() {
        if depth > 8 {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        // Git's own folders are skipped only inside a git directory: a submodule's name may
        // end in one of those words (`lib/info`).
        let in_git_dir = dir.join("HEAD").is_file();
        for e in entries.flatten() {
            let name = e.file_name();
            if !e.file_type().is_ok_and(|t| t.is_dir())
                || (in_git_dir
                    && matches!(
                        name.to_str().unwrap_or(""),
                        "objects" | "refs" | "logs" | "info" | "lfs" | "hooks"
                    ))
            {
                continue;
            }
            let sub = e.path();
            if !sub.join("HEAD").is_file() {
                stack.push((sub.clone(), depth + 1));
            }
            stack.push((sub.join("modules"), depth + 1));
            out.push(sub);
        }
    }
    out
}

/// Those of `paths` (absolute: a profile's protected settings) that exist and are not
/// symlinks, to be made read-only. A symlink is left alone: a write through it lands on its
/// target, which the fence judges on its own, and the link itself is refused by the
/// supervisor's check.
pub fn existing_of(paths: &[std::ffi::OsString]) -> Vec<PathBuf> {
    paths
        .iter()
        .map(PathBuf::from)
        .filter(|p| {
            p.is_absolute()
                && p.symlink_metadata()
                    .is_ok_and(|m| !m.file_type().is_symlink())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Protected names are matched in every spelling a file system that folds case takes
    /// for them; a path in lowercase ASCII is not copied; `HEAD` keeps its case.
    #[test]
    fn protected_names_are_matched_as_a_folding_file_system_matches_them() {
        let p = |s: &str| Path::new(s).to_path_buf();
        assert!(matches!(
            name_key(Path::new(".git/hooks/x")),
            Cow::Borrowed(_)
        ));
        assert_eq!(name_key(Path::new(".GIT/Hooks/X")), p(".git/hooks/x"));
        assert_eq!(name_key(Path::new(".git/hoo\u{212A}s")), p(".git/hooks"));
        assert_eq!(
            name_key(Path::new(".claude/\u{17F}ettings.json")),
            p(".claude/settings.json")
        );
        assert_eq!(name_key(Path::new(".git/con\u{FB01}g")), p(".git/config"));
        assert_eq!(
            name_key(Path::new(".g\u{200C}it/\u{FEFF}config")),
            p(".git/config")
        );
        assert_eq!(name_key(Path::new("Stra\u{DF}e")), p("strasse"));
        assert_eq!(name_key(Path::new(".g\u{131}t/HOOKS")), p(".git/hooks"));
        assert_eq!(name_key(Path::new(".env\u{AD}rc")), p(".envrc"));
        assert_eq!(name_key(Path::new("sub/.gi\u{34F}t")), p("sub/.git"));
        // A name that would fold to nothing, `.` or `..` is a plain entry: kept.
        for odd in [
            "\u{200C}/.Git",
            "\u{FEFF}/x/.git",
            "x/\u{200C}../.git",
            ".\u{200C}./y/.git",
        ] {
            let key = name_key(Path::new(odd));
            assert_eq!(
                key.components().count(),
                Path::new(odd).components().count(),
                "{odd}"
            );
            assert!(is_nested_git_control(Path::new(odd)), "{odd}");
            assert!(is_protected(Path::new(odd)), "{odd}");
        }
        // Not UTF-8: kept byte for byte, the rest lowered.
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"A\xff\xfe.ENVRC"));
        assert_eq!(name_key(odd).as_os_str().as_bytes(), b"a\xff\xfe.envrc");
        for rel in [
            ".GIT/hooks/pre-commit",
            ".git/CONFIG",
            ".Envrc",
            ".VSCode/settings.json",
            ".Claude/Settings.local.json",
            "vendor/lib/.Git/config",
            ".gitmodule\u{17F}",
            ".github/hooks/a.json",
            ".agents/skills/s/run.sh",
            ".gemini/skills/s/SKILL.md",
            ".windsurf/hooks.json",
            ".qwen/settings.json",
            "Lefthook.YML",
        ] {
            assert!(is_protected(Path::new(rel)), "{rel}");
        }
        assert!(in_git_directory(Path::new(".GIT/logs/HEAD")));
        assert!(is_nested_git_control(Path::new("sub/.GIT")));
        assert!(holds_protected(Path::new(".Claude")));
        assert!(holds_protected(Path::new(".GitHub")));
        assert!(names_a_git_folder(Path::new("a/.Git/b")));
        assert!(is_protected(Path::new("bare/HEAD")));
        for rel in [
            "head",
            "src/head",
            ".github/workflows/ci.yml",
            ".gitignore",
            "README",
        ] {
            assert!(!is_protected(Path::new(rel)), "{rel}");
        }
    }

    /// The top's listing rules out only names absent in any case, and rules out nothing
    /// where it cannot be read.
    #[test]
    fn a_name_at_the_top_in_another_case_is_still_looked_up() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join(".VSCode")).unwrap();
        let top = TopNames::of(d.path());
        assert!(top.may_hold(Path::new(".vscode/settings.json")));
        assert!(top.may_hold(Path::new(".VSCODE")));
        assert!(!top.may_hold(Path::new(".claude/settings.json")));
        assert!(top.may_hold(Path::new("")));
        let unreadable = TopNames::of(&d.path().join("missing"));
        assert!(unreadable.may_hold(Path::new(".claude/settings.json")));
    }

    #[test]
    fn links_among_protected_paths_and_in_protected_folders_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        for d in [".git/hooks", ".vscode/sub", "tools", ".claude"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, w.join(name)).unwrap();
        };
        link("../../tools/pre-commit", ".git/hooks/pre-commit");
        // A linked protected folder is walked where it leads.
        std::fs::create_dir_all(w.join("cfg/idea")).unwrap();
        std::os::unix::fs::symlink("../../tools/run.xml", w.join("cfg/idea/run.xml")).unwrap();
        link("cfg/idea", ".idea");
        link("../../tools/tasks.json", ".vscode/sub/tasks.json");
        link("tools/envrc", ".envrc");
        link("../tools/settings.json", ".claude/settings.local.json");
        link("tools", "lefthook.yml");
        // Not protected: no link of interest.
        link("tools", "src");
        std::fs::write(w.join(".git/hooks/pre-push"), "").unwrap();
        let (mut found, more) = protected_links(w);
        found.sort();
        let mut want: Vec<PathBuf> = [
            ".claude/settings.local.json",
            ".envrc",
            ".git/hooks/pre-commit",
            ".idea",
            ".vscode/sub/tasks.json",
            "cfg/idea/run.xml",
            "lefthook.yml",
        ]
        .iter()
        .map(|r| w.join(r))
        .collect();
        want.sort();
        assert_eq!(found, want);
        assert!(!more);
    }

    #[test]
    fn folders_beneath_a_git_directory_are_told_apart() {
        for rel in [
            ".git/logs",
            ".git/logs/refs/heads",
            "vendor/lib/.git/refs",
            ".git/x",
        ] {
            assert!(in_git_directory(Path::new(rel)), "{rel}");
        }
        for rel in [
            ".git",
            "src",
            "vendor/lib/.git",
            "a.git/x",
            ".github/workflows",
            "",
        ] {
            assert!(!in_git_directory(Path::new(rel)), "{rel}");
        }
    }

    #[test]
    fn hooks_config_and_settings_are_protected_but_not_the_rest_of_git() {
        for p in [
            ".git/hooks",
            ".git/hooks/pre-commit",
            ".git/config",
            ".git/commondir",
            ".git/config.worktree",
            ".git/worktrees/other/commondir",
            ".git/worktrees/other/config.worktree",
            ".git/remotes",
            ".git/remotes/origin",
            ".git/branches/origin",
            ".envrc",
            ".vscode/settings.json",
            ".claude/settings.local.json",
            ".gemini/settings.json",
            ".codex/config.toml",
            ".codex/hooks.json",
            ".codex/rules/default.rules",
            ".gemini/.env",
            ".gemini/policies/p.toml",
            ".mcp.json",
            ".claude/hooks/fmt.sh",
            ".pre-commit-config.yaml",
            "lefthook.yml",
            ".lefthook.yml",
            "lefthook-local.yaml",
            ".devcontainer",
            ".devcontainer/devcontainer.json",
            ".devcontainer/python/devcontainer.json",
            ".devcontainer.json",
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            ".mise.local.toml",
            ".mise/config.toml",
            ".config/mise.toml",
            ".config/mise/config.toml",
            ".config/mise/conf.d/tools.toml",
            "mise/config.toml",
            "mise.dev.toml",
            ".mise.staging.toml",
            "mise.dev.local.toml",
            // Every name lefthook reads its config and its `-local` one from, and its
            // script folders.
            ".lefthook-local.yml",
            ".lefthook.yaml",
            ".lefthook.toml",
            ".lefthook.json",
            ".lefthook.jsonc",
            "lefthook.jsonc",
            "lefthook-local.jsonc",
            ".config/lefthook.yml",
            ".config/lefthook-local.toml",
            ".config/lefthook.jsonc",
            ".lefthook/pre-commit/lint.sh",
            ".lefthook-local/pre-push/x",
            // Other editors' and agents' settings that run programs.
            ".zed/settings.json",
            ".helix/languages.toml",
            ".cursor/hooks.json",
            ".cursor/mcp.json",
            ".cursor/hooks/audit.sh",
            ".roo/mcp.json",
            ".amazonq/mcp.json",
            ".kiro/hooks/lint.kiro.hook",
            ".kiro/settings/mcp.json",
            ".opencode/plugin/x.ts",
            "opencode.json",
            "opencode.jsonc",
            ".aider.conf.yml",
            ".exrc",
            ".nvim.lua",
            // mise's `.local` and environment configs in each of its places, and rtx's.
            "mise/config.local.toml",
            "mise/config.dev.toml",
            ".config/mise.local.toml",
            ".config/mise.dev.toml",
            ".rtx.toml",
            ".rtx.local.toml",
        ] {
            assert!(is_protected(Path::new(p)), "{p}");
        }
        for p in [".claude", ".gemini", ".codex"] {
            assert!(holds_protected(Path::new(p)), "{p}");
        }
        for p in [
            ".git/index",
            ".git/objects/ab/cd",
            ".git/refs/remotes/origin/main",
            ".git/logs/refs/remotes/origin/main",
            "src/config",
            ".claude/notes.md",
            ".gemini/notes.md",
            ".codex/sessions",
            "a/.envrc",
            "src/lefthook.yml",
            "docs/.pre-commit-config.yaml",
            ".config/other.toml",
            ".config/misery/x",
            "docs/devcontainer.json",
            "mise.toml.bak",
            "mise..toml",
            "sub/mise.dev.toml",
            "mise/other.toml",
            "mise.tom",
            "lefthook.yml.orig",
            "lefthookx.yml",
            "lefthook-local.yml/x",
            "docs/.lefthook.toml",
            ".config/sub/lefthook.yml",
            "mise/config.toml.bak",
            "mise/tasks/build",
            "mise/config..toml",
            "rtx.toml",
            ".cursor/rules/style.mdc",
            ".kiro/steering/product.md",
            ".opencode/agent/review.md",
            ".roo/rules/x.md",
            "docs/opencode.json",
            ".git/modules/lib/index",
            ".git/modules/lib/objects/ab/cd",
            ".git/modules/config",
            ".git/modules/hooks",
        ] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn a_nested_repositorys_git_entry_config_and_hooks_are_protected() {
        for p in [
            "vendor/lib/.git",
            "evil/.git",
            "a/b/c/.git/config",
            "evil/.git/hooks/pre-commit",
            "proj/.git/fence/spares.1/0/x",
            "evil/.git/hooks",
            "evil/.git/commondir",
            "evil/.git/config.worktree",
            "evil/.git/worktrees/w/commondir",
            "evil/.git/modules/inner/config",
            "evil/.git/remotes/origin",
            "evil/.git/branches/origin",
            ".hidden/x/.git/config",
            "a/.gitx/b/.git/config",
        ] {
            assert!(is_protected(Path::new(p)), "{p}");
            assert!(is_nested_git_control(Path::new(p)), "{p}");
        }
        for p in [
            "evil/.git/index",
            "evil/.git/HEAD",
            "evil/.git/objects/ab/cd",
            "evil/.gitignore",
            "evil/.github/workflows/ci.yml",
            "evil/git/config",
            "src/.gitkeep",
            "a/.gitx/config",
            "a/.git/configs",
            "a/.git/config/x",
            "a/.git/hooksx",
            ".git",
            ".git/config",
            ".git/modules/lib/config",
        ] {
            assert!(!is_nested_git_control(Path::new(p)), "{p}");
        }
        for p in ["evil/.git/index", "evil/.gitignore", "src/.gitkeep"] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
        // A bare repository cannot be made outside a `.git` folder: no `HEAD` there.
        for p in ["HEAD", "src/HEAD", "forged/HEAD", ".hidden/HEAD"] {
            assert!(is_protected(Path::new(p)), "{p}");
        }
        for p in [
            ".git/HEAD",
            ".git/logs/HEAD",
            "pre/.git/logs/HEAD",
            "src/HEADER",
            "HEAD.md",
        ] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn a_submodules_config_and_hooks_are_protected() {
        for p in [
            ".git/modules/lib/config",
            ".git/modules/lib/hooks",
            ".git/modules/lib/hooks/post-checkout",
            ".git/modules/lib/modules/inner/config",
            ".git/modules/lib/modules/inner/hooks/pre-commit",
            ".git/modules/lib/remotes/origin",
            ".git/modules/lib/branches/origin",
            ".git/modules/third_party/lib/config",
            ".git/modules/third_party/lib/hooks/post-checkout",
            // A submodule named `lib/info`: a name may end in a word of git's folders.
            ".git/modules/lib/info/config",
            ".git/modules/lib/objects/hooks/x",
            // The price: a submodule's branch called `config` is protected too.
            ".git/modules/lib/refs/heads/config",
        ] {
            assert!(is_protected(Path::new(p)), "{p}");
        }
        for p in [
            ".git/modules/lib/refs/heads/main",
            ".git/modules/lib/refs/remotes/origin/main",
            ".git/modules/lib/logs/refs/remotes/origin/main",
            ".git/modules/lib/index",
            ".git/modules/third_party/lib/objects/ab/cd",
        ] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn only_empty_protected_folders_and_sample_hooks_are_inert() {
        for folder in [".git/hooks", ".git/branches", ".git/remotes"] {
            assert!(is_inert(Path::new(folder), true), "{folder}");
        }
        for sample in [".git/hooks/pre-commit.sample", ".git/hooks/update.sample"] {
            assert!(is_inert(Path::new(sample), false), "{sample}");
        }
        for (p, makes_folder) in [
            (".git/fence", true),
            (".vscode", true),
            (".claude/hooks", true),
            (".git/hooks/sub", true),
            (".git", true),
            (".git/hooks", false),
            (".git/hooks/pre-commit", false),
            (".git/branches/origin", false),
            (".git/remotes/origin", false),
            (".git/remotes/origin", true),
            (".git/hooks/.sample", false),
            (".git/hooks/x/pre-commit.sample", false),
            (".git/config", false),
            (".vscode/tasks.json", false),
            ("vendor/.git/hooks/pre-commit.sample", false),
        ] {
            assert!(!is_inert(Path::new(p), makes_folder), "{p} {makes_folder}");
        }
    }

    #[test]
    fn directories_holding_protected_paths_are_known_but_not_their_other_content() {
        for p in [
            ".git",
            ".claude",
            ".git/modules",
            ".git/modules/lib",
            ".git/modules/lib/modules",
            ".git/modules/lib/modules/inner",
            ".git/worktrees",
            ".git/worktrees/lw",
            ".config",
            "mise",
            ".cursor",
            ".kiro",
            ".kiro/settings",
            ".opencode",
        ] {
            assert!(holds_protected(Path::new(p)), "{p}");
        }
        for p in [
            "src",
            ".git/objects",
            ".git/modules/lib/objects",
            ".git/worktrees/lw/index",
            ".claude/notes.md",
            "a/.git",
            ".git/../x",
            ".config/other",
            "src/.config",
            ".cursor/rules",
            ".kiro/steering",
        ] {
            assert!(!holds_protected(Path::new(p)), "{p}");
        }
    }
}

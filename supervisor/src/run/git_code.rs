//! Where the user's git takes code from for this repository besides `.git/hooks` and
//! `.git/config`, which are protected paths by name (SPEC §2: writes that would run code
//! later, outside the sandbox). Two more places may lie in the worktree:
//!
//! - the folder `core.hooksPath` names: husky's `.husky/_` (whose stubs run the scripts of
//!   `.husky/` itself, so that folder is protected whole), a project's `.githooks`. A script
//!   written there runs at the user's next `git commit`;
//! - a config file the repository's config includes (`[include] path = ../.gitconfig`, as
//!   some projects ask their developers to add): written there, `core.fsmonitor`, an alias
//!   or a hooks folder of its own runs at the user's next `git status`.
//!
//! Only git knows its includes (conditional ones too), so git is asked (`git config --list
//! --show-origin`, ~3 ms), outside the sandbox, before it starts (the first git on `PATH`
//! outside every folder the sandbox may write: [`trusted_git`]) — but only when a config
//! file git reads for the repository says `hookspath` or `include` at all: most starts read
//! a few small files and run nothing. The hooks folder is expanded as git does: `~/` from
//! the home, a relative one from the worktree's top, where git runs hooks.
//!
//! Found at start, these paths join the session's protected list: read-only binds in the
//! mount view, held by the Landlock plan, refused by the write check with a reason. The
//! repository's own `.git/config` is protected, so no setting of the session can move them.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long git may take to answer before fence starts without its answer (a config
/// include that is a FIFO would hold it forever).
const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The most of a config file read to look for `hookspath` and `include` (git's own
/// limit for a config file is far larger, but such a file is not a real one).
const MOST_CONFIG_BYTES: u64 = 1 << 20;

/// What was found: paths to protect, and what could not be found out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GitCode {
    /// Absolute paths, each protected with everything beneath it: the hooks folder (and
    /// husky's folder above `_`), config files included from a writable root.
    pub protected: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

/// The environment's say on where git reads config: `GIT_CONFIG_GLOBAL`,
/// `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`, `XDG_CONFIG_HOME`, and whether config
/// comes from variables (`GIT_CONFIG_COUNT`, `GIT_CONFIG_PARAMETERS`).
#[derive(Debug, Default, Clone)]
pub struct GitEnvironment {
    pub home: Option<PathBuf>,
    pub global: Option<PathBuf>,
    pub system: Option<PathBuf>,
    pub no_system: bool,
    pub xdg_config_home: Option<PathBuf>,
    pub config_in_variables: bool,
}

impl GitEnvironment {
    pub fn from_process(home: Option<&Path>) -> GitEnvironment {
        let var = |n: &str| std::env::var_os(n).filter(|v| !v.is_empty());
        GitEnvironment {
            home: home.map(Path::to_path_buf),
            global: var("GIT_CONFIG_GLOBAL").map(PathBuf::from),
            system: var("GIT_CONFIG_SYSTEM").map(PathBuf::from),
            no_system: var("GIT_CONFIG_NOSYSTEM").is_some_and(|v| {
                !matches!(
                    v.to_string_lossy().to_ascii_lowercase().as_str(),
                    "0" | "false" | "no" | "off"
                )
            }),
            xdg_config_home: var("XDG_CONFIG_HOME").map(PathBuf::from),
            config_in_variables: var("GIT_CONFIG_COUNT").is_some()
                || var("GIT_CONFIG_PARAMETERS").is_some(),
        }
    }
}

/// Finds the hooks folder and the included config files of the repository at `worktree`
/// that lie in one of the `writable` roots (absolute, resolved).
pub fn find(worktree: &Path, env: &GitEnvironment, writable: &[PathBuf]) -> GitCode {
    let mut found = GitCode::default();
    let Some(files) = config_files(worktree, env) else {
        return found;
    };
    if !env.config_in_variables && !files.iter().any(|f| needs_git(f)) {
        // No include and no hooks folder: the files are all git reads, and the programs
        // they name are read from them here, without a git to run.
        let lines: Vec<String> = files.iter().flat_map(|t| program_lines(t)).collect();
        let candidates = files_programs_run(&lines, worktree, env);
        protect_within(&mut found, candidates, worktree, writable);
        return found;
    }
    let mut untrusted = vec![worktree.to_path_buf()];
    untrusted.extend(writable.iter().cloned());
    let git_found = trusted_git(std::env::var_os("PATH").as_deref(), &untrusted);
    let asked = git_found.clone().and_then(|(git, path)| {
        ask_git(
            &git,
            &path,
            worktree,
            env,
            &["config", "--list", "--show-origin", "-z"],
            GIT_TIMEOUT,
        )
    });
    let listing = match asked {
        Ok(out) => out,
        Err(e) => {
            found.warnings.push(format!(
                "could not ask git for this repository's config ({e}): a hooks folder or included config in the worktree is not protected"
            ));
            return found;
        }
    };
    let mut entries = parse_listing(&listing);
    // A conditional include git did not follow now (`includeIf "onbranch:release/**"`: the
    // sandbox may check that branch out) is read as if its condition held, with its own
    // includes: what it would set (`core.hooksPath`, `core.fsmonitor`) is protected too.
    let listed: Vec<Vec<u8>> = entries
        .iter()
        .map(|(origin, _, _)| origin.clone())
        .collect();
    let mut unread: Vec<PathBuf> = Vec::new();
    for (origin, key, value) in &entries {
        if is_include(key)
            && let Some(from) = origin_path(origin, worktree)
            && let Some(file) = include_path(value, &from, env.home.as_deref())
        {
            let origin = [b"file:".as_slice(), file.as_os_str().as_bytes()].concat();
            if !listed.contains(&origin) && !unread.contains(&file) && unread.len() < 16 {
                unread.push(file);
            }
        }
    }
    if let Ok((git, path)) = &git_found {
        for file in unread.iter().filter(|f| f.is_file()) {
            let mut args: Vec<&str> = vec![
                "config",
                "--list",
                "--show-origin",
                "-z",
                "--includes",
                "--file",
            ];
            let Some(f) = file.to_str() else {
                continue;
            };
            args.push(f);
            match ask_git(git, path, worktree, env, &args, GIT_TIMEOUT) {
                Ok(out) => entries.extend(parse_listing(&out)),
                Err(e) => found.warnings.push(format!(
                    "could not ask git for {} ({e}): a hooks folder it names is not protected",
                    file.display()
                )),
            }
        }
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    for (origin, key, value) in &entries {
        let from = origin_path(origin, worktree);
        // An include names its file whether or not that file sets anything yet (git lists
        // only the files that do): relative to the including file's folder, `~/` to the
        // home.
        if is_include(key)
            && let Some(from) = &from
        {
            candidates.extend(include_path(value, from, env.home.as_deref()));
        }
        candidates.extend(from);
    }
    // The last `core.hooksPath` wins, but which is last may change with the branch (a
    // conditional include): every one named is protected. git runs a relative one from the
    // worktree's top.
    for hooks in entries
        .iter()
        .filter(|(_, key, _)| key.eq_ignore_ascii_case(b"core.hookspath"))
        .filter_map(|(_, _, value)| config_path(value, worktree, env.home.as_deref()))
    {
        // husky 9: the stubs in `.husky/_` run `.husky/<hook>`.
        if hooks.file_name().is_some_and(|n| n == "_")
            && let Some(parent) = hooks.parent().filter(|p| *p != worktree)
        {
            candidates.push(parent.to_path_buf());
        }
        candidates.push(hooks);
    }
    // The programs the config names (`core.fsmonitor = ./tools/fsmon.sh`, a textconv, a
    // filter's `clean`, a `!` alias): git runs them from the worktree's top.
    let lines: Vec<String> = entries
        .iter()
        .filter_map(|(_, key, value)| program_value(key, value))
        .collect();
    candidates.extend(files_programs_run(&lines, worktree, env));
    protect_within(&mut found, candidates, worktree, writable);
    found
}

/// The files the program settings' `lines` run, as git runs them: from the worktree's top.
fn files_programs_run(lines: &[String], worktree: &Path, env: &GitEnvironment) -> Vec<PathBuf> {
    let places = super::command_files::Places {
        worktree,
        home: env.home.as_deref(),
    };
    lines
        .iter()
        .flat_map(|line| super::command_files::files_run(line, worktree, &places))
        .collect()
}

/// Adds to `found` each candidate, as named and as the file it reaches when that is a
/// link, that lies in a writable root and is not protected already.
fn protect_within(
    found: &mut GitCode,
    candidates: Vec<PathBuf>,
    worktree: &Path,
    writable: &[PathBuf],
) {
    for c in candidates {
        let resolved = c.canonicalize().ok();
        for p in std::iter::once(c).chain(resolved) {
            if already_protected(worktree, &p) || !writable.iter().any(|r| p.starts_with(r)) {
                continue;
            }
            if !found.protected.contains(&p) {
                found.protected.push(p);
            }
        }
    }
}

/// The contents of the config files git reads for the repository (those that exist), or
/// `None` when `worktree` holds no repository of its own.
fn config_files(worktree: &Path, env: &GitEnvironment) -> Option<Vec<Vec<u8>>> {
    let dot_git = worktree.join(".git");
    let meta = dot_git.symlink_metadata().ok()?;
    let git_dir = if meta.is_file() {
        // A linked worktree or a submodule: `gitdir: PATH`.
        let text = read(&dot_git)?;
        let line = text.split(|b| *b == b'\n').next()?;
        let named = line.strip_prefix(b"gitdir:")?.trim_ascii();
        worktree.join(Path::new(std::ffi::OsStr::from_bytes(named)))
    } else {
        dot_git
    };
    let common = match read(&git_dir.join("commondir")) {
        Some(text) => git_dir.join(Path::new(std::ffi::OsStr::from_bytes(text.trim_ascii()))),
        None => git_dir.clone(),
    };
    let mut paths = vec![common.join("config"), git_dir.join("config.worktree")];
    match &env.global {
        Some(g) => paths.push(g.clone()),
        None => {
            if let Some(h) = &env.home {
                paths.push(h.join(".gitconfig"));
            }
            let xdg = env
                .xdg_config_home
                .clone()
                .filter(|x| x.is_absolute())
                .or_else(|| env.home.as_ref().map(|h| h.join(".config")));
            if let Some(x) = xdg {
                paths.push(x.join("git/config"));
            }
        }
    }
    if !env.no_system {
        paths.push(
            env.system
                .clone()
                .unwrap_or_else(|| PathBuf::from("/etc/gitconfig")),
        );
    }
    Some(paths.iter().filter_map(|p| read(p)).collect())
}

/// A config file's bytes (regular files only, links followed as git follows them, at most
/// [`MOST_CONFIG_BYTES`]); `None` when it cannot be read. One that exists but cannot be
/// read as a whole counts as naming code: git is asked.
fn read(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return None,
        Err(_) => return Some(b"include".to_vec()),
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Some(b"include".to_vec());
    }
    let mut out = Vec::new();
    match file.take(MOST_CONFIG_BYTES + 1).read_to_end(&mut out) {
        Ok(n) if (n as u64) <= MOST_CONFIG_BYTES => Some(out),
        _ => Some(b"include".to_vec()),
    }
}

/// The names of the config keys whose value is a program git (or a tool reading git's
/// config) runs, in any section: `core.fsmonitor`, `core.sshCommand`, `core.editor`,
/// `core.pager`, `core.askPass`, `core.gitProxy`, `sequence.editor`, `diff.external`,
/// `diff.<d>.textconv` and `.command`, `filter.<f>.clean`, `.smudge` and `.process`,
/// `merge.<m>.driver`, `credential.helper`, `gpg.program`, `interactive.diffFilter`,
/// `difftool.<t>.cmd` and `.path`, `mergetool.<t>.cmd` and `.path`, `remote.<r>.uploadpack`
/// and `.receivepack`, `sendemail.smtpServer`, `core.alternateRefsCommand`,
/// `uploadpack.packObjectsHook`, `browser.<b>.cmd`, `man.<m>.cmd`, `init.templateDir` (its
/// hooks are copied into the next repository made), `gpg.ssh.defaultKeyCommand`,
/// `sendemail.toCmd` and `.ccCmd`, `imap.tunnel`. Lower case, as git lists them.
const PROGRAM_KEY_NAMES: &[&[u8]] = &[
    b"fsmonitor",
    b"sshcommand",
    b"editor",
    b"pager",
    b"askpass",
    b"gitproxy",
    b"external",
    b"textconv",
    b"command",
    b"clean",
    b"smudge",
    b"process",
    b"driver",
    b"helper",
    b"program",
    b"difffilter",
    b"cmd",
    b"uploadpack",
    b"receivepack",
    b"smtpserver",
    b"alternaterefscommand",
    b"packobjectshook",
    b"templatedir",
    b"defaultkeycommand",
    b"tocmd",
    b"cccmd",
    b"tunnel",
    b"sendmailcmd",
];

/// The shell line a config entry runs, when its key names a program ([`PROGRAM_KEY_NAMES`],
/// a `.path` of a diff or merge tool, `pager.<cmd>`), or it is an alias or a submodule's
/// `update` that starts with `!`.
fn program_value(key: &[u8], value: &[u8]) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    let section = lower.split(|b| *b == b'.').next().unwrap_or_default();
    let name = lower.rsplit(|b| *b == b'.').next().unwrap_or_default();
    let text = String::from_utf8_lossy(value).into_owned();
    let bang = |t: &str| t.strip_prefix('!').map(str::to_string);
    match section {
        b"alias" => bang(&text),
        b"submodule" if name == b"update" => bang(&text),
        b"pager" => Some(text),
        b"difftool" | b"mergetool" | b"browser" | b"man" | b"lfs" if name == b"path" => Some(text),
        // A remote through `ext::` runs its command (`git fetch` with `ext::sh tools/x`).
        b"remote" if matches!(name, b"url" | b"pushurl") => {
            text.strip_prefix("ext::").map(|c| c.replace("%%", "%"))
        }
        _ if PROGRAM_KEY_NAMES.contains(&name) => Some(bang(&text).unwrap_or(text)),
        _ => None,
    }
}

/// Whether a config file may set a hooks folder or include another file: git is asked
/// then (only git knows its includes, conditional ones too, and which `core.hooksPath`
/// wins).
fn needs_git(text: &[u8]) -> bool {
    let has = |word: &[u8]| {
        text.windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word))
    };
    has(b"hookspath") || has(b"include")
}

/// The shell lines a config file's program entries run ([`program_value`]), read as
/// git's config syntax is (`[section "sub"]` and `[section.sub]` headers, `key = value`,
/// `#` and `;` comments outside quotes, a `\` at the end of a line continuing it, quotes
/// and escapes left to the word splitting). Reading more than git would is harmless here
/// (a path protected for nothing); reading less is not, so a line that does not parse is
/// taken whole as a value.
fn program_lines(text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    let mut section = String::new();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut line = first.to_string();
        while line.ends_with('\\') {
            line.pop();
            match lines.next() {
                Some(next) => line.push_str(next),
                None => break,
            }
        }
        let mut rest = line.trim_start();
        if let Some(header) = rest.strip_prefix('[') {
            let end = header.find(']').unwrap_or(header.len());
            let name = header[..end].trim();
            section = name
                .split(|c: char| c == '.' || c.is_whitespace() || c == '"')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            // `[alias] x = !sh` may go on after the header on the same line.
            rest = header.get(end + 1..).unwrap_or_default().trim_start();
        }
        let Some((key, value)) = rest.split_once('=') else {
            continue;
        };
        let key = format!("{section}.{}", key.trim().to_ascii_lowercase());
        let value = config_value(value.trim());
        if let Some(program) = program_value(key.as_bytes(), value.as_bytes()) {
            out.push(program);
        }
    }
    out
}

/// A config value as git reads it: double quotes removed (blanks and `#`/`;` inside them
/// kept), `\"`, `\\`, `\n` and `\t` unescaped, a `#` or `;` comment outside quotes dropped.
fn config_value(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('b') => {
                    out.pop();
                }
                Some(other) => out.push(other),
                None => {}
            },
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim_end().to_string()
}

/// The git to ask, found on `path` (the `PATH` variable) as a shell would, but passing
/// over every folder the sandbox may write or has written: the worktree and the writable
/// roots, whatever name leads there (a link, another mount of the same folder: each
/// folder on the way is compared by device and inode), and relative entries, which name
/// the working directory. git is run outside the sandbox with fence's rights, before the
/// session starts: a `git` an earlier session left in the worktree (an activated
/// `.venv/bin` or a direnv `bin` first on `PATH`) must never be it. Returns the program
/// and the `PATH` to run it with (the entries that passed: a git that runs helpers finds
/// none of the sandbox's either).
fn trusted_git(
    path: Option<&std::ffi::OsStr>,
    untrusted: &[PathBuf],
) -> Result<(PathBuf, OsString), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let identity = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let roots: Vec<(u64, u64)> = untrusted.iter().filter_map(|r| identity(r)).collect();
    // Whether `p` or a folder above it is one of the roots (`p` absolute; a folder that
    // cannot be looked at counts as one).
    let within = |p: &Path| {
        p.ancestors()
            .any(|a| identity(a).is_none_or(|id| roots.contains(&id)))
    };
    let trusted_dir = |dir: &Path| {
        dir.is_absolute() && !within(dir) && dir.canonicalize().is_ok_and(|real| !within(&real))
    };
    let path = path.unwrap_or(std::ffi::OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    let dirs: Vec<&Path> = path
        .as_bytes()
        .split(|b| *b == b':')
        .map(|d| Path::new(std::ffi::OsStr::from_bytes(d)))
        .collect();
    let clean: Vec<&Path> = dirs.iter().copied().filter(|d| trusted_dir(d)).collect();
    let clean_path = OsString::from_vec(
        clean
            .iter()
            .map(|d| d.as_os_str().as_bytes())
            .collect::<Vec<_>>()
            .join(&b':'),
    );
    let mut passed_over = None;
    for dir in dirs.iter().filter(|d| d.is_absolute()) {
        let candidate = dir.join("git");
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        let runnable = std::fs::metadata(&real)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if !runnable {
            continue;
        }
        if clean.contains(dir) && !within(&real) {
            return Ok((real, clean_path));
        }
        passed_over.get_or_insert(candidate);
    }
    Err(match passed_over {
        Some(p) => format!(
            "the only git on PATH, {}, lies in a folder the sandbox may write",
            p.display()
        ),
        None => "no git on PATH".to_string(),
    })
}

/// Runs `git -c safe.directory=* -C worktree ARGS` (a repository of another user is asked
/// about as that user's git would answer it), with the config locations of `env`, and
/// returns its standard output; fails when git cannot be run, fails, or takes longer than
/// `timeout` (it is then killed).
fn ask_git(
    git: &Path,
    path: &std::ffi::OsStr,
    worktree: &Path,
    env: &GitEnvironment,
    args: &[&str],
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let mut command = Command::new(git);
    command
        .env("PATH", path)
        .args(["-c", "safe.directory=*", "-C"])
        .arg(worktree)
        .args(args);
    if let Some(h) = &env.home {
        command.env("HOME", h);
    }
    if let Some(g) = &env.global {
        command.env("GIT_CONFIG_GLOBAL", g);
    }
    if let Some(x) = &env.xdg_config_home {
        command.env("XDG_CONFIG_HOME", x);
    }
    if env.no_system {
        command.env("GIT_CONFIG_NOSYSTEM", "1");
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git: {e}"))?;
    // The output is small; read on threads so that a full pipe never holds git.
    let mut stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.take(4096).read_to_end(&mut b);
        b
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("git took more than {} s", timeout.as_secs()));
            }
            Err(e) => return Err(format!("waiting for git: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    if !status.success() {
        let said = String::from_utf8_lossy(&err);
        let said = said.lines().next().unwrap_or("").trim();
        return Err(format!("git {}: {status}: {said}", args.join(" ")));
    }
    Ok(out)
}

/// One setting of `git config --list --show-origin -z`: its origin, key and value.
type Listed = (Vec<u8>, Vec<u8>, Vec<u8>);

/// `git config --list --show-origin -z`: records `ORIGIN\0KEY\nVALUE\0` (a key without a
/// value has no newline).
fn parse_listing(out: &[u8]) -> Vec<Listed> {
    let mut fields = out.split(|b| *b == 0);
    let mut entries = Vec::new();
    while let (Some(origin), Some(entry)) = (fields.next(), fields.next()) {
        let (key, value) = match entry.iter().position(|b| *b == b'\n') {
            Some(i) => (&entry[..i], &entry[i + 1..]),
            None => (entry, &[][..]),
        };
        entries.push((origin.to_vec(), key.to_vec(), value.to_vec()));
    }
    entries
}

/// `include.path` and `includeIf.<condition>.path`.
fn is_include(key: &[u8]) -> bool {
    let lower = key.to_ascii_lowercase();
    lower == b"include.path" || (lower.starts_with(b"includeif.") && lower.ends_with(b".path"))
}

/// The file an include names, as git finds it from the config file `from`.
fn include_path(value: &[u8], from: &Path, home: Option<&Path>) -> Option<PathBuf> {
    config_path(value, from.parent()?, home)
}

/// A path a config value names, as git expands it: `~/` from the home, a relative one from
/// `base`.
fn config_path(value: &[u8], base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if value.is_empty() {
        return None;
    }
    let named = Path::new(std::ffi::OsStr::from_bytes(value));
    let path = if let Some(rest) = value.strip_prefix(b"~/") {
        home?.join(std::ffi::OsStr::from_bytes(rest))
    } else if named.is_absolute() {
        named.to_path_buf()
    } else {
        base.join(named)
    };
    Some(normalize(&path))
}

/// The file an origin names (`file:PATH`, relative to the worktree, where git ran).
fn origin_path(origin: &[u8], worktree: &Path) -> Option<PathBuf> {
    let path = origin.strip_prefix(b"file:")?;
    if path.is_empty() {
        return None;
    }
    Some(normalize(
        &worktree.join(PathBuf::from(OsString::from_vec(path.to_vec()))),
    ))
}

/// `path` without `.` and with each `..` taking away the name before it, as git's own
/// paths (`.git/../.gitconfig`) are meant.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether the worktree's rules already protect `path` (its own `.git/hooks`,
/// `.git/config`…).
fn already_protected(worktree: &Path, path: &Path) -> bool {
    path.strip_prefix(worktree)
        .is_ok_and(shim::protected_paths::is_protected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "safe.directory=*", "-C"])
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A `git` the sandbox could have left in the worktree or a writable root, or reached
    /// through a link into one, is passed over.
    #[test]
    fn the_git_asked_is_never_one_the_sandbox_may_have_written() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let d = tempfile::tempdir().unwrap();
        let program = |dir: &Path| {
            std::fs::create_dir_all(dir).unwrap();
            let p = dir.join("git");
            std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let wt = d.path().join("wt");
        let planted = program(&wt.join(".venv/bin"));
        let cache = d.path().join("cache");
        let cached = program(&cache.join("bin"));
        let linked = d.path().join("bin");
        std::fs::create_dir(&linked).unwrap();
        symlink(&planted, linked.join("git")).unwrap();
        let wt_link = d.path().join("wt-link");
        symlink(&wt, &wt_link).unwrap();
        let real = program(&d.path().join("real"));
        // Not runnable: passed over as a shell would.
        let plain = d.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(plain.join("git"), "x").unwrap();
        let roots = [wt.clone(), cache.clone()];
        let path = [
            planted.parent().unwrap().to_path_buf(),
            wt_link.join(".venv/bin"),
            cached.parent().unwrap().to_path_buf(),
            linked.clone(),
            PathBuf::from("."),
            plain.clone(),
            real.parent().unwrap().to_path_buf(),
        ]
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
        let (git, clean) = trusted_git(Some(std::ffi::OsStr::new(&path)), &roots).unwrap();
        assert_eq!(git, real.canonicalize().unwrap());
        // The PATH git runs with keeps only the folders that passed.
        assert_eq!(
            clean,
            OsString::from(format!(
                "{}:{}:{}",
                linked.display(),
                plain.display(),
                real.parent().unwrap().display()
            ))
        );
        let only_planted = format!(
            "{}:{}",
            planted.parent().unwrap().display(),
            linked.display()
        );
        let err = trusted_git(Some(std::ffi::OsStr::new(&only_planted)), &roots).unwrap_err();
        assert!(err.contains("may write"), "{err}");
    }

    fn repo() -> Option<(tempfile::TempDir, PathBuf)> {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("skipped: no git");
            return None;
        }
        let d = tempfile::tempdir().unwrap();
        let wt = d.path().canonicalize().unwrap();
        git(&wt, &["init", "-q"]);
        Some((d, wt))
    }

    /// An environment whose only config files are the repository's own.
    fn only_the_repository(home: &Path) -> GitEnvironment {
        GitEnvironment {
            home: Some(home.to_path_buf()),
            no_system: true,
            ..GitEnvironment::default()
        }
    }

    #[test]
    fn the_programs_a_config_file_names_are_read_as_git_reads_them() {
        let text = br#"[core]
	fsmonitor = ./tools/fsmon.sh ; a comment
	editor = "vim -f"
	repositoryformatversion = 0
[diff "bin"]
	textconv = tools/conv.sh
[filter.strip]
	clean = python3 scripts/clean.py \
	  --strict
[alias]
	st = status
	x = !sh tools/al.sh # run it
[submodule "m"]
	update = !tools/up.sh
[pager]
	log = tools/pager.sh
[difftool "d"]
	path = tools/dt
[branch "cleanup"]
	remote = origin
"#;
        assert_eq!(
            program_lines(text),
            [
                "./tools/fsmon.sh",
                "vim -f",
                "tools/conv.sh",
                "python3 scripts/clean.py 	  --strict",
                "sh tools/al.sh",
                "tools/up.sh",
                "tools/pager.sh",
                "tools/dt",
            ]
        );
        assert_eq!(program_value(b"alias.st", b"status"), None);
        assert_eq!(program_value(b"remote.origin.url", b"/srv/x"), None);
        assert_eq!(
            program_value(b"credential.https://x.example.helper", b"!tools/cred"),
            Some("tools/cred".to_string())
        );
    }

    #[test]
    fn a_plain_repository_needs_no_question_and_protects_nothing_more() {
        let Some((_d, wt)) = repo() else { return };
        let home = tempfile::tempdir().unwrap();
        let files = config_files(&wt, &only_the_repository(home.path())).unwrap();
        assert!(!files.iter().any(|f| needs_git(f)));
        assert!(files.iter().all(|f| program_lines(f).is_empty()));
        assert_eq!(
            find(
                &wt,
                &only_the_repository(home.path()),
                std::slice::from_ref(&wt)
            ),
            GitCode::default()
        );
    }

    #[test]
    fn husky_and_githooks_folders_are_protected_when_core_hooks_path_names_them() {
        let Some((_d, wt)) = repo() else { return };
        let home = tempfile::tempdir().unwrap();
        let env = only_the_repository(home.path());
        git(&wt, &["config", "core.hooksPath", ".husky/_"]);
        let found = find(&wt, &env, std::slice::from_ref(&wt));
        assert_eq!(
            found.protected,
            vec![wt.join(".husky"), wt.join(".husky/_")],
            "{found:?}"
        );
        git(&wt, &["config", "core.hooksPath", "tools/githooks"]);
        let found = find(&wt, &env, std::slice::from_ref(&wt));
        assert_eq!(found.protected, vec![wt.join("tools/githooks")]);
        // A hooks folder outside every writable root is the kernel's to keep.
        git(&wt, &["config", "core.hooksPath", "/usr/share/hooks"]);
        assert_eq!(
            find(&wt, &env, std::slice::from_ref(&wt)),
            GitCode::default()
        );
    }

    #[test]
    fn a_config_included_from_the_worktree_is_protected_and_through_a_link_both_names() {
        let Some((_d, wt)) = repo() else { return };
        let home = tempfile::tempdir().unwrap();
        let env = only_the_repository(home.path());
        // Named before it exists or sets anything (git lists only files that set something).
        git(&wt, &["config", "include.path", "../project.gitconfig"]);
        let found = find(&wt, &env, std::slice::from_ref(&wt));
        assert_eq!(found.protected, vec![wt.join("project.gitconfig")]);
        std::fs::write(wt.join("project.gitconfig"), "[alias]\n\tst = status\n").unwrap();
        let found = find(&wt, &env, std::slice::from_ref(&wt));
        assert_eq!(found.protected, vec![wt.join("project.gitconfig")]);
        std::fs::create_dir(wt.join("conf")).unwrap();
        std::fs::rename(wt.join("project.gitconfig"), wt.join("conf/real")).unwrap();
        std::os::unix::fs::symlink("conf/real", wt.join("project.gitconfig")).unwrap();
        let found = find(&wt, &env, std::slice::from_ref(&wt));
        assert_eq!(
            found.protected,
            vec![wt.join("project.gitconfig"), wt.join("conf/real")]
        );
    }

    #[test]
    fn a_conditional_include_not_in_force_now_is_read_as_if_it_were() {
        let Some((_d, wt)) = repo() else { return };
        let home = tempfile::tempdir().unwrap();
        let env = only_the_repository(home.path());
        // In force only on a branch the sandbox may check out: its hooks folder, and what
        // a file it includes names, are protected all the same.
        git(
            &wt,
            &[
                "config",
                "includeIf.onbranch:release/**.path",
                "../release.gitconfig",
            ],
        );
        std::fs::write(
            wt.join("release.gitconfig"),
            "[core]\n\thooksPath = hooks-rel\n[include]\n\tpath = more.gitconfig\n",
        )
        .unwrap();
        std::fs::write(
            wt.join("more.gitconfig"),
            "[core]\n\tfsmonitor = ./fsmon.sh\n",
        )
        .unwrap();
        let found = find(&wt, &env, std::slice::from_ref(&wt));
        for p in [
            "release.gitconfig",
            "hooks-rel",
            "more.gitconfig",
            "fsmon.sh",
        ] {
            assert!(found.protected.contains(&wt.join(p)), "{p}: {found:?}");
        }
    }

    #[test]
    fn the_global_config_can_set_a_relative_hooks_folder_for_every_repository() {
        let Some((_d, wt)) = repo() else { return };
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[core]\n\thooksPath = .githooks\n",
        )
        .unwrap();
        let env = only_the_repository(home.path());
        let found = find(&wt, &env, std::slice::from_ref(&wt));
        assert_eq!(found.protected, vec![wt.join(".githooks")]);
    }

    #[test]
    fn git_that_fails_is_said_and_nothing_is_guessed() {
        let Some((_d, wt)) = repo() else { return };
        let home = tempfile::tempdir().unwrap();
        std::fs::write(wt.join(".git/config"), "[core\n hookspath = x\n").unwrap();
        let found = find(
            &wt,
            &only_the_repository(home.path()),
            std::slice::from_ref(&wt),
        );
        assert!(found.protected.is_empty());
        assert_eq!(found.warnings.len(), 1, "{found:?}");
        assert!(found.warnings[0].contains("could not ask git"), "{found:?}");
    }

    #[test]
    fn the_listing_is_parsed_into_origins_and_keys() {
        let out = b"file:.git/config\0core.hookspath\n.husky/_\0file:.git/../x\0include.path\n../x\0command line:\0safe.directory\n*\0";
        let e = parse_listing(out);
        assert_eq!(e.len(), 3);
        assert_eq!(
            e[0],
            (
                b"file:.git/config".to_vec(),
                b"core.hookspath".to_vec(),
                b".husky/_".to_vec()
            )
        );
        assert!(is_include(&e[1].1) && is_include(b"includeIf.gitdir:~/w/.path"));
        assert_eq!(
            include_path(&e[1].2, Path::new("/w/.git/config"), None),
            Some(PathBuf::from("/w/x"))
        );
        assert_eq!(
            include_path(b"~/c", Path::new("/w/.git/config"), Some(Path::new("/h"))),
            Some(PathBuf::from("/h/c"))
        );
        assert_eq!(
            origin_path(&e[1].0, Path::new("/w")),
            Some(PathBuf::from("/w/x"))
        );
        assert_eq!(origin_path(&e[2].0, Path::new("/w")), None);
    }
}

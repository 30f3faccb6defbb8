//! The path fence for lines: one place that resolves a path the way the
//! kernel would and says where it lands relative to the worktree.
//!
//! Resolution is lexical for `.` and `..` *after* each symlink has been
//! replaced by its target, read from the filesystem through [`FsView`], so a
//! symlink inside the worktree that points outside is judged by where it
//! points. Components that do not exist are taken literally (a file about to
//! be created).

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow, as the kernel's `MAXSYMLINKS`.
const MAX_SYMLINK_HOPS: usize = 40;

/// The policy crate's only window on the filesystem: reading symlinks.
/// Tests pass a fake; the CLI passes [`RealFs`].
pub trait FsView: Send + Sync {
    /// The target of the symlink at `path`, or an error when `path` is not a
    /// symlink (or does not exist).
    fn read_link(&self, path: &Path) -> io::Result<PathBuf>;

    /// Whether something is at `path` (not followed). A view that cannot tell says no.
    fn exists(&self, _path: &Path) -> bool {
        false
    }

    /// Whether `path` is a folder (followed: a link to one is one, as `cp` takes it). A
    /// view that cannot tell says no.
    fn is_dir(&self, _path: &Path) -> bool {
        false
    }

    /// Whether `path` is known to be no folder one can enter (missing, or a file): a `cd`
    /// there fails. A view that cannot tell says no.
    fn known_not_a_dir(&self, _path: &Path) -> bool {
        false
    }

    /// The names in the folder at `path` (followed), without `.` and `..`: at most
    /// `max + 1` of them, so that a caller sees there are more than it reads. `None` when
    /// it cannot be read; a view that cannot tell reads nothing (globs then stay as
    /// written).
    fn list_dir(&self, _path: &Path, _max: usize) -> Option<Vec<OsString>> {
        None
    }

    /// The text of the regular file at `path` (followed) when it holds at most `most`
    /// bytes: `None` when nothing is there, an error when something is that cannot be read
    /// as such a file. A view that cannot tell finds nothing.
    fn read_file(&self, _path: &Path, _most: u64) -> io::Result<Option<String>> {
        Ok(None)
    }
}

/// The real filesystem.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

impl FsView for RealFs {
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::read_link(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.symlink_metadata().is_ok()
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    /// Not a folder, or one this process may not enter (`cd` checks search permission).
    fn known_not_a_dir(&self, path: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        if !path.is_dir() {
            return true;
        }
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return true;
        };
        // SAFETY: a NUL-terminated path; access only reads it.
        unsafe { libc::access(c.as_ptr(), libc::X_OK) != 0 }
    }

    fn list_dir(&self, path: &Path, max: usize) -> Option<Vec<OsString>> {
        let entries = std::fs::read_dir(path).ok()?;
        Some(
            entries
                .filter_map(|e| e.ok().map(|e| e.file_name()))
                .take(max.saturating_add(1))
                .collect(),
        )
    }

    fn read_file(&self, path: &Path, most: u64) -> io::Result<Option<String>> {
        match crate::config::read_regular_file(path, true, most) {
            Ok(text) => Ok(Some(text)),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// `inner`, each path's link read once: for resolving many paths at one moment (the
/// secret list when a classifier is made), which share their folders.
pub struct OnceFs<'a> {
    inner: &'a dyn FsView,
    read: std::sync::Mutex<std::collections::HashMap<PathBuf, Option<PathBuf>>>,
}

impl<'a> OnceFs<'a> {
    pub fn new(inner: &'a dyn FsView) -> OnceFs<'a> {
        OnceFs {
            inner,
            read: Default::default(),
        }
    }
}

impl FsView for OnceFs<'_> {
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        let known = self
            .read
            .lock()
            .ok()
            .and_then(|read| read.get(path).cloned());
        let target = match known {
            Some(target) => target,
            None => {
                let target = self.inner.read_link(path).ok();
                if let Ok(mut read) = self.read.lock() {
                    read.insert(path.to_path_buf(), target.clone());
                }
                target
            }
        };
        target.ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }

    fn known_not_a_dir(&self, path: &Path) -> bool {
        self.inner.known_not_a_dir(path)
    }

    fn list_dir(&self, path: &Path, max: usize) -> Option<Vec<OsString>> {
        self.inner.list_dir(path, max)
    }

    fn read_file(&self, path: &Path, most: u64) -> io::Result<Option<String>> {
        self.inner.read_file(path, most)
    }
}

/// `inner` with the links a line makes before the point being judged (`ln -s /etc e &&
/// echo x > e/passwd`): each link's path, absolute, and what it points to as written.
pub struct WithLinks<'a> {
    pub inner: &'a dyn FsView,
    pub links: &'a std::collections::HashMap<PathBuf, PathBuf>,
}

impl FsView for WithLinks<'_> {
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        match self.links.get(path) {
            Some(target) => Ok(target.clone()),
            None => self.inner.read_link(path),
        }
    }

    fn exists(&self, path: &Path) -> bool {
        self.links.contains_key(path) || self.inner.exists(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        !self.links.contains_key(path) && self.inner.is_dir(path)
    }

    /// A link the line makes may lead to a folder.
    fn known_not_a_dir(&self, path: &Path) -> bool {
        !self.links.keys().any(|l| path.starts_with(l)) && self.inner.known_not_a_dir(path)
    }

    /// The folder's names on disk and the links the line made in it.
    fn list_dir(&self, path: &Path, max: usize) -> Option<Vec<OsString>> {
        let made: Vec<OsString> = self
            .links
            .keys()
            .filter(|l| l.parent() == Some(path))
            .filter_map(|l| l.file_name().map(|n| n.to_os_string()))
            .collect();
        let mut names = self.inner.list_dir(path, max);
        if !made.is_empty() {
            let list = names.get_or_insert_with(Vec::new);
            for n in made {
                if !list.contains(&n) {
                    list.push(n);
                }
            }
        }
        names
    }

    /// A link the line makes is no file on disk yet.
    fn read_file(&self, path: &Path, most: u64) -> io::Result<Option<String>> {
        if self.links.contains_key(path) {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        self.inner.read_file(path, most)
    }
}

/// A filesystem with no symlinks at all: resolution is purely lexical.
#[derive(Debug, Default, Clone, Copy)]
pub struct LexicalFs;

impl FsView for LexicalFs {
    fn read_link(&self, _path: &Path) -> io::Result<PathBuf> {
        Err(io::Error::from(io::ErrorKind::InvalidInput))
    }
}

/// Resolves `path` against `cwd` through symlinks. With `follow_final` false
/// the last component is not followed (as `rm`, `lstat` and `unlink` treat it).
pub fn resolve(fs: &dyn FsView, cwd: &Path, path: &Path, follow_final: bool) -> PathBuf {
    // Pending components, last component at the end; popped from the back.
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, path);
    let mut current = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    };
    let trailing_slash = path.as_os_str().as_bytes().ends_with(b"/");
    let mut hops = 0;
    while let Some(name) = pending.pop() {
        match name.as_bytes() {
            b"" | b"." => continue,
            b".." => {
                current.pop();
                continue;
            }
            _ => {}
        }
        let candidate = current.join(&name);
        let is_final = pending.is_empty();
        let follow = !is_final || follow_final || trailing_slash;
        // The standard streams and descriptor links name the descriptors of the process
        // that will run the line, not of the one judging it: kept as written.
        let into_own_fds = (candidate == Path::new("/proc/self")
            || candidate == Path::new("/proc/thread-self"))
            && pending.last().is_some_and(|next| next == "fd");
        if into_own_fds || is_descriptor_path(&candidate) {
            current = candidate;
            continue;
        }
        if follow
            && hops < MAX_SYMLINK_HOPS
            && let Ok(target) = fs.read_link(&candidate)
        {
            hops += 1;
            if target.is_absolute() {
                current = PathBuf::from("/");
            }
            push_components(&mut pending, &target);
            continue;
        }
        current = candidate;
    }
    current
}

/// `/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/fd` and `/proc/self/fd` (with what
/// lies beneath the last two): links to the running process's own descriptors.
fn is_descriptor_path(path: &Path) -> bool {
    ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
        .iter()
        .any(|f| path == Path::new(f))
        || ["/dev/fd", "/proc/self/fd", "/proc/thread-self/fd"]
            .iter()
            .any(|d| path.starts_with(d))
}

/// Pushes the components of `path` onto `pending` so that popping yields them
/// in order.
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    let start = pending.len();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => {}
            Component::CurDir => {}
            Component::ParentDir => pending.push(OsString::from("..")),
            Component::Normal(n) => pending.push(n.to_os_string()),
        }
    }
    pending[start..].reverse();
}

/// Lexical normalisation (no filesystem): removes `.` and applies `..`.
pub fn normalize(cwd: &Path, path: &Path) -> PathBuf {
    resolve(&LexicalFs, cwd, path, false)
}

/// True when `path` is `root` or lies beneath it, component-wise.
pub fn is_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// System roots: a write there is refused outright (rule `sys.root-write`). `/` itself
/// counts: what is written into it (`tar xf a.tar -C /`, `cp -r etc /`) lands in them.
pub fn is_system_root(path: &Path) -> bool {
    let mut comps = path.components();
    if comps.next() != Some(Component::RootDir) {
        return false;
    }
    match comps.next() {
        None => true,
        Some(Component::Normal(first)) => {
            let f = first.as_bytes();
            matches!(
                f,
                b"etc" | b"usr" | b"bin" | b"sbin" | b"boot" | b"sys" | b"proc"
            ) || f.starts_with(b"lib")
        }
        _ => false,
    }
}

/// Whether a glob's first component can match a system root (`/e*c/passwd`, `/u?r/bin`,
/// `/[e]tc`, `/*`): the shell expands it before the program runs.
pub fn glob_may_be_system_root(path: &Path) -> bool {
    let mut comps = path.components();
    if comps.next() != Some(Component::RootDir) {
        return false;
    }
    let Some(Component::Normal(first)) = comps.next() else {
        return false;
    };
    let Some(first) = first.to_str().filter(|f| f.contains(['*', '?', '['])) else {
        return false;
    };
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    glob::Pattern::new(first).is_ok_and(|p| {
        [
            "etc", "usr", "bin", "sbin", "boot", "sys", "proc", "lib", "lib32", "lib64", "libx32",
        ]
        .iter()
        .any(|root| p.matches_with(root, opts))
    })
}

/// Block devices and raw memory: writing there destroys a disk or the kernel.
pub fn is_block_device(path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix("/dev") else {
        return false;
    };
    let s = rest.as_os_str().as_bytes();
    const PREFIXES: &[&[u8]] = &[
        b"sd", b"hd", b"vd", b"xvd", b"nvme", b"mmcblk", b"dm-", b"md", b"loop", b"mapper/",
        b"disk/", b"sr", b"nbd",
    ];
    matches!(s, b"mem" | b"kmem" | b"port") || PREFIXES.iter().any(|p| s.starts_with(p))
}

/// Whether a glob (`/dev/s?a`, `/dev/nvme*`) can match a block device: a glob in a
/// redirection target that matches one file is expanded by bash.
pub fn glob_may_be_block_device(path: &Path) -> bool {
    let Some(pattern) = path.to_str().filter(|p| p.starts_with("/dev/")) else {
        return false;
    };
    let Ok(pattern) = glob::Pattern::new(pattern) else {
        return false;
    };
    const SAMPLES: &[&str] = &[
        "/dev/sda",
        "/dev/sdb",
        "/dev/hda",
        "/dev/vda",
        "/dev/xvda",
        "/dev/nvme0n1",
        "/dev/nvme0n1p1",
        "/dev/mmcblk0",
        "/dev/dm-0",
        "/dev/md0",
        "/dev/loop0",
        "/dev/mem",
        "/dev/kmem",
        "/dev/port",
        "/dev/sr0",
        "/dev/nbd0",
        "/dev/sda1",
    ];
    SAMPLES.iter().any(|d| pattern.matches(d))
}

/// Paths outside the worktree that every command touches and that the line
/// context does not count as leaving it (SPEC §2, "Exceptions").
pub fn is_exception(path: &Path, extra: &[PathBuf]) -> bool {
    const DIRS: &[&str] = &["/bin", "/sbin", "/usr/bin", "/usr/sbin"];
    const FILES: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];
    DIRS.iter().any(|d| path.starts_with(d))
        || FILES.iter().any(|f| path == Path::new(f))
        || extra.iter().any(|e| path.starts_with(e))
}

/// Devices that are harmless to write to: not files, not disks. Of the links to a
/// process's own descriptors, those of its output streams (`/dev/fd/1`,
/// `/proc/self/fd/2`); see [`is_descriptor_link`] for the others. Its input is not one:
/// opened for writing, `/dev/fd/0` truncates the file a command reads (`claude -p < f`).
pub fn is_harmless_device(path: &Path) -> bool {
    ["/dev/null", "/dev/stdout", "/dev/stderr"]
        .iter()
        .any(|f| path == Path::new(f))
        || descriptor_number(path).is_some_and(|n| n == 1 || n == 2)
}

/// Whether `path` is a link to one of the process's own descriptors (`/dev/fd/N`,
/// `/proc/self/fd/N`, `/proc/thread-self/fd/N`), whatever its number.
pub fn is_descriptor_link(path: &Path) -> bool {
    descriptor_number(path).is_some()
}

fn descriptor_number(path: &Path) -> Option<u32> {
    ["/dev/fd", "/proc/self/fd", "/proc/thread-self/fd"]
        .iter()
        .find_map(|d| path.strip_prefix(d).ok())
        .and_then(|rest| rest.to_str())
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
}

/// lefthook's configuration: its main config and the `-local` one merged into it, in every
/// format it reads (`yml`, `yaml`, `toml`, `json`, `jsonc`), with or without a leading dot,
/// at the worktree's root or in `.config/`. (`fence run` protects the same names:
/// `shim::protected_paths::is_lefthook_config`.)
fn is_lefthook_config(rel: &Path) -> bool {
    let b = rel.as_os_str().as_bytes();
    let name = b.strip_prefix(b".config/").unwrap_or(b);
    let name = name.strip_prefix(b".").unwrap_or(name);
    name.strip_prefix(b"lefthook")
        .map(|rest| rest.strip_prefix(b"-local").unwrap_or(rest))
        .is_some_and(|ext| matches!(ext, b".yml" | b".yaml" | b".toml" | b".json" | b".jsonc"))
}

/// mise's project configuration outside `.mise/` and `.config/mise/`: `mise.toml`,
/// `.mise.toml`, `.config/mise.toml`, `mise/config.toml`, with their `.local` ones and those
/// for an environment (`mise.dev.toml`, `mise/config.staging.local.toml`), and the older
/// `.rtx.toml` ones. (`fence run`: `shim::protected_paths::is_mise_config`.)
fn is_mise_config(rel: &Path) -> bool {
    let b = rel.as_os_str().as_bytes();
    let rest = match b.strip_prefix(b"mise/") {
        Some(name) => name.strip_prefix(b"config"),
        None => {
            let name = b.strip_prefix(b".config/").unwrap_or(b);
            let dotted = name.strip_prefix(b".");
            dotted
                .unwrap_or(name)
                .strip_prefix(b"mise")
                .or_else(|| dotted.and_then(|n| n.strip_prefix(b"rtx")))
        }
    };
    rest.and_then(|r| r.strip_suffix(b".toml"))
        .is_some_and(|middle| {
            middle.is_empty()
                || (middle.len() > 1 && middle.starts_with(b".") && !middle.contains(&b'/'))
        })
}

/// Paths inside the worktree whose contents run code later, outside the
/// sandbox (SPEC §2, "protected paths"). `rel` is relative to the worktree.
///
/// Names are matched in any ASCII case (`.GIT/hooks`, `.ENVRC`): on a file system that
/// folds case they are the protected paths themselves, and a line does not say which file
/// system it runs on. (`fence run` also folds the Unicode characters that fold to ASCII
/// letters: `shim::protected_paths::name_key`.)
pub fn is_protected(rel: &Path) -> bool {
    let original = rel;
    let lowered;
    let rel = if rel
        .as_os_str()
        .as_bytes()
        .iter()
        .any(u8::is_ascii_uppercase)
    {
        lowered = PathBuf::from(OsString::from_vec(
            rel.as_os_str().as_bytes().to_ascii_lowercase(),
        ));
        lowered.as_path()
    } else {
        rel
    };
    let first = rel.components().next();
    let first = match first {
        Some(Component::Normal(n)) => n.as_bytes(),
        _ => return false,
    };
    if is_nested_git_control(rel) {
        return true;
    }
    // A `HEAD` outside every `.git` folder makes a folder a bare repository, whose config
    // git uses when it works there.
    // (`HEAD` in its own case only: a program named `head` is common.)
    if original.file_name().is_some_and(|n| n == "HEAD")
        && !rel.components().any(|c| c.as_os_str() == ".git")
    {
        return true;
    }
    if is_git_control(rel) {
        return true;
    }
    if first == b".gitmodules" {
        return true;
    }
    // pre-commit's and lefthook's configuration at the worktree's root: the git hook they
    // install runs the commands it names on the user's next `git commit`.
    // A dev container's definition (VS Code runs its `initializeCommand` on the host), and
    // mise's project config (its hooks and environment run in the user's shell on `cd`).
    if matches!(
        first,
        b".devcontainer" | b".mise" | b".lefthook" | b".lefthook-local"
    ) || rel.starts_with(".config/mise")
        || is_lefthook_config(rel)
        || is_mise_config(rel)
    {
        return true;
    }
    if rel.components().count() == 1
        && matches!(
            first,
            b".devcontainer.json"
                | b".pre-commit-config.yaml"
                | b"opencode.json"
                | b"opencode.jsonc"
        )
    {
        return true;
    }
    // At any depth: direnv loads the `.envrc` of every folder a person enters, and an
    // editor or agent opened in a folder of the worktree reads that folder's settings.
    let parts: Vec<&[u8]> = rel.components().map(|c| c.as_os_str().as_bytes()).collect();
    for (i, part) in parts.iter().enumerate() {
        if matches!(*part, b".envrc" | b".mcp.json" | b".vscode" | b".idea") {
            return true;
        }
        // Other editors' settings (Zed and Helix start the language servers they name), and
        // the project config of aider (its lint and test commands run after each edit) and
        // of vim and Neovim (`exrc`).
        if matches!(*part, b".zed" | b".helix")
            || (parts.len() == i + 1
                && matches!(
                    *part,
                    b".aider.conf.yml"
                        | b".exrc"
                        | b".vimrc"
                        | b".gvimrc"
                        | b".nvimrc"
                        | b".nvim.lua"
                ))
        {
            return true;
        }
        // Other agents' project hooks, MCP servers and plugins, and the folders holding them
        // (`shim::protected_paths` protects the same).
        if matches!(
            *part,
            b".cursor"
                | b".roo"
                | b".amazonq"
                | b".kiro"
                | b".opencode"
                | b".github"
                | b".agents"
                | b".windsurf"
                | b".qwen"
        ) {
            // `.github` is every project's CI folder: only its hooks' folder is named here
            // (`fence run` also keeps the folder itself from being moved or replaced).
            if *part == b".github" {
                return parts.get(i + 1) == Some(&&b"hooks"[..]);
            }
            return matches!(
                (*part, parts.get(i + 1..).unwrap_or_default()),
                (_, [])
                    | (b".cursor", [b"hooks.json" | b"mcp.json"] | [b"hooks", ..])
                    | (b".agents", [b"skills", ..])
                    | (b".windsurf", [b"hooks.json"])
                    | (b".qwen", [b"settings.json" | b".env"])
                    | (b".roo" | b".amazonq", [b"mcp.json"])
                    | (
                        b".kiro",
                        [b"hooks", ..] | [b"settings"] | [b"settings", b"mcp.json"]
                    )
                    | (
                        b".opencode",
                        [b"plugin" | b"plugins" | b"tool" | b"tools", ..]
                    )
            );
        }
        if *part == b".claude" {
            return match parts.get(i + 1..) {
                Some([]) | None => true,
                Some([name]) => {
                    name.starts_with(b"settings") && name.ends_with(b".json")
                        || matches!(*name, b"hooks" | b"agents" | b"skills" | b"commands")
                }
                // Hook scripts; subagents and skills (their frontmatter's hooks and MCP
                // servers, a skill's scripts) and custom commands (their `!` lines).
                Some([b"hooks" | b"agents" | b"skills" | b"commands", ..]) => true,
                Some(_) => false,
            };
        }
        // Gemini CLI's and Codex's project settings (hooks, MCP servers): the folder
        // itself (removing or replacing it) and the files that run programs.
        if matches!(*part, b".gemini" | b".codex") {
            return match parts.get(i + 1..) {
                Some([]) | None => true,
                Some([name, ..]) => match *part {
                    // `.env` is loaded into Gemini CLI's environment; `policies/` and
                    // Codex's `rules/` say what runs unasked.
                    // Custom commands (`!{…}` runs a shell) and project extensions (their
                    // MCP servers); Codex's skills.
                    b".gemini" => {
                        matches!(*name, b"settings.json" | b".env") && parts.len() == i + 2
                            || matches!(
                                *name,
                                b"policies" | b"commands" | b"extensions" | b"skills"
                            )
                    }
                    _ => {
                        matches!(*name, b"config.toml" | b"hooks.json") && parts.len() == i + 2
                            || matches!(*name, b"rules" | b"skills")
                    }
                },
            };
        }
    }
    false
}

/// A repository nested in the worktree: its `.git` entry (`vendor/lib/.git`) or a control
/// file of it (`vendor/lib/.git/config`, `…/.git/hooks/…`). The worktree's own `git status`
/// runs `git status`, and with it `core.fsmonitor`, in every directory its index records
/// as a submodule.
fn is_nested_git_control(rel: &Path) -> bool {
    let parts: Vec<Component> = rel.components().collect();
    let Some(at) = parts
        .iter()
        .skip(1)
        .position(|c| c.as_os_str() == ".git")
        .map(|i| i + 1)
    else {
        return false;
    };
    let tail: PathBuf = parts[at..].iter().collect();
    tail == Path::new(".git") || is_git_control(&tail)
}

/// `.git/hooks/…`, `.git/config`, `.git/commondir`, `.git/config.worktree`, a linked
/// worktree's `commondir` and `config.worktree`.
fn is_git_control(rel: &Path) -> bool {
    // `.git/commondir` names the directory git takes config and hooks from;
    // `.git/config.worktree` is a config file once `extensions.worktreeConfig` is on.
    // `.git/fence`: the spare folders of `fence run`, which a sandbox must not fill.
    // `.git/remotes/NAME` and `.git/branches/NAME`: git's older ways to define a remote,
    // read for any name `.git/config` does not define (a push sent elsewhere).
    if rel.starts_with(".git/hooks")
        || rel.starts_with(".git/fence")
        || rel.starts_with(".git/remotes")
        || rel.starts_with(".git/branches")
        || [
            ".git/config",
            ".git/commondir",
            ".git/config.worktree",
            ".git",
        ]
        .iter()
        .any(|p| rel == Path::new(p))
    {
        return true;
    }
    // A linked worktree's `commondir` and `config.worktree`.
    let parts: Vec<&[u8]> = rel.components().map(|c| c.as_os_str().as_bytes()).collect();
    if let [b".git", b"worktrees", _, name] = parts.as_slice()
        && matches!(*name, b"commondir" | b"config.worktree")
    {
        return true;
    }
    // A submodule's git directory (`.git/modules/NAME`, whose name may hold slashes): its
    // config and hooks, not git's own folders inside it.
    if let [b".git", b"modules", below @ ..] = parts.as_slice() {
        // A name may end in a word of git's own folders (`lib/info`), so none is skipped.
        for (i, part) in below.iter().enumerate().skip(1) {
            // `remotes` after `refs` is git's remote-tracking refs, not a definition.
            let remote_definitions =
                matches!(*part, b"remotes" | b"branches") && below[i - 1] != b"refs";
            if *part == b"hooks" || remote_definitions {
                return true;
            }
            if i + 1 == below.len()
                && matches!(*part, b"config" | b"commondir" | b"config.worktree")
            {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct FakeFs(HashMap<PathBuf, PathBuf>);
    impl FsView for FakeFs {
        fn read_link(&self, p: &Path) -> io::Result<PathBuf> {
            self.0
                .get(p)
                .cloned()
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
        }
    }

    /// Counts the links read through it.
    struct Counting(FakeFs, std::sync::atomic::AtomicUsize);
    impl FsView for Counting {
        fn read_link(&self, p: &Path) -> io::Result<PathBuf> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.0.read_link(p)
        }
    }

    #[test]
    fn once_fs_reads_each_link_once_and_resolves_alike() {
        let inner = Counting(
            FakeFs(HashMap::from([
                (PathBuf::from("/home"), PathBuf::from("/var/home")),
                (PathBuf::from("/var/home/u/.ssh"), PathBuf::from("keys")),
            ])),
            Default::default(),
        );
        let once = OnceFs::new(&inner);
        let paths = [
            "/home/u/.ssh",
            "/home/u/.aws",
            "/home/u/.ssh/id",
            "/home/u/.aws",
        ];
        for p in paths {
            assert_eq!(
                resolve(&once, Path::new("/"), Path::new(p), true),
                resolve(&inner, Path::new("/"), Path::new(p), true),
                "{p}"
            );
        }
        // Through the cache: /home, /var, /var/home, /var/home/u, .ssh, keys, .aws, id.
        let direct = inner.1.load(std::sync::atomic::Ordering::Relaxed);
        inner.1.store(0, std::sync::atomic::Ordering::Relaxed);
        let fresh = OnceFs::new(&inner);
        for p in paths {
            resolve(&fresh, Path::new("/"), Path::new(p), true);
        }
        let cached = inner.1.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            cached < direct / 2,
            "{cached} reads through the cache, {direct} without"
        );
        assert_eq!(cached, 8);
    }

    #[test]
    fn dotdot_is_applied_after_symlinks() {
        let fs = FakeFs(HashMap::from([(
            PathBuf::from("/wt/link"),
            PathBuf::from("/etc/ssl"),
        )]));
        let r = resolve(&fs, Path::new("/wt"), Path::new("link/../passwd"), true);
        assert_eq!(r, PathBuf::from("/etc/passwd"));
    }

    #[test]
    fn relative_symlink_targets_resolve_from_their_directory() {
        let fs = FakeFs(HashMap::from([(
            PathBuf::from("/wt/a/up"),
            PathBuf::from("../../etc"),
        )]));
        let r = resolve(&fs, Path::new("/wt"), Path::new("a/up/hosts"), true);
        assert_eq!(r, PathBuf::from("/etc/hosts"));
    }

    #[test]
    fn final_symlink_is_not_followed_for_unlink() {
        let fs = FakeFs(HashMap::from([(
            PathBuf::from("/wt/l"),
            PathBuf::from("/"),
        )]));
        assert_eq!(
            resolve(&fs, Path::new("/wt"), Path::new("l"), false),
            PathBuf::from("/wt/l")
        );
        assert_eq!(
            resolve(&fs, Path::new("/wt"), Path::new("l/"), false),
            PathBuf::from("/")
        );
    }

    #[test]
    fn descriptor_links_are_not_followed_into_the_judging_process() {
        // On a real system /dev/stderr leads to /proc/self/fd/2 and on to whatever the
        // judging process's stderr is (a pipe, a file): the line's own stderr is meant.
        let fs = FakeFs(HashMap::from([
            (
                PathBuf::from("/dev/stderr"),
                PathBuf::from("/proc/self/fd/2"),
            ),
            (PathBuf::from("/dev/fd"), PathBuf::from("/proc/self/fd")),
            (PathBuf::from("/proc/self"), PathBuf::from("4242")),
            (PathBuf::from("/proc/4242/fd/2"), PathBuf::from("pipe:[1]")),
        ]));
        for (written, kept) in [
            ("/dev/stderr", "/dev/stderr"),
            ("/dev/fd/2", "/dev/fd/2"),
            ("/proc/self/fd/2", "/proc/self/fd/2"),
        ] {
            let r = resolve(&fs, Path::new("/wt"), Path::new(written), true);
            assert_eq!(r, PathBuf::from(kept));
            assert!(is_harmless_device(&r), "{written}");
        }
        for input in ["/dev/fd/0", "/proc/self/fd/0"] {
            assert!(!is_harmless_device(Path::new(input)), "{input}");
        }
        let real = resolve(&RealFs, Path::new("/"), Path::new("/dev/stdout"), true);
        assert_eq!(real, PathBuf::from("/dev/stdout"));
    }

    #[test]
    fn symlink_loops_end() {
        let fs = FakeFs(HashMap::from([
            (PathBuf::from("/wt/a"), PathBuf::from("b")),
            (PathBuf::from("/wt/b"), PathBuf::from("a")),
        ]));
        let r = resolve(&fs, Path::new("/wt"), Path::new("a/x"), true);
        assert!(r.starts_with("/wt"));
    }

    #[test]
    fn dotdot_above_root_stays_at_root() {
        assert_eq!(
            normalize(Path::new("/wt"), Path::new("../../../..")),
            PathBuf::from("/")
        );
    }

    #[test]
    fn system_roots_and_devices() {
        assert!(is_system_root(Path::new("/etc/hosts")));
        assert!(is_system_root(Path::new("/lib64/x")));
        assert!(is_system_root(Path::new("/usr")));
        assert!(!is_system_root(Path::new("/var/tmp")));
        assert!(is_system_root(Path::new("/")));
        assert!(glob_may_be_system_root(Path::new("/e*c/passwd")));
        assert!(glob_may_be_system_root(Path::new("/u?r/bin/x")));
        assert!(glob_may_be_system_root(Path::new("/[e]tc/x")));
        assert!(glob_may_be_system_root(Path::new("/*/x")));
        assert!(!glob_may_be_system_root(Path::new("/tmp/*.log")));
        assert!(!glob_may_be_system_root(Path::new("/t*p/x")));
        assert!(is_block_device(Path::new("/dev/sda1")));
        assert!(is_block_device(Path::new("/dev/nvme0n1")));
        assert!(is_block_device(Path::new("/dev/mem")));
        assert!(!is_block_device(Path::new("/dev/null")));
    }

    #[test]
    fn protected_paths() {
        for p in [
            ".git/hooks/pre-commit",
            ".git/config",
            ".git/commondir",
            ".git/config.worktree",
            ".git/worktrees/w/commondir",
            ".git/remotes/origin",
            ".git/branches/origin",
            "evil/.git/remotes/origin",
            ".git/modules/lib/remotes/origin",
            ".gitmodules",
            ".envrc",
            ".vscode/settings.json",
            ".idea/workspace.xml",
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".mcp.json",
            ".git/modules/lib/config",
            ".git/modules/third_party/lib/hooks/post-checkout",
            "vendor/lib/.git",
            "evil/.git/config",
            "evil/.git/hooks/pre-commit",
            "a/b/.git/commondir",
            ".git/modules/lib/info/config",
            "HEAD",
            "forged/HEAD",
            "sub/.envrc",
            "a/b/.vscode/settings.json",
            "sub/.idea/workspace.xml",
            "sub/.claude/settings.json",
            "sub/.claude/hooks/check.sh",
            "sub/.mcp.json",
            ".gemini/settings.json",
            ".codex/config.toml",
            ".codex/hooks.json",
            "sub/.gemini/settings.json",
            ".gemini/.env",
            ".gemini/policies/x.toml",
            ".codex/rules/default.rules",
            ".claude/agents/x.md",
            ".claude/skills/x/SKILL.md",
            ".claude/commands/x.md",
            "sub/.claude/agents/x.md",
            ".gemini/commands/x.toml",
            ".gemini/extensions/x/gemini-extension.json",
            ".codex/skills/x/SKILL.md",
            ".pre-commit-config.yaml",
            "lefthook.yml",
            ".lefthook.yml",
            "lefthook-local.toml",
        ] {
            assert!(is_protected(Path::new(p)), "{p}");
        }
        for p in [
            ".gemini/GEMINI.md",
            ".codex/prompts/x.md",
            "docs/.pre-commit-config.yaml",
            "src/lefthook.yml",
        ] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
        for p in [
            "src/main.rs",
            ".gitignore",
            ".git/COMMIT_EDITMSG",
            ".claude/notes.md",
            ".git/modules/lib/refs/heads/main",
            ".git/modules/lib/refs/remotes/origin/main",
            ".git/modules/lib/logs/refs/remotes/origin/main",
            "evil/.git/index",
            ".git/logs/HEAD",
            "HEADER",
            "evil/.gitignore",
            "src/git/config",
            "sub/.claude/notes.md",
            "sub/.gitmodules",
            "src/envrc",
        ] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
    }
}

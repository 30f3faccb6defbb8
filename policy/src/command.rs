//! What one command does: the analysis of an argv, shared by the line
//! context (after the walker has evaluated the words) and the exec context
//! (argv as `execve` received it). It recognises the program, unwraps
//! wrappers, reads the options that matter and records findings by rule id;
//! the rule table decides what each finding means.

use std::path::{Path, PathBuf};

use crate::git;
use crate::level::Context;
use crate::opts::{self, OptSpec};
use crate::path;
use crate::refs::{self, Refs};
use crate::rules::{
    DISK_PROGRAMS, FETCH_PROGRAMS, FIREWALL_PROGRAMS, INTERPRETERS, KILL_PROGRAMS,
    NETWORK_PROGRAMS, PERM_PROGRAMS, READ_PROGRAMS, RuleId, SERVICE_PROGRAMS, SHELLS,
};
use crate::tool_commands;
use crate::walk::{CmdIo, Cwd, Walker};
use crate::word::{Arg, UNKNOWN};

/// How many words of a line are kept to be resolved through symlinks as credentials.
/// Most `cd`, `pushd` and `popd` a line's walks follow (see `cd`).
const MAX_DIR_CHANGES: usize = 256;

const MAX_SECRET_CANDIDATES: usize = 512;

/// How many wrappers may be stacked (`sudo env nice timeout …`) before the
/// command is too complex to judge.
const MAX_WRAPPERS: usize = 24;

/// What surrounds the command being judged.
pub struct Invocation<'x> {
    pub io: &'x CmdIo,
    /// A process substitution among the arguments runs a network program.
    pub procsub_network: bool,
    /// A command substitution in the words runs a network program.
    pub subs_network: bool,
}

/// Where a path lands.
#[derive(Debug, Clone)]
pub enum Loc {
    Inside { path: PathBuf, rel: PathBuf },
    Outside(PathBuf),
    Unknown,
}

/// The program name of a command word: its last path component.
pub fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a program name is a dynamic loader run as a program: glibc's `ld.so` and
/// `ld-linux-x86-64.so.2`, `ld-linux-aarch64.so.1`…, musl's `ld-musl-x86_64.so.1`.
fn is_dynamic_loader(name: &str) -> bool {
    name == "ld.so"
        || ((name.starts_with("ld-linux") || name.starts_with("ld-musl-")) && name.contains(".so"))
}

/// A shell's or interpreter's name without the version some installs give it (`ksh93`,
/// `ruby3.2`, `perl5`, `pypy3`, `lua5.4`, `php8.2`, `node18`): the program it is. Any other
/// name is returned as it is.
fn unversioned(name: &str) -> &str {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if base.len() < name.len() && (SHELLS.contains(&base) || INTERPRETERS.contains(&base)) {
        base
    } else {
        name
    }
}

pub fn is_python(name: &str) -> bool {
    name == "python"
        || name
            .strip_prefix("python")
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

fn is_pip(name: &str) -> bool {
    name == "pip"
        || name
            .strip_prefix("pip")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Text of a word after `=` or `@`, where programs take a path
/// (`--file=/x`, `-d @/x`).
fn embedded_path(t: &str) -> Option<&str> {
    // `-f/etc/shadow`: a short option with its value attached.
    let attached = (t.len() > 2 && !t.starts_with("--") && t.is_char_boundary(2)).then(|| &t[2..]);
    let candidates = [
        t.split_once('=').map(|x| x.1),
        t.split_once('@').map(|x| x.1),
        t.split_once('<').map(|x| x.1),
        attached,
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|v| v.starts_with('/') || v.starts_with('~') || v.split('/').any(|c| c == ".."))
}

/// sed's options that take a value (`-E`, `-n`, `-r`, `-s`, `-z` and `-i[SUFFIX]` take
/// none).
const SED_OPTIONS: OptSpec = OptSpec {
    short_arg: "efl",
    long_arg: &["expression", "file", "line-length"],
    permute: true,
};

/// The words `su [OPTIONS] [-] [USER [ARGUMENT…]]` hands the user's shell: the operands
/// after the user (a leading `-` asks for a login shell and is no user), `None` when there
/// are none. After `--` (`su -- root -c CMD`, `su root -- -c CMD`) su reads no more
/// options, and `-c CMD` reaches the shell, which runs CMD.
fn su_shell_arguments(args: &[Arg], operands: &[usize]) -> Option<Vec<Arg>> {
    let mut rest = operands.iter().skip_while(|&&i| args[i].text == "-");
    rest.next()?;
    let words: Vec<Arg> = rest.map(|&i| args[i].clone()).collect();
    (!words.is_empty()).then_some(words)
}

impl Walker<'_> {
    /// Resolves a word as a path the way the kernel would, against the
    /// command's working directory.
    pub fn resolve_arg(&self, a: &Arg, follow_final: bool) -> Loc {
        let known_dir;
        let text: &str = if a.known {
            &a.text
        } else {
            // Judge by the known directory before the first unknown piece.
            let prefix = a.known_prefix();
            match prefix.rfind('/') {
                Some(i) => {
                    known_dir = prefix[..=i].to_string();
                    &known_dir
                }
                None => return Loc::Unknown,
            }
        };
        if text.len() > 4096 {
            // Longer than PATH_MAX: the kernel refuses it; judge it unknown.
            return Loc::Unknown;
        }
        let text = deglob(text);
        let p = Path::new(text.as_ref());
        let Some(cwd) = self.start_of(p) else {
            return Loc::Unknown;
        };
        let resolved = if self.links.is_empty() {
            path::resolve(self.cls.fs.as_ref(), &cwd, p, follow_final)
        } else {
            let fs = path::WithLinks {
                inner: self.cls.fs.as_ref(),
                links: &self.links,
            };
            path::resolve(&fs, &cwd, p, follow_final)
        };
        self.locate(resolved)
    }

    pub fn locate(&self, resolved: PathBuf) -> Loc {
        match resolved.strip_prefix(&self.cls.worktree) {
            Ok(rel) => Loc::Inside {
                rel: rel.to_path_buf(),
                path: resolved,
            },
            Err(_) => Loc::Outside(resolved),
        }
    }

    /// Outside the worktree but inside the session's temp directory or a
    /// configured exception.
    fn is_allowed_outside(&self, p: &Path) -> bool {
        self.cls
            .session_tmp
            .as_ref()
            .is_some_and(|t| p.starts_with(t))
            || self.cls.exceptions.iter().any(|e| p.starts_with(e))
    }

    /// A word that names a path in the sense of the path fence (SPEC §2): one that starts
    /// with `/`, `~`, `$HOME` or `${HOME}`, or holds `..`, as written. What a variable
    /// gives a word (`echo $PATH`, `ls $OLDPWD`) does not make it one: the rules that
    /// judge what a command deletes, writes or reads as a credential look at the value.
    pub fn is_path_token(a: &Arg) -> bool {
        !a.procsub && a.written_as_path()
    }

    /// A word whose value, as the program gets it, names a path that may leave where it
    /// is used: it starts with `/` or `~`, or holds `..` (`ln -s $X y` with `X=/etc`).
    fn is_path_value(a: &Arg) -> bool {
        let t = &a.text;
        if a.procsub {
            return false;
        }
        t.starts_with('/')
            || t.starts_with('~')
            || a.home_based
            || t.contains("..")
            || (!a.known && a.known_prefix().starts_with('/'))
    }

    /// Whether a word leads out of the worktree only through a symlink: named by where
    /// it is written it lies inside (`out/x` with `out` a link to a folder outside).
    fn leaves_through_symlink(&self, a: &Arg) -> bool {
        let p = Path::new(&a.text);
        self.start_of(p)
            .is_some_and(|cwd| matches!(self.locate(path::normalize(&cwd, p)), Loc::Inside { .. }))
    }

    /// The secret path a glob word can expand to, if any (`~/.ss?/*`,
    /// `/home/*/.aws/credentials`): the shell expands it before the program
    /// runs, so it reads what it matches. With `whole_tree`, a directory it
    /// matches that holds a secret counts too.
    fn glob_secret(&self, a: &Arg, whole_tree: bool) -> Option<String> {
        // A name a glob matched is judged by the glob too: what it can reach is not only
        // what it matched when judged.
        let a = match &a.globbed_from {
            Some(pattern) => Arg {
                text: pattern.clone(),
                known: true,
                glob: true,
                ..a.clone()
            },
            None => a.clone(),
        };
        if !a.glob || !a.known || a.text.len() > 4096 {
            return None;
        }
        let a = self.expand_tilde(a);
        let p = Path::new(&a.text);
        let cwd = self.start_of(p)?;
        self.cls
            .glob_reaches_secret(&path::normalize(&cwd, p), whole_tree)
    }

    /// A path the command reads (a path token or a `<` redirection).
    pub fn check_read_path(&mut self, a: &Arg) {
        if let Some(secret) = self.glob_secret(a, false) {
            self.note_secret(&secret);
            self.find(
                RuleId::SecretRead,
                format!("{} can expand to a credential: {secret}", display_arg(a)),
            );
            return;
        }
        match self.resolve_arg(a, true) {
            Loc::Outside(p) => {
                if self.cls.is_secret(&p) {
                    // Named by the credential rule, not the path rule: a
                    // credential read is what the kernel fence refuses, so
                    // auto-approve never answers it, wherever the file lies.
                    self.note_secret(&p.display().to_string());
                    self.find(
                        RuleId::SecretRead,
                        format!("reads a credential outside the worktree: {}", p.display()),
                    );
                } else if !path::is_exception(&p, &[]) && !self.is_allowed_outside(&p) {
                    self.find(
                        RuleId::PathOutside,
                        format!("path outside the worktree: {}", p.display()),
                    );
                }
            }
            Loc::Inside { path, rel } => {
                if self.cls.is_secret(&path) {
                    self.note_secret(&path.display().to_string());
                    self.find(
                        RuleId::SecretRead,
                        format!("reads a credential: {}", rel.display()),
                    );
                }
            }
            Loc::Unknown => self.find(
                RuleId::PathOutside,
                format!(
                    "path cannot be worked out before running: {}",
                    display_arg(a)
                ),
            ),
        }
    }

    /// Applies the path fence to every argument of a command that is not
    /// judged otherwise (`skip` marks those).
    /// Whether `rel` (relative to the worktree) is a protected path: SPEC's list, or one
    /// the session names ([`crate::Settings::protected`]).
    fn is_protected(&self, rel: &Path) -> bool {
        path::is_protected(rel) || self.req.protected.iter().any(|p| rel.starts_with(p))
    }

    /// A search's pattern that looks like a path (`grep -rn '../' src`, `rg /root`) is
    /// judged by the token rule of the path fence alone: it is never opened, so it reads
    /// no credential.
    pub fn check_pattern_tokens(&mut self, args: &[Arg], patterns: &[usize]) {
        for &i in patterns {
            let a = &args[i];
            if !Self::is_path_token(a) {
                continue;
            }
            match self.resolve_arg(a, false) {
                Loc::Outside(p) if !path::is_exception(&p, &[]) && !self.is_allowed_outside(&p) => {
                    self.find(
                        RuleId::PathOutside,
                        format!(
                            "a pattern that names a path outside the worktree: {}",
                            p.display()
                        ),
                    )
                }
                _ => {}
            }
        }
    }

    pub fn check_path_args(&mut self, args: &[Arg], skip: &[usize]) {
        for (i, a) in args.iter().enumerate().skip(1) {
            if skip.contains(&i) {
                continue;
            }
            if Self::is_path_token(a) {
                self.check_read_path(a);
            } else if a.known
                && !a.procsub
                && !a.text.starts_with('-')
                && !a.text.is_empty()
                && a.text.len() < 4096
            {
                // A relative word that names a symlink inside the worktree
                // pointing outside leaves it just as `../` would. (Only that rule
                // comes of it: where it decides nothing, as at exec, nothing is
                // resolved.)
                if let Some(secret) = self.glob_secret(a, false) {
                    self.note_secret(&secret);
                    self.find(
                        RuleId::SecretRead,
                        format!("{} can expand to a credential: {secret}", a.text),
                    );
                    continue;
                }
                let secret_inside = self.cls.has_secret_inside() && self.judges(RuleId::SecretRead);
                if !self.judges(RuleId::PathOutside) && !secret_inside {
                    continue;
                }
                let loc = self.resolve_arg(a, true);
                // A secret inside the worktree named as a plain word (`cat .env` with
                // `deny_read = [".env"]`).
                if let Loc::Inside { path, rel } = &loc
                    && secret_inside
                    && self.cls.is_secret(path)
                {
                    self.note_secret(&path.display().to_string());
                    self.find(
                        RuleId::SecretRead,
                        format!("reads a credential: {}", rel.display()),
                    );
                    continue;
                }
                if !self.judges(RuleId::PathOutside) {
                    continue;
                }
                let Loc::Outside(p) = loc else {
                    continue;
                };
                // Named as written it lies inside (`out/x`, `$D/x` with `D=out`), the
                // working directory lies outside (`cd / && cat etc/passwd`), or the line
                // itself gave it a value that leaves (`D=/etc; cat $D/passwd`: SPEC §2
                // expands the arguments before resolving them). A value fence's own
                // environment gives (`$OLDPWD`, `$_`), which the shell that runs the line may
                // not share, and a list
                // of paths (`$PATH`) are no path token: they leave only as a credential or
                // through a symlink.
                let through_link = self.leaves_through_symlink(a);
                let how = if through_link {
                    " through a symlink"
                } else {
                    ""
                };
                // A list of absolute paths (`$PATH`, `$LD_LIBRARY_PATH`) names folders to
                // look in: written out, it reads none of them.
                if self.cls.is_secret(&p) && !is_path_list(&a.text) {
                    self.note_secret(&p.display().to_string());
                    self.find(
                        RuleId::SecretRead,
                        format!("{} reads a credential{how}: {}", a.text, p.display()),
                    );
                } else if !path::is_exception(&p, &[])
                    && !self.is_allowed_outside(&p)
                    && (through_link
                        || !Self::is_path_value(a)
                        || (!a.assumed && !a.text.contains(':')))
                {
                    // A plain name read from a working directory outside the worktree says
                    // so (`git status` run in /etc reads nothing called `/etc/status`).
                    let cwd_outside = self.cwd_path().filter(|c| {
                        !through_link && !a.text.contains('/') && !c.starts_with(&self.cls.worktree)
                    });
                    let why = match cwd_outside {
                        Some(cwd) => format!(
                            "runs in a folder outside the worktree ({}), where {} is {}",
                            cwd.display(),
                            a.text,
                            p.display()
                        ),
                        None => format!(
                            "{} leads outside the worktree{how}: {}",
                            a.text,
                            p.display()
                        ),
                    };
                    self.find(RuleId::PathOutside, why);
                } else if a.assumed
                    && !path::is_exception(&p, &[])
                    && !self.is_allowed_outside(&p)
                    && !is_path_list(&a.text)
                {
                    // A value fence's own environment gives, outside the worktree here: the
                    // shell that runs the line may see another, so it is no path token, but
                    // no green read either (as a variable with no value here is not).
                    self.find(
                        RuleId::DefaultUnknown,
                        format!(
                            "reads {}, a path the environment gives, outside the worktree here",
                            p.display()
                        ),
                    );
                }
            }
            // An option's value is a path of its own (`--file=../x`, `-f/etc/x`): the word
            // as a whole may be a path token and still resolve inside.
            if a.text.starts_with('-')
                && let Some(v) = embedded_path(&a.text)
            {
                let sub = Arg {
                    text: v.to_string(),
                    known: a.known,
                    home_based: v.starts_with('~'),
                    ..Arg::default()
                };
                let sub = self.expand_tilde(sub);
                self.check_read_path(&sub);
            }
        }
    }

    /// `~` at the start of a word the line does not expand itself (an option's value,
    /// a file named in a program's own language): taken for the home, the stricter
    /// reading. Only where `home_based` says the word began with it: a `~` left in a
    /// word the shell has expanded was quoted, and is a name like any other (`grep "~"`).
    fn expand_tilde(&self, mut a: Arg) -> Arg {
        if !a.home_based {
            return a;
        }
        if let Some(rest) = a.text.strip_prefix('~')
            && (rest.is_empty() || rest.starts_with('/'))
        {
            match &self.cls.home {
                Some(h) => a.text = format!("{}{rest}", h.display()),
                None => {
                    a.known = false;
                    a.text = format!("{UNKNOWN}{rest}");
                }
            }
        }
        a
    }

    /// The values of `--option=VALUE` words (`prefix` is `--option=`), `~` expanded.
    fn attached_values(&self, args: &[Arg], prefix: &str) -> Vec<Arg> {
        args.iter()
            .skip(1)
            .filter_map(|a| {
                let v = a.text.strip_prefix(prefix)?;
                Some(self.expand_tilde(Arg {
                    text: v.to_string(),
                    known: a.known,
                    home_based: v.starts_with('~'),
                    ..Arg::default()
                }))
            })
            .collect()
    }

    /// A path the command writes (creates, truncates, appends, renames,
    /// changes metadata of).
    /// Whether a word names a folder on disk now, links followed (not one that may be).
    fn names_a_folder(&self, a: &Arg) -> bool {
        let path = match self.resolve_arg(a, true) {
            Loc::Outside(p) => p,
            Loc::Inside { path, .. } => path,
            Loc::Unknown => return true,
        };
        std::fs::metadata(path).is_ok_and(|m| m.is_dir())
    }

    pub fn check_write_target(&mut self, a: &Arg, follow_final: bool, what: &str) {
        self.write_target(a, follow_final, what, false)
    }

    /// The file a redirection writes: SPEC §2 judges every redirection target, so one
    /// that cannot be worked out before running is red whatever its spelling.
    pub fn check_redirection_target(&mut self, a: &Arg) {
        self.write_target(a, true, "redirection", true)
    }

    /// A path the command writes. One that cannot be worked out before running is red
    /// when the path fence judges it: a redirection target (`always_judged`), a path
    /// token (SPEC §2: it starts with `/`, `~`, `$HOME`, or holds `..`), or a path fence
    /// works out for the program (`tar -P`'s members). A word of the line that only an
    /// expansion makes unknown (`"$f"`, `$(git ls-files)`, what xargs reads) is no token.
    fn write_target(&mut self, a: &Arg, follow_final: bool, what: &str, always_judged: bool) {
        match self.resolve_arg(a, follow_final) {
            Loc::Outside(p) => {
                if path::is_block_device(&p) || (a.glob && path::glob_may_be_block_device(&p)) {
                    self.cur_writes = true;
                    self.find(
                        RuleId::DiskTools,
                        format!("{what} writes to a block device: {}", p.display()),
                    );
                } else if path::is_harmless_device(&p)
                    // A process substitution's pipe (`tee >(gzip > x.gz)`), and under
                    // `fence run` any descriptor the program holds: the kernel fence
                    // judged the file when it was opened. In a line, a descriptor above
                    // the standard streams is one the shell that runs it inherited,
                    // which nothing here knows (`echo x > /dev/fd/3`): judged as the path.
                    || (path::is_descriptor_link(&p) && (a.procsub || self.ctx == Context::Exec))
                {
                } else if path::is_system_root(&p) || (a.glob && path::glob_may_be_system_root(&p))
                {
                    self.cur_writes = true;
                    self.find(
                        RuleId::SysRootWrite,
                        format!("{what} writes to a system root: {}", p.display()),
                    );
                } else if self.is_allowed_outside(&p) {
                    self.cur_writes = true;
                } else {
                    self.cur_writes = true;
                    self.find_outside_write(
                        RuleId::PathOutside,
                        format!("{what} writes outside the worktree: {}", p.display()),
                    );
                }
            }
            Loc::Inside { rel, .. } => {
                self.cur_writes = true;
                if self.is_protected(&rel) {
                    self.find(
                        RuleId::ProtectedPath,
                        format!("{what} writes a protected path: {}", rel.display()),
                    );
                } else {
                    let shown = if rel.as_os_str().is_empty() {
                        ".".to_string()
                    } else {
                        rel.display().to_string()
                    };
                    self.find(
                        RuleId::WriteInside,
                        format!("{what} writes inside the worktree: {shown}"),
                    );
                }
            }
            Loc::Unknown
                if always_judged || !a.comes_from_expansion() || Self::is_path_token(a) =>
            {
                self.cur_writes = true;
                // It may lie outside: as a write there, never auto-approved.
                self.find_outside_write(
                    RuleId::PathOutside,
                    format!(
                        "{what} writes a path that cannot be worked out before running: {}",
                        display_arg(a)
                    ),
                );
            }
            Loc::Unknown => {
                self.cur_writes = true;
                // A word that is no path token, known only when it runs (`sed -i … "$f"`,
                // `xargs prettier --write`): the path fence judges tokens, so it is asked
                // as a write in the worktree. Where it lands is what the kernel fence
                // decides, so auto-approve still asks, as for a write outside.
                self.find_outside_write(
                    RuleId::WriteInside,
                    format!(
                        "{what} writes a path known only when it runs: {}",
                        display_arg(a)
                    ),
                );
            }
        }
    }

    /// Whether an absolute name a program's inline code holds starts in a folder that is
    /// there to be named: one of the system's top folders, or the first folder of the
    /// worktree's or the home's path. A route or a pattern (`'/api/users'`, `'/v1/'`) is
    /// no path token.
    fn names_a_known_root(&self, literal: &str) -> bool {
        const TOP_FOLDERS: &[&str] = &[
            "bin",
            "boot",
            "dev",
            "etc",
            "home",
            "lib",
            "lib32",
            "lib64",
            "libx32",
            "media",
            "mnt",
            "opt",
            "proc",
            "root",
            "run",
            "sbin",
            "snap",
            "srv",
            "sys",
            "tmp",
            "usr",
            "var",
            "nix",
            "workspace",
            "workspaces",
            "Users",
            "Volumes",
            "private",
        ];
        // The first folder below `/` (`/..` is `/`: `/../etc` starts in `etc`).
        let first = |p: &Path| {
            p.components()
                .find_map(|c| match c {
                    std::path::Component::Normal(n) => Some(n),
                    _ => None,
                })
                .map(|c| c.to_string_lossy().into_owned())
        };
        let Some(top) = first(Path::new(literal)) else {
            return false;
        };
        TOP_FOLDERS.contains(&top.as_str())
            || self.cls.fs.exists(&Path::new("/").join(&top))
            || first(&self.cls.worktree).as_deref() == Some(top.as_str())
            || self.req.home.as_deref().and_then(first).as_deref() == Some(top.as_str())
    }

    fn note_secret(&mut self, what: &str) {
        if self.secret_read.is_none() {
            self.secret_read = Some(what.to_string());
        }
    }

    /// Notes the credential files named in text fed to another program on
    /// its stdin (`sftp host <<< "put ~/.ssh/id_rsa"`): each of its words.
    pub fn note_secret_words(&mut self, text: &str) {
        if self.secret_read.is_some() || !text.contains([' ', '\n', '\t']) {
            return;
        }
        for w in text.split_whitespace().take(64) {
            let a = self.expand_tilde(Arg {
                text: w.to_string(),
                known: true,
                home_based: w.starts_with('~'),
                ..Arg::default()
            });
            self.note_secret_in(&a);
        }
    }

    /// Notes a word that names a credential file, wherever it appears.
    pub fn note_secret_in(&mut self, a: &Arg) {
        if self.secret_read.is_some() || a.text.is_empty() || a.text.len() > 4096 {
            return;
        }
        // A list of absolute paths (`$PATH`) names folders to look in, and reads none.
        if is_path_list(&a.text) {
            return;
        }
        if let Some(secret) = self.glob_secret(a, false) {
            self.note_secret(&secret);
            return;
        }
        let t = a.text.as_str();
        if t.contains("/environ") && t.contains("/proc/") {
            self.note_secret(t);
            return;
        }
        // The word, and what follows `=`, `@` or `<` in it (`--file=PATH`, curl's
        // `-d @PATH` and `-F name=<PATH`). A relative one is taken from the working
        // directory (`cd /etc && curl -d @shadow …`).
        // A `~` beginning the word itself is the shell's to expand: left there, it was
        // quoted (`grep "~"`) and names no home. After `=`, `@` or `<` the program may
        // take it for the home: read so.
        let mut candidates: Vec<(&str, bool)> = vec![(t, a.home_based)];
        candidates.extend(t.split_once('=').map(|x| (x.1, true)));
        candidates.extend(t.split_once('@').map(|x| (x.1, true)));
        candidates.extend(t.split_once('<').map(|x| (x.1, true)));

        for (c, tilde) in candidates {
            if c.is_empty() || c.starts_with('-') {
                continue;
            }
            let c = match (c.strip_prefix('~').filter(|_| tilde), &self.cls.home) {
                (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                    format!("{}{rest}", h.display())
                }
                _ => c.to_string(),
            };
            let Some(cwd) = self.start_of(Path::new(&c)) else {
                continue;
            };
            let p = path::normalize(&cwd, Path::new(&c));
            if self.cls.is_secret(&p) {
                self.note_secret(&p.display().to_string());
                return;
            }
            // Through the symlinks on the way (`link-out/.ssh/id_rsa` with `link-out` a
            // link to the home): read from the filesystem only if the line reaches the
            // network, where a credential read decides anything.
            if self.secret_candidates.len() < MAX_SECRET_CANDIDATES {
                self.secret_candidates.push((cwd, c));
            }
        }
    }

    /// Resolves the words [`Self::note_secret_in`] set aside through symlinks, until one
    /// names a credential (for `secret.exfiltrate`).
    pub fn resolve_secret_candidates(&mut self) {
        for (cwd, c) in std::mem::take(&mut self.secret_candidates) {
            if self.secret_read.is_some() {
                return;
            }
            let real = self.resolve_through_links(&cwd, &c);
            if self.cls.is_secret(&real) {
                self.note_secret(&real.display().to_string());
            }
        }
    }

    /// `text` resolved from `cwd` through symlinks, those the line made included.
    fn resolve_through_links(&self, cwd: &Path, text: &str) -> PathBuf {
        if self.links.is_empty() {
            path::resolve(self.cls.fs.as_ref(), cwd, Path::new(text), true)
        } else {
            let fs = path::WithLinks {
                inner: self.cls.fs.as_ref(),
                links: &self.links,
            };
            path::resolve(&fs, cwd, Path::new(text), true)
        }
    }

    /// Notes a folder argument read whole (an archiver's, a recursive copy's or
    /// search's) that is a secret path or holds one below it (`~`, `~/.config`).
    pub fn note_secret_holder(&mut self, a: &Arg) {
        if !a.known || a.text.is_empty() || a.text.len() > 4096 {
            return;
        }
        let t = a.text.as_str();
        if t.starts_with('-') && !t.contains('=') {
            return;
        }
        // Read whole, a folder that holds a credential reads it: the same
        // rule as naming the file (`grep -r token ~`, `tar czf x.tgz ~`).
        if let Some(secret) = self.glob_secret(a, true) {
            self.note_secret(&format!("{secret} (matched by {})", a.text));
            self.find(
                RuleId::SecretRead,
                format!(
                    "reads every file below {}, which can hold a credential: {secret}",
                    a.text
                ),
            );
            return;
        }
        // As in `note_secret_in`: a `~` the shell left at the start was quoted.
        let (t, tilde) = t.split_once('=').map_or((t, a.home_based), |x| (x.1, true));
        let t = match (t.strip_prefix('~').filter(|_| tilde), &self.cls.home) {
            (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", h.display())
            }
            _ => t.to_string(),
        };
        let Some(cwd) = self.start_of(Path::new(&t)) else {
            return;
        };
        // As written, and through the symlinks on the way (`grep -r x link-out` with
        // `link-out` a link to the home).
        let p = path::normalize(&cwd, Path::new(&t));
        let real = self.resolve_through_links(&cwd, &t);
        if let Some(p) = [p, real].into_iter().find(|p| self.cls.holds_secret(p)) {
            self.note_secret(&format!("{} (holds credentials)", p.display()));
            self.find(
                RuleId::SecretRead,
                format!(
                    "reads every file below {}, which holds credentials",
                    p.display()
                ),
            );
        }
    }

    /// Judges one command: `args[0]` is the program as written.
    pub fn judge_argv(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        if depth > MAX_WRAPPERS {
            self.find(RuleId::TooComplex, "too many wrappers to judge");
            return;
        }
        let Some(first) = args.first() else {
            return;
        };
        // `time -- prog`: the shell's `time` keyword takes `--` before the command it
        // times, and the parser leaves it as the first word. Anywhere else a program named
        // `--` is not found; judging what follows is the safe side either way.
        if first.known && first.text == "--" && args.len() > 1 {
            return self.judge_argv(&args[1..], inv, depth + 1);
        }
        // A command substitution in the command word makes it one "that cannot be
        // identified before running" (SPEC §2), whatever it prints (`$(pwd)/x` too).
        if first.is_dynamic() || first.substituted {
            let why = if first.procsub {
                "a process substitution"
            } else if first.cmdsub || first.substituted {
                "a command substitution"
            } else if first.glob {
                "a glob"
            } else if first.brace {
                "a brace expansion"
            } else {
                "a variable"
            };
            let rule = if inv.subs_network && first.cmdsub {
                RuleId::PipeToInterpreter
            } else {
                RuleId::DynamicProgram
            };
            self.find(
                rule,
                format!(
                    "the program is {why} ({}): it cannot be identified before running",
                    display_arg(first)
                ),
            );
            // A variable whose value the line gives (`CMD="git push"; $CMD origin main`):
            // refused as above, and what it names is judged too, for the reason shown.
            let named_by_the_line = first.known
                && !(first.glob || first.brace || first.procsub || first.assumed || first.cmdsub);
            if !named_by_the_line {
                self.check_path_args(args, &[]);
                return;
            }
        }
        if self.ctx == Context::Line && Self::is_path_token(first) {
            match self.resolve_arg(first, true) {
                Loc::Outside(p) if !path::is_exception(&p, &[]) && !self.is_allowed_outside(&p) => {
                    self.find(
                        RuleId::PathOutside,
                        format!("runs a program outside the worktree: {}", p.display()),
                    )
                }
                Loc::Unknown => self.find(
                    RuleId::PathOutside,
                    format!(
                        "runs a program whose path cannot be worked out: {}",
                        display_arg(first)
                    ),
                ),
                _ => {}
            }
        }
        // A program named by a path is the file at that path, not the system's program of
        // that name: `./cat` or `node_modules/.bin/head` may be anything the agent wrote, so
        // no green rule holds for it (SPEC §2: unknown programs are yellow). The rules that
        // ask or refuse still judge it by its name, the stricter reading.
        if self.ctx == Context::Line && first.text.contains('/') {
            let system = match self.resolve_arg(first, true) {
                Loc::Outside(p) => p.parent().is_some_and(|d| {
                    ["/bin", "/sbin", "/usr/bin", "/usr/sbin"]
                        .iter()
                        .any(|s| d == Path::new(s))
                }),
                _ => false,
            };
            if !system {
                self.find(
                    RuleId::DefaultUnknown,
                    format!(
                        "runs {} by its path: a file, not the system's program of that name",
                        display_arg(first)
                    ),
                );
            }
        }
        let name = program_name(&first.text).to_string();
        let name = name.as_str();
        self.match_custom_rules(name, args);
        // A name the line defines as a function calls the function only where the shell
        // would look one up: as the command word itself, not through a wrapper (`command`,
        // `env`, `exec`, `timeout`, `xargs`…) nor by a path (`/usr/bin/git`). Even then
        // the definition may not run (`false && f(){ …; }`, a subshell, `unset -f`): the
        // call is judged as the worse of the function's body, judged where it was defined,
        // and the program of that name.
        let calls_function = self.ctx == Context::Line
            && depth == 0
            && !first.text.contains('/')
            && self.functions.contains(name);
        if calls_function {
            self.find(
                RuleId::DefaultUnknown,
                format!("calls the shell function `{name}` defined in the line"),
            );
            self.forget_what_function_sets(name);
        }
        self.judge_program(name, args, inv, depth);
        if self.ctx == Context::Line && !first.text.contains('/') {
            self.expand_alias(&first.text, args, inv);
        }
        if self.ctx == Context::Line && first.text.contains('/') {
            // `./x.sh` after `echo 'rm -rf /' > x.sh`.
            let first = first.clone();
            self.run_script_written(&first, true);
        }
        if calls_function && args.len() > 1 {
            self.call_function(name, args);
        }
        if calls_function && self.functions_changing_dir.contains(name) {
            // Where it leaves the shell is not followed: later relative
            // paths cannot be placed.
            self.state.cwd = Cwd::Unknown;
        }
    }

    /// The custom rules that ask or deny also match the command as it runs: the rule's
    /// words against whole consecutive words of the command as the shell makes them (the
    /// program by its name), the last one as a prefix of its word, as the text's own match
    /// allows (`make deploy` matches `make deploy-prod`). Their text as written is matched
    /// too ([`crate::verdict`]); this catches what quoting, spacing, a path or a nested
    /// line hides from it (`"terraform" apply`, `terraform  apply`,
    /// `/usr/bin/terraform apply`, `bash -c "terraform"' apply'`), and never text inside
    /// one argument (`git commit -m 'terraform apply later'`). Allow rules match only the
    /// text as written (SPEC §2): a rule never widens access through a rewritten form.
    fn match_custom_rules(&mut self, name: &str, args: &[Arg]) {
        let table = self.cls.table();
        let custom_at = crate::rules::BUILTIN_RULES.len();
        let applies = |r: &crate::rules::Rule| {
            r.action != crate::level::Action::Allow && r.contexts.contains(self.ctx)
        };
        if !table.custom().any(applies) {
            return;
        }
        let word = |i: usize| if i == 0 { name } else { args[i].text.as_str() };
        let found: Vec<(usize, String)> = table
            .custom()
            .enumerate()
            .filter(|(_, r)| applies(r))
            .filter_map(|(i, r)| {
                let crate::rules::Origin::Custom { prefix } = &r.origin else {
                    return None;
                };
                let words: Vec<&str> = prefix.split_whitespace().collect();
                let (last, whole) = words.split_last()?;
                let at = (0..args.len().saturating_sub(whole.len())).find(|&start| {
                    whole.iter().enumerate().all(|(k, w)| word(start + k) == *w)
                        && word(start + whole.len()).starts_with(last)
                })?;
                let as_written = self
                    .cmd_text
                    .as_deref()
                    .is_some_and(|t| crate::verdict::prefix_matches(t, prefix));
                let reason = if as_written {
                    format!("matches the custom rule `{prefix}`: {}", r.description)
                } else {
                    let shown: Vec<&str> = (at..at + words.len()).map(word).collect();
                    format!(
                        "matches the custom rule `{prefix}` as the command runs (`{}`): {}",
                        crate::walk::head_of(&shown.join(" "), 200),
                        r.description
                    )
                };
                Some((custom_at + i, reason))
            })
            .collect();
        for (rule, reason) in found {
            self.cur.push(crate::walk::Finding {
                rule,
                reason,
                outside_write: false,
            });
        }
    }

    /// A command word the line defined as an alias runs the alias's value with the rest
    /// of the command after it (`alias g=git` then `g push origin main` is `git push
    /// origin main`): judged as that line too, the worse verdict winning. Any command
    /// word of that name counts, past a wrapper or after a value ending in a blank
    /// included, which is at least as strict as bash.
    fn expand_alias(&mut self, word: &str, args: &[Arg], inv: &Invocation) {
        let Some(value) = self.aliases.get(word).cloned() else {
            return;
        };
        if self.expanding.iter().any(|e| e == word) {
            return;
        }
        let Some(value) = value else {
            self.find(
                RuleId::DynamicProgram,
                format!("runs the alias `{word}`, whose value cannot be known before running"),
            );
            return;
        };
        // The arguments as the shell already made them, each quoted back into one word;
        // one whose value is not known reads an unset variable, which stays unknown.
        let mut line = value;
        let mut unknown = false;
        for a in &args[1..] {
            line.push(' ');
            if a.known {
                line.push_str(&crate::runner::shell_quote(&a.text));
            } else {
                unknown = true;
                line.push_str("\"${FENCE_ALIAS_UNKNOWN_ARGUMENT}\"");
            }
        }
        let saved = unknown.then(|| self.state.vars.clone());
        if unknown {
            self.state
                .vars
                .insert("FENCE_ALIAS_UNKNOWN_ARGUMENT".into(), None);
        }
        self.expanding.push(word.to_string());
        // What the command reads from a pipe, its expansion reads (`curl … | s` where
        // `alias s=sh`).
        self.stdin_pipe_in = inv.io.stdin_pipe;
        self.walk_nested(&line);
        self.stdin_pipe_in = false;
        self.expanding.pop();
        if let Some(vars) = saved {
            self.state.vars = vars;
        }
    }

    /// Judges the body of the function `name` again with the call's arguments as its
    /// positional parameters (`f(){ rm -rf "$1"; }; f /` deletes `/`).
    fn call_function(&mut self, name: &str, args: &[Arg]) {
        if self.calling.iter().any(|c| c == name) {
            return;
        }
        let Some(body) = self.function_bodies.get(name).cloned() else {
            return;
        };
        let params = std::iter::once(Some(name.to_string()))
            .chain(args[1..].iter().map(|a| a.known.then(|| a.text.clone())))
            .collect();
        let saved = self.state.clone();
        self.state.positional = Some(params);
        self.calling.push(name.to_string());
        self.walk_nested(&body);
        self.calling.pop();
        self.state = saved;
    }

    /// After a call of the function `name` defined in the line: the variables its body
    /// sets are no longer known (`x=cat; f(){ x=git; }; f; $x push`).
    fn forget_what_function_sets(&mut self, name: &str) {
        let Some(sets) = self.function_sets.get(name).cloned() else {
            return;
        };
        for var in sets {
            if var.is_empty() {
                let known: Vec<String> = self.state.vars.keys().cloned().collect();
                for v in known {
                    self.set_var(&v, None);
                }
                self.state.env_unknown = true;
            } else {
                self.set_var(&var, None);
                self.state.arrays.insert(var, None);
            }
        }
    }

    /// Judges the program `name` (`args[0]` as written) by what it is.
    fn judge_program(&mut self, name: &str, args: &[Arg], inv: &Invocation, depth: usize) {
        // Builtins that set what later words expand to (and are judged as any program).
        match name {
            "set" => self.set_positional(args),
            "shift" => self.shift_positional(args),
            "printf" => self.printf_to_variable(args),
            "read" => self.read_into_variables(args, inv),
            "unset" => {
                self.name_subscripts(name, args);
                self.unset_variables(args)
            }
            "mapfile" | "readarray" => self.map_lines_into_array(args, inv),
            "test" | "[" => self.test_subscripts(args),
            "declare" | "typeset" | "local" | "export" | "readonly" | "getopts" => {
                self.name_subscripts(name, args)
            }
            _ => {}
        }
        // A client printing the credential it keeps (`gcloud auth print-access-token`)
        // sends it nowhere by doing so: its own reach is not the line's.
        if NETWORK_PROGRAMS.contains(&name)
            && (name != "rsync" || args[1..].iter().any(|a| is_remote_spec(&a.text)))
            && !cloud_client_settings(name, args)
            && credential_printer(name, args).is_none()
        {
            self.cur_network = true;
        }
        if let Some(what) = credential_printer(name, args) {
            self.note_secret(what);
            // It prints a credential kept in a secret path: read as `cat` of it is.
            self.find(RuleId::SecretRead, format!("prints a credential: {what}"));
        }
        // What may set a variable without `set_var` seeing a value: a declaration without
        // one (`local D` empties D in a function), `wait -p D`; and what may set any
        // (`source`, `eval`): a guard on it no longer holds.
        match name {
            "local" | "declare" | "typeset" | "export" | "readonly" | "wait" | "read"
            | "mapfile" | "readarray" | "getopts" | "printf" => {
                for a in &args[1..] {
                    let n = a.text.split(['=', '[']).next().unwrap_or("");
                    self.guarded.retain(|g| g != n);
                }
            }
            "source" | "." | "eval" | "set" | "unset" => self.guarded.clear(),
            _ => {}
        }
        // `less '+!cmd' f`: a start-up command that runs a shell.
        if name == "less" {
            let commands: Vec<String> = args
                .iter()
                .skip(1)
                .filter(|a| a.known && a.text.contains('+'))
                .flat_map(|a| crate::walk::less_shell_commands(&a.text))
                .collect();
            for command in commands {
                self.shell_string(&Arg::literal(command), inv);
            }
        }
        match name {
            // Wrappers: judge what they run.
            "sudo" | "sudoedit" | "doas" | "pkexec" | "su" | "runuser" | "run0" | "gosu"
            | "su-exec" => self.priv_wrapper(name, args, inv, depth),
            "env" => self.env_wrapper(args, inv, depth),
            "timeout" => self.simple_wrapper(args, inv, depth, "sk", &["signal", "kill-after"], 1),
            "nice" => self.simple_wrapper(args, inv, depth, "n", &["adjustment"], 0),
            "nohup" | "setsid" | "unbuffer" | "chronic" | "catchsegv" | "builtin" | "nocache"
            | "eatmydata" | "with-contenv" => self.simple_wrapper(args, inv, depth, "", &[], 0),
            // Types a password (`-p PW`, `-f FILE`, `-d FD`, `-e` from $SSHPASS) into the
            // command it runs.
            "sshpass" => self.simple_wrapper(args, inv, depth, "pfdP", &[], 0),
            // Init shims for containers: start the command as the child they reap.
            "dumb-init" => self.simple_wrapper(args, inv, depth, "r", &["rewrite"], 0),
            "tini" => self.simple_wrapper(args, inv, depth, "pe", &[], 0),
            // Limit the bandwidth or CPU time of the command they start; cpulimit with a
            // pid, an executable's name or path limits a process already running instead.
            "trickle" => self.simple_wrapper(args, inv, depth, "duwtlnL", &[], 0),
            "cpulimit" => self.pid_or_command_wrapper(
                args,
                inv,
                depth,
                ("lpePc", &["limit", "pid", "exe", "path", "cpu"]),
                &[('p', "pid"), ('e', "exe"), ('P', "path")],
                PidMeans::NoCommand,
                0,
            ),
            // Task spooler: queues the command, which runs when its turn comes.
            "tsp" => self.simple_wrapper(args, inv, depth, "LDWN", &[], 0),
            // Run their command on the host, outside the container the line runs in: asked
            // for that, and judged by the command too.
            "flatpak-spawn" | "distrobox-host-exec" => {
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} runs a command outside the container"),
                );
                self.simple_wrapper(
                    args,
                    inv,
                    depth,
                    "",
                    &[
                        "env",
                        "unset-env",
                        "directory",
                        "forward-fd",
                        "app-path",
                        "usr-path",
                        "sandbox-expose",
                        "sandbox-expose-ro",
                        "sandbox-expose-path",
                        "sandbox-expose-path-ro",
                        "sandbox-expose-path-try",
                        "sandbox-expose-path-ro-try",
                        "sandbox-flag",
                    ],
                    0,
                )
            }
            // `capsh [OPTIONS] -- ARGS` runs `/bin/bash ARGS` with the capabilities and
            // ids its options set: `capsh -- -c 'CMD'` is `bash -c 'CMD'`.
            "capsh" => {
                if let Some(dashes) = args.iter().position(|a| a.text == "--") {
                    let mut bash = vec![Arg::literal("bash")];
                    bash.extend_from_slice(&args[dashes + 1..]);
                    self.judge_argv(&bash, inv, depth + 1);
                }
            }
            // Runs its command with other ids, groups, capabilities or limits.
            "setpriv" => self.simple_wrapper(
                args,
                inv,
                depth,
                "",
                &[
                    "ambient-caps",
                    "bounding-set",
                    "egid",
                    "euid",
                    "groups",
                    "inh-caps",
                    "pdeathsig",
                    "regid",
                    "reuid",
                    "rgid",
                    "ruid",
                    "securebits",
                    "selinux-label",
                    "apparmor-profile",
                    "landlock-access",
                    "landlock-rule",
                    "seccomp-filter",
                ],
                0,
            ),
            // Holds a systemd inhibitor lock while its command runs.
            "systemd-inhibit" => {
                self.simple_wrapper(args, inv, depth, "", &["what", "who", "why", "mode"], 0)
            }
            // Gives its command line editing.
            "rlwrap" => self.simple_wrapper(
                args,
                inv,
                depth,
                "bCDefFgHlOpPqsStwz",
                &[
                    "break-chars",
                    "command-name",
                    "history-no-dupes",
                    "extra-char-after-completion",
                    "file",
                    "history-format",
                    "forget-matching",
                    "history-filename",
                    "logfile",
                    "one-shot-rx",
                    "prompt-colour",
                    "pre-given",
                    "quote-characters",
                    "histsize",
                    "substitute-prompt",
                    "set-term-name",
                    "polling",
                    "filter",
                ],
                0,
            ),
            "stdbuf" => {
                self.simple_wrapper(args, inv, depth, "ioe", &["input", "output", "error"], 0)
            }
            // With a pid option chrt, ionice and taskset act on processes already running
            // and run nothing (`chrt -o -p 0 $$`, `taskset -p 3 1234`, `ionice -c3 -p 1 2`);
            // without one they run the command after their operands.
            "chrt" => self.pid_or_command_wrapper(
                args,
                inv,
                depth,
                ("TPD", &["sched-runtime", "sched-period", "sched-deadline"]),
                &[('p', "pid")],
                PidMeans::NoCommand,
                1,
            ),
            "valgrind" => {
                let outputs: Vec<&str> = args
                    .iter()
                    .skip(1)
                    .take_while(|a| a.text.starts_with('-'))
                    .filter_map(|a| a.text.split_once('=').map(|x| x.0))
                    .filter(|o| o.ends_with("-file"))
                    .collect();
                self.write_option_values(name, args, &outputs);
                self.simple_wrapper(args, inv, depth, "", &[], 0)
            }
            "time" => self.time_wrapper(args, inv, depth),
            "command" => self.command_wrapper(args, inv, depth),
            "exec" => self.simple_wrapper(args, inv, depth, "a", &[], 0),
            "ionice" => self.pid_or_command_wrapper(
                args,
                inv,
                depth,
                ("cnpPu", &["class", "classdata", "pid", "pgid", "uid"]),
                &[('p', "pid"), ('P', "pgid"), ('u', "uid")],
                PidMeans::NoCommand,
                0,
            ),
            "taskset" => self.pid_or_command_wrapper(
                args,
                inv,
                depth,
                ("", &[]),
                &[('p', "pid")],
                PidMeans::NoCommand,
                1,
            ),
            // strace -p PID may also start a command after it.
            "strace" | "ltrace" => self.pid_or_command_wrapper(
                args,
                inv,
                depth,
                ("eoOpPSsuXIbaE", &["output", "pid"]),
                &[('p', "pid")],
                PidMeans::CommandIfNamed,
                0,
            ),
            "prlimit" => self.simple_wrapper(args, inv, depth, "p", &["pid"], 0),
            "chroot" | "unshare" | "nsenter" | "firejail" => {
                self.namespace_wrapper(name, args, inv, depth)
            }
            // `sg GROUP -c CMD`, `sg GROUP CMD`: CMD is a string for /bin/sh.
            "sg" => {
                let rest: Vec<&Arg> = args.iter().skip(1).skip_while(|a| a.text == "-").collect();
                let cmd: Vec<&Arg> = match rest.get(1) {
                    Some(a) if a.text == "-c" => rest.iter().skip(2).copied().collect(),
                    _ => rest.iter().skip(1).copied().collect(),
                };
                if !cmd.is_empty() {
                    let joined = Arg {
                        text: cmd
                            .iter()
                            .map(|a| a.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                        known: cmd.iter().all(|a| a.known),
                        ..Arg::default()
                    };
                    self.shell_string(&joined, inv);
                }
            }
            "expect" => self.expect_spawns(args, inv),
            "flock" => self.flock_wrapper(args, inv, depth),
            "socat" => self.socat(args, inv, depth),
            "nc" | "ncat" | "netcat" => self.netcat(args, inv, depth),
            "watch" => self.watch_wrapper(args, inv, depth),
            "xargs" => self.xargs_wrapper(args, inv, depth),
            // The dynamic loader runs the program it is given (`ld.so /usr/bin/git push`):
            // judged as that program, past the loader's own options.
            loader if is_dynamic_loader(loader) => self.simple_wrapper(
                args,
                inv,
                depth,
                "",
                &[
                    "library-path",
                    "inhibit-rpath",
                    "audit",
                    "preload",
                    "argv0",
                    "glibc-hwcaps-prefix",
                    "glibc-hwcaps-mask",
                ],
                0,
            ),
            "busybox" | "toybox" => {
                if args.len() > 1 {
                    self.judge_argv(&args[1..], inv, depth + 1);
                }
            }
            // GNU's multicall binary: `coreutils --coreutils-prog=NAME ARGS` is `NAME ARGS`.
            "coreutils" => {
                if let Some(prog) = args
                    .get(1)
                    .and_then(|a| a.text.strip_prefix("--coreutils-prog="))
                {
                    let mut argv = vec![Arg {
                        text: prog.to_string(),
                        ..args[1].clone()
                    }];
                    argv.extend_from_slice(&args[2..]);
                    self.judge_argv(&argv, inv, depth + 1);
                }
            }
            "script" => self.script_wrapper(args, inv, depth),
            "trap" => {
                // `trap [-lpP] [--] [STRING SIGNAL…]`: the options only print; after
                // them (and `--`) the first word is the string run on the signals, unless
                // it is `-`, which resets them.
                let mut rest = &args[1..];
                let prints = |a: &Arg| {
                    a.text.len() > 1
                        && a.text.starts_with('-')
                        && a.text[1..].chars().all(|c| matches!(c, 'l' | 'p' | 'P'))
                };
                if rest.first().is_some_and(prints) {
                    return;
                }
                if rest.first().is_some_and(|a| a.text == "--") {
                    rest = &rest[1..];
                }
                if let Some(s) = rest.first().filter(|a| a.text != "-") {
                    let s = s.clone();
                    self.shell_string(&s, inv);
                }
            }
            "alias" => {
                // `alias x='rm -rf /'`: what the alias runs is judged where it
                // is defined, and again where it is used with its arguments
                // ([`Self::expand_alias`]).
                for a in args.iter().skip(1) {
                    if let Some((name, value)) = a.text.split_once('=') {
                        let v = Arg {
                            text: value.to_string(),
                            known: a.known,
                            ..Arg::default()
                        };
                        self.shell_string(&v, inv);
                        if !name.is_empty() && !name.contains(crate::word::UNKNOWN) {
                            self.aliases
                                .insert(name.to_string(), a.known.then(|| value.to_string()));
                        }
                    }
                }
            }
            "hash" => {
                // `hash -p PATH NAME…`: NAME runs the program at PATH from then on, as an
                // alias for it would.
                let mut path: Option<Arg> = None;
                let mut i = 1;
                while let Some(a) = args.get(i) {
                    match a.text.as_str() {
                        "-p" => {
                            path = args.get(i + 1).cloned();
                            i += 2;
                        }
                        "--" => {
                            i += 1;
                            break;
                        }
                        t if t.starts_with("-p") => {
                            path = Some(Arg {
                                text: t[2..].to_string(),
                                ..a.clone()
                            });
                            i += 1;
                        }
                        t if t.starts_with('-') => i += 1,
                        _ => break,
                    }
                }
                if let Some(path) = path {
                    for a in &args[i..] {
                        if !a.text.contains(crate::word::UNKNOWN) {
                            let value = crate::runner::shell_quote(&path.text);
                            self.aliases
                                .insert(a.text.clone(), path.known.then_some(value));
                        }
                    }
                }
                // The program's path is a path argument as any other (`hash -p /tmp/evil ls`).
                self.check_path_args(args, &[]);
            }
            "eval" => {
                // `eval "$(curl …)"` runs what the network sent, as `sh -c "$(curl …)"`.
                if inv.subs_network {
                    self.find(
                        RuleId::PipeToInterpreter,
                        "eval runs what a network program printed",
                    );
                }
                self.find(
                    RuleId::DynamicProgram,
                    "eval runs a string as a program: it cannot be identified before running",
                );
                // At exec the words are known: what they run is judged as `sh -c` judges
                // its string (`eval 'git push origin main'` in a script).
                if self.ctx == Context::Exec && args.len() > 1 && args[1..].iter().all(|a| a.known)
                {
                    let text = args[1..]
                        .iter()
                        .map(|a| a.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    self.shell_string(&Arg::literal(&text), inv);
                }
                self.check_path_args(args, &[]);
            }
            "source" | "." => self.source(args, inv),
            "cd" | "pushd" | "popd" => self.cd(name, args),
            "git" => self.git(args, inv, depth),
            "hub" => self.hub(args, inv, depth),
            // git's commands under their own names, as git's exec-path holds them and git
            // runs them (`/usr/lib/git-core/git-push origin main`, `git-send-pack`): judged
            // as `git push origin main`.
            dashed if dashed.len() > 4 && dashed.starts_with("git-") => {
                let mut as_git = vec![Arg::literal("git"), Arg::literal(&dashed[4..])];
                as_git.extend(args.iter().skip(1).cloned());
                self.git(&as_git, inv, depth);
            }
            "gh" => self.gh(args),
            "rm" | "rmdir" | "unlink" => self.rm(name, args),
            // Node's `rm -rf` (`npx rimraf dist`, `del-cli`): each operand deleted recursively.
            "rimraf" | "del-cli" | "del" => {
                let mut as_rm = vec![Arg::literal("rm"), Arg::literal("-rf"), Arg::literal("--")];
                as_rm.extend(
                    args[1..]
                        .iter()
                        .filter(|a| !a.text.starts_with('-'))
                        .cloned(),
                );
                self.rm(name, &as_rm);
            }
            // shelljs's commands on the command line (`npx shx rm -rf dist`).
            "shx" if args.len() > 1 && depth < MAX_WRAPPERS => {
                self.find(
                    RuleId::DefaultUnknown,
                    "shx runs a shell command of its own",
                );
                self.judge_argv(&args[1..], inv, depth + 1);
            }
            "find" => self.find_cmd(args, inv, depth),
            "dd" => self.dd(args),
            "kill" => self.kill(args),
            "ip" => self.ip(args),
            "ifconfig" | "route" => {
                if args.len() > 2 {
                    self.find(
                        RuleId::NetFirewall,
                        format!("{name} changes network configuration"),
                    );
                }
            }
            "sysctl" => {
                if args.iter().skip(1).any(|a| {
                    a.text == "-w" || a.text.contains('=') || a.text == "-p" || a.text == "--system"
                }) {
                    self.find(
                        RuleId::SysRootWrite,
                        "sysctl writes kernel settings under /proc/sys",
                    );
                }
            }
            "init" => {
                if args
                    .iter()
                    .skip(1)
                    .any(|a| matches!(a.text.as_str(), "0" | "6" | "1" | "s" | "S"))
                {
                    self.find(RuleId::SysServices, "init changes the runlevel");
                }
            }
            // Bare, it prints the whole environment; with names, only those variables
            // (`printenv HOME`), a credential when one of them is named as one.
            "printenv" => {
                let names: Vec<&Arg> = args[1..]
                    .iter()
                    .filter(|a| !a.text.starts_with('-'))
                    .collect();
                if names.is_empty() {
                    self.note_secret("printenv (the environment)");
                } else if let Some(n) = names
                    .iter()
                    .find(|a| !a.known || crate::walk::is_secret_variable(&a.text))
                {
                    self.note_secret(&format!("printenv {}", display_arg(n)));
                }
            }

            "let" => {
                // Each word is an arithmetic expression: its subscripts expand, and so
                // do those in the values of the variables it names.
                let mut noticed = crate::word::Noticed::default();
                for a in args.iter().skip(1) {
                    crate::word::scan_substitutions(&a.text, &mut noticed);
                    crate::word::scan_variable_values(&a.text, self, &mut noticed);
                }
                self.walk_noticed(noticed);
                self.find(RuleId::DefaultUnknown, "let evaluates arithmetic");
            }
            "set" | "export" | "declare" | "typeset" => {
                if args.len() == 1
                    || args
                        .iter()
                        .skip(1)
                        .all(|a| a.text == "-p" || a.text == "-x")
                {
                    self.note_secret(&format!("{name} (the environment)"));
                }
                for a in args.iter().skip(1) {
                    if let Some((var, value)) = a.text.split_once('=') {
                        let value = Arg {
                            text: value.to_string(),
                            known: a.known,
                            ..Arg::default()
                        };
                        self.judge_program_variable(var, &value);
                    }
                }
                self.check_path_args(args, &[]);
            }
            "apply_patch" | "applypatch" => self.apply_patch(args, inv),
            "patch" => self.patch_cmd(args, inv),
            "npx" | "bunx" | "pnpx" => {
                self.package_exec(args, depth);
                self.check_path_args(args, &[]);
            }
            "pre-commit" | "lefthook" | "husky" | "direnv" if hook_setup(name, args).is_some() => {
                let (file, what) = hook_setup(name, args).unwrap_or_default();
                let file = if let Some(rest) = file.strip_prefix("~/") {
                    match crate::word::Scope::home(self) {
                        Some(h) => Arg::literal(format!("{h}/{rest}")),
                        None => Arg::unknown(),
                    }
                } else {
                    Arg::literal(self.cls.worktree.join(file).display().to_string())
                };
                self.find(RuleId::DefaultUnknown, what);
                self.check_write_target(&file, true, name);
                self.check_path_args(args, &[]);
            }
            _ => {
                if self.command_runner(name, args, inv, depth) {
                    // A runner's own output files (`perf record -o FILE`), and the
                    // commands its options run (`gdb -ex 'shell CMD' --args …`).
                    self.option_programs(name, args, inv);
                    self.other_writer(name, args);
                } else {
                    self.program(name, args, inv, depth)
                }
            }
        }
    }

    /// `curl -n`, `--netrc`, `--netrc-optional` read the credentials in `~/.netrc` (and
    /// send them); `--netrc-file F` those in F.
    fn curl_netrc(&mut self, args: &[Arg]) {
        // curl's short options that take a value: a cluster ends at the first of them.
        const VALUE_LETTERS: &str = "AbcCdDeEFHKmoPQrtTuUwxXyYz";
        for (i, a) in args.iter().enumerate().skip(1) {
            let t = a.text.as_str();
            if t == "--" {
                break;
            }
            let short_n = t.starts_with('-')
                && !t.starts_with("--")
                && t[1..]
                    .chars()
                    .take_while(|c| !VALUE_LETTERS.contains(*c))
                    .any(|c| c == 'n');
            if short_n || t == "--netrc" || t == "--netrc-optional" {
                let netrc = match &self.cls.home {
                    Some(h) => h.join(".netrc").display().to_string(),
                    None => "~/.netrc".to_string(),
                };
                self.note_secret(&format!("{netrc} (curl {t})"));
            } else if let Some(file) = t
                .strip_prefix("--netrc-file=")
                .map(|f| Arg {
                    text: f.to_string(),
                    ..a.clone()
                })
                .or_else(|| {
                    (t == "--netrc-file")
                        .then(|| args.get(i + 1).cloned())
                        .flatten()
                })
            {
                self.note_secret(&format!("{} (curl --netrc-file)", display_arg(&file)));
            }
        }
    }

    /// Programs that are not wrappers, by family.
    fn program(&mut self, name: &str, args: &[Arg], inv: &Invocation, depth: usize) {
        if SHELLS.contains(&unversioned(name)) {
            return self.shell(name, args, inv);
        }
        if INTERPRETERS.contains(&unversioned(name)) || is_python(name) {
            return self.interpreter(name, args, inv, depth);
        }
        if READ_PROGRAMS.contains(&name) {
            // `--pre` runs a program on every file, `--hostname-bin` one for the name of
            // the host (ripgrep 14).
            let runs_program = name == "rg"
                && args.iter().any(|a| {
                    ["--pre", "--hostname-bin"].iter().any(|f| {
                        a.text == *f || a.text.strip_prefix(f).is_some_and(|r| r.starts_with('='))
                    })
                });
            let patterns = search_patterns(name, args, 1);
            let compiles = name == "file"
                && args.iter().any(|a| {
                    a.text == "--compile"
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('C'))
                });
            // `wc --files0-from=F`, `file -f F`: the names read come from F (or stdin),
            // and where they lead is not known before running.
            let names_from_file = args.iter().skip(1).any(|a| match name {
                "wc" => a.text.starts_with("--files0-from"),
                "file" => {
                    a.text == "--files-from"
                        || a.text.starts_with("--files-from=")
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('f'))
                }
                _ => false,
            });
            if compiles {
                self.cur_writes = true;
                self.find(
                    RuleId::DefaultUnknown,
                    "file -C writes a compiled magic file",
                );
            } else if runs_program {
                self.find(
                    RuleId::DefaultUnknown,
                    "rg --pre/--hostname-bin runs a program",
                );
                // The program it names, judged as run on its own: `--pre` gives it each
                // file's name, `--hostname-bin` nothing.
                for program in rg_programs(args) {
                    self.judge_argv(&[program], inv, depth + 1);
                }
            } else if names_from_file {
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} reads the names it reads from a file: where they lead is not known before running"),
                );
            } else if self.ctx == Context::Line
                && self.in_loop_over_judged == 0
                && reads_an_unknown_path(name, args, &patterns)
            {
                // In line context only: at an exec the words are the real ones, but for a
                // program a wrapper runs later with words from its input (`xargs cat`),
                // which is judged at its own exec, with them.
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} reads a path that is not known before running"),
                );
            } else {
                self.find(RuleId::ReadList, format!("{name} only reads"));
            }
            self.check_pattern_tokens(args, &patterns);
            if searches_the_cwd(name, args, &patterns, inv) {
                // `grep -r password` and `rg token` with no folder search the working
                // directory, as `grep -r password .` does: judged as that word.
                let implicit = [args[0].clone(), Arg::literal(".")];
                self.note_secret_holder(&implicit[1]);
                self.check_path_args(&implicit, &[]);
            }
            return self.check_path_args(args, &patterns);
        }
        if matches!(name, "ssh" | "scp" | "sftp") {
            self.ssh_local_commands(args, inv);
        }
        if name == "curl" {
            self.curl_netrc(args);
        }
        if FETCH_PROGRAMS.contains(&name) {
            self.find(RuleId::NetFetch, format!("{name} reaches the network"));
            return self.writer(name, args);
        }
        if PERM_PROGRAMS.contains(&name) {
            self.find(
                RuleId::PermChange,
                format!("{name} changes permissions or ownership"),
            );
            return self.writer(name, args);
        }
        if KILL_PROGRAMS.contains(&name) {
            self.find(RuleId::ProcKill, format!("{name} kills processes by name"));
            return self.check_path_args(args, &[]);
        }
        if SERVICE_PROGRAMS.contains(&name) {
            self.find(
                RuleId::SysServices,
                format!("{name} controls the machine, its services or scheduled jobs"),
            );
            return self.check_path_args(args, &[]);
        }
        // logind's own power and session actions: `loginctl reboot` is `reboot`.
        if name == "loginctl"
            && plain_words(args).first().is_some_and(|w| {
                matches!(
                    *w,
                    "reboot"
                        | "poweroff"
                        | "halt"
                        | "kexec"
                        | "suspend"
                        | "hibernate"
                        | "hybrid-sleep"
                        | "suspend-then-hibernate"
                        | "terminate-session"
                        | "terminate-user"
                        | "kill-session"
                        | "kill-user"
                )
            })
        {
            self.find(
                RuleId::SysServices,
                "loginctl controls the machine or its users' sessions",
            );
            return self.check_path_args(args, &[]);
        }
        if FIREWALL_PROGRAMS.contains(&name) {
            self.find(
                RuleId::NetFirewall,
                format!("{name} configures the firewall"),
            );
            return self.check_path_args(args, &[]);
        }
        if let Some(what) = disk_or_network_change(name, args) {
            self.find(what.0, what.1);
            return self.check_path_args(args, &[]);
        }
        if DISK_PROGRAMS.contains(&name) || name.starts_with("mkfs") || name.starts_with("fsck.") {
            self.find(
                RuleId::DiskTools,
                format!("{name} rewrites disks or filesystems"),
            );
            return self.check_path_args(args, &[]);
        }
        if is_pip(name) {
            return self.pip(args, 1);
        }
        match name {
            "awk" | "gawk" | "mawk" | "nawk" => self.awk(args, inv),
            "cp" | "mv" | "install" | "ln" | "touch" | "mkdir" | "truncate" | "tee" | "shred"
            | "mkfifo" | "mknod" | "sed" | "perl" | "rsync" | "tar" | "unzip" | "link"
            | "chattr" | "setfacl" | "sort" => {
                if matches!(name, "tar" | "rsync") {
                    self.option_programs(name, args, inv);
                }
                if name == "sed" {
                    self.sed_scripts(args, inv);
                }
                if name == "mkdir" {
                    self.note_made_dirs(args);
                }
                self.writer(name, args)
            }
            "apt" | "apt-get" | "aptitude" | "dpkg" | "dnf" | "yum" | "microdnf" | "pacman"
            | "brew" | "snap" | "zypper" | "apk" | "port" | "flatpak" | "emerge" | "nix-env"
            | "rpm" => self.system_packages(name, args),
            _ if environment_runner(name, args).is_some() => {
                // `uvx twine upload`, `poetry run twine upload`: the command it runs is
                // judged as if typed (a publish there is a publish).
                let at = environment_runner(name, args).unwrap_or(args.len());
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} runs a command in its environment"),
                );
                if at < args.len() && depth < MAX_WRAPPERS {
                    self.judge_argv(&args[at..], inv, depth + 1);
                }
                self.check_path_args(&args[..at.min(args.len())], &[]);
            }
            "npm" | "pnpm" | "yarn" | "bun" | "cargo" | "pipx" | "gem" | "go" | "uv"
            | "composer" | "twine" | "docker" | "podman" | "nerdctl" | "buildah"
            | "docker-compose" | "poetry" | "flit" | "hatch" | "helm" | "deno" | "volta"
            | "conda" | "mamba" | "micromamba" => {
                if matches!(
                    name,
                    "docker" | "podman" | "nerdctl" | "buildah" | "docker-compose"
                ) {
                    self.container_shell_strings(name, args);
                }
                self.dev_tool(name, args, depth)
            }

            _ if other_publisher(name, args) => {
                let words = plain_words(args);
                self.find(
                    RuleId::PkgPublish,
                    format!("{name} {} publishes a package", words.join(" ")),
                );
                self.check_path_args(args, &[]);
            }
            // NuGet's upload: `dotnet nuget push x.nupkg`, `nuget push x.nupkg`.
            "dotnet" | "nuget"
                if {
                    let words = plain_words(args);
                    (name == "dotnet" && words.starts_with(&["nuget", "push"]))
                        || (name == "nuget" && words.first() == Some(&"push"))
                } =>
            {
                let what = if name == "dotnet" {
                    "dotnet nuget push"
                } else {
                    "nuget push"
                };
                self.find(RuleId::PkgPublish, format!("{what} publishes a package"));
                self.check_path_args(args, &[]);
            }
            "sqlite3" | "sqlite" => self.sqlite(args, inv),
            "psql" | "mysql" | "mariadb" => self.sql_client(name, args, inv),
            "pytest" | "mypy" | "pyright" | "tsc" | "ruff" => {
                self.test_runner(name, args);
                if name == "tsc" {
                    self.write_option_values(
                        name,
                        args,
                        &[
                            "--outDir",
                            "--outFile",
                            "--declarationDir",
                            "--tsBuildInfoFile",
                        ],
                    );
                }
                self.check_path_args(args, &[]);
            }
            "make" | "cmake" | "ninja" | "meson" | "gradle" | "gradlew" | "mvn" | "bazel" => {
                self.cur_writes = true;
                self.option_programs(name, args, inv);
                if name == "make" {
                    // `make CC='…'`: a variable given to make names a program as the
                    // same variable in the environment does.
                    for a in args.iter().skip(1) {
                        if is_assignment(&a.text)
                            && let Some((var, value)) = a.text.split_once('=')
                        {
                            let value = Arg {
                                text: value.to_string(),
                                ..a.clone()
                            };
                            self.judge_program_variable(var, &value);
                        }
                    }
                }
                self.install_destination(name, args);
                if name == "cmake" {
                    // `cmake -B DIR` makes the build tree there.
                    self.write_option_values(name, args, &["-B"]);
                }
                self.check_path_args(args, &[]);
            }
            "rustfmt" | "prettier" | "black" | "gofmt" | "eslint" | "isort" | "clang-format"
            | "shfmt" | "autopep8" | "yapf" => {
                // Formatters: builds for plan mode, and in place they write
                // the files they are given.
                self.cur_writes = true;
                if !self.other_writer(name, args) {
                    self.check_path_args(args, &[]);
                }
            }
            _ => {
                if matches!(
                    name,
                    "kubectl" | "oc" | "lxc" | "incus" | "toolbox" | "distrobox" | "lima"
                ) {
                    self.container_shell_strings(name, args);
                }
                self.option_programs(name, args, inv);
                if !self.other_writer(name, args) {
                    let patterns = search_patterns(name, args, 1);
                    self.check_pattern_tokens(args, &patterns);
                    self.check_path_args(args, &patterns);
                }
            }
        }
    }

    /// Programs that write files named by their options or operands, and
    /// programs that rewrite the system's configuration: their targets go
    /// through the same check as every other write (a system root is
    /// refused). Returns false for a program that is none of these.
    fn other_writer(&mut self, name: &str, args: &[Arg]) -> bool {
        let has = |flags: &[&str]| {
            args.iter()
                .skip(1)
                .any(|a| flags.contains(&a.text.as_str()))
        };
        let short_flag = |c: char| {
            args.iter().skip(1).any(|a| {
                a.text.starts_with('-') && !a.text.starts_with("--") && a.text[1..].contains(c)
            })
        };
        if let Some(what) = system_config_writer(name, args) {
            self.cur_writes = true;
            self.find(RuleId::SysRootWrite, what);
            self.check_path_args(args, &[]);
            return true;
        }
        if let Some(dest) = copy_destination(name, args) {
            // `aws s3 cp s3://b/x /etc/x`, `kubectl cp pod:/x /etc/x`.
            self.cur_writes = true;
            let a = args[dest].clone();
            self.check_write_target(&a, true, name);
            self.check_path_args(args, &[dest]);
            return true;
        }
        if name == "protoc" {
            // `--go_out=DIR`, `--python_out=opts:DIR`.
            for a in args.iter().skip(1) {
                if let Some((flag, value)) = a.text.split_once('=')
                    && flag.starts_with("--")
                    && flag.ends_with("_out")
                {
                    let dir = value.rsplit(':').next().unwrap_or(value);
                    let t = self.expand_tilde(Arg {
                        text: dir.to_string(),
                        known: a.known,
                        home_based: dir.starts_with('~'),
                        ..Arg::default()
                    });
                    self.cur_writes = true;
                    self.check_write_target(&t, true, "protoc");
                }
            }
        }
        if matches!(name, "gpg" | "gpg2")
            && has(&["--export-secret-keys", "--export-secret-subkeys"])
        {
            self.note_secret("gpg --export-secret-keys (the private keyring)");
        }
        let outputs: &[&str] = match name {
            "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" | "tcc" | "ld" | "ld.lld"
            | "ld.gold" | "ld.bfd" | "lld" | "as" | "nasm" | "yasm" | "zig" | "shuf" | "gpg"
            | "gpg2" | "pandoc" | "zstd" | "dot" => &["-o", "--output"],
            "rustc" => &["-o", "--out-dir"],
            "iconv" => &["-o", "--output"],
            "strip" | "objcopy" => &["-o"],
            "openssl" => &["-out", "-keyout"],
            "csplit" => &["-f", "--prefix"],
            "cpio" => &["-D", "--directory"],
            "7z" | "7za" | "7zr" => &["-o"],
            "mktemp" => &["-p", "--tmpdir"],
            "aria2c" => &["-d", "--dir", "-o", "--out"],
            "webpack" => &["-o", "--output-path"],
            "perf" => &["-o", "--output"],
            "tcpdump" | "tshark" | "dumpcap" => &["-w"],
            "history" => &["-w", "-a"],
            "ftp" | "tftp" => &["-o"],
            "javac" => &["-d"],
            "esbuild" => &["--outfile", "--outdir"],
            "ssh-keygen" if !has(&["-l", "-y", "-F", "-R", "-B", "-Y", "-L"]) => &["-f"],
            // ssh's log file; less's copy of what it shows.
            "ssh" => &["-E"],
            "less" => &["-o", "-O", "--log-file", "--LOG-FILE"],
            _ => &[],
        };
        // Which operands are written: all, the last of two or more, or the
        // first.
        enum Ops {
            None,
            All,
            AllButFirst,
            AllButFirstTwo,
            Last,
            First,
            Second,
        }
        let first_op = || {
            args.iter()
                .skip(1)
                .find(|a| !a.text.starts_with('-'))
                .map(|a| a.text.as_str())
                .unwrap_or("")
        };
        let first_op_is = |words: &[&str]| words.contains(&first_op());
        let first_op_has = |letters: &[char]| first_op().contains(letters);
        let stdout_only = || {
            has(&[
                "-c",
                "--stdout",
                "--to-stdout",
                "-t",
                "--test",
                "-l",
                "--list",
            ])
        };
        let ops = match name {
            "ed" | "red" | "ex" | "vi" | "vim" | "nvim" | "nano" | "emacs" | "pico" | "micro"
            | "joe" | "kak" | "hx" | "mcedit"
                if !has(&["-R", "-M"]) =>
            {
                Ops::All
            }
            "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "unlzma"
            | "zstd" | "unzstd" | "compress" | "uncompress" | "lzip" | "pigz" | "pbzip2"
                if !stdout_only() && !has(&["-o", "--output"]) =>
            {
                Ops::All
            }
            "dos2unix" | "unix2dos" | "sponge" | "chcon" | "wipe" | "srm" => Ops::All,
            "strip" if !short_flag('o') => Ops::All,
            "objcopy" if !short_flag('o') => Ops::Last,
            "uniq" | "xxd" | "split" | "lz4" => Ops::Second,
            "rustfmt" if !has(&["--check"]) => Ops::All,
            "black" | "isort" if !has(&["--check", "--diff", "-c"]) => Ops::All,
            "prettier" if has(&["--write", "-w"]) => Ops::All,
            "gofmt" if has(&["-w"]) => Ops::All,
            "shfmt" if has(&["-w", "--write"]) => Ops::All,
            "clang-format" if has(&["-i"]) => Ops::All,
            "autopep8" | "yapf" if has(&["-i", "--in-place"]) => Ops::All,
            "eslint" if has(&["--fix"]) => Ops::All,
            "yq" if has(&["-i", "--inplace"]) => Ops::AllButFirst,
            "7z" | "7za" | "7zr" if first_op_is(&["a", "u", "d", "rn"]) => Ops::Second,
            "ar" if first_op_has(&['r', 'q', 'd', 'm']) => Ops::Second,
            "convert" | "magick" | "ffmpeg" | "sox" => Ops::Last,
            "zip" if !has(&["-sf", "--show-files", "-T", "--test"]) => Ops::First,
            "mount" if !has(&["-l", "--list"]) => Ops::Last,
            "setcap" => Ops::Last,
            "fallocate" | "setfattr" | "rename" | "prename" | "file-rename" => Ops::Last,
            // The `xattr` tool (macOS, python-xattr): `-w NAME VALUE FILE…`, `-d NAME FILE…`
            // and `-c FILE…` change the files' extended attributes.
            "xattr" if has(&["-w"]) => Ops::AllButFirstTwo,
            "xattr" if has(&["-d"]) => Ops::AllButFirst,
            "xattr" if has(&["-c"]) => Ops::All,
            // The template names where the file or folder is made, unless a folder option
            // places it (judged as that option's value) or it is only printed (`-u`).
            "mktemp" if !has(&["-u", "--dry-run", "-p", "--tmpdir", "-t"]) => Ops::All,
            // Each folder it names is made.
            "virtualenv" => Ops::All,
            "scp" | "sftp" => Ops::Last,
            // `cpio -p DIR` (pass-through) copies the names it reads into DIR.
            "cpio"
                if args.iter().skip(1).any(|a| {
                    a.text == "--pass-through"
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('p'))
                }) =>
            {
                Ops::Last
            }
            _ if outputs.is_empty() => return false,
            _ => Ops::None,
        };
        let spec = OptSpec {
            short_arg: match name {
                "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" => "oIDLlxubU",
                "split" => "abCln",
                "uniq" => "fsw",
                "xxd" => "cglnos",
                "zip" => "bntx",
                "mount" => "toOLU",
                "fallocate" => "lon",
                "setfattr" => "nvx",
                "scp" => "cFiJloPS",
                "ssh-keygen" => "bCfNtm",
                "csplit" => "fbn",
                "iconv" => "fto",
                "cpio" => "DFEHIORMC",
                _ => "o",
            },
            long_arg: &["output", "prefix", "directory", "tmpdir", "out-dir"],
            permute: true,
        };
        let p = opts::parse(args, 1, &spec);
        let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
        let editor_files = crate::editor::files(crate::editor::canonical(name), &words);
        let mut targets: Vec<usize> = match ops {
            // An editor's files, not its options' values nor its `+` commands; and what its
            // options themselves write.
            Ops::All if let Some((edited, written)) = &editor_files => {
                edited.iter().chain(written).copied().collect()
            }
            Ops::None => Vec::new(),
            Ops::All => p.operands.clone(),
            Ops::AllButFirst => p.operands.iter().skip(1).copied().collect(),
            Ops::AllButFirstTwo => p.operands.iter().skip(2).copied().collect(),
            Ops::Last
                if p.operands.len() >= 2
                    || !matches!(
                        name,
                        "scp" | "sftp" | "mount" | "convert" | "magick" | "ffmpeg" | "sox"
                    ) =>
            {
                p.operands.last().copied().into_iter().collect()
            }
            Ops::Last => Vec::new(),
            Ops::First => p.operands.first().copied().into_iter().collect(),
            Ops::Second => p.operands.get(1).copied().into_iter().collect(),
        };
        if matches!(name, "scp" | "sftp") {
            // A remote destination is not written here.
            targets.retain(|&i| !is_remote_spec(&args[i].text));
        }
        self.cur_writes |= !targets.is_empty();
        for &i in &targets {
            let a = args[i].clone();
            self.check_write_target(&a, true, name);
        }
        self.write_option_values(name, args, outputs);
        self.check_path_args(args, &targets);
        true
    }

    /// `sqlite3 [OPTIONS] [FILE] [SQL…]`: the database file is opened for writing (made
    /// when missing, and written by any statement that changes it) unless `-readonly`.
    fn sqlite(&mut self, args: &[Arg], inv: &Invocation) {
        // Its options are single-dash words; these take the next word as their value.
        const VALUE_OPTIONS: &[&str] = &[
            "-cmd",
            "-init",
            "-separator",
            "-newline",
            "-nullvalue",
            "-vfs",
            "-maxsize",
            "-mmap",
            "-lookaside",
            "-pagecache",
            "-heap",
            "-escape",
        ];
        let mut db = None;
        let mut i = 1;
        while let Some(a) = args.get(i) {
            let option = a.text.trim_start_matches('-');
            if a.text.starts_with('-') && VALUE_OPTIONS.contains(&format!("-{option}").as_str()) {
                i += 2;
            } else if a.text.starts_with('-') {
                i += 1;
            } else {
                db = Some(i);
                break;
            }
        }
        self.find(
            RuleId::DefaultUnknown,
            "sqlite3 runs SQL on a database file",
        );
        let read_only = args
            .iter()
            .any(|a| matches!(a.text.as_str(), "-readonly" | "--readonly"));
        let targets: Vec<usize> = db
            .filter(|&i| !read_only && !matches!(args[i].text.as_str(), "" | ":memory:"))
            .into_iter()
            .collect();
        for &i in &targets {
            self.cur_writes = true;
            let a = args[i].clone();
            self.check_write_target(&a, true, "sqlite3");
        }
        // The SQL after the file is no path.
        let sql: Vec<usize> = db
            .map(|d| (d + 1..args.len()).collect())
            .unwrap_or_default();
        let skip: Vec<usize> = targets.iter().chain(&sql).copied().collect();
        self.check_path_args(args, &skip);
        // Its dot-commands, in the SQL words, in `-cmd` values and in what it reads on
        // stdin: `.shell`/`.system` run a line of shell, `.output`/`.once` write a file
        // (or pipe into a command: `.once '|sh'`).
        let mut texts: Vec<String> = sql
            .iter()
            .map(|&i| &args[i])
            .chain(
                args.windows(2)
                    .filter(|w| w[0].text == "-cmd")
                    .map(|w| &w[1]),
            )
            .filter(|a| a.known)
            .map(|a| a.text.clone())
            .collect();
        texts.extend(
            inv.io
                .heredoc
                .clone()
                .or_else(|| {
                    inv.io
                        .herestring
                        .as_ref()
                        .and_then(|h| h.value().map(str::to_string))
                })
                .or_else(|| inv.io.piped.clone()),
        );
        for line in texts.iter().flat_map(|t| t.lines()) {
            self.sqlite_dot_command(line.trim_start(), inv);
        }
    }

    /// psql, mysql: the commands they are given (`-c`/`--command`, `-e`/`--execute`)
    /// and read on stdin may escape to a shell (`\! CMD`, mysql's `system CMD`) or send
    /// output into a command (`\o |CMD`).
    fn sql_client(&mut self, name: &str, args: &[Arg], inv: &Invocation) {
        self.find(
            RuleId::DefaultUnknown,
            format!("{name} runs commands on a database"),
        );
        let (short, long) = if name == "psql" {
            ("-c", "--command")
        } else {
            ("-e", "--execute")
        };
        let mut texts: Vec<Arg> = Vec::new();
        for (i, a) in args.iter().enumerate().skip(1) {
            if a.text == short || a.text == long {
                texts.extend(args.get(i + 1).cloned());
            } else if let Some(v) = a
                .text
                .strip_prefix(long)
                .and_then(|r| r.strip_prefix('='))
                .or_else(|| a.text.strip_prefix(short).filter(|r| !r.is_empty()))
            {
                texts.push(Arg {
                    text: v.to_string(),
                    ..a.clone()
                });
            }
        }
        let mut lines: Vec<String> = Vec::new();
        for t in &texts {
            if !t.known {
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} runs commands that cannot be known before running"),
                );
                continue;
            }
            lines.extend(t.text.lines().map(str::to_string));
        }
        let stdin = written_stdin(inv).or_else(|| inv.io.piped.clone());
        lines.extend(stdin.iter().flat_map(|t| t.lines().map(str::to_string)));
        for line in &lines {
            let l = line.trim_start();
            let shell = l.strip_prefix("\\!").or_else(|| {
                (name != "psql")
                    .then(|| l.strip_prefix("system "))
                    .flatten()
            });
            if let Some(cmd) = shell {
                self.shell_string(&Arg::literal(cmd.trim()), inv);
            } else if let Some(rest) = l.strip_prefix("\\o").or_else(|| l.strip_prefix("\\g"))
                && let Some(cmd) = rest.trim().strip_prefix('|')
            {
                self.shell_string(&Arg::literal(cmd.trim()), inv);
            }
        }
        self.check_path_args(args, &[]);
    }

    /// One line sqlite3 reads that may be a dot-command.
    fn sqlite_dot_command(&mut self, line: &str, inv: &Invocation) {
        let Some((cmd, rest)) = line.split_once(char::is_whitespace) else {
            return;
        };
        let rest = rest.trim();
        let unquoted = rest
            .strip_prefix('\'')
            .and_then(|r| r.strip_suffix('\''))
            .or_else(|| rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
            .unwrap_or(rest);
        match cmd {
            ".shell" | ".system" => self.shell_string(&Arg::literal(unquoted), inv),
            ".output" | ".once" | ".save" | ".backup" => {
                let target = unquoted
                    .split_whitespace()
                    .rfind(|w| !w.starts_with('-'))
                    .unwrap_or_default();
                if let Some(command) = unquoted.strip_prefix('|') {
                    self.shell_string(&Arg::literal(command), inv);
                } else if !target.is_empty() {
                    self.cur_writes = true;
                    self.check_write_target(&Arg::literal(target), true, "sqlite3");
                }
            }
            _ => {}
        }
    }

    /// Where a build's install step writes: `make install PREFIX=/usr`,
    /// `make install DESTDIR=/`, `cmake --install . --prefix /usr`,
    /// `meson install --destdir /`.
    fn install_destination(&mut self, name: &str, args: &[Arg]) {
        let installs = args.iter().skip(1).any(|a| {
            a.text == "install" || a.text.starts_with("install-") || a.text == "--install"
        });
        // A build writes where it runs: `make -C DIR`, or a `cd` out of the
        // worktree before it.
        if matches!(name, "make" | "ninja" | "meson") {
            let p = opts::parse(
                args,
                1,
                &OptSpec {
                    short_arg: "CfIjloW",
                    long_arg: &["directory", "file", "makefile", "include-dir"],
                    permute: true,
                },
            );
            if name == "meson"
                && let Some(&first) = p.operands.first()
            {
                // `meson setup BUILDDIR [SOURCEDIR]` (and the older `meson BUILDDIR`): the
                // build folder is made and written.
                let builddir = if args[first].text == "setup" {
                    p.operands.get(1).copied()
                } else if matches!(
                    args[first].text.as_str(),
                    "compile"
                        | "test"
                        | "install"
                        | "configure"
                        | "introspect"
                        | "dist"
                        | "init"
                        | "wrap"
                        | "subprojects"
                        | "rewrite"
                        | "devenv"
                        | "env2mfile"
                        | "format"
                        | "fmt"
                        | "help"
                ) {
                    None
                } else {
                    Some(first)
                };
                if let Some(b) = builddir {
                    let b = args[b].clone();
                    self.check_write_target(&b, true, "meson setup");
                }
            }
            if let Some(d) = p.value_of('C', "directory").cloned() {
                self.check_write_target(&d, true, name);
            } else if self
                .cwd_path()
                .is_some_and(|c| !c.starts_with(&self.cls.worktree))
            {
                self.check_write_target(&Arg::literal("."), true, name);
            }
        }
        if !installs {
            return;
        }
        for a in args.iter().skip(1) {
            if let Some((var, value)) = a.text.split_once('=')
                && !var.starts_with('-')
                && (var.eq_ignore_ascii_case("prefix")
                    || var.eq_ignore_ascii_case("destdir")
                    || var.ends_with("DIR")
                    || var.ends_with("dir"))
                && !value.is_empty()
            {
                let v = self.expand_tilde(Arg {
                    text: value.to_string(),
                    known: a.known,
                    home_based: value.starts_with('~'),
                    ..Arg::default()
                });
                self.check_write_target(&v, true, &format!("{name} install"));
            }
        }
        self.write_option_values(name, args, &["--prefix", "--destdir"]);
    }

    /// Judges as writes the values of `outputs` (`-o FILE`, `-oFILE`,
    /// `--output FILE`, `--output=FILE`, `-out FILE`).
    fn write_option_values(&mut self, name: &str, args: &[Arg], outputs: &[&str]) {
        for (i, a) in args.iter().enumerate().skip(1) {
            for o in outputs {
                let attached = a.text.strip_prefix(o).and_then(|v| {
                    if o.starts_with("--") || o.len() > 2 {
                        v.strip_prefix('=')
                    } else {
                        Some(v).filter(|v| !v.is_empty())
                    }
                });
                let value = if a.text == *o {
                    args.get(i + 1).cloned()
                } else {
                    attached.map(|v| Arg {
                        text: v.to_string(),
                        known: a.known,
                        home_based: v.starts_with('~'),
                        ..Arg::default()
                    })
                };
                // A short option's value written with `=` (`go build -o=/usr/bin/x`): Go's
                // flags take what follows the `=`, getopt's the whole; both are judged.
                let unequalled = value.as_ref().and_then(|v| {
                    let rest = v.text.strip_prefix('=').filter(|_| a.text != *o)?;
                    Some(Arg {
                        text: rest.to_string(),
                        home_based: rest.starts_with('~'),
                        ..v.clone()
                    })
                });
                for v in value.into_iter().chain(unequalled) {
                    if v.text == "-" {
                        continue;
                    }
                    let v = self.expand_tilde(v);
                    self.cur_writes = true;
                    self.check_write_target(&v, true, name);
                }
            }
        }
    }

    // --- wrappers -------------------------------------------------------

    /// A wrapper whose options end at the command it runs, after `skip`
    /// positional words of its own (a duration, a priority, a mask).
    fn simple_wrapper(
        &mut self,
        args: &[Arg],
        inv: &Invocation,
        depth: usize,
        short_arg: &'static str,
        long_arg: &'static [&'static str],
        skip: usize,
    ) {
        let p = leading_options(args, short_arg, long_arg);
        let start = p.first_operand + skip;
        if start < args.len() {
            self.judge_argv(&args[start..], inv, depth + 1);
        }
    }

    /// `chroot NEWROOT CMD`, `unshare [--root DIR] [--wd DIR] CMD`, `nsenter [-t PID] … CMD`,
    /// `firejail CMD`: none is a wrapper SPEC §2 lets through (green is a closed list), so
    /// each is asked for itself (`nsenter -t 1 -m` enters another process's namespaces), and
    /// its command is judged too, in the folder it starts it in, as `cd` would be: a new
    /// root is taken for the same root, the stricter reading (`chroot / rm -rf usr` removes
    /// `/usr`; `chroot /srv/r rm -rf /etc` is judged as removing `/etc`).
    fn namespace_wrapper(&mut self, name: &str, args: &[Arg], inv: &Invocation, depth: usize) {
        let (short_arg, long_arg): (&'static str, &'static [&'static str]) = match name {
            "chroot" => ("", &["userspec", "groups"]),
            "unshare" => (
                "SGRw",
                &[
                    "setuid",
                    "setgid",
                    "root",
                    "wd",
                    "propagation",
                    "map-user",
                    "map-group",
                    "map-users",
                    "map-groups",
                    "load-interp",
                ],
            ),
            // `-r`/`-w` take their folder only attached (`-r/srv`, `--wd=/srv`); `-W` always.
            "nsenter" => ("tSGW", &["target", "setuid", "setgid", "wdns"]),
            _ => ("", &[]),
        };
        let p = leading_options(args, short_arg, long_arg);
        self.find(
            RuleId::DefaultUnknown,
            format!("{name} runs a command with another root or in other namespaces"),
        );
        let saved_cwd = self.state.cwd.clone();
        let mut start = p.first_operand;
        match name {
            "chroot" => {
                if let Some(root) = args.get(start).cloned() {
                    self.enter_folder(&root, "chroot");
                    start += 1;
                }
            }
            "unshare" => {
                for (short, long) in [('R', "root"), ('w', "wd")] {
                    if let Some(dir) = p.value_of(short, long).cloned() {
                        self.enter_folder(&dir, &format!("unshare --{long}"));
                    }
                }
            }
            "nsenter" => {
                if let Some(dir) = p.value_of('W', "wdns").cloned() {
                    self.enter_folder(&dir, "nsenter --wdns");
                }
                for a in &args[1..p.first_operand.min(args.len())] {
                    let t = a.text.as_str();
                    // `--root=DIR`, `--wd=DIR` and their abbreviations (`--r=DIR`), or a
                    // folder attached to `-r`/`-w` among other single-letter flags
                    // (`-Fw/srv`).
                    let dir = if let Some((name, dir)) =
                        t.strip_prefix("--").and_then(|l| l.split_once('='))
                    {
                        (opts::abbreviates(name, "root") || opts::abbreviates(name, "wd"))
                            .then_some(dir)
                    } else if let Some(flags) = t.strip_prefix('-').filter(|f| !f.starts_with('-'))
                    {
                        // Flags without a value (`-a`, `-F`, `-Z`, `-e`) may come first; a
                        // namespace flag's attached text is a file, not a folder.
                        flags
                            .char_indices()
                            .find(|&(_, c)| !matches!(c, 'a' | 'F' | 'Z' | 'e'))
                            .filter(|&(_, c)| matches!(c, 'r' | 'w'))
                            .map(|(at, _)| &flags[at + 1..])
                    } else {
                        None
                    };
                    if let Some(dir) = dir.filter(|d| !d.is_empty()) {
                        let dir = Arg {
                            text: dir.to_string(),
                            ..a.clone()
                        };
                        self.enter_folder(&dir, "nsenter");
                    }
                }
            }
            _ => {}
        }
        if start < args.len() {
            self.judge_argv(&args[start..], inv, depth + 1);
        }
        self.state.cwd = saved_cwd;
    }

    /// `expect -c SCRIPT`: a Tcl script whose `spawn [OPTIONS] PROGRAM ARGS` starts a
    /// program; each `spawn` statement (split at `;` and line ends) is judged as a line of
    /// its own (`expect -c 'spawn git push origin main'` pushes to main). What the script
    /// sends to the program is not read; a script from a file is not known, and expect is
    /// asked about as any program off the list of reads.
    fn expect_spawns(&mut self, args: &[Arg], inv: &Invocation) {
        for (i, a) in args.iter().enumerate().skip(1) {
            if a.text != "-c" {
                continue;
            }
            let Some(script) = args.get(i + 1) else {
                continue;
            };
            for statement in script.text.split(['\n', ';']) {
                let mut words = statement.split_whitespace();
                if words.next() != Some("spawn") {
                    continue;
                }
                let command: Vec<&str> = words.skip_while(|w| w.starts_with('-')).collect();
                if !command.is_empty() {
                    let line = Arg {
                        text: command.join(" "),
                        ..script.clone()
                    };
                    self.shell_string(&line, inv);
                }
            }
        }
    }

    /// A wrapper that starts its command in folder `dir` (`env -C`, `sudo -D`, `chroot`…),
    /// judged as `cd DIR` is (SPEC §2: a `cd` out of the worktree is red, and so is one
    /// whose folder cannot be worked out before running); the command's paths are then
    /// placed against it. The caller puts its own cwd back after the command.
    fn enter_folder(&mut self, dir: &Arg, what: &str) {
        self.state.cwd = match self.resolve_arg(dir, true) {
            Loc::Inside { path, .. } => Cwd::At(path),
            Loc::Outside(path) => {
                self.find(
                    RuleId::CdOutside,
                    format!(
                        "{what} runs its command outside the worktree: {}",
                        path.display()
                    ),
                );
                Cwd::At(path)
            }
            Loc::Unknown => {
                self.find(
                    RuleId::CdOutside,
                    format!(
                        "{what} {}: the folder cannot be worked out before running",
                        display_arg(dir)
                    ),
                );
                Cwd::Unknown
            }
        };
    }

    #[allow(clippy::too_many_arguments)]
    fn pid_or_command_wrapper(
        &mut self,
        args: &[Arg],
        inv: &Invocation,
        depth: usize,
        (short_arg, long_arg): (&'static str, &'static [&'static str]),
        pid_opts: &[(char, &str)],
        pid_means: PidMeans,
        skip: usize,
    ) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg,
                long_arg,
                permute: false,
            },
        );
        let on_pids = pid_opts.iter().any(|(short, long)| p.has(*short, long));
        let runs_nothing = match pid_means {
            PidMeans::NoCommand => on_pids,
            PidMeans::CommandIfNamed => on_pids && p.first_operand + skip >= args.len(),
        };
        if runs_nothing {
            return self.check_path_args(args, &[]);
        }
        if let Some(o) = p.value_of('o', "output")
            && (args[0].text.ends_with("strace") || args[0].text.ends_with("ltrace"))
        {
            let o = o.clone();
            self.check_write_target(&o, true, "trace output");
        }
        let start = p.first_operand + skip;
        if start < args.len() {
            self.judge_argv(&args[start..], inv, depth + 1);
        }
    }

    fn priv_wrapper(&mut self, name: &str, args: &[Arg], inv: &Invocation, depth: usize) {
        self.find(RuleId::PrivElevate, format!("{name} elevates privileges"));
        match name {
            // `gosu USER CMD…`, `su-exec USER[:GROUP] CMD…`: sudo without its options.
            "gosu" | "su-exec" => {
                if args.len() > 2 {
                    self.judge_argv(&args[2..], inv, depth + 1);
                }
            }
            "su" | "runuser" => {
                let p = opts::parse(
                    args,
                    1,
                    &OptSpec {
                        short_arg: "cgGsuCw",
                        long_arg: &[
                            "command",
                            "group",
                            "supp-group",
                            "shell",
                            "user",
                            "session-command",
                            "whitelist-environment",
                        ],
                        permute: true,
                    },
                );
                if let Some(c) = p
                    .value_of('c', "command")
                    .or_else(|| p.value_of('C', "session-command"))
                    .cloned()
                {
                    self.shell_string(&c, inv);
                } else if name == "runuser" && p.has('u', "user") && p.first_operand < args.len() {
                    // `runuser -u USER CMD…`
                    let start = p.operands.first().copied().unwrap_or(args.len());
                    if start < args.len() {
                        self.judge_argv(&args[start..], inv, depth + 1);
                    }
                } else if let Some(shell_args) = su_shell_arguments(args, &p.operands)
                    .filter(|_| name == "su" || !p.has('u', "user"))
                {
                    // `su -- root -c 'CMD'`, `su root -- -c 'CMD'`: the words after the
                    // user go to the user's shell, which runs `-c CMD` as `bash -c` does.
                    let mut bash = vec![Arg::literal("bash")];
                    bash.extend(shell_args);
                    self.judge_argv(&bash, inv, depth + 1);
                } else {
                    // `su - <<EOF`: the user's shell reads its program from stdin.
                    self.elevated_shell_stdin(inv);
                }
            }
            _ => {
                let spec = match name {
                    "sudo" | "sudoedit" => OptSpec {
                        short_arg: "ugpCDrtUTRh",
                        long_arg: &[
                            "user",
                            "group",
                            "prompt",
                            "close-from",
                            "chdir",
                            "role",
                            "type",
                            "other-user",
                            "command-timeout",
                            "chroot",
                            "host",
                        ],
                        permute: false,
                    },
                    "doas" => OptSpec {
                        short_arg: "uC",
                        ..OptSpec::default()
                    },
                    // systemd's `run0 [OPTIONS] [CMD…]`; without a command, a shell.
                    "run0" => OptSpec {
                        short_arg: "ugD",
                        long_arg: &[
                            "user",
                            "group",
                            "chdir",
                            "unit",
                            "property",
                            "description",
                            "slice",
                            "nice",
                            "setenv",
                            "background",
                            "machine",
                        ],
                        permute: false,
                    },
                    _ => OptSpec {
                        long_arg: &["user"],
                        ..OptSpec::default()
                    },
                };
                let p = opts::parse(args, 1, &spec);
                // `sudo VAR=value cmd`
                let mut start = p.first_operand;
                while start < args.len() && is_assignment(&args[start].text) {
                    start += 1;
                }
                if name == "sudoedit" || (name == "sudo" && p.has('e', "edit")) {
                    for a in args.iter().skip(start).cloned().collect::<Vec<_>>() {
                        self.check_write_target(&a, true, "sudoedit");
                    }
                    return;
                }
                if start < args.len() {
                    // `sudo -D DIR CMD` runs CMD in DIR, as `env -C DIR` does.
                    let saved_cwd = self.state.cwd.clone();
                    if matches!(name, "sudo" | "run0")
                        && let Some(dir) = p.value_of('D', "chdir").cloned()
                    {
                        self.enter_folder(&dir, &format!("{name} -D"));
                    }
                    self.judge_argv(&args[start..], inv, depth + 1);
                    self.state.cwd = saved_cwd;
                } else if name != "sudo" || p.has('s', "shell") || p.has('i', "login") {
                    // `sudo -s <<EOF`, `doas <<EOF`: a shell that reads its
                    // program from stdin.
                    self.elevated_shell_stdin(inv);
                }
            }
        }
    }

    /// A shell started by a privilege wrapper without a command: it runs
    /// what arrives on stdin, like `sh` would.
    fn elevated_shell_stdin(&mut self, inv: &Invocation) {
        if inv.io.stdin_pipe || inv.io.heredoc.is_some() || inv.io.herestring.is_some() {
            self.stdin_program("sh", inv);
        }
    }

    fn env_wrapper(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let spec = OptSpec {
            short_arg: "uCSaP",
            long_arg: &["unset", "chdir", "split-string", "argv0"],
            permute: false,
        };
        // `env -S STRING`: GNU env puts the string's words where the option was and reads
        // its options again from there, so the words after the string are the program's
        // (`env -S bash -c 'rm -rf ~'` runs `bash -c 'rm -rf ~'`), and the string may hold
        // env's own options and assignments first (`env -S 'A=1 -u X git push'`).
        if let Some(found) = opts::find_option(args, 1, &spec, 'S', "split-string") {
            let Some(text) = found.value.as_ref().and_then(Arg::value) else {
                self.find(
                    RuleId::DynamicProgram,
                    "env -S with a string built at run time: the program cannot be identified",
                );
                return;
            };
            let Some(split) = env_split_string(text) else {
                self.find(
                    RuleId::ParseError,
                    "env -S: the string's quotes are not closed",
                );
                return;
            };
            let mut words: Vec<Arg> = args[..found.at].to_vec();
            words.extend(found.before.as_deref().map(Arg::literal));
            words.extend(split.iter().map(|w| self.env_split_word(w)));
            words.extend_from_slice(&args[found.next..]);
            if depth < MAX_WRAPPERS {
                self.env_wrapper(&words, inv, depth + 1);
            } else {
                self.find(RuleId::TooComplex, "env -S nested too deep to be judged");
            }
            return;
        }
        let p = opts::parse(args, 1, &spec);
        let mut start = p.first_operand;
        // A lone `-` after the options is `-i` (coreutils and BSD env), not the program.
        if args.get(start).is_some_and(|a| a.text == "-") {
            start += 1;
        }
        while start < args.len() && is_assignment(&args[start].text) {
            start += 1;
        }
        // `env NAME=v prog`: the assignments are the program's environment, as
        // `NAME=v prog` in the line would make them (a name whose value is not known
        // stays unknown).
        let assignments = &args[p.first_operand.min(start)..start];
        let saved_vars = (!assignments.is_empty()).then(|| self.state.vars.clone());
        for a in assignments {
            if let Some((name, value)) = a.text.split_once('=') {
                let value_arg = Arg {
                    text: value.to_string(),
                    ..a.clone()
                };
                self.judge_command_assignment(name, &value_arg);
                self.state
                    .vars
                    .insert(name.to_string(), a.known.then(|| value.to_string()));
            }
        }
        let saved_cwd = self.state.cwd.clone();
        if let Some(dir) = p.value_of('C', "chdir").cloned() {
            self.enter_folder(&dir, "env -C");
        }
        if start < args.len() {
            self.judge_argv(&args[start..], inv, depth + 1);
        } else {
            self.note_secret("env (the environment)");
        }
        self.state.cwd = saved_cwd;
        if let Some(v) = saved_vars {
            self.state.vars = v;
        }
    }

    /// A word of `env -S`'s string (as [`env_split_string`] left it): env expands `${NAME}` there (not `~`,
    /// not `$NAME`). A variable with no known value makes the word unknown.
    fn env_split_word(&self, w: &str) -> Arg {
        use crate::word::Scope;
        let mut text = String::new();
        let mut known = true;
        let mut assumed = false;
        let mut rest = w;
        while let Some(at) = rest.find("${") {
            text.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(end) = after.find('}') else {
                text.push_str(&rest[at..]);
                rest = "";
                break;
            };
            let name = &after[..end];
            match self.var(name) {
                Some(v) => {
                    assumed |= self.set_by_environment(name);
                    text.push_str(&v);
                }
                None => {
                    known = false;
                    text.push(UNKNOWN);
                }
            }
            rest = &after[end + 1..];
        }
        text.push_str(rest);
        Arg {
            text,
            known,
            assumed,
            ..Arg::default()
        }
    }

    fn time_wrapper(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "fo",
                long_arg: &["format", "output"],
                permute: false,
            },
        );
        if let Some(o) = p.value_of('o', "output").cloned() {
            self.check_write_target(&o, true, "time -o");
        }
        if p.first_operand < args.len() {
            self.judge_argv(&args[p.first_operand..], inv, depth + 1);
        }
    }

    fn command_wrapper(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let p = opts::parse(args, 1, &OptSpec::default());
        if p.has('v', "") || p.has('V', "") {
            // A lookup, like `which`: nothing runs.
            self.find(RuleId::DefaultUnknown, "command -v looks a program up");
            return;
        }
        if p.first_operand < args.len() {
            self.judge_argv(&args[p.first_operand..], inv, depth + 1);
        }
    }

    /// socat's two addresses: a file (`FILE:`, `OPEN:`, `CREATE:`, `GOPEN:`, or a bare
    /// path) is read, and written unless `-u`/`-U` makes data flow the other way; a
    /// program (`EXEC:ARGV`, `SYSTEM:SHELL-STRING`) is judged as run with the other
    /// address, often a socket, as its stdin.
    fn socat(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let mut addresses: Vec<&Arg> = Vec::new();
        let (mut forward, mut backward) = (false, false);
        let mut i = 1;
        while i < args.len() {
            let t = args[i].text.as_str();
            if t.len() > 1 && t.starts_with('-') && addresses.is_empty() {
                match t {
                    "-u" => forward = true,
                    "-U" => backward = true,
                    // Options with a value.
                    "-b" | "-t" | "-T" | "-l" | "-lf" | "-lp" | "-d" => i += 1,
                    _ => {}
                }
                i += 1;
                continue;
            }
            addresses.push(&args[i]);
            i += 1;
        }
        for (n, a) in addresses.into_iter().take(2).enumerate() {
            // Which way data flows through this address: `-u` reads the first and
            // writes the second, `-U` the reverse.
            let (reads, writes) = match (forward, backward) {
                (true, _) => (n == 0, n == 1),
                (_, true) => (n == 1, n == 0),
                _ => (true, true),
            };
            let text = a.text.as_str();
            let (kind, rest) = match text.split_once(':') {
                Some((k, r)) if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => {
                    (k.to_ascii_uppercase(), r)
                }
                _ if text.contains('/') => ("GOPEN".to_string(), text),
                _ => continue,
            };
            // Address options follow the first comma.
            let param = rest.split(',').next().unwrap_or("");
            let word = |w: &str| {
                self.expand_tilde(Arg {
                    text: w.to_string(),
                    known: a.known,
                    home_based: w.starts_with('~'),
                    ..Arg::default()
                })
            };
            match kind.as_str() {
                "FILE" | "OPEN" | "CREATE" | "CREAT" | "GOPEN" | "PIPE" | "NAMEDPIPE" => {
                    let path = word(param);
                    let creates = matches!(kind.as_str(), "CREATE" | "CREAT");
                    if reads && !creates {
                        self.note_secret_in(&path);
                        self.check_read_path(&path);
                    }
                    if writes || creates {
                        self.check_write_target(&path, true, "socat");
                    }
                }
                "EXEC" | "SYSTEM" => {
                    let io = CmdIo {
                        stdin_pipe: true,
                        ..CmdIo::default()
                    };
                    let nested = Invocation {
                        io: &io,
                        procsub_network: inv.procsub_network,
                        subs_network: inv.subs_network,
                    };
                    if kind == "SYSTEM" {
                        self.shell_string(&word(param), &nested);
                    } else if depth < MAX_WRAPPERS {
                        let argv: Vec<Arg> = param.split_whitespace().map(word).collect();
                        if !argv.is_empty() {
                            self.judge_argv(&argv, &nested, depth + 1);
                        }
                    }
                }
                _ => {}
            }
        }
        self.check_path_args(args, &[]);
    }

    /// nc and ncat: the program `-e`/`--exec` runs (an argv) and the string
    /// `-c`/`--sh-exec` runs (a shell string), each with the connection as its stdin;
    /// `--lua-exec FILE` runs a script.
    fn netcat(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let io = CmdIo {
            stdin_pipe: true,
            ..CmdIo::default()
        };
        let nested = Invocation {
            io: &io,
            procsub_network: inv.procsub_network,
            subs_network: inv.subs_network,
        };
        let mut i = 1;
        while i < args.len() {
            let a = &args[i];
            let t = a.text.as_str();
            let (kind, value) = match t {
                "-e" | "--exec" => ("exec", args.get(i + 1).cloned()),
                "-c" | "--sh-exec" => ("sh", args.get(i + 1).cloned()),
                "--lua-exec" => ("lua", args.get(i + 1).cloned()),
                _ => {
                    let attached = |p: &str| {
                        t.strip_prefix(p).map(|v| Arg {
                            text: v.to_string(),
                            ..a.clone()
                        })
                    };
                    match (
                        attached("--exec="),
                        attached("--sh-exec="),
                        attached("--lua-exec="),
                    ) {
                        (Some(v), _, _) => ("exec", Some(v)),
                        (_, Some(v), _) => ("sh", Some(v)),
                        (_, _, Some(v)) => ("lua", Some(v)),
                        _ => {
                            i += 1;
                            continue;
                        }
                    }
                }
            };
            i += if t.contains('=') { 1 } else { 2 };
            let Some(v) = value else { continue };
            match kind {
                "sh" => self.shell_string(&v, &nested),
                "exec" => match v.value() {
                    Some(text) if depth < MAX_WRAPPERS => {
                        // The words as they are, `~` taken for the home as a shell would
                        // (the stricter reading).
                        let argv: Vec<Arg> = text
                            .split_whitespace()
                            .map(|w| {
                                self.expand_tilde(Arg {
                                    home_based: w.starts_with('~'),
                                    ..Arg::literal(w)
                                })
                            })
                            .collect();
                        if !argv.is_empty() {
                            self.judge_argv(&argv, &nested, depth + 1);
                        }
                    }
                    Some(_) => {}
                    None => self.shell_string(&v, &nested),
                },
                _ => {
                    self.find(
                        RuleId::DefaultUnknown,
                        format!("{} runs a script for each connection", args[0].text),
                    );
                    if Self::is_path_token(&v) {
                        self.check_read_path(&v);
                    }
                }
            }
        }
        self.check_path_args(args, &[]);
    }

    fn flock_wrapper(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "wEc",
                long_arg: &["timeout", "conflict-exit-code", "command"],
                permute: false,
            },
        );
        let Some(&lock) = p.operands.first() else {
            return;
        };
        let lock_arg = args[lock].clone();
        if !lock_arg.text.chars().all(|c| c.is_ascii_digit()) {
            self.check_write_target(&lock_arg, true, "flock");
        }
        if let Some(c) = p.value_of('c', "command").cloned() {
            self.shell_string(&c, inv);
        } else if lock + 1 < args.len() {
            let rest = &args[lock + 1..];
            // `-c STRING` or `--command STRING` (`--com` and longer abbreviate it), or
            // `--command=STRING`, after the lock file.
            let first = rest[0].text.as_str();
            let long = |t: &str| t.len() >= 5 && "--command".starts_with(t);
            if let Some(value) = first
                .split_once('=')
                .filter(|(n, _)| long(n))
                .map(|(_, v)| v)
            {
                let c = Arg {
                    text: value.to_string(),
                    ..rest[0].clone()
                };
                self.shell_string(&c, inv);
            } else if first == "-c" || long(first) {
                if let Some(c) = rest.get(1) {
                    let c = c.clone();
                    self.shell_string(&c, inv);
                }
            } else {
                self.judge_argv(rest, inv, depth + 1);
            }
        }
    }

    fn watch_wrapper(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "nq",
                long_arg: &["interval", "equexit"],
                permute: false,
            },
        );
        if p.first_operand >= args.len() {
            return;
        }
        let rest = &args[p.first_operand..];
        if p.has('x', "exec") {
            self.judge_argv(rest, inv, depth + 1);
        } else {
            // watch joins its words with spaces and runs them with `sh -c`.
            let joined = Arg {
                text: rest
                    .iter()
                    .map(|a| a.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                known: rest.iter().all(|a| a.known),
                ..Arg::default()
            };
            self.shell_string(&joined, inv);
        }
    }

    fn script_wrapper(&mut self, args: &[Arg], inv: &Invocation, _depth: usize) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "cEIOBTm",
                long_arg: &[
                    "command",
                    "echo",
                    "log-in",
                    "log-out",
                    "log-io",
                    "log-timing",
                    "logging-format",
                ],
                permute: true,
            },
        );
        for &i in &p.operands {
            let a = args[i].clone();
            self.check_write_target(&a, true, "script");
        }
        if let Some(c) = p.value_of('c', "command").cloned() {
            self.shell_string(&c, inv);
        } else {
            // Without `-c`, script runs the user's shell, which reads its commands
            // from script's input: a pipe into it is a pipe into a shell.
            self.stdin_program("script", inv);
        }
    }

    fn xargs_wrapper(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "aEdILnPs",
                long_arg: &[
                    "arg-file",
                    "delimiter",
                    "max-lines",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ],
                permute: false,
            },
        );
        // `-a FILE`: the words come from FILE, which xargs reads.
        if let Some(file) = p.value_of('a', "arg-file").cloned() {
            self.check_read_path(&file);
        }
        let replace = p
            .value_of('I', "replace")
            .map(|a| a.text.clone())
            .or_else(|| {
                p.opts.iter().find_map(|o| match o {
                    opts::Opt::Short('i', _) => Some("{}".to_string()),
                    opts::Opt::Long(l, v) if opts::abbreviates(l, "replace") => Some(
                        v.as_ref()
                            .map(|a| a.text.clone())
                            .unwrap_or_else(|| "{}".into()),
                    ),
                    _ => None,
                })
            });
        let mut inner: Vec<Arg> = if p.first_operand < args.len() {
            args[p.first_operand..].to_vec()
        } else {
            vec![Arg::literal("echo")]
        };
        // The words xargs adds come from its input: known when the line
        // pipes known text into it (`echo / | xargs rm -rf`), otherwise not
        // known before running.
        // A here-string is input too (`xargs rm -rf <<< ~`).
        let herestring = inv
            .io
            .herestring
            .as_ref()
            .filter(|h| h.known)
            .map(|h| h.text.clone());
        let null = p.has('0', "null");
        let fed = inv
            .io
            .piped
            .as_deref()
            .or(herestring.as_deref())
            .filter(|t| {
                // Without -0 xargs reads quotes and backslashes; with it, names ended by
                // NUL (`printf '%s\0' … | xargs -0`).
                let words_fit = if null {
                    t.contains('\0')
                } else {
                    !t.contains(['\'', '"', '\\', '\0'])
                };
                !p.has('a', "arg-file") && !p.has('d', "delimiter") && words_fit
            })
            // The names find prints, each one whole whatever the delimiter.
            .or(inv
                .io
                .piped_found
                .as_deref()
                .filter(|_| !p.has('a', "arg-file")));
        if let Some(text) = fed {
            let inner_base = inner.clone();
            let items: Vec<&str> = if null && text.contains('\0') {
                text.split('\0').filter(|w| !w.is_empty()).collect()
            } else {
                text.lines().map(str::trim).collect()
            };
            let runs: Vec<Vec<Arg>> = match &replace {
                Some(r) => items
                    .iter()
                    .copied()
                    .filter(|l| !l.is_empty())
                    .take(9)
                    .map(|line| {
                        let mut run = inner_base.clone();
                        for a in run.iter_mut() {
                            a.text = a.text.replace(r.as_str(), line);
                        }
                        run
                    })
                    .collect(),
                None => {
                    let mut run = inner_base;
                    if null && text.contains('\0') {
                        run.extend(items.iter().take(257).map(|w| Arg::literal(*w)));
                    } else {
                        run.extend(text.split_whitespace().take(257).map(Arg::literal));
                    }
                    vec![run]
                }
            };
            let bounded = runs.len() <= 8 && runs.iter().all(|r| r.len() <= 256);
            if bounded && !runs.is_empty() {
                for run in runs {
                    self.judge_argv(&run, inv, depth + 1);
                }
                return;
            }
        }
        // At an exec, xargs itself is what runs: the command it makes of each input line
        // is an exec of its own, judged by its real words when xargs runs it. Words that
        // hold the placeholder are not known yet, and judging them here as unknown would
        // refuse `xargs -I{} sh -c 'echo {}'` for a string that is judged anyway.
        if self.ctx == Context::Exec
            && let Some(r) = &replace
            && inner.iter().any(|a| a.text.contains(r.as_str()))
        {
            self.find(
                RuleId::DefaultUnknown,
                "xargs runs a command made from its input: each is judged when it runs",
            );
            return;
        }
        let original = inner.clone();
        match &replace {
            Some(r) => {
                // The program word too: `xargs -I{} {}` runs what it reads.
                for a in inner.iter_mut() {
                    if a.text.contains(r.as_str()) {
                        a.text = a.text.replace(r.as_str(), &UNKNOWN.to_string());
                        a.known = false;
                        a.substituted = true;
                    }
                }
            }
            None => inner.push(Arg::printed()),
        }
        let name = program_name(&inner[0].text).to_string();
        if inv.io.stdin_pipe
            && (SHELLS.contains(&unversioned(&name))
                || INTERPRETERS.contains(&unversioned(&name))
                || is_python(&name))
        {
            // xargs puts what it reads into its command's words as text: in an
            // interpreter's inline code (`sh -c 'echo {}'`, `xargs sh -c`, `node -p`) that
            // text is program (`x; rm -rf ~` on a line). A script the input names (`xargs
            // -n1 bash -n`, `xargs -n1 python3`) and a syntax check (`perl -c`) run a file.
            let program = unversioned(&name);
            let inline_flag = |t: &str| -> bool {
                let short = t.starts_with('-') && !t.starts_with("--");
                let ends = |c: char| short && t.ends_with(c);
                match program {
                    _ if SHELLS.contains(&program) || is_python(program) => ends('c'),
                    "perl" => ends('e') || ends('E'),
                    "node" | "nodejs" | "deno" | "bun" => {
                        ends('e') || ends('p') || matches!(t, "--eval" | "--print")
                    }
                    "php" => ends('r'),
                    _ => ends('e') || ends('c') || matches!(t, "--eval" | "-Command" | "--command"),
                }
            };
            // awk and its kin take their program as the first operand.
            let program_operand = matches!(program, "awk" | "gawk" | "mawk" | "nawk");
            let fixed_program = match original.iter().skip(1).position(|a| inline_flag(&a.text)) {
                None if program_operand => original.iter().skip(1).any(|a| {
                    a.known
                        && !a.text.starts_with('-')
                        && replace
                            .as_ref()
                            .is_none_or(|r| !a.text.contains(r.as_str()))
                }),
                None => true,
                Some(k) => original.get(k + 2).is_some_and(|code| {
                    code.known
                        && replace
                            .as_ref()
                            .is_none_or(|r| !code.text.contains(r.as_str()))
                }),
            };
            if !fixed_program {
                self.find(
                    RuleId::PipeToInterpreter,
                    format!("xargs runs {name} with a program read from the pipe"),
                );
            }
        }
        self.judge_argv(&inner, inv, depth + 1);
    }

    /// The shell strings a container runs (`docker run IMAGE sh -c '…'`, `kubectl exec POD --
    /// bash -c '…'`): what they do to files is the container's, but a pipe into a shell
    /// or an interpreter there runs what it reads as a program, as on the host (SPEC §2:
    /// anywhere in the line).
    fn container_shell_strings(&mut self, name: &str, args: &[Arg]) {
        const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "fish"];
        for (k, flag) in args.iter().enumerate() {
            // `-c` or flags bunched before it (`-lc`, `-euxc`), after a shell named anywhere
            // before it (`IMAGE sh -c`, `--entrypoint sh IMAGE -c`, `bash -euo pipefail -c`).
            let t = flag.text.as_str();
            let c_flag = t.len() >= 2
                && t.starts_with('-')
                && !t.starts_with("--")
                && t.ends_with('c')
                && t[1..].chars().all(|c| c.is_ascii_alphabetic());
            let shell_before = args[..k]
                .iter()
                .any(|a| SHELLS.contains(&program_name(&a.text)));
            let Some(script) = args.get(k + 1).filter(|_| c_flag && shell_before) else {
                continue;
            };
            match container_pipe_reader(&script.text) {
                Some(None) => self.find(
                    RuleId::PipeToInterpreter,
                    format!("{name} runs what a download prints as a program in its container"),
                ),
                Some(Some(reader)) => self.find(
                    RuleId::PipeToInterpreter,
                    format!("{name} runs a pipe into {reader} in its container, which runs what it reads"),
                ),
                None => {}
            }
        }
    }

    /// A string a wrapper runs with a shell (`sh -c`, `su -c`, `watch`), or keeps to run
    /// later (`trap`, `alias`). Either way it does not run here and now in the line's own
    /// shell: where it goes and what it sets do not reach the rest of the line
    /// (`su -c 'cd /'; rm -rf build`, `trap 'cd /' EXIT; rm -rf build` remove ./build).
    pub(crate) fn shell_string(&mut self, s: &Arg, inv: &Invocation) {
        match s.value() {
            Some(text) => {
                let text = text.to_string();
                let saved = self.state.clone();
                // Another shell: a variable not exported there may be empty.
                let guards = std::mem::take(&mut self.guarded);
                self.stdin_pipe_in = inv.io.stdin_pipe;
                self.walk_nested(&text);
                self.stdin_pipe_in = false;
                self.restore_state(saved);
                self.guarded = guards;
            }
            None => {
                let rule = if inv.subs_network {
                    RuleId::PipeToInterpreter
                } else {
                    RuleId::DynamicProgram
                };
                self.find(
                    rule,
                    format!(
                        "runs a shell string built at run time ({}): the program cannot be identified",
                        display_arg(s)
                    ),
                );
            }
        }
    }

    // --- shells and interpreters ----------------------------------------

    fn shell(&mut self, name: &str, args: &[Arg], inv: &Invocation) {
        // A shell sources `$BASH_ENV` (bash, non-interactive) or `$ENV` (sh, interactive)
        // before anything else: set in the line, it is `source FILE`.
        for var in ["BASH_ENV", "ENV"] {
            if let Some(value) = self.state.vars.get(var).cloned() {
                let file = match value {
                    Some(v) if v.is_empty() => continue,
                    Some(v) => Arg {
                        home_based: v.starts_with('~'),
                        ..Arg::literal(v)
                    },
                    None => Arg::unknown(),
                };
                let file = self.expand_tilde(file);
                self.source(&[Arg::literal("source"), file], inv);
            }
        }
        // Shell options: `-c` may sit in a cluster (`-lc`, `-ec`); `-o`/`-O`
        // take a value; `--rcfile`/`--init-file` name a file that is run.
        let mut command: Option<usize> = None;
        let mut reads_stdin = false;
        let mut script: Option<usize> = None;
        let mut i = 1;
        let mut c_flag = false;
        // An interactive shell runs startup files before its string (`~/.bashrc`, a file
        // `--rcfile` names, `$ENV`): it is no mere wrapper of the string.
        let mut interactive = false;
        while i < args.len() {
            let t = args[i].text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if t == "--rcfile" || t == "--init-file" {
                // The shell sources the file before its first prompt: `source FILE` (a
                // download through `<(curl …)` included).
                if let Some(f) = args.get(i + 1) {
                    let f = f.clone();
                    if f.procsub {
                        self.find(
                            if inv.procsub_network {
                                RuleId::PipeToInterpreter
                            } else {
                                RuleId::DynamicProgram
                            },
                            format!("{name} {t} runs a file read from a process substitution"),
                        );
                    } else {
                        self.source(&[Arg::literal("source"), f.clone()], inv);
                    }
                    self.check_read_path(&f);
                }
                interactive = true;
                i += 2;
                continue;
            }
            if t.starts_with("--") {
                interactive |= t == "--interactive";
                i += 1;
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                let cluster = &t[1..];
                if cluster.contains('c') && t.starts_with('-') {
                    c_flag = true;
                }
                if cluster.contains('i') && t.starts_with('-') {
                    interactive = true;
                }
                if cluster.contains('s') && t.starts_with('-') {
                    reads_stdin = true;
                }
                if cluster.contains('o') || cluster.contains('O') {
                    i += 1;
                }
                i += 1;
                continue;
            }
            break;
        }
        if c_flag {
            command = (i < args.len()).then_some(i);
        } else if i < args.len() && !reads_stdin {
            script = Some(i);
        }
        if let Some(c) = command {
            // `sh -c STRING NAME ARG…`: NAME is the string's `$0`, the ARGs its `$1`…
            // (the shell's own name when there is no NAME).
            let string = args[c].clone();
            let word =
                |a: &Arg| (a.known && !a.glob && !a.brace && !a.procsub).then(|| a.text.clone());
            let params: Vec<Option<String>> =
                std::iter::once(args.get(c + 1).map_or(Some(name.to_string()), word))
                    .chain(args.iter().skip(c + 2).map(word))
                    .collect();
            let known = string.value().is_some_and(|s| !changes_positional(s));
            // The string runs in a shell of its own: where it goes and what it sets stay
            // there (`sh -c 'cd /'; rm -rf build` removes ./build).
            let saved = self.state.clone();
            self.state.positional = known.then_some(params);
            self.shell_string(&string, inv);
            self.restore_state(saved);
            // A wrapper, as `timeout` is: the string's commands are judged as parts of
            // their own, so the shell itself adds nothing (an empty string or one built at
            // run time is judged above, and a login shell's profile is the user's own).
            // An interactive one runs startup files that are no part of the string.
            if interactive {
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} runs as an interactive shell, whose startup files run first"),
                );
            } else if string.value().is_some_and(|s| !s.trim().is_empty()) {
                self.find(
                    RuleId::ShellString,
                    format!("{name} -c runs the string it is given, judged on its own"),
                );
            }
            return;
        }
        match script {
            Some(s) if args[s].procsub => self.find(
                if inv.procsub_network {
                    RuleId::PipeToInterpreter
                } else {
                    RuleId::DynamicProgram
                },
                format!("{name} runs a script read from a process substitution"),
            ),
            Some(s) if is_stdin_path(&args[s].text) => self.stdin_program(name, inv),
            Some(s) => {
                self.find(RuleId::DefaultUnknown, format!("{name} runs a script"));
                self.check_path_args(args, &[]);
                let script = args[s].clone();
                self.run_script_written(&script, true);
            }
            None => self.stdin_program(name, inv),
        }
    }

    /// A script the line wrote earlier with text it shows (`echo 'rm -rf /' > x.sh &&
    /// sh x.sh`) runs that text: judged as a line of its own.
    /// In a `child` shell (`sh x.sh`, `./x.sh`, not `. x.sh`) where the script goes and
    /// what it sets stay there.
    pub(crate) fn run_script_written(&mut self, file: &Arg, child: bool) {
        self.run_download(file);
        if let Some(text) = self.take_script_written(file) {
            let saved = child.then(|| self.state.clone());
            self.walk_nested(&text);
            if let Some(saved) = saved {
                self.restore_state(saved);
            }
        }
    }

    /// Running a file a download in the line wrote runs what the network sent: refused
    /// as `curl … | sh` is.
    fn run_download(&mut self, file: &Arg) {
        if self.downloads.is_empty() || !file.known {
            return;
        }
        let path = match self.resolve_arg(file, true) {
            Loc::Inside { path, .. } | Loc::Outside(path) => path,
            Loc::Unknown => return,
        };
        if self.downloads.contains(&path) {
            self.find(
                RuleId::PipeToInterpreter,
                format!(
                    "runs {}, which a download in the line wrote",
                    display_arg(file)
                ),
            );
        }
    }

    /// Notes the files a download writes: `curl -o FILE`, `wget -O FILE`, and the name
    /// taken from the URL (`curl -O URL`, `wget URL` without `-O`).
    fn note_downloads(&mut self, name: &str, p: &opts::Parsed, args: &[Arg]) {
        let mut files: Vec<Arg> = Vec::new();
        let (named, remote_name) = match name {
            "curl" => (
                p.values_of('o', "output").cloned().collect::<Vec<_>>(),
                p.has('O', "remote-name") || p.has('\0', "remote-name-all"),
            ),
            _ => {
                let named: Vec<Arg> = p.values_of('O', "output-document").cloned().collect();
                let other_dir = p.has('P', "directory-prefix");
                let remote = named.is_empty() && !other_dir;
                (named, remote)
            }
        };
        files.extend(named.into_iter().filter(|v| v.text != "-"));
        if remote_name && !p.has('\0', "output-dir") {
            for &i in &p.operands {
                let url = &args[i];
                if !url.known {
                    continue;
                }
                let path = url.text.split(['?', '#']).next().unwrap_or_default();
                let path = path.split_once("://").map_or(path, |x| x.1);
                if let Some((_, base)) = path.rsplit_once('/')
                    && !base.is_empty()
                    && base != "."
                    && base != ".."
                {
                    files.push(Arg::literal(base));
                }
            }
        }
        for f in files {
            if !f.known {
                continue;
            }
            if let Loc::Inside { path, .. } | Loc::Outside(path) = self.resolve_arg(&f, true) {
                self.scripts_written.insert(path.clone(), None);
                self.downloads.insert(path);
            }
        }
    }

    /// The text the line wrote into `file`, if it shows it. Taken: a script judged once
    /// (one that runs itself is not followed further).
    fn take_script_written(&mut self, file: &Arg) -> Option<String> {
        if self.scripts_written.is_empty() || !file.known {
            return None;
        }
        let path = match self.resolve_arg(file, true) {
            Loc::Inside { path, .. } | Loc::Outside(path) => path,
            Loc::Unknown => return None,
        };
        self.scripts_written.remove(&path).flatten()
    }

    /// A shell or interpreter that reads its program from stdin.
    fn stdin_program(&mut self, name: &str, inv: &Invocation) {
        if inv.io.stdin_pipe {
            self.find(
                RuleId::PipeToInterpreter,
                format!("pipes into {name}, which runs what it reads"),
            );
            return;
        }
        let is_shell = SHELLS.contains(&unversioned(name));
        if let Some(doc) = &inv.io.heredoc {
            if is_shell {
                let doc = doc.clone();
                self.walk_nested(&doc);
            } else {
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} runs a program from a here-document"),
                );
                // Read as inline code is (`python3 - <<EOF … os.system("…") … EOF`).
                let doc = doc.clone();
                self.inline_shell_commands(name, &doc);
            }
            return;
        }
        if let Some(hs) = &inv.io.herestring {
            let hs = hs.clone();
            if is_shell {
                self.shell_string(&hs, inv);
            } else if !hs.known {
                self.find(
                    RuleId::DynamicProgram,
                    format!("{name} runs a program built at run time"),
                );
            } else {
                self.find(
                    RuleId::DefaultUnknown,
                    format!("{name} runs a program from a here-string"),
                );
                if let Some(code) = hs.value() {
                    let code = code.to_string();
                    self.inline_shell_commands(name, &code);
                }
            }
            return;
        }
        self.find(
            RuleId::DefaultUnknown,
            format!("{name} reads a program from its input"),
        );
    }

    fn interpreter(&mut self, name: &str, args: &[Arg], inv: &Invocation, depth: usize) {
        // Options that carry the program inline, per interpreter family.
        let inline: &[&str] = match name {
            "perl" => &["-e", "-E"],
            "ruby" => &["-e"],
            "node" | "nodejs" | "bun" | "deno" => &[
                "-e", "--eval", "-p", "--print", "run", "eval", "test", "install", "add", "x",
            ],
            // `-B`, `-R`, `-E`: code run before, for each line of, and after the input.
            "php" => &["-r", "-B", "-R", "-E"],
            "lua" => &["-e"],
            "pwsh" | "powershell" => &[],
            _ => &["-c", "-m"],
        };
        let mut script: Option<usize> = None;
        let mut inline_program = false;
        let mut i = 1;
        while i < args.len() {
            let t = args[i].text.as_str();
            // PowerShell's parameters, in any case and shortened: `-Command` (`-c`) and
            // `-File` (`-f`) take the program, `-EncodedCommand` (`-e`, `-ec`) a base64
            // one, which cannot be identified; `-` after them is the input.
            if matches!(name, "pwsh" | "powershell") && t.starts_with('-') {
                let p = t.trim_start_matches('-').to_ascii_lowercase();
                let is = |full: &str, least: usize| p.len() >= least && full.starts_with(&p);
                if is("command", 1) || is("file", 1) {
                    match args.get(i + 1) {
                        Some(v) if v.text == "-" => return self.stdin_program(name, inv),
                        _ => {
                            inline_program = true;
                            break;
                        }
                    }
                }
                if is("encodedcommand", 1) || p == "ec" {
                    self.find(
                        RuleId::DynamicProgram,
                        format!(
                            "{name} runs an encoded program: it cannot be identified before running"
                        ),
                    );
                    return self.check_path_args(args, &[]);
                }
                let takes = [
                    ("executionpolicy", 2),
                    ("workingdirectory", 2),
                    ("configurationname", 4),
                    ("configurationfile", 4),
                    ("outputformat", 1),
                    ("inputformat", 2),
                    ("windowstyle", 1),
                    ("settingsfile", 2),
                    ("custompipename", 2),
                    ("version", 1),
                ];
                i += if takes.iter().any(|(f, n)| is(f, *n)) || p == "ep" || p == "wd" {
                    2
                } else {
                    1
                };
                continue;
            }
            if inline.contains(&t)
                || (t.starts_with('-')
                    && !t.starts_with("--")
                    && name == "perl"
                    && perl_bundle_has_program(t))
                // ruby's flags bundled before its `-e` (`-ne`, `-lpe`).
                || (name == "ruby"
                    && t.len() > 2
                    && t.strip_prefix('-').is_some_and(|b| {
                        b.strip_suffix('e')
                            .is_some_and(|f| f.chars().all(|c| "acdlnpsSvwy".contains(c)))
                    }))
                || (is_python(name)
                    && t.starts_with('-')
                    && !t.starts_with("--")
                    && (t.ends_with('c') || t.ends_with('m')))
            {
                inline_program = true;
                break;
            }
            // Options whose value is the next word, not the script: python's `-W`,
            // `-X`; perl's and ruby's `-I DIR`; ruby's `-r LIB`; node's modules
            // loaded first (`-r`, `--require`, `--import`, `--loader`).
            let takes_value = match name {
                _ if is_python(name) => matches!(t, "-W" | "-X" | "-Q"),
                // An ini file, an ini setting, a Zend extension, a document root, a
                // server address.
                "php" => matches!(t, "-c" | "-d" | "-z" | "-t" | "-S"),
                "perl" => t == "-I",
                "ruby" => matches!(t, "-I" | "-r"),
                "node" | "nodejs" => matches!(
                    t,
                    "-r" | "--require"
                        | "--import"
                        | "--loader"
                        | "--experimental-loader"
                        | "-C"
                        | "--conditions"
                        | "--env-file"
                        | "--input-type"
                ),
                _ => false,
            };
            if takes_value {
                i += 2;
                continue;
            }
            if name == "php" && t == "-f" {
                script = Some(i + 1).filter(|s| *s < args.len());
                break;
            }
            if t.starts_with('-') && t != "-" {
                i += 1;
                continue;
            }
            script = Some(i);
            break;
        }
        if is_python(name) {
            // `python -m pip install`, `python -m pytest`.
            if let Some(m) = args.iter().position(|a| a.text == "-m") {
                match args.get(m + 1).map(|a| a.text.as_str()) {
                    Some("pip") => return self.pip(args, m + 2),
                    // The interactive interpreter, fed from the pipe.
                    Some("code") if inv.io.stdin_pipe => {
                        return self.stdin_program(name, inv);
                    }
                    Some("twine") => return self.dev_tool("twine", &args[m + 1..], depth),
                    Some("pytest" | "mypy" | "unittest") => {
                        self.cur_test_runner = true;
                        return self.check_path_args(args, &[]);
                    }
                    // `python -m venv DIR…`: makes each folder it names.
                    Some("venv" | "virtualenv") => {
                        self.find(RuleId::DefaultUnknown, "makes a virtualenv");
                        let dirs: Vec<usize> = (m + 2..args.len())
                            .filter(|&i| !args[i].text.starts_with('-'))
                            .collect();
                        self.cur_writes = true;
                        for &i in &dirs {
                            let a = args[i].clone();
                            self.check_write_target(&a, true, "python -m venv");
                        }
                        return self.check_path_args(args, &dirs);
                    }
                    _ => {}
                }
            }
        }
        if matches!(name, "perl" | "ruby")
            && args.iter().skip(1).any(|a| {
                a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('i')
            })
        {
            // In-place edit: every operand after the program (the `-e` text
            // or the script) is written.
            let targets: Vec<Arg> = args
                .iter()
                .skip(1)
                .filter(|a| !a.text.starts_with('-'))
                .skip(1)
                .cloned()
                .collect();
            let what = format!("{name} -i");
            for t in &targets {
                self.check_write_target(t, true, &what);
            }
        }
        if matches!(name, "bun" | "deno") {
            // `deno eval "$(curl …)"`, `bun -e "$(curl …)"`: a downloaded program.
            let evals = args.windows(2).any(|w| {
                matches!(
                    w[0].text.as_str(),
                    "-e" | "--eval" | "eval" | "-p" | "--print"
                ) && w[1].cmdsub
                    && !w[1].known
            });
            if evals && inv.subs_network {
                self.find(
                    RuleId::PipeToInterpreter,
                    format!("{name} runs a program a command substitution downloads"),
                );
            }
            // `deno run -`, `bun run -`: the script is what arrives on stdin.
            let stdin_script = args.iter().position(|a| a.text == "run").is_some_and(|r| {
                args[r + 1..]
                    .iter()
                    .find(|a| !a.text.starts_with('-') || a.text == "-")
                    .is_some_and(|a| is_stdin_path(&a.text))
            });
            if stdin_script {
                self.stdin_program(name, inv);
            }
            return self.dev_tool(name, args, depth);
        }
        if inline_program {
            let code = args.get(i + 1);
            let downloaded = inv.subs_network && code.is_some_and(|c| c.cmdsub && !c.known);
            // `python3 -c 'exec(sys.stdin.read())'` runs what it reads.
            // perl's and ruby's `-n`/`-p` (in a bundle as `-ne`, `-lpe`) loop over the
            // input lines; a bundle ends at a switch that takes the rest of its word.
            let perl_like = matches!(name, "perl" | "ruby");
            let line_loop = perl_like
                && args[1..=i.min(args.len() - 1)].iter().any(|a| {
                    a.text
                        .strip_prefix('-')
                        .filter(|b| !b.starts_with('-'))
                        .is_some_and(|b| {
                            b.chars()
                                .take_while(|c| !"eEMmIxdDCVir".contains(*c))
                                .any(|c| c == 'n' || c == 'p')
                        })
                });
            let runs_stdin = inv.io.stdin_pipe
                && code
                    .and_then(Arg::value)
                    .is_some_and(|c| inline_code_runs_its_input(c, line_loop, perl_like));
            if downloaded {
                self.find(
                    RuleId::PipeToInterpreter,
                    format!("{name} runs a program a command substitution downloads"),
                );
            } else if runs_stdin {
                self.find(
                    RuleId::PipeToInterpreter,
                    format!("pipes into {name}, whose inline code runs what it reads"),
                );
            } else {
                self.find(RuleId::DefaultUnknown, format!("{name} runs inline code"));
            }
            if let Some(text) = code.and_then(Arg::value) {
                let text = text.to_string();
                self.inline_shell_commands(name, &text);
            }
            return self.check_path_args(args, &[]);
        }
        match script {
            Some(s) if args[s].procsub => self.find(
                if inv.procsub_network {
                    RuleId::PipeToInterpreter
                } else {
                    RuleId::DynamicProgram
                },
                format!("{name} runs a script read from a process substitution"),
            ),
            Some(s) if is_stdin_path(&args[s].text) => self.stdin_program(name, inv),
            Some(s) => {
                // `python setup.py install` outside a virtualenv installs
                // into the system's Python, like `pip install`.
                if is_python(name)
                    && program_name(&args[s].text) == "setup.py"
                    && args[s + 1..]
                        .iter()
                        .any(|a| matches!(a.text.as_str(), "install" | "develop"))
                    && !self.state.venv
                    && !args[s + 1..].iter().any(|a| {
                        a.text.starts_with("--prefix")
                            || a.text.starts_with("--root")
                            || a.text.starts_with("--home")
                    })
                {
                    self.find(
                        RuleId::PkgGlobal,
                        "setup.py install outside a virtualenv changes the system's Python",
                    );
                }
                // `python setup.py sdist upload`: distutils' upload to the index.
                if is_python(name)
                    && program_name(&args[s].text) == "setup.py"
                    && args[s + 1..].iter().any(|a| a.text == "upload")
                {
                    self.find(RuleId::PkgPublish, "setup.py upload publishes a package");
                }
                self.find(RuleId::DefaultUnknown, format!("{name} runs a script"));
                self.check_path_args(args, &[]);
                // A script the line wrote: the shell commands its code runs.
                let script = args[s].clone();
                self.run_download(&script);
                if let Some(text) = self.take_script_written(&script) {
                    self.inline_shell_commands(name, &text);
                }
            }
            None => self.stdin_program(name, inv),
        }
    }

    fn source(&mut self, args: &[Arg], inv: &Invocation) {
        let Some(file) = args.get(1) else {
            return;
        };
        if file.procsub {
            // `source <(curl …)` runs what the network sent.
            if inv.procsub_network {
                self.find(
                    RuleId::PipeToInterpreter,
                    "sources what a network program printed",
                );
            }
            self.find(
                RuleId::DynamicProgram,
                "sources a process substitution: the program cannot be identified",
            );
            return;
        }
        match self.resolve_arg(file, true) {
            Loc::Unknown => self.find(
                RuleId::DynamicProgram,
                format!(
                    "sources {}: the file cannot be known before running",
                    display_arg(file)
                ),
            ),
            Loc::Outside(p) if !self.is_allowed_outside(&p) => self.find(
                RuleId::DynamicProgram,
                format!("sources a file outside the worktree: {}", p.display()),
            ),
            Loc::Outside(_) | Loc::Inside { .. } => {
                if file.text.ends_with("bin/activate") {
                    self.state.venv = true;
                }
                self.find(
                    RuleId::DefaultUnknown,
                    format!("sources {}", display_arg(file)),
                );
                let file = file.clone();
                self.run_script_written(&file, false);
            }
        }
    }

    /// Where `cd DIR` goes through `$CDPATH` (a relative DIR not starting with `.` or
    /// `..`): `Some(Some(path))` for the first entry holding DIR, `Some(None)` when the
    /// line set CDPATH to a value not known, `None` when CDPATH plays no part (DIR is
    /// then taken from the working directory).
    fn cdpath_target(&self, t: &Arg) -> Option<Option<PathBuf>> {
        let text = t.text.as_str();
        let first = text.split('/').next().unwrap_or("");
        if !t.known || text.starts_with('/') || first == "." || first == ".." {
            return None;
        }
        let cdpath = match self.state.vars.get("CDPATH") {
            Some(Some(v)) => v.clone(),
            Some(None) => return Some(None),
            None => self.req.env.get("CDPATH")?.clone(),
        };
        for entry in cdpath.split(':') {
            // A `~` at an entry's start is the home: bash expands it after each `:` of an
            // assignment (`CDPATH=.:~`). An entry that is not absolute (`.`, `..`,
            // `../..`, empty) is taken from the working directory, as bash takes it; where
            // that is not known, neither is the folder `cd` goes to.
            let home_based = entry
                .strip_prefix('~')
                .filter(|rest| rest.is_empty() || rest.starts_with('/'));
            let base = if let Some(rest) = home_based {
                match crate::word::Scope::home(self) {
                    Some(h) => PathBuf::from(format!("{h}{rest}")),
                    None => return Some(None),
                }
            } else if entry.starts_with('/') {
                PathBuf::from(entry)
            } else {
                match self.cwd_path() {
                    Some(cwd) => path::normalize(&cwd, Path::new(entry)),
                    None => return Some(None),
                }
            };
            // A folder, as bash wants (a file of that name is passed over).
            let candidate = path::normalize(&base, Path::new(text));
            if self.cls.fs.is_dir(&candidate) {
                return Some(Some(candidate));
            }
        }
        None
    }

    /// Records the folders `mkdir` makes (with `-p`, those on the way too), for a later
    /// `cd` into one.
    fn note_made_dirs(&mut self, args: &[Arg]) {
        // One that may not run (in a branch, a loop, a function, after `&&` or `||`, in
        // the background) makes nothing a later `cd` may count on.
        if !self.runs_surely || self.functions.contains("mkdir") {
            return;
        }
        // Only the options that cannot make it fail or do nothing (`--version`, a mode
        // that does not parse).
        let plain = args[1..]
            .iter()
            .take_while(|a| a.text != "--")
            .filter(|a| a.text.starts_with('-') && a.text != "-")
            .all(|a| {
                matches!(a.text.as_str(), "--parents" | "--verbose")
                    || (!a.text.starts_with("--") && a.text[1..].chars().all(|c| "pv".contains(c)))
            });
        if !plain {
            return;
        }
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "m",
                long_arg: &["mode", "context"],
                permute: true,
            },
        );
        let parents = args[1..].iter().take_while(|a| a.text != "--").any(|a| {
            a.text == "--parents"
                || (a.text.starts_with('-')
                    && !a.text.starts_with("--")
                    && a.text[1..].contains('p'))
        });
        for &i in &p.operands {
            if let Loc::Inside { path, .. } | Loc::Outside(path) = self.resolve_arg(&args[i], false)
            {
                // Without -p, made only in a folder that is there; never over a file.
                let parent_there = path.parent().is_some_and(|d| {
                    self.cls.fs.is_dir(d) || self.made_dirs.iter().any(|m| m == d)
                });
                // Nothing on the way may be a file (`mkdir -p README.md/x` fails), nor a
                // link that leads nowhere (`mkdir -p dangling/x` fails too), as written.
                let written = self
                    .start_of(Path::new(&args[i].text))
                    .map(|base| path::normalize(&base, Path::new(&args[i].text)));
                let fs = self.links_view();
                let over_a_file = path
                    .ancestors()
                    .chain(written.iter().flat_map(|w| w.ancestors()))
                    .any(|a| {
                        (path::FsView::exists(&fs, a) || self.links.contains_key(a))
                            && !path::FsView::is_dir(&fs, a)
                    });
                if (parents || parent_there) && !over_a_file {
                    self.made_dirs.push(path);
                }
            }
        }
    }

    /// Records folders the line surely removes or moves away (`rm -r`, `rmdir`, `mv`'s
    /// sources): no longer there for a later `cd`.
    fn note_removed_dirs(&mut self, gone: &[Arg]) {
        if !self.runs_surely {
            return;
        }
        for a in gone {
            if let Loc::Inside { path, .. } | Loc::Outside(path) = self.resolve_arg(a, false) {
                self.made_dirs.retain(|m| !m.starts_with(&path));
                self.removed_dirs.push(path);
            }
        }
    }

    /// Under bash's `cdable_vars` (set by the line, or earlier in the shell that runs it),
    /// a `cd` to a word that names no folder goes to the value of the variable it names:
    /// that folder, when the variable is known and `path` is no folder to enter.
    fn cdable_var(&self, t: &Arg, path: &Path) -> Option<PathBuf> {
        let name = t.text.as_str();
        let identifier = t.known
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let removed = self.removed_dirs.iter().any(|r| path.starts_with(r));
        if !identifier || (self.cls.fs.is_dir(path) && !removed) {
            return None;
        }
        let value = crate::word::Scope::var(self, name)?;
        let v = Path::new(&value);
        let there = self.start_of(v).map(|base| path::normalize(&base, v))?;
        Some(self.resolved(&there))
    }

    fn cd(&mut self, name: &str, args: &[Arg]) {
        // Each `cd` looks up every folder on the way a few times, and the way grows with
        // each: past this many, only where its path leads is followed, as it always was
        // (not bash's logical `..`, nor whether it may fail).
        let thorough = self.dir_changes < MAX_DIR_CHANGES;
        let p = opts::parse(args, 1, &OptSpec::default());
        let target = p.operands.first().map(|&i| args[i].clone());
        let old = self.state.cwd.clone();
        let before = old.clone();
        // The folder left is `$OLDPWD` (and `~-`) from here on.
        let left = self.known(&old).map(|p| p.display().to_string());
        let mut logical_new = None;
        let mut alternatives: Vec<PathBuf> = Vec::new();
        let new = match (name, &target) {
            ("popd", _) => {
                let top = self.state.dir_stack.pop().unwrap_or(Cwd::Unknown);
                self.known(&top)
            }
            (_, None) if name == "pushd" => None,
            // `cd` alone goes to `$HOME`, as the line may have set it.
            (_, None) => crate::word::Scope::home(&*self).map(PathBuf::from),
            // `cd -` goes to `$OLDPWD`, as the line's own `cd`s left it.
            (_, Some(t)) if t.text == "-" => {
                crate::word::Scope::var(&*self, "OLDPWD").map(PathBuf::from)
            }
            (_, Some(t)) => match self.cdpath_target(t) {
                Some(found) => found,
                None => match self.resolve_arg(t, true) {
                    Loc::Inside { path, .. } | Loc::Outside(path) if !thorough => Some(path),
                    Loc::Inside { path, .. } | Loc::Outside(path) => {
                        alternatives.extend(self.cdable_var(t, &path));
                        // bash's `cd` takes `..` from `$PWD` as written, before links are
                        // followed (`cd link/..` stays where it was), and where that is no
                        // folder, the path as the kernel finds it; under `-P` (the
                        // option's, or the shell's `set -P`, which an earlier line may
                        // have given) only the latter. Unless `-P` is written, both are
                        // judged where they differ.
                        match self.logical_target(t, args).map(|l| (self.resolved(&l), l)) {
                            Some((real, logical)) if real == path => {
                                logical_new = Some(logical);
                                Some(path)
                            }
                            Some((real, logical)) if self.cls.fs.is_dir(&logical) => {
                                alternatives.push(path);
                                logical_new = Some(logical);
                                Some(real)
                            }
                            _ => Some(path),
                        }
                    }
                    Loc::Unknown => None,
                },
            },
        };
        if name == "pushd" {
            self.state.dir_stack.push(old);
        }
        self.dir_changes += 1;
        // SPEC §2: a `cd` whose target comes from a command substitution is one that
        // cannot be worked out before running, even where fence can tell what the
        // substitution prints (`cd $(pwd)`): the folder it leads to is still followed.
        let substituted = target.as_ref().is_some_and(|t| t.substituted);
        match &new {
            _ if substituted => self.find(
                RuleId::CdOutside,
                format!("{name}: the directory cannot be worked out before running"),
            ),
            Some(p) if p.starts_with(&self.cls.worktree) => self.find(
                RuleId::DefaultUnknown,
                format!("{name} stays inside the worktree"),
            ),
            Some(p) => self.find(
                RuleId::CdOutside,
                format!("{name} leaves the worktree: {}", p.display()),
            ),
            None => self.find(
                RuleId::CdOutside,
                format!("{name}: the directory cannot be worked out before running"),
            ),
        }
        // A folder that does not exist (yet: an earlier part may make it) may not be
        // entered: what follows may then run where the shell was (`walk_items`).
        let missing = thorough
            && new.as_ref().is_some_and(|p| {
                let fs = self.links_view();
                (path::FsView::known_not_a_dir(&fs, p)
                    || self.removed_dirs.iter().any(|r| p.starts_with(r)))
                    && !self.made_dirs.iter().any(|m| m.starts_with(p))
            });
        self.uncertain_cds += usize::from(missing);
        self.last_cd = Some((before, missing));
        for alt in &alternatives {
            if !alt.starts_with(&self.cls.worktree) {
                self.find(
                    RuleId::CdOutside,
                    format!("{name} may leave the worktree: {}", alt.display()),
                );
            }
        }
        self.cd_alternatives = alternatives;
        self.state.logical_cwd = logical_new;
        self.state.vars.insert("OLDPWD".to_string(), left);
        self.state.cwd = new.into();
    }

    /// Where `cd t` goes as bash takes it by default: `t` from `$PWD` as written (the line's
    /// own `cd`s kept it), `..` removed before any link is followed. `None` under `-P`, or
    /// where the word or the folder is not known.
    fn logical_target(&self, t: &Arg, args: &[Arg]) -> Option<PathBuf> {
        // The last of `-L` and `-P` written decides.
        let physical = args[1..]
            .iter()
            .take_while(|a| a.text.starts_with('-') && a.text != "-" && a.text != "--")
            .flat_map(|a| a.text[1..].chars())
            .filter(|c| matches!(c, 'L' | 'P'))
            .last()
            == Some('P');
        if physical || !t.known {
            return None;
        }
        let written = Path::new(&t.text);
        let base = if written.is_absolute() {
            PathBuf::from("/")
        } else {
            // Kept only while it still leads where the walk is (a wrapper's `-C`, a walk
            // from the folder before a failed `cd`, move it).
            let here = self.cwd_path()?;
            self.state
                .logical_cwd
                .clone()
                .filter(|l| self.resolved(l) == here)
                .unwrap_or(here)
        };
        Some(path::normalize(&base, written))
    }

    /// `p` with every link followed, as the kernel finds it.
    fn resolved(&self, p: &Path) -> PathBuf {
        path::resolve(&self.links_view(), Path::new("/"), p, true)
    }

    /// The filesystem with the links the line makes.
    fn links_view(&self) -> path::WithLinks<'_> {
        path::WithLinks {
            inner: self.cls.fs.as_ref(),
            links: &self.links,
        }
    }

    // --- git and gh -----------------------------------------------------

    /// At exec the real argv is judged (SPEC §2): a push whose destination is still
    /// unknown then (the current branch of a repository other than the worktree's, a
    /// HEAD only git can read) is refused as a push to main would be — fail closed. In a
    /// line it stays red: the exec will be judged again.
    fn at_exec_unknown_is_main(&self, found: Vec<(RuleId, String)>) -> Vec<(RuleId, String)> {
        found
            .into_iter()
            .map(|(rule, reason)| {
                if self.ctx == Context::Exec
                    && rule == RuleId::GitPush
                    && git::is_unknown_destination(&reason)
                {
                    (
                        RuleId::GitPushMain,
                        format!("{reason}, nor as git runs: refused"),
                    )
                } else {
                    (rule, reason)
                }
            })
            .collect()
    }

    /// The refs of the worktree's repository, which a push's sources name; `None` for
    /// another repository (whose pushes [`git::analyze_push`] judges by its config) or
    /// none at all.
    fn worktree_refs(&self, other_repo: bool) -> Option<Result<Refs<'_>, refs::Unresolved>> {
        if other_repo {
            return None;
        }
        Refs::of_folder(self.cls.fs.as_ref(), &self.cls.worktree)
    }

    /// The branch the HEAD of a repository other than the worktree's is on, for a push
    /// from it that names no destination (`git -C ../main-checkout push`, `cd ../other &&
    /// git push`): its git directory is `--git-dir`'s, `GIT_DIR`'s, or that of the nearest
    /// folder holding a `.git` above the folder git works in. `None` when it cannot be
    /// known (then such a push is one whose destination is not known).
    fn other_repo_branch(&self, git_dir: Option<&Arg>) -> Option<String> {
        let fs = self.cls.fs.as_ref();
        let named = git_dir.cloned().or_else(|| {
            self.state
                .vars
                .get("GIT_DIR")
                .map(|v| v.clone().map_or_else(Arg::unknown, Arg::literal))
        });
        let refs = match named {
            Some(dir) => {
                let path = match self.resolve_arg(&dir, true) {
                    Loc::Inside { path, .. } | Loc::Outside(path) => path,
                    Loc::Unknown => return None,
                };
                Refs::at(fs, path).ok()?
            }
            None => Refs::of_folder(fs, &self.cwd_path()?)?.ok()?,
        };
        refs.current_branch().ok().flatten()
    }

    /// The config file of the repository a git command works in (`.git/config`, a
    /// protected path when it is the worktree's): `--git-dir`'s or `GIT_DIR`'s `config`,
    /// else that of the nearest folder holding a `.git`, else the worktree's.
    fn repository_config(&self, git_dir: Option<&Arg>, other_repo: bool) -> Arg {
        let dir = git_dir.cloned().or_else(|| {
            self.state.vars.get("GIT_DIR").map(|v| match v {
                Some(v) => Arg::literal(v.clone()),
                None => Arg::unknown(),
            })
        });
        if let Some(dir) = dir {
            return match dir.value() {
                Some(d) => Arg::literal(format!("{}/config", d.trim_end_matches('/'))),
                None => Arg::unknown(),
            };
        }
        if !other_repo {
            return Arg::literal(self.cls.worktree.join(".git/config").display().to_string());
        }
        let Some(cwd) = self.cwd_path() else {
            return Arg::unknown();
        };
        let top = cwd
            .ancestors()
            .find(|a| self.cls.fs.exists(&a.join(".git")))
            .unwrap_or(&cwd);
        Arg::literal(top.join(".git/config").display().to_string())
    }

    /// A bookkeeping change ([`git::is_bookkeeping_setting`]) of a config file in the
    /// worktree: `fence run` lets git write it into `.git/config` unasked, so the line
    /// judges it as it always did. Another repository's config is a write like any other.
    fn is_own_bookkeeping(&self, file: &Arg, bookkeeping: bool) -> bool {
        bookkeeping && matches!(self.resolve_arg(file, true), Loc::Inside { .. })
    }

    /// hub wraps git: it hands git every command that is not one of its own, with the
    /// same words (`hub push origin main` is `git push origin main`), and its
    /// `pull-request` opens one as `gh pr create` does. hub itself is not on the green
    /// list: its reads are asked, as any program's.
    fn hub(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        self.find(RuleId::DefaultUnknown, "hub runs git and GitHub's API");
        let g = git::parse(args);
        if g.sub.is_some_and(|i| args[i].text == "pull-request") {
            self.find(RuleId::GhPrCreate, "hub pull-request opens a pull request");
            return self.check_path_args(args, &[]);
        }
        self.git(args, inv, depth)
    }

    fn git(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        let g = git::parse(args);
        // What the subcommand discards of uncommitted work ([`git::discards_changes`]).
        let mut discards: Option<&'static str> = None;
        if g.exec_path {
            self.find(
                RuleId::GitConfigProgram,
                "git --exec-path runs git's programs from another directory",
            );
        }
        let saved_cwd = self.state.cwd.clone();
        let mut other_repo = g.other_repo;
        for d in &g.dirs {
            match self.resolve_arg(d, true) {
                Loc::Inside { path, .. } => {
                    // A folder of the worktree is in its repository (and on its branch)
                    // unless a repository of its own lies on the way (a submodule, a
                    // clone inside).
                    if path
                        .ancestors()
                        .take_while(|a| *a != self.cls.worktree)
                        .any(|a| self.cls.fs.exists(&a.join(".git")))
                    {
                        other_repo = true;
                    }
                    self.state.cwd = Cwd::At(path);
                }
                Loc::Outside(p) => {
                    self.find(
                        RuleId::PathOutside,
                        format!("git -C leaves the worktree: {}", p.display()),
                    );
                    self.state.cwd = Cwd::At(p);
                    other_repo = true;
                }
                Loc::Unknown => {
                    self.find(
                        RuleId::PathOutside,
                        format!(
                            "git -C {}: the directory cannot be worked out before running",
                            display_arg(d)
                        ),
                    );
                    self.state.cwd = Cwd::Unknown;
                    other_repo = true;
                }
            }
        }
        // Without `-C`, git works in the repository of the working directory: another
        // one than the worktree's when it lies outside it (a clone in the session TMPDIR)
        // or in a repository of its own inside it; the worktree's branch is not its branch.
        if g.dirs.is_empty() {
            match self.cwd_path() {
                Some(path) if path.starts_with(&self.cls.worktree) => {
                    if path
                        .ancestors()
                        .take_while(|a| *a != self.cls.worktree)
                        .any(|a| self.cls.fs.exists(&a.join(".git")))
                    {
                        other_repo = true;
                    }
                }
                _ => other_repo = true,
            }
        }
        // `GIT_DIR`, `GIT_COMMON_DIR` (set in the line, or in an exec's environment) name
        // the repository as `--git-dir` does.
        for name in ["GIT_DIR", "GIT_COMMON_DIR"] {
            if let Some(value) = self.state.vars.get(name).cloned() {
                let own = value.is_some_and(|v| {
                    matches!(self.resolve_arg(&Arg::literal(v), true),
                        Loc::Inside { path, .. } if path == self.cls.worktree.join(".git"))
                });
                if !own {
                    other_repo = true;
                }
            }
        }
        // `--git-dir` and `--work-tree` name folders git reads and writes: one outside the
        // worktree is a path outside, as `-C` is; so does `-c core.worktree=DIR`.
        for d in &g.repo_dirs {
            if let Loc::Outside(p) = self.resolve_arg(d, true)
                && !path::is_exception(&p, &[])
                && !self.is_allowed_outside(&p)
            {
                self.find(
                    RuleId::PathOutside,
                    format!("git uses a folder outside the worktree: {}", p.display()),
                );
            }
        }
        // The same folders named in git's environment (`GIT_DIR=/tmp/x git status`,
        // `export GIT_WORK_TREE=..`): outside the worktree, a path outside as above.
        for name in git::REPO_DIR_VARIABLES {
            if let Some(Some(value)) = self.state.vars.get(*name).cloned()
                && let Loc::Outside(p) = self.resolve_arg(&Arg::literal(value), true)
                && !path::is_exception(&p, &[])
                && !self.is_allowed_outside(&p)
            {
                self.find(
                    RuleId::PathOutside,
                    format!(
                        "git uses a path outside the worktree (${name}): {}",
                        p.display()
                    ),
                );
            }
        }
        // `--git-dir` names the repository: the worktree's own only as its `.git`.
        if let Some(dir) = &g.git_dir {
            match self.resolve_arg(dir, true) {
                Loc::Inside { path, .. } if path == self.cls.worktree.join(".git") => {}
                _ => {
                    // As `GIT_DIR=x git …`: another repository's config can run programs
                    // (`core.fsmonitor`, hooks) for any command, a read included.
                    self.find(
                        RuleId::DefaultUnknown,
                        format!(
                            "git --git-dir={} uses a repository other than the worktree's, whose settings can run programs",
                            display_arg(dir)
                        ),
                    );
                    other_repo = true
                }
            }
        }
        // `-c key=value`, and its spelling in the environment the line gives git
        // (`GIT_CONFIG_KEY_0=… GIT_CONFIG_VALUE_0=…`, `GIT_CONFIG_PARAMETERS`).
        let (env_settings, env_unknown) = {
            let vars = &self.state.vars;
            let names: Vec<String> = vars.keys().cloned().collect();
            git::environment_settings(&|n: &str| vars.get(n).cloned(), names.into_iter())
        };
        for c in g.configs.iter().chain(&env_settings) {
            if let Some((rule, reason)) = git::config_program(c) {
                self.find(rule, reason);
            }
            self.git_setting_runs(c, inv, depth);
        }
        if env_unknown {
            self.find(
                RuleId::GitConfigProgram,
                "git settings given in the environment that cannot be known before running",
            );
        }
        self.config_files_agent_writes();
        let Some(sub_i) = g.sub else {
            self.state.cwd = saved_cwd;
            return;
        };
        let sub = args[sub_i].text.clone();
        if args[sub_i].known && !git::is_command(&sub) {
            let near = git::autocorrect_candidates(&sub);
            if !near.is_empty() {
                self.state.cwd = saved_cwd;
                return self.git_autocorrected(args, sub_i, &near, inv, depth);
            }
        }
        let rest = &args[sub_i + 1..];
        let branch = if other_repo {
            self.other_repo_branch(g.git_dir.as_ref())
        } else {
            self.state.branch.clone()
        };
        let mut skip = vec![];
        let writes_before = std::mem::take(&mut self.cur_writes);
        match sub.as_str() {
            "status" | "log" | "diff" | "show" => {
                self.find(RuleId::GitRead, format!("git {sub} only reads"));
                // `--output FILE`, `--output=FILE` (not `--output-indicator-new=+`).
                if let Some(i) = rest
                    .iter()
                    .position(|a| a.text == "--output" || a.text.starts_with("--output="))
                {
                    let v = rest[i]
                        .text
                        .split_once('=')
                        .map(|x| Arg {
                            text: x.1.to_string(),
                            known: rest[i].known,
                            home_based: x.1.starts_with('~'),
                            ..Arg::default()
                        })
                        .map(|a| self.expand_tilde(a))
                        .or_else(|| rest.get(i + 1).cloned());
                    if let Some(v) = v {
                        self.check_write_target(&v, true, "git --output");
                    }
                }
                if rest
                    .iter()
                    .any(|a| a.text == "--ext-diff" || a.text.starts_with("--textconv"))
                {
                    self.find(RuleId::DefaultUnknown, "runs an external diff program");
                }
                // A word the line does not give that may be an option (`git diff $OPT`; at
                // an exec, only a wrapper's words to come, judged at git's own exec):
                // `--output=FILE` writes, `--ext-diff` runs a program, `--no-index`
                // reads files outside the repository. A word with a known start that is
                // not one (`HEAD~$N`, `src/$F`) names a revision or a path of the
                // repository, and a long option whose name is known (`--since=$D`) is
                // that option, `--output` aside (the file it writes is not known).
                if self.ctx == Context::Line
                    && rest.iter().any(|a| {
                        !a.known && !a.procsub && {
                            let start = a.known_prefix();
                            start.is_empty()
                                || (start.starts_with('-')
                                    && (!start.starts_with("--")
                                        || !start.contains('=')
                                        || start.starts_with("--output=")))
                        }
                    })
                {
                    self.find(
                        RuleId::DefaultUnknown,
                        format!(
                            "git {sub} is given a word not known before running, which may be an option that writes or runs a program"
                        ),
                    );
                }
            }
            "push" => {
                // Settings whose values the line does not show (`--config-env`, git's
                // environment variables assigned in the line) can push to main or force
                // whatever the refspecs say: refused as a push to main. `-c` settings are
                // read for where they send the push (`git::analyze_push`).
                let mut deciding: Vec<String> = g
                    .config_envs
                    .iter()
                    .filter(|c| git::push_deciding_setting(c))
                    .map(|c| format!("--config-env {c}"))
                    .collect();
                let mut variables: Vec<(&String, &Option<String>)> =
                    self.state.vars.iter().collect();
                variables.sort();
                for (name, value) in variables {
                    let names_a_setting = if name.starts_with("GIT_CONFIG_KEY_") {
                        value.as_deref().is_none_or(git::push_deciding_setting)
                    } else if name == "GIT_CONFIG_PARAMETERS" {
                        value.as_deref().is_none_or(|v| {
                            v.split_whitespace()
                                .any(|p| git::push_deciding_setting(&p.replace('\'', "")))
                        })
                    } else if name == "HOME" || name == "XDG_CONFIG_HOME" {
                        // Another home or config folder than the session's: git reads the
                        // user's config from there (`~/.gitconfig`,
                        // `$XDG_CONFIG_HOME/git/config`), which can set `remote.*.push`.
                        let session = match name.as_str() {
                            "HOME" => self.cls.home.clone(),
                            _ => self.cls.home.as_ref().map(|h| h.join(".config")),
                        };
                        value
                            .as_deref()
                            .is_none_or(|v| session.as_deref() != Some(Path::new(v)))
                    } else if matches!(
                        name.as_str(),
                        "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM" | "GIT_CONFIG"
                    ) {
                        // A config file the environment chooses: whatever it sets (an
                        // empty one, `/dev/null`, sets nothing).
                        value
                            .as_deref()
                            .is_none_or(|v| !v.is_empty() && v != "/dev/null")
                    } else {
                        false
                    };
                    if names_a_setting {
                        deciding.push(format!("${name}"));
                    }
                }
                // Settings written earlier in the line (`git config remote.origin.push
                // HEAD:main; git push`) decide as their `-c` spelling does.
                let mut configs = g.configs.clone();
                for (key, value) in &self.git_settings {
                    match value {
                        Some(v) => configs.push(format!("{key}={v}")),
                        None => deciding.push(format!("git config {key}")),
                    }
                }
                // A config file included by `-c` (or by a `git config` earlier in the line)
                // may set any of them, and the sandbox may have written it.
                deciding.extend(
                    configs
                        .iter()
                        .filter(|c| {
                            git::is_include(&c.split('=').next().unwrap_or("").to_ascii_lowercase())
                        })
                        .map(|c| format!("-c {c}")),
                );
                if let Some(setting) = deciding.first() {
                    self.find(
                        RuleId::GitPushMain,
                        format!(
                            "git push with a setting that decides what it pushes: {setting} \
                             (name the refspec on the command line instead)"
                        ),
                    );
                }
                let refs = self.worktree_refs(other_repo);
                let found = self.at_exec_unknown_is_main(git::analyze_push(
                    rest,
                    branch.as_deref(),
                    &configs,
                    other_repo,
                    refs.as_ref(),
                ));
                let decided = found.iter().any(|(r, _)| {
                    matches!(
                        r,
                        RuleId::GitPushMain | RuleId::GitPushForce | RuleId::GitPush
                    )
                });
                for (rule, reason) in found {
                    self.find(rule, reason);
                }
                if !decided {
                    self.find(RuleId::GitPush, "pushes to a remote");
                }
                self.cur_writes = true;
                // Refspecs and remotes are not paths.
                skip = (sub_i + 1..args.len()).collect();
            }
            "subtree" | "send-pack" => {
                // `git subtree push --prefix=d origin main`, `git send-pack URL main`.
                let after = if sub == "subtree" {
                    rest.iter()
                        .position(|a| a.text == "push")
                        .map(|i| &rest[i + 1..])
                } else {
                    Some(rest)
                };
                if let Some(after) = after {
                    let refs: Vec<Arg> = after
                        .iter()
                        .filter(|a| !a.text.starts_with("--prefix") && a.text != "-P")
                        .cloned()
                        .collect();
                    if sub == "send-pack" && refs.iter().any(|a| a.text == "--stdin") {
                        self.find(
                            RuleId::GitPushMain,
                            "git send-pack --stdin reads the refs it pushes from its input, \
                             which the line does not show",
                        );
                    }
                    // send-pack's sources are local refs; subtree's word is the remote's.
                    let local = self.worktree_refs(other_repo || sub == "subtree");
                    let found = self.at_exec_unknown_is_main(git::analyze_push(
                        &refs,
                        branch.as_deref(),
                        &g.configs,
                        false,
                        local.as_ref(),
                    ));
                    for (rule, reason) in found {
                        self.find(rule, reason);
                    }
                    self.find(RuleId::GitPush, format!("git {sub} pushes to a remote"));
                    skip = (sub_i + 1..args.len()).collect();
                }
                self.cur_writes = true;
            }
            "reset" => {
                self.cur_writes = true;
                if rest.iter().any(|a| opts::is_long(&a.text, "hard")) {
                    self.find(
                        RuleId::GitResetHard,
                        "git reset --hard discards uncommitted work",
                    );
                }
            }
            "clean" => {
                self.cur_writes = true;
                let force = rest.iter().any(|a| {
                    opts::is_long(&a.text, "force")
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('f'))
                });
                let unforced = g
                    .configs
                    .iter()
                    .chain(&env_settings)
                    .any(|c| git::sets_false(c, "clean.requireForce"));
                // `-i` deletes what the answers on its input choose, without `-f`.
                let interactive = rest.iter().any(|a| {
                    opts::is_long(&a.text, "interactive")
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('i'))
                });
                let dry_run = rest.iter().any(|a| {
                    opts::is_long(&a.text, "dry-run")
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('n'))
                });
                // At exec the config git reads may come from anywhere the process's own
                // environment points (`HOME` or `XDG_CONFIG_HOME` in the worktree, with
                // `clean.requireForce = false`): a clean that is no dry run deletes, or
                // fails.
                let exec_unforced = self.ctx == Context::Exec && !dry_run;
                if force || unforced || interactive || exec_unforced {
                    self.find(
                        RuleId::GitCleanForce,
                        if interactive && !force {
                            "git clean -i deletes the untracked files its answers choose"
                        } else {
                            "git clean -f deletes untracked files"
                        },
                    );
                }
            }
            "rm" if git::rm_recursive_forced(rest) => {
                // Deletes every tracked file below the paths, local changes included:
                // `rm -rf` in git's spelling.
                self.cur_writes = true;
                self.find(
                    RuleId::RmRecursive,
                    "git rm -r -f deletes files recursively, uncommitted changes included",
                );
            }
            "maintenance" if git::maintenance_schedules(rest) => {
                // `start` registers the repository and installs cron entries, systemd
                // timers or launchd agents that run git later, outside the sandbox;
                // `stop` edits the same schedule.
                self.cur_writes = true;
                self.find(
                    RuleId::SysServices,
                    format!(
                        "git maintenance {} changes the system's scheduled jobs",
                        git::first_word(rest).unwrap_or_default()
                    ),
                );
            }
            "checkout" | "switch" | "restore" | "stash"
                if git::discards_changes(&sub, rest).is_some() =>
            {
                self.cur_writes = true;
                // Found after the paths (below): a protected or outside path it writes
                // is the more telling reason.
                discards = git::discards_changes(&sub, rest);
                if let Some(target) = git::checkout_target(&sub, rest)
                    && !other_repo
                {
                    self.state.branch = target;
                }
            }
            "checkout" | "switch" => {
                self.cur_writes = true;
                if let Some(target) = git::checkout_target(&sub, rest)
                    && !other_repo
                {
                    self.state.branch = target;
                }
            }
            "branch" | "symbolic-ref" | "stash"
                if !other_repo && git::moves_branch(&sub, rest).is_some() =>
            {
                // `git branch -m main`, `git symbolic-ref HEAD refs/heads/main`,
                // `git stash branch main`: the current branch is another from here on.
                self.cur_writes = true;
                if let Some((from, to)) = git::moves_branch(&sub, rest) {
                    let current = &self.state.branch;
                    // `git branch -m OLD NEW` renames the current branch only when it is
                    // OLD; when that is not known, a move to main may be one.
                    let moves = from.is_none()
                        || from == *current
                        || (current.is_none() && to.as_deref().is_some_and(git::is_main));
                    if moves {
                        self.state.branch = to;
                    }
                }
            }
            "branch" if git::branch_upstream(rest).is_some() => {
                // `git branch -u origin/main`: a later `git push` (under
                // `push.default=upstream`, which config may hold) goes there.
                self.cur_writes = true;
                if let Some((name, merge)) = git::branch_upstream(rest) {
                    let name = name
                        .or_else(|| branch.clone())
                        .unwrap_or_else(|| "HEAD".into());
                    self.git_settings
                        .push((format!("branch.{name}.merge"), merge));
                }
            }
            "config" => {
                self.cur_writes = true;
                // `git config core.hooksPath DIR`, `git config alias.x '!…'`:
                // a program for git to run later, judged as the line it will run.
                if let Some((key, value)) = git::config_assignment(rest) {
                    let k = display_arg(&key);
                    if !key.known {
                        self.find(
                            RuleId::GitConfigProgram,
                            format!("git config sets a key not known before running: {k}"),
                        );
                    } else if git::config_program(&format!("{k}=")).is_some() {
                        self.find(
                            RuleId::GitConfigProgram,
                            format!("git config {k} sets a program for git to run later"),
                        );
                    }
                    if let Some(v) = value.as_ref().and_then(Arg::value) {
                        let setting = format!("{k}={v}");
                        self.git_setting_runs(&setting, inv, depth);
                    }
                    if key.known && git::push_deciding_setting(&k) {
                        self.find(
                            RuleId::GitConfigProgram,
                            format!("git config {k} decides what a later git push pushes"),
                        );
                        if !other_repo {
                            let v = value.and_then(|v| v.value().map(str::to_string));
                            self.git_settings.push((k, v));
                        }
                    }
                }
                // The file a change is written to: `--system` writes
                // /etc/gitconfig, `--global` the home's, `-f FILE` that file.
                if let Some(file) = git::config_write_file(rest) {
                    let file = match file {
                        git::ConfigFile::System => Some(Arg::literal("/etc/gitconfig")),
                        git::ConfigFile::Global => Some(match crate::word::Scope::home(self) {
                            Some(h) => Arg::literal(format!("{h}/.gitconfig")),
                            None => Arg::unknown(),
                        }),
                        git::ConfigFile::Path(a) => Some(self.expand_tilde(a)),
                        git::ConfigFile::Repository => {
                            let file = self.repository_config(g.git_dir.as_ref(), other_repo);
                            let bookkeeping = git::config_change_is_bookkeeping(rest);
                            (!self.is_own_bookkeeping(&file, bookkeeping)).then_some(file)
                        }
                    };
                    if let Some(file) = file {
                        self.check_write_target(&file, true, "git config");
                    }
                }
                skip = (sub_i + 1..args.len()).collect();
            }
            "submodule" if rest.iter().any(|a| a.text == "foreach") => {
                // `git submodule foreach CMD`: CMD runs in each submodule, a
                // directory of the worktree the line does not name.
                self.cur_writes = true;
                let at = rest.iter().position(|a| a.text == "foreach").unwrap_or(0);
                let cmd: Vec<Arg> = rest[at + 1..]
                    .iter()
                    .skip_while(|a| a.text.starts_with('-'))
                    .cloned()
                    .collect();
                self.git_runs(&cmd, inv, depth, Cwd::Unknown);
                skip = (sub_i + 1..args.len()).collect();
            }
            "filter-branch" => {
                // Each filter is a shell string git evaluates; the tree
                // filter runs in a scratch directory.
                self.cur_writes = true;
                let mut i = 0;
                while i < rest.len() {
                    let t = rest[i].text.as_str();
                    if t.starts_with("--") && t.ends_with("-filter") {
                        if let Some(v) = rest.get(i + 1) {
                            self.git_runs(std::slice::from_ref(v), inv, depth, Cwd::Unknown);
                        }
                        i += 2;
                        continue;
                    }
                    if let Some((k, v)) = t.split_once('=')
                        && k.starts_with("--")
                        && k.ends_with("-filter")
                    {
                        let v = Arg {
                            text: v.to_string(),
                            ..rest[i].clone()
                        };
                        self.git_runs(&[v], inv, depth, Cwd::Unknown);
                    }
                    i += 1;
                }
                skip = (sub_i + 1..args.len()).collect();
            }
            "rebase"
                if rest
                    .iter()
                    .any(|a| a.text == "-x" || a.text.starts_with("--exec")) =>
            {
                // `git rebase -x CMD`: CMD runs after each commit is replayed.
                self.cur_writes = true;
                let cwd = self.state.cwd.clone();
                let mut i = 0;
                while i < rest.len() {
                    let t = rest[i].text.as_str();
                    if t == "-x" || t == "--exec" {
                        if let Some(v) = rest.get(i + 1) {
                            self.git_runs(std::slice::from_ref(v), inv, depth, cwd.clone());
                        }
                        i += 2;
                        continue;
                    }
                    if let Some(v) = t.strip_prefix("--exec=").or_else(|| t.strip_prefix("-x")) {
                        let v = Arg {
                            text: v.to_string(),
                            ..rest[i].clone()
                        };
                        self.git_runs(&[v], inv, depth, cwd.clone());
                    }
                    i += 1;
                }
                skip = (sub_i + 1..args.len()).collect();
            }
            "bisect" if rest.first().is_some_and(|a| a.text == "run") => {
                // `git bisect run CMD ARGS…` runs CMD at each step.
                self.cur_writes = true;
                let cwd = self.state.cwd.clone();
                self.git_runs(&rest[1..], inv, depth, cwd);
                skip = (sub_i + 1..args.len()).collect();
            }
            "stash" | "commit" | "add" | "rm" | "mv" | "restore" | "merge" | "rebase" | "pull"
            | "checkout-index" | "read-tree" | "update-index" | "update-ref" | "cherry-pick"
            | "revert" | "tag" | "branch" | "apply" | "am" | "init" | "clone" | "fetch"
            | "worktree" | "submodule" | "gc" | "prune" | "notes" | "format-patch" | "archive"
            | "bundle" => {
                self.cur_writes = true;
                if sub == "apply" || sub == "am" {
                    self.patch_from_stdin(inv, "git apply");
                }
                // A template folder's files are copied into the git directory, its
                // `hooks/` among them: run again in the worktree's repository, `git init`
                // adds the hooks it lacks (`.git/hooks/`, a protected path).
                // `git clone` makes a repository's git directory the same way.
                // git takes an option by any unique start of its name (`--templ=tpl`).
                let template = rest.iter().any(|a| {
                    let opt = a.text.split('=').next().unwrap_or("");
                    opt.len() >= 4 && "--template".starts_with(opt)
                }) || g.configs.iter().any(|c| {
                    c.split('=')
                        .next()
                        .is_some_and(|k| k.eq_ignore_ascii_case("init.templatedir"))
                }) || self.state.vars.contains_key("GIT_TEMPLATE_DIR");
                if matches!(sub.as_str(), "init" | "clone") && template {
                    self.find(
                        RuleId::ProtectedPath,
                        format!("git {sub} with a template copies its hooks into .git/hooks"),
                    );
                }
            }
            // `git $X origin main`, `… | xargs git`: what git will do is not known before
            // running, and it may push (SPEC §2: a push whose destination cannot be known
            // is red).
            _ if !args[sub_i].known => self.find(
                RuleId::GitPush,
                format!(
                    "git {}: the subcommand cannot be known before running, and may push",
                    display_arg(&args[sub_i])
                ),
            ),
            _ => {}
        }
        if matches!(sub.as_str(), "checkout" | "restore" | "mv" | "rm") {
            // The files they write or remove in the worktree (`git checkout REV --
            // .envrc`, `git mv x .envrc`): a protected one is a protected write.
            // Past a revision: checkout's first operand before `--`, restore's
            // `--source`/`-s` value.
            let dashes = rest.iter().position(|a| a.text == "--");
            let files: Vec<&Arg> = match (sub.as_str(), dashes) {
                (_, Some(d)) => rest[d + 1..].iter().collect(),
                ("checkout", None) => rest
                    .iter()
                    .filter(|a| !a.text.starts_with('-'))
                    .skip(1)
                    .collect(),
                _ => rest
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| {
                        let source_value =
                            *i > 0 && matches!(rest[i - 1].text.as_str(), "-s" | "--source");
                        !a.text.starts_with('-') && !source_value
                    })
                    .map(|(_, a)| a)
                    .collect(),
            };
            for a in files.into_iter().filter(|a| a.known) {
                if let Loc::Inside { rel, .. } = self.resolve_arg(a, false)
                    && !rel.as_os_str().is_empty()
                    && self.is_protected(&rel)
                {
                    self.find(
                        RuleId::ProtectedPath,
                        format!("git {sub} writes a protected path: {}", rel.display()),
                    );
                }
            }
        }
        if sub == "clone" {
            // `git clone -c core.hooksPath=DIR`: written into the new repository's
            // config, and in force for the clone itself (its checkout runs hooks).
            for c in git::clone_settings(rest) {
                let k = display_arg(&c);
                if let Some((rule, reason)) = git::config_program(&k) {
                    // An alias is only defined there, not run.
                    let rule = if rule == RuleId::DynamicProgram {
                        RuleId::GitConfigProgram
                    } else {
                        rule
                    };
                    self.find(rule, reason);
                }
                if c.known {
                    self.git_setting_runs(&k, inv, depth);
                }
            }
        }
        let cwd = self.state.cwd.clone();
        for c in git::option_commands(&sub, rest) {
            self.git_runs(&[c], inv, depth, cwd.clone());
        }
        for (target, what) in git::write_targets(&sub, rest) {
            self.check_write_target(&target, true, what);
        }
        if sub == "submodule"
            && rest
                .iter()
                .find(|a| !a.text.starts_with('-'))
                .is_some_and(|a| a.text == "add")
        {
            // `git submodule add` records the submodule in `.gitmodules` at the top of
            // the repository, whatever folder it runs in: the worktree's, for a line
            // that runs inside it.
            let top = Arg::literal(self.cls.worktree.join(".gitmodules").display().to_string());
            self.check_write_target(&top, true, "git submodule add");
        }
        if self.cur_writes {
            // A subcommand that writes writes in the repository it runs in:
            // `git -C /etc init`, `cd /etc && git commit` write /etc like any
            // other writer.
            let mut dirs: Vec<Arg> = Vec::new();
            let cwd = self.cwd_path();
            let cwd_outside = cwd
                .as_ref()
                .is_some_and(|c| !c.starts_with(&self.cls.worktree));
            if !g.dirs.is_empty() || cwd_outside {
                dirs.push(match &cwd {
                    Some(c) => Arg::literal(c.display().to_string()),
                    None => Arg::unknown(),
                });
            }
            dirs.extend(g.repo_dirs.iter().map(|d| self.expand_tilde(d.clone())));
            // And the folders git's environment names (`GIT_WORK_TREE=/ git clean -fdx`).
            for name in git::REPO_DIR_VARIABLES {
                if let Some(value) = self.state.vars.get(*name).cloned() {
                    dirs.push(match value {
                        Some(v) => Arg::literal(v),
                        None => Arg::unknown(),
                    });
                }
            }
            for d in dirs {
                self.check_write_target(&d, true, "git");
            }
        }
        let bookkeeping = match sub.as_str() {
            "branch" => {
                rest.iter().any(|a| a.text == "--unset-upstream")
                    || git::branch_upstream(rest).is_some_and(|(name, merge)| {
                        match (name.or_else(|| branch.clone()), merge) {
                            (Some(n), Some(m)) => m == format!("refs/heads/{n}"),
                            _ => false,
                        }
                    })
            }
            "push" => git::push_upstream_is_bookkeeping(rest),
            _ => false,
        };
        if git::writes_repository_config(&sub, rest) {
            // `git remote add`, `git branch -u`, `git push -u`: a setting written to the
            // repository's config, as `git config` writes one.
            self.cur_writes = true;
            let file = self.repository_config(g.git_dir.as_ref(), other_repo);
            if !self.is_own_bookkeeping(&file, bookkeeping) {
                self.check_write_target(&file, true, &format!("git {sub}"));
            }
        }
        self.cur_writes |= writes_before;
        let _ = depth;
        if sub == "grep" {
            let patterns = search_patterns("git-grep", args, sub_i + 1);
            self.check_pattern_tokens(args, &patterns);
            skip.extend(patterns);
        }
        // The folders of `-C` were judged above, each from the folder the one before it
        // left git in; placed against the folder the last one leads to they would name
        // another (`cd src && git -C .. status` works in the worktree).
        for (i, a) in args.iter().enumerate().take(sub_i).skip(1) {
            match a.text.as_str() {
                "-C" => skip.push(i + 1),
                t if t.starts_with("-C") => skip.push(i),
                _ => {}
            }
        }
        self.check_path_args(args, &skip);
        if let Some(why) = discards {
            self.find(RuleId::GitDiscard, why);
        }
        self.state.cwd = saved_cwd;
    }

    /// An unknown git subcommand that git may correct to one of `near`
    /// ([`git::autocorrect_candidates`]): judged as each of them, the worst deciding, and
    /// never better than an unknown command. The current branch after it is known only when
    /// every one of them leaves the same.
    fn git_autocorrected(
        &mut self,
        args: &[Arg],
        sub_i: usize,
        near: &[&str],
        inv: &Invocation,
        depth: usize,
    ) {
        self.find(
            RuleId::DefaultUnknown,
            format!(
                "git {} is not a git command; git may correct it to {}",
                args[sub_i].text,
                near.join(", ")
            ),
        );
        let before = self.state.branch.clone();
        let mut after = None;
        for command in near {
            self.state.branch = before.clone();
            let mut as_corrected = args.to_vec();
            as_corrected[sub_i] = Arg::literal(*command);
            self.git(&as_corrected, inv, depth);
            let branch = self.state.branch.clone();
            after = match after {
                None => Some(branch),
                Some(b) if b == branch => Some(b),
                Some(_) => Some(None),
            };
        }
        self.state.branch = after.flatten();
    }

    /// The config files git reads that the line moves to where the agent can write
    /// (`XDG_CONFIG_HOME=. git status` reads `./git/config`, `HOME=.` reads
    /// `./.gitconfig`, `GIT_CONFIG_GLOBAL=./x`): such a file can set a program for git
    /// to run (`core.fsmonitor`, `core.pager`), as `-c` can. Places the agent can write:
    /// the worktree, the session's temp directory and the machine's temp folders; a
    /// place the line does not tell counts as one.
    fn config_files_agent_writes(&mut self) {
        const CONFIG_HOMES: [(&str, &str); 5] = [
            ("XDG_CONFIG_HOME", "/git/config"),
            ("HOME", "/.gitconfig"),
            ("GIT_CONFIG_GLOBAL", ""),
            ("GIT_CONFIG_SYSTEM", ""),
            ("GIT_CONFIG", ""),
        ];
        for (name, file) in CONFIG_HOMES {
            // At exec the home and XDG folders come from the environment of a process that
            // runs inside the fence (a test suite's `HOME=$TMPDIR`), where whatever a config
            // file there makes git run stays fenced too; only a push reads them
            // (`git push`'s settings, above).
            if self.ctx == Context::Exec && matches!(name, "HOME" | "XDG_CONFIG_HOME") {
                continue;
            }
            let Some(value) = self.state.vars.get(name).cloned() else {
                continue;
            };
            let writable = match value {
                None => true,
                Some(v) if v.is_empty() || v == "/dev/null" => false,
                Some(v) => match self.resolve_arg(&Arg::literal(format!("{v}{file}")), true) {
                    Loc::Inside { .. } | Loc::Unknown => true,
                    Loc::Outside(p) => {
                        self.is_allowed_outside(&p)
                            || ["/tmp", "/var/tmp", "/dev/shm"]
                                .iter()
                                .any(|t| p.starts_with(t))
                    }
                },
            };
            if writable {
                self.find(
                    RuleId::GitConfigProgram,
                    format!(
                        "${name} makes git read a config file the agent can write, \
                         which can set a program for git to run"
                    ),
                );
            }
        }
    }

    /// A command a git subcommand runs (`submodule foreach`, `rebase -x`,
    /// `filter-branch --tree-filter`, `bisect run`): one word is a shell
    /// string, several are an argv; it runs in `cwd`.
    fn git_runs(&mut self, cmd: &[Arg], inv: &Invocation, depth: usize, cwd: Cwd) {
        if cmd.is_empty() {
            return;
        }
        let saved = std::mem::replace(&mut self.state.cwd, cwd);
        if let [one] = cmd {
            self.shell_string(one, inv);
        } else {
            self.judge_argv(cmd, inv, depth + 1);
        }
        self.state.cwd = saved;
    }

    /// Judges what a git setting's value runs (`core.pager=…`, `alias.x=!…`), as the
    /// program a variable such as `GIT_PAGER` names is judged. A value not known before
    /// running stays with the setting's own rule.
    fn git_setting_runs(&mut self, setting: &str, inv: &Invocation, depth: usize) {
        if setting.contains(UNKNOWN) {
            return;
        }
        match git::setting_runs(setting) {
            Some(git::SettingRuns::Shell(s)) => {
                let cwd = self.state.cwd.clone();
                self.git_runs(&[Arg::literal(s)], inv, depth, cwd);
            }
            Some(git::SettingRuns::Git(words)) if depth < MAX_WRAPPERS => {
                let argv: Vec<Arg> = std::iter::once("git")
                    .chain(words.split_whitespace())
                    .map(Arg::literal)
                    .collect();
                self.judge_argv(&argv, inv, depth + 1);
            }
            _ => {}
        }
    }

    fn gh(&mut self, args: &[Arg]) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "RHbtBaAdlmrsjqT",
                long_arg: &[
                    "repo",
                    "hostname",
                    "title",
                    "body",
                    "base",
                    "head",
                    "assignee",
                    "label",
                    "milestone",
                    "reviewer",
                    "jq",
                    "template",
                ],
                permute: true,
            },
        );
        let words: Vec<&str> = p.operands.iter().map(|&i| args[i].text.as_str()).collect();
        if words.len() >= 2 && words[0] == "pr" && (words[1] == "create" || words[1] == "new") {
            self.find(RuleId::GhPrCreate, "gh pr create opens a pull request");
        }
        // `gh api -X POST repos/o/r/pulls`: the same pull request by the API
        // (fields given with -f/-F make the request a POST).
        if words.first() == Some(&"api") {
            let method = args.iter().enumerate().skip(1).find_map(|(i, a)| {
                if a.text == "-X" || a.text == "--method" {
                    args.get(i + 1).map(|m| m.text.to_ascii_uppercase())
                } else {
                    a.text
                        .strip_prefix("--method=")
                        .or_else(|| a.text.strip_prefix("-X").filter(|m| !m.is_empty()))
                        .map(str::to_ascii_uppercase)
                }
            });
            let fields = args.iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "-f" | "-F" | "--field" | "--raw-field" | "--input"
                ) || a.text.starts_with("--field=")
                    || a.text.starts_with("--raw-field=")
            });
            let post = method.as_deref().map_or(fields, |m| m == "POST");
            let pulls = words.iter().skip(1).any(|w| {
                let w = w.trim_start_matches('/').trim_end_matches('/');
                w.starts_with("repos/") && w.ends_with("/pulls")
            });
            if post && pulls {
                self.find(
                    RuleId::GhPrCreate,
                    "gh api POST …/pulls opens a pull request",
                );
            }
        }
        self.cur_network = false;
        self.check_path_args(args, &[]);
    }

    // --- deletion -------------------------------------------------------

    fn rm(&mut self, name: &str, args: &[Arg]) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                permute: true,
                ..OptSpec::default()
            },
        );
        let recursive = p.has('r', "recursive") || p.has('R', "recursive");
        let force = p.has('f', "force");
        self.cur_writes = true;
        if p.operands.is_empty() {
            // `rm -rf` with its targets still to come (from `xargs`, or
            // typed without them) is the recursive, forced delete all the same.
            if recursive && force {
                self.find(
                    RuleId::RmRecursive,
                    format!("{name} deletes recursively and by force"),
                );
            } else {
                self.find(RuleId::RmFile, format!("{name} deletes files"));
            }
            return;
        }
        for &i in &p.operands {
            let a = args[i].clone();
            if recursive || name == "rmdir" {
                self.note_removed_dirs(std::slice::from_ref(&a));
            }
            self.delete_target(name, &a, recursive, force);
        }
    }

    /// What a word whose unknown pieces are only numbers the shell makes can delete
    /// (`/tmp/audit-$$.txt`): an entry of the folder before them whose name begins with
    /// the known text between, written with `…` for the rest (`/tmp/audit-…`). `None`
    /// for any other word, and where the entry may be the worktree or what holds it
    /// (`/tmp/w$$` for a worktree `/tmp/wt`): the word is then judged as its folder.
    fn numbered_entry(&self, a: &Arg) -> Option<Arg> {
        if !a.unknown_only_numbers() {
            return None;
        }
        let prefix = a.known_prefix();
        let (dir, start) = match prefix.rfind('/') {
            Some(i) => (&prefix[..=i], &prefix[i + 1..]),
            None => ("./", prefix),
        };
        if let Loc::Outside(p) = self.resolve_arg(&Arg::literal(dir), true) {
            let holds_worktree = self
                .cls
                .worktree
                .strip_prefix(&p)
                .ok()
                .and_then(|rest| rest.components().next())
                .is_none_or(|c| c.as_os_str().to_string_lossy().starts_with(start));
            if holds_worktree {
                return None;
            }
        }
        Some(Arg::literal(format!("{dir}{start}\u{2026}")))
    }

    /// Where a word that begins with an expansion that may be empty leads outside the
    /// worktree without it (`"$DIR"/*`: `/*`), that path as shown.
    fn empty_lead_outside(&self, a: &Arg) -> Option<String> {
        // A guard holds for a named variable only (`shift`, `set --` move the positional
        // ones), expanded whole and quoted (see `Arg::lead_var`).
        let guarded = a.lead_var.as_ref().is_some_and(|v| {
            v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && self.guarded.contains(v)
        });
        if !a.empty_lead || guarded {
            return None;
        }
        let rest = a.text.strip_prefix(crate::word::UNKNOWN)?;
        // Every unknown piece after it may be empty too: `"$A"/"$B"` may be `/`.
        let bare: String = rest
            .chars()
            .filter(|&c| c != crate::word::UNKNOWN)
            .collect();
        if !bare.starts_with('/') {
            return None;
        }
        // The folder the rest names before any pattern.
        let fixed = &bare[..bare.find(['*', '?', '[']).unwrap_or(bare.len())];
        let dir = &fixed[..=fixed.rfind('/')?];
        match self.resolve_arg(&Arg::literal(dir), true) {
            Loc::Outside(p) if !self.is_allowed_outside(&p) => Some(bare),
            _ => None,
        }
    }

    /// One path a deletion reaches (`rm`, `find -delete`).
    fn delete_target(&mut self, name: &str, a: &Arg, recursive: bool, force: bool) {
        let numbered = self.numbered_entry(a);
        let a = numbered.as_ref().unwrap_or(a);
        let trailing = a.text.ends_with('/');
        let shown = display_arg(a);
        match self.resolve_arg(a, trailing) {
            // It may lie outside: as a deletion there, never auto-approved.
            Loc::Unknown => {
                if let Some(shown) = self.empty_lead_outside(a).filter(|_| recursive || force) {
                    // `rm -rf "$DIR"/*` with `DIR` unset or empty is `rm -rf /*`.
                    self.find(
                        RuleId::DeleteOutside,
                        format!(
                            "{name} deletes {shown} where the expansion it begins with is empty \
                             (guard it with ${{VAR:?}})"
                        ),
                    );
                } else if recursive && force {
                    self.find_outside_write(RuleId::RmRecursive, format!("{name} deletes a path that cannot be worked out before running: {shown}"));
                } else {
                    self.find_outside_write(
                        RuleId::RmFile,
                        format!(
                            "{name} deletes a path that cannot be worked out before running: {shown}"
                        ),
                    );
                }
            }
            Loc::Outside(p) if self.is_allowed_outside(&p) => {
                if recursive && force {
                    self.find(
                        RuleId::RmRecursive,
                        format!("{name} deletes recursively: {}", p.display()),
                    );
                } else {
                    self.find(RuleId::RmFile, format!("{name} deletes {}", p.display()));
                }
            }
            Loc::Outside(p) => {
                let whole = self.cls.worktree.starts_with(&p);
                // (`/` itself is the deletion of everything, named below.)
                let in_root = p.parent().is_some() && path::is_system_root(&p);
                let glob_in_root =
                    !(recursive || force) && a.glob && path::glob_may_be_system_root(&p);
                if in_root || glob_in_root {
                    self.find(
                        RuleId::SysRootWrite,
                        format!("{name} deletes in a system root: {}", p.display()),
                    );
                }
                if recursive || force || whole {
                    let what = if whole {
                        "deletes the worktree and what holds it"
                    } else {
                        "deletes outside the worktree"
                    };
                    self.find(
                        RuleId::DeleteOutside,
                        format!("{name} {what}: {}", p.display()),
                    );
                } else {
                    self.find_outside_write(
                        RuleId::PathOutside,
                        format!("{name} deletes outside the worktree: {}", p.display()),
                    );
                }
            }
            Loc::Inside { rel, .. } => {
                if rel.as_os_str().is_empty() {
                    if recursive || force || name == "rmdir" {
                        self.find(
                            RuleId::DeleteOutside,
                            format!("{name} deletes the worktree itself"),
                        );
                    } else {
                        self.find(RuleId::RmFile, format!("{name} {shown}"));
                    }
                } else if self.is_protected(&rel) {
                    self.find(
                        RuleId::ProtectedPath,
                        format!("{name} deletes a protected path: {}", rel.display()),
                    );
                } else if recursive && force {
                    self.find(
                        RuleId::RmRecursive,
                        format!("{name} deletes recursively and forced: {}", rel.display()),
                    );
                } else {
                    self.find(RuleId::RmFile, format!("{name} deletes {}", rel.display()));
                }
            }
        }
    }

    fn find_cmd(&mut self, args: &[Arg], inv: &Invocation, depth: usize) {
        // find [-H|-L|-P] [-D opts] [-Olevel] [starting-point…] [expression]
        let mut i = 1;
        while i < args.len() {
            let t = args[i].text.as_str();
            match t {
                "-H" | "-L" | "-P" => i += 1,
                "-D" => i += 2,
                _ if t.starts_with("-O") && t.len() > 2 => i += 1,
                _ => break,
            }
        }
        // `-H` and `-L` follow a start that is a link (to where it leads); `-L` (and
        // `-follow`) every link below it too.
        let follows_starts = args[1..i]
            .iter()
            .any(|a| matches!(a.text.as_str(), "-H" | "-L"));
        let follows_all = args[1..i].iter().any(|a| a.text == "-L")
            || args[i..].iter().any(|a| a.text == "-follow");
        let mut starts: Vec<Arg> = Vec::new();
        while i < args.len() {
            let t = args[i].text.as_str();
            if t.starts_with('-') || t == "(" || t == "!" || t == "," {
                break;
            }
            let mut start = args[i].clone();
            if follows_starts && !start.text.ends_with('/') {
                start.text.push('/');
            }
            starts.push(start);
            i += 1;
        }
        if starts.is_empty() {
            starts.push(Arg::literal("."));
        }
        for s in &starts {
            if Self::is_path_token(s) {
                self.check_read_path(s);
            }
        }
        // A start outside the worktree decides where `{}` points.
        let worst_start = starts
            .iter()
            .find(|s| matches!(self.resolve_arg(s, true), Loc::Outside(_) | Loc::Unknown))
            .unwrap_or(&starts[0])
            .clone();
        let found_name = self.found_below(&worst_start);
        // Whether an expression before `-delete` (or `-exec rm`) may spare some of what lies
        // below a start (a test such as `-name '*.o'` or `-type f`, `-mindepth 2`): find
        // deletes only what the expression before it matched.
        let mut start_spared = false;
        // Whether a start itself may be among what the expression matches (find gives it
        // to `-exec` as any name it finds): not below `-mindepth 1`, nor where a test before
        // the action rules it out (`-type f` for a folder, `-name` of another name). With
        // `!`, `-o` or parentheses, nothing is ruled out.
        let mut start_excluded = false;
        let combined = args[i..].iter().any(|a| {
            matches!(
                a.text.as_str(),
                "!" | "-not" | "-o" | "-or" | "(" | ")" | ","
            )
        });
        while i < args.len() {
            let t = args[i].text.as_str();
            if !combined {
                match (t, args.get(i + 1)) {
                    ("-mindepth", Some(n)) => {
                        start_excluded |= n.text.parse::<u64>().is_ok_and(|n| n >= 1);
                    }
                    ("-type" | "-xtype", Some(kind)) => {
                        start_excluded |= kind.known && !kind.text.contains('d');
                    }
                    ("-name" | "-iname", Some(p)) if p.known => {
                        let pattern = if t == "-iname" {
                            p.text.to_lowercase()
                        } else {
                            p.text.clone()
                        };
                        start_excluded |= starts.iter().all(|s| {
                            let base = s.text.trim_end_matches('/');
                            let base = base.rsplit('/').next().unwrap_or(base);
                            let base = if base.is_empty() { "/" } else { base };
                            let base = if t == "-iname" {
                                base.to_lowercase()
                            } else {
                                base.to_string()
                            };
                            s.known && glob::Pattern::new(&pattern).is_ok_and(|g| !g.matches(&base))
                        });
                    }
                    _ => {}
                }
            }
            match t {
                "-delete" => {
                    if follows_all {
                        self.find_outside_write(
                            RuleId::RmRecursive,
                            "find -L -delete follows the links below its start, which may lead outside the worktree",
                        );
                    }
                    for s in starts.clone() {
                        // The start itself among what is matched, named otherwise than `.`
                        // (which find never deletes): removed once emptied, as `rm -rf
                        // START` removes it (`find "$PWD" -maxdepth 0 -delete`).
                        let trimmed = s.text.trim_end_matches('/');
                        let dot = matches!(trimmed, "." | "") || trimmed.ends_with("/.");
                        if !start_excluded && !dot && start_spared {
                            self.delete_target("find -delete", &s, true, true);
                            continue;
                        }
                        // Nothing before it spares anything: all below the start goes, at
                        // the worktree's root its whole content, as `rm -rf .` there
                        // deletes it (`.` itself stays, as it does for rm). Something
                        // that may spare part of it (`-name '*.o'`) deletes inside.
                        if start_spared
                            && matches!(self.resolve_arg(&s, true), Loc::Inside { ref rel, .. } if rel.as_os_str().is_empty())
                        {
                            self.find(
                                RuleId::RmRecursive,
                                "find -delete deletes inside the worktree",
                            );
                            continue;
                        }
                        self.delete_target("find -delete", &s, true, true);
                    }
                    i += 1;
                }
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let begin = i + 1;
                    let mut end = begin;
                    while end < args.len() && args[end].text != ";" && args[end].text != "+" {
                        end += 1;
                    }
                    let inner: Vec<Arg> = args[begin..end]
                        .iter()
                        .enumerate()
                        .map(|(k, a)| {
                            if a.text.contains("{}") {
                                let mut b = a.clone();
                                b.text = a.text.replace("{}", &found_name);
                                // As the program word, `{}` runs each file found.
                                b.known = a.known && worst_start.known && k > 0;
                                b
                            } else {
                                a.clone()
                            }
                        })
                        .collect();
                    if !inner.is_empty() {
                        self.judge_argv(&inner, inv, depth + 1);
                    }
                    // `find ~ -exec rm {} +` deletes every file find walks to:
                    // below a start outside the worktree, the recursive
                    // deletion `find ~ -delete` is.
                    let deletes_found =
                        args.get(begin).is_some_and(|a| {
                            matches!(program_name(&a.text), "rm" | "unlink" | "shred" | "rmdir")
                        }) && args[begin + 1..end].iter().any(|a| a.text.contains("{}"));
                    if deletes_found {
                        // Plain `rm` removes files, never a folder: at the worktree's root
                        // it empties the worktree of files, but leaves the worktree.
                        let recursive = args[begin + 1..end].iter().any(|a| {
                            opts::is_long(&a.text, "recursive")
                                || (a.text.starts_with('-')
                                    && !a.text.starts_with("--")
                                    && (a.text.contains('r') || a.text.contains('R')))
                        }) || program_name(&args[begin].text) == "rmdir";
                        if follows_all {
                            self.find_outside_write(
                                RuleId::RmRecursive,
                                format!(
                                    "find -L {t} {} follows the links below its start, which may lead outside the worktree",
                                    args[begin].text
                                ),
                            );
                        }
                        for s in &starts {
                            // The start itself among what is matched: `rm -rf START`
                            // (`find "$PWD" -maxdepth 0 -exec rm -rf {} +` removes the
                            // worktree).
                            if recursive && !start_excluded {
                                let what = format!("find {t} {}", args[begin].text);
                                self.delete_target(&what, s, true, false);
                                continue;
                            }
                            let at_root = matches!(self.resolve_arg(s, true), Loc::Inside { ref rel, .. } if rel.as_os_str().is_empty());
                            let outside = matches!(self.resolve_arg(s, true), Loc::Outside(ref p) if !self.is_allowed_outside(p));
                            let what = format!("find {t} {}", args[begin].text);
                            if at_root && !start_spared && !recursive && !outside {
                                self.find(
                                    RuleId::RmRecursive,
                                    format!("{what} deletes every file in the worktree"),
                                );
                            } else if outside || (at_root && !start_spared) {
                                // At the worktree's root with nothing sparing any of it,
                                // the whole content goes, as with `find . -delete`.
                                self.delete_target(&what, s, true, false);
                            }
                        }
                    }
                    i = end + 1;
                }
                "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                    if let Some(f) = args.get(i + 1).cloned() {
                        self.check_write_target(&f, true, &format!("find {t}"));
                    }
                    // `-fprintf FILE FORMAT`: the format is no action either.
                    i += if t == "-fprintf" { 3 } else { 2 };
                }
                // Tests that read a file of their own (its times, its inode, or the names
                // in it): a path like any argument (`find . -newer /etc/shadow` tells
                // when the file changed). `-newerXY` takes a date when Y is `t`.
                _ if matches!(
                    t,
                    "-newer" | "-anewer" | "-cnewer" | "-samefile" | "-files0-from"
                ) || (t.len() == 8 && t.starts_with("-newer") && !t.ends_with('t')) =>
                {
                    if let Some(f) = args.get(i + 1).cloned() {
                        self.check_read_path(&f);
                    }
                    i += 2;
                }
                // Options and actions that match everything: the starts stay matched.
                "-depth"
                | "-d"
                | "-xdev"
                | "-mount"
                | "-noleaf"
                | "-ignore_readdir_race"
                | "-daystart"
                | "-follow"
                | "-print"
                | "-print0"
                | "-true"
                | "-warn"
                | "-nowarn" => i += 1,
                // `-maxdepth 0` looks at the starts alone, which `-delete` leaves.
                "-maxdepth" => {
                    start_spared |= args.get(i + 1).is_some_and(|n| n.text == "0");
                    i += 2;
                }
                "-regextype" => i += 2,
                // `-mindepth 1` spares the start alone, which `rm -rf .` spares too.
                "-mindepth" => {
                    start_spared |= args
                        .get(i + 1)
                        .is_none_or(|n| n.text.parse::<u64>().map_or(true, |n| n > 1));
                    i += 2;
                }
                // A name test that matches every name (`-name '*'`) spares nothing.
                "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename"
                    if args.get(i + 1).is_some_and(|p| p.known && p.text == "*") =>
                {
                    i += 2;
                }
                // Tests and actions that take a value: the value is no action of its
                // own (`find . -name -delete` deletes nothing).
                _ if FIND_VALUE_OPERANDS.contains(&t) => {
                    start_spared = true;
                    i += 2;
                }
                _ => {
                    start_spared = true;
                    i += 1;
                }
            }
        }
        // find is no read of the green list: `find … -exec grep` is not
        // greener than `find` alone (named after what it runs, at the same level).
        self.find(
            RuleId::DefaultUnknown,
            "find is not one of the reads that run unasked",
        );
    }

    /// How a name `find` finds below `start` is judged: `START/{}`, a name in that
    /// folder. Below `/` find walks the system roots: `/etc/{}` stands for what it finds
    /// (`find / -exec chmod 777 {} +` changes /etc).
    fn found_below(&self, start: &Arg) -> String {
        if start.known
            && matches!(self.resolve_arg(start, true), Loc::Outside(ref p) if p == Path::new("/"))
        {
            return "/etc/{}".into();
        }
        format!("{}/{{}}", start.text.trim_end_matches('/'))
    }

    /// What `find` prints, as [`Self::found_below`] names it, one start a line: `None`
    /// unless it prints only the names it finds (no `-printf`, `-exec`, `-ls`…) from
    /// starts the line shows.
    pub(crate) fn names_find_prints(&self, args: &[Arg]) -> Option<String> {
        if args.first().map(|a| program_name(&a.text)) != Some("find") {
            return None;
        }
        // Following links (`-L`, `-follow`) its names lead wherever the links do.
        if args
            .iter()
            .any(|a| matches!(a.text.as_str(), "-L" | "-follow"))
        {
            return None;
        }
        let mut i = 1;
        while let Some(a) = args.get(i) {
            match a.text.as_str() {
                "-H" | "-L" | "-P" => i += 1,
                "-D" => i += 2,
                t if t.starts_with("-O") && t.len() > 2 => i += 1,
                _ => break,
            }
        }
        let mut starts = Vec::new();
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if t.starts_with('-') || matches!(t, "(" | "!" | ",") {
                break;
            }
            if !a.known {
                return None;
            }
            starts.push(a.clone());
            i += 1;
        }
        let prints_other = args[i..].iter().any(|a| {
            !a.known
                || matches!(
                    a.text.as_str(),
                    "-printf"
                        | "-fprintf"
                        | "-fprint"
                        | "-fprint0"
                        | "-ls"
                        | "-fls"
                        | "-exec"
                        | "-execdir"
                        | "-ok"
                        | "-okdir"
                        | "-files0-from"
                )
        });
        if prints_other {
            return None;
        }
        if starts.is_empty() {
            starts.push(Arg::literal("."));
        }
        let names: Vec<String> = starts.iter().map(|s| self.found_below(s)).collect();
        Some(names.join("\n") + "\n")
    }

    // --- writers --------------------------------------------------------

    /// Commands ssh runs on this machine through a shell, given with `-o`
    /// (`ProxyCommand`, `LocalCommand`, `KnownHostsCommand`; `Key=Value` or `Key Value`):
    /// each is judged as a line of its own.
    fn ssh_local_commands(&mut self, args: &[Arg], inv: &Invocation) {
        let mut i = 1;
        while i < args.len() {
            let t = args[i].text.as_str();
            if t == "--" {
                break;
            }
            let option = if t == "-o" {
                i += 1;
                args.get(i)
            } else if t.starts_with("-o") {
                Some(&args[i])
            } else {
                None
            };
            i += 1;
            let Some(option) = option else { continue };
            let text = option.text.strip_prefix("-o").unwrap_or(&option.text);
            let Some(split) = text.find(['=', ' ', '\t']) else {
                continue;
            };
            let (key, value) = (
                &text[..split],
                text[split + 1..].trim_start_matches(['=', ' ', '\t']),
            );
            let runs = ["proxycommand", "localcommand", "knownhostscommand"]
                .iter()
                .any(|k| key.eq_ignore_ascii_case(k));
            if runs && !value.eq_ignore_ascii_case("none") {
                let command = Arg {
                    text: value.to_string(),
                    ..option.clone()
                };
                self.shell_string(&command, inv);
            }
        }
    }

    /// What a sed script runs, writes and reads (`sed.rs`): `e COMMAND` is judged as a
    /// line of its own, a command built from the input (`e` alone, `s///e`) cannot be
    /// identified, `w FILE` writes FILE and `r FILE` reads it. A script that is not known
    /// before the line runs (`sed "s/x/$V/"`) is not read.
    fn sed_scripts(&mut self, args: &[Arg], inv: &Invocation) {
        let p = opts::parse(args, 1, &SED_OPTIONS);
        // `… | sed -f -`: the script comes from stdin (and GNU sed's `e` runs commands).
        if p.values_of('f', "file").any(|v| is_stdin_path(&v.text)) {
            self.stdin_program("sed", inv);
        }
        let mut scripts: Vec<Arg> = p.values_of('e', "expression").cloned().collect();
        if scripts.is_empty()
            && !p.has('f', "file")
            && let Some(&first) = p.operands.first()
        {
            scripts.push(args[first].clone());
        }
        for script in scripts {
            let Some(text) = script.value().map(str::to_string) else {
                continue;
            };
            for action in crate::sed::actions(&text) {
                match action {
                    crate::sed::SedAction::Run(cmd) => {
                        self.shell_string(&Arg::literal(cmd), inv);
                    }
                    crate::sed::SedAction::RunBuilt => self.find(
                        RuleId::DynamicProgram,
                        "sed runs text built from its input as a command: the program cannot be identified",
                    ),
                    crate::sed::SedAction::Write(file) => {
                        self.cur_writes = true;
                        let a = self.expand_tilde(Arg {
                            home_based: file.starts_with('~'),
                            ..Arg::literal(file)
                        });
                        self.check_write_target(&a, true, "sed w");
                    }
                    crate::sed::SedAction::Read(file) => {
                        let a = self.expand_tilde(Arg {
                            home_based: file.starts_with('~'),
                            ..Arg::literal(file)
                        });
                        self.check_read_path(&a);
                    }
                }
            }
        }
    }

    /// Commands whose operands (or some of them) are written.
    /// Programs given as option values: tar's `--to-command` (fed each
    /// file's data on stdin), `--checkpoint-action=exec=`, `-I`/
    /// `--use-compress-program`, `--info-script`/`--new-volume-script`/
    /// `--rsh-command`, and rsync's `-e`/`--rsh`. Each is run by a shell.
    fn option_programs(&mut self, name: &str, args: &[Arg], inv: &Invocation) {
        let name = crate::editor::canonical(name);
        // ed's script on its standard input (`ed -s FILE <<'EOF'`, or printed into its pipe
        // by `printf`): what its commands run,
        // write and read.
        if matches!(name, "ed" | "red")
            && let Some(script) = written_stdin(inv).or_else(|| inv.io.piped.clone())
        {
            for e in crate::editor::ed_effects(&script) {
                let io = CmdIo {
                    stdin_pipe: e.piped,
                    ..CmdIo::default()
                };
                let nested = Invocation {
                    io: &io,
                    procsub_network: inv.procsub_network,
                    subs_network: inv.subs_network,
                };
                self.shell_string(&Arg::literal(e.line), &nested);
            }
        }
        let Some((short, long, language)) = option_program_table(name) else {
            return;
        };
        let mut found: Vec<(Arg, bool)> = Vec::new();
        let mut i = 1;
        while i < args.len() {
            let a = &args[i];
            let t = a.text.as_str();
            if t == "--" {
                break;
            }
            let piped = t.starts_with("--to-command");
            // vim's flags bunched before `-c` (`ex -sc CMD`, `vim -esc CMD`).
            let bunched_c = language == OptionLanguage::ExCommand
                && t.len() > 2
                && t.starts_with('-')
                && !t.starts_with("--")
                && t.ends_with('c')
                && t[1..].chars().all(|c| c.is_ascii_alphabetic());
            if short.contains(&t) || long.contains(&t) || bunched_c {
                if let Some(v) = args.get(i + 1) {
                    found.push((v.clone(), piped));
                }
                i += 2;
                continue;
            }
            let value = long
                .iter()
                .find_map(|l| t.strip_prefix(l).and_then(|r| r.strip_prefix('=')))
                .or_else(|| t.strip_prefix("--checkpoint-action=exec="))
                .or_else(|| {
                    short
                        .iter()
                        .find_map(|s| t.strip_prefix(s).filter(|r| !r.is_empty()))
                });
            if let Some(v) = value {
                found.push((
                    Arg {
                        text: v.to_string(),
                        ..a.clone()
                    },
                    piped,
                ));
            }
            i += 1;
        }
        if language == OptionLanguage::ExCommand {
            // `vim +':!CMD' file`: a `+` word is a command too (not `+N` nor `+/PATTERN`,
            // which only place the cursor).
            found.extend(args[1..].iter().filter_map(|a| {
                a.text
                    .strip_prefix('+')
                    .filter(|c| {
                        !c.is_empty()
                            && !c.chars().all(|d| d.is_ascii_digit())
                            && !c.starts_with(['/', '?'])
                    })
                    .map(|c| (Arg::literal(c), false))
            }));
            // An ex script given on standard input (`ex -s FILE <<'EOF'`).
            let script_mode = name == "ex"
                || args[1..].iter().any(|a| {
                    a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text[1..].contains(['e', 'E'])
                        && a.text[1..].chars().all(|c| c.is_ascii_alphabetic())
                });
            if script_mode && let Some(script) = written_stdin(inv).or_else(|| inv.io.piped.clone())
            {
                found.extend(script.lines().map(|l| (Arg::literal(l), false)));
            }
        }
        let found: Vec<(Arg, bool)> = if language == OptionLanguage::ExCommand {
            // The editor's commands in one script: a `:cd` or `:edit` holds for the next.
            let texts: Vec<&str> = found.iter().map(|(v, _)| v.text.as_str()).collect();
            crate::editor::ex_script_effects(&texts)
                .into_iter()
                .map(|e| (Arg::literal(e.line), e.piped))
                .collect()
        } else {
            found
                .into_iter()
                .flat_map(|(v, piped)| {
                    language
                        .shell_lines(&v)
                        .into_iter()
                        .map(move |(line, also_piped)| (line, piped || also_piped))
                })
                .collect()
        };
        for (v, piped) in found {
            let io = CmdIo {
                stdin_pipe: piped,
                ..CmdIo::default()
            };
            let nested = Invocation {
                io: &io,
                procsub_network: inv.procsub_network,
                subs_network: inv.subs_network,
            };
            self.shell_string(&v, &nested);
        }
    }

    fn writer(&mut self, name: &str, args: &[Arg]) {
        let spec = match name {
            "cp" | "mv" | "install" | "ln" => OptSpec {
                short_arg: "tSmogb",
                long_arg: &[
                    "target-directory",
                    "suffix",
                    "mode",
                    "owner",
                    "group",
                    "backup",
                    "reflink",
                    "sparse",
                    "preserve",
                    "context",
                ],
                permute: true,
            },
            "touch" => OptSpec {
                short_arg: "rdt",
                long_arg: &["reference", "date", "time"],
                permute: true,
            },
            "mkdir" => OptSpec {
                short_arg: "m",
                long_arg: &["mode", "context"],
                permute: true,
            },
            "truncate" => OptSpec {
                short_arg: "sr",
                long_arg: &["size", "reference"],
                permute: true,
            },
            "shred" => OptSpec {
                short_arg: "nsx",
                long_arg: &["iterations", "size", "random-source"],
                permute: true,
            },
            "sed" => SED_OPTIONS,
            "sort" => OptSpec {
                short_arg: "oTSkt",
                long_arg: &[
                    "output",
                    "temporary-directory",
                    "buffer-size",
                    "key",
                    "field-separator",
                ],
                permute: true,
            },
            "setfacl" => OptSpec {
                short_arg: "mxMX",
                long_arg: &["modify", "remove", "modify-file", "remove-file"],
                permute: true,
            },
            "chmod" | "chown" | "chgrp" | "chattr" => OptSpec {
                short_arg: "",
                long_arg: &[],
                permute: true,
            },
            "curl" => OptSpec {
                short_arg: "oDcKdHXuAeFTxEwbrmzyYCQ",
                long_arg: &[
                    "output",
                    "dump-header",
                    "cookie-jar",
                    "config",
                    "data",
                    "header",
                    "request",
                    "user",
                    "user-agent",
                    "referer",
                    "form",
                    "upload-file",
                    "proxy",
                    "cert",
                    "write-out",
                    "cookie",
                    "range",
                    "max-time",
                    "output-dir",
                    "trace",
                    "trace-ascii",
                    "data-binary",
                    "data-raw",
                    "data-urlencode",
                    "json",
                    "url",
                    "libcurl",
                    "stderr",
                    "etag-save",
                    "etag-compare",
                    "hsts",
                    "alt-svc",
                ],
                permute: true,
            },
            "wget" => OptSpec {
                short_arg: "OoPaeUtTwQiDlA",
                long_arg: &[
                    "output-document",
                    "output-file",
                    "directory-prefix",
                    "append-output",
                    "user-agent",
                    "header",
                    "post-data",
                    "post-file",
                    "tries",
                    "timeout",
                    "input-file",
                    "save-cookies",
                    "load-cookies",
                    "hsts-file",
                    "warc-file",
                    "rejected-log",
                ],
                permute: true,
            },
            "tar" => OptSpec {
                short_arg: "fCbgKNTVX",
                long_arg: &[
                    "file",
                    "directory",
                    "exclude",
                    "files-from",
                    "transform",
                    "use-compress-program",
                    "to-command",
                ],
                permute: true,
            },
            "unzip" => OptSpec {
                short_arg: "dx",
                long_arg: &[],
                permute: true,
            },
            "rsync" => OptSpec {
                short_arg: "eBfT",
                long_arg: &[
                    "rsh",
                    "rsync-path",
                    "filter",
                    "exclude",
                    "include",
                    "temp-dir",
                    "log-file",
                    "password-file",
                    "backup-dir",
                    "partial-dir",
                    "chown",
                    "chmod",
                ],
                permute: true,
            },
            _ => OptSpec {
                permute: true,
                ..OptSpec::default()
            },
        };
        let p = opts::parse(args, 1, &spec);
        if matches!(name, "curl" | "wget") && self.ctx == Context::Line {
            self.note_downloads(name, &p, args);
        }
        let mut targets: Vec<usize> = Vec::new();
        let mut extra: Vec<(Arg, &str)> = Vec::new();
        let ops = &p.operands;
        match name {
            "cp" | "install" | "ln" | "link" => {
                if let Some(t) = p.value_of('t', "target-directory") {
                    extra.push((t.clone(), "target directory"));
                } else if name == "install" && p.has('d', "directory") {
                    targets.extend(ops.iter().copied());
                } else if ops.len() >= 2 {
                    targets.push(*ops.last().unwrap_or(&0));
                } else if name != "cp" {
                    // `ln -s TARGET` makes a link named after it in the cwd.
                }
                let cp_links = name == "cp" && (p.has('l', "link") || p.has('s', "symbolic-link"));
                if name == "ln" || name == "link" || cp_links {
                    // A link that points outside is a way out for later reads
                    // and writes through it. A hard link (`ln`, `link`, `cp -l`) is a
                    // new name of the file itself, made writable through the worktree:
                    // an event the kernel fence decides (SPEC §2), never auto-approved.
                    let hard = match name {
                        "link" => true,
                        "cp" => p.has('l', "link"),
                        _ => !p.has('s', "symbolic"),
                    };
                    for &i in ops {
                        if targets.contains(&i) || !Self::is_path_value(&args[i]) {
                            continue;
                        }
                        let found = match self.resolve_arg(&args[i], true) {
                            Loc::Outside(p) if !path::is_exception(&p, &[]) => {
                                format!("links to a path outside the worktree: {}", p.display())
                            }
                            Loc::Unknown => format!(
                                "links to a path that cannot be worked out: {}",
                                display_arg(&args[i])
                            ),
                            _ => continue,
                        };
                        if hard {
                            self.find_outside_write(RuleId::PathOutside, found);
                        } else {
                            self.find(RuleId::PathOutside, found);
                        }
                    }
                }
            }
            "mv" => {
                // A move deletes its sources and writes its destination.
                targets.extend(ops.iter().copied());
                // Its sources are no longer there for a later `cd` (without -t, the last
                // operand is the destination).
                let sources = if p.value_of('t', "target-directory").is_some() {
                    &ops[..]
                } else {
                    &ops[..ops.len().saturating_sub(1)]
                };
                let sources: Vec<Arg> = sources.iter().map(|&i| args[i].clone()).collect();
                self.note_removed_dirs(&sources);
                if let Some(t) = p.value_of('t', "target-directory") {
                    extra.push((t.clone(), "target directory"));
                }
            }
            "sort" => {
                if let Some(o) = p.value_of('o', "output") {
                    extra.push((o.clone(), "sort -o"));
                }
            }
            "setfacl" => targets.extend(ops.iter().copied()),
            "chmod" | "chown" | "chgrp" | "chattr" => {
                let skip_first = !args.iter().any(|a| a.text.starts_with("--reference"));
                if matches!(name, "chmod" | "chattr") && skip_first {
                    // A mode may begin with `-` (`chmod -w F`, `chattr -i F`): the first
                    // word that is none of the program's own options is the mode, every
                    // word after it a file.
                    targets.extend(mode_operands(name, args));
                } else {
                    targets.extend(ops.iter().copied().skip(usize::from(skip_first)));
                }
                // `-R` on `/` changes every system root below it. (`-r` is a
                // chmod mode, not recursion.)
                let recursive = args.iter().skip(1).any(|a| {
                    opts::is_long(&a.text, "recursive")
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('R'))
                });
                if recursive {
                    for &i in &targets {
                        if let Loc::Outside(p) = self.resolve_arg(&args[i], true)
                            && p.parent().is_none()
                        {
                            self.find(
                                RuleId::SysRootWrite,
                                format!("{name} -R reaches every system root: {}", p.display()),
                            );
                        }
                    }
                }
            }
            "sed" => {
                let in_place = args.iter().skip(1).any(|a| {
                    opts::is_long(&a.text, "in-place")
                        || (a.text.starts_with('-')
                            && !a.text.starts_with("--")
                            && a.text.contains('i')
                            && !a.text.starts_with("-e"))
                });
                if in_place {
                    let script_given = p.has('e', "expression") || p.has('f', "file");
                    targets.extend(ops.iter().copied().skip(usize::from(!script_given)));
                }
            }
            "curl" => {
                for (c, l) in [
                    ('o', "output"),
                    ('D', "dump-header"),
                    ('c', "cookie-jar"),
                    ('\0', "output-dir"),
                    ('\0', "trace"),
                    ('\0', "trace-ascii"),
                    // Files curl writes besides the download: the C code of the
                    // transfer, its error output, the ETag, the HSTS and Alt-Svc caches.
                    ('\0', "libcurl"),
                    ('\0', "stderr"),
                    ('\0', "etag-save"),
                    ('\0', "hsts"),
                    ('\0', "alt-svc"),
                ] {
                    for v in p.values_of(c, l) {
                        if v.text != "-" {
                            extra.push((v.clone(), "download"));
                        }
                    }
                }
                for v in p
                    .values_of('d', "data")
                    .chain(p.values_of('F', "form"))
                    .chain(p.values_of('T', "upload-file"))
                    .chain(p.values_of('\0', "data-binary"))
                {
                    let v = v.clone();
                    self.note_secret_in(&v);
                }
                // A `file://` URL reads the file it names (`curl file:///root/.ssh/id_rsa`).
                let urls: Vec<Arg> = ops
                    .iter()
                    .map(|&i| &args[i])
                    .chain(p.values_of('\0', "url"))
                    .cloned()
                    .collect();
                for u in urls {
                    for path in curl_file_paths(&u.text) {
                        let file = Arg {
                            known: u.known,
                            // curl's own `[a-z]` ranges: a pattern of names.
                            glob: path.contains('['),
                            ..Arg::literal(path)
                        };
                        self.note_secret_in(&file);
                        self.check_read_path(&file);
                    }
                }
            }
            "wget" => {
                for (c, l) in [
                    ('O', "output-document"),
                    ('o', "output-file"),
                    ('P', "directory-prefix"),
                    ('a', "append-output"),
                    ('\0', "save-cookies"),
                    ('\0', "hsts-file"),
                    ('\0', "warc-file"),
                    ('\0', "rejected-log"),
                ] {
                    for v in p.values_of(c, l) {
                        if v.text != "-" {
                            extra.push((v.clone(), "download"));
                        }
                    }
                }
            }
            "tar" => {
                let first = args.get(1).map(|a| a.text.as_str()).unwrap_or("");
                let bundled = !first.starts_with('-') && first.contains('x');
                let extract = bundled || p.has('x', "extract") || p.has('\0', "get");
                let create = (!first.starts_with('-')
                    && (first.contains('c') || first.contains('r') || first.contains('u')))
                    || p.has('c', "create")
                    || p.has('r', "append");
                if extract {
                    let dir = p.value_of('C', "directory").cloned();
                    match &dir {
                        Some(d) => extra.push((d.clone(), "tar extract")),
                        None => extra.push((Arg::literal("."), "tar extract")),
                    }
                    // The members named (`tar xf t.tar .envrc`) are written by their names
                    // there: after the archive, which a bundled `f` takes from the operands.
                    let skip = match (!first.starts_with('-'), first.contains('f')) {
                        (true, true) => 2,
                        (true, false) => 1,
                        _ => 0,
                    };
                    let base = dir.as_ref().map_or(".".to_string(), |d| d.text.clone());
                    let known_dir = dir.as_ref().is_none_or(|d| d.known);
                    // `-P`: members named from `/` are written there.
                    let absolute = p.has('P', "absolute-names")
                        || (!first.starts_with('-') && first.contains('P'));
                    let members: Vec<&Arg> = ops
                        .iter()
                        .skip(skip)
                        .map(|&m| &args[m])
                        .filter(|m| !m.text.starts_with('-'))
                        .collect();
                    if absolute && members.is_empty() {
                        extra.push((Arg::unknown(), "tar -P extract"));
                    }
                    for member in members {
                        if member.known && absolute && member.text.starts_with('/') {
                            extra.push((member.clone(), "tar extract"));
                        } else if member.known && known_dir {
                            let at = format!("{base}/{}", member.text.trim_start_matches("./"));
                            extra.push((Arg::literal(at), "tar extract"));
                        }
                    }
                    // `--one-top-level=DIR`: everything goes into DIR (an absolute DIR
                    // wherever `-C` is).
                    for dir in self.attached_values(args, "--one-top-level=") {
                        extra.push((dir, "tar extract"));
                    }
                }
                if create {
                    let file = p.value_of('f', "file").cloned().or_else(|| {
                        // `tar czf FILE …`: the bundled f takes the first operand.
                        (!first.starts_with('-') && first.contains('f'))
                            .then(|| ops.get(1).map(|&i| args[i].clone()))
                            .flatten()
                    });
                    if let Some(f) = file
                        && f.text != "-"
                    {
                        extra.push((f, "tar archive"));
                    }
                }
            }
            "unzip" => match p.value_of('d', "") {
                Some(d) => extra.push((d.clone(), "unzip")),
                None => extra.push((Arg::literal("."), "unzip")),
            },
            "rsync" => {
                // `--backup-dir=DIR` (with `-b`): replaced files are moved there.
                for dir in self.attached_values(args, "--backup-dir=") {
                    extra.push((dir, "rsync --backup-dir"));
                }
                if ops.len() >= 2 {
                    let dest = *ops.last().unwrap_or(&0);
                    if !is_remote_spec(&args[dest].text) {
                        targets.push(dest);
                        // `--delete` (and `--del`, `--delete-after`…) removes what
                        // the source lacks, everywhere below the destination: a
                        // recursive deletion there.
                        if p.opts.iter().any(|o| {
                            matches!(o, opts::Opt::Long(l, _) if l.starts_with("del") || opts::abbreviates(l, "delete"))
                        }) {
                            let d = args[dest].clone();
                            self.delete_target("rsync --delete", &d, true, false);
                        }
                    }
                }
            }
            "perl" => {}
            _ => targets.extend(ops.iter().copied()),
        }
        for &i in &targets {
            let a = args[i].clone();
            // ln follows a destination that is a link only to a folder, where it makes its
            // link inside; a link to anything else is itself replaced (`ln -sf x link`),
            // and with `-n`/`-T` the destination is never followed.
            let follow = name != "ln"
                || (!p.has('n', "no-dereference")
                    && !p.has('T', "no-target-directory")
                    && self.names_a_folder(&a));
            self.check_write_target(&a, follow, name);
        }
        // The words that carry an option's written file (`-o F`, `-oF`, `--output=F`) are
        // writes, judged as such, not reads as well (`curl -o ~/.ssh/known_hosts` reads
        // no credential).
        let mut skip = targets.clone();
        for (i, w) in args.iter().enumerate().skip(1) {
            let written = extra.iter().any(|(a, _)| {
                a.known
                    && !a.text.is_empty()
                    && ((w.text == a.text && args[i - 1].text.starts_with('-'))
                        || (w.text.starts_with('-')
                            && w.text.len() > a.text.len()
                            && w.text.ends_with(a.text.as_str())))
            });
            if written {
                skip.push(i);
            }
        }
        for (a, what) in extra {
            self.check_write_target(&a, true, what);
        }
        self.check_path_args(args, &skip);
        if matches!(name, "cp" | "install" | "ln" | "link" | "rsync") {
            self.check_names_made_in_folder(name, args, &p);
        }
        if matches!(name, "ln" | "link" | "cp") {
            self.note_links(name, args, &p);
        }
    }

    /// A copy or link into a folder makes a name there after its source: `cp tpl/.envrc
    /// .` writes `./.envrc`, `ln -s ../x/.vscode` makes `./.vscode`, `rsync -a tpl/.claude
    /// .` makes `./.claude`. The destination's own name was judged as a write already; a
    /// name made this way is judged for the protected paths, where the folder is one:
    /// written as a folder (`.`, `..`, a trailing `/`, `-t DIR`, more than one source)
    /// or one on disk. (`rsync SRC/` copies what SRC holds, whose names the line does not
    /// show.)
    fn check_names_made_in_folder(&mut self, name: &str, args: &[Arg], p: &opts::Parsed) {
        let ops: Vec<&Arg> = p.operands.iter().map(|&i| &args[i]).collect();
        // `cp -rT tpl .`: what tpl holds goes into the folder, by its names.
        if name == "cp" && p.has('T', "no-target-directory") {
            if let [src, dest] = ops.as_slice() {
                self.check_contents_copied(name, src, dest);
            }
            return;
        }
        if p.has('T', "no-target-directory") || (name == "install" && p.has('d', "directory")) {
            return;
        }
        let (sources, folder): (Vec<&Arg>, Arg) =
            match (p.value_of('t', "target-directory"), ops.as_slice()) {
                (Some(dir), _) if name != "rsync" => (ops.clone(), dir.clone()),
                (_, []) => return,
                // `ln -s TARGET` makes the link in the working directory.
                (_, [src]) if matches!(name, "ln" | "link") => (vec![*src], Arg::literal(".")),
                (_, [_]) => return,
                (_, [srcs @ .., dest]) => {
                    let t = dest.text.as_str();
                    let written_as_folder = srcs.len() > 1
                        || t.ends_with('/')
                        || matches!(t.rsplit('/').next(), Some("." | ".."));
                    let on_disk = || match self.resolve_arg(dest, true) {
                        Loc::Inside { path, rel } => {
                            rel.as_os_str().is_empty() || self.cls.fs.is_dir(&path)
                        }
                        Loc::Outside(path) => self.cls.fs.is_dir(&path),
                        Loc::Unknown => false,
                    };
                    if !written_as_folder && !on_disk() {
                        return;
                    }
                    (srcs.to_vec(), (*dest).clone())
                }
            };
        if name == "rsync" && is_remote_spec(&folder.text) {
            return;
        }
        for src in sources {
            // `cp -a tpl/. .`, `rsync -a tpl/ .`: what the folder holds, by its names.
            let contents = (name == "cp" && (src.text.ends_with("/.") || src.text == "."))
                || (name == "rsync" && src.text.ends_with('/') && !is_remote_spec(&src.text));
            if src.known && contents {
                self.check_contents_copied(name, src, &folder);
                continue;
            }
            if !src.known
                || (name == "rsync" && (src.text.ends_with('/') || is_remote_spec(&src.text)))
            {
                continue;
            }
            let base = src
                .text
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("");
            if base.is_empty() || base == "." || base == ".." {
                continue;
            }
            self.check_name_made(name, &folder, base);
        }
    }

    /// A name `entry` made in `folder` by `name` (a copy, a link), judged for the protected
    /// paths; whether it is one.
    fn check_name_made(&mut self, name: &str, folder: &Arg, entry: &str) -> bool {
        let made = Arg {
            text: format!("{}/{entry}", folder.text.trim_end_matches('/')),
            ..folder.clone()
        };
        if let Loc::Inside { rel, .. } = self.resolve_arg(&made, false)
            && self.is_protected(&rel)
        {
            self.find(
                RuleId::ProtectedPath,
                format!("{name} makes a protected path: {}", rel.display()),
            );
            return true;
        }
        false
    }

    /// The names a copy of folder `src`'s contents makes in `folder`, as the folder holds
    /// them now (at most 4,096 read): each judged for the protected paths (`cp -a tpl/. .`
    /// with `tpl/.vscode` makes `./.vscode`).
    fn check_contents_copied(&mut self, name: &str, src: &Arg, folder: &Arg) {
        let (Loc::Inside { path, .. } | Loc::Outside(path)) = self.resolve_arg(src, true) else {
            return;
        };
        let Some(entries) = self.cls.fs.list_dir(&path, 4096) else {
            return;
        };
        for entry in entries.iter().take(4096) {
            if self.check_name_made(name, folder, &entry.to_string_lossy()) {
                return;
            }
        }
    }

    /// Remembers the links `ln` (and `cp -s`) makes, so that later words of the line
    /// are resolved through them (`ln -s .git/hooks h && echo x > h/pre-commit` writes a
    /// hook). A symbolic link points to its target as written, taken from the link's
    /// folder; a hard link (or `ln -r`) to the file the target names from here. Where a
    /// NAME that exists may be a folder (the link then goes inside it), both are taken.
    fn note_links(&mut self, name: &str, args: &[Arg], p: &opts::Parsed) {
        let symbolic = p.has('s', "symbolic") || (name == "cp" && p.has('s', "symbolic-link"));
        if name == "cp" && !symbolic {
            return;
        }
        let as_written = symbolic && !p.has('r', "relative");
        let ops: Vec<&Arg> = p.operands.iter().map(|&i| &args[i]).collect();
        let base = |a: &Arg| {
            a.text
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string()
        };
        let inside = |dir: &Arg, src: &Arg| Arg {
            text: format!("{}/{}", dir.text.trim_end_matches('/'), base(src)),
            ..dir.clone()
        };
        // (what the link points to, where the link is)
        let mut made: Vec<(&Arg, Arg)> = Vec::new();
        if let Some(dir) = p.value_of('t', "target-directory") {
            made.extend(ops.iter().map(|s| (*s, inside(dir, s))));
        } else {
            match ops.as_slice() {
                [] => {}
                [src] => made.push((src, Arg::literal(base(src)))),
                [src, dest] => {
                    let folder = dest.text.ends_with('/');
                    let exists = !folder
                        && matches!(self.resolve_arg(dest, false), Loc::Inside { ref path, .. } | Loc::Outside(ref path) if self.cls.fs.exists(path));
                    if !folder || p.has('T', "no-target-directory") {
                        made.push((src, (*dest).clone()));
                    }
                    if (folder || exists) && !p.has('T', "no-target-directory") {
                        made.push((src, inside(dest, src)));
                    }
                }
                [srcs @ .., dir] => made.extend(srcs.iter().map(|s| (*s, inside(dir, s)))),
            }
        }
        for (src, link) in made {
            if !src.known || !link.known || src.text.is_empty() {
                continue;
            }
            let at = match self.resolve_arg(&link, false) {
                Loc::Inside { path, .. } | Loc::Outside(path) => path,
                Loc::Unknown => continue,
            };
            let target = if as_written {
                PathBuf::from(&src.text)
            } else {
                match self.resolve_arg(src, true) {
                    Loc::Inside { path, .. } | Loc::Outside(path) => path,
                    Loc::Unknown => continue,
                }
            };
            if self.links.len() < 64 {
                self.links.insert(at, target);
            }
        }
    }

    fn dd(&mut self, args: &[Arg]) {
        for a in args.iter().skip(1) {
            // SPEC §2 lists `dd of=…` among the disk tools, whatever it names: refused
            // outright, except into a device that discards what it is given (`of=/dev/null`,
            // a read benchmark). The target is also judged as the write it is.
            if let Some(of) = a.text.strip_prefix("of=") {
                let target = self.expand_tilde(Arg {
                    text: of.to_string(),
                    known: a.known,
                    glob: a.glob,
                    home_based: of.starts_with('~'),
                    ..Arg::default()
                });
                let discards = target.known
                    && matches!(self.resolve_arg(&target, true), Loc::Outside(p) if path::is_harmless_device(&p));
                if !discards {
                    self.find(RuleId::DiskTools, format!("dd writes raw blocks: of={of}"));
                }
                if target.known {
                    self.check_write_target(&target, true, "dd");
                }
            }
            if let Some(src) = a.text.strip_prefix("if=") {
                let src = self.expand_tilde(Arg {
                    text: src.to_string(),
                    known: a.known,
                    glob: a.glob,
                    home_based: src.starts_with('~'),
                    ..Arg::default()
                });
                self.note_secret_in(&src);
                // The file read is a path argument as `cat`'s are (`dd if=/etc/shadow`,
                // `dd if=~/.ssh/id_rsa`; bash expands `~` after `if=`).
                if src.known {
                    self.check_read_path(&src);
                }
                // Raw blocks read from a disk hold every file on it, credentials included.
                if let Loc::Outside(p) = self.resolve_arg(&src, true)
                    && path::is_block_device(&p)
                {
                    self.find(
                        RuleId::DiskTools,
                        format!("dd reads raw blocks: if={}", p.display()),
                    );
                }
            }
        }
        self.cur_writes = true;
    }

    fn kill(&mut self, args: &[Arg]) {
        // Signal names in any case, with or without `SIG` (`-sigkill`, `-s SigKill`);
        // the number as a number (`-09`, `-s 0009`).
        let sigkill = |s: &str| {
            let s = s.trim_start_matches('-').to_ascii_uppercase();
            let s = s.strip_prefix("SIG").unwrap_or(&s);
            let number = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            s == "KILL" || (number && s.trim_start_matches('0') == "9")
        };
        let mut forced = false;
        let mut i = 1;
        while i < args.len() {
            let t = args[i].text.as_str();
            if t == "-s" || t == "-n" || t == "--signal" {
                forced |= args.get(i + 1).is_some_and(|a| sigkill(&a.text));
                i += 2;
                continue;
            }
            if let Some(v) = t
                .strip_prefix("--signal=")
                .or_else(|| t.strip_prefix("-s").filter(|v| !v.is_empty()))
                .or_else(|| t.strip_prefix("-n").filter(|v| !v.is_empty()))
            {
                // `-sigkill` is the signal's name, `-sKILL` its option: either way.
                forced |= sigkill(v) || sigkill(t);
                i += 1;
                continue;
            }
            if t.starts_with('-') && t.len() > 1 && !t.starts_with("--") && sigkill(t) {
                forced = true;
            }
            i += 1;
        }
        if forced {
            self.find(
                RuleId::ProcKill,
                "kill -9 kills without letting the process clean up",
            );
        }
    }

    fn ip(&mut self, args: &[Arg]) {
        // ip takes any prefix of an option, object or command name (`ip li set`,
        // `ip rou add`, `ip -fam inet …`), and some options take a value.
        let prefix_of = |w: &str, name: &str, least: usize| w.len() >= least && name.starts_with(w);
        let mut words: Vec<&str> = Vec::new();
        let mut i = 1;
        while i < args.len() {
            let t = args[i].text.as_str();
            if let Some(opt) = t.strip_prefix('-').map(|o| o.trim_start_matches('-')) {
                if prefix_of(opt, "batch", 1) {
                    self.find(
                        RuleId::NetFirewall,
                        "ip -batch runs the ip commands a file holds",
                    );
                    return;
                }
                let takes_value = opt == "n"
                    || prefix_of(opt, "netns", 2)
                    || opt == "f"
                    || prefix_of(opt, "family", 2)
                    || prefix_of(opt, "rcvbuf", 2)
                    || opt == "l"
                    || prefix_of(opt, "loops", 2);
                i += if takes_value { 2 } else { 1 };
                continue;
            }
            words.push(t);
            i += 1;
        }
        let Some(object) = words.first().copied() else {
            return;
        };
        let objects = [
            "address",
            "addrlabel",
            "maddress",
            "route",
            "rule",
            "neighbour",
            "neighbor",
            "ntable",
            "link",
            "l2tp",
            "fou",
            "tunnel",
            "tuntap",
            "tap",
            "token",
            "xfrm",
            "mroute",
            "mrule",
            "netns",
            "vrf",
            "sr",
            "nexthop",
            "mptcp",
            "macsec",
            "ioam",
        ];
        let Some(&named) = objects.iter().find(|o| o.starts_with(object)) else {
            return;
        };
        let verbs = [
            "add", "append", "attach", "change", "chg", "delete", "exec", "flush", "prepend",
            "replace", "restore", "set", "update", "del",
        ];
        // One letter: `a` adds and `d` deletes everywhere; `s` is `set` for links and
        // `show` elsewhere.
        let changes = |w: &str| match w.len() {
            0 => false,
            1 => w == "a" || w == "d" || (w == "s" && named == "link"),
            _ => verbs.iter().any(|v| v.starts_with(w)),
        };
        if words.iter().skip(1).any(|w| changes(w)) {
            self.find(
                RuleId::NetFirewall,
                format!("ip {named} changes network configuration"),
            );
        }
    }

    // --- packages -------------------------------------------------------

    fn system_packages(&mut self, name: &str, args: &[Arg]) {
        let words: Vec<&str> = args.iter().skip(1).map(|a| a.text.as_str()).collect();
        // Options before the subcommand that take the next word as their value
        // (`apt-get -o Dpkg::Options::=--force-confnew install jq`, `dnf -c F install`).
        let value_options: &[&str] = match name {
            "apt" | "apt-get" | "aptitude" => &[
                "-o",
                "-c",
                "-t",
                "-a",
                "--option",
                "--config-file",
                "--target-release",
                "--default-release",
                "--host-architecture",
            ],
            "dnf" | "yum" | "microdnf" => &[
                "-c",
                "-d",
                "-e",
                "-x",
                "-R",
                "--config",
                "--releasever",
                "--installroot",
                "--enablerepo",
                "--disablerepo",
                "--repo",
                "--repoid",
                "--debuglevel",
                "--errorlevel",
                "--exclude",
                "--setopt",
                "--forcearch",
                "--repofrompath",
                "--color",
                "--destdir",
                "--downloaddir",
                "--randomwait",
                "--rpmverbosity",
            ],
            "zypper" => &[
                "-c",
                "-R",
                "-p",
                "-D",
                "--config",
                "--root",
                "--plus-repo",
                "--reposd-dir",
                "--cache-dir",
                "--raw-cache-dir",
                "--solv-cache-dir",
                "--pkg-cache-dir",
            ],
            "apk" => &[
                "-X",
                "-p",
                "--repository",
                "--root",
                "--arch",
                "--cache-dir",
                "--keys-dir",
                "--repositories-file",
            ],
            "flatpak" => &["--installation"],
            _ => &[],
        };
        let mut first_word = "";
        let mut k = 0;
        while k < words.len() {
            if value_options.contains(&words[k]) {
                k += 2;
                continue;
            }
            if !words[k].starts_with('-') {
                first_word = words[k];
                break;
            }
            k += 1;
        }
        let mutating = match name {
            "pacman" => words.iter().any(|w| {
                (w.starts_with("-S") && !w[2..].contains(['s', 'i', 'l', 'g', 'p']))
                    || w.starts_with("-R")
                    || w.starts_with("-U")
                    || *w == "--sync"
                    || *w == "--remove"
                    || *w == "--upgrade"
            }),
            "dpkg" => words.iter().any(|w| {
                matches!(
                    *w,
                    "-i" | "-r"
                        | "-P"
                        | "--install"
                        | "--remove"
                        | "--purge"
                        | "--unpack"
                        | "--configure"
                ) || (w.starts_with('-')
                    && !w.starts_with("--")
                    && w.contains(['i', 'r', 'P'])
                    && w.len() <= 3)
            }),
            "rpm" => words.iter().any(|w| {
                w.starts_with("-i")
                    || w.starts_with("-U")
                    || w.starts_with("-e")
                    || w.starts_with("-F")
                    || matches!(*w, "--install" | "--upgrade" | "--erase")
            }),
            "nix-env" => words.iter().any(|w| {
                matches!(
                    *w,
                    "--install" | "--uninstall" | "--upgrade" | "--set" | "--rollback"
                ) || nix_env_changing_flags(w)
            }),
            _ => matches!(
                first_word,
                "install"
                    | "in"
                    | "reinstall"
                    | "remove"
                    | "rm"
                    | "erase"
                    | "purge"
                    | "autoremove"
                    | "upgrade"
                    | "up"
                    | "update"
                    | "full-upgrade"
                    | "dist-upgrade"
                    | "dup"
                    | "downgrade"
                    | "add"
                    | "del"
                    | "uninstall"
                    | "refresh"
                    | "revert"
                    | "build-dep"
                    | "groupinstall"
                    | "group"
                    | "fix"
                    | "link"
                    | "unlink"
                    | "tap"
                    | "patch"
                    | "satisfy"
                    | "source"
                    | "-i"
                    | "-S"
            ),
        };
        if mutating {
            self.find(RuleId::PkgSystem, format!("{name} changes system packages"));
        }
        self.cur_writes |= mutating;
        self.check_path_args(args, &[]);
    }

    fn pip(&mut self, args: &[Arg], sub_index: usize) {
        // pip's own options may come before the subcommand (`pip -q install`, `pip
        // --proxy URL install`); those that take a value take the next word.
        const VALUE_OPTIONS: &[&str] = &[
            "--python",
            "--log",
            "--log-file",
            "--local-log",
            "--keyring-provider",
            "--proxy",
            "--retries",
            "--timeout",
            "--exists-action",
            "--trusted-host",
            "--cert",
            "--client-cert",
            "--cache-dir",
            "--src",
            "--use-feature",
            "--use-deprecated",
            "--resume-retries",
            "-i",
            "--index-url",
            "--extra-index-url",
            "-f",
            "--find-links",
            "-c",
            "--constraint",
            "-r",
            "--requirement",
        ];
        let mut sub_index = sub_index;
        while let Some(a) = args.get(sub_index) {
            if VALUE_OPTIONS.contains(&a.text.as_str()) {
                sub_index += 2;
            } else if a.text.starts_with('-') {
                sub_index += 1;
            } else {
                break;
            }
        }
        let sub = args.get(sub_index).map(|a| a.text.as_str()).unwrap_or("");
        // `pip config set|unset|edit` writes a pip config file: the user's
        // (`~/.config/pip/pip.conf`) unless `--global` names the system's
        // (`/etc/pip.conf`) or `--site` the environment's. Every later pip outside the
        // sandbox reads the user's and the system's (an index set there serves every
        // install).
        if sub == "config"
            && let Some(action) = args[sub_index + 1..]
                .iter()
                .find(|a| !a.text.starts_with('-'))
            && matches!(action.text.as_str(), "set" | "unset" | "edit")
        {
            let has = |f: &str| args[sub_index..].iter().any(|a| a.text == f);
            let file = if has("--global") {
                Some(Arg::literal("/etc/pip.conf"))
            } else if has("--site") {
                None
            } else {
                Some(match crate::word::Scope::home(self) {
                    Some(h) => Arg::literal(format!("{h}/.config/pip/pip.conf")),
                    None => Arg::unknown(),
                })
            };
            self.cur_writes = true;
            if let Some(file) = file {
                self.check_write_target(&file, true, "pip config");
            }
        }
        if matches!(sub, "install" | "uninstall" | "download" | "wheel") {
            self.cur_writes = true;
            let rest = &args[sub_index..];
            let local = rest.iter().any(|a| {
                matches!(a.text.as_str(), "-t" | "--target" | "--prefix" | "--root")
                    || a.text.starts_with("--target=")
                    || a.text.starts_with("--prefix=")
            }) || sub == "download"
                || sub == "wheel";
            let pip_in_venv = {
                let prog = &args[0].text;
                prog.contains('/')
                    && matches!(self.resolve_arg(&args[0], false), Loc::Inside { .. })
            };
            // `uv pip` installs into the project's virtualenv (`.venv`, or the one
            // `VIRTUAL_ENV` names) and refuses to run without one; only `--system` (and
            // `--break-system-packages` with it) reaches the system's Python, which
            // `dev_tool` judges a global install.
            let pip_in_venv = pip_in_venv
                || (program_name(&args[0].text) == "uv"
                    && !rest.iter().any(|a| {
                        matches!(a.text.as_str(), "--system" | "--python" | "-p")
                            || a.text.starts_with("--python=")
                    }));
            if !local && !self.state.venv && !pip_in_venv {
                self.find(
                    RuleId::PkgGlobal,
                    format!("pip {sub} outside a virtualenv changes the system's Python"),
                );
            }
            let rest = rest.to_vec();
            self.write_option_values(
                "pip",
                &rest,
                &[
                    "-t",
                    "--target",
                    "--prefix",
                    "--root",
                    "-d",
                    "--dest",
                    "-w",
                    "--wheel-dir",
                ],
            );
        }
        self.check_path_args(args, &[]);
    }

    /// `npm config set|delete|edit|fix` (and `npm set`) writes an npm config file: the
    /// user's `~/.npmrc` unless `--location project` names the project's (`./.npmrc`) or
    /// `--location global`/`-g` the installation's. Every later npm outside the sandbox
    /// reads the user's and the installation's (a registry set there serves every
    /// install), and `~/.npmrc` holds the user's registry tokens.
    fn npm_config_change(&mut self, args: &[Arg], global: bool) {
        let location = args.iter().enumerate().skip(1).find_map(|(i, a)| {
            let t = a.text.as_str();
            t.strip_prefix("--location=")
                .map(str::to_string)
                .or_else(|| {
                    (t == "--location" || t == "-L")
                        .then(|| args.get(i + 1).map(|v| v.text.clone()))
                        .flatten()
                })
        });
        // The installation's lies under npm's prefix, which the line does not show.
        let file = match location.as_deref() {
            _ if global => Arg::unknown(),
            Some("project") => Arg::literal(".npmrc"),
            Some("user") | None => match crate::word::Scope::home(self) {
                Some(h) => Arg::literal(format!("{h}/.npmrc")),
                None => Arg::unknown(),
            },
            Some(_) => Arg::unknown(),
        };
        self.check_write_target(&file, true, "npm config");
    }

    fn test_runner(&mut self, name: &str, args: &[Arg]) {
        let is_runner = match name {
            "pytest" | "pyright" => true,
            "tsc" => args.iter().any(|a| a.text == "--noEmit"),
            // `--fix-only` and `--add-noqa` rewrite the sources as `--fix` does;
            // `mypy --install-types` installs packages.
            "ruff" => {
                args.get(1).is_some_and(|a| a.text == "check")
                    && !args
                        .iter()
                        .any(|a| matches!(a.text.as_str(), "--fix" | "--fix-only" | "--add-noqa"))
            }
            "mypy" => !args.iter().any(|a| a.text == "--install-types"),
            _ => false,
        };
        if is_runner {
            self.cur_test_runner = true;
        } else {
            self.cur_writes = true;
        }
    }

    /// npm's other spellings of `--global`: a value for it (`--global=true`; npm reads
    /// any but `false`, `0` or nothing as on), the letter among bundled short flags
    /// (`-gD`: nopt splits a word of one-letter shorthands), `-L global` (the shorthand
    /// of `--location`), and the `npm_config_global`
    /// or `npm_config_location` variable the line or the environment sets (npm reads
    /// its `npm_config_*` variables whatever their case).
    fn npm_global_spelling(&self, args: &[Arg]) -> bool {
        let on = |v: &str| !matches!(v, "" | "false" | "0");
        let flag = args.iter().skip(1).take_while(|a| a.text != "--").any(|a| {
            let t = a.text.as_str();
            if let Some(v) = t
                .strip_prefix("--global=")
                .or_else(|| t.strip_prefix("-g="))
            {
                return on(v);
            }
            // `-reg` is the one shorthand of its own that holds the letter (`--registry`).
            t.strip_prefix('-').is_some_and(|letters| {
                !letters.starts_with('-')
                    && letters.len() > 1
                    && letters != "reg"
                    && letters.chars().all(|c| c.is_ascii_alphabetic())
                    && letters.contains('g')
            })
        }) || args
            .windows(2)
            .any(|w| w[0].text == "-L" && w[1].text == "global");
        let variable = |wanted: &str| {
            let line = self
                .state
                .vars
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case(wanted))
                .map(|(_, v)| v.clone());
            let env = self
                .req
                .env
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case(wanted))
                .filter(|(k, _)| !self.state.vars.contains_key(*k))
                .map(|(_, v)| Some(v.clone()));
            // A value the line does not show may well be on.
            line.chain(env).any(|v| {
                v.is_none_or(|v| {
                    if wanted.ends_with("location") {
                        v == "global"
                    } else {
                        on(&v)
                    }
                })
            })
        };
        flag || variable("npm_config_global") || variable("npm_config_location")
    }

    /// Where a package tool's subcommand words are in `args`: not options, not
    /// `+toolchain`, not the value of an option that takes one.
    fn subcommand_words(name: &str, args: &[Arg]) -> Vec<usize> {
        let mut words = Vec::new();
        // Options of one tool that take the next word as their value (before the
        // subcommand: `docker --context prod push`, `npm --tag beta publish`).
        let own_values: &[&str] = match name {
            "docker" | "podman" | "nerdctl" | "buildah" | "docker-compose" => &[
                "-f",
                "--file",
                "-p",
                "--project-name",
                "--project-directory",
                "--env-file",
                "--profile",
                "--ansi",
                "--parallel",
                "--progress",
                "-c",
                "--context",
                "-H",
                "--host",
                "-l",
                "--log-level",
                "--tlscacert",
                "--tlscert",
                "--tlskey",
                "--url",
                "--connection",
                "--root",
                "--runroot",
                "--storage-driver",
            ],
            "npm" | "pnpm" | "yarn" | "bun" => &[
                "--tag",
                "--otp",
                "--access",
                "--userconfig",
                "--globalconfig",
                "--cache",
                "--loglevel",
                "--auth-type",
                "--scope",
            ],
            "cargo" => &["--color", "--target-dir", "--lockfile-path"],
            _ => &[],
        };
        let mut i = 1;
        while i < args.len() {
            let w = args[i].text.as_str();
            if own_values.contains(&w) {
                i += 2;
                continue;
            }
            // pnpm's `-r` (`--recursive`) and `-w` (`--workspace-root`) take no value.
            let pnpm_flag = name == "pnpm" && matches!(w, "-r" | "-w");
            if !pnpm_flag
                && matches!(
                    w,
                    "-w" | "--workspace"
                        | "--prefix"
                        | "-C"
                        | "--dir"
                        | "--filter"
                        | "-F"
                        | "--cwd"
                        | "--location"
                        | "--registry"
                        | "--manifest-path"
                        | "--config"
                        | "-Z"
                        | "--repository"
                        | "-r"
                )
            {
                i += 2;
                continue;
            }
            if !w.starts_with('-') && !w.starts_with('+') {
                words.push(i);
            }
            i += 1;
        }
        words
    }

    /// Language package managers and build tools: publishing, global
    /// installs, test runners, builds. A cargo subcommand is judged as the
    /// commands its aliases expand to.
    /// Whether the active conda environment (`CONDA_PREFIX`, as the line or the session
    /// sets it) lies inside the worktree.
    fn conda_env_inside(&self) -> bool {
        let prefix = match self.state.vars.get("CONDA_PREFIX") {
            Some(v) => v.clone(),
            None => self.req.env.get("CONDA_PREFIX").cloned(),
        };
        prefix
            .is_some_and(|p| matches!(self.resolve_arg(&Arg::literal(p), true), Loc::Inside { .. }))
    }

    fn dev_tool(&mut self, name: &str, args: &[Arg], depth: usize) {
        if name != "cargo" {
            return self.dev_tool_as_written(name, args, depth);
        }
        match self.cargo_expansions(args) {
            Ok(commands) => {
                for command in commands {
                    self.dev_tool_as_written(name, &command, depth);
                }
            }
            Err(why) => {
                // In a line the exec is judged again; at exec nothing is, and cargo
                // expands an alias in its own process: one that cannot be read may be
                // `publish`.
                let rule = if self.ctx == Context::Exec {
                    RuleId::PkgPublish
                } else {
                    RuleId::DefaultUnknown
                };
                self.find(rule, why);
                self.dev_tool_as_written(name, args, depth);
            }
        }
    }

    /// `cargo ARGS` as each command it runs: the subcommand, when it is no cargo
    /// builtin and an alias defines it, replaced by the alias's words (every
    /// definition cargo may see, and their join), and again for an alias of an
    /// alias. An error says which alias cannot be read.
    fn cargo_expansions(&self, args: &[Arg]) -> Result<Vec<Vec<Arg>>, String> {
        // cargo refuses an alias that comes back to itself; more commands than this
        // is no alias a person writes.
        const MOST: usize = 16;
        let mut done = Vec::new();
        let mut work: Vec<(Vec<Arg>, Vec<String>)> = vec![(args.to_vec(), Vec::new())];
        while let Some((argv, expanded)) = work.pop() {
            if done.len() + work.len() > MOST {
                return Err("cargo aliases expand to too many commands to judge".into());
            }
            let at = Self::subcommand_words("cargo", &argv).first().copied();
            let Some(at) = at.filter(|&at| argv[at].known) else {
                done.push(argv);
                continue;
            };
            let sub = argv[at].text.clone();
            if tool_commands::CARGO_BUILTINS.contains(&sub.as_str()) || expanded.contains(&sub) {
                done.push(argv);
                continue;
            }
            let definitions = self.cargo_alias(&argv[..at], &sub).map_err(|why| {
                format!(
                    "cargo {sub}: its alias cannot be read ({why}); \
                     cargo may run any command in its place"
                )
            })?;
            if definitions.is_empty() {
                // A program `cargo-SUB`, whose exec is judged on its own.
                done.push(argv);
                continue;
            }
            let mut expansions = definitions.clone();
            if definitions.len() > 1 {
                expansions.push(definitions.concat());
            }
            for words in expansions {
                let mut command = argv[..at].to_vec();
                command.extend(words.iter().map(Arg::literal));
                command.extend_from_slice(&argv[at + 1..]);
                let mut expanded = expanded.clone();
                expanded.push(sub.clone());
                work.push((command, expanded));
            }
        }
        Ok(done)
    }

    /// The definitions of cargo's alias `name` (see [`tool_commands::CargoConfig`]);
    /// `before` are the words before the subcommand.
    fn cargo_alias(&self, before: &[Arg], name: &str) -> Result<Vec<Vec<String>>, String> {
        let var = |n: &str| -> Option<Option<String>> {
            match self.state.vars.get(n) {
                Some(v) => Some(v.clone()),
                None => self.req.env.get(n).map(|v| Some(v.clone())),
            }
        };
        let cwd = self
            .cwd_path()
            .ok_or("the working directory is not known")?;
        let mut cli = Vec::new();
        let mut i = 1;
        while i < before.len() {
            let a = &before[i];
            if a.text == "-C" {
                return Err("cargo -C reads the config of another folder".into());
            }
            let value = if a.text == "--config" {
                i += 1;
                before.get(i)
            } else {
                a.text.strip_prefix("--config=").map(|_| a)
            };
            if let Some(v) = value {
                if !v.known {
                    return Err("a --config value is not known before running".into());
                }
                let v = v.text.strip_prefix("--config=").unwrap_or(&v.text);
                cli.push(v.to_string());
            }
            i += 1;
        }
        let cargo_home = match var("CARGO_HOME") {
            Some(Some(h)) => cwd.join(h),
            Some(None) => return Err("CARGO_HOME is not known before running".into()),
            None => self
                .cls
                .home
                .as_ref()
                .map(|h| h.join(".cargo"))
                .ok_or("the home folder is not known")?,
        };
        tool_commands::CargoConfig {
            fs: self.cls.fs.as_ref(),
            cwd: &cwd,
            cargo_home: &cargo_home,
            env_value: var(&tool_commands::env_name(name)),
            cli: &cli,
        }
        .alias(name)
    }

    fn dev_tool_as_written(&mut self, name: &str, args: &[Arg], depth: usize) {
        let words: Vec<&str> = Self::subcommand_words(name, args)
            .into_iter()
            .map(|i| args[i].text.as_str())
            .collect();
        // The word as written (`npm pub`), and the command the tool takes it for.
        let typed = words.first().copied().unwrap_or("");
        let sub = match name {
            "npm" => tool_commands::npm_command(typed).unwrap_or(typed),
            "gem" => tool_commands::gem_command(typed).unwrap_or(typed),
            // A bare `yarn` (`yarn --frozen-lockfile`) is `yarn install`.
            "yarn"
                if typed.is_empty()
                    && !args.iter().skip(1).any(|a| {
                        matches!(a.text.as_str(), "-v" | "--version" | "-h" | "--help")
                    }) =>
            {
                "install"
            }
            _ => typed,
        };
        let sub2 = words.get(1).copied().unwrap_or("");
        let has = |f: &[&str]| {
            args.iter().skip(1).any(|a| {
                f.contains(&a.text.as_str())
                    || f.iter().any(|x| x.ends_with('=') && a.text.starts_with(x))
            })
        };
        let global = has(&["-g", "--global", "--location=global"])
            || args
                .windows(2)
                .any(|w| w[0].text == "--location" && w[1].text == "global")
            || (matches!(name, "npm" | "pnpm" | "bun") && self.npm_global_spelling(args));
        // `npm unpublish` takes a published version (or the whole package) back off the
        // registry: a change to what others install, as a publish is.
        let unpublish = name == "npm" && sub == "unpublish";
        // `npm dist-tag add|rm` moves what `npm install NAME` gets; `npm deprecate` marks a
        // published version: changes to what others install, as a publish is.
        let retags = name == "npm"
            && (matches!(sub, "deprecate" | "undeprecate")
                || (matches!(sub, "dist-tag" | "dist-tags") && matches!(sub2, "add" | "rm")));
        let publish = match name {
            "npm" => sub == "publish" || unpublish || retags,
            "bun" | "cargo" | "poetry" | "flit" | "hatch" | "uv" | "deno" => sub == "publish",
            // `pnpm pm CMD` runs pnpm's own CMD whatever the scripts say.
            "pnpm" => sub == "publish" || (sub == "pm" && sub2 == "publish"),
            // `yarn workspace NAME publish` (classic) or `… npm publish` (berry), and
            // `yarn workspaces foreach … npm publish`, publish from the workspaces.
            "yarn" => {
                let publishes = |w: &[&str]| {
                    w.first() == Some(&"publish") || w.starts_with(&["npm", "publish"])
                };
                publishes(&words)
                    || (sub == "workspace" && publishes(words.get(2..).unwrap_or_default()))
                    || (sub == "workspaces" && words.windows(2).any(|w| w == ["npm", "publish"]))
            }
            "twine" => sub == "upload",
            "gem" => sub == "push",
            // `docker push`, and the spellings that push an image: `image push`,
            // `manifest push`, `compose push`, `build --push` (buildx's too, and its
            // `bake`), an output of type registry or with `push=true`.
            "docker" | "podman" | "nerdctl" | "buildah" | "docker-compose" => {
                let pushes_output = args.iter().any(|a| {
                    let t = a.text.as_str();
                    t == "--push"
                        || (t.starts_with("--push=") && !t.ends_with("=false"))
                        || ((t.starts_with("--output=") || t.starts_with("-o"))
                            && (t.contains("type=registry") || t.contains("push=true")))
                }) || args.windows(2).any(|w| {
                    matches!(w[0].text.as_str(), "--output" | "-o")
                        && (w[1].text.contains("type=registry") || w[1].text.contains("push=true"))
                });
                // Compose's subcommand is the first word after its own options: `push`,
                // or `build --push`. What `run`/`exec` run in a container is no publish
                // for saying `push` (`docker compose exec api git stash push`).
                let compose_sub = match (name, sub) {
                    ("docker-compose", _) => Some(sub),
                    (_, "compose") => Some(sub2),
                    _ => None,
                };
                match compose_sub {
                    Some(c) => c == "push" || (c == "build" && pushes_output),
                    None => {
                        sub == "push"
                            || (matches!(sub, "image" | "manifest") && sub2 == "push")
                            || (sub == "buildx" && words.contains(&"push"))
                            || (matches!(sub, "build" | "buildx" | "image" | "bake")
                                && pushes_output)
                    }
                }
            }
            "helm" => sub == "push",
            _ => false,
        };
        // SPEC §2 names `npm publish` and `cargo publish` whatever their options: a dry run
        // of them is refused as the publish is.
        if publish {
            let what = if unpublish {
                "removes a published package from the registry"
            } else if retags {
                "changes what the registry gives those who install the package"
            } else {
                "publishes a package"
            };
            self.find(RuleId::PkgPublish, format!("{name} {typed} {what}"));
            return self.check_path_args(args, &[]);
        }
        let installs = matches!(
            sub,
            "install"
                | "i"
                | "in"
                | "ins"
                | "inst"
                | "insta"
                | "instal"
                | "isnt"
                | "isnta"
                | "isntal"
                | "isntall"
                | "add"
                | "update"
                | "up"
                | "uninstall"
                | "remove"
                | "rm"
                | "un"
                | "link"
        );
        // `npm link`, `yarn link` and `bun link` with no package register the current
        // one globally: a symlink in the global folder and its bins on the global path,
        // as `npm install -g .` would put them.
        let links_globally = sub == "link" && words.len() == 1;
        let global_install = match name {
            "npm" | "bun" => (installs && global) || links_globally,
            "pnpm" => installs && global,
            "yarn" => sub == "global" || links_globally,
            // `cargo install --list` lists what is installed.
            // `cargo binstall` (cargo-binstall) installs prebuilt binaries as `cargo install`.
            "cargo" => {
                (matches!(sub, "install" | "binstall") && !has(&["--list"])) || sub == "uninstall"
            }
            "pipx" => matches!(
                sub,
                "install" | "uninstall" | "upgrade" | "inject" | "reinstall"
            ),
            "gem" => {
                matches!(sub, "install" | "uninstall" | "update") && !has(&["--install-dir", "-i"])
            }
            "go" => sub == "install",
            "uv" => {
                (sub == "tool" && matches!(sub2, "install" | "uninstall" | "upgrade"))
                    || (sub == "pip" && sub2 == "install" && has(&["--system"]))
            }
            "composer" => sub == "global",
            "deno" => sub == "install" && global,
            // volta's tools go to its own folder in the home, on every shell's path.
            "volta" => matches!(sub, "install" | "uninstall"),
            // conda installs into the active environment, `base` when none is: the
            // user's conda folder, outside the worktree unless the environment or a
            // named prefix lies in it.
            "conda" | "mamba" | "micromamba" => {
                matches!(
                    sub,
                    "install" | "remove" | "uninstall" | "update" | "upgrade" | "create"
                ) && !has(&["-p", "--prefix", "--prefix="])
                    && !self.conda_env_inside()
            }
            _ => false,
        };
        if global_install {
            self.find(
                RuleId::PkgGlobal,
                format!("{name} {sub} installs outside the worktree"),
            );
        }
        if name == "uv" && sub == "pip" {
            return self.pip(args, 2);
        }
        if name == "npm"
            && ((sub == "config" && NPM_CONFIG_CHANGES.contains(&sub2)) || sub == "set")
        {
            self.npm_config_change(args, global);
        }
        // Test runners and type checkers (trusted by name in plan mode).
        let runner = match name {
            "cargo" => {
                matches!(sub, "test" | "t" | "check" | "c")
                    || (sub == "clippy" && !args.iter().any(|a| a.text == "--fix"))
                    || (sub == "nextest" && sub2 == "run")
            }
            "npm" => matches!(sub, "test" | "t" | "tst") || (sub == "run" && sub2 == "test"),
            "pnpm" | "yarn" | "bun" => sub == "test" || (sub == "run" && sub2 == "test"),
            "go" => matches!(sub, "test" | "vet"),
            "deno" => matches!(sub, "test" | "check" | "lint"),
            _ => false,
        };
        if runner {
            self.cur_test_runner = true;
        } else if !matches!(
            sub,
            "" | "version"
                | "--version"
                | "help"
                | "list"
                | "ls"
                | "search"
                | "info"
                | "view"
                | "show"
                | "outdated"
                | "tree"
                | "metadata"
                | "env"
                | "config"
                | "ps"
                | "images"
                | "inspect"
                | "logs"
        ) {
            self.cur_writes = true;
        }
        // Tools that make a project or a virtualenv in the folder they are given (`cargo
        // new DIR`, `cargo init DIR`, `uv venv DIR`, `uv init DIR`, `poetry new DIR`): every
        // word after the subcommand that is not an option is taken for that folder (an
        // option's value as well, which at worst names a folder inside).
        let makes_folder = match name {
            "cargo" | "poetry" | "hatch" => matches!(sub, "new" | "init"),
            "uv" => matches!(sub, "venv" | "init"),
            "deno" => sub == "init",
            _ => false,
        };
        if makes_folder && let Some(at) = args.iter().position(|a| a.text == typed) {
            for dir in args[at + 1..].iter().filter(|a| !a.text.starts_with('-')) {
                let dir = dir.clone();
                self.check_write_target(&dir, true, name);
            }
        }
        let outputs: &[&str] = match name {
            "go" => &["-o"],
            "cargo" => &["--target-dir", "--out-dir", "--artifact-dir", "--root"],
            "npm" | "pnpm" | "yarn" | "bun" => {
                &["--prefix", "--modules-folder", "--pack-destination"]
            }
            "docker" | "podman" if matches!(sub, "save" | "export") => &["-o", "--output"],
            "helm" => &["-d", "--destination"],
            "deno" => &["--output", "-o"],
            "uv" | "poetry" => &[
                "--target",
                "-t",
                "--prefix",
                "--directory",
                "-o",
                "--output",
            ],
            _ => &[],
        };
        self.write_option_values(name, args, outputs);
        if let Some(dest) = copy_destination(name, args) {
            let a = args[dest].clone();
            self.check_write_target(&a, true, name);
        }
        if matches!(name, "npm" | "pnpm" | "yarn" | "bun")
            && matches!(sub, "exec" | "x" | "dlx")
            && let Some(at) = args.iter().position(|a| a.text == typed)
        {
            self.package_exec(&args[at..], depth);
        }
        self.check_path_args(args, &[]);
    }

    /// What a package runner runs: `npx CMD ARGS`, `npm exec [--] CMD ARGS`,
    /// `npm exec -c 'CMD'` (`args[0]` is `npx` or the `exec` word). The
    /// command keeps its own options: `npx rm -rf ~` is `rm -rf ~`.
    fn package_exec(&mut self, args: &[Arg], depth: usize) {
        self.find(
            RuleId::DefaultUnknown,
            "a package runner may download the package it runs",
        );
        if depth >= MAX_WRAPPERS {
            return;
        }
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "pcw",
                long_arg: &[
                    "package",
                    "call",
                    "workspace",
                    "prefix",
                    "registry",
                    "cache",
                    "userconfig",
                    "node-options",
                    "script-shell",
                ],
                permute: false,
            },
        );
        // What a runner reads on its stdin is not a program: judged without it.
        let io = CmdIo::default();
        let inv = Invocation {
            io: &io,
            procsub_network: false,
            subs_network: false,
        };
        if let Some(c) = p.value_of('c', "call").cloned() {
            self.shell_string(&c, &inv);
        } else if p.first_operand < args.len() {
            self.judge_argv(&args[p.first_operand..], &inv, depth + 1);
        }
    }

    // --- patches --------------------------------------------------------

    fn apply_patch(&mut self, args: &[Arg], inv: &Invocation) {
        let text = written_stdin(inv)
            .or_else(|| args.get(1).and_then(|a| a.value().map(str::to_string)))
            .or_else(|| inv.io.piped.clone());
        match text {
            Some(t) => {
                self.judge_patch(&t, "apply_patch");
            }
            None => {
                self.cur_writes = true;
                self.find(
                    RuleId::PathOutside,
                    "apply_patch: the patch cannot be read before running",
                );
            }
        }
    }

    fn patch_cmd(&mut self, args: &[Arg], inv: &Invocation) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "pidoDrBVzFg",
                long_arg: &["strip", "input", "directory", "output", "reject-file"],
                permute: true,
            },
        );
        if let Some(o) = p.value_of('o', "output").cloned() {
            self.check_write_target(&o, true, "patch -o");
        }
        // `patch -d DIR` works in DIR: it writes there, and the file names
        // in the patch are taken from there.
        let saved_cwd = self.state.cwd.clone();
        if let Some(d) = p.value_of('d', "directory").cloned() {
            let d = self.expand_tilde(d);
            self.check_write_target(&d, true, "patch -d");
            self.state.cwd = match self.resolve_arg(&d, true) {
                Loc::Inside { path, .. } => Cwd::At(path),
                Loc::Outside(p) => Cwd::At(p),
                Loc::Unknown => Cwd::Unknown,
            };
        }
        if let Some(&f) = p.operands.first() {
            let f = args[f].clone();
            self.check_write_target(&f, true, "patch");
        }
        self.patch_from_stdin(inv, "patch");
        let text_known = inv.io.heredoc.is_some()
            || inv.io.herestring.as_ref().is_some_and(|h| h.known)
            || inv.io.piped.is_some();
        if !text_known && p.operands.is_empty() {
            // Files the patch names are not known: it writes where it runs.
            self.check_write_target(&Arg::literal("."), true, "patch");
        }
        self.state.cwd = saved_cwd;
        self.check_path_args(args, &p.operands);
    }

    /// `awk`: `-i inplace` rewrites the files it reads; the program itself
    /// may write files (`print > "F"`) and run commands (`system("…")`,
    /// `print | "cmd"`), which are judged as lines of their own.
    fn awk(&mut self, args: &[Arg], inv: &Invocation) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "fvFielE",
                long_arg: &[
                    "file",
                    "assign",
                    "field-separator",
                    "include",
                    "source",
                    "load",
                    "exec",
                ],
                permute: false,
            },
        );
        let in_place = p
            .values_of('i', "include")
            .any(|v| matches!(v.text.as_str(), "inplace" | "inplace.awk"));
        let from_file = p.has('f', "file") || p.has('E', "exec");
        // `… | awk -f -`: the program comes from stdin (and awk's `system()` runs commands).
        if p.values_of('f', "file")
            .chain(p.values_of('E', "exec"))
            .any(|v| is_stdin_path(&v.text))
        {
            self.stdin_program("awk", inv);
        }
        let mut programs: Vec<Arg> = p.values_of('e', "source").cloned().collect();
        let mut files: Vec<usize> = Vec::new();
        for (n, &i) in p.operands.iter().enumerate() {
            if n == 0 && !from_file && programs.is_empty() {
                programs.push(args[i].clone());
            } else if !is_assignment(&args[i].text) {
                files.push(i);
            }
        }
        if in_place {
            self.cur_writes = true;
            for &i in &files {
                let a = args[i].clone();
                self.check_write_target(&a, true, "awk -i inplace");
            }
        }
        for prog in &programs {
            match prog.value() {
                Some(text) => self.awk_program(text, inv),
                None => self.find(
                    RuleId::DefaultUnknown,
                    "awk runs a program that cannot be read before running",
                ),
            }
        }
        let skip: Vec<usize> = if in_place { files } else { Vec::new() };
        self.check_path_args(args, &skip);
    }

    /// The shell commands inline code hands to the system as string
    /// literals (`os.system("…")`, `subprocess.run("…", shell=True)`,
    /// `execSync('…')`, perl and ruby backticks): each is judged as a line
    /// of its own. A reading of literals, not of the language: a command
    /// built at run time is not seen here (the exec context judges it).
    fn inline_shell_commands(&mut self, name: &str, code: &str) {
        const CALLS: &[&str] = &[
            "system(",
            "popen(",
            "execSync(",
            "exec(",
            "shell_exec(",
            "passthru(",
            "getoutput(",
            "getstatusoutput(",
            "check_output(",
            "run(",
            "call(",
            "Popen(",
        ];
        // The file names the code opens are string literals too (`open("/home/u/.ssh/
        // id_rsa")`, `File.read(File.expand_path("~/.aws/credentials"))`): one that names
        // a credential is read, for the rule on lines that also reach the network.
        for literal in code_string_literals(code).into_iter().take(64) {
            let path_like = code_literal_is_path(&literal)
                && (!literal.starts_with('/') || self.names_a_known_root(&literal));
            let a = Arg {
                home_based: literal.starts_with('~'),
                text: literal,
                known: true,
                ..Arg::default()
            };
            let a = self.expand_tilde(a);
            self.note_secret_in(&a);
            // Named whole, it is read as `cat` would read it (SPEC §2: secret paths).
            if a.text.starts_with('/') && a.text.len() < 4096 {
                let real = self.resolve_through_links(Path::new("/"), &a.text);
                if self.cls.is_secret(&real) {
                    self.find(
                        RuleId::SecretRead,
                        format!(
                            "{name}'s inline code names a credential: {}",
                            real.display()
                        ),
                    );
                    continue;
                }
            }
            // A path the code names is a path token of the line (SPEC §2's path fence
            // judges tokens, not what a program does with them): one that leaves the
            // worktree makes the line red, as `cat /etc/x` does.
            if path_like && a.text.len() < 4096 {
                self.check_read_path(&a);
            }
        }
        self.inline_deletions(name, code);
        let mut found: Vec<String> = Vec::new();
        let subprocess = code.contains("subprocess");
        // Perl and Ruby also call without parentheses (`system "…"`), Lua through
        // `os.execute("…")`.
        let bare_calls: &[&str] = match name {
            "perl" | "ruby" => &["system ", "exec "],
            "lua" | "luajit" => &["execute("],
            _ => &[],
        };
        for call in CALLS.iter().chain(bare_calls) {
            let generic = matches!(
                *call,
                "run(" | "call(" | "check_output(" | "Popen(" | "getoutput(" | "getstatusoutput("
            );
            if (generic && !subprocess) || (*call == "exec(" && is_python(name)) {
                continue;
            }
            for (at, _) in code.match_indices(call).take(16) {
                let rest = code[at + call.len()..].trim_start();
                if let Some(literal) = call_literal(rest, name) {
                    found.push(literal.to_string());
                }
            }
        }
        if matches!(name, "perl" | "ruby") {
            let mut parts = code.split('`');
            parts.next();
            while let (Some(inner), Some(_)) = (parts.next(), parts.next()) {
                found.push(inner.to_string());
            }
            found.extend(command_quotes(code, name).into_iter().map(str::to_string));
        }
        for f in found.into_iter().take(16) {
            // Only what reads as a shell line: a literal that does not parse
            // was not a command.
            if !f.trim().is_empty()
                && f.len() <= crate::parse::INLINE_BYTES
                && matches!(
                    crate::parse::parse(&f),
                    crate::parse::ParseOutcome::Program(_)
                )
            {
                self.walk_nested(&f);
            }
        }
    }

    /// The files and folders inline code deletes by a literal name, judged as `rm`
    /// judges them: a recursive deletion (`shutil.rmtree("/srv")`, ruby's
    /// `FileUtils.rm_rf`, perl's `remove_tree`, node's `rmSync(p, {recursive: true})`)
    /// as `rm -rf`, so that one outside the worktree, or of the worktree itself, is
    /// refused; a single one (`os.remove`, `unlink`) as `rm`. A reading of literals: a
    /// name built at run time is left to the rules on the code itself and, under
    /// `fence run`, to the kernel fence.
    fn inline_deletions(&mut self, name: &str, code: &str) {
        let node_recursive = code.contains("recursive");
        // (call, recursive). The calls are matched where a name ends before them, so
        // `os.remove(` is not `os.removexattr(`, nor `rm(` `perform(`.
        let calls: &[(&str, bool)] = match name {
            "perl" => &[
                ("remove_tree", true),
                ("rmtree", true),
                ("unlink", false),
                ("rmdir", false),
            ],
            "ruby" => &[
                ("rm_rf", true),
                ("rm_r", true),
                ("remove_dir", true),
                ("remove_entry", true),
                ("remove_entry_secure", true),
                ("rmtree", true),
                ("rm_f", false),
                ("rm", false),
                ("delete", false),
                ("unlink", false),
            ],
            "node" | "nodejs" | "bun" | "deno" => &[
                ("rmSync", node_recursive),
                ("rm", node_recursive),
                ("rmdirSync", node_recursive),
                ("rmdir", node_recursive),
                ("remove", true),
                ("removeSync", true),
                ("emptyDirSync", true),
                ("unlinkSync", false),
                ("unlink", false),
            ],
            "php" => &[("unlink", false), ("rmdir", false)],
            _ => &[
                ("rmtree", true),
                ("removedirs", true),
                ("remove", false),
                ("unlink", false),
                ("rmdir", false),
            ],
        };
        let bytes = code.as_bytes();
        for (call, recursive) in calls {
            for (at, _) in code.match_indices(call).take(16) {
                let before = at.checked_sub(1).map(|i| bytes[i]);
                if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                    continue;
                }
                let mut rest = code[at + call.len()..].trim_start();
                // perl and ruby call without parentheses too (`unlink "/x"`).
                match rest.strip_prefix('(') {
                    Some(r) => rest = r.trim_start(),
                    None if matches!(name, "perl" | "ruby") => {}
                    None => continue,
                }
                // The name may be wrapped in the call that expands or joins it
                // (`os.path.expanduser("~/x")`, `File.expand_path("~")`, `Path("/x")`).
                for wrapper in [
                    "os.path.expanduser(",
                    "os.path.abspath(",
                    "os.path.realpath(",
                    "pathlib.Path(",
                    "Path(",
                    "File.expand_path(",
                    "path.resolve(",
                ] {
                    if let Some(r) = rest.strip_prefix(wrapper) {
                        rest = r.trim_start();
                        break;
                    }
                }
                let Some(literal) = call_literal(rest, name) else {
                    continue;
                };
                if literal.is_empty() || literal.len() >= 4096 || literal.contains(['$', '{', '#'])
                {
                    continue;
                }
                let a = self.expand_tilde(Arg {
                    home_based: literal.starts_with('~'),
                    text: literal.to_string(),
                    known: true,
                    ..Arg::default()
                });
                let shown = format!("{name}'s {call}");
                self.delete_target(&shown, &a, *recursive, *recursive);
            }
        }
    }

    /// The string literals an awk program hands to the system: files it
    /// writes, commands it runs.
    fn awk_program(&mut self, text: &str, inv: &Invocation) {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            // A string or a regular expression written in the program is data: a `|` or
            // `>` inside it (`print $1 "|" $2`, `/a|b/`, `"a -> b"`) is no pipe or
            // redirection. A `/` opens a regular expression where an operand is expected
            // (after `~`, `(`, `,`, `{`, `;`, `!`, `&`, `|` or at the start), and divides
            // elsewhere.
            if b[i] == b'"' || (b[i] == b'/' && awk_operand_expected(b, i)) {
                i = awk_literal_end(b, i);
                continue;
            }
            let (op, skip) = if b[i..].starts_with(b"system") {
                ("system", 6)
            } else if b[i] == b'|' && b.get(i + 1) == Some(&b'|') {
                // `||`: a logical or.
                i += 2;
                continue;
            } else if b[i] == b'|' {
                ("|", 1)
            } else if b[i] == b'>' {
                (">", if b.get(i + 1) == Some(&b'>') { 2 } else { 1 })
            } else {
                i += 1;
                continue;
            };
            let at = i;
            let mut j = i + skip;
            while j < b.len() && matches!(b[j], b' ' | b'\t' | b'(') {
                j += 1;
            }
            i += skip;
            // `system(EXPR)` and `print | EXPR` run a command that is not a string written
            // in the program, or not only one (`system("rm " $1)`, `system($0)`); `EXPR |
            // getline` runs EXPR, which is judged when it is a string just before the pipe.
            let called = op == "system"
                && (at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_'))
                && b[at + skip..j].contains(&b'(');
            if op == "|" && b[j..].starts_with(b"getline") {
                match awk_string_before(text, at) {
                    Some(lit) => {
                        self.find(RuleId::DefaultUnknown, "awk runs a command");
                        self.walk_nested(&lit);
                    }
                    None => self.find(
                        RuleId::DynamicProgram,
                        "awk runs a command built at run time (EXPR | getline): the program cannot be identified",
                    ),
                }
                continue;
            }
            let piped_print = op == "|" && {
                let stmt = text[..at]
                    .rsplit([';', '{', '}', '\n'])
                    .next()
                    .unwrap_or("");
                stmt.trim_start().starts_with("print")
            };
            if b.get(j) != Some(&b'"') {
                if called || piped_print {
                    self.find(
                        RuleId::DynamicProgram,
                        "awk runs a command built at run time: the program cannot be identified",
                    );
                }
                continue;
            }
            let Some(len) = text[j + 1..].find('"') else {
                break;
            };
            let lit = crate::word::decode_ansi_c(&text[j + 1..j + 1 + len]);
            i = j + 2 + len;
            // A string followed by more of the expression (`system("rm " $1)`).
            let after = b[i..].iter().find(|c| !matches!(c, b' ' | b'\t'));
            if (called && after != Some(&b')'))
                || (piped_print && !matches!(after, None | Some(b';' | b'}' | b'\n')))
            {
                self.find(
                    RuleId::DynamicProgram,
                    "awk runs a command built at run time: the program cannot be identified",
                );
            }
            // `>` redirects only in a print statement (`$1 > "a"` compares).
            let stmt = text[..at]
                .rsplit([';', '{', '}', '\n'])
                .next()
                .unwrap_or("")
                .trim_start();
            let in_print = stmt.starts_with("print");
            match op {
                ">" if !in_print => {}
                ">" => {
                    if lit != "/dev/stdout" && lit != "/dev/stderr" && lit != "-" {
                        let a = self.expand_tilde(Arg {
                            home_based: lit.starts_with('~'),
                            ..Arg::literal(lit)
                        });
                        self.check_write_target(&a, true, "awk print >");
                    }
                }
                _ => {
                    self.find(RuleId::DefaultUnknown, "awk runs a command");
                    self.stdin_pipe_in = op == "|";
                    self.walk_nested(&lit);
                    self.stdin_pipe_in = false;
                }
            }
        }
        let _ = inv;
    }

    fn patch_from_stdin(&mut self, inv: &Invocation, what: &str) {
        self.cur_writes = true;
        if let Some(doc) = inv.io.heredoc.clone() {
            self.judge_patch(&doc, what);
        } else if let Some(h) = inv
            .io
            .herestring
            .as_ref()
            .and_then(|h| h.value().map(str::to_string))
        {
            self.judge_patch(&h, what);
        } else if let Some(t) = inv.io.piped.clone() {
            self.judge_patch(&t, what);
        }
    }

    /// A patch is judged by the worst path its file lines touch.
    pub fn judge_patch(&mut self, text: &str, what: &str) -> usize {
        self.cur_writes = true;
        let paths = crate::patch::touched_paths(text);
        let named = paths.len();
        if paths.is_empty() {
            self.find(
                RuleId::WriteInside,
                format!("{what}: a patch with no file lines"),
            );
        }
        // Each path is resolved on disk: a patch naming more is not judged in time.
        if paths.len() > MAX_PATCH_PATHS {
            self.find(
                RuleId::TooComplex,
                format!(
                    "{what}: a patch naming {} files is too large to judge",
                    paths.len()
                ),
            );
            return named;
        }
        for p in paths {
            let a = self.expand_tilde(Arg {
                text: p.clone(),
                known: true,
                home_based: p.starts_with('~'),
                ..Arg::default()
            });
            self.check_write_target(&a, true, what);
        }
        named
    }
}

/// The most files a patch may name and still be judged (each is resolved on disk).
const MAX_PATCH_PATHS: usize = 5_000;

/// A cloud client's commands that read or write its own settings only, without a request
/// (`aws configure get`, `gcloud config list`, `az config`, `rclone config show`,
/// `s3cmd --configure`).
fn cloud_client_settings(name: &str, args: &[Arg]) -> bool {
    let first = args
        .iter()
        .skip(1)
        .find(|a| !a.text.starts_with('-'))
        .map(|a| a.text.as_str());
    match name {
        "aws" | "az" => first == Some("configure") || first == Some("config"),
        "gcloud" | "rclone" => first == Some("config"),
        "s3cmd" => args.iter().any(|a| a.text == "--configure"),
        _ => false,
    }
}

/// A wrapper's options, before its command (which starts at the first operand): those in
/// `short_arg` and `long_arg` take a value.
fn leading_options(
    args: &[Arg],
    short_arg: &'static str,
    long_arg: &'static [&'static str],
) -> opts::Parsed {
    opts::parse(
        args,
        1,
        &OptSpec {
            short_arg,
            long_arg,
            permute: false,
        },
    )
}

/// The local destination of a copy tool whose source may be remote
/// (`docker cp`, `kubectl cp`, `aws s3 cp`, `gsutil cp`, `rclone copy`,
/// `s3cmd get`): the index of its last operand, when that is not remote.
fn copy_destination(name: &str, args: &[Arg]) -> Option<usize> {
    let words: Vec<usize> = (1..args.len())
        .filter(|&i| !args[i].text.starts_with('-'))
        .collect();
    let word = |n: usize| words.get(n).map(|&i| args[i].text.as_str()).unwrap_or("");
    let copies = match name {
        "docker" | "podman" | "nerdctl" | "kubectl" | "oc" => word(0) == "cp",
        "rclone" => matches!(
            word(0),
            "copy" | "sync" | "move" | "copyto" | "moveto" | "copyurl"
        ),
        "aws" => word(0) == "s3" && matches!(word(1), "cp" | "sync" | "mv"),
        "gsutil" => matches!(word(0), "cp" | "rsync" | "mv"),
        "s3cmd" => matches!(word(0), "get" | "sync"),
        _ => false,
    };
    let &dest = words.last()?;
    (copies && words.len() >= 3 && !is_remote_spec(&args[dest].text)).then_some(dest)
}

/// Programs that change disks or the network configuration only in some
/// of their forms (`cryptsetup luksFormat`, `tc qdisc add`, `nmcli con up`).
fn disk_or_network_change(name: &str, args: &[Arg]) -> Option<(RuleId, String)> {
    let words = || args.iter().skip(1).map(|a| a.text.as_str());
    let has = |flags: &[&str]| words().any(|w| flags.contains(&w));
    let operands = || words().filter(|w| !w.starts_with('-'));
    let disk = |what: &str| Some((RuleId::DiskTools, format!("{name} {what}")));
    let net = |what: &str| Some((RuleId::NetFirewall, format!("{name} {what}")));
    match name {
        "cryptsetup"
            if operands().any(|w| {
                matches!(
                    w,
                    "luksFormat" | "format" | "erase" | "luksErase" | "reencrypt" | "repair"
                )
            }) =>
        {
            disk("rewrites a block device")
        }
        "hdparm"
            if words().any(|w| {
                w.starts_with("--security-erase")
                    || matches!(
                        w,
                        "--trim-sector-ranges" | "--write-sector" | "--make-bad-sector"
                    )
            }) =>
        {
            disk("erases or rewrites a disk")
        }
        "nvme" if operands().any(|w| matches!(w, "format" | "sanitize")) => disk("erases a disk"),
        "badblocks" if has(&["-w", "-n"]) => disk("rewrites a disk"),
        "zpool"
            if operands().next().is_some_and(|w| {
                matches!(
                    w,
                    "create" | "destroy" | "labelclear" | "add" | "attach" | "replace"
                )
            }) =>
        {
            disk("changes a storage pool")
        }
        "tc" if operands()
            .any(|w| matches!(w, "add" | "del" | "delete" | "change" | "replace")) =>
        {
            net("changes traffic control")
        }
        "nmcli"
            if operands().any(|w| {
                matches!(
                    w,
                    "up" | "down"
                        | "add"
                        | "delete"
                        | "modify"
                        | "connect"
                        | "disconnect"
                        | "on"
                        | "off"
                        | "reload"
                        | "set"
                        | "import"
                )
            }) =>
        {
            net("changes network configuration")
        }
        "ethtool"
            if words().any(|w| {
                matches!(
                    w,
                    "-s" | "--change"
                        | "-K"
                        | "--features"
                        | "--offload"
                        | "-A"
                        | "--pause"
                        | "-C"
                        | "--coalesce"
                        | "-G"
                        | "--set-ring"
                        | "-L"
                        | "--set-channels"
                        | "-E"
                        | "--change-eeprom"
                        | "-f"
                        | "--flash"
                        | "-r"
                        | "--negotiate"
                )
            }) =>
        {
            net("changes a network device")
        }
        "brctl" | "bridge" | "iw" | "resolvectl"
            if operands().any(|w| {
                w.starts_with("add")
                    || w.starts_with("del")
                    || matches!(
                        w,
                        "set" | "dns" | "domain" | "revert" | "connect" | "disconnect"
                    )
            }) =>
        {
            net("changes network configuration")
        }
        "wg" if operands()
            .next()
            .is_some_and(|w| matches!(w, "set" | "setconf" | "addconf" | "syncconf")) =>
        {
            net("changes a WireGuard interface")
        }
        _ => None,
    }
}

/// Programs whose effect is to rewrite the system's own configuration (the
/// user database, sudoers, the boot loader, kernel modules, the loader
/// cache): a write to a system root whatever their arguments say, except
/// for the forms that only show it. Returns the reason.
fn system_config_writer(name: &str, args: &[Arg]) -> Option<String> {
    let words = || args.iter().skip(1).map(|a| a.text.as_str());
    let has = |flags: &[&str]| words().any(|w| flags.contains(&w));
    let first = || words().find(|w| !w.starts_with('-')).unwrap_or("");
    let what = match name {
        "useradd" | "userdel" | "usermod" | "groupadd" | "groupdel" | "groupmod" | "adduser"
        | "deluser" | "addgroup" | "delgroup" | "chpasswd" | "chgpasswd" | "newusers"
        | "gpasswd" | "chsh" | "chfn" | "vipw" | "vigr" | "pwconv" | "pwunconv" | "grpconv"
        | "grpunconv" | "chage" => "changes the user database under /etc",
        "passwd" if !has(&["-S", "--status"]) => "changes the user database under /etc",
        "visudo" if !has(&["-c", "--check"]) => "edits /etc/sudoers",
        "update-alternatives" if !has(&["--display", "--query", "--list", "--get-selections"]) => {
            "changes the alternatives links under /etc and /usr"
        }
        "ldconfig" if !has(&["-p", "--print-cache", "-n"]) => "rewrites /etc/ld.so.cache",
        "update-grub" | "grub-install" | "grub-mkconfig" | "grub2-mkconfig"
        | "update-initramfs" | "mkinitcpio" | "dracut" | "kernel-install" => {
            "rewrites the boot files under /boot"
        }
        "update-ca-certificates" | "update-ca-trust" | "locale-gen" | "update-locale" => {
            "rewrites system configuration under /etc"
        }
        "hostnamectl" | "timedatectl" | "localectl"
            if first().starts_with("set-")
                || (name == "hostnamectl" && first() == "hostname" && args.len() > 2) =>
        {
            "changes system settings under /etc"
        }
        "insmod" | "rmmod" | "depmod" => "changes the running kernel's modules",
        "certbot"
            if !matches!(first(), "certificates" | "plugins" | "show_account")
                && !has(&["--help", "-h", "--version", "--dry-run"]) =>
        {
            "writes certificates and configuration under /etc/letsencrypt"
        }
        "update-rc.d" | "a2enmod" | "a2dismod" | "a2ensite" | "a2dissite" | "a2enconf"
        | "a2disconf" | "dpkg-reconfigure" => "changes system configuration under /etc",
        "chkconfig" if args.len() > 1 && !has(&["--list"]) => {
            "changes system configuration under /etc"
        }
        "modprobe" if !has(&["-n", "--dry-run", "-c", "--showconfig", "--show-depends"]) => {
            "changes the running kernel's modules"
        }
        // The kernel's security policy: SELinux's mode (`/sys/fs/selinux/enforce`), the
        // audit rules, AppArmor's profiles (`/sys/kernel/security/apparmor`).
        "setenforce" => "changes SELinux's mode under /sys",
        "auditctl" if !has(&["-l", "-s", "--help", "-v"]) => "changes the kernel's audit rules",
        "aa-disable" | "aa-complain" | "aa-enforce" | "aa-remove-unknown" => {
            "changes AppArmor's profiles under /sys and /etc"
        }
        "apparmor_parser" if !has(&["-p", "--preprocess", "-Q", "--skip-kernel-load"]) => {
            "loads or removes AppArmor profiles in the kernel"
        }
        // A user's services running after logout: systemd's list under /var/lib.
        "loginctl" if matches!(first(), "enable-linger" | "disable-linger") => {
            "changes which users' services outlive their login (/var/lib/systemd/linger)"
        }
        _ => return None,
    };
    Some(format!("{name} {what}"))
}

/// The files of `chmod MODE FILE…` and `chattr MODE FILE…` (indices into `args`), the
/// mode found past the options even when it begins with `-` (`chmod -x`, `chattr -i`).
fn mode_operands(name: &str, args: &[Arg]) -> Vec<usize> {
    let (flags, valued): (&[&str], &[&str]) = match name {
        "chattr" => (&["-R", "-V", "-f"], &["-v", "-p"]),
        _ => (
            &[
                "-c",
                "-f",
                "-v",
                "-R",
                "--changes",
                "--silent",
                "--quiet",
                "--verbose",
                "--recursive",
                "--preserve-root",
                "--no-preserve-root",
            ],
            &[],
        ),
    };
    let mut i = 1;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if valued.contains(&t) {
            i += 2;
            continue;
        }
        let cluster_of_flags = t.len() > 1
            && t.starts_with('-')
            && !t.starts_with("--")
            && t[1..]
                .chars()
                .all(|c| flags.iter().any(|f| f.len() == 2 && f.ends_with(c)));
        if flags.contains(&t) || cluster_of_flags {
            i += 1;
            continue;
        }
        break;
    }
    // `args[i]` is the mode.
    (i + 1..args.len()).collect()
}

/// Whether inline interpreter code hands what it reads on its input to an evaluator
/// or a shell: `exec(sys.stdin.read())`, `eval STDIN.read`, `eval join "", <STDIN>`,
/// `exec(open(0).read())`, `eval(require("fs").readFileSync(0, "utf8"))`,
/// `os.system(input())`; with `line_loop` (perl's and ruby's `-n`/`-p`, which read
/// every input line into `$_`) the code reads its input whatever it names.
/// `perl_like` code runs a command in backquotes too.
fn inline_code_runs_its_input(code: &str, line_loop: bool, perl_like: bool) -> bool {
    let lower = code.to_ascii_lowercase();
    let reads = line_loop
        || [
            "stdin",
            "input(",
            "open(0",
            "readfilesync(0",
            "argf",
            "<>",
            "/dev/fd/0",
        ]
        .iter()
        .any(|r| lower.contains(r));
    let runs = ["exec", "eval", "system"]
        .iter()
        .any(|r| names_a_call(&lower, r))
        || (perl_like && (code.contains('`') || names_a_call(code, "qx")));
    reads && runs
}

/// Whether `code` names `word` as a word of its own, not inside a pattern's slashes nor
/// alone in quotes: `exec(`, `eval $_`, `os.system(`, `eval <STDIN>`, not `/exec/` (a
/// regex a filter matches), `"system"` (a string it counts), `execute` or `subsystem`.
fn names_a_call(code: &str, word: &str) -> bool {
    let bytes = code.as_bytes();
    let part_of_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'/';
    code.match_indices(word).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        let quoted = before.is_some_and(|b| matches!(b, b'"' | b'\'')) && before == after;
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name) && !quoted
    })
}

/// A script operand that is the process's stdin: `-` (for a shell or interpreter),
/// `/dev/stdin`, and the descriptor 0 links (`/dev/fd/0`, `/proc/self/fd/0`).
fn is_stdin_path(t: &str) -> bool {
    matches!(
        t,
        "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    )
}

/// A cluster of nix-env's short flags holding an operation that changes the profile:
/// `-i`, `-e`, `-u` alone or joined to others (`-iA nixpkgs.jq`, `-ibA`), as its
/// documentation spells the install. `-q` and the others only read.
fn nix_env_changing_flags(w: &str) -> bool {
    w.strip_prefix('-').is_some_and(|flags| {
        !flags.is_empty()
            && !flags.starts_with('-')
            && flags.chars().all(|c| c.is_ascii_alphabetic())
            && flags.contains(['i', 'e', 'u'])
    })
}

/// The string literal a call's argument starts with in inline code: `"…"`, `'…'`,
/// `` `…` ``, and the quote operators perl and ruby write the same string with
/// (`system q{rm -rf ~}`, `exec qq(…)`, ruby's `system %q(…)`, `%Q[…]`, `%(…)`), which
/// a reading of quotes alone would pass over.
fn call_literal<'a>(rest: &'a str, name: &str) -> Option<&'a str> {
    if let Some(q) = rest
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))
    {
        let end = rest[1..].find(q)?;
        return Some(&rest[1..1 + end]);
    }
    let operators: &[&str] = match name {
        "perl" => &["qq", "q"],
        "ruby" => &["%q", "%Q", "%"],
        _ => &[],
    };
    let after = operators.iter().find_map(|op| rest.strip_prefix(op))?;
    quote_operator_body(after)
}

/// What perl's `qx…` and ruby's `%x…` quote: a shell command they run, as backquotes
/// do (`qx{rm -rf ~}`, `%x(curl x | sh)`). `qx` counts only as a word of its own. A
/// body that starts with a variable of the language (`qx($_)`, `%x(#{cmd})`) is a
/// command built at run time, not a literal: left to the rules on the code itself.
fn command_quotes<'a>(code: &'a str, name: &str) -> Vec<&'a str> {
    let op = if name == "perl" { "qx" } else { "%x" };
    let bytes = code.as_bytes();
    code.match_indices(op)
        .take(16)
        .filter(|(at, _)| {
            op.starts_with('%')
                || !at
                    .checked_sub(1)
                    .is_some_and(|i| bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_')
        })
        .filter_map(|(at, _)| quote_operator_body(&code[at + op.len()..]))
        .filter(|body| !body.trim_start().starts_with(['$', '@', '#']))
        .collect()
}

/// The body of a perl or ruby quote operator from its opening delimiter: bracket pairs
/// nest (`q{a{b}c}`), any other punctuation closes with itself (`q!…!`, `q/…/`).
fn quote_operator_body(s: &str) -> Option<&str> {
    let open = s.chars().next()?;
    if open.is_alphanumeric() || open.is_whitespace() || open == '_' {
        return None;
    }
    let close = match open {
        '(' => ')',
        '{' => '}',
        '[' => ']',
        '<' => '>',
        c => c,
    };
    let mut depth = 0usize;
    for (i, c) in s.char_indices().skip(1) {
        if open != close && c == open {
            depth += 1;
        } else if c == close {
            if depth == 0 {
                return Some(&s[open.len_utf8()..i]);
            }
            depth -= 1;
        }
    }
    None
}

/// Where the command a tool runs in its environment starts: `uvx CMD`, `uv run CMD`, `uv
/// tool run CMD`, `pipx run CMD`, `poetry run`, `pdm run`, `hatch run`, `pipenv run`,
/// `rye run`, `conda run` (and mamba's), `pnpm exec`/`dlx`, `yarn dlx`, `bun x`, `npm exec`.
/// Options before it are passed over, with the value of those that take one. `None` when
/// the tool runs no command (`uv sync`), `Some(args.len())` when the command is missing.
fn environment_runner(name: &str, args: &[Arg]) -> Option<usize> {
    let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    // Where the runner's own options begin.
    let mut i = match (name, words.get(1).copied(), words.get(2).copied()) {
        ("uvx", _, _) => 1,
        ("uv", Some("tool"), Some("run")) => 3,
        ("uv" | "pipx" | "poetry" | "pdm" | "hatch" | "pipenv" | "rye", Some("run"), _) => 2,
        ("conda" | "mamba" | "micromamba", Some("run"), _) => 2,
        ("pnpm", Some("exec" | "dlx"), _) | ("yarn", Some("dlx"), _) | ("bun", Some("x"), _) => 2,
        ("npm", Some("exec" | "x"), _) => 2,
        _ => return None,
    };
    const WITH_VALUE: &[&str] = &[
        "--with",
        "--with-editable",
        "--with-requirements",
        "--python",
        "-p",
        "--from",
        "--spec",
        "--directory",
        "--project",
        "--package",
        "--env-file",
        "--index",
        "--index-url",
        "--default-index",
        "--extra-index-url",
        "--extra",
        "--group",
        "--only-group",
        "-n",
        "--name",
        "--prefix",
        "-e",
        "--env",
        "-c",
        "--call",
    ];
    while i < words.len() {
        let w = words[i];
        if w == "--" {
            return Some(i + 1);
        }
        if !w.starts_with('-') {
            return Some(i);
        }
        // `-c` of pnpm and npm exec is a shell string, not a command's words.
        if matches!(w, "-c" | "--call") && matches!(name, "npm" | "pnpm") {
            return None;
        }
        i += if WITH_VALUE.contains(&w) { 2 } else { 1 };
    }
    Some(words.len())
}

/// Whether a word is a list of absolute paths joined by `:` (`$PATH`,
/// `$LD_LIBRARY_PATH`), more than one.
fn is_path_list(t: &str) -> bool {
    t.contains(':')
        && t.split(':').filter(|s| !s.is_empty()).count() > 1
        && t.split(':').all(|s| s.is_empty() || s.starts_with('/'))
}

/// find's tests and actions that take the next word as their value (the ones handled on
/// their own in `find_cmd` aside).
const FIND_VALUE_OPERANDS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-links",
    "-inum",
    "-context",
    "-fstype",
    "-printf",
    "-newerat",
    "-newerct",
    "-newermt",
    "-newerBt",
];

/// Whether a perl switch bundle (`-ne`, `-lane`, `-Mstrict`) ends in `-e`/`-E`, the
/// program: a switch that takes the rest of its word (`-M`, `-m`, `-I`, `-i`, `-x`, `-d`,
/// `-D`, `-C`, `-F`, `-V`) ends the bundle (`-MFile::Path=remove_tree` holds no `-e`,
/// and `-pie` is `-p -i` with the backup suffix `e`), as `-l` and `-0` end at their
/// digits.
fn perl_bundle_has_program(word: &str) -> bool {
    let mut chars = word.strip_prefix('-').unwrap_or(word).chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            'e' | 'E' => return true,
            'M' | 'm' | 'I' | 'i' | 'x' | 'd' | 'D' | 'C' | 'F' | 'V' => return false,
            'l' | '0' => {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_hexdigit() && !"eE".contains(*d))
                {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether a string literal of inline code reads as a path that may leave the worktree:
/// absolute with a name after the `/` (a lone `/` is more often a separator than the
/// root), the home (`~`, `~/…`), or climbing (`..`). Not a URL, not a line of text.
fn code_literal_is_path(s: &str) -> bool {
    if s.is_empty() || s.len() >= 4096 || s.contains(['\n', ' ', '$', '{', '%']) {
        return false;
    }
    let absolute = s
        .strip_prefix('/')
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let climbing = s == ".." || s.starts_with("../") || s.contains("/../") || s.ends_with("/..");
    absolute || s == "~" || s.starts_with("~/") || climbing
}

/// The contents of the quoted literals in inline interpreter code (`'…'` and `"…"`,
/// without escapes), up to a bound on the code read.
pub fn code_string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code.get(..code.len().min(16 * 1024)).unwrap_or(code);
    while let Some(at) = rest.find(['"', '\'']) {
        let q = &rest[at..at + 1];
        let after = &rest[at + 1..];
        let Some(end) = after.find(q) else {
            break;
        };
        out.push(after[..end].to_string());
        rest = &after[end + 1..];
    }
    out
}

/// The publishing commands of the package tools the rest of the table does not know:
/// `pdm publish`, `lerna publish`, `jsr publish`, `vsce publish` and `ovsx publish`
/// (editor extensions), `mvn deploy` (the phase that uploads to the remote repository,
/// whatever phases come before it), `gradle publish` and its `publish…` tasks
/// (`publishToMavenLocal` stays on this machine), `crane push`; Elixir's `mix
/// hex.publish`, changesets' `changeset publish`, `rye publish`, `anaconda upload`, sbt's
/// `publish` tasks (`publishLocal` stays here), Swift's registry, CocoaPods' `pod trunk
/// push`, Dart's and Flutter's `pub publish`, Haskell's `cabal upload` and `stack upload`,
/// `opam publish`, `oras push`, goreleaser's and jreleaser's releases. A dry run (`--dry-run`, `-n`,
/// goreleaser's `--snapshot`) uploads nothing.
fn other_publisher(name: &str, args: &[Arg]) -> bool {
    let words = plain_words(args);
    let dry = args.iter().skip(1).any(|a| {
        matches!(
            a.text.as_str(),
            "--dry-run" | "-n" | "--snapshot" | "--skip=publish" | "--dryrun"
        )
    });
    let first = words.first().copied();
    match name {
        _ if dry && !matches!(name, "mvn" | "mvnw" | "gradle" | "gradlew" | "crane") => false,
        "pdm" | "lerna" | "jsr" | "vsce" | "ovsx" | "changeset" | "rye" | "opam" => {
            first == Some("publish")
        }
        // `mix do compile, hex.publish`.
        "mix" => words
            .iter()
            .any(|w| w.trim_end_matches(',') == "hex.publish"),
        "lein" => first == Some("deploy"),
        "nx" => words.starts_with(&["release", "publish"]),
        "anaconda" => first == Some("upload"),
        // `sbt +publish`, `sbt ";clean;publish"`, `sbt ci-release` (the plugin's).
        "sbt" => words
            .iter()
            .flat_map(|w| w.split([';', ' ']))
            .map(|w| w.trim().trim_start_matches('+'))
            .any(|w| {
                (w.starts_with("publish")
                    && !w.starts_with("publishLocal")
                    && !w.starts_with("publishM2"))
                    || matches!(w, "ci-release" | "sonatypeBundleRelease")
            }),
        "swift" => words.starts_with(&["package-registry", "publish"]),
        "pod" => words.starts_with(&["trunk", "push"]),
        "dart" | "flutter" => words.starts_with(&["pub", "publish"]),
        "cabal" | "stack" => first == Some("upload"),
        "oras" => first == Some("push"),
        "goreleaser" => matches!(first, None | Some("release")),
        "jreleaser" => matches!(
            first,
            Some("release" | "full-release" | "deploy" | "publish" | "upload")
        ),
        "mvn" | "mvnw" => words
            .iter()
            .any(|w| *w == "deploy" || w.starts_with("deploy:")),
        "gradle" | "gradlew" => words
            .iter()
            .any(|w| w.starts_with("publish") && !w.ends_with("ToMavenLocal")),
        "crane" => words.first() == Some(&"push"),
        _ => false,
    }
}

/// The file a hook manager writes without naming it, and what it does: `pre-commit
/// install` and `lefthook install`/`add` write a hook into `.git/hooks/`, `husky` (bare,
/// `init`, `install`) points `core.hooksPath` at its folder in `.git/config`; each is a
/// program git runs later, outside the sandbox. `direnv allow` records in the user's
/// data folder that the `.envrc` may run in every shell that enters the folder.
fn hook_setup(name: &str, args: &[Arg]) -> Option<(&'static str, &'static str)> {
    let words = plain_words(args);
    let first = words.first().copied();
    let asks_help = args
        .iter()
        .skip(1)
        .any(|a| matches!(a.text.as_str(), "-h" | "--help" | "-V" | "--version"));
    match (name, first) {
        _ if asks_help => None,
        ("pre-commit", Some("install")) | ("lefthook", Some("install" | "add")) => Some((
            ".git/hooks/pre-commit",
            "installs a git hook that runs outside the sandbox",
        )),
        ("husky", None | Some("install" | "init")) => Some((
            ".git/config",
            "sets core.hooksPath: git runs its hooks outside the sandbox",
        )),
        ("direnv", Some("allow" | "permit" | "grant")) => Some((
            "~/.local/share/direnv/allow/.envrc",
            "allows the .envrc to run in every shell that enters the folder",
        )),
        _ => None,
    }
}

/// The words after the program that are not options (`dotnet nuget push x` → `nuget`,
/// `push`, `x`): a subcommand's words, whatever options lie between them.
fn plain_words(args: &[Arg]) -> Vec<&str> {
    args.iter()
        .skip(1)
        .map(|a| a.text.as_str())
        .filter(|t| !t.starts_with('-'))
        .collect()
}

/// The clients that print a credential they keep in one of the secret paths: `gh auth
/// token` (`~/.config/gh`), `gcloud auth print-access-token` (`~/.config/gcloud`), `az
/// account get-access-token` (`~/.azure`), `aws configure get`/`export-credentials` and
/// the tokens made from them (`~/.aws`), `kubectl config view --raw` (`~/.kube`), `git
/// credential fill` (`~/.git-credentials` through its helper). Each reads the file as
/// `cat` would, so a line that also reaches the network sends it out.
fn credential_printer(name: &str, args: &[Arg]) -> Option<&'static str> {
    let words = plain_words(args);
    let has = |f: &str| args.iter().skip(1).any(|a| a.text == f);
    // Wherever they stand: global options and their values may come first (`aws
    // --profile prod configure get …`, `kubectl --context c config view --raw`).
    let starts = |seq: &[&str]| words.windows(seq.len()).any(|w| w == seq);
    match name {
        "gh" if starts(&["auth", "token"])
            || (starts(&["auth", "status"]) && (has("-t") || has("--show-token"))) =>
        {
            Some("gh auth token (~/.config/gh)")
        }
        "gcloud"
            if words.contains(&"auth")
                && words
                    .iter()
                    .any(|w| matches!(*w, "print-access-token" | "print-identity-token")) =>
        {
            Some("gcloud auth print-access-token (~/.config/gcloud)")
        }
        "az" if starts(&["account", "get-access-token"]) => {
            Some("az account get-access-token (~/.azure)")
        }
        "aws"
            if starts(&["configure", "get"])
                || starts(&["configure", "export-credentials"])
                || starts(&["ecr", "get-login-password"])
                || starts(&["ecr-public", "get-login-password"])
                || starts(&["codeartifact", "get-authorization-token"])
                || starts(&["sts", "get-session-token"]) =>
        {
            Some("aws credentials (~/.aws)")
        }
        "kubectl" | "oc"
            if starts(&["config", "view"])
                && args.iter().skip(1).any(|a| {
                    a.text == "--raw" || (a.text.starts_with("--raw=") && a.text != "--raw=false")
                }) =>
        {
            Some("kubectl config view --raw (~/.kube)")
        }
        "git" if words.windows(2).any(|w| w == ["credential", "fill"]) => {
            Some("git credential fill (~/.git-credentials)")
        }
        _ => None,
    }
}

fn is_assignment(t: &str) -> bool {
    match t.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// `host:path`, `user@host:path`, `host::module` or `rsync://…`.
fn is_remote_spec(t: &str) -> bool {
    if t.starts_with("rsync://") {
        return true;
    }
    if t.starts_with('/') || t.starts_with('.') || t.starts_with('~') {
        return false;
    }
    match t.find(':') {
        Some(i) => !t[..i].contains('/') && i > 0,
        None => false,
    }
}

/// A word for a person: its known text, with unknown pieces shown as `…`.
pub fn display_arg(a: &Arg) -> String {
    a.text.replace(UNKNOWN, "…")
}

/// Turns glob components that could match `..` into `..`, so that a glob
/// cannot hide a climb out of the worktree (`.*` matches `..` in many shells).
fn deglob(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['*', '?', '[']) {
        return std::borrow::Cow::Borrowed(text);
    }
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let parts: Vec<String> = text
        .split('/')
        .map(|c| {
            if c.contains(['*', '?', '['])
                && glob::Pattern::new(c).is_ok_and(|p| p.matches_with("..", opts))
            {
                "..".to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    std::borrow::Cow::Owned(parts.join("/"))
}

/// The words of a search that are its pattern, not a path (`grep -rn '../' src`): the
/// values of `-e`/`--regexp`, else the first operand unless `-f`/`--file` gives the
/// patterns. For grep, rg, ag, ack and `git grep` (`args[0]` the program, or `grep`
/// after git's own words from `start`).
pub fn search_patterns(name: &str, args: &[Arg], start: usize) -> Vec<usize> {
    let Some(spec) = search_options(name) else {
        return Vec::new();
    };
    let p = opts::parse(args, start, &spec);
    let mut patterns: Vec<usize> = Vec::new();
    // `-e PATTERN` (its value is the next word, or the rest of its own).
    let mut i = start;
    while i < args.len() {
        let t = args[i].text.as_str();
        if t == "--" {
            break;
        }
        if t == "-e" || t == "--regexp" || (name == "ag" && t == "--match") {
            patterns.push(i + 1);
            i += 2;
            continue;
        }
        i += 1;
    }
    let explicit = p.has('e', "regexp") || p.has('f', "file");
    if !explicit && let Some(&first) = p.operands.first() {
        patterns.push(first);
    }
    patterns.retain(|&i| i < args.len());
    patterns
}

/// Whether a search reads the working directory's tree without naming it: `grep -r` (or
/// `-R`) with no file operand searches `.` (GNU grep), and so does `rg`, unless its stdin
/// is a pipe or the line's text (then it searches that). A file read from stdin (`-`) or
/// patterns from `-f` leave the operands as they are.
fn searches_the_cwd(name: &str, args: &[Arg], patterns: &[usize], inv: &Invocation) -> bool {
    let Some(spec) = search_options(name) else {
        return false;
    };
    let recursive = match name {
        "rg" => !(inv.io.stdin_pipe || inv.io.heredoc.is_some() || inv.io.herestring.is_some()),
        "grep" | "egrep" | "fgrep" => args.iter().skip(1).any(|a| {
            let t = a.text.as_str();
            ["recursive", "dereference-recursive"]
                .iter()
                .any(|l| opts::is_long(t, l))
                || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(['r', 'R']))
        }),
        _ => false,
    };
    if !recursive {
        return false;
    }
    let p = opts::parse(args, 1, &spec);
    !p.operands.iter().any(|i| !patterns.contains(i))
}

/// The options of a search program that take a value (`None` for other programs).
fn search_options(name: &str) -> Option<OptSpec> {
    let spec = match name {
        "grep" | "egrep" | "fgrep" | "git-grep" => OptSpec {
            short_arg: "efmABCdD",
            long_arg: &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "directories",
                "devices",
                "include",
                "exclude",
                "exclude-dir",
                "exclude-from",
                "label",
                "binary-files",
                "max-depth",
                "threads",
            ],
            permute: true,
        },
        "rg" => OptSpec {
            short_arg: "efmABCgtTEjMr",
            long_arg: &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "glob",
                "iglob",
                "type",
                "type-not",
                "encoding",
                "threads",
                "max-columns",
                "replace",
                "pre",
                "pre-glob",
                "sort",
                "sortr",
                "type-add",
                "type-clear",
                "ignore-file",
                "max-depth",
                "max-filesize",
                "path-separator",
                "colors",
                "context-separator",
                "field-match-separator",
                "field-context-separator",
                "dfa-size-limit",
                "regex-size-limit",
                "engine",
                "hyperlink-format",
            ],
            permute: true,
        },
        "ag" | "ack" | "ack-grep" => OptSpec {
            short_arg: "ABCGgmp",
            long_arg: &[
                "after",
                "before",
                "context",
                "file-search-regex",
                "max-count",
                "path-to-ignore",
                "ignore",
                "ignore-dir",
                "depth",
                "type",
                "match",
            ],
            permute: true,
        },
        _ => return None,
    };
    Some(spec)
}

/// `npm config` subcommands that change a config file.
const NPM_CONFIG_CHANGES: &[&str] = &["set", "delete", "rm", "edit", "fix"];

/// Whether a program of the read list is given a path the line does not give before
/// running (`cat $F`, `wc -l $(cat list)`, `xargs cat` of input not known): it reads
/// wherever that leads, so the read is not known to stay inside the worktree. Option
/// values that are no paths (`head -n $N`), search patterns, and `which`'s program names
/// are not looked at; a patterns file (`grep -f $F`) is a path.
fn reads_an_unknown_path(name: &str, args: &[Arg], patterns: &[usize]) -> bool {
    let spec = match name {
        "which" | "pwd" => return false,
        "head" | "tail" => OptSpec {
            short_arg: "nc",
            long_arg: &[
                "lines",
                "bytes",
                "pid",
                "sleep-interval",
                "max-unchanged-stats",
            ],
            permute: true,
        },
        "ls" => OptSpec {
            short_arg: "ITw",
            long_arg: &[
                "hide",
                "ignore",
                "width",
                "tabsize",
                "format",
                "sort",
                "time",
                "time-style",
                "color",
                "indicator-style",
                "quoting-style",
                "block-size",
                "hyperlink",
            ],
            permute: true,
        },
        "file" => OptSpec {
            short_arg: "mFeP",
            long_arg: &[
                "magic-file",
                "separator",
                "exclude",
                "exclude-quiet",
                "parameter",
            ],
            permute: true,
        },
        "wc" => OptSpec {
            short_arg: "",
            long_arg: &["files0-from", "total"],
            permute: true,
        },
        _ => search_options(name).unwrap_or(OptSpec {
            short_arg: "",
            long_arg: &[],
            permute: true,
        }),
    };
    let p = opts::parse(args, 1, &spec);
    let unknown = |a: &Arg| !a.known && !a.procsub;
    p.operands
        .iter()
        .filter(|i| !patterns.contains(i))
        .any(|&i| unknown(&args[i]))
        || p.values_of('f', "file").any(unknown) && search_options(name).is_some()
}

/// How a program reads an option's value that can run a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OptionLanguage {
    /// A line for a shell (`tar -I CMD`, `man -P CMD`, `zip -TT CMD`).
    Shell,
    /// An editor's ex command: what it runs and writes ([`crate::editor::ex_effects`]).
    ExCommand,
    /// Emacs Lisp (`emacs --eval`): [`crate::editor::elisp_effects`].
    Elisp,
    /// A gdb command: `shell CMD` and `!CMD` run CMD.
    GdbCommand,
    /// Make syntax: each `$(shell CMD)` runs CMD, and so does each recipe (`all: ; CMD`,
    /// a line after a tab) when its target is made (`make --eval`).
    MakeText,
}

impl OptionLanguage {
    /// The shell lines the value runs or stands for, each with whether it is given input
    /// on a pipe (an editor's buffer for `:w !CMD`).
    fn shell_lines(self, v: &Arg) -> Vec<(Arg, bool)> {
        let line = |text: &str| Arg {
            text: text.to_string(),
            ..v.clone()
        };
        let t = v.text.trim_start();
        let unpiped = |lines: Vec<Arg>| lines.into_iter().map(|l| (l, false)).collect();
        match self {
            OptionLanguage::Shell => vec![(v.clone(), false)],
            OptionLanguage::ExCommand | OptionLanguage::Elisp => {
                let effects = if self == OptionLanguage::Elisp {
                    crate::editor::elisp_effects(&v.text)
                } else {
                    crate::editor::ex_effects(&v.text)
                };
                effects
                    .into_iter()
                    .map(|e| (Arg::literal(e.line), e.piped))
                    .collect()
            }
            OptionLanguage::GdbCommand => unpiped(
                t.strip_prefix("shell ")
                    .or_else(|| t.strip_prefix('!'))
                    .or_else(|| t.strip_prefix("pipe "))
                    .map(|c| vec![line(c)])
                    .unwrap_or_default(),
            ),
            OptionLanguage::MakeText => {
                let mut out = Vec::new();
                let mut rest = v.text.as_str();
                while let Some(i) = rest.find("$(shell ").or_else(|| rest.find("${shell ")) {
                    let body = &rest[i + 8..];
                    let close = if rest[i..].starts_with("$(") {
                        ')'
                    } else {
                        '}'
                    };
                    // Up to the closing bracket that balances the opening one.
                    let mut depth = 0usize;
                    let end = body
                        .char_indices()
                        .find(|&(_, c)| {
                            if c == '(' || c == '{' {
                                depth += 1;
                            } else if (c == ')' || c == '}') && depth > 0 {
                                depth -= 1;
                            } else if c == close {
                                return true;
                            }
                            false
                        })
                        .map_or(body.len(), |(k, _)| k);
                    out.push(line(&body[..end]));
                    rest = &body[end..];
                }
                out.extend(make_recipes(&v.text).iter().map(|r| line(r)));
                unpiped(out)
            }
        }
    }
}

/// The options of `name` whose values run commands, short and long, and how the value
/// is read. `None` for a program with none.
fn option_program_table(
    name: &str,
) -> Option<(
    &'static [&'static str],
    &'static [&'static str],
    OptionLanguage,
)> {
    Some(match name {
        "tar" => (
            &["-I", "-F"],
            &[
                "--to-command",
                "--use-compress-program",
                "--info-script",
                "--new-volume-script",
                "--rsh-command",
            ],
            OptionLanguage::Shell,
        ),
        "rsync" => (&["-e"], &["--rsh"], OptionLanguage::Shell),
        "man" => (&["-P"], &["--pager"], OptionLanguage::Shell),
        "zip" => (&["-TT"], &["--unzip-command"], OptionLanguage::Shell),
        "vi" | "vim" | "nvim" | "ex" | "view" | "gvim" | "rvim" | "rview" | "vimdiff" | "gview"
        | "evim" => (&["-c"], &["--cmd"], OptionLanguage::ExCommand),
        "emacs" | "emacsclient" => (
            &["-eval", "-execute", "-e"],
            &["--eval", "--execute"],
            OptionLanguage::Elisp,
        ),
        "gdb" => (
            &["-ex", "-iex", "--ex"],
            &[
                "-eval-command",
                "--eval-command",
                "-init-eval-command",
                "--init-eval-command",
            ],
            OptionLanguage::GdbCommand,
        ),
        "make" | "gmake" => (&["-E"], &["--eval"], OptionLanguage::MakeText),
        _ => return None,
    })
}

/// The recipe lines of a makefile text: what follows the `;` of a rule line
/// (`all: ; CMD`) and each line that starts with a tab, with make's prefixes (`@`, `-`,
/// `+`) taken off and `$$` made the `$` the shell sees.
fn make_recipes(text: &str) -> Vec<String> {
    let mut recipes = Vec::new();
    for l in text.lines() {
        let recipe = if let Some(r) = l.strip_prefix('\t') {
            Some(r)
        } else {
            // A rule (`all: deps ; CMD`), not an assignment (`X := a;b`) nor a target's
            // variable (`all: X = a;b`).
            l.split_once(';')
                .filter(|(head, _)| head.contains(':') && !head.contains('='))
                .map(|(_, r)| r)
        };
        let Some(r) = recipe else { continue };
        let r = r.trim_start().trim_start_matches(['@', '-', '+']).trim();
        if !r.is_empty() {
            recipes.push(r.replace("$$", "$"));
        }
    }
    recipes
}

/// The programs `rg --pre PROGRAM` and `rg --hostname-bin PROGRAM` run (`=` or a word
/// of its own).
fn rg_programs(args: &[Arg]) -> Vec<Arg> {
    let mut programs = Vec::new();
    for (i, a) in args.iter().enumerate().skip(1) {
        if a.text == "--" {
            break;
        }
        for flag in ["--pre", "--hostname-bin"] {
            if a.text == flag {
                programs.extend(args.get(i + 1).cloned());
            } else if let Some(v) = a.text.strip_prefix(flag).and_then(|r| r.strip_prefix('='))
                && !v.is_empty()
            {
                programs.push(Arg {
                    text: v.to_string(),
                    home_based: v.starts_with('~'),
                    ..a.clone()
                });
            }
        }
    }
    programs
}

/// What a pid option means to a tool that either acts on running processes or runs a
/// command.
#[derive(Debug, Clone, Copy)]
enum PidMeans {
    /// It acts on the processes named and runs nothing (chrt, ionice, taskset).
    NoCommand,
    /// It acts on them, and runs a command too when one is named (strace -p PID CMD).
    CommandIfNamed,
}

/// The interpreter a container's shell string runs its program from a pipe with
/// (`Some(None)` for a download run as a program): `… | sh`, `… | sudo bash -s -- ARGS`, `… | timeout 60 sh`, `python3 -`, or a
/// download given as a program (`sh <(curl …)`, `bash -c "$(curl …)"`, `eval "$(wget …)"`).
fn container_pipe_reader(script: &str) -> Option<Option<String>> {
    const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "fish"];
    let interpreter =
        |w: &str| SHELLS.contains(&w) || matches!(w, "perl" | "ruby" | "node") || is_python(w);
    for segment in pipeline_readers(script) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        let mut i = 0;
        // Wrappers and their values before the reader.
        while let Some(w) = words.get(i) {
            let w = program_name(w.trim_matches(['\'', '"']));
            if matches!(
                w,
                "sudo"
                    | "env"
                    | "exec"
                    | "command"
                    | "time"
                    | "nohup"
                    | "nice"
                    | "timeout"
                    | "stdbuf"
            ) || w.starts_with('-')
                || w.chars().all(|c| c.is_ascii_digit() || c == '.')
                || w.contains('=')
            {
                i += 1;
                continue;
            }
            break;
        }
        let Some(reader) = words
            .get(i)
            .map(|w| program_name(w.trim_matches(['\'', '"'])))
        else {
            continue;
        };
        if !interpreter(reader) {
            continue;
        }
        // Its program from the pipe unless a script is named before `-s`, `-` or `--`.
        let named_script = words[i + 1..]
            .iter()
            .take_while(|w| !matches!(**w, "-s" | "-" | "--"))
            .any(|w| !w.starts_with('-'));
        if !named_script {
            return Some(Some(reader.to_string()));
        }
    }
    let downloads = ["curl", "wget", "fetch"].iter().any(|d| script.contains(d));
    let runs_download = ["<(", "$(", "`"].iter().any(|s| script.contains(s))
        && (script.contains("eval")
            || SHELLS.iter().any(|s| {
                script.contains(&format!("{s} <(")) || script.contains(&format!("{s} -c"))
            })
            || script.contains("source <(")
            || script.contains(". <("));
    (downloads && runs_download).then_some(None)
}

/// The commands of `line` that read a pipe (each segment after a `|` that is no `||`,
/// outside quotes), as text.
pub fn pipeline_readers(line: &str) -> Vec<String> {
    let mut segments = vec![(false, String::new())];
    let mut quote: Option<char> = None;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '|') if chars.get(i + 1) == Some(&'|') => {
                segments.push((false, String::new()));
                i += 2;
                continue;
            }
            (None, '|') => {
                segments.push((true, String::new()));
                i += 1;
                continue;
            }
            (None, ';' | '&' | '\n' | '(' | ')') => {
                segments.push((false, String::new()));
                i += 1;
                continue;
            }
            _ => {}
        }
        if let Some(last) = segments.last_mut() {
            last.1.push(c);
        }
        i += 1;
    }
    segments
        .into_iter()
        .filter(|(reads, _)| *reads)
        .map(|(_, s)| s)
        .collect()
}

/// The standard input the line writes for a command: its here-document, else its
/// here-string's known value.
fn written_stdin(inv: &Invocation) -> Option<String> {
    inv.io.heredoc.clone().or_else(|| {
        inv.io
            .herestring
            .as_ref()
            .and_then(|h| h.value().map(str::to_string))
    })
}

/// Where the string or regular expression opened by the quote or slash at `at` ends: just
/// past its closing delimiter (a backslash escapes the next byte), or the program's end.
fn awk_literal_end(b: &[u8], at: usize) -> usize {
    let close = b[at];
    let mut k = at + 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            c if c == close => return k + 1,
            b'\n' if close == b'/' => return k,
            _ => k += 1,
        }
    }
    b.len()
}

/// Whether a `/` at `at` stands where awk expects an operand, so that it opens a regular
/// expression rather than dividing.
fn awk_operand_expected(b: &[u8], at: usize) -> bool {
    match b[..at].iter().rev().find(|c| !matches!(c, b' ' | b'\t')) {
        None => true,
        Some(c) => matches!(
            c,
            b'~' | b'(' | b',' | b'{' | b';' | b'!' | b'&' | b'|' | b'\n'
        ),
    }
}

/// The awk string that ends just before byte `at` of `text` (spaces between), decoded:
/// `"date" | getline`. `None` when something else stands there (a variable, an expression).
fn awk_string_before(text: &str, at: usize) -> Option<String> {
    let before = text[..at].trim_end();
    let inner = before.strip_suffix('"')?;
    let b = inner.as_bytes();
    let mut k = b.len();
    while k > 0 {
        k -= 1;
        if b[k] == b'"' && (k == 0 || b[k - 1] != b'\\') {
            return Some(crate::word::decode_ansi_c(&inner[k + 1..]));
        }
    }
    None
}

/// Whether a shell string may change its positional parameters before or between their
/// uses (`shift`, `set -- …` or `set WORD…`, `getopts`, or a sourced file, which may do
/// either): they are then not known from the command that runs it. Read from the text,
/// command by command (split at `;`, `&`, `|`, newlines, parentheses, braces and
/// backquotes; words of letters, digits and `_+-./=`), so that a quoted `eval 'shift'`
/// counts too; a word that only looks like one (`echo "set up"`) makes the parameters
/// unknown, which only costs precision.
fn changes_positional(script: &str) -> bool {
    script
        .split([';', '&', '|', '\n', '(', ')', '{', '}', '`'])
        .any(|command| {
            let words: Vec<&str> = command
                .split(|c: char| !(c.is_ascii_alphanumeric() || "_+-./=".contains(c)))
                .filter(|w| !w.is_empty())
                .collect();
            words.iter().enumerate().any(|(i, w)| match *w {
                "shift" | "getopts" | "source" | "." => true,
                "set" => set_changes_positional(&words[i + 1..]),
                _ => false,
            })
        })
}

/// Whether `set` with these words sets the positional parameters: `--`, `-`, or an
/// operand; options alone (`set -eu`, `set +x`, `set -o pipefail`, whose `-o` takes the
/// next word) do not.
pub(crate) fn set_changes_positional(words: &[&str]) -> bool {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if *w == "--" || *w == "-" || !w.starts_with(['-', '+']) {
            return true;
        }
        i += if w[1..].contains('o') { 2 } else { 1 };
    }
    false
}

/// The words of `env -S STRING`, split as coreutils' env splits them: blanks separate
/// words, and so does `\_` outside quotes (inside `"…"` it is a blank); `'…'` is literal
/// (`\\` and `\'` aside); in `"…"` and outside quotes a backslash escapes (`\t`, `\n`,
/// `\c` ends the string); a `#` at
/// the start of a word begins a comment. `${NAME}` is left for [`Walker::env_split_word`].
/// `None` when a quote is not closed (env refuses the string).
fn env_split_string(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        '\\' if matches!(chars.peek(), Some('\\' | '\'')) => {
                            word.push(chars.next()?);
                        }
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            'c' => {
                                words.push(word);
                                return Some(words);
                            }
                            e => word.push(env_escape(e)),
                        },
                        other => word.push(other),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('c') | None => break,
                // Outside quotes `\_` separates words.
                Some('_') => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                Some(e) => {
                    in_word = true;
                    word.push(env_escape(e));
                }
            },
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// The character an escape stands for in `env -S`'s string.
fn env_escape(e: char) -> char {
    match e {
        '_' => ' ',
        't' => '\t',
        'n' => '\n',
        'r' => '\r',
        'f' => '\x0c',
        'v' => '\x0b',
        other => other,
    }
}

/// The files a `file:` URL given to curl reads: `file:///p`, `file://HOST/p` and `file:/p`,
/// percent-decoded, each `{a,b}` list of curl's globbing written out (up to 64 paths; its
/// `[a-z]` ranges stay, as a pattern).
fn curl_file_paths(url: &str) -> Vec<String> {
    let Some(rest) = url
        .get(..5)
        .filter(|s| s.eq_ignore_ascii_case("file:"))
        .map(|_| &url[5..])
    else {
        return Vec::new();
    };
    let path = match rest.strip_prefix("//") {
        Some(after) => match after.find('/') {
            Some(at) => &after[at..],
            None => return Vec::new(),
        },
        None if rest.starts_with('/') => rest,
        None => return Vec::new(),
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let mut bytes = Vec::with_capacity(path.len());
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                bytes.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                bytes.push(c);
                i += 1;
            }
        }
    }
    let mut paths = vec![String::from_utf8_lossy(&bytes).into_owned()];
    // `{a,b}` lists, one at a time, left to right.
    for _ in 0..8 {
        let mut next = Vec::new();
        let mut changed = false;
        for p in &paths {
            match (p.find('{'), p.find('}')) {
                (Some(open), Some(close)) if open < close => {
                    changed = true;
                    for alt in p[open + 1..close].split(',') {
                        next.push(format!("{}{alt}{}", &p[..open], &p[close + 1..]));
                    }
                }
                _ => next.push(p.clone()),
            }
        }
        next.truncate(64);
        paths = next;
        if !changed {
            break;
        }
    }
    paths
}

//! The exec check: every `execve`/`execveat` of the sandbox is judged in exec context.
//!
//! This is policy, not a security boundary: another thread can change argv after the
//! check, and a program can be copied under another name. The kernel boundaries are the
//! file, network and signal fences.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::blocked_reason::BlockedReason;
use super::fence::Fence;
use super::listener::{Notification, Response};
use super::path_resolve::{self, Base, Caller, Found, ProcessCwd, Resolution};
use super::question::{Ask, OnYes, Outcome, Recheck};
use super::target_memory::{MemoryError, PATH_MAX, TargetMemory};
use crate::gate::decide::Subject;
use crate::gate::{EventKind, Level};

/// One exec as the policy sees it.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    pub argv: Vec<String>,
    /// The argv as the target gave it (Always matches it exactly).
    pub raw_argv: Vec<Vec<u8>>,
    /// The program as the kernel will find it (resolved through symlinks when possible).
    pub program: PathBuf,
    pub cwd: ProcessCwd,
    pub current_branch: Option<String>,
    /// For a git command: the variables of its environment that choose git's settings
    /// ([`settings_environment`]).
    pub git_env: Vec<(String, Option<String>)>,
}

/// The policy's answer for one exec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecJudgement {
    pub action: policy::Action,
    pub level: policy::Level,
    pub rule: String,
    /// The rule's description, for a question's card.
    pub description: String,
    pub reason: String,
    /// The text that decided.
    pub part: String,
}

/// Whatever judges execs (the policy crate's classifier in exec context).
pub trait ExecPolicy: Send + Sync {
    fn judge(&self, request: &ExecRequest) -> ExecJudgement;
}

/// `git stash` (push or save) keeps the changes, then cleans the tree with a
/// `git reset --hard -q --no-recurse-submodules` of its own, a child it forks and execs,
/// and with `-u`/`-a` a `git clean --force --quiet -d :/` (`-x` added for `-a`) of the
/// untracked files it kept too: they discard nothing the stash has not kept, and refusing
/// them left the stash made and the changes still in the tree (`git stash pop` then
/// fails). They are told from a reset or clean the sandbox asks for by their exact words
/// and their caller, stash's forked child: its command line is still stash's, and its
/// executable a git that no writable root holds (a program of the sandbox's named `git`,
/// run as `git stash`, could otherwise exec them), started without a variable that loads
/// other code into it (`LD_PRELOAD`, `LD_AUDIT`, `LD_LIBRARY_PATH`, `GCONV_PATH`: a library
/// of the sandbox's run inside that git could exec them itself). Policy, as every exec
/// rule: the sandbox's own code in a git process is not ruled out whole.
fn is_stash_cleanup(argv: &[String], caller: Caller, fence: &Fence) -> bool {
    let words: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    let quiet = |a: &&str| matches!(*a, "-q" | "--quiet" | "--no-recurse-submodules");
    let resets =
        matches!(words.as_slice(), ["reset", "--hard", rest @ ..] if rest.iter().all(quiet));
    let cleans = matches!(
        words.as_slice(),
        ["clean", "--force", "--quiet", "-d", ":/"]
            | ["clean", "--force", "--quiet", "-d", ":/", "-x"]
    );
    if !resets && !cleans {
        return false;
    }
    let Ok(exe) = std::fs::read_link(format!("/proc/{}/exe", caller.tid)) else {
        return false;
    };
    if exe.file_name() != Some(OsStr::new("git")) || fence.root_of(&exe).is_some() {
        return false;
    }
    let Ok(cmdline) = std::fs::read(format!("/proc/{}/cmdline", caller.tid)) else {
        return false;
    };
    let Ok(environ) = std::fs::read(format!("/proc/{}/environ", caller.tid)) else {
        return false;
    };
    let loads_code = environ
        .split(|b| *b == 0)
        .any(|v| v.starts_with(b"LD_") || v.starts_with(b"GCONV_PATH="));
    // Read by tid: trusted only while the call still waits.
    !loads_code && caller.still_pending() && runs_stash_push(&cmdline)
}

/// Whether a command line (NUL-separated) is `git [global options] stash [push|save]…`.
fn runs_stash_push(cmdline: &[u8]) -> bool {
    let mut words = cmdline.split(|b| *b == 0).skip(1);
    loop {
        match words.next() {
            Some(b"stash") => break,
            // Global options that take the next word as their value.
            Some(
                b"-c" | b"-C" | b"--git-dir" | b"--work-tree" | b"--namespace" | b"--config-env"
                | b"--attr-source" | b"--super-prefix",
            ) => {
                words.next();
            }
            // Those that take none, and `--option=value`. Any other word before `stash`
            // (an option this list does not know might take `stash` as its value): no.
            Some(
                b"-p"
                | b"--paginate"
                | b"-P"
                | b"--no-pager"
                | b"--bare"
                | b"--no-replace-objects"
                | b"--no-lazy-fetch"
                | b"--no-optional-locks"
                | b"--no-advice"
                | b"--literal-pathspecs"
                | b"--glob-pathspecs"
                | b"--noglob-pathspecs"
                | b"--icase-pathspecs",
            ) => {}
            Some(w) if w.starts_with(b"--") && w.contains(&b'=') => {}
            _ => return false,
        }
    }
    match words.next() {
        None | Some(b"push" | b"save" | b"") => true,
        Some(w) => w.starts_with(b"-"),
    }
}

/// Reads the exec's program and argv from the target and asks `policy`: allowed execs run
/// (`CONTINUE`), refused ones fail with EACCES and a reason, and those the policy asks
/// about become a question (on Yes: judged again, then `CONTINUE`: [`judged_again`]).
pub fn check(
    policy: &Arc<dyn ExecPolicy>,
    fence: &Fence,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
) -> Outcome {
    let (request, script, missing) = match read_request(&fence.worktree, mem, caller, n) {
        Ok(r) => r,
        Err(e) => {
            // Unreadable or oversized arguments: refuse (fail closed).
            let errno = match e {
                MemoryError::TooLong(_) => libc::E2BIG,
                MemoryError::Stale => libc::EINTR,
                MemoryError::Unreadable(_) => libc::EFAULT,
            };
            return Outcome::failed(EventKind::Exec, errno);
        }
    };
    // A shell searching PATH execs every candidate: one that does not exist fails with
    // ENOENT as the kernel would fail it, without a judgement, a question or a line.
    if missing {
        return Outcome::failed(EventKind::Exec, libc::ENOENT);
    }
    let mut verdict = policy.judge(&request);
    // A script runs its `#!` interpreter with the script's path and the arguments after
    // it: `#!/usr/bin/git push` in a file named `origin`, run as `origin HEAD:main`, is
    // `git push origin HEAD:main`. The exec is judged as the kernel will run it too, and
    // the stricter judgement stands (a Yes re-judges what it approved).
    let mut request = request;
    let interpreted = match script {
        Script::Interpreted(list) => list,
        Script::None => Vec::new(),
        // An executable file fence may not read (mode 0111) whose folder the sandbox may
        // write: the sandbox may have made it a script, whose interpreter line only the
        // kernel will read.
        Script::Unreadable(path) if path.as_ref().is_none_or(|p| fence.root_of(p).is_some()) => {
            let path = path.unwrap_or_else(|| request.program.clone());
            return Outcome {
                event: EventKind::Exec,
                subject: Some(Subject::Argv(request.raw_argv)),
                allowed: false,
                level: "red",
                rule: "fence.exec-unreadable".into(),
                why: "an executable file fence cannot read".into(),
                response: Response::Error(libc::EACCES),
                reason: Some(BlockedReason {
                    what: "command (an executable file fence cannot read or follow, which \
                           the sandbox may have made: its #! line would decide what runs)"
                        .into(),
                    object: path.as_os_str().as_bytes().to_vec(),
                    rule: "fence.exec-unreadable".into(),
                    answer: None,
                }),
                ask: None,
                perform: None,
            };
        }
        Script::Unreadable(_) => Vec::new(),
        // The kernel refuses it itself, before any `#!` line: its own answer, without a
        // judgement or a line (a shell trying each folder of its `PATH`).
        Script::Refused(errno) => return Outcome::failed(EventKind::Exec, errno),
    };
    for interpreted in interpreted {
        let theirs = policy.judge(&interpreted);
        if strictness(&theirs) > strictness(&verdict) {
            verdict = theirs;
            request = ExecRequest {
                raw_argv: request.raw_argv,
                ..interpreted
            };
        }
    }
    if matches!(verdict.rule.as_str(), "git.reset-hard" | "git.clean-force")
        && is_stash_cleanup(&request.argv, caller, fence)
    {
        verdict = ExecJudgement {
            action: policy::Action::Allow,
            level: policy::Level::Green,
            rule: "git.stash-cleanup".into(),
            description: String::new(),
            reason: "git stash cleans the tree whose changes it saved".into(),
            part: String::new(),
        };
    }
    let level = verdict.level.as_str();
    if verdict.action == policy::Action::Allow {
        // The exec itself is the target's: CONTINUE lets the kernel run it, with
        // Landlock's execute right and no_new_privs still in force.
        return Outcome {
            event: EventKind::Exec,
            subject: Some(Subject::Argv(request.raw_argv)),
            allowed: true,
            level,
            rule: verdict.rule.into(),
            why: verdict.reason.into(),
            response: Response::Continue,
            reason: None,
            ask: None,
            perform: None,
        };
    }
    let object = if verdict.part.is_empty() {
        request.argv.join(" ")
    } else {
        verdict.part.clone()
    };
    let what = if verdict.reason.is_empty() {
        "command".to_string()
    } else {
        format!("command ({})", verdict.reason)
    };
    let ask = (verdict.action == policy::Action::Ask).then(|| Ask {
        level: match verdict.level {
            policy::Level::Red => Level::Red,
            policy::Level::Yellow | policy::Level::Green => Level::Yellow,
        },
        rule: verdict.rule.clone(),
        description: verdict.description.clone(),
        on_yes: OnYes::ContinueIf(judged_again(
            policy.clone(),
            fence.worktree.clone(),
            request.clone(),
            &verdict,
        )),
    });
    Outcome {
        event: EventKind::Exec,
        subject: Some(Subject::Argv(request.raw_argv)),
        allowed: false,
        level,
        rule: verdict.rule.clone().into(),
        why: verdict.reason.into(),
        response: Response::Error(libc::EACCES),
        reason: Some(BlockedReason {
            what,
            object: object.into_bytes(),
            rule: verdict.rule,
            answer: None,
        }),
        ask,
        perform: None,
    }
}

/// How strict a judgement is: a refusal, then a red question, a yellow one, a run.
fn strictness(j: &ExecJudgement) -> u8 {
    match (j.action, j.level) {
        (policy::Action::Deny, _) => 3,
        (policy::Action::Ask, policy::Level::Red) => 2,
        (policy::Action::Ask, _) => 1,
        (policy::Action::Allow, _) => 0,
    }
}

/// Script levels the kernel follows: `exec_binprm` takes an interpreter up to five times
/// (`depth > 5` is `ELOOP`); one more is read, which costs only a read.
const MOST_INTERPRETERS: usize = 6;

/// What the kernel will run for an exec, as far as a file's `#!` line says.
#[derive(Debug)]
enum Script {
    /// Not a script (or not found): the exec as named.
    None,
    /// A script: what the kernel runs, level by level (the interpreter with its argument,
    /// the file's name, the exec's arguments; then its interpreter's, and so on).
    Interpreted(Vec<ExecRequest>),
    /// A regular file the supervisor may not read (`chmod 111`, at any level): the
    /// kernel reads it anyway. Its path as resolved, `None` when it was reached through a
    /// descriptor (no folder holds it); or a path fence cannot follow.
    Unreadable(Option<PathBuf>),
    /// A file the caller may not run (at any level): the kernel fails the exec with this
    /// errno whatever the policy says.
    Refused(i32),
}

/// How the supervisor reaches the file an exec runs.
#[derive(Debug, Clone)]
enum Opener {
    /// Open `rel` beneath the folder `base` (in fence's view; `openat`, so that no prefix
    /// makes a path longer than the kernel takes): the resolved path beneath
    /// `/proc/<tid>/root`, the caller's own descriptor link under fence's `/proc`, or the
    /// path as the exec gave it from the caller's root or cwd where fence cannot follow
    /// it (another process of the sandbox's `/proc/<pid>/fd/N`). `descriptor`: reached
    /// through a descriptor or `/proc` (a memfd, a deleted file), in no folder of the
    /// fence.
    Open {
        base: PathBuf,
        rel: PathBuf,
        descriptor: bool,
    },
    /// Nothing to read: the kernel fails the exec, or no file is named.
    Nothing,
}

/// The [`Opener`] for the file a path resolution found, as the caller's resolution (by
/// [`path_resolve`], which maps the caller's `/proc/self` to its entry in fence's `/proc`)
/// left it.
fn opener_of(tid: libc::pid_t, resolution: &Resolution, raw: &[u8]) -> Opener {
    let root = PathBuf::from(format!("/proc/{tid}/root"));
    match resolution {
        Resolution::Path(p) | Resolution::Descriptor(p) if p.starts_with("/proc/") => {
            Opener::Open {
                base: PathBuf::from("/"),
                rel: p.clone(),
                descriptor: true,
            }
        }
        Resolution::Path(p) if p.is_absolute() => Opener::Open {
            base: root,
            rel: p.clone(),
            descriptor: false,
        },
        Resolution::Unresolvable(_) if !raw.is_empty() => Opener::Open {
            base: if raw.first() == Some(&b'/') {
                root
            } else {
                PathBuf::from(format!("/proc/{tid}/cwd"))
            },
            rel: PathBuf::from(OsStr::from_bytes(raw)),
            descriptor: true,
        },
        _ => Opener::Nothing,
    }
}

/// The name the kernel hands a script's interpreter (`bprm->filename`): the path as the
/// exec gave it, or `/dev/fd/N[/path]` for a path relative to a descriptor.
fn kernel_filename(base: &Base, raw: &[u8]) -> Vec<u8> {
    match base {
        Base::Fd(fd) if raw.first() != Some(&b'/') => {
            let mut name = format!("/dev/fd/{fd}").into_bytes();
            if !raw.is_empty() {
                name.push(b'/');
                name.extend_from_slice(raw);
            }
            name
        }
        _ => raw.to_vec(),
    }
}

/// The git settings of an exec's environment for an argv and program that run git.
type GitEnvOf<'a> = dyn Fn(&[Vec<u8>], &Path) -> Vec<(String, Option<String>)> + 'a;

/// What the kernel runs for a script: its `#!` interpreter with the optional argument,
/// the name the kernel gives the script, then the exec's arguments after argv[0] — and so
/// on while the interpreter is a script itself. Each as an [`ExecRequest`] to judge, its
/// git settings read from the exec's environment by `git_env` when it runs git. The file
/// is opened without blocking on a FIFO and read only when regular. Policy, as every exec
/// rule: the file may change after it is read.
fn interpreted_requests(
    worktree: &Path,
    caller: Caller,
    request: &ExecRequest,
    opener: Opener,
    filename: Vec<u8>,
    git_env: &GitEnvOf<'_>,
) -> Script {
    let mut out = Vec::new();
    let mut opener = opener;
    let mut program = request.program.clone();
    let mut named = filename;
    let mut rest: Vec<Vec<u8>> = request.raw_argv.iter().skip(1).cloned().collect();
    for _ in 0..MOST_INTERPRETERS {
        let (base, rel, descriptor) = match &opener {
            Opener::Open {
                base,
                rel,
                descriptor,
            } => (base.clone(), rel.clone(), *descriptor),
            Opener::Nothing => break,
        };
        let (interpreter, argument) = match shebang(&base, &rel) {
            Head::Script(i, a) => (i, a),
            Head::NotScript => break,
            Head::Unreadable => {
                return Script::Unreadable((!descriptor).then(|| program.clone()));
            }
            Head::Refused(errno) => return Script::Refused(errno),
        };
        let mut argv = vec![interpreter.clone()];
        argv.extend(argument);
        argv.push(named);
        argv.extend(rest);
        let resolution = path_resolve::resolve(caller, Base::Cwd, &interpreter, true);
        let next = opener_of(caller.tid, &resolution, &interpreter);
        let resolved = match resolution {
            Resolution::Path(p) => p,
            _ => PathBuf::from(OsStr::from_bytes(&interpreter)),
        };
        let current_branch = if mentions_git(&argv, &resolved) {
            super::git_head::current_branch(worktree)
        } else {
            None
        };
        out.push(ExecRequest {
            argv: argv
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect(),
            raw_argv: argv.clone(),
            program: resolved.clone(),
            cwd: request.cwd.clone(),
            current_branch,
            git_env: git_env(&argv, &resolved),
        });
        opener = next;
        named = interpreter;
        rest = argv.into_iter().skip(1).collect();
        program = resolved;
    }
    if out.is_empty() {
        Script::None
    } else {
        Script::Interpreted(out)
    }
}

/// The head of an executable file.
enum Head {
    Script(Vec<u8>, Option<Vec<u8>>),
    NotScript,
    /// A regular file this process may not open for reading.
    Unreadable,
    /// A file the caller cannot run either: the kernel fails the exec with this errno.
    Refused(i32),
}

/// The interpreter and optional argument of the `#!` line of the regular file at `path`.
fn shebang(base: &Path, rel: &Path) -> Head {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).ok();
    let (Some(base_c), Some(rel_c)) = (
        c(base),
        c(Path::new(OsStr::from_bytes(
            rel.as_os_str()
                .as_bytes()
                .strip_prefix(b"/")
                .unwrap_or(rel.as_os_str().as_bytes()),
        ))),
    ) else {
        return Head::Unreadable;
    };
    // SAFETY: open of a NUL-terminated path; the descriptor is owned below.
    let dir = unsafe {
        libc::open(
            base_c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return Head::Unreadable;
    }
    // SAFETY: a fresh descriptor that we own.
    let dir = unsafe { OwnedFd::from_raw_fd(dir) };
    // SAFETY: openat of a NUL-terminated relative path beneath our descriptor.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            rel_c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        // Nothing there, or a folder on the way that is none: the kernel fails the exec
        // too. Anything else (no right to read, a name too long for fence) leaves the file
        // unknown: refused where it matters, never taken for no script.
        return match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR | libc::EISDIR) => Head::NotScript,
            _ => match cannot_run(&dir, &rel_c) {
                Some(errno) => Head::Refused(errno),
                None => Head::Unreadable,
            },
        };
    }
    // SAFETY: a fresh descriptor that we own.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Head::NotScript;
    }
    let mut head = [0u8; BINPRM_BUF_SIZE];
    let mut len = 0;
    while len < head.len() {
        match file.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(_) => return Head::NotScript,
        }
        if len >= 2 && &head[..2] != b"#!" {
            return Head::NotScript;
        }
    }
    match parse_shebang(&head[..len]) {
        Some((i, a)) => Head::Script(i, a),
        None => Head::NotScript,
    }
}

/// The errno the kernel fails an exec of `rel` (beneath `dir`) with before it reads the
/// file, when the caller may not run it: a folder on the way it may not search (a shell
/// trying each folder of a `PATH` that names another user's `~/.cargo/bin`), or no
/// execute right. `faccessat(X_OK, AT_EACCESS)` asks with this thread's filesystem ids and
/// groups, which are the caller's while the supervisor acts for it, and no capabilities,
/// as the caller has none: the exec's own lookup and `MAY_EXEC` check, on the same view
/// (`/proc/<tid>/root`). `None` when the caller may run it: a file it can run but fence
/// cannot read (mode 0111) stays unknown.
fn cannot_run(dir: &impl std::os::fd::AsRawFd, rel: &std::ffi::CStr) -> Option<i32> {
    // SAFETY: faccessat of a NUL-terminated relative path beneath our descriptor.
    let r = unsafe { libc::faccessat(dir.as_raw_fd(), rel.as_ptr(), libc::X_OK, libc::AT_EACCESS) };
    if r == 0 {
        return None;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(e @ (libc::EACCES | libc::ENOENT | libc::ENOTDIR | libc::ELOOP)) => Some(e),
        _ => None,
    }
}

/// The bytes of a file the kernel reads for its `#!` line (`BINPRM_BUF_SIZE`).
const BINPRM_BUF_SIZE: usize = 256;

/// The `#!` line's interpreter and optional argument, from the head of a file, as the
/// kernel's `load_script` reads them: the line ends at a newline (or, with none in the
/// buffer, at its end when a blank, tab or NUL follows the interpreter); blanks and tabs
/// are trimmed around it; the interpreter ends at a blank, tab or NUL, and a NUL there
/// leaves no argument; the argument is the rest, up to a NUL.
fn parse_shebang(head: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let body = head.strip_prefix(b"#!")?;
    let spacetab = |b: &u8| *b == b' ' || *b == b'\t';
    let terminator = |b: &u8| *b == b' ' || *b == b'\t' || *b == 0;
    let line = match body.iter().position(|&b| b == b'\n') {
        Some(end) => &body[..end],
        None => {
            let start = body.iter().position(|b| !spacetab(b))?;
            // A full buffer: a blank, tab or NUL must follow the interpreter's start, its
            // last byte included, or the name may be cut (ENOEXEC); the line is then the
            // buffer but that last byte. A shorter file is padded with NULs.
            if head.len() >= BINPRM_BUF_SIZE && !body[start..].iter().any(terminator) {
                return None;
            }
            &body[..body.len().min(BINPRM_BUF_SIZE - 3)]
        }
    };
    let end = line.iter().rposition(|b| !spacetab(b)).map_or(0, |e| e + 1);
    let line = &line[..end];
    let start = line.iter().position(|b| !spacetab(b))?;
    let line = &line[start..];
    let until_nul = |s: &[u8]| s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())].to_vec();
    let (interpreter, argument) = match line.iter().position(terminator) {
        Some(sep) if line[sep] == 0 => (&line[..sep], None),
        Some(sep) => {
            let after = &line[sep..];
            let arg = after.iter().position(|b| !spacetab(b)).map(|a| &after[a..]);
            (&line[..sep], arg)
        }
        None => (line, None),
    };
    if interpreter.is_empty() {
        return None;
    }
    let argument = argument.map(until_nul).filter(|a| !a.is_empty());
    Some((until_nul(interpreter), argument))
}

/// The exec judged again after a person's Yes, with the repository as it is then (the
/// branch HEAD names, the refs a push names: the sandbox may have re-pointed them while the
/// question waited, and the person approved what the card showed). It runs if the policy
/// allows it now, or asks about the same thing for the same reason; anything else is
/// refused. Policy, not a boundary: git reads its refs again after the answer, and a
/// process racing it may still win (exec checks are policy, see the module's doc).
fn judged_again(
    policy: Arc<dyn ExecPolicy>,
    worktree: PathBuf,
    mut request: ExecRequest,
    approved: &ExecJudgement,
) -> Recheck {
    let (rule, part) = (approved.rule.clone(), approved.part.clone());
    Recheck(Box::new(move || {
        if mentions_git(&request.raw_argv, &request.program) {
            request.current_branch = super::git_head::current_branch(&worktree);
        }
        let now = policy.judge(&request);
        let same = now.action == policy::Action::Ask && now.rule == rule && now.part == part;
        if now.action == policy::Action::Allow || same {
            return Ok(());
        }
        Err(BlockedReason {
            what: format!(
                "command (changed while the question waited: {})",
                if now.reason.is_empty() {
                    now.rule.as_str()
                } else {
                    now.reason.as_str()
                }
            ),
            object: if now.part.is_empty() {
                request.argv.join(" ")
            } else {
                now.part
            }
            .into_bytes(),
            rule: now.rule,
            answer: None,
        })
    }))
}

fn read_request(
    worktree: &Path,
    mem: &TargetMemory<'_>,
    caller: Caller,
    n: &Notification,
) -> Result<(ExecRequest, Script, bool), MemoryError> {
    let a = n.args;
    let (base, path_addr, argv_addr, envp_addr, empty_is_base) = if n.nr == libc::SYS_execveat {
        (
            Base::from_dirfd(a[0]),
            a[1],
            a[2],
            a[3],
            a[4] & libc::AT_EMPTY_PATH as u64 != 0,
        )
    } else {
        (Base::Cwd, a[0], a[1], a[2], false)
    };
    let (raw_path, argv) = mem.path_and_argv(path_addr, PATH_MAX, argv_addr)?;
    if matches!(base, Base::Cwd) {
        path_resolve::settle_program_dir(&raw_path);
    }
    let cwd = ProcessCwd::of(caller.tid);
    let mut found = Found::NotLooked;
    let mut opener = Opener::Nothing;
    let program = if raw_path.is_empty() && !empty_is_base {
        PathBuf::new()
    } else {
        // A relative program path starts from the cwd: read it now, once for both.
        let known = (raw_path.first() != Some(&b'/') && matches!(base, Base::Cwd))
            .then(|| cwd.base())
            .flatten();
        let (resolution, looked) =
            path_resolve::resolve_found(caller, base, &raw_path, true, known);
        opener = match (&base, raw_path.is_empty()) {
            // `execveat(fd, "", AT_EMPTY_PATH)`: the descriptor's file itself.
            (Base::Fd(fd), true) => Opener::Open {
                base: PathBuf::from("/"),
                rel: PathBuf::from(format!("/proc/{}/fd/{fd}", caller.tid)),
                descriptor: true,
            },
            _ => opener_of(caller.tid, &resolution, &raw_path),
        };
        match resolution {
            Resolution::Path(p) => {
                found = looked;
                p
            }
            Resolution::Unresolvable(_) | Resolution::Descriptor(_) | Resolution::Fails(_) => {
                PathBuf::from(OsStr::from_bytes(&raw_path))
            }
        }
    };
    // Only a git command is judged by the branch (pushing to it), and a git command, run
    // directly or in a shell line, names git in its argv or program path: other execs
    // (most of a build) skip the `statx` of HEAD.
    let current_branch = if mentions_git(&argv, &program) {
        super::git_head::current_branch(worktree)
    } else {
        None
    };
    let git_env = if runs_git(&argv, &program) || runs_cargo(&argv, &program) {
        settings_environment(mem, envp_addr)
    } else {
        Vec::new()
    };
    // Whether the program is known to be missing. The walk's lookup of the last component
    // usually says; `lstat` when it did not look. Never for a program named through /proc:
    // `/proc/self/fd/N` and `/proc/self/exe` reach a file by its descriptor, which runs
    // although its path (a memfd's `/memfd:… (deleted)`, a replaced binary's) names
    // nothing; the kernel answers those itself.
    let missing = !raw_path.starts_with(b"/proc/")
        && match found {
            Found::Missing => true,
            Found::Exists | Found::Shared | Found::SharedObject => false,
            Found::NotLooked => {
                program.is_absolute()
                    && std::fs::symlink_metadata(&program)
                        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            }
        };
    let filename = kernel_filename(&base, &raw_path);
    let request = ExecRequest {
        argv: argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
        raw_argv: argv,
        program,
        cwd,
        current_branch,
        git_env,
    };
    let script = if missing {
        Script::None
    } else {
        let git_env = |argv: &[Vec<u8>], program: &Path| {
            if runs_git(argv, program) || runs_cargo(argv, program) {
                settings_environment(mem, envp_addr)
            } else {
                Vec::new()
            }
        };
        interpreted_requests(worktree, caller, &request, opener, filename, &git_env)
    };
    Ok((request, script, missing))
}

/// Whether the exec runs git itself: the program's file or argv[0] is named `git` or
/// `git-<command>` (`/usr/lib/git-core/git-push` is git run as `git push`).
fn runs_git(argv: &[Vec<u8>], program: &Path) -> bool {
    runs_named(argv, program, |name| {
        name == b"git" || name.starts_with(b"git-")
    })
}

/// Whether the exec runs cargo (or rustup's proxy of it), whose aliases its environment
/// may define (`CARGO_ALIAS_P=publish cargo p`).
fn runs_cargo(argv: &[Vec<u8>], program: &Path) -> bool {
    runs_named(argv, program, |name| name == b"cargo")
}

/// Whether the program's file name or argv[0]'s last component is one `named` takes.
fn runs_named(argv: &[Vec<u8>], program: &Path, named: impl Fn(&[u8]) -> bool) -> bool {
    let last = |bytes: &[u8]| named(bytes.rsplit(|c| *c == b'/').next().unwrap_or_default());
    last(program.as_os_str().as_bytes()) || argv.first().is_some_and(|a| last(a))
}

/// The variables of a git command's environment that choose its settings where the argv
/// does not show them (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>`,
/// `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_GLOBAL`…): a script that exported them earlier can
/// send `git push origin feature` to main. Read from the exec's own environment array,
/// which is what git will see (the caller's /proc environ is its start's). An environment
/// that cannot be read whole is given as `GIT_CONFIG_PARAMETERS` with no value: settings
/// unknown, which the policy takes as deciding a push (and as `CARGO_HOME` with no value:
/// cargo's aliases unknown).
///
/// `HOME` and `XDG_CONFIG_HOME` are given too where they differ from the session's (fence's
/// own): git reads the user's config from there (`~/.gitconfig`,
/// `$XDG_CONFIG_HOME/git/config`), and a script can point them at a file it wrote that sets
/// `remote.origin.push`. So are `GIT_DIR` and `GIT_COMMON_DIR`, which name another
/// repository, whose config the sandbox may have written. For cargo, `CARGO_ALIAS_<NAME>`
/// and `CARGO_HOME` (whose `config.toml` holds aliases too) are given likewise.
fn settings_environment(mem: &TargetMemory<'_>, envp_addr: u64) -> Vec<(String, Option<String>)> {
    let Ok(env) = mem.string_array(envp_addr) else {
        return vec![
            ("GIT_CONFIG_PARAMETERS".into(), None),
            ("CARGO_HOME".into(), None),
        ];
    };
    let moved = |v: &[u8], name: &str| {
        v.strip_prefix(name.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
            .is_some_and(|value| {
                std::env::var_os(name).as_deref().map(OsStrExt::as_bytes) != Some(value)
            })
    };
    env.iter()
        .filter(|v| {
            v.starts_with(b"GIT_CONFIG")
                || v.starts_with(b"GIT_DIR=")
                || v.starts_with(b"GIT_COMMON_DIR=")
                || v.starts_with(b"CARGO_ALIAS_")
                || v.starts_with(b"CARGO_HOME=")
                || moved(v, "HOME")
                || moved(v, "XDG_CONFIG_HOME")
        })
        .map(|v| {
            let text = String::from_utf8_lossy(v);
            match text.split_once('=') {
                Some((name, value)) => (name.to_string(), Some(value.to_string())),
                None => (text.into_owned(), None),
            }
        })
        .collect()
}

/// Whether the program path or an argument contains `git` (`git`, `/usr/bin/git`,
/// `git-receive-pack`, `sh -c "… git push"`).
fn mentions_git(argv: &[Vec<u8>], program: &Path) -> bool {
    let has = |bytes: &[u8]| bytes.windows(3).any(|w| w == b"git");
    has(program.as_os_str().as_bytes()) || argv.iter().any(|a| has(a))
}

impl ExecPolicy for policy::Classifier {
    /// Exec context of the policy crate, in the session's mode (`--mode auto` turns the
    /// askable exec rules into Allow; `ask-all` asks about programs no rule matches).
    fn judge(&self, request: &ExecRequest) -> ExecJudgement {
        let read_cwd = || request.cwd.get();
        let verdict = self.classify_exec(&policy::ExecEvent {
            argv: &request.argv,
            program: &request.program,
            cwd: policy::ExecCwd::Read(&read_cwd),
            current_branch: request.current_branch.as_deref(),
            env: &request.git_env,
        });
        let description = self
            .table()
            .find(&verdict.rule)
            .map(|i| self.table().rules[i].description.clone())
            .unwrap_or_default();
        ExecJudgement {
            action: verdict.action,
            level: verdict.level,
            description,
            rule: verdict.rule,
            reason: verdict.reason,
            part: verdict.part,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interpreter_line_is_read_as_the_kernel_reads_it() {
        let some = |i: &str, a: Option<&str>| {
            Some((i.as_bytes().to_vec(), a.map(|a| a.as_bytes().to_vec())))
        };
        assert_eq!(parse_shebang(b"#!/bin/sh\necho"), some("/bin/sh", None));
        assert_eq!(
            parse_shebang(b"#! \t/usr/bin/git push  \t\nx"),
            some("/usr/bin/git", Some("push"))
        );
        // The rest of the line is one argument.
        assert_eq!(
            parse_shebang(b"#!/usr/bin/env -S git push --force\n"),
            some("/usr/bin/env", Some("-S git push --force"))
        );
        assert_eq!(parse_shebang(b"#!/bin/bash"), some("/bin/bash", None));
        assert_eq!(parse_shebang(b"#!   \n"), None);
        assert_eq!(parse_shebang(b"\x7fELF"), None);
        assert_eq!(parse_shebang(b"# !/bin/sh\n"), None);
        // A NUL ends the interpreter (and then leaves no argument) or the argument.
        assert_eq!(
            parse_shebang(b"#!/usr/bin/git\0\n"),
            some("/usr/bin/git", None)
        );
        assert_eq!(
            parse_shebang(b"#!/usr/bin/git push\0x\n"),
            some("/usr/bin/git", Some("push"))
        );
        assert_eq!(
            parse_shebang(b"#!/usr/bin/git\0 push\n"),
            some("/usr/bin/git", None)
        );
        // A carriage return is part of the line.
        assert_eq!(
            parse_shebang(b"#!/bin/sh -e\r\n"),
            some("/bin/sh", Some("-e\r"))
        );
        // No newline in a full buffer: the name must end before it does.
        let mut long = b"#!/usr/bin/git push ".to_vec();
        long.resize(BINPRM_BUF_SIZE, b'x');
        assert_eq!(
            parse_shebang(&long).map(|(i, _)| i),
            Some(b"/usr/bin/git".to_vec())
        );
        let mut cut = b"#!/".to_vec();
        cut.resize(BINPRM_BUF_SIZE, b'x');
        assert_eq!(parse_shebang(&cut), None);
        let mut file = b"#!".to_vec();
        file.extend(std::iter::repeat_n(b'/', 242));
        file.extend(b"usr/bin/git ");
        file.extend(std::iter::repeat_n(b'x', 50));
        assert!(parse_shebang(&file[..BINPRM_BUF_SIZE]).is_some(), "full");
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("push"), &file).unwrap();
        assert!(
            matches!(shebang(d.path(), Path::new("push")), Head::Script(..)),
            "read from a file"
        );
        // A blank at the buffer's very last byte ends a name that fills the rest.
        let mut last = b"#!".to_vec();
        last.extend(std::iter::repeat_n(b'/', 242));
        last.extend(b"usr/bin/git ");
        assert_eq!(last.len(), BINPRM_BUF_SIZE);
        let (interpreter, argument) = parse_shebang(&last).unwrap();
        assert_eq!(interpreter.len(), BINPRM_BUF_SIZE - 3);
        assert!(interpreter.ends_with(b"usr/bin/git") && argument.is_none());
    }

    fn argv(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    #[test]
    fn only_a_stash_push_or_save_is_taken_for_the_stash() {
        for yes in [
            &b"git\0stash\0"[..],
            b"git\0stash\0push\0-m\0wip\0",
            b"/usr/bin/git\0-C\0sub\0stash\0save\0",
            b"git\0-c\0a.b=c\0stash\0-u\0",
        ] {
            assert!(runs_stash_push(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b"git\0stash\0pop\0"[..],
            b"git\0stash\0apply\0",
            b"git\0reset\0--hard\0",
            b"git\0-C\0stash\0reset\0",
            b"git\0--attr-source\0stash\0--no-pager\0x\0",
            b"git\0--unknown-option\0stash\0",
            b"sh\0-c\0git stash\0",
            b"git\0",
        ] {
            assert!(!runs_stash_push(no), "{}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn git_commands_direct_or_in_a_shell_line_carry_the_branch() {
        for (args, program) in [
            (&["git", "push"][..], "/usr/bin/git"),
            (&["push", "origin"][..], "/usr/lib/git-core/git-push"),
            (
                &["sh", "-c", "make && git push origin HEAD"][..],
                "/usr/bin/sh",
            ),
            (&["xargs", "git", "push"][..], "/usr/bin/xargs"),
        ] {
            assert!(mentions_git(&argv(args), Path::new(program)), "{args:?}");
        }
        for (args, program) in [
            (&["true"][..], "/usr/bin/true"),
            (&["cc", "-c", "a.c"][..], "/usr/bin/cc"),
            (&["sh", "-c", "make -j2"][..], "/usr/bin/sh"),
        ] {
            assert!(!mentions_git(&argv(args), Path::new(program)), "{args:?}");
        }
    }

    #[test]
    fn the_environment_is_read_for_git_itself_only() {
        for (args, program) in [
            (&["git", "push"][..], "/usr/bin/git"),
            (&["push", "origin"][..], "/usr/lib/git-core/git-push"),
            (&["git", "push"][..], "/opt/tools/g"),
        ] {
            assert!(runs_git(&argv(args), Path::new(program)), "{args:?}");
        }
        for (args, program) in [
            (&["sh", "-c", "git push"][..], "/usr/bin/sh"),
            (&["xargs", "git", "push"][..], "/usr/bin/xargs"),
            (&["digit"][..], "/usr/bin/digit"),
        ] {
            assert!(!runs_git(&argv(args), Path::new(program)), "{args:?}");
        }
    }
}

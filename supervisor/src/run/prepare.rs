//! What a sandbox is made of before it starts: the private TMPDIR, the scrubbed
//! environment, the unreadable paths, the terminal.

use std::ffi::{CStr, OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The session's private temporary directory (mode 0700), removed when dropped.
///
/// The supervisor holds an exclusive `flock` on the directory for the whole session: a
/// directory whose lock can be taken belongs to a session whose supervisor died without
/// cleaning up (SIGKILL), and the next session of the same user removes it.
#[derive(Debug)]
pub struct SessionTmp {
    pub path: PathBuf,
    _lock: std::fs::File,
}

/// A session directory younger than this is never taken for stale: its supervisor may not
/// have locked it yet.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes an exclusive lock on `dir` without waiting.
fn lock_dir(dir: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::File::open(dir)?;
    // SAFETY: flock on a descriptor we own.
    if unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}

/// Removes this user's session directories in `base` whose supervisor is gone.
///
/// Everything here is done through descriptors, never by a path resolved again: the
/// sandbox of a session without a mount namespace can write in `base` (it is that
/// session's TMPDIR's folder, or a folder `--allow-write` opened), plant a folder under
/// the name of a stale session and swap one of its folders for a symbolic link while it
/// is being removed; a removal by path would then follow the link and delete, with
/// fence's rights, whatever it leads to. See [`remove_tree`].
fn remove_stale_sessions(base: &Path, uid: u32) {
    let prefix = format!("fence-{uid}-");
    let Ok(base_fd) = open_folder(base) else {
        return;
    };
    let Ok(names) = super::spare_folders::entries(&base_fd) else {
        return;
    };
    for name in names {
        if !name.to_bytes().starts_with(prefix.as_bytes()) {
            continue;
        }
        // The folder itself, never a symbolic link in its place: the checks, the lock and
        // the removal all act on this descriptor.
        let Ok(dir) = super::spare_folders::open_dir_at(base_fd.as_raw_fd(), &name) else {
            continue;
        };
        let Ok(st) = super::spare_folders::fstat(&dir) else {
            continue;
        };
        let modified = std::time::UNIX_EPOCH
            + std::time::Duration::new(
                st.st_mtime.max(0) as u64,
                st.st_mtime_nsec.clamp(0, 999_999_999) as u32,
            );
        let old = modified.elapsed().is_ok_and(|age| age > STALE_AFTER);
        if st.st_uid != uid || !old || !try_lock(&dir) {
            continue;
        }
        empty_tree(&dir, STALE_TREE_BUDGET, None);
        drop(dir);
        // Whatever folder now has the name goes only if it is empty.
        // SAFETY: unlinkat of a NUL-terminated name relative to our descriptor.
        let _ = unsafe { libc::unlinkat(base_fd.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
    }
}

/// Takes an exclusive `flock` on the folder open at `dir` without waiting.
fn try_lock(dir: &OwnedFd) -> bool {
    // SAFETY: flock on a descriptor we own.
    unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Whether the sandbox can have a private `/tmp` (the session TMPDIR's tmpfs bound on it):
/// `/tmp` is a directory of its own (not a symbolic link) and none of `needed` — what the
/// session must see as it is: the worktree, writable folders, the home, the working
/// directory, the program and `PATH` — lies in it (a path is compared as it resolves
/// now, through its symbolic links). With a path under `/tmp` the host's stays, readable
/// and not writable.
pub fn private_tmp_fits<'a>(needed: impl IntoIterator<Item = &'a PathBuf>) -> bool {
    let tmp = Path::new("/tmp");
    if !tmp.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return false;
    }
    needed
        .into_iter()
        .all(|p| !p.starts_with(tmp) && !p.canonicalize().is_ok_and(|real| real.starts_with(tmp)))
}

/// Where the session directory is made. With a mount namespace the sandbox's TMPDIR is a
/// tmpfs the shim mounts on the directory, which is then only a mount point: it goes to
/// `/dev/shm` when that is a tmpfs directory of its own (not a symbolic link, such as
/// `/dev/shm -> /run/shm`: the shim covers `/dev/shm` with the sandbox's private tmpfs by
/// that name), since making and removing a directory on a disk file system costs disk I/O
/// on every start — on ext4 the inode is freed, reading its bitmap, at the last close
/// after `rmdir`: 0.1–0.5 ms here, against ~15 µs on tmpfs. `$TMPDIR` is then not used.
/// Without a mount namespace the directory is the TMPDIR itself: `$TMPDIR` when set (a
/// fence inside a fence then nests its TMPDIR in the outer one's), else /tmp.
pub fn session_bases(mount_namespace: bool) -> Vec<PathBuf> {
    let shm = Path::new("/dev/shm");
    let mut bases = Vec::new();
    if mount_namespace && shm.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        // SAFETY: statfs fills a zeroed, properly sized struct from a NUL-terminated path.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        // f_type's type differs between architectures; the cast is needed on some.
        #[allow(clippy::unnecessary_cast)]
        let tmpfs = unsafe { libc::statfs(c"/dev/shm".as_ptr(), &mut fs) } == 0
            && fs.f_type as i64 == libc::TMPFS_MAGIC as i64;
        if tmpfs {
            bases.push(shm.to_path_buf());
        }
    }
    bases.push(std::env::temp_dir());
    bases
}

impl SessionTmp {
    /// In the first of `bases` where it can be made (see [`session_bases`]: a /dev/shm
    /// that refuses it — full, read-only, another owner's mode — leaves /tmp).
    pub fn create_in(bases: &[PathBuf]) -> std::io::Result<SessionTmp> {
        let mut failure = None;
        for base in bases {
            match SessionTmp::create(base) {
                Ok(tmp) => return Ok(tmp),
                Err(e) => failure = Some(e),
            }
        }
        Err(failure.unwrap_or_else(|| std::io::Error::other("no place for a session directory")))
    }

    pub fn create(base: &Path) -> std::io::Result<SessionTmp> {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        remove_stale_sessions(base, uid);
        for _ in 0..16 {
            let mut random = [0u8; 8];
            std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
            let name = format!(
                "fence-{uid}-{}",
                random
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            );
            let path = base.join(name);
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let lock = lock_dir(&path)?;
                    return Ok(SessionTmp {
                        path: path.canonicalize()?,
                        _lock: lock,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other(
            "could not create a unique session directory",
        ))
    }
}

impl Drop for SessionTmp {
    fn drop(&mut self) {
        remove_tree(&self.path);
    }
}

/// Removes the directory `path` and everything in it, giving each folder its owner's full
/// rights first: the sandbox may have left one unreadable (mode 0333), which
/// `remove_dir_all` cannot list, and a session directory left behind without a mount
/// namespace would keep what the sandbox put there (a repository a symlink in the worktree
/// leads to) past the session.
///
/// A security boundary: the sandbox may still be writing in the tree (a process that
/// outlived its session without namespaces, another session sharing the folder), so every
/// step is relative to a descriptor of the folder it acts in, opened without following a
/// symbolic link; a name swapped for a link meanwhile is unlinked as the link, and a
/// folder moved away is emptied where it went, never anything the link leads to.
pub fn remove_tree(path: &Path) {
    if let (Some(parent), Some(name)) = (path.parent(), path.file_name())
        && let Ok(parent) = open_folder(parent)
        && let Ok(name) = std::ffi::CString::new(name.as_bytes())
        && let Ok(top) = open_folder_at(&parent, &name)
    {
        empty_tree(&top, OWN_TREE_BUDGET, Some(path));
        drop(top);
        // SAFETY: unlinkat of a NUL-terminated name relative to our descriptor; whatever
        // folder has the name by now goes only if it is empty.
        let _ = unsafe { libc::unlinkat(parent.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
    }
    if path.symlink_metadata().is_ok() {
        eprintln!(
            "fence: could not remove the session directory {} entirely",
            crate::escape::for_terminal(&path.display().to_string())
        );
    }
}

/// Each level being emptied holds a descriptor; a folder deeper than this is moved up into
/// the top folder (by `renameat2` between two descriptors) and emptied on a later pass, so
/// a tree of any depth goes with a bounded number of descriptors.
const MAX_DEPTH: usize = 100;
/// How long the session's own TMPDIR is emptied at its end, in passes over the top folder
/// (each takes `MAX_DEPTH` more levels) for as long as each pass removes or moves
/// something: its processes are gone by then, so the passes end when the tree does. A
/// tree 100,000 folders deep goes in about a second on tmpfs and in about two minutes on
/// an ext4 disk (~1.3 ms a level), about as long as the sandbox took to make it; this is
/// a backstop, and fence says why its exit waits once it has waited
/// [`SLOW_REMOVAL_NOTICE`]. A stale session's folder, emptied at a later start, gets
/// [`STALE_TREE_BUDGET`]: a start does not wait on what a sandbox left.
const OWN_TREE_BUDGET: std::time::Duration = std::time::Duration::from_secs(600);
const STALE_TREE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);
const SLOW_REMOVAL_NOTICE: std::time::Duration = std::time::Duration::from_secs(2);

/// Opens the folder at `path` (a session directory's parent: `/dev/shm`, `/tmp`, `$TMPDIR`).
fn open_folder(path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(path)?;
    Ok(f.into())
}

/// Folders moved up into the top folder: how many were (names are numbered by `next`).
struct Moves {
    next: u64,
    done: u64,
}

/// Removes everything in the folder open at `top`, in passes for as long as each makes
/// progress, up to `budget`; says so on fence's stderr, naming `shown`, once it has taken
/// [`SLOW_REMOVAL_NOTICE`].
fn empty_tree(top: &OwnedFd, budget: std::time::Duration, shown: Option<&Path>) {
    let mut moves = Moves { next: 0, done: 0 };
    let started = std::time::Instant::now();
    let mut told = false;
    while started.elapsed() < budget {
        if !told
            && let Some(path) = shown
            && started.elapsed() >= SLOW_REMOVAL_NOTICE
        {
            told = true;
            eprintln!(
                "fence: removing the session directory {} (the sandbox left a deep tree there; up to {} s)",
                crate::escape::for_terminal(&path.display().to_string()),
                budget.as_secs()
            );
        }
        let before = moves.done;
        empty_folder(top, 0, top, &mut moves);
        if moves.done == before {
            return;
        }
        // SAFETY: lseek of a descriptor we own: the next pass lists the folder again.
        if unsafe { libc::lseek(top.as_raw_fd(), 0, libc::SEEK_SET) } < 0 {
            return;
        }
    }
}

/// Removes `name` in the folder open at `dir`: a file, a symbolic link or any other
/// non-folder is unlinked itself; a folder is emptied through its own descriptor, then
/// removed if it is empty by then (one too deep is moved up into `top` instead).
fn remove_at(dir: &OwnedFd, name: &CStr, depth: usize, top: &OwnedFd, moves: &mut Moves) {
    // SAFETY: unlinkat of a NUL-terminated name relative to our descriptor (never follows).
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } == 0 {
        return;
    }
    let e = std::io::Error::last_os_error().raw_os_error();
    // A folder: EISDIR (EPERM on file systems that say so for unlink of a folder).
    if !matches!(e, Some(libc::EISDIR | libc::EPERM)) {
        return;
    }
    if depth >= MAX_DEPTH {
        // A name the sandbox may have taken in `top` already is skipped for the next.
        for _ in 0..64 {
            let Ok(to) = std::ffi::CString::new(format!(".fence-deep-{}", moves.next)) else {
                return;
            };
            moves.next += 1;
            // SAFETY: renameat2 of NUL-terminated names relative to our descriptors; it
            // never replaces a name in `top`.
            if unsafe {
                libc::renameat2(
                    dir.as_raw_fd(),
                    name.as_ptr(),
                    top.as_raw_fd(),
                    to.as_ptr(),
                    libc::RENAME_NOREPLACE,
                )
            } == 0
            {
                moves.done += 1;
                return;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                return;
            }
        }
        return;
    }
    if let Ok(sub) = open_folder_at(dir, name) {
        empty_folder(&sub, depth + 1, top, moves);
    }
    // SAFETY: as above, for an empty folder.
    let _ = unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
}

/// Removes everything in the folder open at `dir` (mode 0700 first).
fn empty_folder(dir: &OwnedFd, depth: usize, top: &OwnedFd, moves: &mut Moves) {
    // SAFETY: fchmod of a descriptor we own.
    let _ = unsafe { libc::fchmod(dir.as_raw_fd(), 0o700) };
    // The names are read first: the descriptor's position is not disturbed by removals.
    let Ok(names) = super::spare_folders::entries(dir) else {
        return;
    };
    for n in names {
        remove_at(dir, &n, depth, top, moves);
    }
}

/// Opens folder `name` of `dir` for reading, never through a symbolic link. One the
/// sandbox made unreadable gets mode 0700 first, through an `O_PATH` descriptor of that
/// very folder (its `/proc/self/fd` link names the inode, not a path), then is opened
/// again from that descriptor.
fn open_folder_at(dir: &OwnedFd, name: &CStr) -> std::io::Result<OwnedFd> {
    match super::spare_folders::open_dir_at(dir.as_raw_fd(), name) {
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {}
        other => return other,
    }
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat of a NUL-terminated name; the descriptor is owned below.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    let path_fd = unsafe { OwnedFd::from_raw_fd(fd) };
    std::fs::set_permissions(
        format!("/proc/self/fd/{}", path_fd.as_raw_fd()),
        std::fs::Permissions::from_mode(0o700),
    )?;
    super::spare_folders::open_dir_at(path_fd.as_raw_fd(), c".")
}

/// Whether a variable carries credentials and must not reach the sandbox unless passed
/// with `--env` (SPEC §3). By name: SPEC §3's list (names containing TOKEN, SECRET,
/// PASSWORD, KEY, CREDENTIAL; AWS_*, GITHUB_*, SSH_AUTH_SOCK, GPG_AGENT_INFO); names with
/// one of [`CREDENTIAL_WORDS`] as a whole word (`DB_PASS`, `MYSQL_PWD`, `SENTRY_DSN`: a
/// word, so that `GIT_AUTHOR_NAME`, `XAUTHORITY` and `PWD` itself stay); AUTH as the last
/// word or before CONFIG or HEADER (`BASIC_AUTH`, `DOCKER_AUTH_CONFIG`, `NPM_CONFIG__AUTH`,
/// not `AUTH_TYPE` or npm's `always_auth`); a word ending in PW; a web session's id;
/// connection strings; password-manager sessions.
/// By value: a password in a URL (`postgres://user:pw@host/db`), in a query or
/// connection string (`?password=…`, `Server=h;Password=…`), or in a proxy's login
/// without a scheme (`HTTPS_PROXY=user:pw@proxy:3128`), whatever the variable is called.
pub fn is_credential_variable(name: &OsStr, value: &OsStr) -> bool {
    // On bytes: names are short, and every variable is judged at every start (a search
    // with `str::contains` sets up a searcher each time).
    let upper = name.as_bytes().to_ascii_uppercase();
    let words: Vec<&[u8]> = upper
        .split(|c| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let holds = |hay: &[u8], part: &[u8]| hay.windows(part.len()).any(|w| w == part);
    let auth_names_a_credential = words.iter().enumerate().any(|(i, w)| {
        *w == b"AUTH"
            && match words.get(i + 1) {
                None => i == 0 || words[i - 1] != b"ALWAYS",
                Some(next) => matches!(*next, b"CONFIG" | b"HEADER"),
            }
    });
    let value = value.as_bytes();
    let joined: Vec<u8> = upper.iter().copied().filter(|c| *c != b'_').collect();
    [&b"TOKEN"[..], b"SECRET", b"PASSWORD", b"KEY", b"CREDENTIAL"]
        .iter()
        .any(|w| holds(&upper, w))
        || upper.starts_with(b"AWS_")
        || upper.starts_with(b"GITHUB_")
        || upper.starts_with(b"OP_SESSION_")
        || matches!(
            upper.as_slice(),
            b"SSH_AUTH_SOCK" | b"GPG_AGENT_INFO" | b"KRB5CCNAME" | b"SSHPASS" | b"BW_SESSION"
        )
        || holds(&joined, b"CONNECTIONSTRING")
        || (words.iter().any(|w| CREDENTIAL_WORDS.contains(w))
            && !matches!(upper.as_slice(), b"PWD" | b"OLDPWD"))
        || auth_names_a_credential
        // `DB_PW`, `PW`, `LDAP_BINDPW`, `MASTERPW`; not Playwright's `PW_TEST_…` settings.
        || words.iter().enumerate().any(|(i, w)| {
            w.ends_with(b"PW") && !(*w == b"PW" && i == 0 && words.len() > 1)
        })
        // A web session's id (`SESSIONID`, `APP_SESSION_ID`); not the login session's
        // number (`XDG_SESSION_ID`).
        || (holds(&joined, b"SESSIONID") && !upper.starts_with(b"XDG_"))
        // Bundler's credentials for a gem server: `BUNDLE_<HOST>` with the host's dots as
        // `__` (`BUNDLE_GEMS__EXAMPLE__COM=user:pass`); not its settings whose keys hold a
        // dot (`build.nokogiri`, `local.rack`, `mirror.…` — a password in a mirror's URL
        // is found below —, `git.allow_insecure`, `gem.test`, `path.system`).
        || (upper.starts_with(b"BUNDLE_")
            && holds(&upper, b"__")
            && ![
                &b"BUNDLE_BUILD__"[..],
                b"BUNDLE_LOCAL__",
                b"BUNDLE_MIRROR__",
                b"BUNDLE_GIT__",
                b"BUNDLE_GEM__",
                b"BUNDLE_PATH__",
            ]
            .iter()
            .any(|setting| upper.starts_with(setting)))
        || has_url_password(value)
        || has_password_field(value)
        || (upper.ends_with(b"_PROXY") && has_bare_login(value))
        || (!names_paths(&upper) && has_secret_text(value))
}

/// Whether a variable holds paths or names a place (`PATH`, `LD_LIBRARY_PATH`, `HOME`,
/// `PWD`): removed, it would break every program of the sandbox, and a folder's name in
/// it may look like a token (`/opt/hf_models_…`). Its name is still judged above.
fn names_paths(upper: &[u8]) -> bool {
    upper.ends_with(b"PATH") || matches!(upper, b"HOME" | b"PWD" | b"OLDPWD" | b"SHELL")
}

/// Whether `value` holds a secret whatever the variable is called: a PEM private key, an
/// HTTP `Authorization:` header (git's `http.extraHeader` in `GIT_CONFIG_VALUE_<n>` or
/// `GIT_CONFIG_PARAMETERS`), a Slack or Discord webhook (its path is the secret), or an
/// Azure shared access signature (`sv=…&sig=…`).
fn has_secret_text(value: &[u8]) -> bool {
    let holds = |part: &[u8]| value.windows(part.len()).any(|w| w == part);
    let holds_any_case = |part: &[u8]| {
        value
            .windows(part.len())
            .any(|w| w.eq_ignore_ascii_case(part))
    };
    holds(b"PRIVATE KEY-----")
        || holds_any_case(b"authorization:")
        || holds(b"hooks.slack.com/services/")
        || holds(b"/api/webhooks/")
        || (has_field(value, b"sig") && has_field(value, b"sv"))
        || has_issued_token(value)
}

/// The shapes of tokens that services issue with a fixed prefix, as their own secret
/// scanners look for them: the prefix at the start of the value or after a character that
/// cannot be part of a token, then at least as many token characters as the shortest real
/// one has (so that `sk-learn` or `hf_hub` in a path is not one).
const ISSUED_TOKENS: [(&[u8], usize); 27] = [
    (b"ghp_", 30), // GitHub: personal, OAuth, user-to-server, server-to-server, refresh
    (b"gho_", 30),
    (b"ghu_", 30),
    (b"ghs_", 30),
    (b"ghr_", 30),
    (b"github_pat_", 30),
    (b"glpat-", 20), // GitLab: personal, deploy, runner, pipeline trigger
    (b"gldt-", 20),
    (b"glrt-", 20),
    (b"glptt-", 20),
    (b"xoxb-", 10), // Slack: bot, user, app, refresh, legacy workspace
    (b"xoxp-", 10),
    (b"xoxa-", 10),
    (b"xoxe-", 10),
    (b"xoxs-", 10),
    (b"sk-ant-", 20),  // Anthropic
    (b"sk-", 32),      // OpenAI (sk-proj-…, sk-svcacct-…, older sk-…)
    (b"AIza", 35),     // Google API key
    (b"ya29.", 20),    // Google OAuth access token
    (b"npm_", 36),     // npm
    (b"pypi-AgE", 50), // PyPI
    (b"hf_", 30),      // Hugging Face
    (b"sk_live_", 20), // Stripe secret and restricted keys
    (b"rk_live_", 20),
    (b"dckr_pat_", 20), // Docker Hub
    (b"dop_v1_", 64),   // DigitalOcean
    (b"shpat_", 32),    // Shopify
];

/// Whether `value` holds a token of one of [`ISSUED_TOKENS`]' shapes, or an AWS access key
/// id (`AKIA`/`ASIA` and 16 upper-case letters or digits), or a JSON Web Token
/// (`eyJ…` base64url header, payload and signature): a credential under a name the other
/// checks do not know (`DEPLOY=ghp_…`, `CI_VAR_3=glpat-…`).
fn has_issued_token(value: &[u8]) -> bool {
    let token_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let run =
        |from: usize, ok: &dyn Fn(u8) -> bool| value[from..].iter().take_while(|&&b| ok(b)).count();
    (0..value.len()).any(|at| {
        // Every shape opens with one of these letters: most places of a long value
        // (`LS_COLORS`) are passed over by one comparison.
        let opens_a_shape = matches!(
            value[at],
            b'g' | b'x' | b's' | b'A' | b'y' | b'n' | b'p' | b'h' | b'r' | b'd' | b'e'
        );
        if !opens_a_shape || (at > 0 && (token_char(value[at - 1]) || value[at - 1] == b'.')) {
            return false;
        }
        let rest = &value[at..];
        ISSUED_TOKENS.iter().any(|(prefix, least)| {
            if !rest.starts_with(prefix) {
                return false;
            }
            let len = run(at + prefix.len(), &token_char);
            let body = &rest[prefix.len()..prefix.len() + len];
            // Issued tokens are random: letters and digits both (a name such as
            // `sk-the-long-name-of-a-folder-here` is not one).
            len >= *least
                && body.iter().any(u8::is_ascii_digit)
                && body.iter().any(u8::is_ascii_alphabetic)
        }) || ((rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA"))
            && run(at + 4, &|b: u8| {
                b.is_ascii_uppercase() || b.is_ascii_digit()
            }) == 16
            && value.get(at + 20).is_none_or(|&b| !token_char(b)))
            || (rest.starts_with(b"eyJ") && is_jwt(rest))
    })
}

/// Whether `text` opens with three base64url parts joined by dots, the first two of at
/// least ten characters and the signature of at least twenty.
fn is_jwt(text: &[u8]) -> bool {
    let part = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    let mut parts = text.split(|b| *b == b'.');
    let lens: Vec<usize> = parts
        .by_ref()
        .take(3)
        .map(|p| p.iter().take_while(|b| part(b)).count())
        .collect();
    matches!(lens.as_slice(), [h, p, s] if *h >= 10 && *p >= 10 && *s >= 20)
}

/// Words that name a credential when they stand alone in a variable's name.
/// (`CI_JOB_JWT` is GitLab's signed identity token, `SLACK_WEBHOOK_URL` a URL whose path
/// is the secret; `BEARER` and `AUTHORIZATION` name tokens sent as they are.)
const CREDENTIAL_WORDS: [&[u8]; 17] = [
    b"PAT",
    b"TOK",
    b"PWORD",
    b"COOKIES",
    b"COOKIEJAR",
    b"CREDS",
    b"PASS",
    b"PASSWD",
    b"PWD",
    b"PASSPHRASE",
    b"DSN",
    b"COOKIE",
    b"CONNSTR",
    b"JWT",
    b"WEBHOOK",
    b"BEARER",
    b"AUTHORIZATION",
];

/// Whether `value` holds a URL whose authority has a user and a password
/// (`scheme://user:password@host`), anywhere in it (lists of URLs included). The authority
/// ends at `/`, `?`, `#` or white space (RFC 3986: `,` and `;` may appear in a password).
fn has_url_password(value: &[u8]) -> bool {
    let mut rest = value;
    while let Some(at) = scheme_separator(rest) {
        let after = &rest[at + 3..];
        let end = after
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#') || b.is_ascii_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..end];
        if let Some(userinfo_end) = authority.iter().rposition(|&b| b == b'@')
            && authority[..userinfo_end].contains(&b':')
        {
            return true;
        }
        rest = after;
    }
    false
}

/// Whether `value` has a `password=` or `pwd=` field (any case) at its start or after `;`,
/// `&`, `?`, `.` or white space: a query string, a connection string, or a Java system
/// property (`-Dspring.datasource.password=…` in `JAVA_TOOL_OPTIONS`, `MAVEN_OPTS`).
fn has_password_field(value: &[u8]) -> bool {
    has_field(value, b"password")
        || has_field(value, b"pwd")
        || has_query_secret(value)
        || has_password_property(value)
}

/// Whether `value` sets a property whose name ends in `password`, `passwd` or
/// `passphrase`, whatever comes before it: Java's `-Djavax.net.ssl.keyStorePassword=…`
/// in `JAVA_TOOL_OPTIONS`, `MAVEN_OPTS` or `GRADLE_OPTS`, `-Dgpg.passphrase=…`. A trust
/// store's password is not one (`trustStorePassword`, most often the public default
/// `changeit`): it guards public certificates, and a corporate trust store set up that
/// way must keep working in the sandbox.
fn has_password_property(value: &[u8]) -> bool {
    const TRUST_STORE: &[u8] = b"truststore";
    value
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'=')
        .any(|(at, _)| {
            [&b"password"[..], b"passwd", b"passphrase"]
                .iter()
                .any(|field| {
                    at.checked_sub(field.len()).is_some_and(|start| {
                        value[start..at].eq_ignore_ascii_case(field)
                            && !start
                                .checked_sub(TRUST_STORE.len())
                                .is_some_and(|t| value[t..start].eq_ignore_ascii_case(TRUST_STORE))
                    })
                })
        })
}

/// Whether `value` holds a URL query parameter that services use to carry a key or token
/// (`?key=…` of Google's APIs, `&access_token=…`, `?token=…`): after `?` or `&` only, so
/// that a `key=value` list is not taken for one.
fn has_query_secret(value: &[u8]) -> bool {
    const FIELDS: [&[u8]; 7] = [
        b"key",
        b"api_key",
        b"apikey",
        b"token",
        b"access_token",
        b"secret",
        b"client_secret",
    ];
    value
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'=')
        .any(|(at, _)| {
            FIELDS.iter().any(|field| {
                at.checked_sub(field.len() + 1).is_some_and(|start| {
                    matches!(value[start], b'?' | b'&')
                        && value[start + 1..at].eq_ignore_ascii_case(field)
                })
            })
        })
}

/// Whether `value` has the field `field=` (any case) at its start or after `;`, `&`, `?`,
/// `.` or white space.
fn has_field(value: &[u8], field: &[u8]) -> bool {
    // Each `=` in one pass (values such as LS_COLORS run to kilobytes), the field's name
    // before it compared in place.
    value
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'=')
        .any(|(at, _)| {
            at.checked_sub(field.len()).is_some_and(|start| {
                value[start..at].eq_ignore_ascii_case(field)
                    && (start == 0
                        || matches!(value[start - 1], b';' | b'&' | b'?' | b'.')
                        || value[start - 1].is_ascii_whitespace())
            })
        })
}

/// Where the first `://` in `value` begins.
fn scheme_separator(value: &[u8]) -> Option<usize> {
    value
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b':')
        .map(|(i, _)| i)
        .find(|&i| value[i + 1..].starts_with(b"//"))
}

/// Whether a proxy setting without a scheme carries a login (`user:pw@proxy:3128`).
fn has_bare_login(value: &[u8]) -> bool {
    scheme_separator(value).is_none()
        && value
            .iter()
            .rposition(|&b| b == b'@')
            .is_some_and(|at| value[..at].contains(&b':'))
}

/// The names of the variables [`sandbox_environment`] removes as credentials (for the audit
/// log; never their values).
pub fn removed_credentials(
    vars: impl Iterator<Item = (OsString, OsString)>,
    pass: &[String],
) -> Vec<String> {
    let mut names: Vec<String> = vars
        .filter(|(k, v)| is_credential_variable(k, v) && !pass.iter().any(|p| OsStr::new(p) == k))
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The target's environment: ours without credentials (except those passed on purpose),
/// with TMPDIR pointing at the session directory.
pub fn sandbox_environment(
    vars: impl Iterator<Item = (OsString, OsString)>,
    pass: &[String],
    tmpdir: &Path,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vars
        .filter(|(k, v)| !is_credential_variable(k, v) || pass.iter().any(|p| OsStr::new(p) == k))
        .filter(|(k, _)| k != "TMPDIR")
        .collect();
    env.push(("TMPDIR".into(), tmpdir.as_os_str().to_owned()));
    env
}

/// The unreadable paths (SPEC §2, under each of `homes`) and `extra` (`--deny-read`), in
/// three lists: those that exist, canonical (one beneath another left out); those that do
/// not exist yet, each where it would be made: its symbolic links followed as far as they
/// lead (a dangling one's target included), the missing rest kept; and the folders holding
/// a link met on the way to any of them ([`link_folders`]). A secret made during the
/// session (a login in another terminal, or the target of a dangling `~/.netrc` link) must
/// be as unreadable as one that was there at start. One pass over the candidates: each
/// costs a few system calls per component, on every start.
pub fn denied_reads(
    homes: &[PathBuf],
    extra: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>) {
    let mut existing = Vec::new();
    let mut missing = Vec::new();
    let mut candidates: Vec<PathBuf> = homes
        .iter()
        .flat_map(|h| secret_candidates(Some(h), extra))
        .collect();
    if homes.is_empty() {
        candidates = secret_candidates(None, extra);
    }
    // One walk a candidate, each path met looked up once for all of them (they share
    // their folders: the home, /etc): a canonical path where the walk reached the end, else
    // where the path would be made.
    let mut looked = Looked::default();
    let mut via = Vec::new();
    for p in &candidates {
        match walk_links(&mut looked, p, |folder, _| via.push(folder.to_path_buf())) {
            Some((resolved, Reached::End)) => existing.push(resolved),
            Some((placed, Reached::Missing)) => missing.push(placed),
            None => {}
        }
    }
    for list in [&mut existing, &mut missing] {
        list.sort();
        list.dedup();
    }
    via.sort();
    via.dedup();
    (outermost(existing), missing, via)
}

/// `paths` sorted, without duplicates and without one beneath another (a home's keys inside
/// a hidden /root go with it).
pub fn outermost(paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut sorted: Vec<PathBuf> = paths.into_iter().collect();
    sorted.sort();
    sorted.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in sorted {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

/// The home directories whose secrets are hidden: `$HOME`, and the account's own from the
/// password database when it differs or `HOME` is unset (a sandbox started with another
/// `HOME` must not read the real one's keys); canonical where they exist.
pub fn home_dirs(env_home: Option<&Path>) -> Vec<PathBuf> {
    let account = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.dir);
    let mut homes: Vec<PathBuf> = env_home
        .map(Path::to_path_buf)
        .into_iter()
        .chain(account)
        .filter(|h| h.is_absolute() && h != Path::new("/"))
        .map(|h| h.canonicalize().unwrap_or(h))
        .collect();
    homes.dedup();
    homes
}

/// The folders holding a symbolic link met on the way to each of `paths` (absolute): a
/// link re-pointed there during the session (`..data -> ..v2`, as Kubernetes swaps secret
/// volumes) leads the same name to a new object, so the view freezes these folders too.
pub fn link_folders(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut looked = Looked::default();
    for p in paths {
        walk_links(&mut looked, p, |folder, _| out.push(folder.to_path_buf()));
    }
    out.sort();
    out.dedup();
    out
}

/// Where fence's own config lies or would be made, as the kernel resolves it (links
/// followed, a missing rest kept), and every symbolic link on the way to it (re-pointed, a
/// link would lead later sessions to a config of the sandbox's): the `fence` folder of
/// `$XDG_CONFIG_HOME` (when absolute) and of each home's `.config` (a session started
/// without the variable reads that one), and `explicit`, a `--config` file.
pub fn fence_config_paths(
    homes: &[PathBuf],
    xdg_config_home: Option<&Path>,
    explicit: Option<&Path>,
) -> Vec<PathBuf> {
    let mut looked = Looked::default();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let mut out: Vec<PathBuf> = Vec::new();
    let folders: Vec<PathBuf> = xdg_config_home
        .filter(|x| x.is_absolute())
        .map(|x| x.join("fence"))
        .into_iter()
        .chain(homes.iter().map(|h| h.join(".config/fence")))
        .collect();
    // The file fence reads in each folder too: a link there (GNU stow's) leads elsewhere.
    let named = folders
        .iter()
        .flat_map(|f| [f.clone(), f.join("config.toml")])
        .chain(explicit.map(|e| cwd.join(e)));
    for p in named {
        out.extend(resolved_with_links(&mut looked, &p));
    }
    out.sort();
    out.dedup();
    out
}

/// The symbolic links among and on the way to the protected paths that lie in a
/// `writable` root: the protected links of the worktree (`shim::protected_paths::
/// protected_links`), its `.git`, and every link met on the way to each of `protected`.
/// Without watched writes nothing holds them (a read-only mount holds no link), so
/// `--no-write-watch` is refused while there are any. The second value: the protected
/// folders held more than was looked through (then there may be others).
pub fn links_to_protected(
    worktree: &Path,
    protected: &[PathBuf],
    writable: &[PathBuf],
) -> (Vec<PathBuf>, bool) {
    let mut looked = Looked::default();
    let (mut out, more) = shim::protected_paths::protected_links(worktree);
    for p in protected.iter().chain([&worktree.join(".git")]) {
        walk_links(&mut looked, p, |folder, name| out.push(folder.join(name)));
    }
    out.retain(|l| writable.iter().any(|r| l.starts_with(r) && l != r));
    out.sort();
    out.dedup();
    (out, more)
}

/// Where `p` lies or would be made as the kernel resolves it (links followed, a missing
/// rest kept), with every symbolic link on the way to it, whose own names then lead
/// nowhere else.
fn resolved_with_links(looked: &mut Looked, p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let placed = walk_links(looked, p, |folder, name| out.push(folder.join(name)));
    // A loop or an unreadable link: the path as named, whatever it leads to.
    let placed = placed.map(|(placed, _)| placed).unwrap_or(p.to_path_buf());
    // Past a missing folder the rest is kept as written: a `..` there (`gone/../cfg`,
    // a dangling link's target) steps out of a folder the sandbox could make, and out
    // of wherever that folder's name would then lead. Both are protected: the folder
    // it steps out of (so that it is never made) and the path without it.
    if placed
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        let mut prefix = PathBuf::new();
        let mut lexical = PathBuf::new();
        for c in placed.components() {
            if c == std::path::Component::ParentDir {
                out.push(prefix.clone());
                lexical.pop();
            } else {
                lexical.push(c);
            }
            prefix.push(c);
        }
        out.push(lexical);
    }
    out.push(placed);
    out
}

/// How far [`walk_links`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reached {
    /// Every component exists: the path is canonical (what `realpath` gives).
    End,
    /// A component is missing (or cannot be looked at): the rest is kept as it is.
    Missing,
}

/// What a walk found at a path.
#[derive(Debug, Clone)]
enum Found {
    Nothing,
    Link(PathBuf),
    /// A link whose target cannot be read.
    UnreadableLink,
    Other,
}

/// What was found at each path the walks of one preparation looked at.
#[derive(Default)]
struct Looked(std::collections::HashMap<PathBuf, Found>);

impl Looked {
    fn at(&mut self, path: &Path) -> Found {
        if let Some(known) = self.0.get(path) {
            return known.clone();
        }
        let found = match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(path) {
                Ok(target) => Found::Link(target),
                Err(_) => Found::UnreadableLink,
            },
            Ok(_) => Found::Other,
            Err(_) => Found::Nothing,
        };
        self.0.insert(path.to_path_buf(), found.clone());
        found
    }
}

/// Where absolute path `p` leads: each component that exists is followed if it is a
/// symbolic link (its target read even when that does not exist), and the first missing
/// one and the rest are kept as they are; `on_link` is told the folder holding each link
/// followed, and its name there. `None` for a relative path, a loop, or a link that cannot
/// be read.
fn walk_links(
    looked: &mut Looked,
    p: &Path,
    mut on_link: impl FnMut(&Path, &std::ffi::OsStr),
) -> Option<(PathBuf, Reached)> {
    use std::collections::VecDeque;
    use std::path::Component;
    if !p.is_absolute() {
        return None;
    }
    let mut todo: VecDeque<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut done = PathBuf::from("/");
    let mut links = 0;
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&name);
        match looked.at(&next) {
            Found::Link(target) => {
                links += 1;
                if links > 40 {
                    return None;
                }
                on_link(&done, &name);
                if target.is_absolute() {
                    done = PathBuf::from("/");
                }
                for c in target.components().rev() {
                    match c {
                        Component::Normal(n) => todo.push_front(n.to_owned()),
                        Component::ParentDir => todo.push_front("..".into()),
                        _ => {}
                    }
                }
            }
            Found::UnreadableLink => return None,
            Found::Other => done = next,
            Found::Nothing => {
                done = next;
                done.extend(todo);
                return Some((done, Reached::Missing));
            }
        }
    }
    Some((done, Reached::End))
}

/// Most entries of one secret folder looked at by [`secrets_with_other_names`], on every
/// start (`~/.ssh` holds a handful; a large folder is looked at in part).
const MOST_SECRET_ENTRIES_LOOKED_AT: usize = 256;

/// How deep below a folder [`files_with_other_names`] looks (gcloud keeps a key at
/// `legacy_credentials/ACCOUNT/adc.json`).
const MOST_FOLDER_DEPTH: usize = 4;

/// The regular files among `paths` and in the folders among them (not followed, at most
/// [`MOST_FOLDER_DEPTH`] folders deep, at most `most` entries looked at below each) that
/// have more than one name (hard links), with what `lstat` said of each.
/// Folders named as `skip` says are not looked into.
fn files_with_other_names(
    paths: &[PathBuf],
    most: usize,
    skip: &dyn Fn(&OsStr) -> bool,
) -> Vec<(PathBuf, std::fs::Metadata)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    for path in paths {
        let Ok(m) = std::fs::symlink_metadata(path) else {
            continue;
        };
        if !m.is_dir() {
            if m.is_file() && m.nlink() > 1 {
                out.push((path.clone(), m));
            }
            continue;
        }
        let mut budget = most;
        let mut folders = vec![(path.clone(), 0)];
        while let Some((folder, depth)) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                let Ok(m) = entry.metadata() else { continue };
                if m.is_dir() {
                    if depth < MOST_FOLDER_DEPTH && !skip(&entry.file_name()) {
                        folders.push((entry.path(), depth + 1));
                    }
                } else if m.is_file() && m.nlink() > 1 {
                    out.push((entry.path(), m));
                }
            }
        }
    }
    out
}

/// For each regular file among the unreadable paths `secrets` (as [`denied_reads`] lists
/// those that exist), or in a secret folder ([`files_with_other_names`], at most
/// [`MOST_SECRET_ENTRIES_LOOKED_AT`] entries each), that has more than one name, a warning
/// naming it: another name, made before the session, reads it wherever it lies.
pub fn secrets_with_other_names(secrets: &[PathBuf]) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    files_with_other_names(secrets, MOST_SECRET_ENTRIES_LOOKED_AT, &|_| false)
        .into_iter()
        .map(|(path, m)| {
            format!(
                "the secret {} has {} names (hard links): any other name of it stays readable where it lies",
                path.display(),
                m.nlink()
            )
        })
        .collect()
}

/// Entries of the protected folders looked at by [`other_names_of_protected`].
const MOST_PROTECTED_ENTRIES_LOOKED_AT: usize = 10_000;

/// Entries of the writable roots looked through for the other names of a protected file.
const MOST_WRITABLE_ENTRIES_LOOKED_AT: usize = 2_000_000;

/// The other names, in the `writable` roots, of the protected files among `protected`
/// (files, and the files in protected folders) that have more than one name: a hard link
/// made before the session (`ln tools/hook.sh .git/hooks/pre-commit`). The fence holds a
/// protected file by its paths, and a write by another name changes the same file, which
/// git or an editor then runs; a private copy of a shared file is made from a look by path,
/// which a thread swapping folders defeats. So those names are protected as the file is
/// (read-only in the mount view, held folders above them). Only when some protected file
/// has other names are the roots walked (by the names' inode numbers, from the listings);
/// an error when they hold more than [`MOST_WRITABLE_ENTRIES_LOOKED_AT`] entries, since a
/// name not found would stay writable.
pub fn other_names_of_protected(
    protected: &[PathBuf],
    writable: &[PathBuf],
) -> Result<Vec<PathBuf>, String> {
    use std::os::unix::fs::{DirEntryExt, MetadataExt};
    // A git directory's objects run nothing (and `git clone --local` links them to the
    // repository cloned, outside).
    let shared = files_with_other_names(protected, MOST_PROTECTED_ENTRIES_LOOKED_AT, &|name| {
        name == "objects" || name == "lfs"
    });
    if shared.is_empty() {
        return Ok(Vec::new());
    }
    let inodes: std::collections::HashSet<(u64, u64)> =
        shared.iter().map(|(_, m)| (m.dev(), m.ino())).collect();
    let devices: std::collections::HashSet<u64> = inodes.iter().map(|(d, _)| *d).collect();
    let names: std::collections::HashSet<&Path> = shared.iter().map(|(p, _)| p.as_path()).collect();
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut walked = std::collections::HashSet::new();
    for root in writable {
        let Ok(m) = std::fs::symlink_metadata(root) else {
            continue;
        };
        if !m.is_dir() || !devices.contains(&m.dev()) {
            continue;
        }
        let mut folders = vec![root.clone()];
        while let Some(folder) = folders.pop() {
            if !walked.insert(folder.clone()) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MOST_WRITABLE_ENTRIES_LOOKED_AT {
                    let files: Vec<String> = shared
                        .iter()
                        .map(|(p, _)| p.display().to_string())
                        .collect();
                    return Err(format!(
                        "protected files have other names (hard links): {}; the writable folders hold more than {MOST_WRITABLE_ENTRIES_LOOKED_AT} entries to look through for them, and a name not found would let the sandbox change what git or an editor runs: remove the other links (or make each file a copy)",
                        crate::escape::for_terminal(&files.join(", ")),
                    ));
                }
                match entry.file_type() {
                    // A folder on another file system holds no name of these.
                    Ok(t)
                        if t.is_dir()
                            && entry.metadata().is_ok_and(|m| devices.contains(&m.dev())) =>
                    {
                        folders.push(entry.path());
                    }
                    Ok(t) if t.is_file() => {
                        if !inodes.iter().any(|(_, ino)| *ino == entry.ino()) {
                            continue;
                        }
                        let path = entry.path();
                        if names.contains(path.as_path()) {
                            continue;
                        }
                        if std::fs::symlink_metadata(&path)
                            .is_ok_and(|m| inodes.contains(&(m.dev(), m.ino())))
                        {
                            out.push(path);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Credentials in the home besides SPEC §2's list, as common and as plainly a key to
/// someone's account: tokens and passwords of other services' clients that a program in
/// the sandbox would read and send anywhere it can reach (shared with `fence check`'s
/// secret list, [`policy::EXTRA_SECRETS`]).
const MORE_CREDENTIALS: &[&str] = policy::EXTRA_SECRETS_IN_HOME;

fn secret_candidates(home: Option<&Path>, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(home) = home {
        for rel in [
            ".ssh",
            ".aws",
            ".gnupg",
            ".config/gh",
            ".config/gcloud",
            ".azure",
            ".kube",
            ".docker/config.json",
            ".netrc",
            ".npmrc",
            ".pypirc",
            ".git-credentials",
            // git's credential store also reads and writes its XDG file.
            ".config/git/credentials",
        ]
        .iter()
        .chain(MORE_CREDENTIALS)
        {
            candidates.push(home.join(rel));
        }
        candidates.extend(entries_matching(&home.join(".cargo"), |n| {
            n.starts_with(b"credentials")
        }));
        // The names cargo writes, for when none exists yet.
        candidates.push(home.join(".cargo/credentials"));
        candidates.push(home.join(".cargo/credentials.toml"));
    }
    // podman's and skopeo's registry logins are first in the runtime folder
    // (`$XDG_RUNTIME_DIR/containers/auth.json`; `~/.config/containers/auth.json` is the
    // other place, above). Only one that exists: a missing one would freeze the runtime
    // folder's listing, with the session bus's and other programs' sockets in it.
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|r| !r.is_empty()) {
        let auth = PathBuf::from(runtime).join("containers/auth.json");
        if auth.symlink_metadata().is_ok() {
            candidates.push(auth);
        }
    }
    candidates.extend(
        [
            "/etc/shadow",
            "/etc/gshadow",
            "/etc/shadow-",
            "/etc/gshadow-",
        ]
        .map(PathBuf::from),
    );
    // Debian's daily copies of them (`/var/backups/shadow.bak`, `gshadow.bak`; root's files,
    // which a root session reads; outside `/etc`, which a root session sees shifted).
    candidates.extend(entries_matching(Path::new("/var/backups"), |n| {
        matches!(n, b"shadow.bak" | b"gshadow.bak")
    }));
    candidates.extend(entries_matching(Path::new("/etc"), |n| {
        n.starts_with(b"sudoers")
    }));
    candidates.extend(entries_matching(Path::new("/etc/ssh"), |n| {
        n.ends_with(b"_key")
    }));
    // The host keys `ssh-keygen -A` makes (first boot, openssh-server installed during the
    // session) where none is there yet: root can read them once made. Missing ones freeze
    // their folder, so a key made during the session never appears.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        for kind in ["rsa", "ecdsa", "ed25519", "dsa"] {
            candidates.push(PathBuf::from(format!("/etc/ssh/ssh_host_{kind}_key")));
        }
    }
    // Kerberos ticket caches: MIT's default `/tmp/krb5cc_<uid>` (sssd's `…_<random>`), and
    // the one `KRB5CCNAME` names (a file, or a `DIR:` collection), which the sandbox's
    // environment loses but whose file stays where it is. A ticket there logs in as the
    // user to every service of the realm. Only those that exist at start: one that does
    // not would freeze /tmp for every session; a `kinit` on the host during the session
    // makes one the sandbox can read.
    candidates.extend(entries_matching(Path::new("/tmp"), |n| {
        n.starts_with(b"krb5cc_")
    }));
    candidates.extend(kerberos_cache_named(
        std::env::var_os("KRB5CCNAME").as_deref(),
    ));
    // /root holds root's secrets unless it is this session's own home.
    let home_is_root =
        home.and_then(|h| h.canonicalize().ok()).as_deref() == Some(Path::new("/root"));
    if !home_is_root {
        candidates.push(PathBuf::from("/root"));
    }
    candidates.extend(extra.iter().cloned());
    candidates
}

/// The file or folder a `KRB5CCNAME` value names: `FILE:PATH`, `DIR:PATH` (`DIR::PATH`
/// names one cache of a collection: its folder), or a bare absolute path. Kernel keyrings,
/// KCM and memory caches are no path.
fn kerberos_cache_named(value: Option<&OsStr>) -> Option<PathBuf> {
    let bytes = value?.as_bytes();
    let path = if let Some(rest) = bytes.strip_prefix(b"FILE:") {
        Path::new(OsStr::from_bytes(rest)).to_path_buf()
    } else if let Some(rest) = bytes.strip_prefix(b"DIR:") {
        match rest.strip_prefix(b":") {
            Some(one) => Path::new(OsStr::from_bytes(one)).parent()?.to_path_buf(),
            None => Path::new(OsStr::from_bytes(rest)).to_path_buf(),
        }
    } else if bytes.starts_with(b"/") {
        Path::new(OsStr::from_bytes(bytes)).to_path_buf()
    } else {
        return None;
    };
    path.is_absolute().then_some(path)
}

fn entries_matching(dir: &Path, keep: impl Fn(&[u8]) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| keep(e.file_name().as_bytes()))
        .map(|e| e.path())
        .collect()
}

/// The folders whose paths are protected by the worktree's rules besides the worktree
/// (`Fence::rule_bases`): each `--allow-write` folder outside the worktree, which outlives
/// the session and may be a repository or become one, or hold one a symlink in the
/// worktree leads to; for a folder named `.git` (a repository's git directory,
/// opened so that a linked worktree can commit), the folder above it, so that its hooks
/// and config are `.git/hooks` and `.git/config` there.
pub fn rule_bases(worktree: &Path, allow_write: &[PathBuf]) -> Vec<PathBuf> {
    let mut bases: Vec<PathBuf> = allow_write
        .iter()
        .filter(|r| r.is_dir())
        .map(|r| match r.parent() {
            Some(parent) if r.file_name() == Some(OsStr::new(".git")) => parent.to_path_buf(),
            _ => r.clone(),
        })
        .filter(|b| !b.starts_with(worktree))
        .collect();
    bases.sort();
    bases.dedup();
    bases
}

/// `bases`, and without a mount namespace the host's `/dev/shm` too: it is writable then
/// and outlives the session, so a repository assembled there (reached later through a
/// symlink the sandbox leaves in the worktree) would run code in the user's git. With a
/// mount namespace the sandbox's `/dev/shm` is a private tmpfs, gone with it.
pub fn with_shared_memory(bases: &[PathBuf], mount_namespace: bool) -> Vec<PathBuf> {
    let mut out = bases.to_vec();
    let shm = Path::new("/dev/shm");
    if !mount_namespace && shm.is_dir() && !out.iter().any(|b| b == shm) {
        out.push(shm.to_path_buf());
    }
    out
}

/// Protected paths of git directories the rules by name cannot see (absolute, each with
/// everything beneath it): the target of a base's `.git` when it is a symlink (the checks
/// see resolved paths), and an `--allow-write` folder that is itself a git directory not
/// named `.git` (a bare repository: `HEAD`, `objects/` and `refs/`). Their hooks, config,
/// `commondir`, `config.worktree`, and their submodules' and linked worktrees' folders
/// whole.
pub fn git_dirs_by_other_names(bases: &[&Path], allow_write: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = bases
        .iter()
        .map(|b| b.join(".git"))
        .filter(|g| {
            g.symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        })
        .filter_map(|g| g.canonicalize().ok())
        .filter(|t| t.is_dir())
        .collect();
    dirs.extend(
        allow_write
            .iter()
            .filter(|r| {
                r.file_name() != Some(OsStr::new(".git"))
                    && r.join("HEAD").is_file()
                    && r.join("objects").is_dir()
                    && r.join("refs").is_dir()
            })
            .cloned(),
    );
    dirs.sort();
    dirs.dedup();
    dirs.iter()
        .flat_map(|d| {
            [
                "hooks",
                "config",
                "commondir",
                "config.worktree",
                "modules",
                "worktrees",
            ]
            .map(|name| d.join(name))
        })
        .collect()
}

/// The pseudo-terminal the session runs on, if any of stdin/stdout/stderr is one.
pub fn session_tty() -> Option<PathBuf> {
    (0..3)
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .find(|p| p.starts_with("/dev/pts/"))
}

/// Where the symbolic links among the worktree's protected paths lead
/// (`shim::protected_paths::protected_links`: `.git/hooks/pre-commit ->
/// ../../tools/pre-commit`), when that lies in a `writable` root: protected as the link's
/// own name is, since git or the editor runs what the link leads to and a write by the
/// target's own name would change it. A link that leads nowhere yet protects the name it
/// leads to (made, it would be the hook). With the warnings to print.
pub fn protected_link_targets(
    worktree: &Path,
    writable: &[PathBuf],
) -> (Vec<PathBuf>, Vec<String>) {
    let (links, more) = shim::protected_paths::protected_links(worktree);
    let mut warnings = Vec::new();
    if more {
        warnings.push(format!(
            "{}'s protected folders hold more entries than fence looks through: a symbolic link among the rest leads to a file the sandbox may change",
            worktree.display()
        ));
    }
    let mut looked = Looked::default();
    let mut out: Vec<PathBuf> = Vec::new();
    for link in links {
        // The link's own name is protected already; the links after it, each on the way
        // (`tools -> real` in `../../tools/pre-commit`), and where the chain ends.
        for p in resolved_with_links(&mut looked, &link) {
            if p != link && writable.iter().any(|r| p.starts_with(r)) && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fence's config is protected where it leads and at every link on the way, the file
    /// in its folder included (GNU stow links files), and past a missing folder a `..`
    /// protects the folder it steps out of as well as the path without it.
    #[test]
    fn fences_config_is_protected_through_its_links() {
        let d = tempfile::tempdir().unwrap();
        let h = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(h.join(".config/fence")).unwrap();
        std::fs::create_dir_all(h.join("dotfiles")).unwrap();
        std::os::unix::fs::symlink(
            h.join("dotfiles/fence.toml"),
            h.join(".config/fence/config.toml"),
        )
        .unwrap();
        let got = fence_config_paths(std::slice::from_ref(&h), None, None);
        for want in [
            h.join(".config/fence"),
            h.join(".config/fence/config.toml"),
            h.join("dotfiles/fence.toml"),
        ] {
            assert!(got.contains(&want), "{want:?} not in {got:?}");
        }
        let x = tempfile::tempdir().unwrap();
        let x = x.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("gone/../cfg", x.join(".config")).unwrap();
        let got = fence_config_paths(std::slice::from_ref(&x), None, None);
        for want in [
            x.join(".config"),
            x.join("gone"),
            x.join("cfg/fence"),
            x.join("cfg/fence/config.toml"),
        ] {
            assert!(got.contains(&want), "{want:?} not in {got:?}");
        }
    }

    /// A secret file with another name made before the session (`ln ~/.ssh/id_rsa W/k`) is
    /// named in a warning, whether the secret is the file or a folder holding it; a secret
    /// without other names is not.
    #[test]
    fn a_secret_with_other_names_is_warned_about() {
        let d = tempfile::tempdir().unwrap();
        let ssh = d.path().join(".ssh");
        std::fs::create_dir_all(ssh.join("keys")).unwrap();
        std::fs::write(ssh.join("id_rsa"), "k").unwrap();
        std::fs::write(ssh.join("keys/deploy"), "k").unwrap();
        std::fs::write(ssh.join("known_hosts"), "h").unwrap();
        let netrc = d.path().join(".netrc");
        std::fs::write(&netrc, "n").unwrap();
        assert!(secrets_with_other_names(&[ssh.clone(), netrc.clone()]).is_empty());
        std::fs::hard_link(ssh.join("id_rsa"), d.path().join("k1")).unwrap();
        std::fs::hard_link(ssh.join("keys/deploy"), d.path().join("k2")).unwrap();
        std::fs::hard_link(&netrc, d.path().join("k3")).unwrap();
        let warnings = secrets_with_other_names(&[ssh.clone(), netrc.clone()]).join("\n");
        for named in [ssh.join("id_rsa"), ssh.join("keys/deploy"), netrc] {
            assert!(
                warnings.contains(&format!("{} has 2 names", named.display())),
                "{warnings}"
            );
        }
        assert!(!warnings.contains("known_hosts"), "{warnings}");
    }

    /// A folder with `names` and `fillers` empty files (the fillers make the removal long).
    fn plant(dir: &Path, names: &[&str], fillers: usize) {
        std::fs::create_dir_all(dir).unwrap();
        for n in names {
            std::fs::write(dir.join(n), n).unwrap();
        }
        for i in 0..fillers {
            std::fs::write(dir.join(format!("f{i:05}")), "").unwrap();
        }
    }

    fn age(path: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::open(path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn a_stale_session_folder_goes_and_what_its_links_lead_to_stays() {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let base = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        plant(outside.path(), &["keep"], 0);
        let stale = base.path().join(format!("fence-{uid}-stale"));
        plant(&stale.join("sub"), &["a", "b"], 3);
        std::os::unix::fs::symlink(outside.path(), stale.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("keep"), stale.join("sub/keep")).unwrap();
        // A folder the sandbox left unreadable and unwritable.
        std::fs::create_dir(stale.join("closed")).unwrap();
        std::fs::write(stale.join("closed/x"), "x").unwrap();
        std::fs::set_permissions(stale.join("closed"), std::fs::Permissions::from_mode(0o111))
            .unwrap();
        // A live session's folder (locked) and a young one stay.
        let live = base.path().join(format!("fence-{uid}-live"));
        std::fs::create_dir(&live).unwrap();
        let _held = lock_dir(&live).unwrap();
        let young = base.path().join(format!("fence-{uid}-young"));
        std::fs::create_dir(&young).unwrap();
        age(&stale);
        age(&live);
        remove_stale_sessions(base.path(), uid);
        assert!(!stale.exists(), "the stale folder is removed");
        assert!(live.exists() && young.exists());
        assert_eq!(std::fs::read(outside.path().join("keep")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    }

    /// `top` made with a chain of `depth` folders `d` below it, made by descriptors (a path
    /// this long is past PATH_MAX); the deepest is open.
    fn chain_of_folders(top: &Path, depth: usize) -> OwnedFd {
        std::fs::create_dir(top).unwrap();
        let mut fd: OwnedFd = open_folder(top).unwrap();
        for _ in 0..depth {
            // SAFETY: mkdirat of a NUL-terminated name relative to our descriptor.
            assert_eq!(
                unsafe { libc::mkdirat(fd.as_raw_fd(), c"d".as_ptr(), 0o700) },
                0
            );
            fd = super::super::spare_folders::open_dir_at(fd.as_raw_fd(), c"d").unwrap();
        }
        fd
    }

    #[test]
    fn a_tree_deeper_than_the_descriptors_it_may_hold_is_removed() {
        let base = tempfile::tempdir().unwrap();
        let top = base.path().join("fence-0-deep");
        let fd = chain_of_folders(&top, 1100);
        // SAFETY: openat of a NUL-terminated name relative to our descriptor.
        let f = unsafe {
            libc::openat(
                fd.as_raw_fd(),
                c"leaf".as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o600,
            )
        };
        assert!(f >= 0);
        // SAFETY: our descriptor.
        unsafe { libc::close(f) };
        drop(fd);
        remove_tree(&top);
        assert!(!top.exists(), "the deep tree is gone");
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
    }

    /// A tree deeper than any fixed number of passes over the top folder takes (each takes
    /// 100 levels): it goes as long as each pass makes progress. 1,000 passes were the
    /// limit, and a sandbox without a mount namespace left a TMPDIR 101,000 folders deep.
    #[test]
    fn a_tree_deeper_than_a_thousand_passes_is_removed() {
        let base = tempfile::tempdir().unwrap();
        let top = base.path().join("fence-0-deeper");
        drop(chain_of_folders(&top, 100_500));
        remove_tree(&top);
        assert!(!top.exists(), "the deep tree is gone");
    }

    #[test]
    fn a_folder_swapped_for_a_link_while_it_is_removed_leads_nowhere() {
        // The sandbox races the removal of a folder it planted: once the removal has
        // listed `d` and started on its entries, `d` is moved away and a symbolic link to
        // a folder outside takes its name. Its entries are removed where the folder went;
        // the outside folder's same-named files stay.
        const FILLERS: usize = 4000;
        let names = ["victim1", "victim2", "victim3"];
        for _ in 0..3 {
            let base = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            plant(outside.path(), &names, 0);
            let top = base.path().join("fence-0-planted");
            let d = top.join("d");
            plant(&d, &names, FILLERS);
            let racer = {
                let (d, top, outside) = (d.clone(), top.clone(), outside.path().to_path_buf());
                std::thread::spawn(move || {
                    // Wait for the removal to start on `d`'s entries.
                    let start = std::time::Instant::now();
                    while d.join("f00000").exists()
                        && d.join(format!("f{:05}", FILLERS - 1)).exists()
                    {
                        if start.elapsed() > std::time::Duration::from_secs(20) {
                            return;
                        }
                        std::hint::spin_loop();
                    }
                    std::fs::rename(&d, top.join("moved")).unwrap();
                    std::os::unix::fs::symlink(&outside, &d).unwrap();
                })
            };
            remove_tree(&top);
            racer.join().unwrap();
            for n in names {
                assert_eq!(
                    std::fs::read(outside.path().join(n)).unwrap(),
                    n.as_bytes(),
                    "{n} outside is unchanged"
                );
            }
        }
    }

    #[test]
    fn a_kerberos_cache_is_found_from_krb5ccname() {
        let named = |v: &str| kerberos_cache_named(Some(OsStr::new(v)));
        assert_eq!(
            named("FILE:/tmp/krb5cc_1000_x"),
            Some("/tmp/krb5cc_1000_x".into())
        );
        assert_eq!(named("/tmp/krb5cc_7"), Some("/tmp/krb5cc_7".into()));
        assert_eq!(
            named("DIR:/run/user/7/krb5cc"),
            Some("/run/user/7/krb5cc".into())
        );
        assert_eq!(
            named("DIR::/run/user/7/krb5cc/tkt"),
            Some("/run/user/7/krb5cc".into())
        );
        for v in [
            "KEYRING:persistent:7",
            "KCM:",
            "MEMORY:x",
            "FILE:rel",
            "rel",
        ] {
            assert_eq!(named(v), None, "{v}");
        }
        assert_eq!(kerberos_cache_named(None), None);
    }

    #[test]
    fn the_accounts_own_home_is_searched_too() {
        let account = nix::unistd::User::from_uid(nix::unistd::getuid())
            .unwrap()
            .unwrap()
            .dir;
        let account = account.canonicalize().unwrap_or(account);
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().canonicalize().unwrap();
        assert_eq!(home_dirs(Some(&other)), [other.clone(), account.clone()]);
        assert_eq!(home_dirs(None), std::slice::from_ref(&account));
        assert_eq!(home_dirs(Some(&account)), [account]);
    }

    #[test]
    fn a_missing_secret_is_placed_where_its_links_lead() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let real = root.join("real");
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        std::fs::create_dir_all(real.join("config")).unwrap();
        // A dangling link: what it names is where a login would write.
        std::os::unix::fs::symlink(real.join("netrc"), home.join(".netrc")).unwrap();
        // A linked folder above a missing one, by a relative link.
        std::os::unix::fs::symlink("../real/config", home.join(".config")).unwrap();
        // A loop is in neither list.
        std::os::unix::fs::symlink(home.join(".pypirc"), home.join(".pypirc")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        let (existing, missing, via) = denied_reads(std::slice::from_ref(&home), &[]);
        assert!(via.contains(&home), "{via:?}");
        assert!(existing.contains(&home.join(".ssh")), "{existing:?}");
        for m in [
            real.join("netrc"),
            real.join("config/gh"),
            real.join("config/gcloud"),
            home.join(".aws"),
            home.join(".cargo/credentials"),
        ] {
            assert!(missing.contains(&m), "{} not in {missing:?}", m.display());
        }
        assert!(
            !missing
                .iter()
                .chain(&existing)
                .any(|p| p.ends_with(".pypirc"))
        );
        assert!(!missing.iter().any(|p| p.starts_with(home.join(".config"))));
    }

    #[test]
    fn credential_variables_are_scrubbed_unless_passed() {
        let vars = vec![
            ("PATH".into(), "/bin".into()),
            ("GITHUB_TOKEN".into(), "x".into()),
            ("ANTHROPIC_API_KEY".into(), "k".into()),
            ("AWS_PROFILE".into(), "p".into()),
            ("SSH_AUTH_SOCK".into(), "/s".into()),
            ("TMPDIR".into(), "/old".into()),
        ];
        let env = sandbox_environment(
            vars.into_iter(),
            &["ANTHROPIC_API_KEY".into()],
            Path::new("/tmp/fence-1"),
        );
        let names: Vec<_> = env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["PATH", "ANTHROPIC_API_KEY", "TMPDIR"]);
        assert_eq!(env[2].1, "/tmp/fence-1");
        let vars: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), "/bin".into()),
            ("GITHUB_TOKEN".into(), "x".into()),
            ("ANTHROPIC_API_KEY".into(), "k".into()),
            ("DATABASE_URL".into(), "postgres://a:pw@db/x".into()),
        ];
        assert_eq!(
            removed_credentials(vars.into_iter(), &["ANTHROPIC_API_KEY".into()]),
            ["DATABASE_URL", "GITHUB_TOKEN"]
        );
    }

    #[test]
    fn credentials_are_known_by_name_words_and_by_passwords_in_urls() {
        let gone = [
            ("DB_PASS", "x"),
            ("SMTP_PASSWD", "x"),
            ("GPG_PASSPHRASE", "x"),
            ("DOCKER_AUTH_CONFIG", "{\"auths\":{}}"),
            ("NPM_CONFIG__AUTH", "x"),
            ("SENTRY_DSN", "https://key@sentry.example/1"),
            ("SESSION_COOKIE", "x"),
            (
                "AZURE_STORAGE_CONNECTION_STRING",
                "AccountName=a;AccountKey=b",
            ),
            ("KRB5CCNAME", "FILE:/tmp/krb5cc_1000"),
            (
                "DATABASE_URL",
                "postgres://app:hunter2@db.internal:5432/app",
            ),
            ("HTTPS_PROXY", "http://me:pw@proxy:3128"),
            (
                "PIP_EXTRA_INDEX_URL",
                "https://pypi.org/simple https://u:p@pkgs.example/simple",
            ),
            ("REDIS", "redis://:pw@cache:6379/0"),
            ("DB", "postgres://u:p;w,x@h/db"),
            ("DB2", "postgres://u@h/db?sslmode=require&password=x"),
            (
                "ConnectionStrings__Default",
                "Server=h;Database=d;Password=b",
            ),
            ("SQL", "Server=h;Uid=u;Pwd=b"),
            ("HTTPS_PROXY", "user:pw@proxy:3128"),
            ("MYSQL_PWD", "x"),
            ("DB_PW", "x"),
            ("TILES_URL", "https://tiles.example/v1?style=a&key=abc"),
            ("SSHPASS", "x"),
            ("BW_SESSION", "x"),
            ("OP_SESSION_my", "x"),
            ("BASIC_AUTH", "u:p"),
            ("CI_JOB_JWT_V2", "eyJ.x.y"),
            (
                "SLACK_WEBHOOK_URL",
                "https://hooks.slack.example/services/T/B/x",
            ),
            ("API_BEARER", "x"),
            ("HTTP_AUTHORIZATION", "Bearer x"),
            ("AZURE_DEVOPS_EXT_PAT", "x"),
            ("GH_PAT", "x"),
            ("GOOGLE_APPLICATION_CREDS", "x"),
            ("GIT_CONFIG_VALUE_0", "Authorization: Basic eDp5"),
            (
                "GIT_CONFIG_PARAMETERS",
                "'http.extraheader'='AUTHORIZATION: bearer x'",
            ),
            ("JAVA_TOOL_OPTIONS", "-Xmx1g -Dspring.datasource.password=x"),
            ("DEPLOY", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n"),
            ("NOTIFY", "https://hooks.slack.com/services/T0/B0/x"),
            ("DISCORD", "https://discord.com/api/webhooks/1/x"),
            (
                "BLOB",
                "https://a.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=abc%3D",
            ),
            ("DEPLOY", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
            ("CI_VAR_3", "glpat-abcdefghij0123456789"),
            ("BOT", "xoxb-1234567890-abcdefghij"),
            ("LLM", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"),
            ("OPENAI", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"),
            (
                "X",
                "prefix github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            ),
            ("MAPS", "AIzaSyA-0123456789abcdefghijklmnopqrstu"),
            ("PUBLISH", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("HUB", "hf_abcdefghijklmnopqrstuvwxyz0123456"),
            ("STRIPE", "sk_live_51Habcdefghijklmnopqrstuvwx"),
            ("IDS", "id=AKIAIOSFODNN7EXAMPLE"),
            (
                "OIDC",
                "x eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ),
        ];
        let more_gone = [
            ("LDAP_BINDPW", "x"),
            ("MASTERPW", "x"),
            ("PW", "x"),
            ("PWORD", "x"),
            ("ACCESS_TOK", "x"),
            ("X_TOK", "x"),
            ("SESSIONID", "x"),
            ("APP_SESSION_ID", "x"),
            ("COOKIEJAR", "/home/a/cookies.txt"),
            ("BUNDLE_GEMS__EXAMPLE__COM", "user:pass"),
            ("BUNDLE_ENTERPRISE__CONTRIBSYS__COM", "cafebabe:deadbeef"),
            (
                "JAVA_TOOL_OPTIONS",
                "-Djavax.net.ssl.keyStorePassword=changeit -Xmx1g",
            ),
            ("MAVEN_OPTS", "-Dproxy.passwd=x"),
            ("MAVEN_OPTS", "-Dgpg.passphrase=x"),
            (
                "JAVA_TOOL_OPTIONS",
                "-Djavax.net.ssl.trustStorePassword=changeit -Djavax.net.ssl.keyStorePassword=k",
            ),
        ];
        let kept = [
            ("XDG_SESSION_ID", "3"),
            ("COOKIECUTTER_CONFIG", "/home/a/.cookiecutterrc"),
            ("TOKIO_WORKER_THREADS", "4"),
            ("GIT_AUTHOR_NAME", "A"),
            ("GIT_AUTHOR_EMAIL", "a@example.com"),
            ("XAUTHORITY", "/run/user/1000/xauth"),
            ("PWD", "/home/a/src"),
            ("PW_TEST_HTML_REPORT_OPEN", "never"),
            ("OLDPWD", "/home/a"),
            ("SSH_ASKPASS", "/usr/bin/ksshaskpass"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ("PIP_INDEX_URL", "https://pypi.org/simple"),
            ("HTTP_PROXY", "http://proxy:3128"),
            ("GIT_URL", "ssh://git@github.com/a/b.git"),
            ("MAILTO", "mailto:a@example.com"),
            ("NPM_CONFIG_AUTH_TYPE", "web"),
            ("npm_config_always_auth", "true"),
            ("AUTH_TYPE", "Basic"),
            ("OS_AUTH_URL", "https://keystone.example:5000/v3"),
            ("NPM_CONFIG_REGISTRY", "http://localhost:4873/@scope/pkg"),
            ("NO_PROXY", "localhost,127.0.0.1,.internal"),
            ("HTTP_PROXY", "proxy.example:3128"),
            ("GIT_COMMITTER_EMAIL", "ci@example.com"),
            ("CLASSPATH", "/usr/share/java"),
            ("PATH", "/usr/bin:/bin"),
            ("JAVA_TOOL_OPTIONS", "-Xmx1g -Dfile.encoding=UTF-8"),
            ("SSH_CERT", "-----BEGIN CERTIFICATE-----"),
            ("QUERY", "https://example.com/?sig=1"),
            ("PYTHON_PKGS", "/opt/venv/lib/sk-learn:/opt/hf_hub"),
            ("CACHE_DIR", "/srv/ghp_cache"),
            ("BRANCH", "feature/sk-0123"),
            ("BUILD_ID", "AKIAIOSFODNN7EXAMPLEX"),
            ("NOTE", "eyJ.short.x"),
            (
                "PATH",
                "/usr/bin:/opt/hf_abcdefghijklmnopqrstuvwxyz0123456/bin",
            ),
            ("LABEL", "sk-the-long-name-of-a-folder-here-and-more"),
            ("BUNDLE_PATH", "vendor/bundle"),
            ("BUNDLE_BUILD__NOKOGIRI", "--use-system-libraries"),
            ("BUNDLE_LOCAL__RACK", "/home/a/src/rack"),
            (
                "BUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/",
                "https://mirror.example",
            ),
            ("GRADLE_OPTS", "-Dorg.gradle.daemon=false"),
            ("BUNDLE_GIT__ALLOW_INSECURE", "true"),
            ("BUNDLE_GEM__TEST", "rspec"),
            ("BUNDLE_PATH__SYSTEM", "true"),
            (
                "JAVA_TOOL_OPTIONS",
                "-Djavax.net.ssl.trustStore=/etc/pki/ca.jks -Djavax.net.ssl.trustStorePassword=changeit",
            ),
        ];
        let cases = gone
            .iter()
            .chain(more_gone.iter())
            .map(|c| (c, true))
            .chain(kept.iter().map(|c| (c, false)));
        for ((name, value), removed) in cases {
            assert_eq!(
                is_credential_variable(OsStr::new(name), OsStr::new(value)),
                removed,
                "{name}={value}: removed should be {removed}"
            );
        }
    }

    #[test]
    fn token_shapes_are_read_safely_at_every_length() {
        // Every cut of a text made of the shapes' openings: no slice past the end.
        let text = b"g gh ghp_ x xox xoxb- s sk sk- sk-ant- A AI AIza AK AKIA y ya29. n npm_ p pypi-AgE h hf_ r rk_live_ d dckr_pat_ dop_v1_ e eyJ eyJa.b";
        for end in 0..=text.len() {
            for start in 0..end {
                let _ = has_issued_token(&text[start..end]);
            }
        }
    }

    #[test]
    fn password_fields_and_urls_are_found_at_every_place_they_may_stand() {
        for (value, field) in [
            ("password=x", true),
            ("PassWord=x", true),
            ("a=1;PWD=2", true),
            ("q?x=1&password=", true),
            ("a b\tpwd=1", true),
            ("pwd=", true),
            ("xpwd=1", false),
            ("https://maps.example/api?key=AIzaX", true),
            ("https://h/x?a=1&Access_Token=t", true),
            ("wss://h/?token=t", true),
            ("key=value", false),
            ("sort_key=1&monkey=2", false),
            // A property whose name ends in password (`keyStorePassword=`).
            ("mypassword=1", true),
            ("xpasswd=1", true),
            ("password1=x", false),
            ("password", false),
            ("=pwd", false),
            ("", false),
            ("=", false),
        ] {
            assert_eq!(has_password_field(value.as_bytes()), field, "{value}");
        }
        for (value, url) in [
            ("http://u:p@h/", true),
            ("x https://a@b http://u:p@h", true),
            ("http://u@h/p:w@x", false),
            ("://u:p@h", true),
            ("http:/u:p@h", false),
            ("http:", false),
            ("a:/", false),
            ("", false),
        ] {
            assert_eq!(has_url_password(value.as_bytes()), url, "{value}");
        }
        assert!(has_bare_login(b"u:p@proxy:3128"));
        assert!(!has_bare_login(b"http://u:p@proxy:3128"));
        assert!(!has_bare_login(b"proxy:3128"));
    }

    #[test]
    fn session_tmp_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = SessionTmp::create(&std::env::temp_dir()).unwrap();
        let path = tmp.path.clone();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o700
        );
        std::fs::write(path.join("f"), "x").unwrap();
        drop(tmp);
        assert!(!path.exists());
    }
}

//! What every fence command needs to know about where it runs: the
//! worktree, its current git branch, the config files and the settings the
//! policy is built from.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use policy::config::{self, Config, ConfigSource};
use policy::{Mode, RealFs, RuleTable, Settings};

/// Finds the worktree (SPEC §2): `--worktree DIR`, else the top of the git
/// worktree holding `cwd`, else `cwd`. `/` and `$HOME` are refused unless
/// `force`.
pub fn find_worktree(
    flag: Option<&Path>,
    cwd: &Path,
    home: Option<&Path>,
    force: bool,
) -> Result<PathBuf> {
    let chosen = match flag {
        Some(dir) => {
            let dir = cwd.join(dir);
            let meta = std::fs::metadata(&dir)
                .with_context(|| format!("--worktree {}: cannot use it", dir.display()))?;
            if !meta.is_dir() {
                bail!("--worktree {}: not a directory", dir.display());
            }
            dir
        }
        None => git_top(cwd).unwrap_or_else(|| cwd.to_path_buf()),
    };
    let real = std::fs::canonicalize(&chosen)
        .with_context(|| format!("cannot resolve the worktree {}", chosen.display()))?;
    if !force {
        if real == Path::new("/") {
            bail!(
                "refusing / as the worktree: it would fence nothing (use --force-worktree to insist)"
            );
        }
        if let Some(h) = home.and_then(|h| std::fs::canonicalize(h).ok()) {
            if real == h {
                bail!(
                    "refusing your home directory {} as the worktree: it holds your credentials (use --force-worktree to insist)",
                    real.display()
                );
            }
            if h.starts_with(&real) {
                bail!(
                    "refusing {} as the worktree: your home directory {} lies in it, with your credentials (use --force-worktree to insist)",
                    real.display(),
                    h.display()
                );
            }
        }
        if let Some(shared) = shared_folder_within(&real) {
            bail!(
                "refusing {} as the worktree: {} is shared with every program of the machine, \
                 whose sockets and temp files the sandbox could then reach and change (use a \
                 folder of its own, or --force-worktree to insist)",
                real.display(),
                if shared == real {
                    "it".to_string()
                } else {
                    format!("{}, in it,", shared.display())
                }
            );
        }
        if is_system_folder(&real) {
            bail!(
                "refusing {} as the worktree: it is a system folder, where every write is refused (use --force-worktree to insist)",
                real.display()
            );
        }
    }
    Ok(real)
}

/// The shared temporary or runtime folder that `p` is or holds: `/tmp`, `/var/tmp`,
/// `/dev/shm`, `/run` (`/var/run`), `/run/lock`, `/run/user/UID` and `$XDG_RUNTIME_DIR`.
/// Other programs keep their sockets (ssh-agent, tmux, X11, D-Bus, fence's own approval
/// sockets) and temp files there: a worktree there would make them the sandbox's to
/// reach, replace and delete. A project folder inside one (`/tmp/proj`) is fine.
///
/// By path, and by identity (device and inode) for `p` itself and every mount point
/// beneath it: a bind of `/tmp` elsewhere (`mount --bind /tmp ~/bt`) is `/tmp`. fence's own
/// approval sockets' folder is one too, and no worktree may lie inside it either.
fn shared_folder_within(p: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let mut shared: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm", "/run", "/run/lock"]
        .iter()
        .map(PathBuf::from)
        .collect();
    shared.push(PathBuf::from(format!("/run/user/{uid}")));
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        shared.push(PathBuf::from(runtime));
    }
    let sockets = crate::gate::socket::socket_dir();
    let sockets = std::fs::canonicalize(&sockets).unwrap_or(sockets);
    if p.starts_with(&sockets) {
        return Some(sockets);
    }
    shared.push(sockets);
    let shared: Vec<PathBuf> = shared
        .into_iter()
        .map(|f| std::fs::canonicalize(&f).unwrap_or(f))
        .collect();
    if let Some(f) = shared.iter().find(|f| f.starts_with(p)) {
        return Some(f.clone());
    }
    let id = |q: &Path| std::fs::metadata(q).ok().map(|m| (m.dev(), m.ino()));
    // Each shared folder and every folder above it (`/var` holds `/var/tmp`, `/` all): a
    // bind of any of them there shows the shared folder inside.
    let ids: Vec<((u64, u64), &PathBuf)> = shared
        .iter()
        .flat_map(|f| f.ancestors().map(move |a| (a, f)))
        .filter_map(|(a, f)| id(a).map(|i| (i, f)))
        .collect();
    let same =
        |q: &Path| id(q).and_then(|i| ids.iter().find(|(s, _)| *s == i).map(|(_, f)| (*f).clone()));
    if let Some(f) = same(p) {
        return Some(f);
    }
    // Mount points beneath `p` (a bind of a shared folder inside the worktree).
    let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    table
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape_mountinfo)
        .filter(|m| m.starts_with(p) && m != p)
        .find_map(|m| same(&m))
}

/// A mount point as `/proc/self/mountinfo` writes it (`\040` for a blank, and so on).
fn unescape_mountinfo(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// A system root (SPEC §2: `/etc`, `/usr`, `/bin`, `/sbin`, `/lib*`, `/boot`, `/sys`,
/// `/proc`) or a folder of one that holds no one's projects: everything under `/etc`,
/// `/bin`, `/sbin`, `/lib*`, `/boot`, `/sys`, `/proc` and `/dev` (not `/dev/shm`), `/usr`
/// itself and its program and library folders (`/usr/local/src/project` stays possible).
fn is_system_folder(p: &Path) -> bool {
    let parts: Vec<&str> = p
        .components()
        .skip(1)
        .map(|c| c.as_os_str().to_str().unwrap_or(""))
        .collect();
    match parts.as_slice() {
        [] => true,
        // `/dev/shm` is a tmpfs people do work in.
        ["dev", "shm", ..] => false,
        [first, ..]
            if matches!(
                *first,
                "etc" | "bin" | "sbin" | "boot" | "sys" | "proc" | "dev"
            ) || first.starts_with("lib") =>
        {
            true
        }
        ["usr"] | ["usr", "share" | "local"] | ["usr", "local", "bin" | "sbin" | "lib"] => true,
        ["usr", second, ..] => {
            matches!(*second, "bin" | "sbin" | "libexec" | "include") || second.starts_with("lib")
        }
        _ => false,
    }
}

/// The top of the git worktree that contains `dir`.
fn git_top(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The git directory of a worktree: `.git`, or where a `.git` file points.
pub fn git_dir(worktree: &Path) -> Option<PathBuf> {
    let dot = worktree.join(".git");
    if dot.is_dir() {
        return Some(dot);
    }
    let text = read_small_regular_file(&dot, true)?;
    let target = text.strip_prefix("gitdir:")?.trim();
    Some(worktree.join(target))
}

/// The shared git directory a linked worktree commits into, when it lies outside the
/// worktree. SPEC §2 keeps it writable so that `git commit` works; the caller adds it as
/// an `--allow-write` folder, which keeps the worktree's protections there (hooks,
/// config, the other worktrees' folders).
///
/// Security boundary: this widens the fence from what the worktree holds, and a `.git`
/// file is the worktree's content (a repository unpacked from anywhere may bring one
/// naming `gitdir: /home/u`). So it is taken only as git makes it: the file names
/// `COMMON/worktrees/NAME`, whose `commondir` names COMMON, whose `gitdir` names this
/// `.git` file back (git writes both when it adds the worktree; a forged `.git` file
/// cannot make another folder name it back), and COMMON is a git directory (`HEAD`,
/// `objects/`, `refs/`). `None` otherwise, for a worktree whose `.git` is a folder, and
/// for a submodule's (its git directory is not opened).
pub fn shared_git_dir(worktree: &Path) -> Option<PathBuf> {
    let dot = worktree.join(".git");
    if !dot.symlink_metadata().is_ok_and(|m| m.is_file()) {
        return None;
    }
    let dot = dot.canonicalize().ok()?;
    let own = git_dir(worktree)?.canonicalize().ok()?;
    let common = own
        .join(read_small_regular_file(&own.join("commondir"), false)?.trim())
        .canonicalize()
        .ok()?;
    if own.parent() != Some(common.join("worktrees").as_path()) {
        return None;
    }
    let back = own
        .join(read_small_regular_file(&own.join("gitdir"), false)?.trim())
        .canonicalize()
        .ok()?;
    let is_git_dir = common.join("HEAD").is_file()
        && common.join("objects").is_dir()
        && common.join("refs").is_dir();
    let inside = worktree
        .canonicalize()
        .is_ok_and(|w| common.starts_with(&w));
    (back == dot && is_git_dir && !inside).then_some(common)
}

/// When `worktree` is a linked worktree of a repository (its `.git` a file naming
/// `…/worktrees/NAME` of a git directory), the repository's other checkouts, which SPEC §2
/// makes unreadable and unwritable: the main checkout's entries but the git directory the
/// linked worktree's git uses (and one that holds the worktree itself), and the other
/// linked worktrees. Empty for any other worktree. A main checkout that is `home` or
/// holds it (a home kept in git) is left readable: hiding it would hide the toolchains
/// and settings every command reads.
///
/// Also returned: the other linked worktrees' folders in the git directory
/// (`worktrees/NAME`), to be kept read-only: git in the session, seeing their checkouts
/// missing, would take them for stale and unregister them (`git worktree prune`, `git gc`);
/// and, from a linked worktree, the main checkout's own state in the shared git directory
/// ([`MAIN_CHECKOUT_STATE`]) and the refs of its branch ([`main_branch_refs`], which writes
/// a packed one loose).
pub fn other_checkouts(worktree: &Path, home: Option<&Path>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let dot = worktree.join(".git");
    if dot.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return (Vec::new(), linked_checkouts_state(&dot));
    }
    if !dot.symlink_metadata().is_ok_and(|m| m.is_file()) {
        return (Vec::new(), Vec::new());
    }
    let Some(own_git_dir) = git_dir(worktree) else {
        return (Vec::new(), Vec::new());
    };
    let Some(common) = read_small_regular_file(&own_git_dir.join("commondir"), false)
        .and_then(|text| own_git_dir.join(text.trim()).canonicalize().ok())
    else {
        return (Vec::new(), Vec::new());
    };
    let own_admin = own_git_dir.canonicalize().ok();
    let mut admin = Vec::new();
    let own = worktree
        .canonicalize()
        .unwrap_or_else(|_| worktree.to_path_buf());
    let mut out = Vec::new();
    // A git directory called `.git` lies in its main checkout (a bare repository has none).
    if common.file_name() == Some(std::ffi::OsStr::new(".git"))
        && let Some(main) = common.parent()
        && main != own
        && !home
            .and_then(|h| h.canonicalize().ok())
            .is_some_and(|h| h.starts_with(main))
        && let Ok(entries) = std::fs::read_dir(main)
    {
        for entry in entries.flatten() {
            let p = entry.path();
            if p != common && !own.starts_with(&p) {
                out.push(p);
            }
        }
    }
    // The main checkout's own git state lies in the shared git directory itself, beside
    // what all checkouts share: read-only as the other checkouts' `worktrees/NAME` are.
    if common.file_name() == Some(std::ffi::OsStr::new(".git"))
        && common.parent().is_some_and(|main| main != own)
    {
        admin.extend(MAIN_CHECKOUT_STATE.iter().map(|name| common.join(name)));
        admin.extend(main_branch_refs(&common));
    }
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        for entry in entries.flatten() {
            let folder = entry.path();
            if own_admin.as_deref() == folder.canonicalize().ok().as_deref() {
                continue;
            }
            let Some(text) = read_small_regular_file(&folder.join("gitdir"), false) else {
                continue;
            };
            // Relative to this folder where git writes it so (`worktree.useRelativePaths`).
            let named = folder.join(text.trim());
            let Some(other) = named.parent().and_then(|p| p.canonicalize().ok()) else {
                continue;
            };
            if other != own && !own.starts_with(&other) {
                out.push(other);
                admin.extend(checkout_branch_refs(&folder, &common, "a linked worktree"));
                admin.push(folder);
            }
        }
    }
    if !admin.is_empty() {
        admin.extend(history_replacements(&common));
    }
    out.sort();
    out.dedup();
    (out, admin)
}

/// From a main checkout (`dot_git` its git directory), what of its linked worktrees'
/// state lies in it, to be kept read-only: each one's folder `worktrees/NAME` (its `HEAD`,
/// `index`, `gitdir`: written, the sandbox would choose what that checkout's next commit
/// takes, which commit it is on, or have it unregistered) and the refs of the branch it
/// is on (moved, that checkout would commit on and push the sandbox's history). A folder
/// there that is no registered worktree's (no `gitdir`) is left.
fn linked_checkouts_state(dot_git: &Path) -> Vec<PathBuf> {
    let Ok(common) = dot_git.canonicalize() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return out;
    };
    for entry in entries.flatten().take(256) {
        let folder = entry.path();
        if !folder.symlink_metadata().is_ok_and(|m| m.is_dir())
            || read_small_regular_file(&folder.join("gitdir"), false).is_none()
        {
            continue;
        }
        out.extend(checkout_branch_refs(&folder, &common, "a linked worktree"));
        out.push(folder);
    }
    if !out.is_empty() {
        out.extend(history_replacements(&common));
    }
    out
}

/// What makes git see another history for every checkout of a repository without moving a
/// ref: replacement refs (`git replace OLD NEW`: the linked worktree's branch shows the
/// sandbox's commit, and its `git reset --hard` writes its files) and the old grafts file.
/// Kept read-only when the repository has other checkouts than the session's.
fn history_replacements(common: &Path) -> [PathBuf; 2] {
    [common.join("refs/replace"), common.join("info/grafts")]
}

/// What of a shared git directory (`main/.git`) belongs to its main checkout alone: what
/// git keeps per checkout (everything but the shared folders and files git lists as
/// common: `objects`, `refs`, `packed-refs`, `config`, `hooks`, `info`, `logs`,
/// `worktrees`…), which a linked worktree's git writes in its own `worktrees/NAME`. A
/// session in a linked worktree writing them would change the main checkout: its branch
/// (`HEAD`), what its next `git commit` or `git restore` takes (`index`), a merge or
/// cherry-pick it is in the middle of (`MERGE_HEAD`: the sandbox's commit as a second
/// parent), a rebase it would continue (`rebase-merge/git-rebase-todo` holds `exec`
/// lines), its submodules' git directories (`modules`). Its reflog (`logs/HEAD`) stays
/// writable: `git gc` anywhere expires every checkout's reflog, and a reflog runs nothing.
const MAIN_CHECKOUT_STATE: [&str; 32] = [
    "HEAD",
    "index",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "MERGE_AUTOSTASH",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "SQUASH_MSG",
    "COMMIT_EDITMSG",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_TERMS",
    "BISECT_NAMES",
    "BISECT_EXPECTED_REV",
    "BISECT_ANCESTORS_OK",
    "BISECT_RUN",
    "BISECT_HEAD",
    "BISECT_FIRST_PARENT",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "info/sparse-checkout",
    "refs/bisect",
    "refs/worktree",
    "refs/rewritten",
    "modules",
];

/// The refs of the branch the main checkout is on (`refs/heads/main`, as `HEAD` names it,
/// and every symbolic ref on the way from `HEAD` to it), to be read-only with `HEAD`:
/// moved (`git update-ref`) or made a symbolic ref (`git symbolic-ref refs/heads/main
/// refs/heads/feat`), one would put the main checkout on a history the session chose, its
/// next `git commit` on top (git itself refuses to move a branch another worktree has
/// checked out, but not `update-ref`). A branch kept only in `packed-refs` (after `git gc`)
/// is written as a loose ref first, with the same value, as git writes one: the loose file
/// then decides, and `packed-refs` stays writable for the session's own branches (`git
/// fetch --prune`, `git branch -d`); where it cannot be written, `packed-refs` itself is
/// read-only. A repository whose refs are in reftable has no file per ref: fence says it
/// cannot keep the main checkout's branch from being moved. Nothing for a detached `HEAD`.
fn main_branch_refs(common: &Path) -> Vec<PathBuf> {
    checkout_branch_refs(common, common, "the main checkout")
}

/// [`main_branch_refs`] for the checkout whose `HEAD` lies in `admin` (the common git
/// directory for the main checkout, `worktrees/NAME` for a linked one): the refs live in
/// `common`. `who` names the checkout in a warning.
fn checkout_branch_refs(admin: &Path, common: &Path, who: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if common.join("reftable").is_dir() {
        eprintln!(
            "fence: warning: {} keeps its refs in reftable: {who}'s branch cannot be kept from being moved by this session",
            common.display()
        );
        return out;
    }
    let Some(mut text) = head_text(admin) else {
        return out;
    };
    // git follows at most 5 levels of symbolic refs.
    for _ in 0..5 {
        let Some(name) = text.strip_prefix("ref:").map(|t| t.trim().to_string()) else {
            break;
        };
        if !name.starts_with("refs/")
            || name
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == "..")
        {
            break;
        }
        let loose = common.join(&name);
        out.push(loose.clone());
        match config::read_regular_file(&loose, false, 4096) {
            Ok(next) => text = next,
            // Packed (or missing): the end of the chain.
            Err(_) => {
                if name.starts_with("refs/heads/")
                    && loose.symlink_metadata().is_err()
                    && !write_packed_ref_loose(common, &name, &loose)
                {
                    out.push(common.join("packed-refs"));
                }
                break;
            }
        }
    }
    out
}

/// Writes the loose ref `name` (`refs/heads/…`) at `loose` with the value `packed-refs`
/// gives it, if it has one: to a new file beside it, linked to its name (never over one
/// made meanwhile), the new file removed; folders missing on the way (`refs/heads/release`
/// for `release/1.0`) are made, each given the owner and group of `refs/heads`, and so is
/// the file. Whether the loose ref is there now (false: nothing to write, or it could not
/// be written).
fn write_packed_ref_loose(common: &Path, name: &str, loose: &Path) -> bool {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let Ok(packed) = config::read_regular_file(&common.join("packed-refs"), false, 64 << 20) else {
        return false;
    };
    let Some(sha) = packed.lines().find_map(|line| {
        let (sha, r) = line.split_once(' ')?;
        (r == name && sha.len() >= 40 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then_some(sha)
    }) else {
        return false;
    };
    let (Some(rel), Some(leaf)) = (
        loose.strip_prefix(common).ok(),
        loose
            .file_name()
            .and_then(|n| std::ffi::CString::new(n.as_bytes()).ok()),
    ) else {
        return false;
    };
    // Every folder from the common git directory down is opened one name at a time, never
    // through a symlink (`O_NOFOLLOW`): the sandbox writes the git directory, and may have
    // made `refs` or a folder below it a link to a folder outside, which fence, run by the
    // user or by root, would write into. A link on the way stops the write.
    let open_dir = |at: i32, part: &std::ffi::CStr| -> Option<OwnedFd> {
        // SAFETY: a NUL-terminated name relative to `at`; the descriptor is owned below.
        let fd = unsafe {
            libc::openat(
                at,
                part.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        // SAFETY: a fresh descriptor that we own.
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let Ok(common_c) = std::ffi::CString::new(common.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            common_c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return false;
    }
    // SAFETY: a fresh descriptor that we own.
    let mut dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let folders: Vec<std::ffi::CString> = match rel.parent() {
        Some(p) => p
            .components()
            .filter_map(|c| std::ffi::CString::new(c.as_os_str().as_bytes()).ok())
            .collect(),
        None => return false,
    };
    // `refs/heads` must be there; the folders below it are made as needed, each given the
    // owner and group of `refs/heads`.
    let mut owner: Option<(u32, u32)> = None;
    for (i, part) in folders.iter().enumerate() {
        let next = match open_dir(dir.as_raw_fd(), part) {
            Some(d) => d,
            None if i >= 2
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) =>
            {
                // SAFETY: a NUL-terminated name relative to our descriptor.
                if unsafe { libc::mkdirat(dir.as_raw_fd(), part.as_ptr(), 0o777) } != 0 {
                    return false;
                }
                let Some(d) = open_dir(dir.as_raw_fd(), part) else {
                    return false;
                };
                if let Some((uid, gid)) = owner {
                    // SAFETY: fchownat of our own O_PATH descriptor (AT_EMPTY_PATH).
                    unsafe {
                        libc::fchownat(d.as_raw_fd(), c"".as_ptr(), uid, gid, libc::AT_EMPTY_PATH)
                    };
                }
                d
            }
            None => return false,
        };
        if i == 1 {
            let Ok(st) = nix::sys::stat::fstat(&next) else {
                return false;
            };
            owner = Some((st.st_uid, st.st_gid));
        }
        dir = next;
    }
    if folders.len() < 2 {
        return false;
    }
    let Ok(temp) = std::ffi::CString::new(format!(".fence-{}.tmp", std::process::id())) else {
        return false;
    };
    // SAFETY: a NUL-terminated name relative to our descriptor; the descriptor is owned
    // below. O_NOFOLLOW and O_EXCL: a name made there meanwhile is never written through.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            temp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o666,
        )
    };
    if fd >= 0 {
        // SAFETY: a fresh descriptor that we own.
        let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        if std::io::Write::write_all(&mut file, format!("{sha}\n").as_bytes()).is_ok() {
            if let Some((uid, gid)) = owner {
                let _ = std::os::unix::fs::fchown(&file, Some(uid), Some(gid));
            }
            // SAFETY: NUL-terminated names relative to our descriptor; never over a name
            // made meanwhile.
            unsafe {
                libc::linkat(
                    dir.as_raw_fd(),
                    temp.as_ptr(),
                    dir.as_raw_fd(),
                    leaf.as_ptr(),
                    0,
                )
            };
        }
        // SAFETY: as above.
        unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: a NUL-terminated name relative to our descriptor, and room for one stat.
    unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            leaf.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        ) == 0
    }
}

/// The git directory of the repository `worktree` lies in: its own, or, for a worktree
/// that is a folder of a repository (`--worktree` on a package of a monorepo), the nearest
/// one above it.
pub fn holding_git_dir(worktree: &Path) -> Option<PathBuf> {
    worktree
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .and_then(git_dir)
}

/// The worktree's current branch from its git HEAD, if it is on a branch.
///
/// The sandbox rewrites HEAD (every `git checkout` does), so it may leave a FIFO there or
/// a symlink to `/dev/zero` or a device: HEAD is opened without following a symlink (git
/// reads a symlinked HEAD's target name, not its content, so nothing is lost) and read
/// only when it is a regular file, and then only its first bytes.
pub fn current_branch(worktree: &Path) -> Option<String> {
    let git_dir = holding_git_dir(worktree)?;
    let head = head_text(&git_dir)?;
    branch_of_head(git_dir, &head)
}

/// The text of the HEAD file in `git_dir`, read as [`current_branch`] says.
pub fn head_text(git_dir: &Path) -> Option<String> {
    read_small_regular_file(&git_dir.join("HEAD"), false)
}

/// The branch a HEAD holding `head` is on: the end of its chain of symbolic refs, as git
/// pushes it (`HEAD` → `refs/heads/feat` → `refs/heads/main` is on main). `None` when it
/// is detached or the chain cannot be followed: a repository whose refs are in reftable
/// (its HEAD file holds `refs/heads/.invalid` for older gits), a loop, a chain deeper than
/// git follows.
pub fn branch_of_head(git_dir: PathBuf, head: &str) -> Option<String> {
    policy::refs::Refs::at(&RealFs, git_dir)
        .ok()?
        .branch_of_head(head)
        .ok()?
}

/// `path`'s text when it is a regular file of at most 4 KiB (a HEAD or a `.git` file; see
/// [`config::read_regular_file`]).
fn read_small_regular_file(path: &Path, follow: bool) -> Option<String> {
    config::read_regular_file(path, follow, 4096).ok()
}

/// The home a shell expands `~` to: `HOME` when it is set (absolute, else none that fence
/// can place), else the account's own from the password database, as bash and dash take it
/// when `HOME` is unset (`rm -rf ~` still names it).
pub fn home_of(env: &HashMap<String, String>) -> Option<PathBuf> {
    match env.get("HOME") {
        Some(h) => Some(PathBuf::from(h)).filter(|p| p.is_absolute()),
        None => nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map(|u| u.dir)
            .filter(|d| d.is_absolute()),
    }
}

/// The process environment, lossily decoded.
pub fn environment() -> HashMap<String, String> {
    std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// The config files that apply, in order: the user's (or `--config`), then
/// the worktree's own `.fence.toml`. A file inside the worktree may only
/// tighten.
pub fn config_sources(
    explicit: Option<&Path>,
    worktree: &Path,
    env: &HashMap<String, String>,
) -> Result<Vec<ConfigSource>> {
    let mut out = Vec::new();
    let inside = |p: &Path| {
        std::fs::canonicalize(p)
            .map(|r| r.starts_with(worktree))
            .unwrap_or(true)
    };
    match explicit {
        Some(p) => {
            if !p.is_file() {
                bail!("--config {}: no such file", p.display());
            }
            out.push(ConfigSource {
                path: p.to_path_buf(),
                restricted: inside(p),
            });
        }
        None => {
            let home = env.get("HOME").map(PathBuf::from);
            let xdg = env.get("XDG_CONFIG_HOME").map(PathBuf::from);
            if let Some(p) = config::user_config_path(home.as_deref(), xdg.as_deref())
                && p.is_file()
            {
                let restricted = inside(&p);
                out.push(ConfigSource {
                    path: p,
                    restricted,
                });
            }
        }
    }
    // Whatever stands there (a symlink, a FIFO): reading it says what is wrong with it.
    let project = worktree.join(config::WORKTREE_CONFIG);
    if project.symlink_metadata().is_ok() && !out.iter().any(|s| s.path == project) {
        out.push(ConfigSource {
            path: project,
            restricted: true,
        });
    }
    Ok(out)
}

/// Everything needed to build the policy for one command.
pub struct Loaded {
    pub settings: Settings,
    pub warnings: Vec<config::Warning>,
    /// The config's `[network]` table, for `fence run`.
    pub network: config::NetworkConfig,
    /// The profile the user's config names, for `fence run`.
    pub profile: Option<&'static policy::profile::Profile>,
}

/// Builds the policy settings for `worktree`, reading the config files.
pub fn load(
    worktree: PathBuf,
    mode_flag: Option<Mode>,
    config_flag: Option<&Path>,
) -> Result<Loaded> {
    let env = environment();
    let sources = config_sources(config_flag, &worktree, &env)?;
    let mut table = RuleTable::default();
    let cfg = Config::load(&sources, &mut table)?;
    let mut mode = mode_flag.or(cfg.mode).unwrap_or_default();
    if let Some(min) = cfg.min_mode
        && min.strictness() > mode.strictness()
    {
        mode = min;
    }
    let session_tmp = env
        .get("FENCE_SESSION_TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let settings = Settings {
        home: home_of(&env),
        current_branch: current_branch(&worktree),
        worktree,
        env,
        mode,
        session_tmp,
        exceptions: cfg.exceptions.clone(),
        deny_read: cfg.deny_read.clone(),
        protected: Vec::new(),
        table,
        fs: Arc::new(RealFs),
    };
    Ok(Loaded {
        settings,
        warnings: cfg.warnings,
        network: cfg.network,
        profile: cfg.profile,
    })
}

/// Adds to `settings` what the repository's git config names as code in the worktree (a
/// hooks folder, included config files: `run::git_code`), for `fence check` and `fence
/// hook`; `fence run` protects them itself. Says on stderr what could not be found out.
pub fn protect_git_code(settings: &mut Settings) {
    let env = crate::run::git_code::GitEnvironment::from_process(settings.home.as_deref());
    let worktree = settings.worktree.clone();
    let found = crate::run::git_code::find(&worktree, &env, std::slice::from_ref(&worktree));
    for w in &found.warnings {
        eprintln!("fence: warning: {}", crate::escape::for_terminal(w));
    }
    settings.protected.extend(
        found
            .protected
            .iter()
            .filter_map(|p| p.strip_prefix(&worktree).ok())
            .map(Path::to_path_buf),
    );
    // And what the project's agent settings run from the worktree (`run::agent_code`).
    let files: Vec<PathBuf> = crate::run::agent_code::project_settings(&worktree)
        .into_iter()
        .chain(settings.home.iter().flat_map(|h| {
            crate::run::agent_code::HOME_SETTINGS
                .iter()
                .map(move |rel| h.join(rel))
        }))
        .collect();
    let cwd = std::env::current_dir().unwrap_or_else(|_| worktree.clone());
    let (code, warnings) = crate::run::agent_code::find(
        &files,
        &worktree,
        &cwd,
        settings.home.as_deref(),
        std::slice::from_ref(&worktree),
    );
    for w in &warnings {
        eprintln!("fence: warning: {}", crate::escape::for_terminal(w));
    }
    settings.protected.extend(
        code.iter()
            .filter_map(|p| p.strip_prefix(&worktree).ok())
            .map(Path::to_path_buf),
    );
}

/// Bytes of an argument as given on the command line.
pub fn os_bytes(s: &OsString) -> &[u8] {
    s.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The main checkout's branch and every symbolic ref on the way to it are protected; a
    /// packed-only branch (its folder gone with `git pack-refs`) is written loose first.
    #[test]
    fn the_main_checkouts_branch_refs_are_found_and_a_packed_one_written_loose() {
        let d = tempfile::tempdir().unwrap();
        let git = d.path().join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(git.join("HEAD"), "ref: refs/heads/alias\n").unwrap();
        std::fs::write(
            git.join("refs/heads/alias"),
            "ref: refs/heads/release/1.0\n",
        )
        .unwrap();
        std::fs::write(
            git.join("packed-refs"),
            format!("# pack-refs with: peeled fully-peeled sorted\n{sha} refs/heads/release/1.0\n"),
        )
        .unwrap();
        let refs = main_branch_refs(&git);
        assert_eq!(
            refs,
            [
                git.join("refs/heads/alias"),
                git.join("refs/heads/release/1.0")
            ]
        );
        assert_eq!(
            std::fs::read_to_string(git.join("refs/heads/release/1.0")).unwrap(),
            format!("{sha}\n")
        );
        // Nothing else left behind in the folder made for it.
        assert_eq!(
            std::fs::read_dir(git.join("refs/heads/release"))
                .unwrap()
                .count(),
            1
        );
        // A detached HEAD: nothing.
        std::fs::write(git.join("HEAD"), format!("{sha}\n")).unwrap();
        assert!(main_branch_refs(&git).is_empty());
        // A branch with no commit yet: kept from being made, loose or packed.
        std::fs::write(git.join("HEAD"), "ref: refs/heads/gone\n").unwrap();
        assert_eq!(
            main_branch_refs(&git),
            [git.join("refs/heads/gone"), git.join("packed-refs")]
        );
        assert!(!git.join("refs/heads/gone").exists());
    }

    #[test]
    fn system_folders_and_folders_holding_the_home_are_no_worktree() {
        for p in [
            "/",
            "/etc",
            "/etc/cron.d",
            "/usr",
            "/usr/bin",
            "/usr/lib/x",
            "/usr/local",
            "/bin",
            "/lib",
            "/lib64",
            "/lib/modules",
            "/boot",
            "/proc/self",
            "/sys/kernel",
            "/dev/pts",
            "/usr/share",
            "/usr/include/linux",
        ] {
            assert!(is_system_folder(Path::new(p)), "{p}");
        }
        for p in [
            "/home/dev/repo",
            "/usr/local/src/project",
            "/srv/app",
            "/opt/x",
            "/tmp/w",
            "/dev/shm/w",
        ] {
            assert!(!is_system_folder(Path::new(p)), "{p}");
        }
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let err = find_worktree(Some(d.path()), d.path(), Some(&home), false).unwrap_err();
        assert!(err.to_string().contains("your home directory"), "{err}");
        assert!(find_worktree(Some(d.path()), d.path(), Some(&home), true).is_ok());
        let err = find_worktree(Some(Path::new("/etc")), d.path(), None, false).unwrap_err();
        assert!(err.to_string().contains("system folder"), "{err}");
        let wt = d.path().join("wt");
        std::fs::create_dir(&wt).unwrap();
        assert!(find_worktree(Some(&wt), d.path(), Some(&home), false).is_ok());
    }

    #[test]
    fn shared_temporary_and_runtime_folders_are_no_worktree() {
        // Their sockets (an ssh-agent's, a tmux server's) would be the sandbox's to reach.
        let uid = unsafe { libc::getuid() };
        for p in [
            "/tmp",
            "/var/tmp",
            "/dev/shm",
            "/run",
            "/run/lock",
            "/var",
            "/run/user",
        ] {
            let p = Path::new(p);
            if !p.is_dir() {
                continue;
            }
            let err = find_worktree(Some(p), Path::new("/"), None, false).unwrap_err();
            assert!(
                err.to_string().contains("is shared with every program"),
                "{p:?}: {err}"
            );
            assert!(err.to_string().contains("--force-worktree"), "{p:?}: {err}");
        }
        let own = PathBuf::from(format!("/run/user/{uid}"));
        assert_eq!(shared_folder_within(&own).as_deref(), Some(own.as_path()));
        // Another name of one by a bind mount is the folder itself, and so is a bind of one
        // inside the worktree (root only: mounts).
        if unsafe { libc::geteuid() } == 0 {
            // Runs `check` with `src` bound at `at`; says so when the bind cannot be made.
            let with_bind = |src: &str, at: &Path, check: &dyn Fn()| {
                std::fs::create_dir(at).unwrap();
                let made = std::process::Command::new("mount")
                    .args(["--bind", src])
                    .arg(at)
                    .status()
                    .is_ok_and(|s| s.success());
                if !made {
                    eprintln!("skipped: cannot bind {src} at {}", at.display());
                    return;
                }
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
                let _ = std::process::Command::new("umount").arg(at).status();
                if let Err(e) = outcome {
                    std::panic::resume_unwind(e);
                }
            };
            let d = tempfile::tempdir().unwrap();
            let at = d.path().join("bt");
            with_bind("/tmp", &at, &|| {
                assert_eq!(
                    shared_folder_within(&at).as_deref(),
                    Some(Path::new("/tmp"))
                );
                assert_eq!(
                    shared_folder_within(d.path()).as_deref(),
                    Some(Path::new("/tmp"))
                );
            });
            // A bind of a folder above one (`/var`, above `/var/tmp`) inside the worktree.
            let d = tempfile::tempdir().unwrap();
            with_bind("/var", &d.path().join("v"), &|| {
                assert!(
                    shared_folder_within(d.path()).is_some(),
                    "a bind of /var inside"
                );
            });
        }
        assert_eq!(
            unescape_mountinfo("/a\\040b\\134c"),
            PathBuf::from("/a b\\c")
        );
        // fence's own sockets' folder, and what lies inside it.
        let sockets = crate::gate::socket::socket_dir();
        let sockets = std::fs::canonicalize(&sockets).unwrap_or(sockets);
        assert!(shared_folder_within(&sockets.join("x")).is_some());
        // A project folder inside one is a worktree as any other.
        let d = tempfile::tempdir_in("/tmp").unwrap();
        assert!(shared_folder_within(d.path()).is_none());
        assert!(find_worktree(Some(d.path()), d.path(), None, false).is_ok());
        assert!(find_worktree(Some(Path::new("/tmp")), d.path(), None, true).is_ok());
        // The default, the current directory outside any repository, is refused as well.
        let err = find_worktree(None, Path::new("/tmp"), None, false).unwrap_err();
        assert!(err.to_string().contains("refusing /tmp"), "{err}");
    }

    #[test]
    fn a_worktree_inside_a_repository_has_its_branch() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("mono");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("packages/app")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature\n").unwrap();
        assert_eq!(
            current_branch(&repo.join("packages/app")).as_deref(),
            Some("feature")
        );
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/.invalid\n").unwrap();
        assert_eq!(current_branch(&repo.join("packages/app")), None);
    }

    #[test]
    fn a_shared_git_directory_is_opened_only_as_git_makes_it() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let common = root.join("main/.git");
        let admin = common.join("worktrees/l");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir_all(common.join("objects")).unwrap();
        std::fs::create_dir_all(common.join("refs")).unwrap();
        std::fs::write(common.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        // A worktree's `.git` file naming `admin`, and `admin` naming it back (`git
        // worktree add`'s `commondir` and `gitdir`).
        let git_file = |worktree: &Path, admin: &Path| {
            std::fs::write(
                worktree.join(".git"),
                format!("gitdir: {}\n", admin.display()),
            )
            .unwrap();
        };
        let names_back = |admin: &Path, worktree: &Path| {
            std::fs::write(admin.join("commondir"), "../..\n").unwrap();
            std::fs::write(
                admin.join("gitdir"),
                format!("{}\n", worktree.join(".git").display()),
            )
            .unwrap();
        };
        let linked = root.join("linked");
        std::fs::create_dir_all(&linked).unwrap();
        names_back(&admin, &linked);
        git_file(&linked, &admin);
        assert_eq!(shared_git_dir(&linked), Some(common.clone()));
        // A `.git` file naming any folder (a home) opens nothing.
        let forged = root.join("forged");
        std::fs::create_dir_all(&forged).unwrap();
        git_file(&forged, &root);
        assert_eq!(shared_git_dir(&forged), None);
        // Nor one naming a real linked worktree's folder that does not name it back.
        git_file(&forged, &admin);
        assert_eq!(shared_git_dir(&forged), None);
        // Nor a folder that is not a git directory, whatever it says back.
        let fake_admin = root.join("home/worktrees/x");
        std::fs::create_dir_all(&fake_admin).unwrap();
        names_back(&fake_admin, &forged);
        git_file(&forged, &fake_admin);
        assert_eq!(shared_git_dir(&forged), None);
    }

    #[test]
    fn branch_is_read_from_head_and_linked_worktrees() {
        let d = tempfile::tempdir().unwrap();
        let wt = d.path();
        std::fs::create_dir_all(wt.join(".git")).unwrap();
        std::fs::write(wt.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(current_branch(wt).as_deref(), Some("main"));
        let linked = d.path().join("linked");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::create_dir_all(wt.join(".git/worktrees/l")).unwrap();
        std::fs::write(
            wt.join(".git/worktrees/l/HEAD"),
            "ref: refs/heads/feature\n",
        )
        .unwrap();
        std::fs::write(linked.join(".git"), "gitdir: ../.git/worktrees/l\n").unwrap();
        assert_eq!(current_branch(&linked).as_deref(), Some("feature"));
        std::fs::write(wt.join(".git/HEAD"), "0123abcd\n").unwrap();
        assert_eq!(current_branch(wt), None);
    }

    #[test]
    fn a_head_naming_a_symbolic_ref_is_on_the_branch_it_ends_at() {
        let d = tempfile::tempdir().unwrap();
        let wt = d.path();
        std::fs::create_dir_all(wt.join(".git/refs/heads")).unwrap();
        std::fs::write(wt.join(".git/HEAD"), "ref: refs/heads/feat\n").unwrap();
        std::fs::write(wt.join(".git/refs/heads/feat"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(current_branch(wt).as_deref(), Some("main"));
        // A loop is no branch that can be known.
        std::fs::write(wt.join(".git/refs/heads/main"), "ref: refs/heads/feat\n").unwrap();
        assert_eq!(current_branch(wt), None);
    }

    #[test]
    fn a_head_that_is_a_fifo_or_a_link_to_a_device_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let wt = d.path();
        std::fs::create_dir_all(wt.join(".git")).unwrap();
        let head = wt.join(".git/HEAD");
        let c = std::ffi::CString::new(head.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo on a path we own, from a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Without the check this read would wait for a writer forever.
        assert_eq!(current_branch(wt), None);
        std::fs::remove_file(&head).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &head).unwrap();
        assert_eq!(current_branch(wt), None);
        std::fs::remove_file(&head).unwrap();
        std::fs::write(wt.join(".git/main-head"), "ref: refs/heads/main\n").unwrap();
        std::os::unix::fs::symlink("main-head", &head).unwrap();
        assert_eq!(current_branch(wt), None);
    }

    #[test]
    fn root_and_home_are_refused_as_worktrees() {
        let d = tempfile::tempdir().unwrap();
        assert!(find_worktree(Some(Path::new("/")), Path::new("/"), None, false).is_err());
        assert!(find_worktree(Some(d.path()), Path::new("/"), Some(d.path()), false).is_err());
        assert!(find_worktree(Some(d.path()), Path::new("/"), Some(d.path()), true).is_ok());
        assert!(
            find_worktree(
                Some(Path::new("/nonexistent/x")),
                Path::new("/"),
                None,
                false
            )
            .is_err()
        );
    }
}

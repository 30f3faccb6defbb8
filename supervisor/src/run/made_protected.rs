//! Protected paths the sandbox makes under `--no-write-watch`, moved aside as they appear.
//!
//! With writes left to Landlock, an existing protected path is a read-only mount of the
//! view, but one missing at start has nothing to hold it: no mount can be made on a name
//! that is not there, and Landlock grants a folder's new names all alike. So a sandbox
//! could make `.git/commondir` (git then takes its config and hooks from a folder the
//! sandbox wrote), `.git/config.worktree`, `.envrc`, `.mcp.json` or an agent's settings,
//! which the user's git, direnv or agent would run outside the sandbox, during the session
//! (an editor's `git status` every few seconds) and after it.
//!
//! Here the supervisor watches, with inotify, the worktree's top, its `.git` when it is
//! there at start, the folders that hold protected paths (`.claude`, `.config`…) and the
//! folders of the files protected configs run (`command_files`): each protected name made
//! there (and a link or file where a folder that holds protected paths would be) is renamed
//! at once to `NAME.fence-blocked-RANDOM` beside it, from a descriptor of the
//! worktree opened at start, beneath it and through no symbolic link; and every watched
//! folder is looked over once more when the sandbox has ended. A protected path that was
//! there at start is a read-only mount and cannot be replaced, so whatever of that name
//! appears is new.
//!
//! Policy, not a boundary: between the name's making and its moving away (the time for the
//! event to reach this thread) a process outside that opens it reads it. A nested
//! repository's config and hooks and a `HEAD` outside `.git` folders are not watched
//! (they could lie anywhere in the worktree).

use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use shim::protected_paths::{holds_protected, is_protected, name_key};

/// How deep below the worktree's top folders are watched (`.git/modules/a/modules/b`).
const MOST_DEPTH: usize = 6;
/// Most folders watched (inotify's watches are counted per user, with the user's editors).
const MOST_FOLDERS: usize = 1024;
/// How often every folder is looked over when there are more than [`MOST_FOLDERS`].
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_millis(250);
/// Names moved aside that are each said; after them, only their number.
const MOST_TOLD: usize = 20;

/// The running watch; [`Guard::finish`] ends it.
pub struct Guard {
    stop: OwnedFd,
    thread: Option<std::thread::JoinHandle<(Vec<String>, OwnedFd)>>,
}

/// What is watched, and what was there at start.
struct Watch {
    root: OwnedFd,
    inotify: Inotify,
    folders: HashMap<WatchDescriptor, PathBuf>,
    watched: HashSet<PathBuf>,
    /// Protected names there at start (relative to the worktree).
    at_start: HashSet<PathBuf>,
    /// What protected configs run, relative to the worktree (files and whole folders).
    config_code: Vec<PathBuf>,
    /// How deep folders are looked into: [`MOST_DEPTH`], or deeper along the way to what
    /// protected configs run (a hook linked to `a/b/c/d/e/f/g/pre-commit`).
    most_depth: usize,
    /// Whether `.git` was a folder at start: a repository made in the session (`git
    /// init`) is the sandbox's own.
    git_at_start: bool,
    moved: Vec<String>,
    count: usize,
    /// More folders than [`MOST_FOLDERS`] may hold protected paths: they are all looked
    /// over again every [`SWEEP_EVERY`] instead.
    saturated: bool,
}

/// Starts watching `worktree`, before the sandbox runs anything. `config_code`: the
/// absolute paths protected configs run (those in the worktree are watched for).
pub fn start(worktree: &Path, config_code: &[PathBuf]) -> io::Result<Guard> {
    let root: OwnedFd = nix::fcntl::open(
        worktree,
        nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(io::Error::from)?;
    let inotify =
        Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK).map_err(io::Error::from)?;
    let mut watch = Watch {
        root,
        inotify,
        folders: HashMap::new(),
        watched: HashSet::new(),
        at_start: HashSet::new(),
        config_code: config_code
            .iter()
            .filter_map(|p| p.strip_prefix(worktree).ok())
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect(),
        most_depth: config_code
            .iter()
            .filter_map(|p| p.strip_prefix(worktree).ok())
            .map(|p| p.components().count())
            .max()
            .unwrap_or(0)
            .max(MOST_DEPTH),
        git_at_start: worktree
            .join(".git")
            .symlink_metadata()
            .is_ok_and(|m| m.is_dir()),
        moved: Vec::new(),
        count: 0,
        saturated: false,
    };
    // The first look: what is there now was there at start.
    watch.look(Path::new(""), true, false);
    // SAFETY: eventfd with valid flags; the descriptor is ours.
    let stop = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if stop < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    let stop = unsafe { OwnedFd::from_raw_fd(stop) };
    let stop_read = stop.try_clone()?;
    let thread = std::thread::Builder::new()
        .name("fence-protect".into())
        .spawn(move || watch.run(stop_read))?;
    Ok(Guard {
        stop,
        thread: Some(thread),
    })
}

impl Guard {
    /// Ends the watch once the sandbox is gone, after a last look over every folder; the
    /// lines to tell the user.
    pub fn finish(mut self) -> Vec<String> {
        self.end()
    }

    fn end(&mut self) -> Vec<String> {
        let Some(thread) = self.thread.take() else {
            return Vec::new();
        };
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a u64 to our eventfd.
        unsafe {
            libc::write(
                self.stop.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        match thread.join() {
            Ok((lines, inotify)) => {
                // Its last close waits for the kernel (`late_close`).
                super::late_close::close_in_child(inotify);
                lines
            }
            Err(_) => vec!["the watch of protected paths under --no-write-watch failed: look over .git, .envrc and the agents' settings before running git or an agent outside".into()],
        }
    }
}

/// A session that ends on an error still gets the last look, and says what it moved.
impl Drop for Guard {
    fn drop(&mut self) {
        for line in self.end() {
            eprintln!("fence: blocked: {}", crate::escape::for_terminal(&line));
        }
    }
}

impl Watch {
    /// The lines to tell, and the inotify instance, whose close is left to the caller.
    fn run(mut self, stop: OwnedFd) -> (Vec<String>, OwnedFd) {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        loop {
            let (events, stopped) = {
                let mut fds = [
                    PollFd::new(self.inotify.as_fd(), PollFlags::POLLIN),
                    PollFd::new(stop.as_fd(), PollFlags::POLLIN),
                ];
                let timeout = if self.saturated {
                    PollTimeout::try_from(SWEEP_EVERY).unwrap_or(PollTimeout::NONE)
                } else {
                    PollTimeout::NONE
                };
                match poll(&mut fds, timeout) {
                    Ok(0) => {
                        self.look(Path::new(""), false, true);
                        continue;
                    }
                    Ok(_) => {}
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(_) => break,
                }
                let ready = |f: &PollFd| f.revents().is_some_and(|r| !r.is_empty());
                (ready(&fds[0]), ready(&fds[1]))
            };
            if stopped {
                break;
            }
            if events {
                self.read_events();
            }
        }
        // The sandbox has ended: whatever an event not yet read, or a queue that
        // overflowed, would have said is seen by a last look at each folder.
        self.read_events();
        self.look(Path::new(""), false, true);
        let mut lines = std::mem::take(&mut self.moved);
        if self.count > MOST_TOLD {
            lines.push(format!(
                "{} more protected paths the sandbox made were moved aside the same way",
                self.count - MOST_TOLD
            ));
        }
        (lines, OwnedFd::from(self.inotify))
    }

    /// Reads the queued events and judges the names they bring; after an overflow of the
    /// queue, every folder is looked over again. Only a name that may matter opens its
    /// folder: the worktree's top gets every file a build makes there.
    fn read_events(&mut self) {
        let mut names: Vec<(PathBuf, std::ffi::OsString)> = Vec::new();
        let mut everything = false;
        while let Ok(events) = self.inotify.read_events() {
            if events.is_empty() {
                break;
            }
            for e in events {
                if e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    everything = true;
                    continue;
                }
                if e.mask.intersects(
                    AddWatchFlags::IN_IGNORED
                        | AddWatchFlags::IN_MOVE_SELF
                        | AddWatchFlags::IN_DELETE_SELF,
                ) {
                    if let Some(rel) = self.folders.remove(&e.wd) {
                        self.watched.remove(&rel);
                    }
                    let _ = self.inotify.rm_watch(e.wd);
                    continue;
                }
                if let (Some(rel), Some(name)) = (self.folders.get(&e.wd), e.name) {
                    names.push((rel.clone(), name));
                }
            }
        }
        if everything {
            self.look(Path::new(""), false, true);
            return;
        }
        for (rel, name) in names {
            let child = rel.join(&name);
            let guarded = self.is_guarded(&child) && !self.at_start.contains(&child);
            if !guarded && !self.may_hold_guarded(&child) {
                continue;
            }
            // Looked at in its folder, as at start: moved aside, or watched and looked
            // into when it is a folder that may hold one.
            self.look_at(&rel, name.as_bytes());
        }
    }

    /// [`Watch::look`] for the one name `name` in the folder `rel`.
    fn look_at(&mut self, rel: &Path, name: &[u8]) {
        let Ok(dir) = self.open_folder(rel) else {
            return;
        };
        let Ok(st) = nix::sys::stat::fstatat(
            &dir,
            OsStr::from_bytes(name),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        ) else {
            return;
        };
        let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
        self.judge(&dir, rel, name, is_dir, false, false);
    }

    /// Judges the entry `name` of the open folder `dir` (`rel`): a guarded name, or a
    /// name that may hold guarded paths but is no folder (a symbolic link to a folder the
    /// sandbox filled, `.claude -> stash`), is noted at start and moved aside later; a
    /// folder that may hold guarded paths is looked into (again, with `descend_all`).
    fn judge(
        &mut self,
        dir: &OwnedFd,
        rel: &Path,
        name: &[u8],
        is_dir: bool,
        first: bool,
        descend_all: bool,
    ) {
        let child = rel.join(OsStr::from_bytes(name));
        let holder = self.may_hold_guarded(&child);
        if self.is_guarded(&child) || (holder && !is_dir) {
            if first {
                self.at_start.insert(child);
            } else if !self.at_start.contains(&child) {
                self.move_aside(dir, name, &child);
            }
            return;
        }
        if is_dir
            && holder
            && child.components().count() <= self.most_depth
            && (descend_all || !self.watched.contains(&child))
        {
            self.look(&child, first, descend_all);
        }
    }

    /// The folder `rel` of the worktree, opened beneath it through no symbolic link.
    fn open_folder(&self, rel: &Path) -> io::Result<OwnedFd> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        super::approved::open_at_checked(
            self.root.as_raw_fd(),
            rel,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            0,
            libc::RESOLVE_BENEATH,
        )
    }

    /// Watches the folder `rel` and looks at what it holds: at start (`first`), its
    /// protected names are noted as there; later, each new one is moved aside. A folder in
    /// it that may hold protected paths is watched and looked at too.
    fn look(&mut self, rel: &Path, first: bool, descend_all: bool) {
        let Ok(dir) = self.open_folder(rel) else {
            return;
        };
        if !self.watched.contains(rel) && self.watched.len() >= MOST_FOLDERS {
            self.saturated = true;
        }
        if !self.watched.contains(rel) && self.watched.len() < MOST_FOLDERS {
            // IN_MOVE_SELF and IN_DELETE_SELF: a folder moved away (`mv .claude junk`) is
            // forgotten under its old name, so the one made in its place is watched.
            let flags = AddWatchFlags::IN_CREATE
                | AddWatchFlags::IN_MOVED_TO
                | AddWatchFlags::IN_ONLYDIR
                | AddWatchFlags::IN_MOVE_SELF
                | AddWatchFlags::IN_DELETE_SELF;
            // The folder opened, through its descriptor's link (followed: it leads to the
            // folder itself, whatever its path has become since).
            let link = format!("/proc/self/fd/{}", dir.as_raw_fd());
            match self.inotify.add_watch(link.as_str(), flags) {
                Ok(wd) => {
                    self.folders.insert(wd, rel.to_path_buf());
                    self.watched.insert(rel.to_path_buf());
                }
                // Out of the user's watches: swept instead.
                Err(_) => self.saturated = true,
            }
        }
        let names = match entries(&dir) {
            Ok(n) => n,
            Err(_) => return,
        };
        for (name, is_dir) in names {
            self.judge(&dir, rel, &name, is_dir, first, descend_all);
        }
    }

    /// Whether `rel` may not be made in the session.
    fn is_guarded(&self, rel: &Path) -> bool {
        if name_key(rel).starts_with(".git") && !self.git_at_start {
            return false;
        }
        let key = name_key(rel);
        is_protected(rel) || self.config_code.iter().any(|c| name_key(c) == key)
    }

    /// Whether the folder `rel` may hold a guarded path.
    fn may_hold_guarded(&self, rel: &Path) -> bool {
        let key = name_key(rel);
        if key.starts_with(".git") && !self.git_at_start {
            return false;
        }
        holds_protected(rel)
            || self.config_code.iter().any(|c| {
                let c = name_key(c);
                c.starts_with(&key) && c != key
            })
    }

    /// Renames `name` in `dir` to `NAME.fence-blocked-RANDOM` beside it (a name the
    /// sandbox cannot have made ready); a file that cannot be moved is removed. What can be
    /// neither is said as a failure.
    fn move_aside(&mut self, dir: &OwnedFd, name: &[u8], rel: &Path) {
        let Ok(from) = CString::new(name) else {
            return;
        };
        let mut last_error = None;
        for _ in 0..8 {
            let mut aside = name.to_vec();
            aside.extend_from_slice(format!(".fence-blocked-{:016x}", random()).as_bytes());
            let Ok(to) = CString::new(aside.clone()) else {
                return;
            };
            // SAFETY: both names are NUL-terminated and relative to the same open folder.
            let r = unsafe {
                libc::renameat2(
                    dir.as_raw_fd(),
                    from.as_ptr(),
                    dir.as_raw_fd(),
                    to.as_ptr(),
                    libc::RENAME_NOREPLACE,
                )
            };
            if r == 0 {
                let aside = rel.with_file_name(OsStr::from_bytes(&aside));
                self.tell(format!(
                    "the sandbox made {}, a protected path that --no-write-watch cannot ask about: moved aside to {} (look at it before renaming it back)",
                    rel.display(),
                    aside.display()
                ));
                return;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                // Gone meanwhile: nothing is there any more.
                Some(libc::ENOENT) => return,
                Some(libc::EEXIST) => last_error = Some(e),
                _ => {
                    last_error = Some(e);
                    break;
                }
            }
        }
        // SAFETY: a NUL-terminated name relative to the open folder; not a folder.
        if unsafe { libc::unlinkat(dir.as_raw_fd(), from.as_ptr(), 0) } == 0 {
            self.tell(format!(
                "the sandbox made {}, a protected path that --no-write-watch cannot ask about: removed (it could not be moved aside)",
                rel.display()
            ));
            return;
        }
        self.tell(format!(
            "FAILED: the sandbox made {}, a protected path, and it could be neither moved aside nor removed ({}): remove it before running git, direnv or an agent here",
            rel.display(),
            last_error.map_or_else(|| io::Error::last_os_error().to_string(), |e| e.to_string())
        ));
    }

    /// A line for the user; past [`MOST_TOLD`] only counted (failures always said).
    fn tell(&mut self, line: String) {
        self.count += 1;
        if self.count <= MOST_TOLD || line.starts_with("FAILED") {
            self.moved.push(line);
        }
    }
}

/// 64 random bits from the kernel (a clock's nanoseconds if it cannot give them).
pub(super) fn random() -> u64 {
    let mut v = 0u64;
    // SAFETY: writes at most 8 bytes into `v`.
    let n = unsafe { libc::getrandom((&mut v as *mut u64).cast(), 8, libc::GRND_NONBLOCK) };
    if n != 8 {
        v = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    }
    v
}

/// The names in the open folder `dir` (not `.` and `..`), each with whether it is a folder
/// itself (not followed).
fn entries(dir: &OwnedFd) -> io::Result<Vec<(Vec<u8>, bool)>> {
    let own = dir.try_clone()?;
    let mut d = nix::dir::Dir::from_fd(own).map_err(io::Error::from)?;
    let mut out = Vec::new();
    for entry in d.iter().flatten() {
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            Some(nix::dir::Type::Directory) => true,
            Some(_) => false,
            None => nix::sys::stat::fstatat(
                dir,
                entry.file_name(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            )
            .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR),
        };
        // Every name: one left unread (a folder filled with names read first) would be a
        // protected path left in place.
        out.push((name.to_vec(), is_dir));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A protected name made after the start is moved aside, in the worktree's top, in
    /// `.git`, in an agent's folder made later and where a config's script is named; what
    /// was there at start, and other names, stay.
    #[test]
    fn protected_names_made_after_the_start_are_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(wt.join(".git/hooks")).unwrap();
        std::fs::write(wt.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(wt.join(".mcp.json"), "{}").unwrap();
        std::fs::create_dir_all(wt.join("tools")).unwrap();
        let guard = start(&wt, &[wt.join("tools/later.sh")]).unwrap();
        // Names made ready where a numbered name would be taken change nothing.
        for n in 1..120 {
            std::fs::write(wt.join(format!(".git/commondir.fence-blocked-{n}")), "").unwrap();
        }
        std::fs::write(wt.join(".git/commondir"), "../evil\n").unwrap();
        // A link to a folder the sandbox filled, where an agent's folder would be.
        std::fs::create_dir_all(wt.join("stash")).unwrap();
        std::fs::write(wt.join("stash/settings.json"), "{}").unwrap();
        std::os::unix::fs::symlink("stash", wt.join(".cursor")).unwrap();
        std::fs::write(wt.join(".envrc"), "evil\n").unwrap();
        std::fs::create_dir_all(wt.join(".claude")).unwrap();
        std::fs::write(wt.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(wt.join(".claude/notes.md"), "x").unwrap();
        std::fs::write(wt.join("tools/later.sh"), "evil\n").unwrap();
        std::fs::write(wt.join("tools/other.sh"), "fine\n").unwrap();
        std::fs::write(wt.join("a.txt"), "fine\n").unwrap();
        let told = guard.finish();
        for made in [
            ".git/commondir",
            ".envrc",
            ".claude/settings.json",
            "tools/later.sh",
            ".cursor",
        ] {
            assert!(
                wt.join(made).symlink_metadata().is_err(),
                "{made} stayed: {told:?}"
            );
            let (folder, name) = made.rsplit_once('/').unwrap_or(("", made));
            let aside = std::fs::read_dir(wt.join(folder))
                .unwrap()
                .flatten()
                .any(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.starts_with(&format!("{name}.fence-blocked-")) && n.len() == name.len() + 31
                });
            assert!(aside, "{made} not moved aside: {told:?}");
            assert!(told.iter().any(|l| l.contains(made)), "{told:?}");
        }
        for kept in [
            ".git/config",
            ".mcp.json",
            ".claude/notes.md",
            "tools/other.sh",
            "a.txt",
        ] {
            assert!(wt.join(kept).exists(), "{kept}");
        }
        assert_eq!(told.len(), 5, "{told:?}");
    }

    /// What a protected config runs, below the depth other folders are watched to.
    #[test]
    fn what_a_config_runs_is_watched_however_deep() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        let hook = wt.join("a/b/c/d/e/f/g/pre-commit");
        let guard = start(&wt, std::slice::from_ref(&hook)).unwrap();
        std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
        std::fs::write(&hook, "touch /tmp/x\n").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while hook.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let moved_during = !hook.exists();
        let told = guard.finish();
        assert!(moved_during, "the deep hook stayed: {told:?}");
    }

    /// More folders that may hold protected paths than can be watched: they are swept, so a
    /// protected name made in one is still moved aside during the session.
    #[test]
    fn folders_past_the_watch_limit_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(wt.join(".git/modules")).unwrap();
        let guard = start(&wt, &[]).unwrap();
        for n in 0..(MOST_FOLDERS + 50) {
            std::fs::create_dir(wt.join(format!(".git/modules/m{n}"))).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        let last = format!(".git/modules/m{}/config", MOST_FOLDERS + 40);
        std::fs::write(wt.join(&last), "[core]\n").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while wt.join(&last).exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let moved_during = !wt.join(&last).exists();
        let told = guard.finish();
        assert!(moved_during, "{last} stayed during the session: {told:?}");
    }

    /// A folder moved away and made again in its place is watched again: a protected file
    /// made in the new one is moved aside during the session; so is one in a folder filled
    /// with thousands of names first.
    #[test]
    fn a_folder_made_again_and_a_full_folder_are_looked_into() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        let guard = start(&wt, &[]).unwrap();
        std::fs::create_dir(wt.join(".claude")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::fs::rename(wt.join(".claude"), wt.join("junk")).unwrap();
        std::fs::create_dir(wt.join(".claude")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::fs::write(wt.join(".claude/settings.json"), "{}").unwrap();
        std::fs::create_dir(wt.join("stash")).unwrap();
        for n in 0..5000 {
            std::fs::write(wt.join(format!("stash/n{n}")), "").unwrap();
        }
        std::fs::write(wt.join("stash/mcp.json"), "{}").unwrap();
        std::fs::rename(wt.join("stash"), wt.join(".cursor")).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while (wt.join(".claude/settings.json").exists() || wt.join(".cursor/mcp.json").exists())
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let during =
            !wt.join(".claude/settings.json").exists() && !wt.join(".cursor/mcp.json").exists();
        let told = guard.finish();
        assert!(during, "left during the session: {told:?}");
    }

    /// A repository made in the session (`git init`) is the sandbox's own.
    #[test]
    fn a_repository_made_in_the_session_keeps_its_config() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        let guard = start(&wt, &[]).unwrap();
        std::fs::create_dir_all(wt.join(".git/hooks")).unwrap();
        std::fs::write(wt.join(".git/config"), "[core]\n").unwrap();
        let told = guard.finish();
        assert!(told.is_empty(), "{told:?}");
        assert!(wt.join(".git/config").exists());
    }
}

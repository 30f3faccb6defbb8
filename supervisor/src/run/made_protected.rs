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
//! there is renamed at once to `NAME.fence-blocked-N` beside it, from a descriptor of the
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
use shim::protected_paths::{holds_protected, is_protected};

/// How deep below the worktree's top folders are watched (`.git/modules/a/modules/b`).
const MOST_DEPTH: usize = 6;
/// Most folders watched.
const MOST_FOLDERS: usize = 512;
/// Names moved aside that are each said; after them, only their number.
const MOST_TOLD: usize = 20;

/// The running watch; [`Guard::finish`] ends it.
pub struct Guard {
    stop: OwnedFd,
    thread: std::thread::JoinHandle<Vec<String>>,
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
    /// Whether `.git` was a folder at start: a repository made in the session (`git
    /// init`) is the sandbox's own.
    git_at_start: bool,
    moved: Vec<String>,
    count: usize,
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
        git_at_start: worktree
            .join(".git")
            .symlink_metadata()
            .is_ok_and(|m| m.is_dir()),
        moved: Vec::new(),
        count: 0,
    };
    // The first look: what is there now was there at start.
    watch.look(Path::new(""), true);
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
    Ok(Guard { stop, thread })
}

impl Guard {
    /// Ends the watch once the sandbox is gone, after a last look over every folder; the
    /// lines to tell the user.
    pub fn finish(self) -> Vec<String> {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a u64 to our eventfd.
        unsafe {
            libc::write(
                self.stop.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        self.thread.join().unwrap_or_else(|_| {
            vec!["the watch of protected paths under --no-write-watch failed: look over .git, .envrc and the agents' settings before running git or an agent outside".into()]
        })
    }
}

impl Watch {
    fn run(mut self, stop: OwnedFd) -> Vec<String> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        loop {
            let (events, stopped) = {
                let mut fds = [
                    PollFd::new(self.inotify.as_fd(), PollFlags::POLLIN),
                    PollFd::new(stop.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
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
        let all: Vec<PathBuf> = self.watched.iter().cloned().collect();
        for rel in all {
            self.look(&rel, false);
        }
        let mut lines = std::mem::take(&mut self.moved);
        if self.count > MOST_TOLD {
            lines.push(format!(
                "{} more protected paths the sandbox made were moved aside the same way",
                self.count - MOST_TOLD
            ));
        }
        lines
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
                if e.mask.contains(AddWatchFlags::IN_IGNORED) {
                    if let Some(rel) = self.folders.remove(&e.wd) {
                        self.watched.remove(&rel);
                    }
                    continue;
                }
                if let (Some(rel), Some(name)) = (self.folders.get(&e.wd), e.name) {
                    names.push((rel.clone(), name));
                }
            }
        }
        if everything {
            let all: Vec<PathBuf> = self.watched.iter().cloned().collect();
            for rel in all {
                self.look(&rel, false);
            }
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
        let child = rel.join(OsStr::from_bytes(name));
        if self.is_guarded(&child) {
            if !self.at_start.contains(&child) {
                self.move_aside(&dir, name, &child);
            }
            return;
        }
        let is_dir = nix::sys::stat::fstatat(
            &dir,
            OsStr::from_bytes(name),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR);
        if is_dir && child.components().count() <= MOST_DEPTH && !self.watched.contains(&child) {
            self.look(&child, false);
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
    fn look(&mut self, rel: &Path, first: bool) {
        let Ok(dir) = self.open_folder(rel) else {
            return;
        };
        if !self.watched.contains(rel) && self.watched.len() < MOST_FOLDERS {
            let flags =
                AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_ONLYDIR;
            // The folder opened, through its descriptor's link (followed: it leads to the
            // folder itself, whatever its path has become since).
            let link = format!("/proc/self/fd/{}", dir.as_raw_fd());
            if let Ok(wd) = self.inotify.add_watch(link.as_str(), flags) {
                self.folders.insert(wd, rel.to_path_buf());
                self.watched.insert(rel.to_path_buf());
            }
        }
        let names = match entries(&dir) {
            Ok(n) => n,
            Err(_) => return,
        };
        for (name, is_dir) in names {
            let child = rel.join(OsStr::from_bytes(&name));
            if self.is_guarded(&child) {
                if first {
                    self.at_start.insert(child);
                } else if !self.at_start.contains(&child) {
                    self.move_aside(&dir, &name, &child);
                }
                continue;
            }
            if is_dir
                && child.components().count() <= MOST_DEPTH
                && !self.watched.contains(&child)
                && self.may_hold_guarded(&child)
            {
                self.look(&child, first);
            }
        }
    }

    /// Whether `rel` may not be made in the session.
    fn is_guarded(&self, rel: &Path) -> bool {
        if rel.starts_with(".git") && !self.git_at_start {
            return false;
        }
        is_protected(rel) || self.config_code.iter().any(|c| c == rel)
    }

    /// Whether the folder `rel` may hold a guarded path.
    fn may_hold_guarded(&self, rel: &Path) -> bool {
        if rel.starts_with(".git") && !self.git_at_start {
            return false;
        }
        holds_protected(rel)
            || self
                .config_code
                .iter()
                .any(|c| c.starts_with(rel) && c != rel)
    }

    /// Renames `name` in `dir` to a free `NAME.fence-blocked-N` beside it.
    fn move_aside(&mut self, dir: &OwnedFd, name: &[u8], rel: &Path) {
        let Ok(from) = CString::new(name) else {
            return;
        };
        for n in 1..100u32 {
            let mut aside = name.to_vec();
            aside.extend_from_slice(format!(".fence-blocked-{n}").as_bytes());
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
                self.count += 1;
                if self.count <= MOST_TOLD {
                    let aside = rel.with_file_name(OsStr::from_bytes(&aside));
                    self.moved.push(format!(
                        "the sandbox made {}, a protected path that --no-write-watch cannot ask about: moved aside to {} (look at it before renaming it back)",
                        rel.display(),
                        aside.display()
                    ));
                }
                return;
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
                return;
            }
        }
    }
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
        out.push((name.to_vec(), is_dir));
        if out.len() >= 4096 {
            break;
        }
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
        std::fs::write(wt.join(".git/commondir"), "../evil\n").unwrap();
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
        ] {
            assert!(!wt.join(made).exists(), "{made} stayed: {told:?}");
            let aside = format!("{made}.fence-blocked-1");
            assert!(wt.join(&aside).exists(), "{aside}: {told:?}");
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
        assert_eq!(told.len(), 4, "{told:?}");
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

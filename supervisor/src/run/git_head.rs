//! The worktree's current branch for exec judgements, read from git's HEAD again only when
//! HEAD changed.
//!
//! Every exec carries the current branch to the policy (rules about pushing to it), and
//! reading it costs several system calls (find the git directory, open, read, close)
//! where one `statx` of HEAD tells whether the last answer still holds: git replaces HEAD
//! by renaming a new file over it, which changes its inode and change time. The branch is
//! policy input, not a security boundary.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What identifies one version of the HEAD file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

#[derive(Debug)]
struct Entry {
    worktree: PathBuf,
    head: PathBuf,
    stamp: Stamp,
    branch: Option<String>,
}

static LAST: Mutex<Option<Entry>> = Mutex::new(None);

/// The branch `worktree` is on (as [`crate::session::current_branch`]), from the last read
/// while HEAD is unchanged.
pub fn current_branch(worktree: &Path) -> Option<String> {
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(e) = last.as_ref().filter(|e| e.worktree == worktree)
        && Stamp::of(&e.head) == Some(e.stamp)
    {
        return e.branch.clone();
    }
    let head = crate::session::holding_git_dir(worktree)?.join("HEAD");
    let before = Stamp::of(&head);
    let branch = crate::session::current_branch(worktree);
    // Kept only when HEAD did not change while it was read.
    *last = match before {
        Some(stamp) if Stamp::of(&head) == Some(stamp) => Some(Entry {
            worktree: worktree.to_path_buf(),
            head,
            stamp,
            branch: branch.clone(),
        }),
        _ => None,
    };
    branch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_head(git: &Path, text: &str) {
        // As git does: a new file renamed over HEAD.
        std::fs::write(git.join("HEAD.lock"), text).unwrap();
        std::fs::rename(git.join("HEAD.lock"), git.join("HEAD")).unwrap();
    }

    #[test]
    fn a_branch_switch_is_seen_and_a_detached_head_has_no_branch() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path();
        let git = wt.join(".git");
        std::fs::create_dir(&git).unwrap();
        write_head(&git, "ref: refs/heads/main\n");
        assert_eq!(current_branch(wt).as_deref(), Some("main"));
        assert_eq!(current_branch(wt).as_deref(), Some("main"));
        write_head(&git, "ref: refs/heads/feature/x\n");
        assert_eq!(current_branch(wt).as_deref(), Some("feature/x"));
        write_head(&git, "0123456789abcdef0123456789abcdef01234567\n");
        assert_eq!(current_branch(wt), None);
        std::fs::remove_dir_all(&git).unwrap();
        assert_eq!(current_branch(wt), None);
    }

    #[test]
    fn an_in_place_rewrite_of_head_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path();
        let git = wt.join(".git");
        std::fs::create_dir(&git).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/one\n").unwrap();
        assert_eq!(current_branch(wt).as_deref(), Some("one"));
        // Same inode, different size and times.
        std::fs::write(git.join("HEAD"), "ref: refs/heads/three\n").unwrap();
        assert_eq!(current_branch(wt).as_deref(), Some("three"));
    }
}

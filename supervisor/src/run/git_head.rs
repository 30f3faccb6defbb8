//! The worktree's current branch for exec judgements, read from git's HEAD again only when
//! HEAD changed.
//!
//! Every exec carries the current branch to the policy (rules about pushing to it), and
//! reading it costs several system calls (find the git directory, open, read, close)
//! where one `statx` of HEAD tells whether the last answer still holds: git replaces HEAD
//! by renaming a new file over it, which changes its inode and change time. The branch is
//! policy input, not a security boundary.
//!
//! HEAD's branch may itself be made a symbolic ref (`git symbolic-ref refs/heads/feat
//! refs/heads/main`) without HEAD changing: the branch's own file is watched as well, and a
//! HEAD that reaches its branch through more than one symbolic ref is read every time.

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
    /// Not followed: a symlink is itself a ref (git reads a link to `refs/…` as a
    /// symbolic ref).
    fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(path).ok()?;
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
    /// The file of the branch HEAD names and its stamp (`None`: no loose file, the ref is
    /// packed or unborn).
    branch_file: Option<(PathBuf, Option<Stamp>)>,
    branch: Option<String>,
}

static LAST: Mutex<Option<Entry>> = Mutex::new(None);

/// The branch `worktree` is on (as [`crate::session::current_branch`]), from the last read
/// while HEAD is unchanged.
pub fn current_branch(worktree: &Path) -> Option<String> {
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(e) = last.as_ref().filter(|e| e.worktree == worktree)
        && Stamp::of(&e.head) == Some(e.stamp)
        && e.branch_file
            .as_ref()
            .is_none_or(|(file, stamp)| Stamp::of(file) == *stamp)
    {
        return e.branch.clone();
    }
    let git_dir = crate::session::holding_git_dir(worktree)?;
    let head = git_dir.join("HEAD");
    let before = Stamp::of(&head);
    let text = crate::session::head_text(&git_dir);
    // The file of the branch HEAD names, stamped before the chain is read.
    let named = text
        .as_deref()
        .and_then(|t| t.strip_prefix("ref:"))
        .map(|t| t.trim().to_string());
    let branch_file = named.as_deref().and_then(|name| {
        let file = policy::refs::Refs::at(&policy::RealFs, git_dir.clone())
            .ok()?
            .file_of(name)
            .ok()?;
        let stamp = Stamp::of(&file);
        Some((file, stamp))
    });
    let branch = text.and_then(|t| crate::session::branch_of_head(git_dir, &t));
    // Kept only when HEAD did not change while it was read, and HEAD is detached or names
    // its branch directly: a longer chain has files of its own that are not watched.
    let direct = match (&named, &branch) {
        (None, _) => true,
        (Some(name), Some(b)) => branch_file.is_some() && *name == format!("refs/heads/{b}"),
        (Some(_), None) => false,
    };
    *last = match before {
        Some(stamp) if direct && Stamp::of(&head) == Some(stamp) => Some(Entry {
            worktree: worktree.to_path_buf(),
            head,
            stamp,
            branch_file,
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

    #[test]
    fn a_branch_made_symbolic_behind_an_unchanged_head_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path();
        let git = wt.join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        write_head(&git, "ref: refs/heads/feat\n");
        std::fs::write(git.join("refs/heads/feat"), "0123abcd\n").unwrap();
        assert_eq!(current_branch(wt).as_deref(), Some("feat"));
        assert_eq!(current_branch(wt).as_deref(), Some("feat"));
        // As `git symbolic-ref refs/heads/feat refs/heads/main` writes it.
        std::fs::write(git.join("refs/heads/feat.lock"), "ref: refs/heads/main\n").unwrap();
        std::fs::rename(
            git.join("refs/heads/feat.lock"),
            git.join("refs/heads/feat"),
        )
        .unwrap();
        assert_eq!(current_branch(wt).as_deref(), Some("main"));
        assert_eq!(current_branch(wt).as_deref(), Some("main"));
    }
}

//! A repository's refs as git's files backend keeps them: where a name git pushes lands,
//! and which branch HEAD is on. A loose ref may be symbolic (`ref: refs/heads/main`), so
//! `git push origin feat` moves main when `refs/heads/feat` points there. Read through
//! [`FsView`]; the sandbox may have written every file read here, so what cannot be read
//! as git reads it is an error, never a harmless answer.

use std::io;
use std::path::{Path, PathBuf};

use crate::path::FsView;

/// git's `SYMREF_MAXDEPTH`: it reads at most this many refs to resolve one name.
const MAX_READS: usize = 5;

/// A ref file is a hash or a name; anything longer is not one.
const MOST: u64 = 4096;

/// Why a ref's target cannot be established.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unresolved {
    #[error("the repository keeps its refs in a reftable")]
    Reftable,
    #[error("{0} is symbolic more than {MAX_READS} levels deep")]
    TooDeep(String),
    #[error("{0} cannot be read")]
    Unreadable(String),
    #[error("{0} is not a name git reads as a ref")]
    BadName(String),
}

/// The refs of one repository.
pub struct Refs<'a> {
    fs: &'a dyn FsView,
    /// The repository's own folder (a linked worktree's admin folder): HEAD, pseudo-refs
    /// (`FOO_HEAD`) and the per-worktree refs.
    git_dir: PathBuf,
    /// The folder linked worktrees share (`commondir`): every other ref.
    common_dir: PathBuf,
}

impl<'a> Refs<'a> {
    /// The refs of the repository whose git directory is `git_dir`.
    pub fn at(fs: &'a dyn FsView, git_dir: PathBuf) -> Result<Refs<'a>, Unresolved> {
        let common_dir = match read_text(fs, &git_dir.join("commondir"))? {
            Some(text) => git_dir.join(text.trim_end_matches('\n')),
            None => git_dir.clone(),
        };
        if fs.exists(&common_dir.join("reftable")) {
            return Err(Unresolved::Reftable);
        }
        Ok(Refs {
            fs,
            git_dir,
            common_dir,
        })
    }

    /// The refs of the repository `dir` lies in: that of the nearest folder holding a
    /// `.git` (a folder, or a file naming one: `gitdir: PATH`). `None` when there is none.
    pub fn of_folder(fs: &'a dyn FsView, dir: &Path) -> Option<Result<Refs<'a>, Unresolved>> {
        let top = dir.ancestors().find(|a| fs.exists(&a.join(".git")))?;
        let dot_git = top.join(".git");
        if fs.is_dir(&dot_git) {
            return Some(Refs::at(fs, dot_git));
        }
        Some(match read_text(fs, &dot_git) {
            Ok(Some(text)) => match text.trim_end().strip_prefix("gitdir: ") {
                Some(dir) => Refs::at(fs, top.join(dir)),
                None => Err(Unresolved::Unreadable(dot_git.display().to_string())),
            },
            Ok(None) | Err(_) => Err(Unresolved::Unreadable(dot_git.display().to_string())),
        })
    }

    /// The file that holds the loose ref `name`.
    pub fn file_of(&self, name: &str) -> Result<PathBuf, Unresolved> {
        let bad = || Unresolved::BadName(name.to_string());
        // git reads no name that climbs, hides or is absolute.
        if name.is_empty()
            || name.ends_with('/')
            || name.ends_with(".lock")
            || name.contains(['\0', '\\'])
            || name.split('/').any(|c| c.is_empty() || c.starts_with('.'))
        {
            return Err(bad());
        }
        // `main-worktree/…` and `worktrees/NAME/…` reach another worktree's refs.
        if name.starts_with("main-worktree/") || name.starts_with("worktrees/") {
            return Err(bad());
        }
        let own = !name.starts_with("refs/")
            || ["refs/worktree/", "refs/bisect/", "refs/rewritten/"]
                .iter()
                .any(|p| name.starts_with(p));
        let dir = if own { &self.git_dir } else { &self.common_dir };
        Ok(dir.join(name))
    }

    /// What the loose ref `name` holds: `Some(target)` when it is symbolic, `None` when it
    /// is a hash or there is no loose ref (packed refs are never symbolic).
    fn read(&self, name: &str) -> Result<Option<String>, Unresolved> {
        let file = self.file_of(name)?;
        let unreadable = || Unresolved::Unreadable(file.display().to_string());
        // A symlink whose text starts with `refs/` is git's older spelling of a
        // symbolic ref; another is followed.
        if let Ok(link) = self.fs.read_link(&file)
            && let Some(target) = link.to_str().filter(|t| t.starts_with("refs/"))
        {
            return Ok(Some(target.to_string()));
        }
        // A folder is no ref (`refs/remotes/origin`).
        if self.fs.is_dir(&file) {
            return Ok(None);
        }
        let Some(text) = read_text(self.fs, &file).map_err(|_| unreadable())? else {
            return Ok(None);
        };
        Ok(text
            .strip_prefix("ref:")
            .map(|t| t.trim_matches([' ', '\t', '\n', '\r']).to_string()))
    }

    /// The ref `name` stands for once every symbolic ref on the way is followed, as git's
    /// `refs_resolve_ref_unsafe` does; `reads` refs were read before it.
    fn resolve_after(&self, name: &str, reads: usize) -> Result<String, Unresolved> {
        let mut name = name.to_string();
        for _ in reads..MAX_READS {
            match self.read(&name)? {
                Some(target) => name = target,
                None => return Ok(name),
            }
        }
        Err(Unresolved::TooDeep(name))
    }

    /// The refs `git push REMOTE src` (a source without `:dst`) may update: git takes `src`
    /// for the first of `src`, `refs/src`, `refs/tags/src`, `refs/heads/src`,
    /// `refs/remotes/src`, `refs/remotes/src/HEAD` that exists, and a symbolic one
    /// pushes to the ref it resolves to. Every candidate's target is returned, not only
    /// the first existing one's: which of them git takes does not matter to a caller
    /// that judges the worst.
    pub fn push_destinations(&self, src: &str) -> Result<Vec<String>, Unresolved> {
        let candidates = if src.starts_with("refs/") {
            vec![src.to_string(), format!("refs/{src}")]
        } else {
            vec![
                src.to_string(),
                format!("refs/{src}"),
                format!("refs/tags/{src}"),
                format!("refs/heads/{src}"),
                format!("refs/remotes/{src}"),
                format!("refs/remotes/{src}/HEAD"),
            ]
        };
        let mut out = Vec::new();
        for c in candidates {
            // A candidate that is no loose ref file is this source only by its own name.
            let target = self.resolve_after(&c, 0)?;
            if target != c {
                out.push(target);
            }
        }
        Ok(out)
    }

    /// The branch this repository's HEAD is on ([`Self::branch_of_head`] of its `HEAD`).
    pub fn current_branch(&self) -> Result<Option<String>, Unresolved> {
        let head = self.git_dir.join("HEAD");
        match read_text(self.fs, &head)? {
            Some(text) => self.branch_of_head(&text),
            None => Err(Unresolved::Unreadable(head.display().to_string())),
        }
    }

    /// The branch HEAD is on, given HEAD's text (read by the caller): the end of its chain
    /// of symbolic refs (`HEAD` → `refs/heads/feat` → `refs/heads/main` is on main). `None`
    /// when HEAD is detached or ends outside `refs/heads/`.
    pub fn branch_of_head(&self, head: &str) -> Result<Option<String>, Unresolved> {
        let Some(target) = head.strip_prefix("ref:") else {
            return Ok(None);
        };
        let target = target.trim_matches([' ', '\t', '\n', '\r']);
        let end = self.resolve_after(target, 1)?;
        Ok(end.strip_prefix("refs/heads/").map(str::to_string))
    }
}

/// The text of the regular file at `path`, `None` when nothing is there.
fn read_text(fs: &dyn FsView, path: &Path) -> Result<Option<String>, Unresolved> {
    fs.read_file(path, MOST)
        .map_err(|_: io::Error| Unresolved::Unreadable(path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::RealFs;

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let git = d.path().join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/work\n").unwrap();
        std::fs::write(git.join("refs/heads/work"), "0123abcd\n").unwrap();
        (d, git)
    }

    #[test]
    fn a_symbolic_source_pushes_to_its_target() {
        let (d, git) = repo();
        let refs = Refs::of_folder(&RealFs, d.path()).unwrap().unwrap();
        assert_eq!(
            refs.push_destinations("work").unwrap(),
            Vec::<String>::new()
        );
        std::fs::write(git.join("refs/heads/feat"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(refs.push_destinations("feat").unwrap(), ["refs/heads/main"]);
        std::fs::write(git.join("FOO_HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(
            refs.push_destinations("FOO_HEAD").unwrap(),
            ["refs/heads/main"]
        );
        std::os::unix::fs::symlink("refs/heads/main", git.join("refs/heads/old")).unwrap();
        assert_eq!(refs.push_destinations("old").unwrap(), ["refs/heads/main"]);
    }

    #[test]
    fn head_is_followed_to_the_end_of_its_chain() {
        let (_d, git) = repo();
        let refs = Refs::at(&RealFs, git.clone()).unwrap();
        assert_eq!(
            refs.branch_of_head("ref: refs/heads/work\n")
                .unwrap()
                .as_deref(),
            Some("work")
        );
        std::fs::write(git.join("refs/heads/feat"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(
            refs.branch_of_head("ref: refs/heads/feat\n")
                .unwrap()
                .as_deref(),
            Some("main")
        );
        assert_eq!(refs.branch_of_head("0123abcd\n").unwrap(), None);
    }

    #[test]
    fn what_git_could_not_resolve_is_an_error() {
        let (_d, git) = repo();
        let refs = Refs::at(&RealFs, git.clone()).unwrap();
        // A loop, and a chain longer than git follows.
        std::fs::write(git.join("refs/heads/a"), "ref: refs/heads/b\n").unwrap();
        std::fs::write(git.join("refs/heads/b"), "ref: refs/heads/a\n").unwrap();
        assert!(matches!(
            refs.push_destinations("a"),
            Err(Unresolved::TooDeep(_))
        ));
        for (from, to) in [("c1", "c2"), ("c2", "c3"), ("c3", "c4"), ("c4", "c5")] {
            std::fs::write(
                git.join("refs/heads").join(from),
                format!("ref: refs/heads/{to}\n"),
            )
            .unwrap();
        }
        std::fs::write(git.join("refs/heads/c5"), "ref: refs/heads/main\n").unwrap();
        assert!(refs.push_destinations("c1").is_err());
        std::fs::write(git.join("refs/heads/up"), "ref: ../../config\n").unwrap();
        assert!(matches!(
            refs.push_destinations("up"),
            Err(Unresolved::BadName(_))
        ));
        std::fs::create_dir(git.join("reftable")).unwrap();
        assert!(matches!(Refs::at(&RealFs, git), Err(Unresolved::Reftable)));
    }

    #[test]
    fn a_linked_worktree_has_its_own_head_and_shares_the_refs() {
        let (d, git) = repo();
        let admin = git.join("worktrees/l");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        std::fs::write(admin.join("BISECT_HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(git.join("refs/heads/feat"), "ref: refs/heads/main\n").unwrap();
        let linked = d.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::fs::write(
            linked.join(".git"),
            format!("gitdir: {}\n", admin.display()),
        )
        .unwrap();
        let refs = Refs::of_folder(&RealFs, &linked).unwrap().unwrap();
        assert_eq!(refs.push_destinations("feat").unwrap(), ["refs/heads/main"]);
        assert_eq!(
            refs.push_destinations("BISECT_HEAD").unwrap(),
            ["refs/heads/main"]
        );
    }
}

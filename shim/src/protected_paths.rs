//! Protected paths inside the worktree (SPEC §2): files that would run code later, outside
//! the sandbox (git hooks and config, direnv, editor and agent settings). They stay
//! read-only even though the worktree is writable.
//!
//! Landlock grants rights downward and cannot carve a read-only hole in a writable tree, so
//! in a mount namespace each existing protected path is a read-only bind of itself, and
//! `.git` is a mount point of its own, which the kernel refuses to rename or remove (a
//! renamed `.git` beside a forged one would carry forged hooks out). The supervisor also
//! refuses writes to these paths with a reason, which covers creating one that does not
//! exist yet — a check that, unlike the mounts, a racing thread could slip past.

use std::path::{Component, Path, PathBuf};

/// Relative paths protected with everything beneath them.
const PROTECTED_TREES: [&str; 3] = [".git/hooks", ".vscode", ".idea"];
/// Relative paths protected exactly.
const PROTECTED_FILES: [&str; 4] = [".git/config", ".gitmodules", ".envrc", ".mcp.json"];

/// Whether `rel` (relative to the worktree) is a protected path.
pub fn is_protected(rel: &Path) -> bool {
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return false;
    }
    PROTECTED_TREES.iter().any(|t| rel.starts_with(t))
        || PROTECTED_FILES.iter().any(|f| rel == Path::new(f))
        || is_agent_settings(rel)
}

/// `.claude/settings*.json`.
fn is_agent_settings(rel: &Path) -> bool {
    rel.parent() == Some(Path::new(".claude"))
        && rel
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("settings") && n.ends_with(".json"))
}

/// The protected paths that exist in `worktree`, to be made read-only.
pub fn existing(worktree: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_TREES
        .iter()
        .chain(PROTECTED_FILES.iter())
        .map(|rel| worktree.join(rel))
        .filter(|p| {
            p.symlink_metadata()
                .is_ok_and(|m| !m.file_type().is_symlink())
        })
        .collect();
    if let Ok(entries) = std::fs::read_dir(worktree.join(".claude")) {
        for e in entries.flatten() {
            let rel = Path::new(".claude").join(e.file_name());
            if is_agent_settings(&rel) && e.file_type().is_ok_and(|t| !t.is_symlink()) {
                out.push(worktree.join(rel));
            }
        }
    }
    out
}

/// Those of `paths` (absolute: a profile's protected settings) that exist and are not
/// symlinks, to be made read-only. A symlink is left alone: a write through it lands on its
/// target, which the fence judges on its own, and the link itself is refused by the
/// supervisor's check.
pub fn existing_of(paths: &[std::ffi::OsString]) -> Vec<PathBuf> {
    paths
        .iter()
        .map(PathBuf::from)
        .filter(|p| {
            p.is_absolute()
                && p.symlink_metadata()
                    .is_ok_and(|m| !m.file_type().is_symlink())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_config_and_settings_are_protected_but_not_the_rest_of_git() {
        for p in [
            ".git/hooks",
            ".git/hooks/pre-commit",
            ".git/config",
            ".envrc",
            ".vscode/settings.json",
            ".claude/settings.local.json",
            ".mcp.json",
        ] {
            assert!(is_protected(Path::new(p)), "{p}");
        }
        for p in [
            ".git/index",
            ".git/objects/ab/cd",
            "src/config",
            ".claude/notes.md",
            "a/.envrc",
        ] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
    }
}

//! What the benchmark and the `corpus_stats` example share: the corpus and
//! a classifier set up like a session's.

use std::path::{Path, PathBuf};

use policy::{Classifier, Settings};

/// Lines coding agents and CI jobs run, one per line.
pub const CORPUS: &str = include_str!("../corpus.txt");

pub fn corpus_lines() -> Vec<&'static str> {
    CORPUS.lines().filter(|l| !l.is_empty()).collect()
}

/// A classifier for the workspace itself (so symlink resolution meets a
/// real tree, as in a session), and the cwd to classify in.
pub fn classifier() -> (Classifier, PathBuf) {
    let worktree = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the policy crate lives in the workspace")
        .canonicalize()
        .expect("the workspace exists");
    let mut s = Settings::for_worktree(&worktree);
    s.home = Some("/home/dev".into());
    s.current_branch = Some("feature/bench".into());
    for (k, v) in [
        ("HOME", "/home/dev"),
        ("USER", "dev"),
        ("PATH", "/home/dev/.cargo/bin:/usr/local/bin:/usr/bin:/bin"),
        ("CI", "true"),
        ("GITHUB_TOKEN", "ghp_example"),
        ("EDITOR", "vi"),
    ] {
        s.env.insert(k.into(), v.into());
    }
    (Classifier::new(s).expect("absolute worktree"), worktree)
}

//! The files a patch touches: Codex `apply_patch` envelopes and unified
//! diffs (plain or `git diff` style). A patch is judged by the worst of them.

/// Every path a patch writes, creates, deletes or renames, as written, in order, each
/// once (a set keeps the dedup linear: a hook input of hundreds of thousands of file lines
/// is read in time).
pub fn touched_paths(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut add = |p: String| {
        if !p.is_empty() && p != "/dev/null" && seen.insert(p.clone()) {
            out.push(p);
        }
    };
    for line in patch.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        // Codex apply_patch: it trims each marker line (blanks around it, a tab, a
        // no-break space) and takes the rest of it whole as the path, tabs included.
        let trimmed = line.trim();
        for marker in [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ] {
            if let Some(p) = trimmed.strip_prefix(marker) {
                add(p.trim().to_string());
            }
        }
        // Unified diff headers: a tab ends the name (a timestamp may follow).
        let header = |p: &str| {
            let p = p.trim();
            let p = p.split('\t').next().unwrap_or(p).trim_end();
            unquote(p)
        };
        if let Some(p) = line
            .strip_prefix("+++ ")
            .or_else(|| line.strip_prefix("--- "))
        {
            add(header(strip_git_prefix(p)));
        }
        if let Some(rest) = line.strip_prefix("diff --git ")
            && let Some((a, b)) = split_git_pair(rest)
        {
            add(header(strip_git_prefix(&a)));
            add(header(strip_git_prefix(&b)));
        }
        for marker in ["rename from ", "rename to ", "copy to ", "copy from "] {
            if let Some(p) = line.strip_prefix(marker) {
                add(header(p));
            }
        }
    }
    out
}

fn strip_git_prefix(p: &str) -> &str {
    let p = p.trim();
    if p.starts_with('"') {
        // Quoted names keep their `a/`/`b/` until `unquote` decodes them.
        return p;
    }
    p.strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p)
}

fn split_git_pair(rest: &str) -> Option<(String, String)> {
    // `a/x b/x`; names with spaces are ambiguous, take the split at " b/".
    let i = rest.find(" b/").or_else(|| rest.find(" \"b/"))?;
    Some((rest[..i].to_string(), rest[i + 1..].to_string()))
}

/// Git quotes names with special characters C-style.
fn unquote(p: &str) -> String {
    let inner = match p.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(i) => i,
        None => return p.to_string(),
    };
    let s = crate::word::decode_ansi_c(inner);
    for pre in ["a/", "b/"] {
        if let Some(r) = s.strip_prefix(pre) {
            return r.to_string();
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_envelope() {
        let p = "*** Begin Patch\n*** Add File: src/a.rs\n+x\n*** Update File: b.rs\n*** Move to: ../out.rs\n@@\n-a\n+b\n*** Delete File: /etc/passwd\n*** End Patch\n";
        assert_eq!(
            touched_paths(p),
            vec!["src/a.rs", "b.rs", "../out.rs", "/etc/passwd"]
        );
    }

    #[test]
    fn unified_and_git_diffs() {
        let p = "diff --git a/x.rs b/y.rs\nrename from x.rs\nrename to y.rs\n--- a/x.rs\n+++ b/y.rs\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ /etc/cron.d/job\t2024-01-01\n";
        let t = touched_paths(p);
        assert!(t.contains(&"x.rs".to_string()));
        assert!(t.contains(&"y.rs".to_string()));
        assert!(t.contains(&"/etc/cron.d/job".to_string()));
        assert!(!t.contains(&"/dev/null".to_string()));
    }
}

//! The worktree's `.git/config` rewritten by git for a branch's bookkeeping.
//!
//! `.git/config` is a protected path (SPEC §2): its settings run code in the user's git
//! later (`core.fsmonitor`, `core.pager`, aliases, hooks folders, includes) and send pushes
//! elsewhere (remote URLs). Yet git rewrites it in everyday branch work: `git push -u` and
//! `git branch --set-upstream-to` record a branch's upstream, `git branch -m` and `-d`
//! rename or drop a branch's section, `git checkout -b x origin/x` tracks, `git config
//! user.email` sets the author. Each rewrite is git writing `.git/config.lock` and renaming
//! it over `.git/config`.
//!
//! That rename is judged by what it changes. Both files are parsed and their entries
//! compared; when every entry added or removed is a branch's bookkeeping
//! (`branch.<name>.merge`, `rebase`, `description`, and `remote`/`pushRemote` naming a
//! remote the config had before, or `.`), the author's identity (`user.name`,
//! `user.email`) or what `git init` records of the repository and the file system it lies
//! on (`core.repositoryformatversion`, `filemode`, `bare = false`, `logallrefupdates`,
//! `symlinks`, `ignorecase`, `precomposeunicode`, `extensions.objectformat`; a config
//! that does not exist yet counts as empty, so a repository made in the session gets its
//! first config), the supervisor writes the new text into `.git/config` itself, from the
//! bytes it checked, and removes the lock file: no descriptor the sandbox holds (git's of
//! the lock file, or a racing thread's) ever becomes the config. Anything else — another
//! key, a remote's URL, an include, a text this parser does not read exactly as git does —
//! is asked, as every write to a protected path.
//!
//! Security boundary: the comparison and the write from the checked bytes. The comparison
//! is made by entries and again by lines (every changed line must be a bookkeeping line
//! of its own), so the lines git leaves alone are the same bytes in both files. The parser
//! refuses (and so leaves the question to a person) whatever it does not read exactly:
//! carriage returns, NUL bytes, invalid UTF-8, entries on a section's line, escapes other
//! than git's, unterminated quotes, blanks before a continuation (which git keeps), a key
//! before any section.

use std::collections::{BTreeMap, BTreeSet};

/// Largest config file read for the comparison; a larger one is asked.
const MAX_CONFIG: u64 = 256 * 1024;

/// One setting: section and key in lower case (git's are case-insensitive), the
/// subsection as written (a legacy `[section.sub]` one in lower case, as git reads it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    section: String,
    subsection: Option<String>,
    key: String,
    /// `None` for a key without `=` (git's boolean true).
    value: Option<String>,
}

/// When the rename of `lock` over `config` changes only a branch's bookkeeping or the
/// author's identity: the new text, to be written into `config` by the supervisor.
/// `None`: the rename is asked as before.
pub fn bookkeeping_only(
    lock: &std::path::Path,
    config: &std::path::Path,
    made_in_session: bool,
) -> Option<Vec<u8>> {
    let new = read_bounded(lock)?;
    let old = match std::fs::symlink_metadata(config) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        _ => read_bounded(config)?,
    };
    let (before, after) = (parse(&old)?, parse(&new)?);
    (changes_only_bookkeeping(&before, &after, made_in_session)
        && changed_lines_are_bookkeeping(&old, &new, made_in_session))
    .then_some(new)
}

/// The same comparison line by line, on the texts: every line one file has more of than
/// the other is blank, a comment, a `[branch "…"]` or `[user]` header, or a `key = value`
/// of a bookkeeping key without a backslash. The lines git leaves alone are then the same
/// bytes, so a difference between this parser and git's in reading them (blanks before a
/// continuation, which git keeps) cannot hide a change in a setting of another key.
fn changed_lines_are_bookkeeping(old: &[u8], new: &[u8], init: bool) -> bool {
    let count = |text: &[u8]| {
        let mut m: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
        for line in text.split(|b| *b == b'\n') {
            *m.entry(line.to_vec()).or_default() += 1;
        }
        m
    };
    let (before, after) = (count(old), count(new));
    let lines: BTreeSet<&Vec<u8>> = before.keys().chain(after.keys()).collect();
    lines.into_iter().all(|line| {
        before.get(line).copied().unwrap_or(0) == after.get(line).copied().unwrap_or(0)
            || std::str::from_utf8(line).is_ok_and(|l| is_bookkeeping_line(l, init))
    })
}

fn is_bookkeeping_line(line: &str, init: bool) -> bool {
    let t = line.trim_matches([' ', '\t']);
    if t.is_empty() || t.starts_with(['#', ';']) {
        return true;
    }
    if t.contains('\\') {
        return false;
    }
    if let Some(rest) = t.strip_prefix('[') {
        return match parse_header(rest) {
            Some((section, sub)) => {
                (section == "branch" && sub.is_some())
                    || (section == "user" && sub.is_none())
                    || (init && matches!(section.as_str(), "core" | "extensions") && sub.is_none())
            }
            None => false,
        };
    }
    let key_end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(t.len());
    let key = t[..key_end].to_ascii_lowercase();
    let init_key = matches!(
        key.as_str(),
        "repositoryformatversion"
            | "filemode"
            | "bare"
            | "logallrefupdates"
            | "symlinks"
            | "ignorecase"
            | "precomposeunicode"
            | "objectformat"
    );
    (matches!(
        key.as_str(),
        "merge" | "rebase" | "description" | "remote" | "pushremote" | "name" | "email"
    ) || (init && init_key))
        && t[key_end..]
            .trim_start_matches([' ', '\t'])
            .starts_with('=')
}

fn read_bounded(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // Not through a symbolic link: the check reads the files git wrote.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(MAX_CONFIG + 1).read_to_end(&mut text).ok()?;
    (text.len() as u64 <= MAX_CONFIG).then_some(text)
}

/// Whether every entry `after` adds to `before` or drops from it is bookkeeping.
fn changes_only_bookkeeping(before: &[Entry], after: &[Entry], init: bool) -> bool {
    let count = |entries: &[Entry]| {
        let mut m: BTreeMap<Entry, i64> = BTreeMap::new();
        for e in entries {
            *m.entry(e.clone()).or_default() += 1;
        }
        m
    };
    let (old, new) = (count(before), count(after));
    let remotes: BTreeSet<&str> = before
        .iter()
        .filter(|e| e.section == "remote" && e.key == "url")
        .filter_map(|e| e.subsection.as_deref())
        .collect();
    let keys: BTreeSet<&Entry> = old.keys().chain(new.keys()).collect();
    keys.into_iter().all(|e| {
        old.get(e).copied().unwrap_or(0) == new.get(e).copied().unwrap_or(0)
            || is_bookkeeping(e, &remotes, init)
    })
}

fn is_bookkeeping(e: &Entry, remotes: &BTreeSet<&str>, init: bool) -> bool {
    let plain = |v: &str| {
        !v.is_empty()
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._/-+@".contains(&b))
    };
    match (e.section.as_str(), e.subsection.is_some(), e.key.as_str()) {
        // The upstream branch of the same name only: another (`refs/heads/main` for a
        // branch `feature`) is where a later `git push` with `push.default=upstream` goes.
        ("branch", true, "merge") => {
            e.value.as_deref()
                == e.subsection
                    .as_ref()
                    .map(|b| format!("refs/heads/{b}"))
                    .as_deref()
        }
        ("branch", true, "rebase") => e.value.as_deref().is_some_and(plain),
        ("branch", true, "description") => e.value.is_some(),
        // A branch's remote may be a URL, which `git push` on it would use: only a remote
        // the config already had, or `.` (the repository itself).
        ("branch", true, "remote" | "pushremote") => e
            .value
            .as_deref()
            .is_some_and(|v| v == "." || remotes.contains(v)),
        ("user", false, "name" | "email") => e.value.is_some(),
        // What `git init` records in a repository made in the session: the format, what
        // the file system keeps. None runs anything; a bare repository is not one that has
        // this worktree.
        _ if !init => false,
        ("core", false, "repositoryformatversion") => {
            matches!(e.value.as_deref(), Some("0" | "1"))
        }
        ("core", false, "bare") => e.value.as_deref() == Some("false"),
        ("core", false, "filemode" | "logallrefupdates" | "symlinks" | "ignorecase")
        | ("core", false, "precomposeunicode") => {
            matches!(e.value.as_deref(), Some("true" | "false"))
        }
        ("extensions", false, "objectformat") => {
            matches!(e.value.as_deref(), Some("sha1" | "sha256"))
        }
        _ => false,
    }
}

/// The entries of a config text, or `None` where it is not read exactly.
fn parse(text: &[u8]) -> Option<Vec<Entry>> {
    let text = std::str::from_utf8(text).ok()?;
    if text.contains(['\0', '\r']) {
        return None;
    }
    let mut section: Option<(String, Option<String>)> = None;
    let mut out = Vec::new();
    let mut lines = text.split('\n');
    while let Some(line) = lines.next() {
        let t = line.trim_start_matches([' ', '\t']);
        if t.is_empty() || t.starts_with(['#', ';']) {
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            section = Some(parse_header(rest)?);
            continue;
        }
        let (name, sub) = section.clone()?;
        let key_end = t
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(t.len());
        let key = &t[..key_end];
        if !key.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return None;
        }
        let rest = t[key_end..].trim_start_matches([' ', '\t']);
        // Git reads a key followed by anything but `=` (a comment included) as an error.
        let value = if rest.is_empty() {
            None
        } else {
            Some(parse_value(rest.strip_prefix('=')?, &mut lines)?)
        };
        out.push(Entry {
            section: name.clone(),
            subsection: sub.clone(),
            key: key.to_ascii_lowercase(),
            value,
        });
    }
    Some(out)
}

/// A section header after its `[`: `name]`, `name "sub"]` or the legacy `name.sub]`,
/// followed by nothing but blanks or a comment.
fn parse_header(rest: &str) -> Option<(String, Option<String>)> {
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .unwrap_or(rest.len());
    let name = rest[..name_end].to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    let mut after = &rest[name_end..];
    let mut sub = None;
    if let Some(quoted) = after.strip_prefix(" \"") {
        if name.contains('.') {
            return None;
        }
        let mut s = String::new();
        let mut chars = quoted.char_indices();
        loop {
            match chars.next()? {
                (i, '"') => {
                    after = &quoted[i + 1..];
                    break;
                }
                (_, '\\') => match chars.next()? {
                    (_, c @ ('"' | '\\')) => s.push(c),
                    _ => return None,
                },
                (_, c) if c.is_control() => return None,
                (_, c) => s.push(c),
            }
        }
        sub = Some(s);
    }
    let after = after.strip_prefix(']')?.trim_start_matches([' ', '\t']);
    if !(after.is_empty() || after.starts_with(['#', ';'])) {
        return None;
    }
    match (sub, name.split_once('.')) {
        (Some(s), _) => Some((name, Some(s))),
        (None, Some((n, s))) if !n.is_empty() && !s.is_empty() => {
            Some((n.to_string(), Some(s.to_string())))
        }
        (None, None) => Some((name, None)),
        _ => None,
    }
}

/// A value after its `=`, as git reads it: quotes removed, `\"`, `\\`, `\n`, `\t` and `\b`
/// unescaped, a backslash at the end of a line joining the next, a `#` or `;` outside
/// quotes starting a comment, blanks outside quotes trimmed at both ends.
fn parse_value<'a>(mut v: &'a str, lines: &mut impl Iterator<Item = &'a str>) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    // Length of `out` up to its last character that was quoted or not a blank.
    let mut kept = 0;
    let mut started = false;
    loop {
        let mut chars = v.chars();
        let mut continued = false;
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    quoted = !quoted;
                    started = true;
                    kept = out.len();
                }
                '\\' => match chars.next() {
                    None => {
                        continued = true;
                        break;
                    }
                    Some(e) => {
                        out.push(match e {
                            '"' | '\\' => e,
                            'n' => '\n',
                            't' => '\t',
                            'b' => '\u{8}',
                            _ => return None,
                        });
                        started = true;
                        kept = out.len();
                    }
                },
                '#' | ';' if !quoted => break,
                ' ' | '\t' if !quoted && !started => {}
                c if c.is_control() && c != '\t' => return None,
                c => {
                    out.push(c);
                    started = true;
                    if quoted || !matches!(c, ' ' | '\t') {
                        kept = out.len();
                    }
                }
            }
        }
        if !continued {
            break;
        }
        // A continuation: git keeps the blanks before it, which are hard to read alike;
        // such a file is left to a person.
        if out.ends_with([' ', '\t']) {
            return None;
        }
        v = lines.next()?;
    }
    if quoted {
        return None;
    }
    out.truncate(kept);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";

    fn judged(after: &str) -> bool {
        changes_only_bookkeeping(
            &parse(BEFORE.as_bytes()).unwrap(),
            &parse(after.as_bytes()).unwrap(),
            false,
        )
    }

    #[test]
    fn a_branchs_upstream_its_rename_and_the_author_are_bookkeeping() {
        // git push -u origin feature
        assert!(judged(&format!(
            "{BEFORE}[branch \"feature\"]\n\tremote = origin\n\tmerge = refs/heads/feature\n"
        )));
        // git branch -m main trunk
        assert!(judged(
            &BEFORE
                .replace("[branch \"main\"]", "[branch \"trunk\"]")
                .replace("refs/heads/main", "refs/heads/trunk")
        ));
        // ... but not while its upstream is still main.
        assert!(!judged(
            &BEFORE.replace("[branch \"main\"]", "[branch \"trunk\"]")
        ));
        // git branch -d main (git leaves the header or not)
        assert!(judged(BEFORE.split("[branch").next().unwrap()));
        // git config user.email
        assert!(judged(&format!(
            "{BEFORE}[user]\n\temail = a@example.com\n\tname = \"A B\"\n"
        )));
        // Unchanged.
        assert!(judged(BEFORE));
    }

    /// What `git init` writes into a repository's first config (and `git init` again).
    #[test]
    fn a_new_repositorys_first_config_is_bookkeeping() {
        let dir = tempfile::tempdir().unwrap();
        let (lock, config) = (dir.path().join("config.lock"), dir.path().join("config"));
        let first = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        std::fs::write(&lock, first).unwrap();
        assert_eq!(
            bookkeeping_only(&lock, &config, true).as_deref(),
            Some(first.as_bytes())
        );
        std::fs::write(&config, first).unwrap();
        let probed = format!(
            "{first}\tsymlinks = false\n\tignorecase = true\n[extensions]\n\tobjectformat = sha256\n"
        );
        std::fs::write(&lock, &probed).unwrap();
        assert!(bookkeeping_only(&lock, &config, true).is_some());
        for not in [
            first.replace("bare = false", "bare = true"),
            format!("{first}\tfsmonitor = x\n"),
            format!("{first}\thooksPath = /tmp\n"),
            first.replace("filemode = true", "filemode = sh"),
            format!("{first}[extensions]\n\tworktreeConfig = true\n"),
        ] {
            std::fs::write(&lock, &not).unwrap();
            assert!(bookkeeping_only(&lock, &config, true).is_none(), "{not}");
        }
        // In a repository that was there before the session, none of it is bookkeeping.
        std::fs::write(&config, first).unwrap();
        std::fs::write(&lock, &probed).unwrap();
        assert!(bookkeeping_only(&lock, &config, false).is_none());
        std::fs::write(&lock, first.replace("filemode = true", "filemode = false")).unwrap();
        assert!(bookkeeping_only(&lock, &config, false).is_none());
        // A config that cannot be read is not taken for a missing one.
        std::fs::remove_file(&config).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &config).unwrap();
        std::fs::write(&lock, first).unwrap();
        assert!(bookkeeping_only(&lock, &config, true).is_none());
    }

    #[test]
    fn settings_that_run_code_or_move_pushes_are_not() {
        for added in [
            "[core]\n\tfsmonitor = touch /tmp/x\n",
            "[core]\n\tpager = sh -c x\n",
            "[alias]\n\tst = !sh -c x\n",
            "[include]\n\tpath = ../x\n",
            "[includeIf \"gitdir:/\"]\n\tpath = ../x\n",
            "[remote \"evil\"]\n\turl = https://evil.example/r.git\n",
            "[branch \"feature\"]\n\tremote = https://evil.example/r.git\n",
            "[branch \"feature\"]\n\tremote = evil\n",
            "[remote \"origin\"]\n\tpush = refs/heads/*:refs/heads/main\n",
            "[Core]\n\tHooksPath = x\n",
            "[branch \"feature\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
            "[core.x]\n\tsshcommand = x\n",
        ] {
            let after = format!("{BEFORE}{added}");
            assert!(
                parse(after.as_bytes()).is_none() || !judged(&after),
                "{added}"
            );
        }
        // A changed remote URL.
        assert!(!judged(&BEFORE.replace(
            "https://example.com/r.git",
            "https://evil.example/r.git"
        )));
    }

    #[test]
    fn text_read_otherwise_than_git_reads_it_is_not_parsed() {
        for text in [
            "[core] fsmonitor = x\n",
            "fsmonitor = x\n",
            "[core]\r\n\tbare = false\r\n",
            "[user]\n\tname = \"a\n",
            "[user]\n\tname = a\\q\n",
            "[core \"x]\n",
            "[user]\n\tname\x00 = a\n",
        ] {
            assert!(parse(text.as_bytes()).is_none(), "{text:?}");
        }
    }

    /// git keeps the blanks before a continuation (`hooksPath = .githooks \` then `;`
    /// reads `.githooks `, a folder no rule protects): such a change is not bookkeeping,
    /// whatever the parser makes of it.
    #[test]
    fn a_changed_line_of_another_key_is_never_bookkeeping() {
        let old = format!("{BEFORE}[core]\n\thooksPath = .githooks\n");
        let new = format!("{BEFORE}[core]\n\thooksPath = .githooks \\\n;\n");
        assert!(!changed_lines_are_bookkeeping(
            old.as_bytes(),
            new.as_bytes(),
            false
        ));
        assert!(parse(new.as_bytes()).is_none());
        let new = format!("{old}[user]\n\temail = a@b\n");
        assert!(changed_lines_are_bookkeeping(
            old.as_bytes(),
            new.as_bytes(),
            false
        ));
        let new = old.replace(".githooks", ".githooks2");
        assert!(!changed_lines_are_bookkeeping(
            old.as_bytes(),
            new.as_bytes(),
            false
        ));
    }

    #[test]
    fn values_are_read_as_git_reads_them() {
        let e = parse(b"[user]\n\tname = \"A  B\" # c\n\temail = a@b ; c\n[branch \"x\"]\n\tdescription = one\\\n two\n").unwrap();
        assert_eq!(e[0].value.as_deref(), Some("A  B"));
        assert_eq!(e[1].value.as_deref(), Some("a@b"));
        assert_eq!(e[2].value.as_deref(), Some("one two"));
        // Blanks before a continuation: left to a person.
        assert!(parse(b"[branch \"x\"]\n\tdescription = one \\\n two\n").is_none());
        // A continuation swallows what would otherwise be a section of its own.
        let e = parse(b"[branch \"x\"]\n\tdescription = a\\\n[core]\n").unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].value.as_deref(), Some("a[core]"));
    }
}

//! Pathname expansion: the names a glob word becomes before the program runs, matched
//! against the filesystem the classifier sees ([`FsView`]) as bash matches them with its
//! default options (no `dotglob`, `nullglob`, `failglob`, `globstar` or `extglob`).
//!
//! - `*`, `?` and `[…]` never match a leading `.`: a component must start with a literal
//!   `.` to match a dotfile (and then `.` and `..` match too, as before bash 5.2).
//! - A component without a pattern character is taken as it is; after a pattern one,
//!   what it names must exist (`*/.ssh/id_rsa` matches only folders that hold one).
//! - A word that ends in `/` matches folders only.
//! - A word nothing matches stays as written.
//!
//! Only unquoted pattern characters are special: the caller says which bytes they are.
//! The walk is bounded ([`MAX_MATCHES`], [`MAX_NAMES_READ`]); past the bound the
//! expansion is not known, and the caller judges the word as one whose value cannot be
//! worked out before running.

use std::ffi::OsString;
use std::path::Path;

use crate::path::{self, FsView};

/// The most names one word may expand to before fence stops following it.
pub const MAX_MATCHES: usize = 256;
/// The most directory entries one expansion may read.
pub const MAX_NAMES_READ: usize = 4096;

/// What a glob word becomes.
#[derive(Debug, PartialEq, Eq)]
pub enum Expansion {
    /// Nothing matches (or the word holds no pattern): it stays as written.
    Unmatched,
    /// The words it becomes, sorted as bash sorts them (bytewise here).
    Matches(Vec<String>),
    /// More than fence reads, or a name that is not UTF-8: not known.
    Unknown,
}

/// One component of a word, as a pattern when it holds an unquoted pattern character.
enum Component {
    Literal(String),
    Pattern {
        pattern: glob::Pattern,
        /// Starts with a literal `.`: dotfiles, `.` and `..` may match.
        dot: bool,
    },
}

/// Splits `text` at `/` into components; `special` holds the byte offsets of the
/// unquoted pattern characters.
fn components(text: &str, special: &[usize]) -> Vec<Component> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in text.split('/') {
        let end = start + part.len();
        out.push(component(part, start, special));
        start = end + 1;
    }
    out
}

fn component(part: &str, offset: usize, special: &[usize]) -> Component {
    let is_special = |i: usize| special.contains(&(offset + i));
    let wild = part
        .char_indices()
        .any(|(i, c)| is_special(i) && matches!(c, '*' | '?'));
    // A `[` opens a bracket expression only with a `]` after its first character; bash
    // takes any other literally.
    let opens = |i: usize| part[i + 1..].char_indices().skip(1).any(|(_, c)| c == ']');
    let bracket = part
        .char_indices()
        .any(|(i, c)| is_special(i) && c == '[' && opens(i));
    if !(wild || bracket) {
        return Component::Literal(part.to_string());
    }
    let mut pattern = String::with_capacity(part.len() + 8);
    let mut after_open = false;
    for (i, c) in part.char_indices() {
        if is_special(i) && (c != '[' || opens(i)) {
            // bash takes `[^…]` as `[!…]`.
            if after_open && c == '^' {
                pattern.push('!');
            } else {
                pattern.push(c);
            }
            after_open = c == '[';
            continue;
        }
        if after_open && c == '^' {
            pattern.push('!');
        } else if matches!(c, '*' | '?' | '[' | ']') && !after_open {
            pattern.push_str(&glob::Pattern::escape(&c.to_string()));
        } else {
            pattern.push(c);
        }
        after_open = false;
    }
    match glob::Pattern::new(&pattern) {
        Ok(pattern) => Component::Pattern {
            pattern,
            dot: part.starts_with('.'),
        },
        // Not a pattern glob reads (an unclosed bracket): taken as written.
        Err(_) => Component::Literal(part.to_string()),
    }
}

/// Expands `text` (a word's value; `special` the offsets of its unquoted pattern
/// characters) against `fs`, relative words from `cwd`.
pub fn expand(fs: &dyn FsView, cwd: &Path, text: &str, special: &[usize]) -> Expansion {
    if special.is_empty() || text.is_empty() {
        return Expansion::Unmatched;
    }
    let comps = components(text, special);
    if !comps.iter().any(|c| matches!(c, Component::Pattern { .. })) {
        return Expansion::Unmatched;
    }
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    // The words so far, as written (`""` before the first component of a relative
    // word, `""` then `/` for an absolute one).
    let mut words: Vec<String> = vec![String::new()];
    let mut read = 0;
    let mut matched_pattern = false;
    for (k, comp) in comps.iter().enumerate() {
        let sep = if k == 0 { "" } else { "/" };
        match comp {
            Component::Literal(name) => {
                for w in &mut words {
                    w.push_str(sep);
                    w.push_str(name);
                }
            }
            Component::Pattern { pattern, dot } => {
                let mut next = Vec::new();
                for w in &words {
                    let dir = if w.is_empty() && k > 0 {
                        "/"
                    } else {
                        w.as_str()
                    };
                    let at = path::resolve(fs, cwd, Path::new(dir), true);
                    let Some(mut names) = fs.list_dir(&at, MAX_NAMES_READ - read) else {
                        continue;
                    };
                    read += names.len();
                    if read > MAX_NAMES_READ {
                        return Expansion::Unknown;
                    }
                    if *dot {
                        names.push(OsString::from("."));
                        names.push(OsString::from(".."));
                    }
                    for name in names {
                        let Some(name) = name.to_str() else {
                            // A name fence cannot write down: what it leads to is not known.
                            if pattern.matches_with(&name.to_string_lossy(), opts) {
                                return Expansion::Unknown;
                            }
                            continue;
                        };
                        if pattern.matches_with(name, opts) {
                            next.push(format!("{w}{sep}{name}"));
                            if next.len() > MAX_MATCHES {
                                return Expansion::Unknown;
                            }
                        }
                    }
                }
                words = next;
                matched_pattern = true;
            }
        }
        if words.is_empty() {
            return Expansion::Unmatched;
        }
    }
    if !matched_pattern {
        return Expansion::Unmatched;
    }
    // What follows the last pattern component must exist; a word ending in `/` names
    // folders only.
    let trailing_slash = text.ends_with('/');
    let trailing_literal = matches!(comps.last(), Some(Component::Literal(n)) if !n.is_empty());
    words.retain(|w| {
        let p = Path::new(w.as_str());
        if trailing_slash {
            return fs.is_dir(&path::resolve(fs, cwd, p, true));
        }
        if !trailing_literal {
            return true;
        }
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return true;
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        fs.exists(&path::resolve(fs, cwd, parent, true).join(name))
    });
    if words.is_empty() {
        return Expansion::Unmatched;
    }
    words.sort();
    words.dedup();
    Expansion::Matches(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io;
    use std::path::PathBuf;

    /// Folders with their entries, and symlinks.
    struct Tree {
        dirs: HashMap<PathBuf, Vec<&'static str>>,
        links: HashMap<PathBuf, PathBuf>,
    }

    impl FsView for Tree {
        fn read_link(&self, p: &Path) -> io::Result<PathBuf> {
            self.links
                .get(p)
                .cloned()
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))
        }
        fn exists(&self, p: &Path) -> bool {
            self.links.contains_key(p)
                || self.dirs.contains_key(p)
                || p.parent()
                    .and_then(|d| self.dirs.get(d))
                    .zip(p.file_name())
                    .is_some_and(|(names, n)| names.iter().any(|x| n == *x))
        }
        fn is_dir(&self, p: &Path) -> bool {
            self.dirs.contains_key(p)
        }
        fn list_dir(&self, p: &Path, _max: usize) -> Option<Vec<OsString>> {
            self.dirs
                .get(p)
                .map(|names| names.iter().map(OsString::from).collect())
        }
    }

    fn tree() -> Tree {
        Tree {
            dirs: HashMap::from([
                (
                    PathBuf::from("/wt"),
                    vec!["a.rs", "b.rs", "link-out", ".env", "src"],
                ),
                (PathBuf::from("/wt/src"), vec!["main.rs"]),
                (PathBuf::from("/home"), vec!["u"]),
                (PathBuf::from("/home/u"), vec![".ssh", "notes"]),
                (PathBuf::from("/home/u/.ssh"), vec!["id_rsa"]),
            ]),
            links: HashMap::from([(PathBuf::from("/wt/link-out"), PathBuf::from("/home/u"))]),
        }
    }

    /// Every pattern character of `text` unquoted.
    fn all(text: &str) -> Vec<usize> {
        text.char_indices()
            .filter(|(_, c)| matches!(c, '*' | '?' | '[' | ']'))
            .map(|(i, _)| i)
            .collect()
    }

    fn ex(text: &str) -> Expansion {
        expand(&tree(), Path::new("/wt"), text, &all(text))
    }

    fn matches(words: &[&str]) -> Expansion {
        Expansion::Matches(words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn globs_match_as_bash_matches() {
        assert_eq!(ex("*.rs"), matches(&["a.rs", "b.rs"]));
        assert_eq!(ex("*/.ssh/id_rsa"), matches(&["link-out/.ssh/id_rsa"]));
        assert_eq!(ex("l*/*"), matches(&["link-out/notes"]));
        assert_eq!(ex("*/"), matches(&["link-out/", "src/"]));
        assert_eq!(ex(".*"), matches(&[".", "..", ".env"]));
        assert_eq!(ex("/home/*/.ss?/*"), matches(&["/home/u/.ssh/id_rsa"]));
        assert_eq!(ex("s[a-z]c/m[^x]in.rs"), matches(&["src/main.rs"]));
        assert_eq!(ex("*.py"), Expansion::Unmatched);
        // An unclosed `[` is a character like any other.
        assert_eq!(ex("[*"), Expansion::Unmatched);
        assert_eq!(ex("s*[c/*"), Expansion::Unmatched);
        assert_eq!(ex("*/nothing"), Expansion::Unmatched);
        assert_eq!(ex("plain"), Expansion::Unmatched);
    }

    #[test]
    fn quoted_pattern_characters_are_literal() {
        assert_eq!(
            expand(&tree(), Path::new("/wt"), "*.rs", &[]),
            Expansion::Unmatched
        );
        // `"*"x*`: the first star is quoted.
        assert_eq!(
            expand(&tree(), Path::new("/wt"), "a*.rs", &[]),
            Expansion::Unmatched
        );
    }

    #[test]
    fn too_many_names_are_not_known() {
        let names: Vec<&'static str> = (0..MAX_MATCHES + 1)
            .map(|i| &*Box::leak(format!("f{i}").into_boxed_str()))
            .collect();
        let t = Tree {
            dirs: HashMap::from([(PathBuf::from("/big"), names)]),
            links: HashMap::new(),
        };
        assert_eq!(
            expand(&t, Path::new("/"), "/big/*", &all("/big/*")),
            Expansion::Unknown
        );
    }
}

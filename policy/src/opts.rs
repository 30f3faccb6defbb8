//! A small getopt for reading other programs' command lines: which words are
//! options (and their values) and where the operands begin.
//!
//! Written by hand because it reads *other* programs' conventions from a
//! table (which short letters and long names take a value); argument-parsing
//! crates parse one's own command line and cannot be told another's rules.

use crate::word::Arg;

/// Which options of a program take a value.
#[derive(Debug, Clone, Copy, Default)]
pub struct OptSpec {
    /// Short option letters that take a value (`-o FILE`, `-oFILE`).
    pub short_arg: &'static str,
    /// Long option names (without `--`) that take a value (`--out FILE`, `--out=FILE`).
    pub long_arg: &'static [&'static str],
    /// Options may follow operands (GNU style); otherwise the first operand ends them.
    pub permute: bool,
}

impl OptSpec {
    /// The long option taking a value that `given` names, in full or
    /// abbreviated (the first one when the abbreviation fits several).
    fn value_option(&self, given: &str) -> Option<&'static str> {
        self.long_arg
            .iter()
            .find(|n| **n == given)
            .or_else(|| self.long_arg.iter().find(|n| abbreviates(given, n)))
            .copied()
    }
}

#[derive(Debug, Clone)]
pub enum Opt {
    Short(char, Option<Arg>),
    Long(String, Option<Arg>),
}

/// Whether `given` (a long option's name as written, without `--` and
/// `=value`) names the option `name`: in full, or abbreviated to a prefix,
/// which GNU getopt_long and git's option parser both accept
/// (`rm --rec --forc`, `git push --mirr`). An abbreviation that fits several
/// options makes the program refuse to run, so reading it as any of them is
/// never looser than the program.
pub fn abbreviates(given: &str, name: &str) -> bool {
    !given.is_empty() && name.starts_with(given)
}

/// Whether the word `t` is the long option `--name`, in full or abbreviated,
/// with or without an attached `=value`.
pub fn is_long(t: &str, name: &str) -> bool {
    t.strip_prefix("--")
        .map(|l| l.split_once('=').map_or(l, |x| x.0))
        .is_some_and(|l| abbreviates(l, name))
}

impl Opt {
    pub fn is(&self, short: char, long: &str) -> bool {
        match self {
            Opt::Short(c, _) => *c == short,
            Opt::Long(l, _) => abbreviates(l, long),
        }
    }

    pub fn value(&self) -> Option<&Arg> {
        match self {
            Opt::Short(_, v) | Opt::Long(_, v) => v.as_ref(),
        }
    }
}

/// Options and operands of `args[start..]`.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub opts: Vec<Opt>,
    /// Indices (into the original `args`) of the operands, in order.
    pub operands: Vec<usize>,
    /// Index of the first operand when options end at the first operand.
    pub first_operand: usize,
}

impl Parsed {
    pub fn has(&self, short: char, long: &str) -> bool {
        self.opts.iter().any(|o| o.is(short, long))
    }

    pub fn value_of(&self, short: char, long: &str) -> Option<&Arg> {
        self.opts
            .iter()
            .filter(|o| o.is(short, long))
            .filter_map(Opt::value)
            .next_back()
    }

    pub fn values_of<'a>(&'a self, short: char, long: &'a str) -> impl Iterator<Item = &'a Arg> {
        self.opts
            .iter()
            .filter(move |o| o.is(short, long))
            .filter_map(Opt::value)
    }
}

fn derived(parent: &Arg, text: &str) -> Arg {
    Arg {
        text: text.to_string(),
        known: parent.known || !text.contains(crate::word::UNKNOWN),
        home_based: text.starts_with('~'),
        ..Arg::default()
    }
}

/// Where an option that rewrites the command line lies among the options of `args[start..]`
/// (`env -S STRING`: GNU env puts the string's words in its place and reads its options
/// again from there), read as [`parse`] reads them without `permute` (options end at the
/// first operand or `--`).
#[derive(Debug, Clone)]
pub struct Found {
    /// The word that holds the option.
    pub at: usize,
    /// The first word after the option and its value.
    pub next: usize,
    /// The short options before it in the same cluster (`i` of `-iS`), if any.
    pub before: Option<String>,
    /// Its value (`None`: the line ends first).
    pub value: Option<Arg>,
}

/// [`Found`] for the option `short`/`long` (one that takes a value, in `spec`), if it is
/// among the options of `args[start..]`.
pub fn find_option(
    args: &[Arg],
    start: usize,
    spec: &OptSpec,
    short: char,
    long: &str,
) -> Option<Found> {
    let mut i = start;
    while i < args.len() {
        let a = &args[i];
        let t = a.text.as_str();
        if t == "--" || t == "-" || !t.starts_with('-') {
            return None;
        }
        if let Some(given) = t.strip_prefix("--") {
            let (name, attached) = match given.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (given, None),
            };
            let named = spec.value_option(name);
            let takes_next = named.is_some() && attached.is_none();
            if named == Some(long) {
                let (value, next) = match attached {
                    Some(v) => (Some(derived(a, v)), i + 1),
                    None => (args.get(i + 1).cloned(), i + 2),
                };
                return Some(Found {
                    at: i,
                    next: next.min(args.len()),
                    before: None,
                    value,
                });
            }
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        let cluster = &t[1..];
        let mut consumed_next = false;
        for (pos, c) in cluster.char_indices() {
            if !spec.short_arg.contains(c) {
                continue;
            }
            let rest = &cluster[pos + c.len_utf8()..];
            if c == short {
                let (value, next) = if rest.is_empty() {
                    (args.get(i + 1).cloned(), i + 2)
                } else {
                    (Some(derived(a, rest)), i + 1)
                };
                return Some(Found {
                    at: i,
                    next: next.min(args.len()),
                    before: (pos > 0).then(|| format!("-{}", &cluster[..pos])),
                    value,
                });
            }
            consumed_next = rest.is_empty();
            break;
        }
        i += if consumed_next { 2 } else { 1 };
    }
    None
}

/// Reads `args[start..]` by `spec`. Without `permute`, options end at the
/// first operand and every later word is an operand (as for a command that
/// runs another command).
pub fn parse(args: &[Arg], start: usize, spec: &OptSpec) -> Parsed {
    let mut p = Parsed {
        first_operand: args.len(),
        ..Parsed::default()
    };
    let mut i = start;
    let mut options_done = false;
    while i < args.len() {
        let a = &args[i];
        let t = a.text.as_str();
        if options_done || t == "-" || !t.starts_with('-') {
            if p.first_operand == args.len() {
                p.first_operand = i;
            }
            p.operands.push(i);
            if !spec.permute {
                options_done = true;
            }
            i += 1;
            continue;
        }
        if t == "--" {
            options_done = true;
            i += 1;
            if p.first_operand == args.len() && i < args.len() {
                p.first_operand = i;
            }
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            if let Some((name, value)) = long.split_once('=') {
                let name = spec.value_option(name).unwrap_or(name);
                p.opts
                    .push(Opt::Long(name.to_string(), Some(derived(a, value))));
            } else if let Some(name) = spec.value_option(long) {
                // `--sig KILL` is `--signal KILL`: the value is the next word.
                let v = args.get(i + 1).cloned();
                p.opts.push(Opt::Long(name.to_string(), v));
                i += 1;
            } else {
                p.opts.push(Opt::Long(long.to_string(), None));
            }
            i += 1;
            continue;
        }
        // A cluster of short options: `-abc`, `-oFILE`, `-o FILE`.
        let cluster = &t[1..];
        for (pos, c) in cluster.char_indices() {
            if spec.short_arg.contains(c) {
                let rest = &cluster[pos + c.len_utf8()..];
                if rest.is_empty() {
                    let v = args.get(i + 1).cloned();
                    p.opts.push(Opt::Short(c, v));
                    i += 1;
                } else {
                    p.opts.push(Opt::Short(c, Some(derived(a, rest))));
                }
                break;
            }
            p.opts.push(Opt::Short(c, None));
        }
        i += 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn clusters_values_and_terminator() {
        let a = args("tar -xzf x.tgz -C /etc -- -weird");
        let p = parse(
            &a,
            1,
            &OptSpec {
                short_arg: "fC",
                long_arg: &["file"],
                permute: true,
            },
        );
        assert!(p.has('x', "extract"));
        assert_eq!(p.value_of('f', "file").unwrap().text, "x.tgz");
        assert_eq!(p.value_of('C', "directory").unwrap().text, "/etc");
        assert_eq!(p.operands, vec![6]);
    }

    #[test]
    fn abbreviated_long_options_are_read_as_the_option_they_name() {
        let a = args("timeout --sig KILL 5 rm --rec --forc /");
        let p = parse(
            &a,
            1,
            &OptSpec {
                short_arg: "sk",
                long_arg: &["signal", "kill-after"],
                permute: false,
            },
        );
        assert_eq!(p.value_of('s', "signal").unwrap().text, "KILL");
        assert_eq!(p.first_operand, 3);
        let rm = parse(&a, 5, &OptSpec::default());
        assert!(rm.has('r', "recursive") && rm.has('f', "force"));
        assert!(!rm.has('v', "verbose"));
        assert!(is_long("--in-pl", "in-place") && is_long("--in=.bak", "in-place"));
        assert!(!is_long("--", "in-place") && !is_long("-i", "in-place"));
    }

    #[test]
    fn without_permute_first_operand_ends_options() {
        let a = args("timeout -s KILL 10 rm -rf /");
        let p = parse(
            &a,
            1,
            &OptSpec {
                short_arg: "sk",
                ..OptSpec::default()
            },
        );
        assert_eq!(p.first_operand, 3);
        assert_eq!(p.operands, vec![3, 4, 5, 6]);
    }
}

//! The walker: visits every position of a parsed line where a program can
//! run and hands each simple command to the command analysis.
//!
//! Positions: `&&`/`||`/`;`/`&` lists, pipelines, subshells, `{ }` groups,
//! `if`/`for`/`while`/`until`/`case`/`select`, functions, coprocesses,
//! `[[ ]]`, `$(…)` and backticks (anywhere in a word, including parameter
//! defaults and arithmetic), process substitution, here-documents and
//! here-strings, redirections, assignments, and the strings that wrappers
//! run (`sh -c`, `su -c`, `watch`, `trap`, `find -exec`, `xargs`, …), which
//! the command analysis parses again through [`Walker::walk_nested`].

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use brush_parser::ast::{self, SourceLocation};

use crate::expand;
use crate::level::Context;
use crate::opts;
use crate::parse::{self, ParseOutcome};
use crate::rules::RuleId;
use crate::word::{self, Arg, Noticed, Scope};
use crate::{Classifier, Settings};

/// How many lines may nest inside one another (`sh -c` in `$(…)` in …) and
/// how deep compound commands may nest before the walker stops descending.
pub const MAX_DEPTH: usize = 64;
/// How many simple commands one line may hold before it is too complex.
const MAX_COMMANDS: usize = 20_000;

/// One reason a rule applies to a part.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Finding {
    /// Index into the rule table.
    pub rule: usize,
    pub reason: String,
    /// A write outside the worktree, or one whose target cannot be worked out before
    /// running and so may lie there: an event the kernel fence decides under `fence run`,
    /// so `--mode auto` asks rather than runs it (SPEC §2, Modes).
    pub outside_write: bool,
}

/// One program position and what the analysis found there.
#[derive(Debug, Clone)]
pub struct Part {
    pub text: String,
    pub findings: Vec<Finding>,
}

/// The most of a command's text that names the parts of a nested line that is not text
/// of the line itself (its start, which is text of the line).
const STAND_IN_BYTES: usize = 1024;

/// The longest prefix of `text` of at most `max` bytes that ends on a character.
pub(crate) fn head_of(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `findings` with each repeat after its first occurrence dropped, in order.
fn without_repeats(mut findings: Vec<Finding>) -> Vec<Finding> {
    if findings.len() <= 8 {
        let mut i = 0;
        while i < findings.len() {
            if findings[..i].contains(&findings[i]) {
                findings.remove(i);
            } else {
                i += 1;
            }
        }
        return findings;
    }
    let mut seen = std::collections::HashSet::with_capacity(findings.len());
    let keep: Vec<bool> = findings.iter().map(|f| seen.insert(f)).collect();
    drop(seen);
    let mut keep = keep.into_iter();
    findings.retain(|_| keep.next().unwrap_or(false));
    findings
}

/// The working directory as the walk knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cwd {
    At(PathBuf),
    /// A `cd` went somewhere that cannot be worked out.
    Unknown,
    /// Where the judged process is, read when first needed ([`Walker::with_process_cwd`]).
    Process,
}

impl From<Option<PathBuf>> for Cwd {
    fn from(p: Option<PathBuf>) -> Cwd {
        p.map_or(Cwd::Unknown, Cwd::At)
    }
}

/// Reads the judged process's working directory (`None` when it cannot be read).
pub type CwdReader<'a> = &'a (dyn Fn() -> Option<PathBuf> + Sync);

/// What the shell will know while the line runs, as far as the line tells.
#[derive(Debug, Clone)]
pub struct State {
    pub cwd: Cwd,
    /// The working directory as bash keeps it (`$PWD`, links not resolved) after a `cd` of
    /// the line: `cd link/..` and a later `cd ..` go up from it, not from where the link
    /// leads. `None` where it is the resolved one.
    pub logical_cwd: Option<PathBuf>,
    /// Variables assigned in the line: `None` when the value is not known.
    pub vars: HashMap<String, Option<String>>,
    /// The current git branch: `None` when it cannot be known.
    pub branch: Option<String>,
    /// A virtualenv is active (from the environment or `source …/bin/activate`).
    pub venv: bool,
    /// `pushd` stack.
    pub dir_stack: Vec<Cwd>,
    /// Indexed arrays assigned in the line (`arr=(a b)`): `None` when an element is not
    /// known.
    pub arrays: HashMap<String, Option<Vec<String>>>,
    /// The positional parameters (`$0` first) of the shell string being walked, when
    /// the command that runs it gives them (`sh -c 'rm -rf "$1"' sh DIR`): `None` when
    /// they cannot be known (the line's own, a function's body, a string that shifts or
    /// sets them); an entry is `None` when its word is not known.
    pub positional: Option<Vec<Option<String>>>,
    /// Name references (`declare -n r=HOME`): expanding `$r` expands `$HOME`.
    pub namerefs: HashMap<String, String>,
    /// A variable whose name is not known was unset (`unset "$v"`): no value of the
    /// environment is known from there on.
    pub env_unknown: bool,
    /// Variables with the integer attribute (`declare -i n`): a value assigned to one is
    /// an arithmetic expression, evaluated as `let` evaluates it (`n='a[$(cmd)]'` runs
    /// cmd).
    pub integers: HashSet<String>,
    /// Variables the line set from a command substitution that prints a number
    /// (`n=$(wc -l < f)`): numbers in arithmetic whatever the files hold.
    pub numeric: HashSet<String>,
}

/// How a simple command is connected to what is around it.
#[derive(Debug, Clone, Default)]
pub struct CmdIo {
    /// stdin comes from a pipe (`… | cmd`).
    pub stdin_pipe: bool,
    /// The body of a here-document on stdin.
    pub heredoc: Option<String>,
    /// The word of a here-string on stdin.
    pub herestring: Option<Arg>,
    /// What arrives through the pipe on stdin, when the line says it
    /// (`cat <<EOF | apply_patch`, `echo / | xargs rm -rf`).
    pub piped: Option<String>,
    /// What `find` writes into the pipe on stdin, each name it finds standing as
    /// `find -exec` names it (`START/{}`), one a line: `find /etc | xargs rm` removes in
    /// /etc.
    pub piped_found: Option<String>,
}

/// How many times a line's lists are walked again from where a failed `cd` would leave them.
const MAX_CD_FORKS: usize = 8;

pub struct Walker<'a> {
    pub cls: &'a Classifier,
    pub req: &'a Settings,
    pub ctx: Context,
    pub state: State,
    pub parts: Vec<Part>,
    /// Findings of the simple command being judged.
    pub cur: Vec<Finding>,
    /// The command being judged writes (for plan mode).
    pub cur_writes: bool,
    /// The command being judged talks to the network.
    pub cur_network: bool,
    /// The command being judged is a test runner or type checker.
    pub cur_test_runner: bool,
    depth: usize,
    commands: usize,
    /// Functions defined in the line.
    pub functions: HashSet<String>,
    /// The body of each function defined in the line, as written: judged again where the
    /// function is called with arguments (`f(){ rm -rf "$1"; }; f /`).
    pub function_bodies: HashMap<String, String>,
    /// The names each function defined in the line calls, each with whether the call starts
    /// a process of its own (in a pipeline or in the background): a cycle through such a
    /// call is a fork bomb.
    pub function_spawns: HashMap<String, Vec<(String, bool)>>,
    /// The variables each function defined in the line sets (an empty name: any).
    pub function_sets: HashMap<String, Vec<String>>,
    /// The functions whose body is being judged for a call (a function calling itself
    /// is judged once).
    pub calling: Vec<String>,
    /// Aliases the line defines (`alias g=git`), with their values (`None` when not
    /// known): a later command word of that name runs the value (bash expands aliases in
    /// a script once `expand_aliases` is on, zsh always; the line is taken to).
    pub aliases: HashMap<String, Option<String>>,
    /// The aliases being expanded (an alias whose value starts with its own name, `alias
    /// ls='ls -la'`, is expanded once).
    pub expanding: Vec<String>,
    /// Settings that decide where a push goes written to the repository's config earlier
    /// in the line (`git config remote.origin.push HEAD:main`), with their values when
    /// known. Kept on disk, they outlive subshells and pipelines.
    pub git_settings: Vec<(String, Option<String>)>,
    /// Links the line makes (`ln -s TARGET NAME`, `cp -s`), by the link's absolute path:
    /// later words are resolved through them as through links on disk. Kept on disk,
    /// they outlive subshells.
    pub links: HashMap<PathBuf, PathBuf>,
    /// Files the line writes through stdout (`echo 'rm -rf /' > x.sh`, `cat > x.sh <<EOF`),
    /// by absolute path, with what they then hold when the line shows it: a script the
    /// line runs afterwards (`sh x.sh`, `. ./x.sh`, `./x.sh`) is judged by what it holds.
    /// Kept on disk, they outlive subshells.
    pub scripts_written: HashMap<PathBuf, Option<String>>,
    /// Files a download in the line writes (`curl -o i.sh URL`, `wget URL/i.sh`,
    /// `curl URL > i.sh`): running one later in the line (`sh i.sh`, `./i.sh`) runs what
    /// the network sent, as `curl URL | sh` does.
    pub downloads: HashSet<PathBuf>,
    /// The next pipeline walked reads a pipe (a shell string run by a
    /// command whose stdin is a pipe: `curl … | su -c sh`).
    pub stdin_pipe_in: bool,
    /// Inside the body of a `for` loop whose words are all known and were judged as paths
    /// (`for f in src/*.rs`): the loop variable is one of them, though its value is not
    /// worked out, so a read of it is not a read of an unknown path.
    pub in_loop_over_judged: usize,
    /// Every pipeline walked reads the pipe of an enclosing command (the
    /// body of `… | { sh; }`, the list of `>(sh)`).
    inherit_pipe: bool,
    /// How many `cd`/`pushd`/`popd` were judged so far.
    pub dir_changes: usize,
    /// The last `cd` walked: the working directory before it, and whether its target is
    /// not known to be a folder (so that it may fail, and what follows it run where it was).
    pub last_cd: Option<(Cwd, bool)>,
    /// Other folders the last `cd` may have gone to (where its path leads without bash's
    /// logical `..`, a `cdable_vars` variable's folder): what follows is judged from each.
    pub cd_alternatives: Vec<PathBuf>,
    /// How many times the rest of a list was walked from such another folder.
    alt_forks: usize,
    /// How deep the walk is in lists (a list in a brace group, a subshell, a body).
    list_depth: usize,
    /// How many times the rest of a list was walked again from where a `cd` that may fail
    /// left it (bounded: each doubles the walk).
    cd_forks: usize,
    /// How many `cd`s to a folder not known to exist were walked, at any depth.
    pub uncertain_cds: usize,
    /// Variables a test before the command proved not empty (`[ -n "$D" ] && …`, `if [ -d
    /// "$D" ]; then …`, `: "${D:?}"; …`): a deletion of `"$D"/x` is not of `/x` then.
    pub guarded: Vec<String>,
    /// Folders an earlier `mkdir` of the line makes: a `cd` into one is not taken to fail.
    pub made_dirs: Vec<PathBuf>,
    /// Folders an earlier `rm -r` of the line removes: a `cd` into one may fail.
    pub removed_dirs: Vec<PathBuf>,
    /// The command being walked runs whatever came before it in the line: first in its
    /// and-or list, in the foreground, outside every `if`, loop, `case` and function body
    /// (only such a `mkdir` counts as making its folder).
    pub runs_surely: bool,
    /// How many `if`, loop, `case` and function bodies the walk is in.
    cond_depth: usize,
    /// Functions defined in the line whose body changes directory.
    pub functions_changing_dir: HashSet<String>,
    /// What the line reads that is a credential, for `secret.exfiltrate`.
    pub secret_read: Option<String>,
    /// Words that may name a credential through a symlink, with the directory each is
    /// taken from: resolved only when the line reaches the network.
    pub secret_candidates: Vec<(PathBuf, String)>,
    /// Parts that run a network program.
    pub network_parts: Vec<usize>,
    /// The sources being walked, outermost first: parts are named by the
    /// text of the line as written, sliced at the parser's positions.
    sources: Vec<Source>,
    /// The simple command being judged, as written: what stands for the
    /// commands of a nested line whose text is not text of the line.
    pub(crate) cmd_text: Option<String>,
    /// What the simple command just walked writes to stdout when the line
    /// says it (`cat <<EOF`, `echo WORDS`): the next element of a pipeline
    /// reads it.
    stdout_text: Option<String>,
    /// What the simple command just walked writes to stdout when it is `find` printing
    /// the names it finds ([`CmdIo::piped_found`]).
    stdout_found: Option<String>,
    /// The command being walked writes into a pipe (so `stdout_text` matters).
    stdout_piped: bool,
    /// Reads [`Cwd::Process`], and what it read. Most execs are judged without their
    /// working directory (`cc -c x.c`, `/bin/true`), and reading another process's is a
    /// /proc lookup that costs more than the rest of the judgement.
    process_cwd: Option<CwdReader<'a>>,
    process_cwd_read: OnceCell<Option<PathBuf>>,
}

/// One source the walker parses: the line, or a line nested in it.
/// Where `text` holds `((`, then `expr` (blanks around it allowed), then `))`: an
/// arithmetic command as bash reads it, as written.
fn written_arithmetic<'t>(text: &'t str, expr: &str) -> Option<&'t str> {
    text.match_indices("((").find_map(|(at, _)| {
        let rest = text[at + 2..].trim_start();
        let after = rest.strip_prefix(expr)?;
        let close = after.trim_start();
        close
            .starts_with("))")
            .then(|| &text[at..text.len() - close.len() + 2])
    })
}

/// The text of a pipeline that is one simple command or one `[[ … ]]` test, not negated:
/// the only ones that may be guards (rendering anything larger costs its whole tree).
fn single_simple(p: &ast::Pipeline) -> Option<String> {
    match p.seq.as_slice() {
        [ast::Command::Simple(c)] if !p.bang => Some(c.to_string()),
        // Written without its brackets.
        [ast::Command::ExtendedTest(t, None)] if !p.bang => Some(format!("[[ {t} ]]")),
        _ => None,
    }
}

/// [`test_guard`] of a pipeline.
fn pipeline_guard(p: &ast::Pipeline) -> Option<String> {
    single_simple(p).and_then(|t| test_guard(&t))
}

/// A pipeline that changes no variable and leaves a guard standing: a test, `true` or `:`
/// with no substitution in it.
fn pipeline_guard_free(p: &ast::Pipeline) -> bool {
    single_simple(p).is_some_and(|t| {
        let mut words = t.split_whitespace();
        let first = words.next().unwrap_or("");
        let sets_a_variable = first == "printf" && words.next() == Some("-v");
        matches!(
            first,
            "[" | "[[" | "test" | "true" | ":" | "echo" | "printf"
        ) && !sets_a_variable
            && !t.contains("$(")
            && !t.contains('`')
            && !t.contains(['>', '<'])
    })
}

/// The variable an and-or list proves not empty for the rest of its list, by stopping the
/// shell where it is empty: `: "${D:?}"`, `[ -z "$D" ] && exit 1`, `[ -n "$D" ] || exit`,
/// `test -n "$D" || return 1`.
fn list_guard(and_or: &ast::AndOrList) -> Option<String> {
    if let ([ast::Command::Compound(ast::CompoundCommand::IfClause(i), None)], []) =
        (and_or.first.seq.as_slice(), and_or.additional.as_slice())
    {
        return if_guard(i);
    }
    let first = single_simple(&and_or.first)?;
    match and_or.additional.as_slice() {
        [] => abort_guard(first),
        [next] => {
            let (or, p) = match next {
                ast::AndOr::And(p) => (false, p),
                ast::AndOr::Or(p) => (true, p),
            };
            let stops = stops_the_shell(p);
            if !stops {
                return None;
            }
            if or {
                test_guard(&first)
            } else {
                empty_test(&first)
            }
        }
        _ => None,
    }
}

/// A pipeline that ends the shell (or the function): `exit`, `return`, or a group whose
/// last command is one (`{ echo "D unset" >&2; exit 1; }`).
fn stops_the_shell(p: &ast::Pipeline) -> bool {
    let ends = |t: &str| matches!(t.split_whitespace().next(), Some("exit" | "return"));
    match p.seq.as_slice() {
        [ast::Command::Simple(c)] if !p.bang => ends(&c.to_string()),
        [ast::Command::Compound(ast::CompoundCommand::BraceGroup(g), None)] if !p.bang => {
            g.list.0.last().is_some_and(|item| {
                item.0.additional.is_empty()
                    && single_simple(&item.0.first).is_some_and(|t| ends(&t))
            })
        }
        _ => false,
    }
}

/// The variable an `if` proves not empty for the rest of its list: `if [ -z "$D" ]; then
/// …; exit 1; fi` with no `else`.
fn if_guard(i: &ast::IfClauseCommand) -> Option<String> {
    if i.elses.as_ref().is_some_and(|e| !e.is_empty()) {
        return None;
    }
    let [item] = i.condition.0.as_slice() else {
        return None;
    };
    if !item.0.additional.is_empty() {
        return None;
    }
    let cond = single_simple(&item.0.first)?;
    let var = empty_test(&cond)?;
    let last = i.then.0.last()?;
    let ends = last.0.additional.is_empty()
        && single_simple(&last.0.first)
            .is_some_and(|t| matches!(t.split_whitespace().next(), Some("exit" | "return")));
    ends.then_some(var)
}

/// The variable a test proves empty when it succeeds: `[ -z "$D" ]`, `test -z "$D"`.
fn empty_test(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let operand = match words.as_slice() {
        ["[", "-z", x, "]"] | ["test", "-z", x] if x.starts_with('"') => x,
        ["[[", "-z", x, "]]"] => x,
        _ => return None,
    };
    variable_of(operand)
}

/// The variable a test command proves not empty when it succeeds: `[ -n "$D" ]`, `[ "$D" ]`,
/// `test -d "$D"`, `[[ -e $D ]]` (every unary file test is false for an empty name).
fn test_guard(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    // In `[` and `test` an unquoted empty operand vanishes, and `[ -n ]` is true.
    let (inner, quoted): (&[&str], bool) = match words.as_slice() {
        ["[[", inner @ .., "]]"] => (inner, false),
        ["[", inner @ .., "]"] | ["test", inner @ ..] => (inner, true),
        _ => return None,
    };
    let operand = match inner {
        [op, x]
            if matches!(
                *op,
                "-n" | "-d" | "-e" | "-f" | "-s" | "-r" | "-w" | "-x" | "-L" | "-h" | "-a"
            ) =>
        {
            x
        }
        [x] if !x.starts_with('-') => x,
        _ => return None,
    };
    if quoted && !operand.starts_with('"') {
        return None;
    }
    variable_of(operand)
}

/// The variable of `: "${D:?}"` (or `: ${D:?message}`), which stops a shell running a line
/// where D is unset or empty.
fn abort_guard(text: String) -> Option<String> {
    let rest = text.trim().strip_prefix(':')?.trim();
    let rest = rest.trim_matches('"');
    let inner = rest.strip_prefix("${")?.strip_suffix('}')?;
    let (name, tail) =
        inner.split_at(inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?);
    (!name.is_empty() && tail.starts_with(":?")).then(|| name.to_string())
}

/// The variable a word is, whole: `$D`, `"$D"`, `${D}`, `"${D}"`.
fn variable_of(word: &str) -> Option<String> {
    let w = word.trim_matches('"').strip_prefix('$')?;
    let w = w
        .strip_prefix('{')
        .and_then(|w| w.strip_suffix('}'))
        .unwrap_or(w);
    (!w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| w.to_string())
}

/// Whether `text` holds a `)` followed, after blanks or line breaks, by another `)`: the
/// end of two subshells `( ( … ) )`, which bash tells from an arithmetic `(( … ))` by it.
fn closing_parentheses_apart(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b')' && {
            let rest = &b[i + 1..];
            let blanks = rest
                .iter()
                .take_while(|c| c.is_ascii_whitespace() || **c == b'\\')
                .count();
            blanks > 0 && rest.get(blanks) == Some(&b')')
        }
    })
}

struct Source {
    text: String,
    /// Byte offset of each character, when the text is not ASCII (the
    /// parser counts positions in characters).
    char_bytes: Option<Vec<usize>>,
    /// The text is a substring of the line as written, so are its slices.
    verbatim: bool,
    /// For a source that is not text of the line (a `sh -c` string after
    /// unquoting): the enclosing command as written.
    stand_in: Option<String>,
}

impl Source {
    fn new(text: &str, verbatim: bool, stand_in: Option<String>) -> Source {
        let char_bytes = (!text.is_ascii()).then(|| {
            text.char_indices()
                .map(|(i, _)| i)
                .chain(std::iter::once(text.len()))
                .collect()
        });
        Source {
            text: text.to_string(),
            char_bytes,
            verbatim,
            stand_in,
        }
    }

    /// The byte offset of character position `c`.
    fn byte(&self, c: usize) -> Option<usize> {
        match &self.char_bytes {
            None => (c <= self.text.len()).then_some(c),
            Some(v) => v.get(c).copied(),
        }
    }
}

/// Character positions `[start, end)` of a parser span.
type Bounds = (usize, usize);

fn span_bounds(s: &brush_parser::SourceSpan) -> Bounds {
    (s.start.index, s.end.index)
}

fn join_bounds(a: Option<Bounds>, b: Option<Bounds>) -> Option<Bounds> {
    match (a, b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, b) => a.or(b),
    }
}

fn word_bounds(w: &ast::Word) -> Option<Bounds> {
    w.loc.as_ref().map(span_bounds)
}

/// Where a redirection's word lies (the parser keeps no position for the
/// operator itself, see [`Walker::written`]).
fn redirect_bounds(r: &ast::IoRedirect) -> Option<Bounds> {
    match r {
        ast::IoRedirect::File(_, _, target) => match target {
            ast::IoFileRedirectTarget::Filename(w) | ast::IoFileRedirectTarget::Duplicate(w) => {
                word_bounds(w)
            }
            ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => Some(span_bounds(&sub.loc)),
            ast::IoFileRedirectTarget::Fd(_) => None,
        },
        ast::IoRedirect::OutputAndError(w, _) | ast::IoRedirect::HereString(_, w) => word_bounds(w),
        ast::IoRedirect::HereDocument(_, doc) => word_bounds(&doc.here_end),
    }
}

fn redirects_bounds(r: &ast::RedirectList) -> Option<Bounds> {
    r.0.iter().map(redirect_bounds).fold(None, join_bounds)
}

fn item_bounds(item: &ast::CommandPrefixOrSuffixItem) -> Option<Bounds> {
    match item {
        ast::CommandPrefixOrSuffixItem::Word(w) => word_bounds(w),
        ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
            join_bounds(Some(span_bounds(&a.loc)), word_bounds(w))
        }
        ast::CommandPrefixOrSuffixItem::IoRedirect(r) => redirect_bounds(r),
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => Some(span_bounds(&sub.loc)),
    }
}

fn simple_bounds(sc: &ast::SimpleCommand) -> Option<Bounds> {
    sc.prefix
        .iter()
        .flat_map(|p| p.0.iter())
        .map(item_bounds)
        .chain(std::iter::once(
            sc.word_or_name.as_ref().and_then(word_bounds),
        ))
        .chain(sc.suffix.iter().flat_map(|s| s.0.iter()).map(item_bounds))
        .fold(None, join_bounds)
}

impl Scope for Walker<'_> {
    fn var(&self, name: &str) -> Option<String> {
        let name = self.referenced(name);
        match self.state.vars.get(name) {
            Some(v) => v.clone(),
            // fence run sets TMPDIR to the session's temp directory for everything in the
            // sandbox, whatever fence itself was started with.
            None if self.state.env_unknown => None,
            // bash and dash set IFS at start and take none from the environment: until
            // the line sets it, it is space, tab and newline.
            None if name == "IFS" => Some(" \t\n".to_string()),
            None if name == "TMPDIR" && self.cls.session_tmp.is_some() => self
                .cls
                .session_tmp
                .as_ref()
                .map(|t| t.display().to_string()),
            None => self.req.env.get(name).cloned(),
        }
    }
    fn numeric(&self, name: &str) -> bool {
        let name = self.referenced(name);
        self.state.numeric.contains(name)
            || (word::NUMERIC_VARIABLES.contains(&name) && !self.state.vars.contains_key(name))
    }
    fn array(&self, name: &str) -> Option<Vec<String>> {
        match self.state.arrays.get(name) {
            Some(elements) => elements.clone(),
            // A scalar is an array of one.
            None => self.var(name).map(|v| vec![v]),
        }
    }
    fn home(&self) -> Option<String> {
        match self.state.vars.get("HOME") {
            Some(v) => v.clone(),
            None => self.cls.home.as_ref().map(|h| h.display().to_string()),
        }
    }
    fn cwd(&self) -> Option<String> {
        self.cwd_path().map(|c| c.display().to_string())
    }
    fn set_by_environment(&self, name: &str) -> bool {
        !self.state.vars.contains_key(name)
            && self.req.env.contains_key(name)
            && !(name == "TMPDIR" && self.cls.session_tmp.is_some())
    }
    fn positional(&self, n: usize) -> Option<String> {
        match &self.state.positional {
            // Past the last one: the shell expands it to nothing.
            Some(params) => params.get(n).cloned().unwrap_or(Some(String::new())),
            None => None,
        }
    }
    fn all_positional(&self) -> Option<Vec<String>> {
        self.state
            .positional
            .as_ref()?
            .iter()
            .skip(1)
            .cloned()
            .collect()
    }
}

/// Whether the flags of `declare`/`typeset`/`local` give the integer attribute
/// (`Some(true)`: `-i`, `-ix`), take it away (`Some(false)`: `+i`) or leave it.
fn integer_attribute(args: &[Arg]) -> Option<bool> {
    let mut on = None;
    for a in args.iter().skip(1) {
        let t = a.text.as_str();
        if t == "--" {
            break;
        }
        if let Some(flags) = t.strip_prefix(['-', '+'])
            && !flags.contains('=')
            && flags.contains('i')
        {
            on = Some(t.starts_with('-'));
        }
    }
    on
}

/// Variables that change which program runs or how a shell behaves: setting
/// one is never harmless.
/// A shell variable's name: a letter or `_`, then letters, digits and `_`.
fn is_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_control_variable(name: &str) -> bool {
    matches!(
        name,
        "PATH"
            | "IFS"
            | "ENV"
            | "BASH_ENV"
            | "PROMPT_COMMAND"
            | "PS4"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "CDPATH"
            | "HOME"
            | "EDITOR"
            | "VISUAL"
            | "PAGER"
            | "SHELL"
    ) || name.starts_with("LD_")
        || name.starts_with("GIT_")
        || name.starts_with("BASH_FUNC_")
        || name.ends_with("_OPTIONS")
        || name == "PYTHONSTARTUP"
        || name == "PERL5OPT"
        || name == "RUBYOPT"
        // rg reads its flags from this file first: `--pre=./x` in it runs a program.
        || name == "RIPGREP_CONFIG_PATH"
}

/// Variables whose value is a program other programs run with a shell:
/// git's pager, editor and ssh command, the ones git falls back to, and the
/// askpass helpers. `GIT_PAGER='rm -rf ~' git log` runs `rm -rf ~`.
fn is_program_variable(name: &str) -> bool {
    matches!(
        name,
        "GIT_PAGER"
            | "PAGER"
            | "MANPAGER"
            // Other programs' pagers, run through a shell as PAGER is.
            | "GH_PAGER"
            | "SYSTEMD_PAGER"
            | "AWS_PAGER"
            | "PSQL_PAGER"
            | "BAT_PAGER"
            | "DELTA_PAGER"
            | "GLAB_PAGER"
            | "GIT_EDITOR"
            | "GIT_SEQUENCE_EDITOR"
            | "EDITOR"
            | "VISUAL"
            | "GIT_SSH"
            | "GIT_SSH_COMMAND"
            | "GIT_ASKPASS"
            | "SSH_ASKPASS"
            | "SUDO_ASKPASS"
            | "GIT_PROXY_COMMAND"
            | "GIT_EXTERNAL_DIFF"
            | "BROWSER"
            // Builds run these: the compilers and tools make, cargo and configure
            // scripts call, and make's shell.
            | "CC"
            | "CXX"
            | "CPP"
            | "LD"
            | "AR"
            | "RUSTC"
            | "RUSTDOC"
            | "RUSTC_WRAPPER"
            | "RUSTC_WORKSPACE_WRAPPER"
            | "CARGO_BUILD_RUSTC"
            | "CARGO_BUILD_RUSTC_WRAPPER"
            | "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"
            | "MAKE"
            | "SHELL"
            // less runs its input preprocessor through a shell.
            | "LESSOPEN"
            | "LESSCLOSE"
    ) || (name.starts_with("CARGO_TARGET_")
        && (name.ends_with("_RUNNER") || name.ends_with("_LINKER")))
}

/// The shell commands the `+` start-up commands of less options (`LESS`, or less's own
/// `+cmd` arguments) run: what follows a `!` in one, to its end of line.
pub(crate) fn less_shell_commands(options: &str) -> Vec<String> {
    // A `+` begins start-up commands wherever it stands in the options, bundled after
    // other flags too (`-R+!cmd`); a `!` in them runs the rest of the line through a
    // shell. Read wherever a `!` follows a `+` (stricter than less, never laxer).
    let mut out = Vec::new();
    let mut rest = options;
    while let Some(at) = rest.find('+') {
        let command = &rest[at + 1..];
        let end = command.find(['\n', '\r']).unwrap_or(command.len());
        let token = &command[..end];
        if let Some(bang) = token.find('!') {
            let shell = token[bang + 1..].trim();
            if !shell.is_empty() {
                out.push(shell.to_string());
            }
            rest = &command[end..];
            continue;
        }
        rest = command;
    }
    out
}

/// A program variable set to a program that does nothing with what it is given but show it
/// or take it as it is: `GIT_PAGER=cat`, `PAGER=` (none), `GIT_EDITOR=true`,
/// `GIT_SEQUENCE_EDITOR=:`, the everyday way to keep git from waiting on a pager or an
/// editor. Nothing else runs, so nothing is asked about the setting itself.
fn names_an_inert_program(name: &str, value: &Arg) -> bool {
    is_program_variable(name)
        && value.known
        && matches!(
            value.text.trim(),
            "" | "cat" | "/bin/cat" | "/usr/bin/cat" | "true" | "/bin/true" | "/usr/bin/true" | ":"
        )
}

/// Variables bash expands again each time it shows them (`PS4` on every traced line
/// under `set -x`, the prompts of an interactive shell): a substitution in the value
/// runs then.
fn is_prompt_variable(name: &str) -> bool {
    matches!(name, "PS0" | "PS1" | "PS2" | "PS4")
}

impl<'a> Walker<'a> {
    /// Judges the program a variable names (`GIT_PAGER='…'`, `export
    /// EDITOR=…`) as the string a shell runs. A value not known before
    /// running stays with the rest of the command (asked, as setting such a
    /// variable is).
    /// `NAME=value` in a command's own environment (`NAME=v prog`, `env NAME=v prog`): a
    /// variable that changes how programs are found or run is asked about, and one that
    /// names a program has its value judged as the string a shell runs.
    pub(crate) fn judge_command_assignment(&mut self, name: &str, value: &Arg) {
        if value.known {
            self.evaluate_if_integer(name, &value.text);
        }
        if is_control_variable(name) && !names_an_inert_program(name, value) {
            self.find(
                RuleId::DefaultUnknown,
                format!("sets {name} for the command, which changes how programs are found or run"),
            );
        }
        self.judge_program_variable(name, value);
    }

    pub(crate) fn judge_program_variable(&mut self, name: &str, value: &Arg) {
        // git appends its traces to the file a `GIT_TRACE*` variable names by an absolute
        // path (a number names a descriptor, a boolean stderr; a relative path is ignored).
        if name.starts_with("GIT_TRACE") && value.known_prefix().starts_with('/') {
            self.check_write_target(value, true, name);
        }
        if is_prompt_variable(name) && value.known {
            let mut noticed = Noticed::default();
            word::scan_substitutions(&value.text, &mut noticed);
            self.walk_noticed(noticed);
            return;
        }
        // `LESS='+!cmd'`: less runs its `+` option's commands as it starts, `!` through a
        // shell (git's pager too: `LESS=$'+!rm -rf ~\n' git log`).
        if name == "LESS" && value.known {
            for command in less_shell_commands(&value.text) {
                let io = CmdIo::default();
                let inv = crate::command::Invocation {
                    io: &io,
                    procsub_network: false,
                    subs_network: false,
                };
                self.shell_string(&Arg::literal(command), &inv);
            }
            return;
        }
        let is_program = is_program_variable(name) || name == "PROMPT_COMMAND";
        if !is_program
            || !value.known
            || value.text.trim().is_empty()
            || names_an_inert_program(name, value)
        {
            return;
        }
        // `LESSOPEN='|cmd %s'`: the bars say how less reads the command's output.
        let value = if name.starts_with("LESS") {
            Arg {
                text: value.text.trim_start_matches('|').to_string(),
                ..value.clone()
            }
        } else {
            value.clone()
        };
        let io = CmdIo::default();
        let inv = crate::command::Invocation {
            io: &io,
            procsub_network: false,
            subs_network: false,
        };
        self.shell_string(&value, &inv);
    }

    /// Sets a shell variable for what follows in the line (`None`: to a value not known).
    /// A scalar assignment replaces an array's first element; the array is not followed
    /// further.
    /// The variable `name` stands for: through name references (`declare -n`), a few
    /// levels deep as bash follows them.
    pub(crate) fn referenced<'n>(&'n self, mut name: &'n str) -> &'n str {
        for _ in 0..8 {
            match self.state.namerefs.get(name) {
                Some(target) => name = target,
                None => break,
            }
        }
        name
    }

    /// Sets `name` (through a name reference, the variable it names: `r=x` after
    /// `declare -n r=d` sets `d`).
    pub(crate) fn set_var(&mut self, name: &str, value: Option<String>) {
        // A value set since a test proved it not empty: the test no longer says.
        self.guarded.retain(|g| g != name);
        let name = self.referenced(name).to_string();
        self.guarded.retain(|g| *g != name);
        if let Some(elements) = self.state.arrays.get_mut(&name) {
            *elements = None;
        }
        self.state.numeric.remove(&name);
        // An integer variable holds the number its value evaluates to: known when the
        // value is one already.
        let value = match value {
            Some(v) if self.evaluate_if_integer(&name, &v) => {
                word::integer(&v).map(|n| n.to_string())
            }
            v => v,
        };
        self.state.vars.insert(name, value);
    }

    /// A value assigned to a variable with the integer attribute is evaluated as an
    /// arithmetic expression, as `let` evaluates it: its subscripts expand, and so do
    /// those in the values of the variables it names. Returns whether `name` is one.
    fn evaluate_if_integer(&mut self, name: &str, value: &str) -> bool {
        if !self.state.integers.contains(self.referenced(name)) {
            return false;
        }
        let mut noticed = Noticed::default();
        word::scan_substitutions(value, &mut noticed);
        word::scan_variable_values(value, self, &mut noticed);
        self.walk_noticed(noticed);
        true
    }

    /// `declare -i NAME…`, `typeset +i NAME…`, `local -i …` (a `-` flag holding `i` gives
    /// the attribute, a `+` one takes it away): the names that have it from here on.
    fn declare_integers(&mut self, args: &[Arg]) {
        let Some(on) = integer_attribute(args) else {
            return;
        };
        for a in &args[1..] {
            let name = a.text.split_once('=').map_or(a.text.as_str(), |x| x.0);
            if !is_name(name) {
                continue;
            }
            let name = self.referenced(name).to_string();
            if on {
                self.state.integers.insert(name);
            } else {
                self.state.integers.remove(&name);
            }
        }
    }

    /// A walker starting in `cwd`; `branch` overrides the session's current
    /// branch (the exec context reads it per exec).
    pub fn new(
        cls: &'a Classifier,
        req: &'a Settings,
        ctx: Context,
        cwd: Option<PathBuf>,
        branch: Option<Option<String>>,
    ) -> Self {
        let venv = ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .iter()
            .any(|v| req.env.get(*v).is_some_and(|s| !s.is_empty()));
        Walker {
            cls,
            req,
            ctx,
            state: State {
                cwd: cwd.into(),
                vars: HashMap::new(),
                branch: branch.unwrap_or_else(|| req.current_branch.clone()),
                venv,
                dir_stack: Vec::new(),
                arrays: HashMap::new(),
                positional: None,
                namerefs: HashMap::new(),
                env_unknown: false,
                integers: HashSet::new(),
                numeric: HashSet::new(),
                logical_cwd: None,
            },
            parts: Vec::new(),
            cur: Vec::new(),
            cur_writes: false,
            cur_network: false,
            cur_test_runner: false,
            depth: 0,
            commands: 0,
            functions: HashSet::new(),
            function_bodies: HashMap::new(),
            function_spawns: HashMap::new(),
            function_sets: HashMap::new(),
            calling: Vec::new(),
            aliases: HashMap::new(),
            expanding: Vec::new(),
            git_settings: Vec::new(),
            links: HashMap::new(),
            scripts_written: HashMap::new(),
            downloads: HashSet::new(),
            functions_changing_dir: HashSet::new(),
            dir_changes: 0,
            last_cd: None,
            cd_alternatives: Vec::new(),
            alt_forks: 0,
            list_depth: 0,
            cd_forks: 0,
            uncertain_cds: 0,
            guarded: Vec::new(),
            made_dirs: Vec::new(),
            removed_dirs: Vec::new(),
            runs_surely: false,
            cond_depth: 0,
            stdin_pipe_in: false,
            in_loop_over_judged: 0,
            inherit_pipe: false,
            secret_read: None,
            secret_candidates: Vec::new(),
            network_parts: Vec::new(),
            sources: Vec::new(),
            cmd_text: None,
            stdout_text: None,
            stdout_found: None,
            stdout_piped: false,
            process_cwd: None,
            process_cwd_read: OnceCell::new(),
        }
    }

    /// Starts the walk in the judged process's working directory, read by `read` the
    /// first time the judgement needs it (and at most once).
    pub fn with_process_cwd(mut self, read: CwdReader<'a>) -> Self {
        self.state.cwd = Cwd::Process;
        self.process_cwd = Some(read);
        self
    }

    /// Restores the state saved before a subshell, a pipeline or a body walked out of
    /// order. The repository's current branch is kept: a checkout there moved HEAD on disk
    /// (`(git checkout main); git push`).
    pub(crate) fn restore_state(&mut self, saved: State) {
        let branch = std::mem::take(&mut self.state.branch);
        self.state = saved;
        self.state.branch = branch;
    }

    /// Starts the walk in `cwd`.
    pub fn with_cwd(mut self, cwd: PathBuf) -> Self {
        self.state.cwd = Cwd::At(cwd);
        self
    }

    /// The working directory, when it is known.
    pub fn cwd_path(&self) -> Option<PathBuf> {
        self.known(&self.state.cwd)
    }

    /// Where `path` starts: `/` when it is absolute, else the working directory (read only
    /// then); `None` when that is not known.
    pub fn start_of(&self, path: &std::path::Path) -> Option<PathBuf> {
        if path.is_absolute() {
            Some(PathBuf::from("/"))
        } else {
            self.cwd_path()
        }
    }

    /// `cwd` as a path, when it is known ([`Cwd::Process`] is read here).
    pub fn known(&self, cwd: &Cwd) -> Option<PathBuf> {
        match cwd {
            Cwd::At(p) => Some(p.clone()),
            Cwd::Unknown => None,
            Cwd::Process => self
                .process_cwd_read
                .get_or_init(|| self.process_cwd.and_then(|read| read()))
                .clone(),
        }
    }

    /// Whether rule `id` can decide anything in this walk's context: a finding of a rule
    /// the context does not judge is dropped, so work that could only find it is skipped.
    pub fn judges(&self, id: RuleId) -> bool {
        self.cls
            .table()
            .rules
            .get(id as usize)
            .is_none_or(|r| r.contexts.contains(self.ctx))
    }

    /// Records that rule `id` applies to the command being judged.
    pub fn find(&mut self, id: RuleId, reason: impl Into<String>) {
        let f = Finding {
            rule: id as usize,
            reason: reason.into(),
            outside_write: false,
        };
        // Repeats are dropped when the part is closed ([`Self::push_part`]): looking
        // each one up here made a command with thousands of arguments quadratic.
        self.cur.push(f);
    }

    /// [`Self::find`] for a write outside the worktree ([`Finding::outside_write`]).
    pub fn find_outside_write(&mut self, id: RuleId, reason: impl Into<String>) {
        let f = Finding {
            rule: id as usize,
            reason: reason.into(),
            outside_write: true,
        };
        // Repeats are dropped when the part is closed ([`Self::push_part`]): looking
        // each one up here made a command with thousands of arguments quadratic.
        self.cur.push(f);
    }

    /// Adds a part that stands for the whole (sub)line, for findings that
    /// belong to no single command (a parse error, too much nesting).
    pub fn line_part(&mut self, text: &str, id: RuleId, reason: impl Into<String>) {
        self.parts.push(Part {
            text: text.to_string(),
            findings: vec![Finding {
                rule: id as usize,
                reason: reason.into(),
                outside_write: false,
            }],
        });
    }

    /// Closes the command being judged as a part named `text`.
    pub fn push_part(&mut self, text: String) {
        let findings = without_repeats(std::mem::take(&mut self.cur));
        let network = std::mem::take(&mut self.cur_network);
        let writes = std::mem::take(&mut self.cur_writes);
        let test_runner = std::mem::take(&mut self.cur_test_runner);
        let mut part = Part { text, findings };
        if network {
            self.network_parts.push(self.parts.len());
        }
        if self.req.mode == crate::Mode::Plan && self.ctx == Context::Line {
            if writes {
                part.findings.push(Finding {
                    rule: RuleId::PlanWrite as usize,
                    reason: "plan mode: this command writes".into(),
                    outside_write: false,
                });
            } else if test_runner {
                part.findings.push(Finding {
                    rule: RuleId::PlanTestRunner as usize,
                    reason: "plan mode: test runners and type checkers run".into(),
                    outside_write: false,
                });
            }
        }
        self.parts.push(part);
    }

    /// Parses `src` and walks it as a line of its own (the string of `sh -c`,
    /// a command substitution, a here-document fed to a shell). The command
    /// being judged is set aside meanwhile. Returns whether the nested line
    /// runs a network program.
    pub fn walk_nested(&mut self, src: &str) -> bool {
        let cur = std::mem::take(&mut self.cur);
        let flags = (
            std::mem::take(&mut self.cur_writes),
            std::mem::take(&mut self.cur_network),
            std::mem::take(&mut self.cur_test_runner),
        );
        let before = self.network_parts.len();
        self.walk_source(src);
        let network = self.network_parts.len() > before;
        self.cur = cur;
        (self.cur_writes, self.cur_network, self.cur_test_runner) = flags;
        network
    }

    /// Parses and walks one line (or nested line) of source.
    pub fn walk_source(&mut self, src: &str) {
        let source = match self.sources.last() {
            None => Source::new(src, true, None),
            Some(parent) => {
                // A nested line is text of the line when it occurs in its
                // parent as written (a `$(…)`, a single-quoted `sh -c`
                // string); otherwise (unquoting changed it) its commands are
                // named by the command that runs it.
                let verbatim = parent.verbatim
                    && parent.text.len() <= parse::INLINE_BYTES
                    && parent.text.contains(src);
                // Read only where the source is not verbatim. At most
                // [`STAND_IN_BYTES`] of the command: each part of the nested line
                // is named by it, and a command of thousands of substitutions named
                // each of its thousands of parts by the whole of it.
                let stand_in = if verbatim {
                    None
                } else if parent.verbatim {
                    Some(match &self.cmd_text {
                        Some(text) => head_of(text, STAND_IN_BYTES).to_string(),
                        None => self.source_excerpt(),
                    })
                } else {
                    parent.stand_in.clone()
                };
                Source::new(src, verbatim, stand_in)
            }
        };
        let whole = |source: &Source| match (source.verbatim, &source.stand_in) {
            (false, Some(s)) => s.clone(),
            _ => src.to_string(),
        };
        if self.depth >= MAX_DEPTH {
            self.line_part(
                &whole(&source),
                RuleId::TooComplex,
                "nested too deeply to judge",
            );
            return;
        }
        if src.trim().is_empty() {
            return;
        }
        self.depth += 1;
        self.sources.push(source);
        match parse::parse(src) {
            ParseOutcome::Error(e) => {
                let text = self.sources.last().map(whole).unwrap_or_default();
                self.line_part(&text, RuleId::ParseError, format!("cannot parse: {e}"))
            }
            ParseOutcome::Program(p) => {
                // One list, whatever separates its parts (`;` or a newline).
                let items: Vec<&ast::CompoundListItem> =
                    p.complete_commands.iter().flat_map(|l| &l.0).collect();
                self.walk_items(&items);
            }
        }
        self.sources.pop();
        self.depth -= 1;
    }

    /// The start of the source being walked, as written (at most 200
    /// bytes): names a part that stands for the whole source.
    fn source_excerpt(&self) -> String {
        match self.sources.last() {
            Some(src) if src.verbatim => head_of(&src.text, 200).to_string(),
            Some(src) => src
                .stand_in
                .clone()
                .unwrap_or_else(|| "(nested commands)".to_string()),
            None => "(nested commands)".to_string(),
        }
    }

    /// The text at `bounds` (character positions from the parser) as
    /// written in the source being walked; for a nested source that is not
    /// text of the line, the command that runs it. `None` when there is no
    /// position to go by (the caller renders the syntax tree instead).
    fn written(&self, bounds: Option<Bounds>) -> Option<String> {
        self.written_after(bounds, None)
    }

    /// [`Walker::written`], taking in `keyword` when it is written just
    /// before (the parser starts a function at its name, after `function`).
    fn written_after(&self, bounds: Option<Bounds>, keyword: Option<&str>) -> Option<String> {
        let src = self.sources.last()?;
        if !src.verbatim {
            return src.stand_in.clone();
        }
        let (s, e) = bounds?;
        let (mut s, e) = (src.byte(s)?, src.byte(e)?);
        let text = src.text.as_str();
        if s >= e || e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            return None;
        }
        // The parser places a redirection at its word and a process
        // substitution at its `(`: take in the operator (and a descriptor
        // number) written before them.
        let b = text.as_bytes();
        if let Some(kw) = keyword {
            let before = text[..s].trim_end_matches([' ', '\t']);
            if let Some(head) = before.strip_suffix(kw)
                && (head.is_empty() || head.ends_with([' ', '\t', '\n', ';', '(', '{', '&', '|']))
            {
                return Some(text[head.len()..e].to_string());
            }
        }
        let mut t = s;
        while t > 0 && matches!(b[t - 1], b' ' | b'\t') {
            t -= 1;
        }
        let op_end = t;
        while t > 0 && matches!(b[t - 1], b'<' | b'>' | b'&' | b'|') {
            t -= 1;
        }
        if b[t..op_end].iter().any(|c| matches!(c, b'<' | b'>')) {
            let run_start = t;
            while t > 0 && b[t - 1].is_ascii_digit() {
                t -= 1;
            }
            let boundary = t == 0
                || matches!(
                    b[t - 1],
                    b' ' | b'\t' | b'\n' | b';' | b'(' | b'{' | b'|' | b'&'
                );
            s = if boundary { t } else { run_start };
        }
        Some(text[s..e].to_string())
    }

    fn walk_list(&mut self, list: &ast::CompoundList) {
        let items: Vec<&ast::CompoundListItem> = list.0.iter().collect();
        self.walk_items(&items);
    }

    /// Walks a list's items in order. A `cd` can fail (its folder missing), and then what
    /// runs after it runs where the shell already was; the part of `a || b` after a `cd`
    /// runs only where it failed. So where a `cd` may have failed, what may run after its
    /// failure is judged from the folder before it as well (`cd build; rm -rf ../wt`
    /// deletes the worktree when `build` is missing), and from the folder it went to.
    fn walk_items(&mut self, items: &[&ast::CompoundListItem]) {
        self.walk_from(items, 0, 0);
    }

    /// [`Self::walk_items`] from pipeline `start_k` of the and-or list of item `start_i`.
    fn walk_from(&mut self, items: &[&ast::CompoundListItem], start_i: usize, start_k: usize) {
        // A list inside a command runs surely only where that command does.
        let outer_surely = self.list_depth == 0 || self.runs_surely;
        self.list_depth += 1;
        self.walk_from_inner(items, start_i, start_k, outer_surely);
        self.list_depth -= 1;
    }

    fn walk_from_inner(
        &mut self,
        items: &[&ast::CompoundListItem],
        start_i: usize,
        start_k: usize,
        outer_surely: bool,
    ) {
        // A guard of this list (`: "${D:?}"`) ends with it (a subshell's stops the subshell).
        let guards_before = self.guarded.clone();
        self.walk_items_guarded(items, start_i, start_k, outer_surely);
        self.guarded = guards_before;
    }

    fn walk_items_guarded(
        &mut self,
        items: &[&ast::CompoundListItem],
        start_i: usize,
        start_k: usize,
        outer_surely: bool,
    ) {
        for (i, ast::CompoundListItem(and_or, sep)) in items.iter().enumerate().skip(start_i) {
            // A list run in the background (`cd src & rm -rf .`) runs in a subshell: what
            // it changes (the working directory, variables) is not there after it.
            let background = matches!(sep, ast::SeparatorOperator::Async);
            let saved = background.then(|| self.state.clone());
            let at_start = self.state.cwd.clone();
            let uncertain_before = self.uncertain_cds;
            let mut handled = 0;
            let chain: Vec<(bool, &ast::Pipeline)> = std::iter::once((false, &and_or.first))
                .chain(and_or.additional.iter().map(|next| match next {
                    ast::AndOr::And(p) => (false, p),
                    ast::AndOr::Or(p) => (true, p),
                }))
                .collect();
            let first = if i == start_i { start_k } else { 0 };
            // Set after a `cd`: the `||` parts right after it do not run where it went.
            let mut skip_or = false;
            let mut or_from: Option<Cwd> = None;
            // The guards of this and-or list's tests so far, past `&&` only.
            let mut outer_guards = self.guarded.clone();
            let mut chain_guards: Vec<String> = Vec::new();
            // `guarded` as the last part began: what `set_var` took out of it since (a
            // part that set or unset the variable) is guarded no longer.
            let mut given: Vec<String> = self.guarded.clone();
            for k in first..chain.len() {
                let (or, p) = chain[k];
                let taken: Vec<String> = given
                    .iter()
                    .filter(|g| !self.guarded.contains(g))
                    .cloned()
                    .collect();
                outer_guards.retain(|g| !taken.contains(g));
                chain_guards.retain(|g| !taken.contains(g));
                if or {
                    chain_guards.clear();
                }
                self.guarded = outer_guards.iter().chain(&chain_guards).cloned().collect();
                given = self.guarded.clone();
                // A guard holds past tests only: any other command between may change
                // the variable (`unset D`, a function, `read D`). Taken for the parts
                // after this one.
                let shadowed = self.functions.iter().any(|f| f == "test" || f == "[");
                let mut after = chain_guards.clone();
                match pipeline_guard(p)
                    .or_else(|| single_simple(p).and_then(abort_guard))
                    .filter(|_| !shadowed)
                {
                    Some(var) => after.push(var),
                    None if pipeline_guard_free(p) => {}
                    None => after.clear(),
                }
                chain_guards = after;
                if or && skip_or {
                    // Not run where the `cd` went: walked for what it does, from where
                    // it would run when no walk was left to judge it from there.
                    let kept = self.state.clone();
                    if let Some(b) = or_from.clone() {
                        self.state.cwd = b;
                    }
                    self.walk_pipeline(p);
                    self.restore_state(kept);
                    continue;
                }
                or_from = None;
                skip_or = false;
                self.last_cd = None;
                self.runs_surely = outer_surely && k == 0 && !background && self.cond_depth == 0;
                self.cd_alternatives.clear();
                self.walk_pipeline(p);
                self.runs_surely = false;
                let alternatives = std::mem::take(&mut self.cd_alternatives);
                let Some((before, missing)) = self.last_cd.take() else {
                    continue;
                };
                // Where the `cd` may have gone instead, what follows it runs from there.
                for alt in alternatives {
                    if background {
                        break;
                    }
                    if self.alt_forks >= MAX_CD_FORKS {
                        self.too_many_cds();
                        break;
                    }
                    self.alt_forks += 1;
                    self.walk_rest_from(items, (i, k + 1), Cwd::At(alt));
                }
                if background {
                    continue;
                }
                if missing {
                    handled += 1;
                }
                // Where what follows may run after this `cd` failed: the next `||` part
                // (past the `&&` parts, which do not run then), else the next item.
                let or_next = chain.get(k + 1).is_some_and(|(or, _)| *or);
                let resume = if or_next {
                    Some((i, k + 1))
                } else if missing {
                    Some(
                        (k + 1..chain.len())
                            .find(|&j| chain[j].0)
                            .map_or((i + 1, 0), |j| (i, j)),
                    )
                } else {
                    None
                };
                // Nothing left to run after it (the end of a subshell's list): nothing
                // to judge again.
                let resume = resume.filter(|&(ri, rk)| {
                    ri < items.len() && (ri > i || rk < chain.len() || i + 1 < items.len())
                });
                match resume {
                    Some((ri, rk)) if self.cd_forks < MAX_CD_FORKS => {
                        self.cd_forks += 1;
                        self.walk_rest_from(items, (ri, rk), before);
                        skip_or = true;
                    }
                    // Out of walks: the folder is taken to be entered, as when it exists,
                    // the `||` parts after it judged from the one before; the line is
                    // asked as one too complex to judge.
                    Some(_) => {
                        self.too_many_cds();
                        or_from = Some(before);
                        skip_or = true;
                    }
                    None => {}
                }
            }
            // `: "${D:?}"` stops the shell where D is empty, and so do `[ -z "$D" ] &&
            // exit 1` and `[ -n "$D" ] || exit 1`: the rest of the list has D.
            outer_guards.retain(|g| !given.contains(g) || self.guarded.contains(g));
            self.guarded = outer_guards;
            let shadowed = self.functions.iter().any(|f| f == "test" || f == "[");
            if !background
                && !shadowed
                && let Some(var) = list_guard(and_or)
            {
                self.guarded.push(var);
            }
            if let Some(s) = saved {
                self.restore_state(s);
                continue;
            }
            // A `cd` to a missing folder inside a compound command (`if cd x; then …; fi`)
            // the walk above could not see: the rest is judged from where the item began
            // (unless the item left the folder as it was, as a subshell does).
            if self.uncertain_cds > uncertain_before + handled
                && i + 1 < items.len()
                && self.state.cwd != at_start
            {
                if self.cd_forks < MAX_CD_FORKS {
                    self.cd_forks += 1;
                    self.walk_rest_from(items, (i + 1, 0), at_start);
                } else {
                    self.too_many_cds();
                }
            }
        }
    }

    /// Walks `items` from `(item, pipeline)` once more, from folder `cwd`, and puts back
    /// the state (and the count of uncertain `cd`s) as it was.
    fn walk_rest_from(
        &mut self,
        items: &[&ast::CompoundListItem],
        (i, k): (usize, usize),
        cwd: Cwd,
    ) {
        let went = self.state.clone();
        let counted = self.uncertain_cds;
        // A `$PWD` kept that does not lead here is dropped by the next `cd` (`logical_target`).
        self.state.cwd = cwd;
        self.walk_from(items, i, k);
        self.uncertain_cds = counted;
        self.restore_state(went);
    }

    /// More `cd`s that may go elsewhere than the walk judges from each place: the line is
    /// asked as too complex (what follows them was judged from where they say).
    fn too_many_cds(&mut self) {
        self.find(
            RuleId::TooComplex,
            "changes folder too many times in ways that may fail to judge from each",
        );
    }

    fn walk_pipeline(&mut self, p: &ast::Pipeline) {
        // Each element of a multi-command pipeline runs in a subshell: a `cd`
        // there changes nothing after it.
        let saved = (p.seq.len() > 1).then(|| self.state.clone());
        let inherited = std::mem::take(&mut self.stdin_pipe_in) || self.inherit_pipe;
        let (mut piped, mut found) = (None, None);
        for (i, cmd) in p.seq.iter().enumerate() {
            // Each starts from the state before the pipeline, not from what the one
            // before it changed (`cd src | rm -rf .` removes the folder it started in).
            if i > 0
                && let Some(s) = &saved
            {
                self.restore_state(s.clone());
            }
            let io = CmdIo {
                stdin_pipe: i > 0 || inherited,
                piped: piped.take(),
                piped_found: found.take(),
                ..CmdIo::default()
            };
            self.stdout_text = None;
            self.stdout_found = None;
            self.stdout_piped = i + 1 < p.seq.len();
            self.walk_command(cmd, &io);
            self.stdout_piped = false;
            (piped, found) = match cmd {
                ast::Command::Simple(_) => (self.stdout_text.take(), self.stdout_found.take()),
                _ => (None, None),
            };
        }
        self.stdout_text = None;
        self.stdout_found = None;
        // Under bash's `lastpipe` (which a line may set: `shopt -s lastpipe`), the last
        // element runs in the shell itself, so what it changes stays.
        let lastpipe = self
            .sources
            .first()
            .is_some_and(|s| s.text.contains("lastpipe"));
        if let Some(s) = saved.filter(|_| !lastpipe) {
            self.restore_state(s);
        }
    }

    fn enter(&mut self) -> bool {
        self.commands += 1;
        if self.depth >= MAX_DEPTH || self.commands > MAX_COMMANDS {
            let text = self.source_excerpt();
            self.line_part(
                &text,
                RuleId::TooComplex,
                "too many or too deeply nested commands to judge",
            );
            return false;
        }
        self.depth += 1;
        true
    }

    fn walk_command(&mut self, cmd: &ast::Command, io: &CmdIo) {
        if !self.enter() {
            return;
        }
        match cmd {
            ast::Command::Simple(sc) => self.walk_simple(sc, io),
            ast::Command::Compound(c, redirects) => {
                // `… | (sh)`, `… | { bash; }`: the commands inside read the pipe.
                let outer = self.inherit_pipe;
                self.inherit_pipe |= io.stdin_pipe;
                self.walk_compound(c, io);
                self.inherit_pipe = outer;
                if let Some(r) = redirects {
                    let text = self
                        .written(join_bounds(
                            c.location().as_ref().map(span_bounds),
                            redirects_bounds(r),
                        ))
                        .unwrap_or_else(|| format!("{c}{r}"));
                    self.judge_redirect_list(&r.0);
                    self.push_part(text);
                }
            }
            ast::Command::Function(f) => self.walk_function(f),
            ast::Command::ExtendedTest(t, redirects) => {
                let mut noticed = Noticed::default();
                self.eval_test(&t.expr, &mut noticed);
                // What names the commands of its substitutions when their
                // text is not text of the line.
                let text = self.written(Some(span_bounds(&t.loc)));
                let outer = std::mem::replace(&mut self.cmd_text, text);
                self.walk_noticed(noticed);
                self.cmd_text = outer;
                if let Some(r) = redirects {
                    let text = self
                        .written(join_bounds(Some(span_bounds(&t.loc)), redirects_bounds(r)))
                        .unwrap_or_else(|| format!("[[ {} ]]{r}", t.expr));
                    self.judge_redirect_list(&r.0);
                    self.push_part(text);
                }
            }
        }
        self.depth -= 1;
    }

    fn eval_test(&mut self, e: &ast::ExtendedTestExpr, noticed: &mut Noticed) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.eval_test(a, noticed);
                self.eval_test(b, noticed);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.eval_test(a, noticed)
            }
            ast::ExtendedTestExpr::UnaryTest(op, w) => {
                let a = word::eval_word(&w.value, self, noticed);
                self.note_secret_in(&a);
                if matches!(op, ast::UnaryPredicate::ShellVariableIsSetAndAssigned)
                    && let Some((_, index)) = a.text.split_once('[')
                {
                    // `[[ -v 'a[$(cmd)]' ]]`: the subscript is evaluated, as for `test -v`.
                    word::scan_substitutions(index, noticed);
                }
            }
            ast::ExtendedTestExpr::BinaryTest(op, l, r) => {
                use ast::BinaryPredicate as P;
                let arithmetic = matches!(
                    op,
                    P::ArithmeticEqualTo
                        | P::ArithmeticNotEqualTo
                        | P::ArithmeticLessThan
                        | P::ArithmeticLessThanOrEqualTo
                        | P::ArithmeticGreaterThan
                        | P::ArithmeticGreaterThanOrEqualTo
                );
                for w in [l, r] {
                    let a = word::eval_word(&w.value, self, noticed);
                    self.note_secret_in(&a);
                    if arithmetic {
                        // Each side is an arithmetic expression (`[[ y -eq 1 ]]`).
                        word::scan_substitutions(&a.text, noticed);
                        word::scan_variable_values(&a.text, self, noticed);
                        if word::arithmetic_on_unknown(&w.value, self) {
                            noticed.arithmetic_on_unknown.push(w.value.clone());
                        }
                    }
                }
            }
        }
    }

    fn walk_compound(&mut self, c: &ast::CompoundCommand, io: &CmdIo) {
        let conditional = !matches!(
            c,
            ast::CompoundCommand::BraceGroup(_) | ast::CompoundCommand::Subshell(_)
        );
        self.cond_depth += usize::from(conditional);
        self.walk_compound_body(c, io);
        self.cond_depth -= usize::from(conditional);
    }

    fn walk_compound_body(&mut self, c: &ast::CompoundCommand, io: &CmdIo) {
        match c {
            ast::CompoundCommand::BraceGroup(g) => self.walk_list(&g.list),
            ast::CompoundCommand::Subshell(s) => {
                let saved = self.state.clone();
                self.walk_list(&s.list);
                self.restore_state(saved);
            }
            ast::CompoundCommand::ForClause(f) => {
                let mut noticed = Noticed::default();
                let mut values: Vec<Arg> = Vec::new();
                if let Some(words) = &f.values {
                    // Split as the shell splits them: `for f in $LIST`, `for f in "$@"`.
                    let ifs = match self.state.vars.get("IFS") {
                        None => Some(" \t\n".to_string()),
                        Some(v) => v.clone(),
                    };
                    for w in words {
                        let a = word::eval_word(&w.value, self, &mut noticed);
                        // Brace expansion comes first: `for f in {/etc/passwd,}`.
                        let expanded = if a.brace {
                            word::expand_braces(&w.value, self, &mut noticed).map(|words| {
                                words.into_iter().filter(|w| !w.text.is_empty()).collect()
                            })
                        } else {
                            None
                        };
                        for a in expanded.unwrap_or_else(|| vec![a]) {
                            for field in a.fields(ifs.as_deref()).unwrap_or_else(|| vec![a]) {
                                for v in self.pathnames(field) {
                                    self.note_secret_in(&v);
                                    values.push(v);
                                }
                            }
                        }
                    }
                }
                self.walk_noticed(noticed);
                self.judge_loop_values(f, &values);
                // Each value known, a pattern that matched nothing included (the body then
                // gets the pattern itself, as the shell gives it: `for d in /tmp/build-*;
                // do rm -rf "$d"; done` deletes outside whatever it matches).
                let literal = !values.is_empty()
                    && values.len() <= 256
                    && values.iter().all(|v| v.known && !v.brace);
                // A name reference as the loop variable names each word in turn: its value
                // is not worked out.
                let nameref = self.state.namerefs.remove(&f.variable_name).is_some();
                if literal && !nameref {
                    // Each value is known: judge the body with each.
                    for v in values {
                        self.set_var(&f.variable_name, Some(v.text.clone()));
                        self.walk_list(&f.body.list);
                    }
                } else {
                    self.set_var(&f.variable_name, None);
                    let judged = !values.is_empty() && values.iter().all(|v| v.known);
                    self.in_loop_over_judged += usize::from(judged);
                    self.walk_list(&f.body.list);
                    self.in_loop_over_judged -= usize::from(judged);
                }
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                let mut noticed = Noticed::default();
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    word::scan_substitutions(&e.value, &mut noticed);
                    word::scan_variable_values(&e.value, self, &mut noticed);
                }
                self.walk_noticed(noticed);
                // Read as one expression, so that the names the initializer assigns are
                // known in the condition and the update (`for ((i=0; i<n; i++))`).
                let whole = [&f.initializer, &f.condition, &f.updater]
                    .map(|e| e.as_ref().map_or("", |e| e.value.as_str()))
                    .join("; ");
                if word::arithmetic_on_unknown(&whole, self) {
                    let part = self.source_excerpt();
                    self.line_part(
                        &part,
                        RuleId::DefaultUnknown,
                        format!(
                            "arithmetic on text not known before running (`{whole}`): bash runs the command substitutions in the array subscripts of what it evaluates"
                        ),
                    );
                }
                self.walk_list(&f.body.list);
            }
            ast::CompoundCommand::CaseClause(c) => {
                let mut noticed = Noticed::default();
                let a = word::eval_word(&c.value.value, self, &mut noticed);
                self.note_secret_in(&a);
                for item in &c.cases {
                    for p in &item.patterns {
                        word::eval_word(&p.value, self, &mut noticed);
                    }
                }
                self.walk_noticed(noticed);
                for item in &c.cases {
                    if let Some(list) = &item.cmd {
                        self.walk_list(list);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.walk_list(&i.condition);
                // A condition that is one test proves its variable not empty in `then`.
                let shadowed = self.functions.iter().any(|f| f == "test" || f == "[");
                // A condition of tests joined by `&&`: each proves its variable.
                let guards: Vec<String> = match i.condition.0.as_slice() {
                    [item]
                        if !shadowed
                            && item
                                .0
                                .additional
                                .iter()
                                .all(|a| matches!(a, ast::AndOr::And(_))) =>
                    {
                        std::iter::once(&item.0.first)
                            .chain(item.0.additional.iter().map(|a| match a {
                                ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
                            }))
                            .filter_map(pipeline_guard)
                            .collect()
                    }
                    _ => Vec::new(),
                };
                let before = self.guarded.len();
                self.guarded.extend(guards);
                self.walk_list(&i.then);
                self.guarded.truncate(before);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.walk_list(c);
                    }
                    self.walk_list(&e.body);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.walk_list(&w.0);
                self.walk_list(&w.1.list);
            }
            ast::CompoundCommand::Coprocess(c) => self.walk_command(&c.body, io),
            ast::CompoundCommand::Arithmetic(a) => {
                let mut noticed = Noticed::default();
                word::scan_substitutions(&a.expr.value, &mut noticed);
                word::scan_variable_values(&a.expr.value, self, &mut noticed);
                self.walk_noticed(noticed);
                // `( ( cmd ) )` is two subshells to bash but reads as `((…))`
                // to the parser: judge the inside as commands too. bash reads `((`
                // as arithmetic when it closes with `))`, as subshells only when the
                // two closing parentheses are apart: a source with no such pair holds
                // arithmetic alone (`(( $(wc -l < f) > 0 ))` compares, writes no `0`).
                // A `((` then the expression then `))` in the source is arithmetic
                // whatever else the line holds.
                let written = self
                    .sources
                    .last()
                    .is_some_and(|s| written_arithmetic(&s.text, &a.expr.value).is_some());
                // The part is named by the command as written (a part names text of the
                // line), else by what stands for the source.
                let part = self
                    .sources
                    .last()
                    .filter(|s| s.verbatim)
                    .and_then(|s| written_arithmetic(&s.text, &a.expr.value))
                    .map(str::to_string)
                    .unwrap_or_else(|| self.source_excerpt());
                // Where the command itself begins `(` and a blank (`( (rm -rf ~))`), bash
                // reads two subshells, never arithmetic: only `((` written together opens
                // one.
                let spaced = self.sources.last().is_some_and(|src| {
                    let (start, _) = span_bounds(&a.loc);
                    src.byte(start)
                        .and_then(|b| src.text.get(b..))
                        .is_some_and(|t| t.starts_with('(') && !t.starts_with("(("))
                });
                if spaced
                    || !written
                        && self
                            .sources
                            .last()
                            .is_none_or(|s| closing_parentheses_apart(&s.text))
                {
                    let inner = a.expr.value.clone();
                    let saved = self.state.clone();
                    self.walk_nested(&inner);
                    self.restore_state(saved);
                    // Read as arithmetic too where it expands something: the parentheses
                    // apart may be another command's.
                    let expands = a.expr.value.contains(['$', '`'])
                        || a.expr
                            .value
                            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .any(|name| self.state.vars.contains_key(name));
                    if expands && word::arithmetic_on_unknown(&a.expr.value, self) {
                        self.line_part(
                            &part,
                            RuleId::DefaultUnknown,
                            "arithmetic on text not known before running: bash runs the command substitutions in the array subscripts of what it evaluates",
                        );
                    }
                } else {
                    // An arithmetic command is no read on the list that runs unasked.
                    self.line_part(
                        &part,
                        RuleId::DefaultUnknown,
                        "an arithmetic command (( … )): not one of the reads that run unasked",
                    );
                }
            }
        }
    }

    /// The words a `for` loop runs over are expanded as arguments are: one
    /// that leaves the worktree makes the line red, as it would after any
    /// command (`for f in ~/.ssh/*; do cat "$f"; done`), whether or not the
    /// body can be judged with each value.
    fn judge_loop_values(&mut self, f: &ast::ForClauseCommand, values: &[Arg]) {
        let outer = std::mem::take(&mut self.cur);
        for v in values.iter().filter(|v| Self::is_path_token(v)) {
            self.check_read_path(v);
        }
        if self.cur.is_empty() {
            self.cur = outer;
            return;
        }
        let end = f
            .values
            .iter()
            .flatten()
            .filter_map(word_bounds)
            .map(|b| b.1)
            .max();
        let text = self
            .written(end.map(|e| (f.loc.start.index, e)))
            .unwrap_or_else(|| {
                let words: Vec<&str> = values.iter().map(|v| v.text.as_str()).collect();
                format!("for {} in {}", f.variable_name, words.join(" "))
            });
        self.push_part(text);
        self.cur = outer;
    }

    /// The functions through which `name`, about to be defined with a body that makes
    /// `calls`, would call itself again with at least one of the calls on the way starting
    /// a process of its own: `name` first, then the path back to it through the functions
    /// defined so far.
    fn spawn_cycle(&self, name: &str, calls: &[(String, bool)]) -> Option<Vec<String>> {
        let mut seen: HashSet<(&str, bool)> = HashSet::new();
        let mut stack: Vec<(&str, bool, Vec<&str>)> = calls
            .iter()
            .map(|(c, spawns)| (c.as_str(), *spawns, vec![]))
            .collect();
        while let Some((f, spawned, path)) = stack.pop() {
            if f == name {
                if spawned {
                    return Some(
                        std::iter::once(name)
                            .chain(path)
                            .map(str::to_string)
                            .collect(),
                    );
                }
                continue;
            }
            if !seen.insert((f, spawned)) {
                continue;
            }
            for (next, spawns) in self.function_spawns.get(f).into_iter().flatten() {
                let mut p = path.clone();
                p.push(f);
                stack.push((next.as_str(), spawned || *spawns, p));
            }
        }
        None
    }

    fn walk_function(&mut self, f: &ast::FunctionDefinition) {
        let name = f.fname.value.clone();
        let text = |w: &Self| {
            let body = join_bounds(
                f.body.0.location().as_ref().map(span_bounds),
                f.body.1.as_ref().and_then(redirects_bounds),
            );
            w.written_after(join_bounds(word_bounds(&f.fname), body), Some("function"))
                .unwrap_or_else(|| f.to_string())
        };
        let calls = calls_made(&f.body.0);
        if calls.iter().any(|(c, spawns)| *spawns && *c == name) {
            let text = text(self);
            self.find(
                RuleId::ForkBomb,
                format!("function `{name}` calls itself in a background pipeline"),
            );
            self.push_part(text);
        } else if let Some(cycle) = self.spawn_cycle(&name, &calls) {
            // Functions that start each other (`a(){ b|b& }; b(){ a|a& }`).
            let text = text(self);
            self.find(
                RuleId::ForkBomb,
                format!(
                    "functions {} call each other in background pipelines",
                    cycle
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
            );
            self.push_part(text);
        }
        self.function_spawns.insert(name.clone(), calls);
        self.functions.insert(name.clone());
        let body = self
            .written(f.body.0.location().as_ref().map(span_bounds))
            .filter(|_| self.sources.last().is_some_and(|s| s.verbatim))
            .unwrap_or_else(|| f.body.0.to_string());
        self.function_bodies.insert(name.clone(), body);
        // The body runs later, from wherever it is called: judge it with what
        // is known now, and let nothing it does leak into the state. Its positional
        // parameters are its caller's arguments, not known here.
        let saved = self.state.clone();
        self.state.positional = None;
        let changes_before = self.dir_changes;
        // Whether and when it runs is not known here.
        self.cond_depth += 1;
        self.walk_compound(&f.body.0, &CmdIo::default());
        self.cond_depth -= 1;
        // The variables its body sets: not known after a call (its assignments are the
        // shell's own, made or not as its branches go).
        let mut sets: Vec<String> = self
            .state
            .vars
            .iter()
            .filter(|(var, value)| saved.vars.get(*var) != Some(*value))
            .map(|(var, _)| var.clone())
            .chain(
                self.state
                    .arrays
                    .iter()
                    .filter(|(var, elements)| saved.arrays.get(*var) != Some(*elements))
                    .map(|(var, _)| var.clone()),
            )
            .collect();
        if self.state.env_unknown && !saved.env_unknown {
            // `unset "$1"` in the body: any variable.
            sets.push(String::new());
        }
        self.function_sets.insert(name.clone(), sets);
        if self.dir_changes != changes_before {
            self.functions_changing_dir.insert(name);
        }
        if f.body.1.is_some() {
            let text = text(self);
            if let Some(r) = &f.body.1 {
                self.judge_redirect_list(&r.0);
            }
            self.push_part(text);
        }
        self.restore_state(saved);
    }

    /// Walks the command substitutions found while evaluating words; returns
    /// whether any of them runs a network program.
    pub fn walk_noticed(&mut self, noticed: Noticed) -> bool {
        for (name, value) in &noticed.assigned {
            self.set_var(name, value.clone());
        }
        let mut network = false;
        for v in &noticed.variables {
            let v = self.referenced(v);
            if is_secret_variable(v) && self.secret_read.is_none() {
                self.secret_read = Some(format!("${v}"));
            }
        }
        if let Some(v) = noticed.indirect_unknown.first()
            && self.secret_read.is_none()
        {
            self.secret_read = Some(format!(
                "${{!{v}}} (a variable whose name is not known before running)"
            ));
        }
        // A command substitution runs in a subshell: a `cd` or an assignment in it
        // changes nothing after it (`x=$(cd src); rm -rf .`).
        for s in &noticed.substitutions {
            let saved = self.state.clone();
            network |= self.walk_nested(s);
            self.restore_state(saved);
        }
        if let Some(expr) = noticed.arithmetic_on_unknown.first() {
            self.find(
                RuleId::DefaultUnknown,
                format!(
                    "arithmetic on text not known before running (`{}`): bash runs the command substitutions in the array subscripts of what it evaluates",
                    expr.trim()
                ),
            );
        }
        network
    }

    fn walk_simple(&mut self, sc: &ast::SimpleCommand, io: &CmdIo) {
        let text = self
            .written(simple_bounds(sc))
            .unwrap_or_else(|| sc.to_string());
        let outer = self.cmd_text.replace(text);
        // Taken now: the substitutions walked inside set it for their own.
        let piped_out = std::mem::take(&mut self.stdout_piped);
        let push = self.walk_simple_in(sc, io, piped_out);
        let text = std::mem::replace(&mut self.cmd_text, outer);
        if push {
            self.push_part(text.unwrap_or_default());
        }
    }

    /// Walks a simple command (its text as written is in `cmd_text`);
    /// returns whether it is a part of its own.
    fn walk_simple_in(&mut self, sc: &ast::SimpleCommand, io: &CmdIo, piped_out: bool) -> bool {
        let mut noticed = Noticed::default();
        let mut args: Vec<Arg> = Vec::new();
        let mut assignments: Vec<(String, Arg)> = Vec::new();
        // Assigned a command substitution that prints a number (`n=$(wc -l < f)`).
        let mut numeric_values: Vec<String> = Vec::new();
        // The elements of the arrays assigned (`arr=(a b)`), when every one is known.
        let mut arrays: Vec<(String, Option<Vec<String>>)> = Vec::new();
        let mut redirects: Vec<&ast::IoRedirect> = Vec::new();
        let mut procsub_network: Vec<bool> = Vec::new();

        let items = sc
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(Item::Other)
            .chain(sc.word_or_name.iter().map(Item::Word))
            .chain(sc.suffix.iter().flat_map(|s| s.0.iter()).map(Item::Other));
        for item in items {
            match item {
                Item::Word(w) | Item::Other(ast::CommandPrefixOrSuffixItem::Word(w)) => {
                    self.push_word(&w.value, &mut args, &mut noticed);
                }
                Item::Other(ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w)) => {
                    if args.is_empty() {
                        let value = match &a.value {
                            ast::AssignmentValue::Scalar(v) => {
                                word::eval_word(&v.value, self, &mut noticed)
                            }
                            ast::AssignmentValue::Array(items) => {
                                let mut elements = Some(Vec::new());
                                for (index, v) in items {
                                    let e = word::eval_word(&v.value, self, &mut noticed);
                                    match (&mut elements, index, e.fields(Some(" \t\n"))) {
                                        (Some(out), None, None)
                                            if e.known && !e.glob && !e.brace =>
                                        {
                                            out.push(e.text)
                                        }
                                        // `arr=(*/x)`: the names the glob matches.
                                        (Some(out), None, None) if e.known && !e.brace => {
                                            let names = self.pathnames(e.clone());
                                            if names.iter().all(|n| n.known && !n.glob) {
                                                out.extend(names.into_iter().map(|n| n.text));
                                            } else {
                                                elements = None;
                                            }
                                        }
                                        _ => elements = None,
                                    }
                                }
                                if let ast::AssignmentName::VariableName(n) = &a.name {
                                    arrays.push((n.clone(), elements.clone()));
                                }
                                match elements.as_ref().map(|e| e.first().cloned()) {
                                    Some(first) => Arg::literal(first.unwrap_or_default()),
                                    None => Arg::unknown(),
                                }
                            }
                        };
                        let name = match &a.name {
                            ast::AssignmentName::VariableName(n) => n.clone(),
                            ast::AssignmentName::ArrayElementName(n, index) => {
                                // The subscript is evaluated: `a[$(cmd)]=1` runs cmd, and
                                // so does any text it expands to (`a[$(cat f)]=1`).
                                word::scan_substitutions(index, &mut noticed);
                                if word::arithmetic_on_unknown(index, self) {
                                    noticed.arithmetic_on_unknown.push(index.clone());
                                }
                                n.clone()
                            }
                        };
                        // The last assignment of a name in the line decides.
                        numeric_values.retain(|n| *n != name);
                        if let (ast::AssignmentValue::Scalar(v), false) = (&a.value, a.append)
                            && word::numeric_substitution(&v.value)
                        {
                            numeric_values.push(name.clone());
                        }
                        // `x+=m` appends to the value before: known when both parts are
                        // (an array's elements are not followed through an append).
                        let value = if !a.append {
                            value
                        } else if self.state.integers.contains(self.referenced(&name)) {
                            // `n+=EXPR` on an integer variable adds what EXPR evaluates to:
                            // EXPR is evaluated, the sum is not followed.
                            if value.known {
                                self.evaluate_if_integer(&name, &value.text);
                            }
                            Arg::unknown()
                        } else if let (ast::AssignmentValue::Scalar(_), Some(before), true) =
                            (&a.value, Scope::var(self, &name), value.known)
                        {
                            Arg::literal(before + &value.text)
                        } else {
                            if let Some(entry) = arrays.iter_mut().find(|(n, _)| *n == name) {
                                entry.1 = None;
                            }
                            Arg::unknown()
                        };
                        assignments.push((name, value));
                    } else {
                        // `export X=…`, `declare X=…`: an argument like any
                        // other, and the variable is set for what follows.
                        if matches!(
                            args[0].text.as_str(),
                            "export" | "declare" | "typeset" | "readonly" | "local"
                        ) && let (
                            ast::AssignmentName::VariableName(n),
                            ast::AssignmentValue::Scalar(v),
                        ) = (&a.name, &a.value)
                        {
                            let mut value = word::eval_word(&v.value, self, &mut noticed);
                            if a.append {
                                // `export X+=…`: what X held is not followed.
                                value = Arg::unknown();
                            }
                            // `declare -n r=x`: r names x, whose value it takes when
                            // expanded (a value that is not a known name: not known).
                            let nameref = args[0].text != "export"
                                && args[1..]
                                    .iter()
                                    .any(|f| f.text.starts_with('-') && f.text[1..].contains('n'));
                            if args[0].text != "export" && args[0].text != "readonly" {
                                // `declare -i n=VALUE`: VALUE is evaluated as n's.
                                let mut words = args.clone();
                                words.push(Arg::literal(n.clone()));
                                self.declare_integers(&words);
                            }
                            if nameref {
                                self.guarded.retain(|g| g != n);
                                self.state.vars.insert(n.clone(), None);
                                match (value.known && is_name(&value.text))
                                    .then(|| value.text.clone())
                                {
                                    Some(t) => self.state.namerefs.insert(n.clone(), t),
                                    None => self.state.namerefs.remove(n),
                                };
                            } else {
                                // Through a name reference declared before, as any assignment.
                                self.set_var(n, value.known.then(|| value.text.clone()));
                            }
                        }
                        self.push_word(&w.value, &mut args, &mut noticed);
                    }
                }
                Item::Other(ast::CommandPrefixOrSuffixItem::IoRedirect(r)) => redirects.push(r),
                Item::Other(ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub)) => {
                    // `tee >(sh)`: the list reads what the command writes.
                    let piped = matches!(kind, ast::ProcessSubstitutionKind::Write);
                    let network = self.walk_nested_list(&sub.list, piped);
                    procsub_network.push(network);
                    args.push(Arg {
                        text: "/dev/fd/63".into(),
                        known: true,
                        procsub: true,
                        ..Arg::default()
                    });
                }
            }
        }
        if args
            .first()
            .is_some_and(|a| matches!(a.text.as_str(), "declare" | "typeset" | "local"))
        {
            self.declare_integers(&args);
        }
        let written = fetch_output_words(&args);
        for (i, a) in args.iter().enumerate() {
            if !written.contains(&i) {
                self.note_secret_in(a);
            }
        }
        if reads_trees(&args) {
            // `tar czf - ~ | nc …`, `rsync -a ~/ host:`: a folder that holds a secret
            // path, read whole, reads the secret. (A search's pattern is no folder.)
            let name = crate::command::program_name(&args[0].text).to_string();
            let patterns = crate::command::search_patterns(&name, &args, 1);
            for (i, a) in args.iter().enumerate().skip(1) {
                if !patterns.contains(&i) {
                    self.note_secret_holder(a);
                }
            }
        }
        if piped_out
            && args
                .first()
                .is_some_and(|a| matches!(a.text.as_str(), "echo" | "printf"))
        {
            // Words echoed into a pipe are another program's input.
            for a in args.iter().skip(1).filter(|a| a.known) {
                self.note_secret_words(&a.text);
            }
        }
        let subs_network = self.walk_noticed(noticed);

        // Here-documents and here-strings feed stdin; other redirections are
        // judged as reads and writes.
        let mut io = io.clone();
        self.judge_redirect_list_into(&redirects, &mut io);

        if args.is_empty() {
            for (name, value) in &assignments {
                if is_control_variable(name) && !names_an_inert_program(name, value) {
                    self.find(
                        RuleId::DefaultUnknown,
                        format!("sets {name}, which changes how programs are found or run"),
                    );
                }
                self.judge_program_variable(name, value);
                if is_secret_variable(name) && self.secret_read.is_none() {
                    self.secret_read = Some(format!("${name}"));
                }
                self.set_var(name, value.known.then(|| value.text.clone()));
            }
            self.state.numeric.extend(numeric_values);
            for (name, elements) in arrays {
                self.state.arrays.insert(name, elements);
            }
            return !self.cur.is_empty();
        }
        for (name, value) in &assignments {
            self.judge_command_assignment(name, value);
        }
        let ctx = crate::command::Invocation {
            io: &io,
            procsub_network: procsub_network.iter().any(|n| *n),
            subs_network,
        };
        // `X=/ sh -c 'rm -rf $X'`: the assignments are the command's
        // environment, seen by the strings it runs.
        let saved_vars = (!assignments.is_empty()).then(|| self.state.vars.clone());
        for (name, value) in &assignments {
            self.state
                .vars
                .insert(name.clone(), value.known.then(|| value.text.clone()));
        }
        self.judge_argv(&args, &ctx, 0);
        if let Some(v) = saved_vars {
            self.state.vars = v;
        }
        self.stdout_text = if piped_out {
            literal_output(&args, &io)
        } else {
            None
        };
        self.stdout_found = if piped_out {
            self.names_find_prints(&args)
        } else {
            None
        };
        self.note_scripts_written(&args, &io, &redirects);
        true
    }

    fn push_word(&mut self, raw: &str, args: &mut Vec<Arg>, noticed: &mut Noticed) {
        let a = word::eval_word(raw, self, noticed);
        if a.brace
            && let Some(words) = word::expand_braces(raw, self, noticed)
        {
            // An empty word of an expansion is dropped (`{/etc/passwd,}` is one word).
            let words: Vec<Arg> = words.into_iter().filter(|w| !w.text.is_empty()).collect();
            let command_word = args.is_empty();
            if command_word {
                // A command word built by brace expansion is not identifiable.
                args.push(a);
            }
            for w in words.into_iter().skip(usize::from(command_word)) {
                args.extend(self.pathnames(w));
            }
            return;
        }
        // Field splitting: `CMD="git push"; $CMD origin main` runs git.
        let ifs = match self.state.vars.get("IFS") {
            None => Some(" \t\n"),
            Some(v) => v.as_deref(),
        };
        for field in a.fields(ifs).unwrap_or_else(|| vec![a]) {
            if args.is_empty() {
                // A command word a glob makes is not identifiable: kept as written.
                args.push(field);
            } else {
                args.extend(self.pathnames(field));
            }
        }
    }

    /// Pathname expansion of one field (SPEC §2: every argument is expanded): the names
    /// a glob matches on the filesystem, each judged as that name written out, and the
    /// word as written when nothing matches. Past the bound of [`expand`], the word is
    /// one whose value cannot be worked out before running, never auto-approved.
    pub(crate) fn pathnames(&mut self, a: Arg) -> Vec<Arg> {
        if a.glob_at.is_empty() || !a.known || a.text.len() > 4096 {
            return vec![a];
        }
        let Some(cwd) = self.start_of(std::path::Path::new(&a.text)) else {
            return vec![a];
        };
        let found = if self.links.is_empty() {
            expand::expand(self.cls.fs.as_ref(), &cwd, &a.text, &a.glob_at)
        } else {
            let fs = crate::path::WithLinks {
                inner: self.cls.fs.as_ref(),
                links: &self.links,
            };
            expand::expand(&fs, &cwd, &a.text, &a.glob_at)
        };
        let name = |text: String| Arg {
            text,
            known: true,
            glob: false,
            brace: false,
            unquoted: Vec::new(),
            breaks: Vec::new(),
            numbers: 0,
            expanded: Vec::new(),
            glob_at: Vec::new(),
            globbed_from: Some(a.text.clone()),
            ..a.clone()
        };
        match found {
            expand::Expansion::Unmatched => vec![a],
            expand::Expansion::Matches(words) => words.into_iter().map(name).collect(),
            expand::Expansion::Unknown => {
                self.find_outside_write(
                    RuleId::PathOutside,
                    format!(
                        "{} matches more names than fence reads (over {}), or one it cannot write down: where they lead cannot be worked out before running",
                        a.text,
                        expand::MAX_MATCHES
                    ),
                );
                // The folder before the first pattern character is known.
                let first = a.glob_at.iter().copied().min().unwrap_or(0);
                let before = a.text.get(..first).unwrap_or("");
                let dir = before.rfind('/').map_or("", |i| &before[..=i]);
                let mut unknown = name(format!("{dir}{}", word::UNKNOWN));
                unknown.known = false;
                vec![unknown]
            }
        }
    }

    /// Walks the list of a process substitution as a nested line of its own.
    fn walk_nested_list(&mut self, list: &ast::CompoundList, piped: bool) -> bool {
        let cur = std::mem::take(&mut self.cur);
        let flags = (
            std::mem::take(&mut self.cur_writes),
            std::mem::take(&mut self.cur_network),
            std::mem::take(&mut self.cur_test_runner),
        );
        let before = self.network_parts.len();
        let saved = self.state.clone();
        let outer = std::mem::replace(&mut self.inherit_pipe, piped);
        self.walk_list(list);
        self.inherit_pipe = outer;
        self.restore_state(saved);
        let network = self.network_parts.len() > before;
        self.cur = cur;
        (self.cur_writes, self.cur_network, self.cur_test_runner) = flags;
        network
    }

    fn judge_redirect_list(&mut self, redirects: &[ast::IoRedirect]) {
        let refs: Vec<&ast::IoRedirect> = redirects.iter().collect();
        let mut io = CmdIo::default();
        self.judge_redirect_list_into(&refs, &mut io);
    }

    /// Records what a command writes into files through stdout (`>`, `>|`, `>>`, `&>`):
    /// the text when the line shows what the command prints, `None` otherwise.
    fn note_scripts_written(&mut self, args: &[Arg], io: &CmdIo, redirects: &[&ast::IoRedirect]) {
        for r in redirects {
            let (w, append) = match r {
                ast::IoRedirect::File(
                    fd,
                    kind @ (ast::IoFileRedirectKind::Write
                    | ast::IoFileRedirectKind::Clobber
                    | ast::IoFileRedirectKind::Append),
                    ast::IoFileRedirectTarget::Filename(w),
                ) if fd.is_none_or(|fd| fd == 1) => {
                    (w, matches!(kind, ast::IoFileRedirectKind::Append))
                }
                ast::IoRedirect::OutputAndError(w, append) => (w, *append),
                _ => continue,
            };
            let target = word::eval_word(&w.value, self, &mut Noticed::default());
            if !target.known || target.glob || target.brace {
                continue;
            }
            let path = match self.resolve_arg(&target, true) {
                crate::command::Loc::Inside { path, .. } => path,
                crate::command::Loc::Outside(path) => path,
                crate::command::Loc::Unknown => continue,
            };
            // Written by a download (`curl URL > i.sh`), or by anything else.
            if self.cur_network && !append {
                self.downloads.insert(path.clone());
            } else if !self.cur_network {
                self.downloads.remove(&path);
            }
            let printed = literal_output(args, io);
            let held = match (append, printed) {
                (false, printed) => printed,
                (true, Some(more)) => self
                    .scripts_written
                    .get(&path)
                    .cloned()
                    .flatten()
                    .map(|before| before + &more),
                (true, None) => None,
            };
            self.scripts_written.insert(path, held);
        }
    }

    /// The file a redirection's word names. Bash brace-expands it as it does an argument:
    /// `> {/etc/passwd,}` writes `/etc/passwd` (the empty word is dropped). Words that
    /// expand to several are an error to bash, and each is judged.
    fn redirect_target(&mut self, raw: &str, noticed: &mut Noticed) -> Vec<Arg> {
        let a = word::eval_word(raw, self, noticed);
        if a.brace
            && let Some(words) = word::expand_braces(raw, self, noticed)
        {
            let words: Vec<Arg> = words.into_iter().filter(|w| !w.text.is_empty()).collect();
            if !words.is_empty() {
                return words.into_iter().flat_map(|w| self.pathnames(w)).collect();
            }
        }
        // A glob matching one name is that name (several are an error to bash: each is
        // judged).
        self.pathnames(a)
    }

    fn judge_redirect_list_into(&mut self, redirects: &[&ast::IoRedirect], io: &mut CmdIo) {
        for r in redirects {
            // `> /dev/tcp/HOST/PORT`: bash opens a connection.
            let target = match r {
                ast::IoRedirect::File(
                    _,
                    _,
                    ast::IoFileRedirectTarget::Filename(w)
                    | ast::IoFileRedirectTarget::Duplicate(w),
                )
                | ast::IoRedirect::OutputAndError(w, _) => Some(w.value.as_str()),
                _ => None,
            };
            if let Some(t) = target {
                let t = t.trim_start_matches(['"', '\'']);
                if t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/") {
                    self.cur_network = true;
                }
            }
            let mut noticed = Noticed::default();
            match r {
                ast::IoRedirect::File(_, kind, target) => match target {
                    ast::IoFileRedirectTarget::Filename(w) => {
                        let targets = self.redirect_target(&w.value, &mut noticed);
                        self.walk_noticed(noticed);
                        for a in &targets {
                            self.note_secret_in(a);
                            match kind {
                                ast::IoFileRedirectKind::Read => self.check_read_path(a),
                                _ => self.check_redirection_target(a),
                            }
                        }
                    }
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let targets = self.redirect_target(&w.value, &mut noticed);
                        self.walk_noticed(noticed);
                        for a in &targets {
                            // `>& file` (not a descriptor number or `-`) writes a file.
                            let is_fd = a.value().is_some_and(|v| {
                                v == "-"
                                    || v.trim_end_matches('-').chars().all(|c| c.is_ascii_digit())
                            });
                            if !is_fd {
                                self.check_redirection_target(a);
                            }
                        }
                    }
                    ast::IoFileRedirectTarget::Fd(_) => {}
                    ast::IoFileRedirectTarget::ProcessSubstitution(pkind, sub) => {
                        let piped = matches!(pkind, ast::ProcessSubstitutionKind::Write);
                        self.walk_nested_list(&sub.list, piped);
                        if matches!(kind, ast::IoFileRedirectKind::Read) {
                            // `sh < <(curl …)`: stdin is another program's output.
                            io.stdin_pipe = true;
                        }
                    }
                },
                ast::IoRedirect::OutputAndError(w, _) => {
                    let targets = self.redirect_target(&w.value, &mut noticed);
                    self.walk_noticed(noticed);
                    for a in &targets {
                        self.check_redirection_target(a);
                    }
                }
                ast::IoRedirect::HereDocument(_, doc) => {
                    if doc.requires_expansion && doc.doc.value.matches("$(").count() > 8 {
                        // The word parser is exponential in nested `$((`:
                        // a body this dense is not expanded, it is refused
                        // judgement.
                        self.find(
                            RuleId::TooComplex,
                            "a here-document with too many substitutions to judge",
                        );
                    } else if doc.requires_expansion {
                        let opts = word::parser_options();
                        if let Ok(pieces) = brush_parser::word::parse_heredoc(&doc.doc.value, &opts)
                        {
                            let mut a = Arg::default();
                            word::eval_heredoc(&doc.doc.value, &pieces, self, &mut noticed, &mut a);
                        } else {
                            word::scan_substitutions(&doc.doc.value, &mut noticed);
                        }
                        self.walk_noticed(noticed);
                    }
                    io.heredoc = Some(doc.doc.value.clone());
                }
                ast::IoRedirect::HereString(_, w) => {
                    let a = word::eval_word(&w.value, self, &mut noticed);
                    self.walk_noticed(noticed);
                    self.note_secret_in(&a);
                    if a.known {
                        self.note_secret_words(&a.text);
                    }
                    io.herestring = Some(a);
                }
            }
        }
    }
}

/// What a command writes to stdout when the line alone says it: `cat` of
/// its here-document or here-string, `echo` of known words.
fn literal_output(args: &[Arg], io: &CmdIo) -> Option<String> {
    let name = crate::command::program_name(&args.first()?.text);
    match name {
        "cat" if args[1..].iter().all(|a| a.text == "-") => io.heredoc.clone().or_else(|| {
            io.herestring
                .as_ref()
                .and_then(|h| h.value())
                .map(|v| format!("{v}\n"))
        }),
        "echo" => {
            let words = &args[1..];
            if !words.iter().all(|a| a.known && !a.glob) {
                return None;
            }
            let (mut out, newline) = word::echo_text(words.iter().map(|a| a.text.as_str()))?;
            if newline {
                out.push('\n');
            }
            Some(out)
        }
        "printf" => {
            let format = args.get(1).filter(|a| a.known && !a.glob)?;
            let rest = &args[2..];
            if !rest.iter().all(|a| a.known && !a.glob) {
                return None;
            }
            let f = format.text.replace("\\n", "\n");
            match f.as_str() {
                // Names ended by NUL, for `xargs -0`.
                "%s\\0" => Some(rest.iter().map(|a| format!("{}\0", a.text)).collect()),
                "%s\n" | "%s " | "%s" | "%s\0" => Some(
                    rest.iter()
                        .map(|a| a.text.as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ if rest.is_empty() && !f.contains(['%', '\\']) => Some(f),
                _ => None,
            }
        }
        _ => None,
    }
}

enum Item<'x> {
    Word(&'x ast::Word),
    Other(&'x ast::CommandPrefixOrSuffixItem),
}

/// Variables whose value is a credential (SPEC §2: names containing TOKEN,
/// SECRET or PASSWORD, or ending in KEY).
/// Whether the command reads whole folder trees given as arguments: archivers, copiers
/// and recursive searches (by program name, wrappers already peeled by the caller's
/// argv; `cp` and `grep` only with a recursive flag).
fn reads_trees(args: &[Arg]) -> bool {
    let Some(program) = args.first().filter(|a| a.known) else {
        return false;
    };
    let name = program.text.rsplit('/').next().unwrap_or_default();
    let flag = |short: &[char], long: &[&str]| {
        args.iter().skip(1).filter(|a| a.known).any(|a| {
            let t = a.text.as_str();
            long.iter().any(|l| opts::is_long(t, l))
                || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
        })
    };
    match name {
        // tar reads the trees it is given when it writes an archive; listing
        // or extracting one (`tar -tzf a.tgz -C /etc`) reads the archive.
        "tar" | "bsdtar" => args.iter().skip(1).filter(|a| a.known).any(|a| {
            let t = a.text.as_str();
            ["create", "append", "update"]
                .iter()
                .any(|l| opts::is_long(t, l))
                || (!t.starts_with("--") && t.contains(['c', 'r', 'u']) && {
                    // The first word is a cluster of letters with or without `-`.
                    t.starts_with('-') || std::ptr::eq(a, &args[1])
                })
        }),
        "zip" | "7z" | "7za" | "rar" | "cpio" | "pax" | "rsync" | "rclone" | "rg" | "ag"
        | "restic" | "borg" => true,
        "cp" | "scp" => flag(&['r', 'R', 'a'], &["recursive", "archive"]),
        "grep" | "egrep" | "fgrep" => flag(&['r', 'R'], &["recursive", "dereference-recursive"]),
        _ => false,
    }
}

/// The words of a `curl` or `wget` command that name a file it writes (`-o F`,
/// `--output=F`, wget's `-O F`): a write there reads nothing (the path rules judge the
/// write), so such a word is no credential read.
fn fetch_output_words(args: &[Arg]) -> Vec<usize> {
    let Some(first) = args.first() else {
        return Vec::new();
    };
    let (short, long): (&[&str], &[&str]) = match crate::command::program_name(&first.text) {
        "curl" => (
            &["-o", "-D", "-c"],
            &[
                "--output",
                "--output-dir",
                "--dump-header",
                "--cookie-jar",
                "--trace",
                "--trace-ascii",
                "--stderr",
            ],
        ),
        "wget" => (
            &["-O", "-o", "-a", "-P"],
            &[
                "--output-document",
                "--output-file",
                "--append-output",
                "--directory-prefix",
            ],
        ),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate().skip(1) {
        let t = a.text.as_str();
        if short.contains(&t) || long.contains(&t) {
            out.push(i + 1);
        } else if long
            .iter()
            .any(|l| t.strip_prefix(l).is_some_and(|r| r.starts_with('=')))
            || short
                .iter()
                .any(|s| t.len() > 2 && t.starts_with(s) && !t.starts_with("--"))
        {
            out.push(i);
        }
    }
    out
}

pub fn is_secret_variable(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.contains("TOKEN")
        || n.contains("SECRET")
        || n.contains("PASSWORD")
        || n.contains("PASSWD")
        || n.contains("CREDENTIAL")
        || n.ends_with("KEY")
}

/// A function whose body runs itself in a pipeline or in the background.
/// The names a function's body calls, each with whether the call starts a process of its
/// own: in a pipeline of more than one command, in the background, or anywhere inside a
/// compound command run so.
fn calls_made(body: &ast::CompoundCommand) -> Vec<(String, bool)> {
    fn in_list(out: &mut Vec<(String, bool)>, list: &ast::CompoundList) {
        for ast::CompoundListItem(aol, sep) in &list.0 {
            let background = matches!(sep, ast::SeparatorOperator::Async);
            for p in std::iter::once(&aol.first).chain(aol.additional.iter().map(|a| match a {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
            })) {
                let piped = p.seq.len() > 1;
                for c in &p.seq {
                    in_command(out, c, piped || background);
                }
            }
        }
    }
    fn in_command(out: &mut Vec<(String, bool)>, c: &ast::Command, spawning: bool) {
        match c {
            ast::Command::Simple(sc) => {
                if let Some(w) = &sc.word_or_name {
                    let call = (w.value.trim_matches(['"', '\'']).to_string(), spawning);
                    if !out.contains(&call) {
                        out.push(call);
                    }
                }
            }
            ast::Command::Compound(cc, _) => in_compound(out, cc, spawning),
            _ => {}
        }
    }
    fn in_compound(out: &mut Vec<(String, bool)>, cc: &ast::CompoundCommand, spawning: bool) {
        let lists: Vec<&ast::CompoundList> = match cc {
            ast::CompoundCommand::BraceGroup(g) => vec![&g.list],
            ast::CompoundCommand::Subshell(s) => vec![&s.list],
            ast::CompoundCommand::ForClause(f) => vec![&f.body.list],
            ast::CompoundCommand::ArithmeticForClause(f) => vec![&f.body.list],
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                vec![&w.0, &w.1.list]
            }
            ast::CompoundCommand::IfClause(i) => {
                let mut v = vec![&i.condition, &i.then];
                for e in i.elses.iter().flatten() {
                    v.push(&e.body);
                }
                v
            }
            _ => vec![],
        };
        for l in lists {
            in_list(out, l);
            if spawning {
                for ast::CompoundListItem(aol, _) in &l.0 {
                    for c in &aol.first.seq {
                        in_command(out, c, true);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    in_compound(&mut out, body, false);
    out
}

#[cfg(test)]
mod tests {
    use super::{Finding, without_repeats};

    fn finding(rule: usize, reason: &str) -> Finding {
        Finding {
            rule,
            reason: reason.into(),
            outside_write: false,
        }
    }

    /// Each finding is kept once, at its first place, in short lists and long ones.
    #[test]
    fn repeats_are_dropped_and_the_order_kept() {
        for n in [3, 40] {
            let mut findings = Vec::new();
            for i in 0..n {
                findings.push(finding(i % 3, &format!("r{}", i % 5)));
            }
            let mut want: Vec<Finding> = Vec::new();
            for f in &findings {
                if !want.contains(f) {
                    want.push(f.clone());
                }
            }
            assert_eq!(without_repeats(findings), want, "{n} findings");
        }
        let outside = Finding {
            outside_write: true,
            ..finding(1, "r")
        };
        assert_eq!(
            without_repeats(vec![finding(1, "r"), outside.clone(), finding(1, "r")]),
            vec![finding(1, "r"), outside]
        );
    }
}

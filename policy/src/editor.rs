//! What an editor's command-line scripts do: vim's and ex's commands (`-c`, `+`,
//! `--cmd`), ed's script, emacs's `--eval` code. Each is turned into the shell lines that do
//! the same to files and programs, which the classifier then judges as typed: `:w
//! /etc/hosts` as `tee /etc/hosts`, `:!rm -rf ~` and `:call system("rm -rf ~")` as `rm -rf
//! ~`, `:w !sh` as a pipe into `sh`, `(delete-directory "~" t)` as `rm -rf ~`. The commands
//! of one editor run are one script: a `:cd` or `:edit` holds for the commands after it. A
//! program a command builds at run time (`:execute g:cmd`, `system(g:cmd)`) is one that
//! cannot be identified before running, as `eval` is; a command whose effect cannot be
//! worked out otherwise (`:source` of a file, `:set shell=…`) is a line no rule recognises.
//!
//! Written by hand: no crate parses vim's ex commands or Emacs Lisp for their effects.

/// One shell line standing for an editor command, and whether the editor feeds it the
/// buffer on its standard input (`:w !CMD`, `:%!CMD`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    pub line: String,
    pub piped: bool,
}

/// Stands for a command the classifier recognises nothing in: yellow in a line.
const UNKNOWN: &str = "fence-editor-script-not-understood";

/// Stands for a program an editor's command builds before running it (`:execute g:cmd`,
/// `system(g:cmd)`): one that cannot be identified before running (SPEC §2).
const DYNAMIC: &str = "eval \"$FENCE_EDITOR_EXPRESSION\"";

fn shell(line: &str, piped: bool, out: &mut Vec<Effect>) {
    out.push(Effect {
        line: line.to_string(),
        piped,
    });
}

/// `s` as one shell word: single-quoted, a leading `~` or `~/` left outside the quotes so
/// that it names the home as the editor's own expansion does.
pub fn quote(s: &str) -> String {
    // `~`, `~/…`, `~user/…`.
    let user_end = s
        .strip_prefix('~')
        .map(|r| 1 + r.find('/').map_or(r.len(), |k| k + 1));
    let (tilde, rest) = match user_end {
        Some(end)
            if s[1..end]
                .trim_end_matches('/')
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) =>
        {
            (&s[..end], &s[end..])
        }
        _ => ("", s),
    };
    if rest.is_empty() {
        return tilde.to_string();
    }
    // The editor expands variables and runs backticks in a file name as the shell does:
    // left for the shell's reading when nothing else in it is special.
    if s.contains(['$', '`'])
        && !s.contains(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '\'' | '"' | '\\')
        })
    {
        return s.to_string();
    }
    format!("{tilde}'{}'", rest.replace('\'', "'\\''"))
}

/// Ex command modifiers that run the command after them.
const MODIFIERS: &[&str] = &[
    "silent",
    "sil",
    "unsilent",
    "noautocmd",
    "noa",
    "keepjumps",
    "keepmarks",
    "keepalt",
    "keeppatterns",
    "lockmarks",
    "verbose",
    "vertical",
    "topleft",
    "botright",
    "aboveleft",
    "belowright",
    "tab",
    "confirm",
    "browse",
    "sandbox",
    "hide",
    "noswapfile",
    "legacy",
    "vim9cmd",
    // Their short forms.
    "vert",
    "verti",
    "vertic",
    "vertica",
    "to",
    "top",
    "topl",
    "bo",
    "bot",
    "botr",
    "abo",
    "bel",
    "lefta",
    "rightb",
    "uns",
    "keepj",
    "keepm",
    "keepa",
    "keepp",
    "lockm",
    "conf",
    "bro",
    "san",
    "hid",
    "nos",
    "verb",
];

/// The effects of one ex command line (a `-c` value, a `+` word, a line of an ex script),
/// `|`-separated commands included. `depth` bounds `:execute` strings.
pub fn ex_effects(text: &str) -> Vec<Effect> {
    ex_script_effects(&[text])
}

/// The effects of an editor's commands in the order it runs them (each `-c`, `+` and
/// `--cmd`, each line of a script): a `:cd` or `:edit` in one holds for the next.
pub fn ex_script_effects(texts: &[&str]) -> Vec<Effect> {
    let mut ex = Ex::default();
    let mut inserting = false;
    for t in texts {
        // `a`, `i` and `c` take the lines after them as text, up to a lone `.`.
        if inserting {
            inserting = t.trim_end() != ".";
            continue;
        }
        if takes_text(t) {
            inserting = true;
            continue;
        }
        ex_line(t, 0, &mut ex);
    }
    ex.out
}

/// Whether a line of an ed or ex script is `a`, `i` or `c` (with an address, `append`,
/// `insert`, `change`): the lines after it are text, up to a lone `.`.
fn takes_text(line: &str) -> bool {
    let t = skip_range(line.trim_start_matches([':', ' ', '\t']));
    let t = t.trim_end().trim_end_matches('!');
    matches!(t, "a" | "i" | "c" | "append" | "insert" | "change")
}

/// What the editor's commands did so far and what they set.
#[derive(Default)]
struct Ex {
    out: Vec<Effect>,
    /// The folder `:cd` moved to: relative names and commands run there.
    cd: Option<String>,
    /// The file `:edit` opened: a bare `:w` writes it.
    buffer: Option<String>,
    /// `makeprg` and `grepprg` as `:set` made them: `:make` and `:grep` run them.
    makeprg: Option<String>,
    grepprg: Option<String>,
}

impl Ex {
    fn emit(&mut self, line: &str, piped: bool) {
        let line = match &self.cd {
            Some(dir) => format!("cd {} && {line}", quote(dir)),
            None => line.to_string(),
        };
        self.out.push(Effect { line, piped });
    }

    /// A write of the buffer: to `:edit`'s file where one was opened.
    fn write_buffer(&mut self) {
        if let Some(b) = self.buffer.clone() {
            self.emit(&format!("tee {}", quote(&b)), false);
        }
    }
}

fn ex_line(text: &str, depth: usize, ex: &mut Ex) {
    if depth > 4 || ex.out.len() > 64 {
        return;
    }
    let mut rest = text;
    while !rest.trim().is_empty() {
        rest = ex_command(rest, depth, ex);
    }
}

/// Judges the first command of `text` and returns what follows its `|`.
fn ex_command<'a>(text: &'a str, depth: usize, ex: &mut Ex) -> &'a str {
    let mut t = text.trim_start_matches([':', ' ', '\t']);
    // Modifiers, each with or without its own bang (`silent!`).
    loop {
        let word_len = t
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(t.len());
        let word = &t[..word_len];
        if word_len > 0 && MODIFIERS.contains(&word) {
            t = t[word_len..].strip_prefix('!').unwrap_or(&t[word_len..]);
            // `verbose 2`, `tab 3`: a count.
            t = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ' || c == '\t');
            t = t.trim_start_matches(':');
            continue;
        }
        break;
    }
    // A range: `%`, `1,5`, `.`, `$`, marks, patterns.
    let before_range = t;
    t = skip_range(t);
    let ranged = t.len() != before_range.len();
    if let Some(cmd) = t.strip_prefix('!') {
        // `:!CMD` runs CMD; `:{range}!CMD` filters those lines through it. The rest of the
        // line is the shell command, `|` included.
        ex.emit(cmd, ranged);
        return "";
    }
    let mut name_len = t
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(t.len());
    // `:py3`, `:py3file`, `:py3do`.
    if t[..name_len] == *"py" && t[name_len..].starts_with('3') {
        name_len += 1 + t[name_len + 1..]
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(t.len() - name_len - 1);
    }
    let name = &t[..name_len];
    let mut after = &t[name_len..];
    // A bang right after the name forces the command (`:w! FILE`), but for `:r!CMD`, which
    // reads what CMD prints; `:w !CMD`, with a blank, gives CMD the buffer.
    let read = matches!(name, "r" | "re" | "rea" | "read");
    if !read && after.starts_with('!') {
        after = &after[1..];
    }
    let arg_of = |a: &'a str| -> (&'a str, &'a str) { split_bar(a) };
    match name {
        "" => {
            let (_, next) = arg_of(after);
            next
        }
        "r" | "re" | "rea" | "read" | "w" | "wr" | "wri" | "writ" | "write" => {
            let a = after.trim_start_matches(' ');
            if let Some(cmd) = a.strip_prefix('!') {
                // `:w !CMD` gives CMD the buffer; `:r !CMD` reads what CMD prints.
                ex.emit(cmd, name.starts_with('w'));
                return "";
            }
            let (arg, next) = arg_of(a);
            let arg = without_plus_options(arg.trim());
            let arg = arg.strip_prefix(">>").map_or(arg, str::trim);
            if !arg.is_empty() {
                let word = quote(arg);
                if name.starts_with('w') {
                    ex.emit(&format!("tee {word}"), false);
                } else {
                    ex.emit(&format!("cat {word}"), false);
                }
            } else if name.starts_with('w') {
                ex.write_buffer();
            }
            next
        }
        "sav" | "save" | "savea" | "saveas" | "wq" | "x" | "xi" | "xit" | "exi" | "exit" | "up"
        | "upd" | "upda" | "updat" | "update" | "wn" | "wne" | "wnext" | "wN" | "wNext" | "wp"
        | "wpr" | "wprevious" => {
            let (arg, next) = arg_of(after);
            let arg = without_plus_options(arg.trim());
            let arg = arg.strip_prefix(">>").map_or(arg, str::trim);
            if !arg.is_empty() {
                ex.emit(&format!("tee {}", quote(arg)), false);
            } else {
                ex.write_buffer();
            }
            next
        }
        "wa" | "wall" | "xa" | "xall" | "wqa" | "wqall" => {
            ex.write_buffer();
            split_bar(after).1
        }
        // Files these write: a redirection of messages, a session, a view, a vimrc, the
        // viminfo or ShaDa file.
        "redi" | "redir" | "mks" | "mksession" | "mkvie" | "mkview" | "mkv" | "mkvimrc"
        | "mkexrc" | "mk" | "wv" | "wviminfo" | "wsh" | "wshada" => {
            let (arg, next) = arg_of(after);
            let arg = arg.trim().trim_start_matches(['>', ' ']);
            let to_variable = after.trim_start().starts_with("=>")
                || after.trim_start().starts_with("@")
                || arg.eq_ignore_ascii_case("end")
                || arg.eq_ignore_ascii_case("END");
            if !arg.is_empty() && !to_variable {
                ex.emit(&format!("tee {}", quote(arg)), false);
            }
            next
        }
        // `:cd`: later relative names and commands are from there.
        "cd" | "chd" | "chdir" | "lcd" | "lch" | "lchdir" | "tcd" | "tch" | "tchdir" => {
            let (arg, next) = arg_of(after);
            let arg = arg.trim();
            // `:cd` alone goes home.
            let arg = if arg.is_empty() { "~" } else { arg };
            if arg != "-" {
                ex.cd = Some(match &ex.cd {
                    Some(before) if !arg.starts_with(['/', '~', '$']) => format!("{before}/{arg}"),
                    _ => arg.to_string(),
                });
            }
            next
        }
        // A file opened for editing: a bare `:w` then writes it.
        "e" | "ed" | "edi" | "edit" | "new" | "vne" | "vnew" | "sp" | "spl" | "split" | "vs"
        | "vsp" | "vsplit" | "tabe" | "tabedit" | "tabnew" | "vie" | "view" | "fin" | "find" => {
            let (arg, next) = arg_of(after);
            let arg = arg.trim();
            if let Some(cmd) = arg.strip_prefix('!') {
                ex.emit(cmd, false);
            } else if !arg.is_empty() && !arg.starts_with('+') {
                ex.buffer = Some(arg.to_string());
            }
            next
        }
        // A command for every buffer, argument, window, tab or quickfix entry.
        "bufdo" | "bufd" | "argdo" | "argd" | "windo" | "wind" | "tabdo" | "tabd" | "cdo"
        | "cfdo" | "cfd" | "ldo" | "lfdo" | "lfd" => {
            ex_line(after, depth + 1, ex);
            ""
        }
        "se" | "set" | "setl" | "setlocal" | "setg" | "setglobal" => {
            let (arg, next) = arg_of(after);
            for (option, value) in set_assignments(arg) {
                match option.as_str() {
                    "makeprg" | "mp" => ex.makeprg = Some(value),
                    "grepprg" | "gp" => ex.grepprg = Some(value),
                    "shell" | "sh" | "shellcmdflag" | "shcf" | "shellpipe" | "sp"
                    | "shellredir" | "srr" | "keywordprg" | "kp" | "equalprg" | "ep"
                    | "formatprg" | "fp" | "errorfile" | "ef" => {
                        // What later commands run or write through: not followed.
                        ex.emit(UNKNOWN, false);
                    }
                    _ => {}
                }
            }
            next
        }
        "mak" | "make" | "lmak" | "lmake" => {
            let (args, next) = arg_of(after);
            let program = ex.makeprg.clone().unwrap_or_else(|| "make".to_string());
            ex.emit(&format!("{program} {}", args.trim()), false);
            next
        }
        "gr" | "grep" | "lgr" | "lgrep" | "grepa" | "grepadd" => {
            let (args, next) = arg_of(after);
            if let Some(program) = ex.grepprg.clone() {
                ex.emit(&format!("{program} {}", args.trim()), false);
            }
            next
        }
        "ter" | "term" | "termi" | "termin" | "termina" | "terminal" => {
            // `:terminal [++opts] CMD`: the rest of the line.
            let cmd = after
                .trim_start()
                .split(' ')
                .skip_while(|w| w.starts_with("++"))
                .collect::<Vec<_>>()
                .join(" ");
            if !cmd.trim().is_empty() {
                ex.emit(&cmd, false);
            }
            ""
        }
        "exe" | "exec" | "execu" | "execut" | "execute" => {
            let (expr, next) = arg_of(after);
            match string_concatenation(expr) {
                Some(built) => ex_line(&built, depth + 1, ex),
                None => ex.emit(DYNAMIC, false),
            }
            next
        }
        "so" | "sou" | "sour" | "sourc" | "source" | "ru" | "runtime" | "luafile" | "py3f"
        | "py3file" | "pyf" | "pyfile" | "pyxf" | "pyxfile" | "rubyf" | "rubyfile" => {
            // Code from a file, or per line: not followed.
            ex.emit(UNKNOWN, false);
            split_bar(after).1
        }
        "lua" | "py3" | "python3" | "py" | "python" | "pyx" | "pythonx" | "perl" | "pe"
        | "ruby" | "rub" | "tcl" | "luado" | "py3do" | "pydo" | "pyxdo" | "perld" | "perldo"
        | "rubyd" | "rubydo" | "tcld" | "tcldo" => {
            // Inline code, judged as that interpreter's `-c`/`-e` (the rest of the line).
            let code = after.trim();
            let (program, flag) = match name.trim_end_matches("do").trim_end_matches('d') {
                "lua" => ("lua", "-e"),
                "perl" | "pe" | "per" => ("perl", "-e"),
                "ruby" | "rub" => ("ruby", "-e"),
                "tcl" => ("tclsh", "-c"),
                _ => ("python3", "-c"),
            };
            if code.is_empty() || code.starts_with("<<") {
                ex.emit(UNKNOWN, false);
            } else {
                ex.emit(&format!("{program} {flag} {}", quote(code)), false);
            }
            ""
        }
        "cal" | "call" | "let" | "echo" | "ec" | "eval" | "unl" | "unlet" | "if" | "while"
        | "for" | "return" | "th" | "throw" | "echom" | "echomsg" => {
            let (expr, next) = arg_of(after);
            vim_expression(expr, ex);
            next
        }
        "norm" | "norma" | "normal" => {
            // Keys typed in normal mode: `!!CMD` filters the line through CMD, `!{motion}CMD`
            // a range, `:` starts an ex command.
            if let Some(at) = after.find('!') {
                let cmd = after[at..].trim_start_matches('!');
                let cmd = cmd
                    .trim_start_matches(|c: char| !c.is_ascii_alphabetic() && c != '/' && c != '.');
                ex.emit(cmd.split(['\r', '\n']).next().unwrap_or(cmd), true);
            }
            if let Some(at) = after.find(':') {
                ex_line(&after[at + 1..], depth + 1, ex);
            }
            // `ZZ` writes the buffer.
            if after.contains("ZZ") {
                ex.write_buffer();
            }
            ""
        }
        "g" | "gl" | "glo" | "glob" | "globa" | "global" | "v" | "vg" | "vglobal" => {
            // `:g/pat/CMD`: CMD for each line.
            let a = after.trim_start();
            if let Some(sep) = a.chars().next().filter(|c| !c.is_alphanumeric()) {
                let body = &a[sep.len_utf8()..];
                if let Some(end) = body.find(sep) {
                    ex_line(&body[end + sep.len_utf8()..], depth + 1, ex);
                    return "";
                }
            }
            ""
        }
        "s" | "su" | "substitute" => {
            // `\=` in a replacement evaluates an expression.
            if after.contains("\\=") {
                vim_expression(after, ex);
            }
            ""
        }
        "au" | "autocmd" | "com" | "command" | "fu" | "function" | "def" | "map" | "nmap"
        | "imap" | "cmap" | "vmap" | "xmap" | "omap" | "nnoremap" | "inoremap" | "noremap"
        | "cnoremap" | "vnoremap" | "xnoremap" | "onoremap" => {
            // A command, mapping or function defined for later: not followed.
            ex.emit(UNKNOWN, false);
            ""
        }
        _ => split_bar(after).1,
    }
}

/// A file argument without the `++opt` words before it (`:w ++ff=unix FILE`).
fn without_plus_options(arg: &str) -> &str {
    let mut rest = arg;
    while rest.starts_with("++") {
        rest = rest
            .split_once(char::is_whitespace)
            .map_or("", |(_, r)| r.trim_start());
    }
    rest
}

/// Past a range at the start of an ex command.
fn skip_range(t: &str) -> &str {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' | b'.' | b'$' | b',' | b';' | b'+' | b'-' | b'0'..=b'9' | b' ' => i += 1,
            b'\'' if i + 1 < b.len() => i += 2,
            sep @ (b'/' | b'?') => {
                i += 1;
                while i < b.len() && b[i] != sep {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => break,
        }
    }
    &t[i.min(t.len())..]
}

/// The argument of a command up to an unquoted `|`, and what follows it.
fn split_bar(a: &str) -> (&str, &str) {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in a.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q && prev != '\\' => quote = None,
            (None, '|') if prev != '\\' => return (&a[..i], &a[i + 1..]),
            _ => {}
        }
        prev = c;
    }
    (a, "")
}

/// The string literals of a vim or Lisp expression, in order: `"…"` with backslash escapes,
/// and vim's `'…'` with `''` for a quote (`lisp` false).
fn string_literals(expr: &str, lisp: bool) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = expr.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        if c == '"' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i].1 != '"' {
                if chars[i].1 == '\\' && i + 1 < chars.len() {
                    i += 1;
                    s.push(match chars[i].1 {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                } else {
                    s.push(chars[i].1);
                }
                i += 1;
            }
            out.push((at, s));
        } else if c == '\'' && !lisp {
            let mut s = String::new();
            i += 1;
            while i < chars.len() {
                if chars[i].1 == '\'' {
                    if chars.get(i + 1).is_some_and(|n| n.1 == '\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                s.push(chars[i].1);
                i += 1;
            }
            out.push((at, s));
        }
        i += 1;
    }
    out
}

/// A vim expression that is only string literals joined by `.` or `..` (their text put
/// together) or given as several arguments (joined by a blank, as `:execute` joins them).
fn string_concatenation(expr: &str) -> Option<String> {
    let literals = string_literals(expr, false);
    if literals.is_empty() {
        return None;
    }
    let mut built = String::new();
    let mut between = String::new();
    let mut quote: Option<char> = None;
    let mut next_literal = literals.iter().map(|(_, s)| s.as_str());
    for c in expr.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                if !built.is_empty() && !between.contains('.') {
                    built.push(' ');
                }
                if !between.chars().all(|b| b == '.' || b.is_whitespace()) {
                    return None;
                }
                between.clear();
                built.push_str(next_literal.next()?);
            }
            None => between.push(c),
        }
    }
    between
        .chars()
        .all(|b| b == '.' || b.is_whitespace())
        .then_some(built)
}

/// The second argument of the call of `name` in `expr`, as text (commas inside brackets,
/// parentheses and quotes belong to their argument).
fn second_argument(expr: &str, name: &str) -> Option<String> {
    let at = expr.find(&format!("{name}("))? + name.len() + 1;
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut args = vec![String::new()];
    for c in expr[at..].chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')') if depth == 0 => break,
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                args.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = args.last_mut() {
            last.push(c);
        }
    }
    args.get(1).cloned()
}

/// `:set`'s `NAME=VALUE` items (`\ ` an escaped blank inside a value).
fn set_assignments(arg: &str) -> Vec<(String, String)> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut chars = arg.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => items.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    items.push(current);
    items
        .into_iter()
        .filter_map(|i| {
            let (name, value) = i.split_once(['=', ':'])?;
            let name = name.trim_end_matches(['+', '^', '-']);
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

/// The effects of the vim functions called in `expr` that run programs or change files.
fn vim_expression(expr: &str, ex: &mut Ex) {
    let literals = string_literals(expr, false);
    let after = |name: &str| -> Vec<String> {
        expr.match_indices(name)
            .filter(|(at, _)| {
                // A whole function name, followed by its parenthesis.
                !expr[..*at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#')
                    && expr[at + name.len()..].trim_start().starts_with('(')
            })
            .filter_map(|(at, _)| {
                literals
                    .iter()
                    .find(|(l, _)| *l > at)
                    .map(|(_, s)| s.clone())
            })
            .collect()
    };
    let calls = |names: &[&str]| -> bool {
        names.iter().any(|n| {
            expr.match_indices(n).any(|(at, _)| {
                !expr[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#')
                    && expr[at + n.len()..].trim_start().starts_with('(')
            })
        })
    };
    // Programs run by a string (a shell line) or a list (an argv); one the expression
    // builds cannot be identified before it runs.
    for name in [
        "systemlist",
        "system",
        "jobstart",
        "job_start",
        "termopen",
        "term_start",
    ] {
        for (at, _) in expr.match_indices(name) {
            let whole = !expr[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#');
            let rest = &expr[at + name.len()..];
            let Some(args) = rest.trim_start().strip_prefix('(').filter(|_| whole) else {
                continue;
            };
            let args = args.trim_start();
            if args.starts_with('[') {
                let list_end = args.find(']').unwrap_or(args.len());
                let words: Vec<String> = string_literals(&args[..list_end], false)
                    .into_iter()
                    .map(|(_, s)| quote(&s))
                    .collect();
                if words.is_empty() {
                    ex.emit(DYNAMIC, false);
                } else {
                    ex.emit(&words.join(" "), false);
                }
            } else if args.starts_with(['"', '\'']) {
                match string_literals(args, false).first() {
                    Some((_, s)) => ex.emit(s, false),
                    None => ex.emit(DYNAMIC, false),
                }
            } else {
                ex.emit(DYNAMIC, false);
            }
        }
    }
    // `execute("w /x")`, `execute(['w /x'])`: ex commands.
    for (at, _) in expr.match_indices("execute(") {
        let whole = !expr[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#');
        if !whole {
            continue;
        }
        let args = &expr[at + "execute(".len()..];
        let literals = string_literals(args, false);
        if literals.is_empty() || !args.trim_start().starts_with(['"', '\'', '[']) {
            ex.emit(DYNAMIC, false);
        }
        for (_, l) in literals.iter().take(8) {
            ex_line(l, 4, ex);
        }
    }
    for path in after("delete") {
        let recursive = expr.contains("'rf'") || expr.contains("\"rf\"");
        let line = if recursive {
            format!("rm -rf {}", quote(&path))
        } else {
            format!("rm -f {}", quote(&path))
        };
        ex.emit(&line, false);
    }
    for name in ["writefile", "rename", "mkdir", "setfperm", "filecopy"] {
        if !calls(&[name]) {
            continue;
        }
        // writefile(LINES, FILE, FLAGS): the file is its second argument; the others name
        // theirs in order.
        let paths: Vec<String> = literals.iter().map(|(_, s)| s.clone()).collect();
        if name == "writefile" {
            match second_argument(expr, "writefile") {
                Some(arg) => match string_literals(&arg, false).first() {
                    Some((_, file)) if arg.trim_start().starts_with(['"', '\'']) => {
                        ex.emit(&format!("tee {}", quote(file)), false)
                    }
                    _ => ex.emit("tee \"$FENCE_EDITOR_PATH\"", false),
                },
                None => ex.emit(UNKNOWN, false),
            }
            continue;
        }
        match (name, paths.as_slice()) {
            ("rename" | "filecopy", [from, to, ..]) => {
                let verb = if name == "rename" { "mv" } else { "cp" };
                ex.emit(&format!("{verb} {} {}", quote(from), quote(to)), false);
            }
            ("mkdir", [dir, ..]) => ex.emit(&format!("mkdir -p {}", quote(dir)), false),
            ("setfperm", [file, ..]) => ex.emit(&format!("chmod 777 {}", quote(file)), false),
            _ => ex.emit(UNKNOWN, false),
        }
    }
    // Code evaluated from a string, or a function the expression builds.
    if calls(&[
        "eval",
        "luaeval",
        "py3eval",
        "pyeval",
        "pyxeval",
        "perleval",
        "rubyeval",
        "libcall",
        "libcallnr",
        "call",
        "function",
        "funcref",
        "dictwatcheradd",
        "timer_start",
        "ch_open",
        "sockconnect",
        "serverlist",
        "remote_send",
        "remote_expr",
    ]) {
        ex.emit(UNKNOWN, false);
    }
}

/// The effects of ed's script (each line a command; `!CMD` runs a shell line, `w FILE`
/// writes, `r FILE` reads, `e !CMD` and `r !CMD` run one).
pub fn ed_effects(script: &str) -> Vec<Effect> {
    let mut out = Vec::new();
    let mut inserting = false;
    for line in script.lines() {
        if inserting {
            inserting = line.trim_end() != ".";
            continue;
        }
        if takes_text(line) {
            inserting = true;
            continue;
        }
        let t = skip_range(line.trim_start());
        if let Some(cmd) = t.strip_prefix('!') {
            shell(cmd, false, &mut out);
            continue;
        }
        let name_len = t
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(t.len());
        let (name, arg) = (&t[..name_len], t[name_len..].trim());
        match name {
            "w" | "W" | "wq" | "r" | "e" | "E" | "f" => {
                if let Some(cmd) = arg.strip_prefix('!') {
                    shell(cmd, name.starts_with(['w', 'W']), &mut out);
                } else if !arg.is_empty() {
                    let verb = if name.starts_with(['w', 'W']) || name == "f" {
                        "tee"
                    } else {
                        "cat"
                    };
                    shell(&format!("{verb} {}", quote(arg)), false, &mut out);
                }
            }
            _ => {}
        }
    }
    out
}

/// The effects of Emacs Lisp code (`emacs --batch --eval CODE`): the functions that run
/// programs or change files, their arguments taken where they are string literals.
pub fn elisp_effects(code: &str) -> Vec<Effect> {
    let mut out = Vec::new();
    let literals = string_literals(code, true);
    // The string literals inside the form that opens at `at`.
    let form_literals = |at: usize| -> (Vec<String>, String) {
        let mut depth = 0usize;
        let mut end = code.len();
        let mut in_string = false;
        let mut prev = ' ';
        for (i, c) in code[at..].char_indices() {
            match c {
                '"' if prev != '\\' => in_string = !in_string,
                '(' if !in_string => depth += 1,
                ')' if !in_string => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = at + i;
                        break;
                    }
                }
                _ => {}
            }
            prev = c;
        }
        let strings = literals
            .iter()
            .filter(|(l, _)| *l > at && *l < end)
            .map(|(_, s)| s.clone())
            .collect();
        (strings, code[at..end].to_string())
    };
    let mut understood = true;
    // The forms outside string literals (a form inside one is `read`'s, read then).
    let mut in_string = vec![false; code.len()];
    let mut inside = false;
    let mut escaped = false;
    for (i, c) in code.char_indices() {
        if inside && c == '\\' && !escaped {
            escaped = true;
            in_string[i] = true;
            continue;
        }
        if c == '"' && !escaped {
            inside = !inside;
        }
        escaped = false;
        in_string[i] = inside;
    }
    for (at, _) in code.match_indices('(').filter(|(at, _)| !in_string[*at]) {
        let head: String = code[at + 1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ')' && *c != '(')
            .collect();
        let (strings, form) = form_literals(at);
        let first = strings.first().cloned();
        match head.as_str() {
            "shell-command"
            | "shell-command-to-string"
            | "async-shell-command"
            | "start-process-shell-command"
            | "call-process-shell-command"
            | "process-file-shell-command" => {
                // start-process-shell-command NAME BUFFER COMMAND: its last string.
                let line = if head.starts_with("start-process") {
                    strings.last().cloned()
                } else {
                    first
                };
                match line {
                    Some(l) => shell(&l, false, &mut out),
                    None => understood = false,
                }
            }
            "call-process"
            | "process-lines"
            | "process-file"
            | "start-process"
            | "make-process"
            | "call-process-region" => {
                // start-process NAME BUFFER PROGRAM ARGS…: the program is the third.
                let argv: Vec<String> = if head == "start-process" {
                    strings.iter().skip(1).cloned().collect()
                } else if head == "make-process" {
                    // `:command '("prog" "arg"…)`.
                    form.find(":command")
                        .map(|at| {
                            let list = &form[at..];
                            let end = list.find(')').unwrap_or(list.len());
                            string_literals(&list[..end], true)
                                .into_iter()
                                .map(|(_, s)| s)
                                .collect()
                        })
                        .unwrap_or_default()
                } else {
                    strings.clone()
                };
                if argv.is_empty() {
                    shell(DYNAMIC, false, &mut out);
                } else {
                    let words: Vec<String> = argv.iter().map(|w| quote(w)).collect();
                    shell(&words.join(" "), false, &mut out);
                }
            }
            "delete-directory" => match first {
                Some(p) => {
                    let recursive = form.trim_end().ends_with(" t") || form.contains(" t ");
                    let verb = if recursive { "rm -rf" } else { "rmdir" };
                    shell(&format!("{verb} {}", quote(&p)), false, &mut out);
                }
                // A folder the code works out: a deletion of a path not known before.
                None => shell("rm -rf \"$FENCE_EDITOR_PATH\"", false, &mut out),
            },
            "delete-file" | "move-file-to-trash" => match first {
                Some(p) => shell(&format!("rm -f {}", quote(&p)), false, &mut out),
                None => understood = false,
            },
            "write-region"
            | "append-to-file"
            | "write-file"
            | "with-temp-file"
            | "find-file"
            | "find-file-literally"
            | "set-file-modes"
            | "make-symbolic-link"
            | "add-name-to-file"
            | "copy-directory"
            | "make-directory"
            | "copy-file"
            | "rename-file" => {
                // The file written is a literal among its arguments (the last for
                // write-region, the second for copies, links and moves).
                let target = match head.as_str() {
                    "copy-file" | "rename-file" | "make-symbolic-link" | "add-name-to-file"
                    | "copy-directory" => strings.get(1).cloned(),
                    "write-region" | "append-to-file" => strings.last().cloned(),
                    _ => first,
                };
                match target {
                    Some(p) => shell(&format!("tee {}", quote(&p)), false, &mut out),
                    None => understood = false,
                }
                if head == "rename-file"
                    && let Some(from) = strings.first()
                {
                    shell(&format!("rm -f {}", quote(from)), false, &mut out);
                }
            }
            // `(eval (read "CODE"))`: the code in the string.
            "read" => match first {
                Some(inner) => out.extend(elisp_effects(&inner)),
                None => shell(DYNAMIC, false, &mut out),
            },
            "eval" if form.contains("(read \"") => {}
            // A function or program the code works out when it runs.
            "funcall" | "apply" | "intern" => shell(DYNAMIC, false, &mut out),
            "eval" if !form.contains("(read ") => shell(DYNAMIC, false, &mut out),
            "load"
            | "load-file"
            | "require"
            | "url-retrieve"
            | "url-retrieve-synchronously"
            | "open-network-stream"
            | "make-network-process" => {
                understood = false;
            }
            _ => {}
        }
    }
    if !understood {
        shell(UNKNOWN, false, &mut out);
    }
    out
}

/// An editor's name as the tables know it: Debian's builds of vim (`vim.basic`,
/// `vim.tiny`, `vim.nox`, `vim.gtk3`) are vim.
pub fn canonical(name: &str) -> &str {
    match name.split_once('.') {
        Some(("vim" | "vi" | "gvim" | "nvim", _)) => "vim",
        _ => name,
    }
}

/// Which of an editor's words (`args[0]` its name) are files it edits, and which files
/// its options write (vim's `-w`/`-W` keystroke logs and `-i` viminfo): the values of its
/// options and `+` commands are neither. `None` for a program that is no editor here.
pub fn files(name: &str, args: &[&str]) -> Option<(Vec<usize>, Vec<usize>)> {
    let vi = matches!(
        name,
        "vi" | "vim"
            | "nvim"
            | "ex"
            | "view"
            | "gvim"
            | "rvim"
            | "rview"
            | "vimdiff"
            | "gview"
            | "evim"
    );
    let emacs = matches!(name, "emacs" | "emacsclient");
    if !vi && !emacs {
        return None;
    }
    let mut edited = Vec::new();
    let mut written = Vec::new();
    let mut i = 1;
    let mut options_end = false;
    while i < args.len() {
        let a = args[i];
        if options_end || !(a.starts_with('-') || (vi && a.starts_with('+'))) || a == "-" {
            edited.push(i);
            i += 1;
            continue;
        }
        if a == "--" {
            options_end = true;
            i += 1;
            continue;
        }
        let takes_value = if vi {
            match a {
                "--cmd" | "--startuptime" | "--servername" | "--remote-send" | "--remote-expr"
                | "--listen" | "--socketid" | "--log" => true,
                _ if a.starts_with("--") || a.starts_with('+') => false,
                // Bunched flags end with the one that takes a value (`-esc CMD`).
                _ => a[1..]
                    .chars()
                    .last()
                    .is_some_and(|c| "cSuUiTwWqt".contains(c)),
            }
        } else {
            matches!(
                a,
                "--eval"
                    | "-eval"
                    | "--execute"
                    | "-execute"
                    | "-l"
                    | "--load"
                    | "-f"
                    | "--funcall"
                    | "-L"
                    | "--directory"
                    | "--script"
                    | "-script"
                    | "-u"
                    | "--user"
                    | "--chdir"
                    | "-t"
                    | "--terminal"
                    | "-d"
                    | "--display"
                    | "-e"
                    | "-s"
                    | "--socket-name"
                    | "-a"
                    | "--alternate-editor"
            )
        };
        if takes_value {
            if vi && (a.ends_with('w') || a.ends_with('W') || a.ends_with('i')) && a.len() == 2 {
                written.push(i + 1);
            }
            if vi && matches!(a, "--startuptime" | "--log") {
                written.push(i + 1);
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    written.retain(|&k| k < args.len());
    Some((edited, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(effects: Vec<Effect>) -> Vec<String> {
        effects.into_iter().map(|e| e.line).collect()
    }

    #[test]
    fn ex_commands_become_the_shell_lines_that_do_the_same() {
        assert_eq!(lines(ex_effects("w /etc/hosts")), ["tee '/etc/hosts'"]);
        assert_eq!(lines(ex_effects(":w! ~/.bashrc")), ["tee ~/'.bashrc'"]);
        assert_eq!(
            lines(ex_effects("write >> /etc/hosts")),
            ["tee '/etc/hosts'"]
        );
        assert_eq!(lines(ex_effects("saveas /etc/x")), ["tee '/etc/x'"]);
        assert_eq!(
            lines(ex_effects("%d|w /etc/hosts|q!")),
            ["tee '/etc/hosts'"]
        );
        assert_eq!(
            lines(ex_effects("wq! /usr/local/bin/t")),
            ["tee '/usr/local/bin/t'"]
        );
        assert_eq!(lines(ex_effects("silent !rm -rf ~")), ["rm -rf ~"]);
        assert_eq!(lines(ex_effects("silent! !rm -rf ~")), ["rm -rf ~"]);
        assert_eq!(lines(ex_effects("!ls | sh")), ["ls | sh"]);
        assert_eq!(lines(ex_effects("exe \"!rm -rf ~\"")), ["rm -rf ~"]);
        assert_eq!(lines(ex_effects("exe '!rm' . ' -rf ~'")), ["rm -rf ~"]);
        assert_eq!(lines(ex_effects("call system(\"rm -rf ~\")")), ["rm -rf ~"]);
        assert_eq!(
            lines(ex_effects("call jobstart(['rm', '-rf', '/srv'])")),
            ["'rm' '-rf' '/srv'"]
        );
        assert_eq!(lines(ex_effects("terminal rm -rf ~")), ["rm -rf ~"]);
        assert_eq!(lines(ex_effects("r /etc/shadow")), ["cat '/etc/shadow'"]);
        assert_eq!(
            lines(ex_effects("py3 import shutil; shutil.rmtree('/srv')")),
            ["python3 -c 'import shutil; shutil.rmtree('\\''/srv'\\'')'"]
        );
        let w = ex_effects("w !sh");
        assert_eq!(lines(w.clone()), ["sh"]);
        assert!(w[0].piped);
        assert!(ex_effects("%!sort")[0].piped);
        assert!(!ex_effects("!make")[0].piped);
        // What cannot be worked out is no rule's.
        assert_eq!(lines(ex_effects("exe g:cmd")), [DYNAMIC]);
        assert_eq!(lines(ex_effects("call system(g:cmd)")), [DYNAMIC]);
        assert_eq!(lines(ex_effects("source ~/evil.vim")), [UNKNOWN]);
        // Edits of the buffer and plain writes of the file do nothing beyond it.
        assert!(ex_effects("%s/a/b/g|wq").is_empty());
        assert!(ex_effects("set ts=4|x").is_empty());
        assert!(ex_effects("g/^#/d").is_empty());
        assert!(ex_effects("42").is_empty());
    }

    #[test]
    fn commands_for_each_buffer_folders_and_opened_files_are_followed() {
        assert_eq!(
            lines(ex_effects("bufdo !git push -f origin main")),
            ["git push -f origin main"]
        );
        assert_eq!(lines(ex_effects("argdo w! /tmp/x")), ["tee '/tmp/x'"]);
        assert_eq!(
            lines(ex_effects("exe \"!touch\" \"/tmp/e1\"")),
            ["touch /tmp/e1"]
        );
        assert_eq!(lines(ex_effects("exe '!rm' . ' -rf ~'")), ["rm -rf ~"]);
        assert_eq!(lines(ex_effects("w $HOME/e3")), ["tee $HOME/e3"]);
        assert_eq!(
            lines(ex_script_effects(&["cd /tmp/out|w e3b", "!make"])),
            ["cd '/tmp/out' && tee 'e3b'", "cd '/tmp/out' && make"]
        );
        assert_eq!(
            lines(ex_effects("e /etc/hosts | %d | w")),
            ["tee '/etc/hosts'"]
        );
        assert_eq!(lines(ex_effects("redir! > /tmp/log")), ["tee '/tmp/log'"]);
        assert_eq!(
            lines(ex_effects("w ++ff=unix /etc/cron.d/x")),
            ["tee '/etc/cron.d/x'"]
        );
        assert_eq!(
            lines(ex_effects("w ~root/.bashrc")),
            ["tee ~root/'.bashrc'"]
        );
        assert_eq!(
            lines(ex_script_effects(&["cd", "w .bashrc"])),
            ["cd ~ && tee '.bashrc'"]
        );
        assert_eq!(lines(ex_effects("vert w /etc/x")), ["tee '/etc/x'"]);
        assert_eq!(
            lines(ex_effects(
                "call writefile([\"x\"], \"/etc/cron.d/x\", \"a\")"
            )),
            ["tee '/etc/cron.d/x'"]
        );
        assert_eq!(
            lines(ex_script_effects(&["e /etc/cron.d/x", "norm! ixZZ"])),
            ["tee '/etc/cron.d/x'"]
        );
        assert!(ex_effects("redir => g:out").is_empty());
        assert_eq!(lines(ex_effects("mksession! ~/s.vim")), ["tee ~/'s.vim'"]);
        assert_eq!(
            lines(ex_effects("call execute(\"w /tmp/e5\")")),
            ["tee '/tmp/e5'"]
        );
        assert_eq!(
            lines(ex_effects("call system([\"git\", \"push\", \"-f\"])")),
            ["'git' 'push' '-f'"]
        );
        assert_eq!(
            lines(ex_effects("set makeprg=git\\ push\\ -f|make")),
            ["git push -f "]
        );
        assert_eq!(
            lines(ex_effects("normal! !!git push -f origin main")),
            ["git push -f origin main"]
        );
        assert_eq!(
            lines(ex_effects("py3do import os; os.remove('/etc/x')")),
            ["python3 -c 'import os; os.remove('\\''/etc/x'\\'')'"]
        );
    }

    #[test]
    fn ed_scripts_and_elisp_become_shell_lines() {
        assert_eq!(
            lines(ed_effects("1d\nw /etc/hosts\nq\n")),
            ["tee '/etc/hosts'"]
        );
        assert_eq!(lines(ed_effects("!rm -rf ~\nq\n")), ["rm -rf ~"]);
        assert!(ed_effects(",s/a/b/g\nw\nq\n").is_empty());
        // Text after `a`, `i` and `c` is no command.
        assert!(ed_effects("1i\nr /etc/os-release shows the distro\n.\nw\nq\n").is_empty());
        assert!(ex_script_effects(&["$a", "e ~/notes for details", ".", "x"]).is_empty());
        assert_eq!(
            lines(elisp_effects("(shell-command \"rm -rf ~\")")),
            ["rm -rf ~"]
        );
        assert_eq!(
            lines(elisp_effects("(delete-directory \"~\" t)")),
            ["rm -rf ~"]
        );
        assert_eq!(
            lines(elisp_effects(
                "(progn (find-file \"x\") (write-region nil nil \"/etc/hosts\"))"
            )),
            ["tee 'x'", "tee '/etc/hosts'"]
        );
        assert_eq!(
            lines(elisp_effects(
                "(call-process \"git\" nil t nil \"push\" \"origin\" \"main\")"
            )),
            ["'git' 'push' 'origin' 'main'"]
        );
        assert_eq!(lines(elisp_effects("(eval (read x))")), [DYNAMIC]);
        assert_eq!(
            lines(elisp_effects(
                "(funcall (intern \"shell-command\") \"rm -rf ~\")"
            )),
            [DYNAMIC, DYNAMIC]
        );
        assert_eq!(
            lines(elisp_effects(
                "(make-process :name \"x\" :command '(\"rm\" \"-rf\" \"~\"))"
            )),
            ["'rm' '-rf' ~"]
        );
        assert_eq!(
            lines(elisp_effects(
                "(eval (read \"(shell-command \\\"rm -rf ~\\\")\"))"
            )),
            ["rm -rf ~"]
        );
        assert!(elisp_effects("(message \"hi\")").is_empty());
    }
}

//! Shell builtins that set values the rest of the line uses: `set --` and `shift` (the
//! positional parameters), `printf -v`, `read` and `mapfile` (variables and arrays), and
//! the array subscripts they, and `test -v`, evaluate (`read 'a[$(cmd)]'` runs cmd).
//! What they set is followed where the line tells it (`read X <<< /` sets X to `/`),
//! and is not known otherwise.

use crate::command::Invocation;
use crate::opts::{self, OptSpec};
use crate::walk::Walker;
use crate::word::{self, Arg, Noticed};

/// A variable name as `printf -v`, `read` and `mapfile` take it, without a subscript.
fn variable_name(target: &str) -> &str {
    target.split('[').next().unwrap_or(target)
}

/// What `printf FORMAT ARGS…` prints when the format holds only text, `%s` and `%%`
/// (each `%s` takes the next argument; the format is used again while arguments are
/// left, as printf does). `None` for anything else (escapes, other conversions).
fn printf_output(format: &str, args: &[&str]) -> Option<String> {
    if format.contains('\\') {
        return None;
    }
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut chars = format.chars();
        let mut consumed = false;
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('s') => {
                    out.push_str(args.get(next).copied().unwrap_or(""));
                    next += 1;
                    consumed = true;
                }
                _ => return None,
            }
        }
        if !consumed || next >= args.len() {
            return Some(out);
        }
    }
}

impl Walker<'_> {
    /// Runs the `$(…)` in an array subscript a builtin evaluates (`printf -v 'a[$(cmd)]'`).
    fn walk_subscript(&mut self, target: &Arg) {
        if let Some((_, index)) = target.text.split_once('[') {
            let mut noticed = Noticed::default();
            word::scan_substitutions(index, &mut noticed);
            self.walk_noticed(noticed);
        }
    }

    /// `set -- WORDS`, `set WORDS`: the positional parameters from here on.
    pub(crate) fn set_positional(&mut self, args: &[Arg]) {
        let words: Vec<&str> = args[1..].iter().map(|a| a.text.as_str()).collect();
        if !crate::command::set_changes_positional(&words) {
            return;
        }
        let mut i = 1;
        while let Some(a) = args.get(i) {
            let t = a.text.as_str();
            if t == "--" || t == "-" {
                i += 1;
                break;
            }
            if !t.starts_with(['-', '+']) {
                break;
            }
            i += if t[1..].contains('o') { 2 } else { 1 };
        }
        let zero = self
            .state
            .positional
            .as_ref()
            .and_then(|p| p.first().cloned())
            .flatten();
        let mut params = vec![zero];
        params.extend(
            args[i.min(args.len())..]
                .iter()
                .map(|a| a.known.then(|| a.text.clone())),
        );
        self.state.positional = Some(params);
    }

    /// `shift [N]`.
    pub(crate) fn shift_positional(&mut self, args: &[Arg]) {
        let n = match args.get(1) {
            None => Some(1),
            Some(a) => a.value().and_then(|v| v.parse::<usize>().ok()),
        };
        match (n, &mut self.state.positional) {
            (Some(n), Some(params)) if n < params.len() => {
                params.drain(1..=n);
            }
            // Shifting more than there are fails and changes nothing.
            (Some(_), Some(_)) => {}
            (None, _) => self.state.positional = None,
            (Some(_), None) => {}
        }
    }

    /// `unset [-v] NAME…`: each variable named is no longer known (its value is then the
    /// environment's, or none, as the shell's state goes: `${x:-rm}` after `unset x` is
    /// not the value the line gave x). `unset -f` removes functions and leaves variables.
    /// A name not known (`unset "$v"`) may be any variable: none is known after it.
    pub(crate) fn unset_variables(&mut self, args: &[Arg]) {
        let mut functions = false;
        for a in &args[1..] {
            match a.value() {
                Some("-f") => functions = true,
                Some("-v") => functions = false,
                Some(flag) if flag.starts_with('-') => {}
                Some(_) if functions => {}
                Some(name) => {
                    let name = variable_name(name).to_string();
                    self.set_var(&name, None);
                    self.state.arrays.insert(name, None);
                }
                None if functions => {}
                None => {
                    let names: Vec<String> = self.state.vars.keys().cloned().collect();
                    for name in names {
                        self.set_var(&name, None);
                    }
                    self.state.env_unknown = true;
                }
            }
        }
    }

    /// `printf -v NAME FORMAT ARGS…`: NAME is set to what printf would print.
    pub(crate) fn printf_to_variable(&mut self, args: &[Arg]) {
        let Some(v) = args.iter().position(|a| a.text == "-v") else {
            return;
        };
        let Some(target) = args.get(v + 1) else {
            return;
        };
        self.walk_subscript(target);
        let rest: Vec<&Arg> = args[v + 2..]
            .iter()
            .skip_while(|a| a.text == "--")
            .collect();
        let value = match rest.split_first() {
            Some((format, values)) if format.known && values.iter().all(|a| a.known) => {
                let values: Vec<&str> = values.iter().map(|a| a.text.as_str()).collect();
                printf_output(&format.text, &values)
            }
            _ => None,
        };
        if target.known && !target.text.contains('[') {
            self.set_var(&target.text, value);
        } else if target.known {
            self.set_var(variable_name(&target.text), None);
        }
    }

    /// `read [-r] [-a ARR] NAME…`: each NAME is set from the here-string or
    /// here-document on stdin when the line gives it, split at blanks (the last takes the
    /// rest); otherwise to a value not known.
    pub(crate) fn read_into_variables(&mut self, args: &[Arg], inv: &Invocation) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "adinNptu",
                long_arg: &[],
                permute: false,
            },
        );
        let raw = p.has('r', "");
        let delimited = p.has('d', "") || p.has('n', "") || p.has('N', "");
        let input = stdin_text(inv).filter(|t| raw || !t.contains('\\'));
        let line = input
            .as_deref()
            .filter(|_| !delimited)
            .map(|t| t.split('\n').next().unwrap_or(""));
        let blank = |c: char| matches!(c, ' ' | '\t');
        if let Some(array) = p.value_of('a', "").cloned() {
            self.walk_subscript(&array);
            let fields = line.map(|l| {
                l.split(blank)
                    .filter(|f| !f.is_empty())
                    .map(str::to_string)
                    .collect()
            });
            if array.known {
                self.set_var(variable_name(&array.text), None);
                self.state
                    .arrays
                    .insert(variable_name(&array.text).to_string(), fields);
            }
            return;
        }
        let names: Vec<Arg> = p.operands.iter().map(|&i| args[i].clone()).collect();
        let mut rest = line.map(|l| l.trim_matches(blank));
        for (k, target) in names.iter().enumerate() {
            self.walk_subscript(target);
            let value = match rest {
                Some(r) if k + 1 == names.len() => Some(r.to_string()),
                Some(r) => {
                    let (field, after) = r.split_once(blank).unwrap_or((r, ""));
                    rest = Some(after.trim_start_matches(blank));
                    Some(field.to_string())
                }
                None => None,
            };
            if target.known {
                let whole = !target.text.contains('[');
                self.set_var(variable_name(&target.text), value.filter(|_| whole));
            }
        }
        if names.is_empty() {
            self.set_var("REPLY", line.map(str::to_string));
        }
    }

    /// `mapfile [-t] ARR`, `readarray`: ARR holds the lines of the here-string or
    /// here-document on stdin when the line gives it.
    pub(crate) fn map_lines_into_array(&mut self, args: &[Arg], inv: &Invocation) {
        let p = opts::parse(
            args,
            1,
            &OptSpec {
                short_arg: "dnOsuCc",
                long_arg: &[],
                permute: false,
            },
        );
        let target = p
            .operands
            .first()
            .map(|&i| args[i].clone())
            .unwrap_or_else(|| Arg::literal("MAPFILE"));
        self.walk_subscript(&target);
        // `-C CALLBACK`: a string the shell runs as each block of lines is read.
        let callbacks: Vec<Arg> = p.values_of('C', "").cloned().collect();
        for c in &callbacks {
            self.shell_string(c, inv);
        }
        let plain = !p.has('d', "") && !p.has('n', "") && !p.has('O', "") && !p.has('s', "");
        let lines = stdin_text(inv).filter(|_| plain).map(|t| {
            let t = t.strip_suffix('\n').unwrap_or(&t).to_string();
            let keep_newline = !p.has('t', "");
            t.split('\n')
                .map(|l| {
                    if keep_newline {
                        format!("{l}\n")
                    } else {
                        l.to_string()
                    }
                })
                .collect()
        });
        if target.known {
            let name = variable_name(&target.text).to_string();
            self.set_var(&name, None);
            self.state.arrays.insert(name, lines);
        }
    }

    /// `test -v 'a[$(cmd)]'`, `[ -v … ]`: the subscript is evaluated. So, the stricter
    /// reading, are the operands of an arithmetic comparison (`[ "$x" -eq 0 ]`), which
    /// bash evaluates as expressions in `[[ ]]` and some versions in `test` too.
    pub(crate) fn test_subscripts(&mut self, args: &[Arg]) {
        for w in args.windows(2) {
            if w[0].text == "-v" {
                let target = w[1].clone();
                self.walk_subscript(&target);
            }
        }
        for w in args.windows(3) {
            if matches!(
                w[1].text.as_str(),
                "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
            ) {
                for operand in [&w[0], &w[2]] {
                    self.walk_subscript(&operand.clone());
                }
            }
        }
    }

    /// The array subscripts in the names a declaration or `unset` takes, which bash
    /// evaluates: `unset 'a[$(cmd)]'`, `declare 'a[$(cmd)]=1'` and `local` run cmd (and
    /// `export`, `readonly` and `getopts`'s name are read the same way, the stricter
    /// reading). Options are skipped; only the name before a `=` is looked at.
    pub(crate) fn name_subscripts(&mut self, program: &str, args: &[Arg]) {
        let names = if program == "getopts" {
            args.get(2..3).unwrap_or(&[])
        } else {
            args.get(1..).unwrap_or(&[])
        };
        for a in names {
            if a.text.starts_with(['-', '+']) {
                continue;
            }
            let name = a.text.split_once('=').map_or(a.text.as_str(), |(n, _)| n);
            if name.contains('[') {
                let mut target = a.clone();
                target.text = name.to_string();
                self.walk_subscript(&target);
            }
        }
    }
}

/// The text on stdin when the line gives it: a here-string (with the newline bash adds)
/// or a here-document.
fn stdin_text(inv: &Invocation) -> Option<String> {
    if let Some(h) = &inv.io.herestring {
        return h.known.then(|| format!("{}\n", h.text));
    }
    // A here-document whose body the shell expands is taken only when there is nothing
    // in it to expand.
    inv.io
        .heredoc
        .clone()
        .filter(|b| !b.contains(['$', '`', '\\']))
}

#[cfg(test)]
mod tests {
    use super::printf_output;

    #[test]
    fn printf_output_of_text_and_string_conversions() {
        assert_eq!(printf_output("/", &[]).as_deref(), Some("/"));
        assert_eq!(printf_output("%s", &["/x"]).as_deref(), Some("/x"));
        assert_eq!(printf_output("%s/", &["a", "b"]).as_deref(), Some("a/b/"));
        assert_eq!(printf_output("100%%", &[]).as_deref(), Some("100%"));
        assert_eq!(printf_output("%d%s", &["1", "/"]), None);
        assert_eq!(printf_output("a\\n", &[]), None);
    }
}

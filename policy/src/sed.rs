//! What a sed script does besides editing text: GNU sed's `e` command runs a shell
//! command (`e COMMAND`, or the pattern space when none is given) and so does the `e` flag
//! of `s///`; the `w` and `W` commands and the `w` flag of `s///` write a file; `r` and `R`
//! read one. A reading of the script's commands and their arguments, which is all that
//! matters here: regular expressions and replacement texts are skipped, not interpreted.

/// One effect of a sed script beyond its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SedAction {
    /// `e COMMAND`: the command, run by `/bin/sh`.
    Run(String),
    /// `e` alone or `s///e`: the pattern space, built from the input, is run as a command.
    RunBuilt,
    /// `w FILE`, `W FILE`, `s///w FILE` (not `/dev/stdout` or `/dev/stderr`).
    Write(String),
    /// `r FILE`, `R FILE`.
    Read(String),
}

/// The effects of `script`, in order.
pub fn actions(script: &str) -> Vec<SedAction> {
    let b = script.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let rest_of_line = |i: usize| -> (String, usize) {
        let end = b[i..]
            .iter()
            .position(|c| *c == b'\n')
            .map_or(b.len(), |n| i + n);
        (script[i..end].trim().to_string(), end)
    };
    while i < b.len() {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b';') {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        i = skip_address(b, i);
        i = skip_blanks(b, i);
        if b.get(i) == Some(&b',') {
            i = skip_address(b, skip_blanks(b, i + 1));
            i = skip_blanks(b, i);
        }
        while b.get(i) == Some(&b'!') {
            i = skip_blanks(b, i + 1);
        }
        let Some(&command) = b.get(i) else {
            break;
        };
        i += 1;
        match command {
            b'#' => i = rest_of_line(i).1,
            b's' => {
                let Some(&delimiter) = b.get(i) else {
                    break;
                };
                i = skip_delimited(b, i + 1, delimiter);
                i = skip_delimited(b, i, delimiter);
                while i < b.len() && !matches!(b[i], b';' | b'\n' | b'}') {
                    match b[i] {
                        b'e' => out.push(SedAction::RunBuilt),
                        b'w' => {
                            let (file, end) = rest_of_line(i + 1);
                            push_write(&mut out, file);
                            i = end;
                            break;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'y' => {
                let Some(&delimiter) = b.get(i) else {
                    break;
                };
                i = skip_delimited(b, i + 1, delimiter);
                i = skip_delimited(b, i, delimiter);
            }
            b'e' => {
                let (cmd, end) = rest_of_line(i);
                out.push(if cmd.is_empty() {
                    SedAction::RunBuilt
                } else {
                    SedAction::Run(cmd)
                });
                i = end;
            }
            b'w' | b'W' => {
                let (file, end) = rest_of_line(i);
                push_write(&mut out, file);
                i = end;
            }
            b'r' | b'R' => {
                let (file, end) = rest_of_line(i);
                if !file.is_empty() {
                    out.push(SedAction::Read(file));
                }
                i = end;
            }
            // Text to the end of the line, and past it while a line ends in a backslash.
            b'a' | b'i' | b'c' => loop {
                let end = rest_of_line(i).1;
                let continued = end > 0 && b[end - 1] == b'\\' && end < b.len();
                i = end + 1;
                if !continued {
                    break;
                }
            },
            // A label ends at a semicolon or a newline.
            b':' | b'b' | b't' | b'T' | b'v' => {
                while i < b.len() && !matches!(b[i], b';' | b'\n') {
                    i += 1;
                }
            }
            _ => {}
        }
    }
    out
}

fn push_write(out: &mut Vec<SedAction>, file: String) {
    if !file.is_empty() && file != "/dev/stdout" && file != "/dev/stderr" {
        out.push(SedAction::Write(file));
    }
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// Past one address: a line number (`3`, `first~step`, `+N`, `~N`), `$`, `/regex/` or
/// `\cregexc` with its `I` and `M` flags.
fn skip_address(b: &[u8], mut i: usize) -> usize {
    match b.get(i) {
        Some(c) if c.is_ascii_digit() || matches!(c, b'+' | b'~') => {
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'~') {
                i += 1;
            }
        }
        Some(b'$') => i += 1,
        Some(b'/') => {
            i = skip_delimited(b, i + 1, b'/');
            while i < b.len() && matches!(b[i], b'I' | b'M') {
                i += 1;
            }
        }
        Some(b'\\') if i + 1 < b.len() => {
            i = skip_delimited(b, i + 2, b[i + 1]);
            while i < b.len() && matches!(b[i], b'I' | b'M') {
                i += 1;
            }
        }
        _ => {}
    }
    i
}

/// Past the text that ends at the next unescaped `delimiter` (from `i`), or at the end.
fn skip_delimited(b: &[u8], mut i: usize, delimiter: u8) -> usize {
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == delimiter {
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::SedAction::*;
    use super::*;

    #[test]
    fn commands_that_run_write_and_read_are_found_wherever_they_stand() {
        assert_eq!(actions("1e rm -rf ~"), vec![Run("rm -rf ~".into())]);
        assert_eq!(actions("/x/e"), vec![RunBuilt]);
        assert_eq!(actions("s/.*/id/e"), vec![RunBuilt]);
        assert_eq!(actions("w /tmp/out"), vec![Write("/tmp/out".into())]);
        assert_eq!(actions("s/a/b/gw /tmp/o"), vec![Write("/tmp/o".into())]);
        assert_eq!(actions("1,/x/W out"), vec![Write("out".into())]);
        assert_eq!(actions("$r /etc/shadow"), vec![Read("/etc/shadow".into())]);
        assert_eq!(
            actions("p;3!e touch x\ns|/|;|w /dev/stdout"),
            vec![Run("touch x".into())]
        );
        assert_eq!(actions("\\,x,I { e date\n}"), vec![Run("date".into())]);
    }

    #[test]
    fn text_regexes_replacements_and_labels_are_not_commands() {
        for script in [
            "s/e/w/",
            "s/\\/e/x/g",
            "s,w /etc/x,r /y,",
            "y/ew/we/",
            "/e w r/d",
            "a\\\nw /etc/x",
            "a e rm -rf ~",
            "i w /etc/x",
            "c r x",
            ":ew;b ew",
            "# e rm -rf ~",
            "1~2p;$d;=;l 5;q",
            "",
        ] {
            assert_eq!(actions(script), vec![], "{script:?}");
        }
    }
}

//! One place that makes text from the sandbox safe to show a person:
//! control characters, ANSI sequences and bidi marks are written as escapes,
//! and nothing is cut.

use std::fmt::Write;

/// Escapes `s` for a terminal: C0/C1 controls, DEL, and the Unicode characters that
/// reorder, hide, break or strike text where a person reads a path or a command: bidi
/// overrides and isolates, zero-width and invisible characters (the soft hyphen, Hangul
/// fillers, tag characters, interlinear annotations), line and paragraph separators
/// (which some terminals and log viewers break lines at), and the combining overlays that
/// strike a character through.
pub fn for_terminal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{061c}'
            | '\u{feff}'
            | '\u{00ad}'
            | '\u{034f}'
            | '\u{0334}'..='\u{0338}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180e}'
            | '\u{2028}'..='\u{2029}'
            | '\u{3164}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e007f}' => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// [`for_terminal`] when `s` holds a character a terminal would act on, else `s` as it
/// is: text that was escaped already holds none, and escaping it twice would double its
/// backslashes.
pub fn if_unsafe(s: &str) -> String {
    let acts =
        |c: char| c != '\\' && for_terminal(c.encode_utf8(&mut [0; 4])).len() != c.len_utf8();
    if s.chars().any(acts) {
        for_terminal(s)
    } else {
        s.to_owned()
    }
}

/// Escapes bytes that may not be UTF-8 (paths, argv from a sandboxed process): valid
/// text as [`for_terminal`], each invalid byte as `\xNN`.
pub fn bytes_for_terminal(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(&for_terminal(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_ansi_and_bidi() {
        assert_eq!(for_terminal("a\x1b[31mb"), "a\\x1b[31mb");
        assert_eq!(for_terminal("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(for_terminal("l1\nl2"), "l1\\nl2");
        assert_eq!(for_terminal("plain é"), "plain é");
        // Decomposed accents stay; what hides, breaks or strikes text does not.
        assert_eq!(for_terminal("e\u{301}"), "e\u{301}");
        for (hidden, shown) in [
            ("a\u{2028}b", "a\\u{2028}b"),
            ("a\u{2029}b", "a\\u{2029}b"),
            ("a\u{e0041}b", "a\\u{e0041}b"),
            ("a\u{ad}b", "a\\u{00ad}b"),
            ("a\u{3164}b", "a\\u{3164}b"),
            ("a\u{115f}b", "a\\u{115f}b"),
            ("a\u{338}b", "a\\u{0338}b"),
            ("a\u{fff9}b", "a\\u{fff9}b"),
        ] {
            assert_eq!(for_terminal(hidden), shown);
        }
    }

    #[test]
    fn escaped_text_is_not_escaped_twice() {
        assert_eq!(if_unsafe("a\\x1b[31m"), "a\\x1b[31m");
        assert_eq!(if_unsafe("a\x1b[31m\\"), "a\\x1b[31m\\\\");
        assert_eq!(if_unsafe("x\u{202e}y"), "x\\u{202e}y");
    }

    #[test]
    fn invalid_utf8_bytes_are_escaped_and_kept() {
        assert_eq!(bytes_for_terminal(b"/tmp/\xff\x1b"), "/tmp/\\xff\\x1b");
    }
}

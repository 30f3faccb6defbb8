//! The audit log (`--log FILE`): JSON Lines, one object per decision (SPEC Appendix A).
//!
//! The notification loop never waits on the disk: a line is formatted where the decision is
//! made and handed over a channel to a writer thread, which buffers and flushes when the
//! channel falls idle and when the session ends.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Map, Value};

/// How long the writer waits for more lines before it flushes what it holds.
const FLUSH_AFTER_IDLE: Duration = Duration::from_millis(200);

/// The open audit log.
pub struct AuditLog {
    lines: Mutex<Option<Sender<String>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl AuditLog {
    /// Opens (creates, mode 0600) `path` for appending. A symlink in the last component is
    /// refused (`O_NOFOLLOW`): the log must not be redirected onto another file.
    pub fn open(path: &Path) -> Result<AuditLog, String> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| {
                let why = if e.raw_os_error() == Some(libc::ELOOP) {
                    "it is a symlink".to_string()
                } else {
                    e.to_string()
                };
                format!("--log {}: cannot open the audit log: {why}", path.display())
            })?;
        let meta = file
            .metadata()
            .map_err(|e| format!("--log {}: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("--log {}: not a regular file", path.display()));
        }
        Ok(AuditLog::to_file(file))
    }

    fn to_file(file: File) -> AuditLog {
        let (tx, rx) = mpsc::channel::<String>();
        let writer = std::thread::Builder::new()
            .name("fence-log".into())
            .spawn(move || {
                let mut out = BufWriter::with_capacity(64 * 1024, file);
                loop {
                    match rx.recv_timeout(FLUSH_AFTER_IDLE) {
                        Ok(line) => {
                            let _ = out.write_all(line.as_bytes());
                        }
                        Err(RecvTimeoutError::Timeout) => {
                            let _ = out.flush();
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                let _ = out.flush();
            })
            .ok();
        AuditLog {
            lines: Mutex::new(Some(tx)),
            writer: Mutex::new(writer),
        }
    }

    /// Appends one object (a `ts` is put first).
    pub fn write(&self, fields: Map<String, Value>) {
        let mut obj = Map::with_capacity(fields.len() + 1);
        obj.insert("ts".into(), Value::String(timestamp_now()));
        obj.extend(fields);
        let Ok(line) = serde_json::to_string(&Value::Object(obj)) else {
            return;
        };
        let mut line = json_inert(line);
        line.push('\n');
        if let Some(tx) = self
            .lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            let _ = tx.send(line);
        }
    }

    /// Writes out everything and stops the writer; later lines are dropped.
    pub fn close(&self) {
        drop(self.lines.lock().unwrap_or_else(|e| e.into_inner()).take());
        if let Some(w) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = w.join();
        }
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        self.close();
    }
}

/// Now as RFC 3339, UTC, microseconds: `2026-11-30T22:41:12.123456Z`.
pub fn timestamp_now() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.microsecond()
    )
}

/// JSON text with every character that a terminal or an editor may act on or hide written
/// as its `\uXXXX` escape: C1 controls (U+0080–U+009F; U+009B is a one-character CSI),
/// the line and paragraph separators, and the bidirectional marks, embeddings, overrides
/// and isolates (a U+202E in a file name shows the name reversed). JSON escapes C0 controls
/// itself; these may only stand inside strings, where the escape means the same character,
/// so the parsed value is unchanged.
pub fn json_inert(json: String) -> String {
    let acts = |c: char| {
        matches!(c,
            '\u{80}'..='\u{9f}'
            | '\u{200e}' | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}')
    };
    if !json.contains(acts) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if acts(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text from the sandbox for the log: valid UTF-8 as it is (JSON escapes controls), each
/// invalid byte as `\xNN`; the flag says whether any byte had to be escaped.
pub fn text(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            (out, true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_a_terminal_acts_on_are_escaped_and_mean_the_same() {
        let name = "a\u{1b}[2J\u{9b}31m\u{202e}gpj.exe\u{2066}\u{2028}é✓";
        let json = json_inert(serde_json::to_string(&Value::from(name)).unwrap());
        // Other characters stay as they are.
        assert!(json.contains("é✓"), "{json}");
        for c in ['\u{9b}', '\u{202e}', '\u{2066}', '\u{2028}', '\u{1b}'] {
            assert!(!json.contains(c), "{json}");
        }
        assert!(
            json.contains("\\u009b") && json.contains("\\u202e"),
            "{json}"
        );
        let back: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Value::from(name));
    }

    #[test]
    fn lines_reach_the_file_as_json_objects() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path).unwrap();
        let mut m = Map::new();
        m.insert("event".into(), Value::from("exec"));
        log.write(m);
        log.close();
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(v["event"], "exec");
        let ts = v["ts"].as_str().unwrap();
        assert_eq!(ts.len(), "2026-11-30T22:41:12.123456Z".len(), "{ts}");
        assert!(ts.ends_with('Z'));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_symlink_as_the_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("audit.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = AuditLog::open(&link).err().unwrap();
        assert!(err.contains("symlink"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn invalid_utf8_is_escaped_and_flagged() {
        assert_eq!(text(b"/tmp/a"), ("/tmp/a".to_string(), false));
        assert_eq!(text(b"/tmp/\xffa"), ("/tmp/\\xffa".to_string(), true));
    }
}

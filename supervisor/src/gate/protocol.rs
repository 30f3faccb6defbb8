//! The approval protocol spoken on a session's socket: JSON Lines, one object per line,
//! each with a `type`. docs/approvals.md describes it for people writing clients.
//!
//! Server → client: `hello` (first, carries the session's description), then after the
//! client's `hello`: one `question` per pending question and `synced`; from then on
//! `question`, `resolved`, `accepted`, `error` and finally `session_end`.
//! Client → server: `hello`, then `answer`s.

use serde::{Deserialize, Serialize};

use super::Question;

/// Longest line either side sends, newline included. A longer line is an error: the
/// connection is closed, the session goes on.
pub const MAX_LINE: usize = 64 * 1024;

/// The session's description, sent first on every connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerHello {
    pub version: u32,
    pub session: String,
    pub fence_pid: u32,
    /// The worktree, escaped.
    pub worktree: String,
    /// The wrapped command, each word escaped.
    pub command: Vec<String>,
    pub started_at_ms: u64,
    pub ask_timeout_s: u64,
}

/// What the server sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    Hello(ServerHello),
    /// A pending question (the gate's [`Question`], fields inline).
    Question(Question),
    /// Every question pending when the client said hello has been sent.
    Synced {
        pending: usize,
    },
    /// A question is no longer pending: answered (by which client), timed out, or
    /// withdrawn. Clients drop its card.
    Resolved {
        id: u64,
        /// `yes`, `always`, `no`, `timeout` or `none`.
        answer: String,
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// This client's answer to question `id` was taken.
    Accepted {
        id: u64,
    },
    Error {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u64>,
    },
    /// The session is over: every question still pending was denied.
    SessionEnd,
}

/// The words a client answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerWord {
    Yes,
    Always,
    No,
}

impl std::str::FromStr for AnswerWord {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "yes" | "y" => Ok(AnswerWord::Yes),
            "always" | "a" => Ok(AnswerWord::Always),
            "no" | "n" => Ok(AnswerWord::No),
            other => Err(format!("{other:?} is not an answer: use yes, always or no")),
        }
    }
}

/// What a client sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    Hello {
        version: u32,
        client: String,
    },
    Answer {
        id: u64,
        answer: AnswerWord,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// One message as a line (newline included).
pub fn line<T: Serialize>(message: &T) -> String {
    let mut text = serde_json::to_string(message).unwrap_or_else(|e| {
        // Only a non-string map key can fail here, and no message has one.
        format!(r#"{{"type":"error","message":"cannot encode a message: {e}"}}"#)
    });
    text.push('\n');
    text
}

/// Reads a client's first line: it must be a `hello` of our version. The version is
/// looked at before anything else so that a client of another version gets told so, even
/// if the rest of its hello looks different.
pub fn parse_client_hello(text: &str) -> Result<String, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("malformed message: {e}"))?;
    if value.get("type").and_then(|t| t.as_str()) != Some("hello") {
        return Err("expected a hello first".into());
    }
    let version = value.get("version").and_then(|v| v.as_u64());
    match version {
        Some(v) if v == u64::from(super::PROTOCOL_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "unsupported protocol version {v} (this fence speaks {})",
                super::PROTOCOL_VERSION
            ));
        }
        None => return Err("the hello has no protocol version".into()),
    }
    match serde_json::from_value::<ClientMessage>(value) {
        Ok(ClientMessage::Hello { client, .. }) => Ok(client),
        Ok(_) => Err("expected a hello first".into()),
        Err(e) => Err(format!("malformed hello: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_tagged_by_type() {
        let text = line(&ServerMessage::Resolved {
            id: 3,
            answer: "yes".into(),
            by: "fence approvals #1".into(),
            reason: None,
        });
        assert_eq!(
            text,
            "{\"type\":\"resolved\",\"id\":3,\"answer\":\"yes\",\"by\":\"fence approvals #1\"}\n"
        );
        assert_eq!(
            line(&ServerMessage::SessionEnd),
            "{\"type\":\"session_end\"}\n"
        );
        let answer: ClientMessage =
            serde_json::from_str(r#"{"type":"answer","id":7,"answer":"no","reason":"not now"}"#)
                .unwrap();
        assert_eq!(
            answer,
            ClientMessage::Answer {
                id: 7,
                answer: AnswerWord::No,
                reason: Some("not now".into())
            }
        );
    }

    #[test]
    fn hello_versions_are_checked_first() {
        assert_eq!(
            parse_client_hello(r#"{"type":"hello","version":1,"client":"t"}"#),
            Ok("t".into())
        );
        assert_eq!(
            parse_client_hello(r#"{"type":"hello","version":2}"#),
            Err("unsupported protocol version 2 (this fence speaks 1)".into())
        );
        assert!(parse_client_hello(r#"{"type":"answer","id":1,"answer":"yes"}"#).is_err());
        assert!(
            parse_client_hello("not json")
                .unwrap_err()
                .starts_with("malformed")
        );
    }
}

//! The client side of the approval protocol, for `fence approvals` and `fence sessions`:
//! finding the sessions' sockets, the handshake, reading and answering.

use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::protocol::{self, AnswerWord, ClientMessage, MAX_LINE, ServerHello, ServerMessage};
use super::socket::{private_dir, socket_dir};
use super::{PROTOCOL_VERSION, peer};

/// The sockets of the sessions in the socket directory (none when it does not exist).
/// The directory is verified first: a socket in a directory someone else controls could
/// be anyone's.
pub fn session_sockets() -> Result<Vec<PathBuf>, String> {
    let dir = socket_dir();
    if !dir.exists() {
        return Ok(Vec::new());
    }
    private_dir(&dir, false)?;
    let mut sockets: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sock"))
        .collect();
    sockets.sort();
    Ok(sockets)
}

/// Why a connection did not come about.
#[derive(Debug)]
pub enum ConnectError {
    /// Nobody listens: the session's fence is gone (the socket file was removed).
    Stale,
    Failed(String),
}

/// A connection past the handshake.
pub struct Link {
    pub hello: ServerHello,
    pub reader: LinkReader,
    pub writer: LinkWriter,
}

pub struct LinkReader {
    reader: BufReader<UnixStream>,
}

pub struct LinkWriter {
    stream: UnixStream,
}

/// Connects to the session socket `path` and shakes hands as `client`. A socket nobody
/// listens on is removed (sockets are renamed into place only once they listen, so a
/// refused connection means the session is over).
pub fn connect(path: &Path, client: &str, timeout: Duration) -> Result<Link, ConnectError> {
    let stream = match UnixStream::connect(path) {
        Ok(s) => s,
        Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {
            let _ = std::fs::remove_file(path);
            return Err(ConnectError::Stale);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ConnectError::Stale),
        Err(e) => return Err(ConnectError::Failed(format!("{}: {e}", path.display()))),
    };
    let fail = |what: String| ConnectError::Failed(format!("{}: {what}", path.display()));
    // Who listens must be a session's supervisor, not something inside a sandbox that
    // replaced the socket (possible only where a sandbox may write the directory).
    let server = peer::check(stream.as_raw_fd(), peer::Role::Session)
        .map_err(|why| fail(format!("refusing this session socket: {why}")))?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| fail(e.to_string()))?;
    let writer = stream.try_clone().map_err(|e| fail(e.to_string()))?;
    let mut link_reader = LinkReader {
        reader: BufReader::new(stream),
    };
    let hello = match link_reader.read() {
        Ok(Some(ServerMessage::Hello(h))) if h.version == PROTOCOL_VERSION => {
            if i64::from(h.fence_pid) != i64::from(server) {
                return Err(fail(format!(
                    "refusing this session socket: it says fence pid {}, but process {server} listens",
                    h.fence_pid
                )));
            }
            h
        }
        Ok(Some(ServerMessage::Hello(h))) => {
            return Err(fail(format!(
                "the session speaks protocol version {} (this fence speaks {PROTOCOL_VERSION})",
                h.version
            )));
        }
        Ok(Some(ServerMessage::Error { message, .. })) => return Err(fail(message)),
        Ok(Some(_)) => return Err(fail("no hello from the session".into())),
        Ok(None) => return Err(fail("the session closed the connection".into())),
        Err(e) => return Err(fail(e)),
    };
    let mut link_writer = LinkWriter { stream: writer };
    link_writer
        .send(&ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            client: client.into(),
        })
        .map_err(|e| fail(e.to_string()))?;
    link_reader
        .reader
        .get_ref()
        .set_read_timeout(None)
        .map_err(|e| fail(e.to_string()))?;
    Ok(Link {
        hello,
        reader: link_reader,
        writer: link_writer,
    })
}

impl LinkReader {
    /// The next message; `None` when the session closed the connection.
    pub fn read(&mut self) -> Result<Option<ServerMessage>, String> {
        let mut buf = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("reading from the session: {e}"))?;
        if n == 0 || !buf.ends_with(b"\n") {
            return if buf.len() > MAX_LINE {
                Err(format!(
                    "the session sent a line longer than {MAX_LINE} bytes"
                ))
            } else {
                Ok(None)
            };
        }
        serde_json::from_slice(&buf)
            .map_err(|e| format!("the session sent a malformed message: {e}"))
    }

    /// Sets how long [`read`](Self::read) waits (None: for ever).
    pub fn set_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.reader.get_ref().set_read_timeout(timeout)
    }
}

impl LinkWriter {
    fn send(&mut self, message: &ClientMessage) -> std::io::Result<()> {
        self.stream.write_all(protocol::line(message).as_bytes())
    }

    pub fn answer(
        &mut self,
        id: u64,
        answer: AnswerWord,
        reason: Option<String>,
    ) -> std::io::Result<()> {
        self.send(&ClientMessage::Answer { id, answer, reason })
    }
}

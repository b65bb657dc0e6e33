//! `toolhost chat`: one session, many prompts, in one process. The reply
//! scrolls above a viewport (ratatui's inline viewport on crossterm) that
//! keeps the input usable while the agent works: Enter sends when idle and
//! steers while a turn runs, Alt+Enter queues a follow-up, Tab completes a
//! slash command, Esc stops
//! the turn and gives the queued messages back, Ctrl+C stops or clears
//! (twice within a second quits), Ctrl+D on an empty line quits
//! (docs/using/chat.md).
//!
//! A front end only: it consumes the loop's events and submits input
//! (the inbox, an interrupt); the loop never reads the terminal.

mod approval;
mod backend;
mod commands;
mod editor;
mod session;
mod view;

use std::future::Future;
use std::io::{self, Write as _};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures_util::StreamExt as _;
use ratatui::widgets::Widget as _;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{
    AgentEvent, AgentLoop, Delivery, Inbox, Message, ModelClient, SessionGrants, ToolRunner,
};
use crate::transcript::ToolInfo;
use backend::ChatBackend;
use editor::Editor;
use session::{Screen, Session};
use view::{Transcript, VIEWPORT_HEIGHT};

pub(crate) use approval::{ChatApprover, Question};
pub(crate) use session::{ChatEnd, Control, Resumed, SessionId};
pub(crate) use view::Status;

/// Everything a chat starts with.
pub(crate) struct Chat<M, T> {
    pub(crate) agent: AgentLoop<M, T>,
    /// The resumed session's ledger, or empty.
    pub(crate) ledger: Vec<Message>,
    /// The loop's inbox (given to `agent` too).
    pub(crate) inbox: Inbox,
    /// The loop's events, as its sink forwards them.
    pub(crate) events: mpsc::UnboundedReceiver<AgentEvent>,
    /// What the loop asks the user ([`ChatApprover`]).
    pub(crate) questions: mpsc::UnboundedReceiver<Question>,
    /// The session's grants (the loop runs with them too).
    pub(crate) grants: SessionGrants,
    /// The session file's id and path, unless `--no-session`.
    pub(crate) session: Option<(String, PathBuf)>,
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) status: Status,
    /// A prompt to send at once (the command's argument).
    pub(crate) first: Option<String>,
    /// What the command that started the chat does for it.
    pub(crate) control: Box<dyn Control<M>>,
}

/// A turn or a compaction: it holds the ledger until it ends, and gives
/// it back with a line to print, if any.
type Running<'a> = Pin<Box<dyn Future<Output = (Vec<Message>, Option<String>)> + 'a>>;

/// The terminal in raw mode with bracketed paste, restored when dropped.
struct RawTerminal;

impl RawTerminal {
    fn enter() -> io::Result<Self> {
        crossterm::terminal::enable_raw_mode()?;
        crossterm::execute!(io::stdout(), crossterm::event::EnableBracketedPaste)?;
        Ok(RawTerminal)
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let _ = crossterm::execute!(
            io::stdout(),
            crossterm::event::DisableBracketedPaste,
            crossterm::cursor::Show
        );
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Runs the chat until the user quits. `header` is printed first.
pub(crate) async fn run<M: ModelClient, T: ToolRunner>(
    chat: Chat<M, T>,
    header: Vec<String>,
) -> anyhow::Result<ChatEnd> {
    let raw = RawTerminal::enter()?;
    let backend = ChatBackend::new(io::stdout());
    let mut terminal = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Inline(VIEWPORT_HEIGHT),
        },
    )?;
    let mut screen = Screen {
        editor: Editor::default(),
        status: chat.status,
        transcript: Transcript::default(),
        pending: approval::Pending::default(),
    };
    print_above(&mut terminal, &header)?;
    let end = Session {
        agent: Arc::new(chat.agent),
        inbox: chat.inbox,
        session: chat.session,
        tools: chat.tools,
        control: chat.control,
        grants: chat.grants,
        prompts: 0,
    }
    .serve(
        &mut terminal,
        &mut screen,
        (chat.events, chat.questions),
        chat.ledger,
        chat.first,
    )
    .await;
    // Leave the reply on screen and the viewport blank, the cursor at its
    // top (asking the terminal where the cursor is would race the key
    // reader).
    let top = terminal.get_frame().area().y;
    crossterm::execute!(
        io::stdout(),
        crossterm::cursor::MoveTo(0, top),
        crossterm::terminal::Clear(crossterm::terminal::ClearType::FromCursorDown)
    )?;
    drop(raw);
    let _ = io::stdout().flush();
    end
}

/// What the user asked for, from one key.
enum Action {
    None,
    /// Send (idle) or steer (busy).
    Submit(Delivery),
    Interrupt,
    /// Complete the command being typed.
    Complete,
    Quit(ChatEnd),
}

type Term = Terminal<ChatBackend<io::Stdout>>;

impl<M: ModelClient, T: ToolRunner> Session<M, T> {
    /// Long: one `select!` over the agent's events, the end of a run and the
    /// keys; the running prompt, its cancel and the ledger are borrowed across
    /// the arms.
    async fn serve(
        &mut self,
        terminal: &mut Term,
        screen: &mut Screen,
        (mut events, mut questions): (
            mpsc::UnboundedReceiver<AgentEvent>,
            mpsc::UnboundedReceiver<Question>,
        ),
        ledger: Vec<Message>,
        first: Option<String>,
    ) -> anyhow::Result<ChatEnd> {
        let mut keys = EventStream::new();
        let mut ledger = Some(ledger);
        let mut running: Option<Running<'_>> = None;
        let mut cancel: Option<CancellationToken> = None;
        let mut last_ctrl_c: Option<Instant> = None;
        let mut quit_after: Option<ChatEnd> = None;
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        if let Some(prompt) = first {
            self.start(Work::Prompt(prompt), &mut ledger, &mut running, &mut cancel);
        }
        loop {
            let queued = self.inbox.queued();
            let asking = screen
                .pending
                .current()
                .map(|permit| approval::prompt(permit, self.grants.workspace()));
            terminal.draw(|frame| {
                view::draw(
                    frame,
                    &screen.transcript.live,
                    (&screen.editor, asking.as_deref()),
                    &queued,
                    &screen.status,
                );
            })?;
            tokio::select! {
                Some(question) = questions.recv() => screen.pending.push(question),
                Some(event) = events.recv() => {
                    let lines = screen.transcript.lines(&event, &mut screen.status);
                    print_above(terminal, &lines)?;
                }
                (back, said) = finish(&mut running) => {
                    running = None;
                    // The loop's last events are in the channel already.
                    while let Ok(event) = events.try_recv() {
                        let lines = screen.transcript.lines(&event, &mut screen.status);
                        print_above(terminal, &lines)?;
                    }
                    ledger = Some(back);
                    let interrupted = cancel.take().is_some_and(|c| c.is_cancelled());
                    if interrupted {
                        let returned = self.inbox.give_back();
                        if !returned.is_empty() {
                            let texts: Vec<String> = returned.into_iter().map(|q| q.text).collect();
                            screen.editor.restore(&texts.join("\n"));
                        }
                    }
                    if let Some(line) = said {
                        print_above(terminal, &[line])?;
                    }
                    if let Some(end) = quit_after {
                        return Ok(end);
                    }
                    // Input that came just as the run ended starts the next.
                    if let Some(next) = self.inbox.next_prompt() {
                        self.start(Work::Prompt(next.text), &mut ledger, &mut running, &mut cancel);
                    }
                }
                key = keys.next() => {
                    let Some(Ok(event)) = key else {
                        // The terminal went away: as Ctrl+D.
                        quit_after = Some(ChatEnd::Quit);
                        match &cancel {
                            Some(cancel) => { cancel.cancel(); continue; }
                            None => return Ok(ChatEnd::Quit),
                        }
                    };
                    let busy = running.is_some();
                    // A question waits: its keys answer it, Ctrl+C still
                    // stops the turn, and nothing else is typed.
                    if screen.pending.is_asking()
                        && let Event::Key(key) = &event
                        && key.kind != KeyEventKind::Release
                        && !(key.code == KeyCode::Char('c')
                            && key.modifiers.contains(KeyModifiers::CONTROL))
                    {
                        // Esc says no and stops the turn, as it stops one.
                        if screen.pending.answer(key, Instant::now())
                            && key.code == KeyCode::Esc
                            && let Some(cancel) = &cancel
                        {
                            cancel.cancel();
                        }
                        continue;
                    }
                    match handle_event(event, &mut screen.editor, busy, &mut last_ctrl_c) {
                        Action::None => {}
                        Action::Complete => match commands::complete(screen.editor.text()) {
                            commands::Completed::Line(line) => screen.editor.replace(&line),
                            commands::Completed::Choices(names) => {
                                print_above(terminal, &[names.join("  ")])?;
                            }
                            commands::Completed::Nothing => {}
                        },
                        Action::Interrupt => {
                            if let Some(cancel) = &cancel {
                                cancel.cancel();
                            }
                        }
                        Action::Quit(end) => {
                            if !stop_then_quit(cancel.as_ref(), end, &mut quit_after) {
                                return Ok(end);
                            }
                        }
                        Action::Submit(delivery) => {
                            let text = screen.editor.take();
                            match commands::parse(&text) {
                                commands::Parsed::Empty => {}
                                commands::Parsed::Message(message) => {
                                    if busy {
                                        if let Err(full) = self.inbox.push(delivery, message) {
                                            print_above(terminal, &[full.to_string()])?;
                                        }
                                    } else {
                                        self.start(Work::Prompt(message), &mut ledger, &mut running, &mut cancel);
                                    }
                                }
                                commands::Parsed::Command(command) => {
                                    let reply = self.command(&command, busy, screen, &mut ledger);
                                    print_above(terminal, &reply.lines)?;
                                    if let Some(focus) = reply.compact {
                                        self.start(Work::Compact { focus }, &mut ledger, &mut running, &mut cancel);
                                    }
                                    if let Some(end) = reply.quit
                                        && !stop_then_quit(cancel.as_ref(), end, &mut quit_after)
                                    {
                                        return Ok(end);
                                    }
                                }
                            }
                        }
                    }
                }
                _ = tick.tick() => {}
            }
        }
    }

    /// Starts `work` on the ledger, which it holds until it ends (Esc
    /// stops it).
    fn start<'a>(
        &mut self,
        work: Work,
        ledger: &mut Option<Vec<Message>>,
        running: &mut Option<Running<'a>>,
        cancel: &mut Option<CancellationToken>,
    ) where
        M: 'a,
        T: 'a,
    {
        let Some(mut owned) = ledger.take() else {
            return;
        };
        if let Work::Prompt(_) = work {
            if self.prompts > 0
                && let Some(system) = self.control.refreshed_system_prompt()
                && let Some(agent) = Arc::get_mut(&mut self.agent)
            {
                agent.set_system_prompt(system);
            }
            self.prompts += 1;
        }
        let token = CancellationToken::new();
        *cancel = Some(token.clone());
        let agent = Arc::clone(&self.agent);
        *running = Some(Box::pin(async move {
            let said = match work {
                Work::Prompt(prompt) => {
                    agent.run(&mut owned, prompt, &token).await;
                    None
                }
                Work::Compact { focus } => {
                    let focus = (!focus.trim().is_empty()).then_some(focus);
                    let smaller = agent
                        .compact_now(&mut owned, focus.as_deref(), &token)
                        .await;
                    (!smaller && !token.is_cancelled()).then(|| {
                        "nothing to compact: the conversation before the last turn is too \
                         short to summarise and holds no long tool result"
                            .to_string()
                    })
                }
            };
            (owned, said)
        }));
    }
}

/// What a turn of the chat does with the conversation.
enum Work {
    /// Runs the prompt.
    Prompt(String),
    /// Compacts it (`/compact`), the summary keeping `focus` when it is not
    /// empty.
    Compact { focus: String },
}

/// Quitting while a turn runs stops it first and quits when it has ended
/// (its records complete); whether a turn was running.
fn stop_then_quit(
    running: Option<&CancellationToken>,
    end: ChatEnd,
    quit_after: &mut Option<ChatEnd>,
) -> bool {
    let Some(cancel) = running else {
        return false;
    };
    cancel.cancel();
    *quit_after = Some(end);
    true
}

/// Waits for the running prompt, or forever when none runs.
async fn finish(running: &mut Option<Running<'_>>) -> (Vec<Message>, Option<String>) {
    match running {
        Some(run) => run.await,
        None => std::future::pending().await,
    }
}

/// One terminal event: edits the input, or says what to do.
fn handle_event(
    event: Event,
    editor: &mut Editor,
    busy: bool,
    last_ctrl_c: &mut Option<Instant>,
) -> Action {
    match event {
        Event::Paste(text) => {
            editor.insert(&text);
            Action::None
        }
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            handle_key(key, editor, busy, last_ctrl_c)
        }
        _ => Action::None,
    }
}

fn handle_key(
    key: KeyEvent,
    editor: &mut Editor,
    busy: bool,
    last_ctrl_c: &mut Option<Instant>,
) -> Action {
    let control = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Enter if alt => Action::Submit(Delivery::FollowUp),
        KeyCode::Enter if key.modifiers.contains(KeyModifiers::SHIFT) => {
            editor.insert("\n");
            Action::None
        }
        KeyCode::Enter => Action::Submit(Delivery::Steer),
        KeyCode::Tab => Action::Complete,
        KeyCode::Esc if busy => Action::Interrupt,
        KeyCode::Char('c') if control => {
            let twice = last_ctrl_c.is_some_and(|at| at.elapsed() < Duration::from_secs(1));
            *last_ctrl_c = Some(Instant::now());
            if twice {
                Action::Quit(ChatEnd::Interrupted)
            } else if busy {
                Action::Interrupt
            } else {
                editor.clear();
                Action::None
            }
        }
        KeyCode::Char('d') if control => {
            if editor.is_empty() {
                Action::Quit(ChatEnd::Quit)
            } else {
                editor.delete();
                Action::None
            }
        }
        KeyCode::Char('j') if control => {
            editor.insert("\n");
            Action::None
        }
        KeyCode::Char('a') if control => {
            editor.home();
            Action::None
        }
        KeyCode::Char('e') if control => {
            editor.end();
            Action::None
        }
        KeyCode::Char('u') if control => {
            editor.kill_to_start();
            Action::None
        }
        KeyCode::Char('k') if control => {
            editor.kill_to_end();
            Action::None
        }
        KeyCode::Char('w') if control => {
            editor.delete_word();
            Action::None
        }
        KeyCode::Char(c) if !control => {
            editor.insert(c.encode_utf8(&mut [0; 4]));
            Action::None
        }
        KeyCode::Backspace => {
            editor.backspace();
            Action::None
        }
        KeyCode::Delete => {
            editor.delete();
            Action::None
        }
        KeyCode::Left => {
            editor.left();
            Action::None
        }
        KeyCode::Right => {
            editor.right();
            Action::None
        }
        KeyCode::Home => {
            editor.home();
            Action::None
        }
        KeyCode::End => {
            editor.end();
            Action::None
        }
        KeyCode::Up => {
            editor.up();
            Action::None
        }
        KeyCode::Down => {
            editor.down();
            Action::None
        }
        _ => Action::None,
    }
}

/// Prints finished lines above the viewport, wrapped at the screen's width.
fn print_above(terminal: &mut Term, lines: &[String]) -> io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let width = terminal.size()?.width;
    let paragraph = view::above(lines);
    let rows = view::rows_of(&paragraph, width);
    terminal.insert_before(rows, |buffer| {
        let area = view::top(buffer.area, rows);
        paragraph.render(area, buffer);
    })
}

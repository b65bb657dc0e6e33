//! What `toolhost chat` shows: the lines that scroll above (the reply, tool
//! lines, notes), made from the loop's events, and the viewport under
//! them: the reply's unfinished line, the input, the queued messages and
//! the status line. Every outside text passes through `crate::terminal`.

use std::collections::HashMap;
use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

use super::editor::Editor;
use crate::agent::{AgentEvent, Answer, Delivery, Message, Queued, StopReason};
use crate::provider::TokenTotals;
use crate::terminal::{call_summary, last_line, one_line, short};

/// Rows of the viewport under the scrolling lines.
pub(crate) const VIEWPORT_HEIGHT: u16 = 8;
/// Input rows shown at most (the cursor's and those before it).
const INPUT_ROWS: usize = 3;
/// Queued messages shown at most.
const QUEUED_ROWS: usize = 2;

/// The status line's facts.
#[derive(Debug, Default)]
pub(crate) struct Status {
    pub(crate) model: String,
    pub(crate) workspace: String,
    /// The current prompt's turn, from 1; 0 before the first.
    pub(crate) turn: u32,
    /// This session's tokens so far.
    pub(crate) tokens: TokenTotals,
    /// What they cost (`[model.prices]`), when known.
    pub(crate) prices: Option<crate::provider::prices::Prices>,
    /// What is running: `waiting for the model`, or the tools by name.
    pub(crate) activity: Option<String>,
    /// Since when the current prompt runs.
    pub(crate) since: Option<Instant>,
}

impl Status {
    /// A new conversation: no turns, no tokens yet.
    pub(super) fn reset_usage(&mut self) {
        self.turn = 0;
        self.tokens = TokenTotals::default();
    }

    /// The status line for a terminal `width` columns wide. What changes
    /// (the activity, the tokens) must show, so a workspace path too long
    /// for the line is cut from its start (`.../proj`), or left out: the
    /// header printed it whole.
    fn line(&self, width: usize) -> String {
        let activity = match (&self.activity, self.since) {
            (Some(activity), Some(since)) => {
                format!("{activity} ({}s, Esc stops it)", since.elapsed().as_secs())
            }
            (Some(activity), None) => activity.clone(),
            (None, _) => "ready".into(),
        };
        let model = one_line(&self.model);
        let rest = format!("turn {} · {} · {activity}", self.turn, self.spent());
        let workspace = one_line(&self.workspace);
        let fixed = model.chars().count() + " ·  · ".chars().count() + rest.chars().count();
        match fit_path_end(&workspace, width.saturating_sub(fixed)) {
            Some(workspace) => format!("{model} · {workspace} · {rest}"),
            None => format!("{model} · {rest}"),
        }
    }

    /// This session's tokens, and their cost when the prices are known.
    pub(crate) fn spent(&self) -> String {
        crate::provider::prices::spent(&self.tokens, self.prices.as_ref())
    }
}

/// `path` in at most `room` characters: whole, or its end after `...`
/// from a `/` on (`.../work/proj`), or `None` when not even its last name
/// fits.
fn fit_path_end(path: &str, room: usize) -> Option<String> {
    let chars = path.chars().count();
    if chars <= room {
        return Some(path.to_string());
    }
    let keep = room.checked_sub(3)?;
    let tail: String = path.chars().skip(chars - keep).collect();
    let from_slash = tail.find('/')?;
    Some(format!("...{}", &tail[from_slash..]))
}

/// Turns the loop's events into finished lines for above the viewport,
/// keeping the reply's unfinished line and each call's summary.
#[derive(Debug, Default)]
pub(crate) struct Transcript {
    /// The reply's text after its last line break.
    pub(crate) live: String,
    /// Whether the current reply streamed (its `message` is not printed
    /// again).
    streamed: bool,
    calls: HashMap<String, String>,
    running: Vec<String>,
    turns: u32,
    /// Tokens in and out of the current prompt's replies.
    tokens: TokenTotals,
}

impl Transcript {
    /// The lines `event` finishes, and updates `status`.
    ///
    /// Long: one arm per event kind, each its lines and its status change.
    pub(crate) fn lines(&mut self, event: &AgentEvent, status: &mut Status) -> Vec<String> {
        let mut lines = Vec::new();
        match event {
            AgentEvent::AgentStart => {
                self.turns = 0;
                self.tokens = TokenTotals::default();
                status.since = Some(Instant::now());
            }
            AgentEvent::TurnStart { turn } => {
                status.turn = *turn;
                status.activity = Some("waiting for the model".into());
            }
            AgentEvent::CompactionStart { summarising, .. } => {
                status.activity = Some(if *summarising {
                    "summarising the conversation so far".into()
                } else {
                    "compacting the conversation".into()
                });
            }
            AgentEvent::CompactionEnd {
                tokens_before,
                tokens_after,
                masked,
                first_kept,
                usage,
                ..
            } => {
                if let Some(usage) = usage {
                    status.tokens.add(usage);
                    self.tokens.add(usage);
                }
                lines.push(crate::agent::compaction_line(
                    *tokens_before,
                    *tokens_after,
                    masked.len(),
                    *first_kept,
                ));
            }
            AgentEvent::Warning { message } => {
                lines.push(format!("warning: {}", one_line(message)));
            }
            AgentEvent::ModelRetry {
                attempt, reason, ..
            } => lines.push(format!(
                "retrying the model request ({attempt}): {}",
                one_line(&short(reason, 160))
            )),
            AgentEvent::MessageDelta { text } => {
                self.streamed = true;
                status.activity = Some("replying".into());
                self.live.push_str(text);
                while let Some(at) = self.live.find('\n') {
                    lines.push(one_line(&self.live[..at]).into_owned());
                    self.live.drain(..=at);
                }
            }
            AgentEvent::Message { message } => match message {
                Message::User { text, delivery } => {
                    let mark = match delivery {
                        None => "",
                        Some(Delivery::Steer) => "(steer) ",
                        Some(Delivery::FollowUp) => "(follow-up) ",
                    };
                    for (n, line) in text.lines().enumerate() {
                        let lead = if n == 0 {
                            format!("> {mark}")
                        } else {
                            "  ".into()
                        };
                        lines.push(format!("{lead}{}", one_line(line)));
                    }
                }
                Message::Assistant(reply) => {
                    self.turns += 1;
                    if let Some(usage) = &reply.usage {
                        status.tokens.add(usage);
                        self.tokens.add(usage);
                    }
                    if self.streamed {
                        if !self.live.is_empty() {
                            lines.push(one_line(&std::mem::take(&mut self.live)).into_owned());
                        }
                    } else {
                        lines.extend(reply.text().lines().map(|l| one_line(l).into_owned()));
                    }
                    self.streamed = false;
                }
                Message::ToolResults { results } => {
                    for result in results {
                        let args = self.calls.remove(&result.call_id).unwrap_or_default();
                        let head = format!("-> {} {}", one_line(&result.tool), one_line(&args));
                        let head = head.trim_end();
                        if result.is_error {
                            let first = result.text.lines().next().unwrap_or_default();
                            // Refusals start with `error:` themselves.
                            let first = first.strip_prefix("error: ").unwrap_or(first);
                            lines.push(format!("{head} error: {}", one_line(&short(first, 200))));
                        } else {
                            lines.push(format!("{head} ok {} B", result.text.len()));
                        }
                    }
                }
            },
            AgentEvent::ToolExecutionStart {
                call_id,
                tool,
                arguments,
            } => {
                self.calls.insert(call_id.clone(), call_summary(arguments));
                self.running.push(tool.clone());
                status.activity = Some(format!("running {}", self.running.join(", ")));
            }
            AgentEvent::ToolExecutionUpdate { tool, message, .. } => {
                // A tool's latest line while it runs: a long command shows
                // it is alive, and what it is at.
                status.activity = Some(format!(
                    "running {} · {tool}: {}",
                    self.running.join(", "),
                    one_line(&short(last_line(message), 80))
                ));
            }
            AgentEvent::ToolExecutionEnd { tool, .. } => {
                if let Some(at) = self.running.iter().position(|t| t == tool) {
                    self.running.remove(at);
                }
                status.activity = Some(if self.running.is_empty() {
                    "working".into()
                } else {
                    format!("running {}", self.running.join(", "))
                });
            }
            AgentEvent::AgentEnd { stop } => {
                if !self.live.is_empty() {
                    lines.push(one_line(&std::mem::take(&mut self.live)).into_owned());
                }
                if stop.reason != StopReason::Completed {
                    lines.push(format!(
                        "stopped: {} after {} turn(s): {}",
                        stop.reason.as_str(),
                        stop.turns,
                        one_line(&stop.evidence)
                    ));
                }
                let seconds = status
                    .since
                    .map_or(0.0, |since| since.elapsed().as_secs_f64());
                // As `run`'s text output ends each prompt.
                lines.push(format!(
                    "{} turn(s) · {} · {seconds:.1} s",
                    stop.turns,
                    crate::provider::prices::spent(&self.tokens, status.prices.as_ref())
                ));
                status.activity = None;
                status.since = None;
                self.running.clear();
            }
            AgentEvent::GrantAsked { permit, why, .. } => {
                let workspace = std::path::Path::new(&status.workspace);
                let why = why
                    .as_ref()
                    .map(|why| format!(": it is protected because {}", one_line(why)))
                    .unwrap_or_default();
                lines.push(format!(
                    "? `{}` asks to {} ({}){why}",
                    one_line(&permit.tool),
                    one_line(&permit.what(workspace)),
                    one_line(&permit.flag(workspace))
                ));
                status.activity = Some("waiting for your answer".into());
            }
            AgentEvent::GrantAnswered { permit, answer, .. } => {
                let workspace = std::path::Path::new(&status.workspace);
                let said = match answer {
                    Answer::Once => "allowed once",
                    Answer::Session => "allowed for this session",
                    Answer::Deny => "denied",
                };
                lines.push(format!(
                    "{said}: `{}` may {}{}",
                    one_line(&permit.tool),
                    if *answer == Answer::Deny { "not " } else { "" },
                    one_line(&permit.what(workspace))
                ));
                status.activity = Some(format!("running {}", self.running.join(", ")));
            }
            AgentEvent::InputQueued { .. }
            | AgentEvent::InputDelivered { .. }
            | AgentEvent::InputReturned { .. }
            | AgentEvent::TurnEnd { .. } => {}
        }
        lines
    }
}

/// Draws the viewport: the reply's unfinished line, the input, the queued
/// messages, the status line at the bottom.
pub(crate) fn draw(
    frame: &mut Frame<'_>,
    live: &str,
    (editor, asking): (&Editor, Option<&str>),
    queued: &[Queued],
    status: &Status,
) {
    let area = frame.area();
    let mut rows: Vec<Line<'_>> = Vec::new();
    rows.push(Line::raw(one_line(live).into_owned()));

    let (cursor_line, cursor_column) = editor.cursor_position();
    let lines: Vec<&str> = editor.text().split('\n').collect();
    let first = (cursor_line + 1).saturating_sub(INPUT_ROWS);
    let input_top = rows.len();
    // A grant asked for takes the input's place until it is answered.
    if let Some(question) = asking {
        rows.push(
            Line::raw(format!("? {}", one_line(question)))
                .style(Style::default().add_modifier(Modifier::BOLD)),
        );
    } else {
        for (n, line) in lines.iter().enumerate().skip(first).take(INPUT_ROWS) {
            let lead = if n == 0 { "› " } else { "  " };
            rows.push(Line::raw(format!("{lead}{}", one_line(line))));
        }
    }

    for message in queued.iter().take(QUEUED_ROWS) {
        let kind = match message.delivery {
            Delivery::Steer => "steer",
            Delivery::FollowUp => "follow-up",
        };
        rows.push(
            Line::raw(format!(
                "  queued {kind}: {}",
                one_line(&short(&message.text.replace('\n', " "), 200))
            ))
            .style(Style::default().add_modifier(Modifier::DIM)),
        );
    }
    if queued.len() > QUEUED_ROWS {
        rows.push(
            Line::raw(format!(
                "  +{} more queued (/queue shows them)",
                queued.len() - QUEUED_ROWS
            ))
            .style(Style::default().add_modifier(Modifier::DIM)),
        );
    }

    let height = usize::from(area.height);
    let status_row = height.saturating_sub(1);
    rows.truncate(status_row);
    while rows.len() < status_row {
        rows.push(Line::raw(""));
    }
    rows.push(
        Line::raw(status.line(usize::from(area.width)))
            .style(Style::default().add_modifier(Modifier::REVERSED)),
    );
    frame.render_widget(Paragraph::new(rows), area);

    let row = input_top + cursor_line - first;
    let column = 2 + cursor_column;
    if row < status_row && asking.is_none() {
        frame.set_cursor_position(Position::new(
            area.x
                + u16::try_from(column)
                    .unwrap_or(u16::MAX)
                    .min(area.width.saturating_sub(1)),
            area.y + u16::try_from(row).unwrap_or(0),
        ));
    }
}

/// Finished lines as printed above the viewport: wrapped at words.
pub(crate) fn above(lines: &[String]) -> Paragraph<'_> {
    let text: Vec<Line<'_>> = lines.iter().map(|line| Line::raw(line.as_str())).collect();
    Paragraph::new(text).wrap(Wrap { trim: false })
}

/// How many rows `paragraph` takes at `width` columns, wrapped as it is
/// drawn. Columns over the width undercount a line wrapped at words, and
/// the rows past the count were never printed (the header's hints under a
/// long workspace path, a reply's last lines).
pub(crate) fn rows_of(paragraph: &Paragraph<'_>, width: u16) -> u16 {
    u16::try_from(paragraph.line_count(width.max(1))).unwrap_or(u16::MAX)
}

/// The area of `rows` rows at the top of `area`.
pub(crate) fn top(area: Rect, rows: u16) -> Rect {
    Rect {
        height: rows.min(area.height),
        ..area
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    /// The viewport as text, one string per row, trailing blanks cut.
    fn screen(live: &str, editor: &Editor, queued: &[Queued], status: &Status) -> Vec<String> {
        let mut terminal =
            Terminal::new(TestBackend::new(90, VIEWPORT_HEIGHT)).expect("test terminal");
        terminal
            .draw(|frame| draw(frame, live, (editor, None), queued, status))
            .expect("draw");
        let buffer = terminal.backend().buffer();
        (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    fn status() -> Status {
        Status {
            model: "gpt-4o (openai)".into(),
            workspace: "/home/me/proj".into(),
            turn: 2,
            tokens: crate::provider::TokenTotals {
                input_tokens: 1200,
                output_tokens: 80,
                ..Default::default()
            },
            prices: None,
            activity: Some("running read_file".into()),
            since: None,
        }
    }

    #[test]
    fn lines_printed_above_take_the_rows_their_words_wrap_to() {
        let lines = vec!["aaaaaa bbbbbbbbbb cc".to_string(), "last".to_string()];
        let paragraph = above(&lines);
        // 20 columns are two rows of 10, but wrapped at words three.
        assert_eq!(rows_of(&paragraph, 10), 4);
        let mut terminal = Terminal::new(TestBackend::new(10, 4)).expect("terminal");
        terminal
            .draw(|frame| frame.render_widget(above(&lines), frame.area()))
            .expect("draw");
        let buffer = terminal.backend().buffer();
        let row = |y: u16| -> String { (0..10).map(|x| buffer[(x, y)].symbol()).collect() };
        assert_eq!(
            (0..4).map(row).collect::<Vec<_>>(),
            ["aaaaaa    ", "bbbbbbbbbb", "cc        ", "last      "]
        );
    }

    #[test]
    fn a_long_workspace_path_gives_way_to_what_changes_in_the_status_line() {
        let mut status = status();
        status.activity = None;
        assert_eq!(
            status.line(80),
            "gpt-4o (openai) · /home/me/proj · turn 2 · 1200 in / 80 out tokens · ready"
        );
        status.workspace = format!("/tmp/{}/work/proj", "z".repeat(60));
        assert_eq!(
            status.line(80),
            "gpt-4o (openai) · .../work/proj · turn 2 · 1200 in / 80 out tokens · ready"
        );
        assert_eq!(
            status.line(60),
            "gpt-4o (openai) · turn 2 · 1200 in / 80 out tokens · ready"
        );
        assert_eq!(fit_path_end("/a/b", 4), Some("/a/b".into()));
        assert_eq!(fit_path_end("/abc/def", 7), Some(".../def".into()));
        assert_eq!(fit_path_end("/abc/def", 6), None);
    }

    #[test]
    fn a_running_tools_latest_line_shows_in_the_status_escaped() {
        let mut transcript = Transcript::default();
        let mut status = status();
        let start = AgentEvent::ToolExecutionStart {
            call_id: "c1".into(),
            tool: "bash".into(),
            arguments: serde_json::json!({"command": "cargo test"}),
        };
        assert!(transcript.lines(&start, &mut status).is_empty());
        let update = AgentEvent::ToolExecutionUpdate {
            call_id: "c1".into(),
            tool: "bash".into(),
            message: "   Compiling a v0.1.0\n\x1b[2J  Running tests\n\n".into(),
        };
        assert!(transcript.lines(&update, &mut status).is_empty());
        assert_eq!(
            status.activity.as_deref(),
            Some("running bash · bash: \\x1b[2J  Running tests")
        );
        let end = AgentEvent::ToolExecutionEnd {
            call_id: "c1".into(),
            tool: "bash".into(),
            is_error: false,
            duration_ms: 5,
            text: "ok".into(),
            output_bytes: 2,
            saved_to: None,
            execution: None,
        };
        transcript.lines(&end, &mut status);
        assert_eq!(status.activity.as_deref(), Some("working"));
    }

    #[test]
    fn queued_messages_show_under_the_input_by_kind() {
        let mut editor = Editor::default();
        editor.insert("and the docs");
        let queued = [
            Queued {
                delivery: Delivery::Steer,
                text: "use tabs\nnot spaces".into(),
            },
            Queued {
                delivery: Delivery::FollowUp,
                text: "then run the tests".into(),
            },
            Queued {
                delivery: Delivery::FollowUp,
                text: "and commit".into(),
            },
        ];
        assert_eq!(
            screen("Reading the fi", &editor, &queued, &status()),
            [
                "Reading the fi",
                "› and the docs",
                "  queued steer: use tabs not spaces",
                "  queued follow-up: then run the tests",
                "  +1 more queued (/queue shows them)",
                "",
                "",
                "gpt-4o (openai) · /home/me/proj · turn 2 · 1200 in / 80 out tokens · running read_file",
            ]
        );
    }

    #[test]
    fn the_status_line_says_ready_when_idle_and_control_characters_are_inert() {
        let mut editor = Editor::default();
        editor.insert("one\ntwo\nthree\nfour");
        let idle = Status {
            activity: None,
            workspace: "/w\x1b[2J".into(),
            ..status()
        };
        assert_eq!(
            screen("", &editor, &[], &idle),
            [
                "",
                "  two",
                "  three",
                "  four",
                "",
                "",
                "",
                "gpt-4o (openai) · /w\\x1b[2J · turn 2 · 1200 in / 80 out tokens · ready",
            ]
        );
    }
}

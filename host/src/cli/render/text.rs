//! `--output-format text`: the reply on stdout as it streams, one line per
//! tool call on stderr, a spinner while the model thinks (on a terminal).

use std::collections::HashMap;
use std::io::{self, Write as _};

use super::{RunOutput, note, retry_notice, short};
use crate::agent::{AgentEvent, Message, StopReason, StopRecord};
use crate::terminal::{self, one_line};
use crate::transcript::SessionWriter;

/// What the text output remembers between events.
#[derive(Debug, Default)]
pub(super) struct TextOutput {
    /// Per call id, joined with the result when the tool-results message
    /// arrives.
    calls: HashMap<String, RunningCall>,
    /// The current reply's text was printed as it streamed in (so the whole
    /// message must not be printed again), and whether it ended a line.
    streamed: Option<bool>,
    /// Shown on a terminal stderr while the model has not answered yet.
    spinner: Option<indicatif::ProgressBar>,
    /// Whether stderr is a terminal (no spinner otherwise).
    interactive: bool,
}

/// What the text output remembers of a call until its result arrives.
#[derive(Debug, Default)]
struct RunningCall {
    short_arguments: String,
    duration_ms: Option<u64>,
}

impl TextOutput {
    pub(super) fn new() -> Self {
        use std::io::IsTerminal as _;
        TextOutput {
            interactive: io::stderr().is_terminal(),
            ..TextOutput::default()
        }
    }

    /// A spinner from the start of a turn until the model's first text or
    /// its whole reply, so a slow model does not look like a hung program.
    fn update_spinner(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TurnStart { .. } => {
                let spinner = indicatif::ProgressBar::new_spinner();
                spinner.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                spinner.set_message("waiting for the model");
                spinner.enable_steady_tick(std::time::Duration::from_millis(100));
                self.spinner = Some(spinner);
            }
            AgentEvent::MessageDelta { .. }
            | AgentEvent::Message { .. }
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::AgentEnd { .. } => {
                if let Some(spinner) = self.spinner.take() {
                    spinner.finish_and_clear();
                }
            }
            _ => {}
        }
    }
}

impl RunOutput for TextOutput {
    fn event(&mut self, event: &AgentEvent) {
        if self.interactive {
            self.update_spinner(event);
        }
        retry_notice(event);
        match event {
            AgentEvent::MessageDelta { text } => {
                let mut out = io::stdout().lock();
                let _ = write!(out, "{}", terminal::multiline(text)).and_then(|()| out.flush());
                self.streamed = Some(text.ends_with('\n'));
            }
            AgentEvent::Message {
                message: Message::Assistant(assistant),
            } => match self.streamed.take() {
                // Already on screen; just end its line.
                Some(ended_line) => {
                    if !ended_line {
                        let _ = writeln!(io::stdout().lock());
                    }
                }
                None => {
                    let text = assistant.text();
                    if !text.is_empty() {
                        let newline = if text.ends_with('\n') { "" } else { "\n" };
                        let _ = write!(
                            io::stdout().lock(),
                            "{}{newline}",
                            terminal::multiline(&text)
                        );
                    }
                }
            },
            AgentEvent::ToolExecutionStart {
                call_id, arguments, ..
            } => {
                let short_arguments = short(&arguments.to_string(), 60);
                self.calls.insert(
                    call_id.clone(),
                    RunningCall {
                        short_arguments,
                        duration_ms: None,
                    },
                );
            }
            AgentEvent::ToolExecutionEnd {
                call_id,
                duration_ms,
                ..
            } => {
                if let Some(entry) = self.calls.get_mut(call_id) {
                    entry.duration_ms = Some(*duration_ms);
                }
            }
            AgentEvent::Message {
                message: Message::ToolResults { results },
            } => {
                for result in results {
                    let RunningCall {
                        short_arguments: args,
                        duration_ms: duration,
                    } = self.calls.remove(&result.call_id).unwrap_or_default();
                    let status = if result.is_error { "error" } else { "ok" };
                    let timing = duration.map(|ms| format!(" {ms} ms")).unwrap_or_default();
                    let detail = if result.is_error {
                        format!(
                            ": {}",
                            short(result.text.lines().next().unwrap_or_default(), 120)
                        )
                    } else {
                        format!(" {} B", result.text.len())
                    };
                    note(format_args!(
                        "-> {} {} {status}{timing}{}",
                        one_line(&result.tool),
                        one_line(&args),
                        one_line(&detail)
                    ));
                }
            }
            _ => {}
        }
    }

    /// Where the session was recorded, and why the run stopped unless it
    /// completed.
    fn finish(
        &mut self,
        _ledger: &[Message],
        stop: &StopRecord,
        session: Option<&SessionWriter>,
    ) -> io::Result<()> {
        if let Some(session) = session {
            let id = one_line(session.id());
            note(format_args!(
                "session {id} (continue it with `toolhost run --resume {id} \"...\"`)"
            ));
        }
        if stop.reason != StopReason::Completed {
            note(format_args!(
                "stopped: {} after {} turn(s): {}",
                stop.reason.as_str(),
                stop.turns,
                one_line(&stop.evidence)
            ));
        }
        Ok(())
    }
}

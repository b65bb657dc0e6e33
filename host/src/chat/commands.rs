//! Slash commands: a line that starts with `/` is a command, never sent to
//! the model; `//` sends the line with one slash.

use std::fmt::Write as _;

use std::sync::Arc;

use super::session::{ChatEnd, Screen, Session};
use crate::agent::{Delivery, Message, ModelClient, ToolRunner};
use crate::sandbox::PermitKind;
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

/// Every command's name, for Tab to complete.
pub(super) const COMMANDS: &[&str] = &[
    "/allow",
    "/allow-exec",
    "/allow-net",
    "/allow-read",
    "/clear",
    "/compact",
    "/grants",
    "/help",
    "/model",
    "/queue",
    "/quit",
    "/resume",
    "/session",
    "/tools",
    "/usage",
];

/// What Tab makes of the input.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Completed {
    /// The input, completed as far as the commands agree.
    Line(String),
    /// The commands it could still be, to show.
    Choices(Vec<&'static str>),
    /// Nothing to complete: not a command's name being typed.
    Nothing,
}

/// Completes the command name being typed (`/gr` -> `/grants `): to the
/// one command it names, else as far as the ones it could be agree, else
/// the choices.
pub(super) fn complete(input: &str) -> Completed {
    if !input.starts_with('/') || input.contains(char::is_whitespace) {
        return Completed::Nothing;
    }
    let matches: Vec<&'static str> = COMMANDS
        .iter()
        .copied()
        .filter(|name| name.starts_with(input))
        .collect();
    match matches.as_slice() {
        [] => Completed::Nothing,
        [one] => Completed::Line(format!("{one} ")),
        [first, rest @ ..] => {
            let common = rest.iter().fold(first.len(), |len, name| {
                first
                    .bytes()
                    .zip(name.bytes())
                    .take(len)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            if common > input.len() {
                Completed::Line(first[..common].to_string())
            } else {
                Completed::Choices(matches)
            }
        }
    }
}

/// What a command prints, and whether it ends the chat.
pub(super) struct Reply {
    pub(super) lines: Vec<String>,
    pub(super) quit: Option<ChatEnd>,
    /// Compact the conversation now, keeping this focus (`/compact`):
    /// it runs as a turn does.
    pub(super) compact: Option<String>,
}

impl Reply {
    fn lines(lines: Vec<String>) -> Self {
        Reply {
            lines,
            quit: None,
            compact: None,
        }
    }

    fn line(line: String) -> Self {
        Reply::lines(vec![line])
    }
}

/// The commands that replace the conversation or its model: the ledger
/// belongs to the running turn until it ends.
const NOT_WHILE_BUSY: &[&str] = &["/clear", "/resume", "/model", "/compact"];

pub(super) const HELP: &[&str] = &[
    "Enter sends; while the agent works it steers (delivered after the running tools).",
    "Alt+Enter queues a follow-up (delivered when the agent would stop). Tab completes a /command.",
    "Esc stops the turn and puts queued messages back here. Ctrl+C stops, or clears",
    "the line; twice quits. Ctrl+D on an empty line quits. Up/Down: history.",
    "/help        this text",
    "/tools       the tools, what each may read and write, their limits",
    "/session     the session's id and file",
    "/usage       tokens in and out this session",
    "/queue       the queued messages; /queue clear drops them, /queue drop N one",
    "/model NAME  ask the same server for another model from the next prompt on",
    "/resume      the recent sessions; /resume ID (or last) continues one here",
    "/compact     summarise the conversation now; /compact TEXT: what it must keep",
    "/allow TOOL=DIR        let a tool write in a directory for this session",
    "/allow-read TOOL=DIR   let it read one; /allow-net TOOL=URL reach a host;",
    "/allow-exec TOOL=PROGRAM run a program natively; /grants lists what you allowed",
    "/clear       a new conversation, in a new session file",
    "/quit        quit (as Ctrl+D)",
    "//text       sends `/text` to the model",
];

impl<M: ModelClient, T: ToolRunner> Session<M, T> {
    /// Runs `line`, a command. `ledger` is `None` while a turn runs.
    pub(super) fn command(
        &mut self,
        line: &str,
        busy: bool,
        screen: &mut Screen,
        ledger: &mut Option<Vec<Message>>,
    ) -> Reply {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        let rest: Vec<&str> = words.collect();
        if busy && NOT_WHILE_BUSY.contains(&name) {
            return Reply::line(format!("{name} waits for the turn to end: Esc stops it"));
        }
        match (name, rest.as_slice()) {
            ("/help", []) => Reply::lines(HELP.iter().map(|l| (*l).to_string()).collect()),
            ("/tools", []) => Reply::lines(self.tool_lines()),
            ("/session", []) => Reply::line(match &self.session {
                Some((id, path)) => format!(
                    "session {} ({})",
                    one_line(id),
                    one_line(&path.display().to_string())
                ),
                None => "no session file (--no-session)".into(),
            }),
            ("/usage", []) => Reply::line(format!("{} this session", screen.status.spent())),
            ("/queue", []) => Reply::lines(self.queue_lines()),
            ("/queue", ["clear"]) => {
                let dropped = self.inbox.give_back().len();
                Reply::line(format!("dropped {dropped} queued message(s)"))
            }
            ("/queue", ["drop", n]) => {
                let removed = n
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|at| self.inbox.remove(at));
                Reply::line(match removed {
                    Some(q) => format!("dropped: {}", one_line(&short(&q.text, 200))),
                    None => format!(
                        "there is no queued message {}; /queue lists them",
                        one_line(n)
                    ),
                })
            }
            ("/grants", []) => Reply::lines(self.grant_lines()),
            ("/allow" | "/allow-write", spec) if !spec.is_empty() => {
                Reply::line(self.allow(PermitKind::Write, &spec.join(" ")))
            }
            ("/allow-read", spec) if !spec.is_empty() => {
                Reply::line(self.allow(PermitKind::Read, &spec.join(" ")))
            }
            ("/allow-net", [spec]) => Reply::line(self.allow(PermitKind::Net, spec)),
            ("/allow-exec", [spec]) => Reply::line(self.allow(PermitKind::Exec, spec)),
            ("/allow" | "/allow-write" | "/allow-read" | "/allow-net" | "/allow-exec", _) => {
                Reply::line(format!(
                    "{name} takes TOOL=WHAT, as its flag does: `{name} bash=src`; /grants lists \
                     what this session allows"
                ))
            }
            ("/quit", []) => Reply {
                quit: Some(ChatEnd::Quit),
                ..Reply::lines(Vec::new())
            },
            ("/clear", []) => Reply::line(self.clear(screen, ledger)),
            // Its line comes with its event when it ends.
            ("/compact", focus) => Reply {
                compact: Some(focus.join(" ")),
                ..Reply::lines(Vec::new())
            },
            ("/resume", []) => Reply::lines(match self.control.recent_sessions() {
                Ok(lines) if lines.is_empty() => vec!["no sessions to resume yet".into()],
                Ok(mut lines) => {
                    lines.push(
                        "/resume ID continues one (a unique prefix of the id will do)".into(),
                    );
                    lines
                }
                Err(error) => vec![format!(
                    "the sessions could not be listed: {}",
                    reason(&error)
                )],
            }),
            ("/resume", [which]) => Reply::lines(self.resume(which, screen, ledger)),
            ("/model", [name]) => Reply::line(self.switch_model(name, screen)),
            ("/model", []) => Reply::line(format!(
                "the model is {}; /model NAME asks the same server for another",
                one_line(&screen.status.model)
            )),
            _ => Reply::line(format!(
                "unknown command `{}`: /help lists the commands; `/{}` sends it to the model",
                one_line(&short(line, 60)),
                one_line(&short(line, 60))
            )),
        }
    }

    /// `/clear`: a new, empty conversation in a new session file. A file
    /// that cannot be made leaves everything as it was, rather than a new
    /// conversation recorded in the old file.
    fn clear(&mut self, screen: &mut Screen, ledger: &mut Option<Vec<Message>>) -> String {
        match self.control.new_session() {
            Ok((opened, made_room)) => {
                *ledger = Some(Vec::new());
                screen.status.reset_usage();
                let mut line = match &opened {
                    Some((id, _)) => format!("a new conversation, in session {}", one_line(id)),
                    None => "a new conversation".into(),
                };
                if let Some(made_room) = made_room {
                    line = format!("{line}; {}", one_line(&made_room));
                }
                // A new session starts with none of the old one's grants.
                self.grants.clear();
                self.session = opened;
                line
            }
            Err(error) => format!(
                "not cleared: a new session file could not be made: {}",
                reason(&error)
            ),
        }
    }

    /// `/resume ID`: that session's conversation replaces this one; the
    /// model stays the chat's.
    fn resume(
        &mut self,
        which: &str,
        screen: &mut Screen,
        ledger: &mut Option<Vec<Message>>,
    ) -> Vec<String> {
        if self.session.as_ref().is_some_and(|(id, _)| id == which) {
            return vec![format!("this chat is session {} already", one_line(which))];
        }
        match self.control.resume(which) {
            Ok(resumed) => {
                let mut lines = resumed.notes;
                // That session's grants replace this one's, each checked
                // again as its flag would be.
                self.grants.clear();
                let tools = self.agent.tools();
                lines.extend(self.grants.restore(resumed.grants, |permit| {
                    tools.permit(&permit.tool, permit.kind, &permit.target)
                }));
                lines.push(format!(
                    "resumed session {}: {} message(s); the next prompt continues it",
                    one_line(&resumed.id),
                    resumed.ledger.len()
                ));
                *ledger = Some(resumed.ledger);
                screen.status.reset_usage();
                self.session = resumed.session;
                lines
            }
            Err(error) => vec![format!("not resumed: {}", reason(&error))],
        }
    }

    /// `/model NAME`: the next request asks for `name`.
    fn switch_model(&mut self, name: &str, screen: &mut Screen) -> String {
        let Some(agent) = Arc::get_mut(&mut self.agent) else {
            return "/model waits for the turn to end: Esc stops it".into();
        };
        match self.control.model(name) {
            Ok((model, shown)) => {
                agent.set_model(model);
                screen.status.model = shown;
                format!(
                    "the model is {} from the next prompt on",
                    one_line(&screen.status.model)
                )
            }
            Err(error) => format!(
                "the model stays {}: {}",
                one_line(&screen.status.model),
                reason(&error)
            ),
        }
    }

    /// `/allow TOOL=WHAT` (and its kin): the grant checked as its flag
    /// would be, then held for the session and recorded.
    fn allow(&mut self, kind: PermitKind, spec: &str) -> String {
        let Some((tool, target)) = spec.split_once('=') else {
            return format!(
                "write it as TOOL=WHAT, as the flag: `bash={}`",
                one_line(&short(spec, 80))
            );
        };
        match self.agent.tools().permit(tool, kind, target) {
            Ok(permits) => {
                let added: Vec<_> = permits
                    .into_iter()
                    .filter(|permit| self.grants.add(permit.clone()))
                    .collect();
                self.control.granted(&added);
                let workspace = self.grants.workspace();
                if added.is_empty() {
                    return "this session allows that already; /grants lists it".into();
                }
                let said: Vec<String> = added
                    .iter()
                    .map(|permit| {
                        format!(
                            "`{}` may {}",
                            one_line(&permit.tool),
                            one_line(&permit.what(workspace))
                        )
                    })
                    .collect();
                format!("allowed for this session: {}", said.join("; "))
            }
            Err(why) => format!("cannot allow it: {}", one_line(&why)),
        }
    }

    /// `/grants`: what the user allowed in this session, with the flag
    /// that gives each from the start.
    fn grant_lines(&self) -> Vec<String> {
        let workspace = self.grants.workspace();
        let given = self.grants.snapshot();
        if given.is_empty() {
            return vec![
                "nothing allowed in this session beyond the flags and config (/tools lists \
                 those)"
                    .into(),
            ];
        }
        given
            .iter()
            .map(|permit| {
                format!(
                    "`{}` may {} (from the start: {})",
                    one_line(&permit.tool),
                    one_line(&permit.what(workspace)),
                    one_line(&permit.flag(workspace))
                )
            })
            .collect()
    }

    fn queue_lines(&self) -> Vec<String> {
        let queued = self.inbox.queued();
        if queued.is_empty() {
            return vec!["nothing is queued".into()];
        }
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
            .collect()
    }

    fn tool_lines(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| {
                let mut line = one_line(&tool.reach().line()).into_owned();
                let limits = &tool.limits;
                let _ = write!(
                    line,
                    "; {}",
                    crate::units::tool_limits(
                        limits.fuel,
                        std::time::Duration::from_millis(limits.timeout_ms),
                        limits.memory_bytes,
                        limits.output_bytes,
                        limits.write_bytes,
                    )
                );
                line
            })
            .collect()
    }
}

/// An error as one line of the transcript.
fn reason(error: &anyhow::Error) -> String {
    one_line(&format!("{error:#}")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_completes_a_command_as_far_as_the_choices_agree() {
        assert_eq!(complete("/gr"), Completed::Line("/grants ".into()));
        assert_eq!(complete("/al"), Completed::Line("/allow".into()));
        assert_eq!(
            complete("/allow"),
            Completed::Choices(vec!["/allow", "/allow-exec", "/allow-net", "/allow-read"])
        );
        assert_eq!(complete("/allow-r"), Completed::Line("/allow-read ".into()));
        assert_eq!(complete("/q"), Completed::Line("/qu".into()));
        assert_eq!(complete("/qu"), Completed::Choices(vec!["/queue", "/quit"]));
        assert_eq!(complete("/x"), Completed::Nothing);
        assert_eq!(complete("hello"), Completed::Nothing);
        assert_eq!(complete("/model gpt"), Completed::Nothing);
        // Every command in the help is one Tab knows.
        for line in HELP.iter().filter(|line| line.starts_with('/')) {
            let name = line.split_whitespace().next().unwrap_or_default();
            if name.starts_with("//") {
                continue;
            }
            assert!(COMMANDS.contains(&name), "{name}");
        }
    }

    #[test]
    fn a_slash_starts_a_command_and_two_send_one() {
        assert_eq!(parse("  "), Parsed::Empty);
        assert_eq!(parse("/help"), Parsed::Command("/help".into()));
        assert_eq!(parse("//etc/hosts?"), Parsed::Message("/etc/hosts?".into()));
        assert_eq!(parse("fix /tmp"), Parsed::Message("fix /tmp".into()));
    }
}

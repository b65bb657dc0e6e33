//! `toolhost run --input-format stream-json`: a session driven by JSON lines
//! on stdin, as an editor or a script drives one (format in
//! docs/reference/stream-json-input.md).
//!
//! Each line is a user message (Claude Code's shape) or an interrupt. While
//! idle, a user message starts the next prompt; while a run works, it is
//! queued in the loop's inbox (steering unless it says `follow_up`) and an
//! interrupt stops the turn, giving the queued messages back. Stdin closing
//! while idle ends the session; closing while a run works lets it finish.

use std::io::{BufRead as _, Read as _};

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::render;
use crate::agent::{
    AgentLoop, Delivery, Inbox, Message, ModelClient, Refused, StopRecord, Submission, ToolRunner,
    run_prompt,
};
use crate::json_budget::JsonBudget;

/// The longest input line, newline excluded (the MCP server's cap too).
const MAX_LINE: usize = 4 * 1024 * 1024;

/// What one line may make toolhost parse besides its bytes: a message is
/// text, so 100,000 values and 64 levels are far more than one needs.
const INPUT_LINE: JsonBudget = JsonBudget {
    max_bytes: MAX_LINE,
    max_depth: 64,
    max_values: 100_000,
};

/// Lines read ahead of the session: the reader waits when they are not
/// taken.
const READ_AHEAD: usize = 16;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    User {
        message: UserMessage,
        #[serde(default)]
        delivery: Option<Delivery>,
    },
    Interrupt {},
}

#[derive(Deserialize)]
struct UserMessage {
    #[serde(default = "user_role")]
    role: String,
    content: Value,
}

fn user_role() -> String {
    "user".into()
}

/// What one line of stdin asks for; `Ok(None)` for a blank line.
pub(super) fn parse_line(line: &str) -> Result<Option<Submission>, String> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    // Counted before anything is built: a line of `0,` would cost a
    // hundred times its bytes while parsed.
    INPUT_LINE.check(line.as_bytes()).map_err(|over| {
        format!("the line holds {over}, the most toolhost parses of one input line; put large data in a file and name it in the message")
    })?;
    let line: Line = serde_json::from_str(line).map_err(|e| {
        format!(
            "{e}; expected {{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"...\"}}}} \
             or {{\"type\":\"interrupt\"}}"
        )
    })?;
    match line {
        Line::Interrupt {} => Ok(Some(Submission::Interrupt)),
        Line::User { message, delivery } => {
            if message.role != "user" {
                return Err(format!(
                    "`message.role` is {:?}; only \"user\" messages are read",
                    message.role
                ));
            }
            let text = content_text(&message.content)?;
            if text.trim().is_empty() {
                return Err("the message has no text".into());
            }
            Ok(Some(Submission::Input { text, delivery }))
        }
    }
}

/// `content` as text: a string, or the text blocks of a list joined by
/// blank lines.
fn content_text(content: &Value) -> Result<String, String> {
    match content {
        Value::String(text) => Ok(text.clone()),
        Value::Array(blocks) => {
            let mut texts = Vec::with_capacity(blocks.len());
            for (n, block) in blocks.iter().enumerate() {
                match (block["type"].as_str(), block["text"].as_str()) {
                    (Some("text"), Some(text)) => texts.push(text),
                    _ => {
                        return Err(format!(
                            "`message.content[{n}]` is not a {{\"type\":\"text\",\"text\":...}} \
                             block; only text is read"
                        ));
                    }
                }
            }
            Ok(texts.join("\n\n"))
        }
        _ => Err("`message.content` is neither a string nor a list of text blocks".into()),
    }
}

/// Reads stdin on a thread of its own (a blocking read never holds the
/// runtime), a line at a time, each at most [`MAX_LINE`] bytes; a line it
/// cannot use is named on stderr and skipped.
fn spawn_reader() -> mpsc::Receiver<Submission> {
    let (send, receive) = mpsc::channel(READ_AHEAD);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut number = 0u64;
        loop {
            number += 1;
            let mut bytes = Vec::new();
            match (&mut stdin)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut bytes)
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let parsed = if bytes.last() != Some(&b'\n') && bytes.len() > MAX_LINE {
                let skipped = bytes.len() as u64 + skip_line(&mut stdin);
                Err(format!(
                    "the line has {skipped} bytes; at most {MAX_LINE} are read"
                ))
            } else {
                std::str::from_utf8(&bytes)
                    .map_err(|_| "the line is not UTF-8".to_string())
                    .and_then(parse_line)
            };
            let submission = match parsed {
                Ok(None) => continue,
                Ok(Some(submission)) => submission,
                Err(error) => {
                    render::stdin_line_ignored(number, &error);
                    continue;
                }
            };
            if send.blocking_send(submission).is_err() {
                return;
            }
        }
    });
    receive
}

/// Reads and drops the rest of a line, never holding it; the bytes dropped.
fn skip_line(stdin: &mut impl std::io::BufRead) -> u64 {
    let mut skipped = 0u64;
    loop {
        let buffer = match stdin.fill_buf() {
            Ok([]) | Err(_) => return skipped,
            Ok(buffer) => buffer,
        };
        let (used, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        stdin.consume(used);
        skipped += used as u64;
        if done {
            return skipped;
        }
    }
}

/// What the session asks of its caller between runs.
pub(super) struct Hooks<'a> {
    /// Before each prompt but the first: a new system prompt, if it changed.
    pub(super) system_prompt: &'a mut dyn FnMut() -> Option<String>,
    /// After each run (the renderer's ending).
    pub(super) after_run: &'a mut dyn FnMut(&[Message], &StopRecord),
}

/// Runs prompts from stdin until it closes while idle, or `quit` fires
/// (Ctrl+C: the run in progress stops first). `first` is the prompt given
/// as an argument, if any. The stop of the last run, if any ran.
pub(super) async fn drive<M: ModelClient, T: ToolRunner>(
    agent: &mut AgentLoop<M, T>,
    ledger: &mut Vec<Message>,
    inbox: &Inbox,
    first: Option<String>,
    quit: &CancellationToken,
    hooks: Hooks<'_>,
) -> Option<StopRecord> {
    let mut submissions = spawn_reader();
    let refused: Refused = Box::new(render::stdin_input_refused);
    let mut open = true;
    let mut next = first;
    let mut last = None;
    loop {
        if quit.is_cancelled() {
            return last;
        }
        let prompt = match next.take().or_else(|| inbox.next_prompt().map(|q| q.text)) {
            Some(prompt) => prompt,
            None if !open => return last,
            None => match tokio::select! {
                submission = submissions.recv() => submission,
                () = quit.cancelled() => continue,
            } {
                None => {
                    open = false;
                    continue;
                }
                // Nothing runs: nothing to interrupt.
                Some(Submission::Interrupt) => continue,
                Some(Submission::Input { text, .. }) => text,
            },
        };
        if last.is_some()
            && let Some(system) = (hooks.system_prompt)()
        {
            agent.set_system_prompt(system);
        }
        let end = run_prompt(
            agent,
            ledger,
            inbox,
            prompt,
            quit,
            &mut submissions,
            &refused,
        )
        .await;
        open &= end.open;
        (hooks.after_run)(ledger, &end.stop);
        last = Some(end.stop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_lines_in_both_content_shapes_and_interrupts_are_read() {
        assert_eq!(
            parse_line(r#"{"type":"user","message":{"role":"user","content":"hi"}}"#),
            Ok(Some(Submission::Input {
                text: "hi".into(),
                delivery: None
            }))
        );
        assert_eq!(
            parse_line(
                r#"{"type":"user","delivery":"follow_up","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}"#
            ),
            Ok(Some(Submission::Input {
                text: "a\n\nb".into(),
                delivery: Some(Delivery::FollowUp)
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"interrupt"}"#),
            Ok(Some(Submission::Interrupt))
        );
        assert_eq!(parse_line("  \n"), Ok(None));
    }

    #[test]
    fn lines_that_are_not_input_say_what_is_wrong() {
        let shape = "expected {\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\
                     \"...\"}} or {\"type\":\"interrupt\"}";
        assert_eq!(
            parse_line(r#"{"type":"control"}"#),
            Err(format!(
                "unknown variant `control`, expected `user` or `interrupt` at line 1 column 17; {shape}"
            ))
        );
        assert_eq!(
            parse_line(r#"{"type":"user","message":{"role":"user","content":"  "}}"#),
            Err("the message has no text".into())
        );
        assert_eq!(
            parse_line(r#"{"type":"user","message":{"role":"user","content":7}}"#),
            Err("`message.content` is neither a string nor a list of text blocks".into())
        );
        assert_eq!(
            parse_line(r#"{"type":"user","delivery":"now","message":{"content":"x"}}"#),
            Err(format!(
                "unknown variant `now`, expected `steer` or `follow_up`; {shape}"
            ))
        );
    }
}

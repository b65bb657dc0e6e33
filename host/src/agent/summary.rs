//! Stage 2 of compaction, when setting old tool results aside is not
//! enough: the model summarises the conversation before a cut point, and
//! the summary takes that part's place in the ledger. The most recent
//! entries stay verbatim, and a cut never falls between a tool call and its
//! result (it is always before a user or assistant message).
//!
//! What the summariser reads is a plain transcript, not the ledger itself:
//! it asks for no tools, so any server takes it, and each entry in it is
//! cut to a bound, so its size is known before it is sent.

use super::context::BYTES_PER_TOKEN;
use crate::provider::{Block, Message};

/// How the summary starts in the ledger, so the model (and a reader of the
/// session) knows what it is, and so it is never summarised as a prompt.
pub const SUMMARY_PREFIX: &str = "[toolhost replaced the earlier part of this conversation with \
     this summary to keep within the model's context window; the messages after it are verbatim]";

/// The summariser's instructions.
pub(super) const SUMMARY_SYSTEM: &str = "You summarise the first part of a conversation between \
     a user and a coding agent that works with tools. The agent will go on from your summary and \
     the conversation's most recent messages alone, so keep everything it needs: the user's goal \
     and each request they made (quote short ones), decisions taken and why, the files read and \
     changed (paths) and what matters in them, results and errors that matter and how they were \
     handled, and what is left to do. Be concise and factual, invent nothing, and write only the \
     summary, in plain text.";

/// The most a summary may take: a summary longer than this defeats itself.
const MOST_SUMMARY_TOKENS: u64 = 4096;

/// The bytes of one entry the summariser reads (head and tail): a tool
/// result rarely matters beyond its start; a message of the user or the
/// model more often does.
const RESULT_BYTES: usize = 2048;
const MESSAGE_BYTES: usize = 8192;

/// The room the summary is asked to fit in.
pub(super) fn summary_room(window: Option<u64>) -> u64 {
    window.map_or(MOST_SUMMARY_TOKENS, |window| {
        (window / 4).min(MOST_SUMMARY_TOKENS)
    })
}

/// Why a summary is refused for its size: over [`SUMMARY_SLACK`] times the
/// `room` tokens it was asked to fit in, by the estimate of
/// [`BYTES_PER_TOKEN`] (a server that ignores `max_tokens` would otherwise
/// make the conversation larger by compacting it). `None` when it fits.
pub(super) fn oversized(summary: &str, room: u64) -> Option<String> {
    let most = room
        .saturating_mul(BYTES_PER_TOKEN)
        .saturating_mul(SUMMARY_SLACK);
    let bytes = summary.len() as u64;
    (bytes > most).then(|| {
        format!(
            "the model's summary was {bytes} bytes (about {} tokens), over {SUMMARY_SLACK} times \
             the {room} tokens it was asked to fit in, so it was not used",
            bytes / BYTES_PER_TOKEN
        )
    })
}

/// How far past its room a summary may go: tokenizers count words
/// differently from the estimate, and a real summary stops near its room.
const SUMMARY_SLACK: u64 = 2;

/// Where to cut `ledger`: the earliest place after which about `keep`
/// tokens stay verbatim, else the latest place there is (the last turn
/// stays whatever its size). A place is before a user or assistant
/// message, never before tool results (their call is in the message
/// before). `None` when the ledger has no such place but its start.
pub(super) fn cut_point(ledger: &[Message], keep: u64) -> Option<usize> {
    let mut kept = 0u64;
    let mut latest = None;
    let mut earliest = None;
    for at in (1..ledger.len()).rev() {
        kept = kept.saturating_add(super::context::json_len(&ledger[at]) / BYTES_PER_TOKEN);
        if matches!(ledger[at], Message::ToolResults { .. }) {
            continue;
        }
        latest.get_or_insert(at);
        if kept > keep {
            break;
        }
        earliest = Some(at);
    }
    earliest.or(latest)
}

/// Whether the part before `cut` is worth a model call: more than a
/// previous summary alone, and more than the summary would be.
pub(super) fn worth_summarising(before_cut: &[Message], room: u64) -> bool {
    let only_a_summary =
        matches!(before_cut, [Message::User { text, .. }] if text.starts_with(SUMMARY_PREFIX));
    let tokens: u64 = before_cut
        .iter()
        .map(|m| super::context::json_len(m) / BYTES_PER_TOKEN)
        .sum();
    !only_a_summary && tokens > room
}

/// What the summariser is sent: each entry of `part`, cut to its bound,
/// and `focus` when the user gave one. `left_out` entries before it were
/// dropped to fit the summariser's window: it is told so.
pub(super) fn transcript(part: &[Message], left_out: usize, focus: Option<&str>) -> String {
    let mut out = String::new();
    if left_out > 0 {
        out.push_str(&format!(
            "(The first {left_out} message(s) of the conversation were too long to include here.)\n\n"
        ));
    }
    for message in part {
        match message {
            Message::User { text, .. } => {
                out.push_str("## User\n");
                out.push_str(&bounded(text, MESSAGE_BYTES));
            }
            Message::Assistant(reply) => {
                out.push_str("## Agent\n");
                for block in &reply.blocks {
                    match block {
                        Block::Text { text } => out.push_str(&bounded(text, MESSAGE_BYTES)),
                        Block::ToolCall {
                            name,
                            arguments_raw,
                            ..
                        } => out.push_str(&format!(
                            "\n(called `{name}` with {})",
                            bounded(arguments_raw, RESULT_BYTES)
                        )),
                        _ => {}
                    }
                }
            }
            Message::ToolResults { results } => {
                for result in results {
                    let error = if result.is_error { ", an error" } else { "" };
                    out.push_str(&format!("## Result of `{}`{error}\n", result.tool));
                    out.push_str(&bounded(&result.text, RESULT_BYTES));
                    out.push('\n');
                }
            }
        }
        out.push_str("\n\n");
    }
    out.push_str("Summarise the conversation above.");
    if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
        out.push_str(&format!(" Focus on: {}", focus.trim()));
    }
    out
}

/// Tokens [`transcript`] will take for `part`, about.
pub(super) fn transcript_tokens(part: &[Message]) -> u64 {
    let bytes: usize = part
        .iter()
        .map(|message| match message {
            Message::User { text, .. } => text.len().min(MESSAGE_BYTES),
            Message::Assistant(reply) => reply
                .blocks
                .iter()
                .map(|block| match block {
                    Block::Text { text } => text.len().min(MESSAGE_BYTES),
                    Block::ToolCall { arguments_raw, .. } => {
                        arguments_raw.len().min(RESULT_BYTES) + 40
                    }
                    _ => 0,
                })
                .sum(),
            Message::ToolResults { results } => results
                .iter()
                .map(|r| r.text.len().min(RESULT_BYTES) + 40)
                .sum(),
        } + 20)
        .sum();
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// How many of `part`'s oldest entries to leave out so the transcript
/// takes at most `tokens`.
pub(super) fn left_out_to_fit(part: &[Message], tokens: u64) -> usize {
    (0..part.len())
        .find(|&from| transcript_tokens(&part[from..]) <= tokens)
        .unwrap_or(part.len())
}

/// The ledger entry that stands for the summarised part.
fn summary_message(summary: &str) -> Message {
    Message::prompt(format!("{SUMMARY_PREFIX}\n\n{}", summary.trim()))
}

/// Replaces `ledger[..first_kept]` with the summary, as the compaction
/// that recorded it did; `false` (and the ledger untouched) when
/// `first_kept` is not a place [`cut_point`] could have chosen (a
/// hand-edited file).
pub fn cut_and_summarise(ledger: &mut Vec<Message>, first_kept: usize, summary: &str) -> bool {
    let valid = first_kept > 0
        && first_kept < ledger.len()
        && !matches!(ledger[first_kept], Message::ToolResults { .. });
    if valid {
        ledger.splice(..first_kept, [summary_message(summary)]);
    }
    valid
}

/// `text` whole when it is at most `most` bytes, else its head and tail
/// around a note of what was left out.
fn bounded(text: &str, most: usize) -> String {
    if text.len() <= most {
        return text.to_owned();
    }
    let (head, tail) = super::long_output::cut_points(text, most);
    format!(
        "{}\n[... {} bytes left out ...]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{AssistantMessage, Finish, ToolResultEntry};

    fn said(text: &str) -> Message {
        Message::Assistant(AssistantMessage {
            blocks: vec![Block::Text { text: text.into() }],
            finish: Finish::Stop,
            usage: None,
            cut: None,
        })
    }

    fn called(id: &str) -> Message {
        Message::Assistant(AssistantMessage {
            blocks: vec![Block::ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: Some(serde_json::json!({"path": "a"})),
                arguments_raw: r#"{"path":"a"}"#.into(),
            }],
            finish: Finish::ToolUse,
            usage: None,
            cut: None,
        })
    }

    fn result(id: &str, bytes: usize) -> Message {
        Message::ToolResults {
            results: vec![ToolResultEntry {
                call_id: id.into(),
                tool: "read_file".into(),
                text: "x".repeat(bytes),
                is_error: false,
            }],
        }
    }

    #[test]
    fn a_summary_past_twice_its_room_is_refused_naming_both_sizes() {
        assert_eq!(oversized(&"x".repeat(8000), 1000), None);
        assert_eq!(
            oversized(&"x".repeat(8001), 1000).as_deref(),
            Some(
                "the model's summary was 8001 bytes (about 2000 tokens), over 2 times the 1000 \
                 tokens it was asked to fit in, so it was not used"
            )
        );
    }

    #[test]
    fn a_cut_keeps_the_recent_entries_and_never_splits_a_call_from_its_result() {
        let ledger = vec![
            Message::prompt("go"),
            called("a"),
            result("a", 8000),
            called("b"),
            result("b", 8000),
            said("done"),
            Message::prompt("more"),
            called("c"),
            result("c", 4000),
        ];
        // Room for the last turn, and the short prompt and reply before it.
        assert_eq!(cut_point(&ledger, 1100), Some(5));
        // Room for the call before them and its result too.
        assert_eq!(cut_point(&ledger, 3200), Some(3));
        // Room for nothing: the last turn stays all the same.
        assert_eq!(cut_point(&ledger, 0), Some(7));
        // Room for all: the first place after the start.
        assert_eq!(cut_point(&ledger, u64::MAX), Some(1));
        assert_eq!(cut_point(&ledger[..1], 0), None);
    }

    #[test]
    fn the_transcript_bounds_each_entry_and_says_what_was_left_out() {
        let part = [
            Message::prompt("fix the tests"),
            called("a"),
            result("a", 10_000),
        ];
        let text = transcript(&part, 2, Some("the failing test"));
        assert!(text.starts_with(
            "(The first 2 message(s) of the conversation were too long to include here.)\n\n## User\nfix the tests\n\n## Agent\n\n(called `read_file` with {\"path\":\"a\"})\n\n## Result of `read_file`\n"
        ), "{text}");
        assert!(text.contains("\n[... 7952 bytes left out ...]\n"), "{text}");
        assert!(text.ends_with("Summarise the conversation above. Focus on: the failing test"));
        let tokens = transcript_tokens(&part);
        assert!(
            (text.len() as u64 / 4).abs_diff(tokens) < 30,
            "{tokens} for {}",
            text.len()
        );
        assert_eq!(left_out_to_fit(&part, tokens), 0);
        assert_eq!(left_out_to_fit(&part, tokens - 1), 1);
        assert_eq!(left_out_to_fit(&part, 0), 3);
    }

    #[test]
    fn a_summary_replaces_what_came_before_the_cut() {
        let mut ledger = vec![
            Message::prompt("go"),
            called("a"),
            result("a", 10),
            said("ok"),
        ];
        assert!(
            !cut_and_summarise(&mut ledger.clone(), 2, "s"),
            "before results"
        );
        assert!(!cut_and_summarise(&mut ledger.clone(), 9, "s"));
        assert!(cut_and_summarise(&mut ledger, 3, "what happened"));
        assert_eq!(
            ledger,
            [
                Message::prompt(format!("{SUMMARY_PREFIX}\n\nwhat happened")),
                said("ok")
            ]
        );
        assert!(!worth_summarising(&ledger[..1], 0), "a summary alone");
        assert!(worth_summarising(&[result("a", 8000)], 1000));
        assert!(!worth_summarising(&[result("a", 8000)], 3000));
    }

    mod property {
        use proptest::prelude::*;

        use super::*;

        /// Prompts, replies with zero to three calls each followed by their
        /// results, of random sizes.
        fn ledger() -> impl Strategy<Value = Vec<Message>> {
            let turn = (any::<bool>(), 0usize..4, 0usize..5000);
            prop::collection::vec(turn, 1..12).prop_map(|turns| {
                let mut ledger = vec![Message::prompt("go")];
                for (n, (prompt, calls, bytes)) in turns.into_iter().enumerate() {
                    if prompt {
                        ledger.push(Message::prompt("x".repeat(bytes / 4)));
                    }
                    if calls == 0 {
                        ledger.push(said(&"y".repeat(bytes / 8)));
                        continue;
                    }
                    let ids: Vec<String> = (0..calls).map(|k| format!("c{n}_{k}")).collect();
                    ledger.push(Message::Assistant(AssistantMessage {
                        blocks: ids
                            .iter()
                            .map(|id| Block::ToolCall {
                                id: id.clone(),
                                name: "read_file".into(),
                                arguments: None,
                                arguments_raw: String::new(),
                            })
                            .collect(),
                        finish: Finish::ToolUse,
                        usage: None,
                        cut: None,
                    }));
                    ledger.push(Message::ToolResults {
                        results: ids
                            .iter()
                            .map(|id| ToolResultEntry {
                                call_id: id.clone(),
                                tool: "read_file".into(),
                                text: "z".repeat(bytes),
                                is_error: false,
                            })
                            .collect(),
                    });
                }
                ledger
            })
        }

        /// Every call is answered by the message right after its reply,
        /// one result each, in order.
        fn calls_answered(ledger: &[Message]) -> bool {
            ledger
                .iter()
                .enumerate()
                .all(|(at, message)| match message {
                    Message::Assistant(reply) => {
                        let calls: Vec<&str> = reply.tool_calls().iter().map(|c| c.id).collect();
                        match ledger.get(at + 1) {
                            Some(Message::ToolResults { results }) => {
                                results.iter().map(|r| r.call_id.as_str()).eq(calls)
                            }
                            _ => calls.is_empty(),
                        }
                    }
                    Message::ToolResults { .. } => {
                        at > 0 && matches!(ledger[at - 1], Message::Assistant(_))
                    }
                    Message::User { .. } => true,
                })
        }

        proptest! {
            /// Wherever the cut falls: no call loses its result, what is
            /// kept is verbatim and as large as asked or the last turn, and
            /// the summary comes first.
            #[test]
            fn a_cut_never_separates_a_call_from_its_result(
                original in ledger(),
                keep in 0u64..10_000,
            ) {
                prop_assert!(calls_answered(&original));
                let Some(cut) = cut_point(&original, keep) else {
                    let only_results = original[1..]
                        .iter()
                        .all(|m| matches!(m, Message::ToolResults { .. }));
                    prop_assert!(only_results);
                    return Ok(());
                };
                let mut compacted = original.clone();
                prop_assert!(cut_and_summarise(&mut compacted, cut, "so far"));
                prop_assert!(calls_answered(&compacted));
                prop_assert_eq!(&compacted[1..], &original[cut..]);
                let summary_first = matches!(
                    &compacted[0],
                    Message::User { text, .. } if text.starts_with(SUMMARY_PREFIX)
                );
                prop_assert!(summary_first);
                // An earlier place would have kept more than asked.
                let earlier = (1..cut).rev().find(|&at| !matches!(original[at], Message::ToolResults { .. }));
                if let Some(earlier) = earlier {
                    let kept: u64 = original[earlier..]
                        .iter()
                        .map(|m| crate::agent::context::json_len(m) / BYTES_PER_TOKEN)
                        .sum();
                    prop_assert!(kept > keep);
                }
            }
        }
    }
}

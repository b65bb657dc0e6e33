//! How many tokens the next request will be, before it is sent: what the
//! server counted for the last reply (its whole prompt, cached or not, and
//! the reply itself, which the next prompt repeats), plus about one token
//! per four bytes of what the ledger gained since. Without a reported
//! usage (the first request, a server that reports none), the whole
//! request at four bytes a token.
//!
//! A run's token budget asks it before each request; context compaction
//! will ask it too.

use super::ToolSpecForModel;
use crate::provider::{Message, TokenTotals};

/// Bytes per token for text the server has not counted yet: about right
/// for English and code, and on the safe (high) side for both.
pub(super) const BYTES_PER_TOKEN: u64 = 4;

/// The tokens the next request will hold, about.
pub(super) fn estimate_next_prompt(
    system: &str,
    tools: &[ToolSpecForModel],
    ledger: &[Message],
) -> u64 {
    let counted = ledger.iter().enumerate().rev().find_map(|(at, message)| {
        let Message::Assistant(reply) = message else {
            return None;
        };
        let usage = reply.usage.as_ref()?;
        Some((
            at,
            usage.prompt_tokens().saturating_add(usage.output_tokens),
        ))
    });
    match counted {
        Some((at, tokens)) => tokens.saturating_add(bytes(&ledger[at + 1..]) / BYTES_PER_TOKEN),
        None => {
            let tools: u64 = tools
                .iter()
                .map(|tool| {
                    (tool.name.len() + tool.description.len()) as u64 + json_len(&tool.input_schema)
                })
                .sum();
            (system.len() as u64)
                .saturating_add(tools)
                .saturating_add(bytes(ledger))
                / BYTES_PER_TOKEN
        }
    }
}

/// Tokens a run spent: every prompt and reply of its requests.
pub(super) fn spent(totals: &TokenTotals) -> u64 {
    totals
        .input_tokens
        .saturating_add(totals.cache_read_tokens)
        .saturating_add(totals.cache_write_tokens)
        .saturating_add(totals.output_tokens)
}

fn bytes(messages: &[Message]) -> u64 {
    messages.iter().map(json_len).sum()
}

fn json_len(value: &impl serde::Serialize) -> u64 {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{AssistantMessage, Block, Finish, ToolResultEntry, Usage};

    fn reply(usage: Option<Usage>) -> Message {
        Message::Assistant(AssistantMessage {
            blocks: vec![Block::Text { text: "ok".into() }],
            finish: Finish::Stop,
            usage,
            cut: None,
        })
    }

    #[test]
    fn without_usage_every_byte_counts() {
        let ledger = vec![Message::prompt("x".repeat(4000))];
        let estimate = estimate_next_prompt("", &[], &ledger);
        // The text and its JSON around it.
        assert!((1000..1020).contains(&estimate), "{estimate}");
    }

    #[test]
    fn the_last_usage_counts_and_what_came_after_is_added() {
        let usage = Usage {
            input_tokens: 100,
            cache_read_tokens: 5000,
            cache_write_tokens: 300,
            output_tokens: 50,
            raw: serde_json::Value::Null,
        };
        let ledger = vec![
            Message::prompt("x".repeat(40_000)),
            reply(Some(usage)),
            Message::ToolResults {
                results: vec![ToolResultEntry {
                    call_id: "c".into(),
                    tool: "t".into(),
                    text: "y".repeat(8000),
                    is_error: false,
                }],
            },
        ];
        let estimate = estimate_next_prompt("system", &[], &ledger);
        // 5450 counted by the server, then about 2000 for the result: the
        // 40 KB prompt is inside the count, not added again.
        assert!((7450..7480).contains(&estimate), "{estimate}");
    }
}

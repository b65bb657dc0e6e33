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
use crate::provider::{Message, TokenTotals, Usage};

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

/// A server that counted far fewer prompt tokens than were sent has cut the
/// prompt to fit its window without an error, as Ollama's OpenAI endpoint
/// does (its `num_ctx`): what to tell the user, once.
pub(super) fn silent_cut(sent: u64, usage: &Usage) -> Option<String> {
    let counted = usage.prompt_tokens();
    // A half, and 2,048 tokens: well past what tokenizers differ by.
    let cut = counted > 0 && sent / 2 >= counted && sent - counted >= 2048;
    cut.then(|| {
        format!(
            "the model server counted {counted} prompt tokens where about {sent} were sent: it \
             seems to have cut the conversation to fit its context window, so the model did not \
             see all of it. Ollama does this without an error: raise its context (e.g. \
             `OLLAMA_CONTEXT_LENGTH=32768 ollama serve`, or `PARAMETER num_ctx 32768` in a \
             Modelfile)"
        )
    })
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
    use crate::provider::{AssistantMessage, Block, Finish, ToolResultEntry};

    fn reply(usage: Option<Usage>) -> Message {
        Message::Assistant(AssistantMessage {
            blocks: vec![Block::Text { text: "ok".into() }],
            finish: Finish::Stop,
            usage,
            cut: None,
        })
    }

    #[test]
    fn a_count_far_below_what_was_sent_is_a_silent_cut() {
        let usage = |prompt| Usage {
            input_tokens: prompt,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            output_tokens: 10,
            raw: serde_json::Value::Null,
        };
        assert!(silent_cut(10_000, &usage(2048)).is_some());
        assert!(
            silent_cut(10_000, &usage(6000)).is_none(),
            "tokenizers differ"
        );
        assert!(
            silent_cut(3000, &usage(1000)).is_none(),
            "too small to tell"
        );
        assert!(silent_cut(10_000, &usage(0)).is_none(), "no count");
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

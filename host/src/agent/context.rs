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
use super::long_output::ResultBudget;
use crate::provider::overflow::Overflow;
use crate::provider::{AssistantMessage, Message, TokenTotals, Usage};

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
        // A usage of zero prompt tokens is no count at all (a server that
        // fills the field with zeros): the estimate below stands in.
        let usage = reply
            .usage
            .as_ref()
            .filter(|usage| usage.prompt_tokens() > 0)?;
        Some((
            at,
            usage.prompt_tokens().saturating_add(usage.output_tokens),
        ))
    });
    match counted {
        Some((at, tokens)) => tokens.saturating_add(bytes(&ledger[at + 1..]) / BYTES_PER_TOKEN),
        None => overhead(system, tools).saturating_add(bytes(ledger) / BYTES_PER_TOKEN),
    }
}

/// Drops the usage the replies in `ledger` carry: a compaction made the
/// conversation smaller than what the server counted for them, so they no
/// longer say how large the next request is. (The session file keeps each
/// reply's usage as it came: figures are summed from the records.)
pub fn forget_usage(ledger: &mut [Message]) {
    for message in ledger {
        if let Message::Assistant(reply) = message {
            reply.usage = None;
        }
    }
}

/// The tokens the system prompt and the tools' descriptions take, about.
pub(super) fn overhead(system: &str, tools: &[ToolSpecForModel]) -> u64 {
    let tools: u64 = tools
        .iter()
        .map(|tool| {
            (tool.name.len() + tool.description.len()) as u64 + json_len(&tool.input_schema)
        })
        .sum();
    (system.len() as u64).saturating_add(tools) / BYTES_PER_TOKEN
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

/// Why the conversation was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionReason {
    /// The next request would not have left room for the reply.
    Threshold,
    /// The server said the request did not fit.
    Overflow,
    /// The user asked (a chat's `/compact`).
    Manual,
}

impl CompactionReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Threshold => "threshold",
            CompactionReason::Overflow => "overflow",
            CompactionReason::Manual => "manual",
        }
    }
}

/// The room a request keeps for the reply: the smaller of the usual
/// `max_tokens` (8,192) and a quarter of the window.
pub(super) fn reply_room(window: u64) -> u64 {
    (window / 4).min(8192)
}

/// The reply's room a request can still have when the server said the
/// prompt fits but not with the room asked: what the window leaves, less a
/// margin for the tokenizers' differences; `None` when that is too little
/// to be worth a reply (then the prompt must shrink).
pub(super) fn room_left(overflow: &Overflow) -> Option<u32> {
    const MARGIN: u64 = 64;
    const LEAST: u64 = 256;
    let left = overflow
        .window?
        .checked_sub(overflow.prompt_tokens?)?
        .checked_sub(MARGIN)?;
    (left >= LEAST).then(|| u32::try_from(left).unwrap_or(u32::MAX))
}

/// A tool result set aside by compaction: where it is in the ledger and
/// what the model reads in its place.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MaskedResult {
    /// The index of its tool-results message in the ledger.
    pub message: usize,
    /// Its index among that message's results.
    pub result: usize,
    pub call_id: String,
    /// The text the model reads instead.
    pub stub: String,
}

/// Stage 1 of compaction, which costs no model call: the oldest tool
/// results become a short stub naming the file their text was saved to
/// (readable again with `read_file`), until about `excess` tokens are
/// gone. The results of the latest batch are kept: the model asked for them
/// last. Only the text changes, so every call keeps its one result.
pub(super) fn set_aside_old_results(
    ledger: &mut [Message],
    excess: u64,
    save: Option<&ResultBudget>,
) -> (Vec<MaskedResult>, u64) {
    let latest = ledger
        .iter()
        .rposition(|m| matches!(m, Message::ToolResults { .. }));
    let mut masked = Vec::new();
    let mut freed = 0u64;
    for (index, message) in ledger.iter_mut().enumerate() {
        if freed >= excess || Some(index) == latest {
            break;
        }
        let Message::ToolResults { results } = message else {
            continue;
        };
        for (at, result) in results.iter_mut().enumerate() {
            if freed >= excess {
                break;
            }
            if result.text.len() < MIN_SET_ASIDE || result.text.starts_with(STUB_PREFIX) {
                continue;
            }
            let saved = save.map(|budget| budget.save(&result.text, &result.call_id));
            let stub = stub(&result.tool, result.text.len(), saved);
            freed += (result.text.len().saturating_sub(stub.len()) as u64) / BYTES_PER_TOKEN;
            result.text.clone_from(&stub);
            masked.push(MaskedResult {
                message: index,
                result: at,
                call_id: result.call_id.clone(),
                stub,
            });
        }
    }
    (masked, freed)
}

/// Puts each recorded stub in place of its result, as the compaction that
/// recorded them did (a resume rebuilding the ledger the model saw); one
/// that names no result of the ledger (a hand-edited file) is skipped.
pub fn put_stubs_back(ledger: &mut [Message], masked: &[MaskedResult]) {
    for entry in masked {
        if let Some(Message::ToolResults { results }) = ledger.get_mut(entry.message)
            && let Some(result) = results.get_mut(entry.result)
            && result.call_id == entry.call_id
        {
            result.text.clone_from(&entry.stub);
        }
    }
}

/// Results shorter than this stay: a stub would save next to nothing.
const MIN_SET_ASIDE: usize = 512;

/// How every stub starts, so one is never set aside again.
const STUB_PREFIX: &str = "[toolhost set this result aside";

fn stub(tool: &str, bytes: usize, saved: Option<Result<String, String>>) -> String {
    let whole = match saved {
        Some(Ok(name)) => {
            format!("its text is saved in `{name}`: read it with read_file if you need it again")
        }
        Some(Err(error)) => {
            format!("its text could not be saved ({error}): call the tool again if you need it")
        }
        None => "call the tool again if you need it".to_owned(),
    };
    format!(
        "{STUB_PREFIX} to keep the conversation within the model's context window: `{tool}` returned {bytes} bytes; {whole}]"
    )
}

/// The line front ends show for a compaction: `context compacted: 112k ->
/// 19k tokens (3 old tool result(s) set aside, 24 earlier entries
/// summarised)`; `summarised` is the number of entries the summary
/// replaced.
pub fn compaction_line(
    tokens_before: u64,
    tokens_after: u64,
    set_aside: usize,
    summarised: Option<usize>,
) -> String {
    let in_thousands = tokens_before >= 10_000;
    let kilo = |n: u64| {
        if in_thousands {
            format!("{}k", (n + 500) / 1000)
        } else {
            n.to_string()
        }
    };
    let what = match (set_aside, summarised) {
        (_, None) => format!("{set_aside} old tool result(s) set aside"),
        (0, Some(entries)) => format!("{entries} earlier entries summarised"),
        (_, Some(entries)) => {
            format!(
                "{set_aside} old tool result(s) set aside, {entries} earlier entries summarised"
            )
        }
    };
    format!(
        "context compacted: {} -> {} tokens ({what})",
        kilo(tokens_before),
        kilo(tokens_after)
    )
}

/// What one reply counts against the run's budgets: the server's usage
/// where it reported some, and the estimate where it reported none or
/// zero, so a server cannot spend past `--max-tokens-total` or
/// `--max-cost` by saying nothing. The prompt is estimated as it was
/// before it was sent (`sent`, [`estimate_next_prompt`]), the output as
/// the reply's JSON at [`BYTES_PER_TOKEN`].
pub(super) fn counted(reply: &AssistantMessage, sent: u64) -> Usage {
    let mut usage = reply.usage.clone().unwrap_or(Usage {
        input_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: 0,
        raw: serde_json::Value::Null,
    });
    if usage.prompt_tokens() == 0 {
        usage.input_tokens = sent;
    }
    if usage.output_tokens == 0 {
        usage.output_tokens = json_len(&reply.blocks).div_ceil(BYTES_PER_TOKEN);
    }
    usage
}

/// Tokens a run spent: every prompt and reply of its requests.
pub(super) fn spent(totals: &TokenTotals) -> u64 {
    totals
        .input_tokens
        .saturating_add(totals.cache_read_tokens)
        .saturating_add(totals.cache_write_tokens)
        .saturating_add(totals.output_tokens)
}

pub(super) fn bytes(messages: &[Message]) -> u64 {
    messages.iter().map(json_len).sum()
}

pub(super) fn json_len(value: &impl serde::Serialize) -> u64 {
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

    fn results(calls: &[(&str, usize)]) -> Message {
        Message::ToolResults {
            results: calls
                .iter()
                .map(|(id, bytes)| ToolResultEntry {
                    call_id: (*id).into(),
                    tool: "read_file".into(),
                    text: "x".repeat(*bytes),
                    is_error: false,
                })
                .collect(),
        }
    }

    fn texts(ledger: &[Message]) -> Vec<String> {
        ledger
            .iter()
            .filter_map(|m| match m {
                Message::ToolResults { results } => Some(results),
                _ => None,
            })
            .flatten()
            .map(|r| {
                if r.text.starts_with(STUB_PREFIX) {
                    format!("{}: stub", r.call_id)
                } else {
                    format!("{}: {}", r.call_id, r.text.len())
                }
            })
            .collect()
    }

    #[test]
    fn the_oldest_results_go_first_and_the_latest_batch_stays() {
        let mut ledger = vec![
            Message::prompt("go"),
            reply(None),
            results(&[("a", 8000), ("b", 100), ("c", 8000)]),
            reply(None),
            results(&[("d", 8000)]),
            reply(None),
            results(&[("e", 40_000)]),
        ];
        // About 2,000 tokens: `a` alone frees them (`b` is too small to
        // bother), so `c` stays.
        let (masked, freed) = set_aside_old_results(&mut ledger, 1900, None);
        assert_eq!(
            texts(&ledger),
            ["a: stub", "b: 100", "c: 8000", "d: 8000", "e: 40000"]
        );
        assert_eq!(masked.len(), 1);
        assert_eq!((masked[0].message, masked[0].call_id.as_str()), (2, "a"));
        assert!((1900..2000).contains(&freed), "{freed}");
        // Asked for everything, it never takes the latest batch, nor a stub
        // twice.
        let (masked, _) = set_aside_old_results(&mut ledger, u64::MAX, None);
        assert_eq!(
            texts(&ledger),
            ["a: stub", "b: 100", "c: stub", "d: stub", "e: 40000"]
        );
        assert_eq!(masked.len(), 2);
        assert!(
            masked[0]
                .stub
                .ends_with("call the tool again if you need it]"),
            "{}",
            masked[0].stub
        );
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

    /// Red team (issue 37): a server that reports no usage, or zeros, was
    /// charged nothing against `--max-tokens-total`; what it did not count
    /// is the estimate, and what it did count stands.
    #[test]
    fn a_reply_without_usage_or_with_zeros_is_charged_the_estimate() {
        let text = |usage| AssistantMessage {
            blocks: vec![Block::Text {
                text: "z".repeat(4000),
            }],
            finish: Finish::Stop,
            usage,
            cut: None,
        };
        let zeros = Usage {
            input_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            output_tokens: 0,
            raw: serde_json::Value::Null,
        };
        for usage in [None, Some(zeros.clone())] {
            let charged = counted(&text(usage), 7000);
            assert_eq!(charged.prompt_tokens(), 7000);
            // 4000 bytes of text and the JSON around them.
            assert!((1000..1010).contains(&charged.output_tokens), "{charged:?}");
        }
        let reported = Usage {
            cache_read_tokens: 300,
            output_tokens: 20,
            ..zeros.clone()
        };
        let charged = counted(&text(Some(reported)), 7000);
        assert_eq!((charged.prompt_tokens(), charged.output_tokens), (300, 20));
        // Zeros are no count for the next request's estimate either.
        let ledger = vec![Message::prompt("x".repeat(40_000)), reply(Some(zeros))];
        assert!(estimate_next_prompt("", &[], &ledger) >= 10_000);
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
        let mut ledger = ledger;
        let estimate = estimate_next_prompt("system", &[], &ledger);
        // 5450 counted by the server, then about 2000 for the result: the
        // 40 KB prompt is inside the count, not added again.
        assert!((7450..7480).contains(&estimate), "{estimate}");
        // After a compaction the count says nothing: every byte counts.
        forget_usage(&mut ledger);
        let estimate = estimate_next_prompt("system", &[], &ledger);
        assert!((12_000..12_080).contains(&estimate), "{estimate}");
    }

    mod property {
        use proptest::prelude::*;

        use super::*;

        /// A ledger of prompts, replies and results of random sizes
        /// (results in batches of one to three).
        fn ledger() -> impl Strategy<Value = Vec<Message>> {
            let batch = prop::collection::vec(0usize..6000, 1..=3);
            prop::collection::vec((any::<bool>(), batch), 1..10).prop_map(|turns| {
                let mut ledger = vec![Message::prompt("go")];
                for (n, (prompt, sizes)) in turns.into_iter().enumerate() {
                    if prompt {
                        ledger.push(Message::prompt("more"));
                    }
                    ledger.push(reply(None));
                    let ids: Vec<String> = (0..sizes.len()).map(|k| format!("c{n}_{k}")).collect();
                    let calls: Vec<(&str, usize)> =
                        ids.iter().map(String::as_str).zip(sizes).collect();
                    ledger.push(results(&calls));
                }
                ledger
            })
        }

        fn shape(ledger: &[Message]) -> Vec<Vec<String>> {
            ledger
                .iter()
                .map(|m| match m {
                    Message::ToolResults { results } => {
                        results.iter().map(|r| r.call_id.clone()).collect()
                    }
                    _ => vec!["-".into()],
                })
                .collect()
        }

        proptest! {
            /// Whatever is asked: every call keeps its one result in its
            /// place, the latest batch is untouched, what changed is what
            /// the record lists, and putting the recorded stubs back into
            /// the ledger as it was (a resume) gives the same ledger.
            #[test]
            fn set_aside_keeps_the_shape_and_the_record_rebuilds_it(
                original in ledger(),
                excess in 0u64..20_000,
            ) {
                let mut compacted = original.clone();
                let (masked, freed) = set_aside_old_results(&mut compacted, excess, None);
                prop_assert_eq!(shape(&compacted), shape(&original));
                let latest = original
                    .iter()
                    .rposition(|m| matches!(m, Message::ToolResults { .. }))
                    .expect("a batch");
                prop_assert_eq!(&compacted[latest], &original[latest]);
                let changed = original
                    .iter()
                    .zip(&compacted)
                    .map(|(a, b)| match (a, b) {
                        (Message::ToolResults { results: a }, Message::ToolResults { results: b }) => {
                            a.iter().zip(b).filter(|(a, b)| a.text != b.text).count()
                        }
                        _ => 0,
                    })
                    .sum::<usize>();
                prop_assert_eq!(changed, masked.len());
                prop_assert_eq!(masked.is_empty(), freed == 0);
                let mut rebuilt = original.clone();
                put_stubs_back(&mut rebuilt, &masked);
                prop_assert_eq!(rebuilt, compacted.clone());
                // A stub is never set aside again.
                let (again, _) = set_aside_old_results(&mut compacted, u64::MAX, None);
                prop_assert!(again.iter().all(|m| !masked.iter().any(|n| n.message == m.message && n.result == m.result)));
            }
        }
    }
}

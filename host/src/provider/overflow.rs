//! Telling a context overflow from every other refusal, from the response
//! itself: the HTTP status and the fields of the JSON error body, per wire
//! API, with the numbers the server gave. Never a loose substring ("too
//! long", "exceeds"): a rate limit ("would exceed your rate limit of 40,000
//! input tokens per minute") or a byte limit (413 `request_too_large`) is
//! not an overflow, and compacting would not cure it.
//!
//! The shapes (fixtures in host/tests/fixtures/providers/overflow/):
//!
//! - OpenAI: 400, `error.code = "context_length_exceeded"`; the window only
//!   in the text ("maximum context length is N tokens. However, your
//!   messages resulted in T tokens").
//! - llama.cpp: 400, `error.type = "exceed_context_size_error"` with
//!   `n_prompt_tokens` and `n_ctx`.
//! - vLLM: 400, a `BadRequestError` whose message is "This model's maximum
//!   context length is L tokens. However, you requested T tokens (X in the
//!   messages, Y in the completion)", or "'max_tokens' or
//!   'max_completion_tokens' is too large: Y. This model's maximum context
//!   length is L tokens and your request has X input tokens".
//! - Anthropic: 400 `invalid_request_error`, "prompt is too long: N tokens >
//!   M maximum", or "input length and `max_tokens` exceed context limit: I
//!   + O > L" (the prompt fits; the reply's room does not).

use serde_json::Value;

/// What did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverflowKind {
    /// The conversation itself: compact it.
    Prompt,
    /// The conversation fits, but not with the room asked for the reply
    /// (`max_tokens`): ask for less, no compaction.
    ReplyRoom,
}

/// A context overflow, with what the server said of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    pub kind: OverflowKind,
    /// The prompt's tokens, when the server counted them.
    pub prompt_tokens: Option<u64>,
    /// The reply's room the request asked for, when the server said.
    pub reply_tokens: Option<u64>,
    /// The model's context window, when the server said.
    pub window: Option<u64>,
}

impl Overflow {
    /// A prompt and a reply's room that together pass the window: the
    /// prompt's fault when it alone does, else the room's.
    fn of_sizes(prompt: u64, reply: u64, window: u64) -> Overflow {
        Overflow {
            kind: if prompt >= window {
                OverflowKind::Prompt
            } else {
                OverflowKind::ReplyRoom
            },
            prompt_tokens: Some(prompt),
            reply_tokens: Some(reply),
            window: Some(window),
        }
    }
}

/// The overflow an OpenAI-style server (OpenAI, vLLM, llama.cpp, Ollama)
/// reported with `status` and `body`, if it is one.
pub fn openai(status: u16, body: &[u8]) -> Option<Overflow> {
    if status != 400 {
        return None;
    }
    let body: Value = serde_json::from_slice(body).ok()?;
    // OpenAI and llama.cpp nest the error; vLLM's older servers do not.
    let error = body.get("error").filter(|e| e.is_object()).unwrap_or(&body);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let field = |name: &str| error.get(name).and_then(Value::as_str);
    if field("code") == Some("context_length_exceeded") {
        let said = vllm_requested(message);
        return Some(Overflow {
            kind: OverflowKind::Prompt,
            prompt_tokens: number_after(message, "your messages resulted in ")
                .or(said.map(|(_, prompt, _)| prompt)),
            reply_tokens: None,
            window: number_after(message, "maximum context length is "),
        });
    }
    if field("type") == Some("exceed_context_size_error") {
        let count = |name: &str| error.get(name).and_then(Value::as_u64);
        return Some(Overflow {
            kind: OverflowKind::Prompt,
            prompt_tokens: count("n_prompt_tokens"),
            reply_tokens: None,
            window: count("n_ctx"),
        });
    }
    if field("type") != Some("BadRequestError") {
        return None;
    }
    if let Some((window, prompt, reply)) = vllm_requested(message) {
        return Some(Overflow::of_sizes(prompt, reply, window));
    }
    let reply = number_after(
        message,
        "'max_tokens' or 'max_completion_tokens' is too large: ",
    )?;
    let window = number_after(message, "maximum context length is ")?;
    Some(Overflow {
        kind: OverflowKind::ReplyRoom,
        prompt_tokens: number_after(message, "your request has "),
        reply_tokens: Some(reply),
        window: Some(window),
    })
}

/// The overflow Anthropic reported with `status` and `body`, if it is one.
pub fn anthropic(status: u16, body: &[u8]) -> Option<Overflow> {
    if status != 400 {
        return None;
    }
    let body: Value = serde_json::from_slice(body).ok()?;
    let error = body.get("error")?;
    if error.get("type").and_then(Value::as_str) != Some("invalid_request_error") {
        return None;
    }
    let message = error.get("message").and_then(Value::as_str)?;
    if let Some(rest) = message.strip_prefix("prompt is too long: ") {
        let (prompt, rest) = leading_number(rest)?;
        let window = rest
            .strip_prefix(" tokens > ")
            .and_then(leading_number)
            .map(|(window, _)| window);
        return Some(Overflow {
            kind: OverflowKind::Prompt,
            prompt_tokens: Some(prompt),
            reply_tokens: None,
            window,
        });
    }
    let rest = message.strip_prefix("input length and `max_tokens` exceed context limit: ")?;
    let (prompt, rest) = leading_number(rest)?;
    let (reply, rest) = leading_number(rest.strip_prefix(" + ")?)?;
    let (window, _) = leading_number(rest.strip_prefix(" > ")?)?;
    Some(Overflow::of_sizes(prompt, reply, window))
}

/// vLLM's "maximum context length is L tokens. However, you requested T
/// tokens (X in the messages, Y in the completion)": (L, X, Y).
fn vllm_requested(message: &str) -> Option<(u64, u64, u64)> {
    let window = number_after(message, "maximum context length is ")?;
    let rest = &message[message.find("you requested ")?..];
    let (_, rest) = leading_number(rest.strip_prefix("you requested ")?)?;
    let (prompt, rest) = leading_number(rest.strip_prefix(" tokens (")?)?;
    let (reply, _) = leading_number(rest.strip_prefix(" in the messages, ")?)?;
    Some((window, prompt, reply))
}

/// The number right after the first `marker` in `text`.
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let at = text.find(marker)? + marker.len();
    leading_number(&text[at..]).map(|(number, _)| number)
}

/// The digits `text` starts with (commas between them allowed), and the
/// rest.
fn leading_number(text: &str) -> Option<(u64, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == ','))
        .unwrap_or(text.len());
    let digits: String = text[..end].chars().filter(char::is_ascii_digit).collect();
    let number = digits.parse().ok()?;
    Some((number, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_where_the_text_puts_them() {
        assert_eq!(leading_number("128,000 tokens"), Some((128_000, " tokens")));
        assert_eq!(leading_number("tokens"), None);
        assert_eq!(
            number_after("length is 4096 tokens", "length is "),
            Some(4096)
        );
        assert_eq!(number_after("length is many", "length is "), None);
    }

    /// Every body in host/tests/fixtures/providers/overflow is classified
    /// as its `.expected.json` says: the overflows with their numbers, the
    /// look-alikes (rate limits, byte limits, a proxy's page) as none.
    #[test]
    fn each_recorded_body_is_classified_as_expected() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/providers/overflow");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("the overflow fixtures")
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".body").map(str::to_owned)
            })
            .collect();
        names.sort();
        assert!(names.len() >= 12, "{names:?}");
        for name in names {
            let body = std::fs::read(dir.join(format!("{name}.body"))).expect("body");
            let expected: Value = serde_json::from_slice(
                &std::fs::read(dir.join(format!("{name}.expected.json"))).expect("expected"),
            )
            .expect("expected JSON");
            let status = u16::try_from(expected["status"].as_u64().expect("status")).expect("u16");
            let found = match expected["api"].as_str() {
                Some("openai") => openai(status, &body),
                Some("anthropic") => anthropic(status, &body),
                other => panic!("{name}: unknown api {other:?}"),
            };
            let found = found.map(|o| {
                serde_json::json!({
                    "kind": match o.kind {
                        OverflowKind::Prompt => "prompt",
                        OverflowKind::ReplyRoom => "reply_room",
                    },
                    "prompt_tokens": o.prompt_tokens,
                    "reply_tokens": o.reply_tokens,
                    "window": o.window,
                })
            });
            assert_eq!(found.unwrap_or(Value::Null), expected["overflow"], "{name}");
        }
    }

    #[test]
    fn only_a_400_is_an_overflow() {
        let body = br#"{"error":{"code":"context_length_exceeded","message":"x"}}"#;
        assert!(openai(400, body).is_some());
        assert_eq!(openai(429, body), None);
        assert_eq!(openai(500, body), None);
        assert_eq!(openai(400, b"<html>context_length_exceeded</html>"), None);
    }
}

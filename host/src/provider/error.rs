//! How a request or its stream fails ([`ProviderError`]), with the advice
//! each failure's message gives. Its own module so that every wire API and
//! the HTTP and SSE layers import it rather than `provider`'s `mod.rs`.

use serde_json::Value;

use super::overflow;

/// A stream that cannot be read or understood. Which variants are worth a
/// retry is stated on each; a model's own `error` event is not one of these but
/// [`Finish::Error`](super::Finish::Error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// An event's data is not JSON: the server does not speak this wire API
    /// (wrong base URL, a proxy's HTML page). Not retried: it would happen
    /// again.
    #[error(
        "the `{provider}` stream sent data that is not JSON ({source}): `{excerpt}`; \
         check that the server speaks the `{provider}` streaming API"
    )]
    MalformedData {
        provider: &'static str,
        /// The start of the offending data, at most [`EXCERPT_CHARS`] characters.
        excerpt: String,
        source: serde_json::Error,
    },
    /// The body is not an event stream at all (not UTF-8, or a line the SSE
    /// grammar rejects). Not retried.
    #[error("the `{provider}` response is not a valid event stream: {detail}")]
    MalformedStream {
        provider: &'static str,
        detail: String,
    },
    /// The byte stream under the SSE framing failed. Retried: a byte source
    /// failing mid-read is a reset, which the retry policy retries
    /// (docs/contributing/decisions.md#model-retries). The
    /// HTTP layer never reports its own response bodies this way: those
    /// become `StreamBroken` / `IdleTimeout`, which know how many bytes had
    /// arrived and are retried only before the first one.
    #[error("reading the `{provider}` stream failed: {source}")]
    Transport {
        provider: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The connection could not be made or broke before the response
    /// headers (refused, reset, DNS, TLS). Retried.
    #[error("cannot reach `{provider}` at {url}: {detail}")]
    Connect {
        provider: &'static str,
        url: String,
        detail: String,
    },
    /// No response headers within the request timeout. Retried.
    #[error("`{provider}` at {url} did not answer within {after:?}")]
    RequestTimeout {
        provider: &'static str,
        url: String,
        after: std::time::Duration,
    },
    /// An HTTP error status other than 401, 403 and 404. Retried for 429 and
    /// 5xx (after `retry_after` when the server sent `Retry-After`); any other
    /// 4xx is not: the same request would fail again.
    #[error("`{provider}` at {url} answered HTTP {status}: {body}")]
    Status {
        provider: &'static str,
        url: String,
        status: u16,
        retry_after: Option<std::time::Duration>,
        /// The start of the server's error body.
        body: String,
    },
    /// A 400 that says the request does not fit the model's context window
    /// (module [`overflow`]). Not retried as it is: the conversation must
    /// shrink first, or the reply's room.
    #[error(
        "`{provider}` at {url}: {what} (server said: {body})",
        what = overflow_text(overflow)
    )]
    ContextOverflow {
        provider: &'static str,
        url: String,
        overflow: overflow::Overflow,
        body: String,
    },
    /// 401 or 403. Not retried: the key is wrong or missing. Keys come only
    /// from the environment, so the advice names the variable: at the
    /// vendor's own URL, to set it; at another server, that the server
    /// refused the key it was sent (or wants one).
    #[error(
        "`{provider}` at {url} answered HTTP {status}: {advice} (server said: {body})",
        advice = key_advice(.key_env, *.vendor, *.key_sent, .withheld.as_deref())
    )]
    Unauthorized {
        provider: &'static str,
        url: String,
        status: u16,
        /// The environment variable that holds this provider's key.
        key_env: &'static str,
        /// Whether `url` is the vendor's own API (the default base URL).
        vendor: bool,
        /// Whether the request carried a key.
        key_sent: bool,
        /// Why the user's key was not sent (an untrusted file chose the
        /// server), with the fix.
        withheld: Option<String>,
        body: String,
    },
    /// A 3xx. Never followed and not retried: following it would re-send
    /// the conversation (and a key in any header but `Authorization`) to an
    /// address the user did not name.
    #[error(
        "`{provider}` at {url} answered HTTP {status}, a redirect to {where_to}, which toolhost \
         never follows (the request carries your conversation and may carry your API key){fix}",
        where_to = location.as_deref().map_or_else(|| "nowhere (no Location header)".to_owned(), |l| format!("`{l}`")),
        fix = redirect_fix(.url, .location.as_deref())
    )]
    Redirect {
        provider: &'static str,
        url: String,
        status: u16,
        /// The `Location` header, as sent.
        location: Option<String>,
    },
    /// The stream went on without content (text, reasoning, a tool call)
    /// for longer than the content timeout: silence, or only comments,
    /// pings or empty deltas. Not retried; the run stops as `request_timeout`, as at its
    /// request deadline.
    #[error(
        "the `{provider}` stream from {url} sent no content for {} s (nothing at all, or only \
         comments, pings or empty deltas), so toolhost stopped reading it; if the model is meant to think that long, \
         raise the limit with `--content-timeout {}`, or `content_timeout = {}` under [model] in \
         your config.toml",
        .after.as_secs(), .after.as_secs().saturating_mul(2).max(1), .after.as_secs().saturating_mul(2).max(1)
    )]
    NoContent {
        provider: &'static str,
        url: String,
        after: std::time::Duration,
    },
    /// No key for the vendor's own API (the default base URL): found when
    /// the client is built, so a run stops before any request instead of
    /// sending one that must fail. A server at another base URL (Ollama,
    /// vLLM, llama.cpp) may need no key and is never refused this way.
    #[error(
        "no API key for `{provider}` at {base_url}: set the environment variable {key_env} \
         (`export {key_env}=...`); a server at --base-url may need none"
    )]
    MissingKey {
        provider: &'static str,
        base_url: String,
        /// The environment variable that holds this provider's key.
        key_env: &'static str,
    },
    /// 404. Not retried: the model name or the base URL is wrong.
    #[error(
        "`{provider}` answered HTTP 404: model `{model}` or URL `{url}` not found: \
         check --model and --base-url{hint} (server said: {body})"
    )]
    NotFound {
        provider: &'static str,
        url: String,
        model: String,
        body: String,
        /// A base URL without `/v1`: `; ... try --base-url .../v1`.
        hint: String,
    },
    /// The body went quiet for longer than the idle timeout. Retried only
    /// when no byte of the body had arrived (`received == 0`).
    #[error(
        "the `{provider}` stream from {url} sent nothing for {after:?} (after {received} bytes)"
    )]
    IdleTimeout {
        provider: &'static str,
        url: String,
        after: std::time::Duration,
        received: u64,
    },
    /// The connection broke while the body was streaming. Retried only when
    /// no byte of the body had arrived (`received == 0`): after that, part of
    /// a reply was generated, and a new request would generate (and bill)
    /// another one.
    #[error("the `{provider}` stream from {url} broke after {received} bytes: {detail}")]
    StreamBroken {
        provider: &'static str,
        url: String,
        received: u64,
        detail: String,
    },
    /// Every allowed retry failed; `last` is the final failure. Not retried.
    #[error("`{provider}` failed {attempts} times; last error: {last}")]
    RetriesExhausted {
        provider: &'static str,
        attempts: u32,
        last: Box<ProviderError>,
    },
    /// The HTTP client could not be built. Not retried.
    #[error("cannot send requests to `{provider}`: {detail}")]
    Client {
        provider: &'static str,
        detail: String,
    },
    /// The `scripted` provider's script cannot be read, is invalid, or ran
    /// out of turns. Not retried.
    #[error("script `{}`: {detail}", .path.display())]
    Script {
        path: std::path::PathBuf,
        detail: String,
    },
}

/// What a [`ProviderError::ContextOverflow`] says, with the server's numbers.
fn overflow_text(overflow: &overflow::Overflow) -> String {
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    match overflow.kind {
        overflow::OverflowKind::Prompt => {
            let mut text = "the conversation no longer fits the model's context window".to_owned();
            if overflow.prompt_tokens.is_some() || overflow.window.is_some() {
                text.push_str(&format!(
                    " ({} tokens; the window holds {})",
                    count(overflow.prompt_tokens),
                    count(overflow.window)
                ));
            }
            text
        }
        overflow::OverflowKind::ReplyRoom => format!(
            "the conversation ({} tokens) leaves less room in the model's context window ({}) \
             than the {} tokens asked for the reply",
            count(overflow.prompt_tokens),
            count(overflow.window),
            count(overflow.reply_tokens)
        ),
    }
}

/// What to do about a refused key (see [`ProviderError::Unauthorized`]).
fn key_advice(key_env: &str, vendor: bool, key_sent: bool, withheld: Option<&str>) -> String {
    if let (false, Some(withheld)) = (key_sent, withheld) {
        return withheld.to_owned();
    }
    match (vendor, key_sent) {
        (true, _) => format!(
            "bad or missing API key: set the environment variable {key_env} \
             (`export {key_env}=...`)"
        ),
        (false, true) => format!(
            "the server rejected the API key taken from {key_env}: set {key_env} to a key \
             this server accepts"
        ),
        (false, false) => format!(
            "the server wants an API key and none was sent: set {key_env} to a key this \
             server accepts"
        ),
    }
}

/// For a refused redirect: the `--base-url` that names its target, when the
/// target is an endpoint of this API (the request's path below the base URL).
fn redirect_fix(url: &str, location: Option<&str>) -> String {
    let Some(target) = location.and_then(|location| {
        reqwest::Url::parse(url)
            .ok()?
            .join(location)
            .ok()
            .filter(|target| matches!(target.scheme(), "http" | "https"))
    }) else {
        return String::new();
    };
    let target = target.as_str();
    let base = ["/chat/completions", "/v1/messages"]
        .iter()
        .find_map(|endpoint| target.strip_suffix(endpoint));
    match base {
        Some(base) => format!(
            "; if that is the model server you meant, name it yourself: `--base-url {base}`"
        ),
        None => "; if you meant that server, name it yourself with `--base-url`".to_owned(),
    }
}

/// How much of a bad data line an error quotes.
pub const EXCERPT_CHARS: usize = 80;

impl ProviderError {
    fn malformed_data(provider: &'static str, data: &str, source: serde_json::Error) -> Self {
        let mut excerpt: String = data.chars().take(EXCERPT_CHARS).collect();
        if excerpt.len() < data.len() {
            excerpt.push('…');
        }
        ProviderError::MalformedData {
            provider,
            excerpt,
            source,
        }
    }
}

/// Parses one event's data, naming the provider if it is not JSON.
pub(super) fn parse_data(provider: &'static str, data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data)
        .map_err(|source| ProviderError::malformed_data(provider, data, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_data_line_is_quoted_from_its_start() {
        let line = format!("<html>{}</html>", "x".repeat(200));
        let err = parse_data("openai", &line).expect_err("not json");
        let text = err.to_string();
        assert!(text.contains("`openai`"), "{text}");
        assert!(text.contains("`<html>xxx"), "{text}");
        assert!(text.contains("xxx…`"), "{text}");
        assert!(!text.contains("</html>"), "{text}");
    }

    #[test]
    fn a_redirect_names_where_it_led_and_the_base_url_that_names_it() {
        let redirect = |location: Option<&str>| {
            ProviderError::Redirect {
                provider: "openai",
                url: "http://127.0.0.1:1/v1/chat/completions".into(),
                status: 307,
                location: location.map(str::to_owned),
            }
            .to_string()
        };
        let start = "`openai` at http://127.0.0.1:1/v1/chat/completions answered HTTP 307, a \
                     redirect to ";
        let never = ", which toolhost never follows (the request carries your conversation and \
                     may carry your API key)";
        assert_eq!(
            redirect(Some("http://10.0.0.9:8/v2/chat/completions")),
            format!(
                "{start}`http://10.0.0.9:8/v2/chat/completions`{never}; if that is the model \
                 server you meant, name it yourself: `--base-url http://10.0.0.9:8/v2`"
            )
        );
        // A relative Location is resolved against the request's URL.
        assert!(
            redirect(Some("/v3/chat/completions")).ends_with("`--base-url http://127.0.0.1:1/v3`")
        );
        assert_eq!(
            redirect(Some("http://x.example/login")),
            format!(
                "{start}`http://x.example/login`{never}; if you meant that server, name it \
                 yourself with `--base-url`"
            )
        );
        assert_eq!(
            redirect(None),
            format!("{start}nowhere (no Location header){never}")
        );
    }
}

//! Server-Sent Events framing: a response body, as byte chunks cut anywhere
//! (mid-line, mid-character), becomes a stream of `(event name, data)` pairs.
//!
//! Knows nothing about any provider's JSON; the parsing follows the WHATWG
//! event-stream grammar through the `eventsource-stream` crate (comments
//! skipped, `data:` lines joined with `\n`, CR/LF/CRLF line ends, an event
//! without `event:` named `message`).

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

use super::ProviderError;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, or `message` when the server sent none.
    pub(crate) event: String,
    /// The `data:` lines joined with `\n`.
    pub(crate) data: String,
}

/// Frames `body` into events. Errors name `provider`; a transport error is
/// passed through as [`ProviderError::Transport`] so the caller can retry.
pub(crate) fn events<S, B, E>(
    provider: &'static str,
    body: S,
) -> impl Stream<Item = Result<SseEvent, ProviderError>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::error::Error + Send + Sync + 'static,
{
    body.eventsource().map(move |item| match item {
        Ok(event) => Ok(SseEvent {
            event: event.event,
            data: event.data,
        }),
        Err(EventStreamError::Utf8(err)) => Err(ProviderError::MalformedStream {
            provider,
            detail: format!("the body is not UTF-8 ({err})"),
        }),
        Err(EventStreamError::Parser(err)) => Err(ProviderError::MalformedStream {
            provider,
            detail: format!("a line does not follow the SSE grammar ({err})"),
        }),
        Err(EventStreamError::Transport(err)) => Err(ProviderError::Transport {
            provider,
            source: Box::new(err),
        }),
    })
}

/// Test helper: frames a whole body held in memory.
#[cfg(test)]
pub(crate) async fn events_from_slice(
    provider: &'static str,
    body: &[u8],
) -> Result<Vec<SseEvent>, ProviderError> {
    use futures_util::TryStreamExt;

    let chunk = Ok::<_, std::convert::Infallible>(bytes::Bytes::copy_from_slice(body));
    events(provider, futures_util::stream::iter([chunk]))
        .try_collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[tokio::test]
    async fn names_joins_data_lines_and_skips_comments() {
        let body =
            b": keep-alive\n\nevent: ping\ndata: {}\n\ndata: a\ndata: b\r\n\r\ndata: [DONE]\n\n";
        let events = events_from_slice("openai", body).await.expect("frames");
        assert_eq!(
            events,
            [
                pair("ping", "{}"),
                pair("message", "a\nb"),
                pair("message", "[DONE]")
            ]
        );
    }

    #[tokio::test]
    async fn chunks_cut_mid_character_and_mid_crlf_are_reassembled() {
        let body = "data: 25 × 37\r\n\r\n".as_bytes();
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            body.iter().map(|byte| Ok(vec![*byte])).collect();
        let events: Vec<_> = events("anthropic", futures_util::stream::iter(chunks))
            .collect()
            .await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(
            events.into_iter().next().and_then(Result::ok),
            Some(pair("message", "25 × 37"))
        );
    }

    #[tokio::test]
    async fn a_transport_error_is_passed_through() {
        let chunks = [
            Ok(b"data: {}\n\n".to_vec()),
            Err(std::io::Error::other("connection reset")),
        ];
        let events: Vec<_> = events("openai", futures_util::stream::iter(chunks))
            .collect()
            .await;
        assert!(events[0].is_ok(), "{events:?}");
        match &events[1] {
            Err(err @ ProviderError::Transport { .. }) => {
                assert_eq!(
                    err.to_string(),
                    "reading the `openai` stream failed: connection reset"
                );
            }
            other => panic!("expected a transport error, got {other:?}"),
        }
    }
}

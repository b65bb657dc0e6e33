//! Server-Sent Events framing: a response body, as byte chunks cut anywhere
//! (mid-line, mid-character), becomes a stream of `(event name, data)` pairs.
//!
//! Knows nothing about any provider's JSON; the parsing follows the WHATWG
//! event-stream grammar through the `eventsource-stream` crate (comments
//! skipped, `data:` lines joined with `\n`, CR/LF/CRLF line ends, an event
//! without `event:` named `message`).
//!
//! That crate holds a line whole until its end arrives, rescans it at every
//! chunk and copies what follows each line it parses, so [`Lines`] goes
//! first: it hands the crate one whole line at a time (linear work), and
//! stops the stream when one event (its lines up to the blank line that
//! ends it) passes a cap, so a server sending one endless line makes
//! toolhost hold at most the cap.

use std::collections::VecDeque;

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

/// What the framing yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Frame {
    Event(SseEvent),
    /// An event passed the cap given to [`events`]; nothing more is read.
    Overlong,
}

/// Frames `body` into events of at most `max_event_bytes` each. Errors name
/// `provider`; a transport error is passed through as
/// [`ProviderError::Transport`] so the caller can retry.
pub(crate) fn events<S, B, E>(
    provider: &'static str,
    body: S,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<Frame, ProviderError>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::error::Error + Send + Sync + 'static,
{
    lines(body, max_event_bytes)
        .eventsource()
        .map(move |item| match item {
            Ok(event) => Ok(Frame::Event(SseEvent {
                event: event.event,
                data: event.data,
            })),
            Err(EventStreamError::Transport(Framing::Overlong)) => Ok(Frame::Overlong),
            Err(EventStreamError::Transport(Framing::Transport(err))) => {
                Err(ProviderError::Transport {
                    provider,
                    source: Box::new(err),
                })
            }
            Err(EventStreamError::Utf8(err)) => Err(ProviderError::MalformedStream {
                provider,
                detail: format!("the body is not UTF-8 ({err})"),
            }),
            Err(EventStreamError::Parser(err)) => Err(ProviderError::MalformedStream {
                provider,
                detail: format!("a line does not follow the SSE grammar ({err})"),
            }),
        })
}

/// Why the byte stream under the framing stopped.
#[derive(Debug)]
enum Framing<E> {
    /// The body failed.
    Transport(E),
    /// One event passed the cap.
    Overlong,
}

/// `body` re-cut into whole lines (the last one may lack its end), ending
/// with [`Framing::Overlong`] when one event passes `max_event_bytes`.
fn lines<S, B, E>(
    body: S,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<Vec<u8>, Framing<E>>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    let state = (
        Box::pin(body),
        Lines::new(max_event_bytes),
        VecDeque::new(),
        false,
    );
    futures_util::stream::unfold(
        state,
        |(mut body, mut lines, mut ready, mut done)| async move {
            loop {
                if let Some(item) = ready.pop_front() {
                    return Some((item, (body, lines, ready, done)));
                }
                if done {
                    return None;
                }
                match body.next().await {
                    Some(Ok(chunk)) => {
                        let mut whole = VecDeque::new();
                        let fed = lines.feed(chunk.as_ref(), &mut whole);
                        ready.extend(whole.into_iter().map(Ok));
                        if fed.is_err() {
                            done = true;
                            ready.push_back(Err(Framing::Overlong));
                        }
                    }
                    Some(Err(err)) => {
                        done = true;
                        ready.push_back(Err(Framing::Transport(err)));
                    }
                    None => {
                        done = true;
                        ready.extend(lines.rest().map(Ok));
                    }
                }
            }
        },
    )
}

/// The current event passed the cap.
#[derive(Debug, PartialEq, Eq)]
struct Overlong;

/// Cuts bytes into lines and counts the bytes of the current event.
#[derive(Debug)]
struct Lines {
    /// The line whose end has not arrived yet.
    pending: Vec<u8>,
    /// Bytes of the current event's whole lines.
    event: usize,
    /// The last line ended with a CR that ended its chunk: an LF starting
    /// the next chunk belongs to it.
    after_cr: bool,
    limit: usize,
}

impl Lines {
    fn new(limit: usize) -> Self {
        Lines {
            pending: Vec::new(),
            event: 0,
            after_cr: false,
            limit,
        }
    }

    /// Appends each line `chunk` completes to `out` and keeps the
    /// unfinished one; `Err` when the current event passes the limit.
    fn feed(&mut self, chunk: &[u8], out: &mut VecDeque<Vec<u8>>) -> Result<(), Overlong> {
        let mut rest = chunk;
        if self.after_cr && rest.first() == Some(&b'\n') {
            out.push_back(vec![b'\n']);
            rest = &rest[1..];
        }
        self.after_cr = false;
        while !rest.is_empty() {
            let Some(at) = rest.iter().position(|&b| b == b'\r' || b == b'\n') else {
                if self.event + self.pending.len() + rest.len() > self.limit {
                    return Err(Overlong);
                }
                self.pending.extend_from_slice(rest);
                break;
            };
            let mut end = at + 1;
            if rest[at] == b'\r' {
                match rest.get(end) {
                    Some(b'\n') => end += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let blank = at == 0 && self.pending.is_empty();
            let length = self.pending.len() + end;
            if self.event + length > self.limit {
                return Err(Overlong);
            }
            let mut line = std::mem::take(&mut self.pending);
            line.extend_from_slice(&rest[..end]);
            out.push_back(line);
            // A blank line ends the event.
            self.event = if blank { 0 } else { self.event + length };
            rest = &rest[end..];
        }
        Ok(())
    }

    /// The unfinished line at the end of the body.
    fn rest(&mut self) -> Option<Vec<u8>> {
        (!self.pending.is_empty()).then(|| std::mem::take(&mut self.pending))
    }
}

/// Test helper: frames a whole body held in memory.
#[cfg(test)]
pub(crate) async fn events_from_slice(
    provider: &'static str,
    body: &[u8],
) -> Result<Vec<SseEvent>, ProviderError> {
    use futures_util::TryStreamExt;

    let chunk = Ok::<_, std::convert::Infallible>(bytes::Bytes::copy_from_slice(body));
    let frames: Vec<Frame> = events(provider, futures_util::stream::iter([chunk]), 1 << 20)
        .try_collect()
        .await?;
    Ok(frames
        .into_iter()
        .filter_map(|frame| match frame {
            Frame::Event(event) => Some(event),
            Frame::Overlong => None,
        })
        .collect())
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
        let events: Vec<_> = events("anthropic", futures_util::stream::iter(chunks), 1 << 20)
            .collect()
            .await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(
            events.into_iter().next().and_then(Result::ok),
            Some(Frame::Event(pair("message", "25 × 37")))
        );
    }

    #[tokio::test]
    async fn a_transport_error_is_passed_through() {
        let chunks = [
            Ok(b"data: {}\n\n".to_vec()),
            Err(std::io::Error::other("connection reset")),
        ];
        let events: Vec<_> = events("openai", futures_util::stream::iter(chunks), 1 << 20)
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

    /// The frames of `chunks` with an event cap of `limit`.
    async fn frames(chunks: &[&[u8]], limit: usize) -> Vec<Frame> {
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            chunks.iter().map(|chunk| Ok(chunk.to_vec())).collect();
        events("openai", futures_util::stream::iter(chunks), limit)
            .map(|frame| frame.expect("no error"))
            .collect()
            .await
    }

    #[tokio::test]
    async fn one_endless_line_stops_at_the_cap_after_the_events_before_it() {
        let line = [b"data: a\n\ndata: ".as_slice(), &[b'x'; 40]].concat();
        let got = frames(&[&line, &[b'y'; 40]], 64).await;
        assert_eq!(got, [Frame::Event(pair("message", "a")), Frame::Overlong]);
    }

    #[tokio::test]
    async fn short_lines_without_a_blank_line_add_up_to_one_event() {
        let lines = "data: 0123456789\n".repeat(10);
        let got = frames(&[lines.as_bytes()], 100).await;
        assert_eq!(got, [Frame::Overlong]);
        // The same lines as separate events are each far under the cap.
        let events = "data: 0123456789\n\n".repeat(10);
        let got = frames(&[events.as_bytes()], 100).await;
        assert_eq!(got.len(), 10, "{got:?}");
    }

    #[tokio::test]
    async fn the_count_restarts_at_a_blank_line_whatever_the_line_ends() {
        // Each event is 30 bytes; the cap of 40 holds one, not two.
        for end in ["\n", "\r\n"] {
            let event = format!("data: {}{end}{end}", "z".repeat(24 - end.len()));
            let body = event.repeat(5);
            // Cut in every place, a CRLF included.
            let bytes = body.as_bytes();
            let pieces: Vec<&[u8]> = bytes.chunks(7).collect();
            let got = frames(&pieces, 40).await;
            assert_eq!(got.len(), 5, "{end:?}: {got:?}");
            assert!(
                got.iter().all(|frame| matches!(frame, Frame::Event(_))),
                "{end:?}: {got:?}"
            );
        }
    }

    #[test]
    fn lines_are_handed_on_whole_one_at_a_time() {
        let mut lines = Lines::new(1 << 10);
        let mut out = VecDeque::new();
        lines.feed(b"data: a\r", &mut out).expect("fits");
        lines.feed(b"\ndata: b", &mut out).expect("fits");
        lines.feed(b"c\n\n", &mut out).expect("fits");
        let out: Vec<&[u8]> = out.iter().map(Vec::as_slice).collect();
        assert_eq!(out, [b"data: a\r".as_slice(), b"\n", b"data: bc\n", b"\n"]);
        assert_eq!(lines.rest(), None);
    }
}

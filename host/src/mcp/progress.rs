//! A plugin's `host.progress` messages as `notifications/progress`, for a
//! request that carried a `progressToken`: `progress` counts the messages
//! (so it always increases), at most one notification per [`THROTTLE`]
//! however often the plugin reports, and the last message is always sent
//! before the call's result.
//!
//! A plugin chooses what it reports, so its size is bounded too: each
//! message is cut to [`MAX_MESSAGE`] bytes of JSON, and all of a call's
//! notifications together to [`MAX_TOTAL`] bytes, of which room for the
//! last one is held back. A cut message ends with [`CUT`].

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

use crate::sandbox::ProgressSink;

/// The shortest gap between two progress notifications of one call.
pub(super) const THROTTLE: Duration = Duration::from_millis(50);

/// The longest message of one notification, in bytes of its JSON string
/// (escapes count): 64 KiB.
pub(super) const MAX_MESSAGE: usize = 64 * 1024;

/// The bytes of all progress notifications of one call together, each
/// counted as the JSON-RPC line the client receives: 1 MiB.
pub(super) const MAX_TOTAL: usize = 1024 * 1024;

/// What ends a message that was cut.
pub(super) const CUT: &str = " [cut: progress is limited to 64 KiB a message and 1 MiB a call]";

/// Held back from the messages before the last, so the last always fits.
const RESERVE: usize = MAX_MESSAGE + 1024;

/// The bytes of a notification's line around its `params`:
/// `{"jsonrpc":"2.0","method":"notifications/progress","params":…}` and
/// the newline.
const ENVELOPE: usize = 64;

/// Where a notification goes; the peer in the server, a channel in tests.
pub(super) trait Notify: Send + 'static {
    fn progress(&self, param: ProgressNotificationParam) -> impl Future<Output = ()> + Send;
}

impl Notify for Peer<RoleServer> {
    async fn progress(&self, param: ProgressNotificationParam) {
        // A client that is gone gets nothing; the call goes on.
        let _ = self.notify_progress(param).await;
    }
}

/// The latest message of a call, already cut to [`MAX_MESSAGE`] bytes
/// (so a plugin's 100 MB message is not kept), and how many came.
#[derive(Clone, Default)]
struct Latest {
    count: u64,
    message: String,
    /// `message` is a prefix of what the plugin sent.
    cut: bool,
}

/// The sink to hand the call and the task that forwards what it receives.
/// The task ends once the sink (every clone of it) is dropped and the last
/// message is sent: drop the call's options, then await it.
pub(super) fn forward(
    to: impl Notify,
    token: ProgressToken,
) -> (ProgressSink, impl Future<Output = ()> + Send) {
    let (tx, mut rx) = watch::channel(Latest::default());
    let sink: ProgressSink = Arc::new(move |message: &str| {
        tx.send_modify(|latest| {
            let kept = &message[..message.floor_char_boundary(MAX_MESSAGE)];
            latest.count += 1;
            latest.message.clear();
            latest.message.push_str(kept);
            latest.cut = kept.len() < message.len();
        });
    });
    let task = async move {
        let mut sent = 0;
        let mut spent = 0;
        while rx.changed().await.is_ok() {
            let latest = rx.borrow_and_update().clone();
            // Past its share, a call's progress waits for the last message.
            if let Some((param, size)) =
                fitted(&token, &latest, (MAX_TOTAL - RESERVE).saturating_sub(spent))
            {
                to.progress(param).await;
                spent += size;
                sent = latest.count;
            }
            tokio::time::sleep(THROTTLE).await;
        }
        // The call ended; what came in since the last notification.
        let latest = rx.borrow().clone();
        if latest.count > sent {
            let (param, _) = fitted(&token, &latest, MAX_TOTAL.saturating_sub(spent))
                .unwrap_or_else(|| (param(&token, latest.count, String::new()), 0));
            to.progress(param).await;
        }
    };
    (sink, task)
}

/// The notification of `latest` cut to fit in `room` bytes, and its size;
/// `None` when not even a short message fits.
fn fitted(
    token: &ProgressToken,
    latest: &Latest,
    room: usize,
) -> Option<(ProgressNotificationParam, usize)> {
    let bare = param(token, latest.count, String::new());
    let overhead = serde_json::to_vec(&bare).map_or(usize::MAX, |json| json.len()) + ENVELOPE;
    let limit = MAX_MESSAGE.min(room.checked_sub(overhead)?);
    if limit < CUT.len() {
        return None;
    }
    let message = fit(&latest.message, latest.cut, limit).into_owned();
    let size = overhead + json_len(&message);
    Some((bare.with_message(message), size))
}

/// `message` when its JSON string is at most `limit` bytes and it was not
/// cut before; else as much of it as fits with [`CUT`].
fn fit(message: &str, cut: bool, limit: usize) -> Cow<'_, str> {
    if !cut && json_len(message) <= limit {
        return Cow::Borrowed(message);
    }
    let room = limit.saturating_sub(CUT.len());
    let mut used = 0;
    let end = message
        .char_indices()
        .find_map(|(at, c)| {
            used += json_char_len(c);
            (used > room).then_some(at)
        })
        .unwrap_or(message.len());
    Cow::Owned(format!("{}{CUT}", &message[..end]))
}

/// The bytes of `text` inside a JSON string, as serde_json writes it.
fn json_len(text: &str) -> usize {
    text.chars().map(json_char_len).sum()
}

fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if u32::from(c) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

fn param(token: &ProgressToken, count: u64, message: String) -> ProgressNotificationParam {
    ProgressNotificationParam::new(token.clone(), count as f64).with_message(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;
    use tokio::sync::mpsc;

    struct Channel(mpsc::UnboundedSender<ProgressNotificationParam>);

    impl Notify for Channel {
        async fn progress(&self, param: ProgressNotificationParam) {
            let _ = self.0.send(param);
        }
    }

    #[tokio::test]
    async fn a_flood_is_throttled_and_the_last_message_arrives() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let token = ProgressToken(NumberOrString::Number(7));
        let (sink, task) = forward(Channel(tx), token.clone());
        let task = tokio::spawn(task);
        let call = tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            for i in 1..=100_000 {
                sink(&format!("step {i}"));
            }
            // Keep reporting long enough for a few notifications.
            while started.elapsed() < Duration::from_millis(200) {
                sink("step 100000");
            }
        });
        call.await.expect("join");
        task.await.expect("join");
        let mut seen = Vec::new();
        while let Ok(param) = rx.try_recv() {
            seen.push(param);
        }
        assert!(
            (1..=10).contains(&seen.len()),
            "{} notifications for 200 ms of progress",
            seen.len()
        );
        assert!(
            seen.windows(2).all(|w| w[0].progress < w[1].progress),
            "progress does not increase: {:?}",
            seen.iter().map(|p| p.progress).collect::<Vec<_>>()
        );
        let last = seen.last().expect("one notification");
        assert_eq!(last.message.as_deref(), Some("step 100000"));
        assert_eq!(last.progress_token, token);
    }

    #[tokio::test]
    async fn a_single_message_arrives_and_no_message_sends_nothing() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let token = ProgressToken(NumberOrString::String("t".into()));
        let (sink, task) = forward(Channel(tx), token);
        sink("echoing");
        drop(sink);
        task.await;
        let param = rx.try_recv().expect("one notification");
        assert_eq!(
            (param.progress, param.message.as_deref()),
            (1.0, Some("echoing"))
        );
        assert!(rx.try_recv().is_err());

        let (tx, mut rx) = mpsc::unbounded_channel();
        let (sink, task) = forward(Channel(tx), ProgressToken(NumberOrString::Number(1)));
        drop(sink);
        task.await;
        assert!(rx.try_recv().is_err());
    }

    /// The size of a notification as the client receives it.
    fn wire_len(param: &ProgressNotificationParam) -> usize {
        serde_json::to_vec(param).expect("serialise").len() + ENVELOPE
    }

    #[tokio::test]
    async fn huge_messages_are_cut_and_a_call_sends_at_most_a_mebibyte() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (sink, task) = forward(Channel(tx), ProgressToken(NumberOrString::Number(3)));
        let task = tokio::spawn(task);
        // Control characters are 6 bytes each in JSON.
        let huge = "\u{1}".repeat(1 << 20);
        let call = tokio::task::spawn_blocking(move || {
            for step in 1..=40 {
                sink(&format!("step {step} {huge}"));
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        call.await.expect("join");
        task.await.expect("join");
        let seen: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        let total: usize = seen.iter().map(wire_len).sum();
        assert!(total <= MAX_TOTAL, "{total} bytes of progress");
        assert!(seen.iter().all(|p| wire_len(p) <= MAX_MESSAGE + 200));
        let last = seen.last().expect("one notification");
        let message = last.message.as_deref().expect("a message");
        assert!(message.starts_with("step 40 \u{1}"), "{}", &message[..20]);
        assert!(message.ends_with(CUT));
        assert_eq!(last.progress, 40.0);
    }

    #[test]
    fn a_message_is_cut_on_a_character_and_says_so() {
        assert_eq!(fit("short", false, 100), "short");
        let accents = "é".repeat(100);
        assert_eq!(fit(&accents, false, CUT.len() + 5), format!("éé{CUT}"));
        assert_eq!(fit("a\"b", false, 4), "a\"b");
        assert_eq!(fit("a\"b", false, 3), CUT);
        assert_eq!(fit("kept", true, 100), format!("kept{CUT}"));
    }
}

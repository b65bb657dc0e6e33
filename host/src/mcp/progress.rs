//! A plugin's `host.progress` messages as `notifications/progress`, for a
//! request that carried a `progressToken`: `progress` counts the messages
//! (so it always increases), at most one notification per [`THROTTLE`]
//! however often the plugin reports, and the last message is always sent
//! before the call's result.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

use crate::sandbox::ProgressSink;

/// The shortest gap between two progress notifications of one call.
pub(super) const THROTTLE: Duration = Duration::from_millis(50);

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

/// The sink to hand the call and the task that forwards what it receives.
/// The task ends once the sink (every clone of it) is dropped and the last
/// message is sent: drop the call's options, then await it.
pub(super) fn forward(
    to: impl Notify,
    token: ProgressToken,
) -> (ProgressSink, impl Future<Output = ()> + Send) {
    let (tx, mut rx) = watch::channel::<(u64, String)>((0, String::new()));
    let sink: ProgressSink = Arc::new(move |message: &str| {
        tx.send_modify(|(count, last)| {
            *count += 1;
            message.clone_into(last);
        });
    });
    let task = async move {
        let mut sent = 0;
        while rx.changed().await.is_ok() {
            let (count, message) = rx.borrow_and_update().clone();
            to.progress(param(&token, count, message)).await;
            sent = count;
            tokio::time::sleep(THROTTLE).await;
        }
        // The call ended; what came in since the last notification.
        let (count, message) = rx.borrow().clone();
        if count > sent {
            to.progress(param(&token, count, message)).await;
        }
    };
    (sink, task)
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
}

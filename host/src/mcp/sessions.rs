//! The live Streamable HTTP sessions, bounded: rmcp's
//! `LocalSessionManager` keeps every session until it has been idle for
//! its `keep_alive`, so a flood of `initialize` requests grows the server
//! without limit. This wraps it with a cap of [`MAX_SESSIONS`] and an idle
//! expiry of [`IDLE`].
//!
//! At the cap, a new session evicts the one idle the longest, never one
//! with a request running: a session left behind by a client that went
//! away (the usual case) is then recycled instead of locking out every
//! new client until it expires, and an evicted client that comes back
//! gets 404, on which the spec has it initialize again. Only when every
//! session has a request running is the new one refused.
//!
//! Idle time counts from a session's last request or the end of its last
//! response, so a long call is never expired under its client (rmcp's own
//! timer, turned off here, fires in the middle of a silent call).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

/// The most sessions alive at once.
pub(super) const MAX_SESSIONS: usize = 256;

/// A session with no request for this long is closed.
pub(super) const IDLE: Duration = Duration::from_secs(30 * 60);

/// [`LocalSessionManager`] with a cap and an idle expiry.
pub(super) struct Sessions {
    inner: LocalSessionManager,
    live: Mutex<HashMap<SessionId, Arc<Activity>>>,
    /// One session is made at a time, so two cannot both take the last
    /// place.
    creating: tokio::sync::Mutex<()>,
    cap: usize,
    idle: Duration,
}

/// When a session was last used and how many of its responses are open.
#[derive(Debug)]
struct Activity {
    last: Mutex<Instant>,
    running: AtomicUsize,
}

impl Activity {
    fn touch(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn idle_since(&self) -> Instant {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn running(&self) -> bool {
        self.running.load(Ordering::Relaxed) > 0
    }
}

/// Held by a response stream: the session is busy until it is dropped.
struct Running(Arc<Activity>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.touch();
        self.0.running.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Debug, thiserror::Error)]
pub(super) enum SessionsError {
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    #[error(
        "too many MCP sessions: all {0} are running a request; retry when one has ended, or \
         close sessions you no longer use"
    )]
    Full(usize),
}

impl Sessions {
    pub(super) fn new(cap: usize, idle: Duration) -> Sessions {
        let mut inner = LocalSessionManager::default();
        // Idle expiry is ours (it knows which sessions have a call running).
        inner.session_config.keep_alive = None;
        Sessions {
            inner,
            live: Mutex::new(HashMap::new()),
            creating: tokio::sync::Mutex::new(()),
            cap,
            idle,
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Arc<Activity>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of live sessions.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.live().len()
    }

    fn touch(&self, id: &SessionId) -> Option<Arc<Activity>> {
        let activity = self.live().get(id).cloned()?;
        activity.touch();
        Some(activity)
    }

    /// Closes every session idle for longer than [`IDLE`] with nothing
    /// running.
    pub(super) async fn expire(&self) {
        let now = Instant::now();
        let expired: Vec<SessionId> = self
            .live()
            .iter()
            .filter(|(_, a)| !a.running() && now.duration_since(a.idle_since()) > self.idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            let _ = self.close_session(&id).await;
        }
    }

    /// The session to evict for a new one: the longest idle of those with
    /// nothing running.
    fn victim(&self) -> Option<SessionId> {
        self.live()
            .iter()
            .filter(|(_, a)| !a.running())
            .min_by_key(|(_, a)| a.idle_since())
            .map(|(id, _)| id.clone())
    }

    /// Marks a response stream of `id` as running until it is dropped.
    fn running<S>(&self, id: &SessionId, stream: S) -> impl Stream<Item = S::Item> + use<S>
    where
        S: Stream,
    {
        let running = self.touch(id).map(|activity| {
            activity.running.fetch_add(1, Ordering::Relaxed);
            Running(activity)
        });
        stream.map(move |item| {
            let _running = &running;
            item
        })
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _one_at_a_time = self.creating.lock().await;
        self.expire().await;
        if self.live().len() >= self.cap {
            let victim = self.victim().ok_or(SessionsError::Full(self.cap))?;
            // A session whose worker already ended is gone all the same.
            let _ = self.close_session(&victim).await;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.live().insert(
            id.clone(),
            Arc::new(Activity {
                last: Mutex::new(Instant::now()),
                running: AtomicUsize::new(0),
            }),
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.touch(id).is_some() && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.live().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.inner.create_stream(id, message).await?;
        Ok(self.running(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // A client's listening stream stays open while it is idle: it does
        // not keep the session from expiring.
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No external store: sessions live in this process only.
        Ok(RestoreOutcome::NotSupported)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_longest_idle_session_makes_room_and_busy_ones_are_kept() {
        let sessions = Sessions::new(2, IDLE);
        let (first, _t1) = sessions.create_session().await.expect("first");
        tokio::time::sleep(Duration::from_millis(5)).await;
        let (second, _t2) = sessions.create_session().await.expect("second");
        tokio::time::sleep(Duration::from_millis(5)).await;
        // `first` is used again: `second` is now the longest idle.
        sessions.touch(&first);
        let (third, _t3) = sessions.create_session().await.expect("third");
        assert_eq!(sessions.len(), 2);
        assert!(sessions.touch(&second).is_none(), "second was not evicted");

        // With a response open on each, there is no room and no victim.
        let busy_first = sessions.running(&first, futures_util::stream::empty::<()>());
        let busy_third = sessions.running(&third, futures_util::stream::empty::<()>());
        assert!(matches!(
            sessions.create_session().await,
            Err(SessionsError::Full(2))
        ));
        drop(busy_third);
        let (_fourth, _t4) = sessions.create_session().await.expect("room again");
        assert!(sessions.touch(&third).is_none(), "third was not evicted");
        assert!(sessions.touch(&first).is_some());
        drop(busy_first);
    }

    #[tokio::test]
    async fn idle_sessions_expire_unless_running() {
        let sessions = Sessions::new(8, Duration::from_millis(20));
        let (idle, _t1) = sessions.create_session().await.expect("idle");
        let (busy, _t2) = sessions.create_session().await.expect("busy");
        let running = sessions.running(&busy, futures_util::stream::empty::<()>());
        tokio::time::sleep(Duration::from_millis(40)).await;
        sessions.expire().await;
        assert!(sessions.touch(&idle).is_none());
        assert!(sessions.touch(&busy).is_some());
        drop(running);
    }
}

//! When a call may start. Calls run concurrently, but at most
//! [`MAX_RUNNING`] at once (below the engine's instance pool, so a burst
//! waits for a slot instead of failing to instantiate), and calls of tools
//! that write run one at a time in the order they arrived, so two edits of
//! one file cannot interleave.
//!
//! Arrival order is taken where the messages are read
//! ([`Lanes::arrive`], called by the transport), not when a handler task
//! first runs, which the runtime may reorder.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Calls that may run at once. The engine's pool holds
/// [`crate::sandbox::CONCURRENT_CALLS`] instances; the rest is left for
/// loading plugins and for `toolhost` itself.
pub(super) const MAX_RUNNING: usize = crate::sandbox::CONCURRENT_CALLS as usize - 8;

/// The server's admission rules.
pub(super) struct Lanes {
    running: Arc<Semaphore>,
    writes: Arc<WriteLane>,
    write_tools: RwLock<HashSet<String>>,
}

/// The right to run one call; dropping it lets the next one in.
pub(super) struct Admission {
    _turn: Option<Ticket>,
    _permit: OwnedSemaphorePermit,
}

impl Lanes {
    /// Lanes for a server whose tools named in `write_tools` write.
    pub(super) fn new(write_tools: HashSet<String>) -> Self {
        Lanes {
            running: Arc::new(Semaphore::new(MAX_RUNNING)),
            writes: Arc::new(WriteLane::default()),
            write_tools: RwLock::new(write_tools),
        }
    }

    /// The tools that write, after a reload.
    pub(super) fn set_write_tools(&self, write_tools: HashSet<String>) {
        *self
            .write_tools
            .write()
            .unwrap_or_else(PoisonError::into_inner) = write_tools;
    }

    /// A call of `tool` arrived: a tool that writes takes its place in the
    /// write lane now. `None` for read-only (and unknown) tools.
    pub(super) fn arrive(&self, tool: &str) -> Option<Ticket> {
        self.write_tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
            .then(|| WriteLane::issue(&self.writes))
    }

    /// Waits until a call of `tool` may run: its turn in the write lane
    /// (with `ticket` from [`Lanes::arrive`], or a place taken now), then
    /// a running slot. `None` when `cancel` fires first.
    pub(super) async fn admit(
        &self,
        tool: &str,
        ticket: Option<Ticket>,
        cancel: &CancellationToken,
    ) -> Option<Admission> {
        let turn = ticket.or_else(|| self.arrive(tool));
        if let Some(ticket) = &turn {
            tokio::select! {
                () = ticket.turn() => {}
                () = cancel.cancelled() => return None,
            }
        }
        let permit = tokio::select! {
            permit = Arc::clone(&self.running).acquire_owned() => permit.ok()?,
            () = cancel.cancelled() => return None,
        };
        Some(Admission {
            _turn: turn,
            _permit: permit,
        })
    }
}

/// Tickets in arrival order; the lowest unfinished one may run.
#[derive(Default)]
struct WriteLane {
    state: Mutex<LaneState>,
    turn: Notify,
}

#[derive(Default)]
struct LaneState {
    issued: u64,
    serving: u64,
    /// Tickets above `serving` already dropped (finished, or abandoned
    /// before their turn: a cancelled call, a request never handled).
    done: BTreeSet<u64>,
}

/// A place in the write lane. Dropped when the call ends, or unused.
pub(super) struct Ticket {
    lane: Arc<WriteLane>,
    number: u64,
}

impl WriteLane {
    fn issue(lane: &Arc<WriteLane>) -> Ticket {
        let mut state = lane.state.lock().unwrap_or_else(PoisonError::into_inner);
        let number = state.issued;
        state.issued += 1;
        Ticket {
            lane: Arc::clone(lane),
            number,
        }
    }
}

impl Ticket {
    /// Resolves when every earlier ticket has been dropped.
    async fn turn(&self) {
        loop {
            let notified = self.lane.turn.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let serving = self
                .lane
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .serving;
            if serving == self.number {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self
            .lane
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.done.insert(self.number);
        loop {
            let serving = state.serving;
            if !state.done.remove(&serving) {
                break;
            }
            state.serving += 1;
        }
        drop(state);
        self.lane.turn.notify_waiters();
    }
}

/// A ticket carried from the transport to the handler in the request's
/// extensions (which must be `Clone`); the handler takes it out.
#[derive(Clone)]
pub(super) struct Arrival(Arc<Mutex<Option<Ticket>>>);

impl Arrival {
    pub(super) fn new(ticket: Ticket) -> Self {
        Arrival(Arc::new(Mutex::new(Some(ticket))))
    }

    pub(super) fn take(&self) -> Option<Ticket> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn lanes() -> Lanes {
        Lanes::new(HashSet::from(["write_file".to_string()]))
    }

    #[tokio::test]
    async fn writes_run_in_arrival_order_even_when_handled_out_of_order() {
        let lanes = Arc::new(lanes());
        let never = CancellationToken::new();
        let first = lanes.arrive("write_file");
        let second = lanes.arrive("write_file");
        let order = Arc::new(Mutex::new(Vec::new()));
        // The second call's handler runs first; it must wait for the first.
        let late = {
            let (lanes, never, order) = (Arc::clone(&lanes), never.clone(), Arc::clone(&order));
            tokio::spawn(async move {
                let admitted = lanes.admit("write_file", second, &never).await;
                order.lock().expect("lock").push(2);
                drop(admitted);
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            order.lock().expect("lock").is_empty(),
            "the second ran first"
        );
        let admitted = lanes.admit("write_file", first, &never).await;
        order.lock().expect("lock").push(1);
        drop(admitted);
        late.await.expect("join");
        assert_eq!(*order.lock().expect("lock"), vec![1, 2]);
    }

    #[tokio::test]
    async fn an_abandoned_ticket_does_not_block_the_lane() {
        let lanes = lanes();
        let never = CancellationToken::new();
        let abandoned = lanes.arrive("write_file");
        let next = lanes.arrive("write_file");
        drop(abandoned);
        let admitted = tokio::time::timeout(
            Duration::from_secs(1),
            lanes.admit("write_file", next, &never),
        )
        .await
        .expect("admitted at once");
        assert!(admitted.is_some());
    }

    #[tokio::test]
    async fn reads_do_not_wait_for_writes_and_a_cancelled_wait_ends() {
        let lanes = lanes();
        let never = CancellationToken::new();
        let _running_write = lanes.admit("write_file", None, &never).await;
        assert!(lanes.arrive("read_file").is_none());
        assert!(lanes.admit("read_file", None, &never).await.is_some());
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(lanes.admit("write_file", None, &cancel).await.is_none());
    }

    #[tokio::test]
    async fn calls_past_the_limit_wait_for_a_slot() {
        let lanes = lanes();
        let never = CancellationToken::new();
        let mut held = Vec::new();
        for _ in 0..MAX_RUNNING {
            held.push(lanes.admit("read_file", None, &never).await);
        }
        let waiting = tokio::time::timeout(
            Duration::from_millis(50),
            lanes.admit("read_file", None, &never),
        )
        .await;
        assert!(waiting.is_err(), "a call past the limit did not wait");
        held.pop();
        assert!(lanes.admit("read_file", None, &never).await.is_some());
    }
}

//! The engine pools' call slots, and the wait for one. Every instance a call
//! or a plugin's `list-tools` makes (or takes from [`super::spare_instances`]) is made
//! while holding a [`CallSlot`]: at most [`CONCURRENT_CALLS`] at once in the
//! process, whoever asks (`run`'s batches, `chat`, every MCP client, a
//! reload), so a burst waits for a slot and never fails to instantiate for
//! want of one. Spares have slots of their own beyond these
//! ([`super::limits::POOL_SLOTS`]).
//!
//! Must not hold a slot across anything but one run: a slot held while
//! waiting for another would deadlock a full pool.

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

use super::limits::CONCURRENT_CALLS;

/// One permit per call slot of the pools ([`super::engine`]). Fair: calls
/// get slots in the order they asked, so one client's burst delays another
/// client's call by at most the calls queued before it.
static CALL_SLOTS: Semaphore = Semaphore::const_new(CONCURRENT_CALLS as usize);

/// The right to make one instance; dropping it frees the slot.
#[derive(Debug)]
pub(crate) struct CallSlot {
    _permit: SemaphorePermit<'static>,
}

impl CallSlot {
    /// Waits for a free slot; `None` when `cancel` fires first.
    pub(crate) async fn wait(cancel: &CancellationToken) -> Option<CallSlot> {
        Self::wait_on(&CALL_SLOTS, cancel).await
    }

    async fn wait_on(slots: &'static Semaphore, cancel: &CancellationToken) -> Option<CallSlot> {
        tokio::select! {
            permit = slots.acquire() => permit.ok().map(|permit| CallSlot { _permit: permit }),
            () = cancel.cancelled() => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn past_the_slots_a_call_waits_for_one_and_a_cancelled_wait_ends() {
        let slots: &'static Semaphore = Box::leak(Box::new(Semaphore::new(2)));
        let never = CancellationToken::new();
        let mut held = Vec::new();
        for _ in 0..2 {
            held.push(CallSlot::wait_on(slots, &never).await.expect("a free slot"));
        }
        let cancel = CancellationToken::new();
        let cancelled = tokio::spawn({
            let cancel = cancel.clone();
            async move { CallSlot::wait_on(slots, &cancel).await.is_some() }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
        assert!(
            !cancelled.await.expect("join"),
            "a cancelled wait got a slot"
        );
        let next =
            tokio::spawn(async move { CallSlot::wait_on(slots, &CancellationToken::new()).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!next.is_finished(), "a call past the slots did not wait");
        held.pop();
        let slot = tokio::time::timeout(Duration::from_secs(5), next)
            .await
            .expect("the freed slot went to the waiting call")
            .expect("join");
        assert!(slot.is_some());
    }
}

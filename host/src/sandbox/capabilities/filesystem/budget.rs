//! The write budget: bytes a call may write to files, charged by what a
//! change costs the disk, and the output stream that charges it.
//!
//! The budget charges what a change costs the disk, not only the bytes
//! asked for: every file, directory or link created costs at least
//! [`ENTRY_COST`] (an inode and a block), and a write past the end of a
//! file costs the size it makes (a sparse file's hole is not free to the
//! user who later copies it). Going over it traps the guest, as going over
//! the memory limit does.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use wasmtime_wasi::async_trait;
use wasmtime_wasi::p2::{DynOutputStream, OutputStream, Pollable, StreamError, StreamResult};

/// What creating one file, directory or link costs the write budget: a
/// block and an inode, so a budget of 256 MiB creates at most 65,536.
pub(crate) const ENTRY_COST: u64 = 4096;

/// Bytes a call may still write to files, shared with the streams it opens.
#[derive(Debug)]
pub(crate) struct WriteBudget {
    limit: u64,
    used: AtomicU64,
    hit: AtomicBool,
}

impl WriteBudget {
    pub(crate) fn new(limit: u64) -> Arc<Self> {
        Arc::new(WriteBudget {
            limit,
            used: AtomicU64::new(0),
            hit: AtomicBool::new(false),
        })
    }

    /// Takes `bytes` from the budget; false (and remembered) when that goes
    /// over the limit.
    pub(super) fn take(&self, bytes: u64) -> bool {
        let used = self
            .used
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        if used > self.limit {
            self.hit.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Returns what an operation that failed had taken.
    pub(super) fn give_back(&self, bytes: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                Some(used.saturating_sub(bytes))
            });
    }

    /// Whether the call tried to write past the limit.
    pub(crate) fn hit(&self) -> bool {
        self.hit.load(Ordering::Relaxed)
    }

    pub(super) fn exceeded(&self) -> wasmtime::Error {
        wasmtime::Error::msg(format!(
            "the tool tried to write more than {} bytes to files",
            self.limit
        ))
    }
}

/// A file's output stream that counts what goes through it against the
/// call's write budget.
pub(super) struct BudgetedStream {
    pub(super) inner: DynOutputStream,
    pub(super) budget: Arc<WriteBudget>,
}

/// What writing `len` bytes at `offset` of a file of `size` bytes costs:
/// the bytes, and the hole before them when `offset` is past the end.
pub(super) fn write_cost(size: u64, offset: u64, len: u64) -> u64 {
    len.saturating_add(offset.saturating_sub(size))
}

impl BudgetedStream {
    fn take(&self, bytes: usize) -> StreamResult<()> {
        if self.budget.take(bytes as u64) {
            Ok(())
        } else {
            Err(StreamError::Trap(self.budget.exceeded()))
        }
    }
}

#[async_trait]
impl OutputStream for BudgetedStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.take(bytes.len())?;
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    fn write_zeroes(&mut self, nelem: usize) -> StreamResult<()> {
        self.take(nelem)?;
        self.inner.write_zeroes(nelem)
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

#[async_trait]
impl Pollable for BudgetedStream {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime_wasi::p2::pipe::SinkOutputStream;

    #[test]
    fn the_budget_refuses_what_goes_over_it_and_remembers() {
        let budget = WriteBudget::new(10);
        assert!(budget.take(4));
        assert!(budget.take(6), "up to the limit");
        assert!(!budget.hit());
        assert!(!budget.take(1), "one byte over");
        assert!(budget.hit(), "the call is told it hit the limit");
        assert!(budget.exceeded().to_string().contains("more than 10 bytes"));
    }

    #[test]
    fn what_a_failed_operation_took_is_given_back() {
        let budget = WriteBudget::new(ENTRY_COST);
        assert!(budget.take(ENTRY_COST));
        budget.give_back(ENTRY_COST);
        assert!(budget.take(ENTRY_COST), "the entry was never made");
        assert!(!budget.take(ENTRY_COST), "a second one is over");
    }

    #[test]
    fn a_write_past_the_end_costs_the_hole_it_makes() {
        assert_eq!(write_cost(100, 0, 10), 10);
        assert_eq!(write_cost(100, 95, 10), 10, "inside the file");
        assert_eq!(write_cost(100, 1 << 30, 1), (1 << 30) - 99, "a sparse hole");
        assert_eq!(write_cost(0, u64::MAX, u64::MAX), u64::MAX, "saturates");
    }

    #[test]
    fn a_stream_traps_the_write_that_goes_over_the_budget() {
        let budget = WriteBudget::new(8);
        let mut stream = BudgetedStream {
            inner: Box::new(SinkOutputStream),
            budget: Arc::clone(&budget),
        };
        assert!(stream.write(Bytes::from_static(b"12345")).is_ok());
        assert!(matches!(
            stream.write(Bytes::from_static(b"6789")),
            Err(StreamError::Trap(_))
        ));
        assert!(matches!(
            stream.write_zeroes(100),
            Err(StreamError::Trap(_))
        ));
        assert!(budget.hit());
        let mut fresh = BudgetedStream {
            inner: Box::new(SinkOutputStream),
            budget: WriteBudget::new(8),
        };
        assert!(
            fresh.write_zeroes(8).is_ok(),
            "zeroes are bytes too, up to the limit"
        );
    }
}

//! Per-call limits and the memory limiter that enforces one of them.
//!
//! Every call (and every plugin's `list-tools` at load) runs under a
//! [`Limits`]; each field has a default in `[limits]` of `toolhost.toml` and
//! may be overridden per tool.

use std::time::Duration;

use wasmtime::ResourceLimiter;

/// What one tool call may consume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wasm fuel (about one unit per instruction). Default 10 billion,
    /// a few seconds of compute.
    pub fuel: u64,
    /// Wall-clock deadline, covering time blocked in the host (sleeps,
    /// slow disks) as well as compute. Default 30 s. Any value is safe:
    /// `tokio::time::sleep` caps a delay at about 30 years rather than
    /// overflow the clock (`timeout_ms = 18446744073709551615` is a test in
    /// `suite/trust.rs`).
    pub timeout: Duration,
    /// Bytes of linear memory across all of the instance's memories.
    /// Default 256 MiB.
    pub memory: u64,
    /// Bytes the call may return to the model. Default 1 MiB.
    pub output: usize,
    /// Bytes the call may write to files (a file grown with `set-size`
    /// counts as written). Default 256 MiB.
    pub write: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 10_000_000_000,
            timeout: Duration::from_secs(30),
            memory: 256 << 20,
            output: 1 << 20,
            write: 256 << 20,
        }
    }
}

/// Most table elements an instance may have; generous for any real plugin,
/// small enough that tables cannot stand in for unbounded memory.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// Caps the sum of all linear memories of one instance and records the peak.
///
/// wasmtime's own `StoreLimits` caps each memory separately; a plugin with
/// several memories could then use several times the limit.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    limit: u64,
    total: u64,
    pub(crate) peak: u64,
    /// Set when a growth was refused, so the resulting trap (or failure) is
    /// reported as "over the memory limit" rather than a generic crash.
    pub(crate) hit: bool,
}

impl MemoryLimiter {
    pub(crate) fn new(limit: u64) -> Self {
        MemoryLimiter {
            limit,
            total: 0,
            peak: 0,
            hit: false,
        }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grown = (desired as u64).saturating_sub(current as u64);
        let total = self.total.saturating_add(grown);
        if total > self.limit {
            self.hit = true;
            return Ok(false);
        }
        self.total = total;
        self.peak = self.peak.max(total);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_the_sum_of_all_memories() {
        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.memory_growing(0, 60, None).expect("ok"));
        // A second memory: 60 + 50 > 100.
        assert!(!limiter.memory_growing(0, 50, None).expect("ok"));
        assert!(limiter.hit);
        assert!(limiter.memory_growing(0, 40, None).expect("ok"));
        assert_eq!(limiter.peak, 100);
    }

    #[test]
    fn growth_counts_only_the_new_bytes() {
        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.memory_growing(0, 50, None).expect("ok"));
        assert!(limiter.memory_growing(50, 100, None).expect("ok"));
        assert!(!limiter.memory_growing(100, 101, None).expect("ok"));
    }

    #[test]
    fn tables_are_bounded() {
        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.table_growing(0, 10, None).expect("ok"));
        assert!(
            !limiter
                .table_growing(0, MAX_TABLE_ELEMENTS + 1, None)
                .expect("ok")
        );
    }
}

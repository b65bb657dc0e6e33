//! Per-call limits and the memory limiter that enforces one of them.
//!
//! Every call (and every plugin's `list-tools` at load) runs under a
//! [`Limits`]; each field has a default in `[limits]` of `toolhost.toml` and
//! may be overridden per tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// Bytes of network responses the call may read. Default 16 MiB.
    pub net_bytes: u64,
    /// Network requests the call may make, refused ones too. Default 64.
    pub net_requests: u64,
    /// Network connections the call may have open at once. Default 8.
    pub net_connections: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 10_000_000_000,
            timeout: Duration::from_secs(30),
            memory: 256 << 20,
            output: 1 << 20,
            write: 256 << 20,
            net_bytes: 16 << 20,
            net_requests: 64,
            net_connections: 8,
        }
    }
}

/// The tools that run the code the model writes (`toolhost plugin install
/// python`): an interpreter in wasm runs about ten times slower than
/// native, so they get more fuel (about ten seconds of interpreted work
/// instead of three) under the same 30 s deadline, and print less (the
/// model reads all of it).
pub const CODE_TOOLS: &[&str] = &["python", "javascript"];

/// The standard shell: its utilities are compiled Rust, not interpreted,
/// but one command line walks and reads whole trees (`grep -rn`, `find |
/// xargs wc -l`), so it gets the code tools' fuel; its output limit stays
/// the default, under which the shell cuts its own stdout.
pub const SHELL_TOOL: &str = "bash";

impl Limits {
    /// toolhost's own defaults for `tool`, before any config file: those
    /// of [`CODE_TOOLS`] and [`SHELL_TOOL`] differ from every other
    /// tool's.
    pub fn defaults_for(tool: &str) -> Limits {
        if CODE_TOOLS.contains(&tool) {
            Limits {
                fuel: 40_000_000_000,
                output: 256 << 10,
                ..Limits::default()
            }
        } else if tool == SHELL_TOOL {
            Limits {
                fuel: 40_000_000_000,
                ..Limits::default()
            }
        } else {
            Limits::default()
        }
    }
}

/// Bytes a plugin file may have: a bigger one is refused from its size,
/// unread, since loading reads it whole. Default 512 MiB, over 25 times
/// the biggest real plugins (12-20 MB Python and JavaScript components);
/// the user's `[limits] plugin_file_mib` changes it.
pub const DEFAULT_PLUGIN_FILE_LIMIT: u64 = 512 << 20;

/// Plugins a workspace the user has not trusted ships that one start
/// loads at most: each costs a compile (and its memory) before the first
/// prompt, and a repository can ship a hundred that differ by one byte.
/// The user's `[limits] shipped_plugins` changes it.
pub const DEFAULT_SHIPPED_PLUGINS: u64 = 16;

/// The time one start gives the loading (compiling, mostly) of every
/// plugin an untrusted workspace ships, together; `list-tools` has its own
/// budget.
pub(crate) const SHIPPED_LOAD_TOTAL: std::time::Duration = std::time::Duration::from_secs(10);

/// Bytes of a workspace's plugin files hashed after its shipped plugins'
/// budget is spent, to find the ones the user added: 64 MiB, a few
/// plugins' worth (hashing reads the whole file; a start otherwise read
/// every file the repository ships, up to the plugin file limit each).
pub(crate) const SHIPPED_HASH_AFTER_SPENT: u64 = 64 << 20;

/// Why a plugin file of `len` bytes is refused under `limit`, naming the
/// setting and the value that would let it load.
pub(crate) fn plugin_file_refusal(len: u64, limit: u64) -> String {
    format!(
        "it is {len} bytes ({} MiB), over the limit of {} on a plugin file, so toolhost did not \
         read it; if you trust it, set `plugin_file_mib = {}` under [limits] in your config.toml \
         (or a trusted workspace's toolhost.toml)",
        len.div_ceil(1 << 20),
        crate::units::bytes(limit),
        len.div_ceil(1 << 20),
    )
}

/// `error` as a user reads it; when the process is out of file
/// descriptors, with its limit and how to raise it.
pub(crate) fn open_error(error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::EMFILE) => format!(
            "{error}: toolhost has no file descriptor left (its limit, `ulimit -n`, is {}); start \
             it with a higher one, e.g. `ulimit -n 65536`",
            descriptor_limit().map_or_else(|| "unknown".to_string(), |n| n.to_string())
        ),
        Some(libc::ENFILE) => format!(
            "{error}: the system is out of file descriptors (`fs.file-max`); close other programs \
             or raise it"
        ),
        _ => error.to_string(),
    }
}

/// The process's soft limit on open descriptors (`ulimit -n`).
fn descriptor_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` into the valid pointer given.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (got == 0).then_some(limit.rlim_cur)
}

/// Calls that may run at once: each holds one slot of every pool
/// ([`super::engine`]).
pub(crate) const CONCURRENT_CALLS: u32 = 64;

/// Instances made ahead of their calls ([`super::spare_instances`]) the process may
/// hold or be making at once, each in a pool slot of its own.
pub(crate) const SPARE_INSTANCES: u32 = 4;

/// Component instances the pools have room for: the calls and the spares.
pub(crate) const POOL_SLOTS: u32 = CONCURRENT_CALLS + SPARE_INSTANCES;

/// The shape of every component, as the pools are sized for it and as the
/// limiter holds each call to it on any allocator: core instances, tables
/// and memories in all (the pools' totals, which one call could take
/// alone), one table and one memory per core module (what wasm-tools,
/// jco and componentize-py produce), and funcref tables of at most
/// 20,000 elements (wasmtime's pool default; the Python example's biggest
/// has 5,672).
pub(crate) const TOTAL_CORE_INSTANCES: u32 = POOL_SLOTS * 16;
pub(crate) const TOTAL_MEMORIES: u32 = POOL_SLOTS * 4;
pub(crate) const TOTAL_TABLES: u32 = POOL_SLOTS * 16;
pub(crate) const TABLES_PER_MODULE: u32 = 1;
pub(crate) const MEMORIES_PER_MODULE: u32 = 1;
pub(crate) const TABLE_ELEMENTS: usize = 20_000;

/// Table elements of all of one call's tables together (8 bytes of host
/// memory each): generous for any real plugin, small enough that tables
/// cannot stand in for unbounded memory, which the memory limit does not
/// count.
const TABLE_ELEMENTS_PER_CALL: usize = 1 << 20;

/// One call's memory: the bytes of its linear memories and the bytes of
/// host memory held for its guest (resources in its table: `wasi:http`
/// fields, file streams' read-ahead, ...), held together to the call's
/// memory limit, whatever holds them. Shared by the [`MemoryLimiter`] and
/// the [`HostCharge`]s of what the host holds for the guest, which give
/// their bytes back when dropped, whoever drops them.
#[derive(Debug)]
pub(crate) struct MemoryAccount {
    limit: u64,
    linear: AtomicU64,
    host: AtomicU64,
    peak: AtomicU64,
    /// Set when a growth or a charge was refused, so the resulting trap (or
    /// failure) is reported as "over the memory limit" rather than a
    /// generic crash.
    hit: AtomicBool,
}

impl MemoryAccount {
    pub(crate) fn new(limit: u64) -> Arc<MemoryAccount> {
        Arc::new(MemoryAccount {
            limit,
            linear: AtomicU64::new(0),
            host: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            hit: AtomicBool::new(false),
        })
    }

    /// Whether a growth or a charge was refused.
    pub(crate) fn hit(&self) -> bool {
        self.hit.load(Ordering::Relaxed)
    }

    /// The most bytes held at once, linear and host memory together.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Bytes the call may still take, of linear or host memory.
    pub(crate) fn room(&self) -> u64 {
        let held = self.linear.load(Ordering::Relaxed) + self.host.load(Ordering::Relaxed);
        self.limit.saturating_sub(held)
    }

    /// Adds `bytes` to `part` (linear or host) unless the call would then
    /// hold more than its limit; a refusal is recorded as the limit hit
    /// when `record`.
    fn take(&self, part: &AtomicU64, bytes: u64, record: bool) -> bool {
        if bytes == 0 {
            return true;
        }
        if bytes > self.room() {
            if record {
                self.hit.store(true, Ordering::Relaxed);
            }
            return false;
        }
        part.fetch_add(bytes, Ordering::Relaxed);
        let held = self.linear.load(Ordering::Relaxed) + self.host.load(Ordering::Relaxed);
        self.peak.fetch_max(held, Ordering::Relaxed);
        true
    }

    /// A charge of no bytes yet against this call's limit, for host memory
    /// held for its guest; see [`HostCharge::set`].
    pub(crate) fn host_charge(self: &Arc<Self>) -> HostCharge {
        HostCharge {
            account: Arc::clone(self),
            bytes: 0,
        }
    }
}

/// Host memory held for a guest, counted against its call's limit until
/// dropped (with the resource that holds it).
#[derive(Debug)]
pub(crate) struct HostCharge {
    account: Arc<MemoryAccount>,
    bytes: u64,
}

impl HostCharge {
    /// Makes the charge `bytes`: less is always allowed; more only when the
    /// call has room for the difference, else the charge stays as it was,
    /// the limit is recorded as hit and this returns false.
    pub(crate) fn set(&mut self, bytes: u64) -> bool {
        self.change(bytes, true)
    }

    /// [`HostCharge::set`] without recording a refusal as the limit hit,
    /// for a bound the caller can still narrow down.
    pub(crate) fn try_set(&mut self, bytes: u64) -> bool {
        self.change(bytes, false)
    }

    fn change(&mut self, bytes: u64, record: bool) -> bool {
        if bytes <= self.bytes {
            self.account
                .host
                .fetch_sub(self.bytes - bytes, Ordering::Relaxed);
            self.bytes = bytes;
            return true;
        }
        if !self
            .account
            .take(&self.account.host, bytes - self.bytes, record)
        {
            return false;
        }
        self.bytes = bytes;
        true
    }

    /// The bytes charged now.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The call's memory limit, for messages.
    pub(crate) fn limit(&self) -> u64 {
        self.account.limit
    }
}

impl Drop for HostCharge {
    fn drop(&mut self) {
        self.account.host.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Caps the sum of all linear memories of one instance, with the host
/// memory held for it ([`MemoryAccount`]); caps its tables (each, and all
/// together) and its core instances, tables and memories in number,
/// whichever allocator the engine uses.
///
/// wasmtime's own `StoreLimits` caps each memory separately; a plugin with
/// several memories could then use several times the limit.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    account: Arc<MemoryAccount>,
    table_elements: usize,
}

impl MemoryLimiter {
    pub(crate) fn new(account: Arc<MemoryAccount>) -> Self {
        MemoryLimiter {
            account,
            table_elements: 0,
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
        Ok(self.account.take(&self.account.linear, grown, true))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self
            .table_elements
            .saturating_add(desired.saturating_sub(current));
        if desired > TABLE_ELEMENTS || total > TABLE_ELEMENTS_PER_CALL {
            return Ok(false);
        }
        self.table_elements = total;
        Ok(true)
    }

    fn instances(&self) -> usize {
        TOTAL_CORE_INSTANCES as usize
    }

    fn tables(&self) -> usize {
        TOTAL_TABLES as usize
    }

    fn memories(&self) -> usize {
        TOTAL_MEMORIES as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_the_sum_of_all_memories() {
        let account = MemoryAccount::new(100);
        let mut limiter = MemoryLimiter::new(Arc::clone(&account));
        assert!(limiter.memory_growing(0, 60, None).expect("ok"));
        // A second memory: 60 + 50 > 100.
        assert!(!limiter.memory_growing(0, 50, None).expect("ok"));
        assert!(account.hit());
        assert!(limiter.memory_growing(0, 40, None).expect("ok"));
        assert_eq!(account.peak(), 100);
    }

    #[test]
    fn host_memory_held_for_the_guest_shares_the_limit_and_is_given_back_when_dropped() {
        let account = MemoryAccount::new(100);
        let mut limiter = MemoryLimiter::new(Arc::clone(&account));
        assert!(limiter.memory_growing(0, 60, None).expect("ok"));
        let mut charge = account.host_charge();
        assert!(charge.set(30));
        // Linear memory cannot take what the host holds for the guest...
        assert!(!limiter.memory_growing(60, 80, None).expect("ok"));
        assert!(account.hit());
        // ... nor the host what the guest's memories hold.
        let mut other = account.host_charge();
        assert!(!other.set(11));
        assert_eq!(other.bytes(), 0);
        assert!(other.set(10));
        assert_eq!((account.room(), account.peak()), (0, 100));
        // Less is always allowed; dropping gives the rest back.
        assert!(charge.set(5));
        assert_eq!(account.room(), 25);
        drop(charge);
        drop(other);
        assert_eq!(account.room(), 40);
        assert!(limiter.memory_growing(60, 100, None).expect("ok"));
    }

    #[test]
    fn growth_counts_only_the_new_bytes() {
        let mut limiter = MemoryLimiter::new(MemoryAccount::new(100));
        assert!(limiter.memory_growing(0, 50, None).expect("ok"));
        assert!(limiter.memory_growing(50, 100, None).expect("ok"));
        assert!(!limiter.memory_growing(100, 101, None).expect("ok"));
    }

    #[test]
    fn running_out_of_descriptors_names_the_limit_and_the_fix() {
        let text = open_error(&std::io::Error::from_raw_os_error(libc::EMFILE));
        let limit = descriptor_limit().expect("a limit");
        assert_eq!(
            text,
            format!(
                "Too many open files (os error 24): toolhost has no file descriptor left (its \
                 limit, `ulimit -n`, is {limit}); start it with a higher one, e.g. `ulimit -n 65536`"
            )
        );
        let other = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(open_error(&other), other.to_string());
    }

    #[test]
    fn tables_are_bounded_each_and_together() {
        let mut limiter = MemoryLimiter::new(MemoryAccount::new(100));
        assert!(limiter.table_growing(0, 10, None).expect("ok"));
        assert!(
            !limiter
                .table_growing(0, TABLE_ELEMENTS + 1, None)
                .expect("ok")
        );
        // Tables that each fit, but not all together.
        let mut grown = 10;
        while grown + TABLE_ELEMENTS <= TABLE_ELEMENTS_PER_CALL {
            assert!(limiter.table_growing(0, TABLE_ELEMENTS, None).expect("ok"));
            grown += TABLE_ELEMENTS;
        }
        assert!(!limiter.table_growing(0, TABLE_ELEMENTS, None).expect("ok"));
        // Growth counts only the new elements.
        let room = TABLE_ELEMENTS_PER_CALL - grown;
        assert!(limiter.table_growing(10, 10 + room, None).expect("ok"));
        assert!(
            !limiter
                .table_growing(10 + room, 11 + room, None)
                .expect("ok")
        );
    }
}

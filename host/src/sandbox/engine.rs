//! The process's wasmtime engines, one per compiler tier, and their epoch
//! tickers.

use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Strategy};

use super::limits;

/// How often the epoch advances. A running guest yields to the host at every
/// tick, so a deadline or a cancellation stops it within about this long.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Wasm stack available to a guest before it traps with a stack overflow.
const MAX_WASM_STACK: usize = 1 << 20;

/// Which compiler made the code a plugin runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Winch, wasmtime's baseline compiler: 7-8x faster to compile than
    /// Cranelift, slower code. A big plugin's first load runs on it while
    /// its optimized code compiles in the background.
    Baseline,
    /// Cranelift with its optimisations: what every plugin runs in the end.
    Optimized,
}

impl Tier {
    /// The name in cache entries and `toolhost tools --json`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Tier::Baseline => "baseline",
            Tier::Optimized => "optimized",
        }
    }
}

/// The process's engine for `tier`, built on first use: async (so the host
/// can drop a call that is blocked or spinning), fuel metering (a
/// deterministic compute budget) and epoch interruption (wall-clock
/// deadlines and cancellation), the same for both compilers. Engines are
/// meant to be shared; one per tier also means one ticker thread each.
pub(crate) fn engine(tier: Tier) -> wasmtime::Result<Engine> {
    static OPTIMIZED: OnceLock<Engine> = OnceLock::new();
    static BASELINE: OnceLock<Engine> = OnceLock::new();
    let slot = match tier {
        Tier::Optimized => &OPTIMIZED,
        Tier::Baseline => &BASELINE,
    };
    if let Some(engine) = slot.get() {
        return Ok(engine.clone());
    }
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK);
    // Both tiers allocate from the same pool configuration, so a component
    // is held to the same tables, instances and memories whichever compiler
    // made its code: on demand, Winch code would let a plugin's first load
    // declare gigabytes of tables that the optimized tier refuses. The
    // pool also keeps memories, tables and fiber stacks mapped between
    // calls instead of mapping and unmapping them (each unmap is a TLB
    // shootdown across cores); baseline code serves a plugin only until
    // its optimized code is in, so its pool keeps nothing resident. Where
    // the address space cannot hold a pool (a tight `ulimit -v`), fall back
    // to allocating on demand; the limiter ([`super::limits`]) still caps
    // every call's tables, instances and memories there.
    let keep_resident = match tier {
        Tier::Baseline => {
            config.strategy(Strategy::Winch);
            0
        }
        Tier::Optimized => KEEP_RESIDENT,
    };
    let mut pooled = config.clone();
    pooled.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config(
        keep_resident,
    )));
    let engine = match Engine::new(&pooled) {
        Ok(engine) => engine,
        Err(_) => Engine::new(&config)?,
    };
    Ok(slot
        .get_or_init(|| {
            start_ticker(engine.clone());
            engine
        })
        .clone())
}

/// Calls that may run at once; each holds one slot of every pool.
pub const CONCURRENT_CALLS: u32 = limits::CONCURRENT_CALLS;

/// Bytes of each memory and table a pool slot keeps resident between calls.
const KEEP_RESIDENT: usize = 16 << 20;

/// Pool sizes: room for [`CONCURRENT_CALLS`] instances of components, and the
/// spares made ahead of calls ([`limits::POOL_SLOTS`]), made of
/// up to 16 core modules (jco and componentize-py produce several), each
/// memory up to the full 4 GiB of wasm32 so the per-call memory limit, not the
/// pool, is what a tool runs into. The totals and the table size are
/// [`limits`]' constants, which the limiter also holds every call to.
fn pool_config(keep_resident: usize) -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(limits::POOL_SLOTS)
        .total_core_instances(limits::TOTAL_CORE_INSTANCES)
        .total_memories(limits::TOTAL_MEMORIES)
        .total_tables(limits::TOTAL_TABLES)
        .max_tables_per_module(limits::TABLES_PER_MODULE)
        .max_memories_per_module(limits::MEMORIES_PER_MODULE)
        .table_elements(limits::TABLE_ELEMENTS)
        .total_stacks(limits::POOL_SLOTS)
        .max_memory_size(1 << 32)
        // Reset what a call touched with memset instead of madvise, so the
        // next call in the slot takes no page faults and no TLB shootdown
        // (Linux; PAGEMAP_SCAN finds the touched pages, where the kernel
        // has it).
        .linear_memory_keep_resident(keep_resident)
        .table_keep_resident(keep_resident)
        .pagemap_scan(wasmtime::Enabled::Auto);
    pool
}

/// Advances the epoch of `engine` every [`EPOCH_TICK`] for the rest of the
/// process.
fn start_ticker(engine: Engine) {
    // If the thread cannot be spawned, deadlines still hold for calls blocked
    // in the host (they are also timed by tokio); only a spinning guest would
    // then be stopped by fuel alone.
    let _ = thread::Builder::new()
        .name("toolhost-epoch".into())
        .spawn(move || {
            loop {
                thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            }
        });
}

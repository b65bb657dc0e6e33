//! The one wasmtime engine of the process and its epoch ticker.

use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

use wasmtime::{Config, Engine};

/// How often the epoch advances. A running guest yields to the host at every
/// tick, so a deadline or a cancellation stops it within about this long.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Wasm stack available to a guest before it traps with a stack overflow.
const MAX_WASM_STACK: usize = 1 << 20;

/// The process's engine, built on first use: async (so the host can drop a
/// call that is blocked or spinning), fuel metering (a deterministic compute
/// budget) and epoch interruption (wall-clock deadlines and cancellation).
/// Engines are meant to be shared; one also means one ticker thread.
pub(crate) fn shared_engine() -> wasmtime::Result<Engine> {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    if let Some(engine) = ENGINE.get() {
        return Ok(engine.clone());
    }
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK);
    let engine = Engine::new(&config)?;
    Ok(ENGINE
        .get_or_init(|| {
            start_ticker(engine.clone());
            engine
        })
        .clone())
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

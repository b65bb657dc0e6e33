//! Measures how long wasmtime takes to compile components under each
//! candidate compiler setting, all in one run so the figures are ratios
//! against the same baseline (the investigation is in
//! docs/contributing/benchmarks-log.md#first-load-of-a-big-component-2026-12-01).
//!
//! ```text
//! cargo run --example compile_tiers -- FILE.wasm...
//! TIERS="toolhost now,winch" cargo run --example compile_tiers -- FILE.wasm...
//! ```
//!
//! Every variant keeps toolhost's engine settings (component model, fuel,
//! epoch interruption, the same wasm stack), so a variant that cannot
//! meter fuel or check epochs fails here instead of being measured.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Instant;

use wasmtime::component::Component;
use wasmtime::{Config, Engine, Module, OptLevel, RegallocAlgorithm, Store, Strategy, Trap};

/// `(module (func (export "spin") (loop (br 0))))`, assembled by hand (the
/// build has no `wat` feature).
const SPIN: &[u8] = &[
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
    0x03, 0x02, 0x01, 0x00, // func 0: type 0
    0x07, 0x08, 0x01, 0x04, b's', b'p', b'i', b'n', 0x00, 0x00, // export "spin"
    0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop { br 0 }
];

/// Whether code from `engine` still stops an endless loop by fuel and by
/// the epoch deadline: the two limits toolhost relies on.
fn limits_hold(engine: &Engine) -> String {
    let module = match Module::new(engine, SPIN) {
        Ok(module) => module,
        Err(e) => return format!("spin does not compile: {e:#}"),
    };
    let run = |fuel: u64, ticks: u64| {
        let mut store = Store::new(engine, ());
        let _ = store.set_fuel(fuel);
        store.set_epoch_deadline(ticks);
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).expect("instantiate");
        let spin = instance
            .get_typed_func::<(), ()>(&mut store, "spin")
            .expect("spin");
        let ticker = engine.clone();
        let handle = std::thread::spawn(move || {
            for _ in 0..20 {
                std::thread::sleep(std::time::Duration::from_millis(10));
                ticker.increment_epoch();
            }
        });
        let start = Instant::now();
        let err = spin.call(&mut store, ()).expect_err("an endless loop ends");
        let elapsed = start.elapsed();
        let _ = handle.join();
        (err.downcast_ref::<Trap>().copied(), elapsed)
    };
    let (fuel_trap, fuel_time) = run(50_000_000, u64::MAX);
    let (epoch_trap, epoch_time) = run(u64::MAX, 5);
    format!(
        "fuel 50M: {fuel_trap:?} after {:.0} ms; epoch deadline 5 ticks of 10 ms: {epoch_trap:?} after {:.0} ms",
        fuel_time.as_secs_f64() * 1e3,
        epoch_time.as_secs_f64() * 1e3
    )
}

fn base() -> Config {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(1 << 20);
    config
}

fn variants() -> Vec<(&'static str, Config)> {
    let mut out = Vec::new();
    out.push(("cranelift speed, parallel (toolhost now)", base()));
    let mut c = base();
    c.parallel_compilation(false);
    out.push(("cranelift speed, one thread", c));
    let mut c = base();
    c.cranelift_opt_level(OptLevel::None);
    out.push(("cranelift opt none", c));
    let mut c = base();
    c.cranelift_regalloc_algorithm(RegallocAlgorithm::SinglePass);
    out.push(("cranelift speed, single-pass regalloc", c));
    let mut c = base();
    c.cranelift_opt_level(OptLevel::None)
        .cranelift_regalloc_algorithm(RegallocAlgorithm::SinglePass);
    out.push(("cranelift opt none, single-pass regalloc", c));
    let mut c = base();
    c.strategy(Strategy::Winch);
    out.push(("winch", c));
    out
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: compile_tiers FILE.wasm...");
        std::process::exit(2);
    }
    let wanted = std::env::var("TIERS").ok();
    for (name, config) in variants() {
        if let Some(w) = &wanted
            && !w.split(',').any(|w| name.contains(w))
        {
            continue;
        }
        if let Ok(engine) = Engine::new(&config) {
            println!("limits, {name}: {}", limits_hold(&engine));
        }
    }
    for path in &files {
        let bytes = std::fs::read(path).expect("read the component");
        println!("{path} ({:.1} MB)", bytes.len() as f64 / 1e6);
        let mut baseline = None;
        for (name, config) in variants() {
            if let Some(w) = &wanted
                && !w.split(',').any(|w| name.contains(w))
            {
                continue;
            }
            let engine = match Engine::new(&config) {
                Ok(engine) => engine,
                Err(e) => {
                    println!("  {name:45} engine refused: {e:#}");
                    continue;
                }
            };
            let start = Instant::now();
            match Component::from_binary(&engine, &bytes) {
                Ok(component) => {
                    let secs = start.elapsed().as_secs_f64();
                    let size = component.serialize().map(|b| b.len()).unwrap_or(0);
                    let base = *baseline.get_or_insert(secs);
                    println!(
                        "  {name:45} {secs:7.2} s  {:5.2}x of baseline  artifact {:.1} MB",
                        secs / base,
                        size as f64 / 1e6
                    );
                }
                Err(e) => println!(
                    "  {name:45} failed after {:.2} s: {e:#}",
                    start.elapsed().as_secs_f64()
                ),
            }
        }
    }
}

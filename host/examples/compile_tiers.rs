//! Measures how long wasmtime takes to compile components under each
//! candidate compiler setting, all in one run so the figures are ratios
//! against the same baseline (issue 12, part 6).
//!
//! ```text
//! cargo run --example compile_tiers -- FILE.wasm...
//! cargo run --example compile_tiers --features bench-winch -- FILE.wasm...
//! ```
//!
//! Every variant keeps toolhost's engine settings (component model, fuel,
//! epoch interruption, the same wasm stack), so a variant that cannot
//! meter fuel or check epochs fails here instead of being measured.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Instant;

use wasmtime::component::Component;
use wasmtime::{Config, Engine, OptLevel, RegallocAlgorithm, Strategy};

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

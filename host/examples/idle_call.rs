//! How long the same sandboxed call takes back to back and after the
//! thread sat idle for a while, as it does in a server between requests
//! (the MCP overhead is measured against the bare call: BENCHMARKS.md,
//! "MCP: a tool call over stdio, and start-to-ready").
//!
//! ```text
//! cargo run --release --example idle_call            # idle 0, 50, 200, 1000, 0 us
//! cargo run --release --example idle_call -- 200     # one row (for perf stat)
//! ```
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use toolhost::sandbox::CallOptions;

#[path = "../benches/support/mod.rs"]
mod support;

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().canonicalize().expect("canonical");
    support::write_4k_file(&workspace);
    let cache = std::env::temp_dir().join("toolhost-idle-call-cache");
    let sandbox = support::load(&runtime, support::read_grant_options(&workspace, cache));
    let options = CallOptions::default();
    let input = support::READ_FILE_INPUT;
    let calls = 3000u32;
    let mut gaps: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("idle microseconds"))
        .collect();
    if gaps.is_empty() {
        gaps = vec![0, 50, 200, 1000, 0];
    }
    for gap_us in gaps {
        let mut total = Duration::ZERO;
        for _ in 0..calls {
            if gap_us > 0 {
                std::thread::sleep(Duration::from_micros(gap_us));
            }
            let started = Instant::now();
            let report = runtime.block_on(sandbox.call("read_file", input, &options));
            total += started.elapsed();
            assert!(!report.is_error(), "{}", report.model_text("read_file"));
        }
        println!(
            "idle {gap_us:>4} us before each call: Sandbox::call {:.1} us",
            total.as_secs_f64() * 1e6 / f64::from(calls)
        );
    }
}

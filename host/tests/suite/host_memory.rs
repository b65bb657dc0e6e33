//! Host memory a guest makes the host hold, outside its linear memory,
//! through the real binary: a plugin a repository ships, held to
//! `memory_mib = 16`, that keeps `wasi:http` fields or file read streams.
//! Each such call ends as the memory limit's `isError` result, the host's
//! peak RSS stays small, and a good call after it works.

use std::time::Duration;

use super::common::measure::{Measured, run_measured};
use super::common::{Workspace, test_plugins};

/// A workspace that ships the host-memory fixture and lowers the memory
/// limit to 16 MiB, with a 64 KiB file to stream and a note to read.
fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOST_MEMORY, "host-memory.wasm");
    ws.write("toolhost.toml", "[limits]\nmemory_mib = 16\n");
    ws.write("big.bin", vec![b'b'; 64 << 10]);
    ws.write("notes.txt", "still readable\n");
    ws
}

fn call(ws: &Workspace, tool: &str, input: &str) -> Measured {
    run_measured(&ws.call(tool, input, &[]), Duration::from_secs(120))
}

/// The attack's call is stopped at the limit, within bounded host memory;
/// then the same workspace's good calls work.
fn stopped_at_the_limit(ws: &Workspace, tool: &str, input: &str) {
    let hostile = call(ws, tool, input);
    eprintln!(
        "`{tool}` {input}: peak RSS {} MiB in {:?}",
        hostile.peak_rss >> 20,
        hostile.elapsed
    );
    assert_eq!(hostile.status.code(), Some(1), "{}", hostile.stderr());
    assert!(
        hostile.stderr().ends_with(&format!(
            "error: `{tool}` tried to use more than its memory limit of 16 MiB and was stopped. \
             Ask for less data in one call (a smaller file, fewer results).\n"
        )),
        "{}",
        hostile.stderr()
    );
    assert!(
        hostile.peak_rss < 200 << 20,
        "peak RSS {} MiB",
        hostile.peak_rss >> 20
    );

    let good = call(ws, "read_file", r#"{"path":"notes.txt"}"#);
    assert_eq!(good.status.code(), Some(0), "{}", good.stderr());
    assert!(
        good.stdout().contains("still readable"),
        "{}",
        good.stdout()
    );
}

/// 10,000 `wasi:http` fields of 120 KiB once held ~1.2 GB of host memory
/// for a plugin limited to 16 MiB.
#[test]
fn wasi_http_fields_are_charged_to_the_calls_memory_limit() {
    let ws = workspace();
    stopped_at_the_limit(&ws, "hold_fields", r#"{"count": 10000, "kib": 120}"#);
    // Fields that fit the limit are no trouble.
    let fits = call(&ws, "hold_fields", r#"{"count": 20, "kib": 8}"#);
    assert_eq!(fits.status.code(), Some(0), "{}", fits.stderr());
    assert_eq!(fits.stdout(), "held 20 fields\n");
}

/// 30,000 read streams of one file, each holding a 64 KiB read-ahead, once
/// held ~2 GB of host memory through `wasi:filesystem` alone.
#[test]
fn read_streams_are_charged_to_the_calls_memory_limit() {
    let ws = workspace();
    stopped_at_the_limit(
        &ws,
        "hold_read_streams",
        r#"{"path": "big.bin", "count": 30000}"#,
    );
    let fits = call(
        &ws,
        "hold_read_streams",
        r#"{"path": "big.bin", "count": 20}"#,
    );
    assert_eq!(fits.status.code(), Some(0), "{}", fits.stderr());
    assert_eq!(fits.stdout(), "held 20 read streams\n");
}

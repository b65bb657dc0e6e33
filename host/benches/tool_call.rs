//! A warm tool call through the sandbox against the cheapest alternative
//! isolation, spawning a process, both in one run so the ratio holds on any
//! machine: `read_file` of a 4 KiB file vs `cat` of the same file.
//!
//! Run: `cargo bench -p toolhost --bench tool_call`

use std::path::Path;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use toolhost::sandbox::{CallOptions, ToolOutcome};

mod support;

fn tool_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().canonicalize().expect("canonical");
    support::write_4k_file(&workspace);
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache");
    let sandbox = support::load(&runtime, support::read_grant_options(&workspace, cache));
    let options = CallOptions::default();
    let input = support::READ_FILE_INPUT;
    let warm = runtime.block_on(sandbox.call("read_file", input, &options));
    assert!(matches!(warm.outcome, ToolOutcome::Ok(ref text) if text.lines().count() == 64));

    let mut group = c.benchmark_group("read 4 KiB file");
    group.bench_function("sandboxed read_file call", |b| {
        b.to_async(&runtime)
            .iter(|| sandbox.call("read_file", input, &options));
    });
    let path = workspace.join(support::FILE);
    group.bench_function("spawn cat (baseline)", |b| {
        b.iter(|| {
            let out = Command::new("cat").arg(&path).output().expect("spawn cat");
            assert_eq!(out.stdout.len(), 4096);
        });
    });
    group.finish();
}

criterion_group!(benches, tool_call);
criterion_main!(benches);

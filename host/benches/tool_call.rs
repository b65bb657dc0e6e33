//! A warm tool call through the sandbox against the cheapest alternative
//! isolation, spawning a process, both in one run so the ratio holds on any
//! machine: `read_file` of a 4 KiB file vs `cat` of the same file.
//!
//! Run: `cargo bench -p toolhost --bench tool_call`

use std::path::Path;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use toolhost::sandbox::{
    Access, CallOptions, Grant, Policy, Sandbox, SandboxOptions, ToolOutcome, ToolPolicy,
};

fn tool_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().canonicalize().expect("canonical");
    let line = "the quick brown fox jumps over the lazy dog, 64 bytes per line.\n";
    assert_eq!(line.len(), 64);
    std::fs::write(workspace.join("file.txt"), line.repeat(64)).expect("write 4 KiB file");

    let grants = vec![Grant {
        host_path: workspace.clone(),
        guest_path: ".".into(),
        access: Access::Read,
    }];
    let sandbox = runtime
        .block_on(Sandbox::load(SandboxOptions {
            workspace: workspace.clone(),
            plugin_dirs: Vec::new(),
            plugin_files: Vec::new(),
            standard_tools: true,
            cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache")),
            tiering: Default::default(),
            protected: Vec::new(),
            typed: Default::default(),
            policy: Policy {
                defaults: ToolPolicy {
                    grants,
                    ..ToolPolicy::default()
                },
                ..Policy::default()
            },
        }))
        .expect("sandbox loads");
    let options = CallOptions::default();
    let input = r#"{"path":"file.txt"}"#;
    let warm = runtime.block_on(sandbox.call("read_file", input, &options));
    assert!(matches!(warm.outcome, ToolOutcome::Ok(ref text) if text.lines().count() == 64));

    let mut group = c.benchmark_group("read 4 KiB file");
    group.bench_function("sandboxed read_file call", |b| {
        b.to_async(&runtime)
            .iter(|| sandbox.call("read_file", input, &options));
    });
    let path = workspace.join("file.txt");
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

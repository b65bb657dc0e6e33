//! Host overhead per agent turn: everything but the model. A scripted model
//! (in memory, instant) asks for one call of a trivial tool (`echo`, a real
//! wasm plugin) per turn; the loop records the reply, runs the call in the
//! sandbox, records the result and asks again. Baseline in the same run: the
//! bare sandboxed `echo` call, so the loop's own share is visible.
//!
//! Run: `cargo bench -p toolhost --bench agent_turn`

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolhost::agent::{AgentLoop, LoopConfig, StopReason};
use toolhost::provider::Model;
use toolhost::provider::scripted::ScriptedModel;
use toolhost::sandbox::{CallOptions, Grant, Policy, Sandbox, SandboxOptions, ToolPolicy};

const TURNS: usize = 20;

fn agent_turn(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().canonicalize().expect("canonical");
    let echo = Path::new(env!("TOOLHOST_TEST_PLUGINS")).join("echo.wasm");
    let grants = vec![Grant {
        host_path: workspace.clone(),
        guest_path: ".".into(),
        writable: false,
    }];
    let sandbox = runtime
        .block_on(Sandbox::load(SandboxOptions {
            workspace: workspace.clone(),
            plugin_dirs: Vec::new(),
            plugin_files: vec![echo],
            standard_tools: true,
            cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache")),
            policy: Policy {
                defaults: ToolPolicy {
                    grants,
                    ..ToolPolicy::default()
                },
                ..Policy::default()
            },
        }))
        .expect("sandbox loads");

    // Different arguments each turn, so loop detection stays quiet.
    let mut turns: Vec<_> = (0..TURNS)
        .map(|n| json!({"tool_calls": [{"name": "echo", "arguments": {"text": format!("turn {n}")}}]}))
        .collect();
    turns.push(json!({"text": "done"}));
    let script = json!({ "turns": turns }).to_string();

    let mut group = c.benchmark_group("agent turn");
    group.bench_function(format!("{TURNS} turns, one echo call each"), |b| {
        b.to_async(&runtime).iter(|| async {
            let model = Model::Scripted(
                ScriptedModel::from_json(Path::new("bench.json"), &script).expect("script"),
            );
            let agent = AgentLoop::new(model, &sandbox, LoopConfig::default());
            let mut ledger = Vec::new();
            let stop = agent
                .run(&mut ledger, "go".into(), &CancellationToken::new())
                .await;
            assert_eq!(stop.reason, StopReason::Completed);
        });
    });
    let options = CallOptions::default();
    group.bench_function("one sandboxed echo call (baseline)", |b| {
        b.to_async(&runtime)
            .iter(|| sandbox.call("echo", r#"{"text":"turn 1"}"#, &options));
    });
    group.finish();
}

criterion_group!(benches, agent_turn);
criterion_main!(benches);

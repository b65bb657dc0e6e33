//! Host overhead per agent turn: everything but the model. A scripted model
//! (in memory, instant) asks for one call of a trivial tool (`echo`, a real
//! wasm plugin) per turn; the loop records the reply, runs the call in the
//! sandbox, records the result and asks again. Baseline in the same run: the
//! bare sandboxed `echo` call, so the loop's own share is visible. A third
//! case records the same run in a session file, as `toolhost run` does.
//!
//! Run: `cargo bench -p toolhost --bench agent_turn`

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolhost::agent::{AgentLoop, LoopConfig, StopReason};
use toolhost::provider::Model;
use toolhost::provider::scripted::ScriptedModel;
use toolhost::sandbox::{
    Access, CallOptions, FsPolicy, Grant, Policy, Sandbox, SandboxOptions, ToolPolicy,
};
use toolhost::transcript::{FORMAT_VERSION, SessionStart, SessionStore};

/// The fixture plugins' paths (`test_plugins::ECHO`), from host/test-plugins.
use toolhost_test_plugins as test_plugins;

const TURNS: usize = 20;

fn agent_turn(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().canonicalize().expect("canonical");
    let echo = PathBuf::from(test_plugins::ECHO);
    let grants = vec![Grant {
        host_path: workspace.clone(),
        guest_path: ".".into(),
        access: Access::Read,
    }];
    let sandbox = runtime
        .block_on(Sandbox::load(SandboxOptions {
            workspace: workspace.clone(),
            plugin_dirs: Vec::new(),
            plugin_files: vec![echo],
            standard_tools: true,
            cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache")),
            tiering: Default::default(),
            protected: Vec::new(),
            records: toolhost::sandbox::RecordPath::of_workspace(),
            every_repository: Default::default(),
            typed: Default::default(),
            plugin_file_limit: toolhost::sandbox::DEFAULT_PLUGIN_FILE_LIMIT,
            ca_file: None,
            shipped_plugins: None,
            policy: Policy {
                defaults: ToolPolicy {
                    fs: FsPolicy {
                        grants,
                        ..FsPolicy::default()
                    },
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
    let sessions = tempfile::tempdir().expect("temp dir");
    let start = SessionStart {
        format: FORMAT_VERSION,
        id: String::new(),
        at: String::new(),
        toolhost: "bench".into(),
        resumed: false,
        workspace: workspace.display().to_string(),
        provider: "scripted".into(),
        model: None,
        base_url: None,
        system_prompt: String::new(),
        max_turns: 100,
        result_budget_bytes: None,
        tools: Vec::new(),
        continues: None,
        project_instructions: None,
        context_window: None,
        prices: None,
    };
    let writer = Arc::new(
        SessionStore::new(sessions.path().to_path_buf())
            .create(start)
            .expect("session file"),
    );
    group.bench_function(
        format!("{TURNS} turns, one echo call each, recorded in a session file"),
        |b| {
            b.to_async(&runtime).iter(|| async {
                let model = Model::Scripted(
                    ScriptedModel::from_json(Path::new("bench.json"), &script).expect("script"),
                );
                let agent = AgentLoop::new(model, &sandbox, LoopConfig::default())
                    .with_events(writer.sink());
                let mut ledger = Vec::new();
                let stop = agent
                    .run(&mut ledger, "go".into(), &CancellationToken::new())
                    .await;
                assert_eq!(stop.reason, StopReason::Completed);
            });
        },
    );
    assert_eq!(writer.error(), None);
    let options = CallOptions::default();
    group.bench_function("one sandboxed echo call (baseline)", |b| {
        b.to_async(&runtime)
            .iter(|| sandbox.call("echo", r#"{"text":"turn 1"}"#, &options));
    });
    group.finish();
}

criterion_group!(benches, agent_turn);
criterion_main!(benches);

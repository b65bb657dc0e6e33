//! Instances made ahead of their calls (`sandbox/spare_instances.rs`), with the
//! threshold at zero so every tool keeps one: start code that reaches the
//! host never runs outside a call, a call on a spare reads through its own
//! grants, and what making the spare spent counts against that call.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toolhost::sandbox::{
    Access, CallOptions, CallReport, FsPolicy, Grant, Policy, Sandbox, SandboxOptions, Tiering,
    ToolOutcome, ToolPolicy,
};

use super::common::{fixture, shared_cache, test_plugins};

/// Long enough for a spare of a small plugin to be made in the background.
const SETTLE: Duration = Duration::from_millis(500);

/// A sandbox over `workspace` (every tool may write it) with the standard
/// tools and `plugin`, keeping a spare of every tool.
async fn load(workspace: &Path, plugin: Option<&str>) -> Sandbox {
    let sandbox = Sandbox::load(SandboxOptions {
        workspace: workspace.to_path_buf(),
        plugin_dirs: Vec::new(),
        plugin_files: plugin.map(fixture).into_iter().collect(),
        standard_tools: true,
        cache_dir: Some(shared_cache()),
        tiering: Tiering {
            spares_after: Some(Duration::ZERO),
            ..Tiering::default()
        },
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
                    grants: vec![Grant {
                        host_path: workspace.to_path_buf(),
                        guest_path: ".".into(),
                        access: Access::Write,
                    }],
                    ..FsPolicy::default()
                },
                ..ToolPolicy::default()
            },
            per_tool: Default::default(),
        },
    })
    .await
    .expect("sandbox loads");
    assert!(
        sandbox.load_errors().is_empty(),
        "{:?}",
        sandbox.load_errors()
    );
    sandbox
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().canonicalize().expect("canonical");
    (dir, path)
}

async fn call(sandbox: &Sandbox, tool: &str, input: serde_json::Value) -> CallReport {
    sandbox
        .call(tool, &input.to_string(), &CallOptions::default())
        .await
}

/// The attack: a plugin whose start code writes a file. Made ahead of a
/// call with the tool's grants, it would write with no call at all; made
/// without them, its calls would run an instance that could not write.
/// Before the rule, a spare with grants left one line more than calls.
#[tokio::test(flavor = "multi_thread")]
async fn start_code_that_reaches_the_host_runs_only_inside_its_calls() {
    let (_dir, ws) = workspace();
    let sandbox = load(&ws, Some(test_plugins::START_CODE)).await;
    let log = ws.join("start-code.log");
    for calls in 1..=4 {
        let report = call(&sandbox, "start_code", serde_json::json!({})).await;
        assert_eq!(report.outcome, ToolOutcome::Ok("wrote".into()));
        assert!(!report.stats.ahead, "call {calls} ran on a spare");
        tokio::time::sleep(SETTLE).await;
        assert_eq!(
            fs::read_to_string(&log).expect("log"),
            "instantiated\n".repeat(calls),
            "after call {calls}"
        );
    }
}

/// The first call after `first` that ran on a spare: the spare is made on
/// a thread at the lowest priority, which a busy machine may hold back.
async fn call_on_a_spare(sandbox: &Sandbox, tool: &str, input: serde_json::Value) -> CallReport {
    for _ in 0..40 {
        tokio::time::sleep(SETTLE).await;
        let report = call(sandbox, tool, input.clone()).await;
        if report.stats.ahead {
            return report;
        }
    }
    panic!("no call of `{tool}` ran on a spare in 20 s");
}

/// A call on a spare reads through its own grants (the spare was made
/// with none), answers as a fresh instance does, and spends the same fuel:
/// what its start code spent ahead counts against it.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_on_a_spare_answers_and_spends_as_a_fresh_instance_does() {
    let (_dir, ws) = workspace();
    fs::write(ws.join("notes.txt"), "one\ntwo\n").expect("write notes");
    let sandbox = load(&ws, None).await;
    let input = serde_json::json!({"path": "notes.txt"});
    let fresh = call(&sandbox, "read_file", input.clone()).await;
    assert!(!fresh.stats.ahead);
    let ahead = call_on_a_spare(&sandbox, "read_file", input).await;
    assert_eq!(ahead.outcome, fresh.outcome);
    assert_eq!(
        ahead.outcome,
        ToolOutcome::Ok("     1\tone\n     2\ttwo\n".into())
    );
    assert_eq!(ahead.stats.fuel_used, fresh.stats.fuel_used);
}

/// The attack: a spare's WASI context built when the spare was made, right
/// after the previous call ended, would give the next call a monotonic
/// clock that has counted since then: reading it against the wall clock
/// tells each call when the last one ended, state that outlives a call.
/// Before the rule the reading was the pause between the calls.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_on_a_spare_reads_a_clock_that_started_with_it() {
    let (_dir, ws) = workspace();
    let sandbox = load(&ws, Some(test_plugins::CLOCK)).await;
    let reading = |report: &CallReport| match &report.outcome {
        ToolOutcome::Ok(text) => Duration::from_nanos(text.parse().expect("nanoseconds")),
        other => panic!("expected a reading, got {other:?}"),
    };
    let fresh = call(&sandbox, "clock", serde_json::json!({})).await;
    assert!(reading(&fresh) < SETTLE, "{:?}", reading(&fresh));
    let ahead = call_on_a_spare(&sandbox, "clock", serde_json::json!({})).await;
    assert!(reading(&ahead) < SETTLE, "{:?}", reading(&ahead));
}

//! Tiered compilation: a plugin loaded with baseline (Winch) code is held to
//! every limit as it is with Cranelift's, and its optimized code replaces
//! the baseline code in the running sandbox and in the cache.
//!
//! `baseline_min_bytes: Some(0)` sends every plugin through the baseline
//! compiler, so the small hostile fixture exercises what a 19 MB Python
//! component does on its first load. Each sandbox has its own cache, so no
//! other test's compile decides which code a test runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use toolhost::sandbox::{
    Access, CacheStatus, CallOptions, DEFAULT_PLUGIN_FILE_LIMIT, FsPolicy, Grant, Limits,
    PluginOrigin, Policy, Sandbox, SandboxOptions, Tier, Tiering, ToolFault, ToolOutcome,
    ToolPolicy, compile_optimized,
};

use super::common::{fault, fixture, limits, test_plugins};

struct Tiered {
    root: tempfile::TempDir,
    sandbox: Sandbox,
}

impl Tiered {
    fn cache(&self) -> PathBuf {
        self.root.path().join("cache")
    }

    fn tier_of(&self, tool: &str) -> Tier {
        self.sandbox
            .tier(self.sandbox.tool(tool).expect("tool is loaded"))
    }

    async fn call(&self, tool: &str, input: &str) -> toolhost::sandbox::CallReport {
        self.sandbox
            .call(tool, input, &CallOptions::default())
            .await
    }

    /// Waits (up to two minutes: a 2-core CI machine running other tests)
    /// for the background compile.
    async fn wait_optimized(&self) {
        tokio::time::timeout(Duration::from_secs(120), self.sandbox.optimized())
            .await
            .expect("the optimized compile ends within two minutes");
    }
}

/// A sandbox of `plugin` on baseline code; with `optimize`, its optimized
/// code compiles in the background as in `run` and `mcp`.
async fn load(root: &Path, plugin: &str, per_tool: &[(&str, Limits)], optimize: bool) -> Sandbox {
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace).expect("mkdir ws");
    let workspace = workspace.canonicalize().expect("canonical ws");
    let grant = Grant {
        host_path: workspace.clone(),
        guest_path: ".".into(),
        access: Access::Read,
    };
    let per_tool: BTreeMap<String, ToolPolicy> = per_tool
        .iter()
        .map(|(name, limits)| {
            let policy = ToolPolicy {
                fs: FsPolicy {
                    grants: vec![grant.clone()],
                    ..FsPolicy::default()
                },
                limits: *limits,
                ..ToolPolicy::default()
            };
            (name.to_string(), policy)
        })
        .collect();
    let sandbox = Sandbox::load(SandboxOptions {
        workspace: workspace.clone(),
        plugin_dirs: Vec::new(),
        plugin_files: vec![fixture(plugin)],
        standard_tools: false,
        cache_dir: Some(root.join("cache")),
        tiering: Tiering {
            baseline_min_bytes: Some(0),
            optimize_in_background: optimize,
            compile_after_exit: true,
            spares_after: None,
        },
        protected: Vec::new(),
        records: toolhost::sandbox::RecordPath::of_workspace(),
        every_repository: Default::default(),
        typed: Default::default(),
        plugin_file_limit: DEFAULT_PLUGIN_FILE_LIMIT,
        ca_file: None,
        shipped_plugins: None,
        policy: Policy {
            defaults: ToolPolicy {
                fs: FsPolicy {
                    grants: vec![grant],
                    ..FsPolicy::default()
                },
                ..ToolPolicy::default()
            },
            per_tool,
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

async fn tiered(plugin: &str, per_tool: &[(&str, Limits)]) -> Tiered {
    let root = tempfile::tempdir().expect("temp root");
    let sandbox = load(root.path(), plugin, per_tool, true).await;
    let tiered = Tiered { root, sandbox };
    let first = &tiered.sandbox.tools()[0];
    assert_eq!(tiered.sandbox.tier(first), Tier::Baseline);
    assert_eq!(first.cache, CacheStatus::Miss);
    tiered
}

/// The cache entries of `tier`.
fn entries(cache: &Path, tier: &str) -> Vec<String> {
    std::fs::read_dir(cache)
        .expect("read cache")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".cwasm") && name.contains(&format!("-{tier}-")))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn baseline_code_runs_out_of_fuel() {
    let s = tiered(
        test_plugins::HOSTILE,
        &[("spin", limits(|l| l.fuel = 20_000_000))],
    )
    .await;
    assert_eq!(s.tier_of("spin"), Tier::Baseline);
    let report = s.call("spin", "{}").await;
    assert_eq!(fault(&report), &ToolFault::OutOfFuel { fuel: 20_000_000 });
}

#[tokio::test(flavor = "multi_thread")]
async fn baseline_code_spinning_is_stopped_at_its_deadline() {
    let s = tiered(
        test_plugins::HOSTILE,
        &[(
            "spin",
            limits(|l| {
                l.fuel = u64::MAX;
                l.timeout = Duration::from_millis(300);
            }),
        )],
    )
    .await;
    let start = Instant::now();
    let report = s.call("spin", "{}").await;
    assert_eq!(
        fault(&report),
        &ToolFault::Timeout {
            limit: Duration::from_millis(300)
        }
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "took {:?}",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn baseline_code_is_cancelled_within_a_tick() {
    let s = tiered(
        test_plugins::HOSTILE,
        &[(
            "spin",
            limits(|l| {
                l.fuel = u64::MAX;
                l.timeout = Duration::from_secs(60);
            }),
        )],
    )
    .await;
    let options = CallOptions::default();
    let cancel = options.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let start = Instant::now();
    let report = s.sandbox.call("spin", "{}", &options).await;
    assert_eq!(fault(&report), &ToolFault::Cancelled);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "took {:?}",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn baseline_code_hits_the_memory_limit_and_overflows_its_stack_as_a_crash() {
    let s = tiered(
        test_plugins::HOSTILE,
        &[("alloc", limits(|l| l.memory = 32 << 20))],
    )
    .await;
    let report = s.call("alloc", "{}").await;
    assert_eq!(fault(&report), &ToolFault::MemoryLimit { limit: 32 << 20 });
    let report = s.call("stack_overflow", "{}").await;
    let ToolFault::Trap { message } = fault(&report) else {
        panic!("expected a trap: {report:?}")
    };
    assert!(message.starts_with("stack overflow"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn optimized_code_replaces_the_baseline_in_the_sandbox_and_the_cache() {
    let s = tiered(
        test_plugins::HOSTILE,
        &[("spin", limits(|l| l.fuel = 20_000_000))],
    )
    .await;
    assert_eq!(entries(&s.cache(), "baseline").len(), 1);
    s.wait_optimized().await;
    assert_eq!(s.tier_of("spin"), Tier::Optimized);
    let report = s.call("spin", "{}").await;
    assert_eq!(fault(&report), &ToolFault::OutOfFuel { fuel: 20_000_000 });
    let report = s.call("huge_output", r#"{"bytes": 5}"#).await;
    assert_eq!(report.outcome, ToolOutcome::Ok("xxxxx".into()));
    assert_eq!(entries(&s.cache(), "optimized").len(), 1);
    assert!(
        entries(&s.cache(), "baseline").is_empty(),
        "the baseline entry is removed once the optimized one is stored"
    );

    // The next start loads the optimized code and compiles nothing.
    let again = load(s.root.path(), test_plugins::HOSTILE, &[], true).await;
    let tool = again.tool("spin").expect("spin");
    assert_eq!(tool.cache, CacheStatus::Hit);
    assert_eq!(again.tier(tool), Tier::Optimized);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_typed_component_keeps_its_functions_across_the_swap() {
    let s = tiered(test_plugins::TYPED, &[]).await;
    let add = r#"{"a": 40, "b": 2}"#;
    assert_eq!(
        s.call("add", add).await.outcome,
        ToolOutcome::Ok("42".into())
    );
    s.wait_optimized().await;
    assert_eq!(s.tier_of("add"), Tier::Optimized);
    assert_eq!(
        s.call("add", add).await.outcome,
        ToolOutcome::Ok("42".into())
    );
    let report = s.call("echo_floats", r#"{"a": 1.5, "b": -2}"#).await;
    assert_eq!(report.outcome, ToolOutcome::Ok("[1.5,-2.0]".into()));
}

/// What a command that exits before the optimized compile leaves to the
/// background `toolhost`: the plugins still on baseline code, which
/// `compile_optimized` compiles into the cache (removing the baseline
/// entry), so the next start loads optimized code.
#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_left_on_baseline_code_is_compiled_into_the_cache_for_the_next_start() {
    let root = tempfile::tempdir().expect("temp root");
    let cache = root.path().join("cache");
    let sandbox = load(root.path(), test_plugins::ECHO, &[], false).await;
    let unfinished = sandbox.unfinished().expect("echo runs baseline code");
    assert_eq!(unfinished.cache_dir, cache);
    assert_eq!(
        unfinished.plugins,
        vec![PluginOrigin::File(fixture(test_plugins::ECHO))]
    );
    assert_eq!(entries(&cache, "baseline").len(), 1);

    let failures = compile_optimized(
        &unfinished.cache_dir,
        &unfinished.plugins,
        unfinished.file_limit,
    );
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(entries(&cache, "optimized").len(), 1);
    assert!(entries(&cache, "baseline").is_empty());
    // Asked again (a second command's background process): nothing to do.
    assert!(compile_optimized(&cache, &unfinished.plugins, unfinished.file_limit).is_empty());

    let again = load(root.path(), test_plugins::ECHO, &[], false).await;
    let tool = again.tool("echo").expect("echo");
    assert_eq!(
        (tool.cache, again.tier(tool)),
        (CacheStatus::Hit, Tier::Optimized)
    );
    assert!(again.unfinished().is_none());

    // A file that changed into something no load would take is refused as
    // a load refuses it, before any compile.
    let text = root.path().join("changed.wasm");
    std::fs::write(&text, "not wasm").expect("write");
    let failures = compile_optimized(
        &cache,
        &[PluginOrigin::File(text.clone())],
        DEFAULT_PLUGIN_FILE_LIMIT,
    );
    assert_eq!(
        failures,
        vec![format!(
            "plugin `{}`: not a WebAssembly file (it does not start with the `\\0asm` magic bytes)",
            text.display()
        )]
    );

    // A plugin that cannot be read is reported, not compiled.
    let gone = root.path().join("gone.wasm");
    let failures = compile_optimized(
        &cache,
        &[PluginOrigin::File(gone.clone())],
        DEFAULT_PLUGIN_FILE_LIMIT,
    );
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].starts_with(&format!("plugin `{}`: cannot read it", gone.display())),
        "{failures:?}"
    );
}

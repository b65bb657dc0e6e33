//! The hostile-plugin suite, in one process: every attack ends as its
//! documented `isError` outcome, nothing outside the grants is read or
//! changed, and the next call to a good tool in the same sandbox succeeds.

use std::collections::BTreeMap;
use std::fs;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use toolhost::sandbox::{
    Access, CallOptions, CallReport, FsPolicy, Grant, Limits, Policy, Sandbox, SandboxOptions,
    ToolFault, ToolOutcome, ToolPolicy,
};

use super::common::{fault, fixture, limits, shared_cache, test_plugins};

/// A workspace inside a temp root that also holds a secret next to it.
struct Setup {
    _root: tempfile::TempDir,
    workspace: std::path::PathBuf,
    secret: std::path::PathBuf,
    sandbox: Sandbox,
}

const SECRET: &str = "TOP-SECRET-CONTENT";

fn grant(workspace: &Path, guest: &str, access: Access) -> Grant {
    Grant {
        host_path: workspace.join(guest),
        guest_path: guest.into(),
        access,
    }
}

async fn setup(per_tool: &[(&str, Limits)]) -> Setup {
    let root = tempfile::tempdir().expect("temp root");
    let root_path = root.path().canonicalize().expect("canonical root");
    let workspace = root_path.join("ws");
    fs::create_dir_all(workspace.join("out")).expect("mkdir out");
    fs::create_dir_all(workspace.join("docs")).expect("mkdir docs");
    fs::write(workspace.join("readme.txt"), "hello from the workspace\n").expect("write readme");
    fs::write(workspace.join("keep.txt"), "original").expect("write keep");
    let secret = root_path.join("secret.txt");
    fs::write(&secret, SECRET).expect("write secret");
    std::os::unix::fs::symlink(&secret, workspace.join("link-out")).expect("symlink");

    let plugins = root_path.join("plugins");
    fs::create_dir_all(&plugins).expect("mkdir plugins");
    fs::copy(fixture(test_plugins::HOSTILE), plugins.join("hostile.wasm")).expect("copy hostile");

    // Every tool: read `.`, write `out` only.
    let grants = vec![
        grant(&workspace, ".", Access::Read),
        grant(&workspace, "out", Access::Write),
    ];
    let defaults = ToolPolicy {
        fs: FsPolicy {
            grants: grants.clone(),
            ..FsPolicy::default()
        },
        ..ToolPolicy::default()
    };
    let per_tool: BTreeMap<String, ToolPolicy> = per_tool
        .iter()
        .map(|(name, limits)| {
            (
                name.to_string(),
                ToolPolicy {
                    fs: FsPolicy {
                        grants: grants.clone(),
                        ..FsPolicy::default()
                    },
                    limits: *limits,
                    ..ToolPolicy::default()
                },
            )
        })
        .collect();
    let sandbox = Sandbox::load(SandboxOptions {
        workspace: workspace.clone(),
        plugin_dirs: vec![plugins],
        plugin_files: Vec::new(),
        standard_tools: true,
        cache_dir: Some(shared_cache()),
        tiering: Default::default(),
        protected: Vec::new(),
        records: toolhost::sandbox::RecordPath::of_workspace(),
        every_repository: Default::default(),
        typed: Default::default(),
        plugin_file_limit: toolhost::sandbox::DEFAULT_PLUGIN_FILE_LIMIT,
        ca_file: None,
        shipped_plugins: None,
        policy: Policy { defaults, per_tool },
    })
    .await
    .expect("sandbox loads");
    assert!(
        sandbox.load_errors().is_empty(),
        "{:?}",
        sandbox.load_errors()
    );
    Setup {
        _root: root,
        workspace,
        secret,
        sandbox,
    }
}

impl Setup {
    async fn call(&self, tool: &str, input: serde_json::Value) -> CallReport {
        self.sandbox
            .call(tool, &input.to_string(), &CallOptions::default())
            .await
    }

    /// The host survived: a good tool in the same sandbox still works.
    async fn assert_still_works(&self) {
        let report = self
            .call("read_file", serde_json::json!({"path": "readme.txt"}))
            .await;
        assert_eq!(
            report.outcome,
            ToolOutcome::Ok("     1\thello from the workspace\n".into())
        );
    }

    fn assert_untouched(&self) {
        assert_eq!(fs::read_to_string(&self.secret).expect("secret"), SECRET);
        assert_eq!(
            fs::read_to_string(self.workspace.join("keep.txt")).expect("keep"),
            "original"
        );
    }
}

fn failed_text(report: &CallReport) -> &str {
    match fault(report) {
        ToolFault::Failed(text) => text,
        other => panic!("expected failed, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_loop_runs_out_of_fuel() {
    let s = setup(&[("spin", limits(|l| l.fuel = 20_000_000))]).await;
    let report = s.call("spin", serde_json::json!({})).await;
    assert_eq!(fault(&report), &ToolFault::OutOfFuel { fuel: 20_000_000 });
    assert!(
        report
            .outcome
            .model_text("spin")
            .contains("ran out of fuel")
    );
    assert!(report.stats.fuel_used >= 20_000_000);
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spinning_tool_is_stopped_at_its_deadline() {
    let timeout = Duration::from_millis(300);
    let s = setup(&[(
        "spin",
        limits(|l| {
            l.fuel = u64::MAX;
            l.timeout = timeout;
        }),
    )])
    .await;
    let start = Instant::now();
    let report = s.call("spin", serde_json::json!({})).await;
    assert_eq!(fault(&report), &ToolFault::Timeout { limit: timeout });
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "took {:?}",
        start.elapsed()
    );
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_blocked_in_a_sleep_is_stopped_at_its_deadline() {
    let timeout = Duration::from_millis(300);
    let s = setup(&[("sleep", limits(|l| l.timeout = timeout))]).await;
    let start = Instant::now();
    let report = s.call("sleep", serde_json::json!({"ms": 60_000})).await;
    assert_eq!(fault(&report), &ToolFault::Timeout { limit: timeout });
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "took {:?}",
        start.elapsed()
    );
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancellation_stops_a_running_tool_within_a_tick() {
    let s = setup(&[(
        "spin",
        limits(|l| {
            l.fuel = u64::MAX;
            l.timeout = Duration::from_secs(60);
        }),
    )])
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
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn endless_allocation_hits_the_memory_limit() {
    let s = setup(&[("alloc", limits(|l| l.memory = 32 << 20))]).await;
    let report = s.call("alloc", serde_json::json!({})).await;
    assert_eq!(fault(&report), &ToolFault::MemoryLimit { limit: 32 << 20 });
    assert!(report.stats.peak_memory <= 32 << 20);
    assert!(
        report
            .outcome
            .model_text("alloc")
            .contains("memory limit of 32 MiB")
    );
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn huge_output_hits_the_output_limit() {
    let s = setup(&[("huge_output", limits(|l| l.output = 1024))]).await;
    let report = s
        .call("huge_output", serde_json::json!({"bytes": 5000}))
        .await;
    assert_eq!(
        fault(&report),
        &ToolFault::OutputLimit {
            bytes: 5000,
            limit: 1024
        }
    );
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panic_is_a_crash_with_the_panic_message() {
    let s = setup(&[]).await;
    let report = s.call("panic", serde_json::json!({})).await;
    let ToolFault::Trap { message } = fault(&report) else {
        panic!("expected a trap: {report:?}")
    };
    assert!(
        message.contains("hostile plugin panicked on purpose"),
        "{message}"
    );
    assert!(
        report
            .outcome
            .model_text("panic")
            .starts_with("error: `panic` crashed:")
    );
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stack_overflow_is_a_crash() {
    let s = setup(&[]).await;
    let report = s.call("stack_overflow", serde_json::json!({})).await;
    let ToolFault::Trap { message } = fault(&report) else {
        panic!("expected a trap: {report:?}")
    };
    assert!(message.starts_with("stack overflow"), "{message}");
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn escapes_through_dotdot_absolute_paths_and_symlinks_fail() {
    let s = setup(&[]).await;
    let secret = s.secret.display().to_string();
    for path in [
        "../secret.txt",
        secret.as_str(),
        "link-out",
        "out/../../secret.txt",
    ] {
        let report = s.call("read_path", serde_json::json!({"path": path})).await;
        let text = failed_text(&report);
        assert!(!text.contains(SECRET), "{path}: {text}");
        // The model is told which directories the tool may use.
        let model = report.outcome.model_text("read_path");
        assert!(
            model.contains("`.` (read-only), `out` (read-write)"),
            "{path}: {model}"
        );
    }
    s.assert_untouched();
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_outside_write_grants_fail_and_change_nothing() {
    let s = setup(&[]).await;
    let outside = s.secret.display().to_string();
    // In a read-only grant: the guard's refusal says where it may write.
    for path in ["keep.txt", "docs/new.txt"] {
        let report = s
            .call("write_path", serde_json::json!({"path": path}))
            .await;
        assert_eq!(
            report.outcome.model_text("write_path"),
            format!(
                "error: access denied: `write_path` may not write `{path}`: it is outside the \
                 directories this tool may write: `out` (read-write). Use a path inside one of \
                 them."
            )
        );
    }
    // Outside every grant: the guest's own failure.
    for path in ["../secret.txt", outside.as_str(), "link-out"] {
        let report = s
            .call("write_path", serde_json::json!({"path": path}))
            .await;
        failed_text(&report);
    }
    let report = s
        .call("truncate_only", serde_json::json!({"path": "keep.txt"}))
        .await;
    assert_eq!(
        report.outcome.model_text("truncate_only"),
        "error: access denied: `truncate_only` may not write `keep.txt`: it is outside the \
         directories this tool may write: `out` (read-write). Use a path inside one of them."
    );
    assert!(!s.workspace.join("docs/new.txt").exists());
    s.assert_untouched();

    // The write grant itself works.
    let report = s
        .call("write_path", serde_json::json!({"path": "out/new.txt"}))
        .await;
    assert_eq!(report.outcome, ToolOutcome::Ok("wrote".into()));
    assert_eq!(
        fs::read_to_string(s.workspace.join("out/new.txt")).expect("written"),
        "pwned"
    );
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_environment_variables_are_visible() {
    let s = setup(&[]).await;
    let report = s.call("env", serde_json::json!({})).await;
    assert_eq!(report.outcome, ToolOutcome::Ok("0 vars: ".into()));
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sockets_and_name_lookup_are_denied() {
    let s = setup(&[]).await;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr").to_string();
    let report = s.call("socket", serde_json::json!({"addr": addr})).await;
    failed_text(&report);
    assert!(
        listener.accept().is_err(),
        "the plugin must not have connected"
    );

    let report = s
        .call("lookup", serde_json::json!({"host": "localhost"}))
        .await;
    failed_text(&report);
    s.assert_still_works().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn chatty_output_is_captured_bounded_and_kept_from_the_model() {
    let s = setup(&[]).await;
    let report = s.call("print", serde_json::json!({"bytes": 1 << 20})).await;
    assert_eq!(report.outcome, ToolOutcome::Ok("printed".into()));
    assert_eq!(
        report.captured.stdout.len(),
        toolhost::sandbox::CAPTURE_LIMIT
    );
    assert_eq!(
        report.captured.stderr.len(),
        toolhost::sandbox::CAPTURE_LIMIT
    );
    assert_eq!(
        report.captured.dropped,
        2 * ((1 << 20) - toolhost::sandbox::CAPTURE_LIMIT as u64)
    );
    s.assert_still_works().await;
}

/// A FIFO (or a device) in a grant: opening it for reading blocks until a
/// writer comes, in the host thread running the call, so no deadline could
/// end the call. The guard refuses to open anything but files and
/// directories, and the call ends at once with a text saying why. (The call
/// runs on a thread of its own, so that a regression fails here instead of
/// hanging the suite.)
#[test]
fn a_fifo_in_a_grant_is_refused_instead_of_blocking_the_call() {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(async {
            let s = setup(&[("read_path", limits(|l| l.timeout = Duration::from_secs(2)))]).await;
            let fifo = s.workspace.join("docs/pipe");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .expect("run mkfifo");
            assert!(made.success(), "mkfifo {}", fifo.display());
            let start = Instant::now();
            let report = s
                .call("read_path", serde_json::json!({"path": "docs/pipe"}))
                .await;
            let took = start.elapsed();
            let works = s
                .call("read_file", serde_json::json!({"path": "readme.txt"}))
                .await;
            let _ = done.send((report, took, works));
        });
    });
    let (report, took, works) = result
        .recv_timeout(Duration::from_secs(30))
        .expect("the call ends instead of blocking on the FIFO");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(
        matches!(fault(&report), ToolFault::FsDenied(_)),
        "{report:?}"
    );
    let text = report.outcome.model_text("read_path");
    assert!(
        text.contains("`docs/pipe`") && text.contains("FIFO"),
        "{text}"
    );
    assert!(!works.is_error(), "{works:?}");
}

//! What the commands load before they work: the configuration resolved and
//! the sandbox loaded (with its problems told), the session store, and the
//! Ctrl+C handler.

use std::path::{Path, PathBuf};

use super::exit;
use super::flags::SandboxArgs;
use super::render;
use crate::config;
use crate::sandbox::Sandbox;
use crate::transcript::SessionStore;

/// The session directory: `--session-dir`, else the workspace's.
pub(super) fn session_store(dir: Option<&PathBuf>, workspace: &Path) -> SessionStore {
    match dir {
        Some(dir) => SessionStore::new(dir.clone()),
        None => SessionStore::in_workspace(workspace),
    }
}

/// First Ctrl+C cancels the run (the model request and running tools stop
/// within one epoch tick); a second one exits at once.
pub(super) fn spawn_ctrl_c_handler(cancel: tokio_util::sync::CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        cancel.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(exit::ABORTED));
        }
    });
}

/// Resolves the configuration and loads the sandbox. With `only_file`, the
/// plugin directories are replaced by that one file (for `plugin check`).
/// These commands exit right after: a plugin loaded with baseline code
/// keeps it rather than starting an optimized compile the exit would throw
/// away; the command leaves that compile to a background process
/// ([`background::hand_off`]).
pub(super) async fn load_sandbox(
    args: &SandboxArgs,
    only_file: Option<&PathBuf>,
) -> anyhow::Result<Sandbox> {
    let mut resolved = config::resolve(&args.inputs())?;
    resolved.new_dirs.create()?;
    resolved.sandbox.tiering.optimize_in_background = false;
    load_resolved(resolved, only_file).await
}

/// Loads the sandbox of an already resolved configuration.
pub(super) async fn load_resolved(
    resolved: config::Resolved,
    only_file: Option<&PathBuf>,
) -> anyhow::Result<Sandbox> {
    let config::Resolved {
        sandbox: mut options,
        notices,
        ..
    } = resolved;
    if let Some(file) = only_file {
        options.plugin_dirs = Vec::new();
        options.plugin_files = vec![file.clone()];
    }
    let policy = options.policy.clone();
    let progress = render::CompileProgress::new();
    let sandbox = Sandbox::load_with_progress(options, &|event| progress.event(event)).await?;
    if only_file.is_none() {
        let mut warnings = notices;
        warnings.extend(config::unknown_tool_warnings(
            &policy,
            sandbox.tools().iter().map(|t| t.name.as_str()),
        ));
        render::load_problems(&sandbox, &warnings);
    } else {
        render::warnings(&notices);
    }
    Ok(sandbox)
}

//! Hot reload: while the server runs, a `.wasm` added to, replaced in or
//! removed from a plugins directory is picked up. The directories are
//! polled (no watcher thread or crate, and the same on every platform);
//! a change is loaded once the files have stopped changing for
//! [`SETTLE`], by a task of its own, so requests never wait for a
//! compile and the old tools serve until the new ones are ready.
//!
//! A reload that would skip a plugin the running version did not skip (a
//! broken file, a name clash) is refused whole: the problem goes to stderr
//! and the tools already loaded keep working until the directory is fixed.
//! A reload that is taken tells the notices (renames, functions that are
//! not tools) the running version had not told.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use super::log;
use super::server::{Loaded, ToolServer};
use crate::sandbox::{LoadError, Sandbox, SandboxOptions};

/// How often the directories are looked at.
const POLL: Duration = Duration::from_millis(250);

/// How long the files must stay the same before they are loaded (a copy
/// in progress is not loaded half written).
const SETTLE: Duration = Duration::from_millis(300);

/// What the plugin directories hold: each `.wasm` with its size and time.
type Fingerprint = BTreeMap<PathBuf, (u64, Option<SystemTime>)>;

fn fingerprint(dirs: &[PathBuf]) -> Fingerprint {
    let mut files = Fingerprint::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|ext| ext != "wasm") {
                continue;
            }
            if let Ok(meta) = std::fs::symlink_metadata(&path) {
                files.insert(path, (meta.len(), meta.modified().ok()));
            }
        }
    }
    files
}

/// Watches `options.plugin_dirs` and swaps `server`'s tools on a change,
/// until `stop` is cancelled.
pub(super) async fn watch(options: SandboxOptions, server: ToolServer, stop: CancellationToken) {
    let mut seen = fingerprint(&options.plugin_dirs);
    loop {
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = stop.cancelled() => return,
        }
        let mut now = fingerprint(&options.plugin_dirs);
        if now == seen {
            continue;
        }
        loop {
            tokio::select! {
                () = tokio::time::sleep(SETTLE) => {}
                () = stop.cancelled() => return,
            }
            let again = fingerprint(&options.plugin_dirs);
            if again == now {
                break;
            }
            now = again;
        }
        seen = now;
        reload(&options, &server).await;
    }
}

async fn reload(options: &SandboxOptions, server: &ToolServer) {
    let sandbox = match Sandbox::load(options.clone()).await {
        Ok(sandbox) => sandbox,
        Err(e) => {
            log::warn(format_args!(
                "the plugins changed but cannot be loaded: {e}; the tools loaded before keep serving"
            ));
            return;
        }
    };
    let current = server.current();
    let known = current.sandbox.load_errors();
    let fresh: Vec<&LoadError> = sandbox
        .load_errors()
        .iter()
        .filter(|error| !known.contains(error))
        .collect();
    if !fresh.is_empty() {
        for error in &fresh {
            log::warn(format_args!(
                "the plugins changed, but not reloaded: {error}; the tools loaded before keep \
                 serving until it is fixed"
            ));
        }
        return;
    }
    // What the user was told at start (or at the last reload) is not told
    // again; a plugin dropped in, or a rename it caused, is.
    for notice in sandbox
        .load_notices()
        .iter()
        .filter(|notice| !current.sandbox.load_notices().contains(notice))
    {
        log::warn(notice);
    }
    let names = |sandbox: &Sandbox| -> Vec<String> {
        sandbox.tools().iter().map(|t| t.name.clone()).collect()
    };
    let (before, after) = (names(&current.sandbox), names(&sandbox));
    let added: Vec<&str> = after
        .iter()
        .filter(|n| !before.contains(n))
        .map(String::as_str)
        .collect();
    let removed: Vec<&str> = before
        .iter()
        .filter(|n| !after.contains(n))
        .map(String::as_str)
        .collect();
    log::info(format_args!(
        "plugins reloaded: {} tools (added: {}; removed: {})",
        after.len(),
        if added.is_empty() {
            "none".into()
        } else {
            added.join(", ")
        },
        if removed.is_empty() {
            "none".into()
        } else {
            removed.join(", ")
        },
    ));
    server.replace(Loaded::new(sandbox)).await;
}

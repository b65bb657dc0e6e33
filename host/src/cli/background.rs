//! Compiles that outlive the command. A big plugin new to the compile cache
//! starts on baseline (Winch) code; `run` and `mcp` compile its optimized
//! code on a thread, but a command that ends first (`call`, `tools`, a short
//! `run`) would leave it on baseline code at every later start. So the
//! command leaves that compile to a background `toolhost` process, as
//! `git gc --auto` does, and the next start loads optimized code.
//! `TOOLHOST_BACKGROUND_COMPILE=off` turns it off.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

use crate::sandbox::{PluginOrigin, Sandbox, compile_optimized};

/// The hidden subcommand the background process runs.
pub(crate) const COMMAND: &str = "compile-optimized";

/// Starts a detached `toolhost` that compiles the optimized code of the
/// plugins `sandbox` still runs on baseline code. Best effort: where it
/// cannot be started, the next start finds the baseline code as now.
pub(crate) fn hand_off(sandbox: &Sandbox) {
    let Some(unfinished) = sandbox.unfinished() else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = Command::new(exe);
    command
        .arg("--cache-dir")
        .arg(&unfinished.cache_dir)
        .arg(COMMAND)
        .arg("--file-limit")
        .arg(unfinished.file_limit.to_string());
    for origin in &unfinished.plugins {
        match origin {
            PluginOrigin::Builtin(name) => {
                command.arg("--builtin").arg(name);
            }
            // Absolute, so the child finds it whatever its directory.
            PluginOrigin::File(path) => {
                command.arg(std::path::absolute(path).unwrap_or_else(|_| path.clone()));
            }
        }
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        // Its own process group: a Ctrl+C at the terminal is for the
        // command the user ran, not for this compile.
        command.process_group(0);
    }
    // Not waited for: it outlives this process, and init reaps it.
    let _ = command.spawn();
}

/// `toolhost --cache-dir DIR compile-optimized --file-limit BYTES [--builtin NAME]... [FILE]...`:
/// the background process. One at a time per cache (a lock file), at low
/// priority, so a burst of short commands compiles each plugin once and
/// leaves the user's own work the CPU.
pub(crate) fn compile(
    cache_dir: Option<&Path>,
    builtins: &[String],
    files: &[PathBuf],
    file_limit: u64,
) -> anyhow::Result<()> {
    let Some(cache_dir) = cache_dir else {
        bail!("`{COMMAND}` needs --cache-dir");
    };
    lower_priority();
    fs::create_dir_all(cache_dir)
        .with_context(|| format!("creating the compile cache `{}`", cache_dir.display()))?;
    let _lock = lock(&cache_dir.join("compile.lock"))?;
    let plugins: Vec<PluginOrigin> = builtins
        .iter()
        .cloned()
        .map(PluginOrigin::Builtin)
        .chain(files.iter().cloned().map(PluginOrigin::File))
        .collect();
    let failures = compile_optimized(cache_dir, &plugins, file_limit);
    if !failures.is_empty() {
        bail!("{}", failures.join("\n"));
    }
    Ok(())
}

/// Holds `path` locked until dropped, waiting for another holder first.
fn lock(path: &Path) -> anyhow::Result<File> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("opening the lock file `{}`", path.display()))?;
    file.lock()
        .with_context(|| format!("locking `{}`", path.display()))?;
    Ok(file)
}

/// Nice 10: the compile yields the CPU to whatever the user runs next.
fn lower_priority() {
    #[cfg(unix)]
    // SAFETY: setpriority has no memory-safety preconditions; it changes
    // this process's scheduling priority or fails.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

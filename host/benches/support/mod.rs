//! What the benches and `examples/idle_call.rs` set up the same way: a
//! sandbox of the standard tools with one read grant of the workspace, and
//! the 4 KiB file the call benches read. Each includes it with
//! `#[path]`/`mod support;` and uses the part it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use toolhost::sandbox::{Sandbox, SandboxOptions};

/// The file the call benches read, in the workspace.
pub const FILE: &str = "file.txt";

/// The `read_file` input for [`FILE`].
pub const READ_FILE_INPUT: &str = r#"{"path":"file.txt"}"#;

/// Writes [`FILE`] into `workspace`: 64 lines of 64 bytes, 4 KiB.
pub fn write_4k_file(workspace: &Path) {
    let line = "the quick brown fox jumps over the lazy dog, 64 bytes per line.\n";
    assert_eq!(line.len(), 64);
    std::fs::write(workspace.join(FILE), line.repeat(64)).expect("write 4 KiB file");
}

/// The standard tools, every one granted to read `workspace` as `.`, with
/// the compile cache at `cache_dir` and the default limits.
pub fn read_grant_options(workspace: &Path, cache_dir: PathBuf) -> SandboxOptions {
    SandboxOptions {
        cache_dir: Some(cache_dir),
        ..SandboxOptions::read_only(workspace.to_path_buf())
    }
}

/// Loads `options` on `runtime`; a bench cannot go on without it.
pub fn load(runtime: &tokio::runtime::Runtime, options: SandboxOptions) -> Sandbox {
    runtime
        .block_on(Sandbox::load(options))
        .expect("sandbox loads")
}

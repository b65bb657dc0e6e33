//! What both build scripts that compile plugins for `wasm32-wasip2` share
//! (`host/build.rs`: the standard tools; `host/test-plugins/build.rs`: the
//! test fixtures, built only when the tests are): one nested `cargo build`
//! of the crates asked for, into one target directory every host profile
//! shares, and where its artifacts are. Included by each with `#[path]`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const WASM_TARGET: &str = "wasm32-wasip2";
pub const PROFILE: &str = "plugin";

/// The workspace root, from a build script's `CARGO_MANIFEST_DIR` `up`
/// levels below it.
pub fn workspace_root(up: usize) -> PathBuf {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .nth(up)
        .expect("the crate lives in the workspace")
        .to_path_buf()
}

/// Crate directories directly under `parent`, sorted, minus `skip`.
pub fn crate_dirs(parent: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(parent)
        .unwrap_or_else(|e| panic!("read {}: {e}", parent.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.join("Cargo.toml").is_file())
        .filter(|path| !skip.contains(&dir_name(path).as_str()))
        .collect();
    dirs.sort();
    dirs
}

/// The text of every `.rs` file under `dirs`, concatenated.
pub fn rust_sources(dirs: &[PathBuf]) -> String {
    let mut text = String::new();
    let mut pending: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.filter_map(|entry| entry.ok().map(|e| e.path())) {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                text.push_str(&fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    text
}

pub fn dir_name(path: &Path) -> String {
    path.file_name()
        .expect("crate dir has a name")
        .to_string_lossy()
        .into_owned()
}

/// One target directory for the wasm builds that every host profile (dev,
/// test, clippy, bench) shares, so the plugins are compiled once:
/// `<target>/wasm-plugins`, found from `OUT_DIR` (`<target>/<profile>/build/<pkg>/out`).
pub fn shared_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .nth(4)
        .map(|target| target.join("wasm-plugins"))
        .unwrap_or_else(|| out_dir.join("wasm-plugins"))
}

pub fn build<'a>(root: &Path, target_dir: &Path, crates: impl Iterator<Item = &'a PathBuf>) {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .arg("build")
        .arg("--locked")
        .args(["--target", WASM_TARGET, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(target_dir);
    for dir in crates {
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("read plugin manifest");
        let package = manifest
            .lines()
            .find_map(|line| line.strip_prefix("name = \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{}: no package name", dir.display()));
        cmd.args(["-p", package]);
    }
    // Flags meant for the host build (clippy's wrapper, coverage or
    // sanitizer RUSTFLAGS) must not leak into the wasm build.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("run cargo to build the wasm plugins");
    assert!(
        status.success(),
        "building the plugins for {WASM_TARGET} failed; is the target installed? \
         run `rustup target add {WASM_TARGET}`"
    );
}

pub fn artifact(dir: &Path, package: &str) -> PathBuf {
    let base = package.replace('-', "_");
    // Libraries are `<name>.wasm`; a binary crate (the wrong-world fixture) too.
    let wasm = dir.join(format!("{base}.wasm"));
    if wasm.is_file() {
        return wasm;
    }
    let bin = dir.join(format!("{package}.wasm"));
    assert!(
        bin.is_file(),
        "no wasm artifact for {package} in {}",
        dir.display()
    );
    bin
}

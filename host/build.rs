//! Builds every plugin crate for `wasm32-wasip2` so a plain `cargo build` or
//! `cargo test` needs no manual step, in the style of wasmtime's
//! `test-programs/artifacts/build.rs`.
//!
//! - `plugins/*` (except `support`) are the standard tools; they are embedded
//!   in the binary through the generated `standard_plugins.rs`.
//! - `tests/plugins/*` are test fixtures (hostile and odd plugins); their
//!   `.wasm` files are copied to a directory whose path the tests get through
//!   the `TOOLHOST_TEST_PLUGINS` environment variable.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const WASM_TARGET: &str = "wasm32-wasip2";
const PROFILE: &str = "plugin";

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("host/ lives in the workspace root")
        .to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    // Cargo.toml holds the plugin profile, .cargo/config.toml its target flags.
    for watched in [
        "wit",
        "plugins",
        "tests/plugins",
        "Cargo.lock",
        "Cargo.toml",
        ".cargo/config.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    let standard = crate_dirs(&root.join("plugins"), &["support"]);
    let fixtures = crate_dirs(&root.join("tests/plugins"), &[]);
    let target_dir = shared_target_dir(&out_dir);
    build(&root, &target_dir, standard.iter().chain(&fixtures));

    let artifacts = target_dir.join(WASM_TARGET).join(PROFILE);
    let mut generated = String::from(
        "/// The standard tools, embedded: (plugin name, component bytes).\n\
         pub const STANDARD_PLUGINS: &[(&str, &[u8])] = &[\n",
    );
    for dir in &standard {
        let name = dir_name(dir);
        let wasm = artifact(&artifacts, &format!("toolhost-plugin-{name}"));
        writeln!(
            generated,
            "    ({name:?}, include_bytes!({:?})),",
            wasm.display()
        )
        .expect("write to string");
    }
    generated.push_str("];\n");
    fs::write(out_dir.join("standard_plugins.rs"), generated).expect("write standard_plugins.rs");

    let fixture_dir = out_dir.join("test-plugins");
    fs::create_dir_all(&fixture_dir).expect("create test-plugins dir");
    for dir in &fixtures {
        let name = dir_name(dir);
        let wasm = artifact(&artifacts, &format!("toolhost-test-plugin-{name}"));
        fs::copy(&wasm, fixture_dir.join(format!("{name}.wasm"))).expect("copy test plugin");
    }
    println!(
        "cargo:rustc-env=TOOLHOST_TEST_PLUGINS={}",
        fixture_dir.display()
    );
}

/// Crate directories directly under `parent`, sorted, minus `skip`.
fn crate_dirs(parent: &Path, skip: &[&str]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(parent)
        .unwrap_or_else(|e| panic!("read {}: {e}", parent.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.join("Cargo.toml").is_file())
        .filter(|path| !skip.contains(&dir_name(path).as_str()))
        .collect();
    dirs.sort();
    dirs
}

fn dir_name(path: &Path) -> String {
    path.file_name()
        .expect("crate dir has a name")
        .to_string_lossy()
        .into_owned()
}

/// One target directory for the wasm builds that every host profile (dev,
/// test, clippy, bench) shares, so the plugins are compiled once:
/// `<target>/wasm-plugins`, found from `OUT_DIR` (`<target>/<profile>/build/<pkg>/out`).
fn shared_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .nth(4)
        .map(|target| target.join("wasm-plugins"))
        .unwrap_or_else(|| out_dir.join("wasm-plugins"))
}

fn build<'a>(root: &Path, target_dir: &Path, crates: impl Iterator<Item = &'a PathBuf>) {
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

fn artifact(dir: &Path, package: &str) -> PathBuf {
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

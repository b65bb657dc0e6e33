//! Builds the standard tools' plugin crates (`plugins/*` but `support`)
//! for `wasm32-wasip2` so a plain `cargo build` or `cargo install` needs no
//! manual step, in the style of wasmtime's `test-programs/artifacts/build.rs`:
//! they are embedded in the binary through the generated
//! `standard_plugins.rs`. The test fixtures (`tests/plugins/*`) are built
//! by `host/test-plugins`, a dev-dependency: only when the tests are.

// Shared with host/test-plugins/build.rs, which also reads the test sources.
#[allow(dead_code)]
#[path = "plugin_build.rs"]
mod plugin_build;

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use plugin_build::{PROFILE, WASM_TARGET, artifact, build, crate_dirs, dir_name};
use sha2::{Digest as _, Sha256};

fn main() {
    let root = plugin_build::workspace_root(1);
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    // Cargo.toml holds the plugin profile, .cargo/config.toml its target flags.
    for watched in [
        "wit",
        "plugins",
        "vendor",
        "Cargo.lock",
        "Cargo.toml",
        ".cargo/config.toml",
        "host/plugin_build.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    let standard = crate_dirs(&root.join("plugins"), &["support"]);
    let target_dir = plugin_build::shared_target_dir(&out_dir);
    build(&root, &target_dir, standard.iter());

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
    // Their hashes, so a start does not hash 4 MB of embedded plugins to
    // find them in the compile cache.
    generated.push_str(
        "/// The sha256 of each of [`STANDARD_PLUGINS`], in the same order.\n\
         pub(crate) const STANDARD_PLUGIN_SHA256: &[&str] = &[\n",
    );
    for dir in &standard {
        let name = dir_name(dir);
        let wasm = artifact(&artifacts, &format!("toolhost-plugin-{name}"));
        let bytes = fs::read(&wasm).expect("read standard plugin");
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        writeln!(generated, "    {digest:?},").expect("write to string");
    }
    generated.push_str("];\n");
    fs::write(out_dir.join("standard_plugins.rs"), generated).expect("write standard_plugins.rs");
}

//! `toolhost plugin install python|javascript`: builds one of toolhost's code tools
//! from the sources in this binary (`code-tools/` in the repository) with
//! the pinned toolchain, then installs it as `plugin add` does: checked,
//! compiled with the optimizing compiler, copied into the plugins directory.
//!
//! The tools are too large to build into the binary (a Python component is
//! about 21 MB, a JavaScript one 13 MB). A build is kept in the cache under a key of everything
//! that goes into it (the sources, the WIT, the toolchain pins), so a
//! second install, in this workspace or another, is a cache hit.

mod toolchain;

pub(super) use toolchain::{COMPONENTIZE_JS, COMPONENTIZE_PY, installed_componentize_py};

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};

use super::flags::SandboxArgs;
use super::plugin_add;
use super::render::Installed;
use super::scaffold::WIT;
use crate::config;

/// A code tool toolhost knows how to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum CodeTool {
    // Plain comments: clap would show doc comments as the values' help.
    // Python 3 (CPython in componentize-py), a fresh interpreter per call.
    Python,
    // JavaScript (SpiderMonkey in componentize-js), synchronous.
    Javascript,
}

/// The tool's source, as the repository's `code-tools/` holds it.
const PYTHON_APP: &str = include_str!("../../../../code-tools/python/app.py");
const JAVASCRIPT_APP: &str = include_str!("../../../../code-tools/javascript/app.js");

impl CodeTool {
    fn name(self) -> &'static str {
        match self {
            CodeTool::Python => "python",
            CodeTool::Javascript => "javascript",
        }
    }

    /// A digest of everything the build reads: a build under another key
    /// is another build.
    fn key(self) -> String {
        let mut hash = Sha256::new();
        let mut part = |bytes: &[u8]| {
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        };
        match self {
            CodeTool::Python => {
                part(PYTHON_APP.as_bytes());
                part(toolchain::COMPONENTIZE_PY.as_bytes());
                part(toolchain::TZDATA.as_bytes());
            }
            CodeTool::Javascript => {
                part(JAVASCRIPT_APP.as_bytes());
                part(toolchain::COMPONENTIZE_JS.as_bytes());
            }
        }
        for (path, text) in WIT {
            part(path.as_bytes());
            part(text.as_bytes());
        }
        let digest = hash.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

pub(super) async fn install(
    args: &SandboxArgs,
    tool: CodeTool,
    force: bool,
    user: bool,
    note: &dyn Fn(&str),
) -> anyhow::Result<Installed> {
    let started = Instant::now();
    let resolved = config::resolve(&args.inputs())?;
    resolved.new_dirs.create()?;
    let cache_dir = resolved.sandbox.cache_dir;
    let file_name = format!("{}.wasm", tool.name());
    // Without a cache the build goes to a directory that lives as long as
    // the install.
    let scratch;
    let (built, cached) = match &cache_dir {
        Some(cache) => {
            let dir = cache
                .join("code-tools")
                .join(format!("{}-{}", tool.name(), tool.key()));
            let file = dir.join(&file_name);
            if file.is_file() {
                (file, true)
            } else {
                build(tool, cache_dir.as_deref(), &dir, &file_name, note)?;
                (file, false)
            }
        }
        None => {
            scratch = tempfile::tempdir().context("creating a directory to build in")?;
            build(tool, None, scratch.path(), &file_name, note)?;
            (scratch.path().join(&file_name), false)
        }
    };
    let added = plugin_add::add(args, &built, force, user).await?;
    Ok(Installed {
        added,
        cached,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Builds `tool` into `out_dir/file_name`, through a staging directory
/// beside it so a build cut short leaves nothing a later install takes
/// for a finished one.
fn build(
    tool: CodeTool,
    cache_dir: Option<&Path>,
    out_dir: &Path,
    file_name: &str,
    note: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let toolchains = toolchain::Toolchains::locate(cache_dir)?;
    let parent = out_dir.parent().unwrap_or(out_dir);
    fs::create_dir_all(parent).with_context(|| format!("creating `{}`", parent.display()))?;
    let staging = tempfile::tempdir_in(parent).with_context(|| {
        format!(
            "creating a directory to build in under `{}`",
            parent.display()
        )
    })?;
    let src = staging.path();
    for (relative, text) in WIT {
        let path = src.join(relative);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating `{}`", dir.display()))?;
        }
        fs::write(&path, text).with_context(|| format!("writing `{}`", path.display()))?;
    }
    let output: PathBuf = src.join(file_name);
    match tool {
        CodeTool::Python => {
            let componentize = toolchains.componentize_py(note)?;
            let tzdata = toolchains.tzdata(note)?;
            let app = src.join("app");
            fs::create_dir_all(&app).with_context(|| format!("creating `{}`", app.display()))?;
            fs::write(app.join("app.py"), PYTHON_APP).context("writing app.py")?;
            note(&format!(
                "building `python` with componentize-py {} (about a minute)",
                toolchain::COMPONENTIZE_PY
            ));
            toolchain::run(
                std::process::Command::new(componentize)
                    .current_dir(src)
                    .args(["--wit-path", "wit", "--world", "plugin", "componentize"])
                    .arg("--python-path")
                    .arg(&app)
                    .arg("--python-path")
                    .arg(&tzdata)
                    .arg("app")
                    .arg("--output")
                    .arg(&output),
            )?;
        }
        CodeTool::Javascript => {
            let (node, componentize) = toolchains.componentize_js(note)?;
            fs::write(src.join("app.js"), JAVASCRIPT_APP).context("writing app.js")?;
            note(&format!(
                "building `javascript` with componentize-js {} (about half a minute)",
                toolchain::COMPONENTIZE_JS
            ));
            toolchain::run(
                std::process::Command::new(node)
                    .current_dir(src)
                    .arg(componentize)
                    .args([
                        "app.js",
                        "--wit",
                        "wit",
                        "--world-name",
                        "plugin-fs",
                        "--out",
                    ])
                    .arg(&output),
            )?;
        }
    }
    fs::create_dir_all(out_dir).with_context(|| format!("creating `{}`", out_dir.display()))?;
    fs::rename(&output, out_dir.join(file_name))
        .with_context(|| format!("moving the build into `{}`", out_dir.display()))?;
    Ok(())
}

//! `toolhost plugin add FILE`: install a plugin the way every later start
//! will find it: checked, compiled with the optimizing compiler into the
//! cache (so no later start waits for a compile or runs baseline code), then
//! copied into the plugins directory: the workspace's, the first
//! `--plugins DIR`, or with `--user` the user's own (every workspace's).

use std::fs;
use std::path::Path;

use anyhow::{Context as _, bail};

use crate::config;
use crate::sandbox::{PluginOrigin, Sandbox, Tiering, Tool};
use crate::workspace::Layout;

use super::flags::SandboxArgs;
use super::render::{self, Added};

/// Checks and compiles `file` alongside every plugin the workspace already
/// loads (so a tool name clash is found now, not at the next start), then
/// copies it into the first plugins directory.
///
/// Long: `plugin add`'s steps in order (check the file, load it beside the
/// workspace's plugins, copy it in), each with its own error.
pub(super) async fn add(
    args: &SandboxArgs,
    file: &Path,
    force: bool,
    user: bool,
) -> anyhow::Result<Added> {
    if !file.is_file() {
        bail!(
            "plugin file `{}` does not exist or is not a file",
            file.display()
        );
    }
    if file.extension().is_none_or(|ext| ext != "wasm") {
        bail!(
            "plugin file `{}` does not end in `.wasm`; toolhost loads only `*.wasm` files from a plugins directory",
            file.display()
        );
    }
    let name = file
        .file_name()
        .context("the plugin file has no file name")?
        .to_owned();
    let inputs = args.inputs();
    let resolved = config::resolve(&inputs)?;
    resolved.new_dirs.create()?;
    let mut options = resolved.sandbox;
    let workspace = options.workspace.clone();
    let dir = if user {
        let Some(config_dir) = &inputs.user_config_dir else {
            bail!(
                "no user config directory for `--user`: set TOOLHOST_CONFIG_DIR, XDG_CONFIG_HOME \
                 or HOME, or install into this workspace (leave out `--user`)"
            );
        };
        config_dir.join(config::user::PLUGINS_DIR)
    } else {
        match options.plugin_dirs.first() {
            Some(dir) if !args.plugins.is_empty() => dir.clone(),
            _ => Layout::of(&options.workspace).plugins_dir(),
        }
    };
    let installed = dir.join(&name);
    // Compared only when the sizes match and are within the limit: neither
    // file is read whole before the load below checks it.
    let len = |path: &Path| fs::metadata(path).map(|m| m.len()).ok();
    let comparable = installed.is_file()
        && len(&installed) == len(file)
        && len(file).is_some_and(|n| n <= options.plugin_file_limit);
    let read =
        |path: &Path| fs::read(path).with_context(|| format!("reading `{}`", path.display()));
    let unchanged = comparable && read(&installed)? == read(file)?;
    if installed.exists() && !unchanged && !force {
        bail!(
            "`{}` already exists and differs from `{}`; pass --force to replace it",
            installed.display(),
            file.display()
        );
    }

    // Load what the next start loads, with the new file in place of any
    // installed copy, compiling with Cranelift now.
    options.plugin_dirs.retain(|d| d != &dir);
    let mut files = match crate::sandbox::plugin_files(&dir) {
        Ok(files) => files,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("reading the plugins directory `{}`", dir.display()));
        }
    };
    files.retain(|f| f.file_name() != Some(name.as_os_str()));
    files.push(file.to_path_buf());
    options.plugin_files.splice(0..0, files);
    options.tiering = Tiering::default();
    let progress = render::CompileProgress::new();
    let sandbox = Sandbox::load_with_progress(options, &|event| progress.event(event)).await?;
    let origin = PluginOrigin::File(file.to_path_buf());
    if let Some(error) = sandbox.load_errors().iter().find(|e| e.origin == origin) {
        bail!("{error}; nothing was installed");
    }
    let tools: Vec<String> = sandbox
        .tools()
        .iter()
        .filter(|t: &&Tool| t.plugin == origin)
        .map(|t| t.name.clone())
        .collect();

    if !unchanged {
        copy_into(file, &dir, &installed)?;
    }
    // Into the workspace's plugins directory, where until the workspace is
    // trusted a plugin counts as shipped with it: this one is the user's.
    let sha256 = sandbox
        .tools()
        .iter()
        .find(|t| t.plugin == origin)
        .map(|t| t.plugin_sha256.clone());
    if dir == Layout::of(&workspace).plugins_dir()
        && let (Some(config_dir), Some(sha256)) = (&inputs.user_config_dir, sha256)
    {
        config::user::record_added(config_dir, &sha256).with_context(|| {
            format!(
                "recording `{}` as yours in `{}`",
                installed.display(),
                config_dir.join(config::user::ADDED_DIR).display()
            )
        })?;
    }
    Ok(Added {
        installed,
        tools,
        unchanged,
    })
}

/// Copies `file` to `installed` in `dir` through a temporary file, so a
/// toolhost starting meanwhile sees no half-written plugin.
fn copy_into(file: &Path, dir: &Path, installed: &Path) -> anyhow::Result<()> {
    crate::workspace::private_state_dir(dir)
        .with_context(|| format!("creating the plugins directory `{}`", dir.display()))?;
    let temp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("writing into `{}`", dir.display()))?;
    fs::copy(file, temp.path()).with_context(|| format!("copying `{}`", file.display()))?;
    temp.persist(installed)
        .with_context(|| format!("installing `{}`", installed.display()))?;
    Ok(())
}

//! `toolhost.toml` + command-line flags + environment → one resolved
//! [`SandboxOptions`].
//!
//! Grant rules (deny by default):
//! - a tool's read grants are the union of `[defaults] read`,
//!   `[tools.<name>] read`, `--allow-read PATH` and `--allow-read <name>=PATH`;
//!   when none of these mentions reads for the tool, it may read the
//!   workspace (`.`);
//! - write grants are the union of the same `write` sources; none by default;
//! - a write grant implies read access to that directory.
//!
//! Every grant must name an existing directory inside the workspace, unless
//! the user wrote an absolute path. Problems are errors naming the grant and
//! where it came from.

mod file;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::sandbox::{Grant, Limits, Policy, SandboxOptions, ToolPolicy, simplify_grants};
use file::{ConfigFile, LimitsSection};
pub use file::{ModelSection, ProviderKind};

/// The plugins directory used when no `--plugins` is given, relative to the
/// workspace.
pub const DEFAULT_PLUGIN_DIR: &str = ".toolhost/plugins";

/// The config file looked for in the workspace when no `--config` is given.
pub const DEFAULT_CONFIG_FILE: &str = "toolhost.toml";

/// What the user asked for, before resolution: flags and their sources.
#[derive(Debug, Clone, Default)]
pub struct ConfigInputs {
    pub workspace: PathBuf,
    /// An explicit `--config FILE`; it must exist.
    pub config_file: Option<PathBuf>,
    /// `--plugins DIR`, in order; empty means the workspace's default.
    pub plugin_dirs: Vec<PathBuf>,
    /// `--allow-read [TOOL=]PATH`.
    pub allow_read: Vec<String>,
    /// `--allow-write [TOOL=]PATH`.
    pub allow_write: Vec<String>,
    /// `--cache-dir DIR`; falls back to the environment, then the user's cache.
    pub cache_dir: Option<PathBuf>,
    /// `--no-cache`: compile every plugin every time.
    pub no_cache: bool,
}

/// A configuration problem, naming the file, flag or grant and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("workspace `{}` is not a directory: {source}; pass an existing directory with --workspace", .path.display())]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read config file `{}`: {source}", .path.display())]
    ReadFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config file `{}`: {message}", .path.display())]
    ParseFile { path: PathBuf, message: String },
    #[error("grant `{grant}` (from {origin}) {problem}")]
    Grant {
        grant: String,
        origin: String,
        problem: String,
    },
    #[error("limit `{key}` (from {origin}) must be greater than zero")]
    ZeroLimit { key: &'static str, origin: String },
}

/// The resolved configuration: the sandbox's options and the `[model]`
/// section for `toolhost run`.
#[derive(Debug)]
pub struct Resolved {
    pub sandbox: SandboxOptions,
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// The `[model]` section, for `toolhost run`.
    pub model: ModelSection,
}

/// A grant as written, with where it came from (for error messages).
#[derive(Debug, Clone)]
struct GrantSpec {
    path: String,
    origin: String,
    writable: bool,
}

/// Reads the config file and merges it with the flags.
pub fn resolve(inputs: &ConfigInputs) -> Result<Resolved, ConfigError> {
    let workspace = inputs
        .workspace
        .canonicalize()
        .and_then(|p| {
            if p.is_dir() {
                Ok(p)
            } else {
                Err(std::io::Error::other("not a directory"))
            }
        })
        .map_err(|source| ConfigError::Workspace {
            path: inputs.workspace.clone(),
            source,
        })?;

    let (file, config_file) = read_config_file(inputs, &workspace)?;
    let file_name = config_file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();

    let defaults_limits = apply_limits(
        Limits::default(),
        &file.limits,
        &format!("{file_name} [limits]"),
    )?;

    // Flags: split `TOOL=PATH` from plain `PATH`.
    let (global_read, tool_read) = split_flags(&inputs.allow_read, "--allow-read", false);
    let (global_write, tool_write) = split_flags(&inputs.allow_write, "--allow-write", true);

    let mentioned: BTreeSet<String> = file
        .tools
        .keys()
        .cloned()
        .chain(tool_read.keys().cloned())
        .chain(tool_write.keys().cloned())
        .collect();

    let section_specs =
        |list: &Option<Vec<String>>, origin: String, writable: bool| -> Vec<GrantSpec> {
            list.iter()
                .flatten()
                .map(|path| GrantSpec {
                    path: path.clone(),
                    origin: origin.clone(),
                    writable,
                })
                .collect()
        };
    let grants_for = |tool: Option<&str>| -> Result<Vec<Grant>, ConfigError> {
        let section = tool.and_then(|t| file.tools.get(t));
        let mut specs = Vec::new();
        specs.extend(section_specs(
            &file.defaults.read,
            format!("{file_name} [defaults] read"),
            false,
        ));
        specs.extend(section_specs(
            &file.defaults.write,
            format!("{file_name} [defaults] write"),
            true,
        ));
        if let (Some(tool), Some(section)) = (tool, section) {
            specs.extend(section_specs(
                &section.read,
                format!("{file_name} [tools.{tool}] read"),
                false,
            ));
            specs.extend(section_specs(
                &section.write,
                format!("{file_name} [tools.{tool}] write"),
                true,
            ));
        }
        specs.extend(global_read.iter().cloned());
        specs.extend(global_write.iter().cloned());
        if let Some(tool) = tool {
            specs.extend(tool_read.get(tool).into_iter().flatten().cloned());
            specs.extend(tool_write.get(tool).into_iter().flatten().cloned());
        }
        let reads_mentioned = file.defaults.read.is_some()
            || section.is_some_and(|s| s.read.is_some())
            || specs
                .iter()
                .any(|s| !s.writable && s.origin.starts_with("--"));
        if !reads_mentioned {
            specs.push(GrantSpec {
                path: ".".into(),
                origin: "the default (every tool may read the workspace)".into(),
                writable: false,
            });
        }
        let grants = specs
            .iter()
            .map(|spec| resolve_grant(spec, &workspace))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(simplify_grants(grants))
    };

    let defaults = ToolPolicy {
        grants: grants_for(None)?,
        limits: defaults_limits,
    };
    let mut per_tool = BTreeMap::new();
    for tool in &mentioned {
        let limits = match file.tools.get(tool) {
            Some(section) => apply_limits(
                defaults_limits,
                &section.limits,
                &format!("{file_name} [tools.{tool}.limits]"),
            )?,
            None => defaults_limits,
        };
        per_tool.insert(
            tool.clone(),
            ToolPolicy {
                grants: grants_for(Some(tool))?,
                limits,
            },
        );
    }

    let plugin_dirs = if inputs.plugin_dirs.is_empty() {
        let default = workspace.join(DEFAULT_PLUGIN_DIR);
        if default.is_dir() {
            vec![default]
        } else {
            Vec::new()
        }
    } else {
        inputs.plugin_dirs.clone()
    };

    let cache_dir = if inputs.no_cache {
        None
    } else {
        inputs.cache_dir.clone().or_else(default_cache_dir)
    };

    Ok(Resolved {
        sandbox: SandboxOptions {
            workspace,
            plugin_dirs,
            plugin_files: Vec::new(),
            standard_tools: true,
            cache_dir,
            policy: Policy { defaults, per_tool },
        },
        config_file,
        model: file.model.clone(),
    })
}

/// Names in `[tools.*]` or `TOOL=` flags that no loaded plugin offers:
/// almost always a typo that leaves a tool with other access than meant.
pub fn unknown_tool_warnings<'a>(
    policy: &Policy,
    loaded: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let loaded: BTreeSet<&str> = loaded.collect();
    policy
        .per_tool
        .keys()
        .filter(|name| !loaded.contains(name.as_str()))
        .map(|name| format!("the configuration names tool `{name}`, but no loaded plugin offers it; check the spelling"))
        .collect()
}

fn read_config_file(
    inputs: &ConfigInputs,
    workspace: &Path,
) -> Result<(ConfigFile, Option<PathBuf>), ConfigError> {
    let (path, required) = match &inputs.config_file {
        Some(path) => (path.clone(), true),
        None => (workspace.join(DEFAULT_CONFIG_FILE), false),
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((ConfigFile::default(), None));
        }
        Err(source) => return Err(ConfigError::ReadFile { path, source }),
    };
    let file = toml::from_str(&text).map_err(|e| ConfigError::ParseFile {
        path: path.clone(),
        message: e.to_string(),
    })?;
    Ok((file, Some(path)))
}

/// Splits `[TOOL=]PATH` flags into global grants and per-tool grants.
fn split_flags(
    flags: &[String],
    flag: &str,
    writable: bool,
) -> (Vec<GrantSpec>, BTreeMap<String, Vec<GrantSpec>>) {
    let mut global = Vec::new();
    let mut per_tool: BTreeMap<String, Vec<GrantSpec>> = BTreeMap::new();
    for value in flags {
        match value.split_once('=') {
            Some((tool, path)) if is_tool_name(tool) => {
                per_tool
                    .entry(tool.to_string())
                    .or_default()
                    .push(GrantSpec {
                        path: path.to_string(),
                        origin: format!("{flag} {value}"),
                        writable,
                    });
            }
            _ => global.push(GrantSpec {
                path: value.clone(),
                origin: format!("{flag} {value}"),
                writable,
            }),
        }
    }
    (global, per_tool)
}

fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Turns a written grant into a checked [`Grant`].
fn resolve_grant(spec: &GrantSpec, workspace: &Path) -> Result<Grant, ConfigError> {
    let error = |problem: String| ConfigError::Grant {
        grant: spec.path.clone(),
        origin: spec.origin.clone(),
        problem,
    };
    let written = Path::new(&spec.path);
    let host = if written.is_absolute() {
        written.to_path_buf()
    } else {
        workspace.join(written)
    };
    let canonical = host.canonicalize().map_err(|e| {
        error(format!(
            "cannot be used: `{}` {}; create the directory or fix the path",
            host.display(),
            if e.kind() == std::io::ErrorKind::NotFound {
                "does not exist".to_string()
            } else {
                e.to_string()
            }
        ))
    })?;
    if !canonical.is_dir() {
        return Err(error(format!(
            "is not a directory (`{}`); grant the directory that holds it",
            canonical.display()
        )));
    }
    let guest_path = match canonical.strip_prefix(workspace) {
        Ok(inside) if inside.as_os_str().is_empty() => ".".to_string(),
        Ok(inside) => inside.to_string_lossy().into_owned(),
        Err(_) if written.is_absolute() => canonical.to_string_lossy().into_owned(),
        Err(_) => {
            return Err(error(format!(
                "points outside the workspace `{}`; grant a directory inside it, or write an absolute path to grant \
                 one outside on purpose",
                workspace.display()
            )));
        }
    };
    Ok(Grant {
        host_path: canonical,
        guest_path,
        writable: spec.writable,
    })
}

fn apply_limits(
    mut limits: Limits,
    section: &LimitsSection,
    origin: &str,
) -> Result<Limits, ConfigError> {
    let nonzero = |key: &'static str, value: u64| {
        if value == 0 {
            Err(ConfigError::ZeroLimit {
                key,
                origin: origin.to_string(),
            })
        } else {
            Ok(value)
        }
    };
    if let Some(fuel) = section.fuel {
        limits.fuel = nonzero("fuel", fuel)?;
    }
    if let Some(ms) = section.timeout_ms {
        limits.timeout = Duration::from_millis(nonzero("timeout_ms", ms)?);
    }
    if let Some(mib) = section.memory_mib {
        limits.memory = nonzero("memory_mib", mib)?.saturating_mul(1 << 20);
    }
    if let Some(kib) = section.output_kib {
        limits.output = usize::try_from(nonzero("output_kib", kib)?.saturating_mul(1 << 10))
            .unwrap_or(usize::MAX);
    }
    Ok(limits)
}

/// `$TOOLHOST_CACHE_DIR`, else `$XDG_CACHE_HOME/toolhost`, else
/// `~/.cache/toolhost`.
fn default_cache_dir() -> Option<PathBuf> {
    let from_env = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from_env("TOOLHOST_CACHE_DIR")
        .or_else(|| from_env("XDG_CACHE_HOME").map(|p| p.join("toolhost")))
        .or_else(|| from_env("HOME").map(|p| p.join(".cache/toolhost")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir_all(dir.path().join("src")).expect("mkdir");
        fs::create_dir_all(dir.path().join("out")).expect("mkdir");
        dir
    }

    fn inputs(dir: &tempfile::TempDir) -> ConfigInputs {
        ConfigInputs {
            workspace: dir.path().to_path_buf(),
            no_cache: true,
            ..ConfigInputs::default()
        }
    }

    fn guest(policy: &ToolPolicy) -> Vec<(String, bool)> {
        policy
            .grants
            .iter()
            .map(|g| (g.guest_path.clone(), g.writable))
            .collect()
    }

    #[test]
    fn by_default_every_tool_reads_the_workspace_and_none_writes() {
        let dir = workspace();
        let resolved = resolve(&inputs(&dir)).expect("ok");
        assert_eq!(
            guest(resolved.sandbox.policy.for_tool("anything")),
            vec![(".".into(), false)]
        );
    }

    #[test]
    fn a_tool_flag_replaces_the_default_read_for_that_tool_only() {
        let dir = workspace();
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec!["read_file=src".into()];
        inputs.allow_write = vec!["write_file=out".into()];
        let policy = resolve(&inputs).expect("ok").sandbox.policy;
        assert_eq!(
            guest(policy.for_tool("read_file")),
            vec![("src".into(), false)]
        );
        assert_eq!(
            guest(policy.for_tool("write_file")),
            vec![(".".into(), false), ("out".into(), true)]
        );
        assert_eq!(
            guest(policy.for_tool("list_files")),
            vec![(".".into(), false)]
        );
    }

    #[test]
    fn config_file_sections_merge_with_flags() {
        let dir = workspace();
        fs::write(
            dir.path().join("toolhost.toml"),
            "[defaults]\nread = [\"src\"]\n[limits]\ntimeout_ms = 500\n[tools.edit_file]\nwrite = [\"out\"]\nlimits = { fuel = 7 }\n",
        )
        .expect("write");
        let policy = resolve(&inputs(&dir)).expect("ok").sandbox.policy;
        assert_eq!(guest(&policy.defaults), vec![("src".into(), false)]);
        assert_eq!(policy.defaults.limits.timeout, Duration::from_millis(500));
        let edit = policy.for_tool("edit_file");
        assert_eq!(
            guest(edit),
            vec![("out".into(), true), ("src".into(), false)]
        );
        assert_eq!(edit.limits.fuel, 7);
        assert_eq!(edit.limits.timeout, Duration::from_millis(500));
    }

    #[test]
    fn a_grant_outside_the_workspace_is_an_error_naming_it() {
        let dir = workspace();
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec!["..".into()];
        let err = resolve(&inputs).expect_err("outside").to_string();
        assert!(
            err.starts_with("grant `..` (from --allow-read ..) points outside the workspace"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_grant_is_an_error_naming_it() {
        let dir = workspace();
        let mut inputs = inputs(&dir);
        inputs.allow_write = vec!["write_file=nope".into()];
        let err = resolve(&inputs).expect_err("missing").to_string();
        assert!(
            err.contains("grant `nope` (from --allow-write write_file=nope)"),
            "{err}"
        );
        assert!(err.contains("does not exist"), "{err}");
    }

    #[test]
    fn an_absolute_grant_outside_the_workspace_is_allowed() {
        let dir = workspace();
        let outside = tempfile::tempdir().expect("temp dir");
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec![format!("read_file={}", outside.path().display())];
        let policy = resolve(&inputs).expect("ok").sandbox.policy;
        let canonical = outside.path().canonicalize().expect("canonical");
        assert_eq!(
            guest(policy.for_tool("read_file")),
            vec![(canonical.display().to_string(), false)]
        );
    }

    #[test]
    fn a_symlink_out_of_the_workspace_is_not_a_relative_grant() {
        let dir = workspace();
        let outside = tempfile::tempdir().expect("temp dir");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
        let mut inputs = inputs(&dir);
        inputs.allow_read = vec!["link".into()];
        let err = resolve(&inputs).expect_err("escapes").to_string();
        assert!(err.contains("points outside the workspace"), "{err}");
    }

    #[test]
    fn bad_config_files_name_the_file() {
        let dir = workspace();
        fs::write(dir.path().join("toolhost.toml"), "[limits]\nfuel = 0\n").expect("write");
        let err = resolve(&inputs(&dir)).expect_err("zero").to_string();
        assert!(
            err.contains("limit `fuel`") && err.contains("toolhost.toml [limits]"),
            "{err}"
        );

        fs::write(dir.path().join("toolhost.toml"), "[tols]\n").expect("write");
        let err = resolve(&inputs(&dir)).expect_err("unknown").to_string();
        assert!(
            err.starts_with("invalid config file") && err.contains("toolhost.toml"),
            "{err}"
        );

        let mut explicit = inputs(&dir);
        explicit.config_file = Some(dir.path().join("missing.toml"));
        let err = resolve(&explicit).expect_err("missing").to_string();
        assert!(
            err.contains("cannot read config file") && err.contains("missing.toml"),
            "{err}"
        );
    }
}

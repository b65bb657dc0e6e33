//! The flags several commands share, and the environment each command
//! reads, for their `--help`.
//!
//! Each command declares the groups it uses, so its help lists only flags
//! that do something for it. The same flags are also accepted before the
//! command (`toolhost --workspace DIR run ...`, as the README and the
//! resume hint write them); [`SandboxArgs::then`] joins the two.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::config::{self, ConfigInputs};

/// `--workspace`, for every command that reads or writes in one.
#[derive(Debug, Clone, Default, Args)]
pub(super) struct WorkspaceArg {
    /// The workspace: the directory tools see as `.` [default: .]
    #[arg(short, long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

impl WorkspaceArg {
    /// This one given before the command, `after` after it: the later wins.
    pub(super) fn then(&self, after: &WorkspaceArg) -> WorkspaceArg {
        WorkspaceArg {
            workspace: after.workspace.clone().or_else(|| self.workspace.clone()),
        }
    }

    pub(super) fn dir(&self) -> &Path {
        self.workspace.as_deref().unwrap_or(Path::new("."))
    }
}

/// The compile cache, for every command that loads plugins.
#[derive(Debug, Clone, Default, Args)]
pub(super) struct CacheArgs {
    /// Compile cache directory [default: $TOOLHOST_CACHE_DIR, else ~/.cache/toolhost]
    #[arg(long, value_name = "DIR")]
    pub(super) cache_dir: Option<PathBuf>,
    /// Compile every plugin at start instead of using the compile cache
    #[arg(long)]
    no_cache: bool,
}

impl CacheArgs {
    fn then(&self, after: &CacheArgs) -> CacheArgs {
        CacheArgs {
            cache_dir: after.cache_dir.clone().or_else(|| self.cache_dir.clone()),
            no_cache: self.no_cache || after.no_cache,
        }
    }
}

/// The flags that shape the sandbox: where it is, its config, its plugins
/// and grants, and the compile cache.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Sandbox options")]
pub(super) struct SandboxArgs {
    #[command(flatten)]
    pub(super) workspace: WorkspaceArg,
    /// Config file [default: <workspace>/toolhost.toml]
    #[arg(long, value_name = "FILE")]
    pub(super) config: Option<PathBuf>,
    /// Load every *.wasm in DIR (repeatable) [default: <workspace>/.toolhost/plugins]
    #[arg(long = "plugins", value_name = "DIR")]
    pub(super) plugins: Vec<PathBuf>,
    /// Let a tool (or every tool) read PATH, relative to the workspace (repeatable)
    #[arg(long, value_name = "[TOOL=]PATH")]
    pub(super) allow_read: Vec<String>,
    /// Let a tool (or every tool) read and write PATH (repeatable)
    #[arg(long, value_name = "[TOOL=]PATH")]
    pub(super) allow_write: Vec<String>,
    /// Let a tool (or every tool) send requests to PATTERN,
    /// scheme://host[:port] (repeatable)
    #[arg(long, value_name = "[TOOL=]PATTERN")]
    pub(super) allow_net: Vec<String>,
    /// Let TOOL read the host environment variable NAME (repeatable)
    #[arg(long, value_name = "TOOL=NAME")]
    pub(super) allow_env: Vec<String>,
    /// Let a tool (or every tool) run PROGRAM, found on your PATH, inside
    /// walls built from its grants; the `bash` tool runs it (repeatable)
    #[arg(long, value_name = "[TOOL=]PROGRAM")]
    pub(super) allow_exec: Vec<String>,
    #[command(flatten)]
    pub(super) cache: CacheArgs,
}

impl SandboxArgs {
    /// These flags given before the command, with `after` given after it:
    /// a repeatable flag keeps both, a single one takes the later.
    pub(super) fn then(&self, after: &SandboxArgs) -> SandboxArgs {
        SandboxArgs {
            workspace: self.workspace.then(&after.workspace),
            config: after.config.clone().or_else(|| self.config.clone()),
            plugins: [&self.plugins[..], &after.plugins[..]].concat(),
            allow_read: [&self.allow_read[..], &after.allow_read[..]].concat(),
            allow_write: [&self.allow_write[..], &after.allow_write[..]].concat(),
            allow_net: [&self.allow_net[..], &after.allow_net[..]].concat(),
            allow_env: [&self.allow_env[..], &after.allow_env[..]].concat(),
            allow_exec: [&self.allow_exec[..], &after.allow_exec[..]].concat(),
            cache: self.cache.then(&after.cache),
        }
    }

    pub(super) fn inputs(&self) -> ConfigInputs {
        ConfigInputs {
            workspace: self.workspace.dir().to_path_buf(),
            config_file: self.config.clone(),
            user_config_dir: config::user::config_dir(),
            plugin_dirs: self.plugins.clone(),
            allow_read: self.allow_read.clone(),
            allow_write: self.allow_write.clone(),
            allow_net: self.allow_net.clone(),
            allow_env: self.allow_env.clone(),
            allow_exec: self.allow_exec.clone(),
            cache_dir: self.cache.cache_dir.clone(),
            no_cache: self.cache.no_cache,
            host_writes: Vec::new(),
        }
    }
}

/// `plugin check`'s: the file replaces the plugin directories, and the
/// grants do not change what is checked.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Sandbox options")]
pub(super) struct CheckArgs {
    #[command(flatten)]
    workspace: WorkspaceArg,
    /// Config file [default: <workspace>/toolhost.toml]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    cache: CacheArgs,
}

impl From<&CheckArgs> for SandboxArgs {
    fn from(check: &CheckArgs) -> SandboxArgs {
        SandboxArgs {
            workspace: check.workspace.clone(),
            config: check.config.clone(),
            cache: check.cache.clone(),
            ..SandboxArgs::default()
        }
    }
}

/// An environment variable toolhost reads, and what for.
type EnvVar = (&'static str, &'static str);

const OPENAI_API_KEY: EnvVar = (
    "OPENAI_API_KEY",
    "The key for `--provider openai` (OpenAI's own API needs it; a server at --base-url may not)",
);
const OPENAI_BASE_URL: EnvVar = (
    "OPENAI_BASE_URL",
    "The API root for `--provider openai` when neither --base-url nor `[model] base_url` sets one",
);
const ANTHROPIC_API_KEY: EnvVar = ("ANTHROPIC_API_KEY", "The key for `--provider anthropic`");
const RECORDS_MIB: EnvVar = (
    "TOOLHOST_RECORDS_MIB",
    "RUN,WORKSPACE in MiB: what a run's saved results and session file may take, and what the \
     workspace's earlier ones may [default: 256,1024]",
);
const RETRY_BACKOFF: EnvVar = (
    "TOOLHOST_RETRY_BACKOFF_MS",
    "The wait before a model request's first retry, doubled for each further one [default: 500]",
);
const CONFIG_DIR: EnvVar = (
    "TOOLHOST_CONFIG_DIR",
    "The user config directory (config.toml, the trust list) [default: \
     $XDG_CONFIG_HOME/toolhost, else ~/.config/toolhost]",
);
const CACHE_DIR: EnvVar = (
    "TOOLHOST_CACHE_DIR",
    "The compile cache, under --cache-dir [default: $XDG_CACHE_HOME/toolhost, else \
     ~/.cache/toolhost]",
);
const BASELINE_MIN_BYTES: EnvVar = (
    "TOOLHOST_BASELINE_MIN_BYTES",
    "A plugin not in the cache of at least this many bytes runs baseline code until its \
     optimized compile is done; `off`: always wait for that compile [default: 1048576]",
);
const BACKGROUND_COMPILE: EnvVar = (
    "TOOLHOST_BACKGROUND_COMPILE",
    "`off`: leave no optimized compile to a background process at exit [default: on]",
);

const HOMES: EnvVar = (
    "HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME",
    "Where the config and cache directories are when the two above do not say",
);
const EXEC_LOOKUP: EnvVar = (
    "PATH, CARGO_HOME, RUSTUP_HOME",
    "Where --allow-exec finds a program, and a Rust toolchain's homes (read-only in its walls)",
);

/// Every command that loads the sandbox and may leave compiles behind.
const SANDBOX: &[EnvVar] = &[
    CONFIG_DIR,
    CACHE_DIR,
    HOMES,
    BASELINE_MIN_BYTES,
    BACKGROUND_COMPILE,
    EXEC_LOOKUP,
];

/// `toolhost run`: the model's, then the sandbox's.
pub(super) fn run_environment() -> String {
    environment(&[
        OPENAI_API_KEY,
        OPENAI_BASE_URL,
        ANTHROPIC_API_KEY,
        RETRY_BACKOFF,
        RECORDS_MIB,
        CONFIG_DIR,
        CACHE_DIR,
        HOMES,
        BASELINE_MIN_BYTES,
        BACKGROUND_COMPILE,
        EXEC_LOOKUP,
    ])
}

/// `tools`, `call`, `plugin check`, `mcp`.
pub(super) fn sandbox_environment() -> String {
    environment(SANDBOX)
}

/// `plugin add`, which compiles with the optimizing compiler at once.
pub(super) fn add_environment() -> String {
    environment(&[CONFIG_DIR, CACHE_DIR, HOMES])
}

/// `trust`, which edits the trust list.
pub(super) fn trust_environment() -> String {
    environment(&[CONFIG_DIR, HOMES])
}

/// `toolhost --help`: where the flags go, and every variable.
pub(super) fn top_environment() -> String {
    format!(
        "The sandbox options go before the command or after it; `toolhost COMMAND --help` lists \
         the ones each command uses.\n\n{}",
        run_environment()
    )
}

/// An `Environment:` section laid out as clap lays out options.
fn environment(vars: &[EnvVar]) -> String {
    let width = vars.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let mut text = String::from("Environment:\n");
    for (name, meaning) in vars {
        text.push_str(&format!("  {name:width$}  {meaning}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own checks of the definitions (duplicate flags, a `mut_arg`
    /// naming no flag), which it otherwise makes only when a command runs.
    #[test]
    fn the_command_line_definitions_are_consistent() {
        <super::super::Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn flags_after_the_command_add_to_or_replace_those_before_it() {
        let before = SandboxArgs {
            workspace: WorkspaceArg {
                workspace: Some("w".into()),
            },
            config: Some("a.toml".into()),
            allow_read: vec!["src".into()],
            ..SandboxArgs::default()
        };
        let after = SandboxArgs {
            config: Some("b.toml".into()),
            allow_read: vec!["docs".into()],
            ..SandboxArgs::default()
        };
        let joined = before.then(&after);
        assert_eq!(joined.workspace.dir(), Path::new("w"));
        assert_eq!(joined.config, Some("b.toml".into()));
        assert_eq!(joined.allow_read, ["src", "docs"]);
        assert_eq!(SandboxArgs::default().workspace.dir(), Path::new("."));
    }

    #[test]
    fn the_environment_section_is_aligned_like_the_options() {
        assert_eq!(
            environment(&[ANTHROPIC_API_KEY, CONFIG_DIR]),
            "Environment:\n  ANTHROPIC_API_KEY    The key for `--provider anthropic`\n  \
             TOOLHOST_CONFIG_DIR  The user config directory (config.toml, the trust list) \
             [default: $XDG_CONFIG_HOME/toolhost, else ~/.config/toolhost]\n"
        );
    }
}

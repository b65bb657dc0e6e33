//! The command line: clap definitions, one function per command, and the
//! mapping of results to exit codes. Only `render` prints.

mod render;

use std::io::Read as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::{Args, Parser, Subcommand};

use crate::config::{self, ConfigInputs};
use crate::sandbox::{CallOptions, Sandbox};

/// Exit codes, in one place (DESIGN.md section 6).
pub mod exit {
    pub const OK: u8 = 0;
    /// An error, including a tool call that ended as `isError`.
    pub const ERROR: u8 = 1;
    /// Bad command-line usage (clap's own code).
    pub const USAGE: u8 = 2;
}

/// Run LLM agent tools as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the loaded tools with their plugin, grants and limits.
    Tools {
        /// Print JSON (one object with `tools` and `load_errors`).
        #[arg(long)]
        json: bool,
    },
    /// Call one tool directly, as the model would, and print its result.
    ///
    /// On an `isError` result the error text goes to stderr and the exit
    /// code is 1.
    Call {
        /// The tool's name (see `toolhost tools`).
        tool: String,
        /// The input as a JSON object, or `-` to read it from stdin.
        #[arg(default_value = "{}")]
        input: String,
    },
    /// Work with plugin files.
    #[command(subcommand)]
    Plugin(PluginCommand),
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Check that FILE is a loadable toolhost plugin and print its tools.
    Check {
        /// The plugin's `.wasm` file.
        file: PathBuf,
    },
}

/// Flags that shape the sandbox, accepted by every command.
#[derive(Debug, Args)]
struct SandboxArgs {
    /// The workspace: the directory tools see as `.`.
    #[arg(long, global = true, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,
    /// Config file [default: <workspace>/toolhost.toml].
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Load every *.wasm in DIR (repeatable) [default: <workspace>/.toolhost/plugins].
    #[arg(long = "plugins", global = true, value_name = "DIR")]
    plugins: Vec<PathBuf>,
    /// Let a tool (or every tool) read PATH, relative to the workspace (repeatable).
    #[arg(long, global = true, value_name = "[TOOL=]PATH")]
    allow_read: Vec<String>,
    /// Let a tool (or every tool) read and write PATH (repeatable).
    #[arg(long, global = true, value_name = "[TOOL=]PATH")]
    allow_write: Vec<String>,
    /// Compile cache directory [default: $TOOLHOST_CACHE_DIR, else ~/.cache/toolhost].
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile every plugin at start instead of using the compile cache.
    #[arg(long, global = true)]
    no_cache: bool,
}

impl SandboxArgs {
    fn inputs(&self) -> ConfigInputs {
        ConfigInputs {
            workspace: self.workspace.clone(),
            config_file: self.config.clone(),
            plugin_dirs: self.plugins.clone(),
            allow_read: self.allow_read.clone(),
            allow_write: self.allow_write.clone(),
            cache_dir: self.cache_dir.clone(),
            no_cache: self.no_cache,
        }
    }
}

/// Runs the parsed command line; returns the process exit code.
pub async fn run(cli: Cli) -> anyhow::Result<u8> {
    match &cli.command {
        Command::Tools { json } => {
            let sandbox = load_sandbox(&cli.sandbox, None).await?;
            render::tools(&sandbox, *json)?;
            Ok(exit::OK)
        }
        Command::Call { tool, input } => {
            let input = if input == "-" {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .context("reading the tool input from stdin")?;
                text
            } else {
                input.clone()
            };
            let sandbox = load_sandbox(&cli.sandbox, None).await?;
            let report = sandbox.call(tool, &input, &CallOptions::default()).await;
            render::call_result(tool, &report)?;
            Ok(if report.outcome.is_error() {
                exit::ERROR
            } else {
                exit::OK
            })
        }
        Command::Plugin(PluginCommand::Check { file }) => {
            if !file.is_file() {
                bail!(
                    "plugin file `{}` does not exist or is not a file",
                    file.display()
                );
            }
            let sandbox = load_sandbox(&cli.sandbox, Some(file)).await?;
            render::plugin_check(&sandbox, file)
        }
    }
}

/// Resolves the configuration and loads the sandbox. With `only_file`, the
/// plugin directories are replaced by that one file (for `plugin check`).
async fn load_sandbox(args: &SandboxArgs, only_file: Option<&PathBuf>) -> anyhow::Result<Sandbox> {
    let resolved = config::resolve(&args.inputs())?;
    let mut options = resolved.sandbox;
    if let Some(file) = only_file {
        options.plugin_dirs = Vec::new();
        options.plugin_files = vec![file.clone()];
    }
    let policy = options.policy.clone();
    let sandbox = Sandbox::load(options).await?;
    let mut warnings = resolved.warnings;
    warnings.extend(config::unknown_tool_warnings(
        &policy,
        sandbox.tools().iter().map(|t| t.name.as_str()),
    ));
    if only_file.is_none() {
        render::load_problems(&sandbox, &warnings);
    }
    Ok(sandbox)
}

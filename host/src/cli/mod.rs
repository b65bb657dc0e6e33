//! The command line: clap definitions and one function per command. Only
//! `render` prints; only `exit` decides exit codes.

mod background;
pub mod exit;
mod flags;
mod headless;
mod instructions;
mod plugin_add;
mod render;
mod scaffold;
mod session;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::{Args, Parser, Subcommand};
use exit::Ended;

use crate::config::{self, ProviderKind};
use crate::sandbox::{CallOptions, Sandbox};
use crate::transcript::show::Summary;
use crate::transcript::{SessionFile, SessionStore};
use crate::workspace::{self, Layout};
use flags::{CheckArgs, SandboxArgs, WorkspaceArg};

/// Run LLM agent tools as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(
    name = "toolhost",
    version,
    about,
    max_term_width = 100,
    after_help = flags::top_environment()
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The sandbox flags given before the command.
    #[command(flatten)]
    before: SandboxArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Give a model a task and let it use the tools until it is done.
    #[command(after_help = flags::run_environment())]
    Run(RunArgs),
    /// List the loaded tools with their plugin, grants and limits.
    #[command(after_help = flags::sandbox_environment())]
    Tools {
        /// Print JSON (one object with `tools` and `load_errors`).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Call one tool directly, as the model would, and print its result.
    ///
    /// On an `isError` result the error text goes to stderr and the exit
    /// code is 1.
    #[command(after_help = flags::sandbox_environment())]
    Call {
        /// The tool's name (see `toolhost tools`).
        tool: String,
        /// The input as a JSON object, or `-` to read it from stdin.
        #[arg(default_value = "{}")]
        input: String,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Work with plugin files.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// List the recorded sessions, newest first, or show one.
    // `sessions show ID --workspace DIR` too, as `--session-dir`.
    #[command(mut_arg("workspace", |arg| arg.global(true)))]
    Sessions(SessionsArgs),
    /// Trust a workspace: let its own toolhost.toml grant directories outside
    /// it, raise limits over your own config, and choose a model server
    /// elsewhere than this machine (as may its resumed session files).
    ///
    /// A workspace's toolhost.toml and session files may have come with the
    /// repository, so by default its toolhost.toml may grant only inside the
    /// workspace and only lower limits. The list is kept in the user config
    /// directory ($TOOLHOST_CONFIG_DIR, else $XDG_CONFIG_HOME/toolhost, else
    /// ~/.config/toolhost).
    #[command(after_help = flags::trust_environment())]
    Trust(TrustArgs),
    /// Serve the tools to an MCP client (Claude Code, Codex, Gemini CLI, ...)
    /// over stdio, with the same grants and limits as `run`.
    ///
    /// Stdout carries the protocol only; messages go to stderr. The server
    /// stops when the client closes stdin (with --http, at Ctrl+C). Every call is recorded in a
    /// session file, made at the first call, that `toolhost sessions` lists
    /// under MCP servers, unless --no-session. Each result is recorded up to
    /// 4 KiB; past 8 MiB the calls go on in a new file, and a server keeps
    /// its last 4.
    #[command(after_help = flags::sandbox_environment())]
    Mcp(McpArgs),
    /// Compile the optimized code of plugins a command left on baseline
    /// code into the compile cache (--cache-dir). toolhost starts this
    /// itself, in the background.
    #[command(name = background::COMMAND, hide = true)]
    CompileOptimized {
        /// A standard tool, by name (repeatable).
        #[arg(long = "builtin", value_name = "NAME")]
        builtins: Vec<String>,
        /// Bytes a plugin file may have, as the command that left the
        /// compiles held them.
        #[arg(long, value_name = "BYTES", default_value_t = crate::sandbox::DEFAULT_PLUGIN_FILE_LIMIT)]
        file_limit: u64,
        /// Plugin files.
        files: Vec<PathBuf>,
        /// The compile cache (also taken before the command, as toolhost
        /// passes it).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
struct McpArgs {
    /// Do not record the calls in a session file.
    #[arg(long)]
    no_session: bool,
    /// Where the session file goes [default: <workspace>/.toolhost/sessions].
    #[arg(long, value_name = "DIR")]
    session_dir: Option<PathBuf>,
    /// Bytes a session file may reach before the calls go on in a new one
    /// (for tests: the real cap is 8 MiB).
    #[arg(long, hide = true, value_name = "BYTES", default_value_t = crate::transcript::AUDIT_FILE_MAX)]
    session_file_max_bytes: u64,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio, until
    /// Ctrl+C. ADDR is HOST:PORT, or a port on 127.0.0.1. Requests must name
    /// a loopback host (or the address served) in Host and Origin, and
    /// carry `Authorization: Bearer TOKEN`: the token is made on first use,
    /// kept in mcp-token in the user config directory (mode 0600) and
    /// printed on stderr at start.
    #[arg(long, value_name = "ADDR", value_parser = crate::mcp::parse_listen)]
    http: Option<std::net::SocketAddr>,
    /// Take the bearer token from FILE (one line of at least 32
    /// characters, readable by you only), or make one there if it does not
    /// exist.
    #[arg(long, value_name = "FILE", requires = "http")]
    http_token_file: Option<PathBuf>,
    /// Serve --http without a token: any local user or program that can
    /// reach the port can call the tools.
    #[arg(long, requires = "http", conflicts_with = "http_token_file")]
    http_no_auth: bool,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
struct TrustArgs {
    /// The workspace [default: --workspace, else the current directory].
    dir: Option<PathBuf>,
    #[command(flatten)]
    workspace: WorkspaceArg,
    /// Print the trusted workspaces, one per line.
    #[arg(long, conflicts_with_all = ["dir", "remove"])]
    list: bool,
    /// Stop trusting the workspace.
    #[arg(long)]
    remove: bool,
}

#[derive(Debug, Args)]
struct SessionsArgs {
    #[command(subcommand)]
    command: Option<SessionsCommand>,
    #[command(flatten)]
    workspace: WorkspaceArg,
    /// Where the session files are [default: <workspace>/.toolhost/sessions].
    #[arg(long, global = true, value_name = "DIR")]
    session_dir: Option<PathBuf>,
    /// Print the list as JSON (an array of summaries).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// Print one session: one line per model step and per tool call.
    Show {
        /// A session id, a unique prefix of one, or `last`.
        id: String,
        /// Print one call whole instead: its arguments and the text the
        /// model read (`call=ID` on the session's lines).
        #[arg(long, value_name = "CALL")]
        call: Option<String>,
    },
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The task. `-` or no argument with piped stdin reads it from stdin.
    prompt: Option<String>,
    /// The model's wire API: `openai` (also Ollama, vLLM, llama.cpp with
    /// --base-url), `anthropic`, or `scripted` (replays --script offline).
    #[arg(long, value_enum)]
    provider: Option<ProviderKind>,
    /// The scripted model's turns (JSON; format in docs/using/run.md).
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// The model name, for `openai` and `anthropic`.
    #[arg(long)]
    model: Option<String>,
    /// The API's base URL, for `openai` and `anthropic`.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Stop after this many model replies.
    #[arg(long, default_value_t = 100, value_name = "N")]
    max_turns: u32,
    /// Stop reading a model reply past this many MiB of text, reasoning and
    /// tool-call arguments (its calls do not run) [default: `[model]
    /// max_reply_mib`, else 8].
    #[arg(long, value_name = "MIB")]
    max_reply_mib: Option<u64>,
    /// Warn the model after this many identical calls in a row (same tool,
    /// same arguments).
    #[arg(long, default_value_t = 3, value_name = "N")]
    loop_warn_after: u32,
    /// Stop the run (exit 4) after this many identical calls in a row.
    #[arg(long, default_value_t = 5, value_name = "N")]
    loop_stop_after: u32,
    /// Replace the default system prompt with this file's text.
    #[arg(long, value_name = "FILE")]
    system: Option<PathBuf>,
    /// Text added after the system prompt.
    #[arg(long, value_name = "TEXT")]
    append_system: Option<String>,
    /// How to print the run.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output_format: OutputFormat,
    /// How to read input: `text` (the prompt only), or `stream-json` (JSON
    /// lines on stdin: prompts, messages for a run while it works,
    /// interrupts; format in docs/reference/stream-json-input.md).
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    input_format: InputFormat,
    /// How a run takes messages queued while it works: `one-at-a-time`
    /// (the model answers each) or `all` [default: `[chat] delivery`, else
    /// one-at-a-time].
    #[arg(long, value_enum, value_name = "MODE")]
    delivery: Option<crate::agent::DeliveryMode>,
    /// Continue a recorded session with a new prompt: `last`, or an id from
    /// `toolhost sessions`.
    #[arg(long, value_name = "ID|last")]
    resume: Option<String>,
    /// Do not record this run in a session file.
    #[arg(long)]
    no_session: bool,
    /// Leave the workspace's AGENTS.md (else CLAUDE.md) out of the system
    /// prompt.
    #[arg(long)]
    no_project_instructions: bool,
    /// Where session files go [default: <workspace>/.toolhost/sessions].
    #[arg(long, value_name = "DIR")]
    session_dir: Option<PathBuf>,
    /// A tool result longer than this many KiB reaches the model as its
    /// head and tail; the whole text is saved in .toolhost/outputs.
    #[arg(long, default_value_t = crate::agent::DEFAULT_RESULT_BUDGET / 1024, value_name = "KIB")]
    result_budget: usize,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

/// How `toolhost run` reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InputFormat {
    /// The prompt, from the argument or stdin.
    Text,
    /// One JSON object per line on stdin, for as long as it is open.
    StreamJson,
}

/// How `toolhost run` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// The assistant's text on stdout, one line per tool call on stderr.
    Text,
    /// One JSON object at the end.
    Json,
    /// One JSON event per line as the run goes.
    StreamJson,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Install FILE into the plugins directory [default: <workspace>/.toolhost/plugins,
    /// else the first --plugins DIR], compiled now with the optimizing compiler so
    /// later starts load it from the cache at once.
    #[command(after_help = flags::add_environment())]
    Add {
        /// The plugin's `.wasm` file.
        file: PathBuf,
        /// Replace an installed plugin of the same file name.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Check that FILE is a loadable toolhost plugin and print its tools.
    #[command(after_help = flags::sandbox_environment())]
    Check {
        /// The plugin's `.wasm` file.
        file: PathBuf,
        #[command(flatten)]
        load: CheckArgs,
    },
    /// Write a new plugin project: the WIT, one tool with its schema, the
    /// build command and a README. It builds as written and loads.
    New {
        /// The tool's name, [a-zA-Z0-9_-]{1,64}.
        name: String,
        /// The language of the project.
        #[arg(long, value_enum, default_value = "rust")]
        lang: scaffold::Lang,
        /// Where to write it [default: ./NAME]; must be new or empty.
        dir: Option<PathBuf>,
    },
}

/// Runs the parsed command line; [`exit`] turns the result into the
/// process's exit code.
pub async fn run(cli: Cli) -> anyhow::Result<Ended> {
    let before = &cli.before;
    match &cli.command {
        Command::Run(args) => run_agent(&before.then(&args.sandbox), args).await,
        Command::Tools { json, sandbox } => {
            let sandbox = load_sandbox(&before.then(sandbox), None).await?;
            render::tools(&sandbox, *json)?;
            background::hand_off(&sandbox);
            Ok(Ended::Done)
        }
        Command::Call {
            tool,
            input,
            sandbox,
        } => {
            let args = before.then(sandbox);
            let input = if input == "-" {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .context("reading the tool input from stdin")?;
                text
            } else {
                input.clone()
            };
            let sandbox = load_sandbox(&args, None).await?;
            let report = sandbox.call(tool, &input, &CallOptions::default()).await;
            render::call_result(tool, &report)?;
            background::hand_off(&sandbox);
            Ok(if report.is_error() {
                Ended::Failed
            } else {
                Ended::Done
            })
        }
        Command::Plugin(PluginCommand::New { name, lang, dir }) => {
            let dir = scaffold::new_plugin(name, *lang, dir.as_deref())?;
            render::plugin_created(&dir, &scaffold::build_command(name, *lang), name);
            Ok(Ended::Done)
        }
        Command::Plugin(PluginCommand::Add {
            file,
            force,
            sandbox,
        }) => {
            let added = plugin_add::add(&before.then(sandbox), file, *force).await?;
            render::plugin_added(&added.installed, &added.tools, added.unchanged);
            Ok(Ended::Done)
        }
        Command::Plugin(PluginCommand::Check { file, load }) => {
            if !file.is_file() {
                bail!(
                    "plugin file `{}` does not exist or is not a file",
                    file.display()
                );
            }
            let args = before.then(&SandboxArgs::from(load));
            let sandbox = load_sandbox(&args, Some(file)).await?;
            let checked = render::plugin_check(&sandbox, file);
            background::hand_off(&sandbox);
            checked
        }
        Command::Trust(args) => trust(args, before.workspace.then(&args.workspace).dir()),
        Command::Mcp(args) => serve_mcp(&before.then(&args.sandbox), args).await,
        Command::CompileOptimized {
            builtins,
            files,
            file_limit,
            cache_dir,
        } => {
            background::compile(
                cache_dir.as_deref().or(before.cache.cache_dir.as_deref()),
                builtins,
                files,
                *file_limit,
            )?;
            Ok(Ended::Done)
        }
        Command::Sessions(args) => {
            let workspace = before.workspace.then(&args.workspace);
            let store = session_store(args.session_dir.as_ref(), workspace.dir());
            match &args.command {
                None => {
                    let mut sessions = Vec::new();
                    for path in store.list()? {
                        sessions.push(SessionFile::read(&path).map(|file| {
                            let mut summary = Summary::of(&file);
                            // Only a file without a stop record may still
                            // be written; the lock says whether it is.
                            summary.running =
                                summary.stop.is_none() && crate::transcript::in_use(&path);
                            summary
                        }));
                    }
                    render::sessions(store.dir(), &sessions, args.json)?;
                }
                Some(SessionsCommand::Show { id, call: None }) => {
                    let path = store.find(id)?;
                    let file = SessionFile::read(&path)?;
                    render::session(&file, crate::transcript::in_use(&path))?;
                }
                Some(SessionsCommand::Show {
                    id,
                    call: Some(call),
                }) => {
                    let file = SessionFile::read(&store.find(id)?)?;
                    let Some(lines) = crate::transcript::show::call(&file, call) else {
                        anyhow::bail!(
                            "session `{}` has no call `{call}`: `toolhost sessions show {id}` lists \
                             each call as `call=ID`",
                            crate::transcript::id_of(&file.path)
                        );
                    };
                    render::session_call(&lines)?;
                }
            }
            Ok(Ended::Done)
        }
    }
}

/// `toolhost trust`: add, remove or list trusted workspaces.
fn trust(args: &TrustArgs, workspace: &Path) -> anyhow::Result<Ended> {
    let dir = config::user::config_dir().ok_or_else(|| {
        anyhow::anyhow!(
            "no user config directory: set TOOLHOST_CONFIG_DIR, XDG_CONFIG_HOME or HOME"
        )
    })?;
    let mut list = config::TrustList::load(&dir)?;
    if args.list {
        render::trusted(&list)?;
        return Ok(Ended::Done);
    }
    let given = args.dir.as_deref().unwrap_or(workspace);
    let canonical = given.canonicalize().with_context(|| {
        format!(
            "workspace `{}` does not exist; pass an existing directory",
            given.display()
        )
    })?;
    let changed = if args.remove {
        list.remove(&canonical)
    } else {
        list.add(canonical.clone())
    };
    if changed {
        list.save()
            .with_context(|| format!("writing `{}`", list.path().display()))?;
    }
    render::trust_changed(&canonical, args.remove, changed, list.path());
    Ok(Ended::Done)
}

/// `toolhost mcp`: load the tools, then serve them until stdin closes.
async fn serve_mcp(sandbox_args: &SandboxArgs, args: &McpArgs) -> anyhow::Result<Ended> {
    let resolved = config::resolve(&sandbox_args.inputs())?;
    let store = session_store(args.session_dir.as_ref(), &resolved.sandbox.workspace);
    let mut reload = resolved.sandbox.clone();
    if sandbox_args.plugins.is_empty() {
        // Watched even when it does not exist yet, so a first plugin
        // dropped into a new `.toolhost/plugins` is picked up.
        reload.plugin_dirs = vec![Layout::of(&reload.workspace).plugins_dir()];
    }
    let sandbox = load_resolved(resolved, None).await?;
    let options = crate::mcp::ServeOptions {
        sessions: (!args.no_session).then_some(store),
        session_file_max_bytes: Some(args.session_file_max_bytes),
        reload: Some(reload),
        // A server stopped before its own optimized compiles finished
        // leaves them to a background process, as one-shot commands do.
        at_exit: Some(background::hand_off),
    };
    match args.http {
        Some(addr) => {
            let auth = http_auth(args)?;
            crate::mcp::serve_http(sandbox, options, addr, auth, shutdown_signal()).await?;
        }
        None => crate::mcp::serve_stdio(sandbox, options).await?,
    }
    Ok(Ended::Done)
}

/// The token `mcp --http` requires: from --http-token-file, else the user
/// config directory's, made there on first use.
fn http_auth(args: &McpArgs) -> anyhow::Result<crate::mcp::HttpAuth> {
    if args.http_no_auth {
        return Ok(crate::mcp::HttpAuth::Off);
    }
    let file = match &args.http_token_file {
        Some(file) => file.clone(),
        None => config::user::config_dir()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "no user config directory to keep the MCP token in: set \
                     $TOOLHOST_CONFIG_DIR, or pass --http-token-file FILE"
                )
            })?
            .join(config::user::MCP_TOKEN_FILE),
    };
    Ok(crate::mcp::HttpAuth::Token(
        crate::mcp::Token::load_or_create(&file)?,
    ))
}

/// Resolves at Ctrl+C or SIGTERM. The handlers are installed now, not at
/// the first poll: a client may stop the server as soon as it has printed
/// its address, before it serves.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate()).ok();
    let interrupt = signal(SignalKind::interrupt()).ok();
    async move {
        tokio::select! {
            () = received(interrupt) => {}
            () = received(term) => {}
        }
    }
}

/// Resolves when `signal` arrives; never without one.
async fn received(signal: Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(mut signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// The command that continues this run, pasted in any directory: the
/// workspace and every path made absolute, the plugin directories and
/// grants as given (a grant's path is the workspace's), and `--script` for
/// a scripted run (the session file records the rest of the model).
fn resume_command(
    sandbox_args: &SandboxArgs,
    args: &RunArgs,
    workspace: &Path,
) -> render::ResumeCommand {
    let absolute = |path: &Path| {
        std::path::absolute(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string()
    };
    let mut before = vec!["toolhost".to_string()];
    let flag = |words: &mut Vec<String>, name: &str, value: String| {
        words.push(name.to_string());
        words.push(render::shell_word(&value));
    };
    flag(&mut before, "--workspace", workspace.display().to_string());
    if let Some(config) = &sandbox_args.config {
        flag(&mut before, "--config", absolute(config));
    }
    for dir in &sandbox_args.plugins {
        flag(&mut before, "--plugins", absolute(dir));
    }
    for grant in &sandbox_args.allow_read {
        flag(&mut before, "--allow-read", grant.clone());
    }
    for grant in &sandbox_args.allow_write {
        flag(&mut before, "--allow-write", grant.clone());
    }
    before.extend(["run".to_string(), "--resume".to_string()]);
    let mut after = Vec::new();
    if let Some(script) = &args.script {
        flag(&mut after, "--script", absolute(script));
    }
    if let Some(dir) = &args.session_dir {
        flag(&mut after, "--session-dir", absolute(dir));
    }
    render::ResumeCommand {
        before_id: before.join(" "),
        after_id: after.iter().map(|word| format!(" {word}")).collect(),
    }
}

/// The session directory: `--session-dir`, else the workspace's.
fn session_store(dir: Option<&PathBuf>, workspace: &Path) -> SessionStore {
    match dir {
        Some(dir) => SessionStore::new(dir.clone()),
        None => SessionStore::in_workspace(workspace),
    }
}

/// `toolhost run`: resolve the model, load the tools, open the session
/// file (new, or the one resumed), run the loop, print, and map the stop
/// reason to the exit code.
async fn run_agent(sandbox_args: &SandboxArgs, args: &RunArgs) -> anyhow::Result<Ended> {
    use crate::agent::{
        AgentLoop, Inbox, LoopConfig, ResultBudget, StopRecord, default_system_prompt,
    };
    use instructions::ProjectInstructions;

    if args.loop_warn_after == 0 || args.loop_stop_after == 0 {
        return Err(UsageError(
            "--loop-warn-after and --loop-stop-after must be at least 1".into(),
        )
        .into());
    }
    if args.result_budget == 0 {
        return Err(UsageError("--result-budget must be at least 1 (KiB)".into()).into());
    }
    if args.max_reply_mib == Some(0) {
        return Err(UsageError("--max-reply-mib must be at least 1 (MiB)".into()).into());
    }
    let resolved = config::resolve(&sandbox_args.inputs())?;
    let workspace = resolved.sandbox.workspace.clone();
    let resolved_delivery = resolved.chat.delivery.map(|setting| match setting {
        config::DeliverySetting::OneAtATime => crate::agent::DeliveryMode::OneAtATime,
        config::DeliverySetting::All => crate::agent::DeliveryMode::All,
    });
    let store = session_store(args.session_dir.as_ref(), &workspace);
    let resumed = match &args.resume {
        Some(which) => Some(SessionFile::read(&store.find(which)?)?),
        None => None,
    };
    if let Some(file) = &resumed {
        render::warnings(&session::resume_warnings(file, &workspace));
    }
    let flags = config::ModelFlags {
        provider: args.provider,
        script: args.script.clone(),
        model: args.model.clone(),
        base_url: args.base_url.clone(),
    };
    // Before any request: a session file's server is checked here.
    let model = config::resolve_model(
        &flags,
        &resolved.model,
        resumed.as_ref().map(|file| {
            let start = file.last_start();
            config::RecordedModel {
                provider: &start.provider,
                model: start.model.as_deref(),
                base_url: start.base_url.as_deref(),
                file: &file.path,
                workspace: &workspace,
                trusted: resolved.trusted,
            }
        }),
    )?
    .with_max_reply_bytes(
        args.max_reply_mib
            .map_or(resolved.max_reply_bytes, |mib| mib.saturating_mul(1 << 20)),
    );
    let headless = args.input_format == InputFormat::StreamJson;
    let prompt = if headless {
        // The argument, if any, is the first prompt; stdin has the rest.
        args.prompt.clone().filter(|prompt| prompt != "-")
    } else {
        Some(read_prompt(args.prompt.as_deref())?)
    };

    let sandbox = load_resolved(resolved, None).await?;
    let mut system = match &args.system {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("reading the system prompt file `{}`", path.display()))?,
        None => default_system_prompt(&sandbox),
    };
    if let Some(extra) = &args.append_system {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    let mut instructions = ProjectInstructions::new(
        &workspace,
        !args.no_project_instructions,
        system,
        resumed
            .as_ref()
            .and_then(|file| file.last_start().project_instructions.clone()),
    );
    let system = instructions.system_prompt();
    let config = LoopConfig {
        max_turns: args.max_turns,
        warn_after: args.loop_warn_after,
        stop_after: args.loop_stop_after,
        system_prompt: system,
        result_budget: Some(ResultBudget {
            max_bytes: args.result_budget.saturating_mul(1024),
            save_dir: Layout::of(&workspace).outputs_dir(),
            save_dir_for_model: workspace::OUTPUTS_DIR.into(),
        }),
    };

    let mut start = session::start_record(&model, &sandbox, &config);
    start.project_instructions = instructions.recorded();
    let writer = if args.no_session {
        None
    } else {
        Some(Arc::new(session::open(&store, resumed.as_ref(), start)?))
    };
    let mut ledger = match &resumed {
        Some(file) => session::resumed_ledger(file, writer.as_deref()),
        None => Vec::new(),
    };

    let cancel = tokio_util::sync::CancellationToken::new();
    spawn_ctrl_c_handler(cancel.clone());
    let renderer = render::RunRenderer::new(
        args.output_format,
        resume_command(sandbox_args, args, &workspace),
    );
    let sink = match &writer {
        Some(writer) => session::record_then(writer, renderer.sink()),
        None => renderer.sink(),
    };
    let mode = args.delivery.or(resolved_delivery).unwrap_or_default();
    let inbox = Inbox::new(mode).with_events(sink.clone());
    let mut agent = AgentLoop::new(model, &sandbox, config)
        .with_events(sink)
        .with_inbox(inbox.clone());
    let stop = match prompt {
        Some(prompt) if !headless => agent.run(&mut ledger, prompt, &cancel).await,
        first => {
            let mut failed = Ok(());
            let hooks = headless::Hooks {
                // Read again before each prompt: a tool may have changed it.
                system_prompt: &mut || instructions.refreshed(),
                after_run: &mut |ledger: &[crate::agent::Message], stop: &StopRecord| {
                    if failed.is_ok() {
                        failed = renderer.finish(ledger, stop, writer.as_deref());
                    }
                },
            };
            let last =
                headless::drive(&mut agent, &mut ledger, &inbox, first, &cancel, hooks).await;
            failed?;
            match last {
                Some(stop) => stop,
                None => {
                    background::hand_off(&sandbox);
                    return Err(UsageError(
                        "no prompt: stdin closed before a {\"type\":\"user\",...} line came".into(),
                    )
                    .into());
                }
            }
        }
    };
    if !headless {
        renderer.finish(&ledger, &stop, writer.as_deref())?;
    }
    background::hand_off(&sandbox);
    Ok(Ended::Run(stop.reason))
}

/// Prints the error a command failed with (escaped: its text may quote a
/// plugin, a tool or a shipped file), unless the reader of stdout went away,
/// and returns the process's exit code.
pub fn fail(error: &anyhow::Error) -> u8 {
    let code = exit::code_of_error(error);
    if code != exit::OK {
        render::error(error);
    }
    code
}

/// A bad command line found after parsing; exits with [`exit::USAGE`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The prompt from the argument, or from stdin for `-` or when stdin is piped.
fn read_prompt(arg: Option<&str>) -> anyhow::Result<String> {
    use std::io::IsTerminal as _;
    let from_stdin = match arg {
        Some("-") => true,
        Some(_) => false,
        None => !std::io::stdin().is_terminal(),
    };
    let prompt = if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the prompt from stdin")?;
        text
    } else {
        arg.unwrap_or_default().to_string()
    };
    if prompt.trim().is_empty() {
        return Err(UsageError(
            "no prompt: pass the task as an argument, or `-` to read it from stdin".into(),
        )
        .into());
    }
    Ok(prompt)
}

/// First Ctrl+C cancels the run (the model request and running tools stop
/// within one epoch tick); a second one exits at once.
fn spawn_ctrl_c_handler(cancel: tokio_util::sync::CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        cancel.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(exit::ABORTED));
        }
    });
}

/// Resolves the configuration and loads the sandbox. With `only_file`, the
/// plugin directories are replaced by that one file (for `plugin check`).
/// These commands exit right after: a plugin loaded with baseline code
/// keeps it rather than starting an optimized compile the exit would throw
/// away; the command leaves that compile to a background process
/// ([`background::hand_off`]).
async fn load_sandbox(args: &SandboxArgs, only_file: Option<&PathBuf>) -> anyhow::Result<Sandbox> {
    let mut resolved = config::resolve(&args.inputs())?;
    resolved.sandbox.tiering.optimize_in_background = false;
    load_resolved(resolved, only_file).await
}

/// Loads the sandbox of an already resolved configuration.
async fn load_resolved(
    resolved: config::Resolved,
    only_file: Option<&PathBuf>,
) -> anyhow::Result<Sandbox> {
    let config::Resolved {
        sandbox: mut options,
        notices,
        ..
    } = resolved;
    if let Some(file) = only_file {
        options.plugin_dirs = Vec::new();
        options.plugin_files = vec![file.clone()];
    }
    let policy = options.policy.clone();
    let progress = render::CompileProgress::new();
    let sandbox = Sandbox::load_with_progress(options, &|event| progress.event(event)).await?;
    if only_file.is_none() {
        let mut warnings = notices;
        warnings.extend(config::unknown_tool_warnings(
            &policy,
            sandbox.tools().iter().map(|t| t.name.as_str()),
        ));
        render::load_problems(&sandbox, &warnings);
    } else {
        render::warnings(&notices);
    }
    Ok(sandbox)
}

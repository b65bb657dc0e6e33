//! The command line: clap definitions and one function per command. Only
//! `render` prints; only `exit` decides exit codes.

mod background;
mod chat;
mod compact;
pub mod exit;
mod flags;
mod headless;
mod install;
mod instructions;
mod load;
mod plugin_add;
mod render;
mod run;
mod scaffold;
mod session;
mod setup;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::{Args, Parser, Subcommand};
use exit::Ended;
pub use exit::UsageError;
use load::{load_resolved, load_sandbox, session_store};

use crate::config;
use crate::sandbox::CallOptions;
use crate::transcript::SessionFile;
use crate::transcript::show::Summary;
use crate::workspace::Layout;
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
    Run(run::RunArgs),
    /// Chat with the agent in the terminal: one session, many prompts; type
    /// while it works to steer it (Enter) or queue a follow-up (Alt+Enter);
    /// /help in the chat lists the keys and commands.
    #[command(after_help = flags::run_environment())]
    Chat(chat::ChatArgs),
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
    /// reach the port can call the tools (and none is asked for a grant).
    #[arg(long, requires = "http", conflicts_with = "http_token_file")]
    http_no_auth: bool,
    /// Never ask the client for a grant a refused call needs. Use it when
    /// the client hands MCP elicitation to a model instead of a person: the
    /// answer is taken as yours.
    #[arg(long)]
    no_ask: bool,
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
    /// Compact one session now, as `/compact` does in a chat
    ///
    /// Old tool results are set aside and what came before the last turn is
    /// summarised by the model; `run --resume` goes on from the smaller
    /// conversation.
    Compact(compact::CompactArgs),
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Install FILE into the plugins directory [default: <workspace>/.toolhost/plugins,
    /// else the first --plugins DIR, or with --user your own], compiled now with the
    /// optimizing compiler so later starts load it from the cache at once.
    #[command(after_help = flags::add_environment())]
    Add {
        /// The plugin's `.wasm` file.
        file: PathBuf,
        /// Replace an installed plugin of the same file name.
        #[arg(long)]
        force: bool,
        /// Install into your own plugins directory (`plugins/` in the user
        /// config directory), which every workspace loads.
        #[arg(long)]
        user: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Build one of toolhost's code tools (`python`, `javascript`) with its
    /// pinned toolchain and install it like `plugin add`.
    ///
    /// The toolchain comes from $TOOLHOST_PLUGIN_TOOLCHAINS when set, else
    /// from the cache, where it is installed the first time (that needs
    /// python3 and PyPI for python, npm and its registry for javascript).
    /// The build is cached too: a second install, in any workspace, takes
    /// seconds.
    #[command(after_help = flags::add_environment())]
    Install {
        /// The tool to build.
        #[arg(value_enum)]
        tool: install::CodeTool,
        /// Replace an installed plugin of the same file name.
        #[arg(long)]
        force: bool,
        /// Install into your own plugins directory (`plugins/` in the user
        /// config directory), which every workspace loads.
        #[arg(long)]
        user: bool,
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
///
/// Long: one arm per subcommand, each a call into its module.
pub async fn run(cli: Cli) -> anyhow::Result<Ended> {
    let before = &cli.before;
    match &cli.command {
        Command::Run(args) => run::run_agent(&before.then(&args.sandbox), args).await,
        Command::Chat(args) => {
            chat::run_chat(
                &before.then(&args.sandbox),
                &args.agent,
                args.prompt.clone(),
            )
            .await
        }
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
            let installed = scaffold::installed_componentize_py();
            let build = scaffold::build_command(name, *lang, installed.as_deref());
            render::plugin_created(&dir, &build, name);
            Ok(Ended::Done)
        }
        Command::Plugin(PluginCommand::Add {
            file,
            force,
            user,
            sandbox,
        }) => {
            let added = plugin_add::add(&before.then(sandbox), file, *force, *user).await?;
            render::plugin_added(&added.installed, &added.tools, added.unchanged);
            Ok(Ended::Done)
        }
        Command::Plugin(PluginCommand::Install {
            tool,
            force,
            user,
            sandbox,
        }) => {
            let installed = install::install(
                &before.then(sandbox),
                *tool,
                *force,
                *user,
                &render::progress_note,
            )
            .await?;
            render::plugin_installed(&installed);
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
                Some(SessionsCommand::Compact(compact)) => {
                    let sandbox = before.then(&SandboxArgs {
                        workspace: args.workspace.clone(),
                        ..SandboxArgs::default()
                    });
                    return compact::compact(&sandbox, compact, args.session_dir.as_ref()).await;
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
    let mut inputs = sandbox_args.inputs();
    inputs.host_writes.extend(args.session_dir.iter().cloned());
    inputs
        .host_writes
        .extend(args.http_token_file.iter().cloned());
    let resolved = config::resolve(&inputs)?;
    resolved.new_dirs.create()?;
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
        no_ask: args.no_ask,
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

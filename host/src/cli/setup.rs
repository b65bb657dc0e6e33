//! What `run` and `chat` (and `sessions compact`) share: the flags of the
//! model, the loop and the session, and the setup they make from them (the
//! model, the tools, the system prompt, the session file and its ledger).
//! Neither front end is imported here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;

use super::flags::SandboxArgs;
use super::instructions::ProjectInstructions;
use super::load::{load_resolved, session_store};
use super::{UsageError, render, session};
use crate::agent::{
    DeliveryMode, LoopConfig, Message, ResultBudget, SavedOutputs, default_system_prompt,
};
use crate::config::{self, ProviderKind};
use crate::provider::Model;
use crate::provider::prices::{CostBudget, Prices};
use crate::sandbox::Sandbox;
use crate::transcript::{
    ContextWindowInfo, SessionBudget, SessionFile, SessionWriter, WindowSource,
};
use crate::workspace::{self, Layout};

/// The model, loop and session flags `run` and `chat` share.
#[derive(Debug, Args)]
pub(super) struct AgentArgs {
    /// The model's wire API: `openai` (also Ollama, vLLM, llama.cpp with
    /// --base-url), `anthropic`, or `scripted` (replays --script offline).
    #[arg(short, long, value_enum, help_heading = "Model")]
    pub(super) provider: Option<ProviderKind>,
    /// Play a scripted model offline: a JSON file of its replies, `{"turns":
    /// [{"text": "...", "tool_calls": [{"name": "read_file", "arguments":
    /// {"path": "a.txt"}}]}]}`.
    #[arg(long, value_name = "FILE", help_heading = "Model")]
    pub(super) script: Option<PathBuf>,
    /// The model name, for `openai` and `anthropic`.
    #[arg(short, long, help_heading = "Model")]
    pub(super) model: Option<String>,
    /// The API's base URL, for `openai` and `anthropic`.
    #[arg(long, value_name = "URL", help_heading = "Model")]
    pub(super) base_url: Option<String>,
    /// Stop after this many model replies.
    #[arg(long, default_value_t = 100, value_name = "N", help_heading = "Limits")]
    pub(super) max_turns: u32,
    /// Stop reading a model reply past this many MiB of text, reasoning and
    /// tool-call arguments (its calls do not run) [default: `[model]
    /// max_reply_mib`, else 8].
    #[arg(long, value_name = "MIB", help_heading = "Model")]
    pub(super) max_reply_mib: Option<u64>,
    /// Stop the run (exit 5) before a model request that would take the
    /// tokens it spends, in and out over all its requests, past N
    /// [default: `[run] max_tokens_total`, else no limit].
    #[arg(long, value_name = "N", help_heading = "Limits")]
    pub(super) max_tokens_total: Option<std::num::NonZeroU64>,
    /// Stop the run (exit 5) before a model request that would take what
    /// it spends past USD dollars, at `[model.prices]` [default: `[run]
    /// max_cost`, else no limit].
    #[arg(long, value_name = "USD", value_parser = positive_dollars, help_heading = "Limits")]
    pub(super) max_cost: Option<f64>,
    /// The model's context window in tokens [default: `[model]
    /// context_window`, else what a server on this machine says (vLLM,
    /// llama.cpp)].
    #[arg(long, value_name = "TOKENS", help_heading = "Model")]
    pub(super) context_window: Option<std::num::NonZeroU64>,
    /// Stop the run (exit 6) when one model request, its retries included,
    /// is still unanswered after this many seconds.
    #[arg(long, default_value_t = DEFAULT_REQUEST_TIMEOUT_SECS, value_name = "SECS", help_heading = "Model")]
    pub(super) request_timeout: u64,
    /// Stop the run (exit 6, as at --request-timeout) when a model reply
    /// streams no content (nothing, or only comments, pings or empty deltas) for this
    /// many seconds [config: [model] content_timeout, else 120].
    #[arg(long, value_name = "SECS", help_heading = "Model")]
    pub(super) content_timeout: Option<u64>,
    /// Warn the model after this many identical calls in a row (same tool,
    /// same arguments).
    #[arg(long, default_value_t = 3, value_name = "N", help_heading = "Limits")]
    pub(super) loop_warn_after: u32,
    /// Stop the run (exit 4) after this many identical calls in a row.
    #[arg(long, default_value_t = 5, value_name = "N", help_heading = "Limits")]
    pub(super) loop_stop_after: u32,
    /// Replace the default system prompt with this file's text.
    #[arg(long, value_name = "FILE", help_heading = "Prompt")]
    pub(super) system: Option<PathBuf>,
    /// Text added after the system prompt.
    #[arg(long, value_name = "TEXT", help_heading = "Prompt")]
    pub(super) append_system: Option<String>,
    /// How a run takes messages queued while it works: `one-at-a-time`
    /// (the model answers each) or `all` [default: `[chat] delivery`, else
    /// one-at-a-time].
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Prompt")]
    pub(super) delivery: Option<crate::agent::DeliveryMode>,
    /// Continue a recorded session with a new prompt: `last`, or an id from
    /// `toolhost sessions`.
    #[arg(long, value_name = "ID|last", help_heading = "Session")]
    pub(super) resume: Option<String>,
    /// Do not record this run in a session file.
    #[arg(long, help_heading = "Session")]
    pub(super) no_session: bool,
    /// Leave the workspace's AGENTS.md (else CLAUDE.md) out of the system
    /// prompt.
    #[arg(long, help_heading = "Prompt")]
    pub(super) no_project_instructions: bool,
    /// Where session files go [default: <workspace>/.toolhost/sessions].
    #[arg(long, value_name = "DIR", help_heading = "Session")]
    pub(super) session_dir: Option<PathBuf>,
    /// A tool result longer than this many KiB reaches the model as its
    /// head and tail; the whole text is saved in .toolhost/outputs.
    #[arg(long, default_value_t = crate::agent::DEFAULT_RESULT_BUDGET / 1024, value_name = "KIB", help_heading = "Limits")]
    pub(super) result_budget: usize,
}

/// `--max-cost`'s value: dollars above 0.
fn positive_dollars(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 => Ok(value),
        _ => Err(format!(
            "`{text}` is not an amount of US dollars above 0 (e.g. 0.50)"
        )),
    }
}

/// `--request-timeout`'s default: generous, since a long reply of a slow
/// local model streams for minutes; the stream's own idle timeout catches a
/// server that went silent much sooner.
const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 600;

/// What `run` and `chat` start from: everything but the front end.
pub(super) struct Prepared<T> {
    pub(super) workspace: PathBuf,
    pub(super) sandbox: Sandbox,
    pub(super) model: Model,
    pub(super) config: LoopConfig,
    pub(super) writer: Option<Arc<SessionWriter>>,
    /// The resumed session's ledger, or empty.
    pub(super) ledger: Vec<Message>,
    pub(super) instructions: ProjectInstructions,
    pub(super) delivery: DeliveryMode,
    /// `[model.prices]`, for the cost figures.
    pub(super) prices: Option<Prices>,
    /// The session's first record, for a new session in the same chat.
    pub(super) start: crate::transcript::SessionStart,
    pub(super) store: crate::transcript::SessionStore,
    /// What the user granted for the resumed session (sealed by their key
    /// and allowed again), or none.
    pub(super) grants: crate::agent::SessionGrants,
    /// What `before_load` returned.
    pub(super) early: T,
}

/// Checks the flags, resolves the configuration and the model (a resumed
/// session's server is checked here, before any request), runs
/// `before_load` (so its errors come before the tools load), loads the
/// tools and opens the session file.
pub(super) async fn prepare<T>(
    sandbox_args: &SandboxArgs,
    (args, command): (&AgentArgs, &'static str),
    before_load: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<Prepared<T>> {
    check_numbers(args)?;
    let kept = records_budget(std::env::var("TOOLHOST_RECORDS_MIB").ok())?;
    // A quarter of what a run's records may take on disk: 64 MiB.
    let ledger_most = kept.per_run / 4;
    let mut inputs = sandbox_args.inputs();
    inputs.host_writes.extend(args.session_dir.clone());
    let resolved = config::resolve(&inputs)?;
    resolved.new_dirs.create()?;
    let workspace = resolved.sandbox.workspace.clone();
    let configured = resolved.chat.delivery.map(|setting| match setting {
        config::DeliverySetting::OneAtATime => DeliveryMode::OneAtATime,
        config::DeliverySetting::All => DeliveryMode::All,
    });
    let max_tokens_total = resolved.max_tokens_total;
    let configured_window = resolved.model.context_window;
    let prices = resolved.model.prices;
    let cost_budget = cost_budget(
        args.max_cost.or(resolved.max_cost),
        prices,
        resolved.prices_from_you,
    )?;
    let store = session_store(args.session_dir.as_ref(), &workspace)
        .with_budget(SessionBudget::of_results(kept.per_run), kept.per_workspace);
    let resumed = match &args.resume {
        Some(which) => Some(SessionFile::read(&store.find(which)?)?),
        None => None,
    };
    if let Some(file) = &resumed {
        render::warnings(&session::resume_warnings(file, &workspace));
    }
    let model = model_of((args, command), &resolved, resumed.as_ref(), &workspace)?;
    let early = before_load()?;
    let context_window = context_window_of(args, configured_window, &model).await;

    let sandbox = load_resolved(resolved, None).await?;
    let system = system_prompt(args, &sandbox)?;
    let instructions = ProjectInstructions::new(
        &workspace,
        !args.no_project_instructions,
        system,
        resumed
            .as_ref()
            .and_then(|file| file.last_start().project_instructions.clone()),
    );
    let config = LoopConfig {
        max_turns: args.max_turns,
        warn_after: args.loop_warn_after,
        stop_after: args.loop_stop_after,
        system_prompt: instructions.system_prompt(),
        result_budget: Some(ResultBudget {
            max_bytes: args.result_budget.saturating_mul(1024),
            save_dir: Layout::of(&workspace).outputs_dir(),
            save_dir_for_model: workspace::OUTPUTS_DIR.into(),
            kept,
        }),
        max_tokens_total: args
            .max_tokens_total
            .map(std::num::NonZeroU64::get)
            .or(max_tokens_total),
        cost_budget,
        request_timeout: Some(std::time::Duration::from_secs(args.request_timeout)),
        context_window: context_window.map(|window| window.tokens),
        ledger_most,
    };

    let mut start = session::start_record(&model, &sandbox, &config);
    start.project_instructions = instructions.recorded();
    start.context_window = context_window;
    start.prices = prices;
    let (writer, ledger) = open_session(args, &store, resumed.as_ref(), start.clone())?;
    let grants = crate::agent::SessionGrants::new(&workspace);
    if let Some(file) = &resumed {
        let seal = session::grant_seal(false);
        let (sealed, mut notes) = session::sealed_grants(file, &workspace, seal.as_deref());
        notes.extend(grants.restore(sealed, |permit| {
            sandbox.permit(&permit.tool, permit.kind, &permit.target)
        }));
        render::notes(&notes);
    }
    Ok(Prepared {
        workspace,
        sandbox,
        model,
        config,
        writer,
        ledger,
        instructions,
        delivery: args.delivery.or(configured).unwrap_or_default(),
        prices,
        start,
        store,
        grants,
        early,
    })
}

/// The numeric flags that must be at least 1, checked before anything is
/// read.
fn check_numbers(args: &AgentArgs) -> Result<(), UsageError> {
    let at_least_one = [
        (
            args.loop_warn_after == 0 || args.loop_stop_after == 0,
            "--loop-warn-after and --loop-stop-after must be at least 1",
        ),
        (
            args.result_budget == 0,
            "--result-budget must be at least 1 (KiB)",
        ),
        (
            args.request_timeout == 0,
            "--request-timeout must be at least 1 (second)",
        ),
        (
            args.content_timeout == Some(0),
            "--content-timeout must be at least 1 (second)",
        ),
        (
            args.max_reply_mib == Some(0),
            "--max-reply-mib must be at least 1 (MiB)",
        ),
    ];
    match at_least_one.into_iter().find(|(zero, _)| *zero) {
        Some((_, error)) => Err(UsageError(error.into())),
        None => Ok(()),
    }
}

/// The model the flags, the config files and a resumed session name, with
/// the reply cap and content timeout the flags or files set.
fn model_of(
    (args, command): (&AgentArgs, &'static str),
    resolved: &config::Resolved,
    resumed: Option<&SessionFile>,
    workspace: &Path,
) -> anyhow::Result<Model> {
    let flags = config::ModelFlags {
        command,
        provider: args.provider,
        script: args.script.clone(),
        model: args.model.clone(),
        base_url: args.base_url.clone(),
    };
    let model = config::resolve_model(
        &flags,
        &resolved.model,
        resumed.map(|file| {
            let start = file.last_start();
            config::RecordedModel {
                provider: &start.provider,
                model: start.model.as_deref(),
                base_url: start.base_url.as_deref(),
                file: &file.path,
                workspace,
                trusted: resolved.trusted,
            }
        }),
    )?
    .with_max_reply_bytes(
        args.max_reply_mib
            .map_or(resolved.max_reply_bytes, |mib| mib.saturating_mul(1 << 20)),
    )
    .with_content_timeout(
        args.content_timeout
            .or(resolved
                .model
                .content_timeout
                .map(std::num::NonZeroU64::get))
            .map_or(
                crate::provider::http::DEFAULT_CONTENT_TIMEOUT,
                std::time::Duration::from_secs,
            ),
    );
    Ok(model)
}

/// The context window: the flag's or the config's, else what the server
/// says.
async fn context_window_of(
    args: &AgentArgs,
    configured: Option<std::num::NonZeroU64>,
    model: &Model,
) -> Option<ContextWindowInfo> {
    match args.context_window.or(configured) {
        Some(tokens) => Some(ContextWindowInfo {
            tokens: tokens.get(),
            source: WindowSource::Configured,
        }),
        None => crate::provider::window::probe(model)
            .await
            .map(|tokens| ContextWindowInfo {
                tokens,
                source: WindowSource::Server,
            }),
    }
}

/// The system prompt: the `--system` file's, or the default for the tools,
/// with `--append-system` after it.
fn system_prompt(args: &AgentArgs, sandbox: &Sandbox) -> anyhow::Result<String> {
    let mut system = match &args.system {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("reading the system prompt file `{}`", path.display()))?,
        None => default_system_prompt(sandbox),
    };
    if let Some(extra) = &args.append_system {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    Ok(system)
}

/// The session file (none with `--no-session`), new or the resumed one
/// reopened, and the ledger the run continues from.
fn open_session(
    args: &AgentArgs,
    store: &crate::transcript::SessionStore,
    resumed: Option<&SessionFile>,
    start: crate::transcript::SessionStart,
) -> anyhow::Result<(Option<Arc<SessionWriter>>, Vec<Message>)> {
    let writer = if args.no_session {
        None
    } else {
        let (writer, made_room) = session::open(store, resumed, start)?;
        render::notes(made_room.as_slice());
        Some(Arc::new(writer))
    };
    let ledger = match resumed {
        Some(file) => {
            let (ledger, notes) = session::resumed_ledger(file, writer.as_deref());
            render::notes(&notes);
            ledger
        }
        None => Vec::new(),
    };
    Ok((writer, ledger))
}

/// A cost budget, which needs prices the user set: an untrusted
/// workspace's could be 0.
fn cost_budget(
    dollars: Option<f64>,
    prices: Option<Prices>,
    prices_from_you: bool,
) -> anyhow::Result<Option<CostBudget>> {
    let Some(dollars) = dollars else {
        return Ok(None);
    };
    match prices {
        Some(prices) if prices_from_you => Ok(Some(CostBudget { dollars, prices })),
        Some(_) => Err(UsageError(
            "a cost budget (--max-cost, [run] max_cost) counts at prices you set, and the only \
             [model.prices] come from this workspace's toolhost.toml, which you do not trust: \
             add them to your own config.toml, or run `toolhost trust` in the workspace"
                .into(),
        )
        .into()),
        None => Err(UsageError(
            "a cost budget (--max-cost, [run] max_cost) needs prices: add \
             `[model.prices]` with `input` and `output` (US dollars per million tokens, e.g. \
             `prices = { input = 3.0, output = 15.0 }` under [model]) to your config.toml"
                .into(),
        )
        .into()),
    }
}

/// The model as the header and the status line name it.
pub(super) fn model_name(model: &Model) -> String {
    match model.describe() {
        (provider, Some(name), _) => format!("{name} ({provider})"),
        (provider, None, _) => provider.to_string(),
    }
}

/// The line that opens `run`'s text output and the chat: the command, the
/// model, the workspace, how many tools, the session.
pub(super) fn header(
    command: &str,
    model: &Model,
    workspace: &Path,
    tools: usize,
    session: Option<&SessionWriter>,
) -> String {
    use crate::terminal::one_line;
    format!(
        "toolhost {command} · {} · {} · {tools} tools · {}",
        one_line(&model_name(model)),
        one_line(&workspace.display().to_string()),
        match session {
            Some(session) => format!("session {}", one_line(session.id())),
            None => "no session file".into(),
        }
    )
}

/// From `$TOOLHOST_RECORDS_MIB` (`RUN,WORKSPACE`, in MiB): what toolhost's
/// own records may take: a run's saved long results and the results in its
/// session file (RUN), and the workspace's saved results and earlier
/// session files (WORKSPACE, each).
fn records_budget(value: Option<String>) -> Result<SavedOutputs, UsageError> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(SavedOutputs::default());
    };
    let mib = |part: &str| part.trim().parse::<u64>().ok().filter(|&n| n > 0);
    let parsed = value
        .split_once(',')
        .and_then(|(run, workspace)| Some((mib(run)?, mib(workspace)?)));
    match parsed {
        Some((run, workspace)) => Ok(SavedOutputs::new(
            run.saturating_mul(1 << 20),
            workspace.saturating_mul(1 << 20),
        )),
        None => Err(UsageError(format!(
            "`TOOLHOST_RECORDS_MIB` is `{value}`; set it to what toolhost's saved results and \
             session files may take in MiB, a run's and the workspace's (the default is `{},{}`)",
            crate::agent::DEFAULT_OUTPUTS_PER_RUN >> 20,
            crate::agent::DEFAULT_OUTPUTS_PER_WORKSPACE >> 20
        ))),
    }
}

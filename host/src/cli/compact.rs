//! `toolhost sessions compact ID`: compacts a recorded session now, as a
//! chat's `/compact` does, so the next `run --resume` starts from the
//! smaller conversation. It opens the session as a resumed run would (the
//! same model rules, tools and session file), compacts, and appends the
//! `compaction` record.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Parser};

use super::exit::Ended;
use super::flags::SandboxArgs;
use super::load::spawn_ctrl_c_handler;
use super::setup::{AgentArgs, Prepared, prepare};
use super::{render, session};
use crate::agent::{AgentEvent, AgentLoop, EventSink};
use crate::config::ProviderKind;

/// The model flags `sessions compact` takes: those of `run`, for the model
/// that writes the summary.
#[derive(Debug, Clone, Args)]
pub(super) struct CompactArgs {
    /// A session id, a unique prefix of one, or `last`.
    id: String,
    /// What the summary must keep, in your words.
    #[arg(long, value_name = "TEXT")]
    focus: Option<String>,
    /// The model's wire API [default: `[model] provider`, else the session's].
    #[arg(long, value_enum)]
    provider: Option<ProviderKind>,
    /// A scripted model's replies (`--provider scripted`).
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// The model [default: `[model] name`, else the session's].
    #[arg(long)]
    model: Option<String>,
    /// The API root [default: `[model] base_url`, else the session's].
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The model's context window in tokens (bounds what the summariser is
    /// sent).
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<u64>,
}

/// Only a run's flags, to parse them from a made-up command line: their
/// defaults stay in one place.
#[derive(Parser)]
struct RunFlags {
    #[command(flatten)]
    agent: AgentArgs,
}

impl CompactArgs {
    /// The flags of a run resuming the session with this model.
    fn as_run(&self, session_dir: Option<&PathBuf>) -> anyhow::Result<AgentArgs> {
        let mut argv: Vec<String> = vec!["run".into(), "--resume".into(), self.id.clone()];
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                argv.push(format!("--{name}"));
                argv.push(value);
            }
        };
        flag(
            "provider",
            self.provider.map(|p| {
                clap::ValueEnum::to_possible_value(&p)
                    .map(|v| v.get_name().to_owned())
                    .unwrap_or_default()
            }),
        );
        flag(
            "script",
            self.script.as_ref().map(|p| p.display().to_string()),
        );
        flag("model", self.model.clone());
        flag("base-url", self.base_url.clone());
        flag("context-window", self.context_window.map(|t| t.to_string()));
        flag("session-dir", session_dir.map(|p| p.display().to_string()));
        Ok(RunFlags::try_parse_from(argv)?.agent)
    }
}

/// Compacts the session; an error when nothing could be made smaller.
pub(super) async fn compact(
    sandbox_args: &SandboxArgs,
    args: &CompactArgs,
    session_dir: Option<&PathBuf>,
) -> anyhow::Result<Ended> {
    let run = args.as_run(session_dir)?;
    let Prepared {
        sandbox,
        model,
        config,
        writer,
        mut ledger,
        ..
    } = prepare(sandbox_args, (&run, "run"), || Ok(())).await?;
    let Some(writer) = writer else {
        unreachable!("a resumed run without --no-session has a session file");
    };
    let id = writer.id().to_owned();
    let cancel = tokio_util::sync::CancellationToken::new();
    spawn_ctrl_c_handler(cancel.clone());
    // Whether a warning was printed (a summary that failed says why).
    let warned = Arc::new(AtomicBool::new(false));
    let notices = render::notices();
    let shown: EventSink = {
        let warned = Arc::clone(&warned);
        Arc::new(move |event: &AgentEvent| {
            if matches!(event, AgentEvent::Warning { .. }) {
                warned.store(true, Ordering::Relaxed);
            }
            notices(event);
        })
    };
    let sink = session::record_then(&writer, shown);
    let agent = AgentLoop::new(model, &sandbox, config).with_events(sink);
    let smaller = agent
        .compact_now(&mut ledger, args.focus.as_deref(), &cancel)
        .await;
    super::background::hand_off(&sandbox);
    if cancel.is_cancelled() {
        anyhow::bail!("interrupted: session `{id}` is as it was");
    }
    if !smaller {
        let why = if warned.load(Ordering::Relaxed) {
            "the summary failed (the warning above says why)"
        } else {
            "it is too short, and holds no long tool result"
        };
        anyhow::bail!(
            "session `{id}` is unchanged: nothing before its last turn could be set aside or \
             summarised: {why}"
        );
    }
    Ok(Ended::Done)
}

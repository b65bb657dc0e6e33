//! `toolhost chat`'s setup, and what the chat asks of it between turns:
//! a new session file (`/clear`), another session (`/resume`), another
//! model (`/model`), a refreshed system prompt. The terminal side is
//! `crate::chat`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::anyhow;

use super::exit::Ended;
use super::flags::SandboxArgs;
use super::instructions::ProjectInstructions;
use super::setup::{AgentArgs, Prepared, header, model_name, prepare};
use super::{UsageError, background, session};
use crate::agent::{AgentEvent, AgentLoop, EventSink, Granting, Inbox, StopReason};
use crate::chat::{self, Chat, ChatApprover, ChatEnd, Control, Resumed, SessionId, Status};
use crate::provider::Model;
use crate::sandbox::Permit;
use crate::terminal::one_line;
use crate::transcript::show::Summary;
use crate::transcript::{
    GrantSeal, SessionFile, SessionStart, SessionStore, SessionWriter, ToolInfo, id_of,
};
use clap::Args;

/// How many sessions `/resume` lists.
const RECENT_SESSIONS: usize = 10;

/// `toolhost chat`'s flags.
#[derive(Debug, Args)]
pub(super) struct ChatArgs {
    /// A first prompt, sent at once.
    pub(super) prompt: Option<String>,
    #[command(flatten)]
    pub(super) agent: AgentArgs,
    #[command(flatten)]
    pub(super) sandbox: SandboxArgs,
}

/// `toolhost chat` (and `toolhost run` with no prompt at a terminal): one
/// session, many prompts, in the terminal.
pub(super) async fn run_chat(
    sandbox_args: &SandboxArgs,
    args: &AgentArgs,
    first: Option<String>,
) -> anyhow::Result<Ended> {
    use std::io::IsTerminal as _;

    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(UsageError(
            "`toolhost chat` needs a terminal on stdin and stdout; from a script or an editor, \
             use `toolhost run --input-format stream-json`"
                .into(),
        )
        .into());
    }
    let Prepared {
        workspace,
        sandbox,
        model,
        config,
        writer,
        ledger,
        instructions,
        delivery,
        prices,
        start,
        store,
        grants,
        early: (),
    } = prepare(sandbox_args, (args, "chat"), || Ok(())).await?;
    // The grants given in this chat are sealed with the user's key, so
    // that `--resume` applies them and no shipped session file can.
    let seal = session::grant_seal(true);
    if let (Some(writer), Some(seal)) = (&writer, &seal) {
        writer.set_seal(Arc::clone(seal));
    }
    let (send, events) = tokio::sync::mpsc::unbounded_channel();
    let (recording, sink) = recording_then(writer.clone(), send);
    let last_recording = Arc::clone(&recording);
    let inbox = Inbox::new(delivery).with_events(sink.clone());
    let tools: Vec<ToolInfo> = sandbox.tools().iter().map(ToolInfo::of).collect();
    let session = writer.as_deref().map(session_id);
    let header = vec![
        header("chat", &model, &workspace, tools.len(), writer.as_deref()),
        "Enter sends · Alt+Enter queues a follow-up · Tab completes · Esc stops · /help · Ctrl+D quits"
            .into(),
    ];
    let status = Status {
        model: model_name(&model),
        workspace: workspace.display().to_string(),
        prices,
        ..Status::default()
    };
    let control = ChatControl {
        workspace,
        instructions,
        store,
        start,
        recording,
        seal,
        record: writer.is_some(),
        // A copy to ask for other names (`named` of its own name).
        model: model.describe().1.and_then(|name| model.named(name)),
    };
    let (approver, questions) = ChatApprover::new();
    let granting = Granting {
        grants: grants.clone(),
        approver: Some(Arc::new(approver)),
    };
    let agent = AgentLoop::new(model, &sandbox, config)
        .with_events(sink)
        .with_inbox(inbox.clone())
        .with_granting(granting);
    let end = chat::run(
        Chat {
            agent,
            ledger,
            inbox,
            events,
            questions,
            grants,
            session,
            tools,
            status,
            first,
            control: Box::new(control),
        },
        header,
    )
    .await?;
    // A chat closed without a prompt leaves no session behind.
    if let Some(unused) = current(&last_recording) {
        unused.discard_if_unused();
    }
    background::hand_off(&sandbox);
    Ok(match end {
        ChatEnd::Quit => Ended::Done,
        ChatEnd::Interrupted => Ended::Run(StopReason::Aborted),
    })
}

/// The session side of a chat.
struct ChatControl {
    workspace: PathBuf,
    instructions: ProjectInstructions,
    store: SessionStore,
    /// The first record of a session this chat opens: tools, system prompt,
    /// and the model in use.
    start: SessionStart,
    /// The session file the loop's events go to.
    recording: Arc<Mutex<Option<Arc<SessionWriter>>>>,
    /// The user's key, which seals the grants each session file records.
    seal: Option<Arc<GrantSeal>>,
    /// False with `--no-session`.
    record: bool,
    /// The model in use, to ask its server for another (`None`: scripted).
    model: Option<Model>,
}

impl ChatControl {
    fn current(&self) -> Option<Arc<SessionWriter>> {
        current(&self.recording)
    }

    fn record_in(&self, writer: Option<Arc<SessionWriter>>) {
        // A session the chat opened and never used is not kept.
        if let Some(unused) = self.current() {
            unused.discard_if_unused();
        }
        if let (Some(writer), Some(seal)) = (&writer, &self.seal) {
            writer.set_seal(Arc::clone(seal));
        }
        *self
            .recording
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = writer;
    }

    /// The session `which` names, never the one this chat writes: `last`
    /// is the most recent other one.
    fn find(&self, which: &str) -> anyhow::Result<PathBuf> {
        let current = self.current().map(|writer| writer.id().to_string());
        let path = if which == "last" {
            self.store
                .list()?
                .into_iter()
                .find(|path| Some(id_of(path)) != current)
                .ok_or_else(|| {
                    anyhow!(
                        "there is no other session in `{}`",
                        self.store.dir().display()
                    )
                })?
        } else {
            self.store.find(which)?
        };
        if Some(id_of(&path)) == current {
            return Err(anyhow!("this chat is session {} already", id_of(&path)));
        }
        Ok(path)
    }
}

impl Control<Model> for ChatControl {
    fn refreshed_system_prompt(&mut self) -> Option<String> {
        self.instructions.refreshed()
    }

    fn new_session(&mut self) -> anyhow::Result<(Option<SessionId>, Option<String>)> {
        if !self.record {
            return Ok((None, None));
        }
        let (writer, made_room) = session::open(&self.store, None, self.start.clone())?;
        let writer = Arc::new(writer);
        let opened = session_id(&writer);
        self.record_in(Some(writer));
        Ok((Some(opened), made_room))
    }

    fn recent_sessions(&mut self) -> anyhow::Result<Vec<String>> {
        let current = self.current().map(|writer| writer.id().to_string());
        let mut lines = Vec::new();
        for path in self.store.list()? {
            if lines.len() == RECENT_SESSIONS {
                break;
            }
            let id = id_of(&path);
            if Some(&id) == current.as_ref() {
                continue;
            }
            let Ok(file) = SessionFile::read(&path) else {
                continue;
            };
            let summary = Summary::of(&file);
            if summary.is_mcp_server() {
                continue;
            }
            lines.push(format!(
                "{}  {} turn(s)  {}",
                one_line(&id),
                summary.turns,
                one_line(&crate::terminal::short(&summary.first_prompt, 60))
            ));
        }
        Ok(lines)
    }

    fn resume(&mut self, which: &str) -> anyhow::Result<Resumed> {
        let path = self.find(which)?;
        let file = SessionFile::read(&path)?;
        let mut notes = session::resume_warnings(&file, &self.workspace);
        let recorded = file.last_start();
        if (recorded.provider.as_str(), recorded.model.as_deref())
            != (self.start.provider.as_str(), self.start.model.as_deref())
        {
            notes.push(format!(
                "session {} was recorded with {}; it goes on with this chat's {} (/model NAME \
                 switches)",
                one_line(&file.first_start().id),
                one_line(recorded.model.as_deref().unwrap_or(&recorded.provider)),
                one_line(self.start.model.as_deref().unwrap_or(&self.start.provider)),
            ));
        }
        let writer = if self.record {
            let (writer, _) = session::open(&self.store, Some(&file), self.start.clone())?;
            Some(Arc::new(writer))
        } else {
            None
        };
        let (ledger, recovered) = session::resumed_ledger(&file, writer.as_deref());
        notes.extend(recovered);
        let (grants, unsealed) =
            session::sealed_grants(&file, &self.workspace, self.seal.as_deref());
        notes.extend(unsealed);
        let session = writer.as_deref().map(session_id);
        self.record_in(writer);
        Ok(Resumed {
            ledger,
            session,
            id: file.first_start().id.clone(),
            notes,
            grants,
        })
    }

    fn model(&mut self, name: &str) -> anyhow::Result<(Model, String)> {
        let next = self
            .model
            .as_ref()
            .and_then(|model| model.named(name))
            .ok_or_else(|| {
                anyhow!(
                    "the scripted model replays --script and has no names; /model switches \
                     between an API's models (--provider openai or anthropic)"
                )
            })?;
        self.model = next.named(name);
        self.start.model = Some(name.to_string());
        if let Some(writer) = self.current() {
            writer.restart(self.start.clone());
        }
        let shown = model_name(&next);
        Ok((next, shown))
    }

    fn granted(&mut self, permits: &[Permit]) {
        if let Some(writer) = self.current() {
            for permit in permits {
                writer.granted(permit);
            }
        }
    }
}

/// The session file the events go to (swapped by `/clear` and `/resume`),
/// starting with `writer`; and the sink that records each event there,
/// then sends it to the screen.
fn recording_then(
    writer: Option<Arc<SessionWriter>>,
    send: tokio::sync::mpsc::UnboundedSender<AgentEvent>,
) -> (Arc<Mutex<Option<Arc<SessionWriter>>>>, EventSink) {
    let recording = Arc::new(Mutex::new(writer));
    let sink: EventSink = {
        let recording = Arc::clone(&recording);
        Arc::new(move |event: &AgentEvent| {
            if let Some(writer) = current(&recording) {
                writer.observe(event);
            }
            let _ = send.send(event.clone());
        })
    };
    (recording, sink)
}

fn current(recording: &Mutex<Option<Arc<SessionWriter>>>) -> Option<Arc<SessionWriter>> {
    recording
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

fn session_id(writer: &SessionWriter) -> SessionId {
    (writer.id().to_string(), writer.path().to_path_buf())
}

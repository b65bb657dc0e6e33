//! The session side of `toolhost run`: the file's first record, opening a
//! new or resumed file, rebuilding a resumed ledger, and the sink that
//! records each event before the screen shows it.

use std::path::Path;
use std::sync::Arc;

use super::render;
use crate::agent::{EventSink, LoopConfig, Message};
use crate::provider::Model;
use crate::sandbox::{Permit, Sandbox};
use crate::transcript::{GrantSeal, SessionFile, SessionStart, SessionStore, SessionWriter};

/// What a run starts with: versions, model, system prompt, and each tool
/// with its plugin's hash, grants and limits.
pub(super) fn start_record(model: &Model, sandbox: &Sandbox, config: &LoopConfig) -> SessionStart {
    let (provider, name, base_url) = model.describe();
    SessionStart {
        model: name.map(str::to_owned),
        base_url: base_url.map(str::to_owned),
        max_turns: config.max_turns,
        result_budget_bytes: config.result_budget.as_ref().map(|b| b.max_bytes as u64),
        ..SessionStart::of(sandbox, provider, &config.system_prompt)
    }
}

/// A new session file in `store`, or `resumed` reopened for appending;
/// and a note for the user when older session files were removed to make
/// room for it.
pub(super) fn open(
    store: &SessionStore,
    resumed: Option<&SessionFile>,
    start: SessionStart,
) -> anyhow::Result<(SessionWriter, Option<String>)> {
    let opened = match resumed {
        Some(file) => store.resume(file, start).map(|writer| (writer, None)),
        None => store.create_making_room(start),
    };
    let (writer, made_room) = opened.map_err(|e| {
        anyhow::anyhow!("cannot write the session file: {e} (pass --no-session to run without one)")
    })?;
    Ok((writer, made_room.map(|room| room.to_string())))
}

/// What the user should know before a resumed session continues: the
/// reader's warnings, and a different workspace.
pub(super) fn resume_warnings(file: &SessionFile, workspace: &Path) -> Vec<String> {
    let mut warnings = file.warnings.clone();
    let recorded_in = &file.last_start().workspace;
    if Path::new(recorded_in) != workspace {
        warnings.push(format!(
            "session {} was recorded in workspace `{recorded_in}`; it continues in `{}`, where \
             the paths it mentions may not exist",
            file.first_start().id,
            workspace.display()
        ));
    }
    warnings
}

/// The ledger a resumed run continues from, and what to tell the user:
/// results made up for calls the last run left unanswered are recorded,
/// then appended, and each is a note.
pub(super) fn resumed_ledger(
    file: &SessionFile,
    writer: Option<&SessionWriter>,
) -> (Vec<Message>, Vec<String>) {
    let resume = file.resume();
    let mut ledger = resume.ledger;
    let mut notes = Vec::new();
    if let Some(results) = resume.recovered {
        notes = render::recovered(&results);
        if let Some(writer) = writer {
            writer.recovered(results.clone());
        }
        ledger.push(results);
    }
    (ledger, notes)
}

/// Records each event, then passes it to `show`: on disk first, so a
/// tool's start is recorded before the tool runs.
pub(super) fn record_then(writer: &Arc<SessionWriter>, show: EventSink) -> EventSink {
    let record = writer.sink();
    Arc::new(move |event| {
        record(event);
        show(event);
    })
}

/// The user's key that seals the grants given for a session, made on
/// first use when `make` (a chat, which can give grants), else only read;
/// `None` without a config directory, or with a key refused (said once).
pub(super) fn grant_seal(make: bool) -> Option<Arc<GrantSeal>> {
    let dir = crate::config::user::config_dir()?;
    let opened = if make {
        GrantSeal::open_or_create(&dir).map(Some)
    } else {
        GrantSeal::open(&dir)
    };
    match opened {
        Ok(seal) => seal.map(Arc::new),
        Err(why) => {
            render::notes(&[format!(
                "grants given for a session are not kept for --resume: the key that seals them \
                 cannot be used: {why}"
            )]);
            None
        }
    }
}

/// The grants `file` recorded for its session that the user's key
/// sealed (a session file can come with a repository, grants and all),
/// and a note for each of the others, naming the flag that grants it.
pub(super) fn sealed_grants(
    file: &SessionFile,
    workspace: &Path,
    seal: Option<&GrantSeal>,
) -> (Vec<Permit>, Vec<String>) {
    let id = &file.first_start().id;
    let mut sealed = Vec::new();
    let mut notes = Vec::new();
    for (permit, is_sealed) in file.session_grants(seal, &workspace.display().to_string()) {
        if is_sealed {
            sealed.push(permit);
        } else {
            notes.push(format!(
                "session {id} records a grant your key did not seal, so it is not applied (a \
                 session file can come with a repository): `{}` may {} ({})",
                permit.tool,
                permit.what(workspace),
                permit.flag(workspace)
            ));
        }
    }
    (sealed, notes)
}

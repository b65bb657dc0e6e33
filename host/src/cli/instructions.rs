//! The project's instructions in a session's system prompt: read at the
//! start and again before each later prompt, with a warning when they
//! changed since the session's previous prompt (a tool may have written
//! them: they are workspace content, so they may instruct the model, never
//! widen a grant).

use std::path::PathBuf;

use super::render;
use crate::instructions::{self, Instructions};
use crate::transcript::InstructionsInfo;

/// The system prompt a session sends: the base prompt, then the project's
/// instructions file when there is one and it is wanted.
pub(super) struct ProjectInstructions {
    workspace: PathBuf,
    enabled: bool,
    base: String,
    current: Option<Instructions>,
    /// The last reason the file could not be read, so it is said once.
    failed: Option<String>,
}

impl ProjectInstructions {
    /// Reads the instructions now; `previous` is what the resumed session's
    /// last prompt had, if any.
    pub(super) fn new(
        workspace: &std::path::Path,
        enabled: bool,
        base: String,
        previous: Option<InstructionsInfo>,
    ) -> Self {
        let mut this = ProjectInstructions {
            workspace: workspace.to_path_buf(),
            enabled,
            base,
            current: None,
            failed: None,
        };
        let now = this.read();
        if let Some(previous) = previous {
            let sha = now.as_ref().map(|i| i.sha256.as_str());
            if sha != Some(previous.sha256.as_str()) {
                changed(&previous.file, now.as_ref());
            }
        }
        this.current = now;
        this
    }

    fn read(&mut self) -> Option<Instructions> {
        if !self.enabled {
            return None;
        }
        match instructions::find(&self.workspace) {
            Ok(found) => {
                self.failed = None;
                found
            }
            Err(error) => {
                let text = format!("{error}; the run goes on without it");
                if self.failed.as_ref() != Some(&text) {
                    render::warnings(std::slice::from_ref(&text));
                    self.failed = Some(text);
                }
                None
            }
        }
    }

    /// The whole system prompt.
    pub(super) fn system_prompt(&self) -> String {
        match &self.current {
            Some(found) => format!("{}\n\n{}", self.base, found.prompt_section()),
            None => self.base.clone(),
        }
    }

    /// What `session_start` records of them.
    pub(super) fn recorded(&self) -> Option<InstructionsInfo> {
        self.current.as_ref().map(|found| InstructionsInfo {
            file: found.file.into(),
            sha256: found.sha256.clone(),
            bytes: found.bytes,
            cut: found.cut(),
        })
    }

    /// Reads them again before a later prompt: the new system prompt when
    /// they changed (after saying so), else `None`.
    pub(super) fn refreshed(&mut self) -> Option<String> {
        let now = self.read();
        let sha = |found: &Option<Instructions>| found.as_ref().map(|i| i.sha256.clone());
        if sha(&now) == sha(&self.current) {
            return None;
        }
        match &self.current {
            Some(before) => changed(before.file, now.as_ref()),
            None => changed(
                now.as_ref().map_or("AGENTS.md", |found| found.file),
                now.as_ref(),
            ),
        }
        self.current = now;
        Some(self.system_prompt())
    }
}

/// Says that the instructions changed since the session's previous prompt.
fn changed(before: &str, now: Option<&Instructions>) {
    let warning = match now {
        Some(found) => format!(
            "{} changed since this session's previous prompt (a tool, or someone, may have \
             written it); the model gets the new text",
            found.file
        ),
        None => format!(
            "{before} is gone since this session's previous prompt; the model no longer gets it"
        ),
    };
    render::warnings(&[warning]);
}

//! The first step of resolving: every input read once, into [`Gathered`].
//! Nothing is decided here beyond what reading needs (which files to read,
//! whether one must be there); what follows derives each section from it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::environment::Environment;
use super::error::ConfigError;
use super::inputs::ConfigInputs;
use super::network;
use super::origin::FileKind;
use super::source::Source;
use super::user::{self, TrustList};
use crate::sandbox::git_config::{self, Seen};
use crate::workspace::Layout;

/// Everything resolving reads: the workspace, the config files, the trust
/// decision, the environment, git's configuration.
pub(super) struct Gathered {
    /// The workspace, canonical.
    pub(super) workspace: PathBuf,
    /// The config files read: the user's, then the workspace's (or
    /// `--config`'s).
    pub(super) sources: Vec<Source>,
    /// The workspace config file that was read, if any.
    pub(super) config_file: Option<PathBuf>,
    /// Whether the user trusts the workspace: the one question every
    /// section asks of a workspace's own settings.
    pub(super) trusted: bool,
    /// The user config directory, if any.
    pub(super) user_config_dir: Option<PathBuf>,
    /// The plugin files the user added to a workspace (by sha256).
    pub(super) added_plugins: BTreeSet<String>,
    pub(super) env: Environment,
    /// What git's configuration says, with the environment toolhost
    /// started in.
    pub(super) git: Seen,
}

impl Gathered {
    /// The user's own `config.toml`, where it would be.
    pub(super) fn user_file(&self) -> Option<PathBuf> {
        self.user_config_dir
            .as_ref()
            .map(|dir| dir.join(user::CONFIG_FILE))
    }
}

/// Reads what `inputs` point at; an error for a workspace that is not a
/// directory, a state link out of it, or a config file that cannot be
/// read or parsed.
pub(super) fn gather(inputs: &ConfigInputs) -> Result<Gathered, ConfigError> {
    let workspace = canonical_workspace(&inputs.workspace)?;
    Layout::of(&workspace).check_state_links()?;
    let trust = match &inputs.user_config_dir {
        Some(dir) => TrustList::load(dir)?,
        None => TrustList::empty(),
    };
    let trusted = trust.trusts(&workspace);
    let mut sources = Vec::new();
    if let Some(dir) = &inputs.user_config_dir {
        sources.extend(read_source(
            FileKind::User,
            dir.join(user::CONFIG_FILE),
            false,
        )?);
    }
    let (workspace_file, required) = match &inputs.config_file {
        Some(path) => (path.clone(), true),
        None => (Layout::of(&workspace).config_file(), false),
    };
    let workspace_source = read_source(FileKind::Workspace, workspace_file, required)?;
    let config_file = workspace_source.as_ref().map(|s| s.path.clone());
    sources.extend(workspace_source);
    let env = Environment::read(
        network::header_variables(&sources)
            .iter()
            .map(String::as_str),
    );
    Ok(Gathered {
        git: git_config::seen(&workspace),
        added_plugins: inputs
            .user_config_dir
            .as_deref()
            .map(user::added_plugins)
            .unwrap_or_default(),
        workspace,
        sources,
        config_file,
        trusted,
        user_config_dir: inputs.user_config_dir.clone(),
        env,
    })
}

/// The workspace, canonical; it must be a directory.
fn canonical_workspace(written: &std::path::Path) -> Result<PathBuf, ConfigError> {
    written
        .canonicalize()
        .and_then(|p| {
            if p.is_dir() {
                Ok(p)
            } else {
                Err(std::io::Error::other("not a directory"))
            }
        })
        .map_err(|source| ConfigError::Workspace {
            path: written.to_path_buf(),
            source,
        })
}

/// Reads one config file; `None` when it is optional and absent.
fn read_source(
    kind: FileKind,
    path: PathBuf,
    required: bool,
) -> Result<Option<Source>, ConfigError> {
    let text = match crate::text_file::read_text(&path) {
        Ok(text) => text,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ConfigError::ReadFile { path, source }),
    };
    let file = toml::from_str(&text).map_err(|e| ConfigError::ParseFile {
        path: path.clone(),
        message: e.to_string(),
    })?;
    Ok(Some(Source {
        kind,
        path,
        text,
        file,
    }))
}

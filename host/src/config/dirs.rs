//! Where plugins load from and where their compiled code is cached.

use std::path::PathBuf;

use super::gather::Gathered;
use super::inputs::ConfigInputs;
use super::user;
use crate::workspace::Layout;

/// `--cache-dir`, else the environment's, else the user's cache; none
/// with `--no-cache`.
pub(super) fn cache_dir(inputs: &ConfigInputs, gathered: &Gathered) -> Option<PathBuf> {
    if inputs.no_cache {
        None
    } else {
        inputs
            .cache_dir
            .clone()
            .or_else(|| gathered.env.default_cache_dir())
    }
}

/// `--plugins DIR`s; without them, each default directory that exists:
/// the user's own plugins (theirs, so never shipped) first, so that what
/// an untrusted workspace ships cannot take a tool name of theirs (the
/// first plugin to offer a name keeps it); a trusted workspace's plugins
/// are the user's too, and come first, as its config comes over theirs.
pub(super) fn plugin_dirs(inputs: &ConfigInputs, gathered: &Gathered) -> Vec<PathBuf> {
    if !inputs.plugin_dirs.is_empty() {
        return inputs.plugin_dirs.clone();
    }
    let workspace_dir = Some(Layout::of(&gathered.workspace).plugins_dir());
    let users_dir = gathered
        .user_config_dir
        .as_ref()
        .map(|dir| dir.join(user::PLUGINS_DIR));
    let ordered = if gathered.trusted {
        [workspace_dir, users_dir]
    } else {
        [users_dir, workspace_dir]
    };
    ordered
        .into_iter()
        .flatten()
        .filter(|dir| dir.is_dir())
        .collect()
}

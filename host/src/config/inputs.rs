//! What the user asked for, before resolution: the flags and where to
//! look for the config files.

use std::path::PathBuf;

/// What the user asked for, before resolution: flags and their sources.
#[derive(Debug, Clone, Default)]
pub struct ConfigInputs {
    pub workspace: PathBuf,
    /// An explicit `--config FILE`; it must exist.
    pub config_file: Option<PathBuf>,
    /// The user config directory; `None` reads no user config and trusts
    /// no workspace. [`super::user::config_dir`] finds the usual one.
    pub user_config_dir: Option<PathBuf>,
    /// `--plugins DIR`, in order; empty means the defaults: the
    /// user's own `plugins/`, then the workspace's `.toolhost/plugins`
    /// (the workspace's first when the user trusts it).
    pub plugin_dirs: Vec<PathBuf>,
    /// `--allow-read [TOOL=]PATH`.
    pub allow_read: Vec<String>,
    /// `--allow-write [TOOL=]PATH`.
    pub allow_write: Vec<String>,
    /// `--allow-net [TOOL=]PATTERN`.
    pub allow_net: Vec<String>,
    /// `--allow-env TOOL=NAME`.
    pub allow_env: Vec<String>,
    /// `--allow-exec [TOOL=]PROGRAM`.
    pub allow_exec: Vec<String>,
    /// `--cache-dir DIR`; falls back to the environment, then the user's cache.
    pub cache_dir: Option<PathBuf>,
    /// `--no-cache`: compile every plugin every time.
    pub no_cache: bool,
    /// Paths toolhost writes that the user named on the command line
    /// (`--session-dir`, `--http-token-file`): no tool may change them, so
    /// none can move them or put a link where the host will write.
    pub host_writes: Vec<PathBuf>,
}

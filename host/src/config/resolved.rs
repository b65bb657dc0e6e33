//! The resolved configuration: what the flags, the files and the
//! environment come to.

use std::path::PathBuf;

use super::file::{ChatSection, ModelSection};
use super::new_dirs::NewDirs;
use crate::sandbox::SandboxOptions;

/// The resolved configuration: the sandbox's options and the `[model]`
/// section for `toolhost run`.
#[derive(Debug)]
pub struct Resolved {
    pub sandbox: SandboxOptions,
    /// The workspace config file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// The `[model]` section, for `toolhost run`: the workspace's keys over
    /// the user's.
    pub model: ModelSection,
    /// Whether the user trusts the workspace, so its own files (config,
    /// session files) may widen access.
    pub trusted: bool,
    /// The cap on one model reply, in bytes: `[model] max_reply_mib` of
    /// the files (an untrusted workspace's only lowers it), else 8 MiB.
    pub max_reply_bytes: u64,
    /// The `[chat]` section: the workspace's keys over the user's (none of
    /// them widens access).
    pub chat: ChatSection,
    /// `[run] max_tokens_total`: the lowest any file gives (a budget only
    /// stops a run sooner, so a workspace's may lower the user's).
    pub max_tokens_total: Option<u64>,
    /// `[run] max_cost`, in dollars: the lowest any file gives.
    pub max_cost: Option<f64>,
    /// Whether `[model.prices]` came from the user's config or a trusted
    /// workspace: a cost budget counts only with prices the user set (an
    /// untrusted file may only raise them, and could otherwise set them
    /// to 0).
    pub prices_from_you: bool,
    /// What the user should know about the configuration: each limit an
    /// untrusted workspace file asked to raise, and what applies instead.
    pub notices: Vec<String>,
    /// Directories the command line's write grants ask for that are not
    /// there yet: resolving changes nothing, so the command makes them
    /// ([`NewDirs::create`]) right after resolving, before the sandbox
    /// loads. Their notices are in `notices` already.
    pub new_dirs: NewDirs,
}

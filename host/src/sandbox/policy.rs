//! What each tool may do: one field per capability and its limits
//! ([`ToolPolicy`]), for every tool and per tool ([`Policy`]). Built by the
//! config layer; each capability reads its own field.

use std::collections::BTreeMap;

use super::capabilities::env::EnvPolicy;
use super::capabilities::exec::ExecPolicy;
use super::capabilities::filesystem::FsPolicy;
use super::capabilities::network::NetPolicy;
use super::limits::Limits;

/// What one tool may do: one field per capability, and its limits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolPolicy {
    /// Its directories and lifts.
    pub fs: FsPolicy,
    /// Where its requests may go.
    pub net: NetPolicy,
    /// The host variables it may read.
    pub env: EnvPolicy,
    /// The native programs it may run.
    pub exec: ExecPolicy,
    pub limits: Limits,
}

impl ToolPolicy {
    /// This policy for a tool that declares itself read-only: every grant
    /// read-only, nothing lifted. The declaration lets its calls run beside
    /// others, so it must hold (a tool that writes anyway gets
    /// `not-permitted`).
    pub fn read_only(mut self) -> ToolPolicy {
        self.fs = self.fs.read_only();
        self
    }
}

/// What every tool may do: a default and per-tool entries. Built by the
/// config layer from `toolhost.toml` and flags.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    pub defaults: ToolPolicy,
    pub per_tool: BTreeMap<String, ToolPolicy>,
}

impl Policy {
    /// The policy of tool `name`: its own entry, else the defaults.
    pub fn for_tool(&self, name: &str) -> &ToolPolicy {
        self.per_tool.get(name).unwrap_or(&self.defaults)
    }
}

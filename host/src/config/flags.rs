//! The grants of the command line (`--allow-read`, `--allow-write`,
//! `--allow-net`), each split into those for every tool and those that
//! name one (`TOOL=`), `--allow-exec` too; and `--allow-env`, which always
//! names one.

use std::collections::BTreeMap;
use std::path::Path;

use super::env_grants;
use super::exec_grants;
use super::grants::{self, GrantSpec};
use super::inputs::ConfigInputs;
use super::network::{self, NetSpec};
use super::new_dirs::NewDirs;
use crate::sandbox::{Access, Protection};

/// The command line's grants, as written.
pub(super) struct FlagGrants {
    read: Vec<GrantSpec>,
    tool_read: BTreeMap<String, Vec<GrantSpec>>,
    write: Vec<GrantSpec>,
    tool_write: BTreeMap<String, Vec<GrantSpec>>,
    net: Vec<NetSpec>,
    tool_net: BTreeMap<String, Vec<NetSpec>>,
    /// `--allow-env TOOL=NAME`, as written ([`env_grants`]).
    pub(super) env: Vec<String>,
    /// `--allow-exec [TOOL=]PROGRAM`, as written ([`exec_grants`]).
    pub(super) exec: Vec<String>,
}

impl FlagGrants {
    pub(super) fn of(inputs: &ConfigInputs) -> Self {
        let (read, tool_read) =
            grants::from_flags(&inputs.allow_read, "--allow-read", Access::Read);
        let (write, tool_write) =
            grants::from_flags(&inputs.allow_write, "--allow-write", Access::Write);
        let (net, tool_net) = network::from_flags(&inputs.allow_net);
        FlagGrants {
            read,
            tool_read,
            write,
            tool_write,
            net,
            tool_net,
            env: inputs.allow_env.clone(),
            exec: inputs.allow_exec.clone(),
        }
    }

    /// The tools the flags name.
    pub(super) fn tools(&self) -> impl Iterator<Item = String> + '_ {
        self.tool_read
            .keys()
            .chain(self.tool_write.keys())
            .chain(self.tool_net.keys())
            .cloned()
            .chain(env_grants::flag_tools(&self.env))
            .chain(exec_grants::flag_tools(&self.exec))
    }

    /// Every write grant: those for every tool, then each tool's.
    fn writes(&self) -> impl Iterator<Item = &GrantSpec> {
        self.write.iter().chain(self.tool_write.values().flatten())
    }

    /// The file grants `tool` (or every tool, for `None`) gets: reads and
    /// writes for every tool, then the tool's own reads and writes.
    pub(super) fn file_grants(&self, tool: Option<&str>) -> Vec<GrantSpec> {
        let own = |map: &BTreeMap<String, Vec<GrantSpec>>| -> Vec<GrantSpec> {
            tool.and_then(|t| map.get(t)).cloned().unwrap_or_default()
        };
        let mut specs: Vec<GrantSpec> = self.read.iter().chain(&self.write).cloned().collect();
        specs.extend(own(&self.tool_read));
        specs.extend(own(&self.tool_write));
        specs
    }

    /// The network grants `tool` (or every tool) gets: those for every
    /// tool, then the tool's own.
    pub(super) fn net_grants(&self, tool: Option<&str>) -> Vec<NetSpec> {
        let own = tool
            .and_then(|t| self.tool_net.get(t))
            .into_iter()
            .flatten();
        self.net.iter().chain(own).cloned().collect()
    }

    /// The directories the write grants ask for that are not there yet
    /// ([`grants::new_dir`]), and a notice for each.
    pub(super) fn new_dirs(
        &self,
        workspace: &Path,
        protection: &Protection,
    ) -> (NewDirs, Vec<String>) {
        let is_protected = |path: &Path| protection.names_protected(path);
        let mut dirs = NewDirs::default();
        let mut notices = Vec::new();
        for spec in self.writes() {
            if let Some((dir, notice)) = grants::new_dir(spec, workspace, &is_protected, &dirs) {
                dirs.push(dir);
                notices.push(notice);
            }
        }
        (dirs, notices)
    }
}

//! The sandbox's [`Policy`]: every tool's defaults, and the own policy of
//! each tool the files or the flags name (and of the standard tools with
//! needs of their own): its file grants, limits, network and credentials,
//! and the host variables it may read.

use std::collections::{BTreeMap, BTreeSet};

use super::env_grants;
use super::error::ConfigError;
use super::exec_grants;
use super::file_grants::{FILELESS_TOOLS, FileGrants};
use super::flags::FlagGrants;
use super::gather::Gathered;
use super::limits::LimitChain;
use super::network;
use crate::sandbox::{EnvPolicy, FsPolicy, Limits, NetPolicy, Policy, ToolPolicy};

/// The policy, and a notice for each network grant of any public host.
/// Errors come in the order a reader meets them: every tool's grants and
/// network, then each tool's (by name) limits, grants, network and
/// credentials.
pub(super) fn policy(
    gathered: &Gathered,
    flags: &FlagGrants,
    file_grants: &FileGrants<'_>,
    limits: &mut LimitChain<'_>,
    defaults_limits: Limits,
) -> Result<(Policy, Vec<String>), ConfigError> {
    let mut net_notices = Vec::new();
    let Gathered {
        sources,
        trusted,
        workspace,
        ..
    } = gathered;
    let mut net_for = |tool: Option<&str>| {
        let specs = flags.net_grants(tool);
        network::for_tool(sources, specs, *trusted, workspace, tool, &mut net_notices)
    };
    env_grants::check_flags(&flags.env)?;
    let exec_for = |tool: Option<&str>| {
        exec_grants::for_tool(
            sources,
            &flags.exec,
            *trusted,
            workspace,
            tool,
            &gathered.env.programs,
        )
    };
    let (grants, lifted) = file_grants.for_tool(None)?;
    let defaults = ToolPolicy {
        fs: FsPolicy {
            grants,
            lifted,
            ..FsPolicy::default()
        },
        net: NetPolicy {
            grants: net_for(None)?,
            credentials: Vec::new(),
        },
        env: EnvPolicy::default(),
        exec: exec_for(None)?,
        limits: defaults_limits,
    };
    let mut per_tool = BTreeMap::new();
    for tool in mentioned(gathered, flags) {
        let tool_limits = limits.for_tool(defaults_limits, &tool)?;
        let (grants, lifted) = file_grants.for_tool(Some(&tool))?;
        let net = net_for(Some(&tool))?;
        let credentials = network::credentials(sources, &tool, *trusted, workspace, &|name| {
            gathered.env.header_variable(name)
        })?;
        let env = env_grants::for_tool(sources, &flags.env, *trusted, workspace, &tool)?;
        let policy = ToolPolicy {
            fs: FsPolicy {
                grants,
                lifted,
                ..FsPolicy::default()
            },
            net: NetPolicy {
                grants: net,
                credentials,
            },
            env,
            exec: exec_for(Some(&tool))?,
            limits: tool_limits,
        };
        per_tool.insert(tool, policy);
    }
    Ok((Policy { defaults, per_tool }, net_notices))
}

/// The tools with a policy of their own: those the files or the flags
/// name, the tools that work on no files, and the code tools and the
/// shell (their own default limits).
fn mentioned(gathered: &Gathered, flags: &FlagGrants) -> BTreeSet<String> {
    gathered
        .sources
        .iter()
        .flat_map(|s| s.file.tools.keys())
        .cloned()
        .chain(flags.tools())
        .chain(FILELESS_TOOLS.iter().map(|t| t.to_string()))
        .chain(crate::sandbox::CODE_TOOLS.iter().map(|t| t.to_string()))
        .chain([crate::sandbox::SHELL_TOOL.to_string()])
        .collect()
}

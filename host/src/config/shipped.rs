//! What a plugin an untrusted workspace ships gets: every tool's grants
//! and those inside the workspace, no network, no raised limits. The
//! configuration names tools, not plugins, so what the user meant for
//! their own plugin of a name must not reach a shipped one.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::ConfigError;
use super::gather::Gathered;
use super::limits::{self, LimitChain};
use crate::sandbox::{Policy, ShippedPlugins, ShippedTool, ToolPolicy};
use crate::workspace::Layout;

/// The default plugins directory is the workspace's own: until the user
/// trusts the workspace, what it holds came with the repository (but for
/// the files the user put there with `plugin add`). `None` when the
/// workspace is trusted or `--plugins` names the directories.
pub(super) fn shipped_plugins(
    gathered: &Gathered,
    plugins_flag: bool,
    policy: &Policy,
    max_plugins: u64,
) -> Result<Option<ShippedPlugins>, ConfigError> {
    if plugins_flag || gathered.trusted {
        return Ok(None);
    }
    let workspace = &gathered.workspace;
    let defaults = &policy.defaults;
    let mut ordinary = LimitChain::ordinary(
        &gathered.sources,
        gathered.trusted,
        workspace,
        gathered.user_file(),
    );
    let mut per_tool = BTreeMap::new();
    for (tool, full) in &policy.per_tool {
        let ordinary_limits = ordinary.for_tool(defaults.limits, tool)?;
        per_tool.insert(
            tool.clone(),
            shipped_tool(full, defaults, workspace, ordinary_limits),
        );
    }
    Ok(Some(ShippedPlugins {
        dir: Layout::of(workspace).plugins_dir(),
        added: gathered.added_plugins.clone(),
        defaults: shipped_tool(defaults, defaults, workspace, defaults.limits),
        per_tool,
        max_plugins,
    }))
}

/// What a tool of a plugin an untrusted workspace ships gets, where the
/// user's own plugin of that name would get `full`: the grants every tool
/// gets (`defaults`) and those of `full` inside the workspace, the lifts
/// every tool gets, no network, and limits no higher than `defaults`'
/// (`ordinary`: the tool's limits without a code tool's own defaults). The
/// configuration names tools, not plugins, so a name must not carry what
/// the user meant for their own plugin of that name.
fn shipped_tool(
    full: &ToolPolicy,
    defaults: &ToolPolicy,
    workspace: &Path,
    ordinary: crate::sandbox::Limits,
) -> ShippedTool {
    let (mut policy, mut withheld) = crate::sandbox::shipped_policy(full, defaults, workspace);
    policy.limits = limits::at_most(ordinary, &defaults.limits);
    if policy.limits != ordinary {
        withheld.push("raised limits");
    }
    ShippedTool { policy, withheld }
}

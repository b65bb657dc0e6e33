//! Exec grants as written (`--allow-exec [TOOL=]PROGRAM`, `exec = [...]`
//! under `[tools.NAME]`), resolved into each tool's [`ExecPolicy`]: each
//! program found on the user's `PATH` now, so that what a tool runs is
//! what the user saw granted.
//!
//! Only the user gives one: a flag, their own config file, or the file of
//! a workspace they trust. A cloned repository's `toolhost.toml` that
//! names one is refused at startup, as its network grants are.

use std::collections::BTreeSet;
use std::path::Path;

use super::error::ConfigError;
use super::origin::{FileKind, GrantOrigin, line_of};
use super::source::Source;
use crate::sandbox::{ExecPolicy, Program, ProgramLookup, is_tool_name};

/// The flag, in messages.
const FLAG: &str = "--allow-exec";

/// A flag's tool (when it names one) and program.
fn split(value: &str) -> (Option<&str>, &str) {
    match value.split_once('=') {
        Some((tool, program)) if is_tool_name(tool) => (Some(tool), program),
        _ => (None, value),
    }
}

/// The tools `--allow-exec TOOL=PROGRAM` flags name.
pub(super) fn flag_tools(flags: &[String]) -> impl Iterator<Item = String> + '_ {
    flags
        .iter()
        .filter_map(|value| split(value).0.map(str::to_string))
}

/// The programs `tool` may run (every tool's, for `None`): each file's
/// `[tools.TOOL] exec`, then the flags for every tool, then the tool's
/// own, each program once.
pub(super) fn for_tool(
    sources: &[Source],
    flags: &[String],
    trusted: bool,
    workspace: &Path,
    tool: Option<&str>,
    lookup: &ProgramLookup,
) -> Result<ExecPolicy, ConfigError> {
    let mut programs: Vec<Program> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |program: Program| {
        if seen.insert(program.path.clone()) {
            programs.push(program);
        }
    };
    for source in tool.map(|_| sources).unwrap_or_default() {
        let Some(listed) = tool
            .and_then(|t| source.file.tools.get(t))
            .and_then(|s| s.exec.as_ref())
        else {
            continue;
        };
        let tool = tool.unwrap_or_default();
        for name in listed {
            let line = line_of(&source.text, name.span().start);
            let origin = GrantOrigin::in_file(
                source.kind,
                &source.path,
                line,
                format!("[tools.{tool}] exec"),
            );
            if source.kind == FileKind::Workspace && !trusted {
                return Err(ConfigError::UntrustedExecGrant {
                    grant: name.get_ref().clone(),
                    origin: Box::new(origin),
                    flag: format!("{FLAG} {tool}={}", name.get_ref()),
                    workspace: workspace.to_path_buf(),
                });
            }
            let program = Program::find(name.get_ref(), lookup).map_err(|problem| {
                ConfigError::ExecGrant {
                    grant: name.get_ref().clone(),
                    origin,
                    problem,
                }
            })?;
            add(program);
        }
    }
    for value in flags {
        let (named, name) = split(value);
        if named.is_some_and(|named| Some(named) != tool) {
            continue;
        }
        let program = Program::find(name, lookup).map_err(|problem| ConfigError::ExecGrant {
            grant: value.clone(),
            origin: GrantOrigin::CommandLine {
                flag: FLAG,
                value: value.clone(),
            },
            problem,
        })?;
        add(program);
    }
    Ok(ExecPolicy { programs })
}

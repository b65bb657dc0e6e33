//! Environment grants as written (`--allow-env TOOL=NAME`, `env = [...]`
//! under `[tools.NAME]`), resolved into each tool's [`EnvPolicy`].
//!
//! A variable goes to one tool by name, never to every tool, and only the
//! user gives it: a flag, their own config file, or the file of a
//! workspace they trust. A variable can hold a secret (an API key), so a
//! cloned repository's `toolhost.toml` that names one is refused at
//! startup, as its network grants are.

use std::collections::BTreeSet;
use std::path::Path;

use super::error::ConfigError;
use super::origin::{FileKind, GrantOrigin, line_of};
use super::source::Source;
use crate::sandbox::{EnvPolicy, is_tool_name};

/// The tools `--allow-env TOOL=NAME` flags name.
pub(super) fn flag_tools(flags: &[String]) -> impl Iterator<Item = String> + '_ {
    flags
        .iter()
        .filter_map(|value| value.split_once('='))
        .filter(|(tool, _)| is_tool_name(tool))
        .map(|(tool, _)| tool.to_string())
}

/// Every `--allow-env` value must name a tool and a variable.
pub(super) fn check_flags(flags: &[String]) -> Result<(), ConfigError> {
    for value in flags {
        let problem = match value.split_once('=') {
            Some((tool, name)) if is_tool_name(tool) => name_problem(name),
            _ => Some(
                "names no tool: a variable goes to one tool at a time, as `--allow-env \
                 TOOL=NAME` (for example `--allow-env python=HOME`)"
                    .into(),
            ),
        };
        if let Some(problem) = problem {
            return Err(ConfigError::EnvGrant {
                grant: value.clone(),
                origin: GrantOrigin::CommandLine {
                    flag: "--allow-env",
                    value: value.clone(),
                },
                problem,
            });
        }
    }
    Ok(())
}

/// What is wrong with `name` as a variable's name, if anything.
fn name_problem(name: &str) -> Option<String> {
    (name.is_empty() || name.contains(['=', '\0'])).then(|| {
        "is not a variable's name: write it as the environment has it, without `=` \
         (`--allow-env python=HOME`)"
            .into()
    })
}

/// The variables `tool` may read: each file's `[tools.TOOL] env`, then
/// the `--allow-env TOOL=NAME` flags, each name once.
pub(super) fn for_tool(
    sources: &[Source],
    flags: &[String],
    trusted: bool,
    workspace: &Path,
    tool: &str,
) -> Result<EnvPolicy, ConfigError> {
    let mut names = Vec::new();
    let mut seen = BTreeSet::new();
    for source in sources {
        let Some(listed) = source.file.tools.get(tool).and_then(|s| s.env.as_ref()) else {
            continue;
        };
        for name in listed {
            let line = line_of(&source.text, name.span().start);
            let origin = GrantOrigin::in_file(
                source.kind,
                &source.path,
                line,
                format!("[tools.{tool}] env"),
            );
            if let Some(problem) = name_problem(name.get_ref()) {
                return Err(ConfigError::EnvGrant {
                    grant: name.get_ref().clone(),
                    origin,
                    problem,
                });
            }
            if source.kind == FileKind::Workspace && !trusted {
                return Err(ConfigError::UntrustedEnvGrant {
                    name: name.get_ref().clone(),
                    origin: Box::new(origin),
                    flag: format!("--allow-env {tool}={}", name.get_ref()),
                    workspace: workspace.to_path_buf(),
                });
            }
            if seen.insert(name.get_ref().clone()) {
                names.push(name.get_ref().clone());
            }
        }
    }
    let own = flags
        .iter()
        .filter_map(|value| value.split_once('='))
        .filter(|(named, _)| *named == tool);
    for (_, name) in own {
        if seen.insert(name.to_string()) {
            names.push(name.to_string());
        }
    }
    Ok(EnvPolicy { names })
}

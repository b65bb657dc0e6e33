//! Network grants as written (`--allow-net [TOOL=]PATTERN`, `net = [...]`
//! under `[defaults]` and `[tools.NAME]`) and the `[network]` section,
//! resolved into each tool's [`NetGrant`]s.
//!
//! Only the user gives a tool the network: a flag, their own config file,
//! or the file of a workspace they trust. A cloned repository's
//! `toolhost.toml` that grants it is refused at startup (a grant there
//! would let the model send the workspace wherever the repository's
//! author chose), and so is its `[network]`: a certificate authority it
//! names would be trusted for every host.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::file::GrantList;
use super::origin::{FileKind, GrantOrigin, line_of};
use super::source::Source;
use crate::sandbox::{Credential, NetGrant, is_tool_name};

/// A network grant as written, with where it came from.
#[derive(Debug, Clone)]
pub(super) struct NetSpec {
    text: String,
    origin: GrantOrigin,
    /// The tool a `TOOL=PATTERN` flag or `[tools.TOOL]` section names.
    tool: Option<String>,
}

/// Splits `--allow-net [TOOL=]PATTERN` flags into global grants and
/// per-tool grants. A pattern has no `=` of its own (no query), so the
/// first one ends the tool's name.
pub(super) fn from_flags(flags: &[String]) -> (Vec<NetSpec>, BTreeMap<String, Vec<NetSpec>>) {
    let mut global = Vec::new();
    let mut per_tool: BTreeMap<String, Vec<NetSpec>> = BTreeMap::new();
    for value in flags {
        let origin = GrantOrigin::CommandLine {
            flag: "--allow-net",
            value: value.clone(),
        };
        match value.split_once('=') {
            Some((tool, text)) if is_tool_name(tool) => {
                per_tool.entry(tool.to_string()).or_default().push(NetSpec {
                    text: text.to_string(),
                    origin,
                    tool: Some(tool.to_string()),
                });
            }
            _ => global.push(NetSpec {
                text: value.clone(),
                origin,
                tool: None,
            }),
        }
    }
    (global, per_tool)
}

/// The network grants `source` gives `tool` (or every tool, for `None`).
pub(super) fn from_source(source: &Source, tool: Option<&str>) -> Vec<NetSpec> {
    let list = |list: &GrantList, section: String, tool: Option<&str>| -> Vec<NetSpec> {
        list.iter()
            .flatten()
            .map(|text| {
                let line = line_of(&source.text, text.span().start);
                NetSpec {
                    text: text.get_ref().clone(),
                    origin: GrantOrigin::in_file(source.kind, &source.path, line, section.clone()),
                    tool: tool.map(str::to_string),
                }
            })
            .collect()
    };
    let mut specs = list(&source.file.defaults.net, "[defaults] net".into(), None);
    if let Some(tool) = tool
        && let Some(section) = source.file.tools.get(tool)
    {
        specs.extend(list(
            &section.net,
            format!("[tools.{tool}] net"),
            Some(tool),
        ));
    }
    specs
}

/// The network grants `tool` (or every tool, for `None`) has: each file's,
/// then the command line's (`flags`), checked by [`resolve`].
pub(super) fn for_tool(
    sources: &[Source],
    flags: Vec<NetSpec>,
    trusted: bool,
    workspace: &Path,
    tool: Option<&str>,
    notices: &mut Vec<String>,
) -> Result<Vec<NetGrant>, ConfigError> {
    let mut specs: Vec<NetSpec> = sources.iter().flat_map(|s| from_source(s, tool)).collect();
    specs.extend(flags);
    resolve(&specs, trusted, workspace, tool, notices)
}

/// Checks and parses `specs`: each must be the user's (or a trusted
/// workspace's) and a valid pattern. Adds a notice for each grant of any
/// public host, which lets the model send what it reads anywhere.
pub(super) fn resolve(
    specs: &[NetSpec],
    trusted: bool,
    workspace: &Path,
    for_tool: Option<&str>,
    notices: &mut Vec<String>,
) -> Result<Vec<NetGrant>, ConfigError> {
    let parse = |spec: &NetSpec| {
        NetGrant::parse(&spec.text).map_err(|error| ConfigError::NetGrant {
            origin: spec.origin.clone(),
            error,
        })
    };
    // What the user granted themselves: the same grant in an untrusted
    // workspace's file then gives nothing more, and is no error (the fix
    // the refusal names works when pasted).
    let users_own: Vec<NetGrant> = specs
        .iter()
        .filter(|spec| spec.origin.is_users_own())
        .map(parse)
        .collect::<Result<_, _>>()?;
    let mut grants: Vec<NetGrant> = Vec::with_capacity(specs.len());
    for spec in specs {
        let grant = parse(spec)?;
        let from_repository = matches!(spec.origin, GrantOrigin::WorkspaceConfig { .. });
        if from_repository && !trusted && users_own.iter().any(|own| own.same_as(&grant)) {
            continue;
        }
        if from_repository && !trusted {
            let tool = spec.tool.as_deref().or(for_tool);
            return Err(ConfigError::UntrustedNetGrant {
                grant: spec.text.clone(),
                origin: Box::new(spec.origin.clone()),
                flag: format!(
                    "--allow-net {}{}",
                    tool.map(|t| format!("{t}=")).unwrap_or_default(),
                    spec.text
                ),
                workspace: workspace.to_path_buf(),
            });
        }
        if grant.is_any_host() {
            let who = spec
                .tool
                .as_deref()
                .map_or_else(|| "every tool".to_string(), |t| format!("`{t}`"));
            let notice = format!(
                "network grant `{}` (from {}) lets {who} reach any public host: the model can \
                 send what it reads, your files included, to anyone in a URL",
                spec.text, spec.origin
            );
            if !notices.contains(&notice) {
                notices.push(notice);
            }
        }
        if !grants.iter().any(|kept| kept.same_as(&grant)) {
            grants.push(grant);
        }
    }
    Ok(grants)
}

/// `[network] ca_file`: the last file's that sets it, as a path (relative
/// to that file's directory). A workspace's must be trusted.
pub(super) fn ca_file(
    sources: &[Source],
    trusted: bool,
    workspace: &Path,
) -> Result<Option<PathBuf>, ConfigError> {
    let mut chosen = None;
    for source in sources {
        let Some(written) = &source.file.network.ca_file else {
            continue;
        };
        if source.kind == FileKind::Workspace && !trusted {
            return Err(ConfigError::UntrustedCaFile {
                file: source.path.clone(),
                line: line_of(&source.text, written.span().start),
                workspace: workspace.to_path_buf(),
            });
        }
        let path = Path::new(written.get_ref());
        let base = source.path.parent().unwrap_or(Path::new("."));
        chosen = Some(base.join(path));
    }
    Ok(chosen)
}

/// `[tools.TOOL.headers."PATTERN"] NAME = "VALUE"` of every file, for
/// `tool`: each value with its `${VAR}`s read by `env` (toolhost's own
/// environment). Only the user's config or a trusted workspace's sets them.
pub(super) fn credentials(
    sources: &[Source],
    tool: &str,
    trusted: bool,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Credential>, ConfigError> {
    let mut credentials = Vec::new();
    for source in sources {
        let Some(patterns) = source
            .file
            .tools
            .get(tool)
            .and_then(|section| section.headers.as_ref())
        else {
            continue;
        };
        for (pattern, headers) in patterns {
            for (name, value) in headers {
                let line = line_of(&source.text, value.span().start);
                let problem = |problem: String| ConfigError::Header {
                    file: source.path.clone(),
                    line,
                    tool: tool.to_string(),
                    problem,
                };
                if source.kind == FileKind::Workspace && !trusted {
                    return Err(ConfigError::UntrustedHeaders {
                        file: source.path.clone(),
                        line,
                        tool: tool.to_string(),
                        workspace: workspace.to_path_buf(),
                    });
                }
                let to = NetGrant::parse(pattern).map_err(|e| problem(e.to_string()))?;
                if let Some(why) = to.credential_problem() {
                    return Err(problem(format!("`{pattern}`: {why}")));
                }
                let value = expand(value.get_ref(), env).map_err(problem)?;
                credentials.push(Credential::new(to, name, &value).map_err(problem)?);
            }
        }
    }
    Ok(credentials)
}

/// The environment variables the files' header values name (`${NAME}`),
/// so the environment is read once, before anything is decided; only
/// valid names, the ones [`expand`] looks up.
pub(super) fn header_variables(sources: &[Source]) -> BTreeSet<String> {
    let values = sources
        .iter()
        .flat_map(|source| source.file.tools.values())
        .flat_map(|section| {
            section
                .headers
                .iter()
                .flat_map(|patterns| patterns.values())
        })
        .flat_map(|headers| headers.values());
    let mut names = BTreeSet::new();
    for value in values {
        let mut rest = value.get_ref().as_str();
        while let Some(at) = rest.find("${") {
            let after = &rest[at + 2..];
            let Some(end) = after.find('}') else {
                break;
            };
            if is_variable_name(&after[..end]) {
                names.insert(after[..end].to_string());
            }
            rest = &after[end + 1..];
        }
    }
    names
}

/// Whether `name` may be an environment variable's name in a header.
fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `text` with each `${NAME}` replaced by the variable's value.
fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| "a `${` without its `}`".to_string())?;
        let name = &after[..end];
        if !is_variable_name(name) {
            return Err(format!(
                "`${{{name}}}` is not an environment variable's name"
            ));
        }
        let value = env(name).ok_or_else(|| {
            format!(
                "`${{{name}}}` is not set in toolhost's environment; set it (`export \
                 {name}=...`) before starting toolhost, or remove the header"
            )
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_read_from_the_environment_given() {
        let env = |name: &str| (name == "TOKEN").then(|| "s3cret".to_string());
        assert_eq!(expand("Bearer ${TOKEN}", &env), Ok("Bearer s3cret".into()));
        assert_eq!(expand("no variables", &env), Ok("no variables".into()));
        assert_eq!(expand("$TOKEN", &env), Ok("$TOKEN".into()));
        assert!(expand("${MISSING}", &env).is_err_and(|e| e.contains("export MISSING=")));
        assert!(expand("${1X}", &env).is_err());
        assert!(expand("${TOKEN", &env).is_err());
    }
}

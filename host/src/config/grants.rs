//! Grants as written (a flag, a line of a config file, the default) and
//! their resolution into checked [`Grant`]s.
//!
//! Where a grant was written decides what it may do: only the user's own
//! grants (flags, the user config file) may reach outside the workspace
//! without the workspace being trusted, and only they lift the protection of
//! a protected path they name. A workspace's `toolhost.toml` may have come
//! with the repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::file::GrantList;
use super::new_dirs::{self, NewDir, NewDirs};
use super::origin::GrantOrigin;
use super::origin::{FileKind, line_of};
use crate::sandbox::{Access, Grant, is_tool_name};

/// A grant as written, with where it came from.
#[derive(Debug, Clone)]
pub(super) struct GrantSpec {
    pub(super) path: String,
    pub(super) origin: GrantOrigin,
    pub(super) access: Access,
    /// The tool a `TOOL=PATH` flag or `[tools.TOOL]` section names.
    pub(super) tool: Option<String>,
}

impl GrantSpec {
    /// Whether this grant names `tool` itself (`--allow-read TOOL=PATH`,
    /// `[tools.TOOL]`), rather than every tool.
    pub(super) fn names(&self, tool: &str) -> bool {
        match &self.origin {
            GrantOrigin::CommandLine { .. } => self.tool.as_deref() == Some(tool),
            GrantOrigin::UserConfig { section, .. }
            | GrantOrigin::WorkspaceConfig { section, .. } => {
                section.starts_with(&format!("[tools.{tool}]"))
            }
            GrantOrigin::Default => false,
        }
    }
}

/// The grants of one list of a config file (`[defaults] read = [...]`).
pub(super) fn from_file(
    kind: FileKind,
    file: &Path,
    text: &str,
    list: &GrantList,
    section: String,
    access: Access,
    tool: Option<&str>,
) -> Vec<GrantSpec> {
    list.iter()
        .flatten()
        .map(|path| {
            let line = line_of(text, path.span().start);
            GrantSpec {
                path: path.get_ref().clone(),
                origin: GrantOrigin::in_file(kind, file, line, section.clone()),
                access,
                tool: tool.map(str::to_string),
            }
        })
        .collect()
}

/// Splits `[TOOL=]PATH` flags into global grants and per-tool grants.
pub(super) fn from_flags(
    flags: &[String],
    flag: &'static str,
    access: Access,
) -> (Vec<GrantSpec>, BTreeMap<String, Vec<GrantSpec>>) {
    let mut global = Vec::new();
    let mut per_tool: BTreeMap<String, Vec<GrantSpec>> = BTreeMap::new();
    for value in flags {
        let origin = GrantOrigin::CommandLine {
            flag,
            value: value.clone(),
        };
        match value.split_once('=') {
            Some((tool, path)) if is_tool_name(tool) => {
                per_tool
                    .entry(tool.to_string())
                    .or_default()
                    .push(GrantSpec {
                        path: path.to_string(),
                        origin,
                        access,
                        tool: Some(tool.to_string()),
                    });
            }
            _ => global.push(GrantSpec {
                path: value.clone(),
                origin,
                access,
                tool: None,
            }),
        }
    }
    (global, per_tool)
}

/// What a written grant comes to.
#[derive(Debug)]
pub(super) enum Resolved {
    /// A directory the tool may use.
    Grant(Grant),
    /// A protected file, or a protected path that does not exist yet, that
    /// the user named in a write grant: its protection is lifted for the
    /// tool, whose write access comes from a grant of a directory holding
    /// it. Canonical host path.
    Lift(PathBuf),
}

/// A write grant on the command line of a directory in the workspace that
/// does not exist yet is the user asking for that directory: it is planned
/// (what `mkdir -p` would make; the command makes it), with the notice
/// saying so. Not for a protected path (naming one is a lift, not a
/// directory), not outside the workspace, not for one `planned` already
/// holds, and not from a config file, which would make the directory in
/// every workspace it applies to.
pub(super) fn new_dir(
    spec: &GrantSpec,
    workspace: &Path,
    protected: &dyn Fn(&Path) -> bool,
    planned: &NewDirs,
) -> Option<(NewDir, String)> {
    let GrantOrigin::CommandLine { flag, value } = &spec.origin else {
        return None;
    };
    let written = Path::new(&spec.path);
    if spec.access != Access::Write || written.is_absolute() {
        return None;
    }
    let host = workspace.join(written);
    if std::fs::symlink_metadata(&host).is_ok() {
        return None;
    }
    let target = new_dirs::would_be(&host)?;
    if planned.will_hold(&target) || !target.starts_with(workspace) || protected(&target) {
        return None;
    }
    let notice = format!("created the directory `{}` for `{flag} {value}`", spec.path);
    let dir = NewDir {
        path: target,
        grant: spec.path.clone(),
        origin: spec.origin.clone(),
    };
    Some((dir, notice))
}

/// Turns a written grant into a checked [`Grant`] (or a [`Resolved::Lift`]).
/// `trusted`: whether the workspace is trusted, so its own config may grant
/// outside it; `lifts`: whether a grant written as the first host path
/// (links not followed) and landing on the second lifts a protection
/// ([`Protection::lifted_by`](crate::sandbox::Protection::lifted_by));
/// `new_dirs`: the directories the command will make, which count as
/// there.
pub(super) fn resolve(
    spec: &GrantSpec,
    workspace: &Path,
    trusted: bool,
    lifts: &dyn Fn(&Path, &Path) -> bool,
    new_dirs: &NewDirs,
) -> Result<Resolved, ConfigError> {
    let error = |problem: String| ConfigError::Grant {
        grant: spec.path.clone(),
        origin: spec.origin.clone(),
        problem,
    };
    let written = Path::new(&spec.path);
    let host = if written.is_absolute() {
        written.to_path_buf()
    } else {
        workspace.join(written)
    };
    // The user may name a protected file, or one to be created, to lift
    // its protection (`--allow-write edit_file=toolhost.toml`); only a
    // directory is a grant.
    let may_lift = spec.origin.is_users_own() && spec.access == Access::Write;
    let canonical = new_dirs.canonicalize(&host);
    if may_lift
        && !canonical.as_ref().is_ok_and(|c| new_dirs.is_dir(c))
        && let Some(named) =
            crate::sandbox::lift_target_with(&host, &|path| new_dirs.canonicalize(path))
        && lifts(&host, &named)
    {
        return Ok(Resolved::Lift(named));
    }
    let outside = || {
        error(format!(
            "points outside the workspace `{}`; grant a directory inside it, or write an absolute path to grant \
             one outside on purpose",
            workspace.display()
        ))
    };
    // A missing directory that `..` puts outside is outside first: telling
    // the user to create it would only lead to the next error.
    if canonical.is_err() && !written.is_absolute() && climbs_out(written) {
        return Err(outside());
    }
    let canonical = canonical.map_err(|e| {
        error(format!(
            "cannot be used: `{}` {}; create the directory or fix the path",
            host.display(),
            if e.kind() == std::io::ErrorKind::NotFound {
                "does not exist".to_string()
            } else {
                e.to_string()
            }
        ))
    })?;
    if !new_dirs.is_dir(&canonical) {
        return Err(error(format!(
            "is not a directory (`{}`); grant the directory that holds it",
            canonical.display()
        )));
    }
    let guest_path = match canonical.strip_prefix(workspace) {
        Ok(inside) if inside.as_os_str().is_empty() => ".".to_string(),
        Ok(inside) => inside.to_string_lossy().into_owned(),
        Err(_) if written.is_absolute() && (spec.origin.is_users_own() || trusted) => {
            canonical.to_string_lossy().into_owned()
        }
        Err(_) if written.is_absolute() => {
            let flag = format!(
                "--allow-{} {}{}",
                spec.access.verb(),
                spec.tool
                    .as_deref()
                    .map(|t| format!("{t}="))
                    .unwrap_or_default(),
                spec.path
            );
            return Err(ConfigError::UntrustedGrant {
                grant: spec.path.clone(),
                origin: Box::new(spec.origin.clone()),
                flag,
                workspace: workspace.to_path_buf(),
            });
        }
        Err(_) => return Err(outside()),
    };
    Ok(Resolved::Grant(Grant {
        host_path: canonical,
        guest_path,
        access: spec.access,
    }))
}

/// Whether a relative path's `..`s, read as written, climb above where it
/// starts.
fn climbs_out(path: &Path) -> bool {
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            std::path::Component::ParentDir if depth == 0 => return true,
            std::path::Component::ParentDir => depth -= 1,
            std::path::Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn climbs_out_reads_dot_dots_as_written() {
        for (path, out) in [
            ("../away", true),
            ("a/../../b", true),
            ("a/../b", false),
            ("./a/b/..", false),
            ("a", false),
        ] {
            assert_eq!(climbs_out(Path::new(path)), out, "{path}");
        }
    }
}

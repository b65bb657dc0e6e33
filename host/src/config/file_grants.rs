//! Each tool's file grants: what the files and the flags give it, each
//! resolved into a checked [`Grant`] or a lift of a protected path, and
//! the workspace's `[defaults] write` an untrusted workspace may not give.

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::flags::FlagGrants;
use super::gather::Gathered;
use super::grants::{self, GrantSpec};
use super::new_dirs::NewDirs;
use super::origin::GrantOrigin;
use super::source::{DEFAULTS_WRITE, Source};
use crate::sandbox::{Access, Grant, Protection, simplify_grants};

/// Standard tools that work on no files (`fetch` reaches only the
/// network): they get no directory unless one is granted to them by name.
pub(super) const FILELESS_TOOLS: &[&str] = &["fetch"];

/// What file grants are resolved from.
pub(super) struct FileGrants<'a> {
    sources: &'a [Source],
    flags: &'a FlagGrants,
    workspace: &'a Path,
    trusted: bool,
    protection: &'a Protection,
    /// The directories the command will make for its write grants.
    new_dirs: &'a NewDirs,
}

impl<'a> FileGrants<'a> {
    pub(super) fn new(
        gathered: &'a Gathered,
        flags: &'a FlagGrants,
        protection: &'a Protection,
        new_dirs: &'a NewDirs,
    ) -> Self {
        FileGrants {
            sources: &gathered.sources,
            flags,
            workspace: &gathered.workspace,
            trusted: gathered.trusted,
            protection,
            new_dirs,
        }
    }

    /// An untrusted workspace may not give every tool write access: that
    /// would reach tools it does not know of (the user's own code tools and
    /// plugins). It may still name the tools its project needs.
    fn withheld(&self, spec: &GrantSpec) -> bool {
        !self.trusted
            && spec.access == Access::Write
            && matches!(&spec.origin, GrantOrigin::WorkspaceConfig { section, .. }
                if section == DEFAULTS_WRITE)
    }

    /// Whether the grant `spec`, landing on the host path `canonical`,
    /// lifts a protection: only the user's own words do, and only when they
    /// name it, with those of the user's other write grants `also` for the
    /// same tool ([`Protection::lifted_by`]).
    fn lifts(&self, spec: &GrantSpec, canonical: &Path, also: &[PathBuf]) -> bool {
        spec.origin.is_users_own()
            && spec.access == Access::Write
            && self
                .protection
                .lifted_by(&self.workspace.join(&spec.path), canonical, also)
    }

    /// The path of a lift as its words name it, when a link on the way
    /// makes it another than where it lands (`.vscode` for `.vscode ->
    /// docs`) and the words lift what is there: a change of the link's
    /// own name (replacing it, a `mkdir -p` through it) is a change there.
    fn words_lifted(&self, spec: &GrantSpec, lands: &Path, also: &[PathBuf]) -> Option<PathBuf> {
        let words = crate::sandbox::lexical_path(&self.workspace.join(&spec.path));
        (words != lands && self.lifts(spec, &words, also)).then_some(words)
    }

    /// The paths, as written, of the user's own write grants among `specs`.
    fn users_writes(&self, specs: &[GrantSpec]) -> Vec<PathBuf> {
        specs
            .iter()
            .filter(|spec| spec.origin.is_users_own() && spec.access == Access::Write)
            .map(|spec| self.workspace.join(&spec.path))
            .collect()
    }

    fn resolve(&self, spec: &GrantSpec, also: &[PathBuf]) -> Result<grants::Resolved, ConfigError> {
        grants::resolve(
            spec,
            self.workspace,
            self.trusted,
            &|written: &Path, canonical: &Path| self.protection.lifted_by(written, canonical, also),
            self.new_dirs,
        )
    }

    /// A notice for each `[defaults] write` grant of an untrusted
    /// workspace's file, which is not applied; an error first for one that
    /// would be wrong anyway, as for any grant.
    pub(super) fn withheld_writes(&self) -> Result<Vec<String>, ConfigError> {
        let mut notices = Vec::new();
        for spec in self.sources.iter().flat_map(|s| s.grants(None)) {
            if !self.withheld(&spec) {
                continue;
            }
            self.resolve(&spec, &[])?;
            notices.push(format!(
                "write grant `{}` (from {}) is not applied: a workspace's own toolhost.toml may not give \
                 every tool write access (it may have come with the repository, and every tool includes \
                 your own). To allow it, pass it yourself (`--allow-write {}`), name the tools that need \
                 it under [tools.NAME] write, or trust this workspace (`toolhost trust {}`)",
                spec.path,
                spec.origin,
                spec.path,
                self.workspace.display()
            ));
        }
        Ok(notices)
    }

    /// `tool`'s grants (every tool's, for `None`), and the protected paths
    /// it may change.
    pub(super) fn for_tool(
        &self,
        tool: Option<&str>,
    ) -> Result<(Vec<Grant>, Vec<PathBuf>), ConfigError> {
        let specs = self.specs(tool);
        let also = self.users_writes(&specs);
        let mut resolved = Vec::new();
        let mut lifted = Vec::new();
        let mut lift_specs = Vec::new();
        for spec in &specs {
            match self.resolve(spec, &also)? {
                grants::Resolved::Grant(grant) => {
                    // A protected directory the user granted by name may be
                    // changed by this tool; the workspace's own config
                    // cannot lift anything.
                    if self.lifts(spec, &grant.host_path, &also) {
                        lifted.push(grant.host_path.clone());
                        lifted.extend(self.words_lifted(spec, &grant.host_path, &also));
                    }
                    resolved.push(grant);
                }
                grants::Resolved::Lift(path) => {
                    lifted.push(path.clone());
                    lifted.extend(self.words_lifted(spec, &path, &also));
                    lift_specs.push((spec, path));
                }
            }
        }
        for (spec, path) in lift_specs {
            lift_is_writable(spec, &path, &resolved)?;
        }
        Ok((simplify_grants(resolved), lifted))
    }

    /// The grants as written for `tool`: the files' (but those withheld),
    /// the flags', and the workspace when nothing mentions reads.
    fn specs(&self, tool: Option<&str>) -> Vec<GrantSpec> {
        let mut specs: Vec<GrantSpec> = self
            .sources
            .iter()
            .flat_map(|s| s.grants(tool))
            .filter(|spec| !self.withheld(spec))
            .collect();
        specs.extend(self.flags.file_grants(tool));
        // A tool that works on no files gets only the directories granted
        // to it by name: not the defaults, not the workspace.
        let fileless = tool.filter(|t| FILELESS_TOOLS.contains(t));
        if let Some(tool) = fileless {
            specs.retain(|spec| spec.names(tool));
        }
        let reads_mentioned = fileless.is_some()
            || self.sources.iter().any(|s| s.mentions_reads(tool))
            || specs.iter().any(|s| {
                s.access == Access::Read && matches!(s.origin, GrantOrigin::CommandLine { .. })
            });
        if !reads_mentioned {
            specs.push(GrantSpec {
                path: ".".into(),
                origin: GrantOrigin::Default,
                access: Access::Read,
                tool: None,
            });
        }
        specs
    }
}

/// A lifted file is written through a grant of a directory holding it;
/// without one the lift would do nothing, so say so.
fn lift_is_writable(spec: &GrantSpec, path: &Path, resolved: &[Grant]) -> Result<(), ConfigError> {
    let writable = resolved
        .iter()
        .any(|g| g.access == Access::Write && path.starts_with(&g.host_path));
    if writable {
        return Ok(());
    }
    let tool = spec
        .tool
        .as_deref()
        .map_or(String::new(), |t| format!("{t}="));
    Err(ConfigError::Grant {
        grant: spec.path.clone(),
        origin: spec.origin.clone(),
        problem: format!(
            "is not a directory: it lifts the protection of `{}`, but the tool also needs \
             write access to a directory holding it; add `--allow-write {tool}.` (or a \
             narrower directory)",
            spec.path
        ),
    })
}

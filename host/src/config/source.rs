//! A config file that was read (the user's or the workspace's), with its
//! text for line numbers, and the grants it gives.

use std::path::PathBuf;

use super::file::ConfigFile;
use super::grants::{self, GrantSpec};
use super::origin::FileKind;
use crate::sandbox::Access;

/// A config file that was read, with its text (for line numbers).
pub(super) struct Source {
    pub(super) kind: FileKind,
    pub(super) path: PathBuf,
    pub(super) text: String,
    pub(super) file: ConfigFile,
}

impl Source {
    pub(super) fn display(&self) -> String {
        self.path.display().to_string()
    }

    /// The grants this file gives `tool` (or every tool, for `None`).
    pub(super) fn grants(&self, tool: Option<&str>) -> Vec<GrantSpec> {
        let list = |list, section: String, access| {
            grants::from_file(
                self.kind, &self.path, &self.text, list, section, access, tool,
            )
        };
        let mut specs = list(
            &self.file.defaults.read,
            "[defaults] read".into(),
            Access::Read,
        );
        specs.extend(list(
            &self.file.defaults.write,
            DEFAULTS_WRITE.into(),
            Access::Write,
        ));
        if let Some(tool) = tool
            && let Some(section) = self.file.tools.get(tool)
        {
            specs.extend(list(
                &section.read,
                format!("[tools.{tool}] read"),
                Access::Read,
            ));
            specs.extend(list(
                &section.write,
                format!("[tools.{tool}] write"),
                Access::Write,
            ));
        }
        specs
    }

    /// Whether this file says anything about reads for `tool`.
    pub(super) fn mentions_reads(&self, tool: Option<&str>) -> bool {
        self.file.defaults.read.is_some()
            || tool
                .and_then(|t| self.file.tools.get(t))
                .is_some_and(|s| s.read.is_some())
    }
}

/// The section a grant to every tool to write is written in.
pub(super) const DEFAULTS_WRITE: &str = "[defaults] write";

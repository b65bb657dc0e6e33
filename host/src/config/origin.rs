//! Where a setting came from (a flag, the user's config, the workspace's
//! file and line): what every configuration error and notice names.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where a grant was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantOrigin {
    /// `--allow-read` / `--allow-write` on the command line.
    CommandLine { flag: &'static str, value: String },
    /// The user's own config file (`~/.config/toolhost/config.toml`).
    UserConfig {
        file: PathBuf,
        line: usize,
        section: String,
    },
    /// The workspace's config file (`toolhost.toml`, or `--config FILE`).
    WorkspaceConfig {
        file: PathBuf,
        line: usize,
        section: String,
    },
    /// The built-in default: every tool may read the workspace.
    Default,
}

impl fmt::Display for GrantOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrantOrigin::CommandLine { flag, value } => write!(f, "{flag} {value}"),
            GrantOrigin::UserConfig {
                file,
                line,
                section,
            }
            | GrantOrigin::WorkspaceConfig {
                file,
                line,
                section,
            } => write!(f, "{}:{line} {section}", file.display()),
            GrantOrigin::Default => f.write_str("the default (every tool may read the workspace)"),
        }
    }
}

impl GrantOrigin {
    /// A grant written at `line` of `section` in a config file of `kind`.
    pub(crate) fn in_file(kind: FileKind, file: &Path, line: usize, section: String) -> Self {
        let file = file.to_path_buf();
        match kind {
            FileKind::User => GrantOrigin::UserConfig {
                file,
                line,
                section,
            },
            FileKind::Workspace => GrantOrigin::WorkspaceConfig {
                file,
                line,
                section,
            },
        }
    }

    /// Whether the user wrote this grant themselves, so it may reach outside
    /// the workspace and lift the protection of a path it names.
    pub(crate) fn is_users_own(&self) -> bool {
        matches!(
            self,
            GrantOrigin::CommandLine { .. } | GrantOrigin::UserConfig { .. }
        )
    }
}

/// Which config file a section comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    User,
    Workspace,
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

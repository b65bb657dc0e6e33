//! The user's own configuration, outside every workspace: defaults for all
//! workspaces (`config.toml`, the same format as `toolhost.toml`) and the
//! workspaces they trust (`trusted.toml`, written by `toolhost trust`),
//! the user's own plugins (`plugins/`, loaded in every workspace) and the
//! bearer token of `toolhost mcp --http` (`mcp-token`).
//!
//! Both live in `$TOOLHOST_CONFIG_DIR`, else `$XDG_CONFIG_HOME/toolhost`,
//! else `~/.config/toolhost`. No tool can reach them: they are outside the
//! workspace unless the user grants that directory themselves.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::environment::env_path;
use super::error::ConfigError;

/// The user config file in the user config directory.
pub const CONFIG_FILE: &str = "config.toml";

/// The trust list in the user config directory.
pub const TRUST_FILE: &str = "trusted.toml";

/// Your own plugins, loaded in every workspace (`plugin add --user`,
/// `plugin install --user`).
pub const PLUGINS_DIR: &str = "plugins";

/// A directory of empty files, each named by the sha256 of a plugin file
/// the user put into a workspace with `plugin add` or `plugin install`:
/// such a plugin is the user's, not something the repository shipped.
pub const ADDED_DIR: &str = "added-plugins";

/// The sha256 (hex) of every plugin file recorded in `dir`'s
/// [`ADDED_DIR`]; none when it is missing or unreadable.
pub fn added_plugins(dir: &Path) -> std::collections::BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir.join(ADDED_DIR)) else {
        return Default::default();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect()
}

/// Records that the user put the plugin file of `sha256` into a workspace.
pub fn record_added(dir: &Path, sha256: &str) -> std::io::Result<()> {
    let added = dir.join(ADDED_DIR);
    crate::workspace::create_private_dir(dir)?;
    crate::workspace::create_private_dir(&added)?;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(added.join(sha256))
        .map(drop)
}

/// The bearer token of `toolhost mcp --http`, made on first use (0600).
pub const MCP_TOKEN_FILE: &str = "mcp-token";

/// The key that seals the grants given in a session, made on first use
/// (0600).
pub const GRANT_KEY_FILE: &str = "grant-key";

/// `$TOOLHOST_CONFIG_DIR`, else `$XDG_CONFIG_HOME/toolhost`, else
/// `~/.config/toolhost`; `None` when none of them is set.
pub fn config_dir() -> Option<PathBuf> {
    env_path("TOOLHOST_CONFIG_DIR")
        .or_else(|| env_path("XDG_CONFIG_HOME").map(|p| p.join("toolhost")))
        .or_else(|| env_path("HOME").map(|p| p.join(".config/toolhost")))
}

/// The workspaces whose own `toolhost.toml` may grant outside them.
#[derive(Debug, Clone)]
pub struct TrustList {
    path: PathBuf,
    workspaces: Vec<PathBuf>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    #[serde(default)]
    workspaces: Vec<PathBuf>,
}

const TRUST_HEADER: &str = "# Workspaces whose own toolhost.toml may grant directories outside them.\n\
                            # Written by `toolhost trust`; see `toolhost trust --help`.\n";

impl TrustList {
    /// The trust list in `dir`; empty when the file does not exist.
    pub fn load(dir: &Path) -> Result<Self, ConfigError> {
        let path = dir.join(TRUST_FILE);
        let file: TrustFile = match crate::text_file::read_text(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| ConfigError::ParseFile {
                path: path.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => TrustFile::default(),
            Err(source) => return Err(ConfigError::ReadFile { path, source }),
        };
        Ok(TrustList {
            path,
            workspaces: file.workspaces,
        })
    }

    /// An empty list that cannot be saved (no user config directory).
    pub fn empty() -> Self {
        TrustList {
            path: PathBuf::new(),
            workspaces: Vec::new(),
        }
    }

    /// Whether `workspace` (canonical) is trusted.
    pub fn trusts(&self, workspace: &Path) -> bool {
        self.workspaces.iter().any(|w| w == workspace)
    }

    /// The trusted workspaces, in the order they were added.
    pub fn workspaces(&self) -> &[PathBuf] {
        &self.workspaces
    }

    /// The file the list is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds `workspace`; false when it was already trusted.
    pub fn add(&mut self, workspace: PathBuf) -> bool {
        if self.trusts(&workspace) {
            return false;
        }
        self.workspaces.push(workspace);
        true
    }

    /// Removes `workspace`; false when it was not trusted.
    pub fn remove(&mut self, workspace: &Path) -> bool {
        let before = self.workspaces.len();
        self.workspaces.retain(|w| w != workspace);
        self.workspaces.len() != before
    }

    /// Writes the list: a new file renamed over the old one, so a crash
    /// leaves either list whole. The directory is private to the user.
    pub fn save(&self) -> std::io::Result<()> {
        let dir = self
            .path
            .parent()
            .ok_or_else(|| std::io::Error::other("no user config directory"))?;
        crate::workspace::create_private_dir(dir)?;
        let body = toml::to_string(&TrustFile {
            workspaces: self.workspaces.clone(),
        })
        .map_err(std::io::Error::other)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        temp.write_all(TRUST_HEADER.as_bytes())?;
        temp.write_all(body.as_bytes())?;
        temp.as_file().sync_all()?;
        temp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trust_list_survives_a_save_and_ignores_duplicates() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = dir.path().join("toolhost");
        let mut list = TrustList::load(&config).expect("empty");
        assert!(list.workspaces().is_empty());
        assert!(list.add("/work/a".into()));
        assert!(!list.add("/work/a".into()));
        assert!(list.add("/work/b".into()));
        list.save().expect("save");
        let text = std::fs::read_to_string(config.join(TRUST_FILE)).expect("read");
        assert!(
            text.starts_with("# Workspaces whose own toolhost.toml"),
            "{text}"
        );
        let mut again = TrustList::load(&config).expect("load");
        assert!(again.trusts(Path::new("/work/b")));
        assert!(again.remove(Path::new("/work/a")));
        assert!(!again.remove(Path::new("/work/a")));
        assert_eq!(again.workspaces(), [PathBuf::from("/work/b")]);
    }
}

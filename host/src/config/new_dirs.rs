//! Directories the command line's write grants ask for that do not exist
//! yet. Resolving only plans them, and changes nothing on disk: the grants
//! are checked as if they were made, and the command makes them right
//! after resolving, before the sandbox loads ([`NewDirs::create`]).

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::origin::GrantOrigin;

/// A directory to make, and the grant that asks for it (for the error if
/// it cannot be made).
#[derive(Debug, Clone)]
pub(super) struct NewDir {
    /// Where it will be: its nearest existing directory, resolved, and the
    /// names still to make.
    pub(super) path: PathBuf,
    /// The grant as written.
    pub(super) grant: String,
    pub(super) origin: GrantOrigin,
}

/// The directories to make, in the order of the grants that ask for them.
#[derive(Debug, Clone, Default)]
pub struct NewDirs(Vec<NewDir>);

impl NewDirs {
    /// Makes each directory (and what is missing above it, as `mkdir -p`
    /// would); the first that cannot be made is the error, naming its
    /// grant.
    pub fn create(&self) -> Result<(), ConfigError> {
        for dir in &self.0 {
            std::fs::create_dir_all(&dir.path).map_err(|e| ConfigError::Grant {
                grant: dir.grant.clone(),
                origin: dir.origin.clone(),
                problem: format!("cannot be created (`{}`: {e})", dir.path.display()),
            })?;
        }
        Ok(())
    }

    /// The directories, in order.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.0.iter().map(|dir| dir.path.as_path())
    }

    pub(super) fn push(&mut self, dir: NewDir) {
        self.0.push(dir);
    }

    /// Whether `path` (as [`would_be`] gives it) will be a directory once
    /// they are made: one of them, or a directory above one.
    pub(super) fn will_hold(&self, path: &Path) -> bool {
        self.0.iter().any(|dir| dir.path.starts_with(path))
    }

    /// `path.canonicalize()` as it will be once they are made.
    pub(super) fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        path.canonicalize().or_else(|error| match would_be(path) {
            Some(planned) if self.will_hold(&planned) => Ok(planned),
            _ => Err(error),
        })
    }

    /// Whether canonical `path` is a directory, or will be once they are
    /// made (a path that is there already stays what it is).
    pub(super) fn is_dir(&self, path: &Path) -> bool {
        match std::fs::metadata(path) {
            Ok(metadata) => metadata.is_dir(),
            Err(_) => self.will_hold(path),
        }
    }
}

/// Where `host`, which does not exist, would be if it were made: its
/// nearest existing directory, resolved, and the names still to make.
/// `None` when a `..` is among those names or nothing above it resolves.
pub(super) fn would_be(host: &Path) -> Option<PathBuf> {
    let mut existing = host;
    let mut missing = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            return None;
        };
        missing.push(name);
        existing = parent;
    }
    let mut target = existing.canonicalize().ok()?;
    for name in missing.iter().rev() {
        if *name == ".." {
            return None;
        }
        target.push(name);
    }
    Some(target)
}

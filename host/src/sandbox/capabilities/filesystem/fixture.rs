//! A workspace on real files for the guard's unit tests: a temporary
//! directory with a git repository's `.git`, a `src`, `toolhost.toml` and
//! toolhost's records, the protection toolhost puts on it, and the rules and
//! held directories a tool with grants on it would get.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime_wasi::filesystem::Dir;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

use super::change::{self, Located};
use super::preopens::open_grant;
use super::rules::FsRules;
use crate::sandbox::capabilities::protect::{ProtectedPath, Protection, RecordPath};
use crate::sandbox::capabilities::{Access, Grant};

/// A temporary workspace; removed when dropped.
pub(super) struct Workspace {
    _dir: tempfile::TempDir,
    /// Its canonical path.
    pub(super) root: PathBuf,
}

impl Workspace {
    /// A workspace holding `.git/hooks`, `.git/HEAD`, `.git/config`,
    /// `src/main.rs`, `toolhost.toml` and `.toolhost/{sessions,outputs}`.
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        let workspace = Workspace { _dir: dir, root };
        workspace.write(".git/HEAD", "ref: refs/heads/main\n");
        workspace.write(".git/config", "");
        workspace.write(".git/hooks/pre-commit.sample", "");
        workspace.write("src/main.rs", "fn main() {}\n");
        workspace.write("toolhost.toml", "");
        workspace.write(".toolhost/sessions/s.jsonl", "{}\n");
        workspace.write(".toolhost/outputs/o.txt", "saved\n");
        workspace
    }

    /// The host path of `relative`.
    pub(super) fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Writes `text` to `relative`, making its directories.
    pub(super) fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    /// Makes the directory `relative` and those above it.
    pub(super) fn mkdir(&self, relative: &str) {
        fs::create_dir_all(self.path(relative)).expect("mkdir");
    }

    /// A symbolic link at `relative` to `target`, as a repository can ship.
    pub(super) fn symlink(&self, target: impl AsRef<Path>, relative: &str) {
        std::os::unix::fs::symlink(target, self.path(relative)).expect("symlink");
    }

    /// The protection toolhost puts on this workspace (a few of its
    /// built-in paths, enough for every rule): `toolhost.toml` and
    /// `.toolhost` at the root, `.git`, `.claude` and `.github/hooks` at
    /// any depth.
    pub(super) fn protection(&self) -> Arc<Protection> {
        let spec = |relative: &str, at_any_depth| ProtectedPath {
            relative: relative.into(),
            why: format!("{relative} matters"),
            at_any_depth,
            toolhosts_own: relative.contains("toolhost"),
        };
        let paths = vec![
            spec("toolhost.toml", false),
            spec(".toolhost", false),
            spec(".git", true),
            spec(".claude", true),
            spec(".github/hooks", true),
        ];
        Arc::new(Protection::new(
            &self.root,
            paths,
            &RecordPath::of_workspace(),
        ))
    }

    /// The grant of `relative` with `access`.
    pub(super) fn grant(&self, relative: &str, access: Access) -> Grant {
        Grant {
            host_path: self.path(relative).canonicalize().expect("granted"),
            guest_path: relative.into(),
            access,
        }
    }

    /// The rules of a tool with a write grant of the whole workspace.
    pub(super) fn rules(&self) -> FsRules {
        self.rules_with(Vec::new(), &[self.grant(".", Access::Write)])
    }

    /// The rules of a tool with `grants` and the protections the user
    /// lifted for it (`lifted`, relative to the workspace).
    pub(super) fn rules_with(&self, lifted: Vec<&str>, grants: &[Grant]) -> FsRules {
        let lifted = lifted.into_iter().map(|path| self.path(path)).collect();
        FsRules::new(self.protection(), lifted, grants)
    }

    /// `relative` held open as a granted directory is, with `access`.
    pub(super) fn dir(&self, relative: &str, access: Access) -> Dir {
        open_grant(&self.grant(relative, access)).expect("open the grant")
    }

    /// `path` under the held directory `dir`, resolved for a change, as
    /// the guard resolves it; `follow`: a link in the last name is followed.
    pub(super) fn locate(&self, dir: &Dir, path: &str, follow: bool) -> Located {
        change::locate(dir.clone(), path, follow, ErrorCode::Invalid)
            .unwrap_or_else(|_| panic!("{path} resolves"))
    }
}

//! The workspace's own files: its config file and the `.toolhost/` state
//! directory (plugins, sessions, saved long results).
//!
//! One module names them so the config loader, the session store and the
//! rules about what tools may touch agree on where they are. A leaf: it
//! imports nothing of ours.

use std::path::{Path, PathBuf};

/// The config file looked for in the workspace when no `--config` is given.
pub const CONFIG_FILE: &str = "toolhost.toml";

/// toolhost's state inside a workspace.
pub const STATE_DIR: &str = ".toolhost";

/// Plugins loaded when no `--plugins` is given.
pub const PLUGINS_DIR: &str = ".toolhost/plugins";

/// Session files, when no `--session-dir` is given.
pub const SESSIONS_DIR: &str = ".toolhost/sessions";

/// git's directory. No tool may change one, at any depth of the workspace.
pub const GIT_DIR: &str = ".git";

/// Long tool results saved whole. Relative to the workspace, so the model
/// can page through them with `read_file`.
pub const OUTPUTS_DIR: &str = ".toolhost/outputs";

/// What toolhost writes into a `.toolhost/` it creates: git ignores the
/// directory, so `git add .` does not commit prompts and tool output (as
/// Python's venv and Cargo's `target/` do).
pub const STATE_GITIGNORE: &str =
    "# Made by toolhost: sessions, saved tool results and plugins, not for git.\n*\n";

/// Makes `dir` and its missing parents readable by the user only (what
/// toolhost keeps holds prompts, tool output, a token). The sandbox keeps
/// its own copy: it imports nothing of ours.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Before `dir` is created: when its parent is a `.toolhost` that does not
/// exist yet, makes it (private: it holds prompts and tool output) with a
/// `.gitignore` of everything. A `.toolhost` already there is left as it
/// is, so a user who removed the `.gitignore` keeps it removed.
pub fn prepare_state_dir(dir: &Path) -> std::io::Result<()> {
    let Some(state) = dir
        .parent()
        .filter(|p| p.file_name() == Some(STATE_DIR.as_ref()))
    else {
        return Ok(());
    };
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(state) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        // A missing workspace and the like: whoever creates `dir` says so.
        Err(_) => return Ok(()),
    }
    std::fs::write(state.join(".gitignore"), STATE_GITIGNORE)
}

/// The paths of one workspace's own files.
#[derive(Debug, Clone, Copy)]
pub struct Layout<'a> {
    root: &'a Path,
}

impl<'a> Layout<'a> {
    /// The layout of the workspace at `root`.
    pub fn of(root: &'a Path) -> Self {
        Layout { root }
    }

    pub fn config_file(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    pub fn plugins_dir(&self) -> PathBuf {
        self.root.join(PLUGINS_DIR)
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join(SESSIONS_DIR)
    }

    pub fn outputs_dir(&self) -> PathBuf {
        self.root.join(OUTPUTS_DIR)
    }

    /// Refuses a workspace where `.toolhost` or one of its directories is a
    /// symbolic link. toolhost writes sessions and saved results there and
    /// loads plugins from there; a link (which a cloned repository can ship)
    /// would send those writes, or the plugins, anywhere.
    pub fn check_state_links(&self) -> Result<(), StateLink> {
        let dirs = [
            (STATE_DIR, "state", ""),
            (
                PLUGINS_DIR,
                "plugins",
                "; to load plugins from elsewhere, pass `--plugins DIR`",
            ),
            (
                SESSIONS_DIR,
                "session files",
                "; to keep sessions elsewhere, pass `--session-dir DIR`",
            ),
            (OUTPUTS_DIR, "saved tool results", ""),
        ];
        for (relative, what, hint) in dirs {
            let path = self.root.join(relative);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                return Err(StateLink {
                    path,
                    target,
                    what,
                    hint,
                });
            }
        }
        Ok(())
    }
}

/// One of toolhost's own directories in a workspace is a symbolic link.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{}` is a symbolic link (to `{}`): toolhost keeps its {what} there and does not follow \
     links from its own directory. Remove the link (`rm {}`) and run again{hint}",
    .path.display(), .target.display(), .path.display()
)]
pub struct StateLink {
    pub path: PathBuf,
    pub target: PathBuf,
    what: &'static str,
    hint: &'static str,
}

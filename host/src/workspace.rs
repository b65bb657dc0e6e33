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

/// What toolhost writes into `.toolhost/` when it holds no `.gitignore`: git ignores the
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

/// Makes toolhost's directory `dir` (its sessions, its saved results)
/// and, when its parent is a `.toolhost`, that one: each private to the
/// user, however it was found (a repository can ship `.toolhost/plugins/`
/// and so a `.toolhost` of mode 0755), and a `.toolhost` gets a
/// `.gitignore` of everything unless it has one. What toolhost keeps there
/// holds prompts and what tools read from private places.
///
/// Never through a link: a `.toolhost` or `dir` that is one is an error
/// (ELOOP), a `.gitignore` that is one is left as it is.
pub fn private_state_dir(dir: &Path) -> std::io::Result<()> {
    let Some(state) = dir
        .parent()
        .filter(|p| p.file_name() == Some(STATE_DIR.as_ref()))
    else {
        // A directory the user named (`--session-dir`): made private when
        // missing, left as it is when not (its files are private).
        return create_private_dir(dir);
    };
    create_private_dir(state)?;
    make_private(state)?;
    let mut ignore = std::fs::OpenOptions::new();
    ignore.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut ignore, 0o600);
    match ignore.open(state.join(".gitignore")) {
        Ok(mut file) => std::io::Write::write_all(&mut file, STATE_GITIGNORE.as_bytes())?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    create_private_dir(dir)?;
    make_private(dir)
}

/// Takes group and other access from the directory `dir` (opened without
/// following a link, and changed through that handle, so a link put there
/// meanwhile is never followed).
fn make_private(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        let handle = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
            .open(dir)?;
        let mode = handle.metadata()?.permissions().mode();
        if mode & 0o077 != 0 {
            handle.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))?;
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn a_state_directory_found_open_is_made_private_and_ignored() {
        let root = tempfile::tempdir().expect("temp dir");
        let state = root.path().join(STATE_DIR);
        std::fs::create_dir_all(state.join("plugins")).expect("mkdir");
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let outputs = root.path().join(OUTPUTS_DIR);
        private_state_dir(&outputs).expect("prepared");
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(&outputs), 0o700);
        assert_eq!(mode(&state.join(".gitignore")), 0o600);
        assert_eq!(
            std::fs::read_to_string(state.join(".gitignore")).expect("ignore"),
            STATE_GITIGNORE
        );
        // One the user wrote stays.
        std::fs::write(state.join(".gitignore"), "mine\n").expect("write");
        private_state_dir(&root.path().join(SESSIONS_DIR)).expect("prepared");
        assert_eq!(
            std::fs::read_to_string(state.join(".gitignore")).expect("ignore"),
            "mine\n"
        );
    }

    #[test]
    fn a_state_directory_that_is_a_link_is_not_followed() {
        let root = tempfile::tempdir().expect("temp dir");
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        std::os::unix::fs::symlink(&elsewhere, root.path().join(STATE_DIR)).expect("link");
        assert!(private_state_dir(&root.path().join(OUTPUTS_DIR)).is_err());
        assert_eq!(mode(&elsewhere), 0o755);
        assert!(!elsewhere.join("outputs").exists());
    }
}

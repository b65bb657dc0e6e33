//! The command a hint tells the user to paste starts with: `toolhost` when
//! that is what their shell runs, else this binary's own path. Run from a
//! clone with `cargo run`, there is no `toolhost` on `PATH`, and a hint
//! saying `toolhost trust DIR` would fail when pasted.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `toolhost`, or this binary's path (quoted for a shell when it needs it).
pub(in crate::cli) fn program() -> &'static str {
    static PROGRAM: OnceLock<String> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let Ok(me) = std::env::current_exe().and_then(|exe| exe.canonicalize()) else {
            return "toolhost".into();
        };
        let path = std::env::var_os("PATH").unwrap_or_default();
        if runs_as_toolhost(&me, &path) {
            "toolhost".into()
        } else {
            super::shell_word(&me.display().to_string())
        }
    })
}

/// Whether `toolhost` on `path` is the binary `me`.
fn runs_as_toolhost(me: &Path, path: &std::ffi::OsStr) -> bool {
    std::env::split_paths(path)
        .map(|dir| dir.join("toolhost"))
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.canonicalize().ok())
        .is_some_and(|found: PathBuf| found == me)
}

/// `text` with each command it quotes (`` `toolhost ...` ``) starting with
/// [`program`].
pub(super) fn pasteable(text: &str) -> std::borrow::Cow<'_, str> {
    let program = program();
    if program == "toolhost" || !text.contains("`toolhost ") {
        return text.into();
    }
    text.replace("`toolhost ", &format!("`{program} ")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolhost_is_named_only_when_path_finds_this_binary() {
        let dir = tempfile::tempdir().expect("temp dir");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        let me = dir.path().join("real-toolhost");
        std::fs::write(&me, "").expect("write");
        let me = me.canonicalize().expect("canonical");
        std::os::unix::fs::symlink(&me, bin.join("toolhost")).expect("link");
        assert!(runs_as_toolhost(&me, bin.as_os_str()));
        assert!(!runs_as_toolhost(&me, dir.path().as_os_str()));
        let other = dir.path().join("other");
        std::fs::write(&other, "").expect("write");
        assert!(!runs_as_toolhost(&other, bin.as_os_str()));
    }
}

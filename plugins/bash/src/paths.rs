//! Where a path of the shell lands: the shell shows the workspace at its
//! real path (what `pwd` prints, what the system prompt names), while the
//! component reaches it through the WASI preopen `.`; scratch files under
//! `/tmp` stay in the call's memory; any other absolute path goes to WASI
//! as it is, where only a grant at that path (`--allow-read TOOL=/data`)
//! opens anything.

use std::path::{Component, Path, PathBuf};

/// Where the workspace appears when the host does not say.
pub const FALLBACK_WORKSPACE: &str = "/workspace";

/// Scratch space the shell keeps in memory for the call.
pub const SCRATCH: &str = "/tmp";

/// Where a path of the shell is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In the workspace: the path relative to it (`.` for its root), as
    /// the guest opens it through the preopen `.`.
    Workspace(PathBuf),
    /// In the call's in-memory scratch space (`/tmp/...`).
    Scratch(PathBuf),
    /// Anywhere else: the absolute path, which opens only where a grant
    /// has that guest path.
    Elsewhere(PathBuf),
}

/// The shell's view of the file system.
#[derive(Debug, Clone)]
pub struct Layout {
    workspace: PathBuf,
}

impl Layout {
    /// The workspace shown at `workspace` (an absolute path; anything
    /// else falls back to [`FALLBACK_WORKSPACE`]).
    pub fn new(workspace: Option<&str>) -> Layout {
        let workspace = workspace
            .map(Path::new)
            .filter(|path| path.is_absolute())
            .map(normalize)
            .filter(|path| path != Path::new("/"))
            .unwrap_or_else(|| PathBuf::from(FALLBACK_WORKSPACE));
        Layout { workspace }
    }

    /// Where the workspace appears in the shell.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Whether `path` is a directory the workspace is in (`/home`,
    /// `/home/u` for `/home/u/proj`). The shell sees them as a container
    /// shows the directories above a mount: each exists and holds only
    /// the way down ([`Layout::next_toward_workspace`]). bashkit resolves
    /// every path from `/` down (for `grep -r`, `cd -P`, `realpath`), so
    /// they must exist; nothing in them but the way down is there.
    pub fn holds_workspace(&self, path: &Path) -> bool {
        let path = normalize(path);
        path != self.workspace && self.workspace.starts_with(&path)
    }

    /// The one entry a directory the workspace is in lists: the next name
    /// on the way down to it.
    pub fn next_toward_workspace(&self, path: &Path) -> Option<String> {
        if !self.holds_workspace(path) {
            return None;
        }
        let below = self.workspace.strip_prefix(normalize(path)).ok()?;
        below
            .components()
            .next()
            .map(|name| name.as_os_str().to_string_lossy().into_owned())
    }

    /// Where `path` (absolute, as the shell resolved it) lands. Every file
    /// operation asks, so the workspace is found by comparing bytes.
    pub fn place(&self, path: &Path) -> Place {
        let path = normalize(path);
        let workspace = self.workspace.as_os_str().as_encoded_bytes();
        let bytes = path.as_os_str().as_encoded_bytes();
        if let Some(rest) = bytes.strip_prefix(workspace) {
            match rest {
                [] => return Place::Workspace(PathBuf::from(".")),
                [b'/', inside @ ..] => {
                    return Place::Workspace(match std::str::from_utf8(inside) {
                        Ok(inside) => PathBuf::from(inside),
                        Err(_) => path
                            .strip_prefix(&self.workspace)
                            .map(Path::to_path_buf)
                            .unwrap_or_default(),
                    });
                }
                _ => {}
            }
        }
        if path.starts_with(SCRATCH) {
            return Place::Scratch(path);
        }
        Place::Elsewhere(path)
    }
}

/// `path` made absolute and without `.` or `..` (which stop at `/`).
pub fn normalize(path: &Path) -> PathBuf {
    // The shell hands over normal paths: those are kept as they are.
    if let Some(text) = path.to_str()
        && is_normal(text)
    {
        return PathBuf::from(text);
    }
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Whether `text` is what [`normalize`] makes of it: `/`, or `/` and
/// names that are not empty, `.` or `..`, with no `/` at the end.
fn is_normal(text: &str) -> bool {
    text == "/"
        || text.strip_prefix('/').is_some_and(|rest| {
            rest.split('/')
                .all(|name| !name.is_empty() && name != "." && name != "..")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(layout: &Layout, path: &str) -> Place {
        layout.place(Path::new(path))
    }

    #[test]
    fn the_workspace_is_reached_by_its_relative_names() {
        let layout = Layout::new(Some("/home/u/proj"));
        assert_eq!(place(&layout, "/home/u/proj"), Place::Workspace(".".into()));
        assert_eq!(
            place(&layout, "/home/u/proj/src/../src/main.rs"),
            Place::Workspace("src/main.rs".into())
        );
        assert_eq!(
            place(&layout, "/home/u/proj-other/x"),
            Place::Elsewhere("/home/u/proj-other/x".into()),
            "a sibling whose name starts alike is not inside"
        );
    }

    #[test]
    fn climbing_out_of_the_workspace_leaves_it() {
        let layout = Layout::new(Some("/home/u/proj"));
        assert_eq!(
            place(&layout, "/home/u/proj/../x"),
            Place::Elsewhere("/home/u/x".into())
        );
        assert_eq!(
            place(&layout, "/../../etc/passwd"),
            Place::Elsewhere("/etc/passwd".into())
        );
    }

    #[test]
    fn tmp_is_scratch_unless_the_workspace_is_there() {
        let layout = Layout::new(Some("/home/u/proj"));
        assert_eq!(place(&layout, "/tmp/a"), Place::Scratch("/tmp/a".into()));
        let in_tmp = Layout::new(Some("/tmp/ws"));
        assert_eq!(place(&in_tmp, "/tmp/ws/a"), Place::Workspace("a".into()));
        assert_eq!(place(&in_tmp, "/tmp/b"), Place::Scratch("/tmp/b".into()));
    }

    #[test]
    fn the_directories_above_the_workspace_hold_it() {
        let layout = Layout::new(Some("/tmp/a/ws"));
        for above in ["/", "/tmp", "/tmp/a", "/tmp/a/"] {
            assert!(layout.holds_workspace(Path::new(above)), "{above}");
        }
        for not in ["/tmp/a/ws", "/tmp/a/ws/src", "/tmp/b", "/tmp/a/w"] {
            assert!(!layout.holds_workspace(Path::new(not)), "{not}");
        }
        let next = |path: &str| layout.next_toward_workspace(Path::new(path));
        assert_eq!(next("/").as_deref(), Some("tmp"));
        assert_eq!(next("/tmp/a").as_deref(), Some("ws"));
        assert_eq!(next("/tmp/a/ws"), None);
        assert_eq!(next("/etc"), None);
    }

    /// The shortcut for paths that are already normal gives what taking
    /// them apart gives.
    #[test]
    fn normal_paths_are_kept_and_the_others_normalized() {
        fn by_components(path: &str) -> PathBuf {
            let mut out = PathBuf::from("/");
            for component in Path::new(path).components() {
                match component {
                    Component::Normal(name) => out.push(name),
                    Component::ParentDir => {
                        out.pop();
                    }
                    _ => {}
                }
            }
            out
        }
        for path in [
            "/", "//", "/a", "/a/b", "/a/", "/a//b", "/a/./b", "/a/../b", "/..", "/a/b/.",
            "/a/b/..", "a/b", ".", "", "/.hidden", "/a..b/c.", "/...",
        ] {
            assert_eq!(normalize(Path::new(path)), by_components(path), "{path:?}");
        }
        let layout = Layout::new(Some("/w"));
        assert_eq!(place(&layout, "/w/a/b"), Place::Workspace("a/b".into()));
        assert_eq!(place(&layout, "/w//a/./b/"), Place::Workspace("a/b".into()));
        assert_eq!(place(&layout, "/wx/a"), Place::Elsewhere("/wx/a".into()));
    }

    #[test]
    fn a_missing_or_odd_workspace_falls_back() {
        for given in [None, Some("relative"), Some("/"), Some("")] {
            assert_eq!(
                Layout::new(given).workspace(),
                Path::new(FALLBACK_WORKSPACE),
                "{given:?}"
            );
        }
    }
}

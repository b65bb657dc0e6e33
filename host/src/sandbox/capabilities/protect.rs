//! Paths no tool may change, whatever its grants, and where a path really
//! lands on the host.
//!
//! The workspace's own config and state and git's directory decide what runs
//! next (the next start's grants, its plugins, the user's next commit), so a
//! write grant of `.` must not reach them. The file-system guard asks
//! [`Protection::covering`] before every operation that changes the file
//! system, with the path resolved the way the kernel will resolve it
//! ([`locate`]): `./.git`, `src/../.git` and a symlink into `.git` all land
//! on `.git`. A user's own grant of a protected path lifts the protection for
//! that tool alone ([`ToolPolicy::lifted`](crate::sandbox::ToolPolicy)).

use std::io;
use std::path::{Component, Path, PathBuf};

/// One protected path, as the user and the model read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    /// Relative to the workspace: `toolhost.toml`, `.toolhost`, `.git`.
    pub relative: String,
    /// Why, in a phrase the model reads after "is protected:".
    pub why: String,
    /// Protect every path component with this name, not only the one at
    /// the workspace root (`.git` of a nested repository runs hooks too).
    pub at_any_depth: bool,
}

/// The protected paths of one workspace, resolved on the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protection {
    workspace: PathBuf,
    paths: Vec<Resolved>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Resolved {
    spec: ProtectedPath,
    /// Where it is on the host: the path in the workspace, and where it
    /// really is when that is a symlink (a repository can ship
    /// `toolhost.toml -> src/cfg.toml`).
    host: Vec<PathBuf>,
}

/// A protected path a target lies in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The protected path, relative to the workspace (`.git`, `vendor/x/.git`).
    pub protected: String,
    pub why: String,
}

impl Protection {
    /// The protection of the canonical `workspace`.
    pub fn new(workspace: &Path, paths: Vec<ProtectedPath>) -> Self {
        let paths = paths
            .into_iter()
            .map(|spec| {
                let lexical = workspace.join(&spec.relative);
                let mut host = vec![lexical.clone()];
                if let Ok(real) = lexical.canonicalize()
                    && real != lexical
                {
                    host.push(real);
                }
                Resolved { spec, host }
            })
            .collect();
        Protection {
            workspace: workspace.to_path_buf(),
            paths,
        }
    }

    /// The protected paths, as configured.
    pub fn paths(&self) -> impl Iterator<Item = &ProtectedPath> {
        self.paths.iter().map(|resolved| &resolved.spec)
    }

    /// The protected path that `target` (a resolved host path) is or lies
    /// in, unless it is inside one of `lifted` (directories the user granted
    /// this tool by name).
    pub fn covering(&self, target: &Path, lifted: &[PathBuf]) -> Option<Hit> {
        if lifted.iter().any(|dir| target.starts_with(dir)) {
            return None;
        }
        for resolved in &self.paths {
            if resolved.host.iter().any(|p| target.starts_with(p)) {
                return Some(self.hit(&resolved.spec, &resolved.spec.relative));
            }
            if resolved.spec.at_any_depth
                && let Some(prefix) = component_prefix(target, &resolved.spec.relative)
            {
                if lifted.iter().any(|dir| prefix.starts_with(dir)) {
                    continue;
                }
                return Some(self.hit(&resolved.spec, &self.shown(&prefix)));
            }
        }
        None
    }

    /// Like [`Protection::covering`], and also when `target` holds a
    /// protected path: renaming or removing `target` would move or delete it.
    pub fn touching(&self, target: &Path, lifted: &[PathBuf]) -> Option<Hit> {
        if let Some(hit) = self.covering(target, lifted) {
            return Some(hit);
        }
        self.paths.iter().find_map(|resolved| {
            let held = resolved
                .host
                .iter()
                .any(|p| p.starts_with(target) && !lifted.iter().any(|dir| p.starts_with(dir)));
            held.then(|| self.hit(&resolved.spec, &resolved.spec.relative))
        })
    }

    /// `path` as the model knows it: relative to the workspace when inside.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(inside) if inside.as_os_str().is_empty() => ".".into(),
            Ok(inside) => inside.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    fn hit(&self, spec: &ProtectedPath, protected: &str) -> Hit {
        Hit {
            protected: protected.to_string(),
            why: spec.why.clone(),
        }
    }
}

/// The part of `path` up to and including its first component named `name`.
fn component_prefix(path: &Path, name: &str) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for component in path.components() {
        prefix.push(component);
        if component.as_os_str() == name {
            return Some(prefix);
        }
    }
    None
}

/// Symlinks followed in a row before giving up, as the kernel's `ELOOP`.
const MAX_LINKS: usize = 40;

/// Where `relative`, taken from the directory `dir` (a real host path), lands:
/// symlinks in every component but the last are followed, and in the last
/// one too when `follow`. The last component need not exist (the operation
/// may create it); a symlink there that dangles is followed to where its
/// target would be created.
pub(crate) fn locate(dir: &Path, relative: &str, follow: bool) -> io::Result<PathBuf> {
    let mut path = dir.join(relative);
    for _ in 0..MAX_LINKS {
        let (parent, name) = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => (parent.to_path_buf(), name.to_os_string()),
            // `.`, `..` or the root: the whole path names a directory.
            _ => return path.canonicalize(),
        };
        let candidate = parent.canonicalize()?.join(name);
        if !follow {
            return Ok(candidate);
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&candidate)?;
                path = match candidate.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            _ => return Ok(candidate),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Where `path` would be: the longest part that exists, resolved through
/// its symlinks, then the rest taken as written (`..` removes a component).
/// For symlink targets, which need not exist.
pub(crate) fn locate_loose(path: &Path) -> PathBuf {
    let components: Vec<Component<'_>> = path.components().collect();
    for split in (0..=components.len()).rev() {
        let existing: PathBuf = components[..split].iter().collect();
        let Ok(mut out) = existing.canonicalize() else {
            continue;
        };
        for component in &components[split..] {
            match component {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other.as_os_str()),
            }
        }
        return out;
    }
    path.to_path_buf()
}

/// The real path of an open file or directory, from the kernel: always where
/// the descriptor is now, whatever path opened it and whatever moved since.
#[cfg(target_os = "linux")]
pub(crate) fn real_path(file: &std::fs::File) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd as _;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// Elsewhere the guard cannot know where a descriptor is, so every change
/// through one is refused (fail closed).
#[cfg(not(target_os = "linux"))]
pub(crate) fn real_path(_file: &std::fs::File) -> io::Result<PathBuf> {
    Err(io::Error::other(
        "toolhost can check file-system changes only on Linux",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn builtins() -> Vec<ProtectedPath> {
        let spec = |relative: &str, at_any_depth| ProtectedPath {
            relative: relative.into(),
            why: format!("{relative} matters"),
            at_any_depth,
        };
        vec![
            spec("toolhost.toml", false),
            spec(".toolhost", false),
            spec(".git", true),
        ]
    }

    fn workspace() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
        fs::create_dir_all(root.join("src")).expect("mkdir");
        fs::write(root.join("toolhost.toml"), "").expect("write");
        (dir, root)
    }

    #[test]
    fn every_route_to_a_protected_path_is_covered() {
        let (_dir, root) = workspace();
        symlink(".git", root.join("src/../shipped")).expect("symlink");
        let protection = Protection::new(&root, builtins());
        for (relative, follow) in [
            ("toolhost.toml", false),
            ("./toolhost.toml", false),
            (".git/hooks/pre-commit", false),
            ("src/../.git/config", false),
            ("shipped/hooks/pre-commit", false),
            ("shipped", true),
            (".toolhost/plugins/evil.wasm", false),
            ("vendor/.git/config", false),
        ] {
            if let Some(parent) = Path::new(relative).parent() {
                let _ = fs::create_dir_all(root.join(parent));
            }
            let target = locate(&root, relative, follow).expect(relative);
            assert!(
                protection.covering(&target, &[]).is_some(),
                "{relative} -> {}",
                target.display()
            );
        }
        let hit = protection
            .covering(&root.join("vendor/.git/hooks"), &[])
            .expect("nested");
        assert_eq!(hit.protected, "vendor/.git");
    }

    #[test]
    fn the_rest_of_the_workspace_is_not_covered() {
        let (_dir, root) = workspace();
        let protection = Protection::new(&root, builtins());
        for relative in [
            "src/main.rs",
            "toolhost.toml.bak",
            ".gitignore",
            "src/git",
            ".",
        ] {
            let target = locate(&root, relative, false).expect(relative);
            assert_eq!(protection.covering(&target, &[]), None, "{relative}");
        }
    }

    #[test]
    fn holding_a_protected_path_is_touching_it_and_lifts_are_per_directory() {
        let (_dir, root) = workspace();
        let protection = Protection::new(&root, builtins());
        assert!(protection.touching(&root, &[]).is_some());
        assert_eq!(protection.covering(&root, &[]), None);
        let lifted = [root.join(".git/hooks")];
        assert_eq!(
            protection.covering(&root.join(".git/hooks/pre-commit"), &lifted),
            None
        );
        assert!(
            protection
                .covering(&root.join(".git/config"), &lifted)
                .is_some()
        );
    }

    #[test]
    fn a_dangling_symlink_is_followed_to_where_it_would_create() {
        let (_dir, root) = workspace();
        // Relative to the link's directory, where `.git/hooks` is missing:
        // the kernel could not create it either.
        symlink(".git/hooks/pre-commit", root.join("src/hook")).expect("symlink");
        let missing = locate(&root, "src/hook", true).expect_err("no src/.git/hooks");
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        symlink("../.git/hooks/pre-commit", root.join("src/hook2")).expect("symlink");
        let target = locate(&root, "src/hook2", true).expect("locate");
        assert_eq!(target, root.join(".git/hooks/pre-commit"));
        assert_eq!(
            locate(&root, "src/hook2", false).expect("locate"),
            root.join("src/hook2")
        );
    }

    #[test]
    fn loose_locations_resolve_what_exists_and_take_the_rest_as_written() {
        let (_dir, root) = workspace();
        assert_eq!(
            locate_loose(&root.join("src/new/../../.git/x")),
            root.join(".git/x")
        );
        assert_eq!(
            locate_loose(&root.join("src/../..")),
            root.parent().expect("parent")
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_descriptor_knows_where_it_is_after_a_rename() {
        let (_dir, root) = workspace();
        fs::create_dir(root.join("a")).expect("mkdir");
        let file = fs::File::open(root.join("a")).expect("open dir");
        fs::rename(root.join("a"), root.join("b")).expect("rename");
        assert_eq!(real_path(&file).expect("real path"), root.join("b"));
    }
}

//! A guest path split into the directory that holds its last component,
//! opened beneath the guest's directory descriptor, and that component's
//! name: what the file-system guard checks and then acts on.
//!
//! Checking a path by name and then handing the same name to the operation
//! is a race: between the two, another call (or another process) can swap a
//! directory on the way for a link, or make a missing one appear, and the
//! operation lands somewhere the check never saw. Here the directories on
//! the way are resolved once, by the kernel (`openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, through cap-primitives, which
//! resolves component by component through held handles where `openat2` is
//! missing), into one held handle. The guard checks where that handle is
//! and acts through it on a single name, which nothing can re-route. A
//! directory on the way that is missing fails the operation (fail closed).

use std::fs::File;
use std::io;
use std::path::Path;

use super::protect::MAX_LINKS;

/// A path under a directory descriptor, with its parent held open.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The directory holding the last component; `None` when that is the
    /// descriptor's own directory (nothing on the way to resolve).
    pub(crate) parent: Option<File>,
    /// The last component as the operation takes it: one name, with the
    /// path's trailing slashes (`dir/` must name a directory).
    pub(crate) name: String,
}

impl Entry {
    /// The last component without trailing slashes.
    pub(crate) fn bare_name(&self) -> &str {
        self.name.trim_end_matches('/')
    }

    /// The held parent directory, or `start` when the parent is `start`.
    pub(crate) fn dir<'a>(&'a self, start: &'a File) -> &'a File {
        self.parent.as_ref().unwrap_or(start)
    }
}

/// Why a path has no parent and name to act on.
#[derive(Debug)]
pub(crate) enum Unsplit {
    /// The last component is `.` or `..`, or the path is empty: it names a
    /// directory by a way no operation that creates, removes or moves an
    /// entry can take.
    NoName,
    /// An absolute path: a guest's paths are relative to a descriptor
    /// (cap-std refuses them as an escape).
    Absolute,
    /// The empty path, which names nothing (`no-entry`).
    Empty,
    /// Resolving the directories on the way failed (missing, not a
    /// directory, a link out of `start`).
    Io(io::Error),
}

impl From<io::Error> for Unsplit {
    fn from(error: io::Error) -> Self {
        Unsplit::Io(error)
    }
}

/// `path` (as the guest wrote it) split into its directory part and its last
/// component, or why there is none to act on.
fn split(path: &str) -> Result<(&str, &str), Unsplit> {
    if path.is_empty() {
        return Err(Unsplit::Empty);
    }
    if path.starts_with('/') {
        return Err(Unsplit::Absolute);
    }
    let trimmed = path.trim_end_matches('/');
    let (dir, name) = match trimmed.rfind('/') {
        Some(at) => (&trimmed[..at], &path[at + 1..]),
        None => ("", path),
    };
    let bare = name.trim_end_matches('/');
    if bare.is_empty() || bare == "." || bare == ".." {
        return Err(Unsplit::NoName);
    }
    Ok((dir.trim_end_matches('/'), name))
}

/// Whether `path` names a directory by a way that has no last name to act
/// on (`.`, `..`, `a/..`, the empty path).
pub(crate) fn names_a_directory(path: &str) -> bool {
    matches!(split(path), Err(Unsplit::NoName))
}

/// Whether the last component of `path` is a name followed by `/`
/// (`l/`, `a/l//`): the kernel then follows a link there and wants a
/// directory, for an open, `utimensat` and the source of `linkat`, even
/// when asked not to follow (`O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`). For
/// `mkdir`, `rmdir`, `unlink`, `rename`, `symlink` and the new name of
/// `linkat` it does not follow: the name itself must be a directory (or be
/// missing, to be made one), else the call fails.
pub(crate) fn ends_in_slash(path: &str) -> bool {
    path.ends_with('/') && split(path).is_ok()
}

/// The directory `path` names, opened beneath `start` (links followed, as
/// the kernel would, never out of `start`).
pub(crate) fn directory(start: &File, path: &str) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let path = if path.is_empty() { "." } else { path };
    // cap-primitives opens it `O_PATH`; its times are set through a real
    // descriptor of it.
    let held = cap_primitives::fs::open_dir(start, Path::new(path))?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(File::from(rustix::fs::openat(
        &held,
        ".",
        flags,
        Mode::empty(),
    )?))
}

/// Opens the directory part of `path` beneath `start` and returns it with
/// the last component. Links in the directory part are followed as the
/// kernel would, but never out of `start`.
pub(crate) fn entry(start: &File, path: &str) -> Result<Entry, Unsplit> {
    let (dir, name) = split(path)?;
    let parent = if dir.is_empty() {
        None
    } else {
        Some(cap_primitives::fs::open_dir(start, Path::new(dir))?)
    };
    Ok(Entry {
        parent,
        name: name.to_string(),
    })
}

/// Like [`entry`], but when the last component is a symbolic link, goes on
/// to where it points (relative to the link's directory, as the kernel
/// does), until the last component is not a link: the entry an open that
/// follows links would create or change. An absolute link target is
/// refused, as cap-std refuses to follow one.
pub(crate) fn entry_following(start: &File, path: &str) -> Result<Entry, Unsplit> {
    let mut path = path.to_string();
    for _ in 0..MAX_LINKS {
        let (dir, _) = split(&path)?;
        let dir = dir.to_string();
        let entry = entry(start, &path)?;
        let target = match rustix::fs::readlinkat(entry.dir(start), entry.bare_name(), Vec::new()) {
            Ok(target) => target,
            // Not a link (EINVAL), or nothing there yet: this is the entry.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => return Ok(entry),
            Err(error) => return Err(Unsplit::Io(error.into())),
        };
        let target = target
            .into_string()
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        if target.starts_with('/') {
            return Err(Unsplit::Absolute);
        }
        // `link/` must name a directory wherever the link leads.
        let slashes = &entry.name[entry.bare_name().len()..];
        path = if dir.is_empty() {
            format!("{target}{slashes}")
        } else {
            format!("{dir}/{target}{slashes}")
        };
    }
    Err(Unsplit::Io(rustix::io::Errno::LOOP.into()))
}

/// The target of the link `name` in `dir`, if it is one (`InvalidData`
/// when it is not UTF-8).
pub(crate) fn link_target(dir: &File, name: &str) -> io::Result<Option<String>> {
    match rustix::fs::readlinkat(dir, name, Vec::new()) {
        Ok(target) => target
            .into_string()
            .map(Some)
            .map_err(|_| io::ErrorKind::InvalidData.into()),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Whether `path` (relative, `..` allowed) names an entry from `dir`,
/// links in its last component not followed; an error other than "no such
/// entry" is an error.
pub(crate) fn entry_exists(dir: &File, path: &str) -> io::Result<bool> {
    match rustix::fs::statat(dir, path, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(_) => Ok(true),
        Err(rustix::io::Errno::NOENT) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir_all(dir.path().join("a/b")).expect("mkdir");
        let start = File::open(dir.path()).expect("open");
        (dir, start)
    }

    #[test]
    fn a_path_splits_into_its_directories_and_one_name() {
        assert_eq!(split("x").ok(), Some(("", "x")));
        assert_eq!(split("a/b/x").ok(), Some(("a/b", "x")));
        assert_eq!(split("a//x/").ok(), Some(("a", "x/")));
        assert_eq!(split("./x").ok(), Some((".", "x")));
        assert!(matches!(split(""), Err(Unsplit::Empty)));
        for no_name in [".", "..", "a/..", "a/.", "a/../"] {
            assert!(matches!(split(no_name), Err(Unsplit::NoName)), "{no_name}");
        }
        assert!(matches!(split("/etc/passwd"), Err(Unsplit::Absolute)));
        for slashed in ["l/", "a/l//"] {
            assert!(ends_in_slash(slashed), "{slashed}");
        }
        for plain in ["l", "a/l", "a/.", ".", "/", ""] {
            assert!(!ends_in_slash(plain), "{plain}");
        }
    }

    #[test]
    fn the_parent_is_held_where_the_kernel_resolved_it() {
        let (dir, start) = root();
        symlink("a", dir.path().join("l")).expect("symlink");
        let entry = entry(&start, "l/b/x").expect("entry");
        assert_eq!(entry.name, "x");
        let held = entry.parent.expect("opened");
        // Moving the directory afterwards does not move the entry: the
        // handle stays on it.
        fs::rename(dir.path().join("a"), dir.path().join("moved")).expect("rename");
        fs::write(dir.path().join("moved/b/probe"), "").expect("write");
        assert!(entry_exists(&held, "probe").expect("stat"));
    }

    #[test]
    fn a_missing_directory_or_a_way_out_fails_closed() {
        let (dir, start) = root();
        let missing = entry(&start, "nope/x").expect_err("missing");
        assert!(matches!(missing, Unsplit::Io(e) if e.kind() == io::ErrorKind::NotFound));
        symlink("../..", dir.path().join("a/up")).expect("symlink");
        assert!(matches!(entry(&start, "a/up/x"), Err(Unsplit::Io(_))));
        assert!(matches!(entry(&start, "../x"), Err(Unsplit::Io(_))));
    }

    #[test]
    fn following_links_lands_on_the_last_one_s_target() {
        let (dir, start) = root();
        symlink("b/target", dir.path().join("a/one")).expect("symlink");
        symlink("a/one", dir.path().join("two")).expect("symlink");
        let entry = entry_following(&start, "two").expect("entry");
        assert_eq!(entry.name, "target");
        let held = entry.parent.expect("opened");
        fs::write(dir.path().join("a/b/probe"), "").expect("write");
        assert!(entry_exists(&held, "probe").expect("stat"));

        symlink("/etc/passwd", dir.path().join("abs")).expect("symlink");
        assert!(matches!(
            entry_following(&start, "abs"),
            Err(Unsplit::Absolute)
        ));
        symlink("loop", dir.path().join("loop")).expect("symlink");
        assert!(matches!(
            entry_following(&start, "loop"),
            Err(Unsplit::Io(_))
        ));
    }
}

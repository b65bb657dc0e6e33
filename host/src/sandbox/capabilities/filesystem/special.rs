//! The special-file check: nothing but a file, a directory or a link to
//! one is opened. Opening a FIFO blocks until a writer comes (and reading a
//! device may never end), in the host thread running the call, where no
//! deadline can stop it. Calls run file operations on their own thread
//! (`allow_blocking_current_thread`), so this check is what keeps the
//! deadline.

use std::path::Path;

use super::change::Located;
use super::denial::Denial;
use super::rules::FsRules;
use crate::sandbox::capabilities::protect;

/// Whether `path` under the directory `dir` is something other than a
/// file, a directory or a symbolic link: one `fstatat`, as this runs before
/// every open.
fn is_special(dir: &std::fs::File, path: &str, follow: bool) -> bool {
    use rustix::fs::{AtFlags, FileType};
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    rustix::fs::statat(dir, path, flags).is_ok_and(|stat| {
        !matches!(
            FileType::from_raw_mode(stat.st_mode),
            FileType::RegularFile | FileType::Directory | FileType::Symlink
        )
    })
}

/// What kind of special file `path` is, for the model's text.
fn special_kind(path: &Path) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if let Ok(meta) = std::fs::metadata(path) {
            let kind = meta.file_type();
            if kind.is_fifo() {
                return "a FIFO (named pipe)";
            }
            if kind.is_socket() {
                return "a socket";
            }
            if kind.is_char_device() || kind.is_block_device() {
                return "a device";
            }
        }
    }
    let _ = path;
    "not a regular file"
}

/// The refusal of opening `path` under the held directory `dir` by name
/// (`follow`: a link in its last name is followed), when it is a special
/// file inside the grants. Where the path does not resolve, the open fails
/// by itself; a path that leaves the grants fails in the open too, and the
/// refusal would tell the tool what lies outside.
pub(super) fn refusal_by_name(
    rules: &FsRules,
    dir: &std::fs::File,
    path: &str,
    follow: bool,
) -> Option<Denial> {
    if !is_special(dir, path, follow) {
        return None;
    }
    let at = protect::real_path(dir).ok()?;
    let target = protect::locate(&at, path, follow).ok()?;
    refusal(rules, &target)
}

/// The same refusal for the entry a change would open, from its held
/// parent.
pub(super) fn refusal_of_located(rules: &FsRules, located: &Located) -> Option<Denial> {
    let parent = located.entry.dir(&located.dir.dir);
    if is_special(parent, located.entry.bare_name(), false) {
        return refusal(rules, &located.target);
    }
    None
}

/// The refusal of opening the special file at host path `target`, when it
/// lies in the tool's grants.
fn refusal(rules: &FsRules, target: &Path) -> Option<Denial> {
    if !rules.may_use(target) {
        return None;
    }
    Some(Denial::SpecialFile {
        path: rules.shown(target),
        kind: special_kind(target),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::Workspace;
    use super::*;
    use crate::sandbox::capabilities::{Access, Grant};

    /// A FIFO at `relative` in the workspace.
    fn fifo(workspace: &Workspace, relative: &str) {
        use rustix::fs::{FileType, Mode};
        let path = workspace.path(relative);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            FileType::Fifo,
            Mode::RUSR | Mode::WUSR,
            0,
        )
        .expect("mkfifo");
    }

    fn held(workspace: &Workspace, relative: &str) -> std::fs::File {
        std::fs::File::open(workspace.path(relative)).expect("held")
    }

    #[test]
    fn a_fifo_is_not_opened() {
        let workspace = Workspace::new();
        fifo(&workspace, "src/pipe");
        let rules = workspace.rules();
        let src = held(&workspace, "src");
        assert_eq!(
            refusal_by_name(&rules, &src, "pipe", false),
            Some(Denial::SpecialFile {
                path: "src/pipe".into(),
                kind: "a FIFO (named pipe)"
            })
        );
        // The good case: a file, a directory, and the link itself.
        workspace.symlink("pipe", "src/to-pipe");
        for ordinary in ["main.rs", ".", "to-pipe"] {
            assert_eq!(
                refusal_by_name(&rules, &src, ordinary, false),
                None,
                "{ordinary}"
            );
        }
        // A link followed to a FIFO opens the FIFO.
        assert!(refusal_by_name(&rules, &src, "to-pipe", true).is_some());
    }

    #[test]
    fn a_fifo_a_change_would_open_is_refused() {
        let workspace = Workspace::new();
        fifo(&workspace, "src/pipe");
        let rules = workspace.rules();
        let dir = workspace.dir(".", Access::Write);
        let pipe = workspace.locate(&dir, "src/pipe", false);
        assert!(matches!(
            refusal_of_located(&rules, &pipe),
            Some(Denial::SpecialFile { path, .. }) if path == "src/pipe"
        ));
        let file = workspace.locate(&dir, "src/main.rs", false);
        assert_eq!(refusal_of_located(&rules, &file), None);
        let new = workspace.locate(&dir, "src/new.rs", false);
        assert_eq!(refusal_of_located(&rules, &new), None);
    }

    #[test]
    fn a_socket_and_a_device_are_not_opened() {
        let workspace = Workspace::new();
        let _listener =
            std::os::unix::net::UnixListener::bind(workspace.path("src/sock")).expect("bind");
        let src = held(&workspace, "src");
        assert!(matches!(
            refusal_by_name(&workspace.rules(), &src, "sock", false),
            Some(Denial::SpecialFile {
                kind: "a socket",
                ..
            })
        ));
        let dev = Grant {
            host_path: "/dev".into(),
            guest_path: "/dev".into(),
            access: Access::Read,
        };
        let rules = workspace.rules_with(Vec::new(), &[dev]);
        let dir = std::fs::File::open("/dev").expect("/dev");
        assert!(matches!(
            refusal_by_name(&rules, &dir, "null", false),
            Some(Denial::SpecialFile {
                kind: "a device",
                ..
            })
        ));
    }

    #[test]
    fn a_special_file_outside_the_grants_is_left_to_the_open() {
        // The open fails there by itself; a refusal would tell the tool
        // what lies outside its grants.
        let workspace = Workspace::new();
        fifo(&workspace, "src/pipe");
        let rules = workspace.rules_with(Vec::new(), &[workspace.grant("src", Access::Write)]);
        let root = held(&workspace, ".");
        assert!(refusal_by_name(&rules, &root, "src/pipe", false).is_some());
        fifo(&workspace, "pipe");
        assert_eq!(refusal_by_name(&rules, &root, "pipe", false), None);
    }
}

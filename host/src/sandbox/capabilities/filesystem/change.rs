//! A change of a path: the path resolved once into its held parent and
//! last name ([`locate`]), and what refuses the change ([`refusal`]): a
//! protected path it reaches by name, through a repository around it, or
//! through a link on the way, and a file with other names.

use std::path::{Path, PathBuf};

use wasmtime_wasi::filesystem::Dir;
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

use super::denial::Denial;
use super::rules::{FsRules, other_names};
use crate::sandbox::capabilities::beneath::{self, Entry, Unsplit};
use crate::sandbox::capabilities::protect::{self, Hit};

/// What an operation does to the entry a path names.
#[derive(Clone, Copy)]
pub(super) enum Change {
    /// Creates or changes what is at the path.
    At,
    /// Removes or moves the path, and so whatever is below it.
    Away,
    /// Puts something new at the path that stands for all below it: a
    /// rename onto it (which replaces what is there), or a link (which
    /// redirects every path through it, even one to a protected path
    /// whose directories are not made yet).
    Onto,
}

/// A path under a directory descriptor, resolved once for one change: the
/// descriptor's directory, the entry's parent held open, and where the
/// entry is on the host. The check reads `target`; the operation acts
/// through the held parent on one name, so nothing can re-route it.
pub(super) struct Located {
    pub(super) dir: Dir,
    pub(super) entry: Entry,
    pub(super) target: PathBuf,
    /// The path as the tool gave it, and whether a link in its last
    /// component is followed: for [`through_names`].
    pub(super) path: String,
    pub(super) follow: bool,
}

/// Resolves `path` under the directory `dir` once, into its parent held
/// open and its last name; with `follow`, a last component that is a
/// link is followed to the entry it names. A directory on the way that
/// is missing fails here, before anything is checked or changed.
/// `no_name` is the error for a path whose last component is `.` or
/// `..`, as the kernel gives it for the operation (`mkdir .` is
/// `exist`, which `create_dir_all` of a grant's own root relies on).
/// A last name with a trailing `/` is checked as the name itself, and
/// passed on with it only to operations for which the kernel does not
/// follow a link there (mkdir, rmdir, unlink, rename, symlink, the new
/// name of a hard link); `set-times-at`, `open-at` and the source of a
/// hard link deal with `l/` before they get here
/// ([`beneath::ends_in_slash`]).
pub(super) fn locate(dir: Dir, path: &str, follow: bool, no_name: ErrorCode) -> FsResult<Located> {
    let resolved = if follow {
        beneath::entry_following(&dir.dir, path)
    } else {
        beneath::entry(&dir.dir, path)
    };
    let entry = match resolved {
        Ok(entry) => entry,
        Err(Unsplit::NoName) => return Err(no_name.into()),
        Err(Unsplit::Empty) => return Err(ErrorCode::NoEntry.into()),
        Err(Unsplit::Absolute) => return Err(ErrorCode::NotPermitted.into()),
        Err(Unsplit::Io(error)) => return Err(error.into()),
    };
    // Fail closed: a directory whose place is unknown changes nothing.
    let parent = protect::real_path(entry.dir(&dir.dir)).map_err(|_| ErrorCode::NotPermitted)?;
    let target = parent.join(entry.bare_name());
    Ok(Located {
        dir,
        entry,
        target,
        path: path.to_string(),
        follow,
    })
}

/// The refusal of a change of `located` that reaches a protected path, or
/// changes a file with other names. The held parent cannot move into or
/// out of a protected path meanwhile: that would be a rename of a
/// protected path, which this same check refuses (in every process running
/// toolhost).
pub(super) fn refusal(rules: &FsRules, located: &Located, change: Change) -> Option<Denial> {
    // A read-only grant changes nothing: wasmtime-wasi would refuse it
    // too, but only this refusal tells the model where it may write (and
    // a protected path's would advise a lift that cannot help).
    if located.dir.perms.write_not_permitted() {
        return Some(rules.read_only(&located.target));
    }
    let target = &located.target;
    let parent = located.entry.dir(&located.dir.dir);
    let holds = matches!(change, Change::Away | Change::Onto);
    let hit = if holds {
        rules.touched(target)
    } else {
        rules.covered(target)
    }
    .or_else(|| rules.repository_around(parent, target, holds))
    .or_else(|| through_names(rules, located, change));
    if let Some(hit) = hit {
        let path = rules.shown(target);
        return Some(Denial::Protected { path, hit });
    }
    // A change of the file at the name (not of the name itself) is a
    // change under each of its other names.
    if !holds {
        let name = located.entry.bare_name();
        let stat = rustix::fs::statat(parent, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW);
        if let Some(names) = stat.ok().as_ref().and_then(other_names) {
            let path = rules.shown(target);
            return Some(Denial::HardLinked { path, names });
        }
    }
    None
}

/// The protected path the tool's path for `located` names on its way,
/// through links, though the change lands elsewhere: a link a
/// repository shipped at a protected name or in a protected directory
/// (`.claude/settings.json -> ../ai/s.json`, `sub/.claude -> cc`) does
/// not make a change through that name any less a change of it. Asked
/// by name, after the change's own place was checked through handles:
/// it only ever adds a refusal.
fn through_names(rules: &FsRules, located: &Located, change: Change) -> Option<Hit> {
    let path = located.path.trim_end_matches('/');
    // No link on the way (nor `.` or `..`): the change lands where the
    // path names, which was just checked. Most changes end here, with
    // no system call.
    let plain = Path::new(path)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if plain && located.target.ends_with(path) {
        return None;
    }
    let base = protect::real_path(&located.dir.dir).ok()?;
    let ways = if located.follow {
        protect::route_from(&base, Path::new(path))
    } else {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        protect::route_from(&base, Path::new(dir))
            .into_iter()
            .map(|way| way.join(name))
            .collect()
    };
    ways.iter()
        .filter(|way| **way != located.target)
        .find_map(|way| match change {
            Change::At => rules.covered(way),
            Change::Away | Change::Onto => rules.touched(way),
        })
}

#[cfg(test)]
mod tests {
    use super::super::fixture::Workspace;
    use super::*;
    use crate::sandbox::capabilities::Access;
    use std::fs;

    /// The refusal of `change` of `path` under the workspace's root, for a
    /// tool with a write grant of it.
    fn refusal_at(workspace: &Workspace, path: &str, change: Change) -> Option<Denial> {
        let dir = workspace.dir(".", Access::Write);
        let located = workspace.locate(&dir, path, false);
        refusal(&workspace.rules(), &located, change)
    }

    fn protected(denial: Option<Denial>) -> (String, String) {
        match denial {
            Some(Denial::Protected { path, hit }) => (path, hit.protected),
            other => panic!("not refused as protected: {other:?}"),
        }
    }

    #[test]
    fn a_write_into_git_hooks_is_refused_by_every_route() {
        let workspace = Workspace::new();
        for route in [
            ".git/hooks/pre-commit",
            "./.git/hooks/pre-commit",
            "src/../.git/hooks/pre-commit",
            ".git/hooks/",
        ] {
            let (path, hit) = protected(refusal_at(&workspace, route, Change::At));
            assert!(path.starts_with(".git/hooks"), "{route}: {path}");
            assert_eq!(hit, ".git", "{route}");
        }
        // The good case: the same write somewhere allowed.
        workspace.mkdir("src/hooks");
        assert_eq!(
            refusal_at(&workspace, "src/hooks/pre-commit", Change::At),
            None
        );
        assert_eq!(refusal_at(&workspace, "./src/new.rs", Change::At), None);
    }

    #[test]
    fn a_write_through_a_symlink_the_repository_shipped_is_refused() {
        let workspace = Workspace::new();
        // Into a protected path: where the change lands decides.
        workspace.symlink(".git", "shipped");
        let (path, _) = protected(refusal_at(&workspace, "shipped/hooks/x", Change::At));
        assert_eq!(path, ".git/hooks/x");
        // At a protected name, out of it: the name on the way decides.
        workspace.mkdir("sub/cc");
        workspace.symlink("cc", "sub/.claude");
        let (path, hit) = protected(refusal_at(&workspace, "sub/.claude/s.json", Change::At));
        assert_eq!(path, "sub/cc/s.json", "it lands outside");
        assert_eq!(hit, "sub/.claude", "but is named through");
        let (_, hit) = protected(refusal_at(&workspace, "sub/.claude", Change::Onto));
        assert_eq!(hit, "sub/.claude", "a link there is replaced too");
        // The good case: the same file by its own name.
        assert_eq!(refusal_at(&workspace, "sub/cc/s.json", Change::At), None);
    }

    #[test]
    fn a_write_through_a_followed_link_lands_where_it_points() {
        let workspace = Workspace::new();
        workspace.symlink("../.git/config", "src/config");
        let dir = workspace.dir(".", Access::Write);
        let rules = workspace.rules();
        let followed = workspace.locate(&dir, "src/config", true);
        assert_eq!(followed.target, workspace.path(".git/config"));
        let (path, _) = protected(refusal(&rules, &followed, Change::At));
        assert_eq!(path, ".git/config");
        // The link itself, not followed, is the tool's to change.
        let link = workspace.locate(&dir, "src/config", false);
        assert_eq!(refusal(&rules, &link, Change::Away), None);
    }

    #[test]
    fn moving_or_replacing_what_holds_a_protected_path_is_refused() {
        let workspace = Workspace::new();
        workspace.mkdir("app/.github/hooks");
        workspace.mkdir("vendor/lib/.git");
        for change in [Change::Away, Change::Onto] {
            let (_, hit) = protected(refusal_at(&workspace, "app/.github", change));
            assert_eq!(hit, "app/.github/hooks");
        }
        // A change at it (its times) is not one in it.
        assert_eq!(refusal_at(&workspace, "app/.github", Change::At), None);
        // A nested repository moved as a whole is no change inside it.
        assert_eq!(refusal_at(&workspace, "vendor", Change::Away), None);
        assert_eq!(refusal_at(&workspace, "src", Change::Away), None);
    }

    #[test]
    fn a_change_in_a_nested_repositorys_hooks_is_refused() {
        let workspace = Workspace::new();
        workspace.write("vendor/x/.git/config", "[core]\n\thooksPath = githooks\n");
        workspace.mkdir("vendor/x/githooks");
        let (_, hit) = protected(refusal_at(
            &workspace,
            "vendor/x/githooks/pre-commit",
            Change::At,
        ));
        assert_eq!(hit, "vendor/x/githooks");
        assert_eq!(refusal_at(&workspace, "vendor/x/README", Change::At), None);
    }

    #[test]
    fn a_change_of_a_file_with_two_names_is_refused_but_not_its_removal() {
        let workspace = Workspace::new();
        fs::hard_link(
            workspace.path("src/main.rs"),
            workspace.path("src/alias.rs"),
        )
        .expect("hard link");
        assert_eq!(
            refusal_at(&workspace, "src/alias.rs", Change::At),
            Some(Denial::HardLinked {
                path: "src/alias.rs".into(),
                names: 2
            })
        );
        // Removing or renaming one name changes no other.
        assert_eq!(refusal_at(&workspace, "src/alias.rs", Change::Away), None);
        assert_eq!(refusal_at(&workspace, "src/alias.rs", Change::Onto), None);
    }

    #[test]
    fn a_change_into_toolhosts_own_files_is_refused() {
        let workspace = Workspace::new();
        for path in [
            "toolhost.toml",
            ".toolhost/sessions/s.jsonl",
            ".toolhost/p.wasm",
        ] {
            protected(refusal_at(&workspace, path, Change::At));
        }
    }

    #[test]
    fn a_change_in_a_read_only_grant_says_where_the_tool_may_write() {
        // Even of a protected path: a lift there cannot help, a write
        // grant is what the tool lacks.
        let workspace = Workspace::new();
        let dir = workspace.dir(".", Access::Read);
        let located = workspace.locate(&dir, ".git/hooks/pre-commit", false);
        let rules = workspace.rules();
        assert_eq!(
            refusal(&rules, &located, Change::At),
            Some(rules.read_only(&located.target))
        );
        assert!(matches!(
            rules.read_only(&located.target),
            Denial::ReadOnly { path, .. } if path == ".git/hooks/pre-commit"
        ));
    }

    #[test]
    fn a_path_is_resolved_beneath_its_directory_or_not_at_all() {
        let workspace = Workspace::new();
        let dir = workspace.dir("src", Access::Write);
        let error = |path: &str, no_name| {
            locate(dir.clone(), path, false, no_name)
                .err()
                .and_then(|error| error.downcast().ok())
        };
        assert_eq!(
            error("/etc/passwd", ErrorCode::Invalid),
            Some(ErrorCode::NotPermitted)
        );
        assert_eq!(error("", ErrorCode::Invalid), Some(ErrorCode::NoEntry));
        assert_eq!(error(".", ErrorCode::Exist), Some(ErrorCode::Exist));
        for escape in ["../toolhost.toml", "missing/x"] {
            let located = locate(dir.clone(), escape, false, ErrorCode::Invalid);
            assert!(located.is_err(), "{escape} fails closed");
        }
        workspace.mkdir("src/sub");
        let located = workspace.locate(&dir, "sub/../main.rs", false);
        assert_eq!(located.target, workspace.path("src/main.rs"));
    }
}

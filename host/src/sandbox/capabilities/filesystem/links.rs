//! The rules for links: a symbolic link may point only down, inside the
//! tool's grants and outside every protected path ([`target_refusal`]); a
//! hard link may give a second name only to a file the tool may write, and
//! not outlive a lift ([`hard_link_source_refusal`]).

use std::path::Path;

use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

use super::change::Located;
use super::denial::Denial;
use super::rules::{FsRules, other_names};
use crate::sandbox::capabilities::{beneath, protect};

/// The refusal of a symbolic link at host path `link` to `target` that is
/// absolute, has a `..` component, leads out of the grants (through a link
/// already there) or into a protected path. For a new link, and for one
/// moved or hard-linked to a new place, where it points somewhere else.
pub(super) fn target_refusal(rules: &FsRules, link: &Path, target: &str) -> Option<Denial> {
    let shown_link = rules.shown(link);
    if Path::new(target).is_absolute() {
        return Some(Denial::AbsoluteLink {
            link: shown_link,
            target: target.to_string(),
        });
    }
    if climbs(target) {
        return Some(Denial::LinkClimbs {
            link: shown_link,
            target: target.to_string(),
        });
    }
    // Without `..`, a target can still lead out through a link already
    // there (even a dangling one), or into a protected path.
    let parent = link.parent().unwrap_or(link);
    let lands = protect::locate_loose(&parent.join(target));
    if !rules.may_use(&lands) {
        return Some(Denial::LinkOutside {
            link: shown_link,
            target: target.to_string(),
        });
    }
    if let Some(hit) = rules.protected(&lands) {
        return Some(Denial::LinkIntoProtected {
            link: shown_link,
            target: target.to_string(),
            hit,
        });
    }
    None
}

/// Whether a link target has a `..` component (or is absolute). Where such
/// a target leads depends on links and directories that can change after
/// it is checked: `w1 -> w0/..` lands inside while `w0` is missing, and
/// `w0 -> .` made next sends it to the workspace's parent; moved to another
/// directory it points elsewhere too. A set of links without `..` can only
/// lead down or stay where they are, whatever is made or moved later.
fn climbs(target: &str) -> bool {
    Path::new(target).components().any(|component| {
        matches!(
            component,
            std::path::Component::ParentDir
                | std::path::Component::RootDir
                | std::path::Component::Prefix(_)
        )
    })
}

/// The link target of `located`'s entry, when it is a symbolic link.
/// A link whose target cannot be read or is not UTF-8 cannot be checked,
/// so it is not moved (fail closed).
pub(super) fn target_of(located: &Located) -> FsResult<Option<String>> {
    let parent = located.entry.dir(&located.dir.dir);
    match beneath::link_target(parent, located.entry.bare_name()) {
        Ok(target) => Ok(target),
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
            Err(ErrorCode::IllegalByteSequence.into())
        }
        Err(error) => Err(error.into()),
    }
}

/// The refusal of a hard link from `source` to the new name `new`. A
/// second name for a file is a second way to write it: the source is
/// checked as a change of it would be, through its held parent, and must
/// have no other name already and lie in a writable grant. A lift is for
/// this tool, this run: a second name made now would let any tool change
/// the file in later runs, so only a name that the same protection covers
/// keeps it protected.
pub(super) fn hard_link_source_refusal(
    rules: &FsRules,
    source: &Located,
    new: &Located,
) -> Option<Denial> {
    let parent = source.entry.dir(&source.dir.dir);
    let protected = rules
        .covered(&source.target)
        .or_else(|| rules.repository_around(parent, &source.target, false));
    let name = source.entry.bare_name();
    let stat = rustix::fs::statat(parent, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW);
    let shared = stat.ok().as_ref().and_then(other_names).is_some();
    if protected.is_some() || shared || !rules.may_write(&source.target) {
        let source = rules.shown(&source.target);
        return Some(Denial::HardLinkSource { source });
    }
    if let Some(hit) = rules.protected_whatever_lifted(&source.target, &new.target) {
        let source = rules.shown(&source.target);
        return Some(Denial::HardLinkToProtected { source, hit });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::fixture::Workspace;
    use super::*;
    use crate::sandbox::capabilities::Access;
    use std::fs;

    /// The refusal of a new link at `link` (relative to the workspace) to
    /// `target`, for a tool with a write grant of the workspace.
    fn link_refusal(workspace: &Workspace, link: &str, target: &str) -> Option<Denial> {
        target_refusal(&workspace.rules(), &workspace.path(link), target)
    }

    #[test]
    fn a_symlink_with_an_absolute_target_is_refused() {
        let workspace = Workspace::new();
        let inside = workspace.path("src/main.rs");
        let inside = inside.to_str().expect("UTF-8");
        assert_eq!(
            link_refusal(&workspace, "src/l", inside),
            Some(Denial::AbsoluteLink {
                link: "src/l".into(),
                target: inside.into()
            }),
            "even one that lands inside"
        );
        assert_eq!(link_refusal(&workspace, "src/l", "main.rs"), None);
    }

    #[test]
    fn a_symlink_whose_target_climbs_is_refused() {
        let workspace = Workspace::new();
        for target in ["../toolhost.toml", "a/../main.rs", ".."] {
            assert!(
                matches!(
                    link_refusal(&workspace, "src/l", target),
                    Some(Denial::LinkClimbs { .. })
                ),
                "{target}"
            );
        }
        assert_eq!(link_refusal(&workspace, "src/l", "./a/./main.rs"), None);
    }

    #[test]
    fn a_symlink_leading_out_of_the_grants_is_refused() {
        let workspace = Workspace::new();
        let kept = tempfile::tempdir().expect("temp dir");
        // Through a link already there, even a dangling one.
        workspace.symlink(kept.path(), "src/out");
        workspace.symlink(kept.path().join("gone"), "src/dangling");
        for target in ["out/x", "dangling"] {
            assert!(
                matches!(
                    link_refusal(&workspace, "src/l", target),
                    Some(Denial::LinkOutside { .. })
                ),
                "{target}"
            );
        }
        // Out of this tool's grants, though inside the workspace.
        let rules = workspace.rules_with(Vec::new(), &[workspace.grant("src", Access::Write)]);
        workspace.symlink("../toolhost.toml", "src/up");
        assert!(matches!(
            target_refusal(&rules, &workspace.path("src/l"), "up"),
            Some(Denial::LinkOutside { .. })
        ));
        assert_eq!(
            target_refusal(&rules, &workspace.path("src/l"), "main.rs"),
            None
        );
    }

    #[test]
    fn a_symlink_into_a_protected_path_is_refused() {
        let workspace = Workspace::new();
        match link_refusal(&workspace, "l", ".git/hooks") {
            Some(Denial::LinkIntoProtected { link, target, hit }) => {
                assert_eq!((link.as_str(), target.as_str()), ("l", ".git/hooks"));
                assert_eq!(hit.protected, ".git");
            }
            other => panic!("not refused: {other:?}"),
        }
        // Through a link on the way, and to a protected name not made yet.
        workspace.symlink(".", "src/here");
        for (link, target) in [("src/l", "here/.git/config"), ("l", "src/.claude")] {
            assert!(
                matches!(
                    link_refusal(&workspace, link, target),
                    Some(Denial::LinkIntoProtected { .. })
                ),
                "{link} -> {target}"
            );
        }
        assert_eq!(link_refusal(&workspace, "l", "src/main.rs"), None);
    }

    /// The refusal of a hard link from `source` to `new` (both relative to
    /// the workspace) under `rules`.
    fn hard_link_refusal(
        workspace: &Workspace,
        rules: &FsRules,
        source: &str,
        new: &str,
    ) -> Option<Denial> {
        let dir = workspace.dir(".", Access::Write);
        let source = workspace.locate(&dir, source, false);
        let new = workspace.locate(&dir, new, false);
        hard_link_source_refusal(rules, &source, &new)
    }

    #[test]
    fn a_hard_link_to_a_file_the_tool_may_not_write_is_refused() {
        let workspace = Workspace::new();
        let rules = workspace.rules();
        let refused = |rules: &FsRules, source: &str| {
            matches!(
                hard_link_refusal(&workspace, rules, source, "src/copy"),
                Some(Denial::HardLinkSource { .. })
            )
        };
        assert!(refused(&rules, ".git/config"), "in a protected path");
        workspace.write("vendor/bare/HEAD", "");
        workspace.write("vendor/bare/config", "");
        assert!(refused(&rules, "vendor/bare/config"), "in a repository");
        fs::hard_link(workspace.path("src/main.rs"), workspace.path("other.rs"))
            .expect("hard link");
        assert!(refused(&rules, "src/main.rs"), "with another name already");
        workspace.write("docs/a.md", "");
        let grants = [
            workspace.grant("src", Access::Write),
            workspace.grant("docs", Access::Read),
        ];
        let read_only = workspace.rules_with(Vec::new(), &grants);
        assert!(refused(&read_only, "docs/a.md"), "in a read-only grant");
        // The good case: a file the tool may write, with one name.
        workspace.write("src/lib.rs", "");
        for rules in [&rules, &read_only] {
            assert_eq!(
                hard_link_refusal(&workspace, rules, "src/lib.rs", "src/copy"),
                None
            );
        }
    }

    #[test]
    fn a_hard_link_may_not_outlive_a_lift() {
        let workspace = Workspace::new();
        workspace.write(".claude/settings.json", "{}");
        workspace.mkdir(".claude/old");
        let grants = [workspace.grant(".", Access::Write)];
        let rules = workspace.rules_with(vec![".claude"], &grants);
        match hard_link_refusal(&workspace, &rules, ".claude/settings.json", "src/s.json") {
            Some(Denial::HardLinkToProtected { source, hit }) => {
                assert_eq!(source, ".claude/settings.json");
                assert_eq!(hit.protected, ".claude");
            }
            other => panic!("not refused: {other:?}"),
        }
        // A new name under the same protection stays protected.
        let kept = hard_link_refusal(&workspace, &rules, ".claude/settings.json", ".claude/old/s");
        assert_eq!(kept, None);
    }

    #[test]
    fn the_target_of_a_link_is_read_to_be_checked_again() {
        let workspace = Workspace::new();
        workspace.symlink("main.rs", "src/l");
        let dir = workspace.dir(".", Access::Write);
        let link = workspace.locate(&dir, "src/l", false);
        assert_eq!(target_of(&link).ok().flatten().as_deref(), Some("main.rs"));
        let file = workspace.locate(&dir, "src/main.rs", false);
        assert!(matches!(target_of(&file), Ok(None)));
    }
}

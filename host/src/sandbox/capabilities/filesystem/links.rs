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

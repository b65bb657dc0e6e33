//! Why the guard refused an operation: the one type every rule answers
//! with, kept apart so that the rules and the guard that records them both
//! stand on it.

use crate::sandbox::capabilities::protect::{Hit, Record};

/// Why the guard refused an operation, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// The operation would change `path`, which lies in a protected path.
    Protected { path: String, hit: Hit },
    /// A symlink at `link` to `target`, which resolves outside the tool's
    /// grants.
    LinkOutside { link: String, target: String },
    /// A symlink at `link` to `target`, which lies in a protected path.
    LinkIntoProtected {
        link: String,
        target: String,
        hit: Hit,
    },
    /// A symlink with an absolute target.
    AbsoluteLink { link: String, target: String },
    /// A symlink whose target has a `..` component.
    LinkClimbs { link: String, target: String },
    /// A hard link to `source`, which the tool may not write.
    HardLinkSource { source: String },
    /// A hard link to `source`, which lies in a protected path the user
    /// lifted for this tool: the new name would outlive the lift.
    HardLinkToProtected { source: String, hit: Hit },
    /// A change of the file at `path`, which has `names` names: a change
    /// through one is a change under all
    /// ([`other_names`](super::rules::other_names)).
    HardLinked { path: String, names: u64 },
    /// Opening `path`, which is `kind` (a FIFO, a socket, a device): no
    /// deadline could end a call blocked in opening or reading one.
    SpecialFile { path: String, kind: &'static str },
    /// Opening or listing `path`, in toolhost's own records (`record`, of
    /// `kind`).
    Record {
        path: String,
        record: String,
        kind: Record,
    },
}

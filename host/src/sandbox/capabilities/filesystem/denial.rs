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

impl Denial {
    /// What the model reads when `tool` was refused this: what was
    /// refused, why, and what to do instead.
    pub fn model_text(&self, tool: &str) -> String {
        match self {
            Denial::Protected { path, hit } => format!(
                "error: `{tool}` may not change `{path}`: `{}` is protected ({}). No tool may \
                 change it, even with write access to the workspace. Leave it as it is and work \
                 elsewhere; if it must change, ask the user, who can lift this for one tool with \
                 `--allow-write {tool}={}`.",
                hit.protected, hit.why, hit.protected
            ),
            Denial::LinkOutside { link, target } => format!(
                "error: `{tool}` may not create the symbolic link `{link}` -> `{target}`: the \
                 target is outside the directories this tool may use, and a link there would lead \
                 other programs out of the sandbox. Link only to paths inside its directories, or \
                 copy the file instead."
            ),
            Denial::LinkClimbs { link, target } => format!(
                "error: `{tool}` may not create the symbolic link `{link}` -> `{target}`: the \
                 target climbs with `..`, and where such a link leads changes with the links and \
                 directories it passes through (made or moved later, it can lead out of the \
                 sandbox or into a protected path). Use a target without `..`: make the link in a \
                 directory that holds what it points to (`a -> b/c`), or copy the file instead."
            ),
            Denial::LinkIntoProtected { link, target, hit } => format!(
                "error: `{tool}` may not create the symbolic link `{link}` -> `{target}`: the \
                 target is inside `{}`, which is protected ({}). Link to something else.",
                hit.protected, hit.why
            ),
            Denial::AbsoluteLink { link, target } => format!(
                "error: `{tool}` may not create the symbolic link `{link}` -> `{target}`: links \
                 with an absolute target are not allowed in the sandbox. Use a relative target \
                 inside the tool's directories."
            ),
            Denial::HardLinkSource { source } => format!(
                "error: `{tool}` may not hard-link `{source}`: it may not write that file, and a \
                 second name for it would let it. Copy the file instead."
            ),
            Denial::HardLinkToProtected { source, hit } => format!(
                "error: `{tool}` may not hard-link `{source}`: `{}` is protected ({}). A lift lets \
                 one tool change it in this run, but a second name for the file would let any tool \
                 change it later. Copy the file instead.",
                hit.protected, hit.why
            ),
            Denial::HardLinked { path, names } => format!(
                "error: `{tool}` may not change `{path}`: that file has {names} names (hard \
                 links), and a change through this one is a change under the others, which may be \
                 protected or outside the tool's directories. Remove this name first (the other \
                 names keep the file) and write it anew, or write a new file."
            ),
            Denial::SpecialFile { path, kind } => format!(
                "error: `{tool}` may not open `{path}`: it is {kind}, not a file, and opening or \
                 reading it could block the tool past its deadline. Tools may open only files and \
                 directories; leave it alone."
            ),
            Denial::Record {
                path,
                record,
                kind: Record::Sessions,
            } => format!(
                "error: `{tool}` may not read `{path}`: `{record}` holds toolhost's session files, \
                 which record what every tool read, and no tool may read them, whatever its \
                 grants. Ask the user, who can show a session with `toolhost sessions show ID`."
            ),
            Denial::Record {
                path,
                record,
                kind: Record::Named,
            } => format!(
                "error: `{tool}` may not read `{path}`: toolhost writes its sessions or its token \
                 in `{record}` (the command line names it), and no tool may read them, whatever \
                 its grants. Ask the user, who can show a session with `toolhost sessions show \
                 ID`."
            ),
            Denial::Record {
                path,
                record,
                kind: Record::Outputs,
            } => format!(
                "error: `{tool}` may not read `{path}`: `{record}` holds the whole results \
                 toolhost saved, which hold what other tools read, and only `read_file` may read \
                 them. Read it with `read_file` instead."
            ),
        }
    }
}

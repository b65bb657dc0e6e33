//! Why the guard refused an operation: the one type every rule answers
//! with, kept apart so that the rules and the guard that records them both
//! stand on it; and what the model reads of every file-system refusal.

use crate::sandbox::capabilities::grants::{Access, Grant};
use crate::sandbox::capabilities::protect::{Hit, Record};
use crate::sandbox::reach::Reach;
use crate::terminal::shell_word;

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
    /// A symbolic link at `link`, which lies in a protected path (lifted
    /// or not).
    LinkAtProtected { link: String, hit: Hit },
    /// Moving the directory `path` into `lifted`, a protection the user
    /// lifted for this tool, from outside it.
    IntoLift { path: String, lifted: String },
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
    /// A change of `path`, in a directory the tool may only read: the
    /// tool's `grants` say where it may write, unless it `declared` itself
    /// read-only (then none may).
    ReadOnly {
        path: String,
        grants: Vec<Grant>,
        declared: bool,
    },
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
    ///
    /// Long: one arm per refusal, each its whole text.
    pub fn model_text(&self, tool: &str) -> String {
        match self {
            Denial::Protected { path, hit } if hit.lift.is_empty() => format!(
                "error: `{tool}` may not change `{path}`: `{}` is protected ({}). No tool may \
                 change it, even with write access to the workspace, and no flag lifts it (it is \
                 the workspace itself or above it, or a repository's configuration names it). \
                 Leave it as it is and work elsewhere.",
                hit.protected, hit.why
            ),
            Denial::Protected { path, hit } => format!(
                "error: `{tool}` may not change `{path}`: `{}` is protected ({}). No tool may \
                 change it, even with write access to the workspace. Leave it as it is and work \
                 elsewhere; if it must change, ask the user, who can lift this for one tool with \
                 `{}`.",
                hit.protected,
                hit.why,
                hit.lift
                    .iter()
                    .map(|words| format!(
                        "--allow-write {}",
                        shell_word(&format!("{tool}={words}"))
                    ))
                    .collect::<Vec<_>>()
                    .join(" ")
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
            Denial::LinkAtProtected { link, hit } => format!(
                "error: `{tool}` may not make `{link}` a symbolic link: `{}` is protected ({}). \
                 A lift lets a tool change what is there, but a link there would make what it \
                 leads to what other programs read, and nothing protects that. Make a file or \
                 a directory there.",
                hit.protected, hit.why
            ),
            Denial::IntoLift { path, lifted } => format!(
                "error: `{tool}` may not move the directory `{path}` into `{lifted}`: the user \
                 lifted the protection of `{lifted}` for changes to what is there, not for what \
                 is moved in (a repository moved there would have its config and hooks \
                 changed). Make the directory there, or move files."
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
            Denial::ReadOnly {
                path,
                declared: true,
                ..
            } => format!(
                "error: `{tool}` may not write `{path}`: the tool declares itself read-only, so \
                 toolhost gives it no write access, whatever its grants. Use a tool that writes."
            ),
            Denial::ReadOnly { path, grants, .. } => {
                path_denied_text(tool, path, Access::Write, grants)
            }
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
                kind: Record::Secret,
                ..
            } => format!(
                "error: `{tool}` may not read `{path}`: it is one of toolhost's secrets (the MCP \
                 server's token, or the key that seals the grants the user gives), and no tool \
                 may read it, whatever its grants. Leave it alone."
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

/// The refusal of a path argument outside the tool's grants, before any
/// wasm runs: where it may go instead, or who can grant it.
pub(crate) fn path_denied_text(tool: &str, path: &str, access: Access, grants: &[Grant]) -> String {
    let verb = access.verb();
    let reach = Reach::of_dirs(tool, grants);
    if !reach.may(access) {
        return format!(
            "error: access denied: `{tool}` may not {verb} `{path}`: it has no {verb} access to \
             any directory. Only the user can grant it (in toolhost.toml or with --allow-{verb} \
             {tool}=DIR)."
        );
    }
    format!(
        "error: access denied: `{tool}` may not {verb} `{path}`: it is outside the directories \
         this tool may {verb}: {}. Use a path inside one of them.",
        reach.dir_list(access)
    )
}

/// A guest's own failure text, plus the tool's directories when the text
/// carries an OS error: inside the sandbox a path outside the grants fails
/// as a bare "No such file or directory" or "Operation not permitted", and
/// the model cannot tell that from a typo without this line.
pub(crate) fn failed_with_grants_hint(tool: &str, message: String, grants: &[Grant]) -> String {
    // Rust's io::Error says `(os error 44)`, Python's OSError `[Errno 44]`,
    // the javascript code tool's `fs` `(wasi error no-entry)`.
    const MARKS: [&str; 3] = ["(os error ", "[Errno ", "(wasi error "];
    if !MARKS.iter().any(|mark| message.contains(mark)) {
        return message;
    }
    if grants.is_empty() {
        return format!("{message}\n(`{tool}` has no access to any directory)");
    }
    format!(
        "{message}\n(`{tool}` may use only these directories: {}; paths outside them fail as \
         not found or not permitted)",
        Reach::of_dirs(tool, grants).dir_list(Access::Read)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(guest: &str, access: Access) -> Grant {
        Grant {
            host_path: std::path::PathBuf::from("/ws").join(guest),
            guest_path: guest.into(),
            access,
        }
    }

    #[test]
    fn a_failure_carrying_an_os_error_names_the_directories() {
        let grants = [grant(".", Access::Read)];
        assert_eq!(
            failed_with_grants_hint("t", "open: not found (os error 44)".into(), &grants),
            "open: not found (os error 44)\n(`t` may use only these directories: `.` (read-only); \
             paths outside them fail as not found or not permitted)"
        );
        assert_eq!(
            failed_with_grants_hint("t", "open: not found (os error 44)".into(), &[]),
            "open: not found (os error 44)\n(`t` has no access to any directory)"
        );
        assert_eq!(failed_with_grants_hint("t", "bad".into(), &grants), "bad");
        // Python's OSError.
        assert_eq!(
            failed_with_grants_hint("py", "PermissionError: [Errno 63] x: 'a'".into(), &grants),
            "PermissionError: [Errno 63] x: 'a'\n(`py` may use only these directories: `.` \
             (read-only); paths outside them fail as not found or not permitted)"
        );
    }
}

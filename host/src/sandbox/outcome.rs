//! What a tool call ended as, and the one place each ending is turned into
//! the text the model reads.
//!
//! Every way a call can go wrong is a [`ToolFault`] variant; callers branch on
//! the variant (the agent loop, `toolhost call`'s exit code) and show the
//! model [`ToolFault::model_text`], which says what happened and what to do
//! differently.

use std::fmt::Write as _;
use std::time::Duration;

use super::capabilities::exec::{ExecRefusal, WallsRefusal};
use super::capabilities::filesystem::{self, Denial, Held};
use super::capabilities::network::{self, account::NetDenial};
use super::capabilities::{Access, Grant};

/// The end of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOutcome {
    /// The tool's answer, shown to the model as is.
    Ok(String),
    /// Anything else: an `isError` result for the model.
    Fault(ToolFault),
}

impl ToolOutcome {
    /// True when the model should see this as an `isError` result.
    pub fn is_error(&self) -> bool {
        matches!(self, ToolOutcome::Fault(_))
    }

    /// The text the model sees for this outcome.
    pub fn model_text(&self, tool: &str) -> String {
        match self {
            ToolOutcome::Ok(text) => text.clone(),
            ToolOutcome::Fault(fault) => fault.model_text(tool),
        }
    }

    /// A short, stable name of the outcome for logs and transcripts.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolOutcome::Ok(_) => "ok",
            ToolOutcome::Fault(fault) => fault.kind(),
        }
    }
}

/// One problem with one schema-violating input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON pointer into the input (`/offset`), empty for the whole input.
    pub path: String,
    pub message: String,
}

/// Why a call produced no answer. Each variant renders to model text in
/// [`ToolFault::model_text`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolFault {
    #[error("unknown tool `{name}`")]
    UnknownTool {
        name: String,
        available: Vec<String>,
    },
    #[error("arguments are not valid JSON: {error}")]
    InvalidJson { error: String },
    /// The arguments hold more than toolhost parses for one call
    /// ([`crate::json_budget::TOOL_ARGUMENTS`]), counted before they were parsed.
    #[error("arguments hold {over}")]
    InputOverBudget {
        over: crate::json_budget::OverBudget,
    },
    #[error("arguments do not match the tool's input schema")]
    SchemaViolation { errors: Vec<SchemaError> },
    #[error("access denied to `{path}`")]
    Denied {
        path: String,
        access: Access,
        grants: Vec<Grant>,
    },
    /// The guest returned `call-error::invalid-input`.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The guest returned `call-error::failed`.
    #[error("failed: {0}")]
    Failed(String),
    #[error("ran out of fuel ({fuel} units)")]
    OutOfFuel { fuel: u64 },
    #[error("timed out after {}", crate::units::limit_duration(*limit))]
    Timeout { limit: Duration },
    #[error("exceeded the memory limit of {}", crate::units::bytes(*limit))]
    MemoryLimit { limit: u64 },
    #[error("returned {bytes} bytes, over the output limit of {limit}")]
    OutputLimit { bytes: usize, limit: usize },
    #[error("wrote more than its limit of {} to files", crate::units::bytes(*limit))]
    WriteLimit { limit: u64 },
    /// The guest held more open files, or directory listings, at once than
    /// a call may (host descriptors, outside its memory limit).
    #[error("held more than {} {held:?} at once", held.limit())]
    HoldLimit { held: Held },
    /// The file-system guard refused an operation (a protected path, a link
    /// out of the grants), before the call or while it ran.
    #[error("refused a file-system change: {0:?}")]
    FsDenied(Denial),
    /// The host refused one of the tool's network requests (no grant, a
    /// private address, over the call's budget), and the call then failed.
    #[error("refused a network request: {} {} ({})", .0.method, .0.url, .0.refusal)]
    NetDenied(NetDenial),
    /// A native command's output shows its walls refused it a write or the
    /// network; the guest answered, and this follows its answer.
    #[error("the walls refused `{}` something", .0.program)]
    ExecWalls(WallsRefusal),
    /// A command named `program`, a program of the user's `PATH` that the
    /// tool has no exec grant for; the shell said so, and the user may be
    /// asked for the grant.
    #[error("`{program}` is not granted")]
    ExecNotGranted { program: String },
    /// The guest trapped: a panic, an uncaught exception, a stack overflow.
    #[error("crashed: {message}")]
    Trap { message: String },
    #[error("cancelled")]
    Cancelled,
}

/// A refusal of the file-system guard, as the call's fault.
impl From<Denial> for ToolFault {
    fn from(denial: Denial) -> Self {
        ToolFault::FsDenied(denial)
    }
}

/// A refusal of the network, as the call's fault.
impl From<NetDenial> for ToolFault {
    fn from(denial: NetDenial) -> Self {
        ToolFault::NetDenied(denial)
    }
}

/// A refusal of a native command's walls, as the call's note; a program
/// not granted, as what the user may be asked for.
impl From<ExecRefusal> for ToolFault {
    fn from(refusal: ExecRefusal) -> Self {
        match refusal {
            ExecRefusal::Walls(walls) => ToolFault::ExecWalls(walls),
            ExecRefusal::NotGranted { program } => ToolFault::ExecNotGranted { program },
        }
    }
}

/// The refusal of a capability that never refuses.
impl From<std::convert::Infallible> for ToolFault {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl ToolFault {
    /// A short, stable name for logs, transcripts and JSON output.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolFault::UnknownTool { .. } => "unknown_tool",
            ToolFault::InvalidJson { .. } => "invalid_json",
            ToolFault::InputOverBudget { .. } => "input_too_large",
            ToolFault::SchemaViolation { .. } => "schema_violation",
            ToolFault::Denied { .. } => "denied",
            ToolFault::InvalidInput(_) => "invalid_input",
            ToolFault::Failed(_) => "failed",
            ToolFault::OutOfFuel { .. } => "out_of_fuel",
            ToolFault::Timeout { .. } => "timeout",
            ToolFault::MemoryLimit { .. } => "memory_limit",
            ToolFault::OutputLimit { .. } => "output_limit",
            ToolFault::WriteLimit { .. } => "write_limit",
            ToolFault::HoldLimit { .. } => "hold_limit",
            ToolFault::FsDenied(_) => "fs_denied",
            ToolFault::NetDenied(_) => "net_denied",
            ToolFault::ExecWalls(_) => "exec_walls",
            ToolFault::ExecNotGranted { .. } => "exec_not_granted",
            ToolFault::Trap { .. } => "trap",
            ToolFault::Cancelled => "cancelled",
        }
    }

    /// The `isError` text for the model: what happened, then what to do.
    pub fn model_text(&self, tool: &str) -> String {
        match self {
            ToolFault::UnknownTool { name, available } => format!(
                "error: there is no tool named `{name}`. Available tools: {}.",
                available
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ToolFault::InvalidJson { error } => format!(
                "error: the arguments for `{tool}` are not valid JSON ({error}). \
                 Send the arguments as one JSON object."
            ),
            ToolFault::InputOverBudget { over } => format!(
                "error: the arguments for `{tool}` hold {over}, the most toolhost parses for one \
                 call; they were not parsed. Put large data in a file and pass its path instead."
            ),
            ToolFault::SchemaViolation { errors } => {
                let mut text =
                    format!("error: the arguments for `{tool}` do not match its input schema:\n");
                for error in errors {
                    let at = if error.path.is_empty() {
                        "(root)"
                    } else {
                        &error.path
                    };
                    let _ = writeln!(text, "- at `{at}`: {}", error.message);
                }
                text.push_str("Fix the arguments and call the tool again.");
                text
            }
            ToolFault::Denied {
                path,
                access,
                grants,
            } => filesystem::path_denied_text(tool, path, *access, grants),
            ToolFault::InvalidInput(message) => {
                format!("error: `{tool}` rejected its input: {message}")
            }
            ToolFault::Failed(message) => format!("error: `{tool}` failed: {message}"),
            ToolFault::OutOfFuel { fuel } => format!(
                "error: `{tool}` ran out of fuel (its budget is {fuel} instructions) and was stopped. \
                 Ask for less work in one call (a narrower path, a smaller limit)."
            ),
            ToolFault::Timeout { limit } => format!(
                "error: `{tool}` did not finish within its time limit of {} and was stopped. \
                 Ask for less work in one call, or do not call it again with the same arguments.",
                crate::units::limit_duration(*limit)
            ),
            ToolFault::MemoryLimit { limit } => format!(
                "error: `{tool}` tried to use more than its memory limit of {} and was stopped. \
                 Ask for less data in one call (a smaller file, fewer results).",
                crate::units::bytes(*limit)
            ),
            ToolFault::OutputLimit { bytes, limit } => format!(
                "error: `{tool}` produced {} of output, over its limit of {}; the output was discarded. \
                 Ask for less in one call (use offset/limit, a narrower path or fewer results).",
                crate::units::bytes(*bytes as u64),
                crate::units::bytes(*limit as u64)
            ),
            ToolFault::WriteLimit { limit } => format!(
                "error: `{tool}` tried to write more than its limit of {} to files in one call and was \
                 stopped; what it wrote before that stays on disk. Write less in one call (smaller \
                 files, fewer of them).",
                crate::units::bytes(*limit)
            ),
            ToolFault::HoldLimit {
                held: Held::Descriptors,
            } => format!(
                "error: `{tool}` held more than {} files and directories open at once and was \
                 stopped. Ask for fewer files in one call.",
                Held::Descriptors.limit()
            ),
            ToolFault::HoldLimit {
                held: Held::Listings,
            } => format!(
                "error: `{tool}` held more than {} directory listings open at once and was \
                 stopped. Ask for a shallower or narrower listing in one call.",
                Held::Listings.limit()
            ),
            ToolFault::FsDenied(denial) => denial.model_text(tool),
            ToolFault::NetDenied(denial) => network::refusal::model_text(tool, denial),
            ToolFault::ExecWalls(refusal) => refusal.model_text(tool),
            ToolFault::ExecNotGranted { program } => format!(
                "error: `{tool}` may not run `{program}`: it is a program of this machine, and \
                 this tool has no grant to run it natively. If it is needed, ask the user, who \
                 can grant it with `--allow-exec {tool}={program}`."
            ),
            ToolFault::Trap { message } => format!(
                "error: `{tool}` crashed: {message}\nThis is a bug in the tool, not in your arguments; \
                 calling it the same way will likely crash again."
            ),
            ToolFault::Cancelled => {
                format!("error: `{tool}` was cancelled by the user before it finished.")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::capabilities::protect::{Hit, Record};
    use std::path::PathBuf;

    fn grant(guest: &str, access: Access) -> Grant {
        Grant {
            host_path: PathBuf::from("/ws").join(guest),
            guest_path: guest.into(),
            access,
        }
    }

    fn git() -> Hit {
        Hit::new(".git", "git runs hooks from it")
    }

    /// The position of `fault`'s variant in [`every_fault`]'s table. The
    /// match is exhaustive, so a new variant does not compile until it has
    /// a row in the table.
    fn variant_index(fault: &ToolFault) -> usize {
        match fault {
            ToolFault::UnknownTool { .. } => 0,
            ToolFault::InvalidJson { .. } => 1,
            ToolFault::SchemaViolation { .. } => 2,
            ToolFault::Denied { .. } => 3,
            ToolFault::InvalidInput(_) => 4,
            ToolFault::Failed(_) => 5,
            ToolFault::OutOfFuel { .. } => 6,
            ToolFault::Timeout { .. } => 7,
            ToolFault::MemoryLimit { .. } => 8,
            ToolFault::OutputLimit { .. } => 9,
            ToolFault::Trap { .. } => 10,
            ToolFault::Cancelled => 11,
            ToolFault::WriteLimit { .. } => 12,
            ToolFault::FsDenied(Denial::Protected { .. }) => 13,
            ToolFault::FsDenied(Denial::LinkOutside { .. }) => 14,
            ToolFault::FsDenied(Denial::LinkIntoProtected { .. }) => 15,
            ToolFault::FsDenied(Denial::AbsoluteLink { .. }) => 16,
            ToolFault::FsDenied(Denial::HardLinkSource { .. }) => 17,
            ToolFault::FsDenied(Denial::SpecialFile { .. }) => 18,
            ToolFault::FsDenied(Denial::LinkClimbs { .. }) => 19,
            ToolFault::HoldLimit {
                held: Held::Descriptors,
            } => 20,
            ToolFault::HoldLimit {
                held: Held::Listings,
            } => 21,
            ToolFault::NetDenied(_) => 22,
            ToolFault::FsDenied(Denial::HardLinkToProtected { .. }) => 23,
            ToolFault::FsDenied(Denial::Record {
                kind: Record::Sessions,
                ..
            }) => 24,
            ToolFault::InputOverBudget { .. } => 25,
            ToolFault::FsDenied(Denial::Record {
                kind: Record::Outputs,
                ..
            }) => 26,
            ToolFault::FsDenied(Denial::Record {
                kind: Record::Named,
                ..
            }) => 27,
            ToolFault::FsDenied(Denial::Record {
                kind: Record::Secret,
                ..
            }) => 33,
            ToolFault::FsDenied(Denial::HardLinked { .. }) => 28,
            ToolFault::FsDenied(Denial::ReadOnly {
                declared: false, ..
            }) => 29,
            ToolFault::FsDenied(Denial::ReadOnly { declared: true, .. }) => 30,
            ToolFault::ExecWalls(_) => 31,
            ToolFault::ExecNotGranted { .. } => 32,
            ToolFault::FsDenied(Denial::IntoLift { .. }) => 34,
            ToolFault::FsDenied(Denial::LinkAtProtected { .. }) => 35,
        }
    }

    /// Every fault with the exact text the model reads for it.
    fn every_fault() -> Vec<(ToolFault, &'static str)> {
        vec![
            (
                ToolFault::UnknownTool {
                    name: "rm".into(),
                    available: vec!["read_file".into(), "list_files".into()],
                },
                "error: there is no tool named `rm`. Available tools: `read_file`, `list_files`.",
            ),
            (
                ToolFault::InvalidJson {
                    error: "EOF while parsing an object at line 1 column 1".into(),
                },
                "error: the arguments for `t` are not valid JSON (EOF while parsing an object at line 1 \
                 column 1). Send the arguments as one JSON object.",
            ),
            (
                ToolFault::InputOverBudget {
                    over: crate::json_budget::OverBudget::Depth { limit: 64 },
                },
                "error: the arguments for `t` hold JSON nested more than 64 deep (arrays and \
                 objects inside each other), the most toolhost parses for one call; they were \
                 not parsed. Put large data in a file and pass its path instead.",
            ),
            (
                ToolFault::SchemaViolation {
                    errors: vec![
                        SchemaError {
                            path: "/offset".into(),
                            message: "-1 is less than the minimum of 1".into(),
                        },
                        SchemaError {
                            path: String::new(),
                            message: "\"path\" is a required property".into(),
                        },
                    ],
                },
                "error: the arguments for `t` do not match its input schema:\n\
                 - at `/offset`: -1 is less than the minimum of 1\n\
                 - at `(root)`: \"path\" is a required property\n\
                 Fix the arguments and call the tool again.",
            ),
            (
                ToolFault::Denied {
                    path: "../secret".into(),
                    access: Access::Read,
                    grants: vec![grant(".", Access::Read), grant("out", Access::Write)],
                },
                "error: access denied: `t` may not read `../secret`: it is outside the directories \
                 this tool may read: `.` (read-only), `out` (read-write). Use a path inside one of them.",
            ),
            (
                ToolFault::InvalidInput("`limit` must be positive".into()),
                "error: `t` rejected its input: `limit` must be positive",
            ),
            (
                ToolFault::Failed("no such file `a.txt`".into()),
                "error: `t` failed: no such file `a.txt`",
            ),
            (
                ToolFault::OutOfFuel { fuel: 1000 },
                "error: `t` ran out of fuel (its budget is 1000 instructions) and was stopped. Ask \
                 for less work in one call (a narrower path, a smaller limit).",
            ),
            (
                ToolFault::Timeout {
                    limit: Duration::from_millis(250),
                },
                "error: `t` did not finish within its time limit of 250 ms and was stopped. Ask for \
                 less work in one call, or do not call it again with the same arguments.",
            ),
            (
                ToolFault::MemoryLimit { limit: 64 << 20 },
                "error: `t` tried to use more than its memory limit of 64 MiB and was stopped. Ask \
                 for less data in one call (a smaller file, fewer results).",
            ),
            (
                ToolFault::OutputLimit {
                    bytes: 2 << 20,
                    limit: 1 << 20,
                },
                "error: `t` produced 2 MiB of output, over its limit of 1 MiB; the output was \
                 discarded. Ask for less in one call (use offset/limit, a narrower path or fewer \
                 results).",
            ),
            (
                ToolFault::Trap {
                    message: "wasm trap: unreachable".into(),
                },
                "error: `t` crashed: wasm trap: unreachable\nThis is a bug in the tool, not in your \
                 arguments; calling it the same way will likely crash again.",
            ),
            (
                ToolFault::Cancelled,
                "error: `t` was cancelled by the user before it finished.",
            ),
            (
                ToolFault::WriteLimit { limit: 256 << 20 },
                "error: `t` tried to write more than its limit of 256 MiB to files in one call and \
                 was stopped; what it wrote before that stays on disk. Write less in one call \
                 (smaller files, fewer of them).",
            ),
            (
                ToolFault::FsDenied(Denial::Protected {
                    path: ".git/hooks/pre-commit".into(),
                    hit: git(),
                }),
                "error: `t` may not change `.git/hooks/pre-commit`: `.git` is protected (git runs \
                 hooks from it). No tool may change it, even with write access to the workspace. \
                 Leave it as it is and work elsewhere; if it must change, ask the user, who can lift \
                 this for one tool with `--allow-write t=.git`.",
            ),
            (
                ToolFault::FsDenied(Denial::LinkOutside {
                    link: "out".into(),
                    target: "../..".into(),
                }),
                "error: `t` may not create the symbolic link `out` -> `../..`: the target is outside \
                 the directories this tool may use, and a link there would lead other programs out of \
                 the sandbox. Link only to paths inside its directories, or copy the file instead.",
            ),
            (
                ToolFault::FsDenied(Denial::LinkIntoProtected {
                    link: "hooks".into(),
                    target: ".git/hooks".into(),
                    hit: git(),
                }),
                "error: `t` may not create the symbolic link `hooks` -> `.git/hooks`: the target is \
                 inside `.git`, which is protected (git runs hooks from it). Link to something else.",
            ),
            (
                ToolFault::FsDenied(Denial::AbsoluteLink {
                    link: "etc".into(),
                    target: "/etc".into(),
                }),
                "error: `t` may not create the symbolic link `etc` -> `/etc`: links with an absolute \
                 target are not allowed in the sandbox. Use a relative target inside the tool's \
                 directories.",
            ),
            (
                ToolFault::FsDenied(Denial::HardLinkSource {
                    source: "toolhost.toml".into(),
                }),
                "error: `t` may not hard-link `toolhost.toml`: it may not write that file, and a \
                 second name for it would let it. Copy the file instead.",
            ),
            (
                ToolFault::FsDenied(Denial::SpecialFile {
                    path: "logs/pipe".into(),
                    kind: "a FIFO (named pipe)",
                }),
                "error: `t` may not open `logs/pipe`: it is a FIFO (named pipe), not a file, and \
                 opening or reading it could block the tool past its deadline. Tools may open only \
                 files and directories; leave it alone.",
            ),
            (
                ToolFault::FsDenied(Denial::LinkClimbs {
                    link: "src/up".into(),
                    target: "../..".into(),
                }),
                "error: `t` may not create the symbolic link `src/up` -> `../..`: the target climbs \
                 with `..`, and where such a link leads changes with the links and directories it \
                 passes through (made or moved later, it can lead out of the sandbox or into a \
                 protected path). Use a target without `..`: make the link in a directory that holds \
                 what it points to (`a -> b/c`), or copy the file instead.",
            ),
            (
                ToolFault::HoldLimit {
                    held: Held::Descriptors,
                },
                // 4096, or a quarter of a low `ulimit -n`.
                Box::leak(
                    format!(
                        "error: `t` held more than {} files and directories open at once and was \
                         stopped. Ask for fewer files in one call.",
                        Held::Descriptors.limit()
                    )
                    .into_boxed_str(),
                ),
            ),
            (
                ToolFault::HoldLimit {
                    held: Held::Listings,
                },
                "error: `t` held more than 256 directory listings open at once and was stopped. Ask \
                 for a shallower or narrower listing in one call.",
            ),
            (
                ToolFault::NetDenied(NetDenial {
                    method: "POST".into(),
                    url: "https://paste.test/new".into(),
                    refusal: network::account::NetRefusal::NotGranted,
                    grants: Vec::new(),
                }),
                "error: `t` may not reach `POST https://paste.test/new`: no network grant of this \
                 tool matches it. This tool has no network access. If this request is needed, ask \
                 the user, who can allow it with `--allow-net t=https://paste.test`.",
            ),
            (
                ToolFault::FsDenied(Denial::HardLinkToProtected {
                    source: ".vscode/tasks.json".into(),
                    hit: Hit::new(".vscode", "VS Code runs its tasks"),
                }),
                "error: `t` may not hard-link `.vscode/tasks.json`: `.vscode` is protected (VS Code \
                 runs its tasks). A lift lets one tool change it in this run, but a second name for \
                 the file would let any tool change it later. Copy the file instead.",
            ),
            (
                ToolFault::FsDenied(Denial::ReadOnly {
                    path: "docs/a.md".into(),
                    grants: vec![grant("out", Access::Write), grant(".", Access::Read)],
                    declared: false,
                }),
                "error: access denied: `t` may not write `docs/a.md`: it is outside the directories \
                 this tool may write: `out` (read-write). Use a path inside one of them.",
            ),
            (
                ToolFault::FsDenied(Denial::ReadOnly {
                    path: "a.txt".into(),
                    grants: vec![grant(".", Access::Read)],
                    declared: true,
                }),
                "error: `t` may not write `a.txt`: the tool declares itself read-only, so toolhost \
                 gives it no write access, whatever its grants. Use a tool that writes.",
            ),
            (
                ToolFault::FsDenied(Denial::HardLinked {
                    path: "notes/t.json".into(),
                    names: 2,
                }),
                "error: `t` may not change `notes/t.json`: that file has 2 names (hard links), and \
                 a change through this one is a change under the others, which may be protected or \
                 outside the tool's directories. Remove this name first (the other names keep the \
                 file) and write it anew, or write a new file.",
            ),
            (
                ToolFault::FsDenied(Denial::Record {
                    path: ".toolhost/sessions/s.jsonl".into(),
                    record: ".toolhost/sessions".into(),
                    kind: Record::Sessions,
                }),
                "error: `t` may not read `.toolhost/sessions/s.jsonl`: `.toolhost/sessions` holds \
                 toolhost's session files, which record what every tool read, and no tool may read \
                 them, whatever its grants. Ask the user, who can show a session with `toolhost \
                 sessions show ID`.",
            ),
            (
                ToolFault::FsDenied(Denial::Record {
                    path: ".toolhost/outputs/c1.txt".into(),
                    record: ".toolhost/outputs".into(),
                    kind: Record::Outputs,
                }),
                "error: `t` may not read `.toolhost/outputs/c1.txt`: `.toolhost/outputs` holds the \
                 whole results toolhost saved, which hold what other tools read, and only \
                 `read_file` may read them. Read it with `read_file` instead.",
            ),
            (
                ToolFault::FsDenied(Denial::Record {
                    path: "state/s.jsonl".into(),
                    record: "state".into(),
                    kind: Record::Named,
                }),
                "error: `t` may not read `state/s.jsonl`: toolhost writes its sessions or its token \
                 in `state` (the command line names it), and no tool may read them, whatever its \
                 grants. Ask the user, who can show a session with `toolhost sessions show ID`.",
            ),
            (
                ToolFault::ExecWalls(WallsRefusal {
                    program: "cargo".into(),
                    writable: vec!["src".into(), "target".into()],
                    write: true,
                    network: true,
                }),
                "note: `cargo` ran natively, inside walls built from `t`'s grants, and they \
                 refused it a write: it may write only in `src`, `target` (only the user can grant \
                 more, with `--allow-write t=DIR`), and never to a protected path (`.git`, \
                 `toolhost.toml`, ...), whatever the grant; and the network: a native program has \
                 none, whatever the tool's network grants (build offline, or use `fetch`).",
            ),
            (
                ToolFault::FsDenied(Denial::Record {
                    path: "/home/u/.config/toolhost/grant-key".into(),
                    record: "/home/u/.config/toolhost/grant-key".into(),
                    kind: Record::Secret,
                }),
                "error: `t` may not read `/home/u/.config/toolhost/grant-key`: it is one of \
                 toolhost's secrets (the MCP server's token, or the key that seals the grants the \
                 user gives), and no tool may read it, whatever its grants. Leave it alone.",
            ),
            (
                ToolFault::ExecNotGranted {
                    program: "cargo".into(),
                },
                "error: `t` may not run `cargo`: it is a program of this machine, and this tool \
                 has no grant to run it natively. If it is needed, ask the user, who can grant it \
                 with `--allow-exec t=cargo`.",
            ),
            (
                ToolFault::FsDenied(Denial::IntoLift {
                    path: "fixture.git".into(),
                    lifted: ".vscode".into(),
                }),
                "error: `t` may not move the directory `fixture.git` into `.vscode`: the user \
                 lifted the protection of `.vscode` for changes to what is there, not for what \
                 is moved in (a repository moved there would have its config and hooks \
                 changed). Make the directory there, or move files.",
            ),
            (
                ToolFault::FsDenied(Denial::LinkAtProtected {
                    link: "app/.vscode".into(),
                    hit: Hit::new("app/.vscode", "VS Code runs its tasks"),
                }),
                "error: `t` may not make `app/.vscode` a symbolic link: `app/.vscode` is \
                 protected (VS Code runs its tasks). A lift lets a tool change what is there, but \
                 a link there would make what it leads to what other programs read, and nothing \
                 protects that. Make a file or a directory there.",
            ),
        ]
    }

    #[test]
    fn every_fault_has_its_model_text() {
        let table = every_fault();
        let mut seen: Vec<usize> = table.iter().map(|(f, _)| variant_index(f)).collect();
        seen.sort_unstable();
        // The highest index `variant_index` gives: a new variant raises it.
        let last = 35;
        assert_eq!(seen, (0..=last).collect::<Vec<_>>(), "one row per variant");
        for (fault, expected) in table {
            assert_eq!(fault.model_text("t"), expected, "{}", fault.kind());
            assert!(ToolOutcome::Fault(fault).is_error());
        }
    }

    #[test]
    fn denied_write_without_write_grants_says_only_the_user_can_grant() {
        let fault = ToolFault::Denied {
            path: "a.txt".into(),
            access: Access::Write,
            grants: vec![grant(".", Access::Read)],
        };
        assert_eq!(
            fault.model_text("write_file"),
            "error: access denied: `write_file` may not write `a.txt`: it has no write access to \
             any directory. Only the user can grant it (in toolhost.toml or with --allow-write \
             write_file=DIR)."
        );
    }

    #[test]
    fn sizes_and_durations_read_naturally() {
        assert_eq!(crate::units::bytes(256 << 20), "256 MiB");
        assert_eq!(crate::units::bytes(4096), "4 KiB");
        assert_eq!(crate::units::bytes(1000), "1000 bytes");
        assert_eq!(
            crate::units::limit_duration(Duration::from_secs(30)),
            "30 s"
        );
        assert_eq!(
            crate::units::limit_duration(Duration::from_millis(250)),
            "250 ms"
        );
    }
}

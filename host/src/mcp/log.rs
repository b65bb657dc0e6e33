//! What `toolhost mcp` says on stderr: stdout carries the protocol and
//! nothing else, so this is the module's only output besides it. Each
//! message is one line, escaped (`crate::terminal`): it may quote a plugin's
//! error or a file name, and an MCP client shows it in its logs or a
//! terminal.

use std::fmt::Display;
use std::io::Write as _;

use crate::terminal;
use crate::transcript::{AUDIT_FILES_KEPT, AuditLog, AuditNotice};

/// One line for the person who started the server (an MCP client shows a
/// server's stderr in its logs).
pub(super) fn info(line: impl Display) {
    say(format_args!("toolhost mcp: {line}"));
}

/// Something went wrong that does not stop the server.
pub(super) fn warn(line: impl Display) {
    say(format_args!("toolhost mcp: warning: {line}"));
}

/// A server whose stderr is closed goes on serving: the line is dropped.
fn say(line: impl Display) {
    let line = line.to_string();
    let _ = writeln!(std::io::stderr().lock(), "{}", terminal::one_line(&line));
}

/// What the audit did that the person who started the server should know:
/// where the calls are recorded, and when that changes or fails.
pub(super) fn audit(notice: &AuditNotice, audit: &AuditLog) {
    match notice {
        AuditNotice::Opened { id } => info(format_args!(
            "calls are recorded in session {id} (`toolhost sessions show {id}`)"
        )),
        AuditNotice::Continued { from, to, deleted } => {
            info(format_args!(
                "session {from} reached {}: calls go on in session {to}{}",
                match audit.max_file() {
                    max if max % (1 << 20) == 0 => format!("{} MiB", max >> 20),
                    max => format!("{max} bytes"),
                },
                match deleted {
                    Some(Ok(old)) => format!(
                        "; deleted session {old} (a server keeps its last {AUDIT_FILES_KEPT})"
                    ),
                    _ => String::new(),
                }
            ));
            if let Some(Err(error)) = deleted {
                warn(format_args!(
                    "cannot delete this server's session file older than its last \
                     {AUDIT_FILES_KEPT}: {error}"
                ));
            }
        }
        AuditNotice::Failed { error } => warn(format_args!(
            "cannot write the session file in `{}`: {error}; the tools are still served \
             (pass --no-session to serve without recording the calls)",
            audit.dir().display()
        )),
    }
}

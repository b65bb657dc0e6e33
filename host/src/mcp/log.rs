//! What `toolhost mcp` says on stderr: stdout carries the protocol and
//! nothing else, so this is the module's only output besides it. Each
//! message is one line, escaped (`crate::terminal`): it may quote a plugin's
//! error or a file name, and an MCP client shows it in its logs or a
//! terminal.

use std::fmt::Display;
use std::io::Write as _;

use crate::terminal;

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

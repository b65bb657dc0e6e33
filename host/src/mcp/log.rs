//! What `toolhost mcp` says on stderr: stdout carries the protocol and
//! nothing else, so this is the module's only output besides it.
#![allow(clippy::print_stderr)]

use std::fmt::Display;

/// One line for the person who started the server (an MCP client shows a
/// server's stderr in its logs).
pub(super) fn info(line: impl Display) {
    eprintln!("toolhost mcp: {line}");
}

/// Something went wrong that does not stop the server.
pub(super) fn warn(line: impl Display) {
    eprintln!("toolhost mcp: warning: {line}");
}

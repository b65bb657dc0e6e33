//! `toolhost mcp`: serves the sandbox's tools to any Model Context Protocol
//! client (Claude Code, Codex, Gemini CLI, ...) with the grants, limits and
//! error texts of `toolhost run`.
//!
//! Built on rmcp, the official Rust SDK: [`server`] is the handler,
//! [`catalog`] what `tools/list` and the instructions say, [`lanes`] when a
//! call may start, [`progress`] the throttled progress notifications,
//! [`stdio`] the transport. Every call goes through [`Sandbox::call`], so
//! there is no second way to run a tool.
//!
//! Depends on `sandbox` and on `transcript` (the audit file), never on
//! `agent` or `cli`. Stdout carries the protocol only; [`log`] is the one
//! place that writes to stderr.

mod catalog;
mod lanes;
mod log;
mod progress;
mod server;
mod stdio;

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::service::{QuitReason, ServerInitializeError, serve_server_with_ct};
use tokio_util::sync::CancellationToken;

use crate::sandbox::Sandbox;
use crate::transcript::{AuditLog, AuditStart, SessionStore};

/// How `toolhost mcp` serves.
#[derive(Debug, Default)]
pub struct ServeOptions {
    /// Where the audit session file goes; `None` records nothing
    /// (`--no-session`).
    pub sessions: Option<SessionStore>,
}

/// Why the server could not serve.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot write the session file: {0} (pass --no-session to serve without one)")]
    Audit(std::io::Error),
    #[error("the MCP connection failed: {0}")]
    Connection(String),
}

/// Serves `sandbox`'s tools over stdin and stdout until the client closes
/// stdin; its running calls are then cancelled.
pub async fn serve_stdio(sandbox: Sandbox, options: ServeOptions) -> Result<(), McpError> {
    let (read, write) = rmcp::transport::stdio_pipes();
    serve(sandbox, options, read, write).await
}

/// Serves over any reader and writer (stdio, or a pipe in tests).
pub async fn serve<R, W>(
    sandbox: Sandbox,
    options: ServeOptions,
    read: R,
    write: W,
) -> Result<(), McpError>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let instructions = catalog::instructions(&sandbox);
    let audit = match &options.sessions {
        Some(store) => {
            let start = AuditStart {
                provider: "mcp",
                instructions: &instructions,
            };
            Some(Arc::new(
                AuditLog::create(store, &sandbox, start).map_err(McpError::Audit)?,
            ))
        }
        None => None,
    };
    log::info(format_args!(
        "serving {} tools from `{}` on stdio{}",
        sandbox.tools().len(),
        sandbox.workspace().display(),
        match &audit {
            Some(audit) => format!("; calls are recorded in session {}", audit.id()),
            None => String::new(),
        }
    ));

    let writes: HashSet<String> = sandbox
        .tools()
        .iter()
        .filter(|tool| !tool.read_only)
        .map(|tool| tool.name.clone())
        .collect();
    let lanes = Arc::new(lanes::Lanes::new(writes));
    // Cancelled when stdin ends; rmcp cancels every request's token with it.
    let closed = CancellationToken::new();
    let transport = stdio::LineTransport::new(read, write, closed.clone(), Arc::clone(&lanes));
    let handler = server::ToolServer::new(Arc::new(sandbox), instructions, lanes, audit.clone());

    let outcome = match serve_server_with_ct(handler, transport, closed).await {
        Ok(running) => match running.waiting().await {
            Ok(QuitReason::JoinError(e)) | Err(e) => Err(McpError::Connection(e.to_string())),
            // Stdin closed (or, the same, `closed` was cancelled).
            Ok(_) => Ok(()),
        },
        // The client went away before (or while) initializing.
        Err(ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled) => {
            Ok(())
        }
        Err(e) => Err(McpError::Connection(e.to_string())),
    };
    if let Some(audit) = &audit {
        audit.close("the MCP client disconnected");
        if let Some(error) = audit.error() {
            log::warn(format_args!(
                "the session file `{}` is incomplete: writing it failed: {error}",
                audit.path().display()
            ));
        }
    }
    outcome
}

//! `toolhost mcp`: serves the sandbox's tools to any Model Context Protocol
//! client (Claude Code, Codex, Gemini CLI, ...) with the grants, limits and
//! error texts of `toolhost run`.
//!
//! Built on rmcp, the official Rust SDK: [`server`] is the handler,
//! [`catalog`] what `tools/list` and the instructions say, [`lanes`] when a
//! call may start, [`progress`] the throttled progress notifications,
//! [`stdio`] (over [`lines`]) and [`http`] (with [`sessions`] and
//! [`token`]) the transports, [`reload`] the plugin watcher. Every call
//! goes through [`Sandbox::call`], so there is no second way to run a tool.
//!
//! Depends on `sandbox` and on `transcript` (the audit file), never on
//! `agent` or `cli`. Stdout carries the protocol only; [`log`] is the one
//! place that writes to stderr.

mod admission;
mod capped_lines;
mod catalog;
mod elicit;
mod http;
mod log;
mod progress;
mod reload;
mod server;
mod sessions;
mod stdio;
mod token;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::service::{QuitReason, ServerInitializeError, serve_server_with_ct};
use tokio_util::sync::CancellationToken;

use crate::sandbox::{Sandbox, SandboxOptions};
use crate::transcript::{AUDIT_FILE_MAX, AuditLog, SessionStore};

pub use http::parse_listen;
pub use token::{HttpAuth, MIN_TOKEN_LEN, Token, TokenError};

/// How `toolhost mcp` serves.
#[derive(Debug, Default)]
pub struct ServeOptions {
    /// Where the audit session files go; `None` records nothing
    /// (`--no-session`).
    pub sessions: Option<SessionStore>,
    /// Bytes an audit file may reach before the calls go on in a new one;
    /// `None` is [`AUDIT_FILE_MAX`] (a smaller one is for tests).
    pub session_file_max_bytes: Option<u64>,
    /// The options the sandbox was loaded with: its plugin directories are
    /// watched and reloaded from on a change. `None` serves what was loaded.
    pub reload: Option<SandboxOptions>,
    /// Run on the sandbox being served when the server stops (the CLI leaves
    /// the optimized compiles it did not finish to a background process).
    pub at_exit: Option<fn(&Sandbox)>,
    /// Never ask a client for a grant (`--no-ask`): its answers would not
    /// be a person's (a client that hands elicitation to a model).
    pub no_ask: bool,
}

/// Why the server could not serve.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the MCP connection failed: {0}")]
    Connection(String),
    #[error("cannot listen on `{addr}`: {source}; pick another address or port")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Serves `sandbox`'s tools over stdin and stdout until the client closes
/// stdin; its running calls are then cancelled.
pub async fn serve_stdio(sandbox: Sandbox, options: ServeOptions) -> Result<(), McpError> {
    use std::io::IsTerminal as _;
    // Started by hand in a terminal: it would look hung, waiting for JSON.
    if std::io::stdin().is_terminal() {
        log::info(format_args!(
            "waiting for an MCP client on stdin: an MCP client starts this command itself \
             (e.g. `claude mcp add toolhost -- toolhost --workspace {} mcp`); Ctrl+D stops it",
            sandbox.workspace().display()
        ));
    }
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
    let server = Prepared::new(sandbox, &options, "stdio", !options.no_ask);
    // Cancelled when stdin ends; rmcp cancels every request's token with it.
    let closed = CancellationToken::new();
    let transport =
        stdio::LineTransport::new(read, write, closed.clone(), Arc::clone(&server.lanes));
    let outcome = match serve_server_with_ct(server.handler.clone(), transport, closed).await {
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
    server.finish("the MCP client disconnected");
    outcome
}

/// Serves `sandbox`'s tools over Streamable HTTP at `http://ADDR/mcp` until
/// `stop` resolves (Ctrl+C in the CLI), to clients with `auth`'s token.
/// Calls of tools that write are serialised in the order their handlers
/// start, as HTTP requests have no one order of arrival.
pub async fn serve_http(
    sandbox: Sandbox,
    options: ServeOptions,
    addr: SocketAddr,
    auth: HttpAuth,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), McpError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| McpError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| McpError::Bind { addr, source })?;
    let url = format!("http://{bound}{}", http::PATH);
    // Without a token anyone who can reach the port could answer, so
    // nobody is asked.
    let asks = !options.no_ask && !matches!(auth, HttpAuth::Off);
    let server = Prepared::new(sandbox, &options, &url, asks);
    let digest = match &auth {
        HttpAuth::Token(token) => {
            log::info(format_args!(
                "clients must send the header `Authorization: Bearer {}` ({} `{}`), e.g. \
                 claude mcp add --transport http toolhost {url} --header \"Authorization: Bearer {0}\"",
                token.secret(),
                if token.created() {
                    "a new token, kept in"
                } else {
                    "the token in"
                },
                token.file().display(),
            ));
            Some(token.digest())
        }
        HttpAuth::Off => {
            log::warn(format_args!(
                "--http-no-auth: any local user or program that can reach {url} can call the \
                 tools; drop --http-no-auth to require a bearer token"
            ));
            None
        }
    };
    let stopping = CancellationToken::new();
    let serving = http::serve(server.handler.clone(), listener, digest, stopping.clone());
    tokio::pin!(serving);
    let outcome = tokio::select! {
        result = &mut serving => result,
        () = stop => {
            stopping.cancel();
            serving.await
        }
    };
    server.finish("the server was stopped");
    outcome.map_err(|e| McpError::Connection(e.to_string()))
}

/// What both transports serve: the handler, its lanes, the audit and the
/// plugin watcher.
struct Prepared {
    handler: server::ToolServer,
    lanes: Arc<admission::Lanes>,
    audit: Option<Arc<AuditLog>>,
    /// Stops the watcher.
    watching: CancellationToken,
    at_exit: Option<fn(&Sandbox)>,
}

impl Prepared {
    fn new(sandbox: Sandbox, options: &ServeOptions, on: &str, asks: bool) -> Prepared {
        let loaded = server::Loaded::new(sandbox);
        // The file is made at the first call: a client that only lists the
        // tools (or a health check) leaves no session behind.
        let audit = options.sessions.clone().map(|store| {
            let max = options.session_file_max_bytes.unwrap_or(AUDIT_FILE_MAX);
            Arc::new(AuditLog::new(store, max))
        });
        log::info(format_args!(
            "serving {} tools from `{}` on {on}{}",
            loaded.sandbox.tools().len(),
            loaded.sandbox.workspace().display(),
            match &audit {
                Some(audit) => format!(
                    "; calls will be recorded in a session file in `{}`",
                    audit.dir().display()
                ),
                None => String::new(),
            }
        ));
        let lanes = Arc::new(admission::Lanes::new(loaded.write_tools()));
        let handler = server::ToolServer::new(loaded, Arc::clone(&lanes), audit.clone(), asks);
        let watching = CancellationToken::new();
        if let Some(reload) = &options.reload
            && !reload.plugin_dirs.is_empty()
        {
            tokio::spawn(reload::watch(
                reload.clone(),
                handler.clone(),
                watching.clone(),
            ));
        }
        Prepared {
            handler,
            lanes,
            audit,
            watching,
            at_exit: options.at_exit,
        }
    }

    /// Stops watching, ends the audit session with `why` and runs the exit
    /// hook on what is served now (after a reload, the new plugins).
    fn finish(&self, why: &str) {
        self.watching.cancel();
        if let Some(at_exit) = self.at_exit {
            at_exit(&self.handler.current().sandbox);
        }
        // A failure is told once, when it happens.
        if let Some(audit) = &self.audit
            && let Some(notice) = audit.close(why)
        {
            log::audit(&notice, audit);
        }
    }
}

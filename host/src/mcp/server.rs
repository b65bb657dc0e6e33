//! The MCP server's handler: `tools/list` from the sandbox's tools,
//! `tools/call` through [`Sandbox::call`], each call admitted by the
//! [`Lanes`], its progress forwarded and its start and end audited.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter,
    Tool as McpTool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;

use super::admission::{Admission, Arrival, Lanes};
use super::elicit::Elicitation;
use super::{catalog, log, progress};
use crate::agent::{Answer, Approver, Granting, SessionGrants, run_asking};
use crate::sandbox::{Ask, CallOptions, CallReport, Sandbox, ToolFault};
use crate::transcript::AuditLog;
use tokio_util::sync::CancellationToken;

/// Cancelled when the HTTP connection a request came on is closed (the
/// HTTP front puts it in the request's extensions). Calls are served
/// statelessly (no session to resume a response on), so a client that hung
/// up can never read the result: its calls stop, as on stdio when stdin
/// closes.
#[derive(Clone, Debug)]
pub(super) struct ConnectionGone(pub(super) CancellationToken);

/// Serves one sandbox's tools. Cheap to clone: each HTTP session gets its
/// own handler over the same state.
#[derive(Clone)]
pub(super) struct ToolServer {
    shared: Arc<Shared>,
    /// What the client's user granted in this session, when asked
    /// (elicitation): each session has its own ([`ToolServer::for_session`]).
    grants: SessionGrants,
}

struct Shared {
    /// Replaced whole when the plugins change (`reload`); a call keeps the
    /// version it started with.
    loaded: RwLock<Arc<Loaded>>,
    lanes: Arc<Lanes>,
    audit: Option<Arc<AuditLog>>,
    /// Numbers the calls, for their audit records' ids.
    calls: AtomicU64,
    /// Whether a client that declared elicitation is asked for a grant a
    /// refused call needs (not with `--no-ask`, nor over HTTP without a
    /// token).
    asks: bool,
    /// Clients told when the tool list changes: those that initialized
    /// (2025 era) ...
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// ... and the open `subscriptions/listen` streams that asked for it
    /// (2026-07-28, which has no initialize).
    listeners: Mutex<Vec<SubscriptionSink>>,
}

/// One version of the tools and what the client is told of them.
pub(super) struct Loaded {
    pub(super) sandbox: Arc<Sandbox>,
    tools: Vec<McpTool>,
    instructions: String,
}

impl Loaded {
    pub(super) fn new(sandbox: Sandbox) -> Loaded {
        Loaded {
            tools: catalog::tools(&sandbox),
            instructions: catalog::instructions(&sandbox),
            sandbox: Arc::new(sandbox),
        }
    }

    /// The names of the tools that write (for the write lane).
    pub(super) fn write_tools(&self) -> HashSet<String> {
        self.sandbox
            .tools()
            .iter()
            .filter(|tool| !tool.read_only)
            .map(|tool| tool.name.clone())
            .collect()
    }
}

impl ToolServer {
    pub(super) fn new(
        loaded: Loaded,
        lanes: Arc<Lanes>,
        audit: Option<Arc<AuditLog>>,
        asks: bool,
    ) -> Self {
        ToolServer {
            grants: SessionGrants::new(loaded.sandbox.workspace()),
            shared: Arc::new(Shared {
                loaded: RwLock::new(Arc::new(loaded)),
                lanes,
                audit,
                calls: AtomicU64::new(0),
                asks,
                peers: Mutex::new(Vec::new()),
                listeners: Mutex::new(Vec::new()),
            }),
        }
    }

    /// A handler for a new session over the same tools: none of the
    /// grants another session's user gave.
    pub(super) fn for_session(&self) -> ToolServer {
        ToolServer {
            shared: Arc::clone(&self.shared),
            grants: SessionGrants::new(self.grants.workspace()),
        }
    }

    /// What a call of this session runs with: its grants, and the client
    /// to ask for more when it can be asked (elicitation); an answer holds
    /// for this session only.
    fn granting(&self, peer: &Peer<RoleServer>, sandbox: &Sandbox) -> Granting {
        Granting {
            grants: self.grants.clone(),
            approver: Elicitation::of(peer, sandbox.workspace().to_path_buf())
                .filter(|_| self.shared.asks)
                .map(|asks| Arc::new(asks) as Arc<dyn Approver>),
        }
    }

    /// The tools being served now.
    pub(super) fn current(&self) -> Arc<Loaded> {
        Arc::clone(
            &self
                .shared
                .loaded
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Serves `loaded` from now on and tells the clients the list changed.
    /// Calls already running finish on the version they started with.
    pub(super) async fn replace(&self, loaded: Loaded) {
        self.shared.lanes.set_write_tools(loaded.write_tools());
        *self
            .shared
            .loaded
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(loaded);
        let peers: Vec<Peer<RoleServer>> = self
            .shared
            .peers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for peer in peers {
            // A client that has gone away is simply not told.
            let _ = peer.notify_tool_list_changed().await;
        }
        let listeners: Vec<SubscriptionSink> = self
            .shared
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for listener in listeners {
            // A closed stream refuses the send; it is dropped when its
            // `listen` returns.
            let _ = listener.notify_tool_list_changed().await;
        }
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.current().instructions.clone())
    }

    /// `subscriptions/listen` (2026-07-28): the one notification toolhost
    /// sends unasked is that the tool list changed.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// Holds the stream's sink until the client cancels it (or goes away).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(sink);
        context.cancelled().await;
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|listener| listener.id() != &id);
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = self
            .shared
            .peers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // HTTP sessions come and go; forget the ones that went.
        peers.retain(|peer| !peer.is_transport_closed());
        peers.push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.current().tools.clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let loaded = self.current();
        if loaded.sandbox.tool(name).is_none() {
            // The spec's answer to an unknown tool is a protocol error, not
            // a tool result; its text is the one `toolhost run` gives.
            let fault = loaded.sandbox.unknown_tool(name);
            return Err(ErrorData::invalid_params(fault.model_text(name), None));
        }
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let cancel = context.ct.child_token();
        // Over HTTP, the connection closing cancels the call too.
        let gone = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<ConnectionGone>())
            .map(|gone| gone.0.clone());
        let ticket = context.extensions.get::<Arrival>().and_then(Arrival::take);
        let Some(admission) = self.shared.lanes.admit(name, ticket, &cancel).await else {
            // Cancelled before it started: rmcp sends no response for it.
            return Ok(result(&ToolFault::Cancelled.model_text(name), true, None));
        };

        let number = self.shared.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call_id = format!("mcp-{number}-{}", context.id);
        // Asked only when the call opens a file: the tools served now.
        let serving =
            || crate::transcript::audit::first_line(&loaded.sandbox, &loaded.instructions);
        if let Some(audit) = &self.shared.audit
            && let Some(notice) = audit.call_started(&serving, &call_id, name, &arguments)
        {
            log::audit(&notice, audit);
        }
        let (sink, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (sink, task) = progress::forward(context.peer.clone(), token);
                (Some(sink), Some(task))
            }
            None => (None, None),
        };
        let call_cancel = cancel.clone();
        let options = CallOptions {
            cancel,
            progress: sink,
            permits: Arc::from([]),
        };
        let input = arguments.to_string();
        let started = Instant::now();
        let sandbox = &loaded.sandbox;
        let granting = self.granting(&context.peer, sandbox);
        let asked = audit_answers(self.shared.audit.as_deref(), &serving);
        let stop = call_cancel.clone();
        let admitted = (&*self.shared.lanes, admission);
        let call = async move {
            let report = call_asking(
                sandbox,
                (name, &input),
                (&options, admitted),
                &granting,
                asked,
                &stop,
            )
            .await;
            // Ends the forwarder once it has sent the last message.
            drop(options);
            report
        };
        let call = async {
            match forwarder {
                Some(forwarder) => tokio::join!(call, forwarder).0,
                None => call.await,
            }
        };
        let report = match gone {
            Some(gone) => {
                tokio::pin!(call);
                tokio::select! {
                    report = &mut call => report,
                    () = gone.cancelled() => {
                        call_cancel.cancel();
                        call.await
                    }
                }
            }
            None => call.await,
        };
        let took = started.elapsed();

        let text = report.model_text(name);
        if let Some(audit) = &self.shared.audit
            && let Some(notice) = audit.call_ended(&serving, &call_id, name, &report, &text, took)
        {
            log::audit(&notice, audit);
        }
        Ok(result(&text, report.is_error(), report.structured))
    }
}

/// Records each answer the client's user gave in the audit session.
fn audit_answers<'a>(
    audit: Option<&'a AuditLog>,
    serving: &'a (dyn Fn() -> crate::transcript::SessionStart + Sync),
) -> impl FnMut(&Ask, Option<Answer>) + 'a {
    move |ask, answer| {
        if let (Some(audit), Some(answer)) = (audit, answer)
            && let Some(notice) = audit.granted(serving, &ask.permit, answer)
        {
            log::audit(&notice, audit);
        }
    }
}

/// `name` called on `input` with `options` and the session's grants,
/// asking for more as `granting` can and telling `asked` (the audit). The
/// call holds its admission only while it runs: a question waiting for a
/// person (minutes) holds no lane another client's writes wait in; a
/// re-run is admitted again.
async fn call_asking(
    sandbox: &Sandbox,
    (name, input): (&str, &str),
    (options, (lanes, admission)): (&CallOptions, (&Lanes, Admission)),
    granting: &Granting,
    asked: impl FnMut(&Ask, Option<Answer>),
    stop: &CancellationToken,
) -> CallReport {
    let mut first = Some(admission);
    run_asking(
        (granting, name),
        |permits| {
            let options = CallOptions {
                permits,
                ..options.clone()
            };
            let held = first.take();
            async move {
                let admission = match held {
                    Some(admission) => Some(admission),
                    None => lanes.admit(name, None, &options.cancel).await,
                };
                // Not admitted: cancelled, which the call answers at once.
                let report = sandbox.call(name, input, &options).await;
                drop(admission);
                report
            }
        },
        asked,
        stop,
    )
    .await
}

/// One text block: exactly what `toolhost run` shows the model; plus, for a
/// typed export's success, the value as `structuredContent`.
fn result(text: &str, is_error: bool, structured: Option<serde_json::Value>) -> CallToolResponse {
    let content = vec![ContentBlock::text(text)];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured;
    result.into()
}

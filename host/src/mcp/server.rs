//! The MCP server's handler: `tools/list` from the sandbox's tools,
//! `tools/call` through [`Sandbox::call`], each call admitted by the
//! [`Lanes`], its progress forwarded and its start and end audited.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::lanes::{Arrival, Lanes};
use super::{catalog, progress};
use crate::sandbox::{CallOptions, Sandbox, ToolFault};
use crate::transcript::AuditLog;

/// Serves one sandbox's tools. Cheap to clone: each HTTP session gets its
/// own handler over the same state.
#[derive(Clone)]
pub(super) struct ToolServer {
    shared: Arc<Shared>,
}

struct Shared {
    sandbox: Arc<Sandbox>,
    tools: Vec<McpTool>,
    instructions: String,
    lanes: Arc<Lanes>,
    audit: Option<Arc<AuditLog>>,
    /// Numbers the calls, for their audit records' ids.
    calls: AtomicU64,
}

impl ToolServer {
    pub(super) fn new(
        sandbox: Arc<Sandbox>,
        instructions: String,
        lanes: Arc<Lanes>,
        audit: Option<Arc<AuditLog>>,
    ) -> Self {
        ToolServer {
            shared: Arc::new(Shared {
                tools: catalog::tools(&sandbox),
                sandbox,
                instructions,
                lanes,
                audit,
                calls: AtomicU64::new(0),
            }),
        }
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.shared.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if self.shared.sandbox.tool(name).is_none() {
            // The spec's answer to an unknown tool is a protocol error, not
            // a tool result; its text is the one `toolhost run` gives.
            let fault = ToolFault::UnknownTool {
                name: name.to_owned(),
                available: self
                    .shared
                    .sandbox
                    .tools()
                    .iter()
                    .map(|t| t.name.clone())
                    .collect(),
            };
            return Err(ErrorData::invalid_params(fault.model_text(name), None));
        }
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let cancel = context.ct.clone();
        let ticket = context.extensions.get::<Arrival>().and_then(Arrival::take);
        let Some(admission) = self.shared.lanes.admit(name, ticket, &cancel).await else {
            // Cancelled before it started: rmcp sends no response for it.
            return Ok(result(&ToolFault::Cancelled.model_text(name), true));
        };

        let number = self.shared.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call_id = format!("mcp-{number}-{}", context.id);
        if let Some(audit) = &self.shared.audit {
            audit.call_started(&call_id, name, &arguments);
        }
        let (sink, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (sink, task) = progress::forward(context.peer.clone(), token);
                (Some(sink), Some(task))
            }
            None => (None, None),
        };
        let options = CallOptions {
            cancel,
            progress: sink,
        };
        let input = arguments.to_string();
        let started = Instant::now();
        let sandbox = &self.shared.sandbox;
        let call = async move {
            let report = sandbox.call(name, &input, &options).await;
            // Ends the forwarder once it has sent the last message.
            drop(options);
            report
        };
        let report = match forwarder {
            Some(forwarder) => tokio::join!(call, forwarder).0,
            None => call.await,
        };
        let took = started.elapsed();
        drop(admission);

        let text = report.model_text(name);
        if let Some(audit) = &self.shared.audit {
            audit.call_ended(&call_id, name, &report, &text, took);
        }
        Ok(result(&text, report.is_error()))
    }
}

/// One text block: exactly what `toolhost run` shows the model.
fn result(text: &str, is_error: bool) -> CallToolResponse {
    let content = vec![ContentBlock::text(text)];
    if is_error {
        CallToolResult::error(content).into()
    } else {
        CallToolResult::success(content).into()
    }
}

//! What a client learns of the tools: `tools/list` entries with all four
//! annotations set, and the server's instructions naming each tool's
//! directories.

use std::fmt::Write as _;
use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations};

use crate::sandbox::{Access, Sandbox, Tool};

/// Every loaded tool, in the sandbox's order (standard tools first, then
/// plugins in file order), so the list is the same at every start.
pub(super) fn tools(sandbox: &Sandbox) -> Vec<McpTool> {
    sandbox.tools().iter().map(entry).collect()
}

/// One `tools/list` entry. Every hint is explicit, because the spec's
/// defaults (`destructiveHint` and `openWorldHint` true) are the opposite
/// of what a sandboxed tool is.
fn entry(tool: &Tool) -> McpTool {
    // The sandbox checked at load that the schema is a JSON object.
    let schema = tool.input_schema.as_object().cloned().unwrap_or_default();
    let mut entry = McpTool::new(
        tool.name.clone(),
        tool.description.clone(),
        Arc::new(schema),
    );
    // A typed export's result type is known: clients get it as
    // `outputSchema` and each result as `structuredContent`.
    if let Some(output) = tool.output_schema.as_ref().and_then(|s| s.as_object()) {
        entry = entry.with_raw_output_schema(Arc::new(output.clone()));
    }
    entry.with_annotations(
        ToolAnnotations::new()
            .read_only(tool.read_only)
            // A tool that is not read-only may overwrite or delete inside
            // its write grants.
            .destructive(!tool.read_only)
            // Two calls of a write tool can differ (appends); claim nothing.
            .idempotent(false)
            // No plugin has a network capability.
            .open_world(false),
    )
}

/// The server's `instructions`: where the tools work and what each may
/// touch, so the client's model does not discover its grants by failing.
pub(super) fn instructions(sandbox: &Sandbox) -> String {
    let mut text = format!(
        "toolhost runs each of these tools in a fresh WebAssembly sandbox in the workspace `{}`. \
         A tool may use only the directories listed for it below, relative to the workspace \
         (`.` is its root); pass paths relative to the workspace too. Each call is limited in \
         compute, time, memory and output. A result marked as an error says what went wrong (a \
         path outside the tool's directories, input that does not match the schema, a limit \
         reached) and what to do instead.\n\nTools and their directories:\n",
        sandbox.workspace().display()
    );
    for tool in sandbox.tools() {
        let _ = writeln!(text, "- {}", directories(tool));
    }
    text
}

/// `read_file (read-only): reads .` or `write_file: reads .; writes out`.
fn directories(tool: &Tool) -> String {
    let list = |paths: Vec<&str>| {
        if paths.is_empty() {
            "nothing".to_string()
        } else {
            paths.join(", ")
        }
    };
    let grants = &tool.policy.grants;
    let reads = list(grants.iter().map(|g| g.guest_path.as_str()).collect());
    if tool.read_only {
        return format!("{} (read-only): reads {reads}", tool.name);
    }
    let writes = list(
        grants
            .iter()
            .filter(|g| g.access == Access::Write)
            .map(|g| g.guest_path.as_str())
            .collect(),
    );
    format!("{}: reads {reads}; writes {writes}", tool.name)
}

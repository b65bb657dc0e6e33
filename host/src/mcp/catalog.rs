//! What a client learns of the tools: `tools/list` entries with a title
//! and all four annotations set, and the server's instructions naming each
//! tool's directories.

use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations};

use crate::sandbox::{Sandbox, Tool};

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
    let title = title(&tool.name);
    let mut entry = McpTool::new(
        tool.name.clone(),
        tool.description.clone(),
        Arc::new(schema),
    )
    .with_title(title.clone());
    // A typed export's result type is known: clients get it as
    // `outputSchema` and each result as `structuredContent`.
    if let Some(output) = tool.output_schema.as_ref().and_then(|s| s.as_object()) {
        entry = entry.with_raw_output_schema(Arc::new(output.clone()));
    }
    entry.with_annotations(
        // The title again where 2025-03-26, before `Tool.title`, had it.
        ToolAnnotations::with_title(title)
            .read_only(tool.read_only)
            // A tool that is not read-only may overwrite or delete inside
            // its write grants.
            .destructive(!tool.read_only)
            // Two calls of a write tool can differ (appends); claim nothing.
            .idempotent(false)
            // Only a tool the user granted hosts reaches past the machine.
            .open_world(tool.open_world()),
    )
}

/// A title for people, made from the tool's name, since neither a
/// toolhost-world plugin's `tool-spec` nor a typed export declares one:
/// words split at `_`, `-` and camelCase humps, lower-cased but for
/// acronyms, the first capitalised (`read_file` -> `Read file`,
/// `fetchURLNow` -> `Fetch URL now`).
fn title(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for part in name.split(['_', '-']).filter(|part| !part.is_empty()) {
        let chars: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let hump = i > 0
                && c.is_ascii_uppercase()
                && (!chars[i - 1].is_ascii_uppercase()
                    || chars.get(i + 1).is_some_and(char::is_ascii_lowercase));
            if hump {
                words.push(std::mem::take(&mut word));
            }
            word.push(c);
        }
        words.push(word);
    }
    let mut title = String::new();
    for word in &words {
        let acronym = word.len() > 1 && !word.chars().any(|c| c.is_ascii_lowercase());
        let word = if acronym {
            word.clone()
        } else {
            word.to_ascii_lowercase()
        };
        if title.is_empty() {
            let mut chars = word.chars();
            title.extend(chars.next().map(|c| c.to_ascii_uppercase()));
            title.extend(chars);
        } else {
            title.push(' ');
            title.push_str(&word);
        }
    }
    if title.is_empty() {
        name.to_string()
    } else {
        title
    }
}

/// The server's `instructions`: where the tools work and what each may
/// touch, so the client's model does not discover its grants by failing.
pub(super) fn instructions(sandbox: &Sandbox) -> String {
    format!(
        "toolhost runs each of these tools in a fresh WebAssembly sandbox in the workspace `{}`. \
         A tool may use only the directories listed for it below, relative to the workspace \
         (`.` is its root), and reach only the hosts listed for it (none unless listed); pass \
         paths relative to the workspace too. Each call is limited in \
         compute, time, memory and output. A result marked as an error says what went wrong (a \
         path outside the tool's directories, input that does not match the schema, a limit \
         reached) and what to do instead.\n\n{}",
        sandbox.workspace().display(),
        sandbox.describe_reach()
    )
}

#[cfg(test)]
mod tests {
    use super::title;

    #[test]
    fn a_title_is_the_name_in_words() {
        for (name, expected) in [
            ("read_file", "Read file"),
            ("search_text", "Search text"),
            ("typed_read_file", "Typed read file"),
            ("kebab-case-name", "Kebab case name"),
            ("getWeather", "Get weather"),
            ("fetchURLNow", "Fetch URL now"),
            ("HTTP_get", "HTTP get"),
            ("s3_put2", "S3 put2"),
            ("x", "X"),
            ("__", "__"),
        ] {
            assert_eq!(title(name), expected, "{name}");
        }
    }
}

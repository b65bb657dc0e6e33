//! `fetch`: a web page as Markdown (or text, or as it came), a page of it
//! at a time; the inputs of the MCP reference fetch server.
//!
//! It reaches only what the user granted it (`--allow-net fetch=...`;
//! nothing by default) and no files at all. Redirects are followed here,
//! each hop cleared again by the host; status and content type head the
//! result so the model knows what it read.

#[cfg(target_family = "wasm")]
mod http;
pub mod page;

use serde::Deserialize;
use serde_json::json;
use toolhost_plugin_support::{Tool, ToolError, ToolResult};

use page::Format;

/// Characters returned when the call gives no `max_length`.
const DEFAULT_MAX_LENGTH: usize = 20_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    url: String,
    format: Option<Format>,
    max_length: Option<usize>,
    start_index: Option<usize>,
}

pub struct Fetch;

impl Tool for Fetch {
    const NAME: &'static str = "fetch";
    const DESCRIPTION: &'static str = "Fetch a URL (GET) and return its content: an HTML page as \
        Markdown (its article, without menus and scripts), or `text`, or `raw`; JSON and plain \
        text as they came. The result starts with the final URL, the status and the content \
        type. Returns up to `max_length` characters (default 20000) from `start_index` (default \
        0); a cut result ends with the start_index to ask for next. Follows up to 5 redirects. \
        Reaches only the hosts the user granted this tool.";
    const READ_ONLY: bool = true;

    fn input_schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "description": "The http:// or https:// URL to fetch.",
                    "minLength": 1
                },
                "format": {
                    "type": "string",
                    "enum": ["markdown", "text", "raw"],
                    "description": "How to return an HTML page: `markdown` (default), `text`, or \
                        `raw` (the HTML itself)."
                },
                "max_length": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1_000_000,
                    "description": "Most characters to return. Default 20000."
                },
                "start_index": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Character to start at, to read on after a cut result. \
                        Default 0."
                }
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    fn call(input: &str) -> ToolResult {
        let input: Input = toolhost_plugin_support::parse_input(input)?;
        let url = url::Url::parse(&input.url)
            .map_err(|e| ToolError::InvalidInput(format!("`{}` is not a URL: {e}", input.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::InvalidInput(format!(
                "`{}` is not an http:// or https:// URL",
                input.url
            )));
        }
        let fetched = get(url)?;
        let format = input.format.unwrap_or(Format::Markdown);
        let head = format!(
            "URL: {}\nStatus: {}\nContent-Type: {}\n\n",
            fetched.url,
            fetched.status,
            fetched.content_type.as_deref().unwrap_or("(none given)")
        );
        let rendered = page::render(
            &fetched.body,
            fetched.content_type.as_deref(),
            fetched.url.as_str(),
            format,
        )
        .map_err(|why| ToolError::Failed(format!("{head}{why}")))?;
        let shown = page::page(
            &rendered,
            input.start_index.unwrap_or(0),
            input.max_length.unwrap_or(DEFAULT_MAX_LENGTH),
        )
        .map_err(|why| ToolError::InvalidInput(format!("{head}{why}")))?;
        let text = format!("{head}{shown}");
        // An error page is still read (it often says why), as an error.
        if fetched.status >= 400 {
            return Err(ToolError::Failed(text));
        }
        Ok(text)
    }
}

#[cfg(target_family = "wasm")]
fn get(url: url::Url) -> Result<http::Fetched, ToolError> {
    http::get(url).map_err(ToolError::Failed)
}

/// Outside WebAssembly there is no `wasi:http` to fetch with.
#[cfg(not(target_family = "wasm"))]
fn get(url: url::Url) -> Result<Fetched, ToolError> {
    Err(ToolError::Failed(format!(
        "cannot fetch {url}: fetch runs only as a WebAssembly component"
    )))
}

#[cfg(not(target_family = "wasm"))]
struct Fetched {
    url: url::Url,
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

toolhost_plugin_support::export_tool!(Fetch);

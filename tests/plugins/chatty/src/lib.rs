//! A plugin that reports progress: `chatter` calls `host.progress` `count`
//! times, or forever when `count` is 0; with `size`, each message is padded
//! to about `size` bytes of `fill` (default `x`). The MCP tests use it for
//! throttled and cut progress notifications and for cancelling a guest
//! that never returns.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Chatty;

impl Guest for Chatty {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "chatter".into(),
            description: "Report progress `count` times (0: forever), each of `size` bytes of `fill`, then return.".into(),
            input_schema: r#"{"type":"object","properties":{"count":{"type":"integer","minimum":0},"size":{"type":"integer","minimum":0},"fill":{"type":"string","minLength":1}},"required":["count"]}"#.into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, input: String) -> Result<String, CallError> {
        let value: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        let count = value["count"].as_u64().unwrap_or(0);
        let fill = value["fill"].as_str().unwrap_or("x");
        let size = value["size"].as_u64().unwrap_or(0) as usize;
        let padding = fill.repeat(size / fill.len().max(1));
        let mut step = 0u64;
        while count == 0 || step < count {
            step += 1;
            if padding.is_empty() {
                toolhost::plugin::host::progress(&format!("step {step}"));
            } else {
                toolhost::plugin::host::progress(&format!("step {step} {padding}"));
            }
        }
        Ok(format!("reported progress {count} times"))
    }
}

export!(Chatty);

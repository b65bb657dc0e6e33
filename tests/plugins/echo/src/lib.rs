//! A well-behaved plugin outside the standard set: the drop-in test copies
//! it into a plugins directory and expects `toolhost` to pick it up.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Echo;

impl Guest for Echo {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "echo".into(),
            description: "Return `text` unchanged.".into(),
            input_schema:
                r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#
                    .into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, input: String) -> Result<String, CallError> {
        let value: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        toolhost::plugin::host::progress("echoing");
        Ok(value["text"].as_str().unwrap_or_default().to_string())
    }
}

export!(Echo);

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
        // For the tests of live progress: more lines, each held a while.
        for line in value["progress"].as_array().into_iter().flatten() {
            toolhost::plugin::host::progress(line.as_str().unwrap_or_default());
            let pause = value["pause_ms"].as_u64().unwrap_or(0);
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
        Ok(value["text"].as_str().unwrap_or_default().to_string())
    }
}

export!(Echo);

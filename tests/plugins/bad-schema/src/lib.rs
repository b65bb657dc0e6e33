//! Offers a tool whose `input-schema` is not a JSON Schema: toolhost must
//! skip this plugin at load with a message naming the file and the tool.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct BadSchema;

impl Guest for BadSchema {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "bad_schema".into(),
            description: "Its schema is broken.".into(),
            input_schema: r#"{"type": "object", "properties": {"x": {"type": 12}}}"#.into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        Ok(String::new())
    }
}

export!(BadSchema);

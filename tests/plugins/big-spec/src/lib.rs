//! Offers a tool with a 4 MiB description: toolhost would hold it, print it
//! and send it to the model with every request. It must refuse the plugin
//! at load, naming its cap on descriptions, and load the other plugins.

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct BigSpec;

impl Guest for BigSpec {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "big".into(),
            description: "Read this. ".repeat(400_000),
            input_schema: r#"{"type": "object"}"#.into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, _input: String) -> Result<String, CallError> {
        Ok("read".into())
    }
}

export!(BigSpec);

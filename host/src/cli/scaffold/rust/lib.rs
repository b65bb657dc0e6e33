//! `{{name}}`: a toolhost plugin (world `plugin` of wit/plugin.wit).
//!
//! Files are read with `std::fs`: the directories the user granted this tool
//! are its preopens, so a path reaches them and nothing else.

wit_bindgen::generate!({ world: "plugin", path: "wit" });

struct Plugin;

const SCHEMA: &str = r#"{
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file to count.", "x-toolhost-path": "read"}
    },
    "required": ["path"],
    "additionalProperties": false
}"#;

impl Guest for Plugin {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "{{name}}".into(),
            description: "Count the lines, words and bytes of a text file.".into(),
            input_schema: SCHEMA.into(),
            read_only: true,
        }]
    }

    fn call_tool(name: String, input: String) -> Result<String, CallError> {
        if name != "{{name}}" {
            return Err(CallError::InvalidInput(format!("no tool `{name}`")));
        }
        // toolhost validated `input` against SCHEMA before calling.
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        let path = input["path"].as_str().unwrap_or_default();
        // Return `failed` for what you can catch: a panic is a crash, and
        // the model reads only "crashed", not your message.
        let text = std::fs::read_to_string(path)
            .map_err(|e| CallError::Failed(format!("cannot read `{path}`: {e}")))?;
        Ok(format!(
            "{} lines, {} words, {} bytes in {path}",
            text.lines().count(),
            text.split_whitespace().count(),
            text.len()
        ))
    }
}

export!(Plugin);

//! A plugin for world `plugin-fs`, the world for toolchains that only let
//! guest code import what the world names (componentize-js). It reaches
//! files only through the `wasi:filesystem` bindings generated from
//! `wit/`, never through a standard library, as such a guest does.

wit_bindgen::generate!({ world: "plugin-fs", path: "../../../wit", generate_all });

use wasi::filesystem::preopens::get_directories;
use wasi::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};

struct PluginFs;

const TOOLS: &[(&str, &str)] = &[
    (
        "preopens",
        "List the directories the host preopened, one guest path per line.",
    ),
    (
        "cat",
        "Read the file at `path`, relative to the first preopen, and return it.",
    ),
];

impl Guest for PluginFs {
    fn list_tools() -> Vec<ToolSpec> {
        TOOLS
            .iter()
            .map(|(name, description)| ToolSpec {
                name: (*name).into(),
                description: (*description).into(),
                input_schema: r#"{"type":"object","properties":{"path":{"type":"string"}}}"#.into(),
                read_only: true,
            })
            .collect()
    }

    fn call_tool(name: String, input: String) -> Result<String, CallError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        let preopens = get_directories();
        match name.as_str() {
            "preopens" => Ok(preopens
                .iter()
                .map(|(_, path)| format!("{path}\n"))
                .collect()),
            "cat" => {
                let path = input["path"].as_str().unwrap_or_default();
                let (dir, _) = preopens
                    .first()
                    .ok_or_else(|| CallError::Failed("no directory was preopened".into()))?;
                let file = dir
                    .open_at(
                        PathFlags::empty(),
                        path,
                        OpenFlags::empty(),
                        DescriptorFlags::READ,
                    )
                    .map_err(|e| CallError::Failed(format!("open `{path}`: {}", e.name())))?;
                let mut bytes = Vec::new();
                loop {
                    let (chunk, end) = file
                        .read(64 * 1024, bytes.len() as u64)
                        .map_err(|e| CallError::Failed(format!("read `{path}`: {}", e.name())))?;
                    bytes.extend_from_slice(&chunk);
                    if end || chunk.is_empty() {
                        break;
                    }
                }
                String::from_utf8(bytes)
                    .map_err(|_| CallError::Failed(format!("`{path}` is not UTF-8 text")))
            }
            other => Err(CallError::InvalidInput(format!("no tool `{other}`"))),
        }
    }
}

export!(PluginFs);

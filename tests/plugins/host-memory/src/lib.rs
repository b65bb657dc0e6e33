//! A plugin that makes the host hold memory for it through raw WASI
//! resources, outside its own linear memory: `wasi:http` fields of about
//! 120 KiB each (`hold_fields`), and many read streams of one file, each
//! with a 64 KiB read-ahead (`hold_read_streams`). It keeps every resource
//! until it has made `count` of them, then answers how many it held; the
//! host should stop it at its memory limit long before.

use wasi::filesystem::preopens::get_directories;
use wasi::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};
use wasi::http::types::Fields;

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct HostMemory;

impl Guest for HostMemory {
    fn list_tools() -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "hold_fields".into(),
                description: "Make `count` wasi:http fields of `kib` KiB each and hold them all."
                    .into(),
                input_schema: r#"{"type":"object","properties":{"count":{"type":"integer"},"kib":{"type":"integer"}},"required":["count"]}"#.into(),
                read_only: true,
            },
            ToolSpec {
                name: "hold_read_streams".into(),
                description: "Open `path` once and hold `count` read streams of it, each with \
                              a 64 KiB read done ahead."
                    .into(),
                input_schema: r#"{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"}},"required":["path","count"]}"#.into(),
                read_only: true,
            },
        ]
    }

    fn call_tool(name: String, input: String) -> Result<String, CallError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        let count = input["count"].as_u64().unwrap_or(0);
        match name.as_str() {
            "hold_fields" => {
                let kib = input["kib"].as_u64().unwrap_or(120) as usize;
                let entry = vec![("x-held".to_string(), vec![b'a'; kib << 10])];
                let mut held = Vec::new();
                for _ in 0..count {
                    let fields = Fields::from_list(&entry)
                        .map_err(|e| CallError::Failed(format!("fields: {e:?}")))?;
                    held.push(fields);
                }
                Ok(format!("held {} fields", held.len()))
            }
            "hold_read_streams" => {
                let path = input["path"].as_str().unwrap_or_default();
                let (dir, _) = get_directories()
                    .into_iter()
                    .next()
                    .ok_or_else(|| CallError::Failed("no directory".into()))?;
                let file = dir
                    .open_at(
                        PathFlags::empty(),
                        path,
                        OpenFlags::empty(),
                        DescriptorFlags::READ,
                    )
                    .map_err(|e| CallError::Failed(format!("open {path}: {e:?}")))?;
                let mut held = Vec::new();
                for _ in 0..count {
                    let stream = file
                        .read_via_stream(0)
                        .map_err(|e| CallError::Failed(format!("read-via-stream: {e:?}")))?;
                    // Starts a 64 KiB read in the host and waits for it: its
                    // bytes stay in the stream until read.
                    let _ = stream.read(64 << 10);
                    stream.subscribe().block();
                    held.push(stream);
                }
                Ok(format!("held {} read streams", held.len()))
            }
            other => Err(CallError::InvalidInput(format!("no tool {other}"))),
        }
    }
}

export!(HostMemory);

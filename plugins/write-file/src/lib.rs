//! `write_file`: create or overwrite a file, creating parent directories.
//!
//! Needs a write grant: the host refuses the call before it runs when the
//! path is outside the tool's writable directories.

use std::fs;
use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use toolhost_plugin_support::{Tool, ToolResult, io_error};

#[derive(Deserialize)]
struct Input {
    path: String,
    content: String,
}

pub struct WriteFile;

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    const DESCRIPTION: &'static str = "Write `content` to a file in the workspace, replacing it \
        if it exists and creating missing parent directories. Use edit_file to change part of \
        an existing file.";
    const READ_ONLY: bool = false;

    fn input_schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "description": "File path relative to the workspace root.",
                    "x-toolhost-path": "write"
                },
                "content": {
                    "type": "string",
                    "description": "The whole new content of the file."
                }
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn call(input: &str) -> ToolResult {
        let input: Input = toolhost_plugin_support::parse_input(input)?;
        write(&input.path, &input.content)
    }
}

fn write(path: &str, content: &str) -> ToolResult {
    if let Some(parent) = Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        fs::create_dir_all(parent).map_err(|e| io_error("create the directories of", path, &e))?;
    }
    let existed = fs::metadata(path).is_ok();
    fs::write(path, content).map_err(|e| io_error("write", path, &e))?;
    let verb = if existed { "overwrote" } else { "created" };
    Ok(format!("{verb} `{path}` ({} bytes)", content.len()))
}

toolhost_plugin_support::export_tool!(WriteFile);

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_plugin_support::ToolError;

    #[test]
    fn creates_parents_and_reports_bytes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a/b/c.txt");
        let out = write(&path.to_string_lossy(), "héllo").expect("ok");
        assert!(
            out.starts_with("created `") && out.ends_with("(6 bytes)"),
            "{out}"
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), "héllo");
    }

    #[test]
    fn overwrites_and_says_so() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.txt");
        fs::write(&path, "old content").expect("write");
        let out = write(&path.to_string_lossy(), "new").expect("ok");
        assert!(out.starts_with("overwrote"), "{out}");
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
    }

    #[test]
    fn writing_onto_a_directory_fails_clearly() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = write(&dir.path().to_string_lossy(), "x").expect_err("dir");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("cannot write")),
            "{err:?}"
        );
    }
}

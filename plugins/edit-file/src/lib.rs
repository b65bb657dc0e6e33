//! `edit_file`: exact string replacement in one file.
//!
//! Refuses ambiguous edits: `old_string` must occur exactly once unless
//! `replace_all` is set, so the model never changes a place it did not mean.
//! The new content is written to a temporary sibling and renamed over the
//! file, so a call stopped half-way (timeout, fuel) never leaves it cut.

use std::fs;
use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use toolhost_plugin_support::{Tool, ToolError, ToolResult, io_error, looks_binary};

#[derive(Deserialize)]
struct Input {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

pub struct EditFile;

impl Tool for EditFile {
    const NAME: &'static str = "edit_file";
    const DESCRIPTION: &'static str = "Replace the exact text `old_string` with `new_string` in a \
        file. `old_string` must match exactly (whitespace included) and occur exactly once, \
        unless `replace_all` is true; include surrounding lines to make it unique. Read the \
        file first.";
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
                "old_string": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The exact text to replace."
                },
                "new_string": {
                    "type": "string",
                    "description": "The text to put in its place."
                },
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every occurrence instead of exactly one. Default false."
                }
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn call(input: &str) -> ToolResult {
        let input: Input = toolhost_plugin_support::parse_input(input)?;
        edit(
            &input.path,
            &input.old_string,
            &input.new_string,
            input.replace_all,
        )
    }
}

fn edit(path: &str, old: &str, new: &str, replace_all: bool) -> ToolResult {
    if old == new {
        return Err(ToolError::InvalidInput(
            "`old_string` and `new_string` are the same; nothing would change".into(),
        ));
    }
    let bytes = fs::read(path).map_err(|e| io_error("read", path, &e))?;
    if looks_binary(&bytes) {
        return Err(ToolError::Failed(format!(
            "`{path}` is a binary file; edit_file only edits text"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::Failed(format!(
            "`{path}` is not valid UTF-8; edit_file only edits UTF-8 text"
        ))
    })?;

    let count = text.matches(old).count();
    let updated = match (count, replace_all) {
        (0, _) => {
            return Err(ToolError::Failed(format!(
                "`old_string` was not found in `{path}`; read the file again and copy the text exactly, \
                 including whitespace and indentation"
            )));
        }
        (1, _) | (_, true) => text.replace(old, new),
        (n, false) => {
            return Err(ToolError::Failed(format!(
                "`old_string` occurs {n} times in `{path}`; include more surrounding lines to make it \
                 unique, or set replace_all to change every occurrence"
            )));
        }
    };

    write_replacing(path, &updated)?;
    let noun = if count == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    Ok(format!("replaced {count} {noun} in `{path}`"))
}

/// Writes next to the file and renames over it, so the file is either the
/// old or the new content, never half of it.
fn write_replacing(path: &str, content: &str) -> Result<(), ToolError> {
    let target = Path::new(path);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = target.with_file_name(format!(".{name}.toolhost-edit"));
    fs::write(&temp, content).map_err(|e| io_error("write", path, &e))?;
    fs::rename(&temp, target).map_err(|e| {
        let _ = fs::remove_file(&temp);
        io_error("replace", path, &e)
    })
}

toolhost_plugin_support::export_tool!(EditFile);

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(content: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.rs");
        fs::write(&path, content).expect("write");
        (dir, path.to_string_lossy().into_owned())
    }

    #[test]
    fn replaces_a_unique_occurrence() {
        let (_dir, path) = file_with("let a = 1;\nlet b = 2;\n");
        let out = edit(&path, "b = 2", "b = 3", false).expect("ok");
        assert_eq!(out, format!("replaced 1 occurrence in `{path}`"));
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            "let a = 1;\nlet b = 3;\n"
        );
    }

    #[test]
    fn refuses_an_ambiguous_edit_and_leaves_the_file_alone() {
        let (_dir, path) = file_with("x\nx\n");
        let err = edit(&path, "x", "y", false).expect_err("ambiguous");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("occurs 2 times")),
            "{err:?}"
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), "x\nx\n");
    }

    #[test]
    fn replace_all_changes_every_occurrence() {
        let (_dir, path) = file_with("x\nx\n");
        let out = edit(&path, "x", "y", true).expect("ok");
        assert_eq!(out, format!("replaced 2 occurrences in `{path}`"));
        assert_eq!(fs::read_to_string(&path).expect("read"), "y\ny\n");
    }

    #[test]
    fn missing_old_string_says_how_to_recover() {
        let (_dir, path) = file_with("abc");
        let err = edit(&path, "zzz", "y", false).expect_err("missing");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("was not found")),
            "{err:?}"
        );
    }

    #[test]
    fn identical_strings_are_invalid_input() {
        let (_dir, path) = file_with("abc");
        let err = edit(&path, "a", "a", false).expect_err("same");
        assert!(matches!(err, ToolError::InvalidInput(_)), "{err:?}");
    }

    #[test]
    fn leaves_no_temporary_file_behind() {
        let (dir, path) = file_with("abc");
        edit(&path, "b", "B", false).expect("ok");
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

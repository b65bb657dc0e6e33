//! `list_files`: a directory as an indented tree.
//!
//! Skips what ripgrep skips (hidden files, `.gitignore`d paths) so the model
//! sees the project, not its build output, and stops at a fixed number of
//! entries with a note rather than flooding the context.

use std::fmt::Write as _;

use ignore::WalkBuilder;
use serde::Deserialize;
use serde_json::json;
use toolhost_plugin_support::{Tool, ToolError, ToolResult, io_error};

const DEFAULT_DEPTH: usize = 3;
/// Entries listed before the tree is cut.
const MAX_ENTRIES: usize = 500;

#[derive(Deserialize)]
struct Input {
    path: Option<String>,
    max_depth: Option<usize>,
}

pub struct ListFiles;

impl Tool for ListFiles {
    const NAME: &'static str = "list_files";
    const DESCRIPTION: &'static str = "List the files under a workspace directory as an indented \
        tree (directories end with `/`). Skips hidden files and paths ignored by .gitignore. \
        Shows up to 3 levels by default (`max_depth`) and at most 500 entries.";
    const READ_ONLY: bool = true;

    fn input_schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Directory relative to the workspace root. Default `.`.",
                    "minLength": 1,
                    "default": ".",
                    "x-toolhost-path": "read"
                },
                "max_depth": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 64,
                    "description": "How many levels to descend; 1 lists only direct children. Default 3."
                }
            },
            "additionalProperties": false
        })
    }

    fn call(input: &str) -> ToolResult {
        let input: Input = toolhost_plugin_support::parse_input(input)?;
        list(
            input.path.as_deref().unwrap_or("."),
            input.max_depth.unwrap_or(DEFAULT_DEPTH),
            MAX_ENTRIES,
        )
    }
}

fn list(root: &str, max_depth: usize, max_entries: usize) -> ToolResult {
    let meta = std::fs::metadata(root).map_err(|e| io_error("list", root, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "cannot list `{root}`: it is a file; use read_file to read it"
        )));
    }

    let walker = WalkBuilder::new(root)
        .max_depth(Some(max_depth))
        .require_git(false)
        .sort_by_file_path(toolhost_plugin_support::by_name)
        .build();

    let mut out = String::new();
    let mut entries = 0usize;
    let mut cut = false;
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            // An unreadable subdirectory should not hide the rest of the tree.
            Err(err) => {
                let _ = writeln!(out, "(skipped: {err})");
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if entries == max_entries {
            cut = true;
            break;
        }
        entries += 1;
        let indent = "  ".repeat(entry.depth() - 1);
        let name = entry.file_name().to_string_lossy();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let slash = if is_dir { "/" } else { "" };
        let _ = writeln!(out, "{indent}{name}{slash}");
    }

    if entries == 0 {
        return Ok(format!("(`{root}` is empty)"));
    }
    if cut {
        let _ = writeln!(
            out,
            "(listing cut at {max_entries} entries; list a subdirectory or pass a smaller max_depth)"
        );
    }
    Ok(out)
}

toolhost_plugin_support::export_tool!(ListFiles);

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        fs::create_dir_all(root.join("src/nested/deeper")).expect("mkdir");
        fs::create_dir_all(root.join("target/debug")).expect("mkdir");
        fs::write(root.join("src/main.rs"), "fn main() {}").expect("write");
        fs::write(root.join("src/nested/deeper/x.rs"), "").expect("write");
        fs::write(root.join("README.md"), "hi").expect("write");
        fs::write(root.join(".hidden"), "").expect("write");
        fs::write(root.join(".gitignore"), "target/\n").expect("write");
        fs::write(root.join("target/debug/app"), "").expect("write");
        dir
    }

    #[test]
    fn lists_a_sorted_tree_without_ignored_or_hidden_entries() {
        let dir = tree();
        let out = list(&dir.path().to_string_lossy(), 3, 100).expect("ok");
        assert_eq!(out, "README.md\nsrc/\n  main.rs\n  nested/\n    deeper/\n");
    }

    #[test]
    fn max_depth_one_lists_direct_children() {
        let dir = tree();
        let out = list(&dir.path().to_string_lossy(), 1, 100).expect("ok");
        assert_eq!(out, "README.md\nsrc/\n");
    }

    #[test]
    fn cuts_at_the_entry_cap_with_a_note() {
        let dir = tree();
        let out = list(&dir.path().to_string_lossy(), 5, 2).expect("ok");
        assert!(
            out.starts_with("README.md\nsrc/\n(listing cut at 2 entries"),
            "{out}"
        );
    }

    #[test]
    fn a_file_points_to_read_file() {
        let dir = tree();
        let file = dir.path().join("README.md");
        let err = list(&file.to_string_lossy(), 3, 100).expect_err("file");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("read_file")),
            "{err:?}"
        );
    }

    #[test]
    fn missing_directory_names_it() {
        let err = list("/no/such/dir", 3, 100).expect_err("missing");
        assert!(matches!(err, ToolError::Failed(ref m) if m.contains("`/no/such/dir`")));
    }
}

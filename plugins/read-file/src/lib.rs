//! `read_file`: a text file as numbered lines, a window at a time.
//!
//! Streams the file so a huge file costs memory only for the window shown.
//! Refuses binary files rather than feeding the model garbage.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use serde::Deserialize;
use serde_json::json;
use toolhost_plugin_support::{Tool, ToolError, ToolResult, clip_line, io_error, looks_binary};

/// Lines shown when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut (minified files would flood the model otherwise).
const MAX_LINE_CHARS: usize = 2000;

#[derive(Deserialize)]
struct Input {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

pub struct ReadFile;

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a text file from the workspace. Returns numbered lines \
        (`line-number<TAB>text`). Reads up to 2000 lines from `offset` (1-based, default 1); \
        pass `offset` and `limit` to page through long files. Refuses binary files.";
    const READ_ONLY: bool = true;

    fn input_schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File path relative to the workspace root.",
                    "minLength": 1,
                    "x-toolhost-path": "read"
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line to show, 1-based. Default 1."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Most lines to show. Default 2000."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn call(input: &str) -> ToolResult {
        let input: Input = toolhost_plugin_support::parse_input(input)?;
        read(
            &input.path,
            input.offset.unwrap_or(1),
            input.limit.unwrap_or(DEFAULT_LIMIT),
        )
    }
}

fn read(path: &str, offset: usize, limit: usize) -> ToolResult {
    let offset = offset.max(1);
    let mut file = File::open(path).map_err(|e| io_error("read", path, &e))?;
    let meta = file.metadata().map_err(|e| io_error("read", path, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "cannot read `{path}`: it is a directory; use list_files to see its contents"
        )));
    }

    let mut head = Vec::with_capacity(8192);
    (&mut file)
        .take(8192)
        .read_to_end(&mut head)
        .map_err(|e| io_error("read", path, &e))?;
    if looks_binary(&head) {
        return Err(ToolError::Failed(format!(
            "`{path}` is a binary file ({} bytes); read_file only shows text files",
            meta.len()
        )));
    }

    let reader = BufReader::new(head.as_slice().chain(file));
    let mut out = String::new();
    let mut total = 0usize;
    let mut shown = 0usize;
    let last_wanted = offset.saturating_add(limit) - 1;
    for line in reader.split(b'\n') {
        let line = line.map_err(|e| io_error("read", path, &e))?;
        total += 1;
        if total < offset || total > last_wanted {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let _ = writeln!(out, "{total:>6}\t{}", clip_line(text, MAX_LINE_CHARS));
        shown += 1;
    }

    if total == 0 {
        return Ok(format!("(`{path}` is empty)"));
    }
    if shown == 0 {
        return Err(ToolError::InvalidInput(format!(
            "offset {offset} is past the end of `{path}`, which has {total} lines"
        )));
    }
    let last_shown = offset + shown - 1;
    if offset > 1 || last_shown < total {
        out.push_str(&format!("(showing lines {offset}-{last_shown} of {total}"));
        if last_shown < total {
            out.push_str(&format!(
                "; call read_file with offset={} to read more",
                last_shown + 1
            ));
        }
        out.push_str(")\n");
    }
    Ok(out)
}

toolhost_plugin_support::export_tool!(ReadFile);

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn file_with(content: &[u8]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.txt");
        fs::write(&path, content).expect("write");
        (dir, path.to_string_lossy().into_owned())
    }

    #[test]
    fn numbers_every_line() {
        let (_dir, path) = file_with(b"one\ntwo\r\nthree");
        let out = read(&path, 1, 10).expect("ok");
        assert_eq!(out, "     1\tone\n     2\ttwo\n     3\tthree\n");
    }

    #[test]
    fn pages_with_offset_and_limit_and_says_where_to_continue() {
        let (_dir, path) = file_with(b"a\nb\nc\nd\ne\n");
        let out = read(&path, 2, 2).expect("ok");
        assert_eq!(
            out,
            "     2\tb\n     3\tc\n(showing lines 2-3 of 5; call read_file with offset=4 to read more)\n"
        );
    }

    #[test]
    fn offset_past_the_end_is_invalid_input() {
        let (_dir, path) = file_with(b"a\nb\n");
        let err = read(&path, 9, 10).expect_err("past end");
        assert!(
            matches!(err, ToolError::InvalidInput(ref m) if m.contains("2 lines")),
            "{err:?}"
        );
    }

    #[test]
    fn refuses_binary_files() {
        let (_dir, path) = file_with(b"\x7fELF\0\0\x01");
        let err = read(&path, 1, 10).expect_err("binary");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("binary file")),
            "{err:?}"
        );
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = read("/definitely/not/here.txt", 1, 10).expect_err("missing");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("`/definitely/not/here.txt`"))
        );
    }

    #[test]
    fn directory_points_to_list_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = read(&dir.path().to_string_lossy(), 1, 10).expect_err("dir");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("list_files")),
            "{err:?}"
        );
    }

    #[test]
    fn empty_file_says_so() {
        let (_dir, path) = file_with(b"");
        assert!(read(&path, 1, 10).expect("ok").contains("is empty"));
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "x".repeat(MAX_LINE_CHARS + 10);
        let (_dir, path) = file_with(long.as_bytes());
        assert!(read(&path, 1, 1).expect("ok").contains("line cut at 2000"));
    }
}

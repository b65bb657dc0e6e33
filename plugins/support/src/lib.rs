//! Helpers shared by toolhost's standard plugins.
//!
//! Plain Rust with no bindings: each plugin crate generates its own
//! wit-bindgen glue and calls in here for the parts every tool needs (input
//! parsing, error texts the model can act on, binary detection). Nothing here
//! may assume more access than the plugin's grants.

use std::io;
use std::path::Path;

use serde::de::DeserializeOwned;

/// Why a call failed, mirroring the WIT `call-error` variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// Valid JSON, unacceptable values.
    InvalidInput(String),
    /// Ran, could not do it.
    Failed(String),
}

/// Result of a tool call: the text the model sees, or why it failed.
pub type ToolResult = Result<String, ToolError>;

/// One tool of a standard plugin. `export_tool!` turns it into a component.
pub trait Tool {
    /// The name the model calls it by.
    const NAME: &'static str;
    /// Shown to the model.
    const DESCRIPTION: &'static str;
    /// True when the tool never modifies anything.
    const READ_ONLY: bool;
    /// JSON Schema of the input object.
    fn input_schema() -> serde_json::Value;
    /// Runs the tool on the (schema-valid) JSON input.
    fn call(input: &str) -> ToolResult;
}

/// Generates the wit-bindgen glue that exports one [`Tool`] as a plugin
/// component. The calling crate must depend on `wit-bindgen` and live two
/// levels below the repository root (where `wit/` is).
#[macro_export]
macro_rules! export_tool {
    ($tool:ty) => {
        wit_bindgen::generate!({ world: "plugin", path: "../../wit" });

        struct Component;

        impl Guest for Component {
            fn list_tools() -> Vec<ToolSpec> {
                vec![ToolSpec {
                    name: <$tool as $crate::Tool>::NAME.to_string(),
                    description: <$tool as $crate::Tool>::DESCRIPTION.to_string(),
                    input_schema: <$tool as $crate::Tool>::input_schema().to_string(),
                    read_only: <$tool as $crate::Tool>::READ_ONLY,
                }]
            }

            fn call_tool(name: String, input: String) -> Result<String, CallError> {
                if name != <$tool as $crate::Tool>::NAME {
                    return Err(CallError::Failed(format!("this plugin has no tool `{name}`")));
                }
                <$tool as $crate::Tool>::call(&input).map_err(|e| match e {
                    $crate::ToolError::InvalidInput(m) => CallError::InvalidInput(m),
                    $crate::ToolError::Failed(m) => CallError::Failed(m),
                })
            }
        }

        export!(Component);
    };
}

/// Parses the call's input. The host already validated it against the
/// schema, so a failure here means the schema and the struct disagree.
pub fn parse_input<T: DeserializeOwned>(input: &str) -> Result<T, ToolError> {
    serde_json::from_str(input).map_err(|e| ToolError::InvalidInput(format!("bad input: {e}")))
}

/// Turns an I/O error on `path` into a sentence the model can act on.
///
/// Inside the sandbox a path outside the tool's grants fails with
/// "not permitted" (escapes through `..` or symlinks) or "not found" (no
/// granted directory contains it); both say so instead of a bare errno.
pub fn io_error(action: &str, path: &str, err: &io::Error) -> ToolError {
    let text = match err.kind() {
        io::ErrorKind::NotFound => format!(
            "cannot {action} `{path}`: it does not exist (or lies outside the directories this tool was granted); \
             check the path with list_files"
        ),
        io::ErrorKind::PermissionDenied => format!(
            "cannot {action} `{path}`: access denied; the path is outside the directories this tool was granted, \
             or the directory is read-only for this tool"
        ),
        io::ErrorKind::IsADirectory => {
            format!(
                "cannot {action} `{path}`: it is a directory; use list_files to see its contents"
            )
        }
        io::ErrorKind::NotADirectory => {
            format!("cannot {action} `{path}`: a parent of it is a file, not a directory")
        }
        _ => format!("cannot {action} `{path}`: {err}"),
    };
    ToolError::Failed(text)
}

/// True when `bytes` (the start of a file) look binary: a NUL byte, as git
/// and ripgrep decide.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// Formats a path for messages: `.` stays `.`, others as given.
pub fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Orders the entries of one directory by name, as bytes: the order of
/// `ignore`'s `sort_by_file_name(|a, b| a.cmp(b))`, for its
/// `sort_by_file_path`. That one takes each name out of its path at every
/// comparison with `Path::file_name` (which parses the path from its end);
/// in a tree of small files that was a tenth of a search's instructions.
/// Siblings differ only after their parent's last `/`.
/// (Inline, so it is compiled with the walk that calls it: search_text
/// builds its hot crates at opt-level 3.)
#[inline]
pub fn by_name(a: &Path, b: &Path) -> std::cmp::Ordering {
    #[inline]
    fn name(path: &Path) -> &[u8] {
        let bytes = path.as_os_str().as_encoded_bytes();
        memchr::memrchr(b'/', bytes).map_or(bytes, |slash| &bytes[slash + 1..])
    }
    name(a).cmp(name(b))
}

/// Cuts `line` to at most `max` characters, marking the cut.
pub fn clip_line(line: &str, max: usize) -> String {
    // No more bytes than `max` means no more characters: skip the count.
    if line.len() <= max {
        return line.to_string();
    }
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{} [... line cut at {max} characters]", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_compare_by_the_bytes_of_their_names() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let order = |a: &str, b: &str| by_name(Path::new(a), Path::new(b));
        // A name before its extensions, `-` < `.` < digits < capitals < small.
        assert_eq!(order("x/a", "x/a.b"), Less);
        assert_eq!(order("x/a.b", "x/a"), Greater);
        assert_eq!(order("x/a-b", "x/a.b"), Less);
        assert_eq!(order("x/B", "x/a"), Less);
        assert_eq!(order("x/a0", "x/ab"), Less);
        assert_eq!(order("a", "./a"), Equal);
        assert_eq!(order("./deep/er/z", "./deep/er/\u{e9}"), Less);
    }

    #[test]
    fn not_found_names_the_path_and_the_fix() {
        let err = io::Error::from(io::ErrorKind::NotFound);
        let ToolError::Failed(text) = io_error("read", "src/x.rs", &err) else {
            panic!("expected failed");
        };
        assert!(text.contains("`src/x.rs`"), "{text}");
        assert!(text.contains("list_files"), "{text}");
    }

    #[test]
    fn permission_denied_reads_as_access_denied() {
        let err = io::Error::from(io::ErrorKind::PermissionDenied);
        let ToolError::Failed(text) = io_error("write", "../x", &err) else {
            panic!("expected failed");
        };
        assert!(text.contains("access denied"), "{text}");
    }

    #[test]
    fn binary_detection_uses_nul_bytes() {
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary("héllo\nworld".as_bytes()));
    }

    #[test]
    fn clip_line_respects_char_boundaries() {
        assert_eq!(clip_line("ééé", 2), "éé [... line cut at 2 characters]");
        assert_eq!(clip_line("abc", 3), "abc");
    }
}

//! `search_text`: regex search over the workspace, ripgrep-style.
//!
//! Prints `path:line:text` for each matching line, skipping hidden,
//! `.gitignore`d and binary files, and stops at `max_results` with a note.

mod file;
mod matcher;
mod searcher;

use std::fmt::Write as _;
use std::path::Path;

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use serde::Deserialize;
use serde_json::json;
use toolhost_plugin_support::{Tool, ToolError, ToolResult, clip_line, io_error};

use file::Opener;
use matcher::Matcher;
use searcher::{Flow, Searched, Searcher};

const DEFAULT_MAX_RESULTS: usize = 100;
const MAX_LINE_CHARS: usize = 500;

#[derive(Deserialize)]
struct Input {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    max_results: Option<usize>,
}

pub struct SearchText;

impl Tool for SearchText {
    const NAME: &'static str = "search_text";
    const DESCRIPTION: &'static str = "Search file contents with a regular expression (Rust regex \
        syntax). Prints `path:line:text` for each matching line. Searches `path` (a directory or \
        file, default `.`), optionally only files matching `glob` (like `*.rs` or `src/**/*.ts`). \
        Skips hidden, .gitignored and binary files. Returns at most `max_results` matches \
        (default 100).";
    const READ_ONLY: bool = true;

    fn input_schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Regular expression, e.g. `fn\\s+main` or `(?i)todo`."
                },
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Directory or file to search, relative to the workspace root. Default `.`.",
                    "default": ".",
                    "x-toolhost-path": "read"
                },
                "glob": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Only search files whose path matches this glob, e.g. `*.rs`."
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 10000,
                    "description": "Most matching lines to return. Default 100."
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn call(input: &str) -> ToolResult {
        let input: Input = toolhost_plugin_support::parse_input(input)?;
        search(
            &input.pattern,
            input.path.as_deref().unwrap_or("."),
            input.glob.as_deref(),
            input.max_results.unwrap_or(DEFAULT_MAX_RESULTS),
        )
    }
}

fn search(pattern: &str, root: &str, glob: Option<&str>, max_results: usize) -> ToolResult {
    let matcher = Matcher::new(pattern)
        .map_err(|e| ToolError::InvalidInput(format!("`pattern` is not a valid regex: {e}")))?;
    std::fs::metadata(root).map_err(|e| io_error("search", root, &e))?;

    let mut walk = WalkBuilder::new(root);
    walk.require_git(false)
        .sort_by_file_path(toolhost_plugin_support::by_name);
    if let Some(glob) = glob {
        let mut overrides = OverrideBuilder::new(root);
        overrides
            .add(glob)
            .map_err(|e| ToolError::InvalidInput(format!("`glob` is not a valid glob: {e}")))?;
        let overrides = overrides
            .build()
            .map_err(|e| ToolError::InvalidInput(format!("`glob` is not a valid glob: {e}")))?;
        walk.overrides(overrides);
    }

    let mut out = String::new();
    let mut found = 0usize;
    let mut skipped = Vec::new();
    let mut searcher = Searcher::new();
    let opener = Opener::new();
    for entry in walk.build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                skipped.push(err.to_string());
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let mut file = match opener.open(entry.path()) {
            Ok(file) => file,
            Err(err) => {
                skipped.push(format!("{}: {err}", shown_path(entry.path())));
                continue;
            }
        };
        let mut shown = None;
        let searched = searcher.search(&mut file, &matcher, |number, text| {
            if found == max_results {
                return Flow::Stop;
            }
            found += 1;
            let shown = shown.get_or_insert_with(|| shown_path(entry.path()));
            let _ = writeln!(out, "{shown}:{number}:{}", clip_line(text, MAX_LINE_CHARS));
            Flow::Continue
        });
        if searched == Searched::Stopped {
            let _ = writeln!(
                out,
                "(stopped after {max_results} matches; narrow `pattern`, `path` or `glob`, or raise max_results)"
            );
            return Ok(out);
        }
    }

    if found == 0 {
        out = format!("no matches for `{pattern}` in `{root}`\n");
    }
    for reason in skipped.iter().take(5) {
        let _ = writeln!(out, "(skipped: {reason})");
    }
    Ok(out)
}

/// Paths as the model wrote them, without the walker's `./` prefix.
fn shown_path(path: &Path) -> String {
    let path = path.strip_prefix(".").unwrap_or(path);
    path.to_string_lossy().into_owned()
}

toolhost_plugin_support::export_tool!(SearchText);

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        fs::create_dir_all(root.join("src")).expect("mkdir");
        fs::create_dir_all(root.join("build")).expect("mkdir");
        fs::write(
            root.join("src/main.rs"),
            "fn main() {\n    helper();\n}\nfn helper() {}\n",
        )
        .expect("write");
        fs::write(root.join("src/notes.md"), "call helper() here\n").expect("write");
        fs::write(root.join("src/blob.bin"), b"helper\0\x01").expect("write");
        fs::write(root.join(".gitignore"), "build/\n").expect("write");
        fs::write(root.join("build/out.rs"), "helper").expect("write");
        dir
    }

    fn rel(dir: &tempfile::TempDir, out: &str) -> String {
        out.replace(&format!("{}/", dir.path().display()), "")
    }

    #[test]
    fn prints_path_line_text_and_skips_binary_and_ignored_files() {
        let dir = tree();
        let out = search("helper", &dir.path().to_string_lossy(), None, 100).expect("ok");
        assert_eq!(
            rel(&dir, &out),
            "src/main.rs:2:    helper();\nsrc/main.rs:4:fn helper() {}\nsrc/notes.md:1:call helper() here\n"
        );
    }

    #[test]
    fn glob_restricts_the_files() {
        let dir = tree();
        let out = search("helper", &dir.path().to_string_lossy(), Some("*.md"), 100).expect("ok");
        assert_eq!(rel(&dir, &out), "src/notes.md:1:call helper() here\n");
    }

    #[test]
    fn stops_at_max_results_with_a_note() {
        let dir = tree();
        let out = search("helper", &dir.path().to_string_lossy(), None, 1).expect("ok");
        assert!(
            rel(&dir, &out).starts_with("src/main.rs:2:    helper();\n(stopped after 1 matches"),
            "{out}"
        );
    }

    #[test]
    fn no_match_is_not_an_error() {
        let dir = tree();
        let out = search("zzz", &dir.path().to_string_lossy(), None, 10).expect("ok");
        assert!(out.starts_with("no matches for `zzz`"), "{out}");
    }

    #[test]
    fn bad_regex_is_invalid_input() {
        let err = search("(", ".", None, 10).expect_err("bad regex");
        assert!(
            matches!(err, ToolError::InvalidInput(ref m) if m.contains("not a valid regex")),
            "{err:?}"
        );
    }

    /// The edges of whole-buffer search, through the tool's output.
    #[test]
    fn line_edges_print_as_before() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        fs::write(root.join("crlf.txt"), "one hit\r\ntwo\r\nlast hit\r\n").expect("write");
        fs::write(root.join("no_newline.txt"), "first\nlast hit").expect("write");
        fs::write(root.join("latin1.txt"), b"caf\xe9 hit\nplain\n").expect("write");
        let long = format!("{}hit{}\n", "x".repeat(600), "y".repeat(100));
        fs::write(root.join("long.txt"), long).expect("write");
        let out = search("hit$", &root.to_string_lossy(), None, 100).expect("ok");
        assert_eq!(
            rel(&dir, &out),
            "crlf.txt:1:one hit\ncrlf.txt:3:last hit\nlatin1.txt:1:caf\u{FFFD} hit\n\
             no_newline.txt:2:last hit\n"
        );
        let out = search("caf. hit", &root.to_string_lossy(), None, 100).expect("ok");
        assert_eq!(rel(&dir, &out), "latin1.txt:1:caf\u{FFFD} hit\n");
        let out = search("hity", &root.to_string_lossy(), None, 100).expect("ok");
        assert_eq!(
            rel(&dir, &out),
            format!(
                "long.txt:1:{} [... line cut at 500 characters]\n",
                "x".repeat(500)
            )
        );
    }

    #[test]
    fn a_nul_after_the_head_is_still_text() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut content = "a\n".repeat(5000).into_bytes();
        content.extend_from_slice(b"\0 hit\n");
        fs::write(dir.path().join("late_nul.txt"), content).expect("write");
        let out = search("hit", &dir.path().to_string_lossy(), None, 100).expect("ok");
        assert_eq!(rel(&dir, &out), "late_nul.txt:5001:\0 hit\n");
    }

    #[test]
    fn searches_a_single_file() {
        let dir = tree();
        let file = dir.path().join("src/notes.md");
        let out = search("call", &file.to_string_lossy(), None, 10).expect("ok");
        assert!(out.ends_with("notes.md:1:call helper() here\n"), "{out}");
    }

    #[test]
    fn siblings_come_in_the_order_of_their_names_as_bytes() {
        // Names whose order differs from that of their whole paths or of
        // their text: `a-b` < `a.b` < `a/` < `ab` as bytes, capitals first.
        let names = ["ab", "a.b", "B", "a", "a-b", "\u{e9}", "a0"];
        let dir = tempfile::tempdir().expect("temp dir");
        for name in names {
            fs::create_dir(dir.path().join(name)).expect("mkdir");
            fs::write(dir.path().join(name).join("f.txt"), "hit\n").expect("write");
        }
        let out = search("hit", &dir.path().to_string_lossy(), None, 100).expect("ok");
        let mut sorted = names.map(str::as_bytes);
        sorted.sort();
        let expected: String = sorted
            .iter()
            .map(|name| format!("{}/f.txt:1:hit\n", String::from_utf8_lossy(name)))
            .collect();
        assert_eq!(rel(&dir, &out), expected);
    }
}

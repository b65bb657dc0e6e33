//! The example plugins in Python and JavaScript (examples/plugins/), as
//! their toolchains build them (examples/plugins/build.sh), dropped into a
//! workspace's plugins directory and called through the real binary: a good
//! call, the tool's own error, an exception, and a path outside the grants.
//!
//! They need `TOOLHOST_EXAMPLE_PLUGINS`: the directory build.sh wrote,
//! which `.ci/run` sets. They are ignored unless asked for
//! (`--include-ignored`), and then fail without it (common/toolchains.rs).

use pretty_assertions::assert_eq;

use super::common::toolchains::EXAMPLE_PLUGINS;
use super::common::{Workspace, stderr_of_failure, stdout_of};

/// A workspace with the built example `file` installed as a drop-in plugin.
fn workspace_with(file: &str) -> Workspace {
    let plugin = EXAMPLE_PLUGINS.path().join(file);
    let ws = Workspace::new();
    ws.install_plugin(plugin.to_str().expect("utf-8 path"), file);
    ws
}

/// What `toolhost call` prints for an `isError` result.
fn error_of(ws: &Workspace, tool: &str, input: &str) -> String {
    stderr_of_failure(&mut ws.call(tool, input, &[]), 1)
}

#[test]
#[ignore = "needs TOOLHOST_EXAMPLE_PLUGINS (the examples built by examples/plugins/build.sh); .ci/run sets it"]
fn the_python_example_summarizes_a_csv_and_its_errors_reach_the_model() {
    let ws = workspace_with("csv-summary.wasm");
    ws.write(
        "data/sales.csv",
        "region,units,note\nnorth,12,\nsouth,30,late\nnorth,3.5,\n",
    );
    assert_eq!(
        stdout_of(&mut ws.call("csv_summary", r#"{"path":"data/sales.csv"}"#, &[])),
        "data/sales.csv: 3 rows, 3 columns\n\
         - region: text, 2 distinct, most common 'north' (2x), 0 empty\n\
         - units: numeric, min 3.5, max 30, mean 15.17, 0 empty\n\
         - note: text, 1 distinct, most common 'late' (1x), 2 empty\n"
    );

    ws.write("empty.csv", "");
    assert_eq!(
        error_of(&ws, "csv_summary", r#"{"path":"empty.csv"}"#),
        "error: `csv_summary` failed: `empty.csv` is empty\n"
    );

    // The csv module raises on a field over 128 KiB: an exception the tool
    // did not plan for, which reaches the model as `failed` with its text.
    ws.write("huge.csv", format!("a\n{}\n", "x".repeat(200_000)));
    assert_eq!(
        error_of(&ws, "csv_summary", r#"{"path":"huge.csv"}"#),
        "error: `csv_summary` failed: Error: field larger than field limit (131072)\n"
    );

    assert_eq!(
        error_of(&ws, "csv_summary", r#"{"path":"../outside.csv"}"#),
        "error: access denied: `csv_summary` may not read `../outside.csv`: it is outside the \
         directories this tool may read: `.` (read-only). Use a path inside one of them.\n"
    );
}

#[test]
#[ignore = "needs TOOLHOST_EXAMPLE_PLUGINS (the examples built by examples/plugins/build.sh); .ci/run sets it"]
fn the_javascript_example_outlines_markdown_and_its_errors_reach_the_model() {
    let ws = workspace_with("markdown-outline.wasm");
    ws.write(
        "docs/guide.md",
        "# Guide\n\nIntro.\n\n## Install\n\n```sh\n# not a heading\n```\n\n### From source ###\n## Use\n",
    );
    assert_eq!(
        stdout_of(&mut ws.call("markdown_outline", r#"{"path":"docs/guide.md"}"#, &[])),
        "Guide (line 1)\n  Install (line 5)\n    From source (line 11)\n  Use (line 12)\n"
    );
    assert_eq!(
        stdout_of(&mut ws.call(
            "markdown_outline",
            r#"{"path":"docs/guide.md","max_level":1}"#,
            &[]
        )),
        "Guide (line 1)\n"
    );

    ws.write("plain.md", "no headings here\n");
    assert_eq!(
        error_of(&ws, "markdown_outline", r#"{"path":"plain.md"}"#),
        "error: `markdown_outline` failed: `plain.md` has no headings\n"
    );

    // TextDecoder throws a TypeError on bytes that are not UTF-8: a plain
    // exception, which the plugin's callTool turns into `failed`.
    ws.write("latin1.md", b"# Caf\xe9\n");
    assert_eq!(
        error_of(&ws, "markdown_outline", r#"{"path":"latin1.md"}"#),
        "error: `markdown_outline` failed: TextDecoder.decode: Decoding failed.\n"
    );

    assert_eq!(
        error_of(&ws, "markdown_outline", r#"{"path":"../outside.md"}"#),
        "error: access denied: `markdown_outline` may not read `../outside.md`: it is outside \
         the directories this tool may read: `.` (read-only). Use a path inside one of them.\n"
    );
}

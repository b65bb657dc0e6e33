//! Directory grants through the real binary: defaults, restriction, denial
//! messages that name the allowed directories.

use super::common::{Workspace, assert_text, stderr_of_failure, stdout_of};

#[test]
fn by_default_tools_read_the_workspace_and_cannot_write() {
    let ws = Workspace::new();
    ws.write("a.txt", "keep\n");
    let err = stderr_of_failure(
        &mut ws.call("write_file", r#"{"path":"a.txt","content":"gone"}"#, &[]),
        1,
    );
    assert_text(
        &err,
        "error: access denied: `write_file` may not write `a.txt`: it has no write access to any directory. \
         Only the user can grant it (in toolhost.toml or with --allow-write write_file=DIR).\n",
    );
    assert_eq!(ws.read("a.txt"), "keep\n");
}

#[test]
fn paths_outside_the_grants_are_denied_naming_the_allowed_directories() {
    let ws = Workspace::new();
    ws.write("src/lib.rs", "");
    ws.mkdir("out");
    let flags = [
        "--allow-read",
        "read_file=src",
        "--allow-write",
        "write_file=out",
    ];
    for path in ["../etc/passwd", "/etc/passwd", "README.md", "src/../../x"] {
        let input = serde_json::json!({ "path": path }).to_string();
        let err = stderr_of_failure(&mut ws.call("read_file", &input, &flags), 1);
        assert_text(
            &err,
            &format!(
                "error: access denied: `read_file` may not read `{path}`: it is outside the directories this tool \
                 may read: `src` (read-only). Use a path inside one of them.\n"
            ),
        );
    }
    let err = stderr_of_failure(
        &mut ws.call("write_file", r#"{"path":"src/x.rs","content":""}"#, &flags),
        1,
    );
    assert_text(
        &err,
        "error: access denied: `write_file` may not write `src/x.rs`: it is outside the \
         directories this tool may write: `out` (read-write). Use a path inside one of them.\n",
    );
    assert!(!ws.path().join("src/x.rs").exists());
}

#[test]
fn a_grant_restricts_listing_and_searching_too() {
    let ws = Workspace::new();
    ws.write("src/lib.rs", "needle\n");
    ws.write("secret/key.txt", "needle\n");
    let flags = ["--allow-read", "src"];
    let out = stdout_of(&mut ws.call(
        "search_text",
        r#"{"pattern":"needle","path":"src"}"#,
        &flags,
    ));
    assert_eq!(out, "src/lib.rs:1:needle\n");
    let err = stderr_of_failure(
        &mut ws.call("search_text", r#"{"pattern":"needle"}"#, &flags),
        1,
    );
    assert_text(
        &err,
        "error: access denied: `search_text` may not read `.`: it is outside the directories \
         this tool may read: `src` (read-only). Use a path inside one of them.\n",
    );
    let err = stderr_of_failure(
        &mut ws.call("list_files", r#"{"path":"secret"}"#, &flags),
        1,
    );
    assert_text(
        &err,
        "error: access denied: `list_files` may not read `secret`: it is outside the directories \
         this tool may read: `src` (read-only). Use a path inside one of them.\n",
    );
}

#[test]
fn tools_shows_each_tools_grants_and_limits() {
    let ws = Workspace::new();
    ws.mkdir("out");
    ws.write(
        "toolhost.toml",
        "[limits]\ntimeout_ms = 2000\n[tools.write_file]\nwrite = [\"out\"]\n",
    );
    let out = stdout_of(ws.toolhost().args(["tools", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    let tools = doc["tools"].as_array().expect("tools array");
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "edit_file",
            "fetch",
            "list_files",
            "read_file",
            "search_text",
            "write_file"
        ]
    );
    let write = &tools[6];
    assert_eq!(write["read_only"], false);
    assert_eq!(write["plugin"], "builtin:write-file");
    assert_eq!(write["grants"][1]["path"], "out");
    assert_eq!(write["grants"][1]["access"], "read-write");
    assert_eq!(write["limits"]["timeout_ms"], 2000);
    assert_eq!(write["input_schema"]["required"][0], "path");
    assert_eq!(tools[4]["grants"].as_array().map(Vec::len), Some(1));

    let text = stdout_of(ws.toolhost().arg("tools"));
    assert!(
        text.contains("write_file  (writes, builtin:write-file)\n"),
        "{text}"
    );
    assert!(
        text.contains("    grants: . (read-only), out (read-write)\n"),
        "{text}"
    );
    // A tool that writes with only read grants says how to let it write.
    assert!(
        text.contains(
            "edit_file  (writes, builtin:edit-file)\n    Replace the exact text `old_string` \
             with `new_string` in a file.\n    grants: . (read-only); it may write nowhere: grant \
             a directory with `--allow-write edit_file=DIR`\n"
        ),
        "{text}"
    );
}

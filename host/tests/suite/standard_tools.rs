//! The standard tools through the real binary: behaviour and bad inputs.

use super::common::{Workspace, stderr_of_failure, stdout_of};

#[test]
fn read_file_numbers_lines_and_pages() {
    let ws = Workspace::new();
    ws.write("notes.txt", "alpha\nbeta\ngamma\ndelta\n");
    let out = stdout_of(&mut ws.call("read_file", r#"{"path":"notes.txt"}"#, &[]));
    assert_eq!(
        out,
        "     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tdelta\n"
    );

    let out = stdout_of(&mut ws.call(
        "read_file",
        r#"{"path":"notes.txt","offset":2,"limit":2}"#,
        &[],
    ));
    assert_eq!(
        out,
        "     2\tbeta\n     3\tgamma\n(showing lines 2-3 of 4; call read_file with offset=4 to read more)\n"
    );
}

#[test]
fn read_file_accepts_an_absolute_path_inside_the_workspace() {
    let ws = Workspace::new();
    let file = ws.write("src/lib.rs", "pub fn f() {}\n");
    let canonical = file.canonicalize().expect("canonical");
    let input = serde_json::json!({ "path": canonical }).to_string();
    let out = stdout_of(&mut ws.call("read_file", &input, &[]));
    assert_eq!(out, "     1\tpub fn f() {}\n");
}

#[test]
fn read_file_refuses_binary_missing_and_directories() {
    let ws = Workspace::new();
    ws.write("app.bin", b"\x7fELF\x00\x00\x01\x02");
    ws.mkdir("dir");
    let err = stderr_of_failure(&mut ws.call("read_file", r#"{"path":"app.bin"}"#, &[]), 1);
    assert_eq!(
        err,
        "error: `read_file` failed: `app.bin` is a binary file (8 bytes); read_file only shows text files\n"
    );
    let err = stderr_of_failure(&mut ws.call("read_file", r#"{"path":"nope.txt"}"#, &[]), 1);
    assert!(
        err.contains("cannot read `nope.txt`: it does not exist"),
        "{err}"
    );
    let err = stderr_of_failure(&mut ws.call("read_file", r#"{"path":"dir"}"#, &[]), 1);
    assert!(err.contains("it is a directory; use list_files"), "{err}");
}

#[test]
fn bad_arguments_are_refused_before_the_tool_runs() {
    let ws = Workspace::new();
    ws.write("a.txt", "a\n");
    let err = stderr_of_failure(
        &mut ws.call("read_file", r#"{"path":"a.txt","offset":0}"#, &[]),
        1,
    );
    assert!(
        err.starts_with(
            "error: the arguments for `read_file` do not match its input schema:\n- at `/offset`:"
        ),
        "{err}"
    );
    let err = stderr_of_failure(
        &mut ws.call("read_file", r#"{"path":"a.txt","colour":"red"}"#, &[]),
        1,
    );
    assert!(
        err.contains("do not match its input schema") && err.contains("colour"),
        "{err}"
    );
    let err = stderr_of_failure(&mut ws.call("read_file", r#"{"offset":1}"#, &[]), 1);
    assert!(err.contains("\"path\" is a required property"), "{err}");
    let err = stderr_of_failure(&mut ws.call("read_file", r#"{"path": "a.txt""#, &[]), 1);
    assert!(
        err.starts_with("error: the arguments for `read_file` are not valid JSON"),
        "{err}"
    );
    let err = stderr_of_failure(&mut ws.call("read_fil", "{}", &[]), 1);
    assert!(
        err.starts_with(
            "error: there is no tool named `read_fil`. Available tools: `bash`, `edit_file`"
        ),
        "{err}"
    );
    assert!(err.contains("`read_file`"), "{err}");
    let err = stderr_of_failure(
        &mut ws.call("read_file", r#"{"path":"a.txt","offset":9}"#, &[]),
        1,
    );
    assert_eq!(
        err,
        "error: `read_file` rejected its input: offset 9 is past the end of `a.txt`, which has 1 lines\n"
    );
}

#[test]
fn list_files_shows_a_tree_without_ignored_files() {
    let ws = Workspace::new();
    ws.write("src/main.rs", "fn main() {}\n");
    ws.write("src/util/mod.rs", "");
    ws.write("target/debug/app", "");
    ws.write(".gitignore", "target/\n");
    ws.write("README.md", "# demo\n");
    let out = stdout_of(&mut ws.call("list_files", "{}", &[]));
    assert_eq!(out, "README.md\nsrc/\n  main.rs\n  util/\n    mod.rs\n");
    let out = stdout_of(&mut ws.call("list_files", r#"{"path":"src","max_depth":1}"#, &[]));
    assert_eq!(out, "main.rs\nutil/\n");
}

#[test]
fn search_text_prints_path_line_text() {
    let ws = Workspace::new();
    ws.write(
        "src/main.rs",
        "fn main() {\n    greet();\n}\nfn greet() {}\n",
    );
    ws.write("docs/guide.md", "call greet() first\n");
    let out = stdout_of(&mut ws.call("search_text", r#"{"pattern":"greet\\(\\)"}"#, &[]));
    assert_eq!(
        out,
        "docs/guide.md:1:call greet() first\nsrc/main.rs:2:    greet();\nsrc/main.rs:4:fn greet() {}\n"
    );
    let out = stdout_of(&mut ws.call(
        "search_text",
        r#"{"pattern":"greet","glob":"*.rs","max_results":1}"#,
        &[],
    ));
    assert!(
        out.starts_with("src/main.rs:2:    greet();\n(stopped after 1 matches"),
        "{out}"
    );
    let err = stderr_of_failure(
        &mut ws.call("search_text", r#"{"pattern":"(unclosed"}"#, &[]),
        1,
    );
    assert!(err.contains("`pattern` is not a valid regex"), "{err}");
}

/// Files read in more than one host read (64 KiB each), and files of exactly
/// one read's size, are searched to their last line: the plugin takes a
/// short read as the end, so a full one must not be.
#[test]
fn search_text_reads_files_past_one_host_read() {
    let ws = Workspace::new();
    let line = format!("{}\n", "f".repeat(63));
    // 64 KiB exactly (1024 lines), then the match on line 1025.
    ws.write(
        "exact.txt",
        format!("{}needle at the end\n", line.repeat(1024)),
    );
    // 200 KiB: the match deep in the fourth read.
    ws.write(
        "long.txt",
        format!("{}needle deep\n{}", line.repeat(3000), line.repeat(200)),
    );
    // A file of exactly 64 KiB with the match on its last line.
    let last = format!("{:<63}\n", "needle last");
    ws.write("full.txt", format!("{}{last}", line.repeat(1023)));
    assert_eq!(
        std::fs::metadata(ws.path().join("full.txt"))
            .expect("stat")
            .len(),
        65536
    );
    let out = stdout_of(&mut ws.call("search_text", r#"{"pattern":"needle"}"#, &[]));
    assert_eq!(
        out,
        format!(
            "exact.txt:1025:needle at the end\nfull.txt:1024:{last}long.txt:3001:needle deep\n"
        )
    );
}

#[test]
fn write_file_and_edit_file_work_inside_a_write_grant() {
    let ws = Workspace::new();
    ws.mkdir("out");
    let grant = ["--allow-write", "out"];
    let out = stdout_of(&mut ws.call(
        "write_file",
        r#"{"path":"out/notes/today.md","content":"one\ntwo\n"}"#,
        &grant,
    ));
    assert_eq!(out, "created `out/notes/today.md` (8 bytes)\n");
    assert_eq!(ws.read("out/notes/today.md"), "one\ntwo\n");

    let out = stdout_of(&mut ws.call(
        "edit_file",
        r#"{"path":"out/notes/today.md","old_string":"two","new_string":"2"}"#,
        &grant,
    ));
    assert_eq!(out, "replaced 1 occurrence in `out/notes/today.md`\n");
    assert_eq!(ws.read("out/notes/today.md"), "one\n2\n");
}

#[test]
fn edit_file_refuses_missing_and_ambiguous_text() {
    let ws = Workspace::new();
    ws.write("out/a.txt", "x\nx\n");
    let grant = ["--allow-write", "edit_file=out"];
    let err = stderr_of_failure(
        &mut ws.call(
            "edit_file",
            r#"{"path":"out/a.txt","old_string":"x","new_string":"y"}"#,
            &grant,
        ),
        1,
    );
    assert!(
        err.contains("`old_string` occurs 2 times in `out/a.txt`"),
        "{err}"
    );
    let err = stderr_of_failure(
        &mut ws.call(
            "edit_file",
            r#"{"path":"out/a.txt","old_string":"zzz","new_string":"y"}"#,
            &grant,
        ),
        1,
    );
    assert!(
        err.contains("`old_string` was not found in `out/a.txt`"),
        "{err}"
    );
    assert_eq!(ws.read("out/a.txt"), "x\nx\n");
    let out = stdout_of(&mut ws.call(
        "edit_file",
        r#"{"path":"out/a.txt","old_string":"x","new_string":"y","replace_all":true}"#,
        &grant,
    ));
    assert_eq!(out, "replaced 2 occurrences in `out/a.txt`\n");
}

#[test]
fn call_reads_its_input_from_stdin() {
    let ws = Workspace::new();
    ws.write("a.txt", "from stdin\n");
    let out = stdout_of(
        ws.call("read_file", "-", &[])
            .write_stdin(r#"{"path":"a.txt"}"#),
    );
    assert_eq!(out, "     1\tfrom stdin\n");
}

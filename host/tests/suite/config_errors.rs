//! Startup errors: each names the thing and the fix, with exit code 1 (2 for
//! command-line usage).

use super::common::{Workspace, assert_text, stderr_of_failure};

#[test]
fn a_grant_outside_the_workspace_stops_startup() {
    let ws = Workspace::new();
    let err = stderr_of_failure(ws.toolhost().args(["--allow-read", "../", "tools"]), 1);
    assert_text(
        &err,
        &ws.expand(
            "error: grant `../` (from --allow-read ../) points outside the workspace `{ws}`; grant \
             a directory inside it, or write an absolute path to grant one outside on purpose\n",
        ),
    );
}

#[test]
fn a_missing_grant_stops_startup() {
    let ws = Workspace::new();
    // A read grant, or one a config file writes, of a missing directory.
    let err = stderr_of_failure(
        ws.toolhost()
            .args(["--allow-read", "read_file=docs", "tools"]),
        1,
    );
    assert_text(
        &err,
        &ws.expand(
            "error: grant `docs` (from --allow-read read_file=docs) cannot be used: `{ws}/docs` \
             does not exist; create the directory or fix the path\n",
        ),
    );
    ws.write("toolhost.toml", "[tools.write_file]\nwrite = [\"out\"]\n");
    let err = stderr_of_failure(ws.toolhost().arg("tools"), 1);
    assert_text(
        &err,
        &ws.expand(
            "error: grant `out` (from {ws}/toolhost.toml:2 [tools.write_file] write) cannot be \
             used: `{ws}/out` does not exist; create the directory or fix the path\n",
        ),
    );
    assert!(!ws.path().join("out").exists());
}

/// `--allow-write write_file=out` in a fresh project (every MCP example
/// has it): the user asked for `out`, so it is made, and the tools start.
/// Not outside the workspace, and not a protected path.
#[test]
fn a_write_grant_on_the_command_line_makes_its_directory() {
    let ws = Workspace::new();
    let out = ws
        .toolhost()
        .args(["--allow-write", "write_file=out/notes", "tools"])
        .output()
        .expect("tools");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "warning: created the directory `out/notes` for `--allow-write write_file=out/notes`\n"
    );
    assert!(ws.path().join("out/notes").is_dir());
    // Once there, nothing more is said.
    let out = ws
        .toolhost()
        .args(["--allow-write", "write_file=out/notes", "tools"])
        .output()
        .expect("tools");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");

    // A protected path is not made (naming it is a lift, not a directory).
    let err = stderr_of_failure(
        ws.toolhost()
            .args(["--allow-write", "edit_file=.git/hooks", "tools"]),
        1,
    );
    assert_text(
        &err,
        &ws.expand(
            "error: grant `.git/hooks` (from --allow-write edit_file=.git/hooks) cannot be used: \
             `{ws}/.git/hooks` does not exist; create the directory or fix the path\n",
        ),
    );
    assert!(!ws.path().join(".git/hooks").exists());
}

/// Nor is a directory outside the workspace made; and the fix the error
/// gives must work: creating it would only lead to "points outside the
/// workspace", which is what the user needs to hear first.
#[test]
fn a_missing_write_grant_outside_the_workspace_says_it_is_outside() {
    let ws = Workspace::new();
    let err = stderr_of_failure(
        ws.toolhost()
            .args(["--allow-write", "write_file=../away", "tools"]),
        1,
    );
    assert_text(
        &err,
        &ws.expand(
            "error: grant `../away` (from --allow-write write_file=../away) points outside the \
             workspace `{ws}`; grant a directory inside it, or write an absolute path to grant one \
             outside on purpose\n",
        ),
    );
    assert!(!ws.path().join("../away").exists());
}

#[test]
fn a_bad_config_file_names_the_file_and_key() {
    let ws = Workspace::new();
    ws.write("toolhost.toml", "[tools.write_file]\nwirte = [\"out\"]\n");
    let err = stderr_of_failure(ws.toolhost().arg("tools"), 1);
    assert_text(
        &err,
        &ws.expand(
            "error: invalid config file `{ws}/toolhost.toml`: TOML parse error at line 2, column 1
  |
2 | wirte = [\"out\"]
  | ^^^^^
unknown field `wirte`, expected one of `read`, `write`, `net`, `env`, `exec`, `headers`, `limits`, `paths`, `read_only`

",
        ),
    );
}

/// A misspelt provider is a config error like any other (exit 1, the file
/// and the line), not a usage error.
#[test]
fn a_misspelt_provider_names_the_file_and_the_line() {
    let ws = Workspace::new();
    ws.write(
        "toolhost.toml",
        "[model]\nname = \"gpt-4o\"\nprovider = \"opnai\"\n",
    );
    let err = stderr_of_failure(ws.toolhost().args(["run", "hello"]), 1);
    assert_text(
        &err,
        &ws.expand(
            "error: invalid config file `{ws}/toolhost.toml`: TOML parse error at line 3, column 12
  |
3 | provider = \"opnai\"
  |            ^^^^^^^
unknown variant `opnai`, expected one of `openai`, `anthropic`, `scripted`

",
        ),
    );
}

#[test]
fn a_config_for_an_unknown_tool_warns() {
    let ws = Workspace::new();
    ws.write("toolhost.toml", "[tools.raed_file]\nread = [\".\"]\n");
    let out = ws.toolhost().arg("tools").output().expect("run");
    assert!(out.status.success());
    assert_text(
        &String::from_utf8_lossy(&out.stderr),
        "warning: the configuration names tool `raed_file`, but no loaded plugin offers it; check \
         the spelling\n",
    );
}

/// An OS error is told once, where the message puts it, not again at its
/// end (the error's source is also in anyhow's chain).
#[test]
fn a_missing_workspace_config_or_plugins_dir_is_told_once() {
    let ws = Workspace::new();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--workspace", "no-such-dir", "tools"],
            "error: workspace `no-such-dir` is not a directory: No such file or directory (os \
             error 2); pass an existing directory with --workspace\n",
        ),
        (
            &["--plugins", "no-such-dir", "tools"],
            "error: cannot read the plugins directory `no-such-dir`: No such file or directory \
             (os error 2); create it or pass another --plugins DIR\n",
        ),
        (
            &["--config", "missing.toml", "tools"],
            "error: cannot read config file `missing.toml`: No such file or directory (os error \
             2)\n",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            stderr_of_failure(ws.toolhost().args(args), 1),
            expected,
            "{args:?}"
        );
    }
}

/// The same for the other commands that read a file or directory the user
/// named.
#[test]
fn an_os_error_is_told_once_by_every_command() {
    let ws = Workspace::new();
    // A session "file" that is a directory, and a token "file" too (private,
    // so only the read fails).
    ws.mkdir(".toolhost/sessions/20260101-000000-abcd.jsonl");
    let token = ws.mkdir("token");
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    let cases: [(&[&str], &str); 3] = [
        (
            &["sessions", "show", "20260101"],
            "error: `./.toolhost/sessions/20260101-000000-abcd.jsonl` is not a regular file, so \
             toolhost does not read it (a FIFO would block, a link could lead to any file): remove \
             it\n",
        ),
        (
            &["mcp", "--http", "127.0.0.1:0", "--http-token-file", "token"],
            "error: cannot read the token file `token`: Is a directory (os error 21)\n",
        ),
        (
            &["trust", "no-such-dir"],
            "error: workspace `no-such-dir` does not exist; pass an existing directory: No such \
             file or directory (os error 2)\n",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            stderr_of_failure(ws.toolhost().args(args), 1),
            expected,
            "{args:?}"
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let ws = Workspace::new();
    let err = stderr_of_failure(ws.toolhost().arg("frobnicate"), 2);
    assert_text(
        &err,
        "error: unrecognized subcommand 'frobnicate'\n\nUsage: toolhost [OPTIONS] <COMMAND>\n\n\
         For more information, try '--help'.\n",
    );
}

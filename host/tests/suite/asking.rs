//! Grants asked for in a chat: a call refused for a grant the user could
//! give asks (once, for the session, no), in a real pseudo-terminal with
//! the scripted model; what is recorded, resumed and shown.

use serde_json::json;

use super::common::pty::{Pty, script};
use super::common::web::WebServer;
use super::common::{Workspace, assert_text};

/// The screen's lines from the first that starts with `from`, each
/// trimmed, up to the status line's.
fn lines_from(screen: &str, from: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|line| !line.starts_with(from))
        .map(|line| line.trim_end().to_string())
        .take_while(|line| !line.contains(" turn(s) · "))
        .filter(|line| !line.is_empty())
        .collect()
}

/// Answers the question shown with `key`, after the pause an answer needs
/// (typing under way never answers).
fn answer(chat: &mut Pty, key: &str) {
    std::thread::sleep(std::time::Duration::from_millis(700));
    chat.keys(key);
}

fn write(path: &str, content: &str) -> serde_json::Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

/// A chat in `ws` (with `flags`) whose model writes `notes/a.txt`, then
/// `notes/b.txt`, then says "Done.", asked to take notes: `write_file` may
/// write nowhere, so each write asks.
fn two_writes_asked(ws: &Workspace, flags: &[&str]) -> Pty {
    ws.write("notes/.keep", "");
    let script = script(
        ws,
        json!([
            {"tool_calls": [write("notes/a.txt", "first")]},
            {"tool_calls": [write("notes/b.txt", "second")]},
            {"text": "Done."},
        ]),
    );
    let mut args = vec!["chat"];
    args.extend_from_slice(flags);
    args.extend(["--script", &script]);
    let mut chat = Pty::spawn(ws, &args);
    chat.wait_for("Ctrl+D quits");
    chat.keys("take notes\r");
    chat
}

#[test]
fn a_refused_write_allowed_once_runs_again_and_the_next_asks_again() {
    let ws = Workspace::new();
    let mut chat = two_writes_asked(&ws, &["--no-session"]);
    chat.wait_for(
        "? allow `write_file` to write in `notes`? y: once · s: for this session · n: no",
    );
    answer(&mut chat, "y");
    chat.wait_for("allowed once");
    chat.wait_for("? allow `write_file` to write in `notes`?");
    answer(&mut chat, "n");
    chat.wait_for("Done.");
    let screen = chat.text();
    assert_eq!(
        lines_from(&screen, "> take notes"),
        [
            "> take notes",
            "? `write_file` asks to write in `notes` (--allow-write write_file=notes)",
            "allowed once: `write_file` may write in `notes`",
            "-> write_file notes/a.txt {\"content\":\"first\"} ok 31 B",
            "? `write_file` asks to write in `notes` (--allow-write write_file=notes)",
            "denied: `write_file` may not write in `notes`",
            // Wrapped at the terminal's 100 columns.
            "-> write_file notes/b.txt {\"content\":\"second\"} error: access denied: `write_file` may not \
             write",
            "`notes/b.txt`: it has no write access to any directory. Only the user can grant it (in \
             toolhost.toml",
            "or with --allow-write write_file=DIR).",
            "Done.",
        ],
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes/a.txt"))
            .ok()
            .as_deref(),
        Some("first")
    );
    assert!(!ws.path().join("notes/b.txt").exists());
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

#[test]
fn a_grant_for_the_session_is_recorded_resumed_and_shown_and_a_shipped_one_is_not() {
    let ws = Workspace::new();
    let mut chat = two_writes_asked(&ws, &[]);
    chat.wait_for("? allow `write_file` to write in `notes`?");
    answer(&mut chat, "s");
    chat.wait_for("Done.");
    // The second write ran with the session's grant: nobody was asked.
    let screen = chat.text();
    assert_eq!(screen.matches("asks to write").count(), 1, "{screen}");
    assert!(ws.path().join("notes/b.txt").exists(), "{screen}");
    chat.keys("/grants\r");
    chat.wait_for(
        "`write_file` may write in `notes` (from the start: --allow-write write_file=notes)",
    );
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));

    // `sessions show` lists it.
    let show = ws
        .toolhost()
        .args(["sessions", "show", "last"])
        .output()
        .expect("show");
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        text.contains("  allowed for the session: `write_file` may write in `notes` (--allow-write write_file=notes)\n"),
        "{text}"
    );

    // `--resume` applies it: a write there runs without a flag.
    let resumed = script_named(
        &ws,
        "resumed.json",
        json!([
            {"tool_calls": [write("notes/c.txt", "third")]},
            {"text": "Resumed."},
        ]),
    );
    let out = ws
        .toolhost()
        .args(["run", "--resume", "last", "--script", &resumed, "more"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes/c.txt"))
            .ok()
            .as_deref(),
        Some("third"),
        "{stdout}"
    );
    // ... and says so.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "a grant of the resumed session applies again: `write_file` may write in `notes` \
             (--allow-write write_file=notes)"
        ),
        "{stderr}"
    );

    // `chat --resume` applies it too, says so, and asks nothing.
    let chatted = script_named(
        &ws,
        "chatted.json",
        json!([
            {"tool_calls": [write("notes/chat.txt", "in a chat")]},
            {"text": "Chatted."},
        ]),
    );
    let mut chat = Pty::spawn(&ws, &["chat", "--resume", "last", "--script", &chatted]);
    chat.wait_for("a grant of the resumed session applies again: `write_file` may write in");
    chat.wait_for("Ctrl+D quits");
    chat.keys("more notes\r");
    chat.wait_for("Chatted.");
    let screen = chat.text();
    assert!(
        !screen.contains("asks to") && !screen.contains("? allow"),
        "{screen}"
    );
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
    assert_eq!(ws.read("notes/chat.txt"), "in a chat");

    // The same sealed file copied into another workspace of the same user
    // grants nothing there.
    let sessions = ws.path().join(".toolhost/sessions");
    let other = Workspace::new();
    other.write("notes/.keep", "");
    let copied = other.path().join(".toolhost/sessions");
    std::fs::create_dir_all(&copied).expect("mkdir");
    for entry in std::fs::read_dir(&sessions).expect("sessions") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, copied.join(path.file_name().expect("name"))).expect("copy");
    }
    let there = script_named(
        &other,
        "there.json",
        json!([
            {"tool_calls": [write("notes/x.txt", "moved")]},
            {"text": "Refused."},
        ]),
    );
    let out = other
        .toolhost_process()
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        .args(["run", "--resume", "last", "--script", &there, "more"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!other.path().join("notes/x.txt").exists(), "{stderr}");
    assert!(
        stderr.contains("records a grant your key did not seal"),
        "{stderr}"
    );

    // The same record in a file the user's key did not seal (a session a
    // repository ships, or this one with its seal taken off) is not applied.
    let file = std::fs::read_dir(&sessions)
        .expect("sessions")
        .map(|entry| entry.expect("entry").path())
        .next()
        .expect("a session file");
    let text = std::fs::read_to_string(&file).expect("read");
    let forged: String = text
        .lines()
        .map(|line| {
            let mut record: serde_json::Value = serde_json::from_str(line).expect("record");
            if record["type"] == "grant" {
                record["seal"] = json!("00".repeat(32));
            }
            format!("{record}\n")
        })
        .collect();
    std::fs::write(&file, forged).expect("write");
    let denied = script_named(
        &ws,
        "denied.json",
        json!([
            {"tool_calls": [write("notes/d.txt", "fourth")]},
            {"text": "Refused."},
        ]),
    );
    let out = ws
        .toolhost()
        .args(["run", "--resume", "last", "--script", &denied, "more"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!ws.path().join("notes/d.txt").exists(), "{stderr}");
    let id = file
        .file_stem()
        .expect("stem")
        .to_string_lossy()
        .into_owned();
    assert!(
        stderr.contains(&format!(
            "session {id} records a grant your key did not seal, so it is not applied (a session \
             file can come with a repository): `write_file` may write in `notes` (--allow-write \
             write_file=notes)"
        )),
        "{stderr}"
    );
}

fn script_named(ws: &Workspace, name: &str, turns: serde_json::Value) -> String {
    ws.write(name, json!({ "turns": turns }).to_string())
        .display()
        .to_string()
}

#[test]
fn a_protected_path_is_offered_as_a_lift_but_toolhosts_own_never() {
    let ws = Workspace::new();
    ws.write("toolhost.toml", "");
    ws.write(".toolhost/plugins/.keep", "");
    let script = script(
        &ws,
        json!([
            {"tool_calls": [write("toolhost.toml", "[defaults]\nwrite = [\".\"]\n")]},
            {"tool_calls": [write(".toolhost/plugins/x.wasm", "\0asm")]},
            {"tool_calls": [write(".mcp.json", "{}")]},
            {"text": "Done."},
        ]),
    );
    let mut chat = Pty::spawn(
        &ws,
        &[
            "chat",
            "--no-session",
            "--allow-write",
            "write_file=.",
            "--script",
            &script,
        ],
    );
    chat.wait_for("Ctrl+D quits");
    chat.keys("widen\r");
    chat.wait_for("? allow `write_file` to change the protected `.mcp.json`?");
    answer(&mut chat, "y");
    chat.wait_for("Done.");
    let screen = chat.text();
    assert_eq!(screen.matches("asks to").count(), 1, "{screen}");
    assert!(
        screen.contains(
            "? `write_file` asks to change the protected `.mcp.json` (--allow-write \
             write_file=.mcp.json)"
        ),
        "{screen}"
    );
    // The question says what the lift opens.
    let joined = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains(
            "(--allow-write write_file=.mcp.json): it is protected because Claude Code and other \
             MCP clients start the servers it names"
        ),
        "{screen}"
    );
    assert_text(
        &std::fs::read_to_string(ws.path().join("toolhost.toml")).expect("read"),
        "",
    );
    assert!(!ws.path().join(".toolhost/plugins/x.wasm").exists());
    assert_text(
        &std::fs::read_to_string(ws.path().join(".mcp.json")).expect("read"),
        "{}",
    );
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

#[test]
fn a_host_allowed_for_the_session_is_reached_and_no_other() {
    let ws = Workspace::new();
    let server = WebServer::http();
    let other = WebServer::http();
    let origin = format!("http://127.0.0.1:{}", server.port());
    let away = format!("http://127.0.0.1:{}", other.port());
    let fetch = |url: String| json!({"name": "fetch", "arguments": {"url": url}});
    let script = script(
        &ws,
        json!([
            {"tool_calls": [fetch(format!("{origin}/landing"))]},
            {"tool_calls": [fetch(format!("{away}/landing"))]},
            {"tool_calls": [fetch(format!("{origin}/again"))]},
            {"text": "Done."},
        ]),
    );
    let mut chat = Pty::spawn(&ws, &["chat", "--no-session", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("read the docs\r");
    chat.wait_for(&format!("? allow `fetch` to reach `{origin}`?"));
    answer(&mut chat, "s");
    chat.wait_for(&format!("? allow `fetch` to reach `{away}`?"));
    answer(&mut chat, "n");
    chat.wait_for("Done.");
    let screen = chat.text();
    let asked: Vec<&str> = screen.lines().filter(|l| l.starts_with("? `")).collect();
    assert_eq!(
        asked,
        [
            format!("? `fetch` asks to reach `{origin}` (--allow-net fetch={origin})"),
            format!("? `fetch` asks to reach `{away}` (--allow-net fetch={away})"),
        ],
        "{screen}"
    );
    assert!(other.seen().is_empty(), "{screen}");
    let paths: Vec<String> = server.seen().into_iter().map(|seen| seen.target).collect();
    assert_eq!(paths, ["/landing", "/again"], "{screen}");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

#[test]
fn allow_by_hand_widens_one_tool_and_the_next_request_names_it() {
    use super::common::mock_model::{MockModel, Reply, openai_text};
    let ws = Workspace::new();
    ws.write("notes/.keep", "");
    ws.write("toolhost.toml", "");
    let mock = MockModel::start(vec![Reply::sse_body(openai_text("Noted."))]);
    let url = mock.openai_url();
    let mut chat = Pty::spawn(
        &ws,
        &[
            "chat",
            "--no-session",
            "--provider",
            "openai",
            "--base-url",
            &url,
            "--model",
            "m",
        ],
    );
    chat.wait_for("Ctrl+D quits");
    chat.keys("/grants\r");
    chat.wait_for(
        "nothing allowed in this session beyond the flags and config (/tools lists those)",
    );
    chat.keys("/allow write_file=toolhost.toml\r");
    chat.wait_for("cannot allow it: ");
    chat.keys("/allow-read read_file=missing\r");
    chat.wait_for("does not exist; create it first");
    chat.keys("/allow write_file=notes\r");
    chat.wait_for("allowed for this session: `write_file` may write in `notes`");
    chat.keys("/allow write_file=notes\r");
    chat.wait_for("this session allows that already; /grants lists it");
    chat.keys("/allow-net fetch=https://docs.rs/serde/latest\r");
    chat.wait_for("allowed for this session: `fetch` may reach `https://docs.rs`");
    chat.keys("/allow notes\r");
    chat.wait_for("write it as TOOL=WHAT");
    chat.keys("hi\r");
    chat.wait_for("Noted.");
    let screen = chat.text();
    let workspace = ws.path().display().to_string();
    assert_eq!(
        lines_from(&screen, "nothing allowed"),
        [
            "nothing allowed in this session beyond the flags and config (/tools lists those)",
            "cannot allow it: `toolhost.toml` is toolhost's own (its configuration or state, which \
             decides what",
            "every tool may do); only a flag lifts that: restart with `--allow-write \
             write_file=toolhost.toml`",
            &format!("cannot allow it: `{workspace}/missing` does not exist; create it first"),
            "allowed for this session: `write_file` may write in `notes`",
            "this session allows that already; /grants lists it",
            "allowed for this session: `fetch` may reach `https://docs.rs`",
            "write it as TOOL=WHAT, as the flag: `bash=notes`",
            "> hi",
            "Noted.",
        ],
        "{screen}"
    );
    let requests = mock.requests();
    let system = requests[0].body["messages"][0]["content"]
        .as_str()
        .expect("a system message")
        .to_string();
    assert!(
        system.ends_with(
            "\n\nThe user granted in this session:\n- `write_file` may write in `notes`\n- \
             `fetch` may reach `https://docs.rs`\n"
        ),
        "{system}"
    );
    // A relative path a link leads out of the workspace is outside it, as
    // for the flag (a red team's `/allow bash=docs` with a shipped `docs ->
    // ~` granted the home directory).
    let outside = tempfile::tempdir().expect("outside");
    std::os::unix::fs::symlink(outside.path(), ws.path().join("out")).expect("symlink");
    chat.keys("/allow write_file=out\r");
    chat.wait_for("cannot allow it: `out` leads outside the workspace");
    chat.keys("/grants\r");
    chat.wait_for("/grants");
    assert!(!chat.text().contains("may write in `out`"));
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

/// The official MCP Python SDK calling `calls` of `toolhost mcp` in `ws`;
/// with `answers`, as a client that declares elicitation and answers each
/// question in turn; without, as one that does not.
fn mcp_client(
    ws: &Workspace,
    (era, flags): (&str, &[&str]),
    calls: &serde_json::Value,
    answers: Option<&[&str]>,
) -> serde_json::Value {
    use super::common::toolchains::MCP_PYTHON;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mode = if answers.is_some() { "elicit" } else { "calls" };
    let output = std::process::Command::new(MCP_PYTHON.path())
        .arg(script)
        .args([mode, era])
        .arg(assert_cmd::cargo::cargo_bin("toolhost"))
        .arg("mcp")
        .args(flags)
        .envs(
            ws.toolhost_process()
                .get_envs()
                .filter_map(|(k, v)| Some((k, v?))),
        )
        .env("MCP_CALLS", calls.to_string())
        .env(
            "MCP_ANSWERS",
            json!(answers.unwrap_or_default()).to_string(),
        )
        .current_dir(ws.path())
        .output()
        .expect("run the Python client");
    super::common::client_json(&output)
}

#[test]
#[ignore = "needs TOOLHOST_MCP_PYTHON (a python with the MCP Python SDK); .ci/run sets it"]
fn an_mcp_client_that_elicits_answers_once_session_or_no_and_one_that_does_not_is_refused() {
    let ws = Workspace::new();
    ws.write("notes/.keep", "");
    let write =
        |name: &str| json!(["write_file", {"path": format!("notes/{name}"), "content": name}]);
    let calls = json!([write("a"), write("b"), write("c"), write("d"), write("e")]);
    let seen = mcp_client(
        &ws,
        ("legacy", &[]),
        &calls,
        Some(&["once", "deny", "decline", "session"]),
    );
    let outcomes: Vec<bool> = seen["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|result| result["is_error"].as_bool().expect("is_error"))
        .collect();
    // a once; b denied; c declined; d for the session; e with its grant.
    assert_eq!(outcomes, [false, true, true, false, false], "{seen}");
    let written: Vec<bool> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|name| ws.path().join("notes").join(name).exists())
        .collect();
    assert_eq!(
        written,
        outcomes.iter().map(|error| !error).collect::<Vec<_>>()
    );
    let asked = seen["asked"].as_array().expect("asked");
    assert_eq!(asked.len(), 4, "{seen}");
    assert_eq!(
        asked[0],
        json!({
            "message": "toolhost: `write_file` asks to write in `notes`, which its grants do not \
                        allow (--allow-write write_file=notes grants it from the start). Allow it?",
            "schema": {
                "type": "object",
                "properties": {"answer": {
                    "type": "string",
                    "title": "Answer",
                    "oneOf": [
                        {"const": "once", "title": "Allow once"},
                        {"const": "session", "title": "Allow for this session"},
                        {"const": "deny", "title": "Deny"},
                    ],
                    "default": "once",
                }},
                "required": ["answer"],
            },
        })
    );
    // The audit session records each answer.
    let sessions = ws.path().join(".toolhost/sessions");
    let file = std::fs::read_dir(&sessions)
        .expect("sessions")
        .map(|entry| entry.expect("entry").path())
        .next()
        .expect("the audit session");
    let answers: Vec<String> = std::fs::read_to_string(&file)
        .expect("read")
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("record"))
        .filter(|record| record["type"] == "grant")
        .map(|record| {
            format!(
                "{} {}",
                record["answer"].as_str().unwrap_or("?"),
                record["kind"].as_str().unwrap_or("?")
            )
        })
        .collect();
    assert_eq!(
        answers,
        ["once write", "deny write", "deny write", "session write"]
    );

    // A client without elicitation reads the refusal, as before.
    let plain = mcp_client(&ws, ("legacy", &[]), &json!([write("f")]), None);
    assert_eq!(
        plain["results"][0],
        json!({
            "blocks": 1,
            "is_error": true,
            "text": "error: access denied: `write_file` may not write `notes/f`: it has no write \
                     access to any directory. Only the user can grant it (in toolhost.toml or \
                     with --allow-write write_file=DIR).",
        })
    );
    assert!(!ws.path().join("notes/f").exists());
    // Nor is a client on the 2026-07-28 protocol asked, which has no
    // requests from the server to the client.
    let modern = mcp_client(&ws, ("modern", &[]), &json!([write("f")]), Some(&["once"]));
    assert_eq!(modern["results"][0], plain["results"][0], "{modern}");
    assert_eq!(modern["asked"], json!([]));
    // Nor one whose server the user started with `--no-ask` (a client
    // that hands elicitation to a model).
    let told_not = mcp_client(
        &ws,
        ("legacy", &["--no-ask"]),
        &json!([write("f")]),
        Some(&["once"]),
    );
    assert_eq!(told_not["results"][0], plain["results"][0], "{told_not}");
    assert_eq!(told_not["asked"], json!([]));
    assert!(!ws.path().join("notes/f").exists());
}

#[test]
fn a_program_not_granted_is_asked_for_and_allowed_once_runs_natively_at_the_next_call() {
    let ws = Workspace::new();
    let bash = |command: &str| json!({"name": "bash", "arguments": {"command": command}});
    let script = script(
        &ws,
        json!([
            {"tool_calls": [bash("echo started >> log.txt; gcc --version | head -1")]},
            {"tool_calls": [bash("gcc --version | head -1")]},
            {"tool_calls": [bash("gcc --version | head -1")]},
            {"text": "Done."},
        ]),
    );
    let mut chat = Pty::spawn(
        &ws,
        &[
            "chat",
            "--no-session",
            "--allow-write",
            "bash=.",
            "--script",
            &script,
        ],
    );
    chat.wait_for("Ctrl+D quits");
    chat.keys("which gcc\r");
    chat.wait_for("? allow `bash` to run the program `gcc` natively?");
    answer(&mut chat, "y");
    chat.wait_for("allowed once");
    // The first call had started: not run again. The next runs natively
    // without a question; the one after asks again.
    chat.wait_for("? allow `bash` to run the program `gcc` natively?");
    answer(&mut chat, "n");
    chat.wait_for("Done.");
    let screen = chat.text();
    // The bytes gcc's first line takes are the machine's.
    let lines: Vec<String> = lines_from(&screen, "> which gcc")
        .into_iter()
        .map(|line| match line.split_once(" ok ") {
            Some((head, _)) => format!("{head} ok _ B"),
            None => line,
        })
        .collect();
    assert_eq!(
        lines,
        [
            "> which gcc",
            "? `bash` asks to run the program `gcc` natively (--allow-exec bash=gcc)",
            "allowed once: `bash` may run the program `gcc` natively",
            "-> bash {\"command\":\"echo started >> log.txt; gcc --version | head -1... ok _ B",
            "-> bash {\"command\":\"gcc --version | head -1\"} ok _ B",
            "? `bash` asks to run the program `gcc` natively (--allow-exec bash=gcc)",
            "denied: `bash` may not run the program `gcc` natively",
            "-> bash {\"command\":\"gcc --version | head -1\"} ok _ B",
            "Done.",
        ],
        "{screen}"
    );
    // What had run before the refusal ran once.
    assert_text(
        &std::fs::read_to_string(ws.path().join("log.txt")).expect("read"),
        "started\n",
    );
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

/// The key that seals grants, and the MCP token beside it, are read by no
/// tool, even one granted the config directory that holds them (a native
/// command's walls hide them the same way).
#[test]
fn toolhosts_secrets_are_read_by_no_tool_whatever_its_grants() {
    let ws = Workspace::new();
    let config = ws.user_config().canonicalize().expect("canonical");
    for secret in ["grant-key", "mcp-token"] {
        std::fs::write(config.join(secret), "0123456789abcdef0123456789abcdef").expect("write");
        let path = config.join(secret).display().to_string();
        let grant = format!("read_file={}", config.display());
        let refused = super::common::stderr_of_failure(
            &mut ws.call(
                "read_file",
                &json!({"path": path}).to_string(),
                &["--allow-read", &grant],
            ),
            1,
        );
        assert_text(
            &refused,
            &format!(
                "error: `read_file` may not read `{path}`: it is one of toolhost's secrets (the \
                 MCP server's token, or the key that seals the grants the user gives), and no \
                 tool may read it, whatever its grants. Leave it alone.\n"
            ),
        );
    }
    // The directory itself can be read (a grant of it is the user's).
    std::fs::write(config.join("notes.txt"), "mine\n").expect("write");
    let grant = format!("read_file={}", config.display());
    let read = super::common::stdout_of(&mut ws.call(
        "read_file",
        &json!({"path": config.join("notes.txt").display().to_string()}).to_string(),
        &["--allow-read", &grant],
    ));
    assert!(read.contains("mine"), "{read}");
}

/// Typing that was under way when a question appeared answers nothing
/// (`this is` has an `s`); a key after a pause does, and Esc says no and
/// stops the turn.
#[test]
fn typing_under_way_does_not_answer_a_question() {
    let ws = Workspace::new();
    let mut chat = two_writes_asked(&ws, &["--no-session"]);
    chat.wait_for("? allow `write_file` to write in `notes`?");
    // Typed straight on: dropped, nothing answered.
    for key in ["s", " ", "i", "s", " ", "y", "e", "s"] {
        chat.keys(key);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let screen = chat.text();
    assert!(!screen.contains("allowed"), "{screen}");
    assert!(
        screen.contains("? allow `write_file` to write in `notes`?"),
        "{screen}"
    );
    answer(&mut chat, "n");
    chat.wait_for("denied: `write_file` may not write in `notes`");
    chat.wait_for("? allow `write_file` to write in `notes`?");
    // Esc: no, and the turn stops.
    chat.keys("\x1b");
    chat.wait_for("stopped: aborted");
    assert!(!ws.path().join("notes/a.txt").exists());
    assert!(!ws.path().join("notes/b.txt").exists());
    assert!(!chat.text().contains("Done."), "{}", chat.text());
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

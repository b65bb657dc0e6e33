//! The audit of `toolhost mcp`, driven over raw JSON-RPC lines: no file
//! until a call, results kept to 4 KiB, files that go on in the next one at
//! their cap (a server keeps its last four), and `toolhost sessions`, which
//! lists the servers apart from the runs and tells a server still serving
//! from one that died.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{Workspace, stdout_of};
use super::mcp::{RawServer, call, workspace};

/// The session files of `ws`, by name.
fn session_files(ws: &Workspace) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(ws.path().join(".toolhost/sessions"))
        .map(|entries| entries.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn id_of(path: &Path) -> String {
    path.file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

/// Every record of a session file.
fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read the session file")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON record"))
        .collect()
}

/// A session's start as `toolhost sessions` shows it.
fn started(path: &Path) -> String {
    let at = records(path)[0]["at"].as_str().expect("at").to_owned();
    at[..19].replace('T', " ")
}

/// The workspace as the server names it.
fn shown(ws: &Workspace) -> String {
    ws.path()
        .canonicalize()
        .expect("workspace")
        .display()
        .to_string()
}

/// `toolhost mcp`'s first line on stderr.
fn serving_line(ws: &Workspace) -> String {
    let ws = shown(ws);
    format!(
        "toolhost mcp: serving 25 tools from `{ws}` on stdio; calls will be recorded in a \
         session file in `{ws}/.toolhost/sessions`\n"
    )
}

/// Echoes `text` through `server` as call `id`; the client reads it whole.
fn echo(server: &mut RawServer, id: u64, text: &str) {
    server.send(call(id, "echo", json!({"text": text})));
    let response = server.response();
    assert_eq!(response["result"]["content"][0]["text"], text, "call {id}");
}

#[test]
fn a_client_that_only_lists_the_tools_leaves_no_session() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &[]);
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let tools = server.response()["result"]["tools"]
        .as_array()
        .map(Vec::len);
    assert_eq!(tools, Some(25));
    server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(
        server.response(),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    let (stderr, _) = server.close();
    assert_eq!(stderr, serving_line(&ws));
    assert!(!ws.path().join(".toolhost/sessions").exists());

    let output = ws.toolhost().arg("sessions").output().expect("run");
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "no sessions in `./.toolhost/sessions` yet: each `toolhost run` writes one there, and \
         `toolhost mcp` at its first tool call\n"
    );
}

/// The client reads a long result whole; the audit keeps its first 4 KiB,
/// cut between characters, with the whole size, and `sessions show` says
/// so.
#[test]
fn the_first_call_makes_the_session_and_a_long_result_is_recorded_cut() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &[]);
    // 'é' is two bytes: byte 4096 falls inside one.
    let long = format!("a{}", "é".repeat(5000));
    echo(&mut server, 1, &long);
    echo(&mut server, 2, "short");
    let (stderr, _) = server.close();

    let files = session_files(&ws);
    assert_eq!(files.len(), 1, "{files:?}");
    let id = id_of(&files[0]);
    assert_eq!(
        stderr,
        format!(
            "{}toolhost mcp: calls are recorded in session {id} (`toolhost sessions show {id}`)\n",
            serving_line(&ws)
        )
    );
    let records = records(&files[0]);
    let ends: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends[0]["text"], &long[..4095]);
    assert_eq!(ends[0]["output_bytes"], 10_001);
    assert_eq!(ends[0]["text_cut"], true);
    assert_eq!(ends[1]["text"], "short");
    assert_eq!(ends[1].get("text_cut"), None);

    let shown = stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "session {id} at {} (toolhost {}) provider=mcp model=- tools=25",
            records[0]["at"].as_str().expect("at"),
            env!("CARGO_PKG_VERSION")
        )
    );
    assert!(
        lines[1].starts_with("  call=mcp-1-1 tool=echo status=ok bytes=10001 recorded=4095 fuel="),
        "{shown}"
    );
    assert!(
        lines[2].starts_with("  call=mcp-2-2 tool=echo status=ok bytes=5 fuel="),
        "{shown}"
    );
    assert_eq!(
        lines[3..].to_vec(),
        ["stop reason=completed turns=0: the MCP client disconnected after 2 tool calls"]
    );
    let whole = stdout_of(
        ws.toolhost()
            .args(["sessions", "show", "last", "--call", "mcp-1-1"]),
    );
    let (_, rest) = whole.split_once('\n').expect("the call's line");
    assert_eq!(
        rest,
        format!(
            "arguments:\n  {{\n    \"text\": \"{long}\"\n  }}\ntext (the first 4095 of 10001 \
             bytes; the client read it whole):\n  {}\n",
            &long[..4095]
        )
    );
}

/// With a cap of 20000 bytes, 30 calls of 3000 bytes each fill a dozen
/// files: each ends with a stop naming the next, which names it back, and
/// the server keeps the last four.
#[test]
fn a_full_file_goes_on_in_the_next_and_the_server_keeps_its_last_four() {
    const CAP: u64 = 20_000;
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--session-file-max-bytes", &CAP.to_string()]);
    let text = "x".repeat(3000);
    // `toolhost sessions` lists the most recently written first, and a
    // file's time moves in kernel ticks (up to 10 ms): calls a tick apart
    // give each file a time of its own.
    let tick = std::time::Duration::from_millis(25);
    for id in 1..=30 {
        echo(&mut server, id, &text);
        std::thread::sleep(tick);
    }
    let (stderr, _) = server.close();

    // The log names each file as it is made: the chain, in order.
    let mut chain: Vec<String> = Vec::new();
    for line in stderr.lines().skip(1) {
        let to = line
            .split_once("calls go on in session ")
            .or_else(|| line.split_once("calls are recorded in session "))
            .and_then(|(_, rest)| rest.split([';', ' ']).next())
            .unwrap_or_else(|| panic!("not a line about the audit: {line}"));
        chain.push(to.to_owned());
    }
    assert!(chain.len() > 8, "{stderr}");
    let mut expected = serving_line(&ws);
    expected.push_str(&format!(
        "toolhost mcp: calls are recorded in session {0} (`toolhost sessions show {0}`)\n",
        chain[0]
    ));
    for (n, pair) in chain.windows(2).enumerate() {
        expected.push_str(&format!(
            "toolhost mcp: session {} reached {CAP} bytes: calls go on in session {}",
            pair[0], pair[1]
        ));
        // From the fifth file on, each new one deletes the oldest.
        if let Some(oldest) = (n + 2).checked_sub(5).map(|k| &chain[k]) {
            expected.push_str(&format!(
                "; deleted session {oldest} (a server keeps its last 4)"
            ));
        }
        expected.push('\n');
    }
    assert_eq!(stderr, expected);

    let kept = &chain[chain.len() - 4..];
    let mut files: Vec<String> = session_files(&ws).iter().map(|p| id_of(p)).collect();
    files.sort();
    let mut want = kept.to_vec();
    want.sort();
    assert_eq!(files, want);

    let dir = ws.path().join(".toolhost/sessions");
    let path = |id: &str| dir.join(format!("{id}.jsonl"));
    let mut calls = Vec::new();
    for (n, id) in kept.iter().enumerate() {
        let size = std::fs::metadata(path(id)).expect("kept").len();
        assert!(size <= CAP, "{id} is {size} bytes");
        let records = records(&path(id));
        let earlier = &chain[chain.len() - 4 + n - 1];
        assert_eq!(records[0]["continues"], earlier.as_str());
        let stop = records.last().expect("records");
        let started = records
            .iter()
            .filter(|r| r["type"] == "tool_execution_start")
            .count();
        calls.push(started);
        let shown = stdout_of(ws.toolhost().args(["sessions", "show", id]));
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines[1],
            format!("continues session {earlier} (the server's earlier calls)")
        );
        match kept.get(n + 1) {
            Some(next) => {
                assert_eq!(stop["continued_in"], next.as_str());
                assert_eq!(
                    lines.last().copied(),
                    Some(
                        format!(
                            "stop reason=completed turns=0: continued in session {next} after \
                             {started} tool call{}",
                            if started == 1 { "" } else { "s" }
                        )
                        .as_str()
                    )
                );
            }
            None => assert_eq!(
                lines.last().copied(),
                Some(
                    format!(
                        "stop reason=completed turns=0: the MCP client disconnected after 30 \
                         tool calls, {started} in this file"
                    )
                    .as_str()
                )
            ),
        }
    }

    // Newest first; each file that went on names where.
    let mut listed = String::from("MCP SERVER             STARTED (UTC)       CALLS  STATUS\n");
    for (n, id) in kept.iter().enumerate().rev() {
        let status = match kept.get(n + 1) {
            Some(next) => format!("continued in {next}"),
            None => "completed".into(),
        };
        listed.push_str(&format!(
            "{id:<22} {} {:>5}  {status}\n",
            started(&path(id)),
            calls[n]
        ));
    }
    assert_eq!(stdout_of(ws.toolhost().arg("sessions")), listed);
}

/// `toolhost sessions` lists the runs, then the MCP servers: one still
/// serving (it holds its file's lock), one killed (no stop record and no
/// lock) and one that ended when its client left.
#[test]
fn sessions_lists_the_servers_apart_from_the_runs_serving_died_or_completed() {
    let ws = workspace();
    ws.write("s.json", json!({"turns": [{"text": "hi"}]}).to_string());
    stdout_of(ws.toolhost().args(["run", "--script", "s.json", "say hi"]));
    let run = session_files(&ws).remove(0);

    let mut first = RawServer::start(&ws, &[]);
    echo(&mut first, 1, "one");
    let served = session_files(&ws)
        .into_iter()
        .find(|p| p != &run)
        .expect("the server's session");
    let (run_id, served_id) = (id_of(&run), id_of(&served));
    let runs = format!(
        "ID                     STARTED (UTC)       TURNS  STOP          PROMPT\n\
         {run_id:<22} {}     1  completed     say hi\n\n\
         MCP SERVER             STARTED (UTC)       CALLS  STATUS\n",
        started(&run)
    );
    let row = |id: &str, path: &Path, calls: u32, status: &str| {
        format!("{id:<22} {} {calls:>5}  {status}\n", started(path))
    };
    assert_eq!(
        stdout_of(ws.toolhost().arg("sessions")),
        format!("{runs}{}", row(&served_id, &served, 1, "serving"))
    );
    let json: Value =
        serde_json::from_str(&stdout_of(ws.toolhost().args(["sessions", "--json"]))).expect("json");
    let server_json = json
        .as_array()
        .expect("a list")
        .iter()
        .find(|s| s["id"] == served_id.as_str())
        .expect("the server");
    assert_eq!(
        (
            &server_json["provider"],
            &server_json["calls"],
            &server_json["running"],
            &server_json["stop"]
        ),
        (&json!("mcp"), &json!(1), &json!(true), &Value::Null)
    );
    let show = stdout_of(ws.toolhost().args(["sessions", "show", &served_id]));
    assert_eq!(
        show.lines().last(),
        Some("stop: none yet (it is still running)")
    );

    first.kill();
    assert_eq!(
        stdout_of(ws.toolhost().arg("sessions")),
        format!("{runs}{}", row(&served_id, &served, 1, "died"))
    );
    let show = stdout_of(ws.toolhost().args(["sessions", "show", &served_id]));
    assert_eq!(
        show.lines().last(),
        Some("stop: none recorded (the process was killed or crashed)")
    );

    let mut second = RawServer::start(&ws, &[]);
    echo(&mut second, 1, "one");
    echo(&mut second, 2, "two");
    second.close();
    let ended = session_files(&ws)
        .into_iter()
        .find(|p| p != &run && p != &served)
        .expect("the second server's session");
    assert_eq!(
        stdout_of(ws.toolhost().arg("sessions")),
        format!(
            "{runs}{}{}",
            row(&id_of(&ended), &ended, 2, "completed"),
            row(&served_id, &served, 1, "died")
        )
    );
}

/// A session file that cannot be made no longer stops the server: it says
/// so once, at the first call, and serves every call.
#[test]
fn a_session_file_that_cannot_be_made_is_told_once_and_the_calls_are_served() {
    let ws = workspace();
    // A directory cannot be made under a file.
    let mut server = RawServer::start(&ws, &["--session-dir", "notes.txt/sessions"]);
    echo(&mut server, 1, "one");
    echo(&mut server, 2, "two");
    let (stderr, _) = server.close();
    assert_eq!(
        stderr,
        format!(
            "toolhost mcp: serving 25 tools from `{}` on stdio; calls will be recorded in a \
             session file in `notes.txt/sessions`\n\
             toolhost mcp: warning: cannot write the session file in `notes.txt/sessions`: \
             `notes.txt/sessions`: Not a directory (os error 20); the tools are still served \
             (pass --no-session to serve without recording the calls)\n",
            shown(&ws)
        )
    );
    assert_eq!(ws.read("notes.txt"), "remember the milk\n");
}

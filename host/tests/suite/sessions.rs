//! Session files through the real binary: what a run records, `toolhost
//! sessions`, resuming after a SIGKILL (nothing run twice), the ledger a
//! resume sends to both wire APIs, and long results cut for the model.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::mock_model::{MockModel, Reply, openai_text, openai_tool_call, sse};
use super::common::{
    Workspace, assert_text, copy_dir, mask_between, mask_prompt_times, stderr_of_failure,
    stdout_of, test_plugins,
};

const NO_RESULT: &str = "(no result recorded: the run stopped before this call finished; it \
                         may or may not have taken effect)";

/// The first line of `toolhost sessions`.
const LIST_HEADER: &str =
    "ID                     STARTED (UTC)       TURNS  STOP          PROMPT\n";

/// The `toolhost sessions` row of the session in `file`.
fn list_row(file: &Path, turns: u32, stop: &str, prompt: &str) -> String {
    let id = file.file_stem().expect("name").to_string_lossy();
    let at = records(file)[0]["at"].as_str().expect("at")[..19].replace('T', " ");
    format!("{id:<22} {at} {turns:>5}  {stop:<12}  {prompt}\n")
}

/// The id of the session in `file`.
fn id_of(file: &Path) -> String {
    file.file_stem()
        .expect("name")
        .to_string_lossy()
        .into_owned()
}

/// `sessions show` output with what differs from run to run masked as `_`:
/// when each run started (`at ...`), each reply's `ttft=` and `time=`, and
/// each call's `fuel=`, `mem=` and duration (which also move with the
/// compiler that built the plugin).
fn masked_show(shown: &str) -> String {
    shown
        .split_inclusive('\n')
        .map(|line| {
            if line.starts_with("session ") || line.starts_with("resumed ") {
                return mask_between(line, " at ", " (", "_");
            }
            let is_call = line.trim_start().starts_with("call=");
            if !line.starts_with("step=") && !is_call {
                return line.to_string();
            }
            let (line, end) = match line.strip_suffix('\n') {
                Some(line) => (line, "\n"),
                None => (line, ""),
            };
            // A call's own text follows its first `: `; only the figures vary.
            let (figures, text) = match line.split_once(": ") {
                Some((figures, text)) if is_call => (figures, Some(text)),
                _ => (line, None),
            };
            let figures: Vec<String> = figures
                .split(' ')
                .map(|word| match word.split_once('=') {
                    Some((key @ ("ttft" | "time" | "fuel" | "mem"), _)) => format!("{key}=_"),
                    _ if is_call
                        && word.len() > 2
                        && word.ends_with("ms")
                        && word[..word.len() - 2].bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        "_ms".into()
                    }
                    _ => word.to_string(),
                })
                .collect();
            match text {
                Some(text) => format!("{}: {text}{end}", figures.join(" ")),
                None => format!("{}{end}", figures.join(" ")),
            }
        })
        .collect()
}

/// Every line of a session file, parsed; fails on any line that is not
/// one whole JSON object.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read session file");
    assert!(text.ends_with('\n'), "the file ends with a whole line");
    text.lines()
        .enumerate()
        .map(|(n, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {line}", n + 1))
        })
        .collect()
}

/// `toolhost run --provider openai` against `mock` with `args` (the prompt
/// last); asserts exit 0 and returns stderr.
fn run_openai(ws: &Workspace, mock: &MockModel, args: &[&str]) -> String {
    let output = ws
        .toolhost()
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .args([
            "run",
            "--provider",
            "openai",
            "--base-url",
            &format!("{}/v1", mock.url),
        ])
        .args(args)
        .output()
        .expect("run toolhost");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stderr).expect("utf-8 stderr")
}

fn session_files(ws: &Workspace) -> Vec<PathBuf> {
    let dir = ws.path().join(".toolhost/sessions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.map(|e| e.expect("entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// A workspace with the hostile plugin whose session died by SIGKILL while
/// `append_then_sleep` (a write) was running: it had appended its line to
/// `out/log.txt` and was sleeping; `while_running` ran before the kill.
/// Returns the session file.
fn crashed_session(ws: &Workspace, while_running: impl FnOnce(&Workspace)) -> PathBuf {
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    ws.mkdir("out");
    ws.write(
        "crash.json",
        json!({"turns": [{"text": "writing", "tool_calls": [{"id": "w1", "name": "append_then_sleep",
               "arguments": {"path": "out/log.txt", "ms": 60000}}]}]})
        .to_string(),
    );
    // Warm the compile cache so the run reaches the tool quickly.
    stdout_of(ws.toolhost().arg("tools"));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
        .current_dir(ws.path())
        .env("TOOLHOST_CACHE_DIR", super::common::shared_cache())
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .args([
            "--allow-write",
            "out",
            "run",
            "--script",
            "crash.json",
            "append please",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn toolhost");
    let deadline = Instant::now() + Duration::from_secs(30);
    // The file appears when the tool opens it, its line a moment later.
    let log = ws.path().join("out/log.txt");
    while std::fs::read_to_string(&log).unwrap_or_default() != "ran\n" {
        assert!(Instant::now() < deadline, "the tool never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    while_running(ws);
    child.kill().expect("SIGKILL"); // std sends SIGKILL on Unix
    child.wait().expect("reap");
    let files = session_files(ws);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[test]
fn a_run_killed_mid_tool_call_resumes_without_running_the_call_again() {
    let ws = Workspace::new();
    let path = crashed_session(&ws, |ws| {
        // Still running: its process holds the file's lock.
        let file = &session_files(ws)[0];
        let id = file.file_stem().expect("name").to_string_lossy();
        let at = records(file)[0]["at"].as_str().expect("at")[..19].replace('T', " ");
        assert_eq!(
            stdout_of(ws.toolhost().arg("sessions")),
            format!(
                "ID                     STARTED (UTC)       TURNS  STOP          PROMPT\n\
                 {id:<22} {at}     1  running       append please\n"
            )
        );
        let shown = stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
        assert_text(
            &masked_show(&shown),
            &format!(
                "session {id} at _ (toolhost {v}) provider=scripted model=- tools=23\n\
                 user: append please\n\
                 step=1 model.finish=tool_use calls=1 time=_\n\
                 \x20 text: writing\n\
                 \x20 call=w1 tool=append_then_sleep status=running\n\
                 stop: none yet (it is still running)\n",
                v = env!("CARGO_PKG_VERSION")
            ),
        );
        // A second writer would interleave its records with the first's.
        ws.write("again.json", json!({"turns": [{"text": "hi"}]}).to_string());
        let stderr = stderr_of_failure(
            ws.toolhost()
                .args(["run", "--resume", "last", "--script", "again.json", "x"]),
            1,
        );
        assert_text(
            &stderr,
            &ws.expand(&format!(
                "error: cannot write the session file: `{{ws}}/.toolhost/sessions/{id}.jsonl`: \
                 another toolhost is still writing it (`toolhost sessions` shows it as running); \
                 wait for that run to end, or start a new session without --resume (pass \
                 --no-session to run without one)\n"
            )),
        );
    });
    assert_eq!(ws.read("out/log.txt"), "ran\n");

    // The file is whole JSONL up to the last event: the call started and
    // never ended, and there is no stop record.
    let before = records(&path);
    let types: Vec<&str> = before
        .iter()
        .map(|r| r["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        types,
        [
            "session_start",
            "message",
            "message",
            "tool_execution_start"
        ]
    );
    assert_eq!(before[0]["format"], 1);
    assert_eq!(before[3]["call_id"], "w1");

    // `sessions` and `sessions show` read the crashed file.
    let id = id_of(&path);
    let v = env!("CARGO_PKG_VERSION");
    let list = stdout_of(ws.toolhost().arg("sessions"));
    assert_text(
        &list,
        &format!(
            "{LIST_HEADER}{}",
            list_row(&path, 1, "(none: died)", "append please")
        ),
    );
    let crashed = format!(
        "session {id} at _ (toolhost {v}) provider=scripted model=- tools=23\n\
         user: append please\n\
         step=1 model.finish=tool_use calls=1 time=_\n\
         \x20 text: writing\n\
         \x20 call=w1 tool=append_then_sleep status=no_result (it was running when the process \
         died)\n\
         stop: none recorded (the process was killed or crashed)\n"
    );
    let shown = stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
    assert_text(&masked_show(&shown), &crashed);

    // A crash in the middle of writing a line leaves half of it.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    std::io::Write::write_all(&mut file, br#"{"type":"tool_execution_end","at":"2026-"#)
        .expect("tear");
    drop(file);

    ws.write(
        "resume.json",
        json!({"turns": [{"text": "picking up"}]}).to_string(),
    );
    let output = ws
        .toolhost()
        .args([
            "--allow-write",
            "out",
            "run",
            "--resume",
            "last",
            "--script",
            "resume.json",
        ])
        .arg("continue")
        .output()
        .expect("resume");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_text(
        &mask_prompt_times(&stderr),
        &ws.expand(&format!(
            "warning: ignored the last line of `{{ws}}/.toolhost/sessions/{id}.jsonl` (40 bytes, \
             cut off mid-write when the run was killed: EOF while parsing a string at line 1 \
             column 40)\n\
             resuming: call w1 (append_then_sleep) has no recorded result; the model is told: \
             {NO_RESULT}\n\
             toolhost run · scripted · {{ws}} · 23 tools · session {id}\n\
             1 turn(s) · 0 in / 0 out tokens · _ s\n\
             session {id} (continue it with `toolhost --workspace {{ws}} --allow-write out run \
             --resume {id} --script {{ws}}/resume.json \"...\"`)\n"
        )),
    );
    assert_eq!(
        ws.read("out/log.txt"),
        "ran\n",
        "the write must not run again"
    );

    let after = records(&path);
    assert_eq!(
        after[..4],
        before[..],
        "recorded events are never rewritten"
    );
    let starts = after
        .iter()
        .filter(|r| r["type"] == "tool_execution_start")
        .count();
    assert_eq!(starts, 1);
    let recovered = after
        .iter()
        .find(|r| r["recovered"] == true)
        .expect("the recovered result is recorded");
    assert_eq!(
        recovered["message"]["results"][0],
        json!({"call_id": "w1", "tool": "append_then_sleep", "text": NO_RESULT, "is_error": true})
    );
    assert_eq!(after[4]["type"], "session_start");
    assert_eq!(after[4]["resumed"], true);
    assert_eq!(after.last().expect("stop")["stop"]["reason"], "completed");

    let list = stdout_of(ws.toolhost().arg("sessions"));
    assert_text(
        &list,
        &format!(
            "{LIST_HEADER}{}",
            list_row(&path, 2, "completed", "append please")
        ),
    );
    let shown = stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
    assert_text(
        &masked_show(&shown),
        &format!(
            "{crashed}\
             resumed {id} at _ (toolhost {v}) provider=scripted model=- tools=23\n\
             \x20 call=w1 tool=append_then_sleep status=recovered: {NO_RESULT}\n\
             user: continue\n\
             step=2 model.finish=stop calls=0 time=_\n\
             \x20 text: picking up\n\
             stop reason=completed turns=1: the model replied without tool calls (finish: stop)\n"
        ),
    );
}

#[test]
fn a_resumed_ledger_is_accepted_by_both_wire_apis() {
    let ws = Workspace::new();
    crashed_session(&ws, |_| {});

    // Continue with an OpenAI-compatible server...
    let openai = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    run_openai(
        &ws,
        &openai,
        &["--resume", "last", "--model", "gpt-4o", "continue"],
    );
    let body = &openai.requests()[0].body;
    let messages = body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(messages[1]["content"], "append please");
    assert_eq!(messages[2]["content"], "writing");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "w1");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        "append_then_sleep"
    );
    assert_eq!(messages[3]["tool_call_id"], "w1");
    assert_eq!(messages[3]["content"], NO_RESULT);
    assert_eq!(messages[4]["content"], "continue");

    // ...then the same session with an Anthropic one: the model and base
    // URL must be given again because they changed.
    let anthropic = MockModel::start(vec![sse("anthropic-messages-text-ping")]);
    let output = ws
        .toolhost()
        .env_remove("ANTHROPIC_API_KEY")
        .args(["run", "--resume", "last", "--provider", "anthropic"])
        .args([
            "--model",
            "claude-sonnet-4-5",
            "--base-url",
            &anthropic.url,
            "and now?",
        ])
        .output()
        .expect("resume with anthropic");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let body = &anthropic.requests()[0].body;
    let messages = body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    // Roles alternate (the API's rule): tool results and the next prompt
    // share one user turn.
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(messages[1]["content"][1]["id"], "w1");
    let answer = &messages[2]["content"];
    assert_eq!(answer[0]["type"], "tool_result");
    assert_eq!(answer[0]["tool_use_id"], "w1");
    assert_eq!(answer[0]["is_error"], true);
    assert_eq!(answer[0]["content"], NO_RESULT);
    assert_eq!(answer[1], json!({"type": "text", "text": "continue"}));
    assert_eq!(
        messages[4]["content"],
        json!([{"type": "text", "text": "and now?", "cache_control": {"type": "ephemeral"}}])
    );
}

#[test]
fn a_long_result_reaches_the_model_as_head_and_tail_and_is_saved_whole() {
    let ws = Workspace::new();
    let big: String = (1..=1500)
        .map(|n| format!("line {n} of a long file\n"))
        .collect();
    ws.write("big.txt", &big);
    let mock = MockModel::start(vec![
        Reply::sse_body(openai_tool_call(
            "call_1",
            "read_file",
            &json!({"path": "big.txt"}),
        )),
        sse("openai-chat-text-usage-done"),
    ]);
    run_openai(
        &ws,
        &mock,
        &["--model", "m", "--result-budget", "2", "read big.txt"],
    );

    let whole = stdout_of(&mut ws.call("read_file", r#"{"path":"big.txt"}"#, &[]));
    let saved = ws.read(".toolhost/outputs/call_1.txt");
    assert_eq!(
        saved.trim_end(),
        whole.trim_end(),
        "the saved file holds every byte"
    );
    assert!(saved.len() > 30_000);

    let requests = mock.requests();
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let seen = messages.last().expect("tool message")["content"]
        .as_str()
        .expect("content");
    assert!(
        seen.len() < 2048 + 400,
        "{} bytes reached the model",
        seen.len()
    );
    assert!(
        seen.starts_with("     1\tline 1 of a long file\n"),
        "{seen}"
    );
    assert!(seen.ends_with(&whole[whole.len() - 200..]), "{seen}");
    let note = seen
        .lines()
        .find(|l| l.starts_with("[... "))
        .expect("a note line");
    let head_lines = seen.lines().take_while(|l| !l.starts_with("[... ")).count();
    assert_text(
        note,
        &format!(
            "[... 1435 lines (44890 of {} bytes) left out; the whole output is saved in \
             `.toolhost/outputs/call_1.txt`: read it with read_file (offset={} is the first line \
             left out; use limit to page) ...]",
            saved.len(),
            head_lines + 1
        ),
    );

    // The session records the whole size and where the text went.
    let end = records(&session_files(&ws)[0])
        .into_iter()
        .find(|r| r["type"] == "tool_execution_end")
        .expect("tool_execution_end");
    assert_eq!(end["output_bytes"], saved.len());
    assert_eq!(end["saved_to"], ".toolhost/outputs/call_1.txt");
    assert_eq!(end["text"], seen);
    assert_eq!(end["execution"]["outcome"], "ok");
    assert!(end["execution"]["fuel_used"].as_u64().expect("fuel") > 0);
}

#[test]
fn a_session_records_the_whole_run_and_sessions_show_reads_it() {
    let ws = Workspace::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/demo");
    copy_dir(&demo, ws.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scripts/demo.json");
    let output = ws
        .toolhost()
        .args(["run", "--output-format", "json", "--script"])
        .arg(&script)
        .arg("Review the demo project")
        .output()
        .expect("run the demo");
    assert_eq!(output.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&output.stdout).expect("json");
    let id = doc["session"]["id"].as_str().expect("session id");

    let files = session_files(&ws);
    assert_eq!(
        files,
        [ws.path().join(format!(".toolhost/sessions/{id}.jsonl"))]
    );
    let lines = records(&files[0]);
    let start = &lines[0];
    assert_eq!(start["type"], "session_start");
    assert_eq!(start["id"], id);
    assert_eq!(start["provider"], "scripted");
    let write_file = start["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "write_file")
        .expect("write_file");
    assert_eq!(write_file["plugin_sha256"].as_str().map(str::len), Some(64));
    assert_eq!(
        write_file["grants"],
        json!([{"path": ".", "access": "read-only"}, {"path": "notes", "access": "read-write"}])
    );
    assert!(write_file["limits"]["fuel"].as_u64().is_some());
    let denied = lines
        .iter()
        .find(|r| r["type"] == "tool_execution_end" && r["tool"] == "edit_file")
        .expect("the denied edit");
    assert_eq!(denied["is_error"], true);
    assert_eq!(denied["execution"]["outcome"], "denied");
    assert_eq!(lines.last().expect("stop")["stop"]["reason"], "completed");

    let list = stdout_of(ws.toolhost().arg("sessions"));
    assert_text(
        &list,
        &format!(
            "{LIST_HEADER}{}",
            list_row(&files[0], 6, "completed", "Review the demo project")
        ),
    );
    let json_list: Value =
        serde_json::from_str(&stdout_of(ws.toolhost().args(["sessions", "--json"]))).expect("json");
    assert_eq!(json_list[0]["turns"], 6);

    let shown = stdout_of(ws.toolhost().args(["sessions", "show", &id[..12]]));
    assert_text(
        &masked_show(&shown),
        &format!(
            "session {id} at _ (toolhost {}) provider=scripted model=- tools=7\n\
             user: Review the demo project\n\
             step=1 model.finish=tool_use calls=1 time=_\n\
             \x20 text: I'll start by looking at the project layout.\n\
             \x20 call=c1 tool=list_files status=ok bytes=63 fuel=_ mem=_ _ms\n\
             step=2 model.finish=tool_use calls=2 time=_\n\
             \x20 text: Now the code, and any open TODOs.\n\
             \x20 call=c2 tool=read_file status=ok bytes=247 fuel=_ mem=_ _ms\n\
             \x20 call=c3 tool=search_text status=ok bytes=48 fuel=_ mem=_ _ms\n\
             step=3 model.finish=tool_use calls=1 time=_\n\
             \x20 text: The TODO asks to handle an empty name. I'll fix it in place.\n\
             \x20 call=c4 tool=edit_file status=denied bytes=167 fuel=_ mem=_ _ms: error: access \
             denied: `edit_file` may not write `src/greet.py`: it is outside the directories this \
             t...\n\
             step=4 model.finish=tool_use calls=1 time=_\n\
             \x20 text: I may not write under src/: edit_file may write only under notes/. I'll \
             record the fix as a review n...\n\
             \x20 call=c5 tool=write_file status=ok bytes=37 fuel=_ mem=_ _ms\n\
             step=5 model.finish=tool_use calls=1 time=_\n\
             \x20 call=c6 tool=edit_file status=ok bytes=42 fuel=_ mem=_ _ms\n\
             step=6 model.finish=stop calls=0 time=_\n\
             \x20 text: Done. The project has one open TODO (src/greet.py:5, empty names). I was \
             not allowed to edit src/, s...\n\
             stop reason=completed turns=6: the model replied without tool calls (finish: stop)\n",
            env!("CARGO_PKG_VERSION")
        ),
    );
}

#[test]
fn no_session_writes_nothing_and_session_dir_moves_the_files() {
    let ws = Workspace::new();
    ws.write("s.json", json!({"turns": [{"text": "hi"}]}).to_string());
    stdout_of(
        ws.toolhost()
            .args(["run", "--no-session", "--script", "s.json", "x"]),
    );
    assert!(!ws.path().join(".toolhost/sessions").exists());

    let elsewhere = tempfile::tempdir().expect("temp dir");
    let dir = elsewhere.path().join("kept");
    stdout_of(
        ws.toolhost()
            .args(["run", "--session-dir"])
            .arg(&dir)
            .args(["--script", "s.json", "x"]),
    );
    assert!(!ws.path().join(".toolhost/sessions").exists());
    assert_eq!(std::fs::read_dir(&dir).expect("moved").count(), 1);
    let file = std::fs::read_dir(&dir)
        .expect("moved")
        .next()
        .expect("one session")
        .expect("entry")
        .path();
    let list = stdout_of(ws.toolhost().args(["sessions", "--session-dir"]).arg(&dir));
    assert_text(
        &list,
        &format!("{LIST_HEADER}{}", list_row(&file, 1, "completed", "x")),
    );
    let shown = stdout_of(
        ws.toolhost()
            .args(["sessions", "show", "last", "--session-dir"])
            .arg(&dir),
    );
    assert_text(
        &masked_show(&shown),
        &format!(
            "session {} at _ (toolhost {}) provider=scripted model=- tools=7\n\
             user: x\n\
             step=1 model.finish=stop calls=0 time=_\n\
             \x20 text: hi\n\
             stop reason=completed turns=1: the model replied without tool calls (finish: stop)\n",
            id_of(&file),
            env!("CARGO_PKG_VERSION")
        ),
    );
}

#[test]
fn unknown_and_newer_sessions_are_refused_with_the_reason() {
    let ws = Workspace::new();
    ws.write("s.json", json!({"turns": [{"text": "hi"}]}).to_string());
    let stderr = stderr_of_failure(
        ws.toolhost()
            .args(["run", "--resume", "last", "--script", "s.json", "x"]),
        1,
    );
    assert_text(
        &stderr,
        &ws.expand(
            "error: no sessions in `{ws}/.toolhost/sessions` yet: each `toolhost run` writes one \
             there, and `toolhost mcp` at its first tool call\n",
        ),
    );

    ws.write(
        ".toolhost/sessions/future.jsonl",
        format!(
            "{}\n",
            json!({"type": "session_start", "format": 99, "id": "future"})
        ),
    );
    let stderr = stderr_of_failure(
        ws.toolhost()
            .args(["run", "--resume", "future", "--script", "s.json", "x"]),
        1,
    );
    let newer = "was written by a newer toolhost (session format 99; this one reads up to format \
                 1): upgrade toolhost to resume or show it";
    assert_text(
        &stderr,
        &ws.expand(&format!(
            "error: `{{ws}}/.toolhost/sessions/future.jsonl` {newer}\n"
        )),
    );
    let stderr = stderr_of_failure(ws.toolhost().args(["sessions", "show", "nope"]), 1);
    assert_text(
        &stderr,
        "error: no session `nope` in `./.toolhost/sessions`: `toolhost sessions` lists them\n",
    );
    let list = stdout_of(ws.toolhost().arg("sessions"));
    assert_text(
        &list,
        &format!("{LIST_HEADER}unreadable: `./.toolhost/sessions/future.jsonl` {newer}\n"),
    );
}

#[test]
fn retries_and_model_timings_are_recorded() {
    let ws = Workspace::new();
    let busy = Reply::Status {
        status: 503,
        headers: vec![("retry-after", "0".into())],
        body: "busy".into(),
    };
    let mock = MockModel::start(vec![busy, sse("openai-chat-text-usage-done")]);
    let stderr = run_openai(&ws, &mock, &["--model", "m", "hello"]);
    let id = id_of(&session_files(&ws)[0]);
    let reason = format!(
        "`openai` at {}/v1/chat/completions answered HTTP 503: busy",
        mock.url
    );
    assert_text(
        &mask_prompt_times(&stderr),
        &ws.expand(&format!(
            "toolhost run · m (openai) · {{ws}} · 7 tools · session {id}\n\
             retrying the model request in 0.0 s (retry 1): {reason}\n\
             1 turn(s) · 14 in / 30 out tokens · _ s\n\
             session {id} (continue it with `toolhost --workspace {{ws}} run --resume {id} \
             \"...\"`)\n"
        )),
    );
    let lines = records(&session_files(&ws)[0]);
    let retry = lines
        .iter()
        .find(|r| r["type"] == "retry")
        .expect("a retry record");
    assert_eq!(retry["attempt"], 1);
    assert!(
        retry["reason"].as_str().expect("reason").contains("503"),
        "{retry}"
    );
    let reply = lines
        .iter()
        .find(|r| r["type"] == "message" && r["message"]["role"] == "assistant")
        .expect("the reply");
    assert_eq!(reply["turn"], 1);
    let ttft = reply["ttft_ms"].as_u64().expect("ttft of a streamed reply");
    assert!(ttft <= reply["duration_ms"].as_u64().expect("duration"));
    assert!(reply["message"]["usage"]["input_tokens"].as_u64().is_some());

    let shown = stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
    assert_text(
        &masked_show(&shown),
        &format!(
            "session {id} at _ (toolhost {}) provider=openai model=m tools=7\n\
             user: hello\n\
             \x20 retry=1 wait=0ms: {reason}\n\
             step=1 model.finish=stop calls=0 ttft=_ time=_ tokens=14/30\n\
             \x20 text: I'm unable to provide real-time weather updates. To get the current weather \
             in San Francisco, I reco...\n\
             stop reason=completed turns=1: the model replied without tool calls (finish: stop)\n\
             \x20 spent: 14 in / 30 out tokens\n\
             total: 14 in / 30 out tokens\n",
            env!("CARGO_PKG_VERSION")
        ),
    );
}

#[test]
fn reasoning_and_its_signature_survive_a_resume() {
    let ws = Workspace::new();
    let first = MockModel::start(vec![sse("anthropic-messages-thinking-signature")]);
    let anthropic = |mock: &MockModel, prompt: &str| {
        let output = ws
            .toolhost()
            .env_remove("ANTHROPIC_API_KEY")
            .args([
                "run",
                "--provider",
                "anthropic",
                "--model",
                "claude-sonnet-4-5",
            ])
            .args(["--base-url", &mock.url, prompt])
            .output()
            .expect("run");
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    anthropic(&first, "what is 25 * 37?");
    let reply = records(&session_files(&ws)[0])
        .into_iter()
        .find(|r| r["type"] == "message" && r["message"]["role"] == "assistant")
        .expect("the reply");
    let reasoning = &reply["message"]["blocks"][0];
    assert_eq!(reasoning["type"], "reasoning");
    let signature = reasoning["signature"].as_str().expect("a signature");
    assert!(!signature.is_empty());

    let second = MockModel::start(vec![sse("anthropic-messages-text-ping")]);
    let output = ws
        .toolhost()
        .env_remove("ANTHROPIC_API_KEY")
        .args(["run", "--resume", "last", "and 26 * 37?"])
        .args(["--base-url", &second.url])
        .output()
        .expect("resume");
    assert_eq!(
        output.status.code(),
        Some(0),
        "the session's provider and model are reused: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let body = &second.requests()[0].body;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    let thinking = &body["messages"][1]["content"][0];
    assert_eq!(thinking["type"], "thinking");
    assert_eq!(thinking["signature"], signature);
    assert_eq!(thinking["thinking"], reasoning["text"]);
}

/// `.toolhost/` holds prompts and tool output: git ignores it from the
/// moment toolhost makes it, so `git add .` commits none of it. The hint
/// after a run, pasted in another directory, continues the session.
#[test]
fn the_state_directory_is_ignored_by_git_and_the_resume_hint_works_anywhere() {
    let ws = Workspace::new();
    ws.write("README.md", "# project\n");
    ws.write(
        "script.json",
        r#"{"turns": [{"text": "one"}, {"text": "two"}]}"#,
    );
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(ws.path())
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    git(&["init", "--quiet"]);
    let out = ws
        .toolhost()
        .args(["run", "--script", "script.json", "hello"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        ws.read(".toolhost/.gitignore"),
        "# Made by toolhost: sessions, saved tool results and plugins, not for git.\n*\n"
    );
    assert_eq!(
        git(&["status", "--porcelain"]),
        "?? README.md\n?? script.json\n"
    );

    let stderr = String::from_utf8(out.stderr).expect("utf-8");
    let hint = stderr
        .lines()
        .find_map(|line| line.split_once("(continue it with `"))
        .map(|(_, rest)| rest.trim_end_matches("`)").to_owned())
        .unwrap_or_else(|| panic!("no resume hint in {stderr}"));
    let workspace = ws.path().canonicalize().expect("workspace");
    let id = session_files(&ws)[0]
        .file_stem()
        .expect("stem")
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        hint,
        format!(
            "toolhost --workspace {} run --resume {id} --script {} \"...\"",
            workspace.display(),
            workspace.join("script.json").display()
        )
    );
    // Pasted from another directory (the prompt in place of `...`).
    let elsewhere = tempfile::tempdir().expect("elsewhere");
    let words = hint.trim_end_matches(" \"...\"").split(' ').skip(1);
    let resumed = Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
        .args(words)
        .arg("and again")
        .current_dir(elsewhere.path())
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        .env("TOOLHOST_CACHE_DIR", super::common::shared_cache())
        .env_remove("XDG_CACHE_HOME")
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .output()
        .expect("resume");
    assert!(resumed.status.success(), "{resumed:?}");
    // The script replays from its start; the run went into the same file.
    assert_eq!(String::from_utf8_lossy(&resumed.stdout), "one\n");
    let files = session_files(&ws);
    assert_eq!(files.len(), 1, "{files:?}");
    let starts = records(&files[0])
        .iter()
        .filter(|r| r["type"] == "session_start")
        .count();
    assert_eq!(starts, 2);
}

/// The tool line shows where a call acts before its other arguments, and
/// an error's whole text; `sessions show --call` prints one call whole.
#[test]
fn tool_lines_lead_with_the_path_and_a_call_can_be_shown_whole() {
    let ws = Workspace::new();
    ws.mkdir("notes");
    let content = "# Review\n".repeat(50);
    let script = json!({"turns": [
        {"text": "Writing.", "tool_calls": [
            {"id": "c1", "name": "write_file",
             "arguments": {"content": content, "path": "notes/review.md"}},
            {"id": "c2", "name": "read_file", "arguments": {"offset": 0, "path": "missing.md"}}
        ]},
        {"text": "Done."}
    ]});
    ws.write("script.json", script.to_string());
    let out = ws
        .toolhost()
        .args([
            "--allow-write",
            "write_file=notes",
            "run",
            "--script",
            "script.json",
            "go",
        ])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).expect("utf-8");
    let calls: Vec<String> = stderr
        .lines()
        .filter(|line| line.starts_with("-> ") || line.starts_with("   "))
        .map(|line| {
            // Timings vary: ` 3 ms` -> ` _ ms`.
            let mut words: Vec<&str> = line.split(' ').collect();
            if let Some(at) = words.iter().position(|w| w.starts_with("ms")) {
                words[at - 1] = "_";
            }
            words.join(" ")
        })
        .collect();
    let read_error = ws
        .toolhost()
        .args(["call", "read_file", r#"{"offset":0,"path":"missing.md"}"#])
        .output()
        .expect("call");
    let read_error = String::from_utf8(read_error.stderr).expect("utf-8");
    let read_error = read_error.trim_end().trim_start_matches("error: ");
    let mut expected = vec![format!(
        "-> write_file notes/review.md {{\"content\":\"# Review\\n# Review\\n# Review\\n# Review\\n# Review... ok _ ms {} B",
        stdout_of(
            ws.toolhost()
                .args(["sessions", "show", "last", "--call", "c1"])
        )
        .lines()
        .skip_while(|l| *l != "text:")
        .nth(1)
        .expect("c1's text")
        .trim()
        .len()
    )];
    let mut error_lines = read_error.lines();
    expected.push(format!(
        "-> read_file missing.md {{\"offset\":0}} error _ ms: {}",
        // The line's status says error; the text's own `error:` is left out.
        error_lines
            .next()
            .map(|line| line.strip_prefix("error: ").unwrap_or(line))
            .expect("a line")
    ));
    expected.extend(error_lines.map(|line| format!("   {line}")));
    assert_eq!(calls, expected);

    let shown = stdout_of(
        ws.toolhost()
            .args(["sessions", "show", "last", "--call", "c2"]),
    );
    let mut lines = shown.lines();
    assert_text(
        &masked_show(lines.next().expect("the call's line")),
        "call=c2 tool=read_file status=schema_violation bytes=158 fuel=_ mem=_ _ms: error: the \
         arguments for `read_file` do not match its input schema:...",
    );
    assert_eq!(
        lines.collect::<Vec<_>>().join("\n"),
        format!(
            "arguments:\n  {{\n    \"offset\": 0,\n    \"path\": \"missing.md\"\n  }}\ntext:\n{}",
            format!("error: {read_error}")
                .lines()
                .map(|line| format!("  {line}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    );
    let err = stderr_of_failure(
        ws.toolhost()
            .args(["sessions", "show", "last", "--call", "c9"]),
        1,
    );
    assert_text(
        &err,
        &format!(
            "error: session `{}` has no call `c9`: `toolhost sessions show last` lists each call \
             as `call=ID`\n",
            id_of(&session_files(&ws)[0])
        ),
    );
}

/// The system prompt a request sent, from the mock's record.
fn system_prompt(request: &super::common::mock_model::Recorded) -> String {
    request.body["messages"][0]["content"]
        .as_str()
        .expect("a system message")
        .to_string()
}

#[test]
fn agents_md_reaches_the_system_prompt_and_a_change_is_told_before_the_next_prompt() {
    let ws = Workspace::new();
    ws.write("AGENTS.md", "Run `make check` before you finish.\n");
    let mock = MockModel::start(vec![
        Reply::sse_body(openai_text("noted")),
        Reply::sse_body(openai_text("again")),
        Reply::sse_body(openai_text("bare")),
    ]);
    let stderr = run_openai(&ws, &mock, &["--model", "m", "first"]);
    let files = session_files(&ws);
    let start = &records(&files[0])[0];
    assert_eq!(
        start["project_instructions"],
        json!({
            "file": "AGENTS.md",
            "sha256": sha256_hex(b"Run `make check` before you finish.\n"),
            "bytes": 36,
            "cut": false,
        })
    );
    let system = system_prompt(&mock.requests()[0]);
    assert!(
        system.ends_with(
            "\n\n# Project instructions (from AGENTS.md in the workspace)\n\nRun `make check` \
             before you finish."
        ),
        "{system}"
    );
    assert_eq!(start["system_prompt"], system);
    assert!(!stderr.contains("warning"), "{stderr}");

    // A tool (or anyone) changes it: the resumed prompt says so first.
    ws.write("AGENTS.md", "Push to main when done.\n");
    let stderr = run_openai(&ws, &mock, &["--model", "m", "--resume", "last", "second"]);
    assert_text(
        stderr.lines().next().unwrap_or_default(),
        "warning: AGENTS.md changed since this session's previous prompt (a tool, or someone, \
         may have written it); the model gets the new text",
    );
    assert!(system_prompt(&mock.requests()[1]).ends_with("Push to main when done."));

    // Left out on request.
    run_openai(
        &ws,
        &mock,
        &[
            "--model",
            "m",
            "--no-session",
            "--no-project-instructions",
            "third",
        ],
    );
    assert!(!system_prompt(&mock.requests()[2]).contains("Project instructions"));
}

#[test]
fn an_agents_md_link_out_of_the_workspace_is_not_read() {
    let ws = Workspace::new();
    let outside = tempfile::tempdir().expect("temp dir");
    let key = outside.path().join("id_rsa");
    std::fs::write(&key, "PRIVATE KEY").expect("write");
    std::os::unix::fs::symlink(&key, ws.path().join("AGENTS.md")).expect("link");
    let mock = MockModel::start(vec![Reply::sse_body(openai_text("ok"))]);
    let stderr = run_openai(&ws, &mock, &["--model", "m", "--no-session", "hi"]);
    assert_text(
        &mask_prompt_times(&stderr),
        &ws.expand(
            "warning: {ws}/AGENTS.md was not read: it is a symbolic link that leads out of the \
             workspace, and toolhost reads instructions only from inside it; replace it with the \
             file itself; the run goes on without it\n\
             toolhost run · m (openai) · {ws} · 7 tools · no session file\n\
             1 turn(s) · 0 in / 0 out tokens · _ s\n",
        ),
    );
    let sent = mock.requests()[0].body.to_string();
    assert!(!sent.contains("PRIVATE KEY"), "{sent}");
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `toolhost sessions compact`: the model summarises the recorded session
/// (keeping the focus asked for), the record is appended, and the next
/// `--resume` sends the summary and the last turn only.
#[test]
fn sessions_compact_summarises_a_session_that_a_resume_then_continues() {
    let ws = Workspace::new();
    ws.write("one.txt", "first file line\n".repeat(1500));
    ws.write("two.txt", "second file line\n".repeat(1500));
    let mock = MockModel::start(vec![
        Reply::sse_body(openai_tool_call(
            "call_1",
            "read_file",
            &json!({"path": "one.txt"}),
        )),
        Reply::sse_body(openai_tool_call(
            "call_2",
            "read_file",
            &json!({"path": "two.txt"}),
        )),
        // The server counted a large prompt for the last reply: after the
        // compaction that count no longer holds, so a budget below it does
        // not stop the resumed run.
        Reply::sse_body(super::common::mock_model::openai_with_usage(
            &openai_text("Both read."),
            20_000,
            10,
        )),
        Reply::sse_body(openai_text("The user had both files read.")),
        Reply::sse_body(openai_text("Going on.")),
    ]);
    run_openai(&ws, &mock, &["--model", "m", "read both"]);
    let compact = |focus: &[&str]| {
        ws.toolhost()
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .args([
                "sessions",
                "compact",
                "last",
                "--provider",
                "openai",
                "--model",
                "m",
            ])
            .args(["--base-url", &format!("{}/v1", mock.url)])
            .args(focus)
            .output()
            .expect("sessions compact")
    };
    let output = compact(&["--focus", "the two files"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let digits = regex_lite_digits(&String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        digits,
        "compacting: the model is summarising the conversation so far\n\
         context compacted: Nk -> Nk tokens (N old tool result(s) set aside, N earlier entries \
         summarised)\n"
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let asked = requests[3].body.to_string();
    assert!(asked.contains("Focus on: the two files"), "{asked}");
    assert!(requests[3].body.get("tools").is_none(), "{asked}");

    let file = &session_files(&ws)[0];
    let compaction = records(file)
        .into_iter()
        .find(|r| r["type"] == "compaction")
        .expect("a compaction record");
    assert_eq!(compaction["reason"], "manual");
    assert_eq!(compaction["first_kept"], 5);
    assert_eq!(compaction["summary"], "The user had both files read.");
    let shown = stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
    assert!(
        shown.contains("\n  summary: The user had both files read.\n"),
        "{shown}"
    );
    assert!(!shown.contains("stop: none recorded"), "{shown}");

    run_openai(
        &ws,
        &mock,
        &[
            "--model",
            "m",
            "--resume",
            "last",
            "--max-tokens-total",
            "15000",
            "go on",
        ],
    );
    let sent: Vec<(String, String)> = mock.requests()[4].body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .map(|m| {
            let text = m["content"].as_str().unwrap_or_default();
            (
                m["role"].as_str().unwrap_or("?").to_owned(),
                text.chars().take(40).collect(),
            )
        })
        .collect();
    assert_eq!(
        sent,
        [
            (
                "user".to_owned(),
                "[toolhost replaced the earlier part of t".to_owned()
            ),
            ("assistant".to_owned(), "Both read.".to_owned()),
            ("user".to_owned(), "go on".to_owned()),
        ]
    );

    // Nothing left to compact: refused, with why.
    let output = compact(&[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Nothing was printed above it, so it says nothing of "above".
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.ends_with(
            "is unchanged: nothing before its last turn could be set aside or summarised: it is \
             too short, and holds no long tool result\n"
        ),
        "{stderr}"
    );
}

/// `text` with each run of digits as `N`.
fn regex_lite_digits(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// A repository can ship anything in `.toolhost/sessions/`: a FIFO there
/// blocked `toolhost sessions` (and `--resume` of it) for ever, and a link
/// there made toolhost read, show and resume a session file from anywhere
/// (another project's conversation, sent to the model). Only regular files
/// are read, opened without following a link and without blocking; the
/// others are listed as unreadable, and the good session still reads.
#[test]
fn a_shipped_fifo_or_link_in_the_sessions_directory_is_not_read() {
    let ws = Workspace::new();
    let elsewhere = tempfile::tempdir().expect("elsewhere");
    let secret = elsewhere.path().join("secret.jsonl");
    std::fs::write(
        &secret,
        format!(
            "{}\n",
            json!({"type": "session_start", "format": 1, "id": "secret", "at": "2026-01-01T00:00:00Z",
                   "prompt": "the other project's secret"})
        ),
    )
    .expect("secret session");
    ws.mkdir(".toolhost/sessions");
    let sessions = ws.path().join(".toolhost/sessions");
    std::os::unix::fs::symlink(&secret, sessions.join("link.jsonl")).expect("symlink");
    let made = Command::new("mkfifo")
        .arg(sessions.join("fifo.jsonl"))
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let mut list = ws.toolhost();
    list.arg("sessions");
    let listed = super::common::measure::run_measured(&list, Duration::from_secs(20));
    assert!(listed.elapsed < Duration::from_secs(10), "{listed:?}");
    let not_regular = "is not a regular file, so toolhost does not read it (a FIFO would block, \
                       a link could lead to any file): remove it";
    let rows: Vec<String> = listed
        .stdout()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    let mut rows = rows;
    rows.sort();
    assert_eq!(
        rows,
        [
            format!("unreadable: `./.toolhost/sessions/fifo.jsonl` {not_regular}"),
            format!("unreadable: `./.toolhost/sessions/link.jsonl` {not_regular}"),
        ]
    );
    let mut show = ws.toolhost();
    show.args(["sessions", "show", "link"]);
    let shown = super::common::measure::run_measured(&show, Duration::from_secs(20));
    assert_text(
        &shown.stderr(),
        &format!("error: `./.toolhost/sessions/link.jsonl` {not_regular}\n"),
    );
}

/// Found in review: a shipped `AGENTS.md -> .git/config` (inside the
/// workspace, so followed) put the repository's config, with any
/// credentials in a remote's URL, into the system prompt, even with reads
/// narrowed to `src`. A link is followed only to a Markdown file inside the
/// workspace outside hidden directories; `AGENTS.md -> CLAUDE.md` still is.
#[test]
fn an_agents_md_link_to_a_file_that_is_not_markdown_or_is_hidden_is_not_read() {
    let ws = Workspace::new();
    ws.write(
        ".git/config",
        "[remote \"origin\"]\n\turl = https://user:SECRET-TOKEN@example.com/r.git\n",
    );
    ws.write(".toolhost/notes.md", "SECRET-NOTES\n");
    ws.mkdir("src");
    std::fs::write(
        ws.user_config().join("config.toml"),
        "[defaults]\nread = [\"src\"]\n",
    )
    .expect("user config");
    for target in [".git/config", ".toolhost/notes.md", "src/../.git/config"] {
        let link = ws.path().join("AGENTS.md");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).expect("link");
        let mock = MockModel::start(vec![Reply::sse_body(openai_text("ok"))]);
        let stderr = run_openai(&ws, &mock, &["--model", "m", "--no-session", "hi"]);
        assert_text(
            &mask_prompt_times(&stderr),
            &ws.expand(
                "warning: {ws}/AGENTS.md was not read: it is a symbolic link to a file that is not \
                 a Markdown file (`*.md`) inside the workspace outside its hidden directories, \
                 and toolhost follows a link only to one; replace it with the file itself; the \
                 run goes on without it\n\
                 toolhost run · m (openai) · {ws} · 7 tools · no session file\n\
                 1 turn(s) · 0 in / 0 out tokens · _ s\n",
            ),
        );
        let sent = mock.requests()[0].body.to_string();
        assert!(!sent.contains("SECRET"), "{target}: {sent}");
    }
    // A link to a Markdown file of the project is followed.
    std::fs::remove_file(ws.path().join("AGENTS.md")).expect("remove");
    ws.write("docs/agents.md", "Use tabs.\n");
    std::os::unix::fs::symlink("docs/agents.md", ws.path().join("AGENTS.md")).expect("link");
    let mock = MockModel::start(vec![Reply::sse_body(openai_text("ok"))]);
    run_openai(&ws, &mock, &["--model", "m", "--no-session", "hi"]);
    assert!(mock.requests()[0].body.to_string().contains("Use tabs."));
}

/// Red team (issue 37): a shipped session file of 50 MB whose one record's
/// arguments are an array of 25M zeros (it gzips to about 100 KB) cost
/// 1.7 GB to `toolhost sessions` or `--resume`. A file's values are
/// counted before any record is built: the file is listed as unreadable
/// with the budget it passed, `--resume` refuses it naming the file, both
/// in bounded memory, and a good session is still listed and resumes.
#[test]
fn a_shipped_session_of_twenty_five_million_zeros_is_refused_before_it_is_parsed() {
    let ws = Workspace::new();
    ws.write("s.json", json!({"turns": [{"text": "hi"}]}).to_string());
    ws.toolhost()
        .args(["run", "--script", "s.json", "good"])
        .assert()
        .success();
    // The good session's start, as a shipped file would copy it.
    let good = session_files(&ws).pop().expect("the good session");
    let mut start = records(&good)[0].clone();
    start["id"] = json!("zeros");
    start["prompt"] = json!("zeros");
    let mut text = format!("{start}\n");
    text.push_str(r#"{"type":"tool_execution_start","at":"2026-01-01T00:00:01Z","call_id":"c1","tool":"read_file","arguments":{"pad":[0"#);
    text.push_str(&",0".repeat(25_000_000));
    text.push_str("]}}\n");
    ws.write(".toolhost/sessions/zeros.jsonl", &text);
    drop(text);
    let over = "holds more than 2000000 JSON values (scalars, strings, keys, arrays and objects \
                together) by its line 2, more than toolhost parses of one session file (it may \
                have come with the repository); move it away, or delete it";

    let mut list = ws.toolhost();
    list.arg("sessions");
    let listed = super::common::measure::run_measured(&list, Duration::from_secs(60));
    eprintln!(
        "`toolhost sessions` of a 50 MB file of zeros: {:?}, peak RSS {} MiB",
        listed.elapsed,
        listed.peak_rss >> 20
    );
    assert!(listed.status.success(), "{listed:?}");
    let stdout = listed.stdout();
    assert!(
        stdout.contains(&format!(
            "unreadable: `./.toolhost/sessions/zeros.jsonl` {over}\n"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("good"), "{stdout}");
    assert!(
        listed.peak_rss < 200 << 20,
        "peak RSS {} MiB",
        listed.peak_rss >> 20
    );

    let mut resume = ws.toolhost();
    resume.args(["run", "--resume", "zeros", "--script", "s.json", "x"]);
    let resumed = super::common::measure::run_measured(&resume, Duration::from_secs(60));
    eprintln!(
        "`--resume` of it: {:?}, peak RSS {} MiB",
        resumed.elapsed,
        resumed.peak_rss >> 20
    );
    assert_eq!(resumed.status.code(), Some(1), "{resumed:?}");
    assert_text(
        &resumed.stderr(),
        &ws.expand(&format!(
            "error: `{{ws}}/.toolhost/sessions/zeros.jsonl` {over}\n"
        )),
    );
    assert!(
        resumed.peak_rss < 200 << 20,
        "peak RSS {} MiB",
        resumed.peak_rss >> 20
    );
    // The good session resumes.
    ws.toolhost()
        .args([
            "run",
            "--resume",
            &id_of(&good),
            "--script",
            "s.json",
            "more",
        ])
        .assert()
        .success();
}

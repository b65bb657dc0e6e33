//! `toolhost chat` in a real pseudo-terminal, with the scripted model: what
//! the screen shows (as a terminal would, through vt100) after each key.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::pty::{Pty, script};
use super::common::{Workspace, mask_between, test_plugins};

#[test]
fn a_prompt_a_steer_while_a_tool_runs_a_command_and_ctrl_d() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    let script = script(
        &ws,
        json!([
            {"text": "Sleeping first.", "tool_calls": [{"name": "sleep", "arguments": {"ms": 1500}}]},
            {"text": "Noted: {last_user}"},
        ]),
    );
    let mut chat = Pty::spawn(&ws, &["chat", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("start\r");
    chat.wait_for("running sleep");
    chat.keys("use tabs\r");
    chat.wait_for("Noted: use tabs");
    chat.wait_for("ready");
    let screen = chat.text();
    let shown: Vec<String> = screen
        .lines()
        .skip_while(|line| !line.starts_with("> start"))
        .take(6)
        .map(|line| match line.contains("tokens · ") {
            true => mask_between(line.trim_end(), "tokens · ", " s", "_"),
            false => line.trim_end().to_string(),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "> start",
            "Sleeping first.",
            "-> sleep {\"ms\":1500} ok 7 B",
            "> (steer) use tabs",
            "Noted: use tabs",
            "2 turn(s) · 0 in / 0 out tokens · _ s",
        ],
        "{screen}"
    );
    chat.keys("/session\r");
    chat.wait_for("session ");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

/// A running tool's latest progress line shows while it runs: in the
/// chat's status line, and as `run`'s live line on a terminal, gone once
/// the call ends.
#[test]
fn a_running_tools_latest_line_shows_live_in_chat_and_run() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let call = json!({"name": "echo", "arguments": {
        "text": "done", "progress": ["step 1", "step 2 \x1b[2J\n\n"], "pause_ms": 1500
    }});
    let script = script(&ws, json!([{"tool_calls": [call]}, {"text": "Echoed."}]));
    let mut chat = Pty::spawn(&ws, &["chat", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("go\r");
    chat.wait_for("running echo · echo: step 1");
    chat.wait_for("running echo · echo: step 2 \\x1b[2J");
    chat.wait_for("Echoed.");
    assert!(!chat.text().contains("\x1b[2J"), "{}", chat.text());
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));

    let run = Pty::spawn(&ws, &["run", "--script", &script, "go"]);
    run.wait_for("echo: step 1");
    run.wait_for("echo: step 2 \\x1b[2J");
    run.wait_for("Echoed.");
    let (code, screen) = run.exit_code_and_screen();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        !screen.contains("echo: step"),
        "the live line stays:\n{screen}"
    );
    assert!(
        !screen.contains("\x1b[2J") && screen.contains("-> echo"),
        "{screen}"
    );
}

/// The loop's demo with the `bash` tool, run on a terminal: a command's
/// lines show under the spinner while it runs, and go when it ends.
#[test]
fn a_bash_command_s_lines_show_live_in_run() {
    let ws = Workspace::new();
    ws.write("loop.ts", "// TODO: stop after max turns\n");
    ws.write("tools.ts", "// TODO: more tools\n");
    let slow = "for f in *.ts; do echo \"checking $f\"; sleep 0.6; done";
    let script = script(
        &ws,
        json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": "ls *.ts"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": slow}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "grep -nH TODO loop.ts tools.ts"}}]},
            {"text": "Two TODOs."},
        ]),
    );
    let run = Pty::spawn(&ws, &["run", "--script", &script, "go"]);
    run.wait_for("bash: checking loop.ts");
    run.wait_for("bash: checking tools.ts");
    run.wait_for("Two TODOs.");
    let (code, screen) = run.exit_code_and_screen();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        !screen.contains("bash: checking"),
        "the live line stays:\n{screen}"
    );
    assert!(
        screen.contains("-> bash {\"command\":\"grep -nH TODO loop.ts tools.ts\"} ok"),
        "{screen}"
    );
}

#[test]
fn esc_stops_the_turn_and_puts_the_queued_follow_up_back_in_the_input() {
    let ws = Workspace::new();
    let script = script(
        &ws,
        json!([
            {"delay_ms": 30000, "text": "never shown"},
            {"text": "After: {last_user}"},
        ]),
    );
    let mut chat = Pty::spawn(&ws, &["chat", "--no-session", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("go\r");
    chat.wait_for("waiting for the model");
    chat.keys("later\x1b\r");
    chat.wait_for("queued follow-up: later");
    chat.keys("\x1b");
    chat.wait_for("stopped: aborted");
    chat.wait_for("› later");
    chat.keys("\r");
    chat.wait_for("After: later");
    assert!(!chat.text().contains("never shown"));
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

#[test]
fn ctrl_c_twice_quits_with_130_and_chat_needs_a_terminal() {
    let ws = Workspace::new();
    let script = script(&ws, json!([]));
    let mut chat = Pty::spawn(&ws, &["chat", "--no-session", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("typed");
    chat.keys("\x03");
    chat.keys("\x03");
    assert_eq!(chat.exit_code(), Some(130));

    let output = ws
        .toolhost()
        .args(["chat", "--no-session", "--script", &script])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    super::common::assert_text(
        &String::from_utf8_lossy(&output.stderr),
        "error: `toolhost chat` needs a terminal on stdin and stdout; from a script or an \
         editor, use `toolhost run --input-format stream-json`\n",
    );
}

#[test]
fn a_bracketed_paste_is_one_message_and_up_brings_it_back() {
    let ws = Workspace::new();
    let script = script(
        &ws,
        json!([
            {"text": "Got: {last_user}"},
            {"text": "Again: {last_user}"},
        ]),
    );
    let mut chat = Pty::spawn(&ws, &["chat", "--no-session", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    // A paste's line break does not send it; Enter does.
    chat.keys("\x1b[200~first line\nsecond line\x1b[201~");
    chat.wait_for("  second line");
    chat.keys("\r");
    chat.wait_for("Got: first line");
    chat.wait_for("ready");
    let screen = chat.text();
    let shown: Vec<&str> = screen
        .lines()
        .skip_while(|line| !line.starts_with("> first line"))
        .take(4)
        .map(str::trim_end)
        .collect();
    assert_eq!(
        shown,
        [
            "> first line",
            "  second line",
            "Got: first line",
            "second line"
        ],
        "{screen}"
    );
    chat.keys("\x1b[A");
    chat.wait_for("› first line");
    chat.keys("\r");
    chat.wait_for("Again: first line");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

#[test]
fn clear_starts_a_new_conversation_in_a_new_session_file() {
    let ws = Workspace::new();
    let script = script(
        &ws,
        json!([
            {"text": "First: {last_user}"},
            {"text": "Second: {last_user}"},
        ]),
    );
    let mut chat = Pty::spawn(&ws, &["chat", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("one\r");
    chat.wait_for("First: one");
    chat.wait_for("ready");
    chat.keys("/clear\r");
    chat.wait_for("a new conversation, in session ");
    chat.keys("two\r");
    chat.wait_for("Second: two");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));

    let mut prompts: Vec<Vec<String>> = session_records(&ws)
        .iter()
        .map(|records| {
            records
                .iter()
                .filter(|record| record["message"]["role"] == "user")
                .map(|record| {
                    record["message"]["text"]
                        .as_str()
                        .unwrap_or("?")
                        .to_string()
                })
                .collect()
        })
        .collect();
    // Two files made in the same second sort by their ids' random part.
    prompts.sort();
    assert_eq!(prompts, [["one"], ["two"]]);
}

/// A chat opened and closed without a prompt leaves no session file, nor
/// does a `/clear` that no prompt followed; used sessions stay.
#[test]
fn a_chat_without_a_prompt_leaves_no_session() {
    let ws = Workspace::new();
    let script = script(&ws, json!([{"text": "First: {last_user}"}]));
    let chat = Pty::spawn(&ws, &["chat", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    let mut chat = chat;
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
    let sessions = ws.path().join(".toolhost/sessions");
    let count = || std::fs::read_dir(&sessions).map_or(0, |dir| dir.count());
    assert_eq!(count(), 0);

    let mut chat = Pty::spawn(&ws, &["chat", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("one\r");
    chat.wait_for("First: one");
    chat.wait_for("ready");
    chat.keys("/clear\r");
    chat.wait_for("a new conversation, in session ");
    chat.keys("/clear\r");
    chat.wait_for("ready");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
    let prompts: Vec<usize> = session_records(&ws).iter().map(Vec::len).collect();
    assert_eq!(
        prompts.len(),
        1,
        "only the used session is kept: {prompts:?}"
    );
}

/// A terminal that never answers where its cursor is (some do not):
/// the chat still opens, under what was printed, and works.
#[test]
fn a_terminal_that_does_not_say_where_its_cursor_is_still_chats() {
    let ws = Workspace::new();
    let script = script(&ws, json!([{"text": "Heard: {last_user}"}]));
    let mut chat = Pty::spawn_answering(&ws, &["chat", "--no-session", "--script", &script], false);
    chat.wait_for("Ctrl+D quits");
    chat.keys("hello\r");
    chat.wait_for("Heard: hello");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

/// Tab completes a slash command: to the one it names, as far as several
/// agree, then lists them.
#[test]
fn tab_completes_a_slash_command() {
    let ws = Workspace::new();
    let script = script(&ws, json!([]));
    let mut chat = Pty::spawn(&ws, &["chat", "--no-session", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("/gr\t");
    chat.wait_for("› /grants");
    chat.keys("\r");
    chat.wait_for("nothing allowed in this session");
    chat.keys("/al\t");
    chat.wait_for("› /allow");
    chat.keys("\t");
    chat.wait_for("/allow  /allow-exec  /allow-net  /allow-read");
    chat.keys("\x15\x04");
    assert_eq!(chat.exit_code(), Some(0));
}

/// The session files of `ws`, each as its records.
fn session_records(ws: &Workspace) -> Vec<Vec<Value>> {
    let dir = ws.path().join(".toolhost/sessions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("sessions")
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| {
            std::fs::read_to_string(file)
                .expect("session file")
                .lines()
                .map(|line| serde_json::from_str::<Value>(line).expect("a record"))
                .collect()
        })
        .collect()
}

#[test]
fn model_switches_the_next_request_and_is_refused_while_a_turn_runs() {
    use super::common::mock_model::{MockModel, Reply, openai_text};
    let ws = Workspace::new();
    let mock = MockModel::start(vec![
        Reply::sse_body(openai_text("from the first")).after(Duration::from_millis(1500)),
        Reply::sse_body(openai_text("from the second")),
    ]);
    let url = mock.openai_url();
    let mut chat = Pty::spawn(
        &ws,
        &[
            "chat",
            "--provider",
            "openai",
            "--base-url",
            &url,
            "--model",
            "first-model",
        ],
    );
    chat.wait_for("Ctrl+D quits");
    chat.keys("one\r");
    chat.wait_for("waiting for the model");
    chat.keys("/model second-model\r");
    chat.wait_for("/model waits for the turn to end: Esc stops it");
    chat.wait_for("from the first");
    chat.wait_for("ready");
    chat.keys("/model second-model\r");
    chat.wait_for("the model is second-model (openai) from the next prompt on");
    chat.keys("two\r");
    chat.wait_for("from the second");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));

    let models: Vec<Value> = mock
        .requests()
        .iter()
        .map(|request| request.body["model"].clone())
        .collect();
    assert_eq!(models, [json!("first-model"), json!("second-model")]);
    // The session file says which model each prompt went to, so `--resume`
    // goes on with the second.
    let records = session_records(&ws);
    assert_eq!(records.len(), 1);
    let shape: Vec<String> = records[0]
        .iter()
        .filter_map(|record| match record["type"].as_str() {
            Some("session_start") => Some(format!(
                "start {} resumed={}",
                record["model"], record["resumed"]
            )),
            Some("message") if record["message"]["role"] == "user" => {
                Some(format!("user {}", record["message"]["text"]))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        shape,
        [
            "start \"first-model\" resumed=false",
            "user \"one\"",
            "start \"second-model\" resumed=true",
            "user \"two\"",
        ]
    );
}

#[test]
fn resume_lists_the_sessions_and_continues_one_in_the_chat() {
    let ws = Workspace::new();
    let earlier = script(&ws, json!([{"text": "Earlier answer."}]));
    let output = ws
        .toolhost()
        .args(["run", "--script", &earlier, "an earlier task"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0));
    let files: Vec<_> = std::fs::read_dir(ws.path().join(".toolhost/sessions"))
        .expect("sessions")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1);
    let id = files[0]
        .file_stem()
        .expect("a name")
        .to_string_lossy()
        .into_owned();

    let script = script(&ws, json!([{"text": "Continued: {last_user}"}]));
    let mut chat = Pty::spawn(&ws, &["chat", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("/resume\r");
    chat.wait_for("/resume ID continues one");
    assert!(
        chat.text()
            .contains(&format!("{id}  1 turn(s)  an earlier task")),
        "{}",
        chat.text()
    );
    chat.keys("/resume last\r");
    chat.wait_for("the next prompt continues it");
    assert!(
        chat.text()
            .contains(&format!("resumed session {id}: 2 message(s)")),
        "{}",
        chat.text()
    );
    chat.keys("and now\r");
    chat.wait_for("Continued: and now");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));

    // The earlier session's file holds both prompts; the chat's own file,
    // left before its first prompt, holds none.
    let file = ws.path().join(format!(".toolhost/sessions/{id}.jsonl"));
    let texts: Vec<String> = std::fs::read_to_string(file)
        .expect("session file")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a record"))
        .filter(|record| record["type"] == "message")
        .map(|record| {
            let message = &record["message"];
            let text = match message["role"].as_str() {
                Some("assistant") => &message["blocks"][0]["text"],
                _ => &message["text"],
            };
            format!("{} {}", message["role"], text)
        })
        .collect();
    assert_eq!(
        texts,
        [
            "\"user\" \"an earlier task\"",
            "\"assistant\" \"Earlier answer.\"",
            "\"user\" \"and now\"",
            "\"assistant\" \"Continued: and now\"",
        ]
    );
}

#[test]
fn compact_sets_old_results_aside_and_summarises_between_prompts() {
    let ws = Workspace::new();
    ws.write("one.txt", "first file line\n".repeat(1500));
    ws.write("two.txt", "second file line\n".repeat(1500));
    let script = script(
        &ws,
        json!([
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "one.txt"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "two.txt"}}]},
            {"text": "Both read."},
            {"text": "The user asked for one.txt and two.txt to be read; both were."},
        ]),
    );
    let mut chat = Pty::spawn(&ws, &["chat", "--script", &script]);
    chat.wait_for("Ctrl+D quits");
    chat.keys("/compact\r");
    chat.wait_for("nothing to compact: the conversation before the last turn is too short");
    chat.keys("read them\r");
    chat.wait_for("Both read.");
    chat.wait_for("ready");
    chat.keys("/compact the two files\r");
    chat.wait_for("(1 old tool result(s) set aside, 5 earlier entries summarised)");
    chat.keys("\x04");
    assert_eq!(chat.exit_code(), Some(0));

    let records = session_records(&ws);
    let compactions: Vec<&Value> = records[0]
        .iter()
        .filter(|record| record["type"] == "compaction")
        .collect();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["reason"], "manual");
    assert_eq!(compactions[0]["first_kept"], 5);
    assert_eq!(
        compactions[0]["summary"],
        "The user asked for one.txt and two.txt to be read; both were."
    );
    assert_eq!(compactions[0]["masked"][0]["message"], 2);
}

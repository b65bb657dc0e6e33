//! `toolhost run` through the real binary with the scripted provider: every
//! stop reason and its exit code, the output formats, the offline demo, and
//! hostile tools inside a run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::mock_model::{MockModel, Reply, expected, sse};
use super::common::{
    Workspace, assert_text, copy_dir, mask_between, stderr_of_failure, stdout_of, stream_json_run,
    test_plugins,
};

/// Writes `turns` as a script into the workspace and returns its path.
fn script(ws: &Workspace, turns: Value) -> String {
    ws.write("script.json", json!({ "turns": turns }).to_string())
        .display()
        .to_string()
}

/// A run's stderr with the parts that differ from run to run masked: the
/// session id (in the header and twice in the `session ...` line) as `ID`,
/// each tool call line's duration (`ok 12 ms`) and the prompt's time in its
/// summary line as `_`.
fn masked(stderr: &str) -> String {
    let stderr = if stderr.contains("\nsession ") {
        let once = mask_between(stderr, "\nsession ", " (", "ID");
        mask_between(&once, "--resume ", " ", "ID")
    } else {
        stderr.to_string()
    };
    stderr
        .split_inclusive('\n')
        .map(|line| {
            if line.starts_with("-> ") {
                mask_call_time(line)
            } else if line.starts_with("toolhost run · ") && line.contains(" · session ") {
                mask_between(line, " · session ", "\n", "ID")
            } else if line.contains(" out tokens · ") {
                mask_between(line, " out tokens · ", " s\n", "_")
            } else {
                line.to_string()
            }
        })
        .collect()
}

/// A call line with its duration (the number after ` ok ` or ` error `
/// and before ` ms`) masked as `_`.
fn mask_call_time(line: &str) -> String {
    for status in [" ok ", " error "] {
        for (at, _) in line.match_indices(status) {
            let rest = &line[at + status.len()..];
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits > 0 && rest[digits..].starts_with(" ms") {
                return format!("{}_{}", &line[..at + status.len()], &rest[digits..]);
            }
        }
    }
    line.to_string()
}

fn read_call(id: &str, path: &str) -> Value {
    json!({"id": id, "name": "read_file", "arguments": {"path": path}})
}

#[test]
fn a_reply_without_tool_calls_completes_with_exit_0() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let script = script(
        &ws,
        json!([
            {"text": "Reading.", "tool_calls": [read_call("c1", "a.txt")]},
            {"text": "It says alpha."}
        ]),
    );
    let output = ws
        .toolhost()
        .args(["run", "--script", &script, "what is in a.txt?"])
        .output()
        .expect("run");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Reading.\nIt says alpha.\n"
    );
    assert_text(
        &masked(&String::from_utf8_lossy(&output.stderr)),
        &ws.expand(&format!(
            "toolhost run · scripted · {{ws}} · 7 tools · session ID\n\
             -> read_file a.txt ok _ ms 13 B\n\
             2 turn(s) · 0 in / 0 out tokens · _ s\n\
             session ID (continue it with `toolhost --workspace {{ws}} run --resume ID --script \
             {script} \"...\"`)\n"
        )),
    );
}

#[test]
fn max_turns_exits_3_and_fills_pending_calls() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let script = script(&ws, json!([{"tool_calls": [read_call("c1", "a.txt")]}]));
    let err = stderr_of_failure(
        ws.toolhost()
            .args(["run", "--max-turns", "1", "--script", &script, "go"]),
        3,
    );
    assert_text(
        &masked(&err),
        &ws.expand(&format!(
            "toolhost run · scripted · {{ws}} · 7 tools · session ID\n\
             -> read_file error: (not executed: reached max turns)\n\
             1 turn(s) · 0 in / 0 out tokens · _ s\n\
             session ID (continue it with `toolhost --workspace {{ws}} run --resume ID --script \
             {script} \"...\"`)\n\
             stopped: max_turns after 1 turn(s): reached the limit of 1 turns with 1 tool call(s) \
             pending\n"
        )),
    );
}

#[test]
fn repeating_the_same_call_exits_4() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let turns: Vec<Value> = (1..=6)
        .map(|n| json!({"tool_calls": [read_call(&format!("c{n}"), "a.txt")]}))
        .collect();
    let script = script(&ws, Value::Array(turns));
    let out = ws
        .toolhost()
        .args(["run", "--output-format", "json", "--script", &script, "go"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["stop"]["reason"], "loop_detected");
    assert_eq!(doc["turns"], 5);
}

#[test]
fn a_script_that_runs_out_is_an_error_with_exit_1() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let script = script(&ws, json!([{"tool_calls": [read_call("c1", "a.txt")]}]));
    let err = stderr_of_failure(ws.toolhost().args(["run", "--script", &script, "go"]), 1);
    assert_text(
        &masked(&err),
        &ws.expand(&format!(
            "toolhost run · scripted · {{ws}} · 7 tools · session ID\n\
             -> read_file a.txt ok _ ms 13 B\n\
             1 turn(s) · 0 in / 0 out tokens · _ s\n\
             session ID (continue it with `toolhost --workspace {{ws}} run --resume ID --script \
             {script} \"...\"`)\n\
             stopped: error after 1 turn(s): script `{script}`: the script has 1 turn(s) and the \
             run asked for turn 2; add turns or lower --max-turns\n"
        )),
    );
}

#[test]
fn a_missing_model_or_prompt_is_a_usage_error() {
    let ws = Workspace::new();
    let advice = |command: &str| {
        format!(
            "error: no model configured: pass `--provider openai --model NAME` (OPENAI_API_KEY; \
             OPENAI_BASE_URL or --base-url for Ollama, vLLM, llama.cpp), `--provider anthropic \
             --model NAME` (ANTHROPIC_API_KEY), or `--script FILE` to play a scripted model \
             offline (try it here: `echo '{{\"turns\": [{{\"text\": \"Hello from a scripted \
             model.\"}}]}}' > hello.json`, then `{command}`)\n"
        )
    };
    let err = stderr_of_failure(ws.toolhost().args(["run", "hello"]), 2);
    assert_text(&err, &advice("toolhost run --script hello.json \"hi\""));
    // Pasted as it says, from this directory, it runs.
    std::fs::write(
        ws.path().join("hello.json"),
        r#"{"turns": [{"text": "Hello from a scripted model."}]}"#,
    )
    .expect("write");
    let out = super::common::stdout_of(ws.toolhost().args(["run", "--script", "hello.json", "hi"]));
    assert!(out.contains("Hello from a scripted model."), "{out}");
    // Run from a path that is not on PATH, the hint names that path.
    let bin = assert_cmd::cargo::cargo_bin("toolhost");
    let out = ws
        .toolhost_process()
        .env("PATH", "/usr/bin:/bin")
        .args(["run", "hello"])
        .output()
        .expect("run");
    assert_text(
        &String::from_utf8_lossy(&out.stderr),
        &advice(&format!("{} run --script hello.json \"hi\"", bin.display())),
    );
    let err = stderr_of_failure(
        ws.toolhost().args(["run", "--provider", "openai", "hello"]),
        2,
    );
    assert_text(
        &err,
        "error: no model name: pass --model NAME (e.g. gpt-4o, claude-sonnet-4-5, qwen2.5-coder) \
         or set `name` under [model] in toolhost.toml\n",
    );
    let script = script(&ws, json!([{"text": "hi"}]));
    let err = stderr_of_failure(ws.toolhost().args(["run", "--script", &script, ""]), 2);
    assert_text(
        &err,
        "error: no prompt: pass the task as an argument, or `-` to read it from stdin\n",
    );
    let err = stderr_of_failure(
        ws.toolhost().args(["run", "--script", "nope.json", "go"]),
        1,
    );
    assert_text(
        &err,
        &ws.expand("error: script `nope.json`: cannot read it: {not_found}\n"),
    );
}

/// Against the vendor's own API a missing key stops the run before any
/// request (it used to be sent anyway and retried five times).
#[test]
fn a_missing_key_for_the_vendors_api_stops_the_run_at_once() {
    let ws = Workspace::new();
    for (provider, model, key_env, url) in [
        (
            "openai",
            "gpt-4o",
            "OPENAI_API_KEY",
            "https://api.openai.com/v1",
        ),
        (
            "anthropic",
            "claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
            "https://api.anthropic.com",
        ),
    ] {
        let started = Instant::now();
        let err = stderr_of_failure(
            ws.toolhost()
                .env_remove(key_env)
                .env_remove("OPENAI_BASE_URL")
                .args(["run", "--provider", provider, "--model", model, "hello"]),
            1,
        );
        let took = started.elapsed();
        assert_eq!(
            err,
            format!(
                "error: no API key for `{provider}` at {url}: set the environment variable \
                 {key_env} (`export {key_env}=...`); a server at --base-url may need none\n"
            )
        );
        assert!(took < Duration::from_secs(3), "{provider}: took {took:?}");
    }
}

#[test]
fn the_prompt_can_come_from_stdin_and_json_output_is_one_object() {
    let ws = Workspace::new();
    let script = script(&ws, json!([{"text": "Hello."}]));
    let out = stdout_of(
        ws.toolhost()
            .args(["run", "--output-format", "json", "--script", &script])
            .write_stdin("say hello"),
    );
    let doc: Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(doc["final_text"], "Hello.");
    assert_eq!(doc["stop"]["reason"], "completed");
    assert_eq!(doc["turns"], 1);
}

#[test]
fn stream_json_prints_one_event_per_line() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    ws.write("b.txt", "beta\n");
    // A lone call, then two read-only calls that run together, then text.
    let script = script(
        &ws,
        json!([
            {"tool_calls": [read_call("c1", "a.txt")]},
            {"tool_calls": [read_call("c2", "a.txt"), read_call("c3", "b.txt")]},
            {"text": "done"}
        ]),
    );
    let events = stream_json_run(&ws, &script);

    // The order, tool executions aside (concurrent calls may interleave).
    let outline: Vec<String> = events
        .iter()
        .filter(|e| {
            !e["type"]
                .as_str()
                .expect("type")
                .starts_with("tool_execution_")
        })
        .map(|e| match e["type"].as_str().expect("type") {
            "message" => format!("message:{}", e["message"]["role"].as_str().expect("role")),
            "turn_start" | "turn_end" => {
                format!("{}:{}", e["type"].as_str().expect("type"), e["turn"])
            }
            other => other.to_string(),
        })
        .collect();
    assert_eq!(
        outline,
        [
            "agent_start",
            "message:user",
            "turn_start:1",
            "message:assistant",
            "message:tool_results",
            "turn_end:1",
            "turn_start:2",
            "message:assistant",
            "message:tool_results",
            "turn_end:2",
            "turn_start:3",
            "message:assistant",
            "turn_end:3",
            "agent_end",
        ]
    );

    // Each call of a reply starts once and ends once, by `call_id`, between
    // the reply and its results, which answer the calls in order.
    let mut calls: Vec<String> = Vec::new();
    let mut started: Vec<String> = Vec::new();
    let mut ended: Vec<String> = Vec::new();
    let mut executed = 0;
    for event in &events {
        let call_id = || event["call_id"].as_str().expect("call_id").to_string();
        match event["type"].as_str().expect("type") {
            "message" if event["message"]["role"] == "assistant" => {
                calls = event["message"]["blocks"]
                    .as_array()
                    .expect("blocks")
                    .iter()
                    .filter(|b| b["type"] == "tool_call")
                    .map(|b| b["id"].as_str().expect("id").to_string())
                    .collect();
                started.clear();
                ended.clear();
            }
            "tool_execution_start" => {
                let id = call_id();
                assert!(calls.contains(&id), "{id} is not a call of the last reply");
                assert!(!started.contains(&id), "{id} started twice");
                assert_eq!(event["tool"], "read_file");
                started.push(id);
            }
            "tool_execution_end" => {
                let id = call_id();
                assert!(started.contains(&id), "{id} ended before it started");
                assert!(!ended.contains(&id), "{id} ended twice");
                assert_eq!(event["is_error"], false, "{event}");
                ended.push(id);
                executed += 1;
            }
            "message" if event["message"]["role"] == "tool_results" => {
                let answered: Vec<&str> = event["message"]["results"]
                    .as_array()
                    .expect("results")
                    .iter()
                    .map(|r| r["call_id"].as_str().expect("call_id"))
                    .collect();
                assert_eq!(answered, calls, "results answer the calls in order");
                started.sort();
                ended.sort();
                let mut expected = calls.clone();
                expected.sort();
                assert_eq!((&started, &ended), (&expected, &expected));
            }
            _ => {}
        }
    }
    assert_eq!(executed, 3);
    assert_eq!(
        events.last().expect("agent_end")["stop"]["reason"],
        "completed"
    );
}

#[test]
fn a_tools_progress_messages_become_update_events() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let script = script(
        &ws,
        json!([{"tool_calls": [{"id": "e1", "name": "echo", "arguments": {"text": "hi"}}]}, {"text": "done"}]),
    );
    let update = stream_json_run(&ws, &script)
        .into_iter()
        .find(|event| event["type"] == "tool_execution_update")
        .expect("an update event");
    assert_eq!(
        update,
        json!({"type": "tool_execution_update", "call_id": "e1", "tool": "echo", "message": "echoing"})
    );
}

#[test]
fn hostile_tools_in_a_run_become_error_results_and_the_run_completes() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    ws.write(
        "toolhost.toml",
        "[tools.sleep.limits]\ntimeout_ms = 300\n[tools.spin.limits]\nfuel = 20_000_000\n",
    );
    let script = script(
        &ws,
        json!([
            {"tool_calls": [
                {"id": "t1", "name": "sleep", "arguments": {"ms": 60000}},
                {"id": "t2", "name": "spin", "arguments": {}}
            ]},
            {"text": "Both tools failed; stopping here."}
        ]),
    );
    let events = stream_json_run(&ws, &script);
    let results = events
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "tool_results")
        .expect("a tool results message");
    let results = results["message"]["results"].as_array().expect("results");
    assert_eq!(results[0]["call_id"], "t1");
    assert_eq!(results[0]["is_error"], true);
    assert_text(
        results[0]["text"].as_str().expect("text"),
        "error: `sleep` did not finish within its time limit of 300 ms and was stopped. Ask for \
         less work in one call, or do not call it again with the same arguments.",
    );
    assert_eq!(results[1]["call_id"], "t2");
    assert_text(
        results[1]["text"].as_str().expect("text"),
        "error: `spin` ran out of fuel (its budget is 20000000 instructions) and was stopped. Ask \
         for less work in one call (a narrower path, a smaller limit).",
    );
    let end = events.last().expect("agent_end");
    assert_eq!(end["stop"]["reason"], "completed");
    assert_eq!(end["stop"]["turns"], 2);
}

#[test]
fn the_offline_demo_runs_recovers_from_a_denied_edit_and_completes() {
    let ws = Workspace::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/demo");
    copy_dir(&demo, ws.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scripts/demo.json");
    let output = ws
        .toolhost()
        .args(["run", "--script"])
        .arg(&script)
        .arg("Review the demo project")
        .output()
        .expect("run the demo");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_text(
        &masked(&stderr),
        &ws.expand(&format!(
            "toolhost run · scripted · {{ws}} · 7 tools · session ID\n\
             -> list_files {{}} ok _ ms 63 B\n\
             -> read_file src/greet.py ok _ ms 247 B\n\
             -> search_text src {{\"pattern\":\"TODO\"}} ok _ ms 48 B\n\
             -> edit_file src/greet.py {{\"new_string\":\"    if not name:\\n        name = \
             \\\"stranger\\\"... error _ ms: access denied: `edit_file` may not write \
             `src/greet.py`: it is outside the directories this tool may write: `notes` \
             (read-write). Use a path inside one of them.\n\
             -> write_file notes/review.md {{\"content\":\"# Review of greeter\\n\\nstatus: \
             draft\\n\\n- src/gr... ok _ ms 37 B\n\
             -> edit_file notes/review.md {{\"new_string\":\"status: ready for the \
             maintainer\",\"old_string... ok _ ms 42 B\n\
             6 turn(s) · 0 in / 0 out tokens · _ s\n\
             session ID (continue it with `toolhost --workspace {{ws}} run --resume ID --script \
             {} \"...\"`)\n",
            script.display()
        )),
    );
    assert_text(
        &String::from_utf8_lossy(&output.stdout),
        "I'll start by looking at the project layout.\n\
         Now the code, and any open TODOs.\n\
         The TODO asks to handle an empty name. I'll fix it in place.\n\
         I may not write under src/: edit_file may write only under notes/. I'll record the fix as \
         a review note there instead.\n\
         Done. The project has one open TODO (src/greet.py:5, empty names). I was not allowed to \
         edit src/, so I wrote the finding and a suggested fix to notes/review.md.\n",
    );
    assert!(
        ws.read("notes/review.md")
            .contains("status: ready for the maintainer")
    );
    assert!(
        ws.read("src/greet.py")
            .contains("# TODO: handle an empty name"),
        "src/ must be untouched"
    );
}

#[test]
fn an_openai_compatible_server_drives_a_run_and_sees_the_tool_results() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![
        sse("openai-chat-tool-single-fragmented"),
        sse("openai-chat-text-usage-done"),
    ]);
    let output = ws
        .toolhost()
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .args([
            "run",
            "--provider",
            "openai",
            "--model",
            "gpt-4o",
            "--base-url",
        ])
        .arg(format!("{}/v1", mock.url))
        .args(["--output-format", "json", "what is the weather?"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(doc["stop"]["reason"], "completed");
    assert_eq!(doc["turns"], 2);
    assert_eq!(
        doc["final_text"],
        expected("openai-chat-text-usage-done")["text"]
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let second = &requests[1].body;
    let messages = second["messages"].as_array().expect("messages");
    let n = messages.len();
    // The assistant's tool call is replayed, then answered by its id; the
    // unknown tool came back as an error the model can read.
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert_eq!(
        messages[n - 2]["tool_calls"][0]["id"],
        "call_c91SqDXlYFuETYv8mUHzz6pp"
    );
    assert_eq!(messages[n - 1]["role"], "tool");
    assert_eq!(
        messages[n - 1]["tool_call_id"],
        "call_c91SqDXlYFuETYv8mUHzz6pp"
    );
    assert_text(
        messages[n - 1]["content"].as_str().expect("content"),
        "error: there is no tool named `GetWeatherArgs`. Available tools: `bash`, `edit_file`, \
         `fetch`, `list_files`, `read_file`, `search_text`, `write_file`.",
    );
    assert_eq!(messages[0]["role"], "system");
    assert!(
        second["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["function"]["name"] == "read_file")
    );
}

#[test]
fn an_anthropic_server_drives_a_run() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![sse("anthropic-messages-text-ping")]);
    let output = ws
        .toolhost()
        .env_remove("ANTHROPIC_API_KEY")
        .args([
            "run",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--base-url",
            &mock.url,
            "hi",
        ])
        .output()
        .expect("run");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = expected("anthropic-messages-text-ping")["text"]
        .as_str()
        .expect("text")
        .to_string();
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("{text}{newline}"),
        "the reply's text, once"
    );
    let requests = mock.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].body["model"], "claude-sonnet-4-5");
    assert_eq!(requests[0].body["stream"], true);
}

#[test]
fn the_model_can_be_configured_in_toolhost_toml() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![
        sse("ollama-chat-parallel-tools-whole-args"),
        sse("openai-chat-text-usage-done"),
    ]);
    ws.write(
        "toolhost.toml",
        format!(
            "[model]\nprovider = \"openai\"\nname = \"qwen2.5-coder\"\nbase_url = \"{}/v1\"\n",
            mock.url
        ),
    );
    let output = ws
        .toolhost()
        .env_remove("OPENAI_API_KEY")
        .args(["run", "go"])
        .output()
        .expect("run");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(mock.requests()[0].body["model"], "qwen2.5-coder");
}

#[test]
fn reply_text_streams_as_it_arrives_and_is_printed_once() {
    let text = expected("openai-chat-text-usage-done")["text"]
        .as_str()
        .expect("text")
        .to_string();
    let ws = Workspace::new();

    let mock = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let base_url = format!("{}/v1", mock.url);
    let run = [
        "run",
        "--provider",
        "openai",
        "--model",
        "gpt-4o",
        "--base-url",
        base_url.as_str(),
    ];
    let out = stdout_of(
        ws.toolhost()
            .env_remove("OPENAI_API_KEY")
            .args(run)
            .arg("hi"),
    );
    assert_eq!(out, format!("{text}\n"));

    let mock = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let base_url = format!("{}/v1", mock.url);
    let run = [
        "run",
        "--provider",
        "openai",
        "--model",
        "gpt-4o",
        "--base-url",
        base_url.as_str(),
    ];
    let out = stdout_of(ws.toolhost().env_remove("OPENAI_API_KEY").args(run).args([
        "--output-format",
        "stream-json",
        "hi",
    ]));
    let deltas: Vec<String> = out
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("json line"))
        .filter(|event| event["type"] == "message_delta")
        .map(|event| event["text"].as_str().expect("delta text").to_string())
        .collect();
    assert!(
        deltas.len() > 10,
        "the fixture streams its text in many pieces: {deltas:?}"
    );
    assert_eq!(deltas.concat(), text);
}

/// A retried model request is an event like any other: stream-json shows it
/// between the turn's start and its reply, and the session file records it
/// from that event in its `retry` record (format 1).
#[test]
fn a_retry_is_a_stream_json_event_in_order_and_a_session_record() {
    let ws = Workspace::new();
    let busy = Reply::Status {
        status: 503,
        headers: vec![("retry-after", "0".into())],
        body: "busy".into(),
    };
    let mock = MockModel::start(vec![busy, sse("openai-chat-text-usage-done")]);
    let out = stdout_of(
        ws.toolhost()
            .env_remove("OPENAI_API_KEY")
            .args(["run", "--provider", "openai", "--model", "m", "--base-url"])
            .arg(format!("{}/v1", mock.url))
            .args(["--output-format", "stream-json", "hi"]),
    );
    let events: Vec<Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().expect("type"))
        .filter(|kind| *kind != "message_delta")
        .collect();
    assert_eq!(
        kinds,
        [
            "agent_start",
            "message",
            "turn_start",
            "model_retry",
            "message",
            "turn_end",
            "agent_end"
        ]
    );
    let retry = events
        .iter()
        .find(|e| e["type"] == "model_retry")
        .expect("a retry event");
    let url = format!("{}/v1/chat/completions", mock.url);
    assert_eq!(
        *retry,
        json!({
            "type": "model_retry",
            "attempt": 1,
            "wait_ms": 0,
            "reason": format!("`openai` at {url} answered HTTP 503: busy"),
        })
    );

    let dir = ws.path().join(".toolhost/sessions");
    let file = std::fs::read_dir(&dir)
        .expect("sessions dir")
        .next()
        .expect("one session")
        .expect("entry")
        .path();
    let records: Vec<Value> = std::fs::read_to_string(file)
        .expect("session file")
        .lines()
        .map(|line| serde_json::from_str(line).expect("json record"))
        .collect();
    let retry = records
        .iter()
        .find(|r| r["type"] == "retry")
        .expect("a retry record");
    assert!(retry["at"].is_string(), "{retry}");
    assert_eq!(
        (&retry["attempt"], &retry["wait_ms"], &retry["reason"]),
        (
            &json!(1),
            &json!(0),
            &json!(format!("`openai` at {url} answered HTTP 503: busy"))
        )
    );
}

#[test]
fn a_spinner_shows_on_a_terminal_while_the_model_thinks() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![
        sse("openai-chat-text-usage-done").after(Duration::from_millis(800)),
    ]);
    let toolhost = assert_cmd::cargo::cargo_bin("toolhost");
    let command = format!(
        "{} run --provider openai --model gpt-4o --base-url {}/v1 hi",
        toolhost.display(),
        mock.url
    );
    // `script` gives the command a terminal, as a user's shell would.
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(ws.path())
        .env("TOOLHOST_CACHE_DIR", super::common::shared_cache())
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run under script");
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{screen}");
    assert!(screen.contains("waiting for the model"), "{screen}");
}

#[test]
fn loop_detection_thresholds_come_from_flags() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let turns: Vec<Value> = (1..=4)
        .map(|n| json!({"tool_calls": [read_call(&format!("c{n}"), "a.txt")]}))
        .collect();
    let script = script(&ws, Value::Array(turns));
    let out = ws
        .toolhost()
        .args([
            "run",
            "--loop-warn-after",
            "2",
            "--loop-stop-after",
            "3",
            "--output-format",
            "stream-json",
        ])
        .args(["--script", &script, "go"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "tool_results")
        .map(|e| &e["message"]["results"][0])
        .collect();
    assert_eq!(results.len(), 3);
    assert_text(
        results[0]["text"].as_str().expect("text"),
        "     1\talpha\n",
    );
    assert_text(
        results[1]["text"].as_str().expect("text"),
        "     1\talpha\n\n\n(warning: you have called `read_file` with the same arguments 2 \
         times in a row; the result will not change. Try a different approach; at 3 identical \
         calls in a row the run stops.)",
    );
    assert_eq!(events.last().expect("end")["stop"]["turns"], 3);

    let err = stderr_of_failure(
        ws.toolhost()
            .args(["run", "--loop-stop-after", "0", "--script", &script, "go"]),
        2,
    );
    assert_text(
        &err,
        "error: --loop-warn-after and --loop-stop-after must be at least 1\n",
    );
}

/// The usual first mistake with a local server: it is not running. A
/// `--base-url` alone picks the OpenAI-compatible API; the refusal says
/// what to check, once, and the retries after it do not repeat it.
#[test]
fn a_refused_local_server_says_what_to_check_once() {
    let ws = Workspace::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let output = ws
        .toolhost()
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .args(["run", "--no-session", "--model", "llama3"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}/v1"), "hi"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Waits vary with jitter: `in 0.3 s` -> `in _ s`.
    let lines: Vec<String> = stderr
        .lines()
        .map(|line| match line.split_once(" in ") {
            Some((head, rest)) if head == "retrying the model request" => {
                format!("{head} in _{}", &rest[rest.find(" s ").expect("seconds")..])
            }
            _ if line.contains(" out tokens · ") => {
                mask_between(line, " out tokens · ", " s", "_")
            }
            _ => line.to_string(),
        })
        .collect();
    let refused = format!(
        "cannot reach `openai` at http://127.0.0.1:{port}/v1/chat/completions: connection \
         refused: nothing listens there; is the server running (for Ollama, `ollama serve`), and \
         are the host and port right?"
    );
    assert_eq!(
        lines,
        [
            ws.expand("toolhost run · llama3 (openai) · {ws} · 7 tools · no session file"),
            format!("retrying the model request in _ s (retry 1): {refused}"),
            "retrying the model request in _ s (retry 2): the same again".into(),
            "retrying the model request in _ s (retry 3): the same again".into(),
            "retrying the model request in _ s (retry 4): the same again".into(),
            "0 turn(s) · 0 in / 0 out tokens · _ s".into(),
            format!(
                "stopped: error after 0 turn(s): `openai` failed 5 times; last error: {refused}"
            ),
        ]
    );
}

/// Runs `cmd` with stdout and stderr in files of `ws`, sends it SIGINT
/// (what Ctrl+C sends) once `ready` holds, and returns its exit code,
/// stdout and stderr.
fn interrupted(
    ws: &Workspace,
    cmd: &assert_cmd::Command,
    ready: impl Fn() -> bool,
) -> (Option<i32>, String, String) {
    let out = std::fs::File::create(ws.path().join("stdout.txt")).expect("stdout file");
    let err = std::fs::File::create(ws.path().join("stderr.txt")).expect("stderr file");
    let mut std_cmd = Command::new(cmd.get_program());
    std_cmd.args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => std_cmd.env(key, value),
            None => std_cmd.env_remove(key),
        };
    }
    let mut child = std_cmd
        .current_dir(ws.path())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("spawn toolhost");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "never ready:\nstdout: {}\nstderr: {}",
            ws.read("stdout.txt"),
            ws.read("stderr.txt")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = i32::try_from(child.id()).expect("pid");
    let sent = Instant::now();
    // SAFETY: kill(2) on our own child's pid has no memory effects.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
    (status.code(), ws.read("stdout.txt"), ws.read("stderr.txt"))
}

/// Ctrl+C stops a running tool within a tick: exit 130, the call's line
/// and the stop line, each ended, so the shell's prompt starts a line of
/// its own.
#[test]
fn ctrl_c_aborts_a_running_tool_with_exit_130() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    let script = script(
        &ws,
        json!([{"text": "appending", "tool_calls": [{"id": "s1", "name": "append_then_sleep",
            "arguments": {"path": "out/log.txt", "ms": 60000}}]}]),
    );
    ws.mkdir("out");
    // Warm the compile cache so the run reaches the tool quickly.
    stdout_of(ws.toolhost().arg("tools"));
    let mut run = ws.toolhost();
    run.args([
        "--allow-write",
        "out",
        "run",
        "--no-session",
        "--script",
        &script,
        "go",
    ]);
    // The tool appends its line, then sleeps.
    let log = ws.path().join("out/log.txt");
    let (code, stdout, stderr) = interrupted(&ws, &run, || {
        std::fs::read_to_string(&log).unwrap_or_default() == "ran\n"
    });
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(stdout, "appending\n");
    assert_text(
        &masked(&stderr),
        &ws.expand(
            "toolhost run · scripted · {ws} · 23 tools · no session file\n\
         -> append_then_sleep out/log.txt {\"ms\":60000} error _ ms: `append_then_sleep` \
         was cancelled by the user before it finished.\n\
         1 turn(s) · 0 in / 0 out tokens · _ s\n\
         stopped: aborted after 1 turn(s): cancelled while tools were running\n",
        ),
    );
}

/// Ctrl+C while the model's reply streams: the text so far ends its line
/// on stdout before the stop line, rather than leaving the stop line (or
/// the shell's prompt) to continue it.
#[test]
fn ctrl_c_mid_reply_ends_the_reply_s_line() {
    let ws = Workspace::new();
    // A reply cut off mid-line by Ctrl+C.
    let chunk = json!({"id": "1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me look"},
        "finish_reason": null}]});
    let body = format!("data: {chunk}\n\n");
    let mock = MockModel::start(vec![Reply::Sse {
        pieces: 1,
        end: super::common::mock_model::End::StallAfter(body.len()),
        body: body.into_bytes(),
    }]);
    let mut run = ws.toolhost();
    run.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .args(["run", "--no-session", "--model", "m", "--base-url"])
        .arg(mock.openai_url())
        .arg("look");
    let (code, stdout, stderr) = interrupted(&ws, &run, || ws.read("stdout.txt") == "Let me look");
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(stdout, "Let me look\n");
    assert_text(
        &masked(&stderr),
        &ws.expand(
            "toolhost run · m (openai) · {ws} · 7 tools · no session file\n\
             0 turn(s) · 0 in / 0 out tokens · _ s\n\
             stopped: aborted after 0 turn(s): cancelled while the model was replying\n",
        ),
    );
}

/// A reply of 600 read-only calls once started them all at once: past the
/// engine's pool, valid calls failed as "`read_file` crashed: maximum
/// concurrent limit ... This is a bug in the tool" (427 of 600, not the same
/// ones each time). Now the first [`CALLS_PER_REPLY`] run (waiting for a
/// pool slot, never failing for want of one), each call past the cap is
/// answered with the cap and what to do, and the run goes on: a good call
/// in the next reply still works.
#[test]
fn a_reply_of_600_calls_runs_up_to_the_cap_and_tells_the_model_why_not_the_rest() {
    const CALLS: usize = 600;
    const CALLS_PER_REPLY: usize = 64;
    let ws = Workspace::new();
    for i in 0..CALLS {
        ws.write(&format!("f{i:03}.txt"), format!("file {i}\n"));
    }
    let burst: Vec<Value> = (0..CALLS)
        .map(|i| read_call(&format!("c{i}"), &format!("f{i:03}.txt")))
        .collect();
    let script = script(
        &ws,
        json!([
            {"tool_calls": burst},
            {"tool_calls": [read_call("after", "f001.txt")]},
            {"text": "done"}
        ]),
    );
    let results: Vec<Vec<Value>> = stream_json_run(&ws, &script)
        .into_iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "tool_results")
        .map(|e| e["message"]["results"].as_array().expect("results").clone())
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    let (burst, after) = (&results[0], &results[1]);
    assert_eq!(burst.len(), CALLS);
    let cap_text = format!(
        "(not executed: this reply asked for {CALLS} tool calls and at most {CALLS_PER_REPLY} \
         run per reply; the first {CALLS_PER_REPLY} ran. Ask for at most {CALLS_PER_REPLY} \
         calls in one reply and make this one again in your next reply if you still need it.)"
    );
    for (i, result) in burst.iter().enumerate() {
        assert_eq!(result["call_id"], format!("c{i}"));
        if i < CALLS_PER_REPLY {
            assert_eq!(result["is_error"], false, "call {i}: {result}");
            let text = result["text"].as_str().expect("text");
            assert!(text.contains(&format!("file {i}\n")), "call {i}: {text}");
        } else {
            assert_eq!(result["is_error"], true, "call {i}: {result}");
            assert_eq!(result["text"], cap_text.as_str(), "call {i}");
        }
    }
    assert_eq!(after.len(), 1);
    assert_eq!(after[0]["is_error"], false, "{}", after[0]);
    assert!(
        after[0]["text"]
            .as_str()
            .expect("text")
            .contains("file 1\n"),
        "{}",
        after[0]
    );
}

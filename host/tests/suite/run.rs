//! `toolhost run` through the real binary with the scripted provider: every
//! stop reason and its exit code, the output formats, the offline demo, and
//! hostile tools inside a run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::{Workspace, stderr_of_failure, stdout_of};

/// Writes `turns` as a script into the workspace and returns its path.
fn script(ws: &Workspace, turns: Value) -> String {
    ws.write("script.json", json!({ "turns": turns }).to_string())
        .display()
        .to_string()
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
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("-> read_file {\"path\":\"a.txt\"} ok"),
        "{stderr}"
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
    assert!(
        err.contains("-> read_file  error: (not executed: reached max turns)"),
        "{err}"
    );
    assert!(err.contains("stopped: max_turns after 1 turn(s)"), "{err}");
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
    assert!(
        err.contains("stopped: error after 1 turn(s): script `"),
        "{err}"
    );
    assert!(
        err.contains("has 1 turn(s) and the run asked for turn 2"),
        "{err}"
    );
}

#[test]
fn a_missing_model_or_prompt_is_a_usage_error() {
    let ws = Workspace::new();
    let err = stderr_of_failure(ws.toolhost().args(["run", "hello"]), 2);
    assert!(
        err.starts_with("error: no model configured: pass `--provider scripted --script FILE`"),
        "{err}"
    );
    let script = script(&ws, json!([{"text": "hi"}]));
    let err = stderr_of_failure(ws.toolhost().args(["run", "--script", &script, ""]), 2);
    assert!(err.contains("no prompt"), "{err}");
    let err = stderr_of_failure(
        ws.toolhost().args(["run", "--script", "nope.json", "go"]),
        1,
    );
    assert!(err.contains("script `nope.json`: cannot read it"), "{err}");
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
    let script = script(
        &ws,
        json!([{"tool_calls": [read_call("c1", "a.txt")]}, {"text": "done"}]),
    );
    let out = stdout_of(ws.toolhost().args([
        "run",
        "--output-format",
        "stream-json",
        "--script",
        &script,
        "go",
    ]));
    let types: Vec<String> = out
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).expect("each line is JSON")["type"]
                .as_str()
                .expect("type")
                .to_string()
        })
        .collect();
    assert_eq!(types.first().map(String::as_str), Some("agent_start"));
    assert_eq!(types.last().map(String::as_str), Some("agent_end"));
    for expected in [
        "turn_start",
        "message",
        "tool_execution_start",
        "tool_execution_end",
        "turn_end",
    ] {
        assert!(
            types.iter().any(|t| t == expected),
            "{expected} missing from {types:?}"
        );
    }
}

#[test]
fn hostile_tools_in_a_run_become_error_results_and_the_run_completes() {
    let ws = Workspace::new();
    ws.install_plugin("hostile", "hostile.wasm");
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
    let out = stdout_of(ws.toolhost().args([
        "run",
        "--output-format",
        "stream-json",
        "--script",
        &script,
        "go",
    ]));
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let results = events
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "tool_results")
        .expect("a tool results message");
    let results = results["message"]["results"].as_array().expect("results");
    assert_eq!(results[0]["call_id"], "t1");
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["text"]
            .as_str()
            .expect("text")
            .contains("did not finish within its time limit of 300 ms")
    );
    assert_eq!(results[1]["call_id"], "t2");
    assert!(
        results[1]["text"]
            .as_str()
            .expect("text")
            .contains("ran out of fuel")
    );
    let end = events.last().expect("agent_end");
    assert_eq!(end["stop"]["reason"], "completed");
    assert_eq!(end["stop"]["turns"], 2);
}

#[test]
fn ctrl_c_aborts_a_running_tool_with_exit_130() {
    let ws = Workspace::new();
    ws.install_plugin("hostile", "hostile.wasm");
    let script = script(
        &ws,
        json!([{"tool_calls": [{"id": "s1", "name": "sleep", "arguments": {"ms": 60000}}]}]),
    );
    // Warm the compile cache so the run reaches the tool quickly.
    stdout_of(ws.toolhost().arg("tools"));
    let child = Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
        .current_dir(ws.path())
        .env("TOOLHOST_CACHE_DIR", super::common::shared_cache())
        .args(["run", "--script", &script, "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolhost");
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let output = child.wait_with_output().expect("wait");
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(output.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("-> sleep {\"ms\":60000} error"), "{stderr}");
    assert!(stderr.contains("was cancelled by the user"), "{stderr}");
    assert!(
        stderr.contains("stopped: aborted after 1 turn(s)"),
        "{stderr}"
    );
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
    assert!(
        stderr.contains("-> edit_file")
            && stderr.contains("error: access denied: `edit_file` may not write `src/greet.py`"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).ends_with("a suggested fix to notes/review.md.\n")
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

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read demo dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else if entry.file_name() != "review.md" {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

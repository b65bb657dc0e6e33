//! Context and cost through the real binary against the local mock model
//! server: prompt-cache breakpoints on what Anthropic is sent, and the
//! tokens each reply reports (cache reads and writes apart) summed where
//! the user reads them.

use serde_json::{Value, json};

use super::common::mock_model::{MockModel, Reply, anthropic_text, anthropic_tool_call};
use super::common::{Workspace, assert_text, mask_prompt_times};

/// Where a request carries `cache_control`: the paths of the marked
/// objects.
fn breakpoints(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if map.contains_key("cache_control") {
                found.push(path.to_string());
            }
            for (key, inner) in map {
                breakpoints(inner, &format!("{path}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (n, inner) in items.iter().enumerate() {
                breakpoints(inner, &format!("{path}/{n}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn anthropic_requests_carry_cache_breakpoints_and_cache_tokens_are_summed() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![
        Reply::sse_body(anthropic_tool_call(
            "toolu_1",
            "list_files",
            &json!({}),
            &json!({"input_tokens": 50, "cache_creation_input_tokens": 1200,
                    "cache_read_input_tokens": 0, "output_tokens": 10}),
        )),
        Reply::sse_body(anthropic_text(
            "Two files.",
            &json!({"input_tokens": 20, "cache_creation_input_tokens": 90,
                    "cache_read_input_tokens": 1200, "output_tokens": 5}),
        )),
        Reply::sse_body(anthropic_text(
            "Again.",
            &json!({"input_tokens": 7, "cache_read_input_tokens": 1300, "output_tokens": 2}),
        )),
    ]);
    ws.write("a.txt", "a");
    let output = ws
        .toolhost()
        .env_remove("ANTHROPIC_API_KEY")
        .args([
            "run",
            "--no-session",
            "--provider",
            "anthropic",
            "--model",
            "claude-test",
        ])
        .args(["--base-url", &mock.anthropic_url(), "list the files"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let summary = stderr
        .lines()
        .find(|line| line.contains(" turn(s) · "))
        .expect("the summary line");
    assert_text(
        &mask_prompt_times(summary),
        "2 turn(s) · 70 in + 1200 cache read + 1290 cache write / 15 out tokens · _ s",
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for (n, request) in requests.iter().enumerate() {
        let mut found = Vec::new();
        breakpoints(&request.body, "", &mut found);
        let messages = request.body["messages"].as_array().expect("messages").len() - 1;
        let tools = request.body["tools"].as_array().expect("tools").len() - 1;
        assert_eq!(
            found,
            [
                format!("/messages/{messages}/content/0"),
                "/system/0".to_string(),
                format!("/tools/{tools}"),
            ],
            "request {n}"
        );
    }

    let output = ws
        .toolhost()
        .env_remove("ANTHROPIC_API_KEY")
        .args([
            "run",
            "--no-session",
            "--output-format",
            "json",
            "--provider",
            "anthropic",
        ])
        .args([
            "--model",
            "claude-test",
            "--base-url",
            &mock.anthropic_url(),
            "again",
        ])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(
        doc["usage"],
        json!({"input_tokens": 7, "cache_read_tokens": 1300, "cache_write_tokens": 0,
               "output_tokens": 2})
    );
}

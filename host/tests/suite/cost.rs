//! Context and cost through the real binary against the local mock model
//! server: prompt-cache breakpoints on what Anthropic is sent, and the
//! tokens each reply reports (cache reads and writes apart) summed where
//! the user reads them.

use serde_json::{Value, json};

use super::common::mock_model::{
    MockModel, Reply, anthropic_text, anthropic_tool_call, toolhost_run,
};
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
    let output = toolhost_run(&ws)
        .args([
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

    let output = toolhost_run(&ws)
        .args([
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

#[test]
fn a_token_budget_stops_the_run_before_the_request_that_would_pass_it() {
    use super::common::mock_model::{openai_text, openai_tool_call, openai_with_usage};
    let ws = Workspace::new();
    ws.write("a.txt", "a");
    // Each reply reports its usage; the first asks for a tool, so a second
    // request would follow: the 5,100 tokens of the first again, and the
    // result's, over a budget of 8,000. The first request (the system
    // prompt and the tools' schemas, about 2,000 tokens as the paths in
    // the prompt go) is well under it wherever the tests run.
    let mock = MockModel::start(vec![
        Reply::sse_body(openai_with_usage(
            &openai_tool_call("call_1", "list_files", &json!({})),
            5000,
            100,
        )),
        Reply::sse_body(openai_with_usage(&openai_text("never sent"), 6200, 10)),
    ]);
    let output = toolhost_run(&ws)
        .args([
            "--no-session",
            "--output-format",
            "json",
            "--provider",
            "openai",
        ])
        .args(["--model", "m", "--base-url", &mock.openai_url()])
        .args(["--max-tokens-total", "8000", "list the files"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(5), "{output:?}");
    assert_eq!(mock.requests().len(), 1, "the second request was not sent");
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    let evidence = doc["stop"]["evidence"].as_str().expect("evidence");
    assert_text(
        &super::common::mask_between(evidence, "(about ", " tokens)", "_"),
        "the next model request (about _ tokens) would pass the run's budget of 8000 tokens; \
         5100 spent so far (5000 in / 100 out tokens)",
    );
    assert_eq!(doc["stop"]["reason"], "budget_exhausted");
    assert_eq!(doc["turns"], 1);

    // A budget the first request alone would pass sends nothing.
    let output = toolhost_run(&ws)
        .args(["--no-session", "--provider", "openai", "--model", "m"])
        .args(["--base-url", &mock.openai_url(), "--max-tokens-total", "10"])
        .arg("x".repeat(100))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(5));
    assert_eq!(mock.requests().len(), 1);
}

#[test]
fn a_model_that_never_answers_stops_the_run_at_the_request_deadline() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::Hang]);
    let started = std::time::Instant::now();
    let output = toolhost_run(&ws)
        .args([
            "--no-session",
            "--output-format",
            "json",
            "--provider",
            "openai",
        ])
        .args(["--model", "m", "--base-url", &mock.openai_url()])
        .args(["--request-timeout", "2", "hello?"])
        .output()
        .expect("run");
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(6), "{output:?}");
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(doc["stop"]["reason"], "request_timeout");
    assert_text(
        &super::common::mask_between(
            doc["stop"]["evidence"].as_str().expect("evidence"),
            "after ",
            " s,",
            "_",
        ),
        "the model request was still unanswered after _ s, past the deadline of 2 s \
         (--request-timeout); nothing of its reply is kept",
    );
}

#[test]
fn the_context_window_is_asked_of_a_local_server_or_configured_and_recorded() {
    use super::common::mock_model::openai_text;
    let ws = Workspace::new();
    let window_of_last_session = || -> Value {
        let dir = ws.path().join(".toolhost/sessions");
        let newest = std::fs::read_dir(&dir)
            .expect("sessions")
            .map(|entry| entry.expect("entry").path())
            .max_by_key(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok())
            .expect("a session file");
        let first = std::fs::read_to_string(newest).expect("session file");
        let start: Value =
            serde_json::from_str(first.lines().next().expect("a line")).expect("JSON");
        start["context_window"].clone()
    };
    let run = |mock: &MockModel, extra: &[&str]| {
        let output = toolhost_run(&ws)
            .args(["--provider", "openai", "--model", "qwen"])
            .args(["--base-url", &mock.openai_url()])
            .args(extra)
            .arg("hi")
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };

    // vLLM: the model list names each model's window.
    let vllm = MockModel::start(vec![Reply::sse_body(openai_text("hello"))]);
    vllm.answer_get(
        "/v1/models",
        &json!({"object": "list", "data": [{"id": "qwen", "object": "model",
                "owned_by": "vllm", "max_model_len": 32768}]}),
    );
    run(&vllm, &[]);
    assert_eq!(
        window_of_last_session(),
        json!({"tokens": 32768, "source": "server"})
    );

    // llama.cpp: its properties, beside /v1.
    let llama = MockModel::start(vec![Reply::sse_body(openai_text("hello"))]);
    llama.answer_get(
        "/props",
        &json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}),
    );
    run(&llama, &[]);
    assert_eq!(
        window_of_last_session(),
        json!({"tokens": 4096, "source": "server"})
    );

    // Said on the command line, nothing is asked.
    let said = MockModel::start(vec![Reply::sse_body(openai_text("hello"))]);
    said.answer_get(
        "/props",
        &json!({"default_generation_settings": {"n_ctx": 4096}}),
    );
    run(&said, &["--context-window", "20000"]);
    assert_eq!(
        window_of_last_session(),
        json!({"tokens": 20000, "source": "configured"})
    );

    // A server that tells nothing: no window recorded.
    let silent = MockModel::start(vec![Reply::sse_body(openai_text("hello"))]);
    run(&silent, &[]);
    assert_eq!(window_of_last_session(), Value::Null);

    // Said in toolhost.toml, nothing is asked either.
    ws.write("toolhost.toml", "[model]\ncontext_window = 12345\n");
    let configured = MockModel::start(vec![Reply::sse_body(openai_text("hello"))]);
    configured.answer_get(
        "/props",
        &json!({"default_generation_settings": {"n_ctx": 4096}}),
    );
    run(&configured, &[]);
    assert_eq!(
        window_of_last_session(),
        json!({"tokens": 12345, "source": "configured"})
    );
}

#[test]
fn a_server_that_cuts_the_prompt_without_saying_so_is_told_of_once() {
    use super::common::mock_model::{openai_text, openai_with_usage};
    let ws = Workspace::new();
    // Ollama's OpenAI endpoint keeps the end of a prompt that does not fit
    // num_ctx and reports what it kept.
    let mock = MockModel::start(vec![Reply::sse_body(openai_with_usage(
        &openai_text("I see the end only."),
        2048,
        3,
    ))]);
    let prompt = "review this: ".to_string() + &"lorem ipsum dolor sit amet ".repeat(2000);
    let output = toolhost_run(&ws)
        .args([
            "--no-session",
            "--provider",
            "openai",
            "--model",
            "llama3.2",
        ])
        .args(["--base-url", &mock.openai_url(), &prompt])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<String> = stderr
        .lines()
        .filter(|line| line.starts_with("warning: "))
        .map(|line| super::common::mask_between(line, "about ", " were", "_"))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: the model server counted 2048 prompt tokens where about _ were sent: it \
          seems to have cut the conversation to fit its context window, so the model did not see \
          all of it. Ollama does this without an error: raise its context (e.g. \
          `OLLAMA_CONTEXT_LENGTH=32768 ollama serve`, or `PARAMETER num_ctx 32768` in a \
          Modelfile)"
        ]
    );
}

/// The tool results of an OpenAI request, in order: the text, or `stub`.
fn results_sent(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let text = m["content"].as_str().unwrap_or("");
            if text.starts_with("[toolhost set this result aside") {
                format!("{}: stub", m["tool_call_id"].as_str().unwrap_or("?"))
            } else {
                format!(
                    "{}: {} bytes",
                    m["tool_call_id"].as_str().unwrap_or("?"),
                    text.len()
                )
            }
        })
        .collect()
}

/// Two files of about 30 KB in `ws`, and the two OpenAI replies that read
/// them one after the other (calls `call_1`, `call_2`).
fn two_large_files_read(ws: &Workspace) -> [Reply; 2] {
    use super::common::mock_model::openai_tool_call;
    ws.write("one.txt", "first file line\n".repeat(1500));
    ws.write("two.txt", "second file line\n".repeat(1500));
    ["one.txt", "two.txt"].map(|path| {
        let id = if path == "one.txt" {
            "call_1"
        } else {
            "call_2"
        };
        Reply::sse_body(openai_tool_call(id, "read_file", &json!({"path": path})))
    })
}

#[test]
fn an_overflow_sets_old_results_aside_and_the_request_goes_again() {
    use super::common::mock_model::{openai_text, overflow_body, status};
    let ws = Workspace::new();
    let [first, second] = two_large_files_read(&ws);
    let mock = MockModel::start(vec![
        first,
        second,
        status(400, &overflow_body("llamacpp-exceed-context-size")),
        Reply::sse_body(openai_text("Both read.")),
        Reply::sse_body(openai_text("Still here.")),
    ]);
    let run = |prompt: &str, extra: &[&str]| {
        toolhost_run(&ws)
            .args(["--provider", "openai", "--model", "m"])
            .args(["--base-url", &mock.openai_url()])
            .args(extra)
            .arg(prompt)
            .output()
            .expect("run")
    };
    let output = run("read both files", &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("\ncontext compacted: 13k -> 6k tokens (1 old tool result(s) set aside)\n"),
        "{stderr}"
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let whole = results_sent(&requests[2].body);
    assert!(whole.iter().all(|r| !r.ends_with("stub")), "{whole:?}");
    // Sent again with the older result set aside, the newer one whole.
    let compacted = results_sent(&requests[3].body);
    assert_eq!(compacted, ["call_1: stub".to_string(), whole[1].clone()]);
    let stub = requests[3].body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["tool_call_id"] == "call_1")
        .and_then(|m| m["content"].as_str())
        .expect("the stub")
        .to_string();
    let saved = stub
        .split('`')
        .find(|part| part.starts_with(".toolhost/outputs/"))
        .expect("the saved file's name");
    assert!(
        std::fs::read_to_string(ws.path().join(saved))
            .expect("the saved text")
            .contains("first file line"),
    );

    // The session file keeps the record; a resume sends the same ledger.
    let output = run("and now?", &["--resume", "last"]);
    assert_eq!(output.status.code(), Some(0));
    let requests = mock.requests();
    assert_eq!(results_sent(&requests[4].body), compacted);
}

#[test]
fn an_overflow_that_compaction_cannot_cure_ends_the_run_with_what_to_do() {
    use super::common::mock_model::{openai_tool_call, overflow_body, status};
    let ws = Workspace::new();
    ws.write("one.txt", "first file line\n".repeat(1500));
    let overflow = overflow_body("llamacpp-exceed-context-size");
    let mock = MockModel::start(vec![
        Reply::sse_body(openai_tool_call(
            "call_1",
            "read_file",
            &json!({"path": "one.txt"}),
        )),
        status(400, &overflow),
        status(400, &overflow),
        status(400, &overflow),
    ]);
    let output = toolhost_run(&ws)
        .args([
            "--no-session",
            "--output-format",
            "json",
            "--provider",
            "openai",
        ])
        .args(["--model", "m", "--base-url", &mock.openai_url(), "read it"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    // The only result is the latest batch's: nothing to set aside, so the
    // overflowing request is not sent again.
    assert_eq!(mock.requests().len(), 2);
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(
        doc["stop"]["evidence"],
        "the conversation no longer fits the model's context window (13392 tokens; the window \
         holds 8192) and nothing old enough was left to set aside or summarise: start a new session (/clear \
         in a chat), or use a model with a larger window"
    );
}

#[test]
fn a_known_window_compacts_before_the_request_would_overflow() {
    use super::common::mock_model::openai_text;
    let ws = Workspace::new();
    let [first, second] = two_large_files_read(&ws);
    let mock = MockModel::start(vec![
        first,
        second,
        Reply::sse_body(openai_text("Both read.")),
    ]);
    let output = toolhost_run(&ws)
        .args([
            "--provider",
            "openai",
            "--model",
            "m",
            "--context-window",
            "16000",
        ])
        .args(["--base-url", &mock.openai_url(), "read both files"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "no request overflowed");
    assert_eq!(results_sent(&requests[1].body), ["call_1: 30877 bytes"]);
    let third = results_sent(&requests[2].body);
    assert_eq!(third[0], "call_1: stub", "{third:?}");
    // Under the window, with the reply's room kept.
    let sent = requests[2].body.to_string().len() / 4;
    assert!(sent + 4000 < 16000, "{sent}");

    let session = std::fs::read_dir(ws.path().join(".toolhost/sessions"))
        .expect("sessions")
        .next()
        .expect("a file")
        .expect("entry")
        .path();
    let compactions: Vec<Value> = std::fs::read_to_string(session)
        .expect("session")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON"))
        .filter(|record| record["type"] == "compaction")
        .collect();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["reason"], "threshold");
    assert_eq!(compactions[0]["masked"][0]["call_id"], "call_1");
    assert_eq!(compactions[0]["masked"][0]["message"], 2);
}

/// The same recovery with each wire API's overflow: OpenAI's and
/// Anthropic's refusals are read as llama.cpp's is.
#[test]
fn openai_and_anthropic_overflows_are_recovered_too() {
    use super::common::mock_model::{
        anthropic_text, openai_text, openai_tool_call, overflow_body, status,
    };
    for (api, body) in [
        ("openai", "openai-context-length-exceeded"),
        ("anthropic", "anthropic-prompt-too-long"),
    ] {
        let ws = Workspace::new();
        ws.write("one.txt", "first file line\n".repeat(1500));
        ws.write("two.txt", "second file line\n".repeat(1500));
        let usage = json!({"input_tokens": 10, "output_tokens": 1});
        let call = |id: &str, path: &str| match api {
            "openai" => openai_tool_call(id, "read_file", &json!({"path": path})),
            _ => super::common::mock_model::anthropic_tool_call(
                id,
                "read_file",
                &json!({"path": path}),
                &usage,
            ),
        };
        let done = match api {
            "openai" => openai_text("Both read."),
            _ => anthropic_text("Both read.", &usage),
        };
        let mock = MockModel::start(vec![
            Reply::sse_body(call("call_1", "one.txt")),
            Reply::sse_body(call("call_2", "two.txt")),
            status(400, &overflow_body(body)),
            Reply::sse_body(done),
        ]);
        let url = match api {
            "openai" => mock.openai_url(),
            _ => mock.anthropic_url(),
        };
        let output = toolhost_run(&ws)
            .args(["--no-session", "--provider", api, "--model", "m"])
            .args(["--base-url", &url, "read both files"])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{api}: {stderr}");
        assert!(stderr.contains("\ncontext compacted: "), "{api}: {stderr}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 4, "{api}");
        let last = requests[3].body.to_string();
        assert_eq!(
            last.matches("[toolhost set this result aside").count(),
            1,
            "{api}: {last}"
        );
    }
}

/// A prompt that fits with less room for the reply than was asked is sent
/// again once, asking for what the window leaves.
#[test]
fn a_reply_room_overflow_is_sent_again_asking_for_less() {
    use super::common::mock_model::{anthropic_text, openai_text, overflow_body, status};
    for (api, body, room) in [
        ("openai", "vllm-completion-does-not-fit", 436),
        ("anthropic", "anthropic-input-and-max-tokens", 11_696),
    ] {
        let ws = Workspace::new();
        let done = match api {
            "openai" => openai_text("Short."),
            _ => anthropic_text("Short.", &json!({"input_tokens": 10, "output_tokens": 1})),
        };
        let mock = MockModel::start(vec![
            status(400, &overflow_body(body)),
            Reply::sse_body(done),
        ]);
        let url = match api {
            "openai" => mock.openai_url(),
            _ => mock.anthropic_url(),
        };
        let output = toolhost_run(&ws)
            .args(["--no-session", "--provider", api, "--model", "m"])
            .args(["--base-url", &url, "hello"])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(0), "{api}: {output:?}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{api}");
        assert_eq!(requests[1].body["max_tokens"], room, "{api}");
        assert_eq!(
            requests[0].body["messages"], requests[1].body["messages"],
            "{api}: the same conversation, nothing set aside"
        );
    }
}

/// `[model.prices]` in the user's config: each figure gains its cost (the
/// prompt's line, `json`, `sessions show`), a cost budget stops a run
/// before the request that would pass it, and a workspace the user does
/// not trust may raise the prices but not lower them, nor give the only
/// prices a cost budget counts at.
#[test]
fn prices_turn_tokens_into_a_cost_and_a_cost_budget_stops_the_run() {
    let ws = Workspace::new();
    std::fs::write(
        ws.user_config().join("config.toml"),
        "[model]\nprices = { input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 }\n",
    )
    .expect("user config");
    // Cheaper, from a workspace not trusted: ignored where lower.
    ws.write(
        "toolhost.toml",
        "[model]\nprices = { input = 0.0, output = 0.0 }\n",
    );
    let usage = json!({"input_tokens": 1000, "cache_creation_input_tokens": 2000,
                       "cache_read_input_tokens": 0, "output_tokens": 100});
    let mock = MockModel::start(vec![
        Reply::sse_body(anthropic_text("Hello.", &usage)),
        Reply::sse_body(anthropic_text("Hello again.", &usage)),
        Reply::sse_body(anthropic_tool_call(
            "toolu_1",
            "list_files",
            &json!({}),
            &usage,
        )),
        Reply::sse_body(anthropic_text("never sent", &usage)),
    ]);
    let run = |extra: &[&str]| {
        toolhost_run(&ws)
            .args(["--provider", "anthropic", "--model", "m"])
            .args(["--base-url", &mock.anthropic_url()])
            .args(extra)
            .output()
            .expect("run")
    };
    // 1000 × $3 + 2000 × $3.75 + 100 × $15 per million: $0.0120.
    let output = run(&["hi"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().rev().nth(1).expect("the prompt's line");
    assert_text(
        &super::common::mask_between(last, " · $0.0120 · ", " s", "_"),
        "1 turn(s) · 1000 in + 2000 cache write / 100 out tokens · $0.0120 · _ s",
    );
    let output = run(&["--output-format", "json", "--resume", "last", "again"]);
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert!(
        (doc["cost_usd"].as_f64().expect("cost_usd") - 0.012).abs() < 1e-9,
        "{doc}"
    );
    let shown = super::common::stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
    assert_eq!(
        shown
            .lines()
            .filter(|line| line.contains('$'))
            .collect::<Vec<_>>(),
        [
            "  spent: 1000 in + 2000 cache write / 100 out tokens · $0.0120",
            "  spent: 1000 in + 2000 cache write / 100 out tokens · $0.0120",
            "total: 2000 in + 4000 cache write / 200 out tokens · $0.0240",
        ]
    );

    // $0.0120 spent by the first request: the second would pass $0.015.
    let output = run(&["--output-format", "json", "--max-cost", "0.015", "list"]);
    assert_eq!(output.status.code(), Some(5), "{output:?}");
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_text(
        &super::common::mask_between(
            doc["stop"]["evidence"].as_str().expect("evidence"),
            "(about ",
            ")",
            "_",
        ),
        "the next model request (about _) would pass the run's cost budget of $0.0150; $0.0120 \
         spent so far (1000 in + 2000 cache write / 100 out tokens)",
    );
    assert_eq!(
        mock.requests().len(),
        3,
        "the request past the budget was not sent"
    );

    // Prices from the untrusted workspace alone: a cost budget is refused.
    std::fs::remove_file(ws.user_config().join("config.toml")).expect("remove");
    let output = run(&["--max-cost", "1", "hi"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: a cost budget (--max-cost, [run] max_cost) counts at prices you set, and the \
         only [model.prices] come from this workspace's toolhost.toml, which you do not trust: \
         add them to your own config.toml, or run `toolhost trust` in the workspace\n"
    );
}

/// OpenAI caches a byte-identical prefix by itself: through a run of tool
/// calls and a resumed prompt, each request's bytes up to the end of its
/// messages start the next request.
#[test]
fn each_openai_request_starts_with_the_previous_ones_bytes() {
    use super::common::mock_model::{openai_text, openai_tool_call};
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let mock = MockModel::start(vec![
        Reply::sse_body(openai_tool_call("call_1", "list_files", &json!({}))),
        Reply::sse_body(openai_tool_call(
            "call_2",
            "read_file",
            &json!({"path": "a.txt"}),
        )),
        Reply::sse_body(openai_text("It says alpha.")),
        Reply::sse_body(openai_text("Yes.")),
    ]);
    for (prompt, extra) in [
        ("read a.txt", &[][..]),
        ("sure?", &["--resume", "last"][..]),
    ] {
        let output = toolhost_run(&ws)
            .args(["--provider", "openai", "--model", "m"])
            .args(["--base-url", &mock.openai_url()])
            .args(extra)
            .arg(prompt)
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
    }
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    for pair in requests.windows(2) {
        let (before, after) = (&pair[0].raw, &pair[1].raw);
        let text = String::from_utf8_lossy(before);
        // Keys go out sorted: `messages` first, then `model`.
        let end = text.find("],\"model\"").expect("the end of the messages");
        assert!(
            after.starts_with(&before[..end]),
            "{}\nis not the start of\n{}",
            &text[..end],
            String::from_utf8_lossy(after)
        );
    }
}

/// Red team (issue 37): `--max-tokens-total` counted only the usage the
/// server reported, so a server that reports none (or zeros) had 100
/// requests (about 700k tokens) through a 20,000-token budget. What the
/// server does not count is estimated as the next request is (the
/// request's bytes at four a token, the reply's likewise): the run stops
/// with the usual budget text after the few requests the budget allows,
/// whatever the server says, and the tokens the server was sent stay near
/// the budget.
#[test]
fn a_token_budget_counts_what_a_server_that_reports_no_usage_did_not() {
    use super::common::mock_model::{openai_tool_call, openai_with_usage};
    let ws = Workspace::new();
    // A file for each call: the same call five times in a row would stop
    // the run as a loop first.
    for n in 0..40 {
        ws.write(&format!("a{n}.txt"), "a");
    }
    for (what, usage) in [("no usage", None), ("zero usage", Some((0, 0)))] {
        let reply = |n: usize| {
            let path = format!("a{n}.txt");
            let call = openai_tool_call(&format!("call_{n}"), "read_file", &json!({"path": path}));
            Reply::sse_body(match usage {
                None => call,
                Some((prompt, completion)) => openai_with_usage(&call, prompt, completion),
            })
        };
        let mock = MockModel::start((0..40).map(reply).collect());
        let output = toolhost_run(&ws)
            .args(["--no-session", "--output-format", "json"])
            .args(["--provider", "openai", "--model", "m"])
            .args(["--base-url", &mock.openai_url(), "--max-turns", "40"])
            .args(["--max-tokens-total", "20000", "read the files"])
            .output()
            .expect("run");
        let requests = mock.requests();
        let sent: usize = requests.iter().map(|request| request.raw.len()).sum();
        eprintln!(
            "{what}: {} requests, {sent} bytes (about {} tokens) sent under a budget of 20000 tokens",
            requests.len(),
            sent / 4
        );
        assert_eq!(output.status.code(), Some(5), "{what}: {output:?}");
        let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
        assert_eq!(doc["stop"]["reason"], "budget_exhausted", "{what}");
        let evidence = doc["stop"]["evidence"].as_str().expect("evidence");
        let masked = super::common::mask_between(evidence, "(about ", " tokens)", "_");
        let masked = super::common::mask_between(&masked, "tokens; ", " spent", "_");
        let masked = super::common::mask_between(&masked, "so far (", " in", "_");
        let masked = super::common::mask_between(&masked, "/ ", " out", "_");
        assert_text(
            &masked,
            "the next model request (about _ tokens) would pass the run's budget of 20000 \
             tokens; _ spent so far (_ in / _ out tokens)",
        );
        assert!(requests.len() < 40, "{what}: {} requests", requests.len());
        assert!(sent / 4 <= 25_000, "{what}: about {} tokens sent", sent / 4);
    }
}

//! A model server that does not stop, through the real binary: a gigabyte
//! of text deltas, a gigabyte of tool-call arguments, one 800 MB line, a
//! gigabyte error body and a gigabyte JSON body, each from a loopback server
//! that makes the body as it sends it. Each run must end well within a
//! minute, with the reply cut at toolhost's cap and a notice naming it, no
//! tool run, toolhost's peak memory under 512 MB, and the connection closed
//! long before the body's end; then a good run still works.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::Workspace;
use super::common::measure::{Measured, run_measured};
use super::common::mock_model::{Generated, MockModel, Reply, Sent, expected, sse};

const GIB: u64 = 1 << 30;
/// The default reply cap.
const CAP: usize = 8 << 20;
/// What the text block itself costs against the cap.
const BLOCK_COST: usize = 64;
const RSS_LIMIT: u64 = 512 << 20;
const DEADLINE: Duration = Duration::from_secs(60);

const REPLY_NOTICE: &str = "stopped: error after 1 turn(s): the model's reply passed toolhost's \
    cap of 8 MiB (text, reasoning and tool-call arguments together), so toolhost closed the \
    stream and treats the reply as cut by the output limit: its tool calls were not run. A model \
    server that never stops (a local model that misses its stop token) does this; if the replies \
    are meant to be this long, raise the cap with `--max-reply-mib 16`, or `max_reply_mib = 16` \
    under [model] in your config.toml";

const EVENT_NOTICE: &str = "stopped: error after 1 turn(s): one event of the model's stream \
    passed toolhost's cap of 16 MiB (twice the reply cap), so toolhost closed the stream and \
    treats the reply as cut by the output limit: its tool calls were not run. A model server \
    that never stops (a local model that misses its stop token) does this; if the replies are \
    meant to be this long, raise the cap with `--max-reply-mib 16`, or `max_reply_mib = 16` \
    under [model] in your config.toml";

#[derive(Debug, Clone, Copy)]
enum Api {
    OpenAi,
    Anthropic,
}

const APIS: [Api; 2] = [Api::OpenAi, Api::Anthropic];

/// The start of a Messages stream, before its first block.
const MESSAGE_START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":\
    {\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\
    \"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";

impl Api {
    /// What the events before the first block cost against the cap: every
    /// event counts, and one that keeps nothing (Anthropic's
    /// `message_start`) is charged its size, name and data.
    fn start_cost(self) -> usize {
        match self {
            Api::OpenAi => 0,
            Api::Anthropic => {
                let data = MESSAGE_START
                    .lines()
                    .find_map(|line| line.strip_prefix("data: "))
                    .expect("data");
                "message_start".len() + data.len()
            }
        }
    }

    fn flags(self, mock: &MockModel) -> Vec<String> {
        let (provider, url) = match self {
            Api::OpenAi => ("openai", mock.openai_url()),
            Api::Anthropic => ("anthropic", mock.anthropic_url()),
        };
        ["--provider", provider, "--model", "m", "--base-url", &url]
            .map(str::to_owned)
            .to_vec()
    }

    /// A recorded good reply and the text it prints.
    fn good(self) -> (Reply, String) {
        let name = match self {
            Api::OpenAi => "openai-chat-text-usage-done",
            Api::Anthropic => "anthropic-messages-text-ping",
        };
        let text = expected(name)["text"].as_str().expect("text").to_owned();
        let newline = if text.ends_with('\n') { "" } else { "\n" };
        (sse(name), format!("{text}{newline}"))
    }

    /// Text deltas of `piece`, for ever (up to `total` bytes).
    fn text_stream(self, piece: &str, total: u64) -> Generated {
        match self {
            Api::OpenAi => Generated::sse(
                "",
                format!(
                    "data: {}\n\n",
                    json!({"choices": [{"index": 0, "delta": {"content": piece}}]})
                ),
                total,
            ),
            Api::Anthropic => Generated::sse(
                format!(
                    "{MESSAGE_START}event: content_block_start\ndata: {}\n\n",
                    json!({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}})
                ),
                format!(
                    "event: content_block_delta\ndata: {}\n\n",
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": piece}})
                ),
                total,
            ),
        }
    }

    /// A `write_file` call whose arguments open a `content` string and
    /// never close it.
    fn call_stream(self, piece: &str, total: u64) -> Generated {
        let opening = "{\"path\": \"pwned.txt\", \"content\": \"";
        match self {
            Api::OpenAi => Generated::sse(
                format!(
                    "data: {}\n\n",
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                        "id": "call_1", "type": "function",
                        "function": {"name": "write_file", "arguments": opening}}]}}]})
                ),
                format!(
                    "data: {}\n\n",
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                        "function": {"arguments": piece}}]}}]})
                ),
                total,
            ),
            Api::Anthropic => Generated::sse(
                format!(
                    "{MESSAGE_START}event: content_block_start\ndata: {}\n\n\
                     event: content_block_delta\ndata: {}\n\n",
                    json!({"type": "content_block_start", "index": 0, "content_block":
                        {"type": "tool_use", "id": "call_1", "name": "write_file", "input": {}}}),
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "input_json_delta", "partial_json": opening}})
                ),
                format!(
                    "event: content_block_delta\ndata: {}\n\n",
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "input_json_delta", "partial_json": piece}})
                ),
                total,
            ),
        }
    }

    /// One text delta whose line never ends.
    fn line_stream(self, total: u64) -> Generated {
        let head = match self {
            Api::OpenAi => "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".to_owned(),
            Api::Anthropic => format!(
                "{MESSAGE_START}event: content_block_start\ndata: {}\n\n\
                 event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\
                 \"delta\":{{\"type\":\"text_delta\",\"text\":\"",
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}})
            ),
        };
        Generated::sse(head, "x", total).with_tail("\"}}]}\n\n")
    }
}

/// `toolhost run` against `mock` through `api`, measured.
fn run(ws: &Workspace, api: Api, mock: &MockModel, extra: &[&str]) -> Measured {
    let mut cmd = ws.toolhost();
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .arg("run")
        .args(api.flags(mock))
        .args(extra);
    run_measured(&cmd, DEADLINE)
}

/// Checks what every hostile run must show: the time, the memory, the
/// exit code, the notice as the last line, and a connection closed long
/// before the body's end.
fn check_bounded(what: &str, measured: &Measured, sent: &Sent, notice: &str) {
    eprintln!(
        "{what}: {:.2} s, peak RSS {} MiB, {} MiB sent before the hang-up",
        measured.elapsed.as_secs_f64(),
        measured.peak_rss >> 20,
        sent.bytes() >> 20
    );
    let stderr = measured.stderr();
    assert_eq!(measured.status.code(), Some(1), "{what}: {stderr}");
    assert!(
        measured.elapsed < DEADLINE,
        "{what}: {:?}",
        measured.elapsed
    );
    assert!(
        measured.peak_rss < RSS_LIMIT,
        "{what}: peak RSS {} MiB",
        measured.peak_rss >> 20
    );
    assert_eq!(stderr.lines().last(), Some(notice), "{what}: {stderr}");
    assert!(
        sent.wait_done(Duration::from_secs(10)),
        "{what}: still sending"
    );
    assert!(sent.hung_up(), "{what}: the body was read to its end");
    assert!(
        sent.bytes() < 64 << 20,
        "{what}: {} MiB were read",
        sent.bytes() >> 20
    );
}

/// The records of the workspace's one session file.
fn session_records(ws: &Workspace) -> Vec<Value> {
    let dir = ws.path().join(".toolhost/sessions");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("sessions dir")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a JSON record"))
        .collect()
}

/// The recorded assistant message of the first turn.
fn recorded_reply(records: &[Value]) -> &Value {
    records
        .iter()
        .find(|r| r["type"] == "message" && r["message"]["role"] == "assistant")
        .map(|r| &r["message"])
        .expect("an assistant message record")
}

/// After a hostile run, a resumed run with a good reply completes.
fn good_run_after(ws: &Workspace, api: Api, mock: &MockModel, expected_stdout: &str) {
    let measured = run(ws, api, mock, &["--resume", "last", "now answer properly"]);
    assert_eq!(
        measured.status.code(),
        Some(0),
        "{api:?}: {}",
        measured.stderr()
    );
    assert_eq!(measured.stdout(), expected_stdout, "{api:?}");
}

fn cut_record(limit: usize) -> Value {
    json!({"cap": "reply", "limit_bytes": limit, "max_reply_bytes": CAP})
}

#[test]
fn a_gigabyte_of_text_deltas_is_cut_at_the_reply_cap() {
    let piece = "la ".repeat(341);
    for api in APIS {
        let ws = Workspace::new();
        let (hostile, sent) = api.text_stream(&piece, GIB).reply();
        let (good, good_stdout) = api.good();
        let mock = MockModel::start(vec![hostile, good]);
        let measured = run(&ws, api, &mock, &["sing"]);
        check_bounded(&format!("{api:?} text"), &measured, &sent, REPLY_NOTICE);

        // Exactly the text that fitted, printed as it came, whole characters.
        let kept = CAP - BLOCK_COST - api.start_cost();
        let stdout = measured.stdout();
        let text = stdout.strip_suffix('\n').expect("a last newline");
        assert_eq!(text.len(), kept, "{api:?}");
        assert!(
            piece.repeat(kept / piece.len() + 1).starts_with(text),
            "{api:?}"
        );

        let records = session_records(&ws);
        let reply = recorded_reply(&records);
        assert_eq!(reply["finish"], "length", "{api:?}");
        assert_eq!(reply["cut"], cut_record(CAP), "{api:?}");
        assert_eq!(
            reply["blocks"][0]["text"].as_str().map(str::len),
            Some(kept)
        );
        let stop = records.last().expect("records");
        assert_eq!(
            (&stop["stop"]["reason"], &stop["stop"]["truncated"]),
            (&json!("error"), &json!(true))
        );

        good_run_after(&ws, api, &mock, &good_stdout);
    }
}

#[test]
fn a_gigabyte_of_tool_call_arguments_is_cut_and_the_call_never_runs() {
    let piece = "x".repeat(1024);
    for api in APIS {
        let ws = Workspace::new();
        let (hostile, sent) = api.call_stream(&piece, GIB).reply();
        let (good, good_stdout) = api.good();
        let mock = MockModel::start(vec![hostile, good]);
        let measured = run(&ws, api, &mock, &["write it"]);
        check_bounded(
            &format!("{api:?} tool call"),
            &measured,
            &sent,
            REPLY_NOTICE,
        );
        assert!(!ws.path().join("pwned.txt").exists(), "{api:?}");

        let records = session_records(&ws);
        let reply = recorded_reply(&records);
        assert_eq!(reply["finish"], "length", "{api:?}");
        assert_eq!(reply["cut"], cut_record(CAP), "{api:?}");
        let call = &reply["blocks"][0];
        assert_eq!(
            (&call["type"], &call["name"], &call["arguments"]),
            (&json!("tool_call"), &json!("write_file"), &Value::Null),
            "{api:?}"
        );
        let raw = call["arguments_raw"].as_str().expect("raw arguments");
        // The cap less the block, its id and its name.
        assert_eq!(
            raw.len(),
            CAP - BLOCK_COST
                - api.start_cost()
                - "call_1".len()
                - "write_file".len()
                - if matches!(api, Api::Anthropic) { 2 } else { 0 },
            "{api:?}"
        );
        assert!(raw.starts_with("{\"path\": \"pwned.txt\", \"content\": \"xxx"));
        assert!(
            !records.iter().any(|r| r["type"] == "tool_execution_start"),
            "{api:?}"
        );
        let results = records
            .iter()
            .find(|r| r["message"]["role"] == "tool_results")
            .expect("the call is answered");
        assert_eq!(
            results["message"]["results"][0]["text"],
            toolhost::agent::NOT_EXECUTED_TRUNCATED
        );

        good_run_after(&ws, api, &mock, &good_stdout);
    }
}

#[test]
fn one_800_mb_line_is_cut_at_the_event_cap() {
    for api in APIS {
        let ws = Workspace::new();
        let (hostile, sent) = api.line_stream(800 << 20).reply();
        let (good, good_stdout) = api.good();
        let mock = MockModel::start(vec![hostile, good]);
        let measured = run(&ws, api, &mock, &["sing"]);
        check_bounded(&format!("{api:?} line"), &measured, &sent, EVENT_NOTICE);
        assert_eq!(
            measured.stdout(),
            "",
            "{api:?}: nothing of the line is shown"
        );
        let records = session_records(&ws);
        let reply = recorded_reply(&records);
        assert_eq!(
            (&reply["finish"], &reply["cut"]),
            (
                &json!("length"),
                &json!({"cap": "event", "limit_bytes": 2 * CAP, "max_reply_bytes": CAP})
            ),
            "{api:?}"
        );
        good_run_after(&ws, api, &mock, &good_stdout);
    }
}

#[test]
fn a_gigabyte_error_body_or_json_body_is_not_read_whole() {
    let ws = Workspace::new();
    let api = Api::OpenAi;
    // An error status is not retried (400), and its body is quoted.
    let (error, error_sent) = Generated::sse("{\"error\": \"", "x", GIB)
        .with_status(400, "application/json")
        .reply();
    // A server that ignores `stream: true`: one JSON object, one line.
    let (json_body, json_sent) = Generated::sse("{\"choices\": [{\"message\": \"", "x", GIB)
        .with_status(200, "application/json")
        .reply();
    let (good, good_stdout) = api.good();
    let mock = MockModel::start(vec![error, json_body, good]);

    let measured = run(&ws, api, &mock, &["--no-session", "hi"]);
    let url = format!("{}/chat/completions", mock.openai_url());
    let quoted = format!("{{\"error\": \"{}…", "x".repeat(300 - 11));
    check_bounded(
        "error body",
        &measured,
        &error_sent,
        &format!("stopped: error after 0 turn(s): `openai` at {url} answered HTTP 400: {quoted}"),
    );

    let measured = run(&ws, api, &mock, &["--no-session", "hi"]);
    check_bounded("JSON body", &measured, &json_sent, EVENT_NOTICE);

    let measured = run(&ws, api, &mock, &["--no-session", "hi"]);
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
    assert_eq!(measured.stdout(), good_stdout);
}

#[test]
fn the_cap_is_a_setting_a_workspace_may_only_lower() {
    let ws = Workspace::new();
    let api = Api::OpenAi;
    // 3 MiB of text: over a 2 MiB cap the workspace sets, under the 4 MiB
    // the user allows by flag.
    let piece = "la ".repeat(341);
    let (first, _) = api
        .text_stream(&piece, 3 << 20)
        .with_tail("data: [DONE]\n\n")
        .reply();
    let (second, _) = api
        .text_stream(&piece, 3 << 20)
        .with_tail("data: [DONE]\n\n")
        .reply();
    let mock = MockModel::start(vec![first, second]);
    ws.write("toolhost.toml", "[model]\nmax_reply_mib = 2\n");
    let measured = run(&ws, api, &mock, &["--no-session", "sing"]);
    let stderr = measured.stderr();
    assert_eq!(measured.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("passed toolhost's cap of 2 MiB") && stderr.contains("--max-reply-mib 4"),
        "{stderr}"
    );
    let measured = run(
        &ws,
        api,
        &mock,
        &["--no-session", "--max-reply-mib", "4", "sing"],
    );
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
    assert!(measured.stdout().len() > 2 << 20);
}

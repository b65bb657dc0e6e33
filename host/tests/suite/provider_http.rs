//! The HTTP clients of both wire APIs against a loopback mock server: what
//! they send (headers, exact bodies), what they assemble from recorded
//! streams, and how they retry, time out and give up.
//!
//! The mock ([`super::common::mock_model`]) controls the bytes: chunked
//! bodies cut into pieces, a connection dropped mid-stream, a stream that
//! stalls. Every request is recorded with its arrival time.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost::provider::anthropic::AnthropicClient;
use toolhost::provider::client::{HttpModel, WireApi};
use toolhost::provider::http::{HttpOptions, RetryNotice, RetryObserver};
use toolhost::provider::openai::OpenAiClient;
use toolhost::provider::{
    Asking, AssistantMessage, Block, Finish, Message, ProviderError, ToolResultEntry,
    ToolSpecForModel,
};

use super::common::mock_model::{self, End, MockModel, Reply, expected, fixture, sse, status};
use super::common::{assert_text, mask_between};

fn options(base_url: String) -> HttpOptions {
    let mut options = HttpOptions::new(base_url);
    options.api_key = Some("test-key".into());
    options.request_timeout = Duration::from_secs(5);
    options.idle_timeout = Duration::from_secs(5);
    options.initial_backoff = Duration::from_millis(10);
    options
}

/// A retry observer that records what it is told.
fn recorder() -> (RetryObserver, Arc<Mutex<Vec<RetryNotice>>>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&notices);
    let observer: RetryObserver = Arc::new(move |notice: &RetryNotice| {
        sink.lock().expect("notices lock").push(notice.clone());
    });
    (observer, notices)
}

/// `client`'s reply to "hi" (no system prompt, no tools) and the retries it
/// reported on the way.
async fn ask_recording<W: WireApi>(
    client: &HttpModel<W>,
) -> (
    Result<Option<AssistantMessage>, ProviderError>,
    Vec<RetryNotice>,
) {
    let (on_retry, notices) = recorder();
    let cancel = CancellationToken::new();
    let reply = client
        .next_streaming(
            "",
            &user("hi"),
            &[],
            &cancel,
            Asking {
                on_retry: Some(on_retry),
                ..Asking::default()
            },
        )
        .await;
    let notices = notices.lock().expect("notices").clone();
    (reply, notices)
}

fn openai(mock: &MockModel) -> OpenAiClient {
    OpenAiClient::new(options(mock.openai_url()), "gpt-test").expect("client")
}

fn anthropic(mock: &MockModel) -> AnthropicClient {
    AnthropicClient::new(options(mock.anthropic_url()), "claude-test").expect("client")
}

fn user(text: &str) -> Vec<Message> {
    vec![Message::prompt(text)]
}

fn tools() -> Vec<ToolSpecForModel> {
    vec![ToolSpecForModel {
        name: "get_weather".into(),
        description: "Weather for a city".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        read_only: true,
    }]
}

async fn ask_openai(
    mock: &MockModel,
    history: &[Message],
) -> Result<Option<AssistantMessage>, ProviderError> {
    openai(mock)
        .next("be brief", history, &tools(), &CancellationToken::new())
        .await
}

async fn ask_anthropic(
    mock: &MockModel,
    history: &[Message],
) -> Result<Option<AssistantMessage>, ProviderError> {
    anthropic(mock)
        .next("be brief", history, &tools(), &CancellationToken::new())
        .await
}

fn fixture_json(reply: Result<Option<AssistantMessage>, ProviderError>) -> Value {
    reply
        .expect("no error")
        .expect("not cancelled")
        .to_fixture_json()
}

// ---- replies assembled over HTTP -------------------------------------------

#[tokio::test]
async fn openai_replies_are_assembled_from_the_stream() {
    for name in [
        "openai-chat-text-usage-done",
        "openai-chat-tool-single-fragmented",
        "openai-chat-tool-parallel-2",
        "openai-chat-length-truncated",
    ] {
        let mock = MockModel::start(vec![sse(name)]);
        let reply = fixture_json(ask_openai(&mock, &user("hi")).await);
        assert_eq!(reply, expected(name), "{name}");
    }
}

#[tokio::test]
async fn anthropic_replies_are_assembled_from_the_stream() {
    for name in [
        "anthropic-messages-text-ping",
        "anthropic-messages-text-then-tool",
        "anthropic-messages-tool-parallel-3",
        "anthropic-messages-max-tokens-truncated-tool",
        "anthropic-messages-thinking-signature",
    ] {
        let mock = MockModel::start(vec![sse(name)]);
        let reply = fixture_json(ask_anthropic(&mock, &user("hi")).await);
        assert_eq!(reply, expected(name), "{name}");
    }
}

#[tokio::test]
async fn openai_request_has_path_headers_and_streaming_options() {
    let mock = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let client = openai(&mock).with_max_tokens(Some(100));
    client
        .next("be brief", &user("hi"), &tools(), &CancellationToken::new())
        .await
        .expect("reply");
    let request = &mock.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.headers["authorization"], "Bearer test-key");
    assert_eq!(request.headers["content-type"], "application/json");
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-test",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 100,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi"},
            ],
            "tools": [{
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather for a city",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }],
        })
    );
}

#[tokio::test]
async fn anthropic_request_has_path_headers_and_default_max_tokens() {
    let mock = MockModel::start(vec![sse("anthropic-messages-text-ping")]);
    ask_anthropic(&mock, &user("hi")).await.expect("reply");
    let request = &mock.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.headers["x-api-key"], "test-key");
    assert_eq!(request.headers["anthropic-version"], "2023-06-01");
    assert!(!request.headers.contains_key("authorization"));
    assert_eq!(
        request.body,
        json!({
            "model": "claude-test",
            "max_tokens": 8192,
            "stream": true,
            // Cache breakpoints: the tools, the system prompt, the latest
            // message (prompt caching: docs/using/run.md).
            "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
            ]}],
            "tools": [{
                "name": "get_weather",
                "description": "Weather for a city",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"},
            }],
        })
    );
}

// ---- the ledger replayed --------------------------------------------------

/// A ledger with two tool turns: parallel calls after reasoning and text
/// (one result an error), then a lone call whose arguments were cut off.
fn ledger() -> Vec<Message> {
    vec![
        Message::prompt("weather and file?"),
        Message::Assistant(AssistantMessage {
            blocks: vec![
                Block::Reasoning {
                    text: "two calls".into(),
                    signature: Some("sig-1".into()),
                },
                Block::Text {
                    text: "Checking.".into(),
                },
                Block::ToolCall {
                    id: "call_1".into(),
                    name: "get_weather".into(),
                    arguments: Some(json!({"city": "Paris"})),
                    arguments_raw: "{\"city\": \"Paris\"}".into(),
                },
                Block::ToolCall {
                    id: "call_2".into(),
                    name: "read_file".into(),
                    arguments: Some(json!({"path": "a.txt"})),
                    arguments_raw: "{\"path\":\"a.txt\"}".into(),
                },
            ],
            finish: Finish::ToolUse,
            usage: None,
            cut: None,
        }),
        Message::ToolResults {
            results: vec![
                ToolResultEntry {
                    call_id: "call_1".into(),
                    tool: "get_weather".into(),
                    text: "sunny".into(),
                    is_error: false,
                },
                ToolResultEntry {
                    call_id: "call_2".into(),
                    tool: "read_file".into(),
                    text: "denied: a.txt".into(),
                    is_error: true,
                },
            ],
        },
        Message::Assistant(AssistantMessage {
            blocks: vec![Block::ToolCall {
                id: "call_3".into(),
                name: "read_file".into(),
                arguments: None,
                arguments_raw: "{\"pa".into(),
            }],
            finish: Finish::Length,
            usage: None,
            cut: None,
        }),
        Message::ToolResults {
            results: vec![ToolResultEntry {
                call_id: "call_3".into(),
                tool: "read_file".into(),
                text: "not executed: truncated".into(),
                is_error: true,
            }],
        },
    ]
}

#[tokio::test]
async fn openai_replays_calls_before_their_results() {
    let mock = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    ask_openai(&mock, &ledger()).await.expect("reply");
    assert_eq!(
        mock.requests()[0].body["messages"],
        json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "weather and file?"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
                {"id": "call_2", "type": "function",
                 "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_2", "content": "denied: a.txt"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_3", "type": "function",
                 "function": {"name": "read_file", "arguments": "{\"pa"}},
            ]},
            {"role": "tool", "tool_call_id": "call_3", "content": "not executed: truncated"},
        ])
    );
}

#[tokio::test]
async fn anthropic_replays_blocks_in_order_and_results_with_is_error() {
    let mock = MockModel::start(vec![sse("anthropic-messages-text-ping")]);
    ask_anthropic(&mock, &ledger()).await.expect("reply");
    assert_eq!(
        mock.requests()[0].body["messages"],
        json!([
            {"role": "user", "content": "weather and file?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "two calls", "signature": "sig-1"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "call_1", "name": "get_weather",
                 "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_2", "name": "read_file",
                 "input": {"path": "a.txt"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny",
                 "is_error": false},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "denied: a.txt",
                 "is_error": true},
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_3", "name": "read_file", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_3",
                 "content": "not executed: truncated", "is_error": true,
                 "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
}

#[tokio::test]
async fn anthropic_thinking_block_goes_back_with_its_signature() {
    let mock = MockModel::start(vec![
        sse("anthropic-messages-thinking-signature"),
        sse("anthropic-messages-text-ping"),
    ]);
    let mut history = user("25 * 37?");
    let first = ask_anthropic(&mock, &history)
        .await
        .expect("first reply")
        .expect("not cancelled");
    let want = expected("anthropic-messages-thinking-signature");
    history.push(Message::Assistant(first));
    history.push(Message::prompt("thanks"));
    ask_anthropic(&mock, &history).await.expect("second reply");
    let sent = &mock.requests()[1].body["messages"];
    assert_eq!(
        sent[1]["content"][0],
        json!({
            "type": "thinking",
            "thinking": want["reasoning"]["text"],
            "signature": want["reasoning"]["signature"],
        })
    );
    assert_eq!(
        sent[1]["content"][1],
        json!({"type": "text", "text": want["text"]})
    );
    assert_eq!(
        sent[2],
        json!({"role": "user", "content": [
            {"type": "text", "text": "thanks", "cache_control": {"type": "ephemeral"}},
        ]})
    );
}

// ---- retries ----------------------------------------------------------------

#[tokio::test]
async fn a_429_waits_for_retry_after_then_succeeds() {
    let mock = MockModel::start(vec![
        Reply::Status {
            status: 429,
            headers: vec![("Retry-After", "1".into())],
            body: "{\"error\":{\"message\":\"slow down\"}}".into(),
        },
        sse("openai-chat-text-usage-done"),
    ]);
    let (reply, notices) = ask_recording(&openai(&mock)).await;
    assert_eq!(fixture_json(reply), expected("openai-chat-text-usage-done"));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1].at - requests[0].at;
    assert!(
        waited >= Duration::from_millis(950) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].attempt, 1);
    assert_eq!(notices[0].wait, Duration::from_secs(1));
    assert_text(
        &notices[0].reason,
        &format!(
            "`openai` at {}/chat/completions answered HTTP 429: {{\"error\":{{\"message\":\"slow \
             down\"}}}}",
            mock.openai_url()
        ),
    );
}

#[tokio::test]
async fn three_500s_are_retried_then_the_reply_arrives() {
    for anthropic_api in [false, true] {
        let (ok, url_of): (&str, fn(&MockModel) -> String) = if anthropic_api {
            ("anthropic-messages-text-ping", MockModel::anthropic_url)
        } else {
            ("openai-chat-text-usage-done", MockModel::openai_url)
        };
        let mock = MockModel::start(vec![
            status(500, "oops"),
            status(502, "bad gateway"),
            status(503, "overloaded"),
            sse(ok),
        ]);
        let options = options(url_of(&mock));
        let (reply, notices) = if anthropic_api {
            let client = AnthropicClient::new(options, "m").expect("client");
            ask_recording(&client).await
        } else {
            let client = OpenAiClient::new(options, "m").expect("client");
            ask_recording(&client).await
        };
        assert_eq!(fixture_json(reply), expected(ok));
        assert_eq!(mock.requests().len(), 4);
        let attempts: Vec<u32> = notices.iter().map(|n| n.attempt).collect();
        assert_eq!(attempts, [1, 2, 3]);
    }
}

#[tokio::test]
async fn retries_stop_after_max_retries() {
    let mock = MockModel::start((0..6).map(|_| status(500, "down")).collect());
    let err = ask_openai(&mock, &user("hi")).await.expect_err("gives up");
    assert_eq!(mock.requests().len(), 5, "1 attempt + 4 retries");
    assert!(
        matches!(err, ProviderError::RetriesExhausted { attempts: 5, .. }),
        "{err}"
    );
    assert_text(
        &err.to_string(),
        &format!(
            "`openai` failed 5 times; last error: `openai` at {}/chat/completions answered HTTP \
             500: down",
            mock.openai_url()
        ),
    );
}

#[tokio::test]
async fn other_4xx_is_not_retried() {
    let mock = MockModel::start(vec![status(400, "{\"error\":\"bad field\"}")]);
    let err = ask_openai(&mock, &user("hi")).await.expect_err("400");
    assert_eq!(mock.requests().len(), 1);
    assert_text(
        &err.to_string(),
        &format!(
            "`openai` at {}/chat/completions answered HTTP 400: {{\"error\":\"bad field\"}}",
            mock.openai_url()
        ),
    );
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    let addr = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let mut options = options(format!("http://{addr}/v1"));
    options.max_retries = 2;
    let client = OpenAiClient::new(options, "m").expect("client");
    let (reply, notices) = ask_recording(&client).await;
    let err = reply.expect_err("nobody listens");
    assert_eq!(notices.len(), 2);
    assert_text(
        &err.to_string(),
        &format!(
            "`openai` failed 3 times; last error: cannot reach `openai` at \
             http://{addr}/v1/chat/completions: connection refused: nothing listens there; is the \
             server running (for Ollama, `ollama serve`), and are the host and port right?"
        ),
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried() {
    let mock = MockModel::start(vec![Reply::Hang, Reply::Hang]);
    let mut options = options(mock.openai_url());
    options.request_timeout = Duration::from_millis(300);
    options.max_retries = 1;
    let client = OpenAiClient::new(options, "m").expect("client");
    let err = client
        .next("", &user("hi"), &[], &CancellationToken::new())
        .await
        .expect_err("no answer");
    assert_eq!(mock.requests().len(), 2);
    assert_text(
        &err.to_string(),
        &format!(
            "`openai` failed 2 times; last error: `openai` at {}/chat/completions did not answer \
             within 300ms",
            mock.openai_url()
        ),
    );
}

/// A reader that fails with `Transport` (a reset of a byte source other
/// than the response body itself) is retried, as the variant's doc says.
#[tokio::test]
async fn a_transport_failure_while_reading_is_retried() {
    use toolhost::provider::http::{Auth, HttpClient};

    let mock = MockModel::start(vec![
        sse("openai-chat-text-usage-done"),
        sse("openai-chat-text-usage-done"),
    ]);
    let (on_retry, notices) = recorder();
    let options = options(mock.openai_url());
    let client = HttpClient::new(
        "openai",
        "OPENAI_API_KEY",
        "https://api.openai.com/v1",
        Auth::Bearer,
        "m",
        options,
    )
    .expect("client");
    let reads = std::sync::atomic::AtomicU32::new(0);
    let reply = client
        .post_and_read(
            "chat/completions",
            &json!({}),
            &CancellationToken::new(),
            Some(&on_retry),
            |_| {
                let read = reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    match read {
                        0 => Err(ProviderError::Transport {
                            provider: "openai",
                            source: Box::new(std::io::Error::from(
                                std::io::ErrorKind::ConnectionReset,
                            )),
                        }),
                        _ => Ok(read),
                    }
                }
            },
        )
        .await
        .expect("the second read succeeds");
    assert_eq!(reply, Some(1));
    assert_eq!(mock.requests().len(), 2);
    let notices = notices.lock().expect("notices").clone();
    assert_eq!(notices.len(), 1);
    assert_text(
        &notices[0].reason,
        "reading the `openai` stream failed: connection reset",
    );
}

// ---- broken and stalled streams ---------------------------------------------

/// Decision: a stream that breaks after some of its body arrived is an error,
/// not retried (part of a reply was generated and billed; the loop decides).
#[tokio::test]
async fn a_stream_dropped_mid_way_is_an_error_and_not_retried() {
    let mock = MockModel::start(vec![
        Reply::Sse {
            body: fixture("openai-chat-tool-parallel-2"),
            pieces: 3,
            end: End::DropAfter(300),
        },
        sse("openai-chat-tool-parallel-2"),
    ]);
    let err = ask_openai(&mock, &user("hi")).await.expect_err("dropped");
    assert_eq!(mock.requests().len(), 1);
    assert!(
        matches!(err, ProviderError::StreamBroken { received: 300, .. }),
        "{err:?}"
    );
    // What follows `bytes: ` is the HTTP library's account of the break.
    assert_text(
        &mask_between(&format!("{err}\n"), "300 bytes: ", "\n", "CAUSE"),
        &format!(
            "the `openai` stream from {}/chat/completions broke after 300 bytes: CAUSE\n",
            mock.openai_url()
        ),
    );
}

/// A stream that breaks before its first body byte is retried.
#[tokio::test]
async fn a_stream_dropped_before_any_byte_is_retried() {
    let mock = MockModel::start(vec![
        Reply::Sse {
            body: Vec::new(),
            pieces: 1,
            end: End::DropAfter(0),
        },
        sse("anthropic-messages-text-ping"),
    ]);
    let reply = fixture_json(ask_anthropic(&mock, &user("hi")).await);
    assert_eq!(reply, expected("anthropic-messages-text-ping"));
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let mock = MockModel::start(vec![Reply::Sse {
        body: fixture("anthropic-messages-text-then-tool"),
        pieces: 2,
        end: End::StallAfter(200),
    }]);
    let mut options = options(mock.anthropic_url());
    options.idle_timeout = Duration::from_millis(300);
    let client = AnthropicClient::new(options, "m").expect("client");
    let started = Instant::now();
    let err = client
        .next("", &user("hi"), &[], &CancellationToken::new())
        .await
        .expect_err("stalls");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(
        matches!(err, ProviderError::IdleTimeout { received: 200, .. }),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_mid_stream_returns_none() {
    let mock = MockModel::start(vec![Reply::Sse {
        body: fixture("openai-chat-text-usage-done"),
        pieces: 2,
        end: End::StallAfter(100),
    }]);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let reply = openai(&mock)
        .next("", &user("hi"), &[], &cancel)
        .await
        .expect("no error");
    assert!(reply.is_none());
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn cancelling_during_a_retry_wait_returns_promptly() {
    let mock = MockModel::start(vec![Reply::Status {
        status: 429,
        headers: vec![("Retry-After", "30".into())],
        body: String::new(),
    }]);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let reply = anthropic(&mock)
        .next("", &user("hi"), &[], &cancel)
        .await
        .expect("no error");
    assert!(reply.is_none());
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(mock.requests().len(), 1);
}

// ---- errors the user must fix -----------------------------------------------

/// A server at a custom base URL that refuses the key: the advice is about
/// that server's key, named by the variable it came from (keys come only
/// from the environment; there is no key in toolhost.toml).
#[tokio::test]
async fn a_401_names_the_key_variable_and_is_not_retried() {
    let mock = MockModel::start(vec![status(
        401,
        "{\"error\":{\"message\":\"Incorrect API key\"}}",
    )]);
    let err = ask_openai(&mock, &user("hi")).await.expect_err("401");
    let url = format!("{}/chat/completions", mock.openai_url());
    assert_eq!(
        err.to_string(),
        format!(
            "`openai` at {url} answered HTTP 401: the server rejected the API key taken from \
             OPENAI_API_KEY: set OPENAI_API_KEY to a key this server accepts (server said: \
             {{\"error\":{{\"message\":\"Incorrect API key\"}}}})"
        )
    );
    assert_eq!(mock.requests().len(), 1);

    let mock = MockModel::start(vec![status(403, "forbidden")]);
    let mut options = options(mock.anthropic_url());
    options.api_key = None;
    let client = AnthropicClient::new(options, "claude-test").expect("client");
    let err = client
        .next("", &user("hi"), &[], &CancellationToken::new())
        .await
        .expect_err("403");
    assert_eq!(
        err.to_string(),
        format!(
            "`anthropic` at {}/v1/messages answered HTTP 403: the server wants an API key and \
             none was sent: set ANTHROPIC_API_KEY to a key this server accepts (server said: \
             forbidden)",
            mock.anthropic_url()
        )
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_404_names_the_model_and_the_url() {
    let mock = MockModel::start(vec![status(404, "{\"error\":\"model not found\"}")]);
    let err = ask_openai(&mock, &user("hi")).await.expect_err("404");
    assert_text(
        &err.to_string(),
        &format!(
            "`openai` answered HTTP 404: model `gpt-test` or URL `{}/chat/completions` not found: \
             check --model and --base-url (server said: {{\"error\":\"model not found\"}})",
            mock.openai_url()
        ),
    );
    assert_eq!(mock.requests().len(), 1);

    let mock = MockModel::start(vec![status(404, "")]);
    let err = ask_anthropic(&mock, &user("hi")).await.expect_err("404");
    assert_text(
        &err.to_string(),
        &format!(
            "`anthropic` answered HTTP 404: model `claude-test` or URL `{}/v1/messages` not \
             found: check --model and --base-url (server said: (empty body))",
            mock.anthropic_url()
        ),
    );

    // The usual slip with a local server: the base URL without `/v1`.
    let mock = MockModel::start(vec![status(404, "404 page not found")]);
    let base = mock.openai_url().trim_end_matches("/v1").to_owned();
    let err = OpenAiClient::new(HttpOptions::new(&base), "llama3")
        .expect("client")
        .next("", &user("hi"), &[], &CancellationToken::new())
        .await
        .expect_err("404");
    assert_eq!(
        err.to_string(),
        format!(
            "`openai` answered HTTP 404: model `llama3` or URL `{base}/chat/completions` not \
             found: check --model and --base-url; the API is usually served under `/v1`: try \
             `--base-url {base}/v1` (server said: 404 page not found)"
        )
    );
}

/// The agent's `ModelClient` needs `Send` futures; both clients' are.
#[test]
fn client_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let cancel = CancellationToken::new();
    let openai = OpenAiClient::new(HttpOptions::new("http://127.0.0.1:9"), "m").expect("client");
    assert_send(&openai.next("", &[], &[], &cancel));
    let anthropic =
        AnthropicClient::new(HttpOptions::new("http://127.0.0.1:9"), "m").expect("client");
    assert_send(&anthropic.next("", &[], &[], &cancel));
}

#[tokio::test]
async fn a_context_overflow_is_its_own_error_with_the_servers_numbers() {
    let body = mock_model::overflow_body("llamacpp-exceed-context-size");
    let mock = MockModel::start(vec![status(400, &body)]);
    let err = ask_openai(&mock, &user("hi")).await.expect_err("400");
    assert!(
        matches!(err, ProviderError::ContextOverflow { .. }),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 1, "not retried");
    assert_text(
        &err.to_string(),
        &format!(
            "`openai` at {}/chat/completions: the conversation no longer fits the model's \
             context window (13392 tokens; the window holds 8192) (server said: {body})",
            mock.openai_url()
        ),
    );

    let body = mock_model::overflow_body("anthropic-input-and-max-tokens");
    let mock = MockModel::start(vec![status(400, &body)]);
    let err = ask_anthropic(&mock, &user("hi")).await.expect_err("400");
    assert_text(
        &err.to_string(),
        &format!(
            "`anthropic` at {}/v1/messages: the conversation (188240 tokens) leaves less room in \
             the model's context window (200000) than the 21333 tokens asked for the reply \
             (server said: {body})",
            mock.anthropic_url()
        ),
    );

    // A rate limit that speaks of tokens is a rate limit.
    let body = mock_model::overflow_body("anthropic-rate-limit-input-tokens");
    let mock = MockModel::start((0..6).map(|_| status(429, &body)).collect());
    let err = ask_anthropic(&mock, &user("hi")).await.expect_err("429");
    assert!(
        matches!(err, ProviderError::RetriesExhausted { .. }),
        "{err:?}"
    );
}
